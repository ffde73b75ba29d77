/* Tests for the sweep grid (src/sweep.c) and `ddpsim sweep` end to end: the grid's order and
 * slices derived by hand, value checks, grid files, the row formats byte for byte; then the real
 * binary ($DDPSIM): --jobs 2 and --jobs 0 write the same bytes as --jobs 1, a row equals `predict`
 * for the same point, bad input is one line and exit 2 with no output file; and, when ddpsim was
 * built with MPI, `mpirun -n 2` and `-n 3` write the same bytes as the serial run.
 * (tests/test-sweeps.c is another program: the scale and tune verbs.) */
#include <glib.h>
#include <glib/gstdio.h>
#include <json-glib/json-glib.h>
#include <math.h>
#include <string.h>

#include "ranges.h"
#include "run-ddpsim.h"
#include "sweep.h"

static char *tmpdir;

/* ---- grid ------------------------------------------------------------------------------- */

static DdpSweepGrid *
grid_of(const char *models, const char *clusters, const char *gpus, const char *caps, const char *seeds)
{
  DdpSweepGrid *grid = ddp_sweep_grid_new();
  const char *lists[DDP_SWEEP_N_AXES] = { models, clusters, gpus, caps, seeds };
  for (int a = 0; a < DDP_SWEEP_N_AXES; a++) {
    g_autoptr(GError) error = NULL;
    if (lists[a])
      g_assert_true(ddp_sweep_grid_set_axis(grid, a, lists[a], "test", &error));
    g_assert_no_error(error);
  }
  return grid;
}

static void
assert_point(const DdpSweepPoint *p, const char *model, const char *cluster, const char *gpus, const char *cap,
             const char *seed)
{
  g_assert_cmpstr(p->values[DDP_SWEEP_AXIS_MODEL], ==, model);
  g_assert_cmpstr(p->values[DDP_SWEEP_AXIS_CLUSTER], ==, cluster);
  g_assert_cmpstr(p->values[DDP_SWEEP_AXIS_GPUS], ==, gpus);
  g_assert_cmpstr(p->values[DDP_SWEEP_AXIS_BUCKET_CAP], ==, cap);
  g_assert_cmpstr(p->values[DDP_SWEEP_AXIS_SEED], ==, seed);
}

/* 2 models × (cluster unswept) × 3 GPU counts × 2 caps × 3 seeds = 36 points.  Seed varies fastest,
 * model slowest: index = (((m·1 + c)·3 + g)·2 + b)·3 + s.  So point 1 is seed 2; point 3 is cap 25
 * (b = 1: 1·3); point 6 is 64 GPUs (g = 1: 1·2·3); point 18 is model b (m = 1: 1·3·2·3); point 35 is
 * the last of everything; point 29 = 18 + 6·1 + 3·1 + 2 = (b, 64, 25, 3). */
static void
test_grid_order(void)
{
  g_autoptr(DdpSweepGrid) grid = grid_of("a,b", NULL, "8,64,512", "10,25", "1,2,3");
  guint64 n = 0;
  g_assert_true(ddp_sweep_grid_count(grid, &n, NULL));
  g_assert_cmpuint(n, ==, 36);
  g_assert_cmpuint(ddp_sweep_grid_axis_len(grid, DDP_SWEEP_AXIS_CLUSTER), ==, 1);
  DdpSweepPoint p;
  struct {
    guint64 index;
    const char *model, *gpus, *cap, *seed;
  } cases[] = {
    { 0, "a", "8", "10", "1" },   { 1, "a", "8", "10", "2" },     { 3, "a", "8", "25", "1" },
    { 6, "a", "64", "10", "1" },  { 18, "b", "8", "10", "1" },    { 29, "b", "64", "25", "3" },
    { 35, "b", "512", "25", "3" },
  };
  for (gsize i = 0; i < G_N_ELEMENTS(cases); i++) {
    ddp_sweep_grid_point(grid, cases[i].index, &p);
    g_assert_cmpuint(p.index, ==, cases[i].index);
    assert_point(&p, cases[i].model, NULL, cases[i].gpus, cases[i].cap, cases[i].seed);
  }
  /* every index its own tuple: the formula above, inverted, for all 36 */
  const char *gpus[] = { "8", "64", "512" }, *caps[] = { "10", "25" }, *seeds[] = { "1", "2", "3" };
  for (guint64 i = 0; i < n; i++) {
    ddp_sweep_grid_point(grid, i, &p);
    assert_point(&p, i < 18 ? "a" : "b", NULL, gpus[i / 6 % 3], caps[i / 3 % 2], seeds[i % 3]);
  }
}

static void
test_grid_unswept(void)
{
  g_autoptr(DdpSweepGrid) grid = ddp_sweep_grid_new();
  guint64 n = 0;
  g_assert_true(ddp_sweep_grid_count(grid, &n, NULL));
  g_assert_cmpuint(n, ==, 1);
  DdpSweepPoint p;
  ddp_sweep_grid_point(grid, 0, &p);
  assert_point(&p, NULL, NULL, NULL, NULL, NULL);
}

