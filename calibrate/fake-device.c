/* fake-device — a test double of the CUDA side of calibrate.h, in plain C, so that the whole of
 * ddpsim-calibrate except the measurements themselves (options, plan, database, batches, resume,
 * notes, exit codes) runs in `make check` on machines without GPUs.  Linked into
 * calibrate/ddpsim-calibrate-fake only (never installed).
 *
 * Timings are deterministic functions of the work, so that tests can check what `ddpsim fit`
 * recovers from a full calibrate → fit round trip:
 *   AllReduce  t = α + S / algbw, α and algbw per NCCL_ALGO × NCCL_PROTO from the table below
 *              (Ring Simple: 56 µs and 180 GB/s at 8 ranks, as docs/model.md §2.3's worked example),
 *              busbw held constant across rank counts; one rank: 6 µs whatever the size.
 *   kernels    t = 5 µs + FLOPs / 500 TFLOP/s (GEMM, convolution), 3 µs + bytes / 2500 GB/s
 *              (row and elementwise kernels), 2 µs + bytes / 3000 GB/s (copies).
 * Environment: DDPSIM_FAKE_GPUS (default 8; 0 = no device), DDPSIM_FAKE_GPU_NAME (default
 * "NVIDIA H100 80GB HBM3"), DDPSIM_FAKE_REFUSE (an NCCL_ALGO value the fake NCCL refuses, as real
 * NCCL refuses NVLS without NVSwitch), DDPSIM_FAKE_DELAY_US (wall time spent per measurement, so
 * that a test can kill the program between batches). */
#include "calibrate.h"

/* A test double ignores most of what it is given. */
#pragma GCC diagnostic ignored "-Wunused-parameter"

#include <stdlib.h>
#include <string.h>

struct _DdpCalComm {
  int ranks;
  gint64 max_bytes;
};

struct _DdpCalKernels {
  int device;
};

static int
env_int(const char *name, int fallback)
{
  const char *v = g_getenv(name);
  return v && *v ? atoi(v) : fallback;
}

static void
spend_time(void)
{
  int us = env_int("DDPSIM_FAKE_DELAY_US", 0);
  if (us > 0)
    g_usleep(us);
}

gboolean
ddp_cal_device_count(int *count, GError **error)
{
  *count = env_int("DDPSIM_FAKE_GPUS", 8);
  if (*count < 1) {
    g_set_error(error, DDP_CAL_ERROR, DDP_CAL_ERROR_NO_DEVICE, "no CUDA device visible (fake device: DDPSIM_FAKE_GPUS=0)");
    return FALSE;
  }
  return TRUE;
}

gboolean
ddp_cal_device_info(int device, DdpCalDevice *out, GError **error)
{
  const char *name = g_getenv("DDPSIM_FAKE_GPU_NAME");
  g_strlcpy(out->name, name && *name ? name : "NVIDIA H100 80GB HBM3", sizeof out->name);
  g_snprintf(out->pci_bus_id, sizeof out->pci_bus_id, "0000:%02x:00.0", device);
  out->sm_arch = 90;
  out->sm_count = 132;
  out->memory_bytes = 85000000000;
  return TRUE;
}

gboolean
ddp_cal_device_free_memory(int device, gint64 *free_bytes, GError **error)
{
  *free_bytes = 80000000000;
  return TRUE;
}

gboolean
ddp_cal_versions(DdpCalVersions *out, GError **error)
{
  g_strlcpy(out->driver, "fake", sizeof out->driver);
  g_strlcpy(out->runtime, "fake", sizeof out->runtime);
  g_strlcpy(out->nccl, "fake", sizeof out->nccl);
  g_strlcpy(out->cublas, "fake", sizeof out->cublas);
  g_strlcpy(out->cudnn, "fake", sizeof out->cudnn);
  return TRUE;
}

gboolean
ddp_cal_nccl_unique_id(unsigned char id[DDP_CAL_NCCL_ID_BYTES], GError **error)
{
  memset(id, 0, DDP_CAL_NCCL_ID_BYTES);
  return TRUE;
}

DdpCalComm *
ddp_cal_comm_new(int n_devices, const int *devices, const unsigned char *id, int n_ranks, int first_rank,
                 gint64 max_bytes, gboolean out_of_place, GError **error)
{
  DdpCalComm *c = g_new0(DdpCalComm, 1);
  c->ranks = n_ranks;
  c->max_bytes = max_bytes;
  return c;
}

void
ddp_cal_comm_free(DdpCalComm *comm)
{
  g_free(comm);
}

