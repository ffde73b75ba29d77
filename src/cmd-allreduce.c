/* cmd-allreduce — `ddpsim allreduce` and `ddpsim collective --op OP`: the collective model alone,
 * as the table nccl-tests' all_reduce_perf (all_gather_perf, reduce_scatter_perf, broadcast_perf)
 * prints (size, count, type, time, algbw, busbw; docs/model.md §3) plus the algorithm
 * and protocol NCCL's tuner would pick (docs/model.md §2.4).  --explain shows why: the emulated topology
 * graphs, NCCL's tuning table, the choice by size and the latency/bandwidth crossover.  --compare
 * runs the model against measured nccl-tests curves (docs/collective.md "Validation"). */
#include "cmd.h"

#include "collective.h"
#include "tierfit.h"
#include "jsonout.h"
#include "ranges.h"

#include <math.h>
#include <string.h>

typedef struct {
  char *cluster, *gpus, *min_bytes, *max_bytes, *step_factor, *step_bytes, *datatype, *algo, *proto, *compare, *calibration;
  char *per_process;      /* -g */
  char *op;               /* --op */
  gboolean json, csv, explain;
} AllreduceOptions;

/* What the options mean once parsed. */
typedef struct {
  guint64 gpus;           /* 0: one full node */
  guint64 min_bytes, max_bytes, step_factor, step_bytes;
  const char *type_name;
  guint64 type_size;
  guint64 per_process;    /* -g: GPUs one host thread issues for (nccl-tests), 1 by default */
  DdpCollectiveOp op;
} Sweep;

/* The choice search runs to 1 TiB, so the crossover does not depend on -e. */
#define EXPLAIN_HORIZON_BYTES ((guint64)1 << 40)

static const char allreduce_description[] =
  "Sizes take K, M, G suffixes (2^10, 2^20, 2^30) as in nccl-tests; sizes are rounded down to\n"
  "whole elements of the -d type.  algbw = size / time and busbw = algbw * 2(n-1)/n, in\n"
  "10^9 bytes/s, as nccl-tests reports them.  Defaults: --cluster dgx-a100, one node of GPUs,\n"
  "-b 8 -e 128M -f 2 -g 1 -d float, algorithm and protocol from the cluster file (auto).\n"
  "-g N models nccl-tests' -g N: one thread issues every call for N GPUs, so small sizes are\n"
  "bound by N x nccl.host_launch_us (the nccl cost model's host floor).\n"
  "--op all_reduce|all_gather|reduce_scatter|broadcast picks the collective (ddpsim collective;\n"
  "default all_reduce).  As nccl-tests: the size of all_gather is the gathered output and of\n"
  "reduce_scatter the reduced input (n x the per-rank count, each whole 16 bytes), the\n"
  "count column is per rank, busbw = algbw * (n-1)/n for both and = algbw for broadcast.\n"
  "--compare CSV predicts every row of a file of measured nccl-tests points (columns source,\n"
  "system, cluster, gpus, bytes, time_us, optional gpus_per_process) and prints model and\n"
  "measurement side by side, with the median and largest |error| per size regime.";

static gboolean
fail(GError **error, const char *format, const char *value)
{
  g_set_error(error, DDP_CMD_ERROR, 0, format, value);
  return FALSE;
}

/* The row after @size: -i adds, -f multiplies; G_MAXUINT64 once past -e (sizes ≤ 2^50, so the
 * comparisons below cannot overflow where the sum or product could). */
static guint64
next_size(const Sweep *s, guint64 size)
{
  if (s->step_bytes)
    return s->max_bytes - size < s->step_bytes ? G_MAXUINT64 : size + s->step_bytes;
  return size > s->max_bytes / s->step_factor ? G_MAXUINT64 : size * s->step_factor;
}

static gboolean
parse_sweep(const AllreduceOptions *o, Sweep *s, GError **error)
{
  static const struct {
    const char *name;
    guint64 size;
  } types[] = { { "float", 4 }, { "half", 2 }, { "bfloat16", 2 }, { "double", 8 } };
  *s = (Sweep){ 0, 8, 128 << 20, 2, 0, "float", 4, 1, DDP_OP_ALL_REDUCE };
  if (o->op) {
    int op = ddp_collective_op_parse(o->op);
    if (op < 0)
      return fail(error, "--op: unknown collective \"%s\" (all_reduce, all_gather, reduce_scatter, broadcast)", o->op);
    s->op = op;
  }
  /* -f multiplies each row (nccl-tests); -i adds instead when given, but -f is checked either way */
  if (!ddp_range_check_count("-g", o->per_process, &DDP_RANGE_GPUS_PER_PROCESS, &s->per_process, error) ||
      !ddp_flag_count("gpus", o->gpus, &DDP_RANGE_GPUS, &s->gpus, error) ||
      !ddp_range_check_size("-b", o->min_bytes, &DDP_RANGE_SWEEP_BYTES, &s->min_bytes, error) ||
      !ddp_range_check_size("-e", o->max_bytes, &DDP_RANGE_SWEEP_BYTES, &s->max_bytes, error) ||
      !ddp_range_check_size("-f", o->step_factor, &DDP_RANGE_STEP_FACTOR, &s->step_factor, error) ||
      !ddp_range_check_size("-i", o->step_bytes, &DDP_RANGE_SWEEP_BYTES, &s->step_bytes, error))
    return FALSE;
  if (s->min_bytes > s->max_bytes)
    return fail(error, "-b: the smallest size is above -e (%s)", o->max_bytes ? o->max_bytes : "128M");
  /* the number of rows, counted before any is computed */
  guint64 rows = 0;
  for (guint64 size = s->min_bytes; rows <= DDP_MAX_SWEEP_ROWS && size <= s->max_bytes; rows++)
    size = next_size(s, size);
  if (rows > DDP_MAX_SWEEP_ROWS) {
    g_set_error(error, DDP_CMD_ERROR, 0, "%s: the sweep from -b to -e has more than %u rows (ranges.h DDP_MAX_SWEEP_ROWS); "
                "use a larger step", s->step_bytes ? "-i" : "-f", DDP_MAX_SWEEP_ROWS);
    return FALSE;
  }
  if (o->datatype) {
    gsize i = 0;
    while (i < G_N_ELEMENTS(types) && strcmp(types[i].name, o->datatype) != 0)
      i++;
    if (i == G_N_ELEMENTS(types))
      return fail(error, "-d: unknown type \"%s\" (float, half, bfloat16, double)", o->datatype);
    s->type_name = types[i].name;
    s->type_size = types[i].size;
  }
  if (s->min_bytes < s->type_size)   /* only an explicit -b can be below 8 */
    return fail(error, "-b: %s holds less than one element of -d", o->min_bytes);
  return TRUE;
}

