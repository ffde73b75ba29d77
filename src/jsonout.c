/* jsonout — streaming JSON writer (see jsonout.h).  A stack of "first member written?" flags is
 * all the state pretty-printing needs. */
#include "jsonout.h"

#include <math.h>
#include <string.h>

struct _DdpJson {
  GString *out;
  GArray *first;   /* gboolean per open container: no member written yet */
};

DdpJson *
ddp_json_new(void)
{
  DdpJson *json = g_new0(DdpJson, 1);
  json->out = g_string_new(NULL);
  json->first = g_array_new(FALSE, FALSE, sizeof(gboolean));
  return json;
}

char *
ddp_json_free_to_string(DdpJson *json)
{
  g_assert(json->first->len == 0);
  g_string_append_c(json->out, '\n');
  g_array_free(json->first, TRUE);
  char *text = g_string_free(json->out, FALSE);
  g_free(json);
  return text;
}

static void
escape(GString *out, const char *s)
{
  g_string_append_c(out, '"');
  for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
    switch (*p) {
    case '"': g_string_append(out, "\\\""); break;
    case '\\': g_string_append(out, "\\\\"); break;
    case '\n': g_string_append(out, "\\n"); break;
    case '\t': g_string_append(out, "\\t"); break;
    case '\r': g_string_append(out, "\\r"); break;
    default:
      if (*p < 0x20)
        g_string_append_printf(out, "\\u%04x", *p);
      else
        g_string_append_c(out, (char)*p);
    }
  }
  g_string_append_c(out, '"');
}

/* Separator, newline and indent before a value, then "key": when inside an object. */
static void
member(DdpJson *json, const char *key)
{
  if (json->first->len > 0) {
    gboolean *first = &g_array_index(json->first, gboolean, json->first->len - 1);
    if (!*first)
      g_string_append_c(json->out, ',');
    *first = FALSE;
    g_string_append_c(json->out, '\n');
    for (guint i = 0; i < json->first->len; i++)
      g_string_append(json->out, "  ");
  }
  if (key) {
    escape(json->out, key);
    g_string_append(json->out, ": ");
  }
}

static void
open_container(DdpJson *json, const char *key, char bracket)
{
  member(json, key);
  g_string_append_c(json->out, bracket);
  gboolean first = TRUE;
  g_array_append_val(json->first, first);
}

static void
close_container(DdpJson *json, char bracket)
{
  g_assert(json->first->len > 0);
  gboolean empty = g_array_index(json->first, gboolean, json->first->len - 1);
  g_array_set_size(json->first, json->first->len - 1);
  if (!empty) {
    g_string_append_c(json->out, '\n');
    for (guint i = 0; i < json->first->len; i++)
      g_string_append(json->out, "  ");
  }
  g_string_append_c(json->out, bracket);
}

void ddp_json_begin_object(DdpJson *json, const char *key) { open_container(json, key, '{'); }
void ddp_json_end_object(DdpJson *json) { close_container(json, '}'); }
void ddp_json_begin_array(DdpJson *json, const char *key) { open_container(json, key, '['); }
void ddp_json_end_array(DdpJson *json) { close_container(json, ']'); }

void
ddp_json_string(DdpJson *json, const char *key, const char *value)
{
  member(json, key);
  if (value)
    escape(json->out, value);
  else
    g_string_append(json->out, "null");
}

void
ddp_json_int(DdpJson *json, const char *key, gint64 value)
{
  member(json, key);
  g_string_append_printf(json->out, "%" G_GINT64_FORMAT, value);
}

void
ddp_json_double(DdpJson *json, const char *key, double value, int decimals)
{
  member(json, key);
  if (!isfinite(value)) {
    g_string_append(json->out, "null");
    return;
  }
  char buf[G_ASCII_DTOSTR_BUF_SIZE];
  char format[16];
  g_snprintf(format, sizeof format, "%%.%df", decimals);
  g_ascii_formatd(buf, sizeof buf, format, value);
  if (decimals > 0) {
    char *end = buf + strlen(buf) - 1;
    while (*end == '0')
      *end-- = '\0';
    if (*end == '.')
      *end = '\0';
  }
  if (strcmp(buf, "-0") == 0)
    strcpy(buf, "0");
  g_string_append(json->out, buf);
}

void
ddp_json_bool(DdpJson *json, const char *key, gboolean value)
{
  member(json, key);
  g_string_append(json->out, value ? "true" : "false");
}
