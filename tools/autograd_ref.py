#!/usr/bin/python3
"""autograd_ref.py -- what autograd really saves for backward in one
train-mode training step of torchvision models: reference numbers for
oraclec's activation memory per GPU.

Run with Debian's python (torch 1.13, torchvision 0.14):

    /usr/bin/python3 tools/autograd_ref.py [-o tests/data/autograd] [MODEL ...]
    /usr/bin/python3 tools/autograd_ref.py --table   # README summary table
    /usr/bin/python3 tools/autograd_ref.py --probe   # CPU autocast dtypes

For each model (weights=None, torch.manual_seed(0), train mode, one
thread) it runs the forward pass at two batches (2 and 4), in fp32 and
under torch.autocast('cpu', dtype=torch.bfloat16), and records every
tensor autograd saves for backward, twice:

  hooks   torch.autograd.graph.saved_tensors_hooks around the forward
          pass: pack() sees every saved tensor, numbered in the order
          saved (`seq`);
  walk    after the forward pass, every node reachable from the model's
          outputs' grad_fn, and each of its `_saved_*` attributes.
          Reading one calls unpack(), which tells which pack() it was, so
          every saved tensor gets its node and attribute name.

A saved tensor counts by its storage (t.storage(): views share it), each
storage once, at its full nbytes.  Storages of parameters, buffers and of
the input batch are not counted (`kind` param, buffer, input); everything
else is an activation (`act`).  The two methods must reach the same set
of saved tensors and the same total (asserted).  Bytes per sample are the
slope (bytes(4) - bytes(2)) / 2, fixed bytes the intercept; each storage
must be either constant in the batch or proportional to it (asserted).

Writes into the output folder:

  reference.tsv    one row per model (columns: see README.md there)
  NAME.saved.tsv   one row per saved tensor, fp32 then bf16 (gzipped
                   when over 300 KB)

The loss is not part of the step measured: the walk starts at the model's
outputs (all of them: Inception's and GoogLeNet's auxiliary heads too).
"""
import argparse
import collections
import gc
import os
import sys
import time
import warnings

import torch
import torchvision.models as tvm
import torchvision.models.segmentation as tvs
import torchvision.models.video as tvv

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from export_zoo import gzip_file, MAX_PLAIN  # noqa: E402

class SqueezeExcitation(torch.nn.Module):
    """NVIDIA DeepLearningExamples' SqueezeAndExcitation (ConvNets,
    image_classification/models/common.py at 7bdfc81d): pool, 1x1 conv down
    to `squeeze` channels (a fixed 16), activation, 1x1 conv up, sigmoid."""

    def __init__(self, channels, squeeze):
        super().__init__()
        self.pooling = torch.nn.AdaptiveAvgPool2d(1)
        self.squeeze = torch.nn.Conv2d(channels, squeeze, 1)
        self.expand = torch.nn.Conv2d(squeeze, channels, 1)
        self.relu = torch.nn.ReLU(inplace=True)

    def forward(self, x):
        return torch.sigmoid(self.expand(self.relu(self.squeeze(self.pooling(x)))))


class SEBottleneck(tvm.resnet.Bottleneck):
    """DLE's SEBottleneck: torchvision's bottleneck whose output, before the
    residual add, is gated by SqueezeExcitation, fused as DLE fuses it
    (torch.addcmul(residual, out, se(out)))."""

    def __init__(self, inplanes, planes, *args, **kwargs):
        super().__init__(inplanes, planes, *args, **kwargs)
        self.se = SqueezeExcitation(planes * self.expansion, 16)

    def forward(self, x):
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.relu(self.bn2(self.conv2(out)))
        out = self.bn3(self.conv3(out))
        residual = x if self.downsample is None else self.downsample(x)
        return self.relu(torch.addcmul(residual, out, self.se(out), value=1))


def resnext101_32x4d(weights=None):
    """DLE's ResNeXt-101 32x4d: torchvision's ResNeXt at cardinality 32,
    4 channels per group (torchvision has no constructor for it)."""
    return tvm.resnet.ResNet(tvm.resnet.Bottleneck, [3, 4, 23, 3], groups=32,
                             width_per_group=4)


