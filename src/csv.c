/* csv — splitting one CSV record (see csv.h; RFC 4180 §2 rules 5–7 for the quoting). */
#include "csv.h"

/**
 * ddp_csv_split:
 * @line: one record, without its line ending
 *
 * Returns: (transfer full): the fields (char *, owned by the array), or NULL when a quoted field
 * is not terminated.  An empty line is one empty field.
 */
GPtrArray *
ddp_csv_split(const char *line)
{
  GPtrArray *fields = g_ptr_array_new_with_free_func(g_free);
  const char *s = line;
  for (;;) {
    GString *field = g_string_new(NULL);
    if (*s == '"') {
      s++;
      for (;;) {
        if (*s == '\0') {
          g_string_free(field, TRUE);
          g_ptr_array_unref(fields);
          return NULL;
        }
        if (*s == '"' && s[1] == '"') {
          g_string_append_c(field, '"');
          s += 2;
        } else if (*s == '"') {
          s++;
          break;
        } else {
          g_string_append_c(field, *s++);
        }
      }
    }
    while (*s && *s != ',')
      g_string_append_c(field, *s++);
    g_ptr_array_add(fields, g_string_free(field, FALSE));
    if (*s != ',')
      return fields;
    s++;
  }
}