/* Values are trimmed and written the one way they are compared: "010" GPUs is 10, "25.0" MiB is 25. */
static void
test_grid_normalise(void)
{
  g_autoptr(DdpSweepGrid) grid = grid_of(" resnet50 , vgg16", NULL, "010, 16", "25.0,0.5, 1e1", "0,18446744073709551615");
  g_assert_cmpstr(ddp_sweep_grid_axis_value(grid, DDP_SWEEP_AXIS_MODEL, 0), ==, "resnet50");
  g_assert_cmpstr(ddp_sweep_grid_axis_value(grid, DDP_SWEEP_AXIS_MODEL, 1), ==, "vgg16");
  g_assert_cmpstr(ddp_sweep_grid_axis_value(grid, DDP_SWEEP_AXIS_GPUS, 0), ==, "10");
  g_assert_cmpstr(ddp_sweep_grid_axis_value(grid, DDP_SWEEP_AXIS_BUCKET_CAP, 0), ==, "25");
  g_assert_cmpstr(ddp_sweep_grid_axis_value(grid, DDP_SWEEP_AXIS_BUCKET_CAP, 1), ==, "0.5");
  g_assert_cmpstr(ddp_sweep_grid_axis_value(grid, DDP_SWEEP_AXIS_BUCKET_CAP, 2), ==, "10");
  g_assert_cmpstr(ddp_sweep_grid_axis_value(grid, DDP_SWEEP_AXIS_SEED, 1), ==, "18446744073709551615");
}

/* "A,B,...,C" continues A, B as `scale --gpus` does: 16 is a multiple of 8, so ×2 (8 16 32 64 128);
 * below a C off the progression it stops at the last term under C (… 64, 100); 12 is not a multiple
 * of 8, so +4 (8 12 16 20 24); after the ellipsis the list goes on. */
static void
test_grid_progression(void)
{
  struct {
    const char *list, *expect;
  } cases[] = {
    { "8,16,...,128", "8 16 32 64 128" },
    { "8,16,...,100", "8 16 32 64 100" },
    { "8,12,...,24", "8 12 16 20 24" },
    { "1,2,…,8,100", "1 2 4 8 100" },
    { "8,16,...,32,512", "8 16 32 512" },
  };
  for (gsize i = 0; i < G_N_ELEMENTS(cases); i++) {
    g_autoptr(DdpSweepGrid) grid = grid_of(NULL, NULL, cases[i].list, NULL, NULL);
    GString *got = g_string_new(NULL);
    for (guint k = 0; k < ddp_sweep_grid_axis_len(grid, DDP_SWEEP_AXIS_GPUS); k++)
      g_string_append_printf(got, "%s%s", k ? " " : "", ddp_sweep_grid_axis_value(grid, DDP_SWEEP_AXIS_GPUS, k));
    g_assert_cmpstr(got->str, ==, cases[i].expect);
    g_string_free(got, TRUE);
  }
  const char *bad[][2] = {
    { "8,...,64", "needs two GPU counts before it and one after it" },
    { "8,16,...", "needs two GPU counts before it" },
    { "16,8,...,64", "must increase (16, 8, ..., 64)" },
    { "8,16,...,16", "must increase" },
    { "8,16,...,64,32", "\"32\" is listed twice" },
  };
  for (gsize i = 0; i < G_N_ELEMENTS(bad); i++) {
    g_autoptr(DdpSweepGrid) grid = ddp_sweep_grid_new();
    g_autoptr(GError) error = NULL;
    g_assert_false(ddp_sweep_grid_set_axis(grid, DDP_SWEEP_AXIS_GPUS, bad[i][0], "--gpus", &error));
    g_assert_error(error, DDP_SWEEP_ERROR, DDP_SWEEP_ERROR_INVALID);
    if (!strstr(error->message, bad[i][1]))
      g_error("\"%s\": \"%s\" lacks \"%s\"", bad[i][0], error->message, bad[i][1]);
  }
  /* the count after "..." is a GPU count like any other */
  g_autoptr(DdpSweepGrid) bad_end = ddp_sweep_grid_new();
  g_autoptr(GError) range_error = NULL;
  g_assert_false(ddp_sweep_grid_set_axis(bad_end, DDP_SWEEP_AXIS_GPUS, "8,16,...,x", "--gpus", &range_error));
  g_assert_error(range_error, DDP_RANGE_ERROR, DDP_RANGE_ERROR_RANGE);
  g_assert_cmpstr(range_error->message, ==, "--gpus: \"x\" must be a whole number from 1 to 16777216");
  /* seeds take no ellipsis: a seed list is written out */
  g_autoptr(DdpSweepGrid) grid = ddp_sweep_grid_new();
  g_assert_false(ddp_sweep_grid_set_axis(grid, DDP_SWEEP_AXIS_SEED, "1,2,...,5", "--seed", NULL));
}

