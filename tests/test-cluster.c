/* Tests for cluster files: the shipped DGX clusters, GPU overrides, node arithmetic and every
 * malformed-input error (file:line: group.key). */
#include "cluster.h"

#include <string.h>

static DdpCluster *
load_text(const char *text, GError **error)
{
  g_autoptr(DdpKeyFile) kf = ddp_keyfile_load_data("t.cluster", text, error);
  return kf ? ddp_cluster_from_keyfile(kf, error) : NULL;
}

static void
test_shipped(void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(DdpCluster) a100 = ddp_cluster_load("dgx-a100", &error);
  g_assert_no_error(error);
  g_assert_cmpint(a100->gpus_per_node, ==, 8);
  g_assert_cmpfloat(a100->intra.bandwidth_GBs, ==, 300);
  g_assert_cmpint(a100->gpu.sm_arch, ==, 80);
  /* 8 NICs × 200 Gb/s / 8 bits / 8 GPUs = 25 GB/s per GPU */
  g_assert_cmpfloat_with_epsilon(ddp_cluster_inter_GBs_per_gpu(a100), 25.0, 1e-12);
  g_autoptr(DdpCluster) h100 = ddp_cluster_load("dgx-h100", &error);
  g_assert_no_error(error);
  g_assert_cmpfloat(h100->intra.bandwidth_GBs, ==, 450);
  g_assert_cmpfloat_with_epsilon(ddp_cluster_inter_GBs_per_gpu(h100), 50.0, 1e-12);
  g_assert_cmpint(h100->nccl.algorithm, ==, DDP_ALGO_AUTO);
}

static void
test_overrides(void)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *path = g_test_build_filename(G_TEST_DIST, "data", "ab4.cluster", NULL);
  g_autoptr(DdpCluster) c = ddp_cluster_load(path, &error);
  g_assert_no_error(error);
  g_assert_cmpfloat(c->gpu.hbm_GBs, ==, 1000);          /* [gpu] override */
  g_assert_cmpfloat(c->gpu.peak_tflops[DDP_PRECISION_FP16], ==, 312);  /* rest from the a100 table */
  g_assert_cmpint(c->nccl.cost_model, ==, DDP_COST_ALPHA_BETA);
  /* 2:1 oversubscription halves the per-GPU share: 1 NIC × 100 Gb/s / 8 / 4 GPUs = 3.125 GB/s → /2 */
  c->inter.oversubscription = 2;
  g_assert_cmpfloat_with_epsilon(ddp_cluster_inter_GBs_per_gpu(c), 1.5625, 1e-12);
}

static void
test_gpus(void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(DdpCluster) c = ddp_cluster_load("dgx-a100", &error);
  guint64 nodes = 0;
  g_assert_true(ddp_cluster_check_gpus(c, 1, &nodes, &error));
  g_assert_cmpuint(nodes, ==, 1);
  g_assert_true(ddp_cluster_check_gpus(c, 6, &nodes, &error));
  g_assert_cmpuint(nodes, ==, 1);
  g_assert_true(ddp_cluster_check_gpus(c, 131072, &nodes, &error));
  g_assert_cmpuint(nodes, ==, 16384);
  g_assert_false(ddp_cluster_check_gpus(c, 0, &nodes, &error));
  g_assert_error(error, DDP_CLUSTER_ERROR, DDP_CLUSTER_ERROR_INVALID);
  g_assert_cmpstr(error->message, ==, "--gpus: 0 GPUs: must be from 1 to 16777216 (ranges.h DDP_MAX_GPUS)");
  g_clear_error(&error);
  g_assert_false(ddp_cluster_check_gpus(c, 12, &nodes, &error));
  g_assert_nonnull(strstr(error->message, "12 GPUs do not fill whole nodes of 8"));
}

#define HEAD "[cluster]\nname = x\ngpu = h100\ngpus_per_node = 8\n"
#define INTRA "[intra]\nfabric = nvswitch\nbandwidth_GBs = 450\nlatency_us = 1\n"

