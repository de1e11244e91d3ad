"""oraclec.runner -- the ranks of oraclec.launch: the torch side (the
command line, the plan's checks and the report are oraclec.launch's).

A rank builds the model, takes its part of the plan -- a data-parallel
replica (DistributedDataParallel), a pipeline stage (the model traced with
torch.fx and cut at split_spec), or its shards of split layers (filter,
channel, per layer) -- and runs steps: forward, backward, the gradients
summed where the plan replicates them, an SGD step.  With --check step 0
is compared with one process; with --time the steps after the warm-up are
timed; with --trace rank 0 records a profile.  docs/plans.md, "Running a
plan", says what each does.
"""
import contextlib
import ctypes
import datetime
import gc
import json
import os
import signal
import statistics
import sys
import tempfile
import time

import torch
import torch.distributed as dist
import torch.fx
import torch.nn as nn
import torch.nn.functional as F

from oraclec.cli import Interrupted, line_safe, path_shown, shown, signals_raise
from oraclec.planschema import PlanError, splits

RTOL, ATOL = 1e-4, 1e-5
# the step every rank (and the one-process reference) takes
SGD = {"lr": 0.01, "momentum": 0.9}
# the timed run's input set: ImageNet-1k's training images (the dataset the
# torchvision models are defined for); only the epoch depends on it
DATASET_SIZE = 1281167


class Stop(Exception):
    """A rank (or the launcher) stops with this one-line reason; `usage`:
    the command line named it wrongly (exit status 2, not 1)."""

    def __init__(self, msg, usage=False):
        super().__init__(msg)
        self.usage = usage


def fail(msg, usage=False):
    raise Stop(msg, usage)


def one_line(e, width=300):
    """An exception as one line: its type (unless it is ours) and the first
    line of its message."""
    if isinstance(e, Interrupted):
        return "stopped by %s" % e.name()
    msg = str(e).strip().split("\n")[0] if str(e).strip() else ""
    text = msg if isinstance(e, (Stop, PlanError)) else "%s%s" % (
        type(e).__name__, ": " + msg if msg else "")
    return line_safe(text if len(text) <= width else text[:width - 3] + "...")



def model_name(spec):
    """The model's name in a row and beside it (M.models/NAME.onnx):
    torchvision's NAME, or a file's CALLABLE."""
    return spec.rpartition(":")[2]


def model_ctor(spec):
    """What builds the model --model names: ("torchvision", the
    constructor, NAME) for torchvision:NAME, ("file", the callable,
    CALLABLE) for FILE.py:CALLABLE (a function or a class of the file,
    called with no arguments).  Stop (usage) where the spec names nothing;
    Stop where the file fails to run."""
    if spec.startswith("torchvision:"):
        return ("torchvision", torchvision_ctor(spec), model_name(spec))
    path, sep, name = spec.rpartition(":")
    if not sep or not path.endswith(".py") or not name:
        fail("--model %s: a model is torchvision:NAME or FILE.py:CALLABLE" % shown(spec), True)
    return ("file", file_ctor(spec, path, name), name)


def torchvision_ctor(spec):
    """torchvision's constructor of the model torchvision:NAME names."""
    import torchvision
    name = spec.split(":", 1)[1]
    ctor = getattr(torchvision.models, name, None) if name.isidentifier() else None
    if hasattr(torchvision.models, "list_models"):
        known = name in torchvision.models.list_models(torchvision.models)
    else:  # a builder takes weights=
        import inspect
        known = (callable(ctor) and not isinstance(ctor, type) and not name.startswith("_")
                 and "weights" in inspect.signature(ctor).parameters)
    if ctor is None or not known:
        fail("--model %s: torchvision.models has no model %s" % (shown(spec), shown(name)), True)
    return ctor


# the files --model has loaded in this process, by real path
_FILES = {}


def file_ctor(spec, path, name):
    """CALLABLE of the Python file at `path`, run once per process as a
    module of its own (its directory first on sys.path while it runs, so
    that it imports what lies beside it)."""
    import importlib.util
    if not os.path.isfile(path):
        fail("--model %s: %s" % (shown(spec), "no such file" if not os.path.exists(path)
                                  else "not a regular file"), True)
    if not name.isidentifier():
        fail("--model %s: %s is not a Python name" % (shown(spec), shown(name)), True)
    real = os.path.realpath(path)
    mod = _FILES.get(real)
    if mod is None:
        where = os.path.dirname(real)
        ms = importlib.util.spec_from_file_location("oraclec_model_%d" % len(_FILES), real)
        mod = importlib.util.module_from_spec(ms)
        sys.path.insert(0, where)
        try:
            ms.loader.exec_module(mod)
        except (Exception, SystemExit) as e:  # the file's own error, reported
            fail("--model %s: the file raised %s" % (shown(spec), one_line(e)))
        finally:
            if where in sys.path:
                sys.path.remove(where)
        _FILES[real] = mod
    ctor = getattr(mod, name, None)
    if not callable(ctor):
        have = sorted(k for k, v in vars(mod).items() if callable(v) and not k.startswith("_")
                      and getattr(v, "__module__", None) == mod.__name__)
        fail("--model %s: %s has no function or class %s (it has: %s)" % (
            shown(spec), path_shown(path), shown(name), ", ".join(have[:8]) or "none"), True)
    return ctor


def build_model(spec, image_size):
    kind, ctor, name = model_ctor(spec)
    torch.manual_seed(0)
    if kind == "torchvision":
        # a vision transformer is built for the image size (its position
        # embedding has one entry per patch); the plan's stages do not
        # depend on it
        kw = {"image_size": image_size} if name.startswith("vit_") else {}
        model = ctor(weights=None, **kw)
        what = "torchvision.models.%s" % name
    else:
        try:
            model = ctor()
        except (Exception, SystemExit) as e:  # the user's code: its reason
            fail("--model %s: %s() raised %s" % (shown(spec), name, one_line(e)))
        what = "%s()" % name
    if not isinstance(model, nn.Module):
        fail("--model %s: %s is %s, not a torch.nn.Module" % (
            shown(spec), what, shown(type(model).__name__)))
    return model


def classes_of(model, spec, shape):
    """The classes the model's output scores: one sample of `shape`
    through it (eval mode, no graph) must give a (1, C) tensor, which the
    cross-entropy loss every rank trains with takes.  Stop saying what it
    gave or raised."""
    try:
        with torch.no_grad():
            out = model.eval()(torch.randn(1, *shape))
    except Exception as e:  # the model's own complaint
        fail("--model %s does not take a %s input (%s)" % (
            shown(spec), "x".join(map(str, shape)), one_line(e)), True)
    if not torch.is_tensor(out) or out.dim() != 2 or out.shape[0] != 1 or out.shape[1] < 1:
        got = ("a %s tensor" % "x".join(map(str, out.shape)) if torch.is_tensor(out)
               else "a %s" % type(out).__name__)
        fail("--model %s: a sample gives %s; the launcher trains a classifier (cross "
             "entropy over a (batch, classes) output)" % (shown(spec), got))
    return int(out.shape[1])


def traceable(model):
    """torchvision 0.14's VisionTransformer unpacks x.shape in
    _process_input, and its EncoderBlock unpacks MultiheadAttention's
    result, which torch.fx (1.13, on Python 3.11) cannot trace: these
    methods, the same computations, index them instead."""
    import torchvision
    vt = getattr(torchvision.models, "VisionTransformer", None)
    if vt is not None and isinstance(model, vt):
        def process_input(self, x):
            n, side = x.shape[0], self.image_size // self.patch_size
            x = self.conv_proj(x)
            return x.reshape(n, self.hidden_dim, side * side).permute(0, 2, 1)
        model._process_input = process_input.__get__(model)

        def block(self, inp):
            x = self.ln_1(inp)
            x = self.self_attention(query=x, key=x, value=x, need_weights=False)[0]
            x = self.dropout(x) + inp
            return x + self.mlp(self.ln_2(x))
        for m in model.modules():
            if type(m).__name__ == "EncoderBlock":
                m.forward = block.__get__(m)
    return model


