/* model — loads and validates a model file (format: models/README.md).
 *
 * What DDP needs from a model (docs/model.md §1): the parameters in model.parameters() order (this is
 * the order the initial bucket assignment walks), their byte sizes and dtypes (buckets are per
 * dtype), and the order gradients become ready (the rebuild walks it).  What the compute model
 * needs: per-layer FLOPs and bytes, or measured times.  Backward runs the layers in reverse
 * forward order; a parameter's gradient is ready when its layer's backward ends.  The default
 * ready order is therefore "layers in reverse, and inside a layer the parameters in reverse
 * registration order" — which reproduces PyTorch's real ResNet-50 rebuild exactly (bucket tests).
 */
#include "model.h"

#include "datadir.h"
#include "suggest.h"

#include <errno.h>
#include <string.h>

G_DEFINE_QUARK(ddp-model-error-quark, ddp_model_error)

static const char *const dtype_names[DDP_DTYPE_COUNT + 1] = { "fp32", "fp16", "bf16", "fp64", NULL };
static const gsize dtype_sizes[DDP_DTYPE_COUNT] = { 4, 2, 2, 8 };
static const char *const kind_names[DDP_LAYER_KIND_COUNT + 1] = {
  "conv", "linear", "norm", "embedding", "attention", "elementwise", "pool", "other", NULL
};

gsize
ddp_dtype_size(DdpDtype dtype)
{
  g_return_val_if_fail(dtype < DDP_DTYPE_COUNT, 0);
  return dtype_sizes[dtype];
}

const char *
ddp_dtype_name(DdpDtype dtype)
{
  g_return_val_if_fail(dtype < DDP_DTYPE_COUNT, "?");
  return dtype_names[dtype];
}

int
ddp_dtype_parse(const char *name)
{
  for (int i = 0; i < DDP_DTYPE_COUNT; i++)
    if (g_ascii_strcasecmp(name, dtype_names[i]) == 0)
      return i;
  if (g_ascii_strcasecmp(name, "float32") == 0 || g_ascii_strcasecmp(name, "float") == 0)
    return DDP_DTYPE_FP32;
  if (g_ascii_strcasecmp(name, "float16") == 0 || g_ascii_strcasecmp(name, "half") == 0)
    return DDP_DTYPE_FP16;
  if (g_ascii_strcasecmp(name, "bfloat16") == 0)
    return DDP_DTYPE_BF16;
  return -1;
}

const char *
ddp_layer_kind_name(DdpLayerKind kind)
{
  g_return_val_if_fail(kind < DDP_LAYER_KIND_COUNT, "?");
  return kind_names[kind];
}

void
ddp_model_free(DdpModel *model)
{
  if (!model)
    return;
  for (guint i = 0; i < model->n_layers; i++)
    g_free(model->layers[i].name);
  for (guint i = 0; i < model->n_params; i++)
    g_free(model->params[i].name);
  g_free(model->layers);
  g_free(model->params);
  g_free(model->ready_order);
  g_free(model->registration_order);
  g_free(model->backward_layers);
  g_strfreev(model->fsdp_units);
  g_free(model->fsdp_layer_unit);
  g_free(model->name);
  g_free(model->source);
  g_free(model->path);
  g_free(model->input);
  g_free(model);
}

/* Parses one "NAME:SHAPE[:DTYPE][:sparse]" entry of a params list. */
static gboolean
parse_param(const DdpKeyFile *kf, const char *group, const char *text, DdpDtype default_dtype,
            DdpParam *param, GError **error)
{
  g_auto(GStrv) fields = g_strsplit(text, ":", -1);
  guint n = g_strv_length(fields);
  if (n < 2 || n > 4 || *g_strstrip(fields[0]) == '\0') {
    ddp_keyfile_set_error(kf, error, DDP_KEYFILE_ERROR_VALUE, group, "params",
                          "\"%s\" is not NAME:SHAPE[:DTYPE][:sparse]", text);
    return FALSE;
  }
  param->name = g_strdup(fields[0]);
  param->numel = 1;
  param->ndim = 0;
  param->dtype = default_dtype;
  g_strstrip(fields[1]);
  if (*fields[1] != '\0') {
    g_auto(GStrv) dims = g_strsplit(fields[1], ",", -1);
    for (guint d = 0; dims[d]; d++) {
      char *end = NULL;
      errno = 0;
      gint64 v = g_ascii_strtoll(g_strstrip(dims[d]), &end, 10);
      /* a tensor of at most 2^50 bytes (ranges.h DDP_RANGE_TENSOR_BYTES): byte sums cannot overflow */
      if (d >= G_N_ELEMENTS(param->shape) || end == dims[d] || *end != '\0' || errno || v < 1 ||
          param->numel > (gint64)DDP_RANGE_TENSOR_BYTES.max / 8 / v) {
        ddp_keyfile_set_error(kf, error, DDP_KEYFILE_ERROR_VALUE, group, "params",
                              "%s: bad shape \"%s\" (1 to 8 positive dimensions, comma-separated, at most 2^47 elements)",
                              param->name, fields[1]);
        return FALSE;
      }
      param->shape[param->ndim++] = v;
      param->numel *= v;
    }
  }
  for (guint f = 2; f < n; f++) {
    g_strstrip(fields[f]);
    int dtype;
    if (g_ascii_strcasecmp(fields[f], "sparse") == 0)
      param->sparse = TRUE;
    else if ((dtype = ddp_dtype_parse(fields[f])) >= 0)
      param->dtype = dtype;
    else {
      ddp_keyfile_set_error(kf, error, DDP_KEYFILE_ERROR_VALUE, group, "params",
                            "%s: \"%s\" is neither a dtype (fp32|fp16|bf16|fp64) nor \"sparse\"",
                            param->name, fields[f]);
      return FALSE;
    }
  }
  return TRUE;
}

