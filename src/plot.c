/* plot — running a static gnuplot script on data files ddpsim writes (see plot.h).
 *
 * Why gnuplot is a child process and not a library: it is the tool users already have and can
 * restyle with; linking a plotting library would tie the look to our code.  Why atomic output:
 * gnuplot opens the output at `set output` and fills it as it draws, so a script error half-way
 * would leave a truncated PNG under the user's name.  It draws into the data directory — a private
 * one removed afterwards, or the --plot-data directory the caller keeps — so an interrupted run
 * leaves nothing beside the output; only after gnuplot exited 0 and wrote something is the image
 * written beside the output and renamed into place (ddp_file_write: same file system, atomic). */
#include "config.h"

#include "plot.h"

#include "fileio.h"

#include "datadir.h"

#include <errno.h>
#include <math.h>
#include <glib/gstdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef GNUPLOT_DEFAULT
#define GNUPLOT_DEFAULT "gnuplot"
#endif

G_DEFINE_QUARK(ddp-plot-error-quark, ddp_plot_error)

gboolean
ddp_plot_error_is_input(const GError *error)
{
  return g_error_matches(error, DDP_PLOT_ERROR, DDP_PLOT_ERROR_FORMAT) ||
         g_error_matches(error, DDP_PLOT_ERROR, DDP_PLOT_ERROR_NO_GNUPLOT) ||
         g_error_matches(error, DDP_PLOT_ERROR, DDP_PLOT_ERROR_PATH);
}

/**
 * ddp_plot_check_paths:
 * See plot.h.  Checked before the simulation runs, so a bad path costs nothing and leaves
 * nothing behind; ddp_plot_render checks again (it may be called without the verb checking).
 */
gboolean
ddp_plot_check_paths(const char *output_flag, const char *output, const char *dir_flag, const char *keep_dir,
                     GError **error)
{
  GStatBuf st;
  g_autoptr(GError) local = NULL;
  if (!ddp_file_check_output(output_flag, output, &local)) {
    g_set_error_literal(error, DDP_PLOT_ERROR, DDP_PLOT_ERROR_PATH, local->message);
    return FALSE;
  }
  if (!keep_dir)
    return TRUE;
  /* the directory itself is made if missing (one level, as mkdir), in a directory that exists */
  gboolean exists = g_stat(keep_dir, &st) == 0;
  if (exists && !S_ISDIR(st.st_mode)) {
    g_set_error(error, DDP_PLOT_ERROR, DDP_PLOT_ERROR_PATH, "%s: \"%s\" exists and is not a directory", dir_flag, keep_dir);
    return FALSE;
  }
  g_autofree char *parent = g_path_get_dirname(keep_dir);
  if (!exists && (g_stat(parent, &st) != 0 || !S_ISDIR(st.st_mode))) {
    g_set_error(error, DDP_PLOT_ERROR, DDP_PLOT_ERROR_PATH, "%s: \"%s\": the directory \"%s\" it would go in does not exist",
                dir_flag, keep_dir, parent);
    return FALSE;
  }
  if (g_access(exists ? keep_dir : parent, W_OK | X_OK) != 0) {
    int saved = errno;
    g_set_error(error, DDP_PLOT_ERROR, DDP_PLOT_ERROR_PATH, "%s: \"%s\": cannot write there: %s", dir_flag, keep_dir,
                g_strerror(saved));
    return FALSE;
  }
  return TRUE;
}

/**
 * ddp_plot_format_from_path:
 * @path: the output file name the user gave
 * @option: the flag it came from, for the message
 * Returns: TRUE and *format; FALSE with DDP_PLOT_ERROR_FORMAT for any other extension.
 */
gboolean
ddp_plot_format_from_path(const char *path, const char *option, DdpPlotFormat *format, GError **error)
{
  const char *dot = strrchr(path, '.');
  const char *slash = strrchr(path, '/');
  if (dot && (!slash || dot > slash + 1)) {
    if (g_ascii_strcasecmp(dot, ".png") == 0) {
      *format = DDP_PLOT_PNG;
      return TRUE;
    }
    if (g_ascii_strcasecmp(dot, ".svg") == 0) {
      *format = DDP_PLOT_SVG;
      return TRUE;
    }
  }
  g_set_error(error, DDP_PLOT_ERROR, DDP_PLOT_ERROR_FORMAT,
              "%s: \"%s\": the file name must end in .png or .svg (that chooses the format)", option, path);
  return FALSE;
}

/**
 * ddp_plot_find_gnuplot:
 * Returns: (transfer full) the absolute path of gnuplot ($DDPSIM_GNUPLOT, else the configure-time
 * GNUPLOT_DEFAULT), or NULL with DDP_PLOT_ERROR_NO_GNUPLOT naming what was looked for.
 */