static void
test_grid_bad_values(void)
{
  /* numbers out of their range are DDP_RANGE_ERROR (ranges.h), the list's own faults DDP_SWEEP_ERROR */
  const GQuark range = DDP_RANGE_ERROR, sweep = DDP_SWEEP_ERROR;
  struct {
    DdpSweepAxis axis;
    const char *list, *expect;
    GQuark domain;
  } cases[] = {
    { DDP_SWEEP_AXIS_GPUS, "0", "--gpus: \"0\" must be a whole number from 1 to 16777216", range },
    { DDP_SWEEP_AXIS_GPUS, "8,x", "--gpus: \"x\" must be a whole number", range },
    { DDP_SWEEP_AXIS_GPUS, "8,,16", "--gpus: empty value in the list", sweep },
    { DDP_SWEEP_AXIS_GPUS, "8,16,008", "--gpus: \"8\" is listed twice", sweep },
    { DDP_SWEEP_AXIS_GPUS, "16777217", "must be a whole number from 1 to 16777216", range },
    { DDP_SWEEP_AXIS_GPUS, "0x10", "--gpus: \"0x10\" must be a whole number", range },
    { DDP_SWEEP_AXIS_BUCKET_CAP, "0", "--bucket-cap-mb: \"0\" must be a number from 1e-06 to 1e+09", range },
    { DDP_SWEEP_AXIS_BUCKET_CAP, "-1", "\"-1\" must be a number from 1e-06", range },
    { DDP_SWEEP_AXIS_BUCKET_CAP, "nan", "\"nan\" must be a number", range },
    { DDP_SWEEP_AXIS_BUCKET_CAP, "2e9", "\"2e9\" must be a number", range },
    { DDP_SWEEP_AXIS_BUCKET_CAP, "0x10", "\"0x10\" must be a number", range },
    { DDP_SWEEP_AXIS_BUCKET_CAP, "25,25.0", "\"25\" is listed twice", sweep },
    { DDP_SWEEP_AXIS_SEED, "-1", "--seed: \"-1\" must be a whole number from 0 to 18446744073709551615", range },
    { DDP_SWEEP_AXIS_SEED, "18446744073709551616", "--seed: \"18446744073709551616\" must be a whole number", range },
    { DDP_SWEEP_AXIS_MODEL, "resnet50,", "--model: empty value", sweep },
    { DDP_SWEEP_AXIS_CLUSTER, "", "--cluster: empty list", sweep },
  };
  for (gsize i = 0; i < G_N_ELEMENTS(cases); i++) {
    g_autoptr(DdpSweepGrid) grid = grid_of(NULL, NULL, "8", "25", NULL);
    g_autoptr(GError) error = NULL;
    g_autofree char *where = g_strdup_printf("--%s", ddp_sweep_axis_flag(cases[i].axis));
    g_assert_false(ddp_sweep_grid_set_axis(grid, cases[i].axis, cases[i].list, where, &error));
    if (cases[i].domain == range)
      g_assert_error(error, DDP_RANGE_ERROR, DDP_RANGE_ERROR_RANGE);
    else
      g_assert_error(error, DDP_SWEEP_ERROR, DDP_SWEEP_ERROR_INVALID);
    if (!strstr(error->message, cases[i].expect))
      g_error("\"%s\": message \"%s\" lacks \"%s\"", cases[i].list, error->message, cases[i].expect);
    /* the axis kept what it had */
    g_assert_cmpuint(ddp_sweep_grid_axis_len(grid, cases[i].axis), ==, 1);
    if (cases[i].axis == DDP_SWEEP_AXIS_GPUS)
      g_assert_cmpstr(ddp_sweep_grid_axis_value(grid, DDP_SWEEP_AXIS_GPUS, 0), ==, "8");
  }
}

static char *
numbers(guint first, guint n)
{
  GString *out = g_string_new(NULL);
  for (guint i = 0; i < n; i++)
    g_string_append_printf(out, "%s%u", i ? "," : "", first + i);
  return g_string_free(out, FALSE);
}

/* 1 000 GPU counts × 100 seeds is exactly the cap (100 000 points); a second model doubles it. */
static void
test_grid_cap(void)
{
  g_autofree char *gpus = numbers(1, 1000);
  g_autofree char *seeds = numbers(0, 100);
  g_autoptr(DdpSweepGrid) grid = grid_of(NULL, NULL, gpus, NULL, seeds);
  guint64 n = 0;
  g_assert_true(ddp_sweep_grid_count(grid, &n, NULL));
  g_assert_cmpuint(n, ==, DDP_SWEEP_MAX_POINTS);
  g_assert_true(ddp_sweep_grid_set_axis(grid, DDP_SWEEP_AXIS_MODEL, "a,b", "--model", NULL));
  g_autoptr(GError) error = NULL;
  g_assert_false(ddp_sweep_grid_count(grid, &n, &error));
  g_assert_error(error, DDP_SWEEP_ERROR, DDP_SWEEP_ERROR_TOO_LARGE);
  g_assert_nonnull(strstr(error->message, "more than 100000 points"));
}

/* 10 points on 3 ranks: 10 = 3·3 + 1, so rank 0 takes one more: [0,4) [4,7) [7,10).  2 points on 3
 * ranks: [0,1) [1,2) and an empty [2,2).  And for every n ≤ 40 and size ≤ 7 the slices tile. */
static void
test_slice(void)
{
  struct {
    guint64 n;
    guint rank, size;
    guint64 first, count;
  } cases[] = {
    { 10, 0, 3, 0, 4 }, { 10, 1, 3, 4, 3 }, { 10, 2, 3, 7, 3 }, { 2, 0, 3, 0, 1 }, { 2, 1, 3, 1, 1 },
    { 2, 2, 3, 2, 0 },  { 0, 0, 1, 0, 0 },  { 7, 0, 1, 0, 7 },  { 36, 1, 2, 18, 18 },
  };
  for (gsize i = 0; i < G_N_ELEMENTS(cases); i++) {
    guint64 first = 99, count = 99;
    ddp_sweep_slice(cases[i].n, cases[i].rank, cases[i].size, &first, &count);
    g_assert_cmpuint(first, ==, cases[i].first);
    g_assert_cmpuint(count, ==, cases[i].count);
  }
  for (guint64 n = 0; n <= 40; n++)
    for (guint size = 1; size <= 7; size++) {
      guint64 next = 0;
      for (guint rank = 0; rank < size; rank++) {
        guint64 first, count;
        ddp_sweep_slice(n, rank, size, &first, &count);
        g_assert_cmpuint(first, ==, next);
        g_assert_cmpuint(count, >=, n / size);
        g_assert_cmpuint(count, <=, n / size + 1);
        next = first + count;
      }
      g_assert_cmpuint(next, ==, n);
    }
}

