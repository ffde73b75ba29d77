/* End-to-end tests of the sweeps (issue 4) through the real binary: scale efficiency is 1 on one
 * GPU and never increases with N on a fixed fabric without stragglers; tune prefers a large
 * bucket for many small gradients on a high-latency network and a small one for a large model on
 * a fast network — each with the reason visible in the buckets and exposed communication. */
#include <glib.h>
#include <glib/gstdio.h>
#include <json-glib/json-glib.h>
#include <string.h>

#include "run-ddpsim.h"

/* A fresh temporary directory, removed with its files when the test ends. */
static void
remove_dir(char *dir)
{
  g_autoptr(GDir) d = g_dir_open(dir, 0, NULL);
  const char *name;
  while (d && (name = g_dir_read_name(d))) {
    g_autofree char *path = g_build_filename(dir, name, NULL);
    g_unlink(path);
  }
  g_rmdir(dir);
  g_free(dir);
}
typedef char TempDir;
G_DEFINE_AUTOPTR_CLEANUP_FUNC(TempDir, remove_dir)

/* Parses stdout of a successful run. */
static JsonObject *
parse_ok(JsonParser *parser, const Run *r)
{
  if (r->status != 0)
    g_error("ddpsim failed: %s", r->err);
  g_autoptr(GError) error = NULL;
  g_assert_true(json_parser_load_from_data(parser, r->out, -1, &error));
  return json_node_get_object(json_parser_get_root(parser));
}

/* A model of @layers linear layers, each with one fp32 gradient of @numel elements and
 * @backward_us of measured backward time (batch 32). */
static char *
write_model(const char *dir, const char *name, guint layers, guint numel, double backward_us)
{
  GString *text = g_string_new(NULL);
  g_string_append_printf(text, "[model]\nname = %s\nmeasured_batch = 32\n", name);
  for (guint i = 0; i < layers; i++)
    g_string_append_printf(text, "[layer l%u]\nkind = linear\nforward_flops = 0\nbackward_flops = 0\n"
                                 "forward_us = 10\nbackward_us = %g\nparams = l%u.weight:%u\n",
                           i, backward_us, i, numel);
  char *path = g_strdup_printf("%s/%s.model", dir, name);
  g_assert_true(g_file_set_contents(path, text->str, -1, NULL));
  g_string_free(text, TRUE);
  return path;
}

/* Two 4-GPU nodes, alpha-beta ring: intra 100 GB/s, inter 1 NIC × @gbps Gb/s shared by 4 GPUs;
 * per-hop latency @latency_us on both fabrics. */
static char *
write_cluster(const char *dir, const char *name, double gbps, double latency_us)
{
  g_autofree char *text = g_strdup_printf("[cluster]\nname = %s\ngpu = a100\ngpus_per_node = 4\n"
                                          "[intra]\nfabric = nvlink\nbandwidth_GBs = 100\nlatency_us = %g\n"
                                          "[inter]\nfabric = ethernet\nnics_per_node = 1\nnic_bandwidth_Gbps = %g\nlatency_us = %g\n"
                                          "[nccl]\ncost_model = alpha-beta\n",
                                          name, latency_us, gbps, latency_us);
  char *path = g_strdup_printf("%s/%s.cluster", dir, name);
  g_assert_true(g_file_set_contents(path, text, -1, NULL));
  return path;
}

static void
test_scale_monotone(void)
{
  g_autoptr(TempDir) dir = g_dir_make_tmp("ddpsim-sweeps-XXXXXX", NULL);
  g_autofree char *model = write_model(dir, "m", 16, 262144, 200);
  g_autofree char *cluster = write_cluster(dir, "c", 100, 5);
  g_autoptr(JsonParser) parser = json_parser_new();
  g_auto(Run) r = { 0 };
  run(&r, "scale", "--model", model, "--cluster", cluster, "--gpus", "1,2,4,8,...,64",
                              "--iterations", "2", "--json", NULL);
  JsonObject *root = parse_ok(parser, &r);
  JsonArray *rows = json_object_get_array_member(root, "rows");
  /* 1, 2, 4, 8, 16, 32, 64: "..." continues the doubling */
  g_assert_cmpuint(json_array_get_length(rows), ==, 7);
  double previous = 2;
  for (guint i = 0; i < json_array_get_length(rows); i++) {
    JsonObject *row = json_array_get_object_element(rows, i);
    double eff = json_object_get_double_member(row, "scaling_efficiency");
    g_assert_cmpint(json_object_get_int_member(row, "gpus"), ==, 1 << i);
    if (i == 0)   /* one GPU under DDP against the plain module: below 1 by the reducer's copies */
      g_assert_cmpfloat(eff, <, 1.0);
    g_assert_cmpfloat(eff, <=, previous);
    g_assert_cmpfloat(eff, >, 0);
    previous = eff;
  }
  /* crossing the node boundary (4 → 8 GPUs) must cost something on a 100 Gb/s NIC */
  double at4 = json_object_get_double_member(json_array_get_object_element(rows, 2), "scaling_efficiency");
  double at8 = json_object_get_double_member(json_array_get_object_element(rows, 3), "scaling_efficiency");
  g_assert_cmpfloat(at8, <, at4);
}

