/* Tests for fsdp (src/fsdp.c) and the memory per strategy (src/strategy.c): the schedule of a tiny
 * two-unit model derived by hand (AllGathers, ReduceScatters, overlap, backward prefetch pre/post/
 * none, the rate limiter, SHARD_GRAD_OP), the units of the shipped Llama-2-7B, and the ZeRO paper's
 * memory formulas.  Times are integers in arbitrary units (ns). */
#include "fsdp.h"
#include "calibdb.h"
#include "compute.h"
#include "fit.h"
#include "fixture.h"
#include "strategy.h"

#include <string.h>

/* The two-unit model: an empty root (unit 0) and blocks 1 and 2, one layer each.
 *   forward   L0 (unit 1) 10, L1 (unit 2) 20;  backward L1 40 then L0 20;  optimizer 4
 *   AllGather unit 1: 5, unit 2: 8;  ReduceScatter unit 1: 6, unit 2: 9 */
static const gint64 fwd[] = { 10, 20 }, bwd[] = { 20, 40 };
static const guint order[] = { 1, 0 }, unit_of[] = { 1, 2 };
static const gint64 ag[] = { 0, 5, 8 }, rs[] = { 0, 6, 9 };

static DdpFsdpPlan
two_units(DdpSharding sharding, DdpBackwardPrefetch prefetch)
{
  return (DdpFsdpPlan){ .n_layers = 2, .n_units = 3, .forward_ns = fwd, .backward_ns = bwd, .backward_order = order,
                        .layer_unit = unit_of, .all_gather_ns = ag, .reduce_ns = rs, .optimizer_ns = 4,
                        .sharding = sharding, .backward_prefetch = prefetch, .limit_all_gathers = TRUE };
}

/* The span of @op for @unit in backward or forward. */
static const DdpCommSpan *
span(const GArray *spans, DdpCollectiveOp op, int unit, gboolean backward)
{
  for (guint i = 0; i < spans->len; i++) {
    const DdpCommSpan *s = &g_array_index(spans, DdpCommSpan, i);
    if (s->op == op && s->unit == unit && s->backward == backward)
      return s;
  }
  g_assert_not_reached();
}

static void
assert_span(const GArray *spans, DdpCollectiveOp op, int unit, gboolean backward, gint64 start, gint64 end)
{
  const DdpCommSpan *s = span(spans, op, unit, backward);
  g_assert_cmpint(s->start_ns, ==, start);
  g_assert_cmpint(s->end_ns, ==, end);
}

/* FULL_SHARD, BACKWARD_PRE (PyTorch's defaults), limiter on.
 * forward: AG(1) 0–5; L0 waits for it: 5–15, then unit 1 is resharded (free at 15); AG(2) is issued
 *   as soon as the CPU reaches unit 2 (one free pending: no wait) and runs 5–13; L1 15–35, free at 35.
 * backward: pre-backward of unit 2 re-gathers it: two frees pending, the CPU waits for the oldest
 *   (15): AG(2) 15–23; BACKWARD_PRE then prefetches unit 1: AG(1) 23–28, before RS(2) on the same
 *   NCCL stream; L1 backward 35–75; RS(2) 75–84 (after unit 2's gradients); L0 backward 75–95 (its
 *   parameters arrived at 28: hidden); RS(1) 95–101; optimizer after the last reduction 101–105.
 * Compute is 10 + 20 + 40 + 20 + 4 = 94; exposed 11 = the first AllGather (5) + the last RS (6). */
static void
test_two_units_full_pre(void)
{
  DdpFsdpPlan plan = two_units(DDP_SHARDING_FULL, DDP_PREFETCH_PRE);
  g_autoptr(GArray) spans = g_array_new(FALSE, FALSE, sizeof(DdpCommSpan));
  g_autoptr(GArray) segments = g_array_new(FALSE, FALSE, sizeof(DdpSegment));
  gint64 backward_end;
  g_assert_cmpint(ddp_fsdp_schedule(&plan, spans, segments, &backward_end), ==, 105);
  g_assert_cmpint(backward_end, ==, 95);
  assert_span(spans, DDP_OP_ALL_GATHER, 1, FALSE, 0, 5);
  assert_span(spans, DDP_OP_ALL_GATHER, 2, FALSE, 5, 13);
  assert_span(spans, DDP_OP_ALL_GATHER, 2, TRUE, 15, 23);
  assert_span(spans, DDP_OP_ALL_GATHER, 1, TRUE, 23, 28);
  assert_span(spans, DDP_OP_REDUCE_SCATTER, 2, TRUE, 75, 84);
  assert_span(spans, DDP_OP_REDUCE_SCATTER, 1, TRUE, 95, 101);
  /* issue order on the NCCL stream: ..., AG(1) prefetched before RS(2) */
  g_assert_true(span(spans, DDP_OP_ALL_GATHER, 1, TRUE) < span(spans, DDP_OP_REDUCE_SCATTER, 2, TRUE));
  /* compute stream: forward L0 5–15, L1 15–35, backward L1 35–75, L0 75–95, optimizer 101–105 */
  static const gint64 expect[][2] = { { 5, 15 }, { 15, 35 }, { 35, 75 }, { 75, 95 }, { 101, 105 } };
  g_assert_cmpuint(segments->len, ==, G_N_ELEMENTS(expect));
  for (guint i = 0; i < segments->len; i++) {
    g_assert_cmpint(g_array_index(segments, DdpSegment, i).start_ns, ==, expect[i][0]);
    g_assert_cmpint(g_array_index(segments, DdpSegment, i).end_ns, ==, expect[i][1]);
  }
}

