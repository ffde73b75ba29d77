/* Tests for trace: the Chrome trace-event JSON parses (json-glib), names one process per watched
 * rank with threads "compute" and "nccl", holds exactly one nccl slice per bucket per rank at the
 * simulated times (ts and dur are exact to the ns), one compute slice per non-empty segment, and
 * is written atomically.
 *
 * Fixtures: tests/data/tiny.model (two layers: forward fc1 then fc2, backward fc2 then fc1) on
 * tests/data/ab4.cluster, as in test-ddp.c. */
#include "fileio.h"
#include "trace.h"

#include <glib/gstdio.h>
#include <json-glib/json-glib.h>
#include <math.h>
#include <string.h>

static DdpScenario *
scenario(guint64 gpus, const char *stragglers)
{
  g_autoptr(GError) error = NULL;
  DdpScenario *s = g_new0(DdpScenario, 1);
  g_autofree char *model = g_test_build_filename(G_TEST_DIST, "data", "tiny.model", NULL);
  s->model = ddp_model_load(model, &error);
  g_assert_no_error(error);
  g_autofree char *cluster = g_test_build_filename(G_TEST_DIST, "data", "ab4.cluster", NULL);
  s->cluster = ddp_cluster_load(cluster, &error);
  g_assert_no_error(error);
  s->stragglers = ddp_stragglers_parse(stragglers, &error);
  g_assert_no_error(error);
  ddp_setup_init(&s->setup);
  /* closed forms: no host time, jitter or contention (tests/test-overheads.c covers those) */
  ddp_overheads_none(&s->setup.overheads);
  s->setup.overheads.overlap_slowdown = -1;   /* the cluster's, set where a test needs it */
  s->cluster->overlap_slowdown = 0;
  s->setup.gpus = gpus;
  s->setup.iterations = 3;
  /* one bucket per layer: two nccl slices per rank */
  s->setup.buckets.bucket_cap_mb = 1;
  return s;
}

static DdpResult *
simulate(const DdpScenario *s, const guint64 *ranks, guint n)
{
  g_autoptr(GError) error = NULL;
  DdpRunOptions options = { .watch_ranks = ranks, .n_watch_ranks = n, .skip_single_gpu = TRUE };
  DdpResult *r = ddp_simulate(s, &options, &error);
  g_assert_no_error(error);
  g_assert_nonnull(r);
  return r;
}

static JsonParser *
parse(const char *json)
{
  JsonParser *parser = json_parser_new();
  g_autoptr(GError) error = NULL;
  g_assert_true(json_parser_load_from_data(parser, json, -1, &error));
  g_assert_no_error(error);
  return parser;
}

static JsonArray *
events(JsonParser *parser)
{
  JsonObject *root = json_node_get_object(json_parser_get_root(parser));
  g_assert_nonnull(root);
  return json_object_get_array_member(root, "traceEvents");
}

/* µs with three decimals back to integer ns, relative to the iteration start. */
static gint64
sim_ns(JsonObject *event, const char *key, double start_us)
{
  return (gint64)llround((json_object_get_double_member(event, key) - start_us) * 1e3);
}

static double
start_us(JsonParser *parser)
{
  JsonObject *root = json_node_get_object(json_parser_get_root(parser));
  return json_object_get_double_member(json_object_get_object_member(root, "otherData"), "iteration_start_us");
}

/* Events of @pid, @tid with phase @ph, in file order. */
static GPtrArray *
select_events(JsonArray *all, gint64 pid, gint64 tid, const char *ph)
{
  GPtrArray *out = g_ptr_array_new();
  for (guint i = 0; i < json_array_get_length(all); i++) {
    JsonObject *e = json_array_get_object_element(all, i);
    if (json_object_get_int_member(e, "pid") == pid && strcmp(json_object_get_string_member(e, "ph"), ph) == 0 &&
        json_object_get_int_member_with_default(e, "tid", -1) == tid)
      g_ptr_array_add(out, e);
  }
  return out;
}

static const char *
metadata_name(JsonArray *all, gint64 pid, gint64 tid, const char *what)
{
  g_autoptr(GPtrArray) meta = select_events(all, pid, tid, "M");
  for (guint i = 0; i < meta->len; i++) {
    JsonObject *e = meta->pdata[i];
    if (strcmp(json_object_get_string_member(e, "name"), what) == 0)
      return json_object_get_string_member(json_object_get_object_member(e, "args"), "name");
  }
  return NULL;
}

