/* straggler — seeded per-rank, per-iteration slowdowns (see straggler.h; `--stragglers
 * SPEC` in --help, docs/model.md §1.4 and §5.4–5.5 for why they matter: every bucket's
 * AllReduce starts only when the *last* rank launches it, so one slow rank delays all).
 *
 * A spec is comma-separated terms; each term multiplies every rank's compute factor or adds to
 * its delay, in spec order:
 *   none              nothing (also the meaning of NULL, "" and a spec of only none terms)
 *   normal:SIGMA      factor *= max(0.1, 1 + SIGMA·z), z ~ N(0, 1) per rank per iteration.  The
 *                     floor keeps compute time positive; it is reached only at z <= -0.9/SIGMA
 *                     (never in practice for SIGMA <= 0.1: z <= -9).
 *   lognormal:SIGMA   factor *= exp(SIGMA·z): median 1, mean exp(SIGMA²/2), a heavy right tail,
 *                     the usual shape of measured step-time jitter.
 *   slow:K:FACTOR     ranks 0..K-1 (all ranks when K >= n_ranks) factor *= FACTOR every iteration;
 *                     with K <= GPUs per node that is one slow node, since ranks fill nodes in order.
 *   hiccup:EVERY:MS   in iterations with iteration % EVERY == EVERY-1, one rank drawn uniformly
 *                     gets delay += MS ms (rounded to whole ns), e.g. a GC pause or a checkpoint.
 *
 * Determinism (same input, same bytes): all randomness comes from the GRand the caller passes, consumed in
 * one fixed order per ddp_stragglers_sample() call: factor terms in spec order, inside a normal or
 * lognormal term one z per rank, ranks 0..n-1; then each hiccup term in a hiccup iteration one
 * g_rand_int_range() draw; slow, none and hiccup terms outside their iterations draw nothing.
 * ddp_stragglers_sample_seeded() does the same per block of ranks, each block with its own
 * generator derived from the seed, so that threads can share the work.  Each
 * z is one Box–Muller transform of two successive g_rand_double() draws u1, u2 in [0, 1):
 *   z = sqrt(-2 ln(1 - u1)) · cos(2π u2)
 * (1 - u1 is in (0, 1], so the log is finite).  The sine twin is discarded: it would save half
 * the draws but tie each rank's value to its neighbour's and make the order harder to state.
 * Cost: O(terms × ranks) per iteration: about 13 ms for one lognormal term on 131 072 ranks
 * (one core, -O2).  ddp.c avoids it where the factor terms reduce to one law (ddp_stragglers_law:
 * factor = persistent part × an i.i.d. draw): then only the ranks at the top of the order
 * statistics are drawn (rankset.c, docs/model.md §7).
 */
#include "straggler.h"
#include "suggest.h"

#include "ranges.h"

#include <errno.h>
#include <math.h>
#include <string.h>

G_DEFINE_QUARK(ddp-straggler-error-quark, ddp_straggler_error)

/* More terms than this describe nothing new and cost O(terms × ranks) per iteration. */
#define MAX_TERMS 16
/* The largest |z| standard_normal() can return: u1 ≤ 1 - 2^-53, so -2 ln(1 - u1) ≤ 106 ln 2. */
#define MAX_ABS_Z 8.5716

typedef enum { TERM_NORMAL, TERM_LOGNORMAL, TERM_SLOW, TERM_HICCUP } TermKind;

typedef struct {
  TermKind kind;
  double sigma;        /* normal, lognormal */
  guint64 k;           /* slow: ranks 0..k-1 */
  double factor;       /* slow */
  guint64 every;       /* hiccup */
  double ms;           /* hiccup, as written (for to_string) */
  gint64 delay_ns;     /* hiccup: llround(ms · 1e6) */
} Term;

struct _DdpStragglers {
  Term *terms;         /* in spec order; none terms are dropped */
  guint n_terms;
};

