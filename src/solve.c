/* solve — inverse questions answered by search over the simulator (see solve.h).
 *
 * Threshold questions ("least bandwidth reaching 90 %", "most GPUs still at 90 %"):
 *   1. a coarse grid over the range — geometric, because the answers span decades (1 Gb/s to
 *      1 Pb/s, 1 to 131 072 GPUs) — is simulated in full;
 *   2. the first grid interval where the target is crossed brackets the answer;
 *   3. bisection narrows it: to adjacent integers (NICs, batch, micro-steps; whole nodes for GPU
 *      counts beyond one node, single GPUs below), or for bandwidth to a relative width of
 *      options->tolerance (geometric midpoints, since the time goes as 1/bandwidth).
 * Why not bisection on [min, max] alone: it assumes monotonicity it cannot check.  Each of these
 * quantities should move efficiency one way (more bandwidth, NICs, batch or micro-steps never slow
 * the communication down nor speed the single-GPU baseline up; more GPUs add ring steps), but NCCL's
 * algorithm and protocol switches, bucket timing against backward and straggler draws can make
 * steps and wiggles.  The grid shows them: the result says whether it was monotone and where not,
 * and the answer is then the first crossing, stated as such, with the first grid point beyond it
 * that is back on the answer's side of the target (recross) when there is one.
 * What limits a point is the largest share of T(N) − T(ideal): exposed communication, straggler
 * wait (incl. compute slowed by concurrent communication), compute beyond the ideal (DDP's own
 * copies and casts; under strong scaling also the work that does not shrink with B/N: optimizer
 * step, kernel floors), or memory when the setup does not fit the GPU.  T(ideal) is T(1) for weak
 * scaling and T(1, B)/N for strong scaling.  Under strong scaling a GPU count with fewer than one
 * sample per GPU is infeasible: efficiency 0, not simulated.
 *
 * bucket_cap_mb is no threshold: time against cap is U-shaped at best (few large buckets expose
 * the last one, many small ones pay latency each) and can have several dips, so it is a grid of
 * powers of two plus 25, refined by eight log-spaced caps between the best one's neighbours; the
 * best is recommended only when it beats PyTorch's 25 MiB by more than min_gain. */
#include "solve.h"

#include "ddp.h"

#include <math.h>

G_DEFINE_QUARK(ddp-solve-error-quark, ddp_solve_error)

static const char *const quantity_names[DDP_SOLVE_COUNT] = {
  "inter-bandwidth", "nics", "gpus", "batch", "accumulate", "bucket-cap",
};
static const char *const quantity_units[DDP_SOLVE_COUNT] = {
  "Gb/s per NIC", "NICs per node", "GPUs", "samples per GPU", "micro-steps", "MiB",
};

const char *
ddp_solve_quantity_name(DdpSolveQuantity q)
{
  g_return_val_if_fail(q < DDP_SOLVE_COUNT, "?");
  return quantity_names[q];
}

const char *
ddp_solve_quantity_unit(DdpSolveQuantity q)
{
  g_return_val_if_fail(q < DDP_SOLVE_COUNT, "?");
  return quantity_units[q];
}

const DdpRange *
ddp_solve_quantity_range(DdpSolveQuantity q)
{
  static const DdpRange *const ranges[DDP_SOLVE_COUNT] = {
    &DDP_RANGE_BANDWIDTH_GBPS, &DDP_RANGE_NICS, &DDP_RANGE_GPUS, &DDP_RANGE_BATCH, &DDP_RANGE_ACCUMULATE,
    &DDP_RANGE_BUCKET_CAP_MB,
  };
  g_return_val_if_fail(q < DDP_SOLVE_COUNT, NULL);
  return ranges[q];
}

int
ddp_solve_quantity_parse(const char *name)
{
  for (int i = 0; i < DDP_SOLVE_COUNT; i++)
    if (g_strcmp0(name, quantity_names[i]) == 0)
      return i;
  return -1;
}

const char *
ddp_solve_status_name(DdpSolveStatus s)
{
  static const char *const names[] = { "found", "always", "unreachable", "memory", "keep-default" };
  g_return_val_if_fail(s < G_N_ELEMENTS(names), "?");
  return names[s];
}

