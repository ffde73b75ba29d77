/* ranges — the range of every number ddpsim reads, and the resource bounds on its inputs.
 *
 * Every numeric input, from a file or from a flag, is checked once where it is parsed against one
 * DdpRange below, so the bounds live in one table (ranges.c, each with the reason for it) and the
 * user reads them in docs/limits.md.  The ranges are wide enough for any real cluster (up to 2^24
 * GPUs, 0.01 Gb/s to 10^5 GB/s links) and narrow enough that no product of them overflows: the
 * simulated clock is gint64 nanoseconds, and ddp.c checks the worst case of one run against
 * DDP_TIME_MAX_NS before simulating (see ddp_time_from_ns for the one conversion from double).
 *
 * How to check a new input (a new key, flag or verb):
 *   - a key-file value:  ddp_keyfile_get_ranged(kf, group, key, required, &DDP_RANGE_X, &out, error)
 *                        (keyfile.h; integer ranges store a whole number in the double)
 *   - a --flag value:    ddp_flag_number("flag", text, &DDP_RANGE_X, &out, error)
 *                        ddp_flag_count("flag", text, &DDP_RANGE_X, &out, error) for a guint64
 *                        ddp_flag_fraction("flag", …) where "90%" may stand for 0.9
 *   - any other value:   ddp_range_check_number(where, text, &DDP_RANGE_X, &out, error) and
 *                        ddp_range_check_count(…), @where naming it: "-g", "FILE:LINE: group.key",
 *                        a list item's flag; ddp_range_check_size for nccl-tests' K/M/G sizes;
 *                        ddp_range_check_seed for a seed (the one number without a DdpRange)
 *   - a file to read:    ddp_range_read_file(path, &text, &length, error): regular files
 *                        under DDP_MAX_INPUT_BYTES only (no FIFOs, devices, directories), through
 *                        fileio.h's ddp_file_read, which any other reader uses directly; every
 *                        file ddpsim writes goes through ddp_file_write (fileio.h)
 *   - a --gpus list:     ddp_gpu_list_parse(text, error)
 *   - a text to echo in an error message: ddp_range_quote(text) (escapes control characters,
 *                        cuts long text)
 * Errors from ddp_flag_* and ddp_range_read_file are DDP_RANGE_ERROR: bad input, exit 2.
 * Add the range to the table in ranges.c and to docs/limits.md, with its reason.
 */
#ifndef DDP_RANGE_H
#define DDP_RANGE_H

#include <glib.h>

#define DDP_RANGE_ERROR (ddp_range_error_quark())
GQuark ddp_range_error_quark(void);

typedef enum {
  DDP_RANGE_ERROR_RANGE,   /* a number that does not parse or is outside its range */
  DDP_RANGE_ERROR_FILE,    /* an input that is not a regular file, or too big */
  DDP_RANGE_ERROR_SIZE,    /* a list, sweep or simulation larger than the stated bounds */
} DdpLimitsError;

/* A range, inclusive unless @min_open / @max_open exclude that end; @integer: whole numbers only. */
typedef struct {
  double min, max;
  gboolean integer;
  gboolean min_open, max_open;
} DdpRange;

/* The simulated clock's ceiling: 2^62 ns (146 years), half of gint64 so that the sum of two
 * clock values cannot overflow either. */
#define DDP_TIME_MAX_NS ((gint64)1 << 62)

/* Resource bounds (the reasons are in ranges.c and docs/limits.md). */
#define DDP_MAX_GPUS ((guint64)1 << 24)
#define DDP_MAX_INPUT_BYTES ((gsize)64 << 20)
#define DDP_MAX_LAYERS 100000u
#define DDP_MAX_PARAMS 1000000u
#define DDP_MAX_MODEL_BYTES ((gint64)1 << 50)
#define DDP_MAX_SWEEP_POINTS 4096u
#define DDP_MAX_SWEEP_ROWS 10000u

