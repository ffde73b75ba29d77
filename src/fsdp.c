/* fsdp — FullyShardedDataParallel iterations (see fsdp.h).
 *
 * The rules (docs/model.md "Strategies beyond DDP", each with its PyTorch source):
 *  units      one FlatParameter per wrapped module, the root holding what no wrapped module holds
 *             (wrap.py transformer_auto_wrap_policy, or the model file's own wrap as ModuleWrapPolicy
 *             gives it: model.h fsdp_units; _flat_param.py FlatParamHandle);
 *  padding    each flat parameter is padded to a multiple of the shard group's size and split into
 *             equal shards (_flat_param.py _get_shard / FlatParamHandle.shard);
 *  forward    the root's pre-forward unshards the root, each unit's pre-forward unshards that unit
 *             (an AllGather of its padded flat parameter in param_dtype); after a unit's forward
 *             FULL_SHARD and HYBRID_SHARD reshard it (free the unsharded parameter), except the
 *             root; SHARD_GRAD_OP and NO_SHARD keep it (_runtime_utils.py _pre_forward_unshard,
 *             _post_forward_reshard, RESHARD_AFTER_FORWARD_HANDLE_STRATEGIES); forward_prefetch
 *             issues the next unit's AllGather in the current unit's pre-forward;
 *  limiter    limit_all_gathers: every reshard enqueues a free event; before an AllGather is
 *             issued, with 2 free events pending the CPU waits on the oldest
 *             (_limiter_utils.py _FreeEventQueue, _max_num_inflight_all_gathers = 2);
 *  backward   a unit's pre-backward unshards it if it was resharded; BACKWARD_PRE then prefetches the
 *             next unit in backward order, BACKWARD_POST prefetches it in the post-backward hook
 *             (after resharding the current unit, before its ReduceScatter), None does not
 *             prefetch (_runtime_utils.py _pre_backward_hook, _post_backward_hook,
 *             _prefetch_handle); post-backward reshards the unit and reduce-scatters its flat
 *             gradient in reduce_dtype (NO_SHARD: AllReduce), HYBRID_SHARD then all-reduces the
 *             shard across the replica group (_reduce_grad, _reduce_grad_no_shard);
 *  streams    the AllGathers run from FSDP's unshard stream and the ReduceScatters from its
 *             post-backward stream, but ProcessGroupNCCL runs every collective of one process group
 *             on that group's one NCCL stream, in issue order: AllGather and ReduceScatter of the
 *             shard group form one FIFO (lane 0); HSDP's replica group has its own (lane 1);
 *  gradient   the unit's parameters are views of its flat parameter, so autograd writes their
 *             gradients into the flat gradient (the backward of the split): one memory pass over
 *             the unit on the compute stream before the post-backward hook (FlatParamHandle views);
 *  step       the final callback waits for the post-backward stream; the optimizer then steps on
 *             the local shard (1/N of the state and of the passes).
 *  no_sync    --accumulate K: K forward/backward micro-steps, then the step.  Inside no_sync()
 *             (_sync_gradients False: the first K-1 by default) the post-backward hook reshards,
 *             freeing only where _should_free_in_backward says (FULL_SHARD, HYBRID_SHARD; not
 *             SHARD_GRAD_OP, which keeps its units unsharded into the next micro-step), prefetches,
 *             and returns before reducing: the unsharded gradient stays in flat_param.grad and
 *             accumulates; the final callback does not wait for the post-backward stream.  Outside
 *             no_sync (DDP_FSDP_ACCUMULATE_SHARDED) every micro-step reduces and waits, the sharded
 *             gradients accumulating in _saved_grad_shard (fully_sharded_data_parallel.py no_sync;
 *             _runtime_utils.py _post_backward_hook, _post_backward_final_callback).
 * How time advances.  The CPU thread runs ahead of the GPU (asynchronous kernel launches), so the
 * GPU order is the issue order and the only CPU waits are the limiter's; the schedule is a fixed
 * sequence of operations on three FIFOs (compute, lane 0, lane 1) whose dependencies all point to
 * earlier operations, so one pass in issue order gives every start and end exactly — no event
 * queue is needed.
 * Stragglers.  Every rank runs the same schedule, its compute scaled by its factor of the iteration
 * (straggler.h; times the persistent jitter factor), and every unit's collectives wait for the last
 * rank to issue them.  The ranks' schedules are the one schedule stretched by their factors, so in
 * every unit the last rank to arrive is the one with the largest factor: the iteration is the
 * schedule with compute × max_r factor_r (and max_r delay_r, a pause before backward, added) — the
 * upper envelope ddp.c uses, exact here because FSDP synchronises every unit.
 * Contention.  NCCL kernels slow the compute they overlap (docs/model.md §1.6 c; overlap_slowdown,
 * docs/overheads.md), as under DDP: the compute that ran beside a collective (the collectives' busy
 * time less the exposed part) takes overlap_slowdown longer, added to the iteration.
 * Calibration.  Each collective's time is the collective model's (docs/collective.md §12), or,
 * where a calibration measured that collective on exactly the group's ranks and servers (nccl-tests
 * all_gather_perf / reduce_scatter_perf / all_reduce_perf imports, fit.h), its measured curve.
 */