/* Strong scaling on a closed form: one layer, forward 10 µs and backward 800 µs at batch 32, one
 * 256 KiB gradient (one bucket: below the 1 MiB first bucket), so the AllReduce is ready only
 * after the whole backward and is all exposed.  On the A100 (HBM 2 039 GB/s at 75 %) the hook
 * copy, the finalize copy and the SGD-momentum step are each below the 5 µs kernel floor:
 *   T(b) = (10 + 800)·b/32 µs + 15 µs = 25 312.5·b + 15 000 ns
 *   AllReduce, alpha-beta ring in one node: 2(N−1)/N · 262 144 B / 100 B/ns + 2(N−1) · 5 000 ns
 *     (the tree, 2·262 144/100 + 2(N−1)·5 000, never wins here)
 *   The baseline T(1, B) is the plain module without DDP: no hook or finalize copy, so
 *   T_plain(128) = 25 312.5·128 + 5 000 = 3 245 000 ns.
 *   global batch 128:
 *     N = 1: T(1) = 25 312.5·128 + 15 000 = 3 255 000 ns → E = 3 245 000 / 3 255 000 = 0.996928
 *     N = 2: b = 64:  1 635 000 + 2 621 + 10 000 = 1 647 621 → E = 3 245 000 / (2 · 1 647 621) = 0.984753
 *     N = 4: b = 32:    825 000 + 3 932 + 30 000 =   858 932 → E = 3 245 000 / (4 ·   858 932) = 0.944487
 *     N = 8 (2 nodes; per-GPU NIC share 100 Gb/s / 8 / 4 = 3.125 GB/s, α 5 µs): ring
 *       1.75·262 144/3.125 + 70 000 = 216 801; tree 2·262 144/3.125 + 2·(3·5 + 1·5) µs = 207 772
 *       wins; b = 16: 420 000 + 207 772 = 627 772 → E = 3 245 000 / (8 · 627 772) = 0.646134
 *     N = 256: b = 0.5 < 1 sample: not feasible.
 * With --max-batch 64 one GPU runs 2 micro-steps of 64: 2·20 000 + 1 600 000 + 1 605 000 + 10 000
 * = 3 255 000 ns, the same T(1) (the layer times are linear in the batch). */