/* Counts */
extern const DdpRange DDP_RANGE_GPUS;            /* 1 .. 2^24 */
extern const DdpRange DDP_RANGE_GPUS_PER_NODE;   /* 1 .. 1024 */
extern const DdpRange DDP_RANGE_NODES;           /* 0 (no limit) .. 2^24 */
extern const DdpRange DDP_RANGE_CAL_DEVICES;     /* 0 (all) .. 1024 GPUs ddpsim-calibrate uses */
extern const DdpRange DDP_RANGE_CAL_LAUNCHES;    /* 0 .. 10^6 warm-up or timed launches */
extern const DdpRange DDP_RANGE_CAL_TARGET_MS;   /* 0.001 .. 10^6 ms of timed work */
extern const DdpRange DDP_RANGE_DOMAIN_GPUS;     /* 1 .. 1024 GPUs in one NVLink domain */
extern const DdpRange DDP_RANGE_NODES_PER_LEAF;  /* 1 .. 65536 nodes under one leaf switch */
extern const DdpRange DDP_RANGE_NICS;            /* 1 .. 1024 */
extern const DdpRange DDP_RANGE_BATCH;           /* 1 .. 2^24 samples, whole */
extern const DdpRange DDP_RANGE_GLOBAL_BATCH;    /* 1 .. 2^40 samples, whole */
extern const DdpRange DDP_RANGE_ACCUMULATE;      /* 1 .. 2^20 */
extern const DdpRange DDP_RANGE_WRAP_BLOCKS;     /* 1 .. 2^16: FSDP blocks per unit */
extern const DdpRange DDP_RANGE_ITERATIONS;      /* 1 .. 10^6 */
extern const DdpRange DDP_RANGE_STRAGGLER_EVERY; /* 1 .. 10^9 */
extern const DdpRange DDP_RANGE_SMS;             /* 1 .. 1024 SMs per GPU */
extern const DdpRange DDP_RANGE_CHANNELS;        /* 0 (derive) .. 64 NCCL channels */
extern const DdpRange DDP_RANGE_GROUPS;          /* 1 .. 2^31-1 convolution groups */
extern const DdpRange DDP_RANGE_GPUS_PER_PROCESS; /* 1 .. 1024 (allreduce -g) */
extern const DdpRange DDP_RANGE_TUNE_POINTS;     /* 1 .. 10^4 caps (tune --points) */
extern const DdpRange DDP_RANGE_TIMELINE_RANKS;  /* 1 .. 16 (timeline --ranks) */
extern const DdpRange DDP_RANGE_JOBS;            /* 0 (one per core) .. 1024 threads (sweep --jobs) */
/* Sizes */
extern const DdpRange DDP_RANGE_BYTES;           /* 0 .. 10^18 per sample per layer */
extern const DdpRange DDP_RANGE_TENSOR_BYTES;    /* 0 .. 2^50, parameters and buffers */
extern const DdpRange DDP_RANGE_SWEEP_BYTES;     /* 1 .. 2^50, allreduce -b/-e/-i */
extern const DdpRange DDP_RANGE_STEP_FACTOR;     /* 2 .. 2^20, allreduce -f */
extern const DdpRange DDP_RANGE_BUCKET_CAP_MB;   /* 1e-6 .. 1e9 MiB */
extern const DdpRange DDP_RANGE_SEQ_LEN;         /* 1 .. 2^24 tokens, whole */
extern const DdpRange DDP_RANGE_IMAGE_SIZE;      /* 1 .. 2^16 pixels, whole */
/* Rates */
extern const DdpRange DDP_RANGE_BANDWIDTH_GBS;   /* 1.25e-3 .. 1e5 GB/s (0.01 Gb/s .. 10^5 GB/s) */
extern const DdpRange DDP_RANGE_BANDWIDTH_GBPS;  /* 0.01 .. 8e5 Gb/s */
extern const DdpRange DDP_RANGE_TFLOPS;          /* 1e-3 .. 1e6 TFLOP/s */
extern const DdpRange DDP_RANGE_FLOPS;           /* 0 .. 1e18 FLOPs per sample per layer */
extern const DdpRange DDP_RANGE_MEMORY_GB;       /* 1e-3 .. 1e6 GB */
extern const DdpRange DDP_RANGE_NCCL_BW_GBS;     /* 0 (derive) .. 1e4 GB/s per NCCL channel */
extern const DdpRange DDP_RANGE_INPUT_RATE;      /* 0 (unlimited) .. 1e12 samples/s per node */
/* Times */
extern const DdpRange DDP_RANGE_LATENCY_US;      /* 0 .. 1e6 µs */
extern const DdpRange DDP_RANGE_LAYER_US;        /* 0 .. 1e9 µs per layer (measured) */
extern const DdpRange DDP_RANGE_STEP_MS;         /* 1e-6 .. 1e9 ms */
extern const DdpRange DDP_RANGE_HICCUP_MS;       /* 0 .. 1e9 ms */
extern const DdpRange DDP_RANGE_HOST_LAUNCH_US;  /* 0 .. 1e4 µs per collective per GPU */
extern const DdpRange DDP_RANGE_HOST_ITERATION_US; /* 0 .. 1e7 µs per iteration */
extern const DdpRange DDP_RANGE_HOST_LAYER_US;   /* 0 .. 1e6 µs per layer pass */
extern const DdpRange DDP_RANGE_UNUSED_SEARCH_US; /* 0 .. 1e9 µs per iteration */
/* Factors */
extern const DdpRange DDP_RANGE_SIGMA_NORMAL;    /* 0 .. 10 (normal:SIGMA stragglers) */
extern const DdpRange DDP_RANGE_SIGMA_LOGNORMAL; /* 0 .. 2 (lognormal:SIGMA stragglers) */
extern const DdpRange DDP_RANGE_SLOW_FACTOR;     /* 1e-3 .. 1e3 */
extern const DdpRange DDP_RANGE_EFFICIENCY;      /* 1e-4 .. 1 (fitted or given fraction of peak) */
extern const DdpRange DDP_RANGE_TRANSPORT_EFFICIENCY; /* 1e-3 .. 1 (share of a link NCCL reaches) */
extern const DdpRange DDP_RANGE_OVERLAP_SLOWDOWN; /* 0 .. 10 (compute slowdown under NCCL) */
extern const DdpRange DDP_RANGE_OVERSUBSCRIPTION; /* 1 .. 1e6 (k:1 network) */
extern const DdpRange DDP_RANGE_JITTER;          /* 0 .. 0.5 (σ of rank-to-rank speed) */
extern const DdpRange DDP_RANGE_TARGET_EFFICIENCY; /* above 0 .. 1 (solve --target-efficiency) */
extern const DdpRange DDP_RANGE_MIN_GAIN;        /* 0 .. 1 (tune, solve --min-gain) */
extern const DdpRange DDP_RANGE_TOLERANCE;       /* 1e-9 .. below 1 (solve --tolerance) */
/* Cost and time to train (cost.h) */
extern const DdpRange DDP_RANGE_PRICE_PER_GPU_HOUR; /* above 0 .. 1e6 per GPU-hour */
extern const DdpRange DDP_RANGE_TRAIN_SAMPLES;   /* 1 .. 1e18 samples (--train-samples) */
extern const DdpRange DDP_RANGE_TRAIN_TOKENS;    /* 1 .. 1e21 tokens (--train-tokens) */
extern const DdpRange DDP_RANGE_DEADLINE_HOURS;  /* above 0 .. 1e6 hours (solve --deadline-hours) */
extern const DdpRange DDP_RANGE_BUDGET;          /* above 0 .. 1e15 (solve --budget) */
/* Versions */
extern const DdpRange DDP_RANGE_SM_ARCH;         /* 60 .. 200 (compute capability × 10) */
/* Imported measurements */
extern const DdpRange DDP_RANGE_THREADS_PER_PROCESS; /* 1 .. 1024 (nccl-tests nThread) */
extern const DdpRange DDP_RANGE_MEASURED_GBS;    /* 0 .. 1e5 GB/s (nccl-tests algbw, busbw) */
extern const DdpRange DDP_RANGE_MEASURED_US;     /* above 0 .. 1e9 µs (nccl-tests times) */
extern const DdpRange DDP_RANGE_TRACE_TS_US;     /* ±2^53 µs (trace timestamps) */
extern const DdpRange DDP_RANGE_TRACE_DUR_US;    /* 0 .. 1e12 µs (trace durations) */
extern const DdpRange DDP_RANGE_CORRELATION;     /* 0 .. 2^53, whole (trace correlation ids) */
extern const DdpRange DDP_RANGE_COMPUTE_VERSION; /* 0 .. 99, whole (computeMajor, computeMinor) */
extern const DdpRange DDP_RANGE_CUDA_VERSION;    /* 1 .. 1e6, whole (cuda_runtime_version) */
extern const DdpRange DDP_RANGE_GPU_MEMORY_BYTES; /* 0 .. 1e15, whole (totalGlobalMem) */
/* Imports: at most this many result rows in an nccl-tests file (a full -b 8 -e 8G -f 2 sweep has
 * 31), and this many events in a trace (a ResNet-50 step has ~10^4), counted before any work. */