/* A finite number filling all of @text (g_ascii_strtod: locale-independent). */
static gboolean
parse_double(const char *text, double *out)
{
  if (*text == '\0' || g_ascii_isspace(*text))
    return FALSE;
  char *end;
  errno = 0;
  double v = g_ascii_strtod(text, &end);
  if (*end != '\0' || errno == ERANGE || !isfinite(v))
    return FALSE;
  *out = v;
  return TRUE;
}

/* A whole number inside @range (ranges.h). */
static gboolean
parse_count(const char *text, const DdpRange *range, guint64 *out)
{
  return g_ascii_string_to_unsigned(text, 10, (guint64)range->min, (guint64)range->max, out, NULL);
}

/* A number inside @range, written back into *out. */
static gboolean
parse_ranged(const char *text, const DdpRange *range, double *out)
{
  return parse_double(text, out) && ddp_range_contains(range, *out);
}

static gboolean
term_error(GError **error, const char *term, const char *what)
{
  g_autofree char *quoted = ddp_range_quote(term);
  g_autofree char *safe_what = ddp_range_quote_n(what, 200);   /* it may echo part of the term */
  g_set_error(error, DDP_STRAGGLER_ERROR, DDP_STRAGGLER_ERROR_PARSE, "--stragglers: \"%s\": %s", quoted, safe_what);
  return FALSE;
}

/* Parses one term (already stripped).  Sets *is_none for "none". */
static gboolean
parse_term(const char *text, Term *t, gboolean *is_none, GError **error)
{
  g_auto(GStrv) f = g_strsplit(text, ":", -1);
  guint n = g_strv_length(f);
  *is_none = FALSE;
  if (*text == '\0')
    return term_error(error, text, "empty term (expected none, normal:SIGMA, lognormal:SIGMA, slow:K:FACTOR or hiccup:EVERY:MS)");
  if (strcmp(f[0], "none") == 0) {
    if (n != 1)
      return term_error(error, text, "expected none");
    *is_none = TRUE;
    return TRUE;
  }
  if (strcmp(f[0], "normal") == 0 || strcmp(f[0], "lognormal") == 0) {
    gboolean normal = f[0][0] == 'n';
    if (n != 2)
      return term_error(error, text, normal ? "expected normal:SIGMA" : "expected lognormal:SIGMA");
    *t = (Term){ .kind = normal ? TERM_NORMAL : TERM_LOGNORMAL };
    if (!parse_ranged(f[1], normal ? &DDP_RANGE_SIGMA_NORMAL : &DDP_RANGE_SIGMA_LOGNORMAL, &t->sigma))
      return term_error(error, text, normal ? "SIGMA must be a number from 0 to 10" : "SIGMA must be a number from 0 to 2");
    return TRUE;
  }
  if (strcmp(f[0], "slow") == 0) {
    if (n != 3)
      return term_error(error, text, "expected slow:K:FACTOR");
    *t = (Term){ .kind = TERM_SLOW };
    if (!parse_count(f[1], &DDP_RANGE_GPUS, &t->k))
      return term_error(error, text, "K must be a whole number from 1 to 16777216");
    if (!parse_ranged(f[2], &DDP_RANGE_SLOW_FACTOR, &t->factor))
      return term_error(error, text, "FACTOR must be a number from 0.001 to 1000");
    return TRUE;
  }
  if (strcmp(f[0], "hiccup") == 0) {
    if (n != 3)
      return term_error(error, text, "expected hiccup:EVERY:MS");
    *t = (Term){ .kind = TERM_HICCUP };
    if (!parse_count(f[1], &DDP_RANGE_STRAGGLER_EVERY, &t->every))
      return term_error(error, text, "EVERY must be a whole number from 1 to 1000000000");
    if (!parse_ranged(f[2], &DDP_RANGE_HICCUP_MS, &t->ms))
      return term_error(error, text, "MS must be a number from 0 to 1e9");
    t->delay_ns = llround(t->ms * 1e6);
    return TRUE;
  }
  /* "lognormal0.05": the colon forgotten; "lognormall:0.05": a typo */
  static const char *const kinds[] = { "none", "normal", "lognormal", "slow", "hiccup", NULL };
  g_autofree char *hint = NULL;
  for (gsize i = 1; kinds[i] && !hint; i++)
    if (g_str_has_prefix(text, kinds[i]) && g_ascii_isdigit(text[strlen(kinds[i])]))
      hint = g_strdup_printf(" (did you mean \"%s:%s\"?)", kinds[i], text + strlen(kinds[i]));
  if (!hint)
    hint = ddp_suggest_text(f[0], kinds);
  g_autofree char *what = g_strdup_printf("unknown kind \"%s\"%s (expected none, normal, lognormal, slow or hiccup)", f[0], hint);
  return term_error(error, text, what);
}

