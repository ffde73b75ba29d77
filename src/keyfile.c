/* keyfile — GLib key files with line numbers (see keyfile.h).
 *
 * Design note: GKeyFile parses well but forgets positions and silently keeps the last of two
 * duplicate keys.  We scan the text once ourselves, line by line, with the same grammar GKeyFile
 * accepts (blank, '#' comment, "[group]", "key=value"), record the line of each group and key in
 * a hash table keyed "group\x1fkey", and reject what GKeyFile would accept silently (duplicates).
 * Only then does GKeyFile parse the same text, so values are unescaped exactly as GLib documents.
 */
#include "keyfile.h"
#include "suggest.h"

#include <string.h>

G_DEFINE_QUARK(ddp-keyfile-error-quark, ddp_keyfile_error)

struct _DdpKeyFile {
  char *path;            /* as given, for messages */
  GKeyFile *keyfile;
  GHashTable *lines;     /* "group\x1fkey" or "group" -> GUINT_TO_POINTER(line) */
  GPtrArray *groups;     /* group names in file order, NULL-terminated */
};

static char *
position_key(const char *group, const char *key)
{
  return key ? g_strconcat(group, "\x1f", key, NULL) : g_strdup(group);
}

guint
ddp_keyfile_line(const DdpKeyFile *kf, const char *group, const char *key)
{
  g_autofree char *pk = position_key(group, key);
  return GPOINTER_TO_UINT(g_hash_table_lookup(kf->lines, pk));
}

void
ddp_keyfile_set_error(const DdpKeyFile *kf, GError **error, int code, const char *group,
                      const char *key, const char *format, ...)
{
  va_list ap;
  va_start(ap, format);
  g_autofree char *raw = g_strdup_vprintf(format, ap);
  va_end(ap);
  /* what may echo values from the file: no control characters, no megabyte lines */
  g_autofree char *what = ddp_range_quote_n(raw, 400);
  guint line = group ? ddp_keyfile_line(kf, group, key) : 0;
  if (line == 0 && group && key)
    line = ddp_keyfile_line(kf, group, NULL);
  g_autofree char *where = line ? g_strdup_printf("%s:%u", kf->path, line) : g_strdup(kf->path);
  /* names come from the file: escaped and cut like any echoed text */
  g_autofree char *qgroup = group ? ddp_range_quote(group) : NULL;
  g_autofree char *qkey = key ? ddp_range_quote(key) : NULL;
  if (group && key)
    g_set_error(error, DDP_KEYFILE_ERROR, code, "%s: %s.%s: %s", where, qgroup, qkey, what);
  else if (group)
    g_set_error(error, DDP_KEYFILE_ERROR, code, "%s: [%s]: %s", where, qgroup, what);
  else
    g_set_error(error, DDP_KEYFILE_ERROR, code, "%s: %s", where, what);
}