/* Loads the cluster and applies --algo/--proto over its [nccl] settings. */
static DdpCluster *
load_cluster(const AllreduceOptions *o, GError **error)
{
  g_autoptr(DdpCluster) cluster = ddp_cluster_load(o->cluster ? o->cluster : "dgx-a100", error);
  if (!cluster)
    return NULL;
  if (o->algo && !ddp_algorithm_set_parse(o->algo, &cluster->nccl.algorithm, &cluster->nccl.disabled_algorithms)) {
    fail(error, "--algo: \"%s\" is not auto, ring, tree, nvls, nvlstree, collnetdirect, collnetchain or an NCCL_ALGO list of them that leaves one "
         "(\"Ring,Tree\", \"^NVLS,NVLSTree\")", o->algo);
    return NULL;
  }
  if (o->proto && !ddp_protocol_set_parse(o->proto, &cluster->nccl.protocol, &cluster->nccl.disabled_protocols)) {
    fail(error, "--proto: \"%s\" is not auto, LL, LL128, Simple or an NCCL_PROTO list of them that leaves one "
         "(\"Simple,LL128\", \"^LL\")", o->proto);
    return NULL;
  }
  return g_steal_pointer(&cluster);
}

typedef struct {
  guint64 bytes, count;
  DdpCollectiveCost cost;
} Row;

/* nccl-tests' AllGatherGetCollByteCount / ReduceScatterGetCollByteCount: each rank's count is the
 * size's elements cut into n parts, rounded down to whole 16 bytes ((count/nranks) & -(16/eltSize):
 * 4 floats, 8 halves, 2 doubles); the size printed is n times that.  Sizes with an empty part are
 * left out (nothing to time). */
static GArray *
sweep_rows(const DdpCollective *model, const Sweep *s)
{
  GArray *rows = g_array_new(FALSE, FALSE, sizeof(Row));
  guint64 n = ddp_collective_gpus(model);
  gboolean per_rank = s->op == DDP_OP_ALL_GATHER || s->op == DDP_OP_REDUCE_SCATTER;
  for (guint64 size = s->min_bytes; size <= s->max_bytes; size = next_size(s, size)) {
    Row row = { .count = size / s->type_size };
    guint64 align = MAX(16 / s->type_size, 1);
    if (per_rank)
      row.count = row.count / n / align * align;
    row.bytes = row.count * s->type_size * (per_rank ? n : 1);
    if (row.bytes == 0)
      continue;
    ddp_collective_cost(model, s->op, row.bytes, &row.cost);
    g_array_append_val(rows, row);
  }
  return rows;
}

static double
average_busbw(const GArray *rows)
{
  double sum = 0;
  for (guint i = 0; i < rows->len; i++)
    sum += g_array_index(rows, Row, i).cost.busbw_GBs;
  return rows->len ? sum / rows->len : 0;
}

static const char *
cost_model_name(DdpCostModel m)
{
  return m == DDP_COST_ALPHA_BETA ? "alpha-beta" : m == DDP_COST_NCCL_TUNER ? "nccl-tuner" : "nccl";
}

/* "ring/Simple" */
static char *
pair_name(DdpAlgorithm a, DdpProtocol p)
{
  return g_strdup_printf("%s/%s", ddp_algorithm_name(a), ddp_protocol_name(p));
}

/* ---- --explain ---- */

