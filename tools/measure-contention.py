#!/usr/bin/env python3
# measure-contention.py: how much slower a training step runs on one GPU while a kernel shaped like
# an NCCL AllReduce runs beside it on a second stream -- ddpsim's overlap_slowdown (docs/overheads.md,
# "Contention").  One GPU cannot run a multi-rank NCCL AllReduce (NCCL refuses two ranks on one
# device), so the collective is stood in for by what it does to the local GPU: C thread blocks of
# 512 threads (NCCL runs one block per channel) that read two buffers and write one -- a ring step's
# local HBM traffic: the peer's chunk landing in the receive buffer, read back with the local input,
# the sum written -- each block paced to a target byte rate (or as fast as it goes).
#
# The step is captured in a CUDA graph (forward, backward, SGD step), so the host sets no pace and
# the measured slowdown is the GPU's alone.  Baseline and contended replays alternate in rounds so a
# clock drift hits both.  Writes $OUT/contention.jsonl, one JSON object a line:
#   {"kind":"machine", ...}                       versions, GPU, SMs, clocks
#   {"kind":"alone", "variant":..., "GBps":...}   the stand-in kernel on an idle GPU: its HBM rate
#   {"kind":"step", "config":..., "variant":..., "step_ms":[...], "median_ms":..., "slowdown":...,
#    "side_GBps":...}                             the step with the stand-in running for all of it
#     OUT=dir python3 tools/measure-contention.py
#     OUT=dir CONTENTION_VARIANTS=n16-spin,n16-1100,n32-1100 CONTENTION_CONFIGS=resnet50-fp32-b64 python3 …
# (the second form: a subset, here NCCL-shaped blocks only)
import json, os, statistics as S, subprocess
import cupy as cp, torch, torch.nn as nn, torchvision.models as tv

OUT = open(os.environ['OUT'] + '/contention.jsonl', 'w')
def emit(o):
    line = json.dumps(o)
    print(line, flush=True)
    OUT.write(line + '\n')
    OUT.flush()

