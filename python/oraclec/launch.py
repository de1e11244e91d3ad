"""oraclec.launch -- run the job an oraclec PyTorch plan describes, with the
PyTorch that is installed (torch >= 1.13 and torchvision; no
torch.distributed.pipelining needed), and with --check verify that it
computes what one process does, with --time time it.

    python3 -m oraclec.launch --plan PLAN.json --model torchvision:NAME \
        [--steps K] [--check] [--batch B] [--image-size S] [--device D] \
        [--channels-last] [--time K [--warmup W] [--out M.csv]] [--trace FILE] \
        [--validate-only]

The plan is checked before anything starts (oraclec.planschema: the file,
its JSON, every key's type and range, world_size against the device
mesh, the pipeline's micro-batches against the batch; then, with torch,
world_size against this machine and the plan's module names against the
model).  A plan that fails says why in one line, `oraclec.launch: PLAN:
FIELD: ...`, exit status 1; a bad command line exits 2.

It starts the plan's world_size ranks as local processes: on the CPU with
the gloo backend, each rank with its share of the cores
(torch.set_num_threads(cores // world_size), at least 1); with
--device cuda (or auto, where there are as many GPUs as ranks) one GPU per
rank with NCCL.  The plan's device mesh says what each rank does:

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
            outputs all-reduced), each node at the plan's degree (a
            per-layer entry decides the modules at or under its module),
            the activations redistributed between degrees; it prints the
            parameters each rank holds.  Every module the plan names must
            be one of the model's: a plan written for other names (an ODL
            model's layers) is refused, naming the entry.

Every rank then takes an SGD step (lr 0.01, momentum 0.9) on the
parameters it holds.  The forward runs under the plan's autocast
(float16, bfloat16: torch.autocast), TF32 as its allow_tf32 says (CUDA),
and in channels-last with --channels-last or the plan's channels_last.

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
BatchNorm runs on its running statistics, dropout is off and autocast is
not applied for the check.

--time K: W warm-up steps (--warmup, default 3, at least 2), then K timed
steps in training mode; each step (zero_grad, forward, backward, the
gradient exchange, the optimizer step) is timed between a barrier and its
end (torch.cuda.synchronize on a GPU); the step time is the median over
the K steps of the slowest rank's.  Peak memory: the largest rank's
torch.cuda.max_memory_allocated over the timed steps on a GPU; on the CPU
the largest rank's RSS growth over one more step, glibc made to return
freed blocks (runner.CpuMemory).  --out M.csv writes (atomically) one row
with oraclec validate's columns, model, strategy, gpus, grid,
global_batch, dataset_size, measured_iteration_s, then precision,
implementation, peak_memory_bytes, and M.models/NAME.onnx beside it (the
model, exported as tools/export_zoo.py exports: opset 13, batch 1 at the
run's image size, dynamic batch axis; BatchNorm kept), so that
`oraclec validate M.csv --models M.models` predicts it.

--trace FILE: a Chrome trace (JSON) of rank 0's profile (torch.profiler)
over the timed steps, or over the last step without --time: steps, a
range per module call named by the module's path, and every operator with
the module that ran it, backward operators linked to their forward one by
the autograd sequence number (docs/plans.md, "Running a plan").

--validate-only: check the plan (and the command line; with --model the
plan's names against the model) and exit, 0 when it would run.
"""
import argparse
import os
import sys

from oraclec import planschema
from oraclec.planschema import PlanError

TORCH_MIN = (1, 13)
# the most ranks this machine runs on the CPU: 8 per core, 256 MiB each
RANKS_PER_CORE = 8
RANK_MEMORY = 256 << 20


def die(msg, status=1):
    sys.stderr.write("oraclec.launch: %s\n" % msg)
    sys.exit(status)


def printable(path):
    """A path as it can be printed on one line."""
    return path if path.isprintable() else ascii(path)


def ranged(lo, hi):
    def value(text):
        try:
            v = int(text, 10)
        except ValueError:
            raise argparse.ArgumentTypeError("%r is not an integer" % text)
        if not lo <= v <= hi:
            raise argparse.ArgumentTypeError("%d is out of range: an integer from %d to %d"
                                             % (v, lo, hi))
        return v
    return value