#include "fsdp.h"

#include "strategy.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static void
unit_clear(gpointer data)
{
  g_free(((DdpFsdpUnit *)data)->name);
}

/* A unit's flat parameter gets layer @l's parameters. */
static void
add_layer_params(DdpFsdpUnit *unit, const DdpModel *model, guint l)
{
  for (guint i = 0; i < model->layers[l].n_params; i++) {
    const DdpParam *p = &model->params[model->layers[l].first_param + i];
    unit->numel += p->numel;
    unit->bytes += (guint64)p->numel * ddp_dtype_size(p->dtype);
  }
}

GArray *
ddp_fsdp_units(const DdpModel *model, guint blocks_per_unit, guint *layer_unit)
{
  g_return_val_if_fail(blocks_per_unit >= 1, NULL);
  g_return_val_if_fail(blocks_per_unit == 1 || model->n_fsdp_units == 0, NULL);
  GArray *units = g_array_new(FALSE, TRUE, sizeof(DdpFsdpUnit));
  g_array_set_clear_func(units, unit_clear);
  DdpFsdpUnit root = { g_strdup("root"), 0, 0 };
  g_array_append_val(units, root);
  if (model->n_fsdp_units > 0) {
    /* the model file's own wrap (model.h fsdp_units), validated and in forward order there */
    for (guint k = 0; k < model->n_fsdp_units; k++) {
      DdpFsdpUnit unit = { g_strdup(model->fsdp_units[k]), 0, 0 };
      g_array_append_val(units, unit);
    }
    for (guint l = 0; l < model->n_layers; l++) {
      layer_unit[l] = model->fsdp_layer_unit[l];
      add_layer_params(&g_array_index(units, DdpFsdpUnit, layer_unit[l]), model, l);
    }
    return units;
  }
  /* a block's parameters, to leave parameter-free blocks with the root */
  g_autoptr(GHashTable) block_numel = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
  for (guint l = 0; l < model->n_layers; l++) {
    g_autofree char *prefix = ddp_model_block_prefix(model->layers[l].name);
    if (!prefix)
      continue;
    gint64 numel = GPOINTER_TO_SIZE(g_hash_table_lookup(block_numel, prefix));
    for (guint i = 0; i < model->layers[l].n_params; i++)
      numel += model->params[model->layers[l].first_param + i].numel;
    g_hash_table_insert(block_numel, g_steal_pointer(&prefix), GSIZE_TO_POINTER((gsize)numel));
  }
  g_autofree char *current = NULL;
  guint blocks = 0;
  for (guint l = 0; l < model->n_layers; l++) {
    g_autofree char *prefix = ddp_model_block_prefix(model->layers[l].name);
    guint u = 0;
    if (prefix && GPOINTER_TO_SIZE(g_hash_table_lookup(block_numel, prefix)) > 0) {
      if (!current || strcmp(current, prefix) != 0) {
        if (blocks % blocks_per_unit == 0) {
          DdpFsdpUnit unit = { g_strdup(prefix), 0, 0 };
          g_array_append_val(units, unit);
        }
        blocks++;
        g_free(current);
        current = g_strdup(prefix);
      }
      u = units->len - 1;
    }
    layer_unit[l] = u;
    add_layer_params(&g_array_index(units, DdpFsdpUnit, u), model, l);
  }
  return units;
}

/* ---- the schedule ---- */

typedef struct {
  const DdpFsdpPlan *plan;
  gint64 cpu;              /* the CPU thread: no operation is issued before it */
  gint64 compute, lane[2]; /* when each FIFO is free */
  GQueue frees;            /* pending free events (times), oldest first */
  gint64 *gathered;        /* [unit] end of the AllGather that unsharded it; -1: sharded */
  guint micro_step;        /* the one being issued */
  GArray *spans, *segments;
} Schedule;

static void
add_span(Schedule *s, DdpCollectiveOp op, int unit, guint lane, gboolean backward, guint64 bytes, gint64 start, gint64 end)
{
  if (!s->spans)
    return;
  DdpCommSpan span = { op, unit, lane, backward, bytes, start, end, s->micro_step };
  g_array_append_val(s->spans, span);
}

