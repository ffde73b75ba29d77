/* cmd-timeline — `ddpsim timeline [SCENARIO] -o FILE.png|FILE.svg [--trace FILE.json]`: one
 * steady-state iteration as a Gantt chart (plots/timeline.gp, drawn by gnuplot) and/or a Chrome
 * trace for Perfetto (trace.h).  The chart has a compute lane per shown rank (forward and backward
 * per layer, hook casts, waits, finalize, optimizer), one NCCL lane (one bar per bucket AllReduce,
 * labelled with index and size; a marker where the bucket became ready on the last rank), and the
 * exposed-communication tail — from the slowest rank's end of backward to the end of the last
 * AllReduce — shaded.
 *
 * Which ranks are shown: rank 0; with --ranks K (and per-rank stragglers) also the K slowest and K
 * fastest ranks of the reported iteration, by when they finished backward — that moment, not the
 * compute factor alone, is what holds a collective back, and it includes hiccup delays.  Finding
 * them takes a first simulation without timelines (O(ranks × buckets) like any other), whose
 * per-rank backward ends (DdpResult.backward_end_ns) choose the ranks a second, identical
 * simulation then records: recording every rank's timeline at 131 072 GPUs would cost gigabytes.
 *
 * --compare TRACE (one torch.profiler file per rank of a real DDP run, ddpimport.h) puts the
 * measured iteration beside the predicted one: the chart (plots/compare.gp) draws the measured
 * compute and NCCL lanes of the trace's lowest rank above the predicted lanes of rank 0, the
 * Perfetto trace holds the measured rank as a process of its own, and the summary lists every
 * bucket's start and end in both and the iteration-time error.  Both sides are aligned at their
 * first kernel (the trace's step begins with host work the simulation does not draw). */
#include "cmd.h"

#include "collective.h"
#include "fileio.h"
#include "ddp.h"
#include "ddpimport.h"
#include "plot.h"
#include "ranges.h"
#include "trace.h"

#include <json-glib/json-glib.h>
#include <math.h>
#include <string.h>

typedef struct {
  DdpCliOptions cli;
  char *output, *trace, *ranks, *plot_data;
  char **compare;
} TimelineOptions;

static const char timeline_description[] =
  "Simulates the configuration and draws its last steady-state iteration.  -o FILE.png or\n"
  "FILE.svg renders plots/timeline.gp with gnuplot ($DDPSIM_GNUPLOT, else gnuplot on $PATH);\n"
  "--plot-data DIR keeps the data files and params.gp so that `gnuplot DIR/params.gp SCRIPT`\n"
  "redraws it with your own style.  --trace FILE.json writes a Chrome trace-event file: open it\n"
  "at https://ui.perfetto.dev or chrome://tracing.  Outputs are replaced atomically: a failed run\n"
  "leaves no partial file.  --compare TRACE (a torch.profiler trace of a real DDP run, one file per\n"
  "rank) puts the measured iteration beside the predicted one: its lanes above the predicted ones in\n"
  "the chart (plots/compare.gp), its lowest rank as a process of its own in the Perfetto trace, and\n"
  "every bucket's start and end and the iteration-time error on stdout.";

/* One shown rank and why. */
typedef struct {
  guint64 rank;
  gint64 backward_end;   /* ns from the iteration start; for ordering lanes */
  const char *role;      /* "slowest", "fastest" or NULL */
} Shown;

static gint
compare_shown(gconstpointer a, gconstpointer b)
{
  const Shown *x = a, *y = b;
  if (x->backward_end != y->backward_end)
    return x->backward_end > y->backward_end ? -1 : 1;   /* slowest first */
  return x->rank < y->rank ? -1 : x->rank > y->rank;
}

static gboolean
is_shown(const GArray *shown, guint64 rank)
{
  for (guint i = 0; i < shown->len; i++)
    if (g_array_index(shown, Shown, i).rank == rank)
      return TRUE;
  return FALSE;
}

/* Adds the @k slowest (@slowest) or fastest ranks of @ends[n] not yet shown; ties go to the lower
 * rank.  K passes over the ranks: K <= 16, so this is cheaper than sorting 131 072 ranks. */
static void
add_extremes(GArray *shown, const gint64 *ends, guint64 n, guint k, gboolean slowest)
{
  for (guint pass = 0; pass < k; pass++) {
    gboolean found = FALSE;
    guint64 best = 0;
    for (guint64 r = 0; r < n; r++) {
      gboolean better = !found || (slowest ? ends[r] > ends[best] : ends[r] < ends[best]);
      if (better && !is_shown(shown, r)) {
        best = r;
        found = TRUE;
      }
    }
    if (!found)
      return;
    Shown s = { best, ends[best], pass == 0 ? (slowest ? "slowest" : "fastest") : NULL };
    g_array_append_val(shown, s);
  }
}