/* backward_prefetch=None: unit 1's AllGather is issued at its own pre-backward, after RS(2) in
 * the NCCL stream: RS(2) 75–84, the CPU waits on the free of unit 2's forward (35, long past),
 * AG(1) 84–89, L0 backward 89–109 (exposed: 14 more), RS(1) 109–115, optimizer 115–119.
 * BACKWARD_POST prefetches in unit 2's post-backward, after resharding it and before RS(2): the
 * limiter waits for the free at 35 (AG(1) 35–40), RS(2) 75–84, and the iteration is PRE's 105. */
static void
test_two_units_prefetch(void)
{
  DdpFsdpPlan none = two_units(DDP_SHARDING_FULL, DDP_PREFETCH_NONE);
  g_autoptr(GArray) spans = g_array_new(FALSE, FALSE, sizeof(DdpCommSpan));
  g_assert_cmpint(ddp_fsdp_schedule(&none, spans, NULL, NULL), ==, 119);
  assert_span(spans, DDP_OP_REDUCE_SCATTER, 2, TRUE, 75, 84);
  assert_span(spans, DDP_OP_ALL_GATHER, 1, TRUE, 84, 89);
  assert_span(spans, DDP_OP_REDUCE_SCATTER, 1, TRUE, 109, 115);
  DdpFsdpPlan post = two_units(DDP_SHARDING_FULL, DDP_PREFETCH_POST);
  g_autoptr(GArray) post_spans = g_array_new(FALSE, FALSE, sizeof(DdpCommSpan));
  g_assert_cmpint(ddp_fsdp_schedule(&post, post_spans, NULL, NULL), ==, 105);
  assert_span(post_spans, DDP_OP_ALL_GATHER, 1, TRUE, 35, 40);
  assert_span(post_spans, DDP_OP_REDUCE_SCATTER, 2, TRUE, 75, 84);
}

/* SHARD_GRAD_OP keeps the units unsharded after forward: no AllGather in backward, the same
 * forward, RS(2) 75–84, RS(1) 95–101, 105.  NO_SHARD: no AllGather at all, compute 0–30 and 30–90,
 * an AllReduce per unit (the reduce times) 70–79 and 90–96, optimizer 96–100. */
static void
test_two_units_strategies(void)
{
  DdpFsdpPlan grad_op = two_units(DDP_SHARDING_GRAD_OP, DDP_PREFETCH_PRE);
  g_autoptr(GArray) spans = g_array_new(FALSE, FALSE, sizeof(DdpCommSpan));
  g_assert_cmpint(ddp_fsdp_schedule(&grad_op, spans, NULL, NULL), ==, 105);
  for (guint i = 0; i < spans->len; i++) {
    const DdpCommSpan *s = &g_array_index(spans, DdpCommSpan, i);
    g_assert_false(s->op == DDP_OP_ALL_GATHER && s->backward);
  }
  DdpFsdpPlan none = two_units(DDP_SHARDING_NONE, DDP_PREFETCH_PRE);
  g_autoptr(GArray) ar = g_array_new(FALSE, FALSE, sizeof(DdpCommSpan));
  g_assert_cmpint(ddp_fsdp_schedule(&none, ar, NULL, NULL), ==, 100);
  g_assert_cmpuint(ar->len, ==, 2);
  assert_span(ar, DDP_OP_ALL_REDUCE, 2, TRUE, 70, 79);
  assert_span(ar, DDP_OP_ALL_REDUCE, 1, TRUE, 90, 96);
}

/* Gradient accumulation, --accumulate 2, on the two-unit model (FULL_SHARD, BACKWARD_PRE, limiter).
 * Inside no_sync() (micro-step 0) the post-backward hook reshards and frees (FULL_SHARD is a
 * reshard-after-forward strategy) but reduces nothing; micro-step 1 is the K = 1 iteration issued
 * behind it, the CPU running ahead only as far as the limiter lets it:
 *   micro-step 0  AG(1) 0–5, L0 5–15 (free 15), AG(2) 5–13, L1 15–35 (free 35);
 *                 backward AG(2) waits for free 15: 15–23, AG(1) prefetched 23–28, L1 35–75
 *                 (free 75), L0 75–95 (free 95); no ReduceScatter
 *   micro-step 1  AG(1) waits for free 35: 35–40 (hidden behind micro-step 0's backward), L0 95–105
 *                 (free 105); AG(2) waits for free 75: 75–83, L1 105–125 (free 125); backward AG(2)
 *                 waits for free 95: 95–103, AG(1) for free 105: 105–110, L1 125–165, RS(2)
 *                 165–174, L0 165–185, RS(1) 185–191; optimizer 191–195.
 * Compute 2 · 90 + 4 = 184: exposed 11, the same 5 + 6 as one micro-step; 9 AllGathers (the
 * root's empty one once: never resharded, it has no layer), 2 ReduceScatters.
 * Outside no_sync (sharded) micro-step 0 also reduces, RS(2) 75–84 and RS(1) 95–101, and its final
 * callback waits for them (101): micro-step 1's AG(1) queues behind RS(1), 101–106, L0 106–116,
 * AG(2) 106–114, L1 116–136, backward AG(2) 114–122, AG(1) 122–127, L1 136–176, RS(2) 176–185,
 * L0 176–196, RS(1) 196–202, optimizer 202–206: 11 later, the price of reducing twice.
 * SHARD_GRAD_OP inside no_sync keeps both units unsharded (_should_free_in_backward is False for
 * it): micro-step 1 gathers nothing; forward 95–105, 105–125, backward 125–165 and 165–185, RS(2)
 * 165–174, RS(1) 185–191, 195 — three AllGathers in all (the root's empty one included), none in
 * backward. */
