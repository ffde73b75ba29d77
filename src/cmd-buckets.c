/* cmd-buckets — `ddpsim buckets [SCENARIO]`: PyTorch DDP's construction-time (iteration 0) and
 * rebuilt (from iteration 1 on; from iteration 2 under static_graph) bucket layouts, by parameter
 * name (docs/model.md §1.2–1.3). */
#include "cmd.h"

#include "bucket.h"
#include "report.h"

typedef struct {
  DdpCliOptions cli;
  gboolean json, csv, last_bucket_cap;
  char *device;
} BucketsOptions;

static int
run(int argc, char **argv, BucketsOptions *opts)
{
  GOptionEntry own[] = {
    { "json", 0, 0, G_OPTION_ARG_NONE, &opts->json, "Print JSON: initial and rebuilt, each [{index, bytes, params}]", NULL },
    { "csv", 0, 0, G_OPTION_ARG_NONE, &opts->csv, "Print one CSV row per (bucket, parameter)", NULL },
    { "device", 0, 0, G_OPTION_ARG_STRING, &opts->device,
      "cuda (default) or cpu: where the parameters live; changes the order of leftover buckets of mixed dtypes", "D" },
    { "last-bucket-cap", 0, 0, G_OPTION_ARG_NONE, &opts->last_bucket_cap, "As DDP_SET_LAST_BUCKET_CAP=1: the small bucket goes last", NULL },
    { NULL, 0, 0, 0, NULL, NULL, NULL },
  };
  /* of the common flags only those that change a layout: --help lists nothing that does nothing */
  static const char *const layout_flags[] = { "model", "bucket-cap-mb", "find-unused-parameters", "static-graph",
                                              "torch-version", NULL };
  g_autofree GOptionEntry *entries = ddp_cli_option_entries_only(own, &opts->cli, layout_flags);
  g_autoptr(GError) error = NULL;
  const char *scenario_path = NULL;
  if (!ddp_cmd_parse("buckets", "Show PyTorch DDP's bucket layouts.",
                     "Sizes are bytes; bucket_cap_mb is MiB as in PyTorch.  \"rebuilt\" equals \"initial\" when\n"
                     "PyTorch does not rebuild (find_unused_parameters without static_graph, or any release before\n"
                     "1.6).  The rebuild happens before iteration 1, or before iteration 2 under static_graph.\n"
                     "--torch-version picks the release's rules (docs/dp.md).",
                     entries, NULL, &argc, &argv, &scenario_path, &error))
    return ddp_cmd_fail("buckets", error);
  g_autoptr(DdpScenario) scenario = ddp_scenario_load(scenario_path, &opts->cli, FALSE, &error);
  if (!scenario)
    return ddp_cmd_fail("buckets", error);
  if (!ddp_cli_check_mode_flags(&opts->cli, scenario->setup.mode, &error))
    return ddp_cmd_fail("buckets", error);
  DdpBucketOptions options = scenario->setup.buckets;
  if (opts->device && g_strcmp0(opts->device, "cpu") != 0 && g_strcmp0(opts->device, "cuda") != 0) {
    g_set_error(&error, DDP_SCENARIO_ERROR, DDP_SCENARIO_ERROR_INVALID, "--device: \"%s\" is not one of cpu|cuda",
                opts->device);
    return ddp_cmd_fail("buckets", error);
  }
  options.cpu_device = g_strcmp0(opts->device, "cpu") == 0;
  options.last_bucket_cap = opts->last_bucket_cap;
  g_autoptr(DdpBucketLayout) initial = ddp_bucket_layout_initial(scenario->model, &options);
  g_autoptr(DdpBucketLayout) rebuilt = ddp_bucket_layout_steady(scenario->model, &options);
  g_autofree char *text = opts->json  ? ddp_report_buckets_json(scenario->model, initial, rebuilt)
                          : opts->csv ? ddp_report_buckets_csv(scenario->model, initial, rebuilt)
                                  : ddp_report_buckets_text(scenario->model, initial, rebuilt);
  if (!ddp_cmd_print(text, &error))
    return ddp_cmd_fail("buckets", error);
  return DDP_EXIT_OK;
}

int
ddp_cmd_buckets(int argc, char **argv)
{
  BucketsOptions options = { 0 };
  int status = run(argc, argv, &options);
  ddp_cli_options_clear(&options.cli);
  g_free(options.device);
  return status;
}
