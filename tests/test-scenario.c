/* Tests for scenario loading: file values over defaults, command-line flags over the file, inline
 * clusters, and one-line errors naming file:line:key or --flag. */
#include "scenario.h"

#include <glib/gstdio.h>
#include <string.h>

static char *
fixture(const char *name)
{
  return g_test_build_filename(G_TEST_DIST, "data", name, NULL);
}

static void
test_defaults(void)
{
  DdpSetup s;
  ddp_setup_init(&s);
  g_assert_cmpuint(s.gpus, ==, 8);
  g_assert_cmpfloat(s.buckets.bucket_cap_mb, ==, 25.0);           /* PyTorch kDefaultBucketBytesCap */
  g_assert_cmpuint(s.buckets.first_bucket_bytes, ==, 1024 * 1024); /* _DEFAULT_FIRST_BUCKET_BYTES */
  g_assert_cmpuint(s.accumulate, ==, 1);
  g_assert_true(s.broadcast_buffers);
  g_assert_false(s.channels_last);                                 /* PyTorch's contiguous NCHW */
  g_free(s.stragglers);
}

static void
test_file_then_flags(void)
{
  g_autofree char *path = fixture("inline.scenario");
  g_autofree char *model = fixture("tiny.model");
  DdpCliOptions cli = { 0 };
  cli.model = model;
  g_autoptr(GError) error = NULL;
  g_autoptr(DdpScenario) s = ddp_scenario_load(path, &cli, TRUE, &error);
  g_assert_no_error(error);
  g_assert_cmpstr(s->cluster->name, ==, "inline-two-nodes");
  g_assert_cmpuint(s->setup.gpus, ==, 8);
  g_assert_cmpfloat(s->setup.batch, ==, 16);
  g_assert_cmpint(s->setup.precision, ==, DDP_PRECISION_BF16);
  g_assert_cmpfloat(s->setup.buckets.bucket_cap_mb, ==, 50);
  g_assert_cmpuint(s->setup.accumulate, ==, 2);
  g_assert_true(s->setup.gradient_as_bucket_view);
  g_assert_cmpint(s->setup.optimizer, ==, DDP_OPTIMIZER_ADAMW);
  g_assert_cmpuint(s->setup.seed, ==, 42);
  g_assert_false(ddp_stragglers_is_none(s->stragglers));

  /* flags override the file */
  DdpCliOptions over = { 0 };
  over.model = model;
  over.gpus = (char *)"4";
  over.batch = (char *)"64";
  over.bucket_cap_mb = (char *)"10";
  over.stragglers = (char *)"none";
  over.cluster = (char *)"dgx-h100";
  g_autoptr(DdpScenario) t = ddp_scenario_load(path, &over, TRUE, &error);
  g_assert_no_error(error);
  g_assert_cmpuint(t->setup.gpus, ==, 4);
  g_assert_cmpfloat(t->setup.batch, ==, 64);
  g_assert_cmpfloat(t->setup.buckets.bucket_cap_mb, ==, 10);
  g_assert_true(ddp_stragglers_is_none(t->stragglers));
  g_assert_cmpstr(t->cluster->name, ==, "dgx-h100");
  g_assert_cmpint(t->setup.precision, ==, DDP_PRECISION_BF16);   /* untouched by flags */
}

static void
test_flag_errors(void)
{
  static const struct { const char *field; const char *value; const char *message; } cases[] = {
    { "gpus", "0", "--gpus: \"0\" must be a whole number from 1 to 16777216" },
    { "gpus", "eight", "--gpus: \"eight\" must be a whole number from 1 to 16777216" },
    { "bucket-cap-mb", "-3", "--bucket-cap-mb: \"-3\" must be a number from 1e-06 to 1e+09" },
    { "precision", "fp8", "--precision: \"fp8\" is not one of fp32|tf32|fp16|bf16" },
    { "comm-hook", "powersgd", "--comm-hook: \"powersgd\" is not one of none|fp16|bf16" },
    { "model", "no-such-model", NULL },
    { "gpus", "12", "--gpus: 12 GPUs do not fill whole nodes of 8 GPUs on cluster dgx-a100 (use at most one node, or a multiple of 8)" },
  };
  g_autofree char *model = fixture("tiny.model");
  for (gsize i = 0; i < G_N_ELEMENTS(cases); i++) {
    DdpCliOptions cli = { 0 };
    cli.model = model;
    if (strcmp(cases[i].field, "gpus") == 0) cli.gpus = (char *)cases[i].value;
    if (strcmp(cases[i].field, "bucket-cap-mb") == 0) cli.bucket_cap_mb = (char *)cases[i].value;
    if (strcmp(cases[i].field, "precision") == 0) cli.precision = (char *)cases[i].value;
    if (strcmp(cases[i].field, "comm-hook") == 0) cli.comm_hook = (char *)cases[i].value;
    if (strcmp(cases[i].field, "model") == 0) cli.model = (char *)cases[i].value;
    g_autoptr(GError) error = NULL;
    g_autoptr(DdpScenario) s = ddp_scenario_load(NULL, &cli, TRUE, &error);
    g_assert_null(s);
    g_assert_nonnull(error);
    if (cases[i].message)
      g_assert_cmpstr(error->message, ==, cases[i].message);
    else
      g_assert_error(error, DDP_MODEL_ERROR, DDP_MODEL_ERROR_NOT_FOUND);
  }
}

