/* Tests for the overheads that are not collectives (docs/overheads.md): host time per iteration,
 * the data loader's rate cap, rank-to-rank jitter, the contention default, and their scenario keys
 * and flags.  Closed forms derived by hand from the fixtures of tests/test-ddp.c:
 * tests/data/tiny.model on tests/data/ab4.cluster (alpha-beta ring, 4 GPUs/node), all in ns:
 *   F = 150 000; B (hooked) = 332 370; finalize = 32 370; SGD momentum (8 passes) = 89 566;
 *   AllReduce of the whole model on 4 GPUs = 155 952.
 * With one bucket nothing overlaps, so iteration = F + B + AllReduce + finalize + optimizer
 * = 760 258 and the compute part is 604 306. */
#include "ddp.h"
#include "fixture.h"

#include <glib/gstdio.h>
#include <math.h>

/* The shared fixture with one bucket: no overlap, so every term is additive. */
static DdpScenario *
scenario(guint64 gpus)
{
  DdpScenario *s = fixture_scenario("tiny.model", gpus, "none");
  fixture_single_bucket(s);
  return s;
}

static DdpResult *
simulate(const DdpScenario *s, gboolean exact)
{
  g_autoptr(GError) error = NULL;
  DdpRunOptions options = { .exact_ranks = exact };
  DdpResult *r = ddp_simulate(s, &options, &error);
  g_assert_no_error(error);
  return r;
}

/* The defaults and where the overlap slowdown comes from: the setup, else the cluster, else the SMs
 * that NCCL's channels hold, C / (SMs − C), else (channels unknown) 0.05. */
static void
test_defaults(void)
{
  DdpSetup t;
  ddp_setup_init(&t);
  g_assert_cmpfloat(t.overheads.host_iteration_us, ==, 100);
  g_assert_cmpfloat(t.overheads.host_layer_us, ==, 10);
  g_assert_cmpfloat(t.overheads.input_rate, ==, 0);
  g_assert_cmpfloat(t.overheads.jitter, ==, 0.0078);   /* the measured clock spread of a healthy server */
  g_autoptr(DdpScenario) s = scenario(4);
  g_assert_cmpfloat(s->cluster->overlap_slowdown, <, 0);   /* ab4.cluster does not say */
  g_assert_cmpint(s->cluster->gpu.sms, ==, 108);                    /* an A100 */
  int from = -1;
  g_assert_cmpfloat(ddp_overheads_overlap_slowdown(&t.overheads, s->cluster, 0, &from), ==, 0.05);
  g_assert_cmpint(from, ==, 0);
  g_assert_cmpfloat(ddp_overheads_overlap_slowdown(&t.overheads, s->cluster, 24, &from), ==, 24.0 / 84);
  g_assert_cmpint(from, ==, 24);
  g_assert_cmpfloat(ddp_overheads_overlap_slowdown(&t.overheads, s->cluster, 108, &from), ==, 0.05);   /* no SM left: unknown */
  g_assert_cmpint(from, ==, 0);
  s->cluster->overlap_slowdown = 0.2;
  g_assert_cmpfloat(ddp_overheads_overlap_slowdown(&t.overheads, s->cluster, 24, &from), ==, 0.2);
  g_assert_cmpint(from, ==, 0);
  t.overheads.overlap_slowdown = 0;
  g_assert_cmpfloat(ddp_overheads_overlap_slowdown(&t.overheads, s->cluster, 24, NULL), ==, 0);
  g_free(t.stragglers);
}

/* Host time per iteration adds exactly itself, to T(N) and to T(1). */
static void
test_host_iteration(void)
{
  g_autoptr(DdpScenario) s = scenario(4);
  g_autoptr(DdpResult) base = simulate(s, FALSE);
  assert_ms_ns(base->mean_ms, 760258);
  s->setup.overheads.host_iteration_us = 50;
  g_autoptr(DdpResult) r = simulate(s, FALSE);
  assert_ms_ns(r->mean_ms, 760258 + 50000);
  assert_ms_ns(r->host_iteration_ms, 50000);
  g_assert_cmpfloat_with_epsilon(r->single_gpu_ms - base->single_gpu_ms, 0.05, 1e-9);
  g_assert_cmpfloat_with_epsilon(r->straggler_wait_ms, 0, 1e-9);
}

