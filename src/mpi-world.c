/* mpi-world — MPI for `ddpsim sweep` (see mpi-world.h): two MPI_Gathers (statuses and text
 * lengths) and one MPI_Gatherv of the rows, all to rank 0.  The rows of one rank are one slice of
 * the grid, contiguous, so rank order is grid order (sweep.h). */
#include "mpi-world.h"

#include <limits.h>
#include <mpi.h>
#include <string.h>

void
ddp_mpi_world_start(guint *rank, guint *size)
{
  int r = 0, n = 1;
  MPI_Init(NULL, NULL);
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  *rank = (guint)r;
  *size = (guint)n;
}

char **
ddp_mpi_world_gather(const char *text, int flag, int **flags)
{
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  gsize length = strlen(text);
  /* sweep caps a grid at 100 000 rows of a few hundred bytes: far below INT_MAX */
  g_assert(length < INT_MAX);
  int my_length = (int)length;
  int *lengths = rank == 0 ? g_new0(int, size) : NULL;
  int *codes = rank == 0 ? g_new0(int, size) : NULL;
  MPI_Gather(&flag, 1, MPI_INT, codes, 1, MPI_INT, 0, MPI_COMM_WORLD);
  MPI_Gather(&my_length, 1, MPI_INT, lengths, 1, MPI_INT, 0, MPI_COMM_WORLD);
  int *offsets = NULL;
  char *all = NULL;
  if (rank == 0) {
    offsets = g_new0(int, size);
    gint64 total = 0;
    for (int i = 0; i < size; i++) {
      offsets[i] = (int)total;
      total += lengths[i];
    }
    g_assert(total < INT_MAX);
    all = g_malloc(total + 1);
  }
  MPI_Gatherv(text, my_length, MPI_CHAR, all, lengths, offsets, MPI_CHAR, 0, MPI_COMM_WORLD);
  if (rank != 0)
    return NULL;
  char **texts = g_new0(char *, size + 1);
  for (int i = 0; i < size; i++)
    texts[i] = g_strndup(all + offsets[i], lengths[i]);
  g_free(all);
  g_free(offsets);
  g_free(lengths);
  *flags = codes;
  return texts;
}

int
ddp_mpi_world_broadcast_int(int value)
{
  MPI_Bcast(&value, 1, MPI_INT, 0, MPI_COMM_WORLD);
  return value;
}

void
ddp_mpi_world_stop(void)
{
  MPI_Finalize();
}
