/* Tests of ddpsim-calibrate, end to end through the program.
 *
 * Everywhere, against calibrate/ddpsim-calibrate-fake — the same main.c and plan.c linked with a
 * deterministic stand-in for the CUDA side (calibrate/fake-device.c): --help, the plan, option
 * errors, --list on good and damaged databases, the no-GPU exit, a calibrate → fit round trip that
 * recovers the stand-in's α and bandwidth, the one-GPU run, a variant NCCL refuses, and a run
 * killed between batches and resumed to the same result as an uninterrupted one.
 * Where a GPU is visible and the real ddpsim-calibrate was built (configure found CUDA + NCCL): a
 * small real calibration, fitted, and a real interrupted one resumed.  Skipped with a message
 * elsewhere. */
#define _POSIX_C_SOURCE 200809L
#include "calibdb.h"
#include "fit.h"

#include <glib/gstdio.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef DDP_BUILDDIR
#define DDP_BUILDDIR "."
#endif

static char *
fake_binary(void)
{
  return g_build_filename(DDP_BUILDDIR, "calibrate", "ddpsim-calibrate-fake", NULL);
}

static char *
real_binary(void)
{
  return g_build_filename(DDP_BUILDDIR, "ddpsim-calibrate", NULL);
}

/* Runs @bin with @args (shell syntax) and extra environment @env ("NAME=VALUE" list, may be
 * NULL); returns the exit status. */
static int
run_with(const char *bin, const char *const *env, const char *args, char **out, char **err)
{
  g_autofree char *cmd = g_strdup_printf("%s %s", bin, args);
  g_auto(GStrv) argv = NULL;
  g_assert_true(g_shell_parse_argv(cmd, NULL, &argv, NULL));
  g_auto(GStrv) envp = g_get_environ();
  for (guint i = 0; env && env[i]; i++) {
    g_auto(GStrv) kv = g_strsplit(env[i], "=", 2);
    envp = g_environ_setenv(envp, kv[0], kv[1], TRUE);
  }
  int status = 0;
  g_autoptr(GError) error = NULL;
  g_assert_true(g_spawn_sync(NULL, argv, envp, G_SPAWN_DEFAULT, NULL, NULL, out, err, &status, &error));
  g_assert_no_error(error);
  g_assert_true(WIFEXITED(status));
  return WEXITSTATUS(status);
}

static int
run_fake(const char *const *env, const char *args, char **out, char **err)
{
  g_autofree char *bin = fake_binary();
  return run_with(bin, env, args, out, err);
}

static gboolean
one_line(const char *text)
{
  const char *nl = strchr(text, '\n');
  return nl && nl[1] == '\0';
}

typedef struct {
  char *dir, *db, *db2;
} Tmp;

static void
tmp_setup(Tmp *t, G_GNUC_UNUSED gconstpointer data)
{
  t->dir = g_dir_make_tmp("test-calibrate-XXXXXX", NULL);
  t->db = g_build_filename(t->dir, "calib.db", NULL);
  t->db2 = g_build_filename(t->dir, "other.db", NULL);
}

static void
tmp_teardown(Tmp *t, G_GNUC_UNUSED gconstpointer data)
{
  const char *suffixes[] = { "", "-wal", "-shm", "-journal" };
  for (gsize i = 0; i < G_N_ELEMENTS(suffixes); i++) {
    g_autofree char *p = g_strconcat(t->db, suffixes[i], NULL);
    g_autofree char *q = g_strconcat(t->db2, suffixes[i], NULL);
    g_unlink(p);
    g_unlink(q);
  }
  g_rmdir(t->dir);
  g_free(t->db);
  g_free(t->db2);
  g_free(t->dir);
}

/* ---- options, plan, list ------------------------------------------------------------------- */

static void
test_help(void)
{
  g_autofree char *out = NULL, *err = NULL;
  g_assert_cmpint(run_fake(NULL, "--help-all", &out, &err), ==, 0);
  g_assert_nonnull(strstr(out, "--resume"));
  g_assert_nonnull(strstr(out, "--variants"));
}

