/* ddpterms — the DDP-level terms a calibration database holds from an imported multi-GPU DDP run
 * (ddpimport.h derives them from the trace): overlap_slowdown, jitter, the measured iteration,
 * exposed communication and overlap, and the plain iteration times the user measured
 * (`--measured-step-ms GPUS:MS`).  They are kept as key-file text in the run's import provenance
 * (imports.note, format "torch-ddp"), so the schema needs no new table; the AllReduce sizes and
 * times of the run are ordinary measured points (calibdb allreduce_points) from which fit.c builds
 * the curve and tierfit.c the per-tier parameters.
 *
 * Every verb's `--calibration DB` applies them (scenario.c) where the user gave no value of their
 * own, and says on stderr which term came from the run and which from the specs. */
#ifndef DDP_DDPTERMS_H
#define DDP_DDPTERMS_H

#include <glib.h>
#include "fit.h"
#include "scenario.h"

/* A plain measured iteration time (`--measured-step-ms GPUS:MS`). */
typedef struct {
  guint64 gpus;
  double ms;
} DdpMeasuredStep;

/* Parses "GPUS:MS" (the flag's value) into @out; FALSE with a --measured-step-ms error
 * (DDP_RANGE_ERROR). */
gboolean ddp_measured_step_parse(const char *text, DdpMeasuredStep *out, GError **error);

#define DDP_MAX_MEASURED_STEPS 16

typedef struct {
  gint64 run_id;             /* filled by ddp_run_terms_load */
  guint64 world_size, nodes;
  guint rank_files, steps_kept;
  double overlap_slowdown;   /* < 0: not measured */
  guint slowdown_kernels;    /* kernel instances that measured it */
  double jitter;             /* < 0: not measured (one rank's trace) */
  double iteration_ms, iteration_spread_ms, compute_ms, comm_ms, exposed_comm_ms, overlap;
  DdpMeasuredStep steps[DDP_MAX_MEASURED_STEPS];
  guint n_steps;
} DdpRunTerms;

/* @terms as the key-file text stored in the import's note.  (transfer full) */
char *ddp_run_terms_to_text(const DdpRunTerms *terms);

/* The terms of the newest imported DDP run among @fit's runs, read from @db_path.  FALSE and no
 * error when there is none; FALSE with a DDP_CALIBDB_ERROR when the database cannot be read or a
 * stored value is out of its range. */
gboolean ddp_run_terms_load(const char *db_path, const DdpFit *fit, DdpRunTerms *out, GError **error);

/* Applies @terms to @setup where the user gave no value of their own (@given_slowdown,
 * @given_jitter, @given_step_ms): overlap_slowdown and jitter when measured, step_ms from a 1-GPU
 * measured step.  Returns: (transfer full) (element-type utf8) one "note: …" line per term saying
 * whether it came from the run or from the specs, and the measured iteration at setup->gpus when
 * there is one. */
GPtrArray *ddp_run_terms_apply(const DdpRunTerms *terms, const char *calibration_name, DdpSetup *setup,
                               gboolean given_slowdown, gboolean given_jitter, gboolean given_step_ms);

#endif