static gboolean
scan_positions(DdpKeyFile *kf, const char *text, GError **error)
{
  g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
  const char *group = NULL;
  for (guint i = 0; lines[i]; i++) {
    guint lineno = i + 1;
    char *line = g_strchug(lines[i]);
    g_strchomp(line);
    if (*line == '\0' || *line == '#')
      continue;
    if (*line == '[') {
      char *close = strchr(line, ']');
      if (!close || close[1] != '\0' || close == line + 1) {
        g_autofree char *quoted = ddp_range_quote(line);
        g_set_error(error, DDP_KEYFILE_ERROR, DDP_KEYFILE_ERROR_SYNTAX,
                    "%s:%u: malformed group header \"%s\"", kf->path, lineno, quoted);
        return FALSE;
      }
      *close = '\0';
      group = line + 1;
      if (g_hash_table_contains(kf->lines, group)) {
        g_autofree char *quoted = ddp_range_quote(group);
        g_set_error(error, DDP_KEYFILE_ERROR, DDP_KEYFILE_ERROR_DUPLICATE,
                    "%s:%u: [%s]: group given twice (first at line %u)", kf->path, lineno, quoted,
                    ddp_keyfile_line(kf, group, NULL));
        return FALSE;
      }
      g_hash_table_insert(kf->lines, g_strdup(group), GUINT_TO_POINTER(lineno));
      g_ptr_array_add(kf->groups, g_strdup(group));
      continue;
    }
    char *eq = strchr(line, '=');
    if (!eq || eq == line) {
      g_autofree char *quoted = ddp_range_quote(line);
      g_set_error(error, DDP_KEYFILE_ERROR, DDP_KEYFILE_ERROR_SYNTAX,
                  "%s:%u: expected \"key = value\", a [group] or a # comment, got \"%s\"", kf->path,
                  lineno, quoted);
      return FALSE;
    }
    if (!group) {
      g_set_error(error, DDP_KEYFILE_ERROR, DDP_KEYFILE_ERROR_SYNTAX,
                  "%s:%u: key outside any [group]", kf->path, lineno);
      return FALSE;
    }
    *eq = '\0';
    char *key = g_strchomp(line);
    g_autofree char *pk = position_key(group, key);
    if (g_hash_table_contains(kf->lines, pk)) {
      g_autofree char *qgroup = ddp_range_quote(group), *qkey = ddp_range_quote(key);
      g_set_error(error, DDP_KEYFILE_ERROR, DDP_KEYFILE_ERROR_DUPLICATE,
                  "%s:%u: %s.%s: key given twice (first at line %u)", kf->path, lineno, qgroup, qkey,
                  GPOINTER_TO_UINT(g_hash_table_lookup(kf->lines, pk)));
      return FALSE;
    }
    g_hash_table_insert(kf->lines, g_steal_pointer(&pk), GUINT_TO_POINTER(lineno));
  }
  return TRUE;
}

/* 1-based line of @at inside @text. */
static guint
line_of(const char *text, const char *at)
{
  guint line = 1;
  for (const char *p = text; p < at; p++)
    line += *p == '\n';
  return line;
}

/* The line GKeyFile stumbled on: GLib's messages do not carry it, so find the shortest prefix of
 * whole lines that GKeyFile refuses (binary search; only on this error path). */
static guint
glib_error_line(const char *text)
{
  g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
  guint lo = 1, hi = g_strv_length(lines);   /* the first hi lines fail */
  while (lo < hi) {
    guint mid = lo + (hi - lo) / 2;
    char *saved = lines[mid];
    lines[mid] = NULL;
    g_autofree char *prefix = g_strjoinv("\n", lines);
    lines[mid] = saved;
    g_autoptr(GKeyFile) probe = g_key_file_new();
    if (g_key_file_load_from_data(probe, prefix, (gsize)-1, G_KEY_FILE_NONE, NULL))
      lo = mid + 1;
    else
      hi = mid;
  }
  return MAX(hi, 1);
}

/**
 * ddp_keyfile_load_data:
 * @display_name: name used in messages (a path, or "<inline>")
 * @text: NUL-terminated key-file text
 *
 * Returns: (transfer full): the parsed file, or NULL with @error set (DDP_KEYFILE_ERROR).
 */
DdpKeyFile *
ddp_keyfile_load_data(const char *display_name, const char *text, GError **error)
{
  g_autoptr(DdpKeyFile) kf = g_new0(DdpKeyFile, 1);
  kf->path = g_strdup(display_name);
  kf->lines = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
  kf->groups = g_ptr_array_new_with_free_func(g_free);
  kf->keyfile = g_key_file_new();
  if (g_str_has_prefix(text, "\xEF\xBB\xBF"))   /* a UTF-8 byte-order mark, as some Windows editors write */
    text += 3;
  const char *bad_utf8 = NULL;
  if (!g_utf8_validate(text, -1, &bad_utf8)) {
    g_set_error(error, DDP_KEYFILE_ERROR, DDP_KEYFILE_ERROR_SYNTAX, "%s:%u: not valid UTF-8 text",
                display_name, line_of(text, bad_utf8));
    return NULL;
  }
  if (!scan_positions(kf, text, error))
    return NULL;
  g_autoptr(GError) local = NULL;
  if (!g_key_file_load_from_data(kf->keyfile, text, (gsize)-1, G_KEY_FILE_NONE, &local)) {
    g_autofree char *what = ddp_range_quote(local->message);
    g_set_error(error, DDP_KEYFILE_ERROR, DDP_KEYFILE_ERROR_SYNTAX, "%s:%u: %s", display_name,
                glib_error_line(text), what);
    return NULL;
  }
  g_ptr_array_add(kf->groups, NULL);
  return g_steal_pointer(&kf);
}

