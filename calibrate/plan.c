/* plan — what one calibration run measures: options, the probe descriptor table, the metric
 * formulas (FLOPs and bytes of each kernel), and the ordered list of batches.  Plain C, no CUDA:
 * `ddpsim-calibrate --dry-run` prints a plan on any machine.
 *
 * From a layer to kernels.  A model file gives per-sample FLOPs and bytes and the parameter shapes
 * (models/README.md: forward FLOPs = 2·MACs + 1 per output element for a bias; backward = dX + dW
 * (+ db), dX left out where autograd skips it; forward bytes = fp32 activations read + written),
 * not activation shapes, so shapes are derived from those conventions:
 *   linear  weight [N, K] (+ bias [N]): T = forward_flops / (2·N·K + N) positions per sample, M =
 *           batch·T; kernels: forward Y = X·Wᵀ, dW = dYᵀ·X and, when backward_flops exceeds 1.5 ×
 *           forward_flops (i.e. dX is computed), dX = dY·W — cuBLAS GEMMs.
 *   conv    weight [Co, Ci/g, R, S] (+ bias): Ho·Wo = forward_flops / (2·Co·(Ci/g)·R·S + Co), taken
 *           square; input Hi·Wi = (forward_bytes/4 − Co·Ho·Wo) / Ci gives the stride s = √(Hi·Wi /
 *           Ho·Wo) (ResNet's 7×7/2 stem, ViT's 16×16/16 patches) and the padding that yields Ho;
 *           g = Co when the weight has one input channel (depthwise), else 1; kernels: cuDNN
 *           forward, backward-filter and (as for linear) backward-data, with cuDNN's heuristic
 *           algorithm choice (cudnn.benchmark off, PyTorch's default).
 *   norm    weight [C]: elements per sample = forward_bytes / 8, rows = batch·elements / C;
 *           kernels: our layer norm forward and backward over rows × C.
 *   elementwise: elements = batch·forward_bytes / 8; kernels: our GELU forward and backward.
 * Attention, embedding, pooling and other layers have no probe; fit.c takes their efficiency from
 * the nearest measured kind.  Metric formulas count each operand once (the minimum traffic), the
 * convention of roofline models and of compute.c.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#include "calibrate.h"
#include "fit.h"
#include "keyfile.h"
#include "ranges.h"

#include <math.h>
#include <stdarg.h>
#include <string.h>

G_DEFINE_QUARK(ddp-calibrate-error-quark, ddp_cal_error)

static const DdpCalProbe probes[DDP_CAL_PROBE_COUNT] = {
  [DDP_CAL_PROBE_GEMM] = { "gemm", ddp_cal_gemm_run },
  [DDP_CAL_PROBE_CONV] = { "conv", ddp_cal_conv_run },
  [DDP_CAL_PROBE_LAYERNORM] = { "layernorm", ddp_cal_layernorm_run },
  [DDP_CAL_PROBE_SOFTMAX] = { "softmax", ddp_cal_softmax_run },
  [DDP_CAL_PROBE_GELU] = { "gelu", ddp_cal_gelu_run },
  [DDP_CAL_PROBE_COPY] = { "copy", ddp_cal_copy_run },
};

static const char *const op_names[DDP_CAL_OP_COUNT] = { "fwd", "dX", "dW", "bwd-data", "bwd-filter", "bwd", "copy" };

const DdpCalProbe *
ddp_cal_probe(DdpCalProbeKind kind)
{
  g_return_val_if_fail(kind < DDP_CAL_PROBE_COUNT, NULL);
  return &probes[kind];
}

const char *
ddp_cal_op_name(DdpCalOp op)
{
  g_return_val_if_fail(op < DDP_CAL_OP_COUNT, "?");
  return op_names[op];
}

/* ---- timing rule --------------------------------------------------------------------------- */

/**
 * ddp_cal_iterations:
 * Fixed when the user gave --iters; otherwise enough launches to fill target_ms, within
 * [min_iterations, max_iterations] — small kernels get many (their per-launch noise averages out),
 * 8 GiB AllReduces a few (each already lasts tens of ms).
 */
int
ddp_cal_iterations(const DdpCalTimingOptions *t, double estimate_us)
{
  if (t->iterations > 0)
    return t->iterations;
  double n = estimate_us > 0 ? ceil(t->target_ms * 1000.0 / estimate_us) : t->max_iterations;
  return (int)CLAMP(n, (double)t->min_iterations, (double)t->max_iterations);
}

/* ---- options ------------------------------------------------------------------------------- */

static const char default_variants[] =
  "auto,Ring/LL,Ring/LL128,Ring/Simple,Tree/LL,Tree/LL128,Tree/Simple,NVLS/Simple,NVLSTree/Simple";

void
ddp_cal_options_init(DdpCalOptions *o)
{
  memset(o, 0, sizeof *o);
  o->min_bytes = 8;
  o->max_bytes = (gint64)8 << 30;
  o->step_factor = 2;
  o->batches = g_strdup("8,32");
  o->precisions = g_strdup("fp32,tf32,fp16,bf16");
  o->variants = g_strdup(default_variants);
  o->timing.warmup = 5;
  o->timing.iterations = 0;
  o->timing.target_ms = 50;
  o->timing.min_iterations = 5;
  o->timing.max_iterations = 1000;
}

void
ddp_cal_options_clear(DdpCalOptions *o)
{
  g_free(o->gpu_counts);
  g_free(o->variants);
  g_free(o->model);
  g_free(o->batches);
  g_free(o->precisions);
  g_free(o->skip);
  memset(o, 0, sizeof *o);
}

/**
 * ddp_cal_parse_size:
 * Returns: FALSE with DDP_CAL_ERROR_INPUT unless @text is a positive integer with an optional
 * K, M or G suffix (×1024ⁿ, as nccl-tests).
 */
