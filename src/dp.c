/* dp — torch.nn.DataParallel (see dp.h): why DistributedDataParallel wins, term by term.
 *
 * What one DataParallel step does (PyTorch torch/nn/parallel/data_parallel.py
 * DataParallel.forward, replicate.py, scatter_gather.py, _functions.py, comm.py; read through the
 * code search, 1.13 and 2.x agree on all of it):
 *   1. scatter: the batch, on GPU 0, is cut into N chunks and chunk i copied to GPU i
 *      (Scatter.apply → comm.scatter);
 *   2. replicate: replicate.py copies every module once per GPU in Python
 *      (Module._replicate_for_data_parallel, then the parameter/buffer attributes of each copy),
 *      and Broadcast.apply sends every parameter from GPU 0 to the others through
 *      comm.broadcast_coalesced, flattened into buffers of at most 10 MiB (buffer_size
 *      10485760; torch/csrc/cuda/comm.cpp groups tensors per type and closes a group when it
 *      reaches the limit — the same close-after-add rule as DDP's buckets) and sent with NCCL
 *      broadcast; the buffers go the same way.  This happens EVERY iteration: the replicas are
 *      rebuilt at each forward, because the optimizer only updates GPU 0's parameters;
 *   3. parallel_apply: one Python thread per GPU runs its replica's forward.  Module code and
 *      kernel launches hold the GIL, so the host work of the N replicas is serialised: the last
 *      kernel of any replica is launched after N·L, where L is the host time to launch one
 *      replica's forward;
 *   4. gather: the outputs are copied to GPU 0 and the loss computed there;
 *   5. backward: autograd runs each GPU's nodes on that device's worker thread (C++, no GIL), so
 *      the replicas' backward passes run in parallel.  The replicas' parameters are outputs of
 *      Broadcast, whose backward is ReduceAddCoalesced: comm.reduce_add_coalesced sums every
 *      gradient onto GPU 0 (NCCL reduce per 10 MiB buffer).  Broadcast was ONE autograd node for
 *      all parameters, so it runs once every gradient of every replica exists: after the whole
 *      backward, with no overlap at all;
 *   6. the optimizer steps on GPU 0 only (the other GPUs hold no parameters of their own).
 *
 * Costs, for N GPUs on one node, per-GPU batch b (the global batch N·b), one micro-step:
 *   T_scatter   = (N−1) · (α_intra + b·s_in / BW_intra)   the copies leave GPU 0 one after another
 *                                                          over its link (s_in: input bytes/sample)
 *   T_replicate = N · M · r                                M modules (the model's layers), r the
 *                                                          Python cost of copying one module
 *   T_broadcast = Σ_chunks Bcast(c) + Σ Bcast(buffers)     the cluster's broadcast cost model
 *   T_forward   = the forward passes with the host issuing  compute.c's host pipeline, at
 *                 each layer pass N·h instead of h           h = host_layer_us (docs/overheads.md): the
 *                                                          GIL serialises N replicas' launches; about
 *                                                          max(F, N·M·h) for M layers
 *   T_backward  = B                                        no DDP hooks (no bucket copies)
 *   T_reduce    = Σ_chunks Reduce(c) = Σ_chunks Bcast(c)   a ring Reduce moves the same bytes over
 *                                                          the same links as a Broadcast (nccl-tests
 *                                                          PERFORMANCE.md: bus factor 1 for both)
 *   T_step      = T_host + K · (T_scatter + T_replicate + T_broadcast + T_forward + T_backward
 *                 + T_reduce) + T_optimizer                T_host = host_iteration_us, as in DDP;                           K micro-steps: DataParallel has no
 *                                                          no_sync, every micro-step reduces
 * Against DDP (ddp.c) the difference is therefore
 *   T_dp − T_ddp = T_scatter + T_replicate + T_broadcast + (GIL excess) + T_reduce
 *                  − (DDP's hook copies + exposed AllReduce + finalize copies),
 * and since a Reduce plus a Broadcast move what one AllReduce moves (Reduce-Scatter + AllGather),
 * DataParallel pays at least DDP's whole communication with none of it hidden behind backward,
 * plus the host terms that grow with N.  With one GPU DataParallel calls the module directly
 * (data_parallel.py: a single device id short-cuts everything): T = F + B + T_optimizer.
 *
 * Host constants.  h is the project's one figure for host dispatch per layer pass (default 10 µs,
 * --host-layer-us; docs/overheads.md: 80–200 µs measured on an H100 VM).  For scale: on this
 * repository's 2-core Xeon build VM (torch 1.13), torchvision ResNet-50's forward on "meta"
 * tensors (dispatch and Python, no kernels) takes 7.13 ms for 126 leaf modules, 56.6 µs each.
 *   r = 3.2 µs, measured there: Module._replicate_for_data_parallel over ResNet-50's 151
 *   modules, 0.483 ms.
 * The persistent rank-to-rank jitter of docs/overheads.md stretches forward and backward by the
 * slowest GPU's factor, as in DDP: every phase waits for it.
 * Not modelled: the host→GPU 0 copy of the global batch and the gather of outputs (both make
 * DataParallel slower still; DDP's input pipeline is not modelled either), the --stragglers specs,
 * the overlap slowdown (nothing overlaps), GPU 0's extra memory.
 */
