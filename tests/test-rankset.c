/* Tests for rankset: drawing the top of the straggler factors' order statistics.  The draws must
 * have the law of drawing every rank and keeping those above the threshold (docs/model.md §7.3):
 * the largest factor against the largest of n direct draws (two-sample KS), the count above a
 * threshold against its expectation Σ_r S(t/s_r), every draw inside its interval, and the
 * previous iteration's factors of undrawn ranks below that iteration's threshold. */
#include "rankset.h"
#include "ks.h"

#include <math.h>

/* @spec parsed, and its law in @law (it must have one).  (transfer full) */
static DdpStragglers *
with_law(const char *spec, DdpStragglerLaw *law)
{
  DdpStragglers *s = ddp_stragglers_parse(spec, NULL);
  g_assert_nonnull(s);
  g_assert_true(ddp_stragglers_law(s, law));
  return s;
}

/* The persistent jitter of @n ranks (σ 0.02) and the positions rankset needs. */
static void
jitter(guint64 n, guint32 seed, double **factor, guint32 **position)
{
  g_autoptr(GRand) rng = g_rand_new_with_seed(seed);
  *factor = g_new(double, n);
  *position = g_new(guint32, n);
  ddp_jitter_factors(0.02, rng, n, *factor, *position);
}

static double
max_draw(const DdpRankSet *set)
{
  guint n;
  const DdpRankDraw *d = ddp_rank_set_draws(set, &n);
  double top = 0;
  for (guint i = 0; i < n; i++)
    top = MAX(top, d[i].scale * d[i].g);
  return top;
}

/* The largest factor of n ranks, from rankset's ladder and from drawing all n (lognormal 0.3, a
 * slow group of 3 at 1.2, with and without jitter): the same law, KS p > 0.01 over 2 000 each. */
static void
test_top_is_max(void)
{
  enum { N = 1000, REPS = 2000 };
  DdpStragglerLaw law;
  g_autoptr(DdpStragglers) s = with_law("lognormal:0.3,slow:3:1.2", &law);
  for (int with_jitter = 0; with_jitter < 2; with_jitter++) {
    g_autofree double *jf = NULL;
    g_autofree guint32 *jp = NULL;
    if (with_jitter)
      jitter(N, 5, &jf, &jp);
    g_autoptr(DdpRankSet) set = ddp_rank_set_new(s, &law, N, jf, jp);
    g_autoptr(GRand) rng = g_rand_new_with_seed(17);
    g_autofree double *fast = g_new(double, REPS), *direct = g_new(double, REPS);
    double factor[N];
    gint64 delay[N];
    for (guint i = 0; i < REPS; i++) {
      ddp_rank_set_next(set);
      ddp_rank_set_top(set, rng);
      fast[i] = max_draw(set);
      ddp_stragglers_sample(s, rng, i, N, factor, delay);
      direct[i] = 0;
      for (guint r = 0; r < N; r++)
        direct[i] = MAX(direct[i], factor[r] * (jf ? jf[r] : 1.0));
    }
    double d = ks_statistic(fast, REPS, direct, REPS);
    g_test_message("jitter %d: KS D=%.4f p=%.3f", with_jitter, d, ks_p_value(d, REPS, REPS));
    g_assert_cmpfloat(ks_p_value(d, REPS, REPS), >, 0.01);
  }
}

/* Lowering to t draws each rank independently with P(s_r·g > t): the count's mean over 400
 * repetitions is Σ_r S(t/s_r) within 4 standard errors, and every draw is above t (normal 0.1,
 * jitter, two slow groups; t from two steps, so the conditional rate p_r of §6.3 is used). */
static void
test_lower_counts(void)
{
  enum { N = 50000, REPS = 400 };
  DdpStragglerLaw law;
  g_autoptr(DdpStragglers) s = with_law("normal:0.1,slow:100:1.1,slow:10:1.05", &law);
  g_autofree double *jf = NULL;
  g_autofree guint32 *jp = NULL;
  jitter(N, 9, &jf, &jp);
  g_autoptr(DdpRankSet) set = ddp_rank_set_new(s, &law, N, jf, jp);
  g_autoptr(GRand) rng = g_rand_new_with_seed(3);
  const double t1 = 1.4, t2 = 1.3;
  double expect = 0, var = 0;
  for (guint64 r = 0; r < N; r++) {
    double p = ddp_straggler_law_tail(&law, t2 / (ddp_stragglers_persistent(s, r) * jf[r]));
    expect += p;
    var += p * (1 - p);
  }
  double sum = 0;
  for (guint i = 0; i < REPS; i++) {
    ddp_rank_set_next(set);
    ddp_rank_set_lower(set, rng, t1);
    guint n1;
    const DdpRankDraw *d = ddp_rank_set_draws(set, &n1);
    for (guint k = 0; k < n1; k++)
      g_assert_cmpfloat(d[k].scale * d[k].g, >, t1);
    ddp_rank_set_lower(set, rng, t2);
    guint n2;
    d = ddp_rank_set_draws(set, &n2);
    for (guint k = n1; k < n2; k++) {
      g_assert_cmpfloat(d[k].scale * d[k].g, >, t2);
      g_assert_cmpfloat(d[k].scale * d[k].g, <=, t1 * (1 + 1e-12));
      g_assert_cmpfloat(d[k].scale, ==, ddp_stragglers_persistent(s, d[k].rank) * jf[d[k].rank]);
    }
    sum += n2;
  }
  double mean = sum / REPS, se = sqrt(var / REPS);
  g_test_message("mean draws %.2f, expected %.2f ± %.2f", mean, expect, se);
  g_assert_cmpfloat(expect, >, 20);   /* the test has something to count */
  g_assert_cmpfloat(fabs(mean - expect), <, 4 * se);
}