static void
test_file_errors(void)
{
  static const struct { const char *text; const char *message; } cases[] = {
    { "[scenario]\ngpus = 8\n[training]\nbatch = -1\n", "s.scenario:4: training.batch: \"-1\" must be a whole number from 1 to 16777216" },
    { "[scenario]\nwho = me\n", "s.scenario:2: scenario.who: unknown key (known keys: model, cluster, gpus, description)" },
    { "[scenario]\n[training]\nstragglers = normal:-1\n", NULL },
    { "[scenario]\ncluster = dgx-a100\n[cluster]\nname = x\n", "s.scenario:2: scenario.cluster: give either a cluster name here or an inline [cluster] group, not both" },
    { "[scenario]\n[network]\n", "s.scenario:2: [network]: unknown group (a scenario file has [scenario] [training] and optionally an inline cluster)" },
  };
  g_autofree char *dir = g_dir_make_tmp("ddpsim-scenario-XXXXXX", NULL);
  g_autofree char *path = g_build_filename(dir, "s.scenario", NULL);
  g_autofree char *model = fixture("tiny.model");
  for (gsize i = 0; i < G_N_ELEMENTS(cases); i++) {
    g_assert_true(g_file_set_contents(path, cases[i].text, -1, NULL));
    DdpCliOptions cli = { 0 };
    cli.model = model;
    g_autoptr(GError) error = NULL;
    g_autoptr(DdpScenario) s = ddp_scenario_load(path, &cli, TRUE, &error);
    g_assert_null(s);
    g_assert_nonnull(error);
    g_assert_true(g_str_has_prefix(error->message, path));
    if (cases[i].message) {
      g_assert_cmpstr(error->message + strlen(path) - strlen("s.scenario"), ==, cases[i].message);
    } else {
      g_assert_nonnull(strstr(error->message, ":3: training.stragglers:"));
    }
  }
  g_unlink(path);
  g_rmdir(dir);
}

/* Loads a scenario file of 8 GPUs on the tiny model whose [training] group is @training (one
 * "key = value" line: line 4 of the file), written to a fresh temporary folder that is removed
 * again.  Returns NULL with @error where it does not load. */
static DdpScenario *
load_training(const char *training, gboolean channels_last_flag, GError **error)
{
  g_autofree char *dir = g_dir_make_tmp("ddpsim-scenario-XXXXXX", NULL);
  g_autofree char *path = g_build_filename(dir, "s.scenario", NULL);
  g_autofree char *model = fixture("tiny.model");
  g_autofree char *text = g_strdup_printf("[scenario]\ngpus = 8\n[training]\n%s\n", training);
  g_assert_true(g_file_set_contents(path, text, -1, NULL));
  DdpCliOptions cli = { 0 };
  cli.model = model;
  cli.channels_last = channels_last_flag;
  DdpScenario *s = ddp_scenario_load(path, &cli, TRUE, error);
  g_unlink(path);
  g_rmdir(dir);
  return s;
}

/* [training] first_bucket_mb sets dist._DEFAULT_FIRST_BUCKET_BYTES (tune --first-bucket-mb and
 * --knobs first-bucket recommend one): 16 MiB → 16 777 216 bytes, and 0.25 → 262 144; a value out
 * of bucket_cap_mb's range is refused on its line. */
static void
test_first_bucket(void)
{
  const struct { const char *value; guint64 bytes; } cases[] = { { "16", 16777216 }, { "0.25", 262144 } };
  for (gsize i = 0; i < G_N_ELEMENTS(cases); i++) {
    g_autofree char *line = g_strdup_printf("first_bucket_mb = %s", cases[i].value);
    g_autoptr(GError) error = NULL;
    g_autoptr(DdpScenario) s = load_training(line, FALSE, &error);
    g_assert_no_error(error);
    g_assert_cmpuint(s->setup.buckets.first_bucket_bytes, ==, cases[i].bytes);
  }
  g_autoptr(GError) error = NULL;
  g_autoptr(DdpScenario) bad = load_training("first_bucket_mb = 0", FALSE, &error);
  g_assert_null(bad);
  g_assert_nonnull(strstr(error->message, "s.scenario:4: training.first_bucket_mb:"));
}

/* [training] channels_last (model.to(memory_format=torch.channels_last)) and --channels-last: off
 * by default, on from the file or the flag; a value that is not a boolean is refused on its line. */
static void
test_channels_last(void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(DdpScenario) from_file = load_training("channels_last = true", FALSE, &error);
  g_assert_no_error(error);
  g_assert_true(from_file->setup.channels_last);
  g_autoptr(DdpScenario) plain = load_training("batch = 8", FALSE, &error);
  g_assert_no_error(error);
  g_assert_false(plain->setup.channels_last);
  g_autoptr(DdpScenario) from_flag = load_training("batch = 8", TRUE, &error);
  g_assert_no_error(error);
  g_assert_true(from_flag->setup.channels_last);
  g_autoptr(DdpScenario) bad = load_training("channels_last = nhwc", TRUE, &error);
  g_assert_null(bad);
  g_assert_nonnull(strstr(error->message, "s.scenario:4: training.channels_last:"));
}

int
main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/scenario/defaults", test_defaults);
  g_test_add_func("/scenario/channels-last", test_channels_last);
  g_test_add_func("/scenario/file-then-flags", test_file_then_flags);
  g_test_add_func("/scenario/errors/flags", test_flag_errors);
  g_test_add_func("/scenario/errors/file", test_file_errors);
  g_test_add_func("/scenario/first-bucket", test_first_bucket);
  return g_test_run();
}
