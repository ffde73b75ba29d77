/* cmd-compare — `ddpsim compare`: one model, cluster and GPU count under every data-parallel
 * strategy PyTorch offers for it — DDP, ZeRO-1 (ZeroRedundancyOptimizer), FSDP SHARD_GRAD_OP,
 * FSDP FULL_SHARD and HSDP (HYBRID_SHARD) — in one table (fits, memory, iteration time, efficiency,
 * exposed communication) with a recommendation: the fastest strategy that fits, or, when none
 * fits, the one that needs the least memory.  Each row is `predict --mode M --sharding S`. */
#include "cmd.h"

#include "cost.h"
#include "ddp.h"
#include "jsonout.h"
#include "report.h"
#include "scenario.h"

#include <math.h>

typedef struct {
  DdpCliOptions cli;
  DdpCostFlags cost;
  gboolean json, csv;
} CompareOptions;

typedef struct {
  DdpMode mode;
  DdpSharding sharding;
  const char *label;
  DdpResult *result;
} Row;

static const char compare_description[] =
  "Rows: ddp, zero1, fsdp grad-op, fsdp full, fsdp hybrid (HSDP: sharded inside a node, replicated\n"
  "across nodes).  Efficiency is T(1 GPU, no wrapper) / T(N) as in predict.  The recommendation is\n"
  "the fastest strategy that fits in GPU memory; when none fits, the one needing least memory.\n"
  "Without --batch (and a scenario file) the default batch is halved until some strategy fits.\n"
  "--sharding and --mode are set per row; the other flags (FSDP prefetch, --wrap-blocks, ...) apply\n"
  "to every row.  With a price (the cluster's, or --price-per-gpu-hour) each row also gives the cost\n"
  "per 1000 samples, and with --train-samples/--train-tokens the time and cost to train (docs/cost.md).";

static const char *
row_sharding(const Row *r)
{
  return r->mode == DDP_MODE_FSDP ? ddp_sharding_name(r->sharding) : "-";
}

/* The recommended row and why.  Among the strategies that fit: the fastest, except that within
 * 1 % of it (below the model's resolution) the one needing least memory wins; when none fits, the
 * one needing least memory (and what else would help, activation checkpointing where @checkpointed
 * says it is off). */
static int
recommend(const Row *rows, guint n, gboolean checkpointed, GString *reason)
{
  int fastest = -1, best = -1;
  for (guint i = 0; i < n; i++)
    if (rows[i].result->memory.fits && (fastest < 0 || rows[i].result->mean_ms < rows[fastest].result->mean_ms))
      fastest = (int)i;
  if (fastest >= 0) {
    for (guint i = 0; i < n; i++)
      if (rows[i].result->memory.fits && rows[i].result->mean_ms <= 1.01 * rows[fastest].result->mean_ms &&
          (best < 0 || rows[i].result->memory.total < rows[best].result->memory.total))
        best = (int)i;
    const DdpResult *b = rows[best].result;
    g_string_append_printf(reason, "%s: %.1f ms per iteration, %.1f %% efficiency, %.1f GB per GPU",
                           best == fastest ? "the fastest that fits" : "within 1 % of the fastest that fits, and less memory",
                           b->mean_ms, 100 * b->scaling_efficiency, b->memory.total / 1e9);
    if (!rows[0].result->memory.fits)
      g_string_append_printf(reason, "; DDP needs %.1f GB per GPU", rows[0].result->memory.total / 1e9);
    return best;
  }
  for (guint i = 0; i < n; i++)
    if (best < 0 || rows[i].result->memory.total < rows[best].result->memory.total)
      best = (int)i;
  g_string_append_printf(reason, "nothing fits; least memory: %.1f GB per GPU (more GPUs, a smaller batch%s)",
                         rows[best].result->memory.total / 1e9,
                         checkpointed ? "" : " or --activation-checkpointing");
  return best;
}

