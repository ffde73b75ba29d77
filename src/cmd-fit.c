/* cmd-fit — `ddpsim fit --db calib.db`: fits AllReduce latency/bandwidth per algorithm × protocol
 * and per-kind kernel efficiencies to what ddpsim-calibrate measured (fit.c), prints them with
 * their residuals and stores them in the same database, where `--calibration DB` finds them.
 * `--import FILE` first reads files users already have into the database as runs of their own —
 * nccl-tests all_reduce_perf, all_gather_perf, reduce_scatter_perf and broadcast_perf output
 * (ncclimport.h; the other collectives are kept as measured curves), torch.profiler Chrome traces of a 1-GPU step
 * (profimport.h), and torch.profiler traces of a multi-GPU DDP run, one file per rank
 * (ddpimport.h: all such files of one call are one run, with --measured-step-ms) — and then fits
 * those runs. */
#include "cmd.h"
#include "calibdb.h"
#include "ddpimport.h"
#include "fileio.h"
#include "fit.h"
#include "jsonout.h"
#include "ncclimport.h"
#include "profimport.h"
#include "ranges.h"

#include <glib/gstdio.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  char *db;
  char **runs;
  char *gpu;
  gboolean no_store, json, csv, residuals;
  char **imports;
  char *algo, *proto, *model, *precision;
  char *nodes, *batch;      /* through the range table (ranges.h), like every verb's numbers */
  char **measured_steps;
} FitOptions;

static void
fit_options_clear(FitOptions *o)
{
  g_free(o->db);
  g_strfreev(o->runs);
  g_free(o->gpu);
  g_strfreev(o->imports);
  g_free(o->algo);
  g_free(o->proto);
  g_free(o->model);
  g_free(o->precision);
  g_free(o->nodes);
  g_free(o->batch);
  g_strfreev(o->measured_steps);
}
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC(FitOptions, fit_options_clear)

static char *
human_bytes(gint64 bytes)
{
  static const char *const units[] = { "B", "KiB", "MiB", "GiB", "TiB" };
  int u = 0;
  double v = (double)bytes;
  while (v >= 1024 && u < 4 && fmod(v, 1024) == 0) {
    v /= 1024;
    u++;
  }
  return g_strdup_printf("%.0f %s", v, units[u]);
}

static double
percent(double rel)
{
  return 100.0 * rel;
}

/* One measured curve of another collective, for the reports: its first point (op, variant,
 * ranks, nodes) and its sizes. */
typedef struct {
  const DdpCalibCurvePoint *first;
  guint points;
  gint64 min_bytes, max_bytes;
} CurveSummary;

/* The fit's AllGather/ReduceScatter/Broadcast curves, one summary each, in the fit's order. */
static GArray *
collective_curves(const DdpFit *fit)
{
  guint n;
  const DdpCalibCurvePoint *p = ddp_fit_collective_curve_points(fit, &n);
  GArray *out = g_array_new(FALSE, FALSE, sizeof(CurveSummary));
  for (guint i = 0; i < n; i++) {
    CurveSummary *last = out->len ? &g_array_index(out, CurveSummary, out->len - 1) : NULL;
    if (last && strcmp(last->first->op, p[i].op) == 0 && strcmp(last->first->algorithm, p[i].algorithm) == 0 &&
        strcmp(last->first->protocol, p[i].protocol) == 0 && last->first->ranks == p[i].ranks &&
        last->first->nodes == p[i].nodes) {
      last->points++;
      last->min_bytes = MIN(last->min_bytes, p[i].bytes);
      last->max_bytes = MAX(last->max_bytes, p[i].bytes);
    } else {
      CurveSummary c = { &p[i], 1, p[i].bytes, p[i].bytes };
      g_array_append_val(out, c);
    }
  }
  return out;
}

