/* fuzz-stragglers — --stragglers specs (src/straggler.c): an accepted spec prints back to a
 * canonical form that parses to the same form, and samples positive finite factors. */
#include "fuzz.h"

#include "straggler.h"

#include <math.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  g_autofree char *text = fuzz_text(data, size);
  if (!text)
    return 0;
  g_autoptr(GError) error = NULL;
  g_autoptr(DdpStragglers) s = ddp_stragglers_parse(text, &error);
  if (!s) {
    fuzz_check_error(error);
    return 0;
  }
  g_autofree char *canonical = ddp_stragglers_to_string(s);
  g_autoptr(DdpStragglers) again = ddp_stragglers_parse(canonical, &error);
  FUZZ_REQUIRE(again != NULL);
  g_autofree char *twice = ddp_stragglers_to_string(again);
  FUZZ_REQUIRE(strcmp(canonical, twice) == 0);
  FUZZ_REQUIRE(isfinite(ddp_stragglers_worst_factor(s)) && ddp_stragglers_worst_factor(s) >= 1);
  GRand *rng = g_rand_new_with_seed(1);
  double factor[3];
  gint64 delay[3];
  for (guint64 it = 0; it < 3; it++) {
    ddp_stragglers_sample(s, rng, it, 3, factor, delay);
    for (int r = 0; r < 3; r++)
      FUZZ_REQUIRE(isfinite(factor[r]) && factor[r] > 0 && factor[r] <= ddp_stragglers_worst_factor(s) * 1.000001 &&
                   delay[r] >= 0 && delay[r] <= ddp_stragglers_worst_delay_ns(s));
  }
  g_rand_free(rng);
  return 0;
}
