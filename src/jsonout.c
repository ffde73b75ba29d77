/* jsonout — ddpsim's JSON documents, built with json-glib (see jsonout.h).
 *
 * The document is a json-glib tree: JsonBuilder keeps the nesting and makes a member without a
 * value, a value without a member name or an unclosed container a programmer error it reports
 * (json_builder_get_root returns NULL, asserted below), not malformed text.  Only the last step,
 * tree to text, is ours, for one reason: JsonGenerator prints every double with 17 significant
 * digits ("0.99813499999999999", "25.0") and docs/json.md promises what users diff and read — a
 * fixed number of decimals per field, trailing zeros dropped ("0.998135", "25").  So each double
 * node remembers the decimals its field asked for (a side table keyed by the node), and the
 * printer formats it with them; everything else (strings, integers, booleans, null, member order)
 * is json-glib's as built.  The printed layout is the one ddpsim has always written: two-space
 * indent, "key": value, empty containers as {} and [], a final newline; or, for JSON lines
 * (sweep --json), the same on one line without spaces. */
#include "jsonout.h"

#include <json-glib/json-glib.h>
#include <math.h>
#include <string.h>

struct _DdpJson {
  JsonBuilder *builder;
  GHashTable *decimals;   /* JsonNode* (a double) → decimals + 1 (so that 0 decimals is not NULL) */
  GHashTable *unsigned_ints; /* JsonNode* (an int64) holding a guint64's bits (ddp_json_uint64) */
  gboolean one_line;      /* ddp_json_free_to_line: no newlines, no spaces (JSON lines) */
};

