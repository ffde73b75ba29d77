/* bucket — PyTorch DDP's gradient bucket assignment (see bucket.h), reproduced rule for rule from
 * PyTorch 2.x (docs/model.md §1.1–1.3, §5.1–5.3):
 *   torch/csrc/distributed/c10d/reducer.cpp   compute_bucket_assignment_by_size,
 *                                             Reducer::rebuild_buckets, Reducer::initialize_buckets
 *   torch/nn/parallel/distributed.py          DistributedDataParallel.__init__ (bucket_cap_mb),
 *                                             _build_params_for_reducer, _ddp_init_helper
 *
 * The assignment walks a list of parameters once.  Each dtype (PyTorch: each (dtype, device) key;
 * one device per rank here) has its own open bucket and its own position in the list of size
 * limits: the first limit applies to the first bucket *of each dtype*, then the position advances
 * once per closed bucket and stays on the last limit.  A parameter is added first and the bucket
 * closed when its size is >= the limit, so a bucket overshoots its limit by up to one tensor and a
 * tensor never spans buckets.  A parameter expecting sparse gradients gets a bucket of its own and
 * touches no dtype state.  The open buckets left at the end are appended, one per dtype.
 *
 * Two layouts come out of it:
 *   initial (construction, iteration 0): the list is model.parameters() order (registration order
 *     after DDP's de-duplication, which the model file already is); the buckets are sorted by the
 *     smallest parameter index they hold and the list reversed (`list(reversed(bucket_indices))`),
 *     so bucket 0 holds the last-registered parameters, whose gradients are expected first.
 *   rebuilt (from the forward of iteration 1 on): the list is the order gradients became ready
 *     (model->ready_order), limits [first_bucket_bytes, cap], no sort.
 *
 * Order of the parameters inside a bucket: the order the assignment appended them, which is the
 * order Reducer::initialize_buckets lays them out in the flat bucket tensor.  Initial buckets hold
 * their parameters in ascending registration order (the reversal only reorders the buckets);
 * rebuilt buckets in gradient-ready order; with DDP_SET_LAST_BUCKET_CAP=1 in reverse ready order,
 * because PyTorch reverses the parameter list before the assignment but afterwards reverses only
 * the list of buckets, not their members.
 *
 * Leftover buckets.  PyTorch appends the open buckets left at the end by iterating its
 * std::unordered_map<BucketKey, BucketAccumulator> — an order the C++ standard leaves open but
 * libstdc++ (the compiler of every PyTorch Linux build) fixes, and which we reproduce:
 *   - the key (dtype, device) hashes as c10::get_hash(type, device) (c10/util/hash.h): tuple_hash
 *     folds the last element first, hash_combine(seed = H(device), value = H(type)) =
 *     seed ^ (value + 0x9e3779b9 + (seed << 6) + (seed >> 2)), with H(type) the ScalarType code
 *     (Half 5, Float 6, Double 7, BFloat16 15) and H(device) = type << 16 | (unsigned) index
 *     (c10/core/Device.h: cuda:0 = 0x10000; CPU index -1 = 0xFF while DeviceIndex was int8_t,
 *     0xFFFF since it became int16_t in 2.3);
 *   - a map's first insertion allocates 13 buckets (_Prime_rehash_policy: at least 11, next prime
 *     13), and four keys never trigger a rehash;
 *   - a node inserted into an empty bucket goes to the front of the singly linked list (into a
 *     non-empty one it would go just before that bucket's first node: _M_insert_bucket_begin);
 *     iteration walks the list from the front.
 * A key enters the map at its first dense tensor in the walk.  fp16, fp32, fp64 and bf16 fall into
 * four different buckets for cuda:0 (1, 2, 3, 11) and for the CPU (0, 12, 11, 3 with an 8-bit
 * index; 1, 0, 12, 4 with a 16-bit one) — ddp_bucket_map_slot(), asserted — so the leftovers
 * come out in REVERSE order of each dtype's first appearance.  Checked against real DDP
 * (tests/real_ddp.py, mixed fp32/fp64 at caps 10 and 50 MiB).  This only matters for the rebuilt
 * layout: the initial one is sorted afterwards.
 *
 * Versions (options->torch_version; distributed.py _ddp_init_helper, reducer.cpp):
 *   - before 1.6: no rebuild — the construction-time layout stays (the rebuild in the order
 *     gradients became ready, Reducer::rebuild_buckets, arrived with pytorch/pytorch#35137, May
 *     2020, between 1.5 and 1.6);
 *   - before 1.12: the construction-time limits were always [first_bucket_bytes, cap];
 *   - 1.12 and later: [sys.maxsize] (one bucket per dtype) unless find_unused_parameters without
 *     static_graph, which takes [first, cap] — in 1.13 whatever the cap (checked with real DDP);
 *   - 2.4 and later (pytorch/pytorch#121640, `bucket_bytes_cap_default`): a bucket_cap_mb passed
 *     to DDP (options->bucket_cap_given) is the first bucket too — the Reducer's first_bucket_bytes
 *     is the cap, so the rebuilt layout has no 1 MiB bucket — and for find_unused_parameters the
 *     construction limits are [cap]; without the argument, [first, cap] as before (read in 2.11's
 *     distributed.py; a real 2.11 DDP run rebuilt 12 × 1 MiB weights at cap 4 into 4 MiB buckets
 *     from the first).  A 2.2 source still had the 1.13 rule; 2.3 was not read.
 * The 1.12 boundary follows the PyTorch issue the code comment cites (#73732, spring 2022); it
 * was not checked against a 1.11 install.
 *
 * Cost: O(P log B) for P parameters and B buckets (the sort), trivial next to the simulation.
 */
