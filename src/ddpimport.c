/* ddpimport — a torch.profiler (Kineto) trace of a multi-GPU DDP run as ddpsim's DDP-level terms.
 * The trace layout, what is derived and how: ddpimport.h.  The facts relied on: DDP launches one
 * AllReduce per bucket in bucket order on one NCCL stream, and overlapped compute runs slower while
 * NCCL kernels take SMs and HBM bandwidth (docs/model.md §1 and §1.6 (c); docs/overheads.md). */
#include "ddpimport.h"

#include "fileio.h"

#include "fit.h"
#include "ranges.h"

#include <json-glib/json-glib.h>
#include <math.h>
#include <string.h>

/* gzip'd traces inflate about 10×; beyond this a file is refused rather than read into memory. */
#define MAX_INFLATED_BYTES ((gsize)1 << 30)

void
ddp_run_trace_free(DdpRunTrace *t)
{
  if (!t)
    return;
  for (guint i = 0; t->buckets && i < t->buckets->len; i++) {
    DdpRunBucket *b = &g_array_index(t->buckets, DdpRunBucket, i);
    g_free(b->algorithm);
    g_free(b->protocol);
  }
  if (t->buckets)
    g_array_unref(t->buckets);
  if (t->drawn)
    g_array_unref(t->drawn);
  g_free(t->gpu_name);
  g_free(t->nccl_version);
  g_free(t->torch_version);
  g_free(t->hosts);
  g_free(t->cuda_version);
  g_free(t);
}

/* ---- reading --------------------------------------------------------------------------------- */

static void
import_error(GError **error, const char *format, ...) G_GNUC_PRINTF(2, 3);

static void
import_error(GError **error, const char *format, ...)
{
  va_list args;
  va_start(args, format);
  g_autofree char *message = g_strdup_vprintf(format, args);
  va_end(args);
  /* names and parser messages come from the file: one line, control characters escaped */
  g_autofree char *line = ddp_range_quote_n(message, DDP_MAX_MESSAGE_CHARS);
  g_set_error_literal(error, DDP_FIT_ERROR, DDP_FIT_ERROR_IMPORT, line);
}

/* The file's bytes as read (*raw, for the provenance's SHA-256) and as JSON text (*text: inflated
 * when gzip'd), through the one checked reader (fileio.h: a regular file, no blocking, size-capped)
 * and its capped inflater (MAX_INFLATED_BYTES). */
static gboolean
read_trace_file(const char *path, GBytes **raw, GBytes **text, GError **error)
{
  char *data = NULL;
  gsize length = 0;
  if (!ddp_file_read(path, DDP_FILE_BINARY, &data, &length, error))
    return FALSE;
  *raw = g_bytes_new_take(data, length);
  if (length < 2 || (guchar)data[0] != 0x1f || (guchar)data[1] != 0x8b) {
    *text = g_bytes_ref(*raw);
    return TRUE;
  }
  char *inflated = NULL;
  gsize inflated_length = 0;
  if (!ddp_file_gunzip(path, data, length, MAX_INFLATED_BYTES, &inflated, &inflated_length, error)) {
    g_clear_pointer(raw, g_bytes_unref);
    return FALSE;
  }
  *text = g_bytes_new_take(inflated, inflated_length);
  return TRUE;
}

/* Typed members: NULL / FALSE when absent or of another type (json-glib would return 0 or NULL
 * for a wrong type without saying so). */
static const char *
member_string(JsonObject *o, const char *name)
{
  JsonNode *n = o ? json_object_get_member(o, name) : NULL;
  return n && JSON_NODE_HOLDS_VALUE(n) && json_node_get_value_type(n) == G_TYPE_STRING ? json_node_get_string(n) : NULL;
}

static gboolean
member_number(JsonObject *o, const char *name, double *out)
{
  JsonNode *n = o ? json_object_get_member(o, name) : NULL;
  if (!n || !JSON_NODE_HOLDS_VALUE(n))
    return FALSE;
  GType t = json_node_get_value_type(n);
  if (t != G_TYPE_INT64 && t != G_TYPE_DOUBLE)
    return FALSE;
  *out = json_node_get_double(n);
  return isfinite(*out);
}

static JsonObject *
member_object(JsonObject *o, const char *name)
{
  JsonNode *n = o ? json_object_get_member(o, name) : NULL;
  return n && JSON_NODE_HOLDS_OBJECT(n) ? json_node_get_object(n) : NULL;
}

static JsonArray *
member_array(JsonObject *o, const char *name)
{
  JsonNode *n = o ? json_object_get_member(o, name) : NULL;
  return n && JSON_NODE_HOLDS_ARRAY(n) ? json_node_get_array(n) : NULL;
}

/* A present member of the wrong type is an error naming it; an absent one is not. */
static gboolean
check_member_type(const char *path, const char *where, JsonObject *o, const char *name, JsonNodeType type,
                  GType value_type, GError **error)
{
  JsonNode *n = o ? json_object_get_member(o, name) : NULL;
  if (!n)
    return TRUE;
  gboolean ok = JSON_NODE_TYPE(n) == type;
  if (ok && type == JSON_NODE_VALUE) {
    GType t = json_node_get_value_type(n);
    ok = value_type == G_TYPE_DOUBLE ? t == G_TYPE_INT64 || t == G_TYPE_DOUBLE : t == value_type;
  }
  if (!ok)
    import_error(error, "%s: %s.%s: not %s", path, where, name,
                 type == JSON_NODE_OBJECT ? "an object" : type == JSON_NODE_ARRAY ? "an array"
                 : value_type == G_TYPE_STRING ? "a string" : "a number");
  return ok;
}

/* One GPU span of a rank's trace. */
typedef struct {
  double ts, end;            /* µs, the trace's clock */
  gint64 stream;
  gboolean nccl, allreduce;
  guint64 bytes;             /* AllReduce: message bytes */
  const char *name;          /* borrowed from the parsed JSON */
  char *key;                 /* compute kernels: name|grid|block, for the slowdown match */
  gboolean batch_norm;       /* a BatchNorm kernel (batch_norm_kernel) */
  char *algorithm, *protocol;
} Span;

static void
span_clear(Span *s)
{
  g_free(s->key);
  g_free(s->algorithm);
  g_free(s->protocol);
}

