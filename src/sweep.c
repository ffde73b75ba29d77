/* sweep — grid expansion, slicing and row formatting for `ddpsim sweep` (see sweep.h and
 * docs/sweep.md).  Determinism (STYLE habit 7) is the point of this module: the order of points is
 * fixed by the grid alone, slices are contiguous, and rows are formatted with fixed decimals in the
 * C locale, so a run split over threads or MPI ranks writes the same bytes as a serial one. */
#include "sweep.h"

#include "jsonout.h"

#include "cost.h"

#include "keyfile.h"
#include "ranges.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

G_DEFINE_QUARK(ddp-sweep-error-quark, ddp_sweep_error)

/* bucket_cap_mb as text: 25 → "25", 10.5 → "10.5", 0.1 → "0.1" (12 significant digits) */
#define CAP_FORMAT "%.12g"

struct _DdpSweepGrid {
  GPtrArray *values[DDP_SWEEP_N_AXES];   /* of char*, normalised; empty: unswept */
};

static const char *const axis_flags[DDP_SWEEP_N_AXES] = { "model", "cluster", "gpus", "bucket-cap-mb", "seed" };
static const char *const axis_keys[DDP_SWEEP_N_AXES] = { "model", "cluster", "gpus", "bucket_cap_mb", "seeds" };

const char *
ddp_sweep_axis_flag(DdpSweepAxis axis)
{
  g_return_val_if_fail(axis < DDP_SWEEP_N_AXES, "?");
  return axis_flags[axis];
}

const char *
ddp_sweep_axis_key(DdpSweepAxis axis)
{
  g_return_val_if_fail(axis < DDP_SWEEP_N_AXES, "?");
  return axis_keys[axis];
}

DdpSweepGrid *
ddp_sweep_grid_new(void)
{
  DdpSweepGrid *grid = g_new0(DdpSweepGrid, 1);
  for (int a = 0; a < DDP_SWEEP_N_AXES; a++)
    grid->values[a] = g_ptr_array_new_with_free_func(g_free);
  return grid;
}

void
ddp_sweep_grid_free(DdpSweepGrid *grid)
{
  if (!grid)
    return;
  for (int a = 0; a < DDP_SWEEP_N_AXES; a++)
    g_ptr_array_unref(grid->values[a]);
  g_free(grid);
}

/* Validates one value of @axis; returns its normalised text ("010" → "10", "25.0" → "25"), or NULL
 * with @error naming @where. */
static char *
normalise_value(DdpSweepAxis axis, const char *text, const char *where, GError **error)
{
  if (*text == '\0') {
    g_set_error(error, DDP_SWEEP_ERROR, DDP_SWEEP_ERROR_INVALID, "%s: empty value in the list", where);
    return NULL;
  }
  switch (axis) {
  case DDP_SWEEP_AXIS_MODEL:
  case DDP_SWEEP_AXIS_CLUSTER:
    return g_strdup(text);
  case DDP_SWEEP_AXIS_GPUS: {
    guint64 v;
    if (!ddp_range_check_count(where, text, &DDP_RANGE_GPUS, &v, error))
      return NULL;
    return g_strdup_printf("%" G_GUINT64_FORMAT, v);
  }
  case DDP_SWEEP_AXIS_SEED: {
    guint64 v;
    if (!ddp_range_check_seed(where, text, &v, error))
      return NULL;
    return g_strdup_printf("%" G_GUINT64_FORMAT, v);
  }
  case DDP_SWEEP_AXIS_BUCKET_CAP: {
    double v;
    if (!ddp_range_check_number(where, text, &DDP_RANGE_BUCKET_CAP_MB, &v, error))
      return NULL;
    char buffer[G_ASCII_DTOSTR_BUF_SIZE];
    return g_strdup(g_ascii_formatd(buffer, sizeof buffer, CAP_FORMAT, v));
  }
  default:
    g_assert_not_reached();
  }
}

static gboolean
is_ellipsis(const char *item)
{
  return strcmp(item, "...") == 0 || strcmp(item, "…") == 0;
}

/* "A,B,...,C" for GPU counts, as `ddpsim scale` reads it: the progression of A and B — geometric
 * when B is a multiple of A (8,16,... doubles), else arithmetic — continued below C; C itself is the
 * next item.  Appends the values strictly between B and C to @values. */
