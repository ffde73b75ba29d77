/* Tests for plot: output formats by extension, finding gnuplot and scripts, rendering the shipped
 * scaling and buckets scripts from inline data (PNG signature and size, SVG well-formed), atomic
 * output when gnuplot fails, kept data files that redraw the same plot.  The rendering cases skip
 * when gnuplot is not installed (make check needs no optional tool). */
#include "plot.h"
#include "run-ddpsim.h"

#include <glib/gstdio.h>
#include <string.h>

static const char scaling_data[] =
  "# gpus nodes iteration_ms scaling_efficiency exposed_comm_ms\n"
  "8 1 100.5 0.97 1.2\n"
  "64 8 104.0 0.94 4.5\n"
  "512 64 110.2 0.88 10.25\n"
  "4096 512 121.0 0.80 21.0\n";

/* buckets.gp's data: one block per first-bucket size (here 1 MiB and 4 MiB) */
static const char buckets_data[] =
  "# first_bucket_mb bucket_cap_mb iteration_ms\n"
  "1 1 130.5\n1 2 120.25\n1 5 112\n1 10 108.5\n1 25 105.0\n1 50 106.5\n1 100 111\n\n\n"
  "4 1 131.5\n4 2 121.25\n4 5 113\n4 10 109.5\n4 25 106.0\n4 50 107.5\n4 100 112\n";

static gboolean
have_gnuplot(void)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *gnuplot = ddp_plot_find_gnuplot(&error);
  if (!gnuplot) {
    g_test_skip("gnuplot is not installed");
    return FALSE;
  }
  return TRUE;
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

