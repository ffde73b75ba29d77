/* End-to-end tests of `ddpsim timeline` through the real binary ($DDPSIM): the PNG is a real PNG
 * of at least 640×400; the SVG parses and its bucket-bar group (plots/timeline.gp: SVG group
 * "gnuplot_plot_1") holds one rectangle per bucket; the Perfetto trace parses (json-glib) with
 * exactly one "nccl" slice per bucket per shown rank at the times `predict --json` reports for the
 * same configuration; --ranks adds the slowest and fastest ranks; gnuplot missing or failing
 * leaves no output file and says so in one line.  The chart cases skip without gnuplot.
 *
 * Fixture: a six-layer model written below, one 2 MiB weight per layer, so that a 2 MiB cap gives
 * several buckets (PyTorch closes a bucket once it reaches the cap). */
#include <glib.h>
#include <glib/gstdio.h>
#include <json-glib/json-glib.h>
#include <string.h>

#include "run-ddpsim.h"

static char *tmpdir;      /* this run's scratch directory */
static char *six_model;   /* the fixture model's path */

static const char six_text[] =
  "# six linear layers, 512x1024 fp32 weights (2 MiB each) and 512 biases, measured at batch 32\n"
  "[model]\nname = six\nsource = test-timeline.c\ninput = 1024\nmeasured_batch = 32\n"
  "[layer l0]\nkind = linear\nforward_flops = 33554432\nbackward_flops = 67108864\nforward_us = 60\nbackward_us = 120\nparams = l0.weight:512,1024;l0.bias:512\n"
  "[layer l1]\nkind = linear\nforward_flops = 33554432\nbackward_flops = 67108864\nforward_us = 60\nbackward_us = 120\nparams = l1.weight:512,1024;l1.bias:512\n"
  "[layer l2]\nkind = linear\nforward_flops = 33554432\nbackward_flops = 67108864\nforward_us = 60\nbackward_us = 120\nparams = l2.weight:512,1024;l2.bias:512\n"
  "[layer l3]\nkind = linear\nforward_flops = 33554432\nbackward_flops = 67108864\nforward_us = 60\nbackward_us = 120\nparams = l3.weight:512,1024;l3.bias:512\n"
  "[layer l4]\nkind = linear\nforward_flops = 33554432\nbackward_flops = 67108864\nforward_us = 60\nbackward_us = 120\nparams = l4.weight:512,1024;l4.bias:512\n"
  "[layer l5]\nkind = linear\nforward_flops = 33554432\nbackward_flops = 67108864\nforward_us = 60\nbackward_us = 120\nparams = l5.weight:512,1024;l5.bias:512\n";

#define COMMON "--model", six_model, "--cluster", cluster_path(), "--gpus", "8", "--bucket-cap-mb", "2", "--iterations", "5"

static const char *
cluster_path(void)
{
  static char *path;
  if (!path)
    path = g_test_build_filename(G_TEST_DIST, "data", "ab4.cluster", NULL);
  return path;
}

static char *
scratch(const char *name)
{
  return g_build_filename(tmpdir, name, NULL);
}

