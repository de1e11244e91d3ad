"""launch-fuzz.py -- the plan reader of python3 -m oraclec.launch fuzzed, as
the C side's readers are (tests/launch-fuzz.sh runs it; TAP).

    python3 tests/launch-fuzz.py TMPDIR PLAN.json...

Each plan (valid, as oraclec wrote it) is mutated deterministically
(random.Random seeded with the mutation's number): keys dropped, values
of other types, negative, zero, huge, fractional and non-finite numbers,
deep nesting, truncation, random bytes, duplicate keys, long and odd
strings, the mesh made inconsistent.  Every mutation is given to the
launcher's own main() with --validate-only (it reads and checks the plan,
then exits before any rank would start; no torch needed), and must end
with exit status 0 or 1 (2 is argparse's, for the command line), no
exception escaping (a Python traceback), and on failure exactly one line
on stderr, `oraclec.launch: PATH: ...`.  Mutations that cannot leave a
valid plan must give 1.  Some run as real processes too (the exit status
and stderr a user sees), and special files (a FIFO, /dev/zero, a
directory, more than 16 MiB) are given by path.  With torch, mutated
module names also go through the model check (--model
torchvision:resnet18 / alexnet).

Then a table of hostile command lines and files (CASES), each run in a
folder of its own with main(): outputs that are inputs or each other
(the plan, a symbolic link to it, the model's file, --out's models
folder), FIFOs, folders and devices as outputs, q.models a file, outputs
where nothing can be made (/proc), values with terminal escapes, forged
diagnostic lines, invalid UTF-8 and 100,000 bytes, model files that raise
or lack what --model names; each must end with its exit status, exactly
one line on stderr saying what it should with no control character, and
the folder as it was (nothing left, nothing replaced).
"""
import contextlib
import copy
import io
import json
import os
import random
import re
import shutil
import stat
import subprocess
import sys
import traceback

from oraclec import launch

N_PER_PLAN = 70          # mutations of each plan
SUBPROCESS_EVERY = 23    # every so many, a real process as well
n = failed = 0


def tap(ok, desc, why=""):
    global n, failed
    n += 1
    print("%s %d - %s" % ("ok" if ok else "not ok", n, desc))
    if not ok:
        failed += 1
        for line in why.rstrip().split("\n")[:12]:
            print("# " + line[:300])
    sys.stdout.flush()


def run_main(argv):
    """main(argv) in this process: (status, stdout, stderr, traceback or
    None)."""
    out, err = io.StringIO(), io.StringIO()
    tb = None
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            status = launch.main(argv)
        except SystemExit as e:
            status = e.code if isinstance(e.code, int) else 1
            if e.code is not None and not isinstance(e.code, int):
                err.write(str(e.code) + "\n")
        except BaseException:  # what the fuzz is for
            status, tb = None, traceback.format_exc()
    return status, out.getvalue(), err.getvalue(), tb


def run_process(argv, timeout=60):
    env = dict(os.environ)
    p = subprocess.run([sys.executable, "-m", "oraclec.launch"] + argv, capture_output=True,
                       timeout=timeout, env=env)
    return p.returncode, p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")


def judge(status, err, tb, path, want):
    """What is wrong with a run's ending, or ''."""
    if tb:
        return "an exception escaped:\n" + tb
    if status not in (0, 1, 2):
        return "exit status %r" % (status,)
    if "Traceback" in err:
        return "a traceback on stderr:\n" + err
    if want == "bad" and status != 1:
        return "exit status %r for a plan that cannot be valid (stderr %r)" % (status, err)
    if status == 1:
        lines = err.split("\n")
        if len(lines) != 2 or lines[1]:
            return "not one line on stderr: %r" % err[:600]
        if not lines[0].startswith("oraclec.launch: "):
            return "the message does not start with 'oraclec.launch: ': %r" % lines[0][:200]
    if status == 0 and err.strip():
        return "exit status 0 with stderr %r" % err[:300]
    return ""


# ---- mutations ------------------------------------------------------------------

