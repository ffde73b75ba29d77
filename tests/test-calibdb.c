/* Tests for the calibration store: round trips on :memory: and on files, one transaction per
 * batch (rollback, duplicates), the file checks at open (missing, empty, not SQLite, foreign,
 * newer schema, damaged page, a directory), and durability against SIGKILL — a child process
 * writing batches is killed between batches, inside a batch, and at an arbitrary moment, and every
 * batch it reported committed must be there, complete, while nothing half-written is. */
#define _POSIX_C_SOURCE 200809L /* kill(), fork() under -std=c11 */
#include "calibdb.h"

#include <errno.h>
#include <glib/gstdio.h>
#include <math.h>
#include <signal.h>
#include <sqlite3.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#define POINTS_PER_BATCH 31 /* 8 B … 8 GiB ×2, the default sweep */

static DdpCalibRun
sample_run(void)
{
  DdpCalibRun run = { 0 };
  run.host = "node01";
  run.gpu_name = "NVIDIA H100 80GB HBM3";
  run.gpus_per_node = 8;
  run.nodes = 1;
  run.ranks = 8;
  run.sm_arch = 90;
  run.sm_count = 132;
  run.gpu_memory_bytes = 85000000000;
  run.driver_version = "13.0";
  run.cuda_version = "13.0";
  run.nccl_version = "2.28.9";
  run.cublas_version = "13.0.0";
  run.cudnn_version = "9.19.0";
  run.program = "ddpsim-calibrate test";
  run.arguments = "--db x.db";
  run.note = "";
  return run;
}

/* Writes one AllReduce batch of the sweep for (Ring, Simple): t = 20 µs + S / 100 GB/s. */
static gboolean
write_allreduce_batch(DdpCalibDb *db, gint64 run, const char *name, int n_points, GError **error)
{
  if (!ddp_calibdb_batch_begin(db, run, name, error))
    return FALSE;
  for (int i = 0; i < n_points; i++) {
    DdpCalibAllreducePoint p = { 0 };
    p.algorithm = "Ring";
    p.protocol = "Simple";
    p.ranks = 8;
    p.nodes = 1;
    p.bytes = (gint64)8 << i;
    p.dtype = "float";
    p.in_place = TRUE;
    p.iterations = 20;
    p.time_us = 20.0 + (double)p.bytes / 1e5;
    p.min_us = p.max_us = p.time_us;
    p.algbw_GBs = (double)p.bytes / (1000.0 * p.time_us);
    p.busbw_GBs = p.algbw_GBs * 2 * 7 / 8;
    if (!ddp_calibdb_batch_add_allreduce(db, &p, error)) {
      ddp_calibdb_batch_rollback(db);
      return FALSE;
    }
  }
  return ddp_calibdb_batch_commit(db, NULL, error);
}

static void
assert_check(DdpCalibDb *db)
{
  g_autoptr(GError) error = NULL;
  g_assert_true(ddp_calibdb_check(db, &error));
  g_assert_no_error(error);
}

static void
test_memory_roundtrip(void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(DdpCalibDb) db = ddp_calibdb_open(":memory:", DDP_CALIBDB_WRITE, &error);
  g_assert_no_error(error);
  assert_check(db);
  g_autoptr(GPtrArray) none = ddp_calibdb_runs(db, &error);
  g_assert_no_error(error);
  g_assert_cmpuint(none->len, ==, 0);
  g_assert_cmpint(ddp_calibdb_latest_run(db, FALSE, FALSE, &error), ==, 0);
  g_assert_error(error, DDP_CALIBDB_ERROR, DDP_CALIBDB_ERROR_NOT_FOUND);
  g_clear_error(&error);

  DdpCalibRun run = sample_run();
  gint64 id = ddp_calibdb_run_begin(db, &run, &error);
  g_assert_no_error(error);
  g_assert_cmpint(id, >, 0);
  g_assert_true(write_allreduce_batch(db, id, "allreduce/Ring/Simple/r8/n1", POINTS_PER_BATCH, &error));
  g_assert_no_error(error);

  g_assert_true(ddp_calibdb_batch_begin(db, id, "kernel/linear/fp16/b8/sig", &error));
  DdpCalibKernelPoint k = { 0 };
  k.probe = "gemm";
  k.layer_kind = "linear";
  k.op = "dX";
  k.precision = "fp16";
  k.signature = "linear:1024x1024,1024:8.58993e+09:0";
  k.layer = "blocks.0.mlp.fc1";
  k.batch_size = 8;
  k.shape = "M=4096 N=1024 K=1024 NN";
  k.algo = "";
  k.flops = 2.0 * 4096 * 1024 * 1024;
  k.bytes = 2.0 * (4096 * 1024 * 2 + 1024 * 1024);
  k.iterations = 100;
  k.time_us = 30;
  k.min_us = 29;
  k.max_us = 31;
  k.tflops = k.flops / 30e6;
  k.GBs = k.bytes / 30e3;
  g_assert_true(ddp_calibdb_batch_add_kernel(db, &k, &error));
  g_assert_true(ddp_calibdb_batch_commit(db, "a note", &error));
  g_assert_no_error(error);
  assert_check(db);

  g_assert_true(ddp_calibdb_run_add_note(db, id, "first", &error));
  g_assert_true(ddp_calibdb_run_add_note(db, id, "second", &error));
  g_assert_true(ddp_calibdb_run_finish(db, id, &error));
  g_assert_no_error(error);

  g_autoptr(DdpCalibRun) back = ddp_calibdb_run_get(db, id, &error);
  g_assert_no_error(error);
  g_assert_cmpstr(back->gpu_name, ==, run.gpu_name);
  g_assert_cmpstr(back->nccl_version, ==, "2.28.9");
  g_assert_cmpstr(back->note, ==, "first\nsecond");
  g_assert_nonnull(back->finished);
  g_assert_cmpint(back->ranks, ==, 8);
  g_assert_cmpint(back->gpu_memory_bytes, ==, 85000000000);
  g_assert_cmpint(back->n_batches, ==, 2);
  g_assert_cmpint(back->n_allreduce_points, ==, POINTS_PER_BATCH);
  g_assert_cmpint(back->n_kernel_points, ==, 1);

  g_autoptr(GArray) ar = ddp_calibdb_allreduce_points(db, &id, 1, &error);
  g_assert_no_error(error);
  g_assert_cmpuint(ar->len, ==, POINTS_PER_BATCH);
  const DdpCalibAllreducePoint *p0 = &g_array_index(ar, DdpCalibAllreducePoint, 0);
  g_assert_cmpstr(p0->algorithm, ==, "Ring");
  g_assert_cmpint(p0->bytes, ==, 8);
  g_assert_true(p0->in_place);
  g_assert_cmpfloat_with_epsilon(p0->time_us, 20.00008, 1e-9);
  g_assert_cmpint(g_array_index(ar, DdpCalibAllreducePoint, POINTS_PER_BATCH - 1).bytes, ==, (gint64)8 << 30);

  g_autoptr(GArray) kp = ddp_calibdb_kernel_points(db, NULL, 0, &error);
  g_assert_no_error(error);
  g_assert_cmpuint(kp->len, ==, 1);
  g_assert_cmpstr(g_array_index(kp, DdpCalibKernelPoint, 0).signature, ==, k.signature);
  g_assert_cmpstr(g_array_index(kp, DdpCalibKernelPoint, 0).batch, ==, "kernel/linear/fp16/b8/sig");

  gint64 other = 999;
  g_autoptr(GArray) empty = ddp_calibdb_kernel_points(db, &other, 1, &error);
  g_assert_cmpuint(empty->len, ==, 0);

  g_autoptr(GHashTable) batches = ddp_calibdb_batches(db, id, &error);
  g_assert_cmpuint(g_hash_table_size(batches), ==, 2);
  g_assert_true(g_hash_table_contains(batches, "allreduce/Ring/Simple/r8/n1"));

  g_assert_null(ddp_calibdb_run_get(db, 42, &error));
  g_assert_error(error, DDP_CALIBDB_ERROR, DDP_CALIBDB_ERROR_NOT_FOUND);
  g_clear_error(&error);
  g_assert_cmpint(ddp_calibdb_latest_run(db, TRUE, FALSE, &error), ==, 0); /* the run finished */
  g_assert_error(error, DDP_CALIBDB_ERROR, DDP_CALIBDB_ERROR_NOT_FOUND);
  g_clear_error(&error);
  g_assert_cmpint(ddp_calibdb_latest_run(db, FALSE, TRUE, &error), ==, id);
  assert_check(db);
}

