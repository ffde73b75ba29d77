/* cmd-tune — `ddpsim tune [SCENARIO]`: sweeps DDP's bucket_cap_mb (MiB, as PyTorch) over a log
 * grid plus PyTorch's default 25 — and, with --first-bucket-mb, the first bucket's size
 * (dist._DEFAULT_FIRST_BUCKET_BYTES, 1 MiB; research §1.1) as a second knob — simulates each, and
 * recommends the fastest only when it beats the default (25 MiB, first bucket 1 MiB) by more than
 * --min-gain (default 1 %): a smaller predicted gain is within what the model and a real run's
 * noise can tell apart, and the answer is "keep 25".  Every point runs with the same seed, so
 * straggler draws are common to all of them (common random numbers) and differences come from the
 * buckets, not from luck. */
#include "cmd.h"

#include "ranges.h"

#include "ddp.h"
#include "fsdp.h"
#include "jointtune.h"
#include "jsonout.h"
#include "plot.h"
#include "progress.h"
#include "report.h"

#include <math.h>
#include <stdio.h>
#include <unistd.h>

typedef struct {
  DdpCliOptions cli;
  gboolean json, csv;
  char *range, *points, *first_bucket, *min_gain, *plot, *plot_data, *knobs;
} TuneOptions;

typedef struct {
  double first_mb, cap_mb;   /* as swept (the table's and the plot's blocks) */
  double first_used_mb;      /* the first bucket DDP uses: from 2.4 a passed cap is it (bucket.h) */
  DdpResult *result;
} TuneRow;

/* What the rows say: the fastest point, PyTorch's default, and whether the gain is worth it. */
typedef struct {
  guint best, dflt;
  double gain, min_gain;
  gboolean recommended;
  guint n_first;             /* first-bucket sizes swept */
} TuneVerdict;

#define PYTORCH_FIRST_BUCKET_MB 1.0   /* dist._DEFAULT_FIRST_BUCKET_BYTES = 1 MiB */
/* Why the first bucket cannot be swept against the cap under PyTorch 2.4+ (bucket.h) */
#define FIRST_BUCKET_WITH_CAP_REFUSED                                                                          \
  "from PyTorch 2.4 a bucket_cap_mb passed to DDP is also its first bucket (distributed.py "                    \
  "bucket_bytes_cap_default), so the first bucket can only be set at the default cap: sweep it with "           \
  "--knobs first-bucket alone, or give --torch-version 2.3 or earlier for the older rule"

/* How a user sets the first bucket the recommendation names: PyTorch has no DDP argument for it */
#define FIRST_BUCKET_HOW                                                                                   \
  "  The first bucket: torch.distributed._DEFAULT_FIRST_BUCKET_BYTES in PyTorch (no DDP argument; from\n"     \
  "  2.4 only while bucket_cap_mb is not passed); in ddpsim, [training] first_bucket_mb in a scenario file.\n"

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
    if (g_strv_length(parts) != 2) {
      g_autofree char *quoted = ddp_range_quote(range);
      g_set_error(error, DDP_CMD_ERROR, 0, "--range: \"%s\" must be MIN:MAX in MiB", quoted);
      return NULL;
    }
    if (!ddp_range_check_number("--range MIN", parts[0], &DDP_RANGE_BUCKET_CAP_MB, &lo, error) ||
        !ddp_range_check_number("--range MAX", parts[1], &DDP_RANGE_BUCKET_CAP_MB, &hi, error))
      return NULL;
    if (hi < lo) {
      g_autofree char *quoted = ddp_range_quote(range);
      g_set_error(error, DDP_CMD_ERROR, 0, "--range: \"%s\": MIN is above MAX", quoted);
      return NULL;
    }
  }
  guint64 points = (guint64)floor(log2(hi / lo)) + 1;
  if (!ddp_flag_count("points", points_text, &DDP_RANGE_TUNE_POINTS, &points, error))
    return NULL;
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

/* First-bucket sizes, MiB: a comma-separated list; PyTorch's 1 MiB is always added. */
static GArray *
first_bucket_list(const char *text, GError **error)
{
  GArray *list = g_array_new(FALSE, FALSE, sizeof(double));
  double pytorch_default = PYTORCH_FIRST_BUCKET_MB;
  g_array_append_val(list, pytorch_default);
  g_auto(GStrv) items = g_strsplit(text ? text : "", ",", -1);
  for (guint i = 0; text && items[i]; i++) {
    /* the first bucket's cap is a bucket cap: the same range as --bucket-cap-mb */
    double v;
    if (!ddp_range_check_number("--first-bucket-mb", items[i], &DDP_RANGE_BUCKET_CAP_MB, &v, error)) {
      g_array_free(list, TRUE);
      return NULL;
    }
    g_array_append_val(list, v);
  }
  g_array_sort(list, compare_double);
  for (guint i = 1; i < list->len;)
    if (g_array_index(list, double, i) == g_array_index(list, double, i - 1))
      g_array_remove_index(list, i);
    else
      i++;
  return list;
}

