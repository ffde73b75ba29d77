/* Tests of src/ranges.c: range checks, flag parsing, the input-file reader, message quoting, the
 * saturating clock conversion and the --gpus list parser.  Expected values are worked by hand in
 * the comments. */
#define _DEFAULT_SOURCE   /* mkfifo, truncate */

#include <glib.h>
#include <glib/gstdio.h>
#include <math.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ranges.h"

static void
test_contains(void)
{
  g_assert_true(ddp_range_contains(&DDP_RANGE_GPUS, 1));
  g_assert_true(ddp_range_contains(&DDP_RANGE_GPUS, 16777216));   /* 2^24, inclusive */
  g_assert_false(ddp_range_contains(&DDP_RANGE_GPUS, 16777217));
  g_assert_false(ddp_range_contains(&DDP_RANGE_GPUS, 0));
  g_assert_false(ddp_range_contains(&DDP_RANGE_BATCH, 0.5));        /* whole numbers only */
  g_assert_true(ddp_range_contains(&DDP_RANGE_BANDWIDTH_GBS, 0.00125)); /* 0.01 Gb/s */
  g_assert_false(ddp_range_contains(&DDP_RANGE_BANDWIDTH_GBS, 1e-300));
  g_assert_false(ddp_range_contains(&DDP_RANGE_BANDWIDTH_GBS, 1e22));
  g_assert_false(ddp_range_contains(&DDP_RANGE_FLOPS, NAN));
  g_assert_false(ddp_range_contains(&DDP_RANGE_FLOPS, INFINITY));
  g_autofree char *gpus = ddp_range_describe(&DDP_RANGE_GPUS);
  g_assert_cmpstr(gpus, ==, "a whole number from 1 to 16777216");
  g_autofree char *bw = ddp_range_describe(&DDP_RANGE_BANDWIDTH_GBS);
  g_assert_cmpstr(bw, ==, "a number from 0.00125 to 100000");
}

static void
test_flags(void)
{
  static const struct {
    const char *text;
    const char *message;   /* NULL: accepted */
    guint64 value;
  } counts[] = {
    { "8", NULL, 8 },
    { " 16 ", NULL, 16 },
    { "16777216", NULL, 16777216 },
    { "-8", "--gpus: \"-8\" must be a whole number from 1 to 16777216", 0 },   /* no wrap to 2^64-8 */
    { "17179869184", "--gpus: \"17179869184\" must be a whole number from 1 to 16777216", 0 },
    { "99999999999999999999", "--gpus: \"99999999999999999999\" must be a whole number from 1 to 16777216", 0 },
    { "8.0", "--gpus: \"8.0\" must be a whole number from 1 to 16777216", 0 },
    { "", "--gpus: \"\" must be a whole number from 1 to 16777216", 0 },
    { "8\x01", "--gpus: \"8\\x01\" must be a whole number from 1 to 16777216", 0 },
  };
  for (gsize i = 0; i < G_N_ELEMENTS(counts); i++) {
    g_autoptr(GError) error = NULL;
    guint64 v = 0;
    gboolean ok = ddp_flag_count("gpus", counts[i].text, &DDP_RANGE_GPUS, &v, &error);
    if (counts[i].message) {
      g_assert_false(ok);
      g_assert_error(error, DDP_RANGE_ERROR, DDP_RANGE_ERROR_RANGE);
      g_assert_cmpstr(error->message, ==, counts[i].message);
    } else {
      g_assert_no_error(error);
      g_assert_cmpuint(v, ==, counts[i].value);
    }
  }
  double d = 7;
  g_autoptr(GError) error = NULL;
  g_assert_true(ddp_flag_number("batch", NULL, &DDP_RANGE_BATCH, &d, &error));   /* not given: untouched */
  g_assert_cmpfloat(d, ==, 7);
  g_assert_true(ddp_flag_number("step-ms", "2.5", &DDP_RANGE_STEP_MS, &d, &error));
  g_assert_cmpfloat(d, ==, 2.5);
  const char *bad[] = { "1e308", "nan", "inf", "1e-400", "0x", "2.5ms", "0" };
  for (gsize i = 0; i < G_N_ELEMENTS(bad); i++) {
    g_clear_error(&error);
    g_assert_false(ddp_flag_number("step-ms", bad[i], &DDP_RANGE_STEP_MS, &d, &error));
    g_assert_error(error, DDP_RANGE_ERROR, DDP_RANGE_ERROR_RANGE);
    g_assert_true(g_str_has_prefix(error->message, "--step-ms: \""));
  }
  g_assert_cmpfloat(d, ==, 2.5);
}

