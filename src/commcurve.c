/* commcurve — interpolation of a measured collective time curve (see commcurve.h for the model,
 * the interpolation choice and the extrapolation rule).
 *
 * Points are kept sorted by size in two parallel arrays; a lookup is a binary search (curves hold
 * ~30 points, one per ×2 step of nccl-tests' sweep, and the simulator asks once per bucket).
 */
#include "commcurve.h"

#include <math.h>
#include <stdlib.h>

G_DEFINE_QUARK(ddp-comm-curve-error-quark, ddp_comm_curve_error)

struct _DdpCommCurve {
  guint n;
  gint64 *bytes;      /* strictly increasing, > 0 */
  double *time_us;    /* > 0 */
  DdpCommCurveInterpolation mode;
};

typedef struct {
  gint64 bytes;
  double time_us;
} Point;

static int
compare_points(const void *pa, const void *pb)
{
  const Point *a = pa, *b = pb;
  return (a->bytes > b->bytes) - (a->bytes < b->bytes);
}

/**
 * ddp_comm_curve_new:
 * @bytes: (array length=n): sizes, in any order; repeated sizes are averaged
 * @time_us: (array length=n): measured times; points with bytes ≤ 0 or a time that is not a
 *   finite positive number are ignored
 *
 * Returns: (transfer full): the curve, or NULL with DDP_COMM_CURVE_ERROR_EMPTY when no point is
 * usable.
 */
DdpCommCurve *
ddp_comm_curve_new(const gint64 *bytes, const double *time_us, guint n, GError **error)
{
  g_autofree Point *points = g_new(Point, MAX(n, 1));
  guint used = 0;
  for (guint i = 0; i < n; i++)
    if (bytes[i] > 0 && isfinite(time_us[i]) && time_us[i] > 0)
      points[used++] = (Point){ bytes[i], time_us[i] };
  if (used == 0) {
    g_set_error(error, DDP_COMM_CURVE_ERROR, DDP_COMM_CURVE_ERROR_EMPTY, "no measured size with a positive time");
    return NULL;
  }
  /* qsort is not stable, but equal sizes are averaged, so their order does not matter */
  qsort(points, used, sizeof(Point), compare_points);
  DdpCommCurve *c = g_new0(DdpCommCurve, 1);
  c->bytes = g_new(gint64, used);
  c->time_us = g_new(double, used);
  c->mode = DDP_COMM_CURVE_LINEAR;
  for (guint i = 0; i < used;) {
    guint j = i;
    double sum = 0;
    for (; j < used && points[j].bytes == points[i].bytes; j++)
      sum += points[j].time_us;
    c->bytes[c->n] = points[i].bytes;
    c->time_us[c->n] = sum / (j - i);
    c->n++;
    i = j;
  }
  return c;
}

void
ddp_comm_curve_free(DdpCommCurve *curve)
{
  if (!curve)
    return;
  g_free(curve->bytes);
  g_free(curve->time_us);
  g_free(curve);
}

void
ddp_comm_curve_set_interpolation(DdpCommCurve *curve, DdpCommCurveInterpolation mode)
{
  curve->mode = mode;
}

const gint64 *
ddp_comm_curve_bytes(const DdpCommCurve *curve, guint *n)
{
  *n = curve->n;
  return curve->bytes;
}

const double *
ddp_comm_curve_times(const DdpCommCurve *curve, guint *n)
{
  *n = curve->n;
  return curve->time_us;
}

/* Slope (µs per byte) of the segment between points i and i+1. */
static double
segment_slope(const DdpCommCurve *c, guint i)
{
  return (c->time_us[i + 1] - c->time_us[i]) / (double)(c->bytes[i + 1] - c->bytes[i]);
}

/**
 * ddp_comm_curve_time_us:
 * Returns: the interpolated (or extrapolated, commcurve.h) time of @bytes; 0 bytes gives the
 * extrapolated latency α of the first segment.
 */
double
ddp_comm_curve_time_us(const DdpCommCurve *c, guint64 bytes)
{
  double s = (double)bytes;
  guint last = c->n - 1;
  if (c->n == 1)
    return s <= (double)c->bytes[0] ? c->time_us[0] : c->time_us[0] * s / (double)c->bytes[0];
  if (s <= (double)c->bytes[0]) {
    double b = MAX(0.0, segment_slope(c, 0));
    double alpha = c->time_us[0] - b * (double)c->bytes[0];
    return alpha >= 0 ? alpha + b * s : c->time_us[0] * s / (double)c->bytes[0];
  }
  if (s >= (double)c->bytes[last]) {
    double b = segment_slope(c, last - 1);
    if (!(b > 0))
      b = c->time_us[last] / (double)c->bytes[last];
    return c->time_us[last] + b * (s - (double)c->bytes[last]);
  }
  /* the segment [lo, lo+1] holding s: bytes[lo] < s ≤ bytes[lo+1] */
  guint lo = 0, hi = last;
  while (hi - lo > 1) {
    guint mid = lo + (hi - lo) / 2;
    if ((double)c->bytes[mid] < s)
      lo = mid;
    else
      hi = mid;
  }
  double s0 = (double)c->bytes[lo], s1 = (double)c->bytes[hi];
  double t0 = c->time_us[lo], t1 = c->time_us[hi];
  if (c->mode == DDP_COMM_CURVE_LOG_LOG)
    return exp(log(t0) + (log(s) - log(s0)) * (log(t1) - log(t0)) / (log(s1) - log(s0)));
  return t0 + (s - s0) * (t1 - t0) / (s1 - s0);
}
