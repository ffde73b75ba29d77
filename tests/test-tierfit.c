/* Tests for tierfit: the collective model's per-tier parameters fitted to measured curves —
 * planted parameters recovered, a one-node calibration carried to every node count, and the public
 * families measured at several node counts calibrated on all but the largest count and asked about
 * the largest (issue 16 item 3). */
#include "tierfit.h"

#include "collective.h"
#include "fixture.h"

#include <math.h>
#include <string.h>


/* Measured points made by the model itself on @truth at @gpus, 8 B .. 8 GiB ×4. */
static void
add_model_points(GArray *points, const DdpCluster *truth, guint64 gpus)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(DdpCollective) c = ddp_collective_new(truth, gpus, &error);
  g_assert_no_error(error);
  for (guint64 bytes = 8; bytes <= (guint64)8 << 30; bytes *= 4) {
    DdpCollectiveCost cost;
    ddp_collective_allreduce(c, bytes, &cost);
    DdpTierPoint p = { gpus, ddp_collective_nodes(c), 1, DDP_ALGO_AUTO, DDP_PROTO_AUTO, bytes, cost.time_us };
    g_array_append_val(points, p);
  }
}

/* ddp_tier_fit on the points collected in @points. */
static void
fit_points(DdpCluster *cluster, const GArray *points, DdpTierFit *fit)
{
  ddp_tier_fit(cluster, (const DdpTierPoint *)(void *)points->data, points->len, fit);
}

static double
time_at(const DdpCluster *cluster, guint64 gpus, guint64 bytes)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(DdpCollective) c = ddp_collective_new(cluster, gpus, &error);
  g_assert_no_error(error);
  DdpCollectiveCost cost;
  ddp_collective_allreduce(c, bytes, &cost);
  return cost.time_us;
}

/* Curves the model makes on a DGX H100 cluster whose tiers were changed (intra efficiency 0.7,
 * launch 9 µs; inter efficiency 0.8, latency 6 µs per hop), at 1 node (8 GPUs) and at 2 and 4
 * nodes: fitted from the shipped file's values, the four numbers come back, and 64 nodes — never
 * measured — are predicted as the planted cluster has them, within 1 % at every size. */
static void
test_recovers_planted(void)
{
  g_autoptr(DdpCluster) truth = fixture_cluster("dgx-h100");
  truth->intra.efficiency = 0.7;
  truth->nccl.launch_us = 9.0;
  truth->inter.efficiency = 0.8;
  truth->inter.latency_us = 6.0;
  g_autoptr(GArray) points = g_array_new(FALSE, FALSE, sizeof(DdpTierPoint));
  add_model_points(points, truth, 8);
  add_model_points(points, truth, 16);
  add_model_points(points, truth, 32);
  g_autoptr(DdpCluster) cluster = fixture_cluster("dgx-h100");
  DdpTierFit fit;
  fit_points(cluster, points, &fit);
  g_assert_true(fit.intra.fitted);
  g_assert_true(fit.inter.fitted);
  g_assert_cmpuint(fit.intra.points, ==, 16);
  g_assert_cmpuint(fit.inter.points, ==, 32);
  g_assert_cmpuint(fit.inter.min_nodes, ==, 2);
  g_assert_cmpuint(fit.inter.max_nodes, ==, 4);
  g_assert_cmpfloat_with_epsilon(fit.intra.efficiency, 0.7, 0.01);
  g_assert_cmpfloat_with_epsilon(fit.intra.latency_us, 9.0, 0.2);
  g_assert_cmpfloat_with_epsilon(fit.inter.efficiency, 0.8, 0.01);
  g_assert_cmpfloat_with_epsilon(fit.inter.latency_us, 6.0, 0.2);
  g_assert_cmpfloat(fit.intra.mean_log_error, <, 0.005);
  g_assert_false(fit.intra.at_edge);
  g_assert_false(fit.inter.at_edge);
  ddp_tier_fit_apply(&fit, cluster);
  for (guint64 bytes = 1024; bytes <= (guint64)4 << 30; bytes *= 8) {
    double want = time_at(truth, 512, bytes), got = time_at(cluster, 512, bytes);
    g_assert_cmpfloat(fabs(got / want - 1), <, 0.01);
  }
}