static char *
write_file(const char *name, const char *text)
{
  char *path = g_build_filename(tmpdir, name, NULL);
  g_assert_true(g_file_set_contents(path, text, -1, NULL));
  return path;
}

static void
test_grid_file(void)
{
  g_autofree char *good = write_file("grid.ini", "# a grid\n[sweep]\nmodel = resnet50, vgg16\ngpus = 8,16\nseeds = 3\n");
  g_autoptr(DdpSweepGrid) grid = ddp_sweep_grid_new();
  g_autoptr(GError) error = NULL;
  g_assert_true(ddp_sweep_grid_load_file(grid, good, &error));
  g_assert_no_error(error);
  guint64 n = 0;
  g_assert_true(ddp_sweep_grid_count(grid, &n, NULL));
  g_assert_cmpuint(n, ==, 4);   /* 2 models × 2 GPU counts × 1 seed */
  g_assert_cmpstr(ddp_sweep_grid_axis_value(grid, DDP_SWEEP_AXIS_SEED, 0), ==, "3");
  g_assert_null(ddp_sweep_grid_axis_value(grid, DDP_SWEEP_AXIS_CLUSTER, 0));

  struct {
    const char *text, *expect;
  } bad[] = {
    { "[sweep]\nmodel = a\n\ngpus = 8,x\n", "bad.ini:4: sweep.gpus: \"x\" must be a whole number from 1 to 16777216" },
    { "[sweep]\ngpu = 8\n", "bad.ini:2: sweep.gpu" },
    { "[sweep]\nmodel = a\n[training]\nbatch = 4\n", "bad.ini:3: [training]: unknown group" },
    { "# nothing\n", "[sweep]: required group is missing" },
    { "[sweep]\nbucket_cap_mb = 25,25\n", "bad.ini:2: sweep.bucket_cap_mb: \"25\" is listed twice" },
  };
  for (gsize i = 0; i < G_N_ELEMENTS(bad); i++) {
    g_autofree char *path = write_file("bad.ini", bad[i].text);
    g_autoptr(DdpSweepGrid) g = ddp_sweep_grid_new();
    g_autoptr(GError) e = NULL;
    g_assert_false(ddp_sweep_grid_load_file(g, path, &e));
    g_assert_nonnull(e);
    if (!strstr(e->message, bad[i].expect))
      g_error("case %" G_GSIZE_FORMAT ": \"%s\" lacks \"%s\"", i, e->message, bad[i].expect);
  }
  g_autoptr(DdpSweepGrid) g = ddp_sweep_grid_new();
  g_autoptr(GError) e = NULL;
  g_autofree char *missing = g_build_filename(tmpdir, "no-such.ini", NULL);
  g_assert_false(ddp_sweep_grid_load_file(g, missing, &e));
  g_assert_nonnull(e);
}

/* ---- rows ------------------------------------------------------------------------------- */

/* Fixed numbers through both formats: "%.6f" (13.0000004 → 13.000000, 5/6 → 0.833333), memory
 * rounded to whole bytes, the cap as "%.12g" (25), names quoted only when CSV needs it. */
