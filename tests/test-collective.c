/* Tests for the collective cost models (src/collective.c; derivations in docs/collective.md):
 * the alpha-beta closed forms, NCCL's tuning table (docs/model.md §2.1–2.3, tuning.cc), the emulated
 * topology search (§2.5, search.cc), the size-dependent corrections, NVLS and NVLSTree (§2.2–2.4:
 * graph, tuning entries, enablement, the nccl.nvls key), auto's choice and crossover on the shipped
 * dgx-a100 and dgx-h100, Broadcast, errors, and the validation against published nccl-tests
 * curves (tests/data/allreduce-public.csv).  Every expected number is derived by hand in
 * the comment above its assertion.
 *
 * Unit conventions used in the derivations: GB/s = 1000 B/µs, so S bytes over B GB/s take
 * S / (1000·B) µs. */
#include "collective.h"
#include "datadir.h"
#include "fixture.h"
#include "keyfile.h"

#include <glib/gstdio.h>
#include <math.h>
#include <string.h>

/* A cluster filled by hand: NVSwitch nodes of @ppn GPUs with @intra_GBs per GPU (raw, one way,
 * 0.7 µs per hop), @nics × @nic_Gbps InfiniBand per node (2 µs per hop), NCCL's tuning model
 * (nccl-tuner: these tests check NCCL's own table; the nccl model has its own fixture, physics()),
 * auto, no launch overhead (so NCCL's own numbers show through), NVLS off (nccl.nvls FALSE: the
 * ring/tree tests below predate NVLS; the NVLS tests turn it on). */
static DdpCluster *
cluster_new(int sm_arch, int ppn, double intra_GBs, int nics, double nic_Gbps)
{
  DdpCluster *c = g_new0(DdpCluster, 1);
  c->name = g_strdup("test");
  c->gpu.sm_arch = sm_arch;
  c->gpus_per_node = ppn;
  c->intra.fabric = DDP_INTRA_NVSWITCH;
  c->intra.bandwidth_GBs = intra_GBs;
  c->intra.latency_us = 0.7;
  c->inter.fabric = DDP_INTER_IB;
  c->inter.nics_per_node = nics;
  c->inter.nic_bandwidth_Gbps = nic_Gbps;
  c->inter.latency_us = 2.0;
  c->inter.oversubscription = 1.0;
  c->inter.rail_optimized = TRUE;
  c->nccl.cost_model = DDP_COST_NCCL_TUNER;
  return c;
}

/* DGX A100 / H100 / HGX B200 fabrics (datasheets: 300 / 450 / 900 GB/s NVLink per GPU per
 * direction; 8 NICs of 200 / 400 / 400 Gb/s). */
static DdpCluster *
a100(void)
{
  return cluster_new(80, 8, 300, 8, 200);
}

static DdpCluster *
h100(void)
{
  return cluster_new(90, 8, 450, 8, 400);
}

static DdpCluster *
b200(void)
{
  return cluster_new(100, 8, 900, 8, 400);
}

/* The alpha-beta fixture: 4 GPUs per node at 100 GB/s and 5 µs, one 100 Gb/s NIC per node at
 * 10 µs — the per-GPU share across nodes is 100/8/4 = 3.125 GB/s. */
static DdpCluster *
ab4(void)
{
  DdpCluster *c = cluster_new(80, 4, 100, 1, 100);
  c->intra.latency_us = 5;
  c->inter.latency_us = 10;
  c->nccl.cost_model = DDP_COST_ALPHA_BETA;
  return c;
}

static DdpCollective *
model(const DdpCluster *cluster, guint64 gpus)
{
  g_autoptr(GError) error = NULL;
  DdpCollective *c = ddp_collective_new(cluster, gpus, &error);
  g_assert_no_error(error);
  return c;
}

static double
tuned_latency(const DdpCollective *c, DdpAlgorithm a, DdpProtocol p)
{
  DdpCollectiveTuning t;
  ddp_collective_tuning(c, a, p, &t);
  g_assert_true(t.enabled);
  return t.latency_us;
}

static double
tuned_algbw(const DdpCollective *c, DdpAlgorithm a, DdpProtocol p)
{
  DdpCollectiveTuning t;
  ddp_collective_tuning(c, a, p, &t);
  g_assert_true(t.enabled);
  return t.algbw_GBs;
}

static double
time_with(const DdpCollective *c, guint64 bytes, DdpAlgorithm a, DdpProtocol p)
{
  DdpCollectiveCost cost;
  g_assert_true(ddp_collective_allreduce_with(c, bytes, a, p, &cost));
  return cost.time_us;
}

static void
assert_graph(const DdpCollective *c, DdpAlgorithm a, int channels, double intra, double inter)
{
  DdpCollectiveGraph g;
  ddp_collective_graph(c, a, &g);
  g_assert_cmpint(g.channels, ==, channels);
  g_assert_cmpfloat_with_epsilon(g.bw_intra_GBs, intra, 1e-9);
  g_assert_cmpfloat_with_epsilon(g.bw_inter_GBs, inter, 1e-9);
}

static void
test_names(void)
{
  for (int a = 0; a < DDP_ALGO_COUNT; a++)
    g_assert_cmpint(ddp_algorithm_parse(ddp_algorithm_name(a)), ==, a);
  for (int p = 0; p < DDP_PROTO_COUNT; p++)
    g_assert_cmpint(ddp_protocol_parse(ddp_protocol_name(p)), ==, p);
  g_assert_cmpstr(ddp_protocol_name(DDP_PROTO_LL128), ==, "LL128");
  g_assert_cmpint(ddp_protocol_parse("simple"), ==, DDP_PROTO_SIMPLE);
  g_assert_cmpint(ddp_algorithm_parse("RING"), ==, DDP_ALGO_RING);
  g_assert_cmpint(ddp_algorithm_parse("NVLS"), ==, DDP_ALGO_NVLS);
  g_assert_cmpint(ddp_algorithm_parse("NVLSTree"), ==, DDP_ALGO_NVLS_TREE);   /* NCCL_ALGO's spelling */
  g_assert_cmpstr(ddp_algorithm_name(DDP_ALGO_NVLS_TREE), ==, "nvlstree");
  g_assert_cmpint(ddp_algorithm_parse("collnet"), ==, -1);
  g_assert_cmpint(ddp_protocol_parse("LL64"), ==, -1);
}

/* NCCL_PROTO's lists (tuning.cc parseList): one name forces it, a list enables only those, '^'
 * disables the names after it; a list that leaves one protocol forces it, one that leaves none or
 * names something unknown is refused. */
static void
test_protocol_sets(void)
{
  static const struct { const char *text; DdpProtocol forced; guint disabled; const char *name; } ok[] = {
    { "auto", DDP_PROTO_AUTO, 0, "auto" },
    { "LL128", DDP_PROTO_LL128, 0, "LL128" },
    { "Simple,LL128", DDP_PROTO_AUTO, 1u << DDP_PROTO_LL, "LL128,Simple" },
    { " simple , ll128 ", DDP_PROTO_AUTO, 1u << DDP_PROTO_LL, "LL128,Simple" },
    { "^LL", DDP_PROTO_AUTO, 1u << DDP_PROTO_LL, "LL128,Simple" },
    { "^LL,LL128", DDP_PROTO_SIMPLE, 0, "Simple" },
    { "LL,LL128,Simple", DDP_PROTO_AUTO, 0, "auto" },
    { "LL128,", DDP_PROTO_LL128, 0, "LL128" },
    { "Simple,,LL128", DDP_PROTO_AUTO, 1u << DDP_PROTO_LL, "LL128,Simple" },
  };
  for (gsize i = 0; i < G_N_ELEMENTS(ok); i++) {
    DdpProtocol forced = DDP_PROTO_COUNT;
    guint disabled = 99;
    g_assert_true(ddp_protocol_set_parse(ok[i].text, &forced, &disabled));
    g_assert_cmpint(forced, ==, ok[i].forced);
    g_assert_cmpuint(disabled, ==, ok[i].disabled);
    g_autofree char *name = ddp_protocol_set_name(forced, disabled);
    g_assert_cmpstr(name, ==, ok[i].name);
  }
  static const char *const bad[] = { "", "^", ",", "LL64", "^LL,LL128,Simple", "auto,LL", "^auto" };
  for (gsize i = 0; i < G_N_ELEMENTS(bad); i++) {
    DdpProtocol forced = DDP_PROTO_AUTO;
    guint disabled = 0;
    g_assert_false(ddp_protocol_set_parse(bad[i], &forced, &disabled));
  }
}

/* At every size from 8 B to 4 GiB, @listed (a cluster with an NCCL list) answers with the faster of
 * @x and @y (the same cluster with each listed choice forced): its time and its algorithm × protocol. */
static void
assert_faster_of(const DdpCollective *listed, const DdpCollective *x, const DdpCollective *y)
{
  for (guint64 bytes = 8; bytes <= ((guint64)1 << 32); bytes *= 4) {
    DdpCollectiveCost cost, a, b;
    ddp_collective_allreduce(listed, bytes, &cost);
    ddp_collective_allreduce(x, bytes, &a);
    ddp_collective_allreduce(y, bytes, &b);
    const DdpCollectiveCost *faster = a.time_us <= b.time_us ? &a : &b;
    g_assert_cmpfloat_with_epsilon(cost.time_us, faster->time_us, 1e-9 * cost.time_us);
    g_assert_cmpint(cost.algorithm, ==, faster->algorithm);
    g_assert_cmpint(cost.protocol, ==, faster->protocol);
  }
}

/* NCCL_ALGO's lists, as NCCL_PROTO's; the names NCCL knows and ddpsim does not model (PAT, and
 * CollNet, the name before CollNetDirect/CollNetChain) are accepted and stand for nothing. */
static void
test_algorithm_sets(void)
{
  static const struct { const char *text; DdpAlgorithm forced; guint disabled; const char *name; } ok[] = {
    { "auto", DDP_ALGO_AUTO, 0, "auto" },
    { "NVLSTree", DDP_ALGO_NVLS_TREE, 0, "nvlstree" },
    { "Ring,Tree", DDP_ALGO_AUTO,
      (1u << DDP_ALGO_NVLS) | (1u << DDP_ALGO_NVLS_TREE) | (1u << DDP_ALGO_COLLNET_DIRECT) | (1u << DDP_ALGO_COLLNET_CHAIN),
      "ring,tree" },
    { "^NVLS,NVLSTree", DDP_ALGO_AUTO, (1u << DDP_ALGO_NVLS) | (1u << DDP_ALGO_NVLS_TREE), "ring,tree,collnetdirect,collnetchain" },
    { "Ring,CollnetDirect", DDP_ALGO_AUTO,
      (1u << DDP_ALGO_TREE) | (1u << DDP_ALGO_NVLS) | (1u << DDP_ALGO_NVLS_TREE) | (1u << DDP_ALGO_COLLNET_CHAIN),
      "ring,collnetdirect" },
    { "CollNetChain", DDP_ALGO_COLLNET_CHAIN, 0, "collnetchain" },
    { "Ring,CollNet", DDP_ALGO_RING, 0, "ring" },
    { "^PAT", DDP_ALGO_AUTO, 0, "auto" },
  };
  for (gsize i = 0; i < G_N_ELEMENTS(ok); i++) {
    DdpAlgorithm forced = DDP_ALGO_COUNT;
    guint disabled = 99;
    g_assert_true(ddp_algorithm_set_parse(ok[i].text, &forced, &disabled));
    g_assert_cmpint(forced, ==, ok[i].forced);
    g_assert_cmpuint(disabled, ==, ok[i].disabled);
    g_autofree char *name = ddp_algorithm_set_name(forced, disabled);
    g_assert_cmpstr(name, ==, ok[i].name);
  }
  static const char *const bad[] = { "", "CollNet", "Ring,Butterfly",
                                     "^Ring,Tree,NVLS,NVLSTree,CollNetDirect,CollNetChain", "auto,ring" };
  for (gsize i = 0; i < G_N_ELEMENTS(bad); i++) {
    DdpAlgorithm forced = DDP_ALGO_AUTO;
    guint disabled = 0;
    g_assert_false(ddp_algorithm_set_parse(bad[i], &forced, &disabled));
  }
}

/* An NCCL_ALGO list restricts auto's choice: two DGX H100 nodes run NVLSTree at 1 GiB; with
 * NCCL_ALGO=Ring,Tree the answer is the faster of the runs forced to Ring and to Tree, at every size. */
static void
test_algorithm_list_choice(void)
{
  g_autoptr(DdpCluster) cluster = fixture_cluster("dgx-h100");
  g_autoptr(DdpCollective) all = model(cluster, 16);
  DdpCollectiveCost cost;
  ddp_collective_allreduce(all, (guint64)1 << 30, &cost);
  g_assert_cmpint(cost.algorithm, ==, DDP_ALGO_NVLS_TREE);
  g_assert_true(ddp_algorithm_set_parse("Ring,Tree", &cluster->nccl.algorithm, &cluster->nccl.disabled_algorithms));
  g_autoptr(DdpCollective) listed = model(cluster, 16);
  cluster->nccl.disabled_algorithms = 0;
  cluster->nccl.algorithm = DDP_ALGO_RING;
  g_autoptr(DdpCollective) ring = model(cluster, 16);
  cluster->nccl.algorithm = DDP_ALGO_TREE;
  g_autoptr(DdpCollective) tree = model(cluster, 16);
  assert_faster_of(listed, ring, tree);
}

/* A list restricts auto's choice and changes nothing else: two DGX H100 nodes at 8 B run Tree/LL
 * by default; with NCCL_PROTO=Simple,LL128 the answer is the faster of the runs forced to LL128 and
 * to Simple, at every size. */
static void
test_protocol_list_choice(void)
{
  g_autoptr(DdpCluster) cluster = fixture_cluster("dgx-h100");
  g_autoptr(DdpCollective) all = model(cluster, 16);
  DdpCollectiveCost cost;
  ddp_collective_allreduce(all, 8, &cost);
  g_assert_cmpint(cost.protocol, ==, DDP_PROTO_LL);
  g_assert_true(ddp_protocol_set_parse("Simple,LL128", &cluster->nccl.protocol, &cluster->nccl.disabled_protocols));
  g_autoptr(DdpCollective) listed = model(cluster, 16);
  cluster->nccl.disabled_protocols = 0;
  cluster->nccl.protocol = DDP_PROTO_LL128;
  g_autoptr(DdpCollective) ll128 = model(cluster, 16);
  cluster->nccl.protocol = DDP_PROTO_SIMPLE;
  g_autoptr(DdpCollective) simple = model(cluster, 16);
  assert_faster_of(listed, ll128, simple);
}

/* Acceptance: with protocol effects off the ring costs exactly 2(N-1)/N·M/B + 2(N-1)·α, B the
 * slowest link crossed (intra on one node, else min(intra, per-GPU inter share)), α the slowest
 * hop's latency. */
static void
test_alpha_beta_ring(void)
{
  static const struct {
    guint64 gpus, bytes;
    double expected_us;
  } cases[] = {
    /* one node, N=2: 2·1/2·1 048 576/100 000 + 2·1·5 = 10.48576 + 10 */
    { 2, 1048576, 20.48576 },
    /* N=3 (part of a node): 2·2/3·3 000/100 000 + 2·2·5 = 0.04 + 20 */
    { 3, 3000, 20.04 },
    /* N=4, the DDP fixture's model: 2·3/4·8 396 800/100 000 + 2·3·5 = 125.952 + 30 */
    { 4, 8396800, 155.952 },
    /* N=8 = 2 nodes: B = min(100, 3.125) = 3.125 GB/s, α = max(5, 10) = 10:
     * 2·7/8·1 000 000/3 125 + 2·7·10 = 560 + 140 */
    { 8, 1000000, 700.0 },
    /* N=32 = 8 nodes: 2·31/32·1 000 000/3 125 + 2·31·10 = 620 + 620 */
    { 32, 1000000, 1240.0 },
  };
  g_autoptr(DdpCluster) cluster = ab4();
  cluster->nccl.algorithm = DDP_ALGO_RING;
  for (gsize i = 0; i < G_N_ELEMENTS(cases); i++) {
    g_autoptr(DdpCollective) c = model(cluster, cases[i].gpus);
    DdpCollectiveCost cost;
    ddp_collective_allreduce(c, cases[i].bytes, &cost);
    g_assert_cmpfloat_with_epsilon(cost.time_us, cases[i].expected_us, 1e-9);
    g_assert_cmpint(cost.algorithm, ==, DDP_ALGO_RING);
    g_assert_cmpint(cost.protocol, ==, DDP_PROTO_SIMPLE);
    /* busbw = algbw · 2(N-1)/N, algbw = M / t */
    double n = (double)cases[i].gpus;
    g_assert_cmpfloat_with_epsilon(cost.busbw_GBs, cases[i].bytes / (1000.0 * cases[i].expected_us) * 2 * (n - 1) / n,
                                   1e-9);
  }
  /* a large buffer: busbw → B.  N=4, M = 2^40: t = 1.5·M/1e5 + 30 µs, busbw = 1.5·M/1000/t =
   * 100·(1 - 30/t) = 100·(1 - 1.8·10^-6) */
  g_autoptr(DdpCollective) c = model(cluster, 4);
  DdpCollectiveCost cost;
  ddp_collective_allreduce(c, (guint64)1 << 40, &cost);
  g_assert_cmpfloat_with_epsilon(cost.busbw_GBs, 100.0, 1e-3);
}

/* Alpha-beta tree: 2·M/B + 2·((ppn-1)·α_intra + ⌊log2 nodes⌋·α_inter). */
static void
test_alpha_beta_tree(void)
{
  g_autoptr(DdpCluster) cluster = ab4();
  g_autoptr(DdpCollective) c8 = model(cluster, 8);
  /* 2 nodes: 2·1 000 000/3 125 + 2·(3·5 + 1·10) = 640 + 50 */
  g_assert_cmpfloat_with_epsilon(time_with(c8, 1000000, DDP_ALGO_TREE, DDP_PROTO_SIMPLE), 690.0, 1e-9);
  /* 8 nodes: latency 2·(3·5 + 3·10) = 90, against the ring's 2·31·10 = 620: at 1 kB auto takes the
   * tree (640·10^-3 + 90 = 90.64 vs 620.62) */
  g_autoptr(DdpCollective) c32 = model(cluster, 32);
  DdpCollectiveCost cost;
  ddp_collective_allreduce(c32, 1000, &cost);
  g_assert_cmpint(cost.algorithm, ==, DDP_ALGO_TREE);
  g_assert_cmpfloat_with_epsilon(cost.time_us, 2.0 * 1000 / 3125 + 90, 1e-9);
  g_assert_cmpfloat_with_epsilon(cost.latency_us, 90.0, 1e-9);
  /* on one node the tree's latency equals the ring's (2·3·5) and its bandwidth term is larger:
   * auto is the ring at every size */
  g_autoptr(DdpCollective) c4 = model(cluster, 4);
  ddp_collective_allreduce(c4, 1, &cost);
  g_assert_cmpint(cost.algorithm, ==, DDP_ALGO_RING);
}

/* NCCL's latency table on one 8-GPU NVLink node (docs/model.md §2.3 worked example):
 *   Ring:  base + 2(n-1)·hwLat[NVLINK][Ring]: LL 6.6 + 14·0.6 = 15.0, LL128 14 + 14·1.9 = 40.6,
 *          Simple 8.4 + 14·3.4 = 56.0
 *   Tree:  base + 2·(ppn-1)·hwLat[NVLINK][Tree]: LL 6.8 + 14·0.6 = 15.2, LL128 14 + 14·1.25 = 31.5,
 *          Simple 8.4 + 14·4.0 = 64.4 */
static void
test_nccl_latency_one_node(void)
{
  g_autoptr(DdpCluster) cluster = a100();
  g_autoptr(DdpCollective) c = model(cluster, 8);
  g_assert_cmpfloat_with_epsilon(tuned_latency(c, DDP_ALGO_RING, DDP_PROTO_LL), 15.0, 1e-9);
  g_assert_cmpfloat_with_epsilon(tuned_latency(c, DDP_ALGO_RING, DDP_PROTO_LL128), 40.6, 1e-9);
  g_assert_cmpfloat_with_epsilon(tuned_latency(c, DDP_ALGO_RING, DDP_PROTO_SIMPLE), 56.0, 1e-9);
  g_assert_cmpfloat_with_epsilon(tuned_latency(c, DDP_ALGO_TREE, DDP_PROTO_LL), 15.2, 1e-9);
  g_assert_cmpfloat_with_epsilon(tuned_latency(c, DDP_ALGO_TREE, DDP_PROTO_LL128), 31.5, 1e-9);
  g_assert_cmpfloat_with_epsilon(tuned_latency(c, DDP_ALGO_TREE, DDP_PROTO_SIMPLE), 64.4, 1e-9);
  /* PCIe inside the node: the PCI row, and no LL128 (NCCL enables it on NVLink only).
   * Ring Simple 8.4 + 14·5.7 = 88.2 */
  cluster->intra.fabric = DDP_INTRA_PCIE;
  g_autoptr(DdpCollective) pci = model(cluster, 8);
  g_assert_cmpfloat_with_epsilon(tuned_latency(pci, DDP_ALGO_RING, DDP_PROTO_SIMPLE), 88.2, 1e-9);
  DdpCollectiveTuning t;
  ddp_collective_tuning(pci, DDP_ALGO_RING, DDP_PROTO_LL128, &t);
  g_assert_false(t.enabled);
  DdpCollectiveCost cost;
  g_assert_false(ddp_collective_allreduce_with(pci, 1024, DDP_ALGO_RING, DDP_PROTO_LL128, &cost));
}

