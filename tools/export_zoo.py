#!/usr/bin/python3
"""export_zoo.py -- export torchvision models to weightless ONNX files with
independent reference counts, for oraclec's zoo test (tests/zoo.sh).

Run with Debian's python (torch 1.13, torchvision 0.14, onnx 1.12):

    /usr/bin/python3 tools/export_zoo.py [-o tests/data/zoo] [--batch B] [MODEL ...]
    /usr/bin/python3 tools/export_zoo.py --fresh -o tests/data/fresh convnext_tiny efficientnet_b0

For each model (weights=None, eval mode) it writes, into the output folder:

  NAME.onnx[.gz]   torch.onnx.export, opset 13 (or the model's own opset
                   below), dynamic batch axis N on input and output.  Every
                   floating-point initializer is stored as external data
                   whose file is deleted at once: the model keeps names,
                   dims and types, never the weights.  Files over 300 KB
                   are gzipped, with their shapes.tsv.
  NAME.ref.txt     key value lines: input shape, params (sum of p.numel()),
                   file_params (elements of the float initializers, minus
                   those BatchNormalization reads as running mean/variance),
                   and MACs at three levels (below); conv_bias 1 where a
                   convolution with a bias of its own comes right before a
                   batch norm (torchvision's VGG-BN), which the export
                   folds into one bias: oraclec --conv-bias keeps it.
  NAME.shapes.tsv  every node output: its shape as ONNX's own shape
                   inference (onnx 1.12) found it, and whether it is an
                   activation (depends on the input's values) or a
                   constant (initializers, Constant nodes, shapes).

--fresh exports the model as its constructor initialized it, as a user
who exports a model before training it does: torch.onnx.export then
merges initializers of equal shape, type and values (every LayerNorm's
ones and zeros become one tensor each), which oraclec must count once per
module that reads them.  The initializers whose elements are all equal
keep their data (that is how oraclec tells a merge); the others are
stripped as above.  The file is NAME_fresh.onnx.gz (gzip'd, which oraclec
reads as it is), NAME_fresh.ref.txt gives params (torch's) and
file_params (the file's initializers, each once), and no shapes.tsv.

MACs, batch 1, eager eval model, with gradients enabled so that
nn.MultiheadAttention takes its Python path (the fused fast path hides its
matrix products):

  macs_hooks         forward hooks on Conv*/Linear modules, the method of
                     shared/data/onnx/README.md: out.numel() * Cin/groups *
                     prod(kernel) and out.numel() * in_features.  Misses
                     F.linear called on a module's weight directly
                     (MultiheadAttention, Swin's attention).
  macs_weight        every conv/linear/matmul/bmm/addmm call at the
                     torch-function level whose operand is a Parameter.
  macs_attn          every such product of two activations (attention).
  macs_aten          the same products counted at ATen level (convolution,
                     mm, addmm, bmm, baddbmm): equals macs_weight +
                     macs_attn, which the script asserts.
"""
import argparse
import collections
import functools
import gzip
import math
import os
import sys

import onnx
import onnx.numpy_helper
import onnx.shape_inference
import torch
import torch.nn as nn
import torchvision.models as tvm
import torchvision.models.segmentation as tvs
import torchvision.models.video as tvv
from torch.utils._python_dispatch import TorchDispatchMode

# name -> (constructor, input shape)
IMAGE = (1, 3, 224, 224)
VIDEO = (1, 3, 16, 112, 112)
MODELS = collections.OrderedDict([
    ("vit_b_16", (tvm.vit_b_16, IMAGE)),
    ("swin_t", (tvm.swin_t, IMAGE)),
    ("shufflenet_v2_x1_0", (tvm.shufflenet_v2_x1_0, IMAGE)),
    ("mobilenet_v3_small", (tvm.mobilenet_v3_small, IMAGE)),
    ("efficientnet_b0", (tvm.efficientnet_b0, IMAGE)),
    ("regnet_y_400mf", (tvm.regnet_y_400mf, IMAGE)),
    ("convnext_tiny", (tvm.convnext_tiny, IMAGE)),
    ("densenet121", (tvm.densenet121, IMAGE)),
    ("googlenet", (tvm.googlenet, IMAGE)),
    ("squeezenet1_0", (tvm.squeezenet1_0, IMAGE)),
    ("mnasnet0_5", (tvm.mnasnet0_5, IMAGE)),
    ("resnext50_32x4d", (tvm.resnext50_32x4d, IMAGE)),
    ("wide_resnet50_2", (tvm.wide_resnet50_2, IMAGE)),
    ("r3d_18", (tvv.r3d_18, VIDEO)),
    ("mc3_18", (tvv.mc3_18, VIDEO)),
    ("r2plus1d_18", (tvv.r2plus1d_18, VIDEO)),
    # segmentation: no backbone weights either (the default downloads them)
    ("fcn_resnet50", (functools.partial(tvs.fcn_resnet50, weights_backbone=None), IMAGE)),
    ("deeplabv3_resnet50", (functools.partial(tvs.deeplabv3_resnet50, weights_backbone=None),
                            IMAGE)),
    ("lraspp_mobilenet_v3_large",
     (functools.partial(tvs.lraspp_mobilenet_v3_large, weights_backbone=None), IMAGE)),
])

