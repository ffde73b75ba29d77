/* cluster — loads and validates cluster specifications (see cluster.h).
 *
 * A cluster is [cluster] (name, gpu, gpus_per_node, max_nodes, overlap_slowdown, price_per_gpu_hour), optionally
 * [gpu] overriding the built-in GPU figures, [intra] (the fabric inside a node), [inter] (between
 * nodes; absent means a single-node machine) and [nccl] (algorithm, protocol, channels, cost
 * model; auto by default).  The same groups may sit inside a scenario file.  Bandwidths are one
 * direction, per GPU (intra) or per NIC (inter), as vendors publish them.
 */
#include "cluster.h"
#include "collective.h"

#include "datadir.h"
#include "suggest.h"

#include <math.h>
#include <string.h>

G_DEFINE_QUARK(ddp-cluster-error-quark, ddp_cluster_error)

static const char *const cluster_keys[] = { "name", "description", "gpu", "gpus_per_node", "max_nodes",
                                            "overlap_slowdown", "price_per_gpu_hour", NULL };
static const char *const gpu_keys[] = { "name", "sm_arch", "fp32_tflops", "tf32_tflops", "fp16_tflops",
                                        "bf16_tflops", "hbm_GBs", "memory_GB", "sms", NULL };
static const char *const intra_keys[] = { "fabric", "bandwidth_GBs", "latency_us", "efficiency", "p2p", "domain_gpus",
                                          NULL };
static const char *const inter_keys[] = { "fabric", "nics_per_node", "nic_bandwidth_Gbps", "latency_us",
                                          "oversubscription", "rail_optimized", "efficiency", "nodes_per_leaf", NULL };
static const char *const nccl_keys[] = { "cost_model", "algorithm", "protocol", "channels", "bw_intra_GBs",
                                         "bw_inter_GBs", "amd_cpu", "arm_cpu", "launch_us", "nvls", "host_launch_us",
                                         "collnet", NULL };

static const char *const intra_fabrics[] = { "nvlink", "nvswitch", "pcie", NULL };
/* Index = DdpInterFabric; the last, "tcp", is another name for "ethernet" (parse_transport maps it). */
static const char *const inter_fabrics[] = { "ib", "roce", "ethernet", "efa", "tcpxo", "slingshot", "tcp", NULL };
/* Index = DdpCostModel. */
static const char *const cost_models[] = { "nccl", "alpha-beta", "nccl-tuner", NULL };
/* Index = DdpAlgorithm / DdpProtocol value. */

void
ddp_cluster_free(DdpCluster *cluster)
{
  if (!cluster)
    return;
  g_free(cluster->name);
  g_free(cluster->description);
  g_free(cluster->path);
  g_free(cluster);
}

static gboolean
parse_gpu(const DdpKeyFile *kf, DdpCluster *c, GError **error)
{
  g_autofree char *gpu_name = NULL;
  if (!ddp_keyfile_get_string(kf, "cluster", "gpu", TRUE, &gpu_name, error))
    return FALSE;
  g_autoptr(GError) local = NULL;
  if (!ddp_gpu_lookup(gpu_name, &c->gpu, &local)) {
    ddp_keyfile_set_error(kf, error, DDP_KEYFILE_ERROR_VALUE, "cluster", "gpu", "%s", local->message);
    return FALSE;
  }
  if (!ddp_keyfile_has_group(kf, "gpu"))
    return TRUE;
  g_autofree char *name = NULL;
  double sm_arch = c->gpu.sm_arch, sms = c->gpu.sms;
  static const char *const peak_keys[DDP_PRECISION_COUNT] = { "fp32_tflops", "tf32_tflops", "fp16_tflops", "bf16_tflops" };
  if (!ddp_keyfile_check_keys(kf, "gpu", gpu_keys, error) ||
      !ddp_keyfile_get_string(kf, "gpu", "name", FALSE, &name, error) ||
      !ddp_keyfile_get_ranged(kf, "gpu", "sm_arch", FALSE, &DDP_RANGE_SM_ARCH, &sm_arch, error) ||
      !ddp_keyfile_get_ranged(kf, "gpu", "sms", FALSE, &DDP_RANGE_SMS, &sms, error) ||
      !ddp_keyfile_get_ranged(kf, "gpu", "hbm_GBs", FALSE, &DDP_RANGE_BANDWIDTH_GBS, &c->gpu.hbm_GBs, error) ||
      !ddp_keyfile_get_ranged(kf, "gpu", "memory_GB", FALSE, &DDP_RANGE_MEMORY_GB, &c->gpu.memory_GB, error))
    return FALSE;
  for (int p = 0; p < DDP_PRECISION_COUNT; p++)
    if (!ddp_keyfile_get_ranged(kf, "gpu", peak_keys[p], FALSE, &DDP_RANGE_TFLOPS, &c->gpu.peak_tflops[p], error))
      return FALSE;
  if (name)
    g_strlcpy(c->gpu.name, name, sizeof c->gpu.name);
  c->gpu.sm_arch = (int)sm_arch;
  c->gpu.sms = (int)sms;
  return TRUE;
}

