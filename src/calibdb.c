/* calibdb — the SQLite calibration store (see calibdb.h for what it holds and why it is durable).
 *
 * Design notes.
 * - Every statement is prepared once in ddp_calibdb_open() and kept in db->st[]; each use binds,
 *   steps, then resets and clears bindings (stmt_done), so no statement is ever left mid-step.
 * - Every SQLite return code goes through sql_error(), which maps it to a DdpCalibDbError: the codes
 *   that mean "this file is bad" (SQLITE_NOTADB, SQLITE_CORRUPT, SQLITE_CANTOPEN) are input errors,
 *   everything else is DDP_CALIBDB_ERROR_SQL (disk full, I/O, locked beyond the busy timeout).
 * - Reading point sets for several runs filters in C over one prepared full-table query instead of
 *   building an IN (…) list per call: calibration tables hold thousands of rows, not millions, and
 *   the alternative would mean preparing statements on the fly.
 * - Schema upgrades: user_version counts schema versions; a newer file is refused (we cannot know
 *   what it means), an older one is migrated step by step (migrate(): 1 → 2 adds `imports` and
 *   `fit_allreduce_curve`, 2 → 3 `collective_points` and `fit_collective_curve`); read-only, the
 *   new tables are empty TEMP tables of the connection.
 * - synchronous=FULL: one fsync per batch costs nothing next to a measurement that took a second,
 *   and it makes a committed batch survive a power cut too, not only a killed process.
 */
/* flock(), O_CLOEXEC under -std=c11 */
#define _DEFAULT_SOURCE

#include "calibdb.h"

#include "ranges.h"

#include <glib/gstdio.h>
#include <sqlite3.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

G_DEFINE_QUARK(ddp-calibdb-error-quark, ddp_calibdb_error)

static const char schema_sql[] =
  "CREATE TABLE runs ("
  "  id INTEGER PRIMARY KEY,"
  "  started TEXT NOT NULL,"
  "  finished TEXT,"
  "  host TEXT NOT NULL,"
  "  gpu_name TEXT NOT NULL,"
  "  gpus_per_node INTEGER NOT NULL,"
  "  nodes INTEGER NOT NULL,"
  "  ranks INTEGER NOT NULL,"
  "  sm_arch INTEGER NOT NULL,"
  "  sm_count INTEGER NOT NULL,"
  "  gpu_memory_bytes INTEGER NOT NULL,"
  "  driver_version TEXT NOT NULL,"
  "  cuda_version TEXT NOT NULL,"
  "  nccl_version TEXT NOT NULL,"
  "  cublas_version TEXT NOT NULL,"
  "  cudnn_version TEXT NOT NULL,"
  "  program TEXT NOT NULL,"
  "  arguments TEXT NOT NULL,"
  "  note TEXT NOT NULL DEFAULT '');"
  "CREATE TABLE batches ("
  "  run_id INTEGER NOT NULL REFERENCES runs(id),"
  "  name TEXT NOT NULL,"
  "  committed TEXT NOT NULL,"
  "  note TEXT NOT NULL DEFAULT '',"
  "  PRIMARY KEY (run_id, name));"
  "CREATE TABLE allreduce_points ("
  "  run_id INTEGER NOT NULL,"
  "  batch TEXT NOT NULL,"
  "  algorithm TEXT NOT NULL,"
  "  protocol TEXT NOT NULL,"
  "  ranks INTEGER NOT NULL,"
  "  nodes INTEGER NOT NULL,"
  "  bytes INTEGER NOT NULL,"
  "  dtype TEXT NOT NULL,"
  "  in_place INTEGER NOT NULL,"
  "  iterations INTEGER NOT NULL,"
  "  time_us REAL NOT NULL,"
  "  min_us REAL NOT NULL,"
  "  max_us REAL NOT NULL,"
  "  algbw_GBs REAL NOT NULL,"
  "  busbw_GBs REAL NOT NULL,"
  "  FOREIGN KEY (run_id, batch) REFERENCES batches(run_id, name));"
  "CREATE TABLE kernel_points ("
  "  run_id INTEGER NOT NULL,"
  "  batch TEXT NOT NULL,"
  "  probe TEXT NOT NULL,"
  "  layer_kind TEXT NOT NULL,"
  "  op TEXT NOT NULL,"
  "  precision TEXT NOT NULL,"
  "  signature TEXT NOT NULL,"
  "  layer TEXT NOT NULL,"
  "  batch_size REAL NOT NULL,"
  "  shape TEXT NOT NULL,"
  "  algo TEXT NOT NULL,"
  "  flops REAL NOT NULL,"
  "  bytes REAL NOT NULL,"
  "  iterations INTEGER NOT NULL,"
  "  time_us REAL NOT NULL,"
  "  min_us REAL NOT NULL,"
  "  max_us REAL NOT NULL,"
  "  tflops REAL NOT NULL,"
  "  GBs REAL NOT NULL,"
  "  FOREIGN KEY (run_id, batch) REFERENCES batches(run_id, name));"
  "CREATE INDEX allreduce_points_run ON allreduce_points(run_id);"
  "CREATE INDEX kernel_points_run ON kernel_points(run_id);"
  "CREATE TABLE fits ("
  "  id INTEGER PRIMARY KEY,"
  "  created TEXT NOT NULL,"
  "  runs TEXT NOT NULL,"
  "  gpu_name TEXT NOT NULL,"
  "  gpu_spec TEXT NOT NULL,"
  "  program TEXT NOT NULL,"
  "  note TEXT NOT NULL DEFAULT '');"
  "CREATE TABLE fit_allreduce ("
  "  fit_id INTEGER NOT NULL REFERENCES fits(id),"
  "  algorithm TEXT NOT NULL,"
  "  protocol TEXT NOT NULL,"
  "  ranks INTEGER NOT NULL,"
  "  nodes INTEGER NOT NULL,"
  "  alpha_us REAL NOT NULL,"
  "  algbw_GBs REAL NOT NULL,"
  "  busbw_GBs REAL NOT NULL,"
  "  n_points INTEGER NOT NULL,"
  "  min_bytes INTEGER NOT NULL,"
  "  max_bytes INTEGER NOT NULL,"
  "  rms_rel REAL NOT NULL,"
  "  max_rel REAL NOT NULL);"
  "CREATE TABLE fit_kernels ("
  "  fit_id INTEGER NOT NULL REFERENCES fits(id),"
  "  layer_kind TEXT NOT NULL,"
  "  precision TEXT NOT NULL,"
  "  basis TEXT NOT NULL,"
  "  rate REAL NOT NULL,"
  "  efficiency REAL,"          /* NULL when the GPU's peak is unknown */
  "  overhead_us REAL NOT NULL,"
  "  n_points INTEGER NOT NULL,"
  "  rms_rel REAL NOT NULL,"
  "  max_rel REAL NOT NULL);"
  "CREATE TABLE fit_layers ("
  "  fit_id INTEGER NOT NULL REFERENCES fits(id),"
  "  signature TEXT NOT NULL,"
  "  layer_kind TEXT NOT NULL,"
  "  layer TEXT NOT NULL,"
  "  precision TEXT NOT NULL,"
  "  batch_size REAL NOT NULL,"
  "  forward_us REAL NOT NULL,"
  "  backward_us REAL NOT NULL);"
  "CREATE TABLE fit_residuals ("
  "  fit_id INTEGER NOT NULL REFERENCES fits(id),"
  "  model TEXT NOT NULL,"
  "  key TEXT NOT NULL,"
  "  x REAL NOT NULL,"
  "  measured_us REAL NOT NULL,"
  "  fitted_us REAL NOT NULL,"
  "  rel REAL NOT NULL);";

/* Schema 2 (ddpsim fit --import, per-size AllReduce curves).  Created with schema 1 in a new file,
 * added by migrate() to a schema-1 file opened for writing, and created as TEMP tables (empty)
 * when a schema-1 file is opened read-only, so that every statement prepares either way. */
static const char schema2_sql[] =
  "CREATE %s TABLE imports ("
  "  run_id INTEGER PRIMARY KEY,"
  "  format TEXT NOT NULL,"
  "  source TEXT NOT NULL,"
  "  sha256 TEXT NOT NULL,"
  "  mtime TEXT NOT NULL,"
  "  size_bytes INTEGER NOT NULL,"
  "  gpus_per_process INTEGER NOT NULL,"
  "  imported TEXT NOT NULL,"
  "  note TEXT NOT NULL DEFAULT '');"
  "CREATE %s TABLE fit_allreduce_curve ("
  "  fit_id INTEGER NOT NULL,"
  "  algorithm TEXT NOT NULL,"
  "  protocol TEXT NOT NULL,"
  "  ranks INTEGER NOT NULL,"
  "  nodes INTEGER NOT NULL,"
  "  bytes INTEGER NOT NULL,"
  "  time_us REAL NOT NULL);";

/* Schema 3 (issue 19: nccl-tests all_gather_perf, reduce_scatter_perf and broadcast_perf imports).
 * The other collectives get tables of their own instead of an op column in allreduce_points and
 * fit_allreduce_curve: ALTER TABLE would change those tables' stored SQL (the schema check compares
 * it), and a read-only schema-2 file could not gain the column at all, whereas new tables, like
 * schema 2's, are empty TEMP tables there.  So AllReduce rows stay where every schema put them.
 *   collective_points     one timed size of one op, nccl-tests' columns (bytes: its size column —
 *                         AllGather's gathered output, ReduceScatter's reduced input, Broadcast's
 *                         buffer; busbw = algbw·(n−1)/n, (n−1)/n and 1);
 *   fit_collective_curve  the measured time per size of each fitted (op, variant, ranks, nodes). */
static const char schema3_sql[] =
  "CREATE %s TABLE collective_points ("
  "  run_id INTEGER NOT NULL,"
  "  batch TEXT NOT NULL,"
  "  op TEXT NOT NULL,"
  "  algorithm TEXT NOT NULL,"
  "  protocol TEXT NOT NULL,"
  "  ranks INTEGER NOT NULL,"
  "  nodes INTEGER NOT NULL,"
  "  bytes INTEGER NOT NULL,"
  "  dtype TEXT NOT NULL,"
  "  in_place INTEGER NOT NULL,"
  "  iterations INTEGER NOT NULL,"
  "  time_us REAL NOT NULL,"
  "  algbw_GBs REAL NOT NULL,"
  "  busbw_GBs REAL NOT NULL%s);"
  "CREATE %s TABLE fit_collective_curve ("
  "  fit_id INTEGER NOT NULL,"
  "  op TEXT NOT NULL,"
  "  algorithm TEXT NOT NULL,"
  "  protocol TEXT NOT NULL,"
  "  ranks INTEGER NOT NULL,"
  "  nodes INTEGER NOT NULL,"
  "  bytes INTEGER NOT NULL,"
  "  time_us REAL NOT NULL);";
/* Written files only: a TEMP table's batches would be another schema's. */
static const char schema3_written_sql[] =
  ", FOREIGN KEY (run_id, batch) REFERENCES batches(run_id, name)";
static const char schema3_index_sql[] = "CREATE INDEX collective_points_run ON collective_points(run_id);";

/* The schema-3 tables as written into a file (@temp FALSE: with the foreign key and the index) or
 * made for one read-only connection (TEMP, empty).  g_free(). */
static char *
schema3_text(gboolean temp)
{
  const char *kind = temp ? "TEMP" : "";
  g_autofree char *tables = g_strdup_printf(schema3_sql, kind, temp ? "" : schema3_written_sql, kind);
  return temp ? g_steal_pointer(&tables) : g_strconcat(tables, schema3_index_sql, NULL);
}

typedef enum {
  ST_BEGIN, ST_COMMIT, ST_ROLLBACK, ST_SAVEPOINT, ST_RELEASE, ST_ROLLBACK_TO,
  ST_RUN_INSERT, ST_RUN_FINISH, ST_RUN_NOTE, ST_RUN_GET, ST_RUNS, ST_LATEST_RUN, ST_BATCHES,
  ST_BATCH_INSERT, ST_BATCH_NOTE,
  ST_ALLREDUCE_INSERT, ST_KERNEL_INSERT, ST_ALLREDUCE_SELECT, ST_KERNEL_SELECT,
  ST_FIT_INSERT, ST_FIT_ALLREDUCE_INSERT, ST_FIT_KERNEL_INSERT, ST_FIT_LAYER_INSERT,
  ST_FIT_RESIDUAL_INSERT, ST_FIT_GET, ST_FIT_LATEST, ST_FIT_ALLREDUCE_SELECT,
  ST_FIT_KERNEL_SELECT, ST_FIT_LAYER_SELECT, ST_FIT_RESIDUAL_SELECT,
  ST_CHECK_ORPHAN_POINTS, ST_CHECK_ORPHAN_BATCHES, ST_CHECK_ORPHAN_FIT_ROWS,
  ST_IMPORT_INSERT, ST_IMPORT_FIND, ST_IMPORT_GET, ST_FIT_CURVE_INSERT, ST_FIT_CURVE_SELECT,
  ST_COLLECTIVE_INSERT, ST_COLLECTIVE_SELECT, ST_FIT_OP_CURVE_INSERT, ST_FIT_OP_CURVE_SELECT,
  ST_COUNT
} Statement;

