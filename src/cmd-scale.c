/* cmd-scale — `ddpsim scale [SCENARIO] --gpus 8,16,...,131072`: one prediction per GPU count;
 * weak scaling (fixed per-GPU batch) always, strong scaling (fixed global batch) with
 * --global-batch.  Definitions are printed by --help and in the README. */
#include "cmd.h"

#include "ddp.h"
#include "jsonout.h"
#include "plot.h"
#include "ranges.h"
#include "report.h"

#include <math.h>
#include <stdio.h>
#include <unistd.h>

typedef struct {
  DdpCliOptions cli;
  gboolean json, csv;
  char *global_batch, *plot, *plot_data;
} ScaleOptions;

typedef struct {
  guint64 gpus, nodes;
  double batch_per_gpu;
  DdpResult *result;
  double strong_efficiency;   /* NAN without --global-batch or when batch_per_gpu < 1 */
} ScaleRow;

static const char scale_description[] =
  "--gpus takes a comma-separated list; \"A,B,...,C\" continues the progression of A and B\n"
  "(doubling when B = 2A) up to C.  Default: 1, 2, 4, … GPUs up to one node, then 2, 4, … 128 nodes.\n\n"
  "Weak-scaling efficiency = T(1 GPU) / T(N GPUs) at the same per-GPU batch.\n"
  "Strong-scaling efficiency (--global-batch B) = T(1 GPU, batch B) / (N · T(N GPUs, batch B/N)),\n"
  "i.e. speed-up over one GPU divided by N; rows where B/N < 1 sample are not feasible (null).";

/* 1, 2, 4, … up to one node, then 2, 4, … 128 nodes. */
static GArray *
default_gpu_list(const DdpCluster *cluster)
{
  GArray *list = g_array_new(FALSE, FALSE, sizeof(guint64));
  guint64 ppn = (guint64)cluster->gpus_per_node;
  for (guint64 g = 1; g < ppn; g *= 2)
    g_array_append_val(list, g);
  for (guint64 nodes = 1; nodes <= 128 && (cluster->max_nodes == 0 || nodes <= (guint64)cluster->max_nodes); nodes *= 2) {
    guint64 g = nodes * ppn;
    g_array_append_val(list, g);
  }
  return list;
}

static gboolean
progress_wanted(void)
{
  return isatty(STDERR_FILENO);
}

static char *
scale_text(const DdpScenario *s, const ScaleRow *rows, guint n, gboolean strong)
{
  GString *out = g_string_new(NULL);
  g_autofree char *stragglers = ddp_stragglers_to_string(s->stragglers);
  g_string_append_printf(out, "%s on %s, batch %g/GPU, %s, bucket_cap_mb %g, stragglers %s\n\n", s->model->name,
                         s->cluster->name, s->setup.batch, ddp_precision_name(s->setup.precision),
                         s->setup.buckets.bucket_cap_mb, stragglers);
  g_string_append_printf(out, "%8s %6s %12s %12s %11s %12s %10s %8s", "gpus", "nodes", "iter_ms", "p99_ms",
                         "compute_ms", "exposed_ms", "wait_ms", "weak_eff");
  if (strong)
    g_string_append_printf(out, " %10s %9s", "batch/GPU", "strong_eff");
  g_string_append_c(out, '\n');
  for (guint i = 0; i < n; i++) {
    const DdpResult *r = rows[i].result;
    g_string_append_printf(out, "%8" G_GUINT64_FORMAT " %6" G_GUINT64_FORMAT " %12.3f %12.3f %11.3f %12.3f %10.3f %7.1f%%",
                           rows[i].gpus, rows[i].nodes, r->mean_ms, r->p99_ms, r->compute_ms, r->exposed_comm_ms,
                           r->straggler_wait_ms, 100 * r->scaling_efficiency);
    if (strong) {
      if (isnan(rows[i].strong_efficiency))
        g_string_append_printf(out, " %10.4g %9s", rows[i].batch_per_gpu, "n/a");
      else
        g_string_append_printf(out, " %10.4g %8.1f%%", rows[i].batch_per_gpu, 100 * rows[i].strong_efficiency);
    }
    g_string_append_c(out, '\n');
  }
  return g_string_free(out, FALSE);
}

