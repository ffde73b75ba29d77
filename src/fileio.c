/* fileio — checked reads of the files users name and atomic, checked writes of the files they ask
 * for (see fileio.h for what is refused and why).
 *
 * Design notes.
 * - Reading opens once and checks the descriptor (fstat), not the name: the file cannot be swapped
 *   for a FIFO between a check and the read.  One byte past the stat size is read so a file that
 *   grows while it is read (a log still being written) is noticed rather than cut.
 * - Inflating uses GZlibDecompressor in 64 KiB steps and stops at the cap: the bytes an attacker
 *   controls are the inflated ones, and gzip reaches ~1000:1.
 * - Writing: g_file_set_contents would rename over whatever the path names (a device node as root,
 *   a FIFO) and report errors with its temporary name.  The target is checked with lstat right
 *   before the rename; the window left between that check and rename() needs a hostile process
 *   racing the user's own command, which is outside what an input check can stop.
 */
#define _DEFAULT_SOURCE /* O_CLOEXEC, fsync under -std=c11 */

#include "fileio.h"

#include "ranges.h"

#include <gio/gio.h>
#include <glib/gstdio.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

G_DEFINE_QUARK(ddp-file-error-quark, ddp_file_error)

/**
 * ddp_file_read:
 * @path: the file a user named
 * @kind: DDP_FILE_TEXT refuses NUL bytes; DDP_FILE_BINARY takes any byte
 * @data: (out) (transfer full): the contents, NUL-terminated (one byte past @length)
 * @length: (out) (optional): their length in bytes
 *
 * Returns: FALSE with DDP_FILE_ERROR_READ naming @path when it cannot be opened or read, is not
 * a regular file, holds more than DDP_MAX_INPUT_BYTES, changed while read, or (text) has a NUL
 * byte — then "PATH:LINE: a NUL byte".
 */
gboolean
ddp_file_read(const char *path, DdpFileKind kind, char **data, gsize *length, GError **error)
{
  int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) {
    int saved = errno;
    g_set_error(error, DDP_FILE_ERROR, DDP_FILE_ERROR_READ, "%s: cannot open: %s", path, g_strerror(saved));
    return FALSE;
  }
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    g_set_error(error, DDP_FILE_ERROR, DDP_FILE_ERROR_READ, "%s: not a regular file%s", path,
                S_ISDIR(st.st_mode) ? " (a directory)" : S_ISFIFO(st.st_mode) ? " (a FIFO)"
                : S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode) ? " (a device)" : "");
    close(fd);
    return FALSE;
  }
  if ((guint64)st.st_size > DDP_MAX_INPUT_BYTES) {
    g_set_error(error, DDP_FILE_ERROR, DDP_FILE_ERROR_READ,
                "%s: %" G_GUINT64_FORMAT " bytes; input files are limited to %" G_GSIZE_FORMAT " MiB", path,
                (guint64)st.st_size, DDP_MAX_INPUT_BYTES >> 20);
    close(fd);
    return FALSE;
  }
  gsize cap = (gsize)st.st_size + 1, n = 0;
  char *buf = g_malloc(cap + 1);
  for (;;) {
    ssize_t got = read(fd, buf + n, cap - n);
    if (got < 0 && errno == EINTR)
      continue;
    if (got < 0) {
      int saved = errno;
      g_set_error(error, DDP_FILE_ERROR, DDP_FILE_ERROR_READ, "%s: cannot read: %s", path, g_strerror(saved));
      g_free(buf);
      close(fd);
      return FALSE;
    }
    if (got == 0)
      break;
    n += (gsize)got;
    if (n == cap) {
      g_set_error(error, DDP_FILE_ERROR, DDP_FILE_ERROR_READ, "%s: the file changed while it was read", path);
      g_free(buf);
      close(fd);
      return FALSE;
    }
  }
  close(fd);
  buf[n] = '\0';
  const char *nul = kind == DDP_FILE_TEXT ? memchr(buf, '\0', n) : NULL;
  if (nul) {
    guint line = 1;
    for (const char *p = buf; p < nul; p++)
      line += *p == '\n';
    g_set_error(error, DDP_FILE_ERROR, DDP_FILE_ERROR_READ, "%s:%u: a NUL byte: not a text file", path, line);
    g_free(buf);
    return FALSE;
  }
  *data = buf;
  if (length)
    *length = n;
  return TRUE;
}

/**
 * ddp_file_gunzip:
 * @path: named in messages
 * @cap: the most inflated bytes accepted (DDP_MAX_INPUT_BYTES for an input file)
 * @out: (out) (transfer full): the inflated bytes, NUL-terminated
 *
 * Returns: FALSE with DDP_FILE_ERROR_INFLATE for damaged or truncated gzip data, or when the
 * inflated size passes @cap (checked as it inflates: nothing past cap + 64 KiB is allocated).
 */