static gboolean
have_gnuplot(void)
{
  const char *env = g_getenv("DDPSIM_GNUPLOT");
  g_autofree char *found = g_find_program_in_path(env && *env ? env : "gnuplot");
  if (!found)
    g_test_skip("gnuplot is not installed");
  return found != NULL;
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

static void
remove_files(const char *dir)
{
  g_autoptr(GDir) d = g_dir_open(dir, 0, NULL);
  const char *name;
  while (d && (name = g_dir_read_name(d))) {
    g_autofree char *path = g_build_filename(dir, name, NULL);
    if (g_file_test(path, G_FILE_TEST_IS_DIR)) {
      remove_files(path);
      g_rmdir(path);
    } else {
      g_unlink(path);
    }
  }
}

static JsonParser *
parse_json(const char *text)
{
  JsonParser *parser = json_parser_new();
  g_autoptr(GError) error = NULL;
  g_assert_true(json_parser_load_from_data(parser, text, -1, &error));
  g_assert_no_error(error);
  return parser;
}

/* `predict --json` for the same flags: the bucket schedule the chart and trace must show. */
static JsonParser *
predict(const char *stragglers)
{
  g_auto(Run) r = { 0 };
  run_env(&r, NULL, NULL, "predict", COMMON, "--stragglers", stragglers, "--seed", "3", "--json", NULL);
  run_assert_ok(&r);
  return parse_json(r.out);
}

static JsonArray *
predicted_buckets(JsonParser *parser)
{
  return json_object_get_array_member(json_node_get_object(json_parser_get_root(parser)), "buckets");
}

/* ms with six decimals (predict) and µs with three (trace) are both exact ns */
static gint64
ms_ns(double ms)
{
  return (gint64)(ms * 1e6 + (ms >= 0 ? 0.5 : -0.5));
}

static gint64
us_ns(double us)
{
  return (gint64)(us * 1e3 + (us >= 0 ? 0.5 : -0.5));
}

static void
test_png(void)
{
  if (!have_gnuplot())
    return;
  g_autofree char *out = scratch("timeline.png");
  g_auto(Run) r = { 0 };
  run_env(&r, NULL, NULL, "timeline", COMMON, "-o", out, NULL);
  run_assert_ok(&r);
  g_assert_nonnull(strstr(r.out, "wrote "));
  g_autofree char *data = NULL;
  gsize len = 0;
  g_assert_true(g_file_get_contents(out, &data, &len, NULL));
  /* PNG signature, then the IHDR chunk: big-endian width and height (PNG spec §11.2.2) */
  static const unsigned char signature[8] = { 0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n' };
  g_assert_cmpuint(len, >, 1000);
  g_assert_cmpmem(data, 8, signature, 8);
  g_assert_cmpmem(data + 12, 4, "IHDR", 4);
  const unsigned char *p = (const unsigned char *)data + 16;
  guint32 width = (guint32)p[0] << 24 | (guint32)p[1] << 16 | (guint32)p[2] << 8 | p[3];
  guint32 height = (guint32)p[4] << 24 | (guint32)p[5] << 16 | (guint32)p[6] << 8 | p[7];
  g_assert_cmpuint(width, >=, 640);
  g_assert_cmpuint(height, >=, 400);
  g_assert_cmpuint(count_entries(tmpdir), ==, 1);   /* no temporary file left */
  remove_files(tmpdir);
}

/* SVG: parsed with GMarkup, counting <polygon> inside <g id="gnuplot_plot_1"> (the bucket bars,
 * see plots/timeline.gp) and every <polygon> on the page. */
typedef struct {
  int depth_in_buckets;   /* > 0 while inside the bucket group */
  int depth;
  guint bucket_rects, polygons;
} SvgCount;

static void
svg_start(GMarkupParseContext *context, const char *element, const char **names, const char **values,
          gpointer data, GError **error)
{
  SvgCount *c = data;
  c->depth++;
  if (strcmp(element, "g") == 0 && c->depth_in_buckets == 0)
    for (int i = 0; names[i]; i++)
      if (strcmp(names[i], "id") == 0 && strcmp(values[i], "gnuplot_plot_1") == 0)
        c->depth_in_buckets = c->depth;
  if (strcmp(element, "polygon") == 0) {
    c->polygons++;
    if (c->depth_in_buckets > 0) {
      /* a rectangle: four corners */
      for (int i = 0; names[i]; i++)
        if (strcmp(names[i], "points") == 0) {
          g_autofree char *points = g_strstrip(g_strdup(values[i]));
          g_auto(GStrv) corners = g_strsplit(points, " ", -1);
          guint n = 0;
          for (char **k = corners; *k; k++)
            n += **k != '\0';
          g_assert_cmpuint(n, ==, 4);
        }
      c->bucket_rects++;
    }
  }
}

static void
svg_end(GMarkupParseContext *context, const char *element, gpointer data, GError **error)
{
  SvgCount *c = data;
  if (c->depth == c->depth_in_buckets)
    c->depth_in_buckets = -1;   /* the group closed: count nothing more */
  c->depth--;
}

static void
test_svg(void)
{
  if (!have_gnuplot())
    return;
  g_autofree char *out = scratch("timeline.svg");
  g_auto(Run) r = { 0 };
  run_env(&r, NULL, NULL, "timeline", COMMON, "-o", out, NULL);
  run_assert_ok(&r);
  g_autoptr(JsonParser) predicted = predict("none");
  guint n_buckets = json_array_get_length(predicted_buckets(predicted));
  g_assert_cmpuint(n_buckets, >=, 3);

  g_autofree char *text = NULL;
  g_assert_true(g_file_get_contents(out, &text, NULL, NULL));
  SvgCount count = { 0 };
  GMarkupParser parser = { svg_start, svg_end, NULL, NULL, NULL };
  g_autoptr(GMarkupParseContext) context = g_markup_parse_context_new(&parser, 0, &count, NULL);
  g_autoptr(GError) error = NULL;
  g_assert_true(g_markup_parse_context_parse(context, text, -1, &error) &&
                g_markup_parse_context_end_parse(context, &error));
  g_assert_no_error(error);
  g_assert_cmpuint(count.bucket_rects, ==, n_buckets);
  g_assert_cmpuint(count.polygons, >, n_buckets);   /* the compute lane is drawn too */
  remove_files(tmpdir);
}

/* Every "exposed communication X ms" figure of an SVG chart (title, annotation; the key's entry has
 * none), checked to agree; each split "(AllReduce tail A + buffer broadcast B)" must add up.
 * Returns the figure. */
static double
agreed_exposed_figure(const char *svg_text, guint *n_figures, double *broadcast_ms)
{
  g_autoptr(GRegex) re = g_regex_new("exposed communication ([0-9]+\\.[0-9]+) ms"
                                     "(?: \\(AllReduce tail ([0-9]+\\.[0-9]+) \\+ buffer broadcast ([0-9]+\\.[0-9]+)\\))?",
                                     0, 0, NULL);
  g_autoptr(GMatchInfo) match = NULL;
  double figure = -1;
  *n_figures = 0;
  *broadcast_ms = 0;
  for (g_regex_match(re, svg_text, 0, &match); g_match_info_matches(match); g_match_info_next(match, NULL)) {
    g_autofree char *total = g_match_info_fetch(match, 1);
    g_autofree char *tail = g_match_info_fetch(match, 2);
    g_autofree char *broadcast = g_match_info_fetch(match, 3);
    double value = g_ascii_strtod(total, NULL);
    if (*n_figures > 0)
      g_assert_cmpfloat(value, ==, figure);   /* same printed text, same number */
    figure = value;
    if (tail && *tail) {
      *broadcast_ms = g_ascii_strtod(broadcast, NULL);
      g_assert_cmpfloat_with_epsilon(g_ascii_strtod(tail, NULL) + *broadcast_ms, value, 1e-9);
    }
    (*n_figures)++;
  }
  return figure;
}

/* The exposed-communication figure is printed once on the chart (the annotation over the shaded
 * tail; the title no longer repeats it) and agrees with the summary on stdout.  Without stragglers every steady iteration is
 * the same, so the figure is also predict's exposed_comm_ms, printed to 3 decimals.  ResNet-50
 * broadcasts its BatchNorm buffers before every forward (broadcast_buffers=True), which is exposed
 * communication too: the annotation splits it from the AllReduce tail, and the parts add up.  With
 * stragglers the drawn iteration differs from the mean, and the two figures still agree. */
static void
test_exposed_figures_agree(void)
{
  if (!have_gnuplot())
    return;
  struct {
    const char *args[8];
    gboolean broadcast;
  } cases[] = {
    { { "--model", "resnet50", "--cluster", "dgx-a100", "--gpus", "64", NULL }, TRUE },
    { { "--model", six_model, "--cluster", cluster_path(), "--gpus", "8", "--stragglers", "lognormal:0.2" }, FALSE },
  };
  for (gsize i = 0; i < G_N_ELEMENTS(cases); i++) {
    const char *const *a = cases[i].args;
    g_autofree char *out = scratch("exposed.svg");
    g_auto(Run) r = { 0 };
    run_env(&r, NULL, NULL, "timeline", a[0], a[1], a[2], a[3], a[4], a[5], "--iterations", "5", "--bucket-cap-mb",
            "2", "-o", out, a[6], a[7], NULL);
    run_assert_ok(&r);
    g_autofree char *svg = NULL;
    g_assert_true(g_file_get_contents(out, &svg, NULL, NULL));
    guint n = 0;
    double broadcast = 0;
    double figure = agreed_exposed_figure(svg, &n, &broadcast);
    g_assert_cmpuint(n, ==, 1);   /* the annotation only: not again in the title */
    /* the "end … ms" label at the right end of the iteration grows leftwards: never clipped */
    const char *end_label = strstr(svg, "<text>end ");
    g_assert_nonnull(end_label);
    g_autofree char *before = g_strndup(svg, (gsize)(end_label - svg));
    g_assert_true(g_str_has_prefix(g_strrstr(before, "text-anchor="), "text-anchor=\"end\""));
    g_assert_cmpfloat(figure, >, 0);
    g_assert_true(cases[i].broadcast ? broadcast > 0 : broadcast == 0);
    /* the summary on stdout prints the same text */
    guint n_stdout = 0;
    double ignored = 0;
    g_assert_cmpfloat(agreed_exposed_figure(r.out, &n_stdout, &ignored), ==, figure);
    g_assert_cmpuint(n_stdout, ==, 1);
    if (!a[6]) {
      g_auto(Run) p = { 0 };
      run_env(&p, NULL, NULL, "predict", a[0], a[1], a[2], a[3], a[4], a[5], "--iterations", "5", "--bucket-cap-mb",
              "2", "--json", NULL);
      run_assert_ok(&p);
      g_autoptr(JsonParser) parser = parse_json(p.out);
      double mean = json_object_get_double_member(json_node_get_object(json_parser_get_root(parser)), "exposed_comm_ms");
      g_assert_cmpfloat_with_epsilon(figure, mean, 0.0005 + 1e-9);
    }
    remove_files(tmpdir);
  }
}

/* The trace: one process per shown rank, exactly one nccl slice per bucket per process, at the
 * simulated times (those `predict --json` prints) with the bytes, algorithm and protocol. */
static void
assert_trace(const char *path, JsonParser *predicted, guint expected_processes)
{
  g_autofree char *text = NULL;
  g_assert_true(g_file_get_contents(path, &text, NULL, NULL));
  g_autoptr(JsonParser) parser = parse_json(text);
  JsonObject *root = json_node_get_object(json_parser_get_root(parser));
  JsonArray *events = json_object_get_array_member(root, "traceEvents");
  double origin_us = json_object_get_double_member(json_object_get_object_member(root, "otherData"),
                                                   "iteration_start_us");
  JsonArray *buckets = predicted_buckets(predicted);
  guint n_buckets = json_array_get_length(buckets);

  g_autoptr(GHashTable) nccl_per_pid = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, NULL);
  g_autoptr(GArray) pids = g_array_new(FALSE, FALSE, sizeof(gint64));
  for (guint i = 0; i < json_array_get_length(events); i++) {
    JsonObject *e = json_array_get_object_element(events, i);
    gint64 pid = json_object_get_int_member(e, "pid");
    const char *ph = json_object_get_string_member(e, "ph");
    if (strcmp(ph, "M") == 0 && strcmp(json_object_get_string_member(e, "name"), "process_name") == 0)
      g_array_append_val(pids, pid);
    if (strcmp(ph, "M") == 0 && strcmp(json_object_get_string_member(e, "name"), "thread_name") == 0) {
      const char *thread = json_object_get_string_member(json_object_get_object_member(e, "args"), "name");
      g_assert_cmpstr(thread, ==, json_object_get_int_member(e, "tid") == 1 ? "compute" : "nccl");
    }
    if (strcmp(ph, "X") != 0 || strcmp(json_object_get_string_member(e, "cat"), "nccl") != 0)
      continue;
    g_assert_cmpint(json_object_get_int_member(e, "tid"), ==, 2);
    JsonObject *args = json_object_get_object_member(e, "args");
    gint64 b = json_object_get_int_member(args, "bucket");
    g_assert_cmpint(b, >=, 0);
    g_assert_cmpint(b, <, n_buckets);
    /* slices come in bucket order on each rank */
    guint seen = GPOINTER_TO_UINT(g_hash_table_lookup(nccl_per_pid, &pid));
    g_assert_cmpint(b, ==, seen);
    gint64 *key = g_new(gint64, 1);
    *key = pid;
    g_hash_table_replace(nccl_per_pid, key, GUINT_TO_POINTER(seen + 1));

    JsonObject *want = json_array_get_object_element(buckets, (guint)b);
    gint64 start = us_ns(json_object_get_double_member(e, "ts") - origin_us);
    gint64 end = start + us_ns(json_object_get_double_member(e, "dur"));
    g_assert_cmpint(start, ==, ms_ns(json_object_get_double_member(want, "start_ms")));
    g_assert_cmpint(end, ==, ms_ns(json_object_get_double_member(want, "end_ms")));
    g_assert_cmpint(json_object_get_int_member(args, "bytes"), ==, json_object_get_int_member(want, "bytes"));
    g_assert_cmpstr(json_object_get_string_member(args, "algorithm"), ==,
                    json_object_get_string_member(want, "algorithm"));
    g_assert_cmpstr(json_object_get_string_member(args, "protocol"), ==,
                    json_object_get_string_member(want, "protocol"));
  }
  g_assert_cmpuint(pids->len, ==, expected_processes);
  for (guint i = 0; i < pids->len; i++) {
    gint64 pid = g_array_index(pids, gint64, i);
    g_assert_cmpuint(GPOINTER_TO_UINT(g_hash_table_lookup(nccl_per_pid, &pid)), ==, n_buckets);
  }
  g_assert_cmpuint(g_hash_table_size(nccl_per_pid), ==, expected_processes);
}

static void
test_trace(void)
{
  g_autofree char *out = scratch("trace.json");
  g_auto(Run) r = { 0 };
  /* no -o: the trace alone needs no gnuplot */
  run_env(&r, "DDPSIM_GNUPLOT", "/nonexistent/gnuplot", "timeline", COMMON, "--trace", out, NULL);
  run_assert_ok(&r);
  g_autoptr(JsonParser) predicted = predict("none");
  assert_trace(out, predicted, 1);

  /* byte-identical when run again */
  g_autofree char *first = NULL, *second = NULL;
  g_assert_true(g_file_get_contents(out, &first, NULL, NULL));
  g_auto(Run) again = { 0 };
  run_env(&again, NULL, NULL, "timeline", COMMON, "--trace", out, NULL);
  run_assert_ok(&again);
  g_assert_true(g_file_get_contents(out, &second, NULL, NULL));
  g_assert_cmpstr(first, ==, second);
  remove_files(tmpdir);
}

/* --mode fsdp: the six-layer model has no numbered block, so FSDP wraps it as one root unit: one
 * AllGather before forward, none in backward (the root is not resharded after forward), one
 * ReduceScatter after backward, both on the NCCL thread; the chart draws their lanes. */
static void
test_fsdp(void)
{
  g_autofree char *out = scratch("fsdp.json");
  g_auto(Run) r = { 0 };
  run_env(&r, "DDPSIM_GNUPLOT", "/nonexistent/gnuplot", "timeline", COMMON, "--mode", "fsdp", "--trace", out, NULL);
  run_assert_ok(&r);
  g_autoptr(JsonParser) parser = json_parser_new();
  g_assert_true(json_parser_load_from_file(parser, out, NULL));
  JsonArray *events = json_object_get_array_member(json_node_get_object(json_parser_get_root(parser)), "traceEvents");
  guint gathers = 0, scatters = 0;
  for (guint i = 0; i < json_array_get_length(events); i++) {
    JsonObject *e = json_array_get_object_element(events, i);
    const char *name = json_object_get_string_member(e, "name");
    if (g_strcmp0(name, "AllGather unit 0") == 0 || g_strcmp0(name, "ReduceScatter unit 0") == 0) {
      g_assert_cmpint(json_object_get_int_member(e, "tid"), ==, 2);
      if (name[0] == 'A')
        gathers++;
      else
        scatters++;
    }
  }
  g_assert_cmpuint(gathers, ==, 1);
  g_assert_cmpuint(scatters, ==, 1);
  if (have_gnuplot()) {
    g_autofree char *png = scratch("fsdp.png");
    g_auto(Run) chart = { 0 };
    run(&chart, "timeline", COMMON, "--mode", "fsdp", "-o", png, NULL);
    run_assert_ok(&chart);
    g_assert_true(g_file_test(png, G_FILE_TEST_IS_REGULAR));
  }
  remove_files(tmpdir);
}

/* --ranks 2 with per-rank stragglers: rank 0 plus the 2 slowest and 2 fastest (5 distinct ranks,
 * or 4 when rank 0 is one of them), each with the full bucket schedule. */
static void
test_ranks(void)
{
  g_autofree char *out = scratch("trace.json");
  g_auto(Run) r = { 0 };
  run_env(&r, NULL, NULL, "timeline", COMMON, "--stragglers", "lognormal:0.1", "--seed", "3", "--ranks", "2",
          "--trace", out, NULL);
  run_assert_ok(&r);
  g_assert_nonnull(strstr(r.out, "slowest"));
  g_assert_nonnull(strstr(r.out, "fastest"));
  g_autoptr(JsonParser) predicted = predict("lognormal:0.1");
  g_autofree char *text = NULL;
  g_assert_true(g_file_get_contents(out, &text, NULL, NULL));
  guint processes = 0;
  for (const char *p = text; (p = strstr(p, "\"process_name\"")); p++)
    processes++;
  g_assert_cmpuint(processes, >=, 4);
  g_assert_cmpuint(processes, <=, 5);
  g_assert_nonnull(strstr(text, "slowest"));
  g_assert_nonnull(strstr(text, "fastest"));
  assert_trace(out, predicted, processes);
  remove_files(tmpdir);
}

/* The acceptance case: no gnuplot → one clear line, exit 2, no output file (not the trace either). */
static void
test_no_gnuplot(void)
{
  g_autofree char *png = scratch("timeline.png");
  g_autofree char *json = scratch("trace.json");
  g_auto(Run) r = { 0 };
  run_env(&r, "DDPSIM_GNUPLOT", "/nonexistent/gnuplot", "timeline", COMMON, "-o", png, "--trace", json, NULL);
  run_assert_one_line_error(&r, 2, "gnuplot not found");
  g_assert_nonnull(strstr(r.err, "/nonexistent/gnuplot"));
  g_assert_cmpuint(count_entries(tmpdir), ==, 0);
}

/* gnuplot that starts writing and then fails: exit 1 with its complaint, the previous file kept,
 * no temporary file left beside it.  The stand-in reads the output path where plot.h says it is
 * passed: gnuplot -e 'output_file = "TMP"; output_format = "png"' params.gp script. */
static void
test_gnuplot_fails(void)
{
  g_autofree char *fake = scratch("fake-gnuplot");
  g_assert_true(g_file_set_contents(fake,
                                    "#!/bin/sh\n"
                                    "out=$(printf '%s\\n' \"$2\" | sed -n 's/^output_file = \"\\(.*\\)\"; output_format.*/\\1/p')\n"
                                    "test -n \"$out\" || exit 3\n"
                                    "printf '\\211PNG\\r\\n' > \"$out\"\n"
                                    "echo '\"timeline.gp\" line 7: simulated failure' >&2\n"
                                    "exit 1\n",
                                    -1, NULL));
  g_assert_cmpint(g_chmod(fake, 0755), ==, 0);
  g_autofree char *png = scratch("timeline.png");
  g_assert_true(g_file_set_contents(png, "previous", -1, NULL));
  g_auto(Run) r = { 0 };
  run_env(&r, "DDPSIM_GNUPLOT", fake, "timeline", COMMON, "-o", png, NULL);
  run_assert_one_line_error(&r, 1, "line 7: simulated failure");
  g_autofree char *kept = NULL;
  g_assert_true(g_file_get_contents(png, &kept, NULL, NULL));
  g_assert_cmpstr(kept, ==, "previous");
  g_assert_cmpuint(count_entries(tmpdir), ==, 2);   /* fake-gnuplot and timeline.png */
  remove_files(tmpdir);
}

static void
test_bad_input(void)
{
  g_autofree char *pdf = scratch("timeline.pdf");
  g_autofree char *png = scratch("timeline.png");
  g_autofree char *nowhere = g_build_filename(tmpdir, "no-such-dir", "t.png", NULL);
  struct {
    const char *args[4];
    const char *expect;
  } cases[] = {
    { { "-o", pdf, NULL }, ".png or .svg" },
    { { NULL }, "nothing to write" },
    { { "-o", png, "--ranks", "0" }, "--ranks: \"0\" must be a whole number from 1 to 16" },
    { { "--trace", png, "--ranks", "x" }, "--ranks" },
    { { "-o", nowhere, NULL }, "does not exist" },
    { { "--trace", nowhere, NULL }, "does not exist" },
    { { "--trace", png, "--plot-data", tmpdir }, "--plot-data" },
  };
  for (gsize i = 0; i < G_N_ELEMENTS(cases); i++) {
    g_auto(Run) r = { 0 };
    run_env(&r, NULL, NULL, "timeline", COMMON, cases[i].args[0], cases[i].args[1], cases[i].args[2],
            cases[i].args[3], NULL);
    run_assert_one_line_error(&r, 2, cases[i].expect);
    g_assert_cmpuint(count_entries(tmpdir), ==, 0);
  }
}

int
main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_setenv("DDPSIM_DATADIR", DDP_SRCDIR, TRUE);
  g_autofree char *dir = g_dir_make_tmp("ddpsim-timeline-XXXXXX", NULL);
  g_autofree char *model_dir = g_dir_make_tmp("ddpsim-timeline-model-XXXXXX", NULL);
  tmpdir = dir;
  six_model = g_build_filename(model_dir, "six.model", NULL);
  g_assert_true(g_file_set_contents(six_model, six_text, -1, NULL));
  g_test_add_func("/timeline/png", test_png);
  g_test_add_func("/timeline/svg-one-rect-per-bucket", test_svg);
  g_test_add_func("/timeline/exposed-figures-agree", test_exposed_figures_agree);
  g_test_add_func("/timeline/trace", test_trace);
  g_test_add_func("/timeline/fsdp", test_fsdp);
  g_test_add_func("/timeline/ranks", test_ranks);
  g_test_add_func("/timeline/no-gnuplot", test_no_gnuplot);
  g_test_add_func("/timeline/gnuplot-fails", test_gnuplot_fails);
  g_test_add_func("/timeline/bad-input", test_bad_input);
  int status = g_test_run();
  remove_files(dir);
  g_rmdir(dir);
  g_unlink(six_model);
  g_rmdir(model_dir);
  g_free(six_model);
  return status;
}
