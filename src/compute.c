/* compute — per-layer time and per-GPU memory on one GPU (see compute.h).
 *
 * Time of a layer pass = max(FLOPs / (peak · efficiency), bytes / (HBM · memory efficiency),
 * kernels · kernel floor).  This is the roofline (Williams et al., CACM 2009) with a floor for
 * launch-bound small kernels.  Conv/linear/attention FLOPs run at the precision's tensor-core
 * peak (TF32/FP16/BF16) or FP32 peak; other kinds at the FP32 vector peak.  Bytes are the model's
 * per-sample activation traffic × batch (halved under FP16/BF16 autocast, where activations are
 * 2 bytes) plus parameter traffic: forward reads the weights once, backward reads them and writes
 * their gradients (2×).  Kernels: forward 1, backward 2 (dX and dW) for layers with parameters.
 *
 * Default efficiencies are assumptions, not measurements — achieved fractions that public
 * training runs report (≈40–60 % MFU on tensor cores, ≈70 % of FP32 FMA peak for large GEMMs,
 * ≈70–80 % of HBM bandwidth for streaming kernels); `--calibration` replaces them with fitted
 * values and `--step-ms` rescales everything to a measured 1-GPU step.
 *
 * Optimizer (PyTorch foreach implementations) is memory-bound: bytes per parameter element read
 * and written — SGD: param r/w + grad r = 3 tensors; momentum adds buf r/w = 5; Adam/AdamW add
 * exp_avg and exp_avg_sq r/w = 7 tensors of the parameter dtype.
 */
#include "compute.h"

#include <math.h>

struct _DdpCompute {
  guint n_layers;
  double *forward_ns;      /* double until reported: --step-ms scales them */
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

void
ddp_compute_options_init(DdpComputeOptions *o)
{
  o->matmul_efficiency[DDP_PRECISION_FP32] = 0.70;
  o->matmul_efficiency[DDP_PRECISION_TF32] = 0.55;
  o->matmul_efficiency[DDP_PRECISION_FP16] = 0.50;
  o->matmul_efficiency[DDP_PRECISION_BF16] = 0.50;
  o->vector_efficiency = 0.50;
  o->memory_efficiency = 0.75;
  o->kernel_floor_us = 5.0;
}

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
    ddp_compute_options_init(&defaults);
    options = &defaults;
  }
  g_assert(batch > 0 && precision < DDP_PRECISION_COUNT && optimizer < DDP_OPTIMIZER_COUNT);
  DdpCompute *c = g_new0(DdpCompute, 1);
  c->n_layers = model->n_layers;
  c->forward_ns = g_new0(double, model->n_layers);
  c->backward_ns = g_new0(double, model->n_layers);
  c->hbm_bytes_per_ns = gpu->hbm_GBs * options->memory_efficiency; /* 1 GB/s = 1 B/ns */
  c->kernel_floor_ns = options->kernel_floor_us * 1e3;
  double matmul_flops_per_ns = gpu->peak_tflops[precision] * 1e3 * options->matmul_efficiency[precision];
  double vector_flops_per_ns = gpu->peak_tflops[DDP_PRECISION_FP32] * 1e3 * options->vector_efficiency;
  double activation_scale = (precision == DDP_PRECISION_FP16 || precision == DDP_PRECISION_BF16) ? 0.5 : 1.0;

  for (guint i = 0; i < model->n_layers; i++) {
    const DdpLayer *layer = &model->layers[i];
    double flops_per_ns = is_matmul(layer->kind) ? matmul_flops_per_ns : vector_flops_per_ns;
    double weights = layer_param_bytes(model, layer);
    double backward_kernels = layer->n_params > 0 ? 2 : 1;

    if (layer->forward_us >= 0) {
      c->forward_ns[i] = layer->forward_us * 1e3 * batch / model->measured_batch;
    } else {
      double flop_ns = layer->forward_flops * batch / flops_per_ns;
      double byte_ns = (layer->forward_bytes * batch * activation_scale + weights) / c->hbm_bytes_per_ns;
      c->forward_ns[i] = MAX(MAX(flop_ns, byte_ns), c->kernel_floor_ns);
    }
    if (layer->backward_us >= 0) {
      c->backward_ns[i] = layer->backward_us * 1e3 * batch / model->measured_batch;
    } else {
      double flop_ns = layer->backward_flops * batch / flops_per_ns;
      double byte_ns = (layer->backward_bytes * batch * activation_scale + 2 * weights) / c->hbm_bytes_per_ns;
      c->backward_ns[i] = MAX(MAX(flop_ns, byte_ns), backward_kernels * c->kernel_floor_ns);
    }
  }
  double param_bytes = (double)ddp_model_param_bytes(model);
  c->optimizer_ns = MAX(optimizer_tensor_passes[optimizer] * param_bytes / c->hbm_bytes_per_ns,
                        c->kernel_floor_ns);
  return c;
}

void
ddp_compute_free(DdpCompute *c)
{
  if (!c)
    return;
  g_free(c->forward_ns);
  g_free(c->backward_ns);
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
    c->forward_ns[layer] = forward_us * 1e3;
  if (backward_us >= 0)
    c->backward_ns[layer] = backward_us * 1e3;
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
