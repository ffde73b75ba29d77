/* datadir — where shipped models and clusters are found by bare name: $DDPSIM_DATADIR, then the
 * installed $(pkgdatadir), then the source tree the binary was built from (uninstalled use). */
#ifndef DDP_DATADIR_H
#define DDP_DATADIR_H

#include <glib.h>

/* If @name_or_path names an existing file or contains a '/', returns a copy of it.  Otherwise
 * looks for SUBDIR/NAME+SUFFIX in the data directories.  Returns NULL when nothing matches.
 * Free with g_free(). */
char *ddp_datadir_find(const char *name_or_path, const char *subdir, const char *suffix);
/* The first existing directory among $DDPSIM_DATADIR/@installed, $(pkgdatadir)/@installed and,
 * uninstalled, the source tree's @in_source (shipped data kept beside the tests, such as the
 * validation CSVs: installed/validation, source tests/data).  NULL when none exists; g_free(). */
char *ddp_datadir_find_dir(const char *installed, const char *in_source);
/* Sorted, deduplicated bare names of SUBDIR/ *SUFFIX across the data directories (g_strfreev). */
char **ddp_datadir_list(const char *subdir, const char *suffix);

#endif