/* The predict command that runs the recommended row (the batch compare settled on included). */
static char *
predict_command(const DdpScenario *s, const Row *r)
{
  GString *out = g_string_new(NULL);
  g_string_append_printf(out, "ddpsim predict --model %s --cluster %s --gpus %" G_GUINT64_FORMAT " --batch %.15g --precision %s "
                              "--optimizer %s --mode %s", s->model->name, s->cluster->name, s->setup.gpus, s->setup.batch,
                         ddp_precision_name(s->setup.precision), ddp_optimizer_name(s->setup.optimizer),
                         ddp_mode_name(r->mode));
  if (s->setup.channels_last)
    g_string_append(out, " --channels-last");
  if (s->setup.activation_checkpointing)
    g_string_append(out, " --activation-checkpointing");
  if (r->mode == DDP_MODE_FSDP)
    g_string_append_printf(out, " --sharding %s", ddp_sharding_name(r->sharding));
  if (r->mode == DDP_MODE_ZERO1 && s->setup.shard.overlap_with_ddp)
    g_string_append_printf(out, " --overlap-with-ddp --zero-hook %s", ddp_zero_hook_name(s->setup.shard.zero_hook));
  if (s->setup.accumulate > 1)
    g_string_append_printf(out, " --accumulate %u", s->setup.accumulate);
  if (r->mode == DDP_MODE_FSDP && s->setup.accumulate > 1 && s->setup.shard.accumulate != DDP_FSDP_ACCUMULATE_NO_SYNC)
    g_string_append_printf(out, " --fsdp-accumulate %s", ddp_fsdp_accumulate_name(s->setup.shard.accumulate));
  return g_string_free(out, FALSE);
}

static char *
compare_text(const DdpScenario *s, const Row *rows, guint n, int best, const char *reason, double default_batch,
             const DdpCost *cost)
{
  GString *out = g_string_new(NULL);
  g_autofree char *micro = s->setup.accumulate > 1 ? g_strdup_printf(" x %u micro-steps", s->setup.accumulate) : g_strdup("");
  g_string_append_printf(out, "%s on %s: %" G_GUINT64_FORMAT " GPU%s, batch %.15g/GPU%s, %s, %s; %.2f GB per GPU\n",
                         s->model->name, s->cluster->name, s->setup.gpus, s->setup.gpus == 1 ? "" : "s", s->setup.batch, micro,
                         ddp_setup_precision_label(&s->setup), ddp_optimizer_name(s->setup.optimizer),
                         s->cluster->gpu.memory_GB);
  if (s->setup.batch != default_batch)
    g_string_append_printf(out, "(the default batch %.15g halved until a strategy fits; --batch sets it)\n", default_batch);
  /* every strategy's collectives cross the racks alike (docs/collective.md §11.8) */
  for (guint i = 0; i < n; i++) {
    g_autofree char *caveat = ddp_report_domains_caveat(s, rows[i].result, "");
    if (caveat) {
      g_string_append(out, caveat);
      break;
    }
  }
  /* and over TCP sockets at the default share, or over Slingshot (docs/collective.md §10.3) */
  for (guint i = 0; i < n; i++) {
    g_autofree char *transport = ddp_report_transport_caveat(s, rows[i].result, "");
    if (transport) {
      g_string_append(out, transport);
      break;
    }
  }
  g_string_append_c(out, '\n');
  g_string_append(out, "  strategy         fits   GB/GPU   iteration ms   efficiency   exposed comm ms\n");
  for (guint i = 0; i < n; i++) {
    const DdpResult *r = rows[i].result;
    g_string_append_printf(out, "  %-15s %5s %8.2f %14.3f %11.1f %% %17.3f%s\n", rows[i].label,
                           r->memory.fits ? "yes" : "NO", r->memory.total / 1e9, r->mean_ms,
                           100 * r->scaling_efficiency, r->exposed_comm_ms, (int)i == best ? "   <- recommended" : "");
    DdpCostEstimate e = ddp_cost_estimate(cost, s->setup.gpus, r->samples_per_s);
    g_autoptr(GString) costs = g_string_new(NULL);
    ddp_cost_text(costs, cost, &e);
    g_auto(GStrv) lines = g_strsplit(costs->str, "\n", -1);
    for (guint k = 0; lines[k] && *lines[k]; k++)
      g_string_append_printf(out, "    %s\n", g_strstrip(lines[k]));
  }
  for (guint i = 0; i < n; i++)
    if (rows[i].result->scaling_efficiency > 1.0) {
      g_string_append(out, "  (efficiency " DDP_REPORT_ABOVE_100 ")\n");
      break;
    }
  g_autofree char *command = predict_command(s, &rows[best]);
  g_string_append_printf(out, "\nrecommended: %s (%s)\n  %s\n", rows[best].label, reason, command);
  return g_string_free(out, FALSE);
}