#define DDP_MAX_IMPORT_ROWS 10000u
#define DDP_MAX_TRACE_EVENTS 1000000u
/* JSON nesting a trace may have (Kineto's is 4 deep), and the values it may hold (a 64 MiB Kineto
 * trace has ~4·10^6; json-glib keeps ~100 bytes a value): both checked before parsing. */
#define DDP_MAX_JSON_DEPTH 64u
#define DDP_MAX_JSON_VALUES 8000000u

/* TRUE when @v is inside @r (and whole when @r is an integer range). */
gboolean ddp_range_contains(const DdpRange *r, double v);
/* "a whole number from 1 to 16777216", "a number above 0 and at most 1": for messages; free with g_free(). */
char *ddp_range_describe(const DdpRange *r);

/* @text (NULL: not given, *out untouched, TRUE) as a number or whole number inside @r; else FALSE
 * with DDP_RANGE_ERROR_RANGE and the one message every range check gives:
 * "WHERE: "TEXT" must be a number from MIN to MAX". */
gboolean ddp_range_check_number(const char *where, const char *text, const DdpRange *r, double *out, GError **error);
gboolean ddp_range_check_count(const char *where, const char *text, const DdpRange *r, guint64 *out, GError **error);
/* A byte count as nccl-tests writes it: a number with an optional K, M or G (2^10, 2^20, 2^30). */
gboolean ddp_range_check_size(const char *where, const char *text, const DdpRange *r, guint64 *out, GError **error);
/* A seed: any guint64.  No DdpRange holds 2^64 − 1 (a double cannot), so it is checked here. */
gboolean ddp_range_check_seed(const char *where, const char *text, guint64 *out, GError **error);
/* ddp_range_check_number / _count for "--FLAG". */
gboolean ddp_flag_number(const char *flag, const char *text, const DdpRange *r, double *out, GError **error);
gboolean ddp_flag_count(const char *flag, const char *text, const DdpRange *r, guint64 *out, GError **error);
/* As ddp_flag_number, where a percentage "90%" may stand for 0.9. */
gboolean ddp_flag_fraction(const char *flag, const char *text, const DdpRange *r, double *out, GError **error);
/* Parses an integer or number in @text into *out; FALSE when it is not one (no range check).
 * Decimal only: hexadecimal ("0x10", "0x1p3"), "inf" and "nan" are not numbers here. */
