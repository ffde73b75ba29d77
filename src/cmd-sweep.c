/* cmd-sweep — `ddpsim sweep [SCENARIO] --model A,B --cluster C,D --gpus 8,64 --bucket-cap-mb 10,25
 * --seed 1,2 [--grid FILE] [--jobs N] [--json] [-o FILE]`: one simulation per point of the grid,
 * one CSV or JSON-lines row per point, in grid order (sweep.h) however the work was spread:
 * --jobs N threads on this machine, and under `mpirun -n K` K ranks each taking a contiguous slice,
 * rank 0 gathering and writing.  The output is byte-identical in every case (docs/sweep.md).
 *
 * Threads are safe here: a point loads its own scenario (model, cluster, calibration connection)
 * and ddp_simulate keeps all state in its own Sim, with the one GRand it seeds itself (straggler.c);
 * the simulator has no mutable static state.  Each worker writes only its own slot of the row
 * array, and the rows are joined in index order after the pool has drained. */
#include "cmd.h"

#include "ddp.h"
#include "fileio.h"
#include "mpi-world.h"
#include "progress.h"
#include "ranges.h"
#include "sweep.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct {
  DdpCliOptions cli;
  DdpCostFlags cost;
  gboolean json, csv;
  char *grid, *output, *jobs;
} SweepOptions;

static const char sweep_description[] =
  "--model, --cluster, --gpus, --bucket-cap-mb and --seed take comma-separated lists; the grid is\n"
  "their product, in the order model, cluster, gpus, bucket_cap_mb, seed (the last varying\n"
  "fastest), each axis in the order given; --gpus also continues a progression as scale does\n"
  "(8,16,...,1024).  --grid FILE reads the lists from a key file:\n"
  "  [sweep]\n  model = resnet50, bert-large\n  cluster = dgx-a100, dgx-h100\n  gpus = 8, 64, 512\n"
  "  bucket_cap_mb = 10, 25, 50\n  seeds = 1, 2, 3\n"
  "flags override the file.  Every other flag (and the SCENARIO file) applies to every point.\n"
  "One row per point (CSV, or JSON lines with --json), at most 100000 points.  --jobs N simulates\n"
  "N points at once (0: one per core); under `mpirun -n K ddpsim sweep ...` (built with MPI) each\n"
  "rank takes a contiguous slice and rank 0 writes.  The output is the same bytes in every case.\n"
  "See docs/sweep.md.";

/* A run's slice of the grid: what workers read and the slots they fill. */
typedef struct {
  const DdpSweepGrid *grid;
  const DdpCliOptions *base;
  const char *scenario_path;
  DdpSweepFormat format;
  guint64 first;
  const DdpCostFlags *cost;   /* NULL: no cost columns */
  char **rows;         /* [count] */
  GError **errors;     /* [count] */
  guint point_threads; /* DdpRunOptions.threads: 1 when points run side by side */
  DdpProgress *progress;   /* this rank's points */
  double *merit;       /* [count] what "best" ranks by: -cost per 1000 samples when priced, else samples/s;
                        * -inf for a point that does not fit in memory (never the best) */
} Slice;

/* "point 7 (resnet50, dgx-a100, gpus 12, bucket_cap_mb 25, seed 1)"; unswept axes left out. */
static char *
describe_point(const DdpSweepPoint *p)
{
  GString *out = g_string_new(NULL);
  g_string_append_printf(out, "point %" G_GUINT64_FORMAT, p->index);
  gboolean any = FALSE;
  for (int a = 0; a < DDP_SWEEP_N_AXES; a++)
    if (p->values[a]) {
      g_string_append_printf(out, "%s%s %s", any ? ", " : " (", ddp_sweep_axis_key(a), p->values[a]);
      any = TRUE;
    }
  if (any)
    g_string_append_c(out, ')');
  return g_string_free(out, FALSE);
}