/* The ranks to watch, in lane order.  @probe is a simulation of the same scenario (its
 * backward_end_ns), or NULL when every rank behaves the same. */
static GArray *
choose_ranks(const DdpResult *probe, guint k)
{
  GArray *shown = g_array_new(FALSE, FALSE, sizeof(Shown));
  if (probe && k > 0) {
    /* the extremes first, so that "slowest" is the slowest even when that is rank 0 */
    add_extremes(shown, probe->backward_end_ns, probe->gpus, k, TRUE);
    add_extremes(shown, probe->backward_end_ns, probe->gpus, k, FALSE);
    /* with K at least half the ranks the slowest pass already took the fastest: label it still */
    guint fastest = 0;
    for (guint i = 1; i < shown->len; i++)
      if (g_array_index(shown, Shown, i).backward_end < g_array_index(shown, Shown, fastest).backward_end)
        fastest = i;
    if (shown->len > 1 && !g_array_index(shown, Shown, fastest).role)
      g_array_index(shown, Shown, fastest).role = "fastest";
  }
  if (!is_shown(shown, 0)) {
    Shown zero = { 0, probe ? probe->backward_end_ns[0] : 0, NULL };
    g_array_append_val(shown, zero);
  }
  g_array_sort(shown, compare_shown);
  return shown;
}

static double
ns_ms(gint64 ns)
{
  return (double)ns / 1e6;
}

/* Layer and bucket names go into double-quoted data-file fields, which have no escapes. */
static void
append_field(GString *out, const char *text)
{
  g_string_append_c(out, '"');
  for (const char *p = text; *p; p++)
    g_string_append_c(out, *p == '"' || *p == '\n' ? '\'' : *p);
  g_string_append_c(out, '"');
}

static char *
describe(const DdpScenario *s, const DdpResult *r)
{
  const DdpSetup *t = &s->setup;
  GString *out = g_string_new(NULL);
  g_string_append_printf(out, "%s on %s: %" G_GUINT64_FORMAT " GPU%s (%" G_GUINT64_FORMAT " node%s), batch %.15g/GPU",
                         s->model->name, s->cluster->name, r->gpus, r->gpus == 1 ? "" : "s", r->nodes,
                         r->nodes == 1 ? "" : "s", t->batch);
  if (t->accumulate > 1)
    g_string_append_printf(out, " x %u micro-steps", t->accumulate);
  g_string_append_printf(out, ", %s, bucket_cap_mb %g", ddp_setup_precision_label(t), t->buckets.bucket_cap_mb);
  if (t->comm_hook != DDP_HOOK_NONE)
    g_string_append_printf(out, ", %s hook", ddp_comm_hook_name(t->comm_hook));
  if (!ddp_stragglers_is_none(s->stragglers)) {
    g_autofree char *spec = ddp_stragglers_to_string(s->stragglers);
    g_string_append_printf(out, ", stragglers %s (seed %" G_GUINT64_FORMAT ")", spec, t->seed);
  }
  return g_string_free(out, FALSE);
}

/* The reported iteration's exposed communication, computed once for the title, the annotation and
 * the summary: the total is ddp.c's per-iteration figure (the one exposed_comm_ms averages); the
 * tail is the part drawn shaded — from the slowest rank's end of backward to the end of the last
 * AllReduce (empty when that ended first) — and the rest is the buffer broadcast before each
 * forward, on the critical path (docs/model.md §1.7). */
typedef struct {
  gint64 tail_start, tail_end;
  gint64 total_ns;
  char *text;   /* "exposed communication 0.274 ms" (+ the split when there is a broadcast) */
} Exposure;

static void
exposure_init(Exposure *e, const DdpResult *r)
{
  guint64 n = r->collapsed_ranks ? 1 : r->gpus;
  e->tail_start = G_MININT64;
  for (guint64 i = 0; i < n; i++)
    e->tail_start = MAX(e->tail_start, r->backward_end_ns[i]);
  e->tail_end = e->tail_start;
  for (guint b = 0; b < r->n_buckets; b++)
    e->tail_end = MAX(e->tail_end, r->buckets[b].end_ns);
  for (guint i = 0; r->spans && i < r->spans->len; i++)
    if (g_array_index(r->spans, DdpCommSpan, i).backward)
      e->tail_end = MAX(e->tail_end, g_array_index(r->spans, DdpCommSpan, i).end_ns);
  e->total_ns = r->reported_exposed_comm_ns;
  gint64 tail = e->tail_end - e->tail_start;
  if (e->total_ns > tail) {
    /* the printed parts add up to the printed total: the broadcast is what the rounding leaves */
    double total_ms = round(ns_ms(e->total_ns) * 1e3) / 1e3, tail_ms = round(ns_ms(tail) * 1e3) / 1e3;
    e->text = r->spans && r->n_buckets > 0
                ? g_strdup_printf("exposed communication %.3f ms (AllReduce tail %.3f + broadcasts %.3f)", total_ms,
                                  tail_ms, total_ms - tail_ms)
              : r->spans ? g_strdup_printf("exposed communication %.3f ms (after backward %.3f + waits before it %.3f)",
                                         total_ms, tail_ms, total_ms - tail_ms)
                       : g_strdup_printf("exposed communication %.3f ms (AllReduce tail %.3f + buffer broadcast %.3f)",
                                         total_ms, tail_ms, total_ms - tail_ms);
  }
  else
    e->text = g_strdup_printf("exposed communication %.3f ms", ns_ms(e->total_ns));
}

