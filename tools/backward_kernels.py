#!/usr/bin/python3
"""backward_kernels.py -- the kernels autograd runs in the backward pass of
a residual block with a squeeze-and-excitation gate: the evidence for the
backward traffic oraclec charges per layer (passes/cost.c, docs/model.md
"One layer on one GPU").

Run with Debian's python (torch 1.13):

    /usr/bin/python3 tools/backward_kernels.py > tests/data/autograd/backward_kernels.txt

The block is tests/test_cost.c's backward_bytes_follow_autograds_kernels
in PyTorch: x (16x8x8, needing a gradient) -> conv 3x3 -> batch norm ->
relu r; gate s = sigmoid(conv(relu(conv(mean over H, W of r)))); out =
relu(x + r * s).  It prints, for each autograd node evaluated, the ATen
kernels it launched that compute (allocations, views and copies of
scalars left out) and their operand shapes.  The engine's sum of a
tensor's two gradients shows as an aten::add under the node whose output
arrived second: r's (read by the gate's product and by its mean) under
MeanBackward1, x's (read by the conv and the residual add) under the
first ConvolutionBackward0.  Batch 2.
"""
import torch
import torch.nn as nn

SKIP = ("aten::empty", "aten::as_strided", "aten::view", "aten::expand", "aten::resize_",
        "aten::result_type", "aten::fill_", "aten::zeros", "aten::zero_", "aten::to",
        "aten::_to_copy", "aten::copy_", "aten::detach", "detach", "aten::ones_like",
        "aten::empty_like", "aten::reshape", "aten::_reshape_alias", "aten::squeeze",
        "aten::unsqueeze", "aten::select", "aten::slice", "aten::t", "aten::transpose",
        "aten::empty_strided", "aten::new_empty_strided", "aten::sum_to_size",
        "aten::resize_as_", "aten::as_strided_")


class Gate(nn.Module):
    def __init__(self, c, squeeze):
        super().__init__()
        self.down = nn.Conv2d(c, squeeze, 1)
        self.up = nn.Conv2d(squeeze, c, 1)

    def forward(self, r):
        return torch.sigmoid(self.up(torch.relu(self.down(r.mean((2, 3), keepdim=True)))))


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(16, 16, 3, padding=1, bias=False)
        self.bn = nn.BatchNorm2d(16)
        self.gate = Gate(16, 4)

    def forward(self, x):
        r = torch.relu(self.bn(self.conv(x)))
        return torch.relu(x + r * self.gate(r))


def main():
    torch.manual_seed(0)
    torch.set_num_threads(1)
    block = Block().train()
    x = torch.randn(2, 16, 8, 8, requires_grad=True)
    y = block(x).sum()
    with torch.autograd.profiler.profile(record_shapes=True) as prof:
        y.backward()
    node = "(engine)"
    for e in prof.function_events:
        name = e.name
        if name.startswith("autograd::engine::evaluate_function: "):
            node = name.split(": ", 1)[1]
            if not node.startswith("torch::autograd::AccumulateGrad"):
                print(node)
            continue
        if name in SKIP or name == node or name.startswith("torch::autograd"):
            continue
        if node.startswith("torch::autograd::AccumulateGrad"):
            continue
        shapes = " ".join("x".join(str(d) for d in s) or "-" for s in e.input_shapes if s)
        print("    %-32s %s" % (name, shapes))


if __name__ == "__main__":
    main()
