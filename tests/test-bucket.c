/* Tests for PyTorch DDP's bucket assignment (docs/model.md §1.2–1.3): the initial and
 * rebuilt layouts on small hand-built models, each expected layout derived by hand in a comment,
 * and torchvision ResNet-50, whose rebuilt layout at 25 MiB is PyTorch's real one. */
#include "bucket.h"

#include <string.h>

#define MIB DDP_MIB

/* One parameter of a hand-built model. */
typedef struct {
  gint64 numel;
  DdpDtype dtype;
  gboolean sparse;
} Spec;

/* A model with params p0..p(n-1) in registration order; @ready: the ready order (n indices), or
 * NULL for reverse registration order (what the model loader assumes by default). */
static DdpModel *
model_new(const Spec *specs, guint n, const guint *ready)
{
  DdpModel *m = g_new0(DdpModel, 1);
  m->name = g_strdup("test");
  m->n_params = n;
  m->params = g_new0(DdpParam, n);
  m->ready_order = g_new(guint, n);
  m->registration_order = g_new(guint, n);
  for (guint i = 0; i < n; i++) {
    m->registration_order[i] = i;
    m->params[i] = (DdpParam){ .name = g_strdup_printf("p%u", i), .numel = specs[i].numel,
                               .shape = { specs[i].numel }, .ndim = 1, .dtype = specs[i].dtype,
                               .sparse = specs[i].sparse };
    m->ready_order[i] = ready ? ready[i] : n - 1 - i;
  }
  return m;
}

/* "5 | 4 3 2 | 1 0": each bucket's params in the order it holds them, buckets in Reducer order. */
static char *
layout_members(const DdpBucketLayout *layout)
{
  GString *s = g_string_new(NULL);
  for (guint b = 0; b < ddp_bucket_layout_count(layout); b++) {
    const DdpBucket *k = ddp_bucket_layout_get(layout, b);
    if (b > 0)
      g_string_append(s, " |");
    for (guint i = 0; i < k->n_params; i++)
      g_string_append_printf(s, "%s%u", b == 0 && i == 0 ? "" : " ", k->params[i]);
  }
  return g_string_free(s, FALSE);
}

/* "400 1200 800": bucket sizes in bytes, Reducer order. */
static char *
layout_bytes(const DdpBucketLayout *layout)
{
  GString *s = g_string_new(NULL);
  for (guint b = 0; b < ddp_bucket_layout_count(layout); b++)
    g_string_append_printf(s, "%s%" G_GUINT64_FORMAT, b ? " " : "", ddp_bucket_layout_get(layout, b)->bytes);
  return g_string_free(s, FALSE);
}

/* ---- table-driven layouts ---------------------------------------------------------------- */

#define F32(n) { (n), DDP_DTYPE_FP32, FALSE }
#define F16(n) { (n), DDP_DTYPE_FP16, FALSE }
#define SPARSE32(n) { (n), DDP_DTYPE_FP32, TRUE }

/* Six fp32 params of 400 B. */
static const Spec six_400[] = { F32(100), F32(100), F32(100), F32(100), F32(100), F32(100) };
/* Exact hits: p0 4 B, p1 500 B, p2 500 B, p3 100 B. */
static const Spec exact[] = { F32(1), F32(125), F32(125), F32(25) };
/* A tensor larger than the cap: p0 40, p1 40, p2 4000, p3 4000, p4 40, p5 200 B. */
static const Spec large[] = { F32(10), F32(10), F32(1000), F32(1000), F32(10), F32(50) };
/* fp32 (400 B) and fp16 (200 B) interleaved: even indices fp32, odd fp16. */
static const Spec mixed[] = { F32(100), F16(100), F32(100), F16(100), F32(100), F16(100), F32(100), F16(100) };
/* Five fp32 params of 400 B, p2 sparse. */
static const Spec sparse_mid[] = { F32(100), F32(100), SPARSE32(100), F32(100), F32(100) };
/* Five fp32 params of 400 B, p4 (the first ready) sparse. */
static const Spec sparse_first[] = { F32(100), F32(100), F32(100), F32(100), SPARSE32(100) };
/* MiB-scale, fp32: p0 0.5 MiB, p1 0.75 MiB, p2..p4 10 MiB, p5 3 MiB (34.25 MiB in all). */
static const Spec mib[] = { F32(131072), F32(196608), F32(2621440), F32(2621440), F32(2621440), F32(786432) };
/* fp16: p0 2 B, p1 2 B, p2 104856 B, p3 2 B. */
static const Spec tenth_mib[] = { F16(1), F16(1), F16(52428), F16(1) };