static void
exposure_clear(Exposure *e)
{
  g_clear_pointer(&e->text, g_free);
}

/* "rank 17 x1.312\nslowest"; the factor only when there are stragglers. */
static char *
lane_label(const DdpScenario *scenario, const DdpRankTimeline *t, const Shown *s)
{
  GString *out = g_string_new(NULL);
  g_string_append_printf(out, "rank %" G_GUINT64_FORMAT, t->rank);
  if (!ddp_stragglers_is_none(scenario->stragglers))
    g_string_append_printf(out, " x%.3f", t->factor);
  if (s->role)
    g_string_append_printf(out, "\n%s", s->role);
  return g_string_free(out, FALSE);
}

static gboolean
render_plot(const TimelineOptions *opts, const DdpScenario *s, const DdpResult *r, const GArray *shown,
            GError **error)
{
  g_autoptr(DdpPlot) plot = ddp_plot_new("timeline");
  g_autofree char *setup = describe(s, r);
  /* every figure in the title is the drawn iteration's; the mean over iterations is only named */
  Exposure exposed;
  exposure_init(&exposed, r);
  double overlap = r->comm_ms > 0 ? CLAMP(1.0 - ns_ms(exposed.total_ns) / r->comm_ms, 0.0, 1.0) : 1.0;
  /* the exposed figure is written once, beside the shaded tail it measures (exposed_label) */
  g_autofree char *title = g_strdup_printf("%s\nsteady-state iteration %u: %.3f ms (mean of %u iterations: %.3f ms), "
                                           "%.1f %% of communication hidden",
                                           setup, r->iterations, ns_ms(r->reported_iteration_ns), r->iterations,
                                           r->mean_ms, 100.0 * overlap);
  ddp_plot_set_string(plot, "plot_title", title);
  ddp_plot_set_string(plot, "exposed_label", exposed.text);

  g_autoptr(GPtrArray) labels = g_ptr_array_new_with_free_func(g_free);
  for (guint i = 0; i < r->n_timelines; i++)
    g_ptr_array_add(labels, lane_label(s, &r->timelines[i], &g_array_index(shown, Shown, i)));
  /* FSDP: the shard group's one NCCL stream drawn as two lanes, AllGather and ReduceScatter (they
   * still run one at a time, docs/model.md §6.3), and HSDP's replica group; ZeRO-1's broadcasts
   * share DDP's NCCL lane.  The last lane is the one bucket bars go to. */
  gboolean fsdp = s->setup.mode == DDP_MODE_FSDP, replica = FALSE;
  for (guint i = 0; r->spans && i < r->spans->len; i++)
    replica = replica || g_array_index(r->spans, DdpCommSpan, i).lane == 1;
  guint first_comm = r->n_timelines;
  if (fsdp) {
    g_ptr_array_add(labels, g_strdup("AllGather\n(NCCL stream)"));
    g_ptr_array_add(labels, g_strdup(s->setup.shard.sharding == DDP_SHARDING_NONE ? "AllReduce\n(NCCL stream)"
                                                                                  : "ReduceScatter\n(NCCL stream)"));
    if (replica)
      g_ptr_array_add(labels, g_strdup("AllReduce\n(replica group)"));
  } else {
    g_ptr_array_add(labels, g_strdup(r->gpus > 1 ? "NCCL stream\n(all ranks)" : "NCCL stream"));
  }
  ddp_plot_set_strings(plot, "lane_labels", (const char *const *)labels->pdata, labels->len);
  GString *collectives = g_string_new("# lane start_ms end_ms op label\n");
  for (guint i = 0; r->spans && i < r->spans->len; i++) {
    const DdpCommSpan *c = &g_array_index(r->spans, DdpCommSpan, i);
    guint lane = !fsdp ? first_comm : c->lane == 1 ? first_comm + 2 : c->op == DDP_OP_ALL_GATHER ? first_comm : first_comm + 1;
    g_string_append_printf(collectives, "%u %.6f %.6f %d ", lane, ns_ms(c->start_ns), ns_ms(c->end_ns), (int)c->op);
    g_autofree char *label = c->unit >= 0 ? g_strdup_printf("%d", c->unit) : g_strdup("");
    append_field(collectives, label);
    g_string_append_c(collectives, '\n');
  }
  GString *ops = g_string_new(" ");
  for (guint i = 0; r->spans && i < r->spans->len; i++) {
    g_autofree char *op = g_strdup_printf(" %d ", (int)g_array_index(r->spans, DdpCommSpan, i).op);
    if (!strstr(ops->str, op))
      g_string_append_printf(ops, "%d ", (int)g_array_index(r->spans, DdpCommSpan, i).op);
  }
  ddp_plot_set_string(plot, "collective_ops", ops->str);
  g_string_free(ops, TRUE);
  ddp_plot_set_data(plot, "collectives", collectives->str);
  g_string_free(collectives, TRUE);

  GString *segments = g_string_new("# lane start_ms end_ms kind layer name\n");
  GString *kinds = g_string_new(" ");
  gint64 x_min = 0;
  for (guint i = 0; i < r->n_timelines; i++) {
    const GArray *segs = r->timelines[i].segments;
    for (guint k = 0; k < segs->len; k++) {
      const DdpSegment *g = &g_array_index(segs, DdpSegment, k);
      if (g->end_ns <= g->start_ns)
        continue;
      int next = k + 1 < segs->len ? (int)g_array_index(segs, DdpSegment, k + 1).kind : -1;
      const char *kind = ddp_trace_segment_category(g, next);
      g_autofree char *marked = g_strdup_printf(" %s ", kind);
      if (!strstr(kinds->str, marked))
        g_string_append_printf(kinds, "%s ", kind);
      x_min = MIN(x_min, g->start_ns);
      g_string_append_printf(segments, "%u %.6f %.6f %s %d ", i, ns_ms(g->start_ns), ns_ms(g->end_ns), kind,
                             g->kind == DDP_SEGMENT_FORWARD || g->kind == DDP_SEGMENT_BACKWARD ? g->index : 0);
      append_field(segments, ddp_trace_segment_name(s->model, g, next));
      g_string_append_c(segments, '\n');
    }
  }
  GString *buckets = g_string_new("# index start_ms end_ms ready_ms launch_ms bytes label\n");
  for (guint b = 0; b < r->n_buckets; b++) {
    const DdpBucketSchedule *k = &r->buckets[b];
    double mib = (double)k->bytes / 1048576.0;
    g_autofree char *label = g_strdup_printf("%u: %.*f MiB", k->index, mib >= 10 ? 0 : mib >= 1 ? 1 : 2, mib);
    g_string_append_printf(buckets, "%u %.6f %.6f %.6f %.6f %" G_GUINT64_FORMAT " ", k->index, ns_ms(k->start_ns),
                           ns_ms(k->end_ns), ns_ms(k->ready_ns), ns_ms(k->launch_ns), k->bytes);
    append_field(buckets, label);
    g_string_append_c(buckets, '\n');
    x_min = MIN(x_min, k->ready_ns);
  }
  ddp_plot_set_number(plot, "n_buckets", r->n_buckets);
  ddp_plot_set_string(plot, "kinds", kinds->str);
  ddp_plot_set_number(plot, "x_min_ms", ns_ms(x_min));
  ddp_plot_set_number(plot, "iteration_ms", ns_ms(r->reported_iteration_ns));
  ddp_plot_set_number(plot, "exposed_start_ms", ns_ms(exposed.tail_start));
  ddp_plot_set_number(plot, "exposed_end_ms", ns_ms(exposed.tail_end));
  ddp_plot_set_number(plot, "exposed_comm_ms", ns_ms(exposed.total_ns));
  exposure_clear(&exposed);
  ddp_plot_set_data(plot, "segments", segments->str);
  ddp_plot_set_data(plot, "buckets", buckets->str);
  g_string_free(segments, TRUE);
  g_string_free(kinds, TRUE);
  g_string_free(buckets, TRUE);
  return ddp_plot_render(plot, "-o", opts->output, opts->plot_data, error);
}