static void
test_scale_strong(void)
{
  g_autoptr(TempDir) dir = g_dir_make_tmp("ddpsim-sweeps-XXXXXX", NULL);
  g_autofree char *model = write_model(dir, "m", 1, 65536, 800);
  g_autofree char *cluster = write_cluster(dir, "c", 100, 5);
  static const double expected_ms[] = { 3.255, 1.647621, 0.858932, 0.627772 };
  static const double expected_exposed_ms[] = { 0, 0.012621, 0.033932, 0.207772 };
  static const double expected_eff[] = { 0.996928, 0.984753, 0.944487, 0.646134 };
  const char *max_batch[] = { NULL, "64" };
  for (guint m = 0; m < G_N_ELEMENTS(max_batch); m++) {
    g_autoptr(JsonParser) parser = json_parser_new();
    g_auto(Run) r = { 0 };
    if (max_batch[m])
      run(&r, "scale", "--model", model, "--cluster", cluster, "--gpus", "1,2,4,8,256", "--global-batch", "128",
          "--max-batch", max_batch[m], "--iterations", "1", "--json", "--host-iteration-us", "0", "--host-layer-us", "0",
          "--jitter", "0", "--overlap-slowdown", "0", NULL);
    else
      run(&r, "scale", "--model", model, "--cluster", cluster, "--gpus", "1,2,4,8,256", "--global-batch", "128",
          "--iterations", "1", "--json", "--host-iteration-us", "0", "--host-layer-us", "0", "--jitter", "0",
          "--overlap-slowdown", "0", NULL);
    JsonObject *root = parse_ok(parser, &r);
    g_assert_cmpstr(json_object_get_string_member(root, "scaling_definition"), ==, "strong");
    g_assert_cmpfloat(json_object_get_double_member(root, "global_batch"), ==, 128);
    JsonArray *rows = json_object_get_array_member(root, "rows");
    g_assert_cmpuint(json_array_get_length(rows), ==, 5);
    for (guint i = 0; i < 4; i++) {
      JsonObject *row = json_array_get_object_element(rows, i);
      g_assert_true(json_object_get_boolean_member(row, "feasible"));
      g_assert_cmpfloat(json_object_get_double_member(row, "batch_per_gpu"), ==, 128 >> i);
      g_assert_cmpfloat_with_epsilon(json_object_get_double_member(row, "iteration_ms"), expected_ms[i], 1e-6);
      g_assert_cmpfloat_with_epsilon(json_object_get_double_member(row, "exposed_comm_ms"), expected_exposed_ms[i], 1e-6);
      g_assert_cmpfloat_with_epsilon(json_object_get_double_member(row, "scaling_efficiency"), expected_eff[i], 1e-6);
      /* every step processes the global batch */
      g_assert_cmpfloat_with_epsilon(json_object_get_double_member(row, "samples_per_s"), 128 / (expected_ms[i] / 1e3), 1e-2);
      guint k = max_batch[m] && i == 0 ? 2 : 1;
      g_assert_cmpint(json_object_get_int_member(row, "accumulate"), ==, k);
      g_assert_cmpfloat(json_object_get_double_member(row, "micro_batch"), ==, (128 >> i) / k);
    }
    JsonObject *last = json_array_get_object_element(rows, 4);
    g_assert_false(json_object_get_boolean_member(last, "feasible"));
    g_assert_true(json_node_is_null(json_object_get_member(last, "iteration_ms")));
  }
  /* weak scaling says so too */
  g_autoptr(JsonParser) parser = json_parser_new();
  g_auto(Run) r = { 0 };
  run(&r, "scale", "--model", model, "--cluster", cluster, "--gpus", "1,2", "--iterations", "1", "--json", NULL);
  g_assert_cmpstr(json_object_get_string_member(parse_ok(parser, &r), "scaling_definition"), ==, "weak");
  /* --max-batch without --global-batch, and a bad one */
  g_auto(Run) bad = { 0 };
  run(&bad, "scale", "--model", model, "--cluster", cluster, "--gpus", "1,2", "--max-batch", "8", NULL);
  g_assert_cmpint(bad.status, ==, 2);
  g_assert_true(g_str_has_prefix(bad.err, "ddpsim scale: --max-batch:"));
  g_assert_cmpstr(bad.out, ==, "");
  g_auto(Run) bad2 = { 0 };
  run(&bad2, "scale", "--global-batch", "64", "--max-batch", "0.5", NULL);
  g_assert_cmpint(bad2.status, ==, 2);
  g_assert_true(g_str_has_prefix(bad2.err, "ddpsim scale: --max-batch:"));
}

/* 64 layers × 1 MiB gradients, 20 µs of backward each, 500 µs per hop: every AllReduce costs at
 * least 2·7·500 µs = 7 ms of latency, so the fewer buckets the better: the best cap holds the whole
 * model in one bucket (a bucket_cap_mb passed to DDP is its first bucket too from PyTorch 2.4, so
 * there is no 1 MiB bucket before it; under 2.3 rules the 1 MiB first bucket and one more). */
