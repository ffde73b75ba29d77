/* profimport — torch.profiler Chrome trace → per-layer backward GPU times (see profimport.h for the
 * trace structure and the mapping heuristic).
 *
 * Implementation notes.
 * - One pass over the events collects three lists: backward nodes (CPU spans), CUDA launches
 *   (CPU spans with a correlation id) and GPU time per correlation id (hash table).  Launches are
 *   sorted by (pid, tid, ts) so each node finds its nested launches by binary search: O(E log E)
 *   for E events; a ResNet-50 step has ~10⁴.
 * - Trace ids (pid, tid) are numbers in some Kineto versions and strings in others; both are read
 *   as text.  Timestamps are µs as doubles (Kineto writes fractional µs).
 * - The alignment is the textbook LCS table (|T|+1)×(|M|+1), weighted (pair_score) so that a
 *   linear op's bias breaks ties; |M| is below 500 for every shipped model.  Backtracking prefers
 *   matching, then skipping a trace op, so ties resolve the same way every time.
 */
#include "profimport.h"
#include "fileio.h"
#include "fit.h"
#include "ranges.h"

#include <json-glib/json-glib.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define BACKWARD_PREFIX "autograd::engine::evaluate_function: "

typedef enum { OP_OTHER, OP_ACCUMULATE, OP_LINEAR, OP_CONV, OP_NORM, OP_EMBEDDING } OpClass;

typedef struct {
  char *name;        /* after the prefix: "AddmmBackward0" */
  char *thread;      /* "pid/tid" */
  double ts, end;
  double gpu_us;
  OpClass op;
  int bias;          /* linear ops: 1 AddmmBackward (with bias), 0 MmBackward (without), -1 unknown */
} Node;

typedef struct {
  char *thread;
  double ts;
  gint64 correlation;
} Launch;

void
ddp_prof_trace_free(DdpProfTrace *t)
{
  if (!t)
    return;
  if (t->layers)
    g_array_unref(t->layers);
  g_free(t->gpu_name);
  g_free(t->cuda_version);
  ddp_model_free(t->model);
  g_free(t->model_arg);
  ddp_calib_import_clear(&t->source);
  g_free(t);
}

static void
node_clear(gpointer data)
{
  Node *n = data;
  g_free(n->name);
  g_free(n->thread);
}

static void
launch_clear(gpointer data)
{
  g_free(((Launch *)data)->thread);
}

/* The op class of an autograd node name: "AddmmBackward0" → OP_LINEAR (suffix digits ignored). */
static OpClass
classify(const char *name)
{
  if (strstr(name, "AccumulateGrad"))
    return OP_ACCUMULATE;
  static const struct { const char *stem; OpClass op; } table[] = {
    { "AddmmBackward", OP_LINEAR }, { "MmBackward", OP_LINEAR }, { "LinearBackward", OP_LINEAR },
    { "ConvolutionBackward", OP_CONV }, { "CudnnConvolutionBackward", OP_CONV },
    { "ConvolutionBackwardOverrideable", OP_CONV }, { "ThnnConv2DBackward", OP_CONV },
    { "SlowConv2DBackward", OP_CONV }, { "CudnnConvolutionTransposeBackward", OP_CONV },
    { "NativeLayerNormBackward", OP_NORM }, { "NativeBatchNormBackward", OP_NORM },
    { "CudnnBatchNormBackward", OP_NORM }, { "NativeGroupNormBackward", OP_NORM },
    { "EmbeddingBackward", OP_EMBEDDING }, { "EmbeddingDenseBackward", OP_EMBEDDING },
    { "EmbeddingBagBackward", OP_EMBEDDING },
  };
  for (gsize i = 0; i < G_N_ELEMENTS(table); i++) {
    gsize len = strlen(table[i].stem);
    if (strncmp(name, table[i].stem, len) != 0)
      continue;
    const char *rest = name + len;
    while (g_ascii_isdigit(*rest))
      rest++;
    if (*rest == '\0')
      return table[i].op;
  }
  return OP_OTHER;
}

/* The anchor class of a model layer; OP_OTHER when it anchors nothing. */
static OpClass
layer_anchor(const DdpLayer *l)
{
  if (l->n_params == 0)
    return OP_OTHER;
  switch (l->kind) {
  case DDP_LAYER_LINEAR: return OP_LINEAR;
  case DDP_LAYER_CONV: return OP_CONV;
  case DDP_LAYER_NORM: return OP_NORM;
  case DDP_LAYER_EMBEDDING: return OP_EMBEDDING;
  default: return OP_OTHER;
  }
}