def deterministic(model):
    """BatchNorm on running statistics, dropout off; the rest trains."""
    model.train()
    for m in model.modules():
        if isinstance(m, (nn.modules.batchnorm._BatchNorm, nn.Dropout)):
            m.eval()
    return model


def batch(n, shape, classes):
    """n samples of `shape` (channels first) and their labels, the same on
    every rank."""
    g = torch.Generator().manual_seed(1)
    return (torch.randn(n, *shape, generator=g),
            torch.randint(0, classes, (n,), generator=g))


# ---- the mesh ------------------------------------------------------------

def coords(plan, rank):
    """This rank's coordinate in each mesh dimension (row-major)."""
    shape, names = plan["device_mesh"]["mesh_shape"], plan["device_mesh"]["mesh_dim_names"]
    c, r = {}, rank
    for n, s in reversed(list(zip(names, shape))):
        c[n] = r % s
        r //= s
    return c


def group_of(plan, rank, dim, groups):
    """The ranks that differ from this one only in `dim`, as a process
    group (every rank creates every group, in the same order)."""
    names = plan["device_mesh"]["mesh_dim_names"]
    world = plan["world_size"]
    mine = None
    for r0 in range(world):
        c = coords(plan, r0)
        if c[dim] != 0:
            continue
        members = [q for q in range(world)
                   if all(coords(plan, q)[d] == c[d] for d in names if d != dim)]
        key = (dim, tuple(members))
        if key not in groups:
            groups[key] = dist.new_group(members)
        if rank in members:
            mine = (groups[key], members)
    return mine


def sync_bn_groups(plan):
    """The plan's sync_batchnorm_group_size K as its groups: K consecutive
    ranks of each line of the data dimension (the other coordinates
    fixed), in rank order; [] without the key."""
    k = plan.get("sync_batchnorm_group_size")
    if not k:
        return []
    names = plan["device_mesh"]["mesh_dim_names"]
    out = []
    for r0 in range(plan["world_size"]):
        c = coords(plan, r0)
        if c.get("data", 0) != 0:
            continue
        line = [q for q in range(plan["world_size"])  # by data coordinate: rank order
                if all(coords(plan, q)[d] == c[d] for d in names if d != "data")]
        out += [line[i:i + k] for i in range(0, len(line), k)]
    return out


def sync_bn_group(plan, rank):
    """Each of the plan's synchronised batch norm groups a process group
    (every rank creates every group, in the same order, as
    torch.distributed.new_group requires); this rank's, or None without
    the key."""
    mine = None
    for members in sync_bn_groups(plan):
        g = dist.new_group(members)
        if rank in members:
            mine = g
    return mine


def prepared(model, plan, rank, check):
    """The rank's model before DDP or the stages take it: its batch norms
    synchronised over the plan's group (convert_sync_batchnorm), then
    training, or for --check batch norm on its running statistics and
    dropout off (deterministic) -- after the conversion, whose new modules
    train whatever the old ones did (torch 1.13's convert_sync_batchnorm
    copies no mode): else --check would compare a batch's statistics with
    the reference's running ones."""
    bn_g = sync_bn_group(plan, rank)
    if bn_g is not None:
        model = nn.SyncBatchNorm.convert_sync_batchnorm(model, bn_g)
    return deterministic(model) if check else model.train()


def group_ranks(pg):
    """The global ranks of process group pg (None: the world's)."""
    if pg is None:
        return list(range(dist.get_world_size()))
    if hasattr(dist, "get_process_group_ranks"):
        return sorted(dist.get_process_group_ranks(pg))
    return sorted(dist.distributed_c10d._pg_group_ranks[pg])  # a torch without it


def check_sync_bn(model, plan, rank):
    """--check: every batch norm of this rank's model shares its
    statistics with exactly the ranks the plan's sync_batchnorm_group_size
    gives this rank (none without the key); the first difference, or
    None."""
    want = next((g for g in sync_bn_groups(plan) if rank in g), None)
    k = plan.get("sync_batchnorm_group_size")
    plans = ("the plan's sync_batchnorm_group_size %d gives rank %d the group %s"
             % (k, rank, want) if want else "the plan has no sync_batchnorm_group_size")
    for name, m in model.named_modules():
        if isinstance(m, nn.SyncBatchNorm):
            got = group_ranks(m.process_group)
            if got != want:
                return "%s is a SyncBatchNorm over ranks %s; %s" % (name or "the model", got,
                                                                     plans)
        elif isinstance(m, nn.modules.batchnorm._BatchNorm) and want:
            return "%s is a %s, not synchronised; %s" % (name or "the model",
                                                         type(m).__name__, plans)
    return None


# ---- pipeline stages -----------------------------------------------------

def stages_of(gm, split):
    """Each node's stage: a new stage begins at the first node that calls a
    module at or under the next split point, in the graph's order."""
    stage, cur, points = {}, 0, list(split)
    for node in gm.graph.nodes:
        if node.op == "call_module" and cur < len(points):
            t = node.target
            if t == points[cur] or t.startswith(points[cur] + "."):
                cur += 1
        stage[node] = cur
    if cur != len(points):
        raise PlanError("pipeline.split_spec", "split point %s is not a module the traced model "
                        "calls (after the split points before it)" % points[cur])
    # a constant (get_attr) belongs to the stage of its first user
    for node in gm.graph.nodes:
        if node.op == "get_attr" and node.users:
            stage[node] = min(stage[u] for u in node.users)
    return stage


def run_nodes(gm, nodes, env):
    """Evaluates `nodes` (in order) on env, node -> value; returns the
    graph's output if it is among them."""
    out = None
    for node in nodes:
        args = torch.fx.node.map_arg(node.args, lambda n: env[n])
        kwargs = torch.fx.node.map_arg(node.kwargs, lambda n: env[n])
        if node.op == "get_attr":
            v = gm
            for a in node.target.split("."):
                v = getattr(v, a)
        elif node.op == "call_module":
            v = gm.get_submodule(node.target)(*args, **kwargs)
        elif node.op == "call_function":
            v = node.target(*args, **kwargs)
        elif node.op == "call_method":
            v = getattr(args[0], node.target)(*args[1:], **kwargs)
        elif node.op == "output":
            out = args[0]
            continue
        else:
            continue
        env[node] = v
    return out


def crossing(gm, stage, s):
    """The values computed in stages <= s that a later stage uses, in the
    graph's order."""
    return [n for n in gm.graph.nodes if stage[n] <= s and n.op != "output"
            and any(stage[u] > s for u in n.users)]


# the element types a value crossing a stage boundary may have (autocast
# sends 16-bit activations)
DTYPES = [torch.float32, torch.float16, torch.bfloat16, torch.float64, torch.int64,
          torch.int32, torch.int16, torch.int8, torch.uint8, torch.bool]


def send(values, dst, group_rank, pending):
    """Sends each value (its element type, rank and shape, then its data)
    without waiting: 1F1B sends an activation on while the next stage sends
    a gradient back, and two blocking sends would wait for each other.  The
    requests and their buffers are kept in `pending` until waited on."""
    for v in values:
        if not torch.is_tensor(v):
            fail("a value crossing a stage boundary is not a tensor (%r)" % (v,))
        if v.dtype not in DTYPES:
            fail("a value crossing a stage boundary is a %s tensor" % v.dtype)
        meta = torch.tensor([DTYPES.index(v.dtype), v.dim()] + list(v.shape), dtype=torch.long,
                            device=v.device)
        for t in (torch.tensor([meta.numel()], dtype=torch.long, device=v.device), meta,
                  v.detach().contiguous()):
            pending.append((dist.isend(t, group_rank[dst]), t))