gboolean
ddp_cal_parse_size(const char *text, gint64 *out, GError **error)
{
  char *end = NULL;
  guint64 v = g_ascii_strtoull(text, &end, 10);
  int shift = 0;
  if (end && (*end == 'K' || *end == 'k'))
    shift = 10, end++;
  else if (end && (*end == 'M' || *end == 'm'))
    shift = 20, end++;
  else if (end && (*end == 'G' || *end == 'g'))
    shift = 30, end++;
  if (end == text || !end || *end != '\0' || v == 0 || v > ((guint64)G_MAXINT64 >> shift)) {
    g_set_error(error, DDP_CAL_ERROR, DDP_CAL_ERROR_INPUT, "\"%s\" is not a size (8, 4K, 32M, 8G)", text);
    return FALSE;
  }
  *out = (gint64)(v << shift);
  return TRUE;
}

static gboolean
size_option(const char *name, const char *value, gpointer data, GError **error)
{
  DdpCalOptions *o = data;
  /* GOption passes the name as typed: --min-bytes or -b */
  gboolean min = strcmp(name, "--min-bytes") == 0 || strcmp(name, "-b") == 0;
  gint64 *slot = min ? &o->min_bytes : &o->max_bytes;
  g_autoptr(GError) local = NULL;
  if (!ddp_cal_parse_size(value, slot, &local)) {
    g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE, "%s: %s", name, local->message);
    return FALSE;
  }
  return TRUE;
}

/* The numeric flags, through the one range table (ranges.h: decimal only, whole where a count is
 * asked, inside DDP_RANGE_CAL_* and DDP_RANGE_STEP_FACTOR). */
static gboolean
number_option(const char *name, const char *value, gpointer data, GError **error)
{
  DdpCalOptions *o = data;
  guint64 count = 0;
  g_autoptr(GError) local = NULL;
  gboolean ok;
  if (strcmp(name, "--devices") == 0) {
    if ((ok = ddp_range_check_count(name, value, &DDP_RANGE_CAL_DEVICES, &count, &local)))
      o->devices = (int)count;
  } else if (strcmp(name, "--step-factor") == 0 || strcmp(name, "-f") == 0) {
    if ((ok = ddp_range_check_count(name, value, &DDP_RANGE_STEP_FACTOR, &count, &local)))
      o->step_factor = (int)count;
  } else if (strcmp(name, "--warmup") == 0 || strcmp(name, "-w") == 0) {
    if ((ok = ddp_range_check_count(name, value, &DDP_RANGE_CAL_LAUNCHES, &count, &local)))
      o->timing.warmup = (int)count;
  } else if (strcmp(name, "--iters") == 0 || strcmp(name, "-n") == 0) {
    if ((ok = ddp_range_check_count(name, value, &DDP_RANGE_CAL_LAUNCHES, &count, &local)))
      o->timing.iterations = (int)count;
  } else {
    ok = ddp_range_check_number(name, value, &DDP_RANGE_CAL_TARGET_MS, &o->timing.target_ms, &local);
  }
  if (!ok)   /* a bad value of a flag: exit 2, as GOption's own refusals */
    g_set_error_literal(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE, local->message);
  return ok;
}

static gboolean
string_option(const char *name, const char *value, gpointer data, G_GNUC_UNUSED GError **error)
{
  DdpCalOptions *o = data;
  char **slot = strcmp(name, "--gpu-counts") == 0   ? &o->gpu_counts
                : strcmp(name, "--variants") == 0   ? &o->variants
                : strcmp(name, "--model") == 0      ? &o->model
                : strcmp(name, "--batch") == 0      ? &o->batches
                : strcmp(name, "--precision") == 0  ? &o->precisions
                                                    : &o->skip;
  g_free(*slot);
  *slot = g_strdup(value);
  return TRUE;
}

/**
 * ddp_cal_option_group:
 * Returns: (transfer full): the measuring options; parsing writes into @o, which must outlive the
 * context.
 */
GOptionGroup *
ddp_cal_option_group(DdpCalOptions *o)
{
  GOptionEntry entries[] = {
    { "devices", 0, 0, G_OPTION_ARG_CALLBACK, (gpointer)number_option, "use the first N visible GPUs (default: all)", "N" },
    { "gpu-counts", 0, 0, G_OPTION_ARG_CALLBACK, (gpointer)string_option,
      "AllReduce over these GPU counts (default: 2, 4, ... up to all)", "LIST" },
    { "variants", 0, 0, G_OPTION_ARG_CALLBACK, (gpointer)string_option,
      "NCCL_ALGO/NCCL_PROTO pairs to force, \"auto\" for NCCL's own choice (default: auto, "
      "Ring and Tree with LL, LL128 and Simple, NVLS/Simple, and NVLSTree/Simple across nodes)", "LIST" },
    { "min-bytes", 'b', 0, G_OPTION_ARG_CALLBACK, (gpointer)size_option, "smallest AllReduce (default 8)", "SIZE" },
    { "max-bytes", 'e', 0, G_OPTION_ARG_CALLBACK, (gpointer)size_option, "largest AllReduce (default 8G)", "SIZE" },
    { "step-factor", 'f', 0, G_OPTION_ARG_CALLBACK, (gpointer)number_option, "multiplicative size step (default 2)", "F" },
    { "out-of-place", 0, 0, G_OPTION_ARG_NONE, &o->out_of_place, "also time out-of-place AllReduce", NULL },
    { "model", 0, 0, G_OPTION_ARG_CALLBACK, (gpointer)string_option,
      "measure the layers of this model (default: a built-in set of linear, conv, norm and elementwise shapes)",
      "NAME|PATH" },
    { "batch", 0, 0, G_OPTION_ARG_CALLBACK, (gpointer)string_option, "samples per GPU (default 8,32)", "LIST" },
    { "precision", 0, 0, G_OPTION_ARG_CALLBACK, (gpointer)string_option,
      "kernel precisions (default fp32,tf32,fp16,bf16)", "LIST" },
    { "skip", 0, 0, G_OPTION_ARG_CALLBACK, (gpointer)string_option, "leave out allreduce, kernels and/or copy", "LIST" },
    { "warmup", 'w', 0, G_OPTION_ARG_CALLBACK, (gpointer)number_option, "untimed launches first (default 5)", "N" },
    { "iters", 'n', 0, G_OPTION_ARG_CALLBACK, (gpointer)number_option,
      "timed launches (default 0: adaptive, about --target-ms of work, 5 to 1000)", "N" },
    { "target-ms", 0, 0, G_OPTION_ARG_CALLBACK, (gpointer)number_option, "adaptive timing target (default 50)", "MS" },
    { NULL, 0, 0, 0, NULL, NULL, NULL },
  };
  GOptionGroup *group = g_option_group_new("measure", "Measuring options (stored with the run; --resume reuses them):",
                                           "Show measuring options", o, NULL);
  g_option_group_add_entries(group, entries);
  return group;
}