static void
test_tune_slow_network(void)
{
  g_autoptr(TempDir) dir = g_dir_make_tmp("ddpsim-sweeps-XXXXXX", NULL);
  g_autofree char *model = write_model(dir, "small", 64, 262144, 20);
  g_autofree char *cluster = write_cluster(dir, "slow", 10, 500);
  g_autoptr(JsonParser) parser = json_parser_new();
  g_auto(Run) r = { 0 };
  run(&r, "tune", "--model", model, "--cluster", cluster, "--gpus", "8", "--iterations", "1",
                              "--json", NULL);
  JsonObject *root = parse_ok(parser, &r);
  double best = json_object_get_double_member(root, "best_bucket_cap_mb");
  g_assert_cmpfloat(best, >=, 64);
  JsonArray *rows = json_object_get_array_member(root, "rows");
  JsonObject *smallest = json_array_get_object_element(rows, 0), *best_row = NULL, *dflt = NULL;
  for (guint i = 0; i < json_array_get_length(rows); i++) {
    JsonObject *row = json_array_get_object_element(rows, i);
    if (json_object_get_double_member(row, "bucket_cap_mb") == best)
      best_row = row;
    if (json_object_get_double_member(row, "bucket_cap_mb") == 25)
      dflt = row;
  }
  /* the reason: 1 bucket instead of 64, so 1 latency instead of 64 */
  g_assert_cmpint(json_object_get_int_member(best_row, "buckets"), ==, 1);
  g_assert_cmpint(json_object_get_int_member(smallest, "buckets"), ==, 64);
  g_assert_cmpfloat(json_object_get_double_member(best_row, "comm_ms"), <, json_object_get_double_member(dflt, "comm_ms"));
  g_assert_cmpfloat(json_object_get_double_member(root, "gain_over_default"), >, 0);
}

/* 64 layers × 4 MiB gradients, 2 ms of backward each, one fast 4-GPU node: an AllReduce of 4 MiB
 * takes 1.5·4 MiB/100 GB/s + 30 µs ≈ 93 µs, hidden behind the next layer; with a huge cap the
 * last bucket holds almost the whole model and ≈4 ms of AllReduce is exposed after backward.  A
 * small cap wins, and its exposed communication is one small bucket's. */
static void
test_tune_fast_network(void)
{
  g_autoptr(TempDir) dir = g_dir_make_tmp("ddpsim-sweeps-XXXXXX", NULL);
  g_autofree char *model = write_model(dir, "large", 64, 1048576, 2000);
  g_autofree char *cluster = write_cluster(dir, "fast", 100, 5);
  g_autoptr(JsonParser) parser = json_parser_new();
  g_auto(Run) r = { 0 };
  run(&r, "tune", "--model", model, "--cluster", cluster, "--gpus", "4", "--iterations", "1",
                              "--json", NULL);
  JsonObject *root = parse_ok(parser, &r);
  double best = json_object_get_double_member(root, "best_bucket_cap_mb");
  g_assert_cmpfloat(best, <=, 8);
  JsonArray *rows = json_object_get_array_member(root, "rows");
  JsonObject *largest = json_array_get_object_element(rows, json_array_get_length(rows) - 1), *best_row = NULL;
  for (guint i = 0; i < json_array_get_length(rows); i++)
    if (json_object_get_double_member(json_array_get_object_element(rows, i), "bucket_cap_mb") == best)
      best_row = json_array_get_object_element(rows, i);
  g_assert_cmpfloat(json_object_get_double_member(best_row, "exposed_comm_ms"), <, 0.2);
  g_assert_cmpfloat(json_object_get_double_member(largest, "exposed_comm_ms"), >, 3.5);
}

/* The same slow network with the first bucket as a second knob: 64 MiB of gradients in 1 MiB
 * layers.  With PyTorch's 1 MiB first bucket and cap 64 there are 2 buckets (1 MiB + 63 MiB); a
 * 64 MiB first bucket holds the whole model in one (at either cap), so the fastest point has
 * first_bucket_mb 64.  What one bucket fewer saves (per-GPU NIC share B = 10 Gb/s / 8 / 4 =
 * 312.5 B/µs; ring latency 2·7·500 µs = 7 ms, tree 2·(3·500 + 1·500) µs = 4 ms, the cheaper wins):
 *   1 MiB by tree: 2·1 048 576/312.5 + 4 000 = 10 710.9 µs (ring: 5 872.0 + 7 000)
 *   63 and 64 MiB by ring, differing by 1.75·1 048 576/312.5 = 5 872.0 µs
 *   ⇒ comm(first 1 MiB) − comm(first 64 MiB) = 10 710.9 − 5 872.0 = 4 838.9 µs.
 * The default point (cap 25, first bucket 1 MiB) is always a row.  The two knobs together are
 * PyTorch 2.3's (--torch-version 2.3): from 2.4 a passed cap is the first bucket too, and tune
 * refuses the 2-D sweep there. */