/* Two nodes of 8 (n = 16, N = 2), Intel host (net overhead 1 µs, ×3 for Simple):
 *   Ring: base + (2(n-1) - 2(N-1))·max(intraLat, overhead) + 2(N-1)·hwLat[NET][Ring]
 *         LL 6.6 + 28·max(0.6, 1) + 2·2.7 = 40.0;  Simple 8.4 + 28·max(3.4, 3) + 2·14 = 131.6
 *   Tree: base + 2·((ppn-1)·intraLat + log2(N)·hwLat[NET][Tree])
 *         LL 6.8 + 2·(7·0.6 + 5.0) = 25.2;  Simple 8.4 + 2·(7·4.0 + 14) = 92.4
 * AMD host: overhead 2 µs, Simple 6: Ring Simple 8.4 + 28·6 + 28 = 204.4.
 * One GPU per node (n = N = 4): every hop is the network's, with Tree's NET latency:
 *   Ring LL 6.6 + 6·5.0 = 36.6. */
static void
test_nccl_latency_multi_node(void)
{
  g_autoptr(DdpCluster) cluster = a100();
  g_autoptr(DdpCollective) c = model(cluster, 16);
  g_assert_cmpfloat_with_epsilon(tuned_latency(c, DDP_ALGO_RING, DDP_PROTO_LL), 40.0, 1e-9);
  g_assert_cmpfloat_with_epsilon(tuned_latency(c, DDP_ALGO_RING, DDP_PROTO_SIMPLE), 131.6, 1e-9);
  g_assert_cmpfloat_with_epsilon(tuned_latency(c, DDP_ALGO_TREE, DDP_PROTO_LL), 25.2, 1e-9);
  g_assert_cmpfloat_with_epsilon(tuned_latency(c, DDP_ALGO_TREE, DDP_PROTO_SIMPLE), 92.4, 1e-9);
  cluster->nccl.amd_cpu = TRUE;
  g_autoptr(DdpCollective) amd = model(cluster, 16);
  g_assert_cmpfloat_with_epsilon(tuned_latency(amd, DDP_ALGO_RING, DDP_PROTO_SIMPLE), 204.4, 1e-9);

  g_autoptr(DdpCluster) single = cluster_new(80, 1, 0, 1, 200);
  g_autoptr(DdpCollective) spread = model(single, 4);
  g_assert_cmpfloat_with_epsilon(tuned_latency(spread, DDP_ALGO_RING, DDP_PROTO_LL), 36.6, 1e-9);
}

/* The emulated topology search (search.cc), by hand:
 * A100, one node: NCCL sees 300·20/25 = 240 GB/s of NVLink per GPU.  The first intra speed is 40:
 *   floor(240/40) = 6 channels = 240, all of it → stop.  Dup (40 ≥ 25): 12 × 20.  Trees search
 *   with 240·8/7 and at most the ring's 12 channels: 40 → 6, same result, 12 × 20.
 * H100, one node: 450·20.6/25 = 370.8.  60 → 6 = 360 < 370.8; 50 → 7 = 350; 40 → 9 = 360 (not
 *   better); 30 → 12 = 360; 24 ≤ 0.49·60 stops.  6 × 60, dup (60 ≥ 50) → 12 × 30; 40 at 12
 *   channels needs 480 > 370.8, so pass 2 keeps 30.
 * B200, one node: 900·40.1/50 = 721.8.  90 → 8 = 720, and nothing slower down to 45 beats 720
 *   (80·9, 60·12, 45·16); 40 ≤ 0.49·90 stops.  Dup → 16 × 45.
 * A100, two nodes of 8 × HDR (25 GB/s per NIC, behind PCIe Gen4 at 24): the speed may not
 *   exceed 24.  24 → min(240/24 = 10, 8 NICs × 1) = 8 channels = 192; slower speeds give at most
 *   16 × 12 = 192 (not better); 10 ≤ 0.49·24 stops.  8 × 24, no dup (< 25).  The tree's pass 2
 *   raises bwIntra while 8 channels fit in 240·8/7 = 274.3: 28 (9 fit), 30 (9 fit), 48 (5) no:
 *   8 × 30/24. */
static void
test_nccl_graph_search(void)
{
  g_autoptr(DdpCluster) ca = a100(), ch = h100(), cb = b200();
  g_autoptr(DdpCollective) a = model(ca, 8);
  assert_graph(a, DDP_ALGO_RING, 12, 20, 20);
  assert_graph(a, DDP_ALGO_TREE, 12, 20, 20);
  g_autoptr(DdpCollective) h = model(ch, 8);
  assert_graph(h, DDP_ALGO_RING, 12, 30, 30);
  g_autoptr(DdpCollective) b = model(cb, 8);
  assert_graph(b, DDP_ALGO_RING, 16, 45, 45);
  g_autoptr(DdpCollective) a2 = model(ca, 16);
  assert_graph(a2, DDP_ALGO_RING, 8, 24, 24);
  assert_graph(a2, DDP_ALGO_TREE, 8, 30, 24);
  /* 2:1 oversubscription halves what each NIC pushes through the core: 12.5 GB/s per NIC.
   * 12 → min(20, 8·1) = 8 = 96; 10, 9, 7: 8 channels, less; 6 ≤ 0.49·12 stops: 8 × 12 */
  ca->inter.oversubscription = 2.0;
  g_autoptr(DdpCollective) over = model(ca, 16);
  assert_graph(over, DDP_ALGO_RING, 8, 12, 12);
}

/* Acceptance: busbw of a large ring AllReduce approaches link bandwidth × protocol efficiency.
 * A100 node, ring busBw = 12 × 20 = 240 (the NVLink NCCL sees): Simple → 240, LL128 → 0.92·240 =
 * 220.8 (below the 12 × 20 per-channel cap).  LL is capped by llMaxBw (87.7 on one Ampere node)
 * here, so its 0.5 efficiency shows on 4 channels × 10 GB/s (set explicitly): 0.5·40 = 20. */
static void
test_nccl_busbw_limit(void)
{
  guint64 huge = (guint64)1 << 42;
  g_autoptr(DdpCluster) cluster = a100();
  g_autoptr(DdpCollective) c = model(cluster, 8);
  DdpCollectiveCost cost;
  g_assert_true(ddp_collective_allreduce_with(c, huge, DDP_ALGO_RING, DDP_PROTO_SIMPLE, &cost));
  g_assert_cmpfloat_with_epsilon(cost.busbw_GBs, 240.0, 1e-3);
  g_assert_true(ddp_collective_allreduce_with(c, huge, DDP_ALGO_RING, DDP_PROTO_LL128, &cost));
  g_assert_cmpfloat_with_epsilon(cost.busbw_GBs, 220.8, 1e-3);
  g_assert_true(ddp_collective_allreduce_with(c, huge, DDP_ALGO_RING, DDP_PROTO_LL, &cost));
  g_assert_cmpfloat_with_epsilon(cost.busbw_GBs, 87.7, 1e-3);
  /* auto at that size: ring Simple */
  ddp_collective_allreduce(c, huge, &cost);
  g_assert_cmpint(cost.algorithm, ==, DDP_ALGO_RING);
  g_assert_cmpint(cost.protocol, ==, DDP_PROTO_SIMPLE);

  cluster->nccl.channels = 4;
  cluster->nccl.bw_intra_GBs = 10;
  g_autoptr(DdpCollective) slow = model(cluster, 8);
  assert_graph(slow, DDP_ALGO_RING, 4, 10, 60);   /* bw_inter: the searched 12 × 20 spread on 4 */
  g_assert_true(ddp_collective_allreduce_with(slow, huge, DDP_ALGO_RING, DDP_PROTO_LL, &cost));
  g_assert_cmpfloat_with_epsilon(cost.busbw_GBs, 20.0, 1e-3);
  /* the table holds algBw = busBw·n/(2(n-1)): Simple 40·8/14 */
  g_assert_cmpfloat_with_epsilon(tuned_algbw(slow, DDP_ALGO_RING, DDP_PROTO_SIMPLE), 40.0 * 8 / 14, 1e-9);
}

/* Acceptance: tree latency grows with log N, ring latency with N.  Nodes of 8 (n = 8N):
 *   Tree Simple = 8.4 + 2·(7·4.0 + log2(N)·14): +28 µs per doubling of N;
 *   Ring Simple = 8.4 + (2(n-1) - 2(N-1))·3.4 + 2(N-1)·14 = 8.4 + 14N·3.4 + 28(N-1) = 75.6·N - 19.6. */
static void
test_nccl_latency_scaling(void)
{
  g_autoptr(DdpCluster) cluster = h100();
  double previous_tree = 0;
  for (guint64 nodes = 2; nodes <= 1024; nodes *= 2) {
    g_autoptr(DdpCollective) c = model(cluster, 8 * nodes);
    double tree = tuned_latency(c, DDP_ALGO_TREE, DDP_PROTO_SIMPLE);
    double ring = tuned_latency(c, DDP_ALGO_RING, DDP_PROTO_SIMPLE);
    g_assert_cmpfloat_with_epsilon(tree, 8.4 + 2 * (7 * 4.0 + log2((double)nodes) * 14), 1e-9);
    g_assert_cmpfloat_with_epsilon(ring, 75.6 * (double)nodes - 19.6, 1e-9);
    if (previous_tree > 0)
      g_assert_cmpfloat_with_epsilon(tree - previous_tree, 28.0, 1e-9);
    previous_tree = tree;
  }
}

/* Size-dependent corrections (ncclTopoGetAlgoTime):
 * Tree bandwidth × treeCorrectionFactor[log2(S/64)]: A100 node, Tree Simple algBw =
 *   0.5·min(0.92·240, 12·24.0) = 110.4; at S = 131 072, log2(2048) = 11 → factor 0.5:
 *   t = 64.4 + 131 072/(1000·55.2) µs.  Below 64 B no factor applies: t(63) = 64.4 + 63/110 400.
 *   NCCL reads the table for Tree below index 23 only: 256 MiB (index 22) takes 0.9, 512 MiB
 *   (index 23, whose Simple entry is 0.9 too) none: 64.4 + 2^29/110 400.
 * Ring plateau: two A100 nodes, comm channels = 2·min(8, 8) = 16, n = 16; Ring Simple latency
 *   ×1.4 once S/(16·16) ≥ 64, i.e. S ≥ 16 384: 131.6 → 184.24.  algBw = 8·24·16/30 = 102.4. */
static void
test_nccl_size_corrections(void)
{
  g_autoptr(DdpCluster) cluster = a100();
  g_autoptr(DdpCollective) one = model(cluster, 8);
  g_assert_cmpfloat_with_epsilon(time_with(one, 131072, DDP_ALGO_TREE, DDP_PROTO_SIMPLE),
                                 64.4 + 131072 / (1000 * 55.2), 1e-9);
  g_assert_cmpfloat_with_epsilon(time_with(one, 63, DDP_ALGO_TREE, DDP_PROTO_SIMPLE), 64.4 + 63 / 110400.0, 1e-9);
  g_assert_cmpfloat_with_epsilon(time_with(one, (guint64)256 << 20, DDP_ALGO_TREE, DDP_PROTO_SIMPLE),
                                 64.4 + 268435456 / (1000 * 110.4 * 0.9), 1e-6);
  g_assert_cmpfloat_with_epsilon(time_with(one, (guint64)512 << 20, DDP_ALGO_TREE, DDP_PROTO_SIMPLE),
                                 64.4 + 536870912 / (1000 * 110.4), 1e-6);
  g_autoptr(DdpCollective) two = model(cluster, 16);
  g_assert_cmpfloat_with_epsilon(time_with(two, 16383, DDP_ALGO_RING, DDP_PROTO_SIMPLE),
                                 131.6 + 16383 / (1000 * 102.4), 1e-9);
  g_assert_cmpfloat_with_epsilon(time_with(two, 16384, DDP_ALGO_RING, DDP_PROTO_SIMPLE),
                                 131.6 * 1.4 + 16384 / (1000 * 102.4), 1e-9);
}

/* launch_us adds to every call and changes no choice: 8 A100s, 1 kB with 5 µs: Ring LL
 * 5 + 15.0 + 1000/(1000·(87.7·8/14)). */
static void
test_nccl_launch(void)
{
  g_autoptr(DdpCluster) cluster = a100();
  cluster->nccl.launch_us = 5;
  g_autoptr(DdpCollective) c = model(cluster, 8);
  DdpCollectiveCost cost;
  ddp_collective_allreduce(c, 1000, &cost);
  g_assert_cmpint(cost.algorithm, ==, DDP_ALGO_RING);
  g_assert_cmpint(cost.protocol, ==, DDP_PROTO_LL);
  g_assert_cmpfloat_with_epsilon(cost.time_us, 5 + 15.0 + 1000 / (1000 * 87.7 * 8 / 14), 1e-9);
  g_assert_cmpfloat_with_epsilon(cost.latency_us, 20.0, 1e-9);
}

static void
assert_choice_at(const DdpCollective *c, guint64 bytes, const DdpCollectiveChoice *want)
{
  DdpCollectiveCost cost;
  ddp_collective_allreduce(c, bytes, &cost);
  g_assert_cmpint(cost.algorithm, ==, want->algorithm);
  g_assert_cmpint(cost.protocol, ==, want->protocol);
}

/* Acceptance: on the shipped dgx-a100 and dgx-h100, auto is latency-optimal below a crossover and
 * bandwidth-optimal above it.  The latency-optimal pair is auto's choice at 1 B and has the least
 * latency of all enabled pairs; the bandwidth-optimal pair has the largest algbw — Ring/Simple on
 * DGX A100, NVLS/Simple on one DGX H100 node (busBw 476 against the ring's 360, see
 * test_nvls_one_node) and NVLSTree/Simple across DGX H100 nodes (461.6 on 2 nodes; on 32,
 * 8·min(59.5, 48, 45.5) = 364 against the ring's 8·45 = 360); every size below the first switch
 * gets the first, every size from the crossover on the second. */
static void
test_auto_crossover(void)
{
  static const char *const clusters[] = { "dgx-a100", "dgx-h100" };
  static const guint64 gpus[] = { 8, 16, 256 };
  static const DdpAlgorithm bandwidth_optimal[2][3] = {
    { DDP_ALGO_RING, DDP_ALGO_RING, DDP_ALGO_RING },
    { DDP_ALGO_NVLS, DDP_ALGO_NVLS_TREE, DDP_ALGO_NVLS_TREE },
  };
  guint64 horizon = (guint64)1 << 40;
  for (gsize k = 0; k < G_N_ELEMENTS(clusters); k++) {
    g_autoptr(DdpCluster) cluster = fixture_cluster(clusters[k]);
    cluster->nccl.cost_model = DDP_COST_NCCL_TUNER;   /* NCCL's own ranking (the nccl model: test_physics_*) */
    for (gsize g = 0; g < G_N_ELEMENTS(gpus); g++) {
      g_autoptr(DdpCollective) c = model(cluster, gpus[g]);
      DdpCollectiveChoice lat, bw;
      guint64 crossover;
      ddp_collective_crossover(c, horizon, &lat, &bw, &crossover);
      g_test_message("%s, %" G_GUINT64_FORMAT " GPUs: latency-optimal %s/%s, bandwidth-optimal %s/%s, crossover %" G_GUINT64_FORMAT " B",
                     clusters[k], gpus[g], ddp_algorithm_name(lat.algorithm), ddp_protocol_name(lat.protocol),
                     ddp_algorithm_name(bw.algorithm), ddp_protocol_name(bw.protocol), crossover);
      g_assert_cmpint(bw.algorithm, ==, bandwidth_optimal[k][g]);
      g_assert_cmpint(bw.protocol, ==, DDP_PROTO_SIMPLE);
      g_assert_cmpint(lat.protocol, ==, DDP_PROTO_LL);
      g_assert_cmpuint(crossover, <, horizon);
      double least = G_MAXDOUBLE;
      for (DdpAlgorithm a = DDP_ALGO_RING; a < DDP_ALGO_COUNT; a++)
        for (DdpProtocol p = DDP_PROTO_LL; p <= DDP_PROTO_SIMPLE; p++) {
          DdpCollectiveTuning t;
          ddp_collective_tuning(c, a, p, &t);
          if (t.enabled)
            least = MIN(least, t.latency_us);
        }
      g_assert_cmpfloat(tuned_latency(c, lat.algorithm, lat.protocol), ==, least);

      g_autoptr(GArray) choices = ddp_collective_choices(c, horizon);
      g_assert_cmpuint(choices->len, >=, 2);
      guint64 first_switch = g_array_index(choices, DdpCollectiveChoice, 1).from_bytes;
      g_assert_cmpuint(first_switch, <=, crossover);
      for (guint64 s = 1; s < first_switch; s *= 2)
        assert_choice_at(c, s, &lat);
      assert_choice_at(c, first_switch - 1, &lat);
      assert_choice_at(c, crossover, &bw);
      for (guint64 s = crossover; s <= horizon; s *= 2)
        assert_choice_at(c, s, &bw);
      DdpCollectiveCost before;
      ddp_collective_allreduce(c, crossover - 1, &before);
      g_assert_false(before.algorithm == bw.algorithm && before.protocol == bw.protocol);
    }
  }
}

/* ddp_collective_choices is exact to the byte: at each boundary the choice differs from the byte
 * before and matches the listed pair, and on a grid of 64 sizes per doubling every size gets the
 * listed pair.  Two A100 nodes are the hard case: the tree correction steps at every power of two
 * make auto alternate Tree/LL128 and Ring/LL128 between 2.9 and 12.3 MB. */
static void
assert_choices_exact(const DdpCollective *c, guint64 horizon)
{
  g_autoptr(GArray) choices = ddp_collective_choices(c, horizon);
  g_assert_cmpuint(g_array_index(choices, DdpCollectiveChoice, 0).from_bytes, ==, 1);
  for (guint i = 1; i < choices->len; i++) {
    const DdpCollectiveChoice *now = &g_array_index(choices, DdpCollectiveChoice, i);
    const DdpCollectiveChoice *prev = &g_array_index(choices, DdpCollectiveChoice, i - 1);
    g_assert_cmpuint(now->from_bytes, >, prev->from_bytes);
    assert_choice_at(c, now->from_bytes, now);
    assert_choice_at(c, now->from_bytes - 1, prev);
  }
  guint k = 0;
  for (guint64 p = 1; p < horizon; p *= 2) {
    for (guint64 j = 0; j < 64; j++) {
      guint64 size = p + p * j / 64;
      while (k + 1 < choices->len && g_array_index(choices, DdpCollectiveChoice, k + 1).from_bytes <= size)
        k++;
      assert_choice_at(c, size, &g_array_index(choices, DdpCollectiveChoice, k));
    }
  }
}

static void
test_choices_exact(void)
{
  g_autoptr(DdpCluster) ch = h100(), ca = a100();
  g_autoptr(DdpCollective) h = model(ch, 64), a = model(ca, 16);
  guint64 horizon = (guint64)1 << 36;
  assert_choices_exact(h, horizon);
  assert_choices_exact(a, horizon);
  /* the alternation, by hand at two sizes: at 3 MB, log2(3e6/64) = 15, Tree/LL128 factor .6:
   * tree 48.5 + 3e6/(1000·80·.6) = 111.0 µs, ring 75.2 + 3e6/85 333 = 110.36 µs → ring;
   * at 4 194 304 (index 16, factor .8): tree 48.5 + 65.5 = 114.04, ring 75.2 + 49.15 = 124.35 → tree */
  DdpCollectiveCost cost;
  ddp_collective_allreduce(a, 3000000, &cost);
  g_assert_cmpint(cost.algorithm, ==, DDP_ALGO_RING);
  g_assert_cmpint(cost.protocol, ==, DDP_PROTO_LL128);
  ddp_collective_allreduce(a, 4194304, &cost);
  g_assert_cmpint(cost.algorithm, ==, DDP_ALGO_TREE);
  g_assert_cmpint(cost.protocol, ==, DDP_PROTO_LL128);
}

static char *write_temp(const char *text);

/* The hand-built fixtures with NVLS on, as a loaded cluster file has it (nccl.nvls defaults to true). */
static DdpCluster *
with_nvls(DdpCluster *c)
{
  c->nccl.nvls = TRUE;
  return c;
}

static void
assert_disabled(const DdpCollective *c, DdpAlgorithm a, DdpProtocol p)
{
  DdpCollectiveTuning t;
  ddp_collective_tuning(c, a, p, &t);
  g_assert_false(t.enabled);
  DdpCollectiveCost cost;
  g_assert_false(ddp_collective_allreduce_with(c, 1 << 20, a, p, &cost));
}

