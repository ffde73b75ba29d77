/* cmd-predict — `ddpsim predict [SCENARIO]`: one configuration, steady-state iteration time,
 * compute vs exposed communication, overlap, scaling efficiency, memory fit, bucket schedule. */
#include "cmd.h"

#include "ddp.h"
#include "report.h"

typedef struct {
  DdpCliOptions cli;
  gboolean json, csv;
} PredictOptions;

static const char predict_description[] =
  "Scaling efficiency is weak scaling: T(1 GPU) / T(N GPUs) at the same per-GPU batch, where\n"
  "T(1 GPU) is the same setup simulated on one GPU without stragglers.  Overlap is the fraction of\n"
  "communication hidden behind backward compute.  Iteration 0 (PyTorch's construction-time\n"
  "buckets) is reported apart; statistics are over the steady iterations that follow it.";

static int
run(int argc, char **argv, PredictOptions *opts)
{
  GOptionEntry own[] = {
    { "json", 0, 0, G_OPTION_ARG_NONE, &opts->json, "Print JSON (fields: docs/json.md)", NULL },
    { "csv", 0, 0, G_OPTION_ARG_NONE, &opts->csv, "Print the bucket schedule as CSV", NULL },
    { NULL, 0, 0, 0, NULL, NULL, NULL },
  };
  g_autoptr(GError) error = NULL;
  const char *scenario_path = NULL;
  if (!ddp_cmd_parse("predict", "Predict one DDP configuration.", predict_description, own, &opts->cli, &argc, &argv,
                     &scenario_path, &error))
    return ddp_cmd_fail("predict", error);
  g_autoptr(DdpScenario) scenario = ddp_scenario_load(scenario_path, &opts->cli, TRUE, &error);
  if (!scenario)
    return ddp_cmd_fail("predict", error);
  g_autoptr(DdpResult) result = ddp_simulate(scenario, NULL, &error);
  if (!result)
    return ddp_cmd_fail("predict", error);
  g_autofree char *text = opts->json  ? ddp_report_predict_json(scenario, result)
                          : opts->csv ? ddp_report_predict_csv(scenario, result)
                                  : ddp_report_predict_text(scenario, result);
  if (!ddp_cmd_print(text, &error))
    return ddp_cmd_fail("predict", error);
  return DDP_EXIT_OK;
}

int
ddp_cmd_predict(int argc, char **argv)
{
  PredictOptions options = { 0 };
  int status = run(argc, argv, &options);
  ddp_cli_options_clear(&options.cli);
  return status;
}