static void
test_dry_run(void)
{
  g_autofree char *out = NULL, *err = NULL;
  g_assert_cmpint(run_fake(NULL, "--dry-run", &out, &err), ==, 0);
  /* 8 GPUs by default: counts 2, 4, 8 × 8 variants × 31 sizes (8 B … 8 GiB) */
  g_assert_nonnull(strstr(out, "allreduce/Ring/Simple/r8/n1/8589934592\n"));
  g_assert_nonnull(strstr(out, "allreduce/NVLS/Simple/r2/n1/8\n"));
  g_assert_nonnull(strstr(out, "copy/1073741824\n"));
  /* linear 4096×1024 over 512 positions at batch 32: M = 16384 — forward, dX, dW */
  g_assert_nonnull(strstr(out, "M=4096 N=16384 K=1024 TN"));
  g_assert_nonnull(strstr(out, "M=1024 N=16384 K=4096 NN"));
  g_assert_nonnull(strstr(out, "M=1024 N=4096 K=16384 NT"));
  g_assert_null(strstr(out, "kernel/tf32/b8/norm")); /* memory-bound kinds: no tf32 */
  /* ResNet-50's stem: 7×7 stride 2 on 224×224, no dX (the image needs no gradient); a 1×1 */
  g_assert_nonnull(strstr(out, "N=32 C=3 H=224 W=224 K=64 R=7 S=7 pad=3 stride=2 groups=1"));
  g_assert_null(strstr(out, "bwd-data   N=32 C=3 H=224"));
  g_assert_nonnull(strstr(out, "N=32 C=64 H=56 W=56 K=256 R=1 S=1 pad=0 stride=1 groups=1"));
  g_clear_pointer(&out, g_free);
  g_clear_pointer(&err, g_free);
  g_assert_cmpint(run_fake(NULL, "--dry-run --devices 1 --skip kernels,copy", &out, &err), ==, 0);
  g_assert_nonnull(strstr(out, "allreduce/auto/auto/r1/n1/8\n"));
  g_assert_null(strstr(out, "Ring"));
  g_assert_nonnull(strstr(out, "multi-GPU points are absent"));
  g_assert_nonnull(strstr(out, "\n31 batches\n"));
}

static void
test_dry_run_model(void)
{
  /* a shipped model: its layers become batches, layers without a probe are explained */
  g_autofree char *model = g_build_filename(DDP_SRCDIR, "models", "bert-base.model", NULL);
  if (!g_file_test(model, G_FILE_TEST_EXISTS)) {
    g_test_skip("models/bert-base.model is not shipped");
    return;
  }
  g_autofree char *args = g_strdup_printf("--dry-run --skip allreduce,copy --precision fp16 --batch 8 --model %s", model);
  g_autofree char *out = NULL, *err = NULL;
  int status = run_fake(NULL, args, &out, &err);
  if (status != 0)
    g_test_message("%s", err);
  g_assert_cmpint(status, ==, 0);
  g_assert_nonnull(strstr(out, "kernel/fp16/b8/linear:"));
  g_assert_nonnull(strstr(out, "not measured"));
}

static void
test_bad_options(void)
{
  const char *cases[][2] = {
    { "--dry-run --precision fp8", "--precision" },
    { "--dry-run --variants Ring/Fast", "--variants" },
    { "--dry-run --max-bytes 12Q", "--max-bytes" },
    { "--dry-run --skip everything", "--skip" },
    { "--dry-run --devices 2 --gpu-counts 4", "--gpu-counts" },
    { "--dry-run --model /nonexistent/x.model", "/nonexistent/x.model" },
    /* the numeric flags through the range table (issue 20): decimal only, inside their ranges */
    { "--dry-run --devices 0x2", "--devices: \"0x2\" must be a whole number from 0 to 1024" },
    { "--dry-run --target-ms inf", "--target-ms: \"inf\" must be a number from 0.001" },
    { "--dry-run --step-factor 1", "--step-factor: \"1\" must be a whole number from 2" },
    { "--dry-run --iters 1e9", "--iters" },
    { "--dry-run --gpu-counts 2,0x4", "--gpu-counts: \"0x4\"" },
    { "--dry-run --batch 8,2.5", "--batch: \"2.5\"" },
    { "stray", "unexpected" },
  };
  for (gsize i = 0; i < G_N_ELEMENTS(cases); i++) {
    g_autofree char *out = NULL, *err = NULL;
    g_assert_cmpint(run_fake(NULL, cases[i][0], &out, &err), ==, 2);
    g_assert_true(one_line(err));
    g_assert_nonnull(strstr(err, cases[i][1]));
  }
}

