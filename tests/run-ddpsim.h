/* run-ddpsim — the end-to-end tests' way to run the real binary ($DDPSIM) and capture its exit
 * status, stdout and stderr. */
#ifndef DDP_TEST_RUN_DDPSIM_H
#define DDP_TEST_RUN_DDPSIM_H

#include <glib.h>

typedef struct {
  int status;       /* exit status; 128 when killed by a signal */
  char *out, *err;
} Run;

void run_clear(Run *r);
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC(Run, run_clear)

/* Runs $DDPSIM with @env_name=@env_value added to the environment (when not NULL) and a
 * NULL-terminated argument list; fills @r (clear it with run_clear or g_auto(Run)). */
void run_env(Run *r, const char *env_name, const char *env_value, const char *first, ...) G_GNUC_NULL_TERMINATED;
#define run(r, ...) run_env((r), NULL, NULL, __VA_ARGS__)

/* Removes @path and, for a directory, everything below it; links are removed, never followed. */
void run_remove_tree(const char *path);

/* Fails the test with its stderr unless @r exited 0. */
void run_assert_ok(const Run *r);
/* Asserts @r exited @status with nothing on stdout and exactly one stderr line containing
 * @must_contain: the project's contract for bad input (DESIGN: one line, exit 2). */
void run_assert_one_line_error(const Run *r, int status, const char *must_contain);

#endif