static void
test_batch_rollback(void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(DdpCalibDb) db = ddp_calibdb_open(":memory:", DDP_CALIBDB_WRITE, &error);
  DdpCalibRun run = sample_run();
  gint64 id = ddp_calibdb_run_begin(db, &run, &error);
  g_assert_true(ddp_calibdb_batch_begin(db, id, "b0", &error));
  DdpCalibAllreducePoint p = { .algorithm = "Tree", .protocol = "LL", .ranks = 2, .nodes = 1, .bytes = 8,
                               .time_us = 10 };
  g_assert_true(ddp_calibdb_batch_add_allreduce(db, &p, &error));
  ddp_calibdb_batch_rollback(db);
  ddp_calibdb_batch_rollback(db); /* harmless twice */
  assert_check(db);
  g_autoptr(GArray) ar = ddp_calibdb_allreduce_points(db, NULL, 0, &error);
  g_assert_cmpuint(ar->len, ==, 0);
  g_autoptr(GHashTable) batches = ddp_calibdb_batches(db, id, &error);
  g_assert_cmpuint(g_hash_table_size(batches), ==, 0);
  /* the latest run "with data" ignores a run whose only batch was rolled back */
  g_assert_cmpint(ddp_calibdb_latest_run(db, FALSE, TRUE, &error), ==, 0);
  g_assert_error(error, DDP_CALIBDB_ERROR, DDP_CALIBDB_ERROR_NOT_FOUND);
}

static void
test_batch_duplicate(void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(DdpCalibDb) db = ddp_calibdb_open(":memory:", DDP_CALIBDB_WRITE, &error);
  DdpCalibRun run = sample_run();
  gint64 id = ddp_calibdb_run_begin(db, &run, &error);
  g_assert_true(write_allreduce_batch(db, id, "same", 3, &error));
  g_assert_false(write_allreduce_batch(db, id, "same", 3, &error));
  g_assert_error(error, DDP_CALIBDB_ERROR, DDP_CALIBDB_ERROR_SQL);
  g_assert_false(ddp_calibdb_error_is_input(error));
  g_clear_error(&error);
  assert_check(db);
  g_autoptr(GArray) ar = ddp_calibdb_allreduce_points(db, NULL, 0, &error);
  g_assert_cmpuint(ar->len, ==, 3);
  /* a batch of an unknown run breaks the foreign key: refused, nothing left open */
  g_assert_false(ddp_calibdb_batch_begin(db, 77, "orphan", &error));
  g_assert_error(error, DDP_CALIBDB_ERROR, DDP_CALIBDB_ERROR_SQL);
  assert_check(db);
}

static void
test_fit_roundtrip(void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(DdpCalibDb) db = ddp_calibdb_open(":memory:", DDP_CALIBDB_WRITE, &error);
  g_assert_null(ddp_calibdb_fit_get(db, 0, &error));
  g_assert_error(error, DDP_CALIBDB_ERROR, DDP_CALIBDB_ERROR_NOT_FOUND);
  g_clear_error(&error);

  DdpCalibFit header = { .runs = "1,2", .gpu_name = "NVIDIA H100 80GB HBM3", .gpu_spec = "h100",
                         .program = "test", .note = "" };
  gint64 id = ddp_calibdb_fit_begin(db, &header, &error);
  g_assert_no_error(error);
  g_assert_cmpint(id, >, 0);
  DdpCalibAllreduceFit a = { .algorithm = "Ring", .protocol = "Simple", .ranks = 8, .nodes = 1, .alpha_us = 56,
                             .algbw_GBs = 120, .busbw_GBs = 210, .n_points = 31, .min_bytes = 8,
                             .max_bytes = (gint64)8 << 30, .rms_rel = 0.01, .max_rel = 0.05 };
  DdpCalibKernelFit k = { .layer_kind = "linear", .precision = "fp16", .basis = "flops", .rate = 600,
                          .efficiency = NAN, .overhead_us = 4, .n_points = 12, .rms_rel = 0.02, .max_rel = 0.04 };
  DdpCalibLayerFit l = { .signature = "linear:1x1:1:0", .layer_kind = "linear", .layer = "fc", .precision = "fp16",
                         .batch_size = 8, .forward_us = -1, .backward_us = 50 };
  DdpCalibResidual r = { .model = "allreduce", .key = "Ring/Simple ranks=8 nodes=1", .x = 8, .measured_us = 56.1,
                         .fitted_us = 56, .rel = -0.0018 };
  g_assert_true(ddp_calibdb_fit_add_allreduce(db, &a, &error));
  g_assert_true(ddp_calibdb_fit_add_kernel(db, &k, &error));
  g_assert_true(ddp_calibdb_fit_add_layer(db, &l, &error));
  g_assert_true(ddp_calibdb_fit_add_residual(db, &r, &error));
  g_assert_true(ddp_calibdb_fit_commit(db, &error));
  g_assert_no_error(error);
  assert_check(db);

  g_autoptr(DdpCalibFit) back = ddp_calibdb_fit_get(db, 0, &error);
  g_assert_no_error(error);
  g_assert_cmpint(back->id, ==, id);
  g_assert_cmpstr(back->runs, ==, "1,2");
  g_assert_cmpstr(back->gpu_spec, ==, "h100");
  g_autoptr(GArray) ar = ddp_calibdb_fit_allreduce(db, id, &error);
  g_assert_cmpuint(ar->len, ==, 1);
  g_assert_cmpfloat(g_array_index(ar, DdpCalibAllreduceFit, 0).algbw_GBs, ==, 120);
  g_assert_cmpint(g_array_index(ar, DdpCalibAllreduceFit, 0).max_bytes, ==, (gint64)8 << 30);
  g_autoptr(GArray) kr = ddp_calibdb_fit_kernels(db, id, &error);
  g_assert_true(isnan(g_array_index(kr, DdpCalibKernelFit, 0).efficiency)); /* NULL round trip */
  g_autoptr(GArray) lr = ddp_calibdb_fit_layers(db, id, &error);
  g_assert_cmpfloat(g_array_index(lr, DdpCalibLayerFit, 0).forward_us, ==, -1);
  g_autoptr(GArray) rr = ddp_calibdb_fit_residuals(db, id, &error);
  g_assert_cmpstr(g_array_index(rr, DdpCalibResidual, 0).key, ==, r.key);
  g_assert_no_error(error);
  g_assert_null(ddp_calibdb_fit_get(db, id + 1, &error));
  g_assert_error(error, DDP_CALIBDB_ERROR, DDP_CALIBDB_ERROR_NOT_FOUND);
}

