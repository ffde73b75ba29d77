/* scenario — loads a scenario file and applies command-line overrides (see scenario.h).
 *
 * A scenario file has [scenario] (model, cluster, gpus) and [training] (the setup), and may carry
 * a whole cluster inline ([cluster] [gpu] [intra] [inter] [nccl]) instead of naming one.  Order of
 * precedence: built-in default < scenario file < command line.  Every value is validated here and
 * only here; errors name the file:line:key or the --flag.
 */
#include "scenario.h"
#include "ddpterms.h"
#include "fsdp.h"
#include "tierfit.h"

#include "datadir.h"
#include "suggest.h"

#include <string.h>

G_DEFINE_QUARK(ddp-scenario-error-quark, ddp_scenario_error)

#define DEFAULT_MODEL "resnet50"
#define DEFAULT_CLUSTER "dgx-a100"
#define DEFAULT_GPUS 8

static const char *const hook_names[DDP_HOOK_COUNT + 1] = { "none", "fp16", "bf16", NULL };
static const char *const precision_choices[] = { "fp32", "tf32", "fp16", "bf16", NULL };
static const char *const optimizer_choices[] = { "sgd", "sgd-momentum", "adam", "adamw", NULL };
static const char *const mode_names[DDP_MODE_COUNT + 1] = { "ddp", "dp", "zero1", "fsdp", NULL };
static const char *const sharding_names[DDP_SHARDING_COUNT + 1] = { "full", "grad-op", "hybrid", "none", NULL };
static const char *const prefetch_names[DDP_PREFETCH_COUNT + 1] = { "pre", "post", "none", NULL };
static const char *const fsdp_accumulate_names[DDP_FSDP_ACCUMULATE_COUNT + 1] = { "no-sync", "sharded", NULL };

static const char *const zero_hook_names[DDP_ZERO_HOOK_COUNT + 1] = { "step", "interleaved", NULL };

const char *
ddp_zero_hook_name(DdpZeroHook h)
{
  g_return_val_if_fail(h < DDP_ZERO_HOOK_COUNT, "?");
  return zero_hook_names[h];
}

const char *
ddp_fsdp_accumulate_name(DdpFsdpAccumulate a)
{
  g_return_val_if_fail(a < DDP_FSDP_ACCUMULATE_COUNT, "?");
  return fsdp_accumulate_names[a];
}

const char *
ddp_sharding_name(DdpSharding sharding)
{
  g_return_val_if_fail(sharding < DDP_SHARDING_COUNT, "?");
  return sharding_names[sharding];
}

const char *
ddp_backward_prefetch_name(DdpBackwardPrefetch p)
{
  g_return_val_if_fail(p < DDP_PREFETCH_COUNT, "?");
  return prefetch_names[p];
}

const char *
ddp_mode_name(DdpMode mode)
{
  g_return_val_if_fail(mode < DDP_MODE_COUNT, "?");
  return mode_names[mode];
}

const char *
ddp_comm_hook_name(DdpCommHook hook)
{
  g_return_val_if_fail(hook < DDP_HOOK_COUNT, "?");
  return hook_names[hook];
}