/* Two-node points only, from a DGX H100 cluster whose whole small-message time is NCCL's table
 * (launch 0.5 µs, 0 µs a network hop): with the shipped file's 5 µs launch no
 * per-hop latency fits them (it cannot go below 0), so the launch is fitted to them too and comes
 * back, the inter tier refitted with it, and 8 nodes — never measured — are answered as the planted
 * cluster has them within 1 %.  Points that a positive latency explains (launch 5, 3 µs a hop) leave
 * the launch alone. */
static void
test_launch_from_multi_node(void)
{
  g_autoptr(DdpCluster) truth = fixture_cluster("dgx-h100");
  truth->nccl.launch_us = 0.5;
  truth->inter.latency_us = 0.0;
  g_autoptr(GArray) points = g_array_new(FALSE, FALSE, sizeof(DdpTierPoint));
  add_model_points(points, truth, 16);
  g_autoptr(DdpCluster) cluster = fixture_cluster("dgx-h100");
  DdpTierFit fit;
  fit_points(cluster, points, &fit);
  g_assert_false(fit.intra.fitted);
  g_assert_true(fit.inter.fitted);
  g_assert_true(fit.launch_from_inter);
  g_assert_cmpfloat_with_epsilon(fit.launch_us, 0.5, 0.2);
  g_assert_cmpfloat(fit.inter.latency_us, <, 0.2);
  g_assert_cmpfloat_with_epsilon(fit.inter.efficiency, ddp_cluster_inter_efficiency(truth), 0.01);
  g_autoptr(GPtrArray) lines = ddp_tier_fit_report(&fit, "x.db", 64, 8);
  g_assert_true(g_str_has_prefix(g_ptr_array_index(lines, 0), "note: calibration x.db has no one-node AllReduce curve: "
                                                               "[intra] efficiency comes from the cluster's specs, and "
                                                               "[nccl] launch 0."));
  ddp_tier_fit_apply(&fit, cluster);
  g_assert_cmpfloat_with_epsilon(cluster->nccl.launch_us, fit.launch_us, 1e-12);
  for (guint64 bytes = 8; bytes <= (guint64)4 << 30; bytes *= 8) {
    double want = time_at(truth, 64, bytes), got = time_at(cluster, 64, bytes);
    g_assert_cmpfloat(fabs(got / want - 1), <, 0.01);
  }
  g_autoptr(DdpCluster) slower = fixture_cluster("dgx-h100");
  slower->inter.latency_us = 3.0;
  g_autoptr(GArray) more = g_array_new(FALSE, FALSE, sizeof(DdpTierPoint));
  add_model_points(more, slower, 16);
  g_autoptr(DdpCluster) again = fixture_cluster("dgx-h100");
  fit_points(again, more, &fit);
  g_assert_false(fit.launch_from_inter);
  g_assert_cmpfloat_with_epsilon(fit.inter.latency_us, 3.0, 0.2);
}

/* Points no healthy fabric makes — a 2-GPU DGX A100 pair whose AllReduce of 8–32 MB takes ten
 * times what the model gives at its spec (kernel times from a DDP trace, which include the wait
 * for the other rank) — drive the fit to its range's edge (the largest per-call cost the grid has):
 * the tier keeps the cluster's values, marked at_edge with where the fit ended, and the report
 * says so in a warning instead of "fitted … used at every node count". */
static void
test_edge_keeps_specs(void)
{
  g_autoptr(DdpCluster) cluster = fixture_cluster("dgx-a100");
  g_autoptr(GArray) points = g_array_new(FALSE, FALSE, sizeof(DdpTierPoint));
  for (guint64 bytes = (guint64)8 << 20; bytes <= (guint64)32 << 20; bytes *= 2) {
    DdpTierPoint p = { 2, 1, 1, DDP_ALGO_AUTO, DDP_PROTO_AUTO, bytes, 10 * time_at(cluster, 2, bytes) + 800 };
    g_array_append_val(points, p);
  }
  DdpTierFit fit;
  fit_points(cluster, points, &fit);
  g_assert_true(fit.intra.fitted);
  g_assert_true(fit.intra.at_edge);
  g_assert_true(fit.intra.efficiency_held && fit.intra.latency_held);
  g_assert_cmpfloat(fit.intra.efficiency, ==, ddp_cluster_intra_efficiency(cluster));
  g_assert_cmpfloat(fit.intra.latency_us, ==, cluster->nccl.launch_us);
  g_assert_cmpfloat(fit.intra.edge_latency_us, ==, 60.0);
  g_autoptr(GPtrArray) lines = ddp_tier_fit_report(&fit, "d.db", 2, 1);
  g_assert_cmpuint(lines->len, ==, 1);
  g_assert_true(g_str_has_prefix(g_ptr_array_index(lines, 0), "warning: calibration d.db: inside a node, the fit of 3 "
                                                               "points (2 GPUs) ran to the edge of its range"));
}

