/* The built-in compute defaults against one real GPU: PyTorch 2.11 training steps measured on an
 * NVIDIA H100 80GB HBM3 SXM (calibrate/data/fc-vm-H100x1-20261123-torch-steps.jsonl, copied as
 * tests/data/training-h100.csv: the GPU-bound rows — every fp32 row and the rows whose host issue
 * time is below 0.8 × the step).  Each row is predicted through the library as `ddpsim predict
 * --cluster dgx-h100 --gpus 1` does (ddp_simulate_one_gpu, default overheads) and the per-row
 * |error| is bounded: the accuracy docs/validation-h100.md reports.  Plus closed forms for the H100
 * defaults the rows exercise: convolution factors and ramps, grouped convolutions, attention on
 * fp32 tensors. */
#include "compute.h"
#include "ddp.h"
#include "scenario.h"

#include <math.h>
#include <string.h>

/* Splits one CSV line (RFC 4180 quotes, no embedded newlines) into fields. */
static GPtrArray *
csv_fields(const char *line)
{
  GPtrArray *out = g_ptr_array_new_with_free_func(g_free);
  GString *f = g_string_new(NULL);
  gboolean quoted = FALSE;
  for (const char *p = line; *p; p++) {
    if (quoted) {
      if (*p == '"' && p[1] == '"')
        g_string_append_c(f, *p++);
      else if (*p == '"')
        quoted = FALSE;
      else
        g_string_append_c(f, *p);
    } else if (*p == '"') {
      quoted = TRUE;
    } else if (*p == ',') {
      g_ptr_array_add(out, g_string_free(g_steal_pointer(&f), FALSE));
      f = g_string_new(NULL);
    } else if (*p != '\r') {
      g_string_append_c(f, *p);
    }
  }
  g_assert_false(quoted);
  g_ptr_array_add(out, g_string_free(f, FALSE));
  return out;
}

