/* run-ddpsim — see run-ddpsim.h. */
#define _DEFAULT_SOURCE   /* lstat, behind g_lstat */
#include "run-ddpsim.h"

#include <glib/gstdio.h>
#include <string.h>
#include <sys/stat.h>

void
run_remove_tree(const char *path)
{
  GStatBuf st;
  if (g_lstat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
    g_autoptr(GDir) d = g_dir_open(path, 0, NULL);
    for (const char *name; d && (name = g_dir_read_name(d));) {
      g_autofree char *child = g_build_filename(path, name, NULL);
      run_remove_tree(child);
    }
    g_rmdir(path);
  } else {
    g_unlink(path);
  }
}

void
run_clear(Run *r)
{
  g_clear_pointer(&r->out, g_free);
  g_clear_pointer(&r->err, g_free);
}

void
run_env(Run *r, const char *env_name, const char *env_value, const char *first, ...)
{
  const char *binary = g_getenv("DDPSIM");
  g_assert_nonnull(binary);
  g_autoptr(GPtrArray) argv = g_ptr_array_new();
  g_ptr_array_add(argv, (char *)binary);
  va_list ap;
  va_start(ap, first);
  for (const char *a = first; a; a = va_arg(ap, const char *))
    g_ptr_array_add(argv, (char *)a);
  va_end(ap);
  g_ptr_array_add(argv, NULL);
  g_auto(GStrv) envp = g_get_environ();
  if (env_name)
    envp = g_environ_setenv(envp, env_name, env_value, TRUE);
  g_autoptr(GError) error = NULL;
  int wait_status = 0;
  g_assert_true(g_spawn_sync(NULL, (char **)argv->pdata, envp, G_SPAWN_DEFAULT, NULL, NULL, &r->out, &r->err,
                             &wait_status, &error));
  g_assert_no_error(error);
  /* exit status the GLib way (no <sys/wait.h>): G_SPAWN_EXIT_ERROR carries it as the code */
  g_autoptr(GError) exit_error = NULL;
  if (g_spawn_check_wait_status(wait_status, &exit_error))
    r->status = 0;
  else
    r->status = exit_error->domain == G_SPAWN_EXIT_ERROR ? exit_error->code : 128;
}

void
run_assert_ok(const Run *r)
{
  if (r->status != 0)
    g_error("ddpsim exited %d: %s", r->status, r->err);
}

void
run_assert_one_line_error(const Run *r, int status, const char *must_contain)
{
  g_assert_cmpint(r->status, ==, status);
  g_assert_cmpstr(r->out, ==, "");
  g_assert_true(g_str_has_suffix(r->err, "\n"));
  g_assert_true(strchr(r->err, '\n') == r->err + strlen(r->err) - 1);
  if (!strstr(r->err, must_contain))
    g_error("stderr \"%s\" lacks \"%s\"", r->err, must_contain);
}
