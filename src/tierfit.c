/* tierfit — the nccl collective model's per-tier parameters fitted to measured curves (tierfit.h).
 *
 * The estimator.  For a tier with parameters (e, λ) — a bandwidth share and a size-independent
 * cost — the model's time at each measured point is t̂(e, λ); we minimise Σ |ln(t̂/t)|, so that an 8 B
 * point and an 8 GiB one weigh alike (fit.c makes the same choice for its lines).  The model is not
 * linear in e (protocol and algorithm choices switch as e moves), so the search is a grid (20 shares
 * from 0.02 to 1, log-spaced; 16 costs) followed by three rounds of golden-section refinement on each
 * coordinate in turn.  Deterministic: no random starts.  One-node points (servers in one NVLink
 * domain) fit the intra tier; the inter tier is fitted after it, on multi-node points, with the
 * intra values held, so a one-node calibration carries to every node count and a multi-node one
 * adds only what crossing nodes costs.
 *
 * Why not the old line per (ranks, nodes) extrapolated with a held busbw (fit.c)?  Measured busbw
 * falls from 2 to 4 to 8 nodes (the tree's per-node load doubles from 2 to 4 nodes, ring latency
 * grows with every rank): holding it was 30 % off at 4 and 8 nodes.  The model knows those
 * structures; the calibration only has to pin the two numbers per tier a spec does not give. */
#include "tierfit.h"

#include "collective.h"

#include <math.h>
#include <string.h>

enum { GRID_SHARES = 20, GRID_COSTS = 16, REFINE_ROUNDS = 3, GOLDEN_STEPS = 24 };
/* A per-hop latency below this is the fit's floor of 0 (golden sections stop short of the edge) */
#define LATENCY_FLOOR_US 0.05

static const double intra_costs_us[GRID_COSTS] = { 0, 1, 2, 3, 4, 5, 6, 8, 10, 13, 16, 20, 25, 30, 40, 60 };
static const double inter_costs_us[GRID_COSTS] = { 0, 0.5, 1, 2, 3, 5, 8, 12, 18, 25, 35, 50, 70, 100, 140, 200 };
#define MIN_SHARE 0.02
#define MAX_SHARE 1.0

typedef struct {
  const DdpCluster *base;
  const DdpTierPoint *points;
  GArray *use;        /* guint indices into points, sorted by gpus */
  gboolean inter;
} Problem;

static void
set_tier(DdpCluster *c, gboolean inter, double share, double cost_us)
{
  if (inter) {
    c->inter.efficiency = share;
    c->inter.latency_us = cost_us;
  } else {
    c->intra.efficiency = share;
    c->nccl.launch_us = cost_us;
  }
}

/* Σ |ln(predicted / measured)| at (share, cost); G_MAXDOUBLE when the model refuses a point's GPUs. */
static double
objective(const Problem *p, double share, double cost_us)
{
  DdpCluster c = *p->base;   /* shallow: ddp_collective_new only reads the strings */
  set_tier(&c, p->inter, share, cost_us);
  double sum = 0;
  DdpCollective *coll = NULL;
  guint64 coll_gpus = 0;
  for (guint k = 0; k < p->use->len; k++) {
    const DdpTierPoint *pt = &p->points[g_array_index(p->use, guint, k)];
    if (!coll || coll_gpus != pt->gpus) {
      g_clear_pointer(&coll, ddp_collective_free);
      if (!(coll = ddp_collective_new(&c, pt->gpus, NULL)))
        return G_MAXDOUBLE;
      coll_gpus = pt->gpus;
    }
    ddp_collective_set_gpus_per_process(coll, MAX(pt->gpus_per_process, 1));
    DdpCollectiveCost cost;
    if (pt->algorithm == DDP_ALGO_AUTO || pt->protocol == DDP_PROTO_AUTO ||
        !ddp_collective_allreduce_with(coll, pt->bytes, pt->algorithm, pt->protocol, &cost))
      ddp_collective_allreduce(coll, pt->bytes, &cost);
    double r = log(cost.time_us / pt->time_us);
    sum += fabs(r);
  }
  g_clear_pointer(&coll, ddp_collective_free);
  return sum;
}

