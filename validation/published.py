#!/usr/bin/env python3
"""published.py -- oraclec against published training throughputs.

Judges the model on runs it was not calibrated on: NVIDIA's published
PyTorch throughputs (DeepLearningExamples ConvNets, ../shared/data/published,
copied to validation/published-dle-pytorch.csv).  For every row whose model
oraclec has a file for, it runs

    oraclec MODEL -s SYSTEM -g GPUS -b BATCH --precision P [--channels-last]
            --strategies data -f json

(data parallelism in one node, as the runs were; --channels-last where the
row's notes say the run used NHWC: the AMP runs; SYSTEM the row's
nearest_oraclec_system, but dgx-1 for a DGX-1, which that column predates),
turns the predicted time
per iteration into images/s (gpus x batch / iteration_s) and prints it
against the published figure with the accuracy 1 - |pred - meas| / meas,
clamped at 0, and the mean per precision and overall.  Nothing here is
fitted: the rows judge the model.  Standard library only.

    python3 validation/published.py [--oraclec ./oraclec] [CSV]
"""
import csv
import os
import sys

import judge  # validation/judge.py, beside this script

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(HERE)
# the model files oraclec has for the rows' models (torchvision's
# resnet50 is v1.5, stride 2 in the 3x3 conv, as NVIDIA's; the ResNeXts are
# written from DeepLearningExamples' models/resnet.py)
MODELS = {
    "resnet50": os.path.join(TOP, "examples", "resnet50.odl"),
    "resnext101_32x4d": os.path.join(TOP, "examples", "resnext101_32x4d.odl"),
    "se_resnext101_32x4d": os.path.join(TOP, "examples", "se_resnext101_32x4d.odl"),
    "efficientnet_b0": os.path.join(TOP, "tests", "data", "zoo", "efficientnet_b0.onnx"),
}


# the recipes' optimizers (configs.yml at 7bdfc81d): the ResNets SGD with
# momentum 0.875 (resnet_params), EfficientNet RMSprop with momentum 0.9;
# all torch.optim
OPTIMIZERS = {"resnet50": "momentum", "resnext101_32x4d": "momentum",
              "se_resnext101_32x4d": "momentum", "efficientnet_b0": "rmsprop"}


def system(row):
    """The built-in system of the row's machine: the CSV's nearest one,
    written before oraclec had a DGX-1 (it names abci, 4 V100s a node)."""
    return "dgx-1" if row["hardware"].startswith("DGX-1") else row["nearest_oraclec_system"]


def workers(row):
    """DataLoader workers per GPU process of the row's run.  The READMEs'
    benchmark commands run launch.py with --platform DGXA100 or DGX1V,
    which sets `workers` from configs.yml's platform table (at 7bdfc81d,
    the tables' commit: DGXA100 16, DGX1V 8), not main.py's -j default
    of 5."""
    return "16" if "A100" in row["hardware"] else "8"


def main(argv):
    oraclec, path = judge.command_line(argv, os.path.join(HERE, "published-dle-pytorch.csv"))
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    acc, by_prec, skipped = [], {}, {}
    print("%-36s %-9s %5s %9s %9s %6s %8s  %s" % ("id", "precision", "gpus", "published",
                                                  "oraclec", "ratio", "accuracy", "limited by"))
    pairs = []
    for r in rows:
        model = MODELS.get(r["model"])
        if not model:
            skipped[r["model"]] = skipped.get(r["model"], 0) + 1
            continue
        cmd = [oraclec, model, "-q", "-f", "json", "-s", system(r),
               "-g", r["gpus"], "-b", r["batch_per_gpu"], "--precision", r["precision"],
               "--strategies", "data", "--implementation", "pytorch",
               "--loader-workers", workers(r), "--optimizer", OPTIMIZERS[r["model"]]]
        if "nhwc" in r["notes"] and r["precision"].startswith("amp"):
            cmd.append("--channels-last")
        k = judge.predict("published.py", cmd)
        pred = int(r["gpus"]) * int(r["batch_per_gpu"]) / k["iteration"]["total_s"]
        meas = float(r["value"])
        a = judge.accuracy(pred, meas)
        acc.append(a)
        by_prec.setdefault(r["precision"], []).append(a)
        pairs.append((meas, pred))
        print("%-36s %-9s %5s %9.0f %9.0f %6.2f %8.3f  %s" % (r["id"], r["precision"], r["gpus"],
                                                            meas, pred, pred / meas, a,
                                                            k["bottleneck"]))
    print()
    for prec in sorted(by_prec):
        v = by_prec[prec]
        print("%-9s %2d rows, mean accuracy %.3f" % (prec, len(v), sum(v) / len(v)))
    print("all       %2d rows, mean accuracy %.3f" % (len(acc), sum(acc) / len(acc)))
    # Kendall's tau-a over the pairs whose published throughputs differ:
    # whether oraclec ranks the configurations as NVIDIA measured them
    sgn = lambda x: (x > 0) - (x < 0)
    n = c = 0
    for i in range(len(pairs)):
        for j in range(i + 1, len(pairs)):
            if pairs[i][0] != pairs[j][0]:
                n += 1
                c += sgn(pairs[i][0] - pairs[j][0]) * sgn(pairs[i][1] - pairs[j][1])
    if n:
        print("ranking   Kendall's tau %.3f over %d pairs" % (c / n, n))
    for m in sorted(skipped):
        print("skipped: %d rows of %s (no model file)" % (skipped[m], m))


if __name__ == "__main__":
    main(sys.argv)