#include "bucket.h"

/* sys.maxsize on 64-bit Python: the single "unlimited" limit of the default construction. */
#define LIMIT_UNLIMITED ((guint64)G_MAXINT64)

struct _DdpBucketLayout {
  DdpBucket *buckets;   /* [n_buckets], Reducer order */
  guint n_buckets;
  guint n_params;       /* of the model it was built for */
  guint *members;       /* [n_params]: every bucket's params, bucket after bucket; buckets[b].params
                         * points into it */
  guint *bucket_of;     /* [n_params] */
};

/* One bucket while the assignment runs. */
typedef struct {
  GArray *params;       /* of guint, in the order appended */
  guint min_param;      /* the smallest index it holds: the construction-time sort key */
} Pending;

/* The open bucket and the limit position of one dtype. */
typedef struct {
  GArray *open;         /* of guint; NULL until the dtype first appears */
  guint64 size;
  guint limit;          /* index into the limits */
} Accumulator;

/**
 * ddp_bucket_options_init:
 * @options: (out caller-allocates): filled with PyTorch's defaults: bucket_cap_mb 25 (MiB), first
 *   bucket 1 MiB (dist._DEFAULT_FIRST_BUCKET_BYTES), find_unused_parameters, static_graph,
 *   cpu_device and last_bucket_cap off, torch_version DDP_TORCH_VERSION_DEFAULT (the rules of 2.4 and later).
 */
void
ddp_bucket_options_init(DdpBucketOptions *options)
{
  *options = (DdpBucketOptions){
    .bucket_cap_mb = DDP_DEFAULT_BUCKET_CAP_MB,
    .first_bucket_bytes = DDP_DEFAULT_FIRST_BUCKET_BYTES,
    .torch_version = DDP_TORCH_VERSION_DEFAULT,
  };
}

/**
 * ddp_torch_version_parse:
 * @text: "X.Y", e.g. "1.13" or "2.4"
 * @version: (out): 100·X + Y
 *
 * Returns: TRUE for 1.4 ≤ X.Y ≤ 2.99 (the releases whose DDP this models: the C++ Reducer with
 *   first-bucket limits, as read in its 1.4 source), FALSE otherwise.
 */