/* A branch reordering backward: p1, p0 become ready before p3, p2. */
static const guint ready_branch[] = { 5, 4, 1, 0, 3, 2 };

typedef enum { INITIAL, STEADY } Which;

typedef struct {
  const char *path;
  const Spec *specs;
  guint n;
  const guint *ready;        /* NULL: reverse registration */
  Which which;
  double cap_mb;             /* 0: default 25 */
  guint64 first;             /* 0: default 1 MiB */
  gboolean find_unused, static_graph;
  guint torch;               /* 0: 2.3 — the table's first limits beside a passed cap predate 2.4's
                              * rule (a passed cap is the first bucket too: the 2.4 cases say so) */
  gboolean last_cap;
  const char *members;
  const char *bytes;
} LayoutCase;

/* Caps of 1000 bytes: 1000 / 2^20 is exact in binary, so int(cap_mb * 1024 * 1024) = 1000. */
#define CAP_1000 (1000.0 / 1048576.0)

static const LayoutCase layout_cases[] = {
  /* ready 5..0, limits [100, 1000].  p5: 400 >= 100, close [5]; the limit moves to 1000.
   * p4 400, p3 800, p2 1200 >= 1000: close [4 3 2] (overshoots by 200).  p1 400, p0 800: the
   * leftover [1 0]. */
  { "/bucket/rebuild/overshoot", six_400, 6, NULL, STEADY, CAP_1000, 100, FALSE, FALSE, 0, FALSE,
    "5 | 4 3 2 | 1 0", "400 1200 800" },
  /* ready 3..0, limits [100, 1000].  p3 100 >= 100 closes [3] (>=, not >).  p2 500, p1 1000 >=
   * 1000 closes [2 1].  p0 4: leftover [0]. */
  { "/bucket/rebuild/close-at-equality", exact, 4, NULL, STEADY, CAP_1000, 100, FALSE, FALSE, 0, FALSE,
    "3 | 2 1 | 0", "100 1000 4" },
  /* ready 5..0, limits [100, 1000].  p5 200: [5].  p4 40, p3 4040: [4 3] (the big tensor joins the
   * small one before it).  p2 4000: alone.  p1 40, p0 80: leftover [1 0]. */
  { "/bucket/rebuild/tensor-above-cap", large, 6, NULL, STEADY, CAP_1000, 100, FALSE, FALSE, 0, FALSE,
    "5 | 4 3 | 2 | 1 0", "200 4040 4000 80" },
  /* ready 7..0, limits [300, 1000] per dtype.  p7 fp16 200 < 300.  p6 fp32 400 >= 300: [6], fp32
   * moves to 1000.  p5 fp16: 400 >= 300 (fp16 still on its own first limit): [7 5].  p4 fp32
   * 400, p3 fp16 200, p2 fp32 800, p1 fp16 400, p0 fp32 1200 >= 1000: [4 2 0].  Leftover: fp16
   * [3 1] (fp32's is empty). */
  { "/bucket/rebuild/per-dtype", mixed, 8, NULL, STEADY, CAP_1000, 300, FALSE, FALSE, 0, FALSE,
    "6 | 7 5 | 4 2 0 | 3 1", "400 400 1200 400" },
  /* ready 7..0, limits [100, 10000] per dtype.  p7 fp16 200: [7]; p6 fp32 400: [6]; then nothing
   * reaches 10000: leftovers fp16 [5 3 1] 600 and fp32 [4 2 0] 1200.  They come out of PyTorch's
   * unordered_map in reverse order of first appearance (fp16 first seen at p7, fp32 at p6): fp32,
   * then fp16. */
  { "/bucket/rebuild/leftovers-reverse-first-appearance", mixed, 8, NULL, STEADY, 10000.0 / 1048576.0, 100, FALSE,
    FALSE, 0, FALSE, "7 | 6 | 4 2 0 | 5 3 1", "200 400 1200 600" },
  /* ready 4..0, limits [100, 1000].  p4: [4].  p3 400 open.  p2 sparse: its own bucket at once,
   * fp32 state untouched.  p1 800, p0 1200: [3 1 0]. */
  { "/bucket/rebuild/sparse-alone", sparse_mid, 5, NULL, STEADY, CAP_1000, 100, FALSE, FALSE, 0, FALSE,
    "4 | 2 | 3 1 0", "400 400 1200" },
  /* ready 4..0.  p4 sparse: [4], and it does not use up fp32's first limit: p3 400 >= 100: [3].
   * p2, p1, p0: 1200 >= 1000: [2 1 0]. */
  { "/bucket/rebuild/sparse-first", sparse_first, 5, NULL, STEADY, CAP_1000, 100, FALSE, FALSE, 0, FALSE,
    "4 | 3 | 2 1 0", "400 400 1200" },
  /* ready 5 4 1 0 3 2, limits [100, 1000].  p5: [5].  p4 400, p1 800, p0 1200: [4 1 0].  p3, p2:
   * leftover [3 2].  Same model as overshoot, different ready order, different layout. */
  { "/bucket/rebuild/ready-order", six_400, 6, ready_branch, STEADY, CAP_1000, 100, FALSE, FALSE, 0, FALSE,
    "5 | 4 1 0 | 3 2", "400 1200 800" },
  /* DDP_SET_LAST_BUCKET_CAP: assign over the reversed ready order 0..5: p0 400 >= 100: [0];
   * p1, p2, p3 1200: [1 2 3]; p4, p5: [4 5].  Then the bucket list (not the members) is
   * reversed: the small bucket goes last. */
  { "/bucket/rebuild/last-bucket-cap", six_400, 6, NULL, STEADY, CAP_1000, 100, FALSE, FALSE, 0, TRUE,
    "4 5 | 1 2 3 | 0", "800 1200 400" },
  /* bucket_cap_mb 0.1 = int(0.1 * 1024 * 1024) = 104857 bytes (MiB, not MB).  First limit 1:
   * p3 2 >= 1: [3].  p2 104856 < 104857 (a 100000-byte cap would close here), p1: 104858: [2 1].
   * p0: leftover [0]. */
  { "/bucket/cap/mib-truncated", tenth_mib, 4, NULL, STEADY, 0.1, 1, FALSE, FALSE, 0, FALSE,
    "3 | 2 1 | 0", "2 104858 2" },
  /* Default (find_unused FALSE): limits [sys.maxsize], one bucket, registration order inside. */
  { "/bucket/initial/default-single", six_400, 6, NULL, INITIAL, CAP_1000, 100, FALSE, FALSE, 0, FALSE,
    "0 1 2 3 4 5", "2400" },
  /* Default with two dtypes: fp32 [0 2 4 6] and fp16 [1 3 5 7], both leftovers; sorted by
   * smallest index (0, 1), then reversed: the fp16 bucket is launched first. */
  { "/bucket/initial/default-per-dtype", mixed, 8, NULL, INITIAL, 0, 0, FALSE, FALSE, 0, FALSE,
    "1 3 5 7 | 0 2 4 6", "800 1600" },
  /* find_unused, default cap: limits [1 MiB, 25 MiB] over registration order.  p0 0.5, p1 1.25
   * MiB >= 1: [0 1].  p2 10, p3 20, p4 30 >= 25: [2 3 4].  p5 3 MiB: leftover [5].  Sorted
   * (0, 2, 5) and reversed. */
  { "/bucket/initial/find-unused", mib, 6, NULL, INITIAL, 0, 0, TRUE, FALSE, 0, FALSE,
    "5 | 2 3 4 | 0 1", "3145728 31457280 1310720" },
  /* find_unused without static_graph never rebuilds: the steady layout is the initial one. */
  { "/bucket/steady/find-unused-keeps-initial", mib, 6, NULL, STEADY, 0, 0, TRUE, FALSE, 0, FALSE,
    "5 | 2 3 4 | 0 1", "3145728 31457280 1310720" },
  /* find_unused, cap 20 MiB given explicitly, PyTorch 2.4 (bucket_bytes_cap_default): limits
   * [20 MiB] only.  p0..p3: 21.25 MiB >= 20: [0 1 2 3]; p4, p5 13 MiB: leftover [4 5].  Reversed. */
  { "/bucket/initial/find-unused-custom-cap", mib, 6, NULL, INITIAL, 20, 0, TRUE, FALSE, 204, FALSE,
    "4 5 | 0 1 2 3", "13631488 22282240" },
  /* ... and 2.3, the rule before it: [1 MiB, 20 MiB], as torch 1.10 below. */
  { "/bucket/initial/find-unused-custom-cap-2.3", mib, 6, NULL, INITIAL, 20, 0, TRUE, FALSE, 203, FALSE,
    "4 5 | 2 3 | 0 1", "13631488 20971520 1310720" },
  /* PyTorch 2.4: a passed cap is the rebuilt layout's first bucket too (distributed.py hands the
   * Reducer the cap as first_bucket_bytes when bucket_bytes_cap_default is False; a real 2.11 run
   * agrees): limits [1000, 1000] over ready 5..0.  p5, p4, p3 1200 >= 1000: [5 4 3]; p2, p1, p0:
   * [2 1 0].  The 100-byte first limit is not used. */
  { "/bucket/rebuild/cap-is-first-2.4", six_400, 6, NULL, STEADY, CAP_1000, 100, FALSE, FALSE, 204, FALSE,
    "5 4 3 | 2 1 0", "1200 1200" },
  /* torch 1.10 (before 1.12), cap 20 MiB: limits [1 MiB, 20 MiB] whatever the flags.  [0 1]
   * 1.25 MiB; p2 10, p3 20 >= 20: [2 3]; [4 5] 13 MiB.  Reversed. */
  { "/bucket/initial/torch-1.10", mib, 6, NULL, INITIAL, 20, 0, FALSE, FALSE, 110, FALSE,
    "4 5 | 2 3 | 0 1", "13631488 20971520 1310720" },
  /* torch 1.13 without find_unused: already [sys.maxsize], one bucket (real DDP 1.13 agrees). */
  { "/bucket/initial/torch-1.13-default", mib, 6, NULL, INITIAL, 20, 0, FALSE, FALSE, 113, FALSE,
    "0 1 2 3 4 5", "35913728" },
  /* torch 1.13, find_unused, cap 20 MiB given: 1.13 still uses [1 MiB, 20 MiB] (2.4 on: [20 MiB],
   * the find-unused-custom-cap case above), so the same layout as torch 1.10. */
  { "/bucket/initial/torch-1.13-find-unused-custom-cap", mib, 6, NULL, INITIAL, 20, 0, TRUE, FALSE, 113, FALSE,
    "4 5 | 2 3 | 0 1", "13631488 20971520 1310720" },
  /* static_graph wins over find_unused at construction: [sys.maxsize], one 34.25 MiB bucket. */
  { "/bucket/initial/static-graph", mib, 6, NULL, INITIAL, 0, 0, TRUE, TRUE, 0, FALSE,
    "0 1 2 3 4 5", "35913728" },
  /* ... and static_graph rebuilds: ready 5..0, [1 MiB, 25 MiB].  p5 3 MiB: [5].  p4 10, p3 20,
   * p2 30: [4 3 2].  p1 0.75, p0 1.25: leftover [1 0]. */
  { "/bucket/steady/static-graph-rebuilds", mib, 6, NULL, STEADY, 0, 0, TRUE, TRUE, 0, FALSE,
    "5 | 4 3 2 | 1 0", "3145728 31457280 1310720" },
};

