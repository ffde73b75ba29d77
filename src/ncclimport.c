/* ncclimport — parsing nccl-tests all_reduce_perf, all_gather_perf, reduce_scatter_perf and
 * broadcast_perf output and storing it (see ncclimport.h for the format and what is derived from it).
 *
 * The parser is line-oriented and strict about the lines it claims (rank lines, result rows) and
 * lenient about the rest, because real logs interleave NCCL_DEBUG output and launcher noise with
 * the table; a file with no result row at all is refused, which is what catches foreign files.
 */
#include "ncclimport.h"

#include "fileio.h"
#include "fit.h"
#include "ranges.h"

#include <math.h>
#include <string.h>

#define FAIL(line, ...)                                                                            \
  do {                                                                                             \
    g_autofree char *what_ = g_strdup_printf(__VA_ARGS__);                                         \
    g_set_error(error, DDP_FIT_ERROR, DDP_FIT_ERROR_IMPORT, "%s:%u: %s", path, (line), what_);    \
    return NULL;                                                                                   \
  } while (0)

void
ddp_nccl_tests_free(DdpNcclTests *t)
{
  if (!t)
    return;
  if (t->rows)
    g_array_unref(t->rows);
  g_free(t->type);
  g_free(t->redop);
  g_free(t->hosts);
  g_free(t->gpu_name);
  g_free(t->nccl_version);
  g_free(t->header);
  ddp_calib_import_clear(&t->source);
  g_free(t);
}

static gboolean
parse_int64(const char *text, gint64 *out)
{
  return g_ascii_string_to_signed(text, 10, G_MININT64, G_MAXINT64, out, NULL);
}

/* Whitespace-separated fields of @line (empty ones dropped). */
static GStrv
fields(const char *line)
{
  g_auto(GStrv) raw = g_strsplit_set(line, " \t\r", -1);
  GPtrArray *out = g_ptr_array_new();
  for (guint i = 0; raw[i]; i++)
    if (*raw[i])
      g_ptr_array_add(out, g_strdup(raw[i]));
  g_ptr_array_add(out, NULL);
  return (GStrv)g_ptr_array_free(out, FALSE);
}

/* "21903" (NCCL_VERSION_CODE since 2.9: major·10000 + minor·100 + patch) → "2.19.3". */
static char *
version_from_code(const char *code)
{
  gint64 v;
  if (!parse_int64(code, &v) || v < 20900)
    return g_strdup(code);
  return g_strdup_printf("%d.%d.%d", (int)(v / 10000), (int)(v / 100 % 100), (int)(v % 100));
}

/* One header number through the range table: "FILE:LINE: nGpus: "-3" must be …". */
static gboolean
header_count(const char *path, guint lineno, const char *key, const char *text, const DdpRange *r, int *out,
             GError **error)
{
  g_autofree char *where = g_strdup_printf("%s:%u: %s", path, lineno, key);
  guint64 v = 0;
  if (!ddp_range_check_count(where, text, r, &v, error)) {
    ddp_fit_error_as_import(error);
    return FALSE;
  }
  *out = (int)v;
  return TRUE;
}

/* A row's size or count (whole, 0 .. 2^50): "FILE:LINE: size: "-8" must be …". */
static gboolean
row_count(const char *path, guint lineno, const char *key, const char *text, guint64 *out, GError **error)
{
  g_autofree char *where = g_strdup_printf("%s:%u: %s", path, lineno, key);
  if (!ddp_range_check_count(where, text, &DDP_RANGE_TENSOR_BYTES, out, error)) {
    ddp_fit_error_as_import(error);
    return FALSE;
  }
  return TRUE;
}

/* "# nThread 1 nGpus 8 … warmup iters: 5 iters: 20 agg iters: 1 …": nThread within 1 .. 1024, nGpus
 * (-g) within DDP_RANGE_GPUS_PER_PROCESS, iters within DDP_RANGE_ITERATIONS. */
