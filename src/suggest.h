/* suggest — "did you mean" for names a user mistypes (models, clusters, verbs, option values):
 * the closest candidate by Damerau–Levenshtein distance (insertions, deletions, substitutions and
 * transpositions of adjacent characters each cost 1; case ignored), as git's "did you mean"
 * does.  A candidate is offered only when it is close enough to be the likely intent: at most
 * max(1, length/3) edits, so "resnet-50" finds "resnet50" but "vgg" finds nothing in a list
 * without it. */
#ifndef DDP_SUGGEST_H
#define DDP_SUGGEST_H

#include <glib.h>

/* The edit distance between @a and @b (ASCII case-insensitive, bytes). */
guint ddp_suggest_distance(const char *a, const char *b);

/* The closest of @candidates (NULL-terminated) to @input, or NULL when none is close enough.  Ties
 * go to the earlier candidate.  Returns: (transfer none) one of @candidates. */
const char *ddp_suggest(const char *input, const char *const *candidates);

/* " (did you mean \"X\"?)" for ddp_suggest()'s answer, or "" — ready to append to a message.
 * Returns: (transfer full). */
char *ddp_suggest_text(const char *input, const char *const *candidates);

#endif