static void
test_layout_case(gconstpointer data)
{
  const LayoutCase *c = data;
  g_autoptr(DdpModel) model = model_new(c->specs, c->n, c->ready);
  DdpBucketOptions options;
  ddp_bucket_options_init(&options);
  if (c->cap_mb > 0) {
    options.bucket_cap_mb = c->cap_mb;   /* passed to DDP explicitly */
    options.bucket_cap_given = TRUE;
  }
  if (c->first > 0)
    options.first_bucket_bytes = c->first;
  options.find_unused_parameters = c->find_unused;
  options.static_graph = c->static_graph;
  options.torch_version = c->torch > 0 ? c->torch : 203;
  options.last_bucket_cap = c->last_cap;
  g_autoptr(DdpBucketLayout) layout = c->which == INITIAL ? ddp_bucket_layout_initial(model, &options)
                                                          : ddp_bucket_layout_steady(model, &options);
  g_assert_true(ddp_bucket_layout_check(layout, model));
  g_autofree char *members = layout_members(layout);
  g_autofree char *bytes = layout_bytes(layout);
  g_assert_cmpstr(members, ==, c->members);
  g_assert_cmpstr(bytes, ==, c->bytes);
  for (guint b = 0; b < ddp_bucket_layout_count(layout); b++) {
    const DdpBucket *k = ddp_bucket_layout_get(layout, b);
    g_assert_cmpuint(k->index, ==, b);
    for (guint i = 0; i < k->n_params; i++)
      g_assert_cmpuint(ddp_bucket_layout_bucket_of(layout, k->params[i]), ==, b);
  }
}

