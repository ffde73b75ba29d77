/* Tests for DataParallel (dp.c) and predict's guards: closed forms derived by hand.
 *
 * Fixtures as in test-ddp.c: tests/data/tiny.model (fc1, fc2 measured at batch 32: forward 100/50
 * µs, backward 200/100 µs; parameters M = 8 396 800 B in 4 fp32 tensors; input "1024": 4 096 B a
 * sample) on tests/data/ab4.cluster (alpha-beta, 4 GPUs/node, 100 GB/s = 100 B/ns, α = 5 µs).
 * Shared pieces, in ns (test-ddp.c derives the DDP ones):
 *   F = 150 000, B (no hooks) = 300 000, SGD momentum = 89 566
 *   DDP, one bucket, 4 GPUs: 760 258 (F + hooked B 332 370 + AllReduce 155 952 + finalize 32 370
 *     + optimizer)
 *   Broadcast of M (< 10 MiB: one coalescing buffer) on 4 GPUs: 3·5 000 + 8 396 800/100 = 98 968;
 *     the Reduce of the gradients costs the same
 *   scatter: 3 copies of 32·4 096 = 131 072 B: 3·(5 000 + 1 310.72) = 18 932.16 → 18 932
 *   replicate (Python): 4 replicas · 2 modules · 3.2 µs = 25 600
 * The overheads of docs/overheads.md are off (ddp_overheads_none), as in test-ddp.c, except where a
 * test sets host_layer_us to see the GIL.
 */
#include "dp.h"
#include "fixture.h"

#include "run-ddpsim.h"

#include <glib/gstdio.h>
#include <math.h>
#include <string.h>

/* The shared fixture in DataParallel mode; DDP's comparison run: one bucket, as test-ddp.c's
 * closed form. */
static DdpScenario *
scenario(const char *model_text_or_file, guint64 gpus)
{
  DdpScenario *s = fixture_scenario(model_text_or_file, gpus, "none");
  s->setup.mode = DDP_MODE_DP;
  fixture_single_bucket(s);
  return s;
}

/* The acceptance case: DP slower than DDP by exactly the derived amount (no host dispatch cost,
 * so no GIL term; test_gil adds it).
 *   T_dp = 18 932 + 25 600 + 98 968 + F 150 000 + B 300 000 + 98 968 + 89 566 = 782 034
 *   T_dp − T_ddp = 782 034 − 760 258 = 21 776
 *     = scatter 18 932 + replicate 25 600 + broadcast 98 968 + reduce 98 968
 *       − (DDP's hook copies 32 370 + AllReduce 155 952 + finalize 32 370). */
static void
test_closed_form_vs_ddp(void)
{
  g_autoptr(DdpScenario) s = scenario("tiny.model", 4);
  g_autoptr(GError) error = NULL;
  g_autoptr(DdpResult) r = ddp_simulate(s, NULL, &error);
  g_assert_no_error(error);
  g_assert_nonnull(r->dp);
  const DdpDpCost *dp = r->dp;
  assert_ms_ns(dp->scatter_ms, 18932);
  assert_ms_ns(dp->replicate_host_ms, 25600);
  assert_ms_ns(dp->broadcast_ms, 98968);
  g_assert_cmpuint(dp->chunks, ==, 1);
  assert_ms_ns(dp->forward_gpu_ms, 150000);
  assert_ms_ns(dp->forward_host_ms, 0);
  assert_ms_ns(dp->forward_ms, 150000);
  assert_ms_ns(dp->backward_ms, 300000);
  assert_ms_ns(dp->reduce_ms, 98968);
  assert_ms_ns(dp->optimizer_ms, 89566);
  assert_ms_ns(dp->iteration_ms, 782034);
  assert_ms_ns(dp->ddp_iteration_ms, 760258);
  assert_ms_ns(dp->iteration_ms - dp->ddp_iteration_ms, 21776);
  /* the result carries DP's figures: nothing overlaps; the host terms are the rest */
  assert_ms_ns(r->mean_ms, 782034);
  assert_ms_ns(r->p99_ms, 782034);
  assert_ms_ns(r->compute_ms, 150000 + 300000 + 89566);
  assert_ms_ns(r->comm_ms, 18932 + 98968 + 98968);
  assert_ms_ns(r->exposed_comm_ms, 18932 + 98968 + 98968);
  g_assert_cmpfloat(r->overlap, ==, 0.0);
  /* one process: its host time (here replicate, 25 600) is host time, not waiting on other ranks */
  assert_ms_ns(r->host_iteration_ms, 25600);
  g_assert_cmpfloat(r->straggler_wait_ms, ==, 0.0);
  g_assert_cmpuint(r->n_buckets, ==, 0);
  g_assert_cmpuint(r->nodes, ==, 1);
  /* T(1): DataParallel on one GPU calls the module: F + B + optimizer = 539 566 */
  assert_ms_ns(r->single_gpu_ms, 539566);
  g_assert_cmpfloat_with_epsilon(r->scaling_efficiency, 539566.0 / 782034.0, 1e-12);
  g_assert_cmpfloat_with_epsilon(r->samples_per_s, 128 / 782034e-9, 1e-6);
}

