/* compute — per-layer time and per-GPU memory on one GPU (see compute.h).
 *
 * GPU time of a layer pass = max(FLOPs / (peak · eff_F), bytes / (HBM · eff_B), kernels · kernel
 * floor).  This is the roofline (Williams et al., CACM 2009) with a floor for launch-bound small
 * kernels.  The host issues the passes one by one (host_layer_us each, host_pipeline() below); a
 * pass that the GPU reaches before the host has issued it starts late.  Conv/linear/attention FLOPs run at the precision's tensor-core
 * peak (TF32/FP16/BF16) or FP32 peak; other kinds at the FP32 vector peak.  Bytes are the model's
 * per-sample activation traffic × batch (halved under FP16/BF16 autocast, where activations are
 * 2 bytes) plus parameter traffic: forward reads the weights once, backward reads them and writes
 * their gradients (2×).  Kernels: forward 1, backward 2 (dX and dW) for layers with parameters.
 *
 * Efficiency = kind × generation × precision × size:
 *  - matmul_efficiency[precision] is what a LARGE GEMM reaches, by GPU generation (table below):
 *    readings of cuBLAS throughput at large sizes in NVIDIA's "Matrix Multiplication Background"
 *    guide (docs.nvidia.com/deeplearning/performance, V100 and A100 figures) and of published
 *    H100/B200 cuBLAS/CUTLASS results; TF32 reaches less of its peak than FP16 (operand traffic is
 *    twice as large per FLOP).  Approximate, ±10 %.  The H100 row is lower than H100 GEMM benchmarks:
 *    the GPU-bound fp32 transformer steps measured on a real H100 with PyTorch 2.11
 *    (calibrate/data/fc-vm-H100x1-20261123-torch-steps.jsonl: BERT-base/-large, GPT-2) are
 *    matched within ≈10 % with FP32 at 0.70, where 0.80 left them 9–19 % too fast.
 *  - kind_factor scales it per layer kind.  Convolution (cuDNN implicit GEMM): 0.9 at FP32; on
 *    tensor cores 0.6 at FP16/BF16 and 0.4 at TF32 — ResNet's small-channel layers do not fill the
 *    MMA tiles and NCHW layouts add transposes; these are the factors that bring ResNet-50 within
 *    ≈10 % of NVIDIA's published training throughput (DeepLearningExamples, tests/test-cli.c) and
 *    of PyTorch's DDP benchmark on V100 (training-2.csv) — fitted to those, not measured.  Attention (fused SDPA): 0.75 —
 *    FlashAttention-2 (Dao, 2023) reaches 50–73 % of A100 peak forward and less backward, against
 *    ≈80 % for a large cuBLAS GEMM.  Memory-bound kinds scale memory_efficiency: elementwise 1,
 *    normalisation and pooling 0.9 (two passes with a reduction between them), embedding 0.7
 *    (gather/scatter of rows).
 *  - size: a kernel of F FLOPs reaches eff · F / (F + F½), F½ = peak · eff · matmul_ramp_us: a GEMM
 *    needs enough tiles to fill every SM (wave quantization, NVIDIA's guide above), so a GEMM
 *    worth 2 µs of full-speed work runs at half speed and a 20 µs one at 91 %.  Equivalently the
 *    kernel pays matmul_ramp_us of fixed time.  Memory-bound kernels likewise with memory_ramp_us
 *    (a 1 MB copy does not reach streaming bandwidth).  Backward is two kernels (dX, dW): each gets
 *    half the FLOPs and bytes.
 *  - memory_efficiency 0.75: STREAM-like copy kernels reach 85–92 % of HBM bandwidth on V100,
 *    A100 and H100 (BabelStream, Deakin et al. 2018 and later); PyTorch's eager elementwise
 *    kernels (TensorIterator, vectorised loads, one tensor per launch) less: 0.75.
 * `--calibration` replaces matmul and memory efficiencies with fitted values and `--step-ms`
 * rescales everything to a measured 1-GPU step.
 *
 * Optimizer (PyTorch foreach implementations) is memory-bound: bytes per parameter element read
 * and written — SGD: param r/w + grad r = 3 tensors; momentum adds buf r/w = 5; Adam/AdamW add
 * exp_avg and exp_avg_sq r/w = 7 tensors of the parameter dtype.
 */