static void
test_tune_first_bucket(void)
{
  g_autoptr(TempDir) dir = g_dir_make_tmp("ddpsim-sweeps-XXXXXX", NULL);
  g_autofree char *model = write_model(dir, "small", 64, 262144, 20);
  g_autofree char *cluster = write_cluster(dir, "slow", 10, 500);
  g_autoptr(JsonParser) parser = json_parser_new();
  g_auto(Run) r = { 0 };
  run(&r, "tune", "--model", model, "--cluster", cluster, "--gpus", "8", "--iterations", "1", "--range", "64:64",
      "--first-bucket-mb", "64", "--torch-version", "2.3", "--json", NULL);
  JsonObject *root = parse_ok(parser, &r);
  JsonArray *rows = json_object_get_array_member(root, "rows");
  /* first buckets 1 and 64 MiB × caps 25 and 64 */
  g_assert_cmpuint(json_array_get_length(rows), ==, 4);
  g_assert_cmpfloat(json_object_get_double_member(root, "best_first_bucket_mb"), ==, 64);
  double first1_cap64 = 0, first64_cap64 = 0;
  for (guint i = 0; i < 4; i++) {
    JsonObject *row = json_array_get_object_element(rows, i);
    gboolean big_first = json_object_get_double_member(row, "first_bucket_mb") == 64;
    if (big_first)
      g_assert_cmpint(json_object_get_int_member(row, "buckets"), ==, 1);
    if (json_object_get_double_member(row, "bucket_cap_mb") != 64)
      continue;
    g_assert_cmpint(json_object_get_int_member(row, "buckets"), ==, big_first ? 1 : 2);
    *(big_first ? &first64_cap64 : &first1_cap64) = json_object_get_double_member(row, "comm_ms");
  }
  g_assert_cmpfloat_with_epsilon(first1_cap64 - first64_cap64, 4.8389, 0.001);
  g_assert_true(json_object_get_boolean_member(root, "recommended"));
  g_assert_cmpfloat(json_object_get_double_member(root, "recommended_first_bucket_mb"), ==, 64);
}

/* One GPU: no communication, every cap costs the same; the gain is 0, below the 1 % threshold,
 * so the answer is "keep 25".  --min-gain 0 does not change that (a gain of 0 is not > 0).  Under
 * PyTorch 2.3's rules: every cap then keeps the 1 MiB first bucket of the default (from 2.4 a
 * passed cap of 8 MiB or more holds this 8 MiB model in one bucket, and one bucket costs 10 µs less
 * than the default's two: 2 % of this 0.48 ms step). */
static void
test_tune_keep_default(void)
{
  g_autoptr(TempDir) dir = g_dir_make_tmp("ddpsim-sweeps-XXXXXX", NULL);
  g_autofree char *model = write_model(dir, "small", 8, 262144, 20);
  g_autofree char *cluster = write_cluster(dir, "c", 100, 5);
  g_autoptr(JsonParser) parser = json_parser_new();
  g_auto(Run) r = { 0 };
  run(&r, "tune", "--model", model, "--cluster", cluster, "--gpus", "1", "--iterations", "1", "--torch-version", "2.3",
      "--json", NULL);
  JsonObject *root = parse_ok(parser, &r);
  g_assert_cmpfloat(json_object_get_double_member(root, "gain_over_default"), ==, 0);
  g_assert_cmpfloat(json_object_get_double_member(root, "min_gain"), ==, 0.01);
  g_assert_false(json_object_get_boolean_member(root, "recommended"));
  g_assert_cmpfloat(json_object_get_double_member(root, "recommended_bucket_cap_mb"), ==, 25);
  g_auto(Run) text = { 0 };
  run(&text, "tune", "--model", model, "--cluster", cluster, "--gpus", "1", "--iterations", "1", "--min-gain", "0",
      "--torch-version", "2.3", NULL);
  g_assert_cmpint(text.status, ==, 0);
  g_assert_nonnull(strstr(text.out, "recommendation: keep 25"));
  static const char *const bad[][2] = { { "--min-gain", "1.5" }, { "--min-gain", "x" }, { "--first-bucket-mb", "0" },
                                        { "--first-bucket-mb", "1,,2" } };
  for (gsize i = 0; i < G_N_ELEMENTS(bad); i++) {
    g_auto(Run) e = { 0 };
    run(&e, "tune", bad[i][0], bad[i][1], NULL);
    g_assert_cmpint(e.status, ==, 2);
    g_autofree char *prefix = g_strdup_printf("ddpsim tune: %s:", bad[i][0]);
    g_assert_true(g_str_has_prefix(e.err, prefix));
    g_assert_cmpstr(e.out, ==, "");
  }
}

