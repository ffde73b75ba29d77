/* commcurve — a measured collective time curve t(S): the time of one AllReduce at each measured
 * size, and the time at any size by interpolation between the measured points.
 *
 * Why a curve and not one α/β pair: real nccl-tests curves switch protocol (LL → LL128 → Simple)
 * and ramp up channels in the mid sizes; a single Hockney line t = α + S/β fitted over 8 B … 8 GiB
 * misses those by 20–60 % in the 64 KiB–16 MiB range (issue 10; docs/calibration.md).  Between two
 * measured sizes the curve is one α/β segment, so it is exact wherever the hardware really is
 * affine over a ×2 step, and exact at every measured size.
 *
 * Interpolation (DDP_COMM_CURVE_LINEAR, the default): t is piecewise linear in S between the
 * measured points — "piecewise α/β".  DDP_COMM_CURVE_LOG_LOG interpolates log t linearly in log S
 * instead (a power law per segment).  On the public curves of ../shared/validation-public, fitted
 * on every other size and evaluated on the others, the linear form had the lower median error on 7
 * of 10 curves (docs/calibration.md has the table); both are kept so the choice stays testable.
 *
 * Extrapolation beyond the measured range uses α/β from the end segments:
 *   above the largest size S_n: slope b = (t_n − t_{n−1})/(S_n − S_{n−1}) (when noise makes it ≤ 0,
 *     b = t_n/S_n: constant algbw), t(S) = t_n + b·(S − S_n);
 *   below the smallest size S_0: b = (t_1 − t_0)/(S_1 − S_0) clamped at ≥ 0, α = t_0 − b·S_0;
 *     when α < 0 (a segment steeper than proportional) the line through the origin, t = t_0·S/S_0.
 * A one-point curve is flat below its point and proportional above it.
 */
#ifndef DDP_COMMCURVE_H
#define DDP_COMMCURVE_H

#include <glib.h>

#define DDP_COMM_CURVE_ERROR (ddp_comm_curve_error_quark())
GQuark ddp_comm_curve_error_quark(void);
typedef enum {
  DDP_COMM_CURVE_ERROR_EMPTY,   /* no point with bytes > 0 and a finite time > 0 */
} DdpCommCurveError;

typedef enum {
  DDP_COMM_CURVE_LINEAR,        /* piecewise α/β: t linear in S between measured points */
  DDP_COMM_CURVE_LOG_LOG,       /* log t linear in log S between measured points */
} DdpCommCurveInterpolation;

typedef struct _DdpCommCurve DdpCommCurve;

DdpCommCurve *ddp_comm_curve_new(const gint64 *bytes, const double *time_us, guint n, GError **error);
void ddp_comm_curve_free(DdpCommCurve *curve);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(DdpCommCurve, ddp_comm_curve_free)

void ddp_comm_curve_set_interpolation(DdpCommCurve *curve, DdpCommCurveInterpolation mode);
/* Time of one collective of @bytes, µs (≥ 0). */
double ddp_comm_curve_time_us(const DdpCommCurve *curve, guint64 bytes);
/* The measured points after merging repeated sizes: *n set, arrays owned by @curve. */
const gint64 *ddp_comm_curve_bytes(const DdpCommCurve *curve, guint *n);
const double *ddp_comm_curve_times(const DdpCommCurve *curve, guint *n);

#endif