/* The transport keys of the nccl cost model (docs/collective.md "Cluster keys"), read after the
 * rest so that their defaults can depend on it:
 *   [intra] efficiency  share of bandwidth_GBs NCCL reaches, (0, 1]; default by fabric
 *   [intra] p2p         GPU peer-to-peer (NCCL's P2P transport); false = staged through host memory
 *   [inter] efficiency  share of the NIC line rate NCCL's transport reaches, (0, 1]; default by fabric
 *   [nccl] host_launch_us  host time to issue one collective on one GPU, µs; default 4
 *   [nccl] collnet      NCCL_COLLNET_ENABLE=1 with the SHARP plugin: in-network reduction in the
 *                       InfiniBand switches (CollNetDirect/CollNetChain); default false, ib only */
static gboolean
parse_transport(const DdpKeyFile *kf, DdpCluster *c, GError **error)
{
  gboolean p2p = TRUE;
  if (ddp_keyfile_has_group(kf, "intra") &&
      (!ddp_keyfile_get_ranged(kf, "intra", "efficiency", FALSE, &DDP_RANGE_TRANSPORT_EFFICIENCY, &c->intra.efficiency, error) ||
       !ddp_keyfile_get_bool(kf, "intra", "p2p", FALSE, &p2p, error)))
    return FALSE;
  c->intra.p2p_off = !p2p;
  if ((int)c->inter.fabric == DDP_INTER_FABRIC_COUNT)   /* "tcp" */
    c->inter.fabric = DDP_INTER_ETHERNET;
  if (ddp_keyfile_has_group(kf, "inter") &&
      !ddp_keyfile_get_ranged(kf, "inter", "efficiency", FALSE, &DDP_RANGE_TRANSPORT_EFFICIENCY, &c->inter.efficiency, error))
    return FALSE;
  /* ≈ one cudaLaunchKernel plus NCCL's enqueue per GPU: nccl-tests -g 8 (one thread issuing eight
   * GPUs' calls) floors at 32 µs on the public DGX A100 curve (docs/collective.md "Host floor") */
  c->nccl.host_launch_us = 4.0;
  if (ddp_keyfile_has_group(kf, "nccl") &&
      (!ddp_keyfile_get_ranged(kf, "nccl", "host_launch_us", FALSE, &DDP_RANGE_HOST_LAUNCH_US, &c->nccl.host_launch_us, error) ||
       !ddp_keyfile_get_bool(kf, "nccl", "collnet", FALSE, &c->nccl.collnet, error)))
    return FALSE;
  /* SHARP aggregates in InfiniBand switches (Quantum and later) only; NCCL's plugin needs the network */
  if (c->nccl.collnet && (!ddp_keyfile_has_group(kf, "inter") || c->inter.fabric != DDP_INTER_IB)) {
    ddp_keyfile_set_error(kf, error, DDP_KEYFILE_ERROR_VALUE, "nccl", "collnet",
                          "SHARP's in-network reduction needs an [inter] network with fabric = ib");
    return FALSE;
  }
  return TRUE;
}

