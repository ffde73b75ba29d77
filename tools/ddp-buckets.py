#!/usr/bin/env python3
# ddp-buckets.py: the bucket sizes real PyTorch DDP rebuilds ResNet-50 into, with bucket_cap_mb left at
# its default and passed as 25 (one GPU, NCCL world of 1; DDP's logging data after three steps).
# Checks ddpsim's bucket rules (src/bucket.c; calibrate/data/README.md, 2026-11-27).
#     python3 tools/ddp-buckets.py
import os, torch, torch.distributed as dist, torchvision
from torch.nn.parallel import DistributedDataParallel as DDP
os.environ.setdefault('MASTER_ADDR', '127.0.0.1'); os.environ.setdefault('MASTER_PORT', '29517')
dist.init_process_group('nccl', rank=0, world_size=1)
print('torch', torch.__version__)
for cap in (None, 25):
    torch.manual_seed(0)
    m = torchvision.models.resnet50().cuda()
    d = DDP(m, device_ids=[0]) if cap is None else DDP(m, device_ids=[0], bucket_cap_mb=cap)
    x = torch.randn(4, 3, 224, 224, device='cuda')
    for _ in range(3):
        d(x).sum().backward()
    data = d._get_ddp_logging_data()
    print('bucket_cap_mb', cap, 'rebuilt_bucket_sizes', data.get('rebuilt_bucket_sizes'), 'bucket_sizes', data.get('bucket_sizes'))
dist.destroy_process_group()