/* Schema 3: an AllGather point and a curve point of each table, written and read back exactly; the
 * run counts them; the check covers them. */
static void
test_collective_roundtrip(void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(DdpCalibDb) db = ddp_calibdb_open(":memory:", DDP_CALIBDB_WRITE, &error);
  g_assert_no_error(error);
  DdpCalibRun run = sample_run();
  gint64 id = ddp_calibdb_run_begin(db, &run, &error);
  g_assert_true(ddp_calibdb_batch_begin(db, id, "import/nccl-tests", &error));
  /* 64 MiB gathered over 8 ranks in 205.86 µs: algbw 67108864 / 205860 = 325.99 GB/s, busbw · 7/8 */
  DdpCalibCollectivePoint p = { .op = "all_gather", .algorithm = "auto", .protocol = "auto", .ranks = 8,
                                .nodes = 1, .bytes = 67108864, .dtype = "float", .in_place = FALSE,
                                .iterations = 20, .time_us = 205.86, .algbw_GBs = 325.99, .busbw_GBs = 285.24 };
  g_assert_true(ddp_calibdb_batch_add_collective(db, &p, &error));
  g_assert_true(ddp_calibdb_batch_commit(db, NULL, &error));
  g_assert_no_error(error);
  assert_check(db);
  g_autoptr(DdpCalibRun) back = ddp_calibdb_run_get(db, id, &error);
  g_assert_cmpint(back->n_collective_points, ==, 1);
  g_assert_cmpint(back->n_allreduce_points, ==, 0);
  g_autoptr(GArray) points = ddp_calibdb_collective_points(db, NULL, 0, &error);
  g_assert_no_error(error);
  g_assert_cmpuint(points->len, ==, 1);
  const DdpCalibCollectivePoint *q = &g_array_index(points, DdpCalibCollectivePoint, 0);
  g_assert_cmpint(q->run_id, ==, id);
  g_assert_cmpstr(q->batch, ==, "import/nccl-tests");
  g_assert_cmpstr(q->op, ==, "all_gather");
  g_assert_cmpstr(q->dtype, ==, "float");
  g_assert_cmpint(q->bytes, ==, 67108864);
  g_assert_false(q->in_place);
  g_assert_cmpfloat(q->time_us, ==, 205.86);
  g_assert_cmpfloat(q->algbw_GBs, ==, 325.99);
  g_assert_cmpfloat(q->busbw_GBs, ==, 285.24);

  DdpCalibFit header = { .runs = "1", .gpu_name = "NVIDIA H100 80GB HBM3", .gpu_spec = "h100", .program = "test",
                         .note = "" };
  gint64 fit = ddp_calibdb_fit_begin(db, &header, &error);
  DdpCalibCurvePoint ar = { .algorithm = "Ring", .protocol = "Simple", .ranks = 8, .nodes = 1, .bytes = 8,
                            .time_us = 20 };
  DdpCalibCurvePoint bc = { .op = "broadcast", .algorithm = "auto", .protocol = "auto", .ranks = 8, .nodes = 1,
                            .bytes = 1048576, .time_us = 18.96 };
  g_assert_true(ddp_calibdb_fit_add_curve_point(db, &ar, &error));
  g_assert_true(ddp_calibdb_fit_add_curve_point(db, &bc, &error));
  g_assert_true(ddp_calibdb_fit_commit(db, &error));
  g_assert_no_error(error);
  assert_check(db);
  /* each curve in its own table: AllReduce's without an op */
  g_autoptr(GArray) ar_back = ddp_calibdb_fit_curve(db, fit, &error);
  g_assert_cmpuint(ar_back->len, ==, 1);
  g_assert_null(g_array_index(ar_back, DdpCalibCurvePoint, 0).op);
  g_assert_cmpfloat(g_array_index(ar_back, DdpCalibCurvePoint, 0).time_us, ==, 20);
  g_autoptr(GArray) op_back = ddp_calibdb_fit_collective_curve(db, fit, &error);
  g_assert_no_error(error);
  g_assert_cmpuint(op_back->len, ==, 1);
  const DdpCalibCurvePoint *c = &g_array_index(op_back, DdpCalibCurvePoint, 0);
  g_assert_cmpstr(c->op, ==, "broadcast");
  g_assert_cmpstr(c->algorithm, ==, "auto");
  g_assert_cmpint(c->ranks, ==, 8);
  g_assert_cmpint(c->bytes, ==, 1048576);
  g_assert_cmpfloat(c->time_us, ==, 18.96);
}

/* ---- files --------------------------------------------------------------------------------- */

typedef struct {
  char *dir;
  char *path;
} FileFixture;

static void
file_setup(FileFixture *f, G_GNUC_UNUSED gconstpointer data)
{
  f->dir = g_dir_make_tmp("test-calibdb-XXXXXX", NULL);
  g_assert_nonnull(f->dir);
  f->path = g_build_filename(f->dir, "calib.db", NULL);
}