/**
 * ddp_cluster_from_keyfile:
 * Reads the cluster groups of @kf (a .cluster file or a scenario file).  Other groups are the
 * caller's to check.  Returns: (transfer full) or NULL with @error naming file:line: group.key.
 */
DdpCluster *
ddp_cluster_from_keyfile(const DdpKeyFile *kf, GError **error)
{
  g_autoptr(DdpCluster) c = g_new0(DdpCluster, 1);
  c->path = g_strdup(ddp_keyfile_path(kf));
  c->overlap_slowdown = -1;   /* not given: the setup's default applies (scenario.c overheads) */
  if (!ddp_keyfile_has_group(kf, "cluster")) {
    g_set_error(error, DDP_KEYFILE_ERROR, DDP_KEYFILE_ERROR_MISSING,
                "%s: [cluster]: required group is missing (is this a cluster file?)", ddp_keyfile_path(kf));
    return NULL;
  }
  double gpus_per_node = 0, max_nodes = 0;
  if (!ddp_keyfile_check_keys(kf, "cluster", cluster_keys, error) ||
      !ddp_keyfile_get_string(kf, "cluster", "name", TRUE, &c->name, error) ||
      !ddp_keyfile_get_string(kf, "cluster", "description", FALSE, &c->description, error) ||
      !ddp_keyfile_get_ranged(kf, "cluster", "gpus_per_node", TRUE, &DDP_RANGE_GPUS_PER_NODE, &gpus_per_node, error) ||
      !ddp_keyfile_get_ranged(kf, "cluster", "max_nodes", FALSE, &DDP_RANGE_NODES, &max_nodes, error) ||
      !ddp_keyfile_get_ranged(kf, "cluster", "overlap_slowdown", FALSE, &DDP_RANGE_OVERLAP_SLOWDOWN, &c->overlap_slowdown, error) ||
      !ddp_keyfile_get_ranged(kf, "cluster", "price_per_gpu_hour", FALSE, &DDP_RANGE_PRICE_PER_GPU_HOUR, &c->price_per_gpu_hour, error) ||
      !parse_gpu(kf, c, error))
    return NULL;
  c->gpus_per_node = (int)gpus_per_node;
  c->max_nodes = (int)max_nodes;

  int fabric = DDP_INTRA_NVLINK;
  if (!ddp_keyfile_has_group(kf, "intra") && gpus_per_node > 1) {
    g_set_error(error, DDP_KEYFILE_ERROR, DDP_KEYFILE_ERROR_MISSING,
                "%s: [intra]: required group is missing (gpus_per_node > 1)", ddp_keyfile_path(kf));
    return NULL;
  }
  c->intra.bandwidth_GBs = 1, c->intra.latency_us = 0;
  if (ddp_keyfile_has_group(kf, "intra") &&
      (!ddp_keyfile_check_keys(kf, "intra", intra_keys, error) ||
       !ddp_keyfile_get_choice(kf, "intra", "fabric", TRUE, intra_fabrics, &fabric, error) ||
       !ddp_keyfile_get_ranged(kf, "intra", "bandwidth_GBs", TRUE, &DDP_RANGE_BANDWIDTH_GBS, &c->intra.bandwidth_GBs, error) ||
       !ddp_keyfile_get_ranged(kf, "intra", "latency_us", TRUE, &DDP_RANGE_LATENCY_US, &c->intra.latency_us, error)))
    return NULL;
  c->intra.fabric = fabric;
  double domain_gpus = gpus_per_node;
  if (ddp_keyfile_has_group(kf, "intra") &&
      !ddp_keyfile_get_ranged(kf, "intra", "domain_gpus", FALSE, &DDP_RANGE_DOMAIN_GPUS, &domain_gpus, error))
    return NULL;
  if ((guint64)domain_gpus % (guint64)gpus_per_node != 0) {
    ddp_keyfile_set_error(kf, error, DDP_KEYFILE_ERROR_VALUE, "intra", "domain_gpus",
                          "an NVLink domain holds whole nodes: %g is not a multiple of gpus_per_node %g", domain_gpus,
                          gpus_per_node);
    return NULL;
  }
  if (domain_gpus > gpus_per_node && fabric == DDP_INTRA_PCIE) {
    ddp_keyfile_set_error(kf, error, DDP_KEYFILE_ERROR_VALUE, "intra", "domain_gpus",
                          "a PCIe fabric does not span nodes (domain_gpus %g > gpus_per_node %g needs NVLink)",
                          domain_gpus, gpus_per_node);
    return NULL;
  }
  c->intra.domain_gpus = (int)domain_gpus;

  c->inter.oversubscription = 1.0;
  c->inter.nodes_per_leaf = 1;
  c->inter.rail_optimized = TRUE;
  if (ddp_keyfile_has_group(kf, "inter")) {
    double nics = 0, leaf = 1;
    fabric = DDP_INTER_IB;
    if (!ddp_keyfile_check_keys(kf, "inter", inter_keys, error) ||
        !ddp_keyfile_get_choice(kf, "inter", "fabric", TRUE, inter_fabrics, &fabric, error) ||
        !ddp_keyfile_get_ranged(kf, "inter", "nics_per_node", TRUE, &DDP_RANGE_NICS, &nics, error) ||
        !ddp_keyfile_get_ranged(kf, "inter", "nic_bandwidth_Gbps", TRUE, &DDP_RANGE_BANDWIDTH_GBPS, &c->inter.nic_bandwidth_Gbps, error) ||
        !ddp_keyfile_get_ranged(kf, "inter", "latency_us", TRUE, &DDP_RANGE_LATENCY_US, &c->inter.latency_us, error) ||
        !ddp_keyfile_get_ranged(kf, "inter", "oversubscription", FALSE, &DDP_RANGE_OVERSUBSCRIPTION, &c->inter.oversubscription, error) ||
        !ddp_keyfile_get_bool(kf, "inter", "rail_optimized", FALSE, &c->inter.rail_optimized, error) ||
        !ddp_keyfile_get_ranged(kf, "inter", "nodes_per_leaf", FALSE, &DDP_RANGE_NODES_PER_LEAF, &leaf, error))
      return NULL;
    c->inter.nodes_per_leaf = (int)leaf;
    c->inter.fabric = fabric;
    c->inter.nics_per_node = (int)nics;
  } else {
    /* without a network the cluster is one NVLink domain: one server, or the hosts of one rack */
    int domain_nodes = ddp_cluster_domain_nodes(c);
    if (c->max_nodes > domain_nodes) {
      g_autofree char *what = domain_nodes == 1 ? g_strdup("one node") : g_strdup_printf("%d nodes (one NVLink domain)", domain_nodes);
      ddp_keyfile_set_error(kf, error, DDP_KEYFILE_ERROR_MISSING, "cluster", "max_nodes",
                            "more than %s needs an [inter] group describing the network", what);
      return NULL;
    }
    c->max_nodes = domain_nodes;
  }

  int cost_model = DDP_COST_NCCL;
  g_autofree char *algorithm = NULL, *protocol = NULL;
  double channels = 0;
  /* per-call launch overhead on top of NCCL's latency model: "a few µs" (docs/model.md §1.6) */
  c->nccl.launch_us = 5.0;
  c->nccl.nvls = TRUE;   /* NCCL_NVLS_ENABLE's default: on wherever the hardware supports it */
  c->nccl.arm_cpu = c->gpu.arm_host;   /* a Grace superchip's host is Arm */
  if (ddp_keyfile_has_group(kf, "nccl") &&
      (!ddp_keyfile_check_keys(kf, "nccl", nccl_keys, error) ||
       !ddp_keyfile_get_choice(kf, "nccl", "cost_model", FALSE, cost_models, &cost_model, error) ||
       !ddp_keyfile_get_string(kf, "nccl", "algorithm", FALSE, &algorithm, error) ||
       !ddp_keyfile_get_string(kf, "nccl", "protocol", FALSE, &protocol, error) ||
       !ddp_keyfile_get_ranged(kf, "nccl", "channels", FALSE, &DDP_RANGE_CHANNELS, &channels, error) ||
       !ddp_keyfile_get_ranged(kf, "nccl", "bw_intra_GBs", FALSE, &DDP_RANGE_NCCL_BW_GBS, &c->nccl.bw_intra_GBs, error) ||
       !ddp_keyfile_get_ranged(kf, "nccl", "bw_inter_GBs", FALSE, &DDP_RANGE_NCCL_BW_GBS, &c->nccl.bw_inter_GBs, error) ||
       !ddp_keyfile_get_bool(kf, "nccl", "amd_cpu", FALSE, &c->nccl.amd_cpu, error) ||
       !ddp_keyfile_get_bool(kf, "nccl", "arm_cpu", FALSE, &c->nccl.arm_cpu, error) ||
       !ddp_keyfile_get_ranged(kf, "nccl", "launch_us", FALSE, &DDP_RANGE_LATENCY_US, &c->nccl.launch_us, error) ||
       !ddp_keyfile_get_bool(kf, "nccl", "nvls", FALSE, &c->nccl.nvls, error)))
    return NULL;
  static const char *const bw_keys[] = { "bw_intra_GBs", "bw_inter_GBs" };
  const double bw_values[] = { c->nccl.bw_intra_GBs, c->nccl.bw_inter_GBs };
  for (int k = 0; k < 2; k++)
    if (bw_values[k] != 0 && bw_values[k] < DDP_RANGE_BANDWIDTH_GBS.min) {
      ddp_keyfile_set_error(kf, error, DDP_KEYFILE_ERROR_VALUE, "nccl", bw_keys[k],
                            "must be 0 (from the topology) or from %g to %g GB/s (got %g)", DDP_RANGE_BANDWIDTH_GBS.min,
                            DDP_RANGE_NCCL_BW_GBS.max, bw_values[k]);
      return NULL;
    }
  if (c->nccl.amd_cpu && c->nccl.arm_cpu) {
    ddp_keyfile_set_error(kf, error, DDP_KEYFILE_ERROR_VALUE, "nccl", "amd_cpu",
                          "an AMD host is not an Arm one (arm_cpu)%s",
                          c->gpu.arm_host ? " (GB200 and GB300 hosts are Grace, Arm: leave amd_cpu unset)" : "");
    return NULL;
  }
  c->nccl.cost_model = cost_model;
  c->nccl.algorithm = DDP_ALGO_AUTO;
  if (algorithm && !ddp_algorithm_set_parse(algorithm, &c->nccl.algorithm, &c->nccl.disabled_algorithms)) {
    ddp_keyfile_set_error(kf, error, DDP_KEYFILE_ERROR_VALUE, "nccl", "algorithm",
                          "\"%s\" is not auto, ring, tree, nvls, nvlstree, collnetdirect, collnetchain or an NCCL_ALGO list of them "
                          "(\"Ring,Tree\" enables those, \"^NVLS,NVLSTree\" disables both) that leaves one enabled",
                          algorithm);
    return NULL;
  }
  c->nccl.protocol = DDP_PROTO_AUTO;
  if (protocol && !ddp_protocol_set_parse(protocol, &c->nccl.protocol, &c->nccl.disabled_protocols)) {
    ddp_keyfile_set_error(kf, error, DDP_KEYFILE_ERROR_VALUE, "nccl", "protocol",
                          "\"%s\" is not auto, LL, LL128, Simple or an NCCL_PROTO list of them "
                          "(\"Simple,LL128\" enables those, \"^LL\" disables LL) that leaves one enabled",
                          protocol);
    return NULL;
  }
  c->nccl.channels = (int)channels;
  if (!parse_transport(kf, c, error))
    return NULL;
  return g_steal_pointer(&c);
}

