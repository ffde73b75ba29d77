/* jsonout — ddpsim's --json documents, built as a json-glib tree (JsonBuilder) in the order the
 * calls come.  json-glib's generator prints doubles with 17 significant digits (0.1 →
 * 0.10000000000000001); users diff and read our output, so the tree is printed with each number's
 * fixed decimals, trailing zeros trimmed (jsonout.c says how).  Parsing (tests) uses json-glib. */
#ifndef DDP_JSONOUT_H
#define DDP_JSONOUT_H

#include <glib.h>

typedef struct _DdpJson DdpJson;

DdpJson *ddp_json_new(void);
/* Returns the document (pretty-printed, 2-space indent, trailing newline) and frees the writer. */
char *ddp_json_free_to_string(DdpJson *json);
/* The same on one line without spaces (a JSON-lines record), trailing newline; frees the writer. */
char *ddp_json_free_to_line(DdpJson *json);

/* @key is the member name inside an object, NULL inside an array or at the top. */
void ddp_json_begin_object(DdpJson *json, const char *key);
void ddp_json_end_object(DdpJson *json);
void ddp_json_begin_array(DdpJson *json, const char *key);
void ddp_json_end_array(DdpJson *json);
void ddp_json_string(DdpJson *json, const char *key, const char *value);
void ddp_json_int(DdpJson *json, const char *key, gint64 value);
/* An unsigned 64-bit integer written exactly (a seed of 2^64 − 1). */
void ddp_json_uint64(DdpJson *json, const char *key, guint64 value);
/* Non-finite values are written as null. */
void ddp_json_double(DdpJson *json, const char *key, double value, int decimals);
void ddp_json_bool(DdpJson *json, const char *key, gboolean value);

#endif
