/* fit — least-squares parameters from calibration points, and lookups (see fit.h).
 *
 * The estimator.  Both models are lines in their work measure: AllReduce time t = α + S/algbw
 * (Hockney; NCCL's own tuning model has exactly this form per algorithm × protocol, docs/model.md §2:
 * t = lat + S/(1000·bw)), kernel time t = overhead + W/rate.  Sizes span nine decades (8 B to
 * 8 GiB), so ordinary least squares would let the largest sizes decide α alone: an error of 0.1 %
 * at 8 GiB is 100 µs, ten times any latency.  We minimise relative residuals instead (weights
 * 1/t_i²), which is also what nccl-tests-style comparisons look at.  The 2×2 normal equations are
 * solved in centred form (b = Σw(x−x̄)(t−t̄) / Σw(x−x̄)²), which keeps x² ≈ 10^19 from cancelling.
 *
 * Extrapolation across GPU counts (AllReduce).  A calibration measures a few (ranks, nodes);
 * predict asks about others.  Bandwidth: nccl-tests' busbw = algbw·2(n−1)/n is the quantity that
 * stays constant with n for bandwidth-optimal algorithms (docs/model.md §3, PERFORMANCE.md), so the
 * nearest measurement's busbw is kept and algbw(n) = busbw·n/(2(n−1)).  Latency grows with the
 * number of sequential hops h (docs/model.md §2.3): Ring 2(n−1); Tree a chain in each node plus a tree
 * across nodes, 2(ppn−1) + 2⌈log₂N⌉; NVLS/CollNet about constant inside a node, + 2⌈log₂N⌉ across
 * nodes.  With two measured hop counts α is interpolated (extrapolated) linearly in h; with one,
 * α = base + (α₁ − base)·h/h₁, base being NCCL's fixed per-op latency for that algorithm ×
 * protocol (tuning.cc baseLatencies, docs/model.md §2.1).  Single-node and multi-node measurements are
 * never mixed: inter-node hops cost 3–10× intra-node ones (docs/model.md §2.1 hwLatencies), so a
 * one-node calibration does not answer a multi-node question and the lookup says so (FALSE).
 *
 * Curves.  Besides the line, each fitted (algorithm, protocol, ranks, nodes) keeps its measured
 * time at every size (fit_allreduce_curve; the mean where a size was measured more than once,
 * in-place points preferred).  At exactly a measured (ranks, nodes) the cost comes from that curve
 * (commcurve.h: piecewise α/β between the points, the end segments' α/β beyond them), because one
 * line cannot follow protocol switches and the mid-size channel ramp.  At other GPU counts the
 * extrapolated line above is used: a curve's shape says nothing about how it moves with n.
 *
 * The other collectives (nccl-tests all_gather_perf, reduce_scatter_perf, broadcast_perf imports)
 * are kept as curves only, one per (op, algorithm, protocol, ranks, nodes): at exactly a measured
 * (ranks, nodes) ddp_fit_collective_cost() answers from the curve, elsewhere nothing does and the
 * collective model answers (with the tiers tierfit.h fitted to the AllReduce curves).  No line is
 * fitted to them: nothing reads one, since the model, not a held bandwidth, carries a measurement
 * to other counts.  Where a size was timed both ways, the placement PyTorch runs is kept: FSDP's
 * all_gather_into_tensor and reduce_scatter_tensor write into another tensor (out of place), a
 * broadcast works on the one tensor it is given (in place, as DDP's AllReduce).
 *
 * Kind fallbacks (compute).  The calibrator has no probe for attention, embedding or pooling;
 * their efficiency comes from the nearest measured kind: attention → linear (its FLOPs are GEMMs),
 * embedding/pool/other → elementwise (memory-bound gathers and reductions) → device copy.
 * Non-matmul kernels are measured at fp32/fp16/bf16 only (TF32 changes tensor-core math, nothing
 * else), so tf32 lookups of memory-bound kinds read fp32.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#include "fit.h"
#include "commcurve.h"

#include "ranges.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#ifndef PACKAGE_STRING
#define PACKAGE_STRING "ddpsim"
#endif

G_DEFINE_QUARK(ddp-fit-error-quark, ddp_fit_error)

struct _DdpFit {
  DdpCalibFit *header;
  gboolean have_spec;
  DdpGpuSpec spec;
  GArray *allreduce;   /* DdpCalibAllreduceFit, sorted by algorithm, protocol, nodes, ranks */
  GArray *kernels;     /* DdpCalibKernelFit */
  GArray *layers;      /* DdpCalibLayerFit, sorted by signature, precision, batch_size */
  GArray *residuals;   /* DdpCalibResidual */
  GArray *curve_points;/* DdpCalibCurvePoint: measured time per size of each fitted variant */
  GArray *op_curve_points; /* the same for AllGather, ReduceScatter and Broadcast (op set) */
  GPtrArray *curves;   /* Curve, built from curve_points and op_curve_points */
};

/* The measured curve of one (op, algorithm, protocol, ranks, nodes): what ddp_fit_allreduce_cost()
 * and ddp_fit_collective_cost() answer with at exactly that (ranks, nodes) — see "Curves" at the
 * top of this file. */
typedef struct {
  DdpCollectiveOp op;
  char *algorithm, *protocol;
  int ranks, nodes;
  DdpCommCurve *curve;
} Curve;

static void
curve_free(gpointer data)
{
  Curve *c = data;
  g_free(c->algorithm);
  g_free(c->protocol);
  ddp_comm_curve_free(c->curve);
  g_free(c);
}

static const char *const kind_names[DDP_LAYER_KIND_COUNT] = {
  "conv", "linear", "norm", "embedding", "attention", "elementwise", "pool", "other"
};
static const char *const precision_names[DDP_PRECISION_COUNT] = { "fp32", "tf32", "fp16", "bf16" };

/* ---- the least-squares core ---------------------------------------------------------------- */

/**
 * ddp_fit_line:
 * @x: (array length=n): work of each point (bytes or FLOPs), ≥ 0
 * @t: (array length=n): measured times; points with t ≤ 0 or non-finite values are skipped
 * @allow_flat: whether b = 0 (latency only) is an acceptable answer; else b is forced positive
 *
 * Returns: TRUE with *a (intercept) and *b (slope); FALSE when no point is usable.
 */
gboolean
ddp_fit_line(const double *x, const double *t, guint n, gboolean allow_flat, double *a, double *b)
{
  double sw = 0, swx = 0, swt = 0;
  guint used = 0;
  for (guint i = 0; i < n; i++) {
    if (!(t[i] > 0) || !isfinite(t[i]) || !isfinite(x[i]) || x[i] < 0)
      continue;
    double w = 1.0 / (t[i] * t[i]);
    sw += w;
    swx += w * x[i];
    swt += w * t[i];
    used++;
  }
  if (used == 0)
    return FALSE;
  double xm = swx / sw, tm = swt / sw;
  double sxx = 0, sxt = 0, swxx0 = 0, swxt0 = 0;
  for (guint i = 0; i < n; i++) {
    if (!(t[i] > 0) || !isfinite(t[i]) || !isfinite(x[i]) || x[i] < 0)
      continue;
    double w = 1.0 / (t[i] * t[i]);
    sxx += w * (x[i] - xm) * (x[i] - xm);
    sxt += w * (x[i] - xm) * (t[i] - tm);
    swxx0 += w * x[i] * x[i];
    swxt0 += w * x[i] * t[i];
  }
  /* Unconstrained optimum, when the points have spread in x. */
  if (sxx > 0 && sxx > 1e-12 * swxx0) {
    double slope = sxt / sxx;
    double intercept = tm - slope * xm;
    if (slope > 0 && intercept >= 0) {
      *a = intercept;
      *b = slope;
      return TRUE;
    }
    if (slope > 0 && intercept < 0 && swxx0 > 0) {
      /* a ≥ 0 binds: refit through the origin */
      *a = 0;
      *b = swxt0 / swxx0;
      return TRUE;
    }
  }
  /* No spread, or time not growing with work. */
  if (allow_flat || swxx0 <= 0) {
    *a = tm;
    *b = 0;
    return TRUE;
  }
  *a = 0;
  *b = swxt0 / swxx0;
  return TRUE;
}

/* ---- names and mappings -------------------------------------------------------------------- */

const char *
ddp_fit_algorithm_name(DdpAlgorithm algorithm)
{
  switch (algorithm) {
  case DDP_ALGO_RING: return "Ring";
  case DDP_ALGO_TREE: return "Tree";
  case DDP_ALGO_NVLS: return "NVLS";
  case DDP_ALGO_NVLS_TREE: return "NVLSTree";
  case DDP_ALGO_COLLNET_DIRECT: return "CollNetDirect";
  case DDP_ALGO_COLLNET_CHAIN: return "CollNetChain";
  default: return NULL;
  }
}

const char *
ddp_fit_protocol_name(DdpProtocol protocol)
{
  switch (protocol) {
  case DDP_PROTO_LL: return "LL";
  case DDP_PROTO_LL128: return "LL128";
  case DDP_PROTO_SIMPLE: return "Simple";
  default: return NULL;
  }
}

static DdpAlgorithm
algorithm_enum(const char *name)
{
  if (g_ascii_strcasecmp(name, "Ring") == 0)
    return DDP_ALGO_RING;
  if (g_ascii_strcasecmp(name, "Tree") == 0)
    return DDP_ALGO_TREE;
  if (g_ascii_strcasecmp(name, "NVLS") == 0)
    return DDP_ALGO_NVLS;
  if (g_ascii_strcasecmp(name, "NVLSTree") == 0)
    return DDP_ALGO_NVLS_TREE;
  if (g_ascii_strcasecmp(name, "CollNetDirect") == 0)
    return DDP_ALGO_COLLNET_DIRECT;
  if (g_ascii_strcasecmp(name, "CollNetChain") == 0)
    return DDP_ALGO_COLLNET_CHAIN;
  return DDP_ALGO_AUTO;
}

