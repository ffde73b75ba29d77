/* trace — one simulated iteration as a Chrome trace-event JSON file, which Perfetto
 * (ui.perfetto.dev) and chrome://tracing open.  Format: "Trace Event Format" (Google, 2016):
 * {"traceEvents": [...]} with "X" complete events (ts, dur in microseconds), "M" metadata events
 * naming processes and threads, "i" instant events.
 *
 * Layout: one process per shown rank (pid = rank + 1, named "rank R"; pid 0 is avoided because
 * trace viewers treat it as the kernel's idle task), each with two threads:
 *   tid 1 "compute"  one slice per forward/backward layer (named after the layer), the
 *                    compression casts, waits, finalize, the optimizer step, buffer broadcasts;
 *   tid 2 "nccl"     exactly one slice per bucket AllReduce ("AllReduce bucket B") with args
 *                    bucket, bytes, wire_bytes, params, algorithm, protocol, ready_ms, launch_ms;
 *                    and an instant event when the bucket became ready.
 * The collective is a synchronisation — it runs on every rank at the same simulated time — so each
 * shown rank's nccl thread holds the same slices.
 *
 * Times: ts = (simulated ns from the iteration start − origin) / 1000, written with three
 * decimals, i.e. exact to the nanosecond.  origin is 0 unless a shown rank started before the
 * iteration did (a fast rank runs ahead into the next forward while the slowest one finishes its
 * optimizer step); then it is that (negative) start, because trace viewers mishandle negative
 * timestamps.  otherData.iteration_start_us records −origin/1000, so
 * simulated_ns = 1000·(ts − iteration_start_us). */
#ifndef DDP_TRACE_H
#define DDP_TRACE_H

#include <glib.h>
#include "ddp.h"
#include "scenario.h"

/* The trace of @result's watched ranks (result->timelines, in that order) and its bucket
 * schedule.  @labels: (nullable) one description per timeline, added to the process name
 * ("rank 17 (slowest, x1.31)"); NULL entries allowed.  Returns: (transfer full) the JSON text. */
char *ddp_trace_to_json(const DdpScenario *scenario, const DdpResult *result, const char *const *labels);

/* Writes ddp_trace_to_json() to @path (the --trace FILE) atomically through ddp_file_write: on
 * failure FALSE with DDP_FILE_ERROR naming --trace and @path, and nothing at @path changed. */
gboolean ddp_trace_write(const char *path, const DdpScenario *scenario, const DdpResult *result,
                         const char *const *labels, GError **error);

/* The name a compute-stream segment is drawn with: the layer name for forward/backward, "optimizer
 * step", "wait for AllReduce"… (borrowed or static; valid as long as @model).  @next_kind is the
 * kind of the segment that follows on the same rank (-1 if none): a WAIT before a BACKWARD is a
 * straggler delay, a WAIT before a FORWARD or BROADCAST is the host's step boundary
 * (host_iteration_us), any other WAIT is waiting for communication. */
const char *ddp_trace_segment_name(const DdpModel *model, const DdpSegment *segment, int next_kind);
/* The category of a segment: "forward", "backward", "hook", "delay", "host", "wait", "finalize",
 * "optimizer", "broadcast". */
const char *ddp_trace_segment_category(const DdpSegment *segment, int next_kind);

#endif