#include "compute.h"

#include <math.h>

struct _DdpCompute {
  guint n_layers;
  const guint *backward_order; /* the model's backward_layers: the order the host issues backward */
  double host_ns;          /* host dispatch per layer pass */
  double host_bound_ns;    /* what the host pipeline added to forward + backward + optimizer */
  double *gpu_forward_ns;  /* GPU time of each pass, before the host pipeline */
  double *gpu_backward_ns;
  double gpu_optimizer_ns;
  double *forward_ns;      /* effective: GPU time + the idle gap before it; double until reported:
                              --step-ms scales them */
  double *backward_ns;
  double optimizer_ns;
  double hbm_bytes_per_ns; /* effective */
  double kernel_floor_ns;
};

static const char *const optimizer_names[DDP_OPTIMIZER_COUNT] = { "sgd", "sgd-momentum", "adam", "adamw" };
static const double optimizer_tensor_passes[DDP_OPTIMIZER_COUNT] = { 3, 5, 7, 7 };
static const double optimizer_state_tensors[DDP_OPTIMIZER_COUNT] = { 0, 1, 2, 2 };

const char *
ddp_optimizer_name(DdpOptimizer o)
{
  g_return_val_if_fail(o < DDP_OPTIMIZER_COUNT, "?");
  return optimizer_names[o];
}

int
ddp_optimizer_parse(const char *name)
{
  for (int i = 0; i < DDP_OPTIMIZER_COUNT; i++)
    if (g_ascii_strcasecmp(name, optimizer_names[i]) == 0)
      return i;
  return -1;
}

/* Large-GEMM efficiency of dense peak by generation (rows) and precision (fp32, tf32, fp16,
 * bf16); see the file header.  V100 has no TF32/BF16 units: those run at its FP32 rate (gpu.c). */
static const struct {
  int sm_arch;
  double matmul[DDP_PRECISION_COUNT];
} generation_efficiency[] = {
  { 70, { 0.90, 0.90, 0.85, 0.90 } },   /* V100: SGEMM ≈14 of 15.7, HGEMM ≈105 of 125 TFLOP/s */
  { 80, { 0.90, 0.70, 0.80, 0.80 } },   /* A100: TF32 ≈110 of 156, FP16 ≈250 of 312 */
  { 90, { 0.70, 0.55, 0.60, 0.60 } },   /* H100/H200: below the GEMM benchmarks (FP16 ≈700 of 989):
                                           what PyTorch 2.11 steps reach on a real H100 (below) */
  { 100, { 0.65, 0.50, 0.55, 0.55 } },  /* B200: least certain, scaled like H100 */
};

/**
 * ddp_compute_options_init_gpu:
 * Defaults for @gpu's generation (the newest generation not newer than it).
 */
void
ddp_compute_options_init_gpu(DdpComputeOptions *o, const DdpGpuSpec *gpu)
{
  guint row = 0;
  for (guint i = 0; i < G_N_ELEMENTS(generation_efficiency); i++)
    if (gpu->sm_arch >= generation_efficiency[i].sm_arch)
      row = i;
  for (int p = 0; p < DDP_PRECISION_COUNT; p++)
    o->matmul_efficiency[p] = generation_efficiency[row].matmul[p];
  for (int k = 0; k < DDP_LAYER_KIND_COUNT; k++)
    o->kind_factor[k] = 1.0;
  o->kind_factor[DDP_LAYER_CONV] = 0.90;   /* FP32; tensor-core precisions: conv_tensor_factor */
  o->kind_factor[DDP_LAYER_ATTENTION] = 0.75;
  o->kind_factor[DDP_LAYER_NORM] = 0.9;
  o->kind_factor[DDP_LAYER_POOL] = 0.9;
  o->kind_factor[DDP_LAYER_EMBEDDING] = 0.7;
  o->vector_efficiency = 0.50;
  o->memory_efficiency = 0.75;
  o->matmul_ramp_us = 2.0;
  o->memory_ramp_us = 1.0;
  o->kernel_floor_us = 5.0;
  o->host_layer_us = 0.0;
}