# Larger exports (Swin's thousands of shape nodes) are committed gzipped,
# with their shapes.tsv; tests/zoo.sh unpacks them.
MAX_PLAIN = 300 * 1024

FLOAT_TYPES = {onnx.TensorProto.FLOAT, onnx.TensorProto.DOUBLE,
               onnx.TensorProto.FLOAT16, onnx.TensorProto.BFLOAT16}


# ---- MACs -----------------------------------------------------------------

def prod(xs):
    return math.prod(int(x) for x in xs)


def product_macs(name, args, out):
    """MACs of one matrix product or convolution call, or None."""
    if name in ("conv1d", "conv2d", "conv3d"):
        w = args[1]
        return out.numel() * w.shape[1] * prod(w.shape[2:])
    if name in ("conv_transpose1d", "conv_transpose2d", "conv_transpose3d"):
        x, w = args[0], args[1]
        return x.numel() * w.shape[1] * prod(w.shape[2:])
    if name == "linear":
        return out.numel() * args[1].shape[1]
    if name in ("matmul", "__matmul__", "mm", "bmm"):
        return out.numel() * args[0].shape[-1]
    if name in ("addmm", "baddbmm"):
        return out.numel() * args[1].shape[-1]
    return None


class FunctionCount:
    """Products at the torch-function level, split by operand kind.  The
    product functions are wrapped in place (a TorchFunctionMode would see
    F.multi_head_attention_forward whole and none of the products inside
    it); only the outermost product of a nested call counts."""

    TARGETS = [(torch.nn.functional, n) for n in (
        "linear", "conv1d", "conv2d", "conv3d",
        "conv_transpose1d", "conv_transpose2d", "conv_transpose3d")] + \
        [(torch, n) for n in ("matmul", "mm", "bmm", "addmm", "baddbmm")] + \
        [(torch.Tensor, n) for n in ("matmul", "__matmul__", "mm", "bmm")]

    def __init__(self):
        self.weight = 0
        self.attn = 0
        self.depth = 0
        self.saved = []

    def wrap(self, name, f):
        def counted(*args, **kwargs):
            self.depth += 1
            try:
                out = f(*args, **kwargs)
            finally:
                self.depth -= 1
            if self.depth == 0 and isinstance(out, torch.Tensor):
                macs = product_macs(name, args, out)
                if any(isinstance(a, nn.Parameter) for a in args):
                    self.weight += macs
                else:
                    self.attn += macs
            return out
        return counted

    def __enter__(self):
        for owner, name in self.TARGETS:
            f = getattr(owner, name)
            self.saved.append((owner, name, f))
            setattr(owner, name, self.wrap(name, f))
        return self

    def __exit__(self, *exc):
        for owner, name, f in reversed(self.saved):
            setattr(owner, name, f)
        self.saved = []


class AtenCount(TorchDispatchMode):
    """Products at the ATen level, whatever Python called them."""

    def __init__(self):
        super().__init__()
        self.macs = 0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        name = func.overloadpacket.__name__
        if name == "convolution":
            x, w, transposed = args[0], args[1], args[6]
            if transposed:
                self.macs += x.numel() * w.shape[1] * prod(w.shape[2:])
            else:
                self.macs += out.numel() * w.shape[1] * prod(w.shape[2:])
        elif name in ("mm", "bmm"):
            self.macs += out.numel() * args[0].shape[-1]
        elif name in ("addmm", "baddbmm"):
            self.macs += out.numel() * args[1].shape[-1]
        return out


def hook_macs(model, x):
    total = [0]

    def hook(m, inp, out):
        if isinstance(m, nn.modules.conv._ConvTransposeNd):
            total[0] += inp[0].numel() * m.weight.shape[1] * prod(m.weight.shape[2:])
        elif isinstance(m, nn.modules.conv._ConvNd):
            total[0] += out.numel() * m.weight.shape[1] * prod(m.weight.shape[2:])
        elif isinstance(m, nn.Linear):
            total[0] += out.numel() * m.in_features

    hs = [m.register_forward_hook(hook) for m in model.modules()
          if isinstance(m, (nn.modules.conv._ConvNd, nn.Linear))]
    model(x)
    for h in hs:
        h.remove()
    return total[0]


