/* Tests for ncclimport: both layouts of all_reduce_perf output (tests/data/nccl-tests/, reformatted
 * from the public curves), what is derived from the header and rank lines, every refusal with its
 * file:line, the store with provenance and idempotent re-import, and the issue-10 acceptance: fit
 * on every other size of a public curve, predict the others, median error ≤ 5 %.  The
 * `ddpsim fit --import` verb is run through the real binary for its exit codes. */
#define _DEFAULT_SOURCE /* fork, waitpid, _exit, SIGKILL under -std=c11 */

#include "fileio.h"
#include "ncclimport.h"
#include "commcurve.h"
#include "fit.h"
#include "run-ddpsim.h"

#include <glib/gstdio.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>
#include <math.h>
#include <string.h>

static char *
fixture(const char *name)
{
  return g_test_build_filename(G_TEST_DIST, "data", "nccl-tests", name, NULL);
}

static char *
read_fixture(const char *name)
{
  g_autofree char *path = fixture(name);
  char *text = NULL;
  g_assert_true(g_file_get_contents(path, &text, NULL, NULL));
  return text;
}

/* ---- parsing ------------------------------------------------------------------------------- */

static void
test_parse_current(void)
{
  g_autofree char *text = read_fixture("oci-a100-1node.txt");
  g_autoptr(GError) error = NULL;
  g_autoptr(DdpNcclTests) t = ddp_nccl_tests_parse("oci.txt", text, &error);
  g_assert_no_error(error);
  /* 64 B … 8 GiB in ×2 steps: 2^6 … 2^33 = 28 rows */
  g_assert_cmpuint(t->rows->len, ==, 28);
  g_assert_cmpint(t->ranks, ==, 8);           /* 8 rank lines */
  g_assert_false(t->ranks_from_ratio);
  g_assert_cmpint(t->nodes, ==, 1);           /* one host name */
  g_assert_cmpstr(t->hosts, ==, "gpu-node-1");
  g_assert_cmpint(t->gpus_per_process, ==, 8); /* nGpus 8: -g 8 */
  g_assert_cmpint(t->threads, ==, 1);
  g_assert_cmpint(t->iterations, ==, 20);     /* "iters: 20", not "warmup iters: 5" or "agg iters: 1" */
  g_assert_cmpstr(t->gpu_name, ==, "NVIDIA A100-SXM4-40GB");
  g_assert_cmpstr(t->type, ==, "float");
  g_assert_cmpstr(t->redop, ==, "sum");
  g_assert_cmpstr(t->nccl_version, ==, "");
  g_assert_cmpfloat_with_epsilon(t->avg_busbw, 81.1118, 1e-9);
  const DdpNcclTestsRow *first = &g_array_index(t->rows, DdpNcclTestsRow, 0);
  g_assert_cmpint(first->bytes, ==, 64);
  g_assert_cmpfloat_with_epsilon(first->oop_us, 32.01, 1e-9);
  g_assert_cmpfloat_with_epsilon(first->ip_us, 31.82, 1e-9);
  const DdpNcclTestsRow *last = &g_array_index(t->rows, DdpNcclTestsRow, 27);
  g_assert_cmpint(last->bytes, ==, G_GINT64_CONSTANT(8589934592));
  g_assert_cmpfloat_with_epsilon(last->oop_us, 63929, 1e-9);
  g_assert_cmpfloat_with_epsilon(last->oop_busbw, 235.14, 1e-9);
}

static void
test_parse_old(void)
{
  g_autofree char *text = read_fixture("aws-p4d-2node-old.txt");
  g_autoptr(GError) error = NULL;
  g_autoptr(DdpNcclTests) t = ddp_nccl_tests_parse("p4d.txt", text, &error);
  g_assert_no_error(error);
  g_assert_cmpuint(t->rows->len, ==, 28);     /* 8 B … 1 GiB */
  g_assert_cmpint(t->ranks, ==, 16);          /* rank lines without "Group" */
  g_assert_cmpint(t->nodes, ==, 2);           /* ip-172-31-10, ip-172-31-11 */
  g_assert_cmpstr(t->hosts, ==, "ip-172-31-10,ip-172-31-11");
  g_assert_cmpint(t->gpus_per_process, ==, 1);
  g_assert_cmpstr(t->redop, ==, "sum");
  const DdpNcclTestsRow *r = &g_array_index(t->rows, DdpNcclTestsRow, 27);
  g_assert_cmpfloat_with_epsilon(r->ip_us, 26420, 1e-9);
  g_assert_cmpfloat_with_epsilon(r->oop_busbw, 76.21, 1e-9);
}