const char *
ddp_limit_name(DdpLimit l)
{
  static const char *const names[] = { "none", "compute", "exposed_comm", "stragglers", "memory", "overheads" };
  g_return_val_if_fail(l < G_N_ELEMENTS(names), "?");
  return names[l];
}

void
ddp_solve_options_init(DdpSolveOptions *o)
{
  *o = (DdpSolveOptions){ .quantity = DDP_SOLVE_INTER_BANDWIDTH, .target_efficiency = 0.9, .tolerance = 1e-3,
                          .min_gain = 0.01 };
}

#define DEFAULT_MAX_NODES 16384

void
ddp_solve_default_range(const DdpScenario *s, DdpSolveQuantity q, double *min, double *max)
{
  switch (q) {
  case DDP_SOLVE_INTER_BANDWIDTH: *min = 1, *max = DDP_RANGE_BANDWIDTH_GBPS.max; break;   /* --max's own top */
  case DDP_SOLVE_NICS: *min = 1, *max = 64; break;
  case DDP_SOLVE_GPUS:
    *min = 1;
    *max = s->setup.mode == DDP_MODE_DP ? s->cluster->gpus_per_node   /* DataParallel: one process, one node */
           : (double)(s->cluster->max_nodes > 0 ? s->cluster->max_nodes : DEFAULT_MAX_NODES) * s->cluster->gpus_per_node;
    break;
  case DDP_SOLVE_BATCH: *min = 1, *max = 65536; break;
  case DDP_SOLVE_ACCUMULATE: *min = 1, *max = 4096; break;
  case DDP_SOLVE_BUCKET_CAP: *min = 1, *max = 256; break;
  default: g_assert_not_reached();
  }
}

double
ddp_solve_max_fitting_batch(const DdpScenario *s)
{
  DdpMemory at0, at1;
  const DdpSetup *t = &s->setup;
  ddp_compute_memory(s->model, &s->cluster->gpu, t->precision, 0, t->optimizer, t->gradient_as_bucket_view,
                     t->activation_checkpointing, &at0);
  ddp_compute_memory(s->model, &s->cluster->gpu, t->precision, 1, t->optimizer, t->gradient_as_bucket_view,
                     t->activation_checkpointing, &at1);
  double capacity = s->cluster->gpu.memory_GB * 1e9, per_sample = at1.total - at0.total;
  if (at0.total > capacity)
    return 0;
  return per_sample > 0 ? (capacity - at0.total) / per_sample : INFINITY;
}

guint
ddp_solve_micro_steps(double batch, double max_batch, guint at_least)
{
  double k = isfinite(max_batch) ? ceil(batch / MAX(max_batch, 1.0) - 1e-9) : 1;
  return (guint)MAX(k, (double)at_least);
}

/**
 * ddp_solve_strong_split:
 * Strong scaling as a real run can do it: each of @gpus GPUs takes b = ⌊B/N⌋ whole samples, in
 * K = ddp_solve_micro_steps(b, @max_batch, @at_least) micro-steps of m = ⌊b/K⌋ whole samples
 * (at least 1).  Fills @split; the global batch actually reached is N·K·m (at most B: a real
 * DataLoader cannot hand out 42.67 samples).  Returns FALSE (and leaves @split zeroed) when
 * B/N < 1: not feasible.
 */
gboolean
ddp_solve_strong_split(double global_batch, guint64 gpus, double max_batch, guint at_least, DdpStrongSplit *split)
{
  *split = (DdpStrongSplit){ 0 };
  double b = floor(global_batch / (double)gpus + 1e-9);
  if (b < 1)
    return FALSE;
  /* two ways to cut b into whole micro-batches of at most @max_batch: the fewest micro-steps
   * (K = ⌈b/M⌉, m = ⌊b/K⌋), or the largest micro-batch (m = ⌊M⌋, K = ⌊b/m⌋); the one reaching
   * more of b wins, the fewer micro-steps on a tie (1 024 at M = 12: 85 × 12 = 1 020, not 86 × 11) */
  split->accumulate = ddp_solve_micro_steps(b, max_batch, at_least);
  split->micro_batch = MAX(1.0, floor(b / split->accumulate + 1e-9));
  if (isfinite(max_batch) && max_batch >= 1) {
    double m = MIN(floor(max_batch + 1e-9), b), k = floor(b / m + 1e-9);
    if (k >= at_least && m * k > split->micro_batch * split->accumulate) {
      split->accumulate = (guint)k;
      split->micro_batch = m;
    }
  }
  split->batch_per_gpu = split->micro_batch * split->accumulate;
  split->reached = split->batch_per_gpu * (double)gpus;
  return TRUE;
}

