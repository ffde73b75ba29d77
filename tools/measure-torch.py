#!/usr/bin/env python3
"""measure-torch.py: real 1-GPU training steps of ddpsim's shipped models, for calibration and
validation.

For each model × precision × per-GPU batch it times, with CUDA events, forward, backward and the
optimizer step of a plain (no DDP) training step, and optionally the same step under
DistributedDataParallel with world_size 1 (NCCL), which isolates the reducer's own cost (autograd
hooks, bucket copies, one-rank AllReduce launches).  It writes one JSON object per line with the
machine's provenance, and for the first batch of each model/precision a torch.profiler Chrome trace
of one step (gzipped), which `ddpsim fit` can import as measured per-layer backward times.

The models are built exactly as tools/gen-models.py describes them (models/README.md): torchvision
definitions with weights=None, HF BertModel / GPT2LMHeadModel from configs written out here (no
download).  PyTorch's defaults are kept (cudnn.benchmark off); fp32 means TF32 off, tf32 means
TF32 on for matmul and cuDNN, fp16/bf16 mean torch.autocast with fp32 master weights.

    python3 tools/measure-torch.py --out measurements.jsonl --traces DIR
    python3 tools/measure-torch.py --models resnet50 --precisions fp32,fp16 --batches 32,64
    python3 tools/measure-torch.py --models resnet50 --channels-last   # NHWC (ddpsim --channels-last)
"""
import argparse
import gzip
import json
import os
import platform
import shutil
import socket
import statistics
import sys
import time
import traceback

import torch
import torch.nn as nn


def build(name, seq_len):
    """Returns (module, make_batch(batch) -> inputs tuple, loss(outputs) -> scalar)."""
    import torchvision.models as tvm
    ce = nn.CrossEntropyLoss()
    if name in ("resnet50", "resnet101", "vgg16", "vit-b16", "inception-v3", "resnext50", "resnext101"):
        ctor = {"resnet50": tvm.resnet50, "resnet101": tvm.resnet101, "vgg16": tvm.vgg16,
                "vit-b16": tvm.vit_b_16, "inception-v3": tvm.inception_v3,
                "resnext50": tvm.resnext50_32x4d, "resnext101": tvm.resnext101_32x8d}[name]
        kwargs = {"weights": None}
        if name == "inception-v3":
            kwargs.update(aux_logits=True, init_weights=False)
        model = ctor(**kwargs)
        size = 299 if name == "inception-v3" else 224

        def make(batch):
            return (torch.randn(batch, 3, size, size, device="cuda"),
                    torch.randint(0, 1000, (batch,), device="cuda"))

        def loss(model, inputs):
            out = model(inputs[0])
            if isinstance(out, tuple) or hasattr(out, "aux_logits"):
                logits, aux = out[0], out[1]
                return ce(logits, inputs[1]) + 0.4 * ce(aux, inputs[1])
            return ce(out, inputs[1])
        return model, make, loss
    import transformers as tf
    if name in ("bert-base", "bert-large"):
        large = name == "bert-large"
        cfg = tf.BertConfig(vocab_size=30522, hidden_size=1024 if large else 768,
                            num_hidden_layers=24 if large else 12,
                            num_attention_heads=16 if large else 12,
                            intermediate_size=4096 if large else 3072,
                            max_position_embeddings=512, attn_implementation="sdpa")
        model = tf.BertModel(cfg, add_pooling_layer=True)
        seq = seq_len or 512

        def make(batch):
            return (torch.randint(0, cfg.vocab_size, (batch, seq), device="cuda"),)

        def loss(model, inputs):
            out = model(input_ids=inputs[0])
            return out.last_hidden_state.float().pow(2).mean() + out.pooler_output.float().mean()
        return model, make, loss
    if name in ("gpt2", "gpt2-xl"):
        xl = name == "gpt2-xl"
        cfg = tf.GPT2Config(n_embd=1600 if xl else 768, n_layer=48 if xl else 12,
                            n_head=25 if xl else 12, attn_implementation="sdpa")
        model = tf.GPT2LMHeadModel(cfg)
        seq = seq_len or 1024

        def make(batch):
            return (torch.randint(0, cfg.vocab_size, (batch, seq), device="cuda"),)

        def loss(model, inputs):
            return model(input_ids=inputs[0], labels=inputs[0]).loss
        return model, make, loss
    raise SystemExit(f"measure-torch.py: --models: unknown model '{name}'")


