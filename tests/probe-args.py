"""probe-args.py -- python3 -m oraclec.probe's arguments and files, case
by case (run by tests/probe-args.sh; TAP on stdout):

    probe-args.py PYTHON TORCH_PYTHON|- ORACLEC TMPDIR

Each case runs the probe in a fresh directory and checks its exit status
(2 for a usage error, 1 for anything else refused), that stderr's last
line is one line `oraclec.probe: ...` or argparse's (escaped, cut at 64
bytes: no control byte, no line a value forged), no traceback, and what
the case is about: outputs that are not regular files refused before
anything is measured (a FIFO never blocks), a link named probe.csv
replaced and its target untouched (issue 40.1), a full file system or a
file size limit ends the run with one line and no temporary left, SIGTERM
during the summary, --ranks' bound stated.  Cases that run the probe
itself need torch: without it (TORCH_PYTHON '-') they are skipped.
"""
import json
import os
import re
import resource
import signal
import subprocess
import sys
import tempfile

py, tpy, oraclec, tmp = sys.argv[1:5]
tpy = None if tpy == "-" else tpy
n = 0
failed = 0
cores = os.cpu_count() or 1


def ok(good, what, why=""):
    global n, failed
    n += 1
    print("%s %d - %s" % ("ok" if good else "not ok", n, what))
    if not good:
        failed += 1
        for line in str(why).splitlines()[:12]:
            print("# " + line[:300])


def skip(what, why):
    global n
    n += 1
    print("ok %d - %s # SKIP %s" % (n, what, why))


def fresh(name):
    d = tempfile.mkdtemp(prefix=name + ".", dir=tmp)
    return d


def run(argv, python=None, timeout=120, preexec=None, cwd=None):
    env = dict(os.environ, ORACLEC=oraclec)
    try:
        r = subprocess.run([python or py, "-m", "oraclec.probe"] + argv, capture_output=True,
                           timeout=timeout, env=env, preexec_fn=preexec, cwd=cwd)
        return r.returncode, r.stdout.decode("utf-8", "surrogateescape"), \
            r.stderr.decode("utf-8", "surrogateescape")
    except subprocess.TimeoutExpired:
        return "timeout", "", ""


def one_line(status, err, want_status):
    """What is wrong with a refusal: its status, its last line, control
    bytes, a traceback."""
    bad = []
    if status != want_status:
        bad.append("exit status %s, expected %s" % (status, want_status))
    lines = err.rstrip("\n").split("\n")
    last = lines[-1] if lines else ""
    if want_status == 1:
        if [l for l in lines if not l.startswith("probe: ")] != [last]:
            bad.append("stderr is not one line after the progress: %r" % lines[-3:])
        if not last.startswith("oraclec.probe: "):
            bad.append("the line does not start with 'oraclec.probe: ': %r" % last[:200])
    elif want_status == 2 and not re.search(r"^python3 -m oraclec.probe: error: ", last):
        bad.append("not argparse's error line: %r" % last[:200])
    if "Traceback" in err:
        bad.append("a traceback")
    if re.search(r"[\x00-\x08\x0b-\x1f\x7f]", err):
        bad.append("a control byte on stderr")
    return bad, last


# ---- usage errors (no torch needed: they come before it is loaded) -----------

