/* report — tables, JSON and CSV for predict and buckets (see report.h).  Definitions printed
 * here are the ones docs/json.md states: scaling efficiency = T(1 GPU) / T(N GPUs) at fixed per-GPU
 * batch (weak scaling); overlap = fraction of communication hidden behind compute. */
#include "report.h"

#include "dp.h"

#include "collective.h"
#include "jsonout.h"

#include <math.h>
#include <string.h>

char *
ddp_report_group_digits(gint64 value)
{
  g_autofree char *digits = g_strdup_printf("%" G_GINT64_FORMAT, value < 0 ? -value : value);
  GString *out = g_string_new(value < 0 ? "-" : "");
  gsize n = strlen(digits);
  for (gsize i = 0; i < n; i++) {
    if (i > 0 && (n - i) % 3 == 0)
      g_string_append_c(out, ' ');
    g_string_append_c(out, digits[i]);
  }
  return g_string_free(out, FALSE);
}

static double
ns_ms(gint64 ns)
{
  return (double)ns / 1e6;
}

static char *
describe_setup(const DdpScenario *s, const DdpResult *r)
{
  const DdpSetup *t = &s->setup;
  GString *out = g_string_new(NULL);
  g_string_append_printf(out, "%s on %s: %" G_GUINT64_FORMAT " GPU%s (%" G_GUINT64_FORMAT " node%s), batch %.15g/GPU",
                         s->model->name, s->cluster->name, r->gpus, r->gpus == 1 ? "" : "s", r->nodes,
                         r->nodes == 1 ? "" : "s", t->batch);
  if (t->accumulate > 1)
    g_string_append_printf(out, " x %u micro-steps", t->accumulate);
  g_string_append_printf(out, ", %s, bucket_cap_mb %g", ddp_setup_precision_label(t), t->buckets.bucket_cap_mb);
  if (t->seq_len || t->image_size)
    g_string_append_printf(out, ", input %s", s->model->input);
  if (t->comm_hook != DDP_HOOK_NONE)
    g_string_append_printf(out, ", %s compression hook", ddp_comm_hook_name(t->comm_hook));
  g_autofree char *stragglers = ddp_stragglers_to_string(s->stragglers);
  if (!ddp_stragglers_is_none(s->stragglers))
    g_string_append_printf(out, ", stragglers %s", stragglers);
  return g_string_free(out, FALSE);
}

char *
ddp_report_predict_text(const DdpScenario *s, const DdpResult *r)
{
  return ddp_report_predict_text_ex(s, r, NULL);
}

static void
bucket_row(GString *out, const DdpBucketSchedule *k)
{
  g_autofree char *bytes = ddp_report_group_digits((gint64)k->bytes);
  g_string_append_printf(out, "  %5u %13s %6u %9.3f %9.3f %9.3f %9.3f %9.3f  %-5s %s\n", k->index, bytes, k->n_params,
                         ns_ms(k->ready_ns), ns_ms(k->launch_ns), ns_ms(k->start_ns), ns_ms(k->end_ns),
                         ns_ms(k->end_ns - k->start_ns), ddp_algorithm_name(k->cost.algorithm),
                         ddp_protocol_name(k->cost.protocol));
}

/**
 * ddp_report_domains_caveat:
 * See report.h.
 */
char *
ddp_report_domains_caveat(const DdpScenario *s, const DdpResult *r, const char *prefix)
{
  /* the caveat is AllReduce's: FSDP's FULL_SHARD and SHARD_GRAD_OP gather and scatter instead */
  const DdpShardOptions *so = &s->setup.shard;
  if (!r || (s->setup.mode == DDP_MODE_FSDP && so->sharding != DDP_SHARDING_NONE && so->sharding != DDP_SHARDING_HYBRID))
    return NULL;
  return ddp_collective_domains_caveat(r->nodes, r->domains, s->cluster->nccl.algorithm, prefix, "[nccl] algorithm = ring");
}

/**
 * ddp_report_transport_caveat:
 * See report.h.
 */
char *
ddp_report_transport_caveat(const DdpScenario *s, const DdpResult *r, const char *prefix)
{
  return r ? ddp_collective_transport_caveat(s->cluster, r->nodes, prefix) : NULL;
}

/**
 * ddp_report_predict_text_ex:
 * predict's table, with @extras (nullable): cost lines after the throughput, the bucket schedule
 * left out or summarised.  Returns: (transfer full) the text.
 */