static DdpProtocol
protocol_enum(const char *name)
{
  if (g_ascii_strcasecmp(name, "LL") == 0)
    return DDP_PROTO_LL;
  if (g_ascii_strcasecmp(name, "LL128") == 0)
    return DDP_PROTO_LL128;
  if (g_ascii_strcasecmp(name, "Simple") == 0)
    return DDP_PROTO_SIMPLE;
  return DDP_PROTO_AUTO;
}

static int
kind_index(const char *name)
{
  for (int k = 0; k < DDP_LAYER_KIND_COUNT; k++)
    if (g_strcmp0(name, kind_names[k]) == 0)
      return k;
  return -1;
}

static gboolean
is_matmul_kind(int kind)
{
  return kind == DDP_LAYER_CONV || kind == DDP_LAYER_LINEAR || kind == DDP_LAYER_ATTENTION;
}

/**
 * ddp_fit_guess_gpu:
 * Returns: (nullable): a built-in spec name for the SXM parts ddpsim knows, from the name CUDA
 * reports ("NVIDIA H100 80GB HBM3", "NVIDIA A100-SXM4-40GB", "Tesla V100-SXM2-32GB"); NULL for
 * anything else — notably PCIe and NVL variants, whose clocks and peaks differ.
 */
const char *
ddp_fit_guess_gpu(const char *device_name, gint64 memory_bytes)
{
  if (!device_name)
    return NULL;
  g_autofree char *up = g_ascii_strup(device_name, -1);
  if (strstr(up, "PCIE") || strstr(up, " NVL"))
    return NULL;
  if (strstr(up, "H200"))
    return "h200";
  if (strstr(up, "H100"))
    return "h100";
  if (strstr(up, "B200"))
    return "b200";
  if (strstr(up, "A100"))
    return (strstr(up, "40GB") || (memory_bytes > 0 && memory_bytes < 60e9)) ? "a100-40gb" : "a100";
  if (strstr(up, "V100"))
    return "v100";
  return NULL;
}

/* ---- fitting from points ------------------------------------------------------------------- */

typedef struct {
  char *key;
  GArray *x;       /* double */
  GArray *t;       /* double */
} Group;

static void
group_free(gpointer data)
{
  Group *g = data;
  g_free(g->key);
  g_array_unref(g->x);
  g_array_unref(g->t);
  g_free(g);
}

static Group *
group_get(GHashTable *index, GPtrArray *order, const char *key)
{
  Group *g = g_hash_table_lookup(index, key);
  if (!g) {
    g = g_new0(Group, 1);
    g->key = g_strdup(key);
    g->x = g_array_new(FALSE, FALSE, sizeof(double));
    g->t = g_array_new(FALSE, FALSE, sizeof(double));
    g_hash_table_insert(index, g->key, g);
    g_ptr_array_add(order, g);
  }
  return g;
}

static void
group_add(Group *g, double x, double t)
{
  g_array_append_val(g->x, x);
  g_array_append_val(g->t, t);
}

/* Residual statistics of a fitted line over a group; appends per-point residual rows. */
static void
residuals(const Group *g, double a, double b, const char *model, const char *label, GArray *out,
          double *rms, double *max_abs)
{
  double sum2 = 0, worst = 0;
  guint n = 0;
  for (guint i = 0; i < g->x->len; i++) {
    double x = g_array_index(g->x, double, i), t = g_array_index(g->t, double, i);
    if (!(t > 0))
      continue;
    double fitted = a + b * x;
    double rel = (fitted - t) / t;
    sum2 += rel * rel;
    worst = MAX(worst, fabs(rel));
    n++;
    DdpCalibResidual r = { g_strdup(model), g_strdup(label), x, t, fitted, rel };
    g_array_append_val(out, r);
  }
  *rms = n ? sqrt(sum2 / n) : 0;
  *max_abs = worst;
}

static int
compare_allreduce_fit(gconstpointer pa, gconstpointer pb)
{
  const DdpCalibAllreduceFit *a = pa, *b = pb;
  int c = strcmp(a->algorithm, b->algorithm);
  if (c == 0)
    c = strcmp(a->protocol, b->protocol);
  if (c == 0)
    c = (a->nodes > b->nodes) - (a->nodes < b->nodes);
  if (c == 0)
    c = (a->ranks > b->ranks) - (a->ranks < b->ranks);
  return c;
}

static int
compare_group_key(gconstpointer pa, gconstpointer pb)
{
  const Group *a = *(Group *const *)pa, *b = *(Group *const *)pb;
  return strcmp(a->key, b->key);
}

/* The measured points of one fitted variant, repeated sizes merged (commcurve averages them). */
static void
add_curve_points(DdpFit *fit, const DdpCalibAllreduceFit *f, const Group *g)
{
  g_autofree gint64 *bytes = g_new(gint64, MAX(g->x->len, 1));
  for (guint j = 0; j < g->x->len; j++)
    bytes[j] = (gint64)g_array_index(g->x, double, j);
  g_autoptr(DdpCommCurve) curve = ddp_comm_curve_new(bytes, (const double *)(void *)g->t->data, g->x->len, NULL);
  if (!curve)
    return;
  guint n;
  const gint64 *b = ddp_comm_curve_bytes(curve, &n);
  const double *t = ddp_comm_curve_times(curve, &n);
  for (guint j = 0; j < n; j++) {
    DdpCalibCurvePoint p = { .algorithm = g_strdup(f->algorithm), .protocol = g_strdup(f->protocol),
                             .ranks = f->ranks, .nodes = f->nodes, .bytes = b[j], .time_us = t[j] };
    g_array_append_val(fit->curve_points, p);
  }
}

/* Appends one Curve per (op, variant, ranks, nodes) of @points (sorted so that each one's points
 * are adjacent). */
static void
build_curves_of(DdpFit *fit, const GArray *points)
{
  const DdpCalibCurvePoint *p = (const DdpCalibCurvePoint *)(void *)points->data;
  guint n = points->len;
  for (guint i = 0; i < n;) {
    guint j = i;
    while (j < n && g_strcmp0(p[j].op, p[i].op) == 0 && strcmp(p[j].algorithm, p[i].algorithm) == 0 &&
           strcmp(p[j].protocol, p[i].protocol) == 0 && p[j].ranks == p[i].ranks && p[j].nodes == p[i].nodes)
      j++;
    g_autofree gint64 *bytes = g_new(gint64, j - i);
    g_autofree double *times = g_new(double, j - i);
    for (guint k = i; k < j; k++) {
      bytes[k - i] = p[k].bytes;
      times[k - i] = p[k].time_us;
    }
    DdpCommCurve *curve = ddp_comm_curve_new(bytes, times, j - i, NULL);
    int op = p[i].op ? ddp_collective_op_parse(p[i].op) : DDP_OP_ALL_REDUCE;
    if (curve && op >= 0) {
      Curve *c = g_new0(Curve, 1);
      c->op = op;
      c->algorithm = g_strdup(p[i].algorithm);
      c->protocol = g_strdup(p[i].protocol);
      c->ranks = p[i].ranks;
      c->nodes = p[i].nodes;
      c->curve = curve;
      g_ptr_array_add(fit->curves, c);
    } else {
      ddp_comm_curve_free(curve);
    }
    i = j;
  }
}

/* (Re)builds fit->curves from fit->curve_points and fit->op_curve_points. */
static void
build_curves(DdpFit *fit)
{
  g_ptr_array_set_size(fit->curves, 0);
  build_curves_of(fit, fit->curve_points);
  build_curves_of(fit, fit->op_curve_points);
}

/* The curve of @op measured at exactly (@gpus, @nodes) for this variant, or NULL. */
static const Curve *
find_curve(const DdpFit *fit, DdpCollectiveOp op, const char *algorithm, const char *protocol, guint64 gpus,
           guint64 nodes)
{
  for (guint i = 0; i < fit->curves->len; i++) {
    const Curve *c = g_ptr_array_index(fit->curves, i);
    if (c->op == op && g_ascii_strcasecmp(c->algorithm, algorithm) == 0 &&
        g_ascii_strcasecmp(c->protocol, protocol) == 0 && (guint64)c->ranks == gpus && (guint64)c->nodes == nodes)
      return c;
  }
  return NULL;
}

/* AllReduce: one line per (algorithm, protocol, ranks, nodes).  In-place points are preferred
 * when a group has both (DDP reduces its buckets in place). */
