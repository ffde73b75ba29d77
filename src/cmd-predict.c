/* cmd-predict — `ddpsim predict [SCENARIO]`: one configuration, steady-state iteration time,
 * compute vs exposed communication, overlap, scaling efficiency, memory fit, bucket schedule. */
#include "cmd.h"

#include "ddp.h"
#include "dp.h"
#include "cost.h"
#include "progress.h"
#include "report.h"
#include "strategy.h"

#include <unistd.h>

#include <stdio.h>

typedef struct {
  DdpCliOptions cli;
  DdpCostFlags cost;
  gboolean json, csv, no_buckets;
} PredictOptions;

static const char predict_description[] =
  "Scaling efficiency is weak scaling: T(1 GPU) / T(N GPUs) at the same per-GPU batch, where\n"
  "T(1 GPU) is the model on one GPU without DDP (no reducer hooks, bucket copies or collectives) and\n"
  "without stragglers, as PyTorch's DDP benchmark defines it, so at 1 GPU DDP's own cost shows.\n"
  "Overlap is the fraction of communication hidden behind backward compute.  Iteration 0 (PyTorch's construction-time\n"
  "buckets) is reported apart; statistics are over the steady iterations that follow it.\n"
  "--mode dp predicts torch.nn.DataParallel instead (one node) and compares it with DDP;\n"
  "--mode zero1 ZeroRedundancyOptimizer with DDP; --mode fsdp FullyShardedDataParallel\n"
  "(--sharding full|grad-op|hybrid|none, --backward-prefetch, --forward-prefetch, --wrap-blocks).\n"
  "Exit status: 0 ok, 2 bad input, 3 the model does not fit in GPU memory (the report is still\n"
  "printed; --allow-oom makes it 0), 1 internal error.";

static void
step_progress(gpointer data)
{
  ddp_progress_step(data, NULL);
}

static int
run(int argc, char **argv, PredictOptions *opts)
{
  GOptionEntry own[] = {
    { "json", 0, 0, G_OPTION_ARG_NONE, &opts->json, "Print JSON (fields: docs/json.md)", NULL },
    { "csv", 0, 0, G_OPTION_ARG_NONE, &opts->csv, "Print the bucket schedule as CSV", NULL },
    { "no-buckets", 0, 0, G_OPTION_ARG_NONE, &opts->no_buckets, "Leave the bucket schedule out of the table", NULL },
    { NULL, 0, 0, 0, NULL, NULL, NULL },
  };
  g_autofree GOptionEntry *entries = ddp_cost_option_entries(own, &opts->cost);
  g_autoptr(GError) error = NULL;
  const char *scenario_path = NULL;
  if (!ddp_cmd_parse("predict", "Predict one DDP configuration.", predict_description, entries, &opts->cli, &argc, &argv,
                     &scenario_path, &error))
    return ddp_cmd_fail("predict", error);
  g_autoptr(DdpScenario) scenario = ddp_scenario_load(scenario_path, &opts->cli, TRUE, &error);
  if (!scenario)
    return ddp_cmd_fail("predict", error);
  if (!ddp_cli_check_mode_flags(&opts->cli, scenario->setup.mode, &error))
    return ddp_cmd_fail("predict", error);
  DdpCost cost;
  if (!ddp_cost_init(&cost, &opts->cost, scenario, &error))
    return ddp_cmd_fail("predict", error);
  /* a large run (many ranks with stragglers) can take seconds: a progress line over iterations */
  DdpProgress *progress = ddp_progress_new("predict", scenario->setup.iterations, "iterations", STDERR_FILENO);
  DdpRunOptions run_options = { .progress = step_progress, .progress_data = progress };
  g_autoptr(DdpResult) result = ddp_simulate(scenario, &run_options, &error);
  ddp_progress_free(progress);
  if (!result)
    return ddp_cmd_fail("predict", error);
  DdpReportExtras extras = { .cost = &cost, .no_buckets = opts->no_buckets };
  g_autofree char *text = opts->json  ? ddp_report_predict_json_ex(scenario, result, &extras)
                          : opts->csv ? ddp_report_predict_csv(scenario, result)
                                  : ddp_report_predict_text_ex(scenario, result, &extras);
  if (result->dp && !opts->json && !opts->csv) {
    g_autofree char *dp = ddp_dp_report_text(result->dp);
    char *both = g_strconcat(text, "\n", dp, NULL);
    g_free(text);
    text = both;
  }
  if (!ddp_cmd_print(text, &error))
    return ddp_cmd_fail("predict", error);
  if (!result->memory.fits) {
    /* stderr, so that it shows whatever stdout is piped into; the report says "DOES NOT FIT" and
     * the JSON memory.fits false */
    fprintf(stderr, "ddpsim predict: OUT OF MEMORY: %.2f GB per GPU needed, %.2f GB on a %s%s; "
            "`ddpsim compare --model %s --cluster %s --gpus %" G_GUINT64_FORMAT "` shows which strategy fits "
            "(ZeRO-1, FSDP grad-op/full, HSDP)\n",
            result->memory.total / 1e9, scenario->cluster->gpu.memory_GB, scenario->cluster->gpu.name,
            scenario->setup.allow_oom ? " (--allow-oom: exit 0)" : " (exit 3; --allow-oom to accept)",
            scenario->model->name, scenario->cluster->name, scenario->setup.gpus);
    if (!result->dp) {
      g_autofree char *advice = ddp_strategy_memory_advice(scenario, &result->memory);
      g_auto(GStrv) lines = g_strsplit(advice, "\n", -1);
      for (guint i = 0; lines[i] && *lines[i]; i++)
        fprintf(stderr, "ddpsim predict:   %s\n", lines[i]);
    }
    if (!scenario->setup.allow_oom)
      return DDP_EXIT_OOM;
  }
  return DDP_EXIT_OK;
}

int
ddp_cmd_predict(int argc, char **argv)
{
  PredictOptions options = { 0 };
  int status = run(argc, argv, &options);
  ddp_cli_options_clear(&options.cli);
  ddp_cost_flags_clear(&options.cost);
  return status;
}