def count_macs(model, x):
    ref = {"macs_hooks": hook_macs(model, x)}
    with FunctionCount() as fc:
        model(x)
    with AtenCount() as ac:
        model(x)
    ref["macs_weight"] = fc.weight
    ref["macs_attn"] = fc.attn
    ref["macs_aten"] = ac.macs
    assert fc.weight + fc.attn == ac.macs, (fc.weight, fc.attn, ac.macs)
    return ref


# ---- the ONNX file ----------------------------------------------------------

def uniform(t):
    """Whether a float initializer has two or more elements, all equal."""
    a = onnx.numpy_helper.to_array(t)
    return a.size >= 2 and bool((a == a.flat[0]).all())


def strip_weights(m, weights, keep_uniform=False):
    """Moves every float initializer to external data in `weights`, then
    deletes that file: only names, dims and types stay (with keep_uniform,
    those whose elements are all equal keep their data)."""
    offset = 0
    with open(weights, "wb") as f:
        for t in m.graph.initializer:
            if t.data_type not in FLOAT_TYPES or (keep_uniform and uniform(t)):
                continue
            data = onnx.numpy_helper.to_array(t).tobytes()
            f.write(data)
            del t.external_data[:]
            for k, v in (("location", os.path.basename(weights)),
                         ("offset", str(offset)), ("length", str(len(data)))):
                e = t.external_data.add()
                e.key, e.value = k, v
            t.data_location = onnx.TensorProto.EXTERNAL
            t.ClearField("raw_data")
            t.ClearField("float_data")
            t.ClearField("double_data")
            t.ClearField("int32_data")
            offset += len(data)
    os.remove(weights)


def conv_bias_before_bn(model):
    """Whether a convolution with its own bias is the module registered
    right before a batch norm (as nn.Sequential and torchvision's blocks
    register them in forward's order): the export folds the batch norm
    into it, and its bias into the folded one."""
    prev = None
    for mod in model.modules():
        if isinstance(mod, torch.nn.modules.batchnorm._BatchNorm) and \
                isinstance(prev, torch.nn.modules.conv._ConvNd) and prev.bias is not None:
            return True
        if not list(mod.children()):
            prev = mod
    return False


def file_params(m):
    stats = set()
    for n in m.graph.node:
        if n.op_type == "BatchNormalization":
            stats.update(n.input[3:5])
    return sum(prod(t.dims) for t in m.graph.initializer
               if t.data_type in FLOAT_TYPES and t.name not in stats)


def activations(m):
    """Values that depend on the graph input's values (oraclec's IR
    tensors); Shape and Size read only shapes."""
    inits = {t.name for t in m.graph.initializer}
    act = {i.name for i in m.graph.input if i.name not in inits}
    for n in m.graph.node:
        if n.op_type in ("Shape", "Size"):
            continue
        if any(i in act for i in n.input if i):
            act.update(o for o in n.output if o)
    return act


def dim_str(d):
    if d.HasField("dim_value"):
        return str(d.dim_value)
    if d.HasField("dim_param") and d.dim_param == "N":
        return "N"
    return "?"


def write_shapes(m, path):
    inferred = onnx.shape_inference.infer_shapes(m)
    types = {}
    for src, vis in (("value_info", inferred.graph.value_info),
                     ("output", inferred.graph.output)):
        for vi in vis:
            tt = vi.type.tensor_type
            shape = None
            if tt.HasField("shape"):
                shape = "[" + ",".join(dim_str(d) for d in tt.shape.dim) + "]"
            types[vi.name] = (onnx.TensorProto.DataType.Name(tt.elem_type)
                              if tt.elem_type else "?", shape, src)
    act = activations(m)
    unknown = 0
    with open(path, "w") as f:
        f.write("node_index\tnode_name\top_type\toutput_index\toutput_name"
                "\telem_type\tshape\tsource\tkind\n")
        for i, n in enumerate(m.graph.node):
            for k, o in enumerate(n.output):
                if not o:
                    continue
                et, shape, src = types.get(o, ("?", None, "none"))
                if shape is None or "?" in shape:
                    unknown += 1
                f.write("%d\t%s\t%s\t%d\t%s\t%s\t%s\t%s\t%s\n" % (
                    i, n.name, n.op_type, k, o, et, shape or "?", src,
                    "act" if o in act else "const"))
    return unknown


def gzip_file(path):
    """path -> path.gz, reproducibly (no name, no time stamp)."""
    with open(path, "rb") as f, open(path + ".gz", "wb") as raw:
        with gzip.GzipFile(filename="", mode="wb", compresslevel=9, fileobj=raw,
                           mtime=0) as z:
            z.write(f.read())
    os.remove(path)