static void
simulate_point(gpointer data, gpointer user_data)
{
  Slice *slice = user_data;
  guint64 i = GPOINTER_TO_SIZE(data) - 1;
  DdpSweepPoint point;
  ddp_sweep_grid_point(slice->grid, slice->first + i, &point);
  DdpCliOptions cli;
  ddp_progress_step(slice->progress, NULL);
  ddp_sweep_point_apply(&point, slice->base, &cli);
  GError *error = NULL;
  g_autoptr(DdpScenario) scenario = ddp_scenario_load(slice->scenario_path, &cli, TRUE, &error);
  DdpRunOptions options = { .threads = slice->point_threads };
  g_autoptr(DdpResult) result = scenario ? ddp_simulate(scenario, &options, &error) : NULL;
  if (!result) {
    g_autofree char *where = describe_point(&point);
    g_prefix_error(&error, "%s: ", where);
    slice->errors[i] = error;
    return;
  }
  DdpCost cost;
  if (slice->cost && !ddp_cost_init(&cost, slice->cost, scenario, &error)) {
    slice->errors[i] = error;
    return;
  }
  slice->rows[i] = ddp_sweep_row_cost(slice->format, &point, scenario, result, slice->cost ? &cost : NULL);
  DdpCostEstimate e = slice->cost ? ddp_cost_estimate(&cost, result->gpus, result->samples_per_s) : (DdpCostEstimate){ NAN, NAN, NAN, NAN };
  slice->merit[i] = !result->memory.fits ? -INFINITY : isfinite(e.cost_per_1k_samples) ? -e.cost_per_1k_samples
                                                                                        : result->samples_per_s;
}

static gboolean
with_cost(const SweepOptions *opts)
{
  return opts->cost.price_per_gpu_hour || opts->cost.train_samples || opts->cost.train_tokens;
}

/* "best: point 7 (…) at 1234.5 samples/s; 2 points do not fit in memory (excluded)": the best
 * point by cost per 1000 samples when priced, else by samples/s; never one that does not fit. */
static char *
best_text(const Slice *slice, guint64 count)
{
  guint64 best = count, oom = 0;
  for (guint64 i = 0; i < count; i++) {
    if (slice->merit[i] == -INFINITY)
      oom++;
    else if (best == count || slice->merit[i] > slice->merit[best])
      best = i;
  }
  GString *out = g_string_new(NULL);
  if (best == count) {
    g_string_append(out, "no point fits in GPU memory");
  } else {
    DdpSweepPoint point;
    ddp_sweep_grid_point(slice->grid, slice->first + best, &point);
    g_autofree char *where = describe_point(&point);
    double m = slice->merit[best];
    if (m < 0)
      g_string_append_printf(out, "cheapest %s at %.4g per 1000 samples", where, -m);
    else
      g_string_append_printf(out, "fastest %s at %.1f samples/s", where, m);
  }
  if (oom)
    g_string_append_printf(out, "; %" G_GUINT64_FORMAT " point%s out of memory (excluded)", oom, oom == 1 ? "" : "s");
  return g_string_free(out, FALSE);
}

/* Runs points [first, first + count) on @jobs threads; the rows in index order, or NULL with the
 * error of the first failing point (in grid order, so the same error whatever the timing). */
static char *
run_slice(Slice *slice, guint64 count, guint jobs, GError **error)
{
  slice->rows = g_new0(char *, count + 1);
  slice->errors = g_new0(GError *, count);
  slice->point_threads = jobs > 1 && count > 1 ? 1 : 0;
  slice->merit = g_new0(double, count);
  if (jobs <= 1 || count <= 1) {
    for (guint64 i = 0; i < count; i++)
      simulate_point(GSIZE_TO_POINTER(i + 1), slice);
  } else {
    GThreadPool *pool = g_thread_pool_new(simulate_point, slice, (gint)MIN((guint64)jobs, count), TRUE, NULL);
    for (guint64 i = 0; i < count; i++)
      g_thread_pool_push(pool, GSIZE_TO_POINTER(i + 1), NULL);
    g_thread_pool_free(pool, FALSE, TRUE);   /* waits for every point */
  }
  GString *text = g_string_new(NULL);
  for (guint64 i = 0; i < count; i++) {
    if (slice->errors[i] && !*error)
      *error = g_steal_pointer(&slice->errors[i]);
    g_clear_error(&slice->errors[i]);
    if (slice->rows[i])
      g_string_append(text, slice->rows[i]);
  }
  g_strfreev(slice->rows);
  g_free(slice->errors);
  slice->rows = NULL;
  if (*error) {
    g_string_free(text, TRUE);
    return NULL;
  }
  return g_string_free(text, FALSE);
}

