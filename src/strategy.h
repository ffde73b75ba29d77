/* strategy — what the data-parallel strategies share beyond the result type (ddp.h): the memory
 * each keeps per GPU.  Model states follow the ZeRO paper (Rajbhandari et al., "ZeRO: Memory
 * Optimizations Toward Training Trillion Parameter Models", SC 2020, §5 and Figure 1): Ψ
 * parameters, P bytes of parameters, G of gradients and K of optimizer state per parameter, N_d
 * data-parallel ranks:
 *     DDP (stage 0)        (P + G + K)·Ψ
 *     P_os  (ZeRO-1)       (P + G)·Ψ + K·Ψ/N_d
 *     P_os+g (ZeRO-2)      P·Ψ + (G + K)·Ψ/N_d
 *     P_os+g+p (ZeRO-3)    (P + G + K)·Ψ/N_d
 * and PyTorch's strategies map onto them as docs/model.md "Strategies beyond DDP" derives:
 * ZeroRedundancyOptimizer = stage 1, FSDP SHARD_GRAD_OP = stage 2 (plus the unsharded parameters
 * it keeps between forward and backward), FULL_SHARD = stage 3 over all GPUs, HYBRID_SHARD =
 * stage 3 inside a node, NO_SHARD = stage 0; FSDP adds the unsharded units in flight. */
#ifndef DDP_STRATEGY_H
#define DDP_STRATEGY_H

#include <glib.h>
#include "compute.h"
#include "scenario.h"

/* Model-state bytes per GPU of ZeRO stage @stage (0..3) for @params parameters of @p, @g and @k
 * bytes each, sharded over @ranks. */
double ddp_strategy_model_state_bytes(double params, double p, double g, double k, guint stage, double ranks);

/* Per-GPU memory of @setup's strategy (setup.mode, setup.shard.sharding) on @shard_ranks ranks
 * (the FSDP shard group, or the data-parallel group for ZeRO-1): DDP's terms (ddp_compute_memory)
 * with the optimizer state, gradients and parameters sharded as the strategy shards them;
 * @unsharded_param_bytes and @unsharded_grad_bytes (FSDP: the full-size units alive at the peak,
 * fsdp.c) are added to weights and grads. */
void ddp_strategy_memory(const DdpModel *model, const DdpGpuSpec *gpu, const DdpSetup *setup, guint64 shard_ranks,
                         double unsharded_param_bytes, double unsharded_grad_bytes, DdpMemory *out);

/* When @m (the run's memory per GPU at its batch) does not fit: what would, one line each with its
 * bytes per GPU; "" when it fits.  Plain DDP: ddp_compute_memory_advice.  ZeRO-1 and FSDP: a
 * smaller batch with --accumulate (FSDP: with --fsdp-accumulate sharded, which keeps the gradients
 * sharded between micro-steps), ZeRO-1 without DDP's bucket copy, a GPU with more memory, and
 * where the states alone do not fit, the next step of sharding.  Free with g_free(). */
char *ddp_strategy_memory_advice(const DdpScenario *scenario, const DdpMemory *m);

/* The compute model of @scenario (calibration, measured layers, --step-ms net of the host time
 * per iteration), with the host issuing every layer pass
 * @host_factor times (1 but for DataParallel's GIL).  @options NULL: the GPU's defaults.
 * Returns: (transfer full). */
DdpCompute *ddp_strategy_compute(const DdpScenario *scenario, const DdpComputeOptions *options, double host_factor);
/* The same before the --step-ms scaling (strategy.c says why ddp.c needs it apart). */
DdpCompute *ddp_strategy_compute_unscaled(const DdpScenario *scenario, const DdpComputeOptions *options,
                                          double host_factor);

#endif