void
ddp_compute_options_init(DdpComputeOptions *o)
{
  DdpGpuSpec a100;
  gboolean found = ddp_gpu_lookup("a100", &a100, NULL);
  g_assert(found);
  ddp_compute_options_init_gpu(o, &a100);
}

/* cuDNN convolutions on tensor cores reach less of the (much higher) peak than at FP32, TF32 least
 * (see the file header): by precision, used instead of kind_factor[conv] where the precision has
 * tensor cores. */
static const double conv_tensor_factor[DDP_PRECISION_COUNT] = { 0.90, 0.40, 0.60, 0.60 };

static gboolean
is_matmul(DdpLayerKind kind)
{
  return kind == DDP_LAYER_CONV || kind == DDP_LAYER_LINEAR || kind == DDP_LAYER_ATTENTION;
}

static double
layer_param_bytes(const DdpModel *model, const DdpLayer *layer)
{
  double bytes = 0;
  for (guint p = layer->first_param; p < layer->first_param + layer->n_params; p++)
    bytes += (double)model->params[p].numel * (double)ddp_dtype_size(model->params[p].dtype);
  return bytes;
}

/* Time of one pass of @kernels kernels sharing @flops and @bytes: each kernel at its size-dependent
 * efficiency (see the file header), the slower of compute and memory, floored. */
static double
pass_ns(double flops, double bytes, double kernels, double flops_per_ns, double flops_ramp,
        double bytes_per_ns, double bytes_ramp, double floor_ns)
{
  double f = flops / kernels, b = bytes / kernels;
  /* F / (peak·eff·F/(F + F½)) = (F + F½) / (peak·eff) */
  double flop_ns = f > 0 ? (f + flops_ramp) / flops_per_ns : 0;
  double byte_ns = b > 0 ? (b + bytes_ramp) / bytes_per_ns : 0;
  return kernels * MAX(MAX(flop_ns, byte_ns), floor_ns);
}

/* One pass of the CPU→GPU pipeline: the host issues it @host after the previous issue, the GPU runs
 * it once issued and once the previous pass is done.  Returns the pass's effective duration (the
 * idle gap it waited plus its GPU time) and advances the two clocks. */
static double
pipeline_pass(double *host_clock, double *gpu_clock, double host_ns, double gpu_ns)
{
  *host_clock += host_ns;
  double start = MAX(*gpu_clock, *host_clock);
  double duration = start - *gpu_clock + gpu_ns;
  *gpu_clock = start + gpu_ns;
  return duration;
}

/* The host issues the step in order — forward layers, backward layers in autograd's order, the
 * optimizer — host_ns per pass, running ahead of the GPU as far as it can (within a step: the
 * step ends in a sync, loss.item()).  Where the GPU gets ahead it idles; that idle time is charged
 * to the pass that waited.  GPU-bound steps pay one host_ns at the start; host-bound ones
 * ≈ passes × host_ns.  Eager PyTorch launches asynchronously (Paszke et al., NeurIPS 2019, §5.3). */
static void
host_pipeline(DdpCompute *c)
{
  double host_clock = 0, gpu_clock = 0, gpu_total = 0;
  for (guint i = 0; i < c->n_layers; i++) {
    c->forward_ns[i] = pipeline_pass(&host_clock, &gpu_clock, c->host_ns, c->gpu_forward_ns[i]);
    gpu_total += c->gpu_forward_ns[i];
  }
  for (guint k = 0; k < c->n_layers; k++) {
    guint i = c->backward_order[k];
    c->backward_ns[i] = pipeline_pass(&host_clock, &gpu_clock, c->host_ns, c->gpu_backward_ns[i]);
    gpu_total += c->gpu_backward_ns[i];
  }
  c->optimizer_ns = pipeline_pass(&host_clock, &gpu_clock, c->host_ns, c->gpu_optimizer_ns);
  gpu_total += c->gpu_optimizer_ns;
  c->host_bound_ns = gpu_clock - gpu_total;
}

/**
 * ddp_compute_new:
 * Returns: (transfer full): per-layer times for @batch samples; never NULL.
 */