/**
 * ddp_cluster_load:
 * @name_or_path: a .cluster file path, or a bare name looked up as scenarios/NAME.cluster
 *
 * Returns: (transfer full) or NULL with @error set.
 */
DdpCluster *
ddp_cluster_load(const char *name_or_path, GError **error)
{
  g_autofree char *path = ddp_datadir_find(name_or_path, "scenarios", ".cluster");
  if (!path) {
    g_auto(GStrv) names = ddp_datadir_list("scenarios", ".cluster");
    g_autofree char *list = g_strjoinv(", ", names);
    g_autofree char *hint = ddp_suggest_text(name_or_path, (const char *const *)names);
    g_set_error(error, DDP_CLUSTER_ERROR, DDP_CLUSTER_ERROR_NOT_FOUND,
                "--cluster: no cluster file or shipped cluster named \"%s\"%s (shipped: %s)", name_or_path, hint,
                *list ? list : "none found");
    return NULL;
  }
  g_autoptr(DdpKeyFile) kf = ddp_keyfile_load(path, error);
  if (!kf)
    return NULL;
  static const char *const groups[] = { "cluster", "gpu", "intra", "inter", "nccl", NULL };
  gsize n_groups;
  const char *const *present = ddp_keyfile_groups(kf, &n_groups);
  for (gsize i = 0; i < n_groups; i++) {
    if (!g_strv_contains(groups, present[i])) {
      ddp_keyfile_set_error(kf, error, DDP_KEYFILE_ERROR_UNKNOWN, present[i], NULL,
                            "unknown group (a cluster file has [cluster] [gpu] [intra] [inter] [nccl])");
      return NULL;
    }
  }
  return ddp_cluster_from_keyfile(kf, error);
}

