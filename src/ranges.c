/* ranges — ranges of every numeric input and bounds on input sizes (see ranges.h, docs/limits.md).
 *
 * Design note: each range is one constant with the reason for both ends.  The upper ends are
 * chosen two ways at once: wide enough for any machine or model that exists or is announced, and
 * small enough that the products the simulator forms (FLOPs × batch / peak, bytes / bandwidth,
 * iteration time × iterations) stay far inside a double's exact range and the gint64 clock.  The
 * one product that ranges alone cannot keep small — a whole run's simulated time — is checked in
 * ddp.c against DDP_TIME_MAX_NS in the worst case before the run starts.
 */
/* O_CLOEXEC, O_NOCTTY under -std=c11 */
#define _POSIX_C_SOURCE 200809L

#include "ranges.h"

#include "fileio.h"

#include <errno.h>
#include <math.h>
#include <string.h>

G_DEFINE_QUARK(ddp-range-error-quark, ddp_range_error)

/* 2^24 GPUs: 16.7 M, a hundred times the largest announced cluster (~200 k GPUs).  Per-rank state
 * is ~100 bytes, so stragglers on 2^24 ranks need ~1.7 GB at most; 2(n-1) stays inside int. */
const DdpRange DDP_RANGE_GPUS = { 1, 16777216.0, TRUE, FALSE, FALSE };
/* NVL576 racks are the largest announced NVLink domain; 1024 leaves room. */
const DdpRange DDP_RANGE_GPUS_PER_NODE = { 1, 1024, TRUE, FALSE, FALSE };
/* An NVLink domain: NVL72 is 72 GPUs, NVL576 the largest announced; whole nodes (cluster.c). */
const DdpRange DDP_RANGE_DOMAIN_GPUS = { 1, 1024, TRUE, FALSE, FALSE };
/* Nodes under one leaf switch: a 64-port leaf serves 32 nodes non-blocking; 2^16 leaves room. */
const DdpRange DDP_RANGE_NODES_PER_LEAF = { 1, 65536, TRUE, FALSE, FALSE };
const DdpRange DDP_RANGE_NODES = { 0, 16777216.0, TRUE, FALSE, FALSE };
const DdpRange DDP_RANGE_NICS = { 1, 1024, TRUE, FALSE, FALSE };
/* Samples per GPU per micro-step: whole samples (a fraction of a sample is not a batch);
 * 2^24 is far beyond any GPU memory for any model. */
const DdpRange DDP_RANGE_BATCH = { 1, 16777216.0, TRUE, FALSE, FALSE };
const DdpRange DDP_RANGE_GLOBAL_BATCH = { 1, 1099511627776.0, TRUE, FALSE, FALSE };
const DdpRange DDP_RANGE_ACCUMULATE = { 1, 1048576.0, TRUE, FALSE, FALSE };
const DdpRange DDP_RANGE_WRAP_BLOCKS = { 1, 65536.0, TRUE, FALSE, FALSE };
/* 10^6 steady iterations already take seconds to simulate; more adds nothing to a mean. */
const DdpRange DDP_RANGE_ITERATIONS = { 1, 1e6, TRUE, FALSE, FALSE };
const DdpRange DDP_RANGE_STRAGGLER_EVERY = { 1, 1e9, TRUE, FALSE, FALSE };
/* SMs per GPU: an H100 has 132, a B200 148; 1024 leaves room for any announced part. */
const DdpRange DDP_RANGE_SMS = { 1, 1024, TRUE, FALSE, FALSE };
/* NCCL's MAXCHANNELS is 64 (collective.c MAX_CHANNELS); 0 derives the count from the topology. */
const DdpRange DDP_RANGE_CHANNELS = { 0, 64, TRUE, FALSE, FALSE };
/* nn.Conv2d groups: at most the input channels; 2^31 − 1 keeps the count inside a C int. */
const DdpRange DDP_RANGE_GROUPS = { 1, 2147483647.0, TRUE, FALSE, FALSE };
/* nccl-tests -g: one process drives GPUs of its own node, so at most DDP_RANGE_GPUS_PER_NODE's 1024. */
const DdpRange DDP_RANGE_GPUS_PER_PROCESS = { 1, 1024, TRUE, FALSE, FALSE };
/* Caps on tune's log grid: each is a full simulation; 10^4 already resolves 1e-6 .. 1e9 MiB to 0.3 %. */
const DdpRange DDP_RANGE_TUNE_POINTS = { 1, 10000, TRUE, FALSE, FALSE };
/* The K slowest and K fastest ranks drawn beside rank 0: 33 lanes is the most a chart keeps legible,
 * and the lane choice makes K passes over the ranks (cmd-timeline.c). */
