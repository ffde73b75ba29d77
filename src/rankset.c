/* rankset — drawing the top of the straggler factors' order statistics (see rankset.h; the
 * derivation is docs/model.md §7).
 *
 * Ranks fall into groups of equal slow factor (the slow terms' K split 0..n into at most 17
 * intervals); inside a group a rank's scale is that factor times its jitter.  Each group keeps its
 * ranks in descending scale (by jitter; in rank order without jitter, where all are equal).
 *
 * Lowering the threshold from t to t' draws each rank not drawn yet independently with
 *   p_r = P(scale_r·g > t' | scale_r·g ≤ t) = (S(t'/scale_r) − S(t/scale_r)) / (1 − S(t/scale_r)),
 * S the law's upper tail.  p_r ≤ q_r = S(t'/scale_r), which falls along a group's order, so a
 * group is walked in blocks of doubling length (one block without jitter) with the block's first
 * q as a bound: geometric skips at that rate, each landing accepted with p_r / q (thinning).
 * The work is O(blocks + ranks above t' in expectation), independent of the rank count. */
#include "rankset.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MAX_GROUPS 17

typedef struct {
  guint64 lo, hi;      /* ranks lo..hi-1 */
  double slow;         /* their slow factor */
  guint64 offset;      /* into order[], with jitter */
} Group;

struct _DdpRankSet {
  DdpStragglerLaw law;
  guint64 n_ranks;
  const double *jitter;   /* [n_ranks] borrowed, or NULL */
  guint32 *order;         /* [n_ranks] with jitter: each group's ranks by descending jitter */
  Group groups[MAX_GROUPS];
  guint n_groups;
  guint32 *stamp;         /* [n_ranks] == iteration_stamp: drawn this iteration */
  guint32 iteration_stamp;
  GArray *draws;          /* of DdpRankDraw, this iteration */
  double threshold;       /* every rank not drawn has factor ≤ threshold */
  GArray *previous;       /* of DdpRankDraw, the last iteration's draws sorted by rank */
  double previous_threshold;
  double previous_top;
  guint64 previous_top_rank;
};

static int
compare_u64(const void *a, const void *b)
{
  guint64 x = *(const guint64 *)a, y = *(const guint64 *)b;
  return x < y ? -1 : x > y;
}

static guint
group_of(const DdpRankSet *set, guint64 rank)
{
  guint g = 0;
  while (rank >= set->groups[g].hi)
    g++;
  return g;
}

static double
scale_of(const DdpRankSet *set, guint64 rank)
{
  return set->groups[group_of(set, rank)].slow * (set->jitter ? set->jitter[rank] : 1.0);
}

static guint64
rank_at(const DdpRankSet *set, const Group *g, guint64 pos)
{
  return set->order ? set->order[g->offset + pos] : g->lo + pos;
}

static double
scale_at(const DdpRankSet *set, const Group *g, guint64 pos)
{
  return set->jitter ? g->slow * set->jitter[rank_at(set, g, pos)] : g->slow;
}

/**
 * ddp_rank_set_new:
 * @s: the stragglers (only the slow terms' K and factors are read, here)
 * @law: from ddp_stragglers_law(@s)
 * @jitter: (nullable) (array length=n_ranks): persistent jitter factors; borrowed, must outlive
 *   the set
 * @jitter_position: (nullable) (array length=n_ranks): with @jitter, ddp_jitter_factors()'s
 *   positions (a larger position is a larger factor); read here only
 *
 * Returns: (transfer full): a set with no iteration begun; ddp_rank_set_next() begins one.
 *   O(n_ranks) time and 4–8 bytes per rank.
 */
DdpRankSet *
ddp_rank_set_new(const DdpStragglers *s, const DdpStragglerLaw *law, guint64 n_ranks, const double *jitter,
                 const guint32 *jitter_position)
{
  g_assert(n_ranks >= 1 && n_ranks <= G_MAXUINT32);
  g_assert(!jitter == !jitter_position);
  DdpRankSet *set = g_new0(DdpRankSet, 1);
  set->law = *law;
  set->n_ranks = n_ranks;
  set->jitter = jitter;
  guint64 k[MAX_GROUPS];
  guint n_k = ddp_stragglers_slow_ranks(s, k);
  for (guint i = 0; i < n_k; i++)
    k[i] = MIN(k[i], n_ranks);
  k[n_k++] = n_ranks;
  qsort(k, n_k, sizeof(guint64), compare_u64);
  guint64 lo = 0;
  for (guint i = 0; i < n_k; i++) {
    if (k[i] == lo)
      continue;
    set->groups[set->n_groups++] = (Group){ lo, k[i], ddp_stragglers_persistent(s, lo), lo };
    lo = k[i];
  }
  if (jitter) {
    /* position p holds the (p+1)-th smallest value: walk positions downwards, each rank into
     * its group's next slot */
    g_autofree guint32 *rank_of = g_new(guint32, n_ranks);
    for (guint64 r = 0; r < n_ranks; r++)
      rank_of[jitter_position[r]] = (guint32)r;
    guint64 fill[MAX_GROUPS];
    for (guint g = 0; g < set->n_groups; g++)
      fill[g] = set->groups[g].offset;
    set->order = g_new(guint32, n_ranks);
    for (guint64 p = n_ranks; p-- > 0;) {
      guint32 r = rank_of[p];
      set->order[fill[group_of(set, r)]++] = r;
    }
  }
  set->stamp = g_new0(guint32, n_ranks);
  set->draws = g_array_new(FALSE, FALSE, sizeof(DdpRankDraw));
  set->previous = g_array_new(FALSE, FALSE, sizeof(DdpRankDraw));
  set->threshold = set->previous_threshold = INFINITY;
  return set;
}

