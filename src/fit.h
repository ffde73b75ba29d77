/* fit — parameters fitted by least squares to calibration measurements (calibdb), and the lookups
 * the simulator makes with them under `--calibration DB`.
 *
 * (a) AllReduce: for each measured (algorithm, protocol, ranks, nodes), the Hockney/NCCL form
 *     t(S) = α + S / (1000 · algbw)   [µs; bytes; GB/s = 1000 B/µs]     (docs/model.md §2, §4)
 *     fitted over the measured sizes, and the measured per-size curve itself (commcurve.h).  At a
 *     measured (ranks, nodes) costs interpolate the curve; other GPU counts extrapolate the line
 *     (see fit.c).  AllGather, ReduceScatter and Broadcast imported from nccl-tests keep their
 *     curves only: they answer at exactly a measured (ranks, nodes), the model elsewhere.
 * (b) Compute: for each (layer kind, precision) the achieved rate (TFLOP/s for conv/linear/
 *     attention, GB/s for the memory-bound kinds) and its efficiency = rate / peak of the GPU's
 *     built-in spec — the factor compute.c multiplies peaks by; device-copy bandwidth gives the
 *     memory efficiency; and measured forward/backward times per layer signature, which replace
 *     the roofline for layers whose shape was measured.
 *
 * How predict uses it (the intended call sequence):
 *   g_autoptr(DdpFit) fit = ddp_fit_open(cli->calibration, &error);      // NULL → exit 2
 *   ddp_fit_apply_compute_options(fit, &compute_options);                // efficiencies
 *   for each layer:  sig = ddp_fit_layer_signature(model, i);
 *                    if (ddp_fit_layer_time(fit, sig, precision, batch, &fwd_us, &bwd_us)) use them
 *                    else roofline with ddp_fit_efficiency(fit, layer->kind, precision, …)
 *   per bucket:      ddp_fit_allreduce_cost(fit, gpus, nodes, bytes, algo, proto, &cost)
 *                    → FALSE: no calibration covers this (e.g. multi-node from a one-node run);
 *                      fall back to the built-in NCCL model.
 */
#ifndef DDP_FIT_H
#define DDP_FIT_H

#include <glib.h>
#include "calibdb.h"
#include "cluster.h"
#include "collective.h"
#include "compute.h"
#include "gpu.h"
#include "model.h"

/* kernel_points.probe of layer times imported from a torch.profiler trace (profimport.h). */
#define DDP_FIT_PROBE_PROFILER "torch-profiler"

#define DDP_FIT_ERROR (ddp_fit_error_quark())
GQuark ddp_fit_error_quark(void);
typedef enum {
  DDP_FIT_ERROR_NO_DATA,     /* the chosen runs hold no measurements */
  DDP_FIT_ERROR_MIXED_GPUS,  /* runs from different GPU models cannot be fitted together */
  DDP_FIT_ERROR_UNKNOWN_GPU, /* --gpu names no built-in spec */
  DDP_FIT_ERROR_IMPORT,      /* an imported file (nccl-tests output, profiler trace) is unreadable,
                                malformed or foreign (ncclimport.h, profimport.h) */
} DdpFitError;

/* Turns the error just set in *@error (a range check of an imported value) into
 * DDP_FIT_ERROR_IMPORT, its message kept; nothing when @error is NULL or unset. */
void ddp_fit_error_as_import(GError **error);

typedef struct _DdpFit DdpFit;

/* ---- making, storing, loading ------------------------------------------------------------- */

DdpFit *ddp_fit_from_db(DdpCalibDb *db, const gint64 *run_ids, guint n_run_ids, const char *gpu,
                        GError **error);
gint64 ddp_fit_store(DdpFit *fit, DdpCalibDb *db, GError **error);
DdpFit *ddp_fit_load(DdpCalibDb *db, gint64 fit_id, GError **error);
DdpFit *ddp_fit_open(const char *path, GError **error);
void ddp_fit_free(DdpFit *fit);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(DdpFit, ddp_fit_free)