static TuneVerdict
verdict(const TuneRow *rows, guint n, guint n_first, double min_gain)
{
  TuneVerdict v = { .min_gain = min_gain, .n_first = n_first, .dflt = n };
  for (guint i = 0; i < n; i++) {
    if (rows[i].result->mean_ms < rows[v.best].result->mean_ms)
      v.best = i;
    if (rows[i].cap_mb == DDP_DEFAULT_BUCKET_CAP_MB && rows[i].first_mb == PYTORCH_FIRST_BUCKET_MB)
      v.dflt = i;
  }
  g_assert(v.dflt < n);
  double d = rows[v.dflt].result->mean_ms;
  v.gain = (d - rows[v.best].result->mean_ms) / d;
  v.recommended = v.gain > min_gain;
  return v;
}

static char *
tune_text(const DdpScenario *s, const TuneRow *rows, guint n, const TuneVerdict *v)
{
  GString *out = g_string_new(NULL);
  g_autofree char *stragglers = ddp_stragglers_to_string(s->stragglers);
  g_string_append_printf(out, "%s on %s: %" G_GUINT64_FORMAT " GPU%s, batch %.15g/GPU, %s, stragglers %s\n", s->model->name,
                         s->cluster->name, s->setup.gpus, s->setup.gpus == 1 ? "" : "s", s->setup.batch,
                         ddp_setup_precision_label(&s->setup), stragglers);
  /* the per-call cost across NVL72 racks sets which cap wins (docs/collective.md §11.8) */
  g_autofree char *caveat = ddp_report_domains_caveat(s, rows[0].result, "");
  if (caveat)
    g_string_append(out, caveat);
  g_autofree char *transport = ddp_report_transport_caveat(s, rows[0].result, "");
  if (transport)
    g_string_append(out, transport);
  g_string_append_c(out, '\n');
  if (v->n_first > 1)
    g_string_append_printf(out, "%15s ", "first_bucket_mb");
  g_string_append_printf(out, "%14s %8s %12s %12s %10s %12s\n", "bucket_cap_mb", "buckets", "iter_ms", "p99_ms", "comm_ms",
                         "exposed_ms");
  for (guint i = 0; i < n; i++) {
    const DdpResult *r = rows[i].result;
    if (v->n_first > 1)
      g_string_append_printf(out, "%15g ", rows[i].first_mb);
    g_string_append_printf(out, "%14g %8u %12.3f %12.3f %10.3f %12.3f%s\n", rows[i].cap_mb, r->n_buckets, r->mean_ms,
                           r->p99_ms, r->comm_ms, r->exposed_comm_ms,
                           i == v->best ? "   <- fastest" : i == v->dflt ? "   (PyTorch default)" : "");
  }
  const DdpResult *b = rows[v->best].result, *d = rows[v->dflt].result;
  g_autofree char *where = v->n_first > 1 ? g_strdup_printf("bucket_cap_mb %g with a %g MiB first bucket", rows[v->best].cap_mb,
                                                            rows[v->best].first_mb)
                                          : g_strdup_printf("bucket_cap_mb %g", rows[v->best].cap_mb);
  if (v->recommended) {
    g_string_append_printf(out, "\nrecommendation: %s: %.3f ms per iteration, %.1f %% faster than the default 25 (%.3f ms),\n"
                                "  above the %.1f %% threshold (--min-gain).\n",
                           where, b->mean_ms, 100 * v->gain, d->mean_ms, 100 * v->min_gain);
    g_string_append_printf(out, "  %u buckets: %.3f ms of AllReduce, %.3f ms exposed after backward (default: %u buckets, %.3f ms, %.3f ms exposed).\n",
                           b->n_buckets, b->comm_ms, b->exposed_comm_ms, d->n_buckets, d->comm_ms, d->exposed_comm_ms);
    if (rows[v->best].first_mb != PYTORCH_FIRST_BUCKET_MB)
      g_string_append(out, FIRST_BUCKET_HOW);
  } else if (v->best == v->dflt) {
    g_string_append_printf(out, "\nrecommendation: keep 25 (PyTorch's default): it is the fastest of the caps tried "
                                "(%.3f ms).\n", d->mean_ms);
  } else {
    g_string_append_printf(out, "\nrecommendation: keep 25 (PyTorch's default).\n"
                                "  The fastest, %s, is only %.2f %% faster (%.3f vs %.3f ms):\n"
                                "  not more than the %.1f %% threshold (--min-gain), within the model's and a real run's noise.\n",
                           where, 100 * v->gain, b->mean_ms, d->mean_ms, 100 * v->min_gain);
  }
  return g_string_free(out, FALSE);
}

/* A tune document, opened with the setup both forms share. */
static DdpJson *
json_document(const DdpScenario *s)
{
  DdpJson *j = ddp_json_new();
  ddp_json_begin_object(j, NULL);
  ddp_json_string(j, "model", s->model->name);
  ddp_json_string(j, "cluster", s->cluster->name);
  ddp_json_int(j, "gpus", (gint64)s->setup.gpus);
  return j;
}

