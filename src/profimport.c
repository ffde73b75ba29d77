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
#include "fit.h"

#include <gio/gio.h>
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

/* A numeric member (int or double); FALSE when absent or not a number. */
static gboolean
member_number(JsonObject *o, const char *name, double *out)
{
  JsonNode *n = json_object_get_member(o, name);
  if (!n || !JSON_NODE_HOLDS_VALUE(n))
    return FALSE;
  GType t = json_node_get_value_type(n);
  if (t == G_TYPE_INT64)
    *out = (double)json_node_get_int(n);
  else if (t == G_TYPE_DOUBLE)
    *out = json_node_get_double(n);
  else
    return FALSE;
  return isfinite(*out);
}

static gboolean
correlation_of(JsonObject *event, gint64 *out)
{
  JsonNode *args = json_object_get_member(event, "args");
  double v;
  if (!args || !JSON_NODE_HOLDS_OBJECT(args) || !member_number(json_node_get_object(args), "correlation", &v))
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

static void
read_device(DdpProfTrace *t, JsonObject *root)
{
  t->gpu_name = g_strdup("");
  t->cuda_version = g_strdup("");
  if (!root)
    return;
  JsonNode *props = json_object_get_member(root, "deviceProperties");
  if (props && JSON_NODE_HOLDS_ARRAY(props) && json_array_get_length(json_node_get_array(props)) > 0) {
    JsonNode *first = json_array_get_element(json_node_get_array(props), 0);
    if (JSON_NODE_HOLDS_OBJECT(first)) {
      JsonObject *d = json_node_get_object(first);
      g_free(t->gpu_name);
      t->gpu_name = member_text(d, "name");
      double major = 0, minor = 0, memory = 0;
      if (member_number(d, "computeMajor", &major) && member_number(d, "computeMinor", &minor))
        t->sm_arch = (int)(major * 10 + minor);
      if (member_number(d, "totalGlobalMem", &memory))
        t->gpu_memory_bytes = (gint64)memory;
    }
  }
  double v;
  if (member_number(root, "cuda_runtime_version", &v) && v > 0) {
    g_free(t->cuda_version);
    t->cuda_version = g_strdup_printf("%d.%d", (int)v / 1000, (int)v % 1000 / 10);
  }
}

/**
 * ddp_prof_trace_parse:
 * See profimport.h.
 */
DdpProfTrace *
ddp_prof_trace_parse(const char *path, const char *text, gsize length, const DdpModel *model, GError **error)
{
  g_autoptr(JsonParser) parser = json_parser_new();
  g_autoptr(GError) local = NULL;
  if (!json_parser_load_from_data(parser, text, (gssize)length, &local))
    FAIL("not JSON (%s)", local->message);
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

  g_autoptr(GArray) nodes = g_array_new(FALSE, TRUE, sizeof(Node));
  g_array_set_clear_func(nodes, node_clear);
  g_autoptr(GArray) launches = g_array_new(FALSE, TRUE, sizeof(Launch));
  g_array_set_clear_func(launches, launch_clear);
  g_autoptr(GArray) steps = g_array_new(FALSE, FALSE, sizeof(double)); /* start, end pairs */
  g_autoptr(GHashTable) gpu = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, g_free);
  guint n_events = json_array_get_length(events);
  for (guint e = 0; e < n_events; e++) {
    JsonNode *en = json_array_get_element(events, e);
    if (!JSON_NODE_HOLDS_OBJECT(en))
      continue;
    JsonObject *ev = json_node_get_object(en);
    const char *ph = json_object_get_string_member_with_default(ev, "ph", "");
    if (strcmp(ph, "X") != 0)
      continue;
    const char *name = json_object_get_string_member_with_default(ev, "name", "");
    const char *cat = json_object_get_string_member_with_default(ev, "cat", "");
    double ts, dur;
    if (!member_number(ev, "ts", &ts) || !member_number(ev, "dur", &dur) || dur < 0)
      continue;
    gint64 corr;
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
    } else if ((strcmp(cat, "cuda_runtime") == 0 || strcmp(cat, "cuda_driver") == 0) && correlation_of(ev, &corr)) {
      g_autofree char *pid = member_text(ev, "pid"), *tid = member_text(ev, "tid");
      Launch l = { g_strdup_printf("%s/%s", pid, tid), ts, corr };
      g_array_append_val(launches, l);
    } else if ((strcmp(cat, "kernel") == 0 || strcmp(cat, "gpu_memcpy") == 0 || strcmp(cat, "gpu_memset") == 0 ||
                strcmp(cat, "Kernel") == 0) && correlation_of(ev, &corr)) {
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
  g_autoptr(DdpProfTrace) t = g_new0(DdpProfTrace, 1);
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
  read_device(t, root_object);
  return g_steal_pointer(&t);
}

#undef FAIL

/* Inflates gzip data (traces are often stored as .json.gz; torch.profiler's tensorboard handler
 * writes them so).  Returns: (transfer full) the bytes, NUL-terminated, or NULL with @error. */
static char *
gunzip(const char *data, gsize length, gsize *out_length, GError **error)
{
  g_autoptr(GZlibDecompressor) z = g_zlib_decompressor_new(G_ZLIB_COMPRESSOR_FORMAT_GZIP);
  g_autoptr(GByteArray) out = g_byte_array_new();
  guint8 buffer[65536];
  gsize in_pos = 0;
  for (;;) {
    gsize read = 0, written = 0;
    GConverterResult r = g_converter_convert(G_CONVERTER(z), data + in_pos, length - in_pos, buffer, sizeof buffer,
                                             G_CONVERTER_INPUT_AT_END, &read, &written, error);
    if (r == G_CONVERTER_ERROR)
      return NULL;
    in_pos += read;
    g_byte_array_append(out, buffer, (guint)written);
    if (r == G_CONVERTER_FINISHED)
      break;
  }
  *out_length = out->len;
  g_byte_array_append(out, (const guint8 *)"", 1);
  return (char *)g_byte_array_free(g_steal_pointer(&out), FALSE);
}

/* A file error (unreadable trace) as an import error: the user's to fix, exit 2. */
static void
import_error(GError **error, const GError *cause)
{
  g_set_error_literal(error, DDP_FIT_ERROR, DDP_FIT_ERROR_IMPORT, cause->message);
}

/**
 * ddp_prof_import:
 * See profimport.h.
 */
gint64
ddp_prof_import(DdpCalibDb *db, const char *path, const DdpProfImportOptions *options, gboolean *again,
                GError **error)
{
  *again = FALSE;
  if (!(options->batch > 0)) {
    g_set_error(error, DDP_FIT_ERROR, DDP_FIT_ERROR_IMPORT,
                "--batch: the samples per step of the profiled run are required with a trace (%s)", path);
    return 0;
  }
  int precision = ddp_precision_parse(options->precision ? options->precision : "fp32");
  if (precision < 0) {
    g_set_error(error, DDP_FIT_ERROR, DDP_FIT_ERROR_IMPORT, "--precision: \"%s\" is not fp32, tf32, fp16 or bf16",
                options->precision);
    return 0;
  }
  g_autoptr(GError) local = NULL;
  g_autoptr(DdpModel) model = ddp_model_load(options->model, error);
  if (!model)
    return 0;
  g_autofree char *text = NULL;
  gsize length = 0;
  if (!g_file_get_contents(path, &text, &length, &local)) {
    import_error(error, local);
    return 0;
  }
  g_autofree char *inflated = NULL;
  gsize inflated_length = 0;
  gboolean gzipped = length >= 2 && (guchar)text[0] == 0x1f && (guchar)text[1] == 0x8b;
  if (gzipped && !(inflated = gunzip(text, length, &inflated_length, &local))) {
    g_set_error(error, DDP_FIT_ERROR, DDP_FIT_ERROR_IMPORT, "%s: damaged gzip data (%s)", path, local->message);
    return 0;
  }
  g_autoptr(DdpProfTrace) trace = ddp_prof_trace_parse(path, gzipped ? inflated : text,
                                                       gzipped ? inflated_length : length, model, error);
  if (!trace)
    return 0;
  g_auto(DdpCalibImport) import = { 0 };
  if (!ddp_calib_import_describe(path, text, length, "torch-profiler", &import, &local)) {
    import_error(error, local);
    return 0;
  }
  gint64 earlier = ddp_calibdb_import_find(db, import.sha256, import.format, error);
  if (earlier != 0) {
    *again = earlier > 0;
    return MAX(earlier, 0);
  }
  g_autofree char *note = g_strdup_printf(
    "imported torch.profiler trace of %s, batch %g, %s: %u step%s, %u backward nodes per step, %.1f us backward "
    "GPU time per step; %u of %u weight-bearing layers matched (%u weight-bearing ops in the trace)",
    model->name, options->batch, ddp_precision_name(precision), trace->steps, trace->steps == 1 ? "" : "s",
    trace->backward_nodes, trace->total_backward_us, trace->anchors_matched, trace->anchors_model,
    trace->anchors_trace);
  g_autofree char *arguments = g_strdup_printf("--model %s --batch %g --precision %s", options->model,
                                               options->batch, ddp_precision_name(precision));
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
  gint64 run_id = ddp_calibdb_run_begin(db, &run, error);
  if (run_id == 0 || !ddp_calibdb_batch_begin(db, run_id, "import/torch-profiler", error))
    return 0;
  gboolean ok = TRUE;
  for (guint i = 0; ok && i < trace->layers->len; i++) {
    const DdpProfLayerTime *lt = &g_array_index(trace->layers, DdpProfLayerTime, i);
    const DdpLayer *layer = &model->layers[lt->layer];
    g_autofree char *signature = ddp_fit_layer_signature(model, lt->layer);
    DdpCalibKernelPoint p = { 0 };
    p.probe = DDP_FIT_PROBE_PROFILER;
    p.layer_kind = (char *)ddp_layer_kind_name(layer->kind);
    p.op = "bwd";
    p.precision = (char *)ddp_precision_name(precision);
    p.signature = signature;
    p.layer = layer->name;
    p.batch_size = options->batch;
    p.shape = "";
    p.algo = lt->anchored ? "anchored" : "folded";
    p.flops = layer->backward_flops * options->batch;
    p.bytes = layer->backward_bytes * options->batch;
    p.iterations = (int)trace->steps;
    p.time_us = p.min_us = p.max_us = lt->backward_us;
    p.tflops = lt->backward_us > 0 ? p.flops / (lt->backward_us * 1e6) : 0;
    p.GBs = lt->backward_us > 0 ? p.bytes / (lt->backward_us * 1e3) : 0;
    ok = ddp_calibdb_batch_add_kernel(db, &p, error);
  }
  import.gpus_per_process = 1;
  import.note = g_strdup(note);
  return ddp_calibdb_import_finish(db, run_id, &import, ok, note, error);
}