/* One rank's file, parsed. */
typedef struct {
  const char *path;
  JsonParser *parser;
  gint64 rank, world_size;   /* -1 when the trace has no distributedInfo */
  guint devices;
  gint64 nccl_blocks;        /* the most thread blocks an AllReduce kernel ran on (its grid) */
  GArray *spans;             /* Span, by start time */
  GArray *steps;             /* double pairs: ProfilerStep [ts, end] */
  gint64 comm_stream, compute_stream;
} RankFile;

static void
rank_file_clear(RankFile *r)
{
  g_clear_object(&r->parser);
  if (r->spans)
    g_array_unref(r->spans);
  if (r->steps)
    g_array_unref(r->steps);
}

static guint
dtype_size(const char *dtype)
{
  static const struct { const char *name; guint size; } types[] = {
    { "Float", 4 }, { "float", 4 }, { "Half", 2 }, { "BFloat16", 2 }, { "Double", 8 }, { "Int", 4 },
    { "Long", 8 }, { "Byte", 1 }, { "Char", 1 }, { "Bool", 1 }, { "Short", 2 },
  };
  for (gsize i = 0; dtype && i < G_N_ELEMENTS(types); i++)
    if (strcmp(dtype, types[i].name) == 0)
      return types[i].size;
  return 0;
}

/* "ncclKernel_AllReduce_RING_LL_Sum_float(…)" or "ncclDevKernel_AllReduce_Sum_f32_RING_LL(…)":
 * the collective ("AllReduce") and, when the name says, the algorithm and protocol. */
static gboolean
nccl_kernel_name(const char *name, char **collective, char **algorithm, char **protocol)
{
  const char *rest = g_str_has_prefix(name, "ncclKernel_") ? name + strlen("ncclKernel_")
                   : g_str_has_prefix(name, "ncclDevKernel_") ? name + strlen("ncclDevKernel_") : NULL;
  if (!rest)
    return FALSE;
  g_autofree char *base = g_strndup(rest, strcspn(rest, "("));
  g_auto(GStrv) parts = g_strsplit(base, "_", -1);
  if (!parts[0] || !*parts[0]) {
    /* "ncclKernel_" or "ncclKernel_(…)": an NCCL kernel that names no collective (refused by the
     * caller); g_strsplit gives no element at all for "" */
    *collective = g_strdup("(unnamed)");
    *algorithm = g_strdup("");
    *protocol = g_strdup("");
    return TRUE;
  }
  *collective = g_strdup(parts[0]);
  static const char *const algorithms[] = { "RING", "TREE", "NVLS", "NVLS_TREE", "COLLNET_DIRECT", "COLLNET_CHAIN", "PAT", NULL };
  static const char *const protocols[] = { "LL", "LL128", "SIMPLE", NULL };
  *algorithm = g_strdup("");
  *protocol = g_strdup("");
  for (guint i = 1; parts[i]; i++) {
    if (g_strv_contains(algorithms, parts[i]) && !**algorithm) {
      g_free(*algorithm);
      *algorithm = g_strdup(parts[i]);
    } else if (g_strv_contains(protocols, parts[i])) {
      g_free(*protocol);
      *protocol = g_strdup(parts[i]);
    }
  }
  return TRUE;
}

static gint
compare_span(gconstpointer a, gconstpointer b)
{
  const Span *x = a, *y = b;
  return x->ts < y->ts ? -1 : x->ts > y->ts;
}

/* Whether @name is a BatchNorm kernel: cuDNN's ("void cudnn::bn_bw_1C11_kernel_new<…>",
 * "bn_fw_tr_1C11_singleread", "batchnorm_bwtr_nhwc_semiPersist") or PyTorch's own (batch_norm_*). */
static gboolean
batch_norm_kernel(const char *name)
{
  g_autofree char *lower = g_ascii_strdown(name, -1);
  return strstr(lower, "bn_fw") || strstr(lower, "bn_bw") || strstr(lower, "batchnorm") || strstr(lower, "batch_norm");
}

/* One "kernel" event into @r->spans; FALSE with @error on a malformed or foreign one. */
static gboolean
read_kernel(RankFile *r, JsonObject *e, guint index, GError **error)
{
  g_autofree char *where = g_strdup_printf("traceEvents[%u]", index);
  const char *name = member_string(e, "name");
  double ts, dur, stream;
  JsonObject *args = member_object(e, "args");
  if (!name || !member_number(e, "ts", &ts) || !member_number(e, "dur", &dur) || dur < 0 || !args ||
      !member_number(args, "stream", &stream)) {
    import_error(error, "%s: %s: a kernel needs a string name, numbers ts and dur >= 0 and args.stream", r->path, where);
    return FALSE;
  }
  Span s = { .ts = ts, .end = ts + dur, .stream = (gint64)stream, .name = name };
  g_autofree char *quoted = ddp_range_quote(name);
  g_autofree char *collective = NULL;
  if (nccl_kernel_name(name, &collective, &s.algorithm, &s.protocol)) {
    s.nccl = TRUE;
    const char *arg_coll = member_string(args, "Collective name");
    gboolean allreduce = strcmp(collective, "AllReduce") == 0 || g_strcmp0(arg_coll, "allreduce") == 0;
    gboolean broadcast = strcmp(collective, "Broadcast") == 0;  /* DDP's buffer and parameter broadcasts */
    if (!allreduce && !broadcast) {
      import_error(error, "%s: %s: %s: the collective %s; DDP runs AllReduce (and Broadcast): not a DDP "
                   "run (FSDP, ZeRO, pipeline or embedding traffic)", r->path, where, quoted, collective);
      span_clear(&s);
      return FALSE;
    }
    if (allreduce) {
      double nelems;
      const char *dtype = member_string(args, "dtype");
      guint size = dtype_size(dtype);
      if (!member_number(args, "In msg nelems", &nelems) || nelems < 1 || nelems > 1e15 || size == 0) {
        import_error(error, "%s: %s: %s: no message size (args \"In msg nelems\" and \"dtype\", which recent PyTorch "
                     "records on NCCL kernels)", r->path, where, quoted);
        span_clear(&s);
        return FALSE;
      }
      s.allreduce = TRUE;
      s.bytes = (guint64)nelems * size;
      JsonArray *grid = member_array(args, "grid");
      JsonNode *x = grid && json_array_get_length(grid) > 0 ? json_array_get_element(grid, 0) : NULL;
      if (x && JSON_NODE_HOLDS_VALUE(x) && json_node_get_value_type(x) == G_TYPE_INT64)
        r->nccl_blocks = MAX(r->nccl_blocks, json_node_get_int(x));
    }
  } else {
    s.batch_norm = batch_norm_kernel(name);
    GString *key = g_string_new(name);
    JsonArray *grid = member_array(args, "grid"), *block = member_array(args, "block");
    for (guint k = 0; k < 3; k++) {
      JsonNode *g = grid && k < json_array_get_length(grid) ? json_array_get_element(grid, k) : NULL;
      JsonNode *b = block && k < json_array_get_length(block) ? json_array_get_element(block, k) : NULL;
      g_string_append_printf(key, "|%" G_GINT64_FORMAT ",%" G_GINT64_FORMAT,
                             g && JSON_NODE_HOLDS_VALUE(g) && json_node_get_value_type(g) == G_TYPE_INT64 ? json_node_get_int(g) : -1,
                             b && JSON_NODE_HOLDS_VALUE(b) && json_node_get_value_type(b) == G_TYPE_INT64 ? json_node_get_int(b) : -1);
    }
    s.key = g_string_free(key, FALSE);
  }
  g_array_append_val(r->spans, s);
  return TRUE;
}

