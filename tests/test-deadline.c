/* Tests for deadline: `solve --for gpus --deadline-hours` and `--budget` on the closed-form
 * fixture of test-solve.c: tests/data/tiny.model (batch 32) on tests/data/ab4.cluster (alpha-beta
 * ring, 4 GPUs/node, intra 100 GB/s, α 5 µs), one bucket, every overhead off, so that
 *   T(N) = 604 306 + AR(N) ns,  AR(N) = 2(N−1)/N · 83 968 + 2(N−1) · 5 000  (one node)
 *   T(1) = 604 306, T(2) = 698 274, T(3) = 736 263.3, T(4) = 760 258 ns
 * and N GPUs process 32·N samples per T(N).  Training S = 32·10^7 samples takes
 *   hours(N) = 10^7 · T(N) / N / 3.6·10^12 = T(N) / (N · 360 000)
 *   hours(1) = 1.678628, hours(2) = 0.969825, hours(3) = 0.681725, hours(4) = 0.527957
 * and at 2 per GPU-hour costs 2 · N · hours(N): 3.357256, 3.879300, 4.090352, 4.223656.
 * Across two nodes (8 GPUs) the ring runs at the 100 Gb/s NIC: slower per GPU and dearer still. */
#include "deadline.h"

#include "fixture.h"

static DdpScenario *
scenario(void)
{
  DdpScenario *s = fixture_scenario("tiny.model", 4, "none");
  s->cluster->overlap_slowdown = 0;
  s->setup.iterations = 2;
  fixture_single_bucket(s);
  g_assert_cmpfloat(s->setup.batch, ==, 32);
  return s;
}

static const DdpCost COST = { .price_per_gpu_hour = 2, .train_samples = 32e7 };

static DdpDeadlineResult *
solve(const DdpScenario *s, double deadline, double budget)
{
  DdpDeadlineOptions o = { .deadline_hours = deadline, .budget = budget, .max = 64 };
  g_autoptr(GError) error = NULL;
  DdpDeadlineResult *r = ddp_deadline_solve(s, &COST, &o, &error);
  g_assert_no_error(error);
  g_assert_nonnull(r);
  return r;
}

/* Deadline 0.75 h: 2 GPUs take 0.970 h (too long), 3 take 0.682 h; the grid (1, 2, 4, 8, … 64)
 * first meets it at 4, bisection finds 3, and 3 is cheaper than 4 and everything above. */
static void
test_deadline_hand(void)
{
  g_autoptr(DdpScenario) s = scenario();
  g_autoptr(DdpDeadlineResult) r = solve(s, 0.75, 0);
  g_assert_cmpint(r->status, ==, DDP_DEADLINE_FOUND);
  g_assert_cmpuint(r->answer.gpus, ==, 3);
  g_assert_cmpfloat_with_epsilon(r->answer.train_hours, 0.681725, 1e-6);
  g_assert_cmpfloat_with_epsilon(r->answer.train_cost, 4.090352, 1e-5);
  g_assert_true(r->has_neighbour);
  g_assert_cmpuint(r->neighbour.gpus, ==, 2);
  g_assert_cmpfloat_with_epsilon(r->neighbour.train_hours, 0.969825, 1e-6);
  g_assert_false(r->neighbour.meets);
  g_assert_cmpuint(r->grid->len, ==, 7);
  g_assert_cmpuint(r->simulations, ==, 8);   /* the grid and one bisection step */

  /* a deadline even 1 GPU meets: 1 GPU, the cheapest */
  g_autoptr(DdpDeadlineResult) easy = solve(s, 2, 0);
  g_assert_cmpuint(easy->answer.gpus, ==, 1);
  g_assert_cmpfloat_with_epsilon(easy->answer.train_cost, 3.357256, 1e-5);
  /* a deadline and a budget that cannot both hold: 3 GPUs meet 0.75 h but cost 4.09 > 4 */
  g_autoptr(DdpDeadlineResult) both = solve(s, 0.75, 4);
  g_assert_cmpint(both->status, ==, DDP_DEADLINE_UNREACHABLE);
}

/* Budget 4.1: 3 GPUs cost 4.090, 4 cost 4.224; the fastest count within it is 3. */
static void
test_budget_hand(void)
{
  g_autoptr(DdpScenario) s = scenario();
  g_autoptr(DdpDeadlineResult) r = solve(s, 0, 4.1);
  g_assert_cmpint(r->status, ==, DDP_DEADLINE_FOUND);
  g_assert_cmpuint(r->answer.gpus, ==, 3);
  g_assert_cmpuint(r->neighbour.gpus, ==, 4);
  g_assert_cmpfloat(r->neighbour.train_cost, >, 4.1);
}

/* The predicate alone: unpriced, cost is GPU-hours; out of memory never meets. */
static void
test_point(void)
{
  DdpCost unpriced = { .train_samples = 3.6e6 };
  DdpDeadlineOptions o = { .deadline_hours = 1 };
  DdpDeadlinePoint p = { .gpus = 4, .feasible = TRUE, .samples_per_s = 1000, .fits = TRUE };
  ddp_deadline_point_cost(&unpriced, &o, &p);
  g_assert_cmpfloat_with_epsilon(p.train_hours, 1, 1e-12);
  g_assert_cmpfloat_with_epsilon(p.train_cost, 4, 1e-12);
  g_assert_true(p.meets);
  p.fits = FALSE;
  ddp_deadline_point_cost(&unpriced, &o, &p);
  g_assert_false(p.meets);
}

static void
test_errors(void)
{
  g_autoptr(DdpScenario) s = scenario();
  DdpCost no_length = { .price_per_gpu_hour = 2 };
  DdpDeadlineOptions o = { .deadline_hours = 1 };
  g_autoptr(GError) error = NULL;
  g_assert_null(ddp_deadline_solve(s, &no_length, &o, &error));
  g_assert_error(error, DDP_COST_ERROR, DDP_COST_ERROR_INVALID);
}

int
main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/deadline/deadline/hand", test_deadline_hand);
  g_test_add_func("/deadline/budget/hand", test_budget_hand);
  g_test_add_func("/deadline/point", test_point);
  g_test_add_func("/deadline/errors", test_errors);
  return g_test_run();
}
