/* Tests for jointtune: the search finds a planted optimum that no one-knob search from the
 * defaults finds; the pairwise search and coordinate descent of a large space find a two-knob
 * optimum with fewer evaluations; the DDP knobs parse, apply and name the closest knob. */
#include "jointtune.h"

#include "fixture.h"

#include <math.h>

/* A planted objective over knobs a (4 values), b (4), c (3), defaults (0, 0, 0):
 *   f = 10 at the defaults, 11 wherever exactly one of a, b moves (so a one-knob sweep from the
 *   defaults finds nothing better), 8 at a = 2, b = 3 (the optimum, two knobs moved together),
 *   12 elsewhere; plus 0.01·c, so c is best left at its default. */
static gboolean
planted(const guint *x, double *objective, gpointer data, GError **error)
{
  (void)error;
  (*(guint *)data)++;
  double f = 12;
  if (x[0] == 0 && x[1] == 0)
    f = 10;
  else if (x[0] == 0 || x[1] == 0)
    f = 11;
  else if (x[0] == 2 && x[1] == 3)
    f = 8;
  *objective = f + 0.01 * x[2];
  return TRUE;
}

static const DdpJointKnob KNOBS[] = { { "a", 4, 0 }, { "b", 4, 0 }, { "c", 3, 0 } };

/* The one-knob answer: each knob swept alone from the defaults, the best of those sweeps. */
static double
one_knob_best(void)
{
  guint calls = 0;
  double best = INFINITY;
  for (guint k = 0; k < G_N_ELEMENTS(KNOBS); k++)
    for (guint v = 0; v < KNOBS[k].n_values; v++) {
      guint x[3] = { 0, 0, 0 };
      x[k] = v;
      double f;
      planted(x, &f, &calls, NULL);
      best = MIN(best, f);
    }
  return best;
}

static void
test_planted_exhaustive(void)
{
  g_assert_cmpfloat(one_knob_best(), ==, 10);   /* no one-knob search beats the defaults */
  guint calls = 0;
  g_autoptr(GError) error = NULL;
  g_autoptr(DdpJointResult) r = ddp_joint_search(KNOBS, 3, 1000, planted, &calls, &error);
  g_assert_no_error(error);
  g_assert_true(r->exhaustive);
  g_assert_cmpuint(r->space, ==, 48);
  g_assert_cmpuint(calls, ==, 48);              /* each point once */
  g_assert_cmpuint(r->points->len, ==, 48);
  g_assert_cmpuint(r->best[0], ==, 2);
  g_assert_cmpuint(r->best[1], ==, 3);
  g_assert_cmpuint(r->best[2], ==, 0);
  g_assert_cmpfloat(r->best_objective, ==, 8);
  g_assert_cmpfloat(r->default_objective, ==, 10);
  g_assert_cmpfloat_with_epsilon(r->gain, 0.2, 1e-12);   /* 1 − 8/10 */
  /* rows in index order: a·12 + b·3 + c */
  g_assert_cmpuint(g_array_index(r->points, DdpJointPoint, 33).index, ==, 33);
  g_assert_cmpfloat(g_array_index(r->points, DdpJointPoint, 2 * 12 + 3 * 3).objective, ==, 8);
}

/* Above the exhaustive limit: the defaults, one- and two-knob changes (1 + (3 + 3 + 2) + (3·3 +
 * 3·2 + 3·2) = 30 distinct points), then descent from (2, 3, 0): along a and b only known points,
 * along c the two new (2, 3, 1), (2, 3, 2); no move, so 32 evaluations, the planted optimum found. */
static void
test_planted_pairs(void)
{
  guint calls = 0;
  g_autoptr(GError) error = NULL;
  g_autoptr(DdpJointResult) r = ddp_joint_search(KNOBS, 3, 10, planted, &calls, &error);
  g_assert_no_error(error);
  g_assert_false(r->exhaustive);
  g_assert_cmpuint(calls, ==, 32);
  g_assert_cmpuint(r->best[0], ==, 2);
  g_assert_cmpuint(r->best[1], ==, 3);
  g_assert_cmpfloat(r->best_objective, ==, 8);
}

