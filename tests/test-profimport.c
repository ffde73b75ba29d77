/* Tests for profimport: a synthetic torch.profiler trace of tests/data/tiny.model with the real
 * event structure (tests/data/profiler/SOURCE), mapped onto the model and onto a variant with a
 * parameter-free layer; the stored layer times read back through the fit; every refusal; the
 * verb.  Expected times are derived by hand below. */
#include "profimport.h"
#include "fit.h"
#include "keyfile.h"
#include "run-ddpsim.h"

#include <glib/gstdio.h>
#include <math.h>
#include <string.h>

/* The fixture, step 1 (GPU µs of each backward node, in execution order):
 *   MseLossBackward0 5 | AddmmBackward0 30+40+2 (memset) = 72 | AccumulateGrad 3 | AccumulateGrad 0 |
 *   TBackward0 0 | ReluBackward0 8 | AddmmBackward0 50+20 = 70 | AccumulateGrad 4      total 162
 * Model backward order: fc2, fc1 (both anchors, kind linear ↔ AddmmBackward0).
 *   fc2 = loss 5 (before the first anchor, no free layer there) + 72 + AccumulateGrad 3 = 80
 *   fc1 = TBackward 0 + ReLU 8 (between the anchors, no free layer: to the next anchor) + 70 + 4 = 82
 * Step 2 has every duration × 1.5: fc2 120, fc1 123.  Averaged: fc2 100, fc1 102.5, total 202.5. */
#define FC2_US 100.0
#define FC1_US 102.5
#define TOTAL_US 202.5

static char *
trace_path(void)
{
  return g_test_build_filename(G_TEST_DIST, "data", "profiler", "tiny-2steps.json", NULL);
}

static char *
tiny_path(void)
{
  return g_test_build_filename(G_TEST_DIST, "data", "tiny.model", NULL);
}

static DdpModel *
model_from_text(const char *text)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(DdpKeyFile) kf = ddp_keyfile_load_data("inline.model", text, &error);
  g_assert_no_error(error);
  DdpModel *m = ddp_model_from_keyfile(kf, &error);
  g_assert_no_error(error);
  return m;
}

static DdpProfTrace *
parse_file(const char *path, const DdpModel *model, GError **error)
{
  g_autofree char *text = NULL;
  gsize length = 0;
  g_assert_true(g_file_get_contents(path, &text, &length, NULL));
  return ddp_prof_trace_parse(path, text, length, model, error);
}

static void
test_map_tiny(void)
{
  g_autofree char *mpath = tiny_path(), *tpath = trace_path();
  g_autoptr(GError) error = NULL;
  g_autoptr(DdpModel) model = ddp_model_load(mpath, &error);
  g_assert_no_error(error);
  g_autoptr(DdpProfTrace) t = parse_file(tpath, model, &error);
  g_assert_no_error(error);
  g_assert_cmpuint(t->steps, ==, 2);
  g_assert_cmpuint(t->backward_nodes, ==, 8);
  g_assert_cmpuint(t->anchors_model, ==, 2);
  g_assert_cmpuint(t->anchors_trace, ==, 2);
  g_assert_cmpuint(t->anchors_matched, ==, 2);
  g_assert_cmpuint(t->layers->len, ==, 2);
  const DdpProfLayerTime *l = (const DdpProfLayerTime *)(void *)t->layers->data;
  g_assert_cmpuint(l[0].layer, ==, 0);
  g_assert_cmpfloat_with_epsilon(l[0].backward_us, FC1_US, 1e-9);
  g_assert_cmpfloat_with_epsilon(l[1].backward_us, FC2_US, 1e-9);
  g_assert_true(l[0].anchored && l[1].anchored);
  /* nothing dropped: the layers add up to the trace's own backward GPU time */
  g_assert_cmpfloat_with_epsilon(t->total_backward_us, TOTAL_US, 1e-9);
  g_assert_cmpfloat_with_epsilon(l[0].backward_us + l[1].backward_us, t->total_backward_us, 1e-9);
  g_assert_cmpstr(t->gpu_name, ==, "NVIDIA H100 80GB HBM3");
  g_assert_cmpint(t->sm_arch, ==, 90);
  g_assert_cmpint(t->gpu_memory_bytes, ==, G_GINT64_CONSTANT(85031714816));
  g_assert_cmpstr(t->cuda_version, ==, "12.4");
}

