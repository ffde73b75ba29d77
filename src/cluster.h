/* cluster — a cluster specification: GPU type, nodes × GPUs per node, intra-node fabric
 * (NVLink/NVSwitch/PCIe), inter-node fabric (IB/RoCE/Ethernet, NICs per node, oversubscription),
 * and NCCL settings.  Loaded and validated here only (from a .cluster key file, or from the
 * cluster groups of a scenario file); every other module reads the plain struct. */
#ifndef DDP_CLUSTER_H
#define DDP_CLUSTER_H

#include <glib.h>
#include "gpu.h"
#include "keyfile.h"

typedef enum { DDP_INTRA_NVLINK, DDP_INTRA_NVSWITCH, DDP_INTRA_PCIE } DdpIntraFabric;
/* ETHERNET is plain TCP over Ethernet: NCCL's socket transport ("tcp" in a cluster file is the same
 * fabric).  EFA is AWS's Elastic Fabric Adapter (aws-ofi-nccl plugin); TCPXO is Google's
 * GPUDirect-TCPXO (A3 Mega); SLINGSHOT is HPE Slingshot 11 through libfabric's CXI provider and the
 * aws-ofi-nccl plugin (reports carry a caveat: ddp_collective_transport_caveat).  Each has its own
 * default transport efficiency (cluster.c). */
typedef enum {
  DDP_INTER_IB, DDP_INTER_ROCE, DDP_INTER_ETHERNET, DDP_INTER_EFA, DDP_INTER_TCPXO, DDP_INTER_SLINGSHOT,
  DDP_INTER_FABRIC_COUNT
} DdpInterFabric;

/* NCCL algorithm and protocol (docs/model.md §2).  AUTO lets the cost model pick the fastest.  NVLS is
 * NVLink SHARP (reduction in the NVSwitch, one node); NVLS_TREE is NVLS inside each node plus a
 * tree across nodes (docs/collective.md "NVLS"); COLLNET_DIRECT and COLLNET_CHAIN reduce in the
 * InfiniBand switches (SHARP, NCCL's CollNet; only where [nccl] collnet is on, docs/collective.md
 * "CollNet"). */
typedef enum {
  DDP_ALGO_AUTO, DDP_ALGO_RING, DDP_ALGO_TREE, DDP_ALGO_NVLS, DDP_ALGO_NVLS_TREE, DDP_ALGO_COLLNET_DIRECT,
  DDP_ALGO_COLLNET_CHAIN, DDP_ALGO_COUNT
} DdpAlgorithm;
typedef enum { DDP_PROTO_AUTO, DDP_PROTO_LL, DDP_PROTO_LL128, DDP_PROTO_SIMPLE, DDP_PROTO_COUNT } DdpProtocol;
/* NCCL: the measured-physics model of NCCL as nccl-tests measures it (docs/collective.md "The nccl
 * model": host issue floor, launch, NCCL's per-hop latencies, runtime channel fill, pipeline fill,
 * peaks from the links' physics); NCCL_TUNER: NCCL's own tuning table (tuning.cc), the numbers NCCL
 * ranks algorithms by; ALPHA_BETA: plain ring 2(N-1)/N·M/B + 2(N-1)·α over the slowest link,
 * protocol effects off (for closed-form checks and what-if studies). */
typedef enum { DDP_COST_NCCL, DDP_COST_ALPHA_BETA, DDP_COST_NCCL_TUNER } DdpCostModel;

