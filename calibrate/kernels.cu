/* kernels — the probes with kernels of our own: layer norm, softmax and GELU, forward and backward,
 * and device-to-device copies.  They stand for the memory-bound layers of a network; what the fit
 * takes from them is achieved bytes per second (fit.c), so they are written the way PyTorch's own
 * are: one block per row for the row kernels with fp32 accumulation whatever the storage type, a
 * grid-stride loop for the elementwise ones, and a second column-reduction kernel for layer norm's
 * weight gradients (PyTorch's layer_norm_backward also launches two).  cudaMemcpyAsync gives the
 * copy bandwidth, counted as bytes read plus bytes written (CUDA samples' bandwidthTest). */
#include "cuda-check.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

/* Storage ↔ fp32 conversions for the three storage types. */
__device__ static inline float to_float(float v) { return v; }
__device__ static inline float to_float(__half v) { return __half2float(v); }
__device__ static inline float to_float(__nv_bfloat16 v) { return __bfloat162float(v); }
template <typename T> __device__ static inline T from_float(float v);
template <> __device__ inline float from_float<float>(float v) { return v; }
template <> __device__ inline __half from_float<__half>(float v) { return __float2half(v); }
template <> __device__ inline __nv_bfloat16 from_float<__nv_bfloat16>(float v) { return __float2bfloat16(v); }

/* Sum over the block (blockDim.x a multiple of 32, at most 1024); every thread gets the result. */
__device__ static float
block_sum(float v)
{
  __shared__ float partial[32];
  for (int offset = 16; offset > 0; offset /= 2)
    v += __shfl_xor_sync(0xffffffffu, v, offset);
  int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  __syncthreads(); /* partial[] may still be read from a previous call */
  if (lane == 0)
    partial[warp] = v;
  __syncthreads();
  float total = 0;
  for (int i = 0; i < (int)(blockDim.x / 32); i++)
    total += partial[i];
  return total;
}

__device__ static float
block_max(float v)
{
  __shared__ float partial[32];
  for (int offset = 16; offset > 0; offset /= 2)
    v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, offset));
  int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  __syncthreads();
  if (lane == 0)
    partial[warp] = v;
  __syncthreads();
  float m = -INFINITY;
  for (int i = 0; i < (int)(blockDim.x / 32); i++)
    m = fmaxf(m, partial[i]);
  return m;
}

/* ---- layer norm ---------------------------------------------------------------------------- */

template <typename T>
__global__ static void
layernorm_forward(const T *x, const float *gamma, const float *beta, T *y, float2 *stats, int cols)
{
  const T *row = x + (size_t)blockIdx.x * cols;
  float sum = 0, sq = 0;
  for (int i = threadIdx.x; i < cols; i += blockDim.x) {
    float v = to_float(row[i]);
    sum += v;
    sq += v * v;
  }
  float mean = block_sum(sum) / cols;
  float var = fmaxf(block_sum(sq) / cols - mean * mean, 0.0f);
  float rstd = rsqrtf(var + 1e-5f);
  T *out = y + (size_t)blockIdx.x * cols;
  for (int i = threadIdx.x; i < cols; i += blockDim.x)
    out[i] = from_float<T>((to_float(row[i]) - mean) * rstd * gamma[i] + beta[i]);
  if (threadIdx.x == 0)
    stats[blockIdx.x] = make_float2(mean, rstd);
}

/* dx = rstd · (g − mean(g) − x̂ · mean(g · x̂)), g = dy · γ */
template <typename T>
__global__ static void
layernorm_backward_input(const T *x, const T *dy, const float *gamma, const float2 *stats, T *dx, int cols)
{
  size_t base = (size_t)blockIdx.x * cols;
  float2 st = stats[blockIdx.x];
  float a = 0, b = 0;
  for (int i = threadIdx.x; i < cols; i += blockDim.x) {
    float g = to_float(dy[base + i]) * gamma[i];
    float xhat = (to_float(x[base + i]) - st.x) * st.y;
    a += g;
    b += g * xhat;
  }
  a = block_sum(a) / cols;
  b = block_sum(b) / cols;
  for (int i = threadIdx.x; i < cols; i += blockDim.x) {
    float g = to_float(dy[base + i]) * gamma[i];
    float xhat = (to_float(x[base + i]) - st.x) * st.y;
    dx[base + i] = from_float<T>(st.y * (g - a - xhat * b));
  }
}

