/* cmd-solve — `ddpsim solve [SCENARIO] --for QUANTITY --target-efficiency E`: inverse questions
 * ("what inter-node bandwidth do I need for 90 % at 1 024 GPUs?") answered by search over the
 * simulator (solve.c); text or --json, documented in docs/solve.md. */
#include "cmd.h"

#include "cost.h"
#include "deadline.h"
#include "jsonout.h"
#include "progress.h"
#include "solve.h"
#include "suggest.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

typedef struct {
  DdpCliOptions cli;
  DdpCostFlags cost;
  gboolean json;
  char *quantity, *target, *min, *max, *tolerance, *min_gain, *global_batch, *max_batch, *deadline_hours, *budget;
} SolveOptions;

static const char solve_description[] =
  "QUANTITY, and the question it answers at the scenario's other settings:\n"
  "  inter-bandwidth  least Gb/s per NIC (nic_bandwidth_Gbps) reaching the target\n"
  "  nics             least NICs per node reaching it\n"
  "  gpus             most GPUs still reaching it (whole nodes beyond one node)\n"
  "  batch            least per-GPU batch reaching it, and whether that fits in memory\n"
  "  accumulate       least gradient-accumulation micro-steps reaching it\n"
  "  bucket-cap       fastest bucket_cap_mb; recommended only if it beats 25 by more than --min-gain\n\n"
  "Efficiency is weak scaling: T(1 GPU) / T(N GPUs) at the same per-GPU batch and accumulation, as\n"
  "`ddpsim predict` reports it; with --global-batch B it is strong scaling, T(1 GPU, B) / (N · T(N GPUs,\n"
  "B/N per GPU)), as `ddpsim scale --global-batch` computes it (same --max-batch split).  A grid over the range is simulated, then bisection narrows the first\n"
  "interval where the target is crossed.  The answer comes with its efficiency, the margin over the\n"
  "target, the nearest failing value, and the limiting term (exposed_comm, stragglers, compute,\n"
  "memory); \"unreachable\" says how far the best point gets and why.  See docs/solve.md.\n\n"
  "--for gpus --deadline-hours H (with --train-samples or --train-tokens) answers the cheapest GPU\n"
  "count that trains within H hours; --budget C the fastest count costing at most C (the price from\n"
  "--price-per-gpu-hour or the cluster file; unpriced, cost is GPU-hours); both: the cheapest count\n"
  "meeting both.  No --target-efficiency then.  See docs/cost.md.";

static const char *const limit_text[] = {
  "nothing: T(N) equals T(1 GPU)",
  "compute beyond the ideal (DDP's copies and casts; strong scaling: work that does not shrink with B/N)",
  NULL,   /* exposed communication: the mode's collectives (limit_description) */
  "stragglers (waiting on slower ranks, compute slowed by concurrent communication)",
  "memory (the setup does not fit in GPU memory)",
  "overheads (rank-to-rank jitter, compute slowed by concurrent NCCL kernels, input wait; docs/overheads.md)",
};

/* The limiting term in words; exposed communication names the collectives @s's mode runs
 * (docs/model.md §6, docs/dp.md): DDP's AllReduce, ZeRO-1's AllReduce and parameter Broadcasts,
 * FSDP's AllGather and ReduceScatter (HSDP: and the AllReduce across nodes; NO_SHARD: AllReduce),
 * DataParallel's Scatter, Broadcast and Reduce.  Static. */
static const char *
limit_description(const DdpScenario *s, DdpLimit limit)
{
  if (limit != DDP_LIMIT_EXPOSED_COMM)
    return limit_text[limit];
  switch (s->setup.mode) {
  case DDP_MODE_ZERO1:
    return "exposed communication (AllReduce not hidden behind backward, and the Broadcasts of the updated "
           "parameters after the optimizer step)";
  case DDP_MODE_FSDP:
    switch (s->setup.shard.sharding) {
    case DDP_SHARDING_NONE:
      return "exposed communication (AllReduce not hidden behind backward)";
    case DDP_SHARDING_HYBRID:
      return "exposed communication (AllGather and ReduceScatter inside each node and AllReduce across nodes, not "
             "hidden behind forward and backward)";
    default:
      return "exposed communication (AllGather and ReduceScatter not hidden behind forward and backward)";
    }
  case DDP_MODE_DP:
    return "exposed communication (DataParallel's input Scatter, parameter Broadcast and gradient Reduce, none of "
           "it overlapped)";
  default:
    return "exposed communication (AllReduce not hidden behind backward)";
  }
}

