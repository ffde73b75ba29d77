/* Tests for the fit: the weighted least-squares core, recovery of known α/β from a synthetic
 * calibration database (exact data, and data with ±1 % noise: the acceptance is 1 %),
 * the one-GPU latency-only case, AUTO as argmin over measured variants, extrapolation across GPU
 * counts, kernel efficiencies against the H100 spec, kind/precision fallbacks, layer signatures
 * and measured layer times, store/load/open, and the `ddpsim fit` verb's exit codes.
 * Expected values are derived by hand in the comments. */
#define _POSIX_C_SOURCE 200809L
#include "fit.h"
#include "keyfile.h"

#include <glib/gstdio.h>
#include <math.h>
#include <string.h>
#include <sys/wait.h>

static void
assert_rel(double got, double expected, double tolerance)
{
  if (fabs(got - expected) > tolerance * fabs(expected))
    g_error("got %.9g, expected %.9g within %.3g %%", got, expected, 100 * tolerance);
}

/* ---- synthetic databases ------------------------------------------------------------------- */

typedef struct {
  const char *algorithm, *protocol;
  int ranks, nodes;
  double alpha_us, algbw_GBs;
} Variant;

static gint64
add_run(DdpCalibDb *db, const char *gpu_name)
{
  DdpCalibRun run = { 0 };
  run.host = "synthetic";
  run.gpu_name = (char *)gpu_name;
  run.gpus_per_node = 8;
  run.nodes = 1;
  run.ranks = 8;
  run.sm_arch = 90;
  run.sm_count = 132;
  run.gpu_memory_bytes = 85000000000;
  run.program = "test-fit";
  g_autoptr(GError) error = NULL;
  gint64 id = ddp_calibdb_run_begin(db, &run, &error);
  g_assert_no_error(error);
  return id;
}

/* One batch per (variant, size): sizes 8 B … 8 GiB ×2 (31), t = α + S/(1000·algbw) × noise,
 * noise uniform in [1 − @noise, 1 + @noise] from a fixed seed. */
static void
add_allreduce(DdpCalibDb *db, gint64 run, const Variant *v, double noise, GRand *rand)
{
  g_autoptr(GError) error = NULL;
  for (int i = 0; i <= 30; i++) {
    gint64 bytes = (gint64)8 << i;
    g_autofree char *name = g_strdup_printf("allreduce/%s/%s/r%d/n%d/%" G_GINT64_FORMAT, v->algorithm, v->protocol,
                                            v->ranks, v->nodes, bytes);
    g_assert_true(ddp_calibdb_batch_begin(db, run, name, &error));
    double t = v->alpha_us + (v->algbw_GBs > 0 ? (double)bytes / (1000.0 * v->algbw_GBs) : 0);
    t *= 1.0 + noise * (2.0 * g_rand_double(rand) - 1.0);
    DdpCalibAllreducePoint p = { 0 };
    p.algorithm = (char *)v->algorithm;
    p.protocol = (char *)v->protocol;
    p.ranks = v->ranks;
    p.nodes = v->nodes;
    p.bytes = bytes;
    p.in_place = TRUE;
    p.iterations = 20;
    p.time_us = p.min_us = p.max_us = t;
    p.algbw_GBs = (double)bytes / (1000.0 * t);
    p.busbw_GBs = v->ranks > 1 ? p.algbw_GBs * 2 * (v->ranks - 1) / v->ranks : 0;
    g_assert_true(ddp_calibdb_batch_add_allreduce(db, &p, &error));
    g_assert_true(ddp_calibdb_batch_commit(db, NULL, &error));
    g_assert_no_error(error);
  }
}

/* One kernel point: t = overhead + work / rate, work = flops (rate in TFLOP/s) or bytes (GB/s). */
static void
add_kernel(DdpCalibDb *db, gint64 run, const char *kind, const char *op, const char *precision,
           const char *signature, double batch, double flops, double bytes, double time_us)
{
  g_autoptr(GError) error = NULL;
  static int serial;
  g_autofree char *name = g_strdup_printf("kernel/%d", serial++);
  g_assert_true(ddp_calibdb_batch_begin(db, run, name, &error));
  DdpCalibKernelPoint k = { 0 };
  k.probe = g_strcmp0(kind, "copy") == 0 ? "copy" : "gemm";
  k.layer_kind = (char *)kind;
  k.op = (char *)op;
  k.precision = (char *)precision;
  k.signature = (char *)signature;
  k.layer = "layer";
  k.batch_size = batch;
  k.shape = "";
  k.algo = "";
  k.flops = flops;
  k.bytes = bytes;
  k.iterations = 10;
  k.time_us = k.min_us = k.max_us = time_us;
  k.tflops = flops / (time_us * 1e6);
  k.GBs = bytes / (time_us * 1e3);
  g_assert_true(ddp_calibdb_batch_add_kernel(db, &k, &error));
  g_assert_true(ddp_calibdb_batch_commit(db, NULL, &error));
  g_assert_no_error(error);
}

/* Four variants on one 8-GPU node, constants in the range NCCL's model gives for H100
 * (docs/model.md §2.3 worked example: Ring LL 15 µs, Ring Simple 56 µs, Tree Simple 64.4 µs). */
static const Variant node8[] = {
  { "Ring", "LL", 8, 1, 15.0, 60.0 },
  { "Ring", "LL128", 8, 1, 40.6, 150.0 },
  { "Ring", "Simple", 8, 1, 56.0, 180.0 },
  { "Tree", "Simple", 8, 1, 64.4, 170.0 },
};

static DdpCalibDb *
synthetic_db(const char *path, double noise)
{
  g_autoptr(GError) error = NULL;
  DdpCalibDb *db = ddp_calibdb_open(path, DDP_CALIBDB_WRITE, &error);
  g_assert_no_error(error);
  gint64 run = add_run(db, "NVIDIA H100 80GB HBM3");
  g_autoptr(GRand) rand = g_rand_new_with_seed(42);
  for (gsize i = 0; i < G_N_ELEMENTS(node8); i++)
    add_allreduce(db, run, &node8[i], noise, rand);
  return db;
}

/* ---- the least-squares core ---------------------------------------------------------------- */

static void
test_line_exact(void)
{
  /* t = 3 + 0.5 x exactly */
  double x[] = { 0, 1, 10, 100, 1000 }, t[5];
  for (int i = 0; i < 5; i++)
    t[i] = 3 + 0.5 * x[i];
  double a, b;
  g_assert_true(ddp_fit_line(x, t, 5, FALSE, &a, &b));
  g_assert_cmpfloat_with_epsilon(a, 3, 1e-12);
  g_assert_cmpfloat_with_epsilon(b, 0.5, 1e-12);
}