/* Width and height from a PNG's IHDR chunk (PNG spec §11.2.2: signature, then IHDR first). */
static void
assert_png(const char *path, guint32 min_width, guint32 min_height)
{
  g_autofree char *data = NULL;
  gsize len = 0;
  g_assert_true(g_file_get_contents(path, &data, &len, NULL));
  g_assert_cmpuint(len, >, 33);
  static const unsigned char signature[8] = { 0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n' };
  g_assert_cmpmem(data, 8, signature, 8);
  g_assert_cmpmem(data + 12, 4, "IHDR", 4);
  const unsigned char *p = (const unsigned char *)data + 16;
  guint32 width = (guint32)p[0] << 24 | (guint32)p[1] << 16 | (guint32)p[2] << 8 | p[3];
  guint32 height = (guint32)p[4] << 24 | (guint32)p[5] << 16 | (guint32)p[6] << 8 | p[7];
  g_assert_cmpuint(width, >=, min_width);
  g_assert_cmpuint(height, >=, min_height);
}

/* Counts <polygon> elements: enough to tell the SVG parsed and holds drawn data. */
static void
count_polygon(GMarkupParseContext *context, const char *element, const char **names, const char **values,
              gpointer data, GError **error)
{
  if (strcmp(element, "polygon") == 0)
    (*(guint *)data)++;
}

static guint
parse_svg(const char *path)
{
  g_autofree char *text = NULL;
  g_assert_true(g_file_get_contents(path, &text, NULL, NULL));
  guint polygons = 0;
  GMarkupParser parser = { count_polygon, NULL, NULL, NULL, NULL };
  g_autoptr(GMarkupParseContext) context = g_markup_parse_context_new(&parser, 0, &polygons, NULL);
  g_autoptr(GError) error = NULL;
  g_assert_true(g_markup_parse_context_parse(context, text, -1, &error) &&
                g_markup_parse_context_end_parse(context, &error));
  g_assert_no_error(error);
  return polygons;
}

static void
test_format(void)
{
  static const struct {
    const char *path;
    gboolean ok;
    DdpPlotFormat format;
  } cases[] = {
    { "timeline.png", TRUE, DDP_PLOT_PNG },
    { "out/Timeline.SVG", TRUE, DDP_PLOT_SVG },
    { "a.b.svg", TRUE, DDP_PLOT_SVG },
    { "timeline.pdf", FALSE, 0 },
    { "png", FALSE, 0 },
    { "dir.png/plot", FALSE, 0 },
    { "dir/.png", FALSE, 0 },
    { "timeline.png.tmp", FALSE, 0 },
  };
  for (gsize i = 0; i < G_N_ELEMENTS(cases); i++) {
    g_autoptr(GError) error = NULL;
    DdpPlotFormat format = 99;
    gboolean ok = ddp_plot_format_from_path(cases[i].path, "--plot", &format, &error);
    g_assert_cmpint(ok, ==, cases[i].ok);
    if (ok) {
      g_assert_no_error(error);
      g_assert_cmpint(format, ==, cases[i].format);
    } else {
      g_assert_error(error, DDP_PLOT_ERROR, DDP_PLOT_ERROR_FORMAT);
      g_assert_true(ddp_plot_error_is_input(error));
      g_assert_nonnull(strstr(error->message, "--plot"));
      g_assert_nonnull(strstr(error->message, cases[i].path));
    }
  }
}

/* gnuplot missing: the one clear error, input class (exit 2), and no output file. */
static void
test_no_gnuplot(void)
{
  g_autofree char *dir = g_dir_make_tmp("ddpsim-plot-XXXXXX", NULL);
  g_autofree char *out = g_build_filename(dir, "scaling.png", NULL);
  g_setenv("DDPSIM_GNUPLOT", "/nonexistent/gnuplot", TRUE);
  g_autoptr(GError) error = NULL;
  g_assert_null(ddp_plot_find_gnuplot(&error));
  g_assert_error(error, DDP_PLOT_ERROR, DDP_PLOT_ERROR_NO_GNUPLOT);
  g_assert_true(ddp_plot_error_is_input(error));
  g_assert_nonnull(strstr(error->message, "/nonexistent/gnuplot"));
  g_assert_null(strchr(error->message, '\n'));
  g_clear_error(&error);

  g_autoptr(DdpPlot) plot = ddp_plot_new("scaling");
  ddp_plot_set_string(plot, "plot_title", "t");
  ddp_plot_set_data(plot, "data", scaling_data);
  g_assert_false(ddp_plot_render(plot, "-o", out, NULL, &error));
  g_assert_error(error, DDP_PLOT_ERROR, DDP_PLOT_ERROR_NO_GNUPLOT);
  g_assert_cmpuint(count_entries(dir), ==, 0);
  g_unsetenv("DDPSIM_GNUPLOT");
  run_remove_tree(dir);
}

static void
test_no_script(void)
{
  g_autoptr(GError) error = NULL;
  g_assert_null(ddp_plot_find_script("no-such-plot", &error));
  g_assert_error(error, DDP_PLOT_ERROR, DDP_PLOT_ERROR_NO_SCRIPT);
  g_assert_false(ddp_plot_error_is_input(error));
  g_autofree char *found = ddp_plot_find_script("timeline", NULL);
  g_assert_nonnull(found);
  g_assert_true(g_str_has_suffix(found, "/plots/timeline.gp"));
}

static void
test_scaling_png(void)
{
  if (!have_gnuplot())
    return;
  g_autofree char *dir = g_dir_make_tmp("ddpsim-plot-XXXXXX", NULL);
  g_autofree char *out = g_build_filename(dir, "scaling.png", NULL);
  g_autoptr(DdpPlot) plot = ddp_plot_new("scaling");
  /* quotes, a backslash and a newline must reach gnuplot intact, not break params.gp */
  ddp_plot_set_string(plot, "plot_title", "resnet50 on \"dgx-a100\" \\ it's\nweak scaling");
  ddp_plot_set_data(plot, "data", scaling_data);
  g_autoptr(GError) error = NULL;
  g_assert_true(ddp_plot_render(plot, "-o", out, NULL, &error));
  g_assert_no_error(error);
  assert_png(out, 640, 400);
  /* only the output: no temporary file beside it */
  g_assert_cmpuint(count_entries(dir), ==, 1);
  run_remove_tree(dir);
}

static void
test_buckets_svg(void)
{
  if (!have_gnuplot())
    return;
  g_autofree char *dir = g_dir_make_tmp("ddpsim-plot-XXXXXX", NULL);
  g_autofree char *out = g_build_filename(dir, "buckets.svg", NULL);
  for (int with_best = 0; with_best < 2; with_best++) {
    g_autoptr(DdpPlot) plot = ddp_plot_new("buckets");
    ddp_plot_set_string(plot, "plot_title", "bucket_cap_mb sweep");
    ddp_plot_set_data(plot, "data", buckets_data);
    ddp_plot_set_string(plot, "first_bucket_mbs", "1 4");
    if (with_best)
      ddp_plot_set_number(plot, "best_bucket_cap_mb", 25);
    g_autoptr(GError) error = NULL;
    g_assert_true(ddp_plot_render(plot, "-o", out, NULL, &error));
    g_assert_no_error(error);
    g_autofree char *text = NULL;
    g_assert_true(g_file_get_contents(out, &text, NULL, NULL));
    g_assert_nonnull(strstr(text, "<svg"));
    parse_svg(out);
    /* the best cap is named on the plot, one line per first-bucket size, the default marked */
    g_assert_nonnull(strstr(text, "fastest: 25 MiB, 105.000 ms"));
    g_assert_nonnull(strstr(text, "first bucket 4 MiB"));
    g_assert_nonnull(strstr(text, "PyTorch default 25"));
    /* tick labels written with %g, not "25.000000" */
    g_assert_null(strstr(text, ".000000"));
  }
  /* the fastest point at the right end: its label grows leftwards (anchored at its end), so it
   * is not clipped at the plot's right edge */
  g_autoptr(DdpPlot) right = ddp_plot_new("buckets");
  ddp_plot_set_string(right, "plot_title", "bucket_cap_mb sweep");
  ddp_plot_set_data(right, "data", "# first_bucket_mb bucket_cap_mb iteration_ms\n1 1 130\n1 25 120\n1 100 101.5\n");
  ddp_plot_set_number(right, "best_bucket_cap_mb", 100);
  g_autoptr(GError) error = NULL;
  g_assert_true(ddp_plot_render(right, "-o", out, NULL, &error));
  g_autofree char *text = NULL;
  g_assert_true(g_file_get_contents(out, &text, NULL, NULL));
  const char *label = strstr(text, "fastest: 100 MiB");
  g_assert_nonnull(label);
  g_autofree char *before = g_strndup(text, (gsize)(label - text));
  const char *anchor = g_strrstr(before, "text-anchor=");
  g_assert_nonnull(anchor);
  g_assert_true(g_str_has_prefix(anchor, "text-anchor=\"end\""));
  run_remove_tree(dir);
}

/* A script that has begun writing its output when it fails: the old file stays as it was and no
 * temporary file is left. */
static void
test_failure_is_atomic(void)
{
  if (!have_gnuplot())
    return;
  g_autofree char *datadir = g_dir_make_tmp("ddpsim-plot-XXXXXX", NULL);
  g_autofree char *plots = g_build_filename(datadir, "plots", NULL);
  g_assert_cmpint(g_mkdir(plots, 0777), ==, 0);
  g_autofree char *script = g_build_filename(plots, "broken.gp", NULL);
  g_assert_true(g_file_set_contents(script,
                                    "set terminal svg\nset output output_file\nplot x\nplot no_such_variable\n", -1,
                                    NULL));
  g_autofree char *out = g_build_filename(datadir, "old.svg", NULL);
  g_assert_true(g_file_set_contents(out, "previous contents", -1, NULL));
  g_setenv("DDPSIM_DATADIR", datadir, TRUE);

  g_autoptr(DdpPlot) plot = ddp_plot_new("broken");
  g_autoptr(GError) error = NULL;
  g_assert_false(ddp_plot_render(plot, "-o", out, NULL, &error));
  g_assert_error(error, DDP_PLOT_ERROR, DDP_PLOT_ERROR_GNUPLOT);
  g_assert_false(ddp_plot_error_is_input(error));
  g_assert_nonnull(strstr(error->message, "line 4"));   /* gnuplot's own words, one line */
  g_assert_null(strchr(error->message, '\n'));
  g_autofree char *text = NULL;
  g_assert_true(g_file_get_contents(out, &text, NULL, NULL));
  g_assert_cmpstr(text, ==, "previous contents");
  g_assert_cmpuint(count_entries(datadir), ==, 2);   /* plots/ and old.svg */

  g_setenv("DDPSIM_DATADIR", DDP_SRCDIR, TRUE);
  run_remove_tree(datadir);
}

/* --plot-data: the data files and params.gp stay, and running gnuplot on them redraws the plot —
 * the restyling path users take. */
static void
test_keep_dir(void)
{
  if (!have_gnuplot())
    return;
  g_autofree char *dir = g_dir_make_tmp("ddpsim-plot-XXXXXX", NULL);
  g_autofree char *keep = g_build_filename(dir, "data", NULL);
  g_autofree char *out = g_build_filename(dir, "buckets.png", NULL);
  g_autoptr(DdpPlot) plot = ddp_plot_new("buckets");
  ddp_plot_set_string(plot, "plot_title", "kept");
  ddp_plot_set_data(plot, "data", buckets_data);
  ddp_plot_set_number(plot, "best_bucket_cap_mb", 25);
  g_autoptr(GError) error = NULL;
  g_assert_true(ddp_plot_render(plot, "-o", out, keep, &error));
  g_assert_no_error(error);
  assert_png(out, 640, 400);
  /* gnuplot drew in the data directory; nothing else is left there or beside the output */
  g_assert_cmpuint(count_entries(keep), ==, 2);   /* data.dat, params.gp */
  g_assert_cmpuint(count_entries(dir), ==, 2);    /* data/, buckets.png */
  /* the directory is made one level deep, as mkdir: a missing parent is bad input, and nothing is made */
  g_autofree char *deep = g_build_filename(dir, "no", "such", NULL);
  g_assert_false(ddp_plot_render(plot, "-o", out, deep, &error));
  g_assert_error(error, DDP_PLOT_ERROR, DDP_PLOT_ERROR_PATH);
  g_assert_true(ddp_plot_error_is_input(error));
  g_assert_true(g_str_has_prefix(error->message, "--plot-data: "));
  g_clear_error(&error);
  g_assert_cmpuint(count_entries(dir), ==, 2);

  g_autofree char *params = g_build_filename(keep, "params.gp", NULL);
  g_autofree char *data = g_build_filename(keep, "data.dat", NULL);
  g_autofree char *kept = NULL;
  g_assert_true(g_file_get_contents(data, &kept, NULL, NULL));
  g_assert_cmpstr(kept, ==, buckets_data);
  g_autofree char *text = NULL;
  g_assert_true(g_file_get_contents(params, &text, NULL, NULL));
  g_assert_nonnull(strstr(text, "best_bucket_cap_mb = 25.0\n"));
  g_assert_nonnull(strstr(text, "plot_title = \"kept\"\n"));

  g_autofree char *gnuplot = ddp_plot_find_gnuplot(NULL);
  g_autofree char *script = ddp_plot_find_script("buckets", NULL);
  g_autofree char *again = g_build_filename(dir, "again.svg", NULL);
  g_autofree char *preset = g_strdup_printf("output_file = \"%s\"", again);
  const char *argv[] = { gnuplot, "-e", preset, params, script, NULL };
  int status = 0;
  g_assert_true(g_spawn_sync(NULL, (char **)argv, NULL, G_SPAWN_STDOUT_TO_DEV_NULL | G_SPAWN_STDERR_TO_DEV_NULL, NULL,
                             NULL, NULL, NULL, &status, NULL));
  g_assert_true(g_spawn_check_wait_status(status, NULL));
  parse_svg(again);
  run_remove_tree(dir);
}

/* params.gp text: numbers stay floating, arrays start at 1, the empty array is representable. */
static void
test_params(void)
{
  if (!have_gnuplot())
    return;
  g_autofree char *dir = g_dir_make_tmp("ddpsim-plot-XXXXXX", NULL);
  g_autofree char *keep = g_build_filename(dir, "data", NULL);
  g_autofree char *out = g_build_filename(dir, "s.svg", NULL);
  g_autoptr(DdpPlot) plot = ddp_plot_new("scaling");
  ddp_plot_set_string(plot, "plot_title", "first");
  ddp_plot_set_string(plot, "plot_title", "second");   /* replaces */
  ddp_plot_set_number(plot, "three", 3);
  ddp_plot_set_number(plot, "half", 0.5);
  const char *lanes[] = { "rank 0", "NCCL\nstream" };
  ddp_plot_set_strings(plot, "lanes", lanes, 2);
  ddp_plot_set_strings(plot, "none", NULL, 0);
  ddp_plot_set_data(plot, "data", scaling_data);
  g_autoptr(GError) error = NULL;
  g_assert_true(ddp_plot_render(plot, "-o", out, keep, &error));
  g_assert_no_error(error);
  g_autofree char *params = g_build_filename(keep, "params.gp", NULL);
  g_autofree char *text = NULL;
  g_assert_true(g_file_get_contents(params, &text, NULL, NULL));
  g_assert_null(strstr(text, "first"));
  g_assert_nonnull(strstr(text, "plot_title = \"second\"\n"));
  g_assert_nonnull(strstr(text, "three = 3.0\n"));
  g_assert_nonnull(strstr(text, "half = 0.5\n"));
  g_assert_nonnull(strstr(text, "array lanes[2]\nlanes[1] = \"rank 0\"\nlanes[2] = \"NCCL\\nstream\"\n"));
  g_assert_nonnull(strstr(text, "array none[1]\nnone[1] = \"\"\n"));
  run_remove_tree(dir);
}

int
main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_setenv("DDPSIM_DATADIR", DDP_SRCDIR, TRUE);
  g_unsetenv("DDPSIM_GNUPLOT");
  g_test_add_func("/plot/format", test_format);
  g_test_add_func("/plot/no-gnuplot", test_no_gnuplot);
  g_test_add_func("/plot/no-script", test_no_script);
  g_test_add_func("/plot/scaling-png", test_scaling_png);
  g_test_add_func("/plot/buckets-svg", test_buckets_svg);
  g_test_add_func("/plot/failure-is-atomic", test_failure_is_atomic);
  g_test_add_func("/plot/keep-dir", test_keep_dir);
  g_test_add_func("/plot/params", test_params);
  return g_test_run();
}
