/* cost — cost and time to train from a price per GPU-hour and simulated throughput (see cost.h;
 * the closed forms are derived in docs/cost.md).  A GPU is billed for every hour of the job
 * whether it computes or waits, so cost follows from wall-clock time × GPUs × price: what scaling
 * efficiency loses, the bill pays (cost per sample = price / (per-GPU throughput at N), and the
 * per-GPU throughput is the 1-GPU one times the efficiency). */
#include "cost.h"

#include "ranges.h"

#include <math.h>
#include <string.h>

G_DEFINE_QUARK(ddp-cost-error-quark, ddp_cost_error)

/**
 * ddp_cost_option_entries:
 * @own: (nullable): the verb's own entries, NULL-terminated
 * @flags: where the cost flags store their text
 * Returns: (transfer full) @own followed by the cost flags and a terminator; g_free() it.
 */
GOptionEntry *
ddp_cost_option_entries(const GOptionEntry *own, DdpCostFlags *flags)
{
  const GOptionEntry cost[] = {
    { "price-per-gpu-hour", 0, 0, G_OPTION_ARG_STRING, &flags->price_per_gpu_hour,
      "Price of one GPU-hour (any currency; overrides the cluster's price_per_gpu_hour): adds cost fields", "P" },
    { "train-samples", 0, 0, G_OPTION_ARG_STRING, &flags->train_samples,
      "Training length in samples: adds wall-clock time (and cost) to train", "N" },
    { "train-tokens", 0, 0, G_OPTION_ARG_STRING, &flags->train_tokens,
      "Training length in tokens (sequence models: tokens = samples x seq_len)", "N" },
  };
  gsize n_own = 0;
  while (own && own[n_own].long_name)
    n_own++;
  GOptionEntry *all = g_new0(GOptionEntry, n_own + G_N_ELEMENTS(cost) + 1);
  if (n_own)
    memcpy(all, own, n_own * sizeof *own);
  memcpy(all + n_own, cost, sizeof cost);
  return all;
}

void
ddp_cost_flags_clear(DdpCostFlags *flags)
{
  g_clear_pointer(&flags->price_per_gpu_hour, g_free);
  g_clear_pointer(&flags->train_samples, g_free);
  g_clear_pointer(&flags->train_tokens, g_free);
}

/**
 * ddp_cost_init:
 * Fills @cost for @scenario: the price from --price-per-gpu-hour, else the cluster's; the training
 * length from --train-samples or --train-tokens (÷ the model's seq_len).  Returns FALSE with
 * @error (bad input) when a flag is out of its range (docs/limits.md), both lengths are given, or
 * tokens are given for a model without a sequence length.
 */
gboolean
ddp_cost_init(DdpCost *cost, const DdpCostFlags *flags, const DdpScenario *scenario, GError **error)
{
  *cost = (DdpCost){ .price_per_gpu_hour = scenario->cluster->price_per_gpu_hour,
                     .tokens_per_sample = (double)scenario->model->seq_len };
  if (!ddp_flag_number("price-per-gpu-hour", flags->price_per_gpu_hour, &DDP_RANGE_PRICE_PER_GPU_HOUR,
                       &cost->price_per_gpu_hour, error) ||
      !ddp_flag_number("train-samples", flags->train_samples, &DDP_RANGE_TRAIN_SAMPLES, &cost->train_samples, error) ||
      !ddp_flag_number("train-tokens", flags->train_tokens, &DDP_RANGE_TRAIN_TOKENS, &cost->train_tokens, error))
    return FALSE;
  if (flags->train_samples && flags->train_tokens) {
    g_set_error(error, DDP_COST_ERROR, DDP_COST_ERROR_INVALID,
                "--train-tokens: give the training length once (--train-samples or --train-tokens)");
    return FALSE;
  }
  if (flags->train_tokens) {
    if (cost->tokens_per_sample <= 0) {
      g_set_error(error, DDP_COST_ERROR, DDP_COST_ERROR_INVALID,
                  "--train-tokens: model %s has no sequence length (seq_len): give --train-samples", scenario->model->name);
      return FALSE;
    }
    cost->train_samples = cost->train_tokens / cost->tokens_per_sample;
  }
  return TRUE;
}