/* (α µs, busbw GB/s) of the variant NCCL_ALGO/NCCL_PROTO name, at 8 ranks. */
static void
variant_constants(double *alpha, double *busbw)
{
  const char *algo = g_getenv("NCCL_ALGO"), *proto = g_getenv("NCCL_PROTO");
  gboolean tree = algo && g_ascii_strcasecmp(algo, "Tree") == 0;
  if (proto && g_ascii_strcasecmp(proto, "LL") == 0)
    *alpha = 15.0, *busbw = 105.0;
  else if (proto && g_ascii_strcasecmp(proto, "LL128") == 0)
    *alpha = 40.6, *busbw = 262.5;
  else
    *alpha = 56.0, *busbw = 315.0;
  if (tree)
    *alpha += 8.4, *busbw *= 0.95;
}

gboolean
ddp_cal_comm_allreduce(DdpCalComm *comm, gint64 bytes, gboolean in_place, const DdpCalTimingOptions *t,
                       DdpCalTiming *out, GError **error)
{
  const char *refuse = g_getenv("DDPSIM_FAKE_REFUSE"), *algo = g_getenv("NCCL_ALGO");
  if (refuse && algo && g_ascii_strcasecmp(refuse, algo) == 0) {
    g_set_error(error, DDP_CAL_ERROR, DDP_CAL_ERROR_UNSUPPORTED, "fake-device.c: ncclAllReduce: invalid usage");
    return FALSE;
  }
  spend_time();
  double time_us;
  if (comm->ranks < 2) {
    time_us = 6.0;
  } else {
    double alpha, busbw;
    variant_constants(&alpha, &busbw);
    /* latency grows with the ring's 2(n−1) hops from 8 ranks' value; busbw constant */
    double a = 8.4 + (alpha - 8.4) * (2.0 * (comm->ranks - 1)) / 14.0;
    double algbw = busbw * comm->ranks / (2.0 * (comm->ranks - 1));
    time_us = a + (double)bytes / (1000.0 * algbw);
  }
  out->mean_us = out->min_us = out->max_us = time_us;
  out->iterations = ddp_cal_iterations(t, time_us);
  return TRUE;
}

DdpCalKernels *
ddp_cal_kernels_new(int device, GError **error)
{
  DdpCalKernels *k = g_new0(DdpCalKernels, 1);
  k->device = device;
  return k;
}

void
ddp_cal_kernels_free(DdpCalKernels *k)
{
  g_free(k);
}

static gboolean
fake_kernel(const DdpCalCase *c, const DdpCalTimingOptions *t, DdpCalTiming *out, char **algo, double time_us)
{
  spend_time();
  out->mean_us = out->min_us = out->max_us = time_us;
  out->iterations = ddp_cal_iterations(t, time_us);
  *algo = g_strdup("fake");
  return TRUE;
}

gboolean
ddp_cal_gemm_run(DdpCalKernels *k, const DdpCalCase *c, const DdpCalTimingOptions *t, DdpCalTiming *out, char **algo,
                 GError **error)
{
  return fake_kernel(c, t, out, algo, 5.0 + c->flops / 500e6);
}

gboolean
ddp_cal_conv_run(DdpCalKernels *k, const DdpCalCase *c, const DdpCalTimingOptions *t, DdpCalTiming *out, char **algo,
                 GError **error)
{
  return fake_kernel(c, t, out, algo, 5.0 + c->flops / 500e6);
}

gboolean
ddp_cal_layernorm_run(DdpCalKernels *k, const DdpCalCase *c, const DdpCalTimingOptions *t, DdpCalTiming *out,
                      char **algo, GError **error)
{
  return fake_kernel(c, t, out, algo, 3.0 + c->bytes / 2500e3);
}

gboolean
ddp_cal_softmax_run(DdpCalKernels *k, const DdpCalCase *c, const DdpCalTimingOptions *t, DdpCalTiming *out,
                    char **algo, GError **error)
{
  return fake_kernel(c, t, out, algo, 3.0 + c->bytes / 2500e3);
}

gboolean
ddp_cal_gelu_run(DdpCalKernels *k, const DdpCalCase *c, const DdpCalTimingOptions *t, DdpCalTiming *out, char **algo,
                 GError **error)
{
  return fake_kernel(c, t, out, algo, 3.0 + c->bytes / 2500e3);
}

gboolean
ddp_cal_copy_run(DdpCalKernels *k, const DdpCalCase *c, const DdpCalTimingOptions *t, DdpCalTiming *out, char **algo,
                 GError **error)
{
  return fake_kernel(c, t, out, algo, 2.0 + c->bytes / 3000e3);
}