/* A one-node calibration fits the intra tier only, and it is used across nodes too: on 2 nodes the
 * calibrated cluster answers as the planted one (whose inter tier is the shipped file's), not as
 * the uncalibrated file — before issue 16 a one-node import was thrown away there. */
static void
test_one_node_carries(void)
{
  g_autoptr(DdpCluster) truth = fixture_cluster("dgx-a100");
  truth->intra.efficiency = 0.55;
  truth->nccl.launch_us = 12.0;
  g_autoptr(GArray) points = g_array_new(FALSE, FALSE, sizeof(DdpTierPoint));
  add_model_points(points, truth, 8);
  g_autoptr(DdpCluster) cluster = fixture_cluster("dgx-a100");
  g_autoptr(DdpCluster) plain = fixture_cluster("dgx-a100");
  DdpTierFit fit;
  fit_points(cluster, points, &fit);
  g_assert_true(fit.intra.fitted);
  g_assert_false(fit.inter.fitted);
  ddp_tier_fit_apply(&fit, cluster);
  g_assert_cmpfloat(cluster->inter.latency_us, ==, plain->inter.latency_us);
  guint64 bytes = 64 << 10;   /* small enough that the launch and the intra-node hops show on 2 nodes */
  double want = time_at(truth, 16, bytes), got = time_at(cluster, 16, bytes), before = time_at(plain, 16, bytes);
  g_assert_cmpfloat(fabs(got / want - 1), <, 0.01);
  g_assert_cmpfloat(fabs(before / want - 1), >, 0.05);
}

/* Points that cannot tell a parameter keep the cluster's value (tierfit.h, TIER_HOLD).  A DGX A100
 * node planted with intra efficiency 0.55 and a 40 µs launch, measured only from 1 GiB up: a 40 µs
 * cost is under 0.3 % of any of those times, so the launch stays the shipped file's 5 µs (before,
 * the fit could land anywhere on its grid, and a 64 KiB call, mostly launch, inherited it) and the
 * efficiency comes back; measured only up to 4 KiB, where the link's rate hardly shows, the
 * efficiency stays the file's and the launch is fitted. */
static void
test_holds_what_points_cannot_tell(void)
{
  g_autoptr(DdpCluster) truth = fixture_cluster("dgx-a100");
  truth->intra.efficiency = 0.55;
  truth->nccl.launch_us = 40.0;
  g_autoptr(DdpCluster) plain = fixture_cluster("dgx-a100");
  g_autoptr(GError) error = NULL;
  g_autoptr(DdpCollective) c = ddp_collective_new(truth, 8, &error);
  g_assert_no_error(error);
  g_autoptr(GArray) large = g_array_new(FALSE, FALSE, sizeof(DdpTierPoint));
  g_autoptr(GArray) small = g_array_new(FALSE, FALSE, sizeof(DdpTierPoint));
  for (guint64 bytes = 8; bytes <= (guint64)8 << 30; bytes *= 2) {
    DdpCollectiveCost cost;
    ddp_collective_allreduce(c, bytes, &cost);
    DdpTierPoint p = { 8, 1, 1, DDP_ALGO_AUTO, DDP_PROTO_AUTO, bytes, cost.time_us };
    if (bytes >= (guint64)1 << 30)
      g_array_append_val(large, p);
    if (bytes <= 4096)
      g_array_append_val(small, p);
  }
  DdpTierFit fit;
  fit_points(plain, large, &fit);
  g_assert_true(fit.intra.fitted);
  g_assert_true(fit.intra.latency_held);
  g_assert_false(fit.intra.efficiency_held);
  g_assert_cmpfloat(fit.intra.latency_us, ==, plain->nccl.launch_us);
  g_assert_cmpfloat_with_epsilon(fit.intra.efficiency, 0.55, 0.01);
  fit_points(plain, small, &fit);
  g_assert_true(fit.intra.efficiency_held);
  g_assert_false(fit.intra.latency_held);
  g_assert_cmpfloat(fit.intra.efficiency, ==, ddp_cluster_intra_efficiency(plain));
  g_assert_cmpfloat_with_epsilon(fit.intra.latency_us, 40.0, 1.0);
}