/* The grid: --grid FILE first, then the list flags over it. */
static DdpSweepGrid *
build_grid(const SweepOptions *opts, GError **error)
{
  g_autoptr(DdpSweepGrid) grid = ddp_sweep_grid_new();
  if (opts->grid && !ddp_sweep_grid_load_file(grid, opts->grid, error))
    return NULL;
  const char *lists[DDP_SWEEP_N_AXES] = { opts->cli.model, opts->cli.cluster, opts->cli.gpus, opts->cli.bucket_cap_mb,
                                          opts->cli.seed };
  for (int a = 0; a < DDP_SWEEP_N_AXES; a++) {
    g_autofree char *flag = g_strdup_printf("--%s", ddp_sweep_axis_flag(a));
    if (lists[a] && !ddp_sweep_grid_set_axis(grid, a, lists[a], flag, error))
      return NULL;
  }
  return g_steal_pointer(&grid);
}

/* Bad input that a whole axis shares — an unknown model or cluster, a GPU count a cluster cannot
 * hold — is found here, before anything is simulated: every model × cluster once, then each GPU
 * count against each cluster.  Errors name the point. */
static gboolean
preflight(const DdpSweepGrid *grid, const DdpCliOptions *base, const char *scenario_path, GError **error)
{
  guint nm = ddp_sweep_grid_axis_len(grid, DDP_SWEEP_AXIS_MODEL), nc = ddp_sweep_grid_axis_len(grid, DDP_SWEEP_AXIS_CLUSTER);
  guint ng = ddp_sweep_grid_axis_len(grid, DDP_SWEEP_AXIS_GPUS);
  for (guint m = 0; m < nm; m++)
    for (guint c = 0; c < nc; c++)
      for (guint g = 0; g < ng; g++) {
        DdpSweepPoint point = { 0 };
        point.values[DDP_SWEEP_AXIS_MODEL] = ddp_sweep_grid_axis_value(grid, DDP_SWEEP_AXIS_MODEL, m);
        point.values[DDP_SWEEP_AXIS_CLUSTER] = ddp_sweep_grid_axis_value(grid, DDP_SWEEP_AXIS_CLUSTER, c);
        point.values[DDP_SWEEP_AXIS_GPUS] = ddp_sweep_grid_axis_value(grid, DDP_SWEEP_AXIS_GPUS, g);
        /* the index of the first point with these coordinates, for the message */
        point.index = ((guint64)(m * nc + c) * ng + g) * ddp_sweep_grid_axis_len(grid, DDP_SWEEP_AXIS_BUCKET_CAP) *
                      ddp_sweep_grid_axis_len(grid, DDP_SWEEP_AXIS_SEED);
        DdpCliOptions cli;
        ddp_sweep_point_apply(&point, base, &cli);
        g_autoptr(DdpScenario) scenario = ddp_scenario_load(scenario_path, &cli, TRUE, error);
        if (!scenario) {
          g_autofree char *where = describe_point(&point);
          g_prefix_error(error, "%s: ", where);
          return FALSE;
        }
      }
  return TRUE;
}

