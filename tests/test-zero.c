/* Tests for zero (src/zero.c): ZeroRedundancyOptimizer's greedy partition of the parameters
 * (_partition_parameters) and the ZeRO-1 iteration against DDP's on the closed-form fixture; with
 * overlap_with_ddp the bucket partition, the hooks' schedule derived by hand and the fixture's
 * iteration under both hooks. */
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
}

/* overlap_with_ddp's schedule alone (zero.c "How time advances"), in ns: 2 ranks, 3 buckets, owners
 * bucket mod 2 = 0, 1, 0; launches 10, 30, 50; AllReduces 4 each; steps 20, 6, 3 (29 in all);
 * broadcasts 2 each; backward ends at 52.
 * hook_with_zero_step: the AllReduces as DDP's, 10–14, 30–34, 50–54; after backward rank 0 steps
 *   on bucket 0 52–72 and bucket 2 72–75, rank 1 on bucket 1 52–58; the broadcasts queue behind
 *   AllReduce 2 and each behind its step: 72–74, 74–76, 76–78.  Ready at 78; DDP would have ended
 *   at max(52, 54) + 29 = 83.
 * hook_with_zero_step_interleaved: AllReduce 0 10–14, rank 0's step on a side stream 14–34, its
 *   broadcast 34–36; AllReduce 1, launched at 30, queues behind that broadcast: 36–40; rank 1 steps
 *   40–46, broadcast 46–48; AllReduce 2 50–54, step 54–57, broadcast 57–59.  Ready at 59: steps 0
 *   and 1 ran beside backward (they end at 34 and 46 < 52), only bucket 2's step and broadcast
 *   follow the last AllReduce. */
static void
test_overlap_schedule(void)
{
  static const gint64 launch[] = { 10, 30, 50 }, all_reduce[] = { 4, 4, 4 }, step[] = { 20, 6, 3 }, bcast[] = { 2, 2, 2 };
  static const struct {
    DdpZeroHook hook;
    gint64 ready;
    gint64 expect[6][3];   /* AllReduce start, end; step start, end; broadcast start, end */
  } cases[] = {
    { DDP_ZERO_HOOK_STEP, 78, { { 10, 30, 50 }, { 14, 34, 54 }, { 52, 52, 72 }, { 72, 58, 75 }, { 72, 74, 76 }, { 74, 76, 78 } } },
    { DDP_ZERO_HOOK_INTERLEAVED, 59, { { 10, 36, 50 }, { 14, 40, 54 }, { 14, 40, 54 }, { 34, 46, 57 }, { 34, 46, 57 }, { 36, 48, 59 } } },
  };
  for (gsize i = 0; i < G_N_ELEMENTS(cases); i++) {
    DdpZeroOverlapPlan plan = { .n_buckets = 3, .ranks = 2, .launch_ns = launch, .all_reduce_ns = all_reduce,
                                .step_ns = step, .broadcast_ns = bcast, .first_start_ns = 10, .backward_end_ns = 52,
                                .hook = cases[i].hook };
    gint64 times[6][3];
    DdpZeroOverlapTimes t = { times[0], times[1], times[2], times[3], times[4], times[5] };
    g_assert_cmpint(ddp_zero_overlap_schedule(&plan, &t), ==, cases[i].ready);
    for (guint k = 0; k < 6; k++)
      for (guint b = 0; b < 3; b++)
        g_assert_cmpint(times[k][b], ==, cases[i].expect[k][b]);
  }
  /* one rank: nothing to broadcast; its steps follow one another after backward */
  static const gint64 none[] = { 0, 0, 0 };
  DdpZeroOverlapPlan one = { .n_buckets = 3, .ranks = 1, .launch_ns = launch, .all_reduce_ns = all_reduce,
                             .step_ns = step, .broadcast_ns = none, .first_start_ns = 10, .backward_end_ns = 52,
                             .hook = DDP_ZERO_HOOK_STEP };
  gint64 times[6][3];
  DdpZeroOverlapTimes t = { times[0], times[1], times[2], times[3], times[4], times[5] };
  g_assert_cmpint(ddp_zero_overlap_schedule(&one, &t), ==, 52 + 29);
}

