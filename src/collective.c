/* collective — what one NCCL AllReduce (or Broadcast) costs on a cluster (see collective.h).
 *
 * Three models, chosen by cluster->nccl.cost_model:
 *
 *  NCCL (default) — NCCL as nccl-tests measures it: the tuning model's latencies, enablement and
 *    graphs below, plus a host issue floor, the channels NCCL really runs, pipeline fill and peaks
 *    from the links' physics ("the nccl model" section below; docs/collective.md §10).
 *
 *  NCCL_TUNER — NCCL's own tuning model, docs/model.md §2, from NVIDIA/nccl src/graph/tuning.cc
 *    (ncclTopoTuneModel, ncclTopoGetAlgoTime and the ncclTunerConstantsDefaults table) and
 *    src/enqueue.cc (topoGetAlgoInfo: argmin of predicted time over algorithm × protocol):
 *        t(S) = lat[a][p] + S / (1000 · algBw[a][p])      µs, S in bytes, algBw in GB/s
 *    NCCL feeds that model with the (nChannels, bwIntra, bwInter) its topology search found
 *    (src/graph/search.cc, topo.h).  We have no machine to search, so ncclTopoCompute is emulated
 *    on the fabric the cluster file describes: NVLink/PCIe per GPU, NICs per node, NIC speed,
 *    oversubscription (search_graph below; derivation in docs/collective.md "Channels").
 *
 *  ALPHA_BETA — the textbook closed forms (docs/model.md §4; Thakur, Rabenseifner & Gropp 2005):
 *        ring  t = 2(N-1)/N · M/B + 2(N-1)·α
 *        tree  t = 2·M/B + 2·((ppn-1)·α_intra + ⌊log2 nodes⌋·α_inter)
 *    B = the slowest link the collective crosses, α = the slowest hop's latency (ring) or each
 *    hop's own (tree, whose hops are traversed one after another), protocol effects off.
 *
 *    NVLS (NVLink SHARP: the NVSwitch reduces and multicasts, one node) and NVLSTree (NVLS inside
 *    each node, a tree across nodes) are modelled as NCCL models them (tuning.cc NVLS branches,
 *    search.cc NVLS pattern), on NVSwitch fabrics with sm_arch >= 90; alpha-beta has no NVLS.
 *    CollNet (SHARP in the network) and PAT are not modelled (docs/collective.md "NVLS").
 */
#include "collective.h"
#include "csv.h"

#include "ranges.h"

#include "fit.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

G_DEFINE_QUARK(ddp-collective-error-quark, ddp_collective_error)

/* ---- NCCL's constants (tuning.cc ncclTunerConstantsDefaults, NCCL master @ 5067397c) ---- */

/* Indexed by DdpAlgorithm × DdpProtocol; the AUTO row and column stay zero. */
typedef double AlgoProtoTable[DDP_ALGO_COUNT][DDP_PROTO_COUNT];

/* baseLatencies, µs: one per call (kernel launch, setup).  NVLS, NVLSTree and CollNet have none (0). */
static const AlgoProtoTable base_latency_us = {
  [DDP_ALGO_TREE] = { [DDP_PROTO_LL] = 6.8, [DDP_PROTO_LL128] = 14.0, [DDP_PROTO_SIMPLE] = 8.4 },
  [DDP_ALGO_RING] = { [DDP_PROTO_LL] = 6.6, [DDP_PROTO_LL128] = 14.0, [DDP_PROTO_SIMPLE] = 8.4 },
};

/* hwLatencies, µs per hop, by the kind of link the hop crosses. */
typedef enum { HW_NVLINK, HW_PCI, HW_NET, HW_COUNT } Hw;
static const AlgoProtoTable hw_latency_us[HW_COUNT] = {
  [HW_NVLINK] = {
    [DDP_ALGO_TREE] = { [DDP_PROTO_LL] = 0.6, [DDP_PROTO_LL128] = 1.25, [DDP_PROTO_SIMPLE] = 4.0 },
    [DDP_ALGO_RING] = { [DDP_PROTO_LL] = 0.6, [DDP_PROTO_LL128] = 1.9, [DDP_PROTO_SIMPLE] = 3.4 },
    [DDP_ALGO_NVLS] = { [DDP_PROTO_SIMPLE] = 25.0 },
    [DDP_ALGO_NVLS_TREE] = { [DDP_PROTO_SIMPLE] = 25.0 },
    [DDP_ALGO_COLLNET_DIRECT] = { [DDP_PROTO_SIMPLE] = 3.7 },
    [DDP_ALGO_COLLNET_CHAIN] = { [DDP_PROTO_SIMPLE] = 2.8 },
  },
  [HW_PCI] = {
    [DDP_ALGO_TREE] = { [DDP_PROTO_LL] = 1.0, [DDP_PROTO_LL128] = 1.9, [DDP_PROTO_SIMPLE] = 4.0 },
    [DDP_ALGO_RING] = { [DDP_PROTO_LL] = 1.0, [DDP_PROTO_LL128] = 2.5, [DDP_PROTO_SIMPLE] = 5.7 },
    [DDP_ALGO_COLLNET_DIRECT] = { [DDP_PROTO_SIMPLE] = 3.7 },
    [DDP_ALGO_COLLNET_CHAIN] = { [DDP_PROTO_SIMPLE] = 2.8 },
  },
  [HW_NET] = {
    [DDP_ALGO_TREE] = { [DDP_PROTO_LL] = 5.0, [DDP_PROTO_LL128] = 8.5, [DDP_PROTO_SIMPLE] = 14.0 },
    [DDP_ALGO_RING] = { [DDP_PROTO_LL] = 2.7, [DDP_PROTO_LL128] = 4.0, [DDP_PROTO_SIMPLE] = 14.0 },
    [DDP_ALGO_NVLS] = { [DDP_PROTO_SIMPLE] = 18.0 },
    [DDP_ALGO_NVLS_TREE] = { [DDP_PROTO_SIMPLE] = 20.9 },
    [DDP_ALGO_COLLNET_DIRECT] = { [DDP_PROTO_SIMPLE] = 31.0 },
    [DDP_ALGO_COLLNET_CHAIN] = { [DDP_PROTO_SIMPLE] = 30.0 },
  },
};

/* Per-architecture caps, [arch][scale]: arch Volta/Ampere/Hopper/Blackwell, scale = nodes 1/2/≥3. */
enum { ARCH_VOLTA, ARCH_AMPERE, ARCH_HOPPER, ARCH_BLACKWELL, ARCH_COUNT };
enum { SCALE_COUNT = 3 };
/* llMaxBws, GB/s (busBw cap of LL).  On one node the row is the GPU's; across nodes NCCL reads
 * rows 0/1 as the host CPU's (Intel/AMD), since there the CPU proxy limits LL. */
static const double ll_max_bw[ARCH_COUNT][SCALE_COUNT] = {
  { 39.0, 39.0, 20.4 }, { 87.7, 22.5, 19.0 }, { 141.0, 45.0, 35.0 }, { 282.0, 90.0, 70.0 },
};
/* perChMaxRingLL128Bws, perChMaxTreeLL128Bws, perChMaxTreeBws: GB/s per channel. */
static const double ring_ll128_max_bw[ARCH_COUNT][SCALE_COUNT] = {
  { 20.0, 20.0, 20.0 }, { 20.0, 20.0, 20.0 }, { 36.7, 36.7, 36.7 }, { 40.0, 40.0, 40.0 },
};
static const double tree_ll128_max_bw[ARCH_COUNT][SCALE_COUNT] = {
  { 20.0, 20.0, 20.0 }, { 20.0, 20.0, 20.0 }, { 36.7, 36.7, 29.0 }, { 55.6, 31.67, 20.0 },
};
static const double tree_max_bw[ARCH_COUNT][SCALE_COUNT] = {
  { 26.5, 18.5, 10.0 }, { 24.0, 23.6, 17.8 }, { 38.7, 41.4, 36.0 }, { 70.0, 42.8, 24.0 },
};
/* perChMaxNVLSTreeBws, GB/s per channel (the Volta/Ampere rows are never used: no NVLS there). */
static const double nvls_tree_max_bw[ARCH_COUNT][SCALE_COUNT] = {
  { 26.5, 18.5, 10.0 }, { 24.0, 23.6, 17.8 }, { 0.0, 57.7, 45.5 }, { 0.0, 96.0, 80.0 },
};
/* nvlsEfficiency: the share of the NVLS graph's bwIntra an NVLS channel reaches (0: no NVLS). */
static const double nvls_efficiency[ARCH_COUNT] = { 0.0, 0.0, 0.85, 0.74 };
/* CollNet (SHARP) Simple AllReduce, the share of its graph bandwidth NCCL rates it at: CollNetDirect
 * × 0.85 from Hopper on (tuning.cc, "if (minCompCap >= 90) busBw *= .85"); CollNetChain × 0.75 (tuning.cc
 * of NCCL 2.14–2.17, "if (a == NCCL_ALGO_COLLNET_CHAIN && p == NCCL_PROTO_SIMPLE) busBw *= .75"; 2.18
 * dropped it from the tuner, the model keeps it as the chain's rate: docs/collective.md §13). */
static const double collnet_direct_efficiency_sm90 = 0.85;
static const double collnet_chain_efficiency = 0.75;
/* NCCL_MAX_DIRECT_ARITY + 1 (device.h: 7 + 1): CollNetDirect heads, one channel each. */
enum { MAX_DIRECT_HEADS = 8 };

/* treeCorrectionFactor[p][log2(S/64)], S = 64 B … 1 GiB: Tree bandwidth measured below the
 * model at medium sizes ("Trees are not perfectly sticking to the model").  NCCL reads it for Tree
 * below 512 MiB (log2(S/64) < 23) and for NVLSTree below 1 GiB (< 24). */
enum { TREE_CORRECTION_SIZES = 24, TREE_CORRECTION_TREE_SIZES = 23 };
static const double tree_correction[DDP_PROTO_COUNT][TREE_CORRECTION_SIZES] = {
  [DDP_PROTO_LL] = { 1.0, 1.0, 1.0, 1.0, .9, .8, .7, .7, .7, .7, .6, .5, .4, .4, .5, .6, .7, .8, .9, 1.0, 1.0, 1.0, 1.0, 1.0 },
  [DDP_PROTO_LL128] = { 1.0, 1.0, 1.0, 1.0, 1.0, .9, .8, .8, .8, .7, .6, .6, .6, .6, .6, .6, .8, .9, .9, .9, .9, 1.0, 1.0, 1.0 },
  [DDP_PROTO_SIMPLE] = { .9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5, .5, .5, .5, .6, .7, .8, .7, .7, .8, .9, .9, .9 },
};

/* ---- NCCL's topology search, emulated (search.cc ncclTopoCompute, topo.h) ---- */

/* Per-channel speeds the search tries, GB/s, in order (search.cc speedArrayIntra/Inter and the
 * sm90/sm100 variants).  Intra-node arrays when the communicator has one node, else inter. */
static const double speeds_intra_sm70[] = { 40, 30, 20, 18, 15, 12, 10, 9, 7, 6, 5, 4, 3 };
static const double speeds_inter_sm70[] = { 48, 30, 28, 24, 20, 18, 15, 12, 10, 9, 7, 6, 5, 4, 3, 2.4, 1.2, 0.24, 0.12 };
static const double speeds_intra_sm90[] = { 60, 50, 40, 30, 24, 20, 15, 12, 11, 6, 3 };
static const double speeds_inter_sm90[] = { 48, 45, 42, 40, 30, 24, 22, 20, 17.5, 15, 12, 6, 3, 2.4, 1.2, 0.24, 0.12 };
static const double speeds_intra_sm100[] = { 90, 80, 70, 60, 50, 45, 40, 30, 24, 20, 19, 18 };
static const double speeds_inter_sm100[] = { 96, 48, 45.1, 42, 40, 30, 24, 22, 20, 17.5, 15, 12, 6, 3, 2.4, 1.2, 0.24, 0.12 };

/* MAXCHANNELS/2: the ring search's channel limit (init.cc); trees are limited to the ring's count.
 * NCCL_MAX_NVLS_ARITY: at most that many NVLS heads (channels of the NVLS graph). */
enum { MAX_SEARCH_CHANNELS = 32, MAX_CHANNELS = 64, MAX_NVLS_ARITY = 32 };

/* What the search may use.  NCCL's topology counts links below their signalling rate (topo.h):
 * an NVLink at 20 GB/s (NVLink 2/3, 25 raw), 20.6 (NVLink 4, 25 raw), 40.1 (NVLink 5, 50 raw); a
 * PCIe Gen3/4/5 x16 at 12/24/48 GB/s (15.75/31.5/63 raw).  Vendors publish raw per-GPU figures,
 * so the cluster's intra bandwidth is scaled by those ratios. */
typedef struct {
  double intra_GBs;    /* per GPU, NCCL-topology terms (0 when one GPU per node: no intra link) */
  double tree_intra_GBs; /* the same for trees: ×ppn/(ppn-1), since a chain's last GPU sends nothing on */
  int nics;            /* per node; 0 on a single node */
  double nic_path_GBs; /* per NIC: min(NIC, GPU–NIC PCIe) after oversubscription */
  const double *speeds;
  gsize n_speeds;
  int sm_arch;
} Fabric;

typedef struct {
  int channels;
  double bw_intra, bw_inter;
} Graph;

static double
nvlink_model_ratio(int sm_arch)
{
  if (sm_arch >= 100)
    return 40.1 / 50.0;
  if (sm_arch >= 90)
    return 20.6 / 25.0;
  return 20.0 / 25.0;
}

/* GPU–NIC PCIe path in NCCL's topology: Gen3 (Volta), Gen4 (Ampere), Gen5 (Hopper, Blackwell) x16. */
static double
pcie_path_GBs(int sm_arch)
{
  return sm_arch >= 90 ? 48.0 : sm_arch >= 80 ? 24.0 : 12.0;
}

/* How many channels of @speed the fabric carries: each channel takes @speed of every GPU's intra
 * links (in one direction) and, across nodes, of one NIC; at most @max_channels. */
static int
channel_capacity(const Fabric *f, double intra_GBs, double speed, int max_channels)
{
  const double eps = 1e-9;   /* 240/40 must give 6, not 5.999… */
  int n = max_channels;
  if (intra_GBs > 0)
    n = MIN(n, (int)floor(intra_GBs / speed + eps));
  if (f->nics > 0)
    n = MIN(n, f->nics * (int)floor(f->nic_path_GBs / speed + eps));
  return n;
}

/* ncclTopoCompute, reduced to what decides (nChannels, bw) on a homogeneous fabric:
 *  pass 1 — start at the fastest speed no link is slower than; keep the solution with the highest
 *    nChannels·speed; stop when it uses all of a GPU's bandwidth, else try slower speeds while
 *    the next one is above 0.49× the best found ("Decrease bw until we find a solution");
 *  ncclTopoDupChannels — at ≥25 GB/s per channel (≥50 on Hopper+ with more than 4 channels)
 *    double the channels and halve their speed: same total, more SMs;
 *  pass 2 — try faster speeds at the same channel count (rings: both bandwidths; trees: bwIntra
 *    only, up to twice bwInter, which pays off on 2 nodes where NCCL uses bwIntra).
 * Where nothing fits, NCCL falls back to one channel at 0.1 GB/s; we take one channel at the
 * fabric's own speed instead, so a slow but legal fabric is not predicted 0.1 GB/s. */
static Graph
search_graph(const Fabric *f, gboolean tree, int max_channels)
{
  double intra = tree ? f->tree_intra_GBs : f->intra_GBs;
  double system_total = f->intra_GBs > 0 ? f->intra_GBs : f->nics * f->nic_path_GBs;
  double max_bw = f->nics > 0 ? f->nic_path_GBs : f->intra_GBs;
  if (f->intra_GBs > 0)
    max_bw = MIN(max_bw, f->intra_GBs);
  gsize i = 0;
  while (i + 1 < f->n_speeds && (f->speeds[i] > max_bw || (intra > 0 && f->speeds[i] > intra)))
    i++;
  Graph best = { 0, 0, 0 };
  for (; i < f->n_speeds; i++) {
    int n = channel_capacity(f, intra, f->speeds[i], max_channels);
    if (n >= 1 && n * f->speeds[i] > best.channels * best.bw_intra)
      best = (Graph){ n, f->speeds[i], f->speeds[i] };
    if (best.channels > 0 && best.channels * best.bw_intra >= system_total)
      break;
    if (best.channels > 0 && i + 1 < f->n_speeds && f->speeds[i + 1] / best.bw_intra <= 0.49)
      break;
  }
  if (best.channels == 0)
    return (Graph){ 1, max_bw, max_bw };

  if (best.bw_intra >= 25.0 && !(f->sm_arch > 80 && best.bw_intra < 50.0 && best.channels > 4)) {
    int dup = MIN(2 * best.channels, max_channels);
    int divide = (dup + best.channels - 1) / best.channels;
    best = (Graph){ dup, best.bw_intra / divide, best.bw_inter / divide };
  }

  gsize k = 0;   /* index of the found speed; pass 2 walks up from there */
  while (k + 1 < f->n_speeds && f->speeds[k] > best.bw_inter)
    k++;
  while (k > 0) {
    double faster = f->speeds[k - 1];
    if (!tree) {
      if (channel_capacity(f, intra, faster, max_channels) < best.channels)
        break;
      best.bw_intra = best.bw_inter = faster;
    } else {
      if (best.bw_intra >= 2 * best.bw_inter || faster <= best.bw_intra)
        break;
      if (intra > 0 && (int)floor(intra / faster + 1e-9) < best.channels)
        break;
      best.bw_intra = faster;
    }
    k--;
  }
  return best;
}

