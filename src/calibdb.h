/* calibdb — the SQLite store of calibration measurements and of the parameters fitted to them.
 *
 * Written by `ddpsim-calibrate` (calibrate/), read and extended by `ddpsim fit`, read by every verb
 * given `--calibration DB`.  One file holds:
 *   runs              one row per calibration run, with provenance (host, GPU, driver, CUDA, NCCL,
 *                     cuBLAS, cuDNN versions, start/finish time, the arguments that --resume replays);
 *   batches           one row per committed measurement batch: the unit of atomicity and of --resume;
 *   allreduce_points  NCCL AllReduce timings (nccl-tests conventions, docs/model.md §3: algbw = S/t,
 *                     busbw = algbw·2(n−1)/n, GB = 10^9 B);
 *   collective_points AllGather, ReduceScatter and Broadcast timings imported from nccl-tests output
 *                     (its size column and busbw: docs/collective.md §12);
 *   kernel_points     backward/forward kernel timings (cuBLAS GEMMs, cuDNN convolutions, our own
 *                     norm/softmax/elementwise kernels, device copies) with FLOPs and bytes;
 *   imports           provenance of runs read from files users already have (`ddpsim fit --import`:
 *                     nccl-tests output, torch.profiler traces): format, source path, SHA-256, mtime,
 *                     size, -g (GPUs per process), import time;
 *   fits, fit_*       what `ddpsim fit` derived, with its residuals; fit_allreduce_curve and
 *                     fit_collective_curve keep the measured time at every size (commcurve.h
 *                     interpolates it).
 *
 * Durability.  The database runs in WAL mode with synchronous=FULL and every measurement batch is
 * one transaction (ddp_calibdb_batch_begin … _commit): a run killed at any instant keeps every
 * batch committed before it, and the half-written batch vanishes with the uncommitted WAL frames.
 * That is why a batch is small (one AllReduce size of one algorithm/protocol, one layer shape at one
 * precision and batch) — the most a kill can cost is one measurement.
 *
 * Identity.  `PRAGMA application_id` marks the file as ours (DDP_CALIBDB_APPLICATION_ID) and
 * `PRAGMA user_version` holds the schema version: a foreign SQLite file, a file that is not SQLite
 * at all, one that fails `PRAGMA quick_check`, or one written by a newer schema is refused at open
 * with a one-line error (exit 2 in both programs).
 *
 * Untrusted.  A database is input like any file: the connection runs with SQLite's defensive
 * settings (SQLITE_DBCONFIG_DEFENSIVE, triggers and views disabled, trusted_schema off), and a file
 * whose schema holds any object ddpsim did not create — a trigger, a view, an extra index or table,
 * a table altered by hand — is refused at open (DDP_CALIBDB_ERROR_FOREIGN, exit 2): a trigger in a
 * user's database must not run when ddpsim writes to it.  Stored points are checked against the
 * ranges like imported ones.
 *
 * All SQL of the project lives in calibdb.c; statements are prepared once at open.
 */
#ifndef DDP_CALIBDB_H
#define DDP_CALIBDB_H

#include <glib.h>

#define DDP_CALIBDB_APPLICATION_ID 0x64647063 /* "ddpc" */
#define DDP_CALIBDB_SCHEMA_VERSION 3  /* 2: imports, fit_allreduce_curve; 3: collective_points,
                                       * fit_collective_curve */

#define DDP_CALIBDB_ERROR (ddp_calibdb_error_quark())
GQuark ddp_calibdb_error_quark(void);
typedef enum {
  DDP_CALIBDB_ERROR_OPEN,      /* the file cannot be opened or created (missing, permissions, a directory) */
  DDP_CALIBDB_ERROR_CORRUPT,   /* not an SQLite database, or it fails its integrity check */
  DDP_CALIBDB_ERROR_FOREIGN,   /* an SQLite database, but not a ddpsim calibration database */
  DDP_CALIBDB_ERROR_VERSION,   /* a ddpsim calibration database of a newer schema */
  DDP_CALIBDB_ERROR_NOT_FOUND, /* no such run or fit, or the database holds none */
  DDP_CALIBDB_ERROR_SQL,       /* any other SQLite failure (disk full, I/O error, locked): internal */
  DDP_CALIBDB_ERROR_BUSY,      /* another calibration run holds the database's run lock (exit 2) */
  DDP_CALIBDB_ERROR_VALUE,     /* a stored value outside the ranges ddpsim reads (ranges.h; exit 2) */
} DdpCalibDbError;