/* A member as text whether it is a number or a string ("pid": 12 or "pid": "12"). */
static char *
member_text(JsonObject *o, const char *name)
{
  JsonNode *n = json_object_get_member(o, name);
  if (!n || !JSON_NODE_HOLDS_VALUE(n))
    return g_strdup("");
  GType t = json_node_get_value_type(n);
  if (t == G_TYPE_STRING)
    return g_strdup(json_node_get_string(n));
  if (t == G_TYPE_INT64)
    return g_strdup_printf("%" G_GINT64_FORMAT, json_node_get_int(n));
  char buf[G_ASCII_DTOSTR_BUF_SIZE];
  return g_strdup(g_ascii_dtostr(buf, sizeof buf, json_node_get_double(n)));
}

/* Member @name of @o as a string: "" when absent; FALSE with "WHERE.NAME: not a string" when it is
 * anything else (json-glib's getters return NULL for a number, which crashed strcmp). */
static gboolean
member_string(const char *where, JsonObject *o, const char *name, const char **out, GError **error)
{
  JsonNode *n = json_object_get_member(o, name);
  *out = "";
  if (!n)
    return TRUE;
  if (JSON_NODE_HOLDS_VALUE(n) && json_node_get_value_type(n) == G_TYPE_STRING) {
    *out = json_node_get_string(n);
    return TRUE;
  }
  g_set_error(error, DDP_FIT_ERROR, DDP_FIT_ERROR_IMPORT, "%s.%s: not a string", where, name);
  return FALSE;
}

/* Member @name of @o as a number inside @r: *present FALSE when absent; FALSE with the range
 * table's message ("WHERE.NAME: "-5" must be a number from 0 to 1e+12") when it is not a number or
 * is outside @r. */
static gboolean
member_number(const char *where, JsonObject *o, const char *name, const DdpRange *r, double *out, gboolean *present,
              GError **error)
{
  JsonNode *n = json_object_get_member(o, name);
  *present = n != NULL;
  if (!n)
    return TRUE;
  g_autofree char *place = g_strdup_printf("%s.%s", where, name);
  GType t = JSON_NODE_HOLDS_VALUE(n) ? json_node_get_value_type(n) : G_TYPE_INVALID;
  if (t != G_TYPE_INT64 && t != G_TYPE_DOUBLE) {
    g_set_error(error, DDP_FIT_ERROR, DDP_FIT_ERROR_IMPORT, "%s: not a number", place);
    return FALSE;
  }
  char buf[G_ASCII_DTOSTR_BUF_SIZE];
  g_autofree char *text = t == G_TYPE_INT64 ? g_strdup_printf("%" G_GINT64_FORMAT, json_node_get_int(n))
                                            : g_strdup(g_ascii_dtostr(buf, sizeof buf, json_node_get_double(n)));
  if (!ddp_range_check_number(place, text, r, out, error)) {
    ddp_fit_error_as_import(error);
    return FALSE;
  }
  return TRUE;
}

/* args.correlation of an event: FALSE with @error when malformed; *present FALSE when absent. */
static gboolean
correlation_of(const char *where, JsonObject *event, gint64 *out, gboolean *present, GError **error)
{
  JsonNode *args = json_object_get_member(event, "args");
  *present = FALSE;
  if (!args)
    return TRUE;
  if (!JSON_NODE_HOLDS_OBJECT(args)) {
    g_set_error(error, DDP_FIT_ERROR, DDP_FIT_ERROR_IMPORT, "%s.args: not an object", where);
    return FALSE;
  }
  g_autofree char *place = g_strdup_printf("%s.args", where);
  double v = 0;
  if (!member_number(place, json_node_get_object(args), "correlation", &DDP_RANGE_CORRELATION, &v, present, error))
    return FALSE;
  *out = (gint64)v;
  return TRUE;
}

static int
compare_launch(const void *pa, const void *pb)
{
  const Launch *a = pa, *b = pb;
  int c = strcmp(a->thread, b->thread);
  if (c == 0)
    c = (a->ts > b->ts) - (a->ts < b->ts);
  if (c == 0)
    c = (a->correlation > b->correlation) - (a->correlation < b->correlation);
  return c;
}

static int
compare_node(const void *pa, const void *pb)
{
  const Node *a = pa, *b = pb;
  int c = (a->ts > b->ts) - (a->ts < b->ts);
  return c ? c : strcmp(a->thread, b->thread);
}