/* How many NVLS channels fit at these speeds (search.cc ncclTopoSearchTryNvls and the NVLS branch
 * of ncclTopoSearchRecNet).  Each channel has a head GPU; every GPU pulls @bw_intra from the
 * NVSwitch and pushes @bw_intra into it, the head twice that, so after k channels with distinct
 * heads a head has used (k+1)·bw_intra of its NVLink each way and any other GPU k·bw_intra: k
 * channels fit while (k+1)·bw_intra <= T.  Across nodes a head is the local GPU of its own NIC and
 * also moves @bw_inter through it, so the NIC path must carry @bw_inter and there are at most
 * @heads channels (min(NICs, GPUs per node)). */
static int
nvls_capacity(const Fabric *f, int heads, double bw_intra, double bw_inter)
{
  const double eps = 1e-9;
  if (f->nics > 0 && bw_inter > f->nic_path_GBs + eps)
    return 0;
  return MIN(heads, (int)floor(f->intra_GBs / bw_intra + eps) - 1);
}

/* ncclTopoCompute for the NVLS pattern (search.cc), on @ppn GPUs per node behind one NVSwitch:
 *  one node — minChannels = maxChannels = min(ppn, 32) ("pull evenly from all GPUs"): the first
 *    speed of the intra list (from the fastest not above T and with channels·s <= T·ppn/(ppn-1))
 *    at which all of them fit;
 *  across nodes — up to min(NICs, ppn) channels; ncclTopoCompareGraphs keeps the graph with more
 *    channels, or else more channels × bwInter ("NVLS channels correspond to GPUs pulling from
 *    NVLS, so the more the better"); the inter speeds are walked down from the NIC path's as for
 *    rings, stopping once all channels fit or the next speed is at most 0.49× the best;
 *  no ncclTopoDupChannels for NVLS;
 *  pass 2 — the NVLS branch raises bwInter one speed at a time while it is below 2·bwIntra (and,
 *    across nodes, fits the NIC path); a raise of bwIntra is tried when that stops, as for trees.
 * On one node bwInter is not a link at all, so it ends at the list's top or 2·bwIntra; NCCL's
 * tuning still takes min(bwIntra-derived, bwInter) (tune_nvls).  Channels 0: no NVLS graph. */
static Graph
search_nvls_graph(const Fabric *f, int ppn)
{
  gboolean net = f->nics > 0;
  int max_channels = MIN(MAX_NVLS_ARITY, ppn);
  int heads = net ? MIN(max_channels, f->nics) : max_channels;
  int min_channels = net ? 1 : max_channels;
  double max_bw = net ? f->nic_path_GBs : f->intra_GBs;
  double total = f->intra_GBs * ppn / (ppn - 1);   /* non-ring patterns: totalBw × ngpus/(ngpus-1) */
  gsize i = 0;
  while (i + 1 < f->n_speeds && (f->speeds[i] > max_bw || f->speeds[i] * min_channels > total))
    i++;
  Graph best = { 0, 0, 0 };
  for (; i < f->n_speeds; i++) {
    double s = f->speeds[i];
    int n = nvls_capacity(f, heads, s, s);
    if (n >= min_channels && (n > best.channels || n * s > best.channels * best.bw_inter))
      best = (Graph){ n, s, s };
    if (best.channels == max_channels)
      break;
    if (best.channels > 0 && i + 1 < f->n_speeds && f->speeds[i + 1] / best.bw_inter <= 0.49)
      break;
  }
  if (best.channels == 0)
    return best;

  gsize k = 0;
  while (k + 1 < f->n_speeds && f->speeds[k] > best.bw_inter)
    k++;
  double try_intra = f->speeds[k], try_inter = f->speeds[k];
  while (k > 0) {
    if (try_inter == best.bw_inter && try_inter < 2 * try_intra)
      try_inter = f->speeds[--k];
    else if (try_intra == best.bw_intra && try_intra < 2 * try_inter)
      try_intra = f->speeds[--k];
    else
      break;
    if (nvls_capacity(f, heads, try_intra, try_inter) >= best.channels && try_inter > best.bw_inter)
      best = (Graph){ best.channels, try_intra, try_inter };
  }
  return best;
}

/* ncclTopoCompute for the CollNetDirect pattern (search.cc ncclTopoSearchTryCollnetDirect; init.cc:
 * minChannels 1, maxChannels MAXCHANNELS, then NCCL_MAX_DIRECT_ARITY + 1 heads at most): one channel
 * per head, a GPU with a NIC of its own, so min(ppn, NICs, 8) channels; bwInter the fastest speed the
 * NIC path carries; bwIntra raised in pass 2 up to twice bwInter as for trees ("increase bwIntra for
 * trees (2 nodes or collnet)"), while every GPU's NVLink still carries its own head's traffic and its
 * share of the other heads' (about 2 × bwIntra each way).  Channels 0: no NICs (one node). */
static Graph
search_collnet_direct_graph(const Fabric *f, int ppn)
{
  if (f->nics == 0)
    return (Graph){ 0, 0, 0 };
  int heads = MIN(MIN(ppn, f->nics), MAX_DIRECT_HEADS);
  gsize i = 0;
  while (i + 1 < f->n_speeds && f->speeds[i] > f->nic_path_GBs)
    i++;
  double inter = f->speeds[i], intra = inter;
  for (gsize k = i; ppn > 1 && k > 0; k--) {
    double faster = f->speeds[k - 1];
    if (faster > 2 * inter || 2 * faster > f->intra_GBs)
      break;
    intra = faster;
  }
  return (Graph){ heads, intra, inter };
}

/* ---- the model ---- */

typedef struct {
  gboolean enabled;
  double latency_us;   /* NCCL's latencies[][] entry */
  double algbw_GBs;    /* NCCL's bandwidths[][] entry (algorithm bandwidth) */
} Tuning;

struct _DdpCollective {
  const DdpFit *fit;                 /* calibration, or NULL */
  DdpCostModel cost_model;
  DdpAlgorithm algorithm;            /* forced, or AUTO */
  guint disabled_algorithms;         /* bit a: algorithm a off (an NCCL_ALGO list, the cluster's) */
  DdpProtocol protocol;              /* forced, or AUTO */
  guint disabled_protocols;          /* bit p: protocol p off (an NCCL_PROTO list, the cluster's) */
  /* nodes and ppn are NCCL's: an NVLink domain that spans hosts (NVL72) is one node to NCCL's
   * topology (MNNVL), so they count domains and GPUs per domain; hosts counts the servers. */
  guint64 gpus, nodes, ppn, hosts, hosts_per_domain;
  int sm_arch;
  gboolean arm_host;                 /* the cluster's nccl.arm_cpu: NCCL's cpuArch is not x86 */
  /* NCCL model */
  Graph graph[DDP_ALGO_COUNT];       /* RING, TREE; NVLS and NVLS_TREE share the NVLS graph (0 channels: none);
                                      * COLLNET_DIRECT's heads, COLLNET_CHAIN the tree's (collnet only) */
  int comm_channels;                 /* comm->nChannels: the ring plateau threshold uses it */
  double launch_us;                  /* cluster nccl.launch_us, added to every call */
  Tuning allreduce[DDP_ALGO_COUNT][DDP_PROTO_COUNT];
  Tuning broadcast[DDP_PROTO_COUNT]; /* Ring only */
  /* nccl (measured-physics) model, physics_setup() */
  guint gpus_per_process;            /* GPUs one host thread issues for (nccl-tests -g); 1 by default */
  double host_launch_us;             /* h: host issue time per GPU per call */
  double intra_bus_GBs;              /* peak busbw inside a node (efficiency × link; host path when no P2P) */
  double net_GBs;                    /* per node across nodes: NICs × efficiency × line rate (0: one node) */
  double inter_latency_us;           /* the cluster's [inter] latency_us, added to every network hop */
  gboolean net_flush;                /* Simple receives over GPUDirect RDMA are flushed (physics_setup) */
  double ll_cap_GBs;                 /* NCCL's llMaxBw for this communicator (busbw) */
  double ll128_channel_GBs[DDP_ALGO_COUNT]; /* NCCL's LL128 busbw per channel, ring and tree (physics_setup) */
  double tree_channel_cap_GBs;       /* tree algbw cap across nodes: tree graph channels × perChMaxTreeBw / 2 */
  double nvls_tree_channel_cap_GBs;  /* NVLSTree algbw cap: NVLS graph channels × perChMaxNVLSTreeBw, as a ring's */
  int nvls_channels;                 /* NVLS kernels' channels (nvls.cc), 0 without NVLS */
  double nvls_algbw_GBs;             /* NVLS inside one node (NVLink domain) of ppn GPUs, algbw (physics_setup) */
  double nvls_step_us;               /* NVLS: the fixed cost of a chunk on a channel (physics_setup) */
  double collnet_algbw_GBs[DDP_ALGO_COUNT]; /* CollNetDirect/Chain peak algbw (physics_setup; 0: off) */
  /* alpha-beta model */
  double ab_bw_GBs;                  /* slowest link crossed, 10^9 B/s */
  double ab_alpha_us;                /* slowest hop */
  double ab_alpha_intra_us, ab_alpha_inter_us;
};

static int
arch_index(int sm_arch)
{
  return sm_arch >= 100 ? ARCH_BLACKWELL : sm_arch >= 90 ? ARCH_HOPPER : sm_arch >= 80 ? ARCH_AMPERE : ARCH_VOLTA;
}

/* floor(log2(x)), -1 for 0 (NCCL's log2i). */
static int
log2_floor(guint64 x)
{
  int l = -1;
  while (x) {
    x >>= 1;
    l++;
  }
  return l;
}

/* The share of a node's NIC bandwidth a collective gets through the switches when every node
 * sends (docs/collective.md "Switch tiers").  Under one leaf switch (per rail) of nodes_per_leaf
 * hosts the fabric is non-blocking.  A job that spans leaves crosses the leaves' uplinks, which carry
 * 1/oversubscription of what the leaf's hosts can send.  NCCL's rings and trees are ordered by node
 * index, so only a few of their edges leave a leaf, but each edge that does carries what one node's
 * NICs carry (a ring's neighbour link; a tree's parent link, two of which a node has over the two
 * trees): a leaf's uplink then behaves as one node whose NICs are nodes_per_leaf / oversubscription
 * of a host's — the bound binds only where oversubscription exceeds the hosts per leaf (per NCCL node
 * when an NVLink domain spans hosts).  nodes_per_leaf 1, the default, is the older reading: every
 * node's NICs divided by oversubscription. */
static double
fabric_share(const DdpCluster *cluster, guint64 hosts, guint64 hosts_per_domain)
{
  /* a leaf holds at least one NCCL node: an NVLink domain's hosts share their uplinks */
  guint64 leaf = MAX((guint64)MAX(cluster->inter.nodes_per_leaf, 1), hosts_per_domain);
  if (hosts <= leaf)
    return 1.0;
  return MIN(1.0, (double)leaf / (cluster->inter.oversubscription * (double)hosts_per_domain));
}

/* The NVLink (or PCIe) rate a GPU has towards the communicator's other GPUs in its node, per
 * direction.  Through a switch (NVSwitch, PCIe) a GPU reaches any peer at its full rate.  On an
 * NVLink mesh without a switch (`fabric = nvlink`: DGX-1's hybrid cube mesh, 4-GPU SXM boards) a
 * GPU's links are wired to fixed peers, and a communicator of ppn of the node's GPUs has only the
 * links among them: (ppn - 1)/(gpus_per_node - 1) of each GPU's links when they are spread evenly
 * over its peers (a 4-GPU V100 board: 2 of 6 links to each peer; DGX-1V: 1 or 2 of 6 to four
 * peers, 6/7 of a link on average; "NVIDIA DGX-1 With Tesla V100 System Architecture", 2017).
 * The nccl and nccl-tuner models use it; the alpha-beta model stays the textbook closed form over
 * the GPU's link. */
static double
intra_link_GBs(const DdpCluster *cluster, guint64 ppn)
{
  double bw = cluster->intra.bandwidth_GBs;
  if (cluster->intra.fabric == DDP_INTRA_NVLINK && ppn > 1 && ppn < (guint64)cluster->gpus_per_node)
    bw *= (double)(ppn - 1) / (double)(cluster->gpus_per_node - 1);
  return bw;
}

static Fabric
fabric_of(const DdpCluster *cluster, guint64 nodes, guint64 ppn, guint64 hosts, guint64 hosts_per_domain)
{
  Fabric f = { 0 };
  f.sm_arch = cluster->gpu.sm_arch;
  if (ppn > 1) {
    double ratio = cluster->intra.fabric == DDP_INTRA_PCIE ? 12.0 / 15.75 : nvlink_model_ratio(f.sm_arch);
    f.intra_GBs = intra_link_GBs(cluster, ppn) * ratio;
    f.tree_intra_GBs = f.intra_GBs * (double)ppn / (double)(ppn - 1);
  }
  if (nodes > 1) {
    /* NCCL's IB/socket plugins report the link speed: 400 Gb/s → 50 GB/s.  An oversubscribed core
     * passes only a share of it when every node sends (fabric_share).  An NVLink domain of several
     * hosts has all of their NICs. */
    f.nics = cluster->inter.nics_per_node * (int)MIN(hosts_per_domain, 1024);
    f.nic_path_GBs = MIN(cluster->inter.nic_bandwidth_Gbps / 8.0 * fabric_share(cluster, hosts, hosts_per_domain),
                         pcie_path_GBs(f.sm_arch));
  }
  gboolean sm100 = f.sm_arch >= 100, sm90 = f.sm_arch >= 90;
#define PICK(a) (f.speeds = a, f.n_speeds = G_N_ELEMENTS(a))
  if (nodes == 1)
    sm100 ? PICK(speeds_intra_sm100) : sm90 ? PICK(speeds_intra_sm90) : PICK(speeds_intra_sm70);
  else
    sm100 ? PICK(speeds_inter_sm100) : sm90 ? PICK(speeds_inter_sm90) : PICK(speeds_inter_sm70);
#undef PICK
  return f;
}

/* The cluster's explicit channels / bw_intra_GBs / bw_inter_GBs replace the searched ones; a
 * channel count alone keeps the searched aggregate bandwidth (channels × bw). */
static void
apply_overrides(const DdpCluster *cluster, Graph *g)
{
  int channels = cluster->nccl.channels > 0 ? cluster->nccl.channels : g->channels;
  double total_intra = g->channels * g->bw_intra, total_inter = g->channels * g->bw_inter;
  g->bw_intra = cluster->nccl.bw_intra_GBs > 0 ? cluster->nccl.bw_intra_GBs : total_intra / channels;
  g->bw_inter = cluster->nccl.bw_inter_GBs > 0 ? cluster->nccl.bw_inter_GBs : total_inter / channels;
  g->channels = channels;
}

/* The NVLS and NVLSTree entries of ncclTopoTuneModel for AllReduce (tuning.cc; docs/model.md §2.2–2.4),
 * Simple only, from the NVLS graph (both algorithms use it):
 *    intraBw = bwIntra · nvlsEfficiency · (nCh-1)/nCh · 2   (AllReduce: reduce-scatter and all-gather
 *              through the switch overlap; one channel's worth goes to coordination)
 *    interBw = bwInter · (2 for NVLSTree on ≤ 2 nodes, else 1)
 *    bw      = min(intraBw, interBw, perChMaxNVLSTreeBw for NVLSTree);  busBw = nCh · bw
 *    algBw   = busBw · n / (2(n-1))                         (as a ring's: nsteps = 2(n-1))
 *    latency NVLS = hwLat[NVLink][NVLS] (+ hwLat[NET][NVLS] across nodes): the base is replaced;
 *            NVLSTree = base (0) + hwLat[NVLink][NVLSTree] + 2·⌊log2 N⌋·hwLat[NET][NVLSTree].
 * Enabled as NCCL enables them: NVLSTree needs more than one node; NVLS across nodes needs CollNet
 * (SHARP in the network), which ddpsim does not model, so NVLS is a one-node algorithm here; both
 * need an NVLS graph of at least 2 channels. */
static void
tune_nvls(DdpCollective *c)
{
  const Graph *g = &c->graph[DDP_ALGO_NVLS];
  if (g->channels < 2)
    return;
  int n = (int)c->gpus, nodes = (int)c->nodes;
  int arch = arch_index(c->sm_arch);
  int scale = nodes <= 2 ? nodes - 1 : 2;
  const DdpProtocol p = DDP_PROTO_SIMPLE;
  for (DdpAlgorithm a = DDP_ALGO_NVLS; a <= DDP_ALGO_NVLS_TREE; a++) {
    gboolean enabled = a == DDP_ALGO_NVLS ? nodes == 1 : nodes > 1;
    if (!enabled)
      continue;
    double intra_bw = g->bw_intra * nvls_efficiency[arch] * (g->channels - 1) / g->channels * 2.0;
    double inter_bw = g->bw_inter * (a == DDP_ALGO_NVLS_TREE && nodes <= 2 ? 2.0 : 1.0);
    double bw = MIN(intra_bw, inter_bw);
    if (a == DDP_ALGO_NVLS_TREE)
      bw = MIN(bw, nvls_tree_max_bw[arch][scale]);
    double algbw = g->channels * bw * n / (2.0 * (n - 1));
    double intra_lat = hw_latency_us[HW_NVLINK][a][p], inter_lat = hw_latency_us[HW_NET][a][p];
    double lat = a == DDP_ALGO_NVLS ? intra_lat + (nodes > 1 ? inter_lat : 0.0)
                                    : base_latency_us[a][p] + intra_lat +
                                        2.0 * log2_floor((guint64)nodes) * inter_lat;
    c->allreduce[a][p] = (Tuning){ TRUE, lat, algbw };
  }
}