static void
fit_allreduce(DdpFit *fit, GArray *points)
{
  g_autoptr(GHashTable) index = g_hash_table_new(g_str_hash, g_str_equal);
  g_autoptr(GPtrArray) order = g_ptr_array_new_with_free_func(group_free);
  g_autoptr(GHashTable) has_in_place = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
  for (guint i = 0; i < points->len; i++) {
    const DdpCalibAllreducePoint *p = &g_array_index(points, DdpCalibAllreducePoint, i);
    if (p->in_place)
      g_hash_table_add(has_in_place, g_strdup_printf("%s\x1f%s\x1f%d\x1f%d", p->algorithm, p->protocol,
                                                     p->ranks, p->nodes));
  }
  for (guint i = 0; i < points->len; i++) {
    const DdpCalibAllreducePoint *p = &g_array_index(points, DdpCalibAllreducePoint, i);
    g_autofree char *key = g_strdup_printf("%s\x1f%s\x1f%d\x1f%d", p->algorithm, p->protocol, p->ranks, p->nodes);
    if (!p->in_place && g_hash_table_contains(has_in_place, key))
      continue;
    group_add(group_get(index, order, key), (double)p->bytes, p->time_us);
  }
  g_ptr_array_sort(order, compare_group_key);
  for (guint i = 0; i < order->len; i++) {
    Group *g = g_ptr_array_index(order, i);
    g_auto(GStrv) parts = g_strsplit(g->key, "\x1f", 4);
    DdpCalibAllreduceFit f = { 0 };
    f.algorithm = g_strdup(parts[0]);
    f.protocol = g_strdup(parts[1]);
    f.ranks = atoi(parts[2]);
    f.nodes = atoi(parts[3]);
    double a, b;
    /* One rank moves no data: only the launch latency is meaningful, so fit a flat line (all
     * x = 0 makes ddp_fit_line return the weighted mean with b = 0). */
    gboolean latency_only = f.ranks < 2;
    g_autoptr(GArray) zeros = g_array_sized_new(FALSE, TRUE, sizeof(double), g->x->len);
    g_array_set_size(zeros, g->x->len);
    const double *x = latency_only ? (const double *)(void *)zeros->data : (const double *)(void *)g->x->data;
    if (!ddp_fit_line(x, (const double *)(void *)g->t->data, g->x->len, TRUE, &a, &b)) {
      ddp_calib_allreduce_fit_clear(&f);
      continue;
    }
    f.alpha_us = a;
    /* b is µs per byte; GB/s = 1000 B/µs */
    f.algbw_GBs = b > 0 ? 1.0 / (b * 1000.0) : 0;
    f.busbw_GBs = f.ranks > 1 ? f.algbw_GBs * 2.0 * (f.ranks - 1) / f.ranks : 0;
    f.n_points = (int)g->x->len;
    f.min_bytes = G_MAXINT64;
    f.max_bytes = 0;
    for (guint j = 0; j < g->x->len; j++) {
      gint64 s = (gint64)g_array_index(g->x, double, j);
      f.min_bytes = MIN(f.min_bytes, s);
      f.max_bytes = MAX(f.max_bytes, s);
    }
    g_autofree char *label = g_strdup_printf("%s/%s ranks=%d nodes=%d", f.algorithm, f.protocol, f.ranks, f.nodes);
    residuals(g, a, b, "allreduce", label, fit->residuals, &f.rms_rel, &f.max_rel);
    add_curve_points(fit, &f, g);
    g_array_append_val(fit->allreduce, f);
  }
  g_array_sort(fit->allreduce, compare_allreduce_fit);
}

static int
compare_curve_point(gconstpointer pa, gconstpointer pb)
{
  const DdpCalibCurvePoint *a = pa, *b = pb;
  int c = strcmp(a->op, b->op);
  if (c == 0)
    c = strcmp(a->algorithm, b->algorithm);
  if (c == 0)
    c = strcmp(a->protocol, b->protocol);
  if (c == 0)
    c = (a->nodes > b->nodes) - (a->nodes < b->nodes);
  if (c == 0)
    c = (a->ranks > b->ranks) - (a->ranks < b->ranks);
  if (c == 0)
    c = (a->bytes > b->bytes) - (a->bytes < b->bytes);
  return c;
}

/* Where a size was timed in place and out of place, the placement PyTorch runs (top of file). */
static gboolean
prefers_in_place(const char *op)
{
  return g_strcmp0(op, "broadcast") == 0;
}

/* The other collectives: the measured curve of each (op, algorithm, protocol, ranks, nodes), sizes
 * measured more than once averaged (commcurve.h), into fit->op_curve_points. */
static void
fit_collectives(DdpFit *fit, GArray *points)
{
  g_autoptr(GHashTable) index = g_hash_table_new(g_str_hash, g_str_equal);
  g_autoptr(GPtrArray) order = g_ptr_array_new_with_free_func(group_free);
  g_autoptr(GHashTable) has_preferred = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
  for (guint i = 0; i < points->len; i++) {
    const DdpCalibCollectivePoint *p = &g_array_index(points, DdpCalibCollectivePoint, i);
    if (p->in_place == prefers_in_place(p->op))
      g_hash_table_add(has_preferred, g_strdup_printf("%s\x1f%s\x1f%s\x1f%d\x1f%d", p->op, p->algorithm, p->protocol,
                                                      p->ranks, p->nodes));
  }
  for (guint i = 0; i < points->len; i++) {
    const DdpCalibCollectivePoint *p = &g_array_index(points, DdpCalibCollectivePoint, i);
    g_autofree char *key = g_strdup_printf("%s\x1f%s\x1f%s\x1f%d\x1f%d", p->op, p->algorithm, p->protocol, p->ranks,
                                           p->nodes);
    if (p->in_place != prefers_in_place(p->op) && g_hash_table_contains(has_preferred, key))
      continue;
    group_add(group_get(index, order, key), (double)p->bytes, p->time_us);
  }
  for (guint i = 0; i < order->len; i++) {
    const Group *g = g_ptr_array_index(order, i);
    g_auto(GStrv) parts = g_strsplit(g->key, "\x1f", 5);
    g_autofree gint64 *bytes = g_new(gint64, MAX(g->x->len, 1));
    for (guint j = 0; j < g->x->len; j++)
      bytes[j] = (gint64)g_array_index(g->x, double, j);
    g_autoptr(DdpCommCurve) curve = ddp_comm_curve_new(bytes, (const double *)(void *)g->t->data, g->x->len, NULL);
    if (!curve)
      continue;
    guint n;
    const gint64 *b = ddp_comm_curve_bytes(curve, &n);
    const double *t = ddp_comm_curve_times(curve, &n);
    for (guint j = 0; j < n; j++) {
      DdpCalibCurvePoint p = { .op = g_strdup(parts[0]), .algorithm = g_strdup(parts[1]),
                               .protocol = g_strdup(parts[2]), .ranks = atoi(parts[3]), .nodes = atoi(parts[4]),
                               .bytes = b[j], .time_us = t[j] };
      g_array_append_val(fit->op_curve_points, p);
    }
  }
  g_array_sort(fit->op_curve_points, compare_curve_point);
}

/* Kernels: one line per (kind, precision) over every kernel of that kind — GEMMs of dX, dW and
 * forward alike, since they share the hardware — plus one for device copies. */
static void
fit_kernels(DdpFit *fit, GArray *points)
{
  g_autoptr(GHashTable) index = g_hash_table_new(g_str_hash, g_str_equal);
  g_autoptr(GPtrArray) order = g_ptr_array_new_with_free_func(group_free);
  for (guint i = 0; i < points->len; i++) {
    const DdpCalibKernelPoint *p = &g_array_index(points, DdpCalibKernelPoint, i);
    gboolean copy = g_strcmp0(p->layer_kind, "copy") == 0;
    int kind = kind_index(p->layer_kind);
    /* Layer times from a profiler trace include the parameter-free ops folded into the layer
     * (profimport.h): right as layer times, wrong as a kernel's rate. */
    if ((!copy && kind < 0) || g_strcmp0(p->probe, DDP_FIT_PROBE_PROFILER) == 0)
      continue;
    gboolean flops = !copy && is_matmul_kind(kind);
    g_autofree char *key = g_strdup_printf("%s\x1f%s\x1f%s", p->layer_kind, copy ? "any" : p->precision,
                                           flops ? "flops" : "bytes");
    group_add(group_get(index, order, key), flops ? p->flops : p->bytes, p->time_us);
  }
  g_ptr_array_sort(order, compare_group_key);
  for (guint i = 0; i < order->len; i++) {
    Group *g = g_ptr_array_index(order, i);
    g_auto(GStrv) parts = g_strsplit(g->key, "\x1f", 3);
    double a, b;
    if (!ddp_fit_line((const double *)(void *)g->x->data, (const double *)(void *)g->t->data, g->x->len,
                      FALSE, &a, &b) || !(b > 0))
      continue;
    DdpCalibKernelFit f = { 0 };
    f.layer_kind = g_strdup(parts[0]);
    f.precision = g_strdup(parts[1]);
    f.basis = g_strdup(parts[2]);
    gboolean flops = strcmp(parts[2], "flops") == 0;
    /* b: µs per FLOP → TFLOP/s = 1e-6 / b;  µs per byte → GB/s = 1e-3 / b */
    f.rate = flops ? 1e-6 / b : 1e-3 / b;
    f.efficiency = NAN;
    if (fit->have_spec) {
      int p = ddp_precision_parse(parts[1]);
      if (flops && p >= 0)
        f.efficiency = f.rate / fit->spec.peak_tflops[p];
      else if (!flops)
        f.efficiency = f.rate / fit->spec.hbm_GBs;
    }
    f.overhead_us = a;
    f.n_points = (int)g->x->len;
    g_autofree char *label = g_strdup_printf("%s %s", f.layer_kind, f.precision);
    residuals(g, a, b, "kernel", label, fit->residuals, &f.rms_rel, &f.max_rel);
    g_array_append_val(fit->kernels, f);
  }
}

static int
compare_layer_fit(gconstpointer pa, gconstpointer pb)
{
  const DdpCalibLayerFit *a = pa, *b = pb;
  int c = strcmp(a->signature, b->signature);
  if (c == 0)
    c = strcmp(a->precision, b->precision);
  if (c == 0)
    c = (a->batch_size > b->batch_size) - (a->batch_size < b->batch_size);
  return c;
}

static gboolean
is_backward_op(const char *op)
{
  return g_strcmp0(op, "dX") == 0 || g_strcmp0(op, "dW") == 0 || g_strcmp0(op, "bwd-data") == 0 ||
         g_strcmp0(op, "bwd-filter") == 0 || g_strcmp0(op, "bwd") == 0;
}

static int
compare_strings(const void *pa, const void *pb)
{
  return strcmp(*(const char *const *)pa, *(const char *const *)pb);
}

/* Per-op accumulator of one (signature, precision, batch): mean over repeated measurements. */
typedef struct {
  DdpCalibLayerFit row;
  GHashTable *op_sum;     /* op → double* [sum, count] */
} LayerAcc;

static void
layer_acc_free(gpointer data)
{
  LayerAcc *acc = data;
  ddp_calib_layer_fit_clear(&acc->row);
  g_hash_table_unref(acc->op_sum);
  g_free(acc);
}

/* Measured layer times: Σ over its backward kernels (and forward ones), each the mean of its
 * measurements when several runs measured it.  A layer time imported from a profiler trace (all
 * of the layer's backward as PyTorch ran it, profimport.h) replaces the sum of probe kernels. */