static void
file_teardown(FileFixture *f, G_GNUC_UNUSED gconstpointer data)
{
  const char *suffixes[] = { "", "-wal", "-shm", "-journal" };
  for (gsize i = 0; i < G_N_ELEMENTS(suffixes); i++) {
    g_autofree char *p = g_strconcat(f->path, suffixes[i], NULL);
    g_unlink(p);
  }
  g_rmdir(f->dir);
  g_free(f->path);
  g_free(f->dir);
}

/* The journal mode of @path as a second connection sees it. */
static char *
journal_mode(const char *path)
{
  sqlite3 *raw = NULL;
  g_assert_cmpint(sqlite3_open_v2(path, &raw, SQLITE_OPEN_READONLY, NULL), ==, SQLITE_OK);
  sqlite3_stmt *st = NULL;
  g_assert_cmpint(sqlite3_prepare_v2(raw, "PRAGMA journal_mode", -1, &st, NULL), ==, SQLITE_OK);
  g_assert_cmpint(sqlite3_step(st), ==, SQLITE_ROW);
  char *mode = g_strdup((const char *)sqlite3_column_text(st, 0));
  sqlite3_finalize(st);
  sqlite3_close(raw);
  return mode;
}

static gboolean
beside(const char *path, const char *suffix)
{
  g_autofree char *p = g_strconcat(path, suffix, NULL);
  return g_file_test(p, G_FILE_TEST_EXISTS);
}

static void
test_file_roundtrip(FileFixture *f, G_GNUC_UNUSED gconstpointer data)
{
  g_autoptr(GError) error = NULL;
  gint64 id;
  {
    g_autoptr(DdpCalibDb) db = ddp_calibdb_open(f->path, DDP_CALIBDB_WRITE, &error);
    g_assert_no_error(error);
    DdpCalibRun run = sample_run();
    id = ddp_calibdb_run_begin(db, &run, &error);
    g_assert_true(write_allreduce_batch(db, id, "b0", POINTS_PER_BATCH, &error));
    g_assert_no_error(error);
    /* WAL while the writer is open: readers read during a calibration */
    g_autofree char *open_mode = journal_mode(f->path);
    g_assert_cmpstr(open_mode, ==, "wal");
  }
  /* a rollback journal once it is closed, and nothing left beside the file */
  g_autofree char *closed_mode = journal_mode(f->path);
  g_assert_cmpstr(closed_mode, ==, "delete");
  g_assert_false(beside(f->path, "-wal") || beside(f->path, "-shm"));
  g_autoptr(DdpCalibDb) db = ddp_calibdb_open(f->path, DDP_CALIBDB_READ, &error);
  g_assert_no_error(error);
  assert_check(db);
  g_autoptr(GPtrArray) runs = ddp_calibdb_runs(db, &error);
  g_assert_cmpuint(runs->len, ==, 1);
  const DdpCalibRun *r = g_ptr_array_index(runs, 0);
  g_assert_cmpint(r->id, ==, id);
  g_assert_null(r->finished);
  g_assert_cmpint(r->n_allreduce_points, ==, POINTS_PER_BATCH);
  g_assert_cmpint(ddp_calibdb_latest_run(db, TRUE, TRUE, &error), ==, id);
  /* read mode refuses writes */
  DdpCalibRun run = sample_run();
  g_assert_cmpint(ddp_calibdb_run_begin(db, &run, &error), ==, 0);
  g_assert_error(error, DDP_CALIBDB_ERROR, DDP_CALIBDB_ERROR_SQL);
  /* a reader leaves nothing beside the file either */
  g_clear_pointer(&db, ddp_calibdb_close);
  g_assert_false(beside(f->path, "-wal") || beside(f->path, "-shm") || beside(f->path, "-journal"));
}

static void
test_open_missing(FileFixture *f, G_GNUC_UNUSED gconstpointer data)
{
  g_autoptr(GError) error = NULL;
  g_assert_null(ddp_calibdb_open(f->path, DDP_CALIBDB_READ, &error));
  g_assert_error(error, DDP_CALIBDB_ERROR, DDP_CALIBDB_ERROR_OPEN);
  g_assert_true(ddp_calibdb_error_is_input(error));
  g_assert_nonnull(strstr(error->message, f->path));
  g_assert_false(g_file_test(f->path, G_FILE_TEST_EXISTS)); /* reading never creates */
  g_clear_error(&error);
  g_assert_null(ddp_calibdb_open(f->dir, DDP_CALIBDB_WRITE, &error)); /* a directory */
  g_assert_error(error, DDP_CALIBDB_ERROR, DDP_CALIBDB_ERROR_OPEN);
}

static void
test_open_empty(FileFixture *f, G_GNUC_UNUSED gconstpointer data)
{
  g_autoptr(GError) error = NULL;
  g_assert_true(g_file_set_contents(f->path, "", 0, NULL));
  g_assert_null(ddp_calibdb_open(f->path, DDP_CALIBDB_READ, &error));
  g_assert_error(error, DDP_CALIBDB_ERROR, DDP_CALIBDB_ERROR_NOT_FOUND);
  g_clear_error(&error);
  /* issue 11: an existing empty file is not ours to write a schema into */
  g_assert_null(ddp_calibdb_open(f->path, DDP_CALIBDB_WRITE, &error));
  g_assert_error(error, DDP_CALIBDB_ERROR, DDP_CALIBDB_ERROR_FOREIGN);
  g_assert_true(ddp_calibdb_error_is_input(error));
  GStatBuf st;
  g_assert_cmpint(g_stat(f->path, &st), ==, 0);
  g_assert_cmpint(st.st_size, ==, 0);   /* untouched */
}

/* A new file is created whole (schema linked into place), leaving no temporary file beside it;
 * the run lock admits one holder; a dropped table reads as a damaged database. */