static gboolean
input_error(GError **error, const char *format, ...) G_GNUC_PRINTF(2, 3);

static gboolean
input_error(GError **error, const char *format, ...)
{
  va_list ap;
  va_start(ap, format);
  char *message = g_strdup_vprintf(format, ap);
  va_end(ap);
  g_set_error_literal(error, DDP_CAL_ERROR, DDP_CAL_ERROR_INPUT, message);
  g_free(message);
  return FALSE;
}

/* Splits a comma list, dropping empty items. */
static GStrv
split_list(const char *text)
{
  g_auto(GStrv) parts = g_strsplit(text ? text : "", ",", -1);
  GPtrArray *out = g_ptr_array_new();
  for (guint i = 0; parts[i]; i++)
    if (*g_strstrip(parts[i]))
      g_ptr_array_add(out, g_strdup(parts[i]));
  g_ptr_array_add(out, NULL);
  return (GStrv)g_ptr_array_free(out, FALSE);
}

/* A comma list of GPU counts (@integers) or batches, each item through the range table. */
static gboolean
parse_positive_list(const char *option, const char *text, GArray *out, gboolean integers, GError **error)
{
  g_auto(GStrv) items = split_list(text);
  for (guint i = 0; items[i]; i++) {
    double v = 0;
    g_autoptr(GError) local = NULL;
    if (!ddp_range_check_number(option, items[i], integers ? &DDP_RANGE_GPUS : &DDP_RANGE_BATCH, &v, &local))
      return input_error(error, "%s", local->message);
    g_array_append_val(out, v);
  }
  if (out->len == 0)
    return input_error(error, "%s: empty list", option);
  return TRUE;
}

static const char *const nccl_algorithms[] = { "Ring", "Tree", "NVLS", "NVLSTree", "CollNetDirect", "CollNetChain", "PAT", NULL };
static const char *const nccl_protocols[] = { "LL", "LL128", "Simple", NULL };

static const char *
known_name(const char *const *names, const char *name)
{
  for (guint i = 0; names[i]; i++)
    if (g_ascii_strcasecmp(names[i], name) == 0)
      return names[i];
  return NULL;
}

/* "Ring/Simple" → ("Ring", "Simple"); "auto" → ("auto", "auto"). */
static gboolean
parse_variant(const char *text, const char **algorithm, const char **protocol, GError **error)
{
  if (g_ascii_strcasecmp(text, "auto") == 0) {
    *algorithm = *protocol = "auto";
    return TRUE;
  }
  g_auto(GStrv) parts = g_strsplit(text, "/", 2);
  if (!parts[0] || !parts[1] || !(*algorithm = known_name(nccl_algorithms, parts[0])) ||
      !(*protocol = known_name(nccl_protocols, parts[1])))
    return input_error(error, "--variants: \"%s\" is not ALGORITHM/PROTOCOL (Ring, Tree, NVLS, NVLSTree, "
                       "CollNetDirect, CollNetChain, PAT / LL, LL128, Simple) or auto", text);
  return TRUE;
}

gboolean
ddp_cal_options_validate(const DdpCalOptions *o, GError **error)
{
  /* --devices, --step-factor, --warmup, --iters and --target-ms were range-checked as parsed
   * (number_option); what remains is how the flags relate */
  g_assert(o->devices >= 0 && o->step_factor >= 2 && o->timing.warmup >= 0 && o->timing.iterations >= 0 &&
           o->timing.target_ms > 0);
  if (o->min_bytes < 4 || o->min_bytes > o->max_bytes)
    return input_error(error, "--min-bytes/--max-bytes: need 4 <= min <= max (got %" G_GINT64_FORMAT " and %"
                       G_GINT64_FORMAT ")", o->min_bytes, o->max_bytes);
  g_autoptr(GArray) numbers = g_array_new(FALSE, FALSE, sizeof(double));
  if (o->gpu_counts && !parse_positive_list("--gpu-counts", o->gpu_counts, numbers, TRUE, error))
    return FALSE;
  g_array_set_size(numbers, 0);
  if (!parse_positive_list("--batch", o->batches, numbers, FALSE, error))
    return FALSE;
  g_auto(GStrv) precisions = split_list(o->precisions);
  if (!precisions[0])
    return input_error(error, "--precision: empty list");
  for (guint i = 0; precisions[i]; i++)
    if (ddp_precision_parse(precisions[i]) < 0)
      return input_error(error, "--precision: \"%s\" is not fp32, tf32, fp16 or bf16", precisions[i]);
  g_auto(GStrv) variants = split_list(o->variants);
  if (!variants[0])
    return input_error(error, "--variants: empty list");
  for (guint i = 0; variants[i]; i++) {
    const char *a, *p;
    if (!parse_variant(variants[i], &a, &p, error))
      return FALSE;
  }
  g_auto(GStrv) skip = split_list(o->skip);
  for (guint i = 0; skip[i]; i++)
    if (strcmp(skip[i], "allreduce") != 0 && strcmp(skip[i], "kernels") != 0 && strcmp(skip[i], "copy") != 0)
      return input_error(error, "--skip: \"%s\" is not allreduce, kernels or copy", skip[i]);
  return TRUE;
}

static gboolean
skipped(const DdpCalOptions *o, const char *what)
{
  g_auto(GStrv) skip = split_list(o->skip);
  return g_strv_contains((const char *const *)skip, what);
}

/**
 * ddp_cal_options_to_string:
 * Every measuring option, defaults included, so that a later version's defaults cannot change
 * what --resume measures.  A model given as a path is made absolute (resume may run elsewhere).
 * Returns: (transfer full).
 */
