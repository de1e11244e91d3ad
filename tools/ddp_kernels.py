#!/usr/bin/python3
"""ddp_kernels.py -- the operators DistributedDataParallel adds to a
training iteration, counted in the real software: PyTorch's DDP on the CPU
with gloo, two processes.

Run with Debian's python (torch 1.13, torchvision 0.14):

    /usr/bin/python3 tools/ddp_kernels.py > tests/data/autograd/ddp_kernels.txt

torchvision's ResNet-18 (10 classes, train mode, a batch of 2 images of
3 x 32 x 32 per process) is wrapped in DDP with its defaults
(bucket_cap_mb=25, gradient_as_bucket_view=False, broadcast_buffers=True)
and trained three iterations; the third's forward and backward run under
torch.profiler.  Each operator is attributed by its caller:

    copies into buckets      aten::mul called by AccumulateGrad's
                             evaluate_function: the reducer's
                             copy_grad_to_bucket, a mul_out of each
                             gradient by 1/world into its bucket view
    copies out of buckets    reducer::copy_bucket_to_grad, one a
                             parameter after the all-reduce
    buffer copies            aten::copy_ called by DDP.forward: the
                             buffers broadcast from rank 0 and copied
                             back one by one

The same model without DDP issues none of them (the script checks that
too).  oraclec's reducer_time (model/overlap.c, docs/model.md "Gradient
exchange") prices grad_copies = 2 kernels per parameter tensor and 3 per
batch norm layer (running mean, running variance, num_batches_tracked):
the counts printed below are 62 = the parameter tensors, 62, and 60 = 3 x
20 batch norm layers.
"""
import collections
import os
import sys

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torchvision


def model():
    torch.manual_seed(0)
    return torchvision.models.resnet18(num_classes=10)


def profile(m):
    x, y = torch.randn(2, 3, 32, 32), torch.tensor([1, 2])
    for _ in range(2):
        torch.nn.functional.cross_entropy(m(x), y).backward()
    with torch.profiler.profile() as prof:
        torch.nn.functional.cross_entropy(m(x), y).backward()
    into = out = buffers = 0
    for e in prof.events():
        parent = e.cpu_parent.name if e.cpu_parent else ""
        if e.name == "aten::mul" and "AccumulateGrad" in parent:
            into += 1
        elif e.name == "torch.distributed.ddp.reducer::copy_bucket_to_grad":
            out += 1
        elif e.name == "aten::copy_" and parent == "DistributedDataParallel.forward":
            buffers += 1
    return into, out, buffers


def worker(rank, world, queue):
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ.setdefault("MASTER_PORT", "29541")
    dist.init_process_group("gloo", rank=rank, world_size=world)
    counts = profile(torch.nn.parallel.DistributedDataParallel(model()))
    if rank == 0:
        queue.put(counts)
    dist.destroy_process_group()


def main():
    m = model()
    tensors = sum(1 for _ in m.parameters())
    norms = sum(1 for x in m.modules() if isinstance(x, torch.nn.BatchNorm2d))
    if profile(m) != (0, 0, 0):
        sys.exit("ddp_kernels.py: the model alone issues the operators DDP is counted by")
    ctx = mp.get_context("spawn")
    queue = ctx.SimpleQueue()
    mp.start_processes(worker, args=(2, queue), nprocs=2, start_method="spawn")
    into, out, buffers = queue.get()
    print("model\tresnet18 (torchvision, 10 classes), DDP on gloo, 2 processes")
    print("parameter_tensors\t%d" % tensors)
    print("batchnorm_layers\t%d" % norms)
    print("copies_into_buckets\t%d" % into)
    print("copies_out_of_buckets\t%d" % out)
    print("buffer_copies_in_forward\t%d" % buffers)
    if (into, out, buffers) != (tensors, tensors, 3 * norms):
        sys.exit("ddp_kernels.py: DDP's copies are not one a tensor each way and three a batch norm")


if __name__ == "__main__":
    main()