static void
assert_new_fails(const DdpCluster *cluster, guint64 gpus)
{
  g_autoptr(GError) error = NULL;
  g_assert_null(ddp_collective_new(cluster, gpus, &error));
  g_assert_error(error, DDP_COLLECTIVE_ERROR, DDP_COLLECTIVE_ERROR_INVALID);
}

/* NVLS on one 8-GPU H100 node (search.cc NVLS pattern, tuning.cc; docs/collective.md "NVLS"):
 * graph — T = 450·20.6/25 = 370.8 GB/s per GPU; all 8 GPUs are heads (min = max = 8 channels);
 *   the intra speeds start at 50 (60·8 = 480 > T·8/7 = 423.8); a head uses (8+1)·s of its
 *   NVLink: 9·50 = 450 > 370.8, 9·40 = 360 <= 370.8 → 8 × 40; pass 2 raises bwInter to 50, then
 *   60 (the list's top; both < 2·40): 8 × 40/60.
 * tuning — intraBw = 40·0.85·7/8·2 = 59.5, interBw = 60, bw = 59.5, busBw = 8·59.5 = 476 GB/s,
 *   algBw = 476·8/14 = 272.0; latency = hwLat[NVLink][NVLS] = 25 µs, the base replaced (none).
 *   NVLSTree is off on one node; NVLS has no LL or LL128.
 * choice — Ring/LL (15 µs; busBw min(141, 0.5·12·30) = 141, algBw 141·8/14 = 80.571) until
 *   15 + S/80 571.4 = 25 + S/272 000: S* = 10/(1/80 571.4 − 1/272 000) = 1 144 835.8 B, NVLS from
 *   1 144 836 B.  NVLS has the largest algBw (Ring/Simple: 12·30·8/14 = 205.7), so it stays.
 * 1 GiB: 25 + 2^30/272 000 µs; busbw → 476 as S → ∞.  The ring and tree rows are those without
 * NVLS (test_nccl_latency_one_node, test_nccl_graph_search). */
static void
test_nvls_one_node(void)
{
  g_autoptr(DdpCluster) cluster = with_nvls(h100());
  g_autoptr(DdpCollective) c = model(cluster, 8);
  assert_graph(c, DDP_ALGO_NVLS, 8, 40, 60);
  assert_graph(c, DDP_ALGO_NVLS_TREE, 8, 40, 60);
  assert_graph(c, DDP_ALGO_RING, 12, 30, 30);
  g_assert_cmpfloat_with_epsilon(tuned_latency(c, DDP_ALGO_NVLS, DDP_PROTO_SIMPLE), 25.0, 1e-9);
  g_assert_cmpfloat_with_epsilon(tuned_algbw(c, DDP_ALGO_NVLS, DDP_PROTO_SIMPLE), 272.0, 1e-9);
  assert_disabled(c, DDP_ALGO_NVLS, DDP_PROTO_LL);
  assert_disabled(c, DDP_ALGO_NVLS, DDP_PROTO_LL128);
  assert_disabled(c, DDP_ALGO_NVLS_TREE, DDP_PROTO_SIMPLE);
  g_assert_cmpfloat_with_epsilon(tuned_latency(c, DDP_ALGO_RING, DDP_PROTO_SIMPLE), 56.0, 1e-9);
  g_assert_cmpfloat_with_epsilon(tuned_latency(c, DDP_ALGO_TREE, DDP_PROTO_LL), 15.2, 1e-9);

  guint64 gib = (guint64)1 << 30;
  DdpCollectiveCost cost;
  ddp_collective_allreduce(c, gib, &cost);
  g_assert_cmpint(cost.algorithm, ==, DDP_ALGO_NVLS);
  g_assert_cmpint(cost.protocol, ==, DDP_PROTO_SIMPLE);
  g_assert_cmpfloat_with_epsilon(cost.time_us, 25.0 + gib / 272000.0, 1e-9);
  g_assert_cmpfloat_with_epsilon(cost.latency_us, 25.0, 1e-9);
  g_assert_true(ddp_collective_allreduce_with(c, (guint64)1 << 50, DDP_ALGO_NVLS, DDP_PROTO_SIMPLE, &cost));
  g_assert_cmpfloat_with_epsilon(cost.busbw_GBs, 476.0, 1e-3);

  DdpCollectiveChoice lat, bw;
  guint64 crossover;
  ddp_collective_crossover(c, (guint64)1 << 40, &lat, &bw, &crossover);
  g_assert_cmpint(lat.algorithm, ==, DDP_ALGO_RING);
  g_assert_cmpint(lat.protocol, ==, DDP_PROTO_LL);
  g_assert_cmpint(bw.algorithm, ==, DDP_ALGO_NVLS);
  g_assert_cmpint(bw.protocol, ==, DDP_PROTO_SIMPLE);
  g_assert_cmpuint(crossover, ==, 1144836);
  ddp_collective_allreduce(c, 1144835, &cost);
  g_assert_cmpint(cost.algorithm, ==, DDP_ALGO_RING);
  g_assert_cmpint(cost.protocol, ==, DDP_PROTO_LL);
}

/* Part of a node: 3 H100s of a DGX (ppn 3) get NVLS; 2 do not (NCCL wants more than 2 GPUs).
 * 3 heads: speeds from 60 (60 <= 370.8, 3·60 <= 370.8·3/2); (3+1)·60 = 240 <= 370.8 → 3 × 60,
 * already the top, so bwInter stays 60.  intraBw = 60·0.85·2/3·2 = 68, bw = min(68, 60) = 60,
 * busBw = 180, algBw = 180·3/4 = 135. */
static void
test_nvls_part_of_node(void)
{
  g_autoptr(DdpCluster) cluster = with_nvls(h100());
  g_autoptr(DdpCollective) three = model(cluster, 3);
  assert_graph(three, DDP_ALGO_NVLS, 3, 60, 60);
  g_assert_cmpfloat_with_epsilon(tuned_algbw(three, DDP_ALGO_NVLS, DDP_PROTO_SIMPLE), 135.0, 1e-9);
  g_autoptr(DdpCollective) two = model(cluster, 2);
  assert_graph(two, DDP_ALGO_NVLS, 0, 0, 0);
  assert_disabled(two, DDP_ALGO_NVLS, DDP_PROTO_SIMPLE);
}

/* NVLSTree across DGX H100 nodes (8 × 400 Gb/s NICs; NIC path min(50, PCIe Gen5 48) = 48; NCCL's
 * tuner table, the nccl-tuner cost model):
 * graph — each head is the local GPU of its own NIC: at most min(8 NICs, 8 GPUs) = 8 channels,
 *   minChannels 1; inter speeds from 48; a head needs (k+1)·s <= 370.8:
 *   48 → k = 6; 45 → k = 7 (more channels: kept); 42 → 7, 7·42 < 7·45 (not kept); 40 → k = 8 =
 *   maxChannels → stop: 8 × 40.  Pass 2 raises bwInter while the NIC path carries it and it is
 *   below 2·40: 42, 45, 48 → 8 × 40/48.
 * 2 nodes — intraBw = 40·0.85·7/8·2 = 59.5; interBw = 2·48 = 96 (NVLSTree on <= 2 nodes);
 *   perChMaxNVLSTreeBw (Hopper, 2 nodes) = 57.7 → bw = 57.7, busBw = 461.6,
 *   algBw = 461.6·16/30 = 246.187; latency = 0 + 25 + 2·log2(2)·20.9 = 66.8 µs.  NVLS itself is
 *   off across nodes (it needs CollNet/SHARP).  Hopper: no size correction,
 *   t(1 MiB) = 66.8 + 1 048 576/246 186.7 µs.
 * 4 nodes — bw = min(59.5, 48, 45.5) = 45.5, busBw = 364, algBw = 364·32/62 = 187.871;
 *   latency = 25 + 2·2·20.9 = 108.6 µs.
 * HGX B200, 2 nodes: T = 900·40.1/50 = 721.8, NIC path 48; the sm100 inter speeds start at 48 (96
 *   is above the path): (k+1)·48 <= 721.8 → k = 14, so all 8 heads at once: 8 × 48; pass 2's 96
 *   does not fit the NIC → 8 × 48/48.  intraBw = 48·0.74·7/8·2 = 62.16, interBw 96, cap 96 →
 *   busBw 497.28, algBw = 497.28·16/30 = 265.216.  On Blackwell NVLSTree takes the tree correction
 *   (x86 hosts): 1 MiB → log2(2^20/64) = 14, Simple factor .5: 66.8 + 1 048 576/(265 216·0.5);
 *   2^34 B is past the table: 66.8 + 2^34/265 216. */
static void
test_nvls_tree(void)
{
  g_autoptr(DdpCluster) ch = with_nvls(h100());
  g_autoptr(DdpCollective) two = model(ch, 16);
  assert_graph(two, DDP_ALGO_NVLS_TREE, 8, 40, 48);
  assert_disabled(two, DDP_ALGO_NVLS, DDP_PROTO_SIMPLE);
  g_assert_cmpfloat_with_epsilon(tuned_latency(two, DDP_ALGO_NVLS_TREE, DDP_PROTO_SIMPLE), 66.8, 1e-9);
  g_assert_cmpfloat_with_epsilon(tuned_algbw(two, DDP_ALGO_NVLS_TREE, DDP_PROTO_SIMPLE), 461.6 * 16 / 30, 1e-9);
  g_assert_cmpfloat_with_epsilon(time_with(two, 1048576, DDP_ALGO_NVLS_TREE, DDP_PROTO_SIMPLE),
                                 66.8 + 1048576 / (1000 * 461.6 * 16 / 30), 1e-9);
  DdpCollectiveCost cost;
  ddp_collective_allreduce(two, (guint64)1 << 30, &cost);
  g_assert_cmpint(cost.algorithm, ==, DDP_ALGO_NVLS_TREE);

  g_autoptr(DdpCollective) four = model(ch, 32);
  assert_graph(four, DDP_ALGO_NVLS_TREE, 8, 40, 48);
  g_assert_cmpfloat_with_epsilon(tuned_latency(four, DDP_ALGO_NVLS_TREE, DDP_PROTO_SIMPLE), 108.6, 1e-9);
  g_assert_cmpfloat_with_epsilon(tuned_algbw(four, DDP_ALGO_NVLS_TREE, DDP_PROTO_SIMPLE), 364.0 * 32 / 62, 1e-9);

  g_autoptr(DdpCluster) cb = with_nvls(b200());
  g_autoptr(DdpCollective) b = model(cb, 16);
  assert_graph(b, DDP_ALGO_NVLS_TREE, 8, 48, 48);
  double algbw = 497.28 * 16 / 30;
  g_assert_cmpfloat_with_epsilon(tuned_algbw(b, DDP_ALGO_NVLS_TREE, DDP_PROTO_SIMPLE), algbw, 1e-9);
  g_assert_cmpfloat_with_epsilon(time_with(b, 1048576, DDP_ALGO_NVLS_TREE, DDP_PROTO_SIMPLE),
                                 66.8 + 1048576 / (1000 * algbw * 0.5), 1e-9);
  guint64 big = (guint64)1 << 34;
  g_assert_cmpfloat_with_epsilon(time_with(b, big, DDP_ALGO_NVLS_TREE, DDP_PROTO_SIMPLE),
                                 66.8 + (double)big / (1000 * algbw), 1e-6);
}

/* nccl.nvls = false (NCCL_NVLS_ENABLE=0): no NVLS graph, NVLS and NVLSTree disabled, and the ring
 * and tree entries are exactly those with NVLS on — on one H100 node auto is Ring/Simple at 1 GiB
 * again: 56 + 2^30/(1000·12·30·8/14).  Forcing nvls there is an error.  The key parses from a
 * cluster file (default true: the shipped dgx-h100 has it on). */
static void
test_nvls_disabled(void)
{
  g_autoptr(DdpCluster) on = with_nvls(h100()), off = h100();
  off->nccl.nvls = FALSE;
  for (guint64 gpus = 8; gpus <= 16; gpus += 8) {
    g_autoptr(DdpCollective) a = model(on, gpus), b = model(off, gpus);
    assert_graph(b, DDP_ALGO_NVLS, 0, 0, 0);
    assert_disabled(b, DDP_ALGO_NVLS, DDP_PROTO_SIMPLE);
    assert_disabled(b, DDP_ALGO_NVLS_TREE, DDP_PROTO_SIMPLE);
    for (DdpAlgorithm alg = DDP_ALGO_RING; alg <= DDP_ALGO_TREE; alg++) {
      for (DdpProtocol p = DDP_PROTO_LL; p <= DDP_PROTO_SIMPLE; p++) {
        g_assert_cmpfloat(tuned_latency(a, alg, p), ==, tuned_latency(b, alg, p));
        g_assert_cmpfloat(tuned_algbw(a, alg, p), ==, tuned_algbw(b, alg, p));
      }
    }
  }
  g_autoptr(DdpCollective) c = model(off, 8);
  guint64 gib = (guint64)1 << 30;
  DdpCollectiveCost cost;
  ddp_collective_allreduce(c, gib, &cost);
  g_assert_cmpint(cost.algorithm, ==, DDP_ALGO_RING);
  g_assert_cmpint(cost.protocol, ==, DDP_PROTO_SIMPLE);
  g_assert_cmpfloat_with_epsilon(cost.time_us, 56.0 + gib / (1000.0 * 360 * 8 / 14), 1e-9);
  off->nccl.algorithm = DDP_ALGO_NVLS;
  assert_new_fails(off, 8);

  g_autoptr(GError) error = NULL;
  g_autoptr(DdpCluster) shipped = fixture_cluster("dgx-h100");
  g_assert_true(shipped->nccl.nvls);
  g_autofree char *path = write_temp("[cluster]\nname = h\ngpu = h100\ngpus_per_node = 8\n"
                                     "[intra]\nfabric = nvswitch\nbandwidth_GBs = 450\nlatency_us = 0.7\n"
                                     "[nccl]\nnvls = false\n");
  g_autoptr(DdpCluster) loaded = fixture_cluster(path);
  g_assert_false(loaded->nccl.nvls);
  g_autoptr(DdpCollective) lc = model(loaded, 8);
  assert_graph(lc, DDP_ALGO_NVLS, 0, 0, 0);
  g_unlink(path);
  g_autofree char *bad = write_temp("[cluster]\nname = h\ngpu = h100\ngpus_per_node = 8\n"
                                    "[intra]\nfabric = nvswitch\nbandwidth_GBs = 450\nlatency_us = 0.7\n"
                                    "[nccl]\nnvls = maybe\n");
  g_autoptr(DdpCluster) none = ddp_cluster_load(bad, &error);
  g_assert_null(none);
  g_assert_nonnull(error);
  g_assert_nonnull(strstr(error->message, "nccl.nvls"));
  g_unlink(bad);
}

/* Where NCCL has no NVLS, ddpsim offers none: Ampere (nvlsEfficiency 0; NVLS needs sm90+), PCIe
 * and point-to-point NVLink nodes (no NVSwitch, no multicast), one GPU per node; NVLSTree needs
 * more than one node, NVLS across nodes needs CollNet, both are Simple only, and the alpha-beta
 * model has no NVLS.  Forcing any of these is an error; ring and tree are unchanged. */
static void
test_nvls_not_offered(void)
{
  g_autoptr(DdpCluster) a = with_nvls(a100());
  g_autoptr(DdpCollective) ca = model(a, 8);
  assert_graph(ca, DDP_ALGO_NVLS, 0, 0, 0);
  assert_disabled(ca, DDP_ALGO_NVLS, DDP_PROTO_SIMPLE);
  g_assert_cmpfloat_with_epsilon(tuned_latency(ca, DDP_ALGO_RING, DDP_PROTO_SIMPLE), 56.0, 1e-9);
  a->nccl.algorithm = DDP_ALGO_NVLS;
  assert_new_fails(a, 8);

  static const DdpIntraFabric fabrics[] = { DDP_INTRA_PCIE, DDP_INTRA_NVLINK };
  for (gsize i = 0; i < G_N_ELEMENTS(fabrics); i++) {
    g_autoptr(DdpCluster) h = with_nvls(h100());
    h->intra.fabric = fabrics[i];
    g_autoptr(DdpCollective) c = model(h, 8);
    assert_graph(c, DDP_ALGO_NVLS, 0, 0, 0);
    assert_disabled(c, DDP_ALGO_NVLS, DDP_PROTO_SIMPLE);
  }
  g_autoptr(DdpCluster) spread = with_nvls(cluster_new(90, 1, 0, 1, 400));
  g_autoptr(DdpCollective) cs = model(spread, 4);
  assert_disabled(cs, DDP_ALGO_NVLS_TREE, DDP_PROTO_SIMPLE);

  g_autoptr(DdpCluster) h = with_nvls(h100());
  h->nccl.algorithm = DDP_ALGO_NVLS_TREE;
  assert_new_fails(h, 8);      /* one node */
  h->nccl.algorithm = DDP_ALGO_NVLS;
  assert_new_fails(h, 16);     /* across nodes */
  h->nccl.protocol = DDP_PROTO_LL;
  assert_new_fails(h, 8);      /* Simple only */
  h->nccl.protocol = DDP_PROTO_AUTO;
  g_autoptr(DdpCollective) forced = model(h, 8);
  DdpCollectiveCost cost;
  ddp_collective_allreduce(forced, 8, &cost);
  g_assert_cmpint(cost.algorithm, ==, DDP_ALGO_NVLS);
  g_assert_cmpfloat_with_epsilon(cost.time_us, 25.0 + 8 / 272000.0, 1e-9);
  h->nccl.cost_model = DDP_COST_ALPHA_BETA;
  assert_new_fails(h, 8);
  /* an NCCL_ALGO list that leaves the alpha-beta model nothing (it was an abort) */
  g_assert_true(ddp_algorithm_set_parse("NVLS,NVLSTree", &h->nccl.algorithm, &h->nccl.disabled_algorithms));
  assert_new_fails(h, 8);
  h->nccl.disabled_algorithms = 0;
  h->nccl.algorithm = DDP_ALGO_AUTO;
  g_autoptr(DdpCollective) ab = model(h, 8);
  assert_disabled(ab, DDP_ALGO_NVLS, DDP_PROTO_SIMPLE);
  ddp_collective_allreduce(ab, (guint64)1 << 30, &cost);
  g_assert_cmpint(cost.algorithm, ==, DDP_ALGO_RING);
}

/* ddp_collective_choices stays exact with NVLS in play: one H100 node (Ring/LL → NVLS), two and
 * eight B200 nodes (NVLSTree with the tree correction's steps at every power of two). */
static void
test_nvls_choices_exact(void)
{
  g_autoptr(DdpCluster) ch = with_nvls(h100()), cb = with_nvls(b200());
  g_autoptr(DdpCollective) h = model(ch, 8), b2 = model(cb, 16), b8 = model(cb, 64);
  guint64 horizon = (guint64)1 << 36;
  assert_choices_exact(h, horizon);
  assert_choices_exact(b2, horizon);
  assert_choices_exact(b8, horizon);
  /* NVLSTree bounded by NVLS alone (§11.12): two H100 nodes, two NVL72 racks of each kind */
  g_autoptr(DdpCollective) h2 = model(ch, 16);
  assert_choices_exact(h2, horizon);
  const char *const racks[] = { "gb200-nvl72", "gb300-nvl72" };
  for (gsize i = 0; i < G_N_ELEMENTS(racks); i++) {
    g_autoptr(DdpCluster) cluster = fixture_cluster(racks[i]);
    g_autoptr(DdpCollective) two = model(cluster, 128);
    assert_choices_exact(two, horizon);
  }
}

/* Broadcast: ring only, algBw = busBw, one hop of latency (tuning.cc, sameChannels).  A100 node,
 * 1 MiB: LL 6.6 + 0.6 + 1 048 576/(1000·min(87.7, 120)) = 19.156…; LL128 14 + 1.9 + 1 048 576/
 * 220 800 = 20.649…; Simple 8.4 + 3.4 + 1 048 576/240 000 = 16.169… → Simple.
 * Alpha-beta on ab4, 4 GPUs: (N-1)·α + M/B = 3·5 + 1 000 000/100 000 = 25. */
static void
test_broadcast(void)
{
  g_autoptr(DdpCluster) cluster = a100();
  g_autoptr(DdpCollective) c = model(cluster, 8);
  DdpCollectiveCost cost;
  ddp_collective_broadcast(c, 1048576, &cost);
  g_assert_cmpint(cost.algorithm, ==, DDP_ALGO_RING);
  g_assert_cmpint(cost.protocol, ==, DDP_PROTO_SIMPLE);
  g_assert_cmpfloat_with_epsilon(cost.time_us, 11.8 + 1048576 / 240000.0, 1e-9);
  g_assert_cmpfloat_with_epsilon(cost.busbw_GBs, cost.algbw_GBs, 1e-12);
  g_autoptr(DdpCluster) ab = ab4();
  g_autoptr(DdpCollective) cab = model(ab, 4);
  ddp_collective_broadcast(cab, 1000000, &cost);
  g_assert_cmpfloat_with_epsilon(cost.time_us, 25.0, 1e-9);
}