/**
 * ddp_stragglers_parse:
 * @spec: (nullable): the --stragglers text; NULL, "" (after stripping spaces) or "none" mean none.
 *   Spaces around terms are ignored.
 *
 * Returns: (transfer full): the model, free with ddp_stragglers_free(); or NULL with @error set to
 *   DDP_STRAGGLER_ERROR_PARSE and a one-line message naming the first bad term.
 */
DdpStragglers *
ddp_stragglers_parse(const char *spec, GError **error)
{
  g_autoptr(GArray) terms = g_array_new(FALSE, FALSE, sizeof(Term));
  g_autofree char *copy = g_strstrip(g_strdup(spec ? spec : ""));
  if (*copy != '\0') {
    g_auto(GStrv) parts = g_strsplit(copy, ",", -1);
    for (guint i = 0; parts[i]; i++) {
      Term t;
      gboolean is_none;
      if (!parse_term(g_strstrip(parts[i]), &t, &is_none, error))
        return NULL;
      if (!is_none && terms->len == MAX_TERMS) {
        term_error(error, parts[i], "more than 16 terms");
        return NULL;
      }
      if (!is_none)
        g_array_append_val(terms, t);
    }
  }
  DdpStragglers *s = g_new0(DdpStragglers, 1);
  s->n_terms = terms->len;
  s->terms = (Term *)(void *)g_array_free(g_steal_pointer(&terms), FALSE);
  return s;
}

/* ddp_stragglers_free: @s: (nullable) (transfer full). */
void
ddp_stragglers_free(DdpStragglers *s)
{
  if (!s)
    return;
  g_free(s->terms);
  g_free(s);
}

/**
 * ddp_stragglers_check_ranks:
 * Returns: FALSE with DDP_STRAGGLER_ERROR_PARSE when a slow:K term names more ranks than the
 *   @n_ranks GPUs of the run (the spec then says something the run cannot mean).
 */
gboolean
ddp_stragglers_check_ranks(const DdpStragglers *s, guint64 n_ranks, GError **error)
{
  for (guint i = 0; i < s->n_terms; i++)
    if (s->terms[i].kind == TERM_SLOW && s->terms[i].k > n_ranks) {
      g_set_error(error, DDP_STRAGGLER_ERROR, DDP_STRAGGLER_ERROR_PARSE,
                  "--stragglers: slow:%" G_GUINT64_FORMAT ": K is more than the %" G_GUINT64_FORMAT " GPUs",
                  s->terms[i].k, n_ranks);
      return FALSE;
    }
  return TRUE;
}

/* The largest compute factor any rank can draw in one iteration (|z| ≤ MAX_ABS_Z), ≥ 1. */
double
ddp_stragglers_worst_factor(const DdpStragglers *s)
{
  double worst = 1.0;
  for (guint i = 0; i < s->n_terms; i++) {
    const Term *t = &s->terms[i];
    switch (t->kind) {
    case TERM_NORMAL: worst *= 1.0 + t->sigma * MAX_ABS_Z; break;
    case TERM_LOGNORMAL: worst *= exp(t->sigma * MAX_ABS_Z); break;
    case TERM_SLOW: worst *= MAX(1.0, t->factor); break;
    case TERM_HICCUP: break;
    }
  }
  return worst;
}