static int
compare_double(const void *pa, const void *pb)
{
  double a = *(const double *)pa, b = *(const double *)pb;
  return (a > b) - (a < b);
}

/* GPU time of the launches nested in @node's span on its thread. */
static double
node_gpu_time(const Node *node, const GArray *launches, GHashTable *gpu_by_correlation)
{
  const Launch *l = (const Launch *)(void *)launches->data;
  guint lo = 0, hi = launches->len;
  /* first launch with (thread, ts) ≥ (node thread, node ts) */
  while (lo < hi) {
    guint mid = lo + (hi - lo) / 2;
    int c = strcmp(l[mid].thread, node->thread);
    if (c < 0 || (c == 0 && l[mid].ts < node->ts))
      lo = mid + 1;
    else
      hi = mid;
  }
  double sum = 0;
  for (guint i = lo; i < launches->len && strcmp(l[i].thread, node->thread) == 0 && l[i].ts <= node->end; i++) {
    double *us = g_hash_table_lookup(gpu_by_correlation, &l[i].correlation);
    if (us)
      sum += *us;
  }
  return sum;
}

/* ---- mapping one backward pass onto the model ----------------------------------------------- */

typedef struct {
  const DdpModel *model;
  guint n_order;
  const guint *order;       /* backward order: positions → layer indices */
  OpClass *order_anchor;    /* anchor class by position */
  int *order_bias;          /* linear layers by position: 1 with a bias parameter, 0 without */
} Mapping;

/* Score of pairing trace anchor @node with the model anchor at position @p: 0 when the kinds
 * differ; a match counts 10, plus 1 when a linear op's bias agrees with the layer's (AddmmBackward
 * ↔ weight and bias, MmBackward ↔ weight only).  Maximising the sum keeps the most matches first
 * and uses the bias only to break ties — torch versions that lower Linear on 3-D inputs to
 * matmul + add make MmBackward for biased layers too. */
static guint
pair_score(const Mapping *m, const Node *node, guint p)
{
  if (node->op != m->order_anchor[p])
    return 0;
  return 10 + (node->op == OP_LINEAR && node->bias >= 0 && node->bias == m->order_bias[p]);
}

/* Gives @us to the unmatched layers at backward positions (from, to) exclusive, in proportion to
 * their backward_bytes (equally when all are 0); FALSE when there is none. */
static gboolean
give_to_free(const Mapping *m, const gboolean *matched, int from, int to, double us, double *acc)
{
  double weight = 0;
  guint count = 0;
  for (int p = from + 1; p < to; p++) {
    if (matched[p])
      continue;
    weight += m->model->layers[m->order[p]].backward_bytes;
    count++;
  }
  if (count == 0)
    return FALSE;
  for (int p = from + 1; p < to; p++) {
    if (matched[p])
      continue;
    double w = weight > 0 ? m->model->layers[m->order[p]].backward_bytes / weight : 1.0 / count;
    acc[m->order[p]] += us * w;
  }
  return TRUE;
}

/* Maps the nodes of one pass (execution order) and adds their GPU times into @acc (per layer).
 * Returns the number of matched anchors; *n_anchors_trace is set. */