/* A rank drawn by name below the threshold; the previous iteration's factors: a drawn rank's own,
 * an undrawn rank's from the law below that iteration's threshold. */
static void
test_take_and_previous(void)
{
  enum { N = 4096 };
  DdpStragglerLaw law;
  g_autoptr(DdpStragglers) s = with_law("lognormal:0.2", &law);
  g_autoptr(DdpRankSet) set = ddp_rank_set_new(s, &law, N, NULL, NULL);
  g_autoptr(GRand) rng = g_rand_new_with_seed(1);
  ddp_rank_set_next(set);
  ddp_rank_set_top(set, rng);
  ddp_rank_set_lower(set, rng, 1.5);
  guint n;
  const DdpRankDraw *d = ddp_rank_set_draws(set, &n);
  guint64 drawn_rank = d[0].rank;
  double drawn_factor = d[0].scale * d[0].g;
  guint64 other = (drawn_rank + 1) % N;
  for (guint k = 0; k < n; k++)
    if (d[k].rank == other)
      other = (other + 1) % N;   /* an undrawn rank (n is a few) */
  ddp_rank_set_take(set, rng, other);
  d = ddp_rank_set_draws(set, &n);
  g_assert_cmpuint(d[n - 1].rank, ==, other);
  g_assert_cmpfloat(d[n - 1].g, <=, 1.5);
  ddp_rank_set_take(set, rng, other);   /* drawn already: nothing new */
  guint again;
  ddp_rank_set_draws(set, &again);
  g_assert_cmpuint(again, ==, n);
  double top = max_draw(set);

  ddp_rank_set_next(set);
  guint64 top_rank;
  g_assert_cmpfloat(ddp_rank_set_previous_top(set, &top_rank), ==, top);
  g_assert_cmpfloat(ddp_rank_set_previous_factor(set, rng, drawn_rank), ==, drawn_factor);
  for (guint64 r = 0; r < N; r += 7)
    g_assert_cmpfloat(ddp_rank_set_previous_factor(set, rng, r), <=, top);
  g_autofree double *all = g_new(double, N), *again_all = g_new(double, N);
  ddp_rank_set_previous_all(set, 5, 1, 1, all);
  ddp_rank_set_previous_all(set, 5, 1, 4, again_all);
  g_assert_cmpmem(all, N * sizeof(double), again_all, N * sizeof(double));   /* any thread count */
  g_assert_cmpfloat(all[drawn_rank], ==, drawn_factor);
  for (guint64 r = 0; r < N; r++)
    g_assert_cmpfloat(all[r], <=, top);
}

/* No random term: one rank per slow group, the one with the largest jitter (it dominates its
 * group), and no thresholds. */
static void
test_law_none(void)
{
  enum { N = 64 };
  DdpStragglerLaw law;
  g_autoptr(DdpStragglers) s = with_law("slow:8:1.5,hiccup:3:1", &law);
  g_assert_cmpint(law.kind, ==, DDP_STRAGGLER_LAW_NONE);
  g_autofree double *jf = NULL;
  g_autofree guint32 *jp = NULL;
  jitter(N, 2, &jf, &jp);
  g_autoptr(DdpRankSet) set = ddp_rank_set_new(s, &law, N, jf, jp);
  g_autoptr(GRand) rng = g_rand_new_with_seed(1);
  ddp_rank_set_next(set);
  ddp_rank_set_top(set, rng);
  ddp_rank_set_lower(set, rng, 0.5);
  guint n;
  const DdpRankDraw *d = ddp_rank_set_draws(set, &n);
  g_assert_cmpuint(n, ==, 2);
  guint64 best[2] = { 0, 8 };
  for (guint64 r = 0; r < N; r++)
    if (jf[r] > jf[best[r >= 8]])
      best[r >= 8] = r;
  g_assert_cmpuint(d[0].rank, ==, best[0]);
  g_assert_cmpuint(d[1].rank, ==, best[1]);
  g_assert_cmpfloat(d[0].scale * d[0].g, ==, 1.5 * jf[best[0]]);
  g_assert_cmpfloat(d[1].scale * d[1].g, ==, jf[best[1]]);
}

int
main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/rankset/top-is-max", test_top_is_max);
  g_test_add_func("/rankset/lower-counts", test_lower_counts);
  g_test_add_func("/rankset/take-and-previous", test_take_and_previous);
  g_test_add_func("/rankset/law-none", test_law_none);
  return g_test_run();
}
