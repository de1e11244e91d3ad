#!/usr/bin/python3
"""autocast_casts.py -- the casts autocast adds to a training iteration,
counted in the real software: PyTorch's autocast on the CPU (bfloat16;
its lists put convolutions and linear layers in 16 bits, as CUDA's do).

Run with Debian's python (torch 1.13):

    /usr/bin/python3 tools/autocast_casts.py > tests/data/autograd/autocast_casts.tsv

The CIFAR ResNet-18 of examples/resnet18_cifar.odl (tools/autograd_ref.py
builds it as kuangliu/pytorch-cifar writes it) runs forward under
autocast, and backward from the sum of its output, outside, under
torch.profiler.  Every aten::_to_copy is a cast: in the forward, of a
trained tensor (a conv or linear weight, the linear bias) or of an
activation; in the backward, ToCopyBackward0 casting a gradient back.
Two batches (2 and 4 images) tell the elements that grow with the batch
(activations) from those that do not (weights).  oraclec's count
(passes/memory.c, cast_on_the_way_in; tests/test_model.c) must equal it:
one cast per trained tensor of a 16-bit op, cached for the iteration,
one per activation input of the other width, and backward the same
but for the image's, which needs no gradient.  Columns: pass, kind,
tensors, elements (weights: in all; activations: per sample).
"""
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from autograd_ref import resnet18_cifar  # noqa: E402


def casts(model, batch):
    x = torch.randn(batch, 3, 32, 32)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        model(x)  # the first iteration; autocast's cache is per context
    with torch.profiler.profile(record_shapes=True) as prof:
        with torch.autocast("cpu", dtype=torch.bfloat16):
            out = model(x)
        out.sum().backward()
    fwd, bwd = [], []
    for e in prof.events():
        if e.name != "aten::_to_copy":
            continue
        n = 1
        for d in e.input_shapes[0]:
            n *= d
        p, back = e.cpu_parent, False
        while p is not None:
            back = back or p.name.startswith("autograd::engine")
            p = p.cpu_parent
        (bwd if back else fwd).append(n)
    return fwd, bwd


def split(a, b):
    """Elements that do not grow with the batch (2 -> 4) and those that do,
    per sample, the casts paired in the order they ran."""
    if len(a) != len(b):
        sys.exit("autocast_casts.py: the casts change in number with the batch")
    weights = [x for x, y in zip(a, b) if x == y]
    acts = [(y - x) // 2 for x, y in zip(a, b) if x != y]
    return weights, acts


def main():
    torch.manual_seed(0)
    model = resnet18_cifar()
    model.train()
    (f2, b2), (f4, b4) = casts(model, 2), casts(model, 4)
    print("pass\tkind\ttensors\telements")
    for name, a, b in (("forward", f2, f4), ("backward", b2, b4)):
        w, x = split(a, b)
        print("%s\tweights\t%d\t%d" % (name, len(w), sum(w)))
        print("%s\tactivations\t%d\t%d" % (name, len(x), sum(x)))


if __name__ == "__main__":
    main()