#define RUN_COLUMNS                                                                                \
  "id, started, finished, host, gpu_name, gpus_per_node, nodes, ranks, sm_arch, sm_count, "        \
  "gpu_memory_bytes, driver_version, cuda_version, nccl_version, cublas_version, cudnn_version, "  \
  "program, arguments, note, "                                                                     \
  "(SELECT count(*) FROM batches b WHERE b.run_id = runs.id), "                                    \
  "(SELECT count(*) FROM allreduce_points a WHERE a.run_id = runs.id), "                           \
  "(SELECT count(*) FROM kernel_points k WHERE k.run_id = runs.id), "                              \
  "(SELECT count(*) FROM collective_points c WHERE c.run_id = runs.id)"

static const char *const statement_sql[ST_COUNT] = {
  [ST_BEGIN] = "BEGIN IMMEDIATE",
  [ST_COMMIT] = "COMMIT",
  [ST_ROLLBACK] = "ROLLBACK",
  [ST_SAVEPOINT] = "SAVEPOINT inner_txn",
  [ST_RELEASE] = "RELEASE inner_txn",
  [ST_ROLLBACK_TO] = "ROLLBACK TO inner_txn",
  [ST_RUN_INSERT] =
    "INSERT INTO runs (started, host, gpu_name, gpus_per_node, nodes, ranks, sm_arch, sm_count, "
    "gpu_memory_bytes, driver_version, cuda_version, nccl_version, cublas_version, cudnn_version, "
    "program, arguments, note) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
  [ST_RUN_FINISH] = "UPDATE runs SET finished = ? WHERE id = ?",
  [ST_RUN_NOTE] =
    "UPDATE runs SET note = CASE WHEN note = '' THEN ?1 ELSE note || char(10) || ?1 END WHERE id = ?2",
  [ST_RUN_GET] = "SELECT " RUN_COLUMNS " FROM runs WHERE id = ?",
  [ST_RUNS] = "SELECT " RUN_COLUMNS " FROM runs ORDER BY id",
  [ST_LATEST_RUN] =
    "SELECT id FROM runs WHERE (?1 = 0 OR finished IS NULL) "
    "AND (?2 = 0 OR EXISTS (SELECT 1 FROM batches b WHERE b.run_id = runs.id)) ORDER BY id DESC LIMIT 1",
  [ST_BATCHES] = "SELECT name FROM batches WHERE run_id = ?",
  [ST_BATCH_INSERT] = "INSERT INTO batches (run_id, name, committed) VALUES (?,?,?)",
  [ST_BATCH_NOTE] = "UPDATE batches SET committed = ?, note = ? WHERE run_id = ? AND name = ?",
  [ST_ALLREDUCE_INSERT] =
    "INSERT INTO allreduce_points (run_id, batch, algorithm, protocol, ranks, nodes, bytes, dtype, "
    "in_place, iterations, time_us, min_us, max_us, algbw_GBs, busbw_GBs) "
    "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
  [ST_KERNEL_INSERT] =
    "INSERT INTO kernel_points (run_id, batch, probe, layer_kind, op, precision, signature, layer, "
    "batch_size, shape, algo, flops, bytes, iterations, time_us, min_us, max_us, tflops, GBs) "
    "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
  [ST_ALLREDUCE_SELECT] =
    "SELECT run_id, batch, algorithm, protocol, ranks, nodes, bytes, dtype, in_place, iterations, "
    "time_us, min_us, max_us, algbw_GBs, busbw_GBs FROM allreduce_points "
    "ORDER BY run_id, algorithm, protocol, ranks, nodes, in_place, bytes, rowid",
  [ST_KERNEL_SELECT] =
    "SELECT run_id, batch, probe, layer_kind, op, precision, signature, layer, batch_size, shape, "
    "algo, flops, bytes, iterations, time_us, min_us, max_us, tflops, GBs FROM kernel_points "
    "ORDER BY run_id, layer_kind, precision, signature, batch_size, op, rowid",
  [ST_FIT_INSERT] =
    "INSERT INTO fits (created, runs, gpu_name, gpu_spec, program, note) VALUES (?,?,?,?,?,?)",
  [ST_FIT_ALLREDUCE_INSERT] =
    "INSERT INTO fit_allreduce (fit_id, algorithm, protocol, ranks, nodes, alpha_us, algbw_GBs, "
    "busbw_GBs, n_points, min_bytes, max_bytes, rms_rel, max_rel) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
  [ST_FIT_KERNEL_INSERT] =
    "INSERT INTO fit_kernels (fit_id, layer_kind, precision, basis, rate, efficiency, overhead_us, "
    "n_points, rms_rel, max_rel) VALUES (?,?,?,?,?,?,?,?,?,?)",
  [ST_FIT_LAYER_INSERT] =
    "INSERT INTO fit_layers (fit_id, signature, layer_kind, layer, precision, batch_size, "
    "forward_us, backward_us) VALUES (?,?,?,?,?,?,?,?)",
  [ST_FIT_RESIDUAL_INSERT] =
    "INSERT INTO fit_residuals (fit_id, model, key, x, measured_us, fitted_us, rel) VALUES (?,?,?,?,?,?,?)",
  [ST_FIT_GET] = "SELECT id, created, runs, gpu_name, gpu_spec, program, note FROM fits WHERE id = ?",
  [ST_FIT_LATEST] = "SELECT id, created, runs, gpu_name, gpu_spec, program, note FROM fits ORDER BY id DESC LIMIT 1",
  [ST_FIT_ALLREDUCE_SELECT] =
    "SELECT algorithm, protocol, ranks, nodes, alpha_us, algbw_GBs, busbw_GBs, n_points, min_bytes, "
    "max_bytes, rms_rel, max_rel FROM fit_allreduce WHERE fit_id = ? ORDER BY rowid",
  [ST_FIT_KERNEL_SELECT] =
    "SELECT layer_kind, precision, basis, rate, efficiency, overhead_us, n_points, rms_rel, max_rel "
    "FROM fit_kernels WHERE fit_id = ? ORDER BY rowid",
  [ST_FIT_LAYER_SELECT] =
    "SELECT signature, layer_kind, layer, precision, batch_size, forward_us, backward_us "
    "FROM fit_layers WHERE fit_id = ? ORDER BY rowid",
  [ST_FIT_RESIDUAL_SELECT] =
    "SELECT model, key, x, measured_us, fitted_us, rel FROM fit_residuals WHERE fit_id = ? ORDER BY rowid",
  [ST_CHECK_ORPHAN_POINTS] =
    "SELECT (SELECT count(*) FROM allreduce_points p WHERE NOT EXISTS "
    "  (SELECT 1 FROM batches b WHERE b.run_id = p.run_id AND b.name = p.batch)) + "
    "(SELECT count(*) FROM kernel_points p WHERE NOT EXISTS "
    "  (SELECT 1 FROM batches b WHERE b.run_id = p.run_id AND b.name = p.batch)) + "
    "(SELECT count(*) FROM collective_points p WHERE NOT EXISTS "
    "  (SELECT 1 FROM batches b WHERE b.run_id = p.run_id AND b.name = p.batch))",
  [ST_CHECK_ORPHAN_BATCHES] =
    "SELECT count(*) FROM batches b WHERE NOT EXISTS (SELECT 1 FROM runs r WHERE r.id = b.run_id)",
  [ST_CHECK_ORPHAN_FIT_ROWS] =
    "SELECT (SELECT count(*) FROM fit_allreduce WHERE fit_id NOT IN (SELECT id FROM fits)) + "
    "(SELECT count(*) FROM fit_kernels WHERE fit_id NOT IN (SELECT id FROM fits)) + "
    "(SELECT count(*) FROM fit_layers WHERE fit_id NOT IN (SELECT id FROM fits)) + "
    "(SELECT count(*) FROM fit_residuals WHERE fit_id NOT IN (SELECT id FROM fits)) + "
    "(SELECT count(*) FROM fit_allreduce_curve WHERE fit_id NOT IN (SELECT id FROM fits)) + "
    "(SELECT count(*) FROM fit_collective_curve WHERE fit_id NOT IN (SELECT id FROM fits))",
  [ST_IMPORT_INSERT] =
    "INSERT INTO imports (run_id, format, source, sha256, mtime, size_bytes, gpus_per_process, imported, note) "
    "VALUES (?,?,?,?,?,?,?,?,?)",
  [ST_IMPORT_FIND] = "SELECT run_id FROM imports WHERE sha256 = ? AND format = ? ORDER BY run_id LIMIT 1",
  [ST_IMPORT_GET] =
    "SELECT run_id, format, source, sha256, mtime, size_bytes, gpus_per_process, imported, note "
    "FROM imports WHERE run_id = ?",
  [ST_FIT_CURVE_INSERT] =
    "INSERT INTO fit_allreduce_curve (fit_id, algorithm, protocol, ranks, nodes, bytes, time_us) "
    "VALUES (?,?,?,?,?,?,?)",
  [ST_FIT_CURVE_SELECT] =
    "SELECT algorithm, protocol, ranks, nodes, bytes, time_us FROM fit_allreduce_curve WHERE fit_id = ? "
    "ORDER BY algorithm, protocol, nodes, ranks, bytes",
  [ST_COLLECTIVE_INSERT] =
    "INSERT INTO collective_points (run_id, batch, op, algorithm, protocol, ranks, nodes, bytes, dtype, in_place, "
    "iterations, time_us, algbw_GBs, busbw_GBs) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
  [ST_COLLECTIVE_SELECT] =
    "SELECT run_id, batch, op, algorithm, protocol, ranks, nodes, bytes, dtype, in_place, iterations, time_us, "
    "algbw_GBs, busbw_GBs FROM collective_points "
    "ORDER BY run_id, op, algorithm, protocol, ranks, nodes, in_place, bytes, rowid",
  [ST_FIT_OP_CURVE_INSERT] =
    "INSERT INTO fit_collective_curve (fit_id, op, algorithm, protocol, ranks, nodes, bytes, time_us) "
    "VALUES (?,?,?,?,?,?,?,?)",
  [ST_FIT_OP_CURVE_SELECT] =
    "SELECT op, algorithm, protocol, ranks, nodes, bytes, time_us FROM fit_collective_curve WHERE fit_id = ? "
    "ORDER BY op, algorithm, protocol, nodes, ranks, bytes",
};

typedef enum { TXN_NONE, TXN_BATCH, TXN_FIT } Transaction;

struct _DdpCalibDb {
  sqlite3 *sql;
  char *path;
  DdpCalibDbMode mode;
  sqlite3_stmt *st[ST_COUNT];
  Transaction txn;
  gint64 txn_run;      /* TXN_BATCH: the batch's run */
  char *txn_batch;     /* TXN_BATCH: its name */
  gint64 txn_fit;      /* TXN_FIT: the fit's id */
  int run_lock;        /* ddp_calibdb_lock_run's descriptor, or -1 */
  gboolean outer;      /* ddp_calibdb_transaction_begin: batches and fits are savepoints in it */
  gboolean import_txn; /* the outer transaction is an import's own (ddp_calibdb_import_begin) */
};

/* ---- errors -------------------------------------------------------------------------------- */

gboolean
ddp_calibdb_error_is_input(const GError *error)
{
  return error && error->domain == DDP_CALIBDB_ERROR && error->code != DDP_CALIBDB_ERROR_SQL;
}

static int
code_for(int rc)
{
  switch (rc & 0xff) {
  case SQLITE_NOTADB:
  case SQLITE_CORRUPT:
    return DDP_CALIBDB_ERROR_CORRUPT;
  case SQLITE_CANTOPEN:
    return DDP_CALIBDB_ERROR_OPEN;
  default:
    return DDP_CALIBDB_ERROR_SQL;
  }
}

/* Sets "PATH: WHAT: sqlite's message" with the code that @rc maps to. */
static void
sql_error(const DdpCalibDb *db, GError **error, int rc, const char *what)
{
  const char *msg = db->sql ? sqlite3_errmsg(db->sql) : sqlite3_errstr(rc);
  if ((rc & 0xff) == SQLITE_NOTADB)
    msg = "not an SQLite database (damaged, truncated or some other kind of file)";
  /* SQLite quotes the file's own text (a malformed schema): one line, escaped (fuzz-calibdb) */
  g_autofree char *safe = ddp_range_quote_n(msg, 300);
  g_set_error(error, DDP_CALIBDB_ERROR, code_for(rc), "%s: %s: %s", db->path, what, safe);
}

/* Resets @st after use so it can be bound again; keeps the first error. */
static void
stmt_done(sqlite3_stmt *st)
{
  sqlite3_reset(st);
  sqlite3_clear_bindings(st);
}

/* Steps a statement that returns no rows. */
static gboolean
exec_stmt(DdpCalibDb *db, Statement s, const char *what, GError **error)
{
  int rc = sqlite3_step(db->st[s]);
  if (rc != SQLITE_DONE) {
    sql_error(db, error, rc, what);
    stmt_done(db->st[s]);
    return FALSE;
  }
  stmt_done(db->st[s]);
  return TRUE;
}

/* Binds with error checking folded: each helper returns the rc, ORed into a flag by callers. */
static int
bind_text(sqlite3_stmt *st, int i, const char *s)
{
  return sqlite3_bind_text(st, i, s ? s : "", -1, SQLITE_STATIC);
}

static int
bind_double(sqlite3_stmt *st, int i, double v)
{
  return isfinite(v) ? sqlite3_bind_double(st, i, v) : sqlite3_bind_null(st, i);
}

static char *
column_text(sqlite3_stmt *st, int i)
{
  const unsigned char *t = sqlite3_column_text(st, i);
  return t ? g_strdup((const char *)t) : NULL;
}

/* An INTEGER column as int; a stored value outside int (2^32 + 8 ranks) comes back as G_MININT,
 * which every range check refuses, instead of being cut to its low 32 bits. */
