/* cost — what a configuration costs and how long training takes, from a price per GPU-hour and the
 * simulated throughput.  Pure arithmetic on top of a prediction (docs/cost.md derives each form):
 *
 *   cost per 1 000 samples   = price · N / 3600 · 1000 / samples_per_s
 *   cost per 10^6 tokens     = price · N / 3600 · 10^6 / (samples_per_s · tokens_per_sample)
 *   train_hours              = train_samples / samples_per_s / 3600
 *   train_cost               = price · N · train_hours
 *
 * where N is the GPU count and samples_per_s the whole job's throughput (all GPUs, accumulation
 * included) as `predict` reports it.  The price comes from the cluster file ([cluster]
 * price_per_gpu_hour) or --price-per-gpu-hour, in whatever currency the user prices in; a cluster
 * without a price has no cost fields (nothing here invents a market price). */
#ifndef DDP_COST_H
#define DDP_COST_H

#include <glib.h>
#include "jsonout.h"
#include "scenario.h"

/* Raw flag text (NULL when not given); verbs embed this beside DdpCliOptions. */
typedef struct {
  char *price_per_gpu_hour, *train_samples, *train_tokens;
} DdpCostFlags;

/* Returns a new NULL-terminated array: @own's entries followed by --price-per-gpu-hour,
 * --train-samples and --train-tokens storing into @flags (free with g_free; @own may be NULL). */
GOptionEntry *ddp_cost_option_entries(const GOptionEntry *own, DdpCostFlags *flags);
void ddp_cost_flags_clear(DdpCostFlags *flags);

/* What the cost forms need, validated. */
typedef struct {
  double price_per_gpu_hour;  /* 0: unknown: no cost fields */
  double train_samples;       /* 0: no training length given; from --train-tokens / tokens_per_sample */
  double train_tokens;        /* as given; 0 otherwise */
  double tokens_per_sample;   /* the model's seq_len; 0: not a sequence model (no per-token cost) */
} DdpCost;

#define DDP_COST_ERROR (ddp_cost_error_quark())
GQuark ddp_cost_error_quark(void);
typedef enum { DDP_COST_ERROR_INVALID } DdpCostError;

/* Fills @cost from the cluster's price, the model's sequence length and @flags (flags win).
 * FALSE with a DDP_RANGE_ERROR or DDP_COST_ERROR naming the flag (bad input, exit 2) when a
 * value is out of range, both --train-samples and --train-tokens are given, or --train-tokens is
 * given for a model without a sequence length. */
gboolean ddp_cost_init(DdpCost *cost, const DdpCostFlags *flags, const DdpScenario *scenario, GError **error);

/* The estimate at one point; NaN for what cannot be known (no price, no training length, not a
 * sequence model). */
typedef struct {
  double cost_per_1k_samples;
  double cost_per_1m_tokens;
  double train_hours;
  double train_cost;
} DdpCostEstimate;

/* The closed forms above for @gpus GPUs reaching @samples_per_s (> 0; else every field is NaN). */
DdpCostEstimate ddp_cost_estimate(const DdpCost *cost, guint64 gpus, double samples_per_s);

/* Writes the known fields of @e into the open JSON object: cost_per_1k_samples,
 * cost_per_1m_tokens, train_hours, train_cost (and nothing when nothing is known). */
void ddp_cost_json(DdpJson *json, const DdpCost *cost, const DdpCostEstimate *e);
/* Appends "  cost ... \n" lines for the text reports (nothing when nothing is known). */
void ddp_cost_text(GString *out, const DdpCost *cost, const DdpCostEstimate *e);
/* "6.25 h" / "3.2 days": a duration for tables. */
char *ddp_cost_format_hours(double hours);

#endif