GOptionEntry *
ddp_cli_option_entries(DdpCliOptions *o)
{
  GOptionEntry entries[] = {
    { "model", 0, 0, G_OPTION_ARG_STRING, &o->model, "Model: shipped name or .model file (default resnet50)", "NAME|PATH" },
    { "cluster", 0, 0, G_OPTION_ARG_STRING, &o->cluster, "Cluster: shipped name or .cluster file (default dgx-a100)", "NAME|PATH" },
    { "gpus", 0, 0, G_OPTION_ARG_STRING, &o->gpus, "Number of GPUs (default 8)", "N" },
    { "bucket-cap-mb", 0, 0, G_OPTION_ARG_STRING, &o->bucket_cap_mb, "DDP bucket_cap_mb, in MiB as PyTorch (default 25)", "X" },
    { "batch", 0, 0, G_OPTION_ARG_STRING, &o->batch, "Samples per GPU per micro-step (default 32)", "B" },
    { "precision", 0, 0, G_OPTION_ARG_STRING, &o->precision, "fp32|tf32|fp16|bf16 (fp32: no TF32, cudnn.allow_tf32 off; tf32: TF32 for cuDNN and matmuls, a conv net at PyTorch's defaults on Ampere+; fp16/bf16: autocast, fp32 params)", "P" },
    { "accumulate", 0, 0, G_OPTION_ARG_STRING, &o->accumulate, "Gradient accumulation micro-steps; first K-1 under no_sync (default 1)", "K" },
    { "iterations", 0, 0, G_OPTION_ARG_STRING, &o->iterations, "Steady-state iterations to simulate (default 100)", "K" },
    { "seed", 0, 0, G_OPTION_ARG_STRING, &o->seed, "Random seed for stragglers (default 1)", "S" },
    { "step-ms", 0, 0, G_OPTION_ARG_STRING, &o->step_ms, "Measured 1-GPU step time to rescale compute to", "T" },
    { "stragglers", 0, 0, G_OPTION_ARG_STRING, &o->stragglers,
      "none | normal:SIGMA | lognormal:SIGMA | slow:K:FACTOR | hiccup:EVERY:MS, comma-separated", "SPEC" },
    { "optimizer", 0, 0, G_OPTION_ARG_STRING, &o->optimizer, "sgd|sgd-momentum|adam|adamw (default sgd-momentum)", "O" },
    { "comm-hook", 0, 0, G_OPTION_ARG_STRING, &o->comm_hook, "DDP comm hook: none|fp16|bf16 (default none)", "H" },
    { "calibration", 0, 0, G_OPTION_ARG_FILENAME, &o->calibration, "Use parameters fitted from a calibration database", "DB" },
    { "overlap-slowdown", 0, 0, G_OPTION_ARG_STRING, &o->overlap_slowdown,
      "Fraction by which compute slows while a collective runs (default: the cluster's, else C/(SMs-C) for NCCL's C channels)", "X" },
    { "host-iteration-us", 0, 0, G_OPTION_ARG_STRING, &o->host_iteration_us, "Host time per iteration the GPUs wait for (default 100)", "US" },
    { "host-layer-us", 0, 0, G_OPTION_ARG_STRING, &o->host_layer_us, "Host dispatch time per layer pass, a floor (default 10)", "US" },
    { "input-rate", 0, 0, G_OPTION_ARG_STRING, &o->input_rate, "Samples/s per node the data loader delivers (default 0: unlimited)", "R" },
    { "no-batch-norm-waits", 0, 0, G_OPTION_ARG_NONE, &o->no_batch_norm_waits,
      "BatchNorm backward runs beside collectives across nodes (default: it waits for the running one to end, as cuDNN's BatchNorm kernels do beside NCCL's network kernels)", NULL },
    { "jitter", 0, 0, G_OPTION_ARG_STRING, &o->jitter, "Rank-to-rank speed spread, standard deviation (default 0.0078, the GPU clock spread of a healthy server; 0: off)", "SIGMA" },
    { "seq-len", 0, 0, G_OPTION_ARG_STRING, &o->seq_len, "Sequence length (token models; default: the model file's)", "N" },
    { "image-size", 0, 0, G_OPTION_ARG_STRING, &o->image_size, "Image side in pixels (image models; default: the model file's)", "N" },
    { "gradient-as-bucket-view", 0, 0, G_OPTION_ARG_NONE, &o->gradient_as_bucket_view, "DDP gradient_as_bucket_view=True", NULL },
    { "find-unused-parameters", 0, 0, G_OPTION_ARG_NONE, &o->find_unused_parameters, "DDP find_unused_parameters=True (no bucket rebuild)", NULL },
    { "static-graph", 0, 0, G_OPTION_ARG_NONE, &o->static_graph, "DDP static_graph=True", NULL },
    { "no-broadcast-buffers", 0, 0, G_OPTION_ARG_NONE, &o->no_broadcast_buffers, "DDP broadcast_buffers=False", NULL },
    { "channels-last", 0, 0, G_OPTION_ARG_NONE, &o->channels_last,
      "model.to(memory_format=torch.channels_last): no NCHW transposes around tensor-core convolutions, NHWC batch norm and pooling kernels", NULL },
    { "activation-checkpointing", 0, 0, G_OPTION_ARG_NONE, &o->activation_checkpointing,
      "torch.utils.checkpoint on every block (non-reentrant): keep each block's input, rerun its forward in backward", NULL },
    { "mode", 0, 0, G_OPTION_ARG_STRING, &o->mode, "ddp (DistributedDataParallel, default), dp (torch.nn.DataParallel, one node), zero1 (ZeroRedundancyOptimizer + DDP) or fsdp", "M" },
    { "sharding", 0, 0, G_OPTION_ARG_STRING, &o->sharding, "fsdp: full (FULL_SHARD, default), grad-op (SHARD_GRAD_OP), hybrid (HYBRID_SHARD) or none (NO_SHARD)", "S" },
    { "backward-prefetch", 0, 0, G_OPTION_ARG_STRING, &o->backward_prefetch, "fsdp: pre (BACKWARD_PRE, default), post or none", "P" },
    { "forward-prefetch", 0, 0, G_OPTION_ARG_NONE, &o->forward_prefetch, "fsdp: forward_prefetch=True", NULL },
    { "no-limit-all-gathers", 0, 0, G_OPTION_ARG_NONE, &o->no_limit_all_gathers, "fsdp: limit_all_gathers=False (no rate limiter)", NULL },
    { "wrap-blocks", 0, 0, G_OPTION_ARG_STRING, &o->wrap_blocks, "fsdp: consecutive blocks per FSDP unit (auto-wrap granularity, default 1)", "K" },
    { "fsdp-accumulate", 0, 0, G_OPTION_ARG_STRING, &o->fsdp_accumulate,
      "fsdp with --accumulate: no-sync (K-1 micro-steps in no_sync(), default) or sharded (ReduceScatter every micro-step)", "A" },
    { "overlap-with-ddp", 0, 0, G_OPTION_ARG_NONE, &o->overlap_with_ddp, "zero1: ZeroRedundancyOptimizer(overlap_with_ddp=True)", NULL },
    { "zero-hook", 0, 0, G_OPTION_ARG_STRING, &o->zero_hook,
      "zero1 --overlap-with-ddp: step (hook_with_zero_step, default) or interleaved (hook_with_zero_step_interleaved)", "H" },
    { "torch-version", 0, 0, G_OPTION_ARG_STRING, &o->torch_version, "PyTorch release whose DDP rules to follow, X.Y (default: the rules of 2.4 and later)", "X.Y" },
    { "unused-search-us", 0, 0, G_OPTION_ARG_STRING, &o->unused_search_us,
      "find_unused_parameters: CPU time of the autograd-graph search per iteration (default from the model)", "US" },
    { "allow-oom", 0, 0, G_OPTION_ARG_NONE, &o->allow_oom, "predict: report a model that does not fit in GPU memory, exit 0", NULL },
    { NULL, 0, 0, 0, NULL, NULL, NULL },
  };
  return g_memdup2(entries, sizeof entries);
}

void
ddp_cli_options_clear(DdpCliOptions *o)
{
  char **strings[] = { &o->model, &o->cluster, &o->gpus, &o->bucket_cap_mb, &o->batch, &o->precision,
                       &o->accumulate, &o->iterations, &o->seed, &o->step_ms, &o->stragglers,
                       &o->optimizer, &o->comm_hook, &o->calibration, &o->mode, &o->torch_version,
                       &o->sharding, &o->backward_prefetch, &o->wrap_blocks, &o->fsdp_accumulate, &o->zero_hook,
                       &o->unused_search_us, &o->overlap_slowdown, &o->host_iteration_us, &o->host_layer_us,
                       &o->input_rate, &o->jitter, &o->seq_len, &o->image_size };
  for (gsize i = 0; i < G_N_ELEMENTS(strings); i++)
    g_clear_pointer(strings[i], g_free);
}

void
ddp_scenario_free(DdpScenario *s)
{
  if (!s)
    return;
  g_free(s->path);
  ddp_model_free(s->model);
  ddp_cluster_free(s->cluster);
  ddp_stragglers_free(s->stragglers);
  ddp_fit_free(s->calibration);
  g_free(s->setup.stragglers);
  g_free(s);
}

static gboolean
flag_choice(const char *flag, const char *text, const char *const *choices, int *out, GError **error)
{
  if (!text)
    return TRUE;
  for (int i = 0; choices[i]; i++)
    if (g_ascii_strcasecmp(text, choices[i]) == 0) {
      *out = i;
      return TRUE;
    }
  g_autofree char *list = g_strjoinv("|", (char **)choices);
  g_autofree char *hint = ddp_suggest_text(text, choices);
  g_set_error(error, DDP_SCENARIO_ERROR, DDP_SCENARIO_ERROR_INVALID, "--%s: \"%s\" is not one of %s%s",
              flag, text, list, hint);
  return FALSE;
}

/**
 * ddp_overheads_none:
 * Every overhead term off: no contention slowdown, no host time, no input cap, no jitter.
 */
void
ddp_overheads_none(DdpOverheads *o)
{
  *o = (DdpOverheads){ .overlap_slowdown = 0 };
}

