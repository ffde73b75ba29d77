/* conv — the convolution probe: cuDNN forward, backward-data (dX) and backward-filter (dW) of one
 * NCHW convolution (plan.c derives the shape from a model layer).
 *
 * As PyTorch with torch.backends.cudnn.benchmark = False (its default): the algorithm is cuDNN's
 * heuristic first choice (cudnnGet…Algorithm_v7) among those whose workspace fits; math mode
 * CUDNN_FMA_MATH for fp32 (no TF32: allow_tf32 off), CUDNN_DEFAULT_MATH for tf32 (TF32 allowed),
 * CUDNN_TENSOR_OP_MATH for fp16/bf16; accumulation in fp32 for every precision. */
#include "cuda-check.h"

/* Largest workspace offered to an algorithm: PyTorch caps it by free memory; 1 GiB keeps the
 * heuristic's first choice in practice without exhausting small GPUs. */
static const size_t workspace_limit = (size_t)1 << 30;

/* The four descriptors of one convolution, destroyed on scope exit. */
struct ConvDescs {
  cudnnTensorDescriptor_t x = nullptr, y = nullptr;
  cudnnFilterDescriptor_t w = nullptr;
  cudnnConvolutionDescriptor_t conv = nullptr;
  ConvDescs() = default;
  ConvDescs(const ConvDescs &) = delete;
  ConvDescs &operator=(const ConvDescs &) = delete;
  ~ConvDescs()
  {
    if (x)
      cudnnDestroyTensorDescriptor(x);
    if (y)
      cudnnDestroyTensorDescriptor(y);
    if (w)
      cudnnDestroyFilterDescriptor(w);
    if (conv)
      cudnnDestroyConvolutionDescriptor(conv);
  }
};

static const char *const fwd_algo_names[] = { "IMPLICIT_GEMM", "IMPLICIT_PRECOMP_GEMM", "GEMM", "DIRECT", "FFT",
                                              "FFT_TILING", "WINOGRAD", "WINOGRAD_NONFUSED" };
static const char *const bwd_data_algo_names[] = { "ALGO_0", "ALGO_1", "FFT", "FFT_TILING", "WINOGRAD",
                                                   "WINOGRAD_NONFUSED" };
static const char *const bwd_filter_algo_names[] = { "ALGO_0", "ALGO_1", "FFT", "ALGO_3", "WINOGRAD",
                                                     "WINOGRAD_NONFUSED", "FFT_TILING" };

static const char *
algo_name(const char *const *names, gsize n, int algo)
{
  return algo >= 0 && (gsize)algo < n ? names[algo] : "?";
}

/* First heuristic choice that succeeds and fits the workspace limit; UNSUPPORTED when none. */
template <typename Perf>
static gboolean
pick(const Perf *perf, int returned, int *algo, size_t *workspace, GError **error)
{
  for (int i = 0; i < returned; i++) {
    if (perf[i].status == CUDNN_STATUS_SUCCESS && perf[i].memory <= workspace_limit) {
      *algo = (int)perf[i].algo;
      *workspace = perf[i].memory;
      return TRUE;
    }
  }
  g_set_error(error, DDP_CAL_ERROR, DDP_CAL_ERROR_UNSUPPORTED,
              "%s:%d: cuDNN offers no algorithm for this convolution within %zu MiB of workspace", __FILE__,
              __LINE__, workspace_limit >> 20);
  return FALSE;
}