char *
ddp_report_predict_text_ex(const DdpScenario *s, const DdpResult *r, const DdpReportExtras *extras)
{
  GString *out = g_string_new(NULL);
  g_autofree char *setup = describe_setup(s, r);
  g_string_append_printf(out, "%s\n", setup);
  /* where the batch and precision came from when no flag or scenario key chose them (issue 17) */
  const DdpSetup *t = &s->setup;
  if (!g_str_has_prefix(t->batch_from, "-") || !g_str_has_prefix(t->precision_from, "-")) {
    g_autofree char *optimizer = g_str_equal(t->optimizer_from, "model file")
                                   ? g_strdup_printf("; optimizer %s: the model file", ddp_optimizer_name(t->optimizer))
                                   : g_strdup("");
    g_string_append_printf(out, "  (batch %.15g: %s%s; precision %s: %s%s%s)\n", t->batch,
                           g_str_has_prefix(t->batch_from, "-") ? "" : "the ", t->batch_from,
                           ddp_precision_name(t->precision),
                           g_str_has_prefix(t->precision_from, "-") ? "" : "the ", t->precision_from, optimizer);
  }
  /* PyTorch's own default runs cuDNN convolutions in TF32 where the GPU has it
   * (torch.backends.cudnn.allow_tf32 = True); ddpsim's fp32 is TF32 off everywhere */
  if (t->precision == DDP_PRECISION_FP32 && g_str_equal(t->precision_from, "built-in default") &&
      s->cluster->gpu.peak_tflops[DDP_PRECISION_TF32] > s->cluster->gpu.peak_tflops[DDP_PRECISION_FP32] &&
      ddp_model_has_kind(s->model, DDP_LAYER_CONV))
    g_string_append(out, "  (fp32 is TF32 off everywhere; PyTorch's own defaults run convolutions in TF32 on this GPU, "
                         "torch.backends.cudnn.allow_tf32 = True: --precision tf32 for that)\n");
  g_string_append_c(out, '\n');
  double slower = (r->first_iteration_ms / r->mean_ms - 1.0) * 100.0;
  g_string_append_printf(out, "  iteration time       mean %.3f ms   p50 %.3f ms   p99 %.3f ms   (%u steady iterations)\n",
                         r->mean_ms, r->p50_ms, r->p99_ms, r->iterations);
  if (!r->dp)   /* DataParallel has no buckets and no warm-up */
    g_string_append_printf(out, "  iteration 0          %.3f ms (%+.1f %% vs steady: %u initial bucket%s%s)\n",
                           r->first_iteration_ms, slower, r->n_initial_buckets, r->n_initial_buckets == 1 ? "" : "s",
                           r->n_initial_buckets == 1 ? ", no overlap, then the bucket rebuild" : "");
  g_string_append_printf(out, "  compute              %.3f ms per iteration\n", r->compute_ms);
  if (s->setup.activation_checkpointing)
    g_string_append_printf(out, "                       activation checkpointing: %.3f ms of it reruns every block's forward in backward\n",
                           r->recompute_ms);
  g_string_append_printf(out, "  communication        %.3f ms   exposed %.3f ms   overlap %.1f %%\n", r->comm_ms,
                         r->exposed_comm_ms, 100.0 * r->overlap);
  g_autofree char *caveat = ddp_report_domains_caveat(s, r, "                       ");
  if (caveat)
    g_string_append(out, caveat);
  g_autofree char *transport = ddp_report_transport_caveat(s, r, "                       ");
  if (transport)
    g_string_append(out, transport);
  if (r->dp)
    g_string_append_printf(out, "  host overhead        %.3f ms   (the step's host time, GIL-serialised launches, replicate)\n",
                           r->host_iteration_ms);
  else if (s->setup.overheads.jitter == 0 && g_strcmp0(s->setup.stragglers, "none") == 0)
    g_string_append_printf(out, "  straggler wait       %.3f ms   (stragglers off: every rank runs at the same speed; --jitter, --stragglers)\n",
                           r->straggler_wait_ms);
  else
    g_string_append_printf(out, "  straggler wait       %.3f ms\n", r->straggler_wait_ms);
  if (r->unused_search_ms > 0 || r->unused_map_ms > 0)
    g_string_append_printf(out, "  find_unused_params   graph search %.3f ms (host, after forward) + used-map AllReduce %.3f ms\n",
                           r->unused_search_ms, r->unused_map_ms);
  if (!r->dp) {   /* DataParallel's host terms are in its own section (dp.c) */
    g_string_append_printf(out, "  overheads            host %.3f ms/iteration + %.3f ms host-bound layers (in compute), input wait %.3f ms\n",
                           r->host_iteration_ms, r->host_layer_ms, r->input_wait_ms);
    g_autofree char *jitter = s->setup.overheads.jitter > 0
                                  ? g_strdup_printf("jitter %.3f ms (σ %.4g, slowest rank x%.4f)", r->jitter_ms,
                                                    s->setup.overheads.jitter, r->jitter_slowest)
                                  : g_strdup("jitter off");
    g_autofree char *source = r->overlap_slowdown_channels > 0
                                  ? g_strdup_printf(": NCCL's %d channels hold %d of %d SMs", r->overlap_slowdown_channels,
                                                    r->overlap_slowdown_channels, s->cluster->gpu.sms)
                                  : g_strdup("");
    g_string_append_printf(out, "                       %s, contention %.3f ms (overlap slowdown %.3f%s%s)\n", jitter,
                           r->contention_ms, r->overlap_slowdown, source,
                           r->batch_norm_waits ? "; BatchNorm waits for running collectives" : "");
  }
  g_string_append_printf(out, "  scaling efficiency   %.1f %%   (T(1 GPU, no %s) %.3f ms / T(%" G_GUINT64_FORMAT " GPUs); weak scaling, fixed per-GPU batch)\n",
                         100.0 * r->scaling_efficiency, s->setup.mode == DDP_MODE_DDP ? "DDP" : "wrapper", r->single_gpu_ms, r->gpus);
  if (r->scaling_efficiency > 1.0 && (s->setup.mode == DDP_MODE_ZERO1 || s->setup.mode == DDP_MODE_FSDP))
    g_string_append(out, "                       " DDP_REPORT_ABOVE_100 "\n");
  g_string_append_printf(out, "  throughput           %.1f samples/s\n", r->samples_per_s);
  if (extras && extras->cost) {
    DdpCostEstimate e = ddp_cost_estimate(extras->cost, r->gpus, r->samples_per_s);
    ddp_cost_text(out, extras->cost, &e);
  }
  const DdpMemory *m = &r->memory;
  g_string_append_printf(out, "  memory per GPU       %.2f GB of %.2f GB: %s\n", m->total / 1e9, s->cluster->gpu.memory_GB,
                         m->fits ? "fits" : "DOES NOT FIT");
  g_string_append_printf(out, "                       weights %.2f, grads %.2f, buckets %.2f, optimizer %.2f, activations %.2f, runtime %.2f GB\n",
                         m->weights / 1e9, m->grads / 1e9, m->buckets / 1e9, m->optimizer_state / 1e9,
                         m->activations / 1e9, m->runtime_reserve / 1e9);
  if (r->dp || (extras && extras->no_buckets))
    return g_string_free(out, FALSE);
  if (s->setup.mode == DDP_MODE_FSDP) {
    g_autofree char *wrap = s->model->n_fsdp_units > 0
                              ? g_strdup("root + the modules the model file wraps")
                              : g_strdup_printf("root + blocks, %u per unit", s->setup.shard.blocks_per_unit);
    g_string_append_printf(out, "\nFSDP %s: %u units (%s), sharded over %" G_GUINT64_FORMAT
                                " GPUs; backward_prefetch %s, forward_prefetch %s, limit_all_gathers %s\n",
                           ddp_sharding_name(s->setup.shard.sharding), r->n_units, wrap, r->shard_gpus, ddp_backward_prefetch_name(s->setup.shard.backward_prefetch),
                           s->setup.shard.forward_prefetch ? "on" : "off", s->setup.shard.limit_all_gathers ? "on" : "off");
    if (s->setup.accumulate > 1)
      g_string_append_printf(out, "  gradient accumulation: %u micro-steps, %s\n", s->setup.accumulate,
                             s->setup.shard.accumulate == DDP_FSDP_ACCUMULATE_NO_SYNC
                               ? "all but the last in no_sync() (unsharded gradients accumulate, one ReduceScatter)"
                               : "outside no_sync() (a ReduceScatter every micro-step, sharded gradients accumulate)");
    g_string_append_printf(out, "  AllGather %.3f ms, %s %.3f ms, replica AllReduce %.3f ms per iteration (stream busy)\n",
                           r->all_gather_ms, s->setup.shard.sharding == DDP_SHARDING_NONE ? "AllReduce" : "ReduceScatter",
                           r->reduce_scatter_ms, r->replica_all_reduce_ms);
    g_string_append_printf(out, "  iteration ends at %.3f ms\n", ns_ms(r->reported_iteration_ns));
    return g_string_free(out, FALSE);
  }
  if (s->setup.mode == DDP_MODE_ZERO1 && s->setup.shard.overlap_with_ddp)
    g_string_append_printf(out, "\nZeRO-1 overlap_with_ddp (%s): bucket b's optimizer step on rank b mod %" G_GUINT64_FORMAT
                                " after its AllReduce, then its broadcast from there; steady state (the first two "
                                "iterations do not step)\n",
                           s->setup.shard.zero_hook == DDP_ZERO_HOOK_STEP ? "hook_with_zero_step"
                                                                          : "hook_with_zero_step_interleaved",
                           r->shard_gpus);
  else if (s->setup.mode == DDP_MODE_ZERO1)
    g_string_append_printf(out, "\nZeRO-1: optimizer step on 1/%" G_GUINT64_FORMAT " of the parameters, then one "
                                "broadcast per rank's partition after it\n", r->shard_gpus);
  g_string_append_printf(out, "\nbucket schedule (steady state; ms from the iteration start)\n");
  g_string_append_printf(out, "  %5s %13s %6s %9s %9s %9s %9s %9s  %-5s %s\n", "index", "bytes", "params", "ready",
                         "launch", "start", "end", "allreduce", "algo", "proto");
  /* a large model's hundreds of buckets would bury the summary above: show both ends */
  guint half = DDP_REPORT_BUCKET_ROWS / 2;
  gboolean summarise = r->n_buckets > DDP_REPORT_BUCKET_ROWS;
  for (guint b = 0; b < r->n_buckets; b++) {
    if (summarise && b == half)
      g_string_append_printf(out, "  %5s ... %u more buckets (--json or --csv lists them all; --no-buckets hides the table)\n", "",
                             r->n_buckets - 2 * half);
    if (!summarise || b < half || b >= r->n_buckets - half)
      bucket_row(out, &r->buckets[b]);
  }
  g_string_append_printf(out, "  iteration ends at %.3f ms\n", ns_ms(r->reported_iteration_ns));
  return g_string_free(out, FALSE);
}