long_value = "A" * 100000
USAGE = [
    ("--device tpu", ["--device", "tpu", "-o", "x"], r"invalid choice: 'tpu'"),
    ("--device with an escape sequence", ["--device", "\x1b]0;pwned\x07", "-o", "x"],
     r"invalid choice: '\\x1b\]0;pwned\\x07'"),
    ("--budget with a forged diagnostic line",
     ["--budget", "1\nfake.odl:1:1: error: injected", "-o", "x"],
     r"'1\\nfake\.odl:1:1: error: injected' is not a positive number"),
    ("an unknown option of 100,000 bytes", ["--" + long_value, "-o", "x"],
     r"unrecognized arguments: --A{62}\.\.\.$"),
    ("--sections of 100,000 bytes", ["--sections", "matmul," + long_value, "-o", "x"],
     r"unknown section A{64}\.\.\. \(choose from"),
    ("--ranks 0", ["--ranks", "0", "-o", "x"],
     r"'0' is not a number of ranks from 1 to %d \(the cores here; never more than 256\)" %
     min(256, cores)),
    ("--ranks 10^12 (issue 40.10)", ["--ranks", "1000000000000", "-o", "x"],
     r"is not a number of ranks from 1 to %d" % min(256, cores)),
    ("--ranks one more than the cores", ["--ranks", str(cores + 1), "-o", "x"],
     r"is not a number of ranks from 1 to"),
    ("--gpus 0", ["--gpus", "0", "-o", "x"], r"'0' is not a number of GPUs from 1 to 1048576"),
    ("--batch 0", ["--batch", "0", "-o", "x"], r"'0' is not a batch from 1 to 1048576"),
    ("--strategies bogus", ["--strategies", "data,bogus", "-o", "x"],
     r"unknown strategy bogus \(choose from data,spatial"),
    ("--precision fp64", ["--precision", "fp64", "-o", "x"], r"unknown precision fp64"),
    ("--sections model without --model", ["--sections", "model", "-o", "x"],
     r"--sections model needs --model or --needed"),
    ("--model and --needed", ["--model", "m.onnx", "--needed", "k.csv", "-o", "x"],
     r"--model and --needed both name the keys to time: give one"),
    ("--ranks on cuda", ["--device", "cuda", "--ranks", "1", "-o", "x"],
     r"--ranks is for --device cpu"),
]
for what, argv, want in USAGE:
    d = fresh("usage")
    status, out, err = run(argv, cwd=d, timeout=60)
    bad, last = one_line(status, err, 2)
    if not re.search(want, last):
        bad.append("the message %r lacks %r" % (last[:300], want))
    if len(last.encode()) > 400:
        bad.append("a line of %d bytes" % len(last.encode()))
    if os.listdir(d):
        bad.append("wrote %s" % os.listdir(d))
    ok(not bad, "usage: " + what, "\n".join(bad))

# ---- outputs refused before anything is measured (no torch needed) -----------

def with_output(name, make):
    d = fresh("outputs")
    make(os.path.join(d, name))
    return d


CASES = [
    ("probe.csv a FIFO (issue 40.4)", "probe.csv", os.mkfifo, r"probe\.csv is a FIFO"),
    ("system.odl a directory (issue 40.12)", "system.odl", os.mkdir,
     r"system\.odl is a directory"),
    ("probe.csv a directory (issue 40.12)", "probe.csv", os.mkdir, r"probe\.csv is a directory"),
    ("kernels.csv a FIFO", "kernels.csv", os.mkfifo, r"kernels\.csv is a FIFO"),
]
for what, name, make, want in CASES:
    d = with_output(name, make)
    status, out, err = run(["--device", "cpu", "--quick", "-o", d], timeout=30)
    bad, last = one_line(status, err, 1)
    if status == "timeout":
        bad.append("blocked")
    if not re.search(want, last) or "the probe writes only regular files" not in last:
        bad.append("the message %r lacks %r" % (last[:300], want))
    ok(not bad, "outputs: " + what + ": refused, nothing measured", "\n".join(bad))

d = fresh("outputs")
open(os.path.join(d, "file"), "w").close()
status, out, err = run(["--device", "cpu", "-o", os.path.join(d, "file")], timeout=30)
bad, last = one_line(status, err, 1)
ok(not bad and "not a directory" in last, "outputs: -o a file", "\n".join(bad) or last)

# ---- the keys a run needs (oraclec --kernels-needed: no torch) -------------------

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
from oraclec import probe_kernels as pk  # noqa: E402

CONV = "c=64 h=56 w=56 k=64 r=3 s=3 stride=1x1 pad=1x1x1x1 groups=1 dilation=1x1"
# a conv reading the input, a relu, an fc: data at 8, pipeline's
# micro-batches, filter on 4 and df's proper divisor 2, ds's strips (its
# proper divisor 2) of the layers whose outputs keep 2 rows and its batch
# after the split (4); the shards themselves: tests/test_kernels.c
odl = os.path.join(fresh("needed"), "m.odl")
with open(odl, "w") as f:
    f.write("model m {\n    input x: 64x56x56;\n    c = conv(x, 64, kernel=3, pad=1);\n"
            "    r = relu(c);\n    f = flatten(r);\n    y = fc(f, 10);\n}\n")
want = {
    ("conv", CONV): {1, 2, 4, 8}, ("elementwise", "op=relu elements=200704"): {1, 2, 4, 8},
    ("gemm", "m=1 n=10 k=200704 batch=1"): {1, 2, 4, 8},
    ("conv", CONV.replace("k=64", "k=16")): {8}, ("conv", CONV.replace("k=64", "k=32")): {8},
    ("gemm", "m=1 n=3 k=200704 batch=1"): {8}, ("gemm", "m=1 n=5 k=200704 batch=1"): {8},
    ("conv", CONV.replace("h=56", "h=28")): {8},
    ("elementwise", "op=relu elements=100352"): {8},
}
try:
    got = {(k.klass, k.shape): ns for k, ns in pk.kernels_needed(
        oraclec, odl, 8, 4, ["data", "pipeline", "filter", "df", "ds"], "fp32").items()}