const DdpRange DDP_RANGE_TIMELINE_RANKS = { 1, 16, TRUE, FALSE, FALSE };
/* Sweep threads on one machine: 0 takes one per core; 1024 is more cores than any host has. */
const DdpRange DDP_RANGE_JOBS = { 0, 1024, TRUE, FALSE, FALSE };
/* Bytes moved per sample by one layer: 10^18 is an exabyte; GPT-3's largest layer moves ~10^9. */
const DdpRange DDP_RANGE_BYTES = { 0, 1e18, FALSE, FALSE, FALSE };
/* One parameter or the buffers: 2^50 bytes (1 PiB) is 12× a 10 T-parameter fp64 model; the
 * model's total is capped at the same DDP_MAX_MODEL_BYTES, so sums of sizes stay inside gint64. */
const DdpRange DDP_RANGE_TENSOR_BYTES = { 0, 1125899906842624.0, TRUE, FALSE, FALSE };
const DdpRange DDP_RANGE_SWEEP_BYTES = { 1, 1125899906842624.0, TRUE, FALSE, FALSE };
const DdpRange DDP_RANGE_STEP_FACTOR = { 2, 1048576.0, TRUE, FALSE, FALSE };
/* ddpsim-calibrate: local GPUs to use (0: all; a node has at most DDP_RANGE_GPUS_PER_NODE's 1024),
 * launches per measurement (warm-up or timed; 0: adaptive for --iters), and the adaptive target. */
const DdpRange DDP_RANGE_CAL_DEVICES = { 0, 1024, TRUE, FALSE, FALSE };
const DdpRange DDP_RANGE_CAL_LAUNCHES = { 0, 1e6, TRUE, FALSE, FALSE };
const DdpRange DDP_RANGE_CAL_TARGET_MS = { 0.001, 1e6, FALSE, FALSE, FALSE };
/* 1e-6 MiB is one byte; 1e9 MiB (1 PiB) is more than any model's gradients. */
const DdpRange DDP_RANGE_BUCKET_CAP_MB = { 1e-6, 1e9, FALSE, FALSE, FALSE };
/* Tokens per sample: 2^24 (16 M) is beyond any announced context window; costs scale at most
 * quadratically in it (model.c), and 2^48 stays inside a double's exact range. */
const DdpRange DDP_RANGE_SEQ_LEN = { 1, 16777216.0, TRUE, FALSE, FALSE };
/* Image side in pixels: 65 536 is a 4-gigapixel image, far beyond any vision model's input. */
const DdpRange DDP_RANGE_IMAGE_SIZE = { 1, 65536.0, TRUE, FALSE, FALSE };
/* 0.01 Gb/s (a 10 Mb/s link, the slowest anyone would model) to 10^5 GB/s (50× NVLink 5). */
const DdpRange DDP_RANGE_BANDWIDTH_GBS = { 1.25e-3, 1e5, FALSE, FALSE, FALSE };
const DdpRange DDP_RANGE_BANDWIDTH_GBPS = { 0.01, 8e5, FALSE, FALSE, FALSE };
/* 1 GFLOP/s (an old CPU) to 10^6 TFLOP/s (200× a B200 at fp16 dense). */
const DdpRange DDP_RANGE_TFLOPS = { 1e-3, 1e6, FALSE, FALSE, FALSE };
/* FLOPs per sample of one layer: GPT-3's whole forward pass is ~3.5·10^11 per token. */
const DdpRange DDP_RANGE_FLOPS = { 0, 1e18, FALSE, FALSE, FALSE };
const DdpRange DDP_RANGE_MEMORY_GB = { 1e-3, 1e6, FALSE, FALSE, FALSE };
/* NCCL's per-channel bwIntra/bwInter: its fastest speed tables stop below 100 GB/s per channel;
 * 10^4 leaves room.  0 derives them from the topology; other values also need
 * DDP_RANGE_BANDWIDTH_GBS's minimum (cluster.c). */
