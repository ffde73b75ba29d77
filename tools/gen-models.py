#!/usr/bin/env python3
"""gen-models.py — writes the shipped ddpsim model files (models/NAME.model).

Usage:  python3 tools/gen-models.py [--check] [--param-order] [OUTDIR]     (default OUTDIR: models/)

Each model is rebuilt here, layer by layer, exactly as torchvision / HuggingFace transformers
define the modules: parameter names as model.named_parameters() prints them (tied weights once, at
first registration), shapes, registration order, and the order in which the forward pass runs the
layers.  For every layer the per-sample forward/backward FLOPs, activation bytes moved and bytes
saved for backward are computed from the shapes.  The conventions (what is counted, what is folded
into what) are documented in models/README.md; the short version is in each generated file's header.

Python 3 standard library only (runs on a plain Debian 12 python3; torch is NOT needed).  Output is
deterministic: integers only, fixed order, so a re-run regenerates every file byte-identically.
--check compares instead of writing and exits 1 if any file differs.

Sources of the definitions (read, not imported):
  torchvision 0.16 models/resnet.py, vgg.py, inception.py, vision_transformer.py
    (identical module structure in torchvision 0.14, which was used to cross-check names, shapes,
    totals and the autograd ready order: tools/test-export.py and models/README.md);
  transformers 4.48 models/bert/modeling_bert.py, gpt2/modeling_gpt2.py, llama/modeling_llama.py,
    with attn_implementation="sdpa" (the default when torch >= 2.1.1).

Ready order (docs/model.md §1.3: the bucket rebuild walks the order gradients become ready).  The
autograd engine pops ready nodes from a priority queue ordered by sequence number (the later a node
was created in forward, the earlier it runs in backward); AccumulateGrad nodes have sequence number
UINT64_MAX, so a parameter's gradient is accumulated as soon as the node that produced it finishes.
This gives "layers in reverse forward order".  Inside one layer the order follows how the backward
node lists its inputs:
  * conv, BatchNorm, LayerNorm (ConvolutionBackward0 / NativeBatchNormBackward0 /
    NativeLayerNormBackward0: inputs (input, weight, bias)): weight, then bias — the two
    AccumulateGrad nodes tie at UINT64_MAX and the heap pops the first one pushed first;
  * nn.Linear, HF Conv1D, MultiheadAttention in-projection (AddmmBackward0: inputs (bias, input,
    weight^T)): bias, then weight (the weight sits behind a TBackward0 node for nn.Linear).
This was observed with torch 1.13 (same engine comparator as 2.x) on torchvision resnet50, vgg16,
inception_v3 and vit_b_16, and on structural replicas of the HF BERT / GPT-2 / Llama blocks: it
matches the observed order parameter for parameter.  The file loader's default ("layers reversed,
parameters inside a layer in reverse registration order") differs only in the weight/bias order of
conv and norm layers, so files with such layers carry an explicit ready_order.
"""
import argparse
import os
import sys

F32 = 4          # bytes per activation element (fp32 activations in every byte count)
IDX = 8          # bytes per int64 index (token ids, max-pool indices)
MASK = 1         # bytes per dropout mask element (torch.bool from native_dropout)

# Nominal arithmetic per element for memory-bound kernels (they run at the vector rate and are
# almost always bandwidth-bound, so these only matter on very fast-memory parts).
BN_FWD, BN_BWD = 7, 10        # mean, variance, normalise, affine / dgamma, dbeta, dx
LN_FWD, LN_BWD = 7, 10
RMS_FWD, RMS_BWD = 4, 8
RELU_FWD, RELU_BWD = 1, 1
GELU_FWD, GELU_BWD = 8, 12    # erf form, one fused kernel (F.gelu)
SILU_FWD, SILU_BWD = 4, 6
DROP_FWD, DROP_BWD = 2, 1     # random compare + scale / mask multiply
LOSS_FWD, LOSS_BWD = 5, 3     # log_softmax (max, sub, exp, sum, log) / softmax - onehot

MAX_LINE = 65536

EMIT_PARAM_ORDER = True       # see --param-order and models/README.md "Registration order"


class Layer:
    """One [layer NAME] group: a module (or a named pseudo-layer) in forward order."""

    def __init__(self, name, kind, ff, bf, fb, bb, act, params=(), ready=None):
        self.name = name
        self.kind = kind
        self.forward_flops = int(ff)
        self.backward_flops = int(bf)
        self.forward_bytes = int(fb)
        self.backward_bytes = int(bb)
        self.activation_bytes = int(act)
        self.groups = 1                            # nn.Conv2d groups (ResNeXt); emitted when > 1
        self.params = list(params)                 # [(name, shape tuple)] registration order
        names = [p[0] for p in self.params]
        self.ready = list(ready) if ready is not None else names   # autograd order inside the layer
        assert sorted(self.ready) == sorted(names), name
        # How per-sample costs follow the input size (models/README.md "Input size"): linear in
        # tokens or pixels (the default), quadratic FLOPs (attention scores), or fixed (after a
        # global pooling, or on one token).
        self.scaling = "linear"


class Model:
    def __init__(self, name, source, input_desc, description):
        self.name = name
        self.source = source
        self.input = input_desc
        self.description = description
        self.layers = []
        self.buffer_bytes = 0
        self.buffer_note = ""
        self.published_params = None
        self.published_note = ""
        self.notes = []             # extra header comment lines
        self.training = None        # (precision, per-GPU batch) the model usually trains at, or None
        self.block_input = None     # bytes one repeated block takes in (fp32), kept per block by
                                    # activation checkpointing; None where blocks differ
        self.block_input_note = ""
        self.fsdp_units = None      # the blocks transformer_auto_wrap_policy wraps, where their
                                    # names carry no all-digit component (ddpsim's default rule)
        self.fsdp_units_note = ""
        self.registration = None    # model.parameters() order when it differs from the file order
        self.registration_note = ""
        self.matmul_flops = 0       # 2 x MACs of conv/linear/attention (forward, per sample)
        # the input size the costs are for, from the input description: "N tokens" or "CxHxW"
        self.seq_len = int(input_desc.split()[0]) if input_desc.endswith(" tokens") else None
        dims = input_desc.split("x")
        self.image_size = int(dims[1]) if len(dims) == 3 and dims[1] == dims[2] else None

    def add(self, layer):
        assert all(l.name != layer.name for l in self.layers), layer.name
        self.layers.append(layer)
        return layer

    def fix_last(self):
        """The layer just added does not grow with the input (classifier head, pooler)."""
        self.layers[-1].scaling = "fixed"

    def file_params(self):
        return [p for l in self.layers for p in l.params]

    def param_count(self):
        total = 0
        for _, shape in self.file_params():
            n = 1
            for d in shape:
                n *= d
            total += n
        return total


# ----------------------------------------------------------------------------------------------
# Layer builders.  All figures are per sample (one image, or one sequence of `rows` tokens).
#   forward_flops   one multiply-add = 2 FLOPs; bias add 1 FLOP per output element
#   backward_flops  dX + dW (+ db); dX is skipped where autograd skips it (input without grad)
#   forward_bytes   activations read + written (fp32), parameters excluded
#   backward_bytes  activation-sized tensors read + written in backward, parameters excluded
#   activation_bytes  tensors kept for backward, each counted once, at the layer that creates it
# ----------------------------------------------------------------------------------------------

