/* Tests for zero (src/zero.c): ZeroRedundancyOptimizer's greedy partition of the parameters
 * (_partition_parameters) and the ZeRO-1 iteration against DDP's on the closed-form fixture. */
#include "zero.h"
#include "calibdb.h"
#include "compute.h"
#include "fit.h"
#include "fixture.h"
#include "strategy.h"

#include <math.h>

/* Tensors of 10, 7, 5, 3, 1 elements (26), largest first, each to the first least-loaded rank:
 *   2 ranks: 10→0, 7→1, 5→1 (12), 3→0 (13), 1→1 (13): the largest share 13/26;
 *   3 ranks: 10→0, 7→1, 5→2, 3→2 (8), 1→1 (8): 10/26;
 *   8 ranks: one tensor each at most: 10/26;  1 rank: all. */
static void
test_partition(void)
{
  static const gint64 numel[] = { 3, 10, 1, 7, 5 };
  DdpModel model = { 0 };
  model.n_params = G_N_ELEMENTS(numel);
  model.params = g_new0(DdpParam, model.n_params);
  for (guint i = 0; i < model.n_params; i++)
    model.params[i].numel = numel[i];
  g_assert_cmpfloat_with_epsilon(ddp_zero_largest_share(&model, 1), 1.0, 1e-12);
  g_assert_cmpfloat_with_epsilon(ddp_zero_largest_share(&model, 2), 13.0 / 26, 1e-12);
  g_assert_cmpfloat_with_epsilon(ddp_zero_largest_share(&model, 3), 10.0 / 26, 1e-12);
  g_assert_cmpfloat_with_epsilon(ddp_zero_largest_share(&model, 8), 10.0 / 26, 1e-12);
  g_free(model.params);
}

/* ZeRO-1 on the fixture (4 GPUs of ab4, alpha-beta, every overhead off): the DDP iteration, minus
 * the optimizer step but the largest partition's share s of it, plus one Broadcast per parameter
 * tensor ((N-1)·α + bytes/B each: 3·5 µs + bytes/100 000 µs), none hidden; the optimizer state ×
 * s in memory. */
static void
test_iteration(void)
{
  g_autoptr(DdpScenario) s = fixture_scenario("tiny.model", 4, NULL);
  s->setup.optimizer = DDP_OPTIMIZER_ADAM;
  g_autoptr(DdpResult) ddp = ddp_simulate(s, NULL, NULL);
  g_assert_nonnull(ddp);
  s->setup.mode = DDP_MODE_ZERO1;
  g_autoptr(GError) error = NULL;
  g_autoptr(DdpResult) zero = ddp_simulate(s, NULL, &error);
  g_assert_no_error(error);
  double share = ddp_zero_largest_share(s->model, 4);
  g_autoptr(DdpCompute) compute = ddp_strategy_compute(s, NULL, 1.0);
  double optimizer_ms = (double)ddp_compute_optimizer_ns(compute) / 1e6;
  double broadcast_ms = 0;
  for (guint i = 0; i < s->model->n_params; i++) {
    double bytes = (double)s->model->params[i].numel * ddp_dtype_size(s->model->params[i].dtype);
    broadcast_ms += (3 * 5.0 + bytes / 100000.0) / 1e3;
  }
  g_assert_cmpfloat_with_epsilon(zero->mean_ms, ddp->mean_ms - (1 - share) * optimizer_ms + broadcast_ms, 1e-5);
  g_assert_cmpfloat_with_epsilon(zero->exposed_comm_ms, ddp->exposed_comm_ms + broadcast_ms, 1e-5);
  g_assert_cmpuint(zero->spans->len, ==, s->model->n_params);
  g_assert_cmpfloat_with_epsilon(zero->memory.optimizer_state, ddp->memory.optimizer_state * share, 1);
  /* overlap_with_ddp is refused, not silently ignored */
  s->setup.shard.overlap_with_ddp = TRUE;
  g_autoptr(GError) refused = NULL;
  g_assert_null(ddp_simulate(s, NULL, &refused));
  g_assert_error(refused, DDP_SCENARIO_ERROR, DDP_SCENARIO_ERROR_INVALID);
}

/* ZeRO-1 under a calibration that timed Broadcast on the fixture's 4 GPUs (one node of ab4): the
 * weights (1024 · 1024 fp32 = 4 194 304 bytes) took 50 µs each, the biases (4 096 bytes) 7 µs, so
 * the four broadcasts after the step add 2 · (50 + 7) = 114 µs, none hidden. */
static void
test_calibrated(void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(DdpCalibDb) db = ddp_calibdb_open(":memory:", DDP_CALIBDB_WRITE, &error);
  DdpCalibRun run = { .host = "h", .gpu_name = "", .gpus_per_node = 4, .nodes = 1, .ranks = 4, .program = "test" };
  gint64 id = ddp_calibdb_run_begin(db, &run, &error);
  g_assert_true(ddp_calibdb_batch_begin(db, id, "import/nccl-tests", &error));
  static const gint64 sizes[] = { 4096, 4194304 };
  static const double us[] = { 7, 50 };
  for (guint i = 0; i < G_N_ELEMENTS(sizes); i++) {
    DdpCalibCollectivePoint p = { .op = "broadcast", .algorithm = "auto", .protocol = "auto", .ranks = 4, .nodes = 1,
                                  .bytes = sizes[i], .in_place = TRUE, .time_us = us[i] };
    g_assert_true(ddp_calibdb_batch_add_collective(db, &p, &error));
  }
  g_assert_true(ddp_calibdb_batch_commit(db, NULL, &error));
  g_autoptr(DdpScenario) s = fixture_scenario("tiny.model", 4, NULL);
  s->setup.optimizer = DDP_OPTIMIZER_ADAM;
  s->calibration = ddp_fit_from_db(db, NULL, 0, NULL, &error);
  g_assert_no_error(error);
  g_autoptr(DdpResult) ddp = ddp_simulate(s, NULL, &error);   /* no AllReduce measured: the model's */
  g_assert_no_error(error);
  s->setup.mode = DDP_MODE_ZERO1;
  g_autoptr(DdpResult) zero = ddp_simulate(s, NULL, &error);
  g_assert_no_error(error);
  g_assert_cmpuint(zero->spans->len, ==, 4);
  for (guint i = 0; i < zero->spans->len; i++) {
    const DdpCommSpan *c = &g_array_index(zero->spans, DdpCommSpan, i);
    g_assert_cmpint(c->end_ns - c->start_ns, ==, c->bytes == 4096 ? 7000 : 50000);
  }
  double share = ddp_zero_largest_share(s->model, 4);
  g_autoptr(DdpCompute) compute = ddp_strategy_compute(s, NULL, 1.0);
  double optimizer_ms = (double)ddp_compute_optimizer_ns(compute) / 1e6;
  g_assert_cmpfloat_with_epsilon(zero->mean_ms, ddp->mean_ms - (1 - share) * optimizer_ms + 0.114, 1e-9);
  g_assert_cmpfloat_with_epsilon(zero->exposed_comm_ms, ddp->exposed_comm_ms + 0.114, 1e-9);
}

int
main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/zero/partition", test_partition);
  g_test_add_func("/zero/iteration", test_iteration);
  g_test_add_func("/zero/calibrated", test_calibrated);
  return g_test_run();
}