static void
test_line_constraints(void)
{
  double a, b;
  /* t = 2x − 1 at x = 1, 2, 3 → unconstrained a = −1 < 0: refit through the origin.
   * Weights 1/t² = 1, 1/9, 1/25: b = Σw x t / Σw x² = (1 + 2/3 + 3/5) / (1 + 4/9 + 9/25)
   * = (34/15) / (406/225) = 34·15/406 = 1.25616… */
  double x1[] = { 1, 2, 3 }, t1[] = { 1, 3, 5 };
  g_assert_true(ddp_fit_line(x1, t1, 3, FALSE, &a, &b));
  g_assert_cmpfloat(a, ==, 0);
  g_assert_cmpfloat_with_epsilon(b, 34.0 * 15.0 / 406.0, 1e-12);
  /* time falling with size: flat (latency-only) when allowed; a = weighted mean of t
   * = Σ(1/t) / Σ(1/t²) = (1/4 + 1/2) / (1/16 + 1/4) = 0.75 / 0.3125 = 2.4 */
  double x2[] = { 1, 2 }, t2[] = { 4, 2 };
  g_assert_true(ddp_fit_line(x2, t2, 2, TRUE, &a, &b));
  g_assert_cmpfloat(b, ==, 0);
  g_assert_cmpfloat_with_epsilon(a, 2.4, 1e-12);
  /* one point: no spread; not flat → through the origin, b = t/x */
  double x3[] = { 10 }, t3[] = { 5 };
  g_assert_true(ddp_fit_line(x3, t3, 1, FALSE, &a, &b));
  g_assert_cmpfloat_with_epsilon(b, 0.5, 1e-15);
  /* nothing usable */
  double x4[] = { 1 }, t4[] = { 0 };
  g_assert_false(ddp_fit_line(x4, t4, 1, TRUE, &a, &b));
}

/* ---- AllReduce ----------------------------------------------------------------------------- */

static void
check_recovery(double noise, double tolerance)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(DdpCalibDb) db = synthetic_db(":memory:", noise);
  g_autoptr(DdpFit) fit = ddp_fit_from_db(db, NULL, 0, NULL, &error);
  g_assert_no_error(error);
  guint n;
  const DdpCalibAllreduceFit *rows = ddp_fit_allreduce_rows(fit, &n);
  g_assert_cmpuint(n, ==, G_N_ELEMENTS(node8)); /* sorted by algorithm, protocol: same order as node8 */
  for (guint i = 0; i < n; i++) {
    g_assert_cmpstr(rows[i].algorithm, ==, node8[i].algorithm);
    g_assert_cmpstr(rows[i].protocol, ==, node8[i].protocol);
    g_assert_cmpint(rows[i].n_points, ==, 31);
    g_assert_cmpint(rows[i].min_bytes, ==, 8);
    g_assert_cmpint(rows[i].max_bytes, ==, (gint64)8 << 30);
    assert_rel(rows[i].alpha_us, node8[i].alpha_us, tolerance);
    assert_rel(rows[i].algbw_GBs, node8[i].algbw_GBs, tolerance);
    /* busbw = algbw · 2·7/8 */
    assert_rel(rows[i].busbw_GBs, rows[i].algbw_GBs * 1.75, 1e-12);
    g_assert_cmpfloat(rows[i].max_rel, <=, noise * 1.1 + 1e-9);
    DdpFitAlphaBeta p;
    g_assert_true(ddp_fit_allreduce_params(fit, node8[i].algorithm, node8[i].protocol, 8, 1, &p));
    g_assert_true(p.exact);
    g_assert_cmpfloat(p.alpha_us, ==, rows[i].alpha_us);
  }
  guint n_res;
  ddp_fit_residual_rows(fit, &n_res);
  g_assert_cmpuint(n_res, ==, 31 * G_N_ELEMENTS(node8));
}

static void
test_allreduce_exact(void)
{
  check_recovery(0, 1e-9);
}

static void
test_allreduce_noisy(void)
{
  /* The acceptance criterion: ±1 % noise on every point, α and β back within 1 %. */
  check_recovery(0.01, 0.01);
}

static void
test_allreduce_one_gpu(void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(DdpCalibDb) db = ddp_calibdb_open(":memory:", DDP_CALIBDB_WRITE, &error);
  gint64 run = add_run(db, "NVIDIA H100 80GB HBM3");
  g_autoptr(GRand) rand = g_rand_new_with_seed(1);
  /* one rank: a copy-free launch, 6 µs whatever the size */
  Variant one = { "auto", "auto", 1, 1, 6.0, 0 };
  add_allreduce(db, run, &one, 0, rand);
  g_autoptr(DdpFit) fit = ddp_fit_from_db(db, NULL, 0, NULL, &error);
  g_assert_no_error(error);
  guint n;
  const DdpCalibAllreduceFit *rows = ddp_fit_allreduce_rows(fit, &n);
  g_assert_cmpuint(n, ==, 1);
  g_assert_cmpfloat_with_epsilon(rows[0].alpha_us, 6.0, 1e-9);
  g_assert_cmpfloat(rows[0].algbw_GBs, ==, 0);
  g_assert_cmpfloat(rows[0].busbw_GBs, ==, 0);
  /* nothing answers a multi-GPU question */
  DdpFitAllreduceCost c;
  g_assert_false(ddp_fit_allreduce_cost(fit, 8, 1, 1 << 20, DDP_ALGO_AUTO, DDP_PROTO_AUTO, &c));
  DdpFitAlphaBeta p;
  g_assert_false(ddp_fit_allreduce_params(fit, "auto", "auto", 2, 1, &p));
}

