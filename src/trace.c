/* trace — Chrome trace-event JSON of one simulated iteration (see trace.h for the layout).
 * Written with our JSON writer (jsonout.h) so that times keep exactly three decimals of µs and the
 * file is byte-identical for the same input. */
#include "trace.h"

#include "collective.h"
#include "fileio.h"
#include "jsonout.h"

#include <string.h>

/* A wait before the forward (or the buffer broadcast that precedes it), or before FSDP's summed
 * contention at the step's end (fsdp.c), is the host's step boundary (host_iteration_us), not a
 * wait for communication. */
static gboolean
wait_is_host(int next_kind)
{
  return next_kind == DDP_SEGMENT_FORWARD || next_kind == DDP_SEGMENT_BROADCAST || next_kind == DDP_SEGMENT_CONTENTION;
}

const char *
ddp_trace_segment_category(const DdpSegment *segment, int next_kind)
{
  switch (segment->kind) {
  case DDP_SEGMENT_FORWARD: return "forward";
  case DDP_SEGMENT_BACKWARD: return "backward";
  case DDP_SEGMENT_HOOK_CAST: return "hook";
  case DDP_SEGMENT_WAIT:
    return next_kind == DDP_SEGMENT_BACKWARD ? "delay" : wait_is_host(next_kind) ? "host" : "wait";
  case DDP_SEGMENT_FINALIZE: return "finalize";
  case DDP_SEGMENT_OPTIMIZER: return "optimizer";
  case DDP_SEGMENT_BROADCAST: return "broadcast";
  case DDP_SEGMENT_UNUSED_SEARCH: return "ddp";
  case DDP_SEGMENT_CONTENTION: return "contention";
  }
  g_assert_not_reached();
}

const char *
ddp_trace_segment_name(const DdpModel *model, const DdpSegment *segment, int next_kind)
{
  switch (segment->kind) {
  case DDP_SEGMENT_FORWARD:
  case DDP_SEGMENT_BACKWARD:
    g_assert(segment->index >= 0 && (guint)segment->index < model->n_layers);
    return model->layers[segment->index].name;
  case DDP_SEGMENT_HOOK_CAST: return "compression hook cast";
  case DDP_SEGMENT_WAIT:
    return next_kind == DDP_SEGMENT_BACKWARD ? "straggler delay"
           : wait_is_host(next_kind)         ? "host step boundary (zero_grad, loss.item(), next batch)"
                                             : "wait for AllReduce";
  case DDP_SEGMENT_FINALIZE: return "finalize (bucket to .grad)";
  case DDP_SEGMENT_OPTIMIZER: return "optimizer step";
  case DDP_SEGMENT_BROADCAST: return "broadcast buffers";
  case DDP_SEGMENT_UNUSED_SEARCH: return "find_unused_parameters graph search";
  case DDP_SEGMENT_CONTENTION: return "compute slowed by the overlapping collectives (contention, summed here)";
  }
  g_assert_not_reached();
}

static void
ts_member(DdpJson *j, const char *key, gint64 ns)
{
  /* ns / 1000 with three decimals is exact: ns are integers */
  ddp_json_double(j, key, (double)ns / 1e3, 3);
}

static void
metadata(DdpJson *j, const char *what, gint64 pid, gint64 tid, const char *key, const char *text, gint64 number)
{
  ddp_json_begin_object(j, NULL);
  ddp_json_string(j, "name", what);
  ddp_json_string(j, "ph", "M");
  ddp_json_int(j, "pid", pid);
  if (tid >= 0)
    ddp_json_int(j, "tid", tid);
  ddp_json_begin_object(j, "args");
  if (text)
    ddp_json_string(j, key, text);
  else
    ddp_json_int(j, key, number);
  ddp_json_end_object(j);
  ddp_json_end_object(j);
}

static void
slice_head(DdpJson *j, const char *name, const char *category, gint64 pid, gint64 tid, gint64 start, gint64 end)
{
  ddp_json_string(j, "name", name);
  ddp_json_string(j, "cat", category);
  ddp_json_string(j, "ph", "X");
  ddp_json_int(j, "pid", pid);
  ddp_json_int(j, "tid", tid);
  ts_member(j, "ts", start);
  ts_member(j, "dur", end - start);
}