/* A value as the reports print it: integers bare, bandwidth and caps to 4 significant digits,
 * rounded up for a least-value answer so that the printed value still reaches the target. */
static char *
format_value(DdpSolveQuantity q, double v, gboolean round_up)
{
  if (q != DDP_SOLVE_INTER_BANDWIDTH && q != DDP_SOLVE_BUCKET_CAP)
    return g_strdup_printf("%.0f", v);
  if (round_up && v > 0) {
    double scale = pow(10, 3 - floor(log10(v)));
    v = ceil(v * scale - 1e-9) / scale;
  }
  return g_strdup_printf(v >= 1e4 ? "%.0f" : "%.4g", v);   /* 800000, not 8e+05 */
}

static const char *
question_text(DdpSolveQuantity q)
{
  static const char *const text[DDP_SOLVE_COUNT] = {
    "least inter-node bandwidth per NIC", "least NICs per node", "most GPUs",
    "least per-GPU batch", "least gradient-accumulation micro-steps", "fastest bucket_cap_mb",
  };
  return text[q];
}

static void
append_point(GString *out, const char *label, const DdpSolvePoint *p, double target)
{
  g_string_append_printf(out, "  %-8s efficiency %.3f %%", label, 100 * p->efficiency);
  if (target > 0)
    g_string_append_printf(out, " (margin %+.3f points)", 100 * (p->efficiency - target));
  g_string_append_printf(out, "; iteration %.3f ms = compute %.3f + exposed comm %.3f + overheads %.3f + straggler wait %.3f\n",
                         p->iteration_ms, p->compute_ms, p->exposed_comm_ms, p->overheads_ms, p->straggler_wait_ms);
}

