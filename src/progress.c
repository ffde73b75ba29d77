/* progress — the progress line of long runs (see progress.h).  Time left is the plain estimate
 * (total − done) / rate with the rate over the whole run so far: the steps of one run cost about the
 * same (one simulation each), so nothing smarter is needed. */
#include "progress.h"

#include <string.h>
#include <unistd.h>

struct _DdpProgress {
  char *verb, *unit;
  guint64 total, done;
  int fd;
  gboolean enabled;
  gint64 start_us, drawn_us;
  GMutex lock;
};

DdpProgress *
ddp_progress_new(const char *verb, guint64 total, const char *unit, int fd)
{
  DdpProgress *p = g_new0(DdpProgress, 1);
  p->verb = g_strdup(verb);
  p->unit = g_strdup(unit);
  p->total = total;
  p->fd = fd;
  p->enabled = isatty(fd) == 1;
  p->start_us = g_get_monotonic_time();
  p->drawn_us = -1;
  g_mutex_init(&p->lock);
  return p;
}

gboolean
ddp_progress_enabled(const DdpProgress *p)
{
  return p->enabled;
}

/* "45 s", "3 min", "2.1 h" */
static char *
duration(double s)
{
  if (s < 90)
    return g_strdup_printf("%.0f s", s);
  if (s < 5400)
    return g_strdup_printf("%.0f min", s / 60);
  return g_strdup_printf("%.1f h", s / 3600);
}

/**
 * ddp_progress_format:
 * Returns: (transfer full) the progress line (no carriage return): count, rate, time left.
 */
char *
ddp_progress_format(const char *verb, guint64 done, guint64 total, const char *unit, double elapsed_s, const char *what)
{
  GString *line = g_string_new(NULL);
  g_string_append_printf(line, "ddpsim %s: %" G_GUINT64_FORMAT, verb, done);
  if (total)
    g_string_append_printf(line, "/%" G_GUINT64_FORMAT, total);
  g_string_append_printf(line, " %s", unit);
  if (done > 0 && elapsed_s > 0) {
    double rate = (double)done / elapsed_s;
    g_string_append_printf(line, ", %.3g/s", rate);
    if (total >= done) {
      g_autofree char *left = duration((double)(total - done) / rate);
      g_string_append_printf(line, ", %s left", left);
    }
  }
  if (what)
    g_string_append_printf(line, " (%s)", what);
  return g_string_free(line, FALSE);
}

static void
draw(DdpProgress *p, const char *what, gint64 now)
{
  g_autofree char *line = ddp_progress_format(p->verb, p->done, p->total, p->unit, (double)(now - p->start_us) / 1e6, what);
  /* erase to the end of the line: the previous line may have been longer */
  g_autofree char *text = g_strdup_printf("\r%s\033[K", line);
  if (write(p->fd, text, strlen(text)) < 0) {
    /* a progress line that cannot be written is no reason to fail the run */
  }
  p->drawn_us = now;
}

/**
 * ddp_progress_step:
 * Counts one step and redraws the line if the last draw is 0.1 s old (or this is the first).
 */
void
ddp_progress_step(DdpProgress *p, const char *what)
{
  if (!p->enabled)
    return;
  g_mutex_lock(&p->lock);
  p->done++;
  gint64 now = g_get_monotonic_time();
  if (p->drawn_us < 0 || now - p->drawn_us >= 100000)
    draw(p, what, now);
  g_mutex_unlock(&p->lock);
}

void
ddp_progress_free(DdpProgress *p)
{
  if (!p)
    return;
  if (p->enabled && p->drawn_us >= 0 && write(p->fd, "\r\033[K", 4) < 0) {
    /* as in draw() */
  }
  g_mutex_clear(&p->lock);
  g_free(p->verb);
  g_free(p->unit);
  g_free(p);
}