/* Provenance: id (0 when not stored), runs, GPU name, spec name.  Owned by @fit. */
const DdpCalibFit *ddp_fit_header(const DdpFit *fit);
/* The built-in spec the efficiencies refer to; FALSE when the GPU was not recognised. */
gboolean ddp_fit_gpu_spec(const DdpFit *fit, DdpGpuSpec *out);
/* Guesses a built-in spec name ("h100", "a100-40gb", …) from a CUDA device name and memory size;
 * NULL when the part has no built-in spec (PCIe and NVL variants have different peaks). */
const char *ddp_fit_guess_gpu(const char *device_name, gint64 memory_bytes);

/* The fitted rows, for reports.  Owned by @fit; *n set to their number. */
const DdpCalibAllreduceFit *ddp_fit_allreduce_rows(const DdpFit *fit, guint *n);
const DdpCalibKernelFit *ddp_fit_kernel_rows(const DdpFit *fit, guint *n);
const DdpCalibLayerFit *ddp_fit_layer_rows(const DdpFit *fit, guint *n);
const DdpCalibResidual *ddp_fit_residual_rows(const DdpFit *fit, guint *n);
/* The measured per-size AllReduce points the curves interpolate (sorted by variant, then size). */
const DdpCalibCurvePoint *ddp_fit_curve_points(const DdpFit *fit, guint *n);
/* The same for AllGather, ReduceScatter and Broadcast (op set; sorted by op, variant, nodes, ranks, size). */
const DdpCalibCurvePoint *ddp_fit_collective_curve_points(const DdpFit *fit, guint *n);

/* ---- (a) AllReduce ------------------------------------------------------------------------ */

/* NCCL's names for the enums ("Ring", "Tree", "NVLS", "NVLSTree"; "LL", "LL128", "Simple");
 * NULL for AUTO. */
const char *ddp_fit_algorithm_name(DdpAlgorithm algorithm);
const char *ddp_fit_protocol_name(DdpProtocol protocol);

typedef struct {
  double alpha_us;        /* latency */
  double algbw_GBs;       /* asymptotic bytes/time, 10^9 B/s */
  double busbw_GBs;       /* algbw · 2(n−1)/n */
  gboolean exact;         /* measured at exactly these ranks and nodes; FALSE: extrapolated */
  int from_ranks, from_nodes; /* the measurement the bandwidth was taken from */
} DdpFitAlphaBeta;

gboolean ddp_fit_allreduce_params(const DdpFit *fit, const char *algorithm, const char *protocol,
                                  guint64 gpus, guint64 nodes, DdpFitAlphaBeta *out);

typedef struct {
  double time_us;         /* α + bytes / (1000 · algbw) */
  double algbw_GBs;       /* bytes / time */
  double busbw_GBs;       /* algbw · 2(n−1)/n */
  const char *algorithm;  /* NCCL name of the variant chosen ("Ring", "NVLS", or "auto"); static */
  const char *protocol;
  DdpAlgorithm algo;      /* the enum when there is one, else DDP_ALGO_AUTO ("auto", CollNet) */
  DdpProtocol proto;
  DdpFitAlphaBeta params; /* the fitted line of the variant (α, bandwidth) */
  gboolean from_curve;    /* TRUE: the time interpolates the measured curve at exactly these
                             ranks and nodes (commcurve.h); FALSE: the line (extrapolated) */
} DdpFitAllreduceCost;

/* Time of one AllReduce of @bytes: the measured curve at exactly @gpus × @nodes, else the fitted
 * line extrapolated; AUTO picks the fastest measured variant (see fit.c).  FALSE: not covered. */
gboolean ddp_fit_allreduce_cost(const DdpFit *fit, guint64 gpus, guint64 nodes, guint64 bytes,
                                DdpAlgorithm algorithm, DdpProtocol protocol, DdpFitAllreduceCost *out);

/* ---- AllGather, ReduceScatter, Broadcast (nccl-tests imports) ------------------------------ */