/* The CollNet entries of ncclTopoTuneModel for AllReduce (tuning.cc; docs/collective.md §13), Simple
 * only ("Not used" for LL and LL128), on the graph's bwIntra (CollNet uses it at any node count):
 *    CollNetDirect  busBw = nCh · bwIntra / f, f = ppn/nCh − (ppn/nCh − 1)/2 ("Collnet+Direct requires
 *                   all GPUs to have a local NIC to work at full speed"), × 0.85 from Hopper on;
 *                   latency = 2 · (min(1, ppn−1) · hwLat[intra][Direct] + 0.4 · (ppn−1)) + hwLat[NET][Direct]
 *                   ("0.4 us arity serialization latency");
 *    CollNetChain   busBw = nCh · bwIntra; latency = 2 · (ppn−1) · hwLat[intra][Chain] + hwLat[NET][Chain];
 *    algBw = busBw / 2 for both (the non-ring ratio).  With one GPU per node the NET latency is the
 * Tree's, as for every algorithm.  Enabled as NCCL enables them: collnet on and more than one node;
 * CollNetDirect also needs an NVSwitch in the node (nvsCount > 0). */
static void
tune_collnet(DdpCollective *c, const DdpCluster *cluster)
{
  const DdpProtocol p = DDP_PROTO_SIMPLE;
  double ppn = (double)c->ppn;
  Hw intra_hw = cluster->intra.fabric == DDP_INTRA_PCIE ? HW_PCI : HW_NVLINK;
  for (DdpAlgorithm a = DDP_ALGO_COLLNET_DIRECT; a <= DDP_ALGO_COLLNET_CHAIN; a++) {
    const Graph *g = &c->graph[a];
    gboolean direct = a == DDP_ALGO_COLLNET_DIRECT;
    if (g->channels == 0 || (direct && cluster->intra.fabric != DDP_INTRA_NVSWITCH))
      continue;
    double bus = g->channels * g->bw_intra;
    if (direct) {
      double factor = ppn / g->channels;
      bus /= factor - (factor - 1.0) / 2.0;
      if (c->sm_arch >= 90)
        bus *= collnet_direct_efficiency_sm90;
    }
    double intra_lat = hw_latency_us[intra_hw][a][p];
    double inter_lat = hw_latency_us[HW_NET][c->ppn == 1 ? DDP_ALGO_TREE : a][p];
    double lat = direct ? 2.0 * (MIN(1.0, ppn - 1) * intra_lat + (ppn - 1) * 0.4) + inter_lat
                        : 2.0 * (ppn - 1) * intra_lat + inter_lat;
    c->allreduce[a][p] = (Tuning){ TRUE, base_latency_us[a][p] + lat, 0.5 * bus };
  }
}

/* ncclTopoTuneModel for AllReduce and Broadcast on the ring and tree graphs (tuning.cc; docs/model.md
 * §2.2–2.3); NVLS in tune_nvls. */
static void
tune_model(DdpCollective *c, const DdpCluster *cluster)
{
  int n = (int)c->gpus, nodes = (int)c->nodes, ppn = (int)c->ppn;
  int arch = arch_index(c->sm_arch);
  int scale = nodes <= 2 ? nodes - 1 : 2;
  int ll_row = nodes == 1 ? arch : cluster->nccl.amd_cpu ? 1 : 0;
  double ll_max = ll_max_bw[ll_row][scale];
  Hw intra_hw = cluster->intra.fabric == DDP_INTRA_PCIE ? HW_PCI : HW_NVLINK;
  /* LL128 only where NCCL enables it by default: intra path NVLink (≤ NVB), inter path through a
   * PCIe switch (≤ PXB, as on every GPU–NIC pairing we describe), compute capability ≥ 7.0. */
  gboolean ll128 = (cluster->intra.fabric != DDP_INTRA_PCIE || ppn == 1) && c->sm_arch >= 70;
  /* NCCL's socket transport goes through host memory: the GPU–NIC path is not a PCIe-switch path
   * (typeInter > PXB), so LL128 stays off across nodes (tuning.cc LL128 enablement). */
  if (nodes > 1 && cluster->inter.fabric == DDP_INTER_ETHERNET)
    ll128 = FALSE;
  /* getNetOverhead: the proxy thread posts each network send; ×3 for Simple. */
  double net_overhead_us = nodes > 1 ? (cluster->nccl.amd_cpu ? 2.0 : 1.0) : 0.0;

  for (DdpAlgorithm a = DDP_ALGO_RING; a <= DDP_ALGO_TREE; a++) {
    const Graph *g = &c->graph[a];
    double bw = nodes <= 2 ? g->bw_intra : g->bw_inter;
    for (DdpProtocol p = DDP_PROTO_LL; p <= DDP_PROTO_SIMPLE; p++) {
      double bus = g->channels * bw;
      if (a == DDP_ALGO_RING) {
        if (p == DDP_PROTO_LL)
          bus = MIN(ll_max, 0.5 * bus);                         /* 8-byte lines: 4 data + 4 flag */
        else if (p == DDP_PROTO_LL128)
          bus = MIN(0.92 * bus, g->channels * ring_ll128_max_bw[arch][scale]); /* 120 of 128 B */
      } else {
        bus = MIN(0.92 * bus, g->channels * tree_max_bw[arch][scale]);
        if (p == DDP_PROTO_LL)
          bus = MIN(bus / 3.8, ll_max);
        else if (p == DDP_PROTO_LL128)
          bus = MIN(bus * (nodes == 1 ? 7.0 / 9.0 : 120.0 / 128.0), g->channels * tree_ll128_max_bw[arch][scale]);
      }
      /* busBw → algBw: a ring moves 2(n-1)/n of the buffer through each link; a (double binary)
       * tree moves all of it up and all of it down, hence 1/2. */
      double algbw = a == DDP_ALGO_RING ? bus * n / (2.0 * (n - 1)) : 0.5 * bus;

      double intra_lat = hw_latency_us[intra_hw][a][p];
      /* with one GPU per node every step is exposed: NCCL uses the Tree network latency */
      double inter_lat = hw_latency_us[HW_NET][ppn == 1 ? DDP_ALGO_TREE : a][p];
      double lat = base_latency_us[a][p];
      if (a == DDP_ALGO_RING) {
        int steps = 2 * (n - 1), inter_steps = nodes > 1 ? 2 * (nodes - 1) : 0;
        double overhead = net_overhead_us * (p == DDP_PROTO_SIMPLE ? 3.0 : 1.0);
        lat += (steps - inter_steps) * MAX(intra_lat, overhead) + inter_steps * inter_lat;
      } else {
        /* chain inside the node, binary tree across nodes; up then down */
        lat += 2.0 * ((ppn - 1) * intra_lat + log2_floor((guint64)nodes) * inter_lat);
      }
      gboolean enabled = p != DDP_PROTO_LL128 || ll128;
      c->allreduce[a][p] = (Tuning){ enabled, enabled ? lat : 0, enabled ? algbw : 0 };

      if (a == DDP_ALGO_RING) {
        /* Broadcast: nsteps = n, so algBw = busBw; rings are sameChannels, so one hop's latency */
        double hop = hw_latency_us[nodes == 1 ? intra_hw : HW_NET][a][p];
        c->broadcast[p] = (Tuning){ enabled, enabled ? base_latency_us[a][p] + hop : 0, enabled ? bus : 0 };
      }
    }
  }
  tune_nvls(c);
  tune_collnet(c, cluster);
}

static void
alpha_beta_model(DdpCollective *c, const DdpCluster *cluster)
{
  gboolean crosses_intra = c->ppn > 1, crosses_inter = c->nodes > 1;
  double bw = G_MAXDOUBLE, alpha = 0;
  if (crosses_intra) {
    bw = cluster->intra.bandwidth_GBs;
    alpha = cluster->intra.latency_us;
  }
  if (crosses_inter) {
    bw = MIN(bw, ddp_cluster_inter_GBs_per_gpu(cluster));
    alpha = MAX(alpha, cluster->inter.latency_us);
  }
  c->ab_bw_GBs = bw;
  c->ab_alpha_us = alpha;
  c->ab_alpha_intra_us = crosses_intra ? cluster->intra.latency_us : 0;
  c->ab_alpha_inter_us = crosses_inter ? cluster->inter.latency_us : 0;
}

/* ---- the nccl model: NCCL as nccl-tests measures it (docs/collective.md "The nccl model") ----
 *
 *   t(S)   = max(g·h, t_k + min over enabled (a, p) of T_ap(S))
 *   T_ap   = L_ap + S / (1000 · A_ap · nc(S)/NC) + F_ap(S)
 *
 * g·h    host issue floor: nccl-tests times back-to-back calls, and one host thread issuing g GPUs'
 *        calls (-g g) spends h per GPU per call (enqueue + kernel launch);
 * t_k    the cluster's nccl.launch_us: kernel launch to first flag, and completion;
 * L_ap   NCCL's latency for the pair (tuning.cc, tune_model above) plus the cluster's [inter]
 *        latency_us for every network hop, × NCCL's ring plateau factor where NCCL applies it;
 * A_ap   peak algbw from the links' physics (physics_peak); of NCCL's per-channel caps only LL128's,
 *        the one a thread block cannot exceed whatever the link;
 * nc(S)  the channels NCCL actually runs: enqueue.cc topoGetAlgoInfo drops channels while
 *        S < nc · nthreads · threadThreshold (comm.h), down to 1;
 * F_ap   pipeline fill: the first chunk c(S) crosses the algorithm's hops one after another, each at
 *        its own link's per-channel rate (LL's: its cap over the nc(S) channels that run), before
 *        the last one arrives.
 * Auto runs no LL across multi-host NVLink domains (spans_domains). */

/* NCCL_LL_THREAD_THRESHOLD 8 (× nRanks for Ring), NCCL_LL128_THREAD_THRESHOLD 8,
 * NCCL_SIMPLE_THREAD_THRESHOLD 64 bytes per thread (comm.h); threads per channel: LL 512
 * (NCCL_LL_MAX_NTHREADS), LL128 640 (NCCL_LL128_MAX_NTHREADS), Simple 512 (NCCL_SIMPLE_MAX_NTHREADS). */
static const double thread_threshold[DDP_PROTO_COUNT] = { 0, 8, 8, 64 };
static const double proto_threads[DDP_PROTO_COUNT] = { 0, 512, 640, 512 };
/* Data per pipeline step and channel (init.cc buffSizes / NCCL_STEPS = 8):
 *   LL     512 KiB of 16-byte lines (8 lines × 512 threads × 8 steps × 16 B), half of it flags: 32 KiB;
 *   LL128  120 × 640 threads × 8 steps × 8 B = 4 915 200 B, 120 of every 128 B data: 576 000 B;
 *   Simple NCCL_BUFFSIZE 4 MiB / 8 = 512 KiB;  NVLS: nvlsChunkSize 128 KiB (collectives.h). */
static const double step_bytes[DDP_PROTO_COUNT] = { 0, 32768, 576000, 524288 };
enum { NVLS_CHUNK_BYTES = 131072, NCCL_STEPS = 8 };
/* Payload per byte on the wire: LL 8-byte words of 4 B data + 4 B flag; LL128 120 of 128 B. */
static const double proto_payload[DDP_PROTO_COUNT] = { 0, 0.5, 120.0 / 128.0, 1.0 };

/* The per-communicator inputs of the nccl model.  Peaks (docs/collective.md "Peaks"):
 *  inside a node, busbw ≤ intra efficiency × the per-GPU link rate (NCCL's own accounting of NVLink
 *    and PCIe, ddp_cluster_intra_efficiency); without GPU peer-to-peer the data goes GPU → host
 *    memory → GPU and is also bound by NCCL's CPU-node rate (topo.h AMD_BW 16 GB/s, SKL_QPI_BW 10);
 *  across nodes, every byte a node sends or receives crosses its NICs: NICs × efficiency × line
 *    rate / 8 / oversubscription, each NIC also bound by its PCIe path (pcie_path_GBs);
 *  LL is capped by NCCL's llMaxBw as NCCL reads it (tune_model: the GPU row on one node, the
 *    host CPU's row across nodes). */
static void
physics_setup(DdpCollective *c, const DdpCluster *cluster)
{
  c->gpus_per_process = 1;
  c->host_launch_us = cluster->nccl.host_launch_us;
  c->inter_latency_us = c->nodes > 1 ? cluster->inter.latency_us : 0;
  /* GPUDirect RDMA flush: before a GPU reads a Simple-protocol buffer the NIC wrote into its memory,
   * NCCL's proxy issues ncclNetIflush, a read of that memory through the NIC, on GPUs before Hopper
   * (graph/paths.cc ncclTopoNeedFlush: flush unless cudaCompCap >= 90 or NCCL_NET_FORCE_FLUSH;
   * transport/net.cc recvProxyProgress, Simple only: LL and LL128 carry their own flags).  NCCL's
   * tuner charges it as one more network latency per hop for Simple (tuning.cc "Also add the
   * flush extra latency": interLat += latencyInter); the model does the same with latency_us.
   * Sockets receive into host memory (net_socket.cc: NCCL_PTR_HOST only), so TCP has no flush. */
  c->net_flush = c->nodes > 1 && c->sm_arch < 90 && cluster->inter.fabric != DDP_INTER_ETHERNET;
  int arch = arch_index(c->sm_arch);
  int scale = c->nodes <= 2 ? (int)c->nodes - 1 : 2;
  c->ll_cap_GBs = ll_max_bw[c->nodes == 1 ? arch : cluster->nccl.amd_cpu ? 1 : 0][scale];
  /* One channel is one thread block, and an LL128 block moves at most perChMaxRingLL128Bw /
   * perChMaxTreeLL128Bw of busbw (tuning.cc, the tuner's own per-channel cap): it binds at mid
   * sizes, where NCCL runs few channels (nc(S) below). */
  c->ll128_channel_GBs[DDP_ALGO_RING] = ring_ll128_max_bw[arch][scale];
  c->ll128_channel_GBs[DDP_ALGO_TREE] = tree_ll128_max_bw[arch][scale];
  /* NCCL's per-channel tree and NVLSTree rates, counted on the graphs' channels as its tuner does
   * (tuning.cc: Tree busBw ≤ nChannels × perChMaxTreeBw, algBw = busBw / 2; NVLSTree bw per channel
   * ≤ perChMaxNVLSTreeBw, algBw = nChannels · bw · n / (2(n-1))): a tree channel's thread block
   * reduces and forwards to two children, and NCCL measured what one sustains. */
  double n = (double)c->gpus;
  c->tree_channel_cap_GBs = c->graph[DDP_ALGO_TREE].channels * tree_max_bw[arch][scale] / 2.0;
  c->nvls_tree_channel_cap_GBs = c->graph[DDP_ALGO_NVLS].channels * nvls_tree_max_bw[arch][scale] * n / (2.0 * (n - 1));
  c->intra_bus_GBs = G_MAXDOUBLE;
  if (c->ppn > 1) {
    c->intra_bus_GBs = ddp_cluster_intra_efficiency(cluster) * intra_link_GBs(cluster, c->ppn);
    if (cluster->intra.p2p_off)
      c->intra_bus_GBs = MIN(c->intra_bus_GBs, cluster->nccl.amd_cpu ? 16.0 : 10.0);
  }
  c->net_GBs = 0;
  if (c->nodes > 1) {
    double nic = cluster->inter.nic_bandwidth_Gbps / 8.0 * ddp_cluster_inter_efficiency(cluster);
    c->net_GBs = (double)c->hosts_per_domain * cluster->inter.nics_per_node * MIN(nic, pcie_path_GBs(c->sm_arch)) *
                 fabric_share(cluster, c->hosts, c->hosts_per_domain);
  }
  /* NVLS runs on comm->nvlsChannels (nvls.cc ncclNvlsInit / ncclNvlsTuning): 16 on Hopper; on
   * Blackwell 24 on one node, 32 across nodes (docs/collective.md §11.9).  Its peak is the traffic it
   * puts on each GPU's NVLinks: without registered buffers every rank copies its input into its own
   * copy of the multicast buffer, the switch reads each chunk from all ppn copies
   * (multimem.ld_reduce: S out of every GPU over all heads) and writes each reduced chunk into all of
   * them (multimem.st: S into every GPU), and each head (the NVLS graph's channels, connect.cc
   * connectNvls: every GPU of a node up to NCCL_MAX_NVLS_ARITY, 32; across nodes the GPUs with a
   * NIC) sends and receives its 1/heads once more: S (1 + 1/heads) each way over a link of
   * intra_bus_GBs (which carries the cluster's [intra] efficiency, so a calibration that scales
   * NVLink scales NVLS alike).  NCCL's tuner gives an NVLS channel nvlsEfficiency of its link
   * (tuning.cc: Hopper 0.85, Blackwell 0.74) at the full 128 KiB chunk; the model reads the loss as
   * a fixed cost per chunk a channel moves, (1/η − 1) × the chunk's time at the link rate, so
   * that the smaller chunks NCCL picks for smaller messages (nvls_chunk_bytes) lose more. */
  c->nvls_channels = 0;
  if (c->graph[DDP_ALGO_NVLS].channels >= 2) {
    c->nvls_channels = c->sm_arch >= 100 ? (c->nodes == 1 ? 24 : 32) : 16;
    double heads = (double)c->graph[DDP_ALGO_NVLS].channels;
    c->nvls_algbw_GBs = c->intra_bus_GBs * heads / (heads + 1.0);
    double chunk_us = NVLS_CHUNK_BYTES / (1000.0 * c->nvls_algbw_GBs / c->nvls_channels);
    c->nvls_step_us = chunk_us * (1.0 / nvls_efficiency[arch] - 1.0);
  }
  /* CollNet (SHARP): the switches reduce, so a node sends its share of the buffer into the network
   * once and receives the sum once — S each way through its NICs, algbw ≤ net_GBs, twice what a ring
   * or a tree over ≥ 4 nodes reaches (the in-network reduction the NIC-aggregate bound leaves out).
   * Inside the node CollNetDirect scatters each GPU's buffer to the heads and gathers the sums back,
   * (ppn-1)/ppn of S each way twice, as a one-node ring: algbw ≤ intra_bus · ppn / (2(ppn-1));
   * CollNetChain passes all of S up a chain to its head and all of it down, 2S through a GPU's link
   * each way: algbw ≤ intra_bus / 2.  Each at the share NCCL rates it at (collnet_*_efficiency). */
  for (DdpAlgorithm a = DDP_ALGO_COLLNET_DIRECT; a <= DDP_ALGO_COLLNET_CHAIN; a++) {
    c->collnet_algbw_GBs[a] = 0;
    if (!c->allreduce[a][DDP_PROTO_SIMPLE].enabled)
      continue;
    double ppn = (double)c->ppn, intra = G_MAXDOUBLE;
    if (c->ppn > 1)
      intra = a == DDP_ALGO_COLLNET_DIRECT ? c->intra_bus_GBs * ppn / (2.0 * (ppn - 1)) : c->intra_bus_GBs / 2.0;
    double share = a == DDP_ALGO_COLLNET_CHAIN ? collnet_chain_efficiency
                   : c->sm_arch >= 90          ? collnet_direct_efficiency_sm90
                                               : 1.0;
    c->collnet_algbw_GBs[a] = MIN(intra, c->net_GBs) * share;
  }
}