static char *
solve_text(const DdpScenario *s, const DdpSolveResult *r)
{
  GString *out = g_string_new(NULL);
  DdpSolveQuantity q = r->quantity;
  const char *unit = ddp_solve_quantity_unit(q);
  g_autofree char *stragglers = ddp_stragglers_to_string(s->stragglers);
  g_string_append_printf(out, "%s on %s: %" G_GUINT64_FORMAT " GPUs, ", s->model->name, s->cluster->name, s->setup.gpus);
  if (r->global_batch > 0)
    g_string_append_printf(out, "global batch %.15g", r->global_batch);
  else
    g_string_append_printf(out, "batch %.15g/GPU", s->setup.batch);
  if (s->setup.accumulate > 1)
    g_string_append_printf(out, " x %u micro-steps", s->setup.accumulate);
  g_string_append_printf(out, ", %s, bucket_cap_mb %g, %d x %g Gb/s NICs per node, stragglers %s\n",
                         ddp_setup_precision_label(&s->setup), s->setup.buckets.bucket_cap_mb,
                         s->cluster->inter.nics_per_node, s->cluster->inter.nic_bandwidth_Gbps, stragglers);
  g_autofree char *lo = format_value(q, r->min, FALSE), *hi = format_value(q, r->max, FALSE);
  if (q == DDP_SOLVE_BUCKET_CAP)
    g_string_append_printf(out, "question: fastest bucket_cap_mb in %s to %s MiB (recommended only if > %.1f %% faster than 25)\n\n",
                           lo, hi, 100 * r->min_gain);
  else
    g_string_append_printf(out, "question: %s (%s to %s %s) for scaling efficiency >= %.1f %%\n", question_text(q), lo, hi,
                           unit, 100 * r->target_efficiency);
  if (q != DDP_SOLVE_BUCKET_CAP && r->global_batch > 0)
    g_string_append_printf(out, "          (strong scaling at global batch %.15g: T(1 GPU, B) / (N * T(N GPUs, B/N per GPU)))\n\n",
                           r->global_batch);
  else if (q != DDP_SOLVE_BUCKET_CAP)
    g_string_append(out, "          (weak scaling: T(1 GPU) / T(N GPUs) at the same per-GPU batch)\n\n");

  gboolean least = q != DDP_SOLVE_GPUS;
  g_autofree char *value = format_value(q, r->answer.value, least && r->status == DDP_SOLVE_FOUND);
  double target = q == DDP_SOLVE_BUCKET_CAP ? 0 : r->target_efficiency;
  const DdpSolvePoint *a = &r->answer;
  switch (r->status) {
  case DDP_SOLVE_FOUND:
    if (q == DDP_SOLVE_BUCKET_CAP) {
      double gain = (r->neighbour.iteration_ms - a->iteration_ms) / r->neighbour.iteration_ms;
      g_string_append_printf(out, "answer   bucket_cap_mb %s: %.3f ms per iteration, %.1f %% faster than 25 (%.3f ms)\n",
                             value, a->iteration_ms, 100 * gain, r->neighbour.iteration_ms);
    } else {
      g_string_append_printf(out, "answer   %s %s\n", value, unit);
    }
    break;
  case DDP_SOLVE_ALWAYS:
    if (q == DDP_SOLVE_GPUS)
      g_string_append_printf(out, "answer   all of them: even %s GPUs (the top of the range) reach the target\n", value);
    else
      g_string_append_printf(out, "answer   %s %s: already the least value searched reaches the target\n", value, unit);
    break;
  case DDP_SOLVE_UNREACHABLE:
    g_string_append_printf(out, "answer   unreachable: the best on the grid is %.2f %% at %s %s", 100 * a->efficiency, value, unit);
    if (least)
      g_string_append_printf(out, ";\n         more (up to %s) does not help: what is lost is %s\n", hi,
                             limit_description(s, a->limit));
    else
      g_string_append(out, "\n");
    break;
  case DDP_SOLVE_MEMORY:
    g_string_append_printf(out, "answer   batch %s/GPU would reach the target but needs %.1f GB per GPU of %.1f GB;\n", value,
                           a->memory_GB, s->cluster->gpu.memory_GB);
    if (r->max_fitting_batch >= 1)
      g_string_append_printf(out, "         the largest batch that fits is %.0f: use --for accumulate at that batch\n",
                             floor(r->max_fitting_batch));
    else
      g_string_append(out, "         not even batch 1 fits: weights, gradients, buckets and optimizer state alone are too large\n");
    break;
  case DDP_SOLVE_KEEP_DEFAULT:
    g_string_append_printf(out, "answer   keep 25: no cap is more than %.1f %% faster (best seen within the noise threshold)\n",
                           100 * r->min_gain);
    break;
  }
  append_point(out, "there", a, target);
  if (r->has_neighbour && r->status == DDP_SOLVE_FOUND && q != DDP_SOLVE_BUCKET_CAP) {
    g_autofree char *nv = format_value(q, r->neighbour.value, FALSE);
    /* it misses the target: rounded down, so that 89.9996 % does not print as the 90.000 % it missed */
    g_string_append_printf(out, "  %-8s %s %s gives %.3f %%\n", least ? "below" : "above", nv, unit,
                           floor(1e5 * r->neighbour.efficiency) / 1e3);
  }
  double lost = a->iteration_ms - a->single_gpu_ms;
  g_string_append_printf(out, "  %-8s %s", "limit", limit_description(s, a->limit));
  if (a->limit != DDP_LIMIT_NONE && a->limit != DDP_LIMIT_MEMORY)
    g_string_append_printf(out, "; %.3f ms above the ideal %s %.3f ms", lost, r->global_batch > 0 ? "T(1 GPU, B)/N" : "T(1 GPU)",
                           a->single_gpu_ms);
  if (a->limit == DDP_LIMIT_MEMORY)
    g_string_append_printf(out, "; %.1f GB per GPU of %.1f GB", a->memory_GB, s->cluster->gpu.memory_GB);
  g_string_append_c(out, '\n');
  if (q != DDP_SOLVE_BUCKET_CAP) {
    g_autofree char *now = format_value(q, r->current, FALSE);
    g_string_append_printf(out, "  %-8s the scenario has %s %s", "now", now, unit);
    if (least && r->status == DDP_SOLVE_FOUND)
      g_string_append_printf(out, ": %.3g x the answer", r->current / a->value);
    g_string_append_c(out, '\n');
  }
  g_string_append_printf(out, "  %-8s %u simulations: %u-point grid over %s to %s", "search", r->simulations, r->grid->len,
                         lo, hi);
  if (q == DDP_SOLVE_INTER_BANDWIDTH && r->status == DDP_SOLVE_FOUND)
    g_string_append_printf(out, ", bisection to %.2g %%", 100 * r->tolerance);
  if (q != DDP_SOLVE_BUCKET_CAP) {
    if (r->monotone) {
      g_string_append(out, "; efficiency monotone on the grid\n");
    } else {
      g_autofree char *at = format_value(q, r->non_monotone_at, FALSE);
      g_string_append_printf(out, ";\n           NOT monotone on the grid (the trend breaks at %s %s)%s\n", at, unit,
                             r->status == DDP_SOLVE_FOUND || r->status == DDP_SOLVE_MEMORY ? ": the answer is the first crossing" : "");
      if (r->recrosses) {
        g_autofree char *back = format_value(q, r->recross.value, FALSE);
        g_string_append_printf(out, "           beyond it, %s %s %s the target again (%.2f %%)\n", back, unit,
                               r->recross.efficiency >= r->target_efficiency ? "reaches" : "misses",
                               100 * r->recross.efficiency);
      }
    }
  } else {
    g_string_append(out, " plus 8 between the best one's neighbours\n");
  }
  return g_string_free(out, FALSE);
}