# Two shapes of block: "light", 512 threads at 32 registers (a quarter of an SM's register file, so
# compute blocks can share its SM), and "nccl", NCCL's own: 640 threads held at 96 registers (61 440
# of the SM's 65 536, nvcc --resource-usage, no spills), as NCCL 2.17's AllReduce kernels in HTA's
# traces (96 registers, 512-640 threads): nothing of size fits beside one.
SRC = r'''
__device__ unsigned long long now_ns() { unsigned long long t; asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)); return t; }
#define STAND_IN(NAME, BOUNDS, ...)   /* the tile's body last: it holds commas */                        \
extern "C" __global__ void __launch_bounds__ BOUNDS                                                      \
NAME(const float4 *a, const float4 *b, float4 *out, long long n4, long long tile4, double ns_per_tile,    \
     volatile int *stop, unsigned long long *done) {                                                     \
  __shared__ int quit;                                                                                   \
  unsigned long long t0 = now_ns(), last = t0, tiles = 0;                                                \
  for (;;) {                                                                                             \
    for (long long base = (long long)blockIdx.x * tile4; base < n4; base += (long long)gridDim.x * tile4) { \
      __VA_ARGS__                                                                                        \
      tiles++;                                                                                           \
      if (tick(&quit, &last, t0, tiles, tile4, ns_per_tile, stop, done)) return;                         \
    }                                                                                                    \
  }                                                                                                      \
}
/* After a tile: pace it, then agree on leaving.  Returns true when the block must return. */
__device__ bool tick(int *quit, unsigned long long *last, unsigned long long t0, unsigned long long tiles,
                     long long tile4, double ns_per_tile, volatile int *stop, unsigned long long *done) {
  if (threadIdx.x == 0) {
    if (ns_per_tile > 0) {   /* a link's pace: a tile no sooner than ns_per_tile after the last, no catching up */
      while (now_ns() < *last + (unsigned long long)ns_per_tile) __nanosleep(256);
      *last = now_ns();
    }
    *quit = *stop || now_ns() - t0 > 5000000000ull;   /* told to stop, or a 5 s guard */
  }
  __syncthreads();
  int leave = *quit;
  __syncthreads();         /* every thread has read quit before thread 0 writes it again */
  if (leave && threadIdx.x == 0) { atomicAdd(done, tiles * (unsigned long long)tile4 * 48ull); atomicAdd(done + 1, now_ns() - t0); }
  return leave;
}
STAND_IN(stand_in_light, (512),
  for (long long i = base + threadIdx.x; i < base + tile4 && i < n4; i += blockDim.x) {
    float4 x = a[i], y = b[i];
    out[i] = make_float4(x.x + y.x, x.y + y.y, x.z + y.z, x.w + y.w);
  })
STAND_IN(stand_in_nccl, (640, 1),
  float4 x[8], y[8];
  _Pragma("unroll") for (int u = 0; u < 8; u++) {
    long long i = base + threadIdx.x + (long long)u * blockDim.x;
    if (i < n4) { x[u] = a[i]; y[u] = b[i]; }
  }
  _Pragma("unroll") for (int u = 0; u < 8; u++) {
    long long i = base + threadIdx.x + (long long)u * blockDim.x;
    if (i < n4) out[i] = make_float4(x[u].x + y[u].x, x[u].y + y[u].y, x[u].z + y[u].z, x[u].w + y[u].w);
  })
'''
N4 = 64 << 20                         # 3 buffers of 1 GiB: far beyond L2, like a 25 MiB bucket's stream
bufs = [cp.ones(N4 * 4, dtype=cp.float32) for _ in range(3)]
stop = cp.zeros(1, dtype=cp.int32)
done = cp.zeros(2, dtype=cp.uint64)
# shape: (kernel, threads, float4 per operand per tile: 64-80 KiB, an NCCL Simple slice's order of size)
SHAPES = {'light': (cp.RawKernel(SRC, 'stand_in_light'), 512, 4096),
          'nccl': (cp.RawKernel(SRC, 'stand_in_nccl'), 640, 640 * 8)}
for k, _, _ in SHAPES.values():
    k.max_dynamic_shared_size_bytes = 96 * 1024

# variant: (blocks, aggregate HBM rate in GB/s, 0 = unpaced; rate < 1 = almost no bytes: SMs only
# [, shared memory per block in KiB: NCCL 2.17's AllReduce blocks held 87.5 KiB, HTA's A100 trace
# [, shape: 'light' unless named]])
VARIANTS = {
    'none': None,
    'c16-max': (16, 0), 'c32-max': (32, 0),
    'c16-1100': (16, 1100), 'c32-1100': (32, 1100),  # 3 x an 8-GPU NVLink ring's ~370 GB/s busbw
    'c16-450': (16, 450),                            # 3 x ~150 GB/s: a V100 NVLink ring's busbw
    'c16-150': (16, 150),                            # 3 x ~50 GB/s: one 400 Gb/s NIC per GPU
    'c16-spin': (16, 0.5),                           # the blocks resident, nearly no traffic
    'c16-spin-smem88': (16, 0.5, 88), 'c16-1100-smem88': (16, 1100, 88), 'c32-1100-smem88': (32, 1100, 88),
    'n16-spin': (16, 0.5, 88, 'nccl'), 'n16-1100': (16, 1100, 88, 'nccl'), 'n32-1100': (32, 1100, 88, 'nccl'),
    # the SM count's share alone (C/(SMs-C): 8, 24, 32 of 132 SMs), and the traffic's at a NIC's and a V100 ring's rate
    'n8-spin': (8, 0.5, 88, 'nccl'), 'n24-spin': (24, 0.5, 88, 'nccl'), 'n32-spin': (32, 0.5, 88, 'nccl'),
    'n16-150': (16, 150, 88, 'nccl'), 'n16-450': (16, 450, 88, 'nccl'),
}
# CONTENTION_VARIANTS / CONTENTION_CONFIGS (comma-separated names) run a subset; 'none' always runs
if os.environ.get('CONTENTION_VARIANTS'):
    keep = set(os.environ['CONTENTION_VARIANTS'].split(',')) | {'none'}
    VARIANTS = {k: v for k, v in VARIANTS.items() if k in keep}

