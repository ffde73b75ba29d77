/* fuzz-profimport — torch.profiler Chrome traces as `fit --import TRACE` reads them (src/profimport.c,
 * fileio.c's capped gunzip): gzip is inflated first when the bytes start with its magic, then the
 * JSON is parsed and mapped onto the test model.  A refusal is one line; an accepted trace has
 * finite, non-negative layer times that add up to its total backward time. */
#include "fuzz.h"

#include "fileio.h"
#include "model.h"
#include "profimport.h"

#include <math.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  static DdpModel *model;
  if (!model) {
    g_autofree char *path = g_build_filename(g_getenv("DDPSIM_DATADIR") ? g_getenv("DDPSIM_DATADIR") : ".", "tests",
                                             "data", "tiny.model", NULL);
    model = ddp_model_load(path, NULL);
    FUZZ_REQUIRE(model != NULL);
  }
  g_autoptr(GError) error = NULL;
  g_autofree char *inflated = NULL;
  gsize length = size;
  const char *text = (const char *)data;
  if (size >= 2 && data[0] == 0x1f && data[1] == 0x8b) {
    /* a 1 MiB cap here (64 MiB in ddpsim) keeps each run fast; the cap logic is the same */
    if (!ddp_file_gunzip("fuzz.json.gz", text, size, 1 << 20, &inflated, &length, &error)) {
      fuzz_check_error(error);
      return 0;
    }
    text = inflated;
  }
  g_autoptr(DdpProfTrace) t = ddp_prof_trace_parse("fuzz.json", text, length, model, &error);
  if (!t) {
    fuzz_check_error(error);
    return 0;
  }
  FUZZ_REQUIRE(t->layers->len == model->n_layers && t->steps >= 1);
  double sum = 0;
  for (guint i = 0; i < t->layers->len; i++) {
    double us = g_array_index(t->layers, DdpProfLayerTime, i).backward_us;
    FUZZ_REQUIRE(isfinite(us) && us >= 0);
    sum += us;
  }
  FUZZ_REQUIRE(isfinite(t->total_backward_us) && fabs(sum - t->total_backward_us) <= 1e-6 * (1 + sum));
  FUZZ_REQUIRE(t->sm_arch == 0 || (t->sm_arch >= 60 && t->sm_arch <= 200));
  return 0;
}