static void
test_allreduce_argmin(void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(DdpCalibDb) db = synthetic_db(":memory:", 0);
  g_autoptr(DdpFit) fit = ddp_fit_from_db(db, NULL, 0, NULL, &error);
  DdpFitAllreduceCost c;
  /* 8 B: Ring LL wins, 15 µs + 8/(1000·60) ≈ 15.0001 µs */
  g_assert_true(ddp_fit_allreduce_cost(fit, 8, 1, 8, DDP_ALGO_AUTO, DDP_PROTO_AUTO, &c));
  g_assert_cmpstr(c.algorithm, ==, "Ring");
  g_assert_cmpstr(c.protocol, ==, "LL");
  g_assert_cmpint(c.algo, ==, DDP_ALGO_RING);
  g_assert_cmpint(c.proto, ==, DDP_PROTO_LL);
  assert_rel(c.time_us, 15.0 + 8 / 60e3, 1e-9);
  /* 1 GiB: Ring Simple, 56 + 2^30/(180e3) = 56 + 5965.23 = 6021.23 µs; LL128 would be 40.6 +
   * 7158.28, Tree Simple 64.4 + 6316.13 */
  g_assert_true(ddp_fit_allreduce_cost(fit, 8, 1, 1 << 30, DDP_ALGO_AUTO, DDP_PROTO_AUTO, &c));
  g_assert_cmpstr(c.algorithm, ==, "Ring");
  g_assert_cmpstr(c.protocol, ==, "Simple");
  assert_rel(c.time_us, 56.0 + 1073741824.0 / 180e3, 1e-9);
  assert_rel(c.algbw_GBs, 1073741824.0 / (1000 * c.time_us), 1e-12);
  assert_rel(c.busbw_GBs, c.algbw_GBs * 1.75, 1e-12);
  /* 64 KiB: LL 15 + 65536/60e3 = 16.09; LL128 40.6 + 0.44 = 41.04; → LL */
  g_assert_true(ddp_fit_allreduce_cost(fit, 8, 1, 65536, DDP_ALGO_AUTO, DDP_PROTO_AUTO, &c));
  g_assert_cmpstr(c.protocol, ==, "LL");
  /* forcing Tree leaves only Tree/Simple */
  g_assert_true(ddp_fit_allreduce_cost(fit, 8, 1, 8, DDP_ALGO_TREE, DDP_PROTO_AUTO, &c));
  g_assert_cmpstr(c.algorithm, ==, "Tree");
  assert_rel(c.time_us, 64.4 + 8 / 170e3, 1e-9);
  /* forced and unmeasured */
  g_assert_false(ddp_fit_allreduce_cost(fit, 8, 1, 8, DDP_ALGO_TREE, DDP_PROTO_LL, &c));
  /* one node measured: multi-node questions are not answered */
  g_assert_false(ddp_fit_allreduce_cost(fit, 16, 2, 8, DDP_ALGO_AUTO, DDP_PROTO_AUTO, &c));
  g_assert_false(ddp_fit_allreduce_cost(fit, 1, 1, 8, DDP_ALGO_AUTO, DDP_PROTO_AUTO, &c));
  g_assert_cmpstr(ddp_fit_algorithm_name(DDP_ALGO_TREE), ==, "Tree");
  g_assert_cmpstr(ddp_fit_protocol_name(DDP_PROTO_LL128), ==, "LL128");
  g_assert_cmpstr(ddp_fit_algorithm_name(DDP_ALGO_NVLS_TREE), ==, "NVLSTree");
  g_assert_null(ddp_fit_algorithm_name(DDP_ALGO_AUTO));
}

static void
test_allreduce_extrapolate(void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(DdpCalibDb) db = ddp_calibdb_open(":memory:", DDP_CALIBDB_WRITE, &error);
  gint64 run = add_run(db, "NVIDIA H100 80GB HBM3");
  g_autoptr(GRand) rand = g_rand_new_with_seed(1);
  /* Ring Simple on one node as NCCL's model has it: α(n) = 8.4 + 3.4·2(n−1), busbw 200 GB/s →
   * algbw(n) = 200·n/(2(n−1)):  n=2: α 15.2, algbw 200;  n=4: α 28.8, algbw 133.33;
   * n=8: α 56.0, algbw 114.29 */
  for (int n = 2; n <= 8; n *= 2) {
    Variant v = { "Ring", "Simple", n, 1, 8.4 + 3.4 * 2 * (n - 1), 200.0 * n / (2.0 * (n - 1)) };
    add_allreduce(db, run, &v, 0, rand);
  }
  /* Tree Simple measured at 8 ranks only: α 64.4, algbw 170 (busbw 297.5) */
  Variant tree = { "Tree", "Simple", 8, 1, 64.4, 170 };
  add_allreduce(db, run, &tree, 0, rand);
  g_autoptr(DdpFit) fit = ddp_fit_from_db(db, NULL, 0, NULL, &error);
  g_assert_no_error(error);

  DdpFitAlphaBeta p;
  /* 6 ranks, hops 10: nearest in log-hops are n=8 (14 hops, |ln 10/14| = 0.336) and n=4
   * (6 hops, 0.511); line through (6, 28.8) and (14, 56.0): slope 3.4 → α = 56 − 3.4·4 = 42.4.
   * busbw from n=8, 200 → algbw(6) = 200·6/10 = 120 */
  g_assert_true(ddp_fit_allreduce_params(fit, "Ring", "Simple", 6, 1, &p));
  g_assert_false(p.exact);
  g_assert_cmpint(p.from_ranks, ==, 8);
  assert_rel(p.alpha_us, 42.4, 1e-9);
  assert_rel(p.algbw_GBs, 120, 1e-9);
  assert_rel(p.busbw_GBs, 200, 1e-9);
  /* 16 ranks on one node (hops 30): line through n=8 (14, 56) and n=4 (6, 28.8) → 56 + 3.4·16 = 110.4 */
  g_assert_true(ddp_fit_allreduce_params(fit, "Ring", "Simple", 16, 1, &p));
  assert_rel(p.alpha_us, 110.4, 1e-9);
  assert_rel(p.algbw_GBs, 200.0 * 16 / 30, 1e-9);
  /* Tree at 4 ranks from one measurement: hops 2(4−1) = 6 vs 14; base 8.4 (tuning.cc Tree Simple):
   * α = 8.4 + (64.4 − 8.4)·6/14 = 32.4; algbw = 297.5·4/6 = 198.33 */
  g_assert_true(ddp_fit_allreduce_params(fit, "Tree", "Simple", 4, 1, &p));
  assert_rel(p.alpha_us, 32.4, 1e-9);
  assert_rel(p.algbw_GBs, 297.5 * 4 / 6, 1e-9);
  /* a regime that was not measured */
  g_assert_false(ddp_fit_allreduce_params(fit, "Ring", "Simple", 16, 2, &p));
  g_assert_false(ddp_fit_allreduce_params(fit, "Ring", "LL", 8, 1, &p));
}

/* A curve with a protocol switch the line cannot follow: 8 ranks on one node, "auto", measured at
 * 1, 2, 4 MiB as 20, 100, 110 µs (a jump, then flat).  At a measured size the cost is the
 * measurement; at 3 MiB the midpoint of the [2, 4] MiB segment, 105 µs; above 4 MiB the last
 * segment's slope, 10 µs per 2 MiB: 8 MiB → 110 + 10·2 = 130 µs.  At 4 ranks (not measured) the
 * fitted line is extrapolated instead (from_curve FALSE).  The curve survives store and load. */