/**
 * ddp_cluster_check_gpus:
 * @nodes: (out) (optional): nodes that @gpus GPUs occupy
 *
 * Returns: FALSE with DDP_CLUSTER_ERROR_INVALID when @gpus is 0, does not fill whole nodes (and
 * is more than one node), or needs more than max_nodes nodes.
 */
gboolean
ddp_cluster_check_gpus(const DdpCluster *cluster, guint64 gpus, guint64 *nodes, GError **error)
{
  guint64 ppn = (guint64)cluster->gpus_per_node;
  if (gpus == 0 || gpus > DDP_MAX_GPUS) {
    g_set_error(error, DDP_CLUSTER_ERROR, DDP_CLUSTER_ERROR_INVALID,
                "--gpus: %" G_GUINT64_FORMAT " GPUs: must be from 1 to %" G_GUINT64_FORMAT " (ranges.h DDP_MAX_GPUS)",
                gpus, DDP_MAX_GPUS);
    return FALSE;
  }
  if (gpus > ppn && gpus % ppn != 0) {
    g_set_error(error, DDP_CLUSTER_ERROR, DDP_CLUSTER_ERROR_INVALID,
                "--gpus: %" G_GUINT64_FORMAT " GPUs do not fill whole nodes of %" G_GUINT64_FORMAT
                " GPUs on cluster %s (use at most one node, or a multiple of %" G_GUINT64_FORMAT ")",
                gpus, ppn, cluster->name, ppn);
    return FALSE;
  }
  guint64 n = (gpus + ppn - 1) / ppn;
  if (cluster->max_nodes > 0 && n > (guint64)cluster->max_nodes) {
    g_set_error(error, DDP_CLUSTER_ERROR, DDP_CLUSTER_ERROR_INVALID,
                "--gpus: %" G_GUINT64_FORMAT " GPUs need %" G_GUINT64_FORMAT " nodes; cluster %s has %d",
                gpus, n, cluster->name, cluster->max_nodes);
    return FALSE;
  }
  if (nodes)
    *nodes = n;
  return TRUE;
}