/**
 * ddp_solve_strong_base:
 * T(1 GPU, B): one GPU doing the global batch @global_batch as ddp_solve_strong_split() splits it,
 * without DDP.  *@ms is its step time, *@samples the samples it reaches.  FALSE with @error from
 * the simulator.
 */
gboolean
ddp_solve_strong_base(const DdpScenario *scenario, double global_batch, double max_batch, double *ms, double *samples,
                      GError **error)
{
  DdpStrongSplit split;
  ddp_solve_strong_split(global_batch, 1, max_batch, scenario->setup.accumulate, &split);
  DdpScenario one = *scenario;
  one.setup.accumulate = split.accumulate;
  *samples = split.reached;
  return ddp_simulate_one_gpu(&one, split.micro_batch, NULL, ms, error);
}

void
ddp_solve_result_free(DdpSolveResult *r)
{
  if (!r)
    return;
  if (r->grid)
    g_array_free(r->grid, TRUE);
  g_free(r);
}

typedef struct {
  const DdpScenario *scenario;
  DdpSolveQuantity quantity;
  double target;
  DdpSolveResult *result;
  const DdpSolveOptions *options;
  double strong_base_ms;      /* strong scaling: T(1 GPU, B) */
  double strong_base_samples; /* the samples that one GPU reaches of B (whole micro-batches) */
} Search;

static DdpLimit
classify(const DdpSolvePoint *p)
{
  if (!p->fits)
    return DDP_LIMIT_MEMORY;
  /* T(1) holds the host time per step too: what compute adds beyond it is DDP's copies and casts */
  double overheads = isfinite(p->overheads_ms) ? p->overheads_ms : 0;
  double compute = MAX(0.0, p->iteration_ms - p->exposed_comm_ms - p->straggler_wait_ms - overheads - p->single_gpu_ms);
  double loss = compute + overheads + p->exposed_comm_ms + p->straggler_wait_ms;
  if (loss <= 1e-9 * p->iteration_ms)
    return DDP_LIMIT_NONE;
  double worst = MAX(MAX(compute, overheads), MAX(p->exposed_comm_ms, p->straggler_wait_ms));
  if (p->exposed_comm_ms == worst)
    return DDP_LIMIT_EXPOSED_COMM;
  if (p->straggler_wait_ms == worst)
    return DDP_LIMIT_STRAGGLERS;
  return overheads == worst ? DDP_LIMIT_OVERHEADS : DDP_LIMIT_COMPUTE;
}

