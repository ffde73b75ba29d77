/* calibrate — the plain-C contract of `ddpsim-calibrate`, the program that measures a GPU machine
 * for ddpsim (calibrate/README.md).
 *
 * The CUDA wall.  Everything that includes a CUDA, NCCL, cuBLAS or cuDNN header lives in a .cu
 * file (device.cu, allreduce.cu, gemm.cu, conv.cu, kernels.cu) behind the functions declared here;
 * this header includes GLib and ddpsim headers only, so main.c and plan.c are ordinary C11 and
 * share calibdb and the model loader with the simulator.  Failures cross the wall as GError
 * (DDP_CAL_ERROR) carrying file:line of the failing CUDA/NCCL call (cuda-check.h); nothing aborts.
 *
 * Probes.  A probe is a descriptor (nccl-tests' style): a name, a run function (CUDA side) and
 * metric formulas — FLOPs and bytes of one call — computed by the plan (plan.c) so that the
 * formulas are testable without a GPU.  Every probe shares one timing discipline
 * (DdpCalTimingOptions): warm-up launches, then timed launches bracketed by CUDA events recorded
 * on the probe's stream, one event between consecutive launches so that the mean and the fastest
 * and slowest single launch all come from device timestamps, never from host clocks.
 */
#ifndef DDP_CALIBRATE_H
#define DDP_CALIBRATE_H

#include <glib.h>
#include "gpu.h"
#include "model.h"

G_BEGIN_DECLS /* the .cu files include this from C++ */

#define DDP_CAL_ERROR (ddp_cal_error_quark())
GQuark ddp_cal_error_quark(void);
typedef enum {
  DDP_CAL_ERROR_NO_DEVICE,     /* no CUDA device visible (no driver, CUDA_VISIBLE_DEVICES empty, …) */
  DDP_CAL_ERROR_CUDA,          /* a CUDA runtime call failed */
  DDP_CAL_ERROR_OUT_OF_MEMORY, /* a buffer did not fit: the measurement is skipped, the run goes on */
  DDP_CAL_ERROR_UNSUPPORTED,   /* the library has no kernel for it (cuDNN NOT_SUPPORTED, NCCL
                                  algorithm/protocol not available): skipped, recorded as such */
  DDP_CAL_ERROR_NCCL,
  DDP_CAL_ERROR_CUBLAS,
  DDP_CAL_ERROR_CUDNN,
  DDP_CAL_ERROR_INPUT,         /* bad option or plan: exit 2 */
  DDP_CAL_ERROR_MPI,
} DdpCalError;

/* Exit status of ddpsim-calibrate: as every ddpsim program, plus 3 for "no GPU here" so that tests
 * and scripts can tell a machine without GPUs from a failure. */
enum { DDP_CAL_EXIT_OK = 0, DDP_CAL_EXIT_INTERNAL = 1, DDP_CAL_EXIT_INPUT = 2, DDP_CAL_EXIT_NO_GPU = 3 };

/* ---- devices (device.cu) ------------------------------------------------------------------- */

typedef struct {
  char name[256];        /* cudaDeviceProp.name */
  char pci_bus_id[32];
  int sm_arch;           /* major·10 + minor */
  int sm_count;
  gint64 memory_bytes;   /* total device memory */
} DdpCalDevice;

typedef struct {
  char driver[32], runtime[32], nccl[32], cublas[32], cudnn[32];
} DdpCalVersions;

/* Number of visible devices; FALSE with DDP_CAL_ERROR_NO_DEVICE when there is none. */
gboolean ddp_cal_device_count(int *count, GError **error);
gboolean ddp_cal_device_info(int device, DdpCalDevice *out, GError **error);
gboolean ddp_cal_device_free_memory(int device, gint64 *free_bytes, GError **error);
/* Driver, runtime, NCCL, cuBLAS and cuDNN versions as "13.0", "2.28.9", … */
gboolean ddp_cal_versions(DdpCalVersions *out, GError **error);

/* ---- timing -------------------------------------------------------------------------------- */

typedef struct {
  int warmup;            /* untimed launches first (clocks, caches, NCCL connections) */
  int iterations;        /* timed launches; 0: adaptive, ≈ target_ms of work */
  double target_ms;
  int min_iterations, max_iterations; /* bounds of the adaptive count */
} DdpCalTimingOptions;

typedef struct {
  double mean_us;        /* (last event − first event) / iterations */
  double min_us, max_us; /* fastest and slowest single launch */
  int iterations;
} DdpCalTiming;

/* Iterations for an estimated @estimate_us per launch under @t (the adaptive rule, in one place). */
int ddp_cal_iterations(const DdpCalTimingOptions *t, double estimate_us);

/* ---- AllReduce (allreduce.cu) -------------------------------------------------------------- */