char *
ddp_plot_find_gnuplot(GError **error)
{
  const char *env = g_getenv("DDPSIM_GNUPLOT");
  const char *wanted = env && *env ? env : GNUPLOT_DEFAULT;
  char *found = g_find_program_in_path(wanted);
  if (!found)
    g_set_error(error, DDP_PLOT_ERROR, DDP_PLOT_ERROR_NO_GNUPLOT,
                "gnuplot not found (\"%s\"): install it (Debian: apt-get install gnuplot-nox) or set DDPSIM_GNUPLOT",
                wanted);
  return found;
}

/**
 * ddp_plot_find_script:
 * Returns: (transfer full) the path of plots/@script.gp, or NULL with DDP_PLOT_ERROR_NO_SCRIPT.
 */
char *
ddp_plot_find_script(const char *script, GError **error)
{
  char *path = ddp_datadir_find(script, "plots", ".gp");
  if (!path || !g_file_test(path, G_FILE_TEST_IS_REGULAR)) {
    g_set_error(error, DDP_PLOT_ERROR, DDP_PLOT_ERROR_NO_SCRIPT,
                "plot script plots/%s.gp not found under $DDPSIM_DATADIR, %s or %s (broken installation?)", script,
                DDP_DATADIR, DDP_SRCDIR);
    g_free(path);
    return NULL;
  }
  return path;
}

/* One variable of params.gp, kept in insertion order so that params.gp is deterministic. */
typedef struct {
  char *name;
  char *definition;   /* gnuplot text after "name" (" = value" or "[n]" + element lines) */
  char *data;         /* contents of NAME.dat for data variables, else NULL */
} Variable;

struct _DdpPlot {
  char *script;
  GArray *vars;       /* of Variable */
};

static void
variable_clear(gpointer p)
{
  Variable *v = p;
  g_free(v->name);
  g_free(v->definition);
  g_free(v->data);
}

DdpPlot *
ddp_plot_new(const char *script)
{
  DdpPlot *plot = g_new0(DdpPlot, 1);
  plot->script = g_strdup(script);
  plot->vars = g_array_new(FALSE, TRUE, sizeof(Variable));
  g_array_set_clear_func(plot->vars, variable_clear);
  return plot;
}

void
ddp_plot_free(DdpPlot *plot)
{
  if (!plot)
    return;
  g_free(plot->script);
  g_array_unref(plot->vars);
  g_free(plot);
}

static gboolean
is_identifier(const char *name)
{
  if (!g_ascii_isalpha(*name) && *name != '_')
    return FALSE;
  for (const char *p = name; *p; p++)
    if (!g_ascii_isalnum(*p) && *p != '_')
      return FALSE;
  return TRUE;
}

/* A gnuplot double-quoted string: backslash escapes are interpreted there, so \ and " are escaped
 * and control characters become spaces (a newline is kept as \n: titles may have two lines). */
static void
append_quoted(GString *out, const char *value)
{
  g_string_append_c(out, '"');
  for (const unsigned char *p = (const unsigned char *)value; *p; p++) {
    if (*p == '"' || *p == '\\') {
      g_string_append_c(out, '\\');
      g_string_append_c(out, (char)*p);
    } else if (*p == '\n') {
      g_string_append(out, "\\n");
    } else if (*p < 0x20 || *p == 0x7f) {
      g_string_append_c(out, ' ');
    } else {
      g_string_append_c(out, (char)*p);
    }
  }
  g_string_append_c(out, '"');
}

static char *
quoted(const char *value)
{
  GString *out = g_string_new(NULL);
  append_quoted(out, value);
  return g_string_free(out, FALSE);
}

static Variable *
variable_slot(DdpPlot *plot, const char *name)
{
  g_assert(is_identifier(name));
  for (guint i = 0; i < plot->vars->len; i++) {
    Variable *v = &g_array_index(plot->vars, Variable, i);
    if (strcmp(v->name, name) == 0) {
      g_clear_pointer(&v->definition, g_free);
      g_clear_pointer(&v->data, g_free);
      return v;
    }
  }
  g_array_set_size(plot->vars, plot->vars->len + 1);
  Variable *v = &g_array_index(plot->vars, Variable, plot->vars->len - 1);
  v->name = g_strdup(name);
  return v;
}

void
ddp_plot_set_string(DdpPlot *plot, const char *name, const char *value)
{
  Variable *v = variable_slot(plot, name);
  g_autofree char *q = quoted(value);
  v->definition = g_strdup_printf("%s = %s\n", name, q);
}

