/* main — `ddpsim-calibrate`: measures this machine (AllReduce sweeps over its GPUs, and across
 * nodes under MPI; backward kernels of a model's layers; device copies) and stores every batch in
 * a calibration database (src/calibdb.c) as soon as it is measured.  Issue 7; calibrate/README.md.
 *
 *   ddpsim-calibrate --db calib.db            measure with all local GPUs
 *   ddpsim-calibrate --db calib.db --list     past runs
 *   ddpsim-calibrate --db calib.db --resume   continue the newest interrupted run, same options
 *   mpirun -np 16 -N 8 ddpsim-calibrate …     one process per GPU over two nodes (built --with-mpi)
 *
 * Exit status: 0 done; 1 internal (CUDA, NCCL, SQLite) error — what was committed stays, resume
 * with --resume; 2 bad input (options, a foreign or damaged database, a resume on other hardware);
 * 3 no GPU visible.  Only this file prints and chooses exit codes. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#include "calibdb.h"
#include "calibrate.h"
#include "progress.h"

#include <locale.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifdef DDP_HAVE_MPI
#include <mpi.h>
#endif

#ifndef PACKAGE_VERSION
#define PACKAGE_VERSION "0"
#endif
#define PROGRAM "ddpsim-calibrate"

/* ---- processes (MPI or not) ---------------------------------------------------------------- */

typedef struct {
  gboolean mpi;               /* MPI_Init was called */
  int rank, size;             /* world */
  int local_rank, local_size; /* on this node */
  int nodes;
} Job;

static gboolean
is_root(const Job *job)
{
  return job->rank == 0;
}

#ifdef DDP_HAVE_MPI
/* Started by mpirun/srun?  Without a launcher MPI is not initialised at all: a plain run, --help or
 * --list must not depend on the MPI runtime (singleton init can hang or warn in containers). */
static gboolean
launched_by_mpi(void)
{
  static const char *const vars[] = { "OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK", "PMI_SIZE", "MV2_COMM_WORLD_SIZE" };
  for (gsize i = 0; i < G_N_ELEMENTS(vars); i++)
    if (g_getenv(vars[i]))
      return TRUE;
  return FALSE;
}
#endif

static void
job_init(Job *job, int *argc, char ***argv)
{
  memset(job, 0, sizeof *job);
  job->size = job->local_size = job->nodes = 1;
#ifdef DDP_HAVE_MPI
  if (!launched_by_mpi())
    return;
  MPI_Init(argc, argv);
  job->mpi = TRUE;
  MPI_Comm_rank(MPI_COMM_WORLD, &job->rank);
  MPI_Comm_size(MPI_COMM_WORLD, &job->size);
  MPI_Comm local;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, job->rank, MPI_INFO_NULL, &local);
  MPI_Comm_rank(local, &job->local_rank);
  MPI_Comm_size(local, &job->local_size);
  MPI_Comm_free(&local);
  int leader = job->local_rank == 0;
  MPI_Allreduce(&leader, &job->nodes, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
#else
  (void)argc;
  (void)argv;
#endif
}

static void
job_finish(const Job *job, int status)
{
#ifdef DDP_HAVE_MPI
  if (!job->mpi)
    return;
  if (status != 0 && job->size > 1)
    MPI_Abort(MPI_COMM_WORLD, status); /* a rank that stops leaves the others inside NCCL */
  MPI_Finalize();
#else
  (void)job;
  (void)status;
#endif
}

/* TRUE when @ok on every process. */
static gboolean
all_ok(const Job *job, gboolean ok)
{
#ifdef DDP_HAVE_MPI
  if (job->size > 1) {
    int mine = ok ? 1 : 0, all = 0;
    MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    return all != 0;
  }
#endif
  (void)job;
  return ok;
}