char *
ddp_cal_options_to_string(const DdpCalOptions *o)
{
  GString *s = g_string_new(NULL);
  char num[G_ASCII_DTOSTR_BUF_SIZE];
#define ADD(flag, value)                                                                           \
  do {                                                                                             \
    g_autofree char *quoted_ = g_shell_quote(value);                                               \
    g_string_append_printf(s, "%s%s %s", s->len ? " " : "", flag, quoted_);                       \
  } while (0)
  g_autofree char *devices = g_strdup_printf("%d", o->devices);
  ADD("--devices", devices);
  if (o->gpu_counts)
    ADD("--gpu-counts", o->gpu_counts);
  ADD("--variants", o->variants);
  g_autofree char *min = g_strdup_printf("%" G_GINT64_FORMAT, o->min_bytes);
  g_autofree char *max = g_strdup_printf("%" G_GINT64_FORMAT, o->max_bytes);
  g_autofree char *step = g_strdup_printf("%d", o->step_factor);
  ADD("--min-bytes", min);
  ADD("--max-bytes", max);
  ADD("--step-factor", step);
  if (o->out_of_place)
    g_string_append(s, " --out-of-place");
  if (o->model) {
    gboolean is_path = strchr(o->model, '/') || g_file_test(o->model, G_FILE_TEST_IS_REGULAR);
    g_autofree char *model = is_path ? g_canonicalize_filename(o->model, NULL) : g_strdup(o->model);
    ADD("--model", model);
  }
  ADD("--batch", o->batches);
  ADD("--precision", o->precisions);
  if (o->skip && *o->skip)
    ADD("--skip", o->skip);
  g_autofree char *warmup = g_strdup_printf("%d", o->timing.warmup);
  g_autofree char *iters = g_strdup_printf("%d", o->timing.iterations);
  ADD("--warmup", warmup);
  ADD("--iters", iters);
  ADD("--target-ms", g_ascii_dtostr(num, sizeof num, o->timing.target_ms));
#undef ADD
  return g_string_free(s, FALSE);
}

/**
 * ddp_cal_options_from_string:
 * Re-parses what ddp_cal_options_to_string() wrote (a run's stored arguments) into @o, which is
 * (re)initialised first.  Returns: FALSE with @error when the text does not parse.
 */
gboolean
ddp_cal_options_from_string(DdpCalOptions *o, const char *text, GError **error)
{
  ddp_cal_options_clear(o);
  ddp_cal_options_init(o);
  g_auto(GStrv) words = NULL;
  int n = 0;
  g_autofree char *trimmed = g_strstrip(g_strdup(text ? text : ""));
  if (*trimmed == '\0')
    return TRUE; /* nothing stored: the defaults */
  if (!g_shell_parse_argv(trimmed, &n, &words, error))
    return FALSE;
  g_auto(GStrv) args = g_new0(char *, n + 2);
  args[0] = g_strdup("ddpsim-calibrate");
  for (int i = 0; i < n; i++)
    args[i + 1] = g_strdup(words[i]);
  g_autoptr(GOptionContext) context = g_option_context_new(NULL);
  g_option_context_set_main_group(context, ddp_cal_option_group(o));
  g_option_context_set_help_enabled(context, FALSE);
  /* _parse_strv frees what it consumes (plain _parse would leak the parsed strings) */
  if (!g_option_context_parse_strv(context, &args, error))
    return FALSE;
  if (args[0] && args[1])
    return input_error(error, "stored arguments: unexpected \"%s\"", args[1]);
  return ddp_cal_options_validate(o, error);
}

/* ---- metric formulas ----------------------------------------------------------------------- */

static double
element_size(DdpPrecision p)
{
  return p == DDP_PRECISION_FP16 || p == DDP_PRECISION_BF16 ? 2.0 : 4.0;
}

/**
 * ddp_cal_case_metrics:
 * FLOPs and minimum bytes of one call (each operand read or written once):
 *   GEMM      2·m·n·k FLOPs; (m·k + k·n + m·n) elements.
 *   conv      2·N·K·(C/g)·R·S·Ho·Wo FLOPs for each of forward, backward-data and backward-filter;
 *             input N·C·H·W + output N·K·Ho·Wo + filter K·(C/g)·R·S elements.
 *   layer norm forward reads x, writes y (2 per element, ≈ 7 FLOPs: mean, variance, normalise,
 *             scale, shift); backward reads x, dy, writes dx (3 per element, ≈ 10 FLOPs).
 *   softmax   forward 2 per element (≈ 5 FLOPs: max, subtract, exp, sum, divide); backward reads y,
 *             dy, writes dx (3 per element, ≈ 4 FLOPs).
 *   GELU      forward 2 per element (≈ 10 FLOPs, tanh form); backward 3 per element (≈ 15).
 *   copy      each byte read once and written once: 2 × size, no FLOPs (as CUDA's bandwidthTest).
 * Parameter traffic (γ, β) of the row kernels is added: 2 vectors of cols fp32.
 */