static void
test_list(Tmp *t, G_GNUC_UNUSED gconstpointer data)
{
  g_autofree char *out = NULL, *err = NULL;
  g_autofree char *args = g_strdup_printf("--list --db %s", t->db);
  /* a missing file */
  g_assert_cmpint(run_fake(NULL, args, &out, &err), ==, 2);
  g_assert_true(one_line(err));
  g_clear_pointer(&out, g_free);
  g_clear_pointer(&err, g_free);
  /* not a database */
  g_assert_true(g_file_set_contents(t->db, "0123456789abcdef not a database, long enough for a header ......"
                                    "......................................................", -1, NULL));
  g_assert_cmpint(run_fake(NULL, args, &out, &err), ==, 2);
  g_assert_true(one_line(err));
  g_assert_nonnull(strstr(err, "not an SQLite database"));
  g_clear_pointer(&out, g_free);
  g_clear_pointer(&err, g_free);
  /* measuring into it is refused the same way, and the file is left alone */
  g_autofree char *measure = g_strdup_printf("--db %s", t->db);
  g_assert_cmpint(run_fake(NULL, measure, &out, &err), ==, 2);
  g_assert_nonnull(strstr(err, "not an SQLite database"));
  g_clear_pointer(&out, g_free);
  g_clear_pointer(&err, g_free);
  g_unlink(t->db);
  /* ours, with one interrupted run */
  {
    g_autoptr(GError) error = NULL;
    g_autoptr(DdpCalibDb) db = ddp_calibdb_open(t->db, DDP_CALIBDB_WRITE, &error);
    DdpCalibRun r = { .host = "node7", .gpu_name = "NVIDIA H100 80GB HBM3", .gpus_per_node = 8, .nodes = 1,
                      .ranks = 8, .driver_version = "13.0", .cuda_version = "13.0", .nccl_version = "2.28.9",
                      .note = "a note" };
    gint64 id = ddp_calibdb_run_begin(db, &r, &error);
    g_assert_true(ddp_calibdb_batch_begin(db, id, "b", &error) && ddp_calibdb_batch_commit(db, NULL, &error));
    g_assert_no_error(error);
  }
  g_assert_cmpint(run_fake(NULL, args, &out, &err), ==, 0);
  g_assert_nonnull(strstr(out, "NVIDIA H100 80GB HBM3"));
  g_assert_nonnull(strstr(out, "unfinished"));
  g_assert_nonnull(strstr(out, "note: a note"));
  /* resuming it from another machine is refused */
  g_clear_pointer(&out, g_free);
  g_clear_pointer(&err, g_free);
  g_autofree char *resume = g_strdup_printf("--db %s --resume", t->db);
  g_assert_cmpint(run_fake(NULL, resume, &out, &err), ==, 2);
  g_assert_nonnull(strstr(err, "start a new run"));
}

static void
test_no_gpu(Tmp *t, G_GNUC_UNUSED gconstpointer data)
{
  const char *env[] = { "DDPSIM_FAKE_GPUS=0", NULL };
  g_autofree char *out = NULL, *err = NULL;
  g_autofree char *args = g_strdup_printf("--db %s", t->db);
  g_assert_cmpint(run_fake(env, args, &out, &err), ==, 3);
  g_assert_true(one_line(err));
  g_assert_nonnull(strstr(err, "no CUDA device visible"));
  g_assert_false(g_file_test(t->db, G_FILE_TEST_EXISTS)); /* nothing written */
}

