"""oraclec.probe -- measure the device at hand and describe it to oraclec.

    python3 -m oraclec.probe [--device cuda|cpu] [--quick] [--ranks R]
                             [--sections LIST] [--budget SECONDS] -o DIR

It times, with the PyTorch that is installed (1.13 or later):

  matmul       torch.matmul, nn.functional.linear and torch.bmm from tiny
               (launch-bound) to large sizes in each precision the device
               has (cuda: fp32 with TF32 off, tf32, fp16, bf16; cpu: fp32,
               and bf16 where it is faster than fp32), with the kernels the
               profiler names
  conv         nn.functional.conv2d forward and its data and weight
               gradients (autograd) over 1x1, 3x3 (stride 1 and 2), 7x7
               stride 2, depthwise and grouped shapes, NCHW and
               channels_last
  memory       copy and add bandwidth by size; batch_norm forward and
               backward in training, both layouts
  launch       a trivial kernel back to back: the GPU's floor per kernel
  host         the CPU's cost of one eager operator (forward, its backward
               node, under autocast), a convolution call's extra, the
               optimizer's Python loop per tensor (tools/host_costs.py)
  allocator    the caching allocator's slack and the CUDA context (cpu: the
               process's footprint)
  collectives  all-reduce, all-gather and broadcast by message size between
               the GPUs (NCCL, two or more) or between --ranks CPU
               processes (gloo), fitted to the ring formula
  ranks        cpu: what each rank gets when --ranks processes share the
               cores (1 and R at once)

and writes in DIR, as it goes (a run cut short keeps what it measured):

  probe.csv           one row per measurement: section,op,precision,
                      layout,shape,flops,bytes,seconds,kernel
  system.odl          a system block (oraclec -s DIR/system.odl), each key
                      commented with how it was measured
  implementation.odl  an implementation block (--implementation) on
                      pytorch-2 with the measured host costs

Every section is time-boxed (--quick: about 100 s in all; else about 5
minutes); docs/probe.md walks through the loop the files start.
"""
import argparse
import contextlib
import csv
import datetime
import importlib.util
import io
import math
import os
import platform
import queue
import re
import signal
import socket
import stat
import statistics
import subprocess
import sys
import tempfile
import time

from . import probe_collectives, probe_gpus, probe_kernels, probe_model
from .cli import escaped, path_shown, shown, usage_message

SECTIONS = ("matmul", "conv", "memory", "launch", "host", "allocator", "collectives", "ranks",
            "model")
# seconds each section may take: (--quick, full); model: the model's
# kernels (--model), ResNet-50's at 32 samples in about 2 minutes on a
# 2-core CPU with --quick
BUDGET = {"matmul": (22, 90), "conv": (28, 90), "memory": (8, 30), "launch": (2, 5),
          "host": (10, 20), "allocator": (2, 5), "collectives": (15, 45), "ranks": (12, 30),
          "model": (170, 900)}
# --ranks: at most this many processes (and no more than the cores)
MAX_RANKS = 256
# --gpus of --model: the devices a strategy may span
MAX_GPUS = 1 << 20
COLUMNS = ("section", "op", "precision", "layout", "shape", "flops", "bytes", "seconds", "kernel")
ELEM = {"fp32": 4, "tf32": 4, "fp16": 2, "bf16": 2}


class Interrupted(BaseException):
    """SIGTERM or SIGINT: not an Exception, so that no handler of one
    swallows it."""


def fail(msg):
    sys.exit("oraclec.probe: " + msg)


def note(msg):
    print("probe: " + msg, file=sys.stderr, flush=True)


def num(x):
    return "" if x is None else "%.6g" % x


def median(xs):
    return statistics.median(xs)


class Clock:
    """A section's time box."""

    def __init__(self, seconds):
        self.end = time.monotonic() + seconds

    def left(self):
        return self.end - time.monotonic()

    def share(self, parts):
        """A box for the next of `parts` pieces of what is left."""
        return Clock(max(self.left(), 0) / max(parts, 1))


# ---- the output -----------------------------------------------------------

OUTPUTS = ("probe.csv", "system.odl", "implementation.odl", "kernels.csv", "collectives.txt")


class OutputError(Exception):
    """An output that cannot be written: one line says which and why."""


def kind_of(path):
    """What path is when it is not a regular file or a symbolic link (which
    a rename replaces, never following it): "a directory", "a FIFO", ...;
    None when it is one of those or is not there."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return None
    except OSError as e:
        return "unreadable (%s)" % (e.strerror or e)
    for test, what in ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO"),
                       (stat.S_ISSOCK, "a socket"), (stat.S_ISCHR, "a character device"),
                       (stat.S_ISBLK, "a block device")):
        if test(st.st_mode):
            return what
    return None


def check_outputs(d):
    """Every output name in d that is there and is not a regular file or a
    link: refused before anything is measured (a FIFO would block the
    probe, a directory cannot be replaced)."""
    for name in OUTPUTS:
        what = kind_of(os.path.join(d, name))
        if what:
            raise OutputError("%s is %s: the probe writes only regular files" %
                              (os.path.join(d, name), what))


class Out:
    """The files, each written whole through a temporary beside it renamed
    over it (never opened in place: a link named probe.csv is replaced, its
    target untouched), with SIGINT and SIGTERM held while one is written;
    probe.csv's rows kept here and written with the ODL files."""

    def __init__(self, directory):
        self.dir = directory
        self.rows = []

    def row(self, section, op, precision="", layout="", shape="", flops=None, nbytes=None,
            seconds=None, kernel="", **extra):
        r = dict(section=section, op=op, precision=precision, layout=layout, shape=shape,
                 flops=flops, bytes=nbytes, seconds=seconds, kernel=kernel, **extra)
        self.rows.append(r)
        return r

    def select(self, section, op=None, precision=None):
        return [r for r in self.rows if r["section"] == section and
                (op is None or r["op"] == op or (isinstance(op, tuple) and r["op"] in op)) and
                (precision is None or r["precision"] == precision)]

    def csv_text(self):
        f = io.StringIO()
        w = csv.writer(f, lineterminator="\n")
        w.writerow(COLUMNS)
        for r in self.rows:
            w.writerow([r["section"], r["op"], r["precision"], r["layout"], r["shape"],
                        num(r["flops"]), num(r["bytes"]), num(r["seconds"]), r["kernel"]])
        return f.getvalue()

    def write(self, name, text):
        path = os.path.join(self.dir, name)
        held = {signal.SIGINT, signal.SIGTERM}
        signal.pthread_sigmask(signal.SIG_BLOCK, held)
        tmp = None
        try:
            what = kind_of(path)
            if what:
                raise OutputError("%s is %s: the probe writes only regular files" % (path, what))
            fd, tmp = tempfile.mkstemp(dir=self.dir, prefix="." + name + ".")
            with os.fdopen(fd, "w", encoding="utf-8", newline="") as f:
                f.write(text)
            os.chmod(tmp, 0o644)
            os.replace(tmp, path)
            tmp = None
        except OSError as e:
            raise OutputError("cannot write %s: %s" % (path, e.strerror or e))
        finally:
            if tmp is not None:
                try:
                    os.unlink(tmp)
                except OSError:
                    pass
            signal.pthread_sigmask(signal.SIG_UNBLOCK, held)


# ---- the device -----------------------------------------------------------