/* The most delay one rank can collect in one iteration: every hiccup term on the same rank. */
gint64
ddp_stragglers_worst_delay_ns(const DdpStragglers *s)
{
  gint64 delay = 0;
  for (guint i = 0; i < s->n_terms; i++)
    if (s->terms[i].kind == TERM_HICCUP)
      delay += s->terms[i].delay_ns;   /* ≤ 16 × 10^15 */
  return delay;
}

/* TRUE when the spec has no term besides none: factor 1 and delay 0 for everyone, always. */
gboolean
ddp_stragglers_is_none(const DdpStragglers *s)
{
  return s->n_terms == 0;
}

/* TRUE when one rank can stand for all.  Every kind there is varies by rank (independent draws,
 * the first K ranks, one drawn rank), so this is is_none for now; a rank-independent kind, say a
 * whole-job slowdown, would make the two differ.  slow:K with K >= n_ranks is uniform too, but
 * the answer must not depend on the rank count, which this function does not see. */
gboolean
ddp_stragglers_is_uniform(const DdpStragglers *s)
{
  return ddp_stragglers_is_none(s);
}

/* One standard normal from two g_rand_double() draws (Box–Muller, cosine branch). */
static double
standard_normal(GRand *rng)
{
  double u1 = g_rand_double(rng);
  double u2 = g_rand_double(rng);
  return sqrt(-2.0 * log(1.0 - u1)) * cos(2.0 * G_PI * u2);
}

/* The factor terms for ranks [@first, @first + @count) into factor[0 .. count), from @rng: terms in
 * spec order, inside a normal or lognormal term one z per rank in rank order. */
static void
sample_factors(const DdpStragglers *s, GRand *rng, guint64 first, guint64 count, double *factor)
{
  for (guint64 r = 0; r < count; r++)
    factor[r] = 1.0;
  for (guint i = 0; i < s->n_terms; i++) {
    const Term *t = &s->terms[i];
    switch (t->kind) {
    case TERM_NORMAL:
      for (guint64 r = 0; r < count; r++) {
        double f = 1.0 + t->sigma * standard_normal(rng);   /* not inside MAX(): evaluated twice */
        factor[r] *= MAX(0.1, f);
      }
      break;
    case TERM_LOGNORMAL:
      for (guint64 r = 0; r < count; r++)
        factor[r] *= exp(t->sigma * standard_normal(rng));
      break;
    case TERM_SLOW:
      for (guint64 r = first; r < MIN(t->k, first + count); r++)
        factor[r - first] *= t->factor;
      break;
    case TERM_HICCUP:
      break;
    }
  }
}

/**
 * ddp_stragglers_hiccups:
 * @ranks: (out caller-allocates) (array fixed-size=16)
 * @delays: (out caller-allocates) (array fixed-size=16)
 * One g_rand_int_range(0, n_ranks) per hiccup term whose iteration this is, in spec order.
 */
guint
ddp_stragglers_hiccups(const DdpStragglers *s, GRand *rng, guint64 iteration, guint64 n_ranks, guint64 *ranks,
                       gint64 *delays)
{
  g_assert(n_ranks >= 1 && n_ranks <= G_MAXINT32);
  guint n = 0;
  for (guint i = 0; i < s->n_terms; i++) {
    const Term *t = &s->terms[i];
    if (t->kind == TERM_HICCUP && iteration % t->every == t->every - 1) {
      ranks[n] = (guint64)g_rand_int_range(rng, 0, (gint32)n_ranks);
      delays[n++] = t->delay_ns;
    }
  }
  return n;
}