/* ---- measuring (the stand-in device) ------------------------------------------------------- */

/* AllReduce 8 B … 64 MiB with NCCL's choice and Ring/Simple at 2, 4, 8 GPUs; fp16 kernels of the
 * built-in layer set at batch 8; copies. */
#define SMALL "--max-bytes 64M --variants auto,Ring/Simple,NVLS/Simple --batch 8 --precision fp16"

static void
test_fake_calibrate_fit(Tmp *t, G_GNUC_UNUSED gconstpointer data)
{
  g_autofree char *out = NULL, *err = NULL;
  g_autofree char *args = g_strdup_printf("--db %s " SMALL, t->db);
  const char *env[] = { "DDPSIM_FAKE_REFUSE=NVLS", NULL };
  int status = run_fake(env, args, &out, &err);
  if (status != 0)
    g_test_message("stdout:\n%s\nstderr:\n%s", out, err);
  g_assert_cmpint(status, ==, 0);
  g_assert_nonnull(strstr(out, "finished"));
  g_assert_nonnull(strstr(out, "NCCL refused NVLS/Simple"));
  g_autoptr(GError) error = NULL;
  g_autoptr(DdpCalibDb) db = ddp_calibdb_open(t->db, DDP_CALIBDB_WRITE, &error);
  g_assert_no_error(error);
  g_assert_true(ddp_calibdb_check(db, &error));
  g_autoptr(DdpCalibRun) r = ddp_calibdb_run_get(db, 1, &error);
  g_assert_nonnull(r->finished);
  g_assert_cmpstr(r->nccl_version, ==, "fake");
  g_assert_cmpint(r->ranks, ==, 8);
  /* auto and Ring/Simple: 3 GPU counts × 24 sizes, in place */
  g_assert_cmpint(r->n_allreduce_points, ==, 2 * 3 * 24);
  g_assert_cmpint(r->n_kernel_points, >, 0);

  /* The stand-in's Ring Simple at 8 ranks is α = 56 µs, busbw 315 GB/s → algbw 180 GB/s; at 4
   * ranks α = 8.4 + 47.6·6/14 = 28.8 µs, algbw 315·4/6 = 210 GB/s. */
  g_autoptr(DdpFit) fit = ddp_fit_from_db(db, NULL, 0, NULL, &error);
  g_assert_no_error(error);
  DdpFitAlphaBeta p;
  g_assert_true(ddp_fit_allreduce_params(fit, "Ring", "Simple", 8, 1, &p));
  g_assert_true(p.exact);
  g_assert_cmpfloat_with_epsilon(p.alpha_us, 56.0, 1e-6);
  g_assert_cmpfloat_with_epsilon(p.algbw_GBs, 180.0, 1e-6);
  g_assert_true(ddp_fit_allreduce_params(fit, "Ring", "Simple", 4, 1, &p));
  g_assert_cmpfloat_with_epsilon(p.alpha_us, 28.8, 1e-6);
  g_assert_cmpfloat_with_epsilon(p.algbw_GBs, 210.0, 1e-6);
  g_assert_false(ddp_fit_allreduce_params(fit, "NVLS", "Simple", 8, 1, &p)); /* refused: no points */
  /* kernels: GEMMs at 500 TFLOP/s (+5 µs) → fp16 efficiency 500/989.4 against the H100 spec */
  DdpFitEfficiency e;
  g_assert_true(ddp_fit_efficiency(fit, DDP_LAYER_LINEAR, DDP_PRECISION_FP16, &e));
  g_assert_cmpfloat_with_epsilon(e.rate, 500.0, 1e-6);
  g_assert_cmpfloat_with_epsilon(e.overhead_us, 5.0, 1e-6);
  g_assert_cmpfloat_with_epsilon(e.efficiency, 500.0 / 989.4, 1e-9);
  g_assert_true(ddp_fit_memory(fit, &e));
  g_assert_cmpfloat_with_epsilon(e.rate, 3000.0, 1e-6);
  /* measured layer times of the built-in set, e.g. linear 4096×1024 at batch 8 (M = 4096):
   * three GEMMs of 2·4096·4096·1024 = 3.43597e10 FLOPs, each 5 + 68.719 µs */
  g_assert_true(ddp_fit_layer_time(fit, "linear:4096x1024,4096:4.29706e+09:8.59203e+09:1.04858e+07", DDP_PRECISION_FP16, 8,
                                   NULL, NULL));
  double fwd, bwd;
  g_assert_true(ddp_fit_layer_time(fit, "linear:4096x1024,4096:4.29706e+09:8.59203e+09:1.04858e+07", DDP_PRECISION_FP16, 8,
                                   &fwd, &bwd));
  g_assert_cmpfloat_with_epsilon(fwd, 5 + 2.0 * 4096 * 4096 * 1024 / 500e6, 1e-6);
  g_assert_cmpfloat_with_epsilon(bwd, 2 * (5 + 2.0 * 4096 * 4096 * 1024 / 500e6), 1e-6);
}