static void
explain_text(GString *out, const DdpCluster *cluster, const DdpCollective *model)
{
  DdpCollectiveGraph ring, tree, nvls;
  ddp_collective_graph(model, DDP_ALGO_RING, &ring);
  ddp_collective_graph(model, DDP_ALGO_TREE, &tree);
  ddp_collective_graph(model, DDP_ALGO_NVLS, &nvls);
  if (cluster->nccl.cost_model == DDP_COST_ALPHA_BETA) {
    g_string_append_printf(out, "# alpha-beta: B = %.2f GB/s (slowest link crossed), protocol effects off\n",
                           ring.bw_intra_GBs);
  } else {
    if (cluster->nccl.cost_model == DDP_COST_NCCL)
      g_string_append_printf(out,
                             "# nccl model: time = max(host floor, launch %.1f us + latency + transfer + fill); the\n"
                             "# latency is NCCL's table below plus [inter] latency_us %.1f us per network hop; peaks\n"
                             "# from the links (intra efficiency %.3f, inter %.3f); columns ch..host below\n",
                             cluster->nccl.launch_us, ddp_collective_nodes(model) > 1 ? cluster->inter.latency_us : 0.0,
                             ddp_cluster_intra_efficiency(cluster),
                             ddp_collective_nodes(model) > 1 ? ddp_cluster_inter_efficiency(cluster) : 0.0);
    g_string_append_printf(out,
                           "# graphs (NCCL topology search, emulated): ring %d channels x %.1f/%.1f GB/s, "
                           "tree %d channels x %.1f/%.1f GB/s",
                           ring.channels, ring.bw_intra_GBs, ring.bw_inter_GBs, tree.channels, tree.bw_intra_GBs,
                           tree.bw_inter_GBs);
    if (nvls.channels > 0)
      g_string_append_printf(out, ", nvls %d channels x %.1f/%.1f GB/s", nvls.channels, nvls.bw_intra_GBs,
                             nvls.bw_inter_GBs);
    else
      g_string_append(out, ", no nvls");
    /* SHARP ([nccl] collnet, docs/collective.md §13): the heads of CollNetDirect, and the chain's graph */
    DdpCollectiveGraph direct, chain;
    ddp_collective_graph(model, DDP_ALGO_COLLNET_DIRECT, &direct);
    ddp_collective_graph(model, DDP_ALGO_COLLNET_CHAIN, &chain);
    if (direct.channels > 0)
      g_string_append_printf(out, ", collnetdirect %d heads x %.1f/%.1f GB/s", direct.channels, direct.bw_intra_GBs,
                             direct.bw_inter_GBs);
    if (chain.channels > 0)
      g_string_append_printf(out, ", collnetchain %d channels x %.1f/%.1f GB/s", chain.channels, chain.bw_intra_GBs,
                             chain.bw_inter_GBs);
    g_string_append(out, " (intra/inter)\n"
                         "# NCCL tuning table, AllReduce latency (us) / algbw (GB/s), before size corrections:\n"
                         "#                          LL            LL128           Simple\n");
    for (DdpAlgorithm a = DDP_ALGO_RING; a < DDP_ALGO_COUNT; a++) {
      g_string_append_printf(out, "# %-13s", ddp_algorithm_name(a));
      for (DdpProtocol p = DDP_PROTO_LL; p <= DDP_PROTO_SIMPLE; p++) {
        DdpCollectiveTuning t;
        ddp_collective_tuning(model, a, p, &t);
        if (t.enabled)
          g_string_append_printf(out, "  %6.1f/%7.1f", t.latency_us, t.algbw_GBs);
        else
          g_string_append(out, "        disabled");
      }
      g_string_append_c(out, '\n');
    }
  }
  g_autoptr(GArray) choices = ddp_collective_choices(model, EXPLAIN_HORIZON_BYTES);
  g_string_append(out, "# choice by size (least predicted time):\n");
  for (guint i = 0; i < choices->len; i++) {
    const DdpCollectiveChoice *ch = &g_array_index(choices, DdpCollectiveChoice, i);
    g_autofree char *name = pair_name(ch->algorithm, ch->protocol);
    if (i + 1 < choices->len)
      g_string_append_printf(out, "#   %14" G_GUINT64_FORMAT " B .. %14" G_GUINT64_FORMAT " B  %s\n", ch->from_bytes,
                             g_array_index(choices, DdpCollectiveChoice, i + 1).from_bytes - 1, name);
    else
      g_string_append_printf(out, "#   %14" G_GUINT64_FORMAT " B and up            %s\n", ch->from_bytes, name);
  }
  DdpCollectiveChoice lat, bw;
  guint64 crossover;
  ddp_collective_crossover(model, EXPLAIN_HORIZON_BYTES, &lat, &bw, &crossover);
  g_autofree char *lat_name = pair_name(lat.algorithm, lat.protocol);
  g_autofree char *bw_name = pair_name(bw.algorithm, bw.protocol);
  g_string_append_printf(out, "# latency-optimal %s, bandwidth-optimal %s; ", lat_name, bw_name);
  if (crossover == G_MAXUINT64)
    g_string_append(out, "no crossover below 1 TiB\n");
  else
    g_string_append_printf(out, "crossover at %" G_GUINT64_FORMAT " B (%.2f MiB)\n", crossover,
                           (double)crossover / (1 << 20));
}

static void
json_pair(DdpJson *j, const char *key, DdpAlgorithm a, DdpProtocol p)
{
  ddp_json_begin_object(j, key);
  ddp_json_string(j, "algorithm", ddp_algorithm_name(a));
  ddp_json_string(j, "protocol", ddp_protocol_name(p));
  ddp_json_end_object(j);
}

