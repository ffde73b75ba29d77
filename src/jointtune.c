/* jointtune — the joint search over DDP's knobs (see jointtune.h for the knobs, the objective
 * and the search).  The knobs' PyTorch defaults: bucket_cap_mb 25 and the 1 MiB first bucket
 * (torch/nn/parallel/distributed.py, dist._DEFAULT_FIRST_BUCKET_BYTES), no comm hook,
 * gradient_as_bucket_view=False, no accumulation (one micro-step per optimizer step). */
#include "jointtune.h"

#include "bucket.h"
#include "suggest.h"

#include <math.h>

G_DEFINE_QUARK(ddp-jointtune-error-quark, ddp_jointtune_error)

void
ddp_joint_result_free(DdpJointResult *r)
{
  if (!r)
    return;
  g_free(r->best);
  if (r->points)
    g_array_unref(r->points);
  g_free(r);
}

static guint64
index_of(const DdpJointKnob *knobs, guint n, const guint *choice)
{
  guint64 index = 0;
  for (guint k = 0; k < n; k++)
    index = index * knobs[k].n_values + choice[k];
  return index;
}

void
ddp_joint_choice(const DdpJointKnob *knobs, guint n, guint64 index, guint *choice)
{
  for (guint k = n; k-- > 0;) {
    choice[k] = (guint)(index % knobs[k].n_values);
    index /= knobs[k].n_values;
  }
}

typedef struct {
  const DdpJointKnob *knobs;
  guint n;
  DdpJointEvaluate evaluate;
  gpointer data;
  GHashTable *seen;           /* index (guint64*) → objective (double*) */
  guint64 best_index;
  double best;
} Search;

/* The objective of @choice, evaluated once; the best point so far follows (ties: lower index, so
 * the answer does not depend on the order points were visited in). */
static gboolean
visit(Search *s, const guint *choice, double *objective, GError **error)
{
  guint64 index = index_of(s->knobs, s->n, choice);
  double *known = g_hash_table_lookup(s->seen, &index);
  if (known) {
    if (objective)
      *objective = *known;
    return TRUE;
  }
  double value;
  if (!s->evaluate(choice, &value, s->data, error))
    return FALSE;
  guint64 *key = g_new(guint64, 1);
  double *stored = g_new(double, 1);
  *key = index, *stored = value;
  g_hash_table_insert(s->seen, key, stored);
  if (value < s->best || (value == s->best && isfinite(value) && index < s->best_index))
    s->best = value, s->best_index = index;
  if (objective)
    *objective = value;
  return TRUE;
}

static int
compare_points(gconstpointer a, gconstpointer b)
{
  guint64 x = ((const DdpJointPoint *)a)->index, y = ((const DdpJointPoint *)b)->index;
  return x < y ? -1 : x > y;
}

/* Every one- and two-knob change from the defaults. */
static gboolean
pairs(Search *s, const guint *defaults, GError **error)
{
  g_autofree guint *choice = g_memdup2(defaults, s->n * sizeof *choice);
  for (guint a = 0; a < s->n; a++)
    for (guint va = 0; va < s->knobs[a].n_values; va++) {
      choice[a] = va;
      if (!visit(s, choice, NULL, error))
        return FALSE;
      for (guint b = a + 1; b < s->n; b++) {
        for (guint vb = 0; vb < s->knobs[b].n_values; vb++) {
          choice[b] = vb;
          if (!visit(s, choice, NULL, error))
            return FALSE;
        }
        choice[b] = defaults[b];
      }
      choice[a] = defaults[a];
    }
  return TRUE;
}

/* Coordinate descent from the best point so far, until a whole pass changes nothing. */
static gboolean
descend(Search *s, GError **error)
{
  g_autofree guint *choice = g_new(guint, s->n);
  for (gboolean moved = TRUE; moved;) {
    moved = FALSE;
    for (guint k = 0; k < s->n; k++) {
      guint64 before = s->best_index;
      ddp_joint_choice(s->knobs, s->n, s->best_index, choice);
      for (guint v = 0; v < s->knobs[k].n_values; v++) {
        choice[k] = v;
        if (!visit(s, choice, NULL, error))
          return FALSE;
      }
      moved |= s->best_index != before;
    }
  }
  return TRUE;
}

/**
 * ddp_joint_search:
 * See jointtune.h.  @evaluate is called once per distinct point, in a deterministic order.
 */