/**
 * ddp_keyfile_load:
 * Reads (a regular file under DDP_MAX_INPUT_BYTES, no NUL bytes: ddp_range_read_file) and
 * parses @path.  Returns: (transfer full) or NULL with @error set.
 */
DdpKeyFile *
ddp_keyfile_load(const char *path, GError **error)
{
  g_autofree char *text = NULL;
  g_autoptr(GError) local = NULL;
  if (!ddp_range_read_file(path, &text, NULL, &local)) {
    g_set_error(error, DDP_KEYFILE_ERROR, DDP_KEYFILE_ERROR_IO, "%s", local->message);
    return NULL;
  }
  return ddp_keyfile_load_data(path, text, error);
}

void
ddp_keyfile_free(DdpKeyFile *kf)
{
  if (!kf)
    return;
  g_free(kf->path);
  if (kf->keyfile)
    g_key_file_free(kf->keyfile);
  if (kf->lines)
    g_hash_table_destroy(kf->lines);
  if (kf->groups)
    g_ptr_array_free(kf->groups, TRUE);
  g_free(kf);
}

const char *
ddp_keyfile_path(const DdpKeyFile *kf)
{
  return kf->path;
}

const char *const *
ddp_keyfile_groups(const DdpKeyFile *kf, gsize *n_groups)
{
  if (n_groups)
    *n_groups = kf->groups->len - 1;
  return (const char *const *)kf->groups->pdata;
}

gboolean
ddp_keyfile_has_group(const DdpKeyFile *kf, const char *group)
{
  return g_key_file_has_group(kf->keyfile, group);
}

gboolean
ddp_keyfile_has_key(const DdpKeyFile *kf, const char *group, const char *key)
{
  return g_key_file_has_key(kf->keyfile, group, key, NULL);
}

gboolean
ddp_keyfile_check_keys(const DdpKeyFile *kf, const char *group, const char *const *known,
                       GError **error)
{
  g_auto(GStrv) keys = g_key_file_get_keys(kf->keyfile, group, NULL, NULL);
  for (guint i = 0; keys && keys[i]; i++) {
    if (!g_strv_contains(known, keys[i])) {
      g_autofree char *list = g_strjoinv(", ", (char **)known);
      ddp_keyfile_set_error(kf, error, DDP_KEYFILE_ERROR_UNKNOWN, group, keys[i],
                            "unknown key (known keys: %s)", list);
      return FALSE;
    }
  }
  return TRUE;
}

/* Raw value or NULL; reports a missing required key. */
static char *
raw_value(const DdpKeyFile *kf, const char *group, const char *key, gboolean required,
          gboolean *ok, GError **error)
{
  *ok = TRUE;
  if (!g_key_file_has_key(kf->keyfile, group, key, NULL)) {
    if (required) {
      if (g_key_file_has_group(kf->keyfile, group))
        ddp_keyfile_set_error(kf, error, DDP_KEYFILE_ERROR_MISSING, group, key, "required key is missing");
      else
        g_set_error(error, DDP_KEYFILE_ERROR, DDP_KEYFILE_ERROR_MISSING,
                    "%s: %s.%s: required key is missing (no [%s] group)", kf->path, group, key, group);
      *ok = FALSE;
    }
    return NULL;
  }
  g_autoptr(GError) local = NULL;
  char *value = g_key_file_get_string(kf->keyfile, group, key, &local);
  if (!value) {
    ddp_keyfile_set_error(kf, error, DDP_KEYFILE_ERROR_VALUE, group, key, "%s", local->message);
    *ok = FALSE;
    return NULL;
  }
  g_strstrip(value);
  return value;
}

gboolean
ddp_keyfile_get_string(const DdpKeyFile *kf, const char *group, const char *key, gboolean required,
                       char **out, GError **error)
{
  gboolean ok;
  char *value = raw_value(kf, group, key, required, &ok, error);
  if (!value)
    return ok;
  if (required && *value == '\0') {
    ddp_keyfile_set_error(kf, error, DDP_KEYFILE_ERROR_VALUE, group, key, "must not be empty");
    g_free(value);
    return FALSE;
  }
  /* names end up in one-line messages and reports: no escaped newlines or other controls */
  for (const char *p = value; *p; p++)
    if ((guchar)*p < 0x20 || *p == 0x7f) {
      ddp_keyfile_set_error(kf, error, DDP_KEYFILE_ERROR_VALUE, group, key,
                            "\"%s\": control characters (\\n, \\t, …) are not allowed in text", value);
      g_free(value);
      return FALSE;
    }
  g_free(*out);
  *out = value;
  return TRUE;
}