/* Parses one rank's trace into @r (its spans, steps, streams, distributedInfo). */
static gboolean
read_rank(RankFile *r, GBytes *text, DdpRunTrace *t, GError **error)
{
  r->parser = json_parser_new_immutable();
  g_autoptr(GError) local = NULL;
  gsize length = 0;
  const char *data = g_bytes_get_data(text, &length);
  if (!json_parser_load_from_data(r->parser, data, (gssize)length, &local)) {
    import_error(error, "%s: not JSON (%s)", r->path, local->message);
    return FALSE;
  }
  JsonNode *root = json_parser_get_root(r->parser);
  JsonObject *top = root && JSON_NODE_HOLDS_OBJECT(root) ? json_node_get_object(root) : NULL;
  JsonArray *events = member_array(top, "traceEvents");
  if (!events) {
    import_error(error, "%s: not a torch.profiler trace (no traceEvents array)", r->path);
    return FALSE;
  }
  if (!check_member_type(r->path, "trace", top, "distributedInfo", JSON_NODE_OBJECT, 0, error) ||
      !check_member_type(r->path, "trace", top, "deviceProperties", JSON_NODE_ARRAY, 0, error))
    return FALSE;
  JsonObject *dist = member_object(top, "distributedInfo");
  double rank = -1, world = -1;
  if (dist && (!check_member_type(r->path, "distributedInfo", dist, "rank", JSON_NODE_VALUE, G_TYPE_DOUBLE, error) ||
               !check_member_type(r->path, "distributedInfo", dist, "world_size", JSON_NODE_VALUE, G_TYPE_DOUBLE, error) ||
               !check_member_type(r->path, "distributedInfo", dist, "nccl_version", JSON_NODE_VALUE, G_TYPE_STRING, error)))
    return FALSE;
  if (dist && (!member_number(dist, "rank", &rank) || !member_number(dist, "world_size", &world) || world < 1 ||
               world > (double)DDP_MAX_GPUS || rank < 0 || rank >= world || rank != floor(rank) || world != floor(world))) {
    import_error(error, "%s: distributedInfo: rank and world_size must be whole numbers, 0 <= rank < world_size <= %u",
                 r->path, (guint)DDP_MAX_GPUS);
    return FALSE;
  }
  r->rank = (gint64)rank;
  r->world_size = (gint64)world;
  JsonArray *devices = member_array(top, "deviceProperties");
  r->devices = devices ? json_array_get_length(devices) : 0;
  if (!*t->nccl_version && member_string(dist, "nccl_version")) {
    g_free(t->nccl_version);
    t->nccl_version = g_strdup(member_string(dist, "nccl_version"));
  }
  JsonObject *device = devices && r->devices > 0 && JSON_NODE_HOLDS_OBJECT(json_array_get_element(devices, 0))
                         ? json_array_get_object_element(devices, 0) : NULL;
  double number;
  if (!*t->gpu_name && member_string(device, "name")) {
    g_free(t->gpu_name);
    t->gpu_name = g_strdup(member_string(device, "name"));
    if (member_number(device, "totalGlobalMem", &number))
      t->gpu_memory_bytes = (gint64)number;
    double major, minor, sms;
    if (member_number(device, "computeMajor", &major) && member_number(device, "computeMinor", &minor))
      t->sm_arch = (int)(major * 10 + minor);
    if (member_number(device, "numSms", &sms) && sms >= 1 && sms <= 1e6)
      t->sms = (int)sms;
  }
  if (!*t->cuda_version && member_number(top, "cuda_runtime_version", &number) && number > 0) {
    g_free(t->cuda_version);
    t->cuda_version = g_strdup_printf("%d.%d", (int)number / 1000, ((int)number % 1000) / 10);
  }
  /* not written by every PyTorch: users add them with prof.add_metadata_json() */
  static const char *const torch_keys[] = { "pytorch_version", "torch_version" };
  for (gsize k = 0; k < G_N_ELEMENTS(torch_keys); k++)
    if (!*t->torch_version && member_string(top, torch_keys[k])) {
      g_free(t->torch_version);
      t->torch_version = g_strdup(member_string(top, torch_keys[k]));
    }
  const char *host = member_string(top, "hostname");
  if (host && !strstr(t->hosts, host)) {
    char *hosts = *t->hosts ? g_strconcat(t->hosts, ",", host, NULL) : g_strdup(host);
    g_free(t->hosts);
    t->hosts = hosts;
  }

  r->spans = g_array_new(FALSE, FALSE, sizeof(Span));
  g_array_set_clear_func(r->spans, (GDestroyNotify)span_clear);
  r->steps = g_array_new(FALSE, FALSE, sizeof(double));
  guint n = json_array_get_length(events);
  for (guint i = 0; i < n; i++) {
    JsonNode *node = json_array_get_element(events, i);
    if (!JSON_NODE_HOLDS_OBJECT(node)) {
      import_error(error, "%s: traceEvents[%u]: not an object", r->path, i);
      return FALSE;
    }
    JsonObject *e = json_node_get_object(node);
    const char *ph = member_string(e, "ph"), *cat = member_string(e, "cat"), *name = member_string(e, "name");
    if (g_strcmp0(ph, "X") != 0 || !cat)
      continue;
    if (strcmp(cat, "kernel") == 0) {
      if (!read_kernel(r, e, i, error))
        return FALSE;
    } else if (strcmp(cat, "user_annotation") == 0 && name && g_str_has_prefix(name, "ProfilerStep#")) {
      double ts, dur;
      if (!member_number(e, "ts", &ts) || !member_number(e, "dur", &dur) || dur <= 0) {
        import_error(error, "%s: traceEvents[%u]: %s needs numbers ts and dur > 0", r->path, i, name);
        return FALSE;
      }
      double end = ts + dur;
      g_array_append_val(r->steps, ts);
      g_array_append_val(r->steps, end);
    }
  }
  g_array_sort(r->spans, compare_span);
  return TRUE;
}