/* The same trace on a model with a parameter-free layer "act" between fc1 and fc2: the ReLU's
 * 8 µs (step 1) and 12 µs (step 2) go to it, avg 10; fc1 keeps 70 + 4 (× 1.5): avg 92.5; fc2 100.
 * A second free layer "tail" before fc1 in forward order (after it in backward order) takes what
 * runs after the last anchor: nothing here, so 0. */
static void
test_map_free_layers(void)
{
  g_autoptr(DdpModel) model = model_from_text(
    "[model]\nname = tiny-act\n"
    "[layer tail]\nkind = elementwise\nforward_flops = 1\nbackward_flops = 1\nbackward_bytes = 50\n"
    "[layer fc1]\nkind = linear\nforward_flops = 67108864\nbackward_flops = 134217728\nparams = fc1.weight:1024,1024;fc1.bias:1024\n"
    "[layer act]\nkind = elementwise\nforward_flops = 1024\nbackward_flops = 1024\nbackward_bytes = 100\n"
    "[layer fc2]\nkind = linear\nforward_flops = 67108864\nbackward_flops = 134217728\nparams = fc2.weight:1024,1024;fc2.bias:1024\n");
  g_autofree char *tpath = trace_path();
  g_autoptr(GError) error = NULL;
  g_autoptr(DdpProfTrace) t = parse_file(tpath, model, &error);
  g_assert_no_error(error);
  const DdpProfLayerTime *l = (const DdpProfLayerTime *)(void *)t->layers->data;
  g_assert_cmpfloat_with_epsilon(l[0].backward_us, 0, 1e-12);     /* tail */
  g_assert_cmpfloat_with_epsilon(l[1].backward_us, 92.5, 1e-9);   /* fc1 */
  g_assert_cmpfloat_with_epsilon(l[2].backward_us, 10, 1e-9);     /* act */
  g_assert_cmpfloat_with_epsilon(l[3].backward_us, FC2_US, 1e-9); /* fc2 */
  g_assert_false(l[2].anchored);
  g_assert_cmpfloat_with_epsilon(l[0].backward_us + l[1].backward_us + l[2].backward_us + l[3].backward_us,
                                 TOTAL_US, 1e-9);
}

/* An extra weight-bearing op (a tied LM head's MmBackward0 before everything) is skipped by the
 * alignment instead of shifting the layers: it is a gap before the first anchor, and goes to the
 * first anchor's layer (fc2): fc2 = 6 + 10 = 16, fc1 = 20. */
static void
test_map_extra_op(void)
{
  const char *trace =
    "{\"traceEvents\": ["
    "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"autograd::engine::evaluate_function: MmBackward0\",\"pid\":1,\"tid\":2,\"ts\":100,\"dur\":10},"
    "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":1,\"tid\":2,\"ts\":101,\"dur\":1,\"args\":{\"correlation\":1}},"
    "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\",\"pid\":0,\"tid\":7,\"ts\":105,\"dur\":6,\"args\":{\"correlation\":1}},"
    "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"autograd::engine::evaluate_function: AddmmBackward0\",\"pid\":1,\"tid\":2,\"ts\":200,\"dur\":10},"
    "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":1,\"tid\":2,\"ts\":201,\"dur\":1,\"args\":{\"correlation\":2}},"
    "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\",\"pid\":0,\"tid\":7,\"ts\":205,\"dur\":10,\"args\":{\"correlation\":2}},"
    "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"autograd::engine::evaluate_function: AddmmBackward0\",\"pid\":1,\"tid\":2,\"ts\":300,\"dur\":10},"
    "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":1,\"tid\":2,\"ts\":301,\"dur\":1,\"args\":{\"correlation\":3}},"
    "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\",\"pid\":0,\"tid\":7,\"ts\":305,\"dur\":20,\"args\":{\"correlation\":3}}"
    "]}";
  g_autofree char *mpath = tiny_path();
  g_autoptr(GError) error = NULL;
  g_autoptr(DdpModel) model = ddp_model_load(mpath, &error);
  g_autoptr(DdpProfTrace) t = ddp_prof_trace_parse("lm.json", trace, strlen(trace), model, &error);
  g_assert_no_error(error);
  g_assert_cmpuint(t->steps, ==, 1);
  g_assert_cmpuint(t->anchors_trace, ==, 3);
  g_assert_cmpuint(t->anchors_matched, ==, 2);
  const DdpProfLayerTime *l = (const DdpProfLayerTime *)(void *)t->layers->data;
  g_assert_cmpfloat_with_epsilon(l[1].backward_us, 16, 1e-9);
  g_assert_cmpfloat_with_epsilon(l[0].backward_us, 20, 1e-9);
  g_assert_cmpstr(t->gpu_name, ==, "");
}

