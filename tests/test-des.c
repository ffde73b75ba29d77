/* Tests for the event kernel: (time, sequence) order, FIFO ties, cancellation, run_until, and a
 * million events with the heap invariant checked along the way. */
#include "des.h"

typedef struct {
  GArray *log;   /* of int: the tag of each event as it fires */
  int tag;
} Probe;

static void
log_tag(DdpDes *des, gpointer data)
{
  Probe *p = data;
  g_array_append_val(p->log, p->tag);
}

static void
test_order(void)
{
  g_autoptr(DdpDes) des = ddp_des_new();
  g_autoptr(GArray) log = g_array_new(FALSE, FALSE, sizeof(int));
  /* scheduled out of order: times 30, 10, 20 → fire as tags 1, 2, 0 */
  Probe p[3] = { { log, 0 }, { log, 1 }, { log, 2 } };
  ddp_des_schedule(des, 30, log_tag, &p[0]);
  ddp_des_schedule(des, 10, log_tag, &p[1]);
  ddp_des_schedule(des, 20, log_tag, &p[2]);
  g_assert_true(ddp_des_check(des));
  g_assert_cmpuint(ddp_des_run(des), ==, 3);
  g_assert_cmpint(g_array_index(log, int, 0), ==, 1);
  g_assert_cmpint(g_array_index(log, int, 1), ==, 2);
  g_assert_cmpint(g_array_index(log, int, 2), ==, 0);
  g_assert_cmpint(ddp_des_now(des), ==, 30);
}

static void
test_ties_fifo(void)
{
  g_autoptr(DdpDes) des = ddp_des_new();
  g_autoptr(GArray) log = g_array_new(FALSE, FALSE, sizeof(int));
  Probe p[100];
  for (int i = 0; i < 100; i++) {
    p[i] = (Probe){ log, i };
    ddp_des_schedule(des, 5, log_tag, &p[i]);
  }
  ddp_des_run(des);
  for (int i = 0; i < 100; i++)
    g_assert_cmpint(g_array_index(log, int, i), ==, i);
}

static void
test_cancel(void)
{
  g_autoptr(DdpDes) des = ddp_des_new();
  g_autoptr(GArray) log = g_array_new(FALSE, FALSE, sizeof(int));
  Probe p[3] = { { log, 0 }, { log, 1 }, { log, 2 } };
  DdpDesEventId a = ddp_des_schedule(des, 10, log_tag, &p[0]);
  DdpDesEventId b = ddp_des_schedule(des, 20, log_tag, &p[1]);
  ddp_des_schedule(des, 30, log_tag, &p[2]);
  g_assert_true(ddp_des_cancel(des, b));
  g_assert_false(ddp_des_cancel(des, b));        /* twice */
  g_assert_false(ddp_des_cancel(des, 12345));    /* never existed */
  g_assert_cmpuint(ddp_des_pending(des), ==, 2);
  g_assert_true(ddp_des_check(des));
  g_assert_cmpuint(ddp_des_run(des), ==, 2);
  g_assert_false(ddp_des_cancel(des, a));        /* already ran */
  g_assert_cmpuint(log->len, ==, 2);
  g_assert_cmpint(g_array_index(log, int, 0), ==, 0);
  g_assert_cmpint(g_array_index(log, int, 1), ==, 2);
}

static void
test_run_until(void)
{
  g_autoptr(DdpDes) des = ddp_des_new();
  g_autoptr(GArray) log = g_array_new(FALSE, FALSE, sizeof(int));
  Probe p[3] = { { log, 0 }, { log, 1 }, { log, 2 } };
  ddp_des_schedule(des, 10, log_tag, &p[0]);
  ddp_des_schedule(des, 20, log_tag, &p[1]);
  ddp_des_schedule(des, 30, log_tag, &p[2]);
  /* events at exactly the bound run; the clock then sits at the bound */
  g_assert_cmpuint(ddp_des_run_until(des, 20), ==, 2);
  g_assert_cmpint(ddp_des_now(des), ==, 20);
  g_assert_cmpuint(ddp_des_run_until(des, 25), ==, 0);
  g_assert_cmpint(ddp_des_now(des), ==, 25);
  g_assert_cmpuint(ddp_des_pending(des), ==, 1);
  g_assert_cmpuint(ddp_des_run(des), ==, 1);
  g_assert_cmpuint(ddp_des_events_run(des), ==, 3);
}

/* An event that schedules another at the same time: it runs after everything already queued for
 * that time (sequence order), not before. */
typedef struct {
  GArray *log;
  Probe *late;
} Chain;

static void
chain_first(DdpDes *des, gpointer data)
{
  Chain *c = data;
  int tag = 100;
  g_array_append_val(c->log, tag);
  ddp_des_schedule(des, ddp_des_now(des), log_tag, c->late);
}

static void
test_reentrant(void)
{
  g_autoptr(DdpDes) des = ddp_des_new();
  g_autoptr(GArray) log = g_array_new(FALSE, FALSE, sizeof(int));
  Probe late = { log, 300 }, other = { log, 200 };
  Chain chain = { log, &late };
  ddp_des_schedule(des, 7, chain_first, &chain);
  ddp_des_schedule(des, 7, log_tag, &other);
  ddp_des_run(des);
  g_assert_cmpuint(log->len, ==, 3);
  g_assert_cmpint(g_array_index(log, int, 0), ==, 100);
  g_assert_cmpint(g_array_index(log, int, 1), ==, 200);
  g_assert_cmpint(g_array_index(log, int, 2), ==, 300);
}

/* 10^6 events with pseudo-random times: they fire in non-decreasing time, ties in sequence order. */
typedef struct {
  gint64 last_time;
  guint64 last_seq_at_time;
  guint64 fired;
  gboolean ordered;
} Monotone;

typedef struct {
  Monotone *m;
  guint64 seq;
} Ticket;

static void
check_monotone(DdpDes *des, gpointer data)
{
  Ticket *t = data;
  Monotone *m = t->m;
  gint64 now = ddp_des_now(des);
  if (now < m->last_time || (now == m->last_time && t->seq < m->last_seq_at_time))
    m->ordered = FALSE;
  m->last_time = now;
  m->last_seq_at_time = t->seq;
  m->fired++;
}

static void
test_million(void)
{
  const guint n = 1000000;
  g_autoptr(DdpDes) des = ddp_des_new();
  g_autoptr(GRand) rng = g_rand_new_with_seed(42);
  Monotone m = { G_MININT64, 0, 0, TRUE };
  g_autofree Ticket *tickets = g_new(Ticket, n);
  for (guint i = 0; i < n; i++) {
    tickets[i] = (Ticket){ &m, i };
    ddp_des_schedule(des, g_rand_int_range(rng, 0, 1000), check_monotone, &tickets[i]);
    if (i % 100000 == 0)
      g_assert_true(ddp_des_check(des));
  }
  g_assert_cmpuint(ddp_des_pending(des), ==, n);
  g_assert_cmpuint(ddp_des_run(des), ==, n);
  g_assert_true(m.ordered);
  g_assert_cmpuint(m.fired, ==, n);
  g_assert_cmpuint(ddp_des_pending(des), ==, 0);
}

int
main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/des/order", test_order);
  g_test_add_func("/des/ties-fifo", test_ties_fifo);
  g_test_add_func("/des/cancel", test_cancel);
  g_test_add_func("/des/run-until", test_run_until);
  g_test_add_func("/des/reentrant-same-time", test_reentrant);
  g_test_add_func("/des/million-events", test_million);
  return g_test_run();
}
