"""oraclec.launch -- run the job an oraclec PyTorch plan describes, with the
PyTorch that is installed (torch >= 1.13 and torchvision; no
torch.distributed.pipelining needed), and with --check verify that it
computes what one process does, with --time time it.

    PYTHONPATH=python python3 -m oraclec.launch --plan PLAN.json \
        --model torchvision:NAME|FILE.py:CALLABLE [--steps K] [--check] [--batch B] \
        [--image-size S] [--device D] [--channels-last] \
        [--time K [--warmup W] [--out M.csv]] [--trace FILE] [--validate-only]

(from a clone's top directory; `make install` puts the package where the
configured python finds it, and then `python3 -m oraclec.launch` runs from
anywhere.)

The plan is checked before anything starts (oraclec.planschema: the file,
its JSON, every key's type and range, world_size against the device
mesh, the pipeline's micro-batches against the batch; then, with torch,
world_size against this machine and the plan's module names against the
model), and so are the outputs: --out, its M.models folder and --trace must
be creatable, no output may be an input (the plan, the model's file) or
another output, and an existing output must be a regular file (a FIFO is
refused, never replaced).

Exit status: 0 the run (or the check) succeeded; 1 the plan, a file or the
run failed (`oraclec.launch: PLAN: FIELD: ...`, `oraclec.launch: rank 1:
...`, or with --check the first difference); 2 the command line is wrong;
128 + N when signal N (SIGINT, SIGTERM, SIGHUP) stopped it: its ranks are
stopped with it, its temporary folder and every temporary output removed,
nothing written.  Every failure is one line on stderr, its values escaped
(\\xNN) as oraclec escapes them, an option's value cut at 64 bytes.

It starts the plan's world_size ranks as local processes on the device
type the plan names (device_mesh.device_type): cuda, one GPU per rank with
NCCL, or the CPU with gloo, each rank with its share of the cores
(torch.set_num_threads(cores // world_size), at least 1).  A cuda plan on a
machine with fewer GPUs than ranks runs on the CPU, saying so once on
stderr.  The plan's device mesh says what each rank does:

  data      DistributedDataParallel over the data ranks, each on its share
            of the batch; with the plan's fsdp (FULL_SHARD, SHARD_GRAD_OP,
            HYBRID_SHARD) FSDP's FullyShardedDataParallel instead, where
            the installed torch imports torch.distributed.fsdp (torch 2.x;
            Debian's 1.13 cannot under Python 3.11: refused, saying why)
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
            parameter elements whose state each rank keeps.
  filter, channel, per_layer
            the traced model's Conv2d and Linear layers split over groups
            of consecutive ranks (by output channels: rows of the weight,
            outputs all-gathered; by input channels: columns, partial
            outputs all-reduced), each node at the plan's degree (a
            per-layer entry decides the modules at or under its module),
            the activations redistributed between degrees; it prints the
            parameters each rank holds.  Every module the plan names must
            be one of the model's: a plan written for other names (an ODL
            model's layers) is refused, naming the entry.

The model: torchvision:NAME, or FILE.py:CALLABLE, a function or class of
that file called with no arguments that returns a torch.nn.Module whose
output for a batch is (batch, classes).  Its input: --image-size S (3 x S x
S), else the plan's input_shape, else 3 x 224 x 224.  The batch: --batch,
else the plan's batch.global.

Every rank then takes an SGD step (lr 0.01, momentum 0.9) on the
parameters it holds.  The forward runs under the plan's autocast
(float16, bfloat16: torch.autocast), TF32 exactly as the plan's
cudnn_allow_tf32 and matmul_allow_tf32 say (an older plan's allow_tf32 for
both), and in channels-last with --channels-last or the plan's
channels_last.

--check: each rank also computes one step of the whole model in one
process on the whole batch, in the same pieces (each replica's share,
each micro-batch, accumulated), and compares the loss (the last pipeline
stage, or every data rank), the gradient of every parameter it holds and
the parameter after the step, to fp32 tolerance (the norm of the
difference within 1e-4 of the gradient's), and that it holds exactly the
parameters the plan gives it (every one for a replica; a split plan's
shards as its modules' splits and degrees say; a stage the parameters of
the modules module_names_per_stage lists for it and none of another's).
The exit status is 0 when they agree, 1 with the first difference.
BatchNorm runs on its running statistics, dropout is off, autocast and
TF32 are not applied for the check.

--time K: W warm-up steps (--warmup, default 3, at least 2), then K timed
steps in training mode; each step (zero_grad, forward, backward, the
gradient exchange, the optimizer step) is timed between a barrier and its
end (torch.cuda.synchronize on a GPU); the step time is the median over
the K steps of the slowest rank's.  Peak memory: the largest rank's
torch.cuda.max_memory_allocated over the timed steps on a GPU; on the CPU
the largest rank's RSS growth over one more step, glibc made to return
freed blocks (runner.CpuMemory).  --out M.csv writes one row with oraclec
validate's columns, model, strategy, gpus, grid, global_batch,
dataset_size, measured_iteration_s, then precision, implementation (the
plan's), peak_memory_bytes (RFC 4180 quoting: a grid of two dimensions is
one field), and M.models/NAME.onnx beside it (the model, exported as
tools/export_zoo.py exports: opset 13, batch 1 at the run's input shape,
dynamic batch axis; BatchNorm kept), so that `oraclec validate M.csv
--models M.models` predicts it.

--trace FILE: a Chrome trace (JSON) of rank 0's profile (torch.profiler)
over the timed steps, or over the last step without --time: steps, a
range per module call named by the module's path, and every operator with
the module that ran it, backward operators linked to their forward one by
the autograd sequence number (docs/plans.md, "Running a plan").

Every output is written to a temporary beside it, and all are renamed
into place at the end of a run that succeeded, with the signals held.

--validate-only: check the plan (and the command line; with --model the
plan's names against the model) and exit, 0 when it would run.
"""
import argparse
import os
import stat
import sys

