#!/bin/sh
# launch-signal.sh -- python3 -m oraclec.launch stopped by a signal in the
# middle of a timed, traced run (issue 40.13; docs/plans.md, "Running a
# plan"): SIGINT to the launcher alone, SIGINT to its process group (what
# Ctrl-C sends), SIGTERM and SIGHUP: exit status 128 + N, one line on
# stderr (`oraclec.launch: stopped by SIGINT: ...`), no traceback, every
# rank gone within the launcher's grace, nothing written then or after
# (no --out row, no models folder, no --trace, no temporary beside them)
# and its temporary folder removed.  SIGKILL to the launcher: its ranks
# end too (PR_SET_PDEATHSIG), and write nothing after it.  Skipped where
# no python3 has torch and torchvision.  TAP.
. "${srcdir:=.}/tests/tap.sh"
tap_begin launchsignal

tap_python 'import torch, torchvision' \
	"no python3 with torch and torchvision (./bootstrap --tests installs them)"
tap_models

# a cpu plan (no device note on stderr), 2 ranks, 4 samples
"$ORACLEC" "$resnet" --grid data=2 -b 2 --plan pytorch -q -o "$tmp/p.json" 2>"$tmp/err" || {
	echo "1..1"
	echo "not ok 1 - oraclec --plan pytorch: exit status $?"
	exit 1
}
sed 's/"device_type": "cuda"/"device_type": "cpu"/' "$tmp/p.json" >"$tmp/plan.json"

exec "$py" - "$tmp" <<'PY'
import os
import signal
import subprocess
import sys
import time

tmp = sys.argv[1]
n = failed = 0


def tap(ok, desc, why):
    global n, failed
    n += 1
    print("%s %d - %s" % ("ok" if ok else "not ok", n, desc))
    if not ok:
        failed += 1
        for line in why:
            print("# " + line[:300])
    sys.stdout.flush()


def children(pid):
    """The ranks: the processes multiprocessing's spawn started (not its
    resource tracker)."""
    out = []
    try:
        with open("/proc/%d/task/%d/children" % (pid, pid)) as f:
            kids = [int(p) for p in f.read().split()]
    except OSError:
        return out
    for k in kids:
        try:
            with open("/proc/%d/cmdline" % k, "rb") as f:
                if b"spawn_main" in f.read():
                    out.append(k)
        except OSError:
            pass
    return out


def alive(pid):
    """Running, not a zombie waiting to be reaped."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def case(name, sig, group=False):
    """The launcher started on a long timed, traced run; `sig` sent once
    its 2 ranks have stepped a while; what must hold after."""
    d = os.path.join(tmp, name)
    out, private = os.path.join(d, "out"), os.path.join(d, "tmp")
    os.makedirs(out)
    os.makedirs(private)
    env = dict(os.environ, TMPDIR=private)
    with open(os.path.join(d, "stdout"), "w") as so, open(os.path.join(d, "stderr"), "w") as se:
        p = subprocess.Popen(
            [sys.executable, "-m", "oraclec.launch", "--plan", os.path.join(tmp, "plan.json"),
             "--model", "torchvision:resnet18", "--image-size", "32", "--time", "100000",
             "--warmup", "2", "--out", os.path.join(out, "m.csv"),
             "--trace", os.path.join(out, "t.json")],
            stdout=so, stderr=se, stdin=subprocess.DEVNULL, env=env, start_new_session=True)
        why, ranks = [], []
        end = time.monotonic() + 120
        while time.monotonic() < end and p.poll() is None:
            ranks = children(p.pid)
            if len(ranks) == 2:
                break
            time.sleep(0.2)
        if len(ranks) != 2:
            why.append("2 ranks did not start (children %r, exit %r)" % (ranks, p.poll()))
        time.sleep(8)  # the ranks import torch, build the model and step
        if group:
            os.killpg(p.pid, sig)
        else:
            os.kill(p.pid, sig)
        try:
            rc = p.wait(60)
        except subprocess.TimeoutExpired:
            p.kill()
            rc = p.wait()
            why.append("the launcher did not end within 60 s")
    # the ranks: gone within the launcher's grace (10 s) and their own
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and any(alive(r) for r in ranks):
        time.sleep(0.2)
    left = [r for r in ranks if alive(r)]
    if left:
        why.append("ranks still running: %r" % left)
        for r in left:
            os.kill(r, signal.SIGKILL)
    time.sleep(3)  # what a rank would still write, it has
    err = open(os.path.join(d, "stderr")).read()
    if sig == signal.SIGKILL:
        if rc != -signal.SIGKILL:
            why.append("exit %r, not killed" % rc)
    else:
        want = 128 + sig
        if rc != want:
            why.append("exit status %r, expected %d" % (rc, want))
        line = "oraclec.launch: stopped by %s: the ranks stopped, nothing written\n" % \
            signal.Signals(sig).name
        if err != line:
            why.append("stderr is not %r: %r" % (line, err[-600:]))
        if os.listdir(private):
            why.append("its temporary folder left: %r" % os.listdir(private))
    if "Traceback" in err:
        why.append("a traceback")
    if os.listdir(out):
        why.append("written: %r" % os.listdir(out))
    return why


for name, sig, group, desc in (
        ("int", signal.SIGINT, False, "SIGINT to the launcher alone"),
        ("ctrlc", signal.SIGINT, True, "SIGINT to its process group (Ctrl-C)"),
        ("term", signal.SIGTERM, False, "SIGTERM"),
        ("hup", signal.SIGHUP, False, "SIGHUP")):
    tap(not (why := case(name, sig, group)), "%s: exit %d, one line, the ranks stopped, "
        "nothing written, the temporary folder removed" % (desc, 128 + sig), why)
why = case("kill", signal.SIGKILL)
tap(not why, "SIGKILL to the launcher: its ranks end (PR_SET_PDEATHSIG), nothing written", why)
print("1..%d" % n)
sys.exit(1 if failed else 0)
PY