def paths(v, at=()):
    """Every (path, value) in a parsed plan, containers included."""
    yield at, v
    if isinstance(v, dict):
        for k, x in v.items():
            yield from paths(x, at + (k,))
    elif isinstance(v, list):
        for i, x in enumerate(v):
            yield from paths(x, at + (i,))


def show(path):
    return ".".join(str(p) for p in path) or "(top)"


def put(doc, path, value):
    d = doc
    for p in path[:-1]:
        d = d[p]
    d[path[-1]] = value


def drop(doc, path):
    d = doc
    for p in path[:-1]:
        d = d[p]
    del d[path[-1]]


REQUIRED = {("plan",), ("world_size",), ("device_mesh",), ("device_mesh", "mesh_shape"),
            ("device_mesh", "mesh_dim_names"), ("pipeline", "schedule"),
            ("pipeline", "n_microbatches"), ("pipeline", "split_spec"),
            ("per_layer", "modules")}
OTHER_TYPES = [None, True, False, "x", "", 0, -1, 1.5, [], {}, [1], {"a": 1}, "2", [[2]]]
NUMBERS = ["-1", "0", "-0", "1e18", "9223372036854775808", "1e999", "-1e999", "NaN",
           "Infinity", "-Infinity", "2.5", "1e-300", "9" * 5000, "0x10", "1_000", "01",
           "+1", ".5", "1e", "-"]


