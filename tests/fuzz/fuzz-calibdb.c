/* fuzz-calibdb — calibration databases as `--calibration DB` reads them (src/calibdb.c, fit.c):
 * any file is refused with one line or yields a fit; SQLite's own format checks run first. */
#include "fuzz.h"

#include "fit.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  const char *path = fuzz_file(data, size, "fuzz.db");
  g_autoptr(GError) error = NULL;
  g_autoptr(DdpFit) fit = ddp_fit_open(path, &error);
  if (!fit)
    fuzz_check_error(error);
  /* a reader may leave SQLite's side files; start every run from the bare file */
  g_autofree char *shm = g_strconcat(path, "-shm", NULL), *wal = g_strconcat(path, "-wal", NULL);
  g_unlink(shm);
  g_unlink(wal);
  return 0;
}