/* Simulates the scenario with the quantity set to @x. */
static gboolean
evaluate(Search *s, double x, DdpSolvePoint *p, GError **error)
{
  DdpScenario at = *s->scenario;
  DdpCluster cluster = *at.cluster;
  at.cluster = &cluster;
  switch (s->quantity) {
  case DDP_SOLVE_INTER_BANDWIDTH:
    /* an explicit NCCL graph bandwidth follows the NIC (it is the NIC's share per channel) */
    if (cluster.nccl.bw_inter_GBs > 0)
      cluster.nccl.bw_inter_GBs *= x / cluster.inter.nic_bandwidth_Gbps;
    cluster.inter.nic_bandwidth_Gbps = x;
    break;
  case DDP_SOLVE_NICS: cluster.inter.nics_per_node = (int)x; break;
  case DDP_SOLVE_GPUS: at.setup.gpus = (guint64)x; break;
  case DDP_SOLVE_BATCH: at.setup.batch = x; break;
  case DDP_SOLVE_ACCUMULATE: at.setup.accumulate = (guint)x; break;
  case DDP_SOLVE_BUCKET_CAP: ddp_bucket_options_try_cap(&at.setup.buckets, x); break;   /* 25: not passed */
  default: g_assert_not_reached();
  }
  double B = s->result->global_batch, n = (double)at.setup.gpus, reached = B;
  if (B > 0) {
    /* strong scaling: B/N samples per GPU, split as ddpsim scale splits them */
    DdpStrongSplit split;
    if (!ddp_solve_strong_split(B, at.setup.gpus, s->result->max_batch, s->scenario->setup.accumulate, &split)) {
      *p = (DdpSolvePoint){ .value = x, .feasible = FALSE, .efficiency = 0, .iteration_ms = NAN, .compute_ms = NAN,
                            .exposed_comm_ms = NAN, .straggler_wait_ms = NAN, .overheads_ms = NAN, .single_gpu_ms = NAN, .memory_GB = NAN,
                            .fits = TRUE, .limit = DDP_LIMIT_NONE };
      return TRUE;
    }
    at.setup.accumulate = split.accumulate;
    at.setup.batch = split.micro_batch;
    reached = split.reached;
  }
  if (s->options->progress)
    s->options->progress(s->quantity, s->result->simulations + 1, x, s->options->progress_data);
  DdpRunOptions run = { .skip_single_gpu = B > 0 };
  g_autoptr(DdpResult) r = ddp_simulate(&at, &run, error);
  if (!r)
    return FALSE;
  s->result->simulations++;
  *p = (DdpSolvePoint){
    .value = x, .feasible = TRUE, .efficiency = r->scaling_efficiency, .iteration_ms = r->mean_ms,
    .single_gpu_ms = r->single_gpu_ms, .compute_ms = r->compute_ms, .exposed_comm_ms = r->exposed_comm_ms,
    .straggler_wait_ms = r->straggler_wait_ms,
    .overheads_ms = r->host_iteration_ms + r->input_wait_ms + r->jitter_ms + r->contention_ms, .memory_GB = r->memory.total / 1e9, .fits = r->memory.fits,
  };
  if (B > 0) {
    /* per sample: N GPUs doing their @reached samples against one GPU doing its own */
    p->single_gpu_ms = s->strong_base_ms / s->strong_base_samples * reached / n;
    p->efficiency = p->single_gpu_ms / r->mean_ms;
  }
  p->limit = classify(p);
  return TRUE;
}

static gboolean
passes(const Search *s, const DdpSolvePoint *p)
{
  return p->efficiency >= s->target;
}

/* Geometric grid from @min to @max, both included; integers when @integer (deduplicated). */
static GArray *
geometric_grid(double min, double max, guint points, gboolean integer)
{
  GArray *values = g_array_new(FALSE, FALSE, sizeof(double));
  for (guint i = 0; i < points; i++) {
    double v = points == 1 || min == max ? min : min * pow(max / min, (double)i / (double)(points - 1));
    if (integer)
      v = i + 1 == points ? max : round(v);
    if (values->len > 0 && v <= g_array_index(values, double, values->len - 1))
      continue;
    g_array_append_val(values, v);
    if (min == max)
      break;
  }
  return values;
}

/**
 * ddp_solve_gpu_grid:
 * GPU counts from @min to @max: powers of two below one node, one node, then doubling node counts,
 * and @max (its whole nodes: a count beyond one node that is not a multiple of it cannot run).
 * Returns: (transfer full) a GArray of double, ascending.
 */
GArray *
ddp_solve_gpu_grid(const DdpCluster *cluster, double min, double max)
{
  GArray *values = g_array_new(FALSE, FALSE, sizeof(double));
  double ppn = cluster->gpus_per_node;
  if (max > ppn)
    max = ppn * floor(max / ppn);
  g_array_append_val(values, min);
  for (double g = 2; g < ppn && g < max; g *= 2)
    if (g > min)
      g_array_append_val(values, g);
  for (double g = ppn; g < max; g *= 2)
    if (g > min)
      g_array_append_val(values, g);
  if (max > min)
    g_array_append_val(values, max);
  return values;
}