static gboolean
infeasible_default(const guint *x, double *objective, gpointer data, GError **error)
{
  (void)data, (void)error;
  *objective = x[0] == 0 ? INFINITY : 1;
  return TRUE;
}

static void
test_infeasible_default(void)
{
  g_autoptr(GError) error = NULL;
  const DdpJointKnob one[] = { { "a", 2, 0 } };
  g_assert_null(ddp_joint_search(one, 1, 10, infeasible_default, NULL, &error));
  g_assert_error(error, DDP_JOINTTUNE_ERROR, DDP_JOINTTUNE_ERROR_INVALID);
}

static GArray *
doubles(const double *v, guint n)
{
  GArray *a = g_array_new(FALSE, FALSE, sizeof(double));
  g_array_append_vals(a, v, n);
  return a;
}

/* The DDP space: values, defaults, and the knobs applied to a scenario. */
static void
test_space(void)
{
  static const double caps_v[] = { 1, 4, 25, 64 }, firsts_v[] = { 1, 4 };
  g_autoptr(GArray) caps = doubles(caps_v, 4);
  g_autoptr(GArray) firsts = doubles(firsts_v, 2);
  g_autoptr(GError) error = NULL;
  g_autoptr(DdpJointSpace) space =
    ddp_joint_space_new("bucket-cap, accumulate,comm-hook,gradient-as-bucket-view,first-bucket", caps, firsts, &error);
  g_assert_no_error(error);
  g_assert_cmpuint(ddp_joint_space_n_knobs(space), ==, 5);
  const DdpJointKnob *k = ddp_joint_space_knobs(space);
  g_assert_cmpuint(k[0].default_index, ==, 2);   /* 25 MiB */
  g_assert_cmpuint(k[1].n_values, ==, 4);        /* 1, 2, 4, 8 */
  g_assert_cmpuint(k[2].n_values, ==, 3);        /* none, fp16, bf16 */
  g_autoptr(DdpScenario) s = fixture_scenario("tiny.model", 4, "none");
  guint choice[] = { 3, 2, 1, 1, 1 };
  DdpScenario at;
  ddp_joint_space_apply(space, choice, s, &at);
  g_assert_cmpfloat(at.setup.buckets.bucket_cap_mb, ==, 64);
  g_assert_cmpuint(at.setup.accumulate, ==, 4);
  g_assert_cmpint(at.setup.comm_hook, ==, DDP_HOOK_FP16);
  g_assert_true(at.setup.gradient_as_bucket_view);
  g_assert_cmpuint(at.setup.buckets.first_bucket_bytes, ==, 4u << 20);
  g_autofree char *hook = ddp_joint_space_format(space, 2, 1);
  g_assert_cmpstr(hook, ==, "fp16");

  /* a mistyped knob names the closest one; a repeated one is refused */
  g_assert_null(ddp_joint_space_new("bucket-cap,comm_hook", caps, firsts, &error));
  g_assert_error(error, DDP_JOINTTUNE_ERROR, DDP_JOINTTUNE_ERROR_INVALID);
  g_assert_nonnull(strstr(error->message, "did you mean \"comm-hook\""));
  g_clear_error(&error);
  g_assert_null(ddp_joint_space_new("accumulate,accumulate", caps, firsts, &error));
  g_assert_error(error, DDP_JOINTTUNE_ERROR, DDP_JOINTTUNE_ERROR_INVALID);
}

int
main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/jointtune/planted/exhaustive", test_planted_exhaustive);
  g_test_add_func("/jointtune/planted/pairs", test_planted_pairs);
  g_test_add_func("/jointtune/infeasible-default", test_infeasible_default);
  g_test_add_func("/jointtune/space", test_space);
  return g_test_run();
}