DdpJointResult *
ddp_joint_search(const DdpJointKnob *knobs, guint n, guint64 exhaustive_limit, DdpJointEvaluate evaluate, gpointer data,
                 GError **error)
{
  g_return_val_if_fail(n > 0, NULL);
  g_autoptr(DdpJointResult) r = g_new0(DdpJointResult, 1);
  r->n_knobs = n;
  r->space = 1;
  for (guint k = 0; k < n; k++) {
    g_assert(knobs[k].n_values > 0 && knobs[k].default_index < knobs[k].n_values);
    r->space = r->space > G_MAXUINT64 / knobs[k].n_values ? G_MAXUINT64 : r->space * knobs[k].n_values;
  }
  g_autoptr(GHashTable) seen = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, g_free);
  Search s = { knobs, n, evaluate, data, seen, 0, INFINITY };
  g_autofree guint *defaults = g_new(guint, n);
  for (guint k = 0; k < n; k++)
    defaults[k] = knobs[k].default_index;
  if (!visit(&s, defaults, &r->default_objective, error))
    return NULL;
  if (!isfinite(r->default_objective)) {
    g_set_error(error, DDP_JOINTTUNE_ERROR, DDP_JOINTTUNE_ERROR_INVALID,
                "PyTorch's defaults do not fit in GPU memory: nothing to compare the knobs with");
    return NULL;
  }
  r->exhaustive = r->space <= exhaustive_limit;
  g_autofree guint *choice = g_new(guint, n);
  if (r->exhaustive) {
    for (guint64 i = 0; i < r->space; i++) {
      ddp_joint_choice(knobs, n, i, choice);
      if (!visit(&s, choice, NULL, error))
        return NULL;
    }
  } else if (!pairs(&s, defaults, error) || !descend(&s, error)) {
    return NULL;
  }
  r->best = g_new(guint, n);
  ddp_joint_choice(knobs, n, s.best_index, r->best);
  r->best_objective = s.best;
  r->gain = 1 - r->best_objective / r->default_objective;
  r->points = g_array_sized_new(FALSE, FALSE, sizeof(DdpJointPoint), g_hash_table_size(seen));
  GHashTableIter it;
  gpointer key, value;
  g_hash_table_iter_init(&it, seen);
  while (g_hash_table_iter_next(&it, &key, &value)) {
    DdpJointPoint p = { *(guint64 *)key, *(double *)value };
    g_array_append_val(r->points, p);
  }
  g_array_sort(r->points, compare_points);   /* hash order never shows */
  return g_steal_pointer(&r);
}

/* ---- DDP's knobs ------------------------------------------------------------------------- */

static const char *const knob_names[DDP_KNOB_COUNT + 1] = {
  "bucket-cap", "accumulate", "comm-hook", "gradient-as-bucket-view", "first-bucket", NULL,
};

const char *
ddp_knob_name(DdpKnobKind k)
{
  g_return_val_if_fail(k < DDP_KNOB_COUNT, NULL);
  return knob_names[k];
}

int
ddp_knob_parse(const char *name)
{
  for (int k = 0; k < DDP_KNOB_COUNT; k++)
    if (g_strcmp0(name, knob_names[k]) == 0)
      return k;
  return -1;
}

struct _DdpJointSpace {
  guint n;
  DdpKnobKind kinds[DDP_KNOB_COUNT];
  GArray *values[DDP_KNOB_COUNT];   /* of double */
  DdpJointKnob knobs[DDP_KNOB_COUNT];
};

void
ddp_joint_space_free(DdpJointSpace *space)
{
  if (!space)
    return;
  for (guint k = 0; k < space->n; k++)
    g_array_unref(space->values[k]);
  g_free(space);
}

static GArray *
values_of(const double *v, guint n)
{
  GArray *a = g_array_new(FALSE, FALSE, sizeof(double));
  g_array_append_vals(a, v, n);
  return a;
}

static guint
index_of_value(const GArray *values, double v)
{
  for (guint i = 0; i < values->len; i++)
    if (g_array_index(values, double, i) == v)
      return i;
  g_assert_not_reached();
}

/**
 * ddp_joint_space_new:
 * See jointtune.h.  Returns: (transfer full) the space, or NULL with @error.
 */