/* The GIL: host_layer_us = 100 µs.  compute.c's host pipeline (host issues a pass every h, the GPU
 * runs it once issued and free), in µs:
 *   DataParallel's forward, the host issuing 4 replicas' passes, h = 400: fc1 issued at 400, runs
 *     400–500; fc2 issued at 800, runs 800–850: forward 850 000 ns (GPU 150 000);
 *   backward and optimizer at h = 100 (autograd device threads need no GIL), after a forward
 *     fc1 100–200, fc2 200–250: fc2 bwd issued 300, runs 300–400 (150 with the wait), fc1 bwd
 *     400–600 (200): B = 350 000; optimizer issued at 500, runs 600–689.566: 89 566.
 *   T_dp = 18 932 + 25 600 + 98 968 + 850 000 + 350 000 + 98 968 + 89 566 = 1 532 034. */
static void
test_gil(void)
{
  g_autoptr(DdpScenario) s = scenario("tiny.model", 4);
  s->setup.overheads.host_layer_us = 100;
  DdpDpCost dp;
  g_assert_true(ddp_dp_cost(s, NULL, &dp, NULL));
  assert_ms_ns(dp.forward_host_ms, 200000);
  assert_ms_ns(dp.forward_gpu_ms, 250000);   /* what one process per GPU (DDP) would see */
  assert_ms_ns(dp.forward_ms, 850000);
  assert_ms_ns(dp.backward_ms, 350000);
  assert_ms_ns(dp.optimizer_ms, 89566);
  assert_ms_ns(dp.iteration_ms, 1532034);
  /* host_iteration_us is paid once per step, as in DDP */
  s->setup.overheads.host_iteration_us = 100;
  g_assert_true(ddp_dp_cost(s, NULL, &dp, NULL));
  assert_ms_ns(dp.iteration_ms, 1632034);
}

/* One GPU: no scatter, replicate, broadcast or reduce. */
static void
test_one_gpu(void)
{
  g_autoptr(DdpScenario) s = scenario("tiny.model", 1);
  DdpDpCost dp;
  g_assert_true(ddp_dp_cost(s, NULL, &dp, NULL));
  g_assert_cmpfloat(dp.scatter_ms + dp.replicate_host_ms + dp.broadcast_ms + dp.reduce_ms, ==, 0.0);
  assert_ms_ns(dp.forward_ms, 150000);
  assert_ms_ns(dp.iteration_ms, 539566);
}

/* Accumulation K = 2: DataParallel has no no_sync, every micro-step does everything but the
 * optimizer: 2 · 692 468 + 89 566 = 1 474 502. */
static void
test_accumulation(void)
{
  g_autoptr(DdpScenario) s = scenario("tiny.model", 4);
  s->setup.accumulate = 2;
  DdpDpCost dp;
  g_assert_true(ddp_dp_cost(s, NULL, &dp, NULL));
  assert_ms_ns(dp.iteration_ms, 1474502);
}

/* Coalescing: three fp32 tensors of 6 MiB close a 10 MiB buffer at 12 MiB ([p0 p1]) and leave p2:
 * two broadcasts, 5 000·3 + 12 582 912/100 = 140 829.12 → 140 829 and 15 000 + 62 914.56 →
 * 77 915: 218 744.  Buffers of 25 MiB: 10 + 10 + 5 MiB, each rounded: 2·(15 000 + 104 857.6 →
 * 119 858) + (15 000 + 52 428.8 → 67 429) = 307 145, on top.  The reduce covers the parameters only: 218 744.  "16 tokens" is 16 int64 a sample:
 * 3·(5 000 + 32·128/100) = 15 122.88 → 15 123. */
static const char three_6mib[] =
  "[model]\nname = three\ninput = 16 tokens\nmeasured_batch = 32\nbuffer_bytes = 26214400\n"
  "[layer l0]\nkind = linear\nforward_flops = 0\nbackward_flops = 0\nforward_us = 1000\nbackward_us = 1000\nparams = a:1572864;b:1572864;c:1572864\n";

