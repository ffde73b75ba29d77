/* cmd-scale — `ddpsim scale [SCENARIO] --gpus 8,16,...,131072`: one prediction per GPU count;
 * weak scaling (fixed per-GPU batch) by default, strong scaling (fixed global batch, each count
 * simulated at its own per-GPU batch, accumulating when that exceeds what fits) with
 * --global-batch.  Definitions are printed by --help, named in the JSON (scaling_definition) and
 * the plot, and documented in docs/solve.md. */
#include "cmd.h"

#include "cost.h"
#include "ddp.h"
#include "jsonout.h"
#include "plot.h"
#include "progress.h"
#include "ranges.h"
#include "report.h"
#include "solve.h"

#include <math.h>
#include <stdio.h>
#include <unistd.h>

typedef struct {
  DdpCliOptions cli;
  DdpCostFlags cost;
  gboolean json, csv;
  char *global_batch, *max_batch, *plot, *plot_data;
} ScaleOptions;

/* One GPU count.  Weak scaling: the scenario's batch per GPU.  Strong scaling: batch_per_gpu =
 * B/N, run as @accumulate micro-steps of @micro_batch; feasible only when B/N >= 1 sample. */
typedef struct {
  guint64 gpus, nodes;
  double batch_per_gpu, micro_batch;
  double reached;             /* strong: the global batch a step actually takes (N · whole samples per GPU) */
  guint accumulate;
  gboolean feasible;
  DdpResult *result;          /* NULL when not feasible */
  double efficiency;          /* weak: T(1)/T(N); strong: T(1, B)/(N·T(N, B/N)) */
} ScaleRow;

static const char weak_definition[] = "T(1 GPU, no DDP) / T(N GPUs) at the same per-GPU batch";
static const char strong_definition[] = "T(1 GPU, global batch B) / (N * T(N GPUs, B/N per GPU))";

static const char scale_description[] =
  "--gpus takes a comma-separated list; \"A,B,...,C\" continues the progression of A and B\n"
  "(doubling when B = 2A) up to C.  Default: 1, 2, 4, … GPUs up to one node, then 2, 4, … 128 nodes.\n\n"
  "Weak scaling (default): every GPU keeps the scenario's batch; efficiency = T(1 GPU, no DDP) / T(N GPUs).\n"
  "Strong scaling (--global-batch B): the optimizer step always sees B samples; each GPU count runs\n"
  "B/N per GPU, split into K micro-steps (no_sync accumulation) when B/N exceeds --max-batch (default:\n"
  "the largest per-GPU batch that fits in GPU memory); T(1) is one GPU doing all B the same way, and\n"
  "efficiency = T(1) / (N · T(N)), the speed-up over one GPU divided by N.  Counts with B/N < 1 sample\n"
  "are not feasible (reported, not simulated).  Times are per optimizer step.";

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

/* The cost estimate of a simulated row (NaN fields for an infeasible one). */
static DdpCostEstimate
row_cost(const DdpCost *cost, const ScaleRow *row)
{
  return ddp_cost_estimate(cost, row->gpus, row->result ? row->result->samples_per_s : 0);
}