/* The report: which tier came from where, and how far past the measured range the job is. */
static void
test_report(void)
{
  DdpTierFit fit = { 0 };
  fit.intra = (DdpTierParams){ .fitted = TRUE, .efficiency = 0.75, .latency_us = 6.0, .points = 12, .mean_log_error = 0.02,
                               .min_nodes = 1, .max_nodes = 1, .min_gpus = 8, .max_gpus = 8 };
  fit.inter = (DdpTierParams){ .fitted = TRUE, .efficiency = 0.9, .latency_us = 3.5, .points = 24, .mean_log_error = 0.03,
                               .min_nodes = 2, .max_nodes = 4, .min_gpus = 16, .max_gpus = 32 };
  g_autoptr(GPtrArray) lines = ddp_tier_fit_report(&fit, "h100.db", 512, 64);
  g_assert_cmpuint(lines->len, ==, 3);
  g_assert_true(g_str_has_prefix(g_ptr_array_index(lines, 0), "note: calibration h100.db: inside a node, [intra] "
                                                             "efficiency 0.750 and launch 6.0 us per call fitted to "
                                                             "12 one-node points (8 GPUs; mean error 2.0 %)"));
  g_assert_true(g_str_has_prefix(g_ptr_array_index(lines, 1), "note: calibration h100.db: across nodes, [inter] "
                                                             "efficiency 0.900 and latency 3.5 us per network hop "
                                                             "fitted to 24 points at 2..4 nodes"));
  g_assert_true(g_str_has_prefix(g_ptr_array_index(lines, 2), "warning: 64 nodes is 16.0x the largest calibrated "
                                                             "(4 nodes, 32 GPUs)"));
  g_autoptr(GPtrArray) inside = ddp_tier_fit_report(&fit, "h100.db", 24, 3);
  g_assert_cmpuint(inside->len, ==, 2);
  DdpTierFit one_node = { .intra = fit.intra };
  g_autoptr(GPtrArray) specs = ddp_tier_fit_report(&one_node, "x.db", 16, 2);
  g_assert_cmpuint(specs->len, ==, 2);
  g_assert_true(g_str_has_prefix(g_ptr_array_index(specs, 1), "warning: calibration x.db has no multi-node"));
  DdpTierFit none = { 0 };
  g_autoptr(GPtrArray) silent = ddp_tier_fit_report(&none, "x.db", 16, 2);
  g_assert_cmpuint(silent->len, ==, 0);
  /* held parameters say so */
  DdpTierFit held = fit;
  held.intra.latency_held = TRUE;
  held.inter.efficiency_held = TRUE;
  g_autoptr(GPtrArray) kept = ddp_tier_fit_report(&held, "h100.db", 24, 3);
  g_assert_true(g_str_has_prefix(g_ptr_array_index(kept, 0), "note: calibration h100.db: inside a node, [intra] "
                                                            "efficiency 0.750 fitted and launch 6.0 us per call kept "
                                                            "from the cluster file (the curves fit it within 1 %), "
                                                            "12 one-node points"));
  g_assert_true(g_str_has_prefix(g_ptr_array_index(kept, 1), "note: calibration h100.db: across nodes, [inter] "
                                                            "efficiency 0.900 kept from the cluster file (the curves "
                                                            "fit it within 1 %) and latency 3.5 us per network hop "
                                                            "fitted, 24 points at 2..4 nodes"));
}

/* ---- calibrate small, predict large on the public families ---- */

