/* zero — ZeroRedundancyOptimizer with DDP (see zero.h).
 *
 * ZeroRedundancyOptimizer (zero_redundancy_optimizer.py, read in PyTorch 1.13 and 2.x) partitions
 * the parameters among the ranks greedily: sorted by numel, largest first, each to the rank with
 * the fewest elements so far (_partition_parameters, _get_min_index: the first such rank); step()
 * runs the wrapped optimizer on the local partition only, then _sync_params broadcasts every
 * parameter from its owner (_broadcast_params_from_rank: one dist.broadcast per parameter tensor,
 * all issued asynchronously, rank by rank, and waited for before step() returns; with
 * parameters_as_bucket_view one per rank — not the default).  The gradients are DDP's, reduced by
 * its bucketed AllReduces as ddp.c simulates them.  So, against DDP, with s the largest
 * partition's share of the elements (1/N when they split evenly; a rank owning one large
 * embedding may hold much more):
 *     T_zero1 = T_ddp − T_opt + s·T_opt + Σ_tensors Bcast(tensor bytes)
 * (every rank waits for the slowest step before its broadcasts complete) and the memory is DDP's
 * with the optimizer state × s (strategy.c).  overlap_with_ddp (the step and broadcasts run bucket
 * by bucket inside DDP's communication hook) is not modelled.  Under a calibration that timed
 * Broadcast on exactly these ranks and servers (nccl-tests broadcast_perf, fit.h), each Bcast is
 * its measured curve; elsewhere the collective model's. */
#include "zero.h"

#include "strategy.h"

#include <math.h>
#include <stdlib.h>

static int
compare_numel_desc(gconstpointer a, gconstpointer b)
{
  gint64 x = *(const gint64 *)a, y = *(const gint64 *)b;
  return (x < y) - (x > y);
}

/**
 * ddp_zero_largest_share:
 * See zero.h: the greedy partition of _partition_parameters, largest tensor first, each to the
 * first rank with the fewest elements.  O(params × ranks) for up to 4096 ranks; beyond that the
 * largest partition is at least max(largest tensor, total/N) and the greedy one is within one
 * tensor of it, so that bound is used.
 */
double
ddp_zero_largest_share(const DdpModel *model, guint64 ranks)
{
  g_autofree gint64 *numel = g_new(gint64, MAX(model->n_params, 1));
  double total = 0;
  for (guint i = 0; i < model->n_params; i++) {
    numel[i] = model->params[i].numel;
    total += (double)numel[i];
  }
  if (ranks <= 1 || total <= 0)
    return 1.0;
  qsort(numel, model->n_params, sizeof(gint64), compare_numel_desc);
  if (ranks > 4096)
    return MAX((double)numel[0], total / (double)ranks) / total;
  g_autofree gint64 *sizes = g_new0(gint64, ranks);
  for (guint i = 0; i < model->n_params; i++) {
    guint64 min = 0;
    for (guint64 r = 1; r < ranks; r++)
      if (sizes[r] < sizes[min])
        min = r;
    sizes[min] += numel[i];
  }
  gint64 largest = 0;
  for (guint64 r = 0; r < ranks; r++)
    largest = MAX(largest, sizes[r]);
  return (double)largest / total;
}

DdpResult *
ddp_zero_simulate(const DdpScenario *scenario, const DdpRunOptions *options, GError **error)
{
  if (scenario->setup.shard.overlap_with_ddp) {
    g_set_error(error, DDP_SCENARIO_ERROR, DDP_SCENARIO_ERROR_INVALID,
                "--overlap-with-ddp: ZeroRedundancyOptimizer(overlap_with_ddp=True) is not modelled yet");
    return NULL;
  }
  DdpScenario ddp = *scenario;
  ddp.setup.mode = DDP_MODE_DDP;
  DdpResult *r = ddp_simulate(&ddp, options, error);
  if (!r)
    return NULL;
  guint64 n = r->gpus;
  const DdpModel *model = scenario->model;
  g_autoptr(DdpCompute) compute = ddp_strategy_compute(scenario, options ? options->compute : NULL, 1.0);
  double share = ddp_zero_largest_share(model, n);
  double optimizer_ms = (double)ddp_compute_optimizer_ns(compute) / 1e6;
  double saved_ms = optimizer_ms * (1.0 - share);
  double broadcast_ms = 0;
  r->spans = g_array_new(FALSE, FALSE, sizeof(DdpCommSpan));
  if (n > 1) {
    g_autoptr(DdpCollective) collective = ddp_collective_new(scenario->cluster, n, error);
    if (!collective) {
      ddp_result_free(r);
      return NULL;
    }
    /* measured Broadcasts answer where a calibration timed exactly this communicator (fit.h) */
    if (scenario->calibration)
      ddp_collective_use_calibration(collective, scenario->calibration);
    /* the broadcasts follow the (shortened) step of the reported iteration */
    gint64 saved_ns = ddp_time_from_ns(saved_ms * 1e6);
    gint64 at = r->reported_iteration_ns - saved_ns;
    for (guint w = 0; w < r->n_timelines; w++) {
      GArray *segs = r->timelines[w].segments;
      for (guint k = 0; k < segs->len; k++) {
        DdpSegment *g = &g_array_index(segs, DdpSegment, k);
        if (g->kind == DDP_SEGMENT_OPTIMIZER) {
          g->end_ns = MAX(g->start_ns, g->end_ns - saved_ns);
          at = MAX(at, g->end_ns);
        }
      }
    }
    for (guint i = 0; i < model->n_params; i++) {
      guint64 bytes = (guint64)model->params[i].numel * ddp_dtype_size(model->params[i].dtype);
      DdpCollectiveCost cost;
      ddp_collective_broadcast(collective, bytes, &cost);
      gint64 d = ddp_time_from_ns(cost.time_us * 1e3);
      DdpCommSpan span = { DDP_OP_BROADCAST, -1, 0, FALSE, bytes, at, at + d };
      g_array_append_val(r->spans, span);
      at += d;
      broadcast_ms += cost.time_us / 1e3;
    }
  }
  double delta = broadcast_ms - saved_ms;
  for (guint i = 0; i < r->iterations; i++)
    r->iteration_ms[i] += delta;
  r->mean_ms += delta;
  r->p50_ms += delta;
  r->p99_ms += delta;
  r->first_iteration_ms += delta;
  r->compute_ms -= saved_ms;
  r->comm_ms += broadcast_ms;
  r->exposed_comm_ms += broadcast_ms;   /* the broadcasts follow the step: nothing hides them */
  r->overlap = r->comm_ms > 0 ? CLAMP(1.0 - r->exposed_comm_ms / r->comm_ms, 0.0, 1.0) : 1.0;
  r->reported_iteration_ns += ddp_time_from_ns(delta * 1e6);
  r->reported_exposed_comm_ns += ddp_time_from_ns(broadcast_ms * 1e6);
  r->shard_gpus = n;
  r->samples_per_s = (double)n * scenario->setup.batch * scenario->setup.accumulate / (r->mean_ms / 1e3);
  if (r->single_gpu_ms > 0)
    r->scaling_efficiency = r->single_gpu_ms / r->mean_ms;
  ddp_strategy_memory(model, &scenario->cluster->gpu, &scenario->setup, 0, 0, 0, &r->memory);
  r->memory.total -= r->memory.optimizer_state * (1.0 - share);
  r->memory.optimizer_state *= share;
  r->memory.fits = r->memory.total <= scenario->cluster->gpu.memory_GB * 1e9;
  return r;
}
