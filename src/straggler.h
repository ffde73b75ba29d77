/* straggler — seeded per-rank, per-iteration slowdown models (`--stragglers SPEC`):
 * none, normal:SIGMA, lognormal:SIGMA, slow:K:FACTOR, hiccup:EVERY:MS, comma-separated to combine. */
#ifndef DDP_STRAGGLER_H
#define DDP_STRAGGLER_H

#include <glib.h>

#define DDP_STRAGGLER_ERROR (ddp_straggler_error_quark())
GQuark ddp_straggler_error_quark(void);
typedef enum { DDP_STRAGGLER_ERROR_PARSE } DdpStragglerError;

typedef struct _DdpStragglers DdpStragglers;

/* Parses SPEC.  NULL or "" means none.  Returns NULL with a one-line error naming the bad term. */
DdpStragglers *ddp_stragglers_parse(const char *spec, GError **error);
void ddp_stragglers_free(DdpStragglers *s);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(DdpStragglers, ddp_stragglers_free)

/* TRUE when every rank gets factor 1 and no delay in every iteration. */
gboolean ddp_stragglers_is_none(const DdpStragglers *s);
/* FALSE with an error when a slow:K term has K > @n_ranks. */
gboolean ddp_stragglers_check_ranks(const DdpStragglers *s, guint64 n_ranks, GError **error);
/* Worst case of one iteration, for the overflow check of the simulated clock (ddp.c). */
double ddp_stragglers_worst_factor(const DdpStragglers *s);
gint64 ddp_stragglers_worst_delay_ns(const DdpStragglers *s);
/* TRUE when every rank gets the same factor and delay in a given iteration (no per-rank terms),
 * so one rank stands for all. */
gboolean ddp_stragglers_is_uniform(const DdpStragglers *s);

/* Samples iteration @iteration for @n_ranks ranks: compute slowdown factor[r] (multiplies compute
 * time, > 0) and delay_ns[r] (a pause inserted before the rank's backward).  All randomness comes
 * from @rng, consumed in rank order, so the same seed gives the same answer. */
void ddp_stragglers_sample(const DdpStragglers *s, GRand *rng, guint64 iteration, guint64 n_ranks,
                           double *factor, gint64 *delay_ns);

/* Per-rank sampling split into blocks of DDP_STRAGGLER_BLOCK ranks, each with its own generator
 * seeded from (@seed, @iteration, block, @tag), so that blocks can be sampled on any number of
 * threads with the same answer.  @fn is called once per block, possibly from several threads at
 * once (@threads workers, 0: one per core; one block or one thread: in the calling thread). */
#define DDP_STRAGGLER_BLOCK 16384u
typedef void (*DdpStragglerBlockFunc)(GRand *rng, guint64 first, guint64 count, gpointer data);
void ddp_stragglers_blocks(guint64 seed, guint64 iteration, guint32 tag, guint64 n_ranks, guint threads,
                           DdpStragglerBlockFunc fn, gpointer data);

/* ddp_stragglers_sample() for every rank, from the per-block generators of ddp_stragglers_blocks()
 * (factor terms) and one more seeded from (@seed, @iteration) (hiccups): the same distribution,
 * the same numbers whatever @threads. */
void ddp_stragglers_sample_seeded(const DdpStragglers *s, guint64 seed, guint64 iteration, guint64 n_ranks,
                                  guint threads, double *factor, gint64 *delay);

/* The factor terms as one law (docs/model.md §7): factor_r = ddp_stragglers_persistent(r) · g_r with
 * g_r independent and identically distributed over ranks and iterations, g = 1 (NONE), max(0.1,
 * 1 + sigma·z) (NORMAL) or exp(sigma·z) (LOGNORMAL), z ~ N(0, 1).  Lognormal terms combine
 * (sigma² add); a normal term with anything else random does not reduce to one law. */
typedef enum { DDP_STRAGGLER_LAW_NONE, DDP_STRAGGLER_LAW_NORMAL, DDP_STRAGGLER_LAW_LOGNORMAL } DdpStragglerLawKind;
typedef struct {
  DdpStragglerLawKind kind;
  double sigma;
} DdpStragglerLaw;
/* FALSE when the factor terms do not reduce to one law (then only per-rank sampling is exact). */
gboolean ddp_stragglers_law(const DdpStragglers *s, DdpStragglerLaw *law);
/* Each slow term's K, in spec order, into @k (up to 16).  Returns the count. */
guint ddp_stragglers_slow_ranks(const DdpStragglers *s, guint64 *k);
/* The slow terms' product for @rank (1 for the others). */
double ddp_stragglers_persistent(const DdpStragglers *s, guint64 rank);
/* Draws iteration @iteration's hiccups from @rng as ddp_stragglers_sample() does: up to 16
 * (rank, delay) pairs into @ranks and @delays (a rank may appear twice).  Returns the count. */
guint ddp_stragglers_hiccups(const DdpStragglers *s, GRand *rng, guint64 iteration, guint64 n_ranks,
                             guint64 *ranks, gint64 *delays);
/* P(g > x), the law's upper tail (0 or 1 for NONE). */
double ddp_straggler_law_tail(const DdpStragglerLaw *law, double x);
/* x with P(g > x) = @q, 0 < q < 1 (NONE: 1). */
double ddp_straggler_law_upper_quantile(const DdpStragglerLaw *law, double q);
/* One draw of g conditioned on @lo < g ≤ @hi (either may be infinite; the interval must have
 * positive probability). */
double ddp_straggler_law_draw(const DdpStragglerLaw *law, GRand *rng, double lo, double hi);

/* Rank-to-rank jitter (docs/overheads.md): persistent per-rank speed factors, the expected order
 * statistics of @n_ranks standard normals (Blom's approximation, k = 1..n):
 *   factor = max(0.1, 1 + sigma · Φ⁻¹((k − 0.375) / (n + 0.25)))
 * dealt to the ranks by a permutation drawn from @rng (n − 1 g_rand_int_range() draws, Fisher–Yates
 * from the top).  Deterministic in distribution: the slowest rank is always
 * ddp_jitter_slowest(sigma, n), so a fixed seed does not decide how slow the job is.
 * @position (nullable, array length=n_ranks): k − 1 of the value dealt to each rank. */
void ddp_jitter_factors(double sigma, GRand *rng, guint64 n_ranks, double *factor, guint32 *position);
/* 1 + sigma · Φ⁻¹((n − 0.375)/(n + 0.25)): ≈ 1 + sigma · E[max of n standard normals]. */
double ddp_jitter_slowest(double sigma, guint64 n_ranks);
/* Φ⁻¹, the standard normal quantile, for 0 < p < 1 (Acklam's rational approximation, one Newton
 * step: relative error < 1e-12). */
double ddp_normal_quantile(double p);

/* Canonical text of the spec (newly allocated), e.g. "normal:0.05,slow:8:1.2". */
char *ddp_stragglers_to_string(const DdpStragglers *s);

#endif