/* `predict --calibration` uses the measurement: the stand-in's Ring Simple at 8 ranks is α = 56 µs
 * and algbw 180 GB/s, so each 4 198 400-byte bucket of tests/data/tiny.model takes
 * 56 + 4 198 400 / 180 000 = 79.324 µs instead of the NVLS model's time. */
static void
test_fake_predict_uses_calibration(Tmp *t, G_GNUC_UNUSED gconstpointer data)
{
  g_autofree char *out = NULL, *err = NULL;
  g_autofree char *args = g_strdup_printf("--db %s --max-bytes 64M --variants auto,Ring/Simple --batch 8 --precision fp16", t->db);
  g_assert_cmpint(run_fake(NULL, args, &out, &err), ==, 0);
  g_autofree char *model = g_test_build_filename(G_TEST_DIST, "data", "tiny.model", NULL);
  const char *ddpsim = g_getenv("DDPSIM");
  const char *argv_with[] = { ddpsim, "predict", "--model", model, "--cluster", "dgx-h100", "--gpus", "8",
                              "--calibration", t->db, "--csv", NULL };
  const char *argv_without[] = { ddpsim, "predict", "--model", model, "--cluster", "dgx-h100", "--gpus", "8", "--csv", NULL };
  g_autofree char *with = NULL, *without = NULL, *e1 = NULL, *e2 = NULL;
  int s1 = 0, s2 = 0;
  g_assert_true(g_spawn_sync(NULL, (char **)argv_with, NULL, G_SPAWN_DEFAULT, NULL, NULL, &with, &e1, &s1, NULL));
  g_assert_true(g_spawn_sync(NULL, (char **)argv_without, NULL, G_SPAWN_DEFAULT, NULL, NULL, &without, &e2, &s2, NULL));
  g_assert_true(g_spawn_check_wait_status(s1, NULL));
  g_assert_true(g_spawn_check_wait_status(s2, NULL));
  /* CSV rows: index,bytes,wire_bytes,params,ready_ms,launch_ms,start_ms,end_ms,algorithm,protocol */
  g_auto(GStrv) lines = g_strsplit(with, "\n", -1);
  g_assert_cmpuint(g_strv_length(lines), >=, 3);
  for (guint i = 1; i <= 2; i++) {
    g_auto(GStrv) f = g_strsplit(lines[i], ",", -1);
    double start = g_ascii_strtod(f[6], NULL), end = g_ascii_strtod(f[7], NULL);
    g_assert_cmpfloat_with_epsilon(end - start, 0.079324, 1.5e-6);
    g_assert_cmpstr(f[8], ==, "ring");
  }
  g_assert_cmpstr(with, !=, without);
}

