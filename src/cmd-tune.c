/* cmd-tune — `ddpsim tune [SCENARIO]`: sweeps DDP's bucket_cap_mb (MiB, as PyTorch) over a log
 * grid plus PyTorch's default 25, simulates each, and recommends the fastest.  Every cap runs
 * with the same seed, so straggler draws are common to all of them (common random numbers) and
 * differences come from the buckets, not from luck. */
#include "cmd.h"

#include "ranges.h"

#include "ddp.h"
#include "jsonout.h"
#include "plot.h"

#include <math.h>
#include <stdio.h>
#include <unistd.h>

typedef struct {
  DdpCliOptions cli;
  gboolean json, csv;
  char *range, *points, *plot, *plot_data;
} TuneOptions;

typedef struct {
  double cap_mb;
  DdpResult *result;
} TuneRow;

static int
compare_double(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* MIN:MAX with @points caps spaced evenly in log2 (default: one per power of two), plus 25. */
static GArray *
cap_grid(const char *range, const char *points_text, GError **error)
{
  double lo = 1, hi = 256;
  if (range) {
    g_auto(GStrv) parts = g_strsplit(range, ":", -1);
    char *e1 = NULL, *e2 = NULL;
    if (g_strv_length(parts) != 2 || (lo = g_ascii_strtod(parts[0], &e1), *e1 != '\0' || e1 == parts[0]) ||
        (hi = g_ascii_strtod(parts[1], &e2), *e2 != '\0' || e2 == parts[1]) || !(hi >= lo) ||
        !ddp_range_contains(&DDP_RANGE_BUCKET_CAP_MB, lo) || !ddp_range_contains(&DDP_RANGE_BUCKET_CAP_MB, hi)) {
      g_autofree char *quoted = ddp_range_quote(range);
      g_set_error(error, DDP_CMD_ERROR, 0, "--range: \"%s\" must be MIN:MAX in MiB with 1e-06 <= MIN <= MAX <= 1e+09", quoted);
      return NULL;
    }
  }
  guint64 points = (guint64)floor(log2(hi / lo)) + 1;
  if (points_text && !g_ascii_string_to_unsigned(points_text, 10, 1, 10000, &points, NULL)) {
    g_set_error(error, DDP_CMD_ERROR, 0, "--points: \"%s\" must be an integer from 1 to 10000", points_text);
    return NULL;
  }
  GArray *caps = g_array_new(FALSE, FALSE, sizeof(double));
  for (guint64 i = 0; i < points; i++) {
    double cap = points == 1 ? lo : lo * pow(hi / lo, (double)i / (double)(points - 1));
    cap = round(cap * 1e6) / 1e6;   /* printable, and the same cap every run */
    g_array_append_val(caps, cap);
  }
  double pytorch_default = 25;
  g_array_append_val(caps, pytorch_default);
  g_array_sort(caps, compare_double);
  for (guint i = 1; i < caps->len;)
    if (g_array_index(caps, double, i) == g_array_index(caps, double, i - 1))
      g_array_remove_index(caps, i);
    else
      i++;
  return caps;
}

static guint
best_row(const TuneRow *rows, guint n)
{
  guint best = 0;
  for (guint i = 1; i < n; i++)
    if (rows[i].result->mean_ms < rows[best].result->mean_ms)
      best = i;
  return best;
}

static guint
default_row(const TuneRow *rows, guint n)
{
  for (guint i = 0; i < n; i++)
    if (rows[i].cap_mb == 25)
      return i;
  g_assert_not_reached();
}

static char *
tune_text(const DdpScenario *s, const TuneRow *rows, guint n)
{
  GString *out = g_string_new(NULL);
  g_autofree char *stragglers = ddp_stragglers_to_string(s->stragglers);
  g_string_append_printf(out, "%s on %s: %" G_GUINT64_FORMAT " GPUs, batch %g/GPU, %s, stragglers %s\n\n", s->model->name,
                         s->cluster->name, s->setup.gpus, s->setup.batch, ddp_precision_name(s->setup.precision), stragglers);
  g_string_append_printf(out, "%14s %8s %12s %12s %10s %12s\n", "bucket_cap_mb", "buckets", "iter_ms", "p99_ms", "comm_ms",
                         "exposed_ms");
  guint best = best_row(rows, n), dflt = default_row(rows, n);
  for (guint i = 0; i < n; i++) {
    const DdpResult *r = rows[i].result;
    g_string_append_printf(out, "%14g %8u %12.3f %12.3f %10.3f %12.3f%s\n", rows[i].cap_mb, r->n_buckets, r->mean_ms,
                           r->p99_ms, r->comm_ms, r->exposed_comm_ms,
                           i == best ? "   <- best" : i == dflt ? "   (PyTorch default)" : "");
  }
  const DdpResult *b = rows[best].result, *d = rows[dflt].result;
  g_string_append_printf(out, "\nbest bucket_cap_mb %g: %.3f ms per iteration, %.1f %% faster than the default 25 (%.3f ms).\n",
                         rows[best].cap_mb, b->mean_ms, 100 * (d->mean_ms - b->mean_ms) / d->mean_ms, d->mean_ms);
  g_string_append_printf(out, "  %u buckets: %.3f ms of AllReduce, %.3f ms exposed after backward (default: %u buckets, %.3f ms, %.3f ms exposed).\n",
                         b->n_buckets, b->comm_ms, b->exposed_comm_ms, d->n_buckets, d->comm_ms, d->exposed_comm_ms);
  return g_string_free(out, FALSE);
}

static char *
tune_json(const DdpScenario *s, const TuneRow *rows, guint n)
{
  guint best = best_row(rows, n), dflt = default_row(rows, n);
  DdpJson *j = ddp_json_new();
  ddp_json_begin_object(j, NULL);
  ddp_json_string(j, "model", s->model->name);
  ddp_json_string(j, "cluster", s->cluster->name);
  ddp_json_int(j, "gpus", (gint64)s->setup.gpus);
  ddp_json_begin_array(j, "rows");
  for (guint i = 0; i < n; i++) {
    const DdpResult *r = rows[i].result;
    ddp_json_begin_object(j, NULL);
    ddp_json_double(j, "bucket_cap_mb", rows[i].cap_mb, 6);
    ddp_json_double(j, "iteration_ms", r->mean_ms, 6);
    ddp_json_double(j, "p99_ms", r->p99_ms, 6);
    ddp_json_int(j, "buckets", r->n_buckets);
    ddp_json_double(j, "comm_ms", r->comm_ms, 6);
    ddp_json_double(j, "exposed_comm_ms", r->exposed_comm_ms, 6);
    ddp_json_end_object(j);
  }
  ddp_json_end_array(j);
  ddp_json_double(j, "best_bucket_cap_mb", rows[best].cap_mb, 6);
  ddp_json_double(j, "best_iteration_ms", rows[best].result->mean_ms, 6);
  ddp_json_double(j, "default_iteration_ms", rows[dflt].result->mean_ms, 6);
  ddp_json_double(j, "gain_over_default", (rows[dflt].result->mean_ms - rows[best].result->mean_ms) / rows[dflt].result->mean_ms, 6);
  ddp_json_end_object(j);
  return ddp_json_free_to_string(j);
}

static char *
tune_csv(const TuneRow *rows, guint n)
{
  GString *out = g_string_new("bucket_cap_mb,iteration_ms,p99_ms,buckets,comm_ms,exposed_comm_ms\n");
  for (guint i = 0; i < n; i++) {
    const DdpResult *r = rows[i].result;
    g_string_append_printf(out, "%g,%.6f,%.6f,%u,%.6f,%.6f\n", rows[i].cap_mb, r->mean_ms, r->p99_ms, r->n_buckets, r->comm_ms,
                           r->exposed_comm_ms);
  }
  return g_string_free(out, FALSE);
}

static gboolean
draw(const DdpScenario *s, const TuneRow *rows, guint n, const TuneOptions *o, GError **error)
{
  GString *data = g_string_new("# bucket_cap_mb iteration_ms\n");
  for (guint i = 0; i < n; i++)
    g_string_append_printf(data, "%.6f %.6f\n", rows[i].cap_mb, rows[i].result->mean_ms);
  g_autofree char *text = g_string_free(data, FALSE);
  g_autofree char *title = g_strdup_printf("%s on %s, %" G_GUINT64_FORMAT " GPUs: iteration time vs bucket_cap_mb",
                                           s->model->name, s->cluster->name, s->setup.gpus);
  g_autoptr(DdpPlot) plot = ddp_plot_new("buckets");
  ddp_plot_set_string(plot, "plot_title", title);
  ddp_plot_set_data(plot, "data", text);
  ddp_plot_set_number(plot, "best_bucket_cap_mb", rows[best_row(rows, n)].cap_mb);
  return ddp_plot_render(plot, o->plot, o->plot_data, error);
}

static int
run(int argc, char **argv, TuneOptions *o)
{
  GOptionEntry own[] = {
    { "range", 0, 0, G_OPTION_ARG_STRING, &o->range, "Caps to sweep, MiB (default 1:256)", "MIN:MAX" },
    { "points", 0, 0, G_OPTION_ARG_STRING, &o->points, "Caps on the log grid (default one per power of two)", "N" },
    { "json", 0, 0, G_OPTION_ARG_NONE, &o->json, "Print JSON: rows [{bucket_cap_mb, iteration_ms}], best_bucket_cap_mb", NULL },
    { "csv", 0, 0, G_OPTION_ARG_NONE, &o->csv, "Print CSV", NULL },
    { "plot", 0, 0, G_OPTION_ARG_FILENAME, &o->plot, "Draw iteration time vs bucket_cap_mb (.png or .svg)", "FILE" },
    { "plot-data", 0, 0, G_OPTION_ARG_FILENAME, &o->plot_data, "Keep the plot's data and gnuplot variables in DIR", "DIR" },
    { NULL, 0, 0, 0, NULL, NULL, NULL },
  };
  g_autoptr(GError) error = NULL;
  const char *scenario_path = NULL;
  if (!ddp_cmd_parse("tune", "Sweep bucket_cap_mb and recommend the best.",
                     "The recommendation is the cap with the least mean iteration time over --iterations steady\n"
                     "iterations, stragglers included when configured; PyTorch's default 25 is always simulated.",
                     own, &o->cli, &argc, &argv, &scenario_path, &error))
    return ddp_cmd_fail("tune", error);
  g_autoptr(DdpScenario) s = ddp_scenario_load(scenario_path, &o->cli, TRUE, &error);
  if (!s)
    return ddp_cmd_fail("tune", error);
  g_autoptr(GArray) caps = cap_grid(o->range, o->points, &error);
  if (!caps)
    return ddp_cmd_fail("tune", error);
  DdpPlotFormat format;
  g_autofree char *gnuplot = NULL;
  if (o->plot && (!ddp_plot_format_from_path(o->plot, "--plot", &format, &error) ||
                  !ddp_plot_check_paths("--plot", o->plot, "--plot-data", o->plot_data, &error) ||
                  !(gnuplot = ddp_plot_find_gnuplot(&error))))
    return ddp_cmd_fail("tune", error);

  gboolean progress = isatty(STDERR_FILENO);
  g_autofree TuneRow *rows = g_new0(TuneRow, caps->len);
  DdpRunOptions options = { .skip_single_gpu = TRUE };
  guint done = 0;
  for (; done < caps->len; done++) {
    DdpScenario at = *s;
    rows[done].cap_mb = at.setup.buckets.bucket_cap_mb = g_array_index(caps, double, done);
    at.setup.buckets.bucket_cap_given = TRUE;
    if (progress)
      fprintf(stderr, "\rddpsim tune: %u/%u (bucket_cap_mb %g)   ", done + 1, caps->len, rows[done].cap_mb);
    if (!(rows[done].result = ddp_simulate(&at, &options, &error)))
      break;
  }
  if (progress)
    fprintf(stderr, "\r%60s\r", "");
  int status = DDP_EXIT_OK;
  if (error) {
    status = ddp_cmd_fail("tune", error);
  } else {
    g_autofree char *text = o->json ? tune_json(s, rows, done) : o->csv ? tune_csv(rows, done) : tune_text(s, rows, done);
    if (o->plot && !draw(s, rows, done, o, &error))
      status = ddp_cmd_fail("tune", error);
    else if (!ddp_cmd_print(text, &error))
      status = ddp_cmd_fail("tune", error);
  }
  for (guint i = 0; i < caps->len; i++)
    ddp_result_free(rows[i].result);
  return status;
}

int
ddp_cmd_tune(int argc, char **argv)
{
  TuneOptions options = { 0 };
  int status = run(argc, argv, &options);
  ddp_cli_options_clear(&options.cli);
  g_free(options.range);
  g_free(options.points);
  g_free(options.plot);
  g_free(options.plot_data);
  return status;
}