def export(name, ctor, shape, outdir, opset, batch=0, fresh=False):
    """batch > 0: a file that fixes the batch (no dynamic axis), named
    NAME_bBATCH; the reference counts stay per sample.  fresh: as the
    constructor initialized it, named NAME_fresh (module docstring)."""
    torch.manual_seed(0)
    model = ctor(weights=None).eval()
    # Distinct values everywhere: the exporter merges initializers with
    # equal contents (every LayerNorm's fresh ones and zeros would become
    # one tensor), which would hide parameters from file_params.
    if not fresh:
        with torch.no_grad():
            for p in model.parameters():
                p.normal_(0, 0.02)
    x = torch.randn(*shape)
    ref = count_macs(model, x)
    ref["params"] = sum(p.numel() for p in model.parameters())
    ref["conv_bias"] = conv_bias_before_bn(model)
    if batch:
        name = "%s_b%d" % (name, batch)
        x = torch.randn(batch, *shape[1:])
    if fresh:
        name += "_fresh"
    path = os.path.join(outdir, name + ".onnx")
    # with gradients enabled: MultiheadAttention's fused fast path has no
    # ONNX export
    torch.onnx.export(model, x, path, opset_version=opset,
                      input_names=["input"], output_names=["output"],
                      dynamic_axes=None if batch else {"input": {0: "N"}, "output": {0: "N"}},
                      do_constant_folding=True)
    m = onnx.load(path)
    if fresh:
        merged = sum(1 for t in m.graph.initializer
                     if t.data_type in FLOAT_TYPES and uniform(t))
    strip_weights(m, os.path.join(outdir, name + ".weights"), keep_uniform=fresh)
    onnx.save(m, path)
    m = onnx.load(path, load_external_data=False)
    ref["file_params"] = file_params(m)
    if fresh:
        ref["onnx_unknown_shapes"] = 0
        with open(os.path.join(outdir, name + ".ref.txt"), "w") as f:
            f.write("model %s\n" % name)
            f.write("input %s\n" % "x".join(str(d) for d in shape))
            for k in ("params", "file_params", "macs_aten"):
                f.write("%s %d\n" % (k, ref[k]))
            f.write("uniform_initializers %d\n" % merged)
        size = os.path.getsize(path)
        gzip_file(path)
        print("%-20s %8d KB params %d file_params %d uniform initializers %d" % (
            name, size // 1024, ref["params"], ref["file_params"], merged))
        return
    ref["onnx_unknown_shapes"] = write_shapes(m, os.path.join(outdir, name + ".shapes.tsv"))
    ops = collections.Counter(n.op_type for n in m.graph.node)
    with open(os.path.join(outdir, name + ".ref.txt"), "w") as f:
        f.write("model %s\n" % name)
        f.write("input %s\n" % "x".join(str(d) for d in shape))
        f.write("batch %s\n" % (batch or "N"))
        f.write("opset %d\n" % opset)
        for k in ("params", "file_params", "macs_hooks", "macs_weight", "macs_attn",
                  "macs_aten", "onnx_unknown_shapes"):
            f.write("%s %d\n" % (k, ref[k]))
        if ref["conv_bias"]:
            f.write("conv_bias 1\n")
        f.write("nodes %d\n" % len(m.graph.node))
        f.write("ops %s\n" % ";".join("%s:%d" % kv for kv in sorted(
            ops.items(), key=lambda kv: (-kv[1], kv[0]))))
    size = os.path.getsize(path)
    if size > MAX_PLAIN:
        for f in (path, os.path.join(outdir, name + ".shapes.tsv")):
            gzip_file(f)
    print("%-20s %8d KB params %d file_params %d macs %d (attn %d) onnx unknown %d" % (
        name, size // 1024, ref["params"], ref["file_params"],
        ref["macs_aten"], ref["macs_attn"], ref["onnx_unknown_shapes"]))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("-o", "--outdir", default="tests/data/zoo")
    ap.add_argument("--opset", type=int, default=13)
    ap.add_argument("--batch", type=int, default=0,
                    help="fix the batch in the file (default: dynamic N)")
    ap.add_argument("--fresh", action="store_true",
                    help="as the constructor initialized the model (the exporter merges "
                         "equal initializers); the uniform ones keep their data")
    ap.add_argument("models", nargs="*", default=list(MODELS))
    args = ap.parse_args()
    os.makedirs(args.outdir, exist_ok=True)
    for name in args.models:
        if name in MODELS:
            ctor, shape = MODELS[name]
        elif hasattr(tvm, name):
            ctor, shape = getattr(tvm, name), IMAGE
        elif hasattr(tvv, name):
            ctor, shape = getattr(tvv, name), VIDEO
        else:
            sys.exit("export_zoo: unknown model '%s'" % name)
        export(name, ctor, shape, args.outdir, args.opset, args.batch, args.fresh)


if __name__ == "__main__":
    main()