from oraclec import planschema
from oraclec.cli import (Interrupted, line_safe, path_shown, shown, signals_held,
                         signals_raise, usage_message)
from oraclec.planschema import PlanError

TORCH_MIN = (1, 13)
# the most ranks this machine runs on the CPU: 8 per core, 256 MiB each
RANKS_PER_CORE = 8
RANK_MEMORY = 256 << 20
# seconds a rank has to stop after SIGTERM before it is killed
STOP_GRACE = 10
# a sample when neither --image-size nor the plan says: torchvision's
# ImageNet models' 3 x 224 x 224
DEFAULT_SHAPE = (3, 224, 224)
USAGE = 2


def die(msg, status=1):
    sys.stderr.write("oraclec.launch: %s\n" % line_safe(msg))
    sys.exit(status)


def usage(msg):
    """A usage error: one line (argparse's two are one here), exit 2."""
    die("%s (--help lists the options)" % msg, USAGE)


class Parser(argparse.ArgumentParser):
    """argparse, its errors one line, every value in them escaped and cut
    (cli.usage_message)."""

    argv = ()

    def error(self, message):
        usage(usage_message(message, self.argv))


def ranged(lo, hi):
    def value(text):
        try:
            v = int(text, 10)
        except ValueError:
            raise argparse.ArgumentTypeError("'%s' is not an integer" % shown(text))
        if not lo <= v <= hi:
            raise argparse.ArgumentTypeError("%d is out of range: an integer from %d to %d"
                                             % (v, lo, hi))
        return v
    return value


def parser():
    ap = Parser(prog="python3 -m oraclec.launch",
                description="Run an oraclec PyTorch plan on local processes.")
    ap.add_argument("--plan", required=True, help="the plan (oraclec --plan pytorch)")
    ap.add_argument("--model", help="torchvision:NAME or FILE.py:CALLABLE (a function or "
                    "class returning a torch.nn.Module; required unless --validate-only)")
    ap.add_argument("--steps", type=ranged(1, 100000), default=None,
                    help="steps to run (default 1; not with --time)")
    ap.add_argument("--batch", type=ranged(1, 1 << 20), default=None,
                    help="samples per step (default: the plan's batch.global)")
    ap.add_argument("--image-size", type=ranged(16, 4096), default=None,
                    help="a sample's height and width (default: the plan's input_shape, "
                    "else 224)")
    ap.add_argument("--device", choices=("auto", "cpu", "cuda"), default="auto",
                    help="cuda: one GPU per rank (NCCL); cpu: gloo; auto (default): the plan's "
                    "device_type, on the CPU where there are fewer GPUs than ranks")
    ap.add_argument("--channels-last", action="store_true",
                    help="the model and its input in channels-last (NHWC)")
    what = ap.add_mutually_exclusive_group()
    what.add_argument("--check", action="store_true",
                      help="compare loss and gradients with one process")
    what.add_argument("--time", type=ranged(1, 100000), metavar="K",
                      help="time K steps after the warm-up")
    ap.add_argument("--warmup", type=ranged(2, 100000), default=3, metavar="W",
                    help="warm-up steps before the timed ones (default 3)")
    ap.add_argument("--out", metavar="M.csv",
                    help="with --time: the measured row, for oraclec validate")
    ap.add_argument("--trace", metavar="FILE",
                    help="a Chrome trace of rank 0 over the timed steps (or the last step)")
    ap.add_argument("--validate-only", action="store_true",
                    help="check the plan and the command line, start nothing")
    ap.add_argument("--timeout", type=ranged(10, 86400), default=600,
                    help=argparse.SUPPRESS)  # seconds a collective may wait
    return ap


def meminfo():
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemTotal:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return 8 << 30


def cores():
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


def need_torch():
    """torch and torchvision, or a one-line reason and exit status 1."""
    want = "the launcher needs torch >= %d.%d and torchvision" % TORCH_MIN
    try:
        import torch
        __import__("torchvision")
    except Exception as e:  # ImportError, or a broken installation
        die("this python (%s) cannot import torch and torchvision: %s; %s (Debian: apt install "
            "python3-torch python3-torchvision, and run /usr/bin/python3)"
            % (path_shown(sys.executable), str(e).split("\n")[0], want))
    try:
        have = tuple(int(p) for p in torch.__version__.split(".")[:2])
    except ValueError:
        have = TORCH_MIN
    if have < TORCH_MIN:
        die("this python (%s) has torch %s; %s" % (path_shown(sys.executable),
                                                    torch.__version__, want))
    return torch