/* What one node moves through its NICs, each way, in a double binary tree AllReduce over @nodes
 * nodes, in units of the buffer S: each tree carries S/2 and a node moves S/2 each way per edge it
 * has in a tree, so the load is (edges in tree 1 + edges in tree 2) / 2.  NCCL's trees (trees.cc
 * ncclGetBtree, ncclGetDtree: the second tree mirrored for an even count, shifted by one for an odd
 * one) give every node at most 2 edges over both on 2 nodes (load 1: S each way, the 2-node case
 * NCCL's tuner doubles the tree's bandwidth for), 3 on 3 nodes, and 4 from 4 nodes on — every node
 * is internal (3 edges) in one tree and a leaf (1) in the other (checked node by node up to 10^5
 * nodes), so algbw ≤ NIC bandwidth / 2 there, as NCCL's tuner assumes with bwInter. */
static double
tree_node_load(guint64 nodes)
{
  return (double)MIN(nodes, 4) / 2.0;
}

/* Peak algbw of @a × @p, and the per-channel rates of its intra-node and network hops (busbw
 * terms, the rate one channel's chunk crosses one link at). */
static double
physics_peak(const DdpCollective *c, DdpAlgorithm a, DdpProtocol p, int channels, double *hop_intra, double *hop_net)
{
  double n = (double)c->gpus, e = proto_payload[p];
  double net = c->nodes > 1 ? c->net_GBs : G_MAXDOUBLE;
  double link = MIN(c->intra_bus_GBs, net);
  double algbw;
  if (a == DDP_ALGO_RING) {
    /* every link of the ring carries busbw = algbw · 2(n-1)/n, the network links included */
    double cap = p == DDP_PROTO_LL      ? c->ll_cap_GBs
                 : p == DDP_PROTO_LL128 ? channels * c->ll128_channel_GBs[DDP_ALGO_RING]
                                        : G_MAXDOUBLE;
    algbw = MIN(link * e, cap) * n / (2.0 * (n - 1));
    /* a hop runs at its own link's rate: the first chunk is not held back by the bottleneck */
    *hop_intra = MIN(c->intra_bus_GBs * e, cap) / channels;
    *hop_net = MIN(net * e, cap) / channels;
  } else if (a == DDP_ALGO_TREE) {
    /* Inside a node the chain moves all S up and all S down through every GPU's link.  Across
     * nodes each of the two trees carries half the buffer, and a node moves S/2 each way per tree
     * edge it has (its children's halves up and its parent's down in the reduce; the reverse in the
     * broadcast): the double binary tree's edges per node (tree_node_load) set its NIC load.
     * NCCL's per-channel caps: LL's llMaxBw and LL128's perChMaxTreeLL128Bw on the channels running
     * (as the ring's), and across nodes, for every protocol, perChMaxTreeBws counted on the tree
     * graph's channels as NCCL's tuner counts it (tuning.cc: busBw ≤ nChannels × it, algBw =
     * busBw / 2, before the protocol's own min); on two A100 nodes that is what keeps the tree below
     * the ring at large sizes, as NCCL's tuner and the Azure NDm A100 v4 curve have it. */
    double cap = p == DDP_PROTO_LL      ? c->ll_cap_GBs / 2.0
                 : p == DDP_PROTO_LL128 ? channels * c->ll128_channel_GBs[DDP_ALGO_TREE] / 2.0
                                        : G_MAXDOUBLE;
    if (c->nodes > 1)
      cap = MIN(cap, c->tree_channel_cap_GBs);
    double tree_net = c->nodes > 1 ? net / tree_node_load(c->nodes) : G_MAXDOUBLE;
    algbw = MIN(MIN(c->intra_bus_GBs, tree_net) * e, cap);
    /* One node: NCCL's tree is a single chain (connect.cc), which its own table rates below the
     * ring; auto never picks it here (ddp_collective_allreduce).  A forced one: every GPU but the
     * ends sends S up the chain and S down it, 2S through its link each way where a ring sends
     * 2(n-1)/n S, so the chain runs at (n-1)/n of the ring's rate. */
    if (c->nodes == 1)
      algbw = MIN(link * e, 2.0 * cap) / 2.0;
    *hop_intra = MIN(c->intra_bus_GBs * e, cap) / channels;
    *hop_net = MIN(tree_net * e, cap) / channels;
  } else if (a == DDP_ALGO_NVLS) {
    algbw = c->nvls_algbw_GBs;
    *hop_intra = *hop_net = 2.0 * algbw / channels;
  } else if (a == DDP_ALGO_COLLNET_DIRECT || a == DDP_ALGO_COLLNET_CHAIN) {
    /* a chunk crosses NVLink at NVLink's per-channel rate and the NICs at theirs */
    algbw = c->collnet_algbw_GBs[a];
    *hop_intra = (c->ppn > 1 ? c->intra_bus_GBs : net) / channels;
    *hop_net = net / channels;
  } else {
    /* NVLSTree: NVLS inside each node, the double binary tree through the NICs across them (its
     * NIC load as the tree's), and NCCL's per-channel NVLSTree rate (perChMaxNVLSTreeBws). */
    double tree_net = net / tree_node_load(c->nodes);
    algbw = MIN(MIN(c->nvls_algbw_GBs, tree_net), c->nvls_tree_channel_cap_GBs);
    *hop_intra = 2.0 * c->nvls_algbw_GBs / channels;
    *hop_net = tree_net / channels;
  }
  return algbw;
}

/* Network hops of one call of @a (the [inter] latency_us is paid on each). */
static double
network_hops(const DdpCollective *c, DdpAlgorithm a)
{
  if (c->nodes == 1)
    return 0;
  if (a == DDP_ALGO_RING)
    return 2.0 * (double)(c->nodes - 1);
  if (a == DDP_ALGO_COLLNET_DIRECT || a == DDP_ALGO_COLLNET_CHAIN)
    return 2.0;   /* into the switches' reduction tree and back */
  return 2.0 * log2_floor(c->nodes);
}

static gboolean allowed(const DdpCollective *c, DdpAlgorithm a, DdpProtocol p);

/**
 * ddp_collective_new:
 * @cluster: read during the call only
 * @gpus: ranks in the communicator
 *
 * Returns: (transfer full) or NULL with DDP_CLUSTER_ERROR_INVALID (@gpus does not fit) or
 * DDP_COLLECTIVE_ERROR_INVALID (the forced protocol or algorithm is one NCCL does not run here:
 * LL128 off NVLink, NVLS without NVLS hardware or across nodes, NVLSTree on one node, …).
 */
DdpCollective *
ddp_collective_new(const DdpCluster *cluster, guint64 gpus, GError **error)
{
  guint64 hosts;
  if (!ddp_cluster_check_gpus(cluster, gpus, &hosts, error))
    return NULL;
  g_autoptr(DdpCollective) c = g_new0(DdpCollective, 1);
  c->cost_model = cluster->nccl.cost_model;
  c->algorithm = cluster->nccl.algorithm;
  c->protocol = cluster->nccl.protocol;
  c->disabled_protocols = cluster->nccl.disabled_protocols;
  c->disabled_algorithms = cluster->nccl.disabled_algorithms;
  c->gpus = gpus;
  c->hosts = hosts;
  /* NVLink domains: a job is spread evenly over the fewest domains that hold it (32 four-GPU hosts
   * on NVL72 racks of 18: 2 domains of 16 hosts).  NCCL treats each domain as one node (MNNVL). */
  guint64 domain_hosts = (guint64)ddp_cluster_domain_nodes(cluster);
  c->nodes = (hosts + domain_hosts - 1) / domain_hosts;
  c->hosts_per_domain = (hosts + c->nodes - 1) / c->nodes;
  c->ppn = MIN(gpus, c->hosts_per_domain * (guint64)cluster->gpus_per_node);
  c->sm_arch = cluster->gpu.sm_arch;
  c->arm_host = cluster->nccl.arm_cpu;
  c->gpus_per_process = 1;
  if (gpus == 1)
    return g_steal_pointer(&c);

  if (c->cost_model == DDP_COST_ALPHA_BETA) {
    if (!allowed(c, DDP_ALGO_RING, DDP_PROTO_SIMPLE) && !allowed(c, DDP_ALGO_TREE, DDP_PROTO_SIMPLE)) {
      g_autofree char *algorithms = ddp_algorithm_set_name(c->algorithm, c->disabled_algorithms);
      g_set_error(error, DDP_COLLECTIVE_ERROR, DDP_COLLECTIVE_ERROR_INVALID,
                  "nccl.algorithm: the alpha-beta cost model has ring and tree only, not %s (cluster %s)",
                  algorithms, cluster->name);
      return NULL;
    }
    alpha_beta_model(c, cluster);
    return g_steal_pointer(&c);
  }

  Fabric f = fabric_of(cluster, c->nodes, c->ppn, c->hosts, c->hosts_per_domain);
  c->graph[DDP_ALGO_RING] = search_graph(&f, FALSE, MAX_SEARCH_CHANNELS);
  c->graph[DDP_ALGO_TREE] = search_graph(&f, TRUE, c->graph[DDP_ALGO_RING].channels);
  apply_overrides(cluster, &c->graph[DDP_ALGO_RING]);
  apply_overrides(cluster, &c->graph[DDP_ALGO_TREE]);
  /* NVLS (nvls.cc ncclNvlsInit, search.cc): NCCL_NVLS_ENABLE, multicast support (NVSwitch, sm90+;
   * the search also needs an NVS node and ccMin >= 90) and more than 2 GPUs in the node.  The
   * cluster's channels/bw_*_GBs overrides are the ring/tree graphs' and do not apply. */
  if (cluster->nccl.nvls && cluster->intra.fabric == DDP_INTRA_NVSWITCH && c->sm_arch >= 90 && c->ppn > 2)
    c->graph[DDP_ALGO_NVLS] = c->graph[DDP_ALGO_NVLS_TREE] = search_nvls_graph(&f, (int)c->ppn);
  /* CollNet (NCCL_COLLNET_ENABLE with the SHARP plugin; init.cc collNetSetup): across nodes only.
   * CollNetChain searches the tree pattern with collNet set and the ring's channel count (init.cc):
   * the model takes the tree graph for it. */
  if (cluster->nccl.collnet && c->nodes > 1) {
    c->graph[DDP_ALGO_COLLNET_DIRECT] = search_collnet_direct_graph(&f, (int)c->ppn);
    c->graph[DDP_ALGO_COLLNET_CHAIN] = c->graph[DDP_ALGO_TREE];
  }
  /* init.cc: min of the two graphs, doubled when the rings are duplicated (connect.cc) */
  c->comm_channels = MIN(MAX_CHANNELS, 2 * MIN(c->graph[DDP_ALGO_RING].channels, c->graph[DDP_ALGO_TREE].channels));
  c->launch_us = cluster->nccl.launch_us;
  tune_model(c, cluster);
  physics_setup(c, cluster);

  if (c->protocol != DDP_PROTO_AUTO && !c->allreduce[DDP_ALGO_RING][c->protocol].enabled) {
    g_set_error(error, DDP_COLLECTIVE_ERROR, DDP_COLLECTIVE_ERROR_INVALID,
                "nccl.protocol: NCCL does not enable %s on cluster %s (LL128 needs NVLink inside the node)",
                ddp_protocol_name(c->protocol), cluster->name);
    return NULL;
  }
  gboolean any = FALSE;
  for (DdpAlgorithm a = DDP_ALGO_RING; a < DDP_ALGO_COUNT; a++)
    for (DdpProtocol p = DDP_PROTO_LL; p <= DDP_PROTO_SIMPLE; p++)
      any = any || (allowed(c, a, p) && c->allreduce[a][p].enabled);
  if (!any) {
    g_autofree char *protocols = ddp_protocol_set_name(c->protocol, c->disabled_protocols);
    g_autofree char *algorithms = ddp_algorithm_set_name(c->algorithm, c->disabled_algorithms);
    gboolean all = c->protocol == DDP_PROTO_AUTO && c->disabled_protocols == 0;
    g_set_error(error, DDP_COLLECTIVE_ERROR, DDP_COLLECTIVE_ERROR_INVALID,
                "nccl.algorithm: NCCL does not run %s%s%s on cluster %s with %" G_GUINT64_FORMAT
                " GPUs (NVLS and NVLSTree are Simple only and need an NVSwitch fabric, sm_arch >= 90, more "
                "than 2 GPUs per node and nccl.nvls = true; NVLS runs on one node, NVLSTree across nodes; "
                "CollNetDirect and CollNetChain need nccl.collnet = true and more than one node, CollNetDirect "
                "an NVSwitch)",
                algorithms, all ? "" : "/", all ? "" : protocols, cluster->name, gpus);
    return NULL;
  }
  return g_steal_pointer(&c);
}

void
ddp_collective_free(DdpCollective *c)
{
  g_free(c);
}

void
ddp_collective_set_gpus_per_process(DdpCollective *c, guint gpus_per_process)
{
  g_return_if_fail(gpus_per_process >= 1);
  c->gpus_per_process = gpus_per_process;
}

guint64
ddp_collective_gpus(const DdpCollective *c)
{
  return c->gpus;
}

guint64
ddp_collective_nodes(const DdpCollective *c)
{
  return c->hosts;
}

guint64
ddp_collective_domains(const DdpCollective *c)
{
  return c->nodes;
}

char *
ddp_collective_domains_caveat(guint64 nodes, guint64 domains, DdpAlgorithm configured, const char *prefix,
                              const char *ring_how)
{
  if (configured != DDP_ALGO_AUTO || domains < 2 || domains >= nodes)
    return NULL;
  return g_strdup_printf("%sacross NVLink domains: measured multi-rack curves ran below NVLSTree (GB200: 7-27 %% of algbw at\n"
                         "%s4-8 GiB) or at NCCL's ring (GB300); %s gives the conservative figure (docs/collective.md 11.8);\n"
                         "%sno LL across the domains: both curves' small sizes sit at LL128's latency (11.13)\n",
                         prefix, prefix, ring_how, prefix);
}

char *
ddp_collective_transport_caveat(const DdpCluster *cluster, guint64 nodes, const char *prefix)
{
  if (nodes >= 2 && cluster->inter.fabric == DDP_INTER_SLINGSHOT)
    return g_strdup_printf("%sover Slingshot (aws-ofi-nccl) the public curves ran 1.5-10 x slower than this model from 4 KiB to\n"
                           "%s256 MiB at three of four sites, in stalls that vary from size to size; above that within 5 %%\n"
                           "%swhere the nodes reached 0.9 of their NICs (docs/collective.md 10.3)\n",
                           prefix, prefix, prefix);
  if (nodes < 2 || cluster->inter.fabric != DDP_INTER_ETHERNET || cluster->inter.efficiency > 0)
    return NULL;
  return g_strdup_printf("%sover NCCL's TCP sockets the share of the line rate is uncertain: the default 0.4 fits two 16 Gb/s VMs,\n"
                         "%sALCF Polaris's 2 x 200 Gb/s nodes reached about 0.1 at 128 nodes (one proxy thread moves a GPU's\n"
                         "%ssockets); [inter] efficiency from your own nccl-tests run replaces it (docs/collective.md 10.3)\n",
                         prefix, prefix, prefix);
}

/* Fills the bandwidth columns of @out from its time, as nccl-tests does (docs/model.md §3). */
static void
finish_cost(guint64 bytes, double bus_factor, DdpCollectiveCost *out)
{
  out->algbw_GBs = out->time_us > 0 ? (double)bytes / (1000.0 * out->time_us) : 0;
  out->busbw_GBs = out->algbw_GBs * bus_factor;
}

static double
allreduce_bus_factor(const DdpCollective *c)
{
  return 2.0 * (double)(c->gpus - 1) / (double)c->gpus;
}

