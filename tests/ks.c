/* ks — see ks.h.  Statistic and asymptotic p-value as in Numerical Recipes' kstwo (Press et al.,
 * 3rd ed., §14.3.3): the Kolmogorov distribution with Stephens' small-sample correction. */
#include "ks.h"

#include <math.h>
#include <stdlib.h>

static int
compare_double(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* D = sup |F_a − F_b| over the pooled values (ties stepped over together, so equal samples give
 * 0).  Sorts both arrays in place. */
double
ks_statistic(double *a, guint na, double *b, guint nb)
{
  qsort(a, na, sizeof(double), compare_double);
  qsort(b, nb, sizeof(double), compare_double);
  double d = 0;
  guint i = 0, j = 0;
  while (i < na && j < nb) {
    double x = MIN(a[i], b[j]);
    while (i < na && a[i] == x)
      i++;
    while (j < nb && b[j] == x)
      j++;
    d = MAX(d, fabs((double)i / na - (double)j / nb));
  }
  return d;
}

/* P(D ≥ d) from Q(λ) = 2 Σ_{j≥1} (−1)^{j−1} e^{−2j²λ²} at λ = (√m + 0.12 + 0.11/√m)·d with
 * m = na·nb/(na + nb).  Conservative where the samples have ties. */
double
ks_p_value(double d, guint na, guint nb)
{
  double m = sqrt((double)na * nb / (na + nb));
  double lambda = (m + 0.12 + 0.11 / m) * d;
  if (lambda < 0.2)
    return 1.0;   /* the series converges slowly there; Q(0.2) = 1 − 6e-23 */
  double sum = 0, sign = 1;
  for (int j = 1; j <= 100; j++, sign = -sign)
    sum += sign * exp(-2.0 * j * j * lambda * lambda);
  return CLAMP(2 * sum, 0.0, 1.0);
}