static void
explain_json(DdpJson *j, const DdpCollective *model)
{
  ddp_json_begin_object(j, "explain");
  ddp_json_begin_object(j, "graphs");
  for (DdpAlgorithm a = DDP_ALGO_RING; a < DDP_ALGO_COUNT; a++) {
    DdpCollectiveGraph g;
    ddp_collective_graph(model, a, &g);
    ddp_json_begin_object(j, ddp_algorithm_name(a));
    ddp_json_int(j, "channels", g.channels);
    ddp_json_double(j, "bw_intra_GBs", g.bw_intra_GBs, 3);
    ddp_json_double(j, "bw_inter_GBs", g.bw_inter_GBs, 3);
    ddp_json_end_object(j);
  }
  ddp_json_end_object(j);
  ddp_json_begin_array(j, "tuning");
  for (DdpAlgorithm a = DDP_ALGO_RING; a < DDP_ALGO_COUNT; a++) {
    for (DdpProtocol p = DDP_PROTO_LL; p <= DDP_PROTO_SIMPLE; p++) {
      DdpCollectiveTuning t;
      ddp_collective_tuning(model, a, p, &t);
      ddp_json_begin_object(j, NULL);
      ddp_json_string(j, "algorithm", ddp_algorithm_name(a));
      ddp_json_string(j, "protocol", ddp_protocol_name(p));
      ddp_json_bool(j, "enabled", t.enabled);
      ddp_json_double(j, "latency_us", t.latency_us, 3);
      ddp_json_double(j, "algbw_GBs", t.algbw_GBs, 3);
      ddp_json_end_object(j);
    }
  }
  ddp_json_end_array(j);
  g_autoptr(GArray) choices = ddp_collective_choices(model, EXPLAIN_HORIZON_BYTES);
  ddp_json_begin_array(j, "choices");
  for (guint i = 0; i < choices->len; i++) {
    const DdpCollectiveChoice *ch = &g_array_index(choices, DdpCollectiveChoice, i);
    ddp_json_begin_object(j, NULL);
    ddp_json_int(j, "from_bytes", (gint64)ch->from_bytes);
    ddp_json_string(j, "algorithm", ddp_algorithm_name(ch->algorithm));
    ddp_json_string(j, "protocol", ddp_protocol_name(ch->protocol));
    ddp_json_end_object(j);
  }
  ddp_json_end_array(j);
  DdpCollectiveChoice lat, bw;
  guint64 crossover;
  ddp_collective_crossover(model, EXPLAIN_HORIZON_BYTES, &lat, &bw, &crossover);
  json_pair(j, "latency_optimal", lat.algorithm, lat.protocol);
  json_pair(j, "bandwidth_optimal", bw.algorithm, bw.protocol);
  if (crossover == G_MAXUINT64)
    ddp_json_double(j, "crossover_bytes", NAN, 0);   /* null */
  else
    ddp_json_int(j, "crossover_bytes", (gint64)crossover);
  ddp_json_end_object(j);
}

/* ---- the sweep table ---- */

static char *
sweep_text(const DdpCluster *cluster, const DdpCollective *model, const Sweep *s, const GArray *rows,
           gboolean explain)
{
  GString *out = g_string_new(NULL);
  guint64 nodes = ddp_collective_nodes(model), domains = ddp_collective_domains(model);
  g_autofree char *in_domains = domains < nodes ? g_strdup_printf(" in %" G_GUINT64_FORMAT " NVLink domain%s", domains,
                                                                  domains == 1 ? "" : "s")
                                                : g_strdup("");
  g_autofree char *protocols = ddp_protocol_set_name(cluster->nccl.protocol, cluster->nccl.disabled_protocols);
  g_autofree char *algorithms = ddp_algorithm_set_name(cluster->nccl.algorithm, cluster->nccl.disabled_algorithms);
  g_string_append_printf(out, "# ddpsim %s%s: cluster %s, %" G_GUINT64_FORMAT " GPUs = %" G_GUINT64_FORMAT
                              " node%s x %" G_GUINT64_FORMAT "%s, %s cost model, algorithm %s, protocol %s\n",
                         s->op == DDP_OP_ALL_REDUCE ? "allreduce" : "collective --op ",
                         s->op == DDP_OP_ALL_REDUCE ? "" : ddp_collective_op_name(s->op), cluster->name,
                         ddp_collective_gpus(model), nodes, nodes == 1 ? "" : "s", ddp_collective_gpus(model) / nodes,
                         in_domains, cost_model_name(cluster->nccl.cost_model),
                         algorithms, protocols);
  /* Across NVLink domains NCCL's choice is not what the public multi-rack curves show
   * (docs/collective.md §11.8): say so where the answer depends on it. */
  g_autofree char *caveat = s->op == DDP_OP_ALL_REDUCE
                              ? ddp_collective_domains_caveat(nodes, domains, cluster->nccl.algorithm, "# ", "--algo ring")
                              : NULL;
  if (caveat)
    g_string_append(out, caveat);
  /* and over TCP sockets at the default share, which the public curves spread over 0.1-0.4, or over
   * Slingshot, whose mid sizes the model misses (§10.3) */
  g_autofree char *transport = ddp_collective_transport_caveat(cluster, nodes, "# ");
  if (transport)
    g_string_append(out, transport);
  /* what the collective model does with an algorithm the op does not have (docs/collective.md §12) */
  DdpAlgorithm forced = cluster->nccl.algorithm;
  if (s->op == DDP_OP_BROADCAST && forced != DDP_ALGO_AUTO && forced != DDP_ALGO_RING)
    g_string_append_printf(out, "# (NCCL's broadcast runs on the ring only: algorithm %s does not apply)\n",
                           ddp_algorithm_name(forced));
  else if ((s->op == DDP_OP_ALL_GATHER || s->op == DDP_OP_REDUCE_SCATTER) &&
           (forced == DDP_ALGO_TREE || forced == DDP_ALGO_NVLS_TREE || forced == DDP_ALGO_COLLNET_CHAIN))
    g_string_append_printf(out, "# (NCCL has no %s %s: the rows take auto's choice)\n", ddp_algorithm_name(forced),
                           ddp_collective_op_name(s->op));
  else if ((s->op == DDP_OP_ALL_GATHER || s->op == DDP_OP_REDUCE_SCATTER) && forced == DDP_ALGO_COLLNET_DIRECT)
    g_string_append_printf(out, "# (ddpsim does not model NCCL's collnetdirect %s (docs/collective.md §12): the rows "
                                "take auto's choice)\n", ddp_collective_op_name(s->op));
  if (explain)
    explain_text(out, cluster, model);
  /* --explain under the nccl model: the terms of each row (channels in use, latency, transfer,
   * pipeline fill, and the host floor where it binds) */
  gboolean terms = explain && cluster->nccl.cost_model == DDP_COST_NCCL;
  g_string_append_printf(out, "#\n"
                              "#         size          count      type        time     algbw     busbw  algorithm  protocol%s\n"
                              "#          (B)     (elements)                  (us)    (GB/s)    (GB/s)%s\n",
                         terms ? "  ch   latency  transfer      fill   host" : "",
                         terms ? "                          (us)      (us)      (us)   (us)" : "");
  for (guint i = 0; i < rows->len; i++) {
    const Row *r = &g_array_index(rows, Row, i);
    g_string_append_printf(out, "%14" G_GUINT64_FORMAT " %14" G_GUINT64_FORMAT " %9s %11.2f %9.2f %9.2f %10s %9s",
                           r->bytes, r->count, s->type_name, r->cost.time_us, r->cost.algbw_GBs, r->cost.busbw_GBs,
                           ddp_algorithm_name(r->cost.algorithm), ddp_protocol_name(r->cost.protocol));
    if (terms)
      g_string_append_printf(out, " %3d %9.2f %9.2f %9.2f %6.1f", r->cost.channels, r->cost.latency_us,
                             r->cost.transfer_us, r->cost.fill_us, r->cost.host_floor_us);
    g_string_append_c(out, '\n');
  }
  g_string_append_printf(out, "# Avg bus bandwidth    : %.3f\n", average_busbw(rows));
  return g_string_free(out, FALSE);
}

