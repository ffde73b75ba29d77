/* mpi-world — the little of MPI that `ddpsim sweep` uses, behind a plain-C wall: start and stop,
 * gather every rank's rows at rank 0, broadcast the exit status.  mpi-world.c is compiled only
 * when configure found MPI (DDP_HAVE_MPI); nothing else includes <mpi.h>. */
#ifndef DDP_MPI_WORLD_H
#define DDP_MPI_WORLD_H

#include <glib.h>

#ifdef DDP_HAVE_MPI
/* MPI_Init; *rank and *size of MPI_COMM_WORLD. */
void ddp_mpi_world_start(guint *rank, guint *size);
/* Collective.  Rank 0 gets (transfer full) the texts of every rank in rank order and their
 * flags (*flags[size], g_free); the other ranks get NULL. */
char **ddp_mpi_world_gather(const char *text, int flag, int **flags);
/* Collective: rank 0's @value on every rank. */
int ddp_mpi_world_broadcast_int(int value);
/* MPI_Finalize. */
void ddp_mpi_world_stop(void);
#endif

#endif