static void
test_one_gpu(void)
{
  g_autoptr(DdpCluster) cluster = a100();
  g_autoptr(DdpCollective) c = model(cluster, 1);
  DdpCollectiveCost cost;
  ddp_collective_allreduce(c, 1 << 20, &cost);
  g_assert_cmpfloat(cost.time_us, ==, 0.0);
  g_assert_cmpfloat(cost.busbw_GBs, ==, 0.0);
  ddp_collective_broadcast(c, 1 << 20, &cost);
  g_assert_cmpfloat(cost.time_us, ==, 0.0);
  g_assert_cmpuint(ddp_collective_nodes(c), ==, 1);
}

static void
test_errors(void)
{
  g_autoptr(DdpCluster) cluster = a100();
  g_autoptr(GError) error = NULL;
  /* 12 GPUs do not fill whole nodes of 8 */
  g_assert_null(ddp_collective_new(cluster, 12, &error));
  g_assert_error(error, DDP_CLUSTER_ERROR, DDP_CLUSTER_ERROR_INVALID);
  g_clear_error(&error);
  /* LL128 forced on a PCIe node */
  cluster->intra.fabric = DDP_INTRA_PCIE;
  cluster->nccl.protocol = DDP_PROTO_LL128;
  g_assert_null(ddp_collective_new(cluster, 8, &error));
  g_assert_error(error, DDP_COLLECTIVE_ERROR, DDP_COLLECTIVE_ERROR_INVALID);
}

/* Forcing an algorithm and protocol in the cluster restricts auto. */
static void
test_forced(void)
{
  g_autoptr(DdpCluster) cluster = a100();
  cluster->nccl.algorithm = DDP_ALGO_TREE;
  cluster->nccl.protocol = DDP_PROTO_SIMPLE;
  g_autoptr(DdpCollective) c = model(cluster, 8);
  DdpCollectiveCost cost;
  ddp_collective_allreduce(c, 8, &cost);
  g_assert_cmpint(cost.algorithm, ==, DDP_ALGO_TREE);
  g_assert_cmpint(cost.protocol, ==, DDP_PROTO_SIMPLE);
  /* 8 B: log2(8 >> 6) = -1, no correction: 64.4 + 8/110 400 */
  g_assert_cmpfloat_with_epsilon(cost.time_us, 64.4 + 8 / 110400.0, 1e-9);
}

static char *
write_temp(const char *text)
{
  g_autoptr(GError) error = NULL;
  char *path = NULL;
  int fd = g_file_open_tmp("test-collective-XXXXXX.csv", &path, &error);
  g_assert_no_error(error);
  g_close(fd, NULL);
  g_file_set_contents(path, text, -1, &error);
  g_assert_no_error(error);
  return path;
}

static void
test_compare_errors(void)
{
  static const struct {
    const char *text, *message;
  } cases[] = {
    { "gpus,bytes,time_us\n8,64,30\n", "no \"cluster\" column" },
    { "gpus,bytes,time_us,cluster\n8,64,abc,dgx-a100\n", ":2: gpus, bytes and time_us" },
    { "gpus,bytes,time_us,cluster\n8,64,30\n", ":2: expected 4 fields" },
    { "gpus,bytes,time_us,cluster\n8,64,30,no-such-cluster\n", ":2: cluster:" },
    { "gpus,bytes,time_us,cluster\n", "no data rows" },
    { "gpus,bytes,time_us,cluster\n\"8,64,30,dgx-a100\n", ":2: expected 4 fields" },
    { "gpus,bytes,time_us,cluster\n8,64,30,dgx-a100\n1,64,30,dgx-a100\n", ":3: gpus: an AllReduce to compare needs at least 2" },
  };
  for (gsize i = 0; i < G_N_ELEMENTS(cases); i++) {
    g_autofree char *path = write_temp(cases[i].text);
    g_autoptr(GError) error = NULL;
    g_assert_null(ddp_collective_compare_csv(path, &error));
    g_assert_error(error, DDP_COLLECTIVE_ERROR, DDP_COLLECTIVE_ERROR_CSV);
    g_assert_nonnull(strstr(error->message, cases[i].message));
    g_unlink(path);
  }
  /* a good file: quoted fields with commas and "", two curves */
  g_autofree char *path = write_temp("system,cluster,gpus,bytes,time_us\n"
                                     "\"a, \"\"one\"\"\",dgx-a100,8,1048576,40\n"
                                     "\"a, \"\"one\"\"\",dgx-a100,8,2097152,60\n"
                                     "b,dgx-a100,16,1048576,70\n");
  g_autoptr(GError) error = NULL;
  g_autoptr(GPtrArray) curves = ddp_collective_compare_csv(path, &error);
  g_assert_no_error(error);
  g_assert_cmpuint(curves->len, ==, 2);
  const DdpCompareCurve *first = curves->pdata[0];
  g_assert_cmpstr(first->system, ==, "a, \"one\"");
  g_assert_cmpuint(first->points->len, ==, 2);
  g_assert_cmpuint(((const DdpCompareCurve *)curves->pdata[1])->nodes, ==, 2);
  /* measured busbw = 1 048 576/(1000·40)·2·7/8 */
  const DdpComparePoint *p = &g_array_index(first->points, DdpComparePoint, 0);
  g_assert_cmpfloat_with_epsilon(p->measured_busbw_GBs, 1048576 / 40000.0 * 1.75, 1e-9);
  g_assert_cmpfloat_with_epsilon(p->busbw_error, 40.0 / p->predicted.time_us - 1, 1e-12);
  g_unlink(path);
}

/* ---- the nccl (measured-physics) model, docs/collective.md "The nccl model" ---- */

/* A hand-built fixture switched to the nccl model with the loader's defaults: kernel launch 5 µs,
 * host issue 4 µs per GPU, transport efficiencies by fabric (IB 0.96). */
static DdpCluster *
physics(DdpCluster *c)
{
  c->nccl.cost_model = DDP_COST_NCCL;
  c->nccl.launch_us = 5.0;
  c->nccl.host_launch_us = 4.0;
  return c;
}

/* The host floor.  One DGX A100 node (24 channels: the emulated ring graph's 12, doubled), 8 B:
 * Ring/LL is the least latency, NCCL's 6.6 + 14·0.6 = 15.0 µs, plus the launch's 5; one channel
 * (8 B < 32 768 = 512 threads × 8 B × 8 ranks), chunk 8/8 = 1 B:
 *   LL busbw = min(0.5 · 0.8 · 300, llMaxBw 87.7) = 87.7 → algbw 87.7 · 8/14 = 50.114, one channel's
 *   share /24; transfer 8 / (1000 · 50.114/24); fill 7 hops × 1 B / (1000 · 87.7): LL's cap is the
 *   collective's, so the one channel that runs forwards at all of it (docs/collective.md §11.13).
 * With one GPU per process that is the time (the floor, 4 µs, is below it); with nccl-tests' -g 8
 * one thread issues 8 calls of 4 µs: 32 µs, and busbw follows the time. */
static void
test_physics_host_floor(void)
{
  g_autoptr(DdpCluster) cluster = physics(a100());
  g_autoptr(DdpCollective) c = model(cluster, 8);
  DdpCollectiveCost cost;
  ddp_collective_allreduce(c, 8, &cost);
  double algbw = 87.7 * 8 / 14, transfer = 8 / (1000 * algbw / 24), fill = 7 * 1 / (1000 * 87.7);
  g_assert_cmpint(cost.algorithm, ==, DDP_ALGO_RING);
  g_assert_cmpint(cost.protocol, ==, DDP_PROTO_LL);
  g_assert_cmpint(cost.channels, ==, 1);
  g_assert_cmpfloat_with_epsilon(cost.latency_us, 20.0, 1e-9);
  g_assert_cmpfloat_with_epsilon(cost.transfer_us, transfer, 1e-12);
  g_assert_cmpfloat_with_epsilon(cost.fill_us, fill, 1e-12);
  g_assert_cmpfloat_with_epsilon(cost.time_us, 20.0 + transfer + fill, 1e-9);
  g_assert_cmpfloat(cost.host_floor_us, ==, 0);

  ddp_collective_set_gpus_per_process(c, 8);
  ddp_collective_allreduce(c, 8, &cost);
  g_assert_cmpfloat(cost.time_us, ==, 32.0);
  g_assert_cmpfloat(cost.host_floor_us, ==, 32.0);
  g_assert_cmpint(cost.algorithm, ==, DDP_ALGO_RING);   /* the choice is made without the floor */
  g_assert_cmpfloat_with_epsilon(cost.busbw_GBs, 8 / 32000.0 * 1.75, 1e-15);
  /* 1 GiB is far above the floor: the same time whatever -g is */
  DdpCollectiveCost one, eight;
  ddp_collective_allreduce(c, (guint64)1 << 30, &eight);
  ddp_collective_set_gpus_per_process(c, 1);
  ddp_collective_allreduce(c, (guint64)1 << 30, &one);
  g_assert_cmpfloat(one.time_us, ==, eight.time_us);
  /* the other models ignore it: alpha-beta on 4 GPUs, 8 B, is 2·3·5 µs + 2·(3/4)·8/100 000 */
  g_autoptr(DdpCluster) ab = ab4();
  g_autoptr(DdpCollective) abc = model(ab, 4);
  ddp_collective_set_gpus_per_process(abc, 4);
  ddp_collective_allreduce(abc, 8, &cost);
  g_assert_cmpfloat_with_epsilon(cost.time_us, 30.0 + 8 * 1.5 / 100000.0, 1e-12);
}

/* Channel fill and pipeline fill, Ring/Simple forced on one DGX A100 node (24 channels, peak busbw
 * 0.8 · 300 = 240, algbw 240 · 8/14 = 137.14, one channel's hop 240/24 = 10 GB/s):
 *  S = 5 · 32 768 (512 threads × 64 B per channel): 5 channels, chunk S/(5·8) = 4096 B:
 *    transfer S / (1000 · 137.14 · 5/24), fill 7 · 4096 / (1000 · 10);
 *  from 24 · 8 · 512 KiB = 96 MiB on, every channel runs and the chunk is the 512 KiB step: the
 *    time is affine in S with slope 1/(1000 · 137.14) and intercept 5 + 56.0 + 7 · 524 288/10 000. */
static void
test_physics_fill(void)
{
  g_autoptr(DdpCluster) cluster = physics(a100());
  cluster->nccl.algorithm = DDP_ALGO_RING;
  cluster->nccl.protocol = DDP_PROTO_SIMPLE;
  g_autoptr(DdpCollective) c = model(cluster, 8);
  double algbw = 240.0 * 8 / 14;
  DdpCollectiveCost cost;
  guint64 s = 5 * 32768;
  ddp_collective_allreduce(c, s, &cost);
  g_assert_cmpint(cost.channels, ==, 5);
  g_assert_cmpfloat_with_epsilon(cost.transfer_us, s / (1000 * algbw * 5 / 24), 1e-9);
  g_assert_cmpfloat_with_epsilon(cost.fill_us, 7 * 4096 / 10000.0, 1e-9);
  g_assert_cmpfloat_with_epsilon(cost.latency_us, 5 + 8.4 + 14 * 3.4, 1e-9);
  for (guint64 big = (guint64)96 << 20; big <= (guint64)1 << 34; big *= 4) {
    ddp_collective_allreduce(c, big, &cost);
    g_assert_cmpint(cost.channels, ==, 24);
    g_assert_cmpfloat_with_epsilon(cost.time_us, 61.0 + 7 * 524288 / 10000.0 + big / (1000 * algbw), 1e-6);
  }
}

/* Tree forced on one node (a cluster's `[nccl] algorithm = tree`, `allreduce --algo tree`): NCCL
 * runs its single-node chain, so the model must too (it once found nothing and aborted).  One DGX
 * A100 node, Tree/Simple at 1 GiB: every GPU but the ends sends S up and S down its link, so algbw
 * is half the peak busbw, 240 / 2 = 120, against the ring's 240 · 8/14 = 137.14 ((n-1)/n of it:
 * the transfer times' ratio is 8/7).  Auto still takes the ring. */
static void
test_physics_forced_tree_one_node(void)
{
  g_autoptr(DdpCluster) cluster = physics(a100());
  cluster->nccl.algorithm = DDP_ALGO_TREE;
  g_autoptr(DdpCollective) tree = model(cluster, 8);
  guint64 big = (guint64)1 << 30;
  DdpCollectiveCost t, r;
  ddp_collective_allreduce(tree, big, &t);
  g_assert_cmpint(t.algorithm, ==, DDP_ALGO_TREE);
  g_assert_true(ddp_collective_allreduce_with(tree, big, DDP_ALGO_TREE, DDP_PROTO_SIMPLE, &t));
  g_assert_true(ddp_collective_allreduce_with(tree, big, DDP_ALGO_RING, DDP_PROTO_SIMPLE, &r));
  g_assert_cmpfloat_with_epsilon(t.transfer_us, big / (1000 * 120.0), 1e-6);
  g_assert_cmpfloat_with_epsilon(r.transfer_us, big / (1000 * 240.0 * 8 / 14), 1e-6);
  g_assert_cmpfloat_with_epsilon(t.transfer_us / r.transfer_us, 8.0 / 7.0, 1e-9);
  cluster->nccl.algorithm = DDP_ALGO_AUTO;
  g_autoptr(DdpCollective) automatic = model(cluster, 8);
  for (guint64 bytes = 8; bytes <= big; bytes *= 32) {
    ddp_collective_allreduce(automatic, bytes, &t);
    g_assert_cmpint(t.algorithm, ==, DDP_ALGO_RING);
  }
}

/* Peaks from physics.  Two HGX B200 nodes (8 × 400 Gb/s NDR at IB's 0.96 → 8 · 48 = 384 GB/s per
 * node): on two nodes each node has one edge in each of the two trees, so it moves S/2 + S/2 = S
 * each way through its NICs and a tree's algbw may reach 384, the NVLink (0.802 · 900 = 721.8)
 * being faster; Tree/Simple stops first at NCCL's per-channel tree rate (perChMaxTreeBws, Blackwell,
 * 2 nodes: 42.8 GB/s of busbw on each of the tree graph's 8 channels, algbw = busbw / 2 = 171.2);
 * NVLSTree reaches the 384 (NVLS inside the node reaches NCCL's 720 busbw = 411 algbw, its channel
 * cap 8 · 96 · 16/30 = 409.6); the ring's busbw tends to the NIC total, 384, so its
 * algbw to 384 · 16/30.  [inter] latency_us is paid per network hop: 2 on a 2-node tree, 2 on the
 * ring; at 1 B the difference 10 - 2 µs shows as 16 µs. */
static void
test_physics_peaks(void)
{
  g_autoptr(DdpCluster) cluster = physics(with_nvls(b200()));
  g_autoptr(DdpCollective) c = model(cluster, 16);
  guint64 huge = (guint64)1 << 50;
  DdpCollectiveCost cost;
  g_assert_true(ddp_collective_allreduce_with(c, huge, DDP_ALGO_TREE, DDP_PROTO_SIMPLE, &cost));
  g_assert_cmpfloat_with_epsilon(cost.algbw_GBs, 8 * 42.8 / 2, 0.01);
  g_assert_true(ddp_collective_allreduce_with(c, huge, DDP_ALGO_NVLS_TREE, DDP_PROTO_SIMPLE, &cost));
  g_assert_cmpfloat_with_epsilon(cost.algbw_GBs, 384.0, 0.01);
  g_assert_true(ddp_collective_allreduce_with(c, huge, DDP_ALGO_RING, DDP_PROTO_SIMPLE, &cost));
  g_assert_cmpfloat_with_epsilon(cost.algbw_GBs, 384.0 * 16 / 30, 0.01);
  double before[2];
  for (int k = 0; k < 2; k++) {
    g_autoptr(DdpCluster) lat = physics(b200());
    lat->inter.latency_us = k == 0 ? 2.0 : 10.0;
    g_autoptr(DdpCollective) lc = model(lat, 16);
    g_assert_true(ddp_collective_allreduce_with(lc, 1, DDP_ALGO_TREE, DDP_PROTO_LL, &cost));
    before[k] = cost.latency_us;
    g_assert_true(ddp_collective_allreduce_with(lc, 1, DDP_ALGO_RING, DDP_PROTO_LL, &cost));
    before[k] -= cost.latency_us;   /* tree and ring both cross 2 network hops: the difference stays */
    g_assert_cmpfloat_with_epsilon(cost.latency_us,
                                   5 + tuned_latency(lc, DDP_ALGO_RING, DDP_PROTO_LL) + 2 * lat->inter.latency_us, 1e-9);
  }
  g_assert_cmpfloat_with_epsilon(before[0], before[1], 1e-9);
}

/* NCCL's per-channel caps on a tree across nodes (tuning.cc).  LL128's (perChMaxTreeLL128Bws,
 * Blackwell, 2 nodes: 31.67 GB/s of busbw per channel, a tree's algbw half its busbw) on the 16
 * channels two HGX B200 nodes run: 16 · 31.67 / 2 = 253.36 GB/s, below the NIC bound (384 · 120/128
 * = 360); and the tree's own (perChMaxTreeBws, 42.8 on 2 Blackwell nodes, on the tree graph's 8
 * channels as NCCL's tuner counts it, every protocol): 8 · 42.8 / 2 = 171.2, the one that binds.
 * With nc(S) channels (LL128: one per 640 threads × 8 B = 5 120 B) the peak scales: 8 of 16 at
 * 40 960 B move it at 85.6 GB/s.  The ring has neither tree cap; its LL128 cap, 16 · 40 = 640
 * busbw, stays above its NIC bound. */
static void
test_physics_ll128_channel_cap(void)
{
  g_autoptr(DdpCluster) cluster = physics(b200());
  g_autoptr(DdpCollective) c = model(cluster, 16);
  DdpCollectiveCost cost;
  g_assert_true(ddp_collective_allreduce_with(c, (guint64)1 << 50, DDP_ALGO_TREE, DDP_PROTO_LL128, &cost));
  g_assert_cmpint(cost.channels, ==, 16);
  g_assert_cmpfloat_with_epsilon(cost.algbw_GBs, MIN(16 * 31.67 / 2, 8 * 42.8 / 2), 0.01);
  g_assert_true(ddp_collective_allreduce_with(c, 40960, DDP_ALGO_TREE, DDP_PROTO_LL128, &cost));
  g_assert_cmpint(cost.channels, ==, 8);
  g_assert_cmpfloat_with_epsilon(cost.transfer_us, 40960 / (1000 * 8 * 42.8 / 2 * 8 / 16), 1e-9);
  g_assert_true(ddp_collective_allreduce_with(c, (guint64)1 << 50, DDP_ALGO_RING, DDP_PROTO_LL128, &cost));
  g_assert_cmpfloat_with_epsilon(cost.algbw_GBs, 384 * 120.0 / 128 * 16 / 30, 0.01);
}

/* Transports.  Inside a PCIe node of 8 GPUs at 31.5 GB/s (PCIe 4.0 x16): with peer-to-peer NCCL
 * counts 12/15.75 of it, 24 GB/s busbw; without, the host-staged path is also bound by NCCL's CPU
 * rate, 16 GB/s on AMD hosts (AMD_BW) and 10 on Intel (SKL_QPI_BW).  Across nodes over TCP sockets
 * (efficiency 0.4) one 25 Gb/s NIC per node carries 0.4 · 3.125 = 1.25 GB/s: the ring's busbw with
 * one GPU per node; an explicit [inter] efficiency replaces the default. */
static void
test_physics_transports(void)
{
  guint64 huge = (guint64)1 << 50;
  struct { gboolean p2p_off, amd; double busbw; } cases[] = {
    { FALSE, FALSE, 24.0 }, { TRUE, TRUE, 16.0 }, { TRUE, FALSE, 10.0 },
  };
  for (gsize i = 0; i < G_N_ELEMENTS(cases); i++) {
    g_autoptr(DdpCluster) pcie = physics(cluster_new(89, 8, 31.5, 1, 25));
    pcie->intra.fabric = DDP_INTRA_PCIE;
    pcie->intra.p2p_off = cases[i].p2p_off;
    pcie->nccl.amd_cpu = cases[i].amd;
    g_autoptr(DdpCollective) c = model(pcie, 8);
    DdpCollectiveCost cost;
    g_assert_true(ddp_collective_allreduce_with(c, huge, DDP_ALGO_RING, DDP_PROTO_SIMPLE, &cost));
    g_assert_cmpfloat_with_epsilon(cost.busbw_GBs, cases[i].busbw, 1e-3);
    g_assert_false(ddp_collective_allreduce_with(c, huge, DDP_ALGO_RING, DDP_PROTO_LL128, &cost));
  }
  g_autoptr(DdpCluster) tcp = physics(cluster_new(70, 1, 1, 1, 25));
  tcp->inter.fabric = DDP_INTER_ETHERNET;
  g_autoptr(DdpCollective) c = model(tcp, 2);
  DdpCollectiveCost cost;
  g_assert_true(ddp_collective_allreduce_with(c, huge, DDP_ALGO_RING, DDP_PROTO_SIMPLE, &cost));
  g_assert_cmpfloat_with_epsilon(cost.busbw_GBs, 1.25, 1e-4);
  /* NCCL's socket transport has no LL128 across nodes */
  g_assert_false(ddp_collective_allreduce_with(c, huge, DDP_ALGO_RING, DDP_PROTO_LL128, &cost));
  g_autoptr(DdpCluster) tuned = physics(cluster_new(70, 1, 1, 1, 25));
  tuned->inter.fabric = DDP_INTER_ETHERNET;
  tuned->inter.efficiency = 0.8;
  g_autoptr(DdpCollective) tc = model(tuned, 2);
  g_assert_true(ddp_collective_allreduce_with(tc, huge, DDP_ALGO_RING, DDP_PROTO_SIMPLE, &cost));
  g_assert_cmpfloat_with_epsilon(cost.busbw_GBs, 2.5, 1e-4);
}

