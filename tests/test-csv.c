/* Tests for csv: RFC 4180 records split by hand. */
#include "csv.h"

static void
assert_fields(const char *line, const char *const *expected, guint n)
{
  g_autoptr(GPtrArray) f = ddp_csv_split(line);
  g_assert_nonnull(f);
  g_assert_cmpuint(f->len, ==, n);
  for (guint i = 0; i < n; i++)
    g_assert_cmpstr(g_ptr_array_index(f, i), ==, expected[i]);
}

static void
test_plain(void)
{
  const char *const three[] = { "a", "12", "" };
  assert_fields("a,12,", three, 3);
  const char *const one[] = { "" };
  assert_fields("", one, 1);
}

static void
test_quoted(void)
{
  /* a comma inside quotes stays; "" is one quote; text after the closing quote is kept */
  const char *const f[] = { "x, y", "say \"hi\"", "q\"r", "8" };
  assert_fields("\"x, y\",\"say \"\"hi\"\"\",\"q\"\"\"r,8", f, 4);
}

static void
test_unterminated(void)
{
  g_assert_null(ddp_csv_split("a,\"open"));
  g_assert_null(ddp_csv_split("\"\"\""));
}

int
main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/csv/plain", test_plain);
  g_test_add_func("/csv/quoted", test_quoted);
  g_test_add_func("/csv/unterminated", test_unterminated);
  return g_test_run();
}
