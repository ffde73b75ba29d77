/* main — `ddpsim VERB [options]`: dispatches to the command table (cmd.c). */
#include "config.h"

#include "cmd.h"
#include "suggest.h"

#include <glib.h>

#include <locale.h>
#include <stdio.h>
#include <string.h>

static void
usage(FILE *out)
{
  fprintf(out, "Usage: ddpsim VERB [OPTIONS] [SCENARIO]\n\n"
               "A discrete-event simulator of PyTorch DistributedDataParallel training.\n\nVerbs:\n");
  for (const DdpCommand *c = ddp_commands(); c->name; c++)
    fprintf(out, "  %-10s %s\n", c->name, c->summary);
  fprintf(out, "\n`ddpsim VERB --help` lists a verb's options.  Exit status: 0 success, 2 bad input, 1 internal error,\n3 predict: the model does not fit in GPU memory (--allow-oom: 0).\n");
}

int
main(int argc, char **argv)
{
  /* The user's locale, so GOption converts non-ASCII arguments ("8,16,…,1024") and help text
   * ("…", "×", "α") instead of failing or printing "?".  Numbers are parsed with g_ascii_strtod
   * and printed with g_ascii_formatd or in C-locale-safe formats, so LC_NUMERIC changes nothing
   * that ddpsim reads or writes as data; it is reset to "C" for printf's %f all the same. */
  setlocale(LC_ALL, "");
  setlocale(LC_NUMERIC, "C");
  /* In the plain C/POSIX locale (ASCII) GLib could neither take "…" in an argument nor print it in
   * help; every Linux libc since 2.35 has C.UTF-8, the same locale with UTF-8 characters. */
  if (!g_get_charset(NULL))
    setlocale(LC_CTYPE, "C.UTF-8");
  if (argc < 2) {
    usage(stderr);
    return DDP_EXIT_INPUT;
  }
  if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "help") == 0) {
    usage(stdout);
    return DDP_EXIT_OK;
  }
  if (strcmp(argv[1], "--version") == 0) {
    printf("ddpsim %s\n", PACKAGE_VERSION);
    return DDP_EXIT_OK;
  }
  for (const DdpCommand *c = ddp_commands(); c->name; c++)
    if (strcmp(argv[1], c->name) == 0)
      return c->run(argc, argv);
  GPtrArray *names = g_ptr_array_new();
  for (const DdpCommand *c = ddp_commands(); c->name; c++)
    g_ptr_array_add(names, (gpointer)c->name);
  g_ptr_array_add(names, NULL);
  g_autofree char *hint = ddp_suggest_text(argv[1], (const char *const *)names->pdata);
  g_ptr_array_free(names, TRUE);
  fprintf(stderr, "ddpsim: unknown verb \"%s\"%s (see ddpsim --help)\n", argv[1], hint);
  return DDP_EXIT_INPUT;
}