static void
json_point(DdpJson *j, const DdpSolvePoint *p)
{
  ddp_json_double(j, "value", p->value, 9);
  ddp_json_bool(j, "feasible", p->feasible);
  ddp_json_double(j, "efficiency", p->efficiency, 6);
  ddp_json_double(j, "iteration_ms", p->iteration_ms, 6);
  ddp_json_double(j, "single_gpu_ms", p->single_gpu_ms, 6);
  ddp_json_double(j, "compute_ms", p->compute_ms, 6);
  ddp_json_double(j, "exposed_comm_ms", p->exposed_comm_ms, 6);
  ddp_json_double(j, "straggler_wait_ms", p->straggler_wait_ms, 6);
  ddp_json_double(j, "overheads_ms", p->overheads_ms, 6);
  ddp_json_double(j, "memory_gb", p->memory_GB, 3);
  ddp_json_bool(j, "fits", p->fits);
  ddp_json_string(j, "limiting_term", ddp_limit_name(p->limit));
}

static char *
solve_json(const DdpScenario *s, const DdpSolveResult *r)
{
  DdpJson *j = ddp_json_new();
  ddp_json_begin_object(j, NULL);
  ddp_json_string(j, "model", s->model->name);
  ddp_json_string(j, "cluster", s->cluster->name);
  ddp_json_int(j, "gpus", (gint64)s->setup.gpus);
  ddp_json_double(j, "batch", s->setup.batch, 6);
  ddp_json_string(j, "question", ddp_solve_quantity_name(r->quantity));
  ddp_json_string(j, "unit", ddp_solve_quantity_unit(r->quantity));
  if (r->quantity != DDP_SOLVE_BUCKET_CAP)
    ddp_json_double(j, "target_efficiency", r->target_efficiency, 6);
  ddp_json_string(j, "scaling_definition", r->global_batch > 0 ? "strong" : "weak");
  if (r->global_batch > 0) {
    ddp_json_double(j, "global_batch", r->global_batch, 6);
    ddp_json_double(j, "max_batch_per_gpu", r->max_batch, 6);   /* null: no memory limit */
  }
  ddp_json_string(j, "status", ddp_solve_status_name(r->status));
  ddp_json_begin_object(j, "answer");
  json_point(j, &r->answer);
  if (r->quantity != DDP_SOLVE_BUCKET_CAP)
    ddp_json_double(j, "margin", r->answer.efficiency - r->target_efficiency, 6);
  ddp_json_end_object(j);
  if (r->has_neighbour) {
    /* threshold questions: the nearest failing value; bucket cap: PyTorch's default */
    ddp_json_begin_object(j, r->quantity == DDP_SOLVE_BUCKET_CAP ? "default" : "failing_neighbour");
    json_point(j, &r->neighbour);
    ddp_json_end_object(j);
  }
  if (r->quantity == DDP_SOLVE_BUCKET_CAP) {
    double gain = r->status == DDP_SOLVE_FOUND
                    ? (r->neighbour.iteration_ms - r->answer.iteration_ms) / r->neighbour.iteration_ms : 0;
    ddp_json_double(j, "gain_over_default", gain, 6);
    ddp_json_double(j, "min_gain", r->min_gain, 6);
  }
  ddp_json_double(j, "current", r->current, 9);
  if (r->status == DDP_SOLVE_MEMORY)
    ddp_json_double(j, "max_fitting_batch", r->max_fitting_batch, 3);
  if (r->status == DDP_SOLVE_UNREACHABLE && r->saturates_at > 0)
    ddp_json_double(j, "saturates_at", r->saturates_at, 9);
  ddp_json_double(j, "min", r->min, 9);
  ddp_json_double(j, "max", r->max, 9);
  if (r->quantity == DDP_SOLVE_INTER_BANDWIDTH)
    ddp_json_double(j, "tolerance", r->tolerance, 9);
  if (r->quantity != DDP_SOLVE_BUCKET_CAP) {
    ddp_json_bool(j, "monotone", r->monotone);
    if (!r->monotone)
      ddp_json_double(j, "non_monotone_at", r->non_monotone_at, 9);
    if (r->recrosses) {
      ddp_json_begin_object(j, "recross");
      json_point(j, &r->recross);
      ddp_json_end_object(j);
    }
  }
  ddp_json_int(j, "simulations", r->simulations);
  ddp_json_begin_array(j, "grid");
  for (guint i = 0; i < r->grid->len; i++) {
    const DdpSolvePoint *p = &g_array_index(r->grid, DdpSolvePoint, i);
    ddp_json_begin_object(j, NULL);
    ddp_json_double(j, "value", p->value, 9);
    ddp_json_double(j, "efficiency", p->efficiency, 6);
    ddp_json_double(j, "iteration_ms", p->iteration_ms, 6);
    ddp_json_double(j, "exposed_comm_ms", p->exposed_comm_ms, 6);
    ddp_json_string(j, "limiting_term", ddp_limit_name(p->limit));
    ddp_json_end_object(j);
  }
  ddp_json_end_array(j);
  ddp_json_end_object(j);
  return ddp_json_free_to_string(j);
}