/* The largest of @value over processes. */
static int
max_int(const Job *job, int value)
{
#ifdef DDP_HAVE_MPI
  if (job->size > 1) {
    int all = 0;
    MPI_Allreduce(&value, &all, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    return all;
  }
#endif
  (void)job;
  return value;
}

/* The smallest of @value over processes. */
static gint64
min_gint64(const Job *job, gint64 value)
{
#ifdef DDP_HAVE_MPI
  if (job->size > 1) {
    long long mine = value, all = 0;
    MPI_Allreduce(&mine, &all, 1, MPI_LONG_LONG, MPI_MIN, MPI_COMM_WORLD);
    return all;
  }
#endif
  (void)job;
  return value;
}

/* Rank 0's string to everyone (NULL travels as NULL). */
static void
broadcast_string(const Job *job, char **s)
{
#ifdef DDP_HAVE_MPI
  if (job->size > 1) {
    int len = is_root(job) ? (*s ? (int)strlen(*s) + 1 : 0) : 0;
    MPI_Bcast(&len, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (!is_root(job)) {
      g_free(*s);
      *s = len ? g_malloc(len) : NULL;
    }
    if (len)
      MPI_Bcast(*s, len, MPI_CHAR, 0, MPI_COMM_WORLD);
  }
#endif
  (void)job;
  (void)s;
}

static void
broadcast_bytes(const Job *job, void *data, int n)
{
#ifdef DDP_HAVE_MPI
  if (job->size > 1)
    MPI_Bcast(data, n, MPI_BYTE, 0, MPI_COMM_WORLD);
#endif
  (void)job;
  (void)data;
  (void)n;
}

/* The job's timing of one AllReduce: the slowest process's mean and extremes. */
static void
reduce_timing(const Job *job, DdpCalTiming *t)
{
#ifdef DDP_HAVE_MPI
  if (job->size > 1) {
    double mine[2] = { t->mean_us, t->max_us }, all[2];
    MPI_Allreduce(mine, all, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    double lo = t->min_us;
    MPI_Allreduce(&lo, &t->min_us, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    t->mean_us = all[0];
    t->max_us = all[1];
  }
#endif
  (void)job;
  (void)t;
}

/* ---- options ------------------------------------------------------------------------------- */

typedef struct {
  char *db;
  gboolean list, dry_run, info;
  gboolean resume;
  gint64 resume_id;           /* 0: the newest interrupted run */
} MainOptions;

static MainOptions *resume_target; /* the callback below has no user data in the main group */

static gboolean
resume_option(const char *name, const char *value, gpointer data, GError **error)
{
  (void)name;
  (void)data;
  resume_target->resume = TRUE;
  if (value && !g_ascii_string_to_signed(value, 10, 1, G_MAXINT64, &resume_target->resume_id, NULL)) {
    g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE, "--resume: \"%s\" is not a run id", value);
    return FALSE;
  }
  return TRUE;
}

static int
fail(const Job *job, const GError *error)
{
  if (is_root(job) || error->domain != DDP_CALIBDB_ERROR)
    fprintf(stderr, PROGRAM ": %s\n", error->message);
  if (error->domain == DDP_CAL_ERROR && error->code == DDP_CAL_ERROR_NO_DEVICE)
    return DDP_CAL_EXIT_NO_GPU;
  if (error->domain == G_OPTION_ERROR || ddp_calibdb_error_is_input(error) ||
      (error->domain == DDP_CAL_ERROR && error->code == DDP_CAL_ERROR_INPUT) ||
      error->domain == DDP_KEYFILE_ERROR || error->domain == DDP_MODEL_ERROR)
    return DDP_CAL_EXIT_INPUT;
  return DDP_CAL_EXIT_INTERNAL;
}

/* ---- --list and --info --------------------------------------------------------------------- */

static int
list_runs(const Job *job, const char *path)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(DdpCalibDb) db = ddp_calibdb_open(path, DDP_CALIBDB_READ, &error);
  if (!db)
    return fail(job, error);
  g_autoptr(GPtrArray) runs = ddp_calibdb_runs(db, &error);
  if (!runs)
    return fail(job, error);
  if (runs->len == 0) {
    printf("%s: no calibration runs\n", path);
    return DDP_CAL_EXIT_OK;
  }
  printf("%4s  %-20s  %-11s  %-16s  %-28s %5s %5s  %-7s %-6s %-8s %8s %10s %8s\n", "run", "started", "status", "host",
         "GPU", "GPUs", "nodes", "driver", "CUDA", "NCCL", "batches", "allreduce", "kernels");
  for (guint i = 0; i < runs->len; i++) {
    const DdpCalibRun *r = g_ptr_array_index(runs, i);
    printf("%4" G_GINT64_FORMAT "  %-20s  %-11s  %-16s  %-28s %5d %5d  %-7s %-6s %-8s %8" G_GINT64_FORMAT " %10" G_GINT64_FORMAT
           " %8" G_GINT64_FORMAT "\n",
           r->id, r->started, r->finished ? "finished" : "unfinished", r->host, r->gpu_name, r->gpus_per_node,
           r->nodes, r->driver_version, r->cuda_version, r->nccl_version, r->n_batches, r->n_allreduce_points,
           r->n_kernel_points);
    if (r->note && *r->note) {
      g_auto(GStrv) lines = g_strsplit(r->note, "\n", -1);
      for (guint l = 0; lines[l]; l++)
        printf("      note: %s\n", lines[l]);
    }
  }
  printf("(an unfinished run is one still measuring or one that was interrupted: --resume continues it)\n");
  return DDP_CAL_EXIT_OK;
}

static int
print_info(const Job *job)
{
  g_autoptr(GError) error = NULL;
  int count = 0;
  DdpCalVersions v;
  if (!ddp_cal_device_count(&count, &error) || !ddp_cal_versions(&v, &error))
    return fail(job, error);
  printf("driver %s, CUDA runtime %s, NCCL %s, cuBLAS %s, cuDNN %s\n", v.driver, v.runtime, v.nccl, v.cublas, v.cudnn);
  for (int d = 0; d < count; d++) {
    DdpCalDevice dev;
    if (!ddp_cal_device_info(d, &dev, &error))
      return fail(job, error);
    printf("GPU %d: %s, sm_%d, %d SMs, %.1f GB, PCI %s\n", d, dev.name, dev.sm_arch, dev.sm_count,
           dev.memory_bytes / 1e9, dev.pci_bus_id);
  }
  return DDP_CAL_EXIT_OK;
}

static void
print_plan(GPtrArray *plan, GPtrArray *notes)
{
  for (guint i = 0; i < plan->len; i++) {
    const DdpCalBatch *b = g_ptr_array_index(plan, i);
    printf("%s\n", b->name);
    if (b->type == DDP_CAL_BATCH_KERNEL)
      for (guint c = 0; c < b->cases->len; c++) {
        const DdpCalCase *k = &g_array_index(b->cases, DdpCalCase, c);
        printf("    %-9s %-10s %-44s %14.6g FLOP %14.6g B\n", ddp_cal_probe(k->probe)->name, ddp_cal_op_name(k->op),
               k->shape, k->flops, k->bytes);
      }
  }
  for (guint i = 0; i < notes->len; i++)
    printf("note: %s\n", (const char *)g_ptr_array_index(notes, i));
  printf("%u batches\n", plan->len);
}

G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC(DdpCalOptions, ddp_cal_options_clear)

/* ---- measuring ----------------------------------------------------------------------------- */

typedef struct {
  const Job *job;
  DdpCalibDb *db;          /* rank 0 only */
  gint64 run_id;
  const DdpCalOptions *o;
  int n_devices;           /* GPUs this process drives */
  int *devices;
  int n_ranks, first_rank;
  guint measured, skipped, already;
} Measure;

/* Commits @b with no points and a @note saying why (so --resume does not retry it). */
static gboolean
commit_note(Measure *m, const DdpCalBatch *b, const char *note, GError **error)
{
  m->skipped++;
  if (!is_root(m->job))
    return TRUE;
  printf("  %s: %s\n", b->name, note);
  return ddp_calibdb_batch_begin(m->db, m->run_id, b->name, error) && ddp_calibdb_batch_commit(m->db, note, error);
}

static void
set_variant_env(const char *algorithm, const char *protocol)
{
  if (strcmp(algorithm, "auto") == 0) {
    g_unsetenv("NCCL_ALGO");
    g_unsetenv("NCCL_PROTO");
  } else {
    g_setenv("NCCL_ALGO", algorithm, TRUE);
    g_setenv("NCCL_PROTO", protocol, TRUE);
  }
}

static gboolean
same_group(const DdpCalBatch *a, const DdpCalBatch *b)
{
  return b->type == DDP_CAL_BATCH_ALLREDUCE && strcmp(a->algorithm, b->algorithm) == 0 &&
         strcmp(a->protocol, b->protocol) == 0 && a->ranks == b->ranks;
}

static gboolean
measure_point(Measure *m, DdpCalComm *comm, const DdpCalBatch *b, gboolean in_place, DdpCalibAllreducePoint *p,
              GError **error)
{
  DdpCalTiming t = { 0 };
  gboolean ok = ddp_cal_comm_allreduce(comm, b->bytes, in_place, &m->o->timing, &t, error);
  /* every process must agree before the next collective step */
  int code = ok ? 0 : (error && *error && (*error)->code == DDP_CAL_ERROR_UNSUPPORTED) ? 1 : 2;
  int worst = max_int(m->job, code);
  if (worst != 0) {
    if (ok) /* another process failed */
      g_set_error(error, DDP_CAL_ERROR, worst == 1 ? DDP_CAL_ERROR_UNSUPPORTED : DDP_CAL_ERROR_NCCL,
                  "another process failed on %s", b->name);
    else if (worst == 2 && code == 1)
      (*error)->code = DDP_CAL_ERROR_NCCL;
    return FALSE;
  }
  reduce_timing(m->job, &t);
  p->algorithm = b->algorithm;
  p->protocol = b->protocol;
  p->ranks = b->ranks;
  p->nodes = m->job->nodes;
  p->bytes = b->bytes;
  p->dtype = "float";
  p->in_place = in_place;
  p->iterations = t.iterations;
  p->time_us = t.mean_us;
  p->min_us = t.min_us;
  p->max_us = t.max_us;
  p->algbw_GBs = (double)b->bytes / (1000.0 * t.mean_us);
  /* nccl-tests: busbw = algbw · 2(n−1)/n (docs/model.md §3) */
  p->busbw_GBs = b->ranks > 1 ? p->algbw_GBs * 2.0 * (b->ranks - 1) / b->ranks : 0;
  return TRUE;
}

/* The batches plan[*index …] of one (variant, GPU count): one set of communicators for all. */
static gboolean
measure_allreduce_group(Measure *m, GPtrArray *plan, guint *index, const guint8 *done, GError **error)
{
  const DdpCalBatch *first = g_ptr_array_index(plan, *index);
  guint end = *index;
  gint64 largest = 0;
  gboolean any = FALSE;
  while (end < plan->len && same_group(first, g_ptr_array_index(plan, end))) {
    const DdpCalBatch *b = g_ptr_array_index(plan, end);
    if (!done[end]) {
      any = TRUE;
      largest = MAX(largest, b->bytes);
    } else {
      m->already++;
    }
    end++;
  }
  guint start = *index;
  *index = end;
  if (!any)
    return TRUE;
  /* The devices of this group: the first `local_devices` (single process) or ours (MPI). */
  int n_local = first->local_devices;
  /* Room on the smallest GPU, keeping 1 GiB for NCCL's own buffers and the CUDA context. */
  gint64 room = G_MAXINT64;
  for (int d = 0; d < n_local; d++) {
    gint64 free_bytes = 0;
    if (!ddp_cal_device_free_memory(m->devices[d], &free_bytes, error))
      return FALSE;
    room = MIN(room, free_bytes - ((gint64)1 << 30));
  }
  gint64 fits = min_gint64(m->job, m->o->out_of_place ? room / 2 : room);
  gint64 capacity = MIN(largest, fits);
  set_variant_env(first->algorithm, first->protocol);
  if (is_root(m->job))
    printf("# AllReduce %s/%s over %d GPUs on %d node%s (float, sum%s)\n#%14s %12s %11s %11s %11s %7s\n",
           first->algorithm, first->protocol, first->ranks, m->job->nodes, m->job->nodes > 1 ? "s" : "",
           m->o->out_of_place ? ", in place and out of place" : ", in place", "size", "count", "time_us", "algbw_GBs",
           "busbw_GBs", "iters");
  unsigned char id[DDP_CAL_NCCL_ID_BYTES] = { 0 };
  gboolean multi = m->n_ranks > m->n_devices;
  g_autoptr(GError) local = NULL;
  gboolean ok = TRUE;
  if (multi) {
    if (is_root(m->job))
      ok = ddp_cal_nccl_unique_id(id, &local);
    if (!all_ok(m->job, ok))
      return local ? (g_propagate_error(error, g_steal_pointer(&local)), FALSE)
                   : (g_set_error(error, DDP_CAL_ERROR, DDP_CAL_ERROR_NCCL, "rank 0 could not make an NCCL id"), FALSE);
    broadcast_bytes(m->job, id, sizeof id);
  }
  DdpCalComm *comm = capacity >= 4 ? ddp_cal_comm_new(n_local, m->devices, multi ? id : NULL, multi ? m->n_ranks : n_local,
                                                      multi ? m->first_rank : 0, capacity, m->o->out_of_place, &local)
                                   : NULL;
  if (!all_ok(m->job, comm != NULL)) {
    ddp_cal_comm_free(comm);
    g_autofree char *note =
      capacity < 4 ? g_strdup("not measured: no device memory left for AllReduce buffers")
                   : g_strdup_printf("not measured: NCCL communicator for %s/%s: %s", first->algorithm, first->protocol,
                                     local ? local->message : "failed on another process");
    for (guint i = start; i < end; i++)
      if (!done[i] && !commit_note(m, g_ptr_array_index(plan, i), note, error))
        return FALSE;
    return TRUE;
  }
  g_autofree char *refused = NULL;
  for (guint i = start; i < end; i++) {
    const DdpCalBatch *b = g_ptr_array_index(plan, i);
    if (done[i])
      continue;
    if (refused) {
      if (!commit_note(m, b, refused, error))
        goto fatal;
      continue;
    }
    if (b->bytes > capacity) {
      g_autofree char *note = g_strdup_printf("not measured: %" G_GINT64_FORMAT " bytes do not fit in device memory",
                                              b->bytes);
      if (!commit_note(m, b, note, error))
        goto fatal;
      continue;
    }
    DdpCalibAllreducePoint points[2];
    int n_points = 0;
    gboolean point_ok = measure_point(m, comm, b, TRUE, &points[n_points++], &local);
    if (point_ok && m->o->out_of_place)
      point_ok = measure_point(m, comm, b, FALSE, &points[n_points++], &local);
    if (!point_ok) {
      if (local->domain == DDP_CAL_ERROR && local->code == DDP_CAL_ERROR_UNSUPPORTED) {
        refused = g_strdup_printf("not measured: NCCL refused %s/%s: %s", b->algorithm, b->protocol, local->message);
        g_clear_error(&local);
        if (!commit_note(m, b, refused, error))
          goto fatal;
        continue;
      }
      g_propagate_error(error, g_steal_pointer(&local));
      goto fatal;
    }
    m->measured++;
    if (!is_root(m->job))
      continue;
    printf("%15" G_GINT64_FORMAT " %12" G_GINT64_FORMAT " %11.2f %11.2f %11.2f %7d\n", b->bytes, b->bytes / 4,
           points[0].time_us, points[0].algbw_GBs, points[0].busbw_GBs, points[0].iterations);
    fflush(stdout);
    if (!ddp_calibdb_batch_begin(m->db, m->run_id, b->name, error))
      goto fatal;
    for (int p = 0; p < n_points; p++)
      if (!ddp_calibdb_batch_add_allreduce(m->db, &points[p], error)) {
        ddp_calibdb_batch_rollback(m->db);
        goto fatal;
      }
    if (!ddp_calibdb_batch_commit(m->db, NULL, error))
      goto fatal;
  }
  ddp_cal_comm_free(comm);
  return TRUE;
fatal:
  ddp_cal_comm_free(comm);
  return FALSE;
}

/* One kernel batch: every case of it, then one transaction — or a note when a case could not run. */
static gboolean
measure_kernel_batch(Measure *m, DdpCalKernels *k, const DdpCalBatch *b, GError **error)
{
  g_autoptr(GArray) points = g_array_new(FALSE, TRUE, sizeof(DdpCalibKernelPoint));
  g_autoptr(GPtrArray) algos = g_ptr_array_new_with_free_func(g_free);
  for (guint c = 0; c < b->cases->len; c++) {
    const DdpCalCase *kc = &g_array_index(b->cases, DdpCalCase, c);
    DdpCalTiming t = { 0 };
    char *algo = NULL;
    g_autoptr(GError) local = NULL;
    if (!ddp_cal_probe(kc->probe)->run(k, kc, &m->o->timing, &t, &algo, &local)) {
      g_free(algo);
      if (local->domain == DDP_CAL_ERROR &&
          (local->code == DDP_CAL_ERROR_UNSUPPORTED || local->code == DDP_CAL_ERROR_OUT_OF_MEMORY)) {
        g_autofree char *note = g_strdup_printf("not measured: %s %s (%s): %s", ddp_cal_probe(kc->probe)->name,
                                                ddp_cal_op_name(kc->op), kc->shape, local->message);
        return commit_note(m, b, note, error);
      }
      g_propagate_error(error, g_steal_pointer(&local));
      return FALSE;
    }
    g_ptr_array_add(algos, algo);
    DdpCalibKernelPoint p = { 0 };
    p.probe = (char *)ddp_cal_probe(kc->probe)->name;
    p.layer_kind = b->layer_kind;
    p.op = (char *)ddp_cal_op_name(kc->op);
    p.precision = b->precision;
    p.signature = b->signature;
    p.layer = b->layer;
    p.batch_size = b->batch;
    p.shape = (char *)kc->shape;
    p.algo = algo;
    p.flops = kc->flops;
    p.bytes = kc->bytes;
    p.iterations = t.iterations;
    p.time_us = t.mean_us;
    p.min_us = t.min_us;
    p.max_us = t.max_us;
    p.tflops = kc->flops / (t.mean_us * 1e6);
    p.GBs = kc->bytes / (t.mean_us * 1e3);
    g_array_append_val(points, p);
    printf("  %-40.40s %-9s %-10s %-10s %10.2f us %9.1f TFLOP/s %9.1f GB/s\n", b->layer, b->precision,
           ddp_cal_op_name(kc->op), ddp_cal_probe(kc->probe)->name, p.time_us, p.tflops, p.GBs);
  }
  fflush(stdout);
  if (!ddp_calibdb_batch_begin(m->db, m->run_id, b->name, error))
    return FALSE;
  for (guint i = 0; i < points->len; i++)
    if (!ddp_calibdb_batch_add_kernel(m->db, &g_array_index(points, DdpCalibKernelPoint, i), error)) {
      ddp_calibdb_batch_rollback(m->db);
      return FALSE;
    }
  if (!ddp_calibdb_batch_commit(m->db, NULL, error))
    return FALSE;
  m->measured++;
  return TRUE;
}

static gboolean
measure(Measure *m, GPtrArray *plan, const guint8 *done, GError **error)
{
  /* A progress line (count, rate, time left) on rank 0's terminal, while stdout — where each
   * measured batch prints its row — goes to a file or a pipe; when stdout is the terminal too,
   * those rows are the progress, and a line redrawn under them would only garble them. */
  g_autoptr(DdpProgress) progress =
    ddp_progress_new("calibrate", plan->len, "batches", is_root(m->job) && !isatty(STDOUT_FILENO) ? STDERR_FILENO : -1);
  guint i = 0;
  while (i < plan->len) {
    const DdpCalBatch *b = g_ptr_array_index(plan, i);
    if (b->type == DDP_CAL_BATCH_ALLREDUCE) {
      guint before = i;
      if (!measure_allreduce_group(m, plan, &i, done, error))
        return FALSE;
      for (; before < i; before++)
        ddp_progress_step(progress, b->name);
      continue;
    }
    break;
  }
  /* Kernels and copies: one GPU of rank 0 measures them; the other processes wait at the end. */
  gboolean ok = TRUE;
  if (is_root(m->job) && i < plan->len) {
    printf("# kernels on GPU %d\n", m->devices[0]);
    DdpCalKernels *k = ddp_cal_kernels_new(m->devices[0], error);
    ok = k != NULL;
    for (; ok && i < plan->len; i++) {
      const DdpCalBatch *b = g_ptr_array_index(plan, i);
      ddp_progress_step(progress, b->name);
      if (done[i]) {
        m->already++;
        continue;
      }
      ok = measure_kernel_batch(m, k, b, error);
    }
    ddp_cal_kernels_free(k);
  }
  gboolean everyone = all_ok(m->job, ok);
  if (!everyone && ok)
    g_set_error(error, DDP_CAL_ERROR, DDP_CAL_ERROR_MPI, "rank 0 failed measuring kernels");
  return everyone;
}

/* ---- the run ------------------------------------------------------------------------------- */

/* Which devices this process drives, and its place in the job. */
static gboolean
choose_devices(const Job *job, const DdpCalOptions *o, int visible, int **devices, int *n_devices, int *n_ranks,
               int *first_rank, GError **error)
{
  int n = o->devices > 0 ? o->devices : visible;
  if (n > visible) {
    g_set_error(error, DDP_CAL_ERROR, DDP_CAL_ERROR_INPUT, "--devices: %d asked, %d visible", o->devices, visible);
    return FALSE;
  }
  int first_device = 0;
  if (job->size > 1 && job->local_size > 1) {
    /* several processes per node: one GPU each, by node-local rank (mpirun -N GPUS) */
    if (job->local_rank >= visible) {
      g_set_error(error, DDP_CAL_ERROR, DDP_CAL_ERROR_INPUT, "%d processes on this node but %d GPUs visible",
                  job->local_size, visible);
      return FALSE;
    }
    first_device = job->local_rank;
    n = 1;
  }
  *devices = g_new(int, n);
  for (int d = 0; d < n; d++)
    (*devices)[d] = first_device + d;
  *n_devices = n;
  *n_ranks = n;
  *first_rank = 0;
#ifdef DDP_HAVE_MPI
  if (job->size > 1) {
    MPI_Allreduce(&n, n_ranks, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Exscan(&n, first_rank, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (job->rank == 0)
      *first_rank = 0;
  }
#endif
  return TRUE;
}

/* Rank 0, --resume: the interrupted run (@mo->resume_id, or the newest unfinished one); its stored
 * options replace @o, so that it continues with exactly its own plan.  Returns: (transfer full). */
static DdpCalibRun *
resume_run(DdpCalibDb *db, const MainOptions *mo, DdpCalOptions *o, GError **error)
{
  gint64 id = mo->resume_id ? mo->resume_id : ddp_calibdb_latest_run(db, TRUE, FALSE, error);
  if (!id)
    return NULL;
  g_autoptr(DdpCalibRun) run = ddp_calibdb_run_get(db, id, error);
  if (!run)
    return NULL;
  if (run->finished) {
    g_set_error(error, DDP_CAL_ERROR, DDP_CAL_ERROR_INPUT, "run %" G_GINT64_FORMAT " finished on %s: nothing to resume",
                id, run->finished);
    return NULL;
  }
  if (!ddp_cal_options_from_string(o, run->arguments, error))
    return NULL;
  printf("resuming run %" G_GINT64_FORMAT " (%" G_GINT64_FORMAT " batches committed) with its own options "
         "(measuring options on this command line are ignored): %s\n", id, run->n_batches, run->arguments);
  return g_steal_pointer(&run);
}

/* Rank 0, --resume: the hardware must be the run's, or its points would mix two machines. */
static gboolean
check_resume(const DdpCalibRun *run, const DdpCalDevice *dev, int n_ranks, GError **error)
{
  const char *host = g_get_host_name();
  if (strcmp(run->gpu_name, dev->name) == 0 && strcmp(run->host, host) == 0 && run->ranks == n_ranks)
    return TRUE;
  g_set_error(error, DDP_CAL_ERROR, DDP_CAL_ERROR_INPUT,
              "run %" G_GINT64_FORMAT " was measured on %s with %d x %s; this is %s with %d x %s: start a new run",
              run->id, run->host, run->ranks, run->gpu_name, host, n_ranks, dev->name);
  return FALSE;
}

/* Rank 0: records a new run with its provenance; the plan's notes (what it leaves out) go into the
 * run's note.  Returns: the run id, or 0 with @error. */
static gint64
new_run(const Job *job, DdpCalibDb *db, const DdpCalOptions *o, const DdpCalDevice *dev, int n_devices, int n_ranks,
        GError **error)
{
  g_autoptr(GPtrArray) notes = g_ptr_array_new_with_free_func(g_free);
  g_autoptr(GPtrArray) plan = ddp_cal_plan(o, n_devices, n_ranks, job->nodes, notes, error);
  if (!plan)
    return 0;
  DdpCalVersions v;
  if (!ddp_cal_versions(&v, error))
    return 0;
  const char *host = g_get_host_name();
  g_autofree char *arguments = ddp_cal_options_to_string(o);
  g_autofree char *program = g_strdup_printf(PROGRAM " %s", PACKAGE_VERSION);
  g_autoptr(GString) note = g_string_new(NULL);
  for (guint i = 0; i < notes->len; i++)
    g_string_append_printf(note, "%s%s", i ? "\n" : "", (const char *)g_ptr_array_index(notes, i));
  DdpCalibRun run = { 0 };
  run.host = (char *)host;
  run.gpu_name = (char *)dev->name;
  run.gpus_per_node = n_ranks / job->nodes;
  run.nodes = job->nodes;
  run.ranks = n_ranks;
  run.sm_arch = dev->sm_arch;
  run.sm_count = dev->sm_count;
  run.gpu_memory_bytes = dev->memory_bytes;
  run.driver_version = v.driver;
  run.cuda_version = v.runtime;
  run.nccl_version = v.nccl;
  run.cublas_version = v.cublas;
  run.cudnn_version = v.cudnn;
  run.program = program;
  run.arguments = arguments;
  run.note = note->str;
  gint64 id = ddp_calibdb_run_begin(db, &run, error);
  if (id)
    printf("run %" G_GINT64_FORMAT ": %s, %d x %s on %d node%s; driver %s, CUDA %s, NCCL %s, cuBLAS %s, cuDNN %s\n", id,
           host, n_ranks, dev->name, job->nodes, job->nodes > 1 ? "s" : "", v.driver, v.runtime, v.nccl, v.cublas,
           v.cudnn);
  return id;
}

#define CHECK_ALL(ok)                                                                              \
  do {                                                                                             \
    if (!all_ok(job, (ok)))                                                                        \
      return error ? fail(job, error) : DDP_CAL_EXIT_INTERNAL;                                     \
  } while (0)

/* Measures: the database and run (rank 0), the options every process uses (a resumed run's
 * own), the devices, the plan, then every batch not yet committed. */
static int
calibrate(const Job *job, const MainOptions *mo, DdpCalOptions *o)
{
  g_autoptr(GError) error = NULL;
  /* A machine without GPUs stops here, before any file is touched. */
  int visible = 0;
  CHECK_ALL(ddp_cal_device_count(&visible, &error));

  g_autoptr(DdpCalibDb) db = NULL;
  g_autoptr(DdpCalibRun) resumed = NULL;
  if (is_root(job)) {
    db = ddp_calibdb_open(mo->db, DDP_CALIBDB_WRITE, &error);
    if (db && !ddp_calibdb_lock_run(db, &error))   /* one run at a time: two --resume cannot collide */
      g_clear_pointer(&db, ddp_calibdb_close);
    if (db && mo->resume)
      resumed = resume_run(db, mo, o, &error);
  }
  CHECK_ALL(!is_root(job) || (db && (!mo->resume || resumed)));
  g_autofree char *arguments = is_root(job) ? ddp_cal_options_to_string(o) : NULL;
  broadcast_string(job, &arguments);
  CHECK_ALL(is_root(job) || ddp_cal_options_from_string(o, arguments, &error));

  int n_devices = 0, n_ranks = 0, first_rank = 0;
  g_autofree int *devices = NULL;
  DdpCalDevice dev;
  CHECK_ALL(choose_devices(job, o, visible, &devices, &n_devices, &n_ranks, &first_rank, &error) &&
            ddp_cal_device_info(devices[0], &dev, &error));

  gint64 run_id = 0;
  if (is_root(job))
    run_id = resumed ? (check_resume(resumed, &dev, n_ranks, &error) ? resumed->id : 0)
                     : new_run(job, db, o, &dev, n_devices, n_ranks, &error);
  CHECK_ALL(!is_root(job) || run_id != 0);

  g_autoptr(GPtrArray) notes = g_ptr_array_new_with_free_func(g_free);
  g_autoptr(GPtrArray) plan = ddp_cal_plan(o, n_devices, n_ranks, job->nodes, notes, &error);
  CHECK_ALL(plan != NULL);
  g_autofree guint8 *done = g_new0(guint8, plan->len);
  if (is_root(job) && resumed) {
    g_autoptr(GHashTable) committed = ddp_calibdb_batches(db, run_id, &error);
    for (guint i = 0; committed && i < plan->len; i++)
      done[i] = g_hash_table_contains(committed, ((DdpCalBatch *)g_ptr_array_index(plan, i))->name);
    CHECK_ALL(committed != NULL);
  } else {
    CHECK_ALL(TRUE);
  }
  broadcast_bytes(job, done, (int)plan->len);

  Measure m = { .job = job, .db = db, .run_id = run_id, .o = o, .n_devices = n_devices, .devices = devices,
                .n_ranks = n_ranks, .first_rank = first_rank };
  if (!measure(&m, plan, done, &error)) {
    int status = fail(job, error);
    if (is_root(job))
      fprintf(stderr, PROGRAM ": what was measured is committed in %s; continue with: " PROGRAM " --db %s --resume %"
              G_GINT64_FORMAT "\n", mo->db, mo->db, run_id);
    return status;
  }
  if (is_root(job)) {
    if (!ddp_calibdb_run_finish(db, run_id, &error))
      return fail(job, error);
    printf("run %" G_GINT64_FORMAT " finished: %u batches measured, %u not measurable (noted in the database), "
           "%u committed before.\nNext: ddpsim fit --db %s\n",
           run_id, m.measured, m.skipped, m.already, mo->db);
  }
  return DDP_CAL_EXIT_OK;
}

static int
run(const Job *job, int argc, char **argv)
{
  MainOptions mo = { 0 };
  g_auto(DdpCalOptions) o;
  ddp_cal_options_init(&o);
  resume_target = &mo;
  GOptionEntry entries[] = {
    { "db", 0, 0, G_OPTION_ARG_FILENAME, &mo.db, "calibration database (default calib.db)", "FILE" },
    { "list", 0, 0, G_OPTION_ARG_NONE, &mo.list, "list the runs stored in the database and exit", NULL },
    { "resume", 0, G_OPTION_FLAG_OPTIONAL_ARG, G_OPTION_ARG_CALLBACK, (gpointer)resume_option,
      "continue the newest interrupted run (or run ID) with its own options", "ID" },
    { "dry-run", 0, 0, G_OPTION_ARG_NONE, &mo.dry_run,
      "print the batches a run would measure and exit (no GPU needed; --devices defaults to 8)", NULL },
    { "info", 0, 0, G_OPTION_ARG_NONE, &mo.info, "print the GPUs and library versions and exit (3: no GPU)", NULL },
    { NULL, 0, 0, 0, NULL, NULL, NULL },
  };
  g_autoptr(GOptionContext) context = g_option_context_new(NULL);
  g_option_context_set_summary(context,
                               "Measures NCCL AllReduce and backward kernels on this machine's GPUs for ddpsim;\n"
                               "every batch is committed to the database as soon as it is measured.");
  g_option_context_set_description(context, "Then: ddpsim fit --db FILE; ddpsim predict --calibration FILE ...\n"
                                            "Exit status: 0 done, 1 internal error, 2 bad input, 3 no GPU visible.");
  g_option_context_add_main_entries(context, entries, NULL);
  g_option_context_add_group(context, ddp_cal_option_group(&o));
  g_autoptr(GError) error = NULL;
  int status;
  if (!g_option_context_parse(context, &argc, &argv, &error) || !ddp_cal_options_validate(&o, &error)) {
    status = fail(job, error);
  } else if (argc > 1) {
    g_set_error(&error, G_OPTION_ERROR, G_OPTION_ERROR_FAILED, "unexpected argument \"%s\" (see --help)", argv[1]);
    status = fail(job, error);
  } else {
    if (!mo.db)
      mo.db = g_strdup("calib.db");
    if (mo.list) {
      status = is_root(job) ? list_runs(job, mo.db) : DDP_CAL_EXIT_OK;
    } else if (mo.dry_run) {
      int n = o.devices > 0 ? o.devices : 8;
      g_autoptr(GPtrArray) notes = g_ptr_array_new_with_free_func(g_free);
      g_autoptr(GPtrArray) plan = is_root(job) ? ddp_cal_plan(&o, n, n, 1, notes, &error) : NULL;
      status = !is_root(job) ? DDP_CAL_EXIT_OK : plan ? (print_plan(plan, notes), DDP_CAL_EXIT_OK) : fail(job, error);
    } else if (mo.info) {
      status = is_root(job) ? print_info(job) : DDP_CAL_EXIT_OK;
    } else {
      status = calibrate(job, &mo, &o);
    }
  }
  g_free(mo.db);
  return status;
}

int
main(int argc, char **argv)
{
  /* as ddpsim's main: the user's locale for text (UTF-8 help and arguments), C for numbers */
  setlocale(LC_ALL, "");
  setlocale(LC_NUMERIC, "C");
  if (!g_get_charset(NULL))
    setlocale(LC_CTYPE, "C.UTF-8");
  Job job;
  job_init(&job, &argc, &argv);
  int status = run(&job, argc, argv);
  job_finish(&job, status);
  return status;
}
