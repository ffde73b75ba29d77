#!/usr/bin/env python3
"""kernel-summary.py: GPU time by kernel in torch.profiler Chrome traces (gzipped or not).

Default: one JSON object per trace — the file, the total kernel time, and every kernel name with
its count and time (ms), longest first.  --classes: one CSV row per trace with the time (ms) in the
kernel classes ddpsim's compute model has terms for: conv (cuDNN/cuBLAS kernels launched by a
convolution op, transposes excepted), transpose (cuDNN's nchwToNhwc/nhwcToNchw), norm (batch norm),
pool, linear (GEMMs of linear layers), optimizer (multi_tensor_apply) and elementwise (the rest).
--per-conv: one CSV row per convolution op, in forward order (the model file's conv layers' order;
backward ops are matched in reverse), with its transposes and other kernels, forward and backward.
The trace's name gives model, precision and batch as measure-torch.py --traces writes them
(MODEL-PRECISION-bBATCH.json.gz; a "-nhwc" suffix or an "nhwc" directory marks channels_last).
This is how calibrate/data/fc-vm-H100x1-20261127-kernel-classes.csv was made, the data behind the
H100 memory-format terms of src/compute.c.
--gemm-fit MODELS_DIR KERNELS.jsonl: from this tool's default output for transformer traces, the
GEMM efficiency per precision: every aligned tensor-core GEMM kernel of a step (nvjet, sm90 xmma tf32)
against the FLOPs of the model file's linear layers (the lm_head apart), least squares of
time = FLOPs / (eff x peak) + 2 us per kernel, and the unaligned head's align1 kernels in TFLOP/s.
The H100's FP16/BF16 0.70 and TF32 0.55 of src/compute.c come from
calibrate/data/fc-vm-H100x1-20261127-transformer-kernels.jsonl this way (peaks: 989.4 / 494.7).

    python3 tools/kernel-summary.py traces/*.json.gz > kernels.jsonl
    python3 tools/kernel-summary.py --classes traces/*.json.gz > classes.csv
    python3 tools/kernel-summary.py --per-conv traces/resnet50-fp16-b256.json.gz
    python3 tools/kernel-summary.py --gemm-fit models calibrate/data/fc-vm-H100x1-20261127-transformer-kernels.jsonl
"""
import collections
import gzip
import json
import os
import re
import sys

CLASSES = ("conv", "transpose", "norm", "pool", "linear", "optimizer", "elementwise")
CONV_OPS = ("aten::cudnn_convolution", "aten::convolution_backward")
LINEAR_OPS = ("aten::linear", "aten::addmm", "aten::mm")