DdpJson *
ddp_json_new(void)
{
  DdpJson *json = g_new0(DdpJson, 1);
  json->builder = json_builder_new();
  json->decimals = g_hash_table_new(g_direct_hash, g_direct_equal);
  json->unsigned_ints = g_hash_table_new(g_direct_hash, g_direct_equal);
  return json;
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

/* @value with @decimals fixed decimals in the C locale, trailing zeros (and a bare point) dropped;
 * "-0" is "0". */
static void
fixed(GString *out, double value, int decimals)
{
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
  g_string_append(out, strcmp(buf, "-0") == 0 ? "0" : buf);
}

/* A line break and @depth levels of indent; nothing on one line. */
static void
indent(const DdpJson *json, GString *out, guint depth)
{
  if (json->one_line)
    return;
  g_string_append_c(out, '\n');
  for (guint i = 0; i < depth; i++)
    g_string_append(out, "  ");
}

static void print_node(const DdpJson *json, GString *out, JsonNode *node, guint depth);

static void
print_object(const DdpJson *json, GString *out, JsonObject *object, guint depth)
{
  g_string_append_c(out, '{');
  JsonObjectIter it;
  const char *name;
  JsonNode *member;
  gboolean first = TRUE;
  json_object_iter_init_ordered(&it, object);   /* members in the order they were added */
  while (json_object_iter_next_ordered(&it, &name, &member)) {
    if (!first)
      g_string_append_c(out, ',');
    first = FALSE;
    indent(json, out, depth + 1);
    escape(out, name);
    g_string_append(out, json->one_line ? ":" : ": ");
    print_node(json, out, member, depth + 1);
  }
  if (!first)
    indent(json, out, depth);
  g_string_append_c(out, '}');
}

static void
print_array(const DdpJson *json, GString *out, JsonArray *array, guint depth)
{
  g_string_append_c(out, '[');
  guint n = json_array_get_length(array);
  for (guint i = 0; i < n; i++) {
    if (i > 0)
      g_string_append_c(out, ',');
    indent(json, out, depth + 1);
    print_node(json, out, json_array_get_element(array, i), depth + 1);
  }
  if (n > 0)
    indent(json, out, depth);
  g_string_append_c(out, ']');
}

static void
print_node(const DdpJson *json, GString *out, JsonNode *node, guint depth)
{
  switch (json_node_get_node_type(node)) {
  case JSON_NODE_OBJECT: print_object(json, out, json_node_get_object(node), depth); return;
  case JSON_NODE_ARRAY: print_array(json, out, json_node_get_array(node), depth); return;
  case JSON_NODE_NULL: g_string_append(out, "null"); return;
  case JSON_NODE_VALUE: break;
  }
  GType type = json_node_get_value_type(node);
  if (type == G_TYPE_STRING) {
    escape(out, json_node_get_string(node));
  } else if (type == G_TYPE_INT64) {
    if (g_hash_table_contains(json->unsigned_ints, node))
      g_string_append_printf(out, "%" G_GUINT64_FORMAT, (guint64)json_node_get_int(node));
    else
      g_string_append_printf(out, "%" G_GINT64_FORMAT, json_node_get_int(node));
  } else if (type == G_TYPE_BOOLEAN) {
    g_string_append(out, json_node_get_boolean(node) ? "true" : "false");
  } else {
    g_assert(type == G_TYPE_DOUBLE);
    gpointer d = g_hash_table_lookup(json->decimals, node);
    g_assert(d != NULL);   /* every double comes from ddp_json_double */
    fixed(out, json_node_get_double(node), GPOINTER_TO_INT(d) - 1);
  }
}

/* Returns the document on one line, no spaces, with a trailing newline (a JSON-lines record), and
 * frees the writer. */
char *
ddp_json_free_to_line(DdpJson *json)
{
  json->one_line = TRUE;
  return ddp_json_free_to_string(json);
}

char *
ddp_json_free_to_string(DdpJson *json)
{
  JsonNode *root = json_builder_get_root(json->builder);
  g_assert(root != NULL);   /* every container closed, every member given a value */
  GString *out = g_string_new(NULL);
  print_node(json, out, root, 0);
  g_string_append_c(out, '\n');
  json_node_unref(root);
  g_object_unref(json->builder);
  g_hash_table_unref(json->decimals);
  g_hash_table_unref(json->unsigned_ints);
  g_free(json);
  return g_string_free(out, FALSE);
}

/* The member name inside an object; nothing inside an array or at the top. */
static void
key_of(DdpJson *json, const char *key)
{
  if (key)
    json_builder_set_member_name(json->builder, key);
}

void
ddp_json_begin_object(DdpJson *json, const char *key)
{
  key_of(json, key);
  json_builder_begin_object(json->builder);
}

void
ddp_json_end_object(DdpJson *json)
{
  json_builder_end_object(json->builder);
}

void
ddp_json_begin_array(DdpJson *json, const char *key)
{
  key_of(json, key);
  json_builder_begin_array(json->builder);
}

void
ddp_json_end_array(DdpJson *json)
{
  json_builder_end_array(json->builder);
}

void
ddp_json_string(DdpJson *json, const char *key, const char *value)
{
  key_of(json, key);
  if (value)
    json_builder_add_string_value(json->builder, value);
  else
    json_builder_add_null_value(json->builder);
}

void
ddp_json_int(DdpJson *json, const char *key, gint64 value)
{
  key_of(json, key);
  json_builder_add_int_value(json->builder, value);
}

void
ddp_json_uint64(DdpJson *json, const char *key, guint64 value)
{
  key_of(json, key);
  /* json-glib's integers are signed: the bits are kept, and the printer reads them back unsigned */
  JsonNode *node = json_node_init_int(json_node_alloc(), (gint64)value);
  g_hash_table_add(json->unsigned_ints, node);
  json_builder_add_value(json->builder, node);
}

void
ddp_json_double(DdpJson *json, const char *key, double value, int decimals)
{
  g_assert(decimals >= 0 && decimals <= 17);
  key_of(json, key);
  if (!isfinite(value)) {
    json_builder_add_null_value(json->builder);
    return;
  }
  JsonNode *node = json_node_init_double(json_node_alloc(), value);
  g_hash_table_insert(json->decimals, node, GINT_TO_POINTER(decimals + 1));
  json_builder_add_value(json->builder, node);   /* the builder takes the node; it lives in the tree */
}

void
ddp_json_bool(DdpJson *json, const char *key, gboolean value)
{
  key_of(json, key);
  json_builder_add_boolean_value(json->builder, value);
}