typedef struct {
  double time_us;         /* interpolated on the measured curve */
  double latency_us;      /* the curve's time at 0 bytes: its first segment's α */
  const char *algorithm;  /* NCCL name of the curve's variant ("auto": NCCL's own choice); static */
  const char *protocol;
  DdpAlgorithm algo;      /* the enum when there is one, else DDP_ALGO_AUTO */
  DdpProtocol proto;
} DdpFitCollectiveCost;

/* Time of one @op (not AllReduce) of @bytes from its curve measured at exactly @gpus × @nodes.
 * FALSE: not measured there (see fit.c). */
gboolean ddp_fit_collective_cost(const DdpFit *fit, DdpCollectiveOp op, guint64 gpus, guint64 nodes, guint64 bytes,
                                 DdpAlgorithm algorithm, DdpProtocol protocol, DdpFitCollectiveCost *out);
/* One "note: " line on where @op's times for @gpus on @nodes come from (fit.c); NULL for one GPU. */
char *ddp_fit_collective_note(const DdpFit *fit, const char *calibration_name, DdpCollectiveOp op, guint64 gpus,
                              guint64 nodes);

/* ---- (b) compute -------------------------------------------------------------------------- */

typedef struct {
  gboolean flops_basis;   /* TRUE: rate in TFLOP/s vs peak_tflops[precision]; FALSE: GB/s vs HBM */
  double rate;
  double efficiency;      /* rate / peak; NAN when the GPU has no built-in spec */
  double overhead_us;     /* fitted fixed cost per kernel */
  int n_points;
  double rms_rel;
  const char *measured_as;      /* the kind the numbers were measured on ("linear" for attention,
                                   "copy" for device copies); static */
  const char *measured_precision;
} DdpFitEfficiency;

gboolean ddp_fit_efficiency(const DdpFit *fit, DdpLayerKind kind, DdpPrecision precision, DdpFitEfficiency *out);
gboolean ddp_fit_memory(const DdpFit *fit, DdpFitEfficiency *out);
void ddp_fit_apply_compute_options(const DdpFit *fit, DdpComputeOptions *options);

char *ddp_fit_layer_signature(const DdpModel *model, guint layer);
gboolean ddp_fit_layer_time(const DdpFit *fit, const char *signature, DdpPrecision precision, double batch,
                            double *forward_us, double *backward_us);

/* One-line warnings (GPU model differs; GPU or node count outside the measured range) for using
 * @fit on this cluster and job size.  (transfer full) (element-type utf8), possibly empty. */
GPtrArray *ddp_fit_coverage_warnings(const DdpFit *fit, const DdpGpuSpec *gpu, guint64 gpus, gboolean allreduce);
/* A note (transfer full), or NULL: @fit measured NCCL's own choice of AllReduce at exactly @gpus ×
 * @nodes, but the cluster forces @algorithm or @protocol, which that curve cannot answer for — the
 * model does (ddp_fit_allreduce_cost), and the user should know the measurement is set aside. */
char *ddp_fit_forced_variant_note(const DdpFit *fit, guint64 gpus, guint64 nodes, DdpAlgorithm algorithm,
                                  DdpProtocol protocol);

/* ---- the least-squares core (exposed for tests and for calibrate's progress lines) -------- */

/* Fits t = a + b·x minimising Σ((a + b·x_i − t_i)/t_i)², i.e. relative residuals, so that 8-byte and
 * 8-GiB points weigh alike.  Constraints: a ≥ 0 and b > 0 — when the unconstrained optimum breaks
 * one, the fit is redone on the boundary (b through the origin; or, with @allow_flat, b = 0 and a
 * the weighted mean: a latency-only fit).  Returns FALSE when fewer than one usable point (t > 0). */
gboolean ddp_fit_line(const double *x, const double *t, guint n, gboolean allow_flat, double *a, double *b);

/* The `ddpsim fit` verb (src/cmd-fit.c). */
int ddp_cmd_fit(int argc, char **argv);

#endif
