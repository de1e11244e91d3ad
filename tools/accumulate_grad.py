#!/usr/bin/python3
"""accumulate_grad.py -- what zero_grad(set_to_none=False) costs in the
backward pass, counted in the real software: PyTorch on the CPU.

Run with Debian's python (torch 1.13, torchvision 0.14):

    /usr/bin/python3 tools/accumulate_grad.py > tests/data/autograd/accumulate_grad.tsv

torchvision's ResNet-18 (10 classes, train mode, 2 images of 3 x 32 x 32)
runs forward and backward three times, its gradients cleared before each
by zero_grad, once with set_to_none=False (PyTorch 1.x's default: the
gradients stay allocated, zeroed) and once with set_to_none=True (2.x's).
The third backward runs under torch.profiler, and the operators whose
counts differ between the two are printed: with the gradients allocated,
autograd's AccumulateGrad adds each new gradient into its parameter's
(variable_grad += new_grad, an add_ that reads two tensors and writes
one); without, it takes the new gradient as it is (a detach, no kernel).
oraclec charges that add_ per trained tensor in backward where the
implementation says zero_grad = true (model/compute.c, docs/model.md
"One layer on one GPU").  Columns: operator, count with set_to_none=False,
with set_to_none=True; then the parameter tensors.
"""
import collections

import torch
import torchvision


def census(set_to_none):
    torch.manual_seed(0)
    m = torchvision.models.resnet18(num_classes=10)
    x, y = torch.randn(2, 3, 32, 32), torch.tensor([1, 2])
    for _ in range(2):
        m.zero_grad(set_to_none=set_to_none)
        torch.nn.functional.cross_entropy(m(x), y).backward()
    m.zero_grad(set_to_none=set_to_none)
    loss = torch.nn.functional.cross_entropy(m(x), y)
    with torch.profiler.profile() as prof:
        loss.backward()
    return collections.Counter(e.name for e in prof.events()), sum(1 for _ in m.parameters())


def main():
    (kept, tensors), (none, _) = census(False), census(True)
    print("operator\tset_to_none=False\tset_to_none=True")
    for name in sorted(set(kept) | set(none)):
        if kept[name] != none[name]:
            print("%s\t%d\t%d" % (name, kept[name], none[name]))
    print("parameter_tensors\t%d\t%d" % (tensors, tensors))


if __name__ == "__main__":
    main()