static char *
scale_json(const DdpScenario *s, const ScaleRow *rows, guint n, gboolean strong, double global_batch)
{
  DdpJson *j = ddp_json_new();
  ddp_json_begin_object(j, NULL);
  ddp_json_string(j, "model", s->model->name);
  ddp_json_string(j, "cluster", s->cluster->name);
  ddp_json_double(j, "batch", s->setup.batch, 6);
  if (strong)
    ddp_json_double(j, "global_batch", global_batch, 6);
  ddp_json_begin_array(j, "rows");
  for (guint i = 0; i < n; i++) {
    const DdpResult *r = rows[i].result;
    ddp_json_begin_object(j, NULL);
    ddp_json_int(j, "gpus", (gint64)rows[i].gpus);
    ddp_json_int(j, "nodes", (gint64)rows[i].nodes);
    ddp_json_double(j, "iteration_ms", r->mean_ms, 6);
    ddp_json_double(j, "p99_ms", r->p99_ms, 6);
    ddp_json_double(j, "compute_ms", r->compute_ms, 6);
    ddp_json_double(j, "comm_ms", r->comm_ms, 6);
    ddp_json_double(j, "exposed_comm_ms", r->exposed_comm_ms, 6);
    ddp_json_double(j, "straggler_wait_ms", r->straggler_wait_ms, 6);
    ddp_json_double(j, "scaling_efficiency", r->scaling_efficiency, 6);
    ddp_json_double(j, "samples_per_s", r->samples_per_s, 3);
    if (strong) {
      ddp_json_double(j, "batch_per_gpu", rows[i].batch_per_gpu, 6);
      ddp_json_double(j, "strong_scaling_efficiency", rows[i].strong_efficiency, 6);
    }
    ddp_json_end_object(j);
  }
  ddp_json_end_array(j);
  ddp_json_end_object(j);
  return ddp_json_free_to_string(j);
}

static char *
scale_csv(const ScaleRow *rows, guint n, gboolean strong)
{
  GString *out = g_string_new("gpus,nodes,iteration_ms,p99_ms,compute_ms,comm_ms,exposed_comm_ms,straggler_wait_ms,scaling_efficiency,samples_per_s");
  g_string_append(out, strong ? ",batch_per_gpu,strong_scaling_efficiency\n" : "\n");
  for (guint i = 0; i < n; i++) {
    const DdpResult *r = rows[i].result;
    g_string_append_printf(out, "%" G_GUINT64_FORMAT ",%" G_GUINT64_FORMAT ",%.6f,%.6f,%.6f,%.6f,%.6f,%.6f,%.6f,%.3f", rows[i].gpus,
                           rows[i].nodes, r->mean_ms, r->p99_ms, r->compute_ms, r->comm_ms, r->exposed_comm_ms,
                           r->straggler_wait_ms, r->scaling_efficiency, r->samples_per_s);
    if (strong) {
      if (isnan(rows[i].strong_efficiency))
        g_string_append_printf(out, ",%.6f,\n", rows[i].batch_per_gpu);
      else
        g_string_append_printf(out, ",%.6f,%.6f\n", rows[i].batch_per_gpu, rows[i].strong_efficiency);
    } else {
      g_string_append_c(out, '\n');
    }
  }
  return g_string_free(out, FALSE);
}

static gboolean
draw(const DdpScenario *s, const ScaleRow *rows, guint n, const ScaleOptions *o, GError **error)
{
  GString *data = g_string_new("# gpus nodes iteration_ms scaling_efficiency exposed_comm_ms\n");
  for (guint i = 0; i < n; i++)
    g_string_append_printf(data, "%" G_GUINT64_FORMAT " %" G_GUINT64_FORMAT " %.6f %.6f %.6f\n", rows[i].gpus, rows[i].nodes,
                           rows[i].result->mean_ms, rows[i].result->scaling_efficiency, rows[i].result->exposed_comm_ms);
  g_autofree char *text = g_string_free(data, FALSE);
  g_autofree char *title = g_strdup_printf("%s on %s: weak scaling, batch %g/GPU, %s", s->model->name, s->cluster->name,
                                           s->setup.batch, ddp_precision_name(s->setup.precision));
  g_autoptr(DdpPlot) plot = ddp_plot_new("scaling");
  ddp_plot_set_string(plot, "plot_title", title);
  ddp_plot_set_data(plot, "data", text);
  return ddp_plot_render(plot, o->plot, o->plot_data, error);
}

