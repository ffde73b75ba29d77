/* solve — inverse questions over the simulator: the least inter-node bandwidth (or NIC count),
 * per-GPU batch or accumulation that reaches a target scaling efficiency, the most GPUs that still
 * reach it, and the fastest bucket_cap_mb.  Every answer is found by simulating (ddp_simulate), a
 * coarse grid first and then bisection inside the first bracket where the target is crossed; the
 * grid is also how non-monotone behaviour is detected and reported rather than hidden.
 * Efficiency is weak scaling, T(1 GPU) / T(N GPUs) at the same per-GPU batch and accumulation
 * (ddp.h), so the answers can be fed back to `ddpsim predict` and give the same number; or, given
 * a global batch B, strong scaling T(1 GPU, B) / (N · T(N GPUs, B/N per GPU)) as `ddpsim scale
 * --global-batch` computes it (ddp_solve_micro_steps is the one rule both use). */
#ifndef DDP_SOLVE_H
#define DDP_SOLVE_H

#include <glib.h>
#include "ranges.h"
#include "scenario.h"

typedef enum {
  DDP_SOLVE_INTER_BANDWIDTH,  /* least inter.nic_bandwidth_Gbps (Gb/s per NIC) */
  DDP_SOLVE_NICS,             /* least inter.nics_per_node */
  DDP_SOLVE_GPUS,             /* most GPUs (whole nodes beyond one node) */
  DDP_SOLVE_BATCH,            /* least per-GPU batch (whole samples) */
  DDP_SOLVE_ACCUMULATE,       /* least gradient-accumulation micro-steps */
  DDP_SOLVE_BUCKET_CAP,       /* fastest bucket_cap_mb: a minimum, not a threshold */
  DDP_SOLVE_COUNT
} DdpSolveQuantity;

/* The --for names ("inter-bandwidth", "nics", "gpus", "batch", "accumulate", "bucket-cap"). */
const char *ddp_solve_quantity_name(DdpSolveQuantity q);
/* -1 when @name is none of them. */
int ddp_solve_quantity_parse(const char *name);
/* Unit of the answer, for reports ("Gb/s per NIC", "NICs per node", …). */
const char *ddp_solve_quantity_unit(DdpSolveQuantity q);
/* Where a --min or --max of @q must lie: the range of the key or flag it stands for
 * (nic_bandwidth_Gbps, nics_per_node, --gpus, --batch, --accumulate, --bucket-cap-mb). */
const DdpRange *ddp_solve_quantity_range(DdpSolveQuantity q);

typedef enum {
  DDP_SOLVE_FOUND,          /* the bracket was narrowed to the answer */
  DDP_SOLVE_ALWAYS,         /* already reached at the easy end of the range (least x / most GPUs) */
  DDP_SOLVE_UNREACHABLE,    /* not reached anywhere in the range; best is the best seen */
  DDP_SOLVE_MEMORY,         /* reached only at a per-GPU batch that does not fit in GPU memory */
  DDP_SOLVE_KEEP_DEFAULT,   /* bucket cap: no cap beats 25 MiB by more than min_gain */
} DdpSolveStatus;

const char *ddp_solve_status_name(DdpSolveStatus s);

/* What holds the efficiency down at a point: the largest share of T(N) - T(1), or memory when the
 * setup does not fit. */
typedef enum {
  DDP_LIMIT_NONE,            /* nothing lost: T(N) = T(1) */
  DDP_LIMIT_COMPUTE,         /* DDP's own compute (bucket copies, hook casts) beyond T(1) */
  DDP_LIMIT_EXPOSED_COMM,    /* AllReduce time not hidden behind backward */
  DDP_LIMIT_STRAGGLERS,      /* waiting on slow ranks, contention slowdown */
  DDP_LIMIT_MEMORY,          /* the per-GPU memory does not fit */
  DDP_LIMIT_OVERHEADS,       /* host time, input wait, rank-to-rank jitter, contention (docs/overheads.md) */
} DdpLimit;

const char *ddp_limit_name(DdpLimit l);

/* One simulated point. */
typedef struct {
  double value;               /* the quantity (Gb/s, NICs, GPUs, samples, micro-steps, MiB) */
  gboolean feasible;          /* strong scaling: at least one sample per GPU (else efficiency 0,
                               * nothing simulated) */
  double efficiency;          /* weak T(1)/T(N), or strong T(1, B)/(N·T(N)) */
  double iteration_ms, compute_ms, exposed_comm_ms, straggler_wait_ms;
  double overheads_ms;        /* host time per step, input wait, jitter, contention */
  double single_gpu_ms;       /* the ideal T(N): T(1) (weak) or T(1, B)/N (strong) */
  double memory_GB;           /* per GPU */
  gboolean fits;
  DdpLimit limit;
} DdpSolvePoint;