static void
test_errors(void)
{
  static const struct { const char *text; const char *message; } cases[] = {
    { HEAD INTRA "[inter]\nfabric = ib\nnics_per_node = 8\nnic_bandwidth_Gbps = -400\nlatency_us = 2\n",
      "t.cluster:12: inter.nic_bandwidth_Gbps: \"-400\" must be a number from 0.01 to 800000" },
    { HEAD INTRA "[inter]\nfabric = token-ring\n", "t.cluster:10: inter.fabric: \"token-ring\" is not one of ib|roce|ethernet|efa|tcpxo|slingshot|tcp" },
    { HEAD "[intra]\nfabric = nvlink\nbandwidth_GBs = 0\nlatency_us = 1\n", "t.cluster:7: intra.bandwidth_GBs: \"0\" must be a number from 0.00125 to 100000" },
    { "[cluster]\nname = x\ngpu = tpu\ngpus_per_node = 8\n", "t.cluster:3: cluster.gpu: unknown GPU \"tpu\" (built in: v100, a100, a100-40gb, h100, h200, b200, gb200, gb300, rtx4090)" },
    { "[cluster]\nname = x\ngpu = h100\ngpus_per_node = 0\n", "t.cluster:4: cluster.gpus_per_node: \"0\" must be a whole number from 1 to 1024" },
    { HEAD INTRA "[nccl]\nalgorithm = butterfly\n",
      "t.cluster:10: nccl.algorithm: \"butterfly\" is not auto, ring, tree, nvls, nvlstree, collnetdirect, collnetchain or an NCCL_ALGO list of them "
      "(\"Ring,Tree\" enables those, \"^NVLS,NVLSTree\" disables both) that leaves one enabled" },
    { HEAD INTRA "speed = 3\n", "t.cluster:9: intra.speed: unknown key (known keys: fabric, bandwidth_GBs, latency_us, efficiency, p2p, domain_gpus)" },
    { HEAD "max_nodes = 4\n" INTRA, "t.cluster:5: cluster.max_nodes: more than one node needs an [inter] group describing the network" },
    { HEAD, "t.cluster: [intra]: required group is missing (gpus_per_node > 1)" },
    { "[intra]\nfabric = nvlink\n", "t.cluster: [cluster]: required group is missing (is this a cluster file?)" },
    /* the nccl model's transport keys (docs/collective.md "Cluster keys") */
    { HEAD INTRA "efficiency = 1.5\n", "t.cluster:9: intra.efficiency: \"1.5\" must be a number from 0.001 to 1" },
    { HEAD INTRA "p2p = sometimes\n", "t.cluster:9: intra.p2p: \"sometimes\" is not a boolean (true or false)" },
    { HEAD INTRA "[inter]\nfabric = efa\nnics_per_node = 4\nnic_bandwidth_Gbps = 100\nlatency_us = 20\nefficiency = 0\n",
      "t.cluster:14: inter.efficiency: \"0\" must be a number from 0.001 to 1" },
    { HEAD INTRA "[nccl]\nhost_launch_us = -1\n", "t.cluster:10: nccl.host_launch_us: \"-1\" must be a number from 0 to 10000" },
    /* SHARP lives in InfiniBand switches */
    { HEAD INTRA "[nccl]\ncollnet = true\n",
      "t.cluster:10: nccl.collnet: SHARP's in-network reduction needs an [inter] network with fabric = ib" },
    { HEAD INTRA "[inter]\nfabric = roce\nnics_per_node = 8\nnic_bandwidth_Gbps = 400\nlatency_us = 2\n[nccl]\ncollnet = true\n",
      "t.cluster:15: nccl.collnet: SHARP's in-network reduction needs an [inter] network with fabric = ib" },
    { HEAD INTRA "[nccl]\ncollnet = sometimes\n", "t.cluster:10: nccl.collnet: \"sometimes\" is not a boolean (true or false)" },
    { HEAD INTRA "[nccl]\namd_cpu = true\narm_cpu = true\n",
      "t.cluster:10: nccl.amd_cpu: an AMD host is not an Arm one (arm_cpu)" },
    { "[cluster]\nname = x\ngpu = gb200\ngpus_per_node = 4\n" INTRA "[nccl]\namd_cpu = true\n",
      "t.cluster:10: nccl.amd_cpu: an AMD host is not an Arm one (arm_cpu) (GB200 and GB300 hosts are Grace, Arm: "
      "leave amd_cpu unset)" },
    { HEAD INTRA "[nccl]\ncost_model = tuner\n", "t.cluster:10: nccl.cost_model: \"tuner\" is not one of nccl|alpha-beta|nccl-tuner" },
    { HEAD INTRA "[nccl]\nprotocol = Simple,LL64\n",
      "t.cluster:10: nccl.protocol: \"Simple,LL64\" is not auto, LL, LL128, Simple or an NCCL_PROTO list of them "
      "(\"Simple,LL128\" enables those, \"^LL\" disables LL) that leaves one enabled" },
  };
  for (gsize i = 0; i < G_N_ELEMENTS(cases); i++) {
    g_autoptr(GError) error = NULL;
    g_autoptr(DdpCluster) c = load_text(cases[i].text, &error);
    g_assert_null(c);
    g_assert_nonnull(error);
    g_assert_cmpstr(error->message, ==, cases[i].message);
  }
}

