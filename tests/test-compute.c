/* Tests for the compute model: roofline per layer with hand-derived numbers, measured times,
 * the kernel floor, --step-ms rescaling, optimizer and memory. */
#include "compute.h"

static DdpModel *
load_text(const char *text)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(DdpKeyFile) kf = ddp_keyfile_load_data("t.model", text, &error);
  g_assert_no_error(error);
  DdpModel *m = ddp_model_from_keyfile(kf, &error);
  g_assert_no_error(error);
  return m;
}

static const char model_text[] =
  "[model]\nname = m\n"
  /* compute-bound GEMM: 1e9 FLOPs/sample */
  "[layer big]\nkind = linear\nforward_flops = 1e9\nbackward_flops = 2e9\nforward_bytes = 1e3\nbackward_bytes = 2e3\n"
  "activation_bytes = 1e6\nparams = big.weight:1000,1000\n"
  /* memory-bound norm: 1e6 FLOPs, 1e8 bytes/sample */
  "[layer norm]\nkind = norm\nforward_flops = 1e6\nbackward_flops = 2e6\nforward_bytes = 1e8\nbackward_bytes = 2e8\n"
  "activation_bytes = 5e5\nparams = norm.weight:1000\n"
  /* tiny: below the kernel floor */
  "[layer tiny]\nkind = elementwise\nforward_flops = 10\nbackward_flops = 20\n";

static void
test_roofline(void)
{
  g_autoptr(DdpModel) m = load_text(model_text);
  DdpGpuSpec gpu;
  g_assert_true(ddp_gpu_lookup("a100", &gpu, NULL));
  DdpComputeOptions o;
  ddp_compute_options_init(&o);
  g_autoptr(DdpCompute) c = ddp_compute_new(m, &gpu, DDP_PRECISION_BF16, 8, DDP_OPTIMIZER_ADAM, &o);
  /* big forward: 8·1e9 FLOPs at 312e12·0.5 FLOP/s = 8e9/156e12 s = 51 282.05 ns
   * (bytes: 8·1e3·0.5 + 4e6 weight bytes at 2039·0.75 B/ns = 2 618 ns: compute-bound) */
  g_assert_cmpint(ddp_compute_forward_ns(c, 0), ==, 51282);
  /* big backward: 16e9 / 156e12 = 102 564.1 ns */
  g_assert_cmpint(ddp_compute_backward_ns(c, 0), ==, 102564);
  /* norm forward: memory-bound: (8·1e8·0.5 + 4000) B / (2039·0.75 B/ns) = 400 004 000 / 1529.25 = 261 568.7 ns */
  g_assert_cmpint(ddp_compute_forward_ns(c, 1), ==, 261569);
  /* tiny: floor of 5 µs forward; backward of a parameter-less layer is 1 kernel: 5 µs */
  g_assert_cmpint(ddp_compute_forward_ns(c, 2), ==, 5000);
  g_assert_cmpint(ddp_compute_backward_ns(c, 2), ==, 5000);
  /* Adam: 7 passes over 1 001 000 params × 4 B = 28 028 000 B / 1529.25 B/ns = 18 327.6 ns */
  g_assert_cmpint(ddp_compute_optimizer_ns(c), ==, 18328);
  /* memory pass of 1 MB: 2e6 / 1529.25 = 1 307.8 ns → floor 5 µs */
  g_assert_cmpint(ddp_compute_memory_pass_ns(c, 1e6), ==, 5000);
  g_assert_cmpint(ddp_compute_memory_pass_ns(c, 1e8), ==, 130783);
}

static void
test_measured_and_scale(void)
{
  g_autofree char *path = g_test_build_filename(G_TEST_DIST, "data", "tiny.model", NULL);
  g_autoptr(GError) error = NULL;
  g_autoptr(DdpModel) m = ddp_model_load(path, &error);
  g_assert_no_error(error);
  DdpGpuSpec gpu;
  g_assert_true(ddp_gpu_lookup("h100", &gpu, NULL));
  /* measured at batch 32, asked at batch 64: times double */
  g_autoptr(DdpCompute) c = ddp_compute_new(m, &gpu, DDP_PRECISION_FP32, 64, DDP_OPTIMIZER_SGD, NULL);
  g_assert_cmpint(ddp_compute_forward_ns(c, 0), ==, 200000);
  g_assert_cmpint(ddp_compute_backward_ns(c, 1), ==, 200000);
  /* step = 2·(100+50+200+100) µs + SGD: 3 passes × 8 396 800 B / (3350·0.75) = 10 026.0 ns */
  g_assert_cmpint(ddp_compute_optimizer_ns(c), ==, 10026);
  g_assert_cmpint(ddp_compute_step_ns(c), ==, 900000 + 10026);
  /* --step-ms 1.820052: everything × 2 */
  ddp_compute_scale_to_step(c, 2 * 910026);
  g_assert_cmpint(ddp_compute_forward_ns(c, 0), ==, 400000);
  g_assert_cmpint(ddp_compute_optimizer_ns(c), ==, 20052);
  g_assert_cmpint(ddp_compute_step_ns(c), ==, 1820052);
}

static void
test_memory(void)
{
  g_autoptr(DdpModel) m = load_text(model_text);
  DdpGpuSpec gpu;
  g_assert_true(ddp_gpu_lookup("a100", &gpu, NULL));
  DdpMemory mem;
  /* 1 001 000 fp32 params = 4 004 000 B: weights + grads + buckets + 2 Adam states = 5× = 20 020 000;
   * activations (1e6 + 5e5) × batch 8 × 0.5 (bf16) = 6e6; + 1 GiB */
  ddp_compute_memory(m, &gpu, DDP_PRECISION_BF16, 8, DDP_OPTIMIZER_ADAM, FALSE, &mem);
  g_assert_cmpfloat(mem.total, ==, 20020000.0 + 6e6 + 1073741824.0);
  g_assert_true(mem.fits);
  ddp_compute_memory(m, &gpu, DDP_PRECISION_BF16, 8, DDP_OPTIMIZER_ADAM, TRUE, &mem);
  g_assert_cmpfloat(mem.buckets, ==, 0);
  /* a 7e9-parameter fp32 model with Adam: 16 B/param = 112 GB > 85 GB */
  g_autoptr(DdpModel) big = load_text("[model]\nname = b\n[layer l]\nkind = linear\nforward_flops = 1\nbackward_flops = 1\n"
                                      "params = w:7000000000\n");
  ddp_compute_memory(big, &gpu, DDP_PRECISION_BF16, 1, DDP_OPTIMIZER_ADAMW, TRUE, &mem);
  g_assert_cmpfloat(mem.weights + mem.grads + mem.optimizer_state, ==, 112e9);
  g_assert_false(mem.fits);
}

int
main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/compute/roofline", test_roofline);
  g_test_add_func("/compute/measured-and-step-ms", test_measured_and_scale);
  g_test_add_func("/compute/memory", test_memory);
  return g_test_run();
}