const DdpRange DDP_RANGE_NCCL_BW_GBS = { 0, 1e4, FALSE, FALSE, FALSE };
/* Data-loader samples per second per node: 10^12 is unlimited in practice; 0 means no cap. */
const DdpRange DDP_RANGE_INPUT_RATE = { 0, 1e12, FALSE, FALSE, FALSE };
/* Link latencies: one second is already no network anyone trains on. */
const DdpRange DDP_RANGE_LATENCY_US = { 0, 1e6, FALSE, FALSE, FALSE };
/* A measured layer time: 1000 s per layer and micro-step. */
const DdpRange DDP_RANGE_LAYER_US = { 0, 1e9, FALSE, FALSE, FALSE };
/* A measured step: 1 ns to 11.6 days. */
const DdpRange DDP_RANGE_STEP_MS = { 1e-6, 1e9, FALSE, FALSE, FALSE };
const DdpRange DDP_RANGE_HICCUP_MS = { 0, 1e9, FALSE, FALSE, FALSE };
/* Host time to issue one collective on one GPU: the measured floor is ~4 µs; 10 ms is no host. */
const DdpRange DDP_RANGE_HOST_LAUNCH_US = { 0, 1e4, FALSE, FALSE, FALSE };
/* Host time per iteration (optimizer bookkeeping, data hand-off): ~100 µs; 10 s is no training loop. */
const DdpRange DDP_RANGE_HOST_ITERATION_US = { 0, 1e7, FALSE, FALSE, FALSE };
/* Host dispatch per layer pass: ~10 µs in eager PyTorch; one second per layer is no framework. */
const DdpRange DDP_RANGE_HOST_LAYER_US = { 0, 1e6, FALSE, FALSE, FALSE };
/* find_unused_parameters' graph search per iteration: as long as a measured layer may take (1000 s). */
const DdpRange DDP_RANGE_UNUSED_SEARCH_US = { 0, 1e9, FALSE, FALSE, FALSE };
/* Straggler SIGMA: measured step-time jitter is a few percent.  normal:10 is already noise ten
 * times the step (and floored at 0.1); lognormal:2 puts the 99th percentile at 100× the median.
 * The worst draw (|z| ≤ 8.6 from 53-bit uniforms) then stays at a factor ≤ 87 or ≤ e^17. */
const DdpRange DDP_RANGE_SIGMA_NORMAL = { 0, 10, FALSE, FALSE, FALSE };
const DdpRange DDP_RANGE_SIGMA_LOGNORMAL = { 0, 2, FALSE, FALSE, FALSE };
const DdpRange DDP_RANGE_SLOW_FACTOR = { 1e-3, 1e3, FALSE, FALSE, FALSE };
const DdpRange DDP_RANGE_EFFICIENCY = { 1e-4, 1, FALSE, FALSE, FALSE };
/* Share of a link's bandwidth NCCL's transport reaches: 0.1 % is already a broken link. */
const DdpRange DDP_RANGE_TRANSPORT_EFFICIENCY = { 1e-3, 1, FALSE, FALSE, FALSE };
/* Compute slowdown while NCCL kernels run: measured at a few percent; 10 is compute 11× slower. */
const DdpRange DDP_RANGE_OVERLAP_SLOWDOWN = { 0, 10, FALSE, FALSE, FALSE };
/* A k:1 oversubscribed network: 1 is non-blocking; 10^6:1 is no fabric anyone trains on. */
const DdpRange DDP_RANGE_OVERSUBSCRIPTION = { 1, 1e6, FALSE, FALSE, FALSE };
/* σ of the persistent rank-to-rank speed factor: measured at ~2 %; at 0.5 the slowest of 2^24
 * ranks is already ~3.7× the median (factors are floored at 0.1, straggler.c). */