static char *
sweep_csv(const Sweep *s, const GArray *rows)
{
  GString *out = g_string_new("bytes,count,type,time_us,algbw_GBs,busbw_GBs,algorithm,protocol\n");
  for (guint i = 0; i < rows->len; i++) {
    const Row *r = &g_array_index(rows, Row, i);
    g_string_append_printf(out, "%" G_GUINT64_FORMAT ",%" G_GUINT64_FORMAT ",%s,%.3f,%.3f,%.3f,%s,%s\n", r->bytes,
                           r->count, s->type_name, r->cost.time_us, r->cost.algbw_GBs, r->cost.busbw_GBs,
                           ddp_algorithm_name(r->cost.algorithm), ddp_protocol_name(r->cost.protocol));
  }
  return g_string_free(out, FALSE);
}

static char *
sweep_json(const DdpCluster *cluster, const DdpCollective *model, const Sweep *s, const GArray *rows,
           gboolean explain)
{
  DdpJson *j = ddp_json_new();
  ddp_json_begin_object(j, NULL);
  ddp_json_string(j, "op", ddp_collective_op_name(s->op));
  ddp_json_string(j, "cluster", cluster->name);
  ddp_json_int(j, "gpus", (gint64)ddp_collective_gpus(model));
  ddp_json_int(j, "nodes", (gint64)ddp_collective_nodes(model));
  ddp_json_int(j, "domains", (gint64)ddp_collective_domains(model));
  ddp_json_string(j, "cost_model", cost_model_name(cluster->nccl.cost_model));
  ddp_json_string(j, "type", s->type_name);
  ddp_json_begin_array(j, "rows");
  for (guint i = 0; i < rows->len; i++) {
    const Row *r = &g_array_index(rows, Row, i);
    ddp_json_begin_object(j, NULL);
    ddp_json_int(j, "bytes", (gint64)r->bytes);
    ddp_json_int(j, "count", (gint64)r->count);
    ddp_json_double(j, "time_us", r->cost.time_us, 3);
    ddp_json_double(j, "algbw_GBs", r->cost.algbw_GBs, 3);
    ddp_json_double(j, "busbw_GBs", r->cost.busbw_GBs, 3);
    ddp_json_string(j, "algorithm", ddp_algorithm_name(r->cost.algorithm));
    ddp_json_string(j, "protocol", ddp_protocol_name(r->cost.protocol));
    ddp_json_end_object(j);
  }
  ddp_json_end_array(j);
  ddp_json_double(j, "avg_busbw_GBs", average_busbw(rows), 3);
  if (explain)
    explain_json(j, model);
  ddp_json_end_object(j);
  return ddp_json_free_to_string(j);
}

/* ---- --compare ---- */

/* "#   < 64 KiB: median 1.2 %, max 3.4 % (10 points)" for each size regime with points. */
static void
regime_lines(GString *out, const DdpCompareStats stats[DDP_REGIME_COUNT])
{
  for (int r = 0; r < DDP_REGIME_ALL; r++)
    if (stats[r].points > 0)
      g_string_append_printf(out, "#   %-16s median %5.1f %%, max %6.1f %% (%u points)\n", ddp_size_regime_name(r),
                             100.0 * stats[r].median_abs_error, 100.0 * stats[r].max_abs_error, stats[r].points);
}

