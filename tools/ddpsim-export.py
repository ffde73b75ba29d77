#!/usr/bin/env python3
"""ddpsim-export.py — writes a ddpsim model file (models/README.md) from any torch.nn.Module.

Usage:
  ddpsim-export.py MODULE:CALLABLE --input-shape 8,3,224,224 -o mymodel.model
  ddpsim-export.py mypkg.models:make_gpt --input-shape 4,1024 --input-dtype int64 --input-high 50257

MODULE is imported (the current directory is on sys.path); CALLABLE() must return either an
nn.Module or a tuple (module, example_inputs), where example_inputs is a tensor, a tuple of
positional arguments or a dict of keyword arguments.  Without example inputs the module is called
with one random tensor of --input-shape (float32 normal, or --input-dtype int64 uniform in
[0, --input-high)).  The first dimension is the batch: every cost is divided by it, so the file is
per sample, like the shipped ones.

What it does, in one forward and one backward pass in training mode (DDP trains):
  * parameters: model.named_parameters() (tied weights once, at first registration), those with
    requires_grad only (DDP ignores the others), names, shapes, dtypes, sparse for
    nn.Embedding(sparse=True);
  * layers: every module that owns parameters directly, or has no children, becomes a layer at its
    first operation; each further call of the same module becomes "PATH#2", "PATH#3", ...;
    operations that run outside such modules (residual adds, torch.cat, functional attention,
    ...) become pseudo-layers "PARENT.ops" at the point they run.  Zero-cost layers without
    parameters are dropped;
  * costs: every top-level torch function call is seen through a TorchFunctionMode (torch >=
    1.13) and costed from its real tensor shapes with the same conventions as
    tools/gen-models.py — conv/linear/matmul 2 FLOPs per multiply-add, dX only where the input
    requires grad; fused attention 4·d per query/key pair (half the pairs when causal), backward
    2.5x; norms, pools, embeddings, dropout and elementwise ops by bytes moved.  Parameter and
    buffer traffic is excluded (the simulator adds it);
  * activation_bytes: the storages autograd saves for backward (saved_tensors_hooks), each counted
    once at the layer that created it; parameters, buffers and the input are not counted;
  * ready_order: the order in which parameters' gradients are accumulated in a real backward pass
    (register_post_accumulate_grad_hook on torch >= 2.1, else a post-hook on each parameter's
    AccumulateGrad node — what DDP's Reducer hooks — else a tensor hook), then the parameters no
    gradient reached, in model.parameters() order (where static_graph's rebuild puts them);
  * buffer_bytes: all module buffers (DDP's broadcast_buffers sends them before every forward);
  * groups for grouped convolutions; seq_len (token ids [batch, T]) or image_size (square images),
    and each layer's scaling, measured by a second export at half the input (with_scaling).

The loss used for the backward pass is the sum of every floating-point tensor the model returns;
the loss itself is not part of the model file.  Runs on CPU by default (--device cuda works too);
the export is deterministic for a given torch version and input.
"""
import argparse
import importlib
import math
import os
import sys


def die(msg, code=2):
    print("ddpsim-export: " + msg, file=sys.stderr)
    sys.exit(code)


try:
    import torch
    from torch.overrides import TorchFunctionMode
except ImportError as e:  # pragma: no cover
    die("needs PyTorch >= 1.13 (%s)" % e)

DTYPE_NAMES = {torch.float32: "fp32", torch.float16: "fp16", torch.bfloat16: "bf16", torch.float64: "fp64"}


def storage_key(t):
    """(data_ptr, nbytes) of a tensor's storage, on torch 1.13 and 2.x."""
    try:
        s = t.untyped_storage()
        return s.data_ptr(), s.nbytes()
    except (AttributeError, RuntimeError):
        s = t.storage()
        return s.data_ptr(), s.size() * s.element_size()