DdpJointSpace *
ddp_joint_space_new(const char *list, const GArray *caps, const GArray *first_mb, GError **error)
{
  g_autoptr(DdpJointSpace) space = g_new0(DdpJointSpace, 1);
  g_auto(GStrv) names = g_strsplit(list, ",", -1);
  for (guint i = 0; names[i]; i++) {
    const char *name = g_strstrip(names[i]);
    int k = ddp_knob_parse(name);
    if (k < 0) {
      g_autofree char *hint = ddp_suggest_text(name, knob_names);
      g_set_error(error, DDP_JOINTTUNE_ERROR, DDP_JOINTTUNE_ERROR_INVALID,
                  "--knobs: \"%s\" is not a knob%s: bucket-cap, accumulate, comm-hook, gradient-as-bucket-view, first-bucket",
                  name, hint);
      return NULL;
    }
    for (guint j = 0; j < space->n; j++)
      if (space->kinds[j] == (DdpKnobKind)k) {
        g_set_error(error, DDP_JOINTTUNE_ERROR, DDP_JOINTTUNE_ERROR_INVALID, "--knobs: \"%s\" is named twice", name);
        return NULL;
      }
    guint at = space->n++;
    space->kinds[at] = (DdpKnobKind)k;
    double dflt = 0;
    switch ((DdpKnobKind)k) {
    case DDP_KNOB_BUCKET_CAP:
      space->values[at] = values_of((const double *)(void *)caps->data, caps->len);
      dflt = DDP_DEFAULT_BUCKET_CAP_MB;
      break;
    case DDP_KNOB_ACCUMULATE: {
      static const double steps[] = { 1, 2, 4, 8 };
      space->values[at] = values_of(steps, G_N_ELEMENTS(steps));
      dflt = 1;
      break;
    }
    case DDP_KNOB_COMM_HOOK: {
      static const double hooks[] = { DDP_HOOK_NONE, DDP_HOOK_FP16, DDP_HOOK_BF16 };
      space->values[at] = values_of(hooks, G_N_ELEMENTS(hooks));
      dflt = DDP_HOOK_NONE;
      break;
    }
    case DDP_KNOB_GRADIENT_AS_BUCKET_VIEW: {
      static const double flags[] = { 0, 1 };
      space->values[at] = values_of(flags, G_N_ELEMENTS(flags));
      dflt = 0;
      break;
    }
    case DDP_KNOB_FIRST_BUCKET:
      space->values[at] = values_of((const double *)(void *)first_mb->data, first_mb->len);
      dflt = 1;
      break;
    default: g_assert_not_reached();
    }
    space->knobs[at] = (DdpJointKnob){ knob_names[k], space->values[at]->len, index_of_value(space->values[at], dflt) };
  }
  if (space->n == 0) {
    g_set_error(error, DDP_JOINTTUNE_ERROR, DDP_JOINTTUNE_ERROR_INVALID, "--knobs: name at least one knob");
    return NULL;
  }
  return g_steal_pointer(&space);
}

guint
ddp_joint_space_n_knobs(const DdpJointSpace *space)
{
  return space->n;
}

const DdpJointKnob *
ddp_joint_space_knobs(const DdpJointSpace *space)
{
  return space->knobs;
}

DdpKnobKind
ddp_joint_space_kind(const DdpJointSpace *space, guint knob)
{
  return space->kinds[knob];
}

double
ddp_joint_space_value(const DdpJointSpace *space, guint knob, guint index)
{
  return g_array_index(space->values[knob], double, index);
}

char *
ddp_joint_space_format(const DdpJointSpace *space, guint knob, guint index)
{
  double v = ddp_joint_space_value(space, knob, index);
  switch (space->kinds[knob]) {
  case DDP_KNOB_COMM_HOOK: return g_strdup(ddp_comm_hook_name((DdpCommHook)v));
  case DDP_KNOB_GRADIENT_AS_BUCKET_VIEW: return g_strdup(v != 0 ? "true" : "false");
  default: return g_strdup_printf("%g", v);
  }
}

/**
 * ddp_joint_space_apply:
 * Sets *@at to @base with the knobs of @choice applied (a shallow copy: model, cluster and
 * stragglers stay @base's).
 */
void
ddp_joint_space_apply(const DdpJointSpace *space, const guint *choice, const DdpScenario *base, DdpScenario *at)
{
  *at = *base;
  for (guint k = 0; k < space->n; k++) {
    double v = ddp_joint_space_value(space, k, choice[k]);
    switch (space->kinds[k]) {
    case DDP_KNOB_BUCKET_CAP: ddp_bucket_options_try_cap(&at->setup.buckets, v); break;
    case DDP_KNOB_ACCUMULATE: at->setup.accumulate = (guint)v; break;
    case DDP_KNOB_COMM_HOOK: at->setup.comm_hook = (DdpCommHook)v; break;
    case DDP_KNOB_GRADIENT_AS_BUCKET_VIEW: at->setup.gradient_as_bucket_view = v != 0; break;
    case DDP_KNOB_FIRST_BUCKET: at->setup.buckets.first_bucket_bytes = (guint64)(v * DDP_MIB); break;
    default: g_assert_not_reached();
    }
  }
}