static void
test_two_units_accumulate(void)
{
  static const struct {
    DdpSharding sharding;
    DdpFsdpAccumulate accumulate;
    gint64 end, backward_end;
    guint gathers;
    gint64 rs[2][2][2];   /* [micro-step][unit 2, unit 1] start, end; 0 0: none */
  } cases[] = {
    { DDP_SHARDING_FULL, DDP_FSDP_ACCUMULATE_NO_SYNC, 195, 185, 9, { { { 0, 0 }, { 0, 0 } }, { { 165, 174 }, { 185, 191 } } } },
    { DDP_SHARDING_FULL, DDP_FSDP_ACCUMULATE_SHARDED, 206, 196, 9, { { { 75, 84 }, { 95, 101 } }, { { 176, 185 }, { 196, 202 } } } },
    { DDP_SHARDING_GRAD_OP, DDP_FSDP_ACCUMULATE_NO_SYNC, 195, 185, 3, { { { 0, 0 }, { 0, 0 } }, { { 165, 174 }, { 185, 191 } } } },
  };
  for (gsize i = 0; i < G_N_ELEMENTS(cases); i++) {
    DdpFsdpPlan plan = two_units(cases[i].sharding, DDP_PREFETCH_PRE);
    plan.micro_steps = 2;
    plan.accumulate = cases[i].accumulate;
    g_autoptr(GArray) spans = g_array_new(FALSE, FALSE, sizeof(DdpCommSpan));
    g_autoptr(GArray) segments = g_array_new(FALSE, FALSE, sizeof(DdpSegment));
    gint64 backward_end;
    g_assert_cmpint(ddp_fsdp_schedule(&plan, spans, segments, &backward_end), ==, cases[i].end);
    g_assert_cmpint(backward_end, ==, cases[i].backward_end);
    guint gathers = 0, reductions = 0;
    for (guint k = 0; k < spans->len; k++) {
      const DdpCommSpan *c = &g_array_index(spans, DdpCommSpan, k);
      if (c->op == DDP_OP_ALL_GATHER) {
        gathers++;
        continue;
      }
      g_assert_cmpint(c->op, ==, DDP_OP_REDUCE_SCATTER);
      const gint64 *want = cases[i].rs[c->micro_step][c->unit == 2 ? 0 : 1];
      g_assert_cmpint(c->start_ns, ==, want[0]);
      g_assert_cmpint(c->end_ns, ==, want[1]);
      reductions++;
    }
    g_assert_cmpuint(gathers, ==, cases[i].gathers);
    g_assert_cmpuint(reductions, ==, cases[i].accumulate == DDP_FSDP_ACCUMULATE_SHARDED ? 4 : 2);
    /* the compute stream: 2 × (2 forward + 2 backward) layer passes, then the optimizer */
    g_assert_cmpuint(segments->len, ==, 9);
    const DdpSegment *opt = &g_array_index(segments, DdpSegment, 8);
    g_assert_cmpint(opt->kind, ==, DDP_SEGMENT_OPTIMIZER);
    g_assert_cmpuint(opt->micro_step, ==, 1);
    g_assert_cmpint(opt->start_ns, ==, cases[i].end - 4);
  }
  /* no_sync's first AllGathers of micro-step 1 (FULL_SHARD), read off the spans in issue order */
  DdpFsdpPlan plan = two_units(DDP_SHARDING_FULL, DDP_PREFETCH_PRE);
  plan.micro_steps = 2;
  g_autoptr(GArray) spans = g_array_new(FALSE, FALSE, sizeof(DdpCommSpan));
  ddp_fsdp_schedule(&plan, spans, NULL, NULL);
  static const gint64 second[][2] = { { 35, 40 }, { 75, 83 }, { 95, 103 }, { 105, 110 } };
  guint n = 0;
  for (guint k = 0; k < spans->len; k++) {
    const DdpCommSpan *c = &g_array_index(spans, DdpCommSpan, k);
    if (c->micro_step != 1 || c->op != DDP_OP_ALL_GATHER)
      continue;
    g_assert_cmpuint(n, <, G_N_ELEMENTS(second));
    g_assert_cmpint(c->start_ns, ==, second[n][0]);
    g_assert_cmpint(c->end_ns, ==, second[n][1]);
    n++;
  }
  g_assert_cmpuint(n, ==, G_N_ELEMENTS(second));
}

/* Memory under accumulation, Llama-2-7B on 64 GPUs in bf16 (every unit divides by 64: no padding):
 * one micro-step keeps the root's and two blocks' unsharded gradients, 2 · (262 148 096 + 2 ·
 * 202 383 360) = 1 333 829 632 bytes, over the sharded fp32 gradients 4Ψ/64 = 421 150 976 (Ψ =
 * 6 738 415 616): 1 754 980 608.  --accumulate 2 inside no_sync keeps every unit's unsharded
 * gradient, 2Ψ = 13 476 831 232: 13 897 982 208.  Outside no_sync the gradients accumulate
 * sharded: as one micro-step.  The iteration does twice the forward and backward work. */