static char *
tune_json(const DdpScenario *s, const TuneRow *rows, guint n, const TuneVerdict *v)
{
  DdpJson *j = json_document(s);
  ddp_json_begin_array(j, "rows");
  for (guint i = 0; i < n; i++) {
    const DdpResult *r = rows[i].result;
    ddp_json_begin_object(j, NULL);
    ddp_json_double(j, "first_bucket_mb", rows[i].first_used_mb, 6);
    ddp_json_double(j, "bucket_cap_mb", rows[i].cap_mb, 6);
    ddp_json_double(j, "iteration_ms", r->mean_ms, 6);
    ddp_json_double(j, "p99_ms", r->p99_ms, 6);
    ddp_json_int(j, "buckets", r->n_buckets);
    ddp_json_double(j, "comm_ms", r->comm_ms, 6);
    ddp_json_double(j, "exposed_comm_ms", r->exposed_comm_ms, 6);
    ddp_json_end_object(j);
  }
  ddp_json_end_array(j);
  ddp_json_double(j, "best_bucket_cap_mb", rows[v->best].cap_mb, 6);
  ddp_json_double(j, "best_first_bucket_mb", rows[v->best].first_used_mb, 6);
  ddp_json_double(j, "best_iteration_ms", rows[v->best].result->mean_ms, 6);
  ddp_json_double(j, "default_iteration_ms", rows[v->dflt].result->mean_ms, 6);
  ddp_json_double(j, "gain_over_default", v->gain, 6);
  ddp_json_double(j, "min_gain", v->min_gain, 6);
  ddp_json_bool(j, "recommended", v->recommended);
  /* what to set: the fastest point when its gain is above the threshold, else PyTorch's defaults */
  guint use = v->recommended ? v->best : v->dflt;
  ddp_json_double(j, "recommended_bucket_cap_mb", rows[use].cap_mb, 6);
  ddp_json_double(j, "recommended_first_bucket_mb", rows[use].first_used_mb, 6);
  ddp_json_end_object(j);
  return ddp_json_free_to_string(j);
}

static char *
tune_csv(const TuneRow *rows, guint n)
{
  GString *out = g_string_new("first_bucket_mb,bucket_cap_mb,iteration_ms,p99_ms,buckets,comm_ms,exposed_comm_ms\n");
  for (guint i = 0; i < n; i++) {
    const DdpResult *r = rows[i].result;
    g_string_append_printf(out, "%g,%g,%.6f,%.6f,%u,%.6f,%.6f\n", rows[i].first_mb, rows[i].cap_mb, r->mean_ms, r->p99_ms,
                           r->n_buckets, r->comm_ms, r->exposed_comm_ms);
  }
  return g_string_free(out, FALSE);
}

/* buckets.gp's data: one block per first-bucket size (gnuplot index 0, 1, …), caps ascending. */
static gboolean
draw(const DdpScenario *s, const TuneRow *rows, guint n, const TuneVerdict *v, const TuneOptions *o, GError **error)
{
  GString *data = g_string_new("# first_bucket_mb bucket_cap_mb iteration_ms\n");
  GString *firsts = g_string_new(NULL);
  for (guint i = 0; i < n; i++) {
    if (i > 0 && rows[i].first_mb != rows[i - 1].first_mb)
      g_string_append(data, "\n\n");
    if (i == 0 || rows[i].first_mb != rows[i - 1].first_mb)
      g_string_append_printf(firsts, "%s%g", firsts->len ? " " : "", rows[i].first_mb);
    g_string_append_printf(data, "%g %g %.6f\n", rows[i].first_mb, rows[i].cap_mb, rows[i].result->mean_ms);
  }
  g_autofree char *text = g_string_free(data, FALSE);
  g_autofree char *first_list = g_string_free(firsts, FALSE);
  g_autofree char *first_text = v->n_first > 1 ? g_strdup_printf(", first bucket %g MiB", rows[v->best].first_mb) : g_strdup("");
  g_autofree char *verdict_text =
    v->recommended        ? g_strdup_printf("recommendation: bucket_cap_mb %g%s (%.1f %% faster than 25)", rows[v->best].cap_mb,
                                            first_text, 100 * v->gain)
    : v->best == v->dflt ? g_strdup("recommendation: keep 25 (the fastest of the caps tried)")
                         : g_strdup_printf("recommendation: keep 25 (the fastest is only %.2f %% faster; threshold %.1f %%)",
                                           100 * v->gain, 100 * v->min_gain);
  g_autofree char *title = g_strdup_printf("%s on %s, %" G_GUINT64_FORMAT " GPUs: iteration time vs bucket_cap_mb\n%s",
                                           s->model->name, s->cluster->name, s->setup.gpus, verdict_text);
  g_autoptr(DdpPlot) plot = ddp_plot_new("buckets");
  ddp_plot_set_string(plot, "plot_title", title);
  ddp_plot_set_data(plot, "data", text);
  ddp_plot_set_string(plot, "first_bucket_mbs", first_list);
  ddp_plot_set_number(plot, "best_bucket_cap_mb", rows[v->best].cap_mb);
  ddp_plot_set_number(plot, "best_first_bucket_mb", rows[v->best].first_mb);
  if (!ddp_plot_render(plot, "--plot", o->plot, o->plot_data, error))
    return FALSE;
  fprintf(stderr, "ddpsim tune: wrote %s\n", o->plot);   /* stderr: stdout may be --json or --csv */
  return TRUE;
}

/* ---- several knobs together (jointtune.h) ---------------------------------------------- */

typedef struct {
  const DdpScenario *scenario;
  const DdpJointSpace *space;
  DdpProgress *progress;
} JointRun;

