/* profimport — per-layer backward GPU times of a 1-GPU training step, read from a torch.profiler
 * Chrome trace (`prof.export_chrome_trace(path)`, Kineto's JSON) and stored as measured layer
 * times in the calibration store (`ddpsim fit --import TRACE --model M --batch B`).
 *
 * What the trace holds (Kineto's chrome trace format, PyTorch ≥ 1.8):
 *   - every autograd node the engine runs is a CPU span ("ph":"X", "cat":"cpu_op") named
 *     "autograd::engine::evaluate_function: AddmmBackward0", on the autograd thread;
 *   - every CUDA launch made inside it is a "cuda_runtime" (or "cuda_driver") span on the same
 *     thread, nested in time, with args.correlation = N;
 *   - the GPU work it launched is a "kernel" / "gpu_memcpy" / "gpu_memset" span with the same
 *     args.correlation (Kineto also draws an "ac2g" flow between the two; the correlation id is
 *     the same link and is all we use).
 * So the GPU time of one backward node = Σ duration of the GPU spans whose correlation belongs to
 * a launch nested in the node's CPU span (same pid and tid).
 *
 * Mapping nodes to the model's layers (the documented heuristic).  A trace names ops, not
 * modules, so the weight-bearing backward ops anchor the mapping:
 *   linear     AddmmBackward, MmBackward, LinearBackward
 *   conv       ConvolutionBackward, CudnnConvolutionBackward, ThnnConv2DBackward, SlowConv2DBackward…
 *   norm       NativeLayerNormBackward, NativeBatchNormBackward, CudnnBatchNormBackward,
 *              NativeGroupNormBackward
 *   embedding  EmbeddingBackward, EmbeddingDenseBackward, EmbeddingBagBackward
 * (any numeric suffix: Backward0, Backward1).  The model's anchors are its layers of those kinds
 * that own parameters, in the order backward runs them (model.h backward_layers: reverse forward
 * order).  The two kind sequences are aligned by a longest common subsequence (ties broken by
 * AddmmBackward ↔ a layer with a bias, MmBackward ↔ one without), so an extra
 * weight-bearing op (a tied LM head's MmBackward) or a layer implemented without one (an RMSNorm
 * written in Python) is skipped rather than shifting everything after it.  Then, in execution
 * order:
 *   - a matched anchor op's GPU time goes to its layer;
 *   - AccumulateGrad nodes go to the layer of the anchor before them (they accumulate its
 *     parameters' gradients; the engine runs them first, at the highest priority);
 *   - every other node (ReLU, pooling, residual adds, attention matmuls, unmatched anchors)
 *     between two matched anchors goes to the model layers between those two in backward order
 *     that were not matched (parameter-free layers), split in proportion to their backward_bytes
 *     (equally when those are 0); when there is none, to the next anchor's layer — the case of
 *     ops the model folds into a layer, like the ReLU in resnet50.model's BatchNorm layers;
 *   - nodes before the first anchor (the loss's backward) go to the unmatched layers before it in
 *     backward order, else to the first anchor's layer; nodes after the last anchor likewise.
 * Nothing is dropped: the layers' times add up to the trace's total backward GPU time.  With
 * several "ProfilerStep#N" spans each step is mapped on its own and the times are averaged over
 * the steps that ran a backward pass.
 *
 * Refused (DDP_FIT_ERROR_IMPORT, exit 2): not JSON; JSON without trace events; no backward node;
 * backward nodes but no GPU span linked to them (a CPU-only trace); fewer than half the model's
 * anchors matched (the trace is of another network).  Forward times are not taken from the trace
 * (they would need module names, `with_modules`); the model's forward stays.
 */
#ifndef DDP_PROFIMPORT_H
#define DDP_PROFIMPORT_H

#include <glib.h>
#include "calibdb.h"
#include "model.h"

typedef struct {
  guint layer;              /* index into the model's layers */
  double backward_us;       /* GPU time attributed to it, per step */
  gboolean anchored;        /* TRUE: a weight-bearing op of the trace matched it */
} DdpProfLayerTime;

/* A trace mapped onto a model.  Owned strings; ddp_prof_trace_free(). */
typedef struct {
  GArray *layers;           /* DdpProfLayerTime, one per model layer, forward order */
  guint steps;              /* backward passes averaged */
  guint backward_nodes;     /* per step, on average (rounded down) */
  double total_backward_us; /* Σ GPU time of the backward nodes, per step */
  guint anchors_model, anchors_trace, anchors_matched;  /* per step (of the first step) */
  char *gpu_name;           /* deviceProperties[0].name, "" when absent */
  int sm_arch;              /* computeMajor·10 + computeMinor, 0 when absent */
  gint64 gpu_memory_bytes;
  char *cuda_version;       /* "12.4" from cuda_runtime_version 12040, "" when absent */
  /* set by ddp_prof_trace_read (NULL / 0 from ddp_prof_trace_parse) */
  DdpModel *model;          /* the network it was mapped onto (owned) */
  char *model_arg;          /* --model as given */
  double batch;             /* samples per step of the profiled run */
  int precision;            /* DdpPrecision */
  DdpCalibImport source;    /* provenance: path, SHA-256, mtime, size */
} DdpProfTrace;

void ddp_prof_trace_free(DdpProfTrace *t);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(DdpProfTrace, ddp_prof_trace_free)

/* Parses the JSON @text (from @path, named in messages) and maps it onto @model.
 * Returns: (transfer full), or NULL with DDP_FIT_ERROR_IMPORT. */
DdpProfTrace *ddp_prof_trace_parse(const char *path, const char *text, gsize length, const DdpModel *model,
                                   GError **error);

typedef struct {
  const char *model;        /* model name or file (ddp_model_load) */
  const char *batch;        /* --batch as given: samples per step of the profiled run (DDP_RANGE_BATCH) */
  const char *precision;    /* NULL: fp32 */
} DdpProfImportOptions;

/* Reads @path (JSON, or gzip-compressed JSON: .json.gz) through the checked reader (fileio.h:
 * a regular file of at most 64 MiB, inflated to at most 64 MiB), checks @options, parses and maps
 * it — touching no database.  Every member is checked for its type, every number against the range
 * table (ranges.h: ts, dur, args.correlation, computeMajor/Minor, totalGlobalMem,
 * cuda_runtime_version), nesting is bounded before parsing and the events are counted first.
 * Returns: (transfer full), or NULL with DDP_FIT_ERROR_IMPORT (or a model or range error). */
DdpProfTrace *ddp_prof_trace_read(const char *path, const DdpProfImportOptions *options, GError **error);

/* Stores a read trace's layer times as one run (kernel_points with probe DDP_FIT_PROBE_PROFILER, op
 * "bwd", the layer's signature, batch and precision) plus its imports row, all in one transaction
 * (ddp_calibdb_import_begin).  An identical file imported before comes back with *@again set.
 * Returns: the run id, or 0 with @error and nothing written. */
gint64 ddp_prof_trace_store(DdpCalibDb *db, DdpProfTrace *trace, gboolean *again, GError **error);

/* ddp_prof_trace_read, then ddp_prof_trace_store.
 * Returns: the run id, or 0 with @error; nothing is written when the trace is refused. */
gint64 ddp_prof_import(DdpCalibDb *db, const char *path, const DdpProfImportOptions *options, gboolean *again,
                       GError **error);

#endif
