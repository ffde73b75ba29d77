/* deadline — `solve --for gpus --deadline-hours H` and `--budget C`: the GPU count that trains a
 * given number of samples within a deadline at the least cost, or as fast as a budget allows.
 *
 * A GPU is billed for every hour of the job, so with a price P per GPU-hour and throughput X(N)
 * samples/s on N GPUs (cost.h):
 *   hours(N) = S / X(N) / 3600,   cost(N) = P · N · hours(N) = P · S / (3600 · X(N)/N)
 * More GPUs shorten the job while X(N) grows, and cost what the per-GPU throughput X(N)/N loses:
 * scaling efficiency is what the bill pays.  The deadline answer is the cheapest simulated count
 * with hours(N) <= H (and cost(N) <= C when both are given); the budget answer is the fastest
 * count with cost(N) <= C.  Without a price, cost is counted in GPU-hours (P = 1).
 *
 * The search is solve.c's: a grid of GPU counts (powers of two below one node, doubling node
 * counts, the top of the range) simulated in full, then bisection — single GPUs below one node,
 * whole nodes beyond — inside the grid interval where the constraint is first met (deadline: the
 * least count meeting it) or last met (budget: the most).  Points that do not fit in GPU memory
 * never meet a constraint. */
#ifndef DDP_DEADLINE_H
#define DDP_DEADLINE_H

#include <glib.h>
#include "cost.h"
#include "scenario.h"

typedef struct {
  double deadline_hours;      /* > 0: train within this many hours; 0: no deadline */
  double budget;              /* > 0: spend at most this (price units, or GPU-hours unpriced); 0: none */
  double min, max;            /* GPU range; 0: 1 to the cluster's max_nodes (else 16 384 nodes) */
  double global_batch;        /* > 0: strong scaling at this global batch (solve.h's split) */
  double max_batch;           /* strong scaling: most samples per GPU per micro-step (+inf: none) */
  void (*progress)(guint simulation, guint64 gpus, gpointer data);
  gpointer progress_data;
} DdpDeadlineOptions;

typedef struct {
  guint64 gpus, nodes;
  gboolean feasible;          /* strong scaling: at least one sample per GPU */
  double samples_per_s, iteration_ms, train_hours, train_cost;   /* cost: price units or GPU-hours */
  gboolean fits, meets;
} DdpDeadlinePoint;

typedef enum {
  DDP_DEADLINE_FOUND,         /* the answer meets every constraint */
  DDP_DEADLINE_UNREACHABLE,   /* no count in the range meets them; answer: the fastest (deadline) or the cheapest (budget) */
} DdpDeadlineStatus;

typedef struct {
  DdpDeadlineStatus status;
  DdpDeadlinePoint answer;
  gboolean has_neighbour;
  DdpDeadlinePoint neighbour; /* FOUND: the next count on the failing side (one fewer GPU/node for a deadline, one more for a budget) */
  GArray *grid;               /* of DdpDeadlinePoint: the grid, ascending */
  guint simulations;
  double min, max;
} DdpDeadlineResult;

void ddp_deadline_result_free(DdpDeadlineResult *r);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(DdpDeadlineResult, ddp_deadline_result_free)

/* The closed forms of the file comment at one point (the search's predicate, testable alone). */
void ddp_deadline_point_cost(const DdpCost *cost, const DdpDeadlineOptions *o, DdpDeadlinePoint *p);

/* Searches @scenario's GPU counts.  @cost must carry a training length (train_samples > 0).
 * Returns: (transfer full) the result, or NULL with @error (DDP_COST_ERROR for a question that
 * does not apply, or the simulator's error). */
DdpDeadlineResult *ddp_deadline_solve(const DdpScenario *scenario, const DdpCost *cost, const DdpDeadlineOptions *o,
                                      GError **error);

#endif