/* The per-bucket host cost (docs/overheads.md "Per-bucket costs"): each bucket's collective call
 * costs the host one layer pass (host_layer_us) in the hook that completes it.  On one GPU at
 * 1 000 µs a pass the tiny model's step is host-bound — 5 passes (2 forward, 2 backward, the
 * optimizer) plus one call per bucket, the GPU's ≈0.6 ms hidden under them — so splitting the one
 * bucket in two (cap 1 MiB: fc2's and fc1's 4.2 MB each close a bucket) adds exactly one pass,
 * 1 000 000 ns; the plain module's T(1) has no buckets and does not move.  GPU-bound (10 µs a
 * pass) the host runs ahead and the second bucket costs nothing. */
static void
test_bucket_host_cost(void)
{
  g_autoptr(DdpScenario) s = scenario(1);
  s->setup.overheads.host_layer_us = 1000;
  g_autoptr(DdpResult) one = simulate(s, FALSE);
  g_assert_cmpuint(one->n_buckets, ==, 1);
  s->setup.buckets.bucket_cap_mb = 1;
  s->setup.buckets.first_bucket_bytes = 1 << 20;
  g_autoptr(DdpResult) two = simulate(s, FALSE);
  g_assert_cmpuint(two->n_buckets, ==, 2);
  g_assert_cmpfloat_with_epsilon(two->mean_ms - one->mean_ms, 1.0, 2e-6);
  g_assert_cmpfloat_with_epsilon(two->single_gpu_ms, one->single_gpu_ms, 1e-9);
  g_assert_cmpfloat(one->mean_ms, >, 6.0);   /* 5 passes + 1 call, host-bound */
  s->setup.overheads.host_layer_us = 10;
  g_autoptr(DdpResult) fast_two = simulate(s, FALSE);
  fixture_single_bucket(s);
  g_autoptr(DdpResult) fast_one = simulate(s, FALSE);
  g_assert_cmpfloat_with_epsilon(fast_two->mean_ms, fast_one->mean_ms, 2e-6);
}

/* --step-ms is the measured step, host time included: compute is rescaled to step − host, so the
 * 1-GPU iteration does not move when the host term changes (up to one ns of rounding per pass);
 * a step no longer than the host time is an error. */
static void
test_step_ms_includes_host(void)
{
  g_autoptr(DdpScenario) s = scenario(1);
  s->setup.step_ms = 2.0;
  g_autoptr(DdpResult) a = simulate(s, FALSE);
  s->setup.overheads.host_iteration_us = 300;
  g_autoptr(DdpResult) b = simulate(s, FALSE);
  g_assert_cmpfloat(fabs(a->mean_ms - b->mean_ms), <=, 1e-5);
  s->setup.step_ms = 0.3;
  g_autoptr(GError) error = NULL;
  g_autoptr(DdpResult) none = ddp_simulate(s, NULL, &error);
  g_assert_null(none);
  g_assert_error(error, DDP_SCENARIO_ERROR, DDP_SCENARIO_ERROR_INVALID);
  g_assert_cmpstr(error->message, ==,
                  "--step-ms: 0.3 ms is not more than the host time per iteration (300 µs, --host-iteration-us)");
}

/* The data loader's cap: a node's GPUs take batch × (GPUs on the node) samples per iteration, so the
 * iteration is at least that / rate.  4 GPUs/node, batch 32, 100 000 samples/s: 128 / 1e5 s =
 * 1.28 ms > 0.760 258 ms: the iteration IS the floor, and the wait is the difference.  8 GPUs on two
 * nodes: the same 4 GPUs per node, the same floor, under an iteration that the inter-node
 * AllReduce makes longer anyway.  T(1): 32 / 1e5 = 0.32 ms < its own 0.604 306 +
 * nothing: unaffected.  A rate of 1e6 gives a floor of 0.128 ms: no effect at all. */