/* TRUE when @error is a calibdb error caused by the user's input (a wrong, foreign, corrupt or
 * newer file; a run or fit that does not exist): exit 2.  DDP_CALIBDB_ERROR_SQL is not (exit 1). */
gboolean ddp_calibdb_error_is_input(const GError *error);

typedef enum {
  DDP_CALIBDB_READ,   /* read-only; the file must exist and be ours */
  DDP_CALIBDB_WRITE,  /* read-write; created with the current schema when missing or empty */
  DDP_CALIBDB_UPDATE, /* as WRITE, but the file keeps its journal mode (no switch to WAL): `ddpsim
                       * fit`, whose one transaction leaves the file byte for byte as it was
                       * unless it commits */
} DdpCalibDbMode;

typedef struct _DdpCalibDb DdpCalibDb;

/* One calibration run.  Strings are owned (ddp_calib_run_free); the three counts are filled by
 * ddp_calibdb_run_get()/_runs() and ignored by _run_begin(). */
typedef struct {
  gint64 id;
  char *started;          /* ISO 8601 UTC */
  char *finished;         /* NULL while running, or when the run was interrupted */
  char *host;
  char *gpu_name;         /* as CUDA reports it, e.g. "NVIDIA H100 80GB HBM3" */
  int gpus_per_node;      /* GPUs driven on each node */
  int nodes;
  int ranks;              /* gpus_per_node × nodes */
  int sm_arch;            /* compute capability ×10: 80, 90, 100 */
  int sm_count;
  gint64 gpu_memory_bytes;
  char *driver_version, *cuda_version, *nccl_version, *cublas_version, *cudnn_version;
  char *program;          /* "ddpsim-calibrate 0.1.0" */
  char *arguments;        /* the measuring options, shell-quoted; --resume replays them */
  char *note;             /* e.g. "1 GPU visible: multi-GPU AllReduce points are absent" */
  gint64 n_batches, n_allreduce_points, n_kernel_points, n_collective_points;
} DdpCalibRun;

void ddp_calib_run_free(DdpCalibRun *run);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(DdpCalibRun, ddp_calib_run_free)

/* One timed NCCL AllReduce size (nccl-tests' row).  Strings owned when read back. */
typedef struct {
  gint64 run_id;          /* filled on read; ignored on write (the open batch's run) */
  char *batch;            /* ditto */
  char *algorithm;        /* NCCL_ALGO value as forced ("Ring", "Tree", "NVLS"), or "auto" */
  char *protocol;         /* NCCL_PROTO value ("LL", "LL128", "Simple"), or "auto" */
  int ranks, nodes;
  gint64 bytes;           /* count × type size, as nccl-tests' size column */
  char *dtype;            /* "float" */
  gboolean in_place;
  int iterations;
  double time_us;         /* mean over the timed iterations */
  double min_us, max_us;  /* fastest and slowest single iteration */
  double algbw_GBs;       /* bytes / time, 10^9 B/s */
  double busbw_GBs;       /* algbw · 2(ranks−1)/ranks */
} DdpCalibAllreducePoint;

/* One timed size of another collective (nccl-tests' all_gather_perf, reduce_scatter_perf or
 * broadcast_perf row).  Strings owned when read back. */