static gboolean
parse_jobs(const char *text, guint *jobs, GError **error)
{
  guint64 v = 1;
  if (!ddp_flag_count("jobs", text, &DDP_RANGE_JOBS, &v, error))
    return FALSE;
  *jobs = v == 0 ? (guint)MAX(1, g_get_num_processors()) : (guint)v;
  return TRUE;
}

/* Started by an MPI launcher with more than one rank (Open MPI, PMIx, MPICH's Hydra)? */
static guint
launcher_size(void)
{
  const char *vars[] = { "OMPI_COMM_WORLD_SIZE", "PMIX_SIZE", "PMI_SIZE" };
  for (gsize i = 0; i < G_N_ELEMENTS(vars); i++) {
    guint64 n = 0;
    const char *v = g_getenv(vars[i]);
    if (v && g_ascii_string_to_unsigned(v, 10, 1, G_MAXINT32, &n, NULL))
      return (guint)n;
  }
  return 1;
}

/* Everything up to the rows of this rank's slice.  *text: the rows (or the error). */
static gboolean
compute(SweepOptions *opts, int argc, char **argv, guint rank, guint size, char **rows, char **best, GError **error)
{
  GOptionEntry own[] = {
    { "grid", 0, 0, G_OPTION_ARG_FILENAME, &opts->grid, "Read the axes from a grid file ([sweep] group)", "FILE" },
    { "jobs", 'j', 0, G_OPTION_ARG_STRING, &opts->jobs, "Simulate N points at once (default 1; 0: one per core)", "N" },
    { "json", 0, 0, G_OPTION_ARG_NONE, &opts->json, "JSON lines: one object per point (docs/json.md)", NULL },
    { "csv", 0, 0, G_OPTION_ARG_NONE, &opts->csv, "CSV with a header line (the default)", NULL },
    { "output", 'o', 0, G_OPTION_ARG_FILENAME, &opts->output, "Write the rows into FILE (atomically) instead of stdout", "FILE" },
    { NULL, 0, 0, 0, NULL, NULL, NULL },
  };
  const char *scenario_path = NULL;
  guint jobs = 1;
  guint64 n_points = 0;
  g_autofree GOptionEntry *entries = ddp_cost_option_entries(own, &opts->cost);
  if (!ddp_cmd_parse("sweep", "Simulate every point of a scenario grid, one row per point.", sweep_description, entries,
                     &opts->cli, &argc, &argv, &scenario_path, error) ||
      !parse_jobs(opts->jobs, &jobs, error))
    return FALSE;
  /* only rank 0 writes: on other nodes the directory need not exist */
  if (rank == 0 && opts->output && !ddp_file_check_output("-o", opts->output, error))
    return FALSE;
  if (opts->json && opts->csv) {
    g_set_error(error, DDP_CMD_ERROR, 0, "--json and --csv: choose one");
    return FALSE;
  }
  g_autoptr(DdpSweepGrid) grid = build_grid(opts, error);
  /* the list flags now live in the grid: the points' base has them unset (borrowed copy) */
  DdpCliOptions base = opts->cli;
  base.model = base.cluster = base.gpus = base.bucket_cap_mb = base.seed = NULL;
  if (!grid || !ddp_sweep_grid_count(grid, &n_points, error)) {
    /* a bad list or too large a grid is bad input (exit 2), like any flag the verbs reject */
    if ((*error)->domain == DDP_SWEEP_ERROR)
      (*error)->domain = DDP_CMD_ERROR;
    return FALSE;
  }
  if (!preflight(grid, &base, scenario_path, error))
    return FALSE;
  guint64 first, count;
  ddp_sweep_slice(n_points, rank, size, &first, &count);
  Slice slice = { grid, &base, scenario_path, opts->json ? DDP_SWEEP_JSONL : DDP_SWEEP_CSV, first,
                   with_cost(opts) ? &opts->cost : NULL, NULL, NULL, 0,
                   /* under MPI only rank 0 draws the line (its slice stands for the whole run) */
                   ddp_progress_new("sweep", count, "points", rank == 0 ? STDERR_FILENO : -1), NULL };
  *rows = run_slice(&slice, count, jobs, error);
  ddp_progress_free(slice.progress);
  if (*rows)
    *best = best_text(&slice, count);
  g_free(slice.merit);
  return *rows != NULL;
}