def conv(m, name, cin, cout, k, stride, pad, hw, bias=False, first=False, saved=True, groups=1):
    """nn.Conv2d.  Returns the output (h, w).  first: input is the image (no dX in backward).
    groups: grouped convolution (ResNeXt): each output channel sees cin/groups input channels."""
    kh, kw = k if isinstance(k, tuple) else (k, k)
    sh, sw = stride if isinstance(stride, tuple) else (stride, stride)
    ph, pw = pad if isinstance(pad, tuple) else (pad, pad)
    h, w = hw
    ho, wo = (h + 2 * ph - kh) // sh + 1, (w + 2 * pw - kw) // sw + 1
    n_in, n_out = cin * h * w, cout * ho * wo
    macs = n_out * (cin // groups) * kh * kw
    b = n_out if bias else 0
    ff = 2 * macs + b
    bf = (0 if first else 2 * macs) + 2 * macs + b
    fb = F32 * (n_in + n_out)
    # dW reads dY and X; dX reads dY and writes dX; db reads dY once more
    bb = F32 * (n_out + n_in) + (0 if first else F32 * (n_out + n_in)) + (F32 * n_out if bias else 0)
    params = [(name + ".weight", (cout, cin // groups, kh, kw))]
    if bias:
        params.append((name + ".bias", (cout,)))
    m.matmul_flops += 2 * macs
    layer = Layer(name, "conv", ff, bf, fb, bb, F32 * n_out if saved else 0, params,
                  [p[0] for p in params])         # ConvolutionBackward0: weight, then bias
    layer.groups = groups
    m.add(layer)
    return ho, wo


def batchnorm(m, name, c, hw, relu=True, saved=True):
    """nn.BatchNorm2d in training mode, with the in-place ReLU that follows folded in (relu=True).
    BN forward makes two passes over x (statistics, normalise) and writes y; the in-place ReLU
    reads and writes y.  Backward: ReLU reads dy and y, writes dx; BN reads dy and x twice
    (reductions, then dx) and writes dx.  Saved: BN keeps its input (counted at the conv that made
    it); the output (which ReLU and the next conv keep) is counted here."""
    e = c * hw[0] * hw[1]
    ff = BN_FWD * e + (RELU_FWD * e if relu else 0)
    bf = BN_BWD * e + (RELU_BWD * e if relu else 0)
    fb = F32 * 3 * e + (F32 * 2 * e if relu else 0)
    bb = F32 * 5 * e + (F32 * 3 * e if relu else 0)
    params = [(name + ".weight", (c,)), (name + ".bias", (c,))]
    m.buffer_bytes += 2 * c * F32 + 8      # running_mean, running_var, num_batches_tracked (int64)
    m.add(Layer(name, "norm", ff, bf, fb, bb, F32 * e if saved else 0, params,
                [p[0] for p in params]))          # NativeBatchNormBackward0: weight, then bias


def layernorm(m, name, rows, d, saved=True):
    """nn.LayerNorm over the last dim: one read, one write forward; backward reads dy and x for dx
    and again for dgamma/dbeta.  Saves its input (counted upstream) plus mean and rstd (fp32 per
    row); the output is counted here when a later layer keeps it."""
    e = rows * d
    params = [(name + ".weight", (d,)), (name + ".bias", (d,))]
    act = 2 * F32 * rows + (F32 * e if saved else 0)
    m.add(Layer(name, "norm", LN_FWD * e, LN_BWD * e, F32 * 2 * e, F32 * 5 * e, act, params,
                [p[0] for p in params]))          # NativeLayerNormBackward0: weight, then bias


def rmsnorm(m, name, rows, d):
    """HF LlamaRMSNorm, which is written as separate ops: pow, mean, rsqrt, x*rsqrt, weight*h
    (≈7 activation-sized passes forward, ≈18 backward).  Saved: the rsqrt per row, h = x*rsqrt
    (kept by weight*h) and the output (kept by the next linear)."""
    e = rows * d
    act = F32 * rows + 2 * F32 * e
    m.add(Layer(name, "norm", RMS_FWD * e, RMS_BWD * e, F32 * 7 * e, F32 * 18 * e, act,
                [(name + ".weight", (d,))]))


def linear(m, name, rows, din, dout, bias=True, saved=True, conv1d=False, weight_name=None,
           bias_name=None, extra_fb=0, extra_bb=0, extra_act=0, tied=False):
    """nn.Linear (weight dout x din) or HF Conv1D (conv1d=True: weight din x dout) applied to `rows`
    vectors.  Backward: dX reads dY, writes dX; dW reads dY and X; db reads dY.  tied=True: the
    weight belongs to another layer (listed there once), this layer has no params key but still
    computes dW (autograd sums it into the shared gradient)."""
    macs = rows * din * dout
    b = rows * dout if bias else 0
    ff = 2 * macs + b
    bf = 4 * macs + b
    fb = F32 * rows * (din + dout) + extra_fb
    bb = 2 * F32 * rows * (din + dout) + (F32 * rows * dout if bias else 0) + extra_bb
    params = []
    if not tied:
        wn = weight_name or name + ".weight"
        params.append((wn, (din, dout) if conv1d else (dout, din)))
        if bias:
            params.append((bias_name or name + ".bias", (dout,)))
    m.matmul_flops += 2 * macs
    act = (F32 * rows * dout if saved else 0) + extra_act
    ready = [p[0] for p in reversed(params)]       # AddmmBackward0: bias, then weight
    m.add(Layer(name, "linear", ff, bf, fb, bb, act, params, ready))
    if rows == 1:
        m.fix_last()                               # one vector per sample: a head or a pooler


def embedding(m, name, rows, num, d, add=False, saved=False):
    """nn.Embedding lookup of `rows` ids (no dX: the input is integer ids).  add=True folds the
    following `x + lookup` into this layer (HF sums the embeddings).  Backward
    (embedding_dense_backward) reads dY and sorts the ids; writing the weight-sized gradient is
    parameter traffic, which the simulator adds itself."""
    e = rows * d
    ff = e if add else 0
    fb = F32 * 2 * e + IDX * rows + (F32 * 3 * e if add else 0)
    bb = F32 * e + 4 * IDX * rows
    m.add(Layer(name, "embedding", ff, e, fb, bb, F32 * e if saved else 0,
                [(name + ".weight", (num, d))]))


def sdpa(m, name, rows, d, heads, causal, extra_fb=0, extra_bb=0, extra_act=0):
    """Fused scaled_dot_product_attention (memory-efficient / flash kernels: no rows x rows matrix
    in HBM; dropout, if any, is generated in the kernel).  FLOPs: Q·K^T and P·V = 2 x 2·d per
    query/key pair; a causal kernel skips the masked blocks, so only rows(rows+1)/2 pairs count.
    Backward recomputes P and does five GEMMs: 2.5 x forward.  Bytes: read Q, K, V, write O and
    the log-sum-exp; backward reads Q, K, V, O, dO (+ O, dO again for delta) and writes dQ, dK, dV.
    Saved: O and the log-sum-exp (Q, K, V are counted where they were made)."""
    pairs = rows * (rows + 1) // 2 if causal else rows * rows
    ff = 4 * d * pairs
    bf = ff * 5 // 2
    fb = F32 * 4 * rows * d + F32 * heads * rows + extra_fb
    bb = F32 * 10 * rows * d + 2 * F32 * heads * rows + extra_bb
    act = F32 * rows * d + F32 * heads * rows + extra_act
    m.matmul_flops += ff
    m.add(Layer(name, "attention", ff, bf, fb, bb, act))
    m.layers[-1].scaling = "quadratic"             # every query meets every key


def elementwise(m, name, ff, bf, fb, bb, act, kind="elementwise", params=(), ready=None):
    m.add(Layer(name, kind, ff, bf, fb, bb, act, params, ready))


def relu(m, name, e):
    """In-place ReLU as its own layer (VGG): reads and writes x; backward reads dy and y."""
    elementwise(m, name, RELU_FWD * e, RELU_BWD * e, F32 * 2 * e, F32 * 3 * e, 0)


def dropout(m, name, e, saved=True, residual=False):
    """nn.Dropout(p>0) in training (native_dropout: output + bool mask).  residual=True folds the
    residual add that follows (x + dropout(y)) into this layer; its backward is the gradient
    accumulation where the residual stream forks (read two, write one).  Saved: the mask, plus the
    output when a later layer keeps it."""
    ff = DROP_FWD * e + (e if residual else 0)
    bf = DROP_BWD * e + (e if residual else 0)
    fb = (2 * F32 + MASK) * e + (3 * F32 * e if residual else 0)
    bb = (2 * F32 + MASK) * e + (3 * F32 * e if residual else 0)
    elementwise(m, name, ff, bf, fb, bb, MASK * e + (F32 * e if saved else 0))


def residual(m, name, e, saved=True):
    """x + f(x) as a pseudo-layer (no module): read two, write one; backward = the gradient
    accumulation at the fork of the residual stream."""
    elementwise(m, name, e, e, 3 * F32 * e, 3 * F32 * e, F32 * e if saved else 0)


def maxpool(m, name, c, k, stride, pad, hw):
    """max_pool2d_with_indices: writes output + int64 indices; backward zero-fills dx and
    scatters dy.  Saved: output (kept by the next conv) and the indices."""
    h, w = hw
    ho, wo = (h + 2 * pad - k) // stride + 1, (w + 2 * pad - k) // stride + 1
    n_in, n_out = c * h * w, c * ho * wo
    elementwise(m, name, k * k * n_out, n_out, F32 * (n_in + n_out) + IDX * n_out,
                F32 * (n_in + n_out) + IDX * n_out, (F32 + IDX) * n_out, kind="pool")
    return ho, wo


def avgpool(m, name, c, k, stride, pad, hw, saved=True):
    h, w = hw
    ho, wo = (h + 2 * pad - k) // stride + 1, (w + 2 * pad - k) // stride + 1
    n_in, n_out = c * h * w, c * ho * wo
    elementwise(m, name, k * k * n_out, k * k * n_out, F32 * (n_in + n_out), F32 * (n_in + n_out),
                F32 * n_out if saved else 0, kind="pool")
    return ho, wo


def global_avgpool(m, name, c, hw):
    """AdaptiveAvgPool2d(1) (+ flatten): output kept by the following Linear."""
    n_in = c * hw[0] * hw[1]
    elementwise(m, name, n_in, n_in, F32 * (n_in + c), F32 * (n_in + c), F32 * c, kind="pool")


def lm_loss(m, rows, vocab):
    """HF causal-LM loss computed inside forward(labels=...): log_softmax over the vocabulary
    (two reads, one write) + nll; backward writes the gradient of the logits (zero-fill + scatter,
    then softmax backward: read two, write one).  Saved: the log-probabilities."""
    e = rows * vocab
    elementwise(m, "loss", LOSS_FWD * e, LOSS_BWD * e, F32 * 3 * e, F32 * 4 * e, F32 * e)


# ----------------------------------------------------------------------------------------------
# torchvision models
# ----------------------------------------------------------------------------------------------

def resnet(depth, groups=1, width_per_group=64):
    """torchvision ResNet (groups=1) and ResNeXt (resnext50_32x4d: groups 32, width 4;
    resnext101_32x8d: 32, 8): Bottleneck width = int(planes * width_per_group / 64) * groups, with
    the 3x3 conv grouped."""
    blocks = {50: [3, 4, 6, 3], 101: [3, 4, 23, 3], 152: [3, 8, 36, 3]}[depth]
    if groups == 1:
        name, title = "resnet%d" % depth, "ResNet-%d" % depth
    else:
        name, title = "resnext%d_%dx%dd" % (depth, groups, width_per_group), \
            "ResNeXt-%d %dx%dd" % (depth, groups, width_per_group)
    m = Model(name,
              "torchvision.models.%s (torchvision 0.16 definition; Bottleneck v1.5, stride on conv2)" % name,
              "3x224x224", "%s, ImageNet 224x224, 1000 classes" % title)
    hw = conv(m, "conv1", 3, 64, 7, 2, 3, (224, 224), first=True)
    batchnorm(m, "bn1", 64, hw)
    hw = maxpool(m, "maxpool", 64, 3, 2, 1, hw)
    inplanes = 64
    for li, (planes, n) in enumerate(zip([64, 128, 256, 512], blocks)):
        for bi in range(n):
            p = "layer%d.%d." % (li + 1, bi)
            stride = 2 if (bi == 0 and li > 0) else 1
            width, out = planes * width_per_group // 64 * groups, planes * 4
            h1 = conv(m, p + "conv1", inplanes, width, 1, 1, 0, hw)
            batchnorm(m, p + "bn1", width, h1)
            h2 = conv(m, p + "conv2", width, width, 3, stride, 1, h1, groups=groups)
            batchnorm(m, p + "bn2", width, h2)
            h3 = conv(m, p + "conv3", width, out, 1, 1, 0, h2)
            # bn3's output is modified in place by `out += identity` and the ReLU, whose output the
            # next block keeps: counted once, here.
            batchnorm(m, p + "bn3", out, h3, relu=False)
            if bi == 0:
                # downsample runs after bn3 in Bottleneck.forward, so autograd reaches it first in
                # backward (higher sequence numbers): registration order already says so.
                conv(m, p + "downsample.0", inplanes, out, 1, stride, 0, hw)
                batchnorm(m, p + "downsample.1", out, h3, relu=False, saved=False)
            e = out * h3[0] * h3[1]
            # `out += identity; out = relu(out)` (the block's shared ReLU module, third use):
            # add reads two and writes one, ReLU reads and writes; backward: ReLU backward, then
            # the accumulation of the two gradients at the block input.
            elementwise(m, p + "relu", 2 * e, 2 * e, F32 * 5 * e, F32 * 6 * e, 0)
            hw, inplanes = h3, out
    global_avgpool(m, "avgpool", 2048, hw)
    linear(m, "fc", 1, 2048, 1000, saved=False)
    if groups != 1:
        published = {50: (25028904, "25 028 904", 4.23), 101: (88791336, "88 791 336", 16.41)}[depth]
        m.published_params = published[0]
        m.published_note = ("torchvision docs: %s params, %.2f GFLOPS (torchvision counts multiply-adds)"
                            % (published[1], published[2]))
        m.published_gmacs = published[2]
        m.notes.append("BatchNorm layers include the in-place ReLU that follows them; the block's last "
                       "ReLU (with the residual add) is the layer named <block>.relu.  conv2 is grouped "
                       "(%d groups): cin/groups input channels per output channel." % groups)
        m.buffer_note = "BatchNorm running_mean + running_var (fp32) + num_batches_tracked (int64)"
        return m
    m.published_params = {50: 25557032, 101: 44549160, 152: 60192808}[depth]
    m.published_note = ("torchvision docs: %s params, %s GFLOPS (torchvision counts multiply-adds)"
                        % ({50: "25 557 032", 101: "44 549 160", 152: "60 192 808"}[depth],
                           {50: "4.09", 101: "7.80", 152: "11.51"}[depth]))
    m.published_gmacs = {50: 4.09, 101: 7.80, 152: 11.51}[depth]
    m.notes.append("BatchNorm layers include the in-place ReLU that follows them; the block's last "
                   "ReLU (with the residual add) is the layer named <block>.relu.")
    m.buffer_note = "BatchNorm running_mean + running_var (fp32) + num_batches_tracked (int64)"
    return m


def vgg16():
    m = Model("vgg16", "torchvision.models.vgg16 (torchvision 0.16 definition, config D, no BN)",
              "3x224x224", "VGG-16, ImageNet 224x224, 1000 classes")
    cfg = [64, 64, "M", 128, 128, "M", 256, 256, 256, "M", 512, 512, 512, "M", 512, 512, 512, "M"]
    hw, c, idx, first = (224, 224), 3, 0, True
    for v in cfg:
        if v == "M":
            hw = maxpool(m, "features.%d" % idx, c, 2, 2, 0, hw)
            idx += 1
        else:
            hw = conv(m, "features.%d" % idx, c, v, 3, 1, 1, hw, bias=True, first=first)
            relu(m, "features.%d" % (idx + 1), v * hw[0] * hw[1])
            c, idx, first = v, idx + 2, False
    # AdaptiveAvgPool2d((7, 7)) on a 7x7 map still runs a kernel (copy); flatten is a view.
    e = 512 * 7 * 7
    elementwise(m, "avgpool", e, e, F32 * 2 * e, F32 * 2 * e, F32 * e, kind="pool")
    linear(m, "classifier.0", 1, 25088, 4096)
    relu(m, "classifier.1", 4096)
    m.fix_last()
    dropout(m, "classifier.2", 4096)
    m.fix_last()
    linear(m, "classifier.3", 1, 4096, 4096)
    relu(m, "classifier.4", 4096)
    m.fix_last()
    dropout(m, "classifier.5", 4096)
    m.fix_last()
    linear(m, "classifier.6", 1, 4096, 1000, saved=False)
    m.published_params = 138357544
    m.published_note = "torchvision docs: 138 357 544 params, 15.47 GFLOPS (multiply-adds)"
    m.published_gmacs = 15.47
    m.notes.append("Each in-place ReLU and Dropout(0.5) is its own layer (module path features.N / "
                   "classifier.N); conv outputs are counted as saved at the conv (ReLU keeps them).")
    return m


def inception_v3():
    m = Model("inception-v3",
              "torchvision.models.inception_v3 (torchvision 0.16 definition; aux_logits=True, "
              "transform_input=False as with weights=None)",
              "3x299x299", "Inception v3, ImageNet 299x299, 1000 classes, auxiliary classifier on")

    def basic(name, cin, cout, k, stride, pad, hw, first=False):
        # BasicConv2d: conv (no bias) -> BatchNorm2d(eps=0.001) -> F.relu(inplace=True)
        o = conv(m, name + ".conv", cin, cout, k, stride, pad, hw, first=first)
        batchnorm(m, name + ".bn", cout, o)
        return o

    def cat(name, c_out, hw, saved=True):
        # torch.cat of the branches: a copy (read all, write all); CatBackward0 hands out views.
        e = c_out * hw[0] * hw[1]
        elementwise(m, name, 0, 0, F32 * 2 * e, 0, F32 * e if saved else 0)

    def block_a(p, cin, pool_features, hw):
        basic(p + ".branch1x1", cin, 64, 1, 1, 0, hw)
        basic(p + ".branch5x5_1", cin, 48, 1, 1, 0, hw)
        basic(p + ".branch5x5_2", 48, 64, 5, 1, 2, hw)
        basic(p + ".branch3x3dbl_1", cin, 64, 1, 1, 0, hw)
        basic(p + ".branch3x3dbl_2", 64, 96, 3, 1, 1, hw)
        basic(p + ".branch3x3dbl_3", 96, 96, 3, 1, 1, hw)
        avgpool(m, p + ".avg_pool", cin, 3, 1, 1, hw)
        basic(p + ".branch_pool", cin, pool_features, 1, 1, 0, hw)
        cat(p + ".cat", 224 + pool_features, hw)
        return 224 + pool_features

    def block_b(p, cin, hw):
        o = basic(p + ".branch3x3", cin, 384, 3, 2, 0, hw)
        basic(p + ".branch3x3dbl_1", cin, 64, 1, 1, 0, hw)
        basic(p + ".branch3x3dbl_2", 64, 96, 3, 1, 1, hw)
        basic(p + ".branch3x3dbl_3", 96, 96, 3, 2, 0, hw)
        maxpool(m, p + ".max_pool", cin, 3, 2, 0, hw)
        cat(p + ".cat", 384 + 96 + cin, o)
        return 384 + 96 + cin, o

    def block_c(p, c7, hw):
        basic(p + ".branch1x1", 768, 192, 1, 1, 0, hw)
        basic(p + ".branch7x7_1", 768, c7, 1, 1, 0, hw)
        basic(p + ".branch7x7_2", c7, c7, (1, 7), 1, (0, 3), hw)
        basic(p + ".branch7x7_3", c7, 192, (7, 1), 1, (3, 0), hw)
        basic(p + ".branch7x7dbl_1", 768, c7, 1, 1, 0, hw)
        basic(p + ".branch7x7dbl_2", c7, c7, (7, 1), 1, (3, 0), hw)
        basic(p + ".branch7x7dbl_3", c7, c7, (1, 7), 1, (0, 3), hw)
        basic(p + ".branch7x7dbl_4", c7, c7, (7, 1), 1, (3, 0), hw)
        basic(p + ".branch7x7dbl_5", c7, 192, (1, 7), 1, (0, 3), hw)
        avgpool(m, p + ".avg_pool", 768, 3, 1, 1, hw)
        basic(p + ".branch_pool", 768, 192, 1, 1, 0, hw)
        cat(p + ".cat", 768, hw)

    def block_d(p, hw):
        basic(p + ".branch3x3_1", 768, 192, 1, 1, 0, hw)
        o = basic(p + ".branch3x3_2", 192, 320, 3, 2, 0, hw)
        basic(p + ".branch7x7x3_1", 768, 192, 1, 1, 0, hw)
        basic(p + ".branch7x7x3_2", 192, 192, (1, 7), 1, (0, 3), hw)
        basic(p + ".branch7x7x3_3", 192, 192, (7, 1), 1, (3, 0), hw)
        basic(p + ".branch7x7x3_4", 192, 192, 3, 2, 0, hw)
        maxpool(m, p + ".max_pool", 768, 3, 2, 0, hw)
        cat(p + ".cat", 1280, o)
        return o

    def block_e(p, cin, hw):
        basic(p + ".branch1x1", cin, 320, 1, 1, 0, hw)
        basic(p + ".branch3x3_1", cin, 384, 1, 1, 0, hw)
        basic(p + ".branch3x3_2a", 384, 384, (1, 3), 1, (0, 1), hw)
        basic(p + ".branch3x3_2b", 384, 384, (3, 1), 1, (1, 0), hw)
        cat(p + ".branch3x3_cat", 768, hw, saved=False)
        basic(p + ".branch3x3dbl_1", cin, 448, 1, 1, 0, hw)
        basic(p + ".branch3x3dbl_2", 448, 384, 3, 1, 1, hw)
        basic(p + ".branch3x3dbl_3a", 384, 384, (1, 3), 1, (0, 1), hw)
        basic(p + ".branch3x3dbl_3b", 384, 384, (3, 1), 1, (1, 0), hw)
        cat(p + ".branch3x3dbl_cat", 768, hw, saved=False)
        avgpool(m, p + ".avg_pool", cin, 3, 1, 1, hw)
        basic(p + ".branch_pool", cin, 192, 1, 1, 0, hw)
        cat(p + ".cat", 2048, hw)

    hw = basic("Conv2d_1a_3x3", 3, 32, 3, 2, 0, (299, 299), first=True)
    hw = basic("Conv2d_2a_3x3", 32, 32, 3, 1, 0, hw)
    hw = basic("Conv2d_2b_3x3", 32, 64, 3, 1, 1, hw)
    hw = maxpool(m, "maxpool1", 64, 3, 2, 0, hw)
    hw = basic("Conv2d_3b_1x1", 64, 80, 1, 1, 0, hw)
    hw = basic("Conv2d_4a_3x3", 80, 192, 3, 1, 0, hw)
    hw = maxpool(m, "maxpool2", 192, 3, 2, 0, hw)
    c = block_a("Mixed_5b", 192, 32, hw)
    c = block_a("Mixed_5c", c, 64, hw)
    c = block_a("Mixed_5d", c, 64, hw)
    c, hw = block_b("Mixed_6a", c, hw)
    for p, c7 in (("Mixed_6b", 128), ("Mixed_6c", 160), ("Mixed_6d", 160), ("Mixed_6e", 192)):
        block_c(p, c7, hw)
    # InceptionAux runs here in forward (and is registered here): avg_pool2d(5, stride 3), conv0,
    # conv1, adaptive_avg_pool2d(1), fc.  Its autograd nodes have lower sequence numbers than
    # Mixed_7a..fc, so its gradients are ready after Mixed_7a's and before Mixed_6e's.
    ahw = avgpool(m, "AuxLogits.avg_pool", 768, 5, 3, 0, hw)
    ahw = basic("AuxLogits.conv0", 768, 128, 1, 1, 0, ahw)
    ahw = basic("AuxLogits.conv1", 128, 768, 5, 1, 0, ahw)
    global_avgpool(m, "AuxLogits.adaptive_avg_pool", 768, ahw)
    linear(m, "AuxLogits.fc", 1, 768, 1000, saved=False)
    hw = block_d("Mixed_7a", hw)
    block_e("Mixed_7b", 1280, hw)
    block_e("Mixed_7c", 2048, hw)
    global_avgpool(m, "avgpool", 2048, hw)
    dropout(m, "dropout", 2048)
    linear(m, "fc", 1, 2048, 1000, saved=False)
    m.published_params = 27161264
    m.published_note = ("torchvision docs: 27 161 264 params (with AuxLogits), 5.71 GFLOPS "
                        "(multiply-adds, eval mode: no AuxLogits)")
    m.published_gmacs = 5.71
    m.notes.append("Training uses the auxiliary output (torchvision reference recipe: loss = "
                   "loss(out) + 0.4 * loss(aux)); without it AuxLogits gets no gradient and DDP needs "
                   "find_unused_parameters=True.")
    m.notes.append("BatchNorm layers include BasicConv2d's in-place ReLU.  Functional pools and "
                   "torch.cat are pseudo-layers named <block>.avg_pool / .max_pool / .cat.")
    m.buffer_note = "BatchNorm running_mean + running_var (fp32) + num_batches_tracked (int64)"
    return m


def vit_b16():
    S, D, H, FF, L = 197, 768, 12, 3072, 12
    m = Model("vit-b16", "torchvision.models.vit_b_16 (torchvision 0.16 definition; dropout=0.0, "
              "attention_dropout=0.0; nn.MultiheadAttention -> scaled_dot_product_attention)",
              "3x224x224", "ViT-B/16, ImageNet 224x224 (196 patches + class token = 197 tokens)")
    conv(m, "conv_proj", 3, D, 16, 16, 0, (224, 224), bias=True, first=True, saved=False)
    # x.reshape(n, 768, 196).permute(0, 2, 1); torch.cat([class_token.expand(n, -1, -1), x], 1):
    # a strided copy; backward makes the conv gradient contiguous again.
    elementwise(m, "class_token", 0, 0, F32 * 2 * S * D, F32 * 2 * (S - 1) * D, 0,
                params=[("class_token", (1, 1, D))])
    # Encoder.forward: input + pos_embedding (dropout p=0 returns its input: no kernel)
    elementwise(m, "encoder.pos_embedding", S * D, S * D, F32 * 3 * S * D, F32 * S * D, F32 * S * D,
                params=[("encoder.pos_embedding", (1, S, D))])
    for i in range(L):
        p = "encoder.layers.encoder_layer_%d." % i
        layernorm(m, p + "ln_1", S, D, saved=False)
        # MultiheadAttention(batch_first=True): the (S, N) transpose makes the in-projection input
        # non-contiguous (a copy, which mm keeps), and q/k/v are re-laid out contiguously (a copy,
        # which SDPA keeps); both copies and their backward are folded in here.
        linear(m, p + "self_attention", S, D, 3 * D, saved=False,
               weight_name=p + "self_attention.in_proj_weight", bias_name=p + "self_attention.in_proj_bias",
               extra_fb=F32 * 2 * (S * D + 3 * S * D), extra_bb=F32 * 2 * (S * D + 3 * S * D),
               extra_act=F32 * (S * D + 3 * S * D))
        # output re-layout permute(2, 0, 1, 3).contiguous() before out_proj (kept by out_proj)
        sdpa(m, p + "self_attention.sdpa", S, D, H, causal=False,
             extra_fb=F32 * 2 * S * D, extra_bb=F32 * 2 * S * D, extra_act=F32 * S * D)
        linear(m, p + "self_attention.out_proj", S, D, D, saved=False)
        residual(m, p + "attn_residual", S * D)
        layernorm(m, p + "ln_2", S, D)
        linear(m, p + "mlp.0", S, D, FF)
        elementwise(m, p + "mlp.1", GELU_FWD * S * FF, GELU_BWD * S * FF, F32 * 2 * S * FF,
                    F32 * 3 * S * FF, F32 * S * FF)
        linear(m, p + "mlp.3", S, FF, D, saved=False)
        residual(m, p + "mlp_residual", S * D)
    # nn.Sequential(OrderedDict(encoder_layer_i = EncoderBlock)): the blocks
    m.fsdp_units = ["encoder.layers.encoder_layer_%d" % i for i in range(L)]
    m.fsdp_units_note = "torchvision's EncoderBlock, in an nn.Sequential keyed encoder_layer_i"
    m.block_input, m.block_input_note = F32 * S * D, "EncoderBlock's input, %d x %d fp32" % (S, D)
    layernorm(m, "encoder.ln", S, D)   # heads.head keeps x[:, 0], a view that keeps all of it
    linear(m, "heads.head", 1, D, 1000, saved=False)
    m.registration = (["class_token"] + [n for l in m.layers for n, _ in l.params if n != "class_token"])
    m.registration_note = ("VisionTransformer registers class_token (its own parameter) before "
                           "conv_proj, but forward uses it after conv_proj")
    m.published_params = 86567656
    m.published_note = "torchvision docs: 86 567 656 params, 17.56 GFLOPS (multiply-adds)"
    m.published_gmacs = 17.56
    m.notes.append("Dropout modules have p=0.0 and return their input (no kernel): not listed.  "
                   "Residual adds are pseudo-layers <block>.attn_residual / .mlp_residual.")
    return m


# ----------------------------------------------------------------------------------------------
# HuggingFace transformers models (4.48 definitions, attn_implementation="sdpa")
# ----------------------------------------------------------------------------------------------

def bert(size):
    D, L, H = {"base": (768, 12, 12), "large": (1024, 24, 16)}[size]
    FF, V, P, S = 4 * D, 30522, 512, 512
    m = Model("bert-" + size,
              "transformers.BertModel(BertConfig.from_pretrained('bert-%s-uncased'), "
              "add_pooling_layer=True) (transformers 4.48, sdpa attention)" % size,
              "%d tokens" % S,
              "BERT-%s uncased encoder (BertModel: embeddings, %d layers, pooler; no pre-training heads)"
              % (size.capitalize(), L))
    # BertEmbeddings.forward: word + token_type, then += position, LayerNorm, dropout
    m.block_input, m.block_input_note = F32 * S * D, "BertLayer's hidden_states, %d x %d fp32" % (S, D)
    embedding(m, "embeddings.word_embeddings", S, V, D)
    embedding(m, "embeddings.token_type_embeddings", S, 2, D, add=True)
    embedding(m, "embeddings.position_embeddings", S, P, D, add=True)
    layernorm(m, "embeddings.LayerNorm", S, D, saved=False)
    dropout(m, "embeddings.dropout", S * D)
    for i in range(L):
        p = "encoder.layer.%d." % i
        # q, k, v outputs are viewed per head and kept by SDPA
        linear(m, p + "attention.self.query", S, D, D)
        linear(m, p + "attention.self.key", S, D, D)
        linear(m, p + "attention.self.value", S, D, D)
        sdpa(m, p + "attention.self.sdpa", S, D, H, causal=False)   # attention dropout in-kernel
        linear(m, p + "attention.output.dense", S, D, D, saved=False)
        dropout(m, p + "attention.output.dropout", S * D, residual=True)
        layernorm(m, p + "attention.output.LayerNorm", S, D)
        linear(m, p + "intermediate.dense", S, D, FF)
        elementwise(m, p + "intermediate.intermediate_act_fn", GELU_FWD * S * FF, GELU_BWD * S * FF,
                    F32 * 2 * S * FF, F32 * 3 * S * FF, F32 * S * FF)
        linear(m, p + "output.dense", S, FF, D, saved=False)
        dropout(m, p + "output.dropout", S * D, residual=True)
        layernorm(m, p + "output.LayerNorm", S, D)
    # BertPooler: dense(hidden_states[:, 0]) -> tanh
    linear(m, "pooler.dense", 1, D, D, saved=False)
    elementwise(m, "pooler.activation", 4 * D, 4 * D, F32 * 2 * D, F32 * 3 * D, F32 * D)
    m.fix_last()
    reg = []
    for n, _ in m.file_params():
        reg.append(n)
    # BertEmbeddings registers word, position, token_type; forward adds token_type first
    i, j = reg.index("embeddings.token_type_embeddings.weight"), reg.index("embeddings.position_embeddings.weight")
    reg[i], reg[j] = reg[j], reg[i]
    m.registration = reg
    m.registration_note = ("BertEmbeddings registers position_embeddings before token_type_embeddings; "
                           "forward adds token_type first, and autograd makes position ready first")
    m.buffer_bytes = 2 * P * IDX
    m.buffer_note = "embeddings.position_ids and embeddings.token_type_ids (int64 [1, 512], persistent=False)"
    m.published_params = {"base": 109482240, "large": 335141888}[size]
    m.published_note = ("HF bert-%s-uncased BertModel with pooler: %s params (Devlin et al. quote %s)"
                        % (size, {"base": "109 482 240", "large": "335 141 888"}[size],
                           {"base": "110 M", "large": "340 M"}[size]))
    m.notes.append("Dropout p=0.1 (hidden and attention); the residual add after each output dropout "
                   "is folded into that dropout layer.  The loss/head is outside BertModel: not listed.")
    return m


def gpt2(size):
    D, L, H = {"small": (768, 12, 12), "xl": (1600, 48, 25)}[size]
    FF, V, P, S = 4 * D, 50257, 1024, 1024
    name = "gpt2" if size == "small" else "gpt2-xl"
    m = Model(name, "transformers.GPT2LMHeadModel(GPT2Config.from_pretrained('%s')) "
              "(transformers 4.48, sdpa attention; lm_head.weight tied to transformer.wte.weight)" % name,
              "%d tokens" % S,
              "GPT-2 %s causal LM (%d layers, d=%d, %d heads), loss computed inside forward(labels=...)"
              % ({"small": "124M", "xl": "XL 1.5B"}[size], L, D, H))
    if size == "xl":   # a 1.5 B LLM: bf16, 4 sequences of 1 024 tokens a GPU, AdamW (models/README.md)
        m.training = ("bf16", 4, "adamw")
    m.block_input, m.block_input_note = F32 * S * D, "GPT2Block's hidden_states, %d x %d fp32" % (S, D)
    embedding(m, "transformer.wte", S, V, D)
    embedding(m, "transformer.wpe", S, P, D, add=True)
    dropout(m, "transformer.drop", S * D)
    for i in range(L):
        p = "transformer.h.%d." % i
        layernorm(m, p + "ln_1", S, D)
        linear(m, p + "attn.c_attn", S, D, 3 * D, conv1d=True)       # split views kept by SDPA
        sdpa(m, p + "attn.sdpa", S, D, H, causal=True)               # attn_pdrop in-kernel
        linear(m, p + "attn.c_proj", S, D, D, conv1d=True, saved=False)
        dropout(m, p + "attn.resid_dropout", S * D, residual=True)
        layernorm(m, p + "ln_2", S, D)
        linear(m, p + "mlp.c_fc", S, D, FF, conv1d=True)
        # gelu_new = NewGELUActivation, eight separate ops: 0.5*x*(1+tanh(sqrt(2/pi)*(x+0.044715*x^3)))
        # forward 18 activation-sized reads/writes; saves tanh out, 0.5*x, 1+tanh and the output.
        e = S * FF
        elementwise(m, p + "mlp.act", 13 * e, 15 * e, F32 * 18 * e, F32 * 24 * e, F32 * 4 * e)
        linear(m, p + "mlp.c_proj", S, FF, D, conv1d=True, saved=False)
        dropout(m, p + "mlp.dropout", S * D, residual=True)
        # GPT2Attention buffers: bias = tril bool [1, 1, 1024, 1024], masked_bias = fp32 scalar
        m.buffer_bytes += P * P + 4
    layernorm(m, "transformer.ln_f", S, D)
    linear(m, "lm_head", S, D, V, bias=False, saved=False, tied=True)
    lm_loss(m, S, V)
    m.buffer_note = ("GPT2Attention.bias (bool causal mask [1,1,1024,1024]) + masked_bias (fp32 "
                     "scalar) per block, persistent=False but still module buffers: DDP broadcasts them "
                     "before every forward unless broadcast_buffers=False")
    m.published_params = {"small": 124439808, "xl": 1557611200}[size]
    m.published_note = "HF %s: %s params (lm_head tied to wte)" % (
        name, {"small": "124 439 808", "xl": "1 557 611 200"}[size])
    m.notes.append("lm_head is a parameter-less linear layer (its weight is transformer.wte.weight, "
                   "listed once at the embedding); its backward still computes dW, which autograd adds "
                   "to the embedding's gradient, so transformer.wte.weight is the last gradient ready.")
    m.notes.append("Dropout p=0.1 (embd, attn, resid); residual adds are folded into the "
                   "resid_dropout / mlp.dropout layers.")
    return m


def llama(size):
    if size == "1b":
        D, L, H, KV, FF, V, tied = 2048, 16, 32, 8, 8192, 128256, True
        cfg = ("Llama-3.2-1B config: hidden_size 2048, 16 layers, 32 heads, 8 KV heads (head_dim 64), "
               "intermediate_size 8192, vocab 128256, tie_word_embeddings=True")
        published, pub_text = 1235814400, "Llama-3.2-1B: 1 235 814 400 params (1.24 B, embeddings tied)"
    elif size == "7b":
        D, L, H, KV, FF, V, tied = 4096, 32, 32, 32, 11008, 32000, False
        cfg = ("Llama-2-7B config: hidden_size 4096, 32 layers, 32 heads, 32 KV heads (head_dim 128), "
               "intermediate_size 11008, vocab 32000, tie_word_embeddings=False")
        published, pub_text = 6738415616, "Llama-2-7B: 6 738 415 616 params"
    else:
        D, L, H, KV, FF, V, tied = 5120, 40, 40, 40, 13824, 32000, False
        cfg = ("Llama-2-13B config: hidden_size 5120, 40 layers, 40 heads, 40 KV heads (head_dim 128), "
               "intermediate_size 13824, vocab 32000, tie_word_embeddings=False")
        published, pub_text = 13015864320, "Llama-2-13B: 13 015 864 320 params"
    S, HD = 2048, D // H
    KVD, NREP = KV * HD, H // KV
    m = Model("llama-" + size, "transformers.LlamaForCausalLM(LlamaConfig(...)) (transformers 4.48, "
              "sdpa attention, no biases, attention_dropout 0): " + cfg,
              "%d tokens" % S, "Llama causal LM (%s config, %d layers, d=%d)"
              % ({"1b": "Llama-3.2-1B", "7b": "Llama-2-7B", "13b": "Llama-2-13B"}[size], L, D))
    # LLMs train in bf16 (Llama 2 paper, Touvron et al. 2023, and the HF recipes) with AdamW (the
    # same paper: β1 0.9, β2 0.95) at a small per-GPU micro-batch: 2 sequences for the 1B model, 1 for
    # the 7B and 13B (models/README.md, "Usual training setup")
    m.training = ("bf16", 2 if size == "1b" else 1, "adamw")
    # LlamaDecoderLayer's hidden_states; the rotary cos/sin it also takes are one tensor pair
    # shared by every layer (LlamaModel computes them once), so they add nothing per block
    m.block_input, m.block_input_note = F32 * S * D, "LlamaDecoderLayer's hidden_states, %d x %d fp32" % (S, D)
    embedding(m, "model.embed_tokens", S, V, D, saved=True)
    for i in range(L):
        p = "model.layers.%d." % i
        rmsnorm(m, p + "input_layernorm", S, D)
        linear(m, p + "self_attn.q_proj", S, D, D, bias=False, saved=False)
        linear(m, p + "self_attn.k_proj", S, D, KVD, bias=False, saved=False)
        linear(m, p + "self_attn.v_proj", S, D, KVD, bias=False, saved=(NREP == 1))
        # apply_rotary_pos_emb on q and k: q*cos + cat(-x2, x1)*sin, ≈10 passes forward, ≈15
        # backward (slice backward zero-fills); then repeat_kv copies k and v to all heads when
        # there are fewer KV heads (GQA).  Saved: q_embed and what SDPA gets for k (and v).
        qk = S * (D + KVD)
        fb, bb = F32 * 10 * qk, F32 * 15 * qk
        act = F32 * S * D
        if NREP > 1:
            fb += 2 * F32 * (S * KVD + S * D)
            bb += 2 * F32 * (S * KVD + S * D)
            act += 2 * F32 * S * D
        else:
            act += F32 * S * KVD
        elementwise(m, p + "self_attn.rope", 4 * qk, 5 * qk, fb, bb, act)
        sdpa(m, p + "self_attn.sdpa", S, D, H, causal=True)
        linear(m, p + "self_attn.o_proj", S, D, D, bias=False, saved=False)
        residual(m, p + "attn_residual", S * D)
        rmsnorm(m, p + "post_attention_layernorm", S, D)
        # LlamaMLP: down_proj(act_fn(gate_proj(x)) * up_proj(x)), evaluated in that order
        linear(m, p + "mlp.gate_proj", S, D, FF, bias=False)
        e = S * FF
        elementwise(m, p + "mlp.act_fn", SILU_FWD * e, SILU_BWD * e, F32 * 2 * e, F32 * 3 * e, F32 * e)
        linear(m, p + "mlp.up_proj", S, D, FF, bias=False)
        elementwise(m, p + "mlp.gate_mul", e, 2 * e, F32 * 3 * e, F32 * 6 * e, F32 * e)
        linear(m, p + "mlp.down_proj", S, FF, D, bias=False, saved=False)
        residual(m, p + "mlp_residual", S * D)
    rmsnorm(m, "model.norm", S, D)
    linear(m, "lm_head", S, D, V, bias=False, saved=False, tied=tied)
    lm_loss(m, S, V)
    # LlamaDecoderLayer registers self_attn, mlp, then input_layernorm, post_attention_layernorm
    reg = []
    for l in m.layers:
        reg += [n for n, _ in l.params]
    out = []
    for i in range(L):
        p = "model.layers.%d." % i
        blk = [n for n in reg if n.startswith(p)]
        norms = [p + "input_layernorm.weight", p + "post_attention_layernorm.weight"]
        out.append([n for n in blk if n not in norms] + norms)
    m.registration = (["model.embed_tokens.weight"] + [n for b in out for n in b]
                      + [n for n in reg if not n.startswith("model.layers.") and n != "model.embed_tokens.weight"])
    m.registration_note = ("LlamaDecoderLayer registers input_layernorm and post_attention_layernorm "
                           "after self_attn and mlp; forward (and autograd) use them before each")
    m.buffer_bytes = F32 * HD // 2
    m.buffer_note = "model.rotary_emb.inv_freq (fp32 [head_dim/2], persistent=False)"
    m.published_params = published
    m.published_note = pub_text
    m.notes.append("RoPE, residual adds and the SiLU-gate product are pseudo-layers "
                   "(<layer>.self_attn.rope, .attn_residual, .mlp.gate_mul, .mlp_residual).")
    if tied:
        m.notes.append("lm_head is a parameter-less linear layer (weight tied to "
                       "model.embed_tokens.weight, which is therefore the last gradient ready).")
    return m


MODELS = [
    lambda: resnet(50), lambda: bert("large"), lambda: gpt2("xl"), lambda: resnet(101), vgg16,
    inception_v3, vit_b16, lambda: bert("base"), lambda: gpt2("small"), lambda: llama("1b"),
    lambda: llama("7b"), lambda: llama("13b"), lambda: resnet(50, 32, 4), lambda: resnet(101, 32, 8),
    lambda: resnet(152),
]


# ----------------------------------------------------------------------------------------------
# Output
# ----------------------------------------------------------------------------------------------

def ready_order(m):
    """The order autograd makes gradients ready: layers in reverse forward order, inside a layer
    the order of the layer's backward node (see the module docstring)."""
    return [n for l in reversed(m.layers) for n in l.ready]


def default_ready_order(m):
    """What the loader assumes without a ready_order key: file params in reverse."""
    return [n for n, _ in reversed(m.file_params())]


def fmt_shape(shape):
    return ",".join(str(d) for d in shape)


def gflops(x):
    return "%.3f" % (x / 1e9)


def render(m, emit_param_order):
    params = m.file_params()
    names = [n for n, _ in params]
    assert len(set(names)) == len(names), "duplicate parameter in %s" % m.name
    n_params = m.param_count()
    if m.published_params is not None:
        assert n_params == m.published_params, "%s: %d params, published %d" % (m.name, n_params, m.published_params)
    ro = ready_order(m)
    need_ready = ro != default_ready_order(m)
    reg = m.registration if m.registration and m.registration != names else None
    if reg:
        assert sorted(reg) == sorted(names)
    fwd = sum(l.forward_flops for l in m.layers)
    bwd = sum(l.backward_flops for l in m.layers)
    act = sum(l.activation_bytes for l in m.layers)

    out = []
    c = out.append

    def para(text):
        """A comment paragraph wrapped at 100 columns."""
        line = "#"
        for w in text.split():
            if len(line) + 1 + len(w) > 100 and line.strip("# "):
                c(line)
                line = "#  "
            line += " " + w
        c(line)

    para("ddpsim model: %s — %s." % (m.name, m.description))
    para("Definition: %s." % m.source)
    para("Generated by tools/gen-models.py — do not edit; regenerate with: python3 tools/gen-models.py models/")
    para("Format and conventions: models/README.md.  All figures are per sample (%s), fp32 activations."
         % m.input)
    c("#")
    para("Totals: %d parameters (%d bytes fp32) in %d tensors, %d layers; forward %s GFLOPs/sample "
         "(conv/linear/attention %s = 2 x %s GMACs), backward %s GFLOPs; activations saved for "
         "backward %.1f MiB/sample." % (n_params, 4 * n_params, len(params), len(m.layers), gflops(fwd),
                                       gflops(m.matmul_flops), gflops(m.matmul_flops / 2), gflops(bwd),
                                       act / 1048576.0))
    para("Published: %s." % m.published_note)
    has_attn = any(l.kind == "attention" for l in m.layers)
    para("FLOPs: 1 multiply-add = 2 FLOPs; backward = dX + dW, without dX where the input needs no "
         "gradient (%s)%s" % ("embeddings" if has_attn and m.layers[0].kind == "embedding" else
                              "the first conv on the image",
                              "; attention is fused SDPA (causal: half the query/key pairs, backward "
                              "2.5 x forward)." if has_attn else "."))
    for note in m.notes:
        para(note)
    if m.buffer_bytes:
        para("buffer_bytes: %s." % m.buffer_note)
    if m.block_input:
        para("block_input_bytes: the hidden state a block takes in (%s), what activation checkpointing "
             "keeps per block." % m.block_input_note)
    if m.fsdp_units:
        para("fsdp_units: the %d blocks transformer_auto_wrap_policy wraps (%s), named here because "
             "their names have no all-digit component; activation checkpointing checkpoints the same "
             "modules." % (len(m.fsdp_units), m.fsdp_units_note))
    if need_ready:
        para("ready_order: the order autograd makes gradients ready (README \"Ready order\"): layers "
             "in reverse forward order; conv/norm layers make weight ready before bias, linear "
             "layers bias before weight.")
    else:
        para("ready_order omitted: autograd's order equals the default (layers reversed, params "
             "reversed).")
    if reg:
        para("Registration order differs from this file's forward order: %s.  %s" % (
            m.registration_note,
            "param_order lists model.parameters() order (DDP's construction-time buckets walk it)."
            if emit_param_order else
            "The params keys follow forward order; model.parameters() order is as just said "
            "(README \"Registration order\")."))
    c("")
    c("[model]")
    c("name = %s" % m.name)
    c("source = %s" % m.source)
    c("input = %s" % m.input)
    c("dtype = fp32")
    if m.seq_len:
        c("seq_len = %d" % m.seq_len)
    if m.image_size:
        c("image_size = %d" % m.image_size)
    if m.training:
        c("training_precision = %s" % m.training[0])
        c("training_batch = %d" % m.training[1])
        c("training_optimizer = %s" % m.training[2])
    if m.buffer_bytes:
        c("buffer_bytes = %d" % m.buffer_bytes)
    if m.block_input:
        c("block_input_bytes = %d" % m.block_input)
    if m.fsdp_units:
        c("fsdp_units = " + ";".join(m.fsdp_units))
    if need_ready:
        c("ready_order = " + ";".join(ro))
    if reg and emit_param_order:
        c("param_order = " + ";".join(reg))
    for l in m.layers:
        c("")
        c("[layer %s]" % l.name)
        c("kind = %s" % l.kind)
        if l.scaling != "linear":
            c("scaling = %s" % l.scaling)
        if l.groups != 1:
            c("groups = %d" % l.groups)
        c("forward_flops = %d" % l.forward_flops)
        c("backward_flops = %d" % l.backward_flops)
        c("forward_bytes = %d" % l.forward_bytes)
        c("backward_bytes = %d" % l.backward_bytes)
        c("activation_bytes = %d" % l.activation_bytes)
        if l.params:
            c("params = " + ";".join("%s:%s" % (n, fmt_shape(s)) for n, s in l.params))
    text = "\n".join(out) + "\n"
    for line in out:
        assert len(line.encode()) < MAX_LINE, "%s: line too long" % m.name
    return text, dict(params=n_params, tensors=len(params), layers=len(m.layers), fwd=fwd, bwd=bwd,
                      matmul=m.matmul_flops, act=act, ready=need_ready, reg=bool(reg))


def main(argv):
    ap = argparse.ArgumentParser(description="Write the shipped ddpsim model files.")
    ap.add_argument("outdir", nargs="?", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "models"))
    ap.add_argument("--check", action="store_true", help="compare with the files in OUTDIR, write nothing; exit 1 on a difference")
    ap.add_argument("--param-order", action="store_true", default=EMIT_PARAM_ORDER,
                    help="also emit [model] param_order where model.parameters() order differs from forward order")
    ap.add_argument("--only", metavar="NAME", help="only this model")
    args = ap.parse_args(argv)
    status = 0
    print("%-13s %15s %15s %8s %7s %11s %11s %11s %9s" % (
        "model", "params", "published", "tensors", "layers", "fwd GFLOP", "matmul GF", "bwd GFLOP", "act MiB"))
    for build in MODELS:
        m = build()
        if args.only and m.name != args.only:
            continue
        text, t = render(m, args.param_order)
        path = os.path.join(args.outdir, m.name + ".model")
        if args.check:
            try:
                with open(path, encoding="utf-8") as f:
                    same = f.read() == text
            except OSError:
                same = False
            if not same:
                print("%s: differs from the generator's output" % path, file=sys.stderr)
                status = 1
        else:
            os.makedirs(args.outdir, exist_ok=True)
            with open(path, "w", encoding="utf-8", newline="\n") as f:
                f.write(text)
        print("%-13s %15d %15d %8d %7d %11.3f %11.3f %11.3f %9.1f%s" % (
            m.name, t["params"], m.published_params, t["tensors"], t["layers"], t["fwd"] / 1e9,
            t["matmul"] / 1e9, t["bwd"] / 1e9, t["act"] / 1048576.0,
            ("  (published %.2f GMACs)" % m.published_gmacs) if hasattr(m, "published_gmacs") else ""))
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
