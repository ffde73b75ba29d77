/* strategy — memory per data-parallel strategy (see strategy.h; derivation in docs/model.md
 * "Strategies beyond DDP", memory). */
#include "strategy.h"

#include <math.h>

/**
 * ddp_strategy_model_state_bytes:
 * The ZeRO paper's per-GPU model states (strategy.h).  @stage above 3 is a programmer error.
 */
double
ddp_strategy_model_state_bytes(double params, double p, double g, double k, guint stage, double ranks)
{
  g_return_val_if_fail(stage <= 3 && ranks >= 1, 0);
  double sharded_p = stage >= 3 ? p : 0, sharded_g = stage >= 2 ? g : 0, sharded_k = stage >= 1 ? k : 0;
  return params * ((p - sharded_p) + (g - sharded_g) + (k - sharded_k)) +
         params * (sharded_p + sharded_g + sharded_k) / ranks;
}

/**
 * ddp_strategy_memory:
 * DDP keeps the parameters, gradients, its flat buckets (unless gradient_as_bucket_view) and the
 * optimizer state whole (stage 0).  ZeroRedundancyOptimizer keeps 1/N of the optimizer state
 * (stage 1; the DDP buckets stay).  FSDP keeps no DDP buckets: NO_SHARD is stage 0 without them;
 * SHARD_GRAD_OP, FULL_SHARD and HYBRID_SHARD keep 1/N of the flat parameters, their gradients and
 * the optimizer state (the sharded FlatParameter and its sharded .grad, _flat_param.py), plus what
 * the caller says is unsharded at the peak.  Activations and the runtime reserve are DDP's.
 */
void
ddp_strategy_memory(const DdpModel *model, const DdpGpuSpec *gpu, const DdpSetup *setup, guint64 shard_ranks,
                    double unsharded_param_bytes, double unsharded_grad_bytes, DdpMemory *out)
{
  ddp_compute_memory(model, gpu, setup->precision, setup->batch, setup->optimizer, setup->gradient_as_bucket_view,
                     setup->activation_checkpointing, out);
  double n = (double)MAX(shard_ranks, 1);
  if (setup->mode == DDP_MODE_ZERO1) {
    out->optimizer_state /= n;
  } else if (setup->mode == DDP_MODE_FSDP) {
    /* FSDP's --precision is its MixedPrecision param_dtype (the unsharded bf16/fp16 parameters the
     * caller counts), not autocast over fp32 modules: no cached copies */
    if (setup->precision == DDP_PRECISION_FP16 || setup->precision == DDP_PRECISION_BF16)
      out->weights -= ddp_compute_autocast_copy_bytes(model);
    out->buckets = 0;
    if (setup->shard.sharding != DDP_SHARDING_NONE) {
      out->weights = out->weights / n + unsharded_param_bytes;
      out->grads = out->grads / n + unsharded_grad_bytes;
      out->optimizer_state /= n;
    }
  }
  out->total = out->weights + out->grads + out->buckets + out->optimizer_state + out->activations + out->runtime_reserve;
  out->fits = out->total <= gpu->memory_GB * 1e9;
}

/**
 * ddp_strategy_memory_advice:
 * Memory is affine in the batch under every strategy (only the activations grow with it), so the
 * run's own figures give the rest: states = total − activations, activations / batch a sample.
 * Under FSDP the micro-batches keep the gradients sharded only with --fsdp-accumulate sharded
 * (no_sync holds every unit's unsharded gradient until the last micro-step, fsdp.c), so that is
 * what the accumulate line proposes.
 */
