/* Tests of src/ranges.c: range checks, flag parsing, the input-file reader, message quoting, the
 * saturating clock conversion and the --gpus list parser; and that the model, cluster and scenario
 * parsers hold a few ranges exactly at their bounds.  Expected values are worked by hand in the
 * comments. */
#define _DEFAULT_SOURCE   /* mkfifo, truncate */

#include <glib.h>
#include <glib/gstdio.h>
#include <math.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cluster.h"
#include "keyfile.h"
#include "model.h"
#include "ranges.h"
#include "scenario.h"

static void
test_contains(void)
{
  g_assert_true(ddp_range_contains(&DDP_RANGE_GPUS, 1));
  g_assert_true(ddp_range_contains(&DDP_RANGE_GPUS, 16777216));   /* 2^24, inclusive */
  g_assert_false(ddp_range_contains(&DDP_RANGE_GPUS, 16777217));
  g_assert_false(ddp_range_contains(&DDP_RANGE_GPUS, 0));
  g_assert_false(ddp_range_contains(&DDP_RANGE_BATCH, 0.5));        /* whole numbers only */
  g_assert_true(ddp_range_contains(&DDP_RANGE_BANDWIDTH_GBS, 0.00125)); /* 0.01 Gb/s */
  g_assert_false(ddp_range_contains(&DDP_RANGE_BANDWIDTH_GBS, 1e-300));
  g_assert_false(ddp_range_contains(&DDP_RANGE_BANDWIDTH_GBS, 1e22));
  g_assert_false(ddp_range_contains(&DDP_RANGE_FLOPS, NAN));
  g_assert_false(ddp_range_contains(&DDP_RANGE_FLOPS, INFINITY));
  g_autofree char *gpus = ddp_range_describe(&DDP_RANGE_GPUS);
  g_assert_cmpstr(gpus, ==, "a whole number from 1 to 16777216");
  g_autofree char *bw = ddp_range_describe(&DDP_RANGE_BANDWIDTH_GBS);
  g_assert_cmpstr(bw, ==, "a number from 0.00125 to 100000");
}

static void
test_flags(void)
{
  static const struct {
    const char *text;
    const char *message;   /* NULL: accepted */
    guint64 value;
  } counts[] = {
    { "8", NULL, 8 },
    { " 16 ", NULL, 16 },
    { "16777216", NULL, 16777216 },
    { "-8", "--gpus: \"-8\" must be a whole number from 1 to 16777216", 0 },   /* no wrap to 2^64-8 */
    { "17179869184", "--gpus: \"17179869184\" must be a whole number from 1 to 16777216", 0 },
    { "99999999999999999999", "--gpus: \"99999999999999999999\" must be a whole number from 1 to 16777216", 0 },
    { "8.0", "--gpus: \"8.0\" must be a whole number from 1 to 16777216", 0 },
    { "", "--gpus: \"\" must be a whole number from 1 to 16777216", 0 },
    { "8\x01", "--gpus: \"8\\x01\" must be a whole number from 1 to 16777216", 0 },
  };
  for (gsize i = 0; i < G_N_ELEMENTS(counts); i++) {
    g_autoptr(GError) error = NULL;
    guint64 v = 0;
    gboolean ok = ddp_flag_count("gpus", counts[i].text, &DDP_RANGE_GPUS, &v, &error);
    if (counts[i].message) {
      g_assert_false(ok);
      g_assert_error(error, DDP_RANGE_ERROR, DDP_RANGE_ERROR_RANGE);
      g_assert_cmpstr(error->message, ==, counts[i].message);
    } else {
      g_assert_no_error(error);
      g_assert_cmpuint(v, ==, counts[i].value);
    }
  }
  double d = 7;
  g_autoptr(GError) error = NULL;
  g_assert_true(ddp_flag_number("batch", NULL, &DDP_RANGE_BATCH, &d, &error));   /* not given: untouched */
  g_assert_cmpfloat(d, ==, 7);
  g_assert_true(ddp_flag_number("step-ms", "2.5", &DDP_RANGE_STEP_MS, &d, &error));
  g_assert_cmpfloat(d, ==, 2.5);
  const char *bad[] = { "1e308", "nan", "inf", "1e-400", "0x", "2.5ms", "0" };
  for (gsize i = 0; i < G_N_ELEMENTS(bad); i++) {
    g_clear_error(&error);
    g_assert_false(ddp_flag_number("step-ms", bad[i], &DDP_RANGE_STEP_MS, &d, &error));
    g_assert_error(error, DDP_RANGE_ERROR, DDP_RANGE_ERROR_RANGE);
    g_assert_true(g_str_has_prefix(error->message, "--step-ms: \""));
  }
  g_assert_cmpfloat(d, ==, 2.5);
}