static char *
compare_json(const DdpScenario *s, const Row *rows, guint n, int best, const char *reason, const DdpCost *cost)
{
  DdpJson *j = ddp_json_new();
  ddp_json_begin_object(j, NULL);
  ddp_json_string(j, "model", s->model->name);
  ddp_json_string(j, "cluster", s->cluster->name);
  ddp_json_int(j, "gpus", (gint64)s->setup.gpus);
  ddp_json_begin_array(j, "rows");
  for (guint i = 0; i < n; i++) {
    const DdpResult *r = rows[i].result;
    ddp_json_begin_object(j, NULL);
    ddp_json_string(j, "mode", ddp_mode_name(rows[i].mode));
    ddp_json_string(j, "sharding", row_sharding(&rows[i]));
    ddp_json_bool(j, "fits", r->memory.fits);
    ddp_json_int(j, "bytes_per_gpu", (gint64)llround(r->memory.total));
    ddp_json_double(j, "iteration_ms", r->mean_ms, 6);
    ddp_json_double(j, "scaling_efficiency", r->scaling_efficiency, 6);
    ddp_json_double(j, "exposed_comm_ms", r->exposed_comm_ms, 6);
    ddp_json_double(j, "comm_ms", r->comm_ms, 6);
    ddp_json_double(j, "samples_per_s", r->samples_per_s, 3);
    DdpCostEstimate e = ddp_cost_estimate(cost, s->setup.gpus, r->samples_per_s);
    ddp_cost_json(j, cost, &e);
    ddp_json_end_object(j);
  }
  ddp_json_end_array(j);
  ddp_json_begin_object(j, "recommended");
  ddp_json_string(j, "mode", ddp_mode_name(rows[best].mode));
  ddp_json_string(j, "sharding", row_sharding(&rows[best]));
  ddp_json_string(j, "reason", reason);
  g_autofree char *command = predict_command(s, &rows[best]);
  ddp_json_string(j, "command", command);
  ddp_json_end_object(j);
  ddp_json_end_object(j);
  return ddp_json_free_to_string(j);
}

static char *
compare_csv(const Row *rows, guint n)
{
  GString *out = g_string_new("mode,sharding,fits,bytes_per_gpu,iteration_ms,scaling_efficiency,exposed_comm_ms\n");
  for (guint i = 0; i < n; i++) {
    const DdpResult *r = rows[i].result;
    g_string_append_printf(out, "%s,%s,%s,%.0f,%.6f,%.6f,%.6f\n", ddp_mode_name(rows[i].mode), row_sharding(&rows[i]),
                           r->memory.fits ? "true" : "false", r->memory.total, r->mean_ms, r->scaling_efficiency,
                           r->exposed_comm_ms);
  }
  return g_string_free(out, FALSE);
}