static char *
scale_text(const DdpScenario *s, const DdpCost *cost, const ScaleRow *rows, guint n, double global_batch)
{
  GString *out = g_string_new(NULL);
  gboolean strong = global_batch > 0;
  g_autofree char *stragglers = ddp_stragglers_to_string(s->stragglers);
  g_string_append_printf(out, "%s on %s, ", s->model->name, s->cluster->name);
  if (strong)
    g_string_append_printf(out, "strong scaling at global batch %.15g", global_batch);
  else
    g_string_append_printf(out, "weak scaling at batch %.15g/GPU", s->setup.batch);
  g_string_append_printf(out, ", %s, bucket_cap_mb %g, stragglers %s\nefficiency = %s\n\n",
                         ddp_setup_precision_label(&s->setup), s->setup.buckets.bucket_cap_mb, stragglers,
                         strong ? strong_definition : weak_definition);
  g_string_append_printf(out, "%8s %6s", "gpus", "nodes");
  if (strong)
    g_string_append_printf(out, " %10s %12s %10s", "batch/GPU", "micro x K", "global");
  g_string_append_printf(out, " %12s %12s %11s %12s %10s %10s", "iter_ms", "p99_ms", "compute_ms", "exposed_ms",
                         "wait_ms", strong ? "strong_eff" : "weak_eff");
  if (cost->price_per_gpu_hour > 0)
    g_string_append_printf(out, " %12s", "cost/1k");
  if (cost->train_samples > 0)
    g_string_append_printf(out, " %12s", "train_time");
  if (cost->train_samples > 0 && cost->price_per_gpu_hour > 0)
    g_string_append_printf(out, " %12s", "train_cost");
  g_string_append_c(out, '\n');
  for (guint i = 0; i < n; i++) {
    const ScaleRow *row = &rows[i];
    g_string_append_printf(out, "%8" G_GUINT64_FORMAT " %6" G_GUINT64_FORMAT, row->gpus, row->nodes);
    if (strong) {
      g_autofree char *micro = g_strdup_printf("%g x %u", row->micro_batch, row->accumulate);
      g_autofree char *reached = g_strdup_printf("%g%s", row->reached, row->reached < global_batch ? "*" : "");
      g_string_append_printf(out, " %10.4g %12s %10s", row->batch_per_gpu, row->feasible ? micro : "-",
                             row->feasible ? reached : "-");
    }
    if (!row->feasible) {
      g_string_append(out, "   not feasible: fewer than 1 sample per GPU\n");
      continue;
    }
    const DdpResult *r = row->result;
    g_string_append_printf(out, " %12.3f %12.3f %11.3f %12.3f %10.3f %9.1f%%", r->mean_ms, r->p99_ms, r->compute_ms,
                           r->exposed_comm_ms, r->straggler_wait_ms, 100 * row->efficiency);
    DdpCostEstimate e = row_cost(cost, row);
    if (cost->price_per_gpu_hour > 0)
      g_string_append_printf(out, " %12.4g", e.cost_per_1k_samples);
    g_autofree char *hours = ddp_cost_format_hours(e.train_hours);
    if (cost->train_samples > 0)
      g_string_append_printf(out, " %12s", hours);
    if (cost->train_samples > 0 && cost->price_per_gpu_hour > 0)
      g_string_append_printf(out, " %12.2f", e.train_cost);
    g_string_append_c(out, '\n');
  }
  /* once, from the first row whose ranks span several multi-host NVLink domains (docs/collective.md §11.8) */
  for (guint i = 0; i < n; i++) {
    g_autofree char *caveat = ddp_report_domains_caveat(s, rows[i].result, "  ");
    if (caveat) {
      g_string_append_printf(out, "\nfrom %" G_GUINT64_FORMAT " GPUs on, the ranks span %" G_GUINT64_FORMAT
                                  " NVLink domains or more:\n%s",
                             rows[i].gpus, rows[i].result->domains, caveat);
      break;
    }
  }
  /* and from the first row whose nodes talk over TCP sockets at the default share or over Slingshot
   * (§10.3) */
  for (guint i = 0; i < n; i++) {
    g_autofree char *transport = ddp_report_transport_caveat(s, rows[i].result, "  ");
    if (transport) {
      g_string_append_printf(out, "\nfrom %" G_GUINT64_FORMAT " GPUs on, the nodes talk over %s:\n%s", rows[i].gpus,
                             s->cluster->inter.fabric == DDP_INTER_SLINGSHOT ? "Slingshot" : "TCP sockets", transport);
      break;
    }
  }
  for (guint i = 0; strong && i < n; i++)
    if (rows[i].feasible && rows[i].reached < global_batch) {
      g_string_append_printf(out, "\n* whole samples per GPU and whole micro-batches reach a smaller global batch than %g;\n"
                                  "  efficiency is per sample (T(1)/B_1 over T(N)/B_N, B_N the global batch reached)\n",
                             global_batch);
      break;
    }
  if (cost->price_per_gpu_hour > 0)
    g_string_append_printf(out, "\ncost at %g per GPU-hour%s\n", cost->price_per_gpu_hour,
                           cost->train_samples > 0 ? "; train_time and train_cost for the given training length" : "");
  return g_string_free(out, FALSE);
}

