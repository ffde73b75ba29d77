/* fuzz-cluster — cluster files (src/cluster.c), then the collective model on one node and on two:
 * every accepted cluster must give finite, non-negative AllReduce times. */
#include "fuzz.h"

#include "cluster.h"
#include "collective.h"

#include <math.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  g_autoptr(DdpKeyFile) kf = fuzz_keyfile(data, size, "fuzz.cluster");
  if (!kf)
    return 0;
  g_autoptr(GError) error = NULL;
  g_autoptr(DdpCluster) cluster = ddp_cluster_from_keyfile(kf, &error);
  if (!cluster) {
    fuzz_check_error(error);
    return 0;
  }
  guint64 ppn = (guint64)cluster->gpus_per_node;
  guint64 counts[] = { 1, ppn, 2 * ppn };
  for (gsize i = 0; i < G_N_ELEMENTS(counts); i++) {
    g_autoptr(GError) local = NULL;
    g_autoptr(DdpCollective) model = ddp_collective_new(cluster, counts[i], &local);
    if (!model) {
      fuzz_check_error(local);
      continue;
    }
    guint64 sizes[] = { 8, 1 << 20, (guint64)1 << 40 };
    for (gsize k = 0; k < G_N_ELEMENTS(sizes); k++) {
      DdpCollectiveCost cost;
      ddp_collective_allreduce(model, sizes[k], &cost);
      FUZZ_REQUIRE(isfinite(cost.time_us) && cost.time_us >= 0);
    }
  }
  return 0;
}
