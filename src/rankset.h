/* rankset — the ranks that can set an iteration's pace, drawn from the top of the order statistics
 * of the straggler factors instead of drawing every rank (docs/model.md §7).
 *
 * Each rank's factor is scale_r · g_r (ddp_stragglers_law): scale_r persistent (slow terms ×
 * jitter), g_r i.i.d. over ranks and iterations.  A set draws, per iteration, only the ranks whose
 * factor is above a threshold that it lowers on demand, plus ranks asked for by name; every other
 * rank is known only to lie at or below the threshold, which is all the caller needs when those
 * ranks cannot be the last anywhere.  What is drawn, and in what order, depends on the generator
 * passed in and on nothing else. */
#ifndef DDP_RANKSET_H
#define DDP_RANKSET_H

#include <glib.h>
#include "straggler.h"

typedef struct _DdpRankSet DdpRankSet;

typedef struct {
  guint64 rank;
  double scale;   /* persistent part */
  double g;       /* this iteration's i.i.d. draw: factor = scale · g */
} DdpRankDraw;

/* A set over @n_ranks ranks whose factors are ddp_stragglers_persistent() × @jitter × a draw of
 * @law; @jitter and @jitter_position (ddp_jitter_factors) both NULL or both given, borrowed. */
DdpRankSet *ddp_rank_set_new(const DdpStragglers *s, const DdpStragglerLaw *law, guint64 n_ranks,
                             const double *jitter, const guint32 *jitter_position);
void ddp_rank_set_free(DdpRankSet *set);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(DdpRankSet, ddp_rank_set_free)

/* Begins an iteration; the one that ends becomes the previous one. */
void ddp_rank_set_next(DdpRankSet *set);
/* Draws the largest factor (and whatever else lies above the threshold that finds it). */
void ddp_rank_set_top(DdpRankSet *set, GRand *rng);
/* Draws every rank above @threshold not drawn yet; @threshold becomes the current one. */
void ddp_rank_set_lower(DdpRankSet *set, GRand *rng, double threshold);
/* Draws @rank (below the current threshold) unless drawn already. */
void ddp_rank_set_take(DdpRankSet *set, GRand *rng, guint64 rank);
/* This iteration's draws, in the order drawn (indices stay valid until the next iteration). */
const DdpRankDraw *ddp_rank_set_draws(const DdpRankSet *set, guint *n);
/* Every rank not drawn has a factor at most this. */
double ddp_rank_set_threshold(const DdpRankSet *set);

/* @rank's factor in the previous iteration: drawn then, or drawn now from what is known of it. */
double ddp_rank_set_previous_factor(const DdpRankSet *set, GRand *rng, guint64 rank);
/* The previous iteration's largest factor, and its rank. */
double ddp_rank_set_previous_top(const DdpRankSet *set, guint64 *rank);
/* ddp_rank_set_previous_factor() for every rank, on @threads threads with per-block streams of
 * (@seed, @iteration): the same numbers on any thread count. */
void ddp_rank_set_previous_all(const DdpRankSet *set, guint64 seed, guint64 iteration, guint threads, double *factor);

#endif
