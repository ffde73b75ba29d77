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
/* TRUE when every rank gets the same factor and delay in a given iteration (no per-rank terms),
 * so one rank stands for all. */
gboolean ddp_stragglers_is_uniform(const DdpStragglers *s);

/* Samples iteration @iteration for @n_ranks ranks: compute slowdown factor[r] (multiplies compute
 * time, > 0) and delay_ns[r] (a pause inserted before the rank's backward).  All randomness comes
 * from @rng, consumed in rank order, so the same seed gives the same answer. */
void ddp_stragglers_sample(const DdpStragglers *s, GRand *rng, guint64 iteration, guint64 n_ranks,
                           double *factor, gint64 *delay_ns);

/* Rank-to-rank jitter (docs/overheads.md): persistent per-rank speed factors, the expected order
 * statistics of @n_ranks standard normals (Blom's approximation, k = 1..n):
 *   factor = max(0.1, 1 + sigma · Φ⁻¹((k − 0.375) / (n + 0.25)))
 * dealt to the ranks by a permutation drawn from @rng (n − 1 g_rand_int_range() draws, Fisher–Yates
 * from the top).  Deterministic in distribution: the slowest rank is always
 * ddp_jitter_slowest(sigma, n), so a fixed seed does not decide how slow the job is. */
void ddp_jitter_factors(double sigma, GRand *rng, guint64 n_ranks, double *factor);
/* 1 + sigma · Φ⁻¹((n − 0.375)/(n + 0.25)): ≈ 1 + sigma · E[max of n standard normals]. */
double ddp_jitter_slowest(double sigma, guint64 n_ranks);
/* Φ⁻¹, the standard normal quantile, for 0 < p < 1 (Acklam's rational approximation, one Newton
 * step: relative error < 1e-12). */
double ddp_normal_quantile(double p);

/* Canonical text of the spec (newly allocated), e.g. "normal:0.05,slow:8:1.2". */
char *ddp_stragglers_to_string(const DdpStragglers *s);

#endif