static void
test_coalescing_and_buffers(void)
{
  g_autoptr(DdpScenario) s = scenario(three_6mib, 4);
  DdpDpCost dp;
  g_assert_true(ddp_dp_cost(s, NULL, &dp, NULL));
  g_assert_cmpuint(dp.chunks, ==, 2);
  assert_ms_ns(dp.broadcast_ms, 218744 + 307145);
  assert_ms_ns(dp.reduce_ms, 218744);
  assert_ms_ns(dp.scatter_ms, 15123);
  /* no host dispatch cost: the forward is the GPU's */
  assert_ms_ns(dp.forward_ms, 1000000);
}

/* DataParallel is one process: 8 GPUs on 4-GPU nodes are refused as bad input. */
static void
test_multi_node_refused(void)
{
  g_autoptr(DdpScenario) s = scenario("tiny.model", 8);
  g_autoptr(GError) error = NULL;
  g_assert_null(ddp_simulate(s, NULL, &error));
  g_assert_error(error, DDP_SCENARIO_ERROR, DDP_SCENARIO_ERROR_INVALID);
  g_assert_nonnull(strstr(error->message, "8 GPUs span 2 nodes of 4"));
}

/* Through the binary: --mode dp prints the comparison; two nodes exit 2 with one line. */
static void
test_cli_mode(void)
{
  g_autofree char *model = g_test_build_filename(G_TEST_DIST, "data", "tiny.model", NULL);
  g_autofree char *cluster = g_test_build_filename(G_TEST_DIST, "data", "ab4.cluster", NULL);
  g_auto(Run) r = { 0 };
  run(&r, "predict", "--model", model, "--cluster", cluster, "--gpus", "4", "--mode", "dp", NULL);
  g_assert_cmpint(r.status, ==, 0);
  /* default overheads here: the figures are the library's (checked above), the lines are the CLI's */
  g_assert_nonnull(strstr(r.out, "DataParallel (one process, GPU 0 as parameter server) vs DistributedDataParallel"));
  g_assert_nonnull(strstr(r.out, "x slower (+"));
  g_assert_null(strstr(r.out, "bucket schedule"));
  /* one GPU: DataParallel calls the module, DDP still fills its buckets — DataParallel is faster */
  g_auto(Run) one = { 0 };
  run(&one, "predict", "--model", model, "--cluster", cluster, "--gpus", "1", "--mode", "dp", NULL);
  g_assert_cmpint(one.status, ==, 0);
  g_assert_nonnull(strstr(one.out, "x faster (-"));
  g_assert_null(strstr(one.out, "slower"));
  g_auto(Run) j = { 0 };
  run(&j, "predict", "--model", model, "--cluster", cluster, "--gpus", "4", "--mode", "dp", "--json", NULL);
  g_assert_cmpint(j.status, ==, 0);
  g_assert_nonnull(strstr(j.out, "\"mode\": \"dp\""));
  g_assert_nonnull(strstr(j.out, "\"slowdown_vs_ddp\": "));
  g_auto(Run) e = { 0 };
  run(&e, "predict", "--model", model, "--cluster", cluster, "--gpus", "8", "--mode", "dp", NULL);
  g_assert_cmpint(e.status, ==, 2);
  g_assert_cmpstr(e.out, ==, "");
  g_assert_nonnull(strstr(e.err, "--mode: dp is one process on one node"));
  g_auto(Run) b = { 0 };
  run(&b, "predict", "--mode", "pp", NULL);
  g_assert_cmpint(b.status, ==, 2);
  g_assert_nonnull(strstr(b.err, "--mode: \"pp\" is not one of ddp|dp"));
}

/* predict's memory guard: batch 4096 of ResNet-50 needs far more than 80 GB (activations alone
 * are 4096 × ~85 MB): the report still comes out, with "DOES NOT FIT" and memory.fits false, one
 * line on stderr, exit 3; --allow-oom: the same line, exit 0.  A model that fits: nothing. */
static void
test_oom_exit(void)
{
  g_auto(Run) r = { 0 };
  run(&r, "predict", "--batch", "4096", NULL);
  g_assert_cmpint(r.status, ==, 3);
  g_assert_nonnull(strstr(r.out, "DOES NOT FIT"));
  g_assert_nonnull(strstr(r.err, "OUT OF MEMORY"));
  g_assert_nonnull(strstr(r.err, "exit 3"));
  g_auto(Run) j = { 0 };
  run(&j, "predict", "--batch", "4096", "--json", NULL);
  g_assert_cmpint(j.status, ==, 3);
  g_assert_nonnull(strstr(j.out, "\"fits\": false"));
  g_auto(Run) a = { 0 };
  run(&a, "predict", "--batch", "4096", "--allow-oom", NULL);
  g_assert_cmpint(a.status, ==, 0);
  g_assert_nonnull(strstr(a.err, "OUT OF MEMORY"));
  g_auto(Run) ok = { 0 };
  run(&ok, "predict", NULL);
  g_assert_cmpint(ok.status, ==, 0);
  g_assert_cmpstr(ok.err, ==, "");
}