/* Defaults and their sources: docs/overheads.md.
 *  overlap_slowdown < 0: the cluster decides (its [cluster] overlap_slowdown, else
 *    DDP_DEFAULT_OVERLAP_SLOWDOWN = 0.05: docs/model.md §1.6 (c), NCCL kernels take one SM per
 *    channel and HBM bandwidth while backward runs, "a few to ~10+ %").
 *  host_iteration_us 100: ≈10 PyTorch eager ops at ≈10 µs of CPU each (Paszke et al., NeurIPS 2019,
 *    §6: per-op overhead of the dispatcher) at the step boundary — zero_grad, loss.item() (a sync),
 *    the loader's next() and the host→device copy — during which the GPU has nothing queued.
 *  host_layer_us 10: the same per-op dispatch cost, once per layer pass, issued ahead of the GPU
 *    (compute.c host_pipeline): the GPU idles only where it overtakes the host.
 *  input_rate 0: off (users set their loader's measured rate).
 *  jitter 0.0078: the spread of GPU speeds inside one healthy server under DDP load.  The eight
 *    GPUs of a node do not run at one clock: a GPU at its power limit settles where its own silicon
 *    lets it (Sinha et al., "Not All GPUs Are Created Equal", SC'22, measure this across whole
 *    V100/A100 fleets, outliers included).  The per-GPU mean SM clocks that the public DDP runs of
 *    willgpaik/pytorch-ddp-scaling-benchmark record (nvidia-smi, every second, 4-10 minutes per
 *    run; tests/data/training-6.SOURCE) give, over their six 8-GPU runs, σ/mean 0.23-1.24 %
 *    (A100-SXM4-80GB at 385-397 W of 400: 0.59, 0.63, 0.93, 1.07 %; V100-SXM2: 0.23, 1.24 %),
 *    median 0.78 %.  The step times of the same runs were seen before the clocks were read; σ is
 *    the clocks', not fitted to the steps (docs/overheads.md, "Rank-to-rank jitter").  The 0.02
 *    used before had no source and made jitter a 64-GPU ResNet-50 step's largest overhead.
 *    --jitter SIGMA (0: off) or --stragglers put your own spread in.
 *  batch_norm_waits on: in a convolutional model a BatchNorm backward does not start while a
 *    collective across nodes runs (cuDNN's BatchNorm kernels stall beside NCCL's: NVIDIA/nccl#338,
 *    #661, pytorch/pytorch#80259; docs/overheads.md "BatchNorm waits for the collectives across nodes"). */
static void
overheads_init(DdpOverheads *o)
{
  o->overlap_slowdown = -1;
  o->host_iteration_us = DDP_DEFAULT_HOST_ITERATION_US;
  o->host_layer_us = DDP_DEFAULT_HOST_LAYER_US;
  o->input_rate = 0;
  o->jitter = DDP_DEFAULT_JITTER;
  o->batch_norm_waits = TRUE;
}

double
ddp_overheads_overlap_slowdown(const DdpOverheads *o, const DdpCluster *cluster, int channels, int *from_channels)
{
  gboolean derived = o->overlap_slowdown < 0 && cluster->overlap_slowdown < 0 && channels > 0 &&
                     channels < cluster->gpu.sms;
  if (from_channels)
    *from_channels = derived ? channels : 0;
  if (o->overlap_slowdown >= 0)
    return o->overlap_slowdown;
  if (cluster->overlap_slowdown >= 0)
    return cluster->overlap_slowdown;
  if (derived)
    return (double)channels / (double)(cluster->gpu.sms - channels);
  return DDP_DEFAULT_OVERLAP_SLOWDOWN;
}

/**
 * ddp_setup_precision_label:
 * See scenario.h.
 */
const char *
ddp_setup_precision_label(const DdpSetup *s)
{
  static const char *const labels[2][2][DDP_PRECISION_COUNT] = {
    { { "fp32", "tf32", "fp16", "bf16" },
      { "fp32 channels_last", "tf32 channels_last", "fp16 channels_last", "bf16 channels_last" } },
    { { "fp32, activation checkpointing", "tf32, activation checkpointing", "fp16, activation checkpointing",
        "bf16, activation checkpointing" },
      { "fp32 channels_last, activation checkpointing", "tf32 channels_last, activation checkpointing",
        "fp16 channels_last, activation checkpointing", "bf16 channels_last, activation checkpointing" } },
  };
  return labels[s->activation_checkpointing ? 1 : 0][s->channels_last ? 1 : 0][s->precision];
}

/* Built-in defaults: 8 GPUs, batch 32, fp32, PyTorch's bucket defaults, SGD with momentum,
 * broadcast_buffers on, contiguous NCHW (no channels_last), 100 steady iterations, seed 1, no
 * stragglers.  s->stragglers is allocated. */
void
ddp_setup_init(DdpSetup *s)
{
  s->gpus = DEFAULT_GPUS;
  s->batch = 32;
  s->precision = DDP_PRECISION_FP32;
  s->batch_from = s->precision_from = s->optimizer_from = "built-in default";
  ddp_bucket_options_init(&s->buckets);
  s->accumulate = 1;
  s->comm_hook = DDP_HOOK_NONE;
  s->optimizer = DDP_OPTIMIZER_SGD_MOMENTUM;
  s->broadcast_buffers = TRUE;
  s->channels_last = FALSE;
  s->activation_checkpointing = FALSE;
  s->iterations = 100;
  s->seed = 1;
  s->stragglers = g_strdup("none");
  s->mode = DDP_MODE_DDP;
  s->shard = (DdpShardOptions){ .sharding = DDP_SHARDING_FULL, .backward_prefetch = DDP_PREFETCH_PRE,
                                .limit_all_gathers = TRUE, .blocks_per_unit = 1 };
  s->unused_search_us = -1;
  overheads_init(&s->overheads);
}

static const char *const scenario_keys[] = { "model", "cluster", "gpus", "description", NULL };
static const char *const training_keys[] = {
  "batch", "precision", "bucket_cap_mb", "accumulate", "gradient_as_bucket_view", "comm_hook",
  "optimizer", "find_unused_parameters", "static_graph", "broadcast_buffers", "iterations", "seed",
  "stragglers", "step_ms", "mode", "torch_version", "allow_oom", "unused_search_us", "overlap_slowdown",
  "host_iteration_us", "host_layer_us", "input_rate", "jitter", "seq_len", "image_size", "sharding",
  "backward_prefetch", "forward_prefetch", "limit_all_gathers", "wrap_blocks", "overlap_with_ddp", "fsdp_accumulate",
  "zero_hook", "first_bucket_mb", "channels_last", "activation_checkpointing", "batch_norm_waits", NULL
};

