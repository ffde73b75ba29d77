/* gemm — the GEMM probe: one cublasGemmEx call, as PyTorch's linear layers issue them (forward
 * Y = X·Wᵀ, backward dX = dY·W and dW = dYᵀ·X; plan.c derives m, n, k and the transposes).
 *
 * Precision → cuBLAS, as PyTorch configures it (aten/src/ATen/cuda/CUDABlas.cpp):
 *   fp32: FP32 data, CUBLAS_COMPUTE_32F (torch.backends.cuda.matmul.allow_tf32 = False, the default);
 *   tf32: FP32 data, CUBLAS_COMPUTE_32F_FAST_TF32 (allow_tf32 = True);
 *   fp16 / bf16: 16-bit data, FP32 accumulation (CUBLAS_COMPUTE_32F), as autocast runs them.
 * The algorithm is cuBLAS's heuristic choice (CUBLAS_GEMM_DEFAULT); PyTorch does the same unless
 * it goes through cublasLt, whose choices are from the same heuristics. */
#include "cuda-check.h"

gboolean
ddp_cal_gemm_run(DdpCalKernels *k, const DdpCalCase *c, const DdpCalTimingOptions *t, DdpCalTiming *out,
                 char **algo, GError **error)
{
  cudaDataType_t type = CUDA_R_32F;
  cublasComputeType_t compute = CUBLAS_COMPUTE_32F;
  size_t e = 4;
  const char *name = "fp32 data, 32F compute";
  switch (c->precision) {
  case DDP_PRECISION_TF32:
    compute = CUBLAS_COMPUTE_32F_FAST_TF32;
    name = "fp32 data, 32F_FAST_TF32 compute";
    break;
  case DDP_PRECISION_FP16:
    type = CUDA_R_16F, e = 2, name = "fp16 data, 32F compute";
    break;
  case DDP_PRECISION_BF16:
    type = CUDA_R_16BF, e = 2, name = "bf16 data, 32F compute";
    break;
  default:
    break;
  }
  size_t a_bytes = (size_t)c->m * c->k * e, b_bytes = (size_t)c->k * c->n * e, c_bytes = (size_t)c->m * c->n * e;
  CUDA_CHECK(cudaSetDevice(k->device), FALSE);
  if (!ddp_cal_ensure(&k->a, k->device, a_bytes, error) || !ddp_cal_ensure(&k->b, k->device, b_bytes, error) ||
      !ddp_cal_ensure(&k->c, k->device, c_bytes, error))
    return FALSE;
  if (!ddp_cal_fill(k->a.ptr, a_bytes, c->precision, k->stream, error) ||
      !ddp_cal_fill(k->b.ptr, b_bytes, c->precision, k->stream, error))
    return FALSE;
  /* column-major: op(A) is m×k, stored k×m when transposed; op(B) is k×n, stored n×k when transposed */
  int m = (int)c->m, n = (int)c->n, kk = (int)c->k;
  int lda = c->trans_a ? kk : m, ldb = c->trans_b ? n : kk, ldc = m;
  cublasOperation_t op_a = c->trans_a ? CUBLAS_OP_T : CUBLAS_OP_N, op_b = c->trans_b ? CUBLAS_OP_T : CUBLAS_OP_N;
  const float alpha = 1.0f, beta = 0.0f;
  *algo = g_strdup_printf("cublasGemmEx default, %s", name);
  return ddp_cal_time_stream(k->stream, t, out, error, [&]() -> gboolean {
    CUBLAS_CHECK(cublasGemmEx(k->blas, op_a, op_b, m, n, kk, &alpha, k->a.ptr, type, lda, k->b.ptr, type, ldb, &beta,
                              k->c.ptr, type, ldc, compute, CUBLAS_GEMM_DEFAULT),
                 FALSE);
    return TRUE;
  });
}
