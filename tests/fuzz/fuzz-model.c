/* fuzz-model — model files (src/model.c through src/keyfile.c), then the bucket layouts the
 * simulator builds from any model it accepts. */
#include "fuzz.h"

#include "bucket.h"
#include "model.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  g_autoptr(DdpKeyFile) kf = fuzz_keyfile(data, size, "fuzz.model");
  if (!kf)
    return 0;
  g_autoptr(GError) error = NULL;
  g_autoptr(DdpModel) model = ddp_model_from_keyfile(kf, &error);
  if (!model) {
    fuzz_check_error(error);
    return 0;
  }
  FUZZ_REQUIRE(model->n_layers >= 1 && model->n_layers <= DDP_MAX_LAYERS);
  FUZZ_REQUIRE(model->n_params >= 1 && model->n_params <= DDP_MAX_PARAMS);
  FUZZ_REQUIRE(ddp_model_param_bytes(model) > 0 && ddp_model_param_bytes(model) <= DDP_MAX_MODEL_BYTES);
  DdpBucketOptions options;
  ddp_bucket_options_init(&options);
  g_autoptr(DdpBucketLayout) initial = ddp_bucket_layout_initial(model, &options);
  g_autoptr(DdpBucketLayout) steady = ddp_bucket_layout_steady(model, &options);
  FUZZ_REQUIRE(ddp_bucket_layout_count(initial) >= 1 && ddp_bucket_layout_count(steady) >= 1);
  return 0;
}