#define PROFILER_OP "profiler-bwd"
static void
fit_layers(DdpFit *fit, GArray *points)
{
  g_autoptr(GHashTable) index = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
  g_autoptr(GPtrArray) order = g_ptr_array_new_with_free_func(layer_acc_free);
  for (guint i = 0; i < points->len; i++) {
    const DdpCalibKernelPoint *p = &g_array_index(points, DdpCalibKernelPoint, i);
    /* a profiler import stores 0 for a layer whose ops it folded into a neighbour (profimport.h) */
    gboolean folded = p->time_us == 0 && g_strcmp0(p->probe, DDP_FIT_PROBE_PROFILER) == 0;
    if (!p->signature || !*p->signature || kind_index(p->layer_kind) < 0 || !(p->time_us > 0 || folded))
      continue;
    char batch[G_ASCII_DTOSTR_BUF_SIZE];
    g_ascii_dtostr(batch, sizeof batch, p->batch_size);
    char *key = g_strdup_printf("%s\x1f%s\x1f%s", p->signature, p->precision, batch);
    LayerAcc *acc = g_hash_table_lookup(index, key);
    if (!acc) {
      acc = g_new0(LayerAcc, 1);
      acc->row.signature = g_strdup(p->signature);
      acc->row.layer_kind = g_strdup(p->layer_kind);
      acc->row.layer = g_strdup(p->layer ? p->layer : "");
      acc->row.precision = g_strdup(p->precision);
      acc->row.batch_size = p->batch_size;
      acc->op_sum = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
      g_hash_table_insert(index, key, acc);
      g_ptr_array_add(order, acc);
    } else {
      g_free(key);
    }
    const char *op = folded || g_strcmp0(p->probe, DDP_FIT_PROBE_PROFILER) == 0 ? PROFILER_OP : p->op;
    double *sum = g_hash_table_lookup(acc->op_sum, op);
    if (!sum) {
      sum = g_new0(double, 2);
      g_hash_table_insert(acc->op_sum, g_strdup(op), sum);
    }
    sum[0] += p->time_us;
    sum[1] += 1;
  }
  for (guint i = 0; i < order->len; i++) {
    LayerAcc *acc = g_ptr_array_index(order, i);
    double forward = -1, backward = 0;
    gboolean any_backward = FALSE;
    /* Sum in sorted op order so the floating-point result does not depend on hashing. */
    guint n_ops = 0;
    g_autofree gpointer *ops = g_hash_table_get_keys_as_array(acc->op_sum, &n_ops);
    qsort(ops, n_ops, sizeof(gpointer), compare_strings);
    for (guint k = 0; k < n_ops; k++) {
      const double *sum = g_hash_table_lookup(acc->op_sum, ops[k]);
      double mean = sum[0] / sum[1];
      if (strcmp(ops[k], "fwd") == 0)
        forward = mean;
      else if (g_hash_table_contains(acc->op_sum, PROFILER_OP)) {
        /* the whole layer as the framework ran it beats the sum of our own kernel probes */
        if (strcmp(ops[k], PROFILER_OP) == 0) {
          backward = mean;
          any_backward = TRUE;
        }
      } else if (is_backward_op(ops[k])) {
        backward += mean;
        any_backward = TRUE;
      }
    }
    if (!any_backward)
      continue;
    DdpCalibLayerFit row = acc->row;
    row.signature = g_strdup(row.signature);
    row.layer_kind = g_strdup(row.layer_kind);
    row.layer = g_strdup(row.layer);
    row.precision = g_strdup(row.precision);
    row.forward_us = forward;
    row.backward_us = backward;
    g_array_append_val(fit->layers, row);
  }
  g_array_sort(fit->layers, compare_layer_fit);
}

static DdpFit *
fit_new(void)
{
  DdpFit *fit = g_new0(DdpFit, 1);
  fit->allreduce = g_array_new(FALSE, TRUE, sizeof(DdpCalibAllreduceFit));
  g_array_set_clear_func(fit->allreduce, (GDestroyNotify)ddp_calib_allreduce_fit_clear);
  fit->kernels = g_array_new(FALSE, TRUE, sizeof(DdpCalibKernelFit));
  g_array_set_clear_func(fit->kernels, (GDestroyNotify)ddp_calib_kernel_fit_clear);
  fit->layers = g_array_new(FALSE, TRUE, sizeof(DdpCalibLayerFit));
  g_array_set_clear_func(fit->layers, (GDestroyNotify)ddp_calib_layer_fit_clear);
  fit->residuals = g_array_new(FALSE, TRUE, sizeof(DdpCalibResidual));
  g_array_set_clear_func(fit->residuals, (GDestroyNotify)ddp_calib_residual_clear);
  fit->curve_points = g_array_new(FALSE, TRUE, sizeof(DdpCalibCurvePoint));
  g_array_set_clear_func(fit->curve_points, (GDestroyNotify)ddp_calib_curve_point_clear);
  fit->op_curve_points = g_array_new(FALSE, TRUE, sizeof(DdpCalibCurvePoint));
  g_array_set_clear_func(fit->op_curve_points, (GDestroyNotify)ddp_calib_curve_point_clear);
  fit->curves = g_ptr_array_new_with_free_func(curve_free);
  return fit;
}

void
ddp_fit_free(DdpFit *fit)
{
  if (!fit)
    return;
  ddp_calib_fit_free(fit->header);
  g_array_unref(fit->allreduce);
  g_array_unref(fit->kernels);
  g_array_unref(fit->layers);
  g_array_unref(fit->residuals);
  g_array_unref(fit->curve_points);
  g_array_unref(fit->op_curve_points);
  g_ptr_array_unref(fit->curves);
  g_free(fit);
}

/**
 * ddp_fit_from_db:
 * @run_ids: (array length=n_run_ids): the runs to fit; with @n_run_ids 0, the newest run that
 *   holds measurements
 * @gpu: (nullable): built-in spec name whose peaks the efficiencies refer to; NULL guesses it from
 *   the runs' GPU name (ddp_fit_guess_gpu), and leaves efficiencies NAN when that fails
 *
 * Fits everything the runs measured; nothing is written (see ddp_fit_store()).
 * Returns: (transfer full): the fit, or NULL with @error: DDP_CALIBDB_ERROR_NOT_FOUND (no such
 * run, or no run with data), DDP_FIT_ERROR_NO_DATA, _MIXED_GPUS, _UNKNOWN_GPU, or a database error.
 */
DdpFit *
ddp_fit_from_db(DdpCalibDb *db, const gint64 *run_ids, guint n_run_ids, const char *gpu, GError **error)
{
  gint64 latest = 0;
  if (n_run_ids == 0) {
    latest = ddp_calibdb_latest_run(db, FALSE, TRUE, error);
    if (latest == 0)
      return NULL;
    run_ids = &latest;
    n_run_ids = 1;
  }
  g_autoptr(DdpFit) fit = fit_new();
  fit->header = g_new0(DdpCalibFit, 1);
  GString *runs = g_string_new(NULL);
  g_autofree char *device = NULL;
  gint64 memory = 0;
  for (guint i = 0; i < n_run_ids; i++) {
    g_autoptr(DdpCalibRun) run = ddp_calibdb_run_get(db, run_ids[i], error);
    if (!run) {
      g_string_free(runs, TRUE);
      return NULL;
    }
    /* an imported file may not name its GPU (""): it mixes with anything */
    if (device && *device && *run->gpu_name && strcmp(device, run->gpu_name) != 0) {
      g_autofree char *name = ddp_range_quote(run->gpu_name), *earlier = ddp_range_quote(device);   /* stored text */
      g_set_error(error, DDP_FIT_ERROR, DDP_FIT_ERROR_MIXED_GPUS,
                  "%s: run %" G_GINT64_FORMAT " measured %s but an earlier run measured %s: fit them separately",
                  ddp_calibdb_path(db), run->id, name, earlier);
      g_string_free(runs, TRUE);
      return NULL;
    }
    if (!device || (!*device && *run->gpu_name)) {
      g_free(device);
      device = g_strdup(run->gpu_name);
      memory = run->gpu_memory_bytes;
    }
    g_string_append_printf(runs, "%s%" G_GINT64_FORMAT, i ? "," : "", run->id);
  }
  fit->header->runs = g_string_free(runs, FALSE);
  fit->header->gpu_name = g_strdup(device);
  fit->header->program = g_strdup(PACKAGE_STRING);
  const char *spec_name = gpu ? gpu : ddp_fit_guess_gpu(device, memory);
  if (spec_name) {
    g_autoptr(GError) local = NULL;
    if (!ddp_gpu_lookup(spec_name, &fit->spec, &local)) {
      g_set_error(error, DDP_FIT_ERROR, DDP_FIT_ERROR_UNKNOWN_GPU, "--gpu: %s", local->message);
      return NULL;
    }
    fit->have_spec = TRUE;
  }
  fit->header->gpu_spec = g_strdup(spec_name ? spec_name : "");
  fit->header->note = g_strdup(spec_name ? "" : "GPU not recognised: efficiencies not computed (pass --gpu NAME)");

  g_autoptr(GArray) allreduce = ddp_calibdb_allreduce_points(db, run_ids, n_run_ids, error);
  if (!allreduce)
    return NULL;
  g_autoptr(GArray) kernels = ddp_calibdb_kernel_points(db, run_ids, n_run_ids, error);
  if (!kernels)
    return NULL;
  g_autoptr(GArray) collectives = ddp_calibdb_collective_points(db, run_ids, n_run_ids, error);
  if (!collectives)
    return NULL;
  if (allreduce->len == 0 && kernels->len == 0 && collectives->len == 0) {
    g_set_error(error, DDP_FIT_ERROR, DDP_FIT_ERROR_NO_DATA, "%s: run %s holds no measurements",
                ddp_calibdb_path(db), fit->header->runs);
    return NULL;
  }
  fit_allreduce(fit, allreduce);
  fit_collectives(fit, collectives);
  build_curves(fit);
  fit_kernels(fit, kernels);
  fit_layers(fit, kernels);
  return g_steal_pointer(&fit);
}

/* ---- storing and loading ------------------------------------------------------------------- */