gboolean
ddp_torch_version_parse(const char *text, guint *version)
{
  g_auto(GStrv) parts = g_strsplit(text, ".", -1);
  guint64 major, minor;
  if (g_strv_length(parts) != 2 || !g_ascii_string_to_unsigned(parts[0], 10, 1, 2, &major, NULL) ||
      !g_ascii_string_to_unsigned(parts[1], 10, 0, 99, &minor, NULL) || (major == 1 && minor < 4))
    return FALSE;
  *version = (guint)(100 * major + minor);
  return TRUE;
}

/* `int(bucket_cap_mb * 1024 * 1024)` in distributed.py: the same double products in the same
 * order, truncated toward zero, so a fractional cap such as 0.1 MiB gives 104857 bytes. */
static guint64
cap_bytes(const DdpBucketOptions *options)
{
  double bytes = options->bucket_cap_mb * 1024 * 1024;
  g_assert(bytes >= 0 && bytes < (double)G_MAXINT64);
  return (guint64)bytes;
}

static guint64
param_bytes(const DdpParam *param)
{
  return (guint64)param->numel * ddp_dtype_size(param->dtype);
}

static void
pending_clear(gpointer data)
{
  Pending *p = data;
  if (p->params)
    g_array_free(p->params, TRUE);
}

static void
push_bucket(GArray *result, GArray *params)
{
  Pending p = { params, G_MAXUINT };
  for (guint i = 0; i < params->len; i++)
    p.min_param = MIN(p.min_param, g_array_index(params, guint, i));
  g_array_append_val(result, p);
}

static int
compare_min_param(gconstpointer a, gconstpointer b)
{
  guint x = ((const Pending *)a)->min_param, y = ((const Pending *)b)->min_param;
  return (x > y) - (x < y);
}

/* c10::get_hash(ScalarType, Device) of the map key (note at the top), 64-bit size_t. */
static guint64
bucket_key_hash(const DdpBucketOptions *options, DdpDtype dtype)
{
  static const guint64 scalar_type[DDP_DTYPE_COUNT] = {
    [DDP_DTYPE_FP32] = 6, [DDP_DTYPE_FP16] = 5, [DDP_DTYPE_BF16] = 15, [DDP_DTYPE_FP64] = 7,
  };
  guint64 device = !options->cpu_device ? (guint64)1 << 16               /* CUDA = 1, index 0 */
                   : options->torch_version >= 203 ? 0xFFFF : 0xFF;       /* CPU = 0, index -1 */
  return device ^ (scalar_type[dtype] + 0x9e3779b9 + (device << 6) + (device >> 2));
}

/**
 * ddp_bucket_map_slot:
 * @dtype: a dtype
 *
 * The libstdc++ bucket (of 13) that PyTorch's std::unordered_map puts the key (@dtype, device)
 * in (note at the top of bucket.c).  The leftover order below rests on these being distinct.
 */
guint
ddp_bucket_map_slot(const DdpBucketOptions *options, DdpDtype dtype)
{
  g_assert(dtype < DDP_DTYPE_COUNT);
  return (guint)(bucket_key_hash(options, dtype) % 13);
}

/* The order std::unordered_map iterates the keys inserted in @inserted order.  Each key goes to
 * an empty bucket (asserted), so each is linked at the front of the list: the reverse order. */
static void
leftover_order(const DdpBucketOptions *options, const DdpDtype *inserted, guint n, DdpDtype *out)
{
  for (guint k = 0; k < n; k++) {
    for (guint i = 0; i < k; i++)
      g_assert(ddp_bucket_map_slot(options, inserted[i]) != ddp_bucket_map_slot(options, inserted[k]));
    out[n - 1 - k] = inserted[k];
  }
}

/* compute_bucket_assignment_by_size over model params in @order (n_params indices).  @sort: the
 * construction-time sort by smallest index (PyTorch sorts when no tensor_indices are given, i.e.
 * at construction).  Returns a GArray of Pending, in assignment order (or sorted). */