/* Golden-section search of f along one coordinate on [lo, hi]; returns the best abscissa seen. */
static double
golden(const Problem *p, gboolean along_share, double fixed, double lo, double hi, double *best_value)
{
  const double r = (sqrt(5.0) - 1) / 2;
  double a = lo, b = hi;
  double x1 = b - r * (b - a), x2 = a + r * (b - a);
  double f1 = along_share ? objective(p, x1, fixed) : objective(p, fixed, x1);
  double f2 = along_share ? objective(p, x2, fixed) : objective(p, fixed, x2);
  for (int i = 0; i < GOLDEN_STEPS; i++) {
    if (f1 <= f2) {
      b = x2, x2 = x1, f2 = f1;
      x1 = b - r * (b - a);
      f1 = along_share ? objective(p, x1, fixed) : objective(p, fixed, x1);
    } else {
      a = x1, x1 = x2, f1 = f2;
      x2 = a + r * (b - a);
      f2 = along_share ? objective(p, x2, fixed) : objective(p, fixed, x2);
    }
  }
  *best_value = MIN(f1, f2);
  return f1 <= f2 ? x1 : x2;
}

static int
by_gpus(gconstpointer a, gconstpointer b, gpointer data)
{
  const DdpTierPoint *points = data;
  guint64 ga = points[*(const guint *)a].gpus, gb = points[*(const guint *)b].gpus;
  guint ia = *(const guint *)a, ib = *(const guint *)b;
  return ga != gb ? (ga < gb ? -1 : 1) : (ia < ib ? -1 : ia > ib);
}

/* The share that fits best with the cost held at @cost_us: the grid of shares, then golden-section
 * refinement around the best; *@best_value its objective. */
static double
best_share_at(const Problem *p, double cost_us, double *best_value)
{
  double best = G_MAXDOUBLE, share = MAX_SHARE;
  for (int i = 0; i < GRID_SHARES; i++) {
    double s = MIN_SHARE * pow(MAX_SHARE / MIN_SHARE, (double)i / (GRID_SHARES - 1));
    double f = objective(p, s, cost_us);
    if (f < best)
      best = f, share = s;
  }
  double f, s = golden(p, TRUE, cost_us, MAX(MIN_SHARE, share / 1.4), MIN(MAX_SHARE, share * 1.4), &f);
  if (f < best)
    best = f, share = s;
  *best_value = best;
  return share;
}