/* The GPUDirect RDMA flush: on GPUs before Hopper a Simple receive over a GDR network is flushed
 * before the GPU reads it, one more network latency per hop (ncclTopoNeedFlush; tuning.cc "Also add
 * the flush extra latency").  Two A100 nodes, tree (2 network hops, 2·⌊log₂ 2⌋): raising
 * [inter] latency_us by 10 µs adds 2 · 10 = 20 µs to Tree/LL and 2 · 2 · 10 = 40 µs to Tree/Simple.
 * Not on Hopper (sm90: no flush, 20 µs), not over TCP sockets (host memory, no GDR: 20 µs). */
static void
test_physics_flush(void)
{
  struct { int sm; DdpInterFabric fabric; DdpProtocol proto; double extra_us; } cases[] = {
    { 80, DDP_INTER_IB, DDP_PROTO_LL, 20.0 },       { 80, DDP_INTER_IB, DDP_PROTO_SIMPLE, 40.0 },
    { 80, DDP_INTER_EFA, DDP_PROTO_SIMPLE, 40.0 },  { 70, DDP_INTER_ROCE, DDP_PROTO_SIMPLE, 40.0 },
    { 90, DDP_INTER_IB, DDP_PROTO_SIMPLE, 20.0 },   { 80, DDP_INTER_ETHERNET, DDP_PROTO_SIMPLE, 20.0 },
  };
  for (gsize i = 0; i < G_N_ELEMENTS(cases); i++) {
    double t[2];
    for (int k = 0; k < 2; k++) {
      g_autoptr(DdpCluster) cl = physics(cluster_new(cases[i].sm, 8, 300, 8, 200));
      cl->inter.fabric = cases[i].fabric;
      cl->inter.latency_us = 5.0 + 10.0 * k;
      g_autoptr(DdpCollective) c = model(cl, 16);
      DdpCollectiveCost cost;
      g_assert_true(ddp_collective_allreduce_with(c, 1 << 20, DDP_ALGO_TREE, cases[i].proto, &cost));
      t[k] = cost.latency_us;
    }
    g_assert_cmpfloat_with_epsilon(t[1] - t[0], cases[i].extra_us, 1e-9);
  }
}

/* Auto's choice under the nccl model is exact to the byte too: between the sizes where a channel
 * joins or the chunk stops growing every pair's time is affine (ddp_collective_choices). */
static void
test_physics_choices_exact(void)
{
  g_autoptr(DdpCluster) ca = physics(a100()), cb = physics(with_nvls(b200()));
  g_autoptr(DdpCollective) a = model(ca, 16), b1 = model(cb, 8), b2 = model(cb, 16);
  guint64 horizon = (guint64)1 << 34;
  assert_choices_exact(a, horizon);
  assert_choices_exact(b1, horizon);
  assert_choices_exact(b2, horizon);
  DdpCollectiveChoice lat, bw;
  ddp_collective_crossover(b1, horizon, &lat, &bw, NULL);
  g_assert_cmpint(lat.algorithm, ==, DDP_ALGO_RING);
  g_assert_cmpint(lat.protocol, ==, DDP_PROTO_LL);
  /* in the limit NVLS runs at NCCL's Blackwell efficiency of its traffic bound, 0.74 · 721.8 · 8/9 =
   * 474.8 GB/s algbw (busbw 830.9), and beats the ring's 0.802 · 900 = 721.8 busbw */
  g_assert_cmpint(bw.algorithm, ==, DDP_ALGO_NVLS);
  g_assert_cmpint(bw.protocol, ==, DDP_PROTO_SIMPLE);
  DdpCollectiveCost cost;
  g_assert_true(ddp_collective_allreduce_with(b1, (guint64)1 << 40, DDP_ALGO_NVLS, DDP_PROTO_SIMPLE, &cost));
  g_assert_cmpfloat_with_epsilon(cost.busbw_GBs, 830.87, 0.05);
  ddp_collective_allreduce(b1, 64 << 20, &cost);
  g_assert_cmpint(cost.algorithm, ==, DDP_ALGO_NVLS);
}

/* NVLS under the nccl model (docs/collective.md §11.9), by hand on one H100 node (8 GPUs, 8 heads,
 * 16 NVLS channels: ops = 16 · 8 = 128 concurrent chunks):
 *  traffic bound: 450 · 0.824 (NVLink4 accounting) · 8/9 = 329.6 GB/s algbw, 20.6 per channel;
 *  cost per chunk and channel: a 128 KiB chunk's 6.3627 µs at 20.6 GB/s × (1/0.85 − 1) (NCCL's
 *    Hopper nvlsEfficiency read as a fixed loss per chunk) = 1.12283 µs;
 *  chunk (enqueue.cc): 16 KiB below 2 · 128 · 32 KiB = 8 MiB, 32 KiB below 8 · 128 · 64 KiB = 64 MiB,
 *    64 KiB below 64 · 128 · 128 KiB = 1 GiB, 128 KiB from there;
 *  32 MiB: 32 KiB chunks, 32 MiB / (16 · 32 KiB) = 64 chunks per channel = 71.86 µs, plus
 *    33 554 432 / 329 600 = 101.80 µs of traffic: 173.66 µs; fill: one 32 KiB chunk over 2 hops at
 *    2 · 329.6 / 16 GB/s = 1.5907 µs;
 *  8 MiB: 32 KiB chunks, 16 per channel: 17.97 + 25.45 = 43.42 µs; one byte less would take 16 KiB
 *    chunks, 32 per channel (61.38 µs), so it costs what 8 MiB costs (a larger message is never
 *    faster); 4 MiB: 16 per channel again, 17.97 + 12.73 = 30.69 µs;
 *  one loop at least: 1 MiB has 1 MiB / (16 · 16 KiB) = 4 chunks per channel but pays 8, one per
 *    head: 8.98 + 3.18 = 12.16 µs;
 *  in the limit (128 KiB chunks) NVLS runs at 0.85 · 329.6 = 280.2 GB/s, NCCL's own efficiency. */
static void
test_nvls_chunks(void)
{
  g_autoptr(DdpCluster) cl = physics(with_nvls(h100()));
  g_autoptr(DdpCollective) c = model(cl, 8);
  DdpCollectiveCost cost, below;
  g_assert_true(ddp_collective_allreduce_with(c, 32 << 20, DDP_ALGO_NVLS, DDP_PROTO_SIMPLE, &cost));
  g_assert_cmpfloat_with_epsilon(cost.transfer_us, 173.665, 0.002);
  g_assert_cmpfloat_with_epsilon(cost.fill_us, 1.5907, 0.0002);
  g_assert_true(ddp_collective_allreduce_with(c, 8 << 20, DDP_ALGO_NVLS, DDP_PROTO_SIMPLE, &cost));
  g_assert_cmpfloat_with_epsilon(cost.transfer_us, 43.416, 0.002);
  g_assert_true(ddp_collective_allreduce_with(c, (8 << 20) - 1, DDP_ALGO_NVLS, DDP_PROTO_SIMPLE, &below));
  g_assert_cmpfloat_with_epsilon(below.time_us, cost.time_us, 1e-9);
  g_assert_true(ddp_collective_allreduce_with(c, 4 << 20, DDP_ALGO_NVLS, DDP_PROTO_SIMPLE, &below));
  g_assert_cmpfloat_with_epsilon(below.transfer_us, 30.691, 0.002);
  g_assert_true(ddp_collective_allreduce_with(c, 1 << 20, DDP_ALGO_NVLS, DDP_PROTO_SIMPLE, &cost));
  g_assert_cmpfloat_with_epsilon(cost.transfer_us, 12.164, 0.002);
  g_assert_true(ddp_collective_allreduce_with(c, (guint64)1 << 40, DDP_ALGO_NVLS, DDP_PROTO_SIMPLE, &cost));
  g_assert_cmpfloat_with_epsilon(cost.algbw_GBs, 0.85 * 329.6, 0.01);
  /* every byte around the three chunk steps: never faster for more */
  const guint64 steps[] = { (guint64)8 << 20, (guint64)64 << 20, (guint64)1 << 30 };
  for (gsize i = 0; i < G_N_ELEMENTS(steps); i++) {
    double previous = 0;
    for (guint64 b = steps[i] - steps[i] / 4; b <= steps[i] + steps[i] / 4; b += steps[i] / 4096) {
      g_assert_true(ddp_collective_allreduce_with(c, b, DDP_ALGO_NVLS, DDP_PROTO_SIMPLE, &cost));
      g_assert_cmpfloat(cost.time_us, >=, previous);
      previous = cost.time_us;
    }
  }
}

/* NCCL's correction of NVLSTree on Blackwell with an x86 host (2.29 on; docs/collective.md §11.10):
 * two B200 nodes, NVLSTree forced.  NCCL multiplies the bandwidth by treeCorrectionFactor[Simple]
 * [log2(S/64)]: 16 MiB is index 18, 0.7; 512 MiB index 23, 0.9; 1 GiB is past the table, 1.0.  So
 * on an x86 host the transfer is 1/0.7 of an Arm host's at 16 MiB and the same at 1 GiB.  Where the
 * factor rises (0.8 at index 20 to 0.9 at 21: 128 MiB) a byte below costs what 128 MiB costs when
 * that is less.  The nccl-tuner model applies it the same way (NCCL's own table).  On Hopper (two
 * H100 nodes) the nccl model applies it too (x86: 1/0.7 at 16 MiB, 1/0.9 at 512 MiB, the same at
 * 1 GiB), and the nccl-tuner model does not, as NCCL's tuner (minCompCap >= 100). */
static void
test_nvls_tree_correction(void)
{
  g_autoptr(DdpCluster) x86 = physics(with_nvls(b200())), arm = physics(with_nvls(b200()));
  arm->nccl.arm_cpu = TRUE;
  g_autoptr(DdpCollective) cx = model(x86, 16), ca = model(arm, 16);
  DdpCollectiveCost tx, ta;
  g_assert_true(ddp_collective_allreduce_with(cx, 16 << 20, DDP_ALGO_NVLS_TREE, DDP_PROTO_SIMPLE, &tx));
  g_assert_true(ddp_collective_allreduce_with(ca, 16 << 20, DDP_ALGO_NVLS_TREE, DDP_PROTO_SIMPLE, &ta));
  g_assert_cmpfloat_with_epsilon(tx.transfer_us, ta.transfer_us / 0.7, 1e-9);
  g_assert_cmpfloat(tx.latency_us, ==, ta.latency_us);
  g_assert_true(ddp_collective_allreduce_with(cx, (guint64)1 << 30, DDP_ALGO_NVLS_TREE, DDP_PROTO_SIMPLE, &tx));
  g_assert_true(ddp_collective_allreduce_with(ca, (guint64)1 << 30, DDP_ALGO_NVLS_TREE, DDP_PROTO_SIMPLE, &ta));
  g_assert_cmpfloat(tx.time_us, ==, ta.time_us);
  DdpCollectiveCost below, at;
  g_assert_true(ddp_collective_allreduce_with(cx, (128 << 20) - 1, DDP_ALGO_NVLS_TREE, DDP_PROTO_SIMPLE, &below));
  g_assert_true(ddp_collective_allreduce_with(cx, 128 << 20, DDP_ALGO_NVLS_TREE, DDP_PROTO_SIMPLE, &at));
  g_assert_cmpfloat(below.time_us, <=, at.time_us);
  double previous = 0;
  for (guint64 b = 96 << 20; b <= 160 << 20; b += 1 << 16) {
    g_assert_true(ddp_collective_allreduce_with(cx, b, DDP_ALGO_NVLS_TREE, DDP_PROTO_SIMPLE, &tx));
    g_assert_cmpfloat(tx.time_us, >=, previous);
    previous = tx.time_us;
  }
  x86->nccl.cost_model = arm->nccl.cost_model = DDP_COST_NCCL_TUNER;
  g_autoptr(DdpCollective) nx = model(x86, 16), na = model(arm, 16);
  g_assert_true(ddp_collective_allreduce_with(nx, 16 << 20, DDP_ALGO_NVLS_TREE, DDP_PROTO_SIMPLE, &tx));
  g_assert_true(ddp_collective_allreduce_with(na, 16 << 20, DDP_ALGO_NVLS_TREE, DDP_PROTO_SIMPLE, &ta));
  g_assert_cmpfloat_with_epsilon(tx.time_us - tx.latency_us, (ta.time_us - ta.latency_us) / 0.7, 1e-6);

  g_autoptr(DdpCluster) hx = physics(with_nvls(h100())), ha = physics(with_nvls(h100()));
  ha->nccl.arm_cpu = TRUE;
  g_autoptr(DdpCollective) hcx = model(hx, 16), hca = model(ha, 16);
  const struct { guint64 bytes; double factor; } hopper[] = {
    { 16 << 20, 0.7 }, { (guint64)512 << 20, 0.9 }, { (guint64)1 << 30, 1.0 } };
  for (gsize i = 0; i < G_N_ELEMENTS(hopper); i++) {
    g_assert_true(ddp_collective_allreduce_with(hcx, hopper[i].bytes, DDP_ALGO_NVLS_TREE, DDP_PROTO_SIMPLE, &tx));
    g_assert_true(ddp_collective_allreduce_with(hca, hopper[i].bytes, DDP_ALGO_NVLS_TREE, DDP_PROTO_SIMPLE, &ta));
    g_assert_cmpfloat_with_epsilon(tx.transfer_us, ta.transfer_us / hopper[i].factor, 1e-9);
    g_assert_cmpfloat(tx.latency_us, ==, ta.latency_us);
  }
  hx->nccl.cost_model = ha->nccl.cost_model = DDP_COST_NCCL_TUNER;
  g_autoptr(DdpCollective) hnx = model(hx, 16), hna = model(ha, 16);
  g_assert_true(ddp_collective_allreduce_with(hnx, 16 << 20, DDP_ALGO_NVLS_TREE, DDP_PROTO_SIMPLE, &tx));
  g_assert_true(ddp_collective_allreduce_with(hna, 16 << 20, DDP_ALGO_NVLS_TREE, DDP_PROTO_SIMPLE, &ta));
  g_assert_cmpfloat(tx.time_us, ==, ta.time_us);
}

/* An NVLink mesh without a switch (DGX-1V: 6 NVLink2 links per GPU, 150 GB/s): a communicator of
 * part of the node has only the links among its GPUs, (ppn-1)/(gpus_per_node-1) of each GPU's
 * (collective.c intra_link_GBs).  Ring/Simple in the limit, NVLink2 at NCCL's 20 of 25 GB/s:
 *   2 GPUs: busbw 0.8 · 150 · 1/7 = 17.143 GB/s (algbw the same: n/(2(n-1)) = 1);
 *   4 GPUs: 0.8 · 150 · 3/7 = 51.429 busbw;  8 GPUs: 0.8 · 150 = 120;
 * through a switch (NVSwitch) 2 GPUs have the GPU's whole 120. */
static void
test_nvlink_mesh_part_of_node(void)
{
  g_autoptr(DdpCluster) mesh = physics(cluster_new(70, 8, 150, 4, 100));
  mesh->intra.fabric = DDP_INTRA_NVLINK;
  g_autoptr(DdpCluster) sw = physics(cluster_new(70, 8, 150, 4, 100));
  const struct { DdpCluster *cl; guint64 gpus; double busbw; } cases[] = {
    { mesh, 2, 0.8 * 150 / 7 }, { mesh, 4, 0.8 * 150 * 3 / 7 }, { mesh, 8, 120 }, { sw, 2, 120 },
  };
  for (gsize i = 0; i < G_N_ELEMENTS(cases); i++) {
    g_autoptr(DdpCollective) c = model(cases[i].cl, cases[i].gpus);
    DdpCollectiveCost cost;
    g_assert_true(ddp_collective_allreduce_with(c, (guint64)1 << 40, DDP_ALGO_RING, DDP_PROTO_SIMPLE, &cost));
    g_assert_cmpfloat_with_epsilon(cost.busbw_GBs, cases[i].busbw, 0.01);
  }
}

/* Per-regime statistics on a hand-made curve: errors by size regime (< 64 KiB, 64 KiB–16 MiB
 * inclusive, > 16 MiB). */
static void
test_compare_stats(void)
{
  static const struct { guint64 bytes; double error; } pts[] = {
    { 8, 0.10 }, { 65535, -0.30 }, { 65536, 0.05 }, { 16 << 20, -0.20 }, { 1 << 20, 0.15 },
    { (16 << 20) + 1, 0.02 },
  };
  DdpCompareCurve curve = { .points = g_array_new(FALSE, TRUE, sizeof(DdpComparePoint)) };
  for (gsize i = 0; i < G_N_ELEMENTS(pts); i++) {
    DdpComparePoint p = { .bytes = pts[i].bytes, .busbw_error = pts[i].error };
    g_array_append_val(curve.points, p);
  }
  g_assert_cmpint(ddp_size_regime(65535), ==, DDP_REGIME_LATENCY);
  g_assert_cmpint(ddp_size_regime(65536), ==, DDP_REGIME_MID);
  g_assert_cmpint(ddp_size_regime(16 << 20), ==, DDP_REGIME_MID);
  g_assert_cmpint(ddp_size_regime((16 << 20) + 1), ==, DDP_REGIME_BANDWIDTH);
  g_assert_cmpstr(ddp_size_regime_name(DDP_REGIME_MID), ==, "64 KiB - 16 MiB");
  DdpCompareStats st[DDP_REGIME_COUNT];
  ddp_compare_curve_stats(&curve, st);
  /* latency {0.10, 0.30}: median 0.20, max 0.30; mid {0.05, 0.20, 0.15}: 0.15, 0.20; bandwidth
   * {0.02}; all six sorted 0.02 0.05 0.10 0.15 0.20 0.30: median 0.125, max 0.30 */
  g_assert_cmpuint(st[DDP_REGIME_LATENCY].points, ==, 2);
  g_assert_cmpfloat_with_epsilon(st[DDP_REGIME_LATENCY].median_abs_error, 0.20, 1e-12);
  g_assert_cmpfloat_with_epsilon(st[DDP_REGIME_LATENCY].max_abs_error, 0.30, 1e-12);
  g_assert_cmpfloat_with_epsilon(st[DDP_REGIME_MID].median_abs_error, 0.15, 1e-12);
  g_assert_cmpfloat_with_epsilon(st[DDP_REGIME_MID].max_abs_error, 0.20, 1e-12);
  g_assert_cmpfloat_with_epsilon(st[DDP_REGIME_BANDWIDTH].median_abs_error, 0.02, 1e-12);
  g_assert_cmpuint(st[DDP_REGIME_ALL].points, ==, 6);
  g_assert_cmpfloat_with_epsilon(st[DDP_REGIME_ALL].median_abs_error, 0.125, 1e-12);
  g_assert_cmpfloat_with_epsilon(st[DDP_REGIME_ALL].max_abs_error, 0.30, 1e-12);
  /* pooled over two copies: the same medians; an empty curve has NAN */
  g_autoptr(GPtrArray) curves = g_ptr_array_new();
  g_ptr_array_add(curves, &curve);
  g_ptr_array_add(curves, &curve);
  ddp_compare_stats(curves, st);
  g_assert_cmpuint(st[DDP_REGIME_ALL].points, ==, 12);
  g_assert_cmpfloat_with_epsilon(st[DDP_REGIME_ALL].median_abs_error, 0.125, 1e-12);
  g_assert_cmpfloat_with_epsilon(st[DDP_REGIME_ALL].median_abs_error, ddp_compare_median_abs_error(curves), 1e-12);
  g_array_set_size(curve.points, 0);
  ddp_compare_curve_stats(&curve, st);
  g_assert_cmpuint(st[DDP_REGIME_MID].points, ==, 0);
  g_assert_true(isnan(st[DDP_REGIME_MID].median_abs_error));
  g_assert_true(isnan(st[DDP_REGIME_MID].max_abs_error));
  g_array_unref(curve.points);
}

/* The gpus_per_process column: two curves that differ only in it; 8 B on one DGX A100 node takes
 * the host floor 8 · 4 = 32 µs with -g 8 and 20.0 µs with -g 1 (test_physics_host_floor); a bad
 * value is an error naming the line. */
