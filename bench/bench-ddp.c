/* bench-ddp — speed of the simulator on fixed workloads (run on demand: `make bench`; never part
 * of `make check`, where timing would make tests flaky).
 *
 * Workloads (the README's speed figures), gpt2-xl (48 transformer blocks) on dgx-h100, bf16,
 * AdamW, the default overheads (jitter 0.02, overlap_slowdown 0.05), on ONE thread:
 *   one steady iteration at 8, 512, 8 192 and 131 072 GPUs with per-rank lognormal stragglers;
 *   a 64-point bucket_cap_mb sweep and a 15-point scale sweep (8 … 131 072 GPUs), one iteration;
 *   issue 22's targets, 100 steady iterations each: 131 072 GPUs with lognormal:0.05 (< 1 s),
 *   a 15-point scale sweep to 131 072 (< 5 s), and 1 048 576 GPUs with
 *   lognormal:0.05,slow:8:1.3,hiccup:50:20 (< 5 s, < 200 MB peak resident memory).
 * Each is run 5 times (the last three 3 times); the median wall time is printed, and after the
 * million-GPU run the process's peak resident set (getrusage). */
#include "ddp.h"

#include <math.h>
#include <stdio.h>
#include <sys/resource.h>

typedef struct {
  guint64 gpus;
  guint iterations;
  const char *stragglers;
} Point;

/* One simulation of @s at @p on one thread; cap @cap_mb. */
static void
simulate(const DdpScenario *s, const Point *p, double cap_mb)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(DdpStragglers) stragglers = ddp_stragglers_parse(p->stragglers, &error);
  if (!stragglers)
    g_error("%s", error->message);
  DdpScenario at = *s;
  at.stragglers = stragglers;
  at.setup.gpus = p->gpus;
  at.setup.buckets.bucket_cap_mb = cap_mb;
  at.setup.iterations = p->iterations;
  DdpRunOptions options = { .skip_single_gpu = TRUE, .threads = 1 };
  g_autoptr(DdpResult) r = ddp_simulate(&at, &options, &error);
  if (!r)
    g_error("%s", error->message);
}

typedef void (*Workload)(const DdpScenario *s, const Point *p);

static void
one_run(const DdpScenario *s, const Point *p)
{
  simulate(s, p, 25);
}

static void
bucket_sweep(const DdpScenario *s, const Point *p)
{
  for (int i = 0; i < 64; i++)
    simulate(s, p, pow(2, 8.0 * i / 63));   /* 1 … 256 MiB, log grid */
}

static void
scale_sweep(const DdpScenario *s, const Point *p)
{
  for (guint64 g = 8; g <= 131072; g *= 2) {  /* 8, 16, …, 131 072: 15 points */
    Point at = *p;
    at.gpus = g;
    simulate(s, &at, 25);
  }
}

static int
compare_double(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static void
measure(const char *name, const DdpScenario *s, Workload workload, const Point *p, int repeats)
{
  double wall[5];
  g_assert(repeats <= 5);
  for (int i = 0; i < repeats; i++) {
    gint64 t0 = g_get_monotonic_time();
    workload(s, p);
    wall[i] = (double)(g_get_monotonic_time() - t0) / 1e3;
  }
  qsort(wall, (size_t)repeats, sizeof(double), compare_double);
  printf("%-58s %10.2f ms  (min %.2f, max %.2f)\n", name, wall[repeats / 2], wall[0], wall[repeats - 1]);
  fflush(stdout);
}

int
main(int argc, char **argv)
{
  const char *model = argc > 1 ? argv[1] : "gpt2-xl";
  g_autoptr(GError) error = NULL;
  g_autoptr(DdpScenario) s = g_new0(DdpScenario, 1);
  if (!(s->model = ddp_model_load(model, &error)) || !(s->cluster = ddp_cluster_load("dgx-h100", &error))) {
    fprintf(stderr, "bench-ddp: %s\n", error->message);
    return 2;
  }
  s->stragglers = ddp_stragglers_parse("none", NULL);
  ddp_setup_init(&s->setup);
  s->setup.batch = 8;
  s->setup.precision = DDP_PRECISION_BF16;
  s->setup.optimizer = DDP_OPTIMIZER_ADAMW;
  printf("bench-ddp: %s (%u layers, %u parameter tensors) on dgx-h100, bf16, one thread, median wall time\n",
         s->model->name, s->model->n_layers, s->model->n_params);
  static const guint64 sizes[] = { 8, 512, 8192, 131072 };
  for (gsize i = 0; i < G_N_ELEMENTS(sizes); i++) {
    g_autofree char *name = g_strdup_printf("one iteration, %" G_GUINT64_FORMAT " GPUs, lognormal:0.05", sizes[i]);
    measure(name, s, one_run, &(Point){ sizes[i], 1, "lognormal:0.05" }, 5);
  }
  measure("bucket sweep, 64 caps, 512 GPUs, one iteration", s, bucket_sweep, &(Point){ 512, 1, "lognormal:0.05" }, 5);
  measure("scale sweep, 15 counts, 8..131072, one iteration", s, scale_sweep, &(Point){ 8, 1, "lognormal:0.05" }, 5);
  measure("131072 GPUs x 100 iterations, lognormal:0.05", s, one_run, &(Point){ 131072, 100, "lognormal:0.05" }, 3);
  measure("scale sweep, 15 counts, 8..131072, 100 iterations", s, scale_sweep, &(Point){ 8, 100, "lognormal:0.05" }, 3);
  measure("1048576 GPUs x 100 iterations, lognormal:0.05,slow:8:1.3,hiccup:50:20", s, one_run,
          &(Point){ 1048576, 100, "lognormal:0.05,slow:8:1.3,hiccup:50:20" }, 3);
  struct rusage usage;
  getrusage(RUSAGE_SELF, &usage);
  printf("%-58s %10.1f MB\n", "peak resident memory (the million-GPU run)", (double)usage.ru_maxrss / 1024);
  return 0;
}
