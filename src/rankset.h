/* rankset — the ranks that can set an iteration's pace, drawn from the top of the order statistics
 * of the straggler factors instead of drawing every rank (docs/model.md §6).
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

DdpRankSet *ddp_rank_set_new(const DdpStragglers *s, const DdpStragglerLaw *law, guint64 n_ranks,
                             const double *jitter, const guint32 *jitter_position);
void ddp_rank_set_free(DdpRankSet *set);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(DdpRankSet, ddp_rank_set_free)

void ddp_rank_set_next(DdpRankSet *set);
void ddp_rank_set_top(DdpRankSet *set, GRand *rng);
void ddp_rank_set_lower(DdpRankSet *set, GRand *rng, double threshold);
void ddp_rank_set_take(DdpRankSet *set, GRand *rng, guint64 rank);
const DdpRankDraw *ddp_rank_set_draws(const DdpRankSet *set, guint *n);
double ddp_rank_set_threshold(const DdpRankSet *set);

double ddp_rank_set_previous_factor(const DdpRankSet *set, GRand *rng, guint64 rank);
double ddp_rank_set_previous_top(const DdpRankSet *set, guint64 *rank);
void ddp_rank_set_previous_all(const DdpRankSet *set, guint64 seed, guint64 iteration, guint threads, double *factor);

#endif