static char *
fit_text(const DdpFit *fit, const char *path, gboolean stored, gboolean with_residuals)
{
  GString *s = g_string_new(NULL);
  const DdpCalibFit *h = ddp_fit_header(fit);
  g_string_append_printf(s, "Calibration fit%s of %s: run%s %s, %s", stored ? "" : " (not stored)", path,
                         strchr(h->runs, ',') ? "s" : "", h->runs, h->gpu_name);
  if (h->gpu_spec && *h->gpu_spec)
    g_string_append_printf(s, " (efficiencies against the built-in %s spec)\n", h->gpu_spec);
  else
    g_string_append(s, "\n  GPU not recognised: efficiencies not computed (pass --gpu NAME to name its spec)\n");

  guint n;
  const DdpCalibAllreduceFit *ar = ddp_fit_allreduce_rows(fit, &n);
  g_string_append(s, "\nAllReduce: t(S) = alpha + S / algbw  (least squares on relative error)\n");
  if (n == 0) {
    g_string_append(s, "  no AllReduce points\n");
  } else {
    g_string_append_printf(s, "%-10s %-8s %6s %6s %10s %11s %11s %7s %-18s %7s %7s\n", "algorithm", "protocol",
                           "ranks", "nodes", "alpha_us", "algbw_GBs", "busbw_GBs", "points", "sizes", "rms_%",
                           "max_%");
    for (guint i = 0; i < n; i++) {
      g_autofree char *lo = human_bytes(ar[i].min_bytes), *hi = human_bytes(ar[i].max_bytes);
      g_autofree char *sizes = g_strdup_printf("%s..%s", lo, hi);
      g_string_append_printf(s, "%-10s %-8s %6d %6d %10.2f ", ar[i].algorithm, ar[i].protocol, ar[i].ranks,
                             ar[i].nodes, ar[i].alpha_us);
      if (ar[i].algbw_GBs > 0)
        g_string_append_printf(s, "%11.2f %11.2f", ar[i].algbw_GBs, ar[i].busbw_GBs);
      else
        g_string_append_printf(s, "%11s %11s", "-", "-");
      g_string_append_printf(s, " %7d %-18s %7.2f %7.2f\n", ar[i].n_points, sizes, percent(ar[i].rms_rel),
                             percent(ar[i].max_rel));
    }
    guint n_curve;
    ddp_fit_curve_points(fit, &n_curve);
    if (n_curve > 0)
      g_string_append_printf(s, "  %u measured sizes kept as curves: at these GPU and node counts --calibration "
                                "interpolates them; elsewhere the collective model answers, with the per-tier parameters these "
                                "curves fit (docs/calibration.md)\n", n_curve);
    for (guint i = 0; i < n; i++)
      if (ar[i].ranks < 2) {
        g_string_append(s, "  (one rank: only the launch latency is measured; multi-GPU points are absent)\n");
        break;
      }
  }

  g_autoptr(GArray) curves = collective_curves(fit);
  if (curves->len > 0) {
    g_string_append(s, "\nAllGather, ReduceScatter, Broadcast: measured curves (nccl-tests sizes; at these GPU and node "
                       "counts --calibration interpolates them, elsewhere the model answers)\n");
    g_string_append_printf(s, "%-15s %-10s %-8s %6s %6s %7s %-18s\n", "op", "algorithm", "protocol", "ranks", "nodes",
                           "points", "sizes");
    for (guint i = 0; i < curves->len; i++) {
      const CurveSummary *c = &g_array_index(curves, CurveSummary, i);
      g_autofree char *lo = human_bytes(c->min_bytes), *hi = human_bytes(c->max_bytes);
      g_autofree char *sizes = g_strdup_printf("%s..%s", lo, hi);
      g_string_append_printf(s, "%-15s %-10s %-8s %6d %6d %7u %-18s\n", c->first->op, c->first->algorithm,
                             c->first->protocol, c->first->ranks, c->first->nodes, c->points, sizes);
    }
  }

  const DdpCalibKernelFit *k = ddp_fit_kernel_rows(fit, &n);
  g_string_append(s, "\nKernels: t(W) = overhead + W / rate  (W = FLOPs for conv/linear, bytes otherwise)\n");
  if (n == 0) {
    g_string_append(s, "  no kernel points\n");
  } else {
    g_string_append_printf(s, "%-12s %-9s %17s %11s %12s %7s %7s %7s\n", "kind", "precision", "rate",
                           "efficiency", "overhead_us", "points", "rms_%", "max_%");
    for (guint i = 0; i < n; i++) {
      gboolean flops = g_strcmp0(k[i].basis, "flops") == 0;
      g_autofree char *rate = g_strdup_printf("%.1f %s", k[i].rate, flops ? "TFLOP/s" : "GB/s");
      g_autofree char *eff = isfinite(k[i].efficiency) ? g_strdup_printf("%.1f %%", 100 * k[i].efficiency)
                                                       : g_strdup("-");
      g_string_append_printf(s, "%-12s %-9s %17s %11s %12.2f %7d %7.2f %7.2f\n", k[i].layer_kind, k[i].precision,
                             rate, eff, k[i].overhead_us, k[i].n_points, percent(k[i].rms_rel),
                             percent(k[i].max_rel));
    }
  }
  ddp_fit_layer_rows(fit, &n);
  g_string_append_printf(s, "\nLayers: %u measured (signature, precision, batch) times; --json lists them.\n", n);

  if (with_residuals) {
    const DdpCalibResidual *r = ddp_fit_residual_rows(fit, &n);
    g_string_append_printf(s, "\nResiduals\n%-9s %-32s %16s %12s %12s %8s\n", "model", "key", "x", "measured_us",
                           "fitted_us", "rel_%");
    for (guint i = 0; i < n; i++)
      g_string_append_printf(s, "%-9s %-32s %16.0f %12.3f %12.3f %8.2f\n", r[i].model, r[i].key, r[i].x,
                             r[i].measured_us, r[i].fitted_us, percent(r[i].rel));
  }
  return g_string_free(s, FALSE);
}