def set_precision(precision):
    tf32 = precision == "tf32"
    torch.backends.cuda.matmul.allow_tf32 = tf32
    torch.backends.cudnn.allow_tf32 = tf32
    torch.backends.cudnn.benchmark = False
    if precision == "fp16":
        return torch.autocast("cuda", dtype=torch.float16)
    if precision == "bf16":
        return torch.autocast("cuda", dtype=torch.bfloat16)
    return torch.autocast("cuda", enabled=False)


def time_steps(model, make, loss_fn, batch, precision, optimizer, warmup, iters):
    inputs = make(batch)
    events = []
    for i in range(warmup + iters):
        marks = [torch.cuda.Event(enable_timing=True) for _ in range(4)]
        marks[0].record()
        with set_precision(precision):
            loss = loss_fn(model, inputs)
        marks[1].record()
        loss.backward()
        marks[2].record()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        marks[3].record()
        if i >= warmup:
            events.append(marks)
    torch.cuda.synchronize()
    fwd = [m[0].elapsed_time(m[1]) for m in events]
    bwd = [m[1].elapsed_time(m[2]) for m in events]
    opt = [m[2].elapsed_time(m[3]) for m in events]
    step = [m[0].elapsed_time(m[3]) for m in events]
    med = statistics.median
    # Host side: the CPU time to issue one whole step (Python, autograd, dispatcher, launches)
    # starting from an idle GPU, so that a full launch queue never blocks the CPU.
    host = []
    for _ in range(max(5, iters // 2)):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        with set_precision(precision):
            loss = loss_fn(model, inputs)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        host.append(1e3 * (time.perf_counter() - t0))
    torch.cuda.synchronize()
    return {"forward_ms": med(fwd), "backward_ms": med(bwd), "optimizer_ms": med(opt),
            "step_ms": med(step), "step_ms_min": min(step), "step_ms_max": max(step),
            "host_issue_ms": med(host), "iterations": iters}


def trace_step(model, make, loss_fn, batch, precision, optimizer, path):
    from torch.profiler import profile, ProfilerActivity
    inputs = make(batch)
    for _ in range(3):
        with set_precision(precision):
            loss = loss_fn(model, inputs)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        with set_precision(precision):
            loss = loss_fn(model, inputs)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        torch.cuda.synchronize()
    raw = path[:-3]
    prof.export_chrome_trace(raw)
    with open(raw) as f:
        events = json.load(f).get("traceEvents", [])
    kernels = sum(1 for e in events if e.get("cat") == "kernel")
    with open(raw, "rb") as src, gzip.open(path, "wb", compresslevel=9) as dst:
        shutil.copyfileobj(src, dst)
    os.unlink(raw)
    return kernels


def provenance():
    props = torch.cuda.get_device_properties(0)
    return {"host": socket.gethostname(), "gpu": props.name, "sm_count": props.multi_processor_count,
            "gpu_memory_bytes": props.total_memory, "torch": torch.__version__,
            "cuda": torch.version.cuda, "cudnn": torch.backends.cudnn.version(),
            "nccl": ".".join(map(str, torch.cuda.nccl.version())), "python": platform.python_version(),
            "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--models", default="resnet50,resnet101,vgg16,inception-v3,vit-b16,bert-base,bert-large,gpt2")
    ap.add_argument("--precisions", default="fp32,tf32,fp16,bf16")
    ap.add_argument("--batches", default="", help="per-GPU batches for every model (default: per model)")
    ap.add_argument("--seq-len", type=int, default=0, help="transformer sequence length (default: the model file's)")
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--iters", type=int, default=20)
    ap.add_argument("--ddp", default="resnet50,bert-base", help="models also timed under DDP, world_size 1")
    ap.add_argument("--out", default="-")
    ap.add_argument("--traces", default="", help="directory for gzipped torch.profiler Chrome traces")
    ap.add_argument("--channels-last", action="store_true",
                    help="model and image inputs in torch.channels_last (NHWC) instead of PyTorch's NCHW")
    args = ap.parse_args()
    if not torch.cuda.is_available():
        print("measure-torch.py: no GPU visible", file=sys.stderr)
        return 3
    default_batches = {"resnet50": [32, 64], "resnet101": [32], "vgg16": [32], "inception-v3": [32],
                       "vit-b16": [32], "resnext50": [32], "resnext101": [32],
                       "bert-base": [8, 32], "bert-large": [8], "gpt2": [8], "gpt2-xl": [2]}
    out = sys.stdout if args.out == "-" else open(args.out, "a")
    prov = provenance()
    ddp_models = set(filter(None, args.ddp.split(",")))
    if ddp_models:
        os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
        os.environ.setdefault("MASTER_PORT", "29531")
        torch.distributed.init_process_group("nccl", rank=0, world_size=1)
    for name in args.models.split(","):
        batches = [int(b) for b in args.batches.split(",")] if args.batches else default_batches.get(name, [8])
        for precision in args.precisions.split(","):
            for i, batch in enumerate(batches):
                row = dict(prov, model=name, precision=precision, batch=batch, seq_len=args.seq_len or None,
                           optimizer="sgd-momentum", ddp=False, channels_last=args.channels_last)
                try:
                    torch.manual_seed(0)
                    module, make, loss_fn = build(name, args.seq_len)
                    module = module.cuda().train()
                    if args.channels_last:
                        module = module.to(memory_format=torch.channels_last)
                        plain = make
                        make = lambda b, plain=plain: tuple(
                            x.contiguous(memory_format=torch.channels_last) if x.dim() == 4 else x for x in plain(b))
                    opt = torch.optim.SGD(module.parameters(), lr=1e-3, momentum=0.9)
                    row.update(time_steps(module, make, loss_fn, batch, precision, opt, args.warmup, args.iters))
                    row["max_memory_bytes"] = torch.cuda.max_memory_allocated()
                    if args.traces and i == 0:
                        os.makedirs(args.traces, exist_ok=True)
                        path = os.path.join(args.traces, f"{name}-{precision}-b{batch}.json.gz")
                        row["kernels_per_step"] = trace_step(module, make, loss_fn, batch, precision, opt, path)
                        row["trace"] = os.path.basename(path)
                    out.write(json.dumps(row) + "\n")
                    out.flush()
                    if name in ddp_models and i == 0:
                        ddp = torch.nn.parallel.DistributedDataParallel(module)
                        opt = torch.optim.SGD(ddp.parameters(), lr=1e-3, momentum=0.9)
                        drow = dict(row, ddp=True, world_size=1, bucket_cap_mb=25)
                        drow.pop("trace", None)
                        drow.update(time_steps(ddp, make, loss_fn, batch, precision, opt, args.warmup, args.iters))
                        out.write(json.dumps(drow) + "\n")
                        out.flush()
                        del ddp
                except torch.cuda.OutOfMemoryError:
                    out.write(json.dumps(dict(row, error="out of memory")) + "\n")
                except Exception as exc:  # keep measuring the other configurations
                    traceback.print_exc()
                    out.write(json.dumps(dict(row, error=repr(exc)[:300])) + "\n")
                finally:
                    module = opt = None
                    torch.cuda.empty_cache()
                    torch.cuda.reset_peak_memory_stats()
    if ddp_models:
        torch.distributed.destroy_process_group()
    return 0


if __name__ == "__main__":
    sys.exit(main())