def fsdp_runs(torch, plan, where):
    """An FSDP plan needs torch.distributed.fsdp: the reason it cannot be
    imported (Debian's torch 1.13 on Python 3.11: its sharded-tensor
    metadata is a dataclass whose default Python 3.11 refuses), exit 1."""
    from oraclec.runner import one_line
    try:
        __import__("torch.distributed.fsdp")
    except Exception as e:  # the import's own reason, in its words
        die("%s: fsdp: the plan shards with FSDP (%s), and this torch (%s, Python %d.%d) "
            "cannot import torch.distributed.fsdp: %s; FSDP plans run under torch 2.0 and "
            "later" % (where, plan["fsdp"], torch.__version__, sys.version_info[0],
                       sys.version_info[1], one_line(e, 200)))


def input_shape(args, plan):
    """A sample's shape, channels first: --image-size S for every spatial
    size (the plan's channels, else 3), else the plan's input_shape, else
    DEFAULT_SHAPE."""
    shape = tuple(plan.get("input_shape") or DEFAULT_SHAPE)
    if args.image_size:
        spatial = max(1, len(shape) - 1)
        shape = (shape[0] if len(shape) > 1 else 3,) + (args.image_size,) * spatial
    return shape


def shape_text(shape):
    return "x".join(map(str, shape))


