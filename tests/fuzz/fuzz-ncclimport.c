/* fuzz-ncclimport — nccl-tests all_reduce_perf, all_gather_perf, reduce_scatter_perf and broadcast_perf
 * output as `fit --import LOG` reads it (src/ncclimport.c).  A refusal is one line "FILE:LINE: what"; an
 * accepted log has at most DDP_MAX_IMPORT_ROWS rows, a rank count inside ranges.h, sizes ≤ 2^50 and
 * measured times. */
#include "fuzz.h"

#include "ncclimport.h"

#include <math.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  g_autofree char *text = fuzz_text(data, size);
  if (!text)
    return 0;
  g_autoptr(GError) error = NULL;
  g_autoptr(DdpNcclTests) t = ddp_nccl_tests_parse("fuzz.txt", text, &error);
  if (!t) {
    fuzz_check_error(error);
    FUZZ_REQUIRE(g_str_has_prefix(error->message, "fuzz.txt:"));
    return 0;
  }
  FUZZ_REQUIRE(t->rows->len >= 1 && t->rows->len <= DDP_MAX_IMPORT_ROWS);
  FUZZ_REQUIRE(t->ranks >= 1 && (guint64)t->ranks <= DDP_MAX_GPUS && t->nodes >= 1 && t->nodes <= t->ranks);
  FUZZ_REQUIRE(t->gpus_per_process >= 0 && t->gpus_per_process <= 1024 && t->threads >= 0 && t->threads <= 1024);
  for (guint i = 0; i < t->rows->len; i++) {
    const DdpNcclTestsRow *r = &g_array_index(t->rows, DdpNcclTestsRow, i);
    FUZZ_REQUIRE(r->bytes >= 0 && r->bytes <= ((gint64)1 << 50));
    FUZZ_REQUIRE(r->oop_us > 0 && r->oop_us <= 1e9 && r->ip_us > 0 && r->ip_us <= 1e9);
    FUZZ_REQUIRE(isfinite(r->oop_busbw) && isfinite(r->ip_algbw));
  }
  return 0;
}