static int
column_int(sqlite3_stmt *st, int i)
{
  gint64 v = sqlite3_column_int64(st, i);
  return v >= G_MININT && v <= G_MAXINT ? (int)v : G_MININT;
}

/* A REAL column as double; NULL, and text or a blob that SQLite's REAL affinity could not turn
 * into a number ('x' would read as 0), come back as NAN, which every value check refuses. */
static double
column_double(sqlite3_stmt *st, int i)
{
  int type = sqlite3_column_type(st, i);
  return type == SQLITE_INTEGER || type == SQLITE_FLOAT ? sqlite3_column_double(st, i) : NAN;
}

/* Every bind_* returns SQLITE_OK (0) or an error; binding fails only on programming errors
 * (wrong index, out of memory), reported as SQL errors. */
static gboolean
check_binds(DdpCalibDb *db, Statement s, int rc, const char *what, GError **error)
{
  if (rc == SQLITE_OK)
    return TRUE;
  sql_error(db, error, rc, what);
  stmt_done(db->st[s]);
  return FALSE;
}

char *
ddp_calibdb_now(void)
{
  g_autoptr(GDateTime) now = g_date_time_new_now_utc();
  return g_date_time_format(now, "%Y-%m-%dT%H:%M:%SZ");
}

/* ---- record clearing ----------------------------------------------------------------------- */

void
ddp_calib_run_free(DdpCalibRun *run)
{
  if (!run)
    return;
  g_free(run->started);
  g_free(run->finished);
  g_free(run->host);
  g_free(run->gpu_name);
  g_free(run->driver_version);
  g_free(run->cuda_version);
  g_free(run->nccl_version);
  g_free(run->cublas_version);
  g_free(run->cudnn_version);
  g_free(run->program);
  g_free(run->arguments);
  g_free(run->note);
  g_free(run);
}

void
ddp_calib_allreduce_point_clear(DdpCalibAllreducePoint *p)
{
  g_clear_pointer(&p->batch, g_free);
  g_clear_pointer(&p->algorithm, g_free);
  g_clear_pointer(&p->protocol, g_free);
  g_clear_pointer(&p->dtype, g_free);
}

void
ddp_calib_collective_point_clear(DdpCalibCollectivePoint *p)
{
  g_clear_pointer(&p->batch, g_free);
  g_clear_pointer(&p->op, g_free);
  g_clear_pointer(&p->algorithm, g_free);
  g_clear_pointer(&p->protocol, g_free);
  g_clear_pointer(&p->dtype, g_free);
}

void
ddp_calib_kernel_point_clear(DdpCalibKernelPoint *p)
{
  g_clear_pointer(&p->batch, g_free);
  g_clear_pointer(&p->probe, g_free);
  g_clear_pointer(&p->layer_kind, g_free);
  g_clear_pointer(&p->op, g_free);
  g_clear_pointer(&p->precision, g_free);
  g_clear_pointer(&p->signature, g_free);
  g_clear_pointer(&p->layer, g_free);
  g_clear_pointer(&p->shape, g_free);
  g_clear_pointer(&p->algo, g_free);
}

void
ddp_calib_fit_free(DdpCalibFit *fit)
{
  if (!fit)
    return;
  g_free(fit->created);
  g_free(fit->runs);
  g_free(fit->gpu_name);
  g_free(fit->gpu_spec);
  g_free(fit->program);
  g_free(fit->note);
  g_free(fit);
}

void
ddp_calib_curve_point_clear(DdpCalibCurvePoint *p)
{
  g_clear_pointer(&p->op, g_free);
  g_clear_pointer(&p->algorithm, g_free);
  g_clear_pointer(&p->protocol, g_free);
}

void
ddp_calib_import_clear(DdpCalibImport *i)
{
  g_clear_pointer(&i->format, g_free);
  g_clear_pointer(&i->source, g_free);
  g_clear_pointer(&i->sha256, g_free);
  g_clear_pointer(&i->mtime, g_free);
  g_clear_pointer(&i->imported, g_free);
  g_clear_pointer(&i->note, g_free);
}

void
ddp_calib_allreduce_fit_clear(DdpCalibAllreduceFit *f)
{
  g_clear_pointer(&f->algorithm, g_free);
  g_clear_pointer(&f->protocol, g_free);
}

void
ddp_calib_kernel_fit_clear(DdpCalibKernelFit *f)
{
  g_clear_pointer(&f->layer_kind, g_free);
  g_clear_pointer(&f->precision, g_free);
  g_clear_pointer(&f->basis, g_free);
}

void
ddp_calib_layer_fit_clear(DdpCalibLayerFit *f)
{
  g_clear_pointer(&f->signature, g_free);
  g_clear_pointer(&f->layer_kind, g_free);
  g_clear_pointer(&f->layer, g_free);
  g_clear_pointer(&f->precision, g_free);
}

void
ddp_calib_residual_clear(DdpCalibResidual *r)
{
  g_clear_pointer(&r->model, g_free);
  g_clear_pointer(&r->key, g_free);
}

/* ---- opening ------------------------------------------------------------------------------- */

/* Runs one PRAGMA (or any one-row query) returning an integer. */
static gboolean
query_int(DdpCalibDb *db, const char *sql, gint64 *out, GError **error)
{
  sqlite3_stmt *st = NULL;
  int rc = sqlite3_prepare_v2(db->sql, sql, -1, &st, NULL);
  if (rc == SQLITE_OK) {
    rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
      *out = sqlite3_column_int64(st, 0);
      rc = SQLITE_OK;
    }
  }
  if (rc != SQLITE_OK)
    sql_error(db, error, rc, sql);
  sqlite3_finalize(st);
  return rc == SQLITE_OK;
}

/* Names of the tables in the file, for the "not ours" message. */
static char *
table_names(DdpCalibDb *db)
{
  sqlite3_stmt *st = NULL;
  GString *names = g_string_new(NULL);
  if (sqlite3_prepare_v2(db->sql, "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name LIMIT 6",
                         -1, &st, NULL) == SQLITE_OK) {
    for (int n = 0; sqlite3_step(st) == SQLITE_ROW; n++)
      g_string_append_printf(names, "%s%s", n ? ", " : "", n < 5 ? (const char *)sqlite3_column_text(st, 0) : "...");
  }
  sqlite3_finalize(st);
  return g_string_free(names, FALSE);
}

static gboolean
exec_sql(DdpCalibDb *db, const char *sql, const char *what, GError **error)
{
  int rc = sqlite3_exec(db->sql, sql, NULL, NULL, NULL);
  if (rc != SQLITE_OK) {
    sql_error(db, error, rc, what);
    return FALSE;
  }
  return TRUE;
}

static gboolean
create_schema(DdpCalibDb *db, GError **error)
{
  g_autofree char *pragmas = g_strdup_printf("PRAGMA application_id = %d; PRAGMA user_version = %d;",
                                             DDP_CALIBDB_APPLICATION_ID, DDP_CALIBDB_SCHEMA_VERSION);
  if (!exec_sql(db, "BEGIN IMMEDIATE", "creating the schema", error))
    return FALSE;
  g_autofree char *schema2 = g_strdup_printf(schema2_sql, "", "");
  g_autofree char *schema3 = schema3_text(FALSE);
  if (!exec_sql(db, schema_sql, "creating the schema", error) ||
      !exec_sql(db, schema2, "creating the schema", error) ||
      !exec_sql(db, schema3, "creating the schema", error) ||
      !exec_sql(db, pragmas, "creating the schema", error)) {
    sqlite3_exec(db->sql, "ROLLBACK", NULL, NULL, NULL);
    return FALSE;
  }
  return exec_sql(db, "COMMIT", "creating the schema", error);
}

/* Brings a schema-1 or schema-2 file to schema 3: written files get the missing tables for good
 * (one transaction); read-only ones get them as empty TEMP tables of this connection, so a
 * calibration taken by an older ddpsim reads as one with no imports, no curves and no other
 * collective than AllReduce — and stays byte for byte as it was. */
static gboolean
migrate(DdpCalibDb *db, gint64 version, GError **error)
{
  if (version >= DDP_CALIBDB_SCHEMA_VERSION)
    return TRUE;
  gboolean temp = db->mode == DDP_CALIBDB_READ;
  g_autofree char *schema2 = version < 2 ? g_strdup_printf(schema2_sql, temp ? "TEMP" : "", temp ? "TEMP" : "")
                                         : g_strdup("");
  g_autofree char *schema3 = schema3_text(temp);
  if (temp)
    return exec_sql(db, schema2, "reading an older schema", error) &&
           exec_sql(db, schema3, "reading an older schema", error);
  g_autofree char *pragma = g_strdup_printf("PRAGMA user_version = %d;", DDP_CALIBDB_SCHEMA_VERSION);
  if (!exec_sql(db, "BEGIN IMMEDIATE", "upgrading the schema", error))
    return FALSE;
  if (!exec_sql(db, schema2, "upgrading the schema", error) || !exec_sql(db, schema3, "upgrading the schema", error) ||
      !exec_sql(db, pragma, "upgrading the schema", error)) {
    sqlite3_exec(db->sql, "ROLLBACK", NULL, NULL, NULL);
    return FALSE;
  }
  return exec_sql(db, "COMMIT", "upgrading the schema", error);
}

/* Decides whether the file is ours, empty (create it), foreign, newer, or damaged. */
static gboolean
check_identity(DdpCalibDb *db, gboolean creating, gint64 *schema, GError **error)
{
  gint64 app_id = 0, version = 0, tables = 0;
  if (!query_int(db, "PRAGMA application_id", &app_id, error) ||
      !query_int(db, "PRAGMA user_version", &version, error) ||
      !query_int(db, "SELECT count(*) FROM sqlite_master", &tables, error))
    return FALSE;
  if (app_id == 0 && version == 0 && tables == 0) {
    if (db->mode == DDP_CALIBDB_READ) {
      g_set_error(error, DDP_CALIBDB_ERROR, DDP_CALIBDB_ERROR_NOT_FOUND,
                  "%s: empty file: no calibration data (run ddpsim-calibrate --db %s first)", db->path, db->path);
      return FALSE;
    }
    /* New files are made whole by create_new_file(); an empty file that was already there is
     * someone else's (a touch, a truncated download): never write a schema into it. */
    if (!creating) {
      g_set_error(error, DDP_CALIBDB_ERROR, DDP_CALIBDB_ERROR_FOREIGN,
                  "%s: an existing empty file, not a ddpsim calibration database (remove it, or name a new file)",
                  db->path);
      return FALSE;
    }
    *schema = DDP_CALIBDB_SCHEMA_VERSION;
    return create_schema(db, error);
  }
  if ((guint32)app_id != DDP_CALIBDB_APPLICATION_ID) {
    g_autofree char *names = table_names(db);
    g_set_error(error, DDP_CALIBDB_ERROR, DDP_CALIBDB_ERROR_FOREIGN,
                "%s: an SQLite database, but not a ddpsim calibration database (application_id 0x%08x, "
                "expected 0x%08x; tables: %s)", db->path, (guint32)app_id, DDP_CALIBDB_APPLICATION_ID,
                *names ? names : "none");
    return FALSE;
  }
  if (version > DDP_CALIBDB_SCHEMA_VERSION) {
    g_set_error(error, DDP_CALIBDB_ERROR, DDP_CALIBDB_ERROR_VERSION,
                "%s: written with calibration schema %" G_GINT64_FORMAT " by a newer ddpsim; this one reads "
                "schema %d", db->path, version, DDP_CALIBDB_SCHEMA_VERSION);
    return FALSE;
  }
  if (version < 1) {
    g_set_error(error, DDP_CALIBDB_ERROR, DDP_CALIBDB_ERROR_CORRUPT,
                "%s: ddpsim's application_id but no schema version: damaged", db->path);
    return FALSE;
  }
  *schema = version;
  return TRUE;
}

/* SQLite's settings for a database file that may be hostile (sqlite.org/security.html): no
 * trigger or view ever runs, no schema function with side effects, no writes to the schema
 * tables.  Failure (an SQLite without the option) leaves the default, which check_schema_objects
 * backs up by refusing such files anyway. */
static void
defend(sqlite3 *sql)
{
  sqlite3_db_config(sql, SQLITE_DBCONFIG_DEFENSIVE, 1, NULL);
  sqlite3_db_config(sql, SQLITE_DBCONFIG_ENABLE_TRIGGER, 0, NULL);
  sqlite3_db_config(sql, SQLITE_DBCONFIG_ENABLE_VIEW, 0, NULL);
  sqlite3_db_config(sql, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, NULL);
}

/* "type name sql" of every schema object of @sql's main database, into @set (owned keys). */
static gboolean
schema_rows(sqlite3 *sql, GHashTable *set, GPtrArray *order)
{
  sqlite3_stmt *st = NULL;
  if (sqlite3_prepare_v2(sql, "SELECT type, name, tbl_name, coalesce(sql, '') FROM main.sqlite_master ORDER BY rowid",
                         -1, &st, NULL) != SQLITE_OK)
    return FALSE;
  int rc;
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    char *key = g_strdup_printf("%s\x1f%s\x1f%s\x1f%s", sqlite3_column_text(st, 0), sqlite3_column_text(st, 1),
                                sqlite3_column_text(st, 2), sqlite3_column_text(st, 3));
    if (order)
      g_ptr_array_add(order, key);
    else
      g_hash_table_add(set, key);
  }
  sqlite3_finalize(st);
  return rc == SQLITE_DONE;
}