/**
 * ddp_fit_store:
 * Writes @fit (header, rows, residuals) into @db in one transaction and records the new id in
 * the fit's header.  Returns: the fit id, or 0 with @error (nothing written).
 */
gint64
ddp_fit_store(DdpFit *fit, DdpCalibDb *db, GError **error)
{
  gint64 id = ddp_calibdb_fit_begin(db, fit->header, error);
  if (id == 0)
    return 0;
  gboolean ok = TRUE;
  for (guint i = 0; ok && i < fit->allreduce->len; i++)
    ok = ddp_calibdb_fit_add_allreduce(db, &g_array_index(fit->allreduce, DdpCalibAllreduceFit, i), error);
  for (guint i = 0; ok && i < fit->kernels->len; i++)
    ok = ddp_calibdb_fit_add_kernel(db, &g_array_index(fit->kernels, DdpCalibKernelFit, i), error);
  for (guint i = 0; ok && i < fit->layers->len; i++)
    ok = ddp_calibdb_fit_add_layer(db, &g_array_index(fit->layers, DdpCalibLayerFit, i), error);
  for (guint i = 0; ok && i < fit->residuals->len; i++)
    ok = ddp_calibdb_fit_add_residual(db, &g_array_index(fit->residuals, DdpCalibResidual, i), error);
  for (guint i = 0; ok && i < fit->curve_points->len; i++)
    ok = ddp_calibdb_fit_add_curve_point(db, &g_array_index(fit->curve_points, DdpCalibCurvePoint, i), error);
  for (guint i = 0; ok && i < fit->op_curve_points->len; i++)
    ok = ddp_calibdb_fit_add_curve_point(db, &g_array_index(fit->op_curve_points, DdpCalibCurvePoint, i), error);
  if (!ok) {
    ddp_calibdb_batch_rollback(db);
    return 0;
  }
  if (!ddp_calibdb_fit_commit(db, error))
    return 0;
  fit->header->id = id;
  g_free(fit->header->created);
  fit->header->created = ddp_calibdb_now();
  return id;
}

static void
replace_array(GArray **slot, GArray *rows)
{
  g_array_unref(*slot);
  *slot = rows;
}

/**
 * ddp_fit_load:
 * @fit_id: a stored fit, or 0 for the newest
 *
 * Returns: (transfer full): the stored fit, or NULL with @error (DDP_CALIBDB_ERROR_NOT_FOUND when
 * there is no such fit).
 */
DdpFit *
ddp_fit_load(DdpCalibDb *db, gint64 fit_id, GError **error)
{
  g_autoptr(DdpFit) fit = fit_new();
  fit->header = ddp_calibdb_fit_get(db, fit_id, error);
  if (!fit->header)
    return NULL;
  GArray *rows;
  if (!(rows = ddp_calibdb_fit_allreduce(db, fit->header->id, error)))
    return NULL;
  replace_array(&fit->allreduce, rows);
  if (!(rows = ddp_calibdb_fit_kernels(db, fit->header->id, error)))
    return NULL;
  replace_array(&fit->kernels, rows);
  if (!(rows = ddp_calibdb_fit_layers(db, fit->header->id, error)))
    return NULL;
  replace_array(&fit->layers, rows);
  if (!(rows = ddp_calibdb_fit_residuals(db, fit->header->id, error)))
    return NULL;
  replace_array(&fit->residuals, rows);
  if (!(rows = ddp_calibdb_fit_curve(db, fit->header->id, error)))
    return NULL;
  replace_array(&fit->curve_points, rows);
  if (!(rows = ddp_calibdb_fit_collective_curve(db, fit->header->id, error)))
    return NULL;
  replace_array(&fit->op_curve_points, rows);
  build_curves(fit);
  if (fit->header->gpu_spec && *fit->header->gpu_spec)
    fit->have_spec = ddp_gpu_lookup(fit->header->gpu_spec, &fit->spec, NULL);
  /* Rows are stored sorted; sorting again costs nothing and keeps lookups independent of that. */
  g_array_sort(fit->allreduce, compare_allreduce_fit);
  g_array_sort(fit->layers, compare_layer_fit);
  return g_steal_pointer(&fit);
}

/* Largest run id listed in a fit's "3,4" runs field. */
static gint64
max_run_id(const char *runs)
{
  gint64 max = 0;
  g_auto(GStrv) ids = g_strsplit(runs ? runs : "", ",", -1);
  for (guint i = 0; ids[i]; i++)
    max = MAX(max, g_ascii_strtoll(ids[i], NULL, 10));
  return max;
}

/**
 * ddp_fit_error_as_import:
 * See fit.h: the importers check numbers with ranges.h, whose errors are DDP_RANGE_ERROR; an
 * imported file's refusal is DDP_FIT_ERROR_IMPORT whatever check made it.
 */
void
ddp_fit_error_as_import(GError **error)
{
  if (!error || !*error)
    return;
  (*error)->domain = DDP_FIT_ERROR;
  (*error)->code = DDP_FIT_ERROR_IMPORT;
}

/**
 * ddp_fit_open:
 * @path: a calibration database (`--calibration DB`)
 *
 * Opens @path read-only and returns its newest stored fit — or, when no fit is stored or a run
 * with measurements is newer than the runs the stored fit used, a fit of the newest run made in
 * memory (nothing is written; `ddpsim fit` stores one).
 * Returns: (transfer full): the fit, or NULL with @error (a DDP_CALIBDB_ERROR or DDP_FIT_ERROR,
 * all of them the user's to fix except DDP_CALIBDB_ERROR_SQL).
 */
DdpFit *
ddp_fit_open(const char *path, GError **error)
{
  g_autoptr(DdpCalibDb) db = ddp_calibdb_open(path, DDP_CALIBDB_READ, error);
  if (!db)
    return NULL;
  g_autoptr(GError) local = NULL;
  g_autoptr(DdpFit) stored = ddp_fit_load(db, 0, &local);
  if (!stored && !g_error_matches(local, DDP_CALIBDB_ERROR, DDP_CALIBDB_ERROR_NOT_FOUND)) {
    g_propagate_error(error, g_steal_pointer(&local));
    return NULL;
  }
  g_clear_error(&local);
  gint64 latest = ddp_calibdb_latest_run(db, FALSE, TRUE, &local);
  if (latest == 0 && !g_error_matches(local, DDP_CALIBDB_ERROR, DDP_CALIBDB_ERROR_NOT_FOUND)) {
    g_propagate_error(error, g_steal_pointer(&local));
    return NULL;
  }
  if (stored && latest <= max_run_id(stored->header->runs))
    return g_steal_pointer(&stored);
  if (latest == 0) {
    g_set_error(error, DDP_FIT_ERROR, DDP_FIT_ERROR_NO_DATA, "%s: no calibration measurements", path);
    return NULL;
  }
  return ddp_fit_from_db(db, &latest, 1, NULL, error);
}

/* ---- accessors ----------------------------------------------------------------------------- */

const DdpCalibFit *
ddp_fit_header(const DdpFit *fit)
{
  return fit->header;
}

gboolean
ddp_fit_gpu_spec(const DdpFit *fit, DdpGpuSpec *out)
{
  if (fit->have_spec && out)
    *out = fit->spec;
  return fit->have_spec;
}

const DdpCalibAllreduceFit *
ddp_fit_allreduce_rows(const DdpFit *fit, guint *n)
{
  *n = fit->allreduce->len;
  return (const DdpCalibAllreduceFit *)(void *)fit->allreduce->data;
}

const DdpCalibKernelFit *
ddp_fit_kernel_rows(const DdpFit *fit, guint *n)
{
  *n = fit->kernels->len;
  return (const DdpCalibKernelFit *)(void *)fit->kernels->data;
}

const DdpCalibLayerFit *
ddp_fit_layer_rows(const DdpFit *fit, guint *n)
{
  *n = fit->layers->len;
  return (const DdpCalibLayerFit *)(void *)fit->layers->data;
}

const DdpCalibCurvePoint *
ddp_fit_curve_points(const DdpFit *fit, guint *n)
{
  *n = fit->curve_points->len;
  return (const DdpCalibCurvePoint *)(void *)fit->curve_points->data;
}

const DdpCalibCurvePoint *
ddp_fit_collective_curve_points(const DdpFit *fit, guint *n)
{
  *n = fit->op_curve_points->len;
  return (const DdpCalibCurvePoint *)(void *)fit->op_curve_points->data;
}

const DdpCalibResidual *
ddp_fit_residual_rows(const DdpFit *fit, guint *n)
{
  *n = fit->residuals->len;
  return (const DdpCalibResidual *)(void *)fit->residuals->data;
}

/* ---- (a) AllReduce lookups ----------------------------------------------------------------- */

/* NCCL's fixed per-operation latency, µs (tuning.cc baseLatencies, docs/model.md §2.1); NVLS, NVLSTree
 * and CollNet have none (their latency is all hops). */
static double
base_latency_us(const char *algorithm, const char *protocol)
{
  DdpProtocol p = protocol_enum(protocol);
  if (g_ascii_strcasecmp(algorithm, "Ring") == 0 || g_ascii_strcasecmp(algorithm, "auto") == 0)
    return p == DDP_PROTO_LL ? 6.6 : p == DDP_PROTO_LL128 ? 14.0 : 8.4;
  if (g_ascii_strcasecmp(algorithm, "Tree") == 0)
    return p == DDP_PROTO_LL ? 6.8 : p == DDP_PROTO_LL128 ? 14.0 : 8.4;
  return 0;
}

/* Sequential hops of one AllReduce (docs/model.md §2.3), the variable latency grows with. */
static double
hops(const char *algorithm, double ranks, double nodes)
{
  double log_nodes = nodes > 1 ? ceil(log2(nodes)) : 0;
  double ppn = ranks / MAX(nodes, 1);
  if (g_ascii_strcasecmp(algorithm, "Tree") == 0)
    return 2 * (ppn - 1) + 2 * log_nodes;
  if (g_ascii_strncasecmp(algorithm, "NVLS", 4) == 0 || g_ascii_strncasecmp(algorithm, "CollNet", 7) == 0)
    return 1 + 2 * log_nodes;
  return 2 * (ranks - 1); /* Ring, and "auto" (NCCL picks Ring for the sizes that cost the most) */
}