void
ddp_cal_case_metrics(DdpCalCase *c)
{
  double e = element_size(c->precision);
  const char *op = ddp_cal_op_name(c->op);
  switch (c->probe) {
  case DDP_CAL_PROBE_GEMM:
    c->flops = 2.0 * (double)c->m * (double)c->n * (double)c->k;
    c->bytes = e * ((double)c->m * c->k + (double)c->k * c->n + (double)c->m * c->n);
    g_snprintf(c->shape, sizeof c->shape, "M=%" G_GINT64_FORMAT " N=%" G_GINT64_FORMAT " K=%" G_GINT64_FORMAT " %c%c",
               c->m, c->n, c->k, c->trans_a ? 'T' : 'N', c->trans_b ? 'T' : 'N');
    break;
  case DDP_CAL_PROBE_CONV: {
    gint64 ho = (c->conv.h + 2 * c->conv.pad_h - c->conv.r) / c->conv.stride + 1;
    gint64 wo = (c->conv.w + 2 * c->conv.pad_w - c->conv.s) / c->conv.stride + 1;
    double cg = (double)c->conv.c / (double)c->conv.groups;
    c->flops = 2.0 * c->conv.n * c->conv.k * cg * c->conv.r * c->conv.s * (double)ho * wo;
    c->bytes = e * ((double)c->conv.n * c->conv.c * c->conv.h * c->conv.w + (double)c->conv.n * c->conv.k * ho * wo +
                    (double)c->conv.k * cg * c->conv.r * c->conv.s);
    g_snprintf(c->shape, sizeof c->shape,
               "N=%" G_GINT64_FORMAT " C=%" G_GINT64_FORMAT " H=%" G_GINT64_FORMAT " W=%" G_GINT64_FORMAT
               " K=%" G_GINT64_FORMAT " R=%" G_GINT64_FORMAT " S=%" G_GINT64_FORMAT " pad=%" G_GINT64_FORMAT
               " stride=%" G_GINT64_FORMAT " groups=%" G_GINT64_FORMAT,
               c->conv.n, c->conv.c, c->conv.h, c->conv.w, c->conv.k, c->conv.r, c->conv.s, c->conv.pad_h,
               c->conv.stride, c->conv.groups);
    break;
  }
  case DDP_CAL_PROBE_LAYERNORM:
  case DDP_CAL_PROBE_SOFTMAX:
  case DDP_CAL_PROBE_GELU: {
    double n = (double)c->rows * (double)c->cols;
    gboolean fwd = c->op == DDP_CAL_OP_FWD;
    double flops_per = c->probe == DDP_CAL_PROBE_LAYERNORM ? (fwd ? 7 : 10)
                       : c->probe == DDP_CAL_PROBE_SOFTMAX ? (fwd ? 5 : 4)
                                                           : (fwd ? 10 : 15);
    c->flops = flops_per * n;
    c->bytes = e * n * (fwd ? 2 : 3) + (c->probe == DDP_CAL_PROBE_LAYERNORM ? 2.0 * 4 * c->cols : 0);
    g_snprintf(c->shape, sizeof c->shape, "rows=%" G_GINT64_FORMAT " cols=%" G_GINT64_FORMAT " %s", c->rows, c->cols, op);
    break;
  }
  case DDP_CAL_PROBE_COPY:
    c->flops = 0;
    c->bytes = 2.0 * (double)c->copy_bytes;
    g_snprintf(c->shape, sizeof c->shape, "bytes=%" G_GINT64_FORMAT, c->copy_bytes);
    break;
  default:
    g_assert_not_reached();
  }
}

/* ---- the built-in layer set ---------------------------------------------------------------- */

/* Shapes of the layers that dominate common DDP workloads: GPT-2/BERT-base/large and Llama-7B
 * sized linears over 512 positions per sample, the ResNet-50 convolution shapes at their output
 * resolution, the norms and activations between them.  Written as a model file so that it goes
 * through the same loader and signature as a user's model. */
typedef struct {
  const char *name, *kind;
  gint64 shape[4];       /* linear [out, in]; conv [Co, Ci, R, S]; norm [C]; elementwise none */
  double positions;      /* linear: tokens per sample; conv: output H·W; norm, elementwise: elements */
  int stride;            /* conv (1 elsewhere) */
} DefaultLayer;

static const DefaultLayer default_layers[] = {
  { "linear.768x768", "linear", { 768, 768 }, 512, 1 },
  { "linear.3072x768", "linear", { 3072, 768 }, 512, 1 },
  { "linear.768x3072", "linear", { 768, 3072 }, 512, 1 },
  { "linear.1024x1024", "linear", { 1024, 1024 }, 512, 1 },
  { "linear.4096x1024", "linear", { 4096, 1024 }, 512, 1 },
  { "linear.1024x4096", "linear", { 1024, 4096 }, 512, 1 },
  { "linear.4096x4096", "linear", { 4096, 4096 }, 512, 1 },
  { "linear.11008x4096", "linear", { 11008, 4096 }, 512, 1 },
  { "linear.4096x11008", "linear", { 4096, 11008 }, 512, 1 },
  { "conv.64x3x7x7", "conv", { 64, 3, 7, 7 }, 112 * 112, 2 },
  { "conv.64x64x1x1", "conv", { 64, 64, 1, 1 }, 56 * 56, 1 },
  { "conv.64x64x3x3", "conv", { 64, 64, 3, 3 }, 56 * 56, 1 },
  { "conv.256x64x1x1", "conv", { 256, 64, 1, 1 }, 56 * 56, 1 },
  { "conv.128x128x3x3", "conv", { 128, 128, 3, 3 }, 28 * 28, 1 },
  { "conv.512x128x1x1", "conv", { 512, 128, 1, 1 }, 28 * 28, 1 },
  { "conv.256x256x3x3", "conv", { 256, 256, 3, 3 }, 14 * 14, 1 },
  { "conv.1024x256x1x1", "conv", { 1024, 256, 1, 1 }, 14 * 14, 1 },
  { "conv.512x512x3x3", "conv", { 512, 512, 3, 3 }, 7 * 7, 1 },
  { "conv.2048x512x1x1", "conv", { 2048, 512, 1, 1 }, 7 * 7, 1 },
  { "norm.768", "norm", { 768 }, 512 * 768, 1 },
  { "norm.1024", "norm", { 1024 }, 512 * 1024, 1 },
  { "norm.4096", "norm", { 4096 }, 512 * 4096, 1 },
  { "norm.bn64", "norm", { 64 }, 64 * 56 * 56, 1 },
  { "norm.bn256", "norm", { 256 }, 256 * 14 * 14, 1 },
  { "elementwise.gelu3072", "elementwise", { 0 }, 512 * 3072, 1 },
  { "elementwise.relu64", "elementwise", { 0 }, 64 * 112 * 112, 1 },
  { "elementwise.silu11008", "elementwise", { 0 }, 512 * 11008, 1 },
};

/* Softmax over attention scores: heads × queries rows of keys columns, per sample. */
static const struct { const char *name; gint64 rows_per_sample, cols; } default_softmax[] = {
  { "softmax.12x512x512", 12 * 512, 512 },
  { "softmax.32x512x512", 32 * 512, 512 },
};