static void
fit_tier(Problem *p, DdpTierParams *out)
{
  *out = (DdpTierParams){ 0 };
  out->spec_efficiency = p->inter ? ddp_cluster_inter_efficiency(p->base) : ddp_cluster_intra_efficiency(p->base);
  if (p->use->len == 0)
    return;
  g_array_sort_with_data(p->use, by_gpus, (gpointer)p->points);
  const double *costs = p->inter ? inter_costs_us : intra_costs_us;
  double best = G_MAXDOUBLE, share = 1, cost = 0;
  for (int i = 0; i < GRID_SHARES; i++) {
    double s = MIN_SHARE * pow(MAX_SHARE / MIN_SHARE, (double)i / (GRID_SHARES - 1));
    for (int j = 0; j < GRID_COSTS; j++) {
      double f = objective(p, s, costs[j]);
      if (f < best)
        best = f, share = s, cost = costs[j];
    }
  }
  double max_cost = costs[GRID_COSTS - 1];
  for (int round = 0; round < REFINE_ROUNDS; round++) {
    double f;
    double s = golden(p, TRUE, cost, MAX(MIN_SHARE, share / 1.4), MIN(MAX_SHARE, share * 1.4), &f);
    if (f < best)
      best = f, share = s;
    double span = MAX(2.0, 0.5 * cost);
    double c = golden(p, FALSE, share, MAX(0.0, cost - span), MIN(max_cost, cost + span), &f);
    if (f < best)
      best = f, cost = c;
  }
  /* Identifiability: a parameter held at the cluster's own value, the other refitted, that fits
   * within TIER_HOLD (1 % in mean |log error|, under nccl-tests' run-to-run spread) is not measured by these
   * points (a curve of large sizes says nothing of the per-call cost: the grid's edge, 60 or 200 us,
   * would otherwise stand in for it at every small size), so the cluster's value stays.  The cost
   * first: it is the one large-size curves leave free. */
  if (best < G_MAXDOUBLE) {
    double n = (double)p->use->len;
    double spec_cost = p->inter ? p->base->inter.latency_us : p->base->nccl.launch_us;
    double spec_share = out->spec_efficiency;
    double f, s = best_share_at(p, spec_cost, &f);
    if (f < G_MAXDOUBLE && f / n <= best / n + TIER_HOLD)
      best = f, share = s, cost = spec_cost, out->latency_held = TRUE;
    double c = cost;
    if (out->latency_held)
      f = objective(p, spec_share, cost);
    else
      c = golden(p, FALSE, spec_share, 0.0, max_cost, &f);
    if (f < G_MAXDOUBLE && f / n <= best / n + TIER_HOLD)
      best = f, share = spec_share, cost = c, out->efficiency_held = TRUE;
  }
  /* A fit that ends on the edge of its search — the largest per-call cost the grid allows, or a
   * share of the links' bandwidth at the grid's floor — has not found the cluster's values: the
   * model cannot follow these points inside the range a healthy fabric spans (a DDP trace's
   * AllReduce kernels, which include the wait for the other ranks, fit to efficiency 0.03 and 60 us
   * a call).  The cluster's own values stay, marked, and the report says why. */
  if (best < G_MAXDOUBLE && ((!out->latency_held && cost >= max_cost - 1e-9) ||
                             (!out->efficiency_held && share <= MIN_SHARE * 1.05))) {
    out->at_edge = TRUE;
    out->edge_efficiency = share;
    out->edge_latency_us = cost;
    share = p->inter ? ddp_cluster_inter_efficiency(p->base) : ddp_cluster_intra_efficiency(p->base);
    cost = p->inter ? p->base->inter.latency_us : p->base->nccl.launch_us;
    out->efficiency_held = out->latency_held = TRUE;
    best = objective(p, share, cost);
  }
  out->fitted = best < G_MAXDOUBLE;
  out->efficiency = share;
  out->latency_us = cost;
  out->points = p->use->len;
  out->mean_log_error = best / p->use->len;
  out->min_nodes = out->min_gpus = G_MAXUINT64;
  for (guint k = 0; k < p->use->len; k++) {
    const DdpTierPoint *pt = &p->points[g_array_index(p->use, guint, k)];
    guint64 nodes = pt->nodes;
    out->min_nodes = MIN(out->min_nodes, nodes);
    out->max_nodes = MAX(out->max_nodes, nodes);
    out->min_gpus = MIN(out->min_gpus, pt->gpus);
    out->max_gpus = MAX(out->max_gpus, pt->gpus);
  }
}

/**
 * ddp_tier_fit:
 * @cluster: read during the call only; its own values are the starting point of the tier not fitted
 * @points: (array length=n): measurements
 *
 * See tierfit.h.
 */