/* Chooses the comm stream (the one AllReduce kernels run on) and the compute stream (the most
 * kernel time among the others); refuses traces that lack either. */
static gboolean
choose_streams(RankFile *r, GError **error)
{
  r->comm_stream = G_MININT64;
  g_autoptr(GHashTable) busy = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, g_free);
  for (guint i = 0; i < r->spans->len; i++) {
    const Span *s = &g_array_index(r->spans, Span, i);
    if (s->allreduce) {
      if (r->comm_stream != G_MININT64 && r->comm_stream != s->stream) {
        import_error(error, "%s: AllReduce kernels on streams %" G_GINT64_FORMAT " and %" G_GINT64_FORMAT
                     ": DDP's reducer uses one NCCL stream", r->path, r->comm_stream, s->stream);
        return FALSE;
      }
      r->comm_stream = s->stream;
    } else if (!s->nccl) {
      double *b = g_hash_table_lookup(busy, &s->stream);
      if (!b) {
        b = g_new0(double, 1);
        g_hash_table_insert(busy, g_memdup2(&s->stream, sizeof s->stream), b);
      }
      *b += s->end - s->ts;
    }
  }
  if (r->comm_stream == G_MININT64) {
    import_error(error, "%s: no NCCL AllReduce kernel (ncclKernel_AllReduce_* / ncclDevKernel_AllReduce_*): not a "
                 "multi-GPU DDP trace, or one recorded without CUDA activity", r->path);
    return FALSE;
  }
  double best = 0;
  r->compute_stream = G_MININT64;
  GHashTableIter it;
  gpointer key, value;
  g_hash_table_iter_init(&it, busy);
  while (g_hash_table_iter_next(&it, &key, &value)) {
    gint64 stream = *(gint64 *)key;
    double b = *(double *)value;
    /* the comm stream is not a compute stream; ties go to the lower stream id (deterministic) */
    if (stream != r->comm_stream && (b > best || (b == best && b > 0 && stream < r->compute_stream))) {
      best = b;
      r->compute_stream = stream;
    }
  }
  if (r->compute_stream == G_MININT64) {
    import_error(error, "%s: no compute stream: every kernel is on the NCCL stream %" G_GINT64_FORMAT
                 " (a trace missing the backward kernels)", r->path, r->comm_stream);
    return FALSE;
  }
  return TRUE;
}

/* What one rank measured in one step. */
typedef struct {
  guint rank_file;
  double t0, end, iteration_us, exposed_us, backward_end_us, compute_us, overlapped_us;
  GArray *buckets;           /* Span copies (borrowed fields): the AllReduce kernels, in order */
  char *layout;              /* the bucket sizes, "b0,b1,…" */
} Step;

static void
step_clear(Step *s)
{
  if (s->buckets)
    g_array_unref(s->buckets);
  g_free(s->layout);
}

/* Time of [a, b) inside the AllReduce kernels of @ar (sorted, non-overlapping on one stream). */
static double
inside(const GArray *ar, double a, double b)
{
  double sum = 0;
  for (guint i = 0; i < ar->len; i++) {
    const Span *s = &g_array_index(ar, Span, i);
    double lo = MAX(a, s->ts), hi = MIN(b, s->end);
    if (hi > lo)
      sum += hi - lo;
  }
  return sum;
}

/* The steps of rank file @f: one per ProfilerStep span holding an AllReduce, else the whole trace. */
static void
collect_steps(const RankFile *r, guint f, GArray *steps)
{
  guint n_windows = r->steps->len / 2;
  for (guint w = 0; w < MAX(n_windows, 1u); w++) {
    double lo = n_windows ? g_array_index(r->steps, double, 2 * w) : -INFINITY;
    double hi = n_windows ? g_array_index(r->steps, double, 2 * w + 1) : INFINITY;
    Step s = { f, INFINITY, hi, 0, 0, 0, 0, 0, g_array_new(FALSE, FALSE, sizeof(Span)), NULL };
    double last_end = -INFINITY, first_end = -INFINITY, last_start = -INFINITY;
    for (guint i = 0; i < r->spans->len; i++) {
      const Span *k = &g_array_index(r->spans, Span, i);
      if (k->ts < lo || k->ts >= hi)
        continue;
      s.t0 = MIN(s.t0, k->ts);
      last_end = MAX(last_end, k->end);
      if (k->allreduce) {
        g_array_append_val(s.buckets, *k);
        first_end = k->end;   /* the last AllReduce's end, as kernels are sorted by start */
        last_start = k->ts;
      }
    }
    if (s.buckets->len == 0) {
      step_clear(&s);
      continue;
    }
    double backward_end = s.t0;
    for (guint i = 0; i < r->spans->len; i++) {
      const Span *k = &g_array_index(r->spans, Span, i);
      if (k->ts < lo || k->ts >= hi || k->stream != r->compute_stream || k->nccl)
        continue;
      s.compute_us += k->end - k->ts;
      s.overlapped_us += inside(s.buckets, k->ts, k->end);
      /* the last bucket's AllReduce is launched once its last gradient is computed: backward is
       * what started before it (what starts later is finalize's copies and the optimizer) */
      if (k->ts < last_start)
        backward_end = MAX(backward_end, k->end);
    }
    s.backward_end_us = backward_end - s.t0;
    s.exposed_us = MAX(0.0, first_end - backward_end);
    s.iteration_us = n_windows ? hi - lo : last_end - s.t0;
    s.end = MIN(hi, last_end);
    GString *layout = g_string_new(NULL);
    for (guint b = 0; b < s.buckets->len; b++)
      g_string_append_printf(layout, "%s%" G_GUINT64_FORMAT, b ? "," : "", g_array_index(s.buckets, Span, b).bytes);
    s.layout = g_string_free(layout, FALSE);
    g_array_append_val(steps, s);
  }
}