char *
ddp_strategy_memory_advice(const DdpScenario *scenario, const DdpMemory *m)
{
  const DdpSetup *setup = &scenario->setup;
  const DdpGpuSpec *gpu = &scenario->cluster->gpu;
  if (setup->mode == DDP_MODE_DDP)
    return ddp_compute_memory_advice(scenario->model, gpu, setup->precision, setup->batch, setup->accumulate,
                                     setup->optimizer, setup->gradient_as_bucket_view, setup->activation_checkpointing);
  GString *out = g_string_new(NULL);
  if (m->fits)
    return g_string_free(out, FALSE);
  double capacity = gpu->memory_GB * 1e9, states = m->total - m->activations;
  gboolean fsdp = setup->mode == DDP_MODE_FSDP;
  ddp_compute_batch_advice(out, states, m->activations / setup->batch, capacity, setup->batch, setup->accumulate,
                           fsdp ? " --fsdp-accumulate sharded" : "",
                           fsdp ? "FSDP's shards of the states, the units it gathers and the runtime"
                                : "weights, gradients, buckets, the optimizer state's shard and the runtime");
  if (!setup->activation_checkpointing) {
    /* only the activations change: the same per-sample scale (autocast's halving) applies */
    double plain = ddp_compute_activation_bytes(scenario->model, FALSE);
    double checkpointed = plain > 0 ? m->activations * ddp_compute_activation_bytes(scenario->model, TRUE) / plain : 0;
    ddp_compute_checkpointing_advice(out, scenario->model, m, checkpointed, capacity, setup->batch);
  }
  if (!fsdp && m->buckets > 0)
    g_string_append_printf(out, "--gradient-as-bucket-view drops DDP's bucket copy of the gradients: %.2f GB at batch %.0f%s\n",
                           (m->total - m->buckets) / 1e9, setup->batch, m->total - m->buckets <= capacity ? " (fits)" : "");
  ddp_compute_gpu_advice(out, m->total);
  if (states > capacity) {
    if (!fsdp)
      g_string_append(out, "FSDP (--mode fsdp) shards the weights and gradients too, not only the optimizer state\n");
    else if (setup->shard.sharding != DDP_SHARDING_FULL)
      g_string_append(out, "--sharding full shards the states over every GPU of the job\n");
    else
      g_string_append(out, "more GPUs shard the states further: each keeps 1/N of them\n");
  }
  return g_string_free(out, FALSE);
}

/* The compute model of @scenario before any --step-ms scaling: the GPU's defaults (or @options),
 * a calibration's efficiencies and measured layer times, the host issuing every layer pass
 * @host_factor times (the GIL: N replicas' forward launches from one process).  ddp.c's sim_init
 * builds on it (it adds per-bucket host time before scaling); ddp_strategy_compute scales it. */
DdpCompute *
ddp_strategy_compute_unscaled(const DdpScenario *scenario, const DdpComputeOptions *options, double host_factor)
{
  const DdpSetup *setup = &scenario->setup;
  DdpComputeOptions o;
  if (options)
    o = *options;
  else
    ddp_compute_options_init_gpu(&o, &scenario->cluster->gpu);
  o.host_layer_us = setup->overheads.host_layer_us * host_factor;
  o.channels_last = setup->channels_last;
  o.activation_checkpointing = setup->activation_checkpointing;
  if (scenario->calibration) {
    ddp_fit_apply_compute_options(scenario->calibration, &o);
    o.generation_floor = FALSE;   /* the measured machine, not a healthy default */
  }
  DdpCompute *compute = ddp_compute_new(scenario->model, &scenario->cluster->gpu, setup->precision, setup->batch,
                                        setup->optimizer, &o);
  for (guint l = 0; scenario->calibration && l < scenario->model->n_layers; l++) {
    g_autofree char *signature = ddp_fit_layer_signature(scenario->model, l);
    double forward_us, backward_us;
    if (ddp_fit_layer_time(scenario->calibration, signature, setup->precision, setup->batch, &forward_us, &backward_us))
      ddp_compute_set_layer_us(compute, l, forward_us, backward_us);
  }
  return compute;
}

/* ddp_strategy_compute_unscaled, then --step-ms net of the host time per iteration. */
DdpCompute *
ddp_strategy_compute(const DdpScenario *scenario, const DdpComputeOptions *options, double host_factor)
{
  const DdpSetup *setup = &scenario->setup;
  DdpCompute *compute = ddp_strategy_compute_unscaled(scenario, options, host_factor);
  gint64 step_ns = (gint64)llround(setup->step_ms * 1e6 - setup->overheads.host_iteration_us * 1e3);
  if (setup->step_ms > 0 && step_ns > 0)   /* ddp.c refuses the other case (the DDP comparison run) */
    ddp_compute_scale_to_step(compute, step_ns);
  return compute;
}