const DdpRange DDP_RANGE_JITTER = { 0, 0.5, FALSE, FALSE, FALSE };
/* A scaling efficiency to reach: 1 is perfect scaling; any positive target is a question. */
const DdpRange DDP_RANGE_TARGET_EFFICIENCY = { 0, 1, FALSE, TRUE, FALSE };
/* The least gain over PyTorch's defaults worth a recommendation: 0 takes any gain; no gain reaches 1
 * (the best time would be 0), so 1 never recommends. */
const DdpRange DDP_RANGE_MIN_GAIN = { 0, 1, FALSE, FALSE, FALSE };
/* Relative width of solve's final bisection bracket: at least 10^-9 (a double resolves 2.2 × 10^-16;
 * no bandwidth is known to a billionth), below 1 so that it narrows at all. */
const DdpRange DDP_RANGE_TOLERANCE = { 1e-9, 1, FALSE, FALSE, TRUE };
/* Price of one GPU-hour, in whatever currency the user prices in: above 0 (a free GPU has no cost
 * question); 10^6 per GPU-hour is no rental anyone pays.  Times 2^24 GPUs and 10^6 hours stays far
 * inside a double. */
const DdpRange DDP_RANGE_PRICE_PER_GPU_HOUR = { 0, 1e6, FALSE, TRUE, FALSE };
/* Training length: at least one sample (or token); 10^18 samples and 10^21 tokens are far beyond
 * any training run (today's largest are ~10^13 tokens). */
const DdpRange DDP_RANGE_TRAIN_SAMPLES = { 1, 1e18, FALSE, FALSE, FALSE };
const DdpRange DDP_RANGE_TRAIN_TOKENS = { 1, 1e21, FALSE, FALSE, FALSE };
/* solve --deadline-hours: above 0; 10^6 hours is 114 years. */
const DdpRange DDP_RANGE_DEADLINE_HOURS = { 0, 1e6, FALSE, TRUE, FALSE };
/* solve --budget, in the price's currency: above 0, at most 10^15. */
const DdpRange DDP_RANGE_BUDGET = { 0, 1e15, FALSE, TRUE, FALSE };
/* CUDA compute capability × 10: 60 is Pascal, the first NVLink GPU; 200 leaves room past
 * Blackwell's 100–120. */
const DdpRange DDP_RANGE_SM_ARCH = { 60, 200, TRUE, FALSE, FALSE };
/* Imported measurements (ddpsim fit --import, issue 20). */
/* nccl-tests -t: threads per process, each driving -g GPUs of one node: at most 1024 like -g. */
const DdpRange DDP_RANGE_THREADS_PER_PROCESS = { 1, 1024, TRUE, FALSE, FALSE };
/* A bandwidth nccl-tests printed (algbw, busbw): 0.00 at the smallest sizes, up to the fastest link. */
const DdpRange DDP_RANGE_MEASURED_GBS = { 0, 1e5, FALSE, FALSE, FALSE };
/* A measured AllReduce time: above 0 (nothing takes no time), at most a layer's 1000 s. */
const DdpRange DDP_RANGE_MEASURED_US = { 0, 1e9, FALSE, TRUE, FALSE };
/* A trace timestamp in µs: Kineto writes µs since the epoch (~1.7·10^15 in 2024) or since the
 * profiler started; ±2^53 keeps every sum of a timestamp and a duration exact and finite. */
const DdpRange DDP_RANGE_TRACE_TS_US = { -9007199254740992.0, 9007199254740992.0, FALSE, FALSE, FALSE };
/* A trace span: 0 to 10^12 µs (11.6 days); negative durations are refused, not read as 0. */
const DdpRange DDP_RANGE_TRACE_DUR_US = { 0, 1e12, FALSE, FALSE, FALSE };
/* Kineto's correlation ids count CUDA API calls from 0; 2^53 is the largest a JSON double holds
 * exactly, and keeps the conversion to gint64 defined. */