/* ---- --compare: measured beside predicted ------------------------------------------------------ */

/* Rank 0's timeline (always watched; with --ranks not necessarily the first lane). */
static const GArray *
rank_zero_segments(const DdpResult *r)
{
  for (guint i = 0; i < r->n_timelines; i++)
    if (r->timelines[i].rank == 0)
      return r->timelines[i].segments;
  g_assert_not_reached();
}

/* Where rank 0's first compute segment starts: the predicted side's t = 0 for the comparison. */
static gint64
predicted_origin(const DdpResult *r)
{
  gint64 origin = G_MAXINT64;
  const GArray *segs = rank_zero_segments(r);
  for (guint k = 0; k < segs->len; k++) {
    const DdpSegment *g = &g_array_index(segs, DdpSegment, k);
    if (g->end_ns > g->start_ns && g->kind != DDP_SEGMENT_WAIT)
      origin = MIN(origin, g->start_ns);
  }
  return origin == G_MAXINT64 ? 0 : origin;
}

/* The measured buckets of the drawn step (its AllReduce kernels, in launch order), ms. */
static GArray *
measured_buckets(const DdpRunTrace *t)
{
  GArray *out = g_array_new(FALSE, FALSE, sizeof(DdpRunKernel));
  for (guint i = 0; i < t->drawn->len; i++)
    if (g_array_index(t->drawn, DdpRunKernel, i).nccl)
      g_array_append_val(out, g_array_index(t->drawn, DdpRunKernel, i));
  return out;
}

