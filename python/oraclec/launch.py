"""oraclec.launch -- run the job an oraclec PyTorch plan describes, with the
PyTorch that is installed (torch >= 1.13; no torch.distributed.pipelining
needed), and with --check verify that it computes what one process does.

    python3 -m oraclec.launch --plan PLAN.json --model torchvision:NAME \
        [--steps K] [--check] [--batch B] [--image-size S]

It starts the plan's world_size ranks as local processes.  Without a GPU
they run on the CPU with the gloo backend (NCCL with one GPU per rank
otherwise).  The plan's device mesh says what each rank does:

  data      DistributedDataParallel over the data ranks, each on its share
            of the batch
  pipeline  the model traced with torch.fx and cut where the plan's
            split_spec says a stage begins (every node of the graph in
            exactly one stage; every value a later stage uses is sent on,
            skip connections included); the plan's schedule on
            torch.distributed isend/recv: GPipe (every forward, then every
            backward) or 1F1B (PipeDream-Flush: stage s of S runs S-s-1
            forwards, then a forward and a backward in turn); a parameter
            used by two stages is named and its gradient summed over them.
            Under the plan's "checkpoint" (torchgpipe's Pipe) the
            checkpointed micro-batches keep only their input and run their
            forward again before their backward.  It prints how many
            micro-batches each stage kept at once, in flight and whole.
  ZeRO-1    with "zero_redundancy_optimizer": the optimizer state sharded
            over the data ranks (ZeroRedundancyOptimizer); it prints the
            parameter elements whose state each rank keeps.  FSDP plans
            (--zero 2 and 3) are refused: not run yet.
  filter, channel, per_layer
            the traced model's Conv2d and Linear layers split over groups
            of consecutive ranks (by output channels: rows of the weight,
            outputs all-gathered; by input channels: columns, partial
            outputs all-reduced), each node at the plan's degree, the
            activations redistributed between degrees (see "filter and
            channel splits" below); it prints the parameters each rank
            holds.

Every rank then takes an SGD step (lr 0.01, momentum 0.9) on the
parameters it holds.

With --check, each rank also computes one step of the whole model in one
process on the whole batch, in the same pieces (each replica's share, each
micro-batch, accumulated), and compares the loss (the last pipeline stage,
or every data rank), the gradient of every parameter it holds and the
parameter after the step, to fp32 tolerance (the norm of the difference within 1e-4 of the gradient's); the
exit status is 0 when they agree, 1 with the first difference.  BatchNorm
runs on its running statistics and dropout is off for the check: batch
statistics of a micro-batch differ from the whole batch's by design, not by
the plan.
"""
import argparse
import json
import os
import socket
import sys

import torch
import torch.distributed as dist
import torch.fx
import torch.multiprocessing as mp
import torch.nn as nn
import torch.nn.functional as F

RTOL, ATOL = 1e-4, 1e-5
# the step every rank (and the one-process reference) takes
SGD = {"lr": 0.01, "momentum": 0.9}


def fail(msg):
    sys.exit("oraclec.launch: " + msg)


def load_plan(path):
    with open(path, encoding="utf-8") as f:
        plan = json.load(f)
    if plan.get("plan") != "pytorch":
        fail("%s: not a PyTorch plan (oraclec --plan pytorch)" % path)
    return plan


def build_model(spec, image_size):
    if not spec.startswith("torchvision:"):
        fail("--model %s: only torchvision:NAME models are supported" % spec)
    import torchvision
    name = spec.split(":", 1)[1]
    ctor = getattr(torchvision.models, name, None)
    if ctor is None:
        fail("--model %s: torchvision has no model %s" % (spec, name))
    torch.manual_seed(0)
    # a vision transformer is built for the image size (its position
    # embedding has one entry per patch); the plan's stages do not depend
    # on it
    kw = {"image_size": image_size} if name.startswith("vit_") else {}
    return ctor(weights=None, **kw)


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


def batch(n, size, classes=1000):
    g = torch.Generator().manual_seed(1)
    return torch.randn(n, 3, size, size, generator=g), torch.randint(0, classes, (n,), generator=g)


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
    shape, names = plan["device_mesh"]["mesh_shape"], plan["device_mesh"]["mesh_dim_names"]
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
        fail("split point %s is not a module the traced model calls" % points[cur])
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