static void
test_allreduce_curve(void)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *dir = g_dir_make_tmp("test-fit-curve-XXXXXX", NULL);
  g_autofree char *path = g_build_filename(dir, "calib.db", NULL);
  gint64 fit_id;
  {
    g_autoptr(DdpCalibDb) db = ddp_calibdb_open(path, DDP_CALIBDB_WRITE, &error);
    gint64 run = add_run(db, "NVIDIA H100 80GB HBM3");
    const double t[] = { 20, 100, 110 };
    g_assert_true(ddp_calibdb_batch_begin(db, run, "curve", &error));
    for (int i = 0; i < 3; i++) {
      DdpCalibAllreducePoint p = { 0 };
      p.algorithm = "auto";
      p.protocol = "auto";
      p.ranks = 8;
      p.nodes = 1;
      p.bytes = (gint64)1048576 << i;
      p.in_place = TRUE;
      p.time_us = p.min_us = p.max_us = t[i];
      g_assert_true(ddp_calibdb_batch_add_allreduce(db, &p, &error));
    }
    g_assert_true(ddp_calibdb_batch_commit(db, NULL, &error));
    g_autoptr(DdpFit) fit = ddp_fit_from_db(db, NULL, 0, NULL, &error);
    g_assert_no_error(error);
    fit_id = ddp_fit_store(fit, db, &error);
    g_assert_no_error(error);
    g_assert_true(ddp_calibdb_check(db, &error));
  }
  g_autoptr(DdpFit) fit = ddp_fit_open(path, &error);
  g_assert_no_error(error);
  g_assert_cmpint(ddp_fit_header(fit)->id, ==, fit_id);
  DdpFitAllreduceCost c;
  static const struct { guint64 bytes; double us; } cases[] = {
    { 1048576, 20 }, { 2097152, 100 }, { 3145728, 105 }, { 4194304, 110 }, { 8388608, 130 },
  };
  for (gsize i = 0; i < G_N_ELEMENTS(cases); i++) {
    g_assert_true(ddp_fit_allreduce_cost(fit, 8, 1, cases[i].bytes, DDP_ALGO_AUTO, DDP_PROTO_AUTO, &c));
    g_assert_true(c.from_curve);
    g_assert_cmpstr(c.algorithm, ==, "auto");
    assert_rel(c.time_us, cases[i].us, 1e-12);
  }
  g_assert_true(ddp_fit_allreduce_cost(fit, 4, 1, 2097152, DDP_ALGO_AUTO, DDP_PROTO_AUTO, &c));
  g_assert_false(c.from_curve);
  assert_rel(c.time_us, c.params.alpha_us + 2097152.0 / (1000.0 * c.params.algbw_GBs), 1e-12);
  static const char *const suffixes[] = { "", "-wal", "-shm" };
  for (gsize i = 0; i < G_N_ELEMENTS(suffixes); i++) {
    g_autofree char *f = g_strconcat(path, suffixes[i], NULL);
    g_remove(f);
  }
  g_rmdir(dir);
}

/* --calibration on another cluster: one line per difference (issue 12 item 5). */
static void
test_coverage_warnings(void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(DdpCalibDb) db = ddp_calibdb_open(":memory:", DDP_CALIBDB_WRITE, &error);
  gint64 run = add_run(db, "NVIDIA H100 80GB HBM3");
  g_autoptr(GRand) rand = g_rand_new_with_seed(3);
  Variant four = { "Ring", "Simple", 4, 1, 30, 150 }, eight = { "Ring", "Simple", 8, 1, 56, 180 };
  add_allreduce(db, run, &four, 0, rand);
  add_allreduce(db, run, &eight, 0, rand);
  g_autoptr(DdpFit) fit = ddp_fit_from_db(db, NULL, 0, NULL, &error);
  g_assert_no_error(error);
  DdpGpuSpec h100, a100;
  g_assert_true(ddp_gpu_lookup("h100", &h100, NULL));
  g_assert_true(ddp_gpu_lookup("a100", &a100, NULL));
  /* the same GPU: silent at any count (how far past the measured counts is tierfit's report) */
  g_autoptr(GPtrArray) none = ddp_fit_coverage_warnings(fit, &h100, 8, TRUE);
  g_assert_cmpuint(none->len, ==, 0);
  g_autoptr(GPtrArray) many = ddp_fit_coverage_warnings(fit, &h100, 1024, TRUE);
  g_assert_cmpuint(many->len, ==, 0);
  /* one GPU needs no AllReduce: nothing to say about counts */
  g_autoptr(GPtrArray) one = ddp_fit_coverage_warnings(fit, &h100, 1, TRUE);
  g_assert_cmpuint(one->len, ==, 0);
  /* another GPU model: one line */
  g_autoptr(GPtrArray) two = ddp_fit_coverage_warnings(fit, &a100, 16, TRUE);
  g_assert_cmpuint(two->len, ==, 1);
  g_assert_cmpstr(g_ptr_array_index(two, 0), ==, "warning: calibration measured NVIDIA H100 80GB HBM3 (h100) but the "
                                                 "cluster's GPU is A100-SXM4-80GB: its measured times are used unchanged");
  /* a GPU ddpsim cannot identify, and no multi-GPU AllReduce */
  g_autoptr(DdpCalibDb) db2 = ddp_calibdb_open(":memory:", DDP_CALIBDB_WRITE, &error);
  gint64 run2 = add_run(db2, "Some Future GPU");
  Variant solo = { "auto", "auto", 1, 1, 6, 0 };
  add_allreduce(db2, run2, &solo, 0, rand);
  g_autoptr(DdpFit) odd = ddp_fit_from_db(db2, NULL, 0, NULL, &error);
  g_assert_no_error(error);
  g_autoptr(GPtrArray) lines = ddp_fit_coverage_warnings(odd, &h100, 8, TRUE);
  g_assert_cmpuint(lines->len, ==, 2);
  /* a question about another collective (collective --op all_gather): no AllReduce line */
  g_autoptr(GPtrArray) other_op = ddp_fit_coverage_warnings(odd, &h100, 8, FALSE);
  g_assert_cmpuint(other_op->len, ==, 1);
  g_assert_true(g_str_has_prefix(g_ptr_array_index(lines, 0), "warning: calibration measured Some Future GPU, which "
                                                              "ddpsim cannot match"));
  g_assert_cmpstr(g_ptr_array_index(lines, 1), ==, "warning: the calibration holds no multi-GPU AllReduce "
                                                   "measurement: AllReduce times come from the built-in model");
}

/* ---- kernels and layers -------------------------------------------------------------------- */

static const char tiny_model[] =
  "[model]\n"
  "name = tiny\n"
  "[layer fc]\n"
  "kind = linear\n"
  "forward_flops = 4194304\n"
  "backward_flops = 8388608\n"
  "forward_bytes = 16384\n"
  "params = fc.weight:1024,1024;fc.bias:1024\n"
  "[layer ln]\n"
  "kind = norm\n"
  "forward_flops = 5120\n"
  "backward_flops = 10240\n"
  "forward_bytes = 8192\n"
  "params = ln.weight:1024;ln.bias:1024\n";

static DdpModel *
load_tiny(void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(DdpKeyFile) kf = ddp_keyfile_load_data("tiny.model", tiny_model, &error);
  g_assert_no_error(error);
  DdpModel *model = ddp_model_from_keyfile(kf, &error);
  g_assert_no_error(error);
  return model;
}

static void
test_signature(void)
{
  g_autoptr(DdpModel) model = load_tiny();
  g_autofree char *fc = ddp_fit_layer_signature(model, 0);
  g_autofree char *ln = ddp_fit_layer_signature(model, 1);
  /* kind : shapes of weight, bias : forward FLOPs : backward FLOPs : forward bytes (%.6g) */
  g_assert_cmpstr(fc, ==, "linear:1024x1024,1024:4.1943e+06:8.38861e+06:16384");
  g_assert_cmpstr(ln, ==, "norm:1024,1024:5120:10240:8192");
}