/* Every watched rank: its process and threads named, one nccl slice per bucket at the simulated
 * start and duration with bytes, algorithm and protocol, and one compute slice per non-empty
 * segment in order. */
static void
assert_trace_matches(const DdpScenario *s, const DdpResult *r, JsonParser *parser)
{
  JsonArray *all = events(parser);
  double origin_us = start_us(parser);
  g_assert_cmpfloat(origin_us, >=, 0);
  for (guint w = 0; w < r->n_timelines; w++) {
    const DdpRankTimeline *t = &r->timelines[w];
    gint64 pid = (gint64)t->rank + 1;
    g_autofree char *expected = g_strdup_printf("rank %" G_GUINT64_FORMAT, t->rank);
    const char *process = metadata_name(all, pid, -1, "process_name");
    g_assert_nonnull(process);
    g_assert_true(g_str_has_prefix(process, expected));
    g_assert_cmpstr(metadata_name(all, pid, 1, "thread_name"), ==, "compute");
    g_assert_cmpstr(metadata_name(all, pid, 2, "thread_name"), ==, "nccl");

    g_autoptr(GPtrArray) nccl = select_events(all, pid, 2, "X");
    g_assert_cmpuint(nccl->len, ==, r->n_buckets);
    for (guint b = 0; b < r->n_buckets; b++) {
      const DdpBucketSchedule *k = &r->buckets[b];
      JsonObject *e = nccl->pdata[b];
      JsonObject *args = json_object_get_object_member(e, "args");
      g_assert_cmpstr(json_object_get_string_member(e, "cat"), ==, "nccl");
      g_assert_cmpint(json_object_get_int_member(args, "bucket"), ==, k->index);
      g_assert_cmpint(sim_ns(e, "ts", origin_us), ==, k->start_ns);
      g_assert_cmpint((gint64)llround(json_object_get_double_member(e, "dur") * 1e3), ==, k->end_ns - k->start_ns);
      g_assert_cmpint(json_object_get_int_member(args, "bytes"), ==, (gint64)k->bytes);
      g_assert_cmpstr(json_object_get_string_member(args, "algorithm"), ==, ddp_algorithm_name(k->cost.algorithm));
      g_assert_cmpstr(json_object_get_string_member(args, "protocol"), ==, ddp_protocol_name(k->cost.protocol));
    }
    g_autoptr(GPtrArray) ready = select_events(all, pid, 2, "i");
    g_assert_cmpuint(ready->len, ==, r->n_buckets);

    g_autoptr(GPtrArray) compute = select_events(all, pid, 1, "X");
    guint c = 0;
    for (guint i = 0; i < t->segments->len; i++) {
      const DdpSegment *g = &g_array_index(t->segments, DdpSegment, i);
      if (g->end_ns <= g->start_ns)
        continue;
      g_assert_cmpuint(c, <, compute->len);
      JsonObject *e = compute->pdata[c++];
      int next = i + 1 < t->segments->len ? (int)g_array_index(t->segments, DdpSegment, i + 1).kind : -1;
      g_assert_cmpstr(json_object_get_string_member(e, "name"), ==, ddp_trace_segment_name(s->model, g, next));
      g_assert_cmpstr(json_object_get_string_member(e, "cat"), ==, ddp_trace_segment_category(g, next));
      g_assert_cmpint(sim_ns(e, "ts", origin_us), ==, g->start_ns);
      g_assert_cmpint(sim_ns(e, "ts", origin_us) + (gint64)llround(json_object_get_double_member(e, "dur") * 1e3),
                      ==, g->end_ns);
    }
    g_assert_cmpuint(c, ==, compute->len);
  }
  /* nothing but the watched ranks */
  for (guint i = 0; i < json_array_get_length(all); i++) {
    JsonObject *e = json_array_get_object_element(all, i);
    gint64 pid = json_object_get_int_member(e, "pid");
    gboolean known = FALSE;
    for (guint w = 0; w < r->n_timelines; w++)
      known = known || pid == (gint64)r->timelines[w].rank + 1;
    g_assert_true(known);
    g_assert_cmpfloat(json_object_get_double_member_with_default(e, "ts", 0), >=, 0);
  }
}

