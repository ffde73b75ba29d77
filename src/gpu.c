/* gpu — built-in GPU specifications.
 *
 * Peak figures are NVIDIA's datasheet numbers for the SXM parts, DENSE (the "with sparsity"
 * figures are 2× these), in 10^12 FLOP/s.  Memory is the device memory CUDA reports
 * (cudaMemGetInfo total), in 10^9 bytes, since that is what a fit check must compare against.
 *   V100 SXM2 32GB  — Tesla V100 datasheet (2020): FP32 15.7, FP16 tensor 125; HBM2 900 GB/s.
 *                     No TF32/BF16 hardware: TF32 runs as FP32, BF16 is emulated (we use FP32 rate).
 *   A100 SXM4 80GB  — A100 datasheet (2021): FP32 19.5, TF32 156, FP16/BF16 312; HBM2e 2039 GB/s.
 *   A100 SXM4 40GB  — same compute; HBM2 1555 GB/s.
 *   H100 SXM5 80GB  — H100 datasheet (2023): FP32 67, TF32 494.7, FP16/BF16 989.4; HBM3 3.35 TB/s.
 *   H200 SXM 141GB  — H200 datasheet (2024): H100 compute; HBM3e 4.8 TB/s.
 *   B200 HGX 180GB  — HGX B200 datasheet (2025): TF32 1100, FP16/BF16 2250 dense; HBM3e 8 TB/s;
 *                     FP32 (non-tensor) 80 is our reading of the sheet and is least certain.
 *   GB200 (NVL72)   — GB200 NVL72 specification (2024), per GPU = the rack's figures / 72, tensor
 *                     figures there are with sparsity, halved here: FP16/BF16 2500, TF32 1250,
 *                     FP32 80 (5 760 / 72); 13.4 TB HBM3e = 186 GB at 8 TB/s (576 TB/s / 72).
 *   GB300 (NVL72)   — GB300 NVL72 specification (2025), per GPU the same way: FP16/BF16 2500,
 *                     TF32 1250, FP32 80 (as GB200: our reading); 20.7 TB HBM3e = 288 GB at 8 TB/s;
 *                     160 SMs; compute capability 10.3.  memory_GB is the spec's total less the
 *                     ~3 % CUDA keeps (as B200's 191.5 of 192): an estimate.
 *   GeForce RTX 4090 — NVIDIA Ada Lovelace GPU architecture whitepaper v1.0 (2022), GeForce RTX 4090
 *                     column: sm_89, 128 SMs, FP32 82.6; tensor TF32 82.6, FP16 and BF16 165.2 with
 *                     FP32 accumulate (what mixed-precision training uses; 330.4 is FP16 accumulate);
 *                     24 GB GDDR6X at 1008 GB/s (24564 MiB as nvidia-smi reports it).  Used by the
 *                     validation clusters of the PCIe-only 8x RTX 4090 nccl-tests curves.
 * Calibration (`--calibration DB`) replaces the efficiency these peaks are multiplied by.
 */
#include "gpu.h"

#include <string.h>

G_DEFINE_QUARK(ddp-gpu-error-quark, ddp_gpu_error)

typedef struct {
  const char *const aliases[4];
  DdpGpuSpec spec;
} BuiltinGpu;

static const BuiltinGpu builtin_gpus[] = {
  { { "v100", "v100-32gb", "v100-sxm2", NULL },
    { "V100-SXM2-32GB", 70, { 15.7, 15.7, 125.0, 15.7 }, 900.0, 34.09, 80, FALSE } },
  { { "a100", "a100-80gb", "a100-sxm4-80gb", NULL },
    { "A100-SXM4-80GB", 80, { 19.5, 156.0, 312.0, 312.0 }, 2039.0, 85.09, 108, FALSE } },
  { { "a100-40gb", "a100-sxm4-40gb", NULL, NULL },
    { "A100-SXM4-40GB", 80, { 19.5, 156.0, 312.0, 312.0 }, 1555.0, 42.30, 108, FALSE } },
  { { "h100", "h100-sxm", "h100-80gb", NULL },
    { "H100-SXM5-80GB", 90, { 67.0, 494.7, 989.4, 989.4 }, 3350.0, 85.03, 132, FALSE } },
  { { "h200", "h200-sxm", "h200-141gb", NULL },
    { "H200-SXM-141GB", 90, { 67.0, 494.7, 989.4, 989.4 }, 4800.0, 150.76, 132, FALSE } },
  { { "b200", "b200-sxm", NULL, NULL },
    { "B200-SXM-180GB", 100, { 80.0, 1100.0, 2250.0, 2250.0 }, 8000.0, 191.5, 148, FALSE } },
  { { "gb200", "gb200-nvl72", NULL, NULL },
    { "GB200-186GB", 100, { 80.0, 1250.0, 2500.0, 2500.0 }, 8000.0, 180.4, 148, TRUE } },
  { { "gb300", "gb300-nvl72", NULL, NULL },
    { "GB300-288GB", 103, { 80.0, 1250.0, 2500.0, 2500.0 }, 8000.0, 279.4, 160, TRUE } },
  { { "rtx4090", "rtx-4090", "geforce-rtx-4090", NULL },
    { "GeForce-RTX-4090", 89, { 82.6, 82.6, 165.2, 165.2 }, 1008.0, 25.757, 128, FALSE } },
};

static const char *const builtin_names[] = { "v100", "a100", "a100-40gb", "h100", "h200", "b200", "gb200", "gb300", "rtx4090", NULL };

/**
 * ddp_gpu_lookup:
 * @name: a built-in name or alias, case-insensitive
 * @out: (out): filled with a copy of the spec on success
 *
 * Returns: FALSE with DDP_GPU_ERROR_UNKNOWN when @name is not built in.
 */
gboolean
ddp_gpu_lookup(const char *name, DdpGpuSpec *out, GError **error)
{
  for (gsize i = 0; i < G_N_ELEMENTS(builtin_gpus); i++) {
    for (gsize j = 0; builtin_gpus[i].aliases[j]; j++) {
      if (g_ascii_strcasecmp(name, builtin_gpus[i].aliases[j]) == 0) {
        *out = builtin_gpus[i].spec;
        return TRUE;
      }
    }
  }
  g_autofree char *list = g_strjoinv(", ", (char **)builtin_names);
  g_set_error(error, DDP_GPU_ERROR, DDP_GPU_ERROR_UNKNOWN, "unknown GPU \"%s\" (built in: %s)", name, list);
  return FALSE;
}

const char *const *
ddp_gpu_names(void)
{
  return builtin_names;
}

static const char *const precision_names[DDP_PRECISION_COUNT] = { "fp32", "tf32", "fp16", "bf16" };

const char *
ddp_precision_name(DdpPrecision p)
{
  g_return_val_if_fail(p < DDP_PRECISION_COUNT, "?");
  return precision_names[p];
}

int
ddp_precision_parse(const char *name)
{
  for (int i = 0; i < DDP_PRECISION_COUNT; i++)
    if (g_ascii_strcasecmp(name, precision_names[i]) == 0)
      return i;
  return -1;
}
