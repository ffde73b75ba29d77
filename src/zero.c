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
 * with the optimizer state × s (strategy.c).
 *
 * overlap_with_ddp=True (zero_redundancy_optimizer.py _init_zero_for_overlap, _get_assigned_rank;
 * ddp_comm_hooks/ddp_zero_hook.py) moves the step into DDP's communication hook.  Once DDP has
 * rebuilt its buckets, each whole bucket b belongs to rank b mod N (shard_buckets=False, the
 * default), which keeps the optimizer state of that bucket's parameters; user code no longer calls
 * step() (it returns at once).  Per bucket, after its AllReduce, the owner runs the functional
 * optimizer on the bucket's parameters (_perform_local_step) and broadcasts them
 * (_broadcast_bucket: one dist.broadcast of the owner's flattened bucket tensor), every rank
 * issuing every bucket's broadcast in bucket order on the one NCCL stream; wait_for_broadcasts
 * then makes the stream the hook runs on wait for all of them, and DDP's finalize waits for the
 * hook.  The two hooks differ in when the step is issued:
 *   hook_with_zero_step         when the last bucket's hook runs (the end of backward): for each
 *                               bucket in order, the compute stream waits for its AllReduce, the
 *                               owner steps on it there, then its broadcast is issued — behind
 *                               every AllReduce on the NCCL stream;
 *   hook_with_zero_step_interleaved  in each bucket's hook, as a callback of its AllReduce future
 *                               (fut.then): ProcessGroupNCCL completes that future at once, so the
 *                               callback runs immediately on the CPU, on a stream from the pool
 *                               that waits for the AllReduce; the step runs there, beside the
 *                               rest of backward, and the broadcast is issued before the next
 *                               bucket's AllReduce — which therefore queues behind the step.
 * How time advances (ddp_zero_overlap_schedule): one pass in bucket order over the NCCL stream,
 * each owner's step stream (the compute stream after backward, or the side stream) and the
 * launches DDP's simulation gives, as fsdp.c does for FSDP.  Not charged: NCCL's broadcast kernels
 * slowing the steps beside them, and the side stream's steps slowing backward (overlap_slowdown
 * applies to DDP's AllReduces under backward only); the one-time _init_zero_for_overlap.  The
 * first two iterations (three with static_graph) do not step at all while the hook learns DDP's
 * buckets: ddpsim models the steady state and reports iteration 0 without a step.
 * Under a calibration that timed Broadcast on exactly these ranks and servers (nccl-tests
 * broadcast_perf, fit.h), each Bcast is its measured curve; elsewhere the collective model's. */
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

/* Elements of bucket @b's parameters. */
static gint64
bucket_numel(const DdpModel *model, const DdpBucketSchedule *b)
{
  gint64 n = 0;
  for (guint i = 0; i < b->n_params; i++)
    n += model->params[b->params[i]].numel;
  return n;
}

/**
 * ddp_zero_bucket_share:
 * See zero.h: bucket b to rank b mod @ranks (_get_assigned_rank), the largest rank's elements over
 * all.
 */
double
ddp_zero_bucket_share(const DdpModel *model, const DdpBucketSchedule *buckets, guint n_buckets, guint64 ranks)
{
  guint owners = (guint)MIN(ranks, (guint64)MAX(n_buckets, 1));
  g_autofree gint64 *owned = g_new0(gint64, owners);
  gint64 total = 0;
  for (guint b = 0; b < n_buckets; b++) {
    gint64 n = bucket_numel(model, &buckets[b]);
    owned[b % owners] += n;
    total += n;
  }
  gint64 largest = 0;
  for (guint r = 0; r < owners; r++)
    largest = MAX(largest, owned[r]);
  return total > 0 ? (double)largest / (double)total : 1.0;
}

/**
 * ddp_zero_overlap_schedule:
 * See zero.h and the file comment.  Bucket b's owner is rank b mod @plan->ranks; its steps run one
 * after another (on the compute stream after backward, or on the side stream).
 */
gint64
ddp_zero_overlap_schedule(const DdpZeroOverlapPlan *p, DdpZeroOverlapTimes *out)
{
  guint nb = p->n_buckets;
  guint owners = (guint)MIN(p->ranks, (guint64)MAX(nb, 1));
  g_autofree gint64 *owner_free = g_new(gint64, owners);
  gboolean interleaved = p->hook == DDP_ZERO_HOOK_INTERLEAVED;
  for (guint r = 0; r < owners; r++)
    owner_free[r] = interleaved ? G_MININT64 : p->backward_end_ns;
  gint64 lane = p->first_start_ns;
  /* the AllReduces in launch order; interleaved, each bucket's step and broadcast right behind it */
  for (guint b = 0; b < nb; b++) {
    out->all_reduce_start_ns[b] = MAX(lane, p->launch_ns[b]);
    lane = out->all_reduce_end_ns[b] = out->all_reduce_start_ns[b] + p->all_reduce_ns[b];
    if (!interleaved)
      continue;
    gint64 *stream = &owner_free[b % owners];
    out->step_start_ns[b] = MAX(*stream, out->all_reduce_end_ns[b]);
    *stream = out->step_end_ns[b] = out->step_start_ns[b] + p->step_ns[b];
    out->broadcast_start_ns[b] = MAX(lane, out->step_end_ns[b]);
    lane = out->broadcast_end_ns[b] = out->broadcast_start_ns[b] + p->broadcast_ns[b];
  }
  /* hook_with_zero_step: after backward, bucket by bucket, the owner's step on the compute stream
   * once that bucket's AllReduce is done, then its broadcast behind every AllReduce */
  for (guint b = 0; !interleaved && b < nb; b++) {
    gint64 *stream = &owner_free[b % owners];
    out->step_start_ns[b] = MAX(*stream, out->all_reduce_end_ns[b]);
    *stream = out->step_end_ns[b] = out->step_start_ns[b] + p->step_ns[b];
    out->broadcast_start_ns[b] = MAX(lane, out->step_end_ns[b]);
    lane = out->broadcast_end_ns[b] = out->broadcast_start_ns[b] + p->broadcast_ns[b];
  }
  /* wait_for_broadcasts, and DDP's finalize waiting for the hooks */
  gint64 ready = MAX(p->backward_end_ns, lane);
  for (guint r = 0; r < owners; r++)
    ready = MAX(ready, owner_free[r]);
  return ready;
}

/* Drops the DDP tail of a watched rank's timeline (the wait for the last AllReduce, finalize, the
 * optimizer) and draws overlap_with_ddp's: under hook_with_zero_step the rank's own buckets' steps
 * on the compute stream, then the wait for the broadcasts, then finalize; interleaved, the steps
 * ran on a side stream this one lane does not show.  Returns nothing: @segments is rewritten. */
static void
redraw_tail(GArray *segments, guint64 rank, const DdpZeroOverlapPlan *p, const DdpZeroOverlapTimes *t, gint64 ready)
{
  gint64 finalize = 0;
  guint micro_step = 0;
  while (segments->len > 0) {
    const DdpSegment *g = &g_array_index(segments, DdpSegment, segments->len - 1);
    if (g->kind != DDP_SEGMENT_WAIT && g->kind != DDP_SEGMENT_FINALIZE && g->kind != DDP_SEGMENT_OPTIMIZER)
      break;
    if (g->kind == DDP_SEGMENT_FINALIZE)
      finalize = g->end_ns - g->start_ns;
    micro_step = g->micro_step;
    g_array_set_size(segments, segments->len - 1);
  }
  gint64 at = segments->len > 0 ? g_array_index(segments, DdpSegment, segments->len - 1).end_ns : 0;
  guint owners = (guint)MIN(p->ranks, (guint64)MAX(p->n_buckets, 1));
  for (guint b = 0; p->hook == DDP_ZERO_HOOK_STEP && b < p->n_buckets; b++) {
    if (rank >= owners || b % owners != rank)
      continue;
    if (at < t->step_start_ns[b]) {
      DdpSegment wait = { DDP_SEGMENT_WAIT, -1, micro_step, at, t->step_start_ns[b] };
      g_array_append_val(segments, wait);
    }
    DdpSegment step = { DDP_SEGMENT_OPTIMIZER, (int)b, micro_step, t->step_start_ns[b], t->step_end_ns[b] };
    g_array_append_val(segments, step);
    at = t->step_end_ns[b];
  }
  if (at < ready) {
    DdpSegment wait = { DDP_SEGMENT_WAIT, -1, micro_step, at, ready };
    g_array_append_val(segments, wait);
  }
  if (finalize > 0) {
    DdpSegment fin = { DDP_SEGMENT_FINALIZE, -1, micro_step, ready, ready + finalize };
    g_array_append_val(segments, fin);
  }
}

/* The iteration-time terms of @r moved by @delta_ms (DDP's figures for the same setup). */
static void
shift_iterations(DdpResult *r, double delta_ms)
{
  for (guint i = 0; i < r->iterations; i++)
    r->iteration_ms[i] += delta_ms;
  r->mean_ms += delta_ms;
  r->p50_ms += delta_ms;
  r->p99_ms += delta_ms;
  r->reported_iteration_ns += ddp_time_from_ns(delta_ms * 1e6);
}

/* overlap_with_ddp=False: the step on the largest partition, then one broadcast per parameter
 * (file comment).  Returns the largest partition's share. */
static double
step_then_broadcast(const DdpScenario *scenario, DdpResult *r, double optimizer_ms, const DdpCollective *collective)
{
  const DdpModel *model = scenario->model;
  double share = ddp_zero_largest_share(model, r->gpus);
  double saved_ms = optimizer_ms * (1.0 - share);
  double broadcast_ms = 0;
  if (collective) {
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
      DdpCommSpan span = { DDP_OP_BROADCAST, -1, 0, FALSE, bytes, at, at + d, scenario->setup.accumulate - 1 };
      g_array_append_val(r->spans, span);
      at += d;
      broadcast_ms += cost.time_us / 1e3;
    }
  }
  double delta = broadcast_ms - saved_ms;
  shift_iterations(r, delta);
  r->first_iteration_ms += delta;
  r->compute_ms -= saved_ms;
  r->comm_ms += broadcast_ms;
  r->exposed_comm_ms += broadcast_ms;   /* the broadcasts follow the step: nothing hides them */
  r->reported_exposed_comm_ns += ddp_time_from_ns(broadcast_ms * 1e6);
  return share;
}

