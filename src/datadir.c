/* datadir — finds shipped models and clusters by bare name (see datadir.h). */
#include "datadir.h"

#include <string.h>

static GPtrArray *
search_dirs(const char *subdir)
{
  GPtrArray *dirs = g_ptr_array_new_with_free_func(g_free);
  const char *env = g_getenv("DDPSIM_DATADIR");
  if (env && *env)
    g_ptr_array_add(dirs, g_build_filename(env, subdir, NULL));
  g_ptr_array_add(dirs, g_build_filename(DDP_DATADIR, subdir, NULL));
  g_ptr_array_add(dirs, g_build_filename(DDP_SRCDIR, subdir, NULL));
  return dirs;
}

char *
ddp_datadir_find(const char *name_or_path, const char *subdir, const char *suffix)
{
  if (strchr(name_or_path, '/') || g_file_test(name_or_path, G_FILE_TEST_IS_REGULAR))
    return g_strdup(name_or_path);
  g_autoptr(GPtrArray) dirs = search_dirs(subdir);
  g_autofree char *file = g_strconcat(name_or_path, suffix, NULL);
  for (guint i = 0; i < dirs->len; i++) {
    char *candidate = g_build_filename(dirs->pdata[i], file, NULL);
    if (g_file_test(candidate, G_FILE_TEST_IS_REGULAR))
      return candidate;
    g_free(candidate);
  }
  return NULL;
}

char *
ddp_datadir_find_dir(const char *installed, const char *in_source)
{
  const char *env = g_getenv("DDPSIM_DATADIR");
  char *candidates[] = {
    env && *env ? g_build_filename(env, installed, NULL) : NULL,
    g_build_filename(DDP_DATADIR, installed, NULL),
    g_build_filename(DDP_SRCDIR, in_source, NULL),
  };
  char *found = NULL;
  for (gsize i = 0; i < G_N_ELEMENTS(candidates); i++) {
    if (!found && candidates[i] && g_file_test(candidates[i], G_FILE_TEST_IS_DIR))
      found = g_strdup(candidates[i]);
    g_free(candidates[i]);
  }
  return found;
}

static gint
compare_strings(gconstpointer a, gconstpointer b)
{
  return strcmp(*(const char *const *)a, *(const char *const *)b);
}

char **
ddp_datadir_list(const char *subdir, const char *suffix)
{
  g_autoptr(GPtrArray) dirs = search_dirs(subdir);
  g_autoptr(GHashTable) seen = g_hash_table_new(g_str_hash, g_str_equal);
  GPtrArray *names = g_ptr_array_new();
  for (guint i = 0; i < dirs->len; i++) {
    g_autoptr(GDir) dir = g_dir_open(dirs->pdata[i], 0, NULL);
    const char *entry;
    while (dir && (entry = g_dir_read_name(dir))) {
      if (!g_str_has_suffix(entry, suffix))
        continue;
      char *name = g_strndup(entry, strlen(entry) - strlen(suffix));
      if (g_hash_table_contains(seen, name)) {
        g_free(name);
        continue;
      }
      g_hash_table_add(seen, name);
      g_ptr_array_add(names, name);
    }
  }
  g_ptr_array_sort(names, compare_strings);
  g_ptr_array_add(names, NULL);
  return (char **)g_ptr_array_free(names, FALSE);
}
