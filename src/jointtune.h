/* jointtune — tuning several of DDP's knobs together (`ddpsim tune --knobs …`): bucket_cap_mb,
 * gradient accumulation, the communication hook, gradient_as_bucket_view and the first bucket's
 * size.  The knobs interact — a compression hook halves the bytes per bucket, so the best cap
 * moves; accumulation divides the AllReduces per sample, so a cap that was too small no longer
 * costs much — and a one-knob sweep from PyTorch's defaults can miss a combination that only pays
 * when two knobs move together.
 *
 * The search (docs/solve.md "Tuning several knobs"):
 *   - exhaustive when the joint space has at most DDP_JOINT_EXHAUSTIVE_LIMIT points;
 *   - otherwise: the defaults, every one-knob and every two-knob change from them (all values of
 *     the knobs changed), then coordinate descent from the best point found (each knob in turn
 *     over all its values, the others held) until a whole pass changes nothing.  This finds any
 *     optimum that differs from the defaults in at most two knobs, and a local optimum beyond.
 * Every point is evaluated at most once (memoised by its index); the order of evaluation, and so
 * the answer, is deterministic.
 *
 * The objective is time per sample (iteration time / samples per GPU per step), not iteration
 * time, because accumulation changes the samples an iteration carries; lower is better and a point
 * that does not fit in GPU memory is infeasible (+inf). */
#ifndef DDP_JOINTTUNE_H
#define DDP_JOINTTUNE_H

#include <glib.h>
#include "scenario.h"

#define DDP_JOINT_EXHAUSTIVE_LIMIT 4096u

#define DDP_JOINTTUNE_ERROR (ddp_jointtune_error_quark())
GQuark ddp_jointtune_error_quark(void);
typedef enum { DDP_JOINTTUNE_ERROR_INVALID } DdpJointtuneError;

/* One knob of the generic search: @n_values choices, @default_index the baseline's. */
typedef struct {
  const char *name;
  guint n_values;
  guint default_index;
} DdpJointKnob;

/* Evaluates the point @choice (one index per knob): *objective lower is better, +inf infeasible.
 * FALSE with @error stops the search. */
typedef gboolean (*DdpJointEvaluate)(const guint *choice, double *objective, gpointer data, GError **error);

typedef struct {
  guint64 index;              /* mixed-radix index of the point (first knob most significant) */
  double objective;
} DdpJointPoint;

typedef struct {
  guint n_knobs;
  guint *best;                /* [n_knobs] the best point's choice */
  double best_objective, default_objective;
  double gain;                /* 1 − best / default (0 when the default is the best) */
  gboolean exhaustive;
  guint64 space;              /* points in the joint space */
  GArray *points;             /* of DdpJointPoint: every point evaluated, in index order */
} DdpJointResult;

void ddp_joint_result_free(DdpJointResult *r);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(DdpJointResult, ddp_joint_result_free)

/* Searches the joint space of @knobs as the file comment says.  Returns: (transfer full) the
 * result, or NULL with @evaluate's error, or DDP_JOINTTUNE_ERROR_INVALID when the defaults are
 * infeasible (nothing to compare with). */
DdpJointResult *ddp_joint_search(const DdpJointKnob *knobs, guint n_knobs, guint64 exhaustive_limit,
                                 DdpJointEvaluate evaluate, gpointer data, GError **error);

/* The choice of point @index (inverse of the mixed-radix index), into @choice[n_knobs]. */
void ddp_joint_choice(const DdpJointKnob *knobs, guint n_knobs, guint64 index, guint *choice);

/* ---- DDP's knobs ------------------------------------------------------------------------- */

typedef enum {
  DDP_KNOB_BUCKET_CAP,        /* bucket_cap_mb (MiB) */
  DDP_KNOB_ACCUMULATE,        /* gradient-accumulation micro-steps */
  DDP_KNOB_COMM_HOOK,         /* none / fp16 / bf16 compression hook */
  DDP_KNOB_GRADIENT_AS_BUCKET_VIEW,
  DDP_KNOB_FIRST_BUCKET,      /* dist._DEFAULT_FIRST_BUCKET_BYTES (MiB) */
  DDP_KNOB_COUNT
} DdpKnobKind;

/* The --knobs names: "bucket-cap", "accumulate", "comm-hook", "gradient-as-bucket-view",
 * "first-bucket". */
const char *ddp_knob_name(DdpKnobKind k);
int ddp_knob_parse(const char *name);

/* A DDP tuning space: the knobs named, each with its values (doubles: MiB, steps, hook enum,
 * 0/1) and the index of PyTorch's default among them. */
typedef struct _DdpJointSpace DdpJointSpace;

/* Parses @list ("bucket-cap,comm-hook"); @caps and @first_mb are the bucket-cap and first-bucket
 * values to use (each holding PyTorch's default, 25 and 1).  Accumulation takes 1, 2, 4, 8; hooks
 * none, fp16, bf16; gradient_as_bucket_view false, true.  NULL with DDP_JOINTTUNE_ERROR on an
 * unknown or repeated name (naming the closest known one). */
DdpJointSpace *ddp_joint_space_new(const char *list, const GArray *caps, const GArray *first_mb, GError **error);
void ddp_joint_space_free(DdpJointSpace *space);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(DdpJointSpace, ddp_joint_space_free)

guint ddp_joint_space_n_knobs(const DdpJointSpace *space);
const DdpJointKnob *ddp_joint_space_knobs(const DdpJointSpace *space);
DdpKnobKind ddp_joint_space_kind(const DdpJointSpace *space, guint knob);
double ddp_joint_space_value(const DdpJointSpace *space, guint knob, guint index);
/* A value as the reports print it ("25", "fp16", "true"); (transfer full). */
char *ddp_joint_space_format(const DdpJointSpace *space, guint knob, guint index);

/* Applies @choice to a copy of @base's setup in @at (a shallow copy of @base). */
void ddp_joint_space_apply(const DdpJointSpace *space, const guint *choice, const DdpScenario *base, DdpScenario *at);

#endif