/* [model] training_precision: the model's usual precision, in DdpPrecision order (gpu.h) */
static const char *const training_precision_names[] = { "fp32", "tf32", "fp16", "bf16", NULL };
/* [model] training_optimizer: its usual optimizer, in DdpOptimizer order (compute.h) */
static const char *const training_optimizer_names[] = { "sgd", "sgd-momentum", "adam", "adamw", NULL };

static const char *const model_keys[] = {
  "name", "source", "input", "dtype", "buffer_bytes", "measured_batch", "ready_order", "param_order",
  "seq_len", "image_size", "training_precision", "training_batch", "training_optimizer", "fsdp_units",
  "block_input_bytes", NULL
};
static const char *const scaling_names[DDP_SCALING_COUNT + 1] = { "linear", "quadratic", "fixed", NULL };
static const char *const layer_keys[] = {
  "kind", "forward_flops", "backward_flops", "forward_bytes", "backward_bytes",
  "activation_bytes", "forward_us", "backward_us", "params", "scaling", "groups", NULL
};

static gboolean
parse_layer(const DdpKeyFile *kf, const char *group, DdpModel *model, GArray *layers,
            GArray *params, GHashTable *param_index, DdpDtype default_dtype, GError **error)
{
  if (!ddp_keyfile_check_keys(kf, group, layer_keys, error))
    return FALSE;
  DdpLayer layer = { 0 };
  layer.forward_us = layer.backward_us = -1;
  layer.first_param = params->len;
  int kind = DDP_LAYER_OTHER, scaling = DDP_SCALING_LINEAR;
  if (!ddp_keyfile_get_choice(kf, group, "kind", TRUE, kind_names, &kind, error) ||
      !ddp_keyfile_get_choice(kf, group, "scaling", FALSE, scaling_names, &scaling, error) ||
      !ddp_keyfile_get_ranged(kf, group, "forward_flops", TRUE, &DDP_RANGE_FLOPS, &layer.forward_flops, error) ||
      !ddp_keyfile_get_ranged(kf, group, "backward_flops", TRUE, &DDP_RANGE_FLOPS, &layer.backward_flops, error) ||
      !ddp_keyfile_get_ranged(kf, group, "forward_bytes", FALSE, &DDP_RANGE_BYTES, &layer.forward_bytes, error) ||
      !ddp_keyfile_get_ranged(kf, group, "backward_bytes", FALSE, &DDP_RANGE_BYTES, &layer.backward_bytes, error) ||
      !ddp_keyfile_get_ranged(kf, group, "activation_bytes", FALSE, &DDP_RANGE_BYTES, &layer.activation_bytes, error) ||
      !ddp_keyfile_get_ranged(kf, group, "forward_us", FALSE, &DDP_RANGE_LAYER_US, &layer.forward_us, error) ||
      !ddp_keyfile_get_ranged(kf, group, "backward_us", FALSE, &DDP_RANGE_LAYER_US, &layer.backward_us, error))
    return FALSE;
  double groups = 1;
  if (!ddp_keyfile_get_ranged(kf, group, "groups", FALSE, &DDP_RANGE_GROUPS, &groups, error))
    return FALSE;
  layer.groups = (guint)groups;
  layer.kind = kind;
  layer.scaling = scaling;
  if ((layer.forward_us >= 0 || layer.backward_us >= 0) && model->measured_batch <= 0) {
    ddp_keyfile_set_error(kf, error, DDP_KEYFILE_ERROR_MISSING, "model", "measured_batch",
                          "required when a layer gives measured times (layer %s)", group + 6);
    return FALSE;
  }
  g_autofree char *list = NULL;
  if (!ddp_keyfile_get_string(kf, group, "params", FALSE, &list, error))
    return FALSE;
  if (list) {
    g_auto(GStrv) entries = g_strsplit(list, ";", -1);
    for (guint i = 0; entries[i]; i++) {
      if (*g_strstrip(entries[i]) == '\0')
        continue;
      if (params->len >= DDP_MAX_PARAMS) {
        ddp_keyfile_set_error(kf, error, DDP_KEYFILE_ERROR_VALUE, group, "params",
                              "more than %u parameters in the model (ranges.h DDP_MAX_PARAMS)", DDP_MAX_PARAMS);
        return FALSE;
      }
      DdpParam param = { 0 };
      param.layer = layers->len;
      if (!parse_param(kf, group, entries[i], default_dtype, &param, error)) {
        g_free(param.name);
        return FALSE;
      }
      if (g_hash_table_contains(param_index, param.name)) {
        ddp_keyfile_set_error(kf, error, DDP_KEYFILE_ERROR_DUPLICATE, group, "params",
                              "parameter %s is listed twice", param.name);
        g_free(param.name);
        return FALSE;
      }
      g_array_append_val(params, param);
      g_hash_table_insert(param_index, param.name, GUINT_TO_POINTER(params->len));
    }
  }
  layer.n_params = params->len - layer.first_param;
  /* groups: a convolution's, read off its weight (out, in/groups, kh, kw: compute.c) */
  if (layer.groups > 1) {
    const DdpParam *weight = layer.n_params ? &g_array_index(params, DdpParam, layer.first_param) : NULL;
    if (layer.kind != DDP_LAYER_CONV || !weight || weight->ndim != 4 || weight->shape[0] % layer.groups != 0) {
      ddp_keyfile_set_error(kf, error, DDP_KEYFILE_ERROR_VALUE, group, "groups",
                            "%u groups need kind = conv and a first parameter of 4 dimensions (out, in/groups, kh, "
                            "kw) whose out channels divide into them", layer.groups);
      return FALSE;
    }
  }
  layer.name = g_strdup(group + strlen("layer "));
  g_array_append_val(layers, layer);
  return TRUE;
}

