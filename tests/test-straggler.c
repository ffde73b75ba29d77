/* Tests for the straggler models: spec parsing (every error path by domain, code and message),
 * determinism and the documented order of random draws, exact slow ranks and hiccup counts, and
 * the sample statistics of normal and lognormal, with bounds derived in comments; the per-block
 * streams (any thread count, same numbers) and the factor terms as one law (docs/model.md §7.1):
 * which specs reduce, tails against z tables, conditional draws. */
#include "straggler.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- parsing ----------------------------------------------------------------------------- */

typedef struct {
  const char *spec;
  const char *canonical;
  gboolean none;
} ParseOk;

static const ParseOk parse_ok[] = {
  { NULL, "none", TRUE },
  { "", "none", TRUE },
  { "   ", "none", TRUE },
  { "none", "none", TRUE },
  { "none,none", "none", TRUE },
  { "normal:0.05", "normal:0.05", FALSE },
  { "normal:0", "normal:0", FALSE },
  { "lognormal:0.3", "lognormal:0.3", FALSE },
  { "slow:8:1.2", "slow:8:1.2", FALSE },
  { "slow:1:0.5", "slow:1:0.5", FALSE },          /* a faster rank is odd but allowed */
  { "hiccup:100:50", "hiccup:100:50", FALSE },
  { "hiccup:1:0.25", "hiccup:1:0.25", FALSE },
  { " normal:5e-2 , slow:8:1.20 ", "normal:0.05,slow:8:1.2", FALSE },
  { "none,lognormal:1,hiccup:10:2", "lognormal:1,hiccup:10:2", FALSE },
  { "normal:0.1,normal:0.2", "normal:0.1,normal:0.2", FALSE },
  { "normal:0.1000000000000000055511151231257827", "normal:0.1", FALSE },
  { "slow:3:1.0000000000000002", "slow:3:1.0000000000000002", FALSE },   /* needs 17 digits */
};

static void
test_parse_ok(void)
{
  for (gsize i = 0; i < G_N_ELEMENTS(parse_ok); i++) {
    const ParseOk *c = &parse_ok[i];
    g_autoptr(GError) error = NULL;
    g_autoptr(DdpStragglers) s = ddp_stragglers_parse(c->spec, &error);
    g_assert_no_error(error);
    g_assert_nonnull(s);
    g_autofree char *text = ddp_stragglers_to_string(s);
    g_assert_cmpstr(text, ==, c->canonical);
    g_assert_cmpint(ddp_stragglers_is_none(s), ==, c->none);
    g_assert_cmpint(ddp_stragglers_is_uniform(s), ==, c->none);   /* every kind varies by rank */
    /* the canonical text parses to the same model */
    g_autoptr(DdpStragglers) again = ddp_stragglers_parse(text, &error);
    g_assert_no_error(error);
    g_autofree char *text2 = ddp_stragglers_to_string(again);
    g_assert_cmpstr(text2, ==, text);
  }
}

typedef struct {
  const char *spec;
  const char *message;
} ParseBad;

#define EMPTY_TERM "empty term (expected none, normal:SIGMA, lognormal:SIGMA, slow:K:FACTOR or hiccup:EVERY:MS)"