def mutate(rng, doc, text):
    """(description, bytes, want): want 'bad' when no valid plan can come
    of it, else 'any'."""
    kind = rng.randrange(14)
    items = list(paths(doc))
    if kind == 0:  # drop a key
        keyed = [(p, v) for p, v in items if p and isinstance(p[-1], str)]
        p, _ = rng.choice(keyed)
        d = copy.deepcopy(doc)
        drop(d, p)
        need = p in REQUIRED or (p == ("pipeline",) and d.get("device_mesh", {}).get(
            "mesh_dim_names", []).count("pipeline"))
        return "drop %s" % show(p), json.dumps(d).encode(), "bad" if need else "any"
    if kind == 1:  # another type
        p, v = rng.choice(items[1:])
        new = rng.choice(OTHER_TYPES)
        d = copy.deepcopy(doc)
        put(d, p, new)
        return "%s = %s" % (show(p), json.dumps(new)), json.dumps(d).encode(), "any"
    if kind == 2:  # a number spelled oddly, at a number's place
        nums = [p for p, v in items if isinstance(v, (int, float)) and not isinstance(v, bool)]
        p = rng.choice(nums) if nums else rng.choice(items[1:])[0]
        tok = rng.choice(NUMBERS)
        d = copy.deepcopy(doc)
        put(d, p, "@@NUM@@")
        body = json.dumps(d).replace('"@@NUM@@"', tok)
        finite_ok = tok in ("-1", "0", "-0", "1e18", "9223372036854775808", "2.5", "1e-300")
        return "%s = %s" % (show(p), tok[:20]), body.encode(), "any" if finite_ok else "bad"
    if kind == 3:  # deep nesting
        p, _ = rng.choice(items[1:])
        depth = rng.choice([40, 1000, 200000])
        d = copy.deepcopy(doc)
        put(d, p, "@@DEEP@@")
        opener, closer = rng.choice([("[", "]"), ('{"a":', "}")])
        body = json.dumps(d).replace('"@@DEEP@@"', opener * depth + "1" + closer * depth)
        return "%s nested %d deep" % (show(p), depth), body.encode(), "bad"
    if kind == 4:  # truncated
        cut = rng.randrange(len(text))
        return "truncated at byte %d" % cut, text[:cut], "bad"
    if kind == 5:  # random bytes over it
        b = bytearray(text)
        k = rng.choice([1, 2, 8, 64])
        for _ in range(k):
            b[rng.randrange(len(b))] = rng.randrange(256)
        return "%d random bytes" % k, bytes(b), "any"
    if kind == 6:  # a key twice
        keyed = [(p, v) for p, v in items if p and isinstance(p[-1], str)]
        p, v = rng.choice(keyed)
        d = copy.deepcopy(doc)
        put(d, p, "@@DUP@@")
        body = json.dumps(d).replace('"@@DUP@@"', "%s, %s: %s" % (
            json.dumps(v), json.dumps(p[-1]), json.dumps(v)))
        return "key %s twice" % show(p), body.encode(), "bad"
    if kind == 7:  # another top level
        top = rng.choice(["[]", "[%s]" % text.decode(), '"pytorch"', "42", "null", "true",
                          "", "   \n", "\ufeff" + text.decode(), text.decode() + " {}",
                          text.decode() + "\x00"])
        return "top level %r" % top[:16], top.encode(), "bad"
    if kind == 8:  # strings: long, control characters, odd code points
        strs = [p for p, v in items if isinstance(v, str)]
        keyed = [p for p, _ in items if p and isinstance(p[-1], str)]
        new = rng.choice(["x" * 1000000, "a\nb", "\x00", "\u202e", "\U0001f600", "..", ".",
                          "layer1.", " conv1", "\ud800"])
        d = copy.deepcopy(doc)
        if strs and rng.random() < 0.6:
            p = rng.choice(strs)
            put(d, p, new)
            what = "%s = %s" % (show(p), json.dumps(new)[:20])
        else:  # as a key
            p = rng.choice(keyed)
            parent = d
            for q in p[:-1]:
                parent = parent[q]
            parent[new] = parent.pop(p[-1])
            what = "key %s renamed %s" % (show(p), json.dumps(new)[:20])
        return what, json.dumps(d).encode(), "any"
    if kind == 9:  # the mesh made inconsistent
        d = copy.deepcopy(doc)
        m = d["device_mesh"]
        how = rng.randrange(6)
        if how == 0:
            m["mesh_shape"] = m["mesh_shape"] + [2]
        elif how == 1:
            m["mesh_dim_names"] = m["mesh_dim_names"] * 2
            m["mesh_shape"] = m["mesh_shape"] * 2
        elif how == 2:
            d["world_size"] = d["world_size"] * rng.choice([2, 3, 1000, 10 ** 9])
        elif how == 3:
            m["mesh_shape"] = [-s for s in m["mesh_shape"]]
        elif how == 4:
            m["mesh_shape"] = [0] * len(m["mesh_shape"])
        else:
            m["mesh_dim_names"] = ["tensor"] * len(m["mesh_dim_names"])
        return "mesh inconsistency %d" % how, json.dumps(d).encode(), "bad"
    if kind == 10 and doc.get("pipeline"):  # the micro-batches
        d = copy.deepcopy(doc)
        d["pipeline"]["n_microbatches"] = rng.choice([0, -4, 10 ** 7, 10 ** 9, 10 ** 30])
        return "n_microbatches %d" % d["pipeline"]["n_microbatches"], json.dumps(d).encode(), \
            "bad"
    if kind == 11 and doc.get("per_layer"):  # per-layer degrees
        d = copy.deepcopy(doc)
        e = rng.choice(d["per_layer"]["modules"])
        e["degree"] = rng.choice([0, -1, 3, 10 ** 6, 2.0])
        e["split"] = rng.choice(["filter", "channel", "tensor"])
        return "per_layer %s degree %r" % (e["module"], e["degree"]), json.dumps(d).encode(), \
            "bad"
    if kind == 12:  # whitespace and layout: still valid
        return "reindented", json.dumps(doc, indent=rng.choice([None, 1, 8])).encode(), "any"
    # bytes inserted: invalid UTF-8 or a NUL inside
    b = bytearray(text)
    at = rng.randrange(len(b))
    b[at:at] = rng.choice([b"\xff", b"\xc3", b"\x00", b"\xed\xa0\x80", b"\xef\xbb\xbf"])
    return "bytes inserted at %d" % at, bytes(b), "any"


NAMES = ["conv1", "layer9.0", "layer1.0.conv1.weight", "", "fc6", "features.99", "layer1..0",
         ".layer1", "layer1.", "classifier", "\u00e9", "x" * 2000]