static void
test_compare_gpus_per_process(void)
{
  g_autofree char *cluster = write_temp("[cluster]\nname = a\ngpu = a100\ngpus_per_node = 8\n"
                                        "[intra]\nfabric = nvswitch\nbandwidth_GBs = 300\nlatency_us = 0.7\n");
  g_autofree char *text = g_strdup_printf("cluster,gpus,bytes,time_us,gpus_per_process\n"
                                          "%s,8,8,32,8\n%s,8,8,32,\n", cluster, cluster);
  g_autofree char *path = write_temp(text);
  g_autoptr(GError) error = NULL;
  g_autoptr(GPtrArray) curves = ddp_collective_compare_csv(path, &error);
  g_assert_no_error(error);
  g_assert_cmpuint(curves->len, ==, 2);
  const DdpCompareCurve *g8 = curves->pdata[0], *g1 = curves->pdata[1];
  g_assert_cmpuint(g8->gpus_per_process, ==, 8);
  g_assert_cmpuint(g1->gpus_per_process, ==, 1);
  g_assert_cmpfloat(g_array_index(g8->points, DdpComparePoint, 0).predicted.time_us, ==, 32.0);
  g_assert_cmpfloat(g_array_index(g8->points, DdpComparePoint, 0).busbw_error, ==, 0.0);
  g_assert_cmpfloat_with_epsilon(g_array_index(g1->points, DdpComparePoint, 0).predicted.time_us, 20.0, 0.01);
  static const char *const bad[] = { "0", "x", "9" };
  for (gsize i = 0; i < G_N_ELEMENTS(bad); i++) {
    g_autofree char *t = g_strdup_printf("cluster,gpus,bytes,time_us,gpus_per_process\n%s,8,8,32,%s\n", cluster, bad[i]);
    g_autofree char *p = write_temp(t);
    g_autoptr(GError) e = NULL;
    g_assert_null(ddp_collective_compare_csv(p, &e));
    g_autofree char *want = g_strdup_printf("%s:2: gpus_per_process must be a whole number from 1 to gpus (got \"%s\")", p, bad[i]);
    g_assert_cmpstr(e->message, ==, want);
    g_unlink(p);
  }
  g_unlink(path);
  g_unlink(cluster);
}

/* Reads tests/data/@name and logs every point and the per-regime statistics. */
static GPtrArray *
validation_curves(const char *name)
{
  g_autofree char *path = g_test_build_filename(G_TEST_DIST, "data", name, NULL);
  g_autoptr(GError) error = NULL;
  GPtrArray *curves = ddp_collective_compare_csv(path, &error);
  g_assert_no_error(error);
  for (guint c = 0; c < curves->len; c++) {
    const DdpCompareCurve *cv = curves->pdata[c];
    g_test_message("%s curve %u: %s, %" G_GUINT64_FORMAT " GPUs (-g %u) on %s", name, c + 1, cv->system, cv->gpus,
                   cv->gpus_per_process, cv->cluster);
    for (guint i = 0; i < cv->points->len; i++) {
      const DdpComparePoint *p = &g_array_index(cv->points, DdpComparePoint, i);
      g_test_message("  %12" G_GUINT64_FORMAT " B  measured %10.2f us %8.2f GB/s  predicted %10.2f us %8.2f GB/s  %s/%s  error %+6.1f %%",
                     p->bytes, p->measured_us, p->measured_busbw_GBs, p->predicted.time_us, p->predicted.busbw_GBs,
                     ddp_algorithm_name(p->predicted.algorithm), ddp_protocol_name(p->predicted.protocol),
                     100 * p->busbw_error);
    }
    DdpCompareStats st[DDP_REGIME_COUNT];
    ddp_compare_curve_stats(cv, st);
    for (int r = 0; r < DDP_REGIME_COUNT; r++)
      g_test_message("  %s: median |error| %.1f %%, max %.1f %% (%u points)", ddp_size_regime_name(r),
                     100 * st[r].median_abs_error, 100 * st[r].max_abs_error, st[r].points);
  }
  return curves;
}

static double
curve_median(const GPtrArray *curves, guint i)
{
  return ((const DdpCompareCurve *)curves->pdata[i])->median_abs_error;
}

/* Issue 10 acceptance, on the published nccl-tests curves the project started from
 * (tests/data/allreduce-public.csv: DGX A100 with -g 8, one and two Vultr HGX B200 nodes; clusters
 * in tests/data/validation/, constants from specs and NCCL's source, nothing fitted to a curve):
 * median |busbw error| ≤ 10 % over all points and ≤ 15 % in each size regime.  Measured
 * (docs/collective.md "Validation"): 4.5 % over 92 points; < 64 KiB 5.6 %, 64 KiB–16 MiB 9.8 %,
 * > 16 MiB 2.3 %; per curve A100 2.3 %, one B200 node 5.1 %, two 5.4 % (NCCL's tuner model, the
 * previous default: 28.5 %).  NVLS's chunk sizes, traffic bound and per-chunk cost (§11.9) took
 * the one-node curve from 13.1 to 5.1 %; NCCL's correction of NVLSTree on Blackwell with an
 * x86 host (§11.10) the two-node one from 6.6 % (8.1 % with §11.9 alone) to 5.4 %.  LL's cap
 * shared by the channels that run (§11.13) took the one-node curve from 5.1 to 6.6 % (8 KiB–512 KiB
 * Ring/LL 3–7 % fast: the node sits 4–5 µs above NCCL's table plus the launch) and the two-node one
 * from 3.8 to 4.8 %.  The measured values are asserted with half a point of room, so a change that
 * makes them worse fails. */
static void
test_validation_public(void)
{
  g_autoptr(GPtrArray) curves = validation_curves("allreduce-public.csv");
  DdpCompareStats st[DDP_REGIME_COUNT];
  ddp_compare_stats(curves, st);
  g_assert_cmpuint(curves->len, ==, 3);
  g_assert_cmpuint(st[DDP_REGIME_ALL].points, ==, 92);
  g_assert_cmpuint(st[DDP_REGIME_LATENCY].points, ==, 36);
  g_assert_cmpuint(st[DDP_REGIME_MID].points, ==, 27);
  g_assert_cmpuint(st[DDP_REGIME_BANDWIDTH].points, ==, 29);
  g_assert_cmpfloat(st[DDP_REGIME_ALL].median_abs_error, <=, 0.10);
  for (int r = 0; r < DDP_REGIME_ALL; r++)
    g_assert_cmpfloat(st[r].median_abs_error, <=, 0.15);
  g_assert_cmpfloat(st[DDP_REGIME_ALL].median_abs_error, <, 0.050);
  g_assert_cmpfloat(st[DDP_REGIME_LATENCY].median_abs_error, <, 0.061);
  /* issue 16: NCCL's per-channel tree rate across nodes (docs/collective.md §11.2) took the two
   * B200 nodes' mid regime from 5.0 to 7.9 % (their Tree/LL128 range) and this set's from 7.9 to
   * 9.8 %; NVLS's chunk costs (§11.9) back to 9.8 %; Tree/LL128's fill on NCCL's own chunk
   * (§11.11) to 11.4 %: two B200 nodes' 512 KiB–2 MiB run Tree/LL128 3–24 % faster than measured
   * (a channel's whole share as the chunk had the ring's time there, closer by chance) */
  g_assert_cmpfloat(st[DDP_REGIME_MID].median_abs_error, <, 0.119);
  g_assert_cmpfloat(st[DDP_REGIME_BANDWIDTH].median_abs_error, <, 0.028);
  g_assert_cmpfloat(curve_median(curves, 0), <, 0.028);
  g_assert_cmpfloat(curve_median(curves, 1), <, 0.071);
  g_assert_cmpfloat(curve_median(curves, 2), <, 0.059);
}

/* Pooled statistics of @curves, logged, with issue 10's target asserted (≤ 10 % median overall, ≤ 15 %
 * in each size regime) and the expected number of points. */
static void
pooled_stats(GPtrArray *curves, const char *label, guint points, DdpCompareStats st[DDP_REGIME_COUNT])
{
  ddp_compare_stats(curves, st);
  g_test_message("%s: all %.1f %%, < 64 KiB %.1f %%, 64 KiB-16 MiB %.1f %%, > 16 MiB %.1f %% (%u points)", label,
                 100 * st[DDP_REGIME_ALL].median_abs_error, 100 * st[DDP_REGIME_LATENCY].median_abs_error,
                 100 * st[DDP_REGIME_MID].median_abs_error, 100 * st[DDP_REGIME_BANDWIDTH].median_abs_error,
                 st[DDP_REGIME_ALL].points);
  g_assert_cmpuint(st[DDP_REGIME_ALL].points, ==, points);
  g_assert_cmpfloat(st[DDP_REGIME_ALL].median_abs_error, <=, 0.10);
  for (int r = 0; r < DDP_REGIME_ALL; r++)
    g_assert_cmpfloat(st[r].median_abs_error, <=, 0.15);
}

/* The newer public curves (tests/data/allreduce-2.csv: 2x p4d over EFA, 2x1 V100 over TCP,
 * 8x RTX 4090 PCIe with peer-to-peer off and on) pooled with the three above: 199 points, issue 10's
 * target met (≤ 10 % over all, ≤ 15 % per regime).  Measured: 6.5 % over all; < 64 KiB 6.0 %,
 * 64 KiB–16 MiB 11.8 %, > 16 MiB 4.8 %; per curve p4d 7.2 % (25.7 % before the GPUDirect RDMA
 * flush of Simple receives on pre-Hopper GPUs was charged), V100/TCP 17.6 % (26.6 % before its
 * one-way latency was taken from a published same-zone n1 measurement, 36 µs, instead of a 30 µs
 * estimate), RTX 4090 p2p off 7.9 %, on 7.9 % (25.7 / 21.3 % with the DGX A100 host issue time;
 * their cluster files take 5.27 µs per GPU from another 8x RTX 4090 server's published -g 8 floor,
 * NVIDIA/nccl#1530).  The mid regime met the target once NCCL's per-channel LL128 cap applied (15.7 %
 * before).  Still off: EFA at 20-50 % of its NICs from 512 KiB to 16 MiB, and the TCP curve's floor
 * (docs/collective.md "Validation").  LL's cap shared by the channels that run (§11.13) took the
 * RTX 4090 curves to 5.3 % (p2p off) and 4.0 % (on).  Asserted as measured, with half a point of room. */
static void
test_validation_extended(void)
{
  g_autoptr(GPtrArray) curves = validation_curves("allreduce-2.csv");
  g_autoptr(GPtrArray) first = validation_curves("allreduce-public.csv");
  g_assert_cmpuint(curves->len, ==, 4);
  g_autoptr(GPtrArray) all = g_ptr_array_new();
  for (guint i = 0; i < first->len; i++)
    g_ptr_array_add(all, first->pdata[i]);
  for (guint i = 0; i < curves->len; i++)
    g_ptr_array_add(all, curves->pdata[i]);
  DdpCompareStats st[DDP_REGIME_COUNT];
  pooled_stats(all, "7 public curves", 199, st);
  g_assert_cmpfloat(st[DDP_REGIME_ALL].median_abs_error, <, 0.070);
  g_assert_cmpfloat(st[DDP_REGIME_LATENCY].median_abs_error, <, 0.065);
  g_assert_cmpfloat(st[DDP_REGIME_MID].median_abs_error, <, 0.128);   /* 12.3 % since §11.11 */
  g_assert_cmpfloat(st[DDP_REGIME_BANDWIDTH].median_abs_error, <, 0.053);
  g_assert_cmpfloat(curve_median(curves, 0), <, 0.077);
  g_assert_cmpfloat(curve_median(curves, 1), <, 0.181);
  g_assert_cmpfloat(curve_median(curves, 2), <, 0.058);
  g_assert_cmpfloat(curve_median(curves, 3), <, 0.045);
}

/* NVIDIA/nccl-tests#290 (tests/data/allreduce-h100-290.csv), reported beside the acceptance set:
 * its reporter found the cluster under-performing (about 90 GB/s busbw across two nodes with 8 NDR
 * HCAs each, where the maintainer expects 46-48 GB/s per NIC), so the two-node curves measure a
 * fault, not the fabric.  One node (NVLS, -g 8, 128 MiB-4 GiB): 3.7 % (NVLS at 64 and 128 KiB chunks,
 * §11.9: 405-490 GB/s busbw against 383-474 measured with 2 iterations per size; 4.8 % at NCCL's
 * tuner figure, 476, before); two nodes: the model is 2-3x faster, as the reporter's complaint says
 * it should be. */
static void
test_validation_degraded(void)
{
  g_autoptr(GPtrArray) curves = validation_curves("allreduce-h100-290.csv");
  g_assert_cmpuint(curves->len, ==, 3);
  g_assert_cmpfloat(curve_median(curves, 0), <, 0.042);
  for (guint c = 1; c < 3; c++) {
    const DdpCompareCurve *cv = curves->pdata[c];
    for (guint i = 0; i < cv->points->len; i++)
      g_assert_cmpfloat(g_array_index(cv->points, DdpComparePoint, i).busbw_error, >, 0.0);
  }
}

/* Issue 16's public data beyond two nodes and in NVLink domains (tests/data/allreduce-3.csv): every
 * public curve pooled (allreduce-public, -2, -3, -b300: 307 points) meets median |busbw error| ≤ 10 % overall
 * and ≤ 15 % in each size regime.  Per curve, with half a point of room: the 128-node H100 ring
 * (14.6 %), the Azure A100 pair (9.3 %: 6.7 % before LL's cap was shared by the channels that run,
 * §11.13, which leaves its 8 B–32 KiB Tree/LL 5–29 % fast: the pair sits ~10 µs above NCCL's
 * table plus the launch), the 1-, 2- and 16-host GB300 (7.6, 2.1, 12.0 %: 13.5 and 65.8 % before
 * NVLS's chunk sizes and per-chunk costs, docs/collective.md §11.9; the 2-host one 1.6 % before
 * §11.13), nccl-tests#333's B200 node with local buffers (13.9 %: 22.7 % before §11.13, 16.4 before
 * §11.9: its 4–16 MiB points, where the model now runs 16 KiB chunks).  One curve beyond 2 nodes misses the 15 % target and is asserted where it is, so
 * that any change shows: 128 GB300 GPUs over two racks (a flat ~490 µs up to 16 MiB);
 * docs/collective.md §11.8. */
static void
test_validation_scale(void)
{
  g_autoptr(GPtrArray) third = validation_curves("allreduce-3.csv");
  g_assert_cmpuint(third->len, ==, 7);
  const double guard[] = { 0.081, 0.026, 0.125, 1.593, 0.151, 0.098, 0.144 };
  for (guint i = 0; i < third->len; i++) {
    g_test_message("allreduce-3 curve %u: median %.1f %%", i, 100 * curve_median(third, i));
    g_assert_cmpfloat(curve_median(third, i), <, guard[i]);
  }
  /* OCI's HGX B300 page (allreduce-b300.csv), added after the constants were set: 1 node 0.7 %,
   * 2 nodes 0.2 % (NVLSTree at NCCL's per-channel cap, 8 × 96 × 16/30 = 409.6 GB/s algbw) */
  g_autoptr(GPtrArray) b300 = validation_curves("allreduce-b300.csv");
  g_assert_cmpuint(b300->len, ==, 2);
  g_assert_cmpfloat(curve_median(b300, 0), <, 0.012);
  g_assert_cmpfloat(curve_median(b300, 1), <, 0.007);
  g_autoptr(GPtrArray) all = g_ptr_array_new();
  const char *files[] = { "allreduce-public.csv", "allreduce-2.csv" };
  g_autoptr(GPtrArray) a = validation_curves(files[0]);
  g_autoptr(GPtrArray) b = validation_curves(files[1]);
  GPtrArray *sets[] = { a, b, third, b300 };
  for (gsize k = 0; k < G_N_ELEMENTS(sets); k++)
    for (guint i = 0; i < sets[k]->len; i++)
      g_ptr_array_add(all, sets[k]->pdata[i]);
  DdpCompareStats st[DDP_REGIME_COUNT];
  pooled_stats(all, "every public curve", 307, st);
}

/* Scale properties over every shipped cluster × 1 … 4 096 nodes × 8 B … 16 GiB (issue 16):
 *  - time never falls as the bytes grow;
 *  - from 4 NCCL nodes (NVLink domains on NVL72 racks) on, busbw never exceeds what a node's NICs
 *    carry: a ring moves 2(n-1)/n · S through each node's NICs each way (busbw ≤ B), a double
 *    binary tree over ≥ 4 nodes about 2S (algbw ≤ B/2, busbw < B); only in-network reduction beats
 *    it, where a cluster enables it (hgx-b200-sharp: SHARP moves S each way, so there algbw ≤ B from
 *    2 NCCL nodes on, docs/collective.md §13);
 *  - from 4 nodes on, the bandwidth at ≥ 256 MiB never rises with the node count (more hops, the
 *    same per-node bound), within 0.5 %: algbw, that is, since busbw = algbw · 2(n-1)/n.  A tree's
 *    per-node load is 2S at any node count from 4 on, so its algbw is flat at large sizes and busbw
 *    rises by nccl-tests' factor alone (3.2 % from 4 to 8 nodes of 4 GPUs) — the property holds
 *    of what the tree can do, not of the convention; the 0.5 % is a ring's fill (8 hops of a chunk
 *    S/(nc·n)) shrinking as its latency (2(n-1) hops) grows: the two cross within a few tenths of a
 *    percent.  One named exception, NCCL's own: Tree/LL128 sizes its chunk by nstepsLL128 = 1 +
 *    log2(nodes) + 0.1 · ppn (§11.11), so on dgx2-v100 (ppn 16) going from 2 048 to 4 096 nodes
 *    halves the chunk at 256 MiB (288 000 → 144 000 B: a 16.8 MB share on each of 16 channels holds
 *    58.25 of the larger chunks, under 4 096 nodes' threshold of 58.4 and over 2 048's 54.4) and at
 *    512 MiB (576 000 → 288 000, the same ratio), and the tree's fill, 39 hops of a chunk, halves
 *    with it: algbw 23.8 → 29.0 GB/s at 256 MiB, still far under the NICs' 48. */
static void
test_scale_properties(void)
{
  g_auto(GStrv) names = ddp_datadir_list("scenarios", ".cluster");
  g_assert_nonnull(names);
  guint checked = 0, chunk_halvings = 0;
  for (char **name = names; *name; name++) {
    g_autoptr(GError) error = NULL;
    g_autoptr(DdpCluster) cluster = fixture_cluster(*name);
    double previous_algbw[64] = { 0 };
    guint64 previous_domains = 0;
    for (guint64 nodes = 1; nodes <= 4096; nodes *= 2) {
      if (cluster->max_nodes > 0 && nodes > (guint64)cluster->max_nodes)
        break;
      g_autoptr(DdpCollective) c = ddp_collective_new(cluster, nodes * (guint64)cluster->gpus_per_node, &error);
      g_assert_no_error(error);
      guint64 domains = ddp_collective_domains(c), hosts_per_domain = (nodes + domains - 1) / domains;
      double nic_total = (double)hosts_per_domain * cluster->inter.nics_per_node * cluster->inter.nic_bandwidth_Gbps / 8.0;
      double previous_time = 0;
      int k = 0;
      for (guint64 bytes = 8; bytes <= (guint64)16 << 30; bytes *= 2, k++) {
        guint64 sizes[] = { bytes, bytes + bytes / 2 };
        for (int j = 0; j < 2; j++) {
          DdpCollectiveCost cost;
          ddp_collective_allreduce(c, sizes[j], &cost);
          if (cost.time_us < previous_time * (1 - 1e-12))
            g_error("%s, %" G_GUINT64_FORMAT " nodes: %" G_GUINT64_FORMAT " B take %.4f us, less than the size below (%.4f)",
                    *name, nodes, sizes[j], cost.time_us, previous_time);
          previous_time = cost.time_us;
          /* in-network reduction (SHARP, [nccl] collnet) moves S, not 2S, through a node's NICs:
           * there algbw, not busbw, is what the NICs bound (docs/collective.md §13) */
          if (domains >= 4 && !cluster->nccl.collnet && cost.busbw_GBs > nic_total)
            g_error("%s, %" G_GUINT64_FORMAT " nodes, %" G_GUINT64_FORMAT " B: busbw %.2f GB/s above the NICs' %.2f",
                    *name, nodes, sizes[j], cost.busbw_GBs, nic_total);
          if (domains >= 2 && cluster->nccl.collnet && cost.algbw_GBs > nic_total)
            g_error("%s, %" G_GUINT64_FORMAT " nodes, %" G_GUINT64_FORMAT " B: algbw %.2f GB/s above the NICs' %.2f",
                    *name, nodes, sizes[j], cost.algbw_GBs, nic_total);
          gboolean rose = j == 0 && bytes >= (guint64)256 << 20 && domains >= 4 && previous_domains >= 4 &&
                          cost.algbw_GBs > previous_algbw[k] * (1 + 5e-3);
          if (rose && g_str_equal(*name, "dgx2-v100") && nodes == 4096 && bytes <= (guint64)512 << 20) {
            chunk_halvings++;
            rose = FALSE;
          }
          if (rose)
            g_error("%s, %" G_GUINT64_FORMAT " nodes, %" G_GUINT64_FORMAT " B: algbw %.3f GB/s rose from %.3f at half the nodes",
                    *name, nodes, bytes, cost.algbw_GBs, previous_algbw[k]);
          if (j == 0)
            previous_algbw[k] = cost.algbw_GBs;
          checked++;
        }
      }
      previous_domains = domains;
    }
  }
  g_test_message("%u (cluster, nodes, size) points checked", checked);
  g_assert_cmpuint(checked, >, 5000);
  g_assert_cmpuint(chunk_halvings, ==, 2);
}