/* Refuses a file whose schema holds an object ddpsim did not create at schema @version (a trigger,
 * a view, another index or table, a column added or a table redefined): the expected schema is
 * made in memory with the same SQL and compared object by object (type, name, table, SQL text as
 * SQLite normalises it).  A missing object is left to the statements' preparation ("damaged"). */
static gboolean
check_schema_objects(DdpCalibDb *db, gint64 version, GError **error)
{
  sqlite3 *ref = NULL;
  g_autoptr(GHashTable) expected = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
  g_autoptr(GPtrArray) present = g_ptr_array_new_with_free_func(g_free);
  g_autofree char *schema2 = g_strdup_printf(schema2_sql, "", "");
  g_autofree char *schema3 = schema3_text(FALSE);
  gboolean ok = sqlite3_open_v2(":memory:", &ref, SQLITE_OPEN_READWRITE, NULL) == SQLITE_OK &&
                sqlite3_exec(ref, schema_sql, NULL, NULL, NULL) == SQLITE_OK &&
                (version < 2 || sqlite3_exec(ref, schema2, NULL, NULL, NULL) == SQLITE_OK) &&
                (version < 3 || sqlite3_exec(ref, schema3, NULL, NULL, NULL) == SQLITE_OK) &&
                schema_rows(ref, expected, NULL);
  sqlite3_close(ref);
  if (!ok) {
    g_set_error(error, DDP_CALIBDB_ERROR, DDP_CALIBDB_ERROR_SQL, "%s: cannot build the reference schema", db->path);
    return FALSE;
  }
  if (!schema_rows(db->sql, NULL, present)) {
    sql_error(db, error, sqlite3_errcode(db->sql), "reading the schema");
    return FALSE;
  }
  for (guint i = 0; i < present->len; i++) {
    const char *key = g_ptr_array_index(present, i);
    if (g_hash_table_contains(expected, key))
      continue;
    g_auto(GStrv) f = g_strsplit(key, "\x1f", 4);
    g_autofree char *name = ddp_range_quote_n(f[1] ? f[1] : "", 60);
    gboolean ours = FALSE;
    GHashTableIter it;
    gpointer k;
    g_hash_table_iter_init(&it, expected);
    while (!ours && g_hash_table_iter_next(&it, &k, NULL)) {
      g_auto(GStrv) e = g_strsplit(k, "\x1f", 4);
      ours = strcmp(e[0], f[0]) == 0 && strcmp(e[1], f[1] ? f[1] : "") == 0;
    }
    g_set_error(error, DDP_CALIBDB_ERROR, DDP_CALIBDB_ERROR_FOREIGN,
                "%s: %s %s \"%s\" that ddpsim did not create: refused (a calibration database holds only "
                "ddpsim's own tables and indexes; no triggers or views)", db->path, ours ? "an altered" : f[0][0] == 'i' ? "an" : "a",
                f[0], name);
    return FALSE;
  }
  return TRUE;
}

/* PRAGMA quick_check: O(file) but calibration files are small, and it turns a damaged page into
 * a clear error at open instead of a confusing one halfway through a fit. */
static gboolean
check_integrity(DdpCalibDb *db, GError **error)
{
  sqlite3_stmt *st = NULL;
  int rc = sqlite3_prepare_v2(db->sql, "PRAGMA quick_check(1)", -1, &st, NULL);
  if (rc == SQLITE_OK)
    rc = sqlite3_step(st);
  if (rc != SQLITE_ROW) {
    sql_error(db, error, rc, "integrity check");
    sqlite3_finalize(st);
    return FALSE;
  }
  const char *result = (const char *)sqlite3_column_text(st, 0);
  gboolean ok = result && strcmp(result, "ok") == 0;
  if (!ok) {
    /* "*** in database main ***\nPage 24: btreeInitPage() returns error code 11": one line */
    const char *prefix = "*** in database main ***\n";
    g_autofree char *line = g_strdup(!result ? "integrity check failed"
                                     : g_str_has_prefix(result, prefix) ? result + strlen(prefix) : result);
    g_strdelimit(line, "\n", ' ');
    g_set_error(error, DDP_CALIBDB_ERROR, DDP_CALIBDB_ERROR_CORRUPT, "%s: damaged database (%s)", db->path, line);
  }
  sqlite3_finalize(st);
  return ok;
}

/* Creates @path with the whole schema, atomically: the schema is written into a temporary file
 * beside it, which is then linked into place only if @path still does not exist.  Two writers
 * creating one database thus never race on CREATE TABLE: the loser's link fails with EEXIST and
 * it opens the winner's complete file.  No other process ever sees a half-made database. */
static gboolean
create_new_file(const char *path, GError **error)
{
  g_autofree char *tmp = g_strdup_printf("%s.new-XXXXXX", path);
  int fd = g_mkstemp(tmp);
  if (fd < 0) {
    int saved = errno;
    g_set_error(error, DDP_CALIBDB_ERROR, DDP_CALIBDB_ERROR_OPEN, "%s: cannot create: %s", path, g_strerror(saved));
    return FALSE;
  }
  close(fd);
  DdpCalibDb fresh = { .path = (char *)path, .mode = DDP_CALIBDB_WRITE, .run_lock = -1 };
  int rc = sqlite3_open_v2(tmp, &fresh.sql, SQLITE_OPEN_READWRITE, NULL);
  gboolean ok = rc == SQLITE_OK;
  if (!ok)
    sql_error(&fresh, error, rc, "creating");
  else
    ok = check_identity(&fresh, TRUE, &(gint64){ 0 }, error);
  sqlite3_close(fresh.sql);
  if (ok && link(tmp, path) != 0 && errno != EEXIST) {
    int saved = errno;
    g_set_error(error, DDP_CALIBDB_ERROR, DDP_CALIBDB_ERROR_OPEN, "%s: cannot create: %s", path, g_strerror(saved));
    ok = FALSE;
  }
  g_unlink(tmp);
  return ok;
}

/**
 * ddp_calibdb_lock_run:
 * See calibdb.h.  flock() locks are independent of the POSIX locks SQLite takes on the same file.
 */
gboolean
ddp_calibdb_lock_run(DdpCalibDb *db, GError **error)
{
  if (db->run_lock >= 0 || strcmp(db->path, ":memory:") == 0)
    return TRUE;
  int fd = open(db->path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    int saved = errno;
    g_set_error(error, DDP_CALIBDB_ERROR, DDP_CALIBDB_ERROR_OPEN, "%s: cannot open: %s", db->path, g_strerror(saved));
    return FALSE;
  }
  if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
    int saved = errno;
    close(fd);
    g_set_error(error, DDP_CALIBDB_ERROR, saved == EWOULDBLOCK ? DDP_CALIBDB_ERROR_BUSY : DDP_CALIBDB_ERROR_OPEN,
                "%s: %s", db->path, saved == EWOULDBLOCK ? "another calibration run is writing this database "
                "(one run at a time; wait for it, or use another --db)" : g_strerror(saved));
    return FALSE;
  }
  db->run_lock = fd;
  return TRUE;
}

/**
 * ddp_calibdb_open:
 * @path: a file, or ":memory:" (tests)
 * @mode: DDP_CALIBDB_READ (the file must exist and be ours) or DDP_CALIBDB_WRITE (created with
 *   the current schema when missing or empty; in WAL mode while open, so that readers can read
 *   during a calibration; a rollback journal again once closed)
 *
 * Returns: (transfer full): the open store, or NULL with @error set — DDP_CALIBDB_ERROR_OPEN,
 * _CORRUPT, _FOREIGN, _VERSION or _NOT_FOUND (empty file in read mode) are the user's to fix.
 * Close with ddp_calibdb_close().
 */