/**
 * ddp_fit_allreduce_params:
 * @algorithm: NCCL name as measured ("Ring", "Tree", "NVLS", …, or "auto"), case-insensitive
 * @protocol: "LL", "LL128", "Simple" (or "auto")
 * @gpus: ranks of the AllReduce (≥ 2)
 * @nodes: nodes they span (≥ 1)
 * @out: (out): α, algbw, busbw and where they come from
 *
 * Exact when that (ranks, nodes) was measured; otherwise extrapolated from the measurements of the
 * same regime (single node, or multi-node), as described at the top of fit.c.
 * Returns: FALSE when nothing measured covers the question (the variant was not measured, only
 * one-rank latency exists, or the regime differs) — use the built-in model then.
 */
gboolean
ddp_fit_allreduce_params(const DdpFit *fit, const char *algorithm, const char *protocol, guint64 gpus,
                         guint64 nodes, DdpFitAlphaBeta *out)
{
  g_return_val_if_fail(algorithm && protocol && out, FALSE);
  if (gpus < 2 || nodes < 1)
    return FALSE;
  gboolean multi = nodes > 1;
  double hq = hops(algorithm, (double)gpus, (double)nodes);
  /* Candidates: this variant's measurements in the same regime, nearest first in log(hops); a tie
   * keeps table order (sorted by nodes, ranks), so the choice is deterministic. */
  const DdpCalibAllreduceFit *best = NULL, *second = NULL;
  double best_d = G_MAXDOUBLE, best_h = 0;
  for (guint i = 0; i < fit->allreduce->len; i++) {
    const DdpCalibAllreduceFit *f = &g_array_index(fit->allreduce, DdpCalibAllreduceFit, i);
    if (g_ascii_strcasecmp(f->algorithm, algorithm) != 0 || g_ascii_strcasecmp(f->protocol, protocol) != 0 ||
        f->ranks < 2 || !(f->algbw_GBs > 0) || (f->nodes > 1) != multi)
      continue;
    if ((guint64)f->ranks == gpus && (guint64)f->nodes == nodes) {
      out->alpha_us = f->alpha_us;
      out->algbw_GBs = f->algbw_GBs;
      out->busbw_GBs = f->busbw_GBs;
      out->exact = TRUE;
      out->from_ranks = f->ranks;
      out->from_nodes = f->nodes;
      return TRUE;
    }
    double h = hops(f->algorithm, f->ranks, f->nodes);
    double d = fabs(log(hq / h));
    if (d < best_d) {
      best = f;
      best_d = d;
      best_h = h;
    }
  }
  if (best) {
    /* the nearest measurement at a different hop count, for the latency slope */
    double second_d = G_MAXDOUBLE;
    for (guint i = 0; i < fit->allreduce->len; i++) {
      const DdpCalibAllreduceFit *f = &g_array_index(fit->allreduce, DdpCalibAllreduceFit, i);
      if (g_ascii_strcasecmp(f->algorithm, algorithm) != 0 || g_ascii_strcasecmp(f->protocol, protocol) != 0 ||
          f->ranks < 2 || !(f->algbw_GBs > 0) || (f->nodes > 1) != multi)
        continue;
      double h = hops(f->algorithm, f->ranks, f->nodes);
      double d = fabs(log(hq / h));
      if (h != best_h && d < second_d) {
        second = f;
        second_d = d;
      }
    }
  }
  if (!best)
    return FALSE;
  out->busbw_GBs = best->busbw_GBs;
  out->algbw_GBs = best->busbw_GBs * (double)gpus / (2.0 * (double)(gpus - 1));
  out->exact = FALSE;
  out->from_ranks = best->ranks;
  out->from_nodes = best->nodes;
  double h1 = hops(best->algorithm, best->ranks, best->nodes);
  if (second) {
    double h2 = hops(second->algorithm, second->ranks, second->nodes);
    double slope = MAX(0.0, (second->alpha_us - best->alpha_us) / (h2 - h1));
    out->alpha_us = MAX(0.0, best->alpha_us + slope * (hq - h1));
  } else {
    double base = MIN(base_latency_us(algorithm, protocol), best->alpha_us);
    out->alpha_us = base + (best->alpha_us - base) * hq / h1;
  }
  return TRUE;
}

static void
fill_cost(const DdpFit *fit, guint64 gpus, guint64 nodes, guint64 bytes, const char *algorithm, const char *protocol,
          const DdpFitAlphaBeta *p, DdpFitAllreduceCost *out)
{
  const Curve *measured = p->exact ? find_curve(fit, DDP_OP_ALL_REDUCE, algorithm, protocol, gpus, nodes) : NULL;
  const DdpCommCurve *curve = measured ? measured->curve : NULL;
  out->from_curve = curve != NULL;
  out->time_us = curve ? ddp_comm_curve_time_us(curve, bytes) : p->alpha_us + (double)bytes / (1000.0 * p->algbw_GBs);
  out->algbw_GBs = out->time_us > 0 ? (double)bytes / (1000.0 * out->time_us) : 0;
  out->busbw_GBs = out->algbw_GBs * 2.0 * (double)(gpus - 1) / (double)gpus;
  out->algorithm = algorithm;
  out->protocol = protocol;
  out->algo = algorithm_enum(algorithm);
  out->proto = protocol_enum(protocol);
  out->params = *p;
}

/* The names of the measured variants are owned by the fit rows; the cost hands out static names
 * so that the result outlives nothing it points into. */
static const char *
static_name(const char *name)
{
  static const char *const known[] = { "Ring", "Tree", "NVLS", "NVLSTree", "CollNetDirect", "CollNetChain",
                                       "PAT", "LL", "LL128", "Simple", "auto" };
  for (gsize i = 0; i < G_N_ELEMENTS(known); i++)
    if (g_ascii_strcasecmp(name, known[i]) == 0)
      return known[i];
  return g_intern_string(name);
}

/**
 * ddp_fit_allreduce_cost:
 * @algorithm, @protocol: a forced variant, or DDP_ALGO_AUTO / DDP_PROTO_AUTO for "the fastest
 *   measured variant at this size" (the argmin NCCL's tuner makes, docs/model.md §2.4, taken over the
 *   measured lines; NVLS variants included).  When no forced variant was measured, AUTO × AUTO
 *   falls back to the line fitted to NCCL's own choice ("auto" rows).
 * @out: (out): time, algbw, busbw of one AllReduce of @bytes, and the variant used; the time
 *   interpolates the variant's measured curve when @gpus × @nodes was measured (out->from_curve),
 *   else it is the extrapolated line
 *
 * Returns: FALSE when the calibration does not cover @gpus × @nodes for any admissible variant.
 */
gboolean
ddp_fit_allreduce_cost(const DdpFit *fit, guint64 gpus, guint64 nodes, guint64 bytes, DdpAlgorithm algorithm,
                       DdpProtocol protocol, DdpFitAllreduceCost *out)
{
  gboolean found = FALSE;
  for (guint i = 0; i < fit->allreduce->len; i++) {
    const DdpCalibAllreduceFit *f = &g_array_index(fit->allreduce, DdpCalibAllreduceFit, i);
    if (g_ascii_strcasecmp(f->algorithm, "auto") == 0 || g_ascii_strcasecmp(f->protocol, "auto") == 0)
      continue;
    if ((algorithm != DDP_ALGO_AUTO && algorithm_enum(f->algorithm) != algorithm) ||
        (protocol != DDP_PROTO_AUTO && protocol_enum(f->protocol) != protocol))
      continue;
    /* rows of one variant are adjacent (sorted): evaluate each variant once */
    if (i > 0) {
      const DdpCalibAllreduceFit *prev = &g_array_index(fit->allreduce, DdpCalibAllreduceFit, i - 1);
      if (strcmp(prev->algorithm, f->algorithm) == 0 && strcmp(prev->protocol, f->protocol) == 0)
        continue;
    }
    DdpFitAlphaBeta p;
    if (!ddp_fit_allreduce_params(fit, f->algorithm, f->protocol, gpus, nodes, &p))
      continue;
    DdpFitAllreduceCost c;
    fill_cost(fit, gpus, nodes, bytes, static_name(f->algorithm), static_name(f->protocol), &p, &c);
    if (!found || c.time_us < out->time_us) {
      *out = c;
      found = TRUE;
    }
  }
  if (!found && algorithm == DDP_ALGO_AUTO && protocol == DDP_PROTO_AUTO) {
    DdpFitAlphaBeta p;
    if (ddp_fit_allreduce_params(fit, "auto", "auto", gpus, nodes, &p)) {
      fill_cost(fit, gpus, nodes, bytes, "auto", "auto", &p, out);
      found = TRUE;
    }
  }
  return found;
}

/**
 * ddp_fit_forced_variant_note:
 * See fit.h.
 */
char *
ddp_fit_forced_variant_note(const DdpFit *fit, guint64 gpus, guint64 nodes, DdpAlgorithm algorithm, DdpProtocol protocol)
{
  if (algorithm == DDP_ALGO_AUTO && protocol == DDP_PROTO_AUTO)
    return NULL;
  DdpFitAllreduceCost named;
  if (ddp_fit_allreduce_cost(fit, gpus, nodes, 8, algorithm, protocol, &named) && named.from_curve)
    return NULL;   /* a measured variant answers */
  DdpFitAllreduceCost own;
  if (!ddp_fit_allreduce_cost(fit, gpus, nodes, 8, DDP_ALGO_AUTO, DDP_PROTO_AUTO, &own) || !own.from_curve)
    return NULL;   /* nothing measured here either: the model answers anyway */
  GString *forced = g_string_new(NULL);
  if (algorithm != DDP_ALGO_AUTO)
    g_string_append_printf(forced, "algorithm %s", ddp_algorithm_name(algorithm));
  if (protocol != DDP_PROTO_AUTO)
    g_string_append_printf(forced, "%sprotocol %s", forced->len ? " and " : "", ddp_protocol_name(protocol));
  char *note = g_strdup_printf("note: the calibration measured NCCL's own AllReduce choice at %" G_GUINT64_FORMAT
                               " GPUs on %" G_GUINT64_FORMAT " node%s, but the cluster forces %s: the model answers "
                               "there, not the measured curve (--algo/--proto auto, or no [nccl] algorithm/protocol, "
                               "use the curve)", gpus, nodes, nodes == 1 ? "" : "s", forced->str);
  g_string_free(forced, TRUE);
  return note;
}