/* _unshard: the limiter's wait, then the AllGather on lane 0. */
static void
all_gather(Schedule *s, guint u, gboolean backward)
{
  const DdpFsdpPlan *p = s->plan;
  if (s->gathered[u] >= 0)
    return;
  if (p->limit_all_gathers && g_queue_get_length(&s->frees) >= 2) {
    gint64 *oldest = g_queue_pop_head(&s->frees);
    s->cpu = MAX(s->cpu, *oldest);
    g_free(oldest);
  }
  gint64 start = MAX(s->lane[0], s->cpu), end = start + p->all_gather_ns[u];
  s->lane[0] = end;
  s->gathered[u] = end;
  add_span(s, DDP_OP_ALL_GATHER, (int)u, 0, backward, p->all_gather_bytes ? p->all_gather_bytes[u] : 0, start, end);
}

/* _reshard: the unsharded parameter is freed once the compute stream has passed @at. */
static void
reshard(Schedule *s, guint u, gint64 at)
{
  s->gathered[u] = -1;
  gint64 *t = g_new(gint64, 1);
  *t = at;
  g_queue_push_tail(&s->frees, t);
}

static gint64
run_layer(Schedule *s, DdpSegmentKind kind, guint l, gint64 ns)
{
  guint u = s->plan->layer_unit[l];
  gint64 start = MAX(MAX(s->compute, s->cpu), MAX(s->gathered[u], 0));
  s->compute = start + ns;
  if (s->segments) {
    DdpSegment seg = { kind, (int)l, s->micro_step, start, s->compute };
    g_array_append_val(s->segments, seg);
  }
  return s->compute;
}

/* The next unit after @u in @order (units by first appearance), 0 when none. */
static guint
next_unit(const guint *order, guint n, guint u)
{
  for (guint i = 0; i + 1 < n; i++)
    if (order[i] == u)
      return order[i + 1];
  return 0;
}

/**
 * ddp_fsdp_schedule:
 * See fsdp.h and the file comment.  The root (unit 0) is never prefetched: the root's own
 * pre-forward gathers it first.  With @plan->micro_steps K > 1 the K forward and backward passes
 * run back to back; under no_sync (the first K-1 with DDP_FSDP_ACCUMULATE_NO_SYNC) the
 * post-backward hook reshards (frees only where _should_free_in_backward says so: FULL_SHARD and
 * HYBRID_SHARD free, SHARD_GRAD_OP keeps the unit unsharded for the next forward) and prefetches
 * as usual but reduces nothing, and the final callback does not wait for the post-backward stream;
 * a synchronised micro-step before the last (DDP_FSDP_ACCUMULATE_SHARDED) ends with the compute
 * stream waiting for its reductions, as the last one does before the optimizer.
 */