const DdpRange DDP_RANGE_CORRELATION = { 0, 9007199254740992.0, TRUE, FALSE, FALSE };
/* deviceProperties computeMajor / computeMinor: each one digit or two (Blackwell is 10.0, 12.0). */
const DdpRange DDP_RANGE_COMPUTE_VERSION = { 0, 99, TRUE, FALSE, FALSE };
/* cuda_runtime_version as CUDA encodes it (major·1000 + minor·10): 12040 is 12.4; 10^6 is CUDA 1000. */
const DdpRange DDP_RANGE_CUDA_VERSION = { 1, 1e6, TRUE, FALSE, FALSE };
/* deviceProperties totalGlobalMem in bytes: up to DDP_RANGE_MEMORY_GB's 10^6 GB. */
const DdpRange DDP_RANGE_GPU_MEMORY_BYTES = { 0, 1e15, TRUE, FALSE, FALSE };

gboolean
ddp_range_contains(const DdpRange *r, double v)
{
  return isfinite(v) && (r->min_open ? v > r->min : v >= r->min) && (r->max_open ? v < r->max : v <= r->max) &&
         (!r->integer || v == floor(v));
}

char *
ddp_range_describe(const DdpRange *r)
{
  char lo[G_ASCII_DTOSTR_BUF_SIZE], hi[G_ASCII_DTOSTR_BUF_SIZE];
  g_ascii_formatd(lo, sizeof lo, r->integer ? "%.0f" : "%g", r->min);
  g_ascii_formatd(hi, sizeof hi, r->integer ? "%.0f" : "%g", r->max);
  const char *kind = r->integer ? "a whole number" : "a number";
  if (!r->min_open && !r->max_open)
    return g_strdup_printf("%s from %s to %s", kind, lo, hi);
  return g_strdup_printf("%s %s %s and %s %s", kind, r->min_open ? "above" : "at least", lo,
                         r->max_open ? "below" : "at most", hi);
}

gboolean
ddp_parse_integer(const char *text, gint64 *out)
{
  const char *s = text;
  while (g_ascii_isspace(*s))
    s++;
  if (*s == '\0')
    return FALSE;
  char *end = NULL;
  errno = 0;
  gint64 v = g_ascii_strtoll(s, &end, 10);
  while (end && g_ascii_isspace(*end))
    end++;
  if (end == s || *end != '\0' || errno)
    return FALSE;
  *out = v;
  return TRUE;
}

gboolean
ddp_parse_number(const char *text, double *out)
{
  const char *s = text;
  while (g_ascii_isspace(*s))
    s++;
  /* decimal only: g_ascii_strtod would also read hexadecimal, "inf" and "nan" */
  gsize length = strspn(s, "0123456789+-.eE");
  if (length == 0 || (s[length] != '\0' && !g_ascii_isspace(s[length])))
    return FALSE;
  char *end = NULL;
  errno = 0;
  double v = g_ascii_strtod(s, &end);
  while (end && g_ascii_isspace(*end))
    end++;
  /* ERANGE on underflow too: 1e-400 is no number a user means */
  if (end == s || *end != '\0' || errno || !isfinite(v))
    return FALSE;
  *out = v;
  return TRUE;
}

static char *unit_hint(const char *text, const DdpRange *r);

/* "WHERE: "TEXT" must be a number from MIN to MAX[HINT]" */
static gboolean
range_error(const char *where, const char *text, const DdpRange *r, const char *hint, GError **error)
{
  g_autofree char *range = ddp_range_describe(r);
  g_autofree char *quoted = ddp_range_quote(text);
  g_set_error(error, DDP_RANGE_ERROR, DDP_RANGE_ERROR_RANGE, "%s: \"%s\" must be %s%s", where, quoted, range, hint);
  return FALSE;
}

