/* plot — gnuplot at the edge: ddpsim writes data files and a small file of
 * gnuplot variables, and runs a static script from plots/ on them, so users can restyle a plot by
 * editing the script (or a copy) and re-running it on the same data (`--plot-data DIR` keeps them).
 * The output is written atomically: gnuplot draws into a temporary file beside the output, which
 * is renamed over it only when gnuplot succeeded, so a failed run leaves no half-written image.
 *
 * How gnuplot is run:  gnuplot -e 'output_file="TMP"; output_format="png"' DATADIR/params.gp SCRIPT
 * with the working directory DATADIR.  gnuplot is $DDPSIM_GNUPLOT when set, else the program
 * configure found (GNUPLOT_DEFAULT, "gnuplot"); scripts are found as plots/NAME.gp under
 * $DDPSIM_DATADIR, the installed $(pkgdatadir), then the source tree (datadir.h).
 *
 * What each shipped script reads (params.gp defines every variable; "file" variables hold the path
 * of a data file written beside it; data files are whitespace-separated, '#' comments, strings in
 * double quotes):
 *
 *   timeline.gp — see cmd-timeline.c, which is its only producer.
 *
 *   scaling.gp  — variables: plot_title (string), data (file), optionally efficiency_label
 *                 (string: the left axis label, naming weak or strong scaling).  data: one row
 *                 per GPU count, ascending:  gpus nodes iteration_ms scaling_efficiency
 *                 exposed_comm_ms (efficiency as a fraction 0–1).  Draws efficiency (left axis, %) and iteration
 *                 and exposed-communication time (right axis, ms) against GPUs on a log2 x axis.
 *
 *   buckets.gp  — variables: plot_title (string), data (file), and optionally first_bucket_mbs
 *                 (string: the blocks' first-bucket sizes, "1 4 16"), best_bucket_cap_mb and
 *                 best_first_bucket_mb (numbers; when absent the row with the least time).
 *                 data: one block per first-bucket size, caps ascending:
 *                 first_bucket_mb bucket_cap_mb iteration_ms.  Draws iteration time against
 *                 bucket_cap_mb (log2 x axis, power-of-two ticks), one line per first-bucket size,
 *                 the fastest point marked and PyTorch's default 25 as a dashed line.
 *
 * Typical use (`ddpsim scale --plot scaling.png`):
 *
 *   g_autoptr(DdpPlot) plot = ddp_plot_new("scaling");
 *   ddp_plot_set_string(plot, "plot_title", "resnet50 on dgx-a100, weak scaling");
 *   ddp_plot_set_data(plot, "data", rows_text);
 *   if (!ddp_plot_render(plot, "--plot", "scaling.png", NULL, &error))
 *     return ddp_cmd_fail("scale", error);
 */
#ifndef DDP_PLOT_H
#define DDP_PLOT_H

#include <glib.h>

#define DDP_PLOT_ERROR (ddp_plot_error_quark())
GQuark ddp_plot_error_quark(void);
typedef enum {
  DDP_PLOT_ERROR_FORMAT,      /* output name is not .png or .svg (bad input: exit 2) */
  DDP_PLOT_ERROR_NO_GNUPLOT,  /* gnuplot is not installed where we look (exit 2, one clear line) */
  DDP_PLOT_ERROR_NO_SCRIPT,   /* plots/NAME.gp not found: a broken installation */
  DDP_PLOT_ERROR_GNUPLOT,     /* gnuplot ran and failed; the message quotes its first error line */
  DDP_PLOT_ERROR_OUTPUT,      /* the output or data directory cannot be written */
  DDP_PLOT_ERROR_PATH,        /* the output or data path the user gave cannot be one (exit 2) */
} DdpPlotError;

/* TRUE for the errors that are the user's to fix (FORMAT, NO_GNUPLOT), which the command runner
 * reports with exit status 2; the others are exit 1. */
gboolean ddp_plot_error_is_input(const GError *error);

typedef enum { DDP_PLOT_PNG, DDP_PLOT_SVG } DdpPlotFormat;

/* The format an output file name asks for, by extension (.png or .svg, case-insensitive).
 * @option names the flag in the error ("-o", "--plot").  FALSE with DDP_PLOT_ERROR_FORMAT else. */
gboolean ddp_plot_format_from_path(const char *path, const char *option, DdpPlotFormat *format, GError **error);

/* The gnuplot program that will run: $DDPSIM_GNUPLOT, else GNUPLOT_DEFAULT, resolved on $PATH.
 * Returns: (transfer full) its path, or NULL with DDP_PLOT_ERROR_NO_GNUPLOT.  Verbs call this
 * before simulating so that a missing gnuplot fails at once. */
char *ddp_plot_find_gnuplot(GError **error);

typedef struct _DdpPlot DdpPlot;

/* A plot drawn by plots/@script.gp ("timeline", "scaling", "buckets").  Free with ddp_plot_free(). */
DdpPlot *ddp_plot_new(const char *script);
void ddp_plot_free(DdpPlot *plot);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(DdpPlot, ddp_plot_free)

/* Defines gnuplot variable @name (an identifier) in params.gp.  Strings are quoted for gnuplot;
 * numbers are written with %.17g.  Setting a name again replaces it.  @value is copied. */
void ddp_plot_set_string(DdpPlot *plot, const char *name, const char *value);
void ddp_plot_set_number(DdpPlot *plot, const char *name, double value);
/* A gnuplot array @name[1..n] of strings (gnuplot arrays start at 1). */
void ddp_plot_set_strings(DdpPlot *plot, const char *name, const char *const *values, guint n);
/* A data file: @text is written to NAME.dat and variable @name holds its path.  @text is copied. */
void ddp_plot_set_data(DdpPlot *plot, const char *name, const char *text);

/* Renders to @output_path (.png or .svg; the verb's flag @output_flag names it in errors)
 * atomically.  When @keep_dir (--plot-data) is not NULL the data files and params.gp are written
 * there (the directory made if missing, in one that exists) and left for the user, params.gp naming
 * @output_path as output_file so that `gnuplot KEEP_DIR/params.gp SCRIPT` redraws it; else they
 * go to a temporary directory removed afterwards.  Returns FALSE with @error (DDP_PLOT_ERROR) and
 * no file at @output_path touched when anything fails. */
gboolean ddp_plot_render(DdpPlot *plot, const char *output_flag, const char *output_path, const char *keep_dir,
                         GError **error);

/* The path of the script that ddp_plot_render() would run (transfer full), or NULL with
 * DDP_PLOT_ERROR_NO_SCRIPT. */
char *ddp_plot_find_script(const char *script, GError **error);

/* Checks the paths a verb was given before any work: @output (flag @output_flag) must be in an
 * existing directory and not be a directory or other non-regular file; @keep_dir (nullable, flag
 * @dir_flag) must be a writable directory, or be missing from a writable directory that exists.
 * FALSE with DDP_PLOT_ERROR_PATH (bad input). */
gboolean ddp_plot_check_paths(const char *output_flag, const char *output, const char *dir_flag,
                              const char *keep_dir, GError **error);

#endif