static int
compare_doubles(gconstpointer a, gconstpointer b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* The family's curves (@csv rows on @cluster_rel) fitted on every node count but the largest
 * (*@largest): the fit in @fit, the fitted cluster returned, the curves in *@curves_out. */
static DdpCluster *
fit_family(const char *csv, const char *cluster_rel, guint64 *largest_nodes, DdpTierFit *fit, GPtrArray **curves_out)
{
  g_autofree char *path = g_test_build_filename(G_TEST_DIST, "data", csv, NULL);
  g_autoptr(GError) error = NULL;
  g_autoptr(GPtrArray) curves = ddp_collective_compare_csv(path, &error);
  g_assert_no_error(error);
  guint64 largest = 0;
  for (guint c = 0; c < curves->len; c++) {
    const DdpCompareCurve *cv = curves->pdata[c];
    if (strcmp(cv->cluster, cluster_rel) == 0)
      largest = MAX(largest, cv->nodes);
  }
  g_autoptr(GArray) points = g_array_new(FALSE, FALSE, sizeof(DdpTierPoint));
  for (guint c = 0; c < curves->len; c++) {
    const DdpCompareCurve *cv = curves->pdata[c];
    if (strcmp(cv->cluster, cluster_rel) != 0 || cv->nodes == largest)
      continue;
    for (guint i = 0; i < cv->points->len; i++) {
      const DdpComparePoint *p = &g_array_index(cv->points, DdpComparePoint, i);
      DdpTierPoint t = { cv->gpus, cv->nodes, cv->gpus_per_process, DDP_ALGO_AUTO, DDP_PROTO_AUTO, p->bytes, p->measured_us };
      g_array_append_val(points, t);
    }
  }
  g_autofree char *cluster_path = g_test_build_filename(G_TEST_DIST, "data", cluster_rel, NULL);
  DdpCluster *cluster = fixture_cluster(cluster_path);
  fit_points(cluster, points, fit);
  ddp_tier_fit_apply(fit, cluster);
  g_test_message("%s: calibrated on %u points below %" G_GUINT64_FORMAT " nodes: intra %s %.3f / %.1f us, inter %s %.3f / %.1f us",
                 cluster_rel, points->len, largest, fit->intra.fitted ? "fitted" : "specs", cluster->intra.efficiency,
                 cluster->nccl.launch_us, fit->inter.fitted ? "fitted" : "specs", cluster->inter.efficiency,
                 cluster->inter.latency_us);
  *largest_nodes = largest;
  *curves_out = g_steal_pointer(&curves);
  return cluster;
}

/* Median |busbw error| at the family's largest node count after calibrating on the others. */
static double
calibrate_small_predict_large(const char *csv, const char *cluster_rel, guint64 *largest_nodes)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GPtrArray) curves = NULL;
  guint64 largest;
  DdpTierFit fit;
  g_autoptr(DdpCluster) cluster = fit_family(csv, cluster_rel, &largest, &fit, &curves);
  g_autoptr(GArray) errors = g_array_new(FALSE, FALSE, sizeof(double));
  for (guint c = 0; c < curves->len; c++) {
    const DdpCompareCurve *cv = curves->pdata[c];
    if (strcmp(cv->cluster, cluster_rel) != 0 || cv->nodes != largest)
      continue;
    g_autoptr(DdpCollective) coll = ddp_collective_new(cluster, cv->gpus, &error);
    g_assert_no_error(error);
    ddp_collective_set_gpus_per_process(coll, cv->gpus_per_process);
    for (guint i = 0; i < cv->points->len; i++) {
      const DdpComparePoint *p = &g_array_index(cv->points, DdpComparePoint, i);
      DdpCollectiveCost cost;
      ddp_collective_allreduce(coll, p->bytes, &cost);
      double e = fabs(p->measured_us / cost.time_us - 1);   /* predicted / measured busbw − 1 */
      g_test_message("  %" G_GUINT64_FORMAT " nodes %12" G_GUINT64_FORMAT " B: measured %.2f us, predicted %.2f us (%s/%s)",
                     cv->nodes, p->bytes, p->measured_us, cost.time_us, ddp_algorithm_name(cost.algorithm),
                     ddp_protocol_name(cost.protocol));
      g_array_append_val(errors, e);
    }
  }
  g_assert_cmpuint(errors->len, >, 0);
  g_array_sort(errors, compare_doubles);
  *largest_nodes = largest;
  guint n = errors->len;
  return n % 2 ? g_array_index(errors, double, n / 2)
               : (g_array_index(errors, double, n / 2 - 1) + g_array_index(errors, double, n / 2)) / 2;
}