static void
deadline_point_text(GString *out, const char *label, const DdpDeadlinePoint *p, gboolean priced)
{
  g_autofree char *hours = ddp_cost_format_hours(p->train_hours);
  g_string_append_printf(out, "  %-8s %" G_GUINT64_FORMAT " GPUs (%" G_GUINT64_FORMAT " nodes): %.1f samples/s, trains in %s, "
                         "%s %.2f%s\n", label, p->gpus, p->nodes, p->samples_per_s, hours,
                         priced ? "costing" : "using", p->train_cost, priced ? "" : " GPU-hours");
}

static char *
deadline_text(const DdpScenario *s, const DdpCost *cost, const DdpDeadlineOptions *o, const DdpDeadlineResult *r)
{
  GString *out = g_string_new(NULL);
  gboolean priced = cost->price_per_gpu_hour > 0;
  g_string_append_printf(out, "%s on %s, ", s->model->name, s->cluster->name);
  if (o->global_batch > 0)
    g_string_append_printf(out, "global batch %.15g", o->global_batch);
  else
    g_string_append_printf(out, "batch %.15g/GPU", s->setup.batch);
  g_string_append_printf(out, ", %s, training %.6g samples", ddp_setup_precision_label(&s->setup), cost->train_samples);
  if (priced)
    g_string_append_printf(out, " at %g per GPU-hour\n", cost->price_per_gpu_hour);
  else
    g_string_append(out, " (no price: cost in GPU-hours)\n");
  g_string_append(out, "question: ");
  if (o->deadline_hours > 0)
    g_string_append_printf(out, "the cheapest GPU count training within %g hours", o->deadline_hours);
  else
    g_string_append(out, "the fastest GPU count");
  if (o->budget > 0)
    g_string_append_printf(out, "%s costing at most %g%s", o->deadline_hours > 0 ? " and" : "", o->budget,
                           priced ? "" : " GPU-hours");
  g_string_append_printf(out, " (%g to %g GPUs)\n\n", r->min, r->max);
  if (r->status == DDP_DEADLINE_FOUND) {
    g_string_append_printf(out, "answer   %" G_GUINT64_FORMAT " GPUs\n", r->answer.gpus);
    deadline_point_text(out, "there", &r->answer, priced);
  } else {
    g_string_append(out, "answer   unreachable: no GPU count in the range meets it\n");
    deadline_point_text(out, o->deadline_hours > 0 ? "fastest" : "cheapest", &r->answer, priced);
  }
  if (r->has_neighbour)
    deadline_point_text(out, o->deadline_hours > 0 ? "fewer" : "more", &r->neighbour, priced);
  g_string_append_printf(out, "  %-8s %u simulations: %u-point grid, then bisection\n", "search", r->simulations, r->grid->len);
  return g_string_free(out, FALSE);
}