/* overlap_with_ddp end to end on the fixture (tiny.model on 4 GPUs of ab4, every overhead and the
 * contention off; test-ddp.c has the pieces, in ns): DDP's rebuilt layout is two buckets of
 * 4 198 400 bytes, fc2's then fc1's (the 1 MiB first bucket closes after fc2.weight).  Forward
 * 150 000; fc2's backward with its hook copies ends at 266 185, fc1's at 482 370; AllReduce of
 * 4 198 400 B: 2·3/4·41 984 + 6·5 000 = 92 976: bucket 0 266 185–359 161, bucket 1 482 370–575 346;
 * finalize 32 370; SGD momentum over all parameters 89 566.  DDP: 575 346 + 32 370 + 89 566 =
 * 697 282.  Each bucket holds half the elements: a step of 44 783 on its owner (bucket 0 rank 0,
 * bucket 1 rank 1), a broadcast of 3·5 000 + 41 984 = 56 984.
 * hook_with_zero_step: rank 0 steps 482 370–527 153, rank 1 after AllReduce 1, 575 346–620 129;
 *   broadcasts 575 346–632 330 and 632 330–689 314; + finalize: 721 684 (exposed: 689 314 −
 *   482 370 − 44 783 = 162 161; compute 604 306 − 89 566 + 44 783 = 559 523).
 * interleaved: rank 0 steps 359 161–403 944, beside fc1's backward, broadcasts 403 944–460 928;
 *   AllReduce 1 482 370–575 346, step 575 346–620 129, broadcast 620 129–677 113; + finalize:
 *   709 483 (exposed 677 113 − 482 370 = 194 743; compute 604 306 − 89 566 = 514 740).
 * The bucket partition gives each owner half the elements: the optimizer state × 1/2.  Iteration 0
 * does not step: DDP's less 89 566. */