/* [training] keys of the overheads and the input size, with the ranges of their flags (apply_cli). */
static gboolean
read_overheads(const DdpKeyFile *kf, DdpSetup *t, GError **error)
{
  DdpOverheads *o = &t->overheads;
  double seq_len = t->seq_len, image_size = t->image_size;
  if (!ddp_keyfile_get_ranged(kf, "training", "overlap_slowdown", FALSE, &DDP_RANGE_OVERLAP_SLOWDOWN, &o->overlap_slowdown, error) ||
      !ddp_keyfile_get_ranged(kf, "training", "host_iteration_us", FALSE, &DDP_RANGE_HOST_ITERATION_US, &o->host_iteration_us, error) ||
      !ddp_keyfile_get_ranged(kf, "training", "host_layer_us", FALSE, &DDP_RANGE_HOST_LAYER_US, &o->host_layer_us, error) ||
      !ddp_keyfile_get_ranged(kf, "training", "input_rate", FALSE, &DDP_RANGE_INPUT_RATE, &o->input_rate, error) ||
      !ddp_keyfile_get_ranged(kf, "training", "jitter", FALSE, &DDP_RANGE_JITTER, &o->jitter, error) ||
      !ddp_keyfile_get_bool(kf, "training", "batch_norm_waits", FALSE, &o->batch_norm_waits, error) ||
      !ddp_keyfile_get_ranged(kf, "training", "seq_len", FALSE, &DDP_RANGE_SEQ_LEN, &seq_len, error) ||
      !ddp_keyfile_get_ranged(kf, "training", "image_size", FALSE, &DDP_RANGE_IMAGE_SIZE, &image_size, error))
    return FALSE;
  t->seq_len = (guint)seq_len;
  t->image_size = (guint)image_size;
  return TRUE;
}

/* [training] keys of FSDP and ZeRO (DdpShardOptions). */
static gboolean
read_shard(const DdpKeyFile *kf, DdpShardOptions *o, GError **error)
{
  int sharding = o->sharding, prefetch = o->backward_prefetch, accumulate = o->accumulate, hook = o->zero_hook;
  double blocks = o->blocks_per_unit;
  if (!ddp_keyfile_get_choice(kf, "training", "sharding", FALSE, sharding_names, &sharding, error) ||
      !ddp_keyfile_get_choice(kf, "training", "zero_hook", FALSE, zero_hook_names, &hook, error) ||
      !ddp_keyfile_get_choice(kf, "training", "fsdp_accumulate", FALSE, fsdp_accumulate_names, &accumulate, error) ||
      !ddp_keyfile_get_choice(kf, "training", "backward_prefetch", FALSE, prefetch_names, &prefetch, error) ||
      !ddp_keyfile_get_bool(kf, "training", "forward_prefetch", FALSE, &o->forward_prefetch, error) ||
      !ddp_keyfile_get_bool(kf, "training", "limit_all_gathers", FALSE, &o->limit_all_gathers, error) ||
      !ddp_keyfile_get_ranged(kf, "training", "wrap_blocks", FALSE, &DDP_RANGE_WRAP_BLOCKS, &blocks, error) ||
      !ddp_keyfile_get_bool(kf, "training", "overlap_with_ddp", FALSE, &o->overlap_with_ddp, error))
    return FALSE;
  o->sharding = sharding;
  o->backward_prefetch = prefetch;
  o->accumulate = accumulate;
  o->zero_hook = hook;
  o->blocks_per_unit = (guint)blocks;
  return TRUE;
}

/* Reads the scenario file's [scenario] and [training]; model/cluster names come back in *model
 * and *cluster (or the cluster itself when inline). */