static guint
map_pass(const Mapping *m, const Node *nodes, guint n, double *acc, gboolean *anchored, guint *n_anchors_trace)
{
  /* trace anchors, in execution order */
  g_autofree guint *t_idx = g_new(guint, MAX(n, 1));
  guint nt = 0;
  for (guint i = 0; i < n; i++)
    if (nodes[i].op >= OP_LINEAR)
      t_idx[nt++] = i;
  *n_anchors_trace = nt;
  g_autofree guint *m_pos = g_new(guint, MAX(m->n_order, 1));
  guint nm = 0;
  for (guint p = 0; p < m->n_order; p++)
    if (m->order_anchor[p] != OP_OTHER)
      m_pos[nm++] = p;
  /* alignment table (weighted LCS), L[i][j] = best score of T[i..] against M[j..] */
  guint cols = nm + 1;
  g_autofree guint *L = g_new0(guint, (gsize)(nt + 1) * cols);
  for (int i = (int)nt - 1; i >= 0; i--)
    for (int j = (int)nm - 1; j >= 0; j--) {
      guint score = pair_score(m, &nodes[t_idx[i]], m_pos[j]);
      guint skip = MAX(L[(i + 1) * cols + j], L[i * cols + j + 1]);
      L[i * cols + j] = score ? MAX(score + L[(i + 1) * cols + j + 1], skip) : skip;
    }
  /* node index → matched backward position, -1 otherwise */
  g_autofree int *node_pos = g_new(int, MAX(n, 1));
  for (guint i = 0; i < n; i++)
    node_pos[i] = -1;
  g_autofree gboolean *matched = g_new0(gboolean, MAX(m->n_order, 1));
  guint i = 0, j = 0, k = 0;
  while (i < nt && j < nm) {
    guint score = pair_score(m, &nodes[t_idx[i]], m_pos[j]);
    if (score && L[i * cols + j] == score + L[(i + 1) * cols + j + 1]) {
      node_pos[t_idx[i]] = (int)m_pos[j];
      matched[m_pos[j]] = TRUE;
      anchored[m->order[m_pos[j]]] = TRUE;
      i++, j++, k++;
    } else if (L[(i + 1) * cols + j] >= L[i * cols + j + 1]) {
      i++;
    } else {
      j++;
    }
  }
  if (k == 0)
    return 0;
  /* walk the nodes: gaps between matched anchors */
  int prev = -1;              /* backward position of the last matched anchor, -1 before the first */
  double gap = 0;
  for (guint x = 0; x <= n; x++) {
    if (x < n && node_pos[x] < 0) {
      if (nodes[x].op == OP_ACCUMULATE && prev >= 0)
        acc[m->order[prev]] += nodes[x].gpu_us;
      else
        gap += nodes[x].gpu_us;
      continue;
    }
    int next = x < n ? node_pos[x] : (int)m->n_order;
    if (gap > 0 && !give_to_free(m, matched, prev, next, gap, acc))
      acc[m->order[x < n ? next : prev]] += gap;
    gap = 0;
    if (x < n) {
      acc[m->order[next]] += nodes[x].gpu_us;
      prev = next;
    }
  }
  return k;
}

#define FAIL(...)                                                                                  \
  do {                                                                                             \
    g_autofree char *what_ = g_strdup_printf(__VA_ARGS__);                                         \
    g_set_error(error, DDP_FIT_ERROR, DDP_FIT_ERROR_IMPORT, "%s: %s", path, what_);               \
    return NULL;                                                                                   \
  } while (0)
#define FAIL_LINE(line, ...)                                                                       \
  do {                                                                                             \
    g_autofree char *what_ = g_strdup_printf(__VA_ARGS__);                                         \
    g_set_error(error, DDP_FIT_ERROR, DDP_FIT_ERROR_IMPORT, "%s:%u: %s", path, (line), what_);    \
    return NULL;                                                                                   \
  } while (0)

/* The GPU and CUDA version from the trace's header (all optional; each checked when present). */
static gboolean
read_device(const char *path, DdpProfTrace *t, JsonObject *root, GError **error)
{
  t->gpu_name = g_strdup("");
  t->cuda_version = g_strdup("");
  if (!root)
    return TRUE;
  JsonNode *props = json_object_get_member(root, "deviceProperties");
  if (props && JSON_NODE_HOLDS_ARRAY(props) && json_array_get_length(json_node_get_array(props)) > 0) {
    JsonNode *first = json_array_get_element(json_node_get_array(props), 0);
    if (JSON_NODE_HOLDS_OBJECT(first)) {
      JsonObject *d = json_node_get_object(first);
      g_autofree char *where = g_strdup_printf("%s: deviceProperties[0]", path);
      const char *name;
      double major = 0, minor = 0, memory = 0;
      gboolean has_major, has_minor, has_memory;
      if (!member_string(where, d, "name", &name, error) ||
          !member_number(where, d, "computeMajor", &DDP_RANGE_COMPUTE_VERSION, &major, &has_major, error) ||
          !member_number(where, d, "computeMinor", &DDP_RANGE_COMPUTE_VERSION, &minor, &has_minor, error) ||
          !member_number(where, d, "totalGlobalMem", &DDP_RANGE_GPU_MEMORY_BYTES, &memory, &has_memory, error))
        return FALSE;
      g_free(t->gpu_name);
      t->gpu_name = g_strdup(name);
      if (has_major && has_minor) {
        g_autofree char *arch = g_strdup_printf("%d", (int)(major * 10 + minor));
        g_autofree char *place = g_strdup_printf("%s.computeMajor*10+computeMinor", where);
        double sm;
        if (!ddp_range_check_number(place, arch, &DDP_RANGE_SM_ARCH, &sm, error)) {
          ddp_fit_error_as_import(error);
          return FALSE;
        }
        t->sm_arch = (int)sm;
      }
      if (has_memory)
        t->gpu_memory_bytes = (gint64)memory;
    }
  }
  double v = 0;
  gboolean has_version;
  g_autofree char *where = g_strdup_printf("%s: trace", path);
  if (!member_number(where, root, "cuda_runtime_version", &DDP_RANGE_CUDA_VERSION, &v, &has_version, error))
    return FALSE;
  if (has_version) {
    g_free(t->cuda_version);
    t->cuda_version = g_strdup_printf("%d.%d", (int)v / 1000, (int)v % 1000 / 10);
  }
  return TRUE;
}