/* The "strategy" object of a sharded strategy's prediction (docs/json.md). */
static void
strategy_json(DdpJson *j, const DdpScenario *s, const DdpResult *r)
{
  ddp_json_begin_object(j, "strategy");
  ddp_json_string(j, "mode", ddp_mode_name(s->setup.mode));
  if (s->setup.mode == DDP_MODE_FSDP) {
    ddp_json_string(j, "sharding", ddp_sharding_name(s->setup.shard.sharding));
    ddp_json_string(j, "backward_prefetch", ddp_backward_prefetch_name(s->setup.shard.backward_prefetch));
    ddp_json_bool(j, "forward_prefetch", s->setup.shard.forward_prefetch);
    ddp_json_bool(j, "limit_all_gathers", s->setup.shard.limit_all_gathers);
    ddp_json_int(j, "units", r->n_units);
    ddp_json_int(j, "blocks_per_unit", s->setup.shard.blocks_per_unit);
    ddp_json_string(j, "wrap", s->model->n_fsdp_units > 0 ? "model" : "auto");
    ddp_json_string(j, "accumulate", ddp_fsdp_accumulate_name(s->setup.shard.accumulate));
  }
  if (s->setup.mode == DDP_MODE_ZERO1) {
    ddp_json_bool(j, "overlap_with_ddp", s->setup.shard.overlap_with_ddp);
    if (s->setup.shard.overlap_with_ddp)
      ddp_json_string(j, "zero_hook", ddp_zero_hook_name(s->setup.shard.zero_hook));
  }
  if (r->shard_gpus > 0)
    ddp_json_int(j, "shard_gpus", (gint64)r->shard_gpus);
  if (r->spans) {
    ddp_json_double(j, "all_gather_ms", r->all_gather_ms, 6);
    ddp_json_double(j, "reduce_scatter_ms", r->reduce_scatter_ms, 6);
    ddp_json_double(j, "replica_all_reduce_ms", r->replica_all_reduce_ms, 6);
    ddp_json_begin_array(j, "collectives");
    for (guint i = 0; i < r->spans->len; i++) {
      const DdpCommSpan *c = &g_array_index(r->spans, DdpCommSpan, i);
      ddp_json_begin_object(j, NULL);
      ddp_json_string(j, "op", ddp_collective_op_name(c->op));
      ddp_json_int(j, "unit", c->unit);
      ddp_json_int(j, "lane", c->lane);
      ddp_json_bool(j, "backward", c->backward);
      ddp_json_int(j, "bytes", (gint64)c->bytes);
      ddp_json_int(j, "micro_step", c->micro_step);
      ddp_json_double(j, "start_ms", ns_ms(c->start_ns), 6);
      ddp_json_double(j, "end_ms", ns_ms(c->end_ns), 6);
      ddp_json_end_object(j);
    }
    ddp_json_end_array(j);
  }
  ddp_json_end_object(j);
}