static void
test_accumulate_memory(void)
{
  g_autoptr(DdpScenario) s = fixture_scenario("tiny.model", 64, NULL);
  g_autoptr(GError) error = NULL;
  ddp_model_free(s->model);
  s->model = ddp_model_load(DDP_SRCDIR "/models/llama-7b.model", &error);
  g_assert_no_error(error);
  s->setup.mode = DDP_MODE_FSDP;
  s->setup.precision = DDP_PRECISION_BF16;
  s->setup.batch = 1;
  s->setup.iterations = 1;
  DdpRunOptions options = { .skip_single_gpu = TRUE };
  g_autoptr(DdpResult) one = ddp_simulate(s, &options, &error);
  g_assert_no_error(error);
  g_assert_cmpfloat_with_epsilon(one->memory.grads, 1754980608.0, 1);
  s->setup.accumulate = 2;
  g_autoptr(DdpResult) no_sync = ddp_simulate(s, &options, &error);
  g_assert_no_error(error);
  g_assert_cmpfloat_with_epsilon(no_sync->memory.grads, 13897982208.0, 1);
  g_assert_cmpfloat_with_epsilon(no_sync->memory.weights, one->memory.weights, 1);
  s->setup.shard.accumulate = DDP_FSDP_ACCUMULATE_SHARDED;
  g_autoptr(DdpResult) sharded = ddp_simulate(s, &options, &error);
  g_assert_no_error(error);
  g_assert_cmpfloat_with_epsilon(sharded->memory.grads, 1754980608.0, 1);
  /* compute: 2 · (passes) + the step, against 1 · (passes) + the step */
  g_autoptr(DdpCompute) compute = ddp_strategy_compute(s, NULL, 1.0);
  double step_ms = (double)(ddp_compute_optimizer_ns(compute) / 64) / 1e6;
  g_assert_cmpfloat_with_epsilon(no_sync->compute_ms - step_ms, 2 * (one->compute_ms - step_ms), 1e-6);
  /* no_sync reduces once, outside it every micro-step: twice the ReduceScatter time */
  g_assert_cmpfloat_with_epsilon(sharded->reduce_scatter_ms, 2 * no_sync->reduce_scatter_ms, 1e-9);
  g_assert_cmpfloat(sharded->mean_ms, >, no_sync->mean_ms);
}

/* The rate limiter: three blocks of forward 10 with AllGathers of 1.  Without it the CPU issues
 * all three at once: 0–1, 1–2, 2–3.  With it the third waits for the first block's free event
 * (its forward ends at 11): 11–12; with forward_prefetch the third is issued one unit earlier, when
 * only one free is pending, and runs 2–3 again.  Compute is 1–11, 11–21, 21–31 in every case. */
static void
test_limiter(void)
{
  static const gint64 f3[] = { 10, 10, 10 }, b3[] = { 10, 10, 10 }, ag3[] = { 0, 1, 1, 1 }, rs3[] = { 0, 1, 1, 1 };
  static const guint o3[] = { 2, 1, 0 }, u3[] = { 1, 2, 3 };
  DdpFsdpPlan plan = { .n_layers = 3, .n_units = 4, .forward_ns = f3, .backward_ns = b3, .backward_order = o3,
                       .layer_unit = u3, .all_gather_ns = ag3, .reduce_ns = rs3, .sharding = DDP_SHARDING_FULL,
                       .backward_prefetch = DDP_PREFETCH_PRE };
  for (int limit = 0; limit < 2; limit++) {
    for (int prefetch = 0; prefetch < 2; prefetch++) {
      plan.limit_all_gathers = limit;
      plan.forward_prefetch = prefetch;
      g_autoptr(GArray) spans = g_array_new(FALSE, FALSE, sizeof(DdpCommSpan));
      g_autoptr(GArray) segments = g_array_new(FALSE, FALSE, sizeof(DdpSegment));
      ddp_fsdp_schedule(&plan, spans, segments, NULL);
      gint64 start = limit && !prefetch ? 11 : 2;
      assert_span(spans, DDP_OP_ALL_GATHER, 3, FALSE, start, start + 1);
      g_assert_cmpint(g_array_index(segments, DdpSegment, 2).start_ns, ==, 21);
    }
  }
}

/* Llama-2-7B: the root holds embed_tokens, norm and lm_head (2 · 32000 · 4096 + 4096 =
 * 262 148 096), each of the 32 decoder layers 4 · 4096² + 3 · 4096 · 11008 + 2 · 4096 =
 * 202 383 360; --wrap-blocks 4 gives 8 block units of 4 layers. */
/* ViT-B/16: torchvision keys its EncoderBlocks encoder_layer_0 … 11 in an nn.Sequential, names
 * without an all-digit component, so the file names them ([model] fsdp_units, tools/gen-models.py):
 * 12 block units of 4 · 768² + 4 · 768 (attention) + 2 · 768 · 3072 + 3072 + 768 (MLP) + 4 · 768
 * (two LayerNorms) = 7 087 872 parameters each, as transformer_auto_wrap_policy({EncoderBlock})
 * wraps them, and activation checkpointing's blocks are the same modules (it found none before). */
static void
test_units_vit(void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(DdpModel) model = ddp_model_load(DDP_SRCDIR "/models/vit-b16.model", &error);
  g_assert_no_error(error);
  g_autofree guint *layer_unit = g_new0(guint, model->n_layers);
  g_autoptr(GArray) units = ddp_fsdp_units(model, 1, layer_unit);
  g_assert_cmpuint(units->len, ==, 13);
  g_assert_cmpstr(g_array_index(units, DdpFsdpUnit, 1).name, ==, "encoder.layers.encoder_layer_0");
  for (guint u = 1; u < units->len; u++)
    g_assert_cmpint(g_array_index(units, DdpFsdpUnit, u).numel, ==, 7087872);
  g_autofree int *block = g_new(int, model->n_layers);
  g_assert_cmpuint(ddp_model_layer_blocks(model, block), ==, 12);
  for (guint l = 0; l < model->n_layers; l++)
    g_assert_cmpint(block[l], ==, (int)layer_unit[l] - 1);
  g_assert_cmpfloat(model->block_input_bytes, ==, 197.0 * 768 * 4);
}