static char *
fit_json(const DdpFit *fit, gboolean with_residuals)
{
  DdpJson *j = ddp_json_new();
  const DdpCalibFit *h = ddp_fit_header(fit);
  ddp_json_begin_object(j, NULL);
  ddp_json_int(j, "fit_id", h->id);
  ddp_json_string(j, "runs", h->runs);
  ddp_json_string(j, "gpu_name", h->gpu_name);
  ddp_json_string(j, "gpu_spec", h->gpu_spec);
  guint n;
  const DdpCalibAllreduceFit *ar = ddp_fit_allreduce_rows(fit, &n);
  ddp_json_begin_array(j, "allreduce");
  for (guint i = 0; i < n; i++) {
    ddp_json_begin_object(j, NULL);
    ddp_json_string(j, "algorithm", ar[i].algorithm);
    ddp_json_string(j, "protocol", ar[i].protocol);
    ddp_json_int(j, "ranks", ar[i].ranks);
    ddp_json_int(j, "nodes", ar[i].nodes);
    ddp_json_double(j, "alpha_us", ar[i].alpha_us, 3);
    ddp_json_double(j, "algbw_GBs", ar[i].algbw_GBs, 3);
    ddp_json_double(j, "busbw_GBs", ar[i].busbw_GBs, 3);
    ddp_json_int(j, "points", ar[i].n_points);
    ddp_json_int(j, "min_bytes", ar[i].min_bytes);
    ddp_json_int(j, "max_bytes", ar[i].max_bytes);
    ddp_json_double(j, "rms_rel", ar[i].rms_rel, 5);
    ddp_json_double(j, "max_rel", ar[i].max_rel, 5);
    ddp_json_end_object(j);
  }
  ddp_json_end_array(j);
  g_autoptr(GArray) curves = collective_curves(fit);
  ddp_json_begin_array(j, "collectives");
  for (guint i = 0; i < curves->len; i++) {
    const CurveSummary *c = &g_array_index(curves, CurveSummary, i);
    ddp_json_begin_object(j, NULL);
    ddp_json_string(j, "op", c->first->op);
    ddp_json_string(j, "algorithm", c->first->algorithm);
    ddp_json_string(j, "protocol", c->first->protocol);
    ddp_json_int(j, "ranks", c->first->ranks);
    ddp_json_int(j, "nodes", c->first->nodes);
    ddp_json_int(j, "points", c->points);
    ddp_json_int(j, "min_bytes", c->min_bytes);
    ddp_json_int(j, "max_bytes", c->max_bytes);
    ddp_json_end_object(j);
  }
  ddp_json_end_array(j);
  const DdpCalibKernelFit *k = ddp_fit_kernel_rows(fit, &n);
  ddp_json_begin_array(j, "kernels");
  for (guint i = 0; i < n; i++) {
    ddp_json_begin_object(j, NULL);
    ddp_json_string(j, "kind", k[i].layer_kind);
    ddp_json_string(j, "precision", k[i].precision);
    ddp_json_string(j, "basis", k[i].basis);
    ddp_json_double(j, g_strcmp0(k[i].basis, "flops") == 0 ? "tflops" : "GBs", k[i].rate, 3);
    ddp_json_double(j, "efficiency", k[i].efficiency, 4);
    ddp_json_double(j, "overhead_us", k[i].overhead_us, 3);
    ddp_json_int(j, "points", k[i].n_points);
    ddp_json_double(j, "rms_rel", k[i].rms_rel, 5);
    ddp_json_double(j, "max_rel", k[i].max_rel, 5);
    ddp_json_end_object(j);
  }
  ddp_json_end_array(j);
  const DdpCalibLayerFit *l = ddp_fit_layer_rows(fit, &n);
  ddp_json_begin_array(j, "layers");
  for (guint i = 0; i < n; i++) {
    ddp_json_begin_object(j, NULL);
    ddp_json_string(j, "signature", l[i].signature);
    ddp_json_string(j, "kind", l[i].layer_kind);
    ddp_json_string(j, "layer", l[i].layer);
    ddp_json_string(j, "precision", l[i].precision);
    ddp_json_double(j, "batch", l[i].batch_size, 3);
    ddp_json_double(j, "forward_us", l[i].forward_us >= 0 ? l[i].forward_us : NAN, 3);
    ddp_json_double(j, "backward_us", l[i].backward_us, 3);
    ddp_json_end_object(j);
  }
  ddp_json_end_array(j);
  if (with_residuals) {
    const DdpCalibResidual *r = ddp_fit_residual_rows(fit, &n);
    ddp_json_begin_array(j, "residuals");
    for (guint i = 0; i < n; i++) {
      ddp_json_begin_object(j, NULL);
      ddp_json_string(j, "model", r[i].model);
      ddp_json_string(j, "key", r[i].key);
      ddp_json_double(j, "x", r[i].x, 3);
      ddp_json_double(j, "measured_us", r[i].measured_us, 3);
      ddp_json_double(j, "fitted_us", r[i].fitted_us, 3);
      ddp_json_double(j, "rel", r[i].rel, 5);
      ddp_json_end_object(j);
    }
    ddp_json_end_array(j);
  }
  ddp_json_end_object(j);
  return ddp_json_free_to_string(j);
}

