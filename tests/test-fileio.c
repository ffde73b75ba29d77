/* Tests of src/fileio.c: the checked reader (regular files, size cap, NUL bytes, no blocking on a
 * FIFO), the capped gzip inflater (a bomb stops at the cap) and the atomic writer (never renames
 * over a device, FIFO, directory or symbolic link; messages name the user's path and flag). */
#define _DEFAULT_SOURCE /* mkfifo, symlink */

#include <gio/gio.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fileio.h"
#include "ranges.h"

typedef struct {
  char *dir;
} Fixture;

static void
fixture_set_up(Fixture *f, gconstpointer data)
{
  (void)data;
  f->dir = g_dir_make_tmp("ddpsim-fileio-XXXXXX", NULL);
  g_assert_nonnull(f->dir);
}

static void
fixture_tear_down(Fixture *f, gconstpointer data)
{
  (void)data;
  g_autoptr(GDir) d = g_dir_open(f->dir, 0, NULL);
  for (const char *name; d && (name = g_dir_read_name(d));) {
    g_autofree char *p = g_build_filename(f->dir, name, NULL);
    if (g_rmdir(p) != 0)
      g_unlink(p);
  }
  g_rmdir(f->dir);
  g_free(f->dir);
}

static void
test_read(Fixture *f, gconstpointer data)
{
  (void)data;
  g_autofree char *text = g_build_filename(f->dir, "t", NULL);
  g_autofree char *bin = g_build_filename(f->dir, "b", NULL);
  g_autofree char *fifo = g_build_filename(f->dir, "fifo", NULL);
  g_assert_true(g_file_set_contents(text, "x\ny\n", -1, NULL));
  g_assert_true(g_file_set_contents(bin, "a\nb\0c", 5, NULL));   /* NUL on line 2 */
  g_assert_cmpint(mkfifo(fifo, 0600), ==, 0);
  g_autoptr(GError) error = NULL;
  g_autofree char *data1 = NULL, *data2 = NULL, *none = NULL;
  gsize n = 0;
  g_assert_true(ddp_file_read(text, DDP_FILE_TEXT, &data1, &n, &error));
  g_assert_cmpuint(n, ==, 4);
  g_assert_true(ddp_file_read(bin, DDP_FILE_BINARY, &data2, &n, &error));
  g_assert_cmpuint(n, ==, 5);
  g_assert_cmpint(data2[5], ==, '\0');                           /* terminated past the data */
  g_assert_false(ddp_file_read(bin, DDP_FILE_TEXT, &none, NULL, &error));
  g_assert_error(error, DDP_FILE_ERROR, DDP_FILE_ERROR_READ);
  g_assert_true(g_str_has_suffix(error->message, ":2: a NUL byte: not a text file"));
  g_clear_error(&error);
  g_assert_false(ddp_file_read(fifo, DDP_FILE_BINARY, &none, NULL, &error)); /* returns at once */
  g_assert_true(g_str_has_suffix(error->message, ": not a regular file (a FIFO)"));
  g_clear_error(&error);
  g_assert_false(ddp_file_read("/dev/zero", DDP_FILE_BINARY, &none, NULL, &error));
  g_assert_cmpstr(error->message, ==, "/dev/zero: not a regular file (a device)");
  g_assert_null(none);
}

/* gzip of @n zero bytes (compresses ~1000:1). */
static GBytes *
gzip_zeros(gsize n)
{
  g_autoptr(GZlibCompressor) z = g_zlib_compressor_new(G_ZLIB_COMPRESSOR_FORMAT_GZIP, 9);
  g_autoptr(GMemoryInputStream) in = G_MEMORY_INPUT_STREAM(g_memory_input_stream_new());
  g_memory_input_stream_add_data(in, g_malloc0(n), (gssize)n, g_free);
  g_autoptr(GInputStream) conv = g_converter_input_stream_new(G_INPUT_STREAM(in), G_CONVERTER(z));
  g_autoptr(GOutputStream) out = g_memory_output_stream_new_resizable();
  g_assert_cmpint(g_output_stream_splice(out, conv, G_OUTPUT_STREAM_SPLICE_CLOSE_TARGET, NULL, NULL), >, 0);
  return g_memory_output_stream_steal_as_bytes(G_MEMORY_OUTPUT_STREAM(out));
}