/* dγ = Σ_rows dy · x̂, dβ = Σ_rows dy: one thread per column, rows split over gridDim.y chunks,
 * partial sums combined with atomics (PyTorch reduces in two stages; same traffic). */
template <typename T>
__global__ static void
layernorm_backward_weights(const T *x, const T *dy, const float2 *stats, float *dgamma, float *dbeta, int rows,
                           int cols)
{
  int col = blockIdx.x * blockDim.x + threadIdx.x;
  if (col >= cols)
    return;
  int chunk = (rows + gridDim.y - 1) / gridDim.y;
  int r0 = blockIdx.y * chunk, r1 = min(rows, r0 + chunk);
  float dg = 0, db = 0;
  for (int r = r0; r < r1; r++) {
    size_t i = (size_t)r * cols + col;
    float d = to_float(dy[i]);
    dg += d * (to_float(x[i]) - stats[r].x) * stats[r].y;
    db += d;
  }
  atomicAdd(&dgamma[col], dg);
  atomicAdd(&dbeta[col], db);
}

/* ---- softmax ------------------------------------------------------------------------------- */

template <typename T>
__global__ static void
softmax_forward(const T *x, T *y, int cols)
{
  size_t base = (size_t)blockIdx.x * cols;
  float m = -INFINITY;
  for (int i = threadIdx.x; i < cols; i += blockDim.x)
    m = fmaxf(m, to_float(x[base + i]));
  m = block_max(m);
  float s = 0;
  for (int i = threadIdx.x; i < cols; i += blockDim.x)
    s += __expf(to_float(x[base + i]) - m);
  s = block_sum(s);
  for (int i = threadIdx.x; i < cols; i += blockDim.x)
    y[base + i] = from_float<T>(__expf(to_float(x[base + i]) - m) / s);
}

/* dx = y · (dy − Σ dy·y) */
template <typename T>
__global__ static void
softmax_backward(const T *y, const T *dy, T *dx, int cols)
{
  size_t base = (size_t)blockIdx.x * cols;
  float dot = 0;
  for (int i = threadIdx.x; i < cols; i += blockDim.x)
    dot += to_float(dy[base + i]) * to_float(y[base + i]);
  dot = block_sum(dot);
  for (int i = threadIdx.x; i < cols; i += blockDim.x)
    dx[base + i] = from_float<T>(to_float(y[base + i]) * (to_float(dy[base + i]) - dot));
}

/* ---- GELU (tanh approximation) ------------------------------------------------------------- */

template <typename T>
__global__ static void
gelu_forward(const T *x, T *y, size_t n)
{
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
    float v = to_float(x[i]);
    float u = 0.7978845608f * (v + 0.044715f * v * v * v);
    y[i] = from_float<T>(0.5f * v * (1.0f + tanhf(u)));
  }
}

template <typename T>
__global__ static void
gelu_backward(const T *x, const T *dy, T *dx, size_t n)
{
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
    float v = to_float(x[i]);
    float u = 0.7978845608f * (v + 0.044715f * v * v * v);
    float t = tanhf(u);
    float du = 0.7978845608f * (1.0f + 3.0f * 0.044715f * v * v);
    float grad = 0.5f * (1.0f + t) + 0.5f * v * (1.0f - t * t) * du;
    dx[i] = from_float<T>(to_float(dy[i]) * grad);
  }
}

/* ---- launching ----------------------------------------------------------------------------- */

/* Threads per row: enough to cover wide rows in a few passes, a warp for narrow ones. */
static unsigned
row_threads(gint64 cols)
{
  return cols >= 2048 ? 512 : cols >= 512 ? 256 : cols >= 128 ? 128 : 32;
}

static size_t
element_bytes(DdpPrecision p)
{
  return p == DDP_PRECISION_FP16 || p == DDP_PRECISION_BF16 ? 2 : 4;
}

/* Buffers a, b, c hold rows·cols elements each (x, dy, y/dx); for layer norm, d holds γ, β, dγ, dβ
 * (fp32) and stats the per-row mean and 1/σ. */