def name_mutations(rng, doc):
    """Module names changed where the launcher matches them with the
    model."""
    d = copy.deepcopy(doc)
    new = rng.choice(NAMES)
    # a module the model has may make a valid plan; the others cannot
    want = "any" if new in ("conv1", "classifier") else "bad"
    if d.get("pipeline"):
        keys = list(d["pipeline"]["split_spec"])
        k = rng.choice(keys)
        d["pipeline"]["split_spec"] = {(new if x == k else x): v
                                       for x, v in d["pipeline"]["split_spec"].items()}
        return "split point %s -> %r" % (k, new[:20]), d, want
    if d.get("per_layer"):
        e = rng.choice(d["per_layer"]["modules"])
        old, e["module"] = e["module"], new
        return "per_layer module %s -> %r" % (old, new[:20]), d, want
    return None, None, None


# ---- hostile arguments and files: a table ---------------------------------------

MODEL_PY = """
import torch.nn as nn

raise_here = False


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3 * 16 * 16, 10)

    def forward(self, x):
        return self.fc(x.flatten(1))


def notmodel():
    return 42


def seg():
    return nn.Conv2d(3, 10, 3, padding=1)
"""


def setup_files(d, plan_text):
    """The files a case starts from: the plan (plan.json), a model file
    (net.py), a file that raises (bad.py), and what each case adds."""
    with open(os.path.join(d, "plan.json"), "wb") as f:
        f.write(plan_text)
    with open(os.path.join(d, "net.py"), "w") as f:
        f.write(MODEL_PY)
    with open(os.path.join(d, "bad.py"), "w") as f:
        f.write("import torch\nundefined_name\n")


def edited(key, value):
    """A setup that writes plan.json with `key` set to `value`."""
    def setup(d):
        path = os.path.join(d, "plan.json")
        with open(path) as f:
            doc = json.load(f)
        target = doc
        parts = key.split(".")
        for k in parts[:-1]:
            target = target[k]
        target[parts[-1]] = value
        with open(path, "w") as f:
            json.dump(doc, f)
    return setup


def copy_to(name):
    return lambda d: shutil.copyfile(os.path.join(d, "plan.json"), os.path.join(d, name))


def fifo(name):
    return lambda d: os.mkfifo(os.path.join(d, name))


def mkdir(name):
    return lambda d: os.makedirs(os.path.join(d, name))


def touch(name):
    def setup(d):
        with open(os.path.join(d, name), "w") as f:
            f.write("a file\n")
    return setup


def symlink(name, to):
    return lambda d: os.symlink(to, os.path.join(d, name))


def both(*setups):
    def setup(d):
        for s in setups:
            s(d)
    return setup