char *
ddp_report_predict_json(const DdpScenario *s, const DdpResult *r)
{
  return ddp_report_predict_json_ex(s, r, NULL);
}

/**
 * ddp_report_predict_json_ex:
 * predict's JSON (docs/json.md) with @extras (nullable): the cost fields after samples_per_s.
 * Returns: (transfer full) the document.
 */
char *
ddp_report_predict_json_ex(const DdpScenario *s, const DdpResult *r, const DdpReportExtras *extras)
{
  DdpJson *j = ddp_json_new();
  ddp_json_begin_object(j, NULL);
  ddp_json_string(j, "model", s->model->name);
  ddp_json_string(j, "cluster", s->cluster->name);
  ddp_json_int(j, "gpus", (gint64)r->gpus);
  ddp_json_int(j, "nodes", (gint64)r->nodes);
  ddp_json_int(j, "domains", (gint64)r->domains);
  ddp_json_double(j, "batch", s->setup.batch, 6);
  ddp_json_string(j, "precision", ddp_precision_name(s->setup.precision));
  ddp_json_string(j, "batch_from", s->setup.batch_from);
  ddp_json_string(j, "precision_from", s->setup.precision_from);
  ddp_json_string(j, "optimizer_from", s->setup.optimizer_from);
  ddp_json_bool(j, "channels_last", s->setup.channels_last);
  ddp_json_bool(j, "activation_checkpointing", s->setup.activation_checkpointing);
  ddp_json_double(j, "bucket_cap_mb", s->setup.buckets.bucket_cap_mb, 6);
  ddp_json_int(j, "accumulate", s->setup.accumulate);
  ddp_json_string(j, "mode", ddp_mode_name(s->setup.mode));
  g_autofree char *stragglers = ddp_stragglers_to_string(s->stragglers);
  ddp_json_string(j, "stragglers", stragglers);
  ddp_json_begin_object(j, "iteration_ms");
  ddp_json_double(j, "mean", r->mean_ms, 6);
  ddp_json_double(j, "p50", r->p50_ms, 6);
  ddp_json_double(j, "p99", r->p99_ms, 6);
  ddp_json_end_object(j);
  ddp_json_double(j, "first_iteration_ms", r->first_iteration_ms, 6);
  ddp_json_double(j, "compute_ms", r->compute_ms, 6);
  ddp_json_double(j, "recompute_ms", r->recompute_ms, 6);
  ddp_json_double(j, "comm_ms", r->comm_ms, 6);
  ddp_json_double(j, "exposed_comm_ms", r->exposed_comm_ms, 6);
  ddp_json_double(j, "overlap", r->overlap, 6);
  ddp_json_double(j, "straggler_wait_ms", r->straggler_wait_ms, 6);
  /* mean ≈ compute + jitter + contention + exposed comm + host_iteration + input_wait + straggler_wait */
  ddp_json_begin_object(j, "overheads");
  ddp_json_double(j, "host_iteration_ms", r->host_iteration_ms, 6);
  ddp_json_double(j, "host_layer_ms", r->host_layer_ms, 6);
  ddp_json_double(j, "input_wait_ms", r->input_wait_ms, 6);
  ddp_json_double(j, "jitter_ms", r->jitter_ms, 6);
  ddp_json_double(j, "jitter_slowest", r->jitter_slowest, 6);
  ddp_json_double(j, "contention_ms", r->contention_ms, 6);
  ddp_json_double(j, "overlap_slowdown", r->overlap_slowdown, 6);
  ddp_json_int(j, "overlap_slowdown_channels", r->overlap_slowdown_channels);
  ddp_json_bool(j, "batch_norm_waits", r->batch_norm_waits);
  ddp_json_double(j, "input_rate", s->setup.overheads.input_rate, 6);
  ddp_json_double(j, "jitter", s->setup.overheads.jitter, 6);
  ddp_json_end_object(j);
  ddp_json_double(j, "single_gpu_ms", r->single_gpu_ms, 6);
  ddp_json_double(j, "scaling_efficiency", r->scaling_efficiency, 6);
  ddp_json_double(j, "samples_per_s", r->samples_per_s, 3);
  if (extras && extras->cost) {
    DdpCostEstimate e = ddp_cost_estimate(extras->cost, r->gpus, r->samples_per_s);
    ddp_cost_json(j, extras->cost, &e);
  }
  ddp_json_double(j, "unused_search_ms", r->unused_search_ms, 6);
  ddp_json_double(j, "unused_map_ms", r->unused_map_ms, 6);
  if (r->dp)
    ddp_dp_json(j, r->dp);
  if (s->setup.mode == DDP_MODE_ZERO1 || s->setup.mode == DDP_MODE_FSDP)
    strategy_json(j, s, r);
  ddp_json_begin_object(j, "memory");
  ddp_json_int(j, "bytes_per_gpu", (gint64)llround(r->memory.total));
  ddp_json_bool(j, "fits", r->memory.fits);
  ddp_json_int(j, "weights", (gint64)llround(r->memory.weights));
  ddp_json_int(j, "grads", (gint64)llround(r->memory.grads));
  ddp_json_int(j, "buckets", (gint64)llround(r->memory.buckets));
  ddp_json_int(j, "optimizer_state", (gint64)llround(r->memory.optimizer_state));
  ddp_json_int(j, "activations", (gint64)llround(r->memory.activations));
  ddp_json_int(j, "runtime_reserve", (gint64)llround(r->memory.runtime_reserve));
  ddp_json_int(j, "capacity", (gint64)llround(s->cluster->gpu.memory_GB * 1e9));
  ddp_json_end_object(j);
  ddp_json_begin_array(j, "buckets");
  for (guint b = 0; b < r->n_buckets; b++) {
    const DdpBucketSchedule *k = &r->buckets[b];
    ddp_json_begin_object(j, NULL);
    ddp_json_int(j, "index", k->index);
    ddp_json_int(j, "bytes", (gint64)k->bytes);
    ddp_json_int(j, "wire_bytes", (gint64)k->wire_bytes);
    ddp_json_begin_array(j, "params");
    for (guint i = 0; i < k->n_params; i++)
      ddp_json_string(j, NULL, s->model->params[k->params[i]].name);
    ddp_json_end_array(j);
    ddp_json_double(j, "ready_ms", ns_ms(k->ready_ns), 6);
    ddp_json_double(j, "launch_ms", ns_ms(k->launch_ns), 6);
    ddp_json_double(j, "start_ms", ns_ms(k->start_ns), 6);
    ddp_json_double(j, "end_ms", ns_ms(k->end_ns), 6);
    ddp_json_string(j, "algorithm", ddp_algorithm_name(k->cost.algorithm));
    ddp_json_string(j, "protocol", ddp_protocol_name(k->cost.protocol));
    ddp_json_end_object(j);
  }
  ddp_json_end_array(j);
  ddp_json_end_object(j);
  return ddp_json_free_to_string(j);
}