def tensors_in(obj, out=None):
    """All tensors in nested tuples/lists/dicts (HF ModelOutput is a dict)."""
    if out is None:
        out = []
    if isinstance(obj, torch.Tensor):
        out.append(obj)
    elif isinstance(obj, (list, tuple)):
        for x in obj:
            tensors_in(x, out)
    elif isinstance(obj, dict):
        for x in obj.values():
            tensors_in(x, out)
    return out


def nbytes(t):
    return t.numel() * t.element_size()


class Record:
    """One output layer: a module call (module is not None) or a run of pseudo-layer ops."""

    def __init__(self, name, module, order):
        self.name = name
        self.module = module
        self.order = order            # sequence number of its first operation
        self.ff = self.bf = self.fb = self.bb = self.act = 0.0
        self.cats = {}                # op category -> forward FLOPs, for the kind
        self.params = []              # [(name, tensor)]


class Exporter(TorchFunctionMode):
    def __init__(self, model):
        super().__init__()
        self.model = model
        self.records = []
        self.seq = 0
        self.stack = []               # active modules (all), innermost last
        self.layer_stack = []         # active layer Records, innermost last
        self.path = {m: n for n, m in model.named_modules()}
        self.is_layer = {}
        self.param_storages = set()
        self.input_storages = set()
        self.creator = {}             # storage ptr -> Record that allocated it
        self.saved = {}               # storage ptr -> (nbytes, saver Record)
        self.pseudo = None            # open pseudo Record
        self.pseudo_parent = None     # the module whose own ops it collects
        self.current = None           # Record of the op being run (for the pack hook)
        self.first_call = {}          # module -> its first Record

    # -- module tracking ------------------------------------------------------------------
    def pre_hook(self, module, args):
        self.stack.append(module)
        if self.is_layer.get(module):
            self.seq += 1
            r = Record(self.path[module], module, self.seq)   # repeated calls get #2, #3 at the end
            self.records.append(r)
            self.layer_stack.append(r)
            self.first_call.setdefault(module, r)
            self.pseudo = None

    def post_hook(self, module, args, output):
        if self.stack and self.stack[-1] is module:
            self.stack.pop()
        if self.is_layer.get(module) and self.layer_stack:
            self.layer_stack.pop()
            self.pseudo = None

    def target(self):
        """The Record an op belongs to: the innermost active module if it is a layer; otherwise a
        pseudo-layer of that module (a container's own ops: residual adds, cat, functional
        attention), continued until the next layer boundary."""
        inner = self.stack[-1] if self.stack else None
        if self.layer_stack and self.layer_stack[-1].module is inner:
            return self.layer_stack[-1]
        if self.pseudo is None or self.pseudo_parent is not inner:
            self.pseudo_parent = inner
            parent = self.path.get(inner, "") if inner is not None else ""
            self.seq += 1
            self.pseudo = Record((parent + ".ops") if parent else "ops", None, self.seq)
            self.records.append(self.pseudo)
        return self.pseudo

    # -- op costing -------------------------------------------------------------------------
    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        rec = self.target() if (self.stack or self.layer_stack) else None
        prev, self.current = self.current, rec
        try:
            out = func(*args, **kwargs)
        finally:
            self.current = prev
        if rec is None:
            return out
        outs = tensors_in(out)
        if not outs:
            return out
        ins = tensors_in(list(args)) + tensors_in(kwargs)
        in_storages = {storage_key(t)[0] for t in ins}
        name = getattr(func, "__name__", str(func))
        inplace = (name.endswith("_") and not name.endswith("__")) or name.startswith("__i") or kwargs.get("inplace") is True
        fresh = [t for t in outs if storage_key(t)[0] not in in_storages]
        if not fresh and not inplace:
            return out                  # a view: no kernel
        for t in fresh:
            self.creator[storage_key(t)[0]] = rec
        if not rec.cats:
            self.seq += 1
            rec.order = self.seq       # a layer sits where its first kernel runs
        try:
            ff, bf, fb, bb, cat = self.cost(name, args, kwargs, ins, outs)
        except Exception:               # unknown signature: cost it as elementwise
            ff, bf, fb, bb, cat = self.elementwise(ins, outs)
        rec.ff += ff
        rec.bf += bf
        rec.fb += fb
        rec.bb += bb
        rec.cats[cat] = rec.cats.get(cat, 0) + ff + 1
        return out

    def act_bytes(self, ts):
        return sum(nbytes(t) for t in ts if storage_key(t)[0] not in self.param_storages)

    def elementwise(self, ins, outs, flops_per=1):
        o = sum(t.numel() for t in outs)
        ob = self.act_bytes(outs)
        rg = [t for t in ins if t.requires_grad]
        grad_in = self.act_bytes(rg)
        return (flops_per * o, (o if rg else 0), self.act_bytes(ins) + ob,
                (ob + 2 * grad_in if rg else 0), "elementwise")

    def cost(self, name, args, kwargs, ins, outs):
        out = outs[0]
        ob = self.act_bytes([out])

        def rg(t):
            return isinstance(t, torch.Tensor) and t.requires_grad

        def ab(t):
            return self.act_bytes([t]) if isinstance(t, torch.Tensor) else 0

        if name in ("conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d"):
            x, w = args[0], args[1]
            b = args[2] if len(args) > 2 else kwargs.get("bias")
            k = 1
            for d in w.shape[2:]:
                k *= d
            macs = (x.numel() * w.shape[1] * k) if "transpose" in name else (out.numel() * w.shape[1] * k)
            bias = out.numel() if isinstance(b, torch.Tensor) else 0
            ff = 2 * macs + bias
            bf = (2 * macs if rg(x) else 0) + (2 * macs if rg(w) else 0) + (bias if rg(b) else 0)
            bb = ((ob + ab(x)) if rg(w) else 0) + ((ob + ab(x)) if rg(x) else 0) + (ob if rg(b) else 0)
            return ff, bf, ab(x) + ob, bb, "conv"
        if name in ("linear", "addmm", "mm", "bmm", "matmul", "__matmul__", "baddbmm"):
            if name == "linear":
                x, w = args[0], args[1]
                b = args[2] if len(args) > 2 else kwargs.get("bias")
                k = w.shape[-1]
                ops = [(x, w), (w, x)]
            elif name in ("addmm", "baddbmm"):
                b, x, w = args[0], args[1], args[2]
                k = x.shape[-1]
                ops = [(x, w), (w, x)]
            else:
                x, w = args[0], args[1]
                b = None
                k = x.shape[-1]
                ops = [(x, w), (w, x)]
            macs = out.numel() * k
            bias = out.numel() if isinstance(b, torch.Tensor) else 0
            ff = 2 * macs + bias
            bf = sum(2 * macs for t, _ in ops if rg(t)) + (bias if rg(b) else 0)
            bb = sum(ob + ab(other) + ab(t) for t, other in ops if rg(t)) + (ob if rg(b) else 0)
            param = any(storage_key(t)[0] in self.param_storages for t in (x, w))
            return ff, bf, ab(x) + ab(w) + ob, bb, ("linear" if param else "attention")
        if name == "einsum":
            eq = args[0].replace(" ", "")
            ops_ = args[1:] if len(args) > 2 or not isinstance(args[1], (list, tuple)) else args[1]
            lhs = eq.split("->")[0].split(",")
            sizes = {}
            for term, t in zip(lhs, ops_):
                if "." in term:
                    raise ValueError("ellipsis")
                for ch, d in zip(term, t.shape):
                    sizes[ch] = d
            macs = 1
            for d in sizes.values():
                macs *= d
            bf = sum(2 * macs for t in ops_ if rg(t))
            return 2 * macs, bf, self.act_bytes(list(ops_)) + ob, \
                sum(ob + self.act_bytes(list(ops_)) for t in ops_ if rg(t)), "attention"
        if name == "scaled_dot_product_attention":
            q, k, v = args[0], args[1], args[2]
            causal = kwargs.get("is_causal", args[5] if len(args) > 5 else False)
            L, E = q.shape[-2], q.shape[-1]
            S, Ev = k.shape[-2], v.shape[-1]
            batch = q.numel() // (L * E)
            pairs = L * (L + 1) // 2 if (causal and L == S) else L * S
            ff = 2 * batch * pairs * (E + Ev)
            lse = 4 * batch * L
            fb = ab(q) + ab(k) + ab(v) + ob + lse
            bb = 2 * (ab(q) + ab(k) + ab(v)) + 4 * ob + 2 * lse
            return ff, (ff * 5 // 2 if (rg(q) or rg(k) or rg(v)) else 0), fb, bb, "attention"
        if name == "multi_head_attention_forward":
            q = args[0]
            key = args[1]
            L, N, E = q.shape[0], (q.shape[1] if q.dim() == 3 else 1), q.shape[-1]
            S = key.shape[0]
            need_weights = kwargs.get("need_weights", args[15] if len(args) > 15 else True)
            proj = 2 * (L * N * E * E + 2 * S * N * E * E) + 2 * L * N * E * E
            core = 4 * E * L * S * N
            ff = proj + core
            bf = 2 * proj + (core * 2 if need_weights else core * 5 // 2)
            unit = L * N * E * q.element_size()
            return ff, bf, 20 * unit, 33 * unit, "attention"
        if name == "embedding":
            ids, w = args[0], args[1]
            e = out.numel()
            return 0, (e if rg(w) else 0), 2 * ob + nbytes(ids), (ob + 4 * nbytes(ids)) if rg(w) else 0, "embedding"
        if name == "batch_norm":
            x = args[0]
            e = x.numel()
            return 7 * e, (10 * e if rg(x) or any(rg(t) for t in ins) else 0), 3 * ab(x), 5 * ab(x), "norm"
        if name in ("layer_norm", "group_norm", "instance_norm", "rms_norm"):
            x = args[0]
            e = x.numel()
            f, b = (4, 8) if name == "rms_norm" else (7, 10)
            return f * e, b * e, 2 * ab(x) + ob, 5 * ab(x), "norm"
        if name in ("dropout", "dropout1d", "dropout2d", "dropout3d", "alpha_dropout", "feature_alpha_dropout"):
            x = args[0]
            e = x.numel()
            return 2 * e, e if rg(x) else 0, ab(x) + ob + e, (ab(x) + ob + e) if rg(x) else 0, "elementwise"
        if "max_pool" in name:
            x = args[0]
            idx = 8 * out.numel()
            return x.numel(), out.numel(), ab(x) + ob + idx, ab(x) + ob + idx if rg(x) else 0, "pool"
        if "avg_pool" in name or "adaptive_max_pool" in name:
            x = args[0]
            return x.numel(), x.numel(), ab(x) + ob, (ab(x) + ob) if rg(x) else 0, "pool"
        if name in ("cat", "concat", "stack"):
            return 0, 0, 2 * ob, 0, "elementwise"
        if name in ("softmax", "log_softmax"):
            x = args[0]
            e = x.numel()
            return 5 * e, 3 * e if rg(x) else 0, 2 * ab(x) + ob, 3 * ob if rg(x) else 0, "elementwise"
        if name in ("cross_entropy", "nll_loss"):
            x = args[0]
            e = x.numel()
            return 5 * e, 3 * e if rg(x) else 0, 3 * ab(x), 4 * ab(x) if rg(x) else 0, "elementwise"
        return self.elementwise(ins, outs)

    # -- saved tensors ----------------------------------------------------------------------
    def pack(self, t):
        if self.current is not None and isinstance(t, torch.Tensor):
            key, n = storage_key(t)
            if key and key not in self.param_storages and key not in self.input_storages and key not in self.saved:
                self.saved[key] = (n, self.current)
        return t


def kind_of(rec):
    mod = rec.module
    if mod is not None:
        cls = type(mod).__name__
        tn = torch.nn
        if isinstance(mod, (tn.Conv1d, tn.Conv2d, tn.Conv3d, tn.ConvTranspose1d, tn.ConvTranspose2d, tn.ConvTranspose3d)):
            return "conv"
        if isinstance(mod, (tn.Linear, tn.Bilinear)) or cls == "Conv1D":
            return "linear"
        if isinstance(mod, (tn.Embedding, tn.EmbeddingBag)):
            return "embedding"
        if isinstance(mod, tn.MultiheadAttention):
            return "attention"
        if "Norm" in cls:
            return "norm"
        if "Pool" in cls:
            return "pool"
    if not rec.cats:
        return "other"
    best = max(sorted(rec.cats), key=lambda c: rec.cats[c])
    return best


def build_inputs(args, obj):
    model, example = (obj if isinstance(obj, tuple) else (obj, None))
    if not isinstance(model, torch.nn.Module):
        die("%s did not return an nn.Module (or (module, inputs))" % args.target)
    if example is None:
        if not args.input_shape:
            die("--input-shape is required when the callable returns no example inputs")
        shape = [int(x) for x in args.input_shape.split(",")]
        if args.input_dtype == "int64":
            example = torch.randint(0, args.input_high, shape, dtype=torch.int64)
        else:
            example = torch.randn(*shape, dtype=getattr(torch, args.input_dtype))
    return model, example


def call(model, example):
    if isinstance(example, dict):
        return model(**example)
    if isinstance(example, (tuple, list)):
        return model(*example)
    return model(example)


def to_device(x, device):
    if isinstance(x, torch.Tensor):
        return x.to(device)
    if isinstance(x, (list, tuple)):
        return type(x)(to_device(v, device) for v in x)
    if isinstance(x, dict):
        return {k: to_device(v, device) for k, v in x.items()}
    return x


def input_size(example):
    """The [model] key for the input size the costs are for (models/README.md "Input size"), so
    that --seq-len / --image-size can rescale them: token ids [batch, T] give seq_len = T, square
    images [batch, C, H, H] image_size = H; None for anything else."""
    ex_in = tensors_in(example)
    first = ex_in[0] if ex_in else None
    if first is None:
        return None
    if not first.is_floating_point() and first.dim() == 2:
        return ("seq_len", int(first.shape[1]))
    if first.is_floating_point() and first.dim() == 4 and first.shape[2] == first.shape[3]:
        return ("image_size", int(first.shape[2]))
    return None


def layer_costs(text):
    """{layer name: (forward_flops, forward_bytes)} of an exported model file."""
    costs, name, ff = {}, None, 0
    for line in text.splitlines():
        if line.startswith("[layer "):
            name = line[len("[layer "):-1]
        elif name and line.startswith("forward_flops = "):
            ff = int(line.split("=", 1)[1])
        elif name and line.startswith("forward_bytes = "):
            costs[name] = (ff, int(line.split("=", 1)[1]))
    return costs


def with_scaling(text, model, example, batch, name, source, device, param_order):
    """Adds each layer's `scaling` (models/README.md "Input size") by exporting again at half the
    input size: a layer whose forward cost stays the same is `fixed` (one vector per sample), one
    that falls with the square of the input ratio r is `quadratic` (attention), the rest follow r
    (`linear`, the default, not written).  A model that does not run at the smaller size keeps
    the default for every layer, and the file says so."""
    key, size = input_size(example)
    if size < 2:
        return text
    if key == "seq_len":
        small, r = example[:, :size // 2], (size // 2) / size
    else:
        side = size // 2
        small = torch.randn(example.shape[0], example.shape[1], side, side, dtype=example.dtype)
        r = (side / size) ** 2
    try:
        small_text = export(model, small, batch, name, source, device, param_order)
    except Exception as e:  # the model is built for one input size (fixed position tables, asserts)
        note = "# scaling: every layer linear (default); the model did not run at %s %d: %s" % (
            key, size // 2, str(e).splitlines()[0][:120] if str(e) else type(e).__name__)
        return text.replace("\n\n[model]\n", "\n" + note + "\n\n[model]\n", 1)
    big, little = layer_costs(text), layer_costs(small_text)
    rules = {}
    for layer, (ff, fb) in big.items():
        if layer not in little:
            continue
        a, b = (ff, little[layer][0]) if ff > 0 else (fb, little[layer][1])
        if a <= 0 or b <= 0:
            continue
        measured = math.log(b / a)
        rule = min((abs(measured), "fixed"), (abs(measured - math.log(r)), "linear"),
                   (abs(measured - 2 * math.log(r)), "quadratic"))[1]
        if rule != "linear":
            rules[layer] = rule
    out, layer = [], None
    for line in text.splitlines():
        out.append(line)
        if line.startswith("[layer "):
            layer = line[len("[layer "):-1]
        elif line.startswith("kind = ") and layer in rules:
            out.append("scaling = %s" % rules[layer])
    note = "# scaling: measured by a second export at %s %d: %d fixed, %d quadratic, the rest linear." % (
        key, size // 2, sum(v == "fixed" for v in rules.values()), sum(v == "quadratic" for v in rules.values()))
    return "\n".join(out).replace("\n\n[model]\n", "\n" + note + "\n\n[model]\n", 1) + "\n"


def export(model, example, batch, name, source, device, param_order=False):
    model.train()
    model.to(device)
    example = to_device(example, device)
    named = [(n, p) for n, p in model.named_parameters() if p.requires_grad]
    frozen = [n for n, p in model.named_parameters() if not p.requires_grad]
    if not named:
        die("the model has no parameters that require grad")
    owner = {}
    modules = dict(model.named_modules())
    for n, p in named:
        owner[n] = n.rsplit(".", 1)[0] if "." in n else ""
    owners = {modules[o] for o in owner.values()}

    ex = Exporter(model)
    for n, m in model.named_modules():
        ex.is_layer[m] = (m in owners) or (len(list(m.children())) == 0)
    ex.param_storages = {storage_key(p)[0] for p in model.parameters()} | {storage_key(b)[0] for b in model.buffers()}
    ex.input_storages = {storage_key(t)[0] for t in tensors_in(example)}
    handles = []
    for n, m in model.named_modules():
        handles.append(m.register_forward_pre_hook(ex.pre_hook))
        handles.append(m.register_forward_hook(ex.post_hook))

    # ready order: hook every parameter's gradient accumulation
    ready = []
    keep = []

    def mark(n):
        if n in ready:
            ready.remove(n)       # tensor-hook fallback fires per use: keep the last
        ready.append(n)

    for n, p in named:
        if hasattr(p, "register_post_accumulate_grad_hook"):
            keep.append(p.register_post_accumulate_grad_hook(lambda t, n=n: mark(n)))
        else:
            try:
                acc = p.view_as(p).grad_fn.next_functions[0][0]
                acc.register_hook(lambda *a, n=n: mark(n))
                keep.append(acc)
            except (AttributeError, IndexError):
                keep.append(p.register_hook(lambda g, n=n: mark(n)))

    with torch.autograd.graph.saved_tensors_hooks(ex.pack, lambda t: t):
        with ex:
            out = call(model, example)
    for h in handles:
        h.remove()
    floats = [t for t in tensors_in(out) if t.is_floating_point() and t.requires_grad]
    if not floats:
        die("the model's output has no floating-point tensor that requires grad")
    loss = sum(t.float().sum() for t in floats)
    loss.backward()

    # attribute parameters to the first call of their owner (or its nearest recorded ancestor)
    unplaced = []
    for n, p in named:
        path = owner[n]
        rec = None
        while True:
            m = modules[path]
            if m in ex.first_call:
                rec = ex.first_call[m]
                break
            if not path:
                break
            path = path.rsplit(".", 1)[0] if "." in path else ""
        if rec is None:
            unplaced.append((n, p))
        else:
            rec.params.append((n, p))
    recs = [r for r in ex.records if r.params or (r.ff + r.fb + r.bb) > 0]
    recs.sort(key=lambda r: r.order)
    if unplaced:
        tail = Record("unused", None, 1 << 60)
        tail.params = unplaced
        recs.append(tail)
    for key, (n, saver) in ex.saved.items():
        rec = ex.creator.get(key, saver)
        if rec not in recs:
            rec = saver if saver in recs else recs[-1]
        rec.act += n
    # a layer name must be non-empty and unique
    seen = set()
    for r in recs:
        if not r.name:
            r.name = r.params[0][0] if r.params else "root"
        base, k = r.name, 1
        while r.name in seen:
            k += 1
            r.name = "%s#%d" % (base, k)
        seen.add(r.name)
    # Parameters no gradient reached go last, in model.parameters() order: under static_graph the
    # Reducer pushes them in that order after the used ones, and its rebuild puts them there
    # (checked with real DDP in tests/real_ddp.py, model "partial").
    missing = [n for n, _ in named if n not in ready]
    order = ready + missing

    dtypes = {}
    for _, p in named:
        dtypes[p.dtype] = dtypes.get(p.dtype, 0) + p.numel()
    default_dtype = max(sorted(dtypes, key=str), key=lambda d: dtypes[d])
    if default_dtype not in DTYPE_NAMES:
        die("parameter dtype %s is not one of fp32/fp16/bf16/fp64" % default_dtype)

    def pspec(n, p):
        s = "%s:%s" % (n, ",".join(str(d) for d in p.shape) if p.dim() else "1")
        if p.dtype != default_dtype:
            if p.dtype not in DTYPE_NAMES:
                die("%s: dtype %s is not supported" % (n, p.dtype))
            s += ":" + DTYPE_NAMES[p.dtype]
        m = modules[owner[n]]
        if isinstance(m, (torch.nn.Embedding, torch.nn.EmbeddingBag)) and getattr(m, "sparse", False):
            s += ":sparse"
        return s

    ex_in = tensors_in(example)
    first = ex_in[0] if ex_in else None
    if first is not None and not first.is_floating_point() and first.dim() >= 2:
        input_desc = "%d tokens" % first.shape[1]
    elif first is not None:
        input_desc = "x".join(str(d) for d in first.shape[1:])
    else:
        input_desc = "?"
    size_key = input_size(example)
    n_params = sum(p.numel() for _, p in named)
    buffer_bytes = sum(nbytes(b) for b in model.buffers())
    per = float(batch)
    tot = lambda attr: sum(getattr(r, attr) for r in recs) / per

    lines = []
    c = lines.append
    c("# ddpsim model: %s — exported by tools/ddpsim-export.py from %s." % (name, source))
    c("# torch %s, device %s, batch %d, input %s; figures are per sample (totals / batch)." % (
        torch.__version__, device, batch, input_desc))
    c("# Format and conventions: models/README.md (same as tools/gen-models.py; costs from the real shapes).")
    c("# Totals: %d parameters in %d tensors, %d layers; forward %.3f GFLOPs/sample, backward %.3f;"
      % (n_params, len(named), len(recs), tot("ff") / 1e9, tot("bf") / 1e9))
    c("#   activations saved for backward %.1f MiB/sample." % (tot("act") / 1048576.0))
    c("# ready_order: observed in a real backward pass (%s)." % (
        "post-accumulate-grad hooks" if hasattr(torch.Tensor, "register_post_accumulate_grad_hook")
        else "AccumulateGrad post-hooks"))
    if frozen:
        c("# %d parameters with requires_grad=False are not listed (DDP does not reduce them)." % len(frozen))
    if missing:
        c("# No gradient reached: %s — DDP needs find_unused_parameters or static_graph (listed last in ready_order, parameters() order)."
          % ", ".join(missing[:8]) + (" …" if len(missing) > 8 else ""))
    if unplaced:
        c("# Parameters of modules that never ran in forward are in the layer \"unused\".")
    if [n for r in recs for n, _ in r.params] != [n for n, _ in named]:
        c("# model.parameters() order differs from this file's forward order%s (README \"Registration order\")."
          % ("; param_order gives it" if param_order else ""))
    c("")
    c("[model]")
    c("name = %s" % name)
    c("source = %s" % source)
    c("input = %s" % input_desc)
    c("dtype = %s" % DTYPE_NAMES[default_dtype])
    if size_key:
        c("%s = %d" % size_key)
    if buffer_bytes:
        c("buffer_bytes = %d" % buffer_bytes)
    c("ready_order = " + ";".join(order))
    file_order = [n for r in recs for n, _ in r.params]
    if param_order and file_order != [n for n, _ in named]:
        c("param_order = " + ";".join(n for n, _ in named))
    for r in recs:
        c("")
        c("[layer %s]" % r.name)
        c("kind = %s" % kind_of(r))
        if kind_of(r) == "conv" and getattr(r.module, "groups", 1) > 1:
            c("groups = %d" % r.module.groups)
        c("forward_flops = %d" % round(r.ff / per))
        c("backward_flops = %d" % round(r.bf / per))
        c("forward_bytes = %d" % round(r.fb / per))
        c("backward_bytes = %d" % round(r.bb / per))
        c("activation_bytes = %d" % round(r.act / per))
        if r.params:
            c("params = " + ";".join(pspec(n, p) for n, p in r.params))
    for line in lines:
        if len(line.encode()) >= 65536:
            die("a line of the output exceeds 64 KiB (too many parameters for one ready_order line)", 1)
    return "\n".join(lines) + "\n"


def main(argv):
    ap = argparse.ArgumentParser(description="Write a ddpsim model file from a torch.nn.Module.")
    ap.add_argument("target", help="MODULE:CALLABLE returning an nn.Module or (module, example_inputs)")
    ap.add_argument("--input-shape", help="comma-separated input shape, batch first (e.g. 8,3,224,224)")
    ap.add_argument("--input-dtype", default="float32", help="float32 (default), float64, int64 (token ids)")
    ap.add_argument("--input-high", type=int, default=1000, help="int64 inputs are drawn from [0, N) (default 1000)")
    ap.add_argument("--batch", type=int, help="samples in the example (default: first dimension of the first input)")
    ap.add_argument("--name", help="model name (default: the output file name without .model)")
    ap.add_argument("--device", default="cpu", help="cpu (default) or cuda")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--no-param-order", dest="param_order", action="store_false",
                    help="omit [model] param_order even where model.parameters() order differs from forward order")
    ap.add_argument("-o", "--output", required=True, help="output .model file ('-' for stdout)")
    args = ap.parse_args(argv)
    if ":" not in args.target:
        die("target must be MODULE:CALLABLE, e.g. torchvision.models:resnet50")
    modname, attr = args.target.split(":", 1)
    sys.path.insert(0, os.getcwd())
    try:
        obj = importlib.import_module(modname)
        for part in attr.split("."):
            obj = getattr(obj, part)
    except (ImportError, AttributeError) as e:
        die("cannot load %s: %s" % (args.target, e))
    torch.manual_seed(args.seed)
    model, example = build_inputs(args, obj())
    ex_in = tensors_in(example)
    batch = args.batch or (ex_in[0].shape[0] if ex_in and ex_in[0].dim() else 1)
    name = args.name or (os.path.basename(args.output)[:-len(".model")] if args.output.endswith(".model") else "exported")
    text = export(model, example, batch, name, args.target, args.device, args.param_order)
    if input_size(example) and isinstance(example, torch.Tensor):
        text = with_scaling(text, model, example, batch, name, args.target, args.device, args.param_order)
    if args.output == "-":
        sys.stdout.write(text)
    else:
        with open(args.output, "w", encoding="utf-8", newline="\n") as f:
            f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