/**
 * ddp_model_block_prefix:
 * See model.h.
 */
char *
ddp_model_block_prefix(const char *layer_name)
{
  g_auto(GStrv) parts = g_strsplit(layer_name, ".", -1);
  for (guint i = 0; parts[i] && parts[i + 1]; i++) {
    const char *p = parts[i];
    gboolean digits = *p != '\0';
    for (; *p; p++)
      digits = digits && g_ascii_isdigit(*p);
    if (digits) {
      GString *prefix = g_string_new(parts[0]);
      for (guint k = 1; k <= i; k++)
        g_string_append_printf(prefix, ".%s", parts[k]);
      return g_string_free(prefix, FALSE);
    }
  }
  return NULL;
}

/**
 * ddp_model_layer_blocks:
 * See model.h.
 */
guint
ddp_model_layer_blocks(const DdpModel *model, int *layer_block)
{
  if (model->n_fsdp_units > 0) {   /* the file names its blocks: those modules, unit k is block k−1 */
    for (guint l = 0; l < model->n_layers; l++)
      layer_block[l] = (int)model->fsdp_layer_unit[l] - 1;
    return model->n_fsdp_units;
  }
  g_autofree char *current = NULL;
  guint blocks = 0;
  for (guint l = 0; l < model->n_layers; l++) {
    g_autofree char *prefix = ddp_model_block_prefix(model->layers[l].name);
    if (!prefix) {
      layer_block[l] = -1;
      continue;
    }
    if (!current || strcmp(current, prefix) != 0) {
      blocks++;
      g_free(current);
      current = g_steal_pointer(&prefix);
    }
    layer_block[l] = (int)blocks - 1;
  }
  return blocks;
}

/**
 * ddp_model_checkpointable:
 * See model.h.
 */
gboolean
ddp_model_checkpointable(const DdpModel *model, const char **why)
{
  const char *missing = NULL;
  g_autofree int *block = g_new(int, MAX(model->n_layers, 1));
  if (model->block_input_bytes <= 0)
    missing = "gives no [model] block_input_bytes, the input each checkpointed block keeps (models/README.md)";
  else if (ddp_model_layer_blocks(model, block) == 0)
    missing = "has no repeated blocks (layer names with a numbered module)";
  if (why)
    *why = missing;
  return missing == NULL;
}