static void
test_errors(void)
{
  g_autofree char *mpath = tiny_path();
  g_autoptr(GError) error = NULL;
  g_autoptr(DdpModel) tiny = ddp_model_load(mpath, &error);
  g_assert_no_error(error);
  static const struct { const char *text, *message; } cases[] = {
    { "not json at all", "t.json: not JSON" },
    { "{\"name\": \"something else\"}", "t.json: JSON but not a Chrome trace" },
    { "{\"traceEvents\": [{\"ph\":\"X\",\"name\":\"aten::mm\",\"ts\":1,\"dur\":2}]}", "t.json: no backward node" },
    { "{\"traceEvents\": [{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"autograd::engine::evaluate_function: AddmmBackward0\","
      "\"pid\":1,\"tid\":1,\"ts\":1,\"dur\":2}]}", "t.json: 1 backward nodes but no GPU kernel linked to them" },
    { "[{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"autograd::engine::evaluate_function: ConvolutionBackward0\","
      "\"pid\":1,\"tid\":1,\"ts\":1,\"dur\":20},"
      "{\"ph\":\"X\",\"cat\":\"cuda_runtime\",\"name\":\"cudaLaunchKernel\",\"pid\":1,\"tid\":1,\"ts\":2,\"dur\":1,\"args\":{\"correlation\":9}},"
      "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\",\"pid\":0,\"tid\":7,\"ts\":5,\"dur\":6,\"args\":{\"correlation\":9}}]",
      "t.json: only 0 of tiny's 2 weight-bearing layers match the trace's 1 weight-bearing backward ops" },
  };
  for (gsize i = 0; i < G_N_ELEMENTS(cases); i++) {
    g_autoptr(DdpProfTrace) t = ddp_prof_trace_parse("t.json", cases[i].text, strlen(cases[i].text), tiny, &error);
    g_assert_null(t);
    g_assert_error(error, DDP_FIT_ERROR, DDP_FIT_ERROR_IMPORT);
    if (!g_str_has_prefix(error->message, cases[i].message))
      g_error("case %zu: \"%s\" does not start with \"%s\"", i, error->message, cases[i].message);
    g_assert_null(strchr(error->message, '\n'));
    g_clear_error(&error);
  }
  /* the trace of another network: resnet50 has 107 weight-bearing layers, the trace 2 */
  g_autoptr(DdpModel) resnet = ddp_model_load("resnet50", &error);
  if (resnet) {
    g_autofree char *tpath = trace_path();
    g_assert_null(parse_file(tpath, resnet, &error));
    g_assert_error(error, DDP_FIT_ERROR, DDP_FIT_ERROR_IMPORT);
    g_assert_nonnull(strstr(error->message, "is this a trace of resnet50"));
  }
  g_clear_error(&error);
  /* import options */
  g_autoptr(DdpCalibDb) db = ddp_calibdb_open(":memory:", DDP_CALIBDB_WRITE, &error);
  g_autofree char *tpath = trace_path();
  gboolean again;
  DdpProfImportOptions no_batch = { mpath, NULL, NULL };
  g_assert_cmpint(ddp_prof_import(db, tpath, &no_batch, &again, &error), ==, 0);
  g_assert_error(error, DDP_FIT_ERROR, DDP_FIT_ERROR_IMPORT);
  g_assert_true(g_str_has_prefix(error->message, "--batch:"));
  g_clear_error(&error);
  DdpProfImportOptions bad_precision = { mpath, "32", "fp8" };
  g_assert_cmpint(ddp_prof_import(db, tpath, &bad_precision, &again, &error), ==, 0);
  g_assert_true(g_str_has_prefix(error->message, "--precision:"));
  g_clear_error(&error);
  g_autoptr(GPtrArray) runs = ddp_calibdb_runs(db, NULL);
  g_assert_cmpuint(runs->len, ==, 0);
}