/* Time per sample per GPU (ms): the iteration over the samples one GPU carries per step. */
static gboolean
joint_evaluate(const guint *choice, double *objective, gpointer data, GError **error)
{
  JointRun *j = data;
  DdpScenario at;
  ddp_joint_space_apply(j->space, choice, j->scenario, &at);
  ddp_progress_step(j->progress, NULL);
  DdpRunOptions options = { .skip_single_gpu = TRUE };
  g_autoptr(DdpResult) r = ddp_simulate(&at, &options, error);
  if (!r)
    return FALSE;
  *objective = r->memory.fits ? r->mean_ms / (at.setup.batch * at.setup.accumulate) : INFINITY;
  return TRUE;
}

static void
joint_choice_text(GString *out, const DdpJointSpace *space, const guint *choice, const char *sep)
{
  for (guint k = 0; k < ddp_joint_space_n_knobs(space); k++) {
    g_autofree char *v = ddp_joint_space_format(space, k, choice[k]);
    g_string_append_printf(out, "%s%s %s", k ? sep : "", ddp_joint_space_knobs(space)[k].name, v);
  }
}

static char *
joint_text(const DdpScenario *s, const DdpJointSpace *space, const DdpJointResult *r, double min_gain)
{
  GString *out = g_string_new(NULL);
  const DdpJointKnob *knobs = ddp_joint_space_knobs(space);
  guint n = ddp_joint_space_n_knobs(space);
  g_autofree char *stragglers = ddp_stragglers_to_string(s->stragglers);
  g_string_append_printf(out, "%s on %s: %" G_GUINT64_FORMAT " GPU%s, batch %.15g/GPU, %s, stragglers %s\n", s->model->name,
                         s->cluster->name, s->setup.gpus, s->setup.gpus == 1 ? "" : "s", s->setup.batch,
                         ddp_setup_precision_label(&s->setup), stragglers);
  g_string_append_printf(out, "knobs tuned together: %" G_GUINT64_FORMAT " combinations, %u simulated (%s)\n", r->space,
                         r->points->len, r->exhaustive ? "exhaustive" : "every one- and two-knob change, then coordinate descent");
  g_string_append(out, "objective: time per sample (iteration time / samples per GPU per step); out-of-memory points excluded\n\n");
  /* the ten best combinations */
  g_autoptr(GArray) order = g_array_new(FALSE, FALSE, sizeof(DdpJointPoint));
  g_array_append_vals(order, r->points->data, r->points->len);
  for (guint i = 1; i < order->len; i++)   /* insertion sort by objective, stable on index */
    for (guint j = i; j > 0 && g_array_index(order, DdpJointPoint, j).objective < g_array_index(order, DdpJointPoint, j - 1).objective; j--) {
      DdpJointPoint t = g_array_index(order, DdpJointPoint, j);
      g_array_index(order, DdpJointPoint, j) = g_array_index(order, DdpJointPoint, j - 1);
      g_array_index(order, DdpJointPoint, j - 1) = t;
    }
  g_autofree guint *choice = g_new(guint, n);
  g_string_append_printf(out, "%4s %14s %10s  %s\n", "rank", "ms/sample/GPU", "vs default", "combination");
  for (guint i = 0; i < order->len && i < 10; i++) {
    const DdpJointPoint *p = &g_array_index(order, DdpJointPoint, i);
    ddp_joint_choice(knobs, n, p->index, choice);
    g_string_append_printf(out, "%4u %14.6f %+9.2f%%  ", i + 1, p->objective, 100 * (p->objective / r->default_objective - 1));
    joint_choice_text(out, space, choice, ", ");
    g_string_append_c(out, '\n');
  }
  GString *best = g_string_new(NULL);
  joint_choice_text(best, space, r->best, ", ");
  if (r->gain > min_gain)
    g_string_append_printf(out, "\nrecommendation: %s: %.3f %% less time per sample than PyTorch's defaults,\n"
                                "  above the %.1f %% threshold (--min-gain).\n", best->str, 100 * r->gain, 100 * min_gain);
  else
    g_string_append_printf(out, "\nrecommendation: keep PyTorch's defaults.\n  The best, %s, is only %.2f %% faster:\n"
                                "  not more than the %.1f %% threshold (--min-gain), within the model's and a real run's noise.\n",
                           best->str, 100 * r->gain, 100 * min_gain);
  g_string_free(best, TRUE);
  for (guint k = 0; k < n; k++)
    if (ddp_joint_space_kind(space, k) == DDP_KNOB_ACCUMULATE && ddp_joint_space_value(space, k, r->best[k]) > 1)
      g_string_append_printf(out, "  Note: accumulate %g multiplies the samples per optimizer step by %g (the global batch\n"
                                  "  changes, and with it the learning-rate schedule): a training change, not only a speed-up.\n",
                             ddp_joint_space_value(space, k, r->best[k]), ddp_joint_space_value(space, k, r->best[k]));
    else if (r->gain > min_gain && ddp_joint_space_kind(space, k) == DDP_KNOB_FIRST_BUCKET &&
             ddp_joint_space_value(space, k, r->best[k]) != PYTORCH_FIRST_BUCKET_MB)
      g_string_append(out, FIRST_BUCKET_HOW);
  return g_string_free(out, FALSE);
}

