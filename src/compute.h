/* compute — per-layer forward and backward times on one GPU: a roofline (FLOPs at a fraction of
 * peak vs bytes at a fraction of HBM bandwidth, whichever is longer), floored by a per-kernel
 * launch cost, or measured times where the model file has them; optimizer and memory-pass costs;
 * and the per-GPU memory footprint.  Pure functions of (model, GPU, precision, batch). */
#ifndef DDP_COMPUTE_H
#define DDP_COMPUTE_H

#include <glib.h>
#include "gpu.h"
#include "model.h"

typedef enum { DDP_OPTIMIZER_SGD, DDP_OPTIMIZER_SGD_MOMENTUM, DDP_OPTIMIZER_ADAM, DDP_OPTIMIZER_ADAMW,
               DDP_OPTIMIZER_COUNT } DdpOptimizer;

typedef struct {
  double matmul_efficiency[DDP_PRECISION_COUNT]; /* of peak, for conv/linear/attention FLOPs */
  double vector_efficiency;   /* of FP32 peak, for norm/elementwise/pool/embedding FLOPs */
  double memory_efficiency;   /* of HBM bandwidth */
  double kernel_floor_us;     /* no kernel takes less (launch + PyTorch eager dispatch) */
} DdpComputeOptions;

/* Defaults documented in compute.c. */
void ddp_compute_options_init(DdpComputeOptions *options);

typedef struct _DdpCompute DdpCompute;

/* Times for @batch samples per GPU.  @options NULL means defaults.  Free with ddp_compute_free(). */
DdpCompute *ddp_compute_new(const DdpModel *model, const DdpGpuSpec *gpu, DdpPrecision precision,
                            double batch, DdpOptimizer optimizer, const DdpComputeOptions *options);
void ddp_compute_free(DdpCompute *c);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(DdpCompute, ddp_compute_free)

gint64 ddp_compute_forward_ns(const DdpCompute *c, guint layer);
gint64 ddp_compute_backward_ns(const DdpCompute *c, guint layer);
gint64 ddp_compute_optimizer_ns(const DdpCompute *c);
/* Sum of forward, backward and optimizer: the 1-GPU step without DDP. */
gint64 ddp_compute_step_ns(const DdpCompute *c);
/* One elementwise pass reading and writing @bytes (grad → bucket copy, divide, unflatten). */
gint64 ddp_compute_memory_pass_ns(const DdpCompute *c, double bytes);
/* Replaces one layer's times with measured ones (calibration); a negative value keeps the model's. */
void ddp_compute_set_layer_us(DdpCompute *c, guint layer, double forward_us, double backward_us);
/* Rescales forward, backward and optimizer so that ddp_compute_step_ns() == @step_ns (--step-ms). */
void ddp_compute_scale_to_step(DdpCompute *c, gint64 step_ns);

typedef struct {
  double weights, grads, buckets, optimizer_state, activations, runtime_reserve;
  double total;
  gboolean fits;
} DdpMemory;

/* Per-GPU memory of plain DDP training (documented in compute.c). */
void ddp_compute_memory(const DdpModel *model, const DdpGpuSpec *gpu, DdpPrecision precision,
                        double batch, DdpOptimizer optimizer, gboolean gradient_as_bucket_view,
                        DdpMemory *out);

const char *ddp_optimizer_name(DdpOptimizer o);
int ddp_optimizer_parse(const char *name);   /* -1 if unknown */

#endif
