#!/usr/bin/env python3
"""megatron.py -- oraclec against Megatron-LM's published GPT runs.

Judges the model of Megatron-LM's parallelism on runs it was not fitted
to: SC'21's Table 1 (Narayanan et al., "Efficient Large-Scale Language
Model Training on GPU Clusters Using Megatron-LM": ten GPTs of 1.7 B to
1 T parameters on 32 to 3,072 A100s; validation/megatron-sc21/, a copy of
../shared/data/megatron-sc21/ with its README).  Each row maps onto
oraclec as Megatron ran it:

    oraclec MODEL -s dgx-a100 --implementation IMPL -g GPUS -B GBS
            --optimizer adamw --data synthetic --precision fp16
            --grid data=DP,tensor=TP[,pipeline=PP] --nesting pipeline-outer
            --micro-batches GBS/(DP x MBS) [--schedule 1f1b|interleaved:V]
            --recompute every:K

(Megatron's --fp16 runs a half-precision module with fp32 main weights and
gradients, which no precision of oraclec counts yet: --precision fp16 is the
closest; full recomputation of every transformer layer is `every:K`, K the IR layers of
one, from each model file's header; Megatron's rank order tp-dp-pp is
oraclec's pipeline-outer.)  The measured figure is the teraFLOP/s per GPU
by the paper's count, F = 96 B s l h^2 (1 + s/6h + V/16lh) an iteration
(eq. 3, the recomputed forward counted), so oraclec's is F over its
iteration's time and the GPUs.  It prints each row, then the mean
accuracy 1 - |p - m| / m (clamped at 0) on the teraFLOP/s and on the time
per iteration, and whether any row that ran is called infeasible.
Nothing is fitted to these rows.  Standard library only.

    python3 validation/megatron.py [--oraclec ./oraclec] [RUNS.csv]
"""
import csv
import os
import re
import sys

import judge  # validation/judge.py, beside this script

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "megatron-sc21")


def block_layers(model):
    """The IR layers of one transformer layer (the model file's header)."""
    with open(model) as f:
        m = re.search(r"oraclec-block-layers: (\d+)", f.read())
    return int(m.group(1))


def flops(r):
    """SC'21 eq. 3: an iteration's FLOPs, the recomputed forward counted."""
    B, s, l, h, V = (float(r[k]) for k in ("global_batch", "seq_len", "layers", "hidden",
                                            "vocab"))
    return 96 * B * s * l * h * h * (1 + s / (6 * h) + V / (16 * l * h))


def command(oraclec, r):
    tp, pp, dp = int(r["tp"]), int(r["pp"]), int(r["dp"])
    mbs, gbs, vp = int(r["micro_batch"]), int(r["global_batch"]), int(r["vp"])
    model = os.path.join(DATA, "models", r["odl"] + ".odl")
    grid = "data=%d,tensor=%d" % (dp, tp)
    if pp > 1:
        grid += ",pipeline=%d" % pp
    cmd = [oraclec, model, "-q", "-f", "json", "-s", r["oraclec_system"],
           "--implementation", os.path.join(DATA, r["oraclec_impl"]),
           "-g", r["gpus"], "-B", r["global_batch"], "--optimizer", "adamw",
           "--data", "synthetic", "--precision", "fp16", "--grid", grid,
           "--nesting", "pipeline-outer", "--micro-batches", str(gbs // (dp * mbs)),
           "--recompute", "every:%d" % block_layers(model)]
    if pp > 1:
        cmd += ["--schedule", "interleaved:%d" % vp if vp > 1 else "1f1b"]
    return cmd


def main(argv):
    oraclec, path = judge.command_line(argv, os.path.join(DATA, "runs.csv"))
    with open(path) as f:
        rows = list(csv.DictReader(f))
    tf_acc, t_acc, infeasible = [], [], []
    print("%-18s %5s %-18s %8s %8s %6s %9s %9s %6s  %s" % (
        "run", "gpus", "grid", "TFLOP/s", "oraclec", "acc", "iter s", "oraclec", "acc",
        "limited by"))
    for r in rows:
        cmd = command(oraclec, r)
        k = judge.predict("megatron.py", cmd)
        t = k["iteration"]["total_s"]
        tf = flops(r) / (t * int(r["gpus"])) / 1e12
        m = float(r["value"])
        a, b = judge.accuracy(tf, m), judge.accuracy(t, float(r["time_s"]))
        tf_acc.append(a)
        t_acc.append(b)
        if not k["feasible"]:
            infeasible.append("%s (%s)" % (r["id"], k["reason"]))
        grid = ",".join("%s%s" % (d[0], v) for d, v in k["grid"].items())
        print("%-18s %5s %-18s %8.0f %8.1f %6.3f %9.3f %9.3f %6.3f  %s" % (
            r["id"], r["gpus"], grid, m, tf, a, float(r["time_s"]), t, b,
            k["bottleneck"] if k["feasible"] else "INFEASIBLE: " + k["reason"]))
    print()
    print("%d rows: accuracy %.3f on the teraFLOP/s per GPU, %.3f on the time per "
          "iteration; %d called infeasible" % (len(tf_acc), sum(tf_acc) / len(tf_acc),
                                               sum(t_acc) / len(t_acc), len(infeasible)))
    for s in infeasible:
        print("infeasible: " + s)


if __name__ == "__main__":
    main(sys.argv)