static void
test_open_create_lock_damage(FileFixture *f, G_GNUC_UNUSED gconstpointer data)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(DdpCalibDb) db = ddp_calibdb_open(f->path, DDP_CALIBDB_WRITE, &error);
  g_assert_no_error(error);
  assert_check(db);
  g_autoptr(GDir) dir = g_dir_open(f->dir, 0, NULL);
  for (const char *name; (name = g_dir_read_name(dir));)
    g_assert_false(strstr(name, ".new-"));
  g_assert_true(ddp_calibdb_lock_run(db, &error));
  g_autoptr(DdpCalibDb) second = ddp_calibdb_open(f->path, DDP_CALIBDB_WRITE, &error);
  g_assert_no_error(error);   /* opening is fine: SQLite orders transactions */
  g_assert_false(ddp_calibdb_lock_run(second, &error));
  g_assert_error(error, DDP_CALIBDB_ERROR, DDP_CALIBDB_ERROR_BUSY);
  g_assert_true(ddp_calibdb_error_is_input(error));
  g_clear_error(&error);
  g_clear_pointer(&db, ddp_calibdb_close);   /* releases the lock */
  g_assert_true(ddp_calibdb_lock_run(second, &error));
  g_clear_pointer(&second, ddp_calibdb_close);

  sqlite3 *raw = NULL;
  g_assert_cmpint(sqlite3_open(f->path, &raw), ==, SQLITE_OK);
  g_assert_cmpint(sqlite3_exec(raw, "DROP TABLE fit_residuals", NULL, NULL, NULL), ==, SQLITE_OK);
  sqlite3_close(raw);
  g_assert_null(ddp_calibdb_open(f->path, DDP_CALIBDB_READ, &error));
  g_assert_error(error, DDP_CALIBDB_ERROR, DDP_CALIBDB_ERROR_CORRUPT);
  g_assert_nonnull(strstr(error->message, "fit_residuals"));
}

static void
test_open_garbage(FileFixture *f, G_GNUC_UNUSED gconstpointer data)
{
  g_autoptr(GError) error = NULL;
  const char *text = "[model]\nname = not a database\n"
                     "this file is long enough that SQLite reads a full header from it ......\n";
  g_assert_true(g_file_set_contents(f->path, text, -1, NULL));
  for (int mode = 0; mode < 2; mode++) {
    g_assert_null(ddp_calibdb_open(f->path, mode ? DDP_CALIBDB_WRITE : DDP_CALIBDB_READ, &error));
    g_assert_error(error, DDP_CALIBDB_ERROR, DDP_CALIBDB_ERROR_CORRUPT);
    g_assert_true(ddp_calibdb_error_is_input(error));
    g_assert_nonnull(strstr(error->message, "not an SQLite database"));
    g_assert_null(strchr(error->message, '\n')); /* one line */
    g_clear_error(&error);
  }
  /* the file was not touched */
  g_autofree char *back = NULL;
  g_assert_true(g_file_get_contents(f->path, &back, NULL, NULL));
  g_assert_cmpstr(back, ==, text);
}

static void
raw_exec(const char *path, const char *sql)
{
  sqlite3 *raw = NULL;
  g_assert_cmpint(sqlite3_open(path, &raw), ==, SQLITE_OK);
  g_assert_cmpint(sqlite3_exec(raw, sql, NULL, NULL, NULL), ==, SQLITE_OK);
  sqlite3_close(raw);
}

static void
test_open_foreign(FileFixture *f, G_GNUC_UNUSED gconstpointer data)
{
  g_autoptr(GError) error = NULL;
  raw_exec(f->path, "CREATE TABLE moz_places (id INTEGER PRIMARY KEY, url TEXT)");
  g_assert_null(ddp_calibdb_open(f->path, DDP_CALIBDB_WRITE, &error));
  g_assert_error(error, DDP_CALIBDB_ERROR, DDP_CALIBDB_ERROR_FOREIGN);
  g_assert_nonnull(strstr(error->message, "not a ddpsim calibration database"));
  g_assert_nonnull(strstr(error->message, "moz_places"));
  g_clear_error(&error);
  /* another application's id, even without tables */
  raw_exec(f->path, "DROP TABLE moz_places; PRAGMA application_id = 1234");
  g_assert_null(ddp_calibdb_open(f->path, DDP_CALIBDB_READ, &error));
  g_assert_error(error, DDP_CALIBDB_ERROR, DDP_CALIBDB_ERROR_FOREIGN);
}

static void
test_open_newer(FileFixture *f, G_GNUC_UNUSED gconstpointer data)
{
  g_autoptr(GError) error = NULL;
  {
    g_autoptr(DdpCalibDb) db = ddp_calibdb_open(f->path, DDP_CALIBDB_WRITE, &error);
    g_assert_no_error(error);
  }
  raw_exec(f->path, "PRAGMA user_version = 99");
  g_assert_null(ddp_calibdb_open(f->path, DDP_CALIBDB_READ, &error));
  g_assert_error(error, DDP_CALIBDB_ERROR, DDP_CALIBDB_ERROR_VERSION);
  g_assert_nonnull(strstr(error->message, "schema 99"));
}

/* Query one integer straight from the file. */
static gint64
raw_int(const char *path, const char *sql)
{
  sqlite3 *raw = NULL;
  sqlite3_stmt *st = NULL;
  g_assert_cmpint(sqlite3_open(path, &raw), ==, SQLITE_OK);
  g_assert_cmpint(sqlite3_prepare_v2(raw, sql, -1, &st, NULL), ==, SQLITE_OK);
  g_assert_cmpint(sqlite3_step(st), ==, SQLITE_ROW);
  gint64 v = sqlite3_column_int64(st, 0);
  sqlite3_finalize(st);
  sqlite3_close(raw);
  return v;
}

/* An older file: schema 1 (what ddpsim-calibrate wrote before imports and curves, e.g.
 * calibrate/data/'s first H100 database) or schema 2 (before the other collectives).  Read-only it
 * reads as having no imports, no curves, no collective points, and is not changed; opened for
 * writing it is upgraded to schema 3 in place, its runs kept, and it then holds exactly the
 * tables a new file has. */
/* Query one text value straight from the file (g_free). */
static char *
raw_text(const char *path, const char *sql)
{
  sqlite3 *raw = NULL;
  sqlite3_stmt *st = NULL;
  g_assert_cmpint(sqlite3_open(path, &raw), ==, SQLITE_OK);
  g_assert_cmpint(sqlite3_prepare_v2(raw, sql, -1, &st, NULL), ==, SQLITE_OK);
  g_assert_cmpint(sqlite3_step(st), ==, SQLITE_ROW);
  char *v = g_strdup((const char *)sqlite3_column_text(st, 0));
  sqlite3_finalize(st);
  sqlite3_close(raw);
  return v;
}