/* Stored, fitted, looked up.  fc1 and fc2 have the same shapes and FLOPs, hence one signature
 * (fit.h: the layer times of identical layers are averaged): (100 + 102.5)/2 = 101.25 µs backward
 * at fp32 and batch 32, no forward (-1: the model's stays); at batch 64, proportional: 202.5.  No
 * kernel efficiency is fitted from profiler layer times. */
static void
test_import_fit(void)
{
  g_autofree char *mpath = tiny_path(), *tpath = trace_path();
  g_autoptr(GError) error = NULL;
  g_autoptr(DdpCalibDb) db = ddp_calibdb_open(":memory:", DDP_CALIBDB_WRITE, &error);
  DdpProfImportOptions o = { mpath, "32", "fp32" };
  gboolean again = TRUE;
  gint64 run = ddp_prof_import(db, tpath, &o, &again, &error);
  g_assert_no_error(error);
  g_assert_cmpint(run, ==, 1);
  g_assert_false(again);
  g_autoptr(DdpCalibRun) r = ddp_calibdb_run_get(db, run, &error);
  g_assert_cmpstr(r->gpu_name, ==, "NVIDIA H100 80GB HBM3");
  g_assert_cmpint(r->ranks, ==, 1);
  g_assert_cmpint(r->n_kernel_points, ==, 2);
  g_assert_nonnull(strstr(r->note, "2 steps, 8 backward nodes per step, 202.5 us"));
  g_auto(DdpCalibImport) import = { 0 };
  g_assert_true(ddp_calibdb_import_get(db, run, &import, &error));
  g_assert_cmpstr(import.format, ==, "torch-profiler");
  g_assert_cmpint(ddp_prof_import(db, tpath, &o, &again, &error), ==, run);
  g_assert_true(again);

  g_autoptr(DdpFit) fit = ddp_fit_from_db(db, NULL, 0, NULL, &error);
  g_assert_no_error(error);
  g_assert_cmpstr(ddp_fit_header(fit)->gpu_spec, ==, "h100");
  guint n;
  ddp_fit_kernel_rows(fit, &n);
  g_assert_cmpuint(n, ==, 0);
  g_autoptr(DdpModel) model = ddp_model_load(mpath, &error);
  g_autofree char *fc2 = ddp_fit_layer_signature(model, 1);
  double fwd = 0, bwd = 0;
  g_assert_true(ddp_fit_layer_time(fit, fc2, DDP_PRECISION_FP32, 32, &fwd, &bwd));
  g_assert_cmpfloat(fwd, <, 0);
  g_assert_cmpfloat_with_epsilon(bwd, 101.25, 1e-9);
  g_assert_true(ddp_fit_layer_time(fit, fc2, DDP_PRECISION_FP32, 64, NULL, &bwd));
  g_assert_cmpfloat_with_epsilon(bwd, 202.5, 1e-9);
  g_assert_false(ddp_fit_layer_time(fit, fc2, DDP_PRECISION_FP16, 32, NULL, &bwd));
  g_assert_true(ddp_calibdb_check(db, &error));
}

/* `ddpsim fit --import TRACE`: --model is required with a trace (exit 2); then the fit lists the
 * layer time, and `predict --calibration` on an A100 cluster warns that the GPU differs. */
static void
test_cli(void)
{
  if (!g_getenv("DDPSIM")) {
    g_test_skip("DDPSIM is not set (make check sets it)");
    return;
  }
  g_autofree char *mpath = tiny_path(), *tpath = trace_path();
  g_autofree char *dir = g_dir_make_tmp("test-profimport-XXXXXX", NULL);
  g_autofree char *db = g_build_filename(dir, "calib.db", NULL);
  {
    g_auto(Run) r = { 0 };
    run(&r, "fit", "--db", db, "--import", tpath, NULL);
    g_assert_cmpint(r.status, ==, 2);
    g_assert_nonnull(strstr(r.err, "needs --model"));
    g_assert_false(g_file_test(db, G_FILE_TEST_EXISTS));
  }
  {
    g_auto(Run) r = { 0 };
    run(&r, "fit", "--db", db, "--import", tpath, "--model", mpath, "--batch", "32", "--json", NULL);
    g_assert_cmpint(r.status, ==, 0);
    g_assert_nonnull(strstr(r.err, "torch.profiler trace imported as run 1"));
    /* fc1 and fc2 share one signature: one layer row, (100 + 102.5)/2 */
    g_assert_nonnull(strstr(r.out, "\"backward_us\": 101.25\n"));
  }
  {
    g_auto(Run) r = { 0 };
    run(&r, "predict", "--model", mpath, "--cluster", "dgx-a100", "--gpus", "8", "--calibration", db, NULL);
    g_assert_cmpint(r.status, ==, 0);
    g_assert_nonnull(strstr(r.err, "warning: calibration measured NVIDIA H100 80GB HBM3 (h100) but the cluster's "
                                   "GPU is A100-SXM4-80GB"));
  }
  static const char *const suffixes[] = { "", "-wal", "-shm" };
  for (gsize i = 0; i < G_N_ELEMENTS(suffixes); i++) {
    g_autofree char *p = g_strconcat(db, suffixes[i], NULL);
    g_remove(p);
  }
  g_rmdir(dir);
}