static int
compare_double(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* Sums over the compute kernels of @which that ran inside an AllReduce kernel and whose key also
 * ran outside one: their durations, their keys' median durations outside, and the time they spent
 * inside.  Returns the instances. */
typedef struct {
  double duration, alone, inside;
} InsideSums;
typedef enum { KERNELS_ALL, KERNELS_NOT_BATCH_NORM, KERNELS_BATCH_NORM } KernelSet;

static gboolean
in_set(const Span *k, KernelSet which)
{
  return which == KERNELS_ALL || k->batch_norm == (which == KERNELS_BATCH_NORM);
}

static guint
sum_inside(const RankFile *files, guint n_files, KernelSet which, InsideSums *out)
{
  *out = (InsideSums){ 0 };
  guint instances = 0;
  for (guint f = 0; f < n_files; f++) {
    const RankFile *r = &files[f];
    g_autoptr(GArray) ar = g_array_new(FALSE, FALSE, sizeof(Span));
    for (guint i = 0; i < r->spans->len; i++)
      if (g_array_index(r->spans, Span, i).allreduce)
        g_array_append_val(ar, g_array_index(r->spans, Span, i));
    /* key → durations outside any AllReduce */
    g_autoptr(GHashTable) outside = g_hash_table_new_full(g_str_hash, g_str_equal, NULL, (GDestroyNotify)g_array_unref);
    for (guint i = 0; i < r->spans->len; i++) {
      const Span *k = &g_array_index(r->spans, Span, i);
      if (k->stream != r->compute_stream || !k->key || !in_set(k, which) || inside(ar, k->ts, k->end) > 0)
        continue;
      GArray *d = g_hash_table_lookup(outside, k->key);
      if (!d)
        g_hash_table_insert(outside, k->key, d = g_array_new(FALSE, FALSE, sizeof(double)));
      double dur = k->end - k->ts;
      g_array_append_val(d, dur);
    }
    GHashTableIter it;
    gpointer value;
    g_hash_table_iter_init(&it, outside);
    while (g_hash_table_iter_next(&it, NULL, &value)) {
      GArray *d = value;
      g_array_sort(d, compare_double);
      double median = d->len % 2 ? g_array_index(d, double, d->len / 2)
                                 : (g_array_index(d, double, d->len / 2 - 1) + g_array_index(d, double, d->len / 2)) / 2;
      g_array_set_size(d, 1);
      g_array_index(d, double, 0) = median;
    }
    for (guint i = 0; i < r->spans->len; i++) {
      const Span *k = &g_array_index(r->spans, Span, i);
      double o = k->stream == r->compute_stream && k->key && in_set(k, which) ? inside(ar, k->ts, k->end) : 0;
      GArray *d = o > 0 ? g_hash_table_lookup(outside, k->key) : NULL;
      if (!d)
        continue;
      out->duration += k->end - k->ts;
      out->alone += g_array_index(d, double, 0);
      out->inside += o;
      instances++;
    }
  }
  return instances;
}

/* overlap_slowdown from kernels of one key measured inside and outside AllReduce kernels
 * (ddpimport.h); -1 when no key was.  Across nodes BatchNorm kernels are left out: beside a
 * collective there they may wait for it to end (batch_norm_waits), which is not the SM sharing
 * overlap_slowdown measures; on one node they share SMs as any kernel does. */
static double
fit_slowdown(const RankFile *files, guint n_files, guint64 nodes, guint *instances)
{
  InsideSums sums;
  *instances = sum_inside(files, n_files, nodes > 1 ? KERNELS_NOT_BATCH_NORM : KERNELS_ALL, &sums);
  if (*instances == 0 || sums.inside <= 0)
    return -1;
  double x = CLAMP((sums.duration - sums.alone) / sums.inside, 0.0, 0.9);
  return MIN(x / (1 - x), 10.0);
}

/* BatchNorm kernels beside AllReduce kernels: Σ durations / Σ their keys' medians alone; -1 when
 * none ran there (ddpimport.h). */
static double
fit_batch_norm_stretch(const RankFile *files, guint n_files, guint *instances)
{
  InsideSums sums;
  *instances = sum_inside(files, n_files, KERNELS_BATCH_NORM, &sums);
  return *instances > 0 && sums.alone > 0 ? sums.duration / sums.alone : -1;
}

/* Derives the run's terms from the parsed rank files. */
static gboolean
derive(DdpRunTrace *t, RankFile *files, guint n, GError **error)
{
  g_autoptr(GArray) steps = g_array_new(FALSE, FALSE, sizeof(Step));
  g_array_set_clear_func(steps, (GDestroyNotify)step_clear);
  for (guint f = 0; f < n; f++)
    collect_steps(&files[f], f, steps);
  /* the most common bucket layout (ties: the one seen last) */
  g_autoptr(GHashTable) counts = g_hash_table_new(g_str_hash, g_str_equal);
  const char *layout = NULL;
  guint best = 0;
  for (guint i = 0; i < steps->len; i++) {
    const Step *s = &g_array_index(steps, Step, i);
    guint c = GPOINTER_TO_UINT(g_hash_table_lookup(counts, s->layout)) + 1;
    g_hash_table_insert(counts, s->layout, GUINT_TO_POINTER(c));
    if (c >= best) {
      best = c;
      layout = s->layout;
    }
  }
  if (!layout) {
    import_error(error, "%s: no step with an AllReduce kernel", files[0].path);
    return FALSE;
  }
  guint n_buckets = 1;
  for (const char *p = layout; *p; p++)
    n_buckets += *p == ',';
  t->buckets = g_array_new(FALSE, TRUE, sizeof(DdpRunBucket));
  g_array_set_size(t->buckets, n_buckets);
  /* per rank: sums over its kept steps */
  double *rank_iter = g_new0(double, n), *rank_compute = g_new0(double, n), *rank_over = g_new0(double, n);
  guint *rank_steps = g_new0(guint, n);
  double backward_end = 0;
  guint kept = 0;
  const Step *drawn = NULL;
  for (guint i = 0; i < steps->len; i++) {
    const Step *s = &g_array_index(steps, Step, i);
    if (strcmp(s->layout, layout) != 0) {
      t->dropped_steps++;
      continue;
    }
    kept++;
    rank_iter[s->rank_file] += s->iteration_us;
    rank_compute[s->rank_file] += s->compute_us;
    rank_over[s->rank_file] += s->overlapped_us;
    rank_steps[s->rank_file]++;
    backward_end += s->backward_end_us;
    for (guint b = 0; b < n_buckets; b++) {
      const Span *k = &g_array_index(s->buckets, Span, b);
      DdpRunBucket *d = &g_array_index(t->buckets, DdpRunBucket, b);
      d->bytes = k->bytes;
      d->start_us += k->ts - s->t0;
      d->end_us += k->end - s->t0;
      if (!d->algorithm) {
        d->algorithm = g_strdup(k->algorithm);
        d->protocol = g_strdup(k->protocol);
      }
    }
    if (!drawn || files[s->rank_file].rank < files[drawn->rank_file].rank ||
        (s->rank_file == drawn->rank_file))
      drawn = s;
  }
  /* Per step ordinal (ranks' k-th kept steps are the same training step): the collective's time
   * per bucket is the shortest rank's kernel, and the exposed communication as ddpsim defines it,
   * from the slowest rank's end of backward, is the least any rank waited (each on its own clock). */
  guint max_steps = 0;
  for (guint f = 0; f < n; f++)
    max_steps = MAX(max_steps, rank_steps[f]);
  double *shortest = g_new(double, (gsize)max_steps * n_buckets), *least = g_new(double, max_steps);
  for (guint i = 0; i < (guint)max_steps * n_buckets; i++)
    shortest[i] = INFINITY;
  for (guint o = 0; o < max_steps; o++)
    least[o] = INFINITY;
  g_autofree guint *ordinal = g_new0(guint, n);
  for (guint i = 0; i < steps->len; i++) {
    const Step *s = &g_array_index(steps, Step, i);
    if (strcmp(s->layout, layout) != 0)
      continue;
    guint o = ordinal[s->rank_file]++;
    least[o] = MIN(least[o], s->exposed_us);
    for (guint b = 0; b < n_buckets; b++) {
      const Span *k = &g_array_index(s->buckets, Span, b);
      shortest[o * n_buckets + b] = MIN(shortest[o * n_buckets + b], k->end - k->ts);
    }
  }
  double exposed = 0;
  for (guint o = 0; o < max_steps; o++)
    exposed += least[o];   /* every ordinal below max_steps has a step of some rank */
  for (guint b = 0; b < n_buckets; b++) {
    DdpRunBucket *d = &g_array_index(t->buckets, DdpRunBucket, b);
    d->start_us /= kept;
    d->end_us /= kept;
    d->min_us = INFINITY;
    d->max_us = 0;
    for (guint o = 0; o < max_steps; o++) {
      double x = shortest[o * n_buckets + b];
      d->time_us += x / max_steps;
      d->min_us = MIN(d->min_us, x);
      d->max_us = MAX(d->max_us, x);
    }
    t->terms.comm_ms += d->time_us / 1e3;
  }
  g_free(shortest);
  g_free(least);
  t->terms.steps_kept = max_steps;
  t->terms.exposed_comm_ms = exposed / max_steps / 1e3;
  t->backward_end_ms = backward_end / kept / 1e3;
  t->terms.overlap = t->terms.comm_ms > 0 ? CLAMP(1 - t->terms.exposed_comm_ms / t->terms.comm_ms, 0.0, 1.0) : 1.0;
  t->terms.overlap_slowdown = fit_slowdown(files, n, t->terms.nodes, &t->terms.slowdown_kernels);
  t->batch_norm_stretch = fit_batch_norm_stretch(files, n, &t->batch_norm_kernels);
  double s = MAX(t->terms.overlap_slowdown, 0.0);
  double iter_sum = 0, fastest = INFINITY, slowest = 0, compute_sum = 0;
  guint ranks = 0;
  double *speed = g_new0(double, n);
  for (guint f = 0; f < n; f++) {
    if (!rank_steps[f])
      continue;
    double iter = rank_iter[f] / rank_steps[f];
    iter_sum += iter;
    fastest = MIN(fastest, iter);
    slowest = MAX(slowest, iter);
    compute_sum += rank_compute[f] / rank_steps[f];
    /* the rank's own compute, less what the concurrent AllReduces added */
    speed[ranks++] = (rank_compute[f] - rank_over[f] * s / (1 + s)) / rank_steps[f];
  }
  t->terms.iteration_ms = iter_sum / ranks / 1e3;
  t->terms.iteration_spread_ms = (slowest - fastest) / 1e3;
  t->terms.compute_ms = compute_sum / ranks / 1e3;
  t->terms.jitter = -1;
  if (ranks >= 2) {
    double mean = 0, var = 0;
    for (guint i = 0; i < ranks; i++)
      mean += speed[i] / ranks;
    for (guint i = 0; i < ranks; i++)
      var += (speed[i] / mean - 1) * (speed[i] / mean - 1) / (ranks - 1);
    t->terms.jitter = MIN(sqrt(var), 0.5);
  }
  g_free(speed);
  g_free(rank_iter);
  g_free(rank_compute);
  g_free(rank_over);
  g_free(rank_steps);
  /* the drawn step: its compute-stream and AllReduce kernels */
  const RankFile *r = &files[drawn->rank_file];
  t->drawn_rank = (guint)MAX(r->rank, 0);
  t->drawn = g_array_new(FALSE, FALSE, sizeof(DdpRunKernel));
  for (guint i = 0; i < r->spans->len; i++) {
    const Span *k = &g_array_index(r->spans, Span, i);
    if (k->ts < drawn->t0 || k->ts >= drawn->end || (k->stream != r->compute_stream && !k->allreduce))
      continue;
    DdpRunKernel d = { k->ts - drawn->t0, k->end - drawn->t0, k->allreduce };
    g_array_append_val(t->drawn, d);
  }
  return TRUE;
}

/**
 * ddp_run_trace_read:
 * See ddpimport.h.
 */
DdpRunTrace *
ddp_run_trace_read(const char *const *paths, guint n, guint64 nodes, GError **error)
{
  g_return_val_if_fail(n > 0, NULL);
  g_autoptr(DdpRunTrace) t = g_new0(DdpRunTrace, 1);
  t->gpu_name = g_strdup("");
  t->nccl_version = g_strdup("");
  t->torch_version = g_strdup("");
  t->hosts = g_strdup("");
  t->cuda_version = g_strdup("");
  t->terms.rank_files = n;
  RankFile *files = g_new0(RankFile, n);
  gboolean ok = TRUE;
  guint devices = 0;
  for (guint f = 0; ok && f < n; f++) {
    files[f].path = paths[f];
    g_autoptr(GBytes) raw = NULL, text = NULL;
    ok = read_trace_file(paths[f], &raw, &text, error) && read_rank(&files[f], text, t, error) &&
         choose_streams(&files[f], error);
    if (!ok)
      break;
    devices = MAX(devices, files[f].devices);
    t->nccl_blocks = (int)MIN(MAX(t->nccl_blocks, files[f].nccl_blocks), G_MAXINT);
    for (guint g = 0; g < f; g++) {
      if (files[g].world_size != files[f].world_size) {
        import_error(error, "%s: world_size %" G_GINT64_FORMAT ", but %s has %" G_GINT64_FORMAT ": ranks of different runs",
                     paths[f], files[f].world_size, paths[g], files[g].world_size);
        ok = FALSE;
      } else if (files[f].rank >= 0 && files[g].rank == files[f].rank) {
        import_error(error, "%s: rank %" G_GINT64_FORMAT " again (also %s)", paths[f], files[f].rank, paths[g]);
        ok = FALSE;
      }
      if (!ok)
        break;
    }
  }
  if (ok && files[0].world_size < 2 && !(files[0].world_size < 0 && n >= 2)) {
    import_error(error, "%s: %s: an AllReduce needs 2 or more ranks", paths[0],
                 files[0].world_size < 0 ? "no distributedInfo.world_size" : "world_size 1");
    ok = FALSE;
  }
  if (ok) {
    t->terms.world_size = files[0].world_size > 0 ? (guint64)files[0].world_size : n;
    /* a process that saw one GPU (CUDA_VISIBLE_DEVICES narrowed per rank) says nothing of its node */
    if (nodes == 0 && devices <= 1) {
      import_error(error, "%s: each process saw %u GPU (deviceProperties), which does not tell how many nodes the %"
                   G_GUINT64_FORMAT " ranks ran on: give --nodes N", paths[0], devices, t->terms.world_size);
      ok = FALSE;
    }
    t->terms.nodes = nodes > 0 ? nodes : devices > 0 ? (t->terms.world_size + devices - 1) / devices : 1;
    if (ok && t->terms.nodes > t->terms.world_size) {
      import_error(error, "--nodes: %" G_GUINT64_FORMAT " nodes for %" G_GUINT64_FORMAT " ranks", t->terms.nodes, t->terms.world_size);
      ok = FALSE;
    }
  }
  ok = ok && derive(t, files, n, error);
  for (guint f = 0; f < n; f++)
    rank_file_clear(&files[f]);
  g_free(files);
  return ok ? g_steal_pointer(&t) : NULL;
}

/**
 * ddp_run_trace_summary:
 * See ddpimport.h.
 */
char *
ddp_run_trace_summary(const DdpRunTrace *t)
{
  const DdpRunTerms *m = &t->terms;
  /* the measured slowdown beside the default rule's for the blocks NCCL ran (docs/overheads.md) */
  g_autofree char *slowdown =
      m->overlap_slowdown < 0 ? g_strdup("not measured (specs)")
      : t->nccl_blocks > 0 && t->sms > t->nccl_blocks
          ? g_strdup_printf("%.3f measured (NCCL's %d blocks on %d SMs: %.3f by the default C / (SMs - C))",
                            m->overlap_slowdown, t->nccl_blocks, t->sms,
                            (double)t->nccl_blocks / (double)(t->sms - t->nccl_blocks))
          : g_strdup_printf("%.3f measured", m->overlap_slowdown);
  /* what BatchNorm did beside the collectives: the evidence for or against batch_norm_waits */
  g_autofree char *batch_norm =
      t->batch_norm_stretch < 0 ? g_strdup("")
                                : g_strdup_printf("; BatchNorm kernels beside AllReduce %.2f x their length alone (%u)",
                                                  t->batch_norm_stretch, t->batch_norm_kernels);
  return g_strdup_printf("%u rank file%s, %" G_GUINT64_FORMAT " ranks on %" G_GUINT64_FORMAT " node%s, %u buckets, "
                         "%u step%s; iteration %.3f ms (spread %.3f), AllReduce %.3f ms, exposed %.3f ms, overlap "
                         "%.1f %%, overlap_slowdown %s, jitter %s%s", m->rank_files, m->rank_files == 1 ? "" : "s",
                         m->world_size, m->nodes, m->nodes == 1 ? "" : "s", t->buckets->len, m->steps_kept,
                         m->steps_kept == 1 ? "" : "s", m->iteration_ms, m->iteration_spread_ms, m->comm_ms,
                         m->exposed_comm_ms, 100 * m->overlap, slowdown,
                         m->jitter >= 0 ? "measured" : "not measured (one rank)", batch_norm);
}

/**
 * ddp_run_trace_sniff:
 * See ddpimport.h.  Reads the file's text (inflated) and looks for the markers; the import itself
 * validates everything.
 */
gboolean
ddp_run_trace_sniff(const char *path)
{
  g_autoptr(GBytes) raw = NULL, text = NULL;
  if (!read_trace_file(path, &raw, &text, NULL))
    return FALSE;
  gsize length = 0;
  const char *data = g_bytes_get_data(text, &length);
  const char *const markers[] = { "ncclKernel_", "ncclDevKernel_", "\"world_size\"" };
  for (gsize i = 0; i < G_N_ELEMENTS(markers); i++) {
    const char *hit = g_strstr_len(data, (gssize)length, markers[i]);
    if (hit && i < 2)
      return TRUE;
    if (hit) {
      /* "world_size": 1 is a one-GPU run under torch.distributed */
      const char *p = hit + strlen(markers[i]);
      while (p < data + length && (*p == ' ' || *p == ':'))
        p++;
      if (p < data + length && g_ascii_isdigit(*p) && !(*p == '1' && (p + 1 >= data + length || !g_ascii_isdigit(p[1]))))
        return TRUE;
    }
  }
  return FALSE;
}

/* ---- storing and loading ----------------------------------------------------------------------- */

/**
 * ddp_run_import:
 * See ddpimport.h.
 */
gint64
ddp_run_import(DdpCalibDb *db, const char *const *paths, guint n, const DdpRunTrace *t,
               const DdpMeasuredStep *steps, guint n_steps, gboolean *again, GError **error)
{
  *again = FALSE;
  /* provenance: the first file's stat, the SHA-256 of every file's bytes in order, the paths */
  g_autoptr(GByteArray) all = g_byte_array_new();
  gint64 size = 0;
  for (guint f = 0; f < n; f++) {
    g_autoptr(GBytes) raw = NULL, text = NULL;
    if (!read_trace_file(paths[f], &raw, &text, error))
      return 0;
    gsize length;
    const guint8 *data = g_bytes_get_data(raw, &length);
    g_byte_array_append(all, data, (guint)length);
    size += (gint64)length;
  }
  for (guint i = 0; i < n_steps; i++) {
    /* the measured steps are part of what is imported: another set is another import */
    g_autofree char *s = g_strdup_printf("\n%" G_GUINT64_FORMAT ":%.17g", steps[i].gpus, steps[i].ms);
    g_byte_array_append(all, (const guint8 *)s, (guint)strlen(s));
  }
  g_auto(DdpCalibImport) import = { 0 };
  g_autoptr(GError) local = NULL;
  if (!ddp_calib_import_describe(paths[0], (const char *)all->data, all->len, "torch-ddp", &import, &local)) {
    import_error(error, "%s", local->message);
    return 0;
  }
  g_free(import.source);
  GString *source = g_string_new(NULL);
  for (guint f = 0; f < n; f++)
    g_string_append_printf(source, "%s%s", f ? " " : "", paths[f]);
  import.source = g_string_free(source, FALSE);
  import.size_bytes = size;
  gint64 earlier = ddp_calibdb_import_find(db, import.sha256, import.format, error);
  if (earlier != 0) {
    *again = earlier > 0;
    return MAX(earlier, 0);
  }
  g_autofree char *note = g_strdup_printf(
    "imported torch.profiler DDP run: %u rank file%s of %" G_GUINT64_FORMAT " ranks on %" G_GUINT64_FORMAT
    " node%s, %u bucket%s, %u step%s; iteration %.3f ms, exposed communication %.3f ms, overlap %.1f %%%s%s",
    t->terms.rank_files, t->terms.rank_files == 1 ? "" : "s", t->terms.world_size, t->terms.nodes, t->terms.nodes == 1 ? "" : "s",
    t->buckets->len, t->buckets->len == 1 ? "" : "s", t->terms.steps_kept, t->terms.steps_kept == 1 ? "" : "s", t->terms.iteration_ms,
    t->terms.exposed_comm_ms, 100 * t->terms.overlap, *t->torch_version ? "; PyTorch " : "", t->torch_version);
  DdpCalibRun run = { 0 };
  run.host = t->hosts;
  run.gpu_name = t->gpu_name;
  run.nodes = (int)t->terms.nodes;
  run.ranks = (int)t->terms.world_size;
  run.gpus_per_node = (int)((t->terms.world_size + t->terms.nodes - 1) / t->terms.nodes);
  run.sm_arch = t->sm_arch;
  run.gpu_memory_bytes = t->gpu_memory_bytes;
  run.cuda_version = t->cuda_version;
  run.nccl_version = t->nccl_version;
  run.program = "torch.profiler DDP run (imported by ddpsim fit --import)";
  run.arguments = import.source;
  run.note = note;
  gint64 run_id = ddp_calibdb_run_begin(db, &run, error);
  if (run_id == 0 || !ddp_calibdb_batch_begin(db, run_id, "import/torch-ddp", error))
    return 0;
  /* one point per distinct size: buckets of equal size (identical transformer blocks) average */
  gboolean ok = TRUE;
  g_autofree gboolean *done = g_new0(gboolean, t->buckets->len);
  for (guint i = 0; ok && i < t->buckets->len; i++) {
    const DdpRunBucket *k = &g_array_index(t->buckets, DdpRunBucket, i);
    if (done[i])
      continue;
    double sum = 0, lo = INFINITY, hi = 0;
    guint count = 0;
    for (guint j = i; j < t->buckets->len; j++) {
      const DdpRunBucket *o = &g_array_index(t->buckets, DdpRunBucket, j);
      if (o->bytes != k->bytes)
        continue;
      done[j] = TRUE;
      sum += o->time_us;
      lo = MIN(lo, o->min_us);
      hi = MAX(hi, o->max_us);
      count++;
    }
    DdpCalibAllreducePoint p = { 0 };
    p.algorithm = "auto";
    p.protocol = "auto";
    p.ranks = (int)t->terms.world_size;
    p.nodes = (int)t->terms.nodes;
    p.bytes = (gint64)k->bytes;
    p.dtype = "float";
    p.in_place = TRUE;
    p.iterations = (int)(t->terms.steps_kept * count);
    p.time_us = sum / count;
    p.min_us = lo;
    p.max_us = hi;
    p.algbw_GBs = (double)k->bytes / (p.time_us * 1e3);
    p.busbw_GBs = p.algbw_GBs * 2.0 * (double)(t->terms.world_size - 1) / (double)t->terms.world_size;
    ok = ddp_calibdb_batch_add_allreduce(db, &p, error);
  }
  import.gpus_per_process = 1;
  DdpRunTerms terms = t->terms;
  terms.n_steps = MIN(n_steps, (guint)DDP_MAX_MEASURED_STEPS);
  memcpy(terms.steps, steps, terms.n_steps * sizeof *steps);
  import.note = ddp_run_terms_to_text(&terms);
  return ddp_calibdb_import_finish(db, run_id, &import, ok, note, error);
}