/**
 * ddp_range_check_number:
 * @where: what the value is, for the message: "-g", "--flag", "FILE:LINE: group.key"
 * @text: (nullable): the value's text; NULL (not given) leaves *out alone and returns TRUE
 *
 * Returns: FALSE with DDP_RANGE_ERROR_RANGE ("WHERE: "text" must be …") when @text is not a
 *   number inside @r (a whole number when @r is an integer range: "1e3" is one).
 */
gboolean
ddp_range_check_number(const char *where, const char *text, const DdpRange *r, double *out, GError **error)
{
  if (!text)
    return TRUE;
  double v;
  if (!ddp_parse_number(text, &v) || !ddp_range_contains(r, v)) {
    g_autofree char *hint = unit_hint(text, r);
    return range_error(where, text, r, hint, error);
  }
  *out = v;
  return TRUE;
}

/* " (did you mean 25? the number alone: the unit is the one the key or flag names)" when @text
 * is a number in range followed by a unit ("25MB", "100 Gbps", "2h"); else "". */
static char *
unit_hint(const char *text, const DdpRange *r)
{
  const char *unit = text;
  while (*unit && (g_ascii_isdigit(*unit) || *unit == '.' || *unit == '-' || *unit == '+' || *unit == 'e'))
    unit++;
  g_autofree char *number = g_strndup(text, (gsize)(unit - text));
  while (*unit == ' ')
    unit++;
  double v;
  gboolean letters = *unit != '\0';
  for (const char *c = unit; *c; c++)
    letters &= g_ascii_isalpha(*c) || *c == '/';
  if (!letters || !ddp_parse_number(number, &v) || !ddp_range_contains(r, v))
    return g_strdup("");
  return g_strdup_printf(" (did you mean %s? the number alone: the unit is the one the key or flag names)", number);
}

/* As ddp_range_check_number for a whole-number range, written as an integer ("1e3", "8.0" are
 * refused), into a guint64 (no sign wrap: "-8" is refused). */
gboolean
ddp_range_check_count(const char *where, const char *text, const DdpRange *r, guint64 *out, GError **error)
{
  if (!text)
    return TRUE;
  gint64 v;
  if (!ddp_parse_integer(text, &v) || !ddp_range_contains(r, (double)v))
    return range_error(where, text, r, "", error);
  *out = (guint64)v;
  return TRUE;
}

/* nccl-tests' parsesize: a number, then K, M or G for 2^10, 2^20, 2^30 ("1.5K" is 1536). */
gboolean
ddp_range_check_size(const char *where, const char *text, const DdpRange *r, guint64 *out, GError **error)
{
  if (!text)
    return TRUE;
  gsize length = strlen(text);
  double unit = 1;
  switch (length ? g_ascii_toupper(text[length - 1]) : '\0') {
  case 'K': unit = 1024.0; break;
  case 'M': unit = 1024.0 * 1024.0; break;
  case 'G': unit = 1024.0 * 1024.0 * 1024.0; break;
  default: break;
  }
  g_autofree char *number = g_strndup(text, unit > 1 ? length - 1 : length);
  double v;
  if (!ddp_parse_number(number, &v) || !ddp_range_contains(r, v * unit))
    return range_error(where, text, r, " (suffixes K, M, G)", error);
  *out = (guint64)(v * unit);
  return TRUE;
}

/* A seed: a decimal integer from 0 to 2^64 − 1 (no sign, no spaces). */
gboolean
ddp_range_check_seed(const char *where, const char *text, guint64 *out, GError **error)
{
  if (!text)
    return TRUE;
  if (!g_ascii_string_to_unsigned(text, 10, 0, G_MAXUINT64, out, NULL)) {
    g_autofree char *quoted = ddp_range_quote(text);
    g_set_error(error, DDP_RANGE_ERROR, DDP_RANGE_ERROR_RANGE, "%s: \"%s\" must be a whole number from 0 to %" G_GUINT64_FORMAT,
                where, quoted, G_MAXUINT64);
    return FALSE;
  }
  return TRUE;
}

