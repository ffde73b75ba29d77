/* compute — per-layer forward and backward times on one GPU: a roofline (FLOPs at a fraction of
 * peak vs bytes at a fraction of HBM bandwidth, whichever is longer) whose efficiencies depend on
 * the layer kind, the GPU generation, the precision and the kernel's size (small kernels are far
 * from peak), floored by a per-kernel launch cost, behind a host that issues one layer pass at a
 * time (the GPU idles when it gets ahead), or measured
 * times where the model file has them; optimizer and memory-pass costs; and the per-GPU memory
 * footprint.  Pure functions of (model, GPU, precision, batch).  Defaults and sources: compute.c
 * and docs/overheads.md. */
#ifndef DDP_COMPUTE_H
#define DDP_COMPUTE_H

#include <glib.h>
#include "gpu.h"
#include "model.h"

typedef enum { DDP_OPTIMIZER_SGD, DDP_OPTIMIZER_SGD_MOMENTUM, DDP_OPTIMIZER_ADAM, DDP_OPTIMIZER_ADAMW,
               DDP_OPTIMIZER_COUNT } DdpOptimizer;

/* Kernels measured on an H100 (compute.c, "Memory format"); 0 / FALSE: the byte model. */
typedef struct {
  double transpose_rate[2];       /* cuDNN's NCHW<->NHWC transposes, elements per µs per SM, for
                                    2-byte and 4-byte elements (0: read+write of the bytes at
                                    memory_efficiency, FP16/BF16 only) */
  gboolean transpose_tf32;        /* TF32 tensor-core convolutions are transposed too */
  gboolean pointwise_gemm;        /* stride-1 1×1 convolutions run as GEMMs on NCHW: no transposes */
  double batchnorm_nchw_rate;     /* batch norm on NCHW tensors, elements per µs per SM whatever the
                                    element size, or its bytes if slower (0: bytes only) */
  double batchnorm_nhwc_passes;   /* batch norm in channels_last: × its bytes (0: 1) */
  double batchnorm_bf16_rate[2];  /* bf16 batch norm (PyTorch's own kernels, not cuDNN's), elements per
                                    µs per SM, NCHW and channels_last (0: as fp16) */
  double pool_rate[2];            /* pooling, elements per µs per SM, NCHW and channels_last (0:
                                    bytes only) */
} DdpMeasuredKernels;

typedef struct {
  double matmul_efficiency[DDP_PRECISION_COUNT]; /* of peak: a large GEMM (linear layer) */
  double kind_factor[DDP_LAYER_KIND_COUNT];      /* attention: × matmul_efficiency; memory-bound kinds:
                                                    × memory_efficiency; conv: see conv_factor */
  double attention_fp32_factor;  /* attention on fp32 tensors (fp32/tf32 runs, FP32 cores): × the FP32
                                    matmul efficiency instead of kind_factor[attention] */
  double attention_layout_copies; /* head-layout copies around attention, × its own bytes (0: off) */
  double unaligned_gemm_factor;   /* a tensor-core GEMM with a dimension not a multiple of 16 bytes:
                                    this share of the FP16 tensor peak, any precision (0: off) */
  gboolean channels_last;         /* model.to(memory_format=torch.channels_last): no NCHW<->NHWC
                                    transposes around tensor-core convolutions, and cuDNN's NHWC
                                    batch-norm and pooling kernels (FALSE: PyTorch's default NCHW) */
  DdpMeasuredKernels measured;    /* the H100's memory-format kernels (compute.c, "Memory format") */
  double conv_factor[DDP_PRECISION_COUNT];       /* convolution: × matmul_efficiency, by precision */
  double conv_ramp_us[DDP_PRECISION_COUNT];      /* convolution's size ramp (as matmul_ramp_us) */
  double pointwise_conv_factor[DDP_PRECISION_COUNT];   /* a 1×1 convolution (a GEMM over C_in): × matmul_efficiency
                                                   instead of conv_factor (0: conv_factor) */
  double pointwise_conv_ramp_us[DDP_PRECISION_COUNT];  /* its size ramp (with a factor set) */
  double grouped_conv_channels[DDP_PRECISION_COUNT];  /* a grouped convolution with c input channels per group runs at
                                    c / (c + this) of a dense one's rate; 0: no penalty */
  double vector_efficiency;   /* of FP32 peak, for norm/elementwise/pool/embedding FLOPs */
  double memory_efficiency;   /* of HBM bandwidth, a large streaming kernel */
  double matmul_ramp_us;      /* a GEMM-like kernel of this many µs of work at full efficiency runs at
                                 half of it: efficiency(F) = eff · F / (F + F½); 0: no size effect */
  double memory_ramp_us;      /* the same for bytes of memory-bound kernels */
  double kernel_floor_us;     /* no kernel takes less (launch + PyTorch eager dispatch) */
  double host_layer_us;       /* no layer pass takes less: host dispatch per layer (0: off) */
  gboolean generation_floor;  /* no layer pass takes longer than on the built-in GPU of the previous
                                 generation with its defaults (compute.c); FALSE under a calibration */
  gboolean activation_checkpointing; /* every block (ddp_model_layer_blocks) checkpointed: its forward
                                 runs again at the start of its backward (compute.c) */
} DdpComputeOptions;