/* Whether efficiency moved only the expected way along the grid (1e-9 slack for rounding). */
static void
check_monotone(DdpSolveResult *r, gboolean increasing)
{
  r->monotone = TRUE;
  for (guint i = 1; i < r->grid->len; i++) {
    double before = g_array_index(r->grid, DdpSolvePoint, i - 1).efficiency;
    double now = g_array_index(r->grid, DdpSolvePoint, i).efficiency;
    if (increasing ? now < before - 1e-9 : now > before + 1e-9) {
      r->monotone = FALSE;
      r->non_monotone_at = g_array_index(r->grid, DdpSolvePoint, i).value;
      return;
    }
  }
}

/* The next value to try between @a and @b (a < b), or NAN when the bracket is narrow enough.
 * Integer quantities step in @unit (whole nodes for GPU counts beyond one node). */
static double
midpoint(const Search *s, double a, double b)
{
  if (s->quantity == DDP_SOLVE_INTER_BANDWIDTH)   /* tolerance ≥ 1e-9 (ranges.c): the bracket narrows to it */
    return b / a <= 1 + s->result->tolerance ? NAN : sqrt(a * b);
  double unit = 1;
  if (s->quantity == DDP_SOLVE_GPUS && a >= s->scenario->cluster->gpus_per_node)
    unit = s->scenario->cluster->gpus_per_node;
  double steps = round((b - a) / unit);
  return steps <= 1 ? NAN : a + unit * floor(steps / 2);
}

/* Steps 1–3 of the file comment.  @increasing: efficiency rises with the quantity (the answer is
 * the least passing value); else it falls (the answer is the most passing value). */
static gboolean
threshold(Search *s, GArray *values, gboolean increasing, GError **error)
{
  DdpSolveResult *r = s->result;
  for (guint i = 0; i < values->len; i++) {
    DdpSolvePoint p;
    if (!evaluate(s, g_array_index(values, double, i), &p, error))
      return FALSE;
    g_array_append_val(r->grid, p);
  }
  check_monotone(r, increasing);
  const DdpSolvePoint *grid = (const DdpSolvePoint *)(void *)r->grid->data;
  guint n = r->grid->len, cross = n;
  for (guint i = 0; i < n && cross == n; i++)
    if (passes(s, &grid[i]) == increasing)
      cross = i;
  guint best = 0;
  for (guint i = 1; i < n; i++)
    if (grid[i].efficiency > grid[best].efficiency + 1e-9)
      best = i;

  DdpSolvePoint pass, fail;
  if (increasing) {
    if (cross == n) {
      r->status = DDP_SOLVE_UNREACHABLE;
      r->answer = grid[best];
      r->saturates_at = grid[best].value;
      return TRUE;
    }
    if (cross == 0) {
      r->status = DDP_SOLVE_ALWAYS;
      r->answer = grid[0];
      return TRUE;
    }
    fail = grid[cross - 1], pass = grid[cross];
  } else {
    if (cross == 0) {
      r->status = DDP_SOLVE_UNREACHABLE;
      r->answer = grid[best];
      return TRUE;
    }
    if (cross == n) {
      r->status = DDP_SOLVE_ALWAYS;
      r->answer = grid[n - 1];
      return TRUE;
    }
    pass = grid[cross - 1], fail = grid[cross];
  }
  /* a non-monotone grid may cross back: say where, the answer stays the first crossing */
  for (guint i = cross + 1; i < n && !r->recrosses; i++)
    if (passes(s, &grid[i]) != increasing) {
      r->recrosses = TRUE;
      r->recross = grid[i];
    }
  for (;;) {
    double lo = MIN(pass.value, fail.value), hi = MAX(pass.value, fail.value);
    double mid = midpoint(s, lo, hi);
    if (isnan(mid))
      break;
    DdpSolvePoint p;
    if (!evaluate(s, mid, &p, error))
      return FALSE;
    if (passes(s, &p))
      pass = p;
    else
      fail = p;
  }
  r->status = DDP_SOLVE_FOUND;
  r->answer = pass;
  r->neighbour = fail;
  r->has_neighbour = TRUE;
  return TRUE;
}

static double
round_significant(double x, int digits)
{
  double scale = pow(10, digits - 1 - (int)floor(log10(x)));
  return round(x * scale) / scale;
}

