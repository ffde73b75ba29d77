/* collective — cost of one NCCL collective on a cluster: AllReduce (and the small broadcasts DDP
 * issues), by the measured-physics nccl model (the default: host issue floor, launch, NCCL's per-hop
 * latencies, runtime channel fill, pipeline fill, peaks from the links; docs/collective.md §10), by
 * NCCL's tuning model (docs/model.md §2: t = lat + S / algBw, argmin over algorithm × protocol) or
 * by the plain ring alpha-beta closed form (docs/model.md §4).  Pure functions of
 * (cluster, gpus, bytes): no engine, no state beyond what _new precomputes.  The formulas and
 * their derivations are in docs/collective.md; the constants come from NVIDIA/nccl
 * src/graph/tuning.cc, search.cc and topo.h. */
#ifndef DDP_COLLECTIVE_H
#define DDP_COLLECTIVE_H

#include <glib.h>
#include "cluster.h"

#define DDP_COLLECTIVE_ERROR (ddp_collective_error_quark())
GQuark ddp_collective_error_quark(void);
typedef enum {
  DDP_COLLECTIVE_ERROR_INVALID,   /* a choice the model cannot honour (e.g. forced LL128 on PCIe) */
  DDP_COLLECTIVE_ERROR_CSV,       /* a comparison file that does not parse */
} DdpCollectiveError;

typedef struct {
  double time_us;           /* predicted time of one call, microseconds */
  double algbw_GBs;         /* bytes / time, 10^9 B/s (nccl-tests) */
  double busbw_GBs;         /* algbw · 2(n-1)/n for AllReduce, (n-1)/n for AllGather and ReduceScatter,
                             * algbw for Broadcast (nccl-tests) */
  DdpAlgorithm algorithm;   /* never AUTO */
  DdpProtocol protocol;     /* never AUTO; SIMPLE under the alpha-beta model */
  double latency_us;        /* the size-independent part of time_us */
  /* The nccl model's other terms (docs/collective.md "The nccl model"); zero under the others.
   * time_us = MAX(host_floor_us, latency_us + transfer_us + fill_us). */
  double transfer_us;       /* S over the bandwidth of the channels in use */
  double fill_us;           /* pipeline fill: the first chunk crossing the algorithm's hops */
  double host_floor_us;     /* gpus_per_process × host_launch_us when that bounds the call, else 0 */
  int channels;             /* channels NCCL runs at this size (0: not modelled) */
} DdpCollectiveCost;

typedef struct _DdpCollective DdpCollective;

/* Cost model for @gpus ranks on @cluster (its nccl settings choose algorithm/protocol, AUTO =
 * fastest).  Fails when @gpus does not fit the cluster, or when the forced algorithm × protocol
 * is one NCCL would not run there.  Free with ddp_collective_free(). */
DdpCollective *ddp_collective_new(const DdpCluster *cluster, guint64 gpus, GError **error);
void ddp_collective_free(DdpCollective *c);

typedef struct _DdpFit DdpFit;
/* From now on each collective's costs come from @fit's measured curve of it (fit.h) where it
 * measured exactly this communicator's ranks and nodes — AllReduce, and the AllGather,
 * ReduceScatter and Broadcast of nccl-tests imports; elsewhere the model answers — built, for a
 * calibrated answer, on the cluster whose tiers tierfit.h fitted to the same calibration's
 * AllReduce curves.  @fit is borrowed and must outlive @c. */
void ddp_collective_use_calibration(DdpCollective *c, const DdpFit *fit);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(DdpCollective, ddp_collective_free)

/* GPUs one host thread issues collectives for: nccl-tests' -g (its default 1, as PyTorch DDP with
 * one process per GPU).  A measurement property, not the cluster's: with -g 8 one thread launches
 * eight kernels per call and small calls are bound by that (the nccl model's host floor).  Only
 * the nccl cost model uses it; @gpus_per_process >= 1. */
void ddp_collective_set_gpus_per_process(DdpCollective *c, guint gpus_per_process);

