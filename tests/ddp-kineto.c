/* ddp-kineto — synthetic Kineto traces of a simulated DDP run (ddp-kineto.h). */
#include "ddp-kineto.h"

#include "fit.h"

#include <string.h>

/* One kernel event of @blocks thread blocks. */
static void
kernel(GString *out, const char *name, gint64 stream, double ts, double dur, int blocks, const char *extra)
{
  g_string_append_printf(out, ",\n{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"%s\", \"pid\": 0, \"tid\": %" G_GINT64_FORMAT
                         ", \"ts\": %.3f, \"dur\": %.3f, \"args\": {\"device\": 0, \"stream\": %" G_GINT64_FORMAT
                         ", \"grid\": [%d, 1, 1], \"block\": [256, 1, 1]%s}}", name, stream, ts, dur, stream, blocks, extra);
}

GPtrArray *
ddp_kineto_write(const DdpScenario *s, const DdpResult *r, const char *dir, const DdpKinetoOptions *o)
{
  GPtrArray *paths = g_ptr_array_new_with_free_func(g_free);
  g_autoptr(GRand) rng = g_rand_new_with_seed(o->seed);
  const gint64 compute_stream = o->no_compute ? 20 : 7, comm_stream = 20;
  const char *collective = o->collective ? o->collective : "AllReduce";
  double period = (double)r->reported_iteration_ns / 1e3;
  const double base = 1.7e12;   /* a Kineto-like absolute clock, µs */
  for (guint w = 0; w < r->n_timelines; w++) {
    const DdpRankTimeline *t = &r->timelines[w];
    GString *out = g_string_new(NULL);
    g_string_append_printf(out, "{\"schemaVersion\": 1,\n\"distributedInfo\": {\"backend\": \"nccl\", \"rank\": %"
                           G_GUINT64_FORMAT ", \"world_size\": %" G_GUINT64_FORMAT ", \"nccl_version\": \"2.21.5\"},\n"
                           "\"deviceProperties\": [", t->rank, r->gpus);
    for (guint64 d = 0; d < (guint64)s->cluster->gpus_per_node; d++)
      g_string_append_printf(out, "%s{\"id\": %" G_GUINT64_FORMAT ", \"name\": \"NVIDIA A100-SXM4-80GB\", \"totalGlobalMem\": 85899345920, "
                             "\"computeMajor\": 8, \"computeMinor\": 0, \"numSms\": %d}", d ? ", " : "", d, s->cluster->gpu.sms);
    g_string_append(out, "],\n\"traceEvents\": [{\"ph\": \"M\", \"name\": \"process_name\", \"pid\": 0, \"args\": {\"name\": \"python\"}}");
    /* the rank's own step window starts at its first segment (a fast rank runs ahead) */
    gint64 first = G_MAXINT64;
    for (guint k = 0; k < t->segments->len; k++)
      first = MIN(first, g_array_index(t->segments, DdpSegment, k).start_ns);
    for (guint step = 0; step < o->steps; step++) {
      double origin = base + step * period;
      g_string_append_printf(out, ",\n{\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": \"ProfilerStep#%u\", "
                             "\"pid\": 1, \"tid\": 1, \"ts\": %.3f, \"dur\": %.3f}", step, origin + first / 1e3, period);
      for (guint k = 0; k < t->segments->len; k++) {
        const DdpSegment *g = &g_array_index(t->segments, DdpSegment, k);
        if (g->end_ns <= g->start_ns || g->kind == DDP_SEGMENT_WAIT || g->kind == DDP_SEGMENT_UNUSED_SEARCH)
          continue;
        double dur = (g->end_ns - g->start_ns) / 1e3 * (1 + o->noise * g_rand_double_range(rng, -1, 1));
        double ts = origin + g->start_ns / 1e3;
        if (g->kind == DDP_SEGMENT_BROADCAST) {
          kernel(out, "ncclDevKernel_Broadcast_RING_LL(ncclDevComm*, unsigned long, ncclWork*)", comm_stream, ts, dur, 1,
                 ", \"Collective name\": \"broadcast\"");
          continue;
        }
        g_autofree char *name = NULL;
        if (g->kind == DDP_SEGMENT_FORWARD || g->kind == DDP_SEGMENT_BACKWARD) {
          g_autofree char *sig = ddp_fit_layer_signature(s->model, (guint)g->index);
          /* BatchNorm layers under cuDNN's kernel names, as a real trace has them (the importer
           * tells them apart by name: batch_norm_waits) */
          gboolean bn = ddp_model_layer_is_batch_norm(s->model, (guint)g->index);
          name = g_strdup_printf("%s:%s", g->kind == DDP_SEGMENT_FORWARD ? (bn ? "bn_fw_tr_1C11_kernel_NCHW" : "fwd")
                                                                         : (bn ? "bn_bw_1C11_kernel_new" : "bwd"), sig);
          for (char *p = name; *p; p++)
            if (*p == '"' || *p == '\\')
              *p = '\'';
        } else
          name = g_strdup_printf("%s_kernel", g->kind == DDP_SEGMENT_OPTIMIZER ? "optimizer"
                                              : g->kind == DDP_SEGMENT_FINALIZE ? "finalize" : "cast");
        kernel(out, name, compute_stream, ts, dur, 1, "");
      }
      for (guint b = 0; b < r->n_buckets; b++) {
        const DdpBucketSchedule *k = &r->buckets[b];
        double dur = (k->end_ns - k->start_ns) / 1e3 * (1 + o->noise * g_rand_double_range(rng, -1, 1));
        g_autofree char *name = g_strdup_printf("ncclDevKernel_%s_Sum_f32_RING_LL(ncclDevComm*, unsigned long, ncclWork*)",
                                                collective);
        g_autofree char *extra = g_strdup_printf(", \"Collective name\": \"%s\", \"In msg nelems\": %" G_GUINT64_FORMAT
                                                 ", \"Out msg nelems\": %" G_GUINT64_FORMAT ", \"Group size\": %"
                                                 G_GUINT64_FORMAT ", \"dtype\": \"Float\"",
                                                 strcmp(collective, "AllReduce") == 0 ? "allreduce" : "allgather",
                                                 k->wire_bytes / 4, k->wire_bytes / 4, r->gpus);
        /* NCCL's blocks: the channels the prediction's contention came from (one where it did not) */
        kernel(out, name, comm_stream, origin + k->start_ns / 1e3, dur, MAX(r->overlap_slowdown_channels, 1), extra);
      }
    }
    g_string_append(out, "\n]}\n");
    char *path = g_strdup_printf("%s/rank-%" G_GUINT64_FORMAT ".json", dir, t->rank);
    g_assert_true(g_file_set_contents(path, out->str, (gssize)out->len, NULL));
    g_string_free(out, TRUE);
    g_ptr_array_add(paths, path);
  }
  return paths;
}