static void
test_fake_one_gpu(Tmp *t, G_GNUC_UNUSED gconstpointer data)
{
  const char *env[] = { "DDPSIM_FAKE_GPUS=1", NULL };
  g_autofree char *out = NULL, *err = NULL;
  g_autofree char *args = g_strdup_printf("--db %s --skip kernels,copy", t->db);
  g_assert_cmpint(run_fake(env, args, &out, &err), ==, 0);
  g_autoptr(GError) error = NULL;
  g_autoptr(DdpCalibDb) db = ddp_calibdb_open(t->db, DDP_CALIBDB_READ, &error);
  g_autoptr(DdpCalibRun) r = ddp_calibdb_run_get(db, 1, &error);
  g_assert_nonnull(strstr(r->note, "multi-GPU points are absent"));
  g_assert_cmpint(r->n_allreduce_points, ==, 31);
  g_autoptr(DdpFit) fit = ddp_fit_from_db(db, NULL, 0, NULL, &error);
  guint n;
  const DdpCalibAllreduceFit *rows = ddp_fit_allreduce_rows(fit, &n);
  g_assert_cmpuint(n, ==, 1);
  g_assert_cmpint(rows[0].ranks, ==, 1);
  g_assert_cmpfloat_with_epsilon(rows[0].alpha_us, 6.0, 1e-9); /* the launch latency */
  g_assert_cmpfloat(rows[0].algbw_GBs, ==, 0);
}

/* Kills @argv once the database holds at least @batches committed batches of run 1. */
static gboolean
run_and_kill(char **argv, char **envp, const char *db_path, gint64 batches)
{
  GPid pid;
  g_autoptr(GError) error = NULL;
  g_assert_true(g_spawn_async(NULL, argv, envp,
                              G_SPAWN_DO_NOT_REAP_CHILD | G_SPAWN_STDOUT_TO_DEV_NULL | G_SPAWN_STDERR_TO_DEV_NULL,
                              NULL, NULL, &pid, &error));
  gint64 committed = 0;
  for (int i = 0; i < 3000 && committed < batches; i++) {
    g_usleep(10000);
    g_autoptr(DdpCalibDb) db = g_file_test(db_path, G_FILE_TEST_EXISTS) ? ddp_calibdb_open(db_path, DDP_CALIBDB_READ, NULL) : NULL;
    g_autoptr(DdpCalibRun) r = db ? ddp_calibdb_run_get(db, 1, NULL) : NULL;
    committed = r ? r->n_batches : 0;
  }
  kill(pid, SIGKILL);
  int status = 0;
  waitpid(pid, &status, 0);
  g_spawn_close_pid(pid);
  g_assert_cmpint(committed, >=, batches);
  return WIFSIGNALED(status);
}