static gboolean
write_output(const SweepOptions *opts, const char *body, GError **error)
{
  g_autofree char *header = ddp_sweep_header_cost(opts->json ? DDP_SWEEP_JSONL : DDP_SWEEP_CSV, with_cost(opts));
  g_autofree char *text = g_strconcat(header, body, NULL);
  if (opts->output)
    return ddp_file_write("-o", opts->output, text, strlen(text), error);   /* fileio.h: atomic, checked */
  return ddp_cmd_print(text, error);
}

static int
run(int argc, char **argv, SweepOptions *opts)
{
  guint rank = 0, size = 1;
  gboolean mpi = launcher_size() > 1;
#ifdef DDP_HAVE_MPI
  if (mpi)
    ddp_mpi_world_start(&rank, &size);
#else
  if (mpi) {
    g_autoptr(GError) error = g_error_new(DDP_CMD_ERROR, 0, "started by mpirun with %u ranks, but this ddpsim was "
                                          "built without MPI (./configure --with-mpi)", launcher_size());
    return ddp_cmd_fail("sweep", error);
  }
#endif
  g_autoptr(GError) error = NULL;
  g_autofree char *rows = NULL, *best = NULL;
  gboolean ok = compute(opts, argc, argv, rank, size, &rows, &best, &error);
#ifdef DDP_HAVE_MPI
  if (mpi) {
    /* A failing rank sends its error instead of rows, as "DOMAIN\nCODE\nMESSAGE", so that rank 0
     * prints exactly one line — the first failure in rank order, which is grid order — and picks
     * the exit status from the error's domain as any verb does. */
    g_autofree char *failure = ok ? NULL : g_strdup_printf("%s\n%d\n%s", g_quark_to_string(error->domain), error->code,
                                                          error->message);
    g_autofree int *oks = NULL;
    g_auto(GStrv) texts = ddp_mpi_world_gather(ok ? rows : failure, ok, &oks);
    int status = DDP_EXIT_OK;
    if (rank == 0) {
      GString *all = g_string_new(NULL);
      for (guint r = 0; r < size && status == DDP_EXIT_OK; r++) {
        if (oks[r]) {
          g_string_append(all, texts[r]);
          continue;
        }
        g_auto(GStrv) parts = g_strsplit(texts[r], "\n", 3);
        g_autoptr(GError) remote = g_error_new_literal(g_quark_from_string(parts[0]), atoi(parts[1]), parts[2]);
        status = ddp_cmd_fail("sweep", remote);
      }
      g_autoptr(GError) write_error = NULL;
      if (status == DDP_EXIT_OK && !write_output(opts, all->str, &write_error))
        status = ddp_cmd_fail("sweep", write_error);
      else if (status == DDP_EXIT_OK && opts->output)
        fprintf(stderr, "ddpsim sweep: wrote %s\n", opts->output);   /* the best point is each rank's own */
      g_string_free(all, TRUE);
    }
    status = ddp_mpi_world_broadcast_int(status);
    ddp_mpi_world_stop();
    return status;
  }
#endif
  if (!ok || !write_output(opts, rows, &error))
    return ddp_cmd_fail("sweep", error);
  if (opts->output)
    fprintf(stderr, "ddpsim sweep: wrote %s; %s\n", opts->output, best);
  return DDP_EXIT_OK;
}

int
ddp_cmd_sweep(int argc, char **argv)
{
  SweepOptions options = { 0 };
  int status = run(argc, argv, &options);
  ddp_cli_options_clear(&options.cli);
  ddp_cost_flags_clear(&options.cost);
  g_free(options.grid);
  g_free(options.output);
  g_free(options.jobs);
  return status;
}