static gboolean
row_buffers(DdpCalKernels *k, const DdpCalCase *c, gboolean norm, GError **error)
{
  size_t n = (size_t)c->rows * c->cols * element_bytes(c->precision);
  size_t params = 4 * (size_t)c->cols * sizeof(float);
  CUDA_CHECK(cudaSetDevice(k->device), FALSE);
  if (!ddp_cal_ensure(&k->a, k->device, n, error) || !ddp_cal_ensure(&k->b, k->device, n, error) ||
      !ddp_cal_ensure(&k->c, k->device, n, error))
    return FALSE;
  if (norm && (!ddp_cal_ensure(&k->d, k->device, params, error) ||
               !ddp_cal_ensure(&k->stats, k->device, (size_t)c->rows * sizeof(float2), error) ||
               !ddp_cal_fill(k->d.ptr, params, DDP_PRECISION_FP32, k->stream, error)))
    return FALSE;
  return ddp_cal_fill(k->a.ptr, n, c->precision, k->stream, error) &&
         ddp_cal_fill(k->b.ptr, n, c->precision, k->stream, error) &&
         ddp_cal_fill(k->c.ptr, n, c->precision, k->stream, error);
}

template <typename T>
static gboolean
run_layernorm(DdpCalKernels *k, const DdpCalCase *c, const DdpCalTimingOptions *t, DdpCalTiming *out, GError **error)
{
  const T *x = (const T *)k->a.ptr, *dy = (const T *)k->b.ptr;
  T *y = (T *)k->c.ptr;
  float *gamma = (float *)k->d.ptr, *beta = gamma + c->cols, *dgamma = beta + c->cols, *dbeta = dgamma + c->cols;
  float2 *stats = (float2 *)k->stats.ptr;
  unsigned rows = (unsigned)c->rows, threads = row_threads(c->cols);
  int cols = (int)c->cols;
  /* statistics for the backward pass come from one forward */
  layernorm_forward<T><<<rows, threads, 0, k->stream>>>(x, gamma, beta, y, stats, cols);
  CUDA_CHECK(cudaGetLastError(), FALSE);
  if (c->op == DDP_CAL_OP_FWD)
    return ddp_cal_time_stream(k->stream, t, out, error, [&]() -> gboolean {
      layernorm_forward<T><<<rows, threads, 0, k->stream>>>(x, gamma, beta, y, stats, cols);
      CUDA_CHECK(cudaGetLastError(), FALSE);
      return TRUE;
    });
  dim3 wgrid((unsigned)((cols + 255) / 256), (unsigned)MIN((gint64)64, MAX((gint64)1, c->rows / 32)));
  return ddp_cal_time_stream(k->stream, t, out, error, [&]() -> gboolean {
    layernorm_backward_input<T><<<rows, threads, 0, k->stream>>>(x, dy, gamma, stats, y, cols);
    layernorm_backward_weights<T><<<wgrid, 256, 0, k->stream>>>(x, dy, stats, dgamma, dbeta, (int)rows, cols);
    CUDA_CHECK(cudaGetLastError(), FALSE);
    return TRUE;
  });
}

template <typename T>
static gboolean
run_softmax(DdpCalKernels *k, const DdpCalCase *c, const DdpCalTimingOptions *t, DdpCalTiming *out, GError **error)
{
  const T *x = (const T *)k->a.ptr, *dy = (const T *)k->b.ptr;
  T *y = (T *)k->c.ptr, *dx = (T *)k->a.ptr; /* backward reads y, dy; writes over x */
  unsigned rows = (unsigned)c->rows, threads = row_threads(c->cols);
  int cols = (int)c->cols;
  softmax_forward<T><<<rows, threads, 0, k->stream>>>(x, y, cols); /* a valid y for the backward */
  CUDA_CHECK(cudaGetLastError(), FALSE);
  if (c->op == DDP_CAL_OP_FWD)
    return ddp_cal_time_stream(k->stream, t, out, error, [&]() -> gboolean {
      softmax_forward<T><<<rows, threads, 0, k->stream>>>(x, y, cols);
      CUDA_CHECK(cudaGetLastError(), FALSE);
      return TRUE;
    });
  return ddp_cal_time_stream(k->stream, t, out, error, [&]() -> gboolean {
    softmax_backward<T><<<rows, threads, 0, k->stream>>>(y, dy, dx, cols);
    CUDA_CHECK(cudaGetLastError(), FALSE);
    return TRUE;
  });
}