static void
joint_choice_json(DdpJson *j, const char *key, const DdpJointSpace *space, const guint *choice)
{
  /* JSON keys as the rest of ddpsim's JSON names these settings (docs/json.md) */
  static const char *const keys[DDP_KNOB_COUNT] = { "bucket_cap_mb", "accumulate", "comm_hook", "gradient_as_bucket_view",
                                                    "first_bucket_mb" };
  ddp_json_begin_object(j, key);
  for (guint k = 0; k < ddp_joint_space_n_knobs(space); k++) {
    const char *name = keys[ddp_joint_space_kind(space, k)];
    double v = ddp_joint_space_value(space, k, choice[k]);
    switch (ddp_joint_space_kind(space, k)) {
    case DDP_KNOB_COMM_HOOK: ddp_json_string(j, name, ddp_comm_hook_name((DdpCommHook)v)); break;
    case DDP_KNOB_GRADIENT_AS_BUCKET_VIEW: ddp_json_bool(j, name, v != 0); break;
    default: ddp_json_double(j, name, v, 6); break;
    }
  }
  ddp_json_end_object(j);
}

static char *
joint_json(const DdpScenario *s, const DdpJointSpace *space, const DdpJointResult *r, double min_gain)
{
  const DdpJointKnob *knobs = ddp_joint_space_knobs(space);
  guint n = ddp_joint_space_n_knobs(space);
  g_autofree guint *choice = g_new(guint, n);
  DdpJson *j = json_document(s);
  ddp_json_begin_array(j, "knobs");
  for (guint k = 0; k < n; k++)
    ddp_json_string(j, NULL, knobs[k].name);
  ddp_json_end_array(j);
  ddp_json_string(j, "search", r->exhaustive ? "exhaustive" : "pairs+coordinate-descent");
  ddp_json_int(j, "combinations", (gint64)r->space);
  ddp_json_int(j, "simulations", r->points->len);
  ddp_json_string(j, "objective", "ms_per_sample");
  ddp_json_begin_array(j, "rows");
  for (guint i = 0; i < r->points->len; i++) {
    const DdpJointPoint *p = &g_array_index(r->points, DdpJointPoint, i);
    ddp_joint_choice(knobs, n, p->index, choice);
    ddp_json_begin_object(j, NULL);
    joint_choice_json(j, "knobs", space, choice);
    ddp_json_double(j, "ms_per_sample", p->objective, 9);   /* null: does not fit in memory */
    ddp_json_end_object(j);
  }
  ddp_json_end_array(j);
  joint_choice_json(j, "best", space, r->best);
  for (guint k = 0; k < n; k++)
    choice[k] = knobs[k].default_index;
  joint_choice_json(j, "default", space, choice);
  ddp_json_double(j, "best_ms_per_sample", r->best_objective, 9);
  ddp_json_double(j, "default_ms_per_sample", r->default_objective, 9);
  ddp_json_double(j, "gain_over_default", r->gain, 6);
  ddp_json_double(j, "min_gain", min_gain, 6);
  ddp_json_bool(j, "recommended", r->gain > min_gain);
  ddp_json_end_object(j);
  return ddp_json_free_to_string(j);
}

static int
run_joint(const TuneOptions *o, const DdpScenario *s, const GArray *caps, double min_gain)
{
  g_autoptr(GError) error = NULL;
  if (o->csv || o->plot) {
    g_set_error(&error, DDP_CMD_ERROR, 0, "--knobs: prints a table or --json (no --csv or --plot for a joint search)");
    return ddp_cmd_fail("tune", error);
  }
  static const double default_firsts[] = { 0.25, 1, 4, 16 };
  g_autoptr(GArray) firsts = o->first_bucket ? first_bucket_list(o->first_bucket, &error) : g_array_new(FALSE, FALSE, sizeof(double));
  if (!firsts)
    return ddp_cmd_fail("tune", error);
  if (!o->first_bucket)
    g_array_append_vals(firsts, default_firsts, G_N_ELEMENTS(default_firsts));
  g_autoptr(DdpJointSpace) space = ddp_joint_space_new(o->knobs, caps, firsts, &error);
  if (!space)
    return ddp_cmd_fail("tune", error);
  gboolean cap_knob = FALSE, first_knob = FALSE;
  for (guint k = 0; k < ddp_joint_space_n_knobs(space); k++) {
    cap_knob = cap_knob || ddp_joint_space_kind(space, k) == DDP_KNOB_BUCKET_CAP;
    first_knob = first_knob || ddp_joint_space_kind(space, k) == DDP_KNOB_FIRST_BUCKET;
  }
  if ((cap_knob || s->setup.buckets.bucket_cap_given) && first_knob &&
      s->setup.buckets.torch_version >= DDP_TORCH_VERSION_CAP_IS_FIRST) {
    g_set_error(&error, DDP_CMD_ERROR, 0, "--knobs: first-bucket with %s: %s",
                cap_knob ? "bucket-cap" : "a bucket_cap_mb given", FIRST_BUCKET_WITH_CAP_REFUSED);
    return ddp_cmd_fail("tune", error);
  }
  guint64 space_size = 1;
  for (guint k = 0; k < ddp_joint_space_n_knobs(space); k++)
    space_size *= ddp_joint_space_knobs(space)[k].n_values;
  /* the total is known when the search is exhaustive; above the limit the count is open */
  JointRun jr = { s, space, ddp_progress_new("tune", space_size <= DDP_JOINT_EXHAUSTIVE_LIMIT ? space_size : 0,
                                             "combinations", STDERR_FILENO) };
  g_autoptr(DdpJointResult) r = ddp_joint_search(ddp_joint_space_knobs(space), ddp_joint_space_n_knobs(space),
                                                 DDP_JOINT_EXHAUSTIVE_LIMIT, joint_evaluate, &jr, &error);
  ddp_progress_free(jr.progress);
  if (!r)
    return ddp_cmd_fail("tune", error);
  g_autofree char *text = o->json ? joint_json(s, space, r, min_gain) : joint_text(s, space, r, min_gain);
  if (!ddp_cmd_print(text, &error))
    return ddp_cmd_fail("tune", error);
  return DDP_EXIT_OK;
}