DdpCompute *
ddp_compute_new(const DdpModel *model, const DdpGpuSpec *gpu, DdpPrecision precision, double batch,
                DdpOptimizer optimizer, const DdpComputeOptions *options)
{
  DdpComputeOptions defaults;
  if (!options) {
    ddp_compute_options_init_gpu(&defaults, gpu);
    options = &defaults;
  }
  g_assert(batch > 0 && precision < DDP_PRECISION_COUNT && optimizer < DDP_OPTIMIZER_COUNT);
  DdpCompute *c = g_new0(DdpCompute, 1);
  c->n_layers = model->n_layers;
  c->forward_ns = g_new0(double, model->n_layers);
  c->backward_ns = g_new0(double, model->n_layers);
  c->hbm_bytes_per_ns = gpu->hbm_GBs * options->memory_efficiency; /* 1 GB/s = 1 B/ns */
  c->kernel_floor_ns = options->kernel_floor_us * 1e3;
  c->host_ns = options->host_layer_us * 1e3;
  c->backward_order = model->backward_layers;
  gboolean tensor_cores = gpu->peak_tflops[precision] > gpu->peak_tflops[DDP_PRECISION_FP32];
  double matmul_flops_per_ns = gpu->peak_tflops[precision] * 1e3 * options->matmul_efficiency[precision];
  double vector_flops_per_ns = gpu->peak_tflops[DDP_PRECISION_FP32] * 1e3 * options->vector_efficiency;
  double activation_scale = (precision == DDP_PRECISION_FP16 || precision == DDP_PRECISION_BF16) ? 0.5 : 1.0;

  for (guint i = 0; i < model->n_layers; i++) {
    const DdpLayer *layer = &model->layers[i];
    double kind = options->kind_factor[layer->kind];
    if (layer->kind == DDP_LAYER_CONV && tensor_cores)
      kind = conv_tensor_factor[precision];
    double flops_per_ns = is_matmul(layer->kind) ? matmul_flops_per_ns * kind : vector_flops_per_ns;
    double bytes_per_ns = c->hbm_bytes_per_ns * (is_matmul(layer->kind) ? 1.0 : kind);
    double flops_ramp = is_matmul(layer->kind) ? flops_per_ns * options->matmul_ramp_us * 1e3 : 0;
    double bytes_ramp = bytes_per_ns * options->memory_ramp_us * 1e3;
    double weights = layer_param_bytes(model, layer);
    double backward_kernels = layer->n_params > 0 ? 2 : 1;

    if (layer->forward_us >= 0) {
      c->forward_ns[i] = layer->forward_us * 1e3 * batch / model->measured_batch;
    } else {
      c->forward_ns[i] = pass_ns(layer->forward_flops * batch, layer->forward_bytes * batch * activation_scale + weights,
                                 1, flops_per_ns, flops_ramp, bytes_per_ns, bytes_ramp, c->kernel_floor_ns);
    }
    if (layer->backward_us >= 0) {
      c->backward_ns[i] = layer->backward_us * 1e3 * batch / model->measured_batch;
    } else {
      c->backward_ns[i] = pass_ns(layer->backward_flops * batch,
                                  layer->backward_bytes * batch * activation_scale + 2 * weights, backward_kernels,
                                  flops_per_ns, flops_ramp, bytes_per_ns, bytes_ramp, c->kernel_floor_ns);
    }
  }
  double param_bytes = (double)ddp_model_param_bytes(model);
  c->optimizer_ns = MAX(optimizer_tensor_passes[optimizer] * param_bytes / c->hbm_bytes_per_ns,
                        c->kernel_floor_ns);
  c->gpu_forward_ns = g_memdup2(c->forward_ns, model->n_layers * sizeof(double));
  c->gpu_backward_ns = g_memdup2(c->backward_ns, model->n_layers * sizeof(double));
  c->gpu_optimizer_ns = c->optimizer_ns;
  host_pipeline(c);
  return c;
}

void
ddp_compute_free(DdpCompute *c)
{
  if (!c)
    return;
  g_free(c->forward_ns);
  g_free(c->backward_ns);
  g_free(c->gpu_forward_ns);
  g_free(c->gpu_backward_ns);
  g_free(c);
}

