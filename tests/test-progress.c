/* Tests for progress: the line's arithmetic, and — through the real binary ($DDPSIM) with stderr
 * on a pseudo-terminal — that long verbs draw it there and erase it, never on stdout (so --json and
 * --csv stay clean), and that with stderr a pipe nothing is drawn at all. */
#define _DEFAULT_SOURCE
#define _XOPEN_SOURCE 600

#include "progress.h"

#include <errno.h>
#include <glib/gstdio.h>
#include <fcntl.h>
#include <json-glib/json-glib.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* 37 of 108 in 3 s: 12.33/s, (108 − 37) / 12.33 = 5.76 s left */
static void
test_format(void)
{
  g_autofree char *line = ddp_progress_format("sweep", 37, 108, "points", 3.0, NULL);
  g_assert_cmpstr(line, ==, "ddpsim sweep: 37/108 points, 12.3/s, 6 s left");
  g_autofree char *open = ddp_progress_format("solve", 5, 0, "simulations", 2.0, "gpus 64");
  g_assert_cmpstr(open, ==, "ddpsim solve: 5 simulations, 2.5/s (gpus 64)");   /* no total, no time left */
  g_autofree char *slow = ddp_progress_format("tune", 1, 961, "combinations", 10.0, NULL);
  g_assert_cmpstr(slow, ==, "ddpsim tune: 1/961 combinations, 0.1/s, 2.7 h left");
  g_autofree char *first = ddp_progress_format("scale", 0, 8, "GPU counts", 0, NULL);
  g_assert_cmpstr(first, ==, "ddpsim scale: 0/8 GPU counts");
}

/* Not a terminal: nothing drawn, however many steps. */
static void
test_pipe_silent(void)
{
  int fds[2];
  g_assert_cmpint(pipe(fds), ==, 0);
  DdpProgress *p = ddp_progress_new("sweep", 3, "points", fds[1]);
  g_assert_false(ddp_progress_enabled(p));
  for (int i = 0; i < 3; i++)
    ddp_progress_step(p, NULL);
  ddp_progress_free(p);
  close(fds[1]);
  char buffer[16];
  g_assert_cmpint(read(fds[0], buffer, sizeof buffer), ==, 0);
  close(fds[0]);
}

/* Runs $DDPSIM with @args, stdout into *@out; stderr a pseudo-terminal (into *@tty) when @on_tty,
 * else a pipe (into *@tty as well). */