/**
 * ddp_stragglers_sample:
 * @s: the model
 * @rng: the simulation's generator; advanced in the order described at the top of this file
 * @iteration: the optimizer step, from 0 (hiccups hit iterations EVERY-1, 2·EVERY-1, …)
 * @n_ranks: ≥ 1 and ≤ G_MAXINT32 (the range g_rand_int_range() draws from)
 * @factor: (out caller-allocates) (array length=n_ranks): compute slowdown per rank, > 0
 * @delay_ns: (out caller-allocates) (array length=n_ranks): pause before backward per rank, ≥ 0
 *
 * Overwrites both arrays: factor starts at 1 and delay at 0, then each factor term applies in
 * spec order, then each hiccup term.
 */
void
ddp_stragglers_sample(const DdpStragglers *s, GRand *rng, guint64 iteration, guint64 n_ranks,
                      double *factor, gint64 *delay_ns)
{
  g_assert(n_ranks >= 1 && n_ranks <= G_MAXINT32);
  sample_factors(s, rng, 0, n_ranks, factor);
  memset(delay_ns, 0, n_ranks * sizeof(gint64));
  guint64 ranks[MAX_TERMS];
  gint64 delays[MAX_TERMS];
  guint n = ddp_stragglers_hiccups(s, rng, iteration, n_ranks, ranks, delays);
  for (guint i = 0; i < n; i++)
    delay_ns[ranks[i]] += delays[i];
}

/* ---- blocks of ranks on threads ------------------------------------------------------------ */

typedef struct {
  guint64 seed, iteration, n_ranks;
  guint32 tag;
  DdpStragglerBlockFunc fn;
  gpointer data;
} Blocks;

/* The generator of block @block: seeded with the whole seed, the iteration, the block and the tag,
 * so that no two (iteration, block, tag) share a stream. */
static GRand *
block_rng(const Blocks *b, guint64 block)
{
  guint32 key[7] = { (guint32)b->seed, (guint32)(b->seed >> 32), (guint32)b->iteration, (guint32)(b->iteration >> 32),
                     (guint32)block, (guint32)(block >> 32), b->tag };
  return g_rand_new_with_seed_array(key, G_N_ELEMENTS(key));
}

static void
run_block(gpointer item, gpointer data)
{
  const Blocks *b = data;
  guint64 block = GPOINTER_TO_SIZE(item) - 1;
  guint64 first = block * DDP_STRAGGLER_BLOCK;
  g_autoptr(GRand) rng = block_rng(b, block);
  b->fn(rng, first, MIN((guint64)DDP_STRAGGLER_BLOCK, b->n_ranks - first), b->data);
}

/**
 * ddp_stragglers_blocks:
 * See straggler.h.  Blocks are independent, so the pool's scheduling order does not matter; each
 * block writes only its own ranks.  Costs one generator seeding (≈ 2 µs) per block.
 */
void
ddp_stragglers_blocks(guint64 seed, guint64 iteration, guint32 tag, guint64 n_ranks, guint threads,
                      DdpStragglerBlockFunc fn, gpointer data)
{
  Blocks b = { seed, iteration, n_ranks, tag, fn, data };
  guint64 n_blocks = (n_ranks + DDP_STRAGGLER_BLOCK - 1) / DDP_STRAGGLER_BLOCK;
  if (threads == 0)
    threads = (guint)MAX(1, g_get_num_processors());
  if (threads == 1 || n_blocks <= 1) {
    for (guint64 k = 0; k < n_blocks; k++)
      run_block(GSIZE_TO_POINTER(k + 1), &b);
    return;
  }
  GThreadPool *pool = g_thread_pool_new(run_block, &b, (gint)MIN((guint64)threads, n_blocks), TRUE, NULL);
  for (guint64 k = 0; k < n_blocks; k++)
    g_thread_pool_push(pool, GSIZE_TO_POINTER(k + 1), NULL);   /* +1: NULL is not a valid item */
  g_thread_pool_free(pool, FALSE, TRUE);
}