static void
test_input_rate(void)
{
  g_autoptr(DdpScenario) s = scenario(4);
  s->setup.overheads.input_rate = 1e5;
  g_autoptr(DdpResult) r = simulate(s, FALSE);
  assert_ms_ns(r->mean_ms, 1280000);
  assert_ms_ns(r->p99_ms, 1280000);
  assert_ms_ns(r->input_wait_ms, 1280000 - 760258);
  g_assert_cmpfloat_with_epsilon(r->samples_per_s, 1e5, 1e-6);   /* the node's loader rate */
  s->setup.gpus = 8;
  g_autoptr(DdpResult) two_nodes = simulate(s, FALSE);
  g_assert_cmpuint(two_nodes->nodes, ==, 2);
  s->setup.overheads.input_rate = 0;
  g_autoptr(DdpResult) two_nodes_free = simulate(s, FALSE);
  g_assert_cmpfloat_with_epsilon(two_nodes->mean_ms, MAX(1.28, two_nodes_free->mean_ms), 1e-9);
  s->setup.gpus = 4;
  s->setup.overheads.input_rate = 1e6;   /* floor 0.128 ms */
  g_autoptr(DdpResult) fast = simulate(s, FALSE);
  assert_ms_ns(fast->mean_ms, 760258);
  g_assert_cmpfloat(fast->input_wait_ms, ==, 0);
}

/* Φ⁻¹ against tabulated values, and the slowest of n ranks against E[max of n standard normals]
 * (Tippett 1925 / Harter 1961 tables: n=2 0.5642, 4 1.0294, 8 1.4236, 16 1.7660, 1000 3.2414). */
static void
test_jitter_quantiles(void)
{
  g_assert_cmpfloat_with_epsilon(ddp_normal_quantile(0.5), 0, 1e-12);
  g_assert_cmpfloat_with_epsilon(ddp_normal_quantile(0.975), 1.959963984540054, 1e-9);
  g_assert_cmpfloat_with_epsilon(ddp_normal_quantile(0.001), -3.090232306167813, 1e-9);
  g_assert_cmpfloat_with_epsilon(ddp_normal_quantile(1 - 1e-10), 6.361340902404056, 1e-7);
  static const struct { guint64 n; double expected_max; double tolerance; } cases[] = {
    { 2, 0.5642, 0.05 }, { 4, 1.0294, 0.02 }, { 8, 1.4236, 0.01 }, { 16, 1.7660, 0.01 }, { 1000, 3.2414, 0.01 },
  };
  g_assert_cmpfloat(ddp_jitter_slowest(0.02, 1), ==, 1.0);
  for (gsize i = 0; i < G_N_ELEMENTS(cases); i++) {
    double z = (ddp_jitter_slowest(0.02, cases[i].n) - 1) / 0.02;
    g_test_message("n=%" G_GUINT64_FORMAT ": slowest at %.4f sigma, E[max] %.4f", cases[i].n, z, cases[i].expected_max);
    g_assert_cmpfloat(fabs(z / cases[i].expected_max - 1), <=, cases[i].tolerance);
  }
  /* the per-rank factors are those quantiles, permuted by the seed: same multiset, same max */
  g_autoptr(GRand) rng = g_rand_new_with_seed(3);
  double f[16];
  ddp_jitter_factors(0.02, rng, 16, f, NULL);
  double max = 0, sum = 0;
  for (int i = 0; i < 16; i++) {
    max = MAX(max, f[i]);
    sum += f[i];
  }
  g_assert_cmpfloat(max, ==, ddp_jitter_slowest(0.02, 16));
  g_assert_cmpfloat_with_epsilon(sum, 16, 1e-9);   /* quantiles symmetric about 0 */
  g_assert_cmpfloat(f[15], !=, max);                /* seed 3 does not leave the slowest last */
}

/* Jitter on the iteration: with one bucket the slowest rank sets every synchronisation, so
 * iteration = f · (compute 604 306) + AllReduce 155 952 with f = ddp_jitter_slowest(σ, 4); the
 * collapsed path (one rank at f) and the per-rank path (four permuted factors) agree to a few ns
 * of rounding; T(1) has no jitter (the median of one rank is itself). */
static void
test_jitter_iteration(void)
{
  g_autoptr(DdpScenario) s = scenario(4);
  s->setup.overheads.jitter = 0.05;
  double f = ddp_jitter_slowest(0.05, 4);
  g_autoptr(DdpResult) collapsed = simulate(s, FALSE);
  g_autoptr(DdpResult) exact = simulate(s, TRUE);
  g_assert_true(collapsed->collapsed_ranks);
  g_assert_false(exact->collapsed_ranks);
  double expected = (f * 604306 + 155952) / 1e6;
  g_assert_cmpfloat_with_epsilon(collapsed->mean_ms, expected, 5e-6);
  g_assert_cmpfloat_with_epsilon(exact->mean_ms, expected, 5e-6);
  g_assert_cmpfloat_with_epsilon(collapsed->jitter_ms, (f - 1) * 0.604306, 1e-9);
  g_assert_cmpfloat(collapsed->jitter_slowest, ==, f);
  assert_ms_ns(collapsed->single_gpu_ms, 539566);   /* no DDP: no hook or finalize copies */
  g_assert_cmpfloat_with_epsilon(collapsed->straggler_wait_ms, 0, 5e-6);
}

