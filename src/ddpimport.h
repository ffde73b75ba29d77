/* ddpimport — a multi-GPU DDP run measured with torch.profiler, read back as the terms ddpsim
 * models: per-bucket AllReduce sizes and times, overlap with backward, exposed communication,
 * compute slowed by concurrent NCCL kernels (overlap_slowdown), rank-to-rank spread (jitter), the
 * iteration time (docs/calibration.md "Calibrate from a DDP run").
 *
 * What a Kineto Chrome trace of a DDP rank holds (PyTorch ≥ 2.1; the layout of
 * HolisticTraceAnalysis' nccl_parser_config trace, a real 2-rank ResNet-50 run):
 *   - "distributedInfo": {"backend": "nccl", "rank": R, "world_size": N, "nccl_version": "2.17.1"};
 *   - "deviceProperties": one object per GPU the process saw (name, totalGlobalMem, computeMajor…);
 *   - GPU spans ("ph":"X", "cat":"kernel") with args.stream: the backward kernels on the compute
 *     stream (7 by default), NCCL's on the stream ProcessGroupNCCL created for the communicator.
 *     An NCCL kernel is named ncclKernel_<Coll>_<ALGO>_<PROTO>_Sum_<type> (NCCL ≤ 2.18) or
 *     ncclDevKernel_<Coll>_… (newer NCCL) and carries args "Collective name", "In msg nelems" and
 *     "dtype" (PyTorch's record_param_comms; the element count times the type's size is the bucket's
 *     bytes);
 *   - "ProfilerStep#N" user annotations: one span per training step.
 * DDP's reducer launches one AllReduce per bucket, in bucket order, on that one stream (the fact the
 * simulator rests on: docs/model.md §1), so the k-th AllReduce kernel of a step is bucket k.
 *
 * What is derived, per rank and step (a step is one ProfilerStep span; without them the whole trace
 * is one step), with t = 0 at the step's first GPU kernel:
 *   - the AllReduce kernels' sizes, starts, ends;
 *   - the end of backward: the latest end of a compute-stream kernel that started before the last
 *     AllReduce did (that bucket is launched once its last gradient is computed; what starts later
 *     is the reducer's finalize and the optimizer, which wait for it);
 *   - exposed communication: last AllReduce end − end of backward (≥ 0), per step the least over
 *     the ranks imported (ddpsim's exposed communication starts at the slowest rank's end of
 *     backward; one rank's trace gives that rank's own wait, an upper bound); overlap = 1 − exposed/comm;
 *   - overlap_slowdown: kernels of the compute stream with the same name, grid and block ran both
 *     inside and outside AllReduce kernels.  With r the median duration of a key outside them and
 *     o the part of an instance's duration spent inside, ddpsim's model (work under a collective runs
 *     at 1/(1+s) speed) gives dur − r = o·s/(1+s); summed over instances, x = Σ(dur − r)/Σo and
 *     s = x/(1 − x).  No such key: not measured.  Across nodes BatchNorm kernels (cuDNN's
 *     bn_fw/bn_bw/batchnorm ones, PyTorch's batch_norm ones) are left out: beside a collective
 *     there they may wait for it (batch_norm_waits, docs/overheads.md), which is not SM sharing.
 *     Their own ratio, Σ durations inside over Σ of their keys' medians outside, is reported
 *     apart at any node count (batch_norm_stretch);
 *   - jitter: the σ of the ranks' compute time per step (less what the slowdown added), relative to
 *     their mean; one rank's trace: not measured;
 *   - the collective's time per bucket: the smallest kernel duration over the ranks (a rank that
 *     launched early waits inside the kernel for the last one; the last one sees the collective).
 * Steps whose bucket layout differs from the most common one (the first iteration, before DDP
 * rebuilds its buckets) are left out.
 *
 * Refused (DDP_FIT_ERROR_IMPORT, one line naming the file and the event or key): not JSON, no
 * traceEvents, a member of the wrong type, no NCCL AllReduce kernel, a collective DDP does not run
 * (AllGather, ReduceScatter, SendRecv, AllToAll…: FSDP, ZeRO, pipeline or a recommender's
 * embeddings), AllReduce without message sizes, AllReduce kernels on the compute stream or no
 * compute stream, ranks of different runs or the same rank twice. */