/* Decimal numbers only: g_ascii_strtod alone would read "0x10" as 16 and "0x1p3" as 8. */
static void
test_parse_number(void)
{
  static const struct {
    const char *text;
    double value;
  } good[] = { { " 2.5 ", 2.5 }, { "1e3", 1000 }, { "-1.5", -1.5 }, { "+2", 2 }, { ".5", 0.5 } };
  for (gsize i = 0; i < G_N_ELEMENTS(good); i++) {
    double v = 0;
    g_assert_true(ddp_parse_number(good[i].text, &v));
    g_assert_cmpfloat(v, ==, good[i].value);
  }
  const char *bad[] = { "0x10", "0x1p3", "0X10", "inf", "infinity", "nan", "", " ", "1e", "8 8", "2.5ms", "1e-400", "1e309" };
  for (gsize i = 0; i < G_N_ELEMENTS(bad); i++) {
    double v = 7;
    if (ddp_parse_number(bad[i], &v))
      g_error("\"%s\" parsed as %g", bad[i], v);
    g_assert_cmpfloat(v, ==, 7);
  }
  gint64 n = 7;
  g_assert_false(ddp_parse_integer("0x10", &n));   /* base 10: "0" then junk */
  g_assert_cmpint(n, ==, 7);
}

/* Open ends, the where-named checks, sizes with K/M/G, fractions with %, seeds. */
static void
test_checks(void)
{
  g_assert_false(ddp_range_contains(&DDP_RANGE_TARGET_EFFICIENCY, 0));      /* above 0 */
  g_assert_true(ddp_range_contains(&DDP_RANGE_TARGET_EFFICIENCY, 1e-300));
  g_assert_true(ddp_range_contains(&DDP_RANGE_TARGET_EFFICIENCY, 1));       /* at most 1 */
  g_assert_false(ddp_range_contains(&DDP_RANGE_TOLERANCE, 1));              /* below 1 */
  g_assert_true(ddp_range_contains(&DDP_RANGE_TOLERANCE, 0.999));
  g_autofree char *target = ddp_range_describe(&DDP_RANGE_TARGET_EFFICIENCY);
  g_assert_cmpstr(target, ==, "a number above 0 and at most 1");
  g_autofree char *tolerance = ddp_range_describe(&DDP_RANGE_TOLERANCE);
  g_assert_cmpstr(tolerance, ==, "a number at least 1e-09 and below 1");
  g_assert_false(ddp_range_contains(&DDP_RANGE_TOLERANCE, 1e-16));          /* bisection could not end */

  g_autoptr(GError) error = NULL;
  guint64 n = 0;
  g_assert_true(ddp_range_check_count("-g", "1024", &DDP_RANGE_GPUS_PER_PROCESS, &n, &error));
  g_assert_cmpuint(n, ==, 1024);
  g_assert_false(ddp_range_check_count("-g", "1025", &DDP_RANGE_GPUS_PER_PROCESS, &n, &error));
  g_assert_error(error, DDP_RANGE_ERROR, DDP_RANGE_ERROR_RANGE);
  g_assert_cmpstr(error->message, ==, "-g: \"1025\" must be a whole number from 1 to 1024");
  g_clear_error(&error);
  double d = 0;
  g_assert_false(ddp_range_check_number("g.ini:3: sweep.bucket_cap_mb", "0x10", &DDP_RANGE_BUCKET_CAP_MB, &d, &error));
  g_assert_cmpstr(error->message, ==, "g.ini:3: sweep.bucket_cap_mb: \"0x10\" must be a number from 1e-06 to 1e+09");
  g_clear_error(&error);

  /* sizes: 128M = 2^27, 1.5K = 1536, 8G = 2^33 */
  static const struct {
    const char *text;
    guint64 value;
  } sizes[] = { { "128M", 134217728 }, { "1.5K", 1536 }, { "8g", 8589934592 }, { "1", 1 }, { "1048576G", 1125899906842624 } };
  for (gsize i = 0; i < G_N_ELEMENTS(sizes); i++) {
    g_assert_true(ddp_range_check_size("-e", sizes[i].text, &DDP_RANGE_SWEEP_BYTES, &n, &error));
    g_assert_cmpuint(n, ==, sizes[i].value);
  }
  /* 1.3 bytes is no whole byte; 2097152G is 2^51 */
  const char *bad_sizes[] = { "0", "1.3", "0x10", "-8", "K", "", "8KB", "2097152G", "1e400", "nanK" };
  for (gsize i = 0; i < G_N_ELEMENTS(bad_sizes); i++) {
    g_clear_error(&error);
    g_assert_false(ddp_range_check_size("-b", bad_sizes[i], &DDP_RANGE_SWEEP_BYTES, &n, &error));
    g_autofree char *expected = g_strdup_printf("-b: \"%s\" must be a whole number from 1 to 1125899906842624 (suffixes K, M, G)",
                                                bad_sizes[i]);
    g_assert_cmpstr(error->message, ==, expected);
  }
  g_clear_error(&error);

  /* fractions: 90% is 0.9; 100% is 1 */
  static const struct {
    const char *text;
    double value;
  } fractions[] = { { "0.9", 0.9 }, { "90%", 0.9 }, { "100%", 1 }, { "1", 1 } };
  for (gsize i = 0; i < G_N_ELEMENTS(fractions); i++) {
    g_assert_true(ddp_flag_fraction("target-efficiency", fractions[i].text, &DDP_RANGE_TARGET_EFFICIENCY, &d, &error));
    g_assert_cmpfloat_with_epsilon(d, fractions[i].value, 1e-15);
  }
  const char *bad_fractions[] = { "0", "0%", "1.01", "101%", "%", "90%%", "0x1", "nan%", "-5%" };
  for (gsize i = 0; i < G_N_ELEMENTS(bad_fractions); i++) {
    g_clear_error(&error);
    g_assert_false(ddp_flag_fraction("target-efficiency", bad_fractions[i], &DDP_RANGE_TARGET_EFFICIENCY, &d, &error));
    g_autofree char *expected = g_strdup_printf("--target-efficiency: \"%s\" must be a number above 0 and at most 1 "
                                                "(or a percentage: 90%% for 0.9)", bad_fractions[i]);
    g_assert_cmpstr(error->message, ==, expected);
  }
  g_clear_error(&error);
  g_assert_true(ddp_flag_fraction("min-gain", "0%", &DDP_RANGE_MIN_GAIN, &d, &error));   /* 0 is in [0, 1] */
  g_assert_cmpfloat(d, ==, 0);

  /* seeds: any guint64, written as a plain decimal */
  g_assert_true(ddp_range_check_seed("--seed", "18446744073709551615", &n, &error));
  g_assert_cmpuint(n, ==, G_MAXUINT64);
  const char *bad_seeds[] = { "-1", "18446744073709551616", "0x1", " 1", "1.0", "" };
  for (gsize i = 0; i < G_N_ELEMENTS(bad_seeds); i++) {
    g_clear_error(&error);
    g_assert_false(ddp_range_check_seed("--seed", bad_seeds[i], &n, &error));
    g_autofree char *expected = g_strdup_printf("--seed: \"%s\" must be a whole number from 0 to 18446744073709551615", bad_seeds[i]);
    g_assert_cmpstr(error->message, ==, expected);
  }
}