static gboolean
continue_progression(GPtrArray *values, const char *next, const char *where, GError **error)
{
  if (values->len < 2 || !next) {
    g_set_error(error, DDP_SWEEP_ERROR, DDP_SWEEP_ERROR_INVALID,
                "%s: \"...\" needs two GPU counts before it and one after it (e.g. 8,16,...,1024)", where);
    return FALSE;
  }
  guint64 last = 0;
  if (!ddp_range_check_count(where, g_strstrip((char *)next), &DDP_RANGE_GPUS, &last, error))
    return FALSE;
  /* the two counts before it, as normalise_value wrote them */
  guint64 a = g_ascii_strtoull(values->pdata[values->len - 2], NULL, 10);
  guint64 b = g_ascii_strtoull(values->pdata[values->len - 1], NULL, 10);
  if (b <= a || last <= b) {
    g_set_error(error, DDP_SWEEP_ERROR, DDP_SWEEP_ERROR_INVALID,
                "%s: the counts around \"...\" must increase (%" G_GUINT64_FORMAT ", %" G_GUINT64_FORMAT
                ", ..., %" G_GUINT64_FORMAT ")", where, a, b, last);
    return FALSE;
  }
  gboolean geometric = b % a == 0;
  for (guint64 v = geometric ? b * (b / a) : 2 * b - a; v < last; v = geometric ? v * (b / a) : v + (b - a)) {
    if (values->len >= DDP_SWEEP_MAX_POINTS)
      break;   /* the grid's cap reports it */
    g_ptr_array_add(values, g_strdup_printf("%" G_GUINT64_FORMAT, v));
  }
  return TRUE;
}

/**
 * ddp_sweep_grid_set_axis:
 * See sweep.h.  On error the axis is left as it was.
 */
gboolean
ddp_sweep_grid_set_axis(DdpSweepGrid *grid, DdpSweepAxis axis, const char *list, const char *where, GError **error)
{
  g_return_val_if_fail(axis < DDP_SWEEP_N_AXES, FALSE);
  g_autoptr(GPtrArray) values = g_ptr_array_new_with_free_func(g_free);
  /* caps before work: an axis longer than the whole grid may be is refused before any value is
   * parsed (a 1.3 MB list used to spin for a minute in the duplicate check first) */
  guint64 n_items = 1;
  for (const char *p = list; *p; p++)
    n_items += *p == ',';
  if (n_items > DDP_SWEEP_MAX_POINTS) {
    g_set_error(error, DDP_SWEEP_ERROR, DDP_SWEEP_ERROR_TOO_LARGE,
                "%s: %" G_GUINT64_FORMAT " values; a grid has at most %d points", where, n_items, DDP_SWEEP_MAX_POINTS);
    return FALSE;
  }
  g_auto(GStrv) items = g_strsplit(list, ",", -1);
  if (!items[0]) {
    g_set_error(error, DDP_SWEEP_ERROR, DDP_SWEEP_ERROR_INVALID, "%s: empty list", where);
    return FALSE;
  }
  /* duplicates found in a hash set: O(n), not O(n²) */
  g_autoptr(GHashTable) seen = g_hash_table_new(g_str_hash, g_str_equal);
  guint hashed = 0;   /* values[0 .. hashed) are in @seen */
  for (char **item = items; *item; item++) {
    if (axis == DDP_SWEEP_AXIS_GPUS && is_ellipsis(g_strstrip(*item))) {
      if (!continue_progression(values, item[1], where, error))
        return FALSE;
      continue;
    }
    char *value = normalise_value(axis, g_strstrip(*item), where, error);
    if (!value)
      return FALSE;
    for (; hashed < values->len; hashed++)   /* a progression's values */
      g_hash_table_add(seen, values->pdata[hashed]);
    if (g_hash_table_contains(seen, value)) {
      g_set_error(error, DDP_SWEEP_ERROR, DDP_SWEEP_ERROR_INVALID, "%s: \"%s\" is listed twice", where, value);
      g_free(value);
      return FALSE;
    }
    g_ptr_array_add(values, value);
  }
  g_ptr_array_unref(grid->values[axis]);
  grid->values[axis] = g_steal_pointer(&values);
  return TRUE;
}