V = ["--plan", "plan.json", "--validate-only"]
TIMED = ["--plan", "plan.json", "--model", "torchvision:resnet18", "--time", "1"]
LONG = "x" * 100000
ESC = "\x1b]0;pwned\x07"
# (description, setup or None, argv, exit status, what the one line says
# (a regular expression), needs torch)
CASES = [
    ("--trace the plan itself", None, V + ["--trace", "plan.json"], 2,
     r"--trace 'plan\.json' and --plan 'plan\.json' are the same file: an output never "
     r"replaces an input \(--help", False),
    ("--out p.csv for a plan named p.csv", copy_to("p.csv"),
     ["--plan", "p.csv", "--model", "torchvision:resnet18", "--time", "1", "--out", "p.csv"], 2,
     r"--out 'p\.csv' and --plan 'p\.csv' are the same file: an output never replaces", False),
    ("--out x.csv --trace x.csv", None, TIMED + ["--out", "x.csv", "--trace", "x.csv"], 2,
     r"--out 'x\.csv' and --trace 'x\.csv' are the same file: each output is its own", False),
    ("--trace a symbolic link to the plan", symlink("link.json", "plan.json"),
     V + ["--trace", "link.json"], 2, r"--trace 'link\.json' and --plan 'plan\.json' are the "
     r"same file: an output never replaces an input", False),
    ("--trace the plan by another path", mkdir("sub"), V + ["--trace", "sub/../plan.json"], 2,
     r"are the same file: an output never replaces an input", False),
    ("--trace the model's file", None,
     ["--plan", "plan.json", "--model", "net.py:Net", "--trace", "net.py"], 2,
     r"--trace 'net\.py' and --model 'net\.py' are the same file", False),
    ("--trace its own --out's models folder", None,
     TIMED + ["--out", "q.csv", "--trace", "q.models"], 2,
     r"--out's models folder 'q\.models' and --trace 'q\.models' are the same file", False),
    ("--trace a FIFO: refused, the FIFO left a FIFO", fifo("fifo"), V + ["--trace", "fifo"], 1,
     r"^oraclec\.launch: fifo: is a FIFO, not a regular file: --trace writes a file there and "
     r"never replaces anything else$", False),
    ("--trace a directory", mkdir("d"), V + ["--trace", "d"], 1, r"d: is a directory", False),
    ("--trace /dev/null", None, V + ["--trace", "/dev/null"], 1,
     r"/dev/null: is a character device, not a regular file", False),
    ("--out q.csv where q.models is a file", touch("q.models"),
     TIMED + ["--out", "q.csv"], 1, r"q\.models: is a regular file; --out writes the model it "
     r"ran into this folder", False),
    ("--out q.csv where q.models/resnet18.onnx is a FIFO",
     both(mkdir("q.models"), fifo("q.models/resnet18.onnx")), TIMED + ["--out", "q.csv"], 1,
     r"resnet18\.onnx: is a FIFO, not a regular file: --out writes", False),
    ("--out where no file can be made (/proc)", None, TIMED + ["--out", "/proc/m.csv"], 1,
     r"^oraclec\.launch: /proc/m\.csv: cannot create output: ", False),
    ("--trace where no file can be made (/proc)", None, V + ["--trace", "/proc/t.json"], 1,
     r"^oraclec\.launch: /proc/t\.json: cannot create output: ", False),
    ("--trace in no directory", None, V + ["--trace", "nowhere/t.json"], 2,
     r"--trace nowhere/t\.json: no such directory", False),
    ("--out not a .csv", None, TIMED + ["--out", "m.txt"], 2,
     r"--out m\.txt: the measured row is a \.csv file", False),
    ("--out without --time", None, V + ["--out", "m.csv"], 2, r"--out writes a timed run",
     False),
    ("--device with a terminal escape: escaped", None, V + ["--device", ESC], 2,
     r"invalid choice: '\\x1b\]0;pwned\\x07'", False),
    ("--batch with a forged diagnostic line: escaped, one line", None,
     V + ["--batch", "1\nfake.odl:1:1: error: injected"], 2,
     r"'1\\nfake\.odl:1:1: error: injected' is not an integer", False),
    ("an unknown option of 100,000 bytes: cut at 64", None, V + ["--" + LONG], 2,
     r"unrecognized arguments: --x{62}\.\.\. \(--help", False),
    ("--steps of 100,000 digits: cut at 64", None, V + ["--steps", "9" * 100000], 2,
     r"'9{64}\.\.\.' is not an integer|9{64}\.\.\.", False),
    ("--timeout that is not a number", None, V + ["--timeout", "abc"], 2,
     r"'abc' is not an integer", False),
    ("--plan naming no file, its bytes not UTF-8: escaped", None,
     ["--plan", os.fsdecode(b"p\xff\x1b[31m.json"), "--validate-only"], 1,
     r"^oraclec\.launch: p\\xff\\x1b\[31m\.json: cannot read it: No such file", False),
    ("--plan of 100,000 bytes", None, ["--plan", LONG, "--validate-only"], 1,
     r"cannot read it: File name too long", False),
    ("--plan ''", None, ["--plan", "", "--validate-only"], 1, r"cannot read it", False),
    ("--model of no known form", None, V + ["--model", "resnet18"], 2,
     r"--model 'resnet18': a model is torchvision:NAME or FILE\.py:CALLABLE", False),
    ("--model naming no file", None, V + ["--model", "missing.py:net"], 2,
     r"missing\.py: no such file", False),
    ("--model whose callable is no Python name", None, V + ["--model", "net.py:1x"], 2,
     r"'1x' is not a Python name", False),
    ("--model torchvision: with an escape", None, V + ["--model", "torchvision:\x1b[31m"], 2,
     r"torchvision\.models has no model '\\x1b\[31m'", False),
    ("--model FILE.py that is a directory", mkdir("dir.py"), V + ["--model", "dir.py:net"], 2,
     r"dir\.py is a directory, not a Python file", False),
    ("a plan's device_type the launcher does not run", edited("device_mesh.device_type", "xpu"),
     V, 1, r"device_mesh\.device_type: \"xpu\" is not run by this launcher \(cuda, cpu\)", False),
    ("--model FILE.py that raises", None, V + ["--model", "bad.py:net"], 1,
     r"--model bad\.py:net: the file raised NameError: name 'undefined_name' is not defined",
     True),
    ("--model FILE.py:CALLABLE the file lacks", None, V + ["--model", "net.py:nothing"], 2,
     r"net\.py has no function or class nothing \(it has: Net, notmodel, seg\)", True),
    ("--model FILE.py:CALLABLE that returns no module", None,
     V + ["--model", "net.py:notmodel"], 1, r"notmodel\(\) is int, not a torch\.nn\.Module",
     True),
    ("--model FILE.py:CALLABLE whose output is not (batch, classes)", None,
     V + ["--model", "net.py:seg", "--image-size", "16"], 1,
     r"a sample gives a 1x10x16x16 tensor; the launcher trains a classifier", True),
]