static gboolean
parse_header(const char *path, guint lineno, DdpNcclTests *t, GStrv f, GError **error)
{
  for (guint i = 0; f[i] && f[i + 1]; i++) {
    if (strcmp(f[i], "nThread") == 0) {
      if (!header_count(path, lineno, "nThread", f[i + 1], &DDP_RANGE_THREADS_PER_PROCESS, &t->threads, error))
        return FALSE;
    } else if (strcmp(f[i], "nGpus") == 0) {
      if (!header_count(path, lineno, "nGpus", f[i + 1], &DDP_RANGE_GPUS_PER_PROCESS, &t->gpus_per_process, error))
        return FALSE;
    } else if (strcmp(f[i], "iters:") == 0 && i > 0 && strcmp(f[i - 1], "warmup") != 0 &&
               strcmp(f[i - 1], "agg") != 0) {
      if (!header_count(path, lineno, "iters", f[i + 1], &DDP_RANGE_ITERATIONS, &t->iterations, error))
        return FALSE;
    }
  }
  return TRUE;
}

/* "#  Rank  0 Group  0 Pid  1234 on  node005 device  0 [0x18] NVIDIA H100 80GB HBM3"; FALSE when
 * the line is not a rank line.  @host and @gpu are set (owned by the caller). */
static gboolean
parse_rank_line(const char *line, char **host, char **gpu)
{
  g_auto(GStrv) f = fields(line + 1);
  if (!f[0] || strcmp(f[0], "Rank") != 0)
    return FALSE;
  guint n = g_strv_length(f);
  for (guint i = 1; i + 1 < n; i++) {
    if (strcmp(f[i], "on") == 0 && i + 3 < n && strcmp(f[i + 2], "device") == 0) {
      *host = g_strdup(f[i + 1]);
      /* the device name follows the bus id "[0x18]" */
      const char *bracket = strchr(line, ']');
      *gpu = g_strstrip(g_strdup(bracket ? bracket + 1 : ""));
      return TRUE;
    }
  }
  return FALSE;
}