/**
 * ddp_model_has_kind:
 * See model.h.
 */
gboolean
ddp_model_has_kind(const DdpModel *model, DdpLayerKind kind)
{
  for (guint i = 0; i < model->n_layers; i++)
    if (model->layers[i].kind == kind)
      return TRUE;
  return FALSE;
}

/**
 * ddp_model_layer_is_batch_norm:
 * See model.h.  The model format has one kind for every normalisation; BatchNorm is the one that
 * keeps running statistics (module buffers), and every shipped CNN normalises with it, while
 * LayerNorm and RMSNorm (transformers, ViT) keep none.
 */
gboolean
ddp_model_has_batch_norm(const DdpModel *model)
{
  for (guint i = 0; i < model->n_layers; i++)
    if (ddp_model_layer_is_batch_norm(model, i))
      return TRUE;
  return FALSE;
}

gboolean
ddp_model_layer_is_batch_norm(const DdpModel *model, guint layer)
{
  g_return_val_if_fail(layer < model->n_layers, FALSE);
  return model->layers[layer].kind == DDP_LAYER_NORM && model->buffer_bytes > 0 &&
         ddp_model_has_kind(model, DDP_LAYER_CONV);
}

/**
 * ddp_model_module_contains:
 * See model.h.  A layer name is a module path, a pseudo-layer under one (a last component that is
 * not a submodule), or PATH#k for the k-th call of module PATH.
 */
gboolean
ddp_model_module_contains(const char *module, const char *layer)
{
  gsize n = strlen(module);
  return strncmp(layer, module, n) == 0 && (layer[n] == '\0' || layer[n] == '.' || layer[n] == '#');
}

/* Cuts @path to its parent module in place ("a.b#2" → "a.b" → "a"); FALSE when it has none. */
static gboolean
to_parent_module(char *path)
{
  char *cut = strrchr(path, '#'), *dot = strrchr(path, '.');
  if (!cut || (dot && dot > cut))
    cut = dot;
  if (!cut || cut == path)
    return FALSE;
  *cut = '\0';
  return TRUE;
}

/* The module paths of every layer name and of its ancestors ("a.b#2" → "a.b#2", "a.b", "a"), each
 * once, in first-seen order: the names a mistyped fsdp_units entry is compared with. */
static GPtrArray *
module_paths(const DdpModel *model)
{
  GPtrArray *paths = g_ptr_array_new_with_free_func(g_free);
  g_autoptr(GHashTable) seen = g_hash_table_new(g_str_hash, g_str_equal);
  for (guint l = 0; l < model->n_layers; l++) {
    g_autofree char *path = g_strdup(model->layers[l].name);
    for (;;) {
      if (g_hash_table_contains(seen, path))
        break;
      char *kept = g_strdup(path);
      g_ptr_array_add(paths, kept);
      g_hash_table_add(seen, kept);
      if (!to_parent_module(path))
        break;
    }
  }
  g_ptr_array_add(paths, NULL);
  return paths;
}

/* [model] fsdp_units = MODULE;MODULE;…: the modules the file wraps as FSDP units, each one unit
 * holding the parameters of every layer the module contains (ddp_model_module_contains), the root
 * holding the rest — what ModuleWrapPolicy({...}) or manual wrap() gives in PyTorch (wrap.py).
 * Refused: a name that is no layer's module, a name twice, a module inside another listed one
 * (PyTorch nests FSDP instances, the outer one then holding only what the inner ones do not;
 * ddpsim's schedule has one level), a module whose layers hold no parameter (an FSDP instance with
 * no FlatParameter, nothing to gather or reduce) and one whose layers are not consecutive in
 * forward order (a module called twice around other work: FSDP would reshard and re-gather it,
 * which ddpsim's one-gather-per-forward schedule does not do).  Fills model->fsdp_* in forward
 * order of each unit's first layer. */