/* The file comment's last paragraph. */
static gboolean
bucket_cap(Search *s, GError **error)
{
  DdpSolveResult *r = s->result;
  g_autoptr(GArray) values = g_array_new(FALSE, FALSE, sizeof(double));
  for (double cap = r->min; cap <= r->max * (1 + 1e-12); cap *= 2)
    g_array_append_val(values, cap);
  double pytorch_default = DDP_DEFAULT_BUCKET_CAP_MB;
  guint at = 0;
  while (at < values->len && g_array_index(values, double, at) < pytorch_default)
    at++;
  if (at == values->len || g_array_index(values, double, at) != pytorch_default)
    g_array_insert_val(values, at, pytorch_default);
  DdpSolvePoint dflt = { 0 };
  for (guint i = 0; i < values->len; i++) {
    DdpSolvePoint p;
    if (!evaluate(s, g_array_index(values, double, i), &p, error))
      return FALSE;
    g_array_append_val(r->grid, p);
    if (p.value == pytorch_default)
      dflt = p;
  }
  r->monotone = FALSE;
  guint best = 0;
  const DdpSolvePoint *grid = (const DdpSolvePoint *)(void *)r->grid->data;
  for (guint i = 1; i < r->grid->len; i++)
    if (grid[i].iteration_ms < grid[best].iteration_ms)
      best = i;
  DdpSolvePoint winner = grid[best];
  double lo = grid[best > 0 ? best - 1 : best].value, hi = grid[best + 1 < r->grid->len ? best + 1 : best].value;
  for (int i = 1; i <= 8 && hi > lo; i++) {
    double cap = round_significant(lo * pow(hi / lo, i / 9.0), 3);
    DdpSolvePoint p;
    if (!evaluate(s, cap, &p, error))
      return FALSE;
    if (p.iteration_ms < winner.iteration_ms)
      winner = p;
  }
  r->neighbour = dflt;
  r->has_neighbour = TRUE;
  double gain = (dflt.iteration_ms - winner.iteration_ms) / dflt.iteration_ms;
  if (gain > r->min_gain) {
    r->status = DDP_SOLVE_FOUND;
    r->answer = winner;
  } else {
    r->status = DDP_SOLVE_KEEP_DEFAULT;
    r->answer = dflt;
  }
  return TRUE;
}

static double
current_value(const DdpScenario *s, DdpSolveQuantity q)
{
  switch (q) {
  case DDP_SOLVE_INTER_BANDWIDTH: return s->cluster->inter.nic_bandwidth_Gbps;
  case DDP_SOLVE_NICS: return s->cluster->inter.nics_per_node;
  case DDP_SOLVE_GPUS: return (double)s->setup.gpus;
  case DDP_SOLVE_BATCH: return s->setup.batch;
  case DDP_SOLVE_ACCUMULATE: return s->setup.accumulate;
  case DDP_SOLVE_BUCKET_CAP: return s->setup.buckets.bucket_cap_mb;
  default: g_assert_not_reached();
  }
}

/**
 * ddp_solve:
 * See solve.h and the file comment.  The scenario's other settings (GPU count, batch, seed,
 * stragglers, iterations) hold at every point; each point is one ddp_simulate().
 */