/* Checks the JSON text's shape before json-glib parses it: nesting above DDP_MAX_JSON_DEPTH (json-glib
 * recurses once per level: 10^6 nested brackets overflowed the stack) or more than DDP_MAX_JSON_VALUES
 * values (json-glib's tree takes ~100 bytes a value: `[1,1,…]` of 64 MiB would take 3 GB).  Values are
 * counted as commas plus containers, outside strings.  Returns: the line where a bound is passed
 * (*@values_over set for the count), else 0. */
static guint
json_too_big(const char *text, gsize length, gboolean *values_over)
{
  guint depth = 0, line = 1;
  guint64 values = 0;
  gboolean in_string = FALSE;
  *values_over = FALSE;
  for (gsize i = 0; i < length; i++) {
    char c = text[i];
    if (c == '\n')
      line++;
    if (in_string) {
      if (c == '\\')
        i++;
      else if (c == '"')
        in_string = FALSE;
    } else if (c == '"') {
      in_string = TRUE;
    } else if (c == '[' || c == '{') {
      values++;
      if (++depth > DDP_MAX_JSON_DEPTH)
        return line;
    } else if ((c == ']' || c == '}') && depth > 0) {
      depth--;
    } else if (c == ',') {
      values++;
    }
    if (values > DDP_MAX_JSON_VALUES) {
      *values_over = TRUE;
      return line;
    }
  }
  return 0;
}

/**
 * ddp_prof_trace_parse:
 * See profimport.h.
 */
