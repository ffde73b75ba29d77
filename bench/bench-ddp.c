/* bench-ddp — speed of the simulator on fixed workloads (run on demand: `make bench`; never part
 * of `make check`, where timing would make tests flaky).
 *
 * Workloads (the README's speed figures): one steady iteration of a 48-layer model (gpt2-xl) on
 * dgx-h100 at 8, 512, 8 192 and 131 072 GPUs with per-rank lognormal stragglers; a 64-point
 * bucket_cap_mb sweep and a 15-point scale sweep (8 … 131 072 GPUs).  Each is run 5 times; the
 * median wall time and event-kernel events per second are printed. */
#include "ddp.h"

#include <math.h>
#include <stdio.h>

#define REPEATS 5

static int
compare_double(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

typedef struct {
  guint64 events;
  double sim_ms;
} Work;

/* One simulation of @s at @gpus GPUs and cap @cap_mb: one steady iteration after iteration 0. */
static Work
simulate(DdpScenario *s, guint64 gpus, double cap_mb)
{
  DdpScenario at = *s;
  at.setup.gpus = gpus;
  at.setup.buckets.bucket_cap_mb = cap_mb;
  at.setup.iterations = 1;
  DdpRunOptions options = { .skip_single_gpu = TRUE };
  g_autoptr(GError) error = NULL;
  g_autoptr(DdpResult) r = ddp_simulate(&at, &options, &error);
  if (!r)
    g_error("%s", error->message);
  return (Work){ r->events, r->mean_ms };
}

typedef Work (*Workload)(DdpScenario *s, gpointer data);

static Work
one_iteration(DdpScenario *s, gpointer data)
{
  return simulate(s, *(guint64 *)data, 25);
}

static Work
bucket_sweep(DdpScenario *s, gpointer data)
{
  Work total = { 0, 0 };
  for (int i = 0; i < 64; i++) {
    Work w = simulate(s, 512, pow(2, 8.0 * i / 63));   /* 1 … 256 MiB, log grid */
    total.events += w.events;
  }
  return total;
}

static Work
scale_sweep(DdpScenario *s, gpointer data)
{
  Work total = { 0, 0 };
  for (guint64 g = 8; g <= 131072; g *= 2) {           /* 8, 16, …, 131 072: 15 points */
    Work w = simulate(s, g, 25);
    total.events += w.events;
  }
  return total;
}

static void
measure(const char *name, DdpScenario *s, Workload workload, gpointer data)
{
  double wall[REPEATS];
  Work work = { 0, 0 };
  for (int i = 0; i < REPEATS; i++) {
    gint64 t0 = g_get_monotonic_time();
    work = workload(s, data);
    wall[i] = (double)(g_get_monotonic_time() - t0) / 1e3;
  }
  qsort(wall, REPEATS, sizeof(double), compare_double);
  double median = wall[REPEATS / 2];
  printf("%-34s %12.2f ms  (min %.2f, max %.2f)  %10" G_GUINT64_FORMAT " events  %12.0f events/s\n", name, median,
         wall[0], wall[REPEATS - 1], work.events, (double)work.events / (median / 1e3));
}

int
main(int argc, char **argv)
{
  const char *model = argc > 1 ? argv[1] : "gpt2-xl";
  g_autoptr(GError) error = NULL;
  g_autoptr(DdpScenario) s = g_new0(DdpScenario, 1);
  if (!(s->model = ddp_model_load(model, &error)) || !(s->cluster = ddp_cluster_load("dgx-h100", &error)) ||
      !(s->stragglers = ddp_stragglers_parse("lognormal:0.05", &error))) {
    fprintf(stderr, "bench-ddp: %s\n", error->message);
    return 2;
  }
  ddp_setup_init(&s->setup);
  s->setup.batch = 8;
  s->setup.precision = DDP_PRECISION_BF16;
  s->setup.optimizer = DDP_OPTIMIZER_ADAMW;
  printf("bench-ddp: %s (%u layers, %u parameter tensors) on dgx-h100, bf16, stragglers lognormal:0.05, median of %d\n",
         s->model->name, s->model->n_layers, s->model->n_params, REPEATS);
  static guint64 sizes[] = { 8, 512, 8192, 131072 };
  for (gsize i = 0; i < G_N_ELEMENTS(sizes); i++) {
    g_autofree char *name = g_strdup_printf("one iteration, %" G_GUINT64_FORMAT " GPUs", sizes[i]);
    measure(name, s, one_iteration, &sizes[i]);
  }
  measure("bucket sweep, 64 caps, 512 GPUs", s, bucket_sweep, NULL);
  measure("scale sweep, 15 counts, 8..131072", s, scale_sweep, NULL);
  return 0;
}