gboolean
ddp_flag_number(const char *flag, const char *text, const DdpRange *r, double *out, GError **error)
{
  g_autofree char *where = g_strconcat("--", flag, NULL);
  return ddp_range_check_number(where, text, r, out, error);
}

gboolean
ddp_flag_count(const char *flag, const char *text, const DdpRange *r, guint64 *out, GError **error)
{
  g_autofree char *where = g_strconcat("--", flag, NULL);
  return ddp_range_check_count(where, text, r, out, error);
}

/* "0.9" or "90%" (a percentage of 1). */
gboolean
ddp_flag_fraction(const char *flag, const char *text, const DdpRange *r, double *out, GError **error)
{
  if (!text)
    return TRUE;
  gsize length = strlen(text);
  gboolean percent = length > 0 && text[length - 1] == '%';
  g_autofree char *number = g_strndup(text, percent ? length - 1 : length);
  double v;
  if (!ddp_parse_number(number, &v) || !ddp_range_contains(r, percent ? v / 100 : v)) {
    g_autofree char *where = g_strconcat("--", flag, NULL);
    return range_error(where, text, r, " (or a percentage: 90% for 0.9)", error);
  }
  *out = percent ? v / 100 : v;
  return TRUE;
}

/**
 * ddp_range_read_file:
 * @path: the file
 * @text: (out) (transfer full): its contents, NUL-terminated
 * @length: (out) (optional): its length in bytes
 *
 * ddp_file_read(DDP_FILE_TEXT) (fileio.h: a regular file under DDP_MAX_INPUT_BYTES, no NUL byte)
 * with its error in this module's domain, for the key-file and CSV readers.
 * Returns: FALSE with DDP_RANGE_ERROR_FILE, naming @path (and the line of a NUL byte).
 */
gboolean
ddp_range_read_file(const char *path, char **text, gsize *length, GError **error)
{
  g_autoptr(GError) local = NULL;
  if (ddp_file_read(path, DDP_FILE_TEXT, text, length, &local))
    return TRUE;
  g_set_error_literal(error, DDP_RANGE_ERROR, DDP_RANGE_ERROR_FILE, local->message);
  return FALSE;
}

/**
 * ddp_range_quote:
 * Returns: (transfer full): @text made safe to echo in a one-line message: control characters
 *   and DEL as C escapes, invalid UTF-8 bytes as \xHH, cut after 80 characters with "…".
 */
char *
ddp_range_quote(const char *text)
{
  return ddp_range_quote_n(text, 80);
}

/* As ddp_range_quote, cut after @max_chars characters. */
char *
ddp_range_quote_n(const char *text, guint max_chars)
{
  GString *out = g_string_new(NULL);
  guint chars = 0;
  const char *p = text ? text : "";
  while (*p) {
    if (chars == max_chars) {
      g_string_append(out, "…");
      break;
    }
    gunichar c = g_utf8_get_char_validated(p, -1);
    if (c == (gunichar)-1 || c == (gunichar)-2) {
      g_string_append_printf(out, "\\x%02x", (guchar)*p);
      p++;
    } else if (c < 0x20 || c == 0x7f) {
      switch (c) {
      case '\n': g_string_append(out, "\\n"); break;
      case '\t': g_string_append(out, "\\t"); break;
      case '\r': g_string_append(out, "\\r"); break;
      default: g_string_append_printf(out, "\\x%02x", (guint)c); break;
      }
      p++;
    } else {
      const char *next = g_utf8_next_char(p);
      g_string_append_len(out, p, next - p);
      p = next;
    }
    chars++;
  }
  return g_string_free(out, FALSE);
}

/**
 * ddp_gpu_list_parse:
 * Parses "8,16,32" or "8,16,...,1024" ("…" too: progression continued to the bound, doubling when
 * B = 2A).  Counts are 1 to DDP_MAX_GPUS and increase; the list is counted before it is expanded
 * and holds at most DDP_MAX_SWEEP_POINTS counts.  Returns: (transfer full) a GArray of guint64, or
 * NULL with DDP_RANGE_ERROR_RANGE and a one-line error naming --gpus.
 */