static char *
compare_text(const char *path, const GPtrArray *curves)
{
  GString *out = g_string_new(NULL);
  guint points = 0;
  g_string_append_printf(out, "# ddpsim allreduce --compare %s\n"
                              "# error = predicted / measured busbw - 1; busbw recomputed from bytes and time\n",
                         path);
  for (guint c = 0; c < curves->len; c++) {
    const DdpCompareCurve *cv = curves->pdata[c];
    g_string_append_printf(out, "#\n# curve %u: %s\n#   %" G_GUINT64_FORMAT " GPUs, %" G_GUINT64_FORMAT
                                " node%s, %u GPU%s per process, cluster %s; source: %s\n",
                           c + 1, cv->system, cv->gpus, cv->nodes, cv->nodes == 1 ? "" : "s", cv->gpus_per_process,
                           cv->gpus_per_process == 1 ? "" : "s", cv->cluster, cv->source);
    g_string_append(out, "#         size   meas time   pred time  meas busbw  pred busbw    error  algorithm  protocol\n"
                         "#          (B)        (us)        (us)      (GB/s)      (GB/s)      (%)\n");
    for (guint i = 0; i < cv->points->len; i++) {
      const DdpComparePoint *p = &g_array_index(cv->points, DdpComparePoint, i);
      g_string_append_printf(out, "%14" G_GUINT64_FORMAT " %11.2f %11.2f %11.2f %11.2f %+8.1f %10s %9s\n", p->bytes,
                             p->measured_us, p->predicted.time_us, p->measured_busbw_GBs, p->predicted.busbw_GBs,
                             100.0 * p->busbw_error, ddp_algorithm_name(p->predicted.algorithm),
                             ddp_protocol_name(p->predicted.protocol));
    }
    g_string_append_printf(out, "# curve %u: median |error| %.1f %% over %u points\n", c + 1,
                           100.0 * cv->median_abs_error, cv->points->len);
    DdpCompareStats stats[DDP_REGIME_COUNT];
    ddp_compare_curve_stats(cv, stats);
    regime_lines(out, stats);
    points += cv->points->len;
  }
  g_string_append_printf(out, "#\n# all curves: median |error| %.1f %% over %u points\n",
                         100.0 * ddp_compare_median_abs_error(curves), points);
  DdpCompareStats stats[DDP_REGIME_COUNT];
  ddp_compare_stats(curves, stats);
  regime_lines(out, stats);
  return g_string_free(out, FALSE);
}

static void
csv_field(GString *out, const char *text)
{
  g_string_append_c(out, '"');
  for (const char *s = text; *s; s++) {
    if (*s == '"')
      g_string_append_c(out, '"');
    g_string_append_c(out, *s);
  }
  g_string_append_c(out, '"');
}

static char *
compare_csv(const GPtrArray *curves)
{
  GString *out = g_string_new("curve,system,cluster,gpus,nodes,bytes,measured_us,predicted_us,measured_busbw_GBs,"
                              "predicted_busbw_GBs,busbw_error,algorithm,protocol\n");
  for (guint c = 0; c < curves->len; c++) {
    const DdpCompareCurve *cv = curves->pdata[c];
    for (guint i = 0; i < cv->points->len; i++) {
      const DdpComparePoint *p = &g_array_index(cv->points, DdpComparePoint, i);
      g_string_append_printf(out, "%u,", c + 1);
      csv_field(out, cv->system);
      g_string_append_c(out, ',');
      csv_field(out, cv->cluster);
      g_string_append_printf(out, ",%" G_GUINT64_FORMAT ",%" G_GUINT64_FORMAT ",%" G_GUINT64_FORMAT
                                  ",%.3f,%.3f,%.3f,%.3f,%.4f,%s,%s\n",
                             cv->gpus, cv->nodes, p->bytes, p->measured_us, p->predicted.time_us,
                             p->measured_busbw_GBs, p->predicted.busbw_GBs, p->busbw_error,
                             ddp_algorithm_name(p->predicted.algorithm), ddp_protocol_name(p->predicted.protocol));
    }
  }
  return g_string_free(out, FALSE);
}

/* "regimes": [{"regime": "< 64 KiB", "points": 10, "median_abs_error": .., "max_abs_error": ..}, ...] */
static void
regimes_json(DdpJson *j, const DdpCompareStats stats[DDP_REGIME_COUNT])
{
  ddp_json_begin_array(j, "regimes");
  for (int r = 0; r < DDP_REGIME_COUNT; r++) {
    ddp_json_begin_object(j, NULL);
    ddp_json_string(j, "regime", ddp_size_regime_name(r));
    ddp_json_int(j, "points", stats[r].points);
    ddp_json_double(j, "median_abs_error", stats[r].median_abs_error, 4);
    ddp_json_double(j, "max_abs_error", stats[r].max_abs_error, 4);
    ddp_json_end_object(j);
  }
  ddp_json_end_array(j);
}