def send(values, dst, group_rank, pending):
    """Sends each value (its rank and shape, then its data) without
    waiting: 1F1B sends an activation on while the next stage sends a
    gradient back, and two blocking sends would wait for each other.  The
    requests and their buffers are kept in `pending` until waited on."""
    for v in values:
        if not torch.is_tensor(v):
            fail("a value crossing a stage boundary is not a tensor (%r)" % (v,))
        meta = torch.tensor([v.dim()] + list(v.shape), dtype=torch.long)
        for t in (torch.tensor([meta.numel()], dtype=torch.long), meta, v.detach().contiguous()):
            pending.append((dist.isend(t, group_rank[dst]), t))


def recv(count, src, group_rank):
    out = []
    for _ in range(count):
        n = torch.zeros(1, dtype=torch.long)
        dist.recv(n, group_rank[src])
        meta = torch.zeros(int(n.item()), dtype=torch.long)
        dist.recv(meta, group_rank[src])
        t = torch.zeros(tuple(meta[1:].tolist()))
        dist.recv(t, group_rank[src])
        out.append(t)
    return out


def schedule_order(plan, S, M, me):
    """The order in which stage `me` of S runs its M micro-batches' forward
    ("F", m) and backward ("B", m) passes: GPipe every forward, then every
    backward in reverse; 1F1B (PipeDream-Flush) S - me - 1 forwards, then
    one forward and one backward in turn, then the backwards left, so that
    at most S - me micro-batches are in flight."""
    if pp_schedule(plan) == "Schedule1F1B":
        warm = min(S - me - 1, M)
        order = [("F", m) for m in range(warm)]
        for m in range(warm, M):
            order += [("F", m), ("B", m - warm)]
        return order + [("B", m) for m in range(M - warm, M)]
    return [("F", m) for m in range(M)] + [("B", m) for m in reversed(range(M))]


def pp_schedule(plan):
    name = plan["pipeline"]["schedule"]
    if name not in ("ScheduleGPipe", "Schedule1F1B"):
        fail("pipeline schedule %s is not run by this launcher yet (ScheduleGPipe, "
             "Schedule1F1B)" % name)
    return name


def pipeline_step(gm, plan, me, members, x, y, total):
    """One step of this rank's stage over the micro-batches, in the plan's
    schedule.  Micro-batches the plan's "checkpoint" names (torchgpipe's
    Pipe: every one but the last for "except_last", all for "always") run
    their forward without a graph, keep only their input, and run it again
    before their backward.  Returns the summed loss on the last stage
    (else None), each node's stage, and the micro-batches the stage held
    at once in flight and whole (with their graph)."""
    pp = plan["pipeline"]
    split = list(pp["split_spec"])
    S, M = len(split) + 1, pp["n_microbatches"]
    ckpt = {"never": 0, "except_last": M - 1, "always": M}.get(pp.get("checkpoint", "never"))
    if ckpt is None:
        fail("pipeline checkpoint %s is not one of never, except_last, always" % pp["checkpoint"])
    stage = stages_of(gm, split)
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
                          for v in recv(len(ins), me - 1, members)]
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
            out.backward()
        else:
            grads = recv(len(out), me + 1, members)
            pairs = [(o, g) for o, g in zip(out, grads) if o.requires_grad]
            torch.autograd.backward([o for o, _ in pairs], [g for _, g in pairs])
        if me > 0:
            send([i.grad if i.grad is not None else torch.zeros_like(i) for i in inputs],
                 me - 1, members, pending)
    for work, _ in pending:
        work.wait()
    return loss_sum, stage, (peak, whole)


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


def node_states(plan, gm):
    """(mode, degree) of the call_module nodes the plan decides: every
    module under a uniform filter or channel split (the mesh's last
    dimension), each module with parameters as the per-layer assignment
    lists it.  Nodes it leaves out take their first input's degree."""
    names, shape = plan["device_mesh"]["mesh_dim_names"], plan["device_mesh"]["mesh_shape"]
    states = {}
    if plan.get("per_layer"):
        listed = {}
        for e in plan["per_layer"]["modules"]:
            listed.setdefault(e["module"], (e["split"], int(e["degree"])))
        for node in gm.graph.nodes:
            if node.op == "call_module" and node.target in listed:
                if next(gm.get_submodule(node.target).parameters(), None) is not None:
                    states[node] = listed[node.target]
        return states
    mode = names[-1]
    for node in gm.graph.nodes:
        if node.op == "call_module":
            states[node] = (mode, shape[-1])
    return states


