/* device — what the calibration runs on: visible GPUs, their properties, library versions (the
 * provenance stored with every run, issue 7 §4), and the per-device kernel context with its
 * grow-only scratch buffers. */
#include "cuda-check.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <nccl.h>

/**
 * ddp_cal_device_count:
 * Returns: FALSE with DDP_CAL_ERROR_NO_DEVICE when CUDA sees no device (no driver, no GPU, or
 * CUDA_VISIBLE_DEVICES hides them all).
 */
gboolean
ddp_cal_device_count(int *count, GError **error)
{
  cudaError_t e = cudaGetDeviceCount(count);
  if (e != cudaSuccess || *count < 1) {
    g_set_error(error, DDP_CAL_ERROR, DDP_CAL_ERROR_NO_DEVICE, "no CUDA device visible (%s)",
                e != cudaSuccess ? cudaGetErrorString(e) : "device count is 0");
    (void)cudaGetLastError();
    *count = 0;
    return FALSE;
  }
  return TRUE;
}

gboolean
ddp_cal_device_info(int device, DdpCalDevice *out, GError **error)
{
  cudaDeviceProp prop;
  CUDA_CHECK(cudaGetDeviceProperties(&prop, device), FALSE);
  g_strlcpy(out->name, prop.name, sizeof out->name);
  out->sm_arch = prop.major * 10 + prop.minor;
  out->sm_count = prop.multiProcessorCount;
  out->memory_bytes = (gint64)prop.totalGlobalMem;
  CUDA_CHECK(cudaDeviceGetPCIBusId(out->pci_bus_id, (int)sizeof out->pci_bus_id, device), FALSE);
  return TRUE;
}

gboolean
ddp_cal_device_free_memory(int device, gint64 *free_bytes, GError **error)
{
  size_t free_b = 0, total = 0;
  CUDA_CHECK(cudaSetDevice(device), FALSE);
  CUDA_CHECK(cudaMemGetInfo(&free_b, &total), FALSE);
  *free_bytes = (gint64)free_b;
  return TRUE;
}

/* CUDA encodes versions as 1000·major + 10·minor. */
static void
cuda_version_text(int v, char *out, gsize size)
{
  g_snprintf(out, size, "%d.%d", v / 1000, (v % 1000) / 10);
}

gboolean
ddp_cal_versions(DdpCalVersions *out, GError **error)
{
  int driver = 0, runtime = 0;
  CUDA_CHECK(cudaDriverGetVersion(&driver), FALSE);
  CUDA_CHECK(cudaRuntimeGetVersion(&runtime), FALSE);
  cuda_version_text(driver, out->driver, sizeof out->driver);
  cuda_version_text(runtime, out->runtime, sizeof out->runtime);
  int nccl = 0;
  if (ncclGetVersion(&nccl) != ncclSuccess) {
    g_set_error(error, DDP_CAL_ERROR, DDP_CAL_ERROR_NCCL, "%s:%d: ncclGetVersion failed", __FILE__, __LINE__);
    return FALSE;
  }
  /* NCCL_VERSION(X,Y,Z) = X·10000 + Y·100 + Z since 2.9 (X·1000 + Y·100 + Z before) */
  if (nccl >= 10000)
    g_snprintf(out->nccl, sizeof out->nccl, "%d.%d.%d", nccl / 10000, (nccl % 10000) / 100, nccl % 100);
  else
    g_snprintf(out->nccl, sizeof out->nccl, "%d.%d.%d", nccl / 1000, (nccl % 1000) / 100, nccl % 100);
  int major = 0, minor = 0, patch = 0;
  CUBLAS_CHECK(cublasGetProperty(MAJOR_VERSION, &major), FALSE);
  CUBLAS_CHECK(cublasGetProperty(MINOR_VERSION, &minor), FALSE);
  CUBLAS_CHECK(cublasGetProperty(PATCH_LEVEL, &patch), FALSE);
  g_snprintf(out->cublas, sizeof out->cublas, "%d.%d.%d", major, minor, patch);
  size_t dnn = cudnnGetVersion(); /* 9.19.0 → 91900 */
  g_snprintf(out->cudnn, sizeof out->cudnn, "%zu.%zu.%zu", dnn / 10000, (dnn % 10000) / 100, dnn % 100);
  return TRUE;
}