static void
test_units_llama(void)
{
  g_autoptr(GError) error = NULL;
  DdpModel *model = ddp_model_load(DDP_SRCDIR "/models/llama-7b.model", &error);
  g_assert_no_error(error);
  g_autofree guint *layer_unit = g_new0(guint, model->n_layers);
  g_autoptr(GArray) units = ddp_fsdp_units(model, 1, layer_unit);
  g_assert_cmpuint(units->len, ==, 33);
  g_assert_cmpstr(g_array_index(units, DdpFsdpUnit, 0).name, ==, "root");
  g_assert_cmpint(g_array_index(units, DdpFsdpUnit, 0).numel, ==, 262148096);
  g_assert_cmpstr(g_array_index(units, DdpFsdpUnit, 1).name, ==, "model.layers.0");
  for (guint u = 1; u < units->len; u++)
    g_assert_cmpint(g_array_index(units, DdpFsdpUnit, u).numel, ==, 202383360);
  g_autoptr(GArray) coarse = ddp_fsdp_units(model, 4, layer_unit);
  g_assert_cmpuint(coarse->len, ==, 9);
  g_assert_cmpint(g_array_index(coarse, DdpFsdpUnit, 8).numel, ==, 4 * 202383360LL);
  g_assert_cmpuint(layer_unit[0], ==, 0);                    /* embed_tokens */
  g_assert_cmpuint(layer_unit[model->n_layers - 1], ==, 0);  /* lm_head */
  ddp_model_free(model);
}

/* A model file that names its own units ([model] fsdp_units, listed out of order): its blocks are
 * called block0/block1, so the auto-wrap policy (a numeric path component) finds no block and
 * keeps everything in the root; the named wrap gives
 *   root     embed 100·10 + head 5·10                 = 1 050 elements (4 200 bytes fp32)
 *   unit 1   enc.block0: fc 30·10 + bias 30 (act none) =   330 (1 320 bytes)
 *   unit 2   enc.block1: fc 10·30                      =   300 (1 200 bytes)
 * and on 4 GPUs each flat parameter is padded to a multiple of 4 elements: the forward AllGathers
 * move 1 052·4 = 4 208, 332·4 = 1 328 and 300·4 = 1 200 bytes, the ReduceScatters the same. */
#define NAMED_LAYER(name, params) "[layer " name "]\nkind = linear\nforward_flops = 1\nbackward_flops = 2\n" \
                                  "forward_us = 10\nbackward_us = 20\n" params
#define NAMED_BODY NAMED_LAYER("embed", "params = embed.weight:100,10\n")                                   \
                   NAMED_LAYER("enc.block0.fc", "params = enc.block0.fc.weight:30,10;enc.block0.fc.bias:30\n") \
                   NAMED_LAYER("enc.block0.act", "") NAMED_LAYER("enc.block1.fc", "params = enc.block1.fc.weight:10,30\n") \
                   NAMED_LAYER("head", "params = head.weight:5,10\n")
#define NAMED_MODEL(units) "[model]\nname = named\nmeasured_batch = 1\n" units NAMED_BODY

static void
test_units_named(void)
{
  g_autoptr(DdpScenario) s = fixture_scenario(NAMED_MODEL("fsdp_units = enc.block1;enc.block0\n"), 4, NULL);
  g_autofree guint *layer_unit = g_new0(guint, s->model->n_layers);
  g_autoptr(GArray) units = ddp_fsdp_units(s->model, 1, layer_unit);
  static const char *const name[] = { "root", "enc.block0", "enc.block1" };
  static const gint64 numel[] = { 1050, 330, 300 };
  static const guint64 bytes[] = { 4200, 1320, 1200 }, padded[] = { 4208, 1328, 1200 };
  g_assert_cmpuint(units->len, ==, 3);
  for (guint u = 0; u < 3; u++) {
    const DdpFsdpUnit *unit = &g_array_index(units, DdpFsdpUnit, u);
    g_assert_cmpstr(unit->name, ==, name[u]);
    g_assert_cmpint(unit->numel, ==, numel[u]);
    g_assert_cmpuint(unit->bytes, ==, bytes[u]);
  }
  static const guint expect_unit[] = { 0, 1, 1, 2, 0 };
  for (guint l = 0; l < G_N_ELEMENTS(expect_unit); l++)
    g_assert_cmpuint(layer_unit[l], ==, expect_unit[l]);
  s->setup.mode = DDP_MODE_FSDP;
  g_autoptr(GError) error = NULL;
  g_autoptr(DdpResult) r = ddp_simulate(s, NULL, &error);
  g_assert_no_error(error);
  g_assert_cmpuint(r->n_units, ==, 3);
  for (guint u = 0; u < 3; u++) {
    g_assert_cmpuint(span(r->spans, DDP_OP_ALL_GATHER, (int)u, FALSE)->bytes, ==, padded[u]);
    g_assert_cmpuint(span(r->spans, DDP_OP_REDUCE_SCATTER, (int)u, TRUE)->bytes, ==, padded[u]);
  }
  /* the same layers without the key: no numeric block component, one unit (the root) */
  g_autoptr(DdpScenario) plain = fixture_scenario(NAMED_MODEL(""), 4, NULL);
  g_autoptr(GArray) root_only = ddp_fsdp_units(plain->model, 1, layer_unit);
  g_assert_cmpuint(root_only->len, ==, 1);
  g_assert_cmpint(g_array_index(root_only, DdpFsdpUnit, 0).numel, ==, 1050 + 330 + 300);
}

