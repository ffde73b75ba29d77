/* ddp — one DDP training run on the event kernel, as PyTorch implements it (docs/model.md §1, §5):
 * forward; backward layer by layer with gradient-ready hooks copying into buckets; buckets
 * launched strictly in index order on one FIFO comm stream, each collective starting when the last
 * rank has launched it and the stream is free; finalize waiting for the last bucket; optimizer.
 * Iteration 0 uses the construction-time bucket layout, later ones the rebuilt layout; gradient
 * accumulation runs K-1 micro-steps under no_sync.  Ranks are arrays, advanced at bucket
 * granularity; identical ranks collapse to one, and with stragglers only the ranks that can set
 * the pace are drawn (docs/model.md §7: 10⁶ ranks × 100 iterations in about a second, bench/). */
#ifndef DDP_DDP_H
#define DDP_DDP_H

#include <glib.h>
#include "collective.h"
#include "compute.h"
#include "scenario.h"

typedef struct {
  guint index;
  guint64 bytes;          /* gradient bytes in the bucket */
  guint64 wire_bytes;     /* bytes the AllReduce moves (halved by fp16/bf16 compression hooks) */
  guint n_params;
  guint *params;          /* model param indices, in bucket order (owned by the result) */
  gint64 ready_ns;        /* the last rank had all of this bucket's gradients; from iteration start */
  gint64 launch_ns;       /* the last rank launched it (buckets launch in index order) */
  gint64 start_ns;        /* the collective started on the comm stream */
  gint64 end_ns;
  DdpCollectiveCost cost;
} DdpBucketSchedule;

typedef enum { DDP_SEGMENT_FORWARD, DDP_SEGMENT_BACKWARD, DDP_SEGMENT_HOOK_CAST, DDP_SEGMENT_WAIT,
               DDP_SEGMENT_FINALIZE, DDP_SEGMENT_OPTIMIZER, DDP_SEGMENT_BROADCAST,
               DDP_SEGMENT_UNUSED_SEARCH /* find_unused_parameters' autograd-graph search */,
               DDP_SEGMENT_CONTENTION /* FSDP: compute slowed by its collectives, drawn after the step */ } DdpSegmentKind;

/* A span on one rank's compute stream; layer is the model layer for FORWARD/BACKWARD, the bucket
 * for HOOK_CAST, else -1.  Times from the iteration start. */
typedef struct {
  DdpSegmentKind kind;
  int index;
  guint micro_step;
  gint64 start_ns, end_ns;
} DdpSegment;

typedef struct {
  guint64 rank;
  double factor;           /* its straggler slowdown in the reported iteration */
  GArray *segments;        /* of DdpSegment, reported iteration */
} DdpRankTimeline;

/* One collective of a sharded strategy (fsdp.h, zero.h) on its NCCL stream: lane 0 the process
 * group's stream (AllGather, ReduceScatter, ZeRO's broadcasts), lane 1 HSDP's replica group.
 * @unit: the FSDP unit (-1 when none), @backward: issued in backward, @micro_step: of the
 * --accumulate micro-steps (0 .. K-1).  Times from the iteration start. */
typedef struct {
  DdpCollectiveOp op;
  int unit;
  guint lane;
  gboolean backward;
  guint64 bytes;
  gint64 start_ns, end_ns;
  guint micro_step;
} DdpCommSpan;