#include "dp.h"

#include "strategy.h"

#include <math.h>
#include <string.h>

/* comm.broadcast_coalesced / reduce_add_coalesced buffer_size */
#define COALESCE_BYTES ((guint64)10485760)

/* Bytes of one input sample, from the model's `input` text: "1024 tokens" is int64 token ids,
 * "3x224x224" (or "1024") fp32 values.  0 when the text says neither (scatter then costs α). */
static double
input_bytes_per_sample(const DdpModel *model)
{
  if (!model->input)
    return 0;
  g_auto(GStrv) words = g_strsplit(model->input, " ", -1);
  gboolean tokens = g_strv_length(words) == 2 && g_strcmp0(words[1], "tokens") == 0;
  if (g_strv_length(words) != 1 && !tokens)
    return 0;
  g_auto(GStrv) dims = g_strsplit(words[0], "x", -1);
  double elements = 1;
  for (guint i = 0; dims[i]; i++) {
    guint64 d;
    if (!g_ascii_string_to_unsigned(dims[i], 10, 1, G_MAXUINT32, &d, NULL))
      return 0;
    elements *= (double)d;
  }
  return elements * (tokens ? 8 : 4);
}

/* Σ broadcast time over the 10 MiB coalescing groups of the parameters (per dtype, in
 * registration order, closed when a group reaches the limit); *chunks: how many. */
static gint64
coalesced_broadcast_ns(const DdpCollective *collective, const DdpModel *model, guint *chunks)
{
  guint64 open[DDP_DTYPE_COUNT] = { 0 };
  gint64 total = 0;
  DdpCollectiveCost cost;
  *chunks = 0;
  for (guint i = 0; i < model->n_params; i++) {
    const DdpParam *p = &model->params[model->registration_order[i]];
    open[p->dtype] += (guint64)p->numel * ddp_dtype_size(p->dtype);
    if (open[p->dtype] >= COALESCE_BYTES) {
      ddp_collective_broadcast(collective, open[p->dtype], &cost);
      total += (gint64)llround(cost.time_us * 1e3);
      open[p->dtype] = 0;
      (*chunks)++;
    }
  }
  for (guint d = 0; d < DDP_DTYPE_COUNT; d++)
    if (open[d] > 0) {
      ddp_collective_broadcast(collective, open[d], &cost);
      total += (gint64)llround(cost.time_us * 1e3);
      (*chunks)++;
    }
  return total;
}

/* Buffers: their tensor sizes are not in the model file, so full 10 MiB groups and a remainder. */
static gint64
buffers_broadcast_ns(const DdpCollective *collective, guint64 bytes)
{
  gint64 total = 0;
  DdpCollectiveCost cost;
  for (guint64 left = bytes; left > 0; left -= MIN(left, COALESCE_BYTES)) {
    ddp_collective_broadcast(collective, MIN(left, COALESCE_BYTES), &cost);
    total += (gint64)llround(cost.time_us * 1e3);
  }
  return total;
}

/**
 * ddp_dp_cost:
 * @compute: (nullable): compute options, NULL for the defaults (or the scenario's calibration)
 * @out: (out caller-allocates): the terms of the file comment; ddp_iteration_ms left 0
 *
 * See dp.h.
 */
