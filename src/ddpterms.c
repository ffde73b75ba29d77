/* ddpterms — the DDP-level terms of an imported DDP run, stored in and read back from a calibration
 * database (ddpterms.h).  overlap_slowdown and jitter are the overheads of docs/overheads.md; where
 * the run did not measure one, the cluster's value or the documented default stays. */
#include "ddpterms.h"

#include "calibdb.h"
#include "ranges.h"

#include <math.h>
#include <string.h>

#define GROUP "ddp-run"

/**
 * ddp_measured_step_parse:
 * See ddpterms.h.
 */
gboolean
ddp_measured_step_parse(const char *text, DdpMeasuredStep *out, GError **error)
{
  const char *colon = strchr(text, ':');
  if (!colon) {
    g_set_error(error, DDP_RANGE_ERROR, DDP_RANGE_ERROR_RANGE, "--measured-step-ms: \"%s\" is not GPUS:MS (e.g. 16:104.5)",
                text);
    return FALSE;
  }
  g_autofree char *gpus = g_strndup(text, colon - text);
  return ddp_range_check_count("--measured-step-ms GPUS", gpus, &DDP_RANGE_GPUS, &out->gpus, error) &&
         ddp_range_check_number("--measured-step-ms MS", colon + 1, &DDP_RANGE_STEP_MS, &out->ms, error);
}

/**
 * ddp_run_terms_to_text:
 * See ddpterms.h.
 */
char *
ddp_run_terms_to_text(const DdpRunTerms *t)
{
  g_autoptr(GKeyFile) kf = g_key_file_new();
  g_key_file_set_uint64(kf, GROUP, "world_size", t->world_size);
  g_key_file_set_uint64(kf, GROUP, "nodes", t->nodes);
  g_key_file_set_uint64(kf, GROUP, "rank_files", t->rank_files);
  g_key_file_set_uint64(kf, GROUP, "steps", t->steps_kept);
  g_key_file_set_double(kf, GROUP, "overlap_slowdown", t->overlap_slowdown);
  g_key_file_set_uint64(kf, GROUP, "slowdown_kernels", t->slowdown_kernels);
  g_key_file_set_double(kf, GROUP, "jitter", t->jitter);
  g_key_file_set_double(kf, GROUP, "iteration_ms", t->iteration_ms);
  g_key_file_set_double(kf, GROUP, "iteration_spread_ms", t->iteration_spread_ms);
  g_key_file_set_double(kf, GROUP, "compute_ms", t->compute_ms);
  g_key_file_set_double(kf, GROUP, "comm_ms", t->comm_ms);
  g_key_file_set_double(kf, GROUP, "exposed_comm_ms", t->exposed_comm_ms);
  g_key_file_set_double(kf, GROUP, "overlap", t->overlap);
  GString *m = g_string_new(NULL);
  for (guint i = 0; i < t->n_steps; i++)
    g_string_append_printf(m, "%s%" G_GUINT64_FORMAT ":%.17g", i ? " " : "", t->steps[i].gpus, t->steps[i].ms);
  g_key_file_set_string(kf, GROUP, "measured_step_ms", m->str);
  g_string_free(m, TRUE);
  return g_key_file_to_data(kf, NULL, NULL);
}

/* A number of the stored terms; FALSE when absent, malformed or outside [lo, hi]. */
static gboolean
stored_number(GKeyFile *kf, const char *key, double lo, double hi, double *out)
{
  g_autoptr(GError) local = NULL;
  *out = g_key_file_get_double(kf, GROUP, key, &local);
  return !local && isfinite(*out) && *out >= lo && *out <= hi;
}

/* Reads the note of run @id into @out; FALSE with @error on a value out of range. */
static gboolean
parse_terms(const char *db_path, gint64 id, const char *note, DdpRunTerms *out, GError **error)
{
  g_autoptr(GKeyFile) kf = g_key_file_new();
  double world = 0, nodes = 0, files = 0, kernels = 0;
  gboolean ok = g_key_file_load_from_data(kf, note ? note : "", -1, G_KEY_FILE_NONE, NULL) &&
                stored_number(kf, "world_size", 2, (double)DDP_MAX_GPUS, &world) &&
                stored_number(kf, "nodes", 1, world, &nodes) &&
                stored_number(kf, "rank_files", 1, world, &files) &&
                stored_number(kf, "slowdown_kernels", 0, 1e12, &kernels) &&
                stored_number(kf, "overlap_slowdown", -1, DDP_RANGE_OVERLAP_SLOWDOWN.max, &out->overlap_slowdown) &&
                stored_number(kf, "jitter", -1, DDP_RANGE_JITTER.max, &out->jitter) &&
                stored_number(kf, "iteration_ms", 0, 1e12, &out->iteration_ms) &&
                stored_number(kf, "exposed_comm_ms", 0, 1e12, &out->exposed_comm_ms) &&
                stored_number(kf, "overlap", 0, 1, &out->overlap);
  if (!ok) {
    g_set_error(error, DDP_CALIBDB_ERROR, DDP_CALIBDB_ERROR_VALUE, "%s: run %" G_GINT64_FORMAT ": the DDP run's "
                "terms are missing or out of range", db_path, id);
    return FALSE;
  }
  out->run_id = id;
  out->world_size = (guint64)world;
  out->nodes = (guint64)nodes;
  out->rank_files = (guint)files;
  out->slowdown_kernels = (guint)kernels;
  g_autofree char *steps = g_key_file_get_string(kf, GROUP, "measured_step_ms", NULL);
  g_auto(GStrv) items = g_strsplit(steps ? steps : "", " ", -1);
  for (guint i = 0; items[i] && out->n_steps < DDP_MAX_MEASURED_STEPS; i++)
    if (*items[i] && ddp_measured_step_parse(items[i], &out->steps[out->n_steps], NULL))
      out->n_steps++;
  return TRUE;
}