/* NICs × NIC bandwidth (Gb/s → GB/s: /8), shared by the node's GPUs, divided by the fabric's
 * oversubscription (a 2:1 fabric carries half the NIC total across the bisection). */
double
ddp_cluster_inter_GBs_per_gpu(const DdpCluster *cluster)
{
  return cluster->inter.nics_per_node * cluster->inter.nic_bandwidth_Gbps / 8.0 /
         cluster->gpus_per_node / cluster->inter.oversubscription;
}

int
ddp_cluster_domain_nodes(const DdpCluster *cluster)
{
  return cluster->intra.domain_gpus > cluster->gpus_per_node ? cluster->intra.domain_gpus / cluster->gpus_per_node : 1;
}

/* Intra-node: what NCCL's topology counts per link of the raw rate (topo.h): NVLink 2/3 at 20 of
 * 25 GB/s, NVLink 4 at 20.6 of 25 (SM90_NVLINK_BW), NVLink 5 at 40.1 of 50 (SM100_NVLINK_BW);
 * PCIe at 12 GB/s per Gen3 x16 (PCI_BW) of its 15.75 raw, the same share for Gen4/Gen5. */
double
ddp_cluster_intra_efficiency(const DdpCluster *cluster)
{
  if (cluster->intra.efficiency > 0)
    return cluster->intra.efficiency;
  if (cluster->intra.fabric == DDP_INTRA_PCIE)
    return 12.0 / 15.75;
  int sm = cluster->gpu.sm_arch;
  return sm >= 100 ? 40.1 / 50.0 : sm >= 90 ? 20.6 / 25.0 : 20.0 / 25.0;
}