def recv(count, src, group_rank, device):
    out = []
    for _ in range(count):
        n = torch.zeros(1, dtype=torch.long, device=device)
        dist.recv(n, group_rank[src])
        meta = torch.zeros(int(n.item()), dtype=torch.long, device=device)
        dist.recv(meta, group_rank[src])
        meta = meta.tolist()
        t = torch.zeros(tuple(meta[2:]), dtype=DTYPES[meta[0]], device=device)
        dist.recv(t, group_rank[src])
        out.append(t)
    return out


def schedule_order(plan, S, M, me):
    """The order in which stage `me` of S runs its M micro-batches' forward
    ("F", m) and backward ("B", m) passes: GPipe every forward, then every
    backward in reverse; 1F1B (PipeDream-Flush) S - me - 1 forwards, then
    one forward and one backward in turn, then the backwards left, so that
    at most S - me micro-batches are in flight."""
    if plan["pipeline"]["schedule"] == "Schedule1F1B":
        warm = min(S - me - 1, M)
        order = [("F", m) for m in range(warm)]
        for m in range(warm, M):
            order += [("F", m), ("B", m - warm)]
        return order + [("B", m) for m in range(M - warm, M)]
    return [("F", m) for m in range(M)] + [("B", m) for m in reversed(range(M))]


def pipeline_step(gm, plan, stage, me, members, x, y, total, ctx):
    """One step of this rank's stage over the micro-batches, in the plan's
    schedule.  Micro-batches the plan's "checkpoint" names (torchgpipe's
    Pipe: every one but the last for "except_last", all for "always") run
    their forward without a graph, keep only their input, and run it again
    before their backward.  Returns the summed loss on the last stage
    (else None) and the micro-batches the stage held at once in flight and
    whole (with their graph)."""
    pp = plan["pipeline"]
    S, M = len(pp["split_spec"]) + 1, pp["n_microbatches"]
    ckpt = {"never": 0, "except_last": M - 1, "always": M}[pp.get("checkpoint", "never")]
    mine = [n for n in gm.graph.nodes if stage[n] == me]
    ins = crossing(gm, stage, me - 1) if me > 0 else []
    outs = crossing(gm, stage, me) if me < S - 1 else []
    xs, ys = x.chunk(M), y.chunk(M)
    first = next(n for n in gm.graph.nodes if n.op == "placeholder")
    saved, pending, loss_sum, peak, whole = {}, [], None, 0, 0

    def forward(m, inputs):
        """The stage's forward of micro-batch m: what it sends on (or its
        weighted loss on the last stage)."""
        env = dict(zip(ins, inputs)) if me > 0 else {first: xs[m]}
        with ctx.autocast():
            got = run_nodes(gm, mine, env)
            if me < S - 1:
                return [env[n] for n in outs]
            # each micro-batch's mean, weighted: the sum is the batch mean
            return F.cross_entropy(got, ys[m]) * (ys[m].numel() / total)

    def graphs():
        """The micro-batches kept with their graph."""
        return sum(o is not None for _, o in saved.values())

    for what, m in schedule_order(plan, S, M, me):
        if what == "F":
            inputs = []
            if me > 0:
                inputs = [v.requires_grad_(v.is_floating_point())
                          for v in recv(len(ins), me - 1, members, ctx.device)]
            with torch.no_grad() if m < ckpt else torch.enable_grad():
                out = forward(m, inputs)
            if me < S - 1:
                send(out, me + 1, members, pending)
            else:
                loss_sum = out.detach() if loss_sum is None else loss_sum + out.detach()
            saved[m] = (inputs, None if m < ckpt else out)
            peak = max(peak, len(saved))
            whole = max(whole, graphs())
            continue
        inputs, out = saved.pop(m)
        if out is None:  # checkpointed: its forward again, with the graph
            out = forward(m, inputs)
            whole = max(whole, 1 + graphs())
        if me == S - 1:
            ctx.backward(out)
        else:
            grads = recv(len(out), me + 1, members, ctx.device)
            pairs = [(o, g) for o, g in zip(out, grads) if o.requires_grad]
            torch.autograd.backward([o for o, _ in pairs], [g for _, g in pairs])
        if me > 0:
            send([i.grad if i.grad is not None else torch.zeros_like(i) for i in inputs],
                 me - 1, members, pending)
    for work, _ in pending:
        work.wait()
    return loss_sum, (peak, whole)


# ---- filter and channel splits, uniform or per layer ----------------------
#
# Every node of the traced graph gets a degree d (a divisor of the world):
# the ranks form groups of d consecutive ranks, and group k holds samples
# [k n, (k + 1) n) of the batch, n = B d / world (data parallelism is
# d = 1).  A Conv2d or Linear node split by filter holds rows lo:hi of its
# weight (its output channels), by channel columns lo:hi (its input
# channels); the other nodes run whole on their group's samples.  Between
# nodes of different degrees the activation is redistributed.  These are
# Megatron's f and g operators and an all-gather, on process groups.

WORLD = {"rank": 0, "size": 1, "groups": {}}