gboolean ddp_parse_integer(const char *text, gint64 *out);
gboolean ddp_parse_number(const char *text, double *out);

/* A --gpus list "8,16,32" or "8,16,...,1024" (also "…"): increasing counts of at most
 * DDP_MAX_GPUS, at most DDP_MAX_SWEEP_POINTS of them, counted before expansion.  (transfer full)
 * GArray of guint64, or NULL with a --gpus error. */
GArray *ddp_gpu_list_parse(const char *text, GError **error);

/* Reads an input file: a regular file of at most DDP_MAX_INPUT_BYTES, text without NUL bytes.
 * @what names it in messages ("--model", "--compare").  *text is NUL-terminated; free it. */
gboolean ddp_range_read_file(const char *path, char **text, gsize *length, GError **error);

/* @text for an error message: control characters escaped (\n, \x01), at most 80 characters
 * (then "…").  Free with g_free(). */
char *ddp_range_quote(const char *text);
char *ddp_range_quote_n(const char *text, guint max_chars);
/* Longest message ddp_cmd_fail prints (characters), after escaping. */
#define DDP_MAX_MESSAGE_CHARS 1000u

/* Nanoseconds from a double, saturated to ±DDP_TIME_MAX_NS (NaN gives DDP_TIME_MAX_NS), so a
 * conversion never overflows; ddp.c refuses a run whose worst case reaches the ceiling. */
gint64 ddp_time_from_ns(double ns);

#endif
