/* keyfile — GLib key files with line numbers.
 *
 * Every ddpsim input (model, cluster, scenario) is a GLib key file.  GKeyFile itself does not
 * remember where a key was written, and every error must name file, line and key,
 * so this module pre-scans the text once (syntax errors, duplicate keys, line of every key) and then
 * hands the text to GKeyFile.  Typed getters validate ranges and report "FILE:LINE: group.key: what".
 */
#ifndef DDP_KEYFILE_H
#define DDP_KEYFILE_H

#include <glib.h>

#include "ranges.h"

#define DDP_KEYFILE_ERROR (ddp_keyfile_error_quark())
GQuark ddp_keyfile_error_quark(void);

typedef enum {
  DDP_KEYFILE_ERROR_SYNTAX,   /* not a group, key=value, comment or blank line */
  DDP_KEYFILE_ERROR_DUPLICATE,/* the same key twice in a group, or the same group twice */
  DDP_KEYFILE_ERROR_UNKNOWN,  /* a group or key this format does not define */
  DDP_KEYFILE_ERROR_MISSING,  /* a required group or key is absent */
  DDP_KEYFILE_ERROR_VALUE,    /* a value that does not parse or is out of range */
  DDP_KEYFILE_ERROR_IO,       /* the file cannot be read */
} DdpKeyFileError;

typedef struct _DdpKeyFile DdpKeyFile;

DdpKeyFile *ddp_keyfile_load(const char *path, GError **error);
DdpKeyFile *ddp_keyfile_load_data(const char *display_name, const char *text, GError **error);
void ddp_keyfile_free(DdpKeyFile *kf);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(DdpKeyFile, ddp_keyfile_free)

const char *ddp_keyfile_path(const DdpKeyFile *kf);
/* Groups in file order; the array belongs to kf. */
const char *const *ddp_keyfile_groups(const DdpKeyFile *kf, gsize *n_groups);
gboolean ddp_keyfile_has_group(const DdpKeyFile *kf, const char *group);
gboolean ddp_keyfile_has_key(const DdpKeyFile *kf, const char *group, const char *key);
/* 1-based line of the key (or of the group header when key is NULL); 0 when absent. */
guint ddp_keyfile_line(const DdpKeyFile *kf, const char *group, const char *key);

/* Fails with DDP_KEYFILE_ERROR_UNKNOWN on the first key of @group not in the NULL-terminated @known. */
gboolean ddp_keyfile_check_keys(const DdpKeyFile *kf, const char *group, const char *const *known, GError **error);

/* Typed getters.  When the key is absent: if @required, fail with ..._MISSING; otherwise store
 * nothing and return TRUE (so callers pre-fill defaults).  Range checks are inclusive; numbers go
 * through ddp_keyfile_get_ranged and the one table of ranges.h; ddp_keyfile_get_uint64 is for the
 * one integer no double holds (a 64-bit seed).  Strings are newly allocated. */
gboolean ddp_keyfile_get_string(const DdpKeyFile *kf, const char *group, const char *key,
                                gboolean required, char **out, GError **error);
gboolean ddp_keyfile_get_uint64(const DdpKeyFile *kf, const char *group, const char *key,
                                gboolean required, guint64 min, guint64 max, guint64 *out, GError **error);
gboolean ddp_keyfile_get_bool(const DdpKeyFile *kf, const char *group, const char *key,
                              gboolean required, gboolean *out, GError **error);
/* A number inside @range (ranges.h), the usual way to read a numeric key: an integer range takes
 * whole numbers only ("2.5" and "1e3" are refused there).  Messages name file:line: group.key. */
gboolean ddp_keyfile_get_ranged(const DdpKeyFile *kf, const char *group, const char *key,
                                gboolean required, const DdpRange *range, double *out, GError **error);
/* One of @choices (NULL-terminated); stores its index. */
gboolean ddp_keyfile_get_choice(const DdpKeyFile *kf, const char *group, const char *key,
                                gboolean required, const char *const *choices, int *out, GError **error);

/* Sets a GError located at group/key: "FILE:LINE: group.key: MESSAGE". */
void ddp_keyfile_set_error(const DdpKeyFile *kf, GError **error, int code, const char *group,
                           const char *key, const char *format, ...) G_GNUC_PRINTF(6, 7);

#endif