static int
compare_strings(gconstpointer a, gconstpointer b)
{
  return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Bytes of one element of a data type as nccl-tests names it (src/common.cu test_typenames, old
 * and new); 0 for a name it never prints. */
static guint64
type_size(const char *name)
{
  static const struct {
    const char *name;
    guint64 size;
  } types[] = {
    { "int8", 1 }, { "uint8", 1 }, { "char", 1 }, { "f8e4m3", 1 }, { "f8e5m2", 1 },
    { "half", 2 }, { "bfloat16", 2 },
    { "int32", 4 }, { "uint32", 4 }, { "int", 4 }, { "float", 4 },
    { "int64", 8 }, { "uint64", 8 }, { "double", 8 },
  };
  for (gsize i = 0; i < G_N_ELEMENTS(types); i++)
    if (strcmp(types[i].name, name) == 0)
      return types[i].size;
  return 0;
}

/* "all_gather_perf" (or "all_gather_perf_mpi", as some MPI builds are installed) → its collective;
 * -1 for any other test. */
static int
op_from_program(const char *program)
{
  g_autofree char *name = g_strdup(program);
  if (g_str_has_suffix(name, "_mpi"))
    name[strlen(name) - strlen("_mpi")] = '\0';
  if (!g_str_has_suffix(name, "_perf"))
    return -1;
  name[strlen(name) - strlen("_perf")] = '\0';
  int op = ddp_collective_op_parse(name);
  return op >= 0 && strcmp(name, ddp_collective_op_name(op)) == 0 ? op : -1;
}

/* "all_gather_perf": the test of @op. */
static const char *
test_name(DdpCollectiveOp op)
{
  static const char *const names[DDP_OP_COUNT] = { "all_reduce_perf", "all_gather_perf", "reduce_scatter_perf",
                                                  "broadcast_perf" };
  return names[op];
}

/* "2(n-1)/n": nccl-tests' busbw/algbw of @op, as text. */
static const char *
bus_factor_text(DdpCollectiveOp op)
{
  return op == DDP_OP_ALL_REDUCE ? "2(n-1)/n" : op == DDP_OP_BROADCAST ? "1" : "(n-1)/n";
}

/* Ranks from busbw/algbw = 2(n−1)/n (n = 2/(2 − r)), taken on the row with the largest algbw so
 * that the two-decimal rounding of nccl-tests' output matters least; 0 when no row is usable.
 * *@ratio is that row's busbw/algbw (NAN when no row has algbw ≥ 1 GB/s). */
static int
ranks_from_ratio(const GArray *rows, double *ratio)
{
  double best = 0;
  *ratio = NAN;
  for (guint i = 0; i < rows->len; i++) {
    const DdpNcclTestsRow *r = &g_array_index(rows, DdpNcclTestsRow, i);
    if (r->oop_algbw > best && r->oop_algbw >= 1.0) {
      best = r->oop_algbw;
      *ratio = r->oop_busbw / r->oop_algbw;
    }
  }
  if (!(*ratio > 0) || *ratio >= 2)
    return 0;
  double n = 2.0 / (2.0 - *ratio);   /* ratio → 2 sends n to infinity: bounded before the cast */
  return n <= (double)DDP_MAX_GPUS ? (int)lround(n) : 0;
}

/* What the result rows say about the test, gathered while they are read (ddp_nccl_tests_parse). */
typedef struct {
  guint first_line;           /* the first row's line, 0 before it */
  gboolean has_redop, has_root;
  gint64 root;                /* the first row's (has_root) */
  guint64 per_count;          /* size / (count × type size), the same on every row with a count:
                               * 1 for whole-buffer counts, n for per-rank ones; 0 while unknown */
  guint per_count_line;
} RowFacts;

/* The test named by "# Collective test starting: NAME" (or "concluded"), @f its fields after '#':
 * sets @op (-1: none yet) and @op_line; a second test, another one, or a test ddpsim does not
 * import is refused.  FALSE with @error. */
static gboolean
parse_test_line(const char *path, guint lineno, GStrv f, const RowFacts *facts, int *op, guint *op_line,
                GError **error)
{
  gboolean starting = strcmp(f[2], "starting:") == 0;
  int named = op_from_program(f[3]);
  g_autofree char *program = ddp_range_quote_n(f[3], 60);
  if (named < 0) {
    g_set_error(error, DDP_FIT_ERROR, DDP_FIT_ERROR_IMPORT, "%s:%u: %s output: ddpsim imports all_reduce_perf, "
                "all_gather_perf, reduce_scatter_perf and broadcast_perf", path, lineno, program);
    return FALSE;
  }
  if (*op >= 0 && named != *op) {
    g_set_error(error, DDP_FIT_ERROR, DDP_FIT_ERROR_IMPORT, "%s:%u: %s after %s (line %u): one collective per file "
                "(split it)", path, lineno, test_name(named), test_name(*op), *op_line);
    return FALSE;
  }
  if (starting && facts->first_line > 0) {
    g_set_error(error, DDP_FIT_ERROR, DDP_FIT_ERROR_IMPORT, "%s:%u: a second test starts here (rows from line %u "
                "already read): import one test per file", path, lineno, facts->first_line);
    return FALSE;
  }
  if (*op < 0) {
    *op = named;
    *op_line = lineno;
  }
  return TRUE;
}

/* Which test printed rows with these facts, for output that does not name it (header comment):
 * one of the four, or a refusal — a test ddpsim does not import, or one the rows cannot tell. */
static gboolean
op_from_rows(const char *path, const DdpNcclTests *t, const RowFacts *facts, int *op, GError **error)
{
  gboolean none = facts->has_redop && strcmp(t->redop, "none") == 0;
  gboolean rooted = facts->has_root && facts->root >= 0;
  gboolean per_rank = facts->per_count > 1;
  const char *other = NULL, *ambiguous = NULL;
  if (rooted && !none)
    other = "a root with a reduction: reduce_perf output";
  else if (rooted)
    other = per_rank ? "a root and per-rank counts: gather_perf or scatter_perf output" : NULL;
  else if (none)
    ambiguous = "reduction \"none\" and no root: all_gather_perf or alltoall_perf, which print the same columns";
  else if (per_rank && !facts->has_redop)
    ambiguous = "per-rank counts and no reduction column: all_gather_perf or reduce_scatter_perf";
  if (other) {
    g_set_error(error, DDP_FIT_ERROR, DDP_FIT_ERROR_IMPORT, "%s:%u: %s, which ddpsim does not import", path,
                facts->first_line, other);
    return FALSE;
  }
  if (ambiguous) {
    g_set_error(error, DDP_FIT_ERROR, DDP_FIT_ERROR_IMPORT, "%s:%u: %s; the test cannot be told without nccl-tests' "
                "\"# Collective test starting: NAME\" line (2.16.7 and later)", path, facts->first_line, ambiguous);
    return FALSE;
  }
  *op = rooted ? DDP_OP_BROADCAST : per_rank ? DDP_OP_REDUCE_SCATTER : DDP_OP_ALL_REDUCE;
  return TRUE;
}

/* The rows against the test named: reduction, root and size over count as that test prints them. */
static gboolean
check_rows_match(const char *path, const DdpNcclTests *t, const RowFacts *facts, GError **error)
{
  gboolean none = t->op == DDP_OP_ALL_GATHER || t->op == DDP_OP_BROADCAST;
  gboolean per_rank = t->op == DDP_OP_ALL_GATHER || t->op == DDP_OP_REDUCE_SCATTER;
  const char *why = NULL;
  if (facts->has_redop && (strcmp(t->redop, "none") == 0) != none)
    why = none ? "a reduction, but the test reduces nothing (redop \"none\")" : "no reduction (redop \"none\")";
  else if (facts->has_root && (facts->root >= 0) != (t->op == DDP_OP_BROADCAST))
    why = t->op == DDP_OP_BROADCAST ? "no root (-1)" : "a root, but the test has none (-1)";
  else if (!per_rank && facts->per_count > 1)
    why = "per-rank counts (size over count is a multiple of the type size), but the test counts the whole buffer";
  if (!why)
    return TRUE;
  g_set_error(error, DDP_FIT_ERROR, DDP_FIT_ERROR_IMPORT, "%s:%u: %s output with %s", path, facts->first_line,
              test_name(t->op), why);
  return FALSE;
}

/* Ranks from the rank lines (@rank_lines > 0), else from what the rows and header allow; then
 * busbw/algbw against the test's factor. */
static gboolean
derive_ranks(const char *path, DdpNcclTests *t, const RowFacts *facts, int rank_lines, GError **error)
{
  gboolean per_rank = t->op == DDP_OP_ALL_GATHER || t->op == DDP_OP_REDUCE_SCATTER;
  guint line = facts->first_line;
  double ratio;
  int from_ratio = ranks_from_ratio(t->rows, &ratio);
  const char *why = NULL;
  if (rank_lines > 0) {
    t->ranks = rank_lines;
    if (per_rank && facts->per_count > 0 && facts->per_count != (guint64)t->ranks) {
      g_set_error(error, DDP_FIT_ERROR, DDP_FIT_ERROR_IMPORT, "%s:%u: size = %" G_GUINT64_FORMAT " x count x type "
                  "size (%" G_GUINT64_FORMAT " ranks' parts) but there are %d rank lines", path,
                  facts->per_count_line, facts->per_count, facts->per_count, t->ranks);
      return FALSE;
    }
  } else if (per_rank) {
    if (facts->per_count == 0)
      why = "no rank lines and no row with a count: the number of GPUs cannot be told";
    else if (facts->per_count > DDP_MAX_GPUS)
      why = "size over count gives more ranks than ddpsim models (docs/limits.md)";
    t->ranks = (int)MIN(facts->per_count, DDP_MAX_GPUS);
    t->ranks_from_count = TRUE;
  } else if (t->op == DDP_OP_BROADCAST) {
    why = "no rank lines: broadcast_perf's busbw is algbw whatever the number of GPUs, so it cannot be told";
  } else {
    if (from_ratio < 2 && t->gpus_per_process * MAX(t->threads, 1) < 2)
      why = "no rank lines and no row with algbw >= 1 GB/s: the number of GPUs cannot be told";
    t->ranks = from_ratio >= 2 ? from_ratio : t->gpus_per_process * MAX(t->threads, 1);
    t->ranks_from_ratio = from_ratio >= 2;
  }
  if (why) {
    g_set_error(error, DDP_FIT_ERROR, DDP_FIT_ERROR_IMPORT, "%s:%u: %s", path, line, why);
    return FALSE;
  }
  /* busbw/algbw: 2(n−1)/n for all_reduce, (n−1)/n for all_gather and reduce_scatter, 1 for broadcast */
  double expected = ddp_collective_op_bus_factor(t->op, (guint64)t->ranks);
  if (isfinite(ratio) && t->ranks > 1 && fabs(ratio / expected - 1) > 0.03) {
    g_set_error(error, DDP_FIT_ERROR, DDP_FIT_ERROR_IMPORT, "%s:%u: busbw/algbw = %.3f but %s over %d ranks has %s "
                "= %.3f: not %s output", path, line, ratio, test_name(t->op), t->ranks, bus_factor_text(t->op),
                expected, test_name(t->op));
    return FALSE;
  }
  return TRUE;
}

/**
 * ddp_nccl_tests_parse:
 * See ncclimport.h.  Returns: (transfer full): the parsed output, or NULL with
 * DDP_FIT_ERROR_IMPORT "PATH:LINE: what".
 */
DdpNcclTests *
ddp_nccl_tests_parse(const char *path, const char *text, GError **error)
{
  g_autoptr(DdpNcclTests) t = g_new0(DdpNcclTests, 1);
  t->rows = g_array_new(FALSE, TRUE, sizeof(DdpNcclTestsRow));
  t->avg_busbw = NAN;
  t->header = g_strdup("");
  t->nccl_version = g_strdup("");
  g_autoptr(GHashTable) hosts = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
  g_autofree char *gpu = NULL;
  int rank_lines = 0;
  int columns = 0;            /* expected fields per row, from the column header; 0: unknown */
  int op = -1;                /* the test named by its "Collective test" line, -1 until one is */
  guint op_line = 0;
  RowFacts facts = { 0 };
  guint64 element = 0;        /* bytes of the rows' data type */
  g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
  for (guint ln = 0; lines[ln]; ln++) {
    const char *line = lines[ln];
    guint lineno = ln + 1;
    const char *p = line;
    while (*p == ' ' || *p == '\t')
      p++;
    const char *version = strstr(line, "NCCL version ");
    if (version && !*t->nccl_version) {
      g_auto(GStrv) v = fields(version + strlen("NCCL version "));
      if (v[0]) {
        g_free(t->nccl_version);
        t->nccl_version = g_strdup(v[0]);
      }
    }
    const char *library = strstr(line, "nccl-library=");
    if (library && *line == '#') {
      g_auto(GStrv) v = fields(library + strlen("nccl-library="));
      if (v[0]) {
        g_free(t->nccl_version);
        t->nccl_version = version_from_code(v[0]);
      }
    }
    if (*p == '#') {
      g_auto(GStrv) f = fields(p + 1);
      if (!f[0])
        continue;
      if (strcmp(f[0], "Collective") == 0 && f[1] && strcmp(f[1], "test") == 0 && f[2] &&
          (strcmp(f[2], "starting:") == 0 || strcmp(f[2], "concluded:") == 0) && f[3]) {
        if (!parse_test_line(path, lineno, f, &facts, &op, &op_line, error))
          return NULL;
        continue;
      }
      if (strcmp(f[0], "nThread") == 0) {
        if (t->rows->len > 0)
          FAIL(lineno, "a second test starts here (rows from line %u already read): import one test per file",
               facts.first_line);
        if (!parse_header(path, lineno, t, f, error))
          return NULL;
        g_free(t->header);
        t->header = g_strstrip(g_strdup(p + 1));
        continue;
      }
      char *host = NULL;
      g_autofree char *name = NULL;
      if (parse_rank_line(p, &host, &name)) {
        if ((guint64)rank_lines >= DDP_MAX_GPUS) {
          g_free(host);
          FAIL(lineno, "more than %" G_GUINT64_FORMAT " rank lines", DDP_MAX_GPUS);
        }
        rank_lines++;
        g_hash_table_add(hosts, host);
        if (!gpu)
          gpu = g_steal_pointer(&name);
        else if (strcmp(gpu, name) != 0)
          FAIL(lineno, "rank %d is a %s but rank 0 is a %s: mixed GPU models cannot be fitted together",
               rank_lines - 1, name, gpu);
        continue;
      }
      if (g_strv_contains((const char *const *)f, "size") && g_strv_contains((const char *const *)f, "count")) {
        facts.has_redop = g_strv_contains((const char *const *)f, "redop") || g_strv_contains((const char *const *)f, "op");
        facts.has_root = g_strv_contains((const char *const *)f, "root");
        columns = 3 + facts.has_redop + facts.has_root + 8;
        continue;
      }
      if (strcmp(f[0], "Avg") == 0 && f[1] && strcmp(f[1], "bus") == 0) {
        const char *colon = strchr(p, ':');
        double v;
        g_autofree char *value = colon ? g_strstrip(g_strdup(colon + 1)) : NULL;
        if (value && ddp_parse_number(value, &v))
          t->avg_busbw = v;
      }
      continue;
    }
    if (!g_ascii_isdigit(*p))
      continue; /* blank, NCCL INFO, launcher output */
    g_auto(GStrv) f = fields(p);
    guint n = g_strv_length(f);
    if (columns == 0) {
      if (n < 11 || n > 13)
        FAIL(lineno, "a result row of nccl-tests has 11 to 13 fields (size count type [redop] [root] then "
                     "time algbw busbw #wrong twice), this line has %u", n);
      facts.has_redop = n >= 12;
      facts.has_root = n == 13;
      columns = (int)n;
    }
    if ((int)n != columns)
      FAIL(lineno, "%u fields where the column header announces %d", n, columns);
    if (t->rows->len >= DDP_MAX_IMPORT_ROWS)
      FAIL(lineno, "more than %u result rows: import one test per file", DDP_MAX_IMPORT_ROWS);
    guint64 bytes, count;
    if (!row_count(path, lineno, "size", f[0], &bytes, error) || !row_count(path, lineno, "count", f[1], &count, error))
      return NULL;
    guint c = 2;
    const char *type = f[c++];
    const char *redop = facts.has_redop ? f[c++] : "";
    gint64 root = -1;
    if (facts.has_root) {
      if (!parse_int64(f[c], &root))
        FAIL(lineno, "root \"%s\" is not an integer", f[c]);
      c++;
    }
    double v[8];
    static const char *const names[8] = { "out-of-place time", "out-of-place algbw", "out-of-place busbw", "",
                                          "in-place time", "in-place algbw", "in-place busbw", "" };
    for (int k = 0; k < 8; k++) {
      if (k == 3 || k == 7)
        continue; /* #wrong / error: an integer, a float, or N/A; not used */
      g_autofree char *where = g_strdup_printf("%s:%u: %s", path, lineno, names[k]);
      const DdpRange *r = k == 0 || k == 4 ? &DDP_RANGE_MEASURED_US : &DDP_RANGE_MEASURED_GBS;
      if (!ddp_range_check_number(where, f[c + k], r, &v[k], error)) {
        ddp_fit_error_as_import(error);
        return NULL;
      }
    }
    if (t->rows->len == 0) {
      element = type_size(type);
      if (element == 0) {
        g_autofree char *quoted = ddp_range_quote_n(type, 40);
        FAIL(lineno, "type \"%s\": not a data type nccl-tests prints (int8, uint8, char, int32, uint32, int, int64, "
                     "uint64, half, bfloat16, float, double, f8e4m3, f8e5m2)", quoted);
      }
      facts.first_line = lineno;
      facts.root = root;
      t->type = g_strdup(type);
      t->redop = g_strdup(redop);
    } else if (strcmp(t->type, type) != 0 || strcmp(t->redop, redop) != 0) {
      FAIL(lineno, "%s/%s after %s/%s: one data type and reduction per file (run without -d all / -o all, "
                   "or split the file)", type, redop, t->type, t->redop);
    } else if ((root >= 0) != (facts.root >= 0)) {
      FAIL(lineno, "root %" G_GINT64_FORMAT " after root %" G_GINT64_FORMAT " (line %u): one collective per file",
           root, facts.root, facts.first_line);
    }
    /* nccl-tests prints size = max(send, receive bytes) and count = the per-call parameter: their
     * quotient over the type size is 1 (whole-buffer counts) or n (each rank's part) */
    if (count > 0) {
      if (bytes % (count * element) != 0)
        FAIL(lineno, "size %" G_GUINT64_FORMAT " is not a whole multiple of count %" G_GUINT64_FORMAT " x %"
             G_GUINT64_FORMAT " bytes (%s)", bytes, count, element, t->type);
      guint64 per_count = bytes / (count * element);
      if (facts.per_count == 0) {
        facts.per_count = per_count;
        facts.per_count_line = lineno;
      } else if (per_count != facts.per_count) {
        FAIL(lineno, "size = %" G_GUINT64_FORMAT " x count x type size here but %" G_GUINT64_FORMAT " x on line %u: "
             "one collective and rank count per file", per_count, facts.per_count, facts.per_count_line);
      }
    }
    DdpNcclTestsRow row = { (gint64)bytes, v[0], v[1], v[2], v[4], v[5], v[6] };
    g_array_append_val(t->rows, row);
  }
  if (t->rows->len == 0 && op >= 0)
    FAIL(op_line, "no %s result row (lines \"SIZE COUNT TYPE … TIME ALGBW BUSBW …\")", test_name(op));
  if (t->rows->len == 0)
    FAIL(1, "no nccl-tests result row (lines \"SIZE COUNT TYPE … TIME ALGBW BUSBW …\"): not nccl-tests output");
  t->op_named = op >= 0;
  if (op < 0 && !op_from_rows(path, t, &facts, &op, error))
    return NULL;
  t->op = op;
  if (!check_rows_match(path, t, &facts, error) || !derive_ranks(path, t, &facts, rank_lines, error))
    return NULL;
  t->nodes = MAX(1, (int)g_hash_table_size(hosts));
  guint n_hosts = 0;
  g_autofree gpointer *names = g_hash_table_get_keys_as_array(hosts, &n_hosts);
  qsort(names, n_hosts, sizeof(gpointer), compare_strings);
  g_autoptr(GString) joined = g_string_new(NULL);
  for (guint i = 0; i < n_hosts; i++)
    g_string_append_printf(joined, "%s%s", i ? "," : "", (const char *)names[i]);
  t->hosts = g_strdup(joined->str);
  t->gpu_name = g_strdup(gpu ? gpu : "");
  return g_steal_pointer(&t);
}

#undef FAIL

static char *
import_note(const DdpNcclTests *t, const DdpNcclImportOptions *o)
{
  GString *s = g_string_new(NULL);
  g_string_append_printf(s, "imported nccl-tests %s output", test_name(t->op));
  if (!t->op_named)
    g_string_append(s, " (the test told from its rows)");
  if (t->gpus_per_process > 0)
    g_string_append_printf(s, "; -g %d (GPUs per process)%s", t->gpus_per_process,
                           t->gpus_per_process > 1 ? ": one process drives several GPUs, host-bound at small sizes" : "");
  if (t->ranks_from_ratio)
    g_string_append_printf(s, "; no rank lines: %d ranks from busbw/algbw", t->ranks);
  if (t->ranks_from_count)
    g_string_append_printf(s, "; no rank lines: %d ranks from size/count", t->ranks);
  if (!*t->hosts && !(o && o->nodes > 0))
    g_string_append(s, "; no host names: 1 node assumed");
  if (isfinite(t->avg_busbw))
    g_string_append_printf(s, "; Avg bus bandwidth %.3f GB/s", t->avg_busbw);
  return g_string_free(s, FALSE);
}

/**
 * ddp_nccl_tests_read:
 * See ncclimport.h.
 */
DdpNcclTests *
ddp_nccl_tests_read(const char *path, GError **error)
{
  g_autofree char *text = NULL;
  gsize length = 0;
  g_autoptr(GError) local = NULL;
  if (!ddp_file_read(path, DDP_FILE_TEXT, &text, &length, error))
    return NULL;
  DdpNcclTests *t = ddp_nccl_tests_parse(path, text, error);
  if (t && !ddp_calib_import_describe(path, text, length, "nccl-tests", &t->source, &local)) {
    g_set_error_literal(error, DDP_FIT_ERROR, DDP_FIT_ERROR_IMPORT, local->message);
    g_clear_pointer(&t, ddp_nccl_tests_free);
  }
  return t;
}

/**
 * ddp_nccl_tests_store:
 * See ncclimport.h.
 */
gint64
ddp_nccl_tests_store(DdpCalibDb *db, DdpNcclTests *t, const DdpNcclImportOptions *options, gboolean *again,
                     GError **error)
{
  int nodes = options && options->nodes > 0 ? options->nodes : t->nodes;
  if (nodes > t->ranks || t->ranks % nodes != 0) {   /* the model spreads ranks evenly over nodes */
    g_set_error(error, DDP_FIT_ERROR, DDP_FIT_ERROR_IMPORT,
                "--nodes: %d nodes for the %d ranks of %s (the ranks must divide evenly over the nodes)", nodes,
                t->ranks, t->source.source);
    return 0;
  }
  if (*t->hosts && nodes < t->nodes) {   /* more hosts may share a name (containers), never fewer */
    g_set_error(error, DDP_FIT_ERROR, DDP_FIT_ERROR_IMPORT, "--nodes: %d, but the rank lines of %s name %d hosts (%s)",
                nodes, t->source.source, t->nodes, t->hosts);
    return 0;
  }
  g_autofree char *note = import_note(t, options);
  DdpCalibRun run = { 0 };
  run.host = t->hosts;
  run.gpu_name = t->gpu_name;
  run.nodes = nodes;
  run.ranks = t->ranks;
  run.gpus_per_node = (t->ranks + nodes - 1) / nodes;
  run.nccl_version = t->nccl_version;
  g_autofree char *program = g_strdup_printf("nccl-tests %s (imported by ddpsim fit --import)", test_name(t->op));
  run.program = program;
  run.arguments = t->header;
  run.note = note;
  t->source.gpus_per_process = t->gpus_per_process;
  g_free(t->source.note);
  t->source.note = g_strdup(note);
  gint64 run_id = ddp_calibdb_import_begin(db, &run, "import/nccl-tests", &t->source, again, error);
  if (run_id == 0 || *again)
    return run_id;
  const char *algorithm = options && options->algorithm ? options->algorithm : "auto";
  const char *protocol = options && options->protocol ? options->protocol : "auto";
  gboolean ok = TRUE;
  for (guint i = 0; ok && i < t->rows->len; i++) {
    const DdpNcclTestsRow *r = &g_array_index(t->rows, DdpNcclTestsRow, i);
    for (int in_place = 0; ok && in_place < 2; in_place++) {
      double time_us = in_place ? r->ip_us : r->oop_us;
      double algbw = in_place ? r->ip_algbw : r->oop_algbw, busbw = in_place ? r->ip_busbw : r->oop_busbw;
      if (t->op == DDP_OP_ALL_REDUCE) {
        DdpCalibAllreducePoint p = { 0 };
        p.algorithm = (char *)algorithm;
        p.protocol = (char *)protocol;
        p.ranks = t->ranks;
        p.nodes = nodes;
        p.bytes = r->bytes;
        p.dtype = t->type;
        p.in_place = in_place;
        p.iterations = t->iterations;
        p.time_us = p.min_us = p.max_us = time_us;
        p.algbw_GBs = algbw;
        p.busbw_GBs = busbw;
        ok = ddp_calibdb_batch_add_allreduce(db, &p, error);
      } else {
        DdpCalibCollectivePoint p = { 0 };
        p.op = (char *)ddp_collective_op_name(t->op);
        p.algorithm = (char *)algorithm;
        p.protocol = (char *)protocol;
        p.ranks = t->ranks;
        p.nodes = nodes;
        p.bytes = r->bytes;
        p.dtype = t->type;
        p.in_place = in_place;
        p.iterations = t->iterations;
        p.time_us = time_us;
        p.algbw_GBs = algbw;
        p.busbw_GBs = busbw;
        ok = ddp_calibdb_batch_add_collective(db, &p, error);
      }
    }
  }
  return ddp_calibdb_import_finish(db, run_id, &t->source, ok, note, error);
}

/**
 * ddp_nccl_tests_import:
 * See ncclimport.h: ddp_nccl_tests_read() then ddp_nccl_tests_store().
 */
gint64
ddp_nccl_tests_import(DdpCalibDb *db, const char *path, const DdpNcclImportOptions *options, gboolean *again,
                      GError **error)
{
  *again = FALSE;
  g_autoptr(DdpNcclTests) t = ddp_nccl_tests_read(path, error);
  return t ? ddp_nccl_tests_store(db, t, options, again, error) : 0;
}
