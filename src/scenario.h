/* scenario — everything one prediction needs: model, cluster, training setup and stragglers,
 * from an optional scenario file with command-line flags overriding any key.
 * The common flags (the same names on every verb) are defined here once for every verb. */
#ifndef DDP_SCENARIO_H
#define DDP_SCENARIO_H

#include <glib.h>
#include "bucket.h"
#include "cluster.h"
#include "compute.h"
#include "fit.h"
#include "model.h"
#include "straggler.h"

typedef enum { DDP_HOOK_NONE, DDP_HOOK_FP16, DDP_HOOK_BF16, DDP_HOOK_COUNT } DdpCommHook;
/* DistributedDataParallel (one process per GPU), torch.nn.DataParallel (one process, one node:
 * dp.h), ZeroRedundancyOptimizer with DDP (zero.h) or FullyShardedDataParallel (fsdp.h). */
typedef enum { DDP_MODE_DDP, DDP_MODE_DP, DDP_MODE_ZERO1, DDP_MODE_FSDP, DDP_MODE_COUNT } DdpMode;
/* FSDP's ShardingStrategy: FULL_SHARD, SHARD_GRAD_OP, HYBRID_SHARD, NO_SHARD. */
typedef enum { DDP_SHARDING_FULL, DDP_SHARDING_GRAD_OP, DDP_SHARDING_HYBRID, DDP_SHARDING_NONE,
               DDP_SHARDING_COUNT } DdpSharding;
/* FSDP's BackwardPrefetch: BACKWARD_PRE (the default), BACKWARD_POST, None. */
typedef enum { DDP_PREFETCH_PRE, DDP_PREFETCH_POST, DDP_PREFETCH_NONE, DDP_PREFETCH_COUNT } DdpBackwardPrefetch;

/* Gradient accumulation under FSDP (--accumulate K > 1): the first K-1 micro-steps inside
 * FullyShardedDataParallel.no_sync() (no ReduceScatter; the unsharded gradients accumulate, full
 * size, until the last micro-step reduces them), or outside it (a ReduceScatter every micro-step,
 * the sharded gradients accumulating in _saved_grad_shard).  docs/model.md §6.3. */
typedef enum { DDP_FSDP_ACCUMULATE_NO_SYNC, DDP_FSDP_ACCUMULATE_SHARDED, DDP_FSDP_ACCUMULATE_COUNT } DdpFsdpAccumulate;

/* The DDP communication hook that runs ZeroRedundancyOptimizer(overlap_with_ddp=True)'s step
 * (torch/distributed/algorithms/ddp_comm_hooks/ddp_zero_hook.py): hook_with_zero_step (every
 * bucket's step once the last bucket's hook runs, on the compute stream) or
 * hook_with_zero_step_interleaved (each bucket's step as soon as its AllReduce ends, on a side
 * stream).  docs/model.md §6.4. */
typedef enum { DDP_ZERO_HOOK_STEP, DDP_ZERO_HOOK_INTERLEAVED, DDP_ZERO_HOOK_COUNT } DdpZeroHook;

/* FSDP's and ZeRO's options (fsdp.h, zero.h); ignored by the other modes. */
typedef struct {
  DdpSharding sharding;             /* FULL by default, as FullyShardedDataParallel */
  DdpBackwardPrefetch backward_prefetch;
  gboolean forward_prefetch;        /* FALSE by default */
  gboolean limit_all_gathers;       /* TRUE by default (PyTorch >= 2.1) */
  guint blocks_per_unit;            /* auto-wrap granularity: consecutive blocks per FSDP unit (1) */
  gboolean overlap_with_ddp;        /* ZeroRedundancyOptimizer(overlap_with_ddp=True) */
  DdpZeroHook zero_hook;            /* with overlap_with_ddp: which ddp_zero_hook.py hook runs it */
  DdpFsdpAccumulate accumulate;     /* how FSDP accumulates over --accumulate micro-steps (no_sync) */
} DdpShardOptions;

/* Overheads that are not collectives (docs/overheads.md: what each models, its default, its
 * source).  Defaults are set by ddp_setup_init(); scenario [training] keys and flags override. */
typedef struct {
  double overlap_slowdown;   /* compute slows by this fraction while a collective runs; < 0: the
                                cluster's [cluster] overlap_slowdown, or from the SMs NCCL's
                                channels hold (ddp_overheads_overlap_slowdown) */
  double host_iteration_us;  /* host time per iteration the GPUs wait for (serial) */
  double host_layer_us;      /* host dispatch per layer pass: no pass is shorter */
  double input_rate;         /* samples/s per node the input pipeline delivers; 0: unlimited */
  double jitter;             /* σ of the persistent per-rank speed spread (rank-to-rank jitter) */
  gboolean batch_norm_waits; /* a BatchNorm backward waits for a running collective across nodes to end
                                (cuDNN's BatchNorm kernels stall beside NCCL's; docs/overheads.md) */
} DdpOverheads;

/* Where nothing sets the slowdown and the channels are unknown (a calibrated curve answers) */
#define DDP_DEFAULT_OVERLAP_SLOWDOWN 0.05
#define DDP_DEFAULT_HOST_ITERATION_US 100.0
#define DDP_DEFAULT_HOST_LAYER_US 10.0
/* σ of the rank-to-rank speed spread: the median, over six 8-GPU DDP runs, of the spread of the
 * eight GPUs' mean SM clocks (willgpaik/pytorch-ddp-scaling-benchmark's nvidia-smi telemetry; docs/overheads.md) */
#define DDP_DEFAULT_JITTER 0.0078