static void
test_read_file(void)
{
  g_autofree char *dir = g_dir_make_tmp("test-ranges-XXXXXX", NULL);
  g_autofree char *good = g_build_filename(dir, "good", NULL);
  g_autofree char *nul = g_build_filename(dir, "nul", NULL);
  g_autofree char *fifo = g_build_filename(dir, "fifo", NULL);
  g_autofree char *big = g_build_filename(dir, "big", NULL);
  g_assert_true(g_file_set_contents(good, "a\nb\n", -1, NULL));
  g_assert_true(g_file_set_contents(nul, "a\nb\nc\0d\n", 8, NULL));   /* the NUL is on line 3 */
  g_assert_cmpint(mkfifo(fifo, 0600), ==, 0);
  g_assert_true(g_file_set_contents(big, "", 0, NULL));
  g_assert_cmpint(truncate(big, (off_t)DDP_MAX_INPUT_BYTES + 1), ==, 0);

  g_autoptr(GError) error = NULL;
  g_autofree char *text = NULL;
  gsize length = 0;
  g_assert_true(ddp_range_read_file(good, &text, &length, &error));
  g_assert_cmpstr(text, ==, "a\nb\n");
  g_assert_cmpuint(length, ==, 4);
  struct {
    const char *path, *suffix;
  } bad[] = {
    { nul, ":3: a NUL byte: not a text file" },
    { fifo, ": not a regular file (a FIFO)" },       /* and no hang: opened O_NONBLOCK, refused by fstat */
    { dir, ": not a regular file (a directory)" },
    { big, ": 67108865 bytes; input files are limited to 64 MiB" },
    { "/dev/zero", ": not a regular file (a device)" },
  };
  for (gsize i = 0; i < G_N_ELEMENTS(bad); i++) {
    g_clear_error(&error);
    g_autofree char *none = NULL;
    g_assert_false(ddp_range_read_file(bad[i].path, &none, NULL, &error));
    g_assert_error(error, DDP_RANGE_ERROR, DDP_RANGE_ERROR_FILE);
    g_autofree char *expected = g_strconcat(bad[i].path, bad[i].suffix, NULL);
    g_assert_cmpstr(error->message, ==, expected);
    g_assert_null(none);
  }
  g_unlink(good);
  g_unlink(nul);
  g_unlink(fifo);
  g_unlink(big);
  g_rmdir(dir);
}

