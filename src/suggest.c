/* suggest — the closest known name to a mistyped one (see suggest.h).  Optimal string alignment
 * distance (Damerau–Levenshtein restricted to adjacent transpositions), O(|a|·|b|) time with three
 * rows; names are short, so nothing cleverer is needed. */
#include "suggest.h"

#include <string.h>

/**
 * ddp_suggest_distance:
 * Returns the number of single-character insertions, deletions, substitutions and adjacent
 * transpositions turning @a into @b, ignoring ASCII case.
 */
guint
ddp_suggest_distance(const char *a, const char *b)
{
  gsize n = strlen(a), m = strlen(b);
  g_autofree guint *rows = g_new(guint, 3 * (m + 1));
  guint *before = rows, *prev = rows + (m + 1), *cur = rows + 2 * (m + 1);
  for (gsize j = 0; j <= m; j++)
    prev[j] = (guint)j;
  for (gsize i = 1; i <= n; i++) {
    cur[0] = (guint)i;
    for (gsize j = 1; j <= m; j++) {
      gboolean same = g_ascii_tolower(a[i - 1]) == g_ascii_tolower(b[j - 1]);
      guint best = MIN(prev[j] + 1, cur[j - 1] + 1);
      best = MIN(best, prev[j - 1] + (same ? 0 : 1));
      if (i > 1 && j > 1 && g_ascii_tolower(a[i - 1]) == g_ascii_tolower(b[j - 2]) &&
          g_ascii_tolower(a[i - 2]) == g_ascii_tolower(b[j - 1]))
        best = MIN(best, before[j - 2] + 1);
      cur[j] = best;
    }
    guint *t = before;
    before = prev, prev = cur, cur = t;
  }
  return prev[m];
}

/**
 * ddp_suggest:
 * Returns: (transfer none) (nullable) the candidate closest to @input within max(1, |input|/3)
 * edits, the earliest on ties; NULL when none is that close or @input is one of them.
 */
const char *
ddp_suggest(const char *input, const char *const *candidates)
{
  guint limit = MAX(1u, (guint)strlen(input) / 3), best_distance = G_MAXUINT;
  const char *best = NULL;
  for (gsize i = 0; candidates && candidates[i]; i++) {
    guint d = ddp_suggest_distance(input, candidates[i]);
    if (d == 0)
      return NULL;
    if (d <= limit && d < best_distance)
      best = candidates[i], best_distance = d;
  }
  return best;
}

/**
 * ddp_suggest_text:
 * Returns: (transfer full) " (did you mean \"X\"?)" naming ddp_suggest()'s answer, or "".
 */
char *
ddp_suggest_text(const char *input, const char *const *candidates)
{
  const char *best = ddp_suggest(input, candidates);
  return best ? g_strdup_printf(" (did you mean \"%s\"?)", best) : g_strdup("");
}