static int
compare_doubles(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* The 1-GPU step: the plain module (T(1), ddp_simulate_one_gpu) for a row measured without DDP,
 * DDP at world size 1 (ddp_simulate: the reducer's copies included) for a row measured with it. */
static double
predict_on_ms(const char *cluster_name, const char *model, const char *precision, const char *batch, gboolean ddp,
              gboolean channels_last)
{
  g_autoptr(GError) error = NULL;
  DdpCliOptions cli = { 0 };
  g_autofree char *model_path = g_test_build_filename(G_TEST_DIST, "..", "models", model, NULL);
  g_autofree char *model_file = g_strconcat(model_path, ".model", NULL);
  g_autofree char *cluster_file = g_strconcat(cluster_name, ".cluster", NULL);
  g_autofree char *cluster = g_test_build_filename(G_TEST_DIST, "..", "scenarios", cluster_file, NULL);
  cli.model = model_file;
  cli.cluster = cluster;
  cli.channels_last = channels_last;
  cli.gpus = (char *)"1";
  cli.batch = (char *)batch;
  cli.precision = (char *)precision;
  cli.iterations = (char *)"2";
  g_autoptr(DdpScenario) s = ddp_scenario_load(NULL, &cli, TRUE, &error);
  g_assert_no_error(error);
  if (ddp) {
    DdpRunOptions options = { .skip_single_gpu = TRUE };
    g_autoptr(DdpResult) r = ddp_simulate(s, &options, &error);
    g_assert_no_error(error);
    return r->mean_ms;
  }
  double ms = 0;
  g_assert_true(ddp_simulate_one_gpu(s, s->setup.batch, NULL, &ms, &error));
  g_assert_no_error(error);
  return ms;
}

static double
predict_ms(const char *model, const char *precision, const char *batch, gboolean ddp)
{
  return predict_on_ms("dgx-h100", model, precision, batch, ddp, FALSE);
}

/* A model from a model file's text (the closed-form tests below). */
static DdpModel *
model_from_text(const char *name, const char *text)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(DdpKeyFile) kf = ddp_keyfile_load_data(name, text, &error);
  g_assert_no_error(error);
  DdpModel *m = ddp_model_from_keyfile(kf, &error);
  g_assert_no_error(error);
  return m;
}

/* Every GPU-bound row of the H100 measurements.  With the defaults of src/compute.c (fitted to these
 * measurements where its comments say so) the errors are, per row (docs/validation-h100.md):
 * median 5.3 %, max 21.0 % (BERT-base TF32 batch 8: host issue 0.78 × the step, step times
 * spread 28–102 ms), the convolution networks within 13.7 % (Inception-v3 FP32; ResNet-50 FP32
 * batch 64 was −16.4 % before the 1×1 convolution factors, now −4.2 %); before the H100
 * convolution/attention/autocast terms the median was 28.7 % and the max 55.6 %.  Bounds:
 * median ≤ 7 %, every row ≤ 25 %, convolution networks ≤ 15 %. */
static void
test_rows(void)
{
  g_autofree char *path = g_test_build_filename(G_TEST_DIST, "data", "training-h100.csv", NULL);
  g_autofree char *text = NULL;
  g_autoptr(GError) error = NULL;
  g_assert_true(g_file_get_contents(path, &text, NULL, &error));
  g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
  g_autoptr(GPtrArray) header = csv_fields(lines[0]);
  g_assert_cmpuint(header->len, ==, 20);
  g_assert_cmpstr(g_ptr_array_index(header, 1), ==, "model");
  g_assert_cmpstr(g_ptr_array_index(header, 3), ==, "precision");
  g_assert_cmpstr(g_ptr_array_index(header, 4), ==, "per_gpu_batch");
  g_assert_cmpstr(g_ptr_array_index(header, 13), ==, "iteration_ms");
  GArray *errors = g_array_new(FALSE, FALSE, sizeof(double));
  double conv_max = 0;
  for (guint i = 1; lines[i]; i++) {
    if (!*lines[i])
      continue;
    g_autoptr(GPtrArray) f = csv_fields(lines[i]);
    g_assert_cmpuint(f->len, ==, 20);
    const char *model = g_ptr_array_index(f, 1);
    g_autofree char *precision = g_ascii_strdown(g_ptr_array_index(f, 3), 4);
    double measured = g_ascii_strtod(g_ptr_array_index(f, 13), NULL);
    g_assert_cmpfloat(measured, >, 0);
    gboolean ddp = strstr(g_ptr_array_index(f, 2), "DistributedDataParallel") != NULL;
    double predicted = predict_ms(model, precision, g_ptr_array_index(f, 4), ddp);
    double e = fabs(predicted / measured - 1);
    g_test_message("%s %s b%s: measured %.2f ms, predicted %.2f ms (%+.1f %%)", model, precision,
                   (const char *)g_ptr_array_index(f, 4), measured, predicted, 100 * (predicted / measured - 1));
    g_array_append_val(errors, e);
    if (g_str_has_prefix(model, "res") || g_str_has_prefix(model, "vgg") || g_str_has_prefix(model, "incep"))
      conv_max = MAX(conv_max, e);
    g_assert_cmpfloat(e, <=, 0.25);
  }
  g_assert_cmpuint(errors->len, ==, 24);
  g_array_sort(errors, compare_doubles);
  double median = (g_array_index(errors, double, 11) + g_array_index(errors, double, 12)) / 2;
  g_test_message("median |error| %.1f %%, max %.1f %%", 100 * median, 100 * g_array_index(errors, double, 23));
  g_assert_cmpfloat(median, <=, 0.07);
  g_assert_cmpfloat(conv_max, <=, 0.15);
  g_array_unref(errors);
}

/* The H100 convolution terms in closed form. */
static void
test_h100_conv(void)
{
  DdpGpuSpec h100, a100;
  g_assert_true(ddp_gpu_lookup("h100", &h100, NULL));
  g_assert_true(ddp_gpu_lookup("a100", &a100, NULL));
  DdpComputeOptions o;
  ddp_compute_options_init_gpu(&o, &h100);
  g_assert_cmpfloat(o.conv_factor[DDP_PRECISION_FP32], ==, 1.30);
  g_assert_cmpfloat(o.conv_ramp_us[DDP_PRECISION_FP32], ==, 140);
  /* fitted to the conv kernels of the 2026-11-27 traces (0.75 with a 60 µs ramp before: fitted to
   * whole steps, it had absorbed batch norm and the transposes): 0.696 of the BF16 peak, written
   * as 0.994 × the GEMMs' 0.70 (1.16 × 0.60 before the GEMMs were read off their own kernels) */
  g_assert_cmpfloat(o.matmul_efficiency[DDP_PRECISION_BF16], ==, 0.70);
  g_assert_cmpfloat(o.conv_factor[DDP_PRECISION_BF16], ==, 0.994);
  g_assert_cmpfloat_with_epsilon(o.conv_factor[DDP_PRECISION_BF16] * o.matmul_efficiency[DDP_PRECISION_BF16], 1.16 * 0.60,
                                 0.001);
  g_assert_cmpfloat(o.conv_ramp_us[DDP_PRECISION_BF16], ==, 15);
  g_assert_cmpfloat(o.grouped_conv_channels[DDP_PRECISION_FP32], ==, 96);   /* 256 before the 1×1 factors */
  g_assert_cmpfloat(o.pointwise_conv_factor[DDP_PRECISION_FP32], ==, 0.50);
  g_assert_cmpfloat(o.pointwise_conv_ramp_us[DDP_PRECISION_FP32], ==, 30);
  /* A100 keeps the factors ResNet-50's published throughput was checked with, and no group term */
  DdpComputeOptions a;
  ddp_compute_options_init_gpu(&a, &a100);
  g_assert_cmpfloat(a.conv_factor[DDP_PRECISION_FP32], ==, 0.90);
  g_assert_cmpfloat(a.conv_factor[DDP_PRECISION_TF32], ==, 0.40);
  g_assert_cmpfloat(a.conv_ramp_us[DDP_PRECISION_FP16], ==, 2);
  g_assert_cmpfloat(a.grouped_conv_channels[DDP_PRECISION_FP32], ==, 0);

  g_autoptr(DdpModel) m = model_from_text("g.model",
    "[model]\nname = g\n"
    "[layer dense]\nkind = conv\nforward_flops = 1e10\nbackward_flops = 2e10\nparams = dense.weight:64,64,3,3\n"
    "[layer grouped]\nkind = conv\ngroups = 32\nforward_flops = 1e10\nbackward_flops = 2e10\n"
    "params = grouped.weight:128,4,3,3\n"
    "[layer attn]\nkind = attention\nforward_flops = 1e10\nbackward_flops = 2.5e10\n");
  g_assert_cmpuint(m->layers[0].groups, ==, 1);
  g_assert_cmpuint(m->layers[1].groups, ==, 32);
  /* the generation floor: the dense conv keeps the H100's 304 015 ns (below the A100's
   * 1e10 / (19.5e3 · 0.90 · 0.90) + 2 000 = 635 111.7 ns); the grouped layer keeps the H100's
   * measured group term, 4 240 377 ns (closed form below), though the A100's would be 635 112 */
  g_assert_true(o.generation_floor);
  g_autoptr(DdpCompute) floored = ddp_compute_new(m, &h100, DDP_PRECISION_FP32, 1, DDP_OPTIMIZER_SGD, &o);
  g_assert_cmpint(ddp_compute_forward_ns(floored, 0), ==, 304015);
  g_assert_cmpint(ddp_compute_forward_ns(floored, 1), ==, 4240377);
  o.generation_floor = FALSE;   /* the H100 terms alone */
  g_autoptr(DdpCompute) c = ddp_compute_new(m, &h100, DDP_PRECISION_FP32, 1, DDP_OPTIMIZER_SGD, &o);
  /* dense FP32 conv: 67e3 · 0.70 · 1.30 = 60 970 FLOP/ns, ramp 140 µs:
   * 1e10 / 60 970 + 140 000 = 164 015.4 + 140 000 = 304 015.4 ns */
  g_assert_cmpint(ddp_compute_forward_ns(c, 0), ==, 304015);
  /* grouped, 4 input channels per group: rate × 4 / (4 + 96) = 2 438.8 FLOP/ns; the ramp is in
   * µs of full-speed work, so still 140 µs: 1e10 / 2 438.8 + 140 000 = 4 100 377.2 + 140 000 */
  g_assert_cmpint(ddp_compute_forward_ns(c, 1), ==, 4240377);
  /* attention on fp32 tensors: FP32 cores at 0.70 · 0.55 (attention_fp32_factor) = 25 795 FLOP/ns,
   * ramp 2 µs: 1e10 / 25 795 + 2 000 = 389 672.0 ns, + the head-layout copies (two kernels of no
   * bytes here: the 5 µs floor each) = 399 672.0 — and the same at TF32 (allow_tf32 does not reach
   * the memory-efficient SDPA kernel for float) */
  g_assert_cmpint(ddp_compute_forward_ns(c, 2), ==, 399672);
  g_autoptr(DdpCompute) t = ddp_compute_new(m, &h100, DDP_PRECISION_TF32, 1, DDP_OPTIMIZER_SGD, &o);
  g_assert_cmpint(ddp_compute_forward_ns(t, 2), ==, 399672);
  /* TF32 dense conv: 494.7e3 · 0.55 · 0.96 = 261 201.6 FLOP/ns, ramp 25 µs: 38 284.6 + 25 000; no
   * bytes in the model file, so no transposes */
  g_assert_cmpint(ddp_compute_forward_ns(t, 0), ==, 63285);
}

/* A weight-tied linear layer (GPT-2's lm_head: 768 → 50 257, no params key) has its GEMM dims
 * recovered from its costs; 50 257 is not a multiple of 8 (nor of 4), so at BF16 and at TF32 it runs
 * cuBLAS's alignment-1 kernels at 0.125 of the FP16 tensor peak: 989.4e3 · 0.125 = 123 675 FLOP/ns,
 * 79 047 426 048 / 123 675 + 2 000 (ramp) = 641 154.4 ns in either precision (the H100 traces: 120–123
 * TFLOP/s in bf16, 126 in TF32); the fp32 run, which does not care: FP32 at 67e3 · 0.70 = 46 900
 * FLOP/ns: 1 687 446.2 ns. */
static void
test_unaligned_gemm(void)
{
  DdpGpuSpec h100;
  g_assert_true(ddp_gpu_lookup("h100", &h100, NULL));
  g_autoptr(DdpModel) m = model_from_text("u.model",
    "[model]\nname = u\nseq_len = 1024\n"
    "[layer lm_head]\nkind = linear\nforward_flops = 79047426048\nbackward_flops = 158094852096\n"
    "forward_bytes = 208998400\nbackward_bytes = 417996800\n"
    "[layer norm]\nkind = norm\nforward_flops = 1\nbackward_flops = 1\nparams = norm.weight:768\n");
  g_autoptr(DdpCompute) b = ddp_compute_new(m, &h100, DDP_PRECISION_BF16, 1, DDP_OPTIMIZER_SGD, NULL);
  g_assert_cmpint(ddp_compute_forward_ns(b, 0), ==, 641154);
  g_autoptr(DdpCompute) t = ddp_compute_new(m, &h100, DDP_PRECISION_TF32, 1, DDP_OPTIMIZER_SGD, NULL);
  g_assert_cmpint(ddp_compute_forward_ns(t, 0), ==, 641154);
  g_autoptr(DdpCompute) f = ddp_compute_new(m, &h100, DDP_PRECISION_FP32, 1, DDP_OPTIMIZER_SGD, NULL);
  g_assert_cmpint(ddp_compute_forward_ns(f, 0), ==, 1687446);
  /* off: the aligned rate, 989.4e3 · 0.70 = 692 580 FLOP/ns: 114 134.7 + 2 000 */
  DdpComputeOptions o;
  ddp_compute_options_init_gpu(&o, &h100);
  o.unaligned_gemm_factor = 0;
  g_autoptr(DdpCompute) a = ddp_compute_new(m, &h100, DDP_PRECISION_BF16, 1, DDP_OPTIMIZER_SGD, &o);
  g_assert_cmpint(ddp_compute_forward_ns(a, 0), ==, 116135);
}

/* The memory-format kernels measured on the H100 (compute.c "Memory format";
 * calibrate/data/fc-vm-H100x1-20261127-memory-format.jsonl and its traces), in closed form at batch
 * 64, 132 SMs, the generation floor off:
 *  - transposes around NCHW tensor-core convolutions, the elements each pass moves (forward bytes / 4)
 *    at 4 190 (2-byte) or 3 120 (4-byte) elements per µs per SM: a stride-1 1×1 conv over 14 × 14
 *    positions (pw14: 1 003 520 forward bytes) 250 880 · 64 / 553.08 = 29 030.7 ns forward in fp16,
 *    / 411.84 = 38 986.8 ns in TF32, its backward (2 007 040 bytes) 58 061.5 ns; a stride-2 1×1 conv
 *    (ds: 4 816 896 bytes) 139 347.5 ns; a stride-1 1×1 conv over 56 × 56 positions (pw56) runs as a
 *    GEMM on NCHW: none.  channels_last: none.
 *  - batch norm (1.6e7 forward bytes, a 1 024-parameter layer): the byte model at 0.9 · 0.75 ·
 *    3 350 = 2 261.25 B/ns with its 1 µs ramp, (5.12e8 + 4 096 + 2 261 250) / 2 261.25 = 227 425.2 ns
 *    in fp16; NCHW fp16 is bound by elements, 2.56e8 / (5 100 · 0.132) = 380 273.3 ns; channels_last
 *    × 0.67 = 152 374.9 ns; bf16 runs PyTorch's kernels, 2.56e8 / (3 450 · 0.132) = 562 143.2 ns NCHW
 *    and 2.56e8 / (7 800 · 0.132) = 248 640.2 ns channels_last; fp32 NCHW keeps the bytes,
 *    (1.024e9 + 4 096 + 2 261 250) / 2 261.25 = 453 848.7 ns.
 *  - pooling (1e7 forward bytes) is bound by elements: 1.6e8 / (2 000 · 0.132) = 606 060.6 ns NCHW,
 *    1.6e8 / (2 600 · 0.132) = 466 200.5 ns channels_last.
 * With the floor on, the A100 runs the same kernels at its 108 SMs (slower): nothing is clipped. */
static void
test_memory_format(void)
{
  DdpGpuSpec h100;
  g_assert_true(ddp_gpu_lookup("h100", &h100, NULL));
  g_autoptr(DdpModel) m = model_from_text("f.model",
    "[model]\nname = f\n"
    "[layer pw56]\nkind = conv\nforward_flops = 102760448\nbackward_flops = 205520896\n"
    "forward_bytes = 4014080\nbackward_bytes = 8028160\nparams = pw56.weight:256,64,1,1\n"
    "[layer pw14]\nkind = conv\nforward_flops = 102760448\nbackward_flops = 205520896\n"
    "forward_bytes = 1003520\nbackward_bytes = 2007040\nparams = pw14.weight:1024,256,1,1\n"
    "[layer ds]\nkind = conv\nforward_flops = 205520896\nbackward_flops = 411041792\n"
    "forward_bytes = 4816896\nbackward_bytes = 9633792\nparams = ds.weight:512,256,1,1\n"
    "[layer bn]\nkind = norm\nforward_flops = 1\nbackward_flops = 1\nforward_bytes = 1.6e7\n"
    "backward_bytes = 3.2e7\nparams = bn.weight:512;bn.bias:512\n"
    "[layer pool]\nkind = pool\nforward_flops = 1\nbackward_flops = 1\nforward_bytes = 1e7\n"
    "backward_bytes = 1.5e7\n");
  DdpComputeOptions nchw, last;
  ddp_compute_options_init_gpu(&nchw, &h100);
  nchw.generation_floor = FALSE;
  last = nchw;
  last.channels_last = TRUE;
  const double batch = 64;
  g_autoptr(DdpCompute) h = ddp_compute_new(m, &h100, DDP_PRECISION_FP16, batch, DDP_OPTIMIZER_SGD, &nchw);
  g_autoptr(DdpCompute) hl = ddp_compute_new(m, &h100, DDP_PRECISION_FP16, batch, DDP_OPTIMIZER_SGD, &last);
  g_autoptr(DdpCompute) t = ddp_compute_new(m, &h100, DDP_PRECISION_TF32, batch, DDP_OPTIMIZER_SGD, &nchw);
  g_autoptr(DdpCompute) tl = ddp_compute_new(m, &h100, DDP_PRECISION_TF32, batch, DDP_OPTIMIZER_SGD, &last);
  g_assert_cmpint(ddp_compute_forward_ns(h, 0), ==, ddp_compute_forward_ns(hl, 0));
  g_assert_cmpint(ddp_compute_backward_ns(h, 0), ==, ddp_compute_backward_ns(hl, 0));
  g_assert_cmpfloat(fabs((double)(ddp_compute_forward_ns(h, 1) - ddp_compute_forward_ns(hl, 1)) - 29030.7), <=, 1.0);
  g_assert_cmpfloat(fabs((double)(ddp_compute_backward_ns(h, 1) - ddp_compute_backward_ns(hl, 1)) - 58061.5), <=, 1.0);
  g_assert_cmpfloat(fabs((double)(ddp_compute_forward_ns(t, 1) - ddp_compute_forward_ns(tl, 1)) - 38986.8), <=, 1.0);
  g_assert_cmpfloat(fabs((double)(ddp_compute_forward_ns(h, 2) - ddp_compute_forward_ns(hl, 2)) - 139347.5), <=, 1.0);
  g_assert_cmpfloat(fabs((double)ddp_compute_forward_ns(h, 3) - 380273.3), <=, 1.0);
  g_assert_cmpfloat(fabs((double)ddp_compute_forward_ns(hl, 3) - 152374.9), <=, 1.0);
  g_assert_cmpfloat(fabs((double)ddp_compute_forward_ns(h, 4) - 606060.6), <=, 1.0);
  g_assert_cmpfloat(fabs((double)ddp_compute_forward_ns(hl, 4) - 466200.5), <=, 1.0);
  g_autoptr(DdpCompute) f = ddp_compute_new(m, &h100, DDP_PRECISION_FP32, batch, DDP_OPTIMIZER_SGD, &nchw);
  g_assert_cmpfloat(fabs((double)ddp_compute_forward_ns(f, 3) - 453848.7), <=, 1.0);
  /* a 1×1 convolution takes the pointwise factor: FP32 67e3 · 0.70 · 0.50 = 23 450 FLOP/ns with a
   * 30 µs ramp, 102 760 448 · 64 / 23 450 + 30 000 = 310 455.0 ns (its bytes take 103 275.3) */
  g_assert_cmpfloat(fabs((double)ddp_compute_forward_ns(f, 0) - 310455.0), <=, 1.0);
  g_autoptr(DdpCompute) fl = ddp_compute_new(m, &h100, DDP_PRECISION_FP32, batch, DDP_OPTIMIZER_SGD, &last);
  g_assert_cmpint(ddp_compute_forward_ns(f, 1), ==, ddp_compute_forward_ns(fl, 1));   /* no tensor cores */
  g_autoptr(DdpCompute) b = ddp_compute_new(m, &h100, DDP_PRECISION_BF16, batch, DDP_OPTIMIZER_SGD, &nchw);
  g_autoptr(DdpCompute) bl = ddp_compute_new(m, &h100, DDP_PRECISION_BF16, batch, DDP_OPTIMIZER_SGD, &last);
  g_assert_cmpfloat(fabs((double)ddp_compute_forward_ns(b, 3) - 562143.2), <=, 1.0);
  g_assert_cmpfloat(fabs((double)ddp_compute_forward_ns(bl, 3) - 248640.2), <=, 1.0);
  /* the generation floor: the A100 runs the same kernels at 108 SMs, so nothing is clipped */
  DdpComputeOptions floored = nchw;
  floored.generation_floor = TRUE;
  g_autoptr(DdpCompute) hf = ddp_compute_new(m, &h100, DDP_PRECISION_FP16, batch, DDP_OPTIMIZER_SGD, &floored);
  for (guint i = 1; i < 5; i++) {
    g_assert_cmpint(ddp_compute_forward_ns(hf, i), ==, ddp_compute_forward_ns(h, i));
    g_assert_cmpint(ddp_compute_backward_ns(hf, i), ==, ddp_compute_backward_ns(h, i));
  }
}

/* A GPU nothing was fitted to: the same steps on an H200 (same SMs and clock as the H100, 4.8 TB/s of
 * HBM3e), measured 2026-11-27 (calibrate/data/fc-vm-H200x1-20261127-memory-format.jsonl, batch 256,
 * GPU-bound).  Its kernel classes confirm the per-SM rates: pooling and NCHW fp16 batch norm take
 * 1.00 and 0.94 of the H100's time, the byte-bound elementwise kernels 0.71–0.87.  Predicted
 * (`ddpsim predict --cluster dgx-h200 --gpus 1`, the plain module): within 10 % each, median 2.9 %
 * (6.9 % before the 1×1 convolution factors, 4.8 % before NCHW fp32 batch norm took the element
 * bound — a change made after looking at this H200's fp32 batch norm, 42.6 ms); before the H100's
 * memory-format kernels the channels_last rows were 26–28 % slow and the NCHW fp16 ones 13 % fast. */
static void
test_h200_rows(void)
{
  static const struct { const char *model, *precision; gboolean channels_last; double measured_ms; } rows[] = {
    { "resnet50", "tf32", FALSE, 115.5 }, { "resnet50", "fp16", FALSE, 82.8 }, { "vgg16", "tf32", FALSE, 179.9 },
    { "vgg16", "fp16", FALSE, 108.6 }, { "resnet50", "tf32", TRUE, 81.0 }, { "resnet50", "fp16", TRUE, 41.8 },
    { "vgg16", "tf32", TRUE, 140.2 }, { "vgg16", "fp16", TRUE, 70.9 },
  };
  double errors[G_N_ELEMENTS(rows)];
  for (gsize i = 0; i < G_N_ELEMENTS(rows); i++) {
    double ms = predict_on_ms("dgx-h200", rows[i].model, rows[i].precision, "256", FALSE, rows[i].channels_last);
    errors[i] = fabs(ms / rows[i].measured_ms - 1);
    g_test_message("H200 %s %s%s: measured %.1f ms, predicted %.1f (%+.1f %%)", rows[i].model, rows[i].precision,
                   rows[i].channels_last ? " channels_last" : "", rows[i].measured_ms, ms,
                   100 * (ms / rows[i].measured_ms - 1));
    g_assert_cmpfloat(errors[i], <=, 0.10);
  }
  qsort(errors, G_N_ELEMENTS(errors), sizeof errors[0], compare_doubles);
  g_assert_cmpfloat((errors[3] + errors[4]) / 2, <=, 0.035);
}

/* A bad groups value is one line naming file, group and key. */
static void
test_groups_errors(void)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(DdpKeyFile) kf = ddp_keyfile_load_data("g.model",
    "[model]\nname = g\n[layer c]\nkind = conv\ngroups = 0\nforward_flops = 1\nbackward_flops = 1\n", &error);
  g_assert_no_error(error);
  DdpModel *m = ddp_model_from_keyfile(kf, &error);
  g_assert_null(m);
  g_assert_nonnull(error);
  g_assert_nonnull(strstr(error->message, "g.model:5: layer c.groups"));
}

int
main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/h100/conv-attention-closed-forms", test_h100_conv);
  g_test_add_func("/h100/groups-errors", test_groups_errors);
  g_test_add_func("/h100/unaligned-gemm", test_unaligned_gemm);
  g_test_add_func("/h100/memory-format", test_memory_format);
  g_test_add_func("/h100/h200-rows", test_h200_rows);
  g_test_add_func("/h100/training-rows", test_rows);
  return g_test_run();
}
