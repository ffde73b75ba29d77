/* zero — ZeroRedundancyOptimizer with DDP (see zero.h).
 *
 * ZeroRedundancyOptimizer partitions the parameters among the ranks greedily by size
 * (_partition_parameters: each parameter to the rank with the fewest elements so far), so each
 * owns about 1/N of them; step() runs the wrapped optimizer on the local partition only, then
 * _sync_params broadcasts each rank's partition from its owner to all (one broadcast per rank,
 * issued back to back and waited for before step() returns).  The gradients are DDP's, reduced by
 * its bucketed AllReduces as ddp.c simulates them.  So, against DDP:
 *     T_zero1 = T_ddp − T_opt + T_opt/N + Σ_ranks Bcast(Ψ·s/N)
 * and the memory is DDP's with the optimizer state divided by N (strategy.c).  overlap_with_ddp
 * (the step and broadcasts run bucket by bucket inside DDP's communication hook) is not modelled. */
#include "zero.h"

#include "strategy.h"

#include <math.h>

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
  g_autoptr(DdpCompute) compute = ddp_strategy_compute(scenario, options ? options->compute : NULL, 1.0);
  double optimizer_ms = (double)ddp_compute_optimizer_ns(compute) / 1e6;
  double saved_ms = optimizer_ms * (1.0 - 1.0 / (double)n);
  double broadcast_ms = 0;
  r->spans = g_array_new(FALSE, FALSE, sizeof(DdpCommSpan));
  if (n > 1) {
    g_autoptr(DdpCollective) collective = ddp_collective_new(scenario->cluster, n, error);
    if (!collective) {
      ddp_result_free(r);
      return NULL;
    }
    guint64 part = (guint64)ddp_model_param_bytes(scenario->model) / n;
    DdpCollectiveCost cost;
    ddp_collective_broadcast(collective, part, &cost);
    gint64 at = ddp_time_from_ns((r->mean_ms - saved_ms) * 1e6);
    for (guint64 rank = 0; rank < MIN(n, 4096); rank++) {   /* the spans of the first 4096 owners */
      gint64 d = ddp_time_from_ns(cost.time_us * 1e3);
      DdpCommSpan span = { DDP_OP_BROADCAST, -1, 0, FALSE, part, at, at + d };
      g_array_append_val(r->spans, span);
      at += d;
    }
    broadcast_ms = (double)n * cost.time_us / 1e3;
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
  r->shard_gpus = n;
  r->samples_per_s = (double)n * scenario->setup.batch * scenario->setup.accumulate / (r->mean_ms / 1e3);
  if (r->single_gpu_ms > 0)
    r->scaling_efficiency = r->single_gpu_ms / r->mean_ms;
  ddp_strategy_memory(scenario->model, &scenario->cluster->gpu, &scenario->setup, n, 0, 0, &r->memory);
  return r;
}
