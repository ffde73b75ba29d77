/* validate — the model against published measurements (issue 10 item 5, docs/validation.md): every
 * CSV of a validation directory is read, each row predicted on the cluster its mapping column names,
 * and the errors summarised per configuration (and, for AllReduce curves, per size regime) beside a
 * trivial baseline, because a prediction is only worth what it beats:
 *   - nccl-tests AllReduce curves (a `time_us` column): ddp_collective_compare_csv(); baseline the
 *     textbook ring closed form with the cluster's spec latency and bandwidth (cost_model =
 *     alpha-beta, algorithm = ring): t = 2(n-1)·α + 2(n-1)/n · S/B;
 *   - DDP training step times (an `iteration_ms` column, PyTorch's DDP benchmark): ddp_simulate()
 *     with --step-ms set from the same model's 1-GPU no-DDP row (the user's measured 1-GPU step),
 *     and with built-in defaults; baseline "always 100 %" scaling efficiency;
 *   - bucket_cap_mb comparisons (a `bucket_cap_mb` column): throughput at cap 1 over cap 25;
 *     baseline "the cap does not matter" (ratio 1).
 * Errors are fractions: predicted / published − 1 (for busbw: measured / predicted time − 1). */
#ifndef DDP_VALIDATE_H
#define DDP_VALIDATE_H

#include <glib.h>
#include "collective.h"

#define DDP_VALIDATE_ERROR (ddp_validate_error_quark())
GQuark ddp_validate_error_quark(void);
typedef enum {
  DDP_VALIDATE_ERROR_INPUT,    /* a file or row that does not parse, or names what cannot run */
} DdpValidateError;

/* Statistics come as collective's DdpCompareStats, per DdpSizeRegime (collective.h: < 64 KiB,
 * 64 KiB - 16 MiB, > 16 MiB, all), so that `ddpsim validate` and `ddpsim allreduce --compare` give
 * the same figures from one definition. */

/* Median and maximum of |@errors[i]| over @n values (NAN ones skipped). */
void ddp_validate_stats(const double *errors, guint n, DdpCompareStats *out);

/* ---- AllReduce curves ---- */

typedef struct {
  const DdpCompareCurve *curve;     /* borrowed from the file's compare array */
  char *label;                      /* the cluster column's base name, without .cluster */
  DdpCompareStats model[DDP_REGIME_COUNT];     /* ddp_compare_curve_stats() */
  DdpCompareStats baseline[DDP_REGIME_COUNT];
} DdpValidateCurve;

typedef struct {
  char *path;
  gboolean behaviour_check;         /* reported on its own, outside the pooled figures */
  gboolean out_of_sample;           /* gathered after the constants were set (validate.ini) */
  GPtrArray *compare;               /* of DdpCompareCurve, from ddp_collective_compare_csv() */
  GArray *curves;                   /* of DdpValidateCurve, one per compare curve */
  DdpCompareStats model[DDP_REGIME_COUNT];     /* every point of the file pooled */
  DdpCompareStats baseline[DDP_REGIME_COUNT];
} DdpValidateAllreduce;

/* ---- DDP training rows ---- */

/* One prediction of a row: step time and scaling efficiency, and their errors.  Efficiency is
 * defined as the benchmark derives its published column: the 1-GPU step without DDP over the N-GPU
 * step (per-GPU throughput ratio at a fixed per-GPU batch).  With --step-ms that 1-GPU step is the
 * measured one given (the no-DDP row's); with defaults it is the model's 1-GPU prediction. */
typedef struct {
  double step_ms, efficiency;
  double step_error, efficiency_error;
} DdpValidatePrediction;

typedef struct {
  guint line;
  char *model;                      /* ddpsim model (the ddpsim_model column) */
  char *cluster;
  guint64 gpus, nodes;
  double batch;
  gboolean ddp;                     /* FALSE: an input row, the 1-GPU one without DDP or the reference */
  gboolean reference;               /* the DDP row its run's efficiencies are relative to (the ddp
                                     * column's "reference"; one GPU, or any count for a run that
                                     * scales from a node): an input, as a no-DDP row is */
  guint accumulate;                 /* micro-steps per optimizer step (the accumulate column; 1) */
  double published_ms, published_efficiency;
  char *skipped;                    /* why the row was not predicted (model not shipped), or NULL */
  double step_ms_flag;              /* the --step-ms used: the no-DDP row of this model, cluster,
                                     * batch, precision and run; for a run with a reference row, the
                                     * 1-GPU micro-step whose prediction of that row is its step; 0
                                     * when none */
  DdpValidatePrediction with_step;  /* --step-ms (all zero when step_ms_flag is 0) */
  DdpValidatePrediction defaults;   /* built-in compute defaults */
  DdpValidatePrediction baseline;   /* "always 100 %": efficiency 1, every micro-step as long as
                                     * the input row's */
} DdpValidateTrainingRow;

typedef struct {
  char *path;
  GArray *rows;                     /* of DdpValidateTrainingRow, in file order */
  /* Over the predicted DDP rows (the no-DDP rows are the --step-ms input, not predictions): */
  DdpCompareStats step_error, efficiency_error;                   /* --step-ms */
  DdpCompareStats default_step_error, default_efficiency_error;   /* built-in defaults */
  DdpCompareStats baseline_step_error, baseline_efficiency_error; /* always 100 % */
  /* Over the 1-GPU rows without DDP: the built-in defaults' step time (the compute model alone) */
  DdpCompareStats one_gpu_default_step_error;
  gboolean behaviour_check;         /* reported on its own, outside training_pooled */
  gboolean out_of_sample;           /* gathered after the constants were set (validate.ini) */
} DdpValidateTraining;