guint64 ddp_collective_gpus(const DdpCollective *c);
/* Servers the ranks occupy. */
guint64 ddp_collective_nodes(const DdpCollective *c);
/* NVLink domains the ranks occupy: the nodes of NCCL's topology (the servers, unless the cluster's
 * [intra] domain_gpus joins several into one NVLink domain, as an NVL72 rack does). */
guint64 ddp_collective_domains(const DdpCollective *c);
/* The caveat a report prints where the ranks span several multi-host NVLink domains (2 ≤ @domains <
 * @nodes servers) and NCCL chooses the algorithm (@configured auto): across NVL72 racks the public
 * curves ran below the model's NVLSTree or as NCCL's ring (docs/collective.md §11.8).  Two lines,
 * each begun with @prefix; @ring_how says how to ask for the ring.  NULL where it does not apply. */
char *ddp_collective_domains_caveat(guint64 nodes, guint64 domains, DdpAlgorithm configured, const char *prefix,
                                    const char *ring_how);
/* The caveat a report prints where @nodes ≥ 2 servers talk over a transport whose public curves the
 * model is known to miss (docs/collective.md §10.3): NCCL's TCP sockets (`[inter] fabric = ethernet`)
 * at the default share of the line rate (no `[inter] efficiency`) — the public curves put that
 * share anywhere from 0.4 (two 16 Gb/s VMs) to about 0.1 (ALCF Polaris, 2 × 200 Gb/s a node) —
 * and HPE Slingshot through aws-ofi-nccl (`fabric = slingshot`), whose mid sizes ran 1.5–10 × slower
 * than the model at three of four sites.  Three lines, each begun with @prefix; NULL where it does
 * not apply. */
char *ddp_collective_transport_caveat(const DdpCluster *cluster, guint64 nodes, const char *prefix);

/* AllReduce of @bytes bytes (count × type size, as nccl-tests' size column).  With one rank the
 * cost is zero (no communication). */
void ddp_collective_allreduce(const DdpCollective *c, guint64 bytes, DdpCollectiveCost *out);
/* Broadcast of @bytes from one rank to all (DDP's buffer broadcast, bucket-index sync). */
void ddp_collective_broadcast(const DdpCollective *c, guint64 bytes, DdpCollectiveCost *out);

/* ---- AllGather, ReduceScatter and Broadcast beside AllReduce (docs/collective.md §12) ---- */

/* The NCCL operations ddpsim models, named as nccl-tests names its binaries (all_reduce_perf, ...). */
typedef enum {
  DDP_OP_ALL_REDUCE, DDP_OP_ALL_GATHER, DDP_OP_REDUCE_SCATTER, DDP_OP_BROADCAST, DDP_OP_COUNT
} DdpCollectiveOp;

/* "all_reduce", "all_gather", "reduce_scatter", "broadcast". */
const char *ddp_collective_op_name(DdpCollectiveOp op);
/* Those names, also without the underscore ("allgather"); -1 if unknown. */
int ddp_collective_op_parse(const char *name);
/* nccl-tests' busbw / algbw for @op on @gpus ranks (PERFORMANCE.md): 2(n-1)/n for AllReduce,
 * (n-1)/n for AllGather and ReduceScatter, 1 for Broadcast; 0 for one rank's AllGather/ReduceScatter. */
double ddp_collective_op_bus_factor(DdpCollectiveOp op, guint64 gpus);

/* One call of @op.  @bytes is the size nccl-tests prints: the whole buffer (AllReduce, Broadcast),
 * the gathered output (AllGather: n × each rank's input) and the reduced input (ReduceScatter:
 * n × each rank's output).  AllGather and ReduceScatter run on NCCL's ring ((n-1)/n of @bytes
 * through every link in n-1 steps) or, on one node with NVLS hardware, on NVLS; Tree and NVLSTree
 * are AllReduce-only, so a cluster forcing them gets the ring here.  A calibration that measured
 * @op on exactly this communicator answers from its curve (ddp_collective_use_calibration).  With
 * one rank the cost is zero. */