DdpCalibDb *
ddp_calibdb_open(const char *path, DdpCalibDbMode mode, GError **error)
{
  g_return_val_if_fail(path != NULL, NULL);
  g_autoptr(DdpCalibDb) db = g_new0(DdpCalibDb, 1);
  db->path = g_strdup(path);
  db->mode = mode;
  db->run_lock = -1;
  gboolean memory = strcmp(path, ":memory:") == 0;
  gboolean writer = mode != DDP_CALIBDB_READ;
  GStatBuf st;
  if (!memory && g_stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {   /* SQLite would say "disk I/O error" */
    g_set_error(error, DDP_CALIBDB_ERROR, DDP_CALIBDB_ERROR_OPEN, "%s: %s, not a calibration database file", path,
                S_ISDIR(st.st_mode) ? "a directory" : "a device, FIFO or socket");
    return NULL;
  }
  if (writer && !memory && !g_file_test(path, G_FILE_TEST_EXISTS) && !create_new_file(path, error))
    return NULL;
  int flags = writer ? SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE : SQLITE_OPEN_READONLY;
  int rc = sqlite3_open_v2(path, &db->sql, flags, NULL);
  if (rc != SQLITE_OK) {
    g_set_error(error, DDP_CALIBDB_ERROR, DDP_CALIBDB_ERROR_OPEN, "%s: cannot open%s: %s", path, writer ? " or create" : "",
                db->sql ? sqlite3_errmsg(db->sql) : sqlite3_errstr(rc));
    return NULL;
  }
  sqlite3_extended_result_codes(db->sql, 1);
  /* Another process (a running calibration) may hold the write lock for a moment. */
  sqlite3_busy_timeout(db->sql, 10000);
  defend(db->sql);
  gint64 schema = 0;
  if (!check_identity(db, memory, &schema, error) || !check_schema_objects(db, schema, error) ||
      !check_integrity(db, error) || !migrate(db, schema, error))
    return NULL;
  /* journal_mode answers with the mode in effect: "wal", or "memory" for :memory: */
  if (mode == DDP_CALIBDB_WRITE && !exec_sql(db, "PRAGMA journal_mode = WAL", "switching to WAL", error))
    return NULL;
  if (writer && !exec_sql(db, "PRAGMA synchronous = FULL", "setting synchronous", error))
    return NULL;
  if (!exec_sql(db, "PRAGMA foreign_keys = ON", "enabling foreign keys", error))
    return NULL;
  for (int s = 0; s < ST_COUNT; s++) {
    rc = sqlite3_prepare_v3(db->sql, statement_sql[s], -1, SQLITE_PREPARE_PERSISTENT, &db->st[s], NULL);
    if (rc != SQLITE_OK) {
      /* our application_id and schema version, yet a statement of that schema does not compile:
       * a table or column was dropped or altered by hand */
      g_autofree char *safe = ddp_range_quote_n(sqlite3_errmsg(db->sql), 300);
      g_set_error(error, DDP_CALIBDB_ERROR, (rc & 0xff) == SQLITE_ERROR ? DDP_CALIBDB_ERROR_CORRUPT : code_for(rc),
                  "%s: damaged database: %s", db->path, safe);
      return NULL;
    }
  }
  return g_steal_pointer(&db);
}

/**
 * ddp_calibdb_close:
 * Rolls back an open batch or fit (what a killed process would lose too), finalizes the statements
 * and closes the file.  NULL is ignored.
 */
void
ddp_calibdb_close(DdpCalibDb *db)
{
  if (!db)
    return;
  if (db->txn != TXN_NONE || db->outer)
    ddp_calibdb_transaction_rollback(db);
  for (int s = 0; s < ST_COUNT; s++)
    sqlite3_finalize(db->st[s]);
  /* Back to a rollback journal once the writing is done: a reader of a WAL-mode file needs
   * SQLite's -shm index beside it and, being read-only, cannot remove it again.  Best effort: with
   * another connection still open (a reader during a calibration) the file stays in WAL mode. */
  if (db->sql && db->mode == DDP_CALIBDB_WRITE)
    sqlite3_exec(db->sql, "PRAGMA journal_mode = DELETE", NULL, NULL, NULL);
  if (db->sql)
    sqlite3_close(db->sql);
  if (db->run_lock >= 0)
    close(db->run_lock);
  g_free(db->txn_batch);
  g_free(db->path);
  g_free(db);
}

const char *
ddp_calibdb_path(const DdpCalibDb *db)
{
  return db->path;
}

static gboolean
count_is_zero(DdpCalibDb *db, Statement s, const char *what, GError **error)
{
  int rc = sqlite3_step(db->st[s]);
  if (rc != SQLITE_ROW) {
    sql_error(db, error, rc, what);
    stmt_done(db->st[s]);
    return FALSE;
  }
  gint64 n = sqlite3_column_int64(db->st[s], 0);
  stmt_done(db->st[s]);
  if (n != 0) {
    g_set_error(error, DDP_CALIBDB_ERROR, DDP_CALIBDB_ERROR_CORRUPT, "%s: %s: %" G_GINT64_FORMAT " rows",
                db->path, what, n);
    return FALSE;
  }
  return TRUE;
}

/**
 * ddp_calibdb_check:
 * The store's invariants: every point belongs to a committed batch of its run, every batch to a
 * run, every fit row to a fit, and no transaction is left open between calls.
 * Returns: FALSE with DDP_CALIBDB_ERROR_CORRUPT naming the first broken one.
 */
gboolean
ddp_calibdb_check(DdpCalibDb *db, GError **error)
{
  if (db->txn != TXN_NONE || !sqlite3_get_autocommit(db->sql)) {
    g_set_error(error, DDP_CALIBDB_ERROR, DDP_CALIBDB_ERROR_CORRUPT, "%s: a transaction is open", db->path);
    return FALSE;
  }
  return count_is_zero(db, ST_CHECK_ORPHAN_POINTS, "points outside any committed batch", error) &&
         count_is_zero(db, ST_CHECK_ORPHAN_BATCHES, "batches of no run", error) &&
         count_is_zero(db, ST_CHECK_ORPHAN_FIT_ROWS, "fit rows of no fit", error);
}

/* ---- runs ---------------------------------------------------------------------------------- */

/**
 * ddp_calibdb_run_begin:
 * Returns: the id of the new run row, or 0 with @error set.
 */
gint64
ddp_calibdb_run_begin(DdpCalibDb *db, const DdpCalibRun *run, GError **error)
{
  g_return_val_if_fail(db->txn == TXN_NONE, 0);
  sqlite3_stmt *st = db->st[ST_RUN_INSERT];
  g_autofree char *now = ddp_calibdb_now();
  int rc = bind_text(st, 1, now) | bind_text(st, 2, run->host) | bind_text(st, 3, run->gpu_name) |
           sqlite3_bind_int(st, 4, run->gpus_per_node) | sqlite3_bind_int(st, 5, run->nodes) |
           sqlite3_bind_int(st, 6, run->ranks) | sqlite3_bind_int(st, 7, run->sm_arch) |
           sqlite3_bind_int(st, 8, run->sm_count) | sqlite3_bind_int64(st, 9, run->gpu_memory_bytes) |
           bind_text(st, 10, run->driver_version) | bind_text(st, 11, run->cuda_version) |
           bind_text(st, 12, run->nccl_version) | bind_text(st, 13, run->cublas_version) |
           bind_text(st, 14, run->cudnn_version) | bind_text(st, 15, run->program) |
           bind_text(st, 16, run->arguments) | bind_text(st, 17, run->note);
  if (!check_binds(db, ST_RUN_INSERT, rc, "recording the run", error) ||
      !exec_stmt(db, ST_RUN_INSERT, "recording the run", error))
    return 0;
  return sqlite3_last_insert_rowid(db->sql);
}

gboolean
ddp_calibdb_run_finish(DdpCalibDb *db, gint64 run_id, GError **error)
{
  sqlite3_stmt *st = db->st[ST_RUN_FINISH];
  g_autofree char *now = ddp_calibdb_now();
  int rc = bind_text(st, 1, now) | sqlite3_bind_int64(st, 2, run_id);
  return check_binds(db, ST_RUN_FINISH, rc, "finishing the run", error) &&
         exec_stmt(db, ST_RUN_FINISH, "finishing the run", error);
}

gboolean
ddp_calibdb_run_add_note(DdpCalibDb *db, gint64 run_id, const char *note, GError **error)
{
  sqlite3_stmt *st = db->st[ST_RUN_NOTE];
  int rc = bind_text(st, 1, note) | sqlite3_bind_int64(st, 2, run_id);
  return check_binds(db, ST_RUN_NOTE, rc, "noting on the run", error) &&
         exec_stmt(db, ST_RUN_NOTE, "noting on the run", error);
}

static DdpCalibRun *
run_from_row(sqlite3_stmt *st)
{
  DdpCalibRun *r = g_new0(DdpCalibRun, 1);
  int c = 0;
  r->id = sqlite3_column_int64(st, c++);
  r->started = column_text(st, c++);
  r->finished = column_text(st, c++);
  r->host = column_text(st, c++);
  r->gpu_name = column_text(st, c++);
  r->gpus_per_node = column_int(st, c++);
  r->nodes = column_int(st, c++);
  r->ranks = column_int(st, c++);
  r->sm_arch = column_int(st, c++);
  r->sm_count = column_int(st, c++);
  r->gpu_memory_bytes = sqlite3_column_int64(st, c++);
  r->driver_version = column_text(st, c++);
  r->cuda_version = column_text(st, c++);
  r->nccl_version = column_text(st, c++);
  r->cublas_version = column_text(st, c++);
  r->cudnn_version = column_text(st, c++);
  r->program = column_text(st, c++);
  r->arguments = column_text(st, c++);
  r->note = column_text(st, c++);
  r->n_batches = sqlite3_column_int64(st, c++);
  r->n_allreduce_points = sqlite3_column_int64(st, c++);
  r->n_kernel_points = sqlite3_column_int64(st, c++);
  r->n_collective_points = sqlite3_column_int64(st, c++);
  return r;
}

/**
 * ddp_calibdb_run_get:
 * Returns: (transfer full): run @run_id with its counts; NULL with DDP_CALIBDB_ERROR_NOT_FOUND
 * when there is no such run.
 */
DdpCalibRun *
ddp_calibdb_run_get(DdpCalibDb *db, gint64 run_id, GError **error)
{
  sqlite3_stmt *st = db->st[ST_RUN_GET];
  if (!check_binds(db, ST_RUN_GET, sqlite3_bind_int64(st, 1, run_id), "reading the run", error))
    return NULL;
  int rc = sqlite3_step(st);
  DdpCalibRun *run = NULL;
  if (rc == SQLITE_ROW)
    run = run_from_row(st);
  else if (rc == SQLITE_DONE)
    g_set_error(error, DDP_CALIBDB_ERROR, DDP_CALIBDB_ERROR_NOT_FOUND, "%s: no calibration run %" G_GINT64_FORMAT,
                db->path, run_id);
  else
    sql_error(db, error, rc, "reading the run");
  stmt_done(st);
  return run;
}

/**
 * ddp_calibdb_runs:
 * Returns: (transfer full) (element-type DdpCalibRun): all runs, oldest first (possibly none);
 * NULL with @error on failure.
 */
GPtrArray *
ddp_calibdb_runs(DdpCalibDb *db, GError **error)
{
  sqlite3_stmt *st = db->st[ST_RUNS];
  g_autoptr(GPtrArray) runs = g_ptr_array_new_with_free_func((GDestroyNotify)ddp_calib_run_free);
  int rc;
  while ((rc = sqlite3_step(st)) == SQLITE_ROW)
    g_ptr_array_add(runs, run_from_row(st));
  stmt_done(st);
  if (rc != SQLITE_DONE) {
    sql_error(db, error, rc, "listing runs");
    return NULL;
  }
  return g_steal_pointer(&runs);
}

/**
 * ddp_calibdb_latest_run:
 * Returns: the newest matching run id, or 0 with @error set (DDP_CALIBDB_ERROR_NOT_FOUND when
 * none matches).
 */
gint64
ddp_calibdb_latest_run(DdpCalibDb *db, gboolean unfinished_only, gboolean with_data, GError **error)
{
  sqlite3_stmt *st = db->st[ST_LATEST_RUN];
  int rc = sqlite3_bind_int(st, 1, unfinished_only ? 1 : 0) | sqlite3_bind_int(st, 2, with_data ? 1 : 0);
  if (!check_binds(db, ST_LATEST_RUN, rc, "finding the latest run", error))
    return 0;
  rc = sqlite3_step(st);
  gint64 id = 0;
  if (rc == SQLITE_ROW)
    id = sqlite3_column_int64(st, 0);
  else if (rc == SQLITE_DONE)
    g_set_error(error, DDP_CALIBDB_ERROR, DDP_CALIBDB_ERROR_NOT_FOUND, "%s: no %scalibration run%s", db->path,
                unfinished_only ? "interrupted " : "", with_data ? " with measurements" : "");
  else
    sql_error(db, error, rc, "finding the latest run");
  stmt_done(st);
  return id;
}

/**
 * ddp_calibdb_batches:
 * Returns: (transfer full): a set of the batch names committed in @run_id (keys owned by the
 * table); NULL with @error on failure.
 */
GHashTable *
ddp_calibdb_batches(DdpCalibDb *db, gint64 run_id, GError **error)
{
  sqlite3_stmt *st = db->st[ST_BATCHES];
  if (!check_binds(db, ST_BATCHES, sqlite3_bind_int64(st, 1, run_id), "listing batches", error))
    return NULL;
  g_autoptr(GHashTable) set = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
  int rc;
  while ((rc = sqlite3_step(st)) == SQLITE_ROW)
    g_hash_table_add(set, column_text(st, 0));
  stmt_done(st);
  if (rc != SQLITE_DONE) {
    sql_error(db, error, rc, "listing batches");
    return NULL;
  }
  return g_steal_pointer(&set);
}

/* ---- transactions -------------------------------------------------------------------------- */

static gboolean
begin(DdpCalibDb *db, Transaction txn, const char *what, GError **error)
{
  g_return_val_if_fail(db->txn == TXN_NONE, FALSE);
  if (!exec_stmt(db, db->outer ? ST_SAVEPOINT : ST_BEGIN, what, error))
    return FALSE;
  db->txn = txn;
  return TRUE;
}

void
ddp_calibdb_batch_rollback(DdpCalibDb *db)
{
  if (db->txn == TXN_NONE)
    return;
  /* ROLLBACK fails only when SQLite already rolled back on its own (e.g. after SQLITE_FULL).
   * Inside an outer transaction: back to the savepoint, which is then released (empty). */
  if (db->outer) {
    sqlite3_step(db->st[ST_ROLLBACK_TO]);
    stmt_done(db->st[ST_ROLLBACK_TO]);
  }
  sqlite3_step(db->st[db->outer ? ST_RELEASE : ST_ROLLBACK]);
  stmt_done(db->st[db->outer ? ST_RELEASE : ST_ROLLBACK]);
  db->txn = TXN_NONE;
  db->txn_run = db->txn_fit = 0;
  g_clear_pointer(&db->txn_batch, g_free);
}

static gboolean
commit(DdpCalibDb *db, const char *what, GError **error)
{
  if (!exec_stmt(db, db->outer ? ST_RELEASE : ST_COMMIT, what, error)) {
    ddp_calibdb_batch_rollback(db);
    return FALSE;
  }
  db->txn = TXN_NONE;
  db->txn_run = db->txn_fit = 0;
  g_clear_pointer(&db->txn_batch, g_free);
  return TRUE;
}

/**
 * ddp_calibdb_transaction_begin:
 * Opens one transaction (BEGIN IMMEDIATE) around everything that follows — runs, batches, fits —
 * until ddp_calibdb_transaction_commit(): `ddpsim fit --import` stores its runs and their fit at
 * once or not at all.  Batches and fits inside it are savepoints.  Returns: FALSE with @error.
 */
gboolean
ddp_calibdb_transaction_begin(DdpCalibDb *db, GError **error)
{
  g_return_val_if_fail(db->txn == TXN_NONE && !db->outer, FALSE);
  if (!exec_stmt(db, ST_BEGIN, "starting the transaction", error))
    return FALSE;
  db->outer = TRUE;
  return TRUE;
}

/* Commits the outer transaction; on failure it is rolled back.  Returns: FALSE with @error. */
gboolean
ddp_calibdb_transaction_commit(DdpCalibDb *db, GError **error)
{
  g_return_val_if_fail(db->txn == TXN_NONE && db->outer, FALSE);
  db->outer = FALSE;
  if (!exec_stmt(db, ST_COMMIT, "committing", error)) {
    sqlite3_step(db->st[ST_ROLLBACK]);
    stmt_done(db->st[ST_ROLLBACK]);
    return FALSE;
  }
  return TRUE;
}

/* Abandons the outer transaction and whatever is open in it; harmless when none is open. */
void
ddp_calibdb_transaction_rollback(DdpCalibDb *db)
{
  ddp_calibdb_batch_rollback(db);
  if (!db->outer)
    return;
  db->outer = FALSE;
  sqlite3_step(db->st[ST_ROLLBACK]);
  stmt_done(db->st[ST_ROLLBACK]);
}

/* TRUE while an outer transaction is open. */
gboolean
ddp_calibdb_in_transaction(const DdpCalibDb *db)
{
  return db->outer;
}

/**
 * ddp_calibdb_batch_begin:
 * Opens one measurement batch; everything added until ddp_calibdb_batch_commit() becomes durable
 * at once or not at all.  Returns: FALSE with @error (and nothing open) on failure, including
 * when @name was already committed in @run_id.
 */
gboolean
ddp_calibdb_batch_begin(DdpCalibDb *db, gint64 run_id, const char *name, GError **error)
{
  g_return_val_if_fail(name != NULL && *name != '\0', FALSE);
  if (!begin(db, TXN_BATCH, "starting a batch", error))
    return FALSE;
  sqlite3_stmt *st = db->st[ST_BATCH_INSERT];
  g_autofree char *now = ddp_calibdb_now();
  int rc = sqlite3_bind_int64(st, 1, run_id) | bind_text(st, 2, name) | bind_text(st, 3, now);
  g_autofree char *what = g_strdup_printf("starting batch \"%s\" of run %" G_GINT64_FORMAT, name, run_id);
  if (!check_binds(db, ST_BATCH_INSERT, rc, what, error) || !exec_stmt(db, ST_BATCH_INSERT, what, error)) {
    ddp_calibdb_batch_rollback(db);
    return FALSE;
  }
  db->txn_run = run_id;
  db->txn_batch = g_strdup(name);
  return TRUE;
}

gboolean
ddp_calibdb_batch_add_allreduce(DdpCalibDb *db, const DdpCalibAllreducePoint *p, GError **error)
{
  g_return_val_if_fail(db->txn == TXN_BATCH, FALSE);
  sqlite3_stmt *st = db->st[ST_ALLREDUCE_INSERT];
  int rc = sqlite3_bind_int64(st, 1, db->txn_run) | bind_text(st, 2, db->txn_batch) |
           bind_text(st, 3, p->algorithm) | bind_text(st, 4, p->protocol) | sqlite3_bind_int(st, 5, p->ranks) |
           sqlite3_bind_int(st, 6, p->nodes) | sqlite3_bind_int64(st, 7, p->bytes) |
           bind_text(st, 8, p->dtype ? p->dtype : "float") | sqlite3_bind_int(st, 9, p->in_place ? 1 : 0) |
           sqlite3_bind_int(st, 10, p->iterations) | bind_double(st, 11, p->time_us) |
           bind_double(st, 12, p->min_us) | bind_double(st, 13, p->max_us) |
           bind_double(st, 14, p->algbw_GBs) | bind_double(st, 15, p->busbw_GBs);
  return check_binds(db, ST_ALLREDUCE_INSERT, rc, "adding an AllReduce point", error) &&
         exec_stmt(db, ST_ALLREDUCE_INSERT, "adding an AllReduce point", error);
}

gboolean
ddp_calibdb_batch_add_kernel(DdpCalibDb *db, const DdpCalibKernelPoint *p, GError **error)
{
  g_return_val_if_fail(db->txn == TXN_BATCH, FALSE);
  sqlite3_stmt *st = db->st[ST_KERNEL_INSERT];
  int rc = sqlite3_bind_int64(st, 1, db->txn_run) | bind_text(st, 2, db->txn_batch) |
           bind_text(st, 3, p->probe) | bind_text(st, 4, p->layer_kind) | bind_text(st, 5, p->op) |
           bind_text(st, 6, p->precision) | bind_text(st, 7, p->signature) | bind_text(st, 8, p->layer) |
           bind_double(st, 9, p->batch_size) | bind_text(st, 10, p->shape) | bind_text(st, 11, p->algo) |
           bind_double(st, 12, p->flops) | bind_double(st, 13, p->bytes) |
           sqlite3_bind_int(st, 14, p->iterations) | bind_double(st, 15, p->time_us) |
           bind_double(st, 16, p->min_us) | bind_double(st, 17, p->max_us) | bind_double(st, 18, p->tflops) |
           bind_double(st, 19, p->GBs);
  return check_binds(db, ST_KERNEL_INSERT, rc, "adding a kernel point", error) &&
         exec_stmt(db, ST_KERNEL_INSERT, "adding a kernel point", error);
}

gboolean
ddp_calibdb_batch_add_collective(DdpCalibDb *db, const DdpCalibCollectivePoint *p, GError **error)
{
  g_return_val_if_fail(db->txn == TXN_BATCH, FALSE);
  sqlite3_stmt *st = db->st[ST_COLLECTIVE_INSERT];
  int rc = sqlite3_bind_int64(st, 1, db->txn_run) | bind_text(st, 2, db->txn_batch) | bind_text(st, 3, p->op) |
           bind_text(st, 4, p->algorithm) | bind_text(st, 5, p->protocol) | sqlite3_bind_int(st, 6, p->ranks) |
           sqlite3_bind_int(st, 7, p->nodes) | sqlite3_bind_int64(st, 8, p->bytes) |
           bind_text(st, 9, p->dtype ? p->dtype : "float") | sqlite3_bind_int(st, 10, p->in_place ? 1 : 0) |
           sqlite3_bind_int(st, 11, p->iterations) | bind_double(st, 12, p->time_us) |
           bind_double(st, 13, p->algbw_GBs) | bind_double(st, 14, p->busbw_GBs);
  return check_binds(db, ST_COLLECTIVE_INSERT, rc, "adding a collective point", error) &&
         exec_stmt(db, ST_COLLECTIVE_INSERT, "adding a collective point", error);
}

/**
 * ddp_calibdb_batch_commit:
 * @note: (nullable): why the batch is special, e.g. "NCCL: algorithm not available"; stored with it
 *
 * Returns: TRUE once the batch is durable; FALSE with @error after rolling it back.
 */
gboolean
ddp_calibdb_batch_commit(DdpCalibDb *db, const char *note, GError **error)
{
  g_return_val_if_fail(db->txn == TXN_BATCH, FALSE);
  sqlite3_stmt *st = db->st[ST_BATCH_NOTE];
  g_autofree char *now = ddp_calibdb_now();
  int rc = bind_text(st, 1, now) | bind_text(st, 2, note) | sqlite3_bind_int64(st, 3, db->txn_run) |
           bind_text(st, 4, db->txn_batch);
  if (!check_binds(db, ST_BATCH_NOTE, rc, "closing the batch", error) ||
      !exec_stmt(db, ST_BATCH_NOTE, "closing the batch", error)) {
    ddp_calibdb_batch_rollback(db);
    return FALSE;
  }
  return commit(db, "committing the batch", error);
}

/**
 * ddp_calib_import_describe:
 * @out: (out caller-allocates): strings owned by it (ddp_calib_import_clear()); gpus_per_process
 *   and note are left for the importer
 */
gboolean
ddp_calib_import_describe(const char *path, const char *data, gsize length, const char *format, DdpCalibImport *out,
                          GError **error)
{
  GStatBuf st;
  if (g_stat(path, &st) != 0) {
    int saved = errno;
    g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(saved), "%s: %s", path, g_strerror(saved));
    return FALSE;
  }
  g_autoptr(GDateTime) mtime = g_date_time_new_from_unix_utc(st.st_mtime);
  out->format = g_strdup(format);
  out->source = g_strdup(path);
  out->sha256 = g_compute_checksum_for_data(G_CHECKSUM_SHA256, (const guchar *)data, length);
  out->mtime = g_date_time_format(mtime, "%Y-%m-%dT%H:%M:%SZ");
  out->size_bytes = (gint64)length;
  return TRUE;
}