static char *
compare_json(const GPtrArray *curves)
{
  DdpJson *j = ddp_json_new();
  ddp_json_begin_object(j, NULL);
  ddp_json_begin_array(j, "curves");
  for (guint c = 0; c < curves->len; c++) {
    const DdpCompareCurve *cv = curves->pdata[c];
    ddp_json_begin_object(j, NULL);
    ddp_json_string(j, "system", cv->system);
    ddp_json_string(j, "source", cv->source);
    ddp_json_string(j, "cluster", cv->cluster);
    ddp_json_int(j, "gpus", (gint64)cv->gpus);
    ddp_json_int(j, "nodes", (gint64)cv->nodes);
    ddp_json_int(j, "gpus_per_process", cv->gpus_per_process);
    ddp_json_double(j, "median_abs_error", cv->median_abs_error, 4);
    DdpCompareStats stats[DDP_REGIME_COUNT];
    ddp_compare_curve_stats(cv, stats);
    regimes_json(j, stats);
    ddp_json_begin_array(j, "points");
    for (guint i = 0; i < cv->points->len; i++) {
      const DdpComparePoint *p = &g_array_index(cv->points, DdpComparePoint, i);
      ddp_json_begin_object(j, NULL);
      ddp_json_int(j, "bytes", (gint64)p->bytes);
      ddp_json_double(j, "measured_us", p->measured_us, 3);
      ddp_json_double(j, "time_us", p->predicted.time_us, 3);
      ddp_json_double(j, "measured_busbw_GBs", p->measured_busbw_GBs, 3);
      ddp_json_double(j, "busbw_GBs", p->predicted.busbw_GBs, 3);
      ddp_json_double(j, "busbw_error", p->busbw_error, 4);
      ddp_json_string(j, "algorithm", ddp_algorithm_name(p->predicted.algorithm));
      ddp_json_string(j, "protocol", ddp_protocol_name(p->predicted.protocol));
      ddp_json_end_object(j);
    }
    ddp_json_end_array(j);
    ddp_json_end_object(j);
  }
  ddp_json_end_array(j);
  ddp_json_double(j, "median_abs_error", ddp_compare_median_abs_error(curves), 4);
  DdpCompareStats stats[DDP_REGIME_COUNT];
  ddp_compare_stats(curves, stats);
  regimes_json(j, stats);
  ddp_json_end_object(j);
  return ddp_json_free_to_string(j);
}

/* ---- the verb ---- */