static void
test_quote(void)
{
  g_autofree char *a = ddp_range_quote("ok\x01\t\n\x1b[2J\x7f");
  g_assert_cmpstr(a, ==, "ok\\x01\\t\\n\\x1b[2J\\x7f");
  g_autofree char *b = ddp_range_quote("\xff\xfeok");   /* invalid UTF-8 bytes escaped, not dropped */
  g_assert_cmpstr(b, ==, "\\xff\\xfeok");
  g_autofree char *c = ddp_range_quote("8,16,…,1024");   /* valid UTF-8 passes */
  g_assert_cmpstr(c, ==, "8,16,…,1024");
  char long_text[200];
  memset(long_text, 'x', sizeof long_text - 1);
  long_text[sizeof long_text - 1] = '\0';
  g_autofree char *d = ddp_range_quote(long_text);   /* 80 characters, then "…" */
  g_assert_cmpuint(g_utf8_strlen(d, -1), ==, 81);
  g_assert_true(g_str_has_suffix(d, "x…"));
  g_autofree char *e = ddp_range_quote_n("abcdef", 3);
  g_assert_cmpstr(e, ==, "abc…");
}

static void
test_time_from_ns(void)
{
  g_assert_cmpint(ddp_time_from_ns(1.5), ==, 2);      /* llround: halves away from zero */
  g_assert_cmpint(ddp_time_from_ns(-2.5), ==, -3);
  g_assert_cmpint(ddp_time_from_ns(1e300), ==, DDP_TIME_MAX_NS);
  g_assert_cmpint(ddp_time_from_ns(INFINITY), ==, DDP_TIME_MAX_NS);
  g_assert_cmpint(ddp_time_from_ns(NAN), ==, DDP_TIME_MAX_NS);
  g_assert_cmpint(ddp_time_from_ns(-1e300), ==, -DDP_TIME_MAX_NS);
  g_assert_cmpint(ddp_time_from_ns(4611686018427387904.0), ==, DDP_TIME_MAX_NS);   /* 2^62 */
}

static void
assert_list(const char *text, const guint64 *expected, guint n)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GArray) list = ddp_gpu_list_parse(text, &error);
  g_assert_no_error(error);
  g_assert_cmpuint(list->len, ==, n);
  for (guint i = 0; i < n; i++)
    g_assert_cmpuint(g_array_index(list, guint64, i), ==, expected[i]);
}