/**
 * ddp_run_terms_load:
 * See ddpterms.h.
 */
gboolean
ddp_run_terms_load(const char *db_path, const DdpFit *fit, DdpRunTerms *out, GError **error)
{
  memset(out, 0, sizeof *out);
  g_autoptr(DdpCalibDb) db = ddp_calibdb_open(db_path, DDP_CALIBDB_READ, error);
  if (!db)
    return FALSE;
  g_auto(GStrv) parts = g_strsplit(ddp_fit_header(fit)->runs, ",", -1);
  gint64 best = 0;
  for (guint i = 0; parts[i]; i++) {
    gint64 id;
    g_auto(DdpCalibImport) import = { 0 };
    if (ddp_parse_integer(g_strstrip(parts[i]), &id) && id > best && ddp_calibdb_import_get(db, id, &import, NULL) &&
        g_strcmp0(import.format, "torch-ddp") == 0) {
      if (!parse_terms(db_path, id, import.note, out, error))
        return FALSE;
      best = id;
    }
  }
  return best > 0;
}

/**
 * ddp_run_terms_apply:
 * See ddpterms.h.
 */
GPtrArray *
ddp_run_terms_apply(const DdpRunTerms *terms, const char *name, DdpSetup *setup, gboolean given_slowdown,
                    gboolean given_jitter, gboolean given_step_ms)
{
  GPtrArray *lines = g_ptr_array_new_with_free_func(g_free);
  g_autofree char *run = g_strdup_printf("the DDP run (run %" G_GINT64_FORMAT ", %" G_GUINT64_FORMAT " GPUs on %"
                                         G_GUINT64_FORMAT " node%s)", terms->run_id, terms->world_size, terms->nodes,
                                         terms->nodes == 1 ? "" : "s");
  if (given_slowdown)
    g_ptr_array_add(lines, g_strdup_printf("note: calibration %s: overlap_slowdown: yours (flag or scenario), not "
                                           "%s's", name, run));
  else if (terms->overlap_slowdown >= 0) {
    setup->overheads.overlap_slowdown = terms->overlap_slowdown;
    g_ptr_array_add(lines, g_strdup_printf("note: calibration %s: overlap_slowdown %.3f from %s (%u kernels timed "
                                           "under an AllReduce against the same kernels outside one)", name,
                                           terms->overlap_slowdown, run, terms->slowdown_kernels));
  } else
    g_ptr_array_add(lines, g_strdup_printf("note: calibration %s: overlap_slowdown from the cluster's specs: %s has no "
                                           "kernel timed both inside and outside an AllReduce", name, run));
  if (given_jitter)
    g_ptr_array_add(lines, g_strdup_printf("note: calibration %s: jitter: yours (flag or scenario), not %s's", name,
                                           run));
  else if (terms->jitter >= 0) {
    setup->overheads.jitter = terms->jitter;
    g_ptr_array_add(lines, g_strdup_printf("note: calibration %s: jitter %.4f from %s (spread of %u ranks' compute)",
                                           name, terms->jitter, run, terms->rank_files));
  } else
    g_ptr_array_add(lines, g_strdup_printf("note: calibration %s: jitter %.3f from the defaults: %s was imported from "
                                           "one rank's trace; import every rank's file to measure it", name,
                                           setup->overheads.jitter, run));
  for (guint i = 0; i < terms->n_steps; i++) {
    const DdpMeasuredStep *m = &terms->steps[i];
    if (m->gpus == 1 && !given_step_ms) {
      setup->step_ms = m->ms;
      g_ptr_array_add(lines, g_strdup_printf("note: calibration %s: compute rescaled to the measured 1-GPU step "
                                             "%.3f ms (--measured-step-ms 1:%g)", name, m->ms, m->ms));
    }
    if (m->gpus == setup->gpus && m->gpus > 1)
      g_ptr_array_add(lines, g_strdup_printf("note: calibration %s: measured iteration at %" G_GUINT64_FORMAT
                                             " GPUs: %.3f ms", name, m->gpus, m->ms));
  }
  if (terms->world_size == setup->gpus)
    g_ptr_array_add(lines, g_strdup_printf("note: calibration %s: %s's traced iteration: %.3f ms (exposed "
                                           "communication %.3f ms)", name, run, terms->iteration_ms,
                                           terms->exposed_comm_ms));
  return lines;
}