static GArray *
assign_by_size(const DdpModel *model, const DdpBucketOptions *options, const guint *order, const guint64 *limits,
               guint n_limits, gboolean sort)
{
  g_assert(n_limits >= 1);
  GArray *result = g_array_new(FALSE, FALSE, sizeof(Pending));
  g_array_set_clear_func(result, pending_clear);
  Accumulator acc[DDP_DTYPE_COUNT] = { { 0 } };
  DdpDtype first_seen[DDP_DTYPE_COUNT];
  guint n_seen = 0;

  /* Buckets hold walk positions i until the end, so that the construction-time sort is by the
   * smallest position in the walk, i.e. in registration (model.parameters()) order. */
  for (guint i = 0; i < model->n_params; i++) {
    guint index = order[i];
    const DdpParam *param = &model->params[index];
    if (param->sparse) {
      GArray *alone = g_array_sized_new(FALSE, FALSE, sizeof(guint), 1);
      g_array_append_val(alone, i);
      push_bucket(result, alone);
      continue;
    }
    g_assert(param->dtype < DDP_DTYPE_COUNT);
    Accumulator *a = &acc[param->dtype];
    if (!a->open) {
      a->open = g_array_new(FALSE, FALSE, sizeof(guint));
      first_seen[n_seen++] = param->dtype;
    }
    g_array_append_val(a->open, i);
    a->size += param_bytes(param);
    if (a->size >= limits[a->limit]) {
      push_bucket(result, a->open);
      a->open = g_array_new(FALSE, FALSE, sizeof(guint));
      a->size = 0;
      if (a->limit + 1 < n_limits)
        a->limit++;
    }
  }
  /* leftovers, in libstdc++ unordered_map order (see the note at the top) */
  DdpDtype map_order[DDP_DTYPE_COUNT];
  leftover_order(options, first_seen, n_seen, map_order);
  for (guint k = 0; k < n_seen; k++) {
    Accumulator *a = &acc[map_order[k]];
    if (a->open->len > 0)
      push_bucket(result, a->open);
    else
      g_array_free(a->open, TRUE);
  }
  if (sort)
    g_array_sort(result, compare_min_param);   /* minima are distinct: buckets are disjoint */
  for (guint b = 0; b < result->len; b++) {
    GArray *members = g_array_index(result, Pending, b).params;
    for (guint k = 0; k < members->len; k++)
      g_array_index(members, guint, k) = order[g_array_index(members, guint, k)];
  }
  return result;
}

static void
reverse_guints(guint *v, guint n)
{
  for (guint i = 0; i < n / 2; i++) {
    guint t = v[i];
    v[i] = v[n - 1 - i];
    v[n - 1 - i] = t;
  }
}

/* Takes @pending (Pending, consumed) in the given order, or reversed, and packs it. */
static DdpBucketLayout *
layout_from_pending(const DdpModel *model, GArray *pending, gboolean reverse)
{
  DdpBucketLayout *layout = g_new0(DdpBucketLayout, 1);
  layout->n_buckets = pending->len;
  layout->n_params = model->n_params;
  layout->buckets = g_new0(DdpBucket, pending->len);
  layout->members = g_new(guint, model->n_params);
  layout->bucket_of = g_new(guint, model->n_params);
  guint filled = 0;
  for (guint b = 0; b < pending->len; b++) {
    const Pending *p = &g_array_index(pending, Pending, reverse ? pending->len - 1 - b : b);
    DdpBucket *bucket = &layout->buckets[b];
    g_assert(filled + p->params->len <= model->n_params);
    bucket->index = b;
    bucket->params = layout->members + filled;
    bucket->n_params = p->params->len;
    bucket->dtype = model->params[g_array_index(p->params, guint, 0)].dtype;
    for (guint i = 0; i < p->params->len; i++) {
      guint param = g_array_index(p->params, guint, i);
      bucket->params[i] = param;
      bucket->bytes += param_bytes(&model->params[param]);
      layout->bucket_of[param] = b;
    }
    filled += p->params->len;
  }
  g_assert(filled == model->n_params);
  g_array_free(pending, TRUE);
  return layout;
}