gint64
ddp_fsdp_schedule(const DdpFsdpPlan *p, GArray *spans, GArray *segments, gint64 *backward_end_ns)
{
  Schedule s = { .plan = p, .spans = spans, .segments = segments };
  g_queue_init(&s.frees);
  s.gathered = g_new(gint64, p->n_units);
  gboolean sharded = p->sharding != DDP_SHARDING_NONE;
  gboolean reshard_after_forward = p->sharding == DDP_SHARDING_FULL || p->sharding == DDP_SHARDING_HYBRID;
  for (guint u = 0; u < p->n_units; u++)
    s.gathered[u] = sharded ? -1 : 0;

  /* units by first appearance in forward and in backward (blocks only) and their last layers */
  g_autofree guint *fwd_order = g_new0(guint, p->n_units), *bwd_order = g_new0(guint, p->n_units);
  g_autofree guint *last_fwd = g_new0(guint, p->n_units), *last_bwd = g_new0(guint, p->n_units);
  g_autofree gboolean *seen = g_new0(gboolean, p->n_units);
  guint n_fwd = 0, n_bwd = 0;
  for (guint l = 0; l < p->n_layers; l++) {
    guint u = p->layer_unit[l];
    if (!seen[u] && u != 0)
      fwd_order[n_fwd++] = u;
    seen[u] = TRUE;
    last_fwd[u] = l;
  }
  memset(seen, 0, p->n_units * sizeof(gboolean));
  for (guint k = 0; k < p->n_layers; k++) {
    guint u = p->layer_unit[p->backward_order[k]];
    if (!seen[u] && u != 0)
      bwd_order[n_bwd++] = u;
    seen[u] = TRUE;
    last_bwd[u] = k;
  }

  guint steps = MAX(p->micro_steps, 1);
  for (guint m = 0; m < steps; m++) {
    s.micro_step = m;
    gboolean sync = m + 1 == steps || p->accumulate == DDP_FSDP_ACCUMULATE_SHARDED;
    /* _should_free_in_backward: sync or a strategy that reshards after forward */
    gboolean free_in_backward = sharded && (sync || reshard_after_forward);

    /* forward */
    if (sharded)
      all_gather(&s, 0, FALSE);
    memset(seen, 0, p->n_units * sizeof(gboolean));
    for (guint l = 0; l < p->n_layers; l++) {
      guint u = p->layer_unit[l];
      if (!seen[u] && sharded) {
        all_gather(&s, u, FALSE);
        guint next = next_unit(fwd_order, n_fwd, u);
        if (p->forward_prefetch && next)
          all_gather(&s, next, FALSE);
      }
      seen[u] = TRUE;
      gint64 end = run_layer(&s, DDP_SEGMENT_FORWARD, l, p->forward_ns[l]);
      if (l == last_fwd[u] && u != 0 && reshard_after_forward)
        reshard(&s, u, end);
    }

    /* backward */
    memset(seen, 0, p->n_units * sizeof(gboolean));
    for (guint k = 0; k < p->n_layers; k++) {
      guint l = p->backward_order[k], u = p->layer_unit[l];
      guint next = u == 0 ? 0 : next_unit(bwd_order, n_bwd, u);
      if (!seen[u] && sharded) {
        all_gather(&s, u, TRUE);
        if (p->backward_prefetch == DDP_PREFETCH_PRE && next)
          all_gather(&s, next, TRUE);
      }
      seen[u] = TRUE;
      gint64 end = run_layer(&s, DDP_SEGMENT_BACKWARD, l, p->backward_ns[l]);
      if (k != last_bwd[u])
        continue;
      if (p->grad_copy_ns && p->grad_copy_ns[u] > 0) {
        /* the parameters are views of the flat parameter: the backward of that split writes their
         * gradients into the flat gradient, one pass, before the post-backward hook sees it */
        gint64 start = s.compute;
        s.compute = end = start + p->grad_copy_ns[u];
        if (segments) {
          DdpSegment seg = { DDP_SEGMENT_HOOK_CAST, (int)u, m, start, end };
          g_array_append_val(segments, seg);
        }
      }
      /* post-backward: reshard, (POST) prefetch, reduce unless under no_sync */
      if (free_in_backward)
        reshard(&s, u, end);
      if (sharded && p->backward_prefetch == DDP_PREFETCH_POST && next)
        all_gather(&s, next, TRUE);
      if (!sync)
        continue;
      gint64 start = MAX(MAX(s.lane[0], end), s.cpu), rs_end = start + p->reduce_ns[u];
      s.lane[0] = rs_end;
      add_span(&s, sharded ? DDP_OP_REDUCE_SCATTER : DDP_OP_ALL_REDUCE, (int)u, 0, TRUE,
               p->reduce_bytes ? p->reduce_bytes[u] : 0, start, rs_end);
      if (p->replica_ns && p->replica_ns[u] > 0) {
        gint64 rstart = MAX(s.lane[1], rs_end);
        s.lane[1] = rstart + p->replica_ns[u];
        add_span(&s, DDP_OP_ALL_REDUCE, (int)u, 1, TRUE, p->replica_bytes ? p->replica_bytes[u] : 0, rstart, s.lane[1]);
      }
    }
    if (m + 1 == steps && backward_end_ns)
      *backward_end_ns = s.compute;
    /* a synchronised backward's final callback: the compute stream waits for every reduction */
    if (sync)
      s.compute = MAX(MAX(s.compute, s.lane[0]), s.lane[1]);
  }
  /* then the sharded optimizer step */
  gint64 start = s.compute;
  gint64 end = start + p->optimizer_ns;
  if (segments) {
    DdpSegment seg = { DDP_SEGMENT_OPTIMIZER, -1, steps - 1, start, end };
    g_array_append_val(segments, seg);
  }
  g_queue_clear_full(&s.frees, g_free);
  g_free(s.gathered);
  return end;
}

/* ---- one iteration of a scenario ---- */

static gint64
cost_ns(const DdpCollective *c, DdpCollectiveOp op, guint64 bytes)
{
  if (bytes == 0)
    return 0;
  DdpCollectiveCost cost;
  ddp_collective_cost(c, op, bytes, &cost);
  return ddp_time_from_ns(cost.time_us * 1e3);
}

/* The replica group of HYBRID_SHARD: one rank per node, all nodes' ppn groups at once; on a
 * rail-optimized fabric each group has its GPU's NIC (NICs / ppn of them), otherwise the node's
 * NICs are shared ppn ways. */