GArray *
ddp_gpu_list_parse(const char *text, GError **error)
{
  g_autoptr(GArray) list = g_array_new(FALSE, FALSE, sizeof(guint64));
  g_auto(GStrv) items = g_strsplit(text, ",", -1);
  guint n = g_strv_length(items);
  for (guint i = 0; i < n; i++) {
    const char *item = g_strstrip(items[i]);
    if (g_strcmp0(item, "...") == 0 || g_strcmp0(item, "…") == 0) {
      if (list->len < 2 || i + 1 >= n) {
        g_set_error(error, DDP_RANGE_ERROR, DDP_RANGE_ERROR_RANGE, "--gpus: \"...\" needs two counts before it and one after it (e.g. 8,16,...,1024)");
        return NULL;
      }
      guint64 a = g_array_index(list, guint64, list->len - 2), b = g_array_index(list, guint64, list->len - 1), last;
      if (!g_ascii_string_to_unsigned(g_strstrip(items[i + 1]), 10, 1, DDP_MAX_GPUS, &last, NULL) || b <= a || last < b) {
        g_autofree char *quoted = ddp_range_quote(text);
        g_set_error(error, DDP_RANGE_ERROR, DDP_RANGE_ERROR_RANGE, "--gpus: \"%s\": the counts around \"...\" must increase (up to %" G_GUINT64_FORMAT ")",
                    quoted, DDP_MAX_GPUS);
        return NULL;
      }
      /* count before expanding (ranks ≤ 2^24, so no product below overflows) */
      gboolean geometric = b % a == 0;
      guint64 added = 0;
      for (guint64 next = geometric ? b * (b / a) : b + (b - a); next < last && list->len + added <= DDP_MAX_SWEEP_POINTS;
           next = geometric ? next * (b / a) : next + (b - a))
        added++;
      if (list->len + added > DDP_MAX_SWEEP_POINTS) {
        g_set_error(error, DDP_RANGE_ERROR, DDP_RANGE_ERROR_RANGE, "--gpus: the list has more than %u counts (ranges.h DDP_MAX_SWEEP_POINTS)",
                    DDP_MAX_SWEEP_POINTS);
        return NULL;
      }
      for (guint64 next = geometric ? b * (b / a) : b + (b - a); next < last; next = geometric ? next * (b / a) : next + (b - a))
        g_array_append_val(list, next);
      continue;
    }
    guint64 v;
    if (!g_ascii_string_to_unsigned(item, 10, 1, DDP_MAX_GPUS, &v, NULL)) {
      g_autofree char *quoted = ddp_range_quote(item);
      g_set_error(error, DDP_RANGE_ERROR, DDP_RANGE_ERROR_RANGE, "--gpus: \"%s\" is not a GPU count (1 to %" G_GUINT64_FORMAT ")", quoted, DDP_MAX_GPUS);
      return NULL;
    }
    if (list->len >= DDP_MAX_SWEEP_POINTS) {
      g_set_error(error, DDP_RANGE_ERROR, DDP_RANGE_ERROR_RANGE, "--gpus: the list has more than %u counts (ranges.h DDP_MAX_SWEEP_POINTS)",
                  DDP_MAX_SWEEP_POINTS);
      return NULL;
    }
    if (list->len > 0 && v <= g_array_index(list, guint64, list->len - 1)) {
      g_set_error(error, DDP_RANGE_ERROR, DDP_RANGE_ERROR_RANGE, "--gpus: counts must increase (%" G_GUINT64_FORMAT " after %" G_GUINT64_FORMAT ")",
                  v, g_array_index(list, guint64, list->len - 1));
      return NULL;
    }
    g_array_append_val(list, v);
  }
  return g_steal_pointer(&list);
}

gint64
ddp_time_from_ns(double ns)
{
  if (isnan(ns) || ns >= (double)DDP_TIME_MAX_NS)
    return DDP_TIME_MAX_NS;
  if (ns <= -(double)DDP_TIME_MAX_NS)
    return -DDP_TIME_MAX_NS;
  return (gint64)llround(ns);
}
