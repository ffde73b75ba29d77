/* cmd — the command table: one verb per file (cmd-predict.c, cmd-buckets.c, …), each parsing its
 * own GOptionContext into a struct.  Only main() and the verbs print errors and pick exit codes:
 * 0 success, 2 bad input (one line: file:line: key: what is wrong), 1 internal error. */
#ifndef DDP_CMD_H
#define DDP_CMD_H

#include <glib.h>
#include "scenario.h"

enum { DDP_EXIT_OK = 0, DDP_EXIT_INTERNAL = 1, DDP_EXIT_INPUT = 2, DDP_EXIT_OOM = 3 /* predict: does not fit */ };

typedef int (*DdpCommandRun)(int argc, char **argv);

typedef struct {
  const char *name;
  DdpCommandRun run;
  const char *summary;
} DdpCommand;

/* The table, terminated by a NULL name. */
const DdpCommand *ddp_commands(void);

/* Prints "ddpsim VERB: MESSAGE" on stderr and returns the exit code for @error: 2 for bad input
 * (any error of an input-loading domain), 1 otherwise. */
int ddp_cmd_fail(const char *verb, const GError *error);

#define DDP_CMD_ERROR (ddp_cmd_error_quark())
GQuark ddp_cmd_error_quark(void);

/* Parses @argv for @verb: @own entries plus, when @cli is not NULL, the common flags; when
 * @scenario_path is not NULL one positional scenario file is allowed. */
gboolean ddp_cmd_parse(const char *verb, const char *summary, const char *description, const GOptionEntry *own,
                       DdpCliOptions *cli, int *argc, char ***argv, const char **scenario_path,
                       GError **error);
/* @own followed by the common flags named in @names (transfer full, g_free). */
GOptionEntry *ddp_cli_option_entries_only(const GOptionEntry *own, DdpCliOptions *cli, const char *const *names);
/* Writes @text to stdout; FALSE with @error when that fails (exit 1). */
gboolean ddp_cmd_print(const char *text, GError **error);

int ddp_cmd_predict(int argc, char **argv);
int ddp_cmd_timeline(int argc, char **argv);
int ddp_cmd_models(int argc, char **argv);
int ddp_cmd_clusters(int argc, char **argv);
int ddp_cmd_buckets(int argc, char **argv);
int ddp_cmd_allreduce(int argc, char **argv);
int ddp_cmd_collective(int argc, char **argv);
int ddp_cmd_compare(int argc, char **argv);
int ddp_cmd_scale(int argc, char **argv);
int ddp_cmd_tune(int argc, char **argv);
int ddp_cmd_validate(int argc, char **argv);
int ddp_cmd_solve(int argc, char **argv);
int ddp_cmd_sweep(int argc, char **argv);

#endif
