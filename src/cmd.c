/* cmd — the command table and what every verb shares: option contexts with the common flags,
 * positional scenario file, error reporting and exit codes (see cmd.h). */
#include "cmd.h"

#include "calibdb.h"
#include "cluster.h"
#include "collective.h"
#include "cost.h"
#include "fileio.h"
#include "jointtune.h"
#include "fit.h"
#include "gpu.h"
#include "keyfile.h"
#include "ranges.h"
#include "model.h"
#include "plot.h"
#include "scenario.h"
#include "solve.h"
#include "straggler.h"
#include "validate.h"

#include <stdio.h>
#include <string.h>

static const DdpCommand commands[] = {
  { "predict", ddp_cmd_predict, "predict one configuration: iteration time, overlap, efficiency, bucket schedule" },
  { "buckets", ddp_cmd_buckets, "PyTorch's initial and rebuilt bucket layout, by parameter name" },
  { "compare", ddp_cmd_compare, "which data-parallel strategy to run: DDP, ZeRO-1, FSDP grad-op/full, HSDP side by side, with a recommendation" },
  { "scale", ddp_cmd_scale, "scaling efficiency over GPU counts (weak, and strong with --global-batch)" },
  { "tune", ddp_cmd_tune, "sweep bucket_cap_mb (and the first bucket); recommend a change only above a noise threshold" },
  { "solve", ddp_cmd_solve, "inverse questions: bandwidth, NICs, GPUs, batch or bucket cap for a target efficiency" },
  { "allreduce", ddp_cmd_allreduce, "AllReduce costs alone, as an nccl-tests-style table (= collective --op all_reduce)" },
  { "collective", ddp_cmd_collective, "one collective's costs (--op all_reduce|all_gather|reduce_scatter|broadcast), nccl-tests-style" },
  { "fit", ddp_cmd_fit, "fit model parameters from a ddpsim-calibrate database, nccl-tests output or torch.profiler traces (--import)" },
  { "models", ddp_cmd_models, "list the shipped models: parameters, GFLOPs per sample" },
  { "clusters", ddp_cmd_clusters, "list the shipped clusters: GPU, fabrics" },
  { "timeline", ddp_cmd_timeline, "overlap timeline of one iteration: gnuplot PNG/SVG Gantt chart, Perfetto trace" },
  { "sweep", ddp_cmd_sweep, "a grid of scenarios (models x clusters x GPUs x caps x seeds), one row each; threads, MPI" },
  { "validate", ddp_cmd_validate, "run the model against published measurements: errors per configuration beside a baseline" },
  { NULL, NULL, NULL },
};

const DdpCommand *
ddp_commands(void)
{
  return commands;
}

static gboolean
is_input_error(const GError *error)
{
  GQuark input_domains[] = {
    DDP_KEYFILE_ERROR, DDP_MODEL_ERROR, DDP_CLUSTER_ERROR, DDP_SCENARIO_ERROR, DDP_STRAGGLER_ERROR,
    DDP_GPU_ERROR, DDP_COLLECTIVE_ERROR, DDP_VALIDATE_ERROR, DDP_CMD_ERROR, DDP_RANGE_ERROR, G_CONVERT_ERROR,
    DDP_FIT_ERROR, DDP_SOLVE_ERROR, DDP_COST_ERROR, DDP_JOINTTUNE_ERROR, DDP_FILE_ERROR,
    G_OPTION_ERROR, G_KEY_FILE_ERROR,
  };
  if (error->domain == DDP_CALIBDB_ERROR)
    return ddp_calibdb_error_is_input(error);
  for (gsize i = 0; i < G_N_ELEMENTS(input_domains); i++)
    if (error->domain == input_domains[i])
      return TRUE;
  return FALSE;
}

int
ddp_cmd_fail(const char *verb, const GError *error)
{
  /* one line, whatever the message echoes (control characters escaped, long values cut) */
  g_autofree char *message = ddp_range_quote_n(error->message, DDP_MAX_MESSAGE_CHARS);
  fprintf(stderr, "ddpsim %s: %s\n", verb, message);
  if (error->domain == DDP_PLOT_ERROR)
    return ddp_plot_error_is_input(error) ? DDP_EXIT_INPUT : DDP_EXIT_INTERNAL;
  return is_input_error(error) ? DDP_EXIT_INPUT : DDP_EXIT_INTERNAL;
}