static void
test_gunzip(void)
{
  g_autoptr(GBytes) small = gzip_zeros(1000);
  g_autoptr(GError) error = NULL;
  g_autofree char *out = NULL;
  gsize n = 0, len = 0;
  const char *data = g_bytes_get_data(small, &len);
  g_assert_true(ddp_file_gunzip("s.gz", data, len, 1000, &out, &n, &error));   /* exactly the cap */
  g_assert_cmpuint(n, ==, 1000);
  g_autofree char *none = NULL;
  g_assert_false(ddp_file_gunzip("s.gz", data, len, 999, &none, &n, &error));
  g_assert_error(error, DDP_FILE_ERROR, DDP_FILE_ERROR_INFLATE);
  g_clear_error(&error);
  /* a bomb: 256 MiB of zeros is ~260 KB of gzip; refused at the 64 MiB input cap */
  g_autoptr(GBytes) bomb = gzip_zeros((gsize)256 << 20);
  data = g_bytes_get_data(bomb, &len);
  g_assert_cmpuint(len, <, 1 << 20);
  g_assert_false(ddp_file_gunzip("bomb.gz", data, len, DDP_MAX_INPUT_BYTES, &none, &n, &error));
  g_assert_cmpstr(error->message, ==, "bomb.gz: inflates to more than 64 MiB; input files are limited to that");
  g_clear_error(&error);
  g_assert_false(ddp_file_gunzip("cut.gz", data, 40, DDP_MAX_INPUT_BYTES, &none, &n, &error));  /* truncated */
  g_assert_true(g_str_has_prefix(error->message, "cut.gz: damaged gzip data"));
}

static void
test_write(Fixture *f, gconstpointer data)
{
  (void)data;
  g_autofree char *path = g_build_filename(f->dir, "out.csv", NULL);
  g_autoptr(GError) error = NULL;
  g_assert_true(ddp_file_write("-o", path, "a,b\n", 4, &error));
  g_assert_true(ddp_file_write("-o", path, "c\n", 2, &error));   /* replaces a regular file */
  g_autofree char *text = NULL;
  g_assert_true(g_file_get_contents(path, &text, NULL, NULL));
  g_assert_cmpstr(text, ==, "c\n");
  /* non-regular targets are refused and stay */
  g_autofree char *fifo = g_build_filename(f->dir, "fifo", NULL);
  g_autofree char *link = g_build_filename(f->dir, "link", NULL);
  g_assert_cmpint(mkfifo(fifo, 0600), ==, 0);
  g_assert_cmpint(symlink("out.csv", link), ==, 0);
  struct {
    const char *path, *what;
  } bad[] = { { fifo, "a FIFO" }, { link, "a symbolic link" }, { f->dir, "a directory" }, { "/dev/null", "a device" } };
  for (gsize i = 0; i < G_N_ELEMENTS(bad); i++) {
    g_clear_error(&error);
    g_assert_false(ddp_file_write("--trace", bad[i].path, "x", 1, &error));
    g_assert_error(error, DDP_FILE_ERROR, DDP_FILE_ERROR_WRITE);
    g_autofree char *expected = g_strdup_printf("--trace: \"%s\" exists and is not a regular file (%s)", bad[i].path,
                                                bad[i].what);
    g_assert_cmpstr(error->message, ==, expected);
  }
  GStatBuf st;
  g_assert_cmpint(g_lstat(fifo, &st), ==, 0);
  g_assert_true(S_ISFIFO(st.st_mode));
  g_assert_cmpint(g_lstat(link, &st), ==, 0);
  g_assert_true(S_ISLNK(st.st_mode));
  /* a missing directory names the flag and the user's path */
  g_clear_error(&error);
  g_autofree char *nodir = g_build_filename(f->dir, "no", "x.csv", NULL);
  g_assert_false(ddp_file_write("-o", nodir, "x", 1, &error));
  g_assert_true(g_str_has_prefix(error->message, "-o: \""));
  /* a name too long: the message names it, not a temporary file */
  g_clear_error(&error);
  g_autofree char *name = g_strnfill(300, 'n');
  g_autofree char *longpath = g_build_filename(f->dir, name, NULL);
  g_assert_false(ddp_file_write("-o", longpath, "x", 1, &error));
  g_autofree char *prefix = g_strdup_printf("-o: cannot write \"%s\": ", longpath);
  g_assert_true(g_str_has_prefix(error->message, prefix));
  /* nothing left behind but what the test made */
  g_autoptr(GDir) d = g_dir_open(f->dir, 0, NULL);
  guint count = 0;
  while (g_dir_read_name(d))
    count++;
  g_assert_cmpuint(count, ==, 3);
}

int
main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add("/fileio/read", Fixture, NULL, fixture_set_up, test_read, fixture_tear_down);
  g_test_add_func("/fileio/gunzip", test_gunzip);
  g_test_add("/fileio/write", Fixture, NULL, fixture_set_up, test_write, fixture_tear_down);
  return g_test_run();
}
