#!/usr/bin/env python3
"""mlperf_jitter.py -- what the one-node MLPerf logs say of a step's spread.

The MXNet ResNet-50 logs of NVIDIA's MLPerf Training v0.6 and v0.7
submissions print a Speedometer line every 20 steps ("Epoch[7] Batch
[660-680]  Speed: 11237.17 samples/sec").  For each one-node row of
validation/mlperf-v100/runs.csv whose logs have them, this prints per run
the number of windows (an epoch's first window, and the first epoch, left
out), their coefficient of variation, a robust one (1.4826 x the median
absolute deviation over the median) and the lag-1 autocorrelation of
consecutive windows; then the median over the runs, and what it is as
oraclec's `jitter` under the model's own assumptions (docs/model.md, "The
slowest of N": each GPU's step an independent normal draw, the node's
step the largest of its n GPUs'):

    jitter = cv_window x sqrt(20) / sd(largest of n standard normals)

(sd 0.612 for 8, 0.543 for 16).  The figures are reported in
docs/model.md's MLPerf section; they are not used by any system file.

    python3 tools/mlperf_jitter.py mlperf/training_results_v0.6=GITDIR \\
            mlcommons/training_results_v0.7=GITDIR [RUNS.csv]

GITDIR: a clone (bare or not) of the results repository; the log is read
at the row's commit (`source` column).  v0.5's logs print no Speedometer
lines: its rows are listed as without.
"""
import csv
import math
import os
import re
import statistics
import subprocess
import sys

WINDOW = 20
LINE = re.compile(r"Epoch\[(\d+)\] Batch \[(\d+)-(\d+)\]\s+Speed: ([\d.]+) samples/sec")


def largest_normal_sd(n, step=1.0 / 256, top=12.0):
    """The standard deviation of the largest of n standard normals: the
    moments of the density n phi(x) Phi(x)^(n-1), by Simpson's rule."""
    def pdf(x):
        return n * math.exp(-x * x / 2) / math.sqrt(2 * math.pi) * \
            (0.5 * (1 + math.erf(x / math.sqrt(2)))) ** (n - 1)
    k = int(2 * top / step)
    m1 = m2 = 0.0
    for i in range(k + 1):
        x = -top + i * step
        w = 1 if i in (0, k) else (4 if i % 2 else 2)
        m1 += w * x * pdf(x)
        m2 += w * x * x * pdf(x)
    m1 *= step / 3
    m2 *= step / 3
    return math.sqrt(m2 - m1 * m1)


def windows(text):
    """The Speedometer rates of full windows, an epoch's first and the
    first epoch left out (start-up, the loader's refill)."""
    out = []
    for m in LINE.finditer(text):
        epoch, first, last = int(m.group(1)), int(m.group(2)), int(m.group(3))
        if epoch >= 1 and first > 0 and last - first == WINDOW:
            out.append(float(m.group(4)))
    return out


def describe(v):
    mean, med = statistics.fmean(v), statistics.median(v)
    mad = statistics.median(abs(x - med) for x in v)
    d = [x - mean for x in v]
    lag1 = sum(a * b for a, b in zip(d, d[1:])) / sum(a * a for a in d)
    return statistics.pstdev(v) / mean, 1.4826 * mad / med, lag1


def main(argv):
    repos, runs = {}, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..",
                                   "validation", "mlperf-v100", "runs.csv")
    for a in argv[1:]:
        if "=" in a:
            name, path = a.split("=", 1)
            repos[name] = path
        else:
            runs = a
    with open(runs, newline="") as f:
        rows = [r for r in csv.DictReader(f) if r["nodes"] == "1"]
    print("row              run          windows     cv  robust  lag1")
    for r in rows:
        repo, rest = r["source"].split("@", 1)
        commit, folder = rest.split(":", 1)
        if repo not in repos:
            print("%-16s (no clone of %s given)" % (r["id"], repo))
            continue
        robust = []
        for i in range(5):
            path = "%s/result_%d.txt" % (folder, i)
            p = subprocess.run(["git", "--git-dir", repos[repo], "show", commit + ":" + path],
                               capture_output=True, text=True)
            v = windows(p.stdout) if p.returncode == 0 else []
            if len(v) < 20:
                print("%-16s result_%d.txt  no Speedometer windows" % (r["id"], i))
                continue
            cv, rcv, lag1 = describe(v)
            robust.append(rcv)
            print("%-16s result_%d.txt %7d %6.2f%% %6.2f%% %5.2f" % (r["id"], i, len(v),
                                                                   100 * cv, 100 * rcv, lag1))
        if robust:
            n = int(r["gpus"])
            cv = statistics.median(robust)
            print("%-16s median robust cv %.2f%%: jitter %.4f (%d GPUs, sd of their "
                  "largest %.3f)" % (r["id"], 100 * cv, cv * math.sqrt(WINDOW) /
                                     largest_normal_sd(n), n, largest_normal_sd(n)))


if __name__ == "__main__":
    main(sys.argv)
