/* ks — the two-sample Kolmogorov–Smirnov test for the tests that compare distributions
 * (test-ddp's order-statistics path against the per-rank pass, test-rankset's draws). */
#ifndef DDP_TEST_KS_H
#define DDP_TEST_KS_H

#include <glib.h>

double ks_statistic(double *a, guint na, double *b, guint nb);
double ks_p_value(double d, guint na, guint nb);

#endif