static int
run_binary(const char *binary, const char *const *args, gboolean on_tty, char **out, char **tty)
{
  g_assert_nonnull(binary);
  int master = -1, err_pipe[2] = { -1, -1 }, out_pipe[2];
  const char *slave_name = NULL;
  if (on_tty) {
    master = posix_openpt(O_RDWR | O_NOCTTY);
    g_assert_cmpint(master, >=, 0);
    g_assert_cmpint(grantpt(master), ==, 0);
    g_assert_cmpint(unlockpt(master), ==, 0);
    slave_name = ptsname(master);
    g_assert_nonnull(slave_name);
  } else {
    g_assert_cmpint(pipe(err_pipe), ==, 0);
  }
  g_assert_cmpint(pipe(out_pipe), ==, 0);
  g_autofree char *slave_copy = g_strdup(slave_name);
  pid_t pid = fork();
  g_assert_cmpint(pid, >=, 0);
  if (pid == 0) {
    int err = on_tty ? open(slave_copy, O_RDWR) : err_pipe[1];
    if (err < 0)
      _exit(127);
    dup2(err, STDERR_FILENO);
    dup2(out_pipe[1], STDOUT_FILENO);
    GPtrArray *argv = g_ptr_array_new();
    g_ptr_array_add(argv, (gpointer)binary);
    for (gsize i = 0; args[i]; i++)
      g_ptr_array_add(argv, (gpointer)args[i]);
    g_ptr_array_add(argv, NULL);
    execv(binary, (char **)argv->pdata);
    _exit(127);
  }
  close(out_pipe[1]);
  if (!on_tty)
    close(err_pipe[1]);
  int err_fd = on_tty ? master : err_pipe[0];
  /* read both until the child is done; the terminal side ends with EIO once the child has gone */
  GString *o = g_string_new(NULL), *e = g_string_new(NULL);
  fcntl(out_pipe[0], F_SETFL, O_NONBLOCK);
  fcntl(err_fd, F_SETFL, O_NONBLOCK);
  gboolean out_open = TRUE, err_open = TRUE;
  int status = -1;
  while (out_open || err_open) {
    char buffer[4096];
    ssize_t n;
    gboolean progressed = FALSE;
    while (out_open && (n = read(out_pipe[0], buffer, sizeof buffer)) != 0) {
      if (n < 0) {
        if (errno != EAGAIN)
          out_open = FALSE;
        break;
      }
      g_string_append_len(o, buffer, n);
      progressed = TRUE;
    }
    if (n == 0)
      out_open = FALSE;
    while (err_open && (n = read(err_fd, buffer, sizeof buffer)) != 0) {
      if (n < 0) {
        if (errno != EAGAIN)
          err_open = FALSE;   /* EIO: the terminal's other side is closed */
        break;
      }
      g_string_append_len(e, buffer, n);
      progressed = TRUE;
    }
    if (n == 0)
      err_open = FALSE;
    if (status < 0 && waitpid(pid, &status, WNOHANG) == 0)
      status = -1;
    if (status >= 0 && !progressed && on_tty)
      err_open = FALSE;   /* the child is gone and the terminal is drained */
    if (!progressed)
      g_usleep(2000);
  }
  if (status < 0)
    waitpid(pid, &status, 0);
  close(out_pipe[0]);
  close(err_fd);
  *out = g_string_free(o, FALSE);
  *tty = g_string_free(e, FALSE);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

static int
run_ddpsim(const char *const *args, gboolean on_tty, char **out, char **tty)
{
  return run_binary(g_getenv("DDPSIM"), args, on_tty, out, tty);
}

static void
test_terminal(void)
{
  static const char *const scale[] = { "scale", "--gpus", "1,2,4,8,16", "--iterations", "3", "--json", NULL };
  g_autofree char *out = NULL, *tty = NULL;
  g_assert_cmpint(run_ddpsim(scale, TRUE, &out, &tty), ==, 0);
  /* on the terminal: the line, redrawn in place, then erased */
  g_assert_nonnull(strstr(tty, "\rddpsim scale: 1/5 GPU counts"));
  g_assert_true(g_str_has_suffix(tty, "\r\033[K"));
  /* stdout is JSON and nothing else */
  g_assert_null(strstr(out, "ddpsim scale:"));
  g_assert_null(strchr(out, '\r'));
  g_autoptr(JsonParser) parser = json_parser_new();
  g_assert_true(json_parser_load_from_data(parser, out, -1, NULL));

  static const char *const sweep[] = { "sweep", "--gpus", "8,16", "--seed", "1,2", "--iterations", "3", "--csv", NULL };
  g_autofree char *csv = NULL, *tty2 = NULL;
  g_assert_cmpint(run_ddpsim(sweep, TRUE, &csv, &tty2), ==, 0);
  g_assert_nonnull(strstr(tty2, "ddpsim sweep: 1/4 points"));
  g_assert_true(g_str_has_prefix(csv, "point,model"));
  g_assert_null(strstr(csv, "ddpsim sweep:"));

  static const char *const predict[] = { "predict", "--gpus", "64", "--iterations", "3", "--json", NULL };
  g_autofree char *json = NULL, *tty4 = NULL;
  g_assert_cmpint(run_ddpsim(predict, TRUE, &json, &tty4), ==, 0);
  g_assert_nonnull(strstr(tty4, "\rddpsim predict: 1/3 iterations"));
  g_assert_true(g_str_has_prefix(json, "{"));
  g_assert_null(strstr(json, "ddpsim predict:"));

  static const char *const tune[] = { "tune", "--gpus", "8", "--iterations", "3", "--knobs", "comm-hook", NULL };
  g_autofree char *text = NULL, *tty3 = NULL;
  g_assert_cmpint(run_ddpsim(tune, TRUE, &text, &tty3), ==, 0);
  g_assert_nonnull(strstr(tty3, "ddpsim tune: 1/3 combinations"));
}

/* stderr a pipe: silence, the same stdout */
static void
test_not_terminal(void)
{
  static const char *const scale[] = { "scale", "--gpus", "1,2,4,8,16", "--iterations", "3", "--json", NULL };
  g_autofree char *out = NULL, *err = NULL;
  g_assert_cmpint(run_ddpsim(scale, FALSE, &out, &err), ==, 0);
  g_assert_cmpstr(err, ==, "");
  g_autofree char *out_tty = NULL, *tty = NULL;
  g_assert_cmpint(run_ddpsim(scale, TRUE, &out_tty, &tty), ==, 0);
  g_assert_cmpstr(out, ==, out_tty);   /* the terminal changes nothing on stdout */
}

/* -o and --plot say on stderr what they wrote, whatever stderr is (a pipe here); the sweep names
 * its best point that fits. */
static void
test_says_what_it_wrote(void)
{
  g_autofree char *dir = g_dir_make_tmp("ddpsim-progress-XXXXXX", NULL);
  g_autofree char *csv = g_build_filename(dir, "grid.csv", NULL);
  const char *sweep[] = { "sweep", "--gpus", "8,16", "--iterations", "2", "-o", csv, NULL };
  g_autofree char *out = NULL, *err = NULL;
  g_assert_cmpint(run_binary(g_getenv("DDPSIM"), sweep, FALSE, &out, &err), ==, 0);
  g_autofree char *expect = g_strdup_printf("ddpsim sweep: wrote %s; fastest point 1 (gpus 16) at ", csv);
  g_assert_true(g_str_has_prefix(err, expect));
  g_assert_cmpstr(out, ==, "");
  g_autofree char *gnuplot = g_find_program_in_path("gnuplot");
  if (gnuplot) {
    g_autofree char *svg = g_build_filename(dir, "s.svg", NULL);
    const char *scale[] = { "scale", "--gpus", "8,16", "--iterations", "2", "--json", "--plot", svg, NULL };
    g_autofree char *json = NULL, *said = NULL;
    g_assert_cmpint(run_binary(g_getenv("DDPSIM"), scale, FALSE, &json, &said), ==, 0);
    g_autofree char *wrote = g_strdup_printf("ddpsim scale: wrote %s\n", svg);
    g_assert_cmpstr(said, ==, wrote);
    g_assert_true(g_str_has_prefix(json, "{"));   /* stdout stays the JSON alone */
    g_remove(svg);
  }
  g_remove(csv);
  g_rmdir(dir);
}

/* ddpsim-calibrate (its C half against the deterministic stand-in for CUDA): the line on the
 * terminal while stdout, where the measured rows go, is a pipe. */
static void
test_calibrate(void)
{
  g_autofree char *binary = g_build_filename(DDP_BUILDDIR, "calibrate", "ddpsim-calibrate-fake", NULL);
  g_autofree char *dir = g_dir_make_tmp("ddpsim-progress-XXXXXX", NULL);
  g_autofree char *db = g_build_filename(dir, "c.db", NULL);
  const char *args[] = { "--db", db, "--max-bytes", "1M", "--variants", "auto", "--skip", "kernels,copy", NULL };
  g_autofree char *out = NULL, *tty = NULL;
  int status = run_binary(binary, args, TRUE, &out, &tty);
  if (status != 0)
    g_test_message("stdout:\n%s\nterminal:\n%s", out, tty);
  g_assert_cmpint(status, ==, 0);
  g_assert_nonnull(strstr(tty, "\rddpsim calibrate: 1/"));
  g_assert_null(strstr(out, "ddpsim calibrate:"));
  g_autoptr(GDir) d = g_dir_open(dir, 0, NULL);   /* the database and its -wal/-shm files */
  for (const char *name; d && (name = g_dir_read_name(d));) {
    g_autofree char *path = g_build_filename(dir, name, NULL);
    g_remove(path);
  }
  g_rmdir(dir);
}

int
main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_setenv("DDPSIM_DATADIR", DDP_SRCDIR, TRUE);
  g_test_add_func("/progress/format", test_format);
  g_test_add_func("/progress/pipe-silent", test_pipe_silent);
  g_test_add_func("/progress/terminal", test_terminal);
  g_test_add_func("/progress/not-terminal", test_not_terminal);
  g_test_add_func("/progress/calibrate", test_calibrate);
  g_test_add_func("/progress/says-what-it-wrote", test_says_what_it_wrote);
  return g_test_run();
}