/* Splits one line of RFC 4180 CSV (quoted fields may hold commas and doubled quotes). */
static GPtrArray *
csv_fields(const char *line)
{
  GPtrArray *fields = g_ptr_array_new_with_free_func(g_free);
  GString *field = g_string_new(NULL);
  gboolean quoted = FALSE;
  for (const char *p = line;; p++) {
    if (quoted && *p == '"' && p[1] == '"')
      g_string_append_c(field, '"'), p++;
    else if (*p == '"')
      quoted = !quoted;
    else if ((*p == ',' && !quoted) || *p == '\0') {
      g_ptr_array_add(fields, g_string_free(field, FALSE));
      if (*p == '\0')
        break;
      field = g_string_new(NULL);
    } else
      g_string_append_c(field, *p);
  }
  return fields;
}

/* The public bucket_cap_mb 1 vs 25 comparison (tests/data/bucketcap-public.csv, from PyTorch's
 * benchmarks/distributed/ddp README: torchvision ResNet-50, batch 32/GPU, FP32, DGX-1 V100, 1–16
 * GPUs, PyTorch 1.4): cap 1 is slower than 25 at every GPU count (p75 throughput −0.3 % to −3.8 %).
 * tune on the same setup (the 1-GPU row's 97 ms step as --step-ms, --torch-version 1.4), sweeping
 * exactly these two caps, must not recommend cap 1, and its predicted 1-vs-25 throughput change
 * must have the published sign: that release's Reducer divides each bucket in its own kernel
 * (docs/overheads.md "Per-bucket costs"). */
static void
test_tune_bucketcap_public(void)
{
  g_autofree char *path = g_build_filename(DDP_SRCDIR, "tests", "data", "bucketcap-public.csv", NULL);
  g_autofree char *text = NULL;
  g_assert_true(g_file_get_contents(path, &text, NULL, NULL));
  g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
  guint checked = 0;
  for (guint l = 1; lines[l] && *lines[l]; l++) {
    g_autoptr(GPtrArray) f = csv_fields(lines[l]);
    g_assert_cmpuint(f->len, ==, 9);
    if (!g_str_has_prefix(g_ptr_array_index(f, 1), "torchvision resnet50,") ||
        g_strcmp0(g_ptr_array_index(f, 5), "p75 throughput change vs bucket_cap_mb=25") != 0)
      continue;
    const char *gpus = g_ptr_array_index(f, 2);
    double published = g_ascii_strtod(g_ptr_array_index(f, 6), NULL) / 100;
    g_autoptr(JsonParser) parser = json_parser_new();
    g_auto(Run) r = { 0 };
    run(&r, "tune", "--model", "resnet50", "--cluster", "dgx1-v100", "--gpus", gpus, "--batch", "32", "--precision",
        "fp32", "--step-ms", "97", "--torch-version", "1.4", "--iterations", "5", "--range", "1:25", "--points", "2",
        "--json", NULL);
    JsonObject *root = parse_ok(parser, &r);
    g_assert_false(json_object_get_boolean_member(root, "recommended"));
    g_assert_cmpfloat(json_object_get_double_member(root, "recommended_bucket_cap_mb"), ==, 25);
    JsonArray *rows = json_object_get_array_member(root, "rows");
    g_assert_cmpuint(json_array_get_length(rows), ==, 2);
    double t1 = 0, t25 = 0;
    for (guint i = 0; i < json_array_get_length(rows); i++) {
      JsonObject *row = json_array_get_object_element(rows, i);
      double cap = json_object_get_double_member(row, "bucket_cap_mb");
      if (cap == 1)
        t1 = json_object_get_double_member(row, "iteration_ms");
      if (cap == 25)
        t25 = json_object_get_double_member(row, "iteration_ms");
    }
    g_assert_cmpfloat(t1, >, 0);
    g_assert_cmpfloat(t25, >, 0);
    /* throughput change of cap 1 against 25, as diff.py prints it */
    double predicted = t25 / t1 - 1;
    g_test_message("resnet50 dgx1-v100 %s GPUs: cap 1 vs 25 throughput change published %+.1f %%, predicted %+.2f %%", gpus,
                   100 * published, 100 * predicted);
    g_assert_cmpfloat(predicted, <, 0);
    checked++;
  }
  g_assert_cmpuint(checked, ==, 5);
}

