/* deadline — the GPU count that trains within a deadline at the least cost, or as fast as a budget
 * allows (see deadline.h for the forms and the search; cost.h for the cost of one point). */
#include "deadline.h"

#include "ddp.h"
#include "solve.h"

#include <math.h>

void
ddp_deadline_result_free(DdpDeadlineResult *r)
{
  if (!r)
    return;
  if (r->grid)
    g_array_unref(r->grid);
  g_free(r);
}

/**
 * ddp_deadline_point_cost:
 * Fills @p's train_hours, train_cost and meets from its gpus, samples_per_s, feasible and fits:
 * hours = S / X / 3600, cost = P · N · hours (P = 1 without a price: GPU-hours); meets when
 * feasible, fitting, hours <= the deadline and cost <= the budget (each when given).
 */
void
ddp_deadline_point_cost(const DdpCost *cost, const DdpDeadlineOptions *o, DdpDeadlinePoint *p)
{
  double price = cost->price_per_gpu_hour > 0 ? cost->price_per_gpu_hour : 1.0;
  if (!p->feasible || !(p->samples_per_s > 0)) {
    p->train_hours = p->train_cost = INFINITY;
    p->meets = FALSE;
    return;
  }
  p->train_hours = cost->train_samples / p->samples_per_s / 3600.0;
  p->train_cost = price * (double)p->gpus * p->train_hours;
  p->meets = p->fits && (o->deadline_hours <= 0 || p->train_hours <= o->deadline_hours) &&
             (o->budget <= 0 || p->train_cost <= o->budget);
}

typedef struct {
  const DdpScenario *scenario;
  const DdpCost *cost;
  const DdpDeadlineOptions *options;
  DdpDeadlineResult *result;
  double max_batch;
} Search;

/* Simulates @gpus GPUs (weak scaling at the scenario's batch, or strong at the global batch). */
static gboolean
evaluate(Search *s, guint64 gpus, DdpDeadlinePoint *p, GError **error)
{
  DdpScenario at = *s->scenario;
  at.setup.gpus = gpus;
  *p = (DdpDeadlinePoint){ .gpus = gpus, .feasible = TRUE, .iteration_ms = NAN, .samples_per_s = NAN, .fits = TRUE };
  if (!ddp_cluster_check_gpus(at.cluster, gpus, &p->nodes, error))
    return FALSE;
  double B = s->options->global_batch;
  if (B > 0) {
    DdpStrongSplit split;
    if (!ddp_solve_strong_split(B, gpus, s->max_batch, s->scenario->setup.accumulate, &split)) {
      p->feasible = FALSE;
      ddp_deadline_point_cost(s->cost, s->options, p);
      return TRUE;
    }
    at.setup.accumulate = split.accumulate;
    at.setup.batch = split.micro_batch;
  }
  if (s->options->progress)
    s->options->progress(s->result->simulations + 1, gpus, s->options->progress_data);
  DdpRunOptions run = { .skip_single_gpu = TRUE };   /* only throughput matters here */
  g_autoptr(DdpResult) r = ddp_simulate(&at, &run, error);
  if (!r)
    return FALSE;
  s->result->simulations++;
  p->samples_per_s = r->samples_per_s;
  p->iteration_ms = r->mean_ms;
  p->fits = r->memory.fits;
  ddp_deadline_point_cost(s->cost, s->options, p);
  return TRUE;
}

/* The count halfway between @a < @b in single GPUs below one node, whole nodes beyond; 0 when
 * they are adjacent. */
static guint64
midpoint(const DdpCluster *cluster, guint64 a, guint64 b)
{
  guint64 unit = a >= (guint64)cluster->gpus_per_node ? (guint64)cluster->gpus_per_node : 1;
  guint64 steps = (b - a) / unit;
  return steps <= 1 ? 0 : a + unit * (steps / 2);
}

/* Bisects between @pass and @fail (adjacent grid points, either order) to the passing count
 * next to a failing one; *@pass and *@fail end adjacent. */
static gboolean
bisect(Search *s, DdpDeadlinePoint *pass, DdpDeadlinePoint *fail, GArray *seen, GError **error)
{
  for (;;) {
    guint64 lo = MIN(pass->gpus, fail->gpus), hi = MAX(pass->gpus, fail->gpus);
    guint64 mid = midpoint(s->scenario->cluster, lo, hi);
    if (mid == 0)
      return TRUE;
    DdpDeadlinePoint p;
    if (!evaluate(s, mid, &p, error))
      return FALSE;
    g_array_append_val(seen, p);
    if (p.meets)
      *pass = p;
    else
      *fail = p;
  }
}