static char *
scale_json(const DdpScenario *s, const DdpCost *cost, const ScaleRow *rows, guint n, double global_batch, double max_batch)
{
  gboolean strong = global_batch > 0;
  DdpJson *j = ddp_json_new();
  ddp_json_begin_object(j, NULL);
  ddp_json_string(j, "model", s->model->name);
  ddp_json_string(j, "cluster", s->cluster->name);
  ddp_json_string(j, "scaling_definition", strong ? "strong" : "weak");
  ddp_json_string(j, "efficiency_definition", strong ? strong_definition : weak_definition);
  if (strong) {
    ddp_json_double(j, "global_batch", global_batch, 6);
    ddp_json_double(j, "max_batch_per_gpu", max_batch, 6);   /* null: no memory limit */
  } else {
    ddp_json_double(j, "batch", s->setup.batch, 6);
  }
  ddp_json_begin_array(j, "rows");
  for (guint i = 0; i < n; i++) {
    const ScaleRow *row = &rows[i];
    const DdpResult *r = row->result;
    ddp_json_begin_object(j, NULL);
    ddp_json_int(j, "gpus", (gint64)row->gpus);
    ddp_json_int(j, "nodes", (gint64)row->nodes);
    if (strong) {
      ddp_json_bool(j, "feasible", row->feasible);
      ddp_json_double(j, "batch_per_gpu", row->batch_per_gpu, 6);
      ddp_json_double(j, "micro_batch", row->feasible ? row->micro_batch : NAN, 6);
      ddp_json_int(j, "accumulate", row->feasible ? row->accumulate : 0);
      ddp_json_double(j, "global_batch_reached", row->feasible ? row->reached : NAN, 6);
    }
    ddp_json_double(j, "iteration_ms", r ? r->mean_ms : NAN, 6);
    ddp_json_double(j, "p99_ms", r ? r->p99_ms : NAN, 6);
    ddp_json_double(j, "compute_ms", r ? r->compute_ms : NAN, 6);
    ddp_json_double(j, "comm_ms", r ? r->comm_ms : NAN, 6);
    ddp_json_double(j, "exposed_comm_ms", r ? r->exposed_comm_ms : NAN, 6);
    ddp_json_double(j, "straggler_wait_ms", r ? r->straggler_wait_ms : NAN, 6);
    ddp_json_double(j, "scaling_efficiency", r ? row->efficiency : NAN, 6);
    ddp_json_double(j, "samples_per_s", r ? r->samples_per_s : NAN, 3);
    if (r)
      ddp_json_bool(j, "fits_memory", r->memory.fits);
    DdpCostEstimate e = row_cost(cost, row);
    ddp_cost_json(j, cost, &e);
    ddp_json_end_object(j);
  }
  ddp_json_end_array(j);
  ddp_json_end_object(j);
  return ddp_json_free_to_string(j);
}

static char *
scale_csv(const DdpCost *cost, const ScaleRow *rows, guint n, gboolean strong)
{
  gboolean priced = cost->price_per_gpu_hour > 0, timed = cost->train_samples > 0;
  GString *out = g_string_new("gpus,nodes,");
  if (strong)
    g_string_append(out, "batch_per_gpu,micro_batch,accumulate,");
  g_string_append(out, "iteration_ms,p99_ms,compute_ms,comm_ms,exposed_comm_ms,straggler_wait_ms,scaling_efficiency,samples_per_s");
  g_string_append_printf(out, "%s%s%s\n", priced ? ",cost_per_1k_samples" : "", timed ? ",train_hours" : "",
                         priced && timed ? ",train_cost" : "");
  for (guint i = 0; i < n; i++) {
    const ScaleRow *row = &rows[i];
    const DdpResult *r = row->result;
    g_string_append_printf(out, "%" G_GUINT64_FORMAT ",%" G_GUINT64_FORMAT ",", row->gpus, row->nodes);
    if (strong && !row->feasible) {
      g_string_append_printf(out, "%.6f,,,,,,,,,,%s%s%s\n", row->batch_per_gpu, priced ? "," : "", timed ? "," : "",
                             priced && timed ? "," : "");
      continue;
    }
    if (strong)
      g_string_append_printf(out, "%.6f,%.6f,%u,", row->batch_per_gpu, row->micro_batch, row->accumulate);
    g_string_append_printf(out, "%.6f,%.6f,%.6f,%.6f,%.6f,%.6f,%.6f,%.3f", r->mean_ms, r->p99_ms, r->compute_ms,
                           r->comm_ms, r->exposed_comm_ms, r->straggler_wait_ms, row->efficiency, r->samples_per_s);
    DdpCostEstimate e = row_cost(cost, row);
    if (priced)
      g_string_append_printf(out, ",%.6f", e.cost_per_1k_samples);
    if (timed)
      g_string_append_printf(out, ",%.6f", e.train_hours);
    if (priced && timed)
      g_string_append_printf(out, ",%.2f", e.train_cost);
    g_string_append_c(out, '\n');
  }
  return g_string_free(out, FALSE);
}