/* solve through the binary: the JSON contract and one-line errors with exit status 2. */
static void
test_solve_cli(void)
{
  g_autoptr(TempDir) dir = g_dir_make_tmp("ddpsim-sweeps-XXXXXX", NULL);
  g_autofree char *model = write_model(dir, "m", 8, 262144, 2000);
  g_autofree char *cluster = write_cluster(dir, "c", 100, 5);
  g_autoptr(JsonParser) parser = json_parser_new();
  g_auto(Run) r = { 0 };
  run(&r, "solve", "--model", model, "--cluster", cluster, "--gpus", "16", "--iterations", "1", "--for", "inter-bandwidth",
      "--target-efficiency", "90%", "--json", NULL);
  JsonObject *root = parse_ok(parser, &r);
  g_assert_cmpstr(json_object_get_string_member(root, "question"), ==, "inter-bandwidth");
  g_assert_cmpstr(json_object_get_string_member(root, "scaling_definition"), ==, "weak");
  g_assert_cmpfloat(json_object_get_double_member(root, "target_efficiency"), ==, 0.9);
  g_assert_cmpstr(json_object_get_string_member(root, "status"), ==, "found");
  JsonObject *answer = json_object_get_object_member(root, "answer");
  JsonObject *below = json_object_get_object_member(root, "failing_neighbour");
  g_assert_cmpfloat(json_object_get_double_member(answer, "efficiency"), >=, 0.9);
  g_assert_cmpfloat(json_object_get_double_member(below, "efficiency"), <, 0.9);
  g_assert_cmpfloat(json_object_get_double_member(answer, "margin"), >=, 0);
  g_assert_cmpfloat(json_object_get_double_member(below, "value"), <, json_object_get_double_member(answer, "value"));
  /* fed back through predict: the printed answer reaches the target */
  g_auto(Run) text = { 0 };
  run(&text, "solve", "--model", model, "--cluster", cluster, "--gpus", "16", "--iterations", "1", "--for", "inter-bandwidth",
      "--target-efficiency", "0.9", NULL);
  g_assert_cmpint(text.status, ==, 0);
  g_assert_nonnull(strstr(text.out, "answer   "));

  static const char *const bad[][3] = {
    { "--for", "bandwidth", "--for:" },
    { "--for", "batch", "--target-efficiency:" },          /* no target */
    { "--target-efficiency", "1.2", "--target-efficiency:" },
    { "--min", "-1", "--min:" },
    { "--max-batch", "8", "--max-batch:" },                 /* without --global-batch */
    { "--global-batch", "0.5", "--global-batch:" },
  };
  for (gsize i = 0; i < G_N_ELEMENTS(bad); i++) {
    g_auto(Run) e = { 0 };
    if (g_str_equal(bad[i][0], "--for"))
      run(&e, "solve", bad[i][0], bad[i][1], NULL);
    else
      run(&e, "solve", "--for", "gpus", bad[i][0], bad[i][1], "--target-efficiency", i == 2 ? "1.2" : "0.9", NULL);
    g_assert_cmpint(e.status, ==, 2);
    g_autofree char *prefix = g_strdup_printf("ddpsim solve: %s", bad[i][2]);
    g_assert_true(g_str_has_prefix(e.err, prefix));
    g_assert_cmpstr(e.out, ==, "");
  }
  /* one node: inter-node bandwidth plays no part (exit 2) */
  g_auto(Run) one = { 0 };
  run(&one, "solve", "--model", model, "--cluster", cluster, "--gpus", "4", "--for", "nics", "--target-efficiency", "0.9", NULL);
  g_assert_cmpint(one.status, ==, 2);
  g_assert_true(g_str_has_prefix(one.err, "ddpsim solve: --for nics:"));
}