DdpSolveResult *
ddp_solve(const DdpScenario *scenario, const DdpSolveOptions *options, GError **error)
{
  DdpSolveQuantity q = options->quantity;
  g_return_val_if_fail(q < DDP_SOLVE_COUNT, NULL);
  double min = options->min, max = options->max, dmin, dmax;
  ddp_solve_default_range(scenario, q, &dmin, &dmax);
  if (min == 0)
    min = dmin;
  if (max == 0)
    max = MAX(dmax, min);
  gboolean integer = q != DDP_SOLVE_INTER_BANDWIDTH && q != DDP_SOLVE_BUCKET_CAP;
  if (!(min > 0) || !(max >= min) || !isfinite(max) || (integer && (min != floor(min) || max != floor(max)))) {
    g_set_error(error, DDP_SOLVE_ERROR, DDP_SOLVE_ERROR_INVALID, "--min/--max: the range %g to %g of %s is not %s",
                min, max, quantity_names[q], integer ? "whole numbers with 1 <= min <= max" : "0 < min <= max");
    return NULL;
  }
  if (q != DDP_SOLVE_BUCKET_CAP && !(options->target_efficiency > 0 && options->target_efficiency <= 1)) {
    g_set_error(error, DDP_SOLVE_ERROR, DDP_SOLVE_ERROR_INVALID,
                "--target-efficiency: %g is not a fraction in (0, 1]", options->target_efficiency);
    return NULL;
  }
  if (options->global_batch > 0 && (q == DDP_SOLVE_BATCH || q == DDP_SOLVE_ACCUMULATE)) {
    g_set_error(error, DDP_SOLVE_ERROR, DDP_SOLVE_ERROR_INVALID,
                "--global-batch: with a fixed global batch the per-GPU batch and accumulation follow from the GPU "
                "count; --for %s asks a weak-scaling question", quantity_names[q]);
    return NULL;
  }
  if (options->global_batch > 0 && q != DDP_SOLVE_GPUS && options->global_batch < (double)scenario->setup.gpus) {
    g_set_error(error, DDP_SOLVE_ERROR, DDP_SOLVE_ERROR_INVALID,
                "--global-batch: %g samples over %" G_GUINT64_FORMAT " GPUs is less than one sample per GPU",
                options->global_batch, scenario->setup.gpus);
    return NULL;
  }
  guint64 nodes = 0;
  if (q == DDP_SOLVE_INTER_BANDWIDTH || q == DDP_SOLVE_NICS) {
    if (!ddp_cluster_check_gpus(scenario->cluster, scenario->setup.gpus, &nodes, error))
      return NULL;
    if (nodes < 2) {
      g_set_error(error, DDP_SOLVE_ERROR, DDP_SOLVE_ERROR_INVALID,
                  "--for %s: %" G_GUINT64_FORMAT " GPUs fit in one node of %s, so no traffic crosses the inter-node "
                  "fabric (give --gpus above %d)", quantity_names[q], scenario->setup.gpus, scenario->cluster->name,
                  scenario->cluster->gpus_per_node);
      return NULL;
    }
  }
  if (q == DDP_SOLVE_GPUS && max > dmax) {
    g_set_error(error, DDP_SOLVE_ERROR, DDP_SOLVE_ERROR_INVALID, "--max: %g GPUs exceed cluster %s (at most %g)", max,
                scenario->cluster->name, dmax);
    return NULL;
  }
  if (q == DDP_SOLVE_GPUS && min > 1 && !ddp_cluster_check_gpus(scenario->cluster, (guint64)min, NULL, error))
    return NULL;

  g_autoptr(DdpSolveResult) r = g_new0(DdpSolveResult, 1);
  r->quantity = q;
  r->target_efficiency = options->target_efficiency;
  r->min = min, r->max = max;
  r->tolerance = options->tolerance > 0 ? options->tolerance : 1e-3;
  r->min_gain = options->min_gain;
  r->current = current_value(scenario, q);
  r->grid = g_array_new(FALSE, FALSE, sizeof(DdpSolvePoint));
  Search s = { scenario, q, options->target_efficiency, r, options, 0, 0 };
  if (options->global_batch > 0) {
    r->global_batch = options->global_batch;
    r->max_batch = options->max_batch > 0 ? options->max_batch : ddp_solve_max_fitting_batch(scenario);
    if (!ddp_solve_strong_base(scenario, r->global_batch, r->max_batch, &s.strong_base_ms, &s.strong_base_samples, error))
      return NULL;
  }
  gboolean ok;
  if (q == DDP_SOLVE_BUCKET_CAP) {
    ok = bucket_cap(&s, error);
  } else if (q == DDP_SOLVE_GPUS) {
    g_autoptr(GArray) values = ddp_solve_gpu_grid(scenario->cluster, min, max);
    ok = threshold(&s, values, FALSE, error);
  } else {
    g_autoptr(GArray) values = geometric_grid(min, max, integer ? 14 : 13, integer);
    ok = threshold(&s, values, TRUE, error);
    if (ok && q == DDP_SOLVE_BATCH && r->status != DDP_SOLVE_UNREACHABLE && !r->answer.fits) {
      r->status = DDP_SOLVE_MEMORY;
      r->max_fitting_batch = ddp_solve_max_fitting_batch(scenario);
    }
  }
  if (!ok)
    return NULL;
  return g_steal_pointer(&r);
}
