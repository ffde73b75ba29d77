/* progress — the one-line progress report of a long run (sweep, scale, tune, solve): on stderr,
 * only when stderr is a terminal, so that pipes, files, --json and --csv never see it.  The line
 * says how many of how many are done, the rate, and the time left at that rate:
 *   ddpsim sweep: 37/108 points, 12.3/s, 6 s left
 * It is redrawn in place (carriage return, erase to end of line) at most ten times a second, and
 * erased when the run ends, so what the verb prints next starts on a clean line.  Safe to update
 * from several threads (sweep --jobs). */
#ifndef DDP_PROGRESS_H
#define DDP_PROGRESS_H

#include <glib.h>

typedef struct _DdpProgress DdpProgress;

/* A progress line for @verb over @total steps called @unit ("points", "simulations"); @total 0
 * when unknown (no time left is shown).  Draws nothing unless @fd is a terminal.
 * Returns: (transfer full) free with ddp_progress_free(), which erases the line. */
DdpProgress *ddp_progress_new(const char *verb, guint64 total, const char *unit, int fd);
void ddp_progress_free(DdpProgress *p);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(DdpProgress, ddp_progress_free)

/* Whether the line is drawn at all (@fd was a terminal). */
gboolean ddp_progress_enabled(const DdpProgress *p);
/* One more step done; @what (nullable) names the step just started ("64 GPUs"). */
void ddp_progress_step(DdpProgress *p, const char *what);
/* The line for @done of @total after @elapsed_s seconds (the pure formatting, for tests):
 * "ddpsim VERB: DONE/TOTAL UNIT, R/s, T left[ (WHAT)]".  Returns: (transfer full). */
char *ddp_progress_format(const char *verb, guint64 done, guint64 total, const char *unit, double elapsed_s,
                          const char *what);

#endif