/* ddp_rank_set_free: @set: (nullable) (transfer full). */
void
ddp_rank_set_free(DdpRankSet *set)
{
  if (!set)
    return;
  g_free(set->order);
  g_free(set->stamp);
  g_array_free(set->draws, TRUE);
  g_array_free(set->previous, TRUE);
  g_free(set);
}

static int
compare_draw_rank(const void *a, const void *b)
{
  return compare_u64(&((const DdpRankDraw *)a)->rank, &((const DdpRankDraw *)b)->rank);
}

/**
 * ddp_rank_set_next:
 * Begins an iteration: nothing drawn, threshold +∞.  The iteration that ends becomes the
 * previous one: its draws, its final threshold and its largest factor (which its draws hold
 * whenever any rank was drawn).
 */
void
ddp_rank_set_next(DdpRankSet *set)
{
  g_array_set_size(set->previous, 0);
  g_array_append_vals(set->previous, set->draws->data, set->draws->len);
  if (set->previous->len > 1)
    qsort(set->previous->data, set->previous->len, sizeof(DdpRankDraw), compare_draw_rank);
  set->previous_threshold = set->threshold;
  set->previous_top = 0;
  set->previous_top_rank = 0;
  for (guint i = 0; i < set->draws->len; i++) {
    const DdpRankDraw *d = &g_array_index(set->draws, DdpRankDraw, i);
    if (d->scale * d->g > set->previous_top) {
      set->previous_top = d->scale * d->g;
      set->previous_top_rank = d->rank;
    }
  }
  g_array_set_size(set->draws, 0);
  set->threshold = INFINITY;
  if (++set->iteration_stamp == 0) {   /* wrapped: forget every old stamp */
    memset(set->stamp, 0, set->n_ranks * sizeof(guint32));
    set->iteration_stamp = 1;
  }
}

static void
add(DdpRankSet *set, guint64 rank, double scale, double g)
{
  set->stamp[rank] = set->iteration_stamp;
  DdpRankDraw d = { rank, scale, g };
  g_array_append_val(set->draws, d);
}

/* A uniform draw in (0, 1]. */
static double
uniform(GRand *rng)
{
  return 1.0 - g_rand_double(rng);
}

/* Draws group @g's ranks whose factor lies in (lo, set->threshold]. */
static void
lower_group(DdpRankSet *set, const Group *g, GRand *rng, double lo)
{
  const DdpStragglerLaw *law = &set->law;
  double hi = set->threshold;
  guint64 n = g->hi - g->lo;
  for (guint64 start = 0, size = 1, end; start < n; start = end, size *= 2) {
    end = set->jitter ? MIN(n, start + size) : n;
    double bound = ddp_straggler_law_tail(law, lo / scale_at(set, g, start));
    if (bound <= 0)
      return;   /* q only falls further along the group */
    double log_miss = bound < 1 ? log1p(-bound) : -INFINITY;
    for (guint64 pos = start;; pos++) {
      if (bound < 1) {
        double skip = floor(log(uniform(rng)) / log_miss);
        if (skip >= (double)(end - pos))
          break;
        pos += (guint64)skip;
      }
      if (pos >= end)
        break;
      guint64 rank = rank_at(set, g, pos);
      if (set->stamp[rank] == set->iteration_stamp)
        continue;   /* drawn already: not a trial */
      double scale = scale_at(set, g, pos);
      double above_hi = ddp_straggler_law_tail(law, hi / scale);
      double p = above_hi < 1 ? (ddp_straggler_law_tail(law, lo / scale) - above_hi) / (1 - above_hi) : 1;
      if (uniform(rng) * bound <= p)
        add(set, rank, scale, ddp_straggler_law_draw(law, rng, lo / scale, hi / scale));
    }
  }
}

/**
 * ddp_rank_set_lower:
 * Draws every rank not drawn yet whose factor lies in (@threshold, the current threshold], and
 * makes @threshold the current one.  Law NONE: nothing is drawn (the caller takes each group's
 * top with ddp_rank_set_top(), which dominates the rest of its group).
 */
