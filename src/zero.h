/* zero — torch.distributed.optim.ZeroRedundancyOptimizer wrapped around DDP (ZeRO stage 1): DDP's
 * buckets and AllReduces as ddp.c simulates them, then the optimizer step on this rank's 1/N of
 * the parameters (and of the optimizer state), then every rank's updated partition broadcast from
 * its owner (zero_redundancy_optimizer.py step → _sync_params: one broadcast per rank's
 * partition).  Derivation in docs/model.md "Strategies beyond DDP". */
#ifndef DDP_ZERO_H
#define DDP_ZERO_H

#include <glib.h>
#include "ddp.h"

/* The largest rank's share (0..1] of @model's parameter elements under ZeroRedundancyOptimizer's
 * partition over @ranks (zero.c). */
double ddp_zero_largest_share(const DdpModel *model, guint64 ranks);

/* ddp_simulate() for setup.mode zero1.  Refuses overlap_with_ddp (not modelled yet).  Returns:
 * (transfer full) or NULL with @error set. */
DdpResult *ddp_zero_simulate(const DdpScenario *scenario, const DdpRunOptions *options, GError **error);

#endif