/* No stragglers: the layer slices are the ones the model names, in order (hand-derived: forward
 * fc1, fc2; backward fc2, fc1), and nothing starts before the iteration, so ts is the simulated
 * time itself. */
static void
test_uniform(void)
{
  g_autoptr(DdpScenario) s = scenario(4, "none");
  static const guint64 ranks[] = { 0, 3 };
  g_autoptr(DdpResult) r = simulate(s, ranks, G_N_ELEMENTS(ranks));
  g_assert_cmpuint(r->n_buckets, ==, 2);
  g_autofree char *json = ddp_trace_to_json(s, r, NULL);
  g_autoptr(JsonParser) parser = parse(json);
  g_assert_cmpfloat(start_us(parser), ==, 0);
  assert_trace_matches(s, r, parser);

  JsonArray *all = events(parser);
  g_autoptr(GPtrArray) compute = select_events(all, 1, 1, "X");
  static const char *const layers[][2] = { { "forward", "fc1" }, { "forward", "fc2" }, { "backward", "fc2" },
                                           { "backward", "fc1" } };
  g_assert_cmpuint(compute->len, >=, G_N_ELEMENTS(layers));
  for (gsize i = 0; i < G_N_ELEMENTS(layers); i++) {
    JsonObject *e = compute->pdata[i];
    g_assert_cmpstr(json_object_get_string_member(e, "cat"), ==, layers[i][0]);
    g_assert_cmpstr(json_object_get_string_member(e, "name"), ==, layers[i][1]);
  }
  g_assert_cmpfloat(json_object_get_double_member(compute->pdata[0], "ts"), ==, 0);
  JsonObject *last = compute->pdata[compute->len - 1];
  g_assert_cmpstr(json_object_get_string_member(last, "cat"), ==, "optimizer");
  g_assert_cmpint(sim_ns(last, "ts", 0) + (gint64)llround(json_object_get_double_member(last, "dur") * 1e3), ==,
                  r->reported_iteration_ns);
}

/* Per-rank stragglers: fast ranks start the iteration early (negative simulated times); the
 * trace shifts everything by iteration_start_us so no ts is negative, and the times still map back
 * exactly. */
static void
test_stragglers(void)
{
  g_autoptr(DdpScenario) s = scenario(16, "lognormal:0.2");
  static const guint64 ranks[] = { 0, 5, 11, 15 };
  g_autoptr(DdpResult) r = simulate(s, ranks, G_N_ELEMENTS(ranks));
  g_assert_false(r->collapsed_ranks);
  static const char *const labels[] = { "rank zero", NULL, "slowest, x1.300", "" };
  g_autofree char *json = ddp_trace_to_json(s, r, labels);
  g_autoptr(JsonParser) parser = parse(json);
  assert_trace_matches(s, r, parser);
  JsonArray *all = events(parser);
  g_assert_cmpstr(metadata_name(all, 1, -1, "process_name"), ==, "rank 0 (rank zero)");
  g_assert_cmpstr(metadata_name(all, 6, -1, "process_name"), ==, "rank 5");
  g_assert_cmpstr(metadata_name(all, 12, -1, "process_name"), ==, "rank 11 (slowest, x1.300)");
  g_assert_cmpstr(metadata_name(all, 16, -1, "process_name"), ==, "rank 15");

  gint64 earliest = 0;
  for (guint w = 0; w < r->n_timelines; w++)
    for (guint i = 0; i < r->timelines[w].segments->len; i++)
      earliest = MIN(earliest, g_array_index(r->timelines[w].segments, DdpSegment, i).start_ns);
  g_assert_cmpint(earliest, <, 0);   /* the case this test is about */
  g_assert_cmpint((gint64)llround(start_us(parser) * 1e3), ==, -earliest);
}

static void
test_deterministic(void)
{
  g_autoptr(DdpScenario) s = scenario(8, "normal:0.1");
  static const guint64 ranks[] = { 2, 7 };
  g_autoptr(DdpResult) a = simulate(s, ranks, 2);
  g_autoptr(DdpResult) b = simulate(s, ranks, 2);
  g_autofree char *ja = ddp_trace_to_json(s, a, NULL);
  g_autofree char *jb = ddp_trace_to_json(s, b, NULL);
  g_assert_cmpstr(ja, ==, jb);
}

static guint
count_entries(const char *dir)
{
  g_autoptr(GDir) d = g_dir_open(dir, 0, NULL);
  guint n = 0;
  while (d && g_dir_read_name(d))
    n++;
  return n;
}

