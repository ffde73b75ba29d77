/* fuzz-scenario — scenario files (src/scenario.c: [scenario], [training], an inline cluster) with
 * the tiny test model, so each run stays cheap; an accepted scenario's setup is inside ranges.h. */
#include "fuzz.h"

#include "scenario.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  if (memchr(data, '\0', size))
    return 0;
  const char *path = fuzz_file(data, size, "fuzz.scenario");
  DdpCliOptions cli = { 0 };
  cli.model = (char *)DDP_SRCDIR "/tests/data/tiny.model";
  g_autoptr(GError) error = NULL;
  g_autoptr(DdpScenario) s = ddp_scenario_load(path, &cli, TRUE, &error);
  if (!s) {
    fuzz_check_error(error);
    return 0;
  }
  FUZZ_REQUIRE(ddp_range_contains(&DDP_RANGE_GPUS, (double)s->setup.gpus));
  FUZZ_REQUIRE(ddp_range_contains(&DDP_RANGE_BATCH, s->setup.batch));
  FUZZ_REQUIRE(ddp_range_contains(&DDP_RANGE_ACCUMULATE, s->setup.accumulate));
  FUZZ_REQUIRE(ddp_range_contains(&DDP_RANGE_ITERATIONS, s->setup.iterations));
  return 0;
}