/* The construction-time size limits of _ddp_init_helper.  Returns how many it wrote. */
static guint
initial_limits(const DdpBucketOptions *options, guint64 limits[2])
{
  guint64 cap = cap_bytes(options);
  if (options->torch_version < 112) {
    /* before 1.12: always [dist._DEFAULT_FIRST_BUCKET_BYTES, bucket_bytes_cap] */
    limits[0] = options->first_bucket_bytes;
    limits[1] = cap;
    return 2;
  }
  if (options->static_graph || !options->find_unused_parameters) {
    /* bucket_size_limits = [sys.maxsize]: one bucket per dtype, no overlap in iteration 0 */
    limits[0] = LIMIT_UNLIMITED;
    return 1;
  }
  if (!options->bucket_cap_given || options->torch_version < DDP_TORCH_VERSION_CAP_IS_FIRST) {
    /* bucket_bytes_cap_default (2.4 on), or any cap before: [_DEFAULT_FIRST_BUCKET_BYTES, cap] */
    limits[0] = options->first_bucket_bytes;
    limits[1] = cap;
    return 2;
  }
  limits[0] = cap;
  return 1;
}

/**
 * ddp_bucket_layout_initial:
 * @model: the model; its params in registration order
 * @options: DDP's bucket options
 *
 * The layout DDP's constructor builds, used by iteration 0: buckets in Reducer order (bucket 0 is
 * launched first and holds the last-registered parameters), parameters inside each bucket in
 * ascending registration order.  DDP_SET_LAST_BUCKET_CAP (options->last_bucket_cap) plays no part
 * here: PyTorch reads it in rebuild_buckets only.
 *
 * Returns: (transfer full): free with ddp_bucket_layout_free().
 */
DdpBucketLayout *
ddp_bucket_layout_initial(const DdpModel *model, const DdpBucketOptions *options)
{
  g_assert(model->n_params > 0);
  guint64 limits[2];
  guint n_limits = initial_limits(options, limits);
  GArray *pending = assign_by_size(model, options, model->registration_order, limits, n_limits, TRUE);
  return layout_from_pending(model, pending, TRUE);
}

/**
 * ddp_bucket_options_first_bytes:
 * See bucket.h.
 */
guint64
ddp_bucket_options_first_bytes(const DdpBucketOptions *options)
{
  return options->bucket_cap_given && options->torch_version >= DDP_TORCH_VERSION_CAP_IS_FIRST ? cap_bytes(options)
                                                                                                : options->first_bucket_bytes;
}

/**
 * ddp_bucket_options_try_cap:
 * See bucket.h.
 */
void
ddp_bucket_options_try_cap(DdpBucketOptions *options, double cap_mb)
{
  options->bucket_cap_mb = cap_mb;
  options->bucket_cap_given = cap_mb != DDP_DEFAULT_BUCKET_CAP_MB;
}

/* Reducer::rebuild_buckets over model->ready_order with limits [first bucket, cap]. */
static DdpBucketLayout *
layout_rebuilt(const DdpModel *model, const DdpBucketOptions *options)
{
  g_assert(model->n_params > 0 && model->ready_order);
  const guint64 limits[2] = { ddp_bucket_options_first_bytes(options), cap_bytes(options) };
  g_autofree guint *order = g_memdup2(model->ready_order, model->n_params * sizeof(guint));
  /* DDP_SET_LAST_BUCKET_CAP=1: assign over the reversed ready order so the small first-limit bucket
   * holds the last-ready gradients, then reverse the list of buckets (not their members) back. */
  if (options->last_bucket_cap)
    reverse_guints(order, model->n_params);
  GArray *pending = assign_by_size(model, options, order, limits, 2, FALSE);
  return layout_from_pending(model, pending, options->last_bucket_cap);
}

/**
 * ddp_bucket_options_rebuild:
 * @options: DDP's bucket options
 *
 * Returns: whether DDP rebuilds its buckets before iteration 1 (or 2 under static_graph):
 *   from 1.6 on, unless find_unused_parameters is set without static_graph.
 */