static void
test_overlap_tiny(void)
{
  g_autoptr(DdpScenario) s = fixture_scenario("tiny.model", 4, NULL);
  s->setup.overheads.overlap_slowdown = 0;
  s->cluster->overlap_slowdown = 0;
  g_autoptr(GError) error = NULL;
  g_autoptr(DdpResult) ddp = ddp_simulate(s, NULL, &error);
  g_assert_no_error(error);
  g_assert_cmpuint(ddp->n_buckets, ==, 2);
  assert_ms_ns(ddp->mean_ms, 697282);
  s->setup.mode = DDP_MODE_ZERO1;
  s->setup.shard.overlap_with_ddp = TRUE;
  static const struct {
    DdpZeroHook hook;
    gint64 iteration, exposed, compute, broadcast[2][2], all_reduce_1;
  } cases[] = {
    { DDP_ZERO_HOOK_STEP, 721684, 162161, 559523, { { 575346, 632330 }, { 632330, 689314 } }, 482370 },
    { DDP_ZERO_HOOK_INTERLEAVED, 709483, 194743, 514740, { { 403944, 460928 }, { 620129, 677113 } }, 482370 },
  };
  for (gsize i = 0; i < G_N_ELEMENTS(cases); i++) {
    s->setup.shard.zero_hook = cases[i].hook;
    guint64 watch = 0;
    DdpRunOptions options = { .watch_ranks = &watch, .n_watch_ranks = 1 };
    g_autoptr(DdpResult) r = ddp_simulate(s, &options, &error);
    g_assert_no_error(error);
    assert_ms_ns(r->mean_ms, cases[i].iteration);
    g_assert_cmpint(r->reported_iteration_ns, ==, cases[i].iteration);
    assert_ms_ns(r->exposed_comm_ms, cases[i].exposed);
    assert_ms_ns(r->compute_ms, cases[i].compute);
    assert_ms_ns(r->comm_ms, 2 * 92976 + 2 * 56984);
    g_assert_cmpuint(r->spans->len, ==, 2);
    for (guint b = 0; b < 2; b++) {
      const DdpCommSpan *c = &g_array_index(r->spans, DdpCommSpan, b);
      g_assert_cmpint(c->op, ==, DDP_OP_BROADCAST);
      g_assert_cmpint(c->unit, ==, (int)b);
      g_assert_cmpint(c->start_ns, ==, cases[i].broadcast[b][0]);
      g_assert_cmpint(c->end_ns, ==, cases[i].broadcast[b][1]);
    }
    g_assert_cmpint(r->buckets[1].start_ns, ==, cases[i].all_reduce_1);
    assert_ms_ns(r->first_iteration_ms, (gint64)llround(ddp->first_iteration_ms * 1e6) - 89566);
    g_assert_cmpfloat_with_epsilon(r->memory.optimizer_state, ddp->memory.optimizer_state / 2, 1);
    /* rank 0's lane: under hook_with_zero_step its step on bucket 0 after backward, the wait for
     * the broadcasts, finalize to the end */
    const GArray *segs = r->timelines[0].segments;
    const DdpSegment *last = &g_array_index(segs, DdpSegment, segs->len - 1);
    g_assert_cmpint(last->kind, ==, DDP_SEGMENT_FINALIZE);
    g_assert_cmpint(last->end_ns, ==, cases[i].iteration);
    gboolean stepped = FALSE;
    for (guint k = 0; k < segs->len; k++) {
      const DdpSegment *g = &g_array_index(segs, DdpSegment, k);
      if (g->kind != DDP_SEGMENT_OPTIMIZER)
        continue;
      g_assert_cmpint(g->index, ==, 0);
      g_assert_cmpint(g->start_ns, ==, 482370);
      g_assert_cmpint(g->end_ns, ==, 527153);
      stepped = TRUE;
    }
    g_assert_true(stepped == (cases[i].hook == DDP_ZERO_HOOK_STEP));
  }
}

/* The bucket partition: buckets of 8, 3, 5, 1 elements on 2 ranks → rank 0 {8, 5} = 13 of 17; on
 * 3 ranks → {8, 1}, {3}, {5}: 9/17; on 8 ranks one bucket each: 8/17. */
static void
test_bucket_share(void)
{
  static const gint64 numel[] = { 8, 3, 5, 1 };
  DdpModel model = { 0 };
  model.n_params = G_N_ELEMENTS(numel);
  model.params = g_new0(DdpParam, model.n_params);
  DdpBucketSchedule buckets[G_N_ELEMENTS(numel)] = { { 0 } };
  guint index[G_N_ELEMENTS(numel)];
  for (guint i = 0; i < model.n_params; i++) {
    model.params[i].numel = numel[i];
    index[i] = i;
    buckets[i].n_params = 1;
    buckets[i].params = &index[i];
  }
  g_assert_cmpfloat_with_epsilon(ddp_zero_bucket_share(&model, buckets, 4, 2), 13.0 / 17, 1e-12);
  g_assert_cmpfloat_with_epsilon(ddp_zero_bucket_share(&model, buckets, 4, 3), 9.0 / 17, 1e-12);
  g_assert_cmpfloat_with_epsilon(ddp_zero_bucket_share(&model, buckets, 4, 8), 8.0 / 17, 1e-12);
  g_free(model.params);
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
  g_test_add_func("/zero/overlap/schedule", test_overlap_schedule);
  g_test_add_func("/zero/overlap/tiny", test_overlap_tiny);
  g_test_add_func("/zero/overlap/bucket-share", test_bucket_share);
  g_test_add_func("/zero/calibrated", test_calibrated);
  return g_test_run();
}