static char *
default_model_text(void)
{
  GString *s = g_string_new("[model]\nname = ddpsim-calibrate-default\n"
                            "source = calibrate/plan.c built-in layer set\n");
  char a[G_ASCII_DTOSTR_BUF_SIZE], b[G_ASCII_DTOSTR_BUF_SIZE], c[G_ASCII_DTOSTR_BUF_SIZE];
  for (gsize i = 0; i < G_N_ELEMENTS(default_layers); i++) {
    const DefaultLayer *l = &default_layers[i];
    double fwd_flops, bwd_flops, fwd_bytes;
    g_autofree char *plist = NULL;
    /* models/README.md conventions: bias add 1 FLOP per output, backward = dX + dW (+ db) */
    if (strcmp(l->kind, "linear") == 0) {
      double n = (double)l->shape[0], k = (double)l->shape[1];
      fwd_flops = (2 * n * k + n) * l->positions;
      bwd_flops = (4 * n * k + n) * l->positions;
      fwd_bytes = 4 * l->positions * (n + k);
      plist = g_strdup_printf("%s.weight:%" G_GINT64_FORMAT ",%" G_GINT64_FORMAT ";%s.bias:%" G_GINT64_FORMAT, l->name,
                              l->shape[0], l->shape[1], l->name, l->shape[0]);
    } else if (strcmp(l->kind, "conv") == 0) {
      double w = (double)l->shape[0] * l->shape[1] * l->shape[2] * l->shape[3];
      fwd_flops = 2 * w * l->positions;
      /* the stem's input (the image) needs no gradient: no dX */
      bwd_flops = (l->shape[1] == 3 ? 1 : 2) * fwd_flops;
      double input = l->positions * l->stride * l->stride;
      fwd_bytes = 4 * (input * (double)l->shape[1] + l->positions * (double)l->shape[0]);
      plist = g_strdup_printf("%s.weight:%" G_GINT64_FORMAT ",%" G_GINT64_FORMAT ",%" G_GINT64_FORMAT ",%" G_GINT64_FORMAT,
                              l->name, l->shape[0], l->shape[1], l->shape[2], l->shape[3]);
    } else if (strcmp(l->kind, "norm") == 0) {
      fwd_flops = 7 * l->positions;
      bwd_flops = 10 * l->positions;
      fwd_bytes = 8 * l->positions;
      plist = g_strdup_printf("%s.weight:%" G_GINT64_FORMAT ";%s.bias:%" G_GINT64_FORMAT, l->name, l->shape[0], l->name,
                              l->shape[0]);
    } else {
      fwd_flops = 10 * l->positions;
      bwd_flops = 15 * l->positions;
      fwd_bytes = 8 * l->positions;
    }
    g_string_append_printf(s, "[layer %s]\nkind = %s\nforward_flops = %s\nbackward_flops = %s\nforward_bytes = %s\n",
                           l->name, l->kind, g_ascii_dtostr(a, sizeof a, fwd_flops), g_ascii_dtostr(b, sizeof b, bwd_flops),
                           g_ascii_dtostr(c, sizeof c, fwd_bytes));
    if (plist)
      g_string_append_printf(s, "params = %s\n", plist);
  }
  return g_string_free(s, FALSE);
}

/* ---- the plan ------------------------------------------------------------------------------ */

void
ddp_cal_batch_free(DdpCalBatch *b)
{
  if (!b)
    return;
  g_free(b->name);
  g_free(b->algorithm);
  g_free(b->protocol);
  g_free(b->layer_kind);
  g_free(b->signature);
  g_free(b->layer);
  g_free(b->precision);
  if (b->cases)
    g_array_unref(b->cases);
  g_free(b);
}

static DdpCalBatch *
kernel_batch(const char *name, const char *kind, const char *signature, const char *layer, double batch,
             const char *precision)
{
  DdpCalBatch *b = g_new0(DdpCalBatch, 1);
  b->name = g_strdup(name);
  b->type = DDP_CAL_BATCH_KERNEL;
  b->layer_kind = g_strdup(kind);
  b->signature = g_strdup(signature);
  b->layer = g_strdup(layer);
  b->batch = batch;
  b->precision = g_strdup(precision);
  b->cases = g_array_new(FALSE, TRUE, sizeof(DdpCalCase));
  return b;
}

static void
add_case(DdpCalBatch *b, DdpCalCase c)
{
  ddp_cal_case_metrics(&c);
  g_array_append_val(b->cases, c);
}

static const DdpParam *
param_with_ndim(const DdpModel *m, const DdpLayer *l, int ndim)
{
  for (guint p = l->first_param; p < l->first_param + l->n_params; p++)
    if (m->params[p].ndim == ndim)
      return &m->params[p];
  return NULL;
}

/* A 1-D parameter of @n elements besides the weight: a bias (adds n FLOPs per position). */
static gboolean
has_bias(const DdpModel *m, const DdpLayer *l, gint64 n)
{
  for (guint p = l->first_param; p < l->first_param + l->n_params; p++)
    if (m->params[p].ndim == 1 && m->params[p].numel == n)
      return TRUE;
  return FALSE;
}

/* Backward computes dX unless autograd skips it (the input needs no gradient, e.g. the first
 * layer): then backward_flops ≈ forward_flops instead of ≈ 2 ×. */
static gboolean
computes_dx(const DdpLayer *l)
{
  return l->backward_flops > 1.5 * l->forward_flops;
}

static gint64
at_least_one(double v)
{
  return MAX((gint64)1, (gint64)llround(v));
}

/* The kernels of layer @li at @batch samples and precision @p (see the top of the file), added
 * to @b.  Returns: FALSE with *why set when the layer has no probe or its numbers give no shape. */