typedef struct {
  gint64 run_id;          /* filled on read; ignored on write (the open batch's run) */
  char *batch;            /* ditto */
  char *op;               /* "all_gather", "reduce_scatter" or "broadcast" (collective.h's names) */
  char *algorithm;        /* NCCL_ALGO as forced, or "auto" */
  char *protocol;         /* NCCL_PROTO as forced, or "auto" */
  int ranks, nodes;
  gint64 bytes;           /* nccl-tests' size column: the gathered output (AllGather), the reduced
                           * input (ReduceScatter), the buffer (Broadcast) */
  char *dtype;
  gboolean in_place;
  int iterations;
  double time_us;         /* mean over the timed iterations */
  double algbw_GBs;       /* bytes / time */
  double busbw_GBs;       /* algbw · (n−1)/n (AllGather, ReduceScatter), algbw (Broadcast) */
} DdpCalibCollectivePoint;

/* One timed kernel (or device copy).  Strings owned when read back. */
typedef struct {
  gint64 run_id;          /* filled on read; ignored on write */
  char *batch;            /* ditto */
  char *probe;            /* "gemm", "conv", "layernorm", "softmax", "gelu", "copy" */
  char *layer_kind;       /* DdpLayerKind name ("linear", "conv", …), or "copy" */
  char *op;               /* "fwd", "dX", "dW", "bwd-data", "bwd-filter", "bwd", "copy" */
  char *precision;        /* "fp32", "tf32", "fp16", "bf16" */
  char *signature;        /* layer signature (fit.h: ddp_fit_layer_signature), "" for copies */
  char *layer;            /* a layer name carrying this signature, for people; may be "" */
  double batch_size;      /* samples per GPU the shape was built for (0 for copies) */
  char *shape;            /* what ran, for people: "M=4096 N=1024 K=1024 NT", "N=32 C=64 H=56 …" */
  char *algo;             /* cuDNN/cuBLAS algorithm used, "" when not applicable */
  double flops;           /* floating-point operations of one call */
  double bytes;           /* minimum HBM traffic of one call (each operand read or written once) */
  int iterations;
  double time_us, min_us, max_us;
  double tflops;          /* flops / time, 10^12/s */
  double GBs;             /* bytes / time, 10^9 B/s */
} DdpCalibKernelPoint;

void ddp_calib_allreduce_point_clear(DdpCalibAllreducePoint *p);
void ddp_calib_collective_point_clear(DdpCalibCollectivePoint *p);
void ddp_calib_kernel_point_clear(DdpCalibKernelPoint *p);

/* A stored fit (ddpsim fit).  Strings owned. */
typedef struct {
  gint64 id;
  char *created;          /* ISO 8601 UTC */
  char *runs;             /* the run ids it was fitted from, "3" or "3,4" */
  char *gpu_name;         /* device name of those runs */
  char *gpu_spec;         /* built-in spec whose peaks the efficiencies refer to; "" when unknown */
  char *program;
  char *note;
} DdpCalibFit;

void ddp_calib_fit_free(DdpCalibFit *fit);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(DdpCalibFit, ddp_calib_fit_free)

/* Fitted AllReduce latency and bandwidth of one (algorithm, protocol, ranks, nodes). */
typedef struct {
  char *algorithm, *protocol;
  int ranks, nodes;
  double alpha_us;        /* t(S) = alpha_us + S / (1000 · algbw_GBs)   [µs, bytes, GB/s] */
  double algbw_GBs;       /* 0 when only latency could be fitted (one rank, or no size dependence) */
  double busbw_GBs;       /* algbw · 2(ranks−1)/ranks */
  int n_points;
  gint64 min_bytes, max_bytes;
  double rms_rel, max_rel;/* relative residuals (fitted − measured)/measured over the points */
} DdpCalibAllreduceFit;

/* Fitted throughput of one (layer kind, precision) — or of device copies (layer_kind "copy"). */
typedef struct {
  char *layer_kind;
  char *precision;
  char *basis;            /* "flops": rate in TFLOP/s; "bytes": rate in GB/s */
  double rate;            /* t(W) = overhead_us + W / rate  (W: flops or bytes of one call) */
  double efficiency;      /* rate / peak of the fit's gpu_spec; NAN when the peak is unknown */
  double overhead_us;
  int n_points;
  double rms_rel, max_rel;
} DdpCalibKernelFit;

