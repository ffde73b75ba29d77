/* des — discrete-event kernel (see des.h).
 *
 * Design note: a binary min-heap of event records keyed by (time, seq).  seq is a global
 * insertion counter, so the key is unique and ties break FIFO without comparing floats or
 * pointers.  Cancellation is lazy: a hash set of live ids; a cancelled event stays in the heap and
 * is dropped when it reaches the top.  That keeps cancel O(1) and the heap simple; a calendar
 * queue would win for millions of pending events with uniform times, but DDP iterations keep only
 * a handful pending at once (bucket granularity).
 */
#include "des.h"

/* Ids are stored in the live set as pointer-sized integers: no allocation per event. */
G_STATIC_ASSERT(sizeof(gpointer) >= sizeof(guint64));
#define ID_KEY(id) ((gpointer)(guintptr)(id))

typedef struct {
  gint64 time;
  guint64 seq;       /* also the event id */
  DdpDesHandler handler;
  gpointer data;
} Event;

struct _DdpDes {
  gint64 now;
  guint64 next_seq;
  guint64 events_run;
  GArray *heap;       /* of Event */
  GHashTable *live;   /* ids of pending, not cancelled events */
};

static gboolean
event_before(const Event *a, const Event *b)
{
  return a->time < b->time || (a->time == b->time && a->seq < b->seq);
}

DdpDes *
ddp_des_new(void)
{
  DdpDes *des = g_new0(DdpDes, 1);
  des->next_seq = 1;
  des->heap = g_array_new(FALSE, FALSE, sizeof(Event));
  des->live = g_hash_table_new(g_direct_hash, g_direct_equal);
  return des;
}

void
ddp_des_free(DdpDes *des)
{
  if (!des)
    return;
  g_array_free(des->heap, TRUE);
  g_hash_table_destroy(des->live);
  g_free(des);
}

gint64
ddp_des_now(const DdpDes *des)
{
  return des->now;
}

static void
sift_up(GArray *heap, guint i)
{
  Event *e = (Event *)(void *)heap->data;
  while (i > 0) {
    guint parent = (i - 1) / 2;
    if (!event_before(&e[i], &e[parent]))
      break;
    Event tmp = e[i];
    e[i] = e[parent];
    e[parent] = tmp;
    i = parent;
  }
}

static void
sift_down(GArray *heap, guint i)
{
  Event *e = (Event *)(void *)heap->data;
  guint n = heap->len;
  for (;;) {
    guint l = 2 * i + 1, r = l + 1, m = i;
    if (l < n && event_before(&e[l], &e[m]))
      m = l;
    if (r < n && event_before(&e[r], &e[m]))
      m = r;
    if (m == i)
      return;
    Event tmp = e[i];
    e[i] = e[m];
    e[m] = tmp;
    i = m;
  }
}

/**
 * ddp_des_schedule:
 * @at_ns: absolute simulated time; must not be in the past (programmer error otherwise)
 *
 * Returns: the event's id (for ddp_des_cancel).  @data is borrowed, never freed by the kernel.
 */
DdpDesEventId
ddp_des_schedule(DdpDes *des, gint64 at_ns, DdpDesHandler handler, gpointer data)
{
  g_assert(at_ns >= des->now);
  g_assert(handler != NULL);
  Event e = { at_ns, des->next_seq++, handler, data };
  g_array_append_val(des->heap, e);
  sift_up(des->heap, des->heap->len - 1);
  g_hash_table_add(des->live, ID_KEY(e.seq));
  return e.seq;
}

gboolean
ddp_des_cancel(DdpDes *des, DdpDesEventId id)
{
  return g_hash_table_remove(des->live, ID_KEY(id));
}

static Event
pop(DdpDes *des)
{
  Event top = g_array_index(des->heap, Event, 0);
  guint last = des->heap->len - 1;
  g_array_index(des->heap, Event, 0) = g_array_index(des->heap, Event, last);
  g_array_set_size(des->heap, last);
  if (last > 0)
    sift_down(des->heap, 0);
  return top;
}

static guint64
run(DdpDes *des, gboolean bounded, gint64 until_ns)
{
  guint64 ran = 0;
  while (des->heap->len > 0) {
    const Event *top = &g_array_index(des->heap, Event, 0);
    if (bounded && top->time > until_ns)
      break;
    Event e = pop(des);
    if (!g_hash_table_remove(des->live, ID_KEY(e.seq)))
      continue; /* cancelled */
    des->now = e.time;
    des->events_run++;
    ran++;
    e.handler(des, e.data);
  }
  if (bounded && until_ns > des->now)
    des->now = until_ns;
  return ran;
}

guint64
ddp_des_run(DdpDes *des)
{
  return run(des, FALSE, 0);
}

guint64
ddp_des_run_until(DdpDes *des, gint64 until_ns)
{
  g_assert(until_ns >= des->now);
  return run(des, TRUE, until_ns);
}

gsize
ddp_des_pending(const DdpDes *des)
{
  return g_hash_table_size(des->live);
}

guint64
ddp_des_events_run(const DdpDes *des)
{
  return des->events_run;
}

/* Heap property holds, no pending event is in the past, and every live id is in the heap. */
gboolean
ddp_des_check(const DdpDes *des)
{
  const Event *e = (const Event *)(const void *)des->heap->data;
  guint live_in_heap = 0;
  for (guint i = 0; i < des->heap->len; i++) {
    if (i > 0 && event_before(&e[i], &e[(i - 1) / 2]))
      return FALSE;
    if (e[i].time < des->now)
      return FALSE;
    if (g_hash_table_contains(des->live, ID_KEY(e[i].seq)))
      live_in_heap++;
  }
  return live_in_heap == g_hash_table_size(des->live);
}
