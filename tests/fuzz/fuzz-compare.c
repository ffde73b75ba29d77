/* fuzz-compare — `allreduce --compare` CSV files (src/collective.c): clusters named in the file
 * come from the shipped ones; every accepted point has a finite prediction. */
#include "fuzz.h"

#include "collective.h"

#include <math.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  const char *path = fuzz_file(data, size, "fuzz.csv");
  g_autoptr(GError) error = NULL;
  g_autoptr(GPtrArray) curves = ddp_collective_compare_csv(path, &error);
  if (!curves) {
    fuzz_check_error(error);
    return 0;
  }
  for (guint c = 0; c < curves->len; c++) {
    const DdpCompareCurve *curve = curves->pdata[c];
    FUZZ_REQUIRE(curve->gpus >= 1 && curve->gpus <= DDP_MAX_GPUS);
    for (guint i = 0; i < curve->points->len; i++) {
      const DdpComparePoint *p = &g_array_index(curve->points, DdpComparePoint, i);
      FUZZ_REQUIRE(isfinite(p->predicted.time_us) && p->predicted.time_us >= 0);
    }
  }
  return 0;
}