char *
ddp_report_predict_csv(const DdpScenario *s, const DdpResult *r)
{
  GString *out = g_string_new("index,bytes,wire_bytes,params,ready_ms,launch_ms,start_ms,end_ms,algorithm,protocol\n");
  for (guint b = 0; b < r->n_buckets; b++) {
    const DdpBucketSchedule *k = &r->buckets[b];
    g_string_append_printf(out, "%u,%" G_GUINT64_FORMAT ",%" G_GUINT64_FORMAT ",%u,%.6f,%.6f,%.6f,%.6f,%s,%s\n",
                           k->index, k->bytes, k->wire_bytes, k->n_params, ns_ms(k->ready_ns), ns_ms(k->launch_ns),
                           ns_ms(k->start_ns), ns_ms(k->end_ns), ddp_algorithm_name(k->cost.algorithm),
                           ddp_protocol_name(k->cost.protocol));
  }
  return g_string_free(out, FALSE);
}

static void
buckets_text(GString *out, const char *title, const DdpModel *model, const DdpBucketLayout *layout)
{
  guint n = ddp_bucket_layout_count(layout);
  g_string_append_printf(out, "%s: %u bucket%s\n", title, n, n == 1 ? "" : "s");
  for (guint b = 0; b < n; b++) {
    const DdpBucket *k = ddp_bucket_layout_get(layout, b);
    g_autofree char *bytes = ddp_report_group_digits((gint64)k->bytes);
    g_string_append_printf(out, "  bucket %u: %s bytes, %s, %u params: %s", b, bytes, ddp_dtype_name(k->dtype),
                           k->n_params, model->params[k->params[0]].name);
    if (k->n_params > 1)
      g_string_append_printf(out, " … %s", model->params[k->params[k->n_params - 1]].name);
    g_string_append_c(out, '\n');
  }
}