static void
test_open_older(FileFixture *f, gconstpointer data)
{
  int version = GPOINTER_TO_INT(data);
  g_autoptr(GError) error = NULL;
  {
    g_autoptr(DdpCalibDb) db = ddp_calibdb_open(f->path, DDP_CALIBDB_WRITE, &error);
    DdpCalibRun run = sample_run();
    g_assert_cmpint(ddp_calibdb_run_begin(db, &run, &error), ==, 1);
    g_assert_true(write_allreduce_batch(db, 1, "b", 3, &error));
  }
  g_autofree char *schema = raw_text(f->path, "SELECT group_concat(sql, ';') FROM (SELECT sql FROM sqlite_master ORDER BY name)");
  raw_exec(f->path, "DROP TABLE collective_points; DROP TABLE fit_collective_curve; PRAGMA user_version = 2");
  if (version == 1)
    raw_exec(f->path, "DROP TABLE imports; DROP TABLE fit_allreduce_curve; PRAGMA user_version = 1");
  g_autofree char *before = NULL;
  gsize n_before = 0;
  g_assert_true(g_file_get_contents(f->path, &before, &n_before, NULL));
  {
    g_autoptr(DdpCalibDb) db = ddp_calibdb_open(f->path, DDP_CALIBDB_READ, &error);
    g_assert_no_error(error);
    g_auto(DdpCalibImport) import = { 0 };
    g_assert_false(ddp_calibdb_import_get(db, 1, &import, &error));
    g_assert_error(error, DDP_CALIBDB_ERROR, DDP_CALIBDB_ERROR_NOT_FOUND);
    g_clear_error(&error);
    g_autoptr(GArray) curve = ddp_calibdb_fit_curve(db, 1, &error);
    g_assert_no_error(error);
    g_assert_cmpuint(curve->len, ==, 0);
    g_autoptr(GArray) op_curve = ddp_calibdb_fit_collective_curve(db, 1, &error);
    g_assert_no_error(error);
    g_assert_cmpuint(op_curve->len, ==, 0);
    g_autoptr(GArray) points = ddp_calibdb_collective_points(db, NULL, 0, &error);
    g_assert_no_error(error);
    g_assert_cmpuint(points->len, ==, 0);
    g_autoptr(DdpCalibRun) run = ddp_calibdb_run_get(db, 1, &error);
    g_assert_cmpint(run->n_allreduce_points, ==, 3);
    g_assert_cmpint(run->n_collective_points, ==, 0);
    g_assert_true(ddp_calibdb_check(db, &error));
  }
  g_autofree char *after = NULL;
  gsize n_after = 0;
  g_assert_true(g_file_get_contents(f->path, &after, &n_after, NULL));
  g_assert_cmpmem(before, n_before, after, n_after);
  g_assert_cmpint(raw_int(f->path, "PRAGMA user_version"), ==, version);
  {
    g_autoptr(DdpCalibDb) db = ddp_calibdb_open(f->path, DDP_CALIBDB_WRITE, &error);
    g_assert_no_error(error);
    g_autoptr(DdpCalibRun) run = ddp_calibdb_run_get(db, 1, &error);
    g_assert_no_error(error);
    g_assert_cmpint(run->n_allreduce_points, ==, 3);
  }
  g_assert_cmpint(raw_int(f->path, "PRAGMA user_version"), ==, DDP_CALIBDB_SCHEMA_VERSION);
  g_autofree char *upgraded = raw_text(f->path, "SELECT group_concat(sql, ';') FROM (SELECT sql FROM sqlite_master ORDER BY name)");
  g_assert_cmpstr(upgraded, ==, schema);
  /* and it opens again as a current file */
  g_clear_pointer(&(DdpCalibDb *){ ddp_calibdb_open(f->path, DDP_CALIBDB_READ, &error) }, ddp_calibdb_close);
  g_assert_no_error(error);
}

/* Stored values of the other collectives are input like any other: an op ddpsim does not know, a
 * size beyond 2^50 or a time of 0 in collective_points, a size stored twice in a curve. */
static void
test_open_collective_values(FileFixture *f, G_GNUC_UNUSED gconstpointer data)
{
  static const struct { const char *sql; gboolean curve; const char *message; } cases[] = {
    { "UPDATE collective_points SET op = 'alltoall'", FALSE,
      "collective_points, row 1: op = \"alltoall\" (expected all_gather, reduce_scatter or broadcast)" },
    { "UPDATE collective_points SET bytes = 4611686018427387904", FALSE,
      "collective_points, row 1: bytes = 4.61169e+18 (expected 0 to 1.1259e+15)" },
    { "UPDATE collective_points SET time_us = 0", FALSE,
      "collective_points, row 1: time_us = 0 (expected above 0, at most 1e+09)" },
    { "INSERT INTO fit_collective_curve SELECT * FROM fit_collective_curve", TRUE,
      "fit_collective_curve, row 2: bytes = 1048576 twice for reduce_scatter auto/auto ranks=8 nodes=1" },
    { "UPDATE fit_collective_curve SET op = ''", TRUE, "fit_collective_curve, row 1: op = \"\"" },
  };
  for (gsize i = 0; i < G_N_ELEMENTS(cases); i++) {
    g_autoptr(GError) error = NULL;
    g_unlink(f->path);
    {
      g_autoptr(DdpCalibDb) db = ddp_calibdb_open(f->path, DDP_CALIBDB_WRITE, &error);
      DdpCalibRun run = sample_run();
      gint64 id = ddp_calibdb_run_begin(db, &run, &error);
      g_assert_true(ddp_calibdb_batch_begin(db, id, "b", &error));
      DdpCalibCollectivePoint p = { .op = "reduce_scatter", .algorithm = "auto", .protocol = "auto", .ranks = 8,
                                    .nodes = 1, .bytes = 1048576, .iterations = 20, .time_us = 27.08 };
      g_assert_true(ddp_calibdb_batch_add_collective(db, &p, &error));
      g_assert_true(ddp_calibdb_batch_commit(db, NULL, &error));
      DdpCalibFit header = { .runs = "1", .gpu_name = "", .gpu_spec = "", .program = "test", .note = "" };
      g_assert_cmpint(ddp_calibdb_fit_begin(db, &header, &error), ==, 1);
      DdpCalibCurvePoint c = { .op = "reduce_scatter", .algorithm = "auto", .protocol = "auto", .ranks = 8,
                               .nodes = 1, .bytes = 1048576, .time_us = 27.08 };
      g_assert_true(ddp_calibdb_fit_add_curve_point(db, &c, &error));
      g_assert_true(ddp_calibdb_fit_commit(db, &error));
      g_assert_no_error(error);
    }
    raw_exec(f->path, cases[i].sql);
    g_autoptr(DdpCalibDb) db = ddp_calibdb_open(f->path, DDP_CALIBDB_READ, &error);
    g_assert_no_error(error);
    g_autoptr(GArray) rows = cases[i].curve ? ddp_calibdb_fit_collective_curve(db, 1, &error)
                                            : ddp_calibdb_collective_points(db, NULL, 0, &error);
    g_assert_null(rows);
    g_assert_error(error, DDP_CALIBDB_ERROR, DDP_CALIBDB_ERROR_VALUE);
    g_assert_true(ddp_calibdb_error_is_input(error));
    g_assert_null(strchr(error->message, '\n'));
    if (!strstr(error->message, cases[i].message))
      g_error("case %zu: \"%s\" lacks \"%s\"", i, error->message, cases[i].message);
  }
}