/**
 * ddp_sweep_grid_load_file:
 * Reads [sweep] of @path: the keys of ddp_sweep_axis_key(), each a comma-separated list.  Unknown
 * groups and keys are errors ("FILE:LINE: sweep.key: what").
 */
gboolean
ddp_sweep_grid_load_file(DdpSweepGrid *grid, const char *path, GError **error)
{
  g_autoptr(DdpKeyFile) kf = ddp_keyfile_load(path, error);
  if (!kf)
    return FALSE;
  gsize n_groups;
  const char *const *groups = ddp_keyfile_groups(kf, &n_groups);
  for (gsize i = 0; i < n_groups; i++)
    if (strcmp(groups[i], "sweep") != 0) {
      ddp_keyfile_set_error(kf, error, DDP_KEYFILE_ERROR_UNKNOWN, groups[i], NULL,
                            "unknown group (a grid file has one group, [sweep])");
      return FALSE;
    }
  if (!ddp_keyfile_has_group(kf, "sweep")) {
    g_set_error(error, DDP_KEYFILE_ERROR, DDP_KEYFILE_ERROR_MISSING, "%s: [sweep]: required group is missing",
                path);
    return FALSE;
  }
  const char *known[DDP_SWEEP_N_AXES + 1] = { NULL };
  for (int a = 0; a < DDP_SWEEP_N_AXES; a++)
    known[a] = axis_keys[a];
  if (!ddp_keyfile_check_keys(kf, "sweep", known, error))
    return FALSE;
  for (int a = 0; a < DDP_SWEEP_N_AXES; a++) {
    g_autofree char *list = NULL;
    if (!ddp_keyfile_get_string(kf, "sweep", axis_keys[a], FALSE, &list, error))
      return FALSE;
    if (!list)
      continue;
    g_autofree char *where = g_strdup_printf("%s:%u: sweep.%s", path, ddp_keyfile_line(kf, "sweep", axis_keys[a]),
                                             axis_keys[a]);
    if (!ddp_sweep_grid_set_axis(grid, a, list, where, error))
      return FALSE;
  }
  return TRUE;
}

guint
ddp_sweep_grid_axis_len(const DdpSweepGrid *grid, DdpSweepAxis axis)
{
  g_return_val_if_fail(axis < DDP_SWEEP_N_AXES, 0);
  return MAX(grid->values[axis]->len, 1);
}

const char *
ddp_sweep_grid_axis_value(const DdpSweepGrid *grid, DdpSweepAxis axis, guint i)
{
  g_return_val_if_fail(axis < DDP_SWEEP_N_AXES, NULL);
  const GPtrArray *v = grid->values[axis];
  if (v->len == 0)
    return NULL;
  g_return_val_if_fail(i < v->len, NULL);
  return v->pdata[i];
}

/**
 * ddp_sweep_grid_count:
 * The product of the axis lengths (at most 5 axes of ≤ 100 000 values each, so each partial
 * product is checked against the cap before it can overflow).
 */
gboolean
ddp_sweep_grid_count(const DdpSweepGrid *grid, guint64 *n_points, GError **error)
{
  guint64 n = 1;
  for (int a = 0; a < DDP_SWEEP_N_AXES; a++) {
    n *= ddp_sweep_grid_axis_len(grid, a);
    if (n > DDP_SWEEP_MAX_POINTS) {
      g_set_error(error, DDP_SWEEP_ERROR, DDP_SWEEP_ERROR_TOO_LARGE,
                  "the grid has more than %d points (models × clusters × gpus × bucket caps × seeds); split it "
                  "into several sweeps",
                  DDP_SWEEP_MAX_POINTS);
      return FALSE;
    }
  }
  *n_points = n;
  return TRUE;
}

/* Mixed radix, seed the least significant digit: index = ((((m·C + c)·G + g)·B + b)·S + s). */
void
ddp_sweep_grid_point(const DdpSweepGrid *grid, guint64 index, DdpSweepPoint *point)
{
  point->index = index;
  guint64 rest = index;
  for (int a = DDP_SWEEP_N_AXES - 1; a >= 0; a--) {
    guint len = ddp_sweep_grid_axis_len(grid, a);
    point->values[a] = ddp_sweep_grid_axis_value(grid, a, (guint)(rest % len));
    rest /= len;
  }
  g_return_if_fail(rest == 0);
}

