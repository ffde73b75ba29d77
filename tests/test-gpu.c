/* Tests for the built-in GPU table: datasheet figures and lookups. */
#include "gpu.h"

static void
test_lookup(void)
{
  g_autoptr(GError) error = NULL;
  DdpGpuSpec a100, h100, h200, v100;
  g_assert_true(ddp_gpu_lookup("A100", &a100, &error));
  g_assert_true(ddp_gpu_lookup("h100-sxm", &h100, &error));
  g_assert_true(ddp_gpu_lookup("h200", &h200, &error));
  g_assert_true(ddp_gpu_lookup("v100", &v100, &error));
  g_assert_no_error(error);
  /* A100 datasheet: TF32 156, BF16 312 dense; 2039 GB/s for the 80 GB part */
  g_assert_cmpfloat(a100.peak_tflops[DDP_PRECISION_TF32], ==, 156.0);
  g_assert_cmpfloat(a100.peak_tflops[DDP_PRECISION_BF16], ==, 312.0);
  g_assert_cmpfloat(a100.hbm_GBs, ==, 2039.0);
  g_assert_cmpint(a100.sm_arch, ==, 80);
  /* H200 = H100 compute with 4.8 TB/s HBM3e */
  g_assert_cmpfloat(h200.peak_tflops[DDP_PRECISION_BF16], ==, h100.peak_tflops[DDP_PRECISION_BF16]);
  g_assert_cmpfloat(h200.hbm_GBs, ==, 4800.0);
  g_assert_cmpfloat(h200.memory_GB, >, h100.memory_GB);
  /* V100 has no TF32: runs at FP32 rate */
  g_assert_cmpfloat(v100.peak_tflops[DDP_PRECISION_TF32], ==, v100.peak_tflops[DDP_PRECISION_FP32]);
}

static void
test_unknown(void)
{
  g_autoptr(GError) error = NULL;
  DdpGpuSpec spec;
  g_assert_false(ddp_gpu_lookup("k80", &spec, &error));
  g_assert_error(error, DDP_GPU_ERROR, DDP_GPU_ERROR_UNKNOWN);
}

static void
test_precision(void)
{
  g_assert_cmpint(ddp_precision_parse("BF16"), ==, DDP_PRECISION_BF16);
  g_assert_cmpint(ddp_precision_parse("int8"), ==, -1);
  g_assert_cmpstr(ddp_precision_name(DDP_PRECISION_TF32), ==, "tf32");
}

int
main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/gpu/lookup", test_lookup);
  g_test_add_func("/gpu/unknown", test_unknown);
  g_test_add_func("/gpu/precision", test_precision);
  return g_test_run();
}
