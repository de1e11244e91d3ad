#!/usr/bin/env python3
"""h100.py -- oraclec against one-GPU training steps measured on an H100.

Judges the model of one GPU on runs it was not fitted to: 56 steps of 12
torchvision models on an H100 80GB HBM3 with PyTorch 2.11 (fp32, TF32, AMP
fp16 channels-last, AMP bf16; validation/h100/, a copy of
../shared/data/h100/ with its README and bench.py).  Each row maps onto
oraclec as that README says:

    oraclec MODEL -s dgx-h100 -g 1 -b BATCH --strategies data
            --precision PRECISION --implementation pytorch-2 --data synthetic
            [--channels-last]

the fp32 rows with validation/h100/pytorch-2-fp32.odl (pytorch-2 with
conv_tf32 = false: the runs turned TF32 off for cuDNN too).  Time: the
measured iter_s against the iteration's total.  Memory: peak_allocated
against the predicted peak less the system's reserve (the reserve stands
for the context and the allocator's slack that max_memory_allocated does
not count).  It prints each row, then the mean accuracy 1 - |p - m| / m
(clamped at 0) per precision and overall, for time and memory, and how
many rows' memory is within 10 %.  Nothing is fitted to these rows.
Standard library only.

    python3 validation/h100.py [--system SYSTEM] [--oraclec ./oraclec] [STEPS.jsonl]

--system (default dgx-h100) judges steps of another GPU measured the same
way, e.g. bench/device.sh's with the probe's system.odl and its kernel
tables.
"""
import gzip
import json
import os
import shutil
import sys
import tempfile

import judge  # validation/judge.py, beside this script

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(HERE)
# where the project keeps each model's export (tests/data/onnx: the shared
# torchvision exports; tests/data/zoo: tools/export_zoo.py's, gzip'd when
# large)
DIRS = [os.path.join(TOP, "tests", "data", "onnx"), os.path.join(TOP, "tests", "data", "zoo")]


def model_file(name, tmp):
    """The ONNX file of torchvision model `name` (gunzipped into tmp)."""
    for d in DIRS:
        p = os.path.join(d, name + ".onnx")
        if os.path.exists(p):
            return p
        if os.path.exists(p + ".gz"):
            out = os.path.join(tmp, name + ".onnx")
            if not os.path.exists(out):
                with gzip.open(p + ".gz") as f, open(out, "wb") as g:
                    shutil.copyfileobj(f, g)
            return out
    return None


def command(oraclec, r, model, system="dgx-h100"):
    """oraclec's command line of step row r (model: its ONNX file), as the
    README maps a row."""
    impl = os.path.join(HERE, "h100", "pytorch-2-fp32.odl") if r["precision"] == "fp32" \
        else "pytorch-2"
    cmd = [oraclec, model, "-q", "-f", "json", "-s", system, "-g", "1",
           "-b", str(r["batch"]), "--strategies", "data",
           "--precision", r["precision"], "--implementation", impl, "--data", "synthetic"]
    if r["channels_last"]:
        cmd.append("--channels-last")
    return cmd


def main(argv):
    system = "dgx-h100"
    if len(argv) >= 2 and argv[1] == "--system":
        if len(argv) < 3:
            sys.exit("usage: h100.py [--system SYSTEM] [--oraclec ORACLEC] [STEPS.jsonl]")
        system, argv = argv[2], argv[:1] + argv[3:]
    oraclec, path = judge.command_line(argv, os.path.join(HERE, "h100", "steps.jsonl"))
    with open(path) as f:
        rows = [json.loads(line) for line in f if line.strip()]
    time_acc, mem_acc, skipped = {}, {}, []
    print("%-16s %5s %-9s %9s %9s %6s %9s %9s %6s  %s" % (
        "model", "batch", "precision", "step ms", "oraclec", "acc", "peak GB", "oraclec", "acc",
        "limited by"))
    with tempfile.TemporaryDirectory() as tmp:
        for r in rows:
            if "error" in r:
                skipped.append("%s (%s)" % (r["model"], r["error"][:40]))
                continue
            model = model_file(r["model"], tmp)
            if not model:
                skipped.append(r["model"] + " (no ONNX file)")
                continue
            k = judge.predict("h100.py", command(oraclec, r, model, system))
            t = k["iteration"]["total_s"]
            m = k["memory"]["peak"] - k["memory"]["reserved"]
            a, b = judge.accuracy(t, r["iter_s"]), judge.accuracy(m, r["peak_allocated"])
            time_acc.setdefault(r["precision"], []).append(a)
            mem_acc.setdefault(r["precision"], []).append(b)
            print("%-16s %5d %-9s %9.2f %9.2f %6.3f %9.2f %9.2f %6.3f  %s" % (
                r["model"], r["batch"], r["precision"], r["iter_s"] * 1e3, t * 1e3, a,
                r["peak_allocated"] / 1e9, m / 1e9, b, k["bottleneck"]))
    print()
    alltime = [a for v in time_acc.values() for a in v]
    allmem = [b for v in mem_acc.values() for b in v]
    for prec in sorted(time_acc):
        v, w = time_acc[prec], mem_acc[prec]
        print("%-9s %2d rows, time accuracy %.3f, memory accuracy %.3f" % (
            prec, len(v), sum(v) / len(v), sum(w) / len(w)))
    if alltime:
        print("all       %2d rows, time accuracy %.3f, memory accuracy %.3f, "
              "memory within 10 %%: %d of %d" % (
                  len(alltime), sum(alltime) / len(alltime), sum(allmem) / len(allmem),
                  sum(1 for b in allmem if b >= 0.9), len(allmem)))
    for s in skipped:
        print("skipped: " + s)


if __name__ == "__main__":
    main(sys.argv)