void
ddp_sweep_slice(guint64 n_points, guint rank, guint size, guint64 *first, guint64 *count)
{
  g_return_if_fail(size > 0 && rank < size);
  guint64 base = n_points / size, extra = n_points % size;
  *first = rank * base + MIN((guint64)rank, extra);
  *count = base + (rank < extra ? 1 : 0);
}

void
ddp_sweep_point_apply(const DdpSweepPoint *point, const DdpCliOptions *base, DdpCliOptions *cli)
{
  *cli = *base;
  char **fields[DDP_SWEEP_N_AXES] = { &cli->model, &cli->cluster, &cli->gpus, &cli->bucket_cap_mb, &cli->seed };
  for (int a = 0; a < DDP_SWEEP_N_AXES; a++)
    if (point->values[a])
      *fields[a] = (char *)point->values[a];
}

/* ---- rows ------------------------------------------------------------------------------- */

#define CSV_HEADER \
  "point,model,cluster,gpus,nodes,bucket_cap_mb,seed,iteration_ms_mean,iteration_ms_p50,iteration_ms_p99," \
  "compute_ms,comm_ms,exposed_comm_ms,overlap,scaling_efficiency,samples_per_s,memory_bytes_per_gpu,memory_fits,status"
static const char csv_cost_header[] = ",cost_per_1k_samples,train_hours,train_cost";

const char *
ddp_sweep_header(DdpSweepFormat format)
{
  return format == DDP_SWEEP_CSV ? CSV_HEADER "\n" : "";
}

/**
 * ddp_sweep_header_cost:
 * As ddp_sweep_header(), with the cost columns when @with_cost.  Returns: (transfer full).
 */
char *
ddp_sweep_header_cost(DdpSweepFormat format, gboolean with_cost)
{
  if (format != DDP_SWEEP_CSV)
    return g_strdup("");
  return g_strconcat(CSV_HEADER, with_cost ? csv_cost_header : "", "\n", NULL);
}

/* What a row says of a point: "ok", or "out-of-memory" when the setup does not fit in GPU memory
 * (its times are what it would take on a GPU large enough: never a best answer). */
const char *
ddp_sweep_status(const DdpResult *r)
{
  return r->memory.fits ? "ok" : "out-of-memory";
}

/* RFC 4180: quoted when it holds a comma, quote or line break; quotes doubled. */
static void
csv_field(GString *out, const char *text)
{
  if (!strpbrk(text, ",\"\r\n")) {
    g_string_append(out, text);
    return;
  }
  g_string_append_c(out, '"');
  for (const char *p = text; *p; p++) {
    if (*p == '"')
      g_string_append_c(out, '"');
    g_string_append_c(out, *p);
  }
  g_string_append_c(out, '"');
}


/* "%.6f" in the C locale whatever the process locale; non-finite values (an efficiency without a
 * baseline) as empty CSV fields / JSON null. */
static void
number(GString *out, DdpSweepFormat format, double v)
{
  if (!isfinite(v)) {
    if (format == DDP_SWEEP_JSONL)
      g_string_append(out, "null");
    return;
  }
  char buffer[G_ASCII_DTOSTR_BUF_SIZE];
  g_string_append(out, g_ascii_formatd(buffer, sizeof buffer, "%.6f", v));
}

/**
 * ddp_sweep_row:
 * See sweep.h.  The coordinates written are the resolved ones (model and cluster names, the GPU
 * count, cap and seed the scenario ran with), so unswept axes show their value too.
 */
char *
ddp_sweep_row(DdpSweepFormat format, const DdpSweepPoint *point, const DdpScenario *s, const DdpResult *r)
{
  return ddp_sweep_row_cost(format, point, s, r, NULL);
}

/**
 * ddp_sweep_row_cost:
 * ddp_sweep_row() with the cost columns of @cost (NULL: none; CSV fields empty where unknown,
 * JSON fields only where known).  Returns: (transfer full).
 */