/* The per-bucket table and the iteration error. */
static char *
compare_text(const DdpRunTrace *t, const DdpResult *r)
{
  GString *out = g_string_new(NULL);
  g_autoptr(GArray) measured = measured_buckets(t);
  double origin = ns_ms(predicted_origin(r));
  g_string_append_printf(out, "measured (trace, rank %u, one step) vs predicted (rank 0); ms from each side's first "
                              "kernel\n", t->drawn_rank);
  g_string_append_printf(out, "  %6s %12s %12s %10s %10s %9s %10s %10s %9s\n", "bucket", "measured_B", "predicted_B",
                         "start_meas", "start_pred", "diff", "end_meas", "end_pred", "diff");
  guint n = MIN(measured->len, r->n_buckets);
  for (guint b = 0; b < n; b++) {
    const DdpRunKernel *m = &g_array_index(measured, DdpRunKernel, b);
    const DdpBucketSchedule *p = &r->buckets[b];
    double ms = m->start_us / 1e3, me = m->end_us / 1e3, ps = ns_ms(p->start_ns) - origin, pe = ns_ms(p->end_ns) - origin;
    g_string_append_printf(out, "  %6u %12" G_GUINT64_FORMAT " %12" G_GUINT64_FORMAT " %10.3f %10.3f %+9.3f %10.3f %10.3f %+9.3f\n",
                           b, g_array_index(t->buckets, DdpRunBucket, b).bytes, p->bytes, ms, ps, ps - ms, me, pe, pe - me);
  }
  if (measured->len != r->n_buckets)
    g_string_append_printf(out, "  bucket counts differ: %u measured, %u predicted (check --bucket-cap-mb and the model)\n",
                           measured->len, r->n_buckets);
  g_string_append_printf(out, "  iteration: measured %.3f ms (mean of %u step%s, %u rank file%s), predicted %.3f ms, "
                              "error %+.2f %%\n", t->terms.iteration_ms, t->terms.steps_kept, t->terms.steps_kept == 1 ? "" : "s", t->terms.rank_files,
                         t->terms.rank_files == 1 ? "" : "s", r->mean_ms, 100 * (r->mean_ms / t->terms.iteration_ms - 1));
  g_string_append_printf(out, "  exposed communication: measured %.3f ms, predicted %.3f ms; overlap measured %.1f %%, "
                              "predicted %.1f %%\n", t->terms.exposed_comm_ms, r->exposed_comm_ms, 100 * t->terms.overlap,
                         100 * r->overlap);
  return g_string_free(out, FALSE);
}