/* The same properties over cluster files nobody shipped: 300 valid files drawn from a fixed seed —
 * every built-in GPU, every intra and inter fabric, 1–16 GPUs a node, 1–32 NICs of 25–800 Gb/s,
 * oversubscription 1–4 above leaves of 1–32 nodes, NVL domains of 2–18 hosts on the GB GPUs — at 1 to
 * 512 nodes, 8 B–4 GiB: every time finite and positive, never falling as the size grows, and from 4
 * NVLink domains on busbw within the domain's NICs at line rate (the ring and tree bounds of
 * docs/collective.md §11.1), and where every other InfiniBand file turns SHARP on ([nccl] collnet), the
 * in-network reduction's bound instead: algbw within the NICs from 2 domains on (§13).  Users
 * write their own cluster files; the shipped ones are not the only shapes that must behave. */
static void
test_scale_random_clusters(void)
{
  static const char *const intra[] = { "nvswitch", "nvlink", "pcie" };
  static const char *const inter[] = { "ib", "roce", "efa", "tcpxo", "ethernet", "tcp" };
  static const int ppns[] = { 1, 2, 4, 8, 16 }, nic_counts[] = { 1, 2, 4, 8, 16, 32 };
  static const double nic_Gbps[] = { 25, 100, 200, 400, 800 }, intra_GBs[] = { 16, 64, 150, 300, 450, 900 };
  static const double overs[] = { 1, 1, 2, 4 }, leaves[] = { 1, 8, 32 };
  static const guint64 node_counts[] = { 1, 2, 3, 4, 8, 16, 64, 512 };
  const char *const *gpus = ddp_gpu_names();
  guint n_gpus = g_strv_length((char **)gpus);
  g_autoptr(GRand) rand = g_rand_new_with_seed(20261128);
  guint checked = 0, collnets = 0, collnet_runs = 0;
  for (int trial = 0; trial < 300; trial++) {
    const char *gpu = gpus[g_rand_int_range(rand, 0, (gint32)n_gpus)];
    int ppn = ppns[g_rand_int_range(rand, 0, G_N_ELEMENTS(ppns))];
    const char *intra_fabric = intra[g_rand_int_range(rand, 0, G_N_ELEMENTS(intra))];
    g_autofree char *domain = NULL;   /* a multi-host NVLink domain: NVSwitch only (cluster.c refuses others) */
    if (g_str_has_prefix(gpu, "gb") && g_str_equal(intra_fabric, "nvswitch") && (ppn == 2 || ppn == 4) && g_rand_boolean(rand))
      domain = g_strdup_printf("domain_gpus = %d\n", ppn * g_rand_int_range(rand, 2, 19));
    g_autofree char *text = g_strdup_printf(
        "[cluster]\nname = random\ngpu = %s\ngpus_per_node = %d\n\n"
        "[intra]\nfabric = %s\nbandwidth_GBs = %g\nlatency_us = 0.7\n%s\n"
        "[inter]\nfabric = %s\nnics_per_node = %d\nnic_bandwidth_Gbps = %g\nlatency_us = %g\n"
        "oversubscription = %g\nnodes_per_leaf = %g\nrail_optimized = %s\n",
        gpu, ppn, intra_fabric, intra_GBs[g_rand_int_range(rand, 0, G_N_ELEMENTS(intra_GBs))], domain ? domain : "",
        inter[g_rand_int_range(rand, 0, G_N_ELEMENTS(inter))], nic_counts[g_rand_int_range(rand, 0, G_N_ELEMENTS(nic_counts))],
        nic_Gbps[g_rand_int_range(rand, 0, G_N_ELEMENTS(nic_Gbps))], g_rand_boolean(rand) ? 2.0 : 23.0,
        overs[g_rand_int_range(rand, 0, G_N_ELEMENTS(overs))], leaves[g_rand_int_range(rand, 0, G_N_ELEMENTS(leaves))],
        g_rand_boolean(rand) ? "true" : "false");
    /* every other InfiniBand file reduces in its switches (SHARP): S each way through a node's NICs */
    gboolean collnet = trial % 2 == 1 && strstr(text, "\n[inter]\nfabric = ib\n") != NULL;
    if (collnet) {
      char *with = g_strconcat(text, "\n[nccl]\ncollnet = true\n", NULL);
      g_free(text);
      text = with;
      collnets++;
    }
    g_autoptr(GError) error = NULL;
    g_autoptr(DdpKeyFile) kf = ddp_keyfile_load_data("random.cluster", text, &error);
    g_assert_no_error(error);
    g_autoptr(DdpCluster) cluster = ddp_cluster_from_keyfile(kf, &error);
    if (!cluster)
      g_error("trial %d: a valid file was refused (%s):\n%s", trial, error->message, text);
    for (gsize n = 0; n < G_N_ELEMENTS(node_counts); n++) {
      guint64 gpus_total = node_counts[n] * (guint64)ppn;
      if (gpus_total < 2)
        continue;
      g_autoptr(DdpCollective) c = ddp_collective_new(cluster, gpus_total, &error);
      g_assert_no_error(error);
      guint64 domains = ddp_collective_domains(c), hosts_per_domain = (node_counts[n] + domains - 1) / domains;
      double nic_total = (double)hosts_per_domain * cluster->inter.nics_per_node * cluster->inter.nic_bandwidth_Gbps / 8.0;
      double previous_time = 0;
      for (guint64 bytes = 8; bytes <= (guint64)4 << 30; bytes *= 4) {
        DdpCollectiveCost cost;
        ddp_collective_allreduce(c, bytes, &cost);
        if (!isfinite(cost.time_us) || cost.time_us <= 0 || cost.time_us < previous_time * (1 - 1e-12))
          g_error("trial %d, %" G_GUINT64_FORMAT " GPUs, %" G_GUINT64_FORMAT " B: %.4f us after %.4f us for a smaller size:\n%s",
                  trial, gpus_total, bytes, cost.time_us, previous_time, text);
        if (domains >= 4 && !collnet && cost.busbw_GBs > nic_total)
          g_error("trial %d, %" G_GUINT64_FORMAT " GPUs, %" G_GUINT64_FORMAT " B: busbw %.2f GB/s above the NICs' %.2f:\n%s",
                  trial, gpus_total, bytes, cost.busbw_GBs, nic_total, text);
        if (domains >= 2 && collnet && cost.algbw_GBs > nic_total)
          g_error("trial %d, %" G_GUINT64_FORMAT " GPUs, %" G_GUINT64_FORMAT " B: algbw %.2f GB/s above the NICs' %.2f:\n%s",
                  trial, gpus_total, bytes, cost.algbw_GBs, nic_total, text);
        if (cost.algorithm == DDP_ALGO_COLLNET_DIRECT || cost.algorithm == DDP_ALGO_COLLNET_CHAIN)
          collnet_runs++;
        previous_time = cost.time_us;
        checked++;
      }
    }
  }
  g_test_message("%u (random cluster, GPUs, size) points checked; %u files with collnet, CollNet chosen at %u points",
                 checked, collnets, collnet_runs);
  g_assert_cmpuint(checked, >, 10000);
  g_assert_cmpuint(collnets, >, 20);
  g_assert_cmpuint(collnet_runs, >, 100);
}

/* NVLink domains (NVL72): inside one domain the ranks of several hosts are one NCCL node — NVLS over
 * all of them, no network hop — and across domains the NICs of a domain's hosts are pooled.  On
 * gb300-nvl72 (4 GPUs per host, 72 per domain): 64 GPUs are 16 hosts but one domain; 144 GPUs are 2
 * domains of 18 hosts, each with 18 × 4 × 800 Gb/s = 7 200 GB/s of NICs; 32 hosts spread as 2 × 16. */
static void
test_nvlink_domains(void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(DdpCluster) cluster = fixture_cluster("gb300-nvl72");
  g_assert_cmpint(ddp_cluster_domain_nodes(cluster), ==, 18);
  g_autoptr(DdpCollective) one = ddp_collective_new(cluster, 64, &error);
  g_assert_no_error(error);
  g_assert_cmpuint(ddp_collective_nodes(one), ==, 16);
  g_assert_cmpuint(ddp_collective_domains(one), ==, 1);
  DdpCollectiveCost cost;
  ddp_collective_allreduce(one, (guint64)1 << 30, &cost);
  g_assert_cmpint(cost.algorithm, ==, DDP_ALGO_NVLS);   /* NVLS across the 16 hosts, no NIC */
  g_autoptr(DdpCollective) two = ddp_collective_new(cluster, 128, &error);
  g_assert_no_error(error);
  g_assert_cmpuint(ddp_collective_nodes(two), ==, 32);
  g_assert_cmpuint(ddp_collective_domains(two), ==, 2);
  ddp_collective_allreduce(two, (guint64)1 << 30, &cost);
  g_assert_cmpint(cost.algorithm, ==, DDP_ALGO_NVLS_TREE);
  /* The same 128 GPUs as 32 separate 4-GPU servers (domain_gpus = gpus_per_node) cross the NICs
   * of each host (8 × 400 Gb/s... here 4 × 800 = 400 GB/s a host): far slower at 1 GiB. */
  g_autoptr(DdpCluster) servers = ddp_cluster_load("gb300-nvl72", &error);
  servers->intra.domain_gpus = servers->gpus_per_node;
  g_autoptr(DdpCollective) split = ddp_collective_new(servers, 128, &error);
  g_assert_no_error(error);
  g_assert_cmpuint(ddp_collective_domains(split), ==, 32);
  DdpCollectiveCost hosts_cost;
  ddp_collective_allreduce(split, (guint64)1 << 30, &hosts_cost);
  /* 32 nodes: tree load 2, so algbw ≤ 4 · 100 · 0.96 / 2 = 192 GB/s */
  g_assert_cmpfloat(hosts_cost.algbw_GBs, <=, 192.0 + 1e-9);
  g_assert_cmpfloat(cost.algbw_GBs, >, 2 * hosts_cost.algbw_GBs);
}

/* Auto runs no LL across NVLink domains that span hosts (docs/collective.md §11.13: both public
 * multi-rack curves sit flat at NCCL's LL128 latency up to 128 KiB).  On gb200-nvl72 with NVLS off
 * (NCCL_NVLS_ENABLE=0, as OCI's two-rack GB200 run) at 8 B: two racks (128 GPUs) take LL128; one
 * rack (64 GPUs over 16 hosts, one NCCL node) and the same 128 GPUs as 32 separate servers keep LL,
 * the least latency; a forced LL still runs across the racks, faster than what auto takes. */
static void
test_no_ll_across_domains(void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(DdpCluster) cluster = fixture_cluster("gb200-nvl72");
  cluster->nccl.nvls = FALSE;
  g_autoptr(DdpCollective) rack = model(cluster, 64), racks = model(cluster, 128);
  DdpCollectiveCost cost, forced;
  ddp_collective_allreduce(rack, 8, &cost);
  g_assert_cmpint(cost.protocol, ==, DDP_PROTO_LL);
  ddp_collective_allreduce(racks, 8, &cost);
  g_assert_cmpuint(ddp_collective_domains(racks), ==, 2);
  g_assert_cmpint(cost.protocol, ==, DDP_PROTO_LL128);
  g_assert_true(ddp_collective_allreduce_with(racks, 8, DDP_ALGO_TREE, DDP_PROTO_LL, &forced));
  g_assert_cmpfloat(forced.time_us, <, cost.time_us);
  g_autoptr(DdpCluster) servers = ddp_cluster_load("gb200-nvl72", &error);
  servers->intra.domain_gpus = servers->gpus_per_node;
  servers->nccl.nvls = FALSE;
  g_autoptr(DdpCollective) split = model(servers, 128);
  ddp_collective_allreduce(split, 8, &cost);
  g_assert_cmpint(cost.protocol, ==, DDP_PROTO_LL);
}

/* NVLSTree's NVLS stage is never faster than NVLS alone on the same node or domain
 * (docs/collective.md §11.12): on gb200-nvl72 and gb300-nvl72 (Grace hosts: no tree correction),
 * 128 GPUs over two racks against 64 in one, NVLSTree's transfer is at least NVLS's from 1 MiB to
 * 16 GiB, and equal where NVLS's 16 KiB chunks cost more than NVLSTree's own stage (256 MiB: the
 * racks' NICs, 64 × 4 × 400 Gb/s, are far from binding); so two racks never beat one.  On two DGX
 * H100 nodes the bound holds against one node's NVLS too, and at 1 GiB NVLSTree's stage is its own
 * (the NICs: 8 × 400 Gb/s, the tree's load 1 S on two nodes, below NVLS on 8 GPUs). */
static void
test_nvls_tree_stage_bound(void)
{
  const char *const racks[] = { "gb200-nvl72", "gb300-nvl72" };
  for (gsize i = 0; i < G_N_ELEMENTS(racks); i++) {
    g_autoptr(GError) error = NULL;
    g_autoptr(DdpCluster) cluster = fixture_cluster(racks[i]);
    g_autoptr(DdpCollective) one = model(cluster, 64), two = model(cluster, 128);
    g_assert_cmpuint(ddp_collective_domains(two), ==, 2);
    for (guint64 S = (guint64)1 << 20; S <= (guint64)1 << 34; S *= 2) {
      DdpCollectiveCost in_rack, across;
      g_assert_true(ddp_collective_allreduce_with(one, S, DDP_ALGO_NVLS, DDP_PROTO_SIMPLE, &in_rack));
      g_assert_true(ddp_collective_allreduce_with(two, S, DDP_ALGO_NVLS_TREE, DDP_PROTO_SIMPLE, &across));
      g_assert_cmpfloat(across.transfer_us, >=, in_rack.transfer_us * (1 - 1e-12));
      g_assert_cmpfloat(across.time_us, >=, in_rack.time_us);
    }
    DdpCollectiveCost in_rack, across;
    g_assert_true(ddp_collective_allreduce_with(one, (guint64)1 << 28, DDP_ALGO_NVLS, DDP_PROTO_SIMPLE, &in_rack));
    g_assert_true(ddp_collective_allreduce_with(two, (guint64)1 << 28, DDP_ALGO_NVLS_TREE, DDP_PROTO_SIMPLE, &across));
    g_assert_cmpfloat_with_epsilon(across.transfer_us, in_rack.transfer_us, 1e-9);
  }
  g_autoptr(GError) error = NULL;
  g_autoptr(DdpCluster) h100 = fixture_cluster("dgx-h100");
  g_autoptr(DdpCollective) node = model(h100, 8), pair = model(h100, 16);
  for (guint64 S = (guint64)1 << 20; S <= (guint64)1 << 34; S *= 2) {
    DdpCollectiveCost alone, tree;
    g_assert_true(ddp_collective_allreduce_with(node, S, DDP_ALGO_NVLS, DDP_PROTO_SIMPLE, &alone));
    g_assert_true(ddp_collective_allreduce_with(pair, S, DDP_ALGO_NVLS_TREE, DDP_PROTO_SIMPLE, &tree));
    g_assert_cmpfloat(tree.transfer_us, >=, alone.transfer_us * (1 - 1e-12));
  }
  DdpCollectiveCost alone, tree;
  g_assert_true(ddp_collective_allreduce_with(node, (guint64)1 << 30, DDP_ALGO_NVLS, DDP_PROTO_SIMPLE, &alone));
  g_assert_true(ddp_collective_allreduce_with(pair, (guint64)1 << 30, DDP_ALGO_NVLS_TREE, DDP_PROTO_SIMPLE, &tree));
  g_assert_cmpfloat(tree.transfer_us, >, 1.05 * alone.transfer_us);
}

/* The double binary tree's NIC load (NCCL trees.cc): a node moves S each way on two nodes, 1.5 S on
 * three, 2S from four on.  Forced Tree/Simple on DGX H100 (8 × 400 Gb/s at 0.96 = 384 GB/s a node)
 * with 32 channels (so that NCCL's per-channel tree rate, 32 × 41.4 or 36 GB/s / 2, stays above the
 * NICs): on 2 nodes the NICs would carry 384, but the chain inside the node moves S each way too
 * and NVLink 4 carries 450 · 20.6/25 = 370.8; 256 on 3 nodes, 192 on 4 and on 64. */
static void
test_tree_node_load(void)
{
  g_autoptr(GError) error = NULL;
  guint64 huge = (guint64)1 << 50;
  const struct { guint64 nodes; double algbw; } cases[] = { { 2, 370.8 }, { 3, 256.0 }, { 4, 192.0 }, { 64, 192.0 } };
  g_autoptr(DdpCluster) cluster = fixture_cluster("dgx-h100");
  cluster->nccl.channels = 32;
  for (gsize i = 0; i < G_N_ELEMENTS(cases); i++) {
    g_autoptr(DdpCollective) c = ddp_collective_new(cluster, cases[i].nodes * 8, &error);
    g_assert_no_error(error);
    DdpCollectiveCost cost;
    g_assert_true(ddp_collective_allreduce_with(c, huge, DDP_ALGO_TREE, DDP_PROTO_SIMPLE, &cost));
    g_assert_cmpfloat_with_epsilon(cost.algbw_GBs, cases[i].algbw, 1e-3);   /* algbw comes back from S / time */
  }
}


/* A Tree/LL128 channel's pipeline fill is charged on NCCL's own chunk (enqueue.cc calcCollChunking,
 * docs/collective.md §11.11).  16 DGX A100 nodes (128 GPUs, ppn 8, 16 channels running from 80 KiB
 * on): nstepsLL128 = 1 + log2(16) + 0.1 · 8 = 5.8; the LL128 step of 576 000 B is halved while a
 * channel's share holds fewer than 5.8 · 64 / 8 = 46.4 chunks (to 72 000, the first value not above
 * 128 KiB), then while it holds fewer than 5.8 · 16 / 8 = 11.6 (to 18 000, the first not above
 * 32 KiB).  At 2 MiB (131 072 B a channel) the chunk is 18 000 B; at 256 000 B (16 000 a channel,
 * chunk min(18 000, 16 000)) the whole share is one chunk.  The fill crosses the same hops at the
 * same per-channel rates in both, so it scales with the chunk: fill(2 MiB) = 18/16 · fill(256 000).
 * Taking a channel's whole share as the chunk, as before, gave 131 072/16 000 of it (4× NCCL's own
 * tuner at 2 MiB). */
static void
test_tree_ll128_chunk(void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(DdpCluster) cluster = fixture_cluster("dgx-a100");
  g_autoptr(DdpCollective) c = ddp_collective_new(cluster, 128, &error);
  g_assert_no_error(error);
  DdpCollectiveCost small, mid;
  g_assert_true(ddp_collective_allreduce_with(c, 256000, DDP_ALGO_TREE, DDP_PROTO_LL128, &small));
  g_assert_true(ddp_collective_allreduce_with(c, 2097152, DDP_ALGO_TREE, DDP_PROTO_LL128, &mid));
  g_assert_cmpint(small.channels, ==, 16);
  g_assert_cmpint(mid.channels, ==, 16);
  g_assert_cmpfloat(small.fill_us, >, 0);
  g_assert_cmpfloat_with_epsilon(mid.fill_us, small.fill_us * 18000.0 / 16000.0, 1e-9);
}

/* ---- AllGather, ReduceScatter, Broadcast (docs/collective.md §12) ---- */

static void
test_ops_names(void)
{
  for (int op = 0; op < DDP_OP_COUNT; op++)
    g_assert_cmpint(ddp_collective_op_parse(ddp_collective_op_name(op)), ==, op);
  g_assert_cmpint(ddp_collective_op_parse("allgather"), ==, DDP_OP_ALL_GATHER);
  g_assert_cmpint(ddp_collective_op_parse("ReduceScatter"), ==, DDP_OP_REDUCE_SCATTER);
  g_assert_cmpint(ddp_collective_op_parse("all-gather"), ==, -1);
  /* nccl-tests PERFORMANCE.md: 2(n-1)/n, (n-1)/n, (n-1)/n, 1; n = 8 */
  g_assert_cmpfloat_with_epsilon(ddp_collective_op_bus_factor(DDP_OP_ALL_REDUCE, 8), 1.75, 1e-12);
  g_assert_cmpfloat_with_epsilon(ddp_collective_op_bus_factor(DDP_OP_ALL_GATHER, 8), 0.875, 1e-12);
  g_assert_cmpfloat_with_epsilon(ddp_collective_op_bus_factor(DDP_OP_REDUCE_SCATTER, 8), 0.875, 1e-12);
  g_assert_cmpfloat_with_epsilon(ddp_collective_op_bus_factor(DDP_OP_BROADCAST, 8), 1.0, 1e-12);
}

