/* datadir — where shipped models and clusters are found by bare name: $DDPSIM_DATADIR, then the
 * installed $(pkgdatadir), then the source tree the binary was built from (uninstalled use). */
#ifndef DDP_DATADIR_H
#define DDP_DATADIR_H

#include <glib.h>

/* If @name_or_path names an existing file or contains a '/', returns a copy of it.  Otherwise
 * looks for SUBDIR/NAME+SUFFIX in the data directories.  Returns NULL when nothing matches.
 * Free with g_free(). */
char *ddp_datadir_find(const char *name_or_path, const char *subdir, const char *suffix);
/* Sorted, deduplicated bare names of SUBDIR/ *SUFFIX across the data directories (g_strfreev). */
char **ddp_datadir_list(const char *subdir, const char *suffix);

#endif