typedef struct {
  guint64 gpus, nodes;
  guint64 domains;                   /* NVLink domains the ranks span (NCCL's nodes: ddp_collective_domains) */
  guint iterations;                  /* steady iterations simulated */
  double *iteration_ms;              /* [iterations] */
  double mean_ms, p50_ms, p99_ms;
  double first_iteration_ms;         /* iteration 0 (initial layout), + the one-time rebuild unless
                                        static_graph (which rebuilds after iteration 1) */
  double compute_ms;                 /* nominal compute-stream work per iteration */
  double comm_ms;                    /* collective time per iteration (comm stream busy) */
  double exposed_comm_ms;            /* communication the step had to wait for */
  double overlap;                    /* 1 - exposed/comm: fraction of communication hidden */
  double straggler_wait_ms;          /* the rest: waiting on slower ranks beyond the terms below */
  /* Overheads that are not collectives (docs/overheads.md), per iteration:
   * mean ≈ compute_ms + jitter_ms + contention_ms + exposed_comm_ms + host_iteration_ms
   *        + input_wait_ms + straggler_wait_ms */
  double host_iteration_ms;          /* serial host time at the step boundary (host_iteration_us) */
  double host_layer_ms;              /* part of compute_ms: layer passes bound by host dispatch */
  double recompute_ms;               /* part of compute_ms: the forward passes activation
                                        checkpointing reruns in backward (0: off) */
  double input_wait_ms;              /* waiting for the data loader (input_rate per node) */
  double jitter_ms;                  /* the slowest rank's extra compute from rank-to-rank jitter */
  double jitter_slowest;             /* that rank's speed factor (1: no jitter) */
  double contention_ms;              /* backward stretched by overlapping collectives (overlap_slowdown, and
                                      * BatchNorm waiting for them: batch_norm_waits) */
  gboolean batch_norm_waits;         /* BatchNorm backward waited for running collectives across nodes (the
                                      * model has BatchNorm, the ranks span nodes, the setting is on) */
  double overlap_slowdown;           /* the slowdown in force */
  int overlap_slowdown_channels;     /* > 0: the slowdown is C / (SMs − C) for these NCCL channels;
                                        0: a flag, scenario, cluster or calibration set it, or the
                                        channels are unknown (ddp_overheads_overlap_slowdown) */
  double single_gpu_ms;              /* same setup on one GPU, no stragglers */
  double scaling_efficiency;         /* single_gpu_ms / mean_ms (weak scaling, fixed per-GPU batch) */
  double samples_per_s;
  DdpMemory memory;
  guint n_buckets;
  DdpBucketSchedule *buckets;        /* steady layout, the last simulated iteration */
  guint n_initial_buckets;
  guint n_timelines;
  DdpRankTimeline *timelines;        /* for the watched ranks, last simulated iteration */
  gint64 reported_iteration_ns;      /* duration of that iteration */
  gint64 reported_exposed_comm_ns;   /* that iteration's exposed communication: the figure
                                      * exposed_comm_ms averages (timeline shows this one) */
  gint64 *backward_end_ns;           /* [collapsed_ranks ? 1 : gpus] when each rank finished its
                                      * synchronised backward in that iteration, ns from its start:
                                      * who was slow (timeline --ranks); the max is where the
                                      * exposed communication begins */
  guint64 events;                    /* event-kernel events processed */
  gboolean collapsed_ranks;          /* identical ranks simulated as one */
  double unused_search_ms;           /* find_unused_parameters: graph search per iteration (host) */
  double unused_map_ms;              /* find_unused_parameters: AllReduce of the used-parameter map */
  struct DdpDpCost *dp;              /* setup.mode dp: DataParallel's terms (dp.h), else NULL */
  /* setup.mode fsdp / zero1 (fsdp.h, zero.h); else NULL and 0 */
  GArray *spans;                     /* of DdpCommSpan, one iteration, in issue order */
  guint n_units;                     /* FSDP units (the root included) */
  guint64 shard_gpus;                /* ranks one parameter is sharded over (1: replicated) */
  double all_gather_ms, reduce_scatter_ms, replica_all_reduce_ms;  /* per iteration, stream-busy */
} DdpResult;

void ddp_result_free(DdpResult *result);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(DdpResult, ddp_result_free)

typedef struct {
  const guint64 *watch_ranks;        /* ranks whose timeline to record; NULL: none */
  guint n_watch_ranks;
  gboolean exact_ranks;              /* never collapse identical ranks, draw every rank, no
                                      * envelope: the plain per-rank pass (equivalence tests) */
  gboolean per_rank;                 /* draw every rank every iteration (the reference the
                                      * order-statistics path is tested against) */
  guint threads;                     /* threads for per-rank draws; 0: one per core.  The
                                      * numbers never depend on it */
  gboolean skip_single_gpu;          /* do not compute the 1-GPU baseline (efficiency left 0) */
  gboolean plain_module;             /* the model without DDP: no reducer hooks or copies, no
                                      * communication (the baseline T(1) of scaling efficiency) */
  const DdpComputeOptions *compute;  /* NULL: defaults */
  void (*progress)(gpointer data);   /* called after each steady iteration (a progress line); NULL: none */
  gpointer progress_data;
} DdpRunOptions;

/* Simulates @scenario (its setup.gpus ranks).  Returns: (transfer full) the result, or NULL with
 * @error set when the setup does not fit the cluster. */
DdpResult *ddp_simulate(const DdpScenario *scenario, const DdpRunOptions *options, GError **error);

/* T(1), the baseline of scaling efficiency: @scenario's model trained on one GPU with @batch
 * samples WITHOUT DDP (as PyTorch's DDP benchmark and users measure it), no stragglers.  @compute NULL: defaults (or the scenario's calibration). */
gboolean ddp_simulate_one_gpu(const DdpScenario *scenario, double batch, const DdpComputeOptions *compute,
                              double *iteration_ms, GError **error);

#endif