/* ---- single tests ------------------------------------------------------------------------ */

static void
test_options_defaults(void)
{
  DdpBucketOptions o;
  memset(&o, 0xff, sizeof o);
  ddp_bucket_options_init(&o);
  g_assert_cmpfloat(o.bucket_cap_mb, ==, 25.0);
  g_assert_cmpuint(o.first_bucket_bytes, ==, 1048576);
  g_assert_false(o.find_unused_parameters);
  g_assert_false(o.static_graph);
  g_assert_cmpuint(o.torch_version, ==, 204);   /* the rules of 2.4 and later (bucket.h) */
  g_assert_false(o.cpu_device);
  g_assert_false(o.last_bucket_cap);
}

/* The premise of the leftover order: every dtype's (dtype, device) key lands in its own libstdc++
 * bucket, for cuda:0 and for the CPU with an 8-bit (torch < 2.3) or 16-bit device index.
 * Hand-computed: hash = d ^ (t + 0x9e3779b9 + (d << 6) + (d >> 2)) mod 13, t = 6/5/15/7 for
 * fp32/fp16/bf16/fp64; d = 0x10000: 2, 1, 11, 3; d = 0xFF: 12, 0, 3, 11; d = 0xFFFF: 0, 1, 4, 12. */
static void
test_map_slots(void)
{
  static const struct { gboolean cpu; guint torch; guint slot[DDP_DTYPE_COUNT]; } cases[] = {
    { FALSE, 200, { 2, 1, 11, 3 } }, { TRUE, 113, { 12, 0, 3, 11 } }, { TRUE, 203, { 0, 1, 4, 12 } },
  };
  for (gsize i = 0; i < G_N_ELEMENTS(cases); i++) {
    DdpBucketOptions o;
    ddp_bucket_options_init(&o);
    o.cpu_device = cases[i].cpu;
    o.torch_version = cases[i].torch;
    g_assert_cmpuint(ddp_bucket_map_slot(&o, DDP_DTYPE_FP32), ==, cases[i].slot[0]);
    g_assert_cmpuint(ddp_bucket_map_slot(&o, DDP_DTYPE_FP16), ==, cases[i].slot[1]);
    g_assert_cmpuint(ddp_bucket_map_slot(&o, DDP_DTYPE_BF16), ==, cases[i].slot[2]);
    g_assert_cmpuint(ddp_bucket_map_slot(&o, DDP_DTYPE_FP64), ==, cases[i].slot[3]);
  }
}