static DdpCollective *
replica_collective(const DdpCluster *cluster, guint64 ppn, guint64 nodes, GError **error)
{
  DdpCluster replica = *cluster;
  replica.gpus_per_node = 1;
  int nics = cluster->inter.nics_per_node;
  if ((guint64)nics >= ppn) {
    replica.inter.nics_per_node = (int)((guint64)nics / ppn);
  } else {
    replica.inter.nics_per_node = 1;
    replica.inter.nic_bandwidth_Gbps = cluster->inter.nic_bandwidth_Gbps * nics / (double)ppn;
  }
  return ddp_collective_new(&replica, nodes, error);
}

static int
compare_ms(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* The largest @k block units' @bytes (units 1..), summed. */
static double
largest_units(const double *bytes, guint n_units, guint k)
{
  g_autofree double *sorted = g_memdup2(bytes + 1, (n_units - 1) * sizeof(double));
  double sum = 0;
  for (guint i = 0; i < k && i + 1 < n_units; i++) {
    guint best = i;
    for (guint j = i + 1; j + 1 < n_units; j++)
      if (sorted[j] > sorted[best])
        best = j;
    double t = sorted[i];
    sorted[i] = sorted[best];
    sorted[best] = t;
    sum += sorted[i];
  }
  return sum;
}

/**
 * ddp_fsdp_group:
 * See fsdp.h: HYBRID_SHARD across nodes shards within each node (its GPUs on one node); every
 * other strategy's group is all the GPUs (NO_SHARD's AllReduce included).
 */
gboolean
ddp_fsdp_group(const DdpScenario *scenario, guint64 *gpus, guint64 *nodes, GError **error)
{
  guint64 n = scenario->setup.gpus, servers;
  if (!ddp_cluster_check_gpus(scenario->cluster, n, &servers, error))
    return FALSE;
  gboolean hybrid = scenario->setup.shard.sharding == DDP_SHARDING_HYBRID && servers > 1;
  *gpus = hybrid ? n / servers : n;
  *nodes = hybrid ? 1 : servers;
  return TRUE;
}

/**
 * ddp_fsdp_simulate:
 * See fsdp.h.  The AllGathers move each unit's padded flat parameter in param_dtype (2 bytes under
 * --precision fp16/bf16: MixedPrecision(param_dtype, reduce_dtype) of that type; else the stored
 * dtype), the ReduceScatters the same count in reduce_dtype (= param_dtype).  Memory: the sharded
 * states (strategy.h) plus the unsharded units alive at the peak: the root and, with the rate
 * limiter, the two largest blocks (the unit computing and the one being gathered; without it,
 * every block: the CPU can run the AllGathers ahead of compute); SHARD_GRAD_OP keeps every unit
 * unsharded from its forward to its backward; unsharded gradients of the root and two blocks, or
 * of every unit when --accumulate micro-steps accumulate inside no_sync().
 */
DdpResult *
ddp_fsdp_simulate(const DdpScenario *scenario, const DdpRunOptions *options, GError **error)
{
  static const DdpRunOptions no_options = { 0 };
  if (!options)
    options = &no_options;
  if (scenario->setup.gpus == 1 && scenario->setup.shard.sharding != DDP_SHARDING_NONE) {
    /* _init_utils.py _init_core_state: "FSDP is switching to use `NO_SHARD` instead of … since the
     * world size is 1" — every strategy is NO_SHARD on one GPU */
    DdpScenario one = *scenario;
    one.setup.shard.sharding = DDP_SHARDING_NONE;
    return ddp_fsdp_simulate(&one, options, error);
  }
  const DdpSetup *setup = &scenario->setup;
  const DdpModel *model = scenario->model;
  const DdpCluster *cluster = scenario->cluster;
  const DdpShardOptions *so = &setup->shard;
  guint64 gpus = setup->gpus, nodes, group_gpus, group_nodes;
  if (!ddp_cluster_check_gpus(cluster, gpus, &nodes, error) ||
      !ddp_fsdp_group(scenario, &group_gpus, &group_nodes, error))
    return NULL;
  guint64 ppn = gpus / nodes;
  gboolean hybrid = so->sharding == DDP_SHARDING_HYBRID && nodes > 1;
  guint64 shard = so->sharding == DDP_SHARDING_NONE ? 1 : group_gpus;
  g_autoptr(DdpCollective) group = ddp_collective_new(cluster, group_gpus, error);
  if (!group)
    return NULL;
  g_autoptr(DdpCollective) replica = NULL;
  if (hybrid && !(replica = replica_collective(cluster, ppn, nodes, error)))
    return NULL;
  /* a calibration's measured curves answer where they measured exactly these communicators */
  if (scenario->calibration) {
    ddp_collective_use_calibration(group, scenario->calibration);
    if (replica)
      ddp_collective_use_calibration(replica, scenario->calibration);
  }

  guint nl = model->n_layers;
  g_autofree guint *layer_unit = g_new0(guint, nl);
  g_autoptr(GArray) units = ddp_fsdp_units(model, so->blocks_per_unit, layer_unit);
  guint nu = units->len;
  g_autoptr(DdpCompute) compute = ddp_strategy_compute(scenario, options->compute, 1.0);
  gboolean mixed = setup->precision == DDP_PRECISION_FP16 || setup->precision == DDP_PRECISION_BF16;

  g_autofree gint64 *ag_ns = g_new0(gint64, nu), *reduce_ns = g_new0(gint64, nu), *replica_ns = g_new0(gint64, nu);
  g_autofree gint64 *copy_ns = g_new0(gint64, nu);
  g_autofree guint64 *ag_bytes = g_new0(guint64, nu), *reduce_bytes = g_new0(guint64, nu), *replica_bytes = g_new0(guint64, nu);
  g_autofree double *unit_bytes = g_new0(double, nu);   /* unsharded, in param_dtype */
  for (guint u = 0; u < nu; u++) {
    const DdpFsdpUnit *unit = &g_array_index(units, DdpFsdpUnit, u);
    if (unit->numel == 0)
      continue;
    double elem = mixed ? 2.0 : (double)unit->bytes / (double)unit->numel;
    guint64 padded = ((guint64)unit->numel + shard - 1) / shard * shard;
    unit_bytes[u] = (double)padded * elem;
    copy_ns[u] = ddp_compute_memory_pass_ns(compute, (double)unit->numel * elem);
    if (so->sharding == DDP_SHARDING_NONE) {
      reduce_bytes[u] = (guint64)unit->numel * (guint64)elem;
      reduce_ns[u] = cost_ns(group, DDP_OP_ALL_REDUCE, reduce_bytes[u]);
      continue;
    }
    ag_bytes[u] = reduce_bytes[u] = padded * (guint64)elem;
    ag_ns[u] = cost_ns(group, DDP_OP_ALL_GATHER, ag_bytes[u]);
    reduce_ns[u] = cost_ns(group, DDP_OP_REDUCE_SCATTER, reduce_bytes[u]);
    if (replica) {
      replica_bytes[u] = padded / shard * (guint64)elem;
      replica_ns[u] = cost_ns(replica, DDP_OP_ALL_REDUCE, replica_bytes[u]);
    }
  }
  /* contention: from the channels of the largest unit's collective (ddp_overheads_overlap_slowdown) */
  guint64 largest = 0;
  for (guint u = 0; u < nu; u++)
    largest = MAX(largest, reduce_bytes[u]);
  DdpCollectiveCost largest_cost = { 0 };
  if (largest > 0)
    ddp_collective_cost(group, so->sharding == DDP_SHARDING_NONE ? DDP_OP_ALL_REDUCE : DDP_OP_ALL_GATHER, largest,
                        &largest_cost);
  int slowdown_channels = 0;
  double slowdown = ddp_overheads_overlap_slowdown(&setup->overheads, cluster, largest_cost.channels, &slowdown_channels);
  g_autofree gint64 *fwd = g_new0(gint64, nl), *bwd = g_new0(gint64, nl);
  gint64 pass_ns = 0;   /* one micro-step's forward, backward and flat-gradient passes */
  for (guint l = 0; l < nl; l++) {
    fwd[l] = ddp_compute_forward_ns(compute, l);
    bwd[l] = ddp_compute_backward_ns(compute, l);
    pass_ns += fwd[l] + bwd[l];
  }
  for (guint u = 0; u < nu; u++)
    pass_ns += copy_ns[u];
  DdpFsdpPlan plan = {
    .n_layers = nl, .n_units = nu, .forward_ns = fwd, .backward_ns = bwd, .backward_order = model->backward_layers,
    .layer_unit = layer_unit, .all_gather_ns = ag_ns, .reduce_ns = reduce_ns, .replica_ns = replica ? replica_ns : NULL,
    .grad_copy_ns = copy_ns,
    .all_gather_bytes = ag_bytes, .reduce_bytes = reduce_bytes, .replica_bytes = replica_bytes,
    .optimizer_ns = ddp_compute_optimizer_ns(compute) / (gint64)shard, .micro_steps = setup->accumulate,
    .accumulate = so->accumulate, .sharding = so->sharding,
    .backward_prefetch = so->backward_prefetch, .forward_prefetch = so->forward_prefetch,
    .limit_all_gathers = so->limit_all_gathers,
  };
  gint64 compute_ns = (gint64)setup->accumulate * pass_ns + plan.optimizer_ns;

  if (!ddp_stragglers_check_ranks(scenario->stragglers, gpus, error))
    return NULL;
  DdpResult *r = g_new0(DdpResult, 1);
  r->spans = g_array_new(FALSE, FALSE, sizeof(DdpCommSpan));
  g_autoptr(GArray) segments = g_array_new(FALSE, FALSE, sizeof(DdpSegment));
  gint64 backward_end = 0;
  gint64 host_ns = ddp_time_from_ns(setup->overheads.host_iteration_us * 1e3);
  /* the slowest rank's persistent jitter (as ddp.c: ddp_jitter_slowest), and per iteration the
   * largest straggler factor and delay over the ranks (file comment) */
  double jitter = setup->overheads.jitter > 0 && gpus > 1 ? ddp_jitter_slowest(setup->overheads.jitter, gpus) : 1.0;
  gboolean vary = !ddp_stragglers_is_none(scenario->stragglers);
  g_autofree double *factor = vary ? g_new(double, gpus) : NULL;
  g_autofree gint64 *delay = vary ? g_new(gint64, gpus) : NULL;
  guint32 seed[2] = { (guint32)setup->seed, (guint32)(setup->seed >> 32) };
  g_autoptr(GRand) rng = g_rand_new_with_seed_array(seed, 2);
  g_autofree gint64 *fwd_at = g_new0(gint64, nl), *bwd_at = g_new0(gint64, nl), *copy_at = g_new0(gint64, nu);
  r->iteration_ms = g_new0(double, setup->iterations);
  double sum_ms = 0, sum_exposed = 0, sum_wait = 0, sum_contention = 0;
  gint64 comm_busy = 0;   /* the collectives' stream-busy time: the same every iteration */
  gint64 iteration = 0, exposed_ns = 0;
  for (guint i = 0; i < setup->iterations; i++) {
    double f = jitter;
    gint64 d = 0;
    if (vary) {
      ddp_stragglers_sample(scenario->stragglers, rng, i + 1, gpus, factor, delay);
      double worst = factor[0];
      for (guint64 k = 0; k < gpus; k++) {
        worst = MAX(worst, factor[k]);
        d = MAX(d, delay[k]);
      }
      f *= worst;
    }
    for (guint l = 0; l < nl; l++) {
      fwd_at[l] = ddp_time_from_ns(f * (double)fwd[l]);
      bwd_at[l] = ddp_time_from_ns(f * (double)bwd[l]);
    }
    for (guint u = 0; u < nu; u++)
      copy_at[u] = ddp_time_from_ns(f * (double)copy_ns[u]);
    DdpFsdpPlan at = plan;
    at.grad_copy_ns = copy_at;
    at.forward_ns = fwd_at;
    at.backward_ns = bwd_at;
    at.optimizer_ns = ddp_time_from_ns(f * (double)plan.optimizer_ns);
    gboolean last = i + 1 == setup->iterations;
    if (last)
      g_array_set_size(segments, 0);
    g_autoptr(GArray) spans = g_array_new(FALSE, FALSE, sizeof(DdpCommSpan));
    gint64 end = ddp_fsdp_schedule(&at, spans, last ? segments : NULL, &backward_end);
    if (last)
      g_array_append_vals(r->spans, spans->data, spans->len);
    comm_busy = 0;
    for (guint k = 0; k < spans->len; k++)
      comm_busy += g_array_index(spans, DdpCommSpan, k).end_ns - g_array_index(spans, DdpCommSpan, k).start_ns;
    gint64 stretched = ddp_time_from_ns(f * (double)compute_ns);
    exposed_ns = MAX(0, end - stretched);
    gint64 contention = ddp_time_from_ns(slowdown * (double)MAX(0, MIN(comm_busy - exposed_ns, stretched)));
    iteration = end + contention + host_ns + d;
    if (last) {   /* the terms added to the schedule's end, drawn after it so that the trace spans the iteration */
      DdpSegment tail[] = { { DDP_SEGMENT_WAIT, -1, 0, end, end + host_ns + d },
                            { DDP_SEGMENT_CONTENTION, -1, 0, end + host_ns + d, iteration } };
      g_array_append_vals(segments, tail, G_N_ELEMENTS(tail));
    }
    sum_contention += (double)contention / 1e6;
    r->iteration_ms[i] = (double)iteration / 1e6;
    sum_ms += r->iteration_ms[i];
    sum_exposed += (double)exposed_ns / 1e6;
    sum_wait += (double)(stretched - compute_ns + d) / 1e6;
  }
  for (guint i = 0; i < r->spans->len; i++) {
    const DdpCommSpan *c = &g_array_index(r->spans, DdpCommSpan, i);
    double ms = (double)(c->end_ns - c->start_ns) / 1e6;
    if (c->op == DDP_OP_ALL_GATHER)
      r->all_gather_ms += ms;
    else if (c->lane == 0)
      r->reduce_scatter_ms += ms;
    else
      r->replica_all_reduce_ms += ms;
    r->comm_ms += ms;
  }
  r->gpus = gpus;
  r->nodes = nodes;
  /* the NVLink domains the job's ranks span, as ddp_collective_domains counts them for DDP */
  guint64 domain_hosts = (guint64)ddp_cluster_domain_nodes(cluster);
  r->domains = (nodes + domain_hosts - 1) / domain_hosts;
  r->n_units = nu;
  r->shard_gpus = shard;
  r->iterations = setup->iterations;
  g_autofree double *sorted = g_memdup2(r->iteration_ms, setup->iterations * sizeof(double));
  qsort(sorted, setup->iterations, sizeof(double), compare_ms);
  r->mean_ms = r->first_iteration_ms = sum_ms / setup->iterations;
  r->p50_ms = sorted[MAX((guint)ceil(0.50 * setup->iterations), 1) - 1];
  r->p99_ms = sorted[MAX((guint)ceil(0.99 * setup->iterations), 1) - 1];
  r->compute_ms = (double)compute_ns / 1e6;
  r->host_iteration_ms = (double)host_ns / 1e6;
  r->exposed_comm_ms = sum_exposed / setup->iterations;
  r->overlap = r->comm_ms > 0 ? CLAMP(1.0 - r->exposed_comm_ms / r->comm_ms, 0.0, 1.0) : 1.0;
  r->jitter_slowest = jitter;
  r->jitter_ms = (jitter - 1.0) * r->compute_ms;
  r->straggler_wait_ms = MAX(0.0, sum_wait / setup->iterations - r->jitter_ms);
  r->contention_ms = sum_contention / setup->iterations;
  r->overlap_slowdown = slowdown;
  r->overlap_slowdown_channels = slowdown_channels;
  r->host_layer_ms = (double)setup->accumulate * ddp_compute_host_bound_ns(compute) / 1e6;
  r->recompute_ms = (double)setup->accumulate * ddp_compute_recompute_ns(compute) / 1e6;
  r->samples_per_s = (double)gpus * setup->batch * setup->accumulate / (r->mean_ms / 1e3);
  r->collapsed_ranks = TRUE;
  r->backward_end_ns = g_new0(gint64, 1);
  r->backward_end_ns[0] = backward_end;
  r->reported_iteration_ns = iteration;
  r->reported_exposed_comm_ns = exposed_ns;
  r->n_timelines = options->n_watch_ranks;
  r->timelines = g_new0(DdpRankTimeline, options->n_watch_ranks);
  for (guint i = 0; i < options->n_watch_ranks; i++) {
    r->timelines[i].rank = options->watch_ranks[i];
    r->timelines[i].factor = 1.0;
    r->timelines[i].segments = g_array_new(FALSE, FALSE, sizeof(DdpSegment));
    if (options->watch_ranks[i] < gpus)
      g_array_append_vals(r->timelines[i].segments, segments->data, segments->len);
  }

  double unsharded_params = 0, unsharded_grads = 0;
  if (so->sharding != DDP_SHARDING_NONE) {
    double blocks_all = largest_units(unit_bytes, nu, nu);
    double blocks_two = largest_units(unit_bytes, nu, 2);
    if (so->sharding == DDP_SHARDING_GRAD_OP)
      unsharded_params = unit_bytes[0] + blocks_all;
    else
      unsharded_params = unit_bytes[0] + (so->limit_all_gathers ? blocks_two : blocks_all);
    /* under no_sync every unit's unsharded gradient lives from its first backward to the last
     * micro-step's ReduceScatter (FullyShardedDataParallel.no_sync: "FSDP will accumulate the full
     * model gradients (instead of gradient shards) until the eventual sync") */
    gboolean no_sync = setup->accumulate > 1 && so->accumulate == DDP_FSDP_ACCUMULATE_NO_SYNC;
    unsharded_grads = unit_bytes[0] + (no_sync ? blocks_all : blocks_two);
  }
  ddp_strategy_memory(model, &cluster->gpu, setup, shard, unsharded_params, unsharded_grads, &r->memory);

  if (!options->skip_single_gpu) {
    double single_ms = 0;
    if (!ddp_simulate_one_gpu(scenario, setup->batch, options->compute, &single_ms, error)) {
      ddp_result_free(r);
      return NULL;
    }
    r->single_gpu_ms = single_ms;
    r->scaling_efficiency = single_ms / r->mean_ms;
  }
  return r;
}
