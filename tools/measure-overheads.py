#!/usr/bin/env python3
"""measure-overheads.py: the per-call costs below a PyTorch DDP step, on one GPU.

Measures, on the machine it runs on (one line of JSON per measurement, provenance first):
  - kernel: the GPU's per-kernel floor (1 000 one-element adds captured in a CUDA graph and
    replayed: GPU time per kernel with no host in the way) and the host's eager issue time per
    op (wall time of 20 000 x.add_(1) calls without a sync, GPU far behind);
  - allreduce: a one-rank NCCL process group: host time per dist.all_reduce(async_op=True) call
    and GPU time per call back to back (CUDA events), at 4 B and 1 MiB;
  - ddp: the same training step under DistributedDataParallel (world_size 1, NCCL) at
    bucket_cap_mb 1 and 25 (the PyTorch DDP benchmark's comparison), the bucket count of each,
    the median step (CUDA events) and the host's time to issue one step.
    python3 tools/measure-overheads.py --out overheads.jsonl
"""
import argparse, json, os, platform, statistics, subprocess, sys, time
import torch
import torch.nn as nn
import torch.distributed as dist


def provenance():
    p = {"kind": "provenance", "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
         "torch": torch.__version__, "cuda": torch.version.cuda,
         "cudnn": torch.backends.cudnn.version(), "nccl": ".".join(map(str, torch.cuda.nccl.version())),
         "gpu": torch.cuda.get_device_name(0), "python": platform.python_version(),
         "cpu": platform.processor(), "cpus": os.cpu_count()}
    try:
        p["nvidia_smi"] = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version,clocks.max.sm,power.limit",
                                          "--format=csv,noheader"], capture_output=True, text=True).stdout.strip()
    except OSError:
        pass
    try:
        with open("/proc/cpuinfo") as f:
            p["cpu_model"] = next(l.split(":", 1)[1].strip() for l in f if l.startswith("model name"))
    except (OSError, StopIteration):
        pass
    return p


def emit(out, obj):
    line = json.dumps(obj)
    print(line, flush=True)
    out.write(line + "\n")
    out.flush()


def kernel_floor(out):
    x = torch.zeros(1, device="cuda")
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(10):
            x.add_(1)
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    n = 1000
    with torch.cuda.graph(g):
        for _ in range(n):
            x.add_(1)
    for _ in range(3):
        g.replay()
    torch.cuda.synchronize()
    per = []
    for _ in range(10):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record(); g.replay(); b.record(); b.synchronize()
        per.append(a.elapsed_time(b) * 1e3 / n)
    # host issue per eager op: the GPU is kept busy first so the host never waits
    big = torch.randn(8192, 8192, device="cuda")
    host = []
    for _ in range(5):
        for _ in range(20):
            big @ big          # ~20 ms of GPU work ahead of the timed ops
        t0 = time.perf_counter()
        for _ in range(2000):
            x.add_(1)
        host.append((time.perf_counter() - t0) * 1e6 / 2000)
        torch.cuda.synchronize()
    emit(out, {"kind": "kernel", "graph_gpu_us_per_kernel": statistics.median(per),
               "eager_host_us_per_op": statistics.median(host), "host_samples": host})


def allreduce_costs(out):
    for nbytes in (4, 1 << 20):
        t = torch.zeros(nbytes // 4, device="cuda")
        for _ in range(50):
            dist.all_reduce(t)
        torch.cuda.synchronize()
        host, gpu = [], []
        for _ in range(5):
            big = torch.randn(4096, 4096, device="cuda")
            for _ in range(40):
                big @ big
            t0 = time.perf_counter()
            for _ in range(500):
                dist.all_reduce(t, async_op=True)
            host.append((time.perf_counter() - t0) * 1e6 / 500)
            torch.cuda.synchronize()
            a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            a.record()
            for _ in range(500):
                dist.all_reduce(t)
            b.record(); b.synchronize()
            gpu.append(a.elapsed_time(b) * 1e3 / 500)
        emit(out, {"kind": "allreduce", "bytes": nbytes, "host_us_per_call": statistics.median(host),
                   "gpu_us_per_call_back_to_back": statistics.median(gpu), "host_samples": host, "gpu_samples": gpu})


def ddp_steps(out, name, precision, batch, caps, iters):
    import torchvision.models as tvm
    torch.manual_seed(0)
    model = {"resnet50": tvm.resnet50, "resnet101": tvm.resnet101}[name](weights=None).cuda()
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    ce = nn.CrossEntropyLoss()
    x = torch.randn(batch, 3, 224, 224, device="cuda")
    y = torch.randint(0, 1000, (batch,), device="cuda")
    for cap in caps:
        ddp = nn.parallel.DistributedDataParallel(model, bucket_cap_mb=cap)
        opt = torch.optim.SGD(ddp.parameters(), lr=0.01, momentum=0.9)
        steps, hosts = [], []
        for i in range(iters + 8):
            torch.cuda.synchronize()
            a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            t0 = time.perf_counter()
            a.record()
            with torch.autocast("cuda", dtype=torch.bfloat16, enabled=precision == "bf16"):
                loss = ce(ddp(x), y)
            loss.backward()
            opt.step()
            opt.zero_grad(set_to_none=True)
            b.record()
            h = time.perf_counter() - t0
            b.synchronize()
            if i >= 8:
                steps.append(a.elapsed_time(b))
                hosts.append(h * 1e3)
        buckets = None
        try:
            buckets = len(ddp.reducer._get_zeros_like_grad_buckets())
        except Exception:
            try:
                buckets = ddp._get_ddp_logging_data().get("num_buckets_reduced")
            except Exception:
                pass
        emit(out, {"kind": "ddp", "model": name, "precision": precision, "batch": batch, "bucket_cap_mb": cap,
                   "buckets": buckets, "step_ms_median": statistics.median(steps),
                   "step_ms_min": min(steps), "step_ms_max": max(steps),
                   "host_issue_ms_median": statistics.median(hosts), "iters": iters})
        del ddp, opt


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--iters", type=int, default=30)
    a = ap.parse_args()
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", "29511")
    dist.init_process_group("nccl", rank=0, world_size=1, device_id=torch.device("cuda:0"))
    with open(a.out, "w") as out:
        emit(out, provenance())
        kernel_floor(out)
        allreduce_costs(out)
        for name in ("resnet50", "resnet101"):
            for precision in ("fp32", "bf16"):
                # alternate the caps twice so drift shows up
                ddp_steps(out, name, precision, 32, (25, 1, 25, 1), a.iters)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