/* CSV: the two fitted tables, then the other collectives' measured curves, each with its header,
 * separated by empty lines. */
static char *
fit_csv(const DdpFit *fit)
{
  GString *s = g_string_new("algorithm,protocol,ranks,nodes,alpha_us,algbw_GBs,busbw_GBs,points,min_bytes,"
                            "max_bytes,rms_rel,max_rel\n");
  guint n;
  const DdpCalibAllreduceFit *ar = ddp_fit_allreduce_rows(fit, &n);
  for (guint i = 0; i < n; i++)
    g_string_append_printf(s, "%s,%s,%d,%d,%.3f,%.3f,%.3f,%d,%" G_GINT64_FORMAT ",%" G_GINT64_FORMAT ",%.5f,%.5f\n",
                           ar[i].algorithm, ar[i].protocol, ar[i].ranks, ar[i].nodes, ar[i].alpha_us,
                           ar[i].algbw_GBs, ar[i].busbw_GBs, ar[i].n_points, ar[i].min_bytes, ar[i].max_bytes,
                           ar[i].rms_rel, ar[i].max_rel);
  g_string_append(s, "\nkind,precision,basis,rate,efficiency,overhead_us,points,rms_rel,max_rel\n");
  const DdpCalibKernelFit *k = ddp_fit_kernel_rows(fit, &n);
  for (guint i = 0; i < n; i++) {
    g_string_append_printf(s, "%s,%s,%s,%.3f,", k[i].layer_kind, k[i].precision, k[i].basis, k[i].rate);
    if (isfinite(k[i].efficiency))
      g_string_append_printf(s, "%.4f", k[i].efficiency);
    g_string_append_printf(s, ",%.3f,%d,%.5f,%.5f\n", k[i].overhead_us, k[i].n_points, k[i].rms_rel, k[i].max_rel);
  }
  g_string_append(s, "\nop,algorithm,protocol,ranks,nodes,points,min_bytes,max_bytes\n");
  g_autoptr(GArray) curves = collective_curves(fit);
  for (guint i = 0; i < curves->len; i++) {
    const CurveSummary *c = &g_array_index(curves, CurveSummary, i);
    g_string_append_printf(s, "%s,%s,%s,%d,%d,%u,%" G_GINT64_FORMAT ",%" G_GINT64_FORMAT "\n", c->first->op,
                           c->first->algorithm, c->first->protocol, c->first->ranks, c->first->nodes, c->points,
                           c->min_bytes, c->max_bytes);
  }
  return g_string_free(s, FALSE);
}

/* Removes a database file and its WAL companions. */
static void
remove_database(const char *path)
{
  static const char *const suffixes[] = { "", "-wal", "-shm", "-journal" };
  for (gsize i = 0; i < G_N_ELEMENTS(suffixes); i++) {
    g_autofree char *p = g_strconcat(path, suffixes[i], NULL);
    g_remove(p);
  }
}

/* Parses the --run values into ids; FALSE with DDP_CMD_ERROR on a malformed one. */
static gboolean
parse_runs(char **runs, GArray *ids, GError **error)
{
  for (guint i = 0; runs && runs[i]; i++) {
    g_auto(GStrv) parts = g_strsplit(runs[i], ",", -1);
    for (guint j = 0; parts[j]; j++) {
      gint64 id;
      g_autoptr(GError) local = NULL;
      if (!g_ascii_string_to_signed(g_strstrip(parts[j]), 10, 1, G_MAXINT64, &id, &local)) {
        g_set_error(error, DDP_CMD_ERROR, 0, "--run: \"%s\" is not a run id (see ddpsim-calibrate --list)", parts[j]);
        return FALSE;
      }
      g_array_append_val(ids, id);
    }
  }
  return TRUE;
}

/* One --import file, read and parsed before the database is opened: exactly one is set, or @ddp
 * (one rank of the DDP run read as a whole, read_ddp_run). */
typedef struct {
  DdpProfTrace *trace;
  DdpNcclTests *nccl;
  gboolean ddp;
} Imported;

static void
imported_free(gpointer data)
{
  Imported *i = data;
  ddp_prof_trace_free(i->trace);
  ddp_nccl_tests_free(i->nccl);
  g_free(i);
}

