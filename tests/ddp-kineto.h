/* ddp-kineto — synthetic torch.profiler (Kineto) traces of a DDP run, written from a ddpsim
 * simulation, for the importer's tests: the project has no real multi-GPU trace of a known
 * configuration, so the tests build one in the documented format (src/ddpimport.h: the layout of a
 * real PyTorch 2.x DDP rank's trace) from a prediction whose every term is known, and check that
 * importing it gives those terms back. */
#ifndef DDP_TEST_DDP_KINETO_H
#define DDP_TEST_DDP_KINETO_H

#include "ddp.h"

typedef struct {
  guint steps;             /* ProfilerStep spans per rank, each a copy of the reported iteration */
  double noise;            /* each kernel's duration × (1 + noise·u), u uniform in [−1, 1]; 0: none */
  guint32 seed;            /* of the noise */
  const char *collective;  /* the NCCL kernels' collective: NULL for "AllReduce" */
  gboolean no_compute;     /* put every kernel on the NCCL stream (a trace missing its compute stream) */
} DdpKinetoOptions;

/* Writes one trace per watched rank of @result (simulated with watch_ranks) as DIR/rank-R.json and
 * returns their paths.  Compute-stream kernels (stream 7): forward and backward per layer, named
 * "fwd:"/"bwd:" + the layer's signature (identical layers, identical kernels), compression casts,
 * finalize and optimizer; NCCL stream (stream 20): one AllReduce per bucket with "In msg nelems"
 * (bytes / 4, dtype Float) and a Broadcast where DDP broadcasts buffers.  (transfer full) */
GPtrArray *ddp_kineto_write(const DdpScenario *scenario, const DdpResult *result, const char *dir,
                            const DdpKinetoOptions *options);

#endif