typedef struct {
  const DdpStragglers *s;
  double *factor;
} SampleBlocks;

static void
sample_block(GRand *rng, guint64 first, guint64 count, gpointer data)
{
  const SampleBlocks *sb = data;
  sample_factors(sb->s, rng, first, count, sb->factor + first);
}

/* "hiccup" in ASCII: the tag of the per-iteration generator of ddp_stragglers_sample_seeded(). */
#define HICCUP_TAG 0x68696363u

/**
 * ddp_stragglers_sample_seeded:
 * @factor: (out caller-allocates) (array length=n_ranks)
 * @delay: (out caller-allocates) (array length=n_ranks)
 * See straggler.h.  Block b's ranks draw from stream (seed, iteration, b, 0) in the order of
 * ddp_stragglers_sample(); the hiccup ranks come from the one stream (seed, iteration, 0, "hicc").
 */
void
ddp_stragglers_sample_seeded(const DdpStragglers *s, guint64 seed, guint64 iteration, guint64 n_ranks,
                             guint threads, double *factor, gint64 *delay)
{
  g_assert(n_ranks >= 1 && n_ranks <= G_MAXINT32);
  SampleBlocks sb = { s, factor };
  ddp_stragglers_blocks(seed, iteration, 0, n_ranks, threads, sample_block, &sb);
  memset(delay, 0, n_ranks * sizeof(gint64));
  Blocks b = { seed, iteration, n_ranks, HICCUP_TAG, NULL, NULL };
  g_autoptr(GRand) rng = block_rng(&b, 0);
  guint64 ranks[MAX_TERMS];
  gint64 delays[MAX_TERMS];
  guint n = ddp_stragglers_hiccups(s, rng, iteration, n_ranks, ranks, delays);
  for (guint i = 0; i < n; i++)
    delay[ranks[i]] += delays[i];
}

/* ---- the factor terms as one law (order statistics, docs/model.md §7) ---------------------- */

gboolean
ddp_stragglers_law(const DdpStragglers *s, DdpStragglerLaw *law)
{
  guint normals = 0, lognormals = 0;
  double normal_sigma = 0, log_var = 0;
  for (guint i = 0; i < s->n_terms; i++) {
    const Term *t = &s->terms[i];
    if (t->sigma == 0)
      continue;   /* normal:0 and lognormal:0 are factor 1 */
    if (t->kind == TERM_NORMAL) {
      normals++;
      normal_sigma = t->sigma;
    } else if (t->kind == TERM_LOGNORMAL) {
      lognormals++;
      log_var += t->sigma * t->sigma;
    }
  }
  if (normals > 1 || (normals == 1 && lognormals > 0))
    return FALSE;
  if (normals == 1)
    *law = (DdpStragglerLaw){ DDP_STRAGGLER_LAW_NORMAL, normal_sigma };
  else if (lognormals > 0)
    *law = (DdpStragglerLaw){ DDP_STRAGGLER_LAW_LOGNORMAL, sqrt(log_var) };
  else
    *law = (DdpStragglerLaw){ DDP_STRAGGLER_LAW_NONE, 0 };
  return TRUE;
}

guint
ddp_stragglers_slow_ranks(const DdpStragglers *s, guint64 *k)
{
  guint n = 0;
  for (guint i = 0; i < s->n_terms; i++)
    if (s->terms[i].kind == TERM_SLOW)
      k[n++] = s->terms[i].k;
  return n;
}

double
ddp_stragglers_persistent(const DdpStragglers *s, guint64 rank)
{
  double f = 1.0;
  for (guint i = 0; i < s->n_terms; i++)
    if (s->terms[i].kind == TERM_SLOW && rank < s->terms[i].k)
      f *= s->terms[i].factor;
  return f;
}