static void
deadline_point_json(DdpJson *j, const char *key, const DdpDeadlinePoint *p)
{
  ddp_json_begin_object(j, key);
  ddp_json_int(j, "gpus", (gint64)p->gpus);
  ddp_json_int(j, "nodes", (gint64)p->nodes);
  ddp_json_bool(j, "feasible", p->feasible);
  ddp_json_bool(j, "fits", p->fits);
  ddp_json_double(j, "iteration_ms", p->iteration_ms, 6);
  ddp_json_double(j, "samples_per_s", p->samples_per_s, 3);
  ddp_json_double(j, "train_hours", p->train_hours, 6);
  ddp_json_double(j, "train_cost", p->train_cost, 2);
  ddp_json_bool(j, "meets", p->meets);
  ddp_json_end_object(j);
}

static char *
deadline_json(const DdpScenario *s, const DdpCost *cost, const DdpDeadlineOptions *o, const DdpDeadlineResult *r)
{
  DdpJson *j = ddp_json_new();
  ddp_json_begin_object(j, NULL);
  ddp_json_string(j, "model", s->model->name);
  ddp_json_string(j, "cluster", s->cluster->name);
  ddp_json_string(j, "question", "gpus");
  ddp_json_string(j, "objective", o->deadline_hours > 0 ? "cheapest-within-deadline" : "fastest-within-budget");
  if (o->deadline_hours > 0)
    ddp_json_double(j, "deadline_hours", o->deadline_hours, 6);
  if (o->budget > 0)
    ddp_json_double(j, "budget", o->budget, 6);
  ddp_json_double(j, "price_per_gpu_hour", cost->price_per_gpu_hour > 0 ? cost->price_per_gpu_hour : NAN, 6);
  ddp_json_string(j, "cost_unit", cost->price_per_gpu_hour > 0 ? "price" : "gpu-hours");
  ddp_json_double(j, "train_samples", cost->train_samples, 3);
  if (o->global_batch > 0)
    ddp_json_double(j, "global_batch", o->global_batch, 6);
  ddp_json_string(j, "status", r->status == DDP_DEADLINE_FOUND ? "found" : "unreachable");
  deadline_point_json(j, "answer", &r->answer);
  if (r->has_neighbour)
    deadline_point_json(j, "failing_neighbour", &r->neighbour);
  ddp_json_double(j, "min", r->min, 0);
  ddp_json_double(j, "max", r->max, 0);
  ddp_json_int(j, "simulations", r->simulations);
  ddp_json_begin_array(j, "grid");
  for (guint i = 0; i < r->grid->len; i++)
    deadline_point_json(j, NULL, &g_array_index(r->grid, DdpDeadlinePoint, i));
  ddp_json_end_array(j);
  ddp_json_end_object(j);
  return ddp_json_free_to_string(j);
}

static void
show_deadline_progress(guint simulation, guint64 gpus, gpointer data)
{
  (void)simulation;
  g_autofree char *what = g_strdup_printf("gpus %" G_GUINT64_FORMAT, gpus);
  ddp_progress_step(data, what);
}