/* plots/compare.gp: lanes 0 measured compute, 1 measured NCCL, 2 predicted compute (rank 0), 3 predicted NCCL. */
static gboolean
render_compare(const TimelineOptions *opts, const DdpScenario *s, const DdpResult *r, const DdpRunTrace *t,
               GError **error)
{
  g_autoptr(DdpPlot) plot = ddp_plot_new("compare");
  g_autofree char *setup = describe(s, r);
  g_autofree char *title = g_strdup_printf("%s\nmeasured %.3f ms (trace, mean step) vs predicted %.3f ms: error %+.2f %%",
                                           setup, t->terms.iteration_ms, r->mean_ms, 100 * (r->mean_ms / t->terms.iteration_ms - 1));
  ddp_plot_set_string(plot, "plot_title", title);
  g_autofree char *measured_label = g_strdup_printf("measured rank %u\ncompute", t->drawn_rank);
  const char *labels[] = { measured_label, "measured\nNCCL stream", "predicted rank 0\ncompute", "predicted\nNCCL stream" };
  ddp_plot_set_strings(plot, "lane_labels", labels, G_N_ELEMENTS(labels));
  GString *lanes = g_string_new("# lane start_ms end_ms kind\n");
  double end = 0;
  for (guint i = 0; i < t->drawn->len; i++) {
    const DdpRunKernel *k = &g_array_index(t->drawn, DdpRunKernel, i);
    g_string_append_printf(lanes, "%d %.6f %.6f %s\n", k->nccl ? 1 : 0, k->start_us / 1e3, k->end_us / 1e3,
                           k->nccl ? "allreduce" : "compute");
    end = MAX(end, k->end_us / 1e3);
  }
  gint64 origin = predicted_origin(r);
  const GArray *segs = rank_zero_segments(r);
  for (guint k = 0; k < segs->len; k++) {
    const DdpSegment *g = &g_array_index(segs, DdpSegment, k);
    if (g->end_ns <= g->start_ns || g->kind == DDP_SEGMENT_WAIT)
      continue;
    g_string_append_printf(lanes, "2 %.6f %.6f compute\n", ns_ms(g->start_ns - origin), ns_ms(g->end_ns - origin));
    end = MAX(end, ns_ms(g->end_ns - origin));
  }
  for (guint b = 0; b < r->n_buckets; b++) {
    const DdpBucketSchedule *k = &r->buckets[b];
    g_string_append_printf(lanes, "3 %.6f %.6f allreduce\n", ns_ms(k->start_ns - origin), ns_ms(k->end_ns - origin));
    end = MAX(end, ns_ms(k->end_ns - origin));
  }
  ddp_plot_set_number(plot, "end_ms", end);
  ddp_plot_set_data(plot, "lanes", lanes->str);
  g_string_free(lanes, TRUE);
  return ddp_plot_render(plot, "-o", opts->output, opts->plot_data, error);
}

/* Adds one Perfetto "X" event. */
static void
add_slice(JsonArray *events, gint64 pid, gint64 tid, const char *name, double ts, double dur)
{
  JsonObject *e = json_object_new();
  json_object_set_string_member(e, "ph", "X");
  json_object_set_string_member(e, "name", name);
  json_object_set_int_member(e, "pid", pid);
  json_object_set_int_member(e, "tid", tid);
  json_object_set_double_member(e, "ts", ts);
  json_object_set_double_member(e, "dur", dur);
  json_array_add_object_element(events, e);
}

static void
add_name(JsonArray *events, const char *what, gint64 pid, gint64 tid, const char *name)
{
  JsonObject *e = json_object_new(), *args = json_object_new();
  json_object_set_string_member(e, "ph", "M");
  json_object_set_string_member(e, "name", what);
  json_object_set_int_member(e, "pid", pid);
  json_object_set_int_member(e, "tid", tid);
  json_object_set_string_member(args, "name", name);
  json_object_set_object_member(e, "args", args);
  json_array_add_object_element(events, e);
}

/* The predicted trace (trace.h) with the measured rank added as its own process (pid 2^24 + rank +
 * 1, above any predicted rank's), threads "compute" and "nccl", aligned with predicted rank 0's first
 * kernel; written atomically. */
static gboolean
write_compare_trace(const char *path, const DdpScenario *s, const DdpResult *r, const char *const *labels,
                    const DdpRunTrace *t, GError **error)
{
  g_autofree char *predicted = ddp_trace_to_json(s, r, labels);
  g_autoptr(JsonParser) parser = json_parser_new();
  if (!json_parser_load_from_data(parser, predicted, -1, error))
    return FALSE;
  JsonObject *root = json_node_get_object(json_parser_get_root(parser));
  JsonArray *events = json_object_get_array_member(root, "traceEvents");
  JsonObject *other = json_object_get_object_member(root, "otherData");
  double shift = json_object_get_double_member(other, "iteration_start_us") + ns_ms(predicted_origin(r)) * 1e3;
  gint64 pid = ((gint64)1 << 24) + t->drawn_rank + 1;
  g_autofree char *name = g_strdup_printf("measured rank %u (torch.profiler trace)", t->drawn_rank);
  add_name(events, "process_name", pid, 0, name);
  add_name(events, "thread_name", pid, 1, "compute");
  add_name(events, "thread_name", pid, 2, "nccl");
  guint bucket = 0;
  for (guint i = 0; i < t->drawn->len; i++) {
    const DdpRunKernel *k = &g_array_index(t->drawn, DdpRunKernel, i);
    g_autofree char *slice = k->nccl ? g_strdup_printf("AllReduce bucket %u", bucket++) : g_strdup("kernel");
    add_slice(events, pid, k->nccl ? 2 : 1, slice, shift + k->start_us, k->end_us - k->start_us);
  }
  json_object_set_double_member(other, "measured_iteration_ms", t->terms.iteration_ms);
  g_autoptr(JsonGenerator) gen = json_generator_new();
  json_generator_set_root(gen, json_parser_get_root(parser));
  gsize length = 0;
  g_autofree char *text = json_generator_to_data(gen, &length);
  return ddp_file_write("--trace", path, text, length, error);
}

