/* fuzz-grid — `sweep --grid FILE` grid files (src/sweep.c): a refusal is one line; an accepted grid
 * has at most DDP_SWEEP_MAX_POINTS points, no value twice on an axis, and every point in range. */
#include "fuzz.h"

#include "sweep.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  const char *path = fuzz_file(data, size, "fuzz.ini");
  g_autoptr(GError) error = NULL;
  g_autoptr(DdpSweepGrid) grid = ddp_sweep_grid_new();
  guint64 n = 0;
  if (!ddp_sweep_grid_load_file(grid, path, &error) || !ddp_sweep_grid_count(grid, &n, &error)) {
    fuzz_check_error(error);
    return 0;
  }
  FUZZ_REQUIRE(n >= 1 && n <= DDP_SWEEP_MAX_POINTS);
  for (int a = 0; a < DDP_SWEEP_N_AXES; a++) {
    guint len = ddp_sweep_grid_axis_len(grid, a);
    g_autoptr(GHashTable) seen = g_hash_table_new(g_str_hash, g_str_equal);
    for (guint i = 0; i < len; i++) {
      const char *v = ddp_sweep_grid_axis_value(grid, a, i);
      if (!v)
        break;   /* an unswept axis */
      FUZZ_REQUIRE(g_hash_table_add(seen, (gpointer)v));   /* TRUE: not there before */
      if (a == DDP_SWEEP_AXIS_GPUS) {
        guint64 g = g_ascii_strtoull(v, NULL, 10);
        FUZZ_REQUIRE(g >= 1 && g <= DDP_MAX_GPUS);
      }
    }
  }
  return 0;
}
