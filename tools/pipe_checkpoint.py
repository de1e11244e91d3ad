#!/usr/bin/python3
"""pipe_checkpoint.py -- what a pipeline stage keeps for backward under
torchgpipe's checkpointing, measured with the real software: PyTorch's
Pipe (torch.distributed.pipeline.sync, torchgpipe's port) on the CPU.

Run with Debian's python (torch 1.13, torchvision 0.14):

    /usr/bin/python3 tools/pipe_checkpoint.py > tests/data/autograd/pipe_checkpoint.tsv

torchvision's ResNet-18 (weights=None, train mode, 3 x 64 x 64 images,
a batch of 8) is cut into two partitions as a two-stage pipeline would
cut it: the stem, layer1 and layer2; then layer3, layer4, the pool and
fc.  Each partition runs in its own Pipe with M = 4 micro-batches under
each checkpoint mode ('never', 'except_last', Pipe's default, and
'always'), fed what enters it (the images; the first partition's output,
as a leaf that needs its gradient).  After the forward pass every node
reachable from the output's grad_fn is visited and each tensor it saves
for backward (`_saved_*` attributes, and a custom Function's
saved_tensors: Pipe's Checkpoint saves the micro-batch's input) is
counted once, at its own size, parameters and buffers left out.

After the forward pass a stage keeps, of M micro-batches of a activation
bytes and i input bytes each:

    never         M a
    except_last   (M - 1) i + a     the last micro-batch whole
    always        M i

The script measures a (never, over M) and i, and asserts the other two
rows equal the formulas to the byte.  oraclec's pipeline model
(model/pipeline.c, docs/model.md "Pipeline parallelism") uses them at
the stage's peak, which under 'always' adds the micro-batch recomputed
first in backward (a).  Columns: partition, mode, M, bytes kept, a, i.
"""
import os
import sys

import torch
import torch.nn as nn
import torchvision.models as tvm

M = 4
BATCH = 8


def kept(out, skip):
    """Bytes of the tensors autograd keeps for out's backward, each once."""
    seen, tensors, stack = set(), {}, [out.grad_fn]
    while stack:
        f = stack.pop()
        if f is None or f in seen:
            continue
        seen.add(f)
        saved = [getattr(f, a) for a in dir(f) if a.startswith("_saved_")]
        saved += list(getattr(f, "saved_tensors", ()) or ())
        for t in saved:
            if isinstance(t, torch.Tensor) and t.data_ptr() not in skip:
                tensors[(t.data_ptr(), t.numel())] = t.numel() * t.element_size()
        stack.extend(nf for nf, _ in getattr(f, "next_functions", ()))
    return sum(tensors.values())


def measure(Pipe, part, x):
    skip = {p.data_ptr() for p in part.parameters()} | {b.data_ptr() for b in part.buffers()}
    rows = {}
    for mode in ("never", "except_last", "always"):
        # one child: on the CPU Pipe makes each child a partition
        pipe = Pipe(nn.Sequential(part), chunks=M, checkpoint=mode)
        y = pipe(x).local_value()
        rows[mode] = kept(y, skip)
        del y
    return rows


def main():
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", "29517")
    import torch.distributed.rpc as rpc
    rpc.init_rpc("pipe_checkpoint", rank=0, world_size=1)
    from torch.distributed.pipeline.sync import Pipe

    torch.manual_seed(0)
    torch.set_num_threads(1)
    r = tvm.resnet18(weights=None).train()
    parts = [nn.Sequential(r.conv1, r.bn1, r.relu, r.maxpool, r.layer1, r.layer2),
             nn.Sequential(r.layer3, r.layer4, r.avgpool, nn.Flatten(), r.fc)]
    x = torch.randn(BATCH, 3, 64, 64)
    print("partition\tmode\tmicro_batches\tkept_bytes\tactivations_bytes\tinput_bytes")
    for n, part in enumerate(parts):
        rows = measure(Pipe, part, x)
        a = rows["never"] // M
        i = x.numel() * x.element_size() // M
        assert rows["never"] == M * a, rows
        assert rows["except_last"] == (M - 1) * i + a, (rows, a, i)
        assert rows["always"] == M * i, (rows, i)
        for mode, b in rows.items():
            print("%d\t%s\t%d\t%d\t%d\t%d" % (n, mode, M, b, a, i))
        with torch.no_grad():
            x = part(x)
        x.requires_grad_()
    rpc.shutdown()


if __name__ == "__main__":
    sys.exit(main())