static gboolean
check_options(const TimelineOptions *opts, guint *k, GError **error)
{
  if (!opts->output && !opts->trace && !opts->compare) {
    g_set_error(error, DDP_CMD_ERROR, 0, "nothing to write: give -o FILE.png|FILE.svg and/or --trace FILE.json");
    return FALSE;
  }
  if (opts->plot_data && !opts->output) {
    g_set_error(error, DDP_CMD_ERROR, 0, "--plot-data: only with -o (it keeps the chart's data files)");
    return FALSE;
  }
  guint64 ranks = 0;
  if (!ddp_flag_count("ranks", opts->ranks, &DDP_RANGE_TIMELINE_RANKS, &ranks, error))
    return FALSE;
  *k = (guint)ranks;
  if (opts->output) {
    DdpPlotFormat format;
    if (!ddp_plot_format_from_path(opts->output, "-o", &format, error) ||
        !ddp_file_check_output("-o", opts->output, error) ||
        !ddp_plot_check_paths("-o", opts->output, "--plot-data", opts->plot_data, error))
      return FALSE;
    /* no gnuplot, no point in simulating: fail now, before any output exists */
    g_autofree char *gnuplot = ddp_plot_find_gnuplot(error);
    g_autofree char *script = gnuplot ? ddp_plot_find_script(opts->compare ? "compare" : "timeline", error) : NULL;
    if (!script)
      return FALSE;
  }
  if (opts->trace && !ddp_file_check_output("--trace", opts->trace, error))
    return FALSE;
  if (opts->output && opts->trace) {
    g_autofree char *a = g_canonicalize_filename(opts->output, NULL);
    g_autofree char *b = g_canonicalize_filename(opts->trace, NULL);
    if (strcmp(a, b) == 0) {
      g_set_error(error, DDP_CMD_ERROR, 0, "-o and --trace name the same file \"%s\"", opts->output);
      return FALSE;
    }
  }
  return TRUE;
}

static char *
summary(const TimelineOptions *opts, const DdpScenario *s, const DdpResult *r, const GArray *shown, guint k)
{
  GString *out = g_string_new(NULL);
  g_autofree char *setup = describe(s, r);
  Exposure exposed;
  exposure_init(&exposed, r);
  g_string_append_printf(out, "%s\n", setup);
  g_string_append_printf(out, "  iteration %u (steady state)   %.3f ms   %u bucket%s   %s\n", r->iterations,
                         ns_ms(r->reported_iteration_ns), r->n_buckets, r->n_buckets == 1 ? "" : "s", exposed.text);
  exposure_clear(&exposed);
  g_string_append(out, "  ranks shown     ");
  for (guint i = 0; i < shown->len; i++) {
    const Shown *w = &g_array_index(shown, Shown, i);
    g_string_append_printf(out, "%s%" G_GUINT64_FORMAT, i ? ", " : "", w->rank);
    if (!ddp_stragglers_is_none(s->stragglers))
      g_string_append_printf(out, " (x%.3f%s%s)", r->timelines[i].factor, w->role ? ", " : "", w->role ? w->role : "");
  }
  if (k > 0 && r->collapsed_ranks)
    g_string_append(out, "   (every rank behaves the same: no per-rank stragglers)");
  g_string_append_c(out, '\n');
  if (opts->output)
    g_string_append_printf(out, "  wrote %s\n", opts->output);
  if (opts->plot_data) {
    g_autofree char *script = ddp_plot_find_script("timeline", NULL);
    g_string_append_printf(out, "  plot data in %s (redraw: gnuplot %s/params.gp %s)\n", opts->plot_data,
                           opts->plot_data, script ? script : "timeline.gp");
  }
  if (opts->trace)
    g_string_append_printf(out, "  wrote %s (open at https://ui.perfetto.dev)\n", opts->trace);
  return g_string_free(out, FALSE);
}