/* A calibration holding, at 4 ranks on 1 node, the AllReduce curve through (@bytes[i], @us[i]).
 * (transfer full) */
static DdpFit *
allreduce_calibration(const gint64 *bytes, const double *us, guint n)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(DdpCalibDb) db = ddp_calibdb_open(":memory:", DDP_CALIBDB_WRITE, &error);
  DdpCalibRun run = { .host = "h", .gpu_name = "", .gpus_per_node = 4, .nodes = 1, .ranks = 4, .program = "test" };
  gint64 id = ddp_calibdb_run_begin(db, &run, &error);
  g_assert_true(ddp_calibdb_batch_begin(db, id, "import/nccl-tests", &error));
  for (guint i = 0; i < n; i++) {
    DdpCalibAllreducePoint p = { .algorithm = "auto", .protocol = "auto", .ranks = 4, .nodes = 1, .bytes = bytes[i],
                                 .in_place = TRUE, .time_us = us[i], .min_us = us[i], .max_us = us[i] };
    g_assert_true(ddp_calibdb_batch_add_allreduce(db, &p, &error));
  }
  g_assert_true(ddp_calibdb_batch_commit(db, NULL, &error));
  DdpFit *fit = ddp_fit_from_db(db, NULL, 0, NULL, &error);
  g_assert_no_error(error);
  return fit;
}

/* FSDP under a calibration that measured AllGather and ReduceScatter on its 4-GPU group.  tiny.model
 * is one root unit: 2 · (1024 · 1024 + 1024) = 2 099 200 fp32 parameters, padded to a multiple of
 * 4 ranks (already one): 8 396 800 bytes gathered and reduced.  At that measured size every
 * AllGather takes the measured 300 µs and every ReduceScatter 400 µs; the half size is measured too
 * so that the curve is a curve.  A calibration holding only AllReduce changes nothing (FULL_SHARD
 * runs none): the same spans as without one. */
static void
test_calibrated(void)
{
  static const gint64 sizes[] = { 4198400, 8396800 };
  static const double ag_us[] = { 160, 300 }, rs_us[] = { 210, 400 };
  g_autoptr(DdpScenario) plain = fixture_scenario("tiny.model", 4, NULL);
  plain->setup.mode = DDP_MODE_FSDP;
  g_autoptr(GError) error = NULL;
  g_autoptr(DdpResult) model = ddp_simulate(plain, NULL, &error);
  g_assert_no_error(error);

  g_autoptr(DdpScenario) s = fixture_scenario("tiny.model", 4, NULL);
  s->setup.mode = DDP_MODE_FSDP;
  /* both ops in one calibration: two imports, one fit */
  g_autoptr(DdpCalibDb) db = ddp_calibdb_open(":memory:", DDP_CALIBDB_WRITE, &error);
  DdpCalibRun run = { .host = "h", .gpu_name = "", .gpus_per_node = 4, .nodes = 1, .ranks = 4, .program = "test" };
  gint64 id = ddp_calibdb_run_begin(db, &run, &error);
  g_assert_true(ddp_calibdb_batch_begin(db, id, "import/nccl-tests", &error));
  for (guint i = 0; i < G_N_ELEMENTS(sizes); i++) {
    DdpCalibCollectivePoint gather = { .op = "all_gather", .algorithm = "auto", .protocol = "auto", .ranks = 4,
                                       .nodes = 1, .bytes = sizes[i], .time_us = ag_us[i] };
    DdpCalibCollectivePoint scatter = gather;
    scatter.op = "reduce_scatter";
    scatter.time_us = rs_us[i];
    g_assert_true(ddp_calibdb_batch_add_collective(db, &gather, &error));
    g_assert_true(ddp_calibdb_batch_add_collective(db, &scatter, &error));
  }
  g_assert_true(ddp_calibdb_batch_commit(db, NULL, &error));
  s->calibration = ddp_fit_from_db(db, NULL, 0, NULL, &error);
  g_assert_no_error(error);
  g_autoptr(DdpResult) measured = ddp_simulate(s, NULL, &error);
  g_assert_no_error(error);
  guint gathers = 0, scatters = 0;
  for (guint i = 0; i < measured->spans->len; i++) {
    const DdpCommSpan *c = &g_array_index(measured->spans, DdpCommSpan, i);
    g_assert_cmpuint(c->bytes, ==, 8396800);
    g_assert_cmpint(c->end_ns - c->start_ns, ==, c->op == DDP_OP_ALL_GATHER ? 300000 : 400000);
    gathers += c->op == DDP_OP_ALL_GATHER;
    scatters += c->op == DDP_OP_REDUCE_SCATTER;
  }
  g_assert_cmpuint(gathers, ==, 1);   /* the root unit stays unsharded from forward to backward */
  g_assert_cmpuint(scatters, ==, 1);
  g_assert_cmpfloat(measured->mean_ms, !=, model->mean_ms);

  g_autoptr(DdpScenario) ar_only = fixture_scenario("tiny.model", 4, NULL);
  ar_only->setup.mode = DDP_MODE_FSDP;
  ar_only->calibration = allreduce_calibration(sizes, ag_us, G_N_ELEMENTS(sizes));
  g_autoptr(DdpResult) unchanged = ddp_simulate(ar_only, NULL, &error);
  g_assert_no_error(error);
  g_assert_cmpfloat(unchanged->mean_ms, ==, model->mean_ms);
  g_assert_cmpuint(unchanged->spans->len, ==, model->spans->len);
  for (guint i = 0; i < model->spans->len; i++)
    g_assert_cmpmem(&g_array_index(unchanged->spans, DdpCommSpan, i), sizeof(DdpCommSpan),
                    &g_array_index(model->spans, DdpCommSpan, i), sizeof(DdpCommSpan));
  /* the communicator the notes speak of: all 4 GPUs on the one node; HYBRID_SHARD on one node too */
  guint64 gpus, nodes;
  g_assert_true(ddp_fsdp_group(s, &gpus, &nodes, &error));
  g_assert_cmpuint(gpus, ==, 4);
  g_assert_cmpuint(nodes, ==, 1);
}