/* Measured time of one layer signature at one precision and batch: the sum of its kernels. */
typedef struct {
  char *signature;
  char *layer_kind;
  char *layer;            /* a layer name carrying it, for people */
  char *precision;
  double batch_size;
  double forward_us;      /* < 0 when the forward kernels were not measured */
  double backward_us;     /* dX + dW, or bwd-data + bwd-filter, or bwd */
} DdpCalibLayerFit;

/* One point against its fitted value. */
typedef struct {
  char *model;            /* "allreduce" or "kernel" */
  char *key;              /* "Ring/Simple ranks=8 nodes=1", "linear fp16" */
  double x;               /* bytes (allreduce) or work (kernel: flops or bytes) */
  double measured_us, fitted_us;
  double rel;             /* (fitted − measured) / measured */
} DdpCalibResidual;

/* One point of a stored curve: the measured time at one size of one variant of one collective. */
typedef struct {
  char *op;               /* NULL: AllReduce (fit_allreduce_curve); else "all_gather", "reduce_scatter"
                           * or "broadcast" (fit_collective_curve) */
  char *algorithm, *protocol;
  int ranks, nodes;
  gint64 bytes;
  double time_us;         /* mean over the measurements at this size (in place preferred) */
} DdpCalibCurvePoint;

/* Where an imported run came from (`ddpsim fit --import`).  Strings owned when read back. */
typedef struct {
  gint64 run_id;          /* filled on read; ignored on write (the open batch's run) */
  char *format;           /* "nccl-tests", "torch-profiler" */
  char *source;           /* the path as given */
  char *sha256;           /* of the file's bytes, hex */
  char *mtime;            /* ISO 8601 UTC */
  gint64 size_bytes;
  int gpus_per_process;   /* nccl-tests -g (nGpus); 1 for a profiler trace */
  char *imported;         /* filled on read: when */
  char *note;
} DdpCalibImport;

void ddp_calib_curve_point_clear(DdpCalibCurvePoint *p);
void ddp_calib_import_clear(DdpCalibImport *i);
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC(DdpCalibImport, ddp_calib_import_clear)
void ddp_calib_allreduce_fit_clear(DdpCalibAllreduceFit *f);
void ddp_calib_kernel_fit_clear(DdpCalibKernelFit *f);
void ddp_calib_layer_fit_clear(DdpCalibLayerFit *f);
void ddp_calib_residual_clear(DdpCalibResidual *r);

/* ---- opening ------------------------------------------------------------------------------- */

DdpCalibDb *ddp_calibdb_open(const char *path, DdpCalibDbMode mode, GError **error);
void ddp_calibdb_close(DdpCalibDb *db);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(DdpCalibDb, ddp_calibdb_close)
const char *ddp_calibdb_path(const DdpCalibDb *db);
/* Invariant checker: no point without its batch, no batch without its run, counts consistent,
 * no transaction left open.  FALSE with @error naming the first violation. */
gboolean ddp_calibdb_check(DdpCalibDb *db, GError **error);

/* ---- runs ---------------------------------------------------------------------------------- */

/* Records the start of a run (its own small transaction); @run->id, started, finished and the
 * counts are ignored.  Returns the new id, or 0 with @error set. */
gint64 ddp_calibdb_run_begin(DdpCalibDb *db, const DdpCalibRun *run, GError **error);
/* Stamps the run finished (now). */
gboolean ddp_calibdb_run_finish(DdpCalibDb *db, gint64 run_id, GError **error);
/* Appends @note (a line) to the run's note. */
gboolean ddp_calibdb_run_add_note(DdpCalibDb *db, gint64 run_id, const char *note, GError **error);
/* Returns: (transfer full): the run with its counts, or NULL with DDP_CALIBDB_ERROR_NOT_FOUND. */
DdpCalibRun *ddp_calibdb_run_get(DdpCalibDb *db, gint64 run_id, GError **error);
/* Returns: (transfer full) (element-type DdpCalibRun): every run, oldest first; NULL on error. */
GPtrArray *ddp_calibdb_runs(DdpCalibDb *db, GError **error);
/* The newest run (@unfinished_only: the newest one without a finish time) that has at least one
 * committed batch when @with_data; 0 with DDP_CALIBDB_ERROR_NOT_FOUND when there is none. */