def snapshot(d):
    """Every name under d with its type, inode, size and (a file's)
    modification time: equal before and after when nothing was left or
    replaced."""
    out = {}
    for root, dirs, files in os.walk(d):
        for n in dirs + files:
            p = os.path.join(root, n)
            st = os.lstat(p)
            # (a folder's own time changes when a file is tried there)
            out[os.path.relpath(p, d)] = (stat.S_IFMT(st.st_mode), st.st_ino, st.st_size,
                                          None if stat.S_ISDIR(st.st_mode) else st.st_mtime_ns)
    return out


def fsdp_importable():
    try:
        __import__("torch.distributed.fsdp")
        return True
    except Exception:
        return False


def hostile(tmp, plan_path, have_torch):
    """The table: each case in a folder of its own, the launcher's main()
    run in it; the exit status, exactly one line on stderr (prefixed,
    matching, no control character, at most 4,300 bytes: a path is shown
    up to 4,096), nothing on stdout, and the folder as it was (nothing
    left, nothing replaced: a FIFO stays a FIFO)."""
    with open(plan_path, "rb") as f:
        plan_text = f.read()
    cases = list(CASES)
    if have_torch and not fsdp_importable():
        cases.append(("an FSDP plan where torch cannot import torch.distributed.fsdp",
                      edited("fsdp", "FULL_SHARD"), V, 1,
                      r"plan\.json: fsdp: the plan shards with FSDP \(FULL_SHARD\), and this "
                      r"torch \(.*\) cannot import torch\.distributed\.fsdp: \w+: .*; FSDP plans "
                      r"run under torch 2\.0 and later", True))
    here = os.getcwd()
    for i, (desc, setup, argv, want, pattern, torch_needed) in enumerate(cases):
        if torch_needed and not have_torch:
            tap(True, "hostile: %s # SKIP no torch and torchvision" % desc)
            continue
        d = os.path.join(tmp, "case%d" % i)
        os.mkdir(d)
        setup_files(d, plan_text)
        if setup:
            setup(d)
        before = snapshot(d)
        os.chdir(d)
        try:
            status, out, err, tb = run_main(argv)
        finally:
            os.chdir(here)
        why = []
        if tb:
            why.append("an exception escaped:\n" + tb)
        if status != want:
            why.append("exit status %r, expected %d" % (status, want))
        lines = err.split("\n")
        if len(lines) != 2 or lines[1]:
            why.append("not one line on stderr: %r" % err[:600])
        line = lines[0]
        if not line.startswith("oraclec.launch: "):
            why.append("the line does not start 'oraclec.launch: ': %r" % line[:300])
        if not re.search(pattern, line):
            why.append("the line does not match %r: %r" % (pattern, line[:600]))
        if any(ord(c) < 0x20 or ord(c) == 0x7f or 0x80 <= ord(c) <= 0x9f for c in line):
            why.append("a control character on stderr: %r" % line[:300])
        if len(line.encode("utf-8", "surrogateescape")) > 4300:
            why.append("a line of %d bytes" % len(line))
        if out:
            why.append("stdout: %r" % out[:300])
        after = snapshot(d)
        if after != before:
            changed = sorted(k for k in set(before) | set(after) if before.get(k) != after.get(k))
            why.append("the folder changed: %s" % ", ".join(changed))
        tap(not why, "hostile: %s (exit %s)" % (desc, status), "\n".join(why))