static void
test_read_file(void)
{
  g_autofree char *dir = g_dir_make_tmp("test-ranges-XXXXXX", NULL);
  g_autofree char *good = g_build_filename(dir, "good", NULL);
  g_autofree char *nul = g_build_filename(dir, "nul", NULL);
  g_autofree char *fifo = g_build_filename(dir, "fifo", NULL);
  g_autofree char *big = g_build_filename(dir, "big", NULL);
  g_assert_true(g_file_set_contents(good, "a\nb\n", -1, NULL));
  g_assert_true(g_file_set_contents(nul, "a\nb\nc\0d\n", 8, NULL));   /* the NUL is on line 3 */
  g_assert_cmpint(mkfifo(fifo, 0600), ==, 0);
  g_assert_true(g_file_set_contents(big, "", 0, NULL));
  g_assert_cmpint(truncate(big, (off_t)DDP_MAX_INPUT_BYTES + 1), ==, 0);

  g_autoptr(GError) error = NULL;
  g_autofree char *text = NULL;
  gsize length = 0;
  g_assert_true(ddp_range_read_file(good, &text, &length, &error));
  g_assert_cmpstr(text, ==, "a\nb\n");
  g_assert_cmpuint(length, ==, 4);
  struct {
    const char *path, *suffix;
  } bad[] = {
    { nul, ":3: a NUL byte: not a text file" },
    { fifo, ": not a regular file" },       /* and no hang: opened O_NONBLOCK, refused by fstat */
    { dir, ": not a regular file (a directory)" },
    { big, ": 67108865 bytes; input files are limited to 64 MiB" },
    { "/dev/zero", ": not a regular file" },
  };
  for (gsize i = 0; i < G_N_ELEMENTS(bad); i++) {
    g_clear_error(&error);
    g_autofree char *none = NULL;
    g_assert_false(ddp_range_read_file(bad[i].path, &none, NULL, &error));
    g_assert_error(error, DDP_RANGE_ERROR, DDP_RANGE_ERROR_FILE);
    g_autofree char *expected = g_strconcat(bad[i].path, bad[i].suffix, NULL);
    g_assert_cmpstr(error->message, ==, expected);
    g_assert_null(none);
  }
  g_unlink(good);
  g_unlink(nul);
  g_unlink(fifo);
  g_unlink(big);
  g_rmdir(dir);
}

static void
test_quote(void)
{
  g_autofree char *a = ddp_range_quote("ok\x01\t\n\x1b[2J\x7f");
  g_assert_cmpstr(a, ==, "ok\\x01\\t\\n\\x1b[2J\\x7f");
  g_autofree char *b = ddp_range_quote("\xff\xfeok");   /* invalid UTF-8 bytes escaped, not dropped */
  g_assert_cmpstr(b, ==, "\\xff\\xfeok");
  g_autofree char *c = ddp_range_quote("8,16,…,1024");   /* valid UTF-8 passes */
  g_assert_cmpstr(c, ==, "8,16,…,1024");
  char long_text[200];
  memset(long_text, 'x', sizeof long_text - 1);
  long_text[sizeof long_text - 1] = '\0';
  g_autofree char *d = ddp_range_quote(long_text);   /* 80 characters, then "…" */
  g_assert_cmpuint(g_utf8_strlen(d, -1), ==, 81);
  g_assert_true(g_str_has_suffix(d, "x…"));
  g_autofree char *e = ddp_range_quote_n("abcdef", 3);
  g_assert_cmpstr(e, ==, "abc…");
}

