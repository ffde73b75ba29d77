/* model — a neural network as DDP sees it: layers in forward order, each with its parameter
 * tensors (PyTorch names, shapes, dtypes, in registration order) and its per-sample forward and
 * backward FLOPs, bytes moved and saved activations; optionally measured times and the order in
 * which autograd makes gradients ready (docs/model.md §1.3: the rebuild uses the observed ready order).
 * File format: models/README.md.  Loaded and validated here only. */
#ifndef DDP_MODEL_H
#define DDP_MODEL_H

#include <glib.h>
#include "keyfile.h"

typedef enum { DDP_DTYPE_FP32, DDP_DTYPE_FP16, DDP_DTYPE_BF16, DDP_DTYPE_FP64, DDP_DTYPE_COUNT } DdpDtype;

typedef enum {
  DDP_LAYER_CONV, DDP_LAYER_LINEAR, DDP_LAYER_NORM, DDP_LAYER_EMBEDDING, DDP_LAYER_ATTENTION,
  DDP_LAYER_ELEMENTWISE, DDP_LAYER_POOL, DDP_LAYER_OTHER, DDP_LAYER_KIND_COUNT
} DdpLayerKind;

typedef struct {
  char *name;          /* as in model.named_parameters() */
  gint64 numel;
  gint64 shape[8];
  int ndim;
  DdpDtype dtype;
  gboolean sparse;     /* expects sparse gradients: always a bucket of its own (docs/model.md §1.2) */
  guint layer;         /* index of the layer that owns it */
} DdpParam;

/* How a layer's per-sample costs follow the input size (ddp_model_scale_input). */
typedef enum { DDP_SCALING_LINEAR, DDP_SCALING_QUADRATIC, DDP_SCALING_FIXED, DDP_SCALING_COUNT } DdpLayerScaling;

typedef struct {
  char *name;
  DdpLayerKind kind;
  DdpLayerScaling scaling;  /* "scaling" key; linear by default */
  double forward_flops;     /* per sample */
  double backward_flops;    /* per sample, dX + dW */
  double forward_bytes;     /* HBM traffic per sample */
  double backward_bytes;
  double activation_bytes;  /* saved for backward, per sample */
  double forward_us;        /* measured at measured_batch; < 0 when absent */
  double backward_us;
  guint first_param;        /* this layer's params are params[first_param .. first_param+n_params) */
  guint n_params;
  guint groups;             /* convolution groups (nn.Conv2d groups=); 1 when dense */
} DdpLayer;

typedef struct {
  char *name;
  char *source;             /* where the definition comes from (torchvision, HuggingFace, exporter) */
  char *path;               /* file it was loaded from */
  char *input;              /* per-sample input description, e.g. "3x224x224" or "1024 tokens" */
  DdpLayer *layers;         /* forward order */
  guint n_layers;
  DdpParam *params;         /* grouped by layer, layers in forward order */
  guint n_params;
  guint *registration_order;/* n_params indices into params: model.parameters() order (the walk of
                               the construction-time bucket assignment); identity unless the file
                               gives param_order */
  guint *ready_order;       /* n_params indices into params: the order gradients become ready */
  guint *backward_layers;   /* n_layers indices into layers: the order backward runs them */
  gint64 buffer_bytes;      /* module buffers broadcast before every forward (broadcast_buffers) */
  double measured_batch;    /* batch the measured times refer to; 0 when none are given */
  gint64 seq_len;           /* tokens per sample the costs are for; 0 when not a token model */
  gint64 image_size;        /* image side in pixels the costs are for; 0 when not an image model */
  int training_precision;   /* the model's usual training precision (DdpPrecision order: fp32, tf32,
                               fp16, bf16), the default when neither a scenario nor a flag sets one;
                               -1 when the file gives none */
  double training_batch;    /* the model's usual per-GPU batch, the same way; 0 when none */
  int training_optimizer;   /* the model's usual optimizer (DdpOptimizer order: sgd, sgd-momentum, adam,
                               adamw), the same way; -1 when none */
  /* [model] fsdp_units: the modules the file wraps as FSDP units (as ModuleWrapPolicy or wrap()
   * would), in forward order; 0 and NULL when the file names none (fsdp.c's auto-wrap policy).
   * Validated here: each names consecutive layers that hold parameters, none inside another. */
  guint n_fsdp_units;
  char **fsdp_units;        /* [n_fsdp_units] module paths */
  guint *fsdp_layer_unit;   /* [n_layers]: 0 for the root, k for fsdp_units[k-1] */
  guint fsdp_units_line;    /* the key's line in path (for messages about it elsewhere); 0: absent */
  double block_input_bytes; /* [model] block_input_bytes: per sample, fp32, what one block (see
                               ddp_model_block_prefix) takes in — the tensor activation checkpointing
                               keeps for it; 0 when the file gives none */
} DdpModel;