def main():
    tmp = sys.argv[1]
    plans = sys.argv[2:]
    f = os.path.join(tmp, "fuzz.json")
    for pi, plan_path in enumerate(plans):
        with open(plan_path, "rb") as fh:
            text = fh.read()
        doc = json.loads(text)
        label = "%s %s" % (doc.get("strategy"), "per-layer" if doc.get("per_layer") else
                           ",".join("%s=%s" % x for x in zip(doc["device_mesh"]["mesh_dim_names"],
                                                             doc["device_mesh"]["mesh_shape"])))
        with open(f, "wb") as fh:
            fh.write(text)
        status, out, err, tb = run_main(["--plan", f, "--validate-only", "--device", "cpu"])
        tap(status == 0 and not tb, "%s: the plan oraclec wrote is valid" % label,
            tb or err)
        for i in range(N_PER_PLAN):
            seed = 1000 * pi + i
            rng = random.Random(seed)
            desc, body, want = mutate(rng, doc, text)
            with open(f, "wb") as fh:
                fh.write(body)
            status, out, err, tb = run_main(["--plan", f, "--validate-only", "--device", "cpu"])
            why = judge(status, err, tb, f, want)
            if not why and i % SUBPROCESS_EVERY == 0:
                status, out, err = run_process(["--plan", f, "--validate-only", "--device",
                                                "cpu"])
                why = judge(status, err, None, f, want)
                desc += ", also as a process"
            tap(not why, "%s #%d: %s (exit %s)" % (label, seed, desc, status), why)

    # special files, by path, as a process: never blocks, one line
    fifo = os.path.join(tmp, "fifo")
    os.mkfifo(fifo)
    big = os.path.join(tmp, "big.json")
    with open(big, "wb") as fh:
        fh.write(b" " * (16 << 20) + b"{}")
    for path, desc in ((fifo, "a FIFO"), ("/dev/zero", "/dev/zero"), (tmp, "a directory"),
                       (big, "16 MiB of spaces, then {}"),
                       (os.path.join(tmp, "absent.json"), "no such file")):
        try:
            status, out, err = run_process(["--plan", path, "--validate-only"], timeout=20)
            why = judge(status, err, None, path, "bad")
        except subprocess.TimeoutExpired:
            status, why = None, "did not end within 20 s"
        tap(not why, "special file: %s (exit %s)" % (desc, status), why)
    os.unlink(fifo)
    os.unlink(big)

    # module names against the model (needs torch)
    try:
        __import__("torch")
        __import__("torchvision")
        have_torch = True
    except ImportError:
        have_torch = False
    hostile(tmp, plans[0], have_torch)
    for pi, plan_path in enumerate(plans):
        with open(plan_path, "rb") as fh:
            doc = json.loads(fh.read())
        model = "torchvision:alexnet" if doc.get("per_layer") else "torchvision:resnet18"
        for i in range(3):
            rng = random.Random(50000 + 100 * pi + i)
            desc, d, want = name_mutations(rng, doc)
            if desc is None:
                break
            if not have_torch:
                tap(True, "%s: %s # SKIP no torch and torchvision" % (model, desc))
                continue
            with open(f, "w") as fh:
                json.dump(d, fh)
            status, out, err, tb = run_main(["--plan", f, "--validate-only", "--model", model,
                                             "--image-size", "64", "--device", "cpu"])
            why = judge(status, err, tb, f, want)
            tap(not why, "%s: %s (exit %s)" % (model, desc, status), why)
    print("1..%d" % n)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