/**
 * ddp_cost_estimate:
 * The closed forms of cost.h for @gpus GPUs at @samples_per_s (the whole job's throughput).
 * Returns the estimate; a field is NaN where its inputs are unknown or @samples_per_s is not
 * positive (an infeasible point).
 */
DdpCostEstimate
ddp_cost_estimate(const DdpCost *cost, guint64 gpus, double samples_per_s)
{
  DdpCostEstimate e = { NAN, NAN, NAN, NAN };
  if (!(samples_per_s > 0) || !isfinite(samples_per_s))
    return e;
  double per_second = cost->price_per_gpu_hour * (double)gpus / 3600.0;   /* the job's price per second */
  if (cost->price_per_gpu_hour > 0) {
    e.cost_per_1k_samples = per_second * 1000.0 / samples_per_s;
    if (cost->tokens_per_sample > 0)
      e.cost_per_1m_tokens = per_second * 1e6 / (samples_per_s * cost->tokens_per_sample);
  }
  if (cost->train_samples > 0) {
    e.train_hours = cost->train_samples / samples_per_s / 3600.0;
    if (cost->price_per_gpu_hour > 0)
      e.train_cost = cost->price_per_gpu_hour * (double)gpus * e.train_hours;
  }
  return e;
}

/**
 * ddp_cost_json:
 * Writes the fields of @e that are known into the open object of @json; prices to 6 decimals.
 */
void
ddp_cost_json(DdpJson *json, const DdpCost *cost, const DdpCostEstimate *e)
{
  if (cost->price_per_gpu_hour > 0) {
    ddp_json_double(json, "price_per_gpu_hour", cost->price_per_gpu_hour, 6);
    ddp_json_double(json, "cost_per_1k_samples", e->cost_per_1k_samples, 6);
    if (cost->tokens_per_sample > 0)
      ddp_json_double(json, "cost_per_1m_tokens", e->cost_per_1m_tokens, 6);
  }
  if (cost->train_samples > 0) {
    ddp_json_double(json, "train_samples", cost->train_samples, 3);
    ddp_json_double(json, "train_hours", e->train_hours, 6);
    if (cost->price_per_gpu_hour > 0)
      ddp_json_double(json, "train_cost", e->train_cost, 2);
  }
}

/**
 * ddp_cost_format_hours:
 * Returns: (transfer full) @hours as "45 s", "12.5 min", "6.25 h" or "3.2 days"; "-" when not finite.
 */
char *
ddp_cost_format_hours(double hours)
{
  if (!isfinite(hours))
    return g_strdup("-");
  if (hours < 1.0 / 60)
    return g_strdup_printf("%.3g s", hours * 3600);
  if (hours < 1)
    return g_strdup_printf("%.3g min", hours * 60);
  if (hours < 48)
    return g_strdup_printf("%.3g h", hours);
  return g_strdup_printf("%.3g days", hours / 24);
}

/**
 * ddp_cost_text:
 * Appends the report lines for @e to @out ("  cost ...", "  time to train ..."); nothing when
 * neither a price nor a training length is known.
 */
void
ddp_cost_text(GString *out, const DdpCost *cost, const DdpCostEstimate *e)
{
  if (cost->price_per_gpu_hour > 0) {
    g_string_append_printf(out, "  cost                 %.4g per 1000 samples", e->cost_per_1k_samples);
    if (cost->tokens_per_sample > 0)
      g_string_append_printf(out, ", %.4g per million tokens", e->cost_per_1m_tokens);
    g_string_append_printf(out, " (at %g per GPU-hour)\n", cost->price_per_gpu_hour);
  }
  if (cost->train_samples > 0) {
    g_autofree char *hours = ddp_cost_format_hours(e->train_hours);
    g_string_append_printf(out, "  time to train        %s for %.6g samples", hours, cost->train_samples);
    if (cost->train_tokens > 0)
      g_string_append_printf(out, " (%.6g tokens)", cost->train_tokens);
    if (cost->price_per_gpu_hour > 0)
      g_string_append_printf(out, ", costing %.2f", e->train_cost);
    g_string_append_c(out, '\n');
  }
}
