/* fuzz-validate — `ddpsim validate FILE.csv` tables (src/validate.c): AllReduce curves, training
 * steps (with run, reference and torch_version columns) and bucket_cap_mb comparisons, recognised by
 * header and predicted with the shipped models and clusters.  A refusal is one line; an accepted
 * table has its statistics (not NaN where it has points). */
#include "fuzz.h"

#include "validate.h"

#include <math.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  const char *path = fuzz_file(data, size, "fuzz.csv");
  const char *paths[] = { path, NULL };
  g_autoptr(GError) error = NULL;
  g_autoptr(DdpValidation) v = ddp_validation_run_files(paths, NULL, &error);
  if (!v) {
    fuzz_check_error(error);
    return 0;
  }
  for (int k = 0; k < DDP_REGIME_COUNT; k++)
    FUZZ_REQUIRE(v->allreduce_model[k].points == 0 || !isnan(v->allreduce_model[k].median_abs_error));
  const DdpValidateTraining *pool = &v->training_pooled;
  FUZZ_REQUIRE(pool->step_error.points == 0 || !isnan(pool->baseline_step_error.median_abs_error));
  return 0;
}