gboolean
ddp_dp_cost(const DdpScenario *scenario, const DdpComputeOptions *compute_options, DdpDpCost *out, GError **error)
{
  const DdpSetup *setup = &scenario->setup;
  const DdpModel *model = scenario->model;
  const DdpCluster *cluster = scenario->cluster;
  guint64 n = setup->gpus;
  if (n > (guint64)cluster->gpus_per_node) {
    g_set_error(error, DDP_SCENARIO_ERROR, DDP_SCENARIO_ERROR_INVALID,
                "--mode: dp is one process on one node; %" G_GUINT64_FORMAT " GPUs span %" G_GUINT64_FORMAT
                " nodes of %d on cluster %s (use --mode ddp)",
                n, (n + (guint64)cluster->gpus_per_node - 1) / (guint64)cluster->gpus_per_node,
                cluster->gpus_per_node, cluster->name);
    return FALSE;
  }
  g_autoptr(DdpCollective) collective = ddp_collective_new(cluster, n, error);
  if (!collective)
    return FALSE;
  g_autoptr(DdpCompute) compute = ddp_strategy_compute(scenario, compute_options, 1.0);
  g_autoptr(DdpCompute) gil = ddp_strategy_compute(scenario, compute_options, (double)n);
  gint64 forward = 0, forward_dp = 0, backward = 0;
  for (guint l = 0; l < model->n_layers; l++) {
    forward += ddp_compute_forward_ns(compute, l);
    forward_dp += ddp_compute_forward_ns(n > 1 ? gil : compute, l);
    backward += ddp_compute_backward_ns(compute, l);
  }
  /* rank-to-rank jitter (docs/overheads.md): every phase waits for the slowest GPU, as in DDP */
  double slowest = setup->overheads.jitter > 0 && n > 1 ? ddp_jitter_slowest(setup->overheads.jitter, n) : 1.0;
  forward_dp = (gint64)llround(slowest * (double)forward_dp);
  backward = (gint64)llround(slowest * (double)backward);
  double layers = model->n_layers;
  gint64 host = (gint64)llround(layers * setup->overheads.host_layer_us * 1e3);
  gint64 scatter = 0, replicate = 0, broadcast = 0, reduce = 0;
  guint chunks = 0;
  if (n > 1) {
    double chunk = setup->batch * input_bytes_per_sample(model);
    scatter = (gint64)llround((double)(n - 1) * (cluster->intra.latency_us * 1e3 + chunk / cluster->intra.bandwidth_GBs));
    replicate = (gint64)llround((double)n * layers * DDP_DP_REPLICATE_US_PER_MODULE * 1e3);
    gint64 params = coalesced_broadcast_ns(collective, model, &chunks);
    broadcast = params + buffers_broadcast_ns(collective, (guint64)MAX(model->buffer_bytes, 0));
    reduce = params;
  }
  gint64 optimizer = ddp_compute_optimizer_ns(compute);
  gint64 host_iteration = (gint64)llround(setup->overheads.host_iteration_us * 1e3);
  gint64 micro = scatter + replicate + broadcast + forward_dp + backward + reduce;
  gint64 step = host_iteration + (gint64)setup->accumulate * micro + optimizer;
  *out = (DdpDpCost){
    .gpus = n,
    .scatter_ms = (double)scatter / 1e6,
    .replicate_host_ms = (double)replicate / 1e6,
    .broadcast_ms = (double)broadcast / 1e6,
    .forward_ms = (double)forward_dp / 1e6,
    .forward_gpu_ms = (double)forward / 1e6,
    .forward_host_ms = (double)host / 1e6,
    .backward_ms = (double)backward / 1e6,
    .recompute_ms = slowest * ddp_compute_recompute_ns(compute) / 1e6,
    .reduce_ms = (double)reduce / 1e6,
    .optimizer_ms = (double)optimizer / 1e6,
    .host_iteration_ms = (double)host_iteration / 1e6,
    .iteration_ms = (double)step / 1e6,
    .chunks = chunks,
  };
  return TRUE;
}

static void
add_segment(DdpRankTimeline *t, DdpSegmentKind kind, int index, guint micro_step, gint64 *at, gint64 ns)
{
  DdpSegment seg = { kind, index, micro_step, *at, *at + ns };
  g_array_append_val(t->segments, seg);
  *at += ns;
}

/* The timeline of watched rank @rank: per micro-step scatter + replicate + broadcast (shown as
 * "broadcast"), forward and backward layer by layer (forward stretched to T_forward), waiting for
 * the reduce; the optimizer on rank 0 only. */