/* overlap_with_ddp=True: the steady iteration's tail rescheduled by ddp_zero_overlap_schedule on
 * DDP's bucket launches and AllReduces (file comment).  Returns the largest rank's share of the
 * elements under the bucket partition. */
static double
overlap_tail(const DdpScenario *scenario, DdpResult *r, gint64 optimizer_ns, const DdpCollective *collective)
{
  const DdpModel *model = scenario->model;
  guint nb = r->n_buckets;
  g_autofree gint64 *launch = g_new0(gint64, nb), *all_reduce = g_new0(gint64, nb), *step = g_new0(gint64, nb);
  g_autofree gint64 *broadcast = g_new0(gint64, nb);
  g_autofree gint64 *times = g_new0(gint64, 6 * (gsize)nb);
  DdpZeroOverlapTimes t = { times, times + nb, times + 2 * nb, times + 3 * nb, times + 4 * nb, times + 5 * nb };
  double total = (double)ddp_model_param_count(model);
  gint64 backward_end = G_MININT64, old_comm_end = G_MININT64;
  for (guint64 i = 0; i < (r->collapsed_ranks ? 1 : r->gpus); i++)
    backward_end = MAX(backward_end, r->backward_end_ns[i]);
  for (guint b = 0; b < nb; b++) {
    const DdpBucketSchedule *k = &r->buckets[b];
    launch[b] = k->launch_ns;
    all_reduce[b] = k->end_ns - k->start_ns;
    old_comm_end = MAX(old_comm_end, k->end_ns);
    step[b] = ddp_time_from_ns((double)optimizer_ns * (double)bucket_numel(model, k) / total);
    if (collective) {
      DdpCollectiveCost cost;
      ddp_collective_broadcast(collective, k->bytes, &cost);
      broadcast[b] = ddp_time_from_ns(cost.time_us * 1e3);
    }
  }
  DdpZeroOverlapPlan plan = {
    .n_buckets = nb, .ranks = r->gpus, .launch_ns = launch, .all_reduce_ns = all_reduce, .step_ns = step,
    .broadcast_ns = broadcast, .first_start_ns = nb > 0 ? r->buckets[0].start_ns : 0, .backward_end_ns = backward_end,
    .hook = scenario->setup.shard.zero_hook,
  };
  gint64 ready = ddp_zero_overlap_schedule(&plan, &t);
  /* the busiest owner's steps on the compute stream (hook_with_zero_step; interleaved they run
   * beside backward, on the side stream) */
  guint owners = (guint)MIN(r->gpus, (guint64)MAX(nb, 1));
  g_autofree gint64 *owned = g_new0(gint64, owners);
  gint64 busiest = 0;
  for (guint b = 0; plan.hook == DDP_ZERO_HOOK_STEP && b < nb; b++) {
    owned[b % owners] += step[b];
    busiest = MAX(busiest, owned[b % owners]);
  }
  double broadcast_ms = 0;
  for (guint b = 0; b < nb; b++) {
    r->buckets[b].start_ns = t.all_reduce_start_ns[b];
    r->buckets[b].end_ns = t.all_reduce_end_ns[b];
    if (!collective)
      continue;
    DdpCommSpan span = { DDP_OP_BROADCAST, (int)b, 0, TRUE, r->buckets[b].bytes, t.broadcast_start_ns[b],
                         t.broadcast_end_ns[b], scenario->setup.accumulate - 1 };
    g_array_append_val(r->spans, span);
    broadcast_ms += (double)broadcast[b] / 1e6;
  }
  for (guint w = 0; w < r->n_timelines; w++)
    redraw_tail(r->timelines[w].segments, r->timelines[w].rank, &plan, &t, ready);
  /* DDP's tail, max(backward, last AllReduce) + optimizer, becomes ready (finalize is in both);
   * the compute stream loses the whole step and does the busiest owner's part, and waits for
   * communication the rest of the time after backward */
  double optimizer_ms = (double)optimizer_ns / 1e6;
  double delta = (double)(ready - MAX(backward_end, old_comm_end)) / 1e6 - optimizer_ms;
  gint64 old_tail = MAX(0, old_comm_end - backward_end), new_tail = ready - backward_end - busiest;
  shift_iterations(r, delta);
  r->first_iteration_ms -= optimizer_ms;   /* the warm-up iterations do not step */
  r->compute_ms += (double)busiest / 1e6 - optimizer_ms;
  r->comm_ms += broadcast_ms;
  r->exposed_comm_ms += (double)(new_tail - old_tail) / 1e6;
  r->reported_exposed_comm_ns += new_tail - old_tail;
  return ddp_zero_bucket_share(model, r->buckets, nb, r->gpus);
}