/* The transport keys and their defaults: efficiencies by fabric (0 in the struct = the default),
 * "tcp" another name for "ethernet", p2p on unless switched off, host issue 4 µs per GPU. */
static void
test_transport(void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(DdpCluster) d = load_text(HEAD INTRA "[inter]\nfabric = ib\nnics_per_node = 8\nnic_bandwidth_Gbps = 400\n"
                                      "latency_us = 2\n", &error);
  g_assert_no_error(error);
  g_assert_cmpint(d->nccl.cost_model, ==, DDP_COST_NCCL);
  g_assert_cmpfloat(d->nccl.host_launch_us, ==, 4.0);
  g_assert_false(d->intra.p2p_off);
  g_assert_cmpfloat(d->intra.efficiency, ==, 0);
  g_assert_cmpfloat_with_epsilon(ddp_cluster_intra_efficiency(d), 20.6 / 25.0, 1e-12);   /* H100: NVLink 4 */
  g_assert_cmpfloat(ddp_cluster_inter_efficiency(d), ==, 0.96);
  static const struct { const char *fabric; DdpInterFabric value; double efficiency; } fabrics[] = {
    { "roce", DDP_INTER_ROCE, 0.96 }, { "efa", DDP_INTER_EFA, 0.85 }, { "tcpxo", DDP_INTER_TCPXO, 0.75 },
    { "ethernet", DDP_INTER_ETHERNET, 0.4 }, { "tcp", DDP_INTER_ETHERNET, 0.4 }, { "slingshot", DDP_INTER_SLINGSHOT, 0.96 },
  };
  for (gsize i = 0; i < G_N_ELEMENTS(fabrics); i++) {
    g_autofree char *text = g_strdup_printf(HEAD INTRA "[inter]\nfabric = %s\nnics_per_node = 1\nnic_bandwidth_Gbps = 100\n"
                                            "latency_us = 2\n", fabrics[i].fabric);
    g_autoptr(DdpCluster) c = load_text(text, &error);
    g_assert_no_error(error);
    g_assert_cmpint(c->inter.fabric, ==, fabrics[i].value);
    g_assert_cmpfloat(ddp_cluster_inter_efficiency(c), ==, fabrics[i].efficiency);
    g_assert_cmpstr(ddp_inter_fabric_name(c->inter.fabric), ==, i == 4 ? "ethernet" : fabrics[i].fabric);
  }
  g_autoptr(DdpCluster) set = load_text("[cluster]\nname = x\ngpu = rtx4090\ngpus_per_node = 8\n"
                                        "[intra]\nfabric = pcie\nbandwidth_GBs = 31.5\nlatency_us = 1\np2p = false\nefficiency = 0.5\n"
                                        "[inter]\nfabric = efa\nnics_per_node = 1\nnic_bandwidth_Gbps = 100\nlatency_us = 20\n"
                                        "efficiency = 0.7\n[nccl]\nhost_launch_us = 4.9\ncost_model = nccl-tuner\n", &error);
  g_assert_no_error(error);
  g_assert_true(set->intra.p2p_off);
  g_assert_cmpfloat(ddp_cluster_intra_efficiency(set), ==, 0.5);
  g_assert_cmpfloat(ddp_cluster_inter_efficiency(set), ==, 0.7);
  g_assert_cmpfloat(set->nccl.host_launch_us, ==, 4.9);
  g_assert_cmpint(set->nccl.cost_model, ==, DDP_COST_NCCL_TUNER);
  g_assert_cmpint(set->gpu.sm_arch, ==, 89);   /* the RTX 4090 spec (Ada whitepaper) */
  g_assert_cmpfloat(set->gpu.peak_tflops[DDP_PRECISION_FP16], ==, 165.2);
  /* PCIe's default: NCCL's 12 GB/s per Gen3 x16 of 15.75 raw */
  set->intra.efficiency = 0;
  g_assert_cmpfloat_with_epsilon(ddp_cluster_intra_efficiency(set), 12.0 / 15.75, 1e-12);
}