void ddp_collective_cost(const DdpCollective *c, DdpCollectiveOp op, guint64 bytes, DdpCollectiveCost *out);
void ddp_collective_allgather(const DdpCollective *c, guint64 bytes, DdpCollectiveCost *out);
void ddp_collective_reduce_scatter(const DdpCollective *c, guint64 bytes, DdpCollectiveCost *out);

/* AllReduce with one algorithm × protocol, whatever the cluster's settings say.  Returns FALSE
 * (and leaves @out alone) when NCCL would not run that pair here (LL128 off a NVLink fabric; NVLS
 * or NVLSTree without NVLS hardware, on the wrong node count, not Simple, or alpha-beta). */
gboolean ddp_collective_allreduce_with(const DdpCollective *c, guint64 bytes, DdpAlgorithm algorithm,
                                       DdpProtocol protocol, DdpCollectiveCost *out);

/* What NCCL's topology search would have found for one algorithm (docs/model.md §2.5), the numbers
 * NCCL_DEBUG=INFO prints as "nChannels N, bw INTRA/INTER". */
typedef struct {
  int channels;
  double bw_intra_GBs;      /* per channel */
  double bw_inter_GBs;      /* per channel */
} DdpCollectiveGraph;

/* NCCL's tuning-table entry for one AllReduce algorithm × protocol: the "lat/bw" pair
 * NCCL_DEBUG_SUBSYS=TUNING prints, before the size-dependent corrections.  All zero when the
 * pair is disabled, and under the alpha-beta model (which has no such table). */
typedef struct {
  gboolean enabled;
  double latency_us;
  double algbw_GBs;
} DdpCollectiveTuning;

/* Any algorithm but AUTO; NVLS and NVLSTree share the NVLS graph (channels 0: there is none).
 * Under the alpha-beta model ring and tree have the single alpha-beta link (channels 1). */
void ddp_collective_graph(const DdpCollective *c, DdpAlgorithm algorithm, DdpCollectiveGraph *out);
void ddp_collective_tuning(const DdpCollective *c, DdpAlgorithm algorithm, DdpProtocol protocol,
                           DdpCollectiveTuning *out);

/* One stretch of sizes on which the AllReduce choice is constant: from @from_bytes up to the next
 * element's from_bytes - 1 (the last stretch is open-ended). */
typedef struct {
  guint64 from_bytes;
  DdpAlgorithm algorithm;
  DdpProtocol protocol;
} DdpCollectiveChoice;

/* The AllReduce choices for sizes 1 .. @max_bytes, exact to the byte.  Returns: (transfer full)
 * a GArray of DdpCollectiveChoice, first from_bytes = 1; free with g_array_unref(). */
GArray *ddp_collective_choices(const DdpCollective *c, guint64 max_bytes);

/* The latency-optimal pair (least time as bytes → 0) and the bandwidth-optimal pair (highest
 * algbw as bytes → ∞) among those the settings allow, and the crossover: the least size from
 * which the choice is the bandwidth-optimal pair for every larger size up to @max_bytes
 * (G_MAXUINT64 when it never is).  Any argument but @c may be NULL. */
void ddp_collective_crossover(const DdpCollective *c, guint64 max_bytes, DdpCollectiveChoice *latency_optimal,
                              DdpCollectiveChoice *bandwidth_optimal, guint64 *crossover_bytes);

/* ---- validation against measured nccl-tests curves (docs/collective.md "Validation") ---- */

typedef struct {
  guint64 bytes;
  double measured_us;
  DdpCollectiveCost predicted;
  double measured_busbw_GBs;   /* recomputed from bytes and measured_us, not the rounded CSV column */
  double busbw_error;          /* predicted / measured busbw - 1 */
} DdpComparePoint;

typedef struct {
  char *source;                /* the CSV's source and system columns */
  char *system;
  char *cluster;               /* as written in the cluster column */
  guint64 gpus, nodes;
  guint gpus_per_process;      /* the optional gpus_per_process column (nccl-tests -g), 1 without it */
  GArray *points;              /* of DdpComparePoint, in file order */
  double median_abs_error;     /* of busbw_error */
} DdpCompareCurve;