/**
 * ddp_calibdb_batch_add_import:
 * Adds the provenance row of an imported run to the open batch (so the points and where they came
 * from become durable together).  @import->run_id and ->imported are ignored.
 */
gboolean
ddp_calibdb_batch_add_import(DdpCalibDb *db, const DdpCalibImport *import, GError **error)
{
  g_return_val_if_fail(db->txn == TXN_BATCH, FALSE);
  sqlite3_stmt *st = db->st[ST_IMPORT_INSERT];
  g_autofree char *now = ddp_calibdb_now();
  int rc = sqlite3_bind_int64(st, 1, db->txn_run) | bind_text(st, 2, import->format) |
           bind_text(st, 3, import->source) | bind_text(st, 4, import->sha256) | bind_text(st, 5, import->mtime) |
           sqlite3_bind_int64(st, 6, import->size_bytes) | sqlite3_bind_int(st, 7, import->gpus_per_process) |
           bind_text(st, 8, now) | bind_text(st, 9, import->note);
  return check_binds(db, ST_IMPORT_INSERT, rc, "recording the import", error) &&
         exec_stmt(db, ST_IMPORT_INSERT, "recording the import", error);
}

/**
 * ddp_calibdb_import_begin:
 * @run: the imported run's row (id, times and counts ignored)
 * @batch: the name of its one batch ("import/nccl-tests")
 * @import: its provenance; an earlier import of the same bytes in the same format is found by
 *   @import->sha256 and not stored twice
 * @again: (out): TRUE when the run of an earlier identical import comes back
 *
 * Starts storing an imported file: inside the caller's transaction
 * (ddp_calibdb_transaction_begin), or else one of its own that ddp_calibdb_import_finish()
 * commits, so the run row, its points and its provenance become durable together or not at all
 * — a refused or killed import leaves no orphan run.
 * Returns: the run id (the batch open unless *@again), or 0 with @error and nothing written.
 */
gint64
ddp_calibdb_import_begin(DdpCalibDb *db, const DdpCalibRun *run, const char *batch, const DdpCalibImport *import,
                         gboolean *again, GError **error)
{
  *again = FALSE;
  gint64 earlier = ddp_calibdb_import_find(db, import->sha256, import->format, error);
  if (earlier != 0) {
    *again = earlier > 0;
    return MAX(earlier, 0);
  }
  db->import_txn = !db->outer;
  if (db->import_txn && !ddp_calibdb_transaction_begin(db, error)) {
    db->import_txn = FALSE;
    return 0;
  }
  gint64 run_id = ddp_calibdb_run_begin(db, run, error);
  if (run_id == 0 || !ddp_calibdb_batch_begin(db, run_id, batch, error)) {
    if (db->import_txn)
      ddp_calibdb_transaction_rollback(db);
    db->import_txn = FALSE;
    return 0;
  }
  return run_id;
}

/**
 * ddp_calibdb_import_finish:
 * @points_ok: FALSE when adding the batch's points failed (@error is then already set)
 *
 * Closes the one batch of an import into @run_id (ddp_calibdb_import_begin): records @import's
 * provenance with the points already added, commits with @note and marks the run finished — and
 * commits the import's own transaction when it opened one.  On any failure everything of the
 * import is rolled back.
 * Returns: @run_id, or 0 with @error set.
 */
gint64
ddp_calibdb_import_finish(DdpCalibDb *db, gint64 run_id, const DdpCalibImport *import, gboolean points_ok,
                          const char *note, GError **error)
{
  gboolean own = db->import_txn;
  db->import_txn = FALSE;
  gboolean ok = points_ok && ddp_calibdb_batch_add_import(db, import, error) &&
                ddp_calibdb_batch_commit(db, note, error) && ddp_calibdb_run_finish(db, run_id, error);
  if (!ok) {
    if (own)
      ddp_calibdb_transaction_rollback(db);
    else
      ddp_calibdb_batch_rollback(db);
    return 0;
  }
  if (own && !ddp_calibdb_transaction_commit(db, error))
    return 0;
  return run_id;
}

/**
 * ddp_calibdb_import_find:
 * Returns: the run of an earlier import of the same bytes in @format, 0 when there is none, or -1
 * with @error.
 */
gint64
ddp_calibdb_import_find(DdpCalibDb *db, const char *sha256, const char *format, GError **error)
{
  sqlite3_stmt *st = db->st[ST_IMPORT_FIND];
  int rc = bind_text(st, 1, sha256) | bind_text(st, 2, format);
  if (!check_binds(db, ST_IMPORT_FIND, rc, "looking for an earlier import", error))
    return -1;
  rc = sqlite3_step(st);
  gint64 id = rc == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
  if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
    sql_error(db, error, rc, "looking for an earlier import");
    id = -1;
  }
  stmt_done(st);
  return id;
}

/**
 * ddp_calibdb_import_get:
 * @out: (out caller-allocates): filled with owned strings (ddp_calib_import_clear())
 * Returns: FALSE with DDP_CALIBDB_ERROR_NOT_FOUND when @run_id was measured, not imported.
 */
gboolean
ddp_calibdb_import_get(DdpCalibDb *db, gint64 run_id, DdpCalibImport *out, GError **error)
{
  sqlite3_stmt *st = db->st[ST_IMPORT_GET];
  if (!check_binds(db, ST_IMPORT_GET, sqlite3_bind_int64(st, 1, run_id), "reading the import", error))
    return FALSE;
  int rc = sqlite3_step(st);
  gboolean ok = rc == SQLITE_ROW;
  if (ok) {
    out->run_id = sqlite3_column_int64(st, 0);
    out->format = column_text(st, 1);
    out->source = column_text(st, 2);
    out->sha256 = column_text(st, 3);
    out->mtime = column_text(st, 4);
    out->size_bytes = sqlite3_column_int64(st, 5);
    out->gpus_per_process = column_int(st, 6);
    out->imported = column_text(st, 7);
    out->note = column_text(st, 8);
  } else if (rc == SQLITE_DONE) {
    g_set_error(error, DDP_CALIBDB_ERROR, DDP_CALIBDB_ERROR_NOT_FOUND, "%s: run %" G_GINT64_FORMAT " was not imported",
                db->path, run_id);
  } else {
    sql_error(db, error, rc, "reading the import");
  }
  stmt_done(st);
  return ok;
}

/* ---- reading points ------------------------------------------------------------------------ */

/* Stored values are inputs like any file (issue 11): a hand-edited or damaged row with 2^63 bytes
 * or alpha 1e308 must not reach the model.  The bounds are ranges.h's (sizes 2^50, ranks 2^24,
 * link bandwidths 10^5 GB/s, latencies 10^6 µs, layer times 10^9 µs); times and rates must be
 * finite.  Each reader keeps the first complaint: "column = value (expected lo to hi)". */
static void
check_value(char **bad, const char *column, double v, double lo, double hi)
{
  if (!*bad && !(v >= lo && v <= hi))
    *bad = isnan(v) ? g_strdup_printf("%s is not a number (expected %g to %g)", column, lo, hi)
                    : g_strdup_printf("%s = %g (expected %g to %g)", column, v, lo, hi);
}

/* A time that must be measured: above 0, at most @hi. */
static void
check_time(char **bad, const char *column, double v, double hi)
{
  if (!*bad && !(v > 0 && v <= hi))
    *bad = isnan(v) ? g_strdup_printf("%s is not a number (expected above 0, at most %g)", column, hi)
                    : g_strdup_printf("%s = %g (expected above 0, at most %g)", column, v, hi);
}

static gboolean
value_error(const DdpCalibDb *db, GError **error, const char *table, guint row, char *bad)
{
  g_set_error(error, DDP_CALIBDB_ERROR, DDP_CALIBDB_ERROR_VALUE, "%s: %s, row %u: %s: not a value ddpsim can use",
              db->path, table, row, bad);
  g_free(bad);
  return FALSE;
}

#define MAX_RANKS DDP_RANGE_GPUS.max
#define MAX_BYTES DDP_RANGE_TENSOR_BYTES.max
#define MAX_US DDP_RANGE_LAYER_US.max

static gboolean
run_selected(const gint64 *run_ids, guint n_runs, gint64 id)
{
  if (n_runs == 0)
    return TRUE;
  for (guint i = 0; i < n_runs; i++)
    if (run_ids[i] == id)
      return TRUE;
  return FALSE;
}