char *
ddp_report_buckets_text(const DdpModel *model, const DdpBucketLayout *initial, const DdpBucketLayout *rebuilt)
{
  GString *out = g_string_new(NULL);
  g_autofree char *params = ddp_report_group_digits(ddp_model_param_count(model));
  g_string_append_printf(out, "%s: %u parameter tensors, %s parameters\n\n", model->name, model->n_params, params);
  buckets_text(out, "initial (iteration 0)", model, initial);
  g_string_append_c(out, '\n');
  buckets_text(out, "rebuilt (iteration 1 on)", model, rebuilt);
  return g_string_free(out, FALSE);
}

static void
buckets_json(DdpJson *j, const char *key, const DdpModel *model, const DdpBucketLayout *layout)
{
  ddp_json_begin_array(j, key);
  for (guint b = 0; b < ddp_bucket_layout_count(layout); b++) {
    const DdpBucket *k = ddp_bucket_layout_get(layout, b);
    ddp_json_begin_object(j, NULL);
    ddp_json_int(j, "index", k->index);
    ddp_json_int(j, "bytes", (gint64)k->bytes);
    ddp_json_string(j, "dtype", ddp_dtype_name(k->dtype));
    ddp_json_begin_array(j, "params");
    for (guint i = 0; i < k->n_params; i++)
      ddp_json_string(j, NULL, model->params[k->params[i]].name);
    ddp_json_end_array(j);
    ddp_json_end_object(j);
  }
  ddp_json_end_array(j);
}

