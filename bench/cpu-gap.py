#!/usr/bin/env python3
"""cpu-gap.py -- three suspects for a CPU step above its kernel table
(docs/probe.md, "What the gap is not"), each measured on its own:

  faults     the cost of the first write to a fresh anonymous page against
             a second write to it (256 MB, one byte a page, three times)
  step M     one process, one thread: each training step's time and its
             minor page faults (getrusage), 6 steps of batch B
  pair M     two such processes pinned one to a core, side by side, not
             talking: does a neighbour slow a rank's step?
  ddp M      two ranks on gloo, one thread each: DistributedDataParallel,
             DDP with a communication hook that reduces nothing (its
             reducer without the all-reduce), and no DDP, twice in turn:
             the slowest rank's step, median of steps 3-8

M is a torchvision model (mobilenet_v2, resnet18); -b B samples a rank
(default 8), 224 x 224 inputs, SGD with momentum.  Prints figures only;
judges nothing.  Needs torch and torchvision (Debian's python3-torch).

    /usr/bin/python3 bench/cpu-gap.py faults
    /usr/bin/python3 bench/cpu-gap.py pair mobilenet_v2
"""
import argparse
import mmap
import os
import resource
import subprocess
import sys
import time


def faults(_args):
    import torch
    torch.set_num_threads(1)
    n = 256 << 20
    pages = n // 4096
    for _ in range(3):
        mm = mmap.mmap(-1, n)
        a = torch.frombuffer(mm, dtype=torch.uint8)
        t0 = time.perf_counter()
        a[::4096] = 1
        t1 = time.perf_counter()
        a[::4096] = 2
        t2 = time.perf_counter()
        print("first write %.2f us a page, second %.3f us" %
              ((t1 - t0) / pages * 1e6, (t2 - t1) / pages * 1e6), flush=True)
        del a
        mm.close()


def model_and_data(torch, name, b):
    import torchvision
    torch.manual_seed(0)
    m = getattr(torchvision.models, name)()
    x = torch.randn(b, 3, 224, 224)
    y = torch.randint(0, 1000, (b,))
    return m, x, y


def train_step(torch, m, net, opt, x, y):
    """One SGD step of m through net (m itself, or its DDP wrapper)."""
    m.zero_grad(set_to_none=True)
    torch.nn.functional.cross_entropy(net(x), y).backward()
    opt.step()


def step(args, tag=""):
    import torch
    torch.set_num_threads(1)
    m, x, y = model_and_data(torch, args.model, args.batch)
    opt = torch.optim.SGD(m.parameters(), lr=0.01, momentum=0.9)
    for i in range(6):
        f0 = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
        t0 = time.perf_counter()
        train_step(torch, m, m, opt, x, y)
        t1 = time.perf_counter()
        f1 = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
        print("%sstep %d: %.3f s, %d minor faults (%.0f MB)" %
              (tag, i, t1 - t0, f1 - f0, (f1 - f0) * 4096 / 1e6), flush=True)


def pair(args):
    me = [sys.executable, os.path.abspath(__file__), "step", args.model, "-b", str(args.batch)]
    procs = [subprocess.Popen(["taskset", "-c", str(c)] + me + ["--tag", "core %d " % c])
             for c in (0, 1)]
    sys.exit(max(p.wait() for p in procs))


def unreduced(_state, bucket):
    """A DDP communication hook that hands the bucket back as it is."""
    import torch
    f = torch.futures.Future()
    f.set_result(bucket.buffer())
    return f


def rank(r, args, mode):
    import torch
    import torch.distributed as dist
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(args.port))
    torch.set_num_threads(1)
    dist.init_process_group("gloo", rank=r, world_size=2)
    m, x, y = model_and_data(torch, args.model, args.batch)
    net = m if mode == "no DDP" else torch.nn.parallel.DistributedDataParallel(m)
    if mode == "DDP, no all-reduce":
        net.register_comm_hook(None, unreduced)
    opt = torch.optim.SGD(m.parameters(), lr=0.01, momentum=0.9)
    ts = []
    for i in range(8):
        dist.barrier()
        t0 = time.perf_counter()
        train_step(torch, m, net, opt, x, y)
        if i >= 2:
            ts.append(time.perf_counter() - t0)
    t = torch.tensor(ts)
    dist.all_reduce(t, op=dist.ReduceOp.MAX)
    if r == 0:
        s = sorted(t.tolist())
        print("%s, %s: the slowest rank's step, median %.3f s, %.3f to %.3f" %
              (args.model, mode, s[len(s) // 2], s[0], s[-1]), flush=True)
    dist.destroy_process_group()


def ddp(args):
    import torch.multiprocessing as mp
    for mode in ("DDP", "DDP, no all-reduce", "no DDP") * 2:
        mp.spawn(rank, args=(args, mode), nprocs=2)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("what", choices=["faults", "step", "pair", "ddp"])
    p.add_argument("model", nargs="?", default="mobilenet_v2")
    p.add_argument("-b", "--batch", type=int, default=8)
    p.add_argument("--port", type=int, default=29533)
    p.add_argument("--tag", default="", help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.what == "step":
        step(args, args.tag)
    else:
        {"faults": faults, "pair": pair, "ddp": ddp}[args.what](args)


if __name__ == "__main__":
    main()
