"""judge.py -- what the validation scripts (published.py, h100.py,
megatron.py, mlperf.py) share: their command line, oraclec's prediction of
one configuration, and the accuracy they score it by.  Standard library
only."""
import json
import os
import subprocess
import sys

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def accuracy(p, m):
    """1 - |predicted - measured| / measured, clamped at 0."""
    return max(0.0, 1 - abs(p - m) / m)


def command_line(argv, default):
    """[--oraclec PATH] [FILE]: the oraclec to run (the build's by default)
    and the measured rows' file (default)."""
    oraclec, args = os.path.join(TOP, "oraclec"), argv[1:]
    if len(args) >= 2 and args[0] == "--oraclec":
        oraclec, args = args[1], args[2:]
    return oraclec, args[0] if args else default


def predict(who, cmd):
    """The first strategy of oraclec's JSON report for cmd (run in the C
    locale); exits with `who: CMD: oraclec's stderr` where oraclec fails."""
    try:
        p = subprocess.run(cmd, capture_output=True, text=True,
                           env=dict(os.environ, LC_ALL="C"))
    except OSError as e:
        sys.exit("%s: %s: %s" % (who, cmd[0], e.strerror))
    if p.returncode:
        sys.exit("%s: %s: %s" % (who, " ".join(cmd), p.stderr.strip()))
    return json.loads(p.stdout)["strategies"][0]