/* The default contention slowdown applies only where a collective overlaps compute: with one
 * bucket (no overlap) it costs nothing; with the four-bucket schedule of tests/test-ddp.c it is
 * reported as contention_ms, the stretch of the pace-setting rank's backward. */
static void
test_contention_default(void)
{
  g_autoptr(DdpScenario) s = scenario(4);
  s->setup.overheads.overlap_slowdown = -1;   /* ab4 says nothing and alpha-beta has no channels: 0.05 */
  g_autoptr(DdpResult) single = simulate(s, FALSE);
  assert_ms_ns(single->mean_ms, 760258);
  g_assert_cmpfloat(single->overlap_slowdown, ==, 0.05);
  g_assert_cmpfloat(single->contention_ms, ==, 0);
  s->setup.buckets.bucket_cap_mb = 1e-4;
  s->setup.buckets.first_bucket_bytes = 1;
  s->setup.overheads.overlap_slowdown = 0;
  g_autoptr(DdpResult) base = simulate(s, FALSE);
  s->setup.overheads.overlap_slowdown = -1;
  g_autoptr(DdpResult) slowed = simulate(s, FALSE);
  g_assert_cmpfloat(slowed->contention_ms, >, 0);
  /* everything the slowdown adds is contention (the AllReduces after backward do not move) */
  g_assert_cmpfloat_with_epsilon(slowed->mean_ms - base->mean_ms, slowed->contention_ms, 1e-6);
}

/* On the shipped clusters the default follows the channels of the largest bucket's AllReduce (tiny's
 * one 8 396 800-byte bucket; `ddpsim allreduce --explain`, column ch): NVLS's 16 on the H100's 132
 * SMs, Ring/LL128's 24 on the A100's 108 and 12 on the V100's 80; a single GPU runs no collective. */
static void
test_contention_channels(void)
{
  static const struct { const char *cluster; guint64 gpus; double slowdown; int channels; } cases[] = {
    { "dgx-h100", 8, 16.0 / 116, 16 }, { "dgx-a100", 8, 24.0 / 84, 24 }, { "dgx1-v100", 8, 12.0 / 68, 12 },
    { "dgx-h100", 1, 0.05, 0 },
  };
  for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
    g_autoptr(DdpScenario) s = scenario(cases[i].gpus);
    g_autoptr(GError) error = NULL;
    ddp_cluster_free(s->cluster);
    s->cluster = ddp_cluster_load(cases[i].cluster, &error);
    g_assert_no_error(error);
    s->setup.overheads.overlap_slowdown = -1;
    g_autoptr(DdpResult) r = simulate(s, FALSE);
    g_assert_cmpfloat_with_epsilon(r->overlap_slowdown, cases[i].slowdown, 1e-12);
    g_assert_cmpint(r->overlap_slowdown_channels, ==, cases[i].channels);
  }
}

/* Scenario keys and flags: values land in the setup; out-of-range values name file:line:key or
 * the flag. */