gboolean
ddp_keyfile_get_uint64(const DdpKeyFile *kf, const char *group, const char *key, gboolean required,
                       guint64 min, guint64 max, guint64 *out, GError **error)
{
  gboolean ok;
  g_autofree char *value = raw_value(kf, group, key, required, &ok, error);
  if (!value)
    return ok;
  /* decimal digits only: no sign, no spaces, no hexadecimal */
  if (!g_ascii_string_to_unsigned(value, 10, min, max, out, NULL)) {
    g_autofree char *quoted = ddp_range_quote(value);
    ddp_keyfile_set_error(kf, error, DDP_KEYFILE_ERROR_VALUE, group, key,
                          "\"%s\" must be a whole number from %" G_GUINT64_FORMAT " to %" G_GUINT64_FORMAT, quoted,
                          min, max);
    return FALSE;
  }
  return TRUE;
}

gboolean
ddp_keyfile_get_bool(const DdpKeyFile *kf, const char *group, const char *key, gboolean required,
                     gboolean *out, GError **error)
{
  gboolean ok;
  g_autofree char *value = raw_value(kf, group, key, required, &ok, error);
  if (!value)
    return ok;
  if (g_ascii_strcasecmp(value, "true") == 0 || g_ascii_strcasecmp(value, "yes") == 0 || strcmp(value, "1") == 0)
    *out = TRUE;
  else if (g_ascii_strcasecmp(value, "false") == 0 || g_ascii_strcasecmp(value, "no") == 0 || strcmp(value, "0") == 0)
    *out = FALSE;
  else {
    ddp_keyfile_set_error(kf, error, DDP_KEYFILE_ERROR_VALUE, group, key,
                          "\"%s\" is not a boolean (true or false)", value);
    return FALSE;
  }
  return TRUE;
}

gboolean
ddp_keyfile_get_choice(const DdpKeyFile *kf, const char *group, const char *key, gboolean required,
                       const char *const *choices, int *out, GError **error)
{
  gboolean ok;
  g_autofree char *value = raw_value(kf, group, key, required, &ok, error);
  if (!value)
    return ok;
  for (int i = 0; choices[i]; i++) {
    if (g_ascii_strcasecmp(value, choices[i]) == 0) {
      *out = i;
      return TRUE;
    }
  }
  g_autofree char *list = g_strjoinv("|", (char **)choices);
  g_autofree char *hint = ddp_suggest_text(value, choices);
  ddp_keyfile_set_error(kf, error, DDP_KEYFILE_ERROR_VALUE, group, key, "\"%s\" is not one of %s%s",
                        value, list, hint);
  return FALSE;
}

/**
 * ddp_keyfile_get_ranged:
 * Reads a number inside @range (ranges.h).  Absent: as the other getters (MISSING when
 * @required, else *out untouched and TRUE).  Returns: FALSE with DDP_KEYFILE_ERROR_VALUE
 * "FILE:LINE: group.key: "v" must be a number from MIN to MAX" otherwise.
 */
gboolean
ddp_keyfile_get_ranged(const DdpKeyFile *kf, const char *group, const char *key, gboolean required,
                       const DdpRange *range, double *out, GError **error)
{
  gboolean ok;
  g_autofree char *value = raw_value(kf, group, key, required, &ok, error);
  if (!value)
    return ok;
  double v;
  gint64 n;
  gboolean parsed = range->integer ? ddp_parse_integer(value, &n) && (v = (double)n, TRUE)
                                   : ddp_parse_number(value, &v);
  if (!parsed || !ddp_range_contains(range, v)) {
    g_autofree char *what = ddp_range_describe(range);
    ddp_keyfile_set_error(kf, error, DDP_KEYFILE_ERROR_VALUE, group, key, "\"%s\" must be %s", value, what);
    return FALSE;
  }
  *out = v;
  return TRUE;
}