static void
compute_slices(DdpJson *j, const DdpScenario *s, const DdpRankTimeline *t, gint64 pid, gint64 origin)
{
  const DdpModel *m = s->model;
  const DdpSegment *segs = (const DdpSegment *)(const void *)t->segments->data;
  for (guint i = 0; i < t->segments->len; i++) {
    const DdpSegment *g = &segs[i];
    if (g->end_ns <= g->start_ns)
      continue;   /* an empty wait or barrier: nothing to see */
    int next = i + 1 < t->segments->len ? (int)segs[i + 1].kind : -1;
    ddp_json_begin_object(j, NULL);
    slice_head(j, ddp_trace_segment_name(m, g, next), ddp_trace_segment_category(g, next), pid, 1,
               g->start_ns - origin, g->end_ns - origin);
    ddp_json_begin_object(j, "args");
    if (g->kind == DDP_SEGMENT_FORWARD || g->kind == DDP_SEGMENT_BACKWARD) {
      const DdpLayer *layer = &m->layers[g->index];
      ddp_json_int(j, "layer", g->index);
      ddp_json_string(j, "kind", ddp_layer_kind_name(layer->kind));
      ddp_json_int(j, "params", layer->n_params);
    } else if (g->kind == DDP_SEGMENT_HOOK_CAST) {
      ddp_json_int(j, "bucket", g->index);
    }
    if (s->setup.accumulate > 1)
      ddp_json_int(j, "micro_step", g->micro_step);
    ddp_json_end_object(j);
    ddp_json_end_object(j);
  }
}

static void
nccl_slices(DdpJson *j, const DdpScenario *s, const DdpResult *r, gint64 pid, gint64 origin)
{
  const DdpModel *m = s->model;
  for (guint b = 0; b < r->n_buckets; b++) {
    const DdpBucketSchedule *k = &r->buckets[b];
    g_autofree char *name = g_strdup_printf("AllReduce bucket %u", k->index);
    ddp_json_begin_object(j, NULL);
    slice_head(j, name, "nccl", pid, 2, k->start_ns - origin, k->end_ns - origin);
    ddp_json_begin_object(j, "args");
    ddp_json_int(j, "bucket", k->index);
    ddp_json_int(j, "bytes", (gint64)k->bytes);
    ddp_json_int(j, "wire_bytes", (gint64)k->wire_bytes);
    ddp_json_int(j, "params", k->n_params);
    if (k->n_params > 0) {
      ddp_json_string(j, "first_param", m->params[k->params[0]].name);
      ddp_json_string(j, "last_param", m->params[k->params[k->n_params - 1]].name);
    }
    ddp_json_string(j, "algorithm", ddp_algorithm_name(k->cost.algorithm));
    ddp_json_string(j, "protocol", ddp_protocol_name(k->cost.protocol));
    ddp_json_double(j, "ready_ms", (double)k->ready_ns / 1e6, 6);
    ddp_json_double(j, "launch_ms", (double)k->launch_ns / 1e6, 6);
    ddp_json_end_object(j);
    ddp_json_end_object(j);

    g_autofree char *ready = g_strdup_printf("bucket %u ready", k->index);
    ddp_json_begin_object(j, NULL);
    ddp_json_string(j, "name", ready);
    ddp_json_string(j, "cat", "nccl");
    ddp_json_string(j, "ph", "i");
    ddp_json_string(j, "s", "t");
    ddp_json_int(j, "pid", pid);
    ddp_json_int(j, "tid", 2);
    ts_member(j, "ts", k->ready_ns - origin);
    ddp_json_end_object(j);
  }
}

/* A sharded strategy's collectives (fsdp.h, zero.h): the process group's NCCL stream (thread 2, as
 * DDP's buckets) and HSDP's replica group (thread 3), "AllGather unit 3", "ReduceScatter unit 3". */
static void
span_slices(DdpJson *j, const DdpResult *r, gint64 pid, gint64 origin)
{
  static const char *const names[DDP_OP_COUNT] = { "AllReduce", "AllGather", "ReduceScatter", "Broadcast" };
  for (guint i = 0; r->spans && i < r->spans->len; i++) {
    const DdpCommSpan *c = &g_array_index(r->spans, DdpCommSpan, i);
    /* ZeRO-1 overlap_with_ddp numbers its broadcasts by DDP bucket, FSDP its collectives by unit */
    g_autofree char *name = c->unit >= 0 ? g_strdup_printf("%s %s %d", names[c->op], c->op == DDP_OP_BROADCAST ? "bucket" : "unit", c->unit)
                                         : g_strdup(names[c->op]);
    ddp_json_begin_object(j, NULL);
    slice_head(j, name, "nccl", pid, 2 + (gint64)c->lane, c->start_ns - origin, c->end_ns - origin);
    ddp_json_begin_object(j, "args");
    ddp_json_string(j, "op", ddp_collective_op_name(c->op));
    ddp_json_int(j, "unit", c->unit);
    ddp_json_bool(j, "backward", c->backward);
    ddp_json_int(j, "bytes", (gint64)c->bytes);
    ddp_json_end_object(j);
    ddp_json_end_object(j);
  }
}