static gboolean
parse_fsdp_units(const DdpKeyFile *kf, DdpModel *model, GError **error)
{
  g_autofree char *list = NULL;
  if (!ddp_keyfile_get_string(kf, "model", "fsdp_units", FALSE, &list, error))
    return FALSE;
  if (!list)
    return TRUE;
  g_auto(GStrv) entries = g_strsplit(list, ";", -1);
  g_autoptr(GPtrArray) names = g_ptr_array_new();
  g_autoptr(GHashTable) index = g_hash_table_new(g_str_hash, g_str_equal);   /* name → 1-based */
  for (guint i = 0; entries[i]; i++) {
    char *name = g_strstrip(entries[i]);
    if (*name == '\0')
      continue;
    if (g_hash_table_contains(index, name)) {
      ddp_keyfile_set_error(kf, error, DDP_KEYFILE_ERROR_DUPLICATE, "model", "fsdp_units", "%s is listed twice", name);
      return FALSE;
    }
    g_ptr_array_add(names, name);
    g_hash_table_insert(index, name, GUINT_TO_POINTER(names->len));
  }
  guint n = names->len;
  if (n == 0) {
    ddp_keyfile_set_error(kf, error, DDP_KEYFILE_ERROR_VALUE, "model", "fsdp_units",
                          "names no module (leave the key out for the auto-wrap policy)");
    return FALSE;
  }
  /* each layer's unit (file order, 1-based): the listed module among its ancestors */
  g_autofree guint *unit_of = g_new0(guint, model->n_layers);
  for (guint l = 0; l < model->n_layers; l++) {
    g_autofree char *path = g_strdup(model->layers[l].name);
    for (;;) {
      guint u = GPOINTER_TO_UINT(g_hash_table_lookup(index, path));
      if (u && unit_of[l]) {
        ddp_keyfile_set_error(kf, error, DDP_KEYFILE_ERROR_VALUE, "model", "fsdp_units",
                              "%s contains %s, also listed: nested FSDP units are not modelled", path,
                              (const char *)g_ptr_array_index(names, unit_of[l] - 1));
        return FALSE;
      }
      if (u)
        unit_of[l] = u;
      if (!to_parent_module(path))
        break;
    }
  }
  g_autofree guint *first = g_new(guint, n), *last = g_new0(guint, n), *count = g_new0(guint, n);
  g_autofree gint64 *numel = g_new0(gint64, n);
  for (guint u = 0; u < n; u++)
    first[u] = G_MAXUINT;
  for (guint l = 0; l < model->n_layers; l++) {
    if (!unit_of[l])
      continue;
    guint u = unit_of[l] - 1;
    first[u] = MIN(first[u], l);
    last[u] = l;
    count[u]++;
    for (guint i = 0; i < model->layers[l].n_params; i++)
      numel[u] += model->params[model->layers[l].first_param + i].numel;
  }
  for (guint u = 0; u < n; u++) {
    const char *name = g_ptr_array_index(names, u);
    if (count[u] == 0) {
      g_autoptr(GPtrArray) paths = module_paths(model);
      g_autofree char *hint = ddp_suggest_text(name, (const char *const *)paths->pdata);
      ddp_keyfile_set_error(kf, error, DDP_KEYFILE_ERROR_VALUE, "model", "fsdp_units",
                            "%s is not the module of any layer%s", name, hint);
      return FALSE;
    }
    if (numel[u] == 0) {
      ddp_keyfile_set_error(kf, error, DDP_KEYFILE_ERROR_VALUE, "model", "fsdp_units",
                            "%s holds no parameters: an FSDP unit needs a flat parameter to shard", name);
      return FALSE;
    }
    if (count[u] != last[u] - first[u] + 1) {
      guint between = first[u];
      while (unit_of[between] == u + 1)
        between++;
      ddp_keyfile_set_error(kf, error, DDP_KEYFILE_ERROR_VALUE, "model", "fsdp_units",
                            "%s's layers are not consecutive in forward order (%s runs between %s and %s): "
                            "a unit must run its forward once", name, model->layers[between].name,
                            model->layers[first[u]].name, model->layers[last[u]].name);
      return FALSE;
    }
  }
  /* forward order: consecutive, non-overlapping ranges sort by their first layer */
  g_autofree guint *rank = g_new0(guint, n);   /* file-order unit → 1-based forward-order unit */
  model->fsdp_units = g_new0(char *, n + 1);
  guint k = 0;
  for (guint l = 0; l < model->n_layers; l++) {
    if (unit_of[l] && first[unit_of[l] - 1] == l) {
      rank[unit_of[l] - 1] = ++k;
      model->fsdp_units[k - 1] = g_strdup(g_ptr_array_index(names, unit_of[l] - 1));
    }
  }
  model->n_fsdp_units = n;
  model->fsdp_layer_unit = g_new0(guint, model->n_layers);
  for (guint l = 0; l < model->n_layers; l++)
    model->fsdp_layer_unit[l] = unit_of[l] ? rank[unit_of[l] - 1] : 0;
  model->fsdp_units_line = ddp_keyfile_line(kf, "model", "fsdp_units");
  return TRUE;
}

/* Reads a permutation of all parameters by name from [model] @key into @out (n_params indices).
 * Absent: @reverse ? n-1 … 0 : 0 … n-1. */