def parser():
    ap = argparse.ArgumentParser(prog="python3 -m oraclec.launch",
                                 description="Run an oraclec PyTorch plan on local processes.")
    ap.add_argument("--plan", required=True, help="the plan (oraclec --plan pytorch)")
    ap.add_argument("--model", help="torchvision:NAME (required unless --validate-only)")
    ap.add_argument("--steps", type=ranged(1, 100000), default=None,
                    help="steps to run (default 1; not with --time)")
    ap.add_argument("--batch", type=ranged(1, 1 << 20), default=None,
                    help="samples per step (default: one per micro-batch and replica, one per "
                    "rank for a split plan)")
    ap.add_argument("--image-size", type=ranged(16, 4096), default=224)
    ap.add_argument("--device", choices=("auto", "cpu", "cuda"), default="auto",
                    help="cuda: one GPU per rank (NCCL); cpu: gloo; auto (default): cuda where "
                    "there are as many GPUs as ranks")
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
            % (sys.executable, str(e).split("\n")[0], want))
    try:
        have = tuple(int(p) for p in torch.__version__.split(".")[:2])
    except ValueError:
        have = TORCH_MIN
    if have < TORCH_MIN:
        die("this python (%s) has torch %s; %s" % (sys.executable, torch.__version__, want))
    return torch