static gboolean
read_scenario_file(const DdpKeyFile *kf, DdpScenario *s, char **model, char **cluster, GError **error)
{
  static const char *const groups[] = { "scenario", "training", "cluster", "gpu", "intra", "inter", "nccl", NULL };
  gsize n_groups;
  const char *const *present = ddp_keyfile_groups(kf, &n_groups);
  for (gsize i = 0; i < n_groups; i++)
    if (!g_strv_contains(groups, present[i])) {
      ddp_keyfile_set_error(kf, error, DDP_KEYFILE_ERROR_UNKNOWN, present[i], NULL,
                            "unknown group (a scenario file has [scenario] [training] and optionally an inline cluster)");
      return FALSE;
    }
  if (!ddp_keyfile_has_group(kf, "scenario")) {
    g_set_error(error, DDP_KEYFILE_ERROR, DDP_KEYFILE_ERROR_MISSING,
                "%s: [scenario]: required group is missing (is this a scenario file?)", ddp_keyfile_path(kf));
    return FALSE;
  }
  double gpus = (double)s->setup.gpus;
  if (!ddp_keyfile_check_keys(kf, "scenario", scenario_keys, error) ||
      !ddp_keyfile_get_string(kf, "scenario", "model", FALSE, model, error) ||
      !ddp_keyfile_get_string(kf, "scenario", "cluster", FALSE, cluster, error) ||
      !ddp_keyfile_get_ranged(kf, "scenario", "gpus", FALSE, &DDP_RANGE_GPUS, &gpus, error))
    return FALSE;
  s->setup.gpus = (guint64)gpus;
  if (ddp_keyfile_has_group(kf, "cluster")) {
    if (*cluster) {
      ddp_keyfile_set_error(kf, error, DDP_KEYFILE_ERROR_VALUE, "scenario", "cluster",
                            "give either a cluster name here or an inline [cluster] group, not both");
      return FALSE;
    }
    if (!(s->cluster = ddp_cluster_from_keyfile(kf, error)))
      return FALSE;
  }
  if (!ddp_keyfile_has_group(kf, "training"))
    return TRUE;
  DdpSetup *t = &s->setup;
  int precision = t->precision, hook = t->comm_hook, optimizer = t->optimizer, mode = t->mode;
  double accumulate = t->accumulate, iterations = t->iterations;
  guint64 seed = t->seed;
  double first_bucket_mb = (double)t->buckets.first_bucket_bytes / DDP_MIB;
  g_autofree char *torch_version = NULL;
  if (!ddp_keyfile_check_keys(kf, "training", training_keys, error) ||
      !ddp_keyfile_get_ranged(kf, "training", "batch", FALSE, &DDP_RANGE_BATCH, &t->batch, error) ||
      !ddp_keyfile_get_choice(kf, "training", "precision", FALSE, precision_choices, &precision, error) ||
      !ddp_keyfile_get_ranged(kf, "training", "bucket_cap_mb", FALSE, &DDP_RANGE_BUCKET_CAP_MB, &t->buckets.bucket_cap_mb, error) ||
      /* dist._DEFAULT_FIRST_BUCKET_BYTES, which tune --first-bucket-mb and --knobs first-bucket sweep */
      !ddp_keyfile_get_ranged(kf, "training", "first_bucket_mb", FALSE, &DDP_RANGE_BUCKET_CAP_MB, &first_bucket_mb, error) ||
      !ddp_keyfile_get_ranged(kf, "training", "accumulate", FALSE, &DDP_RANGE_ACCUMULATE, &accumulate, error) ||
      !ddp_keyfile_get_bool(kf, "training", "gradient_as_bucket_view", FALSE, &t->gradient_as_bucket_view, error) ||
      !ddp_keyfile_get_choice(kf, "training", "comm_hook", FALSE, hook_names, &hook, error) ||
      !ddp_keyfile_get_choice(kf, "training", "optimizer", FALSE, optimizer_choices, &optimizer, error) ||
      !ddp_keyfile_get_bool(kf, "training", "find_unused_parameters", FALSE, &t->buckets.find_unused_parameters, error) ||
      !ddp_keyfile_get_bool(kf, "training", "static_graph", FALSE, &t->buckets.static_graph, error) ||
      !ddp_keyfile_get_bool(kf, "training", "broadcast_buffers", FALSE, &t->broadcast_buffers, error) ||
      !ddp_keyfile_get_bool(kf, "training", "channels_last", FALSE, &t->channels_last, error) ||
      !ddp_keyfile_get_bool(kf, "training", "activation_checkpointing", FALSE, &t->activation_checkpointing, error) ||
      !ddp_keyfile_get_ranged(kf, "training", "iterations", FALSE, &DDP_RANGE_ITERATIONS, &iterations, error) ||
      /* no DdpRange holds 2^64 − 1 exactly (a double cannot): the seed's range is the --seed flag's */
      !ddp_keyfile_get_uint64(kf, "training", "seed", FALSE, 0, G_MAXUINT64, &seed, error) ||
      !ddp_keyfile_get_string(kf, "training", "stragglers", FALSE, &t->stragglers, error) ||
      !ddp_keyfile_get_ranged(kf, "training", "step_ms", FALSE, &DDP_RANGE_STEP_MS, &t->step_ms, error) ||
      !ddp_keyfile_get_choice(kf, "training", "mode", FALSE, mode_names, &mode, error) ||
      !ddp_keyfile_get_string(kf, "training", "torch_version", FALSE, &torch_version, error) ||
      !ddp_keyfile_get_bool(kf, "training", "allow_oom", FALSE, &t->allow_oom, error) ||
      !ddp_keyfile_get_ranged(kf, "training", "unused_search_us", FALSE, &DDP_RANGE_UNUSED_SEARCH_US, &t->unused_search_us, error) ||
      !read_overheads(kf, t, error) || !read_shard(kf, &t->shard, error))
    return FALSE;
  t->mode = mode;
  t->buckets.first_bucket_bytes = (guint64)(first_bucket_mb * DDP_MIB);   /* int() of the MiB, as the cap */
  if (torch_version && !ddp_torch_version_parse(torch_version, &t->buckets.torch_version)) {
    ddp_keyfile_set_error(kf, error, DDP_KEYFILE_ERROR_VALUE, "training", "torch_version",
                          "\"%s\" is not a PyTorch release X.Y from 1.4 to 2.99", torch_version);
    return FALSE;
  }
  t->precision = precision;
  t->comm_hook = hook;
  t->optimizer = optimizer;
  t->accumulate = (guint)accumulate;
  t->iterations = (guint)iterations;
  t->seed = seed;
  if (ddp_keyfile_has_key(kf, "training", "bucket_cap_mb"))
    t->buckets.bucket_cap_given = TRUE;
  if (ddp_keyfile_has_key(kf, "training", "stragglers")) {
    g_autoptr(GError) local = NULL;
    g_autoptr(DdpStragglers) check = ddp_stragglers_parse(t->stragglers, &local);
    if (!check) {
      /* the parser speaks of the flag; here the value comes from the file */
      const char *what = g_str_has_prefix(local->message, "--stragglers: ") ? local->message + 14 : local->message;
      ddp_keyfile_set_error(kf, error, DDP_KEYFILE_ERROR_VALUE, "training", "stragglers", "%s", what);
      return FALSE;
    }
  }
  return TRUE;
}