G_DEFINE_QUARK(ddp-cmd-error-quark, ddp_cmd_error)

/**
 * ddp_cmd_parse:
 * Builds an option context for @verb from @own entries and, when @cli is not NULL, the common
 * flags; parses @argv in place.  On success *scenario_path is the optional positional scenario
 * file (borrowed from argv) and TRUE comes back; else @error says why (exit 2).
 */
gboolean
ddp_cmd_parse(const char *verb, const char *summary, const char *description, const GOptionEntry *own,
              DdpCliOptions *cli, int *argc, char ***argv, const char **scenario_path, GError **error)
{
  g_autofree char *parameter = g_strdup_printf("%s%s", verb, scenario_path ? " [SCENARIO]" : "");
  g_autoptr(GOptionContext) context = g_option_context_new(parameter);
  g_option_context_set_summary(context, summary);
  if (description)
    g_option_context_set_description(context, description);
  if (own)
    g_option_context_add_main_entries(context, own, NULL);
  if (cli) {
    g_autofree GOptionEntry *common = ddp_cli_option_entries(cli);
    g_option_context_add_main_entries(context, common, NULL);
  }
  /* GOption's conversion error would not say which argument: name it first */
  for (int i = 2; i < *argc; i++)
    if (!g_utf8_validate((*argv)[i], -1, NULL)) {
      const char *flag = (*argv)[i][0] == '-' || i == 2 ? (*argv)[i] : (*argv)[i - 1];
      g_autofree char *quoted = ddp_range_quote(flag);
      g_set_error(error, DDP_CMD_ERROR, 0, "%s: the argument is not valid UTF-8 text", quoted);
      return FALSE;
    }
  if (!g_option_context_parse(context, argc, argv, error))
    return FALSE;
  /* --json and --csv each print the whole answer in their own format: one of them */
  const gboolean *json = NULL, *csv = NULL;
  for (gsize i = 0; own && own[i].long_name; i++) {
    if (own[i].arg == G_OPTION_ARG_NONE && strcmp(own[i].long_name, "json") == 0)
      json = own[i].arg_data;
    if (own[i].arg == G_OPTION_ARG_NONE && strcmp(own[i].long_name, "csv") == 0)
      csv = own[i].arg_data;
  }
  if (json && csv && *json && *csv) {
    g_set_error(error, DDP_CMD_ERROR, 0, "--json and --csv: give one (each prints the whole answer)");
    return FALSE;
  }
  /* (*argv)[0] is "ddpsim", [1] the verb */
  int positional = *argc - 2;
  int allowed = scenario_path ? 1 : 0;
  if (positional > allowed) {
    g_set_error(error, DDP_CMD_ERROR, 0, "unexpected argument \"%s\" (see ddpsim %s --help)",
                (*argv)[2 + allowed], verb);
    return FALSE;
  }
  if (scenario_path)
    *scenario_path = positional == 1 ? (*argv)[2] : NULL;
  return TRUE;
}

/**
 * ddp_cli_option_entries_only:
 * @own: the verb's entries (NULL-terminated)
 * @names: the long names of the common flags the verb uses (NULL-terminated)
 * Returns: (transfer full) @own followed by those common flags, storing into @cli; g_free() it.
 * For verbs where most common flags would do nothing (buckets): pass the result as @own to
 * ddp_cmd_parse with @cli NULL.
 */
GOptionEntry *
ddp_cli_option_entries_only(const GOptionEntry *own, DdpCliOptions *cli, const char *const *names)
{
  g_autofree GOptionEntry *common = ddp_cli_option_entries(cli);
  GArray *all = g_array_new(TRUE, TRUE, sizeof(GOptionEntry));
  for (gsize i = 0; own[i].long_name; i++)
    g_array_append_val(all, own[i]);
  for (gsize i = 0; common[i].long_name; i++)
    if (g_strv_contains(names, common[i].long_name))
      g_array_append_val(all, common[i]);
  return (GOptionEntry *)(void *)g_array_free(all, FALSE);
}

/* Writes @text to stdout; FALSE (exit 1) when stdout fails. */
gboolean
ddp_cmd_print(const char *text, GError **error)
{
  if (fputs(text, stdout) == EOF || fflush(stdout) != 0) {
    g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_IO, "cannot write to standard output");
    return FALSE;
  }
  return TRUE;
}