/* "X.Y" → 100·X + Y; anything else refused and the output left alone. */
static void
test_torch_version_parse(void)
{
  guint v = 7;
  g_assert_true(ddp_torch_version_parse("1.13", &v));
  g_assert_cmpuint(v, ==, 113);
  g_assert_true(ddp_torch_version_parse("2.4", &v));
  g_assert_cmpuint(v, ==, 204);
  g_assert_true(ddp_torch_version_parse("1.8", &v));
  g_assert_cmpuint(v, ==, 108);
  g_assert_true(ddp_torch_version_parse("1.4", &v));
  g_assert_cmpuint(v, ==, 104);
  static const char *const bad[] = { "", "2", "1.3", "3.0", "0.4", "2.x", "1.13.1", "2.100", "-1.9", " 2.1", NULL };
  for (guint i = 0; bad[i]; i++) {
    v = 7;
    g_assert_false(ddp_torch_version_parse(bad[i], &v));
    g_assert_cmpuint(v, ==, 7);
  }
}

/* The construction-time layout never looks at the ready order; the rebuilt one does. */
static void
test_initial_ignores_ready_order(void)
{
  g_autoptr(DdpModel) reverse = model_new(six_400, 6, NULL);
  g_autoptr(DdpModel) branch = model_new(six_400, 6, ready_branch);
  DdpBucketOptions options;
  ddp_bucket_options_init(&options);
  options.find_unused_parameters = TRUE;
  options.static_graph = TRUE;      /* rebuilds; initial is [sys.maxsize] */
  options.bucket_cap_mb = CAP_1000;
  options.first_bucket_bytes = 100;
  g_autoptr(DdpBucketLayout) a = ddp_bucket_layout_initial(reverse, &options);
  g_autoptr(DdpBucketLayout) b = ddp_bucket_layout_initial(branch, &options);
  g_autofree char *ma = layout_members(a), *mb = layout_members(b);
  g_assert_cmpstr(ma, ==, mb);
  g_autoptr(DdpBucketLayout) ra = ddp_bucket_layout_steady(reverse, &options);
  g_autoptr(DdpBucketLayout) rb = ddp_bucket_layout_steady(branch, &options);
  g_autofree char *mra = layout_members(ra), *mrb = layout_members(rb);
  g_assert_cmpstr(mra, !=, mrb);
}