static void
test_fake_interrupt_resume(Tmp *t, G_GNUC_UNUSED gconstpointer data)
{
  g_autofree char *bin = fake_binary();
  /* the reference: uninterrupted */
  g_autofree char *out = NULL, *err = NULL;
  g_autofree char *ref_args = g_strdup_printf("--db %s " SMALL, t->db2);
  g_assert_cmpint(run_fake(NULL, ref_args, &out, &err), ==, 0);
  /* the same, killed after a few batches (2 ms per measurement keeps it running meanwhile) */
  g_autofree char *cmd = g_strdup_printf("%s --db %s " SMALL, bin, t->db);
  g_auto(GStrv) argv = NULL;
  g_assert_true(g_shell_parse_argv(cmd, NULL, &argv, NULL));
  g_auto(GStrv) envp = g_environ_setenv(g_get_environ(), "DDPSIM_FAKE_DELAY_US", "2000", TRUE);
  g_assert_true(run_and_kill(argv, envp, t->db, 20));
  g_autoptr(GError) error = NULL;
  gint64 before;
  {
    g_autoptr(DdpCalibDb) db = ddp_calibdb_open(t->db, DDP_CALIBDB_READ, &error);
    g_assert_true(ddp_calibdb_check(db, &error));
    g_autoptr(DdpCalibRun) r = ddp_calibdb_run_get(db, 1, &error);
    g_assert_null(r->finished);
    before = r->n_batches;
  }
  /* resume (measuring options on the command line are ignored: the run's own are used) */
  g_clear_pointer(&out, g_free);
  g_clear_pointer(&err, g_free);
  g_autofree char *resume = g_strdup_printf("--db %s --resume --batch 99", t->db);
  int status = run_fake(NULL, resume, &out, &err);
  if (status != 0)
    g_test_message("stdout:\n%s\nstderr:\n%s", out, err);
  g_assert_cmpint(status, ==, 0);
  g_assert_nonnull(strstr(out, "resuming run 1"));
  /* same batches, same points as the uninterrupted run */
  g_autoptr(DdpCalibDb) a = ddp_calibdb_open(t->db, DDP_CALIBDB_READ, &error);
  g_autoptr(DdpCalibDb) b = ddp_calibdb_open(t->db2, DDP_CALIBDB_READ, &error);
  g_assert_no_error(error);
  g_autoptr(DdpCalibRun) ra = ddp_calibdb_run_get(a, 1, &error);
  g_autoptr(DdpCalibRun) rb = ddp_calibdb_run_get(b, 1, &error);
  g_assert_nonnull(ra->finished);
  g_assert_cmpint(ra->n_batches, >, before);
  g_assert_cmpint(ra->n_batches, ==, rb->n_batches);
  g_assert_cmpint(ra->n_allreduce_points, ==, rb->n_allreduce_points);
  g_assert_cmpint(ra->n_kernel_points, ==, rb->n_kernel_points);
  g_autoptr(GHashTable) ba = ddp_calibdb_batches(a, 1, &error);
  g_autoptr(GHashTable) bb = ddp_calibdb_batches(b, 1, &error);
  GHashTableIter it;
  gpointer key;
  g_hash_table_iter_init(&it, bb);
  while (g_hash_table_iter_next(&it, &key, NULL))
    g_assert_true(g_hash_table_contains(ba, key));
  /* a finished run is not resumed again */
  g_clear_pointer(&out, g_free);
  g_clear_pointer(&err, g_free);
  g_assert_cmpint(run_fake(NULL, resume, &out, &err), ==, 2);
  g_assert_nonnull(strstr(err, "no interrupted calibration run"));
}

/* ---- a real GPU ---------------------------------------------------------------------------- */

static gboolean
have_gpu(void)
{
  g_autofree char *bin = real_binary();
  if (!g_file_test(bin, G_FILE_TEST_IS_EXECUTABLE)) {
    g_test_skip("ddpsim-calibrate is not built (configure found no CUDA toolkit with NCCL)");
    return FALSE;
  }
  g_autofree char *out = NULL, *err = NULL;
  int status = run_with(bin, NULL, "--info", &out, &err);
  if (status == 3) {
    g_autofree char *why = g_strdup_printf("no GPU visible (%s)", g_strstrip(err));
    g_test_skip(why);
    return FALSE;
  }
  g_assert_cmpint(status, ==, 0);
  g_test_message("%s", out);
  return TRUE;
}

#define GPU_SMALL "--max-bytes 64K --variants auto,Ring/Simple --batch 2 --precision fp16 --warmup 1 --iters 3"