char *
ddp_report_buckets_json(const DdpModel *model, const DdpBucketLayout *initial, const DdpBucketLayout *rebuilt)
{
  DdpJson *j = ddp_json_new();
  ddp_json_begin_object(j, NULL);
  ddp_json_string(j, "model", model->name);
  ddp_json_int(j, "parameters", ddp_model_param_count(model));
  buckets_json(j, "initial", model, initial);
  buckets_json(j, "rebuilt", model, rebuilt);
  ddp_json_end_object(j);
  return ddp_json_free_to_string(j);
}

char *
ddp_report_buckets_csv(const DdpModel *model, const DdpBucketLayout *initial, const DdpBucketLayout *rebuilt)
{
  GString *out = g_string_new("layout,index,bytes,dtype,param\n");
  const DdpBucketLayout *layouts[2] = { initial, rebuilt };
  const char *names[2] = { "initial", "rebuilt" };
  for (int l = 0; l < 2; l++)
    for (guint b = 0; b < ddp_bucket_layout_count(layouts[l]); b++) {
      const DdpBucket *k = ddp_bucket_layout_get(layouts[l], b);
      for (guint i = 0; i < k->n_params; i++)
        g_string_append_printf(out, "%s,%u,%" G_GUINT64_FORMAT ",%s,%s\n", names[l], b, k->bytes,
                               ddp_dtype_name(k->dtype), model->params[k->params[i]].name);
    }
  return g_string_free(out, FALSE);
}