def batch_of(args, plan, where):
    """The samples of a step, from --batch or the plan's batch.global (else
    one per micro-batch and replica, one per rank for a split plan); exits
    on a batch the plan cannot split."""
    world = plan["world_size"]
    replicas = planschema.mesh_size(plan, "data")
    pp = plan.get("pipeline")
    given = args.batch or planschema.global_batch(plan)
    what = "--batch %d" % args.batch if args.batch else "batch.global %s" % given
    if planschema.splits(plan):
        B = given or world
        if B % world:
            die("%s: %s does not split over %d ranks" % (where, what, world)
                if not args.batch else "%s does not split over %d ranks" % (what, world))
        return B
    M = pp["n_microbatches"] if pp else 1
    B = given or replicas * M
    if B % replicas:
        die("%s does not split over %d replicas (the device mesh's data)" % (what, replicas)
            if args.batch else "%s: %s does not split over %d replicas (the device mesh's data)"
            % (where, what, replicas))
    if pp and (B // replicas) % M:
        die("%s: pipeline.n_microbatches: %d micro-batches do not split the %d samples of a "
            "replica (%s over %d replicas)" % (where, M, B // replicas, what, replicas))
    return B


def machine_bound(torch, args, plan, where):
    """The device the ranks run on, a note where it is not the plan's, and
    world_size against this machine: one GPU per rank, or at most
    RANKS_PER_CORE per core and RANK_MEMORY each on the CPU."""
    world = plan["world_size"]
    planned = plan["device_mesh"].get("device_type", "cuda")
    want = planned if args.device == "auto" else args.device
    ngpu = 0
    if torch is not None and want == "cuda" and torch.cuda.is_available():
        ngpu = torch.cuda.device_count()
    if args.device == "cuda":
        if ngpu == 0:
            usage("--device cuda: torch %s sees no GPU here" % torch.__version__)
        if world > ngpu:
            die("%s: world_size: %d ranks need %d GPUs (one per rank); this machine has %d "
                "(--device cpu runs them on the CPU)" % (where, world, world, ngpu))
    device, note = want, None
    if want == "cuda" and world > ngpu:
        device = "cpu"
        if torch is not None:
            note = ("note: the plan's device_type is cuda, and torch %s sees %s here: its %d "
                    "ranks run on the CPU with gloo" % (
                        torch.__version__, "%d GPUs" % ngpu if ngpu else "no GPU", world))
    if device == "cpu":
        n, mem = cores(), meminfo()
        bound = max(1, min(RANKS_PER_CORE * n, mem // RANK_MEMORY))
        if world > bound:
            die("%s: world_size: %d ranks are more than this machine runs on its CPU: at most "
                "%d (%d per core on its %d cores, %d MiB of its %.1f GiB of memory each)"
                % (where, world, bound, RANKS_PER_CORE, n, RANK_MEMORY >> 20, mem / (1 << 30)))
    return device, note


def input_bound(args, plan, where, B, world, shape):
    """Every rank makes the whole batch: at most a quarter of the memory
    over all ranks."""
    size = B * 4
    for d in shape:
        size *= d
    mem = meminfo()
    if size * world * (2 if args.check else 1) > mem // 4:
        msg = ("the input batch of %d samples of %s takes %.1f GiB in each of %d ranks; this "
               "machine has %.1f GiB" % (B, shape_text(shape), size / (1 << 30), world,
                                         mem / (1 << 30)))
        if args.batch or args.image_size:
            usage("--batch %s, --image-size %s: %s" % (args.batch or "(the plan's)",
                                                       args.image_size or "(the plan's)", msg))
        die("%s: batch.global: %s" % (where, msg))


def check_model_spec(spec):
    """--model's form, before torch: torchvision:NAME, or FILE.py:CALLABLE
    naming a regular file and a Python name (what the file holds is read
    with torch, runner.model_ctor)."""
    if spec.startswith("torchvision:"):
        if not spec[len("torchvision:"):].isidentifier():
            usage("--model '%s': torchvision.models has no model '%s'"
                  % (shown(spec), shown(spec[len("torchvision:"):])))
        return
    path, sep, name = spec.rpartition(":")
    if not sep or not path.endswith(".py") or not name:
        usage("--model '%s': a model is torchvision:NAME or FILE.py:CALLABLE" % shown(spec))
    if not name.isidentifier():
        usage("--model '%s': '%s' is not a Python name" % (shown(spec), shown(name)))
    st = stat_of(path)
    if st is None:
        usage("--model '%s': %s: no such file" % (shown(spec), path_shown(path)))
    if not stat.S_ISREG(st.st_mode):
        usage("--model '%s': %s is %s, not a Python file" % (shown(spec), path_shown(path),
                                                            file_type(st.st_mode)))


# ---- the outputs -------------------------------------------------------------

def file_type(mode):
    """What a file that is not a regular file is, in words."""
    return planschema._not_regular(mode)


def stat_of(path):
    try:
        return os.stat(path)
    except OSError:
        return None


def same_file(a, b):
    """Whether paths a and b name one file (symbolic links followed): the
    same device and inode where both exist, the same real path where one
    does not."""
    sa, sb = stat_of(a), stat_of(b)
    if sa is not None and sb is not None:
        return os.path.samestat(sa, sb)
    return os.path.realpath(a) == os.path.realpath(b)


def can_create(path):
    """Whether a file can be made beside `path` (a temporary made and
    removed there: the real test, as root too); else the reason."""
    import tempfile
    with signals_held():  # made and removed, whatever arrives between
        try:
            fd, tmp = tempfile.mkstemp(prefix=".oraclec.tmp", dir=os.path.dirname(
                os.path.abspath(path)))
        except OSError as e:
            return e.strerror or str(e)
        os.close(fd)
        os.unlink(tmp)
    return None


def outputs_of(args):
    """The run's outputs: (option, path) for --out, its M.models folder
    and the model's ONNX file in it, and --trace."""
    outs = []
    if args.out:
        from_runner_name = args.model.rpartition(":")[2] if args.model else None
        models = args.out[:-4] + ".models"
        outs += [("--out", args.out), ("--out's models folder", models)]
        if from_runner_name:
            outs.append(("--out's model", os.path.join(models, from_runner_name + ".onnx")))
    if args.trace:
        outs.append(("--trace", args.trace))
    return outs


def inputs_of(args):
    """The run's inputs: (option, path): the plan, and the model's file."""
    ins = [("--plan", args.plan)]
    if args.model and not args.model.startswith("torchvision:"):
        path = args.model.rpartition(":")[0]
        if path:
            ins.append(("--model", path))
    return ins


def check_outputs(args):
    """Every output before anything runs: in a directory (else a usage
    error), neither an input nor another output (usage: "an output never
    replaces an input", as oraclec says), a regular file or a folder where
    it exists (a FIFO or a device is refused, never replaced; the models
    folder a folder), and creatable (exit 1, naming the reason)."""
    outs = outputs_of(args)
    for opt, path in outs:
        d = os.path.dirname(os.path.abspath(path))
        if not os.path.isdir(d) and opt in ("--out", "--trace"):
            usage("%s %s: no such directory" % (opt, shown(path)))
    for i, (opt, path) in enumerate(outs):
        for iopt, ipath in inputs_of(args):
            if stat_of(path) is not None and same_file(path, ipath):
                usage("%s '%s' and %s '%s' are the same file: an output never replaces an "
                      "input" % (opt, shown(path), iopt, shown(ipath)))
        for opt2, path2 in outs[:i]:
            if same_file(path, path2):
                usage("%s '%s' and %s '%s' are the same file: each output is its own"
                      % (opt2, shown(path2), opt, shown(path)))
    for opt, path in outs:
        st = stat_of(path)
        folder = opt == "--out's models folder"
        if st is not None and folder and not stat.S_ISDIR(st.st_mode):
            die("%s: is %s; --out writes the model it ran into this folder"
                % (path_shown(path), "a regular file" if stat.S_ISREG(st.st_mode)
                   else file_type(st.st_mode)))
        if st is not None and not folder and not stat.S_ISREG(st.st_mode):
            die("%s: is %s, not a regular file: %s writes a file there and never replaces "
                "anything else" % (path_shown(path), file_type(st.st_mode), opt.split("'")[0]))
        if not os.path.isdir(os.path.dirname(os.path.abspath(path))) or (folder and st is None):
            continue  # the models folder and what goes in it, made at the end beside --out
        why = can_create(os.path.join(path, "x") if folder else path)
        if why:
            die("%s: cannot create output: %s" % (path_shown(path), why))


class Outputs:
    """The files a run writes, all put in place at its end or none: each
    written to a temporary beside its target (.oraclec.tmpXXXXXX, as
    oraclec's -o), then all renamed over their targets with the signals
    held; whatever is not put in place (a temporary, a folder made for it)
    is removed however the run ends: an error, a signal."""

    def __init__(self):
        self.temps, self.made = [], []

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        with signals_held():
            self.discard()
        return False

    def temp(self, target):
        import tempfile
        d = os.path.dirname(os.path.abspath(target))
        with signals_held():  # known as soon as it exists
            fd, tmp = tempfile.mkstemp(prefix=".oraclec.tmp", dir=d)
            os.close(fd)
            self.temps.append((tmp, target))
        return tmp

    def folder(self, path):
        if not os.path.isdir(path):
            with signals_held():
                os.mkdir(path)
                self.made.append(path)

    def drop(self, tmp):
        self.temps = [(t, g) for t, g in self.temps if t != tmp]
        try:
            os.unlink(tmp)
        except OSError:
            pass

    def commit(self):
        with signals_held():
            for tmp, target in self.temps:
                os.chmod(tmp, 0o644)
                os.replace(tmp, target)
            self.temps, self.made = [], []

    def discard(self):
        for tmp, _ in self.temps:
            try:
                os.unlink(tmp)
            except OSError:
                pass
        for d in reversed(self.made):
            try:
                os.rmdir(d)
            except OSError:
                pass
        self.temps, self.made = [], []


# ---- the model against the plan ----------------------------------------------

def model_names(torch, runner, plan, model, spec):
    """The plan's module names against the model: every split point, stage
    module and per-layer entry must be one of its modules, and the traced
    model must call a split point and something at or under each per-layer
    entry.  PlanError naming the entry, with some of the model's names."""
    import difflib
    mods = [n for n, _ in model.named_modules() if n]
    known = set(mods)

    def unknown(field, name, label=""):
        few = mods if len(mods) <= 8 else mods[:5] + ["..."] + mods[-3:]
        close = difflib.get_close_matches(name, mods, n=2, cutoff=0.6)
        raise PlanError(field, "%s%s is not a module of %s (its %d modules: %s)%s" % (
            label, shown(name), shown(spec), len(mods), ", ".join(few),
            "; did you mean %s?" % " or ".join(close) if close else ""))

    pp = plan.get("pipeline")
    per_layer = plan.get("per_layer")
    if not pp and not per_layer:
        return
    for name in (pp or {}).get("split_spec", {}):
        if name not in known:
            unknown("pipeline.split_spec", name, "split point ")
    for s, names in enumerate((pp or {}).get("module_names_per_stage") or []):
        for j, name in enumerate(names):
            if name not in known:
                unknown("pipeline.module_names_per_stage[%d][%d]" % (s, j), name)
    for i, e in enumerate((per_layer or {}).get("modules", [])):
        if e["module"] not in known:
            unknown("per_layer.modules[%d].module" % i, e["module"])
    gm = torch.fx.symbolic_trace(runner.traceable(model))
    if pp:
        runner.stages_of(gm, list(pp["split_spec"]))
    if per_layer or planschema.splits(plan):
        called = [n.target for n in gm.graph.nodes if n.op == "call_module"]
        for i, e in enumerate((per_layer or {}).get("modules", [])):
            m = e["module"]
            if not any(t == m or t.startswith(m + ".") for t in called):
                raise PlanError("per_layer.modules[%d].module" % i, "%s is a module of %s that "
                                "the traced model never calls, nor anything under it"
                                % (m, shown(spec)))
        for target, (mode, d, field) in sorted(runner.assignment(plan, gm).items()):
            m = gm.get_submodule(target)
            if mode not in ("filter", "channel") or d == 1:
                continue
            if not isinstance(m, (torch.nn.Conv2d, torch.nn.Linear)):
                continue
            node = next(n for n in gm.graph.nodes if n.op == "call_module" and n.target == target)
            if runner.splits_input(mode, node):
                continue
            if isinstance(m, torch.nn.Conv2d) and m.groups != 1:
                raise PlanError(field, "%s splits %s, a grouped convolution, which this "
                                "launcher does not split yet" % (mode, target))
            width = m.weight.shape[0 if mode == "filter" else 1]
            if width % d:
                raise PlanError(field, "%s: %s's %d %s do not split %d ways" % (
                    mode, target, width, "outputs" if mode == "filter" else "inputs", d))


# ---- the row -----------------------------------------------------------------

def strategy_of(plan):
    names = set(plan["device_mesh"]["mesh_dim_names"])
    for k, dims in planschema.STRATEGIES.items():
        if dims == names:
            return k
    return plan.get("strategy", "?")


def grid_of(plan):
    """The grid as oraclec spells it (data=2,pipeline=2), dimensions in
    oraclec's order."""
    size = dict(zip(plan["device_mesh"]["mesh_dim_names"], plan["device_mesh"]["mesh_shape"]))
    return ",".join("%s=%d" % (d, size[d]) for d in planschema.DIMS if d in size)


def precision_of(cfg, device):
    """oraclec's --precision for what ran: amp-fp16, amp-bf16; tf32 where
    matrix products ran in TF32 on a GPU; else fp32 (cuDNN's TF32
    convolutions are what oraclec's fp32 assumes under PyTorch's default)."""
    if cfg.autocast == "float16":
        return "amp-fp16"
    if cfg.autocast == "bfloat16":
        return "amp-bf16"
    return "tf32" if device == "cuda" and cfg.tf32[1] else "fp32"


def implementation_of(torch, plan, plan_path, csv_path):
    """The row's implementation: the plan's (a built-in's name, a name with
    neither '/' nor '.', as it is; a file, found as the plan names it or
    beside the plan, as a path from the CSV's directory, where oraclec
    validate looks); without one, PyTorch's built-in for the torch that
    ran (pytorch under 1.x, pytorch-2 under 2.x).  (name, note or None)."""
    v = plan.get("implementation")
    if v is None:
        major = int(torch.__version__.split(".")[0])
        return "pytorch-2" if major >= 2 else "pytorch", None
    if "/" not in v and "." not in v:
        return v, None
    for p in (v, os.path.join(os.path.dirname(os.path.abspath(plan_path)), v)):
        if os.path.isfile(p):
            return os.path.relpath(os.path.abspath(p), os.path.dirname(
                os.path.abspath(csv_path))), None
    return v, ("note: the plan's implementation %s is not a file here nor beside the plan; "
               "the row names it as the plan does" % path_shown(v))


def export_onnx(torch, runner, spec, shape, path, target):
    """The model as tools/export_zoo.py exports it (opset 13, input and
    output named, a dynamic batch axis N, constants folded; BatchNorm kept:
    training=PRESERVE on the eval model), batch 1 at the run's input shape;
    distinct parameter and buffer values, so that the exporter merges no
    initializers; the weights left out (external data named for `target`,
    whose file is never written) where the onnx package is there.  Written
    to `path`.  None, or why it failed."""
    import warnings
    model = runner.build_model(spec, shape[-1]).eval()
    with torch.no_grad():
        for p in model.parameters():
            p.normal_(0, 0.02)
        for b in model.buffers():
            if b.is_floating_point():
                b.uniform_(0.5, 1.5)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            torch.onnx.export(model, torch.randn(1, *shape), path, opset_version=13,
                              input_names=["input"], output_names=["output"],
                              dynamic_axes={"input": {0: "N"}, "output": {0: "N"}},
                              do_constant_folding=True,
                              training=torch.onnx.TrainingMode.PRESERVE)
        try:
            import onnx
            import onnx.numpy_helper
        except ImportError:
            onnx = None
        if onnx is not None:
            m = onnx.load(path)
            float_types = {onnx.TensorProto.FLOAT, onnx.TensorProto.DOUBLE,
                           onnx.TensorProto.FLOAT16, onnx.TensorProto.BFLOAT16}
            offset = 0
            for t in m.graph.initializer:
                if t.data_type not in float_types:
                    continue
                n = len(onnx.numpy_helper.to_array(t).tobytes())
                del t.external_data[:]
                for k, v in (("location", os.path.basename(target)[:-5] + ".weights"),
                             ("offset", str(offset)), ("length", str(n))):
                    e = t.external_data.add()
                    e.key, e.value = k, v
                t.data_location = onnx.TensorProto.EXTERNAL
                for f in ("raw_data", "float_data", "double_data", "int32_data"):
                    t.ClearField(f)
                offset += n
            onnx.save(m, path)
        return None
    except Exception as e:  # an exporter's failure is the model's, reported
        return runner.one_line(e)


CSV_COLUMNS = ["model", "strategy", "gpus", "grid", "global_batch", "dataset_size",
               "measured_iteration_s", "precision", "implementation", "peak_memory_bytes"]


def write_csv(path, row):
    """The header and the row, RFC 4180 (a field with a comma, a quote or
    a line break quoted, its quotes doubled: what oraclec validate
    reads)."""
    import csv
    with open(path, "w", encoding="utf-8", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(CSV_COLUMNS)
        w.writerow([row[c] for c in CSV_COLUMNS])


# ---- main ----------------------------------------------------------------------

def main(argv=None):
    """The launcher: its exit status (module docstring).  SIGINT, SIGTERM
    and SIGHUP stop it in one line, 128 + the signal's number."""
    argv = sys.argv[1:] if argv is None else list(argv)
    with signals_raise():
        try:
            return launch(argv)
        except Interrupted as e:
            sys.stderr.write("oraclec.launch: stopped by %s: the ranks stopped, nothing "
                             "written\n" % e.name())
            return 128 + e.signum


def launch(argv):
    ap = parser()
    ap.argv = argv
    args = ap.parse_args(argv)
    if not args.model and not args.validate_only:
        ap.error("the following arguments are required: --model")
    if args.out and not args.time:
        ap.error("--out writes a timed run: it needs --time K")
    if args.steps and args.time:
        ap.error("--time K runs its warm-up and K steps: no --steps")
    if args.out and not args.out.endswith(".csv"):
        ap.error("--out %s: the measured row is a .csv file" % shown(args.out))
    if args.model:
        check_model_spec(args.model)
    check_outputs(args)
    where = path_shown(args.plan)
    try:
        plan = planschema.read(args.plan)
        planschema.check(plan)
        planschema.supported(plan)
        if args.out and plan.get("per_layer"):
            raise PlanError("per_layer", "--out writes a row for oraclec validate, which "
                            "predicts uniform strategies; a per-layer plan has none (time it "
                            "without --out)")
        if plan.get("checkpoint_segments") and args.time:
            raise PlanError("checkpoint_segments", "recomputation (oraclec --recompute) is not "
                            "run by this launcher yet: the times and memory would not be the "
                            "plan's")
        if plan.get("autocast") == "float16" and args.device == "cpu" and not args.check:
            raise PlanError("autocast", "float16 autocast runs on a GPU (--device cuda); "
                            "the CPU's autocast takes bfloat16 (oraclec --precision amp-bf16)")
    except PlanError as e:
        die("%s: %s" % (where, e))
    world = plan["world_size"]
    torch = None
    if not args.validate_only or args.model or args.device == "cuda" or plan.get("fsdp"):
        torch = need_torch()
        if plan.get("fsdp"):
            fsdp_runs(torch, plan, where)
    device, note = machine_bound(torch, args, plan, where)
    if device == "cpu" and plan.get("sync_batchnorm_group_size"):
        die("%s: sync_batchnorm_group_size: torch's SyncBatchNorm runs on GPUs only (CUDA, "
            "NCCL); these %d ranks run on the CPU (gloo): run it with --device cuda on %d GPUs, "
            "or write the plan without --sync-bn" % (where, world, world))
    B = batch_of(args, plan, where)
    shape = input_shape(args, plan)
    input_bound(args, plan, where, B, world, shape)
    if device == "cpu" and plan.get("autocast") == "float16" and not args.check:
        die("%s: autocast: float16 autocast runs on a GPU (--device cuda); the CPU's autocast "
            "takes bfloat16 (oraclec --precision amp-bf16)" % where)
    if torch is None or not args.model:  # --validate-only without --model
        print("ok: %s is a plan of %d ranks this launcher runs (%s); its module names are "
              "not checked without --model" % (where, world, grid_of(plan)))
        return 0
    from oraclec import runner
    try:
        model = runner.build_model(args.model, shape[-1])
        classes = runner.classes_of(model, args.model, shape)
        model_names(torch, runner, plan, model, args.model)
    except runner.Stop as e:
        if e.usage:
            usage(str(e))
        die(str(e))
    except PlanError as e:
        die("%s: %s" % (where, e))
    del model
    if args.validate_only:
        print("ok: %s is a plan of %d ranks this launcher runs (%s) for %s" % (
            where, world, grid_of(plan), shown(args.model)))
        return 0
    return run(torch, runner, args, plan, where, B, device, note, shape, classes)


def start(runner, cfg, plan, outdir):
    """The ranks, started: torch.multiprocessing's spawn, not joined."""
    import torch.multiprocessing as mp
    return mp.start_processes(runner.rank_main, args=(cfg, plan, runner_port(), outdir),
                              nprocs=plan["world_size"], join=False, start_method="spawn")


def stop(ranks):
    """Every rank still running stopped: SIGTERM (a rank removes what it
    was writing and ends), then, after STOP_GRACE seconds, SIGKILL; each
    one waited for."""
    import time
    live = [p for p in ranks.processes if p.is_alive()]
    for p in live:
        p.terminate()
    end = time.monotonic() + STOP_GRACE
    for p in live:
        p.join(max(0.0, end - time.monotonic()))
    for p in live:
        if p.is_alive():
            p.kill()
            p.join()


def run(torch, runner, args, plan, where, B, device, note, shape, classes):
    import tempfile
    try:
        from torch.multiprocessing.spawn import ProcessException
    except ImportError:  # older names: every spawn error is an Exception
        ProcessException = Exception
    world = plan["world_size"]
    threads = max(1, cores() // world)
    autocast = None if args.check else plan.get("autocast")
    cfg = argparse.Namespace(
        model=args.model, shape=shape, classes=classes, batch=B, steps=args.steps or 1,
        time=args.time or 0, warmup=args.warmup, check=args.check, device=device,
        threads=threads, channels_last=bool(args.channels_last or plan.get("channels_last")),
        autocast=autocast, tf32=(False, False) if args.check else planschema.tf32(plan),
        timeout=args.timeout, trace=None, launcher=os.getpid())
    if note:
        runner.stderr("oraclec.launch: " + note)
    if args.check and plan.get("autocast"):
        runner.stderr("oraclec.launch: note: --check compares in fp32: the plan's autocast "
                      "(%s) is not applied" % plan["autocast"])
    if device == "cpu":
        print("threads per rank: %d (%d cores over %d ranks)" % (threads, cores(), world))
    else:
        print("devices: %d GPUs, one per rank (NCCL)" % world)
    sys.stdout.flush()
    with Outputs() as outs, tempfile.TemporaryDirectory(prefix="oraclec-launch.") as outdir:
        if args.trace:
            cfg.trace = os.path.join(outdir, "trace.part")
        ranks = start(runner, cfg, plan, outdir)
        try:
            while not ranks.join():
                pass
        except ProcessException as e:  # the first rank to stop says why
            results = runner.results_of(outdir)
            stopped = sorted((v["failed"], r) for r, v in results.items() if "failed" in v)
            if stopped:
                r = stopped[0][1]
                die("rank %d: %s" % (r, results[r]["error"]))
            die("a rank stopped: %s" % runner.one_line(e))
        finally:
            with signals_held():  # a second Ctrl-C does not leave a rank running
                stop(ranks)
        results = runner.results_of(outdir)
        bad = [(r, v["error"]) for r, v in sorted(results.items()) if v["error"]]
        if bad:
            print("rank %d: %s" % bad[0])
            return 1
        report(args, plan, results, world)
        written = []
        if args.time:
            written = report_time(torch, runner, args, plan, B, device, cfg, results, outs)
        if args.trace:
            import shutil
            shutil.copyfile(cfg.trace, outs.temp(args.trace))
        outs.commit()
    for path in written:
        print("wrote %s" % path_shown(path))
    if args.trace:
        steps = ("steps %d to %d" % (args.warmup, args.warmup + args.time - 1) if args.time
                 else "step %d" % ((args.steps or 1) - 1))
        print("trace: %s (rank 0, %s)" % (path_shown(args.trace), steps))
    return 0


def report(args, plan, results, world):
    """What the ranks did: their parameters, stages, optimizer state, the
    TF32 switches they ran with, and --check's agreement."""
    flight = {v["stage"]: v["flight"] for v in results.values() if v["stage"] is not None}
    if planschema.splits(plan) or plan.get("fsdp"):  # the parameter elements each rank holds
        print("parameters per rank (elements): %s" %
              " ".join(str(results[r]["held"]) for r in sorted(results)))
    if flight:  # the activations each stage kept at once, in micro-batches
        print("micro-batches in flight per stage: %s" %
              " ".join(str(flight[s][0]) for s in sorted(flight)))
        print("micro-batches whole per stage: %s" %
              " ".join(str(flight[s][1]) for s in sorted(flight)))
    if plan.get("zero_redundancy_optimizer"):  # ZeRO-1: a part of the state each
        state = [results[r]["state"] for r in sorted(results)]
        print("optimizer state per rank (parameter elements): %s of %d" %
              (" ".join(map(str, state)), sum(state)))
    cudnn, matmul = results[0]["tf32"]
    print("tf32: torch.backends.cudnn.allow_tf32 = %s, torch.backends.cuda.matmul.allow_tf32 = "
          "%s%s" % (cudnn, matmul, " (--check: off)" if args.check else ""))
    if args.check:
        print("ok: %d ranks agree with one process (loss, every gradient, the step, the "
              "parameters each holds)" % world)


def runner_port():
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def report_time(torch, runner, args, plan, B, device, cfg, results, outs):
    """The timed run's lines, and with --out its row and model written to
    temporaries in `outs`: the paths they will have."""
    world = plan["world_size"]
    median, fast, slow = runner.timing(results, world)
    peaks = [results[r]["peak"] for r in sorted(results)]
    peak = None if any(p is None for p in peaks) else max(peaks)
    print("time: %d warm-up steps, %d timed: %.6g s per step (the median of the slowest "
          "rank's; steps from %.6g to %.6g s)" % (args.warmup, args.time, median, fast, slow))
    what = ("torch.cuda.max_memory_allocated over the timed steps" if device == "cuda" else
            "RSS growth in one step after them")
    print("peak memory: %s bytes (the largest rank's %s)" % (
        "not measured" if peak is None else "%d" % peak, what))
    if not args.out:
        return []
    name = runner.model_name(args.model)
    impl, note = implementation_of(torch, plan, args.plan, args.out)
    if note:
        runner.stderr("oraclec.launch: " + note)
    row = {"model": name, "strategy": strategy_of(plan), "gpus": world,
           "grid": grid_of(plan), "global_batch": B, "dataset_size": runner.DATASET_SIZE,
           "measured_iteration_s": "%.9g" % median, "precision": precision_of(cfg, device),
           "implementation": impl, "peak_memory_bytes": "" if peak is None else peak}
    write_csv(outs.temp(args.out), row)
    models = args.out[:-4] + ".models"
    outs.folder(models)
    onnx_path = os.path.join(models, name + ".onnx")
    tmp = outs.temp(onnx_path)
    why = export_onnx(torch, runner, args.model, cfg.shape, tmp, onnx_path)
    if why:
        outs.drop(tmp)
        runner.stderr("oraclec.launch: note: torch.onnx.export of %s failed (%s): %s not "
                      "written" % (shown(args.model), why, path_shown(onnx_path)))
        return [args.out]
    return [args.out, onnx_path]


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt:  # before the handlers were set
        sys.stderr.write("oraclec.launch: stopped by SIGINT: nothing written\n")
        sys.exit(130)