/* Every public family measured at several node counts, calibrated on all counts but the largest and
 * asked about the largest (issue 16 item 3d):
 *  - Vultr HGX B200 (allreduce-public.csv): 1 node → 2 nodes: within 10 % (median |busbw error|;
 *    3.7 %, 5.4 % before NVLSTree's NVLS stage was held to NVLS's own, docs/collective.md §11.12);
 *  - OCI GB300 NVL72 (allreduce-3.csv): 1, 2 and 16 hosts (all inside one NVLink domain, so only the
 *    intra tier is calibrated) → 32 hosts over two racks: the two-rack curve's flat ~490 µs up to
 *    16 MiB is NCCL's ring (docs/collective.md §11.8), not in the one-rack curves nor in the specs,
 *    so the answer stays far off (93.8 %, as uncalibrated: the one-rack curves pin neither intra
 *    parameter beyond the file's, so both are kept; 158.8 % before NVLSTree's NVLS stage was held to
 *    NVLS's own, §11.12, 151.7 % before NVLS's chunk costs, §11.9);
 *    asserted where it is, so that a change shows.
 *  - OCI GB200 NVL72 (allreduce-gb200.csv, 4 and 8 GiB only): 1 host and 32 hosts over two racks →
 *    48 hosts over three: 26.3 % (two sizes pin no per-hop latency: it stays the file's 2 µs).  The two-rack points sit 15 % below the model's NVLSTree (22 %
 *    before §11.12), whose rate there is NVLS's inside a rack, not the NICs'; the only tier parameter that can slow it is
 *    [inter] efficiency, which the fit drives to 0.127 (the NICs then bind at 1.0 S a rack each
 *    way) and which then binds harder over three racks (1.5 S): 271 GB/s algbw predicted, 353–376
 *    measured.  The mechanism that makes NVLSTree across racks slower than NVLS inside one is not
 *    in the model (docs/collective.md §11.8), so a calibration cannot carry it; asserted where it is.
 *  - OCI HGX B300 (allreduce-b300.csv, 8 and 16 GiB only): 1 node → 2 nodes: 0.2 % (the one 8 GiB
 *    point keeps both intra parameters within 1 %; two nodes run NVLSTree at NCCL's per-channel
 *    cap, which no tier parameter moves).
 *  - Out-of-sample (allreduce-4.csv, gathered after the constants were set): one H100 cluster on
 *    8 × 400 Gb/s IB at 2, 4 and 8 nodes (nccl-tests#309, 1 MiB–8 GiB) → 8 nodes from 2 and 4:
 *    4.3 % (12.9 % uncalibrated; the fit takes the inter tier to 0.844 efficiency and 8.9 µs; 3.7 %
 *    before §11.12, whose bound slows the 2-node NVLSTree at 8–32 MiB the fit reads);
 *    the Dell XE9680 pair → four (8 B–16 GiB): 16.9 % (28.6 % uncalibrated) — a miss: the pair's
 *    small sizes want a network latency below zero (its 25 µs at 8 B is NCCL's table with nothing
 *    added), the fit stops at 0, and 2 KiB–1 MiB stay on Tree/LL128 at 73–100 µs where the four
 *    measured 40–82; asserted where it is.
 *  - Out-of-sample (allreduce-6.csv, 2026-11-28): CoreWeave's GB200 NVL72 with NVLS off at 1 and 2
 *    racks (512 MiB–16 GiB) → 20 racks (1 440 GPUs): 29.5 % (30.0 % uncalibrated) — a miss.  The fit
 *    takes the ring inside a rack to 0.953 of NVLink (one rack's 834 GB/s busbw, NCCL's rating being
 *    0.80) and, from large sizes only, the network hop to 115 µs; over 20 racks the model's ring
 *    then runs 61 % fast at 16 GiB (the measured time grows by 5.0 ms a GiB there, 434 GB/s busbw)
 *    and 37 % slow at 512 MiB.  What holds twenty racks' ring near half of two racks' is not in the model;
 *    asserted where it is.
 *  - Out-of-sample (allreduce-7.csv, 2026-11-28, session 19): ALCF Polaris (4 A100 a node, HPE
 *    Slingshot 11 through the libfabric plugin) at 2, 8 and 256 nodes → 540 nodes (2 160 GPUs):
 *    80.4 % (101.0 % uncalibrated) — a miss.  The fit takes the network to 0.420 of its line rate
 *    and keeps the 2 µs hop: one share cannot be both the large sizes' 0.73 and the 0.4–4 ms plateau
 *    the measured times sit on from 128 KiB to 16 MiB (the libfabric rendezvous path,
 *    allreduce-7.SOURCE), so 540 nodes come out 45 % slow at 1 GiB and 2–4 × fast at 128 KiB–8 MiB.
 *    What makes that plateau is not in the model; asserted where it is.
 *  - Out-of-sample (allreduce-11.csv, session 21): CSCS Alps (4 GH200 a node, Slingshot 11 through
 *    aws-ofi-nccl 1.13) at 4, 8, 16, 32 and 64 nodes → 128 nodes (512 GPUs): 75.8 % (100.6 %
 *    uncalibrated) — a miss, Polaris's again: the fit takes the network to 0.564 of its line rate
 *    (the large sizes run at 0.90–0.93), which cannot make the 4 KiB–256 MiB plateau; asserted where
 *    it is.
 * The H100 family of nccl-tests#290 (1 and 2 nodes) is left out: its 2-node cluster was found
 * under-performing by its reporter, so no calibration of the healthy node predicts it. */