/* Kernel set on "NVIDIA H100 80GB HBM3" (→ built-in h100: FP16 989.4 TFLOP/s, HBM 3350 GB/s):
 *  linear fp16: t = 5 µs + flops / 600 TFLOP/s   → efficiency 600/989.4 = 0.60643
 *  norm fp32:   t = 3 µs + bytes / 2500 GB/s     → efficiency 2500/3350 = 0.74627
 *  copy:        t = 2 µs + bytes / 3000 GB/s     → efficiency 0.89552
 * and layer times of the tiny model's fc layer at batch 8 and 32. */
static DdpCalibDb *
kernel_db(const char *path, const char *gpu_name)
{
  g_autoptr(GError) error = NULL;
  DdpCalibDb *db = ddp_calibdb_open(path, DDP_CALIBDB_WRITE, &error);
  g_assert_no_error(error);
  gint64 run = add_run(db, gpu_name);
  for (int i = 0; i < 8; i++) {
    double flops = 1e9 * (1 << (2 * i)); /* 1 GFLOP … 16 TFLOP */
    add_kernel(db, run, "linear", "dX", "fp16", "", 0, flops, 0, 5 + flops / 600e6);
    double bytes = 1e5 * (1 << (2 * i));
    add_kernel(db, run, "norm", "bwd", "fp32", "", 0, 0, bytes, 3 + bytes / 2500e3);
    add_kernel(db, run, "copy", "copy", "any", "", 0, 0, bytes, 2 + bytes / 3000e3);
  }
  const char *sig = "linear:1024x1024,1024:4.1943e+06:8.38861e+06:16384";
  /* batch 8: fwd 10, dX 11, dW 12 → backward 23;  batch 32: fwd 30, dX 31, dW 33 → backward 64.
   * Their FLOPs are put on the linear line, (t − 5 µs)·600 TFLOP/s, so that it stays exact. */
  const struct { double batch; const char *op; double t; } layer[] = {
    { 8, "fwd", 10 }, { 8, "dX", 11 }, { 8, "dW", 12 }, { 32, "fwd", 30 }, { 32, "dX", 31 }, { 32, "dW", 33 },
  };
  for (gsize i = 0; i < G_N_ELEMENTS(layer); i++)
    add_kernel(db, run, "linear", layer[i].op, "fp16", sig, layer[i].batch, (layer[i].t - 5) * 600e6, 0, layer[i].t);
  /* norm at fp32 only: bwd 7 at batch 8 (bytes on the norm line), no forward measured */
  add_kernel(db, run, "norm", "bwd", "fp32", "norm:1024,1024:5120:10240:8192", 8, 0, (7 - 3) * 2500e3, 7);
  return db;
}

static void
test_kernel_efficiency(void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(DdpCalibDb) db = kernel_db(":memory:", "NVIDIA H100 80GB HBM3");
  g_autoptr(DdpFit) fit = ddp_fit_from_db(db, NULL, 0, NULL, &error);
  g_assert_no_error(error);
  g_assert_cmpstr(ddp_fit_header(fit)->gpu_spec, ==, "h100");
  DdpFitEfficiency e;
  g_assert_true(ddp_fit_efficiency(fit, DDP_LAYER_LINEAR, DDP_PRECISION_FP16, &e));
  g_assert_true(e.flops_basis);
  assert_rel(e.rate, 600, 1e-9);
  assert_rel(e.efficiency, 600 / 989.4, 1e-9);
  assert_rel(e.overhead_us, 5, 1e-9);
  g_assert_cmpint(e.n_points, ==, 8 + 6);
  g_assert_true(ddp_fit_efficiency(fit, DDP_LAYER_NORM, DDP_PRECISION_FP32, &e));
  g_assert_false(e.flops_basis);
  g_assert_cmpstr(e.measured_as, ==, "norm");
  assert_rel(e.rate, 2500, 1e-9);
  assert_rel(e.efficiency, 2500.0 / 3350, 1e-9);
  g_assert_true(ddp_fit_memory(fit, &e));
  assert_rel(e.rate, 3000, 1e-9);
  assert_rel(e.efficiency, 3000.0 / 3350.0, 1e-9);
  assert_rel(e.overhead_us, 2, 1e-9);
  g_assert_cmpstr(e.measured_as, ==, "copy");
}

static void
test_kernel_recovery(void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(DdpCalibDb) db = ddp_calibdb_open(":memory:", DDP_CALIBDB_WRITE, &error);
  gint64 run = add_run(db, "NVIDIA H100 80GB HBM3");
  g_autoptr(GRand) rand = g_rand_new_with_seed(7);
  for (int i = 0; i < 12; i++) {
    double flops = 1e8 * pow(2, i * 1.5);
    double noise = 1 + 0.01 * (2 * g_rand_double(rand) - 1);
    add_kernel(db, run, "linear", "dW", "fp16", "", 0, flops, 0, (5 + flops / 600e6) * noise);
    add_kernel(db, run, "conv", "bwd-data", "tf32", "", 0, flops, 0, (8 + flops / 250e6) * noise);
    double bytes = 1e5 * pow(2, i * 1.5);
    add_kernel(db, run, "norm", "bwd", "fp32", "", 0, 0, bytes, (3 + bytes / 2500e3) * noise);
    add_kernel(db, run, "elementwise", "bwd", "fp16", "", 0, 0, bytes, (2.5 + bytes / 2800e3) * noise);
  }
  g_autoptr(DdpFit) fit = ddp_fit_from_db(db, NULL, 0, NULL, &error);
  g_assert_no_error(error);
  DdpFitEfficiency e;
  g_assert_true(ddp_fit_efficiency(fit, DDP_LAYER_LINEAR, DDP_PRECISION_FP16, &e));
  g_assert_true(e.flops_basis);
  assert_rel(e.rate, 600, 0.01);
  assert_rel(e.efficiency, 600 / 989.4, 0.01);
  assert_rel(e.overhead_us, 5, 0.01);
  /* bf16 falls back to fp16 for matmul kinds (same tensor-core peak) */
  g_assert_true(ddp_fit_efficiency(fit, DDP_LAYER_LINEAR, DDP_PRECISION_BF16, &e));
  g_assert_cmpstr(e.measured_precision, ==, "fp16");
  /* attention → linear */
  g_assert_true(ddp_fit_efficiency(fit, DDP_LAYER_ATTENTION, DDP_PRECISION_FP16, &e));
  g_assert_cmpstr(e.measured_as, ==, "linear");
  /* linear tf32 was not measured, conv tf32 was: linear → conv */
  g_assert_true(ddp_fit_efficiency(fit, DDP_LAYER_LINEAR, DDP_PRECISION_TF32, &e));
  g_assert_cmpstr(e.measured_as, ==, "conv");
  assert_rel(e.efficiency, 250 / 494.7, 0.01);
  /* but never across fp32 / tf32 */
  g_assert_false(ddp_fit_efficiency(fit, DDP_LAYER_LINEAR, DDP_PRECISION_FP32, &e));
  /* norm tf32 → norm fp32 */
  g_assert_true(ddp_fit_efficiency(fit, DDP_LAYER_NORM, DDP_PRECISION_TF32, &e));
  g_assert_cmpstr(e.measured_as, ==, "norm");
  g_assert_cmpstr(e.measured_precision, ==, "fp32");
  assert_rel(e.efficiency, 2500.0 / 3350, 0.01);
  /* pool → elementwise (fp16 measured) */
  g_assert_true(ddp_fit_efficiency(fit, DDP_LAYER_POOL, DDP_PRECISION_FP16, &e));
  g_assert_cmpstr(e.measured_as, ==, "elementwise");
  assert_rel(e.rate, 2800, 0.01);
  /* pool fp32 → elementwise fp32 missing → copy missing → FALSE */
  g_assert_false(ddp_fit_efficiency(fit, DDP_LAYER_POOL, DDP_PRECISION_FP32, &e));
  g_assert_false(ddp_fit_memory(fit, &e));

  DdpComputeOptions o;
  ddp_compute_options_init(&o);
  double fp32_before = o.matmul_efficiency[DDP_PRECISION_FP32];
  double memory_before = o.memory_efficiency;
  ddp_fit_apply_compute_options(fit, &o);
  assert_rel(o.matmul_efficiency[DDP_PRECISION_FP16], 600 / 989.4, 0.01);
  assert_rel(o.matmul_efficiency[DDP_PRECISION_BF16], 600 / 989.4, 0.01);
  assert_rel(o.matmul_efficiency[DDP_PRECISION_TF32], 250 / 494.7, 0.01); /* via conv */
  g_assert_cmpfloat(o.matmul_efficiency[DDP_PRECISION_FP32], ==, fp32_before);
  g_assert_cmpfloat(o.memory_efficiency, ==, memory_before); /* no copy, no elementwise fp32 */
}