static const ParseBad parse_bad[] = {
  { "normal:x", "--stragglers: \"normal:x\": SIGMA must be a number from 0 to 10" },
  { "normal:-0.1", "--stragglers: \"normal:-0.1\": SIGMA must be a number from 0 to 10" },
  { "normal:0.1x", "--stragglers: \"normal:0.1x\": SIGMA must be a number from 0 to 10" },
  { "normal:", "--stragglers: \"normal:\": SIGMA must be a number from 0 to 10" },
  { "normal: 0.1", "--stragglers: \"normal: 0.1\": SIGMA must be a number from 0 to 10" },
  { "normal:nan", "--stragglers: \"normal:nan\": SIGMA must be a number from 0 to 10" },
  { "normal:inf", "--stragglers: \"normal:inf\": SIGMA must be a number from 0 to 10" },
  { "normal", "--stragglers: \"normal\": expected normal:SIGMA" },
  { "normal:0.1:2", "--stragglers: \"normal:0.1:2\": expected normal:SIGMA" },
  { "lognormal:-1", "--stragglers: \"lognormal:-1\": SIGMA must be a number from 0 to 2" },
  { "lognormal", "--stragglers: \"lognormal\": expected lognormal:SIGMA" },
  { "slow:0:2", "--stragglers: \"slow:0:2\": K must be a whole number from 1 to 16777216" },
  { "slow:-1:2", "--stragglers: \"slow:-1:2\": K must be a whole number from 1 to 16777216" },
  { "slow:2.5:2", "--stragglers: \"slow:2.5:2\": K must be a whole number from 1 to 16777216" },
  { "slow:2:0", "--stragglers: \"slow:2:0\": FACTOR must be a number from 0.001 to 1000" },
  { "slow:2:-1.5", "--stragglers: \"slow:2:-1.5\": FACTOR must be a number from 0.001 to 1000" },
  { "slow:2", "--stragglers: \"slow:2\": expected slow:K:FACTOR" },
  { "slow:2:1.5:7", "--stragglers: \"slow:2:1.5:7\": expected slow:K:FACTOR" },
  { "hiccup:0:5", "--stragglers: \"hiccup:0:5\": EVERY must be a whole number from 1 to 1000000000" },
  { "hiccup:x:5", "--stragglers: \"hiccup:x:5\": EVERY must be a whole number from 1 to 1000000000" },
  { "hiccup:10:-1", "--stragglers: \"hiccup:10:-1\": MS must be a number from 0 to 1e9" },
  { "hiccup:10:2e9", "--stragglers: \"hiccup:10:2e9\": MS must be a number from 0 to 1e9" },
  { "hiccup:10", "--stragglers: \"hiccup:10\": expected hiccup:EVERY:MS" },
  { "fast:2", "--stragglers: \"fast:2\": unknown kind \"fast\" (expected none, normal, lognormal, slow or hiccup)" },
  { "Normal:0.1", "--stragglers: \"Normal:0.1\": unknown kind \"Normal\" (expected none, normal, lognormal, slow or hiccup)" },
  { "none:1", "--stragglers: \"none:1\": expected none" },
  { "normal:0.1,", "--stragglers: \"\": " EMPTY_TERM },
  { "normal:0.1,,slow:2:2", "--stragglers: \"\": " EMPTY_TERM },
  /* only the bad term is named */
  { "normal:0.1, slow:0:2 ,hiccup:5:1", "--stragglers: \"slow:0:2\": K must be a whole number from 1 to 16777216" },
};

static void
test_parse_errors(void)
{
  for (gsize i = 0; i < G_N_ELEMENTS(parse_bad); i++) {
    g_autoptr(GError) error = NULL;
    g_autoptr(DdpStragglers) s = ddp_stragglers_parse(parse_bad[i].spec, &error);
    g_assert_null(s);
    g_assert_error(error, DDP_STRAGGLER_ERROR, DDP_STRAGGLER_ERROR_PARSE);
    g_assert_cmpstr(error->message, ==, parse_bad[i].message);
    g_assert_null(strchr(error->message, '\n'));
  }
}

/* ---- sampling ---------------------------------------------------------------------------- */

static DdpStragglers *
parse(const char *spec)
{
  g_autoptr(GError) error = NULL;
  DdpStragglers *s = ddp_stragglers_parse(spec, &error);
  g_assert_no_error(error);
  return s;
}

/* none and slow draw nothing: the generator is where a fresh one with the same seed is. */
static void
test_no_draws(void)
{
  static const char *const specs[] = { "none", "slow:3:1.5", "hiccup:1000:5" };
  double factor[8];
  gint64 delay[8];
  for (gsize i = 0; i < G_N_ELEMENTS(specs); i++) {
    g_autoptr(DdpStragglers) s = parse(specs[i]);
    g_autoptr(GRand) rng = g_rand_new_with_seed(7);
    g_autoptr(GRand) fresh = g_rand_new_with_seed(7);
    for (guint64 it = 0; it < 10; it++) {   /* hiccup:1000 hits iteration 999 only */
      ddp_stragglers_sample(s, rng, it, 8, factor, delay);
      for (int r = 0; r < 8; r++) {
        g_assert_cmpfloat(factor[r], ==, i == 1 && r < 3 ? 1.5 : 1.0);
        g_assert_cmpint(delay[r], ==, 0);
      }
    }
    g_assert_cmpuint(g_rand_int(rng), ==, g_rand_int(fresh));
  }
}