/* solve --deadline-hours / --budget (deadline.h). */
static int
run_deadline(const SolveOptions *o, const DdpScenario *s, const DdpSolveOptions *solve)
{
  g_autoptr(GError) error = NULL;
  DdpDeadlineOptions options = { .min = solve->min, .max = solve->max, .global_batch = solve->global_batch,
                                 .max_batch = solve->max_batch };
  DdpCost cost;
  if (!ddp_flag_number("deadline-hours", o->deadline_hours, &DDP_RANGE_DEADLINE_HOURS, &options.deadline_hours, &error) ||
      !ddp_flag_number("budget", o->budget, &DDP_RANGE_BUDGET, &options.budget, &error) ||
      !ddp_cost_init(&cost, &o->cost, s, &error))
    return ddp_cmd_fail("solve", error);
  /* a grid and a bisection: the number of simulations is not known in advance */
  DdpProgress *progress = ddp_progress_new("solve", 0, "simulations", STDERR_FILENO);
  options.progress = show_deadline_progress;
  options.progress_data = progress;
  g_autoptr(DdpDeadlineResult) r = ddp_deadline_solve(s, &cost, &options, &error);
  ddp_progress_free(progress);
  if (!r)
    return ddp_cmd_fail("solve", error);
  g_autofree char *text = o->json ? deadline_json(s, &cost, &options, r) : deadline_text(s, &cost, &options, r);
  if (!ddp_cmd_print(text, &error))
    return ddp_cmd_fail("solve", error);
  return DDP_EXIT_OK;
}

static void
show_progress(DdpSolveQuantity q, guint simulation, double value, gpointer data)
{
  (void)simulation;
  g_autofree char *what = g_strdup_printf("%s %g", ddp_solve_quantity_name(q), value);
  ddp_progress_step(data, what);
}