void
ddp_tier_fit(const DdpCluster *cluster, const DdpTierPoint *points, guint n, DdpTierFit *out)
{
  *out = (DdpTierFit){ 0 };
  g_autoptr(GArray) intra = g_array_new(FALSE, FALSE, sizeof(guint));
  g_autoptr(GArray) inter = g_array_new(FALSE, FALSE, sizeof(guint));
  for (guint i = 0; i < n; i++) {
    const DdpTierPoint *pt = &points[i];
    if (pt->gpus < 2 || !(pt->time_us > 0) || !isfinite(pt->time_us) || pt->bytes == 0)
      continue;
    g_autoptr(DdpCollective) c = ddp_collective_new(cluster, pt->gpus, NULL);
    if (!c || ddp_collective_nodes(c) != pt->nodes)
      continue;   /* the measurement does not fit this cluster's servers */
    g_array_append_val(ddp_collective_domains(c) > 1 ? inter : intra, i);
  }
  Problem p = { cluster, points, intra, FALSE };
  fit_tier(&p, &out->intra);
  if (inter->len == 0)
    return;
  DdpCluster held = *cluster;
  if (out->intra.fitted)
    set_tier(&held, FALSE, out->intra.efficiency, out->intra.latency_us);
  p = (Problem){ &held, points, inter, TRUE };
  fit_tier(&p, &out->inter);
  /* Without a one-node curve nothing of its own tier pins the kernel launch, and the per-hop latency
   * cannot go below 0: multi-node points faster than the file's launch allows at 0 us a hop (a
   * machine where NCCL's own table is the whole time, as the Dell XE9680 pair of allreduce-4.csv)
   * say the launch is lower.  It is fitted to them, between 0 and the file's value, and the
   * inter tier refitted with it. */
  if (!out->intra.fitted && out->inter.fitted && !out->inter.at_edge && !out->inter.latency_held &&
      out->inter.latency_us < LATENCY_FLOOR_US) {
    DdpCluster at_floor = *cluster;
    set_tier(&at_floor, TRUE, out->inter.efficiency, 0.0);
    Problem q = { &at_floor, points, inter, FALSE };
    double f, launch = golden(&q, FALSE, ddp_cluster_intra_efficiency(cluster), 0.0, cluster->nccl.launch_us, &f);
    if (f < G_MAXDOUBLE && launch < cluster->nccl.launch_us - LATENCY_FLOOR_US) {
      out->launch_from_inter = TRUE;
      out->launch_us = launch;
      held.nccl.launch_us = launch;
      p = (Problem){ &held, points, inter, TRUE };
      fit_tier(&p, &out->inter);
    }
  }
}

/**
 * ddp_tier_points_from_calibration:
 * Returns: (transfer full): a GArray of DdpTierPoint, one per stored curve point; g_array_unref().
 */
GArray *
ddp_tier_points_from_calibration(const DdpFit *fit)
{
  guint n = 0;
  const DdpCalibCurvePoint *cp = ddp_fit_curve_points(fit, &n);
  GArray *points = g_array_sized_new(FALSE, FALSE, sizeof(DdpTierPoint), n);
  for (guint i = 0; i < n; i++) {
    int algo = ddp_algorithm_parse(cp[i].algorithm), proto = ddp_protocol_parse(cp[i].protocol);
    DdpTierPoint pt = {
      .gpus = (guint64)MAX(cp[i].ranks, 0),
      .nodes = (guint64)MAX(cp[i].nodes, 0),
      .gpus_per_process = 1,
      .algorithm = algo < 0 ? DDP_ALGO_AUTO : (DdpAlgorithm)algo,
      .protocol = proto < 0 ? DDP_PROTO_AUTO : (DdpProtocol)proto,
      .bytes = (guint64)MAX(cp[i].bytes, 0),
      .time_us = cp[i].time_us,
    };
    g_array_append_val(points, pt);
  }
  return points;
}

void
ddp_tier_fit_apply(const DdpTierFit *fit, DdpCluster *cluster)
{
  if (fit->intra.fitted)
    set_tier(cluster, FALSE, fit->intra.efficiency, fit->intra.latency_us);
  if (fit->launch_from_inter)
    cluster->nccl.launch_us = fit->launch_us;
  if (fit->inter.fitted)
    set_tier(cluster, TRUE, fit->inter.efficiency, fit->inter.latency_us);
}