static void
test_open_damaged(FileFixture *f, G_GNUC_UNUSED gconstpointer data)
{
  g_autoptr(GError) error = NULL;
  {
    g_autoptr(DdpCalibDb) db = ddp_calibdb_open(f->path, DDP_CALIBDB_WRITE, &error);
    DdpCalibRun run = sample_run();
    gint64 id = ddp_calibdb_run_begin(db, &run, &error);
    for (int b = 0; b < 40; b++) {
      g_autofree char *name = g_strdup_printf("b%d", b);
      g_assert_true(write_allreduce_batch(db, id, name, POINTS_PER_BATCH, &error));
    }
    g_assert_no_error(error);
  } /* the last connection closing checkpoints the WAL into the file */
  g_autofree char *bytes = NULL;
  gsize len = 0;
  g_assert_true(g_file_get_contents(f->path, &bytes, &len, NULL));
  g_assert_cmpuint(len, >, 8 * 4096);
  /* scribble over the middle of the file, keeping the 100-byte header intact */
  memset(bytes + len / 2, 0x5a, 3 * 4096);
  g_assert_true(g_file_set_contents(f->path, bytes, (gssize)len, NULL));
  g_assert_null(ddp_calibdb_open(f->path, DDP_CALIBDB_READ, &error));
  g_assert_error(error, DDP_CALIBDB_ERROR, DDP_CALIBDB_ERROR_CORRUPT);
  g_assert_true(ddp_calibdb_error_is_input(error));
  g_test_message("%s", error->message);
  g_assert_null(strchr(error->message, '\n'));
}

/* ---- killed writers ------------------------------------------------------------------------ */

typedef enum { KILL_BETWEEN, KILL_MID_BATCH, KILL_ANYTIME } KillWhen;

/* The child: writes batches b0, b1, … reporting 'c' on @fd after each commit.  BETWEEN: stops
 * after 5 and waits to be killed; MID_BATCH: then opens b5, adds half its points, reports 'm' and
 * waits; ANYTIME: never stops.  Never returns. */
G_GNUC_NORETURN static void
child_writer(const char *path, int fd, KillWhen when)
{
  GError *error = NULL;
  DdpCalibDb *db = ddp_calibdb_open(path, DDP_CALIBDB_WRITE, &error);
  DdpCalibRun run = sample_run();
  gint64 id = db ? ddp_calibdb_run_begin(db, &run, &error) : 0;
  if (!id)
    _exit(3);
  for (int b = 0;; b++) {
    if (when != KILL_ANYTIME && b == 5) {
      if (when == KILL_MID_BATCH) {
        if (!ddp_calibdb_batch_begin(db, id, "b5", &error))
          _exit(4);
        for (int i = 0; i < POINTS_PER_BATCH / 2; i++) {
          DdpCalibAllreducePoint p = { .algorithm = "Ring", .protocol = "Simple", .ranks = 8, .nodes = 1,
                                       .bytes = 8, .time_us = 1 };
          if (!ddp_calibdb_batch_add_allreduce(db, &p, &error))
            _exit(5);
        }
        if (write(fd, "m", 1) != 1)
          _exit(6);
      }
      for (;;)
        pause();
    }
    char name[32];
    g_snprintf(name, sizeof name, "b%d", b);
    if (!write_allreduce_batch(db, id, name, POINTS_PER_BATCH, &error))
      _exit(7);
    if (write(fd, "c", 1) != 1)
      _exit(8);
  }
}

static void
test_kill(FileFixture *f, gconstpointer data)
{
  KillWhen when = GPOINTER_TO_INT(data);
  int fds[2];
  g_assert_cmpint(pipe(fds), ==, 0);
  pid_t pid = fork();
  g_assert_cmpint(pid, >=, 0);
  if (pid == 0) {
    close(fds[0]);
    child_writer(f->path, fds[1], when);
  }
  close(fds[1]);
  int committed = 0;
  gboolean mid = FALSE;
  int wanted = when == KILL_ANYTIME ? 12 : 5;
  while (committed < wanted || (when == KILL_MID_BATCH && !mid)) {
    char c;
    ssize_t n = read(fds[0], &c, 1);
    if (n < 0 && errno == EINTR)
      continue;
    g_assert_cmpint(n, ==, 1); /* the child died early otherwise */
    if (c == 'c')
      committed++;
    else if (c == 'm')
      mid = TRUE;
  }
  g_assert_cmpint(kill(pid, SIGKILL), ==, 0);
  int status = 0;
  g_assert_cmpint(waitpid(pid, &status, 0), ==, pid);
  g_assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
  /* ANYTIME: the child may have committed more after its last report; count those too */
  char c;
  while (read(fds[0], &c, 1) == 1)
    committed += c == 'c';
  close(fds[0]);

  g_autoptr(GError) error = NULL;
  g_autoptr(DdpCalibDb) db = ddp_calibdb_open(f->path, DDP_CALIBDB_WRITE, &error);
  g_assert_no_error(error);
  assert_check(db);
  gint64 id = ddp_calibdb_latest_run(db, TRUE, TRUE, &error); /* interrupted: no finish time */
  g_assert_no_error(error);
  g_autoptr(GHashTable) batches = ddp_calibdb_batches(db, id, &error);
  /* Every reported commit is there; at most one more (committed, killed before reporting). */
  g_assert_cmpint(g_hash_table_size(batches), >=, committed);
  g_assert_cmpint(g_hash_table_size(batches), <=, committed + (when == KILL_ANYTIME ? 1 : 0));
  for (int b = 0; b < committed; b++) {
    g_autofree char *name = g_strdup_printf("b%d", b);
    g_assert_true(g_hash_table_contains(batches, name));
  }
  /* … and each batch is whole: no half-written batch survives. */
  g_autoptr(GArray) points = ddp_calibdb_allreduce_points(db, &id, 1, &error);
  g_assert_cmpuint(points->len, ==, g_hash_table_size(batches) * POINTS_PER_BATCH);
  g_autoptr(GHashTable) per_batch = g_hash_table_new(g_str_hash, g_str_equal);
  for (guint i = 0; i < points->len; i++) {
    const char *b = g_array_index(points, DdpCalibAllreducePoint, i).batch;
    g_hash_table_insert(per_batch, (gpointer)b,
                        GINT_TO_POINTER(GPOINTER_TO_INT(g_hash_table_lookup(per_batch, b)) + 1));
  }
  GHashTableIter it;
  gpointer key, value;
  g_hash_table_iter_init(&it, per_batch);
  while (g_hash_table_iter_next(&it, &key, &value))
    g_assert_cmpint(GPOINTER_TO_INT(value), ==, POINTS_PER_BATCH);

  /* --resume: the interrupted run continues where it stopped */
  g_autofree char *next = g_strdup_printf("b%u", g_hash_table_size(batches));
  g_assert_true(write_allreduce_batch(db, id, next, POINTS_PER_BATCH, &error));
  g_assert_true(ddp_calibdb_run_finish(db, id, &error));
  g_assert_no_error(error);
  assert_check(db);
}