static void
test_public_families(void)
{
  guint64 nodes = 0;
  double b200 = calibrate_small_predict_large("allreduce-public.csv", "validation/vultr-hgx-b200.cluster", &nodes);
  g_test_message("vultr-hgx-b200: %" G_GUINT64_FORMAT " nodes predicted from 1: median |error| %.1f %%", nodes, 100 * b200);
  g_assert_cmpuint(nodes, ==, 2);
  g_assert_cmpfloat(b200, <=, 0.10);
  g_assert_cmpfloat(b200, <, 0.040);   /* 3.7 % today (5.4 % before §11.12) */
  double gb300 = calibrate_small_predict_large("allreduce-3.csv", "validation/oci-gb300-nvl72.cluster", &nodes);
  g_test_message("oci-gb300-nvl72: %" G_GUINT64_FORMAT " hosts predicted from 1, 2, 16: median |error| %.1f %%", nodes,
                 100 * gb300);
  g_assert_cmpuint(nodes, ==, 32);
  g_assert_cmpfloat(gb300, <, 0.940);   /* 93.8 % today */
  double gb200 = calibrate_small_predict_large("allreduce-gb200.csv", "validation/oci-gb200-nvl72.cluster", &nodes);
  g_test_message("oci-gb200-nvl72: %" G_GUINT64_FORMAT " hosts predicted from 1 and 32: median |error| %.1f %%", nodes,
                 100 * gb200);
  g_assert_cmpuint(nodes, ==, 48);
  g_assert_cmpfloat(gb200, <, 0.268);   /* 26.3 % today */
  double b300 = calibrate_small_predict_large("allreduce-b300.csv", "validation/oci-bm-gpu-b300-8.cluster", &nodes);
  g_test_message("oci-bm-gpu-b300-8: %" G_GUINT64_FORMAT " nodes predicted from 1: median |error| %.1f %%", nodes, 100 * b300);
  g_assert_cmpuint(nodes, ==, 2);
  g_assert_cmpfloat(b300, <=, 0.10);
  g_assert_cmpfloat(b300, <, 0.007);   /* 0.2 % today */
  double gj = calibrate_small_predict_large("allreduce-4.csv", "validation/h100-ib400-gj309.cluster", &nodes);
  g_test_message("h100-ib400-gj309: %" G_GUINT64_FORMAT " nodes predicted from 2 and 4: median |error| %.1f %%", nodes, 100 * gj);
  g_assert_cmpuint(nodes, ==, 8);
  g_assert_cmpfloat(gj, <=, 0.10);
  g_assert_cmpfloat(gj, <, 0.045);   /* 4.3 % today (12.9 % uncalibrated) */
  double xe = calibrate_small_predict_large("allreduce-4.csv", "validation/dell-xe9680-h100-ndr.cluster", &nodes);
  g_test_message("dell-xe9680-h100-ndr: %" G_GUINT64_FORMAT " nodes predicted from 2: median |error| %.1f %%", nodes, 100 * xe);
  g_assert_cmpuint(nodes, ==, 4);
  g_assert_cmpfloat(xe, <, 0.069);   /* 6.4 % today (25.0 % uncalibrated; 14.0 % before the launch was fitted
                                        to multi-node points, 16.9 % before docs/collective.md §11.13) */
  double cw = calibrate_small_predict_large("allreduce-6.csv", "validation/coreweave-gb200-nvl72.cluster", &nodes);
  g_test_message("coreweave-gb200-nvl72: %" G_GUINT64_FORMAT " hosts predicted from 18 and 36: median |error| %.1f %%", nodes,
                 100 * cw);
  g_assert_cmpuint(nodes, ==, 360);
  g_assert_cmpfloat(cw, <, 0.300);   /* 29.5 % today (30.0 % uncalibrated) */
  double polaris = calibrate_small_predict_large("allreduce-7.csv", "validation/alcf-polaris-a100.cluster", &nodes);
  g_test_message("alcf-polaris-a100: %" G_GUINT64_FORMAT " nodes predicted from 2, 8 and 256: median |error| %.1f %%", nodes,
                 100 * polaris);
  g_assert_cmpuint(nodes, ==, 540);
  g_assert_cmpfloat(polaris, <, 0.805);   /* 80.4 % today (101.0 % uncalibrated) */
  double alps = calibrate_small_predict_large("allreduce-11.csv", "validation/cscs-alps-gh200.cluster", &nodes);
  g_test_message("cscs-alps-gh200: %" G_GUINT64_FORMAT " nodes predicted from 4, 8, 16, 32 and 64: median |error| %.1f %%",
                 nodes, 100 * alps);
  g_assert_cmpuint(nodes, ==, 128);
  g_assert_cmpfloat(alps, <, 0.759);   /* 75.8 % today (100.6 % uncalibrated) */
}