typedef struct _DdpCalComm DdpCalComm;

#define DDP_CAL_NCCL_ID_BYTES 128 /* sizeof(ncclUniqueId) */

/* A fresh NCCL unique id (the MPI rank 0 broadcasts it, as nccl-tests does). */
gboolean ddp_cal_nccl_unique_id(unsigned char id[DDP_CAL_NCCL_ID_BYTES], GError **error);

/* Communicators for @n_devices local GPUs @devices (one process driving them all, as
 * nccl-tests -g).  @id NULL: a single-process clique (ncclCommInitAll), ranks 0…n−1.  Otherwise
 * ranks @first_rank… of an @n_ranks-rank clique spread over processes (ncclCommInitRank in a group).
 * Buffers for AllReduce up to @max_bytes (twice that when @out_of_place) are allocated on each GPU.
 * NCCL reads NCCL_ALGO / NCCL_PROTO when the communicator is made: set them before. */
DdpCalComm *ddp_cal_comm_new(int n_devices, const int *devices, const unsigned char *id, int n_ranks,
                             int first_rank, gint64 max_bytes, gboolean out_of_place, GError **error);
/* Times one float SUM AllReduce of @bytes on every local GPU; the mean is the slowest GPU's. */
gboolean ddp_cal_comm_allreduce(DdpCalComm *comm, gint64 bytes, gboolean in_place, const DdpCalTimingOptions *t,
                                DdpCalTiming *out, GError **error);
void ddp_cal_comm_free(DdpCalComm *comm);

/* ---- kernels (gemm.cu, conv.cu, kernels.cu) ------------------------------------------------ */

/* Per-device handles (cuBLAS, cuDNN), one stream, and grow-only scratch buffers. */
typedef struct _DdpCalKernels DdpCalKernels;
DdpCalKernels *ddp_cal_kernels_new(int device, GError **error);
void ddp_cal_kernels_free(DdpCalKernels *k);

typedef enum {
  DDP_CAL_PROBE_GEMM, DDP_CAL_PROBE_CONV, DDP_CAL_PROBE_LAYERNORM, DDP_CAL_PROBE_SOFTMAX,
  DDP_CAL_PROBE_GELU, DDP_CAL_PROBE_COPY, DDP_CAL_PROBE_COUNT
} DdpCalProbeKind;

typedef enum {
  DDP_CAL_OP_FWD, DDP_CAL_OP_DX, DDP_CAL_OP_DW, DDP_CAL_OP_BWD_DATA, DDP_CAL_OP_BWD_FILTER, DDP_CAL_OP_BWD,
  DDP_CAL_OP_COPY, DDP_CAL_OP_COUNT
} DdpCalOp;

/* One kernel measurement. */
typedef struct {
  DdpCalProbeKind probe;
  DdpCalOp op;
  DdpPrecision precision;
  /* GEMM, cuBLAS column-major: C[m×n] = op(A)[m×k] · op(B)[k×n] */
  gint64 m, n, k;
  gboolean trans_a, trans_b;
  /* convolution, NCHW: input n×c×h×w, k filters of (c/groups)×r×s, stride, symmetric padding */
  struct { gint64 n, c, h, w, k, r, s, pad_h, pad_w, stride, groups; } conv;
  /* row kernels (layer norm, softmax): rows × cols; GELU: rows·cols elements; copy: bytes */
  gint64 rows, cols;
  gint64 copy_bytes;
  /* the metric formulas' results (plan.c: ddp_cal_case_metrics) */
  double flops;          /* floating-point operations of one call */
  double bytes;          /* each operand read or written once */
  char shape[160];       /* for people and for the database */
} DdpCalCase;

/* A probe descriptor.  @algo receives what the library chose (g_free), "" when nothing to say. */
typedef struct {
  const char *name;      /* "gemm", "conv", "layernorm", "softmax", "gelu", "copy" */
  gboolean (*run)(DdpCalKernels *k, const DdpCalCase *c, const DdpCalTimingOptions *t, DdpCalTiming *out,
                  char **algo, GError **error);
} DdpCalProbe;

gboolean ddp_cal_gemm_run(DdpCalKernels *k, const DdpCalCase *c, const DdpCalTimingOptions *t, DdpCalTiming *out,
                          char **algo, GError **error);
gboolean ddp_cal_conv_run(DdpCalKernels *k, const DdpCalCase *c, const DdpCalTimingOptions *t, DdpCalTiming *out,
                          char **algo, GError **error);
gboolean ddp_cal_layernorm_run(DdpCalKernels *k, const DdpCalCase *c, const DdpCalTimingOptions *t,
                               DdpCalTiming *out, char **algo, GError **error);