/* NCCL's correction of NVLSTree (tuning.cc ncclTopoGetAlgoTime, from 2.29: AllReduce on an x86
 * host): its bandwidth × treeCorrectionFactor[p][log2(S/64)] for S from 64 B to 1 GiB — NVIDIA's
 * own measurement that trees run below their model at medium sizes.  NCCL's tuner applies it to
 * NVLSTree on Blackwell only (minCompCap >= 100), and so does the nccl-tuner cost model
 * (nccl_allreduce); the nccl model applies it on Hopper too: the kernel and its pipeline are the
 * same, and every multi-node Hopper NVLSTree curve of the public data runs below the uncorrected
 * model as the factor says (docs/collective.md §11.10, chosen after looking at those curves).  1 on
 * a Grace (Arm) host, as in NCCL. */
static double
nvls_tree_correction(const DdpCollective *c, DdpAlgorithm a, double S)
{
  if (a != DDP_ALGO_NVLS_TREE || c->arm_host || S < 64)
    return 1.0;
  int log_size = log2_floor((guint64)S >> 6);
  return log_size < TREE_CORRECTION_SIZES ? tree_correction[DDP_PROTO_SIMPLE][log_size] : 1.0;
}

/* ncclTopoGetAlgoTime for AllReduce (tuning.cc): latency and bandwidth of the table entry with
 * the size-dependent corrections — Tree bandwidth × treeCorrectionFactor (NVLSTree's too on
 * Blackwell with an x86 host, nvls_tree_correction), and the multi-node Ring/Simple latency × 1.4
 * (×1.9 before Ampere) once each rank's slice of each channel reaches 64 B ("plateau effect of
 * ring").  Plus the
 * cluster's launch_us, the one term not from NCCL: NCCL's base latencies are tuned to rank
 * algorithms against each other, and measured small-message times sit a few µs above them
 * (docs/model.md §1.6; docs/collective.md "Launch overhead").  Being the same for every pair, it never
 * changes the choice. */
static void
nccl_allreduce(const DdpCollective *c, guint64 bytes, DdpAlgorithm a, DdpProtocol p, DdpCollectiveCost *out)
{
  const Tuning *t = &c->allreduce[a][p];
  double bw = t->algbw_GBs, lat = t->latency_us;
  int log_size = log2_floor(bytes >> 6);
  if (a == DDP_ALGO_TREE && log_size >= 0 && log_size < TREE_CORRECTION_TREE_SIZES)
    bw *= tree_correction[p][log_size];
  if (c->sm_arch >= 100)   /* NCCL's tuner: NVLSTree's correction on Blackwell only */
    bw *= nvls_tree_correction(c, a, (double)bytes);
  if (a == DDP_ALGO_RING && p == DDP_PROTO_SIMPLE && c->nodes > 1 &&
      bytes / ((guint64)c->comm_channels * c->gpus) >= 64)
    lat *= c->sm_arch < 80 ? 1.9 : 1.4;
  out->algorithm = a;
  out->protocol = p;
  out->latency_us = c->launch_us + lat;
  out->time_us = out->latency_us + (double)bytes / (1000.0 * bw);
}

/* The channels NCCL runs for @bytes of @a × @p: ⌊S / (nthreads · threshold)⌋, at least 1, at most
 * @NC (enqueue.cc topoGetAlgoInfo; LL's threshold × n for a ring).  The model takes the quotient
 * itself, so that between two channel counts the time stays flat instead of dropping when a channel
 * joins (a larger message is never faster: the scale properties of tests/test-collective). */
static double
channel_bytes(const DdpCollective *c, DdpAlgorithm a, DdpProtocol p)
{
  /* CollNet Simple: threadThresholds 512 (tuning.cc), not NCCL_SIMPLE_THREAD_THRESHOLD */
  double threshold = a == DDP_ALGO_COLLNET_DIRECT || a == DDP_ALGO_COLLNET_CHAIN ? 512.0 : thread_threshold[p];
  return proto_threads[p] * threshold * (a == DDP_ALGO_RING && p == DDP_PROTO_LL ? (double)c->gpus : 1.0);
}

static double
running_channels(const DdpCollective *c, DdpAlgorithm a, DdpProtocol p, double S, int NC)
{
  return CLAMP(S / channel_bytes(c, a, p), 1, NC);
}

/* A ring's pipeline fill: its first chunk goes n-1 hops round, nodes-1 of them leaving a node, but
 * only as far as the pipeline is deep: a connection buffers NCCL_STEPS (8) steps (device.h), so no
 * more than 8 hops' worth of the first chunk are in flight ahead of the steady state; past that a
 * ring of any size streams at its link rate (the network hops, the slowest, counted first).  Without
 * the cap a ring of 1 024 GPUs pays 1 023 hops of fill and runs at 60 % of its measured rate
 * (nccl-tests#322, 128 H100 nodes). */
static void
ring_fill_hops(const DdpCollective *c, double *intra_hops, double *net_hops)
{
  *net_hops = MIN((double)(c->nodes - 1), (double)NCCL_STEPS);
  *intra_hops = MIN((double)c->gpus - 1 - (double)(c->nodes - 1), (double)NCCL_STEPS - *net_hops);
}

/* A first chunk of @chunk bytes crossing @intra_hops and @net_hops, each at its link's per-channel rate. */
static double
fill_us(double chunk, double intra_hops, double hop_intra, double net_hops, double hop_net)
{
  return (intra_hops > 0 ? intra_hops * chunk / (1000.0 * hop_intra) : 0) +
         (net_hops > 0 ? net_hops * chunk / (1000.0 * hop_net) : 0);
}

/* The chunk a Tree/LL128 channel moves per step (enqueue.cc calcCollChunking): the LL128 step,
 * halved while the message per running channel holds fewer than nstepsLL128 · 64 / ppn chunks
 * (down to 128 KiB and below), then while it holds fewer than nstepsLL128 · 16 / ppn (down to
 * 32 KiB and below), with nstepsLL128 = 1 + ⌊log₂ nodes⌋ + 0.1 · ppn: NCCL keeps the tree's
 * pipeline about as many chunks deep as it has hops, so the first chunk's trip (the fill) is a
 * small part of a mid-size message.  16 A100 nodes, 2 MiB on 16 channels: 18 000-byte chunks,
 * not the whole 128 KiB share of a channel.  tree_ll128_depths gives the two chunk counts. */
static void
tree_ll128_depths(const DdpCollective *c, double *first, double *second)
{
  double ppn = (double)c->ppn, nsteps = 1.0 + log2_floor(c->nodes) + 0.1 * ppn;
  *first = nsteps * 64.0 / ppn;
  *second = nsteps * 16.0 / ppn;
}

static double
tree_ll128_chunk_bytes(const DdpCollective *c, double S, double nc)
{
  double first, second, chunk = step_bytes[DDP_PROTO_LL128];
  tree_ll128_depths(c, &first, &second);
  while (floor(S / (nc * chunk)) < first && chunk > 131072)
    chunk = floor(chunk / 2.0);
  while (floor(S / (nc * chunk)) < second && chunk > 32768)
    chunk = floor(chunk / 2.0);
  return chunk;
}

/* The chunk an NVLS or NVLSTree channel moves per step (enqueue.cc calcCollChunking): nvlsChunkSize
 * (128 KiB), halved while the message is small against the concurrent operations, nChannels ×
 * nvls.nHeads (the NVLS graph's channels: up to 32 GPUs of the node, connect.cc): NVLS 64 KiB below
 * 64 × ops × 128 KiB, 32 KiB below 8 × ops × 64 KiB, 16 KiB below 2 × ops × 32 KiB; NVLSTree at most
 * 64 KiB from 4 nodes on, 64 KiB below 4 × ops × 128 KiB, 32 KiB below ops × 64 KiB.  64 GPUs of an
 * NVL72 rack (32 heads on 24 channels) run 16 KiB chunks up to 48 MiB, 8 GPUs of an HGX H100 32 KiB
 * ones from 8 to 64 MiB. */
static double
nvls_chunk_bytes(const DdpCollective *c, DdpAlgorithm a, double S)
{
  double ops = (double)c->nvls_channels * (double)c->graph[DDP_ALGO_NVLS].channels, chunk = NVLS_CHUNK_BYTES;
  if (a == DDP_ALGO_NVLS) {
    if (S < 64 * ops * chunk && chunk > 65536)
      chunk = 65536;
    if (S < 8 * ops * chunk && chunk > 32768)
      chunk = 32768;
    if (S < 2 * ops * chunk && chunk > 16384)
      chunk = 16384;
  } else {
    if (c->nodes >= 4)
      chunk = 65536;
    if (S < 4 * ops * chunk && chunk > 65536)
      chunk = 65536;
    if (S < ops * chunk && chunk > 32768)
      chunk = 32768;
  }
  return chunk;
}

enum { NVLS_DROPS_MAX = 3 + 2 + TREE_CORRECTION_SIZES };

