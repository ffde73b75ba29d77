/* fixture — see fixture.h.  The hand derivations in the tests start from this setup. */
#include "fixture.h"

#include "ddp.h"

/* @model_text_or_file: key-file text starting with "[model]", or a file name under tests/data.
 * No host time, jitter or contention (ddp_overheads_none); the cluster's own overlap_slowdown is
 * what ab4.cluster says.  (transfer full) */
DdpScenario *
fixture_scenario(const char *model_text_or_file, guint64 gpus, const char *stragglers)
{
  g_autoptr(GError) error = NULL;
  DdpScenario *s = g_new0(DdpScenario, 1);
  if (g_str_has_prefix(model_text_or_file, "[model]")) {
    g_autoptr(DdpKeyFile) kf = ddp_keyfile_load_data("t.model", model_text_or_file, &error);
    g_assert_no_error(error);
    s->model = ddp_model_from_keyfile(kf, &error);
  } else {
    g_autofree char *path = g_test_build_filename(G_TEST_DIST, "data", model_text_or_file, NULL);
    s->model = ddp_model_load(path, &error);
  }
  g_assert_no_error(error);
  g_autofree char *cluster = g_test_build_filename(G_TEST_DIST, "data", "ab4.cluster", NULL);
  s->cluster = fixture_cluster(cluster);
  s->stragglers = ddp_stragglers_parse(stragglers, &error);
  g_assert_no_error(error);
  ddp_setup_init(&s->setup);
  ddp_overheads_none(&s->setup.overheads);
  s->setup.gpus = gpus;
  s->setup.iterations = 3;
  return s;
}

DdpCluster *
fixture_cluster(const char *name_or_path)
{
  g_autoptr(GError) error = NULL;
  DdpCluster *c = ddp_cluster_load(name_or_path, &error);
  g_assert_no_error(error);
  return c;
}

/* One bucket for the whole model in steady state too: cap and first bucket above the model size,
 * so nothing overlaps and every term adds up. */
void
fixture_single_bucket(DdpScenario *s)
{
  s->setup.buckets.bucket_cap_mb = 1000;
  s->setup.buckets.first_bucket_bytes = (guint64)1 << 40;
}

void
assert_ms_ns(double ms, gint64 ns)
{
  g_assert_cmpfloat_with_epsilon(ms, (double)ns / 1e6, 1e-9);
}