/* ---- --mode fsdp: FSDP's knobs instead of DDP's buckets ----
 * The wrap granularity (--wrap-blocks: 1, 2, 4, ... blocks per unit, up to all of them), the
 * backward prefetch (pre, post, none), forward_prefetch and limit_all_gathers: every combination,
 * the fastest that fits recommended over PyTorch's defaults (one block per unit, BACKWARD_PRE, no
 * forward prefetch, the limiter on) only above --min-gain.  A model file that names its own units
 * ([model] fsdp_units) fixes the wrap: then only the prefetch options and the limiter are searched. */

typedef struct {
  guint blocks;
  DdpBackwardPrefetch prefetch;
  gboolean forward, limit;
  DdpResult *result;
} FsdpRow;

static void
fsdp_row_json(DdpJson *j, const char *key, const FsdpRow *r)
{
  ddp_json_begin_object(j, key);
  ddp_json_int(j, "wrap_blocks", r->blocks);
  ddp_json_string(j, "backward_prefetch", ddp_backward_prefetch_name(r->prefetch));
  ddp_json_bool(j, "forward_prefetch", r->forward);
  ddp_json_bool(j, "limit_all_gathers", r->limit);
  ddp_json_double(j, "iteration_ms", r->result->mean_ms, 6);
  ddp_json_int(j, "bytes_per_gpu", (gint64)llround(r->result->memory.total));
  ddp_json_bool(j, "fits", r->result->memory.fits);
  ddp_json_double(j, "exposed_comm_ms", r->result->exposed_comm_ms, 6);
  ddp_json_end_object(j);
}