/* HYBRID_SHARD across nodes shards inside each node: 8 GPUs of ab4 (4 a node) gather on 4 GPUs of
 * one node; FULL_SHARD on all 8 over both. */
static void
test_group(void)
{
  g_autoptr(DdpScenario) s = fixture_scenario("tiny.model", 8, NULL);
  s->setup.mode = DDP_MODE_FSDP;
  guint64 gpus, nodes;
  g_assert_true(ddp_fsdp_group(s, &gpus, &nodes, NULL));
  g_assert_cmpuint(gpus, ==, 8);
  g_assert_cmpuint(nodes, ==, 2);
  s->setup.shard.sharding = DDP_SHARDING_HYBRID;
  g_assert_true(ddp_fsdp_group(s, &gpus, &nodes, NULL));
  g_assert_cmpuint(gpus, ==, 4);
  g_assert_cmpuint(nodes, ==, 1);
  s->setup.gpus = 6;   /* not whole nodes of ab4 */
  g_autoptr(GError) error = NULL;
  g_assert_false(ddp_fsdp_group(s, &gpus, &nodes, &error));
  g_assert_nonnull(error);
}

/* One GPU: PyTorch switches every sharding strategy to NO_SHARD ("FSDP is switching to use
 * `NO_SHARD` … since the world size is 1", _init_utils.py _init_core_state), so FULL_SHARD,
 * SHARD_GRAD_OP and HYBRID_SHARD predict what NO_SHARD does — memory and time alike (grad-op once
 * came out 12 GB above NO_SHARD for Llama-7B on one H100, and compare ranked on it). */
static void
test_one_gpu_no_shard(void)
{
  g_autoptr(DdpScenario) s = fixture_scenario("tiny.model", 1, NULL);
  s->setup.mode = DDP_MODE_FSDP;
  s->setup.shard.sharding = DDP_SHARDING_NONE;
  g_autoptr(GError) error = NULL;
  g_autoptr(DdpResult) none = ddp_fsdp_simulate(s, NULL, &error);
  g_assert_no_error(error);
  const DdpSharding others[] = { DDP_SHARDING_FULL, DDP_SHARDING_GRAD_OP, DDP_SHARDING_HYBRID };
  for (gsize i = 0; i < G_N_ELEMENTS(others); i++) {
    s->setup.shard.sharding = others[i];
    g_autoptr(DdpResult) r = ddp_fsdp_simulate(s, NULL, &error);
    g_assert_no_error(error);
    g_assert_cmpfloat(r->memory.total, ==, none->memory.total);
    g_assert_cmpfloat(r->mean_ms, ==, none->mean_ms);
    g_assert_cmpfloat(r->comm_ms, ==, none->comm_ms);
  }
}

/* The ZeRO paper's Figure 1 example: Ψ = 7.5 B, N_d = 64, K = 12 (mixed-precision Adam), P = G = 2:
 * DDP (2 + 2 + 12)·7.5 = 120 GB; P_os 4·7.5 + 12·7.5/64 = 31.40625 GB; P_os+g 2·7.5 + 14·7.5/64 =
 * 16.640625 GB; P_os+g+p 16·7.5/64 = 1.875 GB (the paper rounds to 120, 31.4, 16.6, 1.9). */
static void
test_zero_paper(void)
{
  static const double expect[] = { 120e9, 31.40625e9, 16.640625e9, 1.875e9 };
  for (guint stage = 0; stage <= 3; stage++)
    g_assert_cmpfloat_with_epsilon(ddp_strategy_model_state_bytes(7.5e9, 2, 2, 12, stage, 64), expect[stage], 1.0);
}

/* Memory per strategy for Llama-2-7B (Ψ = 6 738 415 616, fp32 storage: P = G = 4, Adam K = 8)
 * on 64 GPUs, bf16: DDP keeps 4Ψ weights + 4Ψ grads + 4Ψ buckets + 8Ψ Adam, and under autocast the
 * bf16 copies of the 6 607 077 376 linear parameters (2 B each, saved for backward); ZeRO-1 divides
 * the Adam state by 64; FULL_SHARD keeps (4 + 4 + 8)Ψ/64 plus, in bf16, the root (262 148 096 ·
 * 2) and two blocks (2 · 202 383 360 · 2) unsharded, the same again in unsharded gradients;
 * SHARD_GRAD_OP keeps every unit unsharded (2Ψ, Ψ divisible by 64 per unit). */