def events(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        return json.load(f).get("traceEvents", [])


def kernel_class(name, op):
    if re.search(r"nchwToNhwc|nhwcToNchw", name):
        return "transpose"
    if re.search(r"batch_norm|bn_fw|bn_bw|batchnorm", name, re.I):
        return "norm"
    if re.search(r"pool", name, re.I):
        return "pool"
    if "multi_tensor_apply" in name:
        return "optimizer"
    if op in CONV_OPS:
        return "conv"
    if op in LINEAR_OPS:
        return "linear"
    return "elementwise"


def summarize(path):
    by_name = collections.defaultdict(lambda: [0, 0.0])
    for e in events(path):
        if e.get("cat") == "kernel" and "dur" in e:
            entry = by_name[e.get("name", "?")]
            entry[0] += 1
            entry[1] += e["dur"] / 1e3
    kernels = sorted(({"name": n, "count": c, "ms": round(ms, 4)} for n, (c, ms) in by_name.items()),
                     key=lambda k: -k["ms"])
    return {"trace": os.path.basename(path), "kernel_ms": round(sum(k["ms"] for k in kernels), 4),
            "kernels": kernels}


def classes(path):
    evs = events(path)
    op_of = {e["args"]["External id"]: e["name"] for e in evs
             if e.get("cat") == "cpu_op" and "External id" in e.get("args", {})}
    totals = collections.Counter()
    for e in evs:
        if e.get("cat") == "kernel" and "dur" in e:
            op = op_of.get(e.get("args", {}).get("External id"), "")
            totals[kernel_class(e.get("name", ""), op)] += e["dur"] / 1e3
    return totals


def per_conv(path):
    """Rows (conv index, forward transpose ms, backward transpose ms, forward other ms, backward other ms)."""
    evs = events(path)
    ops = {e["args"]["External id"]: e for e in evs
           if e.get("cat") == "cpu_op" and "External id" in e.get("args", {})}
    per_op = collections.defaultdict(lambda: [0.0, 0.0])
    for e in evs:
        if e.get("cat") == "kernel" and "dur" in e:
            op = ops.get(e.get("args", {}).get("External id"))
            if op and op["name"] in CONV_OPS:
                per_op[op["args"]["External id"]][0 if re.search(r"nchwToNhwc|nhwcToNchw", e["name"]) else 1] += \
                    e["dur"] / 1e3
    forward = sorted((o for o in ops.values() if o["name"] == CONV_OPS[0]), key=lambda o: o["ts"])
    backward = sorted((o for o in ops.values() if o["name"] == CONV_OPS[1]), key=lambda o: -o["ts"])
    for i, (f, b) in enumerate(zip(forward, backward)):
        ft, fk = per_op[f["args"]["External id"]]
        bt, bk = per_op[b["args"]["External id"]]
        yield i, ft, bt, fk, bk


GEMM_PEAK_TFLOPS = {"bf16": 989.4, "fp16": 989.4, "tf32": 494.7}   # H100 SXM dense tensor peaks
GEMM_RAMP_US = 2.0   # src/compute.c matmul_ramp_us


def linear_flops(models_dir, model):
    """Forward + backward FLOPs per sample of the model file's linear layers: (aligned, lm_head)."""
    body, head, layer, keys = 0.0, 0.0, None, {}
    with open(os.path.join(models_dir, model + ".model")) as f:
        lines = [l.strip() for l in f] + ["[layer end]"]
    for line in lines:
        if line.startswith("[layer "):
            if layer and keys.get("kind") == "linear":
                flops = float(keys.get("forward_flops", 0)) + float(keys.get("backward_flops", 0))
                if layer.endswith("lm_head"):
                    head += flops
                else:
                    body += flops
            layer, keys = line[7:-1], {}
        elif layer and "=" in line:
            k, v = line.split("=", 1)
            keys[k.strip()] = v.strip()
    return body, head


def gemm_fit(models_dir, kernels_path):
    by_precision = collections.defaultdict(list)
    with open(kernels_path) as f:
        for line in f:
            d = json.loads(line)
            m = re.match(r"(.+)-(tf32|fp16|bf16)-b(\d+)", d["trace"])
            if not m:
                continue
            model, precision, batch = m.group(1), m.group(2), int(m.group(3))
            aligned = [k for k in d["kernels"] if "nvjet" in k["name"] or "tf32f32" in k["name"]]
            head = [k for k in d["kernels"] if "align1" in k["name"]]
            body_flops, head_flops = linear_flops(models_dir, model)
            peak_us = body_flops * batch / (GEMM_PEAK_TFLOPS[precision] * 1e12) * 1e6
            ms = sum(k["ms"] for k in aligned)
            by_precision[precision].append((d["trace"], peak_us, sum(k["count"] for k in aligned), ms * 1e3))
            if head:
                head_ms = sum(k["ms"] for k in head)
                print(f"{d['trace']}: unaligned head {head_ms:.2f} ms, {head_flops * batch / head_ms / 1e9:.0f} TFLOP/s")
    for precision, rows in sorted(by_precision.items()):
        slope = sum(x * (t - GEMM_RAMP_US * n) for _, x, n, t in rows) / sum(x * x for _, x, n, t in rows)
        eff = 1.0 / slope
        print(f"{precision}: efficiency {eff:.3f} of peak with a {GEMM_RAMP_US:g} us ramp over {len(rows)} steps")
        for trace, x, n, t in rows:
            print(f"  {trace}: {n} GEMM kernels, {t / 1e3:.2f} ms measured, {(x / eff + GEMM_RAMP_US * n) / t - 1:+.3f}")
    return 0


def main(argv):
    if argv[:1] == ["--gemm-fit"]:
        if len(argv) != 3:
            print(__doc__, file=sys.stderr)
            return 2
        return gemm_fit(argv[1], argv[2])
    as_classes = "--classes" in argv
    as_per_conv = "--per-conv" in argv
    paths = [a for a in argv if a not in ("--classes", "--per-conv")]
    if not paths:
        print(__doc__, file=sys.stderr)
        return 2
    if as_classes:
        print("model,precision,batch,memory_format," + ",".join(c + "_ms" for c in CLASSES) + ",trace")
    if as_per_conv:
        print("trace,conv,forward_transpose_ms,backward_transpose_ms,forward_other_ms,backward_other_ms")
        for path in paths:
            for row in per_conv(path):
                print(os.path.basename(path) + "," + ",".join([str(row[0])] + [f"{x:.4f}" for x in row[1:]]))
        return 0
    for path in paths:
        if not as_classes:
            print(json.dumps(summarize(path)))
            continue
        name = os.path.basename(path)
        m = re.match(r"(.+)-(fp32|tf32|fp16|bf16)-b(\d+)(-nhwc)?\.json(\.gz)?$", name)
        if not m:
            print(f"kernel-summary.py: {path}: not MODEL-PRECISION-bBATCH.json.gz", file=sys.stderr)
            return 2
        nhwc = m.group(4) or os.path.basename(os.path.dirname(path)).endswith("nhwc")
        t = classes(path)
        print(f"{m.group(1)},{m.group(2)},{m.group(3)},{'channels_last' if nhwc else 'nchw'}," +
              ",".join(f"{t[c]:.3f}" for c in CLASSES) + f",{name}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