static void
test_rows(void)
{
  DdpCliOptions cli = { 0 };
  g_autoptr(GError) error = NULL;
  g_autoptr(DdpScenario) s = ddp_scenario_load(NULL, &cli, TRUE, &error);   /* resnet50 on dgx-a100, 8 GPUs */
  g_assert_no_error(error);
  DdpResult r = { 0 };
  r.gpus = 8;
  r.nodes = 1;
  r.mean_ms = 12.5;
  r.p50_ms = 12.25;
  r.p99_ms = 13.0000004;
  r.compute_ms = 10;
  r.comm_ms = 3;
  r.exposed_comm_ms = 0.5;
  r.overlap = 5.0 / 6.0;
  r.scaling_efficiency = 0.9;
  r.samples_per_s = 20480;
  r.memory.total = 4212490880.4;
  r.memory.fits = TRUE;
  DdpSweepPoint p = { 7, { NULL } };
  g_autofree char *csv = ddp_sweep_row(DDP_SWEEP_CSV, &p, s, &r);
  g_assert_cmpstr(csv, ==, "7,resnet50,dgx-a100,8,1,25,1,12.500000,12.250000,13.000000,10.000000,3.000000,0.500000,"
                           "0.833333,0.900000,20480.000000,4212490880,true,ok\n");
  g_assert_true(g_str_has_prefix(ddp_sweep_header(DDP_SWEEP_CSV), "point,model,cluster,gpus,nodes,bucket_cap_mb,seed,"));
  /* as many header fields as row fields */
  g_auto(GStrv) header = g_strsplit(ddp_sweep_header(DDP_SWEEP_CSV), ",", -1);
  g_auto(GStrv) fields = g_strsplit(csv, ",", -1);
  g_assert_cmpuint(g_strv_length(header), ==, g_strv_length(fields));
  g_assert_cmpstr(ddp_sweep_header(DDP_SWEEP_JSONL), ==, "");

  g_autofree char *json = ddp_sweep_row(DDP_SWEEP_JSONL, &p, s, &r);
  /* JSON lines through jsonout: six decimals, trailing zeros dropped, as every --json document */
  g_assert_cmpstr(json, ==, "{\"point\":7,\"model\":\"resnet50\",\"cluster\":\"dgx-a100\",\"gpus\":8,\"nodes\":1,"
                            "\"bucket_cap_mb\":25,\"seed\":1,\"iteration_ms\":{\"mean\":12.5,\"p50\":12.25,"
                            "\"p99\":13},\"compute_ms\":10,\"comm_ms\":3,\"exposed_comm_ms\":0.5,"
                            "\"overlap\":0.833333,\"scaling_efficiency\":0.9,\"samples_per_s\":20480,"
                            "\"memory\":{\"bytes_per_gpu\":4212490880,\"fits\":true},\"status\":\"ok\"}\n");

  /* a model named a,"b": CSV quotes it and doubles the quote; JSON escapes the quote; a missing
   * baseline (NaN efficiency) is an empty CSV field and a JSON null */
  g_free(s->model->name);
  s->model->name = g_strdup("a,\"b\"");
  r.scaling_efficiency = NAN;
  r.memory.fits = FALSE;
  g_autofree char *quoted = ddp_sweep_row(DDP_SWEEP_CSV, &p, s, &r);
  g_assert_true(g_str_has_prefix(quoted, "7,\"a,\"\"b\"\"\",dgx-a100,8,"));
  g_assert_true(g_str_has_suffix(quoted, ",0.833333,,20480.000000,4212490880,false,out-of-memory\n"));
  g_autofree char *escaped = ddp_sweep_row(DDP_SWEEP_JSONL, &p, s, &r);
  g_assert_nonnull(strstr(escaped, "\"model\":\"a,\\\"b\\\"\""));
  g_assert_nonnull(strstr(escaped, "\"scaling_efficiency\":null"));
  /* a point that does not fit says so in its row, in words, not only as fits false */
  g_assert_true(g_str_has_suffix(escaped, "\"fits\":false},\"status\":\"out-of-memory\"}\n"));
  /* with a price: cost per 1000 samples = 2 · 8 GPUs / 3600 s · 1000 / 20480 samples/s = 2.170139e-4;
   * 1e6 samples take 1e6 / 20480 / 3600 = 0.013563 h and cost 2 · 8 · that = 0.217014 */
  DdpCost cost = { .price_per_gpu_hour = 2, .train_samples = 1e6 };
  g_autofree char *priced = ddp_sweep_row_cost(DDP_SWEEP_CSV, &p, s, &r, &cost);
  g_assert_true(g_str_has_suffix(priced, ",false,out-of-memory,0.000217,0.013563,0.217014\n"));
  g_autofree char *priced_header = ddp_sweep_header_cost(DDP_SWEEP_CSV, TRUE);
  g_auto(GStrv) priced_fields = g_strsplit(priced, ",", -1);
  g_auto(GStrv) priced_names = g_strsplit(priced_header, ",", -1);
  g_assert_cmpuint(g_strv_length(priced_fields), ==, g_strv_length(priced_names) + 1);   /* the quoted name a,"b" holds one comma */
  g_autoptr(JsonParser) parser = json_parser_new();
  g_assert_true(json_parser_load_from_data(parser, escaped, -1, NULL));
  JsonObject *o = json_node_get_object(json_parser_get_root(parser));
  g_assert_cmpstr(json_object_get_string_member(o, "model"), ==, "a,\"b\"");
}

/* ---- the verb, end to end ---------------------------------------------------------------- */

/* 2 models × 2 clusters × 2 GPU counts × 2 caps × 2 seeds = 32 points, per-rank stragglers so
 * that the seed matters. */
#define GRID "--model", "resnet50,vit-b16", "--cluster", "dgx-a100,dgx-h100", "--gpus", "8,16", \
             "--bucket-cap-mb", "10,25", "--seed", "1,2", "--stragglers", "lognormal:0.1", "--iterations", "3"

static char *serial_csv;   /* the --jobs 1 output of GRID, for the other tests to compare with */

static const char *
serial(void)
{
  if (!serial_csv) {
    g_auto(Run) r = { 0 };
    run(&r, "sweep", GRID, NULL);
    run_assert_ok(&r);
    serial_csv = g_steal_pointer(&r.out);
  }
  return serial_csv;
}

/* 33 lines (header + 32), points 0..31 in order; point 5 = ((0·2 + 0)·2 + 1)·4 + 0·2 + 1:
 * resnet50, dgx-a100, 16 GPUs, cap 10, seed 2 — its row carries what `predict` says for those
 * flags, to the printed 6 decimals. */
