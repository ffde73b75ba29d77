/* ddp — DDP training iterations on the event kernel (see ddp.h).
 *
 * The facts this rests on (docs/model.md, with their PyTorch sources):
 *  §1.4  a bucket is launched when its last gradient is ready AND every lower-index bucket has been
 *        launched (mark_bucket_ready); nothing waits for earlier buckets to *finish*;
 *  §1.6  all bucket AllReduces go to one NCCL stream, so they run one after another in launch
 *        order, each after the compute work enqueued before its launch (the grad→bucket copies);
 *  §1.5  the grad→bucket copy pre-divides by world size: one elementwise pass per gradient on the
 *        compute stream, in the autograd hook, whether or not gradient_as_bucket_view;
 *  §1.4/§5.18  finalize waits for every bucket; the optimizer step is stream-ordered after the
 *        last AllReduce, after copying buckets back into .grad unless gradient_as_bucket_view;
 *  §1.2–1.3  iteration 0 uses the construction-time layout (one bucket by default: no overlap),
 *        then the rebuild broadcasts bucket indices from rank 0 (host-blocking) before iteration 1;
 *  §1.7  no_sync micro-steps run forward and backward with no hooks and no communication;
 *        broadcast_buffers broadcasts module buffers before every forward; find_unused_parameters
 *        adds an AllReduce of an int32 map of length #params after the last bucket;
 *  §1.8  fp16/bf16 compression hooks cast the bucket (and divide) before the AllReduce and copy
 *        back after it; the wire carries 2 bytes per element;
 *  §5.8  NCCL kernels slow overlapped compute (§1.6 c; overlap_slowdown, docs/overheads.md): by
 *        default C / (SMs − C), NCCL holding one block per channel for the whole call; and in a
 *        convolutional model a BatchNorm backward waits for a running collective across nodes
 *        (batch_norm_waits: cuDNN's BatchNorm kernels stall beside NCCL's, NVIDIA/nccl#661).
 * Overheads that are not collectives (docs/overheads.md): host time at each step boundary, a host
 * dispatch floor per layer pass (in compute), the data loader's rate per node as a floor on the
 * iteration, and rank-to-rank jitter as persistent per-rank speed factors (straggler.h).
 *
 * How time advances.  A collective is a synchronisation: it starts when the LAST rank launches it
 * and the comm stream is free.  Between collectives ranks run independently, so each rank's time
 * is an integer in an array, advanced by array passes at bucket granularity: from one bucket's
 * launch point to the next, rank r does factor[r] × (nominal backward + hook work between the two
 * points), stretched by (1 + overlap_slowdown) where that work overlaps a running collective.  The
 * event kernel orders the global events — bucket launched by all ranks, collective finished — and
 * owns the clock; a handler finds the next launch point on the upper envelope of the ranks'
 * lines.  Cost per iteration: O(ranks × buckets), never one event per (rank, layer).  Which ranks
 * are in the arrays: when no straggler term varies by rank every rank computes the same numbers,
 * so one stands for all; when the factor terms reduce to one law (docs/model.md §7), only the ranks
 * drawn from the top of the order statistics that can set the pace (rankset.c), every rank in the
 * reported iteration; otherwise every rank, drawn on threads in blocks.
 */
#include "ddp.h"

#include "des.h"
#include "dp.h"
#include "fsdp.h"
#include "rankset.h"
#include "strategy.h"
#include "zero.h"
#include "ranges.h"

#include <math.h>
#include <string.h>

/* Per bucket layout: where in backward each bucket can launch, and what it costs.
 *
 * Work coordinate: nominal nanoseconds of compute-stream work since the start of the synced
 * backward — layer backward plus hook copies, plus the compression-hook casts each rank runs when
 * it launches a bucket.  A rank with straggler factor f that starts backward at b reaches
 * coordinate X at b + round(f·X) (stretched inside collectives when overlap_slowdown > 0). */
typedef struct {
  const DdpBucketLayout *layout;
  guint n_buckets;
  gint64 *ready_x;         /* [b] all of b's gradients are ready */
  gint64 *launch_x;        /* [b] b and every lower bucket launched, casts done */
  guint *launch_pos;       /* [b] backward positions (layers) done at launch */
  gint64 *layer_start_x;   /* [n_layers] by backward position */
  gint64 *layer_end_x;
  gint64 end_x;            /* backward done */
  gint64 *wait_x;          /* [n_waits] ascending: where a BatchNorm backward starts (batch_norm_waits) */
  guint n_waits;
  gint64 *cast_ns;         /* [b] compute-side hook work at launch (compression casts; before
                            * PyTorch 1.8 the bucket's own division) */
  gint64 *collective_ns;   /* [b] comm-stream time */
  DdpCollectiveCost *cost; /* [b] */
  guint64 *wire_bytes;     /* [b] */
} Plan;

typedef struct {
  gint64 start, end;
} Interval;

/* One line of the upper envelope max_r (start_r + factor_r · X). */
typedef struct {
  double slope, intercept;
  guint64 rank;
} Line;

typedef struct {
  const DdpScenario *scenario;
  const DdpRunOptions *options;
  const DdpModel *model;
  DdpCompute *compute;
  DdpCollective *collective;
  DdpDes *des;
  GRand *rng;

  guint64 gpus;
  guint64 ranks;           /* simulated ranks: gpus, or 1 when all ranks are identical */
  gboolean collapsed;
  gint64 *time;            /* [ranks] current time on each rank's compute stream */
  gint64 *start;           /* [ranks] start of the synced backward */
  double *factor;          /* [ranks] straggler slowdown this iteration */
  gint64 *delay;           /* [ranks] */
  gboolean stretching;     /* overlap_slowdown > 0: compute slows inside collectives */
  double slowdown;         /* the overlap_slowdown in force (overlap_slowdown()) */
  int slowdown_channels;   /* the NCCL channels it came from, 0 when not from them */
  double stretch;          /* 1 + slowdown */
  gboolean batch_norm_waits; /* a BatchNorm backward cannot start while a collective across nodes runs
                              * (rank_time_at) */
  gint64 *anchor_t;        /* [ranks] stretching: last interval boundary passed, its time ... */
  double *anchor_x;        /* ... and its work coordinate */
  guint *anchor_k;         /* ... and the first interval not behind it */
  Line *hull;              /* upper envelope, when used */
  guint n_hull;
  guint threads;           /* for per-rank draws (options->threads, 0: one per core) */

  /* The order-statistics path (docs/model.md §7), when rankset is set: outside the reported
   * iteration the arrays above hold only the ranks drawn by rankset (ranks = their count, index
   * m = the m-th draw), and every other rank is dominated.  Between iterations the undrawn ranks'
   * clocks are implicit: all at uniform_time, or max(comm_end + f·finalize + f·optimizer,
   * floor_time) with f their factor in the iteration before (rankset knows its law). */
  DdpRankSet *rankset;
  gint64 x0[2];            /* [initial, steady plan] the smallest coordinate a max is asked at */
  gboolean uniform;
  gint64 uniform_time;
  gint64 comm_end, floor_time;
  double *previous_factor; /* [ranks] the drawn ranks' factors in the iteration before */
  guint32 *jitter_position; /* [ranks] ddp_jitter_factors' positions, until rankset is made */
  gint64 barrier_end;      /* the last barrier's end this iteration */

  /* nominal work prefix sums: work[k] = Σ of the first k layers (backward or forward order) */
  gint64 *backward_work_hooked;   /* [n_layers+1] with hook copies (the synced micro-step) */
  gint64 *backward_work_plain;    /* [n_layers+1] under no_sync */
  gint64 *forward_work;           /* [n_layers+1] in forward order */
  gint64 finalize_ns, optimizer_ns, broadcast_ns, rebuild_ns, unused_map_ns, unused_search_ns;
  gint64 host_iteration_ns;     /* serial host time before each iteration's forward */
  double *jitter;               /* [ranks] persistent jitter factors, or NULL */
  gint64 contention_ns;         /* this iteration: stretch of the slowest rank's backward */

  Plan initial, steady;

  /* state of the iteration being simulated */
  const Plan *plan;
  gboolean reporting;
  gint64 *backward_end_out;  /* [ranks] result->backward_end_ns, written in the reported iteration */
  guint next_launch;
  gint64 comm_free;
  GArray *intervals;       /* of Interval, this iteration */
  gint64 last_comm_end;
  gint64 iteration_start;
  gint64 exposed_ns;
  DdpBucketSchedule *schedule; /* [n_buckets] of the iteration being reported */
  DdpRankTimeline *timelines;
  guint micro_step;
} Sim;