void
ddp_plot_set_number(DdpPlot *plot, const char *name, double value)
{
  Variable *v = variable_slot(plot, name);
  if (!isfinite(value)) {
    v->definition = g_strdup_printf("%s = NaN\n", name);   /* gnuplot's own not-a-number */
    return;
  }
  char buf[G_ASCII_DTOSTR_BUF_SIZE];
  g_ascii_formatd(buf, sizeof buf, "%.17g", value);
  /* gnuplot reads 3 as an integer and 3/2 as 1: keep numbers floating */
  gboolean integral = strspn(buf, "-0123456789") == strlen(buf);
  v->definition = g_strdup_printf("%s = %s%s\n", name, buf, integral ? ".0" : "");
}

void
ddp_plot_set_strings(DdpPlot *plot, const char *name, const char *const *values, guint n)
{
  Variable *v = variable_slot(plot, name);
  GString *out = g_string_new(NULL);
  /* gnuplot has no empty arrays; a one-element array holding "" stands for none */
  g_string_append_printf(out, "array %s[%u]\n", name, MAX(n, 1));
  if (n == 0)
    g_string_append_printf(out, "%s[1] = \"\"\n", name);
  for (guint i = 0; i < n; i++) {
    g_string_append_printf(out, "%s[%u] = ", name, i + 1);
    append_quoted(out, values[i]);
    g_string_append_c(out, '\n');
  }
  v->definition = g_string_free(out, FALSE);
}

void
ddp_plot_set_data(DdpPlot *plot, const char *name, const char *text)
{
  Variable *v = variable_slot(plot, name);
  v->data = g_strdup(text);
}

/* Writes NAME.dat files and params.gp into @dir.  @output_path is the default output_file. */
static gboolean
write_inputs(const DdpPlot *plot, const char *dir, const char *script, const char *output_path, GError **error)
{
  GString *params = g_string_new(NULL);
  g_string_append_printf(params, "# Written by ddpsim for plots/%s.gp.  Redraw (or restyle a copy of the script) with:\n"
                                 "#   gnuplot %s/params.gp %s\n"
                                 "# and -e 'output_file=\"other.svg\"' before params.gp to draw elsewhere.\n",
                         plot->script, dir, script);
  g_string_append(params, "if (!exists(\"output_file\")) output_file = ");
  append_quoted(params, output_path);
  g_string_append_c(params, '\n');
  gboolean ok = TRUE;
  for (guint i = 0; ok && i < plot->vars->len; i++) {
    const Variable *v = &g_array_index(plot->vars, Variable, i);
    if (v->data) {
      g_autofree char *file = g_strconcat(v->name, ".dat", NULL);
      g_autofree char *path = g_build_filename(dir, file, NULL);
      ok = ddp_file_write("--plot-data", path, v->data, strlen(v->data), error);
      g_string_append_printf(params, "%s = ", v->name);
      append_quoted(params, path);
      g_string_append_c(params, '\n');
    } else {
      g_string_append(params, v->definition);
    }
  }
  if (ok) {
    g_autofree char *path = g_build_filename(dir, "params.gp", NULL);
    ok = ddp_file_write("--plot-data", path, params->str, params->len, error);
  }
  g_string_free(params, TRUE);
  if (!ok)
    g_prefix_error(error, "cannot write plot data: ");
  return ok;
}

/* Removes the files write_inputs() wrote, then @dir itself. */
static void
remove_inputs(const DdpPlot *plot, const char *dir)
{
  for (guint i = 0; i < plot->vars->len; i++) {
    const Variable *v = &g_array_index(plot->vars, Variable, i);
    if (v->data) {
      g_autofree char *file = g_strconcat(v->name, ".dat", NULL);
      g_autofree char *path = g_build_filename(dir, file, NULL);
      g_unlink(path);
    }
  }
  g_autofree char *params = g_build_filename(dir, "params.gp", NULL);
  g_unlink(params);
  g_rmdir(dir);
}

/* The first line of gnuplot's stderr that says what went wrong, for a one-line error.  gnuplot
 * echoes the offending command and a caret before the '"file" line N: message' line, so that
 * line is preferred; else the last non-blank line. */
static char *
gnuplot_complaint(const char *err)
{
  g_auto(GStrv) lines = g_strsplit(err ? err : "", "\n", -1);
  const char *last = NULL;
  for (char **l = lines; *l; l++) {
    g_strstrip(*l);
    if (**l == '\0' || strcmp(*l, "^") == 0)
      continue;
    if (strstr(*l, " line ") && (**l == '"' || g_str_has_prefix(*l, "line ")))
      return g_strdup(*l);
    last = *l;
  }
  return g_strdup(last ? last : "no message");
}

/**
 * ddp_plot_render:
 * @plot: what to draw
 * @output_path: the .png or .svg to (re)place
 * @keep_dir: (nullable) where to leave the data files and params.gp; NULL: a temporary directory
 * Returns: TRUE when @output_path is the complete new image; FALSE with @error and @output_path
 * untouched otherwise.
 */