gboolean
ddp_file_gunzip(const char *path, const char *data, gsize length, gsize cap, char **out, gsize *out_length,
                GError **error)
{
  g_autoptr(GZlibDecompressor) z = g_zlib_decompressor_new(G_ZLIB_COMPRESSOR_FORMAT_GZIP);
  g_autoptr(GByteArray) bytes = g_byte_array_new();
  guint8 buffer[65536];
  gsize in_pos = 0;
  for (;;) {
    gsize read = 0, written = 0;
    g_autoptr(GError) local = NULL;
    GConverterResult r = g_converter_convert(G_CONVERTER(z), data + in_pos, length - in_pos, buffer, sizeof buffer,
                                             G_CONVERTER_INPUT_AT_END, &read, &written, &local);
    if (r == G_CONVERTER_ERROR) {
      g_set_error(error, DDP_FILE_ERROR, DDP_FILE_ERROR_INFLATE, "%s: damaged gzip data (%s)", path, local->message);
      return FALSE;
    }
    in_pos += read;
    if (bytes->len + written > cap) {
      g_set_error(error, DDP_FILE_ERROR, DDP_FILE_ERROR_INFLATE,
                  "%s: inflates to more than %" G_GSIZE_FORMAT " MiB; input files are limited to that", path,
                  cap >> 20);
      return FALSE;
    }
    g_byte_array_append(bytes, buffer, (guint)written);
    if (r == G_CONVERTER_FINISHED)
      break;
    if (read == 0 && written == 0) { /* no progress with all input given: truncated stream */
      g_set_error(error, DDP_FILE_ERROR, DDP_FILE_ERROR_INFLATE, "%s: damaged gzip data (truncated)", path);
      return FALSE;
    }
  }
  *out_length = bytes->len;
  g_byte_array_append(bytes, (const guint8 *)"", 1);
  *out = (char *)g_byte_array_free(g_steal_pointer(&bytes), FALSE);
  return TRUE;
}

/* lstat @path: TRUE when it does not exist or is a regular file; else FALSE with the reason. */
static gboolean
target_ok(const char *flag, const char *path, GError **error)
{
  GStatBuf st;
  if (g_lstat(path, &st) != 0)
    return TRUE;
  if (S_ISREG(st.st_mode))
    return TRUE;
  g_set_error(error, DDP_FILE_ERROR, DDP_FILE_ERROR_WRITE, "%s: \"%s\" exists and is not a regular file (%s)", flag,
              path, S_ISDIR(st.st_mode) ? "a directory" : S_ISLNK(st.st_mode) ? "a symbolic link"
              : S_ISFIFO(st.st_mode) ? "a FIFO" : S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode) ? "a device" : "a socket");
  return FALSE;
}

/**
 * ddp_file_check_output:
 * @flag: "-o", "--trace": named in messages
 * Checks, before any work, that @path can be an output: its directory exists and @path is
 * missing or a regular file.  Returns: FALSE with DDP_FILE_ERROR_WRITE.
 */
gboolean
ddp_file_check_output(const char *flag, const char *path, GError **error)
{
  g_autofree char *dir = g_path_get_dirname(path);
  if (!*path || !g_file_test(dir, G_FILE_TEST_IS_DIR)) {
    g_set_error(error, DDP_FILE_ERROR, DDP_FILE_ERROR_WRITE, "%s: \"%s\": directory \"%s\" does not exist", flag,
                path, dir);
    return FALSE;
  }
  return target_ok(flag, path, error);
}

static gboolean
write_error(const char *flag, const char *path, int err, GError **error)
{
  g_set_error(error, DDP_FILE_ERROR, DDP_FILE_ERROR_WRITE, "%s: cannot write \"%s\": %s", flag, path,
              g_strerror(err));
  return FALSE;
}

/* Renames @tmp_path (a complete temporary file in @path's directory, removed on failure) over
 * @path after checking @path again (missing or a regular file), with the permissions of a file the
 * user creates (0666 less the umask; mkstemp makes 0600).  FALSE with DDP_FILE_ERROR_WRITE naming
 * @flag and @path. */
static gboolean
replace_file(const char *flag, const char *tmp_path, const char *path, GError **error)
{
  mode_t mask = umask(0);
  umask(mask);
  if (g_chmod(tmp_path, 0666 & ~mask) != 0) {
    int saved = errno;
    g_unlink(tmp_path);
    return write_error(flag, path, saved, error);
  }
  if (!target_ok(flag, path, error)) {
    g_unlink(tmp_path);
    return FALSE;
  }
  if (g_rename(tmp_path, path) != 0) {
    int saved = errno;
    g_unlink(tmp_path);
    return write_error(flag, path, saved, error);
  }
  return TRUE;
}

/**
 * ddp_file_write:
 * @flag: the flag that named @path, for messages
 * Writes @data into a hidden temporary file beside @path, fsyncs it and renames it into place (replace_file):
 * @path is the whole new content or untouched.  Returns: FALSE with DDP_FILE_ERROR_WRITE.
 */
gboolean
ddp_file_write(const char *flag, const char *path, const char *data, gsize length, GError **error)
{
  if (!ddp_file_check_output(flag, path, error))
    return FALSE;
  g_autofree char *dir = g_path_get_dirname(path);
  g_autofree char *base = g_path_get_basename(path);
  g_autofree char *name = g_strdup_printf(".%.200s.XXXXXX", base);
  g_autofree char *tmp = g_build_filename(dir, name, NULL);
  int fd = g_mkstemp(tmp);
  if (fd < 0)
    return write_error(flag, path, errno, error);
  gsize done = 0;
  int saved = 0;
  while (done < length && !saved) {
    ssize_t n = write(fd, data + done, length - done);
    if (n < 0 && errno != EINTR)
      saved = errno;
    else if (n > 0)
      done += (gsize)n;
  }
  if (!saved && fsync(fd) != 0)
    saved = errno;
  if (close(fd) != 0 && !saved)
    saved = errno;
  if (saved) {
    g_unlink(tmp);
    return write_error(flag, path, saved, error);
  }
  return replace_file(flag, tmp, path, error);
}