/* The draws follow the order documented in straggler.c: terms in spec order, one Box–Muller z
 * per rank (u1, u2 successive g_rand_double(); z = sqrt(-2 ln(1-u1)) cos(2π u2)), then one
 * g_rand_int_range(0, n) per hiccup. */
static double
box_muller(GRand *rng)
{
  double u1 = g_rand_double(rng);
  double u2 = g_rand_double(rng);
  return sqrt(-2.0 * log(1.0 - u1)) * cos(2.0 * G_PI * u2);
}

static void
test_draw_order(void)
{
  enum { N = 5 };
  g_autoptr(DdpStragglers) s = parse("normal:0.2,lognormal:0.3,hiccup:1:1");
  g_autoptr(GRand) rng = g_rand_new_with_seed(2024);
  g_autoptr(GRand) twin = g_rand_new_with_seed(2024);
  double factor[N], expect[N];
  gint64 delay[N], expect_delay[N] = { 0 };
  ddp_stragglers_sample(s, rng, 0, N, factor, delay);
  for (int r = 0; r < N; r++) {
    double f = 1.0 + 0.2 * box_muller(twin);
    expect[r] = f < 0.1 ? 0.1 : f;
  }
  for (int r = 0; r < N; r++)
    expect[r] *= exp(0.3 * box_muller(twin));
  expect_delay[g_rand_int_range(twin, 0, N)] += 1000000;
  for (int r = 0; r < N; r++) {
    g_assert_cmpfloat_with_epsilon(factor[r], expect[r], 1e-12);
    g_assert_cmpint(delay[r], ==, expect_delay[r]);
  }
  g_assert_cmpuint(g_rand_int(rng), ==, g_rand_int(twin));   /* nothing more was drawn */
}

static void
run_iterations(const char *spec, guint32 seed, guint iterations, guint ranks, double *factor, gint64 *delay)
{
  g_autoptr(DdpStragglers) s = parse(spec);
  g_autoptr(GRand) rng = g_rand_new_with_seed(seed);
  for (guint it = 0; it < iterations; it++)
    ddp_stragglers_sample(s, rng, it, ranks, factor + (gsize)it * ranks, delay + (gsize)it * ranks);
}

static void
test_determinism(void)
{
  enum { IT = 12, R = 64 };
  const char *spec = "normal:0.1,lognormal:0.2,slow:2:1.5,hiccup:3:5";
  g_autofree double *fa = g_new(double, IT * R), *fb = g_new(double, IT * R), *fc = g_new(double, IT * R);
  g_autofree gint64 *da = g_new(gint64, IT * R), *db = g_new(gint64, IT * R), *dc = g_new(gint64, IT * R);
  run_iterations(spec, 42, IT, R, fa, da);
  run_iterations(spec, 42, IT, R, fb, db);
  run_iterations(spec, 43, IT, R, fc, dc);
  g_assert_cmpmem(fa, IT * R * sizeof(double), fb, IT * R * sizeof(double));
  g_assert_cmpmem(da, IT * R * sizeof(gint64), db, IT * R * sizeof(gint64));
  g_assert_true(memcmp(fa, fc, IT * R * sizeof(double)) != 0);
}

static void
test_slow(void)
{
  double factor[8];
  gint64 delay[8];
  g_autoptr(GRand) rng = g_rand_new_with_seed(1);
  /* ranks 0..2 (say the first three GPUs of node 0) 1.5×, the rest untouched */
  g_autoptr(DdpStragglers) three = parse("slow:3:1.5");
  ddp_stragglers_sample(three, rng, 0, 8, factor, delay);
  for (int r = 0; r < 8; r++) {
    g_assert_cmpfloat(factor[r], ==, r < 3 ? 1.5 : 1.0);
    g_assert_cmpint(delay[r], ==, 0);
  }
  /* K beyond the rank count: every rank */
  g_autoptr(DdpStragglers) all = parse("slow:100:2");
  ddp_stragglers_sample(all, rng, 5, 4, factor, delay);
  for (int r = 0; r < 4; r++)
    g_assert_cmpfloat(factor[r], ==, 2.0);
  /* terms multiply: rank 0 gets 2 × 3, rank 1 gets 2, rank 2 nothing */
  g_autoptr(DdpStragglers) both = parse("slow:2:2,slow:1:3");
  ddp_stragglers_sample(both, rng, 0, 3, factor, delay);
  g_assert_cmpfloat(factor[0], ==, 6.0);
  g_assert_cmpfloat(factor[1], ==, 2.0);
  g_assert_cmpfloat(factor[2], ==, 1.0);
}