/* g ≤ x  ⇔  z ≤ law_z(x): the law's g is non-decreasing in z (the normal's floor 0.1 included). */
static double
law_z(const DdpStragglerLaw *law, double x)
{
  if (law->kind == DDP_STRAGGLER_LAW_NORMAL)
    return x < 0.1 ? -INFINITY : (x - 1.0) / law->sigma;
  return x <= 0 ? -INFINITY : log(x) / law->sigma;
}

static double
law_g(const DdpStragglerLaw *law, double z)
{
  if (law->kind == DDP_STRAGGLER_LAW_NORMAL) {
    double f = 1.0 + law->sigma * z;
    return MAX(0.1, f);
  }
  return exp(law->sigma * z);
}

/* P(z > a) for z ~ N(0, 1), accurate in the upper tail. */
static double
normal_tail(double a)
{
  return 0.5 * erfc(a / G_SQRT2);
}

double
ddp_straggler_law_tail(const DdpStragglerLaw *law, double x)
{
  if (law->kind == DDP_STRAGGLER_LAW_NONE)
    return x < 1.0 ? 1.0 : 0.0;
  return normal_tail(law_z(law, x));
}

double
ddp_straggler_law_upper_quantile(const DdpStragglerLaw *law, double q)
{
  g_assert(q > 0 && q < 1);
  if (law->kind == DDP_STRAGGLER_LAW_NONE)
    return 1.0;
  return law_g(law, -ddp_normal_quantile(q));
}

/* A uniform draw in (0, 1): g_rand_double() is in [0, 1) with 2^-53 steps. */
static double
open_uniform(GRand *rng)
{
  return (g_rand_double(rng) * 9007199254740992.0 + 0.5) / 9007199254740992.0;
}

/**
 * ddp_straggler_law_draw:
 * Inversion in z: with a = law_z(lo) < b = law_z(hi), z = Φ⁻¹(Φ(a) + U·(Φ(b) − Φ(a))), computed
 * on the upper tails when a ≥ 0 so that far-tail intervals keep their precision.  One
 * g_rand_double() draw.
 */
double
ddp_straggler_law_draw(const DdpStragglerLaw *law, GRand *rng, double lo, double hi)
{
  if (law->kind == DDP_STRAGGLER_LAW_NONE)
    return 1.0;
  double a = law_z(law, lo), b = law_z(law, hi), u = open_uniform(rng), z;
  if (a >= 0) {
    double qa = normal_tail(a), qb = normal_tail(b);    /* qb < qa */
    double q = qb + u * (qa - qb);
    z = -ddp_normal_quantile(CLAMP(q, 1e-300, 1.0 - 1e-16));
  } else {
    double pa = normal_tail(-a), pb = normal_tail(-b);  /* Φ(a) < Φ(b) */
    double p = pa + u * (pb - pa);
    z = ddp_normal_quantile(CLAMP(p, 1e-300, 1.0 - 1e-16));
  }
  return law_g(law, CLAMP(z, a, b));
}

/* Shortest of %.15g / %.17g that reads back as the same double, so to_string round-trips. */
static void
append_number(GString *out, double v)
{
  char buf[G_ASCII_DTOSTR_BUF_SIZE];
  g_ascii_formatd(buf, sizeof buf, "%.15g", v);
  if (g_ascii_strtod(buf, NULL) != v)
    g_ascii_formatd(buf, sizeof buf, "%.17g", v);
  g_string_append(out, buf);
}

/**
 * ddp_stragglers_to_string:
 *
 * Returns: (transfer full): the canonical spec, e.g. "normal:0.05,slow:8:1.2": terms in the order
 *   given, none terms dropped ("none" when nothing is left), numbers in their shortest exact
 *   form.  Parsing it gives the same model.  Free with g_free().
 */
