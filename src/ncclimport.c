/* ncclimport — parsing nccl-tests all_reduce_perf output and storing it (see ncclimport.h for
 * the format and what is derived from it).
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

/* Ranks from busbw/algbw = 2(n−1)/n (n = 2/(2 − r)), taken on the row with the largest algbw so
 * that the two-decimal rounding of nccl-tests' output matters least; 0 when no row is usable. */
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
  gboolean has_redop = FALSE, has_root = FALSE;
  guint first_row_line = 0;
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
      if (strcmp(f[0], "nThread") == 0) {
        if (t->rows->len > 0)
          FAIL(lineno, "a second test starts here (rows from line %u already read): import one test per file",
               first_row_line);
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
        has_redop = g_strv_contains((const char *const *)f, "redop") || g_strv_contains((const char *const *)f, "op");
        has_root = g_strv_contains((const char *const *)f, "root");
        columns = 3 + has_redop + has_root + 8;
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
        FAIL(lineno, "a result row of all_reduce_perf has 11 to 13 fields (size count type [redop] [root] then "
                     "time algbw busbw #wrong twice), this line has %u", n);
      has_redop = n >= 12;
      has_root = n == 13;
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
    const char *redop = has_redop ? f[c++] : "";
    if (has_redop && strcmp(redop, "none") == 0)
      FAIL(lineno, "reduction \"none\": this is all_gather, broadcast or another collective, not all_reduce_perf");
    if (has_root) {
      gint64 root;
      if (!parse_int64(f[c], &root))
        FAIL(lineno, "root \"%s\" is not an integer", f[c]);
      if (root >= 0)
        FAIL(lineno, "root %" G_GINT64_FORMAT ": a rooted collective (reduce, broadcast), not all_reduce_perf", root);
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
      first_row_line = lineno;
      t->type = g_strdup(type);
      t->redop = g_strdup(redop);
    } else if (strcmp(t->type, type) != 0 || strcmp(t->redop, redop) != 0) {
      FAIL(lineno, "%s/%s after %s/%s: one data type and reduction per file (run without -d all / -o all, "
                   "or split the file)", type, redop, t->type, t->redop);
    }
    DdpNcclTestsRow row = { (gint64)bytes, v[0], v[1], v[2], v[4], v[5], v[6] };
    g_array_append_val(t->rows, row);
  }
  if (t->rows->len == 0)
    FAIL(1, "no all_reduce_perf result row (lines \"SIZE COUNT TYPE … TIME ALGBW BUSBW …\"): not nccl-tests output");
  double ratio;
  int from_ratio = ranks_from_ratio(t->rows, &ratio);
  if (rank_lines > 0) {
    t->ranks = rank_lines;
    /* an AllReduce has busbw = algbw·2(n−1)/n; all_gather (n−1)/n, alltoall (n−1)/n, … */
    double expected = 2.0 * (t->ranks - 1) / t->ranks;
    if (isfinite(ratio) && t->ranks > 1 && fabs(ratio / expected - 1) > 0.03)
      FAIL(first_row_line, "busbw/algbw = %.3f but an AllReduce over %d ranks has 2(n-1)/n = %.3f: not "
                           "all_reduce_perf output", ratio, t->ranks, expected);
  } else {
    if (from_ratio < 2 && t->gpus_per_process * MAX(t->threads, 1) < 2)
      FAIL(first_row_line, "no rank lines and no row with algbw >= 1 GB/s: the number of GPUs cannot be told");
    t->ranks = from_ratio >= 2 ? from_ratio : t->gpus_per_process * MAX(t->threads, 1);
    t->ranks_from_ratio = from_ratio >= 2;
  }
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
  GString *s = g_string_new("imported nccl-tests all_reduce_perf output");
  if (t->gpus_per_process > 0)
    g_string_append_printf(s, "; -g %d (GPUs per process)%s", t->gpus_per_process,
                           t->gpus_per_process > 1 ? ": one process drives several GPUs, host-bound at small sizes" : "");
  if (t->ranks_from_ratio)
    g_string_append_printf(s, "; no rank lines: %d ranks from busbw/algbw", t->ranks);
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
  if (nodes > t->ranks) {
    g_set_error(error, DDP_FIT_ERROR, DDP_FIT_ERROR_IMPORT, "--nodes: %d nodes for the %d ranks of %s", nodes,
                t->ranks, t->source.source);
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
  run.program = "nccl-tests all_reduce_perf (imported by ddpsim fit --import)";
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
      DdpCalibAllreducePoint p = { 0 };
      p.algorithm = (char *)algorithm;
      p.protocol = (char *)protocol;
      p.ranks = t->ranks;
      p.nodes = nodes;
      p.bytes = r->bytes;
      p.dtype = t->type;
      p.in_place = in_place;
      p.iterations = t->iterations;
      p.time_us = p.min_us = p.max_us = in_place ? r->ip_us : r->oop_us;
      p.algbw_GBs = in_place ? r->ip_algbw : r->oop_algbw;
      p.busbw_GBs = in_place ? r->ip_busbw : r->oop_busbw;
      ok = ddp_calibdb_batch_add_allreduce(db, &p, error);
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