/* A slow term on top of a random one multiplies the same draws (slow draws nothing). */
static void
test_combine_multiplies(void)
{
  enum { R = 16 };
  double plain[R], combined[R];
  gint64 delay[R];
  run_iterations("normal:0.1", 9, 1, R, plain, delay);
  run_iterations("normal:0.1,slow:1:2", 9, 1, R, combined, delay);
  g_assert_cmpfloat(combined[0], ==, 2.0 * plain[0]);
  for (int r = 1; r < R; r++)
    g_assert_cmpfloat(combined[r], ==, plain[r]);
}

static void
test_hiccup(void)
{
  enum { IT = 100, R = 16 };
  g_autofree double *factor = g_new(double, IT * R);
  g_autofree gint64 *delay = g_new(gint64, IT * R);
  /* every 4th iteration (3, 7, …, 99): 25 hiccups of 2.5 ms = 2 500 000 ns, one rank each */
  run_iterations("hiccup:4:2.5", 3, IT, R, factor, delay);
  guint hiccups = 0;
  for (guint it = 0; it < IT; it++) {
    guint hit = 0;
    for (guint r = 0; r < R; r++) {
      g_assert_cmpfloat(factor[it * R + r], ==, 1.0);
      if (delay[it * R + r] != 0) {
        g_assert_cmpint(delay[it * R + r], ==, 2500000);
        hit++;
      }
    }
    g_assert_cmpuint(hit, ==, it % 4 == 3 ? 1 : 0);
    hiccups += hit;
  }
  g_assert_cmpuint(hiccups, ==, 25);

  /* two hiccup terms add: 2 ms in odd iterations, on one rank or split over two */
  run_iterations("hiccup:2:1,hiccup:2:1", 4, IT, R, factor, delay);
  for (guint it = 0; it < IT; it++) {
    gint64 sum = 0;
    for (guint r = 0; r < R; r++)
      sum += delay[it * R + r];
    g_assert_cmpint(sum, ==, it % 2 == 1 ? 2000000 : 0);
  }

  /* MS rounds to whole ns: 0.0000016 ms = 1.6 ns -> 2 */
  run_iterations("hiccup:1:0.0000016", 5, 1, R, factor, delay);
  gint64 sum = 0;
  for (guint r = 0; r < R; r++)
    sum += delay[r];
  g_assert_cmpint(sum, ==, 2);
}

/* The hit rank is uniform: 16 000 hiccups over 16 ranks, 1 000 expected per rank, binomial sd
 * sqrt(16000 · 1/16 · 15/16) = 30.6; ±200 is 6.5 sd. */
static void
test_hiccup_uniform(void)
{
  enum { IT = 16000, R = 16 };
  g_autoptr(DdpStragglers) s = parse("hiccup:1:1");
  g_autoptr(GRand) rng = g_rand_new_with_seed(11);
  double factor[R];
  gint64 delay[R];
  guint count[R] = { 0 };
  for (guint it = 0; it < IT; it++) {
    ddp_stragglers_sample(s, rng, it, R, factor, delay);
    for (guint r = 0; r < R; r++)
      count[r] += delay[r] != 0;
  }
  for (guint r = 0; r < R; r++)
    g_assert_cmpint(ABS((int)count[r] - 1000), <, 200);
}