static void
test_gpu_list(void)
{
  static const guint64 doubling[] = { 8, 16, 32, 64, 128 };   /* 8,16 doubles up to 128 */
  assert_list("8,16,...,128", doubling, 5);
  assert_list("8,16,…,128", doubling, 5);
  static const guint64 geometric[] = { 2, 4, 8, 11 };          /* 4 = 2·2: doubles below 11, then 11 */
  assert_list("2,4,...,11", geometric, 4);
  static const guint64 steps[] = { 3, 5, 7, 9, 10 };            /* 5 is no multiple of 3: adds 2 below 10 */
  assert_list("3,5,...,10", steps, 5);
  static const guint64 plain[] = { 1, 3, 7 };
  assert_list(" 1, 3 ,7", plain, 3);
  /* 2,3,...,4097: 2 … 4096 is 4095 counts plus 4097: 4096, the cap exactly */
  g_autoptr(GError) error = NULL;
  g_autoptr(GArray) full = ddp_gpu_list_parse("2,3,...,4097", &error);
  g_assert_no_error(error);
  g_assert_cmpuint(full->len, ==, DDP_MAX_SWEEP_POINTS);
  static const struct {
    const char *text, *message;
  } bad[] = {
    { "2,3,...,4098", "--gpus: the list has more than 4096 counts (ranges.h DDP_MAX_SWEEP_POINTS)" },
    { "2,3,...,2147483647", "--gpus: \"2,3,...,2147483647\": the counts around \"...\" must increase (up to 16777216)" },
    { "16777217", "--gpus: \"16777217\" is not a GPU count (1 to 16777216)" },
    { "-8", "--gpus: \"-8\" is not a GPU count (1 to 16777216)" },
    { "16,8", "--gpus: counts must increase (8 after 16)" },
    { "...,8", "--gpus: \"...\" needs two counts before it and one after it (e.g. 8,16,...,1024)" },
    { "8,16,...", "--gpus: \"...\" needs two counts before it and one after it (e.g. 8,16,...,1024)" },
  };
  for (gsize i = 0; i < G_N_ELEMENTS(bad); i++) {
    g_clear_error(&error);
    g_assert_null(ddp_gpu_list_parse(bad[i].text, &error));
    g_assert_error(error, DDP_RANGE_ERROR, DDP_RANGE_ERROR_RANGE);
    g_assert_cmpstr(error->message, ==, bad[i].message);
  }
}

/* Model and cluster texts through their parsers: NULL error text means the value must be accepted. */
static DdpModel *
load_model(const char *text, GError **error)
{
  g_autoptr(DdpKeyFile) kf = ddp_keyfile_load_data("t.model", text, error);
  return kf ? ddp_model_from_keyfile(kf, error) : NULL;
}

static DdpCluster *
load_cluster(const char *text, GError **error)
{
  g_autoptr(DdpKeyFile) kf = ddp_keyfile_load_data("t.cluster", text, error);
  return kf ? ddp_cluster_from_keyfile(kf, error) : NULL;
}

#define MODEL_HEAD "[model]\nname = m\n"   /* lines 1-2; the key under test is line 3 */
#define MODEL_LAYER "[layer a]\nkind = conv\nforward_flops = 1\nbackward_flops = 2\nparams = a.w:3\n"
#define CLUSTER_HEAD "[cluster]\nname = x\ngpu = h100\ngpus_per_node = 1\n"   /* lines 1-4 */