gboolean
ddp_bucket_options_rebuild(const DdpBucketOptions *options)
{
  return options->torch_version >= 106 && !(options->find_unused_parameters && !options->static_graph);
}

/**
 * ddp_bucket_layout_steady:
 * @model: the model; model->ready_order must be set (the loader always fills it)
 * @options: DDP's bucket options
 *
 * The layout from iteration 1 on.  PyTorch rebuilds buckets once, before the forward of iteration
 * 1, in the order gradients became ready, unless find_unused_parameters is set without
 * static_graph (should_rebuild_buckets() is then false): the initial layout is kept, as it is in
 * every release before 1.6 (no rebuild yet).  Parameters inside a rebuilt bucket are in ready order
 * (reverse ready order with last_bucket_cap).
 *
 * Returns: (transfer full): free with ddp_bucket_layout_free().
 */
DdpBucketLayout *
ddp_bucket_layout_steady(const DdpModel *model, const DdpBucketOptions *options)
{
  if (!ddp_bucket_options_rebuild(options))
    return ddp_bucket_layout_initial(model, options);
  return layout_rebuilt(model, options);
}

/**
 * ddp_bucket_layout_free:
 * @layout: (nullable) (transfer full): a layout; its buckets and their param arrays go with it
 */
void
ddp_bucket_layout_free(DdpBucketLayout *layout)
{
  if (!layout)
    return;
  g_free(layout->buckets);
  g_free(layout->members);
  g_free(layout->bucket_of);
  g_free(layout);
}

/* Number of buckets (≥ 1 for a model with parameters). */
guint
ddp_bucket_layout_count(const DdpBucketLayout *layout)
{
  return layout->n_buckets;
}

/**
 * ddp_bucket_layout_get:
 * @index: < ddp_bucket_layout_count()
 *
 * Returns: (transfer none): bucket @index, owned by @layout (its params array too), valid until
 *   the layout is freed.
 */
const DdpBucket *
ddp_bucket_layout_get(const DdpBucketLayout *layout, guint index)
{
  g_assert(index < layout->n_buckets);
  return &layout->buckets[index];
}

/* Index of the bucket holding model param @param (< model->n_params). */
guint
ddp_bucket_layout_bucket_of(const DdpBucketLayout *layout, guint param)
{
  g_assert(param < layout->n_params);
  return layout->bucket_of[param];
}

/**
 * ddp_bucket_layout_check:
 * @layout: a layout built for @model
 *
 * Invariant checker for tests and assertions: the layout covers @model's params, each in exactly
 * one bucket, bucket_of agrees, each bucket is non-empty, holds one dtype, has bytes = Σ param
 * bytes and index = its position, and a sparse param is alone in its bucket.
 *
 * Returns: TRUE when every invariant holds, FALSE at the first violation.
 */
gboolean
ddp_bucket_layout_check(const DdpBucketLayout *layout, const DdpModel *model)
{
  if (layout->n_params != model->n_params || layout->n_buckets == 0)
    return FALSE;
  g_autofree gboolean *seen = g_new0(gboolean, model->n_params);
  guint covered = 0;
  for (guint b = 0; b < layout->n_buckets; b++) {
    const DdpBucket *bucket = &layout->buckets[b];
    if (bucket->index != b || bucket->n_params == 0)
      return FALSE;
    guint64 bytes = 0;
    for (guint i = 0; i < bucket->n_params; i++) {
      guint param = bucket->params[i];
      if (param >= model->n_params || seen[param] || layout->bucket_of[param] != b)
        return FALSE;
      seen[param] = TRUE;
      const DdpParam *p = &model->params[param];
      if (p->dtype != bucket->dtype || (p->sparse && bucket->n_params != 1))
        return FALSE;
      bytes += param_bytes(p);
    }
    if (bytes != bucket->bytes)
      return FALSE;
    covered += bucket->n_params;
  }
  return covered == model->n_params;
}