/* The checker rejects a layout held against a model it was not built for. */
static void
test_check_rejects(void)
{
  static const Spec six_one_half[] = { F32(100), F32(100), F16(100), F32(100), F32(100), F32(100) };
  g_autoptr(DdpModel) model = model_new(six_400, 6, NULL);
  g_autoptr(DdpModel) fewer = model_new(exact, 4, NULL);
  g_autoptr(DdpModel) other_dtype = model_new(six_one_half, 6, NULL);
  DdpBucketOptions options;
  ddp_bucket_options_init(&options);
  g_autoptr(DdpBucketLayout) layout = ddp_bucket_layout_steady(model, &options);
  g_assert_true(ddp_bucket_layout_check(layout, model));
  g_assert_false(ddp_bucket_layout_check(layout, fewer));        /* param count */
  g_assert_false(ddp_bucket_layout_check(layout, other_dtype));  /* p2's dtype and bytes */
}

/* ---- torchvision ResNet-50 --------------------------------------------------------------- */

static void
add_param(GArray *params, const char *name, gint64 numel)
{
  DdpParam p = { .name = g_strdup(name), .numel = numel, .shape = { numel }, .ndim = 1, .dtype = DDP_DTYPE_FP32 };
  g_array_append_val(params, p);
}

static void
add_conv(GArray *params, const char *name, gint64 out, gint64 in, gint64 k)
{
  g_autofree char *n = g_strconcat(name, ".weight", NULL);
  add_param(params, n, out * in * k * k);
}

static void
add_bn(GArray *params, const char *name, gint64 c)
{
  g_autofree char *w = g_strconcat(name, ".weight", NULL);
  g_autofree char *b = g_strconcat(name, ".bias", NULL);
  add_param(params, w, c);
  add_param(params, b, c);
}

/* torchvision.models.resnet50(): model.parameters() in registration order.  Bottleneck registers
 * conv1, bn1, conv2, bn2, conv3, bn3, then downsample (block 0 of each stage: 1x1 conv + BN). */