static void
test_model_bounds(void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(DdpModel) seq = load_model(MODEL_HEAD "seq_len = 16777216\n" MODEL_LAYER, &error);   /* 2^24 */
  g_assert_no_error(error);
  g_assert_cmpint(seq->seq_len, ==, 16777216);
  g_autoptr(DdpModel) image = load_model(MODEL_HEAD "image_size = 65536\n" MODEL_LAYER, &error);   /* 2^16 */
  g_assert_no_error(error);
  g_assert_cmpint(image->image_size, ==, 65536);
  /* 2^31 - 1 groups: a depthwise convolution's weight (out, in/groups, kh, kw) with as many out channels */
  g_autoptr(DdpModel) grouped = load_model(MODEL_HEAD "[layer a]\nkind = conv\nforward_flops = 1\nbackward_flops = 2\n"
                                           "params = a.w:2147483647,1,1,1\ngroups = 2147483647\n", &error);
  g_assert_no_error(error);
  g_assert_cmpuint(grouped->layers[0].groups, ==, 2147483647u);
  static const struct {
    const char *text, *message;
  } bad[] = {
    { MODEL_HEAD "seq_len = 16777217\n" MODEL_LAYER, "t.model:3: model.seq_len: \"16777217\" must be a whole number from 1 to 16777216" },
    { MODEL_HEAD "image_size = 65537\n" MODEL_LAYER, "t.model:3: model.image_size: \"65537\" must be a whole number from 1 to 65536" },
    { MODEL_HEAD MODEL_LAYER "groups = 2147483648\n", "t.model:8: layer a.groups: \"2147483648\" must be a whole number from 1 to 2147483647" },
  };
  for (gsize i = 0; i < G_N_ELEMENTS(bad); i++) {
    g_clear_error(&error);
    g_autoptr(DdpModel) none = load_model(bad[i].text, &error);
    g_assert_null(none);
    g_assert_error(error, DDP_KEYFILE_ERROR, DDP_KEYFILE_ERROR_VALUE);
    g_assert_cmpstr(error->message, ==, bad[i].message);
  }
}

static void
test_cluster_bounds(void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(DdpCluster) c = load_cluster(CLUSTER_HEAD "overlap_slowdown = 10\n[nccl]\nchannels = 64\nbw_inter_GBs = 10000\n", &error);
  g_assert_no_error(error);
  g_assert_cmpfloat(c->overlap_slowdown, ==, 10);
  g_assert_cmpint(c->nccl.channels, ==, 64);
  g_assert_cmpfloat(c->nccl.bw_inter_GBs, ==, 10000);
  static const struct {
    const char *text, *message;
  } bad[] = {
    { CLUSTER_HEAD "overlap_slowdown = 10.000001\n", "t.cluster:5: cluster.overlap_slowdown: \"10.000001\" must be a number from 0 to 10" },
    { CLUSTER_HEAD "[nccl]\nchannels = 65\n", "t.cluster:6: nccl.channels: \"65\" must be a whole number from 0 to 64" },
    { CLUSTER_HEAD "[nccl]\nbw_inter_GBs = 10000.001\n", "t.cluster:6: nccl.bw_inter_GBs: \"10000.001\" must be a number from 0 to 10000" },
    /* inside DDP_RANGE_NCCL_BW_GBS but neither 0 nor a bandwidth (below 0.00125 GB/s) */
    { CLUSTER_HEAD "[nccl]\nbw_inter_GBs = 0.001\n", "t.cluster:6: nccl.bw_inter_GBs: must be 0 (from the topology) or from 0.00125 to 10000 GB/s (got 0.001)" },
  };
  for (gsize i = 0; i < G_N_ELEMENTS(bad); i++) {
    g_clear_error(&error);
    g_autoptr(DdpCluster) none = load_cluster(bad[i].text, &error);
    g_assert_null(none);
    g_assert_error(error, DDP_KEYFILE_ERROR, DDP_KEYFILE_ERROR_VALUE);
    g_assert_cmpstr(error->message, ==, bad[i].message);
  }
}

/* A scenario key and its flag share one range: jitter 0.5 and seq_len 2^24 pass both ways,
 * a hair above fails both ways. */