DdpProfTrace *
ddp_prof_trace_parse(const char *path, const char *text, gsize length, const DdpModel *model, GError **error)
{
  gboolean values_over = FALSE;
  guint big_line = json_too_big(text, length, &values_over);
  if (big_line && values_over)
    FAIL_LINE(big_line, "more than %u JSON values: a trace is limited to that (profile one or a few steps)",
              DDP_MAX_JSON_VALUES);
  if (big_line)
    FAIL_LINE(big_line, "JSON nested deeper than %u levels (a Chrome trace is 4 deep)", DDP_MAX_JSON_DEPTH);
  g_autoptr(JsonParser) parser = json_parser_new();
  g_autoptr(GError) local = NULL;
  if (!json_parser_load_from_data(parser, text, (gssize)length, &local)) {
    /* json-glib quotes the offending text, newlines and all: one line, escaped and cut */
    g_autofree char *why = ddp_range_quote_n(local->message, 200);
    FAIL("not JSON (%s)", why);
  }
  JsonNode *root = json_parser_get_root(parser);
  JsonObject *root_object = root && JSON_NODE_HOLDS_OBJECT(root) ? json_node_get_object(root) : NULL;
  JsonArray *events = NULL;
  if (root_object && json_object_has_member(root_object, "traceEvents") &&
      JSON_NODE_HOLDS_ARRAY(json_object_get_member(root_object, "traceEvents")))
    events = json_object_get_array_member(root_object, "traceEvents");
  else if (root && JSON_NODE_HOLDS_ARRAY(root))
    events = json_node_get_array(root);
  if (!events)
    FAIL("JSON but not a Chrome trace: no \"traceEvents\" array (write it with prof.export_chrome_trace())");

  /* the header first: checked before any event is looked at */
  g_autoptr(DdpProfTrace) t = g_new0(DdpProfTrace, 1);
  if (!read_device(path, t, root_object, error))
    return NULL;
  g_autoptr(GArray) nodes = g_array_new(FALSE, TRUE, sizeof(Node));
  g_array_set_clear_func(nodes, node_clear);
  g_autoptr(GArray) launches = g_array_new(FALSE, TRUE, sizeof(Launch));
  g_array_set_clear_func(launches, launch_clear);
  g_autoptr(GArray) steps = g_array_new(FALSE, FALSE, sizeof(double)); /* start, end pairs */
  g_autoptr(GHashTable) gpu = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, g_free);
  guint n_events = json_array_get_length(events);
  if (n_events > DDP_MAX_TRACE_EVENTS)
    FAIL("%u trace events; a trace is limited to %u (profile one or a few steps)", n_events, DDP_MAX_TRACE_EVENTS);
  for (guint e = 0; e < n_events; e++) {
    JsonNode *en = json_array_get_element(events, e);
    if (!JSON_NODE_HOLDS_OBJECT(en))
      continue;
    JsonObject *ev = json_node_get_object(en);
    g_autofree char *where = g_strdup_printf("%s: traceEvents[%u]", path, e);
    const char *ph, *name, *cat;
    if (!member_string(where, ev, "ph", &ph, error) || !member_string(where, ev, "name", &name, error) ||
        !member_string(where, ev, "cat", &cat, error))
      return NULL;
    if (strcmp(ph, "X") != 0)
      continue;
    double ts = 0, dur = 0;
    gboolean has_ts, has_dur;
    if (!member_number(where, ev, "ts", &DDP_RANGE_TRACE_TS_US, &ts, &has_ts, error) ||
        !member_number(where, ev, "dur", &DDP_RANGE_TRACE_DUR_US, &dur, &has_dur, error))
      return NULL;
    if (!has_ts || !has_dur)
      continue;
    gint64 corr = 0;
    gboolean has_corr;
    if (!correlation_of(where, ev, &corr, &has_corr, error))
      return NULL;
    if (g_str_has_prefix(name, BACKWARD_PREFIX)) {
      g_autofree char *pid = member_text(ev, "pid"), *tid = member_text(ev, "tid");
      Node n = { g_strdup(name + strlen(BACKWARD_PREFIX)), g_strdup_printf("%s/%s", pid, tid), ts, ts + dur, 0,
                 OP_OTHER, -1 };
      n.op = classify(n.name);
      n.bias = g_str_has_prefix(n.name, "AddmmBackward") ? 1 : g_str_has_prefix(n.name, "MmBackward") ? 0 : -1;
      g_array_append_val(nodes, n);
    } else if (g_str_has_prefix(name, "ProfilerStep#")) {
      double end = ts + dur;
      g_array_append_val(steps, ts);
      g_array_append_val(steps, end);
    } else if ((strcmp(cat, "cuda_runtime") == 0 || strcmp(cat, "cuda_driver") == 0) && has_corr) {
      g_autofree char *pid = member_text(ev, "pid"), *tid = member_text(ev, "tid");
      Launch l = { g_strdup_printf("%s/%s", pid, tid), ts, corr };
      g_array_append_val(launches, l);
    } else if ((strcmp(cat, "kernel") == 0 || strcmp(cat, "gpu_memcpy") == 0 || strcmp(cat, "gpu_memset") == 0 ||
                strcmp(cat, "Kernel") == 0) && has_corr) {
      double *sum = g_hash_table_lookup(gpu, &corr);
      if (!sum) {
        sum = g_new0(double, 1);
        g_hash_table_insert(gpu, g_memdup2(&corr, sizeof corr), sum);
      }
      *sum += dur;
    }
  }
  if (nodes->len == 0)
    FAIL("no backward node (\"%s…\" events) in %u trace events: profile a step that runs loss.backward()",
         BACKWARD_PREFIX, n_events);
  if (launches->len > 0) /* an empty GArray may have no data at all: qsort wants a pointer */
    qsort(launches->data, launches->len, sizeof(Launch), compare_launch);
  qsort(nodes->data, nodes->len, sizeof(Node), compare_node);
  double total = 0;
  for (guint i = 0; i < nodes->len; i++) {
    Node *node = &g_array_index(nodes, Node, i);
    node->gpu_us = node_gpu_time(node, launches, gpu);
    total += node->gpu_us;
  }
  if (!(total > 0))
    FAIL("%u backward nodes but no GPU kernel linked to them (args.correlation): a CPU-only trace, or "
         "the profiler ran without ProfilerActivity.CUDA", nodes->len);

  /* steps: the ProfilerStep spans, sorted; nodes outside every span (a trace without steps) form
   * one pass */
  guint n_steps = steps->len / 2;
  if (n_steps > 0)
    qsort(steps->data, n_steps, 2 * sizeof(double), compare_double);
  Mapping m = { model, model->n_layers, model->backward_layers, g_new(OpClass, MAX(model->n_layers, 1)),
                g_new(int, MAX(model->n_layers, 1)) };
  for (guint p = 0; p < model->n_layers; p++) {
    m.order_anchor[p] = layer_anchor(&model->layers[model->backward_layers[p]]);
    m.order_bias[p] = model->layers[model->backward_layers[p]].n_params >= 2;
  }
  guint anchors_model = 0;
  for (guint p = 0; p < model->n_layers; p++)
    anchors_model += m.order_anchor[p] != OP_OTHER;
  g_autofree double *sum = g_new0(double, MAX(model->n_layers, 1));
  g_autofree double *acc = g_new0(double, MAX(model->n_layers, 1));
  g_autofree gboolean *anchored = g_new0(gboolean, MAX(model->n_layers, 1));
  t->anchors_model = anchors_model;
  const Node *all = (const Node *)(void *)nodes->data;
  guint start = 0, passes = 0, nodes_in_passes = 0;
  double pass_total = 0;
  for (guint s = 0; start < nodes->len && s <= n_steps; s++) {
    /* the nodes of step s: ts < end of span s (all the rest when s == n_steps) */
    double end = s < n_steps ? g_array_index(steps, double, 2 * s + 1) : INFINITY;
    guint stop = start;
    while (stop < nodes->len && all[stop].ts < end)
      stop++;
    if (stop == start)
      continue;
    memset(acc, 0, model->n_layers * sizeof(double));
    guint n_trace = 0;
    guint matched = map_pass(&m, all + start, stop - start, acc, anchored, &n_trace);
    if (passes == 0) {
      t->anchors_trace = n_trace;
      t->anchors_matched = matched;
    }
    if (2 * matched < anchors_model || matched == 0) {
      g_free(m.order_anchor);
      g_free(m.order_bias);
      FAIL("only %u of %s's %u weight-bearing layers match the trace's %u weight-bearing backward ops "
           "(AddmmBackward0, ConvolutionBackward0, …): is this a trace of %s, one step of it?",
           matched, model->name, anchors_model, n_trace, model->name);
    }
    for (guint l = 0; l < model->n_layers; l++) {
      sum[l] += acc[l];
      pass_total += acc[l];
    }
    nodes_in_passes += stop - start;
    passes++;
    start = stop;
  }
  g_free(m.order_anchor);
  g_free(m.order_bias);
  t->steps = passes;
  t->backward_nodes = nodes_in_passes / passes;
  t->total_backward_us = pass_total / passes;
  t->layers = g_array_sized_new(FALSE, TRUE, sizeof(DdpProfLayerTime), model->n_layers);
  for (guint l = 0; l < model->n_layers; l++) {
    DdpProfLayerTime lt = { l, sum[l] / passes, anchored[l] };
    g_array_append_val(t->layers, lt);
  }
  return g_steal_pointer(&t);
}

