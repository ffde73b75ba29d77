/* tierfit — calibrate small, predict large: the nccl collective model's own per-tier parameters
 * fitted to measured AllReduce curves (docs/calibration.md "Calibrate small, predict large").
 *
 * The model's time for a call (docs/collective.md §10) has, per tier, one bandwidth share and one
 * size-independent cost that no spec fixes:
 *   inside an NCCL node  — [intra] efficiency (the share of the NVLink/PCIe rate NCCL reaches) and
 *                          [nccl] launch_us (kernel launch to completion, per call);
 *   across NCCL nodes    — [inter] efficiency (the share of the NIC line rate) and
 *                          [inter] latency_us (per network hop).
 * Curves measured on one node fit the first pair; curves measured across nodes (any number of node
 * counts, one is enough) fit the second with the first held.  The fitted cluster then answers at
 * every GPU and node count through the model's own structure (algorithm choice, hops, per-node NIC
 * load, channel caps), instead of a free curve or a held bandwidth.  Pure functions of their inputs. */
#ifndef DDP_TIERFIT_H
#define DDP_TIERFIT_H

#include <glib.h>
#include "cluster.h"
#include "fit.h"

/* One measured AllReduce time. */
typedef struct {
  guint64 gpus, nodes;          /* ranks and servers of the measurement */
  guint gpus_per_process;       /* nccl-tests -g (1: one process per GPU) */
  DdpAlgorithm algorithm;       /* the variant measured, or AUTO (NCCL's own choice) */
  DdpProtocol protocol;
  guint64 bytes;
  double time_us;
} DdpTierPoint;

typedef struct {
  gboolean fitted;              /* FALSE: no usable point of this tier; the cluster's values stay */
  double efficiency;            /* [intra] or [inter] efficiency */
  double latency_us;            /* [nccl] launch_us (intra) or [inter] latency_us (inter) */
  guint points;                 /* measurements used */
  double mean_log_error;        /* mean |ln(predicted/measured)| at the fitted values */
  guint64 min_nodes, max_nodes; /* servers of the measurements used */
  guint64 min_gpus, max_gpus;
  gboolean efficiency_held;     /* the points do not pin it: the cluster's own value (ddp_tier_fit) */
  gboolean latency_held;
  gboolean at_edge;             /* the fit ended on its search range's edge: both held (ddp_tier_fit) */
  double edge_efficiency, edge_latency_us;   /* where it ended, for the report */
  double spec_efficiency;       /* the cluster's own share, which the report compares the fitted one with */
} DdpTierParams;

typedef struct {
  DdpTierParams intra, inter;
  /* No one-node curve, and the multi-node points cheaper than the cluster's launch allows even with
   * no per-hop latency: [nccl] launch_us fitted to them, downward (ddp_tier_fit) */
  gboolean launch_from_inter;
  double launch_us;
} DdpTierFit;

/* Fits both tiers of @cluster to @points (any order).  Points of a tier the cluster cannot describe
 * (a GPU count that does not fit it, multi-node points on a cluster without a network) are skipped.
 * A parameter the points do not pin — holding it at the cluster's own value costs less than
 * TIER_HOLD of mean |log error| (large sizes only say nothing of a per-call cost, small ones nothing
 * of a bandwidth) — keeps that value and is marked held.  A tier whose fit ends on the search
 * range's edge (the largest per-call cost, the smallest bandwidth share) keeps both values, marked
 * at_edge.  Without one-node points, a multi-node fit that ends at 0 us per network hop also fits
 * [nccl] launch_us, between 0 and the cluster's value (launch_from_inter).  Never fails; @out's
 * tiers say what was fitted. */
#define TIER_HOLD 0.01
/* A fitted [inter] share below this fraction of the cluster's own is reported as doubtful
 * (ddp_tier_fit_report): a report threshold, not a model constant. */
#define TIER_IMPLAUSIBLE_SHARE 0.5
void ddp_tier_fit(const DdpCluster *cluster, const DdpTierPoint *points, guint n, DdpTierFit *out);

/* The measured curves of a calibration (ddp_fit_curve_points) as tier points; gpus_per_process 1
 * (the database keeps no -g per curve: imports with -g > 1 are host-bound at small sizes, say so
 * in docs/calibration.md).  Returns: (transfer full) GArray of DdpTierPoint. */
GArray *ddp_tier_points_from_calibration(const DdpFit *fit);

/* Writes the fitted values into @cluster (the tiers fitted only). */
void ddp_tier_fit_apply(const DdpTierFit *fit, DdpCluster *cluster);

/* Fits @cluster to @calibration's curves and applies the result (the call the verbs make before
 * building their collective model). */
void ddp_tier_calibrate_cluster(DdpCluster *cluster, const DdpFit *calibration, DdpTierFit *out);

/* What a user should know before trusting an answer for @gpus GPUs on @nodes servers from this fit:
 * one line (starting "note: " or "warning: ") per tier saying whether it came from the calibration
 * or the cluster's specs, a warning when the network's fitted share is below TIER_IMPLAUSIBLE_SHARE
 * of the cluster's own (the points may be slow for a reason the model prices by the NICs), and,
 * past the measured range, how far past (the largest measured node and GPU counts, the ratio) and
 * what the answer assumes; nothing when neither tier was fitted
 * (ddp_fit_coverage_warnings says the calibration has no curve).  (transfer full) (element-type utf8). */
GPtrArray *ddp_tier_fit_report(const DdpTierFit *fit, const char *calibration_name, guint64 gpus, guint64 nodes);

#endif