def split_group(d, rank):
    """The process group of the d consecutive ranks this rank is in (every
    rank creates every group, in the same order)."""
    n = WORLD["size"]
    mine = None
    for k in range(n // d):
        key = ("split", d, k)
        if key not in WORLD["groups"]:
            WORLD["groups"][key] = dist.new_group(list(range(k * d, (k + 1) * d)))
        if k == rank // d:
            mine = WORLD["groups"][key]
    return mine


def shard_group(d, rank):
    """The ranks at this rank's position in every group of d: the
    replicas of its shard, whose gradients are summed."""
    n = WORLD["size"]
    mine = None
    for pos in range(d):
        key = ("shard", d, pos)
        if key not in WORLD["groups"]:
            WORLD["groups"][key] = dist.new_group(list(range(pos, n, d)))
        if pos == rank % d:
            mine = WORLD["groups"][key]
    return mine


class _Copy(torch.autograd.Function):
    """Identity forward; backward, the input gradient's partial sums (each
    rank's shard contributes its part) all-reduced over the group."""
    @staticmethod
    def forward(ctx, x, group):
        ctx.group = group
        return x.view_as(x)

    @staticmethod
    def backward(ctx, g):
        g = g.clone()
        dist.all_reduce(g, group=ctx.group)
        return g, None


class _Reduce(torch.autograd.Function):
    """Partial outputs (each rank's input channels) summed over the group
    forward; identity backward."""
    @staticmethod
    def forward(ctx, y, group):
        y = y.clone()
        dist.all_reduce(y, group=group)
        return y

    @staticmethod
    def backward(ctx, g):
        return g, None


class _Gather(torch.autograd.Function):
    """Each rank's output channels all-gathered along `dim` forward;
    backward, its own slice of the gradient (the same on every rank of the
    group: what follows runs whole on each)."""
    @staticmethod
    def forward(ctx, y, group, d, dim):
        parts = [torch.empty_like(y) for _ in range(d)]
        dist.all_gather(parts, y.contiguous(), group=group)
        ctx.dim, ctx.n, ctx.pos = dim, y.shape[dim], WORLD["rank"] % d
        return torch.cat(parts, dim)

    @staticmethod
    def backward(ctx, g):
        return g.narrow(ctx.dim, ctx.pos * ctx.n, ctx.n).contiguous(), None, None, None


class _Samples(torch.autograd.Function):
    """An activation from the samples of this rank's group of d1 to those
    of its group of d2: every rank's piece all-gathered, this rank's
    samples taken.  Backward the same with the gradients, each sample's
    taken from the first rank of a group of d2 that holds it (a group's
    ranks hold the same gradient)."""
    @staticmethod
    def forward(ctx, x, d1, d2):
        n, r = WORLD["size"], WORLD["rank"]
        parts = [torch.empty_like(x) for _ in range(n)]
        dist.all_gather(parts, x.contiguous())
        full = torch.cat(parts[::d1], 0)
        m = full.shape[0] * d2 // n
        ctx.d1, ctx.d2, ctx.rows = d1, d2, x.shape[0]
        return full[(r // d2) * m:(r // d2 + 1) * m].clone()

    @staticmethod
    def backward(ctx, g):
        n, r = WORLD["size"], WORLD["rank"]
        parts = [torch.empty_like(g) for _ in range(n)]
        dist.all_gather(parts, g.contiguous())
        full = torch.cat(parts[::ctx.d2], 0)
        return full[(r // ctx.d1) * ctx.rows:(r // ctx.d1 + 1) * ctx.rows].clone(), None, None


def to_samples(x, d1, d2):
    return _Samples.apply(x, d1, d2)


class Split(nn.Module):
    """A Conv2d or Linear split `mode` ("filter": output channels,
    "channel": input channels) over the d ranks of a group: it holds its
    rows (or columns) lo:hi of the weight, and the bias's rows (filter) or
    the whole bias (channel, added after the sum)."""

    def __init__(self, m, name, mode, d):
        super().__init__()
        conv = isinstance(m, nn.Conv2d)
        if conv and m.groups != 1:
            fail("%s: a grouped convolution is not split by this launcher yet" % name)
        width = m.weight.shape[0 if mode == "filter" else 1]
        if width % d:
            fail("%s: %d %s do not split %d ways" % (name, width, "outputs" if mode == "filter"
                                                      else "inputs", d))
        pos, k = WORLD["rank"] % d, width // d
        self.mode, self.d, self.conv, self.lo, self.hi = mode, d, conv, pos * k, (pos + 1) * k
        # the convolution's geometry (the module itself is not kept: its
        # whole weight would be a parameter of this rank)
        self.geometry = (m.stride, m.padding, m.dilation) if conv else None
        self.group = split_group(d, WORLD["rank"])
        w = m.weight.detach()
        self.weight = nn.Parameter((w[self.lo:self.hi] if mode == "filter"
                                    else w[:, self.lo:self.hi]).clone())
        b = m.bias.detach() if m.bias is not None else None
        self.bias = None if b is None else nn.Parameter(
            (b[self.lo:self.hi] if mode == "filter" else b).clone())

    def full_slice(self, name, full):
        """This rank's part of the whole layer's parameter `name`."""
        if name == "weight":
            return full[self.lo:self.hi] if self.mode == "filter" else full[:, self.lo:self.hi]
        return full[self.lo:self.hi] if self.mode == "filter" else full

    def op(self, x, w, b):
        if self.conv:
            return F.conv2d(x, w, b, *self.geometry)
        return F.linear(x, w, b)

    def forward(self, x):
        x = _Copy.apply(x, self.group)
        dim = 1 if self.conv else -1
        if self.mode == "filter":
            return _Gather.apply(self.op(x, self.weight, self.bias), self.group, self.d, dim)
        y = _Reduce.apply(self.op(x.narrow(dim, self.lo, self.hi - self.lo), self.weight, None),
                          self.group)
        if self.bias is not None:
            y = y + (self.bias.view(1, -1, 1, 1) if self.conv else self.bias)
        return y


def assignment(plan, gm):
    """What the plan decides for each module the traced graph calls: its
    target -> (mode, degree, field), `field` the plan key that decided.  A
    uniform filter or channel split (the mesh's last dimension) decides
    every module.  A per-layer plan's entry decides the modules at or under
    its module (the longest entry that contains a module wins; a module
    listed twice takes its first entry); modules no entry contains are not
    decided (they take their first input's degree)."""
    names, shape = plan["device_mesh"]["mesh_dim_names"], plan["device_mesh"]["mesh_shape"]
    targets = [n.target for n in gm.graph.nodes if n.op == "call_module"]
    if not plan.get("per_layer"):
        field = "device_mesh.mesh_shape[%d]" % (len(names) - 1)
        return {t: (names[-1], shape[-1], field) for t in targets}
    listed = {}
    for i, e in enumerate(plan["per_layer"]["modules"]):
        listed.setdefault(e["module"], (e["split"], e["degree"], "per_layer.modules[%d]" % i))
    out = {}
    for t in targets:
        parts = t.split(".")
        for k in range(len(parts), 0, -1):
            got = listed.get(".".join(parts[:k]))
            if got:
                out[t] = got
                break
    return out


def node_states(plan, gm):
    """(mode, degree) of the call_module nodes the plan decides (modules
    with parameters only: the others take their input's degree)."""
    decided = assignment(plan, gm)
    states = {}
    for node in gm.graph.nodes:
        if node.op == "call_module" and node.target in decided:
            if not plan.get("per_layer") or next(
                    gm.get_submodule(node.target).parameters(), None) is not None:
                states[node] = decided[node.target][:2]
    return states


def splits_input(mode, node):
    """Whether a channel split leaves this node whole: a convolution that
    reads the model's input is not split by channel (as oraclec prices
    it)."""
    return mode == "channel" and any(a.op == "placeholder" for a in node.all_input_nodes)


def split_model(plan, gm):
    """The traced model with its split nodes replaced by Split modules and
    a redistribution before every node whose input is held at another
    degree.  Returns it, the output's degree and, per parameter name, the
    degree of the node that holds it and its slice of the whole model's
    (None: held whole)."""
    states = node_states(plan, gm)
    if os.environ.get("ORACLEC_LAUNCH_FAULT", "").startswith("unsplit:"):
        # tests only: leave one module the plan splits whole, to show that
        # --check finds a rank holding other parameters than the plan says
        left = os.environ["ORACLEC_LAUNCH_FAULT"].split(":", 1)[1]
        states = {n: (("data", 1) if n.target == left else s) for n, s in states.items()}
    degree, params = {}, {}
    for node in list(gm.graph.nodes):
        if node.op == "placeholder":
            degree[node] = 1
            continue
        if node.op in ("output", "get_attr"):
            continue
        ins = [a for a in node.all_input_nodes if a in degree]
        mode, d = states.get(node, (None, degree[ins[0]] if ins else 1))
        whole = splits_input(mode, node)  # before its input is redistributed
        d = 1 if mode == "data" else d
        for a in ins:
            if degree[a] != d:
                with gm.graph.inserting_before(node):
                    moved = gm.graph.call_function(to_samples, (a, degree[a], d))
                node.replace_input_with(a, moved)
        degree[node] = d
        if node.op != "call_module":
            continue
        m = gm.get_submodule(node.target)
        split = (mode in ("filter", "channel") and d > 1 and isinstance(m, (nn.Conv2d, nn.Linear))
                 and not whole)
        for n, _ in m.named_parameters():
            params[node.target + "." + n] = (d, None)
        if split:
            sm = Split(m, node.target, mode, d)
            parent, _, leaf = node.target.rpartition(".")
            setattr(gm.get_submodule(parent) if parent else gm, leaf, sm)
            for n in ("weight", "bias"):
                if getattr(sm, n) is not None:
                    params[node.target + "." + n] = (d, sm)
    gm.graph.lint()
    gm.recompile()
    out = next(n for n in gm.graph.nodes if n.op == "output")
    return gm, degree[out.all_input_nodes[0]], params


def planned_params(plan, model, gm):
    """The parameters the plan gives each rank of a split plan, by name:
    their element count, read from the plan (each module's split and
    degree) and the whole model's shapes, not from the split model.  A
    Conv2d or Linear split by filter over d ranks holds 1/d of its weight
    and bias; by channel 1/d of its weight and the whole bias (a
    convolution that reads the model's input stays whole under channel);
    every other parameter is whole."""
    decided = assignment(plan, gm)
    reads_input = {n.target for n in gm.graph.nodes
                   if n.op == "call_module" and splits_input("channel", n)}
    want = {}
    for target in [n.target for n in gm.graph.nodes if n.op == "call_module"]:
        m = model.get_submodule(target)
        mode, d, _ = decided.get(target, ("data", 1, None))
        cut = (mode in ("filter", "channel") and d > 1 and isinstance(m, (nn.Conv2d, nn.Linear))
               and not (mode == "channel" and target in reads_input))
        for n, p in m.named_parameters():
            whole = p.numel()
            want[target + "." + n] = whole // d if cut and (n == "weight" or mode == "filter") \
                else whole
    for n, p in model.named_parameters():  # constants the graph reads (get_attr)
        want.setdefault(n, p.numel())
    return want


def held_error(held, want, why):
    """The first parameter this rank holds otherwise than `want` (name ->
    the elements the plan gives it) says, or None."""
    for n in sorted(set(held) | set(want)):
        if n not in want:
            return "holds %s (%d elements), which %s does not give this rank" % (
                n, held[n], why)
        if n not in held:
            return "does not hold %s (%d elements), which %s gives this rank" % (
                n, want[n], why)
        if held[n] != want[n]:
            return "holds %d elements of %s; %s gives this rank %d" % (held[n], n, why, want[n])
    return None


# ---- the parts a rank runs ------------------------------------------------

class Ctx:
    """What every part of a rank reads: the plan, the command line, the
    rank, its device, and the autocast it runs the forward under."""

    def __init__(self, plan, cfg, rank, device):
        self.plan, self.cfg, self.rank, self.device = plan, cfg, rank, device
        self.amp = {"float16": torch.float16, "bfloat16": torch.bfloat16}.get(cfg.autocast)
        # float16 autocast trains with a loss scaler (its scaling, the
        # gradients' unscaling and overflow check are the step's kernels)
        self.scaler = (torch.cuda.amp.GradScaler()
                       if self.amp == torch.float16 and device.type == "cuda" else None)

    def backward(self, loss):
        (self.scaler.scale(loss) if self.scaler else loss).backward()

    def step(self, opt):
        if self.scaler:
            self.scaler.step(opt)
            self.scaler.update()
        else:
            opt.step()

    def autocast(self):
        if self.amp is None:
            return contextlib.nullcontext()
        return torch.autocast(self.device.type, dtype=self.amp)

    def to(self, t):
        """The input on this rank's device, in the run's memory format."""
        t = t.to(self.device)
        if self.cfg.channels_last and t.dim() == 4:
            t = t.contiguous(memory_format=torch.channels_last)
        return t


def compare(name, got, want):
    if got is None and want is None:
        return None
    if got is None or want is None:
        return "%s: gradient %s, single process %s" % (name, "none" if got is None else "set",
                                                       "none" if want is None else "set")
    # fp32 tolerance on the whole tensor: the sums run in another order
    # (per shard, per micro-batch), so each element may differ by rounding
    # relative to the tensor's size, not its own
    err, size = (got - want).norm().item(), want.norm().item()
    if err > RTOL * size + ATOL:
        return "%s: differs from one process by %.3g (norm %.3g)" % (name, err, size)
    return None


class DataJob:
    """A data-parallel replica: DistributedDataParallel over the data
    ranks, on the rank's share of the batch."""

    def __init__(self, ctx, model, data_g, B):
        self.ctx, self.data_g = ctx, data_g
        self.model = model.to(ctx.device)
        if ctx.cfg.channels_last:
            self.model.to(memory_format=torch.channels_last)
        self.wrapped = self.wrap(self.model)
        self.replicas = len(data_g[1])
        self.share = B // self.replicas
        self.held = self.holds()
        self.modules = self.model
        self.pieces = self.replicas

    def wrap(self, model):
        ctx = self.ctx
        kw = {"device_ids": [ctx.device.index]} if ctx.device.type == "cuda" else {}
        return nn.parallel.DistributedDataParallel(model, process_group=self.data_g[0], **kw)

    def holds(self):
        return list(self.model.named_parameters())

    def inputs(self, x, y):
        lo = coords(self.ctx.plan, self.ctx.rank)["data"] * self.share
        return x[lo:lo + self.share], y[lo:lo + self.share]

    def step(self, x, y):
        with self.ctx.autocast():
            loss = F.cross_entropy(self.wrapped(x), y)
        # DDP averages the gradients over the replicas; FSDP reduce-scatters them
        self.ctx.backward(loss)
        return loss.detach()


class PipeJob:
    """A pipeline stage: the traced model's nodes from this rank's split
    point to the next, in the plan's schedule; with data replicas, the
    stage's gradients averaged over them."""

    def __init__(self, ctx, model, pipe_g, data_g, B):
        plan = ctx.plan
        self.ctx, self.pipe_g, self.data_g = ctx, pipe_g, data_g
        self.me = coords(plan, ctx.rank)["pipeline"]
        self.replicas = len(data_g[1]) if data_g else 1
        self.share = B // self.replicas
        if ctx.cfg.channels_last:
            model.to(memory_format=torch.channels_last)
        self.gm = torch.fx.symbolic_trace(traceable(model))
        self.stage = stages_of(self.gm, list(plan["pipeline"]["split_spec"]))
        # the stages that use each parameter (of the modules they call and
        # the constants they read)
        users = {}
        for node, s in self.stage.items():
            if node.op == "call_module":
                for n, _ in self.gm.get_submodule(node.target).named_parameters():
                    users.setdefault(node.target + "." + n, set()).add(s)
            elif node.op == "get_attr":
                users.setdefault(node.target, set()).add(s)
        named = dict(self.gm.named_parameters())
        self.shared = [n for n in sorted(users) if len(users[n]) > 1 and n in named]
        self.held = [(n, named[n]) for n in named if self.me in users.get(n, ())]
        self.users = users
        # this stage's modules and constants on its device (the rest of
        # the model, which other ranks run, stays where it was built)
        for node, s in self.stage.items():
            if s != self.me:
                continue
            if node.op == "call_module":
                self.gm.get_submodule(node.target).to(ctx.device)
            elif node.op == "get_attr":
                owner, _, leaf = node.target.rpartition(".")
                mod = self.gm.get_submodule(owner) if owner else self.gm
                if leaf in mod._parameters:
                    mod._parameters[leaf].data = mod._parameters[leaf].data.to(ctx.device)
                elif leaf in mod._buffers:
                    mod._buffers[leaf] = mod._buffers[leaf].to(ctx.device)
        for n in self.shared:  # summed over the pipeline group on the device
            named[n].data = named[n].data.to(ctx.device)
        self.modules = self.gm
        self.pieces = self.replicas * plan["pipeline"]["n_microbatches"]
        self.flight = (0, 0)

    def inputs(self, x, y):
        lo = (coords(self.ctx.plan, self.ctx.rank)["data"] if self.data_g else 0) * self.share
        return x[lo:lo + self.share], y[lo:lo + self.share]

    def step(self, x, y):
        loss, self.flight = pipeline_step(self.gm, self.ctx.plan, self.stage, self.me,
                                          self.pipe_g[1], x, y, self.share, self.ctx)
        named = dict(self.gm.named_parameters())
        mine = {n for n, _ in self.held}
        for n in self.shared:  # a parameter two stages use: its gradient summed
            p = named[n]
            g = p.grad if p.grad is not None else torch.zeros_like(p, device=self.ctx.device)
            dist.all_reduce(g, group=self.pipe_g[0])
            if n in mine:
                p.grad = g
        if self.data_g:  # the stage's gradients averaged over the replicas
            for _, p in self.held:
                if p.grad is not None:
                    dist.all_reduce(p.grad, group=self.data_g[0])
                    p.grad /= self.replicas
        return loss

    def planned(self, model):
        """The parameters the plan gives this stage and those it gives
        other stages only: a parameter belongs to the most specific module
        that module_names_per_stage lists (ViT's stage 0 lists "encoder" for
        the encoder's own position embedding, its blocks elsewhere), and to
        the stages that list it.  Parameters under no listed module
        (BatchNorm folded out of the export) are not judged.  None when the
        plan does not list modules."""
        per_stage = self.ctx.plan["pipeline"].get("module_names_per_stage")
        if not per_stage:
            return None
        listed = {}
        for s, mods in enumerate(per_stage):
            for m in mods:
                listed.setdefault(m, set()).add(s)
        mine, others = set(), set()
        for n, _ in model.named_parameters():
            parts = n.split(".")
            for k in range(len(parts) - 1, 0, -1):
                stages = listed.get(".".join(parts[:k]))
                if stages:
                    (mine if self.me in stages else others).add(n)
                    break
        return mine, others, {n for n, _ in self.held}


class SplitJob:
    """Shards of split layers: the traced model with its filter and
    channel layers split at their degrees (split_model), the rank's samples
    in, every gradient summed where its replicas are."""

    def __init__(self, ctx, model, B):
        self.ctx, self.B = ctx, B
        if ctx.cfg.channels_last:
            model.to(memory_format=torch.channels_last)
        # the unsplit graph, against which --check reads the plan
        self.traced = torch.fx.symbolic_trace(traceable(model)) if ctx.cfg.check else None
        self.gm, self.d_out, self.params = split_model(
            ctx.plan, torch.fx.symbolic_trace(traceable(model)))
        self.gm.to(ctx.device)
        self.held = list(self.gm.named_parameters())
        self.modules = self.gm

    def inputs(self, x, y):
        return x, y

    def step(self, x, y):
        """One forward and backward of the split model: this rank's
        samples in, the loss over its output's samples (the sum over each
        group's samples, each sample once per rank of the group, over the
        whole batch), then every gradient summed where its replicas are: a
        shard over the ranks at its position in every group, a whole
        parameter over all ranks (divided by the degree: a group's ranks
        computed the same)."""
        n, r, total = WORLD["size"], WORLD["rank"], self.B
        share = total // n
        rows = total * self.d_out // n
        ys = y[(r // self.d_out) * rows:(r // self.d_out + 1) * rows]
        with self.ctx.autocast():
            out = self.gm(x[r * share:(r + 1) * share])
            loss = F.cross_entropy(out, ys, reduction="sum") / total
        self.ctx.backward(loss)
        named = dict(self.gm.named_parameters())
        for name, (d, sm) in sorted(self.params.items()):
            p = named.get(name)
            if p is None:
                continue
            g = p.grad if p.grad is not None else torch.zeros_like(p)
            if sm is not None and not (name.endswith(".bias") and sm.mode == "channel"):
                dist.all_reduce(g, group=shard_group(d, r))
            else:
                dist.all_reduce(g)
                g /= d
            p.grad = g
        return loss.detach()


FSDP_PREFIXES = ("_fsdp_wrapped_module.", "_checkpoint_wrapped_module.")


def fsdp_name(name):
    """A parameter's name in the model, FSDP's wrapper prefixes dropped."""
    for p in FSDP_PREFIXES:
        name = name.replace(p, "")
    return name


def hybrid_groups(plan, rank):
    """HYBRID_SHARD's two process groups, (shard, replicate): the
    nproc_per_node consecutive ranks of this rank's node, and the ranks at
    its place on every node (every rank creates every group, in the same
    order)."""
    world, per_node = plan["world_size"], plan["nproc_per_node"]
    shard = replicate = None
    for k in range(world // per_node):
        g = dist.new_group(list(range(k * per_node, (k + 1) * per_node)))
        if rank // per_node == k:
            shard = g
    for pos in range(per_node):
        g = dist.new_group(list(range(pos, world, per_node)))
        if rank % per_node == pos:
            replicate = g
    return shard, replicate


class FsdpJob(DataJob):
    """FSDP over the data ranks (torch.distributed.fsdp's
    FullyShardedDataParallel, torch 2.x; its ShardingStrategy the plan's
    fsdp: FULL_SHARD and SHARD_GRAD_OP shard over every data rank,
    HYBRID_SHARD over the ranks of a node and replicates across nodes, the
    (shard, replicate) pair of process groups its process_group takes).
    The whole model is one FSDP unit (auto_wrap_policy None: the plan names
    no units; FSDP's size_based_auto_wrap_policy, at its default 10^8
    parameters, wraps no smaller model otherwise).  use_orig_params=True,
    so that each rank's parameters are views of its shard under their own
    names."""

    def wrap(self, model):
        from torch.distributed.fsdp import FullyShardedDataParallel, ShardingStrategy
        ctx, plan = self.ctx, self.ctx.plan
        group = (hybrid_groups(plan, ctx.rank) if plan["fsdp"] == "HYBRID_SHARD"
                 else self.data_g[0])
        kw = {"device_id": ctx.device} if ctx.device.type == "cuda" else {}
        return FullyShardedDataParallel(
            model, process_group=group, sharding_strategy=ShardingStrategy[plan["fsdp"]],
            use_orig_params=True, **kw)

    def holds(self):
        return [(fsdp_name(n), p) for n, p in self.wrapped.named_parameters()]

    def whole(self, grads):
        """The whole parameters (with grads, their whole gradients) inside:
        FSDP.summon_full_params, on every rank."""
        kw = {"with_grads": True} if grads else {}
        return type(self.wrapped).summon_full_params(self.wrapped, writeback=False, **kw)


def fsdp_shard(plan):
    """The ranks FSDP shards a parameter over: a node's for HYBRID_SHARD,
    else every rank."""
    return plan["nproc_per_node"] if plan["fsdp"] == "HYBRID_SHARD" else plan["world_size"]


def optimizer(plan, params, data_g):
    """SGD with momentum over the parameters this rank holds, sharded over
    the data ranks (ZeRO-1: each rank keeps and updates the momentum of its
    part, then broadcasts it) where the plan says so."""
    if plan.get("zero_redundancy_optimizer"):
        from torch.distributed.optim import ZeroRedundancyOptimizer
        return ZeroRedundancyOptimizer(params, optimizer_class=torch.optim.SGD,
                                       process_group=data_g[0], **SGD)
    return torch.optim.SGD(params, **SGD)


# ---- --check: one process --------------------------------------------------

def check_held(job, ctx, ref):
    """Whether this rank holds exactly the parameters the plan gives it."""
    held = {n: p.numel() for n, p in job.held}
    if isinstance(job, FsdpJob):  # a shard: at most its share of every element
        total = sum(p.numel() for p in ref.parameters())
        n = fsdp_shard(ctx.plan)
        most = -(-total // n)
        if sum(held.values()) > most:
            return "holds %d parameter elements; FSDP's shard over %d ranks holds at most " \
                   "%d of the model's %d" % (sum(held.values()), n, most, total)
        return None
    if isinstance(job, SplitJob):
        return held_error(held, planned_params(ctx.plan, ref, job.traced),
                          "the plan (its modules' splits and degrees)")
    if isinstance(job, DataJob):
        return held_error(held, {n: p.numel() for n, p in ref.named_parameters()},
                          "the plan (a replica holds every parameter)")
    got = job.planned(ref)
    if got is None:
        return None
    mine, others, names = got
    for n in sorted(mine - names):
        return "stage %d does not hold %s, which the plan's module_names_per_stage gives " \
               "it" % (job.me, n)
    for n in sorted(names & others):
        return "stage %d holds %s, which the plan's module_names_per_stage gives another " \
               "stage" % (job.me, n)
    return None


def check_grads(job, ctx, ref, x, y, B, loss):
    """Step 0 in one process on the whole batch, in the same pieces (each
    replica's share, each micro-batch; a split plan the whole batch), its
    loss and gradients against this rank's: the first difference, or
    None."""
    ref.zero_grad(set_to_none=True)
    if isinstance(job, SplitJob):
        rloss = F.cross_entropy(ref(x), y)
        rloss.backward()
        rloss = rloss.detach()
    else:
        rloss = torch.zeros((), device=ctx.device)
        for xs, ys in zip(x.chunk(job.pieces), y.chunk(job.pieces)):
            part = F.cross_entropy(ref(xs), ys) * (ys.numel() / B)
            part.backward()
            rloss += part.detach()
    if loss is not None and not torch.allclose(loss, rloss, rtol=RTOL, atol=ATOL):
        return "loss %.6f, single process %.6f" % (loss.item(), rloss.item())
    return check_params(job, ref, lambda p: p.grad, "")


def check_params(job, ref, value, suffix):
    if isinstance(job, FsdpJob):  # the whole parameters, gathered
        grads = suffix == ""
        try:
            ctxm = job.whole(grads)
        except TypeError:  # no with_grads (torch before 2.1): the step checks them
            return None
        with ctxm:
            held = [(fsdp_name(n), p) for n, p in job.wrapped.named_parameters()]
            return compare_held(held, job, ref, value, suffix)
    return compare_held(job.held, job, ref, value, suffix)


def compare_held(held, job, ref, value, suffix):
    whole = dict(ref.named_parameters())
    for n, p in held:
        want = value(whole[n])
        sm = job.params.get(n, (1, None))[1] if isinstance(job, SplitJob) else None
        if sm is not None and want is not None:
            want = sm.full_slice(n.rpartition(".")[2], want)
        e = compare(n + suffix, value(p), want)
        if e:
            return e
    return None


# ---- --time: memory --------------------------------------------------------

def _proc_status(key):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1]) * 1024
    return None


class CpuMemory:
    """A step's peak RSS growth on the CPU: glibc told to return every
    block of 128 KiB or more to the system when it is freed (mallopt's
    M_MMAP_THRESHOLD and M_TRIM_THRESHOLD) and the free memory it kept
    returned (malloc_trim), the kernel's peak-RSS mark reset (writing 5 to
    /proc/self/clear_refs), then the step: its VmHWM less the VmRSS before
    it.  None where any of that is not possible."""

    def __init__(self):
        self.ok, self.base = False, None
        try:
            self.libc = ctypes.CDLL(None)
            self.libc.mallopt(-3, 128 << 10)  # M_MMAP_THRESHOLD
            self.libc.mallopt(-1, 128 << 10)  # M_TRIM_THRESHOLD
            self.ok = True
        except (OSError, AttributeError):
            pass

    def start(self):
        if not self.ok:
            return
        gc.collect()
        self.libc.malloc_trim(0)
        try:
            with open("/proc/self/clear_refs", "w") as f:
                f.write("5")
            self.base = _proc_status("VmRSS")
        except OSError:
            self.ok = False

    def peak(self):
        if not self.ok or self.base is None:
            return None
        hwm = _proc_status("VmHWM")
        return None if hwm is None else max(0, hwm - self.base)


# ---- --trace ---------------------------------------------------------------

MODULE_RANGE = "oraclec.module::"
STEP_RANGE = "oraclec.step::"


class Ranges:
    """Profiler ranges named by module path, opened by a forward pre-hook
    and closed by a forward hook on every module (the root excepted)."""

    def __init__(self, root):
        self.stack, self.handles, self.paths = [], [], []
        fast = hasattr(torch.ops.profiler, "_record_function_enter_new")
        for path, m in root.named_modules():
            if not path:
                continue
            self.paths.append(path)
            name = MODULE_RANGE + path

            def pre(mod, inp, name=name):
                if fast:  # no tensor made for the handle (the old entry makes one)
                    self.stack.append(torch.ops.profiler._record_function_enter_new(name, None))
                else:
                    rf = torch.autograd.profiler.record_function(name)
                    rf.__enter__()
                    self.stack.append(rf)

            def post(mod, inp, out):
                if self.stack:
                    h = self.stack.pop()
                    if fast:
                        torch.ops.profiler._record_function_exit._RecordFunction(h)
                    else:
                        h.__exit__(None, None, None)
            self.handles += [m.register_forward_pre_hook(pre), m.register_forward_hook(post)]

    def remove(self):
        for h in self.handles:
            h.remove()


def trace_events(prof, rank):
    """The profile as Chrome trace events (docs/plans.md, "--trace"):
    steps, module ranges and operators, each operator with the module
    that ran it (its innermost module range; a backward operator, the
    module of the forward operator of the same sequence number)."""
    evs = [e for e in prof.events()]
    parent = {}
    for e in evs:
        for c in e.cpu_children:
            parent[c.id] = e
    def walk(e):
        """(module, phase) from e's ancestors, e included."""
        module = phase = None
        bwd = None
        a = e
        while a is not None:
            n = a.name
            if module is None and n.startswith(MODULE_RANGE):
                module = n[len(MODULE_RANGE):]
            if n.startswith("autograd::engine::evaluate_function:") and bwd is None:
                bwd = a
            if phase is None and n.startswith("Optimizer.step#"):
                phase = "optimizer"
            a = parent.get(a.id)
        return module, phase, bwd

    fwd = {}
    cpu = [e for e in evs if str(e.device_type).endswith("CPU")]
    info = {}
    for e in cpu:
        module, phase, bwd = walk(e)
        info[e.id] = (module, phase, bwd)
        if bwd is None and e.sequence_nr >= 0 and module is not None:
            fwd.setdefault((e.sequence_nr, e.thread), module)
    out = []
    for e in cpu:
        start, end = e.time_range.start, e.time_range.end
        ev = {"ph": "X", "pid": rank, "tid": e.thread, "ts": start, "dur": end - start}
        if e.name.startswith(STEP_RANGE):
            ev.update(name="ProfilerStep#" + e.name[len(STEP_RANGE):], cat="step",
                      args={"step": int(e.name[len(STEP_RANGE):])})
        elif e.name.startswith(MODULE_RANGE):
            path = e.name[len(MODULE_RANGE):]
            ev.update(name=path, cat="module", args={"module": path})
        else:
            module, phase, bwd = info[e.id]
            args = {}
            if e.sequence_nr >= 0:
                args["Sequence number"] = e.sequence_nr
            if bwd is not None:
                args["Fwd thread id"] = bwd.fwd_thread
                module = fwd.get((bwd.sequence_nr, bwd.fwd_thread))
                phase = "backward"
            elif phase is None:
                phase = "forward" if module is not None or e.sequence_nr >= 0 else "other"
            if module is not None:
                args["module"] = module
            args["phase"] = phase
            kernels = sum(k.duration for k in getattr(e, "kernels", []))
            if kernels:
                args["device_time_us"] = kernels
            ev.update(name=e.name, cat="op", args=args)
        out.append(ev)
    for e in evs:  # device kernels, where the profiler saw them
        if str(e.device_type).endswith("CPU"):
            continue
        start, end = e.time_range.start, e.time_range.end
        out.append({"ph": "X", "pid": rank, "tid": "device %s" % e.device_index, "ts": start,
                    "dur": end - start, "name": e.name, "cat": "kernel", "args": {}})
    out.sort(key=lambda v: (v["ts"], -v["dur"]))
    return out


def write_atomic(path, write):
    """Writes `path` through a temporary beside it, renamed over it."""
    d = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=".oraclec.tmp", dir=d)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as f:
            write(f)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def write_trace(prof, path, ctx, steps, ranges, samples):
    """The trace; `samples`: what each of rank 0's modules takes per step
    (its replica's share of the batch, all its micro-batches), None where
    that differs between modules (a split plan's degrees), so that a
    reader can make the times per sample (oraclec --profile)."""
    events = trace_events(prof, ctx.rank)
    meta = {"trace": 1, "rank": ctx.rank, "model": ctx.cfg.model,
            "device": str(ctx.device), "torch": torch.__version__,
            "steps": steps, "modules": ranges.paths}
    if samples is not None:
        meta["batch"] = samples
    doc = {"traceEvents": events, "displayTimeUnit": "ms", "oraclec": meta}
    write_atomic(path, lambda f: json.dump(doc, f, separators=(",", ":")))


# ---- a rank --------------------------------------------------------------

def make_job(ctx, model, B):
    plan, rank = ctx.plan, ctx.rank
    if splits(plan):
        return SplitJob(ctx, model, B), None
    names = plan["device_mesh"]["mesh_dim_names"]
    groups = {}
    data_g = group_of(plan, rank, "data", groups) if "data" in names else None
    pipe_g = group_of(plan, rank, "pipeline", groups) if "pipeline" in names else None
    if pipe_g:
        return PipeJob(ctx, model, pipe_g, data_g, B), data_g
    if plan.get("fsdp"):
        return FsdpJob(ctx, model, data_g, B), data_g
    return DataJob(ctx, model, data_g, B), data_g


def run_rank(rank, cfg, plan, port):
    os.environ["MASTER_ADDR"], os.environ["MASTER_PORT"] = "127.0.0.1", str(port)
    world = plan["world_size"]
    if cfg.device == "cuda":
        torch.cuda.set_device(rank)
        device, backend = torch.device("cuda", rank), "nccl"
    else:
        device, backend = torch.device("cpu"), "gloo"
    # the plan's TF32 switches, exactly (cfg.tf32: cuDNN's, matmul's; both
    # off for --check: fp32 tolerance); they act on a GPU only
    torch.backends.cudnn.allow_tf32, torch.backends.cuda.matmul.allow_tf32 = cfg.tf32
    torch.set_num_threads(cfg.threads)
    dist.init_process_group(backend, rank=rank, world_size=world,
                            timeout=datetime.timedelta(seconds=cfg.timeout))
    WORLD.update(rank=rank, size=world, groups={})
    ctx = Ctx(plan, cfg, rank, device)
    model = prepared(build_model(cfg.model, cfg.shape[-1]), plan, rank, cfg.check)
    ref = None
    if cfg.check:
        ref = deterministic(build_model(cfg.model, cfg.shape[-1])).to(device)
        if cfg.channels_last:
            ref.to(memory_format=torch.channels_last)
    B = cfg.batch
    x, y = batch(B, cfg.shape, cfg.classes)
    x, y = ctx.to(x), y.to(device)
    job, data_g = make_job(ctx, model, B)
    xl, yl = job.inputs(x, y)
    opt = optimizer(plan, [p for _, p in job.held], data_g)
    errors = []
    if cfg.check:
        e = check_held(job, ctx, ref) or check_sync_bn(model, plan, rank)
        if e:
            errors.append(e)
    sync = (lambda: torch.cuda.synchronize(device)) if device.type == "cuda" else (lambda: None)
    nsteps = cfg.warmup + cfg.time if cfg.time else cfg.steps
    first_timed = cfg.warmup if cfg.time else nsteps
    traced = set()
    if cfg.trace and rank == 0:
        traced = set(range(first_timed, nsteps)) if cfg.time else {nsteps - 1}
    times, prof, ranges, peak = [], None, None, None

    def one_step(i):
        job.modules.zero_grad(set_to_none=True)
        loss = job.step(xl, yl)
        if cfg.check and i == 0:
            if loss is not None and isinstance(job, SplitJob):
                dist.all_reduce(loss)
                loss /= job.d_out
            elif loss is not None and data_g:  # the replicas' mean: the batch mean
                dist.all_reduce(loss, group=data_g[0])
                loss /= len(data_g[1])
            if not errors or isinstance(job, FsdpJob):  # (FSDP's: collectives)
                e = check_grads(job, ctx, ref, x, y, B, loss)
                if e:
                    errors.append(e)
        ctx.step(opt)
        if cfg.check and i == 0 and (not errors or isinstance(job, FsdpJob)):
            # the step too: every parameter after it
            torch.optim.SGD(ref.parameters(), **SGD).step()
            e = check_params(job, ref, lambda p: p.detach(), " after the step")
            if e:
                errors.append(e)

    for i in range(nsteps):
        if i in traced and prof is None:
            ranges = Ranges(job.modules)
            acts = [torch.profiler.ProfilerActivity.CPU]
            if device.type == "cuda":
                acts.append(torch.profiler.ProfilerActivity.CUDA)
            prof = torch.profiler.profile(activities=acts)
            prof.__enter__()
        if cfg.time:
            sync()
            dist.barrier()
            if i == first_timed and device.type == "cuda":
                torch.cuda.reset_peak_memory_stats(device)
        t0 = time.perf_counter()
        if i in traced:
            with torch.autograd.profiler.record_function(STEP_RANGE + str(i)):
                one_step(i)
        else:
            one_step(i)
        sync()
        if i >= first_timed:
            times.append(time.perf_counter() - t0)
    if prof is not None:
        prof.__exit__(None, None, None)
        ranges.remove()
        samples = None if isinstance(job, SplitJob) else int(xl.shape[0])
        write_trace(prof, cfg.trace, ctx, sorted(traced), ranges, samples)
        prof = ranges = None  # its events freed before the memory step
    if cfg.time:
        if device.type == "cuda":
            peak = torch.cuda.max_memory_allocated(device)
        else:  # one more step, its memory measured (CpuMemory)
            mem = CpuMemory()
            job.modules.zero_grad(set_to_none=True)
            dist.barrier()
            mem.start()
            one_step(nsteps)
            peak = mem.peak()
    state = None
    if plan.get("zero_redundancy_optimizer"):  # the elements whose momentum it keeps
        state = sum(p.numel() for g in opt.optim.param_groups for p in g["params"])
    dist.barrier()
    dist.destroy_process_group()
    return {"error": errors[0] if errors else "",
            "stage": job.me if isinstance(job, PipeJob) else None,
            "flight": job.flight if isinstance(job, PipeJob) else None,
            "state": state, "held": sum(p.numel() for _, p in job.held),
            "times": times, "peak": peak,
            "tf32": [torch.backends.cudnn.allow_tf32, torch.backends.cuda.matmul.allow_tf32]}


# linux/prctl.h: PR_SET_PDEATHSIG, a signal to this process when its parent ends
PR_SET_PDEATHSIG = 1


def stop_with_launcher(launcher):
    """SIGTERM to this rank when the launcher's process ends, however it
    ends (SIGKILL too: prctl(PR_SET_PDEATHSIG)), so that no rank outlives
    it; where the launcher ended before that was set, this rank ends now."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
    except (OSError, AttributeError):  # not Linux: the launcher's stop() only
        pass
    if os.getppid() != launcher:
        os._exit(1)


def rank_main(rank, cfg, plan, port, outdir):
    """A rank: its result written to OUTDIR/RANK.json (and rank 0's trace
    to cfg.trace, in OUTDIR too: the launcher puts it in place); on an
    error or a signal (SIGINT, SIGTERM, SIGHUP raise Interrupted, so that
    a temporary being written is removed), its one-line reason (and the
    time it stopped: the first rank to stop says why) and exit status 1,
    which stops the other ranks."""
    def put(result):
        path = os.path.join(outdir, "%d.json" % rank)
        with open(path + ".tmp", "w") as f:
            json.dump(result, f)
        os.replace(path + ".tmp", path)
    try:
        stop_with_launcher(cfg.launcher)
        with signals_raise():
            result = run_rank(rank, cfg, plan, port)
        put(result)
    except BaseException as e:  # noqa: B902 -- a rank never prints a traceback
        try:
            put({"error": one_line(e), "failed": time.time()})
        finally:
            os._exit(1)


def results_of(outdir):
    """The ranks' results, rank -> dict, of those that wrote one."""
    out = {}
    for f in os.listdir(outdir):
        if f.endswith(".json") and f[:-5].isdigit():
            with open(os.path.join(outdir, f)) as fh:
                out[int(f[:-5])] = json.load(fh)
    return out


def timing(results, world):
    """The step time: per step the slowest rank's, then the median over
    steps (and the fastest and slowest step)."""
    per_step = [max(results[r]["times"][i] for r in range(world))
                for i in range(len(results[0]["times"]))]
    return statistics.median(per_step), min(per_step), max(per_step)


def stderr(msg):
    sys.stderr.write(msg + "\n")