/* ---- bucket_cap_mb comparisons ---- */

typedef struct {
  guint line;
  char *model, *cluster;
  guint64 gpus;
  double batch;
  char *skipped;
  double step_ms_flag;              /* a training table's no-DDP row of the same model, cluster,
                                     * batch and precision, or 0 */
  double published_ratio;           /* throughput at cap 1 / at cap 25: 1 + the reported change */
  double predicted_ratio;           /* step time at cap 25 / at cap 1 */
  double error;                     /* predicted / published ratio − 1 */
  double baseline_error;            /* 1 / published ratio − 1 */
} DdpValidateBucketcapRow;

typedef struct {
  char *path;
  GArray *rows;                     /* of DdpValidateBucketcapRow */
  DdpCompareStats error, baseline_error;
} DdpValidateBucketcap;

/* ---- sharded-strategy throughput (FSDP, ZeRO-1: a `tokens_per_gpu_s` column) ---- */

typedef struct {
  guint line;
  char *model, *cluster, *mode, *sharding, *precision, *optimizer;
  guint64 gpus;
  double batch;
  guint seq_len;
  guint64 accumulate;               /* micro-steps per optimizer step (optional column; 1) */
  gboolean activation_checkpointing;/* optional column activation_checkpointing (yes/no; no) */
  char *fsdp_accumulate;            /* optional column fsdp_accumulate (no-sync, sharded); NULL: the
                                       default */
  char *skipped;
  double published;                 /* tokens/s per GPU */
  double predicted, error;          /* predicted / published − 1 */
  double baseline, baseline_error;  /* "always 100 %": every GPU at the 1-GPU step (no wrapper) */
  double mfu_baseline, mfu_error;   /* the rule of thumb: 6·Ψ FLOPs per token at 50 % of peak */
  gboolean fits;                    /* the predicted memory fits the GPU */
} DdpValidateShardedRow;

typedef struct {
  char *path;
  GArray *rows;                     /* of DdpValidateShardedRow */
  DdpCompareStats error, baseline_error, mfu_error;
} DdpValidateSharded;

typedef struct {
  char *dir;                        /* what was validated (a folder, or NULL for a file list) */
  GPtrArray *allreduce;             /* of DdpValidateAllreduce, files in name order */
  GPtrArray *training;              /* of DdpValidateTraining */
  GPtrArray *bucketcap;             /* of DdpValidateBucketcap */
  GPtrArray *sharded;               /* of DdpValidateSharded */
  GPtrArray *unmapped;              /* of char*: tables of a known kind without any mapping column
                                     * (cluster, ddpsim_model), not validated */
  DdpCompareStats allreduce_model[DDP_REGIME_COUNT];    /* every AllReduce point pooled, but
                                                              * the behaviour checks' */
  DdpCompareStats allreduce_baseline[DDP_REGIME_COUNT];
  DdpValidateTraining training_pooled;   /* every training table's rows pooled but the behaviour
                                          * checks' (path, rows NULL) */
  /* Where some files are out-of-sample (validate.ini out_of_sample: gathered after the constants
   * were set), the pools split in two, behaviour checks still left out; unset otherwise. */
  gboolean split;
  DdpCompareStats allreduce_in_sample_model[DDP_REGIME_COUNT], allreduce_in_sample_baseline[DDP_REGIME_COUNT];
  DdpCompareStats allreduce_out_of_sample_model[DDP_REGIME_COUNT], allreduce_out_of_sample_baseline[DDP_REGIME_COUNT];
  DdpValidateTraining training_in_sample, training_out_of_sample;
} DdpValidation;

/* The shipped validation folder: $(pkgdatadir)/validation installed, tests/data uninstalled.
 * NULL when neither exists; g_free(). */
char *ddp_validation_default_dir(void);

/* Validates every *.csv of @dir (sorted by name), recognised by header: `time_us` AllReduce curves,
 * `iteration_ms` training rows, `bucket_cap_mb` comparisons; one with neither a `cluster` nor a
 * `ddpsim_model` column is listed in unmapped.  An optional @dir/validate.ini ([validate]
 * behaviour_checks = CSV names) marks AllReduce and training files reported outside the pooled
 * figures (a cluster known to under-perform, a run that is not PyTorch's DDP), and out_of_sample =
 * CSV names those gathered after the model's constants were set, pooled apart as well as together.  Returns: (transfer full) or NULL with
 * @error (domain DDP_VALIDATE_ERROR, or DDP_COLLECTIVE_ERROR from an AllReduce file) saying
 * file:line: column: what. */
DdpValidation *ddp_validation_run_dir(const char *dir, GError **error);
/* The same for an explicit NULL-terminated list of CSV paths (in the order given); AllReduce and
 * training files whose base name is in @behaviour_checks (NULL-terminated, or NULL) stay out of the
 * pooled figures. */
DdpValidation *ddp_validation_run_files(const char *const *paths, const char *const *behaviour_checks,
                                        GError **error);
/* The same, with @out_of_sample (NULL-terminated, or NULL) the base names of files gathered after the
 * constants were set: they stay in the pools and are also pooled apart (DdpValidation.split). */
DdpValidation *ddp_validation_run_files_split(const char *const *paths, const char *const *behaviour_checks,
                                              const char *const *out_of_sample, GError **error);
void ddp_validation_free(DdpValidation *v);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(DdpValidation, ddp_validation_free)

#endif