static int
run(int argc, char **argv, SolveOptions *o)
{
  GOptionEntry own[] = {
    { "for", 0, 0, G_OPTION_ARG_STRING, &o->quantity, "What to solve for (see below)", "QUANTITY" },
    { "target-efficiency", 0, 0, G_OPTION_ARG_STRING, &o->target, "Scaling efficiency to reach: 0.9 or 90%", "E" },
    { "min", 0, 0, G_OPTION_ARG_STRING, &o->min, "Least value searched (default per quantity, docs/solve.md)", "X" },
    { "max", 0, 0, G_OPTION_ARG_STRING, &o->max, "Largest value searched", "X" },
    { "tolerance", 0, 0, G_OPTION_ARG_STRING, &o->tolerance, "inter-bandwidth: relative width of the final bracket (default 0.001)", "T" },
    { "min-gain", 0, 0, G_OPTION_ARG_STRING, &o->min_gain, "bucket-cap: least gain over 25 MiB worth recommending (default 0.01 = 1%)", "G" },
    { "global-batch", 0, 0, G_OPTION_ARG_STRING, &o->global_batch, "Strong scaling at this global batch (samples per optimizer step)", "B" },
    { "max-batch", 0, 0, G_OPTION_ARG_STRING, &o->max_batch, "Strong scaling: most samples per GPU per micro-step (default: what fits)", "M" },
    { "deadline-hours", 0, 0, G_OPTION_ARG_STRING, &o->deadline_hours, "gpus: the cheapest count training within H hours (with --train-samples/--train-tokens)", "H" },
    { "budget", 0, 0, G_OPTION_ARG_STRING, &o->budget, "gpus: the fastest count costing at most C (price units; GPU-hours unpriced)", "C" },
    { "json", 0, 0, G_OPTION_ARG_NONE, &o->json, "Print JSON (docs/solve.md)", NULL },
    { NULL, 0, 0, 0, NULL, NULL, NULL },
  };
  g_autofree GOptionEntry *entries = ddp_cost_option_entries(own, &o->cost);
  g_autoptr(GError) error = NULL;
  const char *scenario_path = NULL;
  if (!ddp_cmd_parse("solve", "Inverse questions: the bandwidth, NICs, GPUs, batch, accumulation or bucket cap for a target.",
                     solve_description, entries, &o->cli, &argc, &argv, &scenario_path, &error))
    return ddp_cmd_fail("solve", error);
  DdpSolveOptions options;
  ddp_solve_options_init(&options);
  int q = o->quantity ? ddp_solve_quantity_parse(o->quantity) : -1;
  if (q < 0) {
    static const char *const names[] = { "inter-bandwidth", "nics", "gpus", "batch", "accumulate", "bucket-cap", NULL };
    g_autofree char *hint = o->quantity ? ddp_suggest_text(o->quantity, names) : g_strdup("");
    g_set_error(&error, DDP_CMD_ERROR, 0, "--for: %s%s%s must be one of inter-bandwidth, nics, gpus, batch, accumulate, bucket-cap%s",
                o->quantity ? "\"" : "", o->quantity ? o->quantity : "a quantity", o->quantity ? "\"" : "", hint);
    return ddp_cmd_fail("solve", error);
  }
  options.quantity = (DdpSolveQuantity)q;
  gboolean deadline = o->deadline_hours || o->budget;
  if (deadline && (q != DDP_SOLVE_GPUS || o->target)) {
    g_set_error(&error, DDP_CMD_ERROR, 0, "--%s: %s", o->deadline_hours ? "deadline-hours" : "budget",
                q != DDP_SOLVE_GPUS ? "applies to --for gpus only" : "answers instead of --target-efficiency: give one of them");
    return ddp_cmd_fail("solve", error);
  }
  if (!o->target && q != DDP_SOLVE_BUCKET_CAP && !deadline) {
    g_set_error(&error, DDP_CMD_ERROR, 0, "--target-efficiency: needed for --for %s (e.g. 0.9)", o->quantity);
    return ddp_cmd_fail("solve", error);
  }
  if (o->max_batch && !o->global_batch) {
    g_autofree char *quoted = ddp_range_quote(o->max_batch);
    g_set_error(&error, DDP_CMD_ERROR, 0, "--max-batch: \"%s\" applies to strong scaling only (give --global-batch)", quoted);
    return ddp_cmd_fail("solve", error);
  }
  /* --min and --max are values of the quantity: the range of its own key or flag */
  const DdpRange *range = ddp_solve_quantity_range(options.quantity);
  if (!ddp_flag_fraction("target-efficiency", o->target, &DDP_RANGE_TARGET_EFFICIENCY, &options.target_efficiency, &error) ||
      !ddp_flag_number("min", o->min, range, &options.min, &error) ||
      !ddp_flag_number("max", o->max, range, &options.max, &error) ||
      !ddp_flag_number("tolerance", o->tolerance, &DDP_RANGE_TOLERANCE, &options.tolerance, &error) ||
      !ddp_flag_fraction("min-gain", o->min_gain, &DDP_RANGE_MIN_GAIN, &options.min_gain, &error) ||
      !ddp_flag_number("global-batch", o->global_batch, &DDP_RANGE_GLOBAL_BATCH, &options.global_batch, &error) ||
      !ddp_flag_number("max-batch", o->max_batch, &DDP_RANGE_BATCH, &options.max_batch, &error))
    return ddp_cmd_fail("solve", error);
  g_autoptr(DdpScenario) s = ddp_scenario_load(scenario_path, &o->cli, TRUE, &error);
  if (!s)
    return ddp_cmd_fail("solve", error);
  if (!ddp_cli_check_mode_flags(&o->cli, s->setup.mode, &error))
    return ddp_cmd_fail("solve", error);
  if (deadline)
    return run_deadline(o, s, &options);
  DdpProgress *progress = ddp_progress_new("solve", 0, "simulations", STDERR_FILENO);
  options.progress = show_progress;
  options.progress_data = progress;
  g_autoptr(DdpSolveResult) r = ddp_solve(s, &options, &error);
  ddp_progress_free(progress);
  if (!r)
    return ddp_cmd_fail("solve", error);
  g_autofree char *text = o->json ? solve_json(s, r) : solve_text(s, r);
  if (!ddp_cmd_print(text, &error))
    return ddp_cmd_fail("solve", error);
  return DDP_EXIT_OK;
}

int
ddp_cmd_solve(int argc, char **argv)
{
  SolveOptions options = { 0 };
  int status = run(argc, argv, &options);
  ddp_cli_options_clear(&options.cli);
  ddp_cost_flags_clear(&options.cost);
  char **strings[] = { &options.quantity, &options.target, &options.min, &options.max, &options.tolerance, &options.min_gain,
                       &options.global_batch, &options.max_batch, &options.deadline_hours, &options.budget };
  for (gsize i = 0; i < G_N_ELEMENTS(strings); i++)
    g_free(*strings[i]);
  return status;
}