/* A profiler trace is JSON (an object or an array) or gzip (.json.gz); anything else is taken
 * for nccl-tests text.  The sniffing read is the checked one too (fileio.h). */
static gboolean
sniff_json(const char *path, gboolean *json, GError **error)
{
  g_autofree char *data = NULL;
  gsize length = 0;
  if (!ddp_file_read(path, DDP_FILE_BINARY, &data, &length, error))
    return FALSE;
  const char *p = data;
  while (p < data + length && g_ascii_isspace(*p))
    p++;
  gboolean gzipped = length >= 2 && (guchar)data[0] == 0x1f && (guchar)data[1] == 0x8b;
  *json = gzipped || (p < data + length && (*p == '{' || *p == '['));
  return TRUE;
}

/* Reads and parses every --import file (nothing is opened for writing yet: a refused file leaves
 * the database untouched, byte for byte).  Returns: (transfer full) Imported, or NULL with @error. */
static GPtrArray *
read_imports(const FitOptions *o, GError **error)
{
  g_autoptr(GPtrArray) all = g_ptr_array_new_with_free_func(imported_free);
  for (guint i = 0; o->imports && o->imports[i]; i++) {
    const char *path = o->imports[i];
    gboolean json = FALSE;
    if (!sniff_json(path, &json, error))
      return NULL;
    Imported *im = g_new0(Imported, 1);
    g_ptr_array_add(all, im);
    if (json && ddp_run_trace_sniff(path)) {
      im->ddp = TRUE;   /* read with the run's other rank files (read_ddp_run) */
    } else if (json) {
      if (!o->model) {
        g_set_error(error, DDP_CMD_ERROR, 0, "--import %s: a profiler trace needs --model (the network it "
                    "profiled) to map its backward ops to layers", path);
        return NULL;
      }
      DdpProfImportOptions po = { o->model, o->batch, o->precision };
      if (!(im->trace = ddp_prof_trace_read(path, &po, error)))
        return NULL;
    } else if (!(im->nccl = ddp_nccl_tests_read(path, error))) {
      return NULL;
    }
  }
  return g_steal_pointer(&all);
}

/* The --import files that are traces of a multi-GPU DDP run, read together as one run (one file
 * per rank) before anything is written: a refused trace leaves the database as it was.  NULL and
 * no error when there is none. */
static DdpRunTrace *
read_ddp_run(const FitOptions *o, guint64 nodes, GPtrArray *imported, GPtrArray *paths, GArray *steps, GError **error)
{
  for (guint i = 0; i < imported->len; i++)
    if (((Imported *)g_ptr_array_index(imported, i))->ddp)
      g_ptr_array_add(paths, o->imports[i]);
  for (guint i = 0; o->measured_steps && o->measured_steps[i]; i++) {
    DdpMeasuredStep m;
    if (!ddp_measured_step_parse(o->measured_steps[i], &m, error))
      return NULL;
    g_array_append_val(steps, m);
  }
  if (paths->len == 0) {
    if (steps->len > 0)
      g_set_error(error, DDP_CMD_ERROR, 0, "--measured-step-ms: goes with --import of a multi-GPU DDP trace");
    return NULL;
  }
  if (steps->len > DDP_MAX_MEASURED_STEPS) {
    g_set_error(error, DDP_CMD_ERROR, 0, "--measured-step-ms: at most %d values", DDP_MAX_MEASURED_STEPS);
    return NULL;
  }
  return ddp_run_trace_read((const char *const *)paths->pdata, paths->len, nodes, error);
}

/* An import found already stored as @run must describe the same run: a second import of one file
 * with another --nodes would otherwise be dropped silently, the stored node count kept. */
static gboolean
same_nodes_as_stored(DdpCalibDb *db, gint64 run, int nodes, const char *path, GError **error)
{
  g_autoptr(DdpCalibRun) stored = ddp_calibdb_run_get(db, run, error);
  if (!stored)
    return FALSE;
  if (stored->nodes == nodes)
    return TRUE;
  g_set_error(error, DDP_FIT_ERROR, DDP_FIT_ERROR_IMPORT,
              "--nodes: %s is already imported as run %" G_GINT64_FORMAT " on %d node%s, not %d (give --nodes %d, or "
              "import into another --db)", path, run, stored->nodes, stored->nodes == 1 ? "" : "s", nodes, stored->nodes);
  return FALSE;
}

/* Stores every read file into @db (inside the caller's transaction); appends the new (or earlier
 * identical) runs to @ids and what was imported to @said, for stderr once everything is committed
 * (stdout stays the fit, parseable with --json/--csv; a refusal stays one line). */