/* Issue 20: a user's database is untrusted.  Each object ddpsim did not create is refused at open
 * (FOREIGN), in either mode; and the outer transaction leaves a file byte for byte as it was when
 * rolled back — UPDATE mode does not switch the journal to WAL. */
static void
test_open_hostile(FileFixture *f, G_GNUC_UNUSED gconstpointer data)
{
  static const char *const edits[] = {
    "CREATE TRIGGER t AFTER INSERT ON runs BEGIN DELETE FROM runs; END",
    "CREATE VIEW v AS SELECT 1",
    "CREATE INDEX i ON runs(host)",
    "CREATE TABLE extra (x)",
    "ALTER TABLE runs ADD COLUMN x DEFAULT 1",
  };
  for (gsize k = 0; k < G_N_ELEMENTS(edits); k++) {
    g_autoptr(GError) error = NULL;
    g_unlink(f->path);
    g_clear_pointer(&(DdpCalibDb *){ ddp_calibdb_open(f->path, DDP_CALIBDB_WRITE, &error) }, ddp_calibdb_close);
    g_assert_no_error(error);
    sqlite3 *raw = NULL;
    g_assert_cmpint(sqlite3_open(f->path, &raw), ==, SQLITE_OK);
    g_assert_cmpint(sqlite3_exec(raw, edits[k], NULL, NULL, NULL), ==, SQLITE_OK);
    sqlite3_close(raw);
    for (int mode = 0; mode < 3; mode++) {
      g_clear_error(&error);
      DdpCalibDbMode m = mode == 0 ? DDP_CALIBDB_READ : mode == 1 ? DDP_CALIBDB_WRITE : DDP_CALIBDB_UPDATE;
      g_assert_null(ddp_calibdb_open(f->path, m, &error));
      g_assert_error(error, DDP_CALIBDB_ERROR, DDP_CALIBDB_ERROR_FOREIGN);
      g_assert_nonnull(strstr(error->message, "that ddpsim did not create"));
    }
  }
  /* a rolled-back outer transaction leaves the file as it was */
  g_autoptr(GError) error = NULL;
  g_unlink(f->path);
  g_clear_pointer(&(DdpCalibDb *){ ddp_calibdb_open(f->path, DDP_CALIBDB_WRITE, &error) }, ddp_calibdb_close);
  g_autofree char *before = NULL, *after = NULL;
  gsize n_before = 0, n_after = 0;
  g_assert_true(g_file_get_contents(f->path, &before, &n_before, NULL));
  {
    g_autoptr(DdpCalibDb) db = ddp_calibdb_open(f->path, DDP_CALIBDB_UPDATE, &error);
    g_assert_no_error(error);
    g_assert_true(ddp_calibdb_transaction_begin(db, &error));
    DdpCalibRun run = sample_run();
    gint64 id = ddp_calibdb_run_begin(db, &run, &error);
    g_assert_true(ddp_calibdb_batch_begin(db, id, "b", &error));
    g_assert_true(ddp_calibdb_batch_commit(db, NULL, &error));   /* a savepoint, released */
    ddp_calibdb_transaction_rollback(db);
    g_autoptr(GPtrArray) runs = ddp_calibdb_runs(db, &error);
    g_assert_cmpuint(runs->len, ==, 0);
  }
  g_assert_true(g_file_get_contents(f->path, &after, &n_after, NULL));
  g_assert_cmpmem(before, n_before, after, n_after);
  g_assert_false(beside(f->path, "-wal"));
}

int
main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/calibdb/memory/roundtrip", test_memory_roundtrip);
  g_test_add_func("/calibdb/batch/rollback", test_batch_rollback);
  g_test_add_func("/calibdb/batch/duplicate", test_batch_duplicate);
  g_test_add_func("/calibdb/fit/roundtrip", test_fit_roundtrip);
  g_test_add_func("/calibdb/collective/roundtrip", test_collective_roundtrip);
  g_test_add("/calibdb/file/roundtrip", FileFixture, NULL, file_setup, test_file_roundtrip, file_teardown);
  g_test_add("/calibdb/open/missing", FileFixture, NULL, file_setup, test_open_missing, file_teardown);
  g_test_add("/calibdb/open/empty", FileFixture, NULL, file_setup, test_open_empty, file_teardown);
  g_test_add("/calibdb/open/create-lock-damage", FileFixture, NULL, file_setup, test_open_create_lock_damage, file_teardown);
  g_test_add("/calibdb/open/not-sqlite", FileFixture, NULL, file_setup, test_open_garbage, file_teardown);
  g_test_add("/calibdb/open/foreign", FileFixture, NULL, file_setup, test_open_foreign, file_teardown);
  g_test_add("/calibdb/open/newer-schema", FileFixture, NULL, file_setup, test_open_newer, file_teardown);
  g_test_add("/calibdb/open/schema-1", FileFixture, GINT_TO_POINTER(1), file_setup, test_open_older, file_teardown);
  g_test_add("/calibdb/open/schema-2", FileFixture, GINT_TO_POINTER(2), file_setup, test_open_older, file_teardown);
  g_test_add("/calibdb/open/collective-values", FileFixture, NULL, file_setup, test_open_collective_values,
             file_teardown);
  g_test_add("/calibdb/open/damaged", FileFixture, NULL, file_setup, test_open_damaged, file_teardown);
  g_test_add("/calibdb/open/hostile", FileFixture, NULL, file_setup, test_open_hostile, file_teardown);
  g_test_add("/calibdb/kill/between-batches", FileFixture, GINT_TO_POINTER(KILL_BETWEEN), file_setup, test_kill,
             file_teardown);
  g_test_add("/calibdb/kill/mid-batch", FileFixture, GINT_TO_POINTER(KILL_MID_BATCH), file_setup, test_kill,
             file_teardown);
  g_test_add("/calibdb/kill/anytime", FileFixture, GINT_TO_POINTER(KILL_ANYTIME), file_setup, test_kill,
             file_teardown);
  return g_test_run();
}