/* The oldest layout (no redop), no rank lines, NCCL_DEBUG noise, the version from two places. */
static void
test_parse_variants(void)
{
  g_autoptr(GError) error = NULL;
  /* busbw/algbw = 1.75 = 2(n−1)/n → n = 2/(2 − 1.75) = 8 */
  const char *oldest =
    "node1:123:123 [0] NCCL INFO NCCL version 2.18.3+cuda12.2\n"
    "# nThread 1 nGpus 8 minBytes 1048576 maxBytes 2097152 step: 2(factor) warmup iters: 5 iters: 50\n"
    "     1048576        262144   float    76.71   13.67   23.92  0e+00    77.73   13.49   23.61  0e+00\n"
    "     2097152        524288   float    112.4   18.66   32.66  0e+00    113.7   18.44   32.27  0e+00\n";
  g_autoptr(DdpNcclTests) t = ddp_nccl_tests_parse("oldest.txt", oldest, &error);
  g_assert_no_error(error);
  g_assert_cmpuint(t->rows->len, ==, 2);
  g_assert_true(t->ranks_from_ratio);
  g_assert_cmpint(t->ranks, ==, 8);
  g_assert_cmpint(t->nodes, ==, 1);
  g_assert_cmpint(t->iterations, ==, 50);
  g_assert_cmpstr(t->redop, ==, "");
  g_assert_cmpstr(t->nccl_version, ==, "2.18.3+cuda12.2");
  /* nccl-tests ≥ 2.13 names the library: 21903 → 2.19.3 */
  const char *versioned =
    "# nccl-tests version 2.13.8 nccl-headers=21903 nccl-library=21903\n"
    "#  Rank  0 Group  0 Pid  1 on h device  0 [0x18] NVIDIA H100 80GB HBM3\n"
    "#  Rank  1 Group  0 Pid  1 on h device  1 [0x2a] NVIDIA H100 80GB HBM3\n"
    "     1048576        262144     float     sum      -1    20.00   52.43   52.43      0    20.00   52.43   52.43      0\n";
  g_autoptr(DdpNcclTests) v = ddp_nccl_tests_parse("v.txt", versioned, &error);
  g_assert_no_error(error);
  g_assert_cmpstr(v->nccl_version, ==, "2.19.3");
  g_assert_cmpint(v->ranks, ==, 2);           /* busbw/algbw = 1 = 2(2−1)/2 */
  g_assert_cmpstr(v->gpu_name, ==, "NVIDIA H100 80GB HBM3");
}

