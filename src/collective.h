/* collective — cost of one NCCL collective on a cluster: AllReduce (and the small broadcasts DDP
 * issues), by NCCL's tuning model (research §2: t = lat + S / algBw, argmin over algorithm ×
 * protocol) or by the plain ring alpha-beta closed form.  Pure functions of (cluster, gpus, bytes):
 * no engine, no state beyond what _new precomputes. */
#ifndef DDP_COLLECTIVE_H
#define DDP_COLLECTIVE_H

#include <glib.h>
#include "cluster.h"

#define DDP_COLLECTIVE_ERROR (ddp_collective_error_quark())
GQuark ddp_collective_error_quark(void);
typedef enum { DDP_COLLECTIVE_ERROR_INVALID } DdpCollectiveError;

typedef struct {
  double time_us;           /* predicted time of one call, microseconds */
  double algbw_GBs;         /* bytes / time, 10^9 B/s (nccl-tests) */
  double busbw_GBs;         /* algbw · 2(n-1)/n for AllReduce (nccl-tests) */
  DdpAlgorithm algorithm;   /* never AUTO */
  DdpProtocol protocol;     /* never AUTO */
} DdpCollectiveCost;

typedef struct _DdpCollective DdpCollective;

/* Cost model for @gpus ranks on @cluster (its nccl settings choose algorithm/protocol, AUTO =
 * fastest).  Fails when @gpus does not fit the cluster.  Free with ddp_collective_free(). */
DdpCollective *ddp_collective_new(const DdpCluster *cluster, guint64 gpus, GError **error);
void ddp_collective_free(DdpCollective *c);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(DdpCollective, ddp_collective_free)

guint64 ddp_collective_gpus(const DdpCollective *c);
guint64 ddp_collective_nodes(const DdpCollective *c);

/* AllReduce of @bytes bytes (count × type size, as nccl-tests' size column).  With one rank the
 * cost is zero (no communication). */
void ddp_collective_allreduce(const DdpCollective *c, guint64 bytes, DdpCollectiveCost *out);
/* Broadcast of @bytes from one rank to all (DDP's buffer broadcast, bucket-index sync). */
void ddp_collective_broadcast(const DdpCollective *c, guint64 bytes, DdpCollectiveCost *out);

#endif