static void
test_cli_serial(void)
{
  g_auto(GStrv) lines = g_strsplit(serial(), "\n", -1);
  g_assert_cmpuint(g_strv_length(lines), ==, 34);   /* the last is the empty string after '\n' */
  g_assert_cmpstr(lines[0], ==,
                  "point,model,cluster,gpus,nodes,bucket_cap_mb,seed,iteration_ms_mean,iteration_ms_p50,iteration_ms_p99,"
                  "compute_ms,comm_ms,exposed_comm_ms,overlap,scaling_efficiency,samples_per_s,memory_bytes_per_gpu,"
                  "memory_fits,status");
  for (guint i = 0; i < 32; i++) {
    g_autofree char *prefix = g_strdup_printf("%u,", i);
    g_assert_true(g_str_has_prefix(lines[i + 1], prefix));
  }
  g_assert_true(g_str_has_prefix(lines[6], "5,resnet50,dgx-a100,16,2,10,2,"));
  g_assert_true(g_str_has_prefix(lines[32], "31,vit-b16,dgx-h100,16,2,25,2,"));
  g_auto(GStrv) fields = g_strsplit(lines[6], ",", -1);

  g_auto(Run) p = { 0 };
  run(&p, "predict", "--model", "resnet50", "--cluster", "dgx-a100", "--gpus", "16", "--bucket-cap-mb", "10", "--seed",
      "2", "--stragglers", "lognormal:0.1", "--iterations", "3", "--json", NULL);
  run_assert_ok(&p);
  g_autoptr(JsonParser) parser = json_parser_new();
  g_assert_true(json_parser_load_from_data(parser, p.out, -1, NULL));
  JsonObject *o = json_node_get_object(json_parser_get_root(parser));
  JsonObject *it = json_object_get_object_member(o, "iteration_ms");
  g_assert_cmpfloat_with_epsilon(g_ascii_strtod(fields[7], NULL), json_object_get_double_member(it, "mean"), 5e-7);
  g_assert_cmpfloat_with_epsilon(g_ascii_strtod(fields[9], NULL), json_object_get_double_member(it, "p99"), 5e-7);
  g_assert_cmpfloat_with_epsilon(g_ascii_strtod(fields[12], NULL), json_object_get_double_member(o, "exposed_comm_ms"), 5e-7);
  g_assert_cmpfloat_with_epsilon(g_ascii_strtod(fields[14], NULL), json_object_get_double_member(o, "scaling_efficiency"),
                                 5e-7);
  JsonObject *memory = json_object_get_object_member(o, "memory");
  g_assert_cmpint(g_ascii_strtoll(fields[16], NULL, 10), ==, json_object_get_int_member(memory, "bytes_per_gpu"));
  g_assert_cmpstr(fields[17], ==, json_object_get_boolean_member(memory, "fits") ? "true" : "false");
  /* the seed matters with stragglers: points 4 and 5 differ only in it */
  g_auto(GStrv) seed1 = g_strsplit(lines[5], ",", -1);
  g_assert_cmpstr(seed1[6], ==, "1");
  g_assert_cmpstr(seed1[7], !=, fields[7]);
}

/* Threads finish in any order; the rows come out in grid order all the same. */
static void
test_cli_jobs_identical(void)
{
  const char *jobs[] = { "2", "0", "7" };
  for (gsize i = 0; i < G_N_ELEMENTS(jobs); i++) {
    g_auto(Run) r = { 0 };
    run(&r, "sweep", GRID, "--jobs", jobs[i], NULL);
    run_assert_ok(&r);
    g_assert_cmpstr(r.out, ==, serial());
  }
}

/* JSON lines: one object per line, the same numbers as the CSV. */
static void
test_cli_json_lines(void)
{
  g_auto(Run) r = { 0 };
  run(&r, "sweep", GRID, "--json", "--jobs", "2", NULL);
  run_assert_ok(&r);
  g_auto(GStrv) lines = g_strsplit(r.out, "\n", -1);
  g_auto(GStrv) csv = g_strsplit(serial(), "\n", -1);
  g_assert_cmpuint(g_strv_length(lines), ==, 33);
  for (guint i = 0; i < 32; i++) {
    g_autoptr(JsonParser) parser = json_parser_new();
    g_assert_true(json_parser_load_from_data(parser, lines[i], -1, NULL));
    JsonObject *o = json_node_get_object(json_parser_get_root(parser));
    g_assert_cmpint(json_object_get_int_member(o, "point"), ==, i);
    g_auto(GStrv) fields = g_strsplit(csv[i + 1], ",", -1);
    g_assert_cmpstr(json_object_get_string_member(o, "model"), ==, fields[1]);
    g_assert_cmpstr(json_object_get_string_member(o, "cluster"), ==, fields[2]);
    g_assert_cmpint(json_object_get_int_member(o, "gpus"), ==, g_ascii_strtoll(fields[3], NULL, 10));
    JsonObject *it = json_object_get_object_member(o, "iteration_ms");
    g_assert_cmpfloat(json_object_get_double_member(it, "mean"), ==, g_ascii_strtod(fields[7], NULL));
    g_assert_cmpfloat(json_object_get_double_member(o, "samples_per_s"), ==, g_ascii_strtod(fields[15], NULL));
    g_assert_true(json_object_get_boolean_member(json_object_get_object_member(o, "memory"), "fits") ==
                  (strcmp(fields[17], "true") == 0));
    g_assert_null(strchr(lines[i], ' '));   /* one record a line, no spaces (jsonout's one-line form) */
  }
  /* the seed is written exactly up to 2^64 − 1, past what json-glib's signed integers hold */
  g_auto(Run) big = { 0 };
  run(&big, "sweep", "--model", "resnet50", "--gpus", "8", "--iterations", "1", "--seed", "18446744073709551615",
      "--json", NULL);
  run_assert_ok(&big);
  g_assert_nonnull(strstr(big.out, ",\"seed\":18446744073709551615,"));
}

/* A grid file gives the axes, flags override it; -o writes the same bytes as stdout. */
static void
test_cli_grid_file_and_output(void)
{
  g_autofree char *grid = write_file("cli-grid.ini", "[sweep]\nmodel = resnet50,vit-b16\ncluster = dgx-a100,dgx-h100\n"
                                                     "gpus = 64\nbucket_cap_mb = 10,25\nseeds = 1,2\n");
  g_autofree char *out = g_build_filename(tmpdir, "rows.csv", NULL);
  g_auto(Run) r = { 0 };
  run(&r, "sweep", "--grid", grid, "--gpus", "8,16", "--stragglers", "lognormal:0.1", "--iterations", "3", "-o", out,
      NULL);
  run_assert_ok(&r);
  g_assert_cmpstr(r.out, ==, "");
  g_autofree char *written = NULL;
  g_assert_true(g_file_get_contents(out, &written, NULL, NULL));
  g_assert_cmpstr(written, ==, serial());
  g_unlink(out);
}