static void
test_unknown_group_and_name(void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(DdpCluster) c = ddp_cluster_load("no-such-cluster", &error);
  g_assert_null(c);
  g_assert_error(error, DDP_CLUSTER_ERROR, DDP_CLUSTER_ERROR_NOT_FOUND);
  g_assert_nonnull(strstr(error->message, "dgx-a100"));  /* lists what is shipped */
}

/* The host CPU: x86 unless the GPU is a Grace superchip (GB200, GB300: Arm), or nccl.arm_cpu says
 * otherwise; NCCL's NVLSTree correction on Blackwell applies to x86 hosts only (collective.c). */
static void
test_host_cpu(void)
{
  g_autoptr(GError) error = NULL;
  static const struct { const char *name; gboolean arm; } shipped[] = {
    { "hgx-b200", FALSE }, { "dgx-h100", FALSE }, { "gb200-nvl72", TRUE }, { "gb300-nvl72", TRUE },
  };
  for (gsize i = 0; i < G_N_ELEMENTS(shipped); i++) {
    g_autoptr(DdpCluster) c = ddp_cluster_load(shipped[i].name, &error);
    g_assert_no_error(error);
    g_assert_cmpint(c->nccl.arm_cpu, ==, shipped[i].arm);
    g_assert_cmpint(c->gpu.arm_host, ==, shipped[i].arm);
  }
  g_autoptr(DdpCluster) set = load_text(HEAD INTRA "[nccl]\narm_cpu = true\n", &error);
  g_assert_no_error(error);
  g_assert_true(set->nccl.arm_cpu);
}

/* [nccl] protocol takes NCCL_PROTO's syntax: one name forces it; "Simple,LL128" (Google's TCPXO
 * profile) and "^LL" both switch LL off and leave the choice to the model.  [nccl] algorithm takes
 * NCCL_ALGO's the same way. */
static void
test_protocol_list(void)
{
  static const struct { const char *value; DdpProtocol forced; guint disabled; } cases[] = {
    { "LL128", DDP_PROTO_LL128, 0 },
    { "Simple,LL128", DDP_PROTO_AUTO, 1u << DDP_PROTO_LL },
    { "^LL", DDP_PROTO_AUTO, 1u << DDP_PROTO_LL },
  };
  for (gsize i = 0; i < G_N_ELEMENTS(cases); i++) {
    g_autoptr(GError) error = NULL;
    g_autofree char *text = g_strdup_printf(HEAD INTRA "[nccl]\nprotocol = %s\n", cases[i].value);
    g_autoptr(DdpCluster) c = load_text(text, &error);
    g_assert_no_error(error);
    g_assert_cmpint(c->nccl.protocol, ==, cases[i].forced);
    g_assert_cmpuint(c->nccl.disabled_protocols, ==, cases[i].disabled);
  }
  g_autoptr(GError) error = NULL;
  g_autoptr(DdpCluster) c = load_text(HEAD INTRA "[nccl]\nalgorithm = Ring,Tree\n", &error);
  g_assert_no_error(error);
  g_assert_cmpint(c->nccl.algorithm, ==, DDP_ALGO_AUTO);
  g_assert_cmpuint(c->nccl.disabled_algorithms, ==, (1u << DDP_ALGO_NVLS) | (1u << DDP_ALGO_NVLS_TREE) |
                                                     (1u << DDP_ALGO_COLLNET_DIRECT) | (1u << DDP_ALGO_COLLNET_CHAIN));
}

int
main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/cluster/shipped", test_shipped);
  g_test_add_func("/cluster/overrides", test_overrides);
  g_test_add_func("/cluster/gpus", test_gpus);
  g_test_add_func("/cluster/errors", test_errors);
  g_test_add_func("/cluster/transport", test_transport);
  g_test_add_func("/cluster/host-cpu", test_host_cpu);
  g_test_add_func("/cluster/protocol-list", test_protocol_list);
  g_test_add_func("/cluster/not-found", test_unknown_group_and_name);
  return g_test_run();
}
