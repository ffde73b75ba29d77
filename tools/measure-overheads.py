#!/usr/bin/env python3
# measure-overheads.py: the per-call costs below a PyTorch DDP step on one GPU (the script that
# produced calibrate/data/fc-vm-H100x1-20261125-overheads.jsonl; it is kept compact because it was
# shipped to the machine inline).  Writes $OUT/overheads.jsonl, one JSON object a line:
#   kernel     graph_gpu_us: GPU time per one-element add, 1 000 of them replayed from a CUDA graph
#              (the device's per-kernel floor, no host in the way); eager_host_us: wall time per
#              eager x.add_(1) issued behind 20 large GEMMs -- INVALID as a host figure: 2 000 ops
#              fill CUDA's launch queue and the host then waits for the GEMMs (it reads ~216 us).
#   allreduce  a one-rank NCCL group: host_us per dist.all_reduce(async_op=True) (500-call
#              batches behind queued GEMMs) and gpu_us per call back to back (CUDA events);
#   ddp        DistributedDataParallel at world_size 1, ResNet-50/101, batch 32, fp32 (TF32 off)
#              and bf16 autocast, bucket_cap_mb 25, 1, 25, 1: buckets, median/min/max step (CUDA
#              events, 20 steps after 8 warm-ups) and the host's time to issue one step.
#     OUT=dir python3 tools/measure-overheads.py
import json,os,statistics as S,time,torch,torch.nn as nn,torch.distributed as d,torchvision.models as tv
O=open(os.environ['OUT']+'/overheads.jsonl','w')
def E(o):
 l=json.dumps(o);print(l,flush=True);O.write(l+'\n');O.flush()
E({'torch':torch.__version__,'cuda':torch.version.cuda,'cudnn':torch.backends.cudnn.version(),'nccl':torch.cuda.nccl.version(),'gpu':torch.cuda.get_device_name(0)})
os.environ['MASTER_ADDR']='127.0.0.1';os.environ['MASTER_PORT']='29511'
d.init_process_group('nccl',rank=0,world_size=1,device_id=torch.device('cuda:0'))
x=torch.zeros(1,device='cuda');s=torch.cuda.Stream();s.wait_stream(torch.cuda.current_stream())
with torch.cuda.stream(s):
 for _ in range(9):x.add_(1)
torch.cuda.current_stream().wait_stream(s);g=torch.cuda.CUDAGraph()
with torch.cuda.graph(g):
 for _ in range(1000):x.add_(1)
def T(f,n):
 a,b=torch.cuda.Event(enable_timing=1),torch.cuda.Event(enable_timing=1);a.record();f();b.record();b.synchronize();return a.elapsed_time(b)*1e3/n
def H(f,n):
 B=torch.randn(8192,8192,device='cuda')
 for _ in range(20):B@B
 t=time.perf_counter();f();r=(time.perf_counter()-t)*1e6/n;torch.cuda.synchronize();return r
def L(k):
 for _ in range(2000):k()
E({'kind':'kernel','graph_gpu_us':S.median(T(g.replay,1000) for _ in range(9)),'eager_host_us':[H(lambda:L(lambda:x.add_(1)),2000) for _ in range(5)]})
for n in(1,1<<18):
 t=torch.zeros(n,device='cuda')
 E({'kind':'allreduce','bytes':4*n,'host_us':[H(lambda:L(lambda:d.all_reduce(t,async_op=True)),2000) for _ in range(5)],'gpu_us':[T(lambda:L(lambda:d.all_reduce(t)),2000) for _ in range(5)]})
ce=nn.CrossEntropyLoss()
torch.backends.cudnn.allow_tf32=False;torch.backends.cuda.matmul.allow_tf32=False
for m in('resnet50','resnet101'):
 M=getattr(tv,m)().cuda();X=torch.randn(32,3,224,224,device='cuda');Y=torch.randint(0,1000,(32,),device='cuda')
 for p in('fp32','bf16'):
  for c in(25,1,25,1):
   D=nn.parallel.DistributedDataParallel(M,bucket_cap_mb=c);o=torch.optim.SGD(D.parameters(),lr=.01,momentum=.9);st=[];hs=[]
   for i in range(28):
    torch.cuda.synchronize();a,b=torch.cuda.Event(enable_timing=1),torch.cuda.Event(enable_timing=1);t0=time.perf_counter();a.record()
    with torch.autocast('cuda',dtype=torch.bfloat16,enabled=p=='bf16'):l=ce(D(X),Y)
    l.backward();o.step();o.zero_grad(set_to_none=True);b.record();h=time.perf_counter()-t0;b.synchronize()
    if i>=8:st.append(a.elapsed_time(b));hs.append(h*1e3)
   k=D._get_ddp_logging_data()
   E({'kind':'ddp','model':m,'precision':p,'batch':32,'cap':c,'buckets':k.get('num_buckets_reduced',k.get('bucket_sizes')),'step_ms':S.median(st),'min':min(st),'max':max(st),'host_ms':S.median(hs)})
   del D,o
d.destroy_process_group()