gint64 ddp_calibdb_latest_run(DdpCalibDb *db, gboolean unfinished_only, gboolean with_data, GError **error);
/* Returns: (transfer full): the set (name → name) of batches committed in @run_id; NULL on error. */
GHashTable *ddp_calibdb_batches(DdpCalibDb *db, gint64 run_id, GError **error);

/* ---- one measurement batch = one transaction ---------------------------------------------- */

/* Opens the batch @name of @run_id (BEGIN IMMEDIATE).  Fails when a transaction is already open
 * or when the batch was already committed (DDP_CALIBDB_ERROR_SQL: a programming error upstream). */
gboolean ddp_calibdb_batch_begin(DdpCalibDb *db, gint64 run_id, const char *name, GError **error);
/* Adds one point to the open batch; run and batch come from it. */
gboolean ddp_calibdb_batch_add_allreduce(DdpCalibDb *db, const DdpCalibAllreducePoint *p, GError **error);
gboolean ddp_calibdb_batch_add_kernel(DdpCalibDb *db, const DdpCalibKernelPoint *p, GError **error);
gboolean ddp_calibdb_batch_add_collective(DdpCalibDb *db, const DdpCalibCollectivePoint *p, GError **error);
/* Records the batch (with an optional @note, e.g. why it holds no points) and commits.  On
 * failure the batch is rolled back. */
gboolean ddp_calibdb_batch_commit(DdpCalibDb *db, const char *note, GError **error);
/* Abandons the open batch; harmless when none is open. */
void ddp_calibdb_batch_rollback(DdpCalibDb *db);
/* One transaction around several runs, batches and a fit (batches and fits become savepoints in
 * it): `ddpsim fit --import` stores everything or nothing.  Commit fails → rolled back. */
gboolean ddp_calibdb_transaction_begin(DdpCalibDb *db, GError **error);
gboolean ddp_calibdb_transaction_commit(DdpCalibDb *db, GError **error);
void ddp_calibdb_transaction_rollback(DdpCalibDb *db);
gboolean ddp_calibdb_in_transaction(const DdpCalibDb *db);

/* Fills @out's format, source, sha256 (of @data), mtime and size (of the file @path) — the
 * provenance of an import.  FALSE with G_FILE_ERROR when @path cannot be stat()ed. */
gboolean ddp_calib_import_describe(const char *path, const char *data, gsize length, const char *format,
                                   DdpCalibImport *out, GError **error);
/* Records where the open batch's run was imported from (one row per run). */
gboolean ddp_calibdb_batch_add_import(DdpCalibDb *db, const DdpCalibImport *import, GError **error);
/* Starts storing an imported file: finds an earlier identical import (*@again), else records the
 * run and opens its batch, in the caller's transaction or one of its own.  Returns the run id or 0. */
gint64 ddp_calibdb_import_begin(DdpCalibDb *db, const DdpCalibRun *run, const char *batch,
                                const DdpCalibImport *import, gboolean *again, GError **error);
/* Closes an import's one batch: its provenance, the commit, the run marked finished (all or nothing). */
gint64 ddp_calibdb_import_finish(DdpCalibDb *db, gint64 run_id, const DdpCalibImport *import, gboolean points_ok,
                                 const char *note, GError **error);
/* The run an earlier import of the same bytes (@sha256) in @format created; 0 when none (not an
 * error), -1 with @error on failure. */
gint64 ddp_calibdb_import_find(DdpCalibDb *db, const char *sha256, const char *format, GError **error);
/* Provenance of @run_id; FALSE with DDP_CALIBDB_ERROR_NOT_FOUND when it was not imported. */
gboolean ddp_calibdb_import_get(DdpCalibDb *db, gint64 run_id, DdpCalibImport *out, GError **error);