except RuntimeError as e:
    got = {("error", str(e)): set()}
ok(got == want, "kernels_needed: oraclec's keys and batches of data, pipeline, filter, df, ds "
   "on 4 GPUs at 8",
   "\n".join("%s: got %s, want %s" % (k, sorted(got.get(k, ())), sorted(want.get(k, ())))
              for k in sorted(set(got) | set(want)) if got.get(k) != want.get(k)))
try:
    pk.kernels_needed(oraclec, os.path.join(tmp, "none.odl"), 8, 1, ["data"], "fp32")
    ok(False, "kernels_needed: oraclec's error raised")
except RuntimeError as e:
    ok("exited 1" in str(e) and "none.odl" in str(e), "kernels_needed: oraclec's error raised",
       str(e))

# --needed's file is kernels_needed's CSV, read as oraclec's output is; a
# hostile one is refused with its line, never half read
with open(odl.replace("m.odl", "k.csv"), "w") as f:
    f.write(subprocess.run([oraclec, odl, "--kernels-needed", "-q", "-b", "8", "-g", "4",
                            "--strategies", "data,pipeline,filter,df,ds", "--precision",
                            "fp32"], capture_output=True, text=True).stdout)
got = {(k.klass, k.shape): ns for k, ns in
       pk.needed_from_csv(open(odl.replace("m.odl", "k.csv")).read(), "it has").items()}
ok(got == want, "needed_from_csv: --kernels-needed's file gives kernels_needed's keys",
   repr(sorted(got))[:300])
HEAD = "class,precision,layout,n,shape\n"
BAD = [
    ("no header", "conv,fp32,NCHW,8," + CONV + "\n", r"no header"),
    ("four fields", HEAD + "conv,fp32,NCHW,8\n", r"a line of 4 fields \(line 2\)"),
    ("a batch of 0", HEAD + "conv,fp32,NCHW,0," + CONV + "\n", r"a batch .* \(line 2\)"),
    ("a batch of 10^30", HEAD + "conv,fp32,NCHW," + "9" * 30 + "," + CONV + "\n",
     r"a batch .* \(line 2\)"),
    ("a batch in superscript digits", HEAD + "conv,fp32,NCHW,\u00b2," + CONV + "\n",
     r"a batch .* \(line 2\)"),
    ("fp8", HEAD + "gemm,fp8,-,8,m=1 n=2 k=3 batch=1\n", r"precision 'fp8', which the probe"),
    ("a layout of its own", HEAD + "conv,fp32,CHWN,8," + CONV + "\n", r"class or layout"),
    ("a shape of words", HEAD + "conv,fp32,NCHW,8,c=many\n", r"NAME=VALUE items \(line 2\)"),
]
for what, text, pattern in BAD:
    try:
        pk.needed_from_csv(text, "it has")
        ok(False, "needed_from_csv refuses " + what, "read")
    except RuntimeError as e:
        ok(re.search(pattern, str(e)) is not None, "needed_from_csv refuses " + what, str(e))

# --needed's file read: a FIFO refused before it blocks, a directory, a
# file over the limit, text that is not UTF-8 -- each one RuntimeError
d = fresh("needed-files")
os.mkfifo(os.path.join(d, "fifo"))
with open(os.path.join(d, "big"), "w") as f:
    f.truncate(pk.NEEDED_MOST + 1)
with open(os.path.join(d, "latin"), "wb") as f:
    f.write(b"class,precision,layout,n,shape\n\xff\n")
for what, name, pattern in (("a FIFO", "fifo", r"^not a regular file$"),
                            ("a directory", ".", r"^not a regular file$"),
                            ("a file of 64 MiB and a byte", "big", r"^larger than 64 MiB$"),
                            ("bytes that are not UTF-8", "latin", r"^cannot read it: ")):
    try:
        pk.read_needed(os.path.join(d, name))
        ok(False, "read_needed refuses " + what, "read")
    except RuntimeError as e:
        ok(re.search(pattern, str(e)) is not None, "read_needed refuses " + what, str(e))

# ---- runs of the probe (torch) -------------------------------------------------