def launch(variant, stream):
    blocks, rate = VARIANTS[variant][:2]
    smem = VARIANTS[variant][2] * 1024 if len(VARIANTS[variant]) > 2 else 0
    kernel, threads, tile4 = SHAPES[VARIANTS[variant][3] if len(VARIANTS[variant]) > 3 else 'light']
    ns_per_tile = 0.0 if rate == 0 else tile4 * 48 * blocks / rate   # bytes per tile / per-block rate (GB/s = B/ns)
    with cp.cuda.ExternalStream(stream.cuda_stream):     # (Stream.from_external in later CuPy)
        kernel((blocks,), (threads,), (bufs[0], bufs[1], bufs[2], cp.int64(N4), cp.int64(tile4),
                                       cp.float64(ns_per_tile), stop, done), shared_mem=smem)

# Every stream non-blocking: nothing may wait on the legacy default stream, which waits on everything.
side, main = torch.cuda.Stream(), torch.cuda.Stream()
host = cp.cuda.Stream(non_blocking=True)

def reset():
    with host:
        stop.fill(0)
        done.fill(0)
    host.synchronize()

def timed(replay, variant):
    """One replay of the step, with the stand-in running beside it for all of it; GPU ms, side GB/s."""
    cur = main
    reset()
    a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    if variant != 'none':
        launch(variant, side)
    a.record(cur)
    with torch.cuda.stream(cur):
        replay()
    b.record(cur)
    with cp.cuda.ExternalStream(cur.cuda_stream):
        stop.fill(1)
    torch.cuda.synchronize()
    d = done.get()
    blocks = VARIANTS[variant][0] if variant != 'none' else 0
    gbps = float(d[0]) / (float(d[1]) / blocks) if blocks and d[1] else 0.0
    return a.elapsed_time(b), gbps

def smi(q):
    return subprocess.run(['nvidia-smi', '--query-gpu=' + q, '--format=csv,noheader'], capture_output=True,
                          text=True).stdout.strip()

p = torch.cuda.get_device_properties(0)
emit({'kind': 'machine', 'gpu': p.name, 'sms': p.multi_processor_count, 'torch': torch.__version__,
      'cuda': torch.version.cuda, 'cudnn': torch.backends.cudnn.version(), 'cupy': cp.__version__,
      'driver': smi('driver_version'), 'clocks': smi('clocks.max.sm,clocks.max.mem,power.limit')})

# the stand-in alone: what each variant pulls from HBM on an idle GPU (100 ms, stopped by the host)
for v in VARIANTS:
    if v == 'none':
        continue
    reset()
    launch(v, side)
    with torch.cuda.stream(main):
        torch.cuda._sleep(int(2e8))      # ~0.1 s of spinning beside it
    main.synchronize()                   # not the device: the stand-in runs until told to stop
    with host:
        stop.fill(1)
    torch.cuda.synchronize()
    d = done.get()
    emit({'kind': 'alone', 'variant': v, 'blocks': VARIANTS[v][0], 'target_GBps': VARIANTS[v][1],
          'GBps': round(float(d[0]) / (float(d[1]) / VARIANTS[v][0]), 1)})

class Block(nn.Module):
    """A GPT-2 block (pre-norm, causal attention, 4x GELU MLP), written out so that it captures in a graph."""
    def __init__(self, d, heads):
        super().__init__()
        self.heads = heads
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.qkv, self.proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(approximate='tanh'), nn.Linear(4 * d, d))
    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(self.ln1(x)).view(b, t, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)
        y = nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(y.transpose(1, 2).reshape(b, t, d))
        return x + self.mlp(self.ln2(x))