static int
run(int argc, char **argv, TimelineOptions *opts)
{
  GOptionEntry own[] = {
    { "output", 'o', 0, G_OPTION_ARG_FILENAME, &opts->output, "Draw the Gantt chart into FILE (.png or .svg)", "FILE" },
    { "trace", 0, 0, G_OPTION_ARG_FILENAME, &opts->trace, "Write a Chrome trace-event JSON (Perfetto) into FILE", "FILE" },
    { "ranks", 0, 0, G_OPTION_ARG_STRING, &opts->ranks,
      "Also show the K slowest and K fastest ranks (with per-rank stragglers; K <= 16)", "K" },
    { "plot-data", 0, 0, G_OPTION_ARG_FILENAME, &opts->plot_data,
      "Keep the chart's data files and params.gp in DIR (to restyle with gnuplot)", "DIR" },
    { "compare", 0, 0, G_OPTION_ARG_FILENAME_ARRAY, &opts->compare,
      "Put this torch.profiler trace of a real DDP run (repeatable: one file per rank) beside the prediction", "TRACE" },
    { NULL, 0, 0, 0, NULL, NULL, NULL },
  };
  g_autoptr(GError) error = NULL;
  const char *scenario_path = NULL;
  if (!ddp_cmd_parse("timeline", "Draw one simulated DDP iteration: gnuplot Gantt chart, Perfetto trace.",
                     timeline_description, own, &opts->cli, &argc, &argv, &scenario_path, &error))
    return ddp_cmd_fail("timeline", error);
  guint k = 0;
  if (!check_options(opts, &k, &error))
    return ddp_cmd_fail("timeline", error);
  g_autoptr(DdpRunTrace) measured = NULL;
  /* the comparison does not use the run's node count: 1 spares the reader from deriving it */
  if (opts->compare && !(measured = ddp_run_trace_read((const char *const *)opts->compare,
                                                       g_strv_length(opts->compare), 1, &error)))
    return ddp_cmd_fail("timeline", error);
  g_autoptr(DdpScenario) scenario = ddp_scenario_load(scenario_path, &opts->cli, TRUE, &error);
  if (!scenario)
    return ddp_cmd_fail("timeline", error);
  if (!ddp_cli_check_mode_flags(&opts->cli, scenario->setup.mode, &error))
    return ddp_cmd_fail("timeline", error);
  /* DataParallel has no buckets and no NCCL stream: the chart's lanes do not exist for it */
  if (scenario->setup.mode == DDP_MODE_DP && opts->output) {
    g_set_error(&error, DDP_CMD_ERROR, 0, "-o: the chart draws DDP's bucket lanes, which --mode dp has none of; "
                "use --trace FILE.json for DataParallel");
    return ddp_cmd_fail("timeline", error);
  }

  g_autoptr(DdpResult) probe = NULL;
  if (k > 0 && !ddp_stragglers_is_uniform(scenario->stragglers)) {
    DdpRunOptions probe_options = { .skip_single_gpu = TRUE };
    if (!(probe = ddp_simulate(scenario, &probe_options, &error)))
      return ddp_cmd_fail("timeline", error);
  }
  g_autoptr(GArray) shown = choose_ranks(probe, k);
  g_autofree guint64 *watch = g_new(guint64, shown->len);
  for (guint i = 0; i < shown->len; i++)
    watch[i] = g_array_index(shown, Shown, i).rank;
  DdpRunOptions options = { .watch_ranks = watch, .n_watch_ranks = shown->len };
  g_autoptr(DdpResult) result = ddp_simulate(scenario, &options, &error);
  if (!result)
    return ddp_cmd_fail("timeline", error);

  /* the chart first: when gnuplot fails nothing at all has been written */
  if (opts->output && !(measured ? render_compare(opts, scenario, result, measured, &error)
                                  : render_plot(opts, scenario, result, shown, &error)))
    return ddp_cmd_fail("timeline", error);
  if (opts->trace) {
    g_autoptr(GPtrArray) labels = g_ptr_array_new_with_free_func(g_free);
    gboolean factors = !ddp_stragglers_is_none(scenario->stragglers);
    for (guint i = 0; i < shown->len; i++) {
      const Shown *w = &g_array_index(shown, Shown, i);
      GString *label = g_string_new(w->role);
      if (factors)
        g_string_append_printf(label, "%sx%.3f", w->role ? ", " : "", result->timelines[i].factor);
      g_ptr_array_add(labels, g_string_free(label, FALSE));
    }
    if (!(measured ? write_compare_trace(opts->trace, scenario, result, (const char *const *)labels->pdata, measured,
                                         &error)
                   : ddp_trace_write(opts->trace, scenario, result, (const char *const *)labels->pdata, &error)))
      return ddp_cmd_fail("timeline", error);
  }
  g_autofree char *text = summary(opts, scenario, result, shown, k);
  if (measured) {
    g_autofree char *table = compare_text(measured, result);
    char *both = g_strconcat(text, table, NULL);
    g_free(text);
    text = both;
  }
  if (!ddp_cmd_print(text, &error))
    return ddp_cmd_fail("timeline", error);
  return DDP_EXIT_OK;
}

int
ddp_cmd_timeline(int argc, char **argv)
{
  TimelineOptions options = { 0 };
  int status = run(argc, argv, &options);
  ddp_cli_options_clear(&options.cli);
  g_free(options.output);
  g_free(options.trace);
  g_free(options.ranks);
  g_free(options.plot_data);
  g_strfreev(options.compare);
  return status;
}