static DdpModel *
resnet50_new(void)
{
  GArray *params = g_array_new(FALSE, TRUE, sizeof(DdpParam));
  add_conv(params, "conv1", 64, 3, 7);
  add_bn(params, "bn1", 64);
  static const gint64 planes[4] = { 64, 128, 256, 512 };
  static const int blocks[4] = { 3, 4, 6, 3 };
  gint64 inplanes = 64;
  for (int l = 0; l < 4; l++) {
    for (int b = 0; b < blocks[l]; b++) {
      char prefix[64], name[96];
      g_snprintf(prefix, sizeof prefix, "layer%d.%d", l + 1, b);
      g_snprintf(name, sizeof name, "%s.conv1", prefix);
      add_conv(params, name, planes[l], inplanes, 1);
      g_snprintf(name, sizeof name, "%s.bn1", prefix);
      add_bn(params, name, planes[l]);
      g_snprintf(name, sizeof name, "%s.conv2", prefix);
      add_conv(params, name, planes[l], planes[l], 3);
      g_snprintf(name, sizeof name, "%s.bn2", prefix);
      add_bn(params, name, planes[l]);
      g_snprintf(name, sizeof name, "%s.conv3", prefix);
      add_conv(params, name, planes[l] * 4, planes[l], 1);
      g_snprintf(name, sizeof name, "%s.bn3", prefix);
      add_bn(params, name, planes[l] * 4);
      if (b == 0) {
        g_snprintf(name, sizeof name, "%s.downsample.0", prefix);
        add_conv(params, name, planes[l] * 4, inplanes, 1);
        g_snprintf(name, sizeof name, "%s.downsample.1", prefix);
        add_bn(params, name, planes[l] * 4);
      }
      inplanes = planes[l] * 4;
    }
  }
  add_param(params, "fc.weight", 1000 * 2048);
  add_param(params, "fc.bias", 1000);

  DdpModel *m = g_new0(DdpModel, 1);
  m->name = g_strdup("resnet50");
  m->n_params = params->len;
  m->params = (DdpParam *)(void *)g_array_free(params, FALSE);
  m->ready_order = g_new(guint, m->n_params);
  m->registration_order = g_new(guint, m->n_params);
  for (guint i = 0; i < m->n_params; i++) {
    m->ready_order[i] = m->n_params - 1 - i;
    m->registration_order[i] = i;
  }
  return m;
}

static guint
param_index(const DdpModel *m, const char *name)
{
  for (guint i = 0; i < m->n_params; i++)
    if (g_str_equal(m->params[i].name, name))
      return i;
  g_assert_not_reached();
}

static void
test_resnet50(void)
{
  g_autoptr(DdpModel) m = resnet50_new();
  gint64 numel = 0;
  for (guint i = 0; i < m->n_params; i++)
    numel += m->params[i].numel;
  g_assert_cmpuint(m->n_params, ==, 161);     /* 3 + 16 blocks × 9 + 4 downsamples × 3 + 2 */
  g_assert_cmpint(numel, ==, 25557032);       /* torchvision's documented count */

  DdpBucketOptions options;
  ddp_bucket_options_init(&options);
  /* Iteration 0, default options: one bucket of every gradient, 4 × 25 557 032 bytes. */
  g_autoptr(DdpBucketLayout) initial = ddp_bucket_layout_initial(m, &options);
  g_assert_true(ddp_bucket_layout_check(initial, m));
  g_assert_cmpuint(ddp_bucket_layout_count(initial), ==, 1);
  g_assert_cmpuint(ddp_bucket_layout_get(initial, 0)->bytes, ==, 102228128);
  g_assert_cmpuint(ddp_bucket_layout_get(initial, 0)->params[0], ==, 0);   /* conv1.weight first */

  /* Rebuilt over reverse registration, limits [1 MiB, 25 MiB]:
   *   fc.bias 4 000 + fc.weight 8 192 000 = 8 196 000 >= 1 MiB                           -> 2 params
   *   layer4.2.bn3.bias .. layer4.1.conv2.weight: 31 502 336 (22 065 152 before the last
   *     tensor, the 9 437 184-byte 3x3 conv that overshoots 26 214 400)                    -> 15
   *   layer4.1.bn1.bias .. layer4.0.conv2.weight: 26 255 360                              -> 12
   *   layer4.0.bn1.bias .. layer3.0.downsample.0.weight: 26 550 272                       -> 51
   *   layer3.0.bn3.bias .. conv1.weight: the 9 724 160-byte remainder                     -> 81
   * which is what PyTorch 2.x logs for torchvision ResNet-50 (sum 102 228 128). */
  g_autoptr(DdpBucketLayout) rebuilt = ddp_bucket_layout_steady(m, &options);
  g_assert_true(ddp_bucket_layout_check(rebuilt, m));
  static const guint64 bytes[] = { 8196000, 31502336, 26255360, 26550272, 9724160 };
  static const guint counts[] = { 2, 15, 12, 51, 81 };
  static const char *const first[] = { "fc.bias", "layer4.2.bn3.bias", "layer4.1.bn1.bias",
                                       "layer4.0.bn1.bias", "layer3.0.bn3.bias" };
  static const char *const last[] = { "fc.weight", "layer4.1.conv2.weight", "layer4.0.conv2.weight",
                                      "layer3.0.downsample.0.weight", "conv1.weight" };
  g_assert_cmpuint(ddp_bucket_layout_count(rebuilt), ==, G_N_ELEMENTS(bytes));
  for (guint b = 0; b < G_N_ELEMENTS(bytes); b++) {
    const DdpBucket *k = ddp_bucket_layout_get(rebuilt, b);
    g_assert_cmpuint(k->bytes, ==, bytes[b]);
    g_assert_cmpuint(k->n_params, ==, counts[b]);
    g_assert_cmpuint(k->dtype, ==, DDP_DTYPE_FP32);
    g_assert_cmpstr(m->params[k->params[0]].name, ==, first[b]);
    g_assert_cmpstr(m->params[k->params[k->n_params - 1]].name, ==, last[b]);
  }
  g_assert_cmpuint(ddp_bucket_layout_bucket_of(rebuilt, param_index(m, "fc.weight")), ==, 0);
  g_assert_cmpuint(ddp_bucket_layout_bucket_of(rebuilt, param_index(m, "layer3.5.conv3.weight")), ==, 3);
  g_assert_cmpuint(ddp_bucket_layout_bucket_of(rebuilt, param_index(m, "conv1.weight")), ==, 4);
}