gint64
ddp_compute_forward_ns(const DdpCompute *c, guint layer)
{
  g_assert(layer < c->n_layers);
  return (gint64)llround(c->forward_ns[layer]);
}

gint64
ddp_compute_backward_ns(const DdpCompute *c, guint layer)
{
  g_assert(layer < c->n_layers);
  return (gint64)llround(c->backward_ns[layer]);
}

gint64
ddp_compute_optimizer_ns(const DdpCompute *c)
{
  return (gint64)llround(c->optimizer_ns);
}

gint64
ddp_compute_step_ns(const DdpCompute *c)
{
  gint64 total = ddp_compute_optimizer_ns(c);
  for (guint i = 0; i < c->n_layers; i++)
    total += ddp_compute_forward_ns(c, i) + ddp_compute_backward_ns(c, i);
  return total;
}

/* Read @bytes and write @bytes: 2·bytes of HBM traffic, one kernel at least. */
gint64
ddp_compute_memory_pass_ns(const DdpCompute *c, double bytes)
{
  if (bytes <= 0)
    return 0;
  return (gint64)llround(MAX(2.0 * bytes / c->hbm_bytes_per_ns, c->kernel_floor_ns));
}

void
ddp_compute_set_layer_us(DdpCompute *c, guint layer, double forward_us, double backward_us)
{
  g_assert(layer < c->n_layers);
  if (forward_us >= 0)
    c->gpu_forward_ns[layer] = forward_us * 1e3;
  if (backward_us >= 0)
    c->gpu_backward_ns[layer] = backward_us * 1e3;
  host_pipeline(c);
}

void
ddp_compute_scale_to_step(DdpCompute *c, gint64 step_ns)
{
  g_assert(step_ns > 0);
  double current = 0;
  for (guint i = 0; i < c->n_layers; i++)
    current += c->forward_ns[i] + c->backward_ns[i];
  current += c->optimizer_ns;
  double k = (double)step_ns / current;
  for (guint i = 0; i < c->n_layers; i++) {
    c->forward_ns[i] *= k;
    c->backward_ns[i] *= k;
  }
  c->optimizer_ns *= k;
  c->host_bound_ns *= k;
}

/* How much of the step the host pipeline adds to the GPU time: idle gaps where the GPU waited for
 * the host to issue work (after --step-ms rescaling, which scales the whole measured step). */
double
ddp_compute_host_bound_ns(const DdpCompute *c)
{
  return c->host_bound_ns;
}

/**
 * ddp_compute_memory:
 * Per-GPU bytes of plain DDP: weights + gradients (model dtype) + DDP's flat buckets (the same
 * size again unless gradient_as_bucket_view makes .grad a view into them, docs/model.md §1.7) +
 * optimizer state (momentum: 1, Adam: 2 tensors per parameter, in the parameter dtype, as
 * torch.optim keeps them) + saved activations (× batch; halved under FP16/BF16 autocast) + a
 * 1 GiB runtime reserve (CUDA context, cuBLAS/cuDNN workspaces, NCCL buffers).  For FP32 Adam that
 * is 16 bytes/parameter (+4 for buckets): a 7 B model cannot fit an 80 GB GPU.
 */
void
ddp_compute_memory(const DdpModel *model, const DdpGpuSpec *gpu, DdpPrecision precision, double batch,
                   DdpOptimizer optimizer, gboolean gradient_as_bucket_view, DdpMemory *out)
{
  double params = (double)ddp_model_param_bytes(model);
  double activations = 0;
  for (guint i = 0; i < model->n_layers; i++)
    activations += model->layers[i].activation_bytes;
  double activation_scale = (precision == DDP_PRECISION_FP16 || precision == DDP_PRECISION_BF16) ? 0.5 : 1.0;
  out->weights = params;
  out->grads = params;
  out->buckets = gradient_as_bucket_view ? 0 : params;
  out->optimizer_state = optimizer_state_tensors[optimizer] * params;
  out->activations = activations * batch * activation_scale;
  out->runtime_reserve = 1024.0 * 1024 * 1024;
  out->total = out->weights + out->grads + out->buckets + out->optimizer_state + out->activations +
               out->runtime_reserve;
  out->fits = out->total <= gpu->memory_GB * 1e9;
}