static int
tune_fsdp(const TuneOptions *o, const DdpScenario *s, double min_gain)
{
  g_autoptr(GError) error = NULL;
  if (o->range || o->points || o->first_bucket || o->plot || o->plot_data) {
    g_set_error(&error, DDP_CMD_ERROR, 0, "--mode fsdp tunes FSDP's wrap granularity and prefetch options; "
                "--range, --points, --first-bucket-mb and --plot are bucket_cap_mb's");
    return ddp_cmd_fail("tune", error);
  }
  guint *layer_unit = g_new0(guint, s->model->n_layers);
  GArray *units = ddp_fsdp_units(s->model, 1, layer_unit);
  /* a model file that names its units fixes the wrap: only the granularity 1 (its own) is run */
  gboolean named = s->model->n_fsdp_units > 0;
  guint blocks = named ? 1 : units->len - 1;
  g_array_unref(units);
  g_free(layer_unit);
  g_autoptr(GArray) rows = g_array_new(FALSE, TRUE, sizeof(FsdpRow));
  DdpRunOptions options = { .skip_single_gpu = TRUE };
  int status = DDP_EXIT_OK;
  for (guint k = 1; status == DDP_EXIT_OK; k = k >= MAX(blocks, 1) ? 0 : MIN(2 * k, MAX(blocks, 1))) {
    for (int p = 0; p < DDP_PREFETCH_COUNT && status == DDP_EXIT_OK; p++)
      for (int f = 0; f < 2 && status == DDP_EXIT_OK; f++)
        for (int l = 1; l >= 0 && status == DDP_EXIT_OK; l--) {
          DdpScenario at = *s;
          at.setup.shard.blocks_per_unit = k;
          at.setup.shard.backward_prefetch = p;
          at.setup.shard.forward_prefetch = f;
          at.setup.shard.limit_all_gathers = l;
          FsdpRow row = { k, p, f, l, ddp_simulate(&at, &options, &error) };
          if (!row.result)
            status = ddp_cmd_fail("tune", error);
          else
            g_array_append_val(rows, row);
        }
    if (k == MAX(blocks, 1))
      break;
  }
  if (status == DDP_EXIT_OK) {
    const FsdpRow *dflt = &g_array_index(rows, FsdpRow, 0), *best = NULL;
    for (guint i = 0; i < rows->len; i++) {
      const FsdpRow *r = &g_array_index(rows, FsdpRow, i);
      if (r->result->memory.fits && (!best || r->result->mean_ms < best->result->mean_ms))
        best = r;
    }
    if (!best)
      best = dflt;
    double gain = dflt->result->mean_ms / best->result->mean_ms - 1.0;
    gboolean change = best != dflt && (gain > min_gain || !dflt->result->memory.fits);
    g_autofree char *text = NULL;
    if (o->json) {
      DdpJson *j = ddp_json_new();
      ddp_json_begin_object(j, NULL);
      ddp_json_string(j, "mode", "fsdp");
      ddp_json_string(j, "sharding", ddp_sharding_name(s->setup.shard.sharding));
      ddp_json_string(j, "wrap", named ? "model" : "auto");
      ddp_json_begin_array(j, "rows");
      for (guint i = 0; i < rows->len; i++)
        fsdp_row_json(j, NULL, &g_array_index(rows, FsdpRow, i));
      ddp_json_end_array(j);
      fsdp_row_json(j, "default", dflt);
      fsdp_row_json(j, "best", best);
      ddp_json_double(j, "gain_over_default", gain, 6);
      ddp_json_bool(j, "recommended", change);
      ddp_json_end_object(j);
      text = ddp_json_free_to_string(j);
    } else {
      GString *out = g_string_new(NULL);
      if (named)
        g_string_append_printf(out, "%s on %s: %" G_GUINT64_FORMAT " GPUs, FSDP %s, %u units named by the model file "
                                    "(the wrap is fixed: only the prefetch options are searched)\n\n", s->model->name,
                               s->cluster->name, s->setup.gpus, ddp_sharding_name(s->setup.shard.sharding),
                               s->model->n_fsdp_units);
      else
        g_string_append_printf(out, "%s on %s: %" G_GUINT64_FORMAT " GPUs, FSDP %s, %u blocks\n\n", s->model->name,
                               s->cluster->name, s->setup.gpus, ddp_sharding_name(s->setup.shard.sharding), blocks);
      g_string_append(out, "  wrap_blocks  backward  forward  limiter   iter_ms  exposed_ms  GB/GPU  fits\n");
      for (guint i = 0; i < rows->len; i++) {
        const FsdpRow *r = &g_array_index(rows, FsdpRow, i);
        g_string_append_printf(out, "  %11u  %8s  %7s  %7s %9.3f %11.3f %7.2f  %4s%s\n", r->blocks,
                               ddp_backward_prefetch_name(r->prefetch), r->forward ? "on" : "off", r->limit ? "on" : "off",
                               r->result->mean_ms, r->result->exposed_comm_ms, r->result->memory.total / 1e9,
                               r->result->memory.fits ? "yes" : "NO", r == best ? "   <- fastest that fits" : "");
      }
      g_autofree char *wrap_flag = named ? g_strdup("") : g_strdup_printf("--wrap-blocks %u ", best->blocks);
      if (change)
        g_string_append_printf(out, "\nrecommended: %s--backward-prefetch %s%s%s (%.1f %% faster than "
                                    "PyTorch's defaults%s)\n", wrap_flag, ddp_backward_prefetch_name(best->prefetch),
                               best->forward ? " --forward-prefetch" : "", best->limit ? "" : " --no-limit-all-gathers",
                               100 * gain, dflt->result->memory.fits ? "" : ", which do not fit");
      else
        g_string_append_printf(out, "\nkeep PyTorch's defaults (%s, BACKWARD_PRE, limit_all_gathers): "
                                    "the best is %.2f %% faster, below --min-gain %.1f %%\n",
                               named ? "the model file's units" : "one block per unit", 100 * gain, 100 * min_gain);
      text = g_string_free(out, FALSE);
    }
    if (!ddp_cmd_print(text, &error))
      status = ddp_cmd_fail("tune", error);
  }
  for (guint i = 0; i < rows->len; i++)
    ddp_result_free(g_array_index(rows, FsdpRow, i).result);
  return status;
}

