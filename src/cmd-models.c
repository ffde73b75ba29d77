/* cmd-models — `ddpsim models`: the shipped models with parameter count, forward GFLOPs per
 * sample, input and source definition. */
#include "cmd.h"

#include "datadir.h"
#include "jsonout.h"
#include "model.h"
#include "report.h"

typedef struct {
  gboolean json;
} ModelsOptions;

static int
run(int argc, char **argv, ModelsOptions *o)
{
  GOptionEntry own[] = {
    { "json", 0, 0, G_OPTION_ARG_NONE, &o->json, "Print JSON: models [{name, parameters, gflops_per_sample, …}]", NULL },
    { NULL, 0, 0, 0, NULL, NULL, NULL },
  };
  g_autoptr(GError) error = NULL;
  if (!ddp_cmd_parse("models", "List the shipped models.", "Models are found by these bare names, or give a file path.",
                     own, NULL, &argc, &argv, NULL, &error))
    return ddp_cmd_fail("models", error);
  g_auto(GStrv) names = ddp_datadir_list("models", ".model");
  GString *text = g_string_new(NULL);
  DdpJson *j = ddp_json_new();
  ddp_json_begin_object(j, NULL);
  ddp_json_begin_array(j, "models");
  /* the name column as wide as the longest name (resnext101_32x8d is 16) */
  int width = 5;
  for (guint i = 0; names[i]; i++)
    width = MAX(width, (int)g_utf8_strlen(names[i], -1));
  g_string_append_printf(text, "%-*s %15s %12s %9s  %-18s %s\n", width, "model", "parameters", "GFLOPs/fwd", "tensors",
                         "input (1 sample)", "definition");
  for (guint i = 0; names[i]; i++) {
    g_autoptr(DdpModel) m = ddp_model_load(names[i], &error);
    if (!m) {
      g_string_free(text, TRUE);
      ddp_json_end_array(j);
      ddp_json_end_object(j);
      g_free(ddp_json_free_to_string(j));
      return ddp_cmd_fail("models", error);
    }
    g_autofree char *params = ddp_report_group_digits(ddp_model_param_count(m));
    double gflops = ddp_model_forward_flops(m) / 1e9;
    g_string_append_printf(text, "%-*s %15s %12.3f %9u  %-18s %s\n", width, names[i], params, gflops, m->n_params,
                           m->input ? m->input : "", m->source ? m->source : "");
    ddp_json_begin_object(j, NULL);
    ddp_json_string(j, "name", names[i]);
    ddp_json_int(j, "parameters", ddp_model_param_count(m));
    ddp_json_int(j, "parameter_bytes", ddp_model_param_bytes(m));
    ddp_json_int(j, "tensors", m->n_params);
    ddp_json_int(j, "layers", m->n_layers);
    ddp_json_double(j, "gflops_per_sample", gflops, 3);
    ddp_json_string(j, "input", m->input);
    ddp_json_string(j, "source", m->source);
    ddp_json_end_object(j);
  }
  ddp_json_end_array(j);
  ddp_json_end_object(j);
  g_autofree char *json = ddp_json_free_to_string(j);
  g_autofree char *table = g_string_free(text, FALSE);
  if (!ddp_cmd_print(o->json ? json : table, &error))
    return ddp_cmd_fail("models", error);
  return DDP_EXIT_OK;
}

int
ddp_cmd_models(int argc, char **argv)
{
  ModelsOptions options = { 0 };
  return run(argc, argv, &options);
}