static gboolean
layer_cases(const DdpModel *m, guint li, double batch, DdpPrecision p, DdpCalBatch *b, const char **why)
{
  const DdpLayer *l = &m->layers[li];
  DdpCalCase c = { 0 };
  c.precision = p;
  switch (l->kind) {
  case DDP_LAYER_LINEAR: {
    const DdpParam *w = param_with_ndim(m, l, 2);
    if (!w)
      return *why = "no 2-D weight", FALSE;
    gint64 N = w->shape[0], K = w->shape[1];
    double bias = has_bias(m, l, N) ? (double)N : 0;
    double positions = l->forward_flops / (2.0 * (double)N * (double)K + bias);
    if (!(positions * batch >= 0.5))
      return *why = "forward_flops too small for its weight (fewer than one position per batch)", FALSE;
    gint64 M = at_least_one(batch * positions);
    c.probe = DDP_CAL_PROBE_GEMM;
    c.op = DDP_CAL_OP_FWD, c.m = N, c.n = M, c.k = K, c.trans_a = TRUE, c.trans_b = FALSE;
    add_case(b, c);
    if (computes_dx(l)) {
      c.op = DDP_CAL_OP_DX, c.m = K, c.n = M, c.k = N, c.trans_a = FALSE, c.trans_b = FALSE;
      add_case(b, c);
    }
    c.op = DDP_CAL_OP_DW, c.m = K, c.n = N, c.k = M, c.trans_a = FALSE, c.trans_b = TRUE;
    add_case(b, c);
    return TRUE;
  }
  case DDP_LAYER_CONV: {
    const DdpParam *w = param_with_ndim(m, l, 4);
    if (!w)
      return *why = "no 4-D weight", FALSE;
    gint64 co = w->shape[0], cig = w->shape[1], r = w->shape[2], s = w->shape[3];
    double per_position = 2.0 * (double)co * cig * r * s + (has_bias(m, l, co) ? (double)co : 0);
    double hw = l->forward_flops / per_position;
    if (!(hw >= 0.5))
      return *why = "forward_flops too small for its weight", FALSE;
    c.probe = DDP_CAL_PROBE_CONV;
    c.conv.groups = (cig == 1 && co > 1) ? co : 1;
    c.conv.k = co;
    c.conv.c = cig * c.conv.groups;
    c.conv.r = r;
    c.conv.s = s;
    gint64 out = at_least_one(sqrt(hw));
    /* stride from the input size that forward_bytes implies; 1 when it says nothing sensible */
    double in_hw = (l->forward_bytes / 4 - (double)co * hw) / (double)c.conv.c;
    gint64 stride = in_hw > hw ? MAX((gint64)1, (gint64)llround(sqrt(in_hw / hw))) : 1;
    c.conv.stride = stride;
    c.conv.h = c.conv.w = out * stride;
    /* the padding that gives `out` outputs: (h + 2p − r) / stride + 1 = out */
    c.conv.pad_h = MAX((gint64)0, ((out - 1) * stride + r - c.conv.h + 1) / 2);
    c.conv.pad_w = MAX((gint64)0, ((out - 1) * stride + s - c.conv.w + 1) / 2);
    c.conv.n = at_least_one(batch);
    c.op = DDP_CAL_OP_FWD;
    add_case(b, c);
    if (computes_dx(l)) {
      c.op = DDP_CAL_OP_BWD_DATA;
      add_case(b, c);
    }
    c.op = DDP_CAL_OP_BWD_FILTER;
    add_case(b, c);
    return TRUE;
  }
  case DDP_LAYER_NORM: {
    const DdpParam *w = l->n_params ? &m->params[l->first_param] : NULL;
    if (!w)
      return *why = "no weight to give the normalised size", FALSE;
    if (!(l->forward_bytes > 0))
      return *why = "no forward_bytes to give the activation size", FALSE;
    double elements = batch * l->forward_bytes / 8;
    c.probe = DDP_CAL_PROBE_LAYERNORM;
    c.cols = w->numel;
    c.rows = at_least_one(elements / (double)w->numel);
    c.op = DDP_CAL_OP_FWD;
    add_case(b, c);
    c.op = DDP_CAL_OP_BWD;
    add_case(b, c);
    return TRUE;
  }
  case DDP_LAYER_ELEMENTWISE: {
    if (!(l->forward_bytes > 0))
      return *why = "no forward_bytes to give the activation size", FALSE;
    c.probe = DDP_CAL_PROBE_GELU;
    /* laid out as rows of 1024 only to keep every index within int range on the GPU */
    c.cols = 1024;
    c.rows = at_least_one(batch * l->forward_bytes / 8 / 1024);
    c.op = DDP_CAL_OP_FWD;
    add_case(b, c);
    c.op = DDP_CAL_OP_BWD;
    add_case(b, c);
    return TRUE;
  }
  default:
    return *why = "no probe for this kind (fit.c takes its efficiency from a measured kind)", FALSE;
  }
}

static gboolean
is_memory_kind(DdpLayerKind kind)
{
  return kind == DDP_LAYER_NORM || kind == DDP_LAYER_ELEMENTWISE;
}

static void
plan_allreduce(const DdpCalOptions *o, int local_devices, int n_ranks, int nodes, GPtrArray *plan, GPtrArray *notes,
               GArray *counts)
{
  g_auto(GStrv) variants = split_list(o->variants);
  for (guint c = 0; c < counts->len; c++) {
    int ranks = (int)g_array_index(counts, double, c);
    int local = n_ranks > local_devices ? local_devices : ranks;
    for (guint v = 0; variants[v]; v++) {
      const char *algorithm, *protocol;
      if (!parse_variant(variants[v], &algorithm, &protocol, NULL))
        g_assert_not_reached(); /* validated */
      /* one rank: no algorithm runs; only NCCL's launch path is measured, once */
      if (ranks == 1 && strcmp(algorithm, "auto") != 0)
        continue;
      /* NCCL disables NVLSTree on a single node (docs/model.md §2.4): nothing to ask it */
      if (nodes == 1 && strcmp(algorithm, "NVLSTree") == 0)
        continue;
      for (gint64 bytes = o->min_bytes; bytes <= o->max_bytes; bytes *= o->step_factor) {
        DdpCalBatch *b = g_new0(DdpCalBatch, 1);
        b->type = DDP_CAL_BATCH_ALLREDUCE;
        b->name = g_strdup_printf("allreduce/%s/%s/r%d/n%d/%" G_GINT64_FORMAT, algorithm, protocol, ranks, nodes,
                                  bytes);
        b->algorithm = g_strdup(algorithm);
        b->protocol = g_strdup(protocol);
        b->ranks = ranks;
        b->local_devices = local;
        b->bytes = bytes;
        g_ptr_array_add(plan, b);
        if (bytes > G_MAXINT64 / o->step_factor)
          break;
      }
    }
  }
  if (n_ranks == 1)
    g_ptr_array_add(notes, g_strdup("1 GPU: AllReduce measures NCCL's launch latency only; multi-GPU points are absent"));
}