static void
test_kernel_unknown_gpu(void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(DdpCalibDb) db = kernel_db(":memory:", "NVIDIA H100 PCIe");
  g_autoptr(DdpFit) fit = ddp_fit_from_db(db, NULL, 0, NULL, &error);
  g_assert_no_error(error);
  g_assert_cmpstr(ddp_fit_header(fit)->gpu_spec, ==, "");
  g_assert_false(ddp_fit_gpu_spec(fit, NULL));
  DdpFitEfficiency e;
  g_assert_true(ddp_fit_memory(fit, &e));
  g_assert_true(isnan(e.efficiency));
  assert_rel(e.rate, 3000, 1e-9);
  DdpComputeOptions o, before;
  memset(&o, 0, sizeof o);   /* the padding too: the comparison below is byte for byte */
  ddp_compute_options_init(&o);
  memcpy(&before, &o, sizeof o);
  ddp_fit_apply_compute_options(fit, &o);
  g_assert_cmpmem(&o, sizeof o, &before, sizeof before);
  /* naming the spec by hand */
  g_autoptr(DdpFit) named = ddp_fit_from_db(db, NULL, 0, "h100", &error);
  g_assert_no_error(error);
  g_assert_true(ddp_fit_memory(named, &e));
  assert_rel(e.efficiency, 3000.0 / 3350, 1e-9);
  g_assert_null(ddp_fit_from_db(db, NULL, 0, "h900", &error));
  g_assert_error(error, DDP_FIT_ERROR, DDP_FIT_ERROR_UNKNOWN_GPU);
}

static void
test_guess_gpu(void)
{
  g_assert_cmpstr(ddp_fit_guess_gpu("NVIDIA H100 80GB HBM3", 85e9), ==, "h100");
  g_assert_cmpstr(ddp_fit_guess_gpu("NVIDIA H200", 150e9), ==, "h200");
  g_assert_cmpstr(ddp_fit_guess_gpu("NVIDIA A100-SXM4-40GB", 42e9), ==, "a100-40gb");
  g_assert_cmpstr(ddp_fit_guess_gpu("NVIDIA A100-SXM4-80GB", 85e9), ==, "a100");
  g_assert_cmpstr(ddp_fit_guess_gpu("Tesla V100-SXM2-32GB", 34e9), ==, "v100");
  g_assert_cmpstr(ddp_fit_guess_gpu("NVIDIA B200", 191e9), ==, "b200");
  g_assert_null(ddp_fit_guess_gpu("NVIDIA H100 PCIe", 85e9));
  g_assert_null(ddp_fit_guess_gpu("NVIDIA H100 NVL", 100e9));
  g_assert_null(ddp_fit_guess_gpu("NVIDIA GeForce RTX 4090", 24e9));
}

static void
test_layer_time(void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(DdpCalibDb) db = kernel_db(":memory:", "NVIDIA H100 80GB HBM3");
  g_autoptr(DdpFit) fit = ddp_fit_from_db(db, NULL, 0, NULL, &error);
  g_autoptr(DdpModel) model = load_tiny();
  g_autofree char *fc = ddp_fit_layer_signature(model, 0);
  g_autofree char *ln = ddp_fit_layer_signature(model, 1);
  double f, b;
  /* exact at 8: fwd 10, bwd 11 + 12 = 23 */
  g_assert_true(ddp_fit_layer_time(fit, fc, DDP_PRECISION_FP16, 8, &f, &b));
  g_assert_cmpfloat_with_epsilon(f, 10, 1e-12);
  g_assert_cmpfloat_with_epsilon(b, 23, 1e-12);
  /* 16: a third of the way from 8 to 32 → fwd 10 + 20/3, bwd 23 + 41/3 */
  g_assert_true(ddp_fit_layer_time(fit, fc, DDP_PRECISION_FP16, 16, &f, &b));
  g_assert_cmpfloat_with_epsilon(f, 10 + 20.0 / 3, 1e-12);
  g_assert_cmpfloat_with_epsilon(b, 23 + 41.0 / 3, 1e-12);
  /* 64: proportional from 32 → bwd 64·2 = 128;  4: proportional from 8 → bwd 11.5 */
  g_assert_true(ddp_fit_layer_time(fit, fc, DDP_PRECISION_FP16, 64, NULL, &b));
  g_assert_cmpfloat_with_epsilon(b, 128, 1e-12);
  g_assert_true(ddp_fit_layer_time(fit, fc, DDP_PRECISION_FP16, 4, NULL, &b));
  g_assert_cmpfloat_with_epsilon(b, 11.5, 1e-12);
  /* other precisions of a matmul kind are not substituted */
  g_assert_false(ddp_fit_layer_time(fit, fc, DDP_PRECISION_BF16, 8, &f, &b));
  /* norm: fp32 measured, tf32 reads it; forward absent → −1 */
  g_assert_true(ddp_fit_layer_time(fit, ln, DDP_PRECISION_TF32, 8, &f, &b));
  g_assert_cmpfloat(f, <, 0);
  g_assert_cmpfloat_with_epsilon(b, 7, 1e-12);
  g_assert_false(ddp_fit_layer_time(fit, "linear:1x1:1:1", DDP_PRECISION_FP16, 8, &f, &b));
}