class Probe:
    def __init__(self, torch, args, out):
        self.torch = torch
        self.args = args
        self.out = out
        self.quick = args.quick
        self.cuda = args.device == "cuda"
        self.dev = torch.device("cuda" if self.cuda else "cpu")
        self.cores = os.cpu_count() or 1
        self.ranks = args.ranks if not self.cuda else None
        self.threads = max(1, self.cores // self.ranks) if not self.cuda else None
        self.target = (0.02 if self.quick else 0.05) if self.cuda else \
            (0.06 if self.quick else 0.25)
        self.profiling = True
        self.info = {}          # what the sections found beyond probe.csv's rows
        self.ran = []           # sections run, in order
        self.failed = []
        self.rss_import = rss_bytes()
        self._precisions = None
        self.model_want = {}    # --model: {Key: {N}} (oraclec --kernels-needed)
        self.kernel_rows = {}   # --model: {(Key, N): row} measured or resumed
        if self.cuda:
            self.nvml_before = nvml_used()
            torch.cuda.init()
            props = torch.cuda.get_device_properties(0)
            self.name = props.name
            self.props = props
            self.cps = self._sleep_rate()
            self.info["driver"] = driver_version()
        else:
            torch.set_num_threads(self.threads)
            self.name = cpu_model()
            self.props = None

    # -- timing

    def sync(self):
        if self.cuda:
            self.torch.cuda.synchronize()

    def _sleep_rate(self):
        """The GPU's clock: torch.cuda._sleep's cycles a second."""
        torch = self.torch
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        rate = 1e9
        for _ in range(2):
            s.record()
            torch.cuda._sleep(1000000)
            e.record()
            e.synchronize()
            rate = 1e6 / max(s.elapsed_time(e) * 1e-3, 1e-6)
        return rate

    def measure(self, fn, target=None, sample=1e-3):
        """Seconds per call of fn: the median over samples of back-to-back
        calls after warm-up.  cuda: the GPU's time (CUDA events around
        calls queued behind a sleeping kernel, so that the GPU never waits
        for the CPU that issues them); cpu: perf_counter."""
        target = target or self.target
        fn()
        self.sync()
        t = time.perf_counter()
        fn()
        self.sync()
        one = time.perf_counter() - t
        n = max(1, min(200 if self.cuda else 1000, int(sample / max(one, 1e-7))))
        reps = 1 if one >= target else max(3, min(25, int(target / (n * one))))
        if not self.cuda:
            if one >= target:
                return one
            samples = []
            for _ in range(reps):
                t = time.perf_counter()
                for _ in range(n):
                    fn()
                samples.append((time.perf_counter() - t) / n)
            return median(samples)
        torch = self.torch
        t = time.perf_counter()
        for _ in range(n):
            fn()
        issue = (time.perf_counter() - t) / n
        self.sync()
        cycles = int(self.cps * min(n * issue * 1.5 + 2e-4, 0.2))
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        samples = []
        for _ in range(reps):
            torch.cuda._sleep(cycles)
            s.record()
            for _ in range(n):
                fn()
            e.record()
            e.synchronize()
            samples.append(s.elapsed_time(e) * 1e-3 / n)
        return median(samples)

    def kernels(self, fn, seconds=0.0):
        """The kernels one call runs as the profiler names them (cuda: the
        CUDA activity; cpu: the innermost ATen operators), ';'-joined.  On
        the CPU a call of over four measurements' time is not run again."""
        if not self.profiling or (not self.cuda and seconds > 4 * self.target):
            return ""
        try:
            from torch.autograd import DeviceType
            from torch.profiler import ProfilerActivity, profile
            acts = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if self.cuda else [])
            with profile(activities=acts) as prof:
                fn()
                self.sync()
            names = []
            for ev in prof.events():
                if self.cuda:
                    keep = ev.device_type == DeviceType.CUDA
                else:
                    keep = working(ev) and not any(working(c) for c in descendants(ev))
                if keep and ev.name not in names:
                    names.append(ev.name)
            return ";".join(names)
        except Exception as e:  # a profiler that does not run here: no names
            note("no kernel names (the profiler failed: %s)" % one_line(e))
            self.profiling = False
            return ""

    # -- precisions

    def precisions(self):
        if self._precisions is not None:
            return self._precisions
        torch = self.torch
        if self.cuda:
            major, _ = torch.cuda.get_device_capability(0)
            p = ["fp32"] + (["tf32"] if major >= 8 else []) + ["fp16"] + \
                (["bf16"] if major >= 8 else [])
        else:
            p = ["fp32"]
            rate = {}
            for prec in ("fp32", "bf16"):
                try:
                    a = torch.randn(256, 256, dtype=self.dtype(prec))
                    rate[prec] = 2 * 256 ** 3 / self.measure(lambda: torch.mm(a, a), 0.02)
                except RuntimeError:
                    rate[prec] = 0
            self.info["bf16_check"] = rate
            if rate["bf16"] >= rate["fp32"]:
                p.append("bf16")
            note("cpu: fp32 %.3g, bf16 %.3g GFLOP/s on 256x256x256: %s" %
                 (rate["fp32"] / 1e9, rate["bf16"] / 1e9,
                  "bf16 measured too" if "bf16" in p else "bf16 not faster, left out"))
        self._precisions = p
        return p

    def dtype(self, prec):
        t = self.torch
        return {"fp32": t.float32, "tf32": t.float32, "fp16": t.float16, "bf16": t.bfloat16}[prec]

    @contextlib.contextmanager
    def precision(self, prec):
        """fp32 with TF32 off, tf32 with it on (matmul and cuDNN)."""
        if not self.cuda:
            yield self.dtype(prec)
            return
        b = self.torch.backends
        old = (b.cuda.matmul.allow_tf32, b.cudnn.allow_tf32)
        b.cuda.matmul.allow_tf32 = b.cudnn.allow_tf32 = prec == "tf32"
        try:
            yield self.dtype(prec)
        finally:
            b.cuda.matmul.allow_tf32, b.cudnn.allow_tf32 = old

    def randn(self, *shape, dtype=None, channels_last=False):
        t = self.torch.randn(*shape, dtype=dtype or self.torch.float32, device=self.dev)
        return t.to(memory_format=self.torch.channels_last) if channels_last else t

    def free(self):
        if self.cuda:
            self.torch.cuda.empty_cache()


# ATen operators that allocate, view or check, and compute nothing: on the
# CPU the kernel column names the innermost operators that are not these
HELPERS = {"aten::" + n for n in (
    "empty", "empty_like", "empty_strided", "as_strided", "as_strided_", "view", "reshape",
    "resize_", "resolve_conj", "resolve_neg", "is_same_size", "detach", "detach_", "select",
    "slice", "zero_", "fill_", "zeros", "zeros_like", "ones_like", "t", "transpose",
    "expand", "contiguous", "unsqueeze", "squeeze", "permute", "lift_fresh", "alias",
    "_unsafe_view", "result_type", "to", "_reshape_alias")}


def working(ev):
    return ev.name.startswith("aten::") and ev.name not in HELPERS


def descendants(ev):
    for c in ev.cpu_children:
        yield c
        yield from descendants(c)


def one_line(e):
    s = str(e).strip().splitlines()
    return (s[0] if s else type(e).__name__)[:200]


def too_big(e):
    s = str(e).lower()
    return "out of memory" in s or "can't allocate" in s or "not enough memory" in s


def rss_bytes():
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


def ram_bytes():
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError):
        return 16e9


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "CPU"


def nvml_used():
    """Bytes in use on GPU 0 as NVML sees it (no CUDA context needed), or
    None without pynvml."""
    try:
        import pynvml
        pynvml.nvmlInit()
        return pynvml.nvmlDeviceGetMemoryInfo(pynvml.nvmlDeviceGetHandleByIndex(0)).used
    except Exception:
        return None


def driver_version():
    try:
        r = subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                           capture_output=True, text=True, timeout=10)
        return r.stdout.strip().splitlines()[0] if r.returncode == 0 and r.stdout.strip() else "?"
    except (OSError, subprocess.SubprocessError, IndexError):
        return "?"


# ---- 1. matrix products and convolutions ----------------------------------

def matmul_grid(cuda, quick):
    """(op, M, N, K, B) from tiny to large, by FLOPs."""
    if cuda:
        sq = (64, 256, 1024, 4096) if quick else (32, 64, 128, 256, 512, 1024, 2048, 4096, 8192)
        odd = (3000,) if quick else (1000, 3000, 5000)
        lin = ((256, 1000, 2048), (4096, 4096, 1024)) if quick else \
            ((8, 4096, 4096), (256, 1000, 2048), (4096, 4096, 1024), (4096, 1024, 4096),
             (12608, 3072, 768), (12608, 768, 3072))
        bmm = ((96, 197, 197, 64), (16, 512, 512, 64)) if quick else \
            ((512, 32, 32, 32), (128, 64, 64, 64), (96, 197, 197, 64), (96, 197, 64, 197),
             (16, 512, 512, 64), (32, 1024, 1024, 128))
    else:
        sq = (16, 64, 128, 256, 512) if quick else (16, 32, 64, 128, 256, 384, 512, 768, 1024)
        odd = (100, 300) if quick else (100, 300, 1000)
        lin = ((8, 512, 512), (64, 1000, 512)) if quick else \
            ((8, 512, 512), (64, 1000, 512), (256, 256, 1024), (1024, 512, 512))
        bmm = ((8, 128, 128, 64), (12, 197, 197, 64)) if quick else \
            ((64, 32, 32, 32), (8, 256, 256, 64), (12, 197, 197, 64), (12, 197, 64, 197))
    items = [("matmul", n, n, n, 1) for n in sq + odd]
    items += [("linear", m, n, k, 1) for m, n, k in lin]
    items += [("bmm", m, n, k, b) for b, m, n, k in bmm]
    return sorted(items, key=lambda i: (2 * i[1] * i[2] * i[3] * i[4], i[0]))


def coverage(items):
    """Every other item and the last, then the rest, each pass from the
    smallest: a box that runs out still spans the sizes."""
    first = items[::2] + ([items[-1]] if len(items) % 2 == 0 else [])
    return first + [i for i in items if i not in first]


def boxed(items, box, flops, run):
    """run(item) for the items in coverage order, each that fits what is
    left of the box at the rate of the last one measured (three calls and
    a profile); run returns the seconds of a call, or None.  The first
    always runs."""
    rate, done = None, 0
    for item in coverage(items):
        fl = flops(item)
        if done and 3 * fl / rate + 0.05 > box.left():
            continue
        t = run(item)
        if t:
            rate, done = fl / t, done + 1
    return done


def sec_matmul(P, clock):
    torch, F = P.torch, P.torch.nn.functional
    precs = P.precisions()
    grid = matmul_grid(P.cuda, P.quick)
    for i, prec in enumerate(precs):
        box = clock.share(len(precs) - i)
        with P.precision(prec) as dt:
            def run(item):
                op, M, N, K, B = item
                a = b = fn = None
                try:
                    if op == "matmul":
                        a, b = P.randn(M, K, dtype=dt), P.randn(K, N, dtype=dt)
                        fn = lambda: torch.matmul(a, b)
                    elif op == "linear":
                        a, b = P.randn(M, K, dtype=dt), P.randn(N, K, dtype=dt)
                        fn = lambda: F.linear(a, b)
                    else:
                        a, b = P.randn(B, M, K, dtype=dt), P.randn(B, K, N, dtype=dt)
                        fn = lambda: torch.bmm(a, b)
                    t = P.measure(fn)
                    names = P.kernels(fn, t)
                except RuntimeError as e:
                    if not too_big(e):
                        note("matmul %s %s %dx%dx%d: %s" % (op, prec, M, N, K, one_line(e)))
                    return None
                finally:
                    a = b = fn = None
                shape = "%dx%dx%d" % (M, N, K) + ("x%d" % B if B > 1 else "")
                P.out.row("matmul", op, prec, "", shape, 2.0 * B * M * N * K,
                          ELEM[prec] * B * (M * K + K * N + M * N), t, names, mnkb=(M, N, K, B))
                return t
            done = boxed(grid, box, lambda i: 2.0 * i[1] * i[2] * i[3] * i[4], run)
        P.free()
        note("matmul %s: %d of %d products, best %.4g TFLOP/s" % (
            prec, done, len(grid), max((r["flops"] / r["seconds"]
                                        for r in P.out.select("matmul", None, prec)),
                                       default=0) / 1e12))