def split_model(plan, gm):
    """The traced model with its split nodes replaced by Split modules and
    a redistribution before every node whose input is held at another
    degree.  Returns it, the output's degree and, per parameter name, the
    degree of the node that holds it and its slice of the whole model's
    (None: held whole)."""
    states = node_states(plan, gm)
    degree, params = {}, {}
    for node in list(gm.graph.nodes):
        if node.op == "placeholder":
            degree[node] = 1
            continue
        if node.op in ("output", "get_attr"):
            continue
        ins = [a for a in node.all_input_nodes if a in degree]
        reads_input = any(a.op == "placeholder" for a in ins)
        mode, d = states.get(node, (None, degree[ins[0]] if ins else 1))
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
                 and not (mode == "channel" and reads_input))
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


def split_step(plan, model, x, y, total):
    """One forward and backward of the split model: this rank's samples in,
    the loss over its output's samples (the sum over each group's samples,
    each sample once per rank of the group, over the whole batch), then
    every gradient summed where its replicas are: a shard over the ranks at
    its position in every group, a whole parameter over all ranks (divided
    by the degree: a group's ranks computed the same)."""
    gm, d_out, params = split_model(plan, torch.fx.symbolic_trace(model))
    n, r = WORLD["size"], WORLD["rank"]
    share = total // n
    out = gm(x[r * share:(r + 1) * share])
    rows = total * d_out // n
    ys = y[(r // d_out) * rows:(r // d_out + 1) * rows]
    loss = F.cross_entropy(out, ys, reduction="sum") / total
    loss.backward()
    named = dict(gm.named_parameters())
    for name, (d, sm) in sorted(params.items()):
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
    loss = loss.detach()
    dist.all_reduce(loss)
    return gm, loss / d_out, params


# ---- a rank --------------------------------------------------------------

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


def stage_params(gm, stage, me, group):
    """The parameters stage `me` holds (those of the modules it calls and
    the constants it reads), by name; a parameter two stages use has its
    gradient summed over the pipeline group (named in the error when the
    sum cannot be formed)."""
    users = {}
    for node, s in stage.items():
        if node.op == "call_module":
            for n, _ in gm.get_submodule(node.target).named_parameters():
                users.setdefault(node.target + "." + n, set()).add(s)
        elif node.op == "get_attr":
            users.setdefault(node.target, set()).add(s)
    named = dict(gm.named_parameters())
    for n in sorted(users):
        if len(users[n]) > 1 and n in named:
            p = named[n]
            g = p.grad if p.grad is not None else torch.zeros_like(p)
            dist.all_reduce(g, group=group)
            p.grad = g
    return [(n, named[n]) for n in named if me in users.get(n, ())]


def splits(plan):
    """Whether the plan splits layers (filter, channel; uniform or per
    layer)."""
    names = plan["device_mesh"]["mesh_dim_names"]
    return bool(plan.get("per_layer")) or any(d in ("filter", "channel") for d in names)


def supported(plan):
    """Refuses, before any process starts, what the launcher does not run."""
    names = plan["device_mesh"]["mesh_dim_names"]
    for d in names:
        if d not in ("data", "pipeline", "filter", "channel"):
            fail("mesh dimension %s is not run by this launcher yet (data, pipeline, filter, "
                 "channel)" % d)
    if splits(plan):
        if "pipeline" in names:
            fail("a pipeline with filter or channel splits (dpf, dpc) is not run by this "
                 "launcher yet")
        if names[-1] not in ("filter", "channel", "data") or (len(names) > 1 and names[0] != "data"):
            fail("the split must be the mesh's innermost dimension (model-inner nesting)")
        for e in (plan.get("per_layer") or {}).get("modules", []):
            if e["split"] not in ("data", "filter", "channel"):
                fail("module %s is split by %s, which this launcher does not run yet" %
                     (e["module"], e["split"]))
        if plan.get("fsdp") or plan.get("zero_redundancy_optimizer"):
            fail("ZeRO and FSDP with filter or channel splits are not run by this launcher yet")
    if plan.get("fsdp"):
        fail("the plan shards with FSDP (%s), which this launcher does not run yet "
             "(ZeRO-1's ZeroRedundancyOptimizer it does)" % plan["fsdp"])
    if plan.get("zero_redundancy_optimizer") and names != ["data"]:
        fail("ZeRO-1 is run over data parallelism alone")
    if plan.get("pipeline"):
        pp_schedule(plan)


def optimizer(plan, params, data_g):
    """SGD with momentum over the parameters this rank holds, sharded over
    the data ranks (ZeRO-1: each rank keeps and updates the momentum of its
    part, then broadcasts it) where the plan says so."""
    if plan.get("zero_redundancy_optimizer"):
        from torch.distributed.optim import ZeroRedundancyOptimizer
        return ZeroRedundancyOptimizer(params, optimizer_class=torch.optim.SGD,
                                       process_group=data_g[0], **SGD)
    return torch.optim.SGD(params, **SGD)


def split_main(args, plan):
    """A plan that splits layers: one step (and with --check the one-process
    comparison of the loss, every parameter's gradient -- a shard against
    its slice of the whole layer's -- and the step)."""
    world = plan["world_size"]
    model = deterministic(build_model(args.model, args.image_size))
    B = args.batch or world
    x, y = batch(B, args.image_size)
    if B % world:
        fail("--batch %d does not split over %d ranks" % (B, world))
    gm, loss, params = split_step(plan, model, x, y, B)
    errors = []
    if args.check:
        ref = deterministic(build_model(args.model, args.image_size))
        rloss = F.cross_entropy(ref(x), y)
        rloss.backward()
        if not torch.allclose(loss, rloss.detach(), rtol=RTOL, atol=ATOL):
            errors.append("loss %.6f, single process %.6f" % (loss.item(), rloss.item()))
        whole = dict(ref.named_parameters())
        for n, p in gm.named_parameters():
            d, sm = params.get(n, (1, None))
            want = whole[n].grad
            e = compare(n, p.grad, sm.full_slice(n.rpartition(".")[2], want) if sm else want)
            if e:
                errors.append(e)
                break
    opt = torch.optim.SGD(gm.parameters(), **SGD)
    opt.step()
    if args.check and not errors:
        torch.optim.SGD(ref.parameters(), **SGD).step()
        for n, p in gm.named_parameters():
            d, sm = params.get(n, (1, None))
            want = whole[n].detach()
            e = compare(n + " after the step", p.detach(),
                        sm.full_slice(n.rpartition(".")[2], want) if sm else want)
            if e:
                errors.append(e)
                break
    held = sum(p.numel() for p in gm.parameters())
    return errors, held


def rank_main(rank, args, plan, port, results):
    os.environ["MASTER_ADDR"], os.environ["MASTER_PORT"] = "127.0.0.1", str(port)
    world = plan["world_size"]
    dist.init_process_group("gloo", rank=rank, world_size=world)
    torch.set_num_threads(1)
    WORLD.update(rank=rank, size=world, groups={})
    if splits(plan):
        errors, held = split_main(args, plan)
        results[rank] = (errors[0] if errors else "", None, None, None, held)
        dist.barrier()
        dist.destroy_process_group()
        return
    names = plan["device_mesh"]["mesh_dim_names"]
    c = coords(plan, rank)
    groups = {}
    data_g = group_of(plan, rank, "data", groups) if "data" in names else None
    pipe_g = group_of(plan, rank, "pipeline", groups) if "pipeline" in names else None
    model = deterministic(build_model(args.model, args.image_size))
    ref = deterministic(build_model(args.model, args.image_size)) if args.check else None
    replicas = len(data_g[1]) if data_g else 1
    B = args.batch or replicas * (plan["pipeline"]["n_microbatches"] if plan.get("pipeline") else 1)
    x, y = batch(B, args.image_size)
    errors, peak, opt = [], 0, None
    share = B // replicas
    lo = (c["data"] if data_g else 0) * share
    xl, yl = x[lo:lo + share], y[lo:lo + share]
    for step in range(args.steps):
        model.zero_grad(set_to_none=True)
        if pipe_g:
            gm = torch.fx.symbolic_trace(traceable(model))
            loss, stage, peak = pipeline_step(gm, plan, c["pipeline"], pipe_g[1], xl, yl, share)
            params = stage_params(gm, stage, c["pipeline"], pipe_g[0])
        else:
            ddp = nn.parallel.DistributedDataParallel(model, process_group=data_g[0])
            loss = F.cross_entropy(ddp(xl), yl)
            loss.backward()  # DDP averages the gradients over the replicas
            loss = loss.detach()
            params = list(model.named_parameters())
        if pipe_g and data_g:  # the stage's gradients averaged over the replicas
            for _, p in params:
                if p.grad is not None:
                    dist.all_reduce(p.grad, group=data_g[0])
                    p.grad /= replicas
        if loss is not None and data_g:  # the replicas' mean: the batch mean
            dist.all_reduce(loss, group=data_g[0])
            loss /= replicas
        if opt is None:
            opt = optimizer(plan, [p for _, p in params], data_g)
        if args.check and step == 0:
            # the same batch in one process, in the same pieces (each
            # replica's share, each micro-batch), so that the comparison
            # sees the plan, not the order of fp32 sums in another batching
            ref.zero_grad(set_to_none=True)
            rloss = torch.zeros(())
            M = plan["pipeline"]["n_microbatches"] if pipe_g else 1
            for xs, ys in zip(x.chunk(replicas * M), y.chunk(replicas * M)):
                part = F.cross_entropy(ref(xs), ys) * (ys.numel() / B)
                part.backward()
                rloss += part.detach()
            rgrads = dict(ref.named_parameters())
            if loss is not None and not torch.allclose(loss, rloss.detach(), rtol=RTOL,
                                                       atol=ATOL):
                errors.append("loss %.6f, single process %.6f" % (loss.item(), rloss.item()))
            for n, p in params:
                e = compare(n, p.grad, rgrads[n].grad)
                if e:
                    errors.append(e)
                    break
        opt.step()
        if args.check and step == 0:  # the step too: every parameter after it
            torch.optim.SGD(ref.parameters(), **SGD).step()
            for n, p in params:
                e = compare(n + " after the step", p.detach(), rgrads[n].detach())
                if e:
                    errors.append(e)
                    break
    state = None
    if plan.get("zero_redundancy_optimizer"):  # the elements whose momentum it keeps
        state = sum(p.numel() for g in opt.optim.param_groups for p in g["params"])
    results[rank] = (errors[0] if errors else "",
                     c["pipeline"] if pipe_g else None, peak if pipe_g else None, state, None)
    dist.barrier()
    dist.destroy_process_group()


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python3 -m oraclec.launch",
                                 description="Run an oraclec PyTorch plan on local processes.")
    ap.add_argument("--plan", required=True, help="the plan (oraclec --plan pytorch)")
    ap.add_argument("--model", required=True, help="torchvision:NAME")
    ap.add_argument("--steps", type=int, default=1)
    ap.add_argument("--check", action="store_true",
                    help="compare loss and gradients with one process")
    ap.add_argument("--batch", type=int, default=0,
                    help="samples per step (default: one per micro-batch and replica)")
    ap.add_argument("--image-size", type=int, default=224)
    args = ap.parse_args(argv)
    plan = load_plan(args.plan)
    supported(plan)
    results = mp.Manager().dict()
    try:
        mp.spawn(rank_main, args=(args, plan, free_port(), results), nprocs=plan["world_size"],
                 join=True)
    except mp.ProcessExitedException as e:  # the rank said why (above)
        fail("a rank stopped: %s" % e)
    bad = [(r, v[0]) for r, v in sorted(results.items()) if v[0]]
    if bad:
        print("rank %d: %s" % bad[0])
        return 1
    flight = {v[1]: v[2] for v in results.values() if v[1] is not None}
    if splits(plan):  # the parameter elements each rank holds
        print("parameters per rank (elements): %s" %
              " ".join(str(results[r][4]) for r in sorted(results)))
    if flight:  # the activations each stage kept at once, in micro-batches
        print("micro-batches in flight per stage: %s" %
              " ".join(str(flight[s][0]) for s in sorted(flight)))
        print("micro-batches whole per stage: %s" %
              " ".join(str(flight[s][1]) for s in sorted(flight)))
    if plan.get("zero_redundancy_optimizer"):  # ZeRO-1: a part of the state each
        state = [results[r][3] for r in sorted(results)]
        print("optimizer state per rank (parameter elements): %s of %d" %
              (" ".join(map(str, state)), sum(state)))
    if args.check:
        print("ok: %d ranks agree with one process (loss, every gradient, the step)" %
              plan["world_size"])
    return 0


if __name__ == "__main__":
    sys.exit(main())
