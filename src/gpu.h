/* gpu — built-in GPU specifications (peak dense FLOP/s per precision, HBM bandwidth and size, SMs).
 * Figures are NVIDIA's published datasheet numbers, dense (no sparsity); see gpu.c for sources. */
#ifndef DDP_GPU_H
#define DDP_GPU_H

#include <glib.h>

#define DDP_GPU_ERROR (ddp_gpu_error_quark())
GQuark ddp_gpu_error_quark(void);
typedef enum { DDP_GPU_ERROR_UNKNOWN } DdpGpuError;

typedef enum {
  DDP_PRECISION_FP32,
  DDP_PRECISION_TF32,
  DDP_PRECISION_FP16,
  DDP_PRECISION_BF16,
  DDP_PRECISION_COUNT
} DdpPrecision;

/* A plain value type: copy it freely. */
typedef struct {
  char name[32];
  int sm_arch;                              /* 70 Volta, 80 Ampere, 90 Hopper, 100 Blackwell */
  double peak_tflops[DDP_PRECISION_COUNT];  /* dense tensor/FMA peak, 10^12 FLOP/s */
  double hbm_GBs;                           /* memory bandwidth, 10^9 B/s */
  double memory_GB;                         /* usable device memory, 10^9 B */
  int sms;
  gboolean arm_host;                        /* in a Grace superchip (GB200, GB300): the host CPU is Arm */
} DdpGpuSpec;

/* Looks a built-in GPU up by name (case-insensitive: "v100", "a100", "a100-40gb", "h100", "h200"). */
gboolean ddp_gpu_lookup(const char *name, DdpGpuSpec *out, GError **error);
/* NULL-terminated list of built-in names (static). */
const char *const *ddp_gpu_names(void);

const char *ddp_precision_name(DdpPrecision p);
/* Returns -1 when @name is not fp32/tf32/fp16/bf16. */
int ddp_precision_parse(const char *name);

#endif