/* Every overhead off (for closed-form tests and for comparing against an ideal machine). */
void ddp_overheads_none(DdpOverheads *o);
/* The overlap slowdown in force for @o on @cluster, for collectives that NCCL runs on @channels
 * channels (0: unknown): @o's, else the cluster file's, else C / (SMs − C) — NCCL holds one thread
 * block per channel on its own SM for the whole call, and compute runs on the SMs left
 * (docs/overheads.md, "Contention"; measured on an H100 in calibrate/data, 2026-11-27) — else
 * DDP_DEFAULT_OVERLAP_SLOWDOWN.  @from_channels (nullable) receives C where the value came from
 * the channels, else 0. */
double ddp_overheads_overlap_slowdown(const DdpOverheads *o, const DdpCluster *cluster, int channels,
                                      int *from_channels);

typedef struct {
  guint64 gpus;
  double batch;                     /* samples per GPU per micro-step */
  DdpPrecision precision;
  DdpBucketOptions buckets;
  guint accumulate;                 /* micro-steps per optimizer step; the first K-1 under no_sync */
  gboolean gradient_as_bucket_view;
  DdpCommHook comm_hook;
  DdpOptimizer optimizer;
  gboolean broadcast_buffers;
  gboolean channels_last;           /* model.to(memory_format=torch.channels_last): no NCHW transposes
                                       around tensor-core convolutions, NHWC batch norm and pooling
                                       (compute.c) */
  gboolean activation_checkpointing; /* every block wrapped in torch.utils.checkpoint (non-reentrant):
                                       its input kept, its forward rerun in backward (compute.c) */
  guint iterations;                 /* steady-state iterations simulated after iteration 0 */
  guint64 seed;
  char *stragglers;                 /* the spec text */
  double step_ms;                   /* measured 1-GPU step to rescale compute to; 0: none */
  DdpMode mode;
  DdpShardOptions shard;
  gboolean allow_oom;               /* predict: a model that does not fit is not an error (exit 3) */
  double unused_search_us;          /* find_unused_parameters' autograd-graph traversal per synced
                                     * iteration; < 0: derived from the model (ddp.c) */
  DdpOverheads overheads;
  guint seq_len, image_size;        /* input size to rescale the model to; 0: the model file's */
  const char *batch_from;           /* where batch, precision and optimizer came from (static text):
                                       "built-in default", "model file", "scenario file" or the flag */
  const char *precision_from;
  const char *optimizer_from;
} DdpSetup;

typedef struct {
  char *path;                       /* scenario file, or NULL */
  DdpModel *model;
  DdpCluster *cluster;
  DdpStragglers *stragglers;
  DdpSetup setup;
  DdpFit *calibration;              /* --calibration DB, or NULL: built-in specs and models */
} DdpScenario;

/* Raw command-line values (NULL/FALSE when not given); verbs embed this in their option struct. */
typedef struct {
  char *model, *cluster, *gpus, *bucket_cap_mb, *batch, *precision, *accumulate, *iterations;
  char *seed, *step_ms, *stragglers, *optimizer, *comm_hook, *calibration;
  char *mode, *torch_version, *unused_search_us;
  char *sharding, *backward_prefetch, *wrap_blocks, *fsdp_accumulate, *zero_hook;
  gboolean forward_prefetch, no_limit_all_gathers, overlap_with_ddp;
  char *overlap_slowdown, *host_iteration_us, *host_layer_us, *input_rate, *jitter, *seq_len, *image_size;
  gboolean gradient_as_bucket_view, find_unused_parameters, static_graph, no_broadcast_buffers, allow_oom;
  gboolean channels_last, activation_checkpointing, no_batch_norm_waits;
} DdpCliOptions;

#define DDP_SCENARIO_ERROR (ddp_scenario_error_quark())
GQuark ddp_scenario_error_quark(void);
typedef enum { DDP_SCENARIO_ERROR_INVALID } DdpScenarioError;

void ddp_setup_init(DdpSetup *setup);
/* The precision as the reports print it: its name, with " channels_last" when the setup is NHWC
 * and ", activation checkpointing" when it checkpoints (static string). */
const char *ddp_setup_precision_label(const DdpSetup *setup);

/* The common option entries, storing into @cli (static array of GOptionEntry; NULL-terminated). */
GOptionEntry *ddp_cli_option_entries(DdpCliOptions *cli);
void ddp_cli_options_clear(DdpCliOptions *cli);

/* Loads @scenario_path (may be NULL: built-in defaults — resnet50 on dgx-a100, 8 GPUs), applies
 * @cli over it and validates.  When @gpus_from_cli is FALSE the --gpus flag is left to the verb
 * (scale takes a list).  Returns: (transfer full) or NULL with a one-line @error. */
DdpScenario *ddp_scenario_load(const char *scenario_path, const DdpCliOptions *cli,
                               gboolean gpus_from_cli, GError **error);
void ddp_scenario_free(DdpScenario *s);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(DdpScenario, ddp_scenario_free)
/* For verbs that run one strategy (not compare, whose rows take each its own): FALSE with @error
 * when @cli gives a flag of another strategy — FSDP's to a DDP run, DDP's bucket-graph flags to
 * FSDP — instead of ignoring it silently. */
gboolean ddp_cli_check_mode_flags(const DdpCliOptions *cli, DdpMode mode, GError **error);

const char *ddp_comm_hook_name(DdpCommHook hook);
const char *ddp_mode_name(DdpMode mode);
const char *ddp_sharding_name(DdpSharding sharding);       /* "full", "grad-op", "hybrid", "none" */
const char *ddp_backward_prefetch_name(DdpBackwardPrefetch p); /* "pre", "post", "none" */
const char *ddp_fsdp_accumulate_name(DdpFsdpAccumulate a);  /* "no-sync", "sharded" */
const char *ddp_zero_hook_name(DdpZeroHook h);              /* "step", "interleaved" */

#endif