/* ---- scratch buffers ----------------------------------------------------------------------- */

gboolean
ddp_cal_ensure(DeviceBuffer *buf, int device, size_t bytes, GError **error)
{
  if (buf->ptr && buf->bytes >= bytes)
    return TRUE;
  buf->release();
  CUDA_CHECK(cudaSetDevice(device), FALSE);
  CUDA_CHECK(cudaMalloc(&buf->ptr, MAX(bytes, (size_t)256)), FALSE);
  buf->bytes = MAX(bytes, (size_t)256);
  buf->device = device;
  return TRUE;
}

/* A cheap hash of the index, mapped to [−1, 1]: deterministic, NaN-free, no denormals. */
__device__ static float
fill_value(size_t i)
{
  unsigned int x = (unsigned int)(i * 2654435761u) ^ (unsigned int)(i >> 32);
  x ^= x >> 16;
  x *= 0x7feb352du;
  x ^= x >> 15;
  return (float)(x & 0xffff) / 32768.0f - 1.0f;
}

template <typename T>
__global__ static void
fill_kernel(T *p, size_t n)
{
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
    p[i] = (T)fill_value(i);
}

gboolean
ddp_cal_fill(void *ptr, size_t bytes, DdpPrecision precision, cudaStream_t stream, GError **error)
{
  const unsigned blocks = 1024, threads = 256;
  switch (precision) {
  case DDP_PRECISION_FP16:
    fill_kernel<<<blocks, threads, 0, stream>>>((__half *)ptr, bytes / sizeof(__half));
    break;
  case DDP_PRECISION_BF16:
    fill_kernel<<<blocks, threads, 0, stream>>>((__nv_bfloat16 *)ptr, bytes / sizeof(__nv_bfloat16));
    break;
  default:
    fill_kernel<<<blocks, threads, 0, stream>>>((float *)ptr, bytes / sizeof(float));
    break;
  }
  CUDA_CHECK(cudaGetLastError(), FALSE);
  return TRUE;
}

/* ---- the kernel context -------------------------------------------------------------------- */

/* cuBLAS workspace: PyTorch gives cuBLAS a workspace (CUBLAS_WORKSPACE_CONFIG default 4 MiB ×
 * streams on Hopper: 32 MiB); give the same so that the same kernels are eligible. */
static const size_t blas_workspace_bytes = (size_t)32 << 20;

/**
 * ddp_cal_kernels_new:
 * Returns: (transfer full): handles and a stream on @device, or NULL with @error.
 */
static gboolean
kernels_init(DdpCalKernels *k, GError **error)
{
  CUDA_CHECK(cudaSetDevice(k->device), FALSE);
  CUDA_CHECK(cudaStreamCreateWithFlags(&k->stream, cudaStreamNonBlocking), FALSE);
  CUBLAS_CHECK(cublasCreate(&k->blas), FALSE);
  CUBLAS_CHECK(cublasSetStream(k->blas, k->stream), FALSE);
  if (!ddp_cal_ensure(&k->blas_workspace, k->device, blas_workspace_bytes, error))
    return FALSE;
  CUBLAS_CHECK(cublasSetWorkspace(k->blas, k->blas_workspace.ptr, k->blas_workspace.bytes), FALSE);
  CUDNN_CHECK(cudnnCreate(&k->dnn), FALSE);
  CUDNN_CHECK(cudnnSetStream(k->dnn, k->stream), FALSE);
  return TRUE;
}

DdpCalKernels *
ddp_cal_kernels_new(int device, GError **error)
{
  DdpCalKernels *k = new DdpCalKernels();
  k->device = device;
  if (!kernels_init(k, error)) {
    ddp_cal_kernels_free(k);
    return nullptr;
  }
  return k;
}

void
ddp_cal_kernels_free(DdpCalKernels *k)
{
  if (!k)
    return;
  cudaSetDevice(k->device);
  if (k->stream)
    cudaStreamSynchronize(k->stream);
  if (k->dnn)
    cudnnDestroy(k->dnn);
  if (k->blas)
    cublasDestroy(k->blas);
  if (k->stream)
    cudaStreamDestroy(k->stream);
  delete k; /* the buffers free themselves */
}
