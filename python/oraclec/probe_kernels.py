"""oraclec.probe_kernels -- the probe's model section (--model): every
distinct kernel key of a model as oraclec lowers it, at the batches the
requested strategies give one device, timed forward and backward, written
to a kernel table (docs/kernel-table.md).

The keys and batches are oraclec's (`oraclec M --kernels-needed`: what
its pricing of the strategies looks up, the shards filter, channel and
spatial splits make among them), so the batch norms oraclec restores
after an export's folded convolutions are timed too, and what a strategy
asks of a device is worked out once, where it is priced
(docs/kernel-table.md, "The keys a run needs").
"""
import csv
import io
import math
import os
import re
import stat
import statistics
import subprocess
import time

COLUMNS = ("class", "precision", "layout", "n", "shape", "fwd_s", "bwd_data_s", "bwd_weight_s",
           "spread", "repeats", "kernel")
PARTS = ("fwd", "bwd_data", "bwd_weight")
STRATEGIES = ("data", "spatial", "pipeline", "filter", "channel", "df", "ds", "dp", "dpf",
              "dpc", "dps")
# a row whose repeats spread more than this is measured again, then named
SPREAD_LIMIT = 0.10
# the probe's dtype names and oraclec's training precisions for them
TRAINING = {"fp32": "fp32", "tf32": "tf32", "fp16": "amp-fp16", "bf16": "amp-bf16"}


class Key(tuple):
    """(class, precision, layout, shape): one row's key, its shape the
    table's text."""
    __slots__ = ()

    def __new__(cls, klass, prec, layout, shape):
        return tuple.__new__(cls, (klass, prec, layout, shape))

    klass = property(lambda s: s[0])
    prec = property(lambda s: s[1])
    layout = property(lambda s: s[2])
    shape = property(lambda s: s[3])

    def items(self):
        return parse_shape(self.shape)


def parse_shape(text):
    """"op=relu elements=4 stride=2x1" -> {"op": "relu", "elements": (4,),
    "stride": (2, 1)}, in order."""
    out = {}
    for item in text.split(" "):
        name, _, v = item.partition("=")
        out[name] = v if name == "op" else tuple(int(x) for x in v.split("x"))
    return out


# ---- what the strategies ask of one device ----------------------------------

def oraclec_path(given=None):
    """The oraclec to ask: --oraclec, $ORACLEC, the one beside this
    source tree, else PATH's."""
    if given:
        return given
    if os.environ.get("ORACLEC"):
        return os.environ["ORACLEC"]
    here = os.path.dirname(os.path.abspath(__file__))
    tree = os.path.normpath(os.path.join(here, "..", "..", "oraclec"))
    return tree if os.access(tree, os.X_OK) else "oraclec"


def kernels_needed(oraclec, model, batch, gpus, strategies, precision, channels_last=False):
    """{Key: {N}}: every kernel key and batch pricing `strategies` on
    `gpus` devices at `batch` samples a device looks up, as oraclec's
    pricing records them (`oraclec M --kernels-needed`: each layer whole
    at the batch a device runs, the parts filter, channel and spatial
    splits make; docs/kernel-table.md, "The keys a run needs").
    `precision` is oraclec's training name.  Raises RuntimeError with
    oraclec's first diagnostic."""
    cmd = [oraclec, model, "--kernels-needed", "-q", "-b", str(batch), "-g", str(gpus),
           "--strategies", ",".join(strategies), "--precision", precision]
    if channels_last:
        cmd.append("--channels-last")
    try:
        r = subprocess.run(cmd, capture_output=True, timeout=600)
    except (OSError, subprocess.SubprocessError) as e:
        raise RuntimeError("cannot run %s: %s" % (oraclec, e))
    if r.returncode != 0:
        err = r.stderr.decode("utf-8", "replace").strip().splitlines()
        raise RuntimeError("%s exited %d%s" % (oraclec, r.returncode,
                                               ": " + err[0] if err else ""))
    return needed_from_csv(r.stdout.decode("utf-8"), "%s --kernels-needed wrote" % oraclec)


NEEDED_MOST = 64 << 20  # bytes of a --needed file: a model's keys are kilobytes


def read_needed(path):
    """{Key: {N}} of the --needed file at path (needed_from_csv).  Raises
    RuntimeError where it is not a regular file (a FIFO would block the
    probe), cannot be read, is larger than NEEDED_MOST or is not that
    CSV."""
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            raise RuntimeError("not a regular file")
        with open(path, encoding="utf-8") as f:
            text = f.read(NEEDED_MOST + 1)
    except (OSError, UnicodeDecodeError) as e:
        raise RuntimeError("cannot read it: %s" % (getattr(e, "strerror", None) or e))
    if len(text) > NEEDED_MOST:
        raise RuntimeError("larger than %d MiB" % (NEEDED_MOST >> 20))
    return needed_from_csv(text, "it has")


