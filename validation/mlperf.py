#!/usr/bin/env python3
"""mlperf.py -- oraclec against ResNet-50 trained data parallel on 8 to 2,048 V100s.

Judges the model of a synchronous step at scale on runs it was not fitted to:
the 15 rows of validation/mlperf-v100/runs.csv (a copy of
../shared/data/mlperf-v100 with its README: MLPerf Training v0.5-v0.7 result
logs and one paper), each mapped as that README says:

    oraclec examples/resnet50.onnx -s SYSTEM --implementation IMPL -g GPUS
            -b BATCH_PER_GPU --strategies data --precision fp16
            --channels-last --data synthetic [--sync-bn K]

SYSTEM from the row's `oraclec_system` column (`dgx-1` is the built-in, the
rest files beside runs.csv), IMPL from implementations.csv beside it: the
README's `implementation` column was written before implementations said
which NCCL they run and which kernels they fuse, which differ by round and
by config (v0.6's 32-node config runs plain convolutions where its others
run NormalizedConvolution), so each row names the file of its own config,
every key sourced from that config and its round's code.  `bn_group` above
1 becomes `--sync-bn` (every row has 1).  Predicted images/s = GPUS x BATCH
/ the iteration's total.

It prints per row the iteration's parts, measured and predicted images/s
and the accuracy 1 - |p - m| / m (clamped at 0), then the mean; and per
multi-node row the per-GPU scaling from one node (images/s a GPU over the
single-node row's of the same round, submitter and GPU) measured and
predicted, and how many of those pairs are within 10 %.  Nothing is fitted
to these rows.  Standard library only.

    python3 validation/mlperf.py [--oraclec ./oraclec] [RUNS.csv]
"""
import csv
import os
import sys

import judge  # validation/judge.py, beside this script

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(HERE)
DATA = os.path.join(HERE, "mlperf-v100")
MODEL = os.path.join(TOP, "examples", "resnet50.onnx")
# the iteration's parts printed, as the JSON report names them (a part the
# build does not report prints as "-")
PARTS = [("compute", "compute_s"), ("exch", "gradient_allreduce_s"),
         ("hidden", "overlapped_communication_s"), ("update", "weight_update_s"),
         ("host", "dispatch_s"), ("syncbn", "sync_bn_s"), ("skew", "skew_s")]


def predict(oraclec, r, impls):
    system = r["oraclec_system"]
    if system.endswith(".odl"):
        system = os.path.join(DATA, system)
    impl = os.path.join(DATA, impls[r["id"]])
    cmd = [oraclec, MODEL, "-q", "-f", "json", "-s", system, "--implementation", impl,
           "-g", r["gpus"], "-b", r["batch_per_gpu"], "--strategies", "data",
           "--precision", "fp16", "--channels-last", "--data", "synthetic"]
    if r["bn_group"] not in ("", "1"):
        cmd += ["--sync-bn", r["bn_group"]]
    return judge.predict("mlperf.py", cmd)


def main(argv):
    oraclec, path = judge.command_line(argv, os.path.join(DATA, "runs.csv"))
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    with open(os.path.join(DATA, "implementations.csv"), newline="") as f:
        impls = {r["id"]: r["implementation"] for r in csv.DictReader(f)}
    print("%-24s %5s %4s %s %10s %10s %6s %7s" % (
        "row", "gpus", "b", " ".join("%7s" % n for n, _ in PARTS), "measured", "oraclec",
        "acc", "missing"))
    acc, pred = [], {}
    for r in rows:
        k = predict(oraclec, r, impls)
        it = k["iteration"]
        p = int(r["gpus"]) * int(r["batch_per_gpu"]) / it["total_s"]
        m = float(r["value"])
        a = judge.accuracy(p, m)
        acc.append(a)
        pred[r["id"]] = p
        # the measured step less the predicted, in ms: what the model lacks
        # (negative: what it has too much of)
        missing = (int(r["gpus"]) * int(r["batch_per_gpu"]) / m - it["total_s"]) * 1e3
        print("%-24s %5s %4s %s %10.0f %10.0f %6.3f %7.2f" % (
            r["id"], r["gpus"], r["batch_per_gpu"],
            " ".join("%7.2f" % (it[j] * 1e3) if j in it else "%7s" % "-"
                     for _, j in PARTS), m, p, a, missing))
    print("(parts in ms a step: the compute, the exposed and the hidden gradient exchange, "
          "the update, the host wait, synchronised batch norm, the slowest of N; missing: "
          "the measured step less the predicted)")
    print("mean accuracy over %d rows: %.3f" % (len(acc), sum(acc) / len(acc)))
    print()
    print("per-GPU scaling from one node (images/s a GPU over the single-node row's):")
    single = {(r["round"], r["submitter"], r["gpu"]): r for r in rows if r["nodes"] == "1"}
    within = pairs = 0
    for r in rows:
        s = single.get((r["round"], r["submitter"], r["gpu"]))
        if r["nodes"] == "1" or not s:
            continue
        per = lambda row, v: v / int(row["gpus"])
        ms = per(r, float(r["value"])) / per(s, float(s["value"]))
        ps = per(r, pred[r["id"]]) / per(s, pred[s["id"]])
        ok = abs(ps - ms) / ms <= 0.10
        pairs += 1
        within += ok
        print("  %-24s over %-14s measured %.3f oraclec %.3f %s" % (
            r["id"], s["id"], ms, ps, "within 10 %" if ok else "off by %.0f %%" % (
                100 * (ps - ms) / ms)))
    print("within 10 %%: %d of %d pairs" % (within, pairs))


if __name__ == "__main__":
    main(sys.argv)
