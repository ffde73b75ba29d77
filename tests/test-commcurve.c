/* Tests for commcurve: exact at measured sizes, piecewise-linear and log-log interpolation,
 * extrapolation from the end segments, merging of repeated sizes, and the empty curve.
 * Expected values are derived by hand in the comments. */
#include "commcurve.h"

#include <math.h>

static void
assert_close(double got, double expected)
{
  if (fabs(got - expected) > 1e-9 * MAX(1.0, fabs(expected)))
    g_error("got %.12g, expected %.12g", got, expected);
}

/* Three points: (1000 B, 10 µs), (2000 B, 12 µs), (4000 B, 20 µs), given out of order. */
static DdpCommCurve *
three_points(void)
{
  const gint64 bytes[] = { 4000, 1000, 2000 };
  const double t[] = { 20, 10, 12 };
  g_autoptr(GError) error = NULL;
  DdpCommCurve *c = ddp_comm_curve_new(bytes, t, 3, &error);
  g_assert_no_error(error);
  return c;
}

static void
test_exact_and_linear(void)
{
  g_autoptr(DdpCommCurve) c = three_points();
  assert_close(ddp_comm_curve_time_us(c, 1000), 10);
  assert_close(ddp_comm_curve_time_us(c, 2000), 12);
  assert_close(ddp_comm_curve_time_us(c, 4000), 20);
  /* 1500: halfway in [1000, 2000] → 11;  3000: halfway in [2000, 4000] → 16 */
  assert_close(ddp_comm_curve_time_us(c, 1500), 11);
  assert_close(ddp_comm_curve_time_us(c, 3000), 16);
  guint n;
  const gint64 *b = ddp_comm_curve_bytes(c, &n);
  g_assert_cmpuint(n, ==, 3);
  g_assert_cmpint(b[0], ==, 1000);
  g_assert_cmpint(b[2], ==, 4000);
}

static void
test_log_log(void)
{
  g_autoptr(DdpCommCurve) c = three_points();
  ddp_comm_curve_set_interpolation(c, DDP_COMM_CURVE_LOG_LOG);
  assert_close(ddp_comm_curve_time_us(c, 2000), 12);
  /* 3000 in [2000, 4000]: exponent k = ln(20/12)/ln 2 = 0.736966; 12·1.5^k = 12·1.348259 = 16.17910 */
  double k = log(20.0 / 12.0) / log(2.0);
  assert_close(ddp_comm_curve_time_us(c, 3000), 12 * pow(1.5, k));
  g_assert_cmpfloat(fabs(ddp_comm_curve_time_us(c, 3000) - 16.17910), <, 1e-4);
}

static void
test_extrapolation(void)
{
  g_autoptr(DdpCommCurve) c = three_points();
  /* above: last segment slope (20 − 12)/2000 = 0.004 µs/B; 8000 B → 20 + 0.004·4000 = 36 */
  assert_close(ddp_comm_curve_time_us(c, 8000), 36);
  /* below: first segment slope 2/1000 = 0.002, α = 10 − 2 = 8; 500 B → 9; 0 B → α = 8 */
  assert_close(ddp_comm_curve_time_us(c, 500), 9);
  assert_close(ddp_comm_curve_time_us(c, 0), 8);

  /* A first segment steeper than proportional ((100, 1), (200, 5): α = 1 − 4 = −3 < 0) goes
   * through the origin instead: 50 B → 1·50/100 = 0.5 */
  const gint64 b2[] = { 100, 200 };
  const double t2[] = { 1, 5 };
  g_autoptr(DdpCommCurve) steep = ddp_comm_curve_new(b2, t2, 2, NULL);
  assert_close(ddp_comm_curve_time_us(steep, 50), 0.5);

  /* A last segment that falls (noise: (100, 10), (200, 9)) extrapolates at constant algbw:
   * b = 9/200; 400 B → 9 + 0.045·200 = 18.  Below: slope clamped to 0 → flat 10. */
  const double t3[] = { 10, 9 };
  g_autoptr(DdpCommCurve) falling = ddp_comm_curve_new(b2, t3, 2, NULL);
  assert_close(ddp_comm_curve_time_us(falling, 400), 18);
  assert_close(ddp_comm_curve_time_us(falling, 10), 10);

  /* One point: flat below, proportional above */
  const gint64 b1[] = { 1000 };
  const double t1[] = { 50 };
  g_autoptr(DdpCommCurve) one = ddp_comm_curve_new(b1, t1, 1, NULL);
  assert_close(ddp_comm_curve_time_us(one, 10), 50);
  assert_close(ddp_comm_curve_time_us(one, 3000), 150);
}

static void
test_merge_and_empty(void)
{
  /* Repeated size averaged: (1000: 10 and 14 → 12), bad points dropped */
  const gint64 bytes[] = { 1000, 1000, 2000, 0, 3000 };
  const double t[] = { 10, 14, 20, 5, NAN };
  g_autoptr(GError) error = NULL;
  g_autoptr(DdpCommCurve) c = ddp_comm_curve_new(bytes, t, 5, &error);
  g_assert_no_error(error);
  guint n;
  const double *times = ddp_comm_curve_times(c, &n);
  g_assert_cmpuint(n, ==, 2);
  assert_close(times[0], 12);
  assert_close(times[1], 20);

  const gint64 none_b[] = { 0, 100 };
  const double none_t[] = { 1, -1 };
  g_assert_null(ddp_comm_curve_new(none_b, none_t, 2, &error));
  g_assert_error(error, DDP_COMM_CURVE_ERROR, DDP_COMM_CURVE_ERROR_EMPTY);
  g_clear_error(&error);
  g_assert_null(ddp_comm_curve_new(NULL, NULL, 0, &error));
  g_assert_error(error, DDP_COMM_CURVE_ERROR, DDP_COMM_CURVE_ERROR_EMPTY);
}

int
main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/commcurve/exact-and-linear", test_exact_and_linear);
  g_test_add_func("/commcurve/log-log", test_log_log);
  g_test_add_func("/commcurve/extrapolation", test_extrapolation);
  g_test_add_func("/commcurve/merge-and-empty", test_merge_and_empty);
  return g_test_run();
}