gboolean
ddp_cal_conv_run(DdpCalKernels *k, const DdpCalCase *c, const DdpCalTimingOptions *t, DdpCalTiming *out,
                 char **algo, GError **error)
{
  cudnnDataType_t type = CUDNN_DATA_FLOAT;
  cudnnMathType_t math = CUDNN_FMA_MATH;
  size_t e = 4;
  switch (c->precision) {
  case DDP_PRECISION_TF32:
    math = CUDNN_DEFAULT_MATH;
    break;
  case DDP_PRECISION_FP16:
    type = CUDNN_DATA_HALF, math = CUDNN_TENSOR_OP_MATH, e = 2;
    break;
  case DDP_PRECISION_BF16:
    type = CUDNN_DATA_BFLOAT16, math = CUDNN_TENSOR_OP_MATH, e = 2;
    break;
  default:
    break;
  }
  CUDA_CHECK(cudaSetDevice(k->device), FALSE);
  ConvDescs d;
  int n = (int)c->conv.n, ch = (int)c->conv.c, h = (int)c->conv.h, w = (int)c->conv.w;
  int kk = (int)c->conv.k, r = (int)c->conv.r, s = (int)c->conv.s, groups = (int)c->conv.groups;
  CUDNN_CHECK(cudnnCreateTensorDescriptor(&d.x), FALSE);
  CUDNN_CHECK(cudnnSetTensor4dDescriptor(d.x, CUDNN_TENSOR_NCHW, type, n, ch, h, w), FALSE);
  CUDNN_CHECK(cudnnCreateFilterDescriptor(&d.w), FALSE);
  CUDNN_CHECK(cudnnSetFilter4dDescriptor(d.w, type, CUDNN_TENSOR_NCHW, kk, ch / groups, r, s), FALSE);
  CUDNN_CHECK(cudnnCreateConvolutionDescriptor(&d.conv), FALSE);
  CUDNN_CHECK(cudnnSetConvolution2dDescriptor(d.conv, (int)c->conv.pad_h, (int)c->conv.pad_w, (int)c->conv.stride,
                                              (int)c->conv.stride, 1, 1, CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT),
              FALSE);
  CUDNN_CHECK(cudnnSetConvolutionGroupCount(d.conv, groups), FALSE);
  CUDNN_CHECK(cudnnSetConvolutionMathType(d.conv, math), FALSE);
  int on = 0, oc = 0, oh = 0, ow = 0;
  CUDNN_CHECK(cudnnGetConvolution2dForwardOutputDim(d.conv, d.x, d.w, &on, &oc, &oh, &ow), FALSE);
  CUDNN_CHECK(cudnnCreateTensorDescriptor(&d.y), FALSE);
  CUDNN_CHECK(cudnnSetTensor4dDescriptor(d.y, CUDNN_TENSOR_NCHW, type, on, oc, oh, ow), FALSE);

  size_t x_bytes = (size_t)n * ch * h * w * e, y_bytes = (size_t)on * oc * oh * ow * e;
  size_t w_bytes = (size_t)kk * (ch / groups) * r * s * e;
  /* a: x (or dx), b: w (or dw), c: y (or dy) */
  if (!ddp_cal_ensure(&k->a, k->device, x_bytes, error) || !ddp_cal_ensure(&k->b, k->device, w_bytes, error) ||
      !ddp_cal_ensure(&k->c, k->device, y_bytes, error))
    return FALSE;
  if (!ddp_cal_fill(k->a.ptr, x_bytes, c->precision, k->stream, error) ||
      !ddp_cal_fill(k->b.ptr, w_bytes, c->precision, k->stream, error) ||
      !ddp_cal_fill(k->c.ptr, y_bytes, c->precision, k->stream, error))
    return FALSE;

  const float alpha = 1.0f, beta = 0.0f;
  int returned = 0, chosen = 0;
  size_t ws = 0;
  switch (c->op) {
  case DDP_CAL_OP_FWD: {
    cudnnConvolutionFwdAlgoPerf_t perf[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
    CUDNN_CHECK(cudnnGetConvolutionForwardAlgorithm_v7(k->dnn, d.x, d.w, d.conv, d.y, CUDNN_CONVOLUTION_FWD_ALGO_COUNT,
                                                       &returned, perf),
                FALSE);
    if (!pick(perf, returned, &chosen, &ws, error) || !ddp_cal_ensure(&k->workspace, k->device, ws, error))
      return FALSE;
    *algo = g_strdup_printf("cudnnConvolutionForward %s", algo_name(fwd_algo_names, G_N_ELEMENTS(fwd_algo_names), chosen));
    return ddp_cal_time_stream(k->stream, t, out, error, [&]() -> gboolean {
      CUDNN_CHECK(cudnnConvolutionForward(k->dnn, &alpha, d.x, k->a.ptr, d.w, k->b.ptr, d.conv,
                                          (cudnnConvolutionFwdAlgo_t)chosen, k->workspace.ptr, ws, &beta, d.y, k->c.ptr),
                  FALSE);
      return TRUE;
    });
  }
  case DDP_CAL_OP_BWD_DATA: {
    cudnnConvolutionBwdDataAlgoPerf_t perf[CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT];
    CUDNN_CHECK(cudnnGetConvolutionBackwardDataAlgorithm_v7(k->dnn, d.w, d.y, d.conv, d.x,
                                                            CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT, &returned, perf),
                FALSE);
    if (!pick(perf, returned, &chosen, &ws, error) || !ddp_cal_ensure(&k->workspace, k->device, ws, error))
      return FALSE;
    *algo = g_strdup_printf("cudnnConvolutionBackwardData %s",
                            algo_name(bwd_data_algo_names, G_N_ELEMENTS(bwd_data_algo_names), chosen));
    return ddp_cal_time_stream(k->stream, t, out, error, [&]() -> gboolean {
      CUDNN_CHECK(cudnnConvolutionBackwardData(k->dnn, &alpha, d.w, k->b.ptr, d.y, k->c.ptr, d.conv,
                                               (cudnnConvolutionBwdDataAlgo_t)chosen, k->workspace.ptr, ws, &beta, d.x,
                                               k->a.ptr),
                  FALSE);
      return TRUE;
    });
  }
  case DDP_CAL_OP_BWD_FILTER: {
    cudnnConvolutionBwdFilterAlgoPerf_t perf[CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT];
    CUDNN_CHECK(cudnnGetConvolutionBackwardFilterAlgorithm_v7(k->dnn, d.x, d.y, d.conv, d.w,
                                                              CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT, &returned, perf),
                FALSE);
    if (!pick(perf, returned, &chosen, &ws, error) || !ddp_cal_ensure(&k->workspace, k->device, ws, error))
      return FALSE;
    *algo = g_strdup_printf("cudnnConvolutionBackwardFilter %s",
                            algo_name(bwd_filter_algo_names, G_N_ELEMENTS(bwd_filter_algo_names), chosen));
    return ddp_cal_time_stream(k->stream, t, out, error, [&]() -> gboolean {
      CUDNN_CHECK(cudnnConvolutionBackwardFilter(k->dnn, &alpha, d.x, k->a.ptr, d.y, k->c.ptr, d.conv,
                                                 (cudnnConvolutionBwdFilterAlgo_t)chosen, k->workspace.ptr, ws, &beta,
                                                 d.w, k->b.ptr),
                  FALSE);
      return TRUE;
    });
  }
  default:
    g_set_error(error, DDP_CAL_ERROR, DDP_CAL_ERROR_INPUT, "conv probe: op %s is not a convolution",
                ddp_cal_op_name(c->op));
    return FALSE;
  }
}
