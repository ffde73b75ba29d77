/* dp — torch.nn.DataParallel on one node, the single-process parameter-server pattern DDP
 * replaced: every iteration scatters the input from GPU 0, replicates the module onto every GPU
 * (a broadcast of all parameters and buffers), runs the replicas' forward from one Python thread
 * per GPU under one GIL, and after the whole backward reduces every gradient onto GPU 0, where
 * the only optimizer steps.  The costs and the PyTorch code they rest on are derived in dp.c. */
#ifndef DDP_DP_H
#define DDP_DP_H

#include <glib.h>
#include "ddp.h"
#include "jsonout.h"

/* The terms of one DataParallel iteration, ms; every term is per optimizer step (K micro-steps
 * under gradient accumulation repeat all but the optimizer). */
typedef struct DdpDpCost {
  guint64 gpus;
  double scatter_ms;           /* input chunks copied from GPU 0 to the others */
  double replicate_host_ms;    /* Python: copying every module once per replica */
  double broadcast_ms;         /* broadcast_coalesced of parameters and buffers from GPU 0 */
  double forward_ms;           /* forward, GIL-serialised launches included */
  double forward_gpu_ms;       /* F: one replica's forward on its GPU */
  double forward_host_ms;      /* L: host time to launch one replica's forward (layers · host_layer_us) */
  double backward_ms;          /* replicas' backward, in parallel (autograd device threads) */
  double recompute_ms;         /* of it: activation checkpointing's rerun forward passes (0: off) */
  double reduce_ms;            /* reduce_add_coalesced of the gradients onto GPU 0, after backward */
  double optimizer_ms;         /* on GPU 0 only */
  double host_iteration_ms;    /* the step boundary on the host (host_iteration_us), as DDP */
  double iteration_ms;
  guint chunks;                /* 10 MiB coalescing buffers of the parameters */
  double ddp_iteration_ms;     /* DistributedDataParallel, same setup, for comparison */
} DdpDpCost;

/* Measured (dp.c): Module._replicate_for_data_parallel, one module, one replica. */
#define DDP_DP_REPLICATE_US_PER_MODULE 3.2

/* The DataParallel iteration of @scenario (setup.mode is ignored).  Returns FALSE with
 * DDP_SCENARIO_ERROR_INVALID when the GPUs span more than one node (DataParallel is one process),
 * or with the collective's error. */
gboolean ddp_dp_cost(const DdpScenario *scenario, const DdpComputeOptions *compute, DdpDpCost *out, GError **error);

/* ddp_simulate() for setup.mode = dp: a result whose iteration, compute and communication figures
 * are DataParallel's, with result->dp set (and its ddp_iteration_ms: the same setup under DDP).
 * Returns: (transfer full) or NULL with @error set. */
DdpResult *ddp_dp_simulate(const DdpScenario *scenario, const DdpRunOptions *options, GError **error);

/* Writes the "dp" object (every DdpDpCost field) into @json's open object. */
void ddp_dp_json(DdpJson *json, const DdpDpCost *dp);

/* "DataParallel vs DDP" lines for predict's text report.  Returns: (transfer full). */
char *ddp_dp_report_text(const DdpDpCost *dp);

#endif