static void
test_keys_and_flags(void)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *model = g_test_build_filename(G_TEST_DIST, "data", "tiny.model", NULL);
  g_autofree char *cluster = g_test_build_filename(G_TEST_DIST, "data", "ab4.cluster", NULL);
  g_autofree char *good = g_strdup_printf("[scenario]\nmodel = %s\ncluster = %s\ngpus = 4\n[training]\n"
                                          "overlap_slowdown = 0.1\nhost_iteration_us = 20\nhost_layer_us = 3\n"
                                          "input_rate = 5000\njitter = 0.01\n", model, cluster);
  g_autofree char *path = NULL;
  int fd = g_file_open_tmp("overheads-XXXXXX.scenario", &path, &error);
  g_assert_no_error(error);
  g_assert_true(g_close(fd, NULL));
  g_assert_true(g_file_set_contents(path, good, -1, &error));
  DdpCliOptions cli = { 0 };
  g_autoptr(DdpScenario) s = ddp_scenario_load(path, &cli, TRUE, &error);
  g_assert_no_error(error);
  const DdpOverheads *o = &s->setup.overheads;
  g_assert_cmpfloat(o->overlap_slowdown, ==, 0.1);
  g_assert_cmpfloat(o->host_iteration_us, ==, 20);
  g_assert_cmpfloat(o->host_layer_us, ==, 3);
  g_assert_cmpfloat(o->input_rate, ==, 5000);
  g_assert_cmpfloat(o->jitter, ==, 0.01);
  /* flags override the file */
  cli.jitter = (char *)"0";
  cli.input_rate = (char *)"0";
  g_autoptr(DdpScenario) t = ddp_scenario_load(path, &cli, TRUE, &error);
  g_assert_no_error(error);
  g_assert_cmpfloat(t->setup.overheads.jitter, ==, 0);
  g_assert_cmpfloat(t->setup.overheads.input_rate, ==, 0);

  static const struct { const char *flag, *value, *message; } bad_flags[] = {
    { "jitter", "0.9", "--jitter: \"0.9\" must be a number from 0 to 0.5" },
    { "input-rate", "-1", "--input-rate: \"-1\" must be a number from 0 to 1e+12" },
    { "overlap-slowdown", "x", "--overlap-slowdown: \"x\" must be a number from 0 to 10" },
    { "host-iteration-us", "1e8", "--host-iteration-us: \"1e8\" must be a number from 0 to 1e+07" },
    { "host-layer-us", "-0.5", "--host-layer-us: \"-0.5\" must be a number from 0 to 1e+06" },
  };
  for (gsize i = 0; i < G_N_ELEMENTS(bad_flags); i++) {
    DdpCliOptions bad = { 0 };
    char *value = (char *)bad_flags[i].value;
    switch (i) {
    case 0: bad.jitter = value; break;
    case 1: bad.input_rate = value; break;
    case 2: bad.overlap_slowdown = value; break;
    case 3: bad.host_iteration_us = value; break;
    default: bad.host_layer_us = value; break;
    }
    g_autoptr(GError) e = NULL;
    g_autoptr(DdpScenario) none = ddp_scenario_load(path, &bad, TRUE, &e);
    g_assert_null(none);
    g_assert_error(e, DDP_RANGE_ERROR, DDP_RANGE_ERROR_RANGE);
    g_assert_cmpstr(e->message, ==, bad_flags[i].message);
  }

  g_autofree char *bad_file = g_strdup_printf("[scenario]\nmodel = %s\ncluster = %s\n[training]\njitter = 0.6\n", model, cluster);
  g_assert_true(g_file_set_contents(path, bad_file, -1, &error));
  g_autoptr(DdpScenario) none = ddp_scenario_load(path, &cli, TRUE, &error);
  g_assert_null(none);
  g_autofree char *expected = g_strdup_printf("%s:5: training.jitter: \"0.6\" must be a number from 0 to 0.5", path);
  g_assert_cmpstr(error->message, ==, expected);
  g_clear_error(&error);
  g_autofree char *seq_for_tiny = g_strdup_printf("[scenario]\nmodel = %s\ncluster = %s\n[training]\nseq_len = 128\n", model, cluster);
  g_assert_true(g_file_set_contents(path, seq_for_tiny, -1, &error));
  g_autoptr(DdpScenario) no_seq = ddp_scenario_load(path, &cli, TRUE, &error);
  g_assert_null(no_seq);
  g_assert_error(error, DDP_MODEL_ERROR, DDP_MODEL_ERROR_INVALID);
  g_assert_cmpstr(error->message, ==, "--seq-len: model tiny has no sequence length (its file gives no [model] seq_len)");
  g_unlink(path);
}

int
main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/overheads/defaults", test_defaults);
  g_test_add_func("/overheads/host-iteration", test_host_iteration);
  g_test_add_func("/overheads/bucket-host-cost", test_bucket_host_cost);
  g_test_add_func("/overheads/step-ms-includes-host", test_step_ms_includes_host);
  g_test_add_func("/overheads/input-rate", test_input_rate);
  g_test_add_func("/overheads/jitter-quantiles", test_jitter_quantiles);
  g_test_add_func("/overheads/jitter-iteration", test_jitter_iteration);
  g_test_add_func("/overheads/contention-default", test_contention_default);
  g_test_add_func("/overheads/contention-channels", test_contention_channels);
  g_test_add_func("/overheads/keys-and-flags", test_keys_and_flags);
  return g_test_run();
}