static gboolean
parse_param_permutation(const DdpKeyFile *kf, const char *key, DdpModel *model, GHashTable *param_index,
                        gboolean reverse, guint **out, GError **error)
{
  guint *order = *out = g_new(guint, model->n_params);
  g_autofree char *list = NULL;
  if (!ddp_keyfile_get_string(kf, "model", key, FALSE, &list, error))
    return FALSE;
  if (!list) {
    for (guint i = 0; i < model->n_params; i++)
      order[i] = reverse ? model->n_params - 1 - i : i;
    return TRUE;
  }
  g_autofree gboolean *seen = g_new0(gboolean, model->n_params);
  g_auto(GStrv) names = g_strsplit(list, ";", -1);
  guint k = 0;
  for (guint i = 0; names[i]; i++) {
    const char *name = g_strstrip(names[i]);
    if (*name == '\0')
      continue;
    guint index = GPOINTER_TO_UINT(g_hash_table_lookup(param_index, name));
    if (index == 0) {
      ddp_keyfile_set_error(kf, error, DDP_KEYFILE_ERROR_VALUE, "model", key, "%s is not a parameter of any layer", name);
      return FALSE;
    }
    if (seen[index - 1]) {
      ddp_keyfile_set_error(kf, error, DDP_KEYFILE_ERROR_DUPLICATE, "model", key, "%s is listed twice", name);
      return FALSE;
    }
    seen[index - 1] = TRUE;
    order[k++] = index - 1;
  }
  if (k != model->n_params) {
    for (guint i = 0; i < model->n_params; i++)
      if (!seen[i]) {
        ddp_keyfile_set_error(kf, error, DDP_KEYFILE_ERROR_VALUE, "model", key, "lists %u of %u parameters; %s is missing",
                              k, model->n_params, model->params[i].name);
        return FALSE;
      }
  }
  return TRUE;
}

/**
 * ddp_model_from_keyfile:
 * Validates a parsed model file.  Returns: (transfer full) or NULL with @error set; every error
 * names file, line and key.
 */