/* ---- the other collectives ---------------------------------------------------------------- */

/**
 * ddp_fit_collective_cost:
 * @op: DDP_OP_ALL_GATHER, DDP_OP_REDUCE_SCATTER or DDP_OP_BROADCAST
 * @bytes: nccl-tests' size of the call (collective.h: the gathered output, the reduced input, the
 *   buffer)
 * @algorithm, @protocol: a forced variant, or AUTO: as ddp_fit_allreduce_cost() — the fastest
 *   measured variant at this size among the named ones the setting admits, else, with AUTO × AUTO,
 *   the curve of NCCL's own choice ("auto" rows, what an nccl-tests import holds)
 * @out: (out): the time interpolated on @op's curve measured at exactly @gpus × @nodes
 *
 * Returns: FALSE when @op was not measured at exactly this communicator (the model answers then).
 */
gboolean
ddp_fit_collective_cost(const DdpFit *fit, DdpCollectiveOp op, guint64 gpus, guint64 nodes, guint64 bytes,
                        DdpAlgorithm algorithm, DdpProtocol protocol, DdpFitCollectiveCost *out)
{
  g_return_val_if_fail(op != DDP_OP_ALL_REDUCE && op < DDP_OP_COUNT, FALSE);
  const Curve *best = NULL, *own_choice = NULL;
  double best_us = 0;
  for (guint i = 0; i < fit->curves->len; i++) {
    const Curve *c = g_ptr_array_index(fit->curves, i);
    if (c->op != op || (guint64)c->ranks != gpus || (guint64)c->nodes != nodes)
      continue;
    if (g_ascii_strcasecmp(c->algorithm, "auto") == 0 || g_ascii_strcasecmp(c->protocol, "auto") == 0) {
      if (g_ascii_strcasecmp(c->algorithm, "auto") == 0 && g_ascii_strcasecmp(c->protocol, "auto") == 0)
        own_choice = c;
      continue;
    }
    if ((algorithm != DDP_ALGO_AUTO && algorithm_enum(c->algorithm) != algorithm) ||
        (protocol != DDP_PROTO_AUTO && protocol_enum(c->protocol) != protocol))
      continue;
    double t = ddp_comm_curve_time_us(c->curve, bytes);
    if (!best || t < best_us) {
      best = c;
      best_us = t;
    }
  }
  if (!best && algorithm == DDP_ALGO_AUTO && protocol == DDP_PROTO_AUTO)
    best = own_choice;
  if (!best)
    return FALSE;
  out->time_us = ddp_comm_curve_time_us(best->curve, bytes);
  /* the curve's own α: its first segment extended to 0 bytes (commcurve.h) */
  out->latency_us = ddp_comm_curve_time_us(best->curve, 0);
  out->algorithm = static_name(best->algorithm);
  out->protocol = static_name(best->protocol);
  out->algo = algorithm_enum(best->algorithm);
  out->proto = protocol_enum(best->protocol);
  return TRUE;
}

/* "AllGather": the collective's name in prose. */
static const char *
op_title(DdpCollectiveOp op)
{
  static const char *const titles[DDP_OP_COUNT] = { "AllReduce", "AllGather", "ReduceScatter", "Broadcast" };
  return titles[op];
}

/**
 * ddp_fit_collective_note:
 * @calibration_name: the database's name as the notes print it
 * @gpus, @nodes: the communicator @op runs on (ranks and servers)
 *
 * Where @op's times come from under @fit for that communicator, in the style of tierfit.h's report:
 * its measured curve there, or the model, and then which counts it was measured at, if any.
 * Returns: (transfer full) (nullable): one line starting "note: "; NULL for one GPU (no call).
 */
char *
ddp_fit_collective_note(const DdpFit *fit, const char *calibration_name, DdpCollectiveOp op, guint64 gpus,
                        guint64 nodes)
{
  g_return_val_if_fail(op != DDP_OP_ALL_REDUCE && op < DDP_OP_COUNT, NULL);
  if (gpus < 2)
    return NULL;
  const char *name = ddp_collective_op_name(op);
  g_autoptr(GString) measured = g_string_new(NULL);
  g_autoptr(GHashTable) seen = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
  guint sizes = 0, counts = 0;
  gint64 lo = 0, hi = 0;
  const DdpCalibCurvePoint *p = (const DdpCalibCurvePoint *)(void *)fit->op_curve_points->data;
  for (guint i = 0; i < fit->op_curve_points->len; i++) {
    if (strcmp(p[i].op, name) != 0)
      continue;
    if ((guint64)p[i].ranks == gpus && (guint64)p[i].nodes == nodes) {
      lo = sizes == 0 ? p[i].bytes : MIN(lo, p[i].bytes);
      hi = MAX(hi, p[i].bytes);
      sizes++;
    }
    /* each measured (ranks, nodes) once, in table order (by variant, nodes, ranks) */
    if (g_hash_table_add(seen, g_strdup_printf("%d/%d", p[i].ranks, p[i].nodes)) && counts++ < 4)
      g_string_append_printf(measured, "%s%d GPUs on %d node%s", counts > 1 ? ", " : "", p[i].ranks, p[i].nodes,
                             p[i].nodes == 1 ? "" : "s");
  }
  if (sizes > 0)
    return g_strdup_printf("note: calibration %s: %s at %" G_GUINT64_FORMAT " GPUs on %" G_GUINT64_FORMAT " node%s "
                           "from its measured curve (%u sizes, %" G_GINT64_FORMAT " to %" G_GINT64_FORMAT " bytes; "
                           "piecewise alpha/beta between them, the end segments beyond)",
                           calibration_name, name, gpus, nodes, nodes == 1 ? "" : "s", sizes, lo, hi);
  if (counts > 0)
    return g_strdup_printf("note: calibration %s measured %s at %s%s, not at %" G_GUINT64_FORMAT " GPUs on %"
                           G_GUINT64_FORMAT " node%s: %s times come from the model", calibration_name, name,
                           measured->str, counts > 4 ? ", ..." : "", gpus, nodes, nodes == 1 ? "" : "s",
                           op_title(op));
  return g_strdup_printf("note: calibration %s has no %s curve: %s times come from the model", calibration_name, name,
                         op_title(op));
}

/* ---- (b) compute lookups ------------------------------------------------------------------- */

/* Kinds to try, in order, for each kind (see the top of the file); -1 ends, COPY = 100. */
#define KIND_COPY 100
static const int kind_fallbacks[DDP_LAYER_KIND_COUNT][4] = {
  [DDP_LAYER_CONV] = { DDP_LAYER_CONV, DDP_LAYER_LINEAR, -1, -1 },
  [DDP_LAYER_LINEAR] = { DDP_LAYER_LINEAR, DDP_LAYER_CONV, -1, -1 },
  [DDP_LAYER_NORM] = { DDP_LAYER_NORM, DDP_LAYER_ELEMENTWISE, KIND_COPY, -1 },
  [DDP_LAYER_EMBEDDING] = { DDP_LAYER_EMBEDDING, DDP_LAYER_ELEMENTWISE, KIND_COPY, -1 },
  [DDP_LAYER_ATTENTION] = { DDP_LAYER_ATTENTION, DDP_LAYER_LINEAR, DDP_LAYER_CONV, -1 },
  [DDP_LAYER_ELEMENTWISE] = { DDP_LAYER_ELEMENTWISE, KIND_COPY, -1, -1 },
  [DDP_LAYER_POOL] = { DDP_LAYER_POOL, DDP_LAYER_ELEMENTWISE, KIND_COPY, -1 },
  [DDP_LAYER_OTHER] = { DDP_LAYER_OTHER, DDP_LAYER_ELEMENTWISE, KIND_COPY, -1 },
};

static const DdpCalibKernelFit *
find_kernel_row(const DdpFit *fit, const char *kind, const char *precision)
{
  for (guint i = 0; i < fit->kernels->len; i++) {
    const DdpCalibKernelFit *f = &g_array_index(fit->kernels, DdpCalibKernelFit, i);
    if (strcmp(f->layer_kind, kind) == 0 && (!precision || strcmp(f->precision, precision) == 0))
      return f;
  }
  return NULL;
}

static void
fill_efficiency(const DdpCalibKernelFit *f, const char *kind, DdpFitEfficiency *out)
{
  out->flops_basis = strcmp(f->basis, "flops") == 0;
  out->rate = f->rate;
  out->efficiency = f->efficiency;
  out->overhead_us = f->overhead_us;
  out->n_points = f->n_points;
  out->rms_rel = f->rms_rel;
  out->measured_as = kind;
  int p = ddp_precision_parse(f->precision);
  out->measured_precision = p >= 0 ? precision_names[p] : "any";
}

/**
 * ddp_fit_efficiency:
 * @out: (out): the fitted rate and efficiency for layers of @kind at @precision
 *
 * Falls back along kind_fallbacks (attention → linear, norm → elementwise → copy, …) and, for
 * memory-bound kinds, tf32 → fp32; matmul kinds fall back fp16 ↔ bf16 (same tensor-core peak)
 * but never across fp32/tf32/half, whose rates differ by up to 15×.
 * Returns: FALSE when nothing measured applies.
 */