/* A real trace: torch.profiler on one H100 (calibrate/data/README.md), ResNet-50 fp32, batch 32,
 * one step, gzip-compressed as tools/measure-torch.py stores it.  Every weight-bearing op matches
 * (53 ConvolutionBackward0 + 53 CudnnBatchNormBackward0 + 1 AddmmBackward0 = 107, as the model's
 * 53 conv + 53 norm + 1 linear layers with parameters), and the layer times add up to the trace's
 * own sum, computed independently of ddpsim: Σ dur of the kernel/memcpy/memset spans whose
 * args.correlation is a cuda_runtime launch of the autograd thread (pid 417, tid 447) = 29 880.821 µs
 * (python3: json.load, filter, sum).  For comparison the step's backward measured with CUDA events
 * is 30.81 ms (…-torch-steps.jsonl): the 3 % between them is the GPU's idle gaps between kernels. */
static void
test_real_resnet50(void)
{
  g_autofree char *path = g_test_build_filename(G_TEST_DIST, "..", "calibrate", "data", "traces",
                                                "fc-vm-H100x1-20261123-resnet50-fp32-b32.json.gz", NULL);
  if (!g_file_test(path, G_FILE_TEST_EXISTS)) {
    g_test_skip("the real H100 trace is not in this tree");
    return;
  }
  g_autoptr(GError) error = NULL;
  g_autoptr(DdpCalibDb) db = ddp_calibdb_open(":memory:", DDP_CALIBDB_WRITE, &error);
  g_autofree char *model_path = g_test_build_filename(G_TEST_DIST, "..", "models", "resnet50.model", NULL);
  DdpProfImportOptions o = { model_path, "32", "fp32" };
  gboolean again;
  gint64 run = ddp_prof_import(db, path, &o, &again, &error);
  g_assert_no_error(error);
  g_autoptr(DdpCalibRun) r = ddp_calibdb_run_get(db, run, &error);
  g_assert_cmpstr(r->gpu_name, ==, "NVIDIA H100 80GB HBM3");
  g_assert_cmpint(r->n_kernel_points, ==, 125);          /* one per model layer */
  g_assert_nonnull(strstr(r->note, "1 step, 339 backward nodes per step"));
  g_assert_nonnull(strstr(r->note, "107 of 107 weight-bearing layers matched (107 weight-bearing ops"));
  g_autoptr(GArray) points = ddp_calibdb_kernel_points(db, &run, 1, &error);
  double sum = 0;
  guint anchored = 0;
  for (guint i = 0; i < points->len; i++) {
    const DdpCalibKernelPoint *p = &g_array_index(points, DdpCalibKernelPoint, i);
    g_assert_cmpfloat(p->time_us, >=, 0);
    sum += p->time_us;
    anchored += g_strcmp0(p->algo, "anchored") == 0;
  }
  g_assert_cmpuint(anchored, ==, 107);
  g_assert_cmpfloat(fabs(sum - 29880.821), <, 1e-3);
}

int
main(int argc, char **argv)
{
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/profimport/map/tiny", test_map_tiny);
  g_test_add_func("/profimport/map/free-layers", test_map_free_layers);
  g_test_add_func("/profimport/map/extra-op", test_map_extra_op);
  g_test_add_func("/profimport/errors", test_errors);
  g_test_add_func("/profimport/import-fit", test_import_fit);
  g_test_add_func("/profimport/cli", test_cli);
  g_test_add_func("/profimport/real/resnet50-h100", test_real_resnet50);
  return g_test_run();
}