/* ---- reading points ------------------------------------------------------------------------ */

/* Points of the given runs (all runs when @n_runs is 0), ordered by run, algorithm, protocol,
 * ranks, nodes, bytes (allreduce) or by run, kind, precision, signature, batch, op (kernels).
 * Returns: (transfer full) GArray with a clear function; NULL on error. */
GArray *ddp_calibdb_allreduce_points(DdpCalibDb *db, const gint64 *run_ids, guint n_runs, GError **error);
GArray *ddp_calibdb_kernel_points(DdpCalibDb *db, const gint64 *run_ids, guint n_runs, GError **error);
/* The other collectives' points, ordered by run, op, algorithm, protocol, ranks, nodes, bytes;
 * each op checked to be one of the three.  (transfer full) GArray of DdpCalibCollectivePoint. */
GArray *ddp_calibdb_collective_points(DdpCalibDb *db, const gint64 *run_ids, guint n_runs, GError **error);

/* ---- fits ---------------------------------------------------------------------------------- */

/* Opens a fit transaction and records its header; returns the fit id or 0. */
gint64 ddp_calibdb_fit_begin(DdpCalibDb *db, const DdpCalibFit *fit, GError **error);
gboolean ddp_calibdb_fit_add_allreduce(DdpCalibDb *db, const DdpCalibAllreduceFit *f, GError **error);
gboolean ddp_calibdb_fit_add_kernel(DdpCalibDb *db, const DdpCalibKernelFit *f, GError **error);
gboolean ddp_calibdb_fit_add_layer(DdpCalibDb *db, const DdpCalibLayerFit *f, GError **error);
gboolean ddp_calibdb_fit_add_residual(DdpCalibDb *db, const DdpCalibResidual *r, GError **error);
/* A curve point: into fit_allreduce_curve when @p->op is NULL, else fit_collective_curve. */
gboolean ddp_calibdb_fit_add_curve_point(DdpCalibDb *db, const DdpCalibCurvePoint *p, GError **error);
/* Commits the fit; on failure it is rolled back.  Abandon with ddp_calibdb_batch_rollback(). */
gboolean ddp_calibdb_fit_commit(DdpCalibDb *db, GError **error);

/* The fit @fit_id, or the newest when @fit_id is 0.  NULL with DDP_CALIBDB_ERROR_NOT_FOUND. */
DdpCalibFit *ddp_calibdb_fit_get(DdpCalibDb *db, gint64 fit_id, GError **error);
/* Rows of a stored fit, in insertion order.  (transfer full) GArray with a clear function. */
GArray *ddp_calibdb_fit_allreduce(DdpCalibDb *db, gint64 fit_id, GError **error);
GArray *ddp_calibdb_fit_kernels(DdpCalibDb *db, gint64 fit_id, GError **error);
GArray *ddp_calibdb_fit_layers(DdpCalibDb *db, gint64 fit_id, GError **error);
GArray *ddp_calibdb_fit_residuals(DdpCalibDb *db, gint64 fit_id, GError **error);
/* AllReduce curve points (op NULL), ordered by algorithm, protocol, nodes, ranks, bytes. */
GArray *ddp_calibdb_fit_curve(DdpCalibDb *db, gint64 fit_id, GError **error);
/* The other collectives' curve points, ordered by op, then as above. */
GArray *ddp_calibdb_fit_collective_curve(DdpCalibDb *db, gint64 fit_id, GError **error);

/* "2026-06-01T12:00:00Z": now, UTC (g_free). */
char *ddp_calibdb_now(void);

/* Takes the database's run lock (an exclusive flock on the file, held until close): one
 * calibration run writes a database at a time, so two runs — or two --resume of one run — cannot
 * interleave.  Readers and `ddpsim fit` do not take it (SQLite's locking and busy timeout order
 * their transactions).  FALSE with DDP_CALIBDB_ERROR_BUSY when another process holds it. */
gboolean ddp_calibdb_lock_run(DdpCalibDb *db, GError **error);

#endif