static int
run(int argc, char **argv, CompareOptions *o)
{
  GOptionEntry own[] = {
    { "json", 0, 0, G_OPTION_ARG_NONE, &o->json, "Print JSON (fields: docs/json.md)", NULL },
    { "csv", 0, 0, G_OPTION_ARG_NONE, &o->csv, "Print CSV", NULL },
    { NULL, 0, 0, 0, NULL, NULL, NULL },
  };
  g_autofree GOptionEntry *entries = ddp_cost_option_entries(own, &o->cost);
  g_autoptr(GError) error = NULL;
  const char *scenario_path = NULL;
  if (!ddp_cmd_parse("compare", "Which data-parallel strategy to run: DDP, ZeRO-1, FSDP grad-op, FSDP full, HSDP.",
                     compare_description, entries, &o->cli, &argc, &argv, &scenario_path, &error))
    return ddp_cmd_fail("compare", error);
  if (o->json && o->csv) {
    g_set_error(&error, DDP_CMD_ERROR, 0, "--json and --csv: choose one");
    return ddp_cmd_fail("compare", error);
  }
  g_autoptr(DdpScenario) scenario = ddp_scenario_load(scenario_path, &o->cli, TRUE, &error);
  if (!scenario)
    return ddp_cmd_fail("compare", error);
  DdpCost cost;
  if (!ddp_cost_init(&cost, &o->cost, scenario, &error))
    return ddp_cmd_fail("compare", error);
  Row rows[] = {
    { DDP_MODE_DDP, DDP_SHARDING_NONE, "ddp", NULL },
    { DDP_MODE_ZERO1, DDP_SHARDING_NONE, "zero1", NULL },
    { DDP_MODE_FSDP, DDP_SHARDING_GRAD_OP, "fsdp grad-op", NULL },
    { DDP_MODE_FSDP, DDP_SHARDING_FULL, "fsdp full", NULL },
    { DDP_MODE_FSDP, DDP_SHARDING_HYBRID, "fsdp hybrid", NULL },
  };
  guint n = G_N_ELEMENTS(rows);
  int status = DDP_EXIT_OK;
  /* without --batch (and without a scenario file), halve the default batch until a strategy fits:
   * the question is which strategy, not whether batch 32 of a 7B model fits anywhere */
  gboolean search_batch = !o->cli.batch && !scenario_path;
  double default_batch = scenario->setup.batch;
  for (gboolean again = TRUE; again && status == DDP_EXIT_OK;) {
    DdpScenario one = *scenario;
    gboolean any_fits = FALSE;
    for (guint i = 0; i < n && status == DDP_EXIT_OK; i++) {
      one.setup.mode = rows[i].mode;
      one.setup.shard.sharding = rows[i].sharding;
      ddp_result_free(rows[i].result);
      if (!(rows[i].result = ddp_simulate(&one, NULL, &error)))
        status = ddp_cmd_fail("compare", error);
      else
        any_fits = any_fits || rows[i].result->memory.fits;
    }
    again = search_batch && !any_fits && scenario->setup.batch > 1;
    if (again)
      scenario->setup.batch = floor(scenario->setup.batch / 2);
  }
  if (status == DDP_EXIT_OK) {
    g_autoptr(GString) reason = g_string_new(NULL);
    int best = recommend(rows, n, scenario->setup.activation_checkpointing, reason);
    g_autofree char *text = o->json  ? compare_json(scenario, rows, n, best, reason->str, &cost)
                            : o->csv ? compare_csv(rows, n)
                                     : compare_text(scenario, rows, n, best, reason->str, default_batch, &cost);
    if (!ddp_cmd_print(text, &error))
      status = ddp_cmd_fail("compare", error);
  }
  for (guint i = 0; i < n; i++)
    ddp_result_free(rows[i].result);
  return status;
}

int
ddp_cmd_compare(int argc, char **argv)
{
  CompareOptions options = { 0 };
  int status = run(argc, argv, &options);
  ddp_cli_options_clear(&options.cli);
  ddp_cost_flags_clear(&options.cost);
  return status;
}
