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
 * Activation checkpointing (options->activation_checkpointing, docs/model.md §6.6): every block's
 * forward passes are issued again at the start of its backward (torch.utils.checkpoint's
 * non-reentrant recomputation), and memory keeps one input per block (ddp_compute_activation_bytes).
 *
 * Efficiency = kind × generation × precision × size:
 *  - matmul_efficiency[precision] is what a LARGE GEMM reaches, by GPU generation (table below):
 *    readings of cuBLAS throughput at large sizes in NVIDIA's "Matrix Multiplication Background"
 *    guide (docs.nvidia.com/deeplearning/performance, V100 and A100 figures) and of published
 *    H100/B200 cuBLAS/CUTLASS results; TF32 reaches less of its peak than FP16 (operand traffic is
 *    twice as large per FLOP).  Approximate, ±10 %.  The H100 row is lower than H100 GEMM benchmarks:
 *    the GPU-bound fp32 transformer steps measured on a real H100 with PyTorch 2.11
 *    (calibrate/data/fc-vm-H100x1-20261123-torch-steps.jsonl: BERT-base/-large, GPT-2) are
 *    matched within ≈10 % with FP32 at 0.70, where 0.80 left them 9–19 % too fast.  FP16/BF16
 *    0.70 and TF32 0.55 are what the H100's aligned GEMM kernels reach in the traces of BERT-base,
 *    GPT-2 and ViT-B/16 at two batch sizes each (calibrate/data/fc-vm-H100x1-20261127-transformer-
 *    kernels.jsonl: every nvjet/xmma GEMM kernel of a step against the linear layers' FLOPs, least
 *    squares with the 2 µs ramp below; bf16 within ±6 %, TF32 within ±12 %): kernel time on the
 *    GPU, which the VM's slow host does not touch.  NVIDIA H100 SXM's best matmul reaches 0.80 of
 *    the BF16 peak (stas00/ml-engineering, "Maximum Achievable Matmul FLOPS"), above it as a best
 *    shape must be.  FP16/BF16 was 0.60 before 2026-11-27, set on whole steps whose other kernels
 *    it had absorbed; the H100 convolution factors below keep their fitted rates of peak.
 *  - kind_factor scales it per layer kind.  Attention (fused SDPA under autocast): 0.75 on V100 and
 *    A100 — FlashAttention-2 (Dao, 2023) reaches 50–73 % of A100 peak forward and less backward,
 *    against ≈80 % for a large cuBLAS GEMM; 0.64 on H100 and B200, the rate it had when their GEMMs
 *    were at 0.60 and 0.55 (0.45 of the H100's peak; the traces above run cuDNN's SDPA with 64-wide
 *    heads at 0.16–0.22 of it, so this is fast for small heads, and nothing measures LLM-sized
 *    ones).  Memory-bound kinds scale memory_efficiency: elementwise 1,
 *    normalisation and pooling 0.9 (two passes with a reduction between them), embedding 0.7
 *    (gather/scatter of rows).
 *  - Convolution: conv_factor[precision] × matmul_efficiency, with its own size ramp
 *    conv_ramp_us, by generation (table below).  V100/A100: 0.9 at FP32, 0.4 at TF32, 0.6 at
 *    FP16/BF16, ramp 2 µs — ResNet's small-channel layers do not fill the MMA tiles and NCHW layouts
 *    add transposes; these are the factors that bring ResNet-50 within ≈10 % of NVIDIA's published
 *    training throughput (DeepLearningExamples, tests/test-cli.c) and of PyTorch's DDP benchmark
 *    on V100 (training-2.csv) — fitted to those, not measured.
 *    H100 convolutions: fitted to the H100 measurements in calibrate/data (the GPU-bound rows of
 *    fc-vm-H100x1-20261123-torch-steps.jsonl, tests/data/training-h100.csv; PyTorch's defaults:
 *    NCHW, cudnn.benchmark off).  FP32 1.30 (of 0.70: 91 % of the FP32 peak for a large conv —
 *    cuDNN's Winograd/FFT algorithms do fewer FLOPs than counted, the calibration db measured up
 *    to 139 TFLOP/s) with a 140 µs ramp: the ResNet-sized convs (1–7 GFLOP a kernel at batch 32)
 *    run at 17–30 TFLOP/s in the db's cuDNN measurements and the trace of a ResNet-50 step spends
 *    30 ms in conv kernels, most in the legacy FFMA kernels (dgrad_engine, wgrad_alg0_engine) that
 *    cuDNN's heuristics pick without autotuning, while VGG-16's 100-GFLOP convs run near peak.
 *    TF32 0.96 (of 0.55) with a 25 µs ramp, FP16/BF16 1.16 (of 0.60; 0.994 of the 0.70 since)
 *    with 15 µs: least squares on ln(time) over the convolution kernels alone (transposes apart)
 *    of ResNet-50 and VGG-16, NCHW, batch 32–256 (calibrate/data/fc-vm-H100x1-20261127-kernel-
 *    classes.csv, from torch.profiler traces), within 13 %.  Before these traces the factors
 *    (0.60 / 0.75, 60 µs) were fitted to whole steps and had absorbed batch norm and the
 *    transposes below, which made the model's step grow too little with the batch (Lambda's
 *    ResNet-50 at batch 640–1 280 was 8–14 % fast).
 *    1×1 (pointwise) convolutions have factors of their own (pointwise_conv_factor): a 1×1 conv
 *    is a GEMM whose inner dimension is only C_in, without Winograd's saving at FP32, and the
 *    per-conv traces (calibrate/data/fc-vm-H100x1-20261127-conv-transposes.csv) run them at about
 *    half the rate of the 3×3 ones: FP32 ≈21 TFLOP/s at every batch against 33–59, TF32 97–135
 *    against 154–254, FP16 190–237 against 357–667.  Fitted to the 1×1 kernels alone: FP32 0.50
 *    with a 30 µs ramp, TF32 0.84 with 20, FP16/BF16 0.52 (0.446 of 0.70) with 5 (within 6 % at
 *    batch 32–256; ResNet-50 FP32 had been 15–31 % fast at batch 64–128).  The factors above then
 *    describe the k×k convolutions (their own fit gives the same: 1.26/140, 0.94/25, 1.18/15).
 *    B200 takes the H100 values (no measurement).
 *  - Grouped convolutions (the model file's `groups`, ResNeXt) with c input channels per group run
 *    at c / (c + grouped_conv_channels) of a dense one: on the H100 at FP32 cuDNN loops over the
 *    groups with one small legacy kernel each on several streams (the ResNeXt-50 trace: 2 161 conv
 *    kernels against ResNet-50's 298, ≈0.4 ms a grouped layer pass whatever its FLOPs), fitted
 *    96 channels on the ResNeXt-50/101 FP32 rows (256 before the 1×1 factors below, which took
 *    time from ResNeXt's pointwise layers into them); on tensor cores cuDNN has grouped kernels:
 *    8 (the ResNeXt-101 TF32 row).  0 (no penalty) on V100/A100, where nothing was measured.
 *  - Attention on fp32 tensors (fp32 and tf32 runs): PyTorch's memory-efficient SDPA kernel for
 *    float, on the FP32 cores whatever allow_tf32 says, at attention_fp32_factor 0.55 of the FP32
 *    matmul efficiency: the H100 BERT-base fp32 trace spends 10.1 ms in it where 0.75 gave 7.7.
 *    Around it, attention_layout_copies 1.0: eager multi-head attention modules copy q, k, v and
 *    the output between (B, T, H·D) and (B, H, T, D) layouts and the gradients back — the
 *    fused kernel's bytes once more each way, two kernels a pass (the ViT-B/16 trace: 245 copy
 *    kernels, 5.4 ms).
 *  - Unaligned GEMMs: a tensor-core linear layer with a dimension not a multiple of 16 bytes
 *    (8 fp16/bf16, 4 tf32 elements) runs cuBLAS's alignment-1 fallback at unaligned_gemm_factor
 *    0.125 of the GPU's FP16 tensor peak, whatever its precision: the H100 GPT-2 traces' lm_head
 *    (vocabulary 50 257) runs its align1 kernels at 120–123 TFLOP/s in bf16 (cutlass_75 …align1)
 *    and 126 in TF32 (cutlass_80 tensorop_s1688 …align1), 0.12–0.13 of 989.  (It was 0.21 of the
 *    precision's aligned rate, measured in bf16 only, which put the TF32 head at 57 TFLOP/s and
 *    GPT-2's TF32 step 13 % slow.)
 *  - NCHW half-precision convolutions: PyTorch's default memory format is contiguous NCHW, and
 *    cuDNN's tensor-core convolution kernels work on NHWC: for FP16/BF16 it transposes each
 *    activation tensor a kernel reads to NHWC and each it writes back to NCHW ("NCHW-to-NHWC
 *    transformations" to call the Tensor Core operations, cuDNN developer guide, legacy API "Data
 *    and Filter Formats"; the channels_last tutorial in PyTorch's documentation).  On V100 and A100
 *    modelled as one extra read+write pass over every activation byte a convolution pass moves,
 *    two memory-bound kernels per conv kernel; none under `channels_last`.  Not fitted: the byte
 *    counts are the model file's.  TF32/FP32 convolutions pay none there: Lambda's TF32 ResNet-50
 *    in NCHW at batch 640 (tests/data/training-4.csv) is predicted +12 % (A100) without the term —
 *    a choice made looking at those rows; the A100's TF32 conv factor absorbs whatever they pay.
 *    Written after looking at Lambda's AMP rows; checked on rows nothing was fitted to: CSC's V100
 *    AMP runs at batch 32 (training-3.csv, NCHW) 47.5–48.7 ms, 35.3 without, 47.8 with it.  The
 *    A100/V100 FP16 conv factors were set on NVIDIA's published ResNet-50 numbers, which ran
 *    channels_last (DeepLearningExamples' configs: memory_format nhwc), so they stand.
 *  - Memory format on the H100 (and the B200, which takes its values), measured: torch.profiler
 *    traces of ResNet-50 and VGG-16 steps at batch 32–256, fp32/tf32/fp16/bf16, NCHW and
 *    channels_last, split into kernel classes (tools/kernel-summary.py;
 *    calibrate/data/fc-vm-H100x1-20261127-kernel-classes.csv, -conv-transposes.csv, README there).
 *    Three kinds of kernel do not follow the byte model, and take rates per SM (they scale with SMs,
 *    not HBM: a kernel that takes as long on 2-byte as on 4-byte data is not bound by bytes), in
 *    elements (the model file's fp32 bytes / 4) per µs per SM:
 *      transposes  NCHW tensor-core convolutions, TF32 too (float nchwToNhwc kernels in the TF32
 *                  traces): 4 190 for 2-byte, 3 120 for 4-byte elements (VGG-16, batch 256; within
 *                  5 % from batch 64), launched inside cuDNN's call (no dispatch floor).  A stride-1
 *                  1×1 convolution over ≥ 784 output positions is a GEMM on NCHW and cuDNN runs it
 *                  without transposes: ResNet-50's 56×56 and 28×28 pointwise convolutions have none,
 *                  its 14×14 and 7×7 ones have them (the per-conv traces); with that rule its
 *                  transposes come out within 12 % at batch 32–256, fp16 and TF32.
 *      batch norm  (a norm layer in a network without attention) on NCHW tensors: cuDNN's
 *                  "1C11" kernels take 0.86 of the fp32 time for half the bytes in fp16: 5 100
 *                  (ResNet-50 fp16, batch 256; 15 % faster at batch 32), the longer of that and the
 *                  byte time in any precision (FP32 follows its bytes on the H100, 0.95–0.98, and
 *                  the elements on the H200, 42.6 ms at batch 256 where 5 100 per SM gives 41.8 —
 *                  applied to FP32 after looking at that H200 figure); bf16 runs PyTorch's own
 *                  kernels: 3 450 NCHW, 7 800 channels_last; channels_last fp16/fp32 stays bound by
 *                  bytes but makes fewer passes: × 0.67 (cuDNN's semi-persistent NHWC kernels;
 *                  0.64–0.72 measured).
 *      pooling     2 000 NCHW, 2 600 channels_last (VGG-16 and ResNet-50; the same for fp16 and
 *                  fp32: PyTorch's max_pool kernels are bound by elements).
 *    Each pass takes the longer of its byte time and its element time.  The generation floor runs
 *    the predecessor with the same kernels at its own SM count.  Modelled GPU time against the
 *    traces' kernel time (with the 1×1 factors above): median 3.6 % over the 48 traces, ResNet-50
 *    within 5 % (FP32 at batch 64–128: 3–10 % fast), VGG-16 2–12 % fast (its conv-bias add and
 *    reduction run as slow broadcast kernels, not modelled).  Not modelled: FP32 convolutions in
 *    channels_last are transposed the other way (4–16 ms at batch 32–128).
 *    What it did to the public rows nothing was fitted to (training-4/-5, NCHW, batch 640–3 328):
 *    H100 −8.2…−15.5 % → −2.4…−9.9 %, H200 −16/−26 % → −2.3/−0.2 %, B200 −38/−57 % → −4/−22 %.
 *    Checked on an H200 of our own (same SMs, 1.43× the bandwidth; calibrate/data/README.md):
 *    pooling and NCHW fp16 batch norm take 0.94–1.00 of the H100's time, the byte-bound kernels
 *    0.71–0.87, as the rates per SM say; its 8 steps predicted within 10 % (median 2.9 %).
 *  - Autocast (FP16/BF16): activations are 2 bytes where autocast runs the op in half precision
 *    (matmul outputs; in a BatchNorm network, everything); in a network with attention, layer_norm
 *    and softmax are on autocast's fp32 list and the residual stream they feed is fp32 by type
 *    promotion, so norms and elementwise layers move 4-byte activations.  Each matmul layer pays
 *    its casts: forward the fp32 weights to half (1.5 × their bytes) and, with an fp32 stream, its
 *    input; backward the same back to fp32.  (The H100 GPT-2 bf16 trace: 14.9 ms of copy/cast
 *    kernels, as much as its elementwise kernels.)
 *  - size: a kernel of F FLOPs reaches eff · F / (F + F½), F½ = peak · eff · matmul_ramp_us: a GEMM
 *    needs enough tiles to fill every SM (wave quantization, NVIDIA's guide above), so a GEMM
 *    worth 2 µs of full-speed work runs at half speed and a 20 µs one at 91 %.  Equivalently the
 *    kernel pays matmul_ramp_us of fixed time.  Memory-bound kernels likewise with memory_ramp_us
 *    (a 1 MB copy does not reach streaming bandwidth).  Backward is two kernels (dX, dW): each gets
 *    half the FLOPs and bytes.
 *  - memory_efficiency 0.75: STREAM-like copy kernels reach 85–92 % of HBM bandwidth on V100,
 *    A100 and H100 (BabelStream, Deakin et al. 2018 and later); PyTorch's eager elementwise
 *    kernels (TensorIterator, vectorised loads, one tensor per launch) less: 0.75.
 *  - Generation floor: on a healthy server no layer pass takes longer than on the built-in GPU of
 *    the previous generation (H100 → A100, B200 → H100, A100 → V100) with that GPU's own defaults.
 *    Each generation exceeds its predecessor in SMs, clocks, FP32 and tensor throughput per SM and
 *    HBM bandwidth (gpu.c's datasheets), and cuBLAS/cuDNN still carry the older architectures'
 *    kernels, so the predecessor's time for the same work is an upper bound.  Without it the H100
 *    convolution ramps (fitted at batch 32–64 on one machine, above) charged every small kernel
 *    60–140 µs: ResNet-50 bf16 came out at 76 samples/s on an H100 against 197 on an A100 at batch
 *    1.  Grouped convolutions are not floored: they are the one term measured slower on an H100
 *    (the ResNeXt traces) than the older generations' defaults, which have no group term because
 *    nothing was measured there.  Off under a calibration: that describes the measured machine.
 * `--calibration` replaces matmul and memory efficiencies with fitted values and `--step-ms`
 * rescales everything to a measured 1-GPU step.
 *
 * Optimizer (PyTorch 2.x foreach implementations, the default on CUDA) is memory-bound: tensor-sized
 * passes over memory, counted from torch/optim (sgd.py _multi_tensor_sgd, adam.py _multi_tensor_adam):
 *   SGD           params.add_(grads): param r/w + grad r = 3;
 *   SGD momentum  bufs.mul_ (2), bufs.add_(grads) (3), params.add_(bufs) (3) = 8;
 *   Adam          exp_avgs.lerp_(grads) (3), exp_avg_sqs.mul_ (2), .addcmul_(grads, grads) (3: the
 *                 same grad twice), denom = sqrt (2), .div_ (2), .add_(eps) (2),
 *                 params.addcdiv_(exp_avgs, denom) (4) = 18;
 *   AdamW         Adam + params.mul_(1 - lr·wd) (2) = 20.
 * The H100 steps (calibrate/data) measure SGD momentum at 0.38/1.32/4.04 ms for ResNet-50/BERT-base/
 * BERT-large: 8 passes at 0.75 of HBM give 0.33/1.40/4.27 (5 passes, the fused minimum, 0.20/0.87/2.67).
 */
#include "compute.h"

#include "ranges.h"

#include <math.h>

struct _DdpCompute {
  guint n_layers;
  const guint *backward_order; /* the model's backward_layers: the order the host issues backward */
  double host_ns;          /* host dispatch per layer pass */
  double *backward_host_extra_ns; /* more host work in a backward pass's hooks (DDP's collective
                                     calls, ddp_compute_add_backward_host_us); NULL: none */
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
  int *layer_block;        /* [n_layers] each layer's checkpointed block (-1: none); NULL without
                              activation checkpointing */
  double recompute_ns;     /* of the backward times: the recomputed forward passes */
};

/* H100 convolutions (see the file header): fitted to the H100 measurements in calibrate/data. */
#define H100_CONV_FP32 1.30
#define H100_CONV_TF32 0.96
#define H100_CONV_HALF 0.994   /* 0.696 of the FP16 peak: fitted as 1.16 × the GEMMs' former 0.60 */
#define H100_CONV_RAMP_FP32 140.0
#define H100_CONV_RAMP_TF32 25.0
#define H100_CONV_RAMP_HALF 15.0
/* Memory-format kernels measured on an H100 (file header, "Memory format"): elements per µs per SM */
#define H100_TRANSPOSE_RATE_2B 4190.0
#define H100_TRANSPOSE_RATE_4B 3120.0
#define H100_BATCHNORM_NCHW_RATE 5100.0
#define H100_BATCHNORM_NHWC_PASSES 0.67
#define H100_BATCHNORM_BF16_RATE_NCHW 3450.0
#define H100_BATCHNORM_BF16_RATE_NHWC 7800.0
#define H100_POOL_RATE_NCHW 2000.0
#define H100_POOL_RATE_NHWC 2600.0
/* A stride-1 1×1 convolution with at least this many output positions per image runs as a GEMM on
 * NCHW tensors, without transposes (cuDNN's choice on the H100: ResNet-50's 56×56 and 28×28 stages
 * do, its 14×14 and 7×7 stages do not). */
#define POINTWISE_GEMM_MIN_POSITIONS 784.0
/* 1×1 convolutions on the H100 (file header): fitted to their own kernels in the traces */
#define H100_POINTWISE_FP32 0.50
#define H100_POINTWISE_TF32 0.84
#define H100_POINTWISE_HALF 0.446   /* 0.312 of the FP16 peak: fitted as 0.52 × the GEMMs' former 0.60 */
#define H100_POINTWISE_RAMP_FP32 30.0
#define H100_POINTWISE_RAMP_TF32 20.0
#define H100_POINTWISE_RAMP_HALF 5.0
#define H100_GROUPED_FP32 96.0
#define H100_GROUPED_TC 8.0
#define ATTENTION_FP32_FACTOR 0.55
#define ATTENTION_LAYOUT_COPIES 1.0
#define UNALIGNED_GEMM_FACTOR 0.125

static const char *const optimizer_names[DDP_OPTIMIZER_COUNT] = { "sgd", "sgd-momentum", "adam", "adamw" };
static const double optimizer_tensor_passes[DDP_OPTIMIZER_COUNT] = { 3, 8, 18, 20 };
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
 * bf16), and the convolution factors and size ramps by precision; see the file header.  V100 has
 * no TF32/BF16 units: those run at its FP32 rate (gpu.c), and so do its convolutions there. */
static const struct {
  int sm_arch;
  const char *predecessor;  /* the built-in GPU of the previous generation: the generation floor */
  double matmul[DDP_PRECISION_COUNT];
  double conv[DDP_PRECISION_COUNT];
  double conv_ramp_us[DDP_PRECISION_COUNT];
  double grouped_conv_channels[DDP_PRECISION_COUNT];
  double pointwise_conv[DDP_PRECISION_COUNT];        /* 0: as conv */
  double pointwise_conv_ramp_us[DDP_PRECISION_COUNT];
  gboolean measured_kernels;   /* the H100's memory-format kernels (file header); FALSE: the byte model */
  double attention;            /* fused attention: × the matmul efficiency (kind_factor) */
} generation_efficiency[] = {
  /* V100: SGEMM ≈14 of 15.7, HGEMM ≈105 of 125 TFLOP/s; conv factors fitted to ResNet-50's
   * published throughput (tests/test-cli.c, training-2.csv), ramp as GEMMs */
  { 70, NULL, { 0.90, 0.90, 0.85, 0.90 }, { 0.90, 0.90, 0.60, 0.90 }, { 2, 2, 2, 2 }, { 0, 0, 0, 0 },
    { 0, 0, 0, 0 }, { 0, 0, 0, 0 }, FALSE, 0.75 },
  /* A100: TF32 ≈110 of 156, FP16 ≈250 of 312; conv as V100 (DeepLearningExamples, test-cli.c) */
  { 80, "v100", { 0.90, 0.70, 0.80, 0.80 }, { 0.90, 0.40, 0.60, 0.60 }, { 2, 2, 2, 2 }, { 0, 0, 0, 0 },
    { 0, 0, 0, 0 }, { 0, 0, 0, 0 }, FALSE, 0.75 },
  /* H100/H200: FP32 and TF32 what PyTorch 2.11's transformer steps reach on a real H100; FP16/BF16
   * what its aligned GEMM kernels reach in the traces (file header).  Convolutions: fitted to the
   * H100 measurements in calibrate/data (file header, "H100 convolutions"): PyTorch's defaults
   * (NCHW, cudnn.benchmark off) */
  { 90, "a100", { 0.70, 0.55, 0.70, 0.70 }, { H100_CONV_FP32, H100_CONV_TF32, H100_CONV_HALF, H100_CONV_HALF },
    { H100_CONV_RAMP_FP32, H100_CONV_RAMP_TF32, H100_CONV_RAMP_HALF, H100_CONV_RAMP_HALF },
    { H100_GROUPED_FP32, H100_GROUPED_TC, H100_GROUPED_TC, H100_GROUPED_TC },
    { H100_POINTWISE_FP32, H100_POINTWISE_TF32, H100_POINTWISE_HALF, H100_POINTWISE_HALF },
    { H100_POINTWISE_RAMP_FP32, H100_POINTWISE_RAMP_TF32, H100_POINTWISE_RAMP_HALF, H100_POINTWISE_RAMP_HALF }, TRUE,
    0.64 },
  /* B200: least certain, scaled like H100 (FP16/BF16 × 0.70/0.60 with the H100's); convolutions as
   * H100 (no measurement) */
  { 100, "h100", { 0.65, 0.50, 0.64, 0.64 }, { H100_CONV_FP32, H100_CONV_TF32, H100_CONV_HALF, H100_CONV_HALF },
    { H100_CONV_RAMP_FP32, H100_CONV_RAMP_TF32, H100_CONV_RAMP_HALF, H100_CONV_RAMP_HALF },
    { H100_GROUPED_FP32, H100_GROUPED_TC, H100_GROUPED_TC, H100_GROUPED_TC },
    { H100_POINTWISE_FP32, H100_POINTWISE_TF32, H100_POINTWISE_HALF, H100_POINTWISE_HALF },
    { H100_POINTWISE_RAMP_FP32, H100_POINTWISE_RAMP_TF32, H100_POINTWISE_RAMP_HALF, H100_POINTWISE_RAMP_HALF }, TRUE,
    0.64 },
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
  for (int p = 0; p < DDP_PRECISION_COUNT; p++) {
    o->matmul_efficiency[p] = generation_efficiency[row].matmul[p];
    o->conv_factor[p] = generation_efficiency[row].conv[p];
    o->conv_ramp_us[p] = generation_efficiency[row].conv_ramp_us[p];
    o->grouped_conv_channels[p] = generation_efficiency[row].grouped_conv_channels[p];
    o->pointwise_conv_factor[p] = generation_efficiency[row].pointwise_conv[p];
    o->pointwise_conv_ramp_us[p] = generation_efficiency[row].pointwise_conv_ramp_us[p];
  }
  for (int k = 0; k < DDP_LAYER_KIND_COUNT; k++)
    o->kind_factor[k] = 1.0;
  o->kind_factor[DDP_LAYER_CONV] = o->conv_factor[DDP_PRECISION_FP32];  /* unused: conv_factor */
  o->kind_factor[DDP_LAYER_ATTENTION] = generation_efficiency[row].attention;
  o->attention_fp32_factor = ATTENTION_FP32_FACTOR;
  o->attention_layout_copies = ATTENTION_LAYOUT_COPIES;
  o->unaligned_gemm_factor = UNALIGNED_GEMM_FACTOR;
  o->channels_last = FALSE;
  o->activation_checkpointing = FALSE;
  static const DdpMeasuredKernels h100_kernels = {
    .transpose_rate = { H100_TRANSPOSE_RATE_2B, H100_TRANSPOSE_RATE_4B }, .transpose_tf32 = TRUE,
    .pointwise_gemm = TRUE, .batchnorm_nchw_rate = H100_BATCHNORM_NCHW_RATE,
    .batchnorm_nhwc_passes = H100_BATCHNORM_NHWC_PASSES,
    .batchnorm_bf16_rate = { H100_BATCHNORM_BF16_RATE_NCHW, H100_BATCHNORM_BF16_RATE_NHWC },
    .pool_rate = { H100_POOL_RATE_NCHW, H100_POOL_RATE_NHWC },
  };
  o->measured = generation_efficiency[row].measured_kernels ? h100_kernels : (DdpMeasuredKernels){ 0 };
  o->kind_factor[DDP_LAYER_NORM] = 0.9;
  o->kind_factor[DDP_LAYER_POOL] = 0.9;
  o->kind_factor[DDP_LAYER_EMBEDDING] = 0.7;
  o->vector_efficiency = 0.50;
  o->memory_efficiency = 0.75;
  o->matmul_ramp_us = 2.0;
  o->memory_ramp_us = 1.0;
  o->kernel_floor_us = 5.0;
  o->host_layer_us = 0.0;
  o->generation_floor = generation_efficiency[row].predecessor != NULL;
}

/* The generation floor (file header): the GPU time of every pass on @gpu's predecessor, the built-in
 * GPU of the previous generation with its own defaults (and its own floor, recursively).  NULL when
 * @gpu's generation has none. */
static DdpCompute *
predecessor_compute(const DdpModel *model, const DdpGpuSpec *gpu, DdpPrecision precision, double batch,
                    DdpOptimizer optimizer, const DdpComputeOptions *current)
{
  const char *name = NULL;
  for (guint i = 0; i < G_N_ELEMENTS(generation_efficiency); i++)
    if (gpu->sm_arch >= generation_efficiency[i].sm_arch)
      name = generation_efficiency[i].predecessor;
  DdpGpuSpec previous;
  if (!name || !ddp_gpu_lookup(name, &previous, NULL))
    return NULL;
  DdpComputeOptions o;
  ddp_compute_options_init_gpu(&o, &previous);
  /* the same memory format, and the same measured kernels at the predecessor's own SM count: the
   * older GPU runs the same cuDNN and PyTorch kernels */
  o.channels_last = current->channels_last;
  o.measured = current->measured;
  o.activation_checkpointing = FALSE;   /* the floor is per pass: recomputation is added on top */
  return ddp_compute_new(model, &previous, precision, batch, optimizer, &o);
}

void
ddp_compute_options_init(DdpComputeOptions *o)
{
  DdpGpuSpec a100;
  gboolean found = ddp_gpu_lookup("a100", &a100, NULL);
  g_assert(found);
  ddp_compute_options_init_gpu(o, &a100);
}

static gboolean
is_matmul(DdpLayerKind kind)
{
  return kind == DDP_LAYER_CONV || kind == DDP_LAYER_LINEAR || kind == DDP_LAYER_ATTENTION;
}

/* Whether a linear layer's GEMM has a dimension that is not a multiple of @align elements.  A layer
 * with a weight has its dims in the weight's shape; a weight-tied one (GPT-2's lm_head) has none,
 * and its dims are recovered from its costs per sample of T = seq_len tokens: forward FLOPs
 * 2·T·din·dout and forward bytes 4·T·(din + dout) (tools/gen-models.py, linear()), the roots of
 * x² − (din + dout)·x + din·dout. */
static gboolean
linear_unaligned(const DdpModel *model, const DdpLayer *layer, gint64 align)
{
  if (layer->n_params > 0) {
    const DdpParam *w = &model->params[layer->first_param];
    for (int d = 0; d < w->ndim; d++)
      if (w->shape[d] % align != 0)
        return TRUE;
    return FALSE;
  }
  if (model->seq_len <= 0 || layer->forward_flops <= 0 || layer->forward_bytes <= 0)
    return FALSE;
  double t = (double)model->seq_len;
  double sum = layer->forward_bytes / (4 * t), product = layer->forward_flops / (2 * t);
  double disc = sum * sum - 4 * product;
  if (disc < 0)
    return FALSE;
  double a = llround((sum + sqrt(disc)) / 2), b = llround((sum - sqrt(disc)) / 2);
  if (a < 1 || b < 1 || fabs(a * b - product) > 0.5 || fabs(a + b - sum) > 0.5)
    return FALSE;   /* not a plain GEMM's costs: say nothing */
  return (gint64)a % align != 0 || (gint64)b % align != 0;
}

static double
layer_param_bytes(const DdpModel *model, const DdpLayer *layer)
{
  double bytes = 0;
  for (guint p = layer->first_param; p < layer->first_param + layer->n_params; p++)
    bytes += (double)model->params[p].numel * (double)ddp_dtype_size(model->params[p].dtype);
  return bytes;
}

/* Whether @layer is a 1×1 convolution (weight out, in/groups, 1, 1). */
static gboolean
conv_is_pointwise(const DdpModel *model, const DdpLayer *layer)
{
  if (layer->n_params == 0)
    return FALSE;
  const DdpParam *w = &model->params[layer->first_param];   /* out, in/groups, kh, kw */
  return w->ndim == 4 && w->shape[2] == 1 && w->shape[3] == 1;
}

/* A convolution's size ramp at @precision: a 1×1 one's own where set (pointwise_conv_factor). */
static double
conv_ramp_us(const DdpModel *model, const DdpLayer *layer, const DdpComputeOptions *options, DdpPrecision precision)
{
  if (options->pointwise_conv_factor[precision] > 0 && conv_is_pointwise(model, layer))
    return options->pointwise_conv_ramp_us[precision];
  return options->conv_ramp_us[precision];
}

/* A convolution's factor at @precision: conv_factor (pointwise_conv_factor for a 1×1 one, where
 * set), slowed for a grouped convolution (c input channels per group: c / (c + grouped_conv_channels)). */
static double
conv_kind(const DdpModel *model, const DdpLayer *layer, const DdpComputeOptions *options, DdpPrecision precision)
{
  double kind = options->pointwise_conv_factor[precision] > 0 && conv_is_pointwise(model, layer)
                  ? options->pointwise_conv_factor[precision]
                  : options->conv_factor[precision];
  if (layer->groups > 1 && layer->n_params > 0 && options->grouped_conv_channels[precision] > 0) {
    double per_group = (double)model->params[layer->first_param].shape[1]; /* weight: out, in/groups, kh, kw */
    kind *= per_group / (per_group + options->grouped_conv_channels[precision]);
  }
  return kind;
}

/* A stride-1 1×1 convolution over at least POINTWISE_GEMM_MIN_POSITIONS output positions: cuDNN runs
 * it as a GEMM on NCHW tensors, without transposes (file header, "Memory format").  Input and output
 * sizes per image come from the model file's counts: forward FLOPs = 2 · out elements · (in
 * channels per group) · kh · kw, forward bytes = 4 · (in + out elements). */
static gboolean
conv_pointwise_gemm(const DdpModel *model, const DdpLayer *layer)
{
  if (!conv_is_pointwise(model, layer))
    return FALSE;
  const DdpParam *w = &model->params[layer->first_param];   /* out, in/groups, 1, 1 */
  if (w->shape[0] <= 0 || w->shape[1] <= 0)
    return FALSE;
  double in_channels = (double)w->shape[1] * MAX(layer->groups, 1);
  double out_elements = layer->forward_flops / (2.0 * (double)w->shape[1]);
  double in_elements = layer->forward_bytes / 4 - out_elements;
  double out_positions = out_elements / (double)w->shape[0];
  double in_positions = in_elements / in_channels;
  return fabs(in_positions - out_positions) <= 0.01 * out_positions && out_positions >= POINTWISE_GEMM_MIN_POSITIONS;
}

/* Batch norm and pooling as the H100 runs them (file header, "Memory format"), for one pass of
 * @layer moving @bytes per sample (the model file's fp32 bytes): batch norm — a norm layer in a
 * network without attention — in channels_last makes fewer passes (× batchnorm_nhwc_passes of
 * *@pass_ns); on NCHW tensors it is bound by elements as well as bytes (batchnorm_nchw_rate); bf16
 * runs PyTorch's own kernels, bound by elements in either format (batchnorm_bf16_rate).  Pooling is
 * bound by elements in either format (pool_rate): *@pass_ns, the byte model's time, becomes the
 * longer of the two. */
static void
memory_format_kernels(const DdpLayer *layer, const DdpComputeOptions *options, const DdpGpuSpec *gpu,
                      DdpPrecision precision, double batch, gboolean fp32_stream, double bytes, double *pass_ns)
{
  int format = options->channels_last ? 1 : 0;
  double element_rate = 0;
  if (layer->kind == DDP_LAYER_NORM && !fp32_stream) {
    if (options->channels_last && options->measured.batchnorm_nhwc_passes > 0)
      *pass_ns *= options->measured.batchnorm_nhwc_passes;
    if (precision == DDP_PRECISION_BF16 && options->measured.batchnorm_bf16_rate[format] > 0)
      element_rate = options->measured.batchnorm_bf16_rate[format];
    else if (!options->channels_last)
      element_rate = options->measured.batchnorm_nchw_rate;
  } else if (layer->kind == DDP_LAYER_POOL) {
    element_rate = options->measured.pool_rate[format];
  }
  if (element_rate > 0)
    *pass_ns = MAX(*pass_ns, bytes / 4 * batch / (element_rate * gpu->sms * 1e-3));
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
  int recomputed = -1;   /* blocks run backward in reverse forward order: the last one recomputed */
  c->recompute_ns = 0;
  for (guint k = 0; k < c->n_layers; k++) {
    guint i = c->backward_order[k];
    double extra = c->backward_host_extra_ns ? c->backward_host_extra_ns[i] : 0;
    double recompute = 0;
    int b = c->layer_block ? c->layer_block[i] : -1;
    if (b >= 0 && b != recomputed) {
      /* the block's first backward op unpacks a saved tensor, and the checkpoint reruns the block's
       * forward (its layers in forward order, issued like any pass) before that op runs */
      recomputed = b;
      for (guint j = 0; j < c->n_layers; j++)
        if (c->layer_block[j] == b) {
          recompute += pipeline_pass(&host_clock, &gpu_clock, c->host_ns, c->gpu_forward_ns[j]);
          gpu_total += c->gpu_forward_ns[j];
        }
      c->recompute_ns += recompute;
    }
    c->backward_ns[i] = recompute + pipeline_pass(&host_clock, &gpu_clock, c->host_ns + extra, c->gpu_backward_ns[i]);
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
  if (options->activation_checkpointing) {
    c->layer_block = g_new(int, model->n_layers);
    ddp_model_layer_blocks(model, c->layer_block);
  }
  double matmul_flops_per_ns = gpu->peak_tflops[precision] * 1e3 * options->matmul_efficiency[precision];
  double vector_flops_per_ns = gpu->peak_tflops[DDP_PRECISION_FP32] * 1e3 * options->vector_efficiency;
  gboolean tensor_cores = gpu->peak_tflops[precision] > gpu->peak_tflops[DDP_PRECISION_FP32];
  gboolean autocast = precision == DDP_PRECISION_FP16 || precision == DDP_PRECISION_BF16;
  /* Attention on fp32 tensors (fp32 and tf32 runs) is PyTorch's memory-efficient SDPA kernel for
   * float, FFMA on the FP32 cores whatever allow_tf32 says (FlashAttention needs fp16/bf16). */
  DdpPrecision attention_precision = autocast ? precision : DDP_PRECISION_FP32;
  double attention_flops_per_ns = gpu->peak_tflops[attention_precision] * 1e3 *
                                  options->matmul_efficiency[attention_precision];
  /* Under autocast, activations are 2 bytes where autocast runs the op in half precision: matmul
   * outputs, and in a BatchNorm network (batch_norm is not on autocast's fp32 list) everything that
   * follows them.  In a network with attention (a transformer), layer_norm and softmax are on
   * autocast's fp32 list: LayerNorm reads and writes 4 bytes, and its fp32 output makes the
   * residual stream, and the elementwise ops on it, fp32 (type promotion: fp32 + half = fp32). */
  gboolean fp32_stream = ddp_model_has_kind(model, DDP_LAYER_ATTENTION);

  for (guint i = 0; i < model->n_layers; i++) {
    const DdpLayer *layer = &model->layers[i];
    double kind = options->kind_factor[layer->kind];
    double ramp_us = options->matmul_ramp_us;
    double matmul_rate = matmul_flops_per_ns;
    if (layer->kind == DDP_LAYER_ATTENTION) {
      matmul_rate = attention_flops_per_ns;
      if (!autocast)
        kind = options->attention_fp32_factor;
    }
    if (layer->kind == DDP_LAYER_CONV) {
      kind = conv_kind(model, layer, options, precision);
      ramp_us = conv_ramp_us(model, layer, options, precision);
    }
    /* A GEMM with a dimension that is not a multiple of 16 bytes (8 fp16/bf16 or 4 tf32 elements)
     * cannot use the aligned tensor-core kernels: cuBLAS falls back to alignment-1 kernels, which
     * run at a fixed share of the FP16 tensor peak in either precision (the H100 GPT-2 traces: its
     * lm_head, vocabulary 50 257, at 120–126 TFLOP/s in bf16 and TF32; NVIDIA's "Matrix
     * Multiplication Background" guide on alignment).  FP32 (FFMA) kernels do not care. */
    if (layer->kind == DDP_LAYER_LINEAR && precision != DDP_PRECISION_FP32 && tensor_cores &&
        options->unaligned_gemm_factor > 0 &&
        linear_unaligned(model, layer, precision == DDP_PRECISION_TF32 ? 4 : 8)) {
      matmul_rate = gpu->peak_tflops[DDP_PRECISION_FP16] * 1e3 * options->unaligned_gemm_factor;
      kind = 1.0;
    }
    /* allow_tf32 lets cuDNN and cuBLAS run TF32 tensor-core kernels; it does not force them.  On a
     * GPU whose TF32 peak is no higher than its FP32 one (GeForce Ada: 82.6 TFLOP/s both) the FP32
     * kernels are in the running too, and the faster path is taken: a GEMM or convolution there
     * runs at the better of its TF32 and FP32 rates (FP32's factors and ramp). */
    if (precision == DDP_PRECISION_TF32 && (layer->kind == DDP_LAYER_CONV || layer->kind == DDP_LAYER_LINEAR) &&
        gpu->peak_tflops[DDP_PRECISION_TF32] <= gpu->peak_tflops[DDP_PRECISION_FP32]) {
      double fp32_rate = gpu->peak_tflops[DDP_PRECISION_FP32] * 1e3 * options->matmul_efficiency[DDP_PRECISION_FP32];
      double fp32_kind = layer->kind == DDP_LAYER_CONV ? conv_kind(model, layer, options, DDP_PRECISION_FP32)
                                                       : options->kind_factor[layer->kind];
      if (fp32_rate * fp32_kind > matmul_rate * kind) {
        matmul_rate = fp32_rate;
        kind = fp32_kind;
        ramp_us = layer->kind == DDP_LAYER_CONV ? conv_ramp_us(model, layer, options, DDP_PRECISION_FP32)
                                                : options->matmul_ramp_us;
      }
    }
    double activation_scale = 1.0;
    if (autocast) {
      if (is_matmul(layer->kind) || layer->kind == DDP_LAYER_POOL || layer->kind == DDP_LAYER_EMBEDDING ||
          ((layer->kind == DDP_LAYER_ELEMENTWISE || layer->kind == DDP_LAYER_NORM) && !fp32_stream))
        activation_scale = 0.5;
    }
    double flops_per_ns = is_matmul(layer->kind) ? matmul_rate * kind : vector_flops_per_ns;
    double bytes_per_ns = c->hbm_bytes_per_ns * (is_matmul(layer->kind) ? 1.0 : kind);
    double flops_ramp = is_matmul(layer->kind) ? flops_per_ns * ramp_us * 1e3 : 0;
    double bytes_ramp = bytes_per_ns * options->memory_ramp_us * 1e3;
    double weights = layer_param_bytes(model, layer);
    double backward_kernels = layer->n_params > 0 ? 2 : 1;
    /* Autocast's casts around a matmul layer, one elementwise kernel each: forward casts the fp32
     * weights to half (read 4, write 2 bytes an element: 1.5 × their fp32 bytes) and, in a network
     * with an fp32 stream, the input (≈ half of forward_bytes, fp32: 0.75 × that); backward casts
     * the weight gradient and the input gradient back to fp32 (the same bytes). */
    double cast_bytes = 0;
    if (autocast && is_matmul(layer->kind) && layer->kind != DDP_LAYER_ATTENTION)
      cast_bytes = 1.5 * weights + (fp32_stream ? 0.75 * 0.5 * layer->forward_bytes * batch : 0);
    /* Eager multi-head attention modules (HF BERT/GPT-2, torchvision's nn.MultiheadAttention) move
     * q, k, v and the output between (batch, tokens, heads·dim) and (batch, heads, tokens, dim)
     * with contiguous copies, and backward copies the gradients back: ≈ the fused kernel's own
     * traffic once more each way (the H100 traces: 5.4 ms of copy kernels in a ViT-B/16 step).
     * Two kernels a pass. */
    double layout_fwd_ns = 0, layout_bwd_ns = 0;
    if (layer->kind == DDP_LAYER_ATTENTION && options->attention_layout_copies > 0) {
      double bytes_ramp_plain = c->hbm_bytes_per_ns * options->memory_ramp_us * 1e3;
      layout_fwd_ns = pass_ns(0, options->attention_layout_copies * layer->forward_bytes * batch * activation_scale, 2, 1, 0,
                              c->hbm_bytes_per_ns, bytes_ramp_plain, c->kernel_floor_ns);
      layout_bwd_ns = pass_ns(0, options->attention_layout_copies * layer->backward_bytes * batch * activation_scale, 2, 1, 0,
                              c->hbm_bytes_per_ns, bytes_ramp_plain, c->kernel_floor_ns);
    }
    /* NCHW tensor-core convolutions (file header, "Memory format"): cuDNN transposes the tensors
     * its kernels read and write to NHWC and back.  Measured kernels (the H100): the elements a
     * pass moves at a measured rate per SM, TF32 too, stride-1 pointwise convolutions with large
     * images excepted; otherwise each activation byte once more, read and written, FP16/BF16. */
    double transpose_fwd_ns = 0, transpose_bwd_ns = 0;
    int element_size = autocast ? 0 : 1;
    gboolean transposed = layer->kind == DDP_LAYER_CONV && !options->channels_last && tensor_cores &&
                          (autocast || (precision == DDP_PRECISION_TF32 && options->measured.transpose_tf32)) &&
                          !(options->measured.pointwise_gemm && conv_pointwise_gemm(model, layer));
    if (transposed && options->measured.transpose_rate[element_size] > 0) {
      /* elements per ns; launched inside cuDNN's call: no dispatch floor of their own */
      double rate = options->measured.transpose_rate[element_size] * gpu->sms * 1e-3;
      transpose_fwd_ns = layer->forward_bytes / 4 * batch / rate;
      transpose_bwd_ns = layer->backward_bytes / 4 * batch / rate;
    } else if (transposed && autocast) {
      double bytes_ramp_plain = c->hbm_bytes_per_ns * options->memory_ramp_us * 1e3;
      transpose_fwd_ns = pass_ns(0, 2 * layer->forward_bytes * batch * activation_scale, 2, 1, 0,
                                 c->hbm_bytes_per_ns, bytes_ramp_plain, c->kernel_floor_ns);
      transpose_bwd_ns = pass_ns(0, 2 * layer->backward_bytes * batch * activation_scale, 2 * backward_kernels, 1,
                                 0, c->hbm_bytes_per_ns, bytes_ramp_plain, c->kernel_floor_ns);
    }
    double cast_ns = cast_bytes > 0 ? pass_ns(0, cast_bytes, weights > 0 && fp32_stream ? 2 : 1, 1, 0,
                                              c->hbm_bytes_per_ns, c->hbm_bytes_per_ns * options->memory_ramp_us * 1e3,
                                              c->kernel_floor_ns)
                                    : 0;

    if (layer->forward_us >= 0) {
      c->forward_ns[i] = layer->forward_us * 1e3 * batch / model->measured_batch;
    } else {
      c->forward_ns[i] = pass_ns(layer->forward_flops * batch, layer->forward_bytes * batch * activation_scale + weights,
                                 1, flops_per_ns, flops_ramp, bytes_per_ns, bytes_ramp, c->kernel_floor_ns) +
                         cast_ns + layout_fwd_ns + transpose_fwd_ns;
      memory_format_kernels(layer, options, gpu, precision, batch, fp32_stream, layer->forward_bytes,
                            &c->forward_ns[i]);
    }
    if (layer->backward_us >= 0) {
      c->backward_ns[i] = layer->backward_us * 1e3 * batch / model->measured_batch;
    } else {
      c->backward_ns[i] = pass_ns(layer->backward_flops * batch,
                                  layer->backward_bytes * batch * activation_scale + 2 * weights, backward_kernels,
                                  flops_per_ns, flops_ramp, bytes_per_ns, bytes_ramp, c->kernel_floor_ns) +
                          cast_ns + layout_bwd_ns + transpose_bwd_ns;
      memory_format_kernels(layer, options, gpu, precision, batch, fp32_stream, layer->backward_bytes,
                            &c->backward_ns[i]);
    }
  }
  double param_bytes = (double)ddp_model_param_bytes(model);
  c->optimizer_ns = MAX(optimizer_tensor_passes[optimizer] * param_bytes / c->hbm_bytes_per_ns,
                        c->kernel_floor_ns);
  /* The generation floor, except for grouped convolutions: the one kind measured slower on an H100
   * than the older generations' defaults say (file header). */
  g_autoptr(DdpCompute) previous = options->generation_floor
                                     ? predecessor_compute(model, gpu, precision, batch, optimizer, options)
                                     : NULL;
  for (guint i = 0; previous && i < model->n_layers; i++) {
    if (model->layers[i].kind == DDP_LAYER_CONV && model->layers[i].groups > 1)
      continue;
    c->forward_ns[i] = MIN(c->forward_ns[i], previous->gpu_forward_ns[i]);
    c->backward_ns[i] = MIN(c->backward_ns[i], previous->gpu_backward_ns[i]);
  }
  if (previous)
    c->optimizer_ns = MIN(c->optimizer_ns, previous->gpu_optimizer_ns);

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
  g_free(c->backward_host_extra_ns);
  g_free(c->layer_block);
  g_free(c);
}

gint64
ddp_compute_forward_ns(const DdpCompute *c, guint layer)
{
  g_assert(layer < c->n_layers);
  return ddp_time_from_ns(c->forward_ns[layer]);
}

double
ddp_compute_recompute_ns(const DdpCompute *c)
{
  return c->recompute_ns;
}

gint64
ddp_compute_backward_ns(const DdpCompute *c, guint layer)
{
  g_assert(layer < c->n_layers);
  return ddp_time_from_ns(c->backward_ns[layer]);
}

gint64
ddp_compute_optimizer_ns(const DdpCompute *c)
{
  return ddp_time_from_ns(c->optimizer_ns);
}

gint64
ddp_compute_step_ns(const DdpCompute *c)
{
  /* whole ns per layer as the simulator uses them, summed in double: saturates, never overflows */
  double total = (double)ddp_compute_optimizer_ns(c);
  for (guint i = 0; i < c->n_layers; i++)
    total += (double)ddp_compute_forward_ns(c, i) + (double)ddp_compute_backward_ns(c, i);
  return ddp_time_from_ns(total);
}

/* Read @bytes and write @bytes: 2·bytes of HBM traffic, one kernel at least. */
gint64
ddp_compute_memory_pass_ns(const DdpCompute *c, double bytes)
{
  if (bytes <= 0)
    return 0;
  return ddp_time_from_ns(MAX(2.0 * bytes / c->hbm_bytes_per_ns, c->kernel_floor_ns));
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

/**
 * ddp_compute_add_backward_host_us:
 * Adds @us of host time to the issue of layer @layer's backward pass: work its autograd hooks do on
 * the host beyond the per-pass dispatch (DDP launching a bucket's collective there, ddp.c).  It
 * delays the host's issue of every later pass, so it shows in the step only where the host paces
 * it (host_pipeline).  Call before ddp_compute_scale_to_step().
 */
void
ddp_compute_add_backward_host_us(DdpCompute *c, guint layer, double us)
{
  g_assert(layer < c->n_layers && us >= 0);
  if (!c->backward_host_extra_ns)
    c->backward_host_extra_ns = g_new0(double, c->n_layers);
  c->backward_host_extra_ns[layer] += us * 1e3;
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
  c->recompute_ns *= k;
}

/* How much of the step the host pipeline adds to the GPU time: idle gaps where the GPU waited for
 * the host to issue work (after --step-ms rescaling, which scales the whole measured step). */
double
ddp_compute_host_bound_ns(const DdpCompute *c)
{
  return c->host_bound_ns;
}

/**
 * ddp_compute_autocast_copy_bytes:
 * See compute.h.  autocast_mode.cpp cached_cast: inside an autocast region every fp32 leaf tensor
 * that requires grad and goes into an fp16/bf16 op (a linear's or convolution's weight and bias) is
 * cast once and cached; the layer saves the cast for its backward, so at the start of backward
 * every such copy is alive: 2 bytes per parameter of the model's linear and convolution layers.
 */
double
ddp_compute_autocast_copy_bytes(const DdpModel *model)
{
  double elements = 0;
  for (guint i = 0; i < model->n_layers; i++) {
    const DdpLayer *l = &model->layers[i];
    if (l->kind != DDP_LAYER_LINEAR && l->kind != DDP_LAYER_CONV)
      continue;
    for (guint k = 0; k < l->n_params; k++)
      elements += (double)model->params[l->first_param + k].numel;
  }
  return 2.0 * elements;
}

/**
 * ddp_compute_activation_bytes:
 * See compute.h.  Without checkpointing, every layer's saved tensors are alive when backward starts.
 * With every block checkpointed (torch.utils.checkpoint, non-reentrant: the forward inside a block
 * runs under saved_tensors_hooks that keep nothing, and the checkpoint keeps the block's inputs to
 * rerun it), what stays is each block's input ([model] block_input_bytes) and the saved tensors of
 * the layers outside every block; in backward the block being recomputed holds all its own saved
 * tensors until its backward is done, one block at a time (the largest counts).  Counted together
 * as the peak: the head's tensors are freed before the first block's backward, so this is an upper
 * bound by at most the smaller of the two.
 */
double
ddp_compute_activation_bytes(const DdpModel *model, gboolean activation_checkpointing)
{
  double total = 0;
  if (!activation_checkpointing) {
    for (guint i = 0; i < model->n_layers; i++)
      total += model->layers[i].activation_bytes;
    return total;
  }
  g_autofree int *block = g_new(int, MAX(model->n_layers, 1));
  guint n_blocks = ddp_model_layer_blocks(model, block);
  g_autofree double *inside = g_new0(double, MAX(n_blocks, 1));
  for (guint i = 0; i < model->n_layers; i++) {
    if (block[i] < 0)
      total += model->layers[i].activation_bytes;
    else
      inside[block[i]] += model->layers[i].activation_bytes;
  }
  double largest = 0;
  for (guint b = 0; b < n_blocks; b++)
    largest = MAX(largest, inside[b]);
  return total + n_blocks * model->block_input_bytes + largest;
}

/**
 * ddp_compute_memory:
 * Per-GPU bytes of plain DDP: weights (with, under FP16/BF16 autocast, the cached half copies of
 * ddp_compute_autocast_copy_bytes) + gradients (model dtype) + DDP's flat buckets (the same
 * size again unless gradient_as_bucket_view makes .grad a view into them, docs/model.md §1.7) +
 * optimizer state (momentum: 1, Adam: 2 tensors per parameter, in the parameter dtype, as
 * torch.optim keeps them) + saved activations (ddp_compute_activation_bytes × batch; halved under
 * FP16/BF16 autocast) + a
 * 1 GiB runtime reserve (CUDA context, cuBLAS/cuDNN workspaces, NCCL buffers).  For FP32 Adam that
 * is 16 bytes/parameter (+4 for buckets): a 7 B model cannot fit an 80 GB GPU.
 */
void
ddp_compute_memory(const DdpModel *model, const DdpGpuSpec *gpu, DdpPrecision precision, double batch,
                   DdpOptimizer optimizer, gboolean gradient_as_bucket_view, gboolean activation_checkpointing,
                   DdpMemory *out)
{
  double params = (double)ddp_model_param_bytes(model);
  double activations = ddp_compute_activation_bytes(model, activation_checkpointing);
  gboolean autocast = precision == DDP_PRECISION_FP16 || precision == DDP_PRECISION_BF16;
  double activation_scale = autocast ? 0.5 : 1.0;
  out->weights = params + (autocast ? ddp_compute_autocast_copy_bytes(model) : 0);
  out->grads = params;
  out->buckets = gradient_as_bucket_view ? 0 : params;
  out->optimizer_state = optimizer_state_tensors[optimizer] * params;
  out->activations = activations * batch * activation_scale;
  out->runtime_reserve = 1024.0 * 1024 * 1024;
  out->total = out->weights + out->grads + out->buckets + out->optimizer_state + out->activations +
               out->runtime_reserve;
  out->fits = out->total <= gpu->memory_GB * 1e9;
}

/**
 * ddp_compute_batch_advice:
 * The batch line of the advice for a memory of @states + batch × @per_sample bytes (every
 * strategy's is affine in the batch: only the activations grow with it) that does not fit
 * @capacity at @batch: the largest whole batch below @batch that fits, and the largest divisor of
 * @batch not above it, with --accumulate (and @accumulate_flags) keeping the step's @batch ×
 * @accumulate samples; or, when batch 1 does not fit either, that @states_what take @states before
 * any activation.
 */
void
ddp_compute_batch_advice(GString *out, double states, double per_sample, double capacity, double batch,
                         guint accumulate, const char *accumulate_flags, const char *states_what)
{
  if (states + per_sample > capacity) {
    g_string_append_printf(out, "no batch fits: %s take %.2f GB before any activation (%.2f GB at batch 1)\n", states_what,
                           states / 1e9, (states + per_sample) / 1e9);
    return;
  }
  if (batch <= 1)
    return;
  double fit = per_sample > 0 ? floor((capacity - states) / per_sample) : batch - 1;
  fit = CLAMP(fit, 1, batch - 1);
  double micro = fit;
  while (micro > 1 && fmod(batch, micro) != 0)
    micro--;
  g_string_append_printf(out, "batch %.0f fits (%.2f GB); --batch %.0f --accumulate %.0f%s keeps %.0f samples a step (%.2f GB)\n",
                         fit, (states + fit * per_sample) / 1e9, micro, batch / micro * accumulate, accumulate_flags,
                         batch * accumulate, (states + micro * per_sample) / 1e9);
}

/**
 * ddp_compute_gpu_advice:
 * The built-in GPUs with room for @total_bytes as they are, on one line (none: nothing appended).
 */
void
ddp_compute_gpu_advice(GString *out, double total_bytes)
{
  GString *gpus = g_string_new(NULL);
  for (const char *const *name = ddp_gpu_names(); *name; name++) {
    DdpGpuSpec other;
    if (ddp_gpu_lookup(*name, &other, NULL) && other.memory_GB * 1e9 >= total_bytes)
      g_string_append_printf(gpus, "%s%s (%.0f GB)", gpus->len ? ", " : "", other.name, other.memory_GB);
  }
  if (gpus->len)
    g_string_append_printf(out, "as it is, it fits a GPU with more memory: %s\n", gpus->str);
  g_string_free(gpus, TRUE);
}

/**
 * ddp_compute_checkpointing_advice:
 * See compute.h: "--activation-checkpointing keeps one input per block: X GB at batch B (fits)",
 * with what it costs (each block's forward once more in backward), when the model file has blocks
 * and says what each keeps.
 */
void
ddp_compute_checkpointing_advice(GString *out, const DdpModel *model, const DdpMemory *m, double checkpointed,
                                 double capacity, double batch)
{
  if (!ddp_model_checkpointable(model, NULL))
    return;
  double total = m->total - m->activations + checkpointed;
  g_string_append_printf(out, "--activation-checkpointing keeps one input per block (activations %.2f -> %.2f GB; "
                         "each block's forward runs again in backward): %.2f GB at batch %.0f%s\n",
                         m->activations / 1e9, checkpointed / 1e9, total / 1e9, batch, total <= capacity ? " (fits)" : "");
}

/**
 * ddp_compute_memory_advice:
 * What would fit when @batch does not (issue 17): one line per way out, each with the bytes per GPU
 * it needs, from ddp_compute_memory() — the largest batch that fits with --accumulate keeping the
 * samples per step, activation checkpointing (where the model file says what a block keeps),
 * gradient_as_bucket_view (no bucket copy of the gradients), plain SGD (no optimizer state), the
 * built-in GPUs with room for it, and sharding the states (ZeRO/FSDP) when the states alone do not
 * fit.
 * Returns: (transfer full): the lines, each ending in a newline; "" when @batch fits.
 */
char *
ddp_compute_memory_advice(const DdpModel *model, const DdpGpuSpec *gpu, DdpPrecision precision, double batch,
                          guint accumulate, DdpOptimizer optimizer, gboolean gradient_as_bucket_view,
                          gboolean activation_checkpointing)
{
  GString *out = g_string_new(NULL);
  DdpMemory m;
  ddp_compute_memory(model, gpu, precision, batch, optimizer, gradient_as_bucket_view, activation_checkpointing, &m);
  if (m.fits)
    return g_string_free(out, FALSE);
  double capacity = gpu->memory_GB * 1e9;
  DdpMemory one;
  ddp_compute_memory(model, gpu, precision, 1, optimizer, gradient_as_bucket_view, activation_checkpointing, &one);
  double states = one.total - one.activations;
  ddp_compute_batch_advice(out, states, one.activations, capacity, batch, accumulate, "",
                           "weights, gradients, buckets, optimizer state and runtime");
  if (!activation_checkpointing) {
    DdpMemory ac;
    ddp_compute_memory(model, gpu, precision, batch, optimizer, gradient_as_bucket_view, TRUE, &ac);
    ddp_compute_checkpointing_advice(out, model, &m, ac.activations, capacity, batch);
  }
  if (!gradient_as_bucket_view) {
    DdpMemory v;
    ddp_compute_memory(model, gpu, precision, batch, optimizer, TRUE, activation_checkpointing, &v);
    ddp_compute_memory(model, gpu, precision, 1, optimizer, TRUE, activation_checkpointing, &one);
    g_string_append_printf(out, "--gradient-as-bucket-view drops the bucket copy: %.2f GB at batch %.0f%s", v.total / 1e9,
                           batch, v.fits ? " (fits)" : "");
    if (batch > 1)
      g_string_append_printf(out, ", %.2f GB at batch 1%s", one.total / 1e9, one.fits ? " (fits)" : "");
    g_string_append_c(out, '\n');
  }
  if (optimizer != DDP_OPTIMIZER_SGD) {
    DdpMemory o;
    ddp_compute_memory(model, gpu, precision, 1, DDP_OPTIMIZER_SGD, TRUE, activation_checkpointing, &o);
    g_string_append_printf(out, "plain SGD (no optimizer state) with --gradient-as-bucket-view: %.2f GB at batch 1%s\n",
                           o.total / 1e9, o.fits ? " (fits)" : "");
  }
  ddp_compute_gpu_advice(out, m.total);
  if (states > capacity)
    g_string_append_printf(out, "the states alone need %.2f GB: shard them across the GPUs (ZeRO/FSDP); plain DDP "
                           "keeps all of them on every GPU\n", states / 1e9);
  return g_string_free(out, FALSE);
}
