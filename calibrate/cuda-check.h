/* cuda-check — shared by the .cu files only (never by C code): GLib for GError, the error macros
 * that turn a failed CUDA/NCCL/cuBLAS/cuDNN call into a GError carrying file:line and the call's
 * text (nccl-tests' CUDACHECK/NCCLCHECK, but returning up the stack instead of exiting), small RAII
 * holders so that an early return frees what was made, and the shared timing loop.
 *
 * GLib under nvcc: cudafe (nvcc's front end) does not know GCC's `gnu_printf` format archetype
 * that GLib's headers use and warns once per declaration (#1217-D).  The host compiler still checks
 * those formats, so the warning is silenced around the includes only. */
#ifndef DDP_CALIBRATE_CUDA_CHECK_H
#define DDP_CALIBRATE_CUDA_CHECK_H

#pragma nv_diag_suppress 1217
#include <glib.h>
#include "calibrate.h" /* and through it gpu.h, model.h, keyfile.h, which use G_GNUC_PRINTF too */
#pragma nv_diag_default 1217

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cudnn.h>

/* CUDA_CHECK(call, ret): on failure set *error (which must be in scope) and return @ret. */
#define CUDA_CHECK(call, ret)                                                                      \
  do {                                                                                             \
    cudaError_t e_ = (call);                                                                       \
    if (e_ != cudaSuccess) {                                                                       \
      g_set_error(error, DDP_CAL_ERROR,                                                            \
                  e_ == cudaErrorMemoryAllocation ? DDP_CAL_ERROR_OUT_OF_MEMORY : DDP_CAL_ERROR_CUDA, \
                  "%s:%d: %s: %s", __FILE__, __LINE__, #call, cudaGetErrorString(e_));             \
      (void)cudaGetLastError(); /* clear a non-sticky error so the next call starts clean */      \
      return ret;                                                                                  \
    }                                                                                              \
  } while (0)

#define CUBLAS_CHECK(call, ret)                                                                    \
  do {                                                                                             \
    cublasStatus_t s_ = (call);                                                                    \
    if (s_ != CUBLAS_STATUS_SUCCESS) {                                                             \
      g_set_error(error, DDP_CAL_ERROR,                                                            \
                  s_ == CUBLAS_STATUS_ALLOC_FAILED     ? DDP_CAL_ERROR_OUT_OF_MEMORY               \
                  : s_ == CUBLAS_STATUS_NOT_SUPPORTED  ? DDP_CAL_ERROR_UNSUPPORTED                 \
                  : s_ == CUBLAS_STATUS_ARCH_MISMATCH  ? DDP_CAL_ERROR_UNSUPPORTED                 \
                                                       : DDP_CAL_ERROR_CUBLAS,                     \
                  "%s:%d: %s: %s", __FILE__, __LINE__, #call, cublasGetStatusString(s_));          \
      return ret;                                                                                  \
    }                                                                                              \
  } while (0)

/* cuDNN 9 groups its codes by thousands: 3xxx "not supported", 4003/4004 allocation failures. */
#define CUDNN_CHECK(call, ret)                                                                     \
  do {                                                                                             \
    cudnnStatus_t s_ = (call);                                                                     \
    if (s_ != CUDNN_STATUS_SUCCESS) {                                                              \
      int c_ = (int)s_;                                                                            \
      g_set_error(error, DDP_CAL_ERROR,                                                            \
                  c_ / 1000 == 3 ? DDP_CAL_ERROR_UNSUPPORTED                                       \
                  : (c_ == 4003 || c_ == 4004) ? DDP_CAL_ERROR_OUT_OF_MEMORY                       \
                                               : DDP_CAL_ERROR_CUDNN,                              \
                  "%s:%d: %s: %s", __FILE__, __LINE__, #call, cudnnGetErrorString(s_));            \
      return ret;                                                                                  \
    }                                                                                              \
  } while (0)

/* Device buffer, freed on scope exit (on its device). */
struct DeviceBuffer {
  void *ptr = nullptr;
  size_t bytes = 0;
  int device = 0;
  DeviceBuffer() = default;
  DeviceBuffer(const DeviceBuffer &) = delete;
  DeviceBuffer &operator=(const DeviceBuffer &) = delete;
  ~DeviceBuffer() { release(); }
  void release()
  {
    if (ptr) {
      int current = 0;
      cudaGetDevice(&current);
      cudaSetDevice(device);
      cudaFree(ptr);
      cudaSetDevice(current);
    }
    ptr = nullptr;
    bytes = 0;
  }
};

/* A set of CUDA events on one device, destroyed on scope exit. */
struct Events {
  cudaEvent_t *e = nullptr;
  int n = 0;
  Events() = default;
  Events(const Events &) = delete;
  Events &operator=(const Events &) = delete;
  ~Events()
  {
    for (int i = 0; i < n; i++)
      cudaEventDestroy(e[i]);
    g_free(e);
  }
  /* Creates @count events on the current device. */
  gboolean create(int count, GError **error)
  {
    e = g_new0(cudaEvent_t, count);
    for (; n < count; n++)
      CUDA_CHECK(cudaEventCreate(&e[n]), FALSE);
    return TRUE;
  }
};

/* The kernel-probe context of one device (calibrate.h: DdpCalKernels). */
struct _DdpCalKernels {
  int device = 0;
  cudaStream_t stream = nullptr;
  cublasHandle_t blas = nullptr;
  cudnnHandle_t dnn = nullptr;
  DeviceBuffer a, b, c, d;  /* operands, grown on demand */
  DeviceBuffer blas_workspace; /* given to cuBLAS once, never reallocated */
  DeviceBuffer workspace;   /* cuDNN workspace, grown on demand */
  DeviceBuffer stats;       /* per-row statistics of the row kernels */
};

/* Grows @buf to at least @bytes on @device (contents then filled with small values by the caller
 * if it cares).  Keeps the buffer when big enough. */
gboolean ddp_cal_ensure(DeviceBuffer *buf, int device, size_t bytes, GError **error);
/* Fills @bytes of @ptr with values in [−1, 1] of the precision's element type (NaN-free inputs:
 * some kernels slow down on denormals or NaN). */
gboolean ddp_cal_fill(void *ptr, size_t bytes, DdpPrecision precision, cudaStream_t stream, GError **error);

/* The timing discipline (calibrate.h): @launch() enqueues one call on @stream, returning FALSE after
 * setting the same @error it captured.  Warm-up, one timed call to estimate, then
 * ddp_cal_iterations() calls with an event after each. */
template <typename Launch>
static gboolean
ddp_cal_time_stream(cudaStream_t stream, const DdpCalTimingOptions *t, DdpCalTiming *out, GError **error,
                    Launch launch)
{
  for (int i = 0; i < t->warmup; i++)
    if (!launch())
      return FALSE;
  Events probe;
  if (!probe.create(2, error))
    return FALSE;
  CUDA_CHECK(cudaEventRecord(probe.e[0], stream), FALSE);
  if (!launch())
    return FALSE;
  CUDA_CHECK(cudaEventRecord(probe.e[1], stream), FALSE);
  CUDA_CHECK(cudaEventSynchronize(probe.e[1]), FALSE);
  float estimate_ms = 0;
  CUDA_CHECK(cudaEventElapsedTime(&estimate_ms, probe.e[0], probe.e[1]), FALSE);
  int iterations = ddp_cal_iterations(t, estimate_ms * 1000.0);
  Events ev;
  if (!ev.create(iterations + 1, error))
    return FALSE;
  CUDA_CHECK(cudaEventRecord(ev.e[0], stream), FALSE);
  for (int i = 0; i < iterations; i++) {
    if (!launch())
      return FALSE;
    CUDA_CHECK(cudaEventRecord(ev.e[i + 1], stream), FALSE);
  }
  CUDA_CHECK(cudaEventSynchronize(ev.e[iterations]), FALSE);
  float total_ms = 0;
  CUDA_CHECK(cudaEventElapsedTime(&total_ms, ev.e[0], ev.e[iterations]), FALSE);
  out->mean_us = 1000.0 * total_ms / iterations;
  out->min_us = G_MAXDOUBLE;
  out->max_us = 0;
  for (int i = 0; i < iterations; i++) {
    float ms = 0;
    CUDA_CHECK(cudaEventElapsedTime(&ms, ev.e[i], ev.e[i + 1]), FALSE);
    out->min_us = MIN(out->min_us, 1000.0 * ms);
    out->max_us = MAX(out->max_us, 1000.0 * ms);
  }
  out->iterations = iterations;
  return TRUE;
}

#endif
