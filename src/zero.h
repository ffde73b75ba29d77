/* zero — torch.distributed.optim.ZeroRedundancyOptimizer wrapped around DDP (ZeRO stage 1): DDP's
 * buckets and AllReduces as ddp.c simulates them, then the optimizer step on this rank's 1/N of
 * the parameters (and of the optimizer state), then every rank's updated partition broadcast from
 * its owner (zero_redundancy_optimizer.py step → _sync_params: one broadcast per rank's
 * partition); or, with overlap_with_ddp=True, the step and the broadcasts bucket by bucket inside
 * DDP's communication hook (ddp_comm_hooks/ddp_zero_hook.py), in the steady state.  Derivation in
 * docs/model.md "Strategies beyond DDP". */
#ifndef DDP_ZERO_H
#define DDP_ZERO_H

#include <glib.h>
#include "ddp.h"

/* The largest rank's share (0..1] of @model's parameter elements under ZeroRedundancyOptimizer's
 * partition over @ranks (zero.c). */
double ddp_zero_largest_share(const DdpModel *model, guint64 ranks);

/* The same under overlap_with_ddp's partition: each of @buckets (DDP's steady layout) whole to rank
 * index mod @ranks (_get_assigned_rank). */
double ddp_zero_bucket_share(const DdpModel *model, const DdpBucketSchedule *buckets, guint n_buckets, guint64 ranks);

/* The tail of one steady iteration under ZeroRedundancyOptimizer(overlap_with_ddp=True), as pure
 * data: DDP's buckets (launch and AllReduce time, in bucket order), each bucket's step on its
 * owner (rank b mod @ranks) and broadcast, the hook.  Times in ns from the iteration start. */
typedef struct {
  guint n_buckets;
  guint64 ranks;
  const gint64 *launch_ns;      /* [n_buckets] when the last rank launched the bucket's AllReduce */
  const gint64 *all_reduce_ns;  /* [n_buckets] its duration */
  const gint64 *step_ns;        /* [n_buckets] the owner's optimizer step on the bucket's parameters */
  const gint64 *broadcast_ns;   /* [n_buckets] the owner's broadcast of them (0 on one rank) */
  gint64 first_start_ns;        /* when the NCCL stream can start AllReduce 0 */
  gint64 backward_end_ns;       /* the compute stream after the (slowest rank's) backward */
  DdpZeroHook hook;
} DdpZeroOverlapPlan;

/* Where ddp_zero_overlap_schedule() puts each bucket's operations: caller-owned [n_buckets] arrays. */
typedef struct {
  gint64 *all_reduce_start_ns, *all_reduce_end_ns;
  gint64 *step_start_ns, *step_end_ns;          /* on the owner's step stream */
  gint64 *broadcast_start_ns, *broadcast_end_ns;
} DdpZeroOverlapTimes;

/* Schedules @plan (zero.c "How time advances"), filling @out.  Returns when every rank's stream
 * that DDP's finalize waits on is free: every step and broadcast done, backward ended. */
gint64 ddp_zero_overlap_schedule(const DdpZeroOverlapPlan *plan, DdpZeroOverlapTimes *out);

/* ddp_simulate() for setup.mode zero1, overlap_with_ddp (setup.shard) included.  Returns:
 * (transfer full) or NULL with @error set. */
DdpResult *ddp_zero_simulate(const DdpScenario *scenario, const DdpRunOptions *options, GError **error);

#endif
