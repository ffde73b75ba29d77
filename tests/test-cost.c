/* Tests for cost: the closed forms of cost.h checked against numbers derived by hand, and the
 * flags' bad-input paths (domain and code). */
#include "cost.h"

#include "fixture.h"
#include "ranges.h"

#include <math.h>

/* 64 GPUs at 2 per GPU-hour and 28 713.7 samples/s:
 *   the job costs 64 · 2 / 3600 = 0.0355556 per second
 *   per 1000 samples: 0.0355556 · 1000 / 28 713.7 = 0.00123828
 *   115e6 samples take 115e6 / 28 713.7 / 3600 = 1.1125158 h and cost 64 · 2 · 1.1125158 = 142.4020
 * A sequence model of 1024 tokens: per 10^6 tokens 0.0355556 · 10^6 / (28 713.7 · 1024) = 0.00120926. */
static void
test_closed_forms(void)
{
  DdpCost cost = { .price_per_gpu_hour = 2, .train_samples = 115e6 };
  DdpCostEstimate e = ddp_cost_estimate(&cost, 64, 28713.7);
  g_assert_cmpfloat_with_epsilon(e.cost_per_1k_samples, 0.00123828, 1e-8);
  g_assert_cmpfloat_with_epsilon(e.train_hours, 1.1125158, 1e-7);
  g_assert_cmpfloat_with_epsilon(e.train_cost, 142.4020, 1e-4);
  g_assert_true(isnan(e.cost_per_1m_tokens));   /* not a sequence model */

  cost.tokens_per_sample = 1024;
  e = ddp_cost_estimate(&cost, 64, 28713.7);
  g_assert_cmpfloat_with_epsilon(e.cost_per_1m_tokens, 0.00120926, 1e-8);
  /* the identity behind it: cost to train = cost per sample × samples */
  g_assert_cmpfloat_with_epsilon(e.train_cost, e.cost_per_1k_samples * 115e6 / 1000, 1e-6);
}

/* No price: time to train only; no length: cost per sample only; an infeasible point: nothing. */
static void
test_unknowns(void)
{
  DdpCost time_only = { .train_samples = 3.6e6 };
  DdpCostEstimate e = ddp_cost_estimate(&time_only, 8, 1000);   /* 3.6e6 / 1000 / 3600 = 1 h */
  g_assert_cmpfloat_with_epsilon(e.train_hours, 1, 1e-12);
  g_assert_true(isnan(e.train_cost));
  g_assert_true(isnan(e.cost_per_1k_samples));
  DdpCost price_only = { .price_per_gpu_hour = 3.6 };
  e = ddp_cost_estimate(&price_only, 1, 1);   /* 3.6 / 3600 · 1000 / 1 = 1 per 1000 samples */
  g_assert_cmpfloat_with_epsilon(e.cost_per_1k_samples, 1, 1e-12);
  g_assert_true(isnan(e.train_hours));
  e = ddp_cost_estimate(&price_only, 1, 0);
  g_assert_true(isnan(e.cost_per_1k_samples));

  /* the JSON writes only what is known */
  DdpJson *j = ddp_json_new();
  ddp_json_begin_object(j, NULL);
  DdpCostEstimate t = ddp_cost_estimate(&time_only, 8, 1000);
  ddp_cost_json(j, &time_only, &t);
  ddp_json_end_object(j);
  g_autofree char *text = ddp_json_free_to_string(j);
  g_assert_null(strstr(text, "cost"));
  g_assert_nonnull(strstr(text, "\"train_hours\": 1"));
}

/* Flags over the cluster's price; tokens ÷ seq_len; the refusals. */
static void
test_init(void)
{
  g_autoptr(DdpScenario) s = fixture_scenario("tiny.model", 4, "none");
  s->cluster->price_per_gpu_hour = 1.5;
  DdpCost cost;
  DdpCostFlags none = { 0 };
  g_autoptr(GError) error = NULL;
  g_assert_true(ddp_cost_init(&cost, &none, s, &error));
  g_assert_cmpfloat(cost.price_per_gpu_hour, ==, 1.5);
  g_assert_cmpfloat(cost.train_samples, ==, 0);

  DdpCostFlags flags = { .price_per_gpu_hour = "2.5", .train_samples = "1e6" };
  g_assert_true(ddp_cost_init(&cost, &flags, s, &error));
  g_assert_cmpfloat(cost.price_per_gpu_hour, ==, 2.5);
  g_assert_cmpfloat(cost.train_samples, ==, 1e6);

  DdpCostFlags tokens = { .train_tokens = "1e9" };
  g_assert_false(ddp_cost_init(&cost, &tokens, s, &error));   /* tiny.model has no seq_len */
  g_assert_error(error, DDP_COST_ERROR, DDP_COST_ERROR_INVALID);
  g_assert_nonnull(strstr(error->message, "--train-tokens"));
  g_clear_error(&error);
  s->model->seq_len = 1000;
  g_assert_true(ddp_cost_init(&cost, &tokens, s, &error));
  g_assert_cmpfloat(cost.train_samples, ==, 1e6);

  DdpCostFlags both = { .train_tokens = "1e9", .train_samples = "5" };
  g_assert_false(ddp_cost_init(&cost, &both, s, &error));
  g_assert_error(error, DDP_COST_ERROR, DDP_COST_ERROR_INVALID);
  g_clear_error(&error);
  const char *bad[] = { "0", "-1", "1e7", "abc" };
  for (gsize i = 0; i < G_N_ELEMENTS(bad); i++) {
    DdpCostFlags price = { .price_per_gpu_hour = (char *)bad[i] };
    g_assert_false(ddp_cost_init(&cost, &price, s, &error));
    g_assert_error(error, DDP_RANGE_ERROR, DDP_RANGE_ERROR_RANGE);
    g_assert_nonnull(strstr(error->message, "--price-per-gpu-hour"));
    g_clear_error(&error);
  }
}

static void
test_format_hours(void)
{
  const struct {
    double hours;
    const char *text;
  } cases[] = { { 0.01, "36 s" }, { 0.5, "30 min" }, { 6.25, "6.25 h" }, { 72, "3 days" }, { NAN, "-" } };
  for (gsize i = 0; i < G_N_ELEMENTS(cases); i++) {
    g_autofree char *text = ddp_cost_format_hours(cases[i].hours);
    g_assert_cmpstr(text, ==, cases[i].text);
  }
}

int
main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/cost/closed-forms", test_closed_forms);
  g_test_add_func("/cost/unknowns", test_unknowns);
  g_test_add_func("/cost/init", test_init);
  g_test_add_func("/cost/format-hours", test_format_hours);
  return g_test_run();
}