static gboolean
apply_cli(const DdpCliOptions *cli, gboolean gpus_from_cli, DdpSetup *t, GError **error)
{
  guint64 gpus = t->gpus, accumulate = t->accumulate, iterations = t->iterations, seed = t->seed;
  int precision = t->precision, hook = t->comm_hook, optimizer = t->optimizer, mode = t->mode;
  if ((gpus_from_cli && !ddp_flag_count("gpus", cli->gpus, &DDP_RANGE_GPUS, &gpus, error)) ||
      !ddp_flag_number("bucket-cap-mb", cli->bucket_cap_mb, &DDP_RANGE_BUCKET_CAP_MB, &t->buckets.bucket_cap_mb, error) ||
      !ddp_flag_number("batch", cli->batch, &DDP_RANGE_BATCH, &t->batch, error) ||
      !flag_choice("precision", cli->precision, precision_choices, &precision, error) ||
      !ddp_flag_count("accumulate", cli->accumulate, &DDP_RANGE_ACCUMULATE, &accumulate, error) ||
      !ddp_flag_count("iterations", cli->iterations, &DDP_RANGE_ITERATIONS, &iterations, error) ||
      !ddp_range_check_seed("--seed", cli->seed, &seed, error) ||
      !ddp_flag_number("step-ms", cli->step_ms, &DDP_RANGE_STEP_MS, &t->step_ms, error) ||
      !flag_choice("optimizer", cli->optimizer, optimizer_choices, &optimizer, error) ||
      !flag_choice("comm-hook", cli->comm_hook, hook_names, &hook, error) ||
      !flag_choice("mode", cli->mode, mode_names, &mode, error) ||
      !ddp_flag_number("unused-search-us", cli->unused_search_us, &DDP_RANGE_UNUSED_SEARCH_US, &t->unused_search_us, error))
    return FALSE;
  if (cli->torch_version && !ddp_torch_version_parse(cli->torch_version, &t->buckets.torch_version)) {
    g_set_error(error, DDP_SCENARIO_ERROR, DDP_SCENARIO_ERROR_INVALID,
                "--torch-version: \"%s\" is not a PyTorch release X.Y from 1.4 to 2.99", cli->torch_version);
    return FALSE;
  }
  t->mode = mode;
  int sharding = t->shard.sharding, prefetch = t->shard.backward_prefetch, accumulate_mode = t->shard.accumulate;
  int zero_hook = t->shard.zero_hook;
  guint64 blocks = t->shard.blocks_per_unit;
  if (!flag_choice("sharding", cli->sharding, sharding_names, &sharding, error) ||
      !flag_choice("zero-hook", cli->zero_hook, zero_hook_names, &zero_hook, error) ||
      !flag_choice("fsdp-accumulate", cli->fsdp_accumulate, fsdp_accumulate_names, &accumulate_mode, error) ||
      !flag_choice("backward-prefetch", cli->backward_prefetch, prefetch_names, &prefetch, error) ||
      !ddp_flag_count("wrap-blocks", cli->wrap_blocks, &DDP_RANGE_WRAP_BLOCKS, &blocks, error))
    return FALSE;
  t->shard.sharding = sharding;
  t->shard.backward_prefetch = prefetch;
  t->shard.accumulate = accumulate_mode;
  t->shard.zero_hook = zero_hook;
  t->shard.blocks_per_unit = (guint)blocks;
  if (cli->forward_prefetch)
    t->shard.forward_prefetch = TRUE;
  if (cli->no_limit_all_gathers)
    t->shard.limit_all_gathers = FALSE;
  if (cli->overlap_with_ddp)
    t->shard.overlap_with_ddp = TRUE;
  if (cli->allow_oom)
    t->allow_oom = TRUE;
  DdpOverheads *o = &t->overheads;
  guint64 seq_len = t->seq_len, image_size = t->image_size;
  if (!ddp_flag_number("overlap-slowdown", cli->overlap_slowdown, &DDP_RANGE_OVERLAP_SLOWDOWN, &o->overlap_slowdown, error) ||
      !ddp_flag_number("host-iteration-us", cli->host_iteration_us, &DDP_RANGE_HOST_ITERATION_US, &o->host_iteration_us, error) ||
      !ddp_flag_number("host-layer-us", cli->host_layer_us, &DDP_RANGE_HOST_LAYER_US, &o->host_layer_us, error) ||
      !ddp_flag_number("input-rate", cli->input_rate, &DDP_RANGE_INPUT_RATE, &o->input_rate, error) ||
      !ddp_flag_number("jitter", cli->jitter, &DDP_RANGE_JITTER, &o->jitter, error) ||
      !ddp_flag_count("seq-len", cli->seq_len, &DDP_RANGE_SEQ_LEN, &seq_len, error) ||
      !ddp_flag_count("image-size", cli->image_size, &DDP_RANGE_IMAGE_SIZE, &image_size, error))
    return FALSE;
  t->seq_len = (guint)seq_len;
  t->image_size = (guint)image_size;
  if (cli->bucket_cap_mb)
    t->buckets.bucket_cap_given = TRUE;
  t->gpus = gpus;
  t->accumulate = (guint)accumulate;
  t->iterations = (guint)iterations;
  t->seed = seed;
  t->precision = precision;
  t->comm_hook = hook;
  t->optimizer = optimizer;
  if (cli->stragglers) {
    g_free(t->stragglers);
    t->stragglers = g_strdup(cli->stragglers);
  }
  if (cli->gradient_as_bucket_view)
    t->gradient_as_bucket_view = TRUE;
  if (cli->find_unused_parameters)
    t->buckets.find_unused_parameters = TRUE;
  if (cli->static_graph)
    t->buckets.static_graph = TRUE;
  if (cli->no_broadcast_buffers)
    t->broadcast_buffers = FALSE;
  if (cli->no_batch_norm_waits)
    t->overheads.batch_norm_waits = FALSE;
  if (cli->channels_last)
    t->channels_last = TRUE;
  if (cli->activation_checkpointing)
    t->activation_checkpointing = TRUE;
  return TRUE;
}

/* Which DDP-level terms the user set (flag or scenario key): a calibration does not override them. */
typedef struct {
  gboolean slowdown, jitter, step_ms;
} DdpTermsGiven;

/* Where the mode's other collectives come from (fit.h: a measured curve at exactly their
 * communicator, else the model): FSDP's AllGathers and ReduceScatters on its sharding group,
 * ZeRO-1's Broadcasts on all the GPUs; one "note: " line each to stderr. */
static void
print_collective_notes(const DdpScenario *s, const char *name, guint64 nodes)
{
  DdpCollectiveOp ops[2];
  guint n_ops = 0;
  guint64 gpus = s->setup.gpus;
  if (s->setup.mode == DDP_MODE_FSDP && s->setup.shard.sharding != DDP_SHARDING_NONE &&
      ddp_fsdp_group(s, &gpus, &nodes, NULL)) {
    ops[n_ops++] = DDP_OP_ALL_GATHER;
    ops[n_ops++] = DDP_OP_REDUCE_SCATTER;
  } else if (s->setup.mode == DDP_MODE_ZERO1) {
    ops[n_ops++] = DDP_OP_BROADCAST;
  }
  for (guint i = 0; i < n_ops; i++) {
    g_autofree char *note = ddp_fit_collective_note(s->calibration, name, ops[i], gpus, nodes);
    if (note)
      g_printerr("ddpsim: %s\n", note);
  }
}

/* A calibration's AllReduce curves fit the collective model's per-tier parameters of the cluster
 * (tierfit.h): the scenario's cluster carries the fitted values from here on, at every GPU count a
 * verb asks about.  What came from the calibration, what from the specs, and how far past the
 * measured range the job is, and a calibration from another GPU model, go to stderr, one line each
 * (issue 12 item 5, issue 16 item 3): notes and warnings, not errors. */