/* Written whole or not at all: into a missing directory nothing appears; over an old file the new
 * text replaces it and no temporary file stays behind. */
static void
test_write(void)
{
  g_autoptr(DdpScenario) s = scenario(4, "none");
  static const guint64 ranks[] = { 0 };
  g_autoptr(DdpResult) r = simulate(s, ranks, 1);
  g_autofree char *dir = g_dir_make_tmp("ddpsim-trace-XXXXXX", NULL);
  g_autofree char *missing = g_build_filename(dir, "no-such-dir", "trace.json", NULL);
  g_autoptr(GError) error = NULL;
  g_assert_false(ddp_trace_write(missing, s, r, NULL, &error));
  g_assert_error(error, DDP_FILE_ERROR, DDP_FILE_ERROR_WRITE);
  g_assert_cmpuint(count_entries(dir), ==, 0);
  g_clear_error(&error);

  g_autofree char *path = g_build_filename(dir, "trace.json", NULL);
  g_assert_true(g_file_set_contents(path, "old", -1, NULL));
  g_assert_true(ddp_trace_write(path, s, r, NULL, &error));
  g_assert_no_error(error);
  g_autofree char *written = NULL;
  g_assert_true(g_file_get_contents(path, &written, NULL, NULL));
  g_autofree char *expected = ddp_trace_to_json(s, r, NULL);
  g_assert_cmpstr(written, ==, expected);
  g_assert_cmpuint(count_entries(dir), ==, 1);
  g_unlink(path);
  g_rmdir(dir);
}

/* Accumulation: K forwards (and K-1 plain backwards) in the trace, each tagged with its micro-step. */
static void
test_accumulate(void)
{
  g_autoptr(DdpScenario) s = scenario(4, "none");
  s->setup.accumulate = 3;
  static const guint64 ranks[] = { 1 };
  g_autoptr(DdpResult) r = simulate(s, ranks, 1);
  g_autofree char *json = ddp_trace_to_json(s, r, NULL);
  g_autoptr(JsonParser) parser = parse(json);
  assert_trace_matches(s, r, parser);
  g_autoptr(GPtrArray) compute = select_events(events(parser), 2, 1, "X");
  guint forwards = 0;
  for (guint i = 0; i < compute->len; i++) {
    JsonObject *e = compute->pdata[i];
    if (strcmp(json_object_get_string_member(e, "cat"), "forward") == 0) {
      JsonObject *args = json_object_get_object_member(e, "args");
      g_assert_cmpint(json_object_get_int_member(args, "micro_step"), ==, forwards / 2);
      forwards++;
    }
  }
  g_assert_cmpuint(forwards, ==, 3 * 2);
}

/* A wait's name follows what comes next: the host's step boundary (the 100 µs before the
 * forward, ddp.c host_iteration_us) is not "wait for AllReduce"; a wait before finalize is; a
 * wait before backward is a straggler delay. */
static void
test_wait_names(void)
{
  const DdpSegment wait = { DDP_SEGMENT_WAIT, -1, 0, 0, 100000 };
  const struct {
    int next;
    const char *category, *name_prefix;
  } cases[] = {
    { DDP_SEGMENT_FORWARD, "host", "host step boundary" },
    { DDP_SEGMENT_BROADCAST, "host", "host step boundary" },
    { DDP_SEGMENT_FINALIZE, "wait", "wait for AllReduce" },
    { -1, "wait", "wait for AllReduce" },
    { DDP_SEGMENT_BACKWARD, "delay", "straggler delay" },
  };
  for (gsize i = 0; i < G_N_ELEMENTS(cases); i++) {
    g_assert_cmpstr(ddp_trace_segment_category(&wait, cases[i].next), ==, cases[i].category);
    g_assert_true(g_str_has_prefix(ddp_trace_segment_name(NULL, &wait, cases[i].next), cases[i].name_prefix));
  }
}

int
main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/trace/uniform", test_uniform);
  g_test_add_func("/trace/stragglers", test_stragglers);
  g_test_add_func("/trace/deterministic", test_deterministic);
  g_test_add_func("/trace/write", test_write);
  g_test_add_func("/trace/accumulate", test_accumulate);
  g_test_add_func("/trace/wait-names", test_wait_names);
  return g_test_run();
}