gboolean ddp_cal_softmax_run(DdpCalKernels *k, const DdpCalCase *c, const DdpCalTimingOptions *t,
                             DdpCalTiming *out, char **algo, GError **error);
gboolean ddp_cal_gelu_run(DdpCalKernels *k, const DdpCalCase *c, const DdpCalTimingOptions *t, DdpCalTiming *out,
                          char **algo, GError **error);
gboolean ddp_cal_copy_run(DdpCalKernels *k, const DdpCalCase *c, const DdpCalTimingOptions *t, DdpCalTiming *out,
                          char **algo, GError **error);

/* The descriptor table (plan.c). */
const DdpCalProbe *ddp_cal_probe(DdpCalProbeKind kind);
const char *ddp_cal_op_name(DdpCalOp op);

/* ---- the plan (plan.c): what one run measures, in order, batch by batch -------------------- */

/* The measuring options.  They are stored with the run (ddp_cal_options_to_string) and
 * --resume parses them back, so an interrupted run continues with exactly its own plan. */
typedef struct {
  int devices;           /* local GPUs to use; 0: all visible */
  char *gpu_counts;      /* AllReduce GPU counts, "2,4,8"; NULL: powers of two up to devices, and devices */
  char *variants;        /* "auto,Ring/LL,…"; NULL: the default list */
  gint64 min_bytes, max_bytes;
  int step_factor;
  gboolean out_of_place; /* also time out-of-place (in-place, as DDP, always) */
  char *model;           /* layers to measure; NULL: the built-in set */
  char *batches;         /* samples per GPU, "8,32" */
  char *precisions;      /* "fp32,tf32,fp16,bf16" */
  char *skip;            /* "allreduce,kernels,copy" subsets */
  DdpCalTimingOptions timing;
} DdpCalOptions;

void ddp_cal_options_init(DdpCalOptions *o);
void ddp_cal_options_clear(DdpCalOptions *o);
/* The measuring options as a GOption group writing into @o (sizes accept 8, 4K, 32M, 8G). */
GOptionGroup *ddp_cal_option_group(DdpCalOptions *o);
/* Checks ranges and list syntax after parsing; DDP_CAL_ERROR_INPUT names the option. */
gboolean ddp_cal_options_validate(const DdpCalOptions *o, GError **error);
/* Every measuring option spelled out ("--devices 8 --gpu-counts 2,4,8 …"), shell-quoted. */
char *ddp_cal_options_to_string(const DdpCalOptions *o);
/* Parses a string written by ddp_cal_options_to_string() back into @o (initialised first). */
gboolean ddp_cal_options_from_string(DdpCalOptions *o, const char *text, GError **error);
/* "8", "4K", "32M", "8G" (powers of 1024, as nccl-tests' -b/-e) → bytes. */
gboolean ddp_cal_parse_size(const char *text, gint64 *out, GError **error);

typedef enum { DDP_CAL_BATCH_ALLREDUCE, DDP_CAL_BATCH_KERNEL } DdpCalBatchType;

/* One batch: measured, then committed in one transaction. */
typedef struct {
  char *name;            /* unique in the run: the --resume key */
  DdpCalBatchType type;
  /* ALLREDUCE: one size of one variant at one GPU count */
  char *algorithm, *protocol; /* NCCL_ALGO / NCCL_PROTO values, "auto" to leave NCCL its choice */
  int ranks;             /* GPUs in the AllReduce (all processes) */
  int local_devices;     /* of which this process drives */
  gint64 bytes;
  /* KERNEL: every kernel of one layer shape at one precision and batch (or one device copy) */
  char *layer_kind;      /* DdpLayerKind name, or "copy" */
  char *signature;       /* fit.h: ddp_fit_layer_signature(); "" for copies */
  char *layer;           /* a layer carrying it */
  double batch;
  char *precision;       /* "fp16", …, "any" for copies */
  GArray *cases;         /* DdpCalCase */
} DdpCalBatch;

void ddp_cal_batch_free(DdpCalBatch *b);

/* Fills c->flops, c->bytes and c->shape from the case's dimensions (the metric formulas). */
void ddp_cal_case_metrics(DdpCalCase *c);

/* The batches of one run, in measuring order: AllReduce (grouped by variant and GPU count, so one
 * communicator serves a group), device copies, then layer kernels.  @local_devices: GPUs this
 * process drives; @n_ranks and @nodes: the whole job's (MPI), or @local_devices and 1.
 * @notes (out): lines explaining what the plan left out (layers without a probe, …).
 * Returns: (transfer full) (element-type DdpCalBatch), or NULL with DDP_CAL_ERROR_INPUT or a
 * model-loading error. */
GPtrArray *ddp_cal_plan(const DdpCalOptions *o, int local_devices, int n_ranks, int nodes, GPtrArray *notes,
                        GError **error);

G_END_DECLS

#endif