/**
 * ddp_calibdb_allreduce_points:
 * Returns: (transfer full) (element-type DdpCalibAllreducePoint): the points of @run_ids (all runs
 * when @n_runs is 0), possibly none; NULL with @error on failure.
 */
GArray *
ddp_calibdb_allreduce_points(DdpCalibDb *db, const gint64 *run_ids, guint n_runs, GError **error)
{
  sqlite3_stmt *st = db->st[ST_ALLREDUCE_SELECT];
  g_autoptr(GArray) out = g_array_new(FALSE, TRUE, sizeof(DdpCalibAllreducePoint));
  g_array_set_clear_func(out, (GDestroyNotify)ddp_calib_allreduce_point_clear);
  int rc;
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    if (!run_selected(run_ids, n_runs, sqlite3_column_int64(st, 0)))
      continue;
    DdpCalibAllreducePoint p = { 0 };
    int c = 0;
    p.run_id = sqlite3_column_int64(st, c++);
    p.batch = column_text(st, c++);
    p.algorithm = column_text(st, c++);
    p.protocol = column_text(st, c++);
    p.ranks = column_int(st, c++);
    p.nodes = column_int(st, c++);
    p.bytes = sqlite3_column_int64(st, c++);
    p.dtype = column_text(st, c++);
    p.in_place = column_int(st, c++) != 0;
    p.iterations = column_int(st, c++);
    p.time_us = column_double(st, c++);
    p.min_us = column_double(st, c++);
    p.max_us = column_double(st, c++);
    p.algbw_GBs = column_double(st, c++);
    p.busbw_GBs = column_double(st, c++);
    g_array_append_val(out, p);
    char *bad = NULL;
    check_value(&bad, "ranks", p.ranks, 1, MAX_RANKS);
    check_value(&bad, "nodes", p.nodes, 1, MAX_RANKS);
    check_value(&bad, "bytes", (double)p.bytes, 0, MAX_BYTES);
    check_time(&bad, "time_us", p.time_us, MAX_US);
    if (bad) {
      stmt_done(st);
      value_error(db, error, "allreduce_points", out->len, bad);
      return NULL;
    }
  }
  stmt_done(st);
  if (rc != SQLITE_DONE) {
    sql_error(db, error, rc, "reading AllReduce points");
    return NULL;
  }
  return g_steal_pointer(&out);
}

/* The ops collective_points and fit_collective_curve may hold: collective.h's names of the
 * collectives other than AllReduce (whose rows have tables of their own). */
static const char *const collective_ops[] = { "all_gather", "reduce_scatter", "broadcast", NULL };

static void
check_op(char **bad, const char *op)
{
  if (!*bad && !(op && g_strv_contains(collective_ops, op))) {
    g_autofree char *quoted = ddp_range_quote_n(op ? op : "", 40);
    *bad = g_strdup_printf("op = \"%s\" (expected all_gather, reduce_scatter or broadcast)", quoted);
  }
}

/**
 * ddp_calibdb_collective_points:
 * Returns: (transfer full) (element-type DdpCalibCollectivePoint): the points of @run_ids (all runs
 * when @n_runs is 0), possibly none; NULL with @error (DDP_CALIBDB_ERROR_VALUE for a stored value
 * outside what ddpsim reads, as ddp_calibdb_allreduce_points()).
 */
GArray *
ddp_calibdb_collective_points(DdpCalibDb *db, const gint64 *run_ids, guint n_runs, GError **error)
{
  sqlite3_stmt *st = db->st[ST_COLLECTIVE_SELECT];
  g_autoptr(GArray) out = g_array_new(FALSE, TRUE, sizeof(DdpCalibCollectivePoint));
  g_array_set_clear_func(out, (GDestroyNotify)ddp_calib_collective_point_clear);
  int rc;
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    if (!run_selected(run_ids, n_runs, sqlite3_column_int64(st, 0)))
      continue;
    DdpCalibCollectivePoint p = { 0 };
    int c = 0;
    p.run_id = sqlite3_column_int64(st, c++);
    p.batch = column_text(st, c++);
    p.op = column_text(st, c++);
    p.algorithm = column_text(st, c++);
    p.protocol = column_text(st, c++);
    p.ranks = column_int(st, c++);
    p.nodes = column_int(st, c++);
    p.bytes = sqlite3_column_int64(st, c++);
    p.dtype = column_text(st, c++);
    p.in_place = column_int(st, c++) != 0;
    p.iterations = column_int(st, c++);
    p.time_us = column_double(st, c++);
    p.algbw_GBs = column_double(st, c++);
    p.busbw_GBs = column_double(st, c++);
    g_array_append_val(out, p);
    char *bad = NULL;
    check_op(&bad, p.op);
    check_value(&bad, "ranks", p.ranks, 1, MAX_RANKS);
    check_value(&bad, "nodes", p.nodes, 1, MAX_RANKS);
    check_value(&bad, "bytes", (double)p.bytes, 0, MAX_BYTES);
    check_time(&bad, "time_us", p.time_us, MAX_US);
    if (bad) {
      stmt_done(st);
      value_error(db, error, "collective_points", out->len, bad);
      return NULL;
    }
  }
  stmt_done(st);
  if (rc != SQLITE_DONE) {
    sql_error(db, error, rc, "reading collective points");
    return NULL;
  }
  return g_steal_pointer(&out);
}

/**
 * ddp_calibdb_kernel_points:
 * Returns: (transfer full) (element-type DdpCalibKernelPoint): as ddp_calibdb_allreduce_points().
 */
GArray *
ddp_calibdb_kernel_points(DdpCalibDb *db, const gint64 *run_ids, guint n_runs, GError **error)
{
  sqlite3_stmt *st = db->st[ST_KERNEL_SELECT];
  g_autoptr(GArray) out = g_array_new(FALSE, TRUE, sizeof(DdpCalibKernelPoint));
  g_array_set_clear_func(out, (GDestroyNotify)ddp_calib_kernel_point_clear);
  int rc;
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    if (!run_selected(run_ids, n_runs, sqlite3_column_int64(st, 0)))
      continue;
    DdpCalibKernelPoint p = { 0 };
    int c = 0;
    p.run_id = sqlite3_column_int64(st, c++);
    p.batch = column_text(st, c++);
    p.probe = column_text(st, c++);
    p.layer_kind = column_text(st, c++);
    p.op = column_text(st, c++);
    p.precision = column_text(st, c++);
    p.signature = column_text(st, c++);
    p.layer = column_text(st, c++);
    p.batch_size = column_double(st, c++);
    p.shape = column_text(st, c++);
    p.algo = column_text(st, c++);
    p.flops = column_double(st, c++);
    p.bytes = column_double(st, c++);
    p.iterations = column_int(st, c++);
    p.time_us = column_double(st, c++);
    p.min_us = column_double(st, c++);
    p.max_us = column_double(st, c++);
    p.tflops = column_double(st, c++);
    p.GBs = column_double(st, c++);
    g_array_append_val(out, p);
    char *bad = NULL;
    check_value(&bad, "batch_size", p.batch_size, 0, DDP_RANGE_BATCH.max);
    check_value(&bad, "flops", p.flops, 0, 1e24);
    check_value(&bad, "bytes", p.bytes, 0, 1e24);
    check_value(&bad, "time_us", p.time_us, 0, MAX_US);
    if (bad) {
      stmt_done(st);
      value_error(db, error, "kernel_points", out->len, bad);
      return NULL;
    }
  }
  stmt_done(st);
  if (rc != SQLITE_DONE) {
    sql_error(db, error, rc, "reading kernel points");
    return NULL;
  }
  return g_steal_pointer(&out);
}

/* ---- fits ---------------------------------------------------------------------------------- */

/**
 * ddp_calibdb_fit_begin:
 * Opens the transaction that stores one fit and records its header.
 * Returns: the new fit id, or 0 with @error (nothing left open).
 */
gint64
ddp_calibdb_fit_begin(DdpCalibDb *db, const DdpCalibFit *fit, GError **error)
{
  if (!begin(db, TXN_FIT, "starting to store the fit", error))
    return 0;
  sqlite3_stmt *st = db->st[ST_FIT_INSERT];
  g_autofree char *now = ddp_calibdb_now();
  int rc = bind_text(st, 1, now) | bind_text(st, 2, fit->runs) | bind_text(st, 3, fit->gpu_name) |
           bind_text(st, 4, fit->gpu_spec) | bind_text(st, 5, fit->program) | bind_text(st, 6, fit->note);
  if (!check_binds(db, ST_FIT_INSERT, rc, "storing the fit", error) ||
      !exec_stmt(db, ST_FIT_INSERT, "storing the fit", error)) {
    ddp_calibdb_batch_rollback(db);
    return 0;
  }
  db->txn_fit = sqlite3_last_insert_rowid(db->sql);
  return db->txn_fit;
}

gboolean
ddp_calibdb_fit_add_allreduce(DdpCalibDb *db, const DdpCalibAllreduceFit *f, GError **error)
{
  g_return_val_if_fail(db->txn == TXN_FIT, FALSE);
  sqlite3_stmt *st = db->st[ST_FIT_ALLREDUCE_INSERT];
  int rc = sqlite3_bind_int64(st, 1, db->txn_fit) | bind_text(st, 2, f->algorithm) |
           bind_text(st, 3, f->protocol) | sqlite3_bind_int(st, 4, f->ranks) | sqlite3_bind_int(st, 5, f->nodes) |
           bind_double(st, 6, f->alpha_us) | bind_double(st, 7, f->algbw_GBs) | bind_double(st, 8, f->busbw_GBs) |
           sqlite3_bind_int(st, 9, f->n_points) | sqlite3_bind_int64(st, 10, f->min_bytes) |
           sqlite3_bind_int64(st, 11, f->max_bytes) | bind_double(st, 12, f->rms_rel) |
           bind_double(st, 13, f->max_rel);
  return check_binds(db, ST_FIT_ALLREDUCE_INSERT, rc, "storing an AllReduce fit", error) &&
         exec_stmt(db, ST_FIT_ALLREDUCE_INSERT, "storing an AllReduce fit", error);
}

gboolean
ddp_calibdb_fit_add_kernel(DdpCalibDb *db, const DdpCalibKernelFit *f, GError **error)
{
  g_return_val_if_fail(db->txn == TXN_FIT, FALSE);
  sqlite3_stmt *st = db->st[ST_FIT_KERNEL_INSERT];
  int rc = sqlite3_bind_int64(st, 1, db->txn_fit) | bind_text(st, 2, f->layer_kind) |
           bind_text(st, 3, f->precision) | bind_text(st, 4, f->basis) | bind_double(st, 5, f->rate) |
           bind_double(st, 6, f->efficiency) | bind_double(st, 7, f->overhead_us) |
           sqlite3_bind_int(st, 8, f->n_points) | bind_double(st, 9, f->rms_rel) | bind_double(st, 10, f->max_rel);
  return check_binds(db, ST_FIT_KERNEL_INSERT, rc, "storing a kernel fit", error) &&
         exec_stmt(db, ST_FIT_KERNEL_INSERT, "storing a kernel fit", error);
}

gboolean
ddp_calibdb_fit_add_layer(DdpCalibDb *db, const DdpCalibLayerFit *f, GError **error)
{
  g_return_val_if_fail(db->txn == TXN_FIT, FALSE);
  sqlite3_stmt *st = db->st[ST_FIT_LAYER_INSERT];
  int rc = sqlite3_bind_int64(st, 1, db->txn_fit) | bind_text(st, 2, f->signature) |
           bind_text(st, 3, f->layer_kind) | bind_text(st, 4, f->layer) | bind_text(st, 5, f->precision) |
           bind_double(st, 6, f->batch_size) | sqlite3_bind_double(st, 7, f->forward_us) |
           sqlite3_bind_double(st, 8, f->backward_us);
  return check_binds(db, ST_FIT_LAYER_INSERT, rc, "storing a layer time", error) &&
         exec_stmt(db, ST_FIT_LAYER_INSERT, "storing a layer time", error);
}

gboolean
ddp_calibdb_fit_add_residual(DdpCalibDb *db, const DdpCalibResidual *r, GError **error)
{
  g_return_val_if_fail(db->txn == TXN_FIT, FALSE);
  sqlite3_stmt *st = db->st[ST_FIT_RESIDUAL_INSERT];
  int rc = sqlite3_bind_int64(st, 1, db->txn_fit) | bind_text(st, 2, r->model) | bind_text(st, 3, r->key) |
           bind_double(st, 4, r->x) | bind_double(st, 5, r->measured_us) | bind_double(st, 6, r->fitted_us) |
           bind_double(st, 7, r->rel);
  return check_binds(db, ST_FIT_RESIDUAL_INSERT, rc, "storing a residual", error) &&
         exec_stmt(db, ST_FIT_RESIDUAL_INSERT, "storing a residual", error);
}

gboolean
ddp_calibdb_fit_add_curve_point(DdpCalibDb *db, const DdpCalibCurvePoint *p, GError **error)
{
  g_return_val_if_fail(db->txn == TXN_FIT, FALSE);
  /* the same columns after the op, which only fit_collective_curve has */
  Statement s = p->op ? ST_FIT_OP_CURVE_INSERT : ST_FIT_CURVE_INSERT;
  sqlite3_stmt *st = db->st[s];
  int c = 1;
  int rc = sqlite3_bind_int64(st, c++, db->txn_fit);
  if (p->op)
    rc |= bind_text(st, c++, p->op);
  rc |= bind_text(st, c, p->algorithm) | bind_text(st, c + 1, p->protocol) | sqlite3_bind_int(st, c + 2, p->ranks) |
        sqlite3_bind_int(st, c + 3, p->nodes) | sqlite3_bind_int64(st, c + 4, p->bytes) |
        bind_double(st, c + 5, p->time_us);
  return check_binds(db, s, rc, "storing a curve point", error) && exec_stmt(db, s, "storing a curve point", error);
}