def needed_from_csv(text, who):
    """{Key: {N}} of `oraclec M --kernels-needed`'s CSV (class, precision,
    layout, n, shape).  Raises RuntimeError starting with `who` where the
    text is not that."""
    rows = csv.reader(io.StringIO(text))
    if next(rows, None) != ["class", "precision", "layout", "n", "shape"]:
        raise RuntimeError("%s no header 'class,precision,layout,n,shape'" % who)
    want = {}
    for i, f in enumerate(rows, 2):
        if len(f) != 5:
            raise RuntimeError("%s a line of %d fields (line %d)" % (who, len(f), i))
        if not re.fullmatch(r"[0-9]{1,7}", f[3]) or not 1 <= int(f[3]) <= 1 << 20:
            raise RuntimeError("%s a batch that is not a whole number from 1 to 2^20 "
                               "(line %d)" % (who, i))
        if f[1] not in DTYPES:
            raise RuntimeError("%s precision '%s', which the probe does not time (it times "
                               "%s; line %d)" % (who, f[1][:16], ", ".join(DTYPES), i))
        if f[2] not in ("NCHW", "NHWC", "-") or not re.fullmatch(r"[a-z][a-z0-9_]*", f[0]):
            raise RuntimeError("%s a class or layout oraclec does not write (line %d)" % (
                who, i))
        try:
            parse_shape(f[4])
        except ValueError:
            raise RuntimeError("%s a shape that is not NAME=VALUE items (line %d)" % (who, i))
        want.setdefault(Key(f[0], f[1], f[2], f[4]), set()).add(int(f[3]))
    return want


# ---- the operators a key stands for ------------------------------------------

DTYPES = {"fp32": "float32", "tf32": "float32", "fp16": "float16", "bf16": "bfloat16"}

ELEMENTWISE = {
    "relu": lambda F, x: F.relu(x), "leakyrelu": lambda F, x: F.leaky_relu(x),
    "elu": lambda F, x: F.elu(x), "clip": lambda F, x: x.clamp(0, 6),
    "sigmoid": lambda F, x: x.sigmoid(), "tanh": lambda F, x: x.tanh(),
    "gelu": lambda F, x: F.gelu(x), "silu": lambda F, x: F.silu(x),
    "hardsigmoid": lambda F, x: F.hardsigmoid(x), "hardswish": lambda F, x: F.hardswish(x),
    "softplus": lambda F, x: F.softplus(x), "selu": lambda F, x: F.selu(x),
    "celu": lambda F, x: F.celu(x), "mish": lambda F, x: F.mish(x),
    "dropout": lambda F, x: F.dropout(x, 0.1, True), "erf": lambda F, x: x.erf(),
    "exp": lambda F, x: x.exp(), "log": lambda F, x: (x.abs() + 1).log(),
    "sqrt": lambda F, x: (x.abs() + 1).sqrt(), "reciprocal": lambda F, x: (x.abs() + 1).reciprocal(),
    "neg": lambda F, x: -x, "abs": lambda F, x: x.abs(), "pow": lambda F, x: x * x,
    "scale": lambda F, x: x * 0.5, "sin": lambda F, x: x.sin(), "cos": lambda F, x: x.cos(),
    "prelu": lambda F, x: F.leaky_relu(x, 0.25),
}
BINARY = {
    "add": lambda x, y: x + y, "sub": lambda x, y: x - y, "mul": lambda x, y: x * y,
    "div": lambda x, y: x / (y.abs() + 1), "max": lambda x, y: x.maximum(y),
    "min": lambda x, y: x.minimum(y), "mean": lambda x, y: (x + y) * 0.5,
    "power": lambda x, y: x.abs().pow(y),
}