static void
test_parse_errors(void)
{
  static const char head[] = "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n";
  static const struct { const char *text; const char *message; } cases[] = {
    { "hello\nworld\n", "bad.txt:1: no all_reduce_perf result row" },
    { "", "bad.txt:1: no all_reduce_perf result row" },
    /* all_gather prints redop "none" */
    { "        1024           256     float    none      -1    10.00    0.10    0.09      0    10.00    0.10    0.09      0\n",
      "bad.txt:1: reduction \"none\"" },
    /* broadcast: root 0 */
    { "        1024           256     float     sum       0    10.00    0.10    0.09      0    10.00    0.10    0.09      0\n",
      "bad.txt:1: root 0: a rooted collective" },
    { "        1024           256     float     sum      -1    10.00    0.10\n", "bad.txt:1: a result row of all_reduce_perf has 11 to 13 fields" },
    { "        1024           256     float     sum      -1     fast    0.10    0.09      0    10.00    0.10    0.09      0\n",
      "bad.txt:1: out-of-place time: \"fast\" must be a number above 0 and at most 1e+09" },
    { "        1024           256     float     sum      -1     0.00    0.10    0.09      0    10.00    0.10    0.09      0\n",
      "bad.txt:1: out-of-place time: \"0.00\" must be a number above 0 and at most 1e+09" },
    /* issue 20: header and row numbers through the range table */
    { "# nThread 1 nGpus 2147483648\n", "bad.txt:1: nGpus: \"2147483648\" must be a whole number from 1 to 1024" },
    { "# nThread -1 nGpus 8\n", "bad.txt:1: nThread: \"-1\" must be a whole number from 1 to 1024" },
    { "# nThread 1 nGpus 8 minBytes 8 iters: 0x14\n", "bad.txt:1: iters: \"0x14\"" },
    { "  9223372036854775807  256  float  sum  -1  10.00  0.10  0.09  0  10.00  0.10  0.09  0\n",
      "bad.txt:1: size: \"9223372036854775807\" must be a whole number from 0 to 1125899906842624" },
    { "        1024           256     float     sum      -1    10.00    -0.10    0.09      0    10.00    0.10    0.09      0\n",
      "bad.txt:1: out-of-place algbw: \"-0.10\" must be a number from 0 to 100000" },
    { "        1024           256     float     sum      -1    10.00    0.10    0.09      0    10.00    0.10    0.09      0\n"
      "        2048           512      half     sum      -1    10.00    0.20    0.18      0    10.00    0.20    0.18      0\n",
      "bad.txt:2: half/sum after float/sum" },
    { "# nThread 1 nGpus 2\n"
      "        1024           256     float     sum      -1    10.00    0.10    0.09      0    10.00    0.10    0.09      0\n"
      "# nThread 1 nGpus 4\n", "bad.txt:3: a second test starts here (rows from line 2 already read)" },
    /* all_gather of an older layout (no redop): busbw/algbw = (n−1)/n = 0.5 with 2 ranks */
    { "#  Rank  0 Pid  1 on h device  0 [0x18] X\n#  Rank  1 Pid  1 on h device  1 [0x19] X\n"
      "    10485760       2621440     float    200.0   52.43   26.21  0e+00    200.0   52.43   26.21  0e+00\n",
      "bad.txt:3: busbw/algbw = 0.500 but an AllReduce over 2 ranks has 2(n-1)/n = 1.000" },
    { "#  Rank  0 Pid  1 on h device  0 [0x18] NVIDIA A100\n#  Rank  1 Pid  1 on h device  1 [0x19] NVIDIA H100\n",
      "bad.txt:2: rank 1 is a NVIDIA H100 but rank 0 is a NVIDIA A100" },
  };
  for (gsize i = 0; i < G_N_ELEMENTS(cases); i++) {
    g_autoptr(GError) error = NULL;
    g_autofree char *text = g_strdup(cases[i].text);
    if (i == 4) { /* with a column header, a short row is counted against it */
      g_free(text);
      text = g_strconcat(head, cases[i].text, NULL);
    }
    g_autoptr(DdpNcclTests) t = ddp_nccl_tests_parse("bad.txt", text, &error);
    g_assert_null(t);
    g_assert_error(error, DDP_FIT_ERROR, DDP_FIT_ERROR_IMPORT);
    if (i == 4)
      g_assert_nonnull(strstr(error->message, "bad.txt:2: 7 fields where the column header announces 13"));
    else if (!g_str_has_prefix(error->message, cases[i].message))
      g_error("case %zu: \"%s\" does not start with \"%s\"", i, error->message, cases[i].message);
    g_assert_null(strchr(error->message, '\n'));
  }
}

/* ---- storing ------------------------------------------------------------------------------- */

/* Issue 20: an import is one transaction with its run row.  A process killed (SIGKILL) after the run
 * row and some points were written leaves the file
 * with no run at all; before, the run row was committed on its own and stayed as an orphan. */