typedef struct {
  char *name;
  char *description;
  char *path;                 /* file it was loaded from, or NULL for built-in/inline */
  DdpGpuSpec gpu;
  int gpus_per_node;
  int max_nodes;              /* 0: no limit */
  struct {
    DdpIntraFabric fabric;
    double bandwidth_GBs;     /* per GPU, one direction, 10^9 B/s */
    double latency_us;        /* per hop */
    /* Share of bandwidth_GBs that NCCL's data reaches; 0: the fabric's default
     * (ddp_cluster_intra_efficiency). */
    double efficiency;
    gboolean p2p_off;         /* GPU peer-to-peer disabled ([intra] p2p = false): staged through host memory */
    /* GPUs in one NVLink domain ([intra] domain_gpus): gpus_per_node for an ordinary server, 72 for
     * an NVL72 rack of 18 four-GPU trays.  Inside a domain ranks talk over NVLink (and NVLS); the
     * NICs only join domains.  A whole number of nodes. */
    int domain_gpus;
  } intra;
  struct {
    DdpInterFabric fabric;
    int nics_per_node;
    double nic_bandwidth_Gbps;/* per NIC, one direction, 10^9 bit/s */
    double latency_us;        /* per hop */
    /* >= 1: the uplinks of a leaf switch carry 1/oversubscription of what its nodes' NICs can send
     * (k:1 above the leaf); inside a leaf of nodes_per_leaf nodes the fabric is non-blocking. */
    double oversubscription;
    int nodes_per_leaf;       /* nodes under one leaf switch (per rail); 1 (the default): every node its own leaf */
    gboolean rail_optimized;
    /* Share of the NIC line rate NCCL's transport reaches; 0: the fabric's default
     * (ddp_cluster_inter_efficiency). */
    double efficiency;
  } inter;
  struct {
    DdpCostModel cost_model;
    DdpAlgorithm algorithm;   /* forced, or AUTO */
    guint disabled_algorithms; /* bit a: algorithm a off (an NCCL_ALGO list such as "Ring,Tree"); 0: none */
    DdpProtocol protocol;     /* forced, or AUTO */
    guint disabled_protocols; /* bit p: protocol p off (an NCCL_PROTO list such as "Simple,LL128"); 0: none */
    int channels;             /* 0: auto */
    /* NCCL's per-channel graph bandwidths (docs/model.md §2.5; NCCL_DEBUG=INFO "bw INTRA/INTER"),
     * 10^9 B/s; 0: derived from the fabric as docs/collective.md describes. */
    double bw_intra_GBs;
    double bw_inter_GBs;
    gboolean amd_cpu;         /* AMD hosts: NCCL's lower LL cap across nodes, 2 µs net overhead */
    gboolean arm_cpu;         /* Arm hosts (Grace; the loader's default for GB200/GB300): NCCL's cpuArch
                               * is not x86, so its NVLSTree correction on Blackwell does not apply */
    double launch_us;         /* per call on top of NCCL's latency model (kernel launch, stream gap) */
    gboolean nvls;            /* NVLS/NVLSTree allowed where the hardware has them (NCCL_NVLS_ENABLE);
                               * the loader defaults it to TRUE, a zeroed struct has them off */
    double host_launch_us;    /* host time to issue one collective on one GPU (enqueue + kernel launch):
                               * the nccl model's floor is gpus_per_process × this; loader default 4 */
    gboolean collnet;         /* NCCL_COLLNET_ENABLE=1 with the SHARP plugin: CollNetDirect/CollNetChain
                               * AllReduce across nodes, reduced in the InfiniBand switches; default off */
  } nccl;
  double overlap_slowdown;    /* fraction by which compute slows while a collective runs (docs/model.md §5.8);
                               * < 0 when the file does not say (ddp_overheads_overlap_slowdown) */
  double price_per_gpu_hour;  /* [cluster] price_per_gpu_hour, any currency; 0: unknown (no cost fields, cost.h) */
} DdpCluster;

#define DDP_CLUSTER_ERROR (ddp_cluster_error_quark())
GQuark ddp_cluster_error_quark(void);
typedef enum { DDP_CLUSTER_ERROR_NOT_FOUND, DDP_CLUSTER_ERROR_INVALID } DdpClusterError;

/* Loads a cluster by path, or by bare name from the installed scenarios directory
 * (name.cluster).  Returns NULL with @error set on bad input; free with ddp_cluster_free(). */
DdpCluster *ddp_cluster_load(const char *name_or_path, GError **error);
/* Reads the cluster groups ([cluster] [intra] [inter] [nccl] [gpu]) of an already-loaded key file. */
DdpCluster *ddp_cluster_from_keyfile(const DdpKeyFile *kf, GError **error);
void ddp_cluster_free(DdpCluster *cluster);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(DdpCluster, ddp_cluster_free)

/* Nodes used by @gpus GPUs, and whether @gpus fits this cluster (a multiple of gpus_per_node or
 * fewer than one node; within max_nodes). */
gboolean ddp_cluster_check_gpus(const DdpCluster *cluster, guint64 gpus, guint64 *nodes, GError **error);
/* Per-GPU share of inter-node bandwidth, 10^9 B/s: NICs × NIC bandwidth / 8 / gpus_per_node /
 * oversubscription (the alpha-beta model's link: every node its own leaf). */
double ddp_cluster_inter_GBs_per_gpu(const DdpCluster *cluster);

/* Nodes in one NVLink domain: domain_gpus / gpus_per_node (1 for an ordinary server). */
int ddp_cluster_domain_nodes(const DdpCluster *cluster);

/* Effective transport efficiencies: the cluster's own value, or the fabric's default (cluster.c
 * derives each default).  Intra: NVLink/NVSwitch 20/25 (NVLink 2–3), 20.6/25 (NVLink 4), 40.1/50
 * (NVLink 5); PCIe 12/15.75.  Inter: IB and RoCE 0.96, EFA 0.85, TCPXO 0.75, TCP sockets 0.4. */
double ddp_cluster_intra_efficiency(const DdpCluster *cluster);
double ddp_cluster_inter_efficiency(const DdpCluster *cluster);
const char *ddp_inter_fabric_name(DdpInterFabric fabric);

/* ddp_algorithm_name/parse and ddp_protocol_name/parse are in collective.h. */

#endif