def operators(torch, key, n, dev, cuda):
    """{part: fn} of the calls to time for key at batch n: the forward, the
    gradient of the (first) input and of the weights (gemm: of the second
    operand), where torch computes them apart; {} for a key this does not
    know.  The tensors live in the closures."""
    F = torch.nn.functional
    it = key.items()
    dt = getattr(torch, DTYPES[key.prec])
    cl = key.layout == "NHWC"

    def rnd(*shape, grad=True, channels_last=False):
        t = torch.randn(*shape, dtype=dt, device=dev)
        if channels_last:
            t = t.contiguous(memory_format=torch.channels_last)
        return t.requires_grad_(grad)

    def grads(fwd, inputs, wrt_data, wrt_weight):
        y = fwd(*inputs)
        dy = torch.randn_like(y)
        out = {"fwd": lambda: fwd(*inputs)}
        if wrt_data is not None:
            out["bwd_data"] = lambda: torch.autograd.grad(y, wrt_data, dy, retain_graph=True)
        if wrt_weight is not None:
            out["bwd_weight"] = lambda: torch.autograd.grad(y, wrt_weight, dy, retain_graph=True)
        return out

    c = key.klass
    if c == "conv":
        (C,), (H,), (W,), (K,), (R,), (S,) = (it[x] for x in "chwkrs")
        st, pad, (g,), dil = it["stride"], it["pad"], it["groups"], it["dilation"]
        x = rnd(n, C, H, W, channels_last=cl)
        w = rnd(K, C // g, R, S, channels_last=cl)
        if pad[0] == pad[2] and pad[1] == pad[3]:
            fwd = lambda x, w: F.conv2d(x, w, None, st, (pad[0], pad[1]), dil, g)
        else:  # asymmetric: padded apart (PyTorch's conv2d pads both sides alike)
            fwd = lambda x, w: F.conv2d(F.pad(x, (pad[1], pad[3], pad[0], pad[2])), w, None,
                                        st, 0, dil, g)
        return grads(fwd, (x, w), x, w)
    if c == "gemm":
        (m,), (nn_,), (k,), (b,) = it["m"], it["n"], it["k"], it["batch"]
        if b == 1:
            a, w = rnd(n * m, k), rnd(nn_, k)
            return grads(lambda a, w: F.linear(a, w), (a, w), a, w)
        a, bb = rnd(n * b, m, k), rnd(n * b, k, nn_)
        return grads(torch.bmm, (a, bb), a, bb)
    if c == "attention":
        (h,), (s,), (kv,), (d,) = it["heads"], it["s"], it["kv"], it["d"]
        q, k_, v = rnd(n, h, s, d), rnd(n, h, kv, d), rnd(n, h, kv, d)
        if hasattr(F, "scaled_dot_product_attention"):
            fwd = F.scaled_dot_product_attention
        else:  # torch before 2.0: the products and the softmax, as the model's layers
            scale = 1 / math.sqrt(d)
            fwd = lambda q, k_, v: torch.matmul(torch.softmax(
                torch.matmul(q, k_.transpose(-1, -2)) * scale, -1), v)
        return grads(fwd, (q, k_, v), (q, k_, v), None)
    op = it.get("op")
    if c == "elementwise":
        (e,) = it["elements"]
        if op in ELEMENTWISE:
            x = rnd(n, e)
            f = ELEMENTWISE[op]
            return grads(lambda x: f(F, x), (x,), x, None)
        if op in BINARY:
            (o,) = it["other"]
            if o == e:
                x, y = rnd(n, e), rnd(n, e)
            elif e % o == 0:  # the second operand broadcast along the first's rows
                x, y = rnd(n, o, e // o), rnd(n, o, 1)
            else:
                x, y = rnd(n, e), rnd(n, 1)
            return grads(BINARY[op], (x, y), (x, y), None)
        return {}
    if c == "norm":
        (C,), (e,) = it["c"], it["elements"]
        if op in ("batchnorm", "instancenorm"):
            x = rnd(n, C, e // C, 1, channels_last=cl) if cl else rnd(n, C, e // C)
            w, b = rnd(C), rnd(C)
            if op == "batchnorm":
                rm = torch.zeros(C, dtype=torch.float32, device=dev)
                rv = torch.ones(C, dtype=torch.float32, device=dev)
                if dt != torch.float32:  # cuDNN's: fp32 statistics and affine
                    w, b = w.detach().float().requires_grad_(), b.detach().float().requires_grad_()
                fwd = lambda x, w, b: F.batch_norm(x, rm, rv, w, b, True, 0.1, 1e-5)
            else:
                fwd = lambda x, w, b: F.instance_norm(x, None, None, w, b, True, 0.1, 1e-5)
            # one kernel computes the input's and the weights' gradients
            return grads(fwd, (x, w, b), (x, w, b), None)
        x = rnd(max(1, n * e // C), C)
        if op == "layernorm":
            w, b = rnd(C), rnd(C)
            return grads(lambda x, w, b: F.layer_norm(x, (C,), w, b), (x, w, b), (x, w, b), None)
        if op in ("softmax", "logsoftmax"):
            f = torch.softmax if op == "softmax" else torch.log_softmax
            return grads(lambda x: f(x, -1), (x,), x, None)
        return {}
    if c == "pool":
        (C,), (H,), (W,) = it["c"], it["h"], it["w"]
        x = rnd(n, C, H, W, channels_last=cl)
        if op in ("maxpool", "avgpool"):
            (r,), (s,), st, pad, (ceil,) = it["r"], it["s"], it["stride"], it["pad"], it["ceil"]
            if pad[0] != pad[2] or pad[1] != pad[3]:
                return {}
            f = F.max_pool2d if op == "maxpool" else F.avg_pool2d
            return grads(lambda x: f(x, (r, s), st, (pad[0], pad[1]), ceil_mode=bool(ceil)),
                         (x,), x, None)
        if op in ("globalavgpool", "globalmaxpool"):
            f = F.adaptive_avg_pool2d if op == "globalavgpool" else F.adaptive_max_pool2d
            return grads(lambda x: f(x, 1), (x,), x, None)
        if op == "adaptiveavgpool":
            (oh,), (ow,) = it["oh"], it["ow"]
            return grads(lambda x: F.adaptive_avg_pool2d(x, (oh, ow)), (x,), x, None)
    return {}


# ---- repeats that repeat ------------------------------------------------------

def spread(samples):
    """The spread of repeated times: the interquartile range over the
    median (0 for one)."""
    if len(samples) < 2:
        return 0.0
    s = sorted(samples)

    def q(p):
        x = p * (len(s) - 1)
        lo = int(math.floor(x))
        hi = min(lo + 1, len(s) - 1)
        return s[lo] + (s[hi] - s[lo]) * (x - lo)
    med = statistics.median(s)
    return (q(0.75) - q(0.25)) / med if med > 0 else 0.0


class Item:
    """One call to time (a key at a batch, one part), its samples."""
    __slots__ = ("key", "n", "part", "fn", "calls", "samples")

    def __init__(self, key, n, part, fn):
        self.key, self.n, self.part, self.fn = key, n, part, fn
        self.calls, self.samples = 1, []


def interleaved(items, repeats, sample, sync, clock=None):
    """`repeats` rounds over the items, each round one sample of each (the
    mean of enough calls back to back to last `sample` seconds, the
    first round after a warm-up call): a machine's passing load touches
    every item's samples alike, not one item's all.  Stops early when
    the clock runs out (the items measured in no round keep none)."""
    for rnd in range(repeats):
        for it in items:
            if clock is not None and clock.left() <= 0 and rnd > 0:
                return
            if rnd == 0:
                it.fn()
                sync()
                t = time.perf_counter()
                it.fn()
                sync()
                one = time.perf_counter() - t
                it.calls = max(1, min(1000, int(sample / max(one, 1e-7))))
            t = time.perf_counter()
            for _ in range(it.calls):
                it.fn()
            sync()
            it.samples.append((time.perf_counter() - t) / it.calls)


# ---- the table -----------------------------------------------------------------

def row_text(key, n, r):
    """One row as the table writes it: r {part: seconds or None, spread,
    repeats, kernel}."""
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    w.writerow([key.klass, key.prec, key.layout, n, key.shape] +
               ["" if r.get(p) is None else "%.6g" % max(r[p], 1e-9) for p in PARTS] +
               ["%.4g" % min(r["spread"], 100), r["repeats"], clean(r.get("kernel", ""))])
    return out.getvalue()


def clean(s):
    """A kernel name for a field: one line, printable."""
    return re.sub(r"[\x00-\x1f\x7f]", " ", s or "")[:1000]


def table_text(notes, rows):
    """The whole table: the provenance comments, the header, the rows
    (sorted by key then N, as the reader keeps them)."""
    head = "".join("# %s\n" % clean(n) for n in notes)
    return head + ",".join(COLUMNS) + "\n" + "".join(
        row_text(k, n, rows[(k, n)]) for k, n in sorted(rows, key=lambda kn: (kn[0], kn[1])))


def read_table(path, device):
    """The rows of an earlier table at path written for `device` (its
    `# device:` line): {(Key, N): row}; {} when there is none, it is of
    another device, or it does not read."""
    try:
        with open(path, encoding="utf-8", newline="") as f:
            text = f.read()
    except (OSError, UnicodeDecodeError):
        return {}
    lines = text.splitlines()
    if ("# device: %s" % clean(device)) not in lines:
        return {}
    rows = {}
    try:
        body = [l for l in lines if not l.startswith("#")]
        r = csv.reader(body)
        if next(r) != list(COLUMNS):
            return {}
        for f in r:
            if len(f) != len(COLUMNS):
                continue
            key = Key(f[0], f[1], f[2], f[4])
            row = {p: (float(v) if v else None) for p, v in zip(PARTS, f[5:8])}
            row.update(spread=float(f[8]), repeats=int(f[9]), kernel=f[10])
            rows[(key, int(f[3]))] = row
    except (ValueError, StopIteration, csv.Error):
        return {}
    return rows