static int
compare_doubles(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* The sizes where NVLS's or NVLSTree's time can drop as S grows, ascending; returns how many:
 * where nvls_chunk_bytes doubles, and where nvls_tree_correction rises (at 64 · 2^k B). */
static int
nvls_time_drops(const DdpCollective *c, DdpAlgorithm a, double at[NVLS_DROPS_MAX])
{
  double ops = (double)c->nvls_channels * (double)c->graph[DDP_ALGO_NVLS].channels;
  int n = 0;
  /* NVLSTree's NVLS stage is never faster than NVLS alone (nvls_tree_stage_us), so NVLS's drops
   * are NVLSTree's too */
  at[n++] = 2 * ops * 32768;
  at[n++] = 8 * ops * 65536;
  at[n++] = 64 * ops * 131072;
  if (a == DDP_ALGO_NVLS_TREE) {
    at[n++] = ops * 65536;
    if (c->nodes < 4)
      at[n++] = 4 * ops * 131072;
  }
  for (int k = 1; k <= TREE_CORRECTION_SIZES; k++) {
    double S = 64.0 * ldexp(1.0, k);
    if (nvls_tree_correction(c, a, S) > nvls_tree_correction(c, a, S - 1))
      at[n++] = S;
  }
  qsort(at, (size_t)n, sizeof at[0], compare_doubles);
  return n;
}

/* NVLS's own stage for @S bytes: the NVLink traffic at nvls_algbw_GBs, and the fixed cost of every
 * chunk a channel moves (physics_setup).  Without registered buffers the kernel's scatter and
 * gather walk every head's chunk of each loop, one step per head, and a loop covers nChannels ×
 * nHeads chunks (all_reduce.h, the NVLS loop), so a channel moves at least one chunk per head. */
static double
nvls_stage_us(const DdpCollective *c, DdpAlgorithm a, double S)
{
  double chunk = nvls_chunk_bytes(c, a, S);
  double chunks = MAX((double)c->graph[DDP_ALGO_NVLS].channels, S / ((double)c->nvls_channels * chunk));
  return S / (1000.0 * c->nvls_algbw_GBs) + chunks * c->nvls_step_us;
}

/* The NVLS stage of @a at @S bytes.  NVLSTree's is NVLS's own reduce and multicast over the same
 * node's (or NVLink domain's) switch, with the same heads, so it is never faster than NVLS alone
 * there: NCCL gives NVLSTree larger chunks (nvls_chunk_bytes), but every measured multi-rack NVL72
 * curve runs below the rack's NVLS rate, none above (docs/collective.md §11.12). */
static double
nvls_tree_stage_us(const DdpCollective *c, DdpAlgorithm a, double S)
{
  double own = nvls_stage_us(c, a, S);
  return a == DDP_ALGO_NVLS_TREE ? MAX(own, nvls_stage_us(c, DDP_ALGO_NVLS, S)) : own;
}

/* The nccl model's time for one algorithm × protocol at @S bytes, before the NVLS padding of
 * physics_allreduce (see physics_setup for the terms). */
static void
physics_time(const DdpCollective *c, double S, DdpAlgorithm a, DdpProtocol p, DdpCollectiveCost *out)
{
  double n = (double)c->gpus;
  gboolean nvls = a == DDP_ALGO_NVLS || a == DDP_ALGO_NVLS_TREE;
  int NC = nvls ? c->nvls_channels : c->comm_channels;
  double nc = nvls ? NC : running_channels(c, a, p, S, NC);
  double hop_intra, hop_net;
  double algbw = physics_peak(c, a, p, NC, &hop_intra, &hop_net) * nc / NC;
  /* LL's cap (llMaxBw) is NCCL's rate for the whole collective, not for each channel: the channels
   * that run share it, so when few run each forwards its first chunk that much faster (§11.13) */
  if (p == DDP_PROTO_LL) {
    hop_intra *= NC / nc;
    hop_net *= NC / nc;
  }
  /* the chunk one channel moves per step: a ring cuts each channel's share in n */
  double step = a == DDP_ALGO_TREE && p == DDP_PROTO_LL128 ? tree_ll128_chunk_bytes(c, S, nc) : step_bytes[p];
  double chunk = nvls ? MIN(nvls_chunk_bytes(c, a, S), S / nc)
                      : MIN(step, a == DDP_ALGO_RING ? S / (nc * n) : S / nc);
  double intra_hops, net_hops;
  if (a == DDP_ALGO_RING) {
    ring_fill_hops(c, &intra_hops, &net_hops);
  } else if (a == DDP_ALGO_TREE) {
    /* up the chain inside the node, then up and down the tree across nodes */
    intra_hops = (double)(c->ppn - 1);
    net_hops = 2.0 * log2_floor(c->nodes);
  } else if (a == DDP_ALGO_COLLNET_DIRECT || a == DDP_ALGO_COLLNET_CHAIN) {
    /* to the head (Direct: one scatter hop; Chain: up the chain), into the switches and back, and
     * out to the GPUs again */
    intra_hops = a == DDP_ALGO_COLLNET_DIRECT ? 2.0 : 2.0 * (double)(c->ppn - 1);
    net_hops = 2.0;
  } else {
    /* reduce into the switch and multicast back; NVLSTree adds the tree's network hops */
    intra_hops = 2.0;
    net_hops = a == DDP_ALGO_NVLS_TREE ? 2.0 * log2_floor(c->nodes) : 0.0;
  }
  double fill = fill_us(chunk, intra_hops, hop_intra, net_hops, hop_net);
  double hop_latency = c->inter_latency_us * (c->net_flush && p == DDP_PROTO_SIMPLE ? 2.0 : 1.0);
  double lat = c->allreduce[a][p].latency_us + network_hops(c, a) * hop_latency;
  /* tuning.cc ncclTopoGetAlgoTime: "plateau effect of ring" across nodes */
  if (a == DDP_ALGO_RING && p == DDP_PROTO_SIMPLE && c->nodes > 1 && floor(S / ((double)c->comm_channels * n)) >= 64)
    lat *= c->sm_arch < 80 ? 1.9 : 1.4;
  *out = (DdpCollectiveCost){ 0 };
  out->algorithm = a;
  out->protocol = p;
  out->latency_us = c->launch_us + lat;
  out->transfer_us = S / (1000.0 * algbw);
  /* NVLSTree pipelines NVLS inside the node with the tree across nodes: the slower stage sets the
   * pace; on an x86 host at NCCL's own correction (nvls_tree_correction) */
  if (nvls)
    out->transfer_us = MAX(out->transfer_us, nvls_tree_stage_us(c, a, S)) / nvls_tree_correction(c, a, S);
  out->fill_us = fill;
  out->channels = (int)floor(nc);
  out->time_us = out->latency_us + out->transfer_us + fill;
}

/* The nccl model's time for one algorithm × protocol (without the host floor, which
 * ddp_collective_allreduce applies).  Where NVLS's chunk doubles its time drops (half the
 * chunks), and NVLSTree's where its correction rises (nvls_time_drops); a larger message is never
 * faster, so a size just below such a step costs what the step costs when that is less (the
 * properties of tests/test-collective). */
static void
physics_allreduce(const DdpCollective *c, guint64 bytes, DdpAlgorithm a, DdpProtocol p, DdpCollectiveCost *out)
{
  physics_time(c, (double)bytes, a, p, out);
  if (a != DDP_ALGO_NVLS && a != DDP_ALGO_NVLS_TREE)
    return;
  double at[NVLS_DROPS_MAX];
  int steps = nvls_time_drops(c, a, at);
  for (int i = 0; i < steps; i++) {
    DdpCollectiveCost padded;
    if (at[i] <= (double)bytes)
      continue;
    physics_time(c, at[i], a, p, &padded);
    if (padded.time_us < out->time_us)
      *out = padded;
  }
}

/* The host issue floor of the nccl model: nccl-tests reports back-to-back throughput, so a call
 * takes at least what its host thread needs to issue it. */
static void
apply_host_floor(const DdpCollective *c, DdpCollectiveCost *out)
{
  double floor_us = c->gpus_per_process * c->host_launch_us;
  if (c->cost_model == DDP_COST_NCCL && floor_us > out->time_us) {
    out->host_floor_us = floor_us;
    out->time_us = floor_us;
  }
}

/* The alpha-beta closed forms (file comment). */
static void
alpha_beta_allreduce(const DdpCollective *c, guint64 bytes, DdpAlgorithm a, DdpCollectiveCost *out)
{
  double n = (double)c->gpus, transfer = (double)bytes / (1000.0 * c->ab_bw_GBs);
  out->algorithm = a;
  out->protocol = DDP_PROTO_SIMPLE;
  if (a == DDP_ALGO_RING) {
    out->latency_us = 2.0 * (n - 1) * c->ab_alpha_us;
    out->time_us = 2.0 * (n - 1) / n * transfer + out->latency_us;
  } else {
    out->latency_us = 2.0 * ((double)(c->ppn - 1) * c->ab_alpha_intra_us +
                             log2_floor(c->nodes) * c->ab_alpha_inter_us);
    out->time_us = 2.0 * transfer + out->latency_us;
  }
}

static void
zero_cost(DdpCollectiveCost *out)
{
  *out = (DdpCollectiveCost){ .algorithm = DDP_ALGO_RING, .protocol = DDP_PROTO_SIMPLE };
}

static gboolean allreduce_with(const DdpCollective *c, guint64 bytes, DdpAlgorithm algorithm, DdpProtocol protocol,
                               DdpCollectiveCost *out);

gboolean
ddp_collective_allreduce_with(const DdpCollective *c, guint64 bytes, DdpAlgorithm algorithm, DdpProtocol protocol,
                              DdpCollectiveCost *out)
{
  g_return_val_if_fail(algorithm != DDP_ALGO_AUTO && algorithm < DDP_ALGO_COUNT, FALSE);
  g_return_val_if_fail(protocol != DDP_PROTO_AUTO && protocol < DDP_PROTO_COUNT, FALSE);
  if (c->gpus == 1) {
    zero_cost(out);
    return TRUE;
  }
  DdpCollectiveCost cost = { 0 };   /* every model fills the fields it has; the rest stay 0 */
  if (!allreduce_with(c, bytes, algorithm, protocol, &cost))
    return FALSE;
  *out = cost;
  return TRUE;
}

static gboolean
allreduce_with(const DdpCollective *c, guint64 bytes, DdpAlgorithm algorithm, DdpProtocol protocol,
               DdpCollectiveCost *out)
{
  if (c->cost_model == DDP_COST_ALPHA_BETA) {
    if (algorithm != DDP_ALGO_RING && algorithm != DDP_ALGO_TREE)
      return FALSE;
    alpha_beta_allreduce(c, bytes, algorithm, out);
  } else {
    if (!c->allreduce[algorithm][protocol].enabled)
      return FALSE;
    if (c->cost_model == DDP_COST_NCCL) {
      physics_allreduce(c, bytes, algorithm, protocol, out);
      apply_host_floor(c, out);
    } else {
      nccl_allreduce(c, bytes, algorithm, protocol, out);
    }
  }
  finish_cost(bytes, allreduce_bus_factor(c), out);
  return TRUE;
}

/* Whether the cluster's NCCL_PROTO (one protocol forced, or a list) lets auto consider @p. */
static gboolean
protocol_allowed(const DdpCollective *c, DdpProtocol p)
{
  return (c->protocol == DDP_PROTO_AUTO || c->protocol == p) && !(c->disabled_protocols & (1u << p));
}

/* Whether the job spans several NVLink domains that each hold several hosts (NVL72 racks, MNNVL).
 * Auto runs no LL there: the two public multi-rack curves (OCI GB300, NCCL 2.28.7; OCI GB200 without
 * NVLS, NCCL 2.29.2) sit flat at NCCL's own LL128 latency for the algorithm they ran up to 128 KiB
 * (Ring 500.8 us, Tree 188.5 us), not at LL's (264, 92.4), while inside one rack LL's latency
 * holds (docs/collective.md §11.13).  No source read says why; an observed rule, not a constant. */
static gboolean
spans_domains(const DdpCollective *c)
{
  return c->nodes > 1 && c->hosts_per_domain > 1;
}

/* Whether the settings let auto consider @a × @p.  The alpha-beta model has no protocols: all
 * three would cost the same, so only Simple stands for them; nor has it NVLS. */
static gboolean
allowed(const DdpCollective *c, DdpAlgorithm a, DdpProtocol p)
{
  if ((c->algorithm != DDP_ALGO_AUTO && c->algorithm != a) || (c->disabled_algorithms & (1u << a)))
    return FALSE;
  if (c->cost_model == DDP_COST_ALPHA_BETA)
    return p == DDP_PROTO_SIMPLE && (a == DDP_ALGO_RING || a == DDP_ALGO_TREE);
  if (p == DDP_PROTO_LL && c->protocol == DDP_PROTO_AUTO && spans_domains(c))
    return FALSE;
  return protocol_allowed(c, p);
}

static double
gpu_time(const DdpCollectiveCost *cost)
{
  return cost->host_floor_us > 0 ? cost->latency_us + cost->transfer_us + cost->fill_us : cost->time_us;
}

/* Of CollNetDirect and CollNetChain, the one NCCL's own table does not pick at @bytes when both are
 * allowed (AUTO: none).  The model rates the chain at 0.75 of its graph, NCCL's tuner since 2.18 at
 * all of it, so the two disagree on which is faster; which one runs is the tuner's choice, and
 * Together AI's B200 cluster under auto (NVLS off) ran at the chain's rate, not the direct's
 * (docs/collective.md §13). */
static DdpAlgorithm
collnet_passed_over(const DdpCollective *c, guint64 bytes)
{
  const DdpProtocol p = DDP_PROTO_SIMPLE;
  if (c->cost_model != DDP_COST_NCCL || !allowed(c, DDP_ALGO_COLLNET_DIRECT, p) ||
      !allowed(c, DDP_ALGO_COLLNET_CHAIN, p) || !c->allreduce[DDP_ALGO_COLLNET_DIRECT][p].enabled ||
      !c->allreduce[DDP_ALGO_COLLNET_CHAIN][p].enabled)
    return DDP_ALGO_AUTO;
  DdpCollectiveCost direct, chain;
  nccl_allreduce(c, bytes, DDP_ALGO_COLLNET_DIRECT, p, &direct);
  nccl_allreduce(c, bytes, DDP_ALGO_COLLNET_CHAIN, p, &chain);
  return chain.time_us < direct.time_us ? DDP_ALGO_COLLNET_DIRECT : DDP_ALGO_COLLNET_CHAIN;
}

/* topoGetAlgoInfo: the least predicted time among the allowed pairs, in NCCL's loop order on ties
 * (Tree, Ring, CollNetDirect, CollNetChain, NVLS, NVLSTree; LL, LL128, Simple; strict '<'). */
void
ddp_collective_allreduce(const DdpCollective *c, guint64 bytes, DdpCollectiveCost *out)
{
  static const DdpAlgorithm order[] = { DDP_ALGO_TREE, DDP_ALGO_RING, DDP_ALGO_COLLNET_DIRECT, DDP_ALGO_COLLNET_CHAIN,
                                        DDP_ALGO_NVLS, DDP_ALGO_NVLS_TREE };
  if (c->gpus == 1) {
    zero_cost(out);
    return;
  }
  /* A calibration answers where it measured exactly these ranks on these servers (its curve);
   * elsewhere the model does, with the tiers the calibration fitted (tierfit.h). */
  DdpFitAllreduceCost measured;
  if (c->fit && ddp_fit_allreduce_cost(c->fit, c->gpus, c->hosts, bytes, c->algorithm, c->protocol, &measured) &&
      measured.from_curve) {
    out->time_us = measured.time_us;
    out->latency_us = measured.params.alpha_us;
    out->algorithm = measured.algo;
    out->protocol = measured.proto;
    finish_cost(bytes, allreduce_bus_factor(c), out);
    return;
  }
  DdpAlgorithm collnet_not_run = collnet_passed_over(c, bytes);
  gboolean found = FALSE;
  for (gsize i = 0; i < G_N_ELEMENTS(order); i++) {
    for (DdpProtocol p = DDP_PROTO_LL; p <= DDP_PROTO_SIMPLE; p++) {
      if (!allowed(c, order[i], p) || order[i] == collnet_not_run)
        continue;
      /* the host floor is the same for every pair: choose on the time without it */
      DdpCollectiveCost cost;
      if (c->cost_model == DDP_COST_NCCL && order[i] == DDP_ALGO_TREE && c->nodes == 1 &&
          c->algorithm == DDP_ALGO_AUTO)
        continue;   /* auto never picks the one-node chain (physics_algbw); a forced tree runs it */
      if (ddp_collective_allreduce_with(c, bytes, order[i], p, &cost) &&
          (!found || gpu_time(&cost) < gpu_time(out))) {
        *out = cost;
        found = TRUE;
      }
    }
  }
  g_assert(found);   /* ddp_collective_new refused settings that leave nothing enabled */
}

/**
 * ddp_collective_use_calibration:
 * See collective.h.  Pass NULL to go back to the model alone.
 */
void
ddp_collective_use_calibration(DdpCollective *c, const DdpFit *fit)
{
  c->fit = fit;
}

/* A calibration answers for AllGather, ReduceScatter and Broadcast where it measured that op on
 * exactly these ranks and servers (its curve, fit.h); elsewhere the model does, as for AllReduce.
 * The variant asked for is the one the model would honour: Broadcast runs on the ring whatever the
 * algorithm setting, and AllGather/ReduceScatter take a forced Tree, NVLSTree or CollNet as auto (§12). */
static gboolean
measured_cost(const DdpCollective *c, DdpCollectiveOp op, guint64 bytes, DdpCollectiveCost *out)
{
  DdpAlgorithm algorithm = op == DDP_OP_BROADCAST || c->algorithm == DDP_ALGO_TREE ||
                           c->algorithm == DDP_ALGO_NVLS_TREE || c->algorithm == DDP_ALGO_COLLNET_DIRECT ||
                           c->algorithm == DDP_ALGO_COLLNET_CHAIN ? DDP_ALGO_AUTO : c->algorithm;
  DdpFitCollectiveCost measured;
  if (!c->fit || !ddp_fit_collective_cost(c->fit, op, c->gpus, c->hosts, bytes, algorithm, c->protocol, &measured))
    return FALSE;
  zero_cost(out);
  out->time_us = measured.time_us;
  out->latency_us = measured.latency_us;
  out->algorithm = measured.algo;
  out->protocol = measured.proto;
  finish_cost(bytes, ddp_collective_op_bus_factor(op, c->gpus), out);
  return TRUE;
}

/* Broadcast: NCCL runs it on the ring only (docs/model.md §2.2–2.3); alpha-beta: a pipelined chain,
 * (N-1)·α to fill it plus M/B to stream the buffer through the slowest link. */
void
ddp_collective_broadcast(const DdpCollective *c, guint64 bytes, DdpCollectiveCost *out)
{
  zero_cost(out);
  if (c->gpus == 1 || measured_cost(c, DDP_OP_BROADCAST, bytes, out))
    return;
  if (c->cost_model == DDP_COST_ALPHA_BETA) {
    out->latency_us = (double)(c->gpus - 1) * c->ab_alpha_us;
    out->time_us = out->latency_us + (double)bytes / (1000.0 * c->ab_bw_GBs);
  } else {
    gboolean found = FALSE;
    for (DdpProtocol p = DDP_PROTO_LL; p <= DDP_PROTO_SIMPLE; p++) {
      const Tuning *t = &c->broadcast[p];
      if (!t->enabled || !protocol_allowed(c, p))
        continue;
      double lat = c->launch_us + t->latency_us, time = lat + (double)bytes / (1000.0 * t->algbw_GBs);
      if (!found || time < out->time_us) {
        *out = (DdpCollectiveCost){ .time_us = time, .algorithm = DDP_ALGO_RING, .protocol = p, .latency_us = lat };
        found = TRUE;
      }
    }
    apply_host_floor(c, out);
  }
  finish_cost(bytes, 1.0, out);
}

void
ddp_collective_graph(const DdpCollective *c, DdpAlgorithm algorithm, DdpCollectiveGraph *out)
{
  g_return_if_fail(algorithm != DDP_ALGO_AUTO && algorithm < DDP_ALGO_COUNT);
  if (c->cost_model == DDP_COST_ALPHA_BETA) {
    gboolean link = c->gpus > 1 && (algorithm == DDP_ALGO_RING || algorithm == DDP_ALGO_TREE);
    *out = (DdpCollectiveGraph){ link ? 1 : 0, link ? c->ab_bw_GBs : 0, link ? c->ab_bw_GBs : 0 };
    return;
  }
  const Graph *g = &c->graph[algorithm];
  *out = (DdpCollectiveGraph){ g->channels, g->bw_intra, g->bw_inter };
}

void
ddp_collective_tuning(const DdpCollective *c, DdpAlgorithm algorithm, DdpProtocol protocol, DdpCollectiveTuning *out)
{
  g_return_if_fail(algorithm != DDP_ALGO_AUTO && algorithm < DDP_ALGO_COUNT);
  g_return_if_fail(protocol != DDP_PROTO_AUTO && protocol < DDP_PROTO_COUNT);
  *out = (DdpCollectiveTuning){ 0 };
  if (c->cost_model != DDP_COST_ALPHA_BETA && c->gpus > 1) {
    const Tuning *t = &c->allreduce[algorithm][protocol];
    *out = (DdpCollectiveTuning){ t->enabled, t->latency_us, t->algbw_GBs };
  }
}

static gboolean
same_choice(const DdpCollectiveCost *a, const DdpCollectiveChoice *b)
{
  return a->algorithm == b->algorithm && a->protocol == b->protocol;
}

/* The least size in (@lo, @hi] whose choice is not @current's, given choice(@lo) is @current and
 * choice(@hi) is not: bisection on whole bytes. */
static guint64
first_change(const DdpCollective *c, guint64 lo, guint64 hi, const DdpCollectiveChoice *current)
{
  while (hi - lo > 1) {
    guint64 mid = lo + (hi - lo) / 2;
    DdpCollectiveCost m;
    ddp_collective_allreduce(c, mid, &m);
    if (same_choice(&m, current))
      lo = mid;
    else
      hi = mid;
  }
  return hi;
}

static void
append_choice(GArray *out, const DdpCollective *c, guint64 bytes)
{
  DdpCollectiveCost cost;
  ddp_collective_allreduce(c, bytes, &cost);
  DdpCollectiveChoice choice = { bytes, cost.algorithm, cost.protocol };
  g_array_append_val(out, choice);
}

static int
compare_sizes(const void *a, const void *b)
{
  guint64 x = *(const guint64 *)a, y = *(const guint64 *)b;
  return (x > y) - (x < y);
}

static void
append_break(GArray *breaks, double at, guint64 max_bytes)
{
  if (at >= 1 && at <= (double)max_bytes) {
    guint64 b = (guint64)ceil(at);
    g_array_append_val(breaks, b);
  }
}

/* Which term sets NVLS's or NVLSTree's transfer at @S (physics_time): 0 the links' rate, 1 the
 * algorithm's own NVLS stage, 2 for NVLSTree NVLS alone's stage (nvls_tree_stage_us). */
static int
nvls_transfer_term(const DdpCollective *c, DdpAlgorithm a, double S)
{
  double hop_intra, hop_net;
  double link = S / (1000.0 * physics_peak(c, a, DDP_PROTO_SIMPLE, c->nvls_channels, &hop_intra, &hop_net));
  double own = nvls_stage_us(c, a, S);
  double alone = a == DDP_ALGO_NVLS_TREE ? nvls_stage_us(c, DDP_ALGO_NVLS, S) : 0;
  return link >= own && link >= alone ? 0 : own >= alone ? 1 : 2;
}

/* The transfer is the largest of affine terms between the breaks nvls_breaks lists (from index
 * @first of @breaks), so it bends only where the largest changes: an upper envelope of lines, whose
 * term changes at most twice in a segment and never returns, so bisection finds each change. */
static void
nvls_term_changes(const DdpCollective *c, DdpAlgorithm a, guint64 max_bytes, GArray *breaks, guint first)
{
  g_autoptr(GArray) ends = g_array_new(FALSE, FALSE, sizeof(guint64));
  guint64 one = 1;
  g_array_append_val(ends, one);
  g_array_append_vals(ends, &g_array_index(breaks, guint64, first), breaks->len - first);
  g_array_append_val(ends, max_bytes);
  g_array_sort(ends, compare_sizes);
  for (guint i = 0; i + 1 < ends->len; i++) {
    guint64 lo = g_array_index(ends, guint64, i), last = g_array_index(ends, guint64, i + 1) - 1;
    if (last <= lo)
      continue;
    int end_term = nvls_transfer_term(c, a, (double)last);
    while (nvls_transfer_term(c, a, (double)lo) != end_term) {
      int term = nvls_transfer_term(c, a, (double)lo);
      guint64 from = lo + 1, to = last;
      while (from < to) {
        guint64 mid = from + (to - from) / 2;
        if (nvls_transfer_term(c, a, (double)mid) != term)
          to = mid;
        else
          from = mid + 1;
      }
      append_break(breaks, (double)from, max_bytes);
      lo = from;
    }
  }
}

/* Where NVLS's or NVLSTree's time changes slope: the fill chunk S/nc and the chunk count
 * S/(nc·chunk) reach their bounds for each chunk size, the chunk doubles, and (physics_allreduce's
 * padding) the size below a doubling from which the padded time takes over — found by bisection:
 * between doublings the unpadded time rises with S; and where the largest transfer term changes
 * (nvls_term_changes). */
static void
nvls_breaks(const DdpCollective *c, DdpAlgorithm a, guint64 max_bytes, GArray *breaks)
{
  guint first = breaks->len;
  static const double chunks[] = { 16384, 32768, 65536, 131072 };
  double nc = (double)c->nvls_channels;
  for (gsize i = 0; i < G_N_ELEMENTS(chunks); i++) {
    append_break(breaks, nc * chunks[i], max_bytes);
    append_break(breaks, nc * (double)c->graph[DDP_ALGO_NVLS].channels * chunks[i], max_bytes);
  }
  double at[NVLS_DROPS_MAX];
  int steps = nvls_time_drops(c, a, at);
  for (int i = 0; i < steps; i++) {
    append_break(breaks, at[i], max_bytes);
    /* the least padded time from at[i] on, and the first size below at[i] (above the step before)
     * whose own time reaches it */
    double least = G_MAXDOUBLE;
    for (int j = i; j < steps; j++) {
      DdpCollectiveCost cost;
      physics_time(c, at[j], a, DDP_PROTO_SIMPLE, &cost);
      least = MIN(least, cost.time_us);
    }
    guint64 lo = i > 0 ? (guint64)ceil(at[i - 1]) : 1, hi = (guint64)ceil(at[i]);
    while (lo < hi) {
      guint64 mid = lo + (hi - lo) / 2;
      DdpCollectiveCost cost;
      physics_time(c, (double)mid, a, DDP_PROTO_SIMPLE, &cost);
      if (cost.time_us >= least)
        hi = mid;
      else
        lo = mid + 1;
    }
    append_break(breaks, (double)lo, max_bytes);
  }
  nvls_term_changes(c, a, max_bytes, breaks, first);
}

/* The sizes where a term of the nccl model changes slope: the channel count nc(S) steps at
 * multiples of nthreads · threadThreshold, and the chunk stops growing at step · nc · (n for a
 * ring); NVLS's in nvls_breaks.  Between them every pair's time is affine in S. */
static void
physics_breaks(const DdpCollective *c, guint64 max_bytes, GArray *breaks)
{
  for (DdpAlgorithm a = DDP_ALGO_RING; a < DDP_ALGO_COUNT; a++) {
    for (DdpProtocol p = DDP_PROTO_LL; p <= DDP_PROTO_SIMPLE; p++) {
      if (!allowed(c, a, p) || !c->allreduce[a][p].enabled)
        continue;
      if (a == DDP_ALGO_NVLS || a == DDP_ALGO_NVLS_TREE) {
        nvls_breaks(c, a, max_bytes, breaks);
        continue;
      }
      int NC = c->comm_channels;
      double per_channel = channel_bytes(c, a, p);
      double step = step_bytes[p] * (a == DDP_ALGO_RING ? (double)c->gpus : 1.0);
      for (int k = 1; k <= NC; k++) {
        append_break(breaks, k * per_channel, max_bytes);
        append_break(breaks, step * k, max_bytes);
      }
      /* Tree/LL128's chunk (tree_ll128_chunk_bytes) stops following the share and grows where a
       * channel's share reaches its thresholds, only once all NC channels run (below, a channel's
       * share is the constant nthreads · threshold, under every threshold) */
      if (a == DDP_ALGO_TREE && p == DDP_PROTO_LL128) {
        double first, second;
        tree_ll128_depths(c, &first, &second);
        for (double chunk = step_bytes[p]; chunk >= 1; chunk = floor(chunk / 2.0)) {
          append_break(breaks, NC * chunk, max_bytes);
          append_break(breaks, ceil(first) * NC * chunk, max_bytes);
          append_break(breaks, ceil(second) * NC * chunk, max_bytes);
        }
      }
    }
  }
}

/**
 * ddp_collective_choices:
 * Exact, by segments.  Every predicted time is affine in S between the sizes where a correction
 * steps: the powers of two (treeCorrectionFactor is indexed by log2(S/64)) and the ring plateau
 * threshold.  Inside such a segment the choice follows the lower envelope of at most eight lines
 * (Ring and Tree × 3 protocols, NVLS, NVLSTree), which
 * visits lines in order of falling slope and never returns to one it left; so "choice is still
 * the current one" holds on a prefix of the segment and bisection finds each change to the byte.
 */
GArray *
ddp_collective_choices(const DdpCollective *c, guint64 max_bytes)
{
  GArray *out = g_array_new(FALSE, FALSE, sizeof(DdpCollectiveChoice));
  g_autoptr(GArray) breaks = g_array_new(FALSE, FALSE, sizeof(guint64));
  for (guint64 b = 1; b <= max_bytes; b *= 2) {
    g_array_append_val(breaks, b);
    if (b > G_MAXUINT64 / 2)
      break;
  }
  guint64 plateau = (guint64)c->comm_channels * c->gpus * 64;
  if (c->cost_model != DDP_COST_ALPHA_BETA && c->nodes > 1 && plateau > 1 && plateau <= max_bytes)
    g_array_append_val(breaks, plateau);
  if (c->cost_model == DDP_COST_NCCL)
    physics_breaks(c, max_bytes, breaks);
  g_array_sort(breaks, compare_sizes);
  guint kept = 0;
  for (guint i = 0; i < breaks->len; i++)
    if (kept == 0 || g_array_index(breaks, guint64, i) != g_array_index(breaks, guint64, kept - 1))
      g_array_index(breaks, guint64, kept++) = g_array_index(breaks, guint64, i);
  g_array_set_size(breaks, kept);
  append_choice(out, c, 1);
  for (guint i = 0; i < breaks->len; i++) {
    guint64 start = g_array_index(breaks, guint64, i);
    guint64 last = i + 1 < breaks->len ? g_array_index(breaks, guint64, i + 1) - 1 : max_bytes;
    DdpCollectiveChoice current = g_array_index(out, DdpCollectiveChoice, out->len - 1);
    DdpCollectiveCost cost;
    ddp_collective_allreduce(c, start, &cost);
    if (!same_choice(&cost, &current)) {
      append_choice(out, c, start);
      current = g_array_index(out, DdpCollectiveChoice, out->len - 1);
    }
    for (guint64 lo = start;;) {
      ddp_collective_allreduce(c, last, &cost);
      if (same_choice(&cost, &current))
        break;
      lo = first_change(c, lo, last, &current);
      append_choice(out, c, lo);
      current = g_array_index(out, DdpCollectiveChoice, out->len - 1);
    }
  }
  return out;
}

void
ddp_collective_crossover(const DdpCollective *c, guint64 max_bytes, DdpCollectiveChoice *latency_optimal,
                         DdpCollectiveChoice *bandwidth_optimal, guint64 *crossover_bytes)
{
  /* latency-optimal: the choice for the smallest message (1 B: the size term is negligible) */
  DdpCollectiveCost small;
  ddp_collective_allreduce(c, 1, &small);
  /* bandwidth-optimal: highest algbw as S → ∞, i.e. the allowed pair with the largest table
   * algBw (tree corrections end at 512 MiB; the ring plateau only scales latency) */
  DdpCollectiveChoice best = { 0, small.algorithm, small.protocol };
  double best_bw = -1;
  DdpAlgorithm not_run = collnet_passed_over(c, (guint64)1 << 50);
  for (DdpAlgorithm a = DDP_ALGO_RING; a < DDP_ALGO_COUNT && c->gpus > 1; a++) {
    for (DdpProtocol p = DDP_PROTO_LL; p <= DDP_PROTO_SIMPLE; p++) {
      if (!allowed(c, a, p) || a == not_run)
        continue;
      DdpCollectiveCost big;
      /* 2^50 B: far past every correction, where algbw is the table's */
      if (ddp_collective_allreduce_with(c, (guint64)1 << 50, a, p, &big) && big.algbw_GBs > best_bw) {
        best_bw = big.algbw_GBs;
        best = (DdpCollectiveChoice){ 0, a, p };
      }
    }
  }
  if (latency_optimal)
    *latency_optimal = (DdpCollectiveChoice){ 1, small.algorithm, small.protocol };
  if (bandwidth_optimal)
    *bandwidth_optimal = best;
  if (crossover_bytes) {
    g_autoptr(GArray) choices = ddp_collective_choices(c, max_bytes);
    const DdpCollectiveChoice *last = &g_array_index(choices, DdpCollectiveChoice, choices->len - 1);
    *crossover_bytes = last->algorithm == best.algorithm && last->protocol == best.protocol ? last->from_bytes
                                                                                          : G_MAXUINT64;
  }
}

/* ---- names ---- */

static const char *const algorithm_names[DDP_ALGO_COUNT] = { "auto", "ring", "tree", "nvls", "nvlstree",
                                                             "collnetdirect", "collnetchain" };
static const char *const protocol_names[DDP_PROTO_COUNT] = { "auto", "LL", "LL128", "Simple" };

const char *
ddp_algorithm_name(DdpAlgorithm a)
{
  g_return_val_if_fail(a < DDP_ALGO_COUNT, "?");
  return algorithm_names[a];
}

const char *
ddp_protocol_name(DdpProtocol p)
{
  g_return_val_if_fail(p < DDP_PROTO_COUNT, "?");
  return protocol_names[p];
}

int
ddp_algorithm_parse(const char *name)
{
  for (int a = 0; a < DDP_ALGO_COUNT; a++)
    if (g_ascii_strcasecmp(name, algorithm_names[a]) == 0)
      return a;
  return -1;
}

int
ddp_protocol_parse(const char *name)
{
  for (int p = 0; p < DDP_PROTO_COUNT; p++)
    if (g_ascii_strcasecmp(name, protocol_names[p]) == 0)
      return p;
  return -1;
}

/* NCCL's parseList (tuning.cc) over names[1 .. count-1] (names[0] is "auto"): one name forces it,
 * a comma list enables only those, '^' disables the names after it; @ignored names are known to
 * NCCL and accepted, but stand for nothing here.  See ddp_protocol_set_parse. */
static gboolean
parse_nccl_list(const char *text, const char *const *names, int count, const char *const *ignored, int *forced,
                guint *disabled)
{
  g_autofree char *stripped = g_strstrip(g_strdup(text));
  gboolean exclude = stripped[0] == '^';
  g_auto(GStrv) items = g_strsplit(stripped + (exclude ? 1 : 0), ",", -1);
  int fields = 0;
  for (int i = 0; items[i]; i++)
    fields += *g_strstrip(items[i]) != '\0';
  guint listed = 0;
  int named = 0, single = -1;
  for (int i = 0; items[i]; i++) {
    const char *item = g_strstrip(items[i]);
    if (*item == '\0')
      continue;   /* strtok_r, which NCCL splits with, skips empty fields */
    int k = -1;
    for (int j = 0; j < count && k < 0; j++)
      if (g_ascii_strcasecmp(item, names[j]) == 0)
        k = j;
    gboolean known_elsewhere = FALSE;
    for (int j = 0; k < 0 && ignored && ignored[j]; j++)
      known_elsewhere = known_elsewhere || g_ascii_strcasecmp(item, ignored[j]) == 0;
    if (known_elsewhere) {
      named++;
      continue;
    }
    if (k < 0 || (k == 0 && (exclude || fields > 1)))   /* "auto" only alone */
      return FALSE;
    listed |= 1u << k;
    named++;
    single = k;
  }
  if (named == 0)
    return FALSE;
  if (!exclude && named == 1 && single >= 0) {   /* one name: forced, or auto */
    *forced = single;
    *disabled = 0;
    return TRUE;
  }
  guint all = 0;
  for (int k = 1; k < count; k++)
    all |= 1u << k;
  guint off = exclude ? listed & all : all & ~listed;
  if (off == all)
    return FALSE;
  int left = 0, last = 0;
  for (int k = 1; k < count; k++)
    if (!(off & (1u << k))) {
      left++;
      last = k;
    }
  *forced = left == 1 ? last : 0;
  *disabled = left == 1 ? 0 : off;
  return TRUE;
}

static char *
nccl_list_name(const char *const *names, int count, int forced, guint disabled)
{
  if (forced != 0 || disabled == 0)
    return g_strdup(names[forced]);
  GString *s = g_string_new(NULL);
  for (int k = 1; k < count; k++)
    if (!(disabled & (1u << k)))
      g_string_append_printf(s, "%s%s", s->len ? "," : "", names[k]);
  return g_string_free(s, FALSE);
}

gboolean
ddp_protocol_set_parse(const char *text, DdpProtocol *forced, guint *disabled)
{
  int f;
  guint d;
  if (!parse_nccl_list(text, protocol_names, DDP_PROTO_COUNT, NULL, &f, &d))
    return FALSE;
  *forced = (DdpProtocol)f;
  *disabled = d;
  return TRUE;
}

char *
ddp_protocol_set_name(DdpProtocol forced, guint disabled)
{
  return nccl_list_name(protocol_names, DDP_PROTO_COUNT, forced, disabled);
}

gboolean
ddp_algorithm_set_parse(const char *text, DdpAlgorithm *forced, guint *disabled)
{
  /* CollNet: NCCL's name before 2.14 for what CollNetDirect/CollNetChain split into; PAT: AllGather and
   * ReduceScatter only */
  static const char *const not_modelled[] = { "collnet", "pat", NULL };
  int f;
  guint d;
  if (!parse_nccl_list(text, algorithm_names, DDP_ALGO_COUNT, not_modelled, &f, &d))
    return FALSE;
  *forced = (DdpAlgorithm)f;
  *disabled = d;
  return TRUE;
}

char *
ddp_algorithm_set_name(DdpAlgorithm forced, guint disabled)
{
  return nccl_list_name(algorithm_names, DDP_ALGO_COUNT, forced, disabled);
}

/* ---- comparison with measured curves ---- */

static void
compare_curve_free(gpointer data)
{
  DdpCompareCurve *curve = data;
  g_free(curve->source);
  g_free(curve->system);
  g_free(curve->cluster);
  g_array_unref(curve->points);
  g_free(curve);
}

static double
median(GArray *values)
{
  if (values->len == 0)
    return NAN;
  g_array_sort(values, compare_doubles);
  guint n = values->len;
  double *v = (double *)values->data;
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static double
curve_median(const DdpCompareCurve *curve)
{
  g_autoptr(GArray) errors = g_array_new(FALSE, FALSE, sizeof(double));
  for (guint i = 0; i < curve->points->len; i++) {
    double e = fabs(g_array_index(curve->points, DdpComparePoint, i).busbw_error);
    g_array_append_val(errors, e);
  }
  return median(errors);
}

double
ddp_compare_median_abs_error(const GPtrArray *curves)
{
  g_autoptr(GArray) errors = g_array_new(FALSE, FALSE, sizeof(double));
  for (guint c = 0; c < curves->len; c++) {
    const DdpCompareCurve *curve = curves->pdata[c];
    for (guint i = 0; i < curve->points->len; i++) {
      double e = fabs(g_array_index(curve->points, DdpComparePoint, i).busbw_error);
      g_array_append_val(errors, e);
    }
  }
  return median(errors);
}

DdpSizeRegime
ddp_size_regime(guint64 bytes)
{
  return bytes < 64 * 1024 ? DDP_REGIME_LATENCY : bytes <= 16 * 1024 * 1024 ? DDP_REGIME_MID : DDP_REGIME_BANDWIDTH;
}

const char *
ddp_size_regime_name(DdpSizeRegime regime)
{
  static const char *const names[DDP_REGIME_COUNT] = { "< 64 KiB", "64 KiB - 16 MiB", "> 16 MiB", "all" };
  g_return_val_if_fail(regime < DDP_REGIME_COUNT, "?");
  return names[regime];
}

static void
stats_add(GArray *errors[DDP_REGIME_COUNT], const DdpCompareCurve *curve)
{
  for (guint i = 0; i < curve->points->len; i++) {
    const DdpComparePoint *pt = &g_array_index(curve->points, DdpComparePoint, i);
    double e = fabs(pt->busbw_error);
    g_array_append_val(errors[ddp_size_regime(pt->bytes)], e);
    g_array_append_val(errors[DDP_REGIME_ALL], e);
  }
}

static void
stats_finish(GArray *errors[DDP_REGIME_COUNT], DdpCompareStats out[DDP_REGIME_COUNT])
{
  for (int r = 0; r < DDP_REGIME_COUNT; r++) {
    out[r].points = errors[r]->len;
    out[r].median_abs_error = median(errors[r]);   /* sorts: the largest is last */
    out[r].max_abs_error = errors[r]->len ? g_array_index(errors[r], double, errors[r]->len - 1) : NAN;
    g_array_unref(errors[r]);
  }
}

void
ddp_compare_curve_stats(const DdpCompareCurve *curve, DdpCompareStats out[DDP_REGIME_COUNT])
{
  GArray *errors[DDP_REGIME_COUNT];
  for (int r = 0; r < DDP_REGIME_COUNT; r++)
    errors[r] = g_array_new(FALSE, FALSE, sizeof(double));
  stats_add(errors, curve);
  stats_finish(errors, out);
}

void
ddp_compare_stats(const GPtrArray *curves, DdpCompareStats out[DDP_REGIME_COUNT])
{
  GArray *errors[DDP_REGIME_COUNT];
  for (int r = 0; r < DDP_REGIME_COUNT; r++)
    errors[r] = g_array_new(FALSE, FALSE, sizeof(double));
  for (guint c = 0; c < curves->len; c++)
    stats_add(errors, curves->pdata[c]);
  stats_finish(errors, out);
}

/* A positive whole number of the CSV ("1024", "8"), decimal only (ranges.h): FALSE otherwise. */
static gboolean
parse_count(const char *text, guint64 *out)
{
  gint64 v;
  if (!ddp_parse_integer(text, &v) || v <= 0)
    return FALSE;
  *out = (guint64)v;
  return TRUE;
}

static gboolean
parse_positive(const char *text, double *out)
{
  double v;
  if (!ddp_parse_number(text, &v) || !(v > 0))
    return FALSE;
  *out = v;
  return TRUE;
}

typedef struct {
  const char *path;
  char *dir;
  GHashTable *models;   /* "cluster\tgpus" → DdpCollective, so a curve's cluster loads once */
  GPtrArray *clusters;  /* owned DdpCluster */
} CompareContext;

static DdpCollective *
compare_model(CompareContext *ctx, const char *cluster_name, guint64 gpus, guint per_process, guint line,
              GError **error)
{
  g_autofree char *key = g_strdup_printf("%s\t%" G_GUINT64_FORMAT "\t%u", cluster_name, gpus, per_process);
  DdpCollective *model = g_hash_table_lookup(ctx->models, key);
  if (model)
    return model;
  g_autofree char *where = strchr(cluster_name, '/') && !g_path_is_absolute(cluster_name)
                             ? g_build_filename(ctx->dir, cluster_name, NULL)
                             : g_strdup(cluster_name);
  g_autoptr(GError) local = NULL;
  DdpCluster *cluster = ddp_cluster_load(where, &local);
  if (cluster) {
    g_ptr_array_add(ctx->clusters, cluster);
    model = ddp_collective_new(cluster, gpus, &local);
  }
  if (!model) {
    g_set_error(error, DDP_COLLECTIVE_ERROR, DDP_COLLECTIVE_ERROR_CSV, "%s:%u: cluster: %s", ctx->path, line,
                local->message);
    return NULL;
  }
  ddp_collective_set_gpus_per_process(model, per_process);
  g_hash_table_insert(ctx->models, g_steal_pointer(&key), model);
  return model;
}

static GPtrArray *
compare_read(CompareContext *ctx, char **lines, GError **error)
{
  enum { COL_SOURCE, COL_SYSTEM, COL_CLUSTER, COL_GPUS, COL_BYTES, COL_TIME, COL_PER_PROCESS, N_COLS };
  static const char *const names[N_COLS] = { "source", "system", "cluster", "gpus", "bytes", "time_us",
                                             "gpus_per_process" };
  static const gboolean required[N_COLS] = { FALSE, FALSE, TRUE, TRUE, TRUE, TRUE, FALSE };
  int col[N_COLS];
  g_autoptr(GPtrArray) header = lines[0] ? ddp_csv_split(lines[0]) : NULL;
  if (!header) {
    g_set_error(error, DDP_COLLECTIVE_ERROR, DDP_COLLECTIVE_ERROR_CSV, "%s:1: no header line", ctx->path);
    return NULL;
  }
  for (int k = 0; k < N_COLS; k++) {
    col[k] = -1;
    for (guint i = 0; i < header->len; i++)
      if (strcmp(g_strstrip((char *)header->pdata[i]), names[k]) == 0)
        col[k] = (int)i;
    if (col[k] < 0 && required[k]) {
      g_set_error(error, DDP_COLLECTIVE_ERROR, DDP_COLLECTIVE_ERROR_CSV, "%s:1: no \"%s\" column", ctx->path,
                  names[k]);
      return NULL;
    }
  }

  g_autoptr(GPtrArray) curves = g_ptr_array_new_with_free_func(compare_curve_free);
  DdpCompareCurve *curve = NULL;
  for (guint line = 2; lines[line - 1]; line++) {
    const char *text = lines[line - 1];
    if (!*g_strstrip(lines[line - 1]))
      continue;
    g_autoptr(GPtrArray) f = ddp_csv_split(text);
    if (!f || f->len != header->len) {
      g_set_error(error, DDP_COLLECTIVE_ERROR, DDP_COLLECTIVE_ERROR_CSV, "%s:%u: expected %u fields", ctx->path,
                  line, header->len);
      return NULL;
    }
    const char *value[N_COLS];
    for (int k = 0; k < N_COLS; k++)
      value[k] = col[k] >= 0 ? f->pdata[col[k]] : "";
    DdpComparePoint point = { 0 };
    guint64 gpus;
    if (!parse_count(value[COL_GPUS], &gpus) || !parse_count(value[COL_BYTES], &point.bytes) ||
        !parse_positive(value[COL_TIME], &point.measured_us) || gpus > DDP_MAX_GPUS ||
        point.bytes > (guint64)DDP_RANGE_SWEEP_BYTES.max || point.measured_us > DDP_RANGE_LAYER_US.max) {
      g_set_error(error, DDP_COLLECTIVE_ERROR, DDP_COLLECTIVE_ERROR_CSV,
                  "%s:%u: gpus, bytes and time_us must be positive numbers (at most 2^24, 2^50 and 1e9)",
                  ctx->path, line);
      return NULL;
    }
    if (gpus < 2) {   /* one GPU's AllReduce moves nothing: no time to compare */
      g_set_error(error, DDP_COLLECTIVE_ERROR, DDP_COLLECTIVE_ERROR_CSV,
                  "%s:%u: gpus: an AllReduce to compare needs at least 2 GPUs (got %" G_GUINT64_FORMAT ")", ctx->path,
                  line, gpus);
      return NULL;
    }
    /* nccl-tests -g: optional, 1 where the column is absent or empty */
    guint64 per_process = 1;
    if (*value[COL_PER_PROCESS] && (!parse_count(value[COL_PER_PROCESS], &per_process) || per_process > gpus)) {
      g_set_error(error, DDP_COLLECTIVE_ERROR, DDP_COLLECTIVE_ERROR_CSV,
                  "%s:%u: gpus_per_process must be a whole number from 1 to gpus (got \"%s\")", ctx->path, line,
                  value[COL_PER_PROCESS]);
      return NULL;
    }
    DdpCollective *model = compare_model(ctx, value[COL_CLUSTER], gpus, (guint)per_process, line, error);
    if (!model)
      return NULL;
    if (!curve || curve->gpus != gpus || curve->gpus_per_process != per_process ||
        strcmp(curve->source, value[COL_SOURCE]) ||
        strcmp(curve->system, value[COL_SYSTEM]) || strcmp(curve->cluster, value[COL_CLUSTER])) {
      curve = g_new0(DdpCompareCurve, 1);
      curve->source = g_strdup(value[COL_SOURCE]);
      curve->system = g_strdup(value[COL_SYSTEM]);
      curve->cluster = g_strdup(value[COL_CLUSTER]);
      curve->gpus = gpus;
      curve->gpus_per_process = (guint)per_process;
      curve->nodes = ddp_collective_nodes(model);
      curve->points = g_array_new(FALSE, FALSE, sizeof(DdpComparePoint));
      g_ptr_array_add(curves, curve);
    }
    ddp_collective_allreduce(model, point.bytes, &point.predicted);
    double factor = allreduce_bus_factor(model);
    point.measured_busbw_GBs = (double)point.bytes / (1000.0 * point.measured_us) * factor;
    /* busbw ∝ 1/time, so predicted/measured busbw = measured/predicted time */
    point.busbw_error = point.predicted.time_us > 0 ? point.measured_us / point.predicted.time_us - 1.0 : NAN;
    g_array_append_val(curve->points, point);
  }
  if (curves->len == 0) {
    g_set_error(error, DDP_COLLECTIVE_ERROR, DDP_COLLECTIVE_ERROR_CSV, "%s: no data rows", ctx->path);
    return NULL;
  }
  for (guint i = 0; i < curves->len; i++) {
    DdpCompareCurve *cv = curves->pdata[i];
    cv->median_abs_error = curve_median(cv);
  }
  return g_steal_pointer(&curves);
}

GPtrArray *
ddp_collective_compare_csv(const char *path, GError **error)
{
  g_autofree char *text = NULL;
  g_autoptr(GError) local = NULL;
  if (!ddp_range_read_file(path, &text, NULL, &local)) {   /* a regular file, size-capped, no NUL */
    g_set_error(error, DDP_COLLECTIVE_ERROR, DDP_COLLECTIVE_ERROR_CSV, "%s", local->message);
    return NULL;
  }
  g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
  CompareContext ctx = {
    .path = path,
    .dir = g_path_get_dirname(path),
    .models = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, (GDestroyNotify)ddp_collective_free),
    .clusters = g_ptr_array_new_with_free_func((GDestroyNotify)ddp_cluster_free),
  };
  GPtrArray *curves = compare_read(&ctx, lines, error);
  g_free(ctx.dir);
  g_hash_table_unref(ctx.models);
  g_ptr_array_unref(ctx.clusters);
  return curves;
}

/* ---- AllGather and ReduceScatter (docs/collective.md §12) ----
 *
 * Derived from the AllReduce building blocks above, not from a model of their own, so that the
 * AllReduce path is untouched and every calibration of the links carries over:
 *  ring — NCCL's AllGather and ReduceScatter are one ring pass: n-1 steps, each link carrying
 *    (n-1)/n of the total buffer S (src/device/all_gather.h, reduce_scatter.h); AllReduce is two
 *    such passes.  So the busbw peak is AllReduce's (physics_peak: twice its algbw), the tuner's
 *    algBw is busBw · n/nsteps with nsteps = n-1 (tuning.cc ncclTuningGetNsteps), and the step
 *    latencies are half of AllReduce's ring (nsteps n-1 against 2(n-1), of which nodes-1 against
 *    2(nodes-1) cross the network: tune_model's sum halves exactly), the base latency once.  The
 *    "plateau effect of ring" factor is AllReduce-only in ncclTopoGetAlgoTime and is not applied.
 *    The pipeline fill and the channels running are AllReduce's (ring_fill_hops, running_channels).
 *  NVLS — one node only (NVLS AllGather/ReduceScatter across nodes need CollNet, tuning/nvls.cc):
 *    busBw per channel = bwIntra · nvlsEfficiency · (nCh-1)/nCh · (ppn-1)/ppn (no ×2: nothing
 *    overlaps a second pass), the NVLS latency of AllReduce (hwLat[NVLink][NVLS]).
 *  Tree and NVLSTree are AllReduce-only ("NVLSTree is only supported for AR"), and PAT (AllGather/
 *  ReduceScatter with one GPU per node, NCCL ≥ 2.23) is not modelled: those cases take the ring.
 *  alpha-beta — t = (n-1)/n · S/B + (n-1)·α (Thakur, Rabenseifner & Gropp 2005).
 * ReduceScatter moves and reduces what AllGather moves; NCCL's tables are the same for both, so
 * are the costs here (the reduction runs at memory speed, far above the links). */

/* The NVLS AllGather/ReduceScatter busbw of this communicator (0: no NVLS here). */
static double
nvls_gather_busbw(const DdpCollective *c)
{
  const Graph *g = &c->graph[DDP_ALGO_NVLS];
  if (c->nodes != 1 || g->channels < 2 || c->cost_model == DDP_COST_ALPHA_BETA)
    return 0;
  double ppn = (double)c->ppn;
  return g->channels * g->bw_intra * nvls_efficiency[arch_index(c->sm_arch)] * (g->channels - 1) / g->channels *
         (ppn - 1) / ppn;
}

/* One ring or NVLS AllGather under the tuner or the nccl model, without the host floor; FALSE
 * when @a × @p is not enabled here. */
static gboolean
gather_with(const DdpCollective *c, guint64 bytes, DdpAlgorithm a, DdpProtocol p, DdpCollectiveCost *out)
{
  double S = (double)bytes, n = (double)c->gpus;
  *out = (DdpCollectiveCost){ .algorithm = a, .protocol = p };
  if (a == DDP_ALGO_NVLS) {
    double busbw = nvls_gather_busbw(c);
    if (p != DDP_PROTO_SIMPLE || busbw <= 0)
      return FALSE;
    double algbw = busbw * n / (n - 1);
    out->latency_us = c->launch_us + c->allreduce[DDP_ALGO_NVLS][p].latency_us;
    out->transfer_us = S / (1000.0 * algbw);
    if (c->cost_model == DDP_COST_NCCL) {
      /* into the switch and out of it, one NVLS chunk per channel */
      double chunk = MIN((double)NVLS_CHUNK_BYTES, S / c->nvls_channels);
      out->fill_us = chunk / (1000.0 * busbw / c->nvls_channels);
      out->channels = c->nvls_channels;
    }
    out->time_us = out->latency_us + out->transfer_us + out->fill_us;
    return TRUE;
  }
  const Tuning *t = &c->allreduce[DDP_ALGO_RING][p];
  if (!t->enabled)
    return FALSE;
  double base = base_latency_us[DDP_ALGO_RING][p];
  double lat = base + (t->latency_us - base) / 2.0;
  if (c->cost_model == DDP_COST_NCCL_TUNER) {
    out->latency_us = c->launch_us + lat;
    out->transfer_us = S / (1000.0 * 2.0 * t->algbw_GBs);
    out->time_us = out->latency_us + out->transfer_us;
    return TRUE;
  }
  /* the nccl model: as physics_allreduce for the ring, with one pass instead of two */
  int NC = c->comm_channels;
  double nc = running_channels(c, DDP_ALGO_RING, p, S, NC);
  double hop_intra, hop_net;
  double algbw = 2.0 * physics_peak(c, DDP_ALGO_RING, p, NC, &hop_intra, &hop_net) * nc / NC;
  double chunk = MIN(step_bytes[p], S / (nc * n));
  double intra_hops, net_hops;
  ring_fill_hops(c, &intra_hops, &net_hops);
  out->fill_us = fill_us(chunk, intra_hops, hop_intra, net_hops, hop_net);
  double hop_latency = c->inter_latency_us * (c->net_flush && p == DDP_PROTO_SIMPLE ? 2.0 : 1.0);
  out->latency_us = c->launch_us + lat + network_hops(c, DDP_ALGO_RING) / 2.0 * hop_latency;
  out->transfer_us = S / (1000.0 * algbw);
  out->channels = (int)floor(nc);
  out->time_us = out->latency_us + out->transfer_us + out->fill_us;
  return TRUE;
}

/* topoGetAlgoInfo for AllGather/ReduceScatter: the least time among ring × LL/LL128/Simple and
 * NVLS/Simple that the settings allow (a forced Tree or NVLSTree counts as auto: file comment). */
static void
gather_cost(const DdpCollective *c, DdpCollectiveOp op, guint64 bytes, DdpCollectiveCost *out)
{
  zero_cost(out);
  if (c->gpus == 1 || measured_cost(c, op, bytes, out))
    return;
  double n = (double)c->gpus;
  if (c->cost_model == DDP_COST_ALPHA_BETA) {
    out->latency_us = (n - 1) * c->ab_alpha_us;
    out->time_us = out->latency_us + (n - 1) / n * (double)bytes / (1000.0 * c->ab_bw_GBs);
  } else {
    gboolean any_algorithm = c->algorithm != DDP_ALGO_RING && c->algorithm != DDP_ALGO_NVLS;
    static const DdpAlgorithm order[] = { DDP_ALGO_RING, DDP_ALGO_NVLS };
    /* an NCCL_ALGO list that leaves neither of this op's algorithms is taken as auto, as a forced
     * Tree or NVLSTree is (§12) */
    guint off = c->disabled_algorithms;
    if ((off & (1u << DDP_ALGO_RING)) && (off & (1u << DDP_ALGO_NVLS)))
      off = 0;
    gboolean found = FALSE;
    for (gsize i = 0; i < G_N_ELEMENTS(order); i++) {
      if ((!any_algorithm && c->algorithm != order[i]) || (off & (1u << order[i])))
        continue;
      for (DdpProtocol p = DDP_PROTO_LL; p <= DDP_PROTO_SIMPLE; p++) {
        DdpCollectiveCost cost;
        if (!protocol_allowed(c, p))
          continue;
        if (gather_with(c, bytes, order[i], p, &cost) && (!found || cost.time_us < out->time_us)) {
          *out = cost;
          found = TRUE;
        }
      }
    }
    if (!found)   /* a forced NVLS where there is none, or NVLS with a forced LL protocol: the ring */
      for (DdpProtocol p = DDP_PROTO_LL; p <= DDP_PROTO_SIMPLE; p++) {
        DdpCollectiveCost cost;
        if (gather_with(c, bytes, DDP_ALGO_RING, p, &cost) && (!found || cost.time_us < out->time_us)) {
          *out = cost;
          found = TRUE;
        }
      }
    g_assert(found);   /* Ring/Simple is enabled on every fabric */
    apply_host_floor(c, out);
  }
  finish_cost(bytes, ddp_collective_op_bus_factor(op, c->gpus), out);
}

void
ddp_collective_allgather(const DdpCollective *c, guint64 bytes, DdpCollectiveCost *out)
{
  gather_cost(c, DDP_OP_ALL_GATHER, bytes, out);
}

void
ddp_collective_reduce_scatter(const DdpCollective *c, guint64 bytes, DdpCollectiveCost *out)
{
  gather_cost(c, DDP_OP_REDUCE_SCATTER, bytes, out);
}

void
ddp_collective_cost(const DdpCollective *c, DdpCollectiveOp op, guint64 bytes, DdpCollectiveCost *out)
{
  switch (op) {
  case DDP_OP_ALL_REDUCE:
    ddp_collective_allreduce(c, bytes, out);
    return;
  case DDP_OP_BROADCAST:
    ddp_collective_broadcast(c, bytes, out);
    return;
  case DDP_OP_ALL_GATHER:
  case DDP_OP_REDUCE_SCATTER:
    gather_cost(c, op, bytes, out);
    return;
  case DDP_OP_COUNT:
    break;
  }
  g_return_if_reached();
}

static const char *const op_names[DDP_OP_COUNT] = { "all_reduce", "all_gather", "reduce_scatter", "broadcast" };

const char *
ddp_collective_op_name(DdpCollectiveOp op)
{
  g_return_val_if_fail(op < DDP_OP_COUNT, "?");
  return op_names[op];
}

int
ddp_collective_op_parse(const char *name)
{
  for (int i = 0; i < DDP_OP_COUNT; i++) {
    if (g_ascii_strcasecmp(name, op_names[i]) == 0)
      return i;
    g_auto(GStrv) parts = g_strsplit(op_names[i], "_", -1);
    g_autofree char *joined = g_strjoinv("", parts);
    if (g_ascii_strcasecmp(name, joined) == 0)
      return i;
  }
  return -1;
}

double
ddp_collective_op_bus_factor(DdpCollectiveOp op, guint64 gpus)
{
  double n = (double)gpus;
  switch (op) {
  case DDP_OP_ALL_REDUCE:
    return 2.0 * (n - 1) / n;
  case DDP_OP_ALL_GATHER:
  case DDP_OP_REDUCE_SCATTER:
    return (n - 1) / n;
  case DDP_OP_BROADCAST:
  case DDP_OP_COUNT:
    break;
  }
  return 1.0;
}
