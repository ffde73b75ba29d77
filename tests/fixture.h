/* fixture — the closed-form scenario the simulator tests share: a model (tests/data file or inline
 * key-file text) on tests/data/ab4.cluster, every overhead off, 3 iterations. */
#ifndef DDP_TEST_FIXTURE_H
#define DDP_TEST_FIXTURE_H

#include "scenario.h"

DdpScenario *fixture_scenario(const char *model_text_or_file, guint64 gpus, const char *stragglers);
/* A cluster by shipped name or by path, loaded without error.  (transfer full) */
DdpCluster *fixture_cluster(const char *name_or_path);
void fixture_single_bucket(DdpScenario *s);
void assert_ms_ns(double ms, gint64 ns);

#endif