static int
run(int argc, char **argv, TuneOptions *o)
{
  GOptionEntry own[] = {
    { "range", 0, 0, G_OPTION_ARG_STRING, &o->range, "Caps to sweep, MiB (default 1:256)", "MIN:MAX" },
    { "points", 0, 0, G_OPTION_ARG_STRING, &o->points, "Caps on the log grid (default one per power of two)", "N" },
    { "first-bucket-mb", 0, 0, G_OPTION_ARG_STRING, &o->first_bucket,
      "Also sweep the first bucket's size (dist._DEFAULT_FIRST_BUCKET_BYTES), MiB; 1 is always included", "A,B,..." },
    { "knobs", 0, 0, G_OPTION_ARG_STRING, &o->knobs,
      "Tune several knobs together: bucket-cap, accumulate, comm-hook, gradient-as-bucket-view, first-bucket", "K1,K2,..." },
    { "min-gain", 0, 0, G_OPTION_ARG_STRING, &o->min_gain, "Recommend a change only above this gain over the default (default 0.01 = 1%)", "G" },
    { "json", 0, 0, G_OPTION_ARG_NONE, &o->json, "Print JSON: rows, best_*, gain_over_default, recommended, recommended_bucket_cap_mb", NULL },
    { "csv", 0, 0, G_OPTION_ARG_NONE, &o->csv, "Print CSV", NULL },
    { "plot", 0, 0, G_OPTION_ARG_FILENAME, &o->plot, "Draw iteration time vs bucket_cap_mb (.png or .svg)", "FILE" },
    { "plot-data", 0, 0, G_OPTION_ARG_FILENAME, &o->plot_data, "Keep the plot's data and gnuplot variables in DIR", "DIR" },
    { NULL, 0, 0, 0, NULL, NULL, NULL },
  };
  g_autoptr(GError) error = NULL;
  const char *scenario_path = NULL;
  if (!ddp_cmd_parse("tune", "Sweep bucket_cap_mb (and the first bucket's size) and recommend the best.",
                     "The fastest point is the least mean iteration time over --iterations steady iterations,\n"
                     "stragglers included when configured; PyTorch's defaults (bucket_cap_mb 25, first bucket\n"
                     "1 MiB) are always simulated.  A change is recommended only when it is faster than the\n"
                     "default by more than --min-gain (default 1 %); otherwise the answer is \"keep 25\".\n"
                     "The first bucket is set in PyTorch by assigning dist._DEFAULT_FIRST_BUCKET_BYTES before\n"
                     "constructing DDP.  --knobs tunes several knobs together (exhaustively up to 4096\n"
                     "combinations, else every one- and two-knob change then coordinate descent), ranking them by\n"
                     "time per sample.  See docs/solve.md.",
                     own, &o->cli, &argc, &argv, &scenario_path, &error))
    return ddp_cmd_fail("tune", error);
  double min_gain = 0.01;
  if (!ddp_flag_fraction("min-gain", o->min_gain, &DDP_RANGE_MIN_GAIN, &min_gain, &error))
    return ddp_cmd_fail("tune", error);
  g_autoptr(GArray) firsts = first_bucket_list(o->first_bucket, &error);
  if (!firsts)
    return ddp_cmd_fail("tune", error);
  g_autoptr(DdpScenario) s = ddp_scenario_load(scenario_path, &o->cli, TRUE, &error);
  if (!s)
    return ddp_cmd_fail("tune", error);
  if (!ddp_cli_check_mode_flags(&o->cli, s->setup.mode, &error))
    return ddp_cmd_fail("tune", error);
  if (o->plot_data && !o->plot) {
    g_set_error(&error, DDP_CMD_ERROR, 0, "--plot-data: only with --plot (it keeps the chart's data files)");
    return ddp_cmd_fail("tune", error);
  }
  if (s->setup.mode == DDP_MODE_FSDP)
    return tune_fsdp(o, s, min_gain);
  g_autoptr(GArray) caps = cap_grid(o->range, o->points, &error);
  if (!caps)
    return ddp_cmd_fail("tune", error);
  if (!o->knobs && o->first_bucket && s->setup.buckets.torch_version >= DDP_TORCH_VERSION_CAP_IS_FIRST) {
    g_set_error(&error, DDP_CMD_ERROR, 0, "--first-bucket-mb: %s", FIRST_BUCKET_WITH_CAP_REFUSED);
    return ddp_cmd_fail("tune", error);
  }
  if (o->knobs)
    return run_joint(o, s, caps, min_gain);
  DdpPlotFormat format;
  g_autofree char *gnuplot = NULL;
  if (o->plot && (!ddp_plot_format_from_path(o->plot, "--plot", &format, &error) ||
                  !ddp_plot_check_paths("--plot", o->plot, "--plot-data", o->plot_data, &error) ||
                  !(gnuplot = ddp_plot_find_gnuplot(&error))))
    return ddp_cmd_fail("tune", error);

  guint total = firsts->len * caps->len;
  g_autoptr(DdpProgress) progress = ddp_progress_new("tune", total, "simulations", STDERR_FILENO);
  g_autofree TuneRow *rows = g_new0(TuneRow, total);
  DdpRunOptions options = { .skip_single_gpu = TRUE };
  guint done = 0;
  for (; done < total; done++) {
    DdpScenario at = *s;
    TuneRow *row = &rows[done];
    row->first_mb = g_array_index(firsts, double, done / caps->len);
    row->cap_mb = g_array_index(caps, double, done % caps->len);
    /* from 2.4 a passed cap is the first bucket too: the row keeps the first bucket that applies */
    ddp_bucket_options_try_cap(&at.setup.buckets, row->cap_mb);
    at.setup.buckets.first_bucket_bytes = (guint64)(row->first_mb * DDP_MIB);
    row->first_used_mb = (double)ddp_bucket_options_first_bytes(&at.setup.buckets) / DDP_MIB;
    g_autofree char *what = g_strdup_printf("first bucket %g MiB, bucket_cap_mb %g", row->first_mb, row->cap_mb);
    ddp_progress_step(progress, what);
    if (!(row->result = ddp_simulate(&at, &options, &error)))
      break;
  }
  g_clear_pointer(&progress, ddp_progress_free);
  int status = DDP_EXIT_OK;
  if (error) {
    status = ddp_cmd_fail("tune", error);
  } else {
    TuneVerdict v = verdict(rows, done, firsts->len, min_gain);
    g_autofree char *text = o->json ? tune_json(s, rows, done, &v) : o->csv ? tune_csv(rows, done) : tune_text(s, rows, done, &v);
    if (o->plot && !draw(s, rows, done, &v, o, &error))
      status = ddp_cmd_fail("tune", error);
    else if (!ddp_cmd_print(text, &error))
      status = ddp_cmd_fail("tune", error);
  }
  for (guint i = 0; i < total; i++)
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
  g_free(options.first_bucket);
  g_free(options.min_gain);
  g_free(options.plot);
  g_free(options.plot_data);
  g_free(options.knobs);
  return status;
}