static void
test_import_killed(void)
{
  g_autofree char *dir = g_dir_make_tmp("ddpsim-ncclimport-XXXXXX", NULL);
  g_autofree char *db_path = g_build_filename(dir, "c.db", NULL);
  g_autofree char *log = fixture("oci-a100-1node.txt");
  g_autoptr(GError) error = NULL;
  g_clear_pointer(&(DdpCalibDb *){ ddp_calibdb_open(db_path, DDP_CALIBDB_UPDATE, &error) }, ddp_calibdb_close);
  g_assert_no_error(error);
  pid_t child = fork();
  g_assert_cmpint(child, >=, 0);
  if (child == 0) {
    DdpCalibDb *db = ddp_calibdb_open(db_path, DDP_CALIBDB_UPDATE, NULL);
    g_autoptr(DdpNcclTests) t = ddp_nccl_tests_read(log, NULL);
    gboolean again = FALSE;
    DdpCalibRun run = { .host = "h", .gpu_name = "g", .gpus_per_node = 8, .nodes = 1, .ranks = 8, .program = "p" };
    gint64 id = db && t ? ddp_calibdb_import_begin(db, &run, "import/nccl-tests", &t->source, &again, NULL) : 0;
    DdpCalibAllreducePoint p = { .algorithm = "auto", .protocol = "auto", .ranks = 8, .nodes = 1, .bytes = 8,
                                 .time_us = 10, .min_us = 10, .max_us = 10 };
    if (id > 0 && ddp_calibdb_batch_add_allreduce(db, &p, NULL))
      raise(SIGKILL);   /* killed mid-import: no commit, no close, no exit handlers */
    _exit(1);
  }
  int status = 0;
  g_assert_cmpint(waitpid(child, &status, 0), ==, child);
  g_assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
  g_autoptr(DdpCalibDb) db = ddp_calibdb_open(db_path, DDP_CALIBDB_READ, &error);
  g_assert_no_error(error);
  g_autoptr(GPtrArray) runs = ddp_calibdb_runs(db, &error);
  g_assert_cmpuint(runs->len, ==, 0);
  g_assert_true(ddp_calibdb_check(db, &error));
  g_clear_pointer(&db, ddp_calibdb_close);
  static const char *const suffixes[] = { "", "-journal", "-wal", "-shm" };
  for (gsize i = 0; i < G_N_ELEMENTS(suffixes); i++) {
    g_autofree char *p = g_strconcat(db_path, suffixes[i], NULL);
    g_unlink(p);
  }
  g_rmdir(dir);
}


static void
test_import_store(void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(DdpCalibDb) db = ddp_calibdb_open(":memory:", DDP_CALIBDB_WRITE, &error);
  g_assert_no_error(error);
  g_autofree char *path = fixture("oci-a100-1node.txt");
  gboolean again = TRUE;
  gint64 run = ddp_nccl_tests_import(db, path, NULL, &again, &error);
  g_assert_no_error(error);
  g_assert_cmpint(run, ==, 1);
  g_assert_false(again);
  g_autoptr(DdpCalibRun) r = ddp_calibdb_run_get(db, run, &error);
  g_assert_cmpstr(r->gpu_name, ==, "NVIDIA A100-SXM4-40GB");
  g_assert_cmpstr(r->host, ==, "gpu-node-1");
  g_assert_cmpint(r->ranks, ==, 8);
  g_assert_cmpint(r->nodes, ==, 1);
  g_assert_cmpint(r->gpus_per_node, ==, 8);
  g_assert_nonnull(r->finished);
  g_assert_cmpint(r->n_allreduce_points, ==, 56);   /* 28 rows × (out-of-place, in-place) */
  g_assert_nonnull(strstr(r->note, "-g 8 (GPUs per process)"));
  g_assert_true(g_str_has_prefix(r->arguments, "nThread 1 nGpus 8"));
  g_auto(DdpCalibImport) import = { 0 };
  g_assert_true(ddp_calibdb_import_get(db, run, &import, &error));
  g_assert_cmpstr(import.format, ==, "nccl-tests");
  g_assert_cmpstr(import.source, ==, path);
  g_autofree char *text = NULL;
  gsize length;
  g_assert_true(g_file_get_contents(path, &text, &length, NULL));
  g_autofree char *sha = g_compute_checksum_for_data(G_CHECKSUM_SHA256, (const guchar *)text, length);
  g_assert_cmpstr(import.sha256, ==, sha);
  g_assert_cmpint(import.size_bytes, ==, (gint64)length);
  g_assert_cmpint(import.gpus_per_process, ==, 8);
  g_assert_true(g_str_has_suffix(import.mtime, "Z"));
  g_assert_nonnull(import.imported);
  /* the same bytes again: not stored twice */
  g_assert_cmpint(ddp_nccl_tests_import(db, path, NULL, &again, &error), ==, run);
  g_assert_true(again);
  g_autoptr(GPtrArray) runs = ddp_calibdb_runs(db, &error);
  g_assert_cmpuint(runs->len, ==, 1);
  g_assert_true(ddp_calibdb_check(db, &error));
  /* a measured run has no import row */
  g_auto(DdpCalibImport) none = { 0 };
  g_assert_false(ddp_calibdb_import_get(db, 42, &none, &error));
  g_assert_error(error, DDP_CALIBDB_ERROR, DDP_CALIBDB_ERROR_NOT_FOUND);
  g_clear_error(&error);
  /* labels and a node override */
  g_autofree char *old = fixture("aws-p4d-2node-old.txt");
  DdpNcclImportOptions o = { "Ring", "Simple", 4 };
  gint64 run2 = ddp_nccl_tests_import(db, old, &o, &again, &error);
  g_assert_no_error(error);
  g_autoptr(GArray) points = ddp_calibdb_allreduce_points(db, &run2, 1, &error);
  g_assert_cmpuint(points->len, ==, 56);
  const DdpCalibAllreducePoint *p = &g_array_index(points, DdpCalibAllreducePoint, 0);
  g_assert_cmpstr(p->algorithm, ==, "Ring");
  g_assert_cmpstr(p->protocol, ==, "Simple");
  g_assert_cmpint(p->nodes, ==, 4);
  g_assert_cmpint(p->ranks, ==, 16);
  /* a refused file writes nothing */
  g_autofree char *missing = fixture("no-such-file.txt");
  g_assert_cmpint(ddp_nccl_tests_import(db, missing, NULL, &again, &error), ==, 0);
  g_assert_error(error, DDP_FILE_ERROR, DDP_FILE_ERROR_READ);   /* the checked reader's (fileio.h) */
  g_autoptr(GPtrArray) after = ddp_calibdb_runs(db, NULL);
  g_assert_cmpuint(after->len, ==, 2);
}