gboolean
ddp_calibdb_fit_commit(DdpCalibDb *db, GError **error)
{
  g_return_val_if_fail(db->txn == TXN_FIT, FALSE);
  return commit(db, "committing the fit", error);
}

/**
 * ddp_calibdb_fit_get:
 * Returns: (transfer full): fit @fit_id (the newest when 0); NULL with DDP_CALIBDB_ERROR_NOT_FOUND
 * when there is no such fit.
 */
DdpCalibFit *
ddp_calibdb_fit_get(DdpCalibDb *db, gint64 fit_id, GError **error)
{
  Statement s = fit_id > 0 ? ST_FIT_GET : ST_FIT_LATEST;
  sqlite3_stmt *st = db->st[s];
  if (fit_id > 0 && !check_binds(db, s, sqlite3_bind_int64(st, 1, fit_id), "reading the fit", error))
    return NULL;
  int rc = sqlite3_step(st);
  DdpCalibFit *fit = NULL;
  if (rc == SQLITE_ROW) {
    fit = g_new0(DdpCalibFit, 1);
    fit->id = sqlite3_column_int64(st, 0);
    fit->created = column_text(st, 1);
    fit->runs = column_text(st, 2);
    fit->gpu_name = column_text(st, 3);
    fit->gpu_spec = column_text(st, 4);
    fit->program = column_text(st, 5);
    fit->note = column_text(st, 6);
  } else if (rc == SQLITE_DONE) {
    if (fit_id > 0)
      g_set_error(error, DDP_CALIBDB_ERROR, DDP_CALIBDB_ERROR_NOT_FOUND, "%s: no fit %" G_GINT64_FORMAT,
                  db->path, fit_id);
    else
      g_set_error(error, DDP_CALIBDB_ERROR, DDP_CALIBDB_ERROR_NOT_FOUND,
                  "%s: no stored fit (run ddpsim fit --db %s)", db->path, db->path);
  } else {
    sql_error(db, error, rc, "reading the fit");
  }
  stmt_done(st);
  return fit;
}

/* Shared loop of the four fit-row readers: binds the id, calls @row for each result row. */
static GArray *
read_fit_rows(DdpCalibDb *db, Statement s, gint64 fit_id, gsize element, GDestroyNotify clear,
              char *(*row)(sqlite3_stmt *st, gpointer out), const char *what, GError **error)
{
  sqlite3_stmt *st = db->st[s];
  if (!check_binds(db, s, sqlite3_bind_int64(st, 1, fit_id), what, error))
    return NULL;
  g_autoptr(GArray) out = g_array_new(FALSE, TRUE, (guint)element);
  g_array_set_clear_func(out, clear);
  g_autofree gpointer item = g_malloc0(element);
  int rc;
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    memset(item, 0, element);
    char *bad = row(st, item);
    g_array_append_vals(out, item, 1);
    if (bad) {
      stmt_done(st);
      value_error(db, error, what, out->len, bad);
      return NULL;
    }
  }
  stmt_done(st);
  if (rc != SQLITE_DONE) {
    sql_error(db, error, rc, what);
    return NULL;
  }
  return g_steal_pointer(&out);
}

static char *
allreduce_fit_row(sqlite3_stmt *st, gpointer out)
{
  DdpCalibAllreduceFit *f = out;
  f->algorithm = column_text(st, 0);
  f->protocol = column_text(st, 1);
  f->ranks = column_int(st, 2);
  f->nodes = column_int(st, 3);
  f->alpha_us = column_double(st, 4);
  f->algbw_GBs = column_double(st, 5);
  f->busbw_GBs = column_double(st, 6);
  f->n_points = column_int(st, 7);
  f->min_bytes = sqlite3_column_int64(st, 8);
  f->max_bytes = sqlite3_column_int64(st, 9);
  f->rms_rel = column_double(st, 10);
  f->max_rel = column_double(st, 11);
  char *bad = NULL;
  check_value(&bad, "ranks", f->ranks, 1, MAX_RANKS);
  check_value(&bad, "nodes", f->nodes, 1, MAX_RANKS);
  check_value(&bad, "alpha_us", f->alpha_us, 0, DDP_RANGE_LATENCY_US.max);
  check_value(&bad, "algbw_GBs", f->algbw_GBs, 0, DDP_RANGE_BANDWIDTH_GBS.max);
  if (f->algbw_GBs != 0)
    check_value(&bad, "algbw_GBs", f->algbw_GBs, DDP_RANGE_BANDWIDTH_GBS.min, DDP_RANGE_BANDWIDTH_GBS.max);
  check_value(&bad, "busbw_GBs", f->busbw_GBs, 0, 2 * DDP_RANGE_BANDWIDTH_GBS.max);
  check_value(&bad, "min_bytes", (double)f->min_bytes, 0, MAX_BYTES);
  check_value(&bad, "max_bytes", (double)f->max_bytes, 0, MAX_BYTES);
  return bad;
}

static char *
kernel_fit_row(sqlite3_stmt *st, gpointer out)
{
  DdpCalibKernelFit *f = out;
  f->layer_kind = column_text(st, 0);
  f->precision = column_text(st, 1);
  f->basis = column_text(st, 2);
  f->rate = column_double(st, 3);
  f->efficiency = column_double(st, 4);
  f->overhead_us = column_double(st, 5);
  f->n_points = column_int(st, 6);
  f->rms_rel = column_double(st, 7);
  f->max_rel = column_double(st, 8);
  char *bad = NULL;
  check_value(&bad, "rate", f->rate, 1e-9, 1e9);   /* TFLOP/s or GB/s */
  if (!isnan(f->efficiency))
    check_value(&bad, "efficiency", f->efficiency, 0, 10);
  check_value(&bad, "overhead_us", f->overhead_us, 0, DDP_RANGE_LATENCY_US.max);
  return bad;
}

static char *
layer_fit_row(sqlite3_stmt *st, gpointer out)
{
  DdpCalibLayerFit *f = out;
  f->signature = column_text(st, 0);
  f->layer_kind = column_text(st, 1);
  f->layer = column_text(st, 2);
  f->precision = column_text(st, 3);
  f->batch_size = column_double(st, 4);
  f->forward_us = column_double(st, 5);
  f->backward_us = column_double(st, 6);
  char *bad = NULL;
  check_value(&bad, "batch_size", f->batch_size, 0, DDP_RANGE_BATCH.max);
  if (!(f->forward_us < 0))   /* < 0: not measured */
    check_value(&bad, "forward_us", f->forward_us, 0, MAX_US);
  check_value(&bad, "backward_us", f->backward_us, 0, MAX_US);
  return bad;
}

static char *
residual_row(sqlite3_stmt *st, gpointer out)
{
  DdpCalibResidual *r = out;
  r->model = column_text(st, 0);
  r->key = column_text(st, 1);
  r->x = column_double(st, 2);
  r->measured_us = column_double(st, 3);
  r->fitted_us = column_double(st, 4);
  r->rel = column_double(st, 5);
  return NULL;   /* only printed, never used in a prediction */
}

/** ddp_calibdb_fit_allreduce: Returns: (transfer full) (element-type DdpCalibAllreduceFit). */
GArray *
ddp_calibdb_fit_allreduce(DdpCalibDb *db, gint64 fit_id, GError **error)
{
  return read_fit_rows(db, ST_FIT_ALLREDUCE_SELECT, fit_id, sizeof(DdpCalibAllreduceFit),
                       (GDestroyNotify)ddp_calib_allreduce_fit_clear, allreduce_fit_row,
                       "reading AllReduce fits", error);
}

/** ddp_calibdb_fit_kernels: Returns: (transfer full) (element-type DdpCalibKernelFit). */
GArray *
ddp_calibdb_fit_kernels(DdpCalibDb *db, gint64 fit_id, GError **error)
{
  return read_fit_rows(db, ST_FIT_KERNEL_SELECT, fit_id, sizeof(DdpCalibKernelFit),
                       (GDestroyNotify)ddp_calib_kernel_fit_clear, kernel_fit_row, "reading kernel fits", error);
}

/** ddp_calibdb_fit_layers: Returns: (transfer full) (element-type DdpCalibLayerFit). */
GArray *
ddp_calibdb_fit_layers(DdpCalibDb *db, gint64 fit_id, GError **error)
{
  return read_fit_rows(db, ST_FIT_LAYER_SELECT, fit_id, sizeof(DdpCalibLayerFit),
                       (GDestroyNotify)ddp_calib_layer_fit_clear, layer_fit_row, "reading layer times", error);
}

/** ddp_calibdb_fit_residuals: Returns: (transfer full) (element-type DdpCalibResidual). */
GArray *
ddp_calibdb_fit_residuals(DdpCalibDb *db, gint64 fit_id, GError **error)
{
  return read_fit_rows(db, ST_FIT_RESIDUAL_SELECT, fit_id, sizeof(DdpCalibResidual),
                       (GDestroyNotify)ddp_calib_residual_clear, residual_row, "reading residuals", error);
}

/* The columns both curve tables have, from column @c on. */
static char *
curve_columns(sqlite3_stmt *st, int c, DdpCalibCurvePoint *p)
{
  p->algorithm = column_text(st, c);
  p->protocol = column_text(st, c + 1);
  p->ranks = column_int(st, c + 2);
  p->nodes = column_int(st, c + 3);
  p->bytes = sqlite3_column_int64(st, c + 4);
  p->time_us = column_double(st, c + 5);
  char *bad = NULL;
  check_value(&bad, "ranks", p->ranks, 1, MAX_RANKS);
  check_value(&bad, "nodes", p->nodes, 1, MAX_RANKS);
  check_value(&bad, "bytes", (double)p->bytes, 0, MAX_BYTES);
  check_time(&bad, "time_us", p->time_us, MAX_US);
  return bad;
}

static char *
curve_point_row(sqlite3_stmt *st, gpointer out)
{
  return curve_columns(st, 0, out);
}

static char *
op_curve_point_row(sqlite3_stmt *st, gpointer out)
{
  DdpCalibCurvePoint *p = out;
  p->op = column_text(st, 0);
  char *bad = curve_columns(st, 1, p);
  check_op(&bad, p->op);
  return bad;
}

/* Refuses a size stored twice for one curve (@curve ordered by op, variant, then bytes). */
static gboolean
check_curve_sizes(DdpCalibDb *db, const GArray *curve, const char *table, GError **error)
{
  for (guint i = 1; i < curve->len; i++) {
    const DdpCalibCurvePoint *a = &g_array_index(curve, DdpCalibCurvePoint, i - 1);
    const DdpCalibCurvePoint *b = &g_array_index(curve, DdpCalibCurvePoint, i);
    if (a->bytes == b->bytes && a->ranks == b->ranks && a->nodes == b->nodes && g_strcmp0(a->op, b->op) == 0 &&
        g_strcmp0(a->algorithm, b->algorithm) == 0 && g_strcmp0(a->protocol, b->protocol) == 0) {
      g_autofree char *op = b->op ? g_strdup_printf("%s ", b->op) : g_strdup("");
      return value_error(db, error, table, i + 1,
                         g_strdup_printf("bytes = %" G_GINT64_FORMAT " twice for %s%s/%s ranks=%d nodes=%d", b->bytes,
                                         op, b->algorithm, b->protocol, b->ranks, b->nodes));
    }
  }
  return TRUE;
}

/**
 * ddp_calibdb_fit_curve:
 * Stored curves are checked like imported points: each time measured (above 0), and each size
 * once per variant — commcurve.h interpolates between neighbouring sizes, and two times at one
 * size would make a zero-width segment.
 * Returns: (transfer full) (element-type DdpCalibCurvePoint); NULL with DDP_CALIBDB_ERROR_VALUE.
 */
GArray *
ddp_calibdb_fit_curve(DdpCalibDb *db, gint64 fit_id, GError **error)
{
  g_autoptr(GArray) curve = read_fit_rows(db, ST_FIT_CURVE_SELECT, fit_id, sizeof(DdpCalibCurvePoint),
                                          (GDestroyNotify)ddp_calib_curve_point_clear, curve_point_row,
                                          "fit_allreduce_curve", error);
  return curve && check_curve_sizes(db, curve, "fit_allreduce_curve", error) ? g_steal_pointer(&curve) : NULL;
}

/**
 * ddp_calibdb_fit_collective_curve:
 * As ddp_calibdb_fit_curve(), for the other collectives; each op must be one of the three.
 * Returns: (transfer full) (element-type DdpCalibCurvePoint); NULL with DDP_CALIBDB_ERROR_VALUE.
 */
GArray *
ddp_calibdb_fit_collective_curve(DdpCalibDb *db, gint64 fit_id, GError **error)
{
  g_autoptr(GArray) curve = read_fit_rows(db, ST_FIT_OP_CURVE_SELECT, fit_id, sizeof(DdpCalibCurvePoint),
                                          (GDestroyNotify)ddp_calib_curve_point_clear, op_curve_point_row,
                                          "fit_collective_curve", error);
  return curve && check_curve_sizes(db, curve, "fit_collective_curve", error) ? g_steal_pointer(&curve) : NULL;
}