/* ---- store, load, open --------------------------------------------------------------------- */

typedef struct {
  char *dir, *path;
} Tmp;

static void
tmp_setup(Tmp *t, G_GNUC_UNUSED gconstpointer data)
{
  t->dir = g_dir_make_tmp("test-fit-XXXXXX", NULL);
  t->path = g_build_filename(t->dir, "calib.db", NULL);
}

static void
tmp_teardown(Tmp *t, G_GNUC_UNUSED gconstpointer data)
{
  const char *suffixes[] = { "", "-wal", "-shm", "-journal" };
  for (gsize i = 0; i < G_N_ELEMENTS(suffixes); i++) {
    g_autofree char *p = g_strconcat(t->path, suffixes[i], NULL);
    g_unlink(p);
  }
  g_autofree char *other = g_build_filename(t->dir, "other.db", NULL);
  g_unlink(other);
  g_rmdir(t->dir);
  g_free(t->path);
  g_free(t->dir);
}

static void
test_store_load_open(Tmp *t, G_GNUC_UNUSED gconstpointer data)
{
  g_autoptr(GError) error = NULL;
  gint64 fit_id;
  {
    g_autoptr(DdpCalibDb) db = synthetic_db(t->path, 0.01);
    /* no fit stored yet: open fits the newest run in memory */
    g_autoptr(DdpFit) fresh = ddp_fit_open(t->path, &error);
    g_assert_no_error(error);
    g_assert_cmpint(ddp_fit_header(fresh)->id, ==, 0);

    g_autoptr(DdpFit) fit = ddp_fit_from_db(db, NULL, 0, NULL, &error);
    fit_id = ddp_fit_store(fit, db, &error);
    g_assert_no_error(error);
    g_assert_cmpint(fit_id, >, 0);
    g_assert_true(ddp_calibdb_check(db, &error));

    g_autoptr(DdpFit) back = ddp_fit_load(db, 0, &error);
    g_assert_no_error(error);
    g_assert_cmpint(ddp_fit_header(back)->id, ==, fit_id);
    guint n1, n2;
    const DdpCalibAllreduceFit *a1 = ddp_fit_allreduce_rows(fit, &n1), *a2 = ddp_fit_allreduce_rows(back, &n2);
    g_assert_cmpuint(n1, ==, n2);
    for (guint i = 0; i < n1; i++) {
      g_assert_cmpstr(a1[i].algorithm, ==, a2[i].algorithm);
      g_assert_cmpfloat(a1[i].alpha_us, ==, a2[i].alpha_us);
      g_assert_cmpfloat(a1[i].algbw_GBs, ==, a2[i].algbw_GBs);
    }
    ddp_fit_residual_rows(back, &n2);
    g_assert_cmpuint(n2, ==, 31 * G_N_ELEMENTS(node8));
  }
  {
    g_autoptr(DdpFit) opened = ddp_fit_open(t->path, &error);
    g_assert_no_error(error);
    g_assert_cmpint(ddp_fit_header(opened)->id, ==, fit_id); /* the stored one */
    DdpFitAllreduceCost c;
    g_assert_true(ddp_fit_allreduce_cost(opened, 8, 1, 8, DDP_ALGO_AUTO, DDP_PROTO_AUTO, &c));
    g_assert_cmpstr(c.protocol, ==, "LL");
  }
  {
    /* a newer run makes the stored fit stale: open fits the newest run instead */
    g_autoptr(DdpCalibDb) db = ddp_calibdb_open(t->path, DDP_CALIBDB_WRITE, &error);
    gint64 run = add_run(db, "NVIDIA H100 80GB HBM3");
    g_autoptr(GRand) rand = g_rand_new_with_seed(3);
    Variant v = { "Ring", "Simple", 8, 1, 50, 200 };
    add_allreduce(db, run, &v, 0, rand);
  }
  g_autoptr(DdpFit) stale = ddp_fit_open(t->path, &error);
  g_assert_no_error(error);
  g_assert_cmpint(ddp_fit_header(stale)->id, ==, 0);
  guint n;
  const DdpCalibAllreduceFit *rows = ddp_fit_allreduce_rows(stale, &n);
  g_assert_cmpuint(n, ==, 1);
  assert_rel(rows[0].algbw_GBs, 200, 1e-9);
}

static void
test_errors(Tmp *t, G_GNUC_UNUSED gconstpointer data)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(DdpCalibDb) db = ddp_calibdb_open(":memory:", DDP_CALIBDB_WRITE, &error);
  g_assert_null(ddp_fit_from_db(db, NULL, 0, NULL, &error));
  g_assert_error(error, DDP_CALIBDB_ERROR, DDP_CALIBDB_ERROR_NOT_FOUND);
  g_clear_error(&error);
  gint64 a = add_run(db, "NVIDIA H100 80GB HBM3");
  gint64 b = add_run(db, "NVIDIA A100-SXM4-80GB");
  g_assert_null(ddp_fit_from_db(db, &a, 1, NULL, &error)); /* a run without points */
  g_assert_error(error, DDP_FIT_ERROR, DDP_FIT_ERROR_NO_DATA);
  g_clear_error(&error);
  gint64 both[] = { a, b };
  g_assert_null(ddp_fit_from_db(db, both, 2, NULL, &error));
  g_assert_error(error, DDP_FIT_ERROR, DDP_FIT_ERROR_MIXED_GPUS);
  g_clear_error(&error);
  gint64 missing = 99;
  g_assert_null(ddp_fit_from_db(db, &missing, 1, NULL, &error));
  g_assert_error(error, DDP_CALIBDB_ERROR, DDP_CALIBDB_ERROR_NOT_FOUND);
  g_clear_error(&error);
  /* --calibration with a foreign or absent file */
  g_assert_null(ddp_fit_open(t->path, &error));
  g_assert_error(error, DDP_CALIBDB_ERROR, DDP_CALIBDB_ERROR_OPEN);
  g_clear_error(&error);
  g_assert_true(g_file_set_contents(t->path, "SQLite format 2\nnot really, a text file with enough bytes "
                                    "to fill a header ........................................", -1, NULL));
  g_assert_null(ddp_fit_open(t->path, &error));
  g_assert_error(error, DDP_CALIBDB_ERROR, DDP_CALIBDB_ERROR_CORRUPT);
}

/* ---- the verb, through the real binary ----------------------------------------------------- */