static void
test_cli_bad_input(void)
{
  g_autofree char *out = g_build_filename(tmpdir, "never.csv", NULL);
  g_autofree char *nowhere = g_build_filename(tmpdir, "no-such-dir", "rows.csv", NULL);
  g_autofree char *many_gpus = numbers(1, 1001);
  g_autofree char *many_seeds = numbers(0, 100);
  struct {
    const char *args[6];
    const char *expect;
  } cases[] = {
    { { "--gpus", "8,12", "-o", out }, "point 1 (gpus 12): --gpus: 12 GPUs do not fill whole nodes" },
    { { "--model", "resnet50,no-such-model", "-o", out }, "point 1 (model no-such-model)" },
    { { "--gpus", "8,x", "-o", out }, "--gpus: \"x\" must be a whole number" },
    { { "--gpus", many_gpus, "--seed", many_seeds, "-o", out }, "more than 100000 points" },
    { { "--jobs", "x", "-o", out }, "--jobs: \"x\" must be a whole number from 0 to 1024" },
    { { "--jobs", "1025", "-o", out }, "--jobs" },
    { { "--json", "--csv", "-o", out }, "--json and --csv" },
    { { "-o", nowhere }, "does not exist" },
    { { "--grid", nowhere, "-o", out }, "no-such-dir" },
    { { "--batch", "0", "-o", out }, "--batch" },
  };
  for (gsize i = 0; i < G_N_ELEMENTS(cases); i++) {
    g_auto(Run) r = { 0 };
    const char *const *a = cases[i].args;
    run(&r, "sweep", "--iterations", "2", a[0], a[1], a[2], a[3], a[4], a[5], NULL);
    run_assert_one_line_error(&r, 2, cases[i].expect);
    g_assert_false(g_file_test(out, G_FILE_TEST_EXISTS));   /* no partial output */
  }
}

/* ---- MPI ------------------------------------------------------------------------------------ */

/* mpirun -n RANKS $DDPSIM sweep GRID [extra]: Open MPI refuses root unless told (CI runs as root),
 * and wants --oversubscribe for more ranks than cores.  Returns stdout; *status, *err. */
static char *
mpi_sweep(const char *ranks, const char *extra, const char *extra_value, int *status, char **err)
{
  const char *binary = g_getenv("DDPSIM");
  g_assert_nonnull(binary);
  /* coreutils' timeout bounds a launcher that cannot start (a hung test helps nobody) */
  g_autofree char *timeout = g_find_program_in_path("timeout");
  g_autoptr(GPtrArray) args = g_ptr_array_new();
  if (timeout) {
    g_ptr_array_add(args, timeout);
    g_ptr_array_add(args, "120");
  }
  const char *rest[] = { DDP_MPIRUN, "-n", ranks, "--oversubscribe", binary, "sweep", GRID, extra, extra_value, NULL };
  for (gsize i = 0; i < G_N_ELEMENTS(rest); i++)
    g_ptr_array_add(args, (char *)rest[i]);
  g_auto(GStrv) envp = g_get_environ();
  envp = g_environ_setenv(envp, "OMPI_ALLOW_RUN_AS_ROOT", "1", TRUE);
  envp = g_environ_setenv(envp, "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1", TRUE);
  /* containers often forbid the cross-memory attach Open MPI's shared-memory transport tries */
  envp = g_environ_setenv(envp, "OMPI_MCA_btl_vader_single_copy_mechanism", "none", TRUE);
  /* under --enable-asan: Open MPI's own allocations at exit are not ours to report */
  envp = g_environ_setenv(envp, "ASAN_OPTIONS", "detect_leaks=0", TRUE);
  char *out = NULL;
  int wait_status = 0;
  g_autoptr(GError) error = NULL;
  g_assert_true(g_spawn_sync(NULL, (char **)args->pdata, envp, G_SPAWN_DEFAULT, NULL, NULL, &out, err, &wait_status,
                             &error));
  g_assert_no_error(error);
  g_autoptr(GError) exit_error = NULL;
  *status = g_spawn_check_wait_status(wait_status, &exit_error) ? 0
            : exit_error->domain == G_SPAWN_EXIT_ERROR ? exit_error->code : 128;
  return out;
}

static gboolean
have_mpi(void)
{
#ifndef DDP_HAVE_MPI
  g_test_skip("ddpsim was built without MPI (configure --without-mpi, or no Open MPI/MPICH found: install "
              "libopenmpi-dev openmpi-bin)");
  return FALSE;
#else
  if (!*DDP_MPIRUN) {
    g_test_skip("no mpirun found by configure");
    return FALSE;
  }
  return TRUE;
#endif
}

/* 32 points on 2 ranks (16 + 16) and on 3 ranks (11 + 11 + 10, two threads each): rank 0 gathers
 * the slices in rank order, which is grid order, so the bytes are the serial run's. */
static void
test_mpi_identical(void)
{
  if (!have_mpi())
    return;
  struct {
    const char *ranks, *extra, *value;
  } cases[] = { { "2", NULL, NULL }, { "3", "--jobs", "2" } };
  for (gsize i = 0; i < G_N_ELEMENTS(cases); i++) {
    int status = -1;
    g_autofree char *err = NULL;
    g_autofree char *out = mpi_sweep(cases[i].ranks, cases[i].extra, cases[i].value, &status, &err);
    if (status != 0)
      g_error("mpirun -n %s exited %d: %s", cases[i].ranks, status, err);
    g_assert_cmpstr(out, ==, serial());
  }
}