DdpModel *
ddp_model_from_keyfile(const DdpKeyFile *kf, GError **error)
{
  g_autoptr(DdpModel) model = g_new0(DdpModel, 1);
  model->path = g_strdup(ddp_keyfile_path(kf));
  if (!ddp_keyfile_has_group(kf, "model")) {
    g_set_error(error, DDP_KEYFILE_ERROR, DDP_KEYFILE_ERROR_MISSING,
                "%s: [model]: required group is missing (is this a model file?)", ddp_keyfile_path(kf));
    return NULL;
  }
  int dtype = DDP_DTYPE_FP32;
  double buffer_bytes = 0, seq_len = 0, image_size = 0;
  model->training_precision = -1;
  model->training_optimizer = -1;
  if (!ddp_keyfile_check_keys(kf, "model", model_keys, error) ||
      !ddp_keyfile_get_string(kf, "model", "name", TRUE, &model->name, error) ||
      !ddp_keyfile_get_string(kf, "model", "source", FALSE, &model->source, error) ||
      !ddp_keyfile_get_string(kf, "model", "input", FALSE, &model->input, error) ||
      !ddp_keyfile_get_choice(kf, "model", "dtype", FALSE, dtype_names, &dtype, error) ||
      !ddp_keyfile_get_ranged(kf, "model", "buffer_bytes", FALSE, &DDP_RANGE_TENSOR_BYTES, &buffer_bytes, error) ||
      !ddp_keyfile_get_ranged(kf, "model", "block_input_bytes", FALSE, &DDP_RANGE_TENSOR_BYTES, &model->block_input_bytes,
                              error) ||
      !ddp_keyfile_get_ranged(kf, "model", "measured_batch", FALSE, &DDP_RANGE_BATCH, &model->measured_batch, error) ||
      !ddp_keyfile_get_ranged(kf, "model", "seq_len", FALSE, &DDP_RANGE_SEQ_LEN, &seq_len, error) ||
      !ddp_keyfile_get_ranged(kf, "model", "image_size", FALSE, &DDP_RANGE_IMAGE_SIZE, &image_size, error) ||
      !ddp_keyfile_get_choice(kf, "model", "training_precision", FALSE, training_precision_names,
                              &model->training_precision, error) ||
      !ddp_keyfile_get_ranged(kf, "model", "training_batch", FALSE, &DDP_RANGE_BATCH, &model->training_batch, error) ||
      !ddp_keyfile_get_choice(kf, "model", "training_optimizer", FALSE, training_optimizer_names,
                              &model->training_optimizer, error))
    return NULL;
  if (seq_len > 0 && image_size > 0) {   /* ddp_model_scale_input rescales one input, tokens or images */
    ddp_keyfile_set_error(kf, error, DDP_KEYFILE_ERROR_VALUE, "model", "image_size",
                          "a model takes tokens (seq_len) or images (image_size), not both");
    return NULL;
  }
  model->buffer_bytes = (gint64)buffer_bytes;
  model->seq_len = (gint64)seq_len;
  model->image_size = (gint64)image_size;

  g_autoptr(GArray) layers = g_array_new(FALSE, TRUE, sizeof(DdpLayer));
  g_autoptr(GArray) params = g_array_new(FALSE, TRUE, sizeof(DdpParam));
  /* name -> 1-based index; keys borrowed from the params array entries */
  g_autoptr(GHashTable) param_index = g_hash_table_new(g_str_hash, g_str_equal);
  gsize n_groups;
  const char *const *groups = ddp_keyfile_groups(kf, &n_groups);
  if (n_groups > DDP_MAX_LAYERS + 1) {
    ddp_keyfile_set_error(kf, error, DDP_KEYFILE_ERROR_VALUE, groups[DDP_MAX_LAYERS + 1], NULL,
                          "more than %u layers (ranges.h DDP_MAX_LAYERS)", DDP_MAX_LAYERS);
    return NULL;
  }
  gboolean ok = TRUE;
  for (gsize g = 0; g < n_groups && ok; g++) {
    if (strcmp(groups[g], "model") == 0)
      continue;
    if (!g_str_has_prefix(groups[g], "layer ") || groups[g][6] == '\0') {
      ddp_keyfile_set_error(kf, error, DDP_KEYFILE_ERROR_UNKNOWN, groups[g], NULL,
                            "unknown group (a model file has [model] and [layer NAME] groups)");
      ok = FALSE;
      break;
    }
    ok = parse_layer(kf, groups[g], model, layers, params, param_index, dtype, error);
  }
  /* Hand the arrays to the model even on failure so everything parsed so far is freed once. */
  model->n_layers = layers->len;
  model->layers = (DdpLayer *)(void *)g_array_free(g_steal_pointer(&layers), FALSE);
  model->n_params = params->len;
  model->params = (DdpParam *)(void *)g_array_free(g_steal_pointer(&params), FALSE);
  if (!ok)
    return NULL;
  if (model->n_layers == 0) {
    ddp_keyfile_set_error(kf, error, DDP_KEYFILE_ERROR_MISSING, "model", NULL, "the model has no [layer NAME] groups");
    return NULL;
  }
  if (model->n_params == 0) {
    ddp_keyfile_set_error(kf, error, DDP_KEYFILE_ERROR_MISSING, "model", NULL,
                          "the model has no parameters (no layer has a params key)");
    return NULL;
  }
  gint64 bytes = 0;
  /* each term ≤ 2^50: stop as soon as the sum passes 2^50, long before it could overflow */
  for (guint i = 0; i < model->n_params && bytes <= DDP_MAX_MODEL_BYTES; i++)
    bytes += model->params[i].numel * (gint64)ddp_dtype_size(model->params[i].dtype);
  if (bytes > DDP_MAX_MODEL_BYTES) {
    ddp_keyfile_set_error(kf, error, DDP_KEYFILE_ERROR_VALUE, "model", NULL,
                          "the parameters total more than 2^50 bytes (ranges.h DDP_MAX_MODEL_BYTES)");
    return NULL;
  }
  /* Default ready order: layers in reverse forward order, params inside a layer in reverse
   * registration.  Default registration order: as listed (layers in forward order). */
  if (!parse_param_permutation(kf, "ready_order", model, param_index, TRUE, &model->ready_order, error) ||
      !parse_param_permutation(kf, "param_order", model, param_index, FALSE, &model->registration_order, error))
    return NULL;
  model->backward_layers = g_new(guint, model->n_layers);
  for (guint i = 0; i < model->n_layers; i++)
    model->backward_layers[i] = model->n_layers - 1 - i;
  if (!parse_fsdp_units(kf, model, error))
    return NULL;
  return g_steal_pointer(&model);
}

/**
 * ddp_model_load:
 * @name_or_path: a file path, or a bare name looked up as models/NAME.model in the data dirs
 *
 * Returns: (transfer full) or NULL with @error set (DDP_MODEL_ERROR_NOT_FOUND, or a keyfile error).
 */