#define DDP_MODEL_ERROR (ddp_model_error_quark())
GQuark ddp_model_error_quark(void);
typedef enum { DDP_MODEL_ERROR_NOT_FOUND, DDP_MODEL_ERROR_INVALID } DdpModelError;

/* Loads a model by path, or by bare name from the installed models directory (NAME.model). */
DdpModel *ddp_model_load(const char *name_or_path, GError **error);
DdpModel *ddp_model_from_keyfile(const DdpKeyFile *kf, GError **error);
void ddp_model_free(DdpModel *model);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(DdpModel, ddp_model_free)

/* Rescales per-sample costs to another input size (0: keep); see model.c for the rules. */
gboolean ddp_model_scale_input(DdpModel *model, guint seq_len, guint image_size, GError **error);

/* Whether layer @layer belongs to module @module: it is the module ("model.norm"), one of its
 * submodules or pseudo-layers ("model.layers.0.mlp.up_proj", "model.layers.0.attn_residual") or a
 * further call of it ("encoder.layer.0.attention#2"; models/README.md, layer names). */
gboolean ddp_model_module_contains(const char *module, const char *layer);

/* The block a layer belongs to: its name up to its first all-digit component, not the last one
 * ("model.layers.3" for "model.layers.3.mlp.up_proj"; "layer1.0" for "layer1.0.conv1"), as
 * transformer_auto_wrap_policy and apply_activation_checkpointing find a model's repeated blocks;
 * NULL outside every block.  Returns: (transfer full) (nullable). */
char *ddp_model_block_prefix(const char *layer_name);

/* Each layer's block: @layer_block[l] (caller-allocated, n_layers) is the block's index in forward
 * order, or -1 outside every block: the modules the file names in fsdp_units where it does, else
 * consecutive layers with one ddp_model_block_prefix.  Returns the number of blocks. */
guint ddp_model_layer_blocks(const DdpModel *model, int *layer_block);

/* Whether activation checkpointing can wrap @model's blocks: it needs blocks and [model]
 * block_input_bytes.  When not, *@why (may be NULL) says which is missing (static text). */
gboolean ddp_model_checkpointable(const DdpModel *model, const char **why);

/* Whether any layer of @model is of @kind. */
gboolean ddp_model_has_kind(const DdpModel *model, DdpLayerKind kind);

/* Whether @layer is a BatchNorm: a norm layer of a convolutional model that keeps module buffers
 * (running statistics; LayerNorm and RMSNorm keep none). */
gboolean ddp_model_layer_is_batch_norm(const DdpModel *model, guint layer);
/* Whether any layer of @model is a BatchNorm (ddp_model_layer_is_batch_norm). */
gboolean ddp_model_has_batch_norm(const DdpModel *model);

gint64 ddp_model_param_count(const DdpModel *model);
gint64 ddp_model_param_bytes(const DdpModel *model);
double ddp_model_forward_flops(const DdpModel *model);  /* per sample */
gsize ddp_dtype_size(DdpDtype dtype);
const char *ddp_dtype_name(DdpDtype dtype);
int ddp_dtype_parse(const char *name);                  /* -1 if unknown */
const char *ddp_layer_kind_name(DdpLayerKind kind);

#endif