gboolean
ddp_fit_efficiency(const DdpFit *fit, DdpLayerKind kind, DdpPrecision precision, DdpFitEfficiency *out)
{
  g_return_val_if_fail(kind < DDP_LAYER_KIND_COUNT && precision < DDP_PRECISION_COUNT, FALSE);
  for (int i = 0; i < 4 && kind_fallbacks[kind][i] >= 0; i++) {
    int k = kind_fallbacks[kind][i];
    if (k == KIND_COPY)
      return ddp_fit_memory(fit, out);
    DdpPrecision tries[2] = { precision, precision };
    if (is_matmul_kind(k)) {
      if (precision == DDP_PRECISION_FP16)
        tries[1] = DDP_PRECISION_BF16;
      else if (precision == DDP_PRECISION_BF16)
        tries[1] = DDP_PRECISION_FP16;
    } else if (precision == DDP_PRECISION_TF32) {
      tries[1] = DDP_PRECISION_FP32;
    }
    for (int j = 0; j < 2; j++) {
      const DdpCalibKernelFit *f = find_kernel_row(fit, kind_names[k], precision_names[tries[j]]);
      if (f) {
        fill_efficiency(f, kind_names[k], out);
        return TRUE;
      }
    }
  }
  return FALSE;
}

/**
 * ddp_fit_memory:
 * @out: (out): device-to-device copy bandwidth (GB/s, bytes read + written) and its fraction of HBM
 * Returns: FALSE when copies were not measured.
 */
gboolean
ddp_fit_memory(const DdpFit *fit, DdpFitEfficiency *out)
{
  const DdpCalibKernelFit *f = find_kernel_row(fit, "copy", NULL);
  if (!f)
    return FALSE;
  fill_efficiency(f, "copy", out);
  return TRUE;
}

/**
 * ddp_fit_apply_compute_options:
 * Overwrites in @options what the calibration measured: matmul_efficiency[p] from the linear
 * (else conv) fit at each precision, memory_efficiency from device copies (else elementwise fp32).
 * Left alone: vector_efficiency (non-matmul FLOPs are never the bound of a measured kernel) and
 * kernel_floor_us — it stands for PyTorch's per-op dispatch as well as the launch, and a bare
 * CUDA probe sees only the launch.  Nothing changes where the efficiency is unknown (NAN).
 */
void
ddp_fit_apply_compute_options(const DdpFit *fit, DdpComputeOptions *options)
{
  for (int p = 0; p < DDP_PRECISION_COUNT; p++) {
    DdpFitEfficiency e;
    if (ddp_fit_efficiency(fit, DDP_LAYER_LINEAR, p, &e) && e.flops_basis && isfinite(e.efficiency) &&
        e.efficiency > 0)
      options->matmul_efficiency[p] = e.efficiency;
  }
  DdpFitEfficiency m;
  if ((ddp_fit_memory(fit, &m) || ddp_fit_efficiency(fit, DDP_LAYER_ELEMENTWISE, DDP_PRECISION_FP32, &m)) &&
      !m.flops_basis && isfinite(m.efficiency) && m.efficiency > 0)
    options->memory_efficiency = m.efficiency;
}

/**
 * ddp_fit_layer_signature:
 * What makes two layers' kernels the same kernels: kind, the shapes of its parameters in
 * registration order, its forward and backward FLOPs and forward bytes per sample — the
 * calibrator derives GEMM/convolution/row shapes from exactly these (calibrate/plan.c).  Names are
 * left out, so the 24 identical blocks of a transformer share one measurement.
 * Example: "linear:1024x1024,1024:4.19482e+06:8.38861e+06:16384" (shapes; forward FLOPs, backward
 * FLOPs and forward bytes per sample, %.6g in the C locale).
 * Returns: (transfer full): g_free().
 */
char *
ddp_fit_layer_signature(const DdpModel *model, guint layer)
{
  g_return_val_if_fail(layer < model->n_layers, NULL);
  const DdpLayer *l = &model->layers[layer];
  GString *s = g_string_new(kind_names[l->kind]);
  g_string_append_c(s, ':');
  for (guint p = 0; p < l->n_params; p++) {
    const DdpParam *param = &model->params[l->first_param + p];
    if (p)
      g_string_append_c(s, ',');
    for (int d = 0; d < param->ndim; d++)
      g_string_append_printf(s, "%s%" G_GINT64_FORMAT, d ? "x" : "", param->shape[d]);
    if (param->ndim == 0)
      g_string_append_c(s, '1');
  }
  char num[G_ASCII_DTOSTR_BUF_SIZE];
  g_string_append_printf(s, ":%s", g_ascii_formatd(num, sizeof num, "%.6g", l->forward_flops));
  g_string_append_printf(s, ":%s", g_ascii_formatd(num, sizeof num, "%.6g", l->backward_flops));
  g_string_append_printf(s, ":%s", g_ascii_formatd(num, sizeof num, "%.6g", l->forward_bytes));
  return g_string_free(s, FALSE);
}

/* Layer time at @batch from the measured batches of one (signature, precision): rows[lo..hi). */
static double
interpolate_batch(const DdpCalibLayerFit *rows, guint n, double batch, gboolean forward)
{
#define T(i) (forward ? rows[i].forward_us : rows[i].backward_us)
  if (batch <= rows[0].batch_size)
    return T(0) * batch / rows[0].batch_size;
  for (guint i = 1; i < n; i++) {
    if (batch <= rows[i].batch_size) {
      double f = (batch - rows[i - 1].batch_size) / (rows[i].batch_size - rows[i - 1].batch_size);
      return T(i - 1) + f * (T(i) - T(i - 1));
    }
  }
  return T(n - 1) * batch / rows[n - 1].batch_size;
#undef T
}

/**
 * ddp_fit_layer_time:
 * @signature: ddp_fit_layer_signature() of the layer
 * @batch: samples per GPU
 * @forward_us: (out) (optional): forward time; < 0 when only backward was measured
 * @backward_us: (out) (optional): backward time (dX + dW, or the layer's one backward kernel)
 *
 * Exact at a measured batch; linear between two measured batches (kernel time is affine in the
 * batch once the GPU is full); outside them proportional to the batch from the nearest one — an
 * overestimate below the smallest measured batch where launch latency dominates, which is why the
 * calibrator's default batches start small.  tf32 lookups of memory-bound kinds read fp32.
 * Returns: FALSE when the signature was not measured at @precision.
 */
gboolean
ddp_fit_layer_time(const DdpFit *fit, const char *signature, DdpPrecision precision, double batch,
                   double *forward_us, double *backward_us)
{
  g_return_val_if_fail(signature && precision < DDP_PRECISION_COUNT && batch > 0, FALSE);
  const char *wanted[2] = { precision_names[precision], NULL };
  if (precision == DDP_PRECISION_TF32) {
    g_autofree char *kind = g_strndup(signature, strcspn(signature, ":"));
    int k = kind_index(kind);
    if (k >= 0 && !is_matmul_kind(k))
      wanted[1] = precision_names[DDP_PRECISION_FP32];
  }
  const DdpCalibLayerFit *rows = (const DdpCalibLayerFit *)(void *)fit->layers->data;
  for (int w = 0; w < 2 && wanted[w]; w++) {
    guint lo = 0, n = 0;
    for (guint i = 0; i < fit->layers->len; i++) {
      if (strcmp(rows[i].signature, signature) == 0 && strcmp(rows[i].precision, wanted[w]) == 0) {
        if (n == 0)
          lo = i;
        n++;
      } else if (n > 0) {
        break; /* sorted: the run of matching rows ended */
      }
    }
    if (n == 0)
      continue;
    if (forward_us)
      *forward_us = rows[lo].forward_us < 0 ? -1 : interpolate_batch(rows + lo, n, batch, TRUE);
    if (backward_us)
      *backward_us = interpolate_batch(rows + lo, n, batch, FALSE);
    return TRUE;
  }
  return FALSE;
}

/* ---- how far a question is from what was measured ------------------------------------------ */

/**
 * ddp_fit_coverage_warnings:
 * @gpu: (nullable): the simulated cluster's GPU
 * @gpus: the simulated job's GPUs
 * @allreduce: the question involves AllReduce (FALSE: `collective --op` of another collective,
 *   which its own curve or the model answers, ddp_fit_collective_note)
 *
 * What a user should know before trusting numbers taken from @fit for this cluster, one line each
 * (issue 12 item 5): the calibration measured another GPU model (or one ddpsim cannot identify), or
 * no multi-GPU AllReduce at all (when @allreduce).  How far past the measured GPU and node counts the job is, and
 * what the answer there assumes, is tierfit.h's report (ddp_tier_fit_report).  Lines start with
 * "warning: ".
 * Returns: (transfer full) (element-type utf8): possibly empty; g_ptr_array_unref().
 */
GPtrArray *
ddp_fit_coverage_warnings(const DdpFit *fit, const DdpGpuSpec *gpu, guint64 gpus, gboolean allreduce)
{
  GPtrArray *lines = g_ptr_array_new_with_free_func(g_free);
  const DdpCalibFit *h = fit->header;
  const char *measured = h->gpu_name && *h->gpu_name ? h->gpu_name : "an unnamed GPU";
  if (gpu && fit->have_spec && strcmp(fit->spec.name, gpu->name) != 0)
    g_ptr_array_add(lines, g_strdup_printf("warning: calibration measured %s (%s) but the cluster's GPU is %s: "
                                           "its measured times are used unchanged", measured, h->gpu_spec, gpu->name));
  else if (gpu && !fit->have_spec)
    g_ptr_array_add(lines, g_strdup_printf("warning: calibration measured %s, which ddpsim cannot match to a "
                                           "built-in GPU: it cannot check that the cluster's %s is the same model",
                                           measured, gpu->name));
  gboolean any = FALSE;
  for (guint i = 0; i < fit->allreduce->len; i++)
    any = any || g_array_index(fit->allreduce, DdpCalibAllreduceFit, i).ranks >= 2;
  if (allreduce && gpus >= 2 && !any)
    g_ptr_array_add(lines, g_strdup("warning: the calibration holds no multi-GPU AllReduce measurement: "
                                    "AllReduce times come from the built-in model"));
  return lines;
}
