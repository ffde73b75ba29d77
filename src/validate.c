/* validate — the model against published measurements (see validate.h; formats and definitions in
 * docs/validation.md).  Rows run through the library (ddp_collective_compare_csv, ddp_simulate),
 * never by spawning the binary, so a validation of the shipped data takes well under a second. */
#include "validate.h"

#include "fileio.h"
#include "csv.h"

#include "datadir.h"
#include "ddp.h"
#include "keyfile.h"
#include "ranges.h"
#include "scenario.h"

#include <math.h>
#include <string.h>

G_DEFINE_QUARK(ddp-validate-error-quark, ddp_validate_error)

/* ---- statistics ---- */

static int
compare_doubles(gconstpointer a, gconstpointer b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/**
 * ddp_validate_stats:
 * Fills @out with the count, median and maximum of |@errors[i]|, skipping NAN values.  The median
 * of an even count is the mean of the two middle values; with no value both are NAN.
 */
void
ddp_validate_stats(const double *errors, guint n, DdpCompareStats *out)
{
  g_autoptr(GArray) abs_errors = g_array_sized_new(FALSE, FALSE, sizeof(double), n);
  for (guint i = 0; i < n; i++)
    if (!isnan(errors[i])) {
      double e = fabs(errors[i]);
      g_array_append_val(abs_errors, e);
    }
  out->points = abs_errors->len;
  if (abs_errors->len == 0) {
    out->median_abs_error = out->max_abs_error = NAN;
    return;
  }
  g_array_sort(abs_errors, compare_doubles);
  const double *v = (const double *)abs_errors->data;
  guint m = abs_errors->len;
  out->median_abs_error = m % 2 ? v[m / 2] : 0.5 * (v[m / 2 - 1] + v[m / 2]);
  out->max_abs_error = v[m - 1];
}

/* Errors collected per size regime (ALL gets every one), then summarised. */
typedef struct {
  GArray *errors[DDP_REGIME_COUNT];
} RegimeErrors;

static void
regime_errors_init(RegimeErrors *r)
{
  for (int k = 0; k < DDP_REGIME_COUNT; k++)
    r->errors[k] = g_array_new(FALSE, FALSE, sizeof(double));
}

static void
regime_errors_add(RegimeErrors *r, guint64 bytes, double error)
{
  g_array_append_val(r->errors[ddp_size_regime(bytes)], error);
  g_array_append_val(r->errors[DDP_REGIME_ALL], error);
}

/* Summarises into @out and frees the arrays. */
static void
regime_errors_finish(RegimeErrors *r, DdpCompareStats out[DDP_REGIME_COUNT])
{
  for (int k = 0; k < DDP_REGIME_COUNT; k++) {
    ddp_validate_stats((const double *)r->errors[k]->data, r->errors[k]->len, &out[k]);
    g_array_unref(r->errors[k]);
  }
}

/* ---- CSV reading (the training and bucket_cap_mb tables; AllReduce curves are collective's) ---- */

/* One CSV table: the header's column names and the data records with their line numbers. */
typedef struct {
  const char *path;
  GPtrArray *header;   /* of char* */
  GPtrArray *records;  /* of GPtrArray of char* */
  GArray *lines;       /* of guint, the line of each record */
} Table;

static void
table_clear(Table *t)
{
  g_clear_pointer(&t->header, g_ptr_array_unref);
  g_clear_pointer(&t->records, g_ptr_array_unref);
  g_clear_pointer(&t->lines, g_array_unref);
}
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC(Table, table_clear)

static gboolean
table_read(Table *t, const char *path, GError **error)
{
  g_autofree char *text = NULL;
  g_autoptr(GError) local = NULL;
  t->path = path;
  if (!ddp_file_read(path, DDP_FILE_TEXT, &text, NULL, &local)) {   /* regular, ≤ 64 MiB, no NUL */
    g_set_error(error, DDP_VALIDATE_ERROR, DDP_VALIDATE_ERROR_INPUT, "%s", local->message);
    return FALSE;
  }
  g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
  if (!lines[0] || !*g_strstrip(lines[0]) || !(t->header = ddp_csv_split(lines[0]))) {
    g_set_error(error, DDP_VALIDATE_ERROR, DDP_VALIDATE_ERROR_INPUT, "%s:1: header: no CSV header line", path);
    return FALSE;
  }
  for (guint i = 0; i < t->header->len; i++)
    g_strstrip(t->header->pdata[i]);
  t->records = g_ptr_array_new_with_free_func((GDestroyNotify)g_ptr_array_unref);
  t->lines = g_array_new(FALSE, FALSE, sizeof(guint));
  for (guint i = 1; lines[i]; i++) {
    guint line = i + 1;
    if (!*g_strstrip(lines[i]))
      continue;
    GPtrArray *fields = ddp_csv_split(lines[i]);
    if (!fields || fields->len != t->header->len) {
      g_set_error(error, DDP_VALIDATE_ERROR, DDP_VALIDATE_ERROR_INPUT, "%s:%u: %s", path, line,
                  fields ? "record: not as many fields as the header has columns" : "record: unterminated quote");
      if (fields)
        g_ptr_array_unref(fields);
      return FALSE;
    }
    g_ptr_array_add(t->records, fields);
    g_array_append_val(t->lines, line);
  }
  if (t->records->len == 0) {
    g_set_error(error, DDP_VALIDATE_ERROR, DDP_VALIDATE_ERROR_INPUT, "%s:2: record: no data rows", path);
    return FALSE;
  }
  return TRUE;
}

static int
table_column(const Table *t, const char *name)
{
  for (guint i = 0; i < t->header->len; i++)
    if (strcmp(t->header->pdata[i], name) == 0)
      return (int)i;
  return -1;
}

/* Column indices of @names (NULL-terminated) into @cols; all required. */
static gboolean
table_columns(const Table *t, const char *const *names, int *cols, GError **error)
{
  for (guint k = 0; names[k]; k++)
    if ((cols[k] = table_column(t, names[k])) < 0) {
      g_set_error(error, DDP_VALIDATE_ERROR, DDP_VALIDATE_ERROR_INPUT, "%s:1: %s: required column is missing",
                  t->path, names[k]);
      return FALSE;
    }
  return TRUE;
}

static const char *
field(const Table *t, guint record, int col)
{
  return ((GPtrArray *)t->records->pdata[record])->pdata[col];
}

static guint
record_line(const Table *t, guint record)
{
  return g_array_index(t->lines, guint, record);
}

static gboolean
field_error(const Table *t, guint record, const char *column, const char *what, GError **error)
{
  g_set_error(error, DDP_VALIDATE_ERROR, DDP_VALIDATE_ERROR_INPUT, "%s:%u: %s: %s", t->path, record_line(t, record),
              column, what);
  return FALSE;
}

static gboolean
field_count(const Table *t, guint record, int col, const char *column, guint64 *out, GError **error)
{
  gint64 v;
  if (!ddp_parse_integer(field(t, record, col), &v) || v <= 0)
    return field_error(t, record, column, "expected a positive whole number", error);
  *out = (guint64)v;
  return TRUE;
}

static gboolean
field_double(const Table *t, guint record, int col, const char *column, gboolean positive, double *out,
             GError **error)
{
  double v;
  if (!ddp_parse_number(field(t, record, col), &v) || (positive && !(v > 0)))
    return field_error(t, record, column, positive ? "expected a positive number" : "expected a number", error);
  *out = v;
  return TRUE;
}

/* The optional torch_version column of record @r (@col < 0: no such column): NULL when empty (the
 * default release), else a release --torch-version takes; FALSE with a file:line: torch_version
 * error otherwise. */
static gboolean
field_torch_version(const Table *t, guint r, int col, const char **out, GError **error)
{
  *out = col >= 0 && *field(t, r, col) ? field(t, r, col) : NULL;
  guint version;
  if (*out && !ddp_torch_version_parse(*out, &version)) {
    g_autofree char *what = g_strdup_printf("\"%s\" is not a PyTorch release X.Y from 1.4 to 2.99", *out);
    return field_error(t, r, "torch_version", what, error);
  }
  return TRUE;
}

static gboolean
field_nonempty(const Table *t, guint record, int col, const char *column, GError **error)
{
  if (*field(t, record, col))
    return TRUE;
  return field_error(t, record, column, "empty", error);
}

/* ---- running one training configuration ---- */

typedef struct {
  const char *model, *cluster, *precision;
  const char *torch_version;              /* NULL: the default release (2.x) */
  const char *comm_hook;                  /* NULL: none */
  const char *seq_len;                    /* NULL: the model file's */
  gboolean channels_last;                 /* --channels-last */
  gboolean no_broadcast_buffers;          /* --no-broadcast-buffers */
  guint64 gpus;
  double batch, step_ms, bucket_cap_mb;   /* step_ms 0: defaults; bucket_cap_mb 0: PyTorch's 25 */
  gboolean ddp;
  gboolean reference_ddp;                 /* efficiency against the run's reference DDP step, not the no-DDP one */
  guint accumulate;                       /* micro-steps per optimizer step (--accumulate); 0 as 1 */
  guint64 reference_gpus;                 /* the reference row's GPUs and micro-steps (reference_ddp) */
  guint reference_accumulate;
} Config;

/* Iterations per prediction: without stragglers every steady iteration is the same, a few give
 * the p50 as well as a hundred. */
#define VALIDATE_ITERATIONS "5"

/* Step time (p50 of the steady iterations, as the benchmark reports p50) and scaling efficiency of
 * @config (see below), and the nodes its GPUs occupy.  A row without DDP is the 1-GPU step
 * (ddp_simulate_one_gpu), efficiency 1. */
static gboolean
predict(const Config *config, DdpValidatePrediction *out, guint64 *nodes, GError **error)
{
  g_autofree char *gpus = g_strdup_printf("%" G_GUINT64_FORMAT, config->gpus);
  g_autofree char *accumulate = config->accumulate > 1 ? g_strdup_printf("%u", config->accumulate) : NULL;
  char batch[G_ASCII_DTOSTR_BUF_SIZE], step[G_ASCII_DTOSTR_BUF_SIZE], cap[G_ASCII_DTOSTR_BUF_SIZE];
  DdpCliOptions cli = {
    .model = (char *)config->model,
    .cluster = (char *)config->cluster,
    .gpus = gpus,
    .batch = g_ascii_dtostr(batch, sizeof batch, config->batch),
    .precision = (char *)config->precision,
    .iterations = VALIDATE_ITERATIONS,
    .step_ms = config->step_ms > 0 ? g_ascii_dtostr(step, sizeof step, config->step_ms) : NULL,
    .bucket_cap_mb = config->bucket_cap_mb > 0 ? g_ascii_dtostr(cap, sizeof cap, config->bucket_cap_mb) : NULL,
    .torch_version = (char *)config->torch_version,
    .comm_hook = (char *)config->comm_hook,
    .seq_len = (char *)config->seq_len,
    .channels_last = config->channels_last,
    .no_broadcast_buffers = config->no_broadcast_buffers,
    .accumulate = accumulate,
  };
  g_autoptr(DdpScenario) scenario = ddp_scenario_load(NULL, &cli, TRUE, error);
  if (!scenario)
    return FALSE;
  *nodes = 1;
  if (!config->ddp) {
    out->efficiency = 1.0;
    return ddp_simulate_one_gpu(scenario, config->batch, NULL, &out->step_ms, error);
  }
  DdpRunOptions options = { 0 };
  g_autoptr(DdpResult) result = ddp_simulate(scenario, &options, error);
  if (!result)
    return FALSE;
  *nodes = result->nodes;
  out->step_ms = result->p50_ms;
  guint k = MAX(config->accumulate, 1);
  if (config->reference_ddp) {
    /* As such a benchmark derives it: the per-GPU throughput against the reference's — a DDP step
     * of reference_gpus GPUs over reference_accumulate micro-steps, predicted with the same flags:
     * (K / T) over (K_ref / T_ref) (the 1-GPU DDP step over this one when both are 1 and 1) */
    guint k_ref = MAX(config->reference_accumulate, 1);
    double reference_ms = result->p50_ms;
    if (config->gpus != config->reference_gpus || k != k_ref) {
      Config ref = *config;
      ref.gpus = config->reference_gpus;
      ref.accumulate = k_ref;
      ref.reference_ddp = FALSE;
      DdpValidatePrediction at_ref;
      guint64 ref_nodes;
      if (!predict(&ref, &at_ref, &ref_nodes, error))
        return FALSE;
      reference_ms = at_ref.step_ms;
    }
    out->efficiency = ((double)k / result->p50_ms) / ((double)k_ref / reference_ms);
    return TRUE;
  }
  /* As the benchmark derives it: the 1-GPU step without DDP over this step's time a micro-step.
   * With --step-ms that step is the measured one the user gave (K of them against this step's K
   * micro-steps); otherwise the model's 1-GPU prediction of the same K micro-steps (single_gpu_ms,
   * which for K = 1 is also what the model predicts for the no-DDP row). */
  out->efficiency = (config->step_ms > 0 ? k * config->step_ms : result->single_gpu_ms) / result->p50_ms;
  return TRUE;
}

/* The --step-ms (one micro-step of one GPU without DDP) whose prediction of the reference row — DDP
 * on reference_gpus GPUs over reference_accumulate micro-steps — is @measured_ms: the reference
 * measured DDP's own work (bucket copies, host time, its collectives) on top of the compute
 * --step-ms stands for.  That work depends little on the compute, so fixed-point steps
 * s ← s − (T(s) − measured) / K settle it: to a nanosecond, or the closest of 20 (where BatchNorm
 * waits for the collectives, T(s) steps where a BatchNorm's start crosses a collective's end). */
static gboolean
solve_reference_step(const Config *config, double measured_ms, double *step_ms, GError **error)
{
  Config ref = *config;
  ref.gpus = config->reference_gpus;
  ref.accumulate = MAX(config->reference_accumulate, 1);
  ref.ddp = TRUE;
  ref.reference_ddp = FALSE;
  ref.step_ms = measured_ms / ref.accumulate;
  double best = ref.step_ms, best_miss = G_MAXDOUBLE;
  for (int k = 0; k < 20; k++) {
    DdpValidatePrediction at_ref;
    guint64 nodes;
    if (!predict(&ref, &at_ref, &nodes, error))
      return FALSE;
    double miss = at_ref.step_ms - measured_ms;
    if (fabs(miss) < best_miss) {
      best_miss = fabs(miss);
      best = ref.step_ms;
    }
    if (fabs(miss) < 1e-6)
      break;
    ref.step_ms -= miss / ref.accumulate;
  }
  *step_ms = best;
  return TRUE;
}

/* Wraps a prediction failure as this row's input error. */
static gboolean
row_failed(const Table *t, guint record, GError *cause, GError **error)
{
  g_set_error(error, DDP_VALIDATE_ERROR, DDP_VALIDATE_ERROR_INPUT, "%s:%u: ddpsim_model: cannot predict: %s", t->path,
              record_line(t, record), cause->message);
  g_error_free(cause);
  return FALSE;
}

/* A model or cluster column as the loaders take it: a value with a '/' is a path, relative ones from
 * the CSV's folder (as collective reads its cluster column); anything else a shipped name. */
static char *
resolve(const char *csv_path, const char *value)
{
  if (!strchr(value, '/') || g_path_is_absolute(value))
    return g_strdup(value);
  g_autofree char *dir = g_path_get_dirname(csv_path);
  return g_build_filename(dir, value, NULL);
}

/* Why a row cannot run: its model is a bare name no data directory ships (another release's model,
 * say).  A path that does not exist is bad input instead, reported by the loader. */
static char *
model_missing(const char *model)
{
  if (strchr(model, '/'))
    return NULL;
  g_autofree char *found = ddp_datadir_find(model, "models", ".model");
  if (found)
    return NULL;
  return g_strdup_printf("model %s is not shipped (models/%s.model): skipped", model, model);
}

/* ---- training rows ---- */

static void
training_row_clear(gpointer data)
{
  DdpValidateTrainingRow *row = data;
  g_free(row->model);
  g_free(row->cluster);
  g_free(row->skipped);
}

static void
training_free(gpointer data)
{
  DdpValidateTraining *t = data;
  g_free(t->path);
  g_array_unref(t->rows);
  g_free(t);
}

static gboolean
parse_yes_no(const char *text, gboolean *out)
{
  if (g_ascii_strcasecmp(text, "yes") == 0 || g_ascii_strcasecmp(text, "true") == 0)
    return *out = TRUE, TRUE;
  if (g_ascii_strcasecmp(text, "no") == 0 || g_ascii_strcasecmp(text, "false") == 0)
    return *out = FALSE, TRUE;
  return FALSE;
}

/* A run's reference row: its measured step, GPUs and micro-steps. */
typedef struct {
  double ms;
  guint64 gpus;
  guint accumulate;
} Reference;

/* What a measured 1-GPU step is the --step-ms of: the same model, cluster, batch, precision and
 * run (the optional run column: one benchmark run's rows; empty when the table has none). */
static char *
step_key(const char *model, const char *cluster, double batch, const char *precision, const char *run)
{
  char text[G_ASCII_DTOSTR_BUF_SIZE];
  return g_strdup_printf("%s\t%s\t%s\t%s\t%s", model, cluster, g_ascii_dtostr(text, sizeof text, batch), precision,
                         run);
}

/* The statistics of @n training tables' rows into @out (its rows untouched): over their predicted
 * DDP rows, and the defaults' step over the 1-GPU input rows. */
static void
training_stats(DdpValidateTraining *const *tables, guint n, DdpValidateTraining *out)
{
  GArray *e[7];
  for (int k = 0; k < 7; k++)
    e[k] = g_array_new(FALSE, FALSE, sizeof(double));
  for (guint f = 0; f < n; f++)
    for (guint r = 0; r < tables[f]->rows->len; r++) {
      const DdpValidateTrainingRow *w = &g_array_index(tables[f]->rows, DdpValidateTrainingRow, r);
      if (w->skipped)
        continue;
      if (!w->ddp) {
        g_array_append_val(e[6], w->defaults.step_error);
        continue;
      }
      double v[6] = { w->with_step.step_error, w->with_step.efficiency_error, w->defaults.step_error,
                      w->defaults.efficiency_error, w->baseline.step_error, w->baseline.efficiency_error };
      for (int k = 0; k < 6; k++)
        g_array_append_val(e[k], v[k]);
    }
  DdpCompareStats *s[7] = { &out->step_error, &out->efficiency_error, &out->default_step_error,
                             &out->default_efficiency_error, &out->baseline_step_error,
                             &out->baseline_efficiency_error, &out->one_gpu_default_step_error };
  for (int k = 0; k < 7; k++) {
    ddp_validate_stats((const double *)(void *)e[k]->data, e[k]->len, s[k]);
    g_array_unref(e[k]);
  }
}

/* The run column's value of record @r, "" without the column. */
static const char *
run_of(const Table *t, guint r, int run_col)
{
  return run_col >= 0 ? field(t, r, run_col) : "";
}

/* "FILE:LINE: column: "text" must be <range>", as the flag the column stands for would say it. */
static gboolean
field_out_of_range(const Table *t, guint record, const char *column, const char *text, const DdpRange *range,
                   GError **error)
{
  g_autofree char *describe = ddp_range_describe(range);
  g_autofree char *what = g_strdup_printf("\"%s\" must be %s", text, describe);
  return field_error(t, record, column, what, error);
}

/* An optional yes/no column @column of record @r (@col < 0: no such column; empty: no). */
static gboolean
field_yes_no(const Table *t, guint r, int col, const char *column, gboolean *out, GError **error)
{
  *out = FALSE;
  if (col < 0 || !*field(t, r, col))
    return TRUE;
  const char *text = field(t, r, col);
  if (strcmp(text, "yes") != 0 && strcmp(text, "no") != 0)
    return field_error(t, r, column, "expected yes or no", error);
  *out = strcmp(text, "yes") == 0;
  return TRUE;
}

/* The optional broadcast_buffers column of record @r (@col < 0: no such column; empty: yes, DDP's
 * default): FALSE in *@no_broadcast when the run passed broadcast_buffers=False (PyTorch's own DDP
 * benchmark, benchmarks/distributed/ddp/benchmark.py). */
static gboolean
field_broadcast_buffers(const Table *t, guint r, int col, gboolean *no_broadcast, GError **error)
{
  gboolean broadcast = TRUE;
  if (col >= 0 && *field(t, r, col) && !field_yes_no(t, r, col, "broadcast_buffers", &broadcast, error))
    return FALSE;
  *no_broadcast = !broadcast;
  return TRUE;
}

/* The optional bucket_cap_mb, comm_hook, seq_len, channels_last and broadcast_buffers columns of
 * record @r (@col < 0: no such column; an empty cell: PyTorch's 25 MiB, no hook, the model file's
 * sequence length, NCHW, buffers broadcast): what a run set that the defaults do not say — one
 * bucket for apex's DistributedDataParallel(message_size=250e6), fp16 gradients for apex AMP O2,
 * BERT's phase-1 128 tokens, NVIDIA's ConvNets in channels_last (memory_format nhwc), PyTorch's DDP
 * benchmark without the buffer broadcast. */
static gboolean
field_ddp_options(const Table *t, guint r, const int cols[5], double *cap, const char **hook, const char **seq_len,
                  gboolean *channels_last, gboolean *no_broadcast, GError **error)
{
  int cap_col = cols[0], hook_col = cols[1], seq_col = cols[2], layout_col = cols[3], broadcast_col = cols[4];
  *cap = 0;
  *hook = *seq_len = NULL;
  if (!field_yes_no(t, r, layout_col, "channels_last", channels_last, error) ||
      !field_broadcast_buffers(t, r, broadcast_col, no_broadcast, error))
    return FALSE;
  if (seq_col >= 0 && *field(t, r, seq_col)) {
    *seq_len = field(t, r, seq_col);
    double tokens;
    if (!ddp_parse_number(*seq_len, &tokens) || !ddp_range_contains(&DDP_RANGE_SEQ_LEN, tokens))
      return field_out_of_range(t, r, "seq_len", *seq_len, &DDP_RANGE_SEQ_LEN, error);
  }
  if (cap_col >= 0 && *field(t, r, cap_col)) {
    const char *text = field(t, r, cap_col);
    if (!ddp_parse_number(text, cap) || !ddp_range_contains(&DDP_RANGE_BUCKET_CAP_MB, *cap))
      return field_out_of_range(t, r, "bucket_cap_mb", text, &DDP_RANGE_BUCKET_CAP_MB, error);
  }
  if (hook_col >= 0 && *field(t, r, hook_col)) {
    *hook = field(t, r, hook_col);
    if (strcmp(*hook, "none") != 0 && strcmp(*hook, "fp16") != 0 && strcmp(*hook, "bf16") != 0)
      return field_error(t, r, "comm_hook", "expected none, fp16 or bf16", error);
  }
  return TRUE;
}

/* Reads a training table; the no-DDP rows' step times go into @step_ms (step_key → double*) for
 * --step-ms, then every row is predicted.  Optional columns: torch_version, the PyTorch release
 * measured (--torch-version; empty: 2.x); run, which rows were measured together (each run has its
 * own input row); accumulate, bucket_cap_mb, comm_hook, seq_len, channels_last and
 * broadcast_buffers, what the run set (--accumulate, --bucket-cap-mb, --comm-hook, --seq-len,
 * --channels-last, --no-broadcast-buffers; empty: the defaults).  A run whose input row is DDP
 * itself (ddp = reference: the benchmark's efficiencies are relative to DDP on one GPU, or on the
 * node a strong-scaling run starts from) gets the --step-ms whose prediction of that row is its
 * step, and predicted efficiencies against the model's prediction of that row. */
static DdpValidateTraining *
training_read(const char *path, GHashTable *step_ms, GError **error)
{
  enum { C_MODEL, C_CLUSTER, C_GPUS, C_NODES, C_BATCH, C_DDP, C_PRECISION, C_MS, C_EFF, N_C };
  static const char *const names[N_C + 1] = { "ddpsim_model", "cluster", "gpus", "nodes", "per_gpu_batch", "ddp",
                                              "ddpsim_precision", "iteration_ms", "scaling_efficiency", NULL };
  int col[N_C];
  g_auto(Table) t = { 0 };
  if (!table_read(&t, path, error) || !table_columns(&t, names, col, error))
    return NULL;

  int torch_col = table_column(&t, "torch_version");   /* optional: --torch-version */
  int run_col = table_column(&t, "run");               /* optional: which rows share an input row */
  int accumulate_col = table_column(&t, "accumulate"); /* optional: --accumulate */
  const int option_cols[5] = { table_column(&t, "bucket_cap_mb"), table_column(&t, "comm_hook"),
                                table_column(&t, "seq_len"), table_column(&t, "channels_last"),
                                table_column(&t, "broadcast_buffers") };
                                /* optional: --bucket-cap-mb, --comm-hook, --seq-len, --channels-last,
                                 * --no-broadcast-buffers */
  g_autoptr(GHashTable) references = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
  g_autoptr(GHashTable) solved_steps = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
  g_autoptr(GArray) rows = g_array_new(FALSE, TRUE, sizeof(DdpValidateTrainingRow));
  g_array_set_clear_func(rows, training_row_clear);
  for (guint r = 0; r < t.records->len; r++) {
    DdpValidateTrainingRow row = { .line = record_line(&t, r) };
    g_array_append_val(rows, row);
    DdpValidateTrainingRow *w = &g_array_index(rows, DdpValidateTrainingRow, rows->len - 1);
    if (!field_nonempty(&t, r, col[C_MODEL], names[C_MODEL], error) ||
        !field_nonempty(&t, r, col[C_CLUSTER], names[C_CLUSTER], error) ||
        !field_count(&t, r, col[C_GPUS], names[C_GPUS], &w->gpus, error) ||
        !field_count(&t, r, col[C_NODES], names[C_NODES], &w->nodes, error) ||
        !field_double(&t, r, col[C_BATCH], names[C_BATCH], TRUE, &w->batch, error) ||
        !field_double(&t, r, col[C_MS], names[C_MS], TRUE, &w->published_ms, error) ||
        !field_double(&t, r, col[C_EFF], names[C_EFF], TRUE, &w->published_efficiency, error))
      return NULL;
    const char *ddp = field(&t, r, col[C_DDP]);
    if (g_ascii_strcasecmp(ddp, "reference") == 0) {
      w->reference = TRUE;
    } else if (!parse_yes_no(ddp, &w->ddp)) {
      field_error(&t, r, names[C_DDP], "expected yes, no or reference", error);
      return NULL;
    }
    if (!w->ddp && !w->reference && w->gpus != 1) {
      field_error(&t, r, names[C_GPUS], "a row without DDP runs on 1 GPU", error);
      return NULL;
    }
    w->accumulate = 1;
    if (accumulate_col >= 0 && *field(&t, r, accumulate_col)) {
      const char *text = field(&t, r, accumulate_col);
      double k;
      if (!ddp_parse_number(text, &k) || !ddp_range_contains(&DDP_RANGE_ACCUMULATE, k)) {
        field_out_of_range(&t, r, "accumulate", text, &DDP_RANGE_ACCUMULATE, error);
        return NULL;
      }
      w->accumulate = (guint)k;
    }
    w->model = g_strdup(field(&t, r, col[C_MODEL]));
    w->cluster = g_strdup(field(&t, r, col[C_CLUSTER]));
    if (!w->ddp) {
      char *key = step_key(w->model, w->cluster, w->batch, field(&t, r, col[C_PRECISION]), run_of(&t, r, run_col));
      if (g_hash_table_contains(step_ms, key) || g_hash_table_contains(references, key)) {
        g_free(key);
        field_error(&t, r, names[C_DDP], "a second input row (no or reference) for this model, cluster, batch, "
                    "precision and run", error);
        return NULL;
      }
      if (w->reference) {
        Reference ref = { w->published_ms, w->gpus, w->accumulate };
        g_hash_table_insert(references, key, g_memdup2(&ref, sizeof ref));
      } else {
        g_hash_table_insert(step_ms, key, g_memdup2(&w->published_ms, sizeof(double)));
      }
    }
  }

  for (guint r = 0; r < rows->len; r++) {
    DdpValidateTrainingRow *w = &g_array_index(rows, DdpValidateTrainingRow, r);
    if ((w->skipped = model_missing(w->model)))
      continue;
    const char *precision = field(&t, r, col[C_PRECISION]);
    g_autofree char *key = step_key(w->model, w->cluster, w->batch, precision, run_of(&t, r, run_col));
    const double *step = g_hash_table_lookup(step_ms, key);
    const Reference *reference = g_hash_table_lookup(references, key);
    w->step_ms_flag = step ? *step : 0;
    g_autofree char *model = resolve(path, w->model), *cluster = resolve(path, w->cluster);
    const char *torch, *hook, *seq_len;
    double cap;
    gboolean channels_last, no_broadcast;
    if (!field_torch_version(&t, r, torch_col, &torch, error) ||
        !field_ddp_options(&t, r, option_cols, &cap, &hook, &seq_len, &channels_last, &no_broadcast, error))
      return NULL;
    Config config = { model, cluster, precision, torch, hook, seq_len, channels_last, no_broadcast, w->gpus, w->batch, 0,
                      cap, w->ddp || w->reference, reference != NULL, w->accumulate,
                      reference ? reference->gpus : 1, reference ? reference->accumulate : 1 };
    GError *cause = NULL;
    guint64 nodes;
    if (reference) {
      /* once per run (and release): every row of the run takes the same solved --step-ms */
      g_autofree char *solved_key = g_strconcat(key, "\t", torch ? torch : "", NULL);
      const double *solved = g_hash_table_lookup(solved_steps, solved_key);
      if (solved) {
        w->step_ms_flag = *solved;
      } else {
        if (!solve_reference_step(&config, reference->ms, &w->step_ms_flag, &cause))
          return row_failed(&t, r, cause, error), NULL;
        g_hash_table_insert(solved_steps, g_steal_pointer(&solved_key), g_memdup2(&w->step_ms_flag, sizeof(double)));
      }
    }
    if (!predict(&config, &w->defaults, &nodes, &cause))
      return row_failed(&t, r, cause, error), NULL;
    if (nodes != w->nodes) {
      g_autofree char *what = g_strdup_printf("the cluster places %" G_GUINT64_FORMAT " GPUs on %" G_GUINT64_FORMAT
                                              " node%s", w->gpus, nodes, nodes == 1 ? "" : "s");
      field_error(&t, r, names[C_NODES], what, error);
      return NULL;
    }
    if (w->step_ms_flag > 0) {
      config.step_ms = w->step_ms_flag;
      if (!predict(&config, &w->with_step, &nodes, &cause))
        return row_failed(&t, r, cause, error), NULL;
      /* "always 100 %": every micro-step as long as the input's */
      w->baseline.step_ms = reference ? reference->ms * w->accumulate / reference->accumulate
                                      : w->step_ms_flag * w->accumulate;
      w->baseline.efficiency = 1.0;
    }
    DdpValidatePrediction *p[] = { &w->defaults, &w->with_step, &w->baseline };
    for (gsize k = 0; k < G_N_ELEMENTS(p); k++) {
      p[k]->step_error = p[k]->step_ms > 0 ? p[k]->step_ms / w->published_ms - 1.0 : NAN;
      p[k]->efficiency_error = p[k]->efficiency > 0 ? p[k]->efficiency / w->published_efficiency - 1.0 : NAN;
    }
  }
  DdpValidateTraining *out = g_new0(DdpValidateTraining, 1);
  out->path = g_strdup(path);
  out->rows = g_steal_pointer(&rows);
  training_stats(&out, 1, out);
  return out;
}

/* ---- bucket_cap_mb comparisons ---- */

/* The metric compared: PyTorch's diff.py "p75 throughput change" of cap 1 against cap 25, in %. */
static const char bucketcap_metric[] = "p75 throughput change vs bucket_cap_mb=25";

static void
bucketcap_row_clear(gpointer data)
{
  DdpValidateBucketcapRow *row = data;
  g_free(row->model);
  g_free(row->cluster);
  g_free(row->skipped);
}

static void
bucketcap_free(gpointer data)
{
  DdpValidateBucketcap *b = data;
  g_free(b->path);
  g_array_unref(b->rows);
  g_free(b);
}

/* Reads a bucket_cap_mb table and predicts its cap-1-vs-25 rows (the others — p75/p95 step times,
 * throughputs — restate the same comparison and are not predicted).  --step-ms comes from
 * @step_ms when a training table gave this model and cluster's 1-GPU step.  An optional
 * torch_version column names the PyTorch release measured (--torch-version; empty: 2.x), an
 * optional broadcast_buffers column whether the run broadcast its buffers (no:
 * --no-broadcast-buffers; empty: yes). */
static DdpValidateBucketcap *
bucketcap_read(const char *path, GHashTable *step_ms, GError **error)
{
  enum { C_MODEL, C_CLUSTER, C_GPUS, C_BATCH, C_PRECISION, C_CAP, C_METRIC, C_VALUE, N_C };
  static const char *const names[N_C + 1] = { "ddpsim_model", "cluster", "gpus", "per_gpu_batch", "ddpsim_precision",
                                              "bucket_cap_mb", "metric", "value", NULL };
  int col[N_C];
  g_auto(Table) t = { 0 };
  if (!table_read(&t, path, error) || !table_columns(&t, names, col, error))
    return NULL;
  int torch_col = table_column(&t, "torch_version");
  int broadcast_col = table_column(&t, "broadcast_buffers");
  g_autoptr(GArray) rows = g_array_new(FALSE, TRUE, sizeof(DdpValidateBucketcapRow));
  g_array_set_clear_func(rows, bucketcap_row_clear);
  g_autoptr(GArray) errors = g_array_new(FALSE, FALSE, sizeof(double));
  g_autoptr(GArray) baseline_errors = g_array_new(FALSE, FALSE, sizeof(double));
  for (guint r = 0; r < t.records->len; r++) {
    double cap = 0, change = 0;
    if (!field_double(&t, r, col[C_CAP], names[C_CAP], TRUE, &cap, error))
      return NULL;
    if (strcmp(field(&t, r, col[C_METRIC]), bucketcap_metric) != 0)
      continue;
    if (cap != 1) {
      field_error(&t, r, names[C_CAP], "the throughput change is reported on the bucket_cap_mb=1 rows", error);
      return NULL;
    }
    DdpValidateBucketcapRow row = { .line = record_line(&t, r) };
    if (!field_nonempty(&t, r, col[C_MODEL], names[C_MODEL], error) ||
        !field_nonempty(&t, r, col[C_CLUSTER], names[C_CLUSTER], error) ||
        !field_count(&t, r, col[C_GPUS], names[C_GPUS], &row.gpus, error) ||
        !field_double(&t, r, col[C_BATCH], names[C_BATCH], TRUE, &row.batch, error) ||
        !field_double(&t, r, col[C_VALUE], names[C_VALUE], FALSE, &change, error))
      return NULL;
    if (!(change > -100)) {
      field_error(&t, r, names[C_VALUE], "a throughput change must be above -100 %", error);
      return NULL;
    }
    row.model = g_strdup(field(&t, r, col[C_MODEL]));
    row.cluster = g_strdup(field(&t, r, col[C_CLUSTER]));
    row.published_ratio = 1.0 + change / 100.0;
    row.error = row.baseline_error = NAN;
    g_array_append_val(rows, row);
    DdpValidateBucketcapRow *w = &g_array_index(rows, DdpValidateBucketcapRow, rows->len - 1);
    if ((w->skipped = model_missing(w->model)))
      continue;
    const char *precision = field(&t, r, col[C_PRECISION]);
    g_autofree char *key = step_key(w->model, w->cluster, w->batch, precision, "");
    const double *step = g_hash_table_lookup(step_ms, key);
    w->step_ms_flag = step ? *step : 0;
    g_autofree char *model = resolve(path, w->model), *cluster = resolve(path, w->cluster);
    const char *torch;
    gboolean no_broadcast;
    if (!field_torch_version(&t, r, torch_col, &torch, error) ||
        !field_broadcast_buffers(&t, r, broadcast_col, &no_broadcast, error))
      return NULL;
    Config small = { model, cluster, precision, torch, NULL, NULL, FALSE, no_broadcast, w->gpus, w->batch, w->step_ms_flag,
                     1, TRUE, FALSE, 1, 1, 1 };
    Config large = small;
    large.bucket_cap_mb = 25;
    DdpValidatePrediction at_small = { 0 }, at_large = { 0 };
    GError *cause = NULL;
    guint64 nodes;
    if (!predict(&small, &at_small, &nodes, &cause) || !predict(&large, &at_large, &nodes, &cause))
      return row_failed(&t, r, cause, error), NULL;
    w->predicted_ratio = at_large.step_ms / at_small.step_ms;
    w->error = w->predicted_ratio / w->published_ratio - 1.0;
    w->baseline_error = 1.0 / w->published_ratio - 1.0;
    g_array_append_val(errors, w->error);
    g_array_append_val(baseline_errors, w->baseline_error);
  }
  if (rows->len == 0) {
    g_set_error(error, DDP_VALIDATE_ERROR, DDP_VALIDATE_ERROR_INPUT, "%s:2: metric: no \"%s\" rows", path,
                bucketcap_metric);
    return NULL;
  }
  DdpValidateBucketcap *out = g_new0(DdpValidateBucketcap, 1);
  out->path = g_strdup(path);
  ddp_validate_stats((const double *)errors->data, errors->len, &out->error);
  ddp_validate_stats((const double *)baseline_errors->data, baseline_errors->len, &out->baseline_error);
  out->rows = g_steal_pointer(&rows);
  return out;
}

/* ---- AllReduce curves ---- */

static void
curve_clear(gpointer data)
{
  g_free(((DdpValidateCurve *)data)->label);
}

static void
allreduce_free(gpointer data)
{
  DdpValidateAllreduce *a = data;
  g_free(a->path);
  g_array_unref(a->curves);
  g_ptr_array_unref(a->compare);
  g_free(a);
}

/* "validation/oci-bm-gpu4-8.cluster" → "oci-bm-gpu4-8"; "dgx-a100" stays. */
static char *
cluster_label(const char *cluster)
{
  g_autofree char *base = g_path_get_basename(cluster);
  if (g_str_has_suffix(base, ".cluster"))
    base[strlen(base) - strlen(".cluster")] = '\0';
  return g_steal_pointer(&base);
}

/* The baseline collective for one curve: the textbook ring closed form on the curve's cluster,
 * t = 2(n-1)·α + 2(n-1)/n · S/B with the cluster file's spec latency α and slowest per-GPU link
 * bandwidth B (cost_model = alpha-beta, algorithm ring; docs/collective.md).  The cluster is named
 * as collective's comparison reads it: a value with a '/' is a path, relative ones from the CSV's
 * folder; anything else a shipped name.  @cluster_out keeps the cluster alive (freed by the caller). */
static DdpCollective *
baseline_collective(const char *csv_path, const DdpCompareCurve *curve, DdpCluster **cluster_out, GError **error)
{
  g_autofree char *dir = g_path_get_dirname(csv_path);
  g_autofree char *where = strchr(curve->cluster, '/') && !g_path_is_absolute(curve->cluster)
                             ? g_build_filename(dir, curve->cluster, NULL)
                             : g_strdup(curve->cluster);
  DdpCluster *cluster = ddp_cluster_load(where, error);
  if (!cluster)
    return NULL;
  cluster->nccl.cost_model = DDP_COST_ALPHA_BETA;
  cluster->nccl.algorithm = DDP_ALGO_RING;
  cluster->nccl.protocol = DDP_PROTO_AUTO;
  cluster->nccl.disabled_algorithms = cluster->nccl.disabled_protocols = 0;   /* the file's NCCL lists too */
  DdpCollective *model = ddp_collective_new(cluster, curve->gpus, error);
  if (!model) {
    ddp_cluster_free(cluster);
    return NULL;
  }
  *cluster_out = cluster;
  return model;
}

/* Statistics of the model's errors come from collective (ddp_compare_curve_stats, ddp_compare_stats);
 * the baseline's are collected here per regime, for the curve, the file's pool, @all_baseline
 * (every file's; NULL for a behaviour check, kept out of the pool) and @part_baseline (the in- or
 * out-of-sample pool's, or NULL). */
static DdpValidateAllreduce *
allreduce_read(const char *path, RegimeErrors *all_baseline, RegimeErrors *part_baseline, GError **error)
{
  GPtrArray *compare = ddp_collective_compare_csv(path, error);
  if (!compare)
    return NULL;
  DdpValidateAllreduce *out = g_new0(DdpValidateAllreduce, 1);
  out->path = g_strdup(path);
  out->compare = compare;
  out->curves = g_array_new(FALSE, TRUE, sizeof(DdpValidateCurve));
  g_array_set_clear_func(out->curves, curve_clear);
  RegimeErrors file_baseline;
  regime_errors_init(&file_baseline);
  gboolean ok = TRUE;
  for (guint c = 0; ok && c < compare->len; c++) {
    const DdpCompareCurve *curve = compare->pdata[c];
    DdpCluster *cluster = NULL;
    g_autoptr(GError) cause = NULL;
    g_autoptr(DdpCollective) baseline_model = baseline_collective(path, curve, &cluster, &cause);
    if (!baseline_model) {
      g_set_error(error, DDP_VALIDATE_ERROR, DDP_VALIDATE_ERROR_INPUT, "%s: cluster: %s", path, cause->message);
      ok = FALSE;
      break;
    }
    DdpValidateCurve v = { .curve = curve, .label = cluster_label(curve->cluster) };
    RegimeErrors baseline;
    regime_errors_init(&baseline);
    for (guint i = 0; i < curve->points->len; i++) {
      const DdpComparePoint *p = &g_array_index(curve->points, DdpComparePoint, i);
      DdpCollectiveCost cost;
      ddp_collective_allreduce(baseline_model, p->bytes, &cost);
      /* busbw ∝ 1/time: predicted / measured busbw = measured / predicted time, as collective's */
      double base = p->measured_us / cost.time_us - 1.0;
      RegimeErrors *b[] = { &baseline, &file_baseline, all_baseline, part_baseline };
      for (gsize k = 0; k < G_N_ELEMENTS(b); k++)
        if (b[k])
          regime_errors_add(b[k], p->bytes, base);
    }
    ddp_compare_curve_stats(curve, v.model);
    regime_errors_finish(&baseline, v.baseline);
    g_array_append_val(out->curves, v);
    g_clear_pointer(&baseline_model, ddp_collective_free);
    ddp_cluster_free(cluster);
  }
  ddp_compare_stats(compare, out->model);
  regime_errors_finish(&file_baseline, out->baseline);
  if (!ok) {
    allreduce_free(out);
    return NULL;
  }
  return out;
}

/* ---- sharded-strategy throughput ---- */

static void
sharded_row_clear(gpointer data)
{
  DdpValidateShardedRow *r = data;
  g_free(r->model);
  g_free(r->cluster);
  g_free(r->mode);
  g_free(r->sharding);
  g_free(r->precision);
  g_free(r->optimizer);
  g_free(r->fsdp_accumulate);
  g_free(r->skipped);
}

static void
sharded_free(gpointer data)
{
  DdpValidateSharded *t = data;
  g_free(t->path);
  g_array_unref(t->rows);
  g_free(t);
}

/* The rule of thumb the baseline stands for: a transformer step costs 6·Ψ FLOPs per token
 * (forward 2Ψ, backward 4Ψ; Kaplan et al. 2020) and good FSDP runs reach about half of the GPU's
 * dense peak. */
#define MFU_BASELINE 0.5

/* Predicts one row: `predict --mode M --sharding S` with the row's model, cluster, batch, sequence
 * length, precision, optimizer, micro-steps and activation checkpointing. */
static gboolean
sharded_predict(const char *csv_path, DdpValidateShardedRow *row, GError **error)
{
  g_autofree char *model = resolve(csv_path, row->model), *cluster = resolve(csv_path, row->cluster);
  g_autofree char *gpus = g_strdup_printf("%" G_GUINT64_FORMAT, row->gpus);
  g_autofree char *seq = g_strdup_printf("%u", row->seq_len);
  g_autofree char *accumulate = g_strdup_printf("%" G_GUINT64_FORMAT, row->accumulate);
  char batch[G_ASCII_DTOSTR_BUF_SIZE];
  DdpCliOptions cli = {
    .model = model, .cluster = cluster, .gpus = gpus, .batch = g_ascii_dtostr(batch, sizeof batch, row->batch),
    .precision = row->precision, .optimizer = row->optimizer, .iterations = VALIDATE_ITERATIONS,
    .mode = row->mode, .sharding = strcmp(row->sharding, "-") == 0 ? NULL : row->sharding, .seq_len = seq,
    .accumulate = accumulate, .activation_checkpointing = row->activation_checkpointing,
    .fsdp_accumulate = row->fsdp_accumulate,
  };
  g_autoptr(DdpScenario) scenario = ddp_scenario_load(NULL, &cli, TRUE, error);
  if (!scenario)
    return FALSE;
  scenario->setup.allow_oom = TRUE;
  g_autoptr(DdpResult) result = ddp_simulate(scenario, NULL, error);
  if (!result)
    return FALSE;
  /* an iteration, on N GPUs or on one, is the optimizer step's micro-steps */
  double tokens = row->batch * row->seq_len;
  row->predicted = tokens * (double)row->accumulate / (result->p50_ms / 1e3);
  row->baseline = tokens * (double)row->accumulate / (result->single_gpu_ms / 1e3);
  row->mfu_baseline = MFU_BASELINE * scenario->cluster->gpu.peak_tflops[scenario->setup.precision] * 1e12 /
                      (6.0 * (double)ddp_model_param_count(scenario->model));
  row->error = row->predicted / row->published - 1.0;
  row->baseline_error = row->baseline / row->published - 1.0;
  row->mfu_error = row->mfu_baseline / row->published - 1.0;
  row->fits = result->memory.fits;
  return TRUE;
}

/* A table of published throughput under a sharded strategy: columns ddpsim_model, cluster, gpus,
 * mode (fsdp, zero1), sharding (full, grad-op, hybrid, none; "-" for zero1), per_gpu_batch,
 * seq_len, ddpsim_precision, optimizer, tokens_per_gpu_s, and optionally accumulate (micro-steps a
 * step; empty: 1), fsdp_accumulate (no-sync or sharded; empty: ddpsim's default) and
 * activation_checkpointing (yes or no; empty: no) (docs/validation.md). */
static DdpValidateSharded *
sharded_read(const char *path, GError **error)
{
  static const char *const names[] = { "ddpsim_model", "cluster", "gpus", "mode", "sharding", "per_gpu_batch",
                                       "seq_len", "ddpsim_precision", "optimizer", "tokens_per_gpu_s", NULL };
  enum { MODEL, CLUSTER, GPUS, MODE, SHARDING, BATCH, SEQ, PRECISION, OPTIMIZER, TOKENS, N_COLS };
  Table t = { 0 };
  int col[N_COLS];
  if (!table_read(&t, path, error) || !table_columns(&t, names, col, error)) {
    table_clear(&t);
    return NULL;
  }
  int accumulate_col = table_column(&t, "accumulate"), checkpointing_col = table_column(&t, "activation_checkpointing");
  int fsdp_accumulate_col = table_column(&t, "fsdp_accumulate");
  DdpValidateSharded *out = g_new0(DdpValidateSharded, 1);
  out->path = g_strdup(path);
  out->rows = g_array_new(FALSE, TRUE, sizeof(DdpValidateShardedRow));
  g_array_set_clear_func(out->rows, sharded_row_clear);
  g_autoptr(GArray) errors = g_array_new(FALSE, FALSE, sizeof(double));
  g_autoptr(GArray) baseline = g_array_new(FALSE, FALSE, sizeof(double));
  g_autoptr(GArray) mfu = g_array_new(FALSE, FALSE, sizeof(double));
  gboolean ok = TRUE;
  for (guint r = 0; ok && r < t.records->len; r++) {
    DdpValidateShardedRow row = { .line = record_line(&t, r), .accumulate = 1 };
    guint64 seq = 0;
    ok = field_nonempty(&t, r, col[MODEL], "ddpsim_model", error) && field_nonempty(&t, r, col[CLUSTER], "cluster", error) &&
         field_nonempty(&t, r, col[MODE], "mode", error) && field_nonempty(&t, r, col[SHARDING], "sharding", error) &&
         field_nonempty(&t, r, col[PRECISION], "ddpsim_precision", error) &&
         field_nonempty(&t, r, col[OPTIMIZER], "optimizer", error) &&
         field_count(&t, r, col[GPUS], "gpus", &row.gpus, error) &&
         field_double(&t, r, col[BATCH], "per_gpu_batch", TRUE, &row.batch, error) &&
         field_count(&t, r, col[SEQ], "seq_len", &seq, error) &&
         field_double(&t, r, col[TOKENS], "tokens_per_gpu_s", TRUE, &row.published, error) &&
         (accumulate_col < 0 || !*field(&t, r, accumulate_col) ||
          field_count(&t, r, accumulate_col, "accumulate", &row.accumulate, error)) &&
         field_yes_no(&t, r, checkpointing_col, "activation_checkpointing", &row.activation_checkpointing, error);
    if (!ok)
      break;
    row.seq_len = (guint)MIN(seq, G_MAXUINT);
    row.model = g_strdup(field(&t, r, col[MODEL]));
    row.cluster = g_strdup(field(&t, r, col[CLUSTER]));
    row.mode = g_strdup(field(&t, r, col[MODE]));
    row.sharding = g_strdup(field(&t, r, col[SHARDING]));
    row.precision = g_strdup(field(&t, r, col[PRECISION]));
    row.optimizer = g_strdup(field(&t, r, col[OPTIMIZER]));
    if (fsdp_accumulate_col >= 0 && *field(&t, r, fsdp_accumulate_col))
      row.fsdp_accumulate = g_strdup(field(&t, r, fsdp_accumulate_col));
    row.skipped = model_missing(row.model);
    if (!row.skipped) {
      GError *cause = NULL;
      if (!sharded_predict(path, &row, &cause)) {
        sharded_row_clear(&row);
        ok = row_failed(&t, r, cause, error);
        break;
      }
      g_array_append_val(errors, row.error);
      g_array_append_val(baseline, row.baseline_error);
      g_array_append_val(mfu, row.mfu_error);
    }
    g_array_append_val(out->rows, row);
  }
  ddp_validate_stats((const double *)errors->data, errors->len, &out->error);
  ddp_validate_stats((const double *)baseline->data, baseline->len, &out->baseline_error);
  ddp_validate_stats((const double *)mfu->data, mfu->len, &out->mfu_error);
  table_clear(&t);
  if (!ok) {
    sharded_free(out);
    return NULL;
  }
  return out;
}

/* ---- the whole folder ---- */

typedef enum { TABLE_ALLREDUCE, TABLE_TRAINING, TABLE_BUCKETCAP, TABLE_SHARDED, TABLE_UNMAPPED } TableKind;

/* What a CSV holds, from its header line.  A table with no mapping column at all (no cluster, no
 * ddpsim_model: a plain copy of a public file) is UNMAPPED, listed rather than an error; one with
 * some mapping but not all it needs is bad input (the readers name the missing column). */
static gboolean
table_kind(const char *path, TableKind *kind, GError **error)
{
  Table t = { 0 };
  gboolean ok = table_read(&t, path, error);
  if (ok) {
    gboolean mapped = table_column(&t, "cluster") >= 0 || table_column(&t, "ddpsim_model") >= 0;
    if (table_column(&t, "time_us") >= 0)
      *kind = mapped ? TABLE_ALLREDUCE : TABLE_UNMAPPED;
    else if (table_column(&t, "iteration_ms") >= 0)
      *kind = mapped ? TABLE_TRAINING : TABLE_UNMAPPED;
    else if (table_column(&t, "bucket_cap_mb") >= 0)
      *kind = mapped ? TABLE_BUCKETCAP : TABLE_UNMAPPED;
    else if (table_column(&t, "tokens_per_gpu_s") >= 0)
      *kind = mapped ? TABLE_SHARDED : TABLE_UNMAPPED;
    else {
      g_set_error(error, DDP_VALIDATE_ERROR, DDP_VALIDATE_ERROR_INPUT,
                  "%s:1: header: not a validation table (no time_us, iteration_ms, bucket_cap_mb or tokens_per_gpu_s column)", path);
      ok = FALSE;
    }
  }
  table_clear(&t);
  return ok;
}

char *
ddp_validation_default_dir(void)
{
  return ddp_datadir_find_dir("validation", "tests/data");
}

void
ddp_validation_free(DdpValidation *v)
{
  if (!v)
    return;
  g_free(v->dir);
  g_ptr_array_unref(v->allreduce);
  g_ptr_array_unref(v->training);
  g_ptr_array_unref(v->bucketcap);
  g_ptr_array_unref(v->sharded);
  g_ptr_array_unref(v->unmapped);
  g_free(v);
}

/**
 * ddp_validation_run_files:
 * Validates the CSVs @paths (NULL-terminated); AllReduce files whose base name is in
 * @behaviour_checks (NULL-terminated, or NULL) are reported but left out of the pooled statistics
 * (AllReduce and training files alike).
 * Training tables run before bucket_cap_mb tables, whatever the order, so that the latter find the
 * 1-GPU steps for --step-ms.  Returns: (transfer full) the validation, or NULL with @error naming
 * file:line: column.
 */
DdpValidation *
ddp_validation_run_files(const char *const *paths, const char *const *behaviour_checks, GError **error)
{
  return ddp_validation_run_files_split(paths, behaviour_checks, NULL, error);
}

/**
 * ddp_validation_run_files_split:
 * ddp_validation_run_files, with the files named in @out_of_sample also pooled apart from the others
 * (see validate.h).
 */
DdpValidation *
ddp_validation_run_files_split(const char *const *paths, const char *const *behaviour_checks,
                               const char *const *out_of_sample, GError **error)
{
  g_autoptr(DdpValidation) v = g_new0(DdpValidation, 1);
  v->allreduce = g_ptr_array_new_with_free_func(allreduce_free);
  v->training = g_ptr_array_new_with_free_func(training_free);
  v->bucketcap = g_ptr_array_new_with_free_func(bucketcap_free);
  v->sharded = g_ptr_array_new_with_free_func(sharded_free);
  v->unmapped = g_ptr_array_new_with_free_func(g_free);
  g_autoptr(GHashTable) step_ms = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
  RegimeErrors all_baseline, part_baseline[2];   /* [0] in-sample, [1] out-of-sample */
  regime_errors_init(&all_baseline);
  regime_errors_init(&part_baseline[0]);
  regime_errors_init(&part_baseline[1]);
  g_autoptr(GPtrArray) pooled = g_ptr_array_new();   /* borrowed DdpCompareCurve of the pooled files */
  g_autoptr(GPtrArray) in_pooled = g_ptr_array_new(), out_pooled = g_ptr_array_new();
  GPtrArray *part_pooled[2] = { in_pooled, out_pooled };   /* [0] in-sample, [1] out-of-sample */
  gboolean ok = TRUE;
  /* pass 0: kinds, AllReduce and training; pass 1: bucket_cap_mb */
  g_autoptr(GArray) kinds = g_array_new(FALSE, FALSE, sizeof(TableKind));
  for (guint i = 0; ok && paths[i]; i++) {
    TableKind kind;
    if (!(ok = table_kind(paths[i], &kind, error)))
      break;
    g_array_append_val(kinds, kind);
    if (kind == TABLE_ALLREDUCE) {
      g_autofree char *name = g_path_get_basename(paths[i]);
      gboolean check = behaviour_checks && g_strv_contains(behaviour_checks, name);
      gboolean outside = out_of_sample && g_strv_contains(out_of_sample, name);
      DdpValidateAllreduce *a = allreduce_read(paths[i], check ? NULL : &all_baseline,
                                               check ? NULL : &part_baseline[outside], error);
      if (!(ok = a != NULL))
        break;
      a->behaviour_check = check;
      a->out_of_sample = outside;
      for (guint c = 0; !check && c < a->compare->len; c++) {
        g_ptr_array_add(pooled, a->compare->pdata[c]);
        g_ptr_array_add(part_pooled[outside], a->compare->pdata[c]);
        v->split = v->split || outside;
      }
      g_ptr_array_add(v->allreduce, a);
    } else if (kind == TABLE_TRAINING) {
      DdpValidateTraining *t = training_read(paths[i], step_ms, error);
      if (!(ok = t != NULL))
        break;
      g_autofree char *name = g_path_get_basename(paths[i]);
      t->behaviour_check = behaviour_checks && g_strv_contains(behaviour_checks, name);
      t->out_of_sample = out_of_sample && g_strv_contains(out_of_sample, name);
      v->split = v->split || (t->out_of_sample && !t->behaviour_check);
      g_ptr_array_add(v->training, t);
    } else if (kind == TABLE_SHARDED) {
      DdpValidateSharded *sh = sharded_read(paths[i], error);
      if (!(ok = sh != NULL))
        break;
      g_ptr_array_add(v->sharded, sh);
    } else if (kind == TABLE_UNMAPPED) {
      g_ptr_array_add(v->unmapped, g_strdup(paths[i]));
    }
  }
  for (guint i = 0; ok && i < kinds->len; i++)
    if (g_array_index(kinds, TableKind, i) == TABLE_BUCKETCAP) {
      DdpValidateBucketcap *b = bucketcap_read(paths[i], step_ms, error);
      if (!(ok = b != NULL))
        break;
      g_ptr_array_add(v->bucketcap, b);
    }
  ddp_compare_stats(pooled, v->allreduce_model);
  regime_errors_finish(&all_baseline, v->allreduce_baseline);
  ddp_compare_stats(part_pooled[0], v->allreduce_in_sample_model);
  regime_errors_finish(&part_baseline[0], v->allreduce_in_sample_baseline);
  ddp_compare_stats(part_pooled[1], v->allreduce_out_of_sample_model);
  regime_errors_finish(&part_baseline[1], v->allreduce_out_of_sample_baseline);
  if (ok) {
    g_autoptr(GPtrArray) pooled_training = g_ptr_array_new();   /* borrowed */
    g_autoptr(GPtrArray) in_training = g_ptr_array_new(), out_training = g_ptr_array_new();
    GPtrArray *part_training[2] = { in_training, out_training };
    for (guint i = 0; i < v->training->len; i++) {
      DdpValidateTraining *t = v->training->pdata[i];
      if (!t->behaviour_check) {
        g_ptr_array_add(pooled_training, t);
        g_ptr_array_add(part_training[t->out_of_sample], t);
      }
    }
    training_stats((DdpValidateTraining *const *)pooled_training->pdata, pooled_training->len, &v->training_pooled);
    training_stats((DdpValidateTraining *const *)part_training[0]->pdata, part_training[0]->len, &v->training_in_sample);
    training_stats((DdpValidateTraining *const *)part_training[1]->pdata, part_training[1]->len,
                   &v->training_out_of_sample);
  }
  return ok ? g_steal_pointer(&v) : NULL;
}

static gint
compare_strings(gconstpointer a, gconstpointer b)
{
  return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* One list key of validate.ini: CSV names separated by ';', ',' or spaces, each a CSV of @dir.
 * Returns: NULL-terminated names (an empty list without the key), or NULL with @error. */
static char **
manifest_list(const DdpKeyFile *kf, const char *dir, const char *key, GError **error)
{
  g_autofree char *list = NULL;
  if (!ddp_keyfile_get_string(kf, "validate", key, FALSE, &list, error))
    return NULL;
  g_autoptr(GPtrArray) names = g_ptr_array_new_with_free_func(g_free);
  g_auto(GStrv) parts = list ? g_strsplit_set(list, ";, \t", -1) : NULL;
  for (guint i = 0; parts && parts[i]; i++) {
    if (!*parts[i])
      continue;
    g_autofree char *csv = g_build_filename(dir, parts[i], NULL);
    if (!g_str_has_suffix(parts[i], ".csv") || strchr(parts[i], '/') || !g_file_test(csv, G_FILE_TEST_IS_REGULAR)) {
      ddp_keyfile_set_error(kf, error, DDP_KEYFILE_ERROR_VALUE, "validate", key, "\"%s\" is not a CSV of this folder",
                            parts[i]);
      return NULL;
    }
    g_ptr_array_add(names, g_strdup(parts[i]));
  }
  g_ptr_array_add(names, NULL);
  return (char **)g_ptr_array_free(g_steal_pointer(&names), FALSE);
}

/* The folder's optional validate.ini: [validate] behaviour_checks = CSV names reported on their own,
 * outside the pooled figures; out_of_sample = CSV names gathered after the model's constants were
 * set, pooled apart as well.  No other group or key is allowed. */
static gboolean
read_manifest(const char *dir, char ***behaviour_checks, char ***out_of_sample, GError **error)
{
  g_autofree char *path = g_build_filename(dir, "validate.ini", NULL);
  if (!g_file_test(path, G_FILE_TEST_EXISTS))
    return TRUE;
  g_autoptr(DdpKeyFile) kf = ddp_keyfile_load(path, error);
  if (!kf)
    return FALSE;
  static const char *const keys[] = { "behaviour_checks", "out_of_sample", NULL };
  gsize n_groups;
  const char *const *groups = ddp_keyfile_groups(kf, &n_groups);
  for (gsize i = 0; i < n_groups; i++)
    if (strcmp(groups[i], "validate") != 0) {
      ddp_keyfile_set_error(kf, error, DDP_KEYFILE_ERROR_UNKNOWN, groups[i], NULL, "unknown group (only [validate])");
      return FALSE;
    }
  if (!ddp_keyfile_check_keys(kf, "validate", keys, error))
    return FALSE;
  *behaviour_checks = manifest_list(kf, dir, "behaviour_checks", error);
  if (!*behaviour_checks)
    return FALSE;
  *out_of_sample = manifest_list(kf, dir, "out_of_sample", error);
  return *out_of_sample != NULL;
}

/**
 * ddp_validation_run_dir:
 * Validates every *.csv directly in @dir, in name order, with the behaviour checks and out-of-sample
 * files its optional validate.ini names (see read_manifest).  Returns: (transfer full) or NULL with
 * @error (a folder that cannot be read or holds no CSV is an input error too).
 */
DdpValidation *
ddp_validation_run_dir(const char *dir, GError **error)
{
  g_autoptr(GError) local = NULL;
  g_autoptr(GDir) d = g_dir_open(dir, 0, &local);
  if (!d) {
    g_set_error(error, DDP_VALIDATE_ERROR, DDP_VALIDATE_ERROR_INPUT, "%s", local->message);
    return NULL;
  }
  g_autoptr(GPtrArray) paths = g_ptr_array_new_with_free_func(g_free);
  const char *name;
  while ((name = g_dir_read_name(d)))
    if (g_str_has_suffix(name, ".csv"))
      g_ptr_array_add(paths, g_build_filename(dir, name, NULL));
  if (paths->len == 0) {
    g_set_error(error, DDP_VALIDATE_ERROR, DDP_VALIDATE_ERROR_INPUT, "%s: no *.csv file to validate", dir);
    return NULL;
  }
  g_ptr_array_sort(paths, compare_strings);
  g_ptr_array_add(paths, NULL);
  g_auto(GStrv) behaviour_checks = NULL;
  g_auto(GStrv) out_of_sample = NULL;
  if (!read_manifest(dir, &behaviour_checks, &out_of_sample, error))
    return NULL;
  DdpValidation *v = ddp_validation_run_files_split((const char *const *)paths->pdata,
                                                    (const char *const *)behaviour_checks,
                                                    (const char *const *)out_of_sample, error);
  if (v)
    v->dir = g_strdup(dir);
  return v;
}