template <typename T>
static gboolean
run_gelu(DdpCalKernels *k, const DdpCalCase *c, const DdpCalTimingOptions *t, DdpCalTiming *out, GError **error)
{
  const T *x = (const T *)k->a.ptr, *dy = (const T *)k->b.ptr;
  T *y = (T *)k->c.ptr;
  size_t n = (size_t)c->rows * c->cols;
  int sms = 0;
  CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, k->device), FALSE);
  unsigned blocks = (unsigned)MIN((size_t)sms * 8, MAX((size_t)1, (n + 255) / 256));
  if (c->op == DDP_CAL_OP_FWD)
    return ddp_cal_time_stream(k->stream, t, out, error, [&]() -> gboolean {
      gelu_forward<T><<<blocks, 256, 0, k->stream>>>(x, y, n);
      CUDA_CHECK(cudaGetLastError(), FALSE);
      return TRUE;
    });
  return ddp_cal_time_stream(k->stream, t, out, error, [&]() -> gboolean {
    gelu_backward<T><<<blocks, 256, 0, k->stream>>>(x, dy, y, n);
    CUDA_CHECK(cudaGetLastError(), FALSE);
    return TRUE;
  });
}

/* Dispatches on the storage type. */
#define DISPATCH(fn, k, c, t, out, error)                                                          \
  ((c)->precision == DDP_PRECISION_FP16   ? fn<__half>(k, c, t, out, error)                        \
   : (c)->precision == DDP_PRECISION_BF16 ? fn<__nv_bfloat16>(k, c, t, out, error)                 \
                                          : fn<float>(k, c, t, out, error))

static gboolean
check_rows(const DdpCalCase *c, GError **error)
{
  if (c->rows < 1 || c->cols < 1 || c->rows > G_MAXINT32 || c->cols > G_MAXINT32) {
    g_set_error(error, DDP_CAL_ERROR, DDP_CAL_ERROR_INPUT, "%s: rows x cols out of range", c->shape);
    return FALSE;
  }
  return TRUE;
}

gboolean
ddp_cal_layernorm_run(DdpCalKernels *k, const DdpCalCase *c, const DdpCalTimingOptions *t, DdpCalTiming *out,
                      char **algo, GError **error)
{
  if (!check_rows(c, error) || !row_buffers(k, c, TRUE, error))
    return FALSE;
  *algo = g_strdup(c->op == DDP_CAL_OP_FWD ? "row kernel" : "row kernel + column reduction");
  return DISPATCH(run_layernorm, k, c, t, out, error);
}

gboolean
ddp_cal_softmax_run(DdpCalKernels *k, const DdpCalCase *c, const DdpCalTimingOptions *t, DdpCalTiming *out,
                    char **algo, GError **error)
{
  if (!check_rows(c, error) || !row_buffers(k, c, FALSE, error))
    return FALSE;
  *algo = g_strdup("row kernel");
  return DISPATCH(run_softmax, k, c, t, out, error);
}

gboolean
ddp_cal_gelu_run(DdpCalKernels *k, const DdpCalCase *c, const DdpCalTimingOptions *t, DdpCalTiming *out, char **algo,
                 GError **error)
{
  if (!check_rows(c, error) || !row_buffers(k, c, FALSE, error))
    return FALSE;
  *algo = g_strdup("grid-stride elementwise");
  return DISPATCH(run_gelu, k, c, t, out, error);
}

gboolean
ddp_cal_copy_run(DdpCalKernels *k, const DdpCalCase *c, const DdpCalTimingOptions *t, DdpCalTiming *out, char **algo,
                 GError **error)
{
  size_t bytes = (size_t)c->copy_bytes;
  CUDA_CHECK(cudaSetDevice(k->device), FALSE);
  if (!ddp_cal_ensure(&k->a, k->device, bytes, error) || !ddp_cal_ensure(&k->b, k->device, bytes, error))
    return FALSE;
  *algo = g_strdup("cudaMemcpyAsync device to device");
  return ddp_cal_time_stream(k->stream, t, out, error, [&]() -> gboolean {
    CUDA_CHECK(cudaMemcpyAsync(k->b.ptr, k->a.ptr, bytes, cudaMemcpyDeviceToDevice, k->stream), FALSE);
    return TRUE;
  });
}