DdpModel *
ddp_model_load(const char *name_or_path, GError **error)
{
  g_autofree char *path = ddp_datadir_find(name_or_path, "models", ".model");
  if (!path) {
    g_auto(GStrv) names = ddp_datadir_list("models", ".model");
    g_autofree char *list = g_strjoinv(", ", names);
    g_autofree char *hint = ddp_suggest_text(name_or_path, (const char *const *)names);
    g_set_error(error, DDP_MODEL_ERROR, DDP_MODEL_ERROR_NOT_FOUND,
                "--model: no model file or shipped model named \"%s\"%s (shipped: %s)", name_or_path, hint,
                *list ? list : "none found");
    return NULL;
  }
  g_autoptr(DdpKeyFile) kf = ddp_keyfile_load(path, error);
  if (!kf)
    return NULL;
  return ddp_model_from_keyfile(kf, error);
}

gint64
ddp_model_param_count(const DdpModel *model)
{
  gint64 n = 0;
  for (guint i = 0; i < model->n_params; i++)
    n += model->params[i].numel;
  return n;
}

gint64
ddp_model_param_bytes(const DdpModel *model)
{
  gint64 n = 0;
  for (guint i = 0; i < model->n_params; i++)
    n += model->params[i].numel * (gint64)ddp_dtype_size(model->params[i].dtype);
  return n;
}

double
ddp_model_forward_flops(const DdpModel *model)
{
  double f = 0;
  for (guint i = 0; i < model->n_layers; i++)
    f += model->layers[i].forward_flops;
  return f;
}

/**
 * ddp_model_scale_input:
 * @seq_len: tokens per sample to rescale to, 0 to keep the file's
 * @image_size: image side in pixels to rescale to, 0 to keep the file's
 *
 * Rescales every layer's per-sample FLOPs, bytes and saved activations from the input size the
 * file was generated at ([model] seq_len or image_size) to the one asked for.  With r the ratio of
 * input elements — new/old tokens, or (new/old side)² pixels — a layer's `scaling` says how:
 *   linear     everything × r: linear layers, norms, elementwise ops and embeddings work per token;
 *              convolutions, BatchNorm and pooling per output pixel, which is ∝ H·W;
 *   quadratic  FLOPs × r² and bytes, activations × r: attention scores (every query meets every
 *              key) with a fused kernel that never writes the score matrix;
 *   fixed      unchanged: layers after a global pooling or on one token (classifier, pooler).
 * Parameters never change.  Measured layer times (forward_us/backward_us) are scaled like FLOPs.
 * Exact for conv stacks whose sizes divide evenly (224 → 448: every feature map doubles per side);
 * otherwise padding and striding round, which this ignores.
 * Returns: FALSE with DDP_MODEL_ERROR_INVALID when the model has no such input size.
 */
gboolean
ddp_model_scale_input(DdpModel *model, guint seq_len, guint image_size, GError **error)
{
  if (seq_len && image_size) {
    g_set_error(error, DDP_MODEL_ERROR, DDP_MODEL_ERROR_INVALID, "--seq-len and --image-size: give one, not both");
    return FALSE;
  }
  if (!seq_len && !image_size)
    return TRUE;
  double r;
  if (seq_len) {
    if (model->seq_len <= 0) {
      g_set_error(error, DDP_MODEL_ERROR, DDP_MODEL_ERROR_INVALID,
                  "--seq-len: model %s has no sequence length (its file gives no [model] seq_len%s)", model->name,
                  model->image_size > 0 ? "; it takes images: use --image-size" : "");
      return FALSE;
    }
    r = (double)seq_len / (double)model->seq_len;
    model->seq_len = seq_len;
    g_free(model->input);
    model->input = g_strdup_printf("%u tokens", seq_len);
  } else {
    if (model->image_size <= 0) {
      g_set_error(error, DDP_MODEL_ERROR, DDP_MODEL_ERROR_INVALID,
                  "--image-size: model %s has no image size (its file gives no [model] image_size%s)", model->name,
                  model->seq_len > 0 ? "; it takes tokens: use --seq-len" : "");
      return FALSE;
    }
    r = ((double)image_size / (double)model->image_size) * ((double)image_size / (double)model->image_size);
    model->image_size = image_size;
    g_free(model->input);
    model->input = g_strdup_printf("%ux%u pixels", image_size, image_size);
  }
  /* a block's input is one per-token (per-pixel) tensor: the residual stream */
  model->block_input_bytes *= r;
  for (guint i = 0; i < model->n_layers; i++) {
    DdpLayer *l = &model->layers[i];
    if (l->scaling == DDP_SCALING_FIXED)
      continue;
    double flops = l->scaling == DDP_SCALING_QUADRATIC ? r * r : r;
    l->forward_flops *= flops;
    l->backward_flops *= flops;
    l->forward_bytes *= r;
    l->backward_bytes *= r;
    l->activation_bytes *= r;
    if (l->forward_us >= 0)
      l->forward_us *= flops;
    if (l->backward_us >= 0)
      l->backward_us *= flops;
  }
  return TRUE;
}