static void
test_memory_strategies(void)
{
  g_autoptr(GError) error = NULL;
  DdpModel *model = ddp_model_load(DDP_SRCDIR "/models/llama-7b.model", &error);
  g_assert_no_error(error);
  DdpGpuSpec gpu = { 0 };
  gpu.memory_GB = 80;
  DdpSetup setup = { 0 };
  ddp_setup_init(&setup);
  setup.batch = 1;
  setup.precision = DDP_PRECISION_BF16;
  setup.optimizer = DDP_OPTIMIZER_ADAM;
  double psi = 6738415616.0, unsharded = 262148096.0 * 2 + 2 * 202383360.0 * 2;
  DdpMemory ddp, zero, full;
  setup.mode = DDP_MODE_DDP;
  ddp_strategy_memory(model, &gpu, &setup, 64, 0, 0, &ddp);
  g_assert_cmpfloat_with_epsilon(ddp.weights + ddp.grads + ddp.buckets + ddp.optimizer_state,
                                 20 * psi + 2 * 6607077376.0, 1);
  setup.mode = DDP_MODE_ZERO1;
  ddp_strategy_memory(model, &gpu, &setup, 64, 0, 0, &zero);
  g_assert_cmpfloat_with_epsilon(zero.optimizer_state, 8 * psi / 64, 1);
  g_assert_cmpfloat_with_epsilon(zero.total, ddp.total - 8 * psi * 63 / 64, 1);
  setup.mode = DDP_MODE_FSDP;
  ddp_strategy_memory(model, &gpu, &setup, 64, unsharded, unsharded, &full);
  g_assert_cmpfloat_with_epsilon(full.weights + full.grads + full.optimizer_state,
                                 ddp_strategy_model_state_bytes(psi, 4, 4, 8, 3, 64) + 2 * unsharded, 1);
  g_assert_cmpfloat_with_epsilon(full.buckets, 0, 0.5);
  g_assert_true(full.fits);
  g_assert_false(ddp.fits);
  g_free(setup.stragglers);
  ddp_model_free(model);
}

/* Stragglers under FSDP: every unit's collectives wait for the last rank, so the iteration is the
 * schedule with compute × the largest factor (fsdp.c).  On the fixture (tiny, 4 GPUs of ab4, every
 * overhead off) with slow:1:2 one rank runs at half speed: the nominal compute is unchanged, the
 * straggler wait is exactly one more compute (2·C − C), and the iteration grows by at least it less
 * the communication that hid behind compute.  normal:0.1 is deterministic for a seed and spreads
 * the iterations (p99 ≥ p50 > 0). */
static void
test_stragglers(void)
{
  g_autoptr(DdpScenario) s = fixture_scenario("tiny.model", 4, NULL);
  s->setup.mode = DDP_MODE_FSDP;
  g_autoptr(GError) error = NULL;
  g_autoptr(DdpResult) plain = ddp_simulate(s, NULL, &error);
  g_assert_no_error(error);
  g_autoptr(DdpScenario) slow = fixture_scenario("tiny.model", 4, "slow:1:2");
  slow->setup.mode = DDP_MODE_FSDP;
  g_autoptr(DdpResult) r = ddp_simulate(slow, NULL, &error);
  g_assert_no_error(error);
  g_assert_cmpfloat_with_epsilon(r->compute_ms, plain->compute_ms, 1e-9);
  g_assert_cmpfloat_with_epsilon(r->straggler_wait_ms, plain->compute_ms, 1e-5);
  g_assert_cmpfloat(r->mean_ms, >=, plain->mean_ms + plain->compute_ms - plain->comm_ms - 1e-6);
  g_autoptr(DdpScenario) noisy = fixture_scenario("tiny.model", 4, "normal:0.1");
  noisy->setup.mode = DDP_MODE_FSDP;
  noisy->setup.iterations = 50;
  g_autoptr(DdpResult) a = ddp_simulate(noisy, NULL, &error);
  g_autoptr(DdpResult) b = ddp_simulate(noisy, NULL, &error);
  g_assert_no_error(error);
  for (guint i = 0; i < 50; i++)
    g_assert_cmpfloat(a->iteration_ms[i], ==, b->iteration_ms[i]);
  g_assert_cmpfloat(a->p99_ms, >, a->p50_ms);
  g_assert_cmpfloat(a->p50_ms, >, plain->p50_ms * 0.9);
}

int
main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/fsdp/two-units/full-pre", test_two_units_full_pre);
  g_test_add_func("/fsdp/two-units/prefetch", test_two_units_prefetch);
  g_test_add_func("/fsdp/two-units/strategies", test_two_units_strategies);
  g_test_add_func("/fsdp/two-units/accumulate", test_two_units_accumulate);
  g_test_add_func("/fsdp/accumulate/memory", test_accumulate_memory);
  g_test_add_func("/fsdp/limiter", test_limiter);
  g_test_add_func("/fsdp/units/llama-7b", test_units_llama);
  g_test_add_func("/fsdp/units/vit-b16", test_units_vit);
  g_test_add_func("/fsdp/units/named", test_units_named);
  g_test_add_func("/fsdp/stragglers", test_stragglers);
  g_test_add_func("/fsdp/calibrated", test_calibrated);
  g_test_add_func("/fsdp/group", test_group);
  g_test_add_func("/fsdp/one-gpu-no-shard", test_one_gpu_no_shard);
  g_test_add_func("/strategy/memory/zero-paper", test_zero_paper);
  g_test_add_func("/strategy/memory/llama-7b", test_memory_strategies);
  return g_test_run();
}