# (label, C, H, W, K, R, stride, groups): ResNet's, MobileNet's, ResNeXt's
CONVS = (("7x7s2", 3, 224, 224, 64, 7, 2, 1),
         ("1x1", 256, 56, 56, 64, 1, 1, 1),
         ("1x1", 64, 56, 56, 256, 1, 1, 1),
         ("3x3", 64, 56, 56, 64, 3, 1, 1),
         ("3x3s2", 128, 56, 56, 128, 3, 2, 1),
         ("3x3", 256, 14, 14, 256, 3, 1, 1),
         ("1x1", 1024, 14, 14, 256, 1, 1, 1),
         ("3x3", 512, 7, 7, 512, 3, 1, 1),
         ("dw3x3", 96, 112, 112, 96, 3, 1, 96),
         ("dw3x3", 384, 28, 28, 384, 3, 1, 384),
         ("grouped", 128, 56, 56, 128, 3, 1, 32))
QUICK_CONVS = (0, 1, 3, 4, 5, 8, 10)


def sec_conv(P, clock):
    torch, F = P.torch, P.torch.nn.functional
    precs = P.precisions()
    N = (32 if P.quick else 64) if P.cuda else (1 if P.quick else 2)
    shapes = [CONVS[i] for i in QUICK_CONVS] if P.quick else list(CONVS)
    ops = ("conv2d_fwd", "conv2d_bwd_data", "conv2d_bwd_weight")

    def flops(item):
        (label, C, H, W, K, R, st, g), op = item
        pad = R // 2
        Ho, Wo = (H + 2 * pad - R) // st + 1, (W + 2 * pad - R) // st + 1
        return 2.0 * N * K * Ho * Wo * (C // g) * R * R
    items = sorted(((s, op) for s in shapes for op in ops), key=flops)
    layouts = ("NCHW", "channels_last")
    parts = len(precs) * len(layouts)
    k = 0
    for prec in precs:
        with P.precision(prec) as dt:
            for layout in layouts:
                box = clock.share(parts - k)
                k += 1
                cl = layout == "channels_last"

                def run(item):
                    (label, C, H, W, K, R, st, g), op = item
                    pad = R // 2
                    Ho, Wo = (H + 2 * pad - R) // st + 1, (W + 2 * pad - R) // st + 1
                    shape = "%dx%dx%dx%d:%dx%dx%d/%d" % (N, C, H, W, K, R, R, st) + \
                        ("g%d" % g if g > 1 else "")
                    x = w = y = dy = fn = wrt = None
                    try:
                        x = P.randn(N, C, H, W, dtype=dt, channels_last=cl)
                        w = P.randn(K, C // g, R, R, dtype=dt, channels_last=cl)
                        if op == "conv2d_fwd":
                            fn = lambda: F.conv2d(x, w, None, st, pad, 1, g)
                        else:
                            wrt = x if op == "conv2d_bwd_data" else w
                            wrt.requires_grad_()
                            y = F.conv2d(x, w, None, st, pad, 1, g)
                            dy = torch.randn_like(y)
                            fn = lambda: torch.autograd.grad(y, wrt, dy, retain_graph=True)
                        t = P.measure(fn)
                        names = P.kernels(fn, t)
                    except RuntimeError as e:
                        if not too_big(e):
                            note("conv %s %s %s %s: %s" % (op, prec, layout, shape, one_line(e)))
                        return None
                    finally:
                        x = w = y = dy = fn = wrt = None
                    P.out.row("conv", op, prec, layout, shape, flops(item),
                              ELEM[prec] * (N * C * H * W + K * (C // g) * R * R + N * K * Ho * Wo),
                              t, names, depthwise=g == C and g > 1)
                    return t
                done = boxed(items, box, flops, run)
                P.free()
                note("conv %s %s: %d of %d measurements" % (prec, layout, done, len(items)))


# ---- 2. element-wise and batch norm bandwidth ------------------------------

def sec_memory(P, clock):
    torch, F = P.torch, P.torch.nn.functional
    if P.cuda:
        exps = range(16, 27, 2) if P.quick else range(14, 29, 2)
        bn_n = (8, 32) if P.quick else (1, 8, 32, 128)
    else:
        exps = range(12, 25, 2) if P.quick else range(10, 27, 2)
        bn_n = (1, 2) if P.quick else (1, 4, 8)
    box = clock.share(2)
    bw = None
    for e in exps:
        n = 1 << e
        for op, moved in (("copy", 2), ("add", 3)):
            nbytes = moved * 4 * n
            if bw and 4 * nbytes / bw + 0.01 > box.left():
                break
            x = y = z = None
            try:
                x, y = P.randn(n), P.randn(n)
                z = torch.empty_like(x)
                fn = (lambda: y.copy_(x)) if op == "copy" else (lambda: torch.add(x, y, out=z))
                t = P.measure(fn)
                names = P.kernels(fn, t)
            except RuntimeError as err:
                if not too_big(err):
                    note("memory %s %d: %s" % (op, n, one_line(err)))
                continue
            finally:
                x = y = z = fn = None
            P.out.row("memory", op, "fp32", "", str(n), None, nbytes, t, names)
            bw = min(bw or math.inf, nbytes / t)
    P.free()
    for layout in ("NCHW", "channels_last"):
        box = clock.share(2 if layout == "NCHW" else 1)
        cl = layout == "channels_last"
        bw = None
        for N in bn_n:
            shape = (N, 64, 56, 56)
            E = N * 64 * 56 * 56
            for op, passes in (("batch_norm_fwd", 3), ("batch_norm_bwd", 5)):
                nbytes = passes * 4 * E
                if bw and 4 * nbytes / bw + 0.01 > box.left():
                    break
                x = y = dy = fn = None
                try:
                    x = P.randn(*shape, channels_last=cl)
                    rm = torch.zeros(64, device=P.dev)
                    rv = torch.ones(64, device=P.dev)
                    wt = torch.ones(64, device=P.dev, requires_grad=True)
                    b = torch.zeros(64, device=P.dev, requires_grad=True)
                    if op == "batch_norm_fwd":
                        fn = lambda: F.batch_norm(x, rm, rv, wt, b, True, 0.1, 1e-5)
                    else:
                        x.requires_grad_()
                        y = F.batch_norm(x, rm, rv, wt, b, True, 0.1, 1e-5)
                        dy = torch.randn_like(y)
                        fn = lambda: torch.autograd.grad(y, (x, wt, b), dy, retain_graph=True)
                    t = P.measure(fn)
                    names = P.kernels(fn, t)
                except RuntimeError as err:
                    if not too_big(err):
                        note("memory %s %s: %s" % (op, layout, one_line(err)))
                    continue
                finally:
                    x = y = dy = fn = None
                P.out.row("memory", op, "fp32", layout, "%dx%dx%dx%d" % shape, None, nbytes, t,
                          names)
                bw = min(bw or math.inf, nbytes / t)
    P.free()
    best = best_bandwidth(P.out)
    note("memory: best copy/add %.4g GB/s" % (best / 1e9 if best else 0))


def best_bandwidth(out):
    """The best copy or add bandwidth among the largest sizes measured
    (an eighth of the largest or more: past the caches)."""
    rows = out.select("memory", ("copy", "add"))
    if not rows:
        return None
    top = max(r["bytes"] for r in rows)
    return max(r["bytes"] / r["seconds"] for r in rows if r["bytes"] >= top / 8)


# ---- 3. the launch floor ---------------------------------------------------

def sec_launch(P, clock):
    x = P.torch.zeros(1, device=P.dev)
    fn = lambda: x.add_(1)
    t = P.measure(fn, target=min(0.1, max(clock.left() / 2, 0.01)), sample=5e-3)
    P.out.row("launch", "add_", "fp32", "", "1", 1, 8, t, P.kernels(fn))
    note("launch: a trivial kernel back to back %.3g us" % (t * 1e6))


# ---- 4. the host's cost per operator ---------------------------------------

def sec_host(P, clock):
    torch, F = P.torch, P.torch.nn.functional
    rounds = 7 if P.quick else 15
    dev = P.dev

    def per_call(fn, n=300):
        """The median over rounds of the CPU's time per call, issued back
        to back without a sync (the GPU drains between rounds)."""
        fn()
        P.sync()
        got = []
        for _ in range(rounds):
            t = time.perf_counter()
            for _ in range(n):
                fn()
            got.append((time.perf_counter() - t) / n)
            P.sync()
        return median(got)

    x = torch.ones(1, device=dev, requires_grad=True)
    y = torch.ones(1, device=dev)
    fwd = per_call(lambda: x + y)
    P.out.row("host", "dispatch_fwd", "fp32", "", "1", None, None, fwd)

    def items():
        # backward: autograd's engine node per operator, over a chain
        def bwd(n=300):
            got = []
            for _ in range(rounds):
                z = x
                for _ in range(n):
                    z = z + y
                P.sync()
                t = time.perf_counter()
                z.backward()
                got.append((time.perf_counter() - t) / n)
                P.sync()
                x.grad = None
            return median(got)
        yield "dispatch_bwd", "fp32", "1", bwd
        ac = torch.float16 if P.cuda else torch.bfloat16
        acname = "fp16" if P.cuda else "bf16"

        def autocast_add():
            with torch.autocast(device_type=dev.type, dtype=ac):
                return per_call(lambda: x + y)
        yield "dispatch_autocast", acname, "1", autocast_add
        xi = torch.ones(1, 1, 4, 4, device=dev, requires_grad=True)
        wi = torch.ones(1, 1, 1, 1, device=dev, requires_grad=True)
        yield "conv2d_call", "fp32", "1x1x4x4:1x1x1/1", lambda: per_call(lambda: F.conv2d(xi, wi))
        for N in ((64, 322) if P.quick else (64, 161, 322, 644)):
            yield "step_tensor", "fp32", str(N), lambda N=N: step_tensor(torch, dev, N, rounds, P.sync)

    for op, prec, shape, fn in items():
        if clock.left() <= 0:
            note("host: out of time before %s" % op)
            break
        try:
            t = fn()
        except RuntimeError as e:  # one that does not run here leaves the others
            note("host %s: %s" % (op, one_line(e)))
            continue
        P.out.row("host", op, prec, "", shape, None, None, t)
    h = host_costs(P.out)
    note("host: dispatch %.3g us, library_call %s, step_tensor %s" %
         (h["dispatch"] * 1e6, "%.3g us" % (h["library_call"] * 1e6) if "library_call" in h else "-",
          "%.3g us" % (h["step_tensor"] * 1e6) if "step_tensor" in h else "-"))


def step_tensor(torch, dev, N, rounds, sync, n=30):
    """Seconds per tensor of torch.optim's foreach SGD step (momentum)
    over N one-element parameters, less the same three foreach calls made
    directly (tools/host_costs.py): its Python loop over the tensors."""
    ps = [torch.nn.Parameter(torch.randn(1, device=dev)) for _ in range(N)]
    for p in ps:
        p.grad = torch.randn(1, device=dev)
    opt = torch.optim.SGD(ps, lr=0.01, momentum=0.9, foreach=True)
    opt.step()
    bufs = [opt.state[p]["momentum_buffer"] for p in ps]
    grads = [p.grad for p in ps]

    def direct():
        with torch.no_grad():
            torch._foreach_mul_(bufs, 0.9)
            torch._foreach_add_(bufs, grads, alpha=1)
            torch._foreach_add_(ps, bufs, alpha=-0.01)

    def mean(fn):
        t = time.perf_counter()
        for _ in range(n):
            fn()
        dt = (time.perf_counter() - t) / n
        sync()
        return dt
    for _ in range(5):
        opt.step()
        direct()
    sync()
    # a difference of two timings: on a loaded CPU the noise can pass the
    # loop's cost, and a negative time is none the run could resolve
    return max(median(mean(opt.step) - mean(direct) for _ in range(rounds)) / N, 0.0)


def host_costs(out):
    got = {r["op"]: r["seconds"] for r in out.select("host")}
    h = {}
    if "dispatch_fwd" in got:
        h["dispatch"] = got["dispatch_fwd"]
        if "conv2d_call" in got:
            h["library_call"] = max(got["conv2d_call"] - got["dispatch_fwd"], 0.0)
    steps = [r["seconds"] for r in out.select("host", "step_tensor")]
    if steps:
        h["step_tensor"] = max(median(steps), 0.0)
    for k in ("dispatch_bwd", "dispatch_autocast", "conv2d_call"):
        if k in got:
            h[k] = got[k]
    return h


# ---- 5. the allocator and the context ---------------------------------------

def sec_allocator(P, clock):
    torch = P.torch
    if not P.cuda:
        P.out.row("allocator", "process", "", "", "", None, P.rss_import, None)
        note("allocator: the process after import torch holds %.3g MB" % (P.rss_import / 1e6))
        return
    torch.cuda.synchronize()
    torch.cuda.empty_cache()
    kept = torch.cuda.memory_reserved()       # what empty_cache leaves (workspaces)
    free, total = torch.cuda.mem_get_info()
    after = nvml_used()
    if P.nvml_before is not None and after is not None:
        context = max(after - P.nvml_before - kept, 0)
        how = "NVML's used memory before and after the CUDA context, less the allocator's"
    else:
        context = max(total - free - kept, 0)
        how = "the device's used memory (mem_get_info) less the allocator's; others' use included"
    P.out.row("allocator", "context", "", "", "", None, context, None)
    P.out.row("allocator", "workspaces", "", "", "", None, kept, None)
    # a model's tensors: ResNet-50-like parameters, fp16 activations of a
    # batch of 32 kept in forward, half freed in backward as gradients come
    sizes = [64, 256, 4096, 16384, 36864, 65536, 147456, 262144, 589824, 1048576, 2359296]
    act = [32 * c * s * s for c, s in ((64, 112), (256, 56), (64, 56), (512, 28), (128, 28),
                                        (1024, 14), (256, 14), (2048, 7), (512, 7))]
    base = torch.cuda.memory_allocated()
    slack = 0
    keep = []
    try:
        params = [torch.empty(sizes[i % len(sizes)], device=P.dev) for i in range(161)]
        for i in range(53):
            keep.append(torch.empty(act[i % len(act)], dtype=torch.float16, device=P.dev))
            slack = max(slack, torch.cuda.memory_reserved() - torch.cuda.memory_allocated())
        grads = []
        for i, p in enumerate(params):
            if i % 3 == 0 and keep:
                keep.pop()
            grads.append(torch.empty_like(p))
            slack = max(slack, torch.cuda.memory_reserved() - torch.cuda.memory_allocated())
        peak = torch.cuda.memory_allocated() - base
    except RuntimeError as e:
        note("allocator: %s" % one_line(e))
        peak = 0
    finally:
        params = grads = keep = None
        torch.cuda.empty_cache()
    P.out.row("allocator", "slack", "", "", "", None, slack, None)
    P.info["context_how"] = how
    note("allocator: context %.3g GB, workspaces %.3g GB, slack %.3g GB at %.3g GB allocated" %
         (context / 1e9, kept / 1e9, slack / 1e9, peak / 1e9))


# ---- 6. collectives ---------------------------------------------------------

def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _collective_rank(rank, world, port, cuda, threads, sizes, deadline, q):
    """One rank: each collective by message size, while rank 0 has time."""
    try:
        torch, dist, dev, sync = probe_collectives.join(rank, world, port, cuda, threads)
        flag = torch.zeros(1, device=dev)
        for op in ("all_reduce", "all_gather", "broadcast"):
            for m in sizes:
                # rank 0 says whether there is time; the all-reduce's
                # smallest and 1 MB messages always run (the ring's fit)
                must = op == "all_reduce" and m in (sizes[0], 1 << 20)
                flag.fill_(1.0 if rank != 0 or must or time.time() < deadline else 0.0)
                dist.broadcast(flag, 0)
                if flag.item() == 0:
                    continue
                n = max(1, m // 4)
                if op == "all_gather":
                    part = torch.ones(max(1, n // world), device=dev)
                    outs = [torch.empty_like(part) for _ in range(world)]
                    m = 4 * part.numel() * world
                    fn = lambda: dist.all_gather(outs, part)
                else:
                    buf = torch.ones(n, device=dev)
                    m = 4 * n
                    fn = (lambda: dist.all_reduce(buf)) if op == "all_reduce" else \
                        (lambda: dist.broadcast(buf, 0))
                reps = 50 if m <= 65536 else 20 if m <= 4 << 20 else 5
                for _ in range(2):
                    fn()
                sync()
                sec = probe_collectives.seconds(fn, reps, dist, sync)
                if rank == 0:
                    q.put(("row", op, m, sec))
        dist.destroy_process_group()
        q.put(("done",))
    except Exception as e:
        q.put(("error", rank, one_line(e)))


# seconds past its box that a section with processes waits for them (their
# start, import torch and the rendezvous, is slow on a loaded machine)
GRACE = 20


def spawn(target, nprocs, args, clock, on_message):
    """Runs target(rank, *args, q) in nprocs processes (spawned), passing
    what they put on the queue to on_message until every rank is done
    (each says so after its rows), one fails or the box is spent; the
    processes are ended either way."""
    import torch.multiprocessing as mp
    ctx = mp.get_context("spawn")
    q = ctx.Queue()
    procs = [ctx.Process(target=target, args=(r,) + tuple(args) + (q,), daemon=True)
             for r in range(nprocs)]
    error = None
    done = 0
    try:
        for p in procs:
            p.start()
        while True:
            try:
                msg = q.get(timeout=0.2)
            except queue.Empty:
                if clock.left() < -GRACE:
                    error = "out of time"
                    break
                if all(not p.is_alive() for p in procs) and q.empty():
                    error = error or "its processes stopped (exit status %s)" % \
                        ",".join(str(p.exitcode) for p in procs)
                    break
                continue
            if msg[0] == "done":
                done += 1
                if done == nprocs:
                    break
                continue
            if msg[0] == "error":
                error = "rank %d: %s" % (msg[1], msg[2])
                break
            on_message(msg)
    finally:
        for p in procs:
            p.join(timeout=5 if error is None else 0.5)
        for p in procs:
            if p.is_alive():
                p.terminate()
                p.join(timeout=5)
    return error


def sec_collectives(P, clock):
    torch = P.torch
    if P.cuda:
        world = min(torch.cuda.device_count(), 8)
        layout = "nccl, %d ranks" % world
    else:
        world = P.ranks
        layout = "gloo, %d ranks" % world
    top = 24 if P.quick else 26      # 16 MB, 64 MB
    sizes = [4 << (2 * i) for i in range(top // 2)]
    # the children's start (import torch, the rendezvous) comes out of the box
    deadline = time.time() + max(clock.left() - 2, 1)

    def row(msg):
        _, op, m, t = msg
        P.out.row("collectives", op, "fp32", layout, str(m), None, m, t)
    err = spawn(_collective_rank, world, (world, free_port(), P.cuda, P.threads, sizes, deadline),
                clock, row)
    if err:
        note("collectives: %s" % err)
    P.info["world"] = world
    fit = ring_fit(P)
    if fit:
        note("collectives (%s): all-reduce latency %.3g us, bandwidth %.4g GB/s" %
             (layout, fit[0] * 1e6, fit[1] / 1e9))


def ring_fit(P):
    pts = [(r["bytes"], r["seconds"]) for r in P.out.select("collectives", "all_reduce")]
    return probe_model.fit_ring(pts, P.info.get("world", 2)) if len(pts) >= 2 else None


# ---- 7. ranks sharing a CPU ------------------------------------------------

def _share_rank(rank, threads, barrier, duration, jobs, q):
    """One of several ranks at once: calls of each job for `duration`
    seconds, started together."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        import torch
        import torch.nn.functional as F
        torch.set_num_threads(threads)
        for name, prec, shape in jobs:
            dt = torch.bfloat16 if prec == "bf16" else torch.float32
            if name == "matmul":
                n = shape
                a = torch.randn(n, n, dtype=dt)
                fn = lambda: torch.mm(a, a)
            else:
                x = torch.randn(*shape[0], dtype=dt)
                w = torch.randn(*shape[1], dtype=dt)
                fn = lambda: F.conv2d(x, w, None, 1, 1)
            fn()
            barrier.wait(timeout=60)
            calls, t = 0, time.perf_counter()
            while True:
                fn()
                calls += 1
                el = time.perf_counter() - t
                if el >= duration:
                    break
            q.put(("row", rank, name, prec, el / calls))
        q.put(("done",))
    except Exception as e:
        q.put(("error", rank, one_line(e)))


def sec_ranks(P, clock):
    import torch.multiprocessing as mp
    counts = sorted({1, 2, P.ranks} & set(range(1, P.cores + 1))) or [1]
    n = 128 if P.quick else 256
    conv = ((1, 64, 56, 56), (64, 64, 3, 3))
    jobs = [("matmul", "fp32", n), ("conv2d", "fp32", conv)]
    if "bf16" in P.precisions():
        jobs.append(("matmul", "bf16", 2 * n))
    flops = {"matmul": lambda s: 2.0 * s ** 3,
             "conv2d": lambda s: 2.0 * 64 * 56 * 56 * 64 * 9}
    shapes = {"matmul": lambda s: "%dx%dx%d" % (s, s, s),
              "conv2d": lambda s: "1x64x56x56:64x3x3/1"}
    P.info["ranks"] = {}
    for i, r in enumerate(counts):
        box = clock.share(len(counts) - i)
        threads = max(1, P.cores // r)
        duration = max(0.2, (box.left() - 4) / len(jobs))
        ctx = mp.get_context("spawn")
        barrier = ctx.Barrier(r)
        got = {}

        def take(msg):
            got.setdefault((msg[2], msg[3]), []).append(msg[4])
        err = spawn(_share_rank, r, (threads, barrier, duration, jobs), box, take)
        if err:
            note("ranks=%d: %s" % (r, err))
        for name, prec, shape in jobs:
            if (name, prec) not in got:
                continue
            t = median(got[(name, prec)])
            fl = flops[name](shape)
            P.out.row("ranks", name, prec, "ranks=%d threads=%d" % (r, threads),
                      shapes[name](shape), fl, None, t)
            P.info["ranks"].setdefault((name, prec), {})[r] = fl / t
    for (name, prec), by in sorted(P.info["ranks"].items()):
        note("ranks: %s %s a rank: %s" % (name, prec, ", ".join(
            "%d ranks %.3g GFLOP/s" % (r, v / 1e9) for r, v in sorted(by.items()))))


# ---- 8. the model's own kernels (--model) ---------------------------------------

def keyed(a):
    """Whether the probe times a model's keys: --model or --needed."""
    return bool(a.model or a.needed)


def model_keys(P):
    """{Key: {N}} of --model: at each --precision, every key and batch
    oraclec's pricing of the --strategies on --gpus looks up
    (probe_kernels.kernels_needed); of --needed: its file's.  Raises
    RuntimeError with oraclec's first line, or the file's fault."""
    a = P.args
    if a.needed:
        return probe_kernels.read_needed(a.needed)
    want = {}
    for prec in a.precision:
        for k, ns in probe_kernels.kernels_needed(a.oraclec, a.model, a.batch, a.gpus,
                                                  a.strategies, prec,
                                                  a.channels_last).items():
            want.setdefault(k, set()).update(ns)
    return want


def sec_model(P, clock):
    """Every key at every batch not yet in the table, in chunks of a few
    keys: each chunk's calls measured in interleaved rounds, the rows
    whose repeats spread more than 10 % measured again (the rounds with
    the smaller spread kept), the table rewritten after each chunk (a cut
    probe keeps them; --resume starts from them)."""
    torch = P.torch
    reps = 5 if P.quick else 7
    sample = (0.005 if P.quick else 0.02) if P.cuda else (0.01 if P.quick else 0.05)
    todo = [(k, n) for k in sorted(P.model_want) for n in sorted(P.model_want[k])
            if (k, n) not in P.kernel_rows]
    note("model: %d keys at %d batches; %d rows to measure, %d from the table" % (
        len(P.model_want), sum(len(v) for v in P.model_want.values()), len(todo),
        len(P.kernel_rows)))
    done = unknown = 0
    wide = []
    # a few keys at a time, each chunk of one number format (TF32's
    # switches set while it is built and timed)
    chunks = []
    for prec in sorted({k.prec for k, _ in todo}):
        mine = [kn for kn in todo if kn[0].prec == prec]
        chunks += [(prec, mine[i:i + 6]) for i in range(0, len(mine), 6)]
    for c, (prec, chunk) in enumerate(chunks):
        if clock.left() <= 0:
            note("model: out of time with %d rows left (--resume goes on)" %
                 sum(len(ch) for _, ch in chunks[c:]))
            break
        with P.precision(prec):
            rows, none = model_chunk(P, chunk, reps, sample, clock)
        unknown += none
        for kn, r in rows.items():
            P.kernel_rows[kn] = r
            done += 1
            if r["spread"] > probe_kernels.SPREAD_LIMIT:
                wide.append(kn)
        P.free()
        write_kernels(P)
    if unknown:
        note("model: %d rows of keys this probe cannot time (the model prices them)" % unknown)
    P.info["model"] = (done, len(wide))
    if wide:
        note("model: warning: %d row%s spread more than %.0f %% after measuring again (a busy "
             "machine?): %s" % (len(wide), "s" * (len(wide) > 1),
                                100 * probe_kernels.SPREAD_LIMIT, "; ".join(
                                    "%s %s n=%d" % (k.klass, k.shape, n) for k, n in wide[:4]) +
                                ("; ..." if len(wide) > 4 else "")))
    note("model: %d rows measured, %d in the table" % (done, len(P.kernel_rows)))


def model_chunk(P, chunk, reps, sample, clock):
    """The rows of a chunk of (key, N): {(key, N): row}, and how many of
    its keys this probe cannot time."""
    items, unknown = [], 0
    for key, n in chunk:
        try:
            fns = probe_kernels.operators(P.torch, key, n, P.dev, P.cuda)
        except (RuntimeError, ValueError, TypeError) as e:
            note("model: %s %s n=%d: %s" % (key.klass, key.shape, n, one_line(e)))
            fns = {}
        unknown += not fns
        items += [probe_kernels.Item(key, n, part, fn) for part, fn in fns.items()]
    try:
        probe_kernels.interleaved(items, reps, sample, P.sync, clock)
        again = [i for i in items if probe_kernels.spread(i.samples) > probe_kernels.SPREAD_LIMIT]
        if again and clock.left() > 0:
            first = {id(i): i.samples for i in again}
            for i in again:
                i.samples = []
            probe_kernels.interleaved(again, reps, sample, P.sync, clock)
            for i in again:
                if len(i.samples) < reps or probe_kernels.spread(first[id(i)]) <= \
                        probe_kernels.spread(i.samples):
                    i.samples = first[id(i)]
    except RuntimeError as e:
        note("model: %s" % one_line(e))
    rows = {}
    for i in items:
        if not i.samples:
            continue
        r = rows.setdefault((i.key, i.n), {"spread": 0.0, "repeats": len(i.samples)})
        r[i.part] = median(i.samples)
        r["spread"] = max(r["spread"], probe_kernels.spread(i.samples))
        r["repeats"] = min(r["repeats"], len(i.samples))
        if i.part == "fwd":
            r["kernel"] = P.kernels(i.fn, r[i.part])
    return {kn: r for kn, r in rows.items() if r.get("fwd") is not None}, unknown


def write_kernels(P):
    if keyed(P.args):
        P.out.write("kernels.csv", probe_kernels.table_text(kernel_notes(P), P.kernel_rows))


def kernel_notes(P):
    """The table's provenance: what --resume checks (the device) first."""
    a = P.args
    return ["oraclec kernel table (docs/kernel-table.md): python3 -m oraclec.probe --model",
            "device: %s" % device_text(P),
            "torch %s, python %s, host CPU %s" % (P.torch.__version__,
                                                  platform.python_version(), cpu_model()),
            "date: %s UTC" % P.info["date"],
            "command: %s" % P.info["command"],
            ("keys: %s (oraclec --kernels-needed's, made where oraclec runs)" % a.needed
             if a.needed else
             "model: %s at %d samples a device, precision %s%s; strategies %s on %d GPUs" % (
                 a.model, a.batch, ",".join(a.precision), ", channels_last" if
                 a.channels_last else "", ",".join(a.strategies), a.gpus))]


# ---- the system and the implementation --------------------------------------

def ident(name):
    s = re.sub(r"[^a-z0-9]+", "_", name.lower()).strip("_")
    return ("probe_" + s)[:60].rstrip("_")


def quantity(v, dim):
    """An ODL literal of v in the unit that keeps it readable."""
    units = {"flops": ((1e15, "PFLOPS"), (1e12, "TFLOPS"), (1e9, "GFLOPS"), (1e6, "MFLOPS"),
                       (1e3, "KFLOPS"), (1, "FLOPS")),
             "bw": ((1e12, "TB/s"), (1e9, "GB/s"), (1e6, "MB/s"), (1e3, "KB/s"), (1, "B/s")),
             "bytes": ((1e12, "TB"), (1e9, "GB"), (1e6, "MB"), (1e3, "KB")),
             "s": ((1, "s"), (1e-3, "ms"), (1e-6, "us"), (1e-9, "ns"))}[dim]
    for scale, unit in units:
        if abs(v) >= scale:
            break
    x = v / scale
    text = "%.4g" % x
    if "e" in text:
        text = ("%.6f" % x).rstrip("0").rstrip(".")
    return text + unit


def plain(v):
    text = "%.4g" % v
    return ("%.6f" % v).rstrip("0").rstrip(".") if "e" in text else text


def clamp_eff(v):
    return min(max(v, 1e-6), 1.0)


def analyse(P):
    """What the rows measured so far give each key: {key: (value, comment)}
    and the kernel fit."""
    out, keys = P.out, {}
    known = probe_gpus.lookup(P.name) if P.cuda else None
    precs = P.precisions() if P.cuda else (P._precisions or ["fp32"])
    h = host_costs(out)

    # peaks: the datasheet's where the device is known, else the best
    # matrix product or convolution measured (efficiency 1 at that rate)
    peaks = {}
    for prec in precs or ["fp32"]:
        rows = out.select("matmul", None, prec) + out.select("conv", None, prec)
        best = max((r["flops"] / r["seconds"] for r in rows), default=None)
        if known and known["peak"].get(prec):
            peaks[prec] = (known["peak"][prec], "datasheet (%s)%s" % (
                known["name"], "; best measured %s" % quantity(best, "flops") if best else ""))
        elif best:
            peaks[prec] = (best, "achieved: the best %s matrix product or convolution "
                                 "measured (efficiency 1 at this rate)" % prec)
    if "fp32" not in peaks:
        peaks["fp32"] = (1e13 if P.cuda else 1e11,
                         "placeholder: no fp32 product measured (--sections matmul,conv)")

    # memory
    best_bw = best_bandwidth(out)
    if known:
        mem_bw = (known["memory_bw"], "datasheet (%s)" % known["name"])
    elif best_bw:
        mem_bw = (best_bw, "the best copy/add bandwidth measured at the largest sizes")
    else:
        mem_bw = (1e12 if P.cuda else 1e10, "placeholder: not measured (--sections memory)")
    if best_bw:
        eff_mem = (clamp_eff(best_bw / mem_bw[0]),
                   "best copy/add at the largest sizes, %s, over memory_bw" % quantity(best_bw, "bw"))
    else:
        eff_mem = None

    # the launch floor (cpu: issuing is the host lane's, nothing on top)
    launch = out.select("launch")
    if not P.cuda:
        klat = (0.0, "the CPU computes what it issues: the per-operator cost is "
                     "dispatch's (host_device)%s" % (
                         "; a trivial op back to back took %s" % quantity(launch[0]["seconds"], "s")
                         if launch else ""))
    elif launch:
        klat = (launch[0]["seconds"], "a trivial kernel (add_ on one element) back to back, "
                                      "GPU time (CUDA events)")
    else:
        klat = None

    sms = P.props.multi_processor_count if P.cuda else P.threads
    # the kernel model's fit on the matrix products
    kl = klat[0] if klat else 5e-6
    em = eff_mem[0] if eff_mem else 0.8
    offset = 0.0 if P.cuda else h.get("dispatch", 0.0)
    groups = {}
    for prec in precs:
        rows = out.select("matmul", None, prec)
        if rows and prec in peaks:
            groups[prec] = (peaks[prec][0], [
                r["mnkb"] + (ELEM[prec], max(r["seconds"] - offset, 0.1 * r["seconds"]))
                for r in rows])
    fit = None
    if groups:
        try:
            fit = probe_model.fit_kernel(groups, sms, mem_bw[0], em, kl)
        except ImportError:
            note("no numpy: the kernel fit is left out")
    if fit:
        fit["error"] = probe_model.percentage_errors([(m, p) for _, m, p in fit["errors"]])
        fit["n"] = len(fit["errors"])
        fit["offset"] = offset

    # efficiencies
    for prec in precs:
        suffix = "" if prec == "fp32" else "_" + prec
        if prec not in peaks:
            continue
        peak = peaks[prec][0]
        mm = out.select("matmul", None, prec)
        if fit and prec in fit["u"]:
            top = max(mm, key=lambda r: r["flops"])
            keys["eff_gemm" + suffix] = (clamp_eff(fit["u"][prec]), (
                "u of the kernel model fitted to %d %s products (%s's largest reached %.3g of "
                "the peak)") % (len(mm), prec, top["shape"], top["flops"] / top["seconds"] / peak))
        elif mm:
            top = max(mm, key=lambda r: r["flops"])
            keys["eff_gemm" + suffix] = (clamp_eff(top["flops"] / top["seconds"] / peak),
                                         "the largest %s product's rate over the peak" % prec)
        cv = [r for r in out.select("conv", None, prec) if not r.get("depthwise")]
        if cv:
            cv.sort(key=lambda r: r["flops"])
            big = cv[len(cv) * 2 // 3:]
            keys["eff_conv" + suffix] = (
                clamp_eff(median(r["flops"] / r["seconds"] / peak for r in big)),
                "median rate over the peak of the %d largest %s convolutions (forward, data and "
                "weight gradients, both layouts; depthwise left out)" % (len(big), prec))

    for prec, (v, why) in peaks.items():
        keys[prec] = (v, why)
    keys["memory_bw"] = mem_bw
    if eff_mem:
        keys["eff_memory"] = eff_mem
    if klat:
        keys["kernel_latency"] = klat
    keys["sms"] = (sms, "multiprocessors (torch.cuda.get_device_properties)" if P.cuda else
                   "a rank's threads: the kernel model's parallel units")
    if fit:
        keys["tile_overhead"] = (fit["k0"], (
            "k0 of the kernel model, fitted with the efficiencies above: time's error median "
            "%.1f %%, mean %.1f %% over %d products%s") % (
                fit["error"][0], fit["error"][1], fit["n"],
                ", times less dispatch (%s)" % quantity(offset, "s") if offset else ""))

    # memory of one GPU (cpu: a rank's share of RAM) and what the runtime keeps
    if P.cuda:
        keys["memory"] = (P.props.total_memory, "torch.cuda.get_device_properties().total_memory")
        al = {r["op"]: r["bytes"] for r in out.select("allocator")}
        if "context" in al:
            keys["reserved"] = (al["context"] + al.get("workspaces", 0) + al.get("slack", 0), (
                "CUDA context %s (%s) + workspaces %s + the allocator's slack %s "
                "(reserved less allocated, a ResNet-50-like run)") % (
                    quantity(al["context"], "bytes"), P.info.get("context_how", ""),
                    quantity(max(al.get("workspaces", 0), 1e3), "bytes"),
                    quantity(max(al.get("slack", 0), 1e3), "bytes")))
    else:
        keys["memory"] = (ram_bytes() / P.ranks, "the machine's RAM over %d ranks" % P.ranks)
        al = out.select("allocator", "process")
        if al:
            keys["reserved"] = (al[0]["bytes"], "the process's resident memory after import torch "
                                                "(no caching allocator on the CPU)")

    # links
    fit_c = ring_fit(P)
    world = P.info.get("world")
    if fit_c:
        how = "%s, %d ranks, all-reduce fitted to 2(p-1)(alpha + m/(p bw))" % (
            "NCCL" if P.cuda else "gloo on localhost", world)
        pts = [(r["bytes"], r["seconds"]) for r in out.select("collectives", "all_reduce")]
        err = probe_model.percentage_errors(
            [(t, probe_model.ring_allreduce(m, world, fit_c[0], fit_c[1])) for m, t in pts])
        keys["intra_bw"] = (fit_c[1], "%s: messages of 1 MB and more (error median %.0f %%)" %
                            (how, err[0]))
        keys["intra_latency"] = (fit_c[0], "%s: the smallest messages" % how)
        P.info["ring_error"] = err
    elif known and known["link"]:
        keys["intra_bw"] = (known["link"][0], "not measured (one GPU): the %s's NVLink as the "
                                              "built-in systems take it" % known["name"])
        keys["intra_latency"] = (known["link"][1], "not measured (one GPU)")
    else:
        keys["intra_bw"] = (25e9 if P.cuda else 1e9, "placeholder: not measured")
        keys["intra_latency"] = (10e-6 if P.cuda else 50e-6, "placeholder: not measured")
    keys["nic_bw"] = (keys["intra_bw"][0], "one node: nothing to measure; intra_bw's value")
    keys["nic_latency"] = (keys["intra_latency"][0], "one node: intra_latency's value")
    keys["gpus_per_node"] = (torch_device_count(P) if P.cuda else P.ranks,
                             "torch.cuda.device_count()" if P.cuda else
                             "the ranks sharing this CPU (--ranks): a \"GPU\" is one rank")
    keys["cpu_cores"] = (P.cores, "os.cpu_count()")
    return keys, fit, h


def torch_device_count(P):
    return P.torch.cuda.device_count()


def system_text(P, analysed):
    keys, fit, _ = analysed
    name = ident(P.name if P.cuda else "cpu " + P.name)
    lines = header(P, "system")
    if not P.cuda and "ranks" in P.info:
        for (op, prec), by in sorted(P.info["ranks"].items()):
            lines.append("// ranks sharing the cores, %s %s a rank: %s" % (op, prec, ", ".join(
                "%d ranks %s" % (r, quantity(v, "flops")) for r, v in sorted(by.items()))))
    lines.append("system %s {" % name)

    def put(key, text, why=None):
        lines.append("    %s = %s;%s" % (key, text, "  // " + why if why else ""))

    def q(key, dim):
        if key in keys:
            put(key, quantity(keys[key][0], dim), keys[key][1])

    def n(key):
        if key in keys:
            put(key, plain(keys[key][0]), keys[key][1])
    put("gpus_per_node", str(keys["gpus_per_node"][0]), keys["gpus_per_node"][1])
    if P.cuda:
        put("gpu", c_string(P.name), "torch.cuda.get_device_name()")
    else:
        put("gpu", c_string("CPU %s, %d thread%s" % (P.name, P.threads, "s" * (P.threads > 1))),
            "one rank's share of the cores (torch.set_num_threads)")
    for prec in ("fp32", "tf32", "fp16", "bf16"):
        q(prec, "flops")
    q("memory", "bytes")
    q("memory_bw", "bw")
    if "ring_error" in P.info:
        put("intra", c_string("nccl" if P.cuda else "gloo"), "the library the collectives ran on")
    else:
        put("intra", c_string("nvlink" if keys["intra_bw"][1].startswith("not measured")
                              else "pcie"), "a label: the link was not measured")
    q("intra_bw", "bw")
    q("intra_latency", "s")
    q("nic_bw", "bw")
    q("nic_latency", "s")
    put("implementation", '"implementation.odl"', "beside this file")
    if keyed(P.args):
        put("kernels", '"kernels.csv"', "the model's kernels by shape, beside this file "
            "(docs/kernel-table.md)")
    if "collectives_text" in P.info:
        put("collectives", '"collectives.txt"', "--collectives: nccl-tests' format, beside "
            "this file")
    if "jitter" in P.info:
        put("jitter", "%.4g" % min(P.info["jitter"], 1.0), "--collectives: a rank's "
            "step-to-step coefficient of variation")
    put("cpu_cores", str(keys["cpu_cores"][0]), keys["cpu_cores"][1])
    for k in ("eff_conv", "eff_gemm", "eff_conv_tf32", "eff_conv_fp16", "eff_conv_bf16",
              "eff_gemm_tf32", "eff_gemm_fp16", "eff_gemm_bf16", "eff_memory"):
        n(k)
    put("sms", str(keys["sms"][0]), keys["sms"][1])
    n("tile_overhead")
    if not P.cuda:
        put("host_device", "true", "the CPU issues and computes on the same cores")
    q("kernel_latency", "s")
    if "reserved" in keys:
        put("reserved", quantity(max(keys["reserved"][0], 1e3), "bytes"), keys["reserved"][1])
    lines.append("}")
    return "\n".join(lines) + "\n"


def implementation_text(P, analysed):
    _, _, h = analysed
    torch = P.torch
    lines = header(P, "implementation")
    lines.append("implementation %s {" % ident(P.name if P.cuda else "cpu " + P.name))

    def put(key, text, why):
        lines.append("    %s = %s;  // %s" % (key, text, why))
    put("base", '"pytorch-2"', "every key not given is pytorch-2's")
    put("framework", c_string("PyTorch %s (probed)" % torch.__version__), "reports")
    if "dispatch" in h:
        put("dispatch", quantity(h["dispatch"], "s"),
            "x + y on one-element tensors (x requires grad) issued back to back, median of "
            "rounds; backward %s a node (a chain of adds), under autocast %s" % (
                quantity(h["dispatch_bwd"], "s") if "dispatch_bwd" in h else "-",
                quantity(h["dispatch_autocast"], "s") if "dispatch_autocast" in h else "-"))
    if "library_call" in h:
        put("library_call", quantity(h["library_call"], "s"),
            "a 1x1 conv2d on a 4x4 image, %s a call, less dispatch" %
            quantity(h["conv2d_call"], "s"))
    if "step_tensor" in h:
        put("step_tensor", quantity(h["step_tensor"], "s"),
            "SGD momentum foreach over N one-element tensors less its three foreach calls, "
            "per tensor (tools/host_costs.py), median over N")
    major = int(re.match(r"\d+", torch.__version__).group())
    if major < 2 or not P.cuda:
        put("optimizer_step", '"per-op"', "torch.optim's default here: a loop of per-tensor "
            "ops (foreach is the default only on CUDA since 2.0)")
    lines.append("}")
    return "\n".join(lines) + "\n"


def c_string(s):
    return '"%s"' % s.replace("\\", "\\\\").replace('"', "'")


def device_text(P):
    torch = P.torch
    if P.cuda:
        return "%s, %d multiprocessors, CUDA %s, cuDNN %s, driver %s" % (
            P.name, P.props.multi_processor_count, torch.version.cuda,
            torch.backends.cudnn.version(), P.info["driver"])
    return "cpu, %s, %d cores; a rank = %d thread%s (--ranks %d)" % (
        P.name, P.cores, P.threads, "s" * (P.threads > 1), P.ranks)


def header(P, what):
    torch = P.torch
    known = probe_gpus.lookup(P.name) if P.cuda else None
    src = "// peaks and memory_bw: %s" % known["source"] if known and what == "system" else None
    lines = ["// %s measured by oraclec.probe (docs/probe.md)" % what,
             "// device: %s" % device_text(P),
             "// torch %s, python %s, host CPU %s" % (torch.__version__, platform.python_version(),
                                                     cpu_model()),
             "// date: %s UTC" % P.info["date"],
             "// command: %s" % P.info["command"],
             "// sections: %s" % (" ".join(P.ran) or "none yet")]
    if src:
        lines.append(src)
    return [" ".join(l.split("\n")) for l in lines]


def write_files(P):
    analysed = analyse(P)
    P.out.write("probe.csv", P.out.csv_text())
    P.out.write("system.odl", system_text(P, analysed))
    P.out.write("implementation.odl", implementation_text(P, analysed))
    write_kernels(P)
    if "collectives_text" in P.info:
        P.out.write("collectives.txt", P.info["collectives_text"])


def summary(P, elapsed):
    keys, fit, h = analyse(P)
    say = []
    say.append("oraclec.probe: %s, torch %s, %.0f s (%s)" % (
        P.name if P.cuda else "cpu %s, %d thread%s a rank, %d ranks" % (
            P.name, P.threads, "s" * (P.threads > 1), P.ranks),
        P.torch.__version__, elapsed, " ".join(P.ran)))
    if h:
        say.append("  host: dispatch %s, backward node %s, autocast %s; library_call %s; "
                   "step_tensor %s" % tuple(
                       quantity(h[k], "s") if k in h else "-" for k in (
                           "dispatch", "dispatch_bwd", "dispatch_autocast", "library_call",
                           "step_tensor")))
    for prec in ("fp32", "tf32", "fp16", "bf16"):
        if prec in keys:
            sfx = "" if prec == "fp32" else "_" + prec
            say.append("  %s: peak %s (%s); eff_gemm%s %s, eff_conv%s %s" % (
                prec, quantity(keys[prec][0], "flops"),
                "datasheet" if keys[prec][1].startswith("datasheet") else
                "placeholder" if keys[prec][1].startswith("placeholder") else "achieved",
                sfx, plain(keys["eff_gemm" + sfx][0]) if "eff_gemm" + sfx in keys else "-",
                sfx, plain(keys["eff_conv" + sfx][0]) if "eff_conv" + sfx in keys else "-"))
    say.append("  memory_bw %s, eff_memory %s; kernel_latency %s; sms %d; reserved %s" % (
        quantity(keys["memory_bw"][0], "bw"),
        plain(keys["eff_memory"][0]) if "eff_memory" in keys else "-",
        quantity(keys["kernel_latency"][0], "s") if "kernel_latency" in keys else "-",
        keys["sms"][0], quantity(keys["reserved"][0], "bytes") if "reserved" in keys else "-"))
    if "ring_error" in P.info:
        say.append("  collectives: intra_latency %s, intra_bw %s (ring fit error median %.0f %%)" %
                   (quantity(keys["intra_latency"][0], "s"), quantity(keys["intra_bw"][0], "bw"),
                    P.info["ring_error"][0]))
    if fit:
        say.append("  kernel fit: tile_overhead %s; time error median %.1f %%, mean %.1f %% "
                   "over %d products" % (plain(fit["k0"]), fit["error"][0], fit["error"][1],
                                         fit["n"]))
    if "model" in P.info:
        say.append("  model: %d rows measured, %d in kernels.csv; %d spread more than %.0f %%" % (
            P.info["model"][0], len(P.kernel_rows), P.info["model"][1],
            100 * probe_kernels.SPREAD_LIMIT))
    say.append("  wrote %s" % " ".join(os.path.join(P.out.dir, f) for f in
                                       ("system.odl", "implementation.odl", "probe.csv") +
                                       (("kernels.csv",) if keyed(P.args) else ())))
    print("\n".join(say), flush=True)


RUN = {"matmul": sec_matmul, "conv": sec_conv, "memory": sec_memory, "launch": sec_launch,
       "host": sec_host, "allocator": sec_allocator, "collectives": sec_collectives,
       "ranks": sec_ranks, "model": sec_model}


# ---- the command line ------------------------------------------------------

def int_in(lo, hi, what, why=""):
    """An argparse type: a whole number from lo to hi, the bounds said."""
    def f(text):
        try:
            v = int(text)
        except ValueError:
            v = None
        if v is None or not lo <= v <= hi:
            raise argparse.ArgumentTypeError("'%s' is not %s from %d to %d%s" % (
                shown(text), what, lo, hi, why))
        return v
    return f


def positive_float(text):
    try:
        v = float(text)
    except ValueError:
        v = 0
    if not v > 0 or math.isinf(v):
        raise argparse.ArgumentTypeError("'%s' is not a positive number of seconds" %
                                         shown(text))
    return v


def list_of(choices, what):
    def f(text):
        got = [x.strip() for x in text.split(",") if x.strip()]
        bad = [x for x in got if x not in choices]
        if bad or not got:
            raise argparse.ArgumentTypeError("unknown %s %s (choose from %s)" % (
                what, shown(",".join(bad)) or "''", ",".join(choices)))
        return [x for x in choices if x in got]
    return f


PRECISIONS = ("fp32", "tf32", "amp-fp16", "amp-bf16", "fp16", "bf16")


class Parser(argparse.ArgumentParser):
    """argparse with every value it quotes back escaped and cut as oraclec
    shows names (docs/limits.md: \\xNN, 64 bytes): a value can neither
    reach the terminal raw nor forge a line."""

    def parse_args(self, argv=None, namespace=None):
        self._argv = list(sys.argv[1:] if argv is None else argv)
        return super().parse_args(argv, namespace)

    def error(self, message):
        message = usage_message(message, getattr(self, "_argv", []))
        self.print_usage(sys.stderr)
        self.exit(2, "%s: error: %s\n" % (self.prog, message))


def parse(argv):
    ap = Parser(
        prog="python3 -m oraclec.probe",
        description="Measure this device and write DIR/system.odl, DIR/implementation.odl "
                    "and DIR/probe.csv for oraclec (docs/probe.md); with --model also "
                    "DIR/kernels.csv, the model's kernels by shape (docs/kernel-table.md).")
    cores = os.cpu_count() or 1
    ap.add_argument("-o", "--output", metavar="DIR", required=True,
                    help="the directory to write (created if missing)")
    ap.add_argument("--device", choices=("cuda", "cpu"),
                    help="what to measure (default: cuda when there is one, else cpu)")
    ap.add_argument("--quick", action="store_true",
                    help="a small grid: about 100 s in all (else about 5 minutes)")
    ap.add_argument("--ranks", type=int_in(1, min(MAX_RANKS, cores), "a number of ranks",
                                           " (the cores here; never more than %d)" % MAX_RANKS),
                    metavar="R",
                    help="cpu: the ranks that share the cores (default 2; from 1 to the %d "
                         "cores, at most %d); the system describes one rank, cores // R "
                         "threads" % (cores, MAX_RANKS))
    ap.add_argument("--sections", type=list_of(SECTIONS, "section"), metavar="LIST",
                    help="only these, comma-separated: " + ",".join(SECTIONS))
    ap.add_argument("--budget", type=positive_float, metavar="SECONDS",
                    help="the time all sections share (default: their own limits)")
    ap.add_argument("--collectives", action="store_true",
                    help="also measure each collective by size at 2 to all the ranks, in "
                         "nccl-tests' format, into DIR/collectives.txt, and a rank's step "
                         "jitter; system.odl names both (docs/probe.md)")
    m = ap.add_argument_group("the model's own kernels (docs/kernel-table.md)")
    m.add_argument("--model", metavar="FILE",
                   help="also time every distinct kernel of this model as oraclec lowers it "
                        "(ONNX, ODL, a ParaDL table) into DIR/kernels.csv, which system.odl "
                        "names")
    m.add_argument("--needed", metavar="FILE",
                   help="time the keys and batches of this file instead of --model's: the "
                        "CSV `oraclec M --kernels-needed` writes, made where oraclec runs, "
                        "for a device where it does not (bench/device.sh)")
    m.add_argument("--batch", type=int_in(1, 1 << 20, "a batch"), default=32, metavar="B",
                   help="samples per device, as oraclec's -b (default 32)")
    m.add_argument("--gpus", type=int_in(1, MAX_GPUS, "a number of GPUs"), default=1,
                   metavar="N", help="the devices the strategies span (default 1)")
    m.add_argument("--strategies", type=list_of(probe_kernels.STRATEGIES, "strategy"),
                   default=["data"], metavar="LIST",
                   help="the strategies whose batches and shards to time, as oraclec's "
                        "(default data)")
    m.add_argument("--precision", type=list_of(PRECISIONS, "precision"), default=["fp32"],
                   metavar="LIST", help="oraclec's precisions to key the layers at "
                                        "(default fp32)")
    m.add_argument("--channels-last", action="store_true",
                   help="activations in NHWC, as oraclec's --channels-last")
    m.add_argument("--resume", action="store_true",
                   help="keep the rows DIR/kernels.csv already has for this device")
    m.add_argument("--oraclec", metavar="PATH",
                   help="the oraclec that lowers --model (default: $ORACLEC, the source "
                        "tree's, else PATH's)")
    args = ap.parse_args(argv)
    if args.ranks and args.device == "cuda":
        ap.error("--ranks is for --device cpu (on cuda a rank is a GPU)")
    if args.model and args.needed:
        ap.error("--model and --needed both name the keys to time: give one")
    if args.sections and "model" in args.sections and not keyed(args):
        ap.error("--sections model needs --model or --needed")
    args.oraclec = probe_kernels.oraclec_path(args.oraclec)
    return args


def load_torch():
    try:
        import torch
    except ImportError:
        fail("%s has no torch: the probe needs PyTorch 1.13 or later (pip install torch; "
             "Debian: apt install python3-torch, then run /usr/bin/python3)" % sys.executable)
    except Exception as e:  # a torch that is there and does not load
        fail("%s: import torch failed: %s" % (sys.executable, one_line(e)))
    v = re.match(r"(\d+)\.(\d+)", torch.__version__)
    if not v or (int(v.group(1)), int(v.group(2))) < (1, 13):
        fail("%s has torch %s: the probe needs 1.13 or later" % (sys.executable, torch.__version__))
    if importlib.util.find_spec("numpy") is None:  # the kernel fit's
        fail("%s has no numpy: the probe's fits need it (pip install numpy)" % sys.executable)
    return torch


def check_dir(d):
    """-o DIR refused before anything is measured: a file, a directory this
    user cannot write in, or one whose outputs are not regular files."""
    if os.path.exists(d) and not os.path.isdir(d):
        fail("-o %s: exists and is not a directory" % path_shown(d))
    if os.path.isdir(d):
        writable(d)
        try:
            check_outputs(d)
        except OutputError as e:
            fail(str(e))


def prepare_dir(d):
    try:
        os.makedirs(d, exist_ok=True)
    except OSError as e:
        fail("-o %s: cannot create it: %s" % (path_shown(d), e.strerror or e))
    writable(d)


def writable(d):
    try:
        fd, tmp = tempfile.mkstemp(dir=d, prefix=".probe-")
        os.close(fd)
        os.unlink(tmp)
    except OSError as e:
        fail("-o %s: cannot write in it: %s" % (path_shown(d), e.strerror or e))


def on_signal(signum, frame):
    raise Interrupted(signal.Signals(signum).name)


def main(argv=None):
    args = parse(argv)
    started = time.monotonic()
    check_dir(args.output)
    torch = load_torch()
    if args.device is None:
        args.device = "cuda" if torch.cuda.is_available() else "cpu"
    if args.device == "cuda" and not torch.cuda.is_available():
        fail("--device cuda: torch %s finds no CUDA device (--device cpu measures the CPU)" %
             torch.__version__)
    if args.device == "cpu" and not args.ranks:
        args.ranks = min(2, os.cpu_count() or 1)
    prepare_dir(args.output)
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    sections = args.sections or [s for s in SECTIONS if s != "model" or keyed(args)]
    P = None
    current = "the start"
    try:
        P = Probe(torch, args, Out(args.output))
        P.info["date"] = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M")
        P.info["command"] = " ".join(["python3 -m oraclec.probe"] + list(
            argv if argv is not None else sys.argv[1:]))
        if keyed(args):
            try:
                P.model_want = model_keys(P)
            except (RuntimeError, ValueError, KeyError) as e:
                fail("%s %s: %s" % ("--needed" if args.needed else "--model",
                                    path_shown(args.needed or args.model),
                                    escaped(one_line(e), 300)))
            if args.resume:
                P.kernel_rows = probe_kernels.read_table(
                    os.path.join(args.output, "kernels.csv"), device_text(P))
        runnable = []
        for s in sections:
            if s == "ranks" and P.cuda:
                note("ranks: only on --device cpu (a GPU is a rank)")
            elif s == "collectives" and P.cuda and torch.cuda.device_count() < 2:
                note("collectives: one GPU, nothing to measure (intra_* from the datasheet "
                     "table or placeholders)")
            else:
                runnable.append(s)
        k = 0 if P.quick else 1
        total = sum(BUDGET[s][k] for s in runnable)
        scale = args.budget / total if args.budget and total else 1.0
        write_files(P)
        for s in runnable:
            current = s
            limit = BUDGET[s][k] * scale
            note("%s: up to %.0f s" % (s, limit))
            t = time.monotonic()
            try:
                RUN[s](P, Clock(limit))
            except (Interrupted, KeyboardInterrupt, OutputError):
                raise
            except Exception as e:  # a section that fails leaves the others
                note("%s failed: %s" % (s, one_line(e)))
                P.failed.append(s)
            P.ran.append(s)
            note("%s: %.1f s" % (s, time.monotonic() - t))
            write_files(P)
        if args.collectives:  # probe_collectives.py: nccl-tests' tables, the jitter
            current = "--collectives"
            limit = BUDGET["collectives"][k] * scale
            note("--collectives: up to %.0f s" % limit)
            err = probe_collectives.measure(P, Clock(limit), spawn, free_port)
            if err:
                note("--collectives: %s" % err)
            write_files(P)
        current = "the summary"
        summary(P, time.monotonic() - started)
    except OutputError as e:
        fail("%s; the files are those of the last section written" % e)
    except (Interrupted, KeyboardInterrupt) as e:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        why = e if isinstance(e, Interrupted) else "SIGINT"
        if current == "the summary":
            fail("interrupted (%s) during the summary; %s holds every file" % (
                why, path_shown(args.output)))
        kept = "what was measured before"
        if P is not None:
            try:
                write_files(P)
            except Exception as e2:  # the files of the last section finished stay
                kept = "the files of the last section finished (%s)" % one_line(e2)
        fail("interrupted (%s) during %s; %s holds %s" % (why, current,
                                                          path_shown(args.output), kept))
    if P.failed:
        fail("section%s %s failed (above); the files hold the rest" % (
            "s" * (len(P.failed) > 1), ",".join(P.failed)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