#undef FAIL
#undef FAIL_LINE

/**
 * ddp_prof_trace_read:
 * See profimport.h.  The file goes through the checked reader (a regular file of at most 64 MiB),
 * gzip is inflated with the same cap on its inflated size, and the trace is parsed and mapped: all
 * before any database is opened.
 */
DdpProfTrace *
ddp_prof_trace_read(const char *path, const DdpProfImportOptions *options, GError **error)
{
  double batch = 0;
  if (!options->batch) {
    g_set_error(error, DDP_FIT_ERROR, DDP_FIT_ERROR_IMPORT,
                "--batch: the samples per step of the profiled run are required with a trace (%s)", path);
    return NULL;
  }
  if (!ddp_flag_number("batch", options->batch, &DDP_RANGE_BATCH, &batch, error))
    return NULL;
  int precision = ddp_precision_parse(options->precision ? options->precision : "fp32");
  if (precision < 0) {
    g_set_error(error, DDP_FIT_ERROR, DDP_FIT_ERROR_IMPORT, "--precision: \"%s\" is not fp32, tf32, fp16 or bf16",
                options->precision);
    return NULL;
  }
  g_autoptr(DdpModel) model = ddp_model_load(options->model, error);
  if (!model)
    return NULL;
  g_autofree char *data = NULL, *inflated = NULL;
  gsize length = 0, inflated_length = 0;
  if (!ddp_file_read(path, DDP_FILE_BINARY, &data, &length, error))
    return NULL;
  gboolean gzipped = length >= 2 && (guchar)data[0] == 0x1f && (guchar)data[1] == 0x8b;
  if (gzipped && !ddp_file_gunzip(path, data, length, DDP_MAX_INPUT_BYTES, &inflated, &inflated_length, error))
    return NULL;
  DdpProfTrace *t = ddp_prof_trace_parse(path, gzipped ? inflated : data, gzipped ? inflated_length : length, model,
                                         error);
  if (!t)
    return NULL;
  g_autoptr(GError) local = NULL;
  if (!ddp_calib_import_describe(path, data, length, "torch-profiler", &t->source, &local)) {
    g_set_error_literal(error, DDP_FIT_ERROR, DDP_FIT_ERROR_IMPORT, local->message);
    ddp_prof_trace_free(t);
    return NULL;
  }
  t->model = g_steal_pointer(&model);
  t->model_arg = g_strdup(options->model);
  t->batch = batch;
  t->precision = precision;
  return t;
}