static gboolean
draw(const DdpScenario *s, const DdpCost *cost, const ScaleRow *rows, guint n, double global_batch, const ScaleOptions *o,
     GError **error)
{
  GString *data = g_string_new("# gpus nodes iteration_ms scaling_efficiency exposed_comm_ms cost_per_1k_samples\n");
  for (guint i = 0; i < n; i++)
    if (rows[i].feasible) {
      DdpCostEstimate e = row_cost(cost, &rows[i]);
      g_string_append_printf(data, "%" G_GUINT64_FORMAT " %" G_GUINT64_FORMAT " %.6f %.6f %.6f %.9g\n", rows[i].gpus,
                             rows[i].nodes, rows[i].result->mean_ms, rows[i].efficiency, rows[i].result->exposed_comm_ms,
                             cost->price_per_gpu_hour > 0 ? e.cost_per_1k_samples : 0.0);
    }
  g_autofree char *text = g_string_free(data, FALSE);
  g_autofree char *title = NULL;
  if (global_batch > 0)
    title = g_strdup_printf("%s on %s: strong scaling, global batch %.15g, %s\nefficiency = %s", s->model->name,
                            s->cluster->name, global_batch, ddp_setup_precision_label(&s->setup), strong_definition);
  else
    title = g_strdup_printf("%s on %s: weak scaling, batch %.15g/GPU, %s\nefficiency = %s", s->model->name, s->cluster->name,
                            s->setup.batch, ddp_setup_precision_label(&s->setup), weak_definition);
  g_autoptr(DdpPlot) plot = ddp_plot_new("scaling");
  ddp_plot_set_string(plot, "plot_title", title);
  ddp_plot_set_string(plot, "efficiency_label", global_batch > 0 ? "strong-scaling efficiency T(1)/(N·T(N)) (%)"
                                                                 : "weak-scaling efficiency T(1)/T(N) (%)");
  ddp_plot_set_data(plot, "data", text);
  ddp_plot_set_number(plot, "has_cost", cost->price_per_gpu_hour > 0);
  if (!ddp_plot_render(plot, "--plot", o->plot, o->plot_data, error))
    return FALSE;
  fprintf(stderr, "ddpsim scale: wrote %s\n", o->plot);
  return TRUE;
}