void
ddp_result_free(DdpResult *r)
{
  if (!r)
    return;
  g_free(r->iteration_ms);
  for (guint b = 0; b < r->n_buckets; b++)
    g_free(r->buckets[b].params);
  g_free(r->buckets);
  g_free(r->backward_end_ns);
  for (guint i = 0; i < r->n_timelines; i++)
    g_array_unref(r->timelines[i].segments);
  g_free(r->timelines);
  g_free(r->dp);
  if (r->spans)
    g_array_unref(r->spans);
  g_free(r);
}

/* Conversions saturate at DDP_TIME_MAX_NS (ranges.h); check_time_budget refuses any run whose
 * worst case gets near it, so saturation never shows in a result. */
static gint64
us_to_ns(double us)
{
  return ddp_time_from_ns(us * 1e3);
}

static gint64
scaled(double factor, gint64 work)
{
  return ddp_time_from_ns(factor * (double)work);
}

/* The simulated clock is gint64 ns and runs on across iterations, so the whole run must stay
 * below DDP_TIME_MAX_NS.  Bound it from above, in doubles, as if nothing overlapped: per
 * iteration K forwards and backwards (each layer's hook passes included) at the worst straggler
 * factor and the overlap stretch, every collective and broadcast one after another, the worst
 * hiccup delay; times every iteration simulated.  Called before the prefix sums are formed (with
 * @comm_ns 0) and again once the bucket plans know their collective times. */
static gboolean
check_time_budget(const Sim *sim, double comm_ns, GError **error)
{
  const DdpSetup *setup = &sim->scenario->setup;
  const DdpModel *m = sim->model;
  double compute = (double)ddp_compute_optimizer_ns(sim->compute);
  for (guint l = 0; l < m->n_layers; l++)
    compute += (double)ddp_compute_forward_ns(sim->compute, l) + 2.0 * (double)ddp_compute_backward_ns(sim->compute, l);
  for (guint p = 0; p < m->n_params; p++)
    compute += 2.0 * (double)ddp_compute_memory_pass_ns(sim->compute, (double)m->params[p].numel *
                                                                          (double)ddp_dtype_size(m->params[p].dtype));
  double stretch = MAX(1.0, sim->stretch);   /* sim_init sets it before the first call */
  double jitter = 1.0;
  for (guint64 r = 0; sim->jitter && r < sim->ranks; r++)
    jitter = MAX(jitter, sim->jitter[r]);
  double iteration = stretch * jitter * ddp_stragglers_worst_factor(sim->scenario->stragglers) * setup->accumulate * compute +
                     (double)sim->host_iteration_ns +
                     setup->accumulate * (double)sim->broadcast_ns + (double)sim->unused_map_ns +
                     (double)sim->rebuild_ns + comm_ns +
                     (double)ddp_stragglers_worst_delay_ns(sim->scenario->stragglers);
  if (setup->overheads.input_rate > 0)   /* the data loader's floor on an iteration */
    iteration += setup->batch * setup->accumulate * (double)sim->scenario->cluster->gpus_per_node /
                 setup->overheads.input_rate * 1e9;
  double total = iteration * ((double)setup->iterations + 2.0);
  if (!(total < (double)(DDP_TIME_MAX_NS / 2))) {
    g_set_error(error, DDP_SCENARIO_ERROR, DDP_SCENARIO_ERROR_INVALID,
                "the run could last %.3g s of simulated time in the worst case (%.3g s per iteration × %u "
                "iterations), past the simulator's clock (2^61 ns, 73 years): lower --iterations, "
                "--accumulate, --batch, the stragglers or the model's sizes%s", total / 1e9, iteration / 1e9,
                setup->iterations + 2, setup->overheads.input_rate > 0 ? ", or raise --input-rate" : "");
    return FALSE;
  }
  return TRUE;
}

static void
plan_clear(Plan *p)
{
  g_free(p->ready_x);
  g_free(p->launch_x);
  g_free(p->launch_pos);
  g_free(p->layer_start_x);
  g_free(p->wait_x);
  g_free(p->layer_end_x);
  g_free(p->cast_ns);
  g_free(p->collective_ns);
  g_free(p->cost);
  g_free(p->wire_bytes);
}

/* Bytes a bucket's AllReduce moves: its own, or half of them for fp32 under a 16-bit comm hook. */
static guint64
wire_bytes(const DdpSetup *setup, const DdpBucket *bucket)
{
  gboolean compress = setup->comm_hook != DDP_HOOK_NONE && ddp_dtype_size(bucket->dtype) > 2;
  return compress ? bucket->bytes / ddp_dtype_size(bucket->dtype) * 2 : bucket->bytes;
}

/* Compression-hook passes, expressed for ddp_compute_memory_pass_ns (which counts a read and a
 * write of its argument): cast fp32→16-bit reads 4 and writes 2 bytes per element and the divide
 * reads and writes 2, i.e. (6 + 4)/2 = 5/4 of the fp32 bucket; the copy back reads 2 and writes 4,
 * i.e. 3/4.  The copy back runs after the AllReduce, ordered on the comm stream. */
static void
plan_build(Sim *sim, Plan *p, const DdpBucketLayout *layout)
{
  const DdpModel *m = sim->model;
  const DdpSetup *setup = &sim->scenario->setup;
  const gint64 *w = sim->backward_work_hooked;
  guint nl = m->n_layers, nb = ddp_bucket_layout_count(layout);
  p->layout = layout;
  p->n_buckets = nb;
  g_autofree guint *layer_pos = g_new(guint, nl);
  for (guint k = 0; k < nl; k++)
    layer_pos[m->backward_layers[k]] = k;

  p->ready_x = g_new0(gint64, nb);
  p->launch_x = g_new0(gint64, nb);
  p->launch_pos = g_new0(guint, nb);
  p->cast_ns = g_new0(gint64, nb);
  p->collective_ns = g_new0(gint64, nb);
  p->cost = g_new0(DdpCollectiveCost, nb);
  p->wire_bytes = g_new0(guint64, nb);
  g_autofree guint *ready_pos = g_new0(guint, nb);
  guint running_max = 0;
  /* §1.5: before PyTorch 1.8 the grad→bucket copy did not divide; the Reducer pre-divided each
   * whole bucket in its own kernel on the compute stream (mark_variable_ready_dense:
   * replica.contents.div_, reducer.cpp 1.4–1.7), at world size 1 too, before launching its
   * AllReduce.  Same bytes as the fused division whatever the cap, but one kernel per bucket. */
  gboolean prescale_per_bucket = setup->buckets.torch_version < 108 && !sim->options->plain_module;
  for (guint b = 0; b < nb; b++) {
    const DdpBucket *bucket = ddp_bucket_layout_get(layout, b);
    /* ready when the layer of its last gradient finishes backward (hook included) */
    for (guint i = 0; i < bucket->n_params; i++)
      ready_pos[b] = MAX(ready_pos[b], layer_pos[m->params[bucket->params[i]].layer] + 1);
    running_max = MAX(running_max, ready_pos[b]);
    p->launch_pos[b] = running_max;   /* in-order launch: after every lower bucket */

    gboolean compress = setup->comm_hook != DDP_HOOK_NONE && ddp_dtype_size(bucket->dtype) > 2;
    p->wire_bytes[b] = wire_bytes(setup, bucket);
    ddp_collective_allreduce(sim->collective, p->wire_bytes[b], &p->cost[b]);
    p->collective_ns[b] = us_to_ns(p->cost[b].time_us);
    if (compress && sim->gpus > 1) {
      p->cast_ns[b] = ddp_compute_memory_pass_ns(sim->compute, 1.25 * (double)bucket->bytes);
      p->collective_ns[b] += ddp_compute_memory_pass_ns(sim->compute, 0.75 * (double)bucket->bytes);
    } else if (prescale_per_bucket) {
      /* before 1.8: replica.contents.div_(world size) when the bucket's last gradient is in */
      p->cast_ns[b] = ddp_compute_memory_pass_ns(sim->compute, (double)bucket->bytes);
    }
  }
  /* coordinates: casts of the buckets launched at position k run before layer k */
  g_autofree gint64 *casts_through = g_new0(gint64, nl + 1); /* casts at positions <= k */
  for (guint b = 0; b < nb; b++)
    casts_through[p->launch_pos[b]] += p->cast_ns[b];
  for (guint k = 1; k <= nl; k++)
    casts_through[k] += casts_through[k - 1];
  gint64 casts_before = 0;
  for (guint b = 0; b < nb; b++) {
    casts_before += p->cast_ns[b];
    p->launch_x[b] = w[p->launch_pos[b]] + casts_before;
    p->ready_x[b] = w[ready_pos[b]] + (ready_pos[b] > 0 ? casts_through[ready_pos[b] - 1] : 0);
  }
  p->layer_start_x = g_new(gint64, nl);
  p->layer_end_x = g_new(gint64, nl);
  p->wait_x = g_new(gint64, nl);
  p->n_waits = 0;
  for (guint k = 0; k < nl; k++) {
    p->layer_start_x[k] = w[k] + casts_through[k];
    p->layer_end_x[k] = w[k + 1] + casts_through[k];
    if (sim->batch_norm_waits && ddp_model_layer_is_batch_norm(m, m->backward_layers[k]))
      p->wait_x[p->n_waits++] = p->layer_start_x[k];
  }
  p->end_x = w[nl] + casts_through[nl];
}

