/* allreduce — the AllReduce probe: NCCL float SUM AllReduce over the GPUs this process drives, as
 * nccl-tests' all_reduce_perf -g N (one process, a group call over its GPUs), or over every GPU of
 * an MPI job (ranks from ncclCommInitRank, one unique id broadcast by rank 0) — docs/model.md §3.
 *
 * Timing: events on each GPU's stream, one between consecutive launches; a launch is the group
 * call enqueuing one AllReduce on every local GPU.  The mean of a GPU is (last − first) /
 * iterations; the reported mean is the slowest GPU's, as the collective ends when its last rank
 * does.  The fastest/slowest single launch come from the same events (per-launch maximum over
 * GPUs).  Across MPI processes main.c reduces these with MPI (max of means).
 *
 * NCCL reads NCCL_ALGO and NCCL_PROTO while building a communicator (tuning.cc), so every forced
 * variant gets communicators of its own; a variant NCCL cannot run (NVLS without NVSwitch, say)
 * fails at enqueue with ncclInvalidUsage, which becomes DDP_CAL_ERROR_UNSUPPORTED: recorded, not
 * fatal. */
#include "cuda-check.h"

#include <nccl.h>
#include <string.h>

G_STATIC_ASSERT(sizeof(ncclUniqueId) == DDP_CAL_NCCL_ID_BYTES);

#define NCCL_CHECK(call, ret)                                                                      \
  do {                                                                                             \
    ncclResult_t r_ = (call);                                                                      \
    if (r_ != ncclSuccess) {                                                                       \
      g_set_error(error, DDP_CAL_ERROR,                                                            \
                  r_ == ncclInvalidUsage ? DDP_CAL_ERROR_UNSUPPORTED : DDP_CAL_ERROR_NCCL,         \
                  "%s:%d: %s: %s%s%s", __FILE__, __LINE__, #call, ncclGetErrorString(r_),          \
                  ncclGetLastError(NULL) && *ncclGetLastError(NULL) ? ": " : "",                   \
                  ncclGetLastError(NULL) ? ncclGetLastError(NULL) : "");                           \
      return ret;                                                                                  \
    }                                                                                              \
  } while (0)

struct _DdpCalComm {
  int n = 0;
  int *devices = nullptr;
  ncclComm_t *comms = nullptr;
  cudaStream_t *streams = nullptr;
  DeviceBuffer *send = nullptr, *recv = nullptr;
  gint64 max_bytes = 0;
};

gboolean
ddp_cal_nccl_unique_id(unsigned char id[DDP_CAL_NCCL_ID_BYTES], GError **error)
{
  ncclUniqueId u;
  NCCL_CHECK(ncclGetUniqueId(&u), FALSE);
  memcpy(id, &u, sizeof u);
  return TRUE;
}

void
ddp_cal_comm_free(DdpCalComm *c)
{
  if (!c)
    return;
  for (int d = 0; d < c->n; d++) {
    cudaSetDevice(c->devices[d]);
    if (c->streams && c->streams[d])
      cudaStreamSynchronize(c->streams[d]);
    if (c->comms && c->comms[d])
      ncclCommDestroy(c->comms[d]);
    if (c->streams && c->streams[d])
      cudaStreamDestroy(c->streams[d]);
  }
  delete[] c->send;
  delete[] c->recv;
  g_free(c->streams);
  g_free(c->comms);
  g_free(c->devices);
  delete c;
}