/* Defaults for @gpu's generation (documented in compute.c). */
void ddp_compute_options_init_gpu(DdpComputeOptions *options, const DdpGpuSpec *gpu);
/* Generation-independent defaults (those of an A100), for callers without a GPU at hand. */
void ddp_compute_options_init(DdpComputeOptions *options);

typedef struct _DdpCompute DdpCompute;

/* Times for @batch samples per GPU.  @options NULL means ddp_compute_options_init_gpu(@gpu).  Free with ddp_compute_free(). */
DdpCompute *ddp_compute_new(const DdpModel *model, const DdpGpuSpec *gpu, DdpPrecision precision,
                            double batch, DdpOptimizer optimizer, const DdpComputeOptions *options);
void ddp_compute_free(DdpCompute *c);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(DdpCompute, ddp_compute_free)

gint64 ddp_compute_forward_ns(const DdpCompute *c, guint layer);
/* Of the step, the time activation checkpointing spends recomputing forward passes in backward
 * (included in the backward times; 0 without checkpointing). */
double ddp_compute_recompute_ns(const DdpCompute *c);
gint64 ddp_compute_backward_ns(const DdpCompute *c, guint layer);
gint64 ddp_compute_optimizer_ns(const DdpCompute *c);
/* Sum of forward, backward and optimizer: the 1-GPU step without DDP. */
gint64 ddp_compute_step_ns(const DdpCompute *c);
/* One elementwise pass reading and writing @bytes (grad → bucket copy, divide, unflatten). */
gint64 ddp_compute_memory_pass_ns(const DdpCompute *c, double bytes);
/* Replaces one layer's times with measured ones (calibration); a negative value keeps the model's. */
void ddp_compute_set_layer_us(DdpCompute *c, guint layer, double forward_us, double backward_us);
/* Adds host work to the issue of @layer's backward pass (DDP's per-bucket collective call); before
 * ddp_compute_scale_to_step(). */
void ddp_compute_add_backward_host_us(DdpCompute *c, guint layer, double us);
/* Idle time the host pipeline added to the step (GPU waiting for the host), in ns. */
double ddp_compute_host_bound_ns(const DdpCompute *c);
/* Rescales forward, backward and optimizer so that ddp_compute_step_ns() == @step_ns (--step-ms). */
void ddp_compute_scale_to_step(DdpCompute *c, gint64 step_ns);

typedef struct {
  double weights, grads, buckets, optimizer_state, activations, runtime_reserve;
  double total;
  gboolean fits;
} DdpMemory;

/* The half-precision copies fp16/bf16 autocast keeps of the linear and convolution parameters
 * (saved for backward; compute.c): counted in DdpMemory.weights under autocast. */
double ddp_compute_autocast_copy_bytes(const DdpModel *model);
/* Per-GPU memory of plain DDP training (documented in compute.c). */
void ddp_compute_memory(const DdpModel *model, const DdpGpuSpec *gpu, DdpPrecision precision,
                        double batch, DdpOptimizer optimizer, gboolean gradient_as_bucket_view,
                        gboolean activation_checkpointing, DdpMemory *out);
/* Per-sample bytes of the activations alive at the peak, fp32 (before autocast's halving): every
 * layer's saved tensors, or with @activation_checkpointing each block's input and one block's
 * recomputed tensors (compute.c). */
double ddp_compute_activation_bytes(const DdpModel *model, gboolean activation_checkpointing);

/* The advice's batch line and its bigger-GPU line (compute.c says what each holds); appended to
 * @out.  Every strategy's advice (strategy.c) shares them. */
void ddp_compute_batch_advice(GString *out, double states, double per_sample, double capacity, double batch,
                              guint accumulate, const char *accumulate_flags, const char *states_what);
void ddp_compute_gpu_advice(GString *out, double total_bytes);
/* When @batch does not fit under plain DDP (@accumulate micro-batches a step): what would, one line
 * each with its bytes per GPU (compute.c); "" when it fits.  Free with g_free(). */
char *ddp_compute_memory_advice(const DdpModel *model, const DdpGpuSpec *gpu, DdpPrecision precision,
                                double batch, guint accumulate, DdpOptimizer optimizer,
                                gboolean gradient_as_bucket_view, gboolean activation_checkpointing);
/* The advice's activation-checkpointing line for a run of @m at @batch whose activations would
 * shrink to @checkpointed bytes (compute.c); appended to @out, nothing when @model cannot be
 * checkpointed. */
void ddp_compute_checkpointing_advice(GString *out, const DdpModel *model, const DdpMemory *m, double checkpointed,
                                      double capacity, double batch);

const char *ddp_optimizer_name(DdpOptimizer o);
int ddp_optimizer_parse(const char *name);   /* -1 if unknown */

#endif