static int
run(int argc, char **argv, ScaleOptions *o)
{
  GOptionEntry own[] = {
    { "global-batch", 0, 0, G_OPTION_ARG_STRING, &o->global_batch, "Also strong scaling at this fixed global batch", "B" },
    { "json", 0, 0, G_OPTION_ARG_NONE, &o->json, "Print JSON: rows [{gpus, nodes, iteration_ms, scaling_efficiency, exposed_comm_ms, …}]", NULL },
    { "csv", 0, 0, G_OPTION_ARG_NONE, &o->csv, "Print CSV", NULL },
    { "plot", 0, 0, G_OPTION_ARG_FILENAME, &o->plot, "Draw efficiency and iteration time vs GPUs (.png or .svg)", "FILE" },
    { "plot-data", 0, 0, G_OPTION_ARG_FILENAME, &o->plot_data, "Keep the plot's data and gnuplot variables in DIR", "DIR" },
    { NULL, 0, 0, 0, NULL, NULL, NULL },
  };
  g_autoptr(GError) error = NULL;
  const char *scenario_path = NULL;
  if (!ddp_cmd_parse("scale", "Scaling efficiency over GPU counts.", scale_description, own, &o->cli, &argc, &argv,
                     &scenario_path, &error))
    return ddp_cmd_fail("scale", error);
  g_autoptr(GArray) gpus = NULL;
  if (o->cli.gpus && !(gpus = ddp_gpu_list_parse(o->cli.gpus, &error)))
    return ddp_cmd_fail("scale", error);
  g_autoptr(DdpScenario) s = ddp_scenario_load(scenario_path, &o->cli, FALSE, &error);
  if (!s)
    return ddp_cmd_fail("scale", error);
  if (!gpus)
    gpus = default_gpu_list(s->cluster);
  double global_batch = 0;
  if (!ddp_flag_number("global-batch", o->global_batch, &DDP_RANGE_GLOBAL_BATCH, &global_batch, &error) ||
      !ddp_stragglers_check_ranks(s->stragglers, g_array_index(gpus, guint64, gpus->len - 1), &error))
    return ddp_cmd_fail("scale", error);
  DdpPlotFormat format;
  g_autofree char *gnuplot = NULL;
  if (o->plot && (!ddp_plot_format_from_path(o->plot, "--plot", &format, &error) ||
                  !ddp_plot_check_paths("--plot", o->plot, "--plot-data", o->plot_data, &error) ||
                  !(gnuplot = ddp_plot_find_gnuplot(&error))))
    return ddp_cmd_fail("scale", error);
  for (guint i = 0; i < gpus->len; i++)
    if (!ddp_cluster_check_gpus(s->cluster, g_array_index(gpus, guint64, i), NULL, &error))
      return ddp_cmd_fail("scale", error);

  gboolean progress = progress_wanted();
  g_autofree ScaleRow *rows = g_new0(ScaleRow, gpus->len);
  double strong_base_ms = 0;
  if (global_batch > 0 && !ddp_simulate_one_gpu(s, global_batch, NULL, &strong_base_ms, &error))
    return ddp_cmd_fail("scale", error);
  int status = DDP_EXIT_OK;
  guint done = 0;
  for (; done < gpus->len; done++) {
    ScaleRow *row = &rows[done];
    DdpScenario at = *s;
    at.setup.gpus = row->gpus = g_array_index(gpus, guint64, done);
    row->batch_per_gpu = s->setup.batch;
    row->strong_efficiency = NAN;
    if (progress)
      fprintf(stderr, "\rddpsim scale: %u/%u (%" G_GUINT64_FORMAT " GPUs)   ", done + 1, gpus->len, row->gpus);
    if (!(row->result = ddp_simulate(&at, NULL, &error)))
      break;
    row->nodes = row->result->nodes;
    if (global_batch > 0) {
      row->batch_per_gpu = global_batch / (double)row->gpus;
      if (row->batch_per_gpu >= 1) {
        at.setup.batch = row->batch_per_gpu;
        DdpRunOptions options = { .skip_single_gpu = TRUE };
        g_autoptr(DdpResult) strong = ddp_simulate(&at, &options, &error);
        if (!strong)
          break;
        row->strong_efficiency = strong_base_ms / ((double)row->gpus * strong->mean_ms);
      }
    }
  }
  if (progress)
    fprintf(stderr, "\r%60s\r", "");
  if (error)
    status = ddp_cmd_fail("scale", error);
  else {
    g_autofree char *text = o->json  ? scale_json(s, rows, done, global_batch > 0, global_batch)
                            : o->csv ? scale_csv(rows, done, global_batch > 0)
                                     : scale_text(s, rows, done, global_batch > 0);
    if (o->plot && !draw(s, rows, done, o, &error))
      status = ddp_cmd_fail("scale", error);
    else if (!ddp_cmd_print(text, &error))
      status = ddp_cmd_fail("scale", error);
  }
  for (guint i = 0; i < gpus->len; i++)
    ddp_result_free(rows[i].result);
  return status;
}

int
ddp_cmd_scale(int argc, char **argv)
{
  ScaleOptions options = { 0 };
  int status = run(argc, argv, &options);
  ddp_cli_options_clear(&options.cli);
  g_free(options.global_batch);
  g_free(options.plot);
  g_free(options.plot_data);
  return status;
}