/* ---- the acceptance: half a curve predicts the other half ---------------------------------- */

/* Writes @text with only every other result row (rows 0, 2, 4, …) to @path. */
static void
write_even_rows(const char *text, const char *path)
{
  g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
  GString *out = g_string_new(NULL);
  guint row = 0;
  for (guint i = 0; lines[i]; i++) {
    const char *p = lines[i];
    while (*p == ' ')
      p++;
    gboolean is_row = g_ascii_isdigit(*p);
    if (!is_row || row++ % 2 == 0)
      g_string_append_printf(out, "%s\n", lines[i]);
  }
  g_assert_true(g_file_set_contents(path, out->str, -1, NULL));
  g_string_free(out, TRUE);
}

static int
compare_double(gconstpointer a, gconstpointer b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double
median(GArray *v)
{
  g_array_sort(v, compare_double);
  guint n = v->len;
  double *d = (double *)(void *)v->data;
  return n % 2 ? d[n / 2] : 0.5 * (d[n / 2 - 1] + d[n / 2]);
}

/* Fits the even rows of @name, predicts the in-place time of each odd row (the fit prefers the
 * in-place points, as DDP reduces in place); returns the median |error| and sets *worst. */
static double
half_curve_error(const char *name, int ranks, int nodes, DdpCommCurveInterpolation mode, double *worst)
{
  g_autofree char *text = read_fixture(name);
  g_autofree char *dir = g_dir_make_tmp("test-ncclimport-XXXXXX", NULL);
  g_autofree char *half = g_build_filename(dir, "half.txt", NULL);
  write_even_rows(text, half);
  g_autoptr(GError) error = NULL;
  g_autoptr(DdpNcclTests) all = ddp_nccl_tests_parse(name, text, &error);
  g_assert_no_error(error);
  g_autoptr(DdpCalibDb) db = ddp_calibdb_open(":memory:", DDP_CALIBDB_WRITE, &error);
  gboolean again;
  g_assert_cmpint(ddp_nccl_tests_import(db, half, NULL, &again, &error), ==, 1);
  g_assert_no_error(error);
  g_autoptr(DdpFit) fit = ddp_fit_from_db(db, NULL, 0, NULL, &error);
  g_assert_no_error(error);
  /* the same points through commcurve directly, for the log-log comparison */
  g_autoptr(GArray) b = g_array_new(FALSE, FALSE, sizeof(gint64));
  g_autoptr(GArray) t = g_array_new(FALSE, FALSE, sizeof(double));
  for (guint i = 0; i < all->rows->len; i += 2) {
    const DdpNcclTestsRow *r = &g_array_index(all->rows, DdpNcclTestsRow, i);
    g_array_append_val(b, r->bytes);
    g_array_append_val(t, r->ip_us);
  }
  g_autoptr(DdpCommCurve) curve = ddp_comm_curve_new((gint64 *)(void *)b->data, (double *)(void *)t->data, b->len, NULL);
  ddp_comm_curve_set_interpolation(curve, mode);
  g_autoptr(GArray) errors = g_array_new(FALSE, FALSE, sizeof(double));
  *worst = 0;
  for (guint i = 1; i < all->rows->len; i += 2) {
    const DdpNcclTestsRow *r = &g_array_index(all->rows, DdpNcclTestsRow, i);
    DdpFitAllreduceCost c;
    g_assert_true(ddp_fit_allreduce_cost(fit, ranks, nodes, r->bytes, DDP_ALGO_AUTO, DDP_PROTO_AUTO, &c));
    g_assert_true(c.from_curve);
    double predicted = mode == DDP_COMM_CURVE_LINEAR ? c.time_us : ddp_comm_curve_time_us(curve, r->bytes);
    if (mode == DDP_COMM_CURVE_LINEAR) /* the fit's curve is commcurve's linear one */
      g_assert_cmpfloat_with_epsilon(c.time_us, ddp_comm_curve_time_us(curve, r->bytes), 1e-9 * c.time_us);
    double e = fabs(predicted - r->ip_us) / r->ip_us;
    *worst = MAX(*worst, e);
    g_array_append_val(errors, e);
  }
  g_assert_cmpuint(errors->len, ==, 14);
  g_remove(half);
  g_rmdir(dir);
  return median(errors);
}

/* Issue 10's acceptance: nccl-tests import + fit on half a curve predicts the other half within
 * 5 % median.  The held-out rows are 128 B, 512 B, … 8 GiB: 13 interpolated, the last one
 * extrapolated from the end segment.  The α/β line alone (the fit before curves) misses this curve
 * by 21 % rms, 54 % at worst (ddpsim fit's own residual table). */
static void
test_half_curve(void)
{
  double worst, worst_log;
  double oci = half_curve_error("oci-a100-1node.txt", 8, 1, DDP_COMM_CURVE_LINEAR, &worst);
  double oci_log = half_curve_error("oci-a100-1node.txt", 8, 1, DDP_COMM_CURVE_LOG_LOG, &worst_log);
  g_test_message("OCI A100 1 node: median |error| %.2f %% (max %.2f %%); log-log %.2f %% (max %.2f %%)",
                 100 * oci, 100 * worst, 100 * oci_log, 100 * worst_log);
  g_assert_cmpfloat(oci, <=, 0.05);
  g_assert_cmpfloat(oci_log, <=, 0.05);
  double p4d = half_curve_error("aws-p4d-2node-old.txt", 16, 2, DDP_COMM_CURVE_LINEAR, &worst);
  double p4d_log = half_curve_error("aws-p4d-2node-old.txt", 16, 2, DDP_COMM_CURVE_LOG_LOG, &worst_log);
  g_test_message("AWS p4d 2 nodes (EFA): median |error| %.2f %% (max %.2f %%); log-log %.2f %% (max %.2f %%)",
                 100 * p4d, 100 * worst, 100 * p4d_log, 100 * worst_log);
  g_assert_cmpfloat(p4d, <=, 0.05);
}

/* ---- the verb ------------------------------------------------------------------------------- */

typedef struct {
  char *dir, *db;
} Tmp;

static void
tmp_setup(Tmp *t, G_GNUC_UNUSED gconstpointer data)
{
  t->dir = g_dir_make_tmp("test-ncclimport-XXXXXX", NULL);
  t->db = g_build_filename(t->dir, "calib.db", NULL);
}

static void
tmp_teardown(Tmp *t, G_GNUC_UNUSED gconstpointer data)
{
  static const char *const suffixes[] = { "", "-wal", "-shm", "-journal" };
  for (gsize i = 0; i < G_N_ELEMENTS(suffixes); i++) {
    g_autofree char *p = g_strconcat(t->db, suffixes[i], NULL);
    g_remove(p);
  }
  g_autofree char *junk = g_build_filename(t->dir, "junk.txt", NULL);
  g_remove(junk);
  g_rmdir(t->dir);
  g_free(t->dir);
  g_free(t->db);
}

static gboolean
have_binary(void)
{
  if (!g_getenv("DDPSIM")) {
    g_test_skip("DDPSIM is not set (make check sets it)");
    return FALSE;
  }
  return TRUE;
}

static void
test_cli(Tmp *t, G_GNUC_UNUSED gconstpointer data)
{
  if (!have_binary())
    return;
  g_autofree char *oci = fixture("oci-a100-1node.txt"), *p4d = fixture("aws-p4d-2node-old.txt");
  /* a foreign file: exit 2, one line naming file and line, no database left behind */
  g_autofree char *junk = g_build_filename(t->dir, "junk.txt", NULL);
  g_assert_true(g_file_set_contents(junk, "just some text\n", -1, NULL));
  {
    g_auto(Run) r = { 0 };
    run(&r, "fit", "--db", t->db, "--import", junk, NULL);
    g_assert_cmpint(r.status, ==, 2);
    g_autofree char *expected = g_strdup_printf("ddpsim fit: %s:1: no all_reduce_perf result row", junk);
    g_assert_true(g_str_has_prefix(r.err, expected));
    g_assert_cmpuint(strlen(r.err), ==, strchr(r.err, '\n') - r.err + 1);
    g_assert_false(g_file_test(t->db, G_FILE_TEST_EXISTS));
  }
  {
    g_auto(Run) r = { 0 };
    run(&r, "fit", "--db", t->db, "--import", oci, "--algo", "ring", NULL);
    g_assert_cmpint(r.status, ==, 2);
    g_assert_cmpstr(r.err, ==, "ddpsim fit: --algo: \"ring\" is not an NCCL_ALGO value (Ring, Tree, NVLS, NVLSTree, "
                               "CollNetDirect, CollNetChain, PAT)\n");
  }
  {
    g_auto(Run) r = { 0 };
    run(&r, "fit", "--db", t->db, "--nodes", "2", NULL);
    g_assert_cmpint(r.status, ==, 2);
    g_assert_nonnull(strstr(r.err, "describe an --import FILE"));
  }
  {
    g_auto(Run) r = { 0 };
    run(&r, "fit", "--db", t->db, "--import", oci, "--no-store", NULL);
    g_assert_cmpint(r.status, ==, 2);
    g_assert_nonnull(strstr(r.err, "--import writes the database"));
  }
  /* two imports, one after the other, end in one fit covering both */
  {
    g_auto(Run) r = { 0 };
    run(&r, "fit", "--db", t->db, "--import", oci, "--csv", NULL);
    g_assert_cmpint(r.status, ==, 0);
    g_assert_nonnull(strstr(r.err, "nccl-tests output imported as run 1"));
    g_assert_true(g_str_has_prefix(r.out, "algorithm,protocol,ranks,nodes"));
    g_assert_nonnull(strstr(r.out, "\nauto,auto,8,1,"));
  }
  {
    g_auto(Run) r = { 0 };
    run(&r, "fit", "--db", t->db, "--import", p4d, "--csv", NULL);
    g_assert_cmpint(r.status, ==, 0);
    g_assert_nonnull(strstr(r.out, "\nauto,auto,8,1,"));
    g_assert_nonnull(strstr(r.out, "\nauto,auto,16,2,"));
  }
  {
    g_auto(Run) r = { 0 };
    run(&r, "fit", "--db", t->db, "--import", p4d, NULL);
    g_assert_cmpint(r.status, ==, 0);
    g_assert_nonnull(strstr(r.err, "already imported as run 2"));
    /* 28 sizes of each curve kept */
    g_assert_nonnull(strstr(r.out, "  56 measured sizes kept as curves"));
  }
  /* --calibration now answers the measured curve: 64 MiB on 8 A100s took 587.8 µs in place */
  {
    g_auto(Run) r = { 0 };
    run(&r, "allreduce", "--cluster", "dgx-a100", "--gpus", "8", "-b", "64M", "-e", "64M",
        "--calibration", t->db, "--csv", NULL);
    g_assert_cmpint(r.status, ==, 0);
    g_assert_nonnull(strstr(r.out, ",587.8"));
  }
}

int
main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/ncclimport/parse/current", test_parse_current);
  g_test_add_func("/ncclimport/parse/old", test_parse_old);
  g_test_add_func("/ncclimport/parse/variants", test_parse_variants);
  g_test_add_func("/ncclimport/parse/errors", test_parse_errors);
  g_test_add_func("/ncclimport/import/store", test_import_store);
  g_test_add_func("/ncclimport/import/killed", test_import_killed);
  g_test_add_func("/ncclimport/fit/half-curve", test_half_curve);
  g_test_add("/ncclimport/cli", Tmp, NULL, tmp_setup, test_cli, tmp_teardown);
  return g_test_run();
}