static void
test_time_from_ns(void)
{
  g_assert_cmpint(ddp_time_from_ns(1.5), ==, 2);      /* llround: halves away from zero */
  g_assert_cmpint(ddp_time_from_ns(-2.5), ==, -3);
  g_assert_cmpint(ddp_time_from_ns(1e300), ==, DDP_TIME_MAX_NS);
  g_assert_cmpint(ddp_time_from_ns(INFINITY), ==, DDP_TIME_MAX_NS);
  g_assert_cmpint(ddp_time_from_ns(NAN), ==, DDP_TIME_MAX_NS);
  g_assert_cmpint(ddp_time_from_ns(-1e300), ==, -DDP_TIME_MAX_NS);
  g_assert_cmpint(ddp_time_from_ns(4611686018427387904.0), ==, DDP_TIME_MAX_NS);   /* 2^62 */
}

static void
assert_list(const char *text, const guint64 *expected, guint n)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GArray) list = ddp_gpu_list_parse(text, &error);
  g_assert_no_error(error);
  g_assert_cmpuint(list->len, ==, n);
  for (guint i = 0; i < n; i++)
    g_assert_cmpuint(g_array_index(list, guint64, i), ==, expected[i]);
}

static void
test_gpu_list(void)
{
  static const guint64 doubling[] = { 8, 16, 32, 64, 128 };   /* 8,16 doubles up to 128 */
  assert_list("8,16,...,128", doubling, 5);
  assert_list("8,16,…,128", doubling, 5);
  static const guint64 geometric[] = { 2, 4, 8, 11 };          /* 4 = 2·2: doubles below 11, then 11 */
  assert_list("2,4,...,11", geometric, 4);
  static const guint64 steps[] = { 3, 5, 7, 9, 10 };            /* 5 is no multiple of 3: adds 2 below 10 */
  assert_list("3,5,...,10", steps, 5);
  static const guint64 plain[] = { 1, 3, 7 };
  assert_list(" 1, 3 ,7", plain, 3);
  /* 2,3,...,4097: 2 … 4096 is 4095 counts plus 4097: 4096, the cap exactly */
  g_autoptr(GError) error = NULL;
  g_autoptr(GArray) full = ddp_gpu_list_parse("2,3,...,4097", &error);
  g_assert_no_error(error);
  g_assert_cmpuint(full->len, ==, DDP_MAX_SWEEP_POINTS);
  static const struct {
    const char *text, *message;
  } bad[] = {
    { "2,3,...,4098", "--gpus: the list has more than 4096 counts (ranges.h DDP_MAX_SWEEP_POINTS)" },
    { "2,3,...,2147483647", "--gpus: \"2,3,...,2147483647\": the counts around \"...\" must increase (up to 16777216)" },
    { "16777217", "--gpus: \"16777217\" is not a GPU count (1 to 16777216)" },
    { "-8", "--gpus: \"-8\" is not a GPU count (1 to 16777216)" },
    { "16,8", "--gpus: counts must increase (8 after 16)" },
    { "...,8", "--gpus: \"...\" needs two counts before it and one after it (e.g. 8,16,...,1024)" },
    { "8,16,...", "--gpus: \"...\" needs two counts before it and one after it (e.g. 8,16,...,1024)" },
  };
  for (gsize i = 0; i < G_N_ELEMENTS(bad); i++) {
    g_clear_error(&error);
    g_assert_null(ddp_gpu_list_parse(bad[i].text, &error));
    g_assert_error(error, DDP_RANGE_ERROR, DDP_RANGE_ERROR_RANGE);
    g_assert_cmpstr(error->message, ==, bad[i].message);
  }
}

int
main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/ranges/contains", test_contains);
  g_test_add_func("/ranges/flags", test_flags);
  g_test_add_func("/ranges/read-file", test_read_file);
  g_test_add_func("/ranges/quote", test_quote);
  g_test_add_func("/ranges/time-from-ns", test_time_from_ns);
  g_test_add_func("/ranges/gpu-list", test_gpu_list);
  return g_test_run();
}
