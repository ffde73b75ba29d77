/* fuzz — what the libFuzzer harnesses share (tests/fuzz/README.md).
 *
 * Each harness feeds one ddpsim parser the fuzzer's bytes exactly as a user's file or flag would
 * reach it, and checks the contract of issue 11 beyond "no crash": a refused input comes back as
 * one GError whose message is a single non-empty line; an accepted one holds values inside the
 * ranges of src/ranges.h.  A broken contract aborts, which libFuzzer reports like a crash. */
#ifndef DDP_FUZZ_H
#define DDP_FUZZ_H

#include <glib.h>
#include <glib/gstdio.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "keyfile.h"
#include "ranges.h"

#define FUZZ_REQUIRE(cond) \
  do {                     \
    if (!(cond))           \
      abort();             \
  } while (0)

/* The bytes as a file's text, or NULL when they hold a NUL byte (ddp_range_read_file refuses
 * those before any parser sees them).  Free with g_free(). */
static inline char *
fuzz_text(const uint8_t *data, size_t size)
{
  if (memchr(data, '\0', size))
    return NULL;
  char *text = g_malloc(size + 1);
  memcpy(text, data, size);
  text[size] = '\0';
  return text;
}

/* A refused input: exactly one error, one non-empty line. */
static inline void
fuzz_check_error(const GError *error)
{
  FUZZ_REQUIRE(error != NULL && error->message != NULL && error->message[0] != '\0');
  FUZZ_REQUIRE(strchr(error->message, '\n') == NULL);
}

/* The bytes as key-file text named @name (the parser's first stage), or NULL when they hold a NUL
 * byte or the key-file parser refused them (the refusal checked as fuzz_check_error does). */
static inline DdpKeyFile *
fuzz_keyfile(const uint8_t *data, size_t size, const char *name)
{
  g_autofree char *text = fuzz_text(data, size);
  if (!text)
    return NULL;
  g_autoptr(GError) error = NULL;
  DdpKeyFile *kf = ddp_keyfile_load_data(name, text, &error);
  if (!kf)
    fuzz_check_error(error);
  return kf;
}

/* The bytes written to this process's scratch file (for parsers that take a path); the path is
 * reused by every run of the process. */
static inline const char *
fuzz_file(const uint8_t *data, size_t size, const char *name)
{
  static char *dir;
  if (!dir)
    dir = g_dir_make_tmp("ddpsim-fuzz-XXXXXX", NULL);
  FUZZ_REQUIRE(dir != NULL);
  char *path = g_build_filename(dir, name, NULL);
  /* plain stdio: g_file_set_contents() fsyncs a replaced file, which would dominate each run */
  FILE *f = fopen(path, "wb");
  FUZZ_REQUIRE(f != NULL && fwrite(data, 1, size, f) == size && fclose(f) == 0);
  static GHashTable *paths;   /* name → path, kept for the process */
  if (!paths)
    paths = g_hash_table_new(g_str_hash, g_str_equal);
  char *kept = g_hash_table_lookup(paths, name);
  if (kept) {
    g_free(path);
    return kept;
  }
  g_hash_table_insert(paths, g_strdup(name), path);
  return path;
}

#endif