/* Inter-node, by transport (docs/collective.md "Transport efficiency"):
 *  IB, RoCE, Slingshot — 0.96: NCCL's search rates a 400 Gb/s NIC (50 GB/s) at 48 GB/s and a 200
 *    Gb/s one at 24 (search.cc speedArrayInter, net_ib reporting the link speed); RoCE runs the same
 *    IB verbs transport; HPE Slingshot 11 goes through libfabric's CXI provider and the aws-ofi-nccl
 *    plugin, which report the link speed alike (no NCCL figure of its own is published; the public
 *    curves reached 0.73-0.93 of it above 16 MiB: docs/collective.md §10.3);
 *  EFA — 0.85: SRD through libfabric and the aws-ofi-nccl plugin; AWS publishes only the line
 *    rate, so this is an estimate (an assumption, not a spec);
 *  TCPXO — 0.75: GPUDirect-TCPXO moves payload GPU-direct but over TCP with a receive-side
 *    header split; Google publishes only the line rate: an assumption;
 *  TCP sockets — 0.4: NCCL's socket transport copies through host memory in the proxy thread over
 *    a few TCP flows, and cloud VMs cap a single flow well below the NIC (AWS EC2 documents 5 Gb/s
 *    per flow outside a placement group, 10 inside, on 25–100 Gb/s instances): an assumption. */
double
ddp_cluster_inter_efficiency(const DdpCluster *cluster)
{
  if (cluster->inter.efficiency > 0)
    return cluster->inter.efficiency;
  switch (cluster->inter.fabric) {
  case DDP_INTER_EFA:
    return 0.85;
  case DDP_INTER_TCPXO:
    return 0.75;
  case DDP_INTER_ETHERNET:
    return 0.4;
  default:
    return 0.96;
  }
}

const char *
ddp_inter_fabric_name(DdpInterFabric fabric)
{
  g_return_val_if_fail(fabric < DDP_INTER_FABRIC_COUNT, "?");
  return inter_fabrics[fabric];
}