def se_resnext101_32x4d(weights=None):
    return tvm.resnet.ResNet(SEBottleneck, [3, 4, 23, 3], groups=32, width_per_group=4)


class CifarBasicBlock(torch.nn.Module):
    """The basic block of kuangliu/pytorch-cifar's ResNet18: two 3x3
    conv + BN, the shortcut a 1x1 conv + BN where the shape changes."""

    def __init__(self, inplanes, planes, stride):
        super().__init__()
        nn = torch.nn
        self.conv1 = nn.Conv2d(inplanes, planes, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(planes)
        self.conv2 = nn.Conv2d(planes, planes, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(planes)
        self.shortcut = nn.Sequential()
        if stride != 1 or inplanes != planes:
            self.shortcut = nn.Sequential(nn.Conv2d(inplanes, planes, 1, stride, bias=False),
                                          nn.BatchNorm2d(planes))

    def forward(self, x):
        out = torch.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        return torch.relu(out + self.shortcut(x))


class CifarResNet18(torch.nn.Module):
    """kuangliu/pytorch-cifar's ResNet18 (100 classes): a 3x3 stem at
    32x32, four stages of two basic blocks, avg_pool2d(4), one linear."""

    def __init__(self, classes=100):
        super().__init__()
        nn = torch.nn
        self.conv1 = nn.Conv2d(3, 64, 3, 1, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(64)
        blocks, inplanes = [], 64
        for planes, stride in ((64, 1), (128, 2), (256, 2), (512, 2)):
            for s in (stride, 1):
                blocks.append(CifarBasicBlock(inplanes, planes, s))
                inplanes = planes
        self.layers = nn.Sequential(*blocks)
        self.linear = nn.Linear(512, classes)

    def forward(self, x):
        out = self.layers(torch.relu(self.bn1(self.conv1(x))))
        out = torch.nn.functional.avg_pool2d(out, 4)
        return self.linear(out.flatten(1))


def resnet18_cifar(weights=None):
    return CifarResNet18()


IMAGE = (3, 224, 224)
VIDEO = (3, 16, 112, 112)
BATCHES = (2, 4)

# name -> (constructor, input shape per sample, keyword arguments)
MODELS = collections.OrderedDict([
    ("alexnet", (tvm.alexnet, IMAGE, {})),
    ("vgg11", (tvm.vgg11, IMAGE, {})),
    ("vgg16", (tvm.vgg16, IMAGE, {})),
    ("resnet18", (tvm.resnet18, IMAGE, {})),
    ("resnet18_cifar", (resnet18_cifar, (3, 32, 32), {})),
    ("resnet34", (tvm.resnet34, IMAGE, {})),
    ("resnet50", (tvm.resnet50, IMAGE, {})),
    ("resnet101", (tvm.resnet101, IMAGE, {})),
    ("resnet152", (tvm.resnet152, IMAGE, {})),
    ("resnext50_32x4d", (tvm.resnext50_32x4d, IMAGE, {})),
    ("resnext101_32x4d", (resnext101_32x4d, IMAGE, {})),
    ("se_resnext101_32x4d", (se_resnext101_32x4d, IMAGE, {})),
    ("wide_resnet50_2", (tvm.wide_resnet50_2, IMAGE, {})),
    ("densenet121", (tvm.densenet121, IMAGE, {})),
    ("squeezenet1_0", (tvm.squeezenet1_0, IMAGE, {})),
    ("mobilenet_v2", (tvm.mobilenet_v2, IMAGE, {})),
    ("mobilenet_v3_small", (tvm.mobilenet_v3_small, IMAGE, {})),
    ("mobilenet_v3_large", (tvm.mobilenet_v3_large, IMAGE, {})),
    ("shufflenet_v2_x1_0", (tvm.shufflenet_v2_x1_0, IMAGE, {})),
    ("mnasnet0_5", (tvm.mnasnet0_5, IMAGE, {})),
    ("efficientnet_b0", (tvm.efficientnet_b0, IMAGE, {})),
    ("regnet_y_400mf", (tvm.regnet_y_400mf, IMAGE, {})),
    ("googlenet", (tvm.googlenet, IMAGE, {})),
    ("inception_v3", (tvm.inception_v3, (3, 299, 299), {})),
    ("convnext_tiny", (tvm.convnext_tiny, IMAGE, {})),
    ("vit_b_16", (tvm.vit_b_16, IMAGE, {})),
    ("swin_t", (tvm.swin_t, IMAGE, {})),
    ("maxvit_t", (getattr(tvm, "maxvit_t", None), IMAGE, {})),
    ("r3d_18", (tvv.r3d_18, VIDEO, {})),
    ("mc3_18", (tvv.mc3_18, VIDEO, {})),
    ("r2plus1d_18", (tvv.r2plus1d_18, VIDEO, {})),
    ("fcn_resnet50", (tvs.fcn_resnet50, IMAGE, {"weights_backbone": None})),
    ("deeplabv3_resnet50", (tvs.deeplabv3_resnet50, IMAGE,
                            {"weights_backbone": None})),
    ("lraspp_mobilenet_v3_large", (tvs.lraspp_mobilenet_v3_large, IMAGE,
                                   {"weights_backbone": None})),
])

MODES = (("fp32", None), ("bf16", torch.bfloat16))


# ---- one forward pass ---------------------------------------------------------

def storage_key(t):
    """The storage a tensor views: (data pointer, bytes)."""
    s = t.storage()
    return (s.data_ptr(), s.nbytes())


def outputs_of(out):
    """Every tensor in a model's output (tensor, tuple, named tuple, dict)."""
    if isinstance(out, torch.Tensor):
        return [out]
    if isinstance(out, dict):
        return [t for k in out for t in outputs_of(out[k])]
    if isinstance(out, (tuple, list)):
        return [t for o in out for t in outputs_of(o)]
    return []


class Recorder:
    """saved_tensors_hooks that number every saved tensor (pack) and tell
    which one an attribute read returned (unpack).  Module hooks keep the
    stack of modules running, so that each saved tensor also gets the
    innermost module that saved it and whether an nn.Dropout* was
    running."""

    def __init__(self, model):
        self.packs = []        # seq -> (tensor, module name, in dropout)
        self.unpacked = []
        self.stack = []        # (module name, is a dropout)
        self.hooks = []
        for name, m in model.named_modules():
            drop = type(m).__name__.startswith("Dropout")
            self.hooks.append(m.register_forward_pre_hook(self.enter(name or "-", drop)))
            self.hooks.append(m.register_forward_hook(self.leave))

    def pack(self, t):
        # A detached alias: same storage, no grad_fn.  The tensor itself
        # would make a reference cycle through C++ (saved output -> its
        # grad_fn -> the saved variable -> this hook's result) that
        # Python's collector cannot see: every graph would leak.
        t = t.detach()
        top = self.stack[-1][0] if self.stack else "-"
        self.packs.append((t, top, any(d for _, d in self.stack)))
        return (len(self.packs) - 1, t)

    def unpack(self, packed):
        self.unpacked.append(packed[0])
        return packed[1]

    def enter(self, name, drop):
        def hook(*args):
            self.stack.append((name, drop))
        return hook

    def leave(self, *args):
        self.stack.pop()

    def remove(self):
        for h in self.hooks:
            h.remove()


def saved_attrs(node):
    names = sorted(a for a in dir(node) if a.startswith("_saved_"))
    if hasattr(node, "saved_tensors"):      # custom autograd.Function
        names.append("saved_tensors")
    return names


def walk(outputs, rec):
    """(seq, node name, attribute, tensor) of every saved tensor reachable
    from the outputs' grad_fn, by reading the nodes' _saved_* attributes;
    and how many CopySlices nodes it met (below)."""
    rows = []
    seen = {}
    copyslices = 0
    stack = [t.grad_fn for t in reversed(outputs) if t.grad_fn is not None]
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen[id(node)] = node          # keeps the wrapper (and its id) alive
        copyslices += node.name().endswith("CopySlices")
        for attr in saved_attrs(node):
            rec.unpacked = []
            value = getattr(node, attr)
            tensors = [value] if isinstance(value, torch.Tensor) else \
                [v for v in value if isinstance(v, torch.Tensor)] \
                if isinstance(value, (tuple, list)) else []
            assert len(tensors) == len(rec.unpacked), (node.name(), attr)
            for seq, t in zip(rec.unpacked, tensors):
                rows.append((seq, node.name(), attr.replace("_saved_", "", 1), t))
        for nxt, _ in reversed(node.next_functions):
            stack.append(nxt)
    return rows, copyslices


def forward(model, shape, batch, dtype):
    """Runs one forward pass; returns the saved tensors as a list of dicts,
    one per pack() in order, their activation bytes, and the input's bytes
    per sample."""
    torch.manual_seed(0)
    x = torch.randn(batch, *shape)
    param = {storage_key(p)[0] for p in model.parameters()}
    buffer = {storage_key(b)[0] for b in model.buffers()}
    inptr = storage_key(x)[0]
    rec = Recorder(model)
    with torch.autocast("cpu", dtype=dtype or torch.bfloat16,
                        enabled=dtype is not None):
        with torch.autograd.graph.saved_tensors_hooks(rec.pack, rec.unpack):
            out = model(x)
    rec.remove()
    assert not rec.stack
    rows, copyslices = walk(outputs_of(out), rec)

    def kind_of(ptr):
        return "param" if ptr in param else "buffer" if ptr in buffer else \
            "input" if ptr == inptr else "act"

    # the hooks' view
    saved = []
    first = {}                 # storage pointer -> seq of its first pack
    hook_total = 0
    for seq, (t, module, in_dropout) in enumerate(rec.packs):
        ptr, nbytes = storage_key(t)
        kind = kind_of(ptr)
        new = ptr not in first
        if new:
            first[ptr] = seq
            if kind == "act":
                hook_total += nbytes
        saved.append({"seq": seq, "kind": kind, "dtype": str(t.dtype).replace("torch.", ""),
                      "shape": tuple(t.shape), "nbytes": nbytes, "module": module,
                      "storage": first[ptr], "first": new, "dropout": in_dropout,
                      "node": None, "attr": None})

    # the walk's view, from the tensors the nodes hand back
    walk_total = 0
    counted = set()
    for seq, node, attr, t in rows:
        assert saved[seq]["node"] is None, ("saved twice", seq, node, attr)
        saved[seq]["node"], saved[seq]["attr"] = node, attr
        ptr, nbytes = storage_key(t)
        if kind_of(ptr) == "act" and ptr not in counted:
            counted.add(ptr)
            walk_total += nbytes
    # An in-place op on a view (EfficientNet's Dropout(inplace=True) on
    # torch.flatten's output) rewrites the base's grad_fn into a CopySlices
    # node that holds the op's own node inside, out of the walk's reach
    # (torch 1.13 does not expose CopySlices.fn).  Such tensors are the
    # only ones the walk may miss; they keep node "CopySlices", attribute
    # "?", and count in the walk's total as the hooks saw them.
    missed = [s for s in saved if s["node"] is None]
    assert not missed or copyslices, ("pack()ed but not reached by the walk", missed[:5])
    for s in missed:
        s["node"], s["attr"] = "CopySlices", "?"
        ptr, nbytes = storage_key(rec.packs[s["seq"]][0])
        if kind_of(ptr) == "act" and ptr not in counted:
            counted.add(ptr)
            walk_total += nbytes
    assert walk_total == hook_total, (walk_total, hook_total)
    return saved, hook_total, x.numel() * x.element_size() // batch


# ---- one model ----------------------------------------------------------------

def per_sample(n1, n2):
    """Slope and intercept of bytes over the two batches."""
    b1, b2 = BATCHES
    assert (n2 - n1) % (b2 - b1) == 0, (n1, n2)
    slope = (n2 - n1) // (b2 - b1)
    return slope, n1 - slope * b1


def measure_mode(model, shape, dtype):
    """Both batches in one precision: the rows of the larger one, each with
    its storage's per-sample and fixed bytes."""
    runs = [forward(model, shape, b, dtype) for b in BATCHES]
    (s1, t1, inb), (s2, t2, _) = runs
    assert len(s1) == len(s2), (len(s1), len(s2))
    for a, b in zip(s1, s2):
        keys = ("node", "attr", "kind", "storage", "first", "module", "dropout")
        assert [a[k] for k in keys] == [b[k] for k in keys], (a, b)
        a1, a2 = a["nbytes"], b["nbytes"]
        b["per_sample"], b["fixed"] = per_sample(a1, a2)
        # a storage is either fixed or proportional to the batch
        assert b["per_sample"] == 0 or b["fixed"] == 0, b
    slope, fixed = per_sample(t1, t2)
    return s2, slope, fixed, inb


def node_counts(saved):
    """Saved activation tensors per autograd node type."""
    c = collections.Counter(s["node"] for s in saved if s["kind"] == "act")
    return ";".join("%s:%d" % kv for kv in sorted(c.items(), key=lambda kv: (-kv[1], kv[0])))


def shape_str(shape, batch):
    dims = ["N" if i == 0 and d == batch else str(d) for i, d in enumerate(shape)]
    return ",".join(dims) if dims else "scalar"


def measure(name, outdir):
    ctor, shape, kwargs = MODELS[name]
    torch.manual_seed(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = ctor(weights=None, **kwargs).train()
    row = collections.OrderedDict()
    row["model"] = name
    row["input"] = "x".join(str(d) for d in shape)
    row["batches"] = ",".join(str(b) for b in BATCHES)
    row["params_bytes"] = sum(p.numel() * p.element_size() for p in model.parameters())
    row["buffers_bytes"] = sum(b.numel() * b.element_size() for b in model.buffers())
    results = {}
    for mode, dtype in MODES:
        try:
            results[mode] = measure_mode(model, shape, dtype)
        except RuntimeError as e:
            # torch 1.13's CPU autocast does not list layer_norm, whose CPU
            # kernel then refuses a bf16 input with fp32 weights (ConvNeXt,
            # Swin): no bf16 numbers for such models.
            if mode == "fp32":
                raise
            print("%s: %s: %s" % (name, mode, str(e).split("\n")[0]), file=sys.stderr)
            results[mode] = ([], "NA", "NA", None)
    saved, slope, fixed, inb = results["fp32"]
    row["input_bytes_per_sample"] = inb
    row["saved_fp32_bytes_per_sample"] = slope
    row["saved_fp32_bytes_fixed"] = fixed
    row["saved_bf16_autocast_bytes_per_sample"] = results["bf16"][1]
    row["saved_bf16_autocast_bytes_fixed"] = results["bf16"][2]
    acts = [s for s in saved if s["kind"] == "act" and s["first"]]
    big = max(acts, key=lambda s: (s["per_sample"], -s["seq"]))
    row["largest_saved_bytes_per_sample"] = big["per_sample"]
    row["largest_saved_by"] = "%s.%s" % (big["node"], big["attr"])
    row["largest_saved_shape"] = "%s:%s" % (shape_str(big["shape"], BATCHES[-1]), big["dtype"])
    row["dropout_saved_fp32_bytes_per_sample"] = sum(
        s["per_sample"] for s in acts if s["dropout"])
    row["input_saved_fp32"] = int(any(s["kind"] == "input" for s in saved))
    row["saved_tensors_fp32"] = sum(1 for s in saved if s["kind"] == "act")
    row["storages_fp32"] = len(acts)
    row["hidden_in_copyslices_fp32"] = sum(1 for s in saved if s["attr"] == "?")
    row["saved_by_node_fp32"] = node_counts(saved)
    write_saved(name, results, outdir)
    return row


SAVED_COLUMNS = ("mode", "seq", "module", "node", "attr", "kind", "dtype", "shape",
                 "storage", "first", "storage_bytes_per_sample",
                 "storage_bytes_fixed", "dropout")


def write_saved(name, results, outdir):
    path = os.path.join(outdir, name + ".saved.tsv")
    for old in (path, path + ".gz"):
        if os.path.exists(old):
            os.remove(old)
    with open(path, "w") as f:
        f.write("\t".join(SAVED_COLUMNS) + "\n")
        for mode, _ in MODES:
            for s in results[mode][0]:
                f.write("\t".join(str(v) for v in (
                    mode, s["seq"], s["module"], s["node"], s["attr"], s["kind"], s["dtype"],
                    shape_str(s["shape"], BATCHES[-1]), "s%d" % s["storage"],
                    int(s["first"]), s["per_sample"], s["fixed"],
                    int(s["dropout"]))) + "\n")
    if os.path.getsize(path) > MAX_PLAIN:
        gzip_file(path)


# ---- the table ----------------------------------------------------------------

def read_table(path):
    with open(path) as f:
        lines = [ln.rstrip("\n").split("\t") for ln in f]
    return [collections.OrderedDict(zip(lines[0], ln)) for ln in lines[1:]]


def write_table(path, rows):
    cols = list(rows[0])
    with open(path, "w") as f:
        f.write("\t".join(cols) + "\n")
        for r in rows:
            f.write("\t".join(str(r[c]) for c in cols) + "\n")


def mb(n):
    return "%8.2f" % (int(n) / 1e6) if n != "NA" else "      NA"


def commas(n):
    return "{:,}".format(int(n)) if n != "NA" else "NA"


def markdown(path):
    """The README's summary table, from reference.tsv."""
    print("| model | input | params MB | fp32 MB/sample | fp32 fixed bytes"
          " | bf16 MB/sample | bf16 fixed bytes | largest saved (fp32, per sample) |")
    print("|---|---|--:|--:|--:|--:|--:|---|")
    for r in read_table(path):
        print("| %s | %s | %s | %s | %s | %s | %s | %s %s %s MB |" % (
            r["model"], r["input"], mb(r["params_bytes"]).strip(),
            mb(r["saved_fp32_bytes_per_sample"]).strip(),
            commas(r["saved_fp32_bytes_fixed"]),
            mb(r["saved_bf16_autocast_bytes_per_sample"]).strip(),
            commas(r["saved_bf16_autocast_bytes_fixed"]),
            r["largest_saved_by"], r["largest_saved_shape"],
            mb(r["largest_saved_bytes_per_sample"]).strip()))
    print()
    print("| model | saved activation tensors by autograd node (fp32) |")
    print("|---|---|")
    for r in read_table(path):
        print("| %s | %s |" % (r["model"], r["saved_by_node_fp32"].replace(";", ", ")))


# ---- CPU autocast probe ---------------------------------------------------------

def probe():
    """The dtype each op the zoo uses returns under CPU autocast (bf16) for
    an fp32 and for a bf16 input, and for a bf16 input without autocast:
    which ops this torch's CPU autocast lowers, which it keeps in fp32 and
    which simply follow their input.  Weights stay fp32, as parameters."""
    torch.manual_seed(0)
    w = torch.randn(8, 8, 3, 3)
    lw = torch.randn(8, 8)
    F = torch.nn.functional
    # each op gets x (2x8x6x6) and y (2x5x8) in the same dtype
    ops = collections.OrderedDict([
        ("conv2d", lambda x, y: F.conv2d(x, w, padding=1)),
        ("linear", lambda x, y: F.linear(y, lw)),
        ("matmul", lambda x, y: torch.matmul(y, y.transpose(1, 2))),
        ("bmm", lambda x, y: torch.bmm(y, y.transpose(1, 2))),
        ("mm", lambda x, y: torch.mm(y[0], lw)),
        ("addmm", lambda x, y: torch.addmm(lw[0], y[0], lw)),
        ("baddbmm", lambda x, y: torch.baddbmm(y[:, :, :5], y, y.transpose(1, 2))),
        ("conv_transpose2d", lambda x, y: F.conv_transpose2d(x, w)),
        ("prelu", lambda x, y: F.prelu(x, lw[0, :1])),
        ("batch_norm", lambda x, y: F.batch_norm(x, None, None, training=True)),
        ("layer_norm", lambda x, y: F.layer_norm(y, (8,))),
        ("group_norm", lambda x, y: F.group_norm(x, 2)),
        ("softmax", lambda x, y: F.softmax(y, -1)),
        ("log_softmax", lambda x, y: F.log_softmax(y, -1)),
        ("gelu", lambda x, y: F.gelu(x)),
        ("relu", lambda x, y: F.relu(x)),
        ("hardswish", lambda x, y: F.hardswish(x)),
        ("silu", lambda x, y: F.silu(x)),
        ("sigmoid", lambda x, y: torch.sigmoid(x)),
        ("max_pool2d", lambda x, y: F.max_pool2d(x, 2)),
        ("avg_pool2d", lambda x, y: F.avg_pool2d(x, 2)),
        ("adaptive_avg_pool2d", lambda x, y: F.adaptive_avg_pool2d(x, 1)),
        ("max_pool3d", lambda x, y: F.max_pool3d(x.unsqueeze(2), (1, 2, 2))),
        ("adaptive_avg_pool3d", lambda x, y: F.adaptive_avg_pool3d(x.unsqueeze(2), 1)),
        ("dropout", lambda x, y: F.dropout(x, 0.5, True)),
        ("interpolate_bilinear", lambda x, y: F.interpolate(x, scale_factor=2, mode="bilinear")),
        ("mean", lambda x, y: x.mean((2, 3))),
        ("sum", lambda x, y: x.sum((2, 3))),
        ("add", lambda x, y: x + x),
        ("cat", lambda x, y: torch.cat([x, x], 1)),
        ("cross_entropy", lambda x, y: F.cross_entropy(y[:, 0], torch.tensor([1, 2]))),
    ])
    x = torch.randn(2, 8, 6, 6)
    y = torch.randn(2, 5, 8)
    print("op\tfp32 input\tbf16 input\tbf16 input, no autocast")
    for name, f in ops.items():
        got = []
        for dtype, on in ((torch.float32, True), (torch.bfloat16, True),
                          (torch.bfloat16, False)):
            with torch.autocast("cpu", dtype=torch.bfloat16, enabled=on):
                try:
                    got.append(str(f(x.to(dtype), y.to(dtype)).dtype).replace("torch.", ""))
                except RuntimeError:
                    got.append("error")
        print("\t".join([name] + got))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("-o", "--outdir", default="tests/data/autograd")
    ap.add_argument("--table", action="store_true",
                    help="print the README's summary tables from reference.tsv")
    ap.add_argument("--probe", action="store_true",
                    help="print the dtypes CPU autocast gives the zoo's ops")
    ap.add_argument("models", nargs="*", default=[m for m in MODELS if MODELS[m][0]])
    args = ap.parse_args()
    table = os.path.join(args.outdir, "reference.tsv")
    if args.table:
        return markdown(table)
    if args.probe:
        return probe()
    torch.set_num_threads(1)
    torch.set_num_interop_threads(1)
    os.makedirs(args.outdir, exist_ok=True)
    rows = collections.OrderedDict()
    if os.path.exists(table):                     # keep the other models' rows
        for r in read_table(table):
            rows[r["model"]] = r
    for name in args.models:
        if name not in MODELS or MODELS[name][0] is None:
            sys.exit("autograd_ref: unknown model '%s'" % name)
        t0 = time.time()
        rows[name] = measure(name, args.outdir)
        r = rows[name]
        print("%-26s fp32 %s MB/sample + %9s  bf16 %s MB/sample + %9s  %5.1f s" % (
            name, mb(r["saved_fp32_bytes_per_sample"]), r["saved_fp32_bytes_fixed"],
            mb(r["saved_bf16_autocast_bytes_per_sample"]),
            r["saved_bf16_autocast_bytes_fixed"], time.time() - t0), flush=True)
        gc.collect()
        write_table(table, [rows[m] for m in MODELS if m in rows])


if __name__ == "__main__":
    main()