static gboolean
calibrate_cluster(DdpScenario *s, const char *calibration_path, const DdpTermsGiven *given, GError **error)
{
  DdpTierFit tiers;
  ddp_tier_calibrate_cluster(s->cluster, s->calibration, &tiers);
  guint64 nodes = 1;
  if (!ddp_cluster_check_gpus(s->cluster, s->setup.gpus, &nodes, NULL))
    return TRUE;
  g_autoptr(GPtrArray) lines = ddp_fit_coverage_warnings(s->calibration, &s->cluster->gpu, s->setup.gpus, TRUE);
  g_autofree char *name = g_path_get_basename(calibration_path);
  g_autoptr(GPtrArray) tier_lines = ddp_tier_fit_report(&tiers, name, s->setup.gpus, nodes);
  for (guint i = 0; i < lines->len; i++)
    g_printerr("ddpsim: %s\n", (const char *)g_ptr_array_index(lines, i));
  for (guint i = 0; i < tier_lines->len; i++)
    g_printerr("ddpsim: %s\n", (const char *)g_ptr_array_index(tier_lines, i));
  g_autofree char *forced = ddp_fit_forced_variant_note(s->calibration, s->setup.gpus, nodes, s->cluster->nccl.algorithm,
                                                        s->cluster->nccl.protocol);
  if (forced)
    g_printerr("ddpsim: %s\n", forced);
  print_collective_notes(s, name, nodes);
  /* the DDP-level terms of an imported multi-GPU run (ddpterms.h), where the user gave none */
  DdpRunTerms terms;
  g_autoptr(GError) local = NULL;
  if (!ddp_run_terms_load(calibration_path, s->calibration, &terms, &local)) {
    if (!local)
      return TRUE;
    g_propagate_error(error, g_steal_pointer(&local));
    return FALSE;
  }
  g_autoptr(GPtrArray) term_lines = ddp_run_terms_apply(&terms, name, &s->setup, given->slowdown, given->jitter,
                                                        given->step_ms);
  for (guint i = 0; i < term_lines->len; i++)
    g_printerr("ddpsim: %s\n", (const char *)g_ptr_array_index(term_lines, i));
  return TRUE;
}

/* --wrap-blocks (or [training] wrap_blocks) > 1 for a model whose file names its FSDP units: the
 * granularity is the auto-wrap policy's, which the file's own wrap replaces; refused rather than
 * ignored.  Always FALSE with @error set, naming the flag or the scenario file's line. */
static gboolean
wrap_blocks_named(const DdpModel *model, const DdpKeyFile *kf, gboolean from_flag, GError **error)
{
  g_autofree char *why = g_strdup_printf("model %s names its own FSDP units ([model] fsdp_units, %s:%u); "
                                         "the wrap granularity applies to the auto-wrap policy only",
                                         model->name, model->path, model->fsdp_units_line);
  if (from_flag || !kf)
    g_set_error(error, DDP_SCENARIO_ERROR, DDP_SCENARIO_ERROR_INVALID, "--wrap-blocks: %s", why);
  else
    ddp_keyfile_set_error(kf, error, DDP_KEYFILE_ERROR_VALUE, "training", "wrap_blocks", "%s", why);
  return FALSE;
}

/* A contradiction between two options: the message names @flag when it was given, else the
 * scenario file's line of [training] @key (the option came from there). */
static gboolean
contradiction(const DdpKeyFile *kf, gboolean from_flag, const char *flag, const char *key, const char *why,
              GError **error)
{
  if (from_flag || !kf || !ddp_keyfile_has_key(kf, "training", key))
    g_set_error(error, DDP_SCENARIO_ERROR, DDP_SCENARIO_ERROR_INVALID, "--%s: %s", flag, why);
  else
    ddp_keyfile_set_error(kf, error, DDP_KEYFILE_ERROR_VALUE, "training", key, "%s", why);
  return FALSE;
}

/* ZeroRedundancyOptimizer(overlap_with_ddp=True) and what it cannot go with (checked whatever the
 * mode: compare runs a zero1 row with the same setup).  find_unused_parameters=True: DDP never
 * rebuilds its buckets then, and ddp_zero_hook.py initialises ZeRO only after the rebuild
 * (_hook_with_zero_step_setup waits for ddp._has_rebuilt_buckets): the optimizer would never step.
 * A hook without overlap_with_ddp: hook_with_zero_step raises ValueError ("must be constructed with
 * `overlap_with_ddp=True`"). */
static gboolean
check_overlap_with_ddp(const DdpSetup *t, const DdpKeyFile *kf, const DdpCliOptions *cli, GError **error)
{
  if (t->shard.overlap_with_ddp && t->buckets.find_unused_parameters)
    return contradiction(kf, cli->overlap_with_ddp, "overlap-with-ddp", "overlap_with_ddp",
                         "ZeroRedundancyOptimizer(overlap_with_ddp=True) never steps with find_unused_parameters=True "
                         "(DDP then never rebuilds its buckets, and ZeRO's hook waits for that rebuild)", error);
  gboolean hook_given = cli->zero_hook || (kf && ddp_keyfile_has_key(kf, "training", "zero_hook"));
  if (hook_given && !t->shard.overlap_with_ddp)
    return contradiction(kf, cli->zero_hook != NULL, "zero-hook", "zero_hook",
                         "the ddp_zero_hook.py hooks need ZeroRedundancyOptimizer(overlap_with_ddp=True): "
                         "add --overlap-with-ddp", error);
  return TRUE;
}

/* Activation checkpointing needs the model's blocks and the size of what it keeps for each
 * (ddp_model_checkpointable); a model file without them cannot be checkpointed. */
static gboolean
check_activation_checkpointing(const DdpSetup *t, const DdpModel *model, const DdpKeyFile *kf, const DdpCliOptions *cli,
                               GError **error)
{
  if (!t->activation_checkpointing)
    return TRUE;
  const char *missing;
  if (!ddp_model_checkpointable(model, &missing)) {
    g_autofree char *why = g_strdup_printf("model %s (%s) %s", model->name, model->path ? model->path : "built in",
                                           missing);
    return contradiction(kf, cli->activation_checkpointing, "activation-checkpointing", "activation_checkpointing", why,
                         error);
  }
  return TRUE;
}

/**
 * ddp_cli_check_mode_flags:
 * See scenario.h.
 */
gboolean
ddp_cli_check_mode_flags(const DdpCliOptions *cli, DdpMode mode, GError **error)
{
  const char *fsdp_flag = cli->sharding ? "sharding" : cli->backward_prefetch ? "backward-prefetch"
                          : cli->forward_prefetch ? "forward-prefetch" : cli->no_limit_all_gathers ? "no-limit-all-gathers"
                          : cli->wrap_blocks ? "wrap-blocks" : cli->fsdp_accumulate ? "fsdp-accumulate" : NULL;
  if (fsdp_flag && mode != DDP_MODE_FSDP) {
    g_set_error(error, DDP_SCENARIO_ERROR, DDP_SCENARIO_ERROR_INVALID,
                "--%s: an FSDP option, and this run is --mode %s (add --mode fsdp, or drop it)", fsdp_flag,
                ddp_mode_name(mode));
    return FALSE;
  }
  const char *ddp_flag = cli->find_unused_parameters ? "find-unused-parameters" : cli->static_graph ? "static-graph" : NULL;
  if (ddp_flag && mode == DDP_MODE_FSDP) {
    g_set_error(error, DDP_SCENARIO_ERROR, DDP_SCENARIO_ERROR_INVALID,
                "--%s: a DistributedDataParallel option; FSDP has no such setting (this run is --mode fsdp)", ddp_flag);
    return FALSE;
  }
  return TRUE;
}