class GPT2(nn.Module):
    """GPT-2 small: 50 257 tokens, 1 024 positions, 12 layers of width 768, tied LM head (124 M parameters)."""
    def __init__(self, vocab=50257, ctx=1024, d=768, layers=12, heads=12):
        super().__init__()
        self.wte, self.wpe = nn.Embedding(vocab, d), nn.Embedding(ctx, d)
        self.blocks = nn.Sequential(*[Block(d, heads) for _ in range(layers)])
        self.ln = nn.LayerNorm(d)
    def forward(self, ids):
        x = self.wte(ids) + self.wpe(torch.arange(ids.shape[1], device=ids.device))
        return self.ln(self.blocks(x)) @ self.wte.weight.t()

def gpt2(batch):
    m = GPT2().cuda()
    x = torch.randint(0, 50257, (batch, 1024), device='cuda')
    ce = nn.CrossEntropyLoss()
    return m, lambda: ce(m(x).flatten(0, 1), x.flatten()), batch

def resnet(batch):
    m = tv.resnet50().cuda()
    x = torch.randn(batch, 3, 224, 224, device='cuda')
    y = torch.randint(0, 1000, (batch,), device='cuda')
    ce = nn.CrossEntropyLoss()
    return m, lambda: ce(m(x), y), batch

CONFIGS = [('resnet50-fp32-b64', 'fp32', lambda: resnet(64)), ('resnet50-bf16-b128', 'bf16', lambda: resnet(128)),
           ('gpt2-bf16-b8-s1024', 'bf16', lambda: gpt2(8)), ('gpt2-fp32-b8-s1024', 'fp32', lambda: gpt2(8))]
torch.backends.cudnn.benchmark = True
torch.backends.cudnn.allow_tf32 = False
torch.backends.cuda.matmul.allow_tf32 = False

def measure(name, precision, make):
    model, loss_fn, batch = make()
    opt = torch.optim.SGD(model.parameters(), lr=1e-3, momentum=0.9)
    def step():
        with torch.autocast('cuda', dtype=torch.bfloat16, enabled=precision == 'bf16', cache_enabled=False):
            loss = loss_fn()
        loss.backward()
        opt.step()
    warm = torch.cuda.Stream()
    warm.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(warm):
        for _ in range(4):
            opt.zero_grad(set_to_none=True)
            step()
    torch.cuda.current_stream().wait_stream(warm)
    opt.zero_grad(set_to_none=True)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        step()
    with torch.cuda.stream(main):
        for _ in range(5):
            g.replay()
    times = {v: [] for v in VARIANTS}
    rates = {v: [] for v in VARIANTS}
    for _ in range(3):                       # rounds: every variant in each, so drift hits all alike
        for v in VARIANTS:
            for _ in range(5):
                t, r = timed(g.replay, v)
                times[v].append(t)
                rates[v].append(r)
    base = S.median(times['none'])
    for v in VARIANTS:
        med = S.median(times[v])
        emit({'kind': 'step', 'config': name, 'batch': batch, 'variant': v, 'median_ms': round(med, 3),
              'min_ms': round(min(times[v]), 3), 'max_ms': round(max(times[v]), 3),
              'slowdown': round(med / base - 1, 4), 'side_GBps': round(S.median(rates[v]), 1),
              'step_ms': [round(t, 3) for t in times[v]]})

for name, precision, make in CONFIGS:
    if os.environ.get('CONTENTION_CONFIGS') and name not in os.environ['CONTENTION_CONFIGS'].split(','):
        continue
    try:
        measure(name, precision, make)
    except Exception as e:                   # one configuration failing leaves the others standing
        emit({'kind': 'error', 'config': name, 'error': repr(e)})
    torch.cuda.empty_cache()
