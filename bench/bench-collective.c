/* bench-collective — cost of the collective model per call as nodes are added (run on demand:
 * `make bench`).  Issue 16 asks that one AllReduce cost stays O(log nodes) or better: the model's
 * per-call work is a fixed loop over algorithm × protocol pairs with closed-form terms, and its
 * per-communicator set-up (topology search, tuning table) does not depend on the node count beyond
 * the tree's ⌊log2 N⌋.  Printed: the median over 5 repeats of ns per ddp_collective_allreduce
 * (sizes 8 B … 16 GiB in turn) and µs per ddp_collective_new, on dgx-h100 and gb300-nvl72 at
 * 1 … 2^20 nodes. */
#include "collective.h"

#include <stdio.h>

#define REPEATS 5
#define CALLS 200000

static int
compare_double(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static double
median_of(double *v)
{
  qsort(v, REPEATS, sizeof *v, compare_double);
  return v[REPEATS / 2];
}

int
main(void)
{
  const char *clusters[] = { "dgx-h100", "gb300-nvl72" };
  printf("%-12s %9s %12s %14s %14s\n", "cluster", "nodes", "GPUs", "ns/allreduce", "us/new");
  for (gsize k = 0; k < G_N_ELEMENTS(clusters); k++) {
    g_autoptr(GError) error = NULL;
    g_autoptr(DdpCluster) cluster = ddp_cluster_load(clusters[k], &error);
    if (!cluster)
      g_error("%s", error->message);
    for (guint64 nodes = 1; nodes <= ((guint64)1 << 20); nodes *= 16) {
      guint64 gpus = nodes * (guint64)cluster->gpus_per_node;
      double per_call[REPEATS], per_new[REPEATS];
      volatile double sink = 0;   /* keeps the calls from being optimised away */
      for (int r = 0; r < REPEATS; r++) {
        gint64 t0 = g_get_monotonic_time();
        for (int i = 0; i < 100; i++) {
          g_autoptr(DdpCollective) c = ddp_collective_new(cluster, gpus, &error);
          if (!c)
            g_error("%s", error->message);
        }
        per_new[r] = (double)(g_get_monotonic_time() - t0) / 100.0;
        g_autoptr(DdpCollective) c = ddp_collective_new(cluster, gpus, &error);
        t0 = g_get_monotonic_time();
        for (int i = 0; i < CALLS; i++) {
          DdpCollectiveCost cost;
          ddp_collective_allreduce(c, (guint64)8 << (i % 32), &cost);
          sink += cost.time_us;
        }
        per_call[r] = 1000.0 * (double)(g_get_monotonic_time() - t0) / CALLS;
      }
      printf("%-12s %9" G_GUINT64_FORMAT " %12" G_GUINT64_FORMAT " %14.1f %14.1f\n", clusters[k], nodes, gpus,
             median_of(per_call), median_of(per_new));
    }
  }
  return 0;
}
