/* des — the discrete-event kernel: an integer-nanosecond clock and a queue of events ordered by
 * (time, insertion sequence), so simultaneous events run in the order they were scheduled and every
 * run is deterministic (STYLE habit 5; SimGrid/ns-3 practice).  The engine owns the clock; models
 * only schedule events. */
#ifndef DDP_DES_H
#define DDP_DES_H

#include <glib.h>

typedef struct _DdpDes DdpDes;
typedef guint64 DdpDesEventId;   /* never 0 */

/* Called when the event fires; ddp_des_now() is the event's time.  It may schedule or cancel. */
typedef void (*DdpDesHandler)(DdpDes *des, gpointer data);

DdpDes *ddp_des_new(void);
void ddp_des_free(DdpDes *des);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(DdpDes, ddp_des_free)

gint64 ddp_des_now(const DdpDes *des);
/* Schedules @handler at absolute time @at_ns (>= now). */
DdpDesEventId ddp_des_schedule(DdpDes *des, gint64 at_ns, DdpDesHandler handler, gpointer data);
/* Cancels a pending event; FALSE when it already ran, was cancelled, or never existed. */
gboolean ddp_des_cancel(DdpDes *des, DdpDesEventId id);
/* Runs events until the queue is empty; returns how many ran. */
guint64 ddp_des_run(DdpDes *des);
/* Runs events with time <= @until_ns, then sets the clock to @until_ns; returns how many ran. */
guint64 ddp_des_run_until(DdpDes *des, gint64 until_ns);
/* Pending (not cancelled) events. */
gsize ddp_des_pending(const DdpDes *des);
/* Total events run since creation. */
guint64 ddp_des_events_run(const DdpDes *des);
/* Heap-order and bookkeeping invariants; for tests and g_assert. */
gboolean ddp_des_check(const DdpDes *des);

#endif