def files_consistent(d):
    """What is wrong with DIR after a run that stopped: a temporary left, a
    system.odl oraclec does not read."""
    bad = [f for f in os.listdir(d) if f.startswith(".")]
    bad = ["left %s" % f for f in bad]
    if os.path.exists(os.path.join(d, "system.odl")):
        r = subprocess.run([oraclec, os.path.join(os.path.dirname(__file__), "data", "onnx",
                                                  "resnet18.onnx"),
                            "-s", os.path.join(d, "system.odl"), "-q"], capture_output=True)
        if r.returncode != 0:
            bad.append("oraclec does not read system.odl: %s" %
                       r.stderr.decode("utf-8", "replace")[:300])
    return bad


if not tpy:
    for what in ("a link named probe.csv", "a file size limit", "a full file system",
                 "SIGTERM during the summary", "--model that oraclec refuses",
                 "--model --resume", "--needed", "--needed unreadable"):
        skip("runs: " + what, "no python3 with torch")
else:
    # a link named probe.csv: replaced, its target untouched (issue 40.1)
    d = fresh("link")
    victim = os.path.join(tmp, "victim")
    with open(victim, "w") as f:
        f.write("precious\n")
    os.symlink(victim, os.path.join(d, "probe.csv"))
    status, out, err = run(["--device", "cpu", "--quick", "--sections", "launch", "-o", d],
                           python=tpy)
    bad = [] if status == 0 else ["exit status %s: %s" % (status, err[-300:])]
    if open(victim).read() != "precious\n":
        bad.append("the link's target was written")
    if os.path.islink(os.path.join(d, "probe.csv")):
        bad.append("probe.csv is still the link")
    elif not open(os.path.join(d, "probe.csv")).read().startswith("section,op,"):
        bad.append("probe.csv is not the probe's")
    ok(not bad, "runs: a link named probe.csv is replaced, its target untouched", "\n".join(bad))

    # a file size limit: every write fails past 1 KiB (EFBIG; Python
    # ignores SIGXFSZ) -- what a full disk does to a write
    def limit():
        resource.setrlimit(resource.RLIMIT_FSIZE, (1024, 1024))
    d = fresh("fsize")
    status, out, err = run(["--device", "cpu", "--quick", "--sections", "launch,host", "-o", d],
                           python=tpy, preexec=limit)
    bad, last = one_line(status, err, 1)
    if not re.search(r"cannot write .*: File too large; the files are those of the last "
                     r"section written", last):
        bad.append("the message %r" % last[:300])
    bad += files_consistent(d)
    ok(not bad, "runs: a file size limit: one line, no temporary, the files readable",
       "\n".join(bad))

    # a full file system: a 64 KiB tmpfs nearly filled (where this may mount one)
    d = fresh("full")
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", d],
                             capture_output=True).returncode == 0
    if not mounted:
        skip("runs: a full file system", "cannot mount a tmpfs here (the file size limit "
             "above stands for it)")
    else:
        try:
            with open(os.path.join(d, "filler"), "wb") as f:
                f.write(b"\0" * (60 * 1024))
            status, out, err = run(["--device", "cpu", "--quick", "--sections", "launch,host",
                                    "-o", d], python=tpy)
            bad, last = one_line(status, err, 1)
            if not re.search(r"cannot write .*: No space left on device", last):
                bad.append("the message %r" % last[:300])
            bad += [b for b in files_consistent(d) if "filler" not in b]
            ok(not bad, "runs: a full file system (ENOSPC): one line, no temporary, the "
               "files readable", "\n".join(bad))
        finally:
            subprocess.run(["umount", d], capture_output=True)

    # SIGTERM during the summary (issue 40.12): the summary raises as the
    # handler would
    d = fresh("summary")
    code = ("import sys, oraclec.probe as p\n"
            "def summary(P, elapsed):\n"
            "    p.on_signal(15, None)\n"
            "p.summary = summary\n"
            "sys.exit(p.main(%r))\n" % (["--device", "cpu", "--quick", "--sections", "launch",
                                          "-o", d],))
    r = subprocess.run([tpy, "-c", code], capture_output=True, timeout=120,
                       env=dict(os.environ, ORACLEC=oraclec))
    err = r.stderr.decode("utf-8", "replace")
    bad, last = one_line(r.returncode, err, 1)
    if "interrupted (SIGTERM) during the summary; %s holds every file" % d not in last:
        bad.append("the message %r" % last[:300])
    bad += files_consistent(d)
    ok(not bad, "runs: SIGTERM during the summary: one line, exit 1, the files whole",
       "\n".join(bad))

    # --model that oraclec refuses: one line naming the model and oraclec's
    d = fresh("badmodel")
    m = os.path.join(d, "m.odl")
    with open(m, "w") as f:
        f.write("model m { input x: 3x8x8; y = nothing(x); }\n")
    status, out, err = run(["--device", "cpu", "--quick", "--model", m, "--sections", "model",
                            "-o", os.path.join(d, "o")], python=tpy)
    bad, last = one_line(status, err, 1)
    if "--model %s: " % m not in last or "exited 1" not in last:
        bad.append("the message %r" % last[:300])
    ok(not bad, "runs: --model that oraclec refuses: one line with oraclec's", "\n".join(bad))

    # --model, then --resume: the rows kept, none measured again
    d = fresh("resume")
    m = os.path.join(d, "m.odl")
    with open(m, "w") as f:
        f.write("model m { input x: 3x16x16; c = conv(x, 8, kernel=3, pad=1); r = relu(c); "
                "f = flatten(r); y = fc(f, 10); }\n")
    o = os.path.join(d, "o")
    argv = ["--device", "cpu", "--quick", "--model", m, "--batch", "2", "--gpus", "2",
            "--strategies", "data,filter", "--sections", "model", "-o", o]
    s1, out1, err1 = run(argv, python=tpy)
    rows1 = open(os.path.join(o, "kernels.csv")).read() if s1 == 0 else ""
    s2, out2, err2 = run(argv + ["--resume"], python=tpy)
    bad = []
    if s1 != 0 or s2 != 0:
        bad.append("exit status %s, %s: %s" % (s1, s2, (err1 + err2)[-300:]))
    if "0 rows to measure, 5 from the table" not in err2:
        bad.append("the second run measured again: %r" % re.findall(r"model: \d+ keys.*", err2))
    body1 = [l for l in rows1.splitlines() if not l.startswith("#")]
    body2 = [l for l in open(os.path.join(o, "kernels.csv")).read().splitlines()
             if not l.startswith("#")] if s2 == 0 else []
    if body1 != body2:
        bad.append("the rows changed")
    # the filter=2 shards: conv's 4 of 8 filters, fc's 5 of 10 outputs
    if not any(",c=3 h=16 w=16 k=4 r=3 s=3 " in l for l in body1) or \
            not any(",m=1 n=5 k=2048 batch=1," in l for l in body1):
        bad.append("no filter=2 shard rows: %r" % body1[:8])
    if 'kernels = "kernels.csv";' not in open(os.path.join(o, "system.odl")).read():
        bad.append("system.odl does not name kernels.csv")
    bad += files_consistent(o)
    ok(not bad, "runs: --model writes its keys and filter=2's shards; --resume keeps them",
       "\n".join(bad))

    # --needed: the keys of --model's run from oraclec's CSV, no oraclec
    # run (ORACLEC names none there is); the same rows as --model wrote
    k = os.path.join(d, "k.csv")
    with open(k, "w") as f:
        f.write(subprocess.run([oraclec, m, "--kernels-needed", "-q", "-b", "2", "-g", "2",
                                "--strategies", "data,filter", "--precision", "fp32"],
                               capture_output=True, text=True).stdout)
    o2 = os.path.join(d, "o2")
    s3, out3, err3 = run(["--device", "cpu", "--quick", "--needed", k, "--sections", "model",
                          "--oraclec", os.path.join(d, "no-oraclec"), "-o", o2], python=tpy)
    bad = [] if s3 == 0 else ["exit status %s: %s" % (s3, err3[-300:])]
    keys = lambda text: sorted(",".join(l.split(",")[:5]) for l in text.splitlines()
                               if l and not l.startswith("#"))
    body3 = open(os.path.join(o2, "kernels.csv")).read() if s3 == 0 else ""
    if s3 == 0 and keys(body3) != keys(rows1):
        bad.append("other keys than --model's: %r" % keys(body3)[:4])
    if s3 == 0 and "# keys: %s " % k not in body3:
        bad.append("the table does not say where its keys came from")
    if s3 == 0 and 'kernels = "kernels.csv";' not in open(os.path.join(o2, "system.odl")).read():
        bad.append("system.odl does not name kernels.csv")
    ok(not bad, "runs: --needed times --model's keys from oraclec's CSV, without oraclec",
       "\n".join(bad))

    # --needed that cannot be read: one line naming it, exit 1
    status, out, err = run(["--device", "cpu", "--quick", "--needed", os.path.join(d, "none"),
                            "--sections", "model", "-o", os.path.join(d, "o3")], python=tpy)
    bad, last = one_line(status, err, 1)
    if "--needed %s: cannot read it" % os.path.join(d, "none") not in last:
        bad.append("the message %r" % last[:300])
    ok(not bad, "runs: --needed unreadable: one line naming it", "\n".join(bad))

print("1..%d" % n)
sys.exit(1 if failed else 0)