typedef struct {
  DdpSolveQuantity quantity;
  double target_efficiency;   /* 0 < t <= 1; ignored by DDP_SOLVE_BUCKET_CAP */
  double min, max;            /* search range; 0: the quantity's default (ddp_solve_default_range) */
  double tolerance;           /* relative width of the final bracket for inter-bandwidth (default 1e-3) */
  double min_gain;            /* bucket cap: fraction a cap must beat 25 MiB by (default 0.01) */
  double global_batch;        /* > 0: strong scaling at this global batch (not with batch/accumulate) */
  double max_batch;           /* strong scaling: most samples per GPU per micro-step; 0: what fits */
  /* called before each simulation (e.g. a progress line on a terminal); NULL: none */
  void (*progress)(DdpSolveQuantity q, guint simulation, double value, gpointer data);
  gpointer progress_data;
} DdpSolveOptions;

void ddp_solve_options_init(DdpSolveOptions *o);
/* The range searched when the options leave it 0: bandwidth 1 to 10^6 Gb/s ("unlimited"), NICs 1
 * to 64, GPUs 1 to the cluster's max_nodes (else 16 384 nodes), batch 1 to 65 536, accumulation 1
 * to 4 096, bucket caps 1 to 256 MiB. */
void ddp_solve_default_range(const DdpScenario *s, DdpSolveQuantity q, double *min, double *max);

typedef struct {
  DdpSolveQuantity quantity;
  DdpSolveStatus status;
  double target_efficiency;
  double global_batch;        /* 0: weak scaling */
  double max_batch;           /* strong scaling: the micro-batch limit used (+inf: none) */
  double min, max, tolerance, min_gain;
  double current;             /* the scenario's own value of the quantity */
  DdpSolvePoint answer;       /* FOUND/ALWAYS: the answer; UNREACHABLE: the best point seen;
                               * MEMORY: the least batch reaching the target; bucket cap: the best */
  gboolean has_neighbour;
  DdpSolvePoint neighbour;    /* FOUND: the nearest value on the failing side (just below the least
                               * x, just above the most GPUs); bucket cap: the default 25 MiB */
  double max_fitting_batch;   /* MEMORY: the largest per-GPU batch that fits; else 0 */
  double saturates_at;        /* UNREACHABLE: the least grid value already giving the best
                               * efficiency (more of the quantity no longer helps); else 0 */
  gboolean monotone;          /* the grid's efficiencies moved only one way */
  double non_monotone_at;     /* when not monotone: the first grid value that broke the trend */
  gboolean recrosses;         /* FOUND/UNREACHABLE-free threshold answers: a grid value beyond the
                               * bracket is back on the answer's side of the target */
  DdpSolvePoint recross;      /* the first such grid point */
  GArray *grid;               /* of DdpSolvePoint: the coarse samples, ascending value */
  guint simulations;
} DdpSolveResult;

void ddp_solve_result_free(DdpSolveResult *r);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(DdpSolveResult, ddp_solve_result_free)

#define DDP_SOLVE_ERROR (ddp_solve_error_quark())
GQuark ddp_solve_error_quark(void);
typedef enum { DDP_SOLVE_ERROR_INVALID } DdpSolveError;

/* Answers @options->quantity for @scenario (read only).  Returns: (transfer full) the result, or
 * NULL with @error: DDP_SOLVE_ERROR_INVALID when the question does not apply (inter-node
 * bandwidth on one node, a bad range or target), or the simulator's error. */
DdpSolveResult *ddp_solve(const DdpScenario *scenario, const DdpSolveOptions *options, GError **error);

/* Strong scaling's split of @batch samples per GPU into micro-steps: the least K >= @at_least
 * whose micro-batch @batch / K is at most @max_batch (+inf: no limit; below 1 counts as 1). */
guint ddp_solve_micro_steps(double batch, double max_batch, guint at_least);

/* The GPU counts the gpus question simulates first: powers of two below one node, doubling node
 * counts, @max; ascending, as doubles (transfer full). */
GArray *ddp_solve_gpu_grid(const DdpCluster *cluster, double min, double max);

/* Strong scaling in whole samples: per GPU ⌊B/N⌋ samples as @accumulate micro-steps of
 * @micro_batch whole samples; @reached = N · batch_per_gpu ≤ B (ddp_solve_strong_split). */
typedef struct {
  guint accumulate;
  double micro_batch, batch_per_gpu, reached;
} DdpStrongSplit;
gboolean ddp_solve_strong_split(double global_batch, guint64 gpus, double max_batch, guint at_least, DdpStrongSplit *split);
/* T(1 GPU, B) without DDP, split the same way: its step time and the samples it reaches. */
gboolean ddp_solve_strong_base(const DdpScenario *scenario, double global_batch, double max_batch, double *ms,
                               double *samples, GError **error);

/* The largest per-GPU batch whose memory (ddp_compute_memory) fits the GPU: +inf when activations
 * do not grow with the batch, 0 when even the weights, gradients and optimizer state do not fit. */
double ddp_solve_max_fitting_batch(const DdpScenario *scenario);

#endif