static int
compare_double(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* normal:0.1 over N = 1000 ranks × 100 iterations = 1e5 factors 1 + 0.1 z (the 0.1 floor needs
 * z <= -9: probability ~1e-19, never).  Mean 1, sd 0.1: the sample mean has sd 0.1/sqrt(1e5) =
 * 3.2e-4, so |mean - 1| < 2e-3 is over 6 sd.  The sample variance of a normal has sd
 * σ²·sqrt(2/(N-1)) = 0.01 · 4.5e-3 = 4.5e-5, so |var - 0.01| < 3e-4 is over 6 sd. */
static void
test_normal_moments(void)
{
  enum { IT = 100, R = 1000, N = IT * R };
  g_autofree double *factor = g_new(double, N);
  g_autofree gint64 *delay = g_new(gint64, N);
  run_iterations("normal:0.1", 1, IT, R, factor, delay);
  double sum = 0, sq = 0;
  for (int i = 0; i < N; i++)
    sum += factor[i];
  double mean = sum / N;
  for (int i = 0; i < N; i++)
    sq += (factor[i] - mean) * (factor[i] - mean);
  double var = sq / (N - 1);
  g_assert_cmpfloat_with_epsilon(mean, 1.0, 2e-3);
  g_assert_cmpfloat_with_epsilon(var, 0.01, 3e-4);
}

/* normal:2: 1 + 2z < 0.1 for z < -0.45, a third of the draws, all clamped to exactly 0.1. */
static void
test_normal_floor(void)
{
  enum { IT = 10, R = 1000, N = IT * R };
  g_autofree double *factor = g_new(double, N);
  g_autofree gint64 *delay = g_new(gint64, N);
  run_iterations("normal:2", 1, IT, R, factor, delay);
  int floored = 0;
  for (int i = 0; i < N; i++) {
    g_assert_cmpfloat(factor[i], >=, 0.1);
    floored += factor[i] == 0.1;
  }
  /* P(z < -0.45) = 0.326; binomial sd sqrt(1e4 · 0.326 · 0.674) = 47, so 3260 ± 300 */
  g_assert_cmpint(ABS(floored - 3264), <, 300);
}

/* lognormal:0.5 over N = 1e5 factors exp(0.5 z).  Median 1: the sample median has sd
 * 1/(2 f(1) sqrt(N)) with the density at the median f(1) = 1/(0.5 sqrt(2π)) = 0.798, i.e. 1.98e-3,
 * so |median - 1| < 0.012 is 6 sd.  Mean exp(σ²/2) = exp(0.125) = 1.13315, sd of the sample mean
 * sqrt((e^{σ²} - 1) e^{σ²} / N) = 1.91e-3, so ±0.012 is 6 sd; mean > median is the right tail. */
static void
test_lognormal_median(void)
{
  enum { IT = 100, R = 1000, N = IT * R };
  g_autofree double *factor = g_new(double, N);
  g_autofree gint64 *delay = g_new(gint64, N);
  run_iterations("lognormal:0.5", 1, IT, R, factor, delay);
  double sum = 0;
  for (int i = 0; i < N; i++) {
    g_assert_cmpfloat(factor[i], >, 0);
    sum += factor[i];
  }
  qsort(factor, N, sizeof(double), compare_double);
  double median = (factor[N / 2 - 1] + factor[N / 2]) / 2;
  g_assert_cmpfloat_with_epsilon(median, 1.0, 0.012);
  g_assert_cmpfloat_with_epsilon(sum / N, exp(0.125), 0.012);
}

/* ---- the factor terms as one law (docs/model.md §7.1) ----------------------------------- */

typedef struct {
  const char *spec;
  gboolean reduces;
  DdpStragglerLawKind kind;
  double sigma;
} LawCase;

static void
test_law_reduce(void)
{
  static const LawCase cases[] = {
    { "none", TRUE, DDP_STRAGGLER_LAW_NONE, 0 },
    { "slow:2:2,hiccup:3:1", TRUE, DDP_STRAGGLER_LAW_NONE, 0 },
    { "normal:0.1,slow:2:2", TRUE, DDP_STRAGGLER_LAW_NORMAL, 0.1 },
    { "lognormal:0.3,lognormal:0.4", TRUE, DDP_STRAGGLER_LAW_LOGNORMAL, 0.5 },   /* √(0.09 + 0.16) */
    { "normal:0,lognormal:0.2", TRUE, DDP_STRAGGLER_LAW_LOGNORMAL, 0.2 },        /* normal:0 is 1 */
    { "normal:0.1,lognormal:0.2", FALSE, 0, 0 },
    { "normal:0.1,normal:0.2", FALSE, 0, 0 },
  };
  for (gsize i = 0; i < G_N_ELEMENTS(cases); i++) {
    g_autoptr(DdpStragglers) s = parse(cases[i].spec);
    DdpStragglerLaw law;
    g_assert_cmpint(ddp_stragglers_law(s, &law), ==, cases[i].reduces);
    if (!cases[i].reduces)
      continue;
    g_assert_cmpint(law.kind, ==, cases[i].kind);
    g_assert_cmpfloat_with_epsilon(law.sigma, cases[i].sigma, 1e-15);
  }
  g_autoptr(DdpStragglers) slow = parse("slow:8:1.5,slow:2:2");
  g_assert_cmpfloat(ddp_stragglers_persistent(slow, 1), ==, 3.0);
  g_assert_cmpfloat(ddp_stragglers_persistent(slow, 7), ==, 1.5);
  g_assert_cmpfloat(ddp_stragglers_persistent(slow, 8), ==, 1.0);
  guint64 k[16];
  g_assert_cmpuint(ddp_stragglers_slow_ranks(slow, k), ==, 2);
  g_assert_cmpuint(k[0], ==, 8);
  g_assert_cmpuint(k[1], ==, 2);
}

/* Tails and quantiles against z tables: Q(1.6448536) = 0.05, Q(2) = 0.0227501319; the normal's
 * floor 0.1 holds every draw (tail 1 below it). */
static void
test_law_tail(void)
{
  DdpStragglerLaw logn = { DDP_STRAGGLER_LAW_LOGNORMAL, 0.5 }, norm = { DDP_STRAGGLER_LAW_NORMAL, 0.1 };
  DdpStragglerLaw none = { DDP_STRAGGLER_LAW_NONE, 0 };
  g_assert_cmpfloat_with_epsilon(ddp_straggler_law_tail(&logn, exp(0.5 * 1.6448536269514722)), 0.05, 1e-12);
  g_assert_cmpfloat_with_epsilon(ddp_straggler_law_upper_quantile(&logn, 0.05), exp(0.5 * 1.6448536269514722), 1e-12);
  g_assert_cmpfloat_with_epsilon(ddp_straggler_law_tail(&norm, 1.2), 0.0227501319481792, 1e-14);
  g_assert_cmpfloat_with_epsilon(ddp_straggler_law_upper_quantile(&norm, 0.0227501319481792), 1.2, 1e-12);
  g_assert_cmpfloat(ddp_straggler_law_tail(&norm, 0.05), ==, 1.0);
  g_assert_cmpfloat(ddp_straggler_law_tail(&logn, 0), ==, 1.0);
  g_assert_cmpfloat(ddp_straggler_law_tail(&none, 0.999), ==, 1.0);
  g_assert_cmpfloat(ddp_straggler_law_tail(&none, 1.0), ==, 0.0);
}

/* Conditional draws stay in their interval, and split it in the right proportion: lognormal 0.2
 * on (1.1, 1.5], P(g ≤ 1.2 | …) = (Φ(ln 1.2/0.2) − Φ(ln 1.1/0.2)) / (Φ(ln 1.5/0.2) −
 * Φ(ln 1.1/0.2)), within 4 binomial standard errors over 20 000 draws; a far-tail interval
 * (above e^{0.2·9}, beyond what Box–Muller reaches) and a below-only one stay finite and inside. */
static void
test_law_draw(void)
{
  enum { N = 20000 };
  DdpStragglerLaw law = { DDP_STRAGGLER_LAW_LOGNORMAL, 0.2 };
  g_autoptr(GRand) rng = g_rand_new_with_seed(4);
  double phi[3];
  const double x[3] = { 1.1, 1.2, 1.5 };
  for (int i = 0; i < 3; i++)
    phi[i] = 0.5 * erfc(-log(x[i]) / 0.2 / G_SQRT2);
  double p = (phi[1] - phi[0]) / (phi[2] - phi[0]);
  guint below = 0;
  for (guint i = 0; i < N; i++) {
    double g = ddp_straggler_law_draw(&law, rng, 1.1, 1.5);
    g_assert_cmpfloat(g, >, 1.1);
    g_assert_cmpfloat(g, <=, 1.5);
    below += g <= 1.2;
  }
  g_assert_cmpfloat(fabs((double)below / N - p), <, 4 * sqrt(p * (1 - p) / N));
  double far = exp(0.2 * 9);
  for (guint i = 0; i < 100; i++) {
    double g = ddp_straggler_law_draw(&law, rng, far, INFINITY);
    g_assert_cmpfloat(g, >=, far);
    g_assert_true(isfinite(g));
    g = ddp_straggler_law_draw(&law, rng, -INFINITY, 0.9);
    g_assert_cmpfloat(g, <=, 0.9);
    g_assert_cmpfloat(g, >, 0);
  }
  DdpStragglerLaw floored = { DDP_STRAGGLER_LAW_NORMAL, 2.0 };   /* 33 % of draws on the floor */
  for (guint i = 0; i < 100; i++)
    g_assert_cmpfloat(ddp_straggler_law_draw(&floored, rng, -INFINITY, 0.5), >=, 0.1);
}

/* Per-block streams: the same numbers on 1 and 4 threads, other numbers in another iteration; one
 * hiccup per hiccup iteration; the slow ranks keep their factor in every block. */
static void
test_sample_seeded(void)
{
  enum { R = 40000 };   /* three blocks */
  g_autoptr(DdpStragglers) s = parse("lognormal:0.1,slow:3:2,hiccup:2:1");
  g_autofree double *a = g_new(double, R), *b = g_new(double, R), *c = g_new(double, R);
  g_autofree gint64 *da = g_new(gint64, R), *db = g_new(gint64, R), *dc = g_new(gint64, R);
  ddp_stragglers_sample_seeded(s, 7, 1, R, 1, a, da);
  ddp_stragglers_sample_seeded(s, 7, 1, R, 4, b, db);
  ddp_stragglers_sample_seeded(s, 7, 2, R, 4, c, dc);
  g_assert_cmpmem(a, R * sizeof(double), b, R * sizeof(double));
  g_assert_cmpmem(da, R * sizeof(gint64), db, R * sizeof(gint64));
  g_assert_true(memcmp(a, c, R * sizeof(double)) != 0);
  gint64 sum = 0, sum_c = 0;
  for (guint r = 0; r < R; r++) {
    sum += da[r];
    sum_c += dc[r];
  }
  g_assert_cmpint(sum, ==, 1000000);   /* iteration 1 = EVERY − 1: one 1 ms hiccup */
  g_assert_cmpint(sum_c, ==, 0);
  double mean_log = 0;
  for (guint r = 3; r < R; r++)
    mean_log += log(a[r]);
  g_assert_cmpfloat(fabs(mean_log / (R - 3)), <, 4 * 0.1 / sqrt(R));
  for (guint r = 0; r < 3; r++)   /* 2 × a lognormal(0.1): inside 2·e^{±0.86} */
    g_assert_cmpfloat(fabs(log(a[r] / 2)), <, 0.86);
}

/* The jitter's positions name the value each rank got: sorted by position, the factors ascend. */
static void
test_jitter_positions(void)
{
  enum { R = 100 };
  g_autoptr(GRand) rng = g_rand_new_with_seed(8);
  double factor[R], by_position[R];
  guint32 position[R];
  ddp_jitter_factors(0.05, rng, R, factor, position);
  for (guint r = 0; r < R; r++)
    by_position[position[r]] = factor[r];
  for (guint k = 1; k < R; k++)
    g_assert_cmpfloat(by_position[k], >, by_position[k - 1]);
  g_assert_cmpfloat(by_position[R - 1], ==, ddp_jitter_slowest(0.05, R));
}

int
main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/straggler/parse/ok", test_parse_ok);
  g_test_add_func("/straggler/parse/errors", test_parse_errors);
  g_test_add_func("/straggler/sample/no-draws", test_no_draws);
  g_test_add_func("/straggler/sample/draw-order", test_draw_order);
  g_test_add_func("/straggler/sample/determinism", test_determinism);
  g_test_add_func("/straggler/slow/exact", test_slow);
  g_test_add_func("/straggler/slow/combine-multiplies", test_combine_multiplies);
  g_test_add_func("/straggler/hiccup/exact-count", test_hiccup);
  g_test_add_func("/straggler/hiccup/uniform-rank", test_hiccup_uniform);
  g_test_add_func("/straggler/normal/moments", test_normal_moments);
  g_test_add_func("/straggler/normal/floor", test_normal_floor);
  g_test_add_func("/straggler/lognormal/median", test_lognormal_median);
  g_test_add_func("/straggler/law/reduce", test_law_reduce);
  g_test_add_func("/straggler/law/tail", test_law_tail);
  g_test_add_func("/straggler/law/draw", test_law_draw);
  g_test_add_func("/straggler/sample/seeded", test_sample_seeded);
  g_test_add_func("/straggler/jitter/positions", test_jitter_positions);
  return g_test_run();
}