/* Bad input under MPI: every rank finds it, rank 0 alone says it, in one line; exit 2. */
static void
test_mpi_bad_input(void)
{
  if (!have_mpi())
    return;
  int status = -1;
  g_autofree char *err = NULL;
  g_autofree char *out = mpi_sweep("2", "--jobs", "x", &status, &err);
  g_assert_cmpint(status, ==, 2);
  g_assert_cmpstr(out, ==, "");
  /* mpirun adds its own banner about the exit code; ddpsim's line is there exactly once */
  const char *line = strstr(err, "ddpsim sweep: --jobs: \"x\"");
  g_assert_nonnull(line);
  g_assert_null(strstr(line + 1, "ddpsim sweep:"));
}

/* Built without MPI yet started as one of several ranks (the launcher's variable says so): every
 * rank would write the whole grid, so ddpsim refuses, exit 2. */
static void
test_mpi_refused_without_mpi(void)
{
#ifdef DDP_HAVE_MPI
  g_test_skip("ddpsim was built with MPI");
#else
  g_auto(Run) r = { 0 };
  run_env(&r, "OMPI_COMM_WORLD_SIZE", "2", "sweep", "--gpus", "8,16", NULL);
  run_assert_one_line_error(&r, 2, "started by mpirun with 2 ranks, but this ddpsim was built without MPI");
#endif
}

/* Every grid file the README and docs/sweep.md name in an example is shipped and loads (the README
 * once named a grid.ini that did not exist); the MPI example says how to run as root. */
static void
test_documented_grids(void)
{
  const char *docs[] = { "README.md", "docs/sweep.md" };
  guint found = 0;
  for (gsize d = 0; d < G_N_ELEMENTS(docs); d++) {
    g_autofree char *path = g_build_filename(DDP_SRCDIR, docs[d], NULL);
    g_autofree char *text = NULL;
    g_assert_true(g_file_get_contents(path, &text, NULL, NULL));
    for (const char *at = strstr(text, "--grid "); at; at = strstr(at + 1, "--grid ")) {
      const char *name = at + strlen("--grid ");
      gsize n = strcspn(name, " `\n");
      if (n == 0 || name[0] == 'F' || name[0] == '<')   /* "--grid FILE" in prose */
        continue;
      g_autofree char *file = g_strndup(name, n);
      g_autofree char *grid_path = g_build_filename(DDP_SRCDIR, file, NULL);
      g_autoptr(DdpSweepGrid) grid = ddp_sweep_grid_new();
      g_autoptr(GError) error = NULL;
      if (!ddp_sweep_grid_load_file(grid, grid_path, &error))
        g_error("%s names --grid %s: %s", docs[d], file, error->message);
      guint64 points = 0;
      g_assert_true(ddp_sweep_grid_count(grid, &points, &error));
      g_assert_cmpuint(points, ==, 108);   /* 2 models × 2 clusters × 3 GPU counts × 3 caps × 3 seeds */
      found++;
    }
  }
  g_assert_cmpuint(found, >=, 3);
  g_autofree char *readme = g_build_filename(DDP_SRCDIR, "README.md", NULL);
  g_autofree char *text = NULL;
  g_assert_true(g_file_get_contents(readme, &text, NULL, NULL));
  g_assert_nonnull(strstr(text, "mpirun --allow-run-as-root"));
}

int
main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_setenv("DDPSIM_DATADIR", DDP_SRCDIR, TRUE);
  g_autofree char *dir = g_dir_make_tmp("ddpsim-gridsweep-XXXXXX", NULL);
  tmpdir = dir;
  g_test_add_func("/sweep/documented-grids", test_documented_grids);
  g_test_add_func("/sweep/grid/order", test_grid_order);
  g_test_add_func("/sweep/grid/unswept", test_grid_unswept);
  g_test_add_func("/sweep/grid/normalise", test_grid_normalise);
  g_test_add_func("/sweep/grid/progression", test_grid_progression);
  g_test_add_func("/sweep/grid/bad-values", test_grid_bad_values);
  g_test_add_func("/sweep/grid/cap", test_grid_cap);
  g_test_add_func("/sweep/grid/file", test_grid_file);
  g_test_add_func("/sweep/slice", test_slice);
  g_test_add_func("/sweep/rows", test_rows);
  g_test_add_func("/sweep/cli/serial", test_cli_serial);
  g_test_add_func("/sweep/cli/jobs-identical", test_cli_jobs_identical);
  g_test_add_func("/sweep/cli/json-lines", test_cli_json_lines);
  g_test_add_func("/sweep/cli/grid-file-and-output", test_cli_grid_file_and_output);
  g_test_add_func("/sweep/cli/bad-input", test_cli_bad_input);
  g_test_add_func("/sweep/mpi/identical", test_mpi_identical);
  g_test_add_func("/sweep/mpi/bad-input", test_mpi_bad_input);
  g_test_add_func("/sweep/mpi/refused-without-mpi", test_mpi_refused_without_mpi);
  int status = g_test_run();
  g_free(serial_csv);
  g_autoptr(GDir) d = g_dir_open(dir, 0, NULL);
  const char *name;
  while (d && (name = g_dir_read_name(d))) {
    g_autofree char *path = g_build_filename(dir, name, NULL);
    g_unlink(path);
  }
  g_rmdir(dir);
  return status;
}