gboolean
ddp_plot_render(DdpPlot *plot, const char *output_flag, const char *output_path, const char *keep_dir, GError **error)
{
  DdpPlotFormat format;
  if (!ddp_plot_format_from_path(output_path, output_flag, &format, error))
    return FALSE;
  g_autofree char *gnuplot = ddp_plot_find_gnuplot(error);
  if (!gnuplot)
    return FALSE;
  g_autofree char *script = ddp_plot_find_script(plot->script, error);
  if (!script || !ddp_plot_check_paths(output_flag, output_path, "--plot-data", keep_dir, error))
    return FALSE;
  /* gnuplot runs in the data directory; the script and output must not depend on our cwd */
  g_autofree char *script_abs = g_canonicalize_filename(script, NULL);
  g_autofree char *output_abs = g_canonicalize_filename(output_path, NULL);

  g_autoptr(GError) local = NULL;
  g_autofree char *dir = NULL;
  if (keep_dir) {
    dir = g_canonicalize_filename(keep_dir, NULL);
    if (g_mkdir(dir, 0777) != 0 && errno != EEXIST) {
      int saved = errno;
      g_set_error(error, DDP_PLOT_ERROR, DDP_PLOT_ERROR_PATH, "--plot-data: cannot create \"%s\": %s", keep_dir,
                  g_strerror(saved));
      return FALSE;
    }
  } else if (!(dir = g_dir_make_tmp("ddpsim-plot-XXXXXX", &local))) {
    g_set_error(error, DDP_PLOT_ERROR, DDP_PLOT_ERROR_OUTPUT, "cannot create a temporary directory: %s",
                local->message);
    return FALSE;
  }
  if (!write_inputs(plot, dir, script_abs, output_abs, &local)) {
    /* the user's directory cannot be written: bad input; our temporary one: not theirs */
    g_set_error_literal(error, DDP_PLOT_ERROR, keep_dir ? DDP_PLOT_ERROR_PATH : DDP_PLOT_ERROR_OUTPUT, local->message);
    if (!keep_dir)
      remove_inputs(plot, dir);
    return FALSE;
  }

  /* gnuplot draws into the data directory, not beside the output: the seconds it runs leave
   * nothing in the user's directory if the run is interrupted; the image is then written
   * beside the output and renamed into place (ddp_file_write). */
  g_autofree char *image = g_build_filename(dir, format == DDP_PLOT_SVG ? "image.svg" : "image.png", NULL);
  GString *preset = g_string_new("output_file = ");
  append_quoted(preset, image);
  g_string_append_printf(preset, "; output_format = \"%s\"", format == DDP_PLOT_SVG ? "svg" : "png");
  g_autofree char *params = g_build_filename(dir, "params.gp", NULL);
  char *argv[] = { gnuplot, (char *)"-e", preset->str, params, script_abs, NULL };
  g_autofree char *out = NULL, *err = NULL;
  int wait_status = 0;
  gboolean ok = g_spawn_sync(dir, argv, NULL, G_SPAWN_STDIN_FROM_DEV_NULL, NULL, NULL, &out, &err, &wait_status,
                             &local);
  g_string_free(preset, TRUE);
  g_autofree char *bytes = NULL;
  gsize length = 0;
  if (!ok) {
    gboolean missing = g_error_matches(local, G_SPAWN_ERROR, G_SPAWN_ERROR_NOENT);
    g_set_error(error, DDP_PLOT_ERROR, missing ? DDP_PLOT_ERROR_NO_GNUPLOT : DDP_PLOT_ERROR_GNUPLOT,
                "cannot run gnuplot (\"%s\"): %s", gnuplot, local->message);
  } else if (!g_spawn_check_wait_status(wait_status, NULL)) {
    g_autofree char *complaint = gnuplot_complaint(err);
    g_set_error(error, DDP_PLOT_ERROR, DDP_PLOT_ERROR_GNUPLOT, "gnuplot failed on %s: %s", script_abs, complaint);
    ok = FALSE;
  } else if (!g_file_get_contents(image, &bytes, &length, NULL) || length == 0) {
    g_set_error(error, DDP_PLOT_ERROR, DDP_PLOT_ERROR_GNUPLOT, "gnuplot wrote nothing for %s (%s)", output_path,
                script_abs);
    ok = FALSE;
  } else if (!ddp_file_write(output_flag, output_path, bytes, length, &local)) {
    /* a read-only or full file system, or the target turned into a device or link: the user's */
    g_set_error_literal(error, DDP_PLOT_ERROR, DDP_PLOT_ERROR_PATH, local->message);
    ok = FALSE;
  }
  g_unlink(image);
  if (!keep_dir)
    remove_inputs(plot, dir);
  return ok;
}