char *
ddp_stragglers_to_string(const DdpStragglers *s)
{
  if (s->n_terms == 0)
    return g_strdup("none");
  GString *out = g_string_new(NULL);
  for (guint i = 0; i < s->n_terms; i++) {
    const Term *t = &s->terms[i];
    if (i > 0)
      g_string_append_c(out, ',');
    switch (t->kind) {
    case TERM_NORMAL:
    case TERM_LOGNORMAL:
      g_string_append(out, t->kind == TERM_NORMAL ? "normal:" : "lognormal:");
      append_number(out, t->sigma);
      break;
    case TERM_SLOW:
      g_string_append_printf(out, "slow:%" G_GUINT64_FORMAT ":", t->k);
      append_number(out, t->factor);
      break;
    case TERM_HICCUP:
      g_string_append_printf(out, "hiccup:%" G_GUINT64_FORMAT ":", t->every);
      append_number(out, t->ms);
      break;
    }
  }
  return g_string_free(out, FALSE);
}

/**
 * ddp_normal_quantile:
 * Acklam's algorithm (P. J. Acklam, "An algorithm for computing the inverse normal cumulative
 * distribution function", 2003; relative error 1.15e-9) refined by one Newton step on erfc.
 */
double
ddp_normal_quantile(double p)
{
  static const double a[] = { -3.969683028665376e+01, 2.209460984245205e+02, -2.759285104469687e+02,
                              1.383577518672690e+02, -3.066479806614716e+01, 2.506628277459239e+00 };
  static const double b[] = { -5.447609879822406e+01, 1.615858368580409e+02, -1.556989798598866e+02,
                              6.680131188771972e+01, -1.328068155288572e+01 };
  static const double c[] = { -7.784894002430293e-03, -3.223964580411365e-01, -2.400758277161838e+00,
                              -2.549732539343734e+00, 4.374664141464968e+00, 2.938163982698783e+00 };
  static const double d[] = { 7.784695709041462e-03, 3.224671290700398e-01, 2.445134137142996e+00,
                              3.754408661907416e+00 };
  g_assert(p > 0 && p < 1);
  double x;
  if (p < 0.02425) {
    double q = sqrt(-2 * log(p));
    x = (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
        ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
  } else if (p <= 1 - 0.02425) {
    double q = p - 0.5, r = q * q;
    x = (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q /
        (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1);
  } else {
    double q = sqrt(-2 * log1p(-p));
    x = -(((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
        ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
  }
  /* Newton on Φ(x) − p with Φ(x) = erfc(−x/√2)/2 */
  double e = 0.5 * erfc(-x / G_SQRT2) - p;
  return x - e * sqrt(2 * G_PI) * exp(x * x / 2);
}

static double
jitter_factor(double sigma, guint64 k, guint64 n)
{
  return MAX(0.1, 1.0 + sigma * ddp_normal_quantile(((double)k - 0.375) / ((double)n + 0.25)));
}

double
ddp_jitter_slowest(double sigma, guint64 n_ranks)
{
  g_assert(n_ranks >= 1);
  return jitter_factor(sigma, n_ranks, n_ranks);
}

/**
 * ddp_jitter_factors:
 * @factor: (out caller-allocates) (array length=n_ranks)
 * @position: (out caller-allocates) (nullable) (array length=n_ranks)
 * See straggler.h.  O(n_ranks).
 */
void
ddp_jitter_factors(double sigma, GRand *rng, guint64 n_ranks, double *factor, guint32 *position)
{
  g_assert(n_ranks >= 1 && n_ranks <= G_MAXINT32);
  for (guint64 k = 0; k < n_ranks; k++) {
    factor[k] = jitter_factor(sigma, k + 1, n_ranks);
    if (position)
      position[k] = (guint32)k;
  }
  for (guint64 i = n_ranks - 1; i > 0; i--) {
    guint64 j = (guint64)g_rand_int_range(rng, 0, (gint32)(i + 1));
    double t = factor[i];
    factor[i] = factor[j];
    factor[j] = t;
    if (position) {
      guint32 p = position[i];
      position[i] = position[j];
      position[j] = p;
    }
  }
}
