/* fileio — the one way in and the one way out for every file a user names (issue 20).
 *
 * In: ddp_file_read() opens the path once with O_NONBLOCK (a FIFO does not block the open),
 * checks the open descriptor with fstat (a regular file, at most DDP_MAX_INPUT_BYTES: no FIFO,
 * device, directory, nor /dev/zero read until memory runs out) and reads it whole.  Text inputs
 * are refused at their first NUL byte (GKeyFile and the line parsers would stop there silently).
 * ddp_file_gunzip() inflates gzip data with the same cap on the inflated size, so a 1.5 MB gzip
 * bomb stops at 64 MiB instead of growing until GLib aborts.
 *
 * Out: ddp_file_check_output() is called before any work (the directory exists, the path is
 * not a directory, device, FIFO or symbolic link); ddp_file_write() writes a temporary file
 * beside the target, fsyncs it and renames it into place — after checking the target again, so
 * `-o /dev/full` as root never replaces the device node with a regular file.  Every message names
 * the user's path and flag, never the temporary file.
 *
 * All errors are DDP_FILE_ERROR and are the user's to fix (exit 2): a path that cannot be read
 * or written — missing, a device, read-only, full, a name too long — is bad input to the verb.
 */
#ifndef DDP_FILEIO_H
#define DDP_FILEIO_H

#include <glib.h>

#define DDP_FILE_ERROR (ddp_file_error_quark())
GQuark ddp_file_error_quark(void);

typedef enum {
  DDP_FILE_ERROR_READ,    /* cannot open or read, not a regular file, too big, a NUL in text */
  DDP_FILE_ERROR_INFLATE, /* damaged gzip data, or inflating past the cap */
  DDP_FILE_ERROR_WRITE,   /* the output path cannot be written or is not a regular file */
} DdpFileError;

typedef enum {
  DDP_FILE_TEXT,          /* refuse NUL bytes (with the line of the first one) */
  DDP_FILE_BINARY,        /* any bytes (gzip) */
} DdpFileKind;

gboolean ddp_file_read(const char *path, DdpFileKind kind, char **data, gsize *length, GError **error);
gboolean ddp_file_gunzip(const char *path, const char *data, gsize length, gsize cap, char **out, gsize *out_length,
                         GError **error);
gboolean ddp_file_check_output(const char *flag, const char *path, GError **error);
gboolean ddp_file_write(const char *flag, const char *path, const char *data, gsize length, GError **error);

#endif