/* The first BatchNorm start at or after @x (G_MAXDOUBLE: none). */
static double
next_wait_x(const Plan *p, double x)
{
  guint lo = 0, hi = p->n_waits;
  while (lo < hi) {
    guint mid = (lo + hi) / 2;
    if ((double)p->wait_x[mid] < x)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo < p->n_waits ? (double)p->wait_x[lo] : G_MAXDOUBLE;
}

/* Time rank r reaches work coordinate @x of the synced backward.  Without stretching this is
 * start + round(factor·x).  With it, the rank runs at 1/stretch speed inside comm intervals, and
 * where BatchNorm waits (batch_norm_waits) it stops inside an interval at the next BatchNorm's
 * start until the interval ends (back-to-back collectives: until the comm stream is idle); the
 * rank's anchor (last interval boundary passed) makes successive queries O(1) amortised. */
static gint64
rank_time_at(Sim *sim, guint64 r, gint64 x)
{
  double f = sim->factor[r];
  if (!sim->stretching)
    return sim->start[r] + scaled(f, x);
  if ((double)x < sim->anchor_x[r]) {
    sim->anchor_t[r] = sim->start[r];
    sim->anchor_x[r] = 0;
    sim->anchor_k[r] = 0;
  }
  const Interval *iv = (const Interval *)(const void *)sim->intervals->data;
  for (;;) {
    gint64 ta = sim->anchor_t[r];
    double xa = sim->anchor_x[r];
    guint k = sim->anchor_k[r];
    while (k < sim->intervals->len && iv[k].end <= ta)
      k++;
    sim->anchor_k[r] = k;
    if (k == sim->intervals->len)
      return ta + (gint64)llround(f * ((double)x - xa));
    gboolean inside = ta >= iv[k].start;
    double rate = f * (inside ? sim->stretch : 1.0);
    gint64 tb = inside ? iv[k].end : iv[k].start;
    double xb = xa + (double)(tb - ta) / rate;
    if (inside && sim->batch_norm_waits) {
      double stop = next_wait_x(sim->plan, xa);
      if (stop < xb) {
        /* the rank reaches the BatchNorm at @stop and waits there for the collective to end: the
         * layer starts at once (a trace shows the BatchNorm kernel long, not a gap; the gradients
         * made before it are ready then) and its work runs after tb */
        if ((double)x <= stop)
          return ta + (gint64)llround(rate * ((double)x - xa));
        sim->anchor_t[r] = tb;
        sim->anchor_x[r] = stop;
        continue;
      }
    }
    if ((double)x <= xb)
      return ta + (gint64)llround(rate * ((double)x - xa));
    sim->anchor_t[r] = tb;
    sim->anchor_x[r] = xb;
  }
}

static int
compare_lines(const void *a, const void *b)
{
  const Line *p = a, *q = b;
  if (p->slope != q->slope)
    return p->slope < q->slope ? -1 : 1;
  if (p->intercept != q->intercept)
    return p->intercept > q->intercept ? -1 : 1;   /* equal slopes: highest first */
  return p->rank < q->rank ? -1 : p->rank > q->rank;
}

/* Upper envelope of the lines start_r + factor_r·X (the convex-hull trick): max over all ranks at
 * any X in O(log ranks) instead of O(ranks).  Exact on the integers we report, since rounding is
 * monotone: max_r round(v_r) = round(max_r v_r). */
static void
hull_build(Sim *sim)
{
  g_autofree Line *lines = g_new(Line, sim->ranks);
  for (guint64 r = 0; r < sim->ranks; r++)
    lines[r] = (Line){ sim->factor[r], (double)sim->start[r], r };
  qsort(lines, sim->ranks, sizeof(Line), compare_lines);
  guint n = 0;
  for (guint64 i = 0; i < sim->ranks; i++) {
    const Line *l = &lines[i];
    if (n > 0 && sim->hull[n - 1].slope == l->slope)
      continue; /* same slope, lower intercept: never the max */
    /* drop the last line while it is nowhere strictly above both neighbours */
    while (n >= 2) {
      const Line *a = &sim->hull[n - 2], *b = &sim->hull[n - 1];
      if ((a->intercept - l->intercept) * (b->slope - a->slope) <= (a->intercept - b->intercept) * (l->slope - a->slope))
        n--;
      else
        break;
    }
    sim->hull[n++] = *l;
  }
  sim->n_hull = n;
}

static double
line_at(const Line *l, gint64 x)
{
  return l->intercept + l->slope * (double)x;
}

/* When the last rank reaches coordinate @x. */
static gint64
max_time_at(Sim *sim, gint64 x)
{
  gint64 latest = G_MININT64;
  if (sim->n_hull == 0) {
    for (guint64 r = 0; r < sim->ranks; r++)
      latest = MAX(latest, rank_time_at(sim, r, x));
    return latest;
  }
  /* values along the envelope at fixed x are unimodal: binary search for the peak */
  guint lo = 0, hi = sim->n_hull - 1;
  while (lo < hi) {
    guint mid = (lo + hi) / 2;
    if (line_at(&sim->hull[mid], x) <= line_at(&sim->hull[mid + 1], x))
      lo = mid + 1;
    else
      hi = mid;
  }
  return rank_time_at(sim, sim->hull[lo].rank, x);
}

static void
record(Sim *sim, guint64 r, DdpSegmentKind kind, int index, gint64 start, gint64 end)
{
  for (guint i = 0; i < sim->options->n_watch_ranks && sim->reporting; i++) {
    guint64 rank = sim->options->watch_ranks[i];
    if (rank >= sim->gpus || !(sim->collapsed ? r == 0 : rank == r))
      continue;
    DdpSegment seg = { kind, index, sim->micro_step, start - sim->iteration_start, end - sim->iteration_start };
    g_array_append_val(sim->timelines[i].segments, seg);
  }
}

static gboolean
is_watched(const Sim *sim, guint64 r)
{
  for (guint i = 0; i < sim->options->n_watch_ranks && sim->reporting; i++) {
    guint64 rank = sim->options->watch_ranks[i];
    if (rank < sim->gpus && (sim->collapsed ? r == 0 : rank == r))
      return TRUE;
  }
  return FALSE;
}

/* Layer slices of a plain pass (forward or no_sync backward) that started at @t0 on rank r. */
static void
record_pass(Sim *sim, guint64 r, DdpSegmentKind kind, const gint64 *work, const guint *order, gint64 t0)
{
  if (!is_watched(sim, r))
    return;
  for (guint k = 0; k < sim->model->n_layers; k++)
    record(sim, r, kind, (int)(order ? order[k] : k), t0 + scaled(sim->factor[r], work[k]),
           t0 + scaled(sim->factor[r], work[k + 1]));
}

/* The synced backward of a watched rank, layer by layer, once every collective is known. */
static void
record_synced_backward(Sim *sim, guint64 r)
{
  const Plan *p = sim->plan;
  if (!is_watched(sim, r))
    return;
  for (guint k = 0; k < sim->model->n_layers; k++)
    record(sim, r, DDP_SEGMENT_BACKWARD, (int)sim->model->backward_layers[k], rank_time_at(sim, r, p->layer_start_x[k]),
           rank_time_at(sim, r, p->layer_end_x[k]));
  for (guint b = 0; b < p->n_buckets; b++)
    if (p->cast_ns[b] > 0)
      record(sim, r, DDP_SEGMENT_HOOK_CAST, (int)b, rank_time_at(sim, r, p->launch_x[b] - p->cast_ns[b]),
             rank_time_at(sim, r, p->launch_x[b]));
}

static void
on_collective_done(DdpDes *des, gpointer data)
{
  Sim *sim = data;
  sim->last_comm_end = MAX(sim->last_comm_end, ddp_des_now(des));
}

/* The last rank has launched bucket b (buckets launch in index order): it runs on the comm stream
 * once the stream is free; then the next bucket's launch is found with one pass over the ranks. */
static void
on_bucket_launched(DdpDes *des, gpointer data)
{
  Sim *sim = data;
  const Plan *p = sim->plan;
  guint b = sim->next_launch++;
  gint64 now = ddp_des_now(des);
  gint64 start = MAX(now, sim->comm_free);
  gint64 end = start + p->collective_ns[b];
  if (b + 1 == p->n_buckets)
    end += sim->unused_map_ns;
  sim->comm_free = end;
  Interval iv = { start, end };
  if (end > start)
    g_array_append_val(sim->intervals, iv);
  ddp_des_schedule(des, end, on_collective_done, sim);
  if (sim->reporting) {
    DdpBucketSchedule *s = &sim->schedule[b];
    const DdpBucket *bucket = ddp_bucket_layout_get(p->layout, b);
    s->index = b;
    s->bytes = bucket->bytes;
    s->wire_bytes = p->wire_bytes[b];
    s->n_params = bucket->n_params;
    s->params = g_memdup2(bucket->params, bucket->n_params * sizeof(guint));
    s->launch_ns = now - sim->iteration_start;
    /* ready_x ≤ launch_x (plan), but the stretched clock rounds each to the ns on its own */
    s->ready_ns = MIN(max_time_at(sim, p->ready_x[b]) - sim->iteration_start, s->launch_ns);
    s->start_ns = start - sim->iteration_start;
    s->end_ns = end - sim->iteration_start;
    s->cost = p->cost[b];
  }
  if (sim->next_launch < p->n_buckets)
    ddp_des_schedule(des, max_time_at(sim, p->launch_x[sim->next_launch]), on_bucket_launched, sim);
}

/* A global synchronisation (buffer broadcast, bucket-index sync): everyone waits for the last
 * rank, then @cost_ns passes. */
static void
barrier(Sim *sim, gint64 cost_ns)
{
  gint64 latest = G_MININT64;
  for (guint64 r = 0; r < sim->ranks; r++)
    latest = MAX(latest, sim->time[r]);
  for (guint64 r = 0; r < sim->ranks; r++) {
    record(sim, r, DDP_SEGMENT_BROADCAST, -1, sim->time[r], latest + cost_ns);
    sim->time[r] = latest + cost_ns;
  }
  sim->barrier_end = latest + cost_ns;
}

/* Host time at the step boundary, then the K forward (and no_sync backward) passes up to the
 * synced backward, from each rank's clock. */
static void
run_forward(Sim *sim)
{
  const DdpSetup *setup = &sim->scenario->setup;
  const DdpModel *m = sim->model;
  guint nl = m->n_layers;
  /* the step boundary on the host: the GPU has nothing queued (zero_grad, loss.item(), next batch) */
  for (guint64 r = 0; sim->host_iteration_ns > 0 && r < sim->ranks; r++) {
    record(sim, r, DDP_SEGMENT_WAIT, -1, sim->time[r], sim->time[r] + sim->host_iteration_ns);
    sim->time[r] += sim->host_iteration_ns;
  }
  for (guint k = 0; k < setup->accumulate; k++) {
    sim->micro_step = k;
    if (sim->broadcast_ns > 0)
      barrier(sim, sim->broadcast_ns);
    for (guint64 r = 0; r < sim->ranks; r++) {
      gint64 t0 = sim->time[r];
      sim->time[r] += scaled(sim->factor[r], sim->forward_work[nl]);
      record_pass(sim, r, DDP_SEGMENT_FORWARD, sim->forward_work, NULL, t0);
      if (k + 1 == setup->accumulate && sim->unused_search_ns > 0 && !sim->options->plain_module) {
        /* prepare_for_backward after the synced forward: the host searches the graph */
        t0 = sim->time[r];
        sim->time[r] += scaled(sim->factor[r], sim->unused_search_ns);
        record(sim, r, DDP_SEGMENT_UNUSED_SEARCH, -1, t0, sim->time[r]);
      }
      if (k + 1 < setup->accumulate || sim->options->plain_module) {
        t0 = sim->time[r];
        sim->time[r] += scaled(sim->factor[r], sim->backward_work_plain[nl]);
        record_pass(sim, r, DDP_SEGMENT_BACKWARD, sim->backward_work_plain, m->backward_layers, t0);
      }
    }
  }
}

/* ---- which ranks are simulated ------------------------------------------------------------ */

/* Where an undrawn rank's clock stood when the iteration began, from its factor @f in the
 * iteration before (the implicit clocks of Sim: simulate_iteration's last loop with the backward
 * ending before the last collective, then the input floor). */
static gint64
implicit_time(const Sim *sim, double f)
{
  if (sim->uniform)
    return sim->uniform_time;
  gint64 t = sim->comm_end + scaled(f, sim->finalize_ns) + scaled(f, sim->optimizer_ns);
  return MAX(t, sim->floor_time);
}

/* Every rank drawn from the per-block streams (straggler.h), on sim->threads threads. */
static void
draw_every_rank(Sim *sim, guint64 iteration)
{
  ddp_stragglers_sample_seeded(sim->scenario->stragglers, sim->scenario->setup.seed, iteration, sim->gpus, sim->threads,
                               sim->factor, sim->delay);
  for (guint64 r = 0; sim->jitter && r < sim->ranks; r++)
    sim->factor[r] *= sim->jitter[r];
}

/* The reported iteration of the order-statistics path, with every rank: the undrawn ranks' factors
 * in the iteration before come from the law below its threshold, which sets their clocks; then
 * every rank is drawn afresh (nothing is known yet of this iteration's draws).  Exact in
 * distribution, and the per-rank outputs (timelines, backward ends) work as without it. */
static void
materialize_ranks(Sim *sim, guint64 iteration)
{
  sim->ranks = sim->gpus;
  ddp_rank_set_next(sim->rankset);   /* the iteration before becomes the previous one */
  if (!sim->uniform)
    ddp_rank_set_previous_all(sim->rankset, sim->scenario->setup.seed, iteration, sim->threads, sim->factor);
  for (guint64 r = 0; r < sim->ranks; r++)
    sim->time[r] = implicit_time(sim, sim->uniform ? 0 : sim->factor[r]);
  draw_every_rank(sim, iteration);
}

/* Loads rankset's draws from index @from on into the rank arrays (clock, factor, delay); each
 * draw's factor in the iteration before is fixed once, in previous_factor. */
static void
load_draws(Sim *sim, guint from, const guint64 *hiccup_rank, const gint64 *hiccup_delay, guint n_hiccups)
{
  guint n;
  const DdpRankDraw *d = ddp_rank_set_draws(sim->rankset, &n);
  for (guint m = from; m < n; m++) {
    if (!sim->uniform)
      sim->previous_factor[m] = ddp_rank_set_previous_factor(sim->rankset, sim->rng, d[m].rank);
    sim->factor[m] = d[m].scale * d[m].g;
    sim->delay[m] = 0;
    for (guint h = 0; h < n_hiccups; h++)
      if (hiccup_rank[h] == d[m].rank)
        sim->delay[m] += hiccup_delay[h];
  }
  sim->ranks = n;
  for (guint m = 0; m < n; m++)
    sim->time[m] = implicit_time(sim, sim->uniform ? 0 : sim->previous_factor[m]);
}

/* The order-statistics path's draws for one iteration (docs/model.md §7): the largest factors,
 * the rank that was slowest in the iteration before (it sets the first barrier), the hiccup
 * ranks; then, with the clocks at the synced backward bounded, every rank whose line start + f·X
 * could still rise above a drawn one at a coordinate the iteration asks about.  Leaves the drawn
 * ranks in the arrays, their forward passes done. */
static void
draw_ranks(Sim *sim, const Plan *plan, guint64 iteration)
{
  const DdpSetup *setup = &sim->scenario->setup;
  DdpRankSet *set = sim->rankset;
  guint nl = sim->model->n_layers;
  ddp_rank_set_next(set);
  ddp_rank_set_top(set, sim->rng);
  guint64 top;
  double previous_top = sim->uniform ? 0 : ddp_rank_set_previous_top(set, &top);
  if (previous_top > 0)
    ddp_rank_set_take(set, sim->rng, top);
  guint64 hiccup_rank[16];
  gint64 hiccup_delay[16];
  guint n_hiccups = ddp_stragglers_hiccups(sim->scenario->stragglers, sim->rng, iteration, sim->gpus, hiccup_rank, hiccup_delay);
  for (guint h = 0; h < n_hiccups; h++)
    ddp_rank_set_take(set, sim->rng, hiccup_rank[h]);
  load_draws(sim, 0, hiccup_rank, hiccup_delay, n_hiccups);
  run_forward(sim);

  /* An undrawn rank (no delay, factor f ≤ threshold) starts its synced backward at most at
   * a + f·W: a the clock it had (at most the slowest rank's before, or the last barrier's end)
   * plus one ns per rounded pass, W the work it did since. */
  gint64 a, w;
  if (sim->broadcast_ns > 0) {
    a = sim->barrier_end + 1;
    w = sim->forward_work[nl] + sim->unused_search_ns;
  } else {
    a = implicit_time(sim, previous_top) + sim->host_iteration_ns + setup->accumulate;
    w = (gint64)setup->accumulate * sim->forward_work[nl] + sim->unused_search_ns +
        (gint64)(setup->accumulate - 1) * sim->backward_work_plain[nl];
  }
  /* A drawn rank with factor f_c ≥ t and start_c + f_c·x0 ≥ a + t·(W + x0) lies above every
   * undrawn line of factor ≤ t at every x ≥ x0: the largest such t is the threshold needed. */
  gint64 x0 = sim->x0[plan == &sim->steady];
  double needed = -INFINITY;
  for (guint64 m = 0; m < sim->ranks; m++) {
    double f = sim->factor[m];
    double above_a = (double)(sim->time[m] + sim->delay[m] - a);   /* exact: clocks are integers */
    needed = MAX(needed, MIN(f, (above_a + f * (double)x0) / (double)(w + x0)));
  }
  guint before = (guint)sim->ranks, after;
  ddp_rank_set_lower(set, sim->rng, needed);
  ddp_rank_set_draws(set, &after);
  if (after > before) {
    load_draws(sim, before, hiccup_rank, hiccup_delay, n_hiccups);
    run_forward(sim);
  }
}

/* One optimizer step: K micro-steps, the last one synchronised.  Returns the iteration's end
 * (max over ranks). */
static gint64
simulate_iteration(Sim *sim, const Plan *plan, guint64 iteration)
{
  const DdpSetup *setup = &sim->scenario->setup;
  if (sim->rankset && !sim->reporting) {
    draw_ranks(sim, plan, iteration);
  } else {
    if (sim->rankset)
      materialize_ranks(sim, iteration);
    else if (!sim->collapsed)
      draw_every_rank(sim, iteration);
    run_forward(sim);
  }
  if (sim->options->plain_module) {
    /* no DDP: the optimizer follows the last backward directly */
    gint64 end = G_MININT64;
    for (guint64 r = 0; r < sim->ranks; r++) {
      gint64 t0 = sim->time[r];
      sim->time[r] += scaled(sim->factor[r], sim->optimizer_ns);
      record(sim, r, DDP_SEGMENT_OPTIMIZER, -1, t0, sim->time[r]);
      end = MAX(end, sim->time[r]);
    }
    sim->exposed_ns = 0;
    return end;
  }
  /* the synced backward: each rank from its own start, hiccups first */
  for (guint64 r = 0; r < sim->ranks; r++) {
    if (sim->delay[r] > 0)
      record(sim, r, DDP_SEGMENT_WAIT, -1, sim->time[r], sim->time[r] + sim->delay[r]);
    sim->start[r] = sim->time[r] + sim->delay[r];
    if (sim->stretching) {
      sim->anchor_t[r] = sim->start[r];
      sim->anchor_x[r] = 0;
      sim->anchor_k[r] = 0;
    }
  }
  sim->n_hull = 0;
  if (sim->hull)
    hull_build(sim);
  sim->plan = plan;
  sim->next_launch = 0;
  sim->comm_free = G_MININT64;
  sim->last_comm_end = G_MININT64;
  g_array_set_size(sim->intervals, 0);
  ddp_des_schedule(sim->des, max_time_at(sim, plan->launch_x[0]), on_bucket_launched, sim);
  ddp_des_run(sim->des);

  /* finalize waits for the last collective; then bucket → .grad copies and the optimizer */
  gint64 slowest_backward = G_MININT64, end = G_MININT64;
  for (guint64 r = 0; r < sim->ranks; r++) {
    gint64 backward_end = rank_time_at(sim, r, plan->end_x);
    if (backward_end > slowest_backward)   /* the stretch of the rank that sets the pace */
      sim->contention_ns = backward_end - (sim->start[r] + scaled(sim->factor[r], plan->end_x));
    if (sim->reporting)
      sim->backward_end_out[r] = backward_end - sim->iteration_start;
    record_synced_backward(sim, r);
    slowest_backward = MAX(slowest_backward, backward_end);
    gint64 t = MAX(backward_end, sim->last_comm_end);
    if (t > backward_end)
      record(sim, r, DDP_SEGMENT_WAIT, -1, backward_end, t);
    gint64 t1 = t + scaled(sim->factor[r], sim->finalize_ns);
    if (sim->finalize_ns > 0)
      record(sim, r, DDP_SEGMENT_FINALIZE, -1, t, t1);
    sim->time[r] = t1 + scaled(sim->factor[r], sim->optimizer_ns);
    record(sim, r, DDP_SEGMENT_OPTIMIZER, -1, t1, sim->time[r]);
    end = MAX(end, sim->time[r]);
  }
  sim->exposed_ns = MAX(0, sim->last_comm_end - slowest_backward) + (gint64)setup->accumulate * sim->broadcast_ns;
  if (sim->rankset) {
    /* every backward ended by the last collective's end (use_order_statistics) */
    sim->uniform = FALSE;
    sim->comm_end = sim->last_comm_end;
    sim->floor_time = G_MININT64;
  }
  return end;
}

static void
prefix_sums(Sim *sim)
{
  const DdpModel *m = sim->model;
  guint n = m->n_layers;
  sim->forward_work = g_new0(gint64, n + 1);
  sim->backward_work_hooked = g_new0(gint64, n + 1);
  sim->backward_work_plain = g_new0(gint64, n + 1);
  for (guint i = 0; i < n; i++)
    sim->forward_work[i + 1] = sim->forward_work[i] + ddp_compute_forward_ns(sim->compute, i);
  sim->finalize_ns = 0;
  for (guint k = 0; k < n; k++) {
    guint l = m->backward_layers[k];
    const DdpLayer *layer = &m->layers[l];
    gint64 hooks = 0;
    for (guint p = layer->first_param; p < layer->first_param + layer->n_params; p++) {
      double bytes = (double)m->params[p].numel * (double)ddp_dtype_size(m->params[p].dtype);
      hooks += ddp_compute_memory_pass_ns(sim->compute, bytes);
    }
    /* world size 1 still copies into buckets: PyTorch runs the Reducer the same way */
    if (sim->options->plain_module)
      hooks = 0;
    gint64 bwd = ddp_compute_backward_ns(sim->compute, l);
    sim->backward_work_plain[k + 1] = sim->backward_work_plain[k] + bwd;
    sim->backward_work_hooked[k + 1] = sim->backward_work_hooked[k] + bwd + hooks;
    if (!sim->scenario->setup.gradient_as_bucket_view)
      sim->finalize_ns += hooks;
  }
}

/* The slowdown of compute that overlaps a collective: the setup's or the cluster's, else from the
 * channels NCCL runs the largest steady bucket's AllReduce on (ddp_overheads_overlap_slowdown). */
static double
overlap_slowdown(const Sim *sim, const DdpBucketLayout *steady, int *from_channels)
{
  const DdpSetup *setup = &sim->scenario->setup;
  guint64 largest = 0;
  for (guint b = 0; b < ddp_bucket_layout_count(steady); b++)
    largest = MAX(largest, wire_bytes(setup, ddp_bucket_layout_get(steady, b)));
  DdpCollectiveCost cost = { 0 };
  if (largest > 0)
    ddp_collective_allreduce(sim->collective, largest, &cost);
  return ddp_overheads_overlap_slowdown(&setup->overheads, sim->scenario->cluster, cost.channels, from_channels);
}

static gboolean
sim_init(Sim *sim, const DdpScenario *scenario, const DdpRunOptions *options, const DdpBucketLayout *steady,
         GError **error)
{
  const DdpSetup *setup = &scenario->setup;
  sim->scenario = scenario;
  sim->options = options;
  sim->model = scenario->model;
  sim->gpus = setup->gpus;
  if (!(sim->collective = ddp_collective_new(scenario->cluster, setup->gpus, error)))
    return FALSE;
  /* A calibration replaces the built-in efficiencies, then measured layer times replace the
   * roofline of the layers it measured (strategy.c), and its measured AllReduce curves answer
   * where they cover this communicator. */
  if (scenario->calibration)
    ddp_collective_use_calibration(sim->collective, scenario->calibration);
  sim->compute = ddp_strategy_compute_unscaled(scenario, options->compute, 1.0);
  /* Per-bucket host cost (docs/overheads.md "Per-bucket costs"): the autograd hook that completes
   * a bucket launches its collective — Reducer::all_reduce_bucket → ProcessGroupNCCL::collective
   * (work object, event record and stream wait, ncclAllReduce's enqueue) — on the host thread
   * that issues backward, about one layer pass of host time (calibrate/data, 2026-11-25: 19 µs a
   * c10d call, 60–115 µs an extra bucket in host-bound steps whose passes take 80–200 µs).  It
   * delays the issue of everything after it: hidden while the host runs ahead of the GPU, exposed
   * when the host paces the step.  Charged to the backward pass of the bucket's last-ready
   * gradient, in the steady layout; not in the plain module's T(1). */
  if (!options->plain_module && steady && setup->overheads.host_layer_us > 0) {
    const DdpModel *m = scenario->model;
    g_autofree guint *layer_pos = g_new(guint, m->n_layers);
    for (guint k = 0; k < m->n_layers; k++)
      layer_pos[m->backward_layers[k]] = k;
    for (guint b = 0; b < ddp_bucket_layout_count(steady); b++) {
      const DdpBucket *bucket = ddp_bucket_layout_get(steady, b);
      guint last = m->params[bucket->params[0]].layer;
      for (guint i = 1; i < bucket->n_params; i++) {
        guint l = m->params[bucket->params[i]].layer;
        if (layer_pos[l] > layer_pos[last])
          last = l;
      }
      ddp_compute_add_backward_host_us(sim->compute, last, setup->overheads.host_layer_us);
    }
  }
  sim->host_iteration_ns = us_to_ns(setup->overheads.host_iteration_us);
  if (setup->step_ms > 0) {
    /* --step-ms is measured at the same per-GPU batch and precision, host time included */
    gint64 step_ns = ddp_time_from_ns(setup->step_ms * 1e6) - sim->host_iteration_ns;
    if (step_ns <= 0) {
      g_set_error(error, DDP_SCENARIO_ERROR, DDP_SCENARIO_ERROR_INVALID,
                  "--step-ms: %g ms is not more than the host time per iteration (%g µs, --host-iteration-us)",
                  setup->step_ms, setup->overheads.host_iteration_us);
      return FALSE;
    }
    ddp_compute_scale_to_step(sim->compute, step_ns);
  }
  sim->collapsed = ddp_stragglers_is_uniform(scenario->stragglers) && !options->exact_ranks;
  sim->ranks = sim->collapsed ? 1 : sim->gpus;
  sim->time = g_new0(gint64, sim->ranks);
  sim->start = g_new0(gint64, sim->ranks);
  sim->factor = g_new(double, sim->ranks);
  sim->delay = g_new0(gint64, sim->ranks);
  for (guint64 r = 0; r < sim->ranks; r++)
    sim->factor[r] = 1.0;
  sim->slowdown = overlap_slowdown(sim, steady, &sim->slowdown_channels);
  /* across nodes only: the collectives that go through the network (docs/overheads.md) */
  sim->batch_norm_waits = ddp_collective_domains(sim->collective) > 1 && !options->plain_module &&
                          setup->overheads.batch_norm_waits && ddp_model_has_batch_norm(scenario->model);
  sim->stretching = sim->slowdown > 0 || sim->batch_norm_waits;
  sim->stretch = 1.0 + sim->slowdown;
  /* Jitter: its own generator (seeded from the same seed), so that straggler draws do not move
   * when jitter is switched on or off.  Collapsed ranks: the one simulated rank is the slowest. */
  if (setup->overheads.jitter > 0 && sim->gpus > 1) {
    sim->jitter = g_new(double, sim->ranks);
    if (sim->collapsed) {
      sim->jitter[0] = sim->factor[0] = ddp_jitter_slowest(setup->overheads.jitter, sim->gpus);
    } else {
      guint32 jitter_seed[3] = { (guint32)setup->seed, (guint32)(setup->seed >> 32), 0x6a697474 /* "jitt" */ };
      g_autoptr(GRand) jitter_rng = g_rand_new_with_seed_array(jitter_seed, 3);
      sim->jitter_position = g_new(guint32, sim->ranks);
      ddp_jitter_factors(setup->overheads.jitter, jitter_rng, sim->gpus, sim->jitter, sim->jitter_position);
    }
  }
  if (sim->stretching) {
    sim->anchor_t = g_new0(gint64, sim->ranks);
    sim->anchor_x = g_new0(double, sim->ranks);
    sim->anchor_k = g_new0(guint, sim->ranks);
  }
  /* The envelope answers "when does the last rank get there" in O(log ranks); pointless for one
   * rank.  It holds with stretching too: every rank slows inside the same collectives, which all
   * start after the last rank started backward (a collective waits for its last launcher), so rank
   * r reaches X at G⁻¹(start_r + factor_r·X) with one increasing G for all ranks, and the rank on
   * top of the lines start_r + factor_r·X is the last one there.  Not where BatchNorm waits: a rank
   * stops at its own next BatchNorm, so the ranks' times no longer share one G (every rank is asked). */
  if (!options->exact_ranks && sim->ranks > 1 && !sim->batch_norm_waits)
    sim->hull = g_new(Line, sim->ranks);
  sim->threads = options->threads;
  sim->intervals = g_array_new(FALSE, FALSE, sizeof(Interval));
  sim->des = ddp_des_new();
  guint32 seed[2] = { (guint32)setup->seed, (guint32)(setup->seed >> 32) };
  sim->rng = g_rand_new_with_seed_array(seed, 2);
  if (!check_time_budget(sim, 0, error))
    return FALSE;
  prefix_sums(sim);
  sim->optimizer_ns = ddp_compute_optimizer_ns(sim->compute);

  DdpCollectiveCost cost;
  if (sim->gpus > 1 && setup->broadcast_buffers && scenario->model->buffer_bytes > 0) {
    ddp_collective_broadcast(sim->collective, (guint64)scenario->model->buffer_bytes, &cost);
    sim->broadcast_ns = us_to_ns(cost.time_us);
  }
  if (setup->buckets.find_unused_parameters && !setup->buckets.static_graph) {
    /* Reducer::prepare_for_backward → search_unused_parameters: a walk of the autograd graph from
     * the outputs (one unordered_set insert per node), then a look-up per parameter.  Nodes =
     * params (AccumulateGrad) + 1.4 per layer: torchvision ResNet-50 has 338 nodes for 161
     * params and 125 layers.  60 ns per node: the median of prepare_for_backward on that graph,
     * 20.3 µs (torch 1.13, this repository's 2-core Xeon build VM).  An upper bound on its cost:
     * it is host time, hidden when the host runs ahead of the GPU.  --unused-search-us sets it. */
    sim->unused_search_ns = setup->unused_search_us >= 0
                              ? us_to_ns(setup->unused_search_us)
                              : (gint64)llround(60.0 * ((double)scenario->model->n_params + 1.4 * scenario->model->n_layers));
  }
  if (sim->gpus > 1 && setup->buckets.find_unused_parameters && !setup->buckets.static_graph) {
    /* all_reduce_local_used_map: one int32 per parameter, launched in mark_variable_ready when the
     * last bucket has been launched (reducer.cpp), i.e. queued behind the last bucket */
    ddp_collective_allreduce(sim->collective, 4 * (guint64)scenario->model->n_params, &cost);
    sim->unused_map_ns = us_to_ns(cost.time_us);
  }
  return TRUE;
}

static void
sim_clear(Sim *sim)
{
  plan_clear(&sim->initial);
  plan_clear(&sim->steady);
  ddp_compute_free(sim->compute);
  ddp_collective_free(sim->collective);
  if (sim->des)
    ddp_des_free(sim->des);
  if (sim->rng)
    g_rand_free(sim->rng);
  if (sim->intervals)
    g_array_free(sim->intervals, TRUE);
  g_free(sim->time);
  g_free(sim->start);
  g_free(sim->factor);
  g_free(sim->delay);
  g_free(sim->anchor_t);
  g_free(sim->anchor_x);
  g_free(sim->anchor_k);
  g_free(sim->hull);
  g_free(sim->jitter);
  g_free(sim->jitter_position);
  ddp_rank_set_free(sim->rankset);
  g_free(sim->previous_factor);
  g_free(sim->forward_work);
  g_free(sim->backward_work_hooked);
  g_free(sim->backward_work_plain);
}

/* The smallest backward coordinate at which the max over ranks is asked: bucket readiness and
 * launches (on_bucket_launched), the end of backward after them. */
static gint64
plan_first_x(const Plan *p)
{
  gint64 x = p->end_x;
  for (guint b = 0; b < p->n_buckets; b++)
    x = MIN(x, MIN(p->ready_x[b], p->launch_x[b]));
  return x;
}

/* Switches to the order-statistics path (docs/model.md §7) where it is exact: the factor terms
 * reduce to one law (ddp_stragglers_law); every rank's backward ends by the last collective's end
 * (the last bucket launches at the end of backward, so the clocks between iterations are
 * implicit); forward work is positive (the threshold divides by it).  Not for the reference runs
 * (per_rank, exact_ranks), nor where ranks collapse anyway. */
static void
use_order_statistics(Sim *sim)
{
  DdpStragglerLaw law;
  const Plan *plans[2] = { &sim->initial, &sim->steady };
  if (sim->collapsed || sim->gpus < 2 || sim->options->per_rank || sim->options->exact_ranks ||
      sim->options->plain_module || !ddp_stragglers_law(sim->scenario->stragglers, &law) ||
      sim->forward_work[sim->model->n_layers] <= 0)
    return;
  for (guint i = 0; i < 2; i++) {
    if (plans[i]->n_buckets == 0 || plans[i]->launch_x[plans[i]->n_buckets - 1] != plans[i]->end_x)
      return;
    sim->x0[i] = plan_first_x(plans[i]);
  }
  sim->rankset = ddp_rank_set_new(sim->scenario->stragglers, &law, sim->gpus, sim->jitter, sim->jitter_position);
  g_clear_pointer(&sim->jitter_position, g_free);
  sim->previous_factor = g_new(double, sim->gpus);
  sim->uniform = TRUE;
  sim->uniform_time = 0;
}

static int
compare_double(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* Nearest-rank percentile of sorted values. */
static double
percentile(const double *sorted, guint n, double p)
{
  guint rank = (guint)ceil(p * n);
  return sorted[MAX(rank, 1) - 1];
}

/**
 * ddp_simulate:
 * See ddp.h.  Iteration 0 runs on the initial layout and is followed by the bucket rebuild;
 * setup.iterations steady iterations follow and make the statistics.
 */
DdpResult *
ddp_simulate(const DdpScenario *scenario, const DdpRunOptions *options, GError **error)
{
  static const DdpRunOptions no_options = { 0 };
  if (scenario->setup.mode == DDP_MODE_DP)
    return ddp_dp_simulate(scenario, options, error);
  if (scenario->setup.mode == DDP_MODE_FSDP)
    return ddp_fsdp_simulate(scenario, options, error);
  if (scenario->setup.mode == DDP_MODE_ZERO1)
    return ddp_zero_simulate(scenario, options, error);
  if (!options)
    options = &no_options;
  const DdpSetup *setup = &scenario->setup;
  Sim sim = { 0 };
  g_autoptr(DdpBucketLayout) initial = ddp_bucket_layout_initial(scenario->model, &setup->buckets);
  g_autoptr(DdpBucketLayout) steady = ddp_bucket_layout_steady(scenario->model, &setup->buckets);
  if (!sim_init(&sim, scenario, options, steady, error)) {
    sim_clear(&sim);
    return NULL;
  }
  plan_build(&sim, &sim.initial, initial);
  plan_build(&sim, &sim.steady, steady);
  use_order_statistics(&sim);
  if (ddp_bucket_options_rebuild(&setup->buckets) && sim.gpus > 1) {
    /* sync_bucket_indices: two host-blocking broadcasts from rank 0 (sizes, then indices) */
    DdpCollectiveCost cost;
    ddp_collective_broadcast(sim.collective, 4 * ((guint64)ddp_bucket_layout_count(steady) + 1), &cost);
    sim.rebuild_ns = us_to_ns(cost.time_us);
    ddp_collective_broadcast(sim.collective, 4 * (guint64)scenario->model->n_params, &cost);
    sim.rebuild_ns += us_to_ns(cost.time_us);
  }
  double comm_ns = 0;
  for (guint b = 0; b < MAX(sim.initial.n_buckets, sim.steady.n_buckets); b++)
    comm_ns += (double)(b < sim.initial.n_buckets ? sim.initial.collective_ns[b] + sim.initial.cast_ns[b] : 0) +
               (double)(b < sim.steady.n_buckets ? sim.steady.collective_ns[b] + sim.steady.cast_ns[b] : 0);
  if (!check_time_budget(&sim, comm_ns, error)) {
    sim_clear(&sim);
    return NULL;
  }

  DdpResult *result = g_new0(DdpResult, 1);
  result->gpus = sim.gpus;
  result->nodes = ddp_collective_nodes(sim.collective);
  result->domains = ddp_collective_domains(sim.collective);
  result->iterations = setup->iterations;
  result->iteration_ms = g_new0(double, setup->iterations);
  result->n_buckets = sim.steady.n_buckets;
  result->n_initial_buckets = sim.initial.n_buckets;
  result->buckets = g_new0(DdpBucketSchedule, sim.steady.n_buckets);
  result->collapsed_ranks = sim.collapsed;
  result->n_timelines = options->n_watch_ranks;
  result->timelines = g_new0(DdpRankTimeline, options->n_watch_ranks);
  for (guint i = 0; i < options->n_watch_ranks; i++) {
    result->timelines[i].rank = options->watch_ranks[i];
    result->timelines[i].segments = g_array_new(FALSE, FALSE, sizeof(DdpSegment));
  }
  sim.schedule = result->buckets;
  sim.timelines = result->timelines;
  result->backward_end_ns = g_new0(gint64, sim.ranks);
  sim.backward_end_out = result->backward_end_ns;

  /* Iteration 0 on the construction-time layout, then the rebuild.  Under static_graph the hooks of
   * iteration 0 only count, so the ready order is recorded in iteration 1 and the rebuild happens
   * before iteration 2: iteration 1 also runs the initial layout (reducer.cpp autograd_hook). */
  guint warmup = setup->buckets.static_graph ? 2 : 1;
  gint64 end = 0, first_end = 0;
  for (guint i = 0; i < warmup; i++) {
    end = simulate_iteration(&sim, &sim.initial, i);
    if (i == 0)
      first_end = end;
  }
  if (sim.rebuild_ns > 0) {
    for (guint64 r = 0; r < sim.ranks; r++)
      sim.time[r] = end + sim.rebuild_ns;
    end += sim.rebuild_ns;
    sim.uniform = TRUE;
    sim.uniform_time = end;
    if (warmup == 1)
      first_end = end;
  }
  result->first_iteration_ms = (double)first_end / 1e6;

  /* The data loader delivers input_rate samples/s per node: a node's GPUs cannot take more than
   * batch × accumulate × (its GPUs) samples per iteration faster than that. */
  gint64 input_floor_ns = 0;
  if (setup->overheads.input_rate > 0) {
    guint64 per_node = MIN(sim.gpus, (guint64)scenario->cluster->gpus_per_node);
    input_floor_ns = ddp_time_from_ns(setup->batch * setup->accumulate * (double)per_node / setup->overheads.input_rate * 1e9);
  }
  double sum_ms = 0, sum_exposed = 0, sum_contention = 0, sum_input_wait = 0;
  for (guint i = 1; i <= setup->iterations; i++) {
    gint64 start = end;
    sim.reporting = i == setup->iterations;
    sim.iteration_start = start;
    end = simulate_iteration(&sim, &sim.steady, warmup - 1 + i);
    if (options->progress)
      options->progress(options->progress_data);
    sum_contention += (double)sim.contention_ns / 1e6;
    if (end - start < input_floor_ns) {
      /* every rank waits for its next batch until start + floor */
      sum_input_wait += (double)(start + input_floor_ns - end) / 1e6;
      end = start + input_floor_ns;
      for (guint64 r = 0; r < sim.ranks; r++)
        sim.time[r] = MAX(sim.time[r], end);
      sim.floor_time = end;
    }
    result->iteration_ms[i - 1] = (double)(end - start) / 1e6;
    sum_ms += result->iteration_ms[i - 1];
    sum_exposed += (double)sim.exposed_ns / 1e6;
    if (sim.reporting) {
      result->reported_iteration_ns = end - start;
      result->reported_exposed_comm_ns = sim.exposed_ns;
      for (guint w = 0; w < options->n_watch_ranks; w++)
        if (options->watch_ranks[w] < sim.gpus)
          result->timelines[w].factor = sim.factor[sim.collapsed ? 0 : options->watch_ranks[w]];
    }
  }
  guint n = setup->iterations;
  g_autofree double *sorted = g_memdup2(result->iteration_ms, n * sizeof(double));
  qsort(sorted, n, sizeof(double), compare_double);
  result->mean_ms = sum_ms / n;
  result->p50_ms = percentile(sorted, n, 0.50);
  result->p99_ms = percentile(sorted, n, 0.99);
  result->exposed_comm_ms = sum_exposed / n;

  /* nominal compute per iteration: K forwards, K-1 plain backwards, one hooked backward with its
   * compression casts, finalize copies, optimizer */
  gint64 compute = sim.unused_search_ns + (gint64)setup->accumulate * sim.forward_work[sim.model->n_layers] +
                   (gint64)(setup->accumulate - 1) * sim.backward_work_plain[sim.model->n_layers] +
                   sim.backward_work_hooked[sim.model->n_layers] + sim.finalize_ns + sim.optimizer_ns;
  gint64 comm = sim.unused_map_ns + (gint64)setup->accumulate * sim.broadcast_ns;
  for (guint b = 0; b < sim.steady.n_buckets; b++) {
    compute += sim.steady.cast_ns[b];
    comm += sim.steady.collective_ns[b];
  }
  result->compute_ms = (double)compute / 1e6;
  result->unused_search_ms = (double)sim.unused_search_ns / 1e6;
  result->unused_map_ms = (double)sim.unused_map_ns / 1e6;
  result->comm_ms = (double)comm / 1e6;
  result->overlap = comm > 0 ? CLAMP(1.0 - result->exposed_comm_ms / result->comm_ms, 0.0, 1.0) : 1.0;
  result->host_iteration_ms = (double)sim.host_iteration_ns / 1e6;
  result->host_layer_ms = (double)setup->accumulate * ddp_compute_host_bound_ns(sim.compute) / 1e6;
  result->recompute_ms = (double)setup->accumulate * ddp_compute_recompute_ns(sim.compute) / 1e6;
  result->input_wait_ms = sum_input_wait / n;
  result->contention_ms = sum_contention / n;
  result->overlap_slowdown = sim.slowdown;
  result->batch_norm_waits = sim.batch_norm_waits;
  result->overlap_slowdown_channels = sim.slowdown_channels;
  result->jitter_slowest = 1.0;
  for (guint64 r = 0; sim.jitter && r < (sim.collapsed ? 1 : sim.gpus); r++)
    result->jitter_slowest = MAX(result->jitter_slowest, sim.jitter[r]);
  result->jitter_ms = (result->jitter_slowest - 1.0) * result->compute_ms;
  result->straggler_wait_ms = MAX(0.0, result->mean_ms - result->compute_ms - result->exposed_comm_ms -
                                           result->host_iteration_ms - result->input_wait_ms - result->jitter_ms -
                                           result->contention_ms);
  result->samples_per_s = (double)sim.gpus * setup->batch * setup->accumulate / (result->mean_ms / 1e3);
  ddp_compute_memory(scenario->model, &scenario->cluster->gpu, setup->precision, setup->batch,
                     setup->optimizer, setup->gradient_as_bucket_view, setup->activation_checkpointing, &result->memory);
  result->events = ddp_des_events_run(sim.des);
  sim_clear(&sim);

  if (!options->skip_single_gpu) {
    double single_ms = 0;
    if (!ddp_simulate_one_gpu(scenario, scenario->setup.batch, options->compute, &single_ms, error)) {
      ddp_result_free(result);
      return NULL;
    }
    result->single_gpu_ms = single_ms;
    result->scaling_efficiency = single_ms / result->mean_ms;
  }
  return result;
}

/**
 * ddp_simulate_one_gpu:
 * @batch: samples on that one GPU (the per-GPU batch for weak scaling, the global batch for strong)
 * @iteration_ms: (out): its steady iteration time
 *
 * T(1): the same model, batch and precision on one GPU of the same cluster without DDP (no
 * reducer hooks, bucket copies or collectives) and without stragglers — the baseline of every
 * scaling efficiency, as PyTorch's own DDP benchmark defines it ("1 GPU, no DDP"): at N = 1 the
 * efficiency is below 1 by the reducer's own cost.  Returns FALSE with @error set when the setup cannot be simulated.
 */
gboolean
ddp_simulate_one_gpu(const DdpScenario *scenario, double batch, const DdpComputeOptions *compute,
                     double *iteration_ms, GError **error)
{
  DdpScenario one = *scenario;
  one.setup.gpus = 1;
  one.setup.mode = DDP_MODE_DDP;   /* the plain module, whatever the wrapper being measured */
  one.setup.batch = batch;
  one.setup.iterations = 1;
  g_autoptr(DdpStragglers) none = ddp_stragglers_parse("none", NULL);
  one.stragglers = none;
  DdpRunOptions options = { .skip_single_gpu = TRUE, .plain_module = TRUE, .compute = compute };
  g_autoptr(DdpResult) single = ddp_simulate(&one, &options, error);
  if (!single)
    return FALSE;
  *iteration_ms = single->mean_ms;
  return TRUE;
}