static gboolean
comm_init(DdpCalComm *c, const unsigned char *id, int n_ranks, int first_rank, gboolean out_of_place, GError **error)
{
  for (int d = 0; d < c->n; d++) {
    CUDA_CHECK(cudaSetDevice(c->devices[d]), FALSE);
    CUDA_CHECK(cudaStreamCreateWithFlags(&c->streams[d], cudaStreamNonBlocking), FALSE);
    size_t bytes = (size_t)MAX(c->max_bytes, (gint64)4);
    if (!ddp_cal_ensure(&c->send[d], c->devices[d], bytes, error) ||
        !ddp_cal_fill(c->send[d].ptr, bytes, DDP_PRECISION_FP32, c->streams[d], error))
      return FALSE;
    if (out_of_place && !ddp_cal_ensure(&c->recv[d], c->devices[d], bytes, error))
      return FALSE;
    CUDA_CHECK(cudaStreamSynchronize(c->streams[d]), FALSE);
  }
  if (!id) {
    NCCL_CHECK(ncclCommInitAll(c->comms, c->n, c->devices), FALSE);
    return TRUE;
  }
  ncclUniqueId u;
  memcpy(&u, id, sizeof u);
  NCCL_CHECK(ncclGroupStart(), FALSE);
  for (int d = 0; d < c->n; d++) {
    CUDA_CHECK(cudaSetDevice(c->devices[d]), FALSE);
    ncclResult_t r = ncclCommInitRank(&c->comms[d], n_ranks, u, first_rank + d);
    if (r != ncclSuccess) {
      ncclGroupEnd();
      NCCL_CHECK(r, FALSE);
    }
  }
  NCCL_CHECK(ncclGroupEnd(), FALSE);
  return TRUE;
}

/**
 * ddp_cal_comm_new:
 * See calibrate.h.  Returns: (transfer full) or NULL with @error (DDP_CAL_ERROR_OUT_OF_MEMORY when
 * the buffers do not fit).
 */
DdpCalComm *
ddp_cal_comm_new(int n_devices, const int *devices, const unsigned char *id, int n_ranks, int first_rank,
                 gint64 max_bytes, gboolean out_of_place, GError **error)
{
  g_return_val_if_fail(n_devices > 0, nullptr);
  DdpCalComm *c = new DdpCalComm();
  c->n = n_devices;
  c->devices = (int *)g_memdup2(devices, sizeof(int) * n_devices);
  c->comms = g_new0(ncclComm_t, n_devices);
  c->streams = g_new0(cudaStream_t, n_devices);
  c->send = new DeviceBuffer[n_devices];
  c->recv = new DeviceBuffer[n_devices];
  c->max_bytes = max_bytes;
  if (!comm_init(c, id, n_ranks, first_rank, out_of_place, error)) {
    ddp_cal_comm_free(c);
    return nullptr;
  }
  return c;
}

/* One launch: an AllReduce on every local GPU, in one NCCL group. */
static gboolean
launch(DdpCalComm *c, size_t count, gboolean in_place, GError **error)
{
  NCCL_CHECK(ncclGroupStart(), FALSE);
  for (int d = 0; d < c->n; d++) {
    void *dst = in_place ? c->send[d].ptr : c->recv[d].ptr;
    ncclResult_t r = ncclAllReduce(c->send[d].ptr, dst, count, ncclFloat, ncclSum, c->comms[d], c->streams[d]);
    if (r != ncclSuccess) {
      ncclGroupEnd();
      NCCL_CHECK(r, FALSE);
    }
  }
  NCCL_CHECK(ncclGroupEnd(), FALSE);
  return TRUE;
}

static gboolean
sync_all(DdpCalComm *c, GError **error)
{
  for (int d = 0; d < c->n; d++) {
    CUDA_CHECK(cudaSetDevice(c->devices[d]), FALSE);
    CUDA_CHECK(cudaStreamSynchronize(c->streams[d]), FALSE);
    ncclResult_t async = ncclSuccess;
    NCCL_CHECK(ncclCommGetAsyncError(c->comms[d], &async), FALSE);
    NCCL_CHECK(async, FALSE);
  }
  return TRUE;
}

/* Records event @i of every GPU on its stream. */
static gboolean
record(DdpCalComm *c, Events *ev, int i, GError **error)
{
  for (int d = 0; d < c->n; d++) {
    CUDA_CHECK(cudaSetDevice(c->devices[d]), FALSE);
    CUDA_CHECK(cudaEventRecord(ev[d].e[i], c->streams[d]), FALSE);
  }
  return TRUE;
}