static void
plan_copies(GPtrArray *plan)
{
  for (gint64 bytes = (gint64)64 << 10; bytes <= (gint64)1 << 30; bytes *= 4) {
    g_autofree char *name = g_strdup_printf("copy/%" G_GINT64_FORMAT, bytes);
    DdpCalBatch *b = kernel_batch(name, "copy", "", "device-to-device copy", 0, "any");
    DdpCalCase c = { .probe = DDP_CAL_PROBE_COPY, .op = DDP_CAL_OP_COPY, .precision = DDP_PRECISION_FP32,
                     .copy_bytes = bytes };
    add_case(b, c);
    g_ptr_array_add(plan, b);
  }
}

static gboolean
plan_kernels(const DdpCalOptions *o, GPtrArray *plan, GPtrArray *notes, GError **error)
{
  g_autoptr(DdpModel) model = NULL;
  if (o->model) {
    model = ddp_model_load(o->model, error);
  } else {
    g_autofree char *text = default_model_text();
    g_autoptr(DdpKeyFile) kf = ddp_keyfile_load_data("built-in layer set", text, error);
    if (kf)
      model = ddp_model_from_keyfile(kf, error);
  }
  if (!model)
    return FALSE;
  g_autoptr(GArray) batches = g_array_new(FALSE, FALSE, sizeof(double));
  parse_positive_list("--batch", o->batches, batches, FALSE, NULL);
  g_auto(GStrv) precisions = split_list(o->precisions);
  g_autoptr(GHashTable) seen = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
  g_autoptr(GHashTable) explained = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
  for (guint pi = 0; precisions[pi]; pi++) {
    DdpPrecision p = ddp_precision_parse(precisions[pi]);
    for (guint bi = 0; bi < batches->len; bi++) {
      double batch = g_array_index(batches, double, bi);
      char batch_text[G_ASCII_DTOSTR_BUF_SIZE];
      g_ascii_formatd(batch_text, sizeof batch_text, "%g", batch);
      for (guint li = 0; li < model->n_layers; li++) {
        const DdpLayer *l = &model->layers[li];
        /* TF32 changes tensor-core math only: memory-bound kinds are read at fp32 (fit.c) */
        if (p == DDP_PRECISION_TF32 && is_memory_kind(l->kind))
          continue;
        g_autofree char *sig = ddp_fit_layer_signature(model, li);
        g_autofree char *name = g_strdup_printf("kernel/%s/b%s/%s", ddp_precision_name(p), batch_text, sig);
        if (g_hash_table_contains(seen, name))
          continue; /* the same shape again (24 transformer blocks): measured once */
        DdpCalBatch *b = kernel_batch(name, ddp_layer_kind_name(l->kind), sig, l->name, batch, ddp_precision_name(p));
        const char *why = NULL;
        if (!layer_cases(model, li, batch, p, b, &why)) {
          ddp_cal_batch_free(b);
          if (!g_hash_table_contains(explained, l->name)) {
            g_ptr_array_add(notes, g_strdup_printf("layer %s (%s): not measured: %s", l->name,
                                                   ddp_layer_kind_name(l->kind), why));
            g_hash_table_add(explained, g_strdup(l->name));
          }
          continue;
        }
        g_hash_table_add(seen, g_steal_pointer(&name));
        g_ptr_array_add(plan, b);
      }
      if (o->model)
        continue;
      /* the built-in set also measures attention softmax, for the "other" kind */
      if (p == DDP_PRECISION_TF32)
        continue;
      for (gsize si = 0; si < G_N_ELEMENTS(default_softmax); si++) {
        g_autofree char *sig = g_strdup_printf("other:softmax:%" G_GINT64_FORMAT "x%" G_GINT64_FORMAT,
                                               default_softmax[si].rows_per_sample, default_softmax[si].cols);
        g_autofree char *name = g_strdup_printf("kernel/%s/b%s/%s", ddp_precision_name(p), batch_text, sig);
        DdpCalBatch *b = kernel_batch(name, "other", sig, default_softmax[si].name, batch, ddp_precision_name(p));
        DdpCalCase c = { .probe = DDP_CAL_PROBE_SOFTMAX, .precision = p, .cols = default_softmax[si].cols,
                         .rows = at_least_one(batch * (double)default_softmax[si].rows_per_sample) };
        c.op = DDP_CAL_OP_FWD;
        add_case(b, c);
        c.op = DDP_CAL_OP_BWD;
        add_case(b, c);
        g_ptr_array_add(plan, b);
      }
    }
  }
  return TRUE;
}

/**
 * ddp_cal_plan:
 * See calibrate.h.  Single process: AllReduce at each of --gpu-counts (default 2, 4, 8, … and
 * @local_devices) over devices 0…n−1.  Under MPI (@n_ranks > @local_devices): at @n_ranks only.
 */
GPtrArray *
ddp_cal_plan(const DdpCalOptions *o, int local_devices, int n_ranks, int nodes, GPtrArray *notes, GError **error)
{
  if (!ddp_cal_options_validate(o, error))
    return NULL;
  g_autoptr(GPtrArray) plan = g_ptr_array_new_with_free_func((GDestroyNotify)ddp_cal_batch_free);
  g_autoptr(GArray) counts = g_array_new(FALSE, FALSE, sizeof(double));
  if (n_ranks > local_devices) {
    double all = n_ranks;
    g_array_append_val(counts, all);
  } else if (o->gpu_counts) {
    parse_positive_list("--gpu-counts", o->gpu_counts, counts, TRUE, NULL);
    for (guint i = 0; i < counts->len; i++)
      if (g_array_index(counts, double, i) > local_devices) {
        input_error(error, "--gpu-counts: %g GPUs asked, %d in use", g_array_index(counts, double, i), local_devices);
        return NULL;
      }
  } else {
    for (int n = 2; n < local_devices; n *= 2) {
      double v = n;
      g_array_append_val(counts, v);
    }
    double all = local_devices;
    g_array_append_val(counts, all);
  }
  if (!skipped(o, "allreduce"))
    plan_allreduce(o, local_devices, n_ranks, nodes, plan, notes, counts);
  if (!skipped(o, "copy"))
    plan_copies(plan);
  if (!skipped(o, "kernels") && !plan_kernels(o, plan, notes, error))
    return NULL;
  return g_steal_pointer(&plan);
}