static void
record_timeline(const DdpScenario *scenario, const DdpDpCost *dp, const DdpComputeOptions *options, DdpRankTimeline *t)
{
  const DdpModel *model = scenario->model;
  g_autoptr(DdpCompute) compute = ddp_strategy_compute(scenario, options, 1.0);
  gint64 at = 0;
  if (dp->host_iteration_ms > 0)
    add_segment(t, DDP_SEGMENT_WAIT, -1, 0, &at, (gint64)llround(dp->host_iteration_ms * 1e6));
  double stretch = dp->forward_gpu_ms > 0 ? dp->forward_ms / dp->forward_gpu_ms : 1;
  for (guint k = 0; k < scenario->setup.accumulate; k++) {
    gint64 setup_ns = (gint64)llround((dp->scatter_ms + dp->replicate_host_ms + dp->broadcast_ms) * 1e6);
    if (setup_ns > 0)
      add_segment(t, DDP_SEGMENT_BROADCAST, -1, k, &at, setup_ns);
    for (guint l = 0; l < model->n_layers; l++)
      add_segment(t, DDP_SEGMENT_FORWARD, (int)l, k, &at, (gint64)llround(stretch * (double)ddp_compute_forward_ns(compute, l)));
    for (guint i = 0; i < model->n_layers; i++) {
      guint l = model->backward_layers[i];
      add_segment(t, DDP_SEGMENT_BACKWARD, (int)l, k, &at, ddp_compute_backward_ns(compute, l));
    }
    gint64 reduce_ns = (gint64)llround(dp->reduce_ms * 1e6);
    if (reduce_ns > 0)
      add_segment(t, DDP_SEGMENT_WAIT, -1, k, &at, reduce_ns);
  }
  if (t->rank == 0)
    add_segment(t, DDP_SEGMENT_OPTIMIZER, -1, scenario->setup.accumulate - 1, &at, ddp_compute_optimizer_ns(compute));
}

/**
 * ddp_dp_simulate:
 * See dp.h.  Every iteration is the same (DataParallel has no bucket rebuild and the model has no
 * per-rank noise), so the statistics are that one number.
 */
DdpResult *
ddp_dp_simulate(const DdpScenario *scenario, const DdpRunOptions *options, GError **error)
{
  static const DdpRunOptions no_options = { 0 };
  if (!options)
    options = &no_options;
  const DdpSetup *setup = &scenario->setup;
  DdpDpCost dp;
  if (!ddp_dp_cost(scenario, options->compute, &dp, error))
    return NULL;
  /* the same setup under DDP, for "why DDP wins and by how much" */
  DdpScenario as_ddp = *scenario;
  as_ddp.setup.mode = DDP_MODE_DDP;
  DdpRunOptions ddp_options = { .skip_single_gpu = TRUE, .compute = options->compute };
  g_autoptr(DdpResult) ddp = ddp_simulate(&as_ddp, &ddp_options, error);
  if (!ddp)
    return NULL;
  dp.ddp_iteration_ms = ddp->mean_ms;

  g_autoptr(DdpResult) r = g_new0(DdpResult, 1);
  r->gpus = setup->gpus;
  r->nodes = 1;
  r->domains = 1;
  r->iterations = setup->iterations;
  r->iteration_ms = g_new(double, setup->iterations);
  for (guint i = 0; i < setup->iterations; i++)
    r->iteration_ms[i] = dp.iteration_ms;
  r->mean_ms = r->p50_ms = r->p99_ms = r->first_iteration_ms = dp.iteration_ms;
  double K = setup->accumulate;
  r->compute_ms = K * (dp.forward_gpu_ms + dp.backward_ms) + dp.optimizer_ms;
  r->recompute_ms = K * dp.recompute_ms;
  r->comm_ms = K * (dp.scatter_ms + dp.broadcast_ms + dp.reduce_ms);
  r->exposed_comm_ms = r->comm_ms;                      /* nothing overlaps */
  r->overlap = r->comm_ms > 0 ? 0.0 : 1.0;
  /* the rest is the one process's host: the step boundary, the GIL-serialised launches, replicate;
   * no rank waits on another (one process), so no straggler wait */
  r->host_iteration_ms = MAX(0.0, r->mean_ms - r->compute_ms - r->exposed_comm_ms);
  r->samples_per_s = (double)setup->gpus * setup->batch * K / (r->mean_ms / 1e3);
  ddp_compute_memory(scenario->model, &scenario->cluster->gpu, setup->precision, setup->batch, setup->optimizer,
                     TRUE, setup->activation_checkpointing, &r->memory);
  r->collapsed_ranks = TRUE;
  r->backward_end_ns = g_new0(gint64, 1);
  r->backward_end_ns[0] = (gint64)llround((dp.iteration_ms - dp.optimizer_ms - K * dp.reduce_ms) * 1e6);
  r->jitter_slowest = 1.0;
  r->reported_iteration_ns = (gint64)llround(dp.iteration_ms * 1e6);
  r->n_timelines = options->n_watch_ranks;
  r->timelines = g_new0(DdpRankTimeline, options->n_watch_ranks);
  for (guint i = 0; i < options->n_watch_ranks; i++) {
    r->timelines[i].rank = options->watch_ranks[i];
    r->timelines[i].factor = 1.0;
    r->timelines[i].segments = g_array_new(FALSE, FALSE, sizeof(DdpSegment));
    if (options->watch_ranks[i] < setup->gpus)
      record_timeline(scenario, &dp, options->compute, &r->timelines[i]);
  }
  r->dp = g_memdup2(&dp, sizeof dp);
  if (!options->skip_single_gpu) {
    double single_ms;
    if (!ddp_simulate_one_gpu(scenario, setup->batch, options->compute, &single_ms, error))
      return NULL;
    r->single_gpu_ms = single_ms;
    r->scaling_efficiency = single_ms / r->mean_ms;
  }
  return g_steal_pointer(&r);
}