def batch_of(args, plan, where):
    """The samples of a step, from --batch or the plan; exits on a batch
    the plan cannot split."""
    world = plan["world_size"]
    replicas = planschema.mesh_size(plan, "data")
    pp = plan.get("pipeline")
    if planschema.splits(plan):
        B = args.batch or world
        if B % world:
            die("--batch %d does not split over %d ranks" % (B, world))
        return B
    M = pp["n_microbatches"] if pp else 1
    B = args.batch or replicas * M
    if B % replicas:
        die("--batch %d does not split over %d replicas (the device mesh's data)" % (B, replicas))
    if pp and (B // replicas) % M:
        die("%s: pipeline.n_microbatches: %d micro-batches do not split the %d samples of a "
            "replica (--batch %d over %d replicas)" % (where, M, B // replicas, B, replicas))
    return B


def machine_bound(torch, args, plan, where):
    """The device the ranks run on, and world_size against this machine:
    one GPU per rank, or at most RANKS_PER_CORE per core and RANK_MEMORY
    each on the CPU."""
    world = plan["world_size"]
    ngpu = 0
    if torch is not None and args.device != "cpu" and torch.cuda.is_available():
        ngpu = torch.cuda.device_count()
    if args.device == "cuda":
        if ngpu == 0:
            die("--device cuda: torch %s sees no GPU here" % torch.__version__, 2)
        if world > ngpu:
            die("%s: world_size: %d ranks need %d GPUs (one per rank); this machine has %d "
                "(--device cpu runs them on the CPU)" % (where, world, world, ngpu))
    device = "cuda" if ngpu and (args.device == "cuda" or world <= ngpu) else "cpu"
    if device == "cpu":
        n, mem = cores(), meminfo()
        bound = max(1, min(RANKS_PER_CORE * n, mem // RANK_MEMORY))
        if world > bound:
            die("%s: world_size: %d ranks are more than this machine runs on its CPU: at most "
                "%d (%d per core on its %d cores, %d MiB of its %.1f GiB of memory each)"
                % (where, world, bound, RANKS_PER_CORE, n, RANK_MEMORY >> 20, mem / (1 << 30)))
    return device, ngpu


def input_bound(args, plan, where, B, world, device):
    """Every rank makes the whole batch: at most a quarter of the memory
    over all ranks."""
    size = B * 3 * args.image_size * args.image_size * 4
    mem = meminfo()
    if size * world * (2 if args.check else 1) > mem // 4:
        msg = ("the input batch of %d samples at %dx%d takes %.1f GiB in each of %d ranks; this "
               "machine has %.1f GiB" % (B, args.image_size, args.image_size, size / (1 << 30),
                                         world, mem / (1 << 30)))
        if args.batch:
            die("--batch %d, --image-size %d: %s" % (args.batch, args.image_size, msg), 2)
        die("%s: pipeline.n_microbatches: %s" % (where, msg))


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
            label, name, spec, len(mods), ", ".join(few),
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
                                "the traced model never calls, nor anything under it" % (m, spec))
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
    """oraclec's --precision for what ran."""
    if cfg.autocast == "float16":
        return "amp-fp16"
    if cfg.autocast == "bfloat16":
        return "amp-bf16"
    return "tf32" if device == "cuda" and cfg.allow_tf32 else "fp32"


def export_onnx(torch, runner, spec, size, path):
    """The model as tools/export_zoo.py exports it (opset 13, input and
    output named, a dynamic batch axis N, constants folded; BatchNorm kept:
    training=PRESERVE on the eval model), batch 1 at the run's image size;
    distinct parameter and buffer values, so that the exporter merges no
    initializers; the weights left out (external data whose file is never
    written) where the onnx package is there.  None, or why it failed."""
    import tempfile
    import warnings
    model = runner.build_model(spec, size).eval()
    with torch.no_grad():
        for p in model.parameters():
            p.normal_(0, 0.02)
        for b in model.buffers():
            if b.is_floating_point():
                b.uniform_(0.5, 1.5)
    d = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=".oraclec.tmp", dir=d)
    os.close(fd)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            torch.onnx.export(model, torch.randn(1, 3, size, size), tmp, opset_version=13,
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
            m = onnx.load(tmp)
            float_types = {onnx.TensorProto.FLOAT, onnx.TensorProto.DOUBLE,
                           onnx.TensorProto.FLOAT16, onnx.TensorProto.BFLOAT16}
            offset = 0
            for t in m.graph.initializer:
                if t.data_type not in float_types:
                    continue
                n = len(onnx.numpy_helper.to_array(t).tobytes())
                del t.external_data[:]
                for k, v in (("location", os.path.basename(path)[:-5] + ".weights"),
                             ("offset", str(offset)), ("length", str(n))):
                    e = t.external_data.add()
                    e.key, e.value = k, v
                t.data_location = onnx.TensorProto.EXTERNAL
                for f in ("raw_data", "float_data", "double_data", "int32_data"):
                    t.ClearField(f)
                offset += n
            onnx.save(m, tmp)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
        return None
    except Exception as e:  # an exporter's failure is the model's, reported
        try:
            os.unlink(tmp)
        except OSError:
            pass
        return runner.one_line(e)


def write_csv(runner, path, row):
    cols = ["model", "strategy", "gpus", "grid", "global_batch", "dataset_size",
            "measured_iteration_s", "precision", "implementation", "peak_memory_bytes"]

    def write(f):
        f.write(",".join(cols) + "\n")
        f.write(",".join(str(row[c]) for c in cols) + "\n")
    runner.write_atomic(path, write)


def main(argv=None):
    ap = parser()
    args = ap.parse_args(argv)
    if not args.model and not args.validate_only:
        ap.error("the following arguments are required: --model")
    if args.out and not args.time:
        ap.error("--out writes a timed run: it needs --time K")
    if args.steps and args.time:
        ap.error("--time K runs its warm-up and K steps: no --steps")
    if args.out and not args.out.endswith(".csv"):
        ap.error("--out %s: the measured row is a .csv file" % printable(args.out))
    for opt, path in (("--out", args.out), ("--trace", args.trace)):
        if path and not os.path.isdir(os.path.dirname(os.path.abspath(path))):
            ap.error("%s %s: no such directory" % (opt, printable(path)))
    where = printable(args.plan)
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
    B = batch_of(args, plan, where)
    torch = None
    if not args.validate_only or args.model or args.device == "cuda":
        torch = need_torch()
    device, _ = machine_bound(torch, args, plan, where)
    input_bound(args, plan, where, B, world, device)
    if device == "cpu" and plan.get("autocast") == "float16" and not args.check:
        die("%s: autocast: float16 autocast runs on a GPU (--device cuda); the CPU's autocast "
            "takes bfloat16 (oraclec --precision amp-bf16)" % where)
    if torch is None:  # --validate-only without --model
        print("ok: %s is a plan of %d ranks this launcher runs (%s); its module names are "
              "not checked without --model" % (where, world, grid_of(plan)))
        return 0
    from oraclec import runner
    try:
        runner.model_ctor(args.model)
    except runner.Stop as e:  # a usage error, as argparse's
        ap.error(str(e))
    if plan.get("pipeline") or planschema.splits(plan) or args.validate_only:
        # the plan's module names against the model's
        model = runner.build_model(args.model, args.image_size)
        try:
            model_names(torch, runner, plan, model, args.model)
        except PlanError as e:
            die("%s: %s" % (where, e))
    if args.validate_only:
        try:  # the image size: one sample through the model
            with torch.no_grad():
                model.eval()(torch.randn(1, 3, args.image_size, args.image_size))
        except Exception as e:  # the model's own complaint
            die("--image-size %d: %s does not take %dx%d images (%s)" % (
                args.image_size, args.model, args.image_size, args.image_size,
                runner.one_line(e)), 2)
        print("ok: %s is a plan of %d ranks this launcher runs (%s) for %s" % (
            where, world, grid_of(plan), args.model))
        return 0
    return run(torch, runner, args, plan, where, B, device)


def run(torch, runner, args, plan, where, B, device):
    import torch.multiprocessing as mp
    try:
        from torch.multiprocessing.spawn import ProcessException
    except ImportError:  # older names: every spawn error is an Exception
        ProcessException = Exception
    world = plan["world_size"]
    threads = max(1, cores() // world)
    cfg = argparse.Namespace(
        model=args.model, image_size=args.image_size, batch=B, steps=args.steps or 1,
        time=args.time or 0, warmup=args.warmup, check=args.check, device=device,
        threads=threads, channels_last=bool(args.channels_last or plan.get("channels_last")),
        autocast=None if args.check else plan.get("autocast"),
        allow_tf32=bool(plan.get("allow_tf32")), timeout=args.timeout,
        trace=os.path.abspath(args.trace) if args.trace else None)
    if args.check and plan.get("autocast"):
        runner.stderr("oraclec.launch: note: --check compares in fp32: the plan's autocast "
                      "(%s) is not applied" % plan["autocast"])
    if device == "cpu":
        print("threads per rank: %d (%d cores over %d ranks)" % (threads, cores(), world))
    else:
        print("devices: %d GPUs, one per rank (NCCL)" % world)
    sys.stdout.flush()
    import tempfile
    with tempfile.TemporaryDirectory(prefix="oraclec-launch.") as outdir:
        try:
            mp.spawn(runner.rank_main, args=(cfg, plan, runner_port(runner), outdir),
                     nprocs=world, join=True)
        except ProcessException as e:  # the first rank to stop says why
            results = runner.results_of(outdir)
            stopped = sorted((v["failed"], r) for r, v in results.items() if "failed" in v)
            if stopped:
                r = stopped[0][1]
                die("rank %d: %s" % (r, results[r]["error"]))
            die("a rank stopped: %s" % runner.one_line(e))
        results = runner.results_of(outdir)
    bad = [(r, v["error"]) for r, v in sorted(results.items()) if v["error"]]
    if bad:
        print("rank %d: %s" % bad[0])
        return 1
    flight = {v["stage"]: v["flight"] for v in results.values() if v["stage"] is not None}
    if planschema.splits(plan):  # the parameter elements each rank holds
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
    if args.check:
        print("ok: %d ranks agree with one process (loss, every gradient, the step, the "
              "parameters each holds)" % world)
    if args.time:
        report_time(torch, runner, args, plan, B, device, cfg, results)
    if args.trace:
        steps = ("steps %d to %d" % (args.warmup, args.warmup + args.time - 1) if args.time
                 else "step %d" % ((args.steps or 1) - 1))
        print("trace: %s (rank 0, %s)" % (printable(args.trace), steps))
    return 0


def runner_port(runner):
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def report_time(torch, runner, args, plan, B, device, cfg, results):
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
        return
    name = args.model.split(":", 1)[1]
    major = int(torch.__version__.split(".")[0])
    row = {"model": name, "strategy": strategy_of(plan), "gpus": world,
           "grid": grid_of(plan), "global_batch": B, "dataset_size": runner.DATASET_SIZE,
           "measured_iteration_s": "%.9g" % median, "precision": precision_of(cfg, device),
           "implementation": "pytorch-2" if major >= 2 else "pytorch",
           "peak_memory_bytes": "" if peak is None else peak}
    write_csv(runner, args.out, row)
    print("wrote %s" % printable(args.out))
    models = args.out[:-4] + ".models"
    os.makedirs(models, exist_ok=True)
    onnx_path = os.path.join(models, name + ".onnx")
    why = export_onnx(torch, runner, args.model, args.image_size, onnx_path)
    if why:
        runner.stderr("oraclec.launch: note: torch.onnx.export of %s failed (%s): %s not "
                      "written" % (args.model, why, printable(onnx_path)))
    else:
        print("wrote %s" % printable(onnx_path))


if __name__ == "__main__":
    sys.exit(main())