static int
run(int argc, char **argv, ScaleOptions *o)
{
  GOptionEntry own[] = {
    { "global-batch", 0, 0, G_OPTION_ARG_STRING, &o->global_batch, "Strong scaling at this fixed global batch (samples per optimizer step)", "B" },
    { "max-batch", 0, 0, G_OPTION_ARG_STRING, &o->max_batch, "Strong scaling: most samples per GPU per micro-step (default: what fits in memory)", "M" },
    { "json", 0, 0, G_OPTION_ARG_NONE, &o->json, "Print JSON: scaling_definition, rows [{gpus, nodes, iteration_ms, scaling_efficiency, exposed_comm_ms, …}]", NULL },
    { "csv", 0, 0, G_OPTION_ARG_NONE, &o->csv, "Print CSV", NULL },
    { "plot", 0, 0, G_OPTION_ARG_FILENAME, &o->plot, "Draw efficiency and iteration time vs GPUs (.png or .svg)", "FILE" },
    { "plot-data", 0, 0, G_OPTION_ARG_FILENAME, &o->plot_data, "Keep the plot's data and gnuplot variables in DIR", "DIR" },
    { NULL, 0, 0, 0, NULL, NULL, NULL },
  };
  g_autofree GOptionEntry *entries = ddp_cost_option_entries(own, &o->cost);
  g_autoptr(GError) error = NULL;
  const char *scenario_path = NULL;
  if (!ddp_cmd_parse("scale", "Scaling efficiency over GPU counts.", scale_description, entries, &o->cli, &argc, &argv,
                     &scenario_path, &error))
    return ddp_cmd_fail("scale", error);
  g_autoptr(GArray) gpus = NULL;
  if (o->cli.gpus && !(gpus = ddp_gpu_list_parse(o->cli.gpus, &error)))
    return ddp_cmd_fail("scale", error);
  double global_batch = 0, max_batch = INFINITY;
  if (!ddp_flag_number("global-batch", o->global_batch, &DDP_RANGE_GLOBAL_BATCH, &global_batch, &error))
    return ddp_cmd_fail("scale", error);
  if (o->max_batch && !o->global_batch) {
    g_autofree char *quoted = ddp_range_quote(o->max_batch);
    g_set_error(&error, DDP_CMD_ERROR, 0, "--max-batch: \"%s\" applies to strong scaling only (give --global-batch)", quoted);
    return ddp_cmd_fail("scale", error);
  }
  if (!ddp_flag_number("max-batch", o->max_batch, &DDP_RANGE_BATCH, &max_batch, &error))
    return ddp_cmd_fail("scale", error);
  g_autoptr(DdpScenario) s = ddp_scenario_load(scenario_path, &o->cli, FALSE, &error);
  if (!s)
    return ddp_cmd_fail("scale", error);
  if (!ddp_cli_check_mode_flags(&o->cli, s->setup.mode, &error))
    return ddp_cmd_fail("scale", error);
  DdpCost cost;
  if (!ddp_cost_init(&cost, &o->cost, s, &error))
    return ddp_cmd_fail("scale", error);
  if (!gpus)
    gpus = default_gpu_list(s->cluster);
  if (!ddp_stragglers_check_ranks(s->stragglers, g_array_index(gpus, guint64, gpus->len - 1), &error))
    return ddp_cmd_fail("scale", error);
  if (global_batch > 0 && !o->max_batch)
    max_batch = ddp_solve_max_fitting_batch(s);
  DdpPlotFormat format;
  g_autofree char *gnuplot = NULL;
  if (o->plot_data && !o->plot) {
    g_set_error(&error, DDP_CMD_ERROR, 0, "--plot-data: only with --plot (it keeps the chart's data files)");
    return ddp_cmd_fail("scale", error);
  }
  if (o->plot && (!ddp_plot_format_from_path(o->plot, "--plot", &format, &error) ||
                  !ddp_plot_check_paths("--plot", o->plot, "--plot-data", o->plot_data, &error) ||
                  !(gnuplot = ddp_plot_find_gnuplot(&error))))
    return ddp_cmd_fail("scale", error);
  for (guint i = 0; i < gpus->len; i++)
    if (!ddp_cluster_check_gpus(s->cluster, g_array_index(gpus, guint64, i), NULL, &error))
      return ddp_cmd_fail("scale", error);

  g_autoptr(DdpProgress) progress = ddp_progress_new("scale", gpus->len, "GPU counts", STDERR_FILENO);
  g_autofree ScaleRow *rows = g_new0(ScaleRow, gpus->len);
  double strong_base_ms = 0, strong_base_samples = 0;
  if (global_batch > 0 &&
      !ddp_solve_strong_base(s, global_batch, max_batch, &strong_base_ms, &strong_base_samples, &error))
    return ddp_cmd_fail("scale", error);
  int status = DDP_EXIT_OK;
  guint done = 0;
  for (; done < gpus->len; done++) {
    ScaleRow *row = &rows[done];
    DdpScenario at = *s;
    at.setup.gpus = row->gpus = g_array_index(gpus, guint64, done);
    ddp_cluster_check_gpus(s->cluster, row->gpus, &row->nodes, NULL);
    row->batch_per_gpu = row->micro_batch = s->setup.batch;
    row->accumulate = s->setup.accumulate;
    row->feasible = TRUE;
    DdpRunOptions options = { .skip_single_gpu = global_batch > 0 };
    if (global_batch > 0) {
      /* what a real run can do: whole samples per GPU, whole micro-batches (solve.h) */
      DdpStrongSplit split;
      row->batch_per_gpu = global_batch / (double)row->gpus;
      row->feasible = ddp_solve_strong_split(global_batch, row->gpus, max_batch, s->setup.accumulate, &split);
      if (!row->feasible)
        continue;
      row->batch_per_gpu = split.batch_per_gpu;
      row->reached = split.reached;
      at.setup.accumulate = row->accumulate = split.accumulate;
      at.setup.batch = row->micro_batch = split.micro_batch;
    }
    g_autofree char *what = g_strdup_printf("%" G_GUINT64_FORMAT " GPUs", row->gpus);
    ddp_progress_step(progress, what);
    if (!(row->result = ddp_simulate(&at, &options, &error)))
      break;
    /* strong: per sample, N GPUs on the samples they reach against one GPU on its own */
    row->efficiency = global_batch > 0 ? strong_base_ms / strong_base_samples * row->reached /
                                           ((double)row->gpus * row->result->mean_ms)
                                       : row->result->scaling_efficiency;
  }
  g_clear_pointer(&progress, ddp_progress_free);   /* erased before anything else is printed */
  if (error)
    status = ddp_cmd_fail("scale", error);
  else {
    g_autofree char *text = o->json  ? scale_json(s, &cost, rows, done, global_batch, max_batch)
                            : o->csv ? scale_csv(&cost, rows, done, global_batch > 0)
                                     : scale_text(s, &cost, rows, done, global_batch);
    if (o->plot && !draw(s, &cost, rows, done, global_batch, o, &error))
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
  ddp_cost_flags_clear(&options.cost);
  g_free(options.global_batch);
  g_free(options.max_batch);
  g_free(options.plot);
  g_free(options.plot_data);
  return status;
}