static void
test_gpu_list_errors(void)
{
  static const char *const lists[] = { "8,4", "8,...,64", "8,16,...", "0,8", "x" };
  for (gsize i = 0; i < G_N_ELEMENTS(lists); i++) {
    g_auto(Run) r = { 0 };
    run(&r, "scale", "--gpus", lists[i], NULL);
    g_assert_cmpint(r.status, ==, 2);
    g_assert_true(g_str_has_prefix(r.err, "ddpsim scale: --gpus:"));
    g_assert_cmpstr(r.out, ==, "");
  }
}

/* solve --for gpus --deadline-hours through the binary, fed back through predict: the answer
 * trains within the deadline (train_hours from predict's own throughput, the same as solve's),
 * and the failing neighbour, with fewer GPUs, does not. */
static void
test_solve_deadline_cli(void)
{
  g_autoptr(TempDir) dir = g_dir_make_tmp("ddpsim-sweeps-XXXXXX", NULL);
  g_autofree char *model = write_model(dir, "m", 8, 262144, 2000);
  g_autofree char *cluster = write_cluster(dir, "c", 100, 5);
  g_autoptr(JsonParser) parser = json_parser_new();
  g_auto(Run) r = { 0 };
  run(&r, "solve", "--model", model, "--cluster", cluster, "--iterations", "1", "--for", "gpus", "--max", "256",
      "--train-samples", "1e8", "--price-per-gpu-hour", "2", "--deadline-hours", "1", "--json", NULL);
  JsonObject *root = parse_ok(parser, &r);
  g_assert_cmpstr(json_object_get_string_member(root, "objective"), ==, "cheapest-within-deadline");
  g_assert_cmpstr(json_object_get_string_member(root, "status"), ==, "found");
  JsonObject *answer = json_object_get_object_member(root, "answer");
  JsonObject *fewer = json_object_get_object_member(root, "failing_neighbour");
  gint64 gpus = json_object_get_int_member(answer, "gpus");
  g_assert_cmpfloat(json_object_get_double_member(answer, "train_hours"), <=, 1);
  g_assert_cmpfloat(json_object_get_double_member(fewer, "train_hours"), >, 1);
  g_assert_cmpint(json_object_get_int_member(fewer, "gpus"), <, gpus);
  /* predict at the answer: the same throughput, so the same time and cost (docs/cost.md) */
  g_autofree char *n = g_strdup_printf("%" G_GINT64_FORMAT, gpus);
  g_autoptr(JsonParser) p2 = json_parser_new();
  g_auto(Run) pr = { 0 };
  run(&pr, "predict", "--model", model, "--cluster", cluster, "--iterations", "1", "--gpus", n, "--train-samples", "1e8",
      "--price-per-gpu-hour", "2", "--json", NULL);
  JsonObject *pred = parse_ok(p2, &pr);
  g_assert_cmpfloat_with_epsilon(json_object_get_double_member(pred, "train_hours"),
                                 json_object_get_double_member(answer, "train_hours"), 1e-5);
  g_assert_cmpfloat_with_epsilon(json_object_get_double_member(pred, "train_cost"),
                                 json_object_get_double_member(answer, "train_cost"), 0.01);
  g_assert_cmpfloat(json_object_get_double_member(pred, "train_hours"), <=, 1);
}

int
main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_setenv("DDPSIM_DATADIR", DDP_SRCDIR, TRUE);
  g_test_add_func("/sweeps/scale/monotone", test_scale_monotone);
  g_test_add_func("/sweeps/scale/strong", test_scale_strong);
  g_test_add_func("/sweeps/tune/slow-network-large-bucket", test_tune_slow_network);
  g_test_add_func("/sweeps/tune/fast-network-small-bucket", test_tune_fast_network);
  g_test_add_func("/sweeps/scale/gpu-list-errors", test_gpu_list_errors);
  g_test_add_func("/sweeps/tune/first-bucket", test_tune_first_bucket);
  g_test_add_func("/sweeps/tune/keep-default", test_tune_keep_default);
  g_test_add_func("/sweeps/tune/bucketcap-public", test_tune_bucketcap_public);
  g_test_add_func("/sweeps/solve/cli", test_solve_cli);
  g_test_add_func("/sweeps/solve/deadline-cli", test_solve_deadline_cli);
  return g_test_run();
}
