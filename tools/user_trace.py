"""user_trace.py -- a user's own training loop traced the plain way, for
`oraclec --profile` (issue 37.4): torchvision's model trained with SGD on
random data, torch.profiler around a few steps (record_shapes,
with_modules, a schedule, the trace exported by on_trace_ready), nothing
of oraclec's in it.  PyTorch writes its Chrome trace as it does for
anyone: with Kineto (pip's torch, GPUs) a {"traceEvents": [...]} object
of cpu_op events with sequence numbers and kernels; without (Debian's
1.13) the autograd profiler's array of named ranges.

    /usr/bin/python3 tools/user_trace.py [--model resnet18] [--batch 2]
        [--size 64] [--steps 1] [--device cpu] -o trace.json

tests/data/traces/resnet18-user.json was written by
    /usr/bin/python3 tools/user_trace.py --batch 2 --size 64 --steps 1 \
        -o tests/data/traces/resnet18-user.json
(torch 1.13.0a0, Debian; the CPU of the project's machine).
"""
import argparse
import os
import sys

import torch
import torchvision
from torch.profiler import ProfilerActivity, profile, schedule


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default="resnet18")
    ap.add_argument("--batch", type=int, default=2)
    ap.add_argument("--size", type=int, default=64)
    ap.add_argument("--steps", type=int, default=1)
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    ap.add_argument("-o", "--output", required=True)
    a = ap.parse_args()
    torch.manual_seed(0)
    dev = torch.device(a.device)
    model = getattr(torchvision.models, a.model)(num_classes=1000).to(dev).train()
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    x = torch.randn(a.batch, 3, a.size, a.size, device=dev)
    y = torch.randint(0, 1000, (a.batch,), device=dev)
    acts = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if dev.type == "cuda" else [])
    out = os.path.abspath(a.output)
    with profile(activities=acts, record_shapes=True, with_modules=True,
                 schedule=schedule(wait=1, warmup=1, active=a.steps),
                 on_trace_ready=lambda p: p.export_chrome_trace(out)) as prof:
        for _ in range(2 + a.steps):
            opt.zero_grad()
            loss = torch.nn.functional.cross_entropy(model(x), y)
            loss.backward()
            opt.step()
            prof.step()
    print("wrote %s" % out, file=sys.stderr)


if __name__ == "__main__":
    main()