/**
 * ddp_prof_trace_store:
 * See profimport.h.
 */
gint64
ddp_prof_trace_store(DdpCalibDb *db, DdpProfTrace *trace, gboolean *again, GError **error)
{
  const DdpModel *model = trace->model;
  const char *precision = ddp_precision_name(trace->precision);
  g_autofree char *note = g_strdup_printf(
    "imported torch.profiler trace of %s, batch %.15g, %s: %u step%s, %u backward nodes per step, %.1f us backward "
    "GPU time per step; %u of %u weight-bearing layers matched (%u weight-bearing ops in the trace)",
    model->name, trace->batch, precision, trace->steps, trace->steps == 1 ? "" : "s", trace->backward_nodes,
    trace->total_backward_us, trace->anchors_matched, trace->anchors_model, trace->anchors_trace);
  g_autofree char *arguments = g_strdup_printf("--model %s --batch %.15g --precision %s", trace->model_arg,
                                               trace->batch, precision);
  DdpCalibRun run = { 0 };
  run.host = "";
  run.gpu_name = trace->gpu_name;
  run.gpus_per_node = 1;
  run.nodes = 1;
  run.ranks = 1;
  run.sm_arch = trace->sm_arch;
  run.gpu_memory_bytes = trace->gpu_memory_bytes;
  run.cuda_version = trace->cuda_version;
  run.program = "torch.profiler (imported by ddpsim fit --import)";
  run.arguments = arguments;
  run.note = note;
  trace->source.gpus_per_process = 1;
  g_free(trace->source.note);
  trace->source.note = g_strdup(note);
  gint64 run_id = ddp_calibdb_import_begin(db, &run, "import/torch-profiler", &trace->source, again, error);
  if (run_id == 0 || *again)
    return run_id;
  gboolean ok = TRUE;
  for (guint i = 0; ok && i < trace->layers->len; i++) {
    const DdpProfLayerTime *lt = &g_array_index(trace->layers, DdpProfLayerTime, i);
    const DdpLayer *layer = &model->layers[lt->layer];
    g_autofree char *signature = ddp_fit_layer_signature(model, lt->layer);
    DdpCalibKernelPoint p = { 0 };
    p.probe = DDP_FIT_PROBE_PROFILER;
    p.layer_kind = (char *)ddp_layer_kind_name(layer->kind);
    p.op = "bwd";
    p.precision = (char *)precision;
    p.signature = signature;
    p.layer = layer->name;
    p.batch_size = trace->batch;
    p.shape = "";
    p.algo = lt->anchored ? "anchored" : "folded";
    p.flops = layer->backward_flops * trace->batch;
    p.bytes = layer->backward_bytes * trace->batch;
    p.iterations = (int)trace->steps;
    p.time_us = p.min_us = p.max_us = lt->backward_us;
    p.tflops = lt->backward_us > 0 ? p.flops / (lt->backward_us * 1e6) : 0;
    p.GBs = lt->backward_us > 0 ? p.bytes / (lt->backward_us * 1e3) : 0;
    ok = ddp_calibdb_batch_add_kernel(db, &p, error);
  }
  return ddp_calibdb_import_finish(db, run_id, &trace->source, ok, note, error);
}

/**
 * ddp_prof_import:
 * See profimport.h: ddp_prof_trace_read() then ddp_prof_trace_store().
 */
gint64
ddp_prof_import(DdpCalibDb *db, const char *path, const DdpProfImportOptions *options, gboolean *again,
                GError **error)
{
  *again = FALSE;
  g_autoptr(DdpProfTrace) trace = ddp_prof_trace_read(path, options, error);
  return trace ? ddp_prof_trace_store(db, trace, again, error) : 0;
}