static gboolean
store_imports(const FitOptions *o, guint64 nodes, GPtrArray *imported, DdpRunTrace *ddp_run, GPtrArray *ddp_paths,
              GArray *steps, DdpCalibDb *db, GArray *ids, GString *said, GError **error)
{
  for (guint i = 0; i < imported->len; i++) {
    Imported *im = g_ptr_array_index(imported, i);
    gboolean again = FALSE;
    gint64 run;
    if (im->ddp) {
      if (o->imports[i] != g_ptr_array_index(ddp_paths, 0))
        continue;   /* imported with the first rank file */
      run = ddp_run_import(db, (const char *const *)ddp_paths->pdata, ddp_paths->len, ddp_run,
                           (const DdpMeasuredStep *)(void *)steps->data, steps->len, &again, error);
      if (run == 0 || (again && !same_nodes_as_stored(db, run, (int)ddp_run->terms.nodes, o->imports[i], error)))
        return FALSE;
      g_autofree char *summary = ddp_run_trace_summary(ddp_run);
      g_string_append_printf(said, "ddpsim fit: %s: %s\nddpsim fit: %s: torch.profiler DDP run %s as run %" G_GINT64_FORMAT "\n",
                             o->imports[i], summary, o->imports[i], again ? "already imported" : "imported", run);
      g_array_append_val(ids, run);
      continue;
    }
    if (im->trace) {
      run = ddp_prof_trace_store(db, im->trace, &again, error);
    } else {
      DdpNcclImportOptions no = { o->algo, o->proto, (int)nodes };
      run = ddp_nccl_tests_store(db, im->nccl, &no, &again, error);
      if (run != 0 && again && !same_nodes_as_stored(db, run, nodes > 0 ? (int)nodes : im->nccl->nodes, o->imports[i], error))
        return FALSE;
    }
    if (run == 0)
      return FALSE;
    g_autofree char *what = im->trace
                              ? g_strdup("torch.profiler trace")
                              : g_strdup_printf("nccl-tests %s_perf output", ddp_collective_op_name(im->nccl->op));
    g_string_append_printf(said, "ddpsim fit: %s: %s %s as run %" G_GINT64_FORMAT "\n", o->imports[i], what,
                           again ? "already imported" : "imported", run);
    g_array_append_val(ids, run);
  }
  return TRUE;
}

/* With --import and no --run, the fit covers every run of the database that measured the same GPU
 * model as the first imported file (or an unnamed one): imports add up — a one-node and then a
 * two-node curve, a trace next to a ddpsim-calibrate run — into one fit that answers all of them. */
static gboolean
add_same_gpu_runs(DdpCalibDb *db, GArray *ids, GError **error)
{
  g_autoptr(DdpCalibRun) imported = ddp_calibdb_run_get(db, g_array_index(ids, gint64, 0), error);
  g_autoptr(GPtrArray) runs = imported ? ddp_calibdb_runs(db, error) : NULL;
  if (!runs)
    return FALSE;
  for (guint i = 0; i < runs->len; i++) {
    const DdpCalibRun *run = g_ptr_array_index(runs, i);
    gboolean present = FALSE;
    for (guint j = 0; j < ids->len; j++)
      present |= g_array_index(ids, gint64, j) == run->id;
    gboolean same = !*run->gpu_name || !*imported->gpu_name || strcmp(run->gpu_name, imported->gpu_name) == 0;
    if (!present && same && run->n_allreduce_points + run->n_kernel_points + run->n_collective_points > 0)
      g_array_append_val(ids, run->id);
  }
  return TRUE;
}

/* Without --run or --import: the newest run that measured anything, then (add_same_gpu_runs) every
 * other run of the same GPU model — a ddpsim-calibrate run of the built-in kernel set and later
 * runs of one model's layers on the same machine belong in one fit. */
static gboolean
add_newest_run(DdpCalibDb *db, GArray *ids, GError **error)
{
  g_autoptr(GPtrArray) runs = ddp_calibdb_runs(db, error);
  if (!runs)
    return FALSE;
  gint64 newest = -1;
  for (guint i = 0; i < runs->len; i++) {
    const DdpCalibRun *run = g_ptr_array_index(runs, i);
    if (run->n_allreduce_points + run->n_kernel_points + run->n_collective_points > 0 && run->id > newest)
      newest = run->id;
  }
  if (newest >= 0)
    g_array_append_val(ids, newest);
  return TRUE;
}

/* Chooses the runs (see ddp_cmd_fit), fits them and, unless --no-store, stores the fit. */
static gboolean
fit_runs(const FitOptions *o, DdpCalibDb *db, GArray *ids, DdpFit **fit, GError **error)
{
  if (!o->imports && !o->runs && !add_newest_run(db, ids, error))
    return FALSE;
  if (!o->runs && ids->len > 0 && !add_same_gpu_runs(db, ids, error))
    return FALSE;
  *fit = ddp_fit_from_db(db, (const gint64 *)(void *)ids->data, ids->len, o->gpu, error);
  return *fit && (o->no_store || ddp_fit_store(*fit, db, error) != 0);
}

