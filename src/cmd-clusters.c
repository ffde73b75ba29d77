/* cmd-clusters — `ddpsim clusters`: the shipped cluster specifications: GPU, GPUs per node,
 * intra-node and inter-node fabric. */
#include "cmd.h"

#include "cluster.h"
#include "datadir.h"
#include "jsonout.h"

typedef struct {
  gboolean json;
} ClustersOptions;

static const char *const intra_names[] = { "NVLink", "NVSwitch", "PCIe" };
/* Index = DdpInterFabric. */
static const char *const inter_names[] = { "IB", "RoCE", "Ethernet", "EFA", "TCPXO", "Slingshot" };
G_STATIC_ASSERT(G_N_ELEMENTS(inter_names) == DDP_INTER_FABRIC_COUNT);

static int
run(int argc, char **argv, ClustersOptions *o)
{
  GOptionEntry own[] = {
    { "json", 0, 0, G_OPTION_ARG_NONE, &o->json, "Print JSON: clusters [{name, gpu, gpus_per_node, …}]", NULL },
    { NULL, 0, 0, 0, NULL, NULL, NULL },
  };
  g_autoptr(GError) error = NULL;
  if (!ddp_cmd_parse("clusters", "List the shipped clusters.", "Clusters are found by these bare names, or give a file path.",
                     own, NULL, &argc, &argv, NULL, &error))
    return ddp_cmd_fail("clusters", error);
  g_auto(GStrv) names = ddp_datadir_list("scenarios", ".cluster");
  GString *text = g_string_new(NULL);
  DdpJson *j = ddp_json_new();
  ddp_json_begin_object(j, NULL);
  ddp_json_begin_array(j, "clusters");
  g_string_append_printf(text, "%-18s %-16s %4s  %-24s %-26s\n", "cluster", "gpu", "/node", "intra-node (per GPU)",
                         "inter-node (per node)");
  for (guint i = 0; names[i]; i++) {
    g_autoptr(DdpCluster) c = ddp_cluster_load(names[i], &error);
    if (!c) {
      g_string_free(text, TRUE);
      ddp_json_end_array(j);
      ddp_json_end_object(j);
      g_free(ddp_json_free_to_string(j));
      return ddp_cmd_fail("clusters", error);
    }
    g_autofree char *intra = g_strdup_printf("%s %g GB/s", intra_names[c->intra.fabric], c->intra.bandwidth_GBs);
    g_autofree char *inter = c->inter.nics_per_node > 0
                               ? g_strdup_printf("%d x %g Gb/s %s%s", c->inter.nics_per_node, c->inter.nic_bandwidth_Gbps,
                                                 inter_names[c->inter.fabric], c->nccl.collnet ? " SHARP" : "")
                               : g_strdup("single node");
    g_string_append_printf(text, "%-18s %-16s %4d  %-24s %-26s\n", names[i], c->gpu.name, c->gpus_per_node, intra, inter);
    ddp_json_begin_object(j, NULL);
    ddp_json_string(j, "name", names[i]);
    ddp_json_string(j, "description", c->description);
    ddp_json_string(j, "gpu", c->gpu.name);
    ddp_json_int(j, "gpus_per_node", c->gpus_per_node);
    ddp_json_string(j, "intra_fabric", intra_names[c->intra.fabric]);
    ddp_json_double(j, "intra_bandwidth_GBs", c->intra.bandwidth_GBs, 3);
    ddp_json_int(j, "nics_per_node", c->inter.nics_per_node);
    ddp_json_double(j, "nic_bandwidth_Gbps", c->inter.nic_bandwidth_Gbps, 3);
    ddp_json_string(j, "inter_fabric", c->inter.nics_per_node > 0 ? inter_names[c->inter.fabric] : NULL);
    ddp_json_bool(j, "collnet", c->nccl.collnet);
    ddp_json_end_object(j);
  }
  ddp_json_end_array(j);
  ddp_json_end_object(j);
  g_autofree char *json = ddp_json_free_to_string(j);
  g_autofree char *table = g_string_free(text, FALSE);
  if (!ddp_cmd_print(o->json ? json : table, &error))
    return ddp_cmd_fail("clusters", error);
  return DDP_EXIT_OK;
}

int
ddp_cmd_clusters(int argc, char **argv)
{
  ClustersOptions options = { 0 };
  return run(argc, argv, &options);
}