/* Registration order is the walk of the construction-time assignment and the key of its sort.
 * Four 1 MiB params listed p0 p1 p2 p3 (forward order) but registered p3 p0 p1 p2 (as ViT registers
 * class_token first); find_unused_parameters with the default cap gives limits [1 MiB, 25 MiB]:
 * walk p3 (1 MiB >= 1 MiB: closes) then p0 p1 p2 (3 MiB, leftover); sorted by smallest walk
 * position then reversed, bucket 0 = {p0 p1 p2}, bucket 1 = {p3}. */
static void
test_initial_registration_order(void)
{
  static const Spec specs[] = { { 262144, DDP_DTYPE_FP32, FALSE }, { 262144, DDP_DTYPE_FP32, FALSE },
                                { 262144, DDP_DTYPE_FP32, FALSE }, { 262144, DDP_DTYPE_FP32, FALSE } };
  g_autoptr(DdpModel) model = model_new(specs, 4, NULL);
  const guint registration[] = { 3, 0, 1, 2 };
  memcpy(model->registration_order, registration, sizeof registration);
  DdpBucketOptions options;
  ddp_bucket_options_init(&options);
  options.find_unused_parameters = TRUE;
  g_autoptr(DdpBucketLayout) layout = ddp_bucket_layout_initial(model, &options);
  g_assert_true(ddp_bucket_layout_check(layout, model));
  g_autofree char *members = layout_members(layout);
  g_assert_cmpstr(members, ==, "0 1 2 | 3");
}

int
main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/bucket/options/defaults", test_options_defaults);
  g_test_add_func("/bucket/options/torch-version", test_torch_version_parse);
  g_test_add_func("/bucket/rebuild/map-slots", test_map_slots);
  for (gsize i = 0; i < G_N_ELEMENTS(layout_cases); i++)
    g_test_add_data_func(layout_cases[i].path, &layout_cases[i], test_layout_case);
  g_test_add_func("/bucket/initial/ignores-ready-order", test_initial_ignores_ready_order);
  g_test_add_func("/bucket/initial/registration-order", test_initial_registration_order);
  g_test_add_func("/bucket/check/rejects-other-model", test_check_rejects);
  g_test_add_func("/bucket/resnet50/layouts", test_resnet50);
  return g_test_run();
}
