/* fuzz-gpus — --gpus lists ("8,16,...,1024", src/ranges.c ddp_gpu_list_parse): an accepted list
 * increases strictly, stays within DDP_MAX_GPUS and holds at most DDP_MAX_SWEEP_POINTS counts. */
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  g_autofree char *text = fuzz_text(data, size);
  if (!text)
    return 0;
  g_autoptr(GError) error = NULL;
  g_autoptr(GArray) list = ddp_gpu_list_parse(text, &error);
  if (!list) {
    fuzz_check_error(error);
    return 0;
  }
  FUZZ_REQUIRE(list->len <= DDP_MAX_SWEEP_POINTS);
  for (guint i = 0; i < list->len; i++) {
    guint64 v = g_array_index(list, guint64, i);
    FUZZ_REQUIRE(v >= 1 && v <= DDP_MAX_GPUS);
    FUZZ_REQUIRE(i == 0 || v > g_array_index(list, guint64, i - 1));
  }
  return 0;
}