void
ddp_rank_set_lower(DdpRankSet *set, GRand *rng, double threshold)
{
  if (threshold >= set->threshold)
    return;
  if (set->law.kind != DDP_STRAGGLER_LAW_NONE)
    for (guint i = 0; i < set->n_groups; i++)
      lower_group(set, &set->groups[i], rng, threshold);
  set->threshold = threshold;
}

/**
 * ddp_rank_set_top:
 * Draws the largest factor: law NONE, each group's first rank (the largest scale there, every
 * other rank of the group at or below it); otherwise lowers the threshold along the ladder
 * scale_max · (the law's upper q quantile) until some rank is drawn: q = 1/(4n), 4 times more each
 * step up to 1/4 (about one rank above when the largest scale is common), then halving 1 − q (a
 * top group of a few ranks, such as one slow node, needs q near 1/2).
 */
void
ddp_rank_set_top(DdpRankSet *set, GRand *rng)
{
  if (set->law.kind == DDP_STRAGGLER_LAW_NONE) {
    for (guint i = 0; i < set->n_groups; i++) {
      const Group *g = &set->groups[i];
      if (set->stamp[rank_at(set, g, 0)] != set->iteration_stamp)
        add(set, rank_at(set, g, 0), scale_at(set, g, 0), 1.0);
    }
    return;
  }
  double scale_max = 0;
  for (guint i = 0; i < set->n_groups; i++)
    scale_max = MAX(scale_max, scale_at(set, &set->groups[i], 0));
  guint before = set->draws->len;
  for (double q = 0.25 / (double)set->n_ranks; set->draws->len == before; q = q < 0.25 ? 4 * q : 1 - (1 - q) / 2)
    ddp_rank_set_lower(set, rng, q < 1 - 1e-12 ? scale_max * ddp_straggler_law_upper_quantile(&set->law, q) : -INFINITY);
}

/**
 * ddp_rank_set_take:
 * Draws @rank's factor below the current threshold unless drawn already.
 */
void
ddp_rank_set_take(DdpRankSet *set, GRand *rng, guint64 rank)
{
  g_assert(rank < set->n_ranks);
  if (set->stamp[rank] == set->iteration_stamp)
    return;
  double scale = scale_of(set, rank);
  add(set, rank, scale, ddp_straggler_law_draw(&set->law, rng, -INFINITY, set->threshold / scale));
}

/**
 * ddp_rank_set_draws:
 * Returns: (transfer none) (array length=n): this iteration's draws, in the order drawn.
 */
const DdpRankDraw *
ddp_rank_set_draws(const DdpRankSet *set, guint *n)
{
  *n = set->draws->len;
  return (const DdpRankDraw *)(const void *)set->draws->data;
}

/* Every rank not drawn this iteration has factor ≤ this (+∞ before any lowering). */
double
ddp_rank_set_threshold(const DdpRankSet *set)
{
  return set->threshold;
}

/**
 * ddp_rank_set_previous_factor:
 * Returns: @rank's factor in the previous iteration: its draw if it was drawn, else a draw from @rng
 *   of the law below that iteration's threshold (which is exactly what is known of it).
 *   Read-only on @set: safe from several threads with their own generators.
 */
double
ddp_rank_set_previous_factor(const DdpRankSet *set, GRand *rng, guint64 rank)
{
  DdpRankDraw key = { .rank = rank };
  const DdpRankDraw *d = set->previous->len == 0 ? NULL
                         : bsearch(&key, set->previous->data, set->previous->len, sizeof(DdpRankDraw), compare_draw_rank);
  if (d)
    return d->scale * d->g;
  double scale = scale_of(set, rank);
  return scale * ddp_straggler_law_draw(&set->law, rng, -INFINITY, set->previous_threshold / scale);
}

/* The previous iteration's largest factor, and in @rank a rank that had it. */
double
ddp_rank_set_previous_top(const DdpRankSet *set, guint64 *rank)
{
  *rank = set->previous_top_rank;
  return set->previous_top;
}

typedef struct {
  const DdpRankSet *set;
  double *factor;
} PreviousAll;

static void
previous_block(GRand *rng, guint64 first, guint64 count, gpointer data)
{
  const PreviousAll *pa = data;
  for (guint64 r = first; r < first + count; r++)
    pa->factor[r] = ddp_rank_set_previous_factor(pa->set, rng, r);
}

/* "prev" in ASCII: the block streams' tag. */
#define PREVIOUS_TAG 0x70726576u

/**
 * ddp_rank_set_previous_all:
 * @factor: (out caller-allocates) (array length=n_ranks)
 * ddp_rank_set_previous_factor() for every rank, block by block on @threads threads, each block
 * from its own stream derived from (@seed, @iteration): the same numbers whatever @threads.
 */
void
ddp_rank_set_previous_all(const DdpRankSet *set, guint64 seed, guint64 iteration, guint threads, double *factor)
{
  PreviousAll pa = { set, factor };
  ddp_stragglers_blocks(seed, iteration, PREVIOUS_TAG, set->n_ranks, threads, previous_block, &pa);
}