/**
 * ddp_cal_comm_allreduce:
 * Times an AllReduce of @bytes (count = bytes / 4 floats, as nccl-tests with -d float).
 * Returns: FALSE with @error; DDP_CAL_ERROR_UNSUPPORTED when NCCL refuses the forced variant.
 */
gboolean
ddp_cal_comm_allreduce(DdpCalComm *c, gint64 bytes, gboolean in_place, const DdpCalTimingOptions *t,
                       DdpCalTiming *out, GError **error)
{
  g_return_val_if_fail(bytes <= c->max_bytes, FALSE);
  g_return_val_if_fail(in_place || c->recv[0].ptr, FALSE);
  size_t count = (size_t)MAX(bytes / 4, (gint64)1);
  for (int i = 0; i < t->warmup; i++)
    if (!launch(c, count, in_place, error))
      return FALSE;
  if (!sync_all(c, error))
    return FALSE;
  /* estimate from one launch, then the timed ones */
  Events *probe = new Events[c->n];
  int iterations = 0;
  {
    gboolean ok = TRUE;
    for (int d = 0; d < c->n && ok; d++) {
      cudaSetDevice(c->devices[d]);
      ok = probe[d].create(2, error);
    }
    ok = ok && record(c, probe, 0, error) && launch(c, count, in_place, error) && record(c, probe, 1, error) &&
         sync_all(c, error);
    float worst = 0;
    for (int d = 0; d < c->n && ok; d++) {
      float ms = 0;
      cudaError_t e = cudaEventElapsedTime(&ms, probe[d].e[0], probe[d].e[1]);
      if (e != cudaSuccess) {
        g_set_error(error, DDP_CAL_ERROR, DDP_CAL_ERROR_CUDA, "%s:%d: cudaEventElapsedTime: %s", __FILE__, __LINE__,
                    cudaGetErrorString(e));
        ok = FALSE;
      }
      worst = MAX(worst, ms);
    }
    delete[] probe;
    if (!ok)
      return FALSE;
    iterations = ddp_cal_iterations(t, worst * 1000.0);
  }
  Events *ev = new Events[c->n];
  gboolean ok = TRUE;
  for (int d = 0; d < c->n && ok; d++) {
    cudaSetDevice(c->devices[d]);
    ok = ev[d].create(iterations + 1, error);
  }
  ok = ok && record(c, ev, 0, error);
  for (int i = 0; i < iterations && ok; i++)
    ok = launch(c, count, in_place, error) && record(c, ev, i + 1, error);
  ok = ok && sync_all(c, error);
  double mean_ms = 0, min_ms = G_MAXDOUBLE, max_ms = 0;
  for (int i = 0; i < iterations && ok; i++) {
    double slowest = 0;
    for (int d = 0; d < c->n; d++) {
      float ms = 0;
      if (cudaEventElapsedTime(&ms, ev[d].e[i], ev[d].e[i + 1]) != cudaSuccess) {
        g_set_error(error, DDP_CAL_ERROR, DDP_CAL_ERROR_CUDA, "%s:%d: cudaEventElapsedTime failed", __FILE__, __LINE__);
        ok = FALSE;
        break;
      }
      slowest = MAX(slowest, (double)ms);
    }
    min_ms = MIN(min_ms, slowest);
    max_ms = MAX(max_ms, slowest);
  }
  for (int d = 0; d < c->n && ok; d++) {
    float total = 0;
    if (cudaEventElapsedTime(&total, ev[d].e[0], ev[d].e[iterations]) != cudaSuccess) {
      g_set_error(error, DDP_CAL_ERROR, DDP_CAL_ERROR_CUDA, "%s:%d: cudaEventElapsedTime failed", __FILE__, __LINE__);
      ok = FALSE;
    }
    mean_ms = MAX(mean_ms, (double)total / iterations);
  }
  delete[] ev;
  if (!ok)
    return FALSE;
  out->mean_us = 1000.0 * mean_ms;
  out->min_us = 1000.0 * min_ms;
  out->max_us = 1000.0 * max_ms;
  out->iterations = iterations;
  return TRUE;
}