/* The earliest time anything shown starts, or 0 if nothing starts before the iteration. */
static gint64
time_origin(const DdpResult *r)
{
  gint64 origin = 0;
  for (guint i = 0; i < r->n_timelines; i++) {
    const GArray *segs = r->timelines[i].segments;
    for (guint k = 0; k < segs->len; k++)
      origin = MIN(origin, g_array_index(segs, DdpSegment, k).start_ns);
  }
  for (guint b = 0; b < r->n_buckets; b++)
    origin = MIN(origin, r->buckets[b].ready_ns);
  return origin;
}

/**
 * ddp_trace_to_json:
 * See trace.h.  Returns a newly allocated string (g_free).
 */
char *
ddp_trace_to_json(const DdpScenario *s, const DdpResult *r, const char *const *labels)
{
  gint64 origin = time_origin(r);
  DdpJson *j = ddp_json_new();
  ddp_json_begin_object(j, NULL);
  ddp_json_begin_array(j, "traceEvents");
  for (guint i = 0; i < r->n_timelines; i++) {
    const DdpRankTimeline *t = &r->timelines[i];
    gint64 pid = (gint64)t->rank + 1;
    const char *label = labels ? labels[i] : NULL;
    g_autofree char *name = label && *label ? g_strdup_printf("rank %" G_GUINT64_FORMAT " (%s)", t->rank, label)
                                            : g_strdup_printf("rank %" G_GUINT64_FORMAT, t->rank);
    metadata(j, "process_name", pid, -1, "name", name, 0);
    metadata(j, "process_sort_index", pid, -1, "sort_index", NULL, i);
    metadata(j, "thread_name", pid, 1, "name", "compute", 0);
    metadata(j, "thread_sort_index", pid, 1, "sort_index", NULL, 1);
    metadata(j, "thread_name", pid, 2, "name", "nccl", 0);
    metadata(j, "thread_sort_index", pid, 2, "sort_index", NULL, 2);
    gboolean replica = FALSE;
    for (guint k = 0; r->spans && k < r->spans->len; k++)
      replica = replica || g_array_index(r->spans, DdpCommSpan, k).lane == 1;
    if (replica) {
      metadata(j, "thread_name", pid, 3, "name", "nccl (replica group)", 0);
      metadata(j, "thread_sort_index", pid, 3, "sort_index", NULL, 3);
    }
    compute_slices(j, s, t, pid, origin);
    nccl_slices(j, s, r, pid, origin);
    span_slices(j, r, pid, origin);
  }
  ddp_json_end_array(j);
  ddp_json_string(j, "displayTimeUnit", "ms");
  ddp_json_begin_object(j, "otherData");
  ddp_json_string(j, "generator", "ddpsim timeline");
  ddp_json_string(j, "model", s->model->name);
  ddp_json_string(j, "cluster", s->cluster->name);
  ddp_json_int(j, "gpus", (gint64)r->gpus);
  ddp_json_int(j, "nodes", (gint64)r->nodes);
  ddp_json_double(j, "bucket_cap_mb", s->setup.buckets.bucket_cap_mb, 6);
  g_autofree char *stragglers = ddp_stragglers_to_string(s->stragglers);
  ddp_json_string(j, "stragglers", stragglers);
  ddp_json_uint64(j, "seed", s->setup.seed);
  ddp_json_int(j, "iteration", r->iterations);
  ddp_json_double(j, "iteration_ms", (double)r->reported_iteration_ns / 1e6, 6);
  ts_member(j, "iteration_start_us", -origin);
  ddp_json_end_object(j);
  ddp_json_end_object(j);
  return ddp_json_free_to_string(j);
}

/**
 * ddp_trace_write:
 * See trace.h: ddp_file_write() (fileio.h) writes a temporary file in the same directory, fsyncs it
 * and renames it over @path only when @path is missing or a regular file.
 */
gboolean
ddp_trace_write(const char *path, const DdpScenario *scenario, const DdpResult *result, const char *const *labels,
                GError **error)
{
  g_autofree char *json = ddp_trace_to_json(scenario, result, labels);
  return ddp_file_write("--trace", path, json, strlen(json), error);
}