/**
 * ddp_cmd_fit:
 * `ddpsim fit --db FILE [--import FILE]… [--run ID]… [--gpu NAME] [--no-store] [--residuals]
 * [--json|--csv]`.  With --import the database is created when missing, the files become runs,
 * and those runs are fitted with the --run ones, or without --run with every run of the same GPU
 * model (add_same_gpu_runs).
 * Returns: the exit status (0; 2 for a missing, foreign, corrupt or empty database, a bad option,
 * an unknown run or a file that cannot be imported; 1 for a failure to write).
 */
int
ddp_cmd_fit(int argc, char **argv)
{
  g_auto(FitOptions) o = { 0 };
  g_autoptr(DdpFit) fit = NULL;
  GOptionEntry entries[] = {
    { "db", 0, 0, G_OPTION_ARG_FILENAME, &o.db, "calibration database written by ddpsim-calibrate (created by --import when missing)", "FILE" },
    { "run", 0, 0, G_OPTION_ARG_STRING_ARRAY, &o.runs, "fit these runs (repeatable or comma-separated; default: every run of the newest run's GPU model)", "ID" },
    { "gpu", 0, 0, G_OPTION_ARG_STRING, &o.gpu, "built-in GPU spec the efficiencies refer to (default: recognised from the device name)", "NAME" },
    { "no-store", 0, 0, G_OPTION_ARG_NONE, &o.no_store, "print the fit without storing it", NULL },
    { "residuals", 0, 0, G_OPTION_ARG_NONE, &o.residuals, "list each point against its fitted value", NULL },
    { "json", 0, 0, G_OPTION_ARG_NONE, &o.json, "JSON output", NULL },
    { "csv", 0, 0, G_OPTION_ARG_NONE, &o.csv, "CSV output (AllReduce table, empty line, kernel table, empty line, the other collectives' curves)", NULL },
    { "import", 0, 0, G_OPTION_ARG_FILENAME_ARRAY, &o.imports, "import nccl-tests all_reduce_perf, all_gather_perf, reduce_scatter_perf or broadcast_perf output, a torch.profiler Chrome trace of a 1-GPU step, or one rank's trace of a DDP run first (repeatable)", "FILE" },
    { "nodes", 0, 0, G_OPTION_ARG_STRING, &o.nodes, "nccl-tests or DDP trace: nodes of the run (default: nccl-tests from the rank lines, else 1; a DDP trace: ranks over the GPUs each process saw)", "N" },
    { "algo", 0, 0, G_OPTION_ARG_STRING, &o.algo, "nccl-tests: the NCCL_ALGO the run was forced to (default: auto, NCCL's own choice)", "A" },
    { "proto", 0, 0, G_OPTION_ARG_STRING, &o.proto, "nccl-tests: the NCCL_PROTO the run was forced to (default: auto)", "P" },
    { "model", 0, 0, G_OPTION_ARG_STRING, &o.model, "trace: the profiled network (model name or file)", "M" },
    { "batch", 0, 0, G_OPTION_ARG_STRING, &o.batch, "trace: samples per step of the profiled run (required with a trace)", "B" },
    { "precision", 0, 0, G_OPTION_ARG_STRING, &o.precision, "trace: fp32|tf32|fp16|bf16 of the profiled run (default fp32)", "P" },
    { "measured-step-ms", 0, 0, G_OPTION_ARG_STRING_ARRAY, &o.measured_steps, "DDP trace: a plain measured iteration time at GPUS GPUs (repeatable; 1:MS is the 1-GPU step without DDP)", "GPUS:MS" },
    { NULL, 0, 0, 0, NULL, NULL, NULL },
  };
  g_autoptr(GError) error = NULL;
  if (!ddp_cmd_parse("fit", "Fit latency/bandwidth and efficiencies to calibration measurements.",
                     "The fit is stored in the database; `--calibration FILE` on any verb uses the newest one.\n"
                     "--import reads nccl-tests output and torch.profiler traces into the database first\n"
                     "(docs/calibration.md).",
                     entries, NULL, &argc, &argv, NULL, &error))
    return ddp_cmd_fail("fit", error);
  if (!o.db) {
    g_set_error(&error, DDP_CMD_ERROR, 0, "--db FILE is required (a database written by ddpsim-calibrate)");
    return ddp_cmd_fail("fit", error);
  }
  if (o.json && o.csv) {
    g_set_error(&error, DDP_CMD_ERROR, 0, "--json and --csv exclude each other");
    return ddp_cmd_fail("fit", error);
  }
  if (o.imports && o.no_store) {
    g_set_error(&error, DDP_CMD_ERROR, 0, "--import writes the database: it excludes --no-store");
    return ddp_cmd_fail("fit", error);
  }
  if (!o.imports && (o.algo || o.proto || o.nodes || o.model || o.batch || o.precision || o.measured_steps)) {
    g_set_error(&error, DDP_CMD_ERROR, 0, "--algo, --proto, --nodes, --model, --batch, --precision and "
                "--measured-step-ms describe an --import FILE: give one");
    return ddp_cmd_fail("fit", error);
  }
  static const char *const algorithms[] = { "Ring", "Tree", "NVLS", "NVLSTree", "CollNetDirect", "CollNetChain",
                                            "PAT", NULL };
  static const char *const protocols[] = { "LL", "LL128", "Simple", NULL };
  if (o.algo && !g_strv_contains(algorithms, o.algo)) {
    g_set_error(&error, DDP_CMD_ERROR, 0, "--algo: \"%s\" is not an NCCL_ALGO value (Ring, Tree, NVLS, NVLSTree, "
                "CollNetDirect, CollNetChain, PAT)", o.algo);
    return ddp_cmd_fail("fit", error);
  }
  if (o.proto && !g_strv_contains(protocols, o.proto)) {
    g_set_error(&error, DDP_CMD_ERROR, 0, "--proto: \"%s\" is not an NCCL_PROTO value (LL, LL128, Simple)", o.proto);
    return ddp_cmd_fail("fit", error);
  }
  /* nodes of an imported run: at least one, at most one per GPU */
  guint64 nodes = 0;
  double batch = 0;
  if (!ddp_flag_count("nodes", o.nodes, &DDP_RANGE_GPUS, &nodes, &error) ||
      !ddp_flag_number("batch", o.batch, &DDP_RANGE_BATCH, &batch, &error))
    return ddp_cmd_fail("fit", error);
  g_autoptr(GArray) ids = g_array_new(FALSE, FALSE, sizeof(gint64));
  if (!parse_runs(o.runs, ids, &error))
    return ddp_cmd_fail("fit", error);
  /* Without --import never create a database: a typo would leave an empty file behind. */
  if (!o.imports && !g_file_test(o.db, G_FILE_TEST_EXISTS)) {
    g_set_error(&error, DDP_CALIBDB_ERROR, DDP_CALIBDB_ERROR_OPEN, "%s: no such file", o.db);
    return ddp_cmd_fail("fit", error);
  }
  /* every file is read and checked before the database is opened */
  g_autoptr(GPtrArray) imported = o.imports ? read_imports(&o, &error) : NULL;
  if (o.imports && !imported)
    return ddp_cmd_fail("fit", error);
  g_autoptr(GPtrArray) ddp_paths = g_ptr_array_new();
  g_autoptr(GArray) steps = g_array_new(FALSE, FALSE, sizeof(DdpMeasuredStep));
  g_autoptr(DdpRunTrace) ddp_run = imported ? read_ddp_run(&o, nodes, imported, ddp_paths, steps, &error) : NULL;
  if (!ddp_run && (ddp_paths->len > 0 || error))
    return ddp_cmd_fail("fit", error);
  gboolean existed = g_file_test(o.db, G_FILE_TEST_EXISTS);
  g_autoptr(GString) said = g_string_new(NULL);
  g_autoptr(DdpCalibDb) db = ddp_calibdb_open(o.db, o.no_store ? DDP_CALIBDB_READ : DDP_CALIBDB_UPDATE, &error);
  if (!db)
    return ddp_cmd_fail("fit", error);
  /* One transaction: the imports and the fit are stored together or not at all (a fit that
   * refuses the imported points leaves the database as it was; a kill leaves no trace). */
  if ((!o.no_store && !ddp_calibdb_transaction_begin(db, &error)) ||
      (imported && !store_imports(&o, nodes, imported, ddp_run, ddp_paths, steps, db, ids, said, &error)) ||
      !fit_runs(&o, db, ids, &fit, &error) ||
      (!o.no_store && !ddp_calibdb_transaction_commit(db, &error))) {
    /* a database this call created: leave no file behind */
    if (!existed) {
      g_clear_pointer(&db, ddp_calibdb_close);
      remove_database(o.db);
    }
    return ddp_cmd_fail("fit", error);
  }
  g_printerr("%s", said->str);
  g_autofree char *out = o.json ? fit_json(fit, o.residuals)
                        : o.csv ? fit_csv(fit)
                                : fit_text(fit, o.db, !o.no_store, o.residuals);
  if (!o.json && !o.csv && !o.no_store) {
    g_autofree char *tail = g_strdup_printf("%sStored as fit %" G_GINT64_FORMAT " in %s.\n", out,
                                            ddp_fit_header(fit)->id, o.db);
    g_free(out);
    out = g_steal_pointer(&tail);
  }
  if (!ddp_cmd_print(out, &error))
    return ddp_cmd_fail("fit", error);
  return DDP_EXIT_OK;
}