/**
 * ddp_dp_report_text:
 * Returns: (transfer full): the DataParallel terms and the comparison with DDP, one per line.
 */
char *
ddp_dp_report_text(const DdpDpCost *dp)
{
  GString *out = g_string_new("DataParallel (one process, GPU 0 as parameter server) vs DistributedDataParallel\n");
  g_string_append_printf(out, "  scatter inputs       %.3f ms\n", dp->scatter_ms);
  g_string_append_printf(out, "  replicate (Python)   %.3f ms\n", dp->replicate_host_ms);
  g_string_append_printf(out, "  broadcast params     %.3f ms   (%u x 10 MiB coalesced, every iteration)\n", dp->broadcast_ms,
                         dp->chunks);
  g_string_append_printf(out, "  forward              %.3f ms   (GPU %.3f; host %.3f per replica, x %" G_GUINT64_FORMAT
                         " under one GIL)\n", dp->forward_ms, dp->forward_gpu_ms, dp->forward_host_ms, dp->gpus);
  g_string_append_printf(out, "  backward             %.3f ms\n", dp->backward_ms);
  g_string_append_printf(out, "  reduce grads to GPU0 %.3f ms   (after the whole backward: no overlap)\n", dp->reduce_ms);
  g_string_append_printf(out, "  optimizer (GPU 0)    %.3f ms\n", dp->optimizer_ms);
  g_string_append_printf(out, "  DataParallel         %.3f ms/iteration\n", dp->iteration_ms);
  if (dp->iteration_ms >= dp->ddp_iteration_ms)
    g_string_append_printf(out, "  DDP, same setup      %.3f ms/iteration: DataParallel is %.2fx slower (+%.3f ms)\n",
                           dp->ddp_iteration_ms, dp->iteration_ms / dp->ddp_iteration_ms,
                           dp->iteration_ms - dp->ddp_iteration_ms);
  else   /* one GPU: DataParallel calls the module itself, DDP still copies into its buckets */
    g_string_append_printf(out, "  DDP, same setup      %.3f ms/iteration: DataParallel is %.2fx faster (-%.3f ms)\n",
                           dp->ddp_iteration_ms, dp->ddp_iteration_ms / dp->iteration_ms,
                           dp->ddp_iteration_ms - dp->iteration_ms);
  return g_string_free(out, FALSE);
}

void
ddp_dp_json(DdpJson *json, const DdpDpCost *dp)
{
  ddp_json_begin_object(json, "dp");
  ddp_json_double(json, "scatter_ms", dp->scatter_ms, 6);
  ddp_json_double(json, "replicate_host_ms", dp->replicate_host_ms, 6);
  ddp_json_double(json, "broadcast_ms", dp->broadcast_ms, 6);
  ddp_json_int(json, "broadcast_chunks", dp->chunks);
  ddp_json_double(json, "forward_ms", dp->forward_ms, 6);
  ddp_json_double(json, "forward_gpu_ms", dp->forward_gpu_ms, 6);
  ddp_json_double(json, "forward_host_ms", dp->forward_host_ms, 6);
  ddp_json_double(json, "backward_ms", dp->backward_ms, 6);
  ddp_json_double(json, "reduce_ms", dp->reduce_ms, 6);
  ddp_json_double(json, "optimizer_ms", dp->optimizer_ms, 6);
  ddp_json_double(json, "iteration_ms", dp->iteration_ms, 6);
  ddp_json_double(json, "ddp_iteration_ms", dp->ddp_iteration_ms, 6);
  ddp_json_double(json, "slowdown_vs_ddp", dp->iteration_ms / dp->ddp_iteration_ms, 6);
  ddp_json_end_object(json);
}