DdpResult *
ddp_zero_simulate(const DdpScenario *scenario, const DdpRunOptions *options, GError **error)
{
  DdpScenario ddp = *scenario;
  ddp.setup.mode = DDP_MODE_DDP;
  DdpResult *r = ddp_simulate(&ddp, options, error);
  if (!r)
    return NULL;
  guint64 n = r->gpus;
  const DdpModel *model = scenario->model;
  g_autoptr(DdpCompute) compute = ddp_strategy_compute(scenario, options ? options->compute : NULL, 1.0);
  g_autoptr(DdpCollective) collective = NULL;
  if (n > 1 && !(collective = ddp_collective_new(scenario->cluster, n, error))) {
    ddp_result_free(r);
    return NULL;
  }
  /* measured Broadcasts answer where a calibration timed exactly this communicator (fit.h) */
  if (collective && scenario->calibration)
    ddp_collective_use_calibration(collective, scenario->calibration);
  r->spans = g_array_new(FALSE, FALSE, sizeof(DdpCommSpan));
  gint64 optimizer_ns = ddp_compute_optimizer_ns(compute);
  double share = scenario->setup.shard.overlap_with_ddp
                   ? overlap_tail(scenario, r, optimizer_ns, collective)
                   : step_then_broadcast(scenario, r, (double)optimizer_ns / 1e6, collective);
  r->overlap = r->comm_ms > 0 ? CLAMP(1.0 - r->exposed_comm_ms / r->comm_ms, 0.0, 1.0) : 1.0;
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
