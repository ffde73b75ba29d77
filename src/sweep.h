/* sweep — a scenario grid for `ddpsim sweep` (docs/sweep.md): models × clusters × GPU counts ×
 * bucket caps × seeds, expanded in one fixed order, cut into contiguous slices (one per MPI rank),
 * and formatted one CSV or JSON-lines row per point.  Pure functions: no simulation, no I/O
 * beyond reading a grid file; cmd-sweep.c runs the points.
 *
 * Order (the rule every output obeys, whatever ran where): point i is the mixed-radix number
 * (model, cluster, gpus, bucket_cap_mb, seed), model the most significant digit, seed the least;
 * each axis in the order its values were listed.  Slices are contiguous index ranges, so the
 * concatenation of the slices in rank order is the grid order. */
#ifndef DDP_SWEEP_H
#define DDP_SWEEP_H

#include <glib.h>
#include "ddp.h"
#include "cost.h"
#include "scenario.h"

#define DDP_SWEEP_ERROR (ddp_sweep_error_quark())
GQuark ddp_sweep_error_quark(void);
typedef enum { DDP_SWEEP_ERROR_INVALID, DDP_SWEEP_ERROR_TOO_LARGE } DdpSweepError;

/* At most this many points per sweep (a 100 000-row CSV is ~20 MB; beyond that split the grid):
 * larger grids are refused before anything runs (exit 2). */
#define DDP_SWEEP_MAX_POINTS 100000

typedef enum {
  DDP_SWEEP_AXIS_MODEL,
  DDP_SWEEP_AXIS_CLUSTER,
  DDP_SWEEP_AXIS_GPUS,
  DDP_SWEEP_AXIS_BUCKET_CAP,
  DDP_SWEEP_AXIS_SEED,
  DDP_SWEEP_N_AXES
} DdpSweepAxis;

typedef struct _DdpSweepGrid DdpSweepGrid;

/* One point's coordinates, as command-line values (borrowed from the grid); NULL where the axis
 * was not swept: the scenario file's value or the built-in default applies. */
typedef struct {
  guint64 index;
  const char *values[DDP_SWEEP_N_AXES];
} DdpSweepPoint;

/* An empty grid: every axis unswept (one point). */
DdpSweepGrid *ddp_sweep_grid_new(void);
void ddp_sweep_grid_free(DdpSweepGrid *grid);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(DdpSweepGrid, ddp_sweep_grid_free)

/* The axis' flag ("gpus") and grid-file key ("gpus"): "model", "cluster", "gpus",
 * "bucket-cap-mb"/"bucket_cap_mb", "seed"/"seeds". */
const char *ddp_sweep_axis_flag(DdpSweepAxis axis);
const char *ddp_sweep_axis_key(DdpSweepAxis axis);

/* Sets @axis from a comma-separated list ("8,64,512"), replacing what was there.  Values are
 * validated for the axis (GPU counts, caps and seeds against their ranges in ranges.h, names
 * non-empty) and may not repeat.  GPU counts may continue a progression as `scale --gpus` does:
 * "8,16,...,1024" is 8, 16, 32, … 1024 (geometric when the second is a multiple of the first,
 * else arithmetic).  @where prefixes errors: "--gpus" or "grid.ini:3: sweep.gpus".  A number out
 * of its range is a DDP_RANGE_ERROR, anything else a DDP_SWEEP_ERROR. */
gboolean ddp_sweep_grid_set_axis(DdpSweepGrid *grid, DdpSweepAxis axis, const char *list, const char *where,
                                 GError **error);
/* Reads the [sweep] group of a grid file (keys: ddp_sweep_axis_key()); axes it names are set. */
gboolean ddp_sweep_grid_load_file(DdpSweepGrid *grid, const char *path, GError **error);

/* Number of values on @axis (1 when unswept) and the @i-th (NULL when unswept). */
guint ddp_sweep_grid_axis_len(const DdpSweepGrid *grid, DdpSweepAxis axis);
const char *ddp_sweep_grid_axis_value(const DdpSweepGrid *grid, DdpSweepAxis axis, guint i);

/* The number of points; FALSE with DDP_SWEEP_ERROR_TOO_LARGE above DDP_SWEEP_MAX_POINTS. */
gboolean ddp_sweep_grid_count(const DdpSweepGrid *grid, guint64 *n_points, GError **error);
/* Point @index (< the count) in grid order. */
void ddp_sweep_grid_point(const DdpSweepGrid *grid, guint64 index, DdpSweepPoint *point);

/* Rank @rank of @size takes points [*first, *first + *count): contiguous blocks, the first
 * n_points % size ranks one point more, so that the blocks in rank order tile 0..n_points-1. */
void ddp_sweep_slice(guint64 n_points, guint rank, guint size, guint64 *first, guint64 *count);

/* @cli with the point's coordinates written over the swept fields; the strings are borrowed from
 * @point and @base (do not clear the copy). */
void ddp_sweep_point_apply(const DdpSweepPoint *point, const DdpCliOptions *base, DdpCliOptions *cli);

typedef enum { DDP_SWEEP_CSV, DDP_SWEEP_JSONL } DdpSweepFormat;

/* The CSV header line (with '\n'); JSON lines have none (returns ""). */
const char *ddp_sweep_header(DdpSweepFormat format);
/* One row (with '\n') for @scenario simulated as @result.  Numbers have fixed decimals, so the same
 * point gives the same bytes wherever it ran.  Returns: (transfer full). */
char *ddp_sweep_row(DdpSweepFormat format, const DdpSweepPoint *point, const DdpScenario *scenario,
                    const DdpResult *result);
/* Every row ends with status: "ok", or "out-of-memory" when the point does not fit in GPU memory
 * (such a point is never a best answer).  The _cost forms add cost_per_1k_samples, train_hours and
 * train_cost (cost.h) when @cost is not NULL. */
const char *ddp_sweep_status(const DdpResult *result);
char *ddp_sweep_header_cost(DdpSweepFormat format, gboolean with_cost);
char *ddp_sweep_row_cost(DdpSweepFormat format, const DdpSweepPoint *point, const DdpScenario *scenario,
                         const DdpResult *result, const DdpCost *cost);

#endif
