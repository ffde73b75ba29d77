/* ncclimport — reads the text nccl-tests' `all_reduce_perf`, `all_gather_perf`,
 * `reduce_scatter_perf` and `broadcast_perf` print (github.com/NVIDIA/nccl-tests, src/common.cu,
 * src/util.cu) into the calibration store, as one imported run with its provenance.
 *
 * What the text holds, and what we take from it:
 *   "# Collective test starting: all_gather_perf" (nccl-tests ≥ 2.16.7, and "… concluded: …" at
 *       the end): the test, hence the collective.  Older outputs do not name it; then the rows
 *       tell it where they can (below).
 *   "# nThread T nGpus G minBytes … maxBytes … step: … warmup iters: W iters: I …"
 *       G is -g, the GPUs one process drives (gpus_per_process: -g 8 is host-bound at small
 *       sizes, research notes in ../shared/validation-public/README.md); I the timed iterations.
 *   "#  Rank  0 Group  0 Pid  1234 on  node005 device  0 [0x18] NVIDIA H100 80GB HBM3"
 *       one line per rank (older versions have no "Group"): ranks = their number, nodes = the
 *       distinct host names, the GPU model from the device name.
 *   "# nccl-tests version 2.13.8 nccl-headers=21903 nccl-library=21903", or NCCL's own
 *       "NCCL version 2.19.3+cuda12.3" (NCCL_DEBUG=INFO): the NCCL version, when present.
 *   Result rows, out-of-place then in-place:
 *       size count type redop root  time algbw busbw #wrong  time algbw busbw #wrong   (≥ 2.11)
 *       size count type redop       time algbw busbw error   time algbw busbw error    (older)
 *       size count type             time algbw busbw error   time algbw busbw error    (oldest)
 *     The layout is read from the column-header line when there is one, else from the number of
 *     fields.  Times in µs; algbw = size/t in GB/s.  Per test (its GetCollByteCount and GetBw):
 *       all_reduce_perf      redop sum…, root -1, size = count × type size, busbw = algbw·2(n−1)/n
 *       all_gather_perf      redop none, root -1, size = n × count × type size (the gathered
 *                            output; count is each rank's), busbw = algbw·(n−1)/n
 *       reduce_scatter_perf  redop sum…, root -1, size = n × count × type size (the reduced input),
 *                            busbw = algbw·(n−1)/n
 *       broadcast_perf       redop none, root ≥ 0, size = count × type size, busbw = algbw
 *     so without the test's name the rows tell all_reduce, reduce_scatter (a reduction with
 *     per-rank counts) and broadcast (a root, no reduction), but not all_gather: alltoall_perf
 *     prints the same columns.
 *   "# Avg bus bandwidth    : 23.45": kept for the note.
 * Lines that are neither comments nor rows (NCCL INFO output, mpirun noise) are skipped.
 *
 * Refused with one line `FILE:LINE: what` (DDP_FIT_ERROR_IMPORT, exit 2): no result row; a row that
 * does not parse; a test other than those four, or two of them in one file; output whose test
 * cannot be told (all_gather_perf without its name), or whose rows contradict the test named
 * (reduction, root, size over count, busbw/algbw); several data types or reductions in one file
 * (-d all, -o all); a data type nccl-tests does not print.  When rank lines are absent, the rank
 * count comes from size/count (all_gather, reduce_scatter) or busbw/algbw = 2(n−1)/n (all_reduce),
 * and the node count is 1 unless given; broadcast_perf output needs its rank lines (busbw = algbw
 * whatever n is).
 */
#ifndef DDP_NCCLIMPORT_H
#define DDP_NCCLIMPORT_H

#include <glib.h>
#include "calibdb.h"
#include "collective.h"

typedef struct {
  gint64 bytes;
  double oop_us, oop_algbw, oop_busbw;   /* out-of-place */
  double ip_us, ip_algbw, ip_busbw;      /* in-place */
} DdpNcclTestsRow;

/* One parsed nccl-tests output.  Strings owned (ddp_nccl_tests_free). */
typedef struct {
  DdpCollectiveOp op;         /* the test's collective */
  gboolean op_named;          /* TRUE: "# Collective test starting: NAME" said it; FALSE: the rows */
  GArray *rows;               /* DdpNcclTestsRow, in file order */
  char *type, *redop;         /* "float", "sum" ("" when the format has no redop column) */
  int threads, gpus_per_process, iterations;  /* 0 when the header line is absent */
  int ranks, nodes;           /* derived (see above) */
  gboolean ranks_from_ratio;  /* TRUE: no rank lines; ranks from busbw/algbw (all_reduce) */
  gboolean ranks_from_count;  /* TRUE: no rank lines; ranks from size/count (all_gather, reduce_scatter) */
  char *hosts;                /* "node005,node007", "" when no rank line names one */
  char *gpu_name;             /* "" when no rank line names one */
  char *nccl_version;         /* "2.19.3", "" when not stated */
  char *header;               /* the "nThread …" line, "" when absent */
  double avg_busbw;           /* the trailer's figure, NAN when absent */
  DdpCalibImport source;      /* provenance (ddp_nccl_tests_read; empty from _parse) */
} DdpNcclTests;

void ddp_nccl_tests_free(DdpNcclTests *t);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(DdpNcclTests, ddp_nccl_tests_free)

/* Parses @text (the file @path's contents, used in messages).  Returns: (transfer full) or NULL
 * with DDP_FIT_ERROR_IMPORT. */
DdpNcclTests *ddp_nccl_tests_parse(const char *path, const char *text, GError **error);

typedef struct {
  const char *algorithm;      /* label of the points: NCCL_ALGO the run was forced to, or NULL: "auto" */
  const char *protocol;       /* NCCL_PROTO, or NULL: "auto" */
  int nodes;                  /* > 0: overrides the node count (files without rank lines) */
} DdpNcclImportOptions;

/* Reads @path through the checked reader (fileio.h: a regular text file of at most 64 MiB) and
 * parses it, touching no database: every header number (nThread, nGpus, iters) and row number
 * (size, count, times, bandwidths) goes through the range table, at most DDP_MAX_IMPORT_ROWS rows.
 * Returns: (transfer full) with its provenance, or NULL with DDP_FIT_ERROR_IMPORT. */
DdpNcclTests *ddp_nccl_tests_read(const char *path, GError **error);

/* Stores a read file as one run (runs row, one batch of points — AllReduce points, or the other
 * collective's — the imports row) in one transaction (ddp_calibdb_import_begin); --nodes above the
 * rank count is refused.
 * Returns: the run id (*@again: of an earlier identical import), or 0 with @error and nothing written. */
gint64 ddp_nccl_tests_store(DdpCalibDb *db, DdpNcclTests *t, const DdpNcclImportOptions *options, gboolean *again,
                            GError **error);

/* Reads @path and stores it as one run (runs row, one batch of points, the imports row) in @db.
 * An identical file imported before is not stored twice: its run id comes back with *@again set.
 * Returns: the run id, or 0 with @error (DDP_FIT_ERROR_IMPORT for the file, a calibdb error for
 * the store); nothing is written when the file is refused. */
gint64 ddp_nccl_tests_import(DdpCalibDb *db, const char *path, const DdpNcclImportOptions *options,
                             gboolean *again, GError **error);

#endif