/**
 * ddp_scenario_load:
 * See scenario.h.  Returns: (transfer full) or NULL with @error set.
 */
/* A shipped model's or cluster's bare name where a scenario file is expected ("ddpsim predict
 * resnet50"): say which flag was meant rather than "no such file". */
static gboolean
not_a_name(const char *scenario_path, GError **error)
{
  if (strchr(scenario_path, '/') || g_file_test(scenario_path, G_FILE_TEST_EXISTS))
    return TRUE;
  const struct {
    const char *subdir, *suffix, *flag;
  } kinds[] = { { "models", ".model", "--model" }, { "scenarios", ".cluster", "--cluster" } };
  for (gsize i = 0; i < G_N_ELEMENTS(kinds); i++) {
    g_autofree char *found = ddp_datadir_find(scenario_path, kinds[i].subdir, kinds[i].suffix);
    if (found) {
      g_set_error(error, DDP_SCENARIO_ERROR, DDP_SCENARIO_ERROR_INVALID,
                  "%s: no such scenario file; \"%s\" is a shipped %s name: did you mean %s %s?", scenario_path,
                  scenario_path, kinds[i].suffix + 1, kinds[i].flag, scenario_path);
      return FALSE;
    }
  }
  return TRUE;
}

DdpScenario *
ddp_scenario_load(const char *scenario_path, const DdpCliOptions *cli, gboolean gpus_from_cli, GError **error)
{
  g_autoptr(DdpScenario) s = g_new0(DdpScenario, 1);
  ddp_setup_init(&s->setup);
  g_autofree char *model = NULL, *cluster = NULL;
  g_autoptr(DdpKeyFile) kf = NULL;
  if (scenario_path) {
    s->path = g_strdup(scenario_path);
    if (!not_a_name(scenario_path, error))
      return NULL;
    kf = ddp_keyfile_load(scenario_path, error);
    if (!kf || !read_scenario_file(kf, s, &model, &cluster, error))
      return NULL;
  }
  if (!apply_cli(cli, gpus_from_cli, &s->setup, error))
    return NULL;
  /* distributed.py bucket_bytes_cap_default: from 2.4 a passed cap replaces _DEFAULT_FIRST_BUCKET_BYTES
   * (only the scenario key sets the first bucket) */
  const DdpBucketOptions *b = &s->setup.buckets;
  if (kf && ddp_keyfile_has_key(kf, "training", "first_bucket_mb") && b->bucket_cap_given &&
      b->torch_version >= DDP_TORCH_VERSION_CAP_IS_FIRST) {
    ddp_keyfile_set_error(kf, error, DDP_KEYFILE_ERROR_VALUE, "training", "first_bucket_mb",
                          "from PyTorch 2.4 a bucket_cap_mb passed to DDP is also its first bucket: give one of "
                          "bucket_cap_mb and first_bucket_mb, or torch_version 2.3 or earlier");
    return NULL;
  }
  if (cli->model) {
    g_free(model);
    model = g_strdup(cli->model);
  }
  if (cli->cluster) {
    g_free(cluster);
    cluster = g_strdup(cli->cluster);
    g_clear_pointer(&s->cluster, ddp_cluster_free);
  }
  if (!(s->model = ddp_model_load(model ? model : DEFAULT_MODEL, error)))
    return NULL;
  if (!ddp_model_scale_input(s->model, s->setup.seq_len, s->setup.image_size, error))
    return NULL;
  if (s->model->n_fsdp_units > 0 && s->setup.shard.blocks_per_unit > 1 &&
      !wrap_blocks_named(s->model, kf, cli->wrap_blocks != NULL, error))
    return NULL;
  if (!check_overlap_with_ddp(&s->setup, kf, cli, error) ||
      !check_activation_checkpointing(&s->setup, s->model, kf, cli, error))
    return NULL;
  /* the model's usual batch and precision (an LLM's bf16 and small batch) where neither the
   * scenario file nor a flag chose (issue 17) */
  if (kf && ddp_keyfile_has_key(kf, "training", "batch"))
    s->setup.batch_from = "scenario file";
  if (kf && ddp_keyfile_has_key(kf, "training", "precision"))
    s->setup.precision_from = "scenario file";
  if (kf && ddp_keyfile_has_key(kf, "training", "optimizer"))
    s->setup.optimizer_from = "scenario file";
  if (cli->batch)
    s->setup.batch_from = "--batch";
  if (cli->precision)
    s->setup.precision_from = "--precision";
  if (cli->optimizer)
    s->setup.optimizer_from = "--optimizer";
  if (g_str_equal(s->setup.batch_from, "built-in default") && s->model->training_batch > 0) {
    s->setup.batch = s->model->training_batch;
    s->setup.batch_from = "model file";
  }
  if (g_str_equal(s->setup.precision_from, "built-in default") && s->model->training_precision >= 0) {
    s->setup.precision = s->model->training_precision;
    s->setup.precision_from = "model file";
  }
  if (g_str_equal(s->setup.optimizer_from, "built-in default") && s->model->training_optimizer >= 0) {
    s->setup.optimizer = s->model->training_optimizer;
    s->setup.optimizer_from = "model file";
  }
  if (!s->cluster && !(s->cluster = ddp_cluster_load(cluster ? cluster : DEFAULT_CLUSTER, error)))
    return NULL;
  if (!(s->stragglers = ddp_stragglers_parse(s->setup.stragglers, error)))
    return NULL;
  if (gpus_from_cli && !ddp_cluster_check_gpus(s->cluster, s->setup.gpus, NULL, error))
    return NULL;
  g_autoptr(GError) local = NULL;
  if (gpus_from_cli && !ddp_stragglers_check_ranks(s->stragglers, s->setup.gpus, &local)) {
    if (kf && !cli->stragglers)   /* the spec came from the file: name its line */
      ddp_keyfile_set_error(kf, error, DDP_KEYFILE_ERROR_VALUE, "training", "stragglers", "%s",
                            local->message + strlen("--stragglers: "));
    else
      g_propagate_error(error, g_steal_pointer(&local));
    return NULL;
  }
  if (cli->calibration && !(s->calibration = ddp_fit_open(cli->calibration, error)))
    return NULL;
  DdpTermsGiven given = {
    cli->overlap_slowdown || (kf && ddp_keyfile_has_key(kf, "training", "overlap_slowdown")),
    cli->jitter || (kf && ddp_keyfile_has_key(kf, "training", "jitter")),
    cli->step_ms || (kf && ddp_keyfile_has_key(kf, "training", "step_ms")),
  };
  if (s->calibration && !calibrate_cluster(s, cli->calibration, &given, error))
    return NULL;
  return g_steal_pointer(&s);
}