static const char *
ddpsim_binary(void)
{
  const char *bin = g_getenv("DDPSIM");
  if (!bin || !g_file_test(bin, G_FILE_TEST_IS_EXECUTABLE)) {
    g_test_skip("DDPSIM is not set to the ddpsim binary (make check sets it)");
    return NULL;
  }
  /* the verb must be in cmd.c's table */
  g_autofree char *out = NULL;
  const char *argv[] = { bin, "--help", NULL };
  if (!g_spawn_sync(NULL, (char **)argv, NULL, G_SPAWN_STDERR_TO_DEV_NULL, NULL, NULL, &out, NULL, NULL, NULL) ||
      !strstr(out, "\n  fit ")) {
    g_test_skip("ddpsim has no fit verb in its command table (src/cmd.c)");
    return NULL;
  }
  return bin;
}

static void
run_fit(const char *bin, const char *db, const char *extra, int *status, char **out, char **err)
{
  g_autofree char *cmd = g_strdup_printf("%s fit --db %s %s", bin, db, extra ? extra : "");
  g_auto(GStrv) argv = NULL;
  g_assert_true(g_shell_parse_argv(cmd, NULL, &argv, NULL));
  g_autoptr(GError) error = NULL;
  g_assert_true(g_spawn_sync(NULL, argv, NULL, G_SPAWN_DEFAULT, NULL, NULL, out, err, status, &error));
  g_assert_no_error(error);
}

static void
test_cli_bad_files(Tmp *t, G_GNUC_UNUSED gconstpointer data)
{
  const char *bin = ddpsim_binary();
  if (!bin)
    return;
  int status;
  /* not SQLite */
  g_assert_true(g_file_set_contents(t->path, "[model]\nname = x\npadding padding padding padding padding padding "
                                    "padding padding padding padding\n", -1, NULL));
  g_autofree char *out1 = NULL, *err1 = NULL;
  run_fit(bin, t->path, NULL, &status, &out1, &err1);
  g_assert_true(WIFEXITED(status));
  g_assert_cmpint(WEXITSTATUS(status), ==, 2);
  g_assert_nonnull(strstr(err1, "not an SQLite database"));
  g_assert_cmpint(strchr(err1, '\n') - err1, ==, (long)strlen(err1) - 1); /* exactly one line */
  /* foreign SQLite */
  g_unlink(t->path);
  {
    g_autoptr(DdpCalibDb) db = ddp_calibdb_open(t->path, DDP_CALIBDB_WRITE, NULL);
  }
  /* a foreign file: one of ours with its application id rewritten */
  g_autofree char *other = g_build_filename(t->dir, "other.db", NULL);
  g_autoptr(DdpCalibDb) mine = ddp_calibdb_open(other, DDP_CALIBDB_WRITE, NULL);
  g_clear_pointer(&mine, ddp_calibdb_close);
  {
    g_autoptr(GError) error = NULL;
    g_autofree char *bytes = NULL;
    gsize len;
    g_assert_true(g_file_get_contents(other, &bytes, &len, &error));
    /* the application id lives at byte offset 68 of the header (big-endian) */
    bytes[68] = 0x12;
    bytes[69] = 0x34;
    bytes[70] = 0x56;
    bytes[71] = 0x78;
    g_assert_true(g_file_set_contents(other, bytes, (gssize)len, &error));
  }
  g_autofree char *out2 = NULL, *err2 = NULL;
  run_fit(bin, other, NULL, &status, &out2, &err2);
  g_assert_cmpint(WEXITSTATUS(status), ==, 2);
  g_assert_nonnull(strstr(err2, "not a ddpsim calibration database"));
  /* ours but empty: no runs → exit 2 */
  g_autofree char *out3 = NULL, *err3 = NULL;
  run_fit(bin, t->path, NULL, &status, &out3, &err3);
  g_assert_cmpint(WEXITSTATUS(status), ==, 2);
  g_assert_nonnull(strstr(err3, "no calibration run"));
  /* missing file: exit 2, and no file created */
  g_autofree char *missing = g_build_filename(t->dir, "missing.db", NULL);
  g_autofree char *out4 = NULL, *err4 = NULL;
  run_fit(bin, missing, NULL, &status, &out4, &err4);
  g_assert_cmpint(WEXITSTATUS(status), ==, 2);
  g_assert_false(g_file_test(missing, G_FILE_TEST_EXISTS));
}

static void
test_cli_fit(Tmp *t, G_GNUC_UNUSED gconstpointer data)
{
  const char *bin = ddpsim_binary();
  if (!bin)
    return;
  {
    g_autoptr(DdpCalibDb) db = synthetic_db(t->path, 0);
  }
  int status;
  g_autofree char *out = NULL, *err = NULL;
  run_fit(bin, t->path, NULL, &status, &out, &err);
  g_assert_cmpint(WEXITSTATUS(status), ==, 0);
  g_assert_nonnull(strstr(out, "Stored as fit 1"));
  g_assert_nonnull(strstr(out, "Ring       Simple"));
  g_autofree char *json = NULL, *err2 = NULL;
  run_fit(bin, t->path, "--json --no-store", &status, &json, &err2);
  g_assert_cmpint(WEXITSTATUS(status), ==, 0);
  g_assert_nonnull(strstr(json, "\"alpha_us\": 56"));
  g_autofree char *out3 = NULL, *err3 = NULL;
  run_fit(bin, t->path, "--run 7", &status, &out3, &err3);
  g_assert_cmpint(WEXITSTATUS(status), ==, 2);
  g_assert_nonnull(strstr(err3, "no calibration run 7"));
}

int
main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/fit/line/exact", test_line_exact);
  g_test_add_func("/fit/line/constraints", test_line_constraints);
  g_test_add_func("/fit/allreduce/recover-exact", test_allreduce_exact);
  g_test_add_func("/fit/allreduce/recover-noisy", test_allreduce_noisy);
  g_test_add_func("/fit/allreduce/one-gpu", test_allreduce_one_gpu);
  g_test_add_func("/fit/allreduce/argmin", test_allreduce_argmin);
  g_test_add_func("/fit/allreduce/extrapolate", test_allreduce_extrapolate);
  g_test_add_func("/fit/allreduce/curve", test_allreduce_curve);
  g_test_add_func("/fit/coverage-warnings", test_coverage_warnings);
  g_test_add_func("/fit/kernels/exact", test_kernel_efficiency);
  g_test_add_func("/fit/kernels/recover", test_kernel_recovery);
  g_test_add_func("/fit/kernels/unknown-gpu", test_kernel_unknown_gpu);
  g_test_add_func("/fit/kernels/guess-gpu", test_guess_gpu);
  g_test_add_func("/fit/layers/signature", test_signature);
  g_test_add_func("/fit/layers/time", test_layer_time);
  g_test_add("/fit/db/store-load-open", Tmp, NULL, tmp_setup, test_store_load_open, tmp_teardown);
  g_test_add("/fit/db/errors", Tmp, NULL, tmp_setup, test_errors, tmp_teardown);
  g_test_add("/fit/cli/bad-files", Tmp, NULL, tmp_setup, test_cli_bad_files, tmp_teardown);
  g_test_add("/fit/cli/fit", Tmp, NULL, tmp_setup, test_cli_fit, tmp_teardown);
  return g_test_run();
}