/* A network share far below the cluster's own is reported, not silently extrapolated: OCI's GB200
 * racks (two racks' NVLSTree below the NVLS rate, which only [inter] efficiency can express) fit at
 * 0.127 against RoCE's 0.96, and the report for three racks says what that share assumes; the
 * nccl-tests#309 H100 cluster fits at 0.844 and gets no such line. */
static void
test_implausible_share_warned(void)
{
  guint64 largest;
  DdpTierFit fit;
  g_autoptr(GPtrArray) curves = NULL;
  g_autoptr(DdpCluster) gb200 = fit_family("allreduce-gb200.csv", "validation/oci-gb200-nvl72.cluster", &largest, &fit, &curves);
  g_assert_cmpfloat(fabs(fit.inter.spec_efficiency - 0.96), <, 1e-12);
  g_assert_cmpfloat(fit.inter.efficiency, <, 0.5 * 0.96);
  g_autoptr(GPtrArray) lines = ddp_tier_fit_report(&fit, "gb200.db", 192, largest);
  gboolean warned = FALSE;
  for (guint i = 0; i < lines->len; i++)
    warned |= g_str_has_prefix(g_ptr_array_index(lines, i),
                               "warning: calibration gb200.db: the fit puts the NICs at 13 % of the cluster file's "
                               "share (efficiency 0.127 against 0.960): either the network runs that far below its "
                               "line rate, or the measured points are slow for another reason");
  g_assert_true(warned);

  g_autoptr(GPtrArray) gj_curves = NULL;
  g_autoptr(DdpCluster) gj = fit_family("allreduce-4.csv", "validation/h100-ib400-gj309.cluster", &largest, &fit, &gj_curves);
  g_assert_cmpfloat(fit.inter.efficiency, >, 0.8);
  g_autoptr(GPtrArray) gj_lines = ddp_tier_fit_report(&fit, "gj.db", 64, largest);
  g_assert_cmpuint(gj_lines->len, >, 0);
  for (guint i = 0; i < gj_lines->len; i++)
    g_assert_null(strstr(g_ptr_array_index(gj_lines, i), "the fit puts the NICs"));
}

int
main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/tierfit/recovers-planted", test_recovers_planted);
  g_test_add_func("/tierfit/one-node-carries", test_one_node_carries);
  g_test_add_func("/tierfit/edge-keeps-specs", test_edge_keeps_specs);
  g_test_add_func("/tierfit/holds-what-points-cannot-tell", test_holds_what_points_cannot_tell);
  g_test_add_func("/tierfit/report", test_report);
  g_test_add_func("/tierfit/launch-from-multi-node", test_launch_from_multi_node);
  g_test_add_func("/tierfit/public-families", test_public_families);
  g_test_add_func("/tierfit/implausible-share-warned", test_implausible_share_warned);
  return g_test_run();
}