#ifndef DDP_DDPIMPORT_H
#define DDP_DDPIMPORT_H

#include <glib.h>
#include "calibdb.h"
#include "ddpterms.h"

/* One bucket's AllReduce, averaged over the kept steps (and ranks for the times of day). */
typedef struct {
  guint64 bytes;
  double start_us, end_us;   /* from the step's first GPU kernel, mean over steps and ranks */
  double time_us;            /* the collective: per step the shortest rank's kernel, then the mean */
  double min_us, max_us;     /* over steps */
  char *algorithm, *protocol;/* from the kernel name ("RING", "LL"), "" when it does not say */
} DdpRunBucket;

/* One kernel of the drawn step (the lowest rank's last kept step), for timeline --compare. */
typedef struct {
  double start_us, end_us;   /* from the step's first GPU kernel */
  gboolean nccl;             /* on the comm stream (an AllReduce); else the compute stream */
} DdpRunKernel;

typedef struct {
  DdpRunTerms terms;         /* what is stored (ddpterms.h): world size, nodes, rank files, kept
                                steps, iteration (mean ProfilerStep over ranks and kept steps) and
                                its spread (slowest − fastest rank), compute-stream time per step,
                                Σ bucket collective times, exposed communication (per step the
                                least over ranks), overlap, overlap_slowdown and jitter (< 0: not
                                measured); run_id and the measured steps are left 0 here */
  guint dropped_steps;       /* left out: another bucket layout */
  GArray *buckets;           /* DdpRunBucket, in launch order */
  double backward_end_ms;    /* mean end of backward (from the step's first kernel) */
  GArray *drawn;             /* DdpRunKernel of one step of the lowest rank */
  guint drawn_rank;
  /* provenance, "" when the trace does not say */
  char *gpu_name, *nccl_version, *torch_version, *hosts, *cuda_version;
  int sm_arch;
  int sms;                   /* the GPU's SMs (deviceProperties numSms), 0 when not said */
  int nccl_blocks;           /* the most thread blocks (NCCL channels) an AllReduce kernel ran on, 0 when not said */
  gint64 gpu_memory_bytes;
  double batch_norm_stretch; /* BatchNorm kernels inside AllReduce kernels: Σ durations / Σ their keys'
                                medians outside (1: no wait); < 0 when no such kernel */
  guint batch_norm_kernels;  /* the instances that measured it */
} DdpRunTrace;

void ddp_run_trace_free(DdpRunTrace *t);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(DdpRunTrace, ddp_run_trace_free)

/* Reads the @n rank files @paths (JSON or gzip'd JSON; one file per rank, any subset of the ranks
 * of one run) and derives the run's terms.  @nodes: servers of the run, 0 to derive it (world size
 * over the GPUs each process saw in deviceProperties, rounded up; refused when a process saw one
 * GPU or none, which tells nothing).
 * Returns: (transfer full), or NULL with DDP_FIT_ERROR_IMPORT. */
DdpRunTrace *ddp_run_trace_read(const char *const *paths, guint n, guint64 nodes, GError **error);

/* One line for people: ranks, nodes, buckets, iteration, AllReduce, exposed, overlap, and which of
 * overlap_slowdown and jitter the run measured.  (transfer full) */
char *ddp_run_trace_summary(const DdpRunTrace *t);

/* Whether @path looks like a trace of a multi-GPU run (NCCL kernels or a distributedInfo with
 * world_size > 1) rather than a 1-GPU step (profimport.h).  FALSE when it cannot be read. */
gboolean ddp_run_trace_sniff(const char *path);

/* Stores @trace as one run of @db in one transaction: its AllReduce sizes as measured points at
 * (world size, nodes) — the curve and the tier fit (tierfit.h) take them from there — and its DDP
 * terms with the @n_steps measured iterations in the import's provenance (format "torch-ddp").
 * The same bytes imported before come back with *@again set.  @paths as given to the reader.
 * Returns: the run id, or 0 with @error; nothing is written on failure. */
gint64 ddp_run_import(DdpCalibDb *db, const char *const *paths, guint n, const DdpRunTrace *trace,
                      const DdpMeasuredStep *steps, guint n_steps, gboolean *again, GError **error);

#endif