static void
test_scenario_bounds(void)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *dir = g_dir_make_tmp("test-ranges-XXXXXX", &error);
  g_assert_no_error(error);
  g_autofree char *model = g_build_filename(dir, "tok.model", NULL);
  g_autofree char *scenario = g_build_filename(dir, "s.scenario", NULL);
  g_autofree char *cluster = g_test_build_filename(G_TEST_DIST, "data", "ab4.cluster", NULL);
  /* a token model measured at 1024 tokens */
  g_assert_true(g_file_set_contents(model, "[model]\nname = tok\nseq_len = 1024\n" MODEL_LAYER, -1, &error));

  static const struct {
    const char *key, *flag, *value, *message;   /* message: NULL when accepted */
  } cases[] = {
    { "jitter", NULL, "0.5", NULL },
    { "jitter", NULL, "0.5000001", "s.scenario:5: training.jitter: \"0.5000001\" must be a number from 0 to 0.5" },
    { NULL, "jitter", "0.5", NULL },
    { NULL, "jitter", "0.5000001", "--jitter: \"0.5000001\" must be a number from 0 to 0.5" },
    { "seq_len", NULL, "16777216", NULL },
    { "seq_len", NULL, "16777217", "s.scenario:5: training.seq_len: \"16777217\" must be a whole number from 1 to 16777216" },
    { NULL, "seq-len", "16777216", NULL },
    { NULL, "seq-len", "16777217", "--seq-len: \"16777217\" must be a whole number from 1 to 16777216" },
    /* the seed: 2^64 − 1 from the file as from the flag (no double holds it: its own parser) */
    { "seed", NULL, "18446744073709551615", NULL },
    { "seed", NULL, "18446744073709551616",
      "s.scenario:5: training.seed: \"18446744073709551616\" must be a whole number from 0 to 18446744073709551615" },
    { NULL, "seed", "18446744073709551615", NULL },
    { NULL, "seed", "18446744073709551616", "--seed: \"18446744073709551616\" must be a whole number from 0 to 18446744073709551615" },
  };
  for (gsize i = 0; i < G_N_ELEMENTS(cases); i++) {
    g_autofree char *text = g_strdup_printf("[scenario]\nmodel = %s\ncluster = %s\n[training]\n%s%s%s\n", model, cluster,
                                            cases[i].key ? cases[i].key : "", cases[i].key ? " = " : "",
                                            cases[i].key ? cases[i].value : "");
    g_clear_error(&error);
    g_assert_true(g_file_set_contents(scenario, text, -1, &error));
    DdpCliOptions cli = { 0 };
    cli.gpus = (char *)"4";
    if (g_strcmp0(cases[i].flag, "jitter") == 0)
      cli.jitter = (char *)cases[i].value;
    if (g_strcmp0(cases[i].flag, "seq-len") == 0)
      cli.seq_len = (char *)cases[i].value;
    if (g_strcmp0(cases[i].flag, "seed") == 0)
      cli.seed = (char *)cases[i].value;
    g_autoptr(DdpScenario) s = ddp_scenario_load(scenario, &cli, TRUE, &error);
    if (!cases[i].message) {
      g_assert_no_error(error);
      const char *name = cases[i].key ? cases[i].key : cases[i].flag;
      if (g_str_has_prefix(name, "jitter"))
        g_assert_cmpfloat(s->setup.overheads.jitter, ==, 0.5);
      else if (g_str_has_prefix(name, "seed"))
        g_assert_cmpuint(s->setup.seed, ==, G_MAXUINT64);
      else
        g_assert_cmpuint(s->setup.seq_len, ==, 16777216);
      continue;
    }
    g_assert_null(s);
    if (cases[i].key) {
      g_assert_error(error, DDP_KEYFILE_ERROR, DDP_KEYFILE_ERROR_VALUE);
      g_assert_true(g_str_has_prefix(error->message, scenario));
      g_assert_cmpstr(error->message + strlen(dir) + 1, ==, cases[i].message);
    } else {
      g_assert_error(error, DDP_RANGE_ERROR, DDP_RANGE_ERROR_RANGE);
      g_assert_cmpstr(error->message, ==, cases[i].message);
    }
  }
  g_unlink(model);
  g_unlink(scenario);
  g_rmdir(dir);
}

int
main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/ranges/contains", test_contains);
  g_test_add_func("/ranges/flags", test_flags);
  g_test_add_func("/ranges/parse-number", test_parse_number);
  g_test_add_func("/ranges/checks", test_checks);
  g_test_add_func("/ranges/read-file", test_read_file);
  g_test_add_func("/ranges/quote", test_quote);
  g_test_add_func("/ranges/time-from-ns", test_time_from_ns);
  g_test_add_func("/ranges/gpu-list", test_gpu_list);
  g_test_add_func("/ranges/model-bounds", test_model_bounds);
  g_test_add_func("/ranges/cluster-bounds", test_cluster_bounds);
  g_test_add_func("/ranges/scenario-bounds", test_scenario_bounds);
  return g_test_run();
}