static int
run(int argc, char **argv, AllreduceOptions *o, const char *verb)
{
  GOptionEntry own[] = {
    { "cluster", 0, 0, G_OPTION_ARG_STRING, &o->cluster, "Cluster file or shipped name (default dgx-a100)", "NAME|PATH" },
    { "gpus", 0, 0, G_OPTION_ARG_STRING, &o->gpus, "Ranks in the communicator (default: one node)", "N" },
    { "minbytes", 'b', 0, G_OPTION_ARG_STRING, &o->min_bytes, "Smallest size (default 8)", "SIZE" },
    { "maxbytes", 'e', 0, G_OPTION_ARG_STRING, &o->max_bytes, "Largest size (default 128M)", "SIZE" },
    { "stepfactor", 'f', 0, G_OPTION_ARG_STRING, &o->step_factor, "Multiply the size by this each row (default 2)", "F" },
    { "stepbytes", 'i', 0, G_OPTION_ARG_STRING, &o->step_bytes, "Add this to the size each row instead", "SIZE" },
    { "datatype", 'd', 0, G_OPTION_ARG_STRING, &o->datatype, "Element type for the count column: float, half, bfloat16, double", "TYPE" },
    { "ngpus", 'g', 0, G_OPTION_ARG_STRING, &o->per_process, "GPUs per process, as nccl-tests -g: one thread issues every call for them (default 1)", "N" },
    { "algo", 0, 0, G_OPTION_ARG_STRING, &o->algo, "ring, tree, nvls, nvlstree, collnetdirect, collnetchain, auto, or an NCCL_ALGO list such as Ring,Tree or ^NVLS,NVLSTree (overrides the cluster file)", "ALGO" },
    { "proto", 0, 0, G_OPTION_ARG_STRING, &o->proto, "LL, LL128, Simple, auto, or an NCCL_PROTO list such as Simple,LL128 or ^LL (overrides the cluster file)", "PROTO" },
    { "explain", 0, 0, G_OPTION_ARG_NONE, &o->explain, "Show graphs, NCCL's tuning table, choice by size and the crossover", NULL },
    { "compare", 0, 0, G_OPTION_ARG_FILENAME, &o->compare, "Predict every row of a measured nccl-tests CSV, side by side", "CSV" },
    { "calibration", 0, 0, G_OPTION_ARG_FILENAME, &o->calibration, "Use the costs a calibration database measured (ddpsim fit): the op's measured curve at exactly its GPU and node count, the model with fitted tiers elsewhere", "DB" },
    { "op", 0, 0, G_OPTION_ARG_STRING, &o->op, "all_reduce (default), all_gather, reduce_scatter or broadcast", "OP" },
    { "json", 0, 0, G_OPTION_ARG_NONE, &o->json, "Print JSON (fields: docs/json.md)", NULL },
    { "csv", 0, 0, G_OPTION_ARG_NONE, &o->csv, "Print CSV", NULL },
    { NULL, 0, 0, 0, NULL, NULL, NULL },
  };
  g_autoptr(GError) error = NULL;
  if (!ddp_cmd_parse(verb, "Collective costs alone, as an nccl-tests table (all_reduce_perf, all_gather_perf, ...).",
                     allreduce_description, own, NULL, &argc, &argv, NULL, &error))
    return ddp_cmd_fail(verb, error);
  if (o->json && o->csv) {
    fail(&error, "%s", "--json and --csv: choose one");
    return ddp_cmd_fail(verb, error);
  }
  g_autofree char *text = NULL;
  if (o->op && ddp_collective_op_parse(o->op) != DDP_OP_ALL_REDUCE && (o->compare || o->explain)) {
    fail(&error, "--op %s: --compare and --explain are AllReduce's (NCCL's tuning table, the comparison CSVs)", o->op);
    return ddp_cmd_fail(verb, error);
  }
  if (o->compare) {
    if (o->cluster || o->gpus || o->algo || o->proto || o->explain || o->per_process) {
      fail(&error, "%s", "--compare takes clusters and GPU counts from the CSV; drop --cluster, --gpus, --algo, --proto, -g, --explain");
      return ddp_cmd_fail(verb, error);
    }
    g_autoptr(GPtrArray) curves = ddp_collective_compare_csv(o->compare, &error);
    if (!curves)
      return ddp_cmd_fail(verb, error);
    text = o->json ? compare_json(curves) : o->csv ? compare_csv(curves) : compare_text(o->compare, curves);
  } else {
    Sweep sweep;
    if (!parse_sweep(o, &sweep, &error))
      return ddp_cmd_fail(verb, error);
    g_autoptr(DdpCluster) cluster = load_cluster(o, &error);
    if (!cluster)
      return ddp_cmd_fail(verb, error);
    guint64 gpus = sweep.gpus ? sweep.gpus : (guint64)cluster->gpus_per_node;
    guint64 nodes = 1;
    if (!ddp_cluster_check_gpus(cluster, gpus, &nodes, &error))
      return ddp_cmd_fail(verb, error);
    /* a calibration first fits the model's per-tier parameters of the cluster (tierfit.h) */
    g_autoptr(DdpFit) calibration = NULL;
    g_autoptr(GPtrArray) warnings = NULL, tier_lines = NULL;
    g_autofree char *op_note = NULL;
    if (o->calibration) {
      if (!(calibration = ddp_fit_open(o->calibration, &error)))
        return ddp_cmd_fail(verb, error);
      DdpTierFit tiers;
      ddp_tier_calibrate_cluster(cluster, calibration, &tiers);
      g_autofree char *name = g_path_get_basename(o->calibration);
      warnings = ddp_fit_coverage_warnings(calibration, &cluster->gpu, gpus, sweep.op == DDP_OP_ALL_REDUCE);
      tier_lines = ddp_tier_fit_report(&tiers, name, gpus, nodes);
      /* the other collectives: their own measured curve, or the model with the tiers above */
      if (sweep.op != DDP_OP_ALL_REDUCE)
        op_note = ddp_fit_collective_note(calibration, name, sweep.op, gpus, nodes);
      else
        op_note = ddp_fit_forced_variant_note(calibration, gpus, nodes, cluster->nccl.algorithm, cluster->nccl.protocol);
    }
    g_autoptr(DdpCollective) model = ddp_collective_new(cluster, gpus, &error);
    if (!model)
      return ddp_cmd_fail(verb, error);
    if (sweep.per_process > gpus || gpus % sweep.per_process != 0) {   /* nccl-tests: nGpus divides the ranks */
      fail(&error, "-g: %s GPUs per process must divide the communicator's GPUs", o->per_process);
      return ddp_cmd_fail(verb, error);
    }
    ddp_collective_set_gpus_per_process(model, (guint)sweep.per_process);
    if (calibration) {
      ddp_collective_use_calibration(model, calibration);
      for (guint i = 0; i < warnings->len; i++)
        g_printerr("ddpsim: %s\n", (const char *)g_ptr_array_index(warnings, i));
      for (guint i = 0; i < tier_lines->len; i++)
        g_printerr("ddpsim: %s\n", (const char *)g_ptr_array_index(tier_lines, i));
      if (op_note)
        g_printerr("ddpsim: %s\n", op_note);
    }
    g_autoptr(GArray) rows = sweep_rows(model, &sweep);
    if (rows->len == 0) {   /* AllGather/ReduceScatter: every rank's part rounded down to nothing */
      g_set_error(&error, DDP_CMD_ERROR, 0,
                  "-e: every size up to %" G_GUINT64_FORMAT " B is below the smallest %s over %" G_GUINT64_FORMAT
                  " GPUs, %" G_GUINT64_FORMAT " B (each rank's part is whole 16-byte units, as nccl-tests counts it)",
                  sweep.max_bytes, ddp_collective_op_name(sweep.op), gpus,
                  gpus * MAX(16, (guint64)sweep.type_size));
      return ddp_cmd_fail(verb, error);
    }
    text = o->json  ? sweep_json(cluster, model, &sweep, rows, o->explain)
           : o->csv ? sweep_csv(&sweep, rows)
                    : sweep_text(cluster, model, &sweep, rows, o->explain);
  }
  if (!ddp_cmd_print(text, &error))
    return ddp_cmd_fail(verb, error);
  return DDP_EXIT_OK;
}

static void
options_clear(AllreduceOptions *o)
{
  g_free(o->cluster);
  g_free(o->gpus);
  g_free(o->min_bytes);
  g_free(o->max_bytes);
  g_free(o->step_factor);
  g_free(o->step_bytes);
  g_free(o->datatype);
  g_free(o->algo);
  g_free(o->proto);
  g_free(o->compare);
  g_free(o->calibration);
  g_free(o->per_process);
  g_free(o->op);
}

int
ddp_cmd_allreduce(int argc, char **argv)
{
  AllreduceOptions options = { 0 };
  int status = run(argc, argv, &options, "allreduce");
  options_clear(&options);
  return status;
}

int
ddp_cmd_collective(int argc, char **argv)
{
  AllreduceOptions options = { 0 };
  int status = run(argc, argv, &options, "collective");
  options_clear(&options);
  return status;
}