/* Reads an nccl-tests comparison CSV (header names the columns; needed: gpus, bytes, time_us,
 * cluster; source and system label the curves; optional gpus_per_process, nccl-tests' -g, default
 * 1: see ddp_collective_set_gpus_per_process) and predicts every row with ddp_collective_allreduce
 * on its cluster.  A cluster value with a '/' is a path (relative ones from the CSV's folder), anything else
 * a name for ddp_cluster_load().  Consecutive rows with the same source, system, cluster and gpus
 * form one curve.  Returns: (transfer full) a GPtrArray of DdpCompareCurve (freeing the array frees
 * them), or NULL with @error naming file:line. */
GPtrArray *ddp_collective_compare_csv(const char *path, GError **error);
/* Median of |busbw_error| over every point of @curves. */
double ddp_compare_median_abs_error(const GPtrArray *curves);

/* Size regimes of the validation statistics: latency-bound below 64 KiB, the mid range from 64 KiB
 * to 16 MiB inclusive, bandwidth-bound above 16 MiB; ALL is every size. */
typedef enum {
  DDP_REGIME_LATENCY, DDP_REGIME_MID, DDP_REGIME_BANDWIDTH, DDP_REGIME_ALL, DDP_REGIME_COUNT
} DdpSizeRegime;

typedef struct {
  guint points;                /* in the regime; 0 leaves the two errors NAN */
  double median_abs_error;     /* of |busbw_error|, a fraction (0.1 = 10 %) */
  double max_abs_error;
} DdpCompareStats;

DdpSizeRegime ddp_size_regime(guint64 bytes);
/* "< 64 KiB", "64 KiB - 16 MiB", "> 16 MiB", "all". */
const char *ddp_size_regime_name(DdpSizeRegime regime);
/* Per-regime statistics of one curve, and of every point of @curves pooled (out[DDP_REGIME_ALL] of
 * the latter is ddp_compare_median_abs_error's median).  @out has DDP_REGIME_COUNT elements. */
void ddp_compare_curve_stats(const DdpCompareCurve *curve, DdpCompareStats out[DDP_REGIME_COUNT]);
void ddp_compare_stats(const GPtrArray *curves, DdpCompareStats out[DDP_REGIME_COUNT]);

/* Names are "auto", "ring", "tree", "nvls", "nvlstree" and "auto", "LL", "LL128", "Simple" (as
 * NCCL_ALGO/NCCL_PROTO, case-insensitive: "NVLSTree" parses). */
const char *ddp_algorithm_name(DdpAlgorithm a);
const char *ddp_protocol_name(DdpProtocol p);
int ddp_algorithm_parse(const char *name);   /* -1 if unknown; case-insensitive */
int ddp_protocol_parse(const char *name);    /* -1 if unknown; case-insensitive */
/* An NCCL_PROTO value: one name forces that protocol ("LL128"), a comma list enables only those
 * ("Simple,LL128") and a list after '^' disables them ("^LL"), as NCCL's parseList (tuning.cc) reads
 * it; "auto" enables all.  Sets *forced (a list that leaves one protocol forces it; AUTO otherwise)
 * and *disabled (bit p: protocol p off).  FALSE on an unknown name, an empty item or a list that
 * leaves no protocol. */
gboolean ddp_protocol_set_parse(const char *text, DdpProtocol *forced, guint *disabled);
/* "auto", the forced protocol's name, or the enabled ones as NCCL_PROTO lists them ("LL128,Simple"). */
char *ddp_protocol_set_name(DdpProtocol forced, guint disabled);
/* An NCCL_ALGO value, read as ddp_protocol_set_parse reads NCCL_PROTO ("Ring,Tree", "^NVLS,NVLSTree";
 * NCCL's CollNetDirect, CollNetChain and PAT, which ddpsim does not model, are accepted and
 * ignored), and its name ("auto", "ring", or the enabled ones: "ring,tree"). */
gboolean ddp_algorithm_set_parse(const char *text, DdpAlgorithm *forced, guint *disabled);
char *ddp_algorithm_set_name(DdpAlgorithm forced, guint disabled);

#endif
