/* fuzz-ddptrace — a rank's torch.profiler trace of a DDP run (src/ddpimport.c), as `fit --import`
 * and `timeline --compare` read it: a refusal is one line; an accepted trace has 2 ≤ ranks, nodes
 * within them, at least one bucket, finite non-negative times, an overlap in [0, 1] and terms
 * inside their ranges (one file: jitter not measured). */
#include "fuzz.h"

#include "ddpimport.h"

#include <math.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  const char *paths[] = { fuzz_file(data, size, "rank-0.json") };
  g_autoptr(GError) error = NULL;
  g_autoptr(DdpRunTrace) t = ddp_run_trace_read(paths, 1, 0, &error);
  if (!t) {
    fuzz_check_error(error);
    return 0;
  }
  const DdpRunTerms *m = &t->terms;
  FUZZ_REQUIRE(m->world_size >= 2 && m->world_size <= DDP_MAX_GPUS);
  FUZZ_REQUIRE(m->nodes >= 1 && m->nodes <= m->world_size);
  FUZZ_REQUIRE(t->buckets->len >= 1 && m->steps_kept >= 1);
  for (guint b = 0; b < t->buckets->len; b++) {
    const DdpRunBucket *k = &g_array_index(t->buckets, DdpRunBucket, b);
    FUZZ_REQUIRE(k->bytes >= 1 && isfinite(k->time_us) && k->time_us >= 0 && k->min_us <= k->max_us);
  }
  FUZZ_REQUIRE(isfinite(m->iteration_ms) && m->iteration_ms >= 0);
  FUZZ_REQUIRE(isfinite(m->exposed_comm_ms) && m->exposed_comm_ms >= 0);
  FUZZ_REQUIRE(m->overlap >= 0 && m->overlap <= 1);
  FUZZ_REQUIRE(m->overlap_slowdown <= DDP_RANGE_OVERLAP_SLOWDOWN.max && m->jitter < 0);
  g_autofree char *summary = ddp_run_trace_summary(t);
  FUZZ_REQUIRE(strchr(summary, '\n') == NULL);
  return 0;
}