/* Deadline: cheaper wins, then fewer GPUs.  Budget alone: faster wins, then cheaper. */
static gboolean
better(const DdpDeadlineOptions *o, const DdpDeadlinePoint *a, const DdpDeadlinePoint *b)
{
  if (o->deadline_hours > 0)
    return a->train_cost < b->train_cost || (a->train_cost == b->train_cost && a->gpus < b->gpus);
  return a->train_hours < b->train_hours || (a->train_hours == b->train_hours && a->train_cost < b->train_cost);
}

/**
 * ddp_deadline_solve:
 * See deadline.h.  @o needs a deadline or a budget (or both); a budget alone picks the fastest
 * count within it.
 */
DdpDeadlineResult *
ddp_deadline_solve(const DdpScenario *scenario, const DdpCost *cost, const DdpDeadlineOptions *o, GError **error)
{
  g_return_val_if_fail(o->deadline_hours > 0 || o->budget > 0, NULL);
  if (!(cost->train_samples > 0)) {
    g_set_error(error, DDP_COST_ERROR, DDP_COST_ERROR_INVALID,
                "--%s: needs the training length (--train-samples or --train-tokens)",
                o->deadline_hours > 0 ? "deadline-hours" : "budget");
    return NULL;
  }
  double min = o->min, max = o->max, dmin, dmax;
  ddp_solve_default_range(scenario, DDP_SOLVE_GPUS, &dmin, &dmax);
  if (min <= 0)
    min = dmin;
  if (max <= 0)
    max = dmax;
  if (min > max) {
    g_set_error(error, DDP_COST_ERROR, DDP_COST_ERROR_INVALID, "--min: %g is above --max %g", min, max);
    return NULL;
  }
  g_autoptr(DdpDeadlineResult) r = g_new0(DdpDeadlineResult, 1);
  r->grid = g_array_new(FALSE, FALSE, sizeof(DdpDeadlinePoint));
  r->min = min, r->max = max;
  Search s = { scenario, cost, o, r, INFINITY };
  if (o->global_batch > 0)
    s.max_batch = o->max_batch > 0 ? o->max_batch : ddp_solve_max_fitting_batch(scenario);
  g_autoptr(GArray) values = ddp_solve_gpu_grid(scenario->cluster, min, max);
  for (guint i = 0; i < values->len; i++) {
    DdpDeadlinePoint p;
    if (!evaluate(&s, (guint64)g_array_index(values, double, i), &p, error))
      return NULL;
    g_array_append_val(r->grid, p);
  }
  DdpDeadlinePoint *grid = (DdpDeadlinePoint *)(void *)r->grid->data;
  guint n = r->grid->len;
  g_autoptr(GArray) seen = g_array_new(FALSE, FALSE, sizeof(DdpDeadlinePoint));
  g_array_append_vals(seen, grid, n);
  /* the bracket: a deadline is met from some count up (the least such count is the cheapest while
   * per-GPU throughput falls with N); a budget up to some count (the most is the fastest) */
  guint cross = n;
  if (o->deadline_hours > 0) {
    for (guint i = 0; i < n && cross == n; i++)
      if (grid[i].meets)
        cross = i;
    if (cross != n && cross > 0) {
      DdpDeadlinePoint pass = grid[cross], fail = grid[cross - 1];
      if (!bisect(&s, &pass, &fail, seen, error))
        return NULL;
      r->has_neighbour = TRUE;
      r->neighbour = fail;
    }
  } else {
    for (guint i = n; i-- > 0 && cross == n;)
      if (grid[i].meets)
        cross = i;
    if (cross != n && cross + 1 < n) {
      DdpDeadlinePoint pass = grid[cross], fail = grid[cross + 1];
      if (!bisect(&s, &pass, &fail, seen, error))
        return NULL;
      r->has_neighbour = TRUE;
      r->neighbour = fail;
    }
  }
  /* the answer: the best point seen that meets every constraint; else the closest miss */
  const DdpDeadlinePoint *all = (const DdpDeadlinePoint *)(void *)seen->data, *best = NULL;
  for (guint i = 0; i < seen->len; i++)
    if (all[i].meets && (!best || better(o, &all[i], best)))
      best = &all[i];
  r->status = best ? DDP_DEADLINE_FOUND : DDP_DEADLINE_UNREACHABLE;
  if (!best) {
    r->has_neighbour = FALSE;
    for (guint i = 0; i < seen->len; i++) {
      gboolean ok = all[i].feasible && all[i].fits;
      gboolean closer = !best || (o->deadline_hours > 0 ? all[i].train_hours < best->train_hours
                                                        : all[i].train_cost < best->train_cost);
      if (ok && closer)
        best = &all[i];
    }
  }
  if (best)
    r->answer = *best;
  else
    r->answer = grid[0];
  if (r->has_neighbour && r->neighbour.gpus == r->answer.gpus)
    r->has_neighbour = FALSE;
  return g_steal_pointer(&r);
}