static void
test_gpu_calibrate(Tmp *t, G_GNUC_UNUSED gconstpointer data)
{
  if (!have_gpu())
    return;
  g_autofree char *bin = real_binary();
  g_autofree char *out = NULL, *err = NULL;
  g_autofree char *args = g_strdup_printf("--db %s " GPU_SMALL, t->db);
  int status = run_with(bin, NULL, args, &out, &err);
  if (status != 0)
    g_test_message("stdout:\n%s\nstderr:\n%s", out, err);
  g_assert_cmpint(status, ==, 0);
  g_autoptr(GError) error = NULL;
  g_autoptr(DdpCalibDb) db = ddp_calibdb_open(t->db, DDP_CALIBDB_WRITE, &error);
  g_assert_no_error(error);
  g_assert_true(ddp_calibdb_check(db, &error));
  g_autoptr(DdpCalibRun) r = ddp_calibdb_run_get(db, 1, &error);
  g_assert_nonnull(r->finished);
  g_assert_cmpint(r->n_allreduce_points, >, 0);
  g_assert_cmpint(r->n_kernel_points, >, 0);
  g_autoptr(DdpFit) fit = ddp_fit_from_db(db, NULL, 0, NULL, &error);
  g_assert_no_error(error);
  guint n;
  const DdpCalibAllreduceFit *ar = ddp_fit_allreduce_rows(fit, &n);
  g_assert_cmpuint(n, >, 0);
  g_assert_cmpfloat(ar[0].alpha_us, >, 0);
  DdpFitEfficiency e;
  g_assert_true(ddp_fit_efficiency(fit, DDP_LAYER_LINEAR, DDP_PRECISION_FP16, &e));
  g_assert_cmpfloat(e.rate, >, 0);
  g_assert_true(ddp_fit_memory(fit, &e));
}

static void
test_gpu_resume(Tmp *t, G_GNUC_UNUSED gconstpointer data)
{
  if (!have_gpu())
    return;
  g_autofree char *bin = real_binary();
  g_autofree char *cmd = g_strdup_printf("%s --db %s " GPU_SMALL, bin, t->db);
  g_auto(GStrv) argv = NULL;
  g_assert_true(g_shell_parse_argv(cmd, NULL, &argv, NULL));
  if (!run_and_kill(argv, NULL, t->db, 3)) {
    g_test_skip("the calibration finished before it could be interrupted");
    return;
  }
  g_autofree char *out = NULL, *err = NULL;
  g_autofree char *args = g_strdup_printf("--db %s --resume", t->db);
  int rc = run_with(bin, NULL, args, &out, &err);
  if (rc != 0)
    g_test_message("stdout:\n%s\nstderr:\n%s", out, err);
  g_assert_cmpint(rc, ==, 0);
  g_autoptr(GError) error = NULL;
  g_autoptr(DdpCalibDb) db = ddp_calibdb_open(t->db, DDP_CALIBDB_READ, &error);
  g_assert_true(ddp_calibdb_check(db, &error));
  g_autoptr(DdpCalibRun) r = ddp_calibdb_run_get(db, 1, &error);
  g_assert_nonnull(r->finished);
}

int
main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_autofree char *fake = fake_binary();
  if (!g_file_test(fake, G_FILE_TEST_IS_EXECUTABLE)) {
    g_printerr("%s is not built\n", fake);
    return 77;
  }
  g_test_add_func("/calibrate/help", test_help);
  g_test_add_func("/calibrate/dry-run", test_dry_run);
  g_test_add_func("/calibrate/dry-run-model", test_dry_run_model);
  g_test_add_func("/calibrate/bad-options", test_bad_options);
  g_test_add("/calibrate/list", Tmp, NULL, tmp_setup, test_list, tmp_teardown);
  g_test_add("/calibrate/no-gpu", Tmp, NULL, tmp_setup, test_no_gpu, tmp_teardown);
  g_test_add("/calibrate/fake/calibrate-and-fit", Tmp, NULL, tmp_setup, test_fake_calibrate_fit, tmp_teardown);
  g_test_add("/calibrate/fake/one-gpu", Tmp, NULL, tmp_setup, test_fake_one_gpu, tmp_teardown);
  g_test_add("/calibrate/fake/predict-uses-calibration", Tmp, NULL, tmp_setup, test_fake_predict_uses_calibration, tmp_teardown);
  g_test_add("/calibrate/fake/interrupt-and-resume", Tmp, NULL, tmp_setup, test_fake_interrupt_resume, tmp_teardown);
  g_test_add("/calibrate/gpu/calibrate-and-fit", Tmp, NULL, tmp_setup, test_gpu_calibrate, tmp_teardown);
  g_test_add("/calibrate/gpu/interrupt-and-resume", Tmp, NULL, tmp_setup, test_gpu_resume, tmp_teardown);
  return g_test_run();
}