void
ddp_tier_calibrate_cluster(DdpCluster *cluster, const DdpFit *calibration, DdpTierFit *out)
{
  g_autoptr(GArray) points = ddp_tier_points_from_calibration(calibration);
  ddp_tier_fit(cluster, (const DdpTierPoint *)(void *)points->data, points->len, out);
  ddp_tier_fit_apply(out, cluster);
}

static char *
range_text(guint64 lo, guint64 hi, const char *unit)
{
  return lo == hi ? g_strdup_printf("%" G_GUINT64_FORMAT " %s", lo, unit)
                  : g_strdup_printf("%" G_GUINT64_FORMAT "..%" G_GUINT64_FORMAT " %s", lo, hi, unit);
}

/* "efficiency E and latency L fitted to" when both were fitted; otherwise which was fitted and which
 * kept from the cluster file ("... fitted and ... kept from the cluster file (...),"). */
static char *
tier_values_text(const DdpTierParams *t, const char *share_format, const char *cost_format)
{
  g_autofree char *share = g_strdup_printf(share_format, t->efficiency);
  g_autofree char *cost = g_strdup_printf(cost_format, t->latency_us);
  const char *kept = "kept from the cluster file (the curves fit it within 1 %)";
  if (!t->efficiency_held && !t->latency_held)
    return g_strdup_printf("%s and %s fitted to", share, cost);
  if (t->efficiency_held && t->latency_held)
    return g_strdup_printf("%s and %s kept from the cluster file (the curves fit them within 1 %%),", share, cost);
  return t->latency_held ? g_strdup_printf("%s fitted and %s %s,", share, cost, kept)
                         : g_strdup_printf("%s %s and %s fitted,", share, kept, cost);
}

/* The warning for a tier whose fit ran to its search range's edge (ddp_tier_fit): what it ended on,
 * why that is not the fabric, and what answers instead. */
static char *
edge_warning(const DdpTierParams *t, const char *calibration_name, const char *where, const char *tier,
             const char *cost_name, const char *points)
{
  return g_strdup_printf("warning: calibration %s: %s, the fit of %u points (%s) ran to the edge of its range "
                         "(efficiency %.3f, %s %.1f us): the model cannot follow them on this fabric (kernel times "
                         "that include waits for other ranks, as a DDP trace's do?), so [%s] efficiency %.3f and %s "
                         "%.1f us stay from the cluster file; the measured curve still answers at exactly its GPU "
                         "count", calibration_name, where, t->points, points, t->edge_efficiency, cost_name,
                         t->edge_latency_us, tier, t->efficiency, cost_name, t->latency_us);
}

/**
 * ddp_tier_fit_report:
 * See tierfit.h.  Returns: (transfer full) (element-type utf8): g_ptr_array_unref().
 */