char *
ddp_sweep_row_cost(DdpSweepFormat format, const DdpSweepPoint *point, const DdpScenario *s, const DdpResult *r,
                   const DdpCost *cost)
{
  DdpCostEstimate e = cost ? ddp_cost_estimate(cost, r->gpus, r->samples_per_s) : (DdpCostEstimate){ NAN, NAN, NAN, NAN };
  GString *out = g_string_new(NULL);
  char cap[G_ASCII_DTOSTR_BUF_SIZE];
  g_ascii_formatd(cap, sizeof cap, CAP_FORMAT, s->setup.buckets.bucket_cap_mb);
  gint64 memory = (gint64)llround(r->memory.total);
  if (format == DDP_SWEEP_CSV) {
    g_string_append_printf(out, "%" G_GUINT64_FORMAT ",", point->index);
    csv_field(out, s->model->name);
    g_string_append_c(out, ',');
    csv_field(out, s->cluster->name);
    g_string_append_printf(out, ",%" G_GUINT64_FORMAT ",%" G_GUINT64_FORMAT ",%s,%" G_GUINT64_FORMAT, r->gpus, r->nodes,
                           cap, s->setup.seed);
    const double values[] = { r->mean_ms, r->p50_ms, r->p99_ms, r->compute_ms, r->comm_ms, r->exposed_comm_ms,
                              r->overlap, r->scaling_efficiency, r->samples_per_s };
    for (gsize i = 0; i < G_N_ELEMENTS(values); i++) {
      g_string_append_c(out, ',');
      number(out, format, values[i]);
    }
    g_string_append_printf(out, ",%" G_GINT64_FORMAT ",%s,%s", memory, r->memory.fits ? "true" : "false",
                           ddp_sweep_status(r));
    if (cost) {
      const double costs[] = { e.cost_per_1k_samples, e.train_hours, e.train_cost };
      for (gsize i = 0; i < G_N_ELEMENTS(costs); i++) {
        g_string_append_c(out, ',');
        number(out, format, costs[i]);
      }
    }
    g_string_append_c(out, '\n');
    return g_string_free(out, FALSE);
  }
  g_string_free(out, TRUE);
  DdpJson *j = ddp_json_new();
  ddp_json_begin_object(j, NULL);
  ddp_json_int(j, "point", (gint64)point->index);
  ddp_json_string(j, "model", s->model->name);
  ddp_json_string(j, "cluster", s->cluster->name);
  ddp_json_int(j, "gpus", (gint64)r->gpus);
  ddp_json_int(j, "nodes", (gint64)r->nodes);
  ddp_json_double(j, "bucket_cap_mb", s->setup.buckets.bucket_cap_mb, 9);
  ddp_json_uint64(j, "seed", s->setup.seed);
  ddp_json_begin_object(j, "iteration_ms");
  ddp_json_double(j, "mean", r->mean_ms, 6);
  ddp_json_double(j, "p50", r->p50_ms, 6);
  ddp_json_double(j, "p99", r->p99_ms, 6);
  ddp_json_end_object(j);
  const struct {
    const char *key;
    double value;
  } fields[] = {
    { "compute_ms", r->compute_ms }, { "comm_ms", r->comm_ms }, { "exposed_comm_ms", r->exposed_comm_ms },
    { "overlap", r->overlap }, { "scaling_efficiency", r->scaling_efficiency }, { "samples_per_s", r->samples_per_s },
  };
  for (gsize i = 0; i < G_N_ELEMENTS(fields); i++)
    ddp_json_double(j, fields[i].key, fields[i].value, 6);
  ddp_json_begin_object(j, "memory");
  ddp_json_int(j, "bytes_per_gpu", memory);
  ddp_json_bool(j, "fits", r->memory.fits);
  ddp_json_end_object(j);
  ddp_json_string(j, "status", ddp_sweep_status(r));
  const struct {
    const char *key;
    double value;
  } costs[] = { { "cost_per_1k_samples", e.cost_per_1k_samples }, { "train_hours", e.train_hours },
                { "train_cost", e.train_cost } };
  for (gsize i = 0; cost && i < G_N_ELEMENTS(costs); i++)
    if (isfinite(costs[i].value))
      ddp_json_double(j, costs[i].key, costs[i].value, 6);
  ddp_json_end_object(j);
  return ddp_json_free_to_line(j);
}