/* The scenario keys this work added ([training] mode, torch_version, allow_oom, unused_search_us):
 * read into the setup, and bad values refused naming file:line: group.key (exit 2 upstream). */
static void
test_scenario_keys(void)
{
  g_autofree char *dir = g_dir_make_tmp("ddpsim-dp-XXXXXX", NULL);
  g_autofree char *path = g_build_filename(dir, "s.scenario", NULL);
  g_autofree char *model = g_test_build_filename(G_TEST_DIST, "data", "tiny.model", NULL);
  DdpCliOptions cli = { 0 };
  cli.model = model;
  g_assert_true(g_file_set_contents(path, "[scenario]\ngpus = 4\n[training]\nmode = dp\ntorch_version = 1.13\n"
                                    "allow_oom = true\nunused_search_us = 12.5\n", -1, NULL));
  g_autoptr(GError) error = NULL;
  g_autoptr(DdpScenario) good = ddp_scenario_load(path, &cli, TRUE, &error);
  g_assert_no_error(error);
  g_assert_cmpint(good->setup.mode, ==, DDP_MODE_DP);
  g_assert_cmpuint(good->setup.buckets.torch_version, ==, 113);
  g_assert_true(good->setup.allow_oom);
  g_assert_cmpfloat(good->setup.unused_search_us, ==, 12.5);
  /* the command line wins over the file */
  cli.mode = (char *)"ddp";
  cli.torch_version = (char *)"2.4";
  g_autoptr(DdpScenario) flags = ddp_scenario_load(path, &cli, TRUE, &error);
  g_assert_no_error(error);
  g_assert_cmpint(flags->setup.mode, ==, DDP_MODE_DDP);
  g_assert_cmpuint(flags->setup.buckets.torch_version, ==, 204);
  cli.mode = cli.torch_version = NULL;
  static const struct { const char *text, *message; } bad[] = {
    { "[scenario]\n[training]\nmode = fsdp2\n", "s.scenario:3: training.mode:" },
    { "[scenario]\n[training]\nsharding = zero3\n", "s.scenario:3: training.sharding:" },
    { "[scenario]\n[training]\n\ntorch_version = 2\n", "s.scenario:4: training.torch_version: \"2\" is not a PyTorch release X.Y from 1.4 to 2.99" },
    { "[scenario]\n[training]\nunused_search_us = -1\n", "s.scenario:3: training.unused_search_us:" },
    { "[scenario]\n[training]\nallow_oom = maybe\n", "s.scenario:3: training.allow_oom:" },
  };
  for (gsize i = 0; i < G_N_ELEMENTS(bad); i++) {
    g_assert_true(g_file_set_contents(path, bad[i].text, -1, NULL));
    g_autoptr(GError) e = NULL;
    g_autoptr(DdpScenario) s = ddp_scenario_load(path, &cli, TRUE, &e);
    g_assert_null(s);
    g_assert_nonnull(e);
    g_assert_true(g_str_has_prefix(e->message, path));
    g_assert_true(g_str_has_prefix(e->message + strlen(path) - strlen("s.scenario"), bad[i].message));
  }
  g_unlink(path);
  g_rmdir(dir);
  g_auto(Run) r = { 0 };
  run(&r, "buckets", "--torch-version", "3.1", NULL);
  g_assert_cmpint(r.status, ==, 2);
  g_assert_cmpstr(r.err, ==, "ddpsim buckets: --torch-version: \"3.1\" is not a PyTorch release X.Y from 1.4 to 2.99\n");
  g_auto(Run) d = { 0 };
  run(&d, "buckets", "--device", "tpu", NULL);
  g_assert_cmpint(d.status, ==, 2);
  g_assert_cmpstr(d.err, ==, "ddpsim buckets: --device: \"tpu\" is not one of cpu|cuda\n");
}

int
main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/dp/closed-form-vs-ddp", test_closed_form_vs_ddp);
  g_test_add_func("/dp/one-gpu", test_one_gpu);
  g_test_add_func("/dp/gil", test_gil);
  g_test_add_func("/dp/accumulation", test_accumulation);
  g_test_add_func("/dp/coalescing-and-buffers", test_coalescing_and_buffers);
  g_test_add_func("/dp/multi-node-refused", test_multi_node_refused);
  g_test_add_func("/dp/cli/mode", test_cli_mode);
  g_test_add_func("/predict/oom-exit", test_oom_exit);
  g_test_add_func("/dp/scenario-keys", test_scenario_keys);
  return g_test_run();
}