GPtrArray *
ddp_tier_fit_report(const DdpTierFit *fit, const char *calibration_name, guint64 gpus, guint64 nodes)
{
  GPtrArray *lines = g_ptr_array_new_with_free_func(g_free);
  if (gpus < 2)
    return lines;
  const DdpTierParams *in = &fit->intra, *out = &fit->inter;
  if (!in->fitted && !out->fitted)
    return lines;   /* no AllReduce curve: fit.h's coverage warnings say so */
  if (in->fitted && in->at_edge) {
    g_autofree char *g = range_text(in->min_gpus, in->max_gpus, "GPUs");
    g_ptr_array_add(lines, edge_warning(in, calibration_name, "inside a node", "intra", "launch", g));
  } else if (in->fitted) {
    g_autofree char *g = range_text(in->min_gpus, in->max_gpus, "GPUs");
    g_autofree char *what = tier_values_text(in, "efficiency %.3f", "launch %.1f us per call");
    g_ptr_array_add(lines, g_strdup_printf("note: calibration %s: inside a node, [intra] %s %u one-node points (%s; "
                                           "mean error %.1f %%), used at every node count",
                                           calibration_name, what, in->points, g, 100 * (exp(in->mean_log_error) - 1)));
  } else if (fit->launch_from_inter) {
    g_ptr_array_add(lines, g_strdup_printf("note: calibration %s has no one-node AllReduce curve: [intra] efficiency "
                                           "comes from the cluster's specs, and [nccl] launch %.1f us per call was "
                                           "fitted to the multi-node points (they run faster than the cluster "
                                           "file's launch allows with no per-hop latency)",
                                           calibration_name, fit->launch_us));
  } else {
    g_ptr_array_add(lines, g_strdup_printf("note: calibration %s has no one-node AllReduce curve: the intra-node "
                                           "tier comes from the cluster's specs", calibration_name));
  }
  if (nodes < 2)
    return lines;
  if (!out->fitted) {
    g_ptr_array_add(lines, g_strdup_printf("warning: calibration %s has no multi-node AllReduce curve: across nodes "
                                           "(NIC share, per-hop latency) the answer comes from the cluster's specs",
                                           calibration_name));
    return lines;
  }
  g_autofree char *measured = range_text(out->min_nodes, out->max_nodes, "nodes");
  if (out->at_edge) {
    g_ptr_array_add(lines, edge_warning(out, calibration_name, "across nodes", "inter", "latency", measured));
    return lines;
  }
  g_autofree char *what = tier_values_text(out, "efficiency %.3f", "latency %.1f us per network hop");
  g_ptr_array_add(lines, g_strdup_printf("note: calibration %s: across nodes, [inter] %s %u points at %s (mean error "
                                         "%.1f %%)",
                                         calibration_name, what, out->points, measured,
                                         100 * (exp(out->mean_log_error) - 1)));
  /* A network far below its line rate is possible (a congested fabric), but so is a stage the model
   * prices by the NICs running slower than modelled: OCI's GB200 racks fit at 0.127 because their
   * NVLSTree runs below the NVLS rate inside a rack, and then lose half their rate from two racks to
   * three in the model (a tree's per-node load doubles) where they lost 7 % (docs/calibration.md). */
  if (!out->efficiency_held && out->efficiency < TIER_IMPLAUSIBLE_SHARE * out->spec_efficiency)
    g_ptr_array_add(lines, g_strdup_printf(
      "warning: calibration %s: the fit puts the NICs at %.0f %% of the cluster file's share (efficiency %.3f "
      "against %.3f): either the network runs that far below its line rate, or the measured points are slow for "
      "another reason that the model can only express through the NICs (NVLSTree across NVLink domains is the known "
      "case, docs/calibration.md); answers at other node counts treat the NICs as the bottleneck, and a tree's "
      "per-node NIC load doubles from 2 to 4 nodes (NVLink domains)",
      calibration_name, 100 * out->efficiency / out->spec_efficiency, out->efficiency, out->spec_efficiency));
  if (nodes > out->max_nodes)
    g_ptr_array_add(lines, g_strdup_printf(
      "warning: %" G_GUINT64_FORMAT " nodes is %.1fx the largest calibrated (%" G_GUINT64_FORMAT " nodes, %" G_GUINT64_FORMAT
      " GPUs): AllReduce times there come from the nccl model with the fitted tiers; it assumes the same fabric, "
      "NCCL version and settings at scale, NCCL's algorithm choice (a tree moves 2S per node from 4 nodes on), and "
      "the cluster file's switch tiers (nodes_per_leaf, oversubscription) above the measured nodes",
      nodes, (double)nodes / (double)out->max_nodes, out->max_nodes, out->max_gpus));
  else if (nodes < out->min_nodes)
    g_ptr_array_add(lines, g_strdup_printf("warning: %" G_GUINT64_FORMAT " nodes is below the calibrated %s: the "
                                           "fitted tiers are used there unchanged", nodes, measured));
  return lines;
}