/* Alpha-beta ring, S the total buffer: AllGather/ReduceScatter (n-1)/n · S/B + (n-1)·α, Broadcast
 * (n-1)·α + S/B (a pipelined chain), on the ab4 fixture:
 *   4 GPUs, S = 1 048 576: 3/4 · 10.48576 + 3·5 = 22.86432;  Broadcast 15 + 10.48576 = 25.48576
 *   8 GPUs (2 nodes, B = 3.125, α = 10), S = 10^6: 7/8 · 320 + 70 = 350;  Broadcast 70 + 320 = 390 */
static void
test_ops_alpha_beta(void)
{
  g_autoptr(DdpCluster) cluster = ab4();
  static const struct {
    guint64 gpus, bytes;
    double gather_us, broadcast_us;
  } cases[] = { { 4, 1048576, 22.86432, 25.48576 }, { 8, 1000000, 350.0, 390.0 } };
  for (gsize i = 0; i < G_N_ELEMENTS(cases); i++) {
    g_autoptr(DdpCollective) c = model(cluster, cases[i].gpus);
    double n = (double)cases[i].gpus;
    for (DdpCollectiveOp op = DDP_OP_ALL_GATHER; op <= DDP_OP_REDUCE_SCATTER; op++) {
      DdpCollectiveCost cost;
      ddp_collective_cost(c, op, cases[i].bytes, &cost);
      g_assert_cmpfloat_with_epsilon(cost.time_us, cases[i].gather_us, 1e-9);
      g_assert_cmpint(cost.algorithm, ==, DDP_ALGO_RING);
      /* busbw = algbw · (n-1)/n, algbw = S/t */
      g_assert_cmpfloat_with_epsilon(cost.busbw_GBs, cases[i].bytes / (1000.0 * cases[i].gather_us) * (n - 1) / n, 1e-9);
    }
    DdpCollectiveCost b;
    ddp_collective_cost(c, DDP_OP_BROADCAST, cases[i].bytes, &b);
    g_assert_cmpfloat_with_epsilon(b.time_us, cases[i].broadcast_us, 1e-9);
    g_assert_cmpfloat_with_epsilon(b.busbw_GBs, b.algbw_GBs, 1e-12);
    /* one ring pass is half an AllReduce's bandwidth term and half its latency */
    DdpCollectiveCost ar, ag;
    ddp_collective_cost(c, DDP_OP_ALL_REDUCE, cases[i].bytes, &ar);
    ddp_collective_allgather(c, cases[i].bytes, &ag);
    if (ar.algorithm == DDP_ALGO_RING)
      g_assert_cmpfloat_with_epsilon(ag.time_us, ar.time_us / 2, 1e-9);
  }
}

/* NCCL's tuner (nccl-tuner), ring, one pass of n-1 steps:
 *   one A100 node (ring graph 12 × 20: busBw 240): algBw = 240 · 8/7 = 274.286 (AllReduce's 137.14
 *   doubled); latency 8.4 + 7 · 3.4 = 32.2 (Simple), 6.6 + 7 · 0.6 = 10.8 (LL);
 *   two nodes (8 × 24 on ≤ 2 nodes: busBw 192): algBw 192 · 16/15 = 204.8; Simple latency
 *   8.4 + 14 · max(3.4, 3) + 1 · 14 = 70.0, half AllReduce's steps (131.6 - 8.4 = 123.2). */
static void
test_ops_tuner_ring(void)
{
  g_autoptr(DdpCluster) cluster = a100();
  cluster->nccl.protocol = DDP_PROTO_SIMPLE;
  g_autoptr(DdpCollective) one = model(cluster, 8);
  guint64 s = (guint64)1 << 30;
  DdpCollectiveCost cost;
  ddp_collective_reduce_scatter(one, s, &cost);
  g_assert_cmpint(cost.algorithm, ==, DDP_ALGO_RING);
  g_assert_cmpint(cost.protocol, ==, DDP_PROTO_SIMPLE);
  g_assert_cmpfloat_with_epsilon(cost.latency_us, 32.2, 1e-9);
  g_assert_cmpfloat_with_epsilon(cost.time_us, 32.2 + s / (1000 * 240.0 * 8 / 7), 1e-6);
  g_autoptr(DdpCollective) two = model(cluster, 16);
  ddp_collective_allgather(two, s, &cost);
  g_assert_cmpfloat_with_epsilon(cost.latency_us, 70.0, 1e-9);
  g_assert_cmpfloat_with_epsilon(cost.time_us, 70.0 + s / (1000 * 204.8), 1e-6);
  /* a forced tree is AllReduce's; AllGather takes the ring.  Auto at 8 B: LL, 10.8 µs + 8/(1000·algBw) */
  cluster->nccl.protocol = DDP_PROTO_AUTO;
  cluster->nccl.algorithm = DDP_ALGO_TREE;
  g_autoptr(DdpCollective) tree = model(cluster, 8);
  ddp_collective_allgather(tree, 8, &cost);
  g_assert_cmpint(cost.algorithm, ==, DDP_ALGO_RING);
  g_assert_cmpint(cost.protocol, ==, DDP_PROTO_LL);
  g_assert_cmpfloat_with_epsilon(cost.latency_us, 10.8, 1e-9);
}

/* NVLS AllGather on one H100 node (tuning/nvls.cc): the NVLS graph is 8 channels × 40 GB/s
 * (test_nvls_one_node), busBw = 8 · 40 · 0.85 · 7/8 · 7/8 = 208.25 (no ×2: one pass), algBw =
 * 208.25 · 8/7 = 238, latency 25 µs.  The ring (12 × 30 = 360 busBw, algBw 411.4) is faster for
 * large buffers, so auto takes NVLS only when forced here; across nodes NVLS AllGather needs
 * CollNet and the ring answers. */
static void
test_ops_nvls(void)
{
  g_autoptr(DdpCluster) cluster = with_nvls(h100());
  cluster->nccl.algorithm = DDP_ALGO_NVLS;
  g_autoptr(DdpCollective) c = model(cluster, 8);
  guint64 s = (guint64)1 << 30;
  DdpCollectiveCost cost;
  ddp_collective_allgather(c, s, &cost);
  g_assert_cmpint(cost.algorithm, ==, DDP_ALGO_NVLS);
  g_assert_cmpfloat_with_epsilon(cost.time_us, 25.0 + s / 238000.0, 1e-6);
  g_assert_cmpfloat_with_epsilon(cost.busbw_GBs, s / (1000.0 * cost.time_us) * 7 / 8, 1e-9);
  cluster->nccl.algorithm = DDP_ALGO_AUTO;
  g_autoptr(DdpCollective) autoc = model(cluster, 8);
  ddp_collective_allgather(autoc, s, &cost);
  g_assert_cmpint(cost.algorithm, ==, DDP_ALGO_RING);
  g_assert_cmpfloat_with_epsilon(cost.time_us, 8.4 + 7 * 3.4 + s / (1000 * 360.0 * 8 / 7), 1e-6);
  g_autoptr(DdpCollective) two = model(cluster, 16);
  ddp_collective_allgather(two, 1 << 20, &cost);
  g_assert_cmpint(cost.algorithm, ==, DDP_ALGO_RING);
}

/* The nccl model: AllReduce's ring peak (test_physics_fill: busbw 0.8 · 300 = 240, a channel's hop
 * 240/24 = 10 GB/s) through one pass: algbw 240 · 8/7; once every channel runs with 512 KiB
 * chunks the time is 5 (launch) + 32.2 + 7 · 524 288/10 000 (fill: n-1 hops) + S/(1000 · 274.29).
 * One rank: zero. */
static void
test_ops_physics(void)
{
  g_autoptr(DdpCluster) cluster = physics(a100());
  cluster->nccl.protocol = DDP_PROTO_SIMPLE;
  g_autoptr(DdpCollective) c = model(cluster, 8);
  for (guint64 big = (guint64)96 << 20; big <= (guint64)1 << 34; big *= 4) {
    DdpCollectiveCost cost;
    ddp_collective_allgather(c, big, &cost);
    g_assert_cmpint(cost.channels, ==, 24);
    g_assert_cmpfloat_with_epsilon(cost.latency_us, 37.2, 1e-9);
    g_assert_cmpfloat_with_epsilon(cost.time_us, 37.2 + 7 * 524288 / 10000.0 + big / (1000 * 240.0 * 8 / 7), 1e-6);
  }
  g_autoptr(DdpCollective) single = model(cluster, 1);
  DdpCollectiveCost cost;
  ddp_collective_cost(single, DDP_OP_REDUCE_SCATTER, 1 << 20, &cost);
  g_assert_cmpfloat(cost.time_us, ==, 0.0);
}

/* @c's transport caveat: none on one node; on two, three lines, each begun with "> " and ended by a
 * newline, the first beginning with @first and the whole holding @phrase. */
static void
check_transport_caveat(const DdpCluster *c, const char *first, const char *phrase)
{
  g_autofree char *one_node = ddp_collective_transport_caveat(c, 1, "> ");
  g_assert_null(one_node);
  g_autofree char *text = ddp_collective_transport_caveat(c, 2, "> ");
  g_assert_nonnull(text);
  g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
  g_assert_cmpuint(g_strv_length(lines), ==, 4);   /* three lines and the empty tail */
  for (guint i = 0; i < 3; i++)
    g_assert_true(g_str_has_prefix(lines[i], "> "));
  g_assert_cmpstr(lines[3], ==, "");
  g_assert_true(g_str_has_prefix(text, first));
  g_assert_nonnull(strstr(text, phrase));
}

/* The transport caveats (docs/collective.md §10.3): only across nodes; over `ethernet` only at the
 * default share, over `slingshot` at any share (the mid sizes, not the share, are what the model
 * misses there); three lines, each begun with the prefix. */
static void
test_transport_caveat(void)
{
  g_autoptr(DdpCluster) c = a100();
  c->inter.fabric = DDP_INTER_ETHERNET;
  c->inter.nics_per_node = 1;
  c->inter.nic_bandwidth_Gbps = 100;
  check_transport_caveat(c, "> over NCCL's TCP sockets", "the default 0.4 fits two 16 Gb/s VMs");
  c->inter.efficiency = 0.1;   /* the user's own share: nothing to say */
  g_autofree char *measured = ddp_collective_transport_caveat(c, 2, "> ");
  g_assert_null(measured);
  c->inter.efficiency = 0;
  c->inter.fabric = DDP_INTER_ROCE;
  g_autofree char *rdma = ddp_collective_transport_caveat(c, 2, "> ");
  g_assert_null(rdma);
  /* Slingshot: the mid sizes, whatever the share (a measured one does not make them right) */
  c->inter.fabric = DDP_INTER_SLINGSHOT;
  c->inter.efficiency = 0.9;
  check_transport_caveat(c, "> over Slingshot (aws-ofi-nccl)", "1.5-10 x slower than this model from 4 KiB to");
}

/* SHARP through NCCL's CollNet ([nccl] collnet = true, docs/collective.md §13) on four HGX B200 nodes
 * (8 × B200, NVLink 5 at 900 GB/s, 8 × NDR 400 Gb/s).  NCCL's table (tuning.cc): CollNetDirect on 8
 * heads × bwIntra 96 (twice the NIC path's 48), busBw 768 × 0.85 (Hopper on), algBw = busBw / 2 =
 * 326.4, latency 2 · (3.7 + 7 · 0.4) + 31 = 44.0 µs; CollNetChain on the tree graph (8 × 96), algBw
 * 384, latency 2 · 7 · 2.8 + 30 = 69.2 µs.  The physics: a node sends S into the switches and gets S
 * back, so algbw ≤ its NICs, 8 × 50 × 0.96 = 384 GB/s — the ring's busbw bound, reached as algbw;
 * Direct ≤ NVLink's 900 × 0.802 × 8/14 = 412.5 (scatter and gather), Chain ≤ 721.8 / 2 = 360.9
 * (all of S up the chain and down), at 0.85 and 0.75: 326.4 and 270.675.  Auto takes the chain,
 * the one NCCL's table prefers; off without collnet, on one node, and Direct off without an NVSwitch. */
static void
test_collnet(void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(DdpCluster) cluster = fixture_cluster("hgx-b200");
  {
    g_autoptr(DdpCollective) off = model(cluster, 32);
    DdpCollectiveTuning t;
    ddp_collective_tuning(off, DDP_ALGO_COLLNET_DIRECT, DDP_PROTO_SIMPLE, &t);
    g_assert_false(t.enabled);
  }
  cluster->nccl.collnet = TRUE;
  g_autoptr(DdpCollective) c = model(cluster, 32);
  DdpCollectiveGraph g;
  ddp_collective_graph(c, DDP_ALGO_COLLNET_DIRECT, &g);
  g_assert_cmpint(g.channels, ==, 8);
  g_assert_cmpfloat(g.bw_intra_GBs, ==, 96.0);
  g_assert_cmpfloat(g.bw_inter_GBs, ==, 48.0);
  DdpCollectiveTuning direct, chain;
  ddp_collective_tuning(c, DDP_ALGO_COLLNET_DIRECT, DDP_PROTO_SIMPLE, &direct);
  ddp_collective_tuning(c, DDP_ALGO_COLLNET_CHAIN, DDP_PROTO_SIMPLE, &chain);
  g_assert_true(direct.enabled && chain.enabled);
  g_assert_cmpfloat_with_epsilon(direct.algbw_GBs, 326.4, 1e-9);
  g_assert_cmpfloat_with_epsilon(direct.latency_us, 44.0, 1e-9);
  g_assert_cmpfloat_with_epsilon(chain.algbw_GBs, 384.0, 1e-9);
  g_assert_cmpfloat_with_epsilon(chain.latency_us, 69.2, 1e-9);
  ddp_collective_tuning(c, DDP_ALGO_COLLNET_DIRECT, DDP_PROTO_LL, &direct);
  g_assert_false(direct.enabled);   /* Simple only */

  /* 1 TiB: the peak, latency and fill negligible (< 0.1 %) */
  const guint64 huge = (guint64)1 << 40;
  DdpCollectiveCost cost;
  g_assert_true(ddp_collective_allreduce_with(c, huge, DDP_ALGO_COLLNET_DIRECT, DDP_PROTO_SIMPLE, &cost));
  g_assert_cmpfloat_with_epsilon(cost.algbw_GBs, 326.4, 0.33);
  g_assert_true(ddp_collective_allreduce_with(c, huge, DDP_ALGO_COLLNET_CHAIN, DDP_PROTO_SIMPLE, &cost));
  g_assert_cmpfloat_with_epsilon(cost.algbw_GBs, 270.675, 0.28);
  ddp_collective_allreduce(c, (guint64)16 << 30, &cost);
  g_assert_cmpint(cost.algorithm, ==, DDP_ALGO_COLLNET_CHAIN);
  /* the ring, which SHARP does not help, keeps its own bound: busbw ≤ the NICs (algbw ≈ half) */
  g_assert_true(ddp_collective_allreduce_with(c, huge, DDP_ALGO_RING, DDP_PROTO_SIMPLE, &cost));
  g_assert_cmpfloat(cost.busbw_GBs, <=, 384.0);
  /* forced Direct: its own rate */
  cluster->nccl.algorithm = DDP_ALGO_COLLNET_DIRECT;
  {
    g_autoptr(DdpCollective) forced = model(cluster, 32);
    ddp_collective_allreduce(forced, (guint64)16 << 30, &cost);
    g_assert_cmpint(cost.algorithm, ==, DDP_ALGO_COLLNET_DIRECT);
    /* one node: no CollNet (NCCL's collNetSupport needs the network) */
    g_autoptr(DdpCollective) one = ddp_collective_new(cluster, 8, &error);
    g_assert_null(one);
    g_assert_error(error, DDP_COLLECTIVE_ERROR, DDP_COLLECTIVE_ERROR_INVALID);
    g_clear_error(&error);
  }
  /* without an NVSwitch (an NVLink mesh) CollNetDirect is off and the chain runs */
  cluster->intra.fabric = DDP_INTRA_NVLINK;
  g_assert_null(ddp_collective_new(cluster, 32, &error));
  g_clear_error(&error);
  cluster->nccl.algorithm = DDP_ALGO_AUTO;
  g_autoptr(DdpCollective) mesh = model(cluster, 32);
  ddp_collective_tuning(mesh, DDP_ALGO_COLLNET_DIRECT, DDP_PROTO_SIMPLE, &direct);
  ddp_collective_tuning(mesh, DDP_ALGO_COLLNET_CHAIN, DDP_PROTO_SIMPLE, &chain);
  g_assert_false(direct.enabled);
  g_assert_true(chain.enabled);
}

int
main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/collective/names", test_names);
  g_test_add_func("/collective/protocol-sets", test_protocol_sets);
  g_test_add_func("/collective/protocol-list-choice", test_protocol_list_choice);
  g_test_add_func("/collective/algorithm-sets", test_algorithm_sets);
  g_test_add_func("/collective/algorithm-list-choice", test_algorithm_list_choice);
  g_test_add_func("/collective/ops/names", test_ops_names);
  g_test_add_func("/collective/ops/alpha-beta", test_ops_alpha_beta);
  g_test_add_func("/collective/ops/tuner-ring", test_ops_tuner_ring);
  g_test_add_func("/collective/ops/nvls", test_ops_nvls);
  g_test_add_func("/collective/ops/physics", test_ops_physics);
  g_test_add_func("/collective/alpha-beta/ring", test_alpha_beta_ring);
  g_test_add_func("/collective/alpha-beta/tree", test_alpha_beta_tree);
  g_test_add_func("/collective/nccl/latency-one-node", test_nccl_latency_one_node);
  g_test_add_func("/collective/nccl/latency-multi-node", test_nccl_latency_multi_node);
  g_test_add_func("/collective/nccl/graph-search", test_nccl_graph_search);
  g_test_add_func("/collective/nccl/busbw-limit", test_nccl_busbw_limit);
  g_test_add_func("/collective/nccl/latency-scaling", test_nccl_latency_scaling);
  g_test_add_func("/collective/nccl/size-corrections", test_nccl_size_corrections);
  g_test_add_func("/collective/nccl/launch", test_nccl_launch);
  g_test_add_func("/collective/auto/crossover", test_auto_crossover);
  g_test_add_func("/collective/auto/choices-exact", test_choices_exact);
  g_test_add_func("/collective/auto/forced", test_forced);
  g_test_add_func("/collective/nvls/one-node", test_nvls_one_node);
  g_test_add_func("/collective/nvls/part-of-node", test_nvls_part_of_node);
  g_test_add_func("/collective/nvls/tree", test_nvls_tree);
  g_test_add_func("/collective/nvls/disabled", test_nvls_disabled);
  g_test_add_func("/collective/nvls/not-offered", test_nvls_not_offered);
  g_test_add_func("/collective/nvls/choices-exact", test_nvls_choices_exact);
  g_test_add_func("/collective/nvls/chunks", test_nvls_chunks);
  g_test_add_func("/collective/nvls/tree-correction", test_nvls_tree_correction);
  g_test_add_func("/collective/nvls/tree-stage-bound", test_nvls_tree_stage_bound);
  g_test_add_func("/collective/physics/nvlink-mesh-part-of-node", test_nvlink_mesh_part_of_node);
  g_test_add_func("/collective/broadcast", test_broadcast);
  g_test_add_func("/collective/one-gpu", test_one_gpu);
  g_test_add_func("/collective/errors", test_errors);
  g_test_add_func("/collective/compare/csv", test_compare_errors);
  g_test_add_func("/collective/physics/host-floor", test_physics_host_floor);
  g_test_add_func("/collective/physics/fill", test_physics_fill);
  g_test_add_func("/collective/physics/forced-tree-one-node", test_physics_forced_tree_one_node);
  g_test_add_func("/collective/physics/peaks", test_physics_peaks);
  g_test_add_func("/collective/physics/ll128-channel-cap", test_physics_ll128_channel_cap);
  g_test_add_func("/collective/physics/transports", test_physics_transports);
  g_test_add_func("/collective/physics/flush", test_physics_flush);
  g_test_add_func("/collective/physics/choices-exact", test_physics_choices_exact);
  g_test_add_func("/collective/compare/stats", test_compare_stats);
  g_test_add_func("/collective/compare/gpus-per-process", test_compare_gpus_per_process);
  g_test_add_func("/collective/validation/public", test_validation_public);
  g_test_add_func("/collective/validation/extended", test_validation_extended);
  g_test_add_func("/collective/validation/degraded", test_validation_degraded);
  g_test_add_func("/collective/validation/scale", test_validation_scale);
  g_test_add_func("/collective/scale/properties", test_scale_properties);
  g_test_add_func("/collective/scale/random-clusters", test_scale_random_clusters);
  g_test_add_func("/collective/scale/nvlink-domains", test_nvlink_domains);
  g_test_add_func("/collective/scale/no-ll-across-domains", test_no_ll_across_domains);
  g_test_add_func("/collective/scale/tree-node-load", test_tree_node_load);
  g_test_add_func("/collective/scale/tree-ll128-chunk", test_tree_ll128_chunk);
  g_test_add_func("/collective/transport-caveat", test_transport_caveat);
  g_test_add_func("/collective/collnet", test_collnet);
  return g_test_run();
}
