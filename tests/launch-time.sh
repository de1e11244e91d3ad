#!/bin/sh
# launch-time.sh -- python3 -m oraclec.launch --time and --trace on the CPU
# (gloo; docs/plans.md, "Running a plan"): ResNet-18 under data=2 and
# pipeline=2 plans, warm-up steps then timed ones, and filter=2 traced.
# Asserted: the step time printed is positive; M.csv (written over an
# older file, through a temporary) has exactly oraclec validate's columns
# then precision, implementation, peak_memory_bytes, one row whose model,
# strategy, grid, gpus (the plan's world_size) and global_batch are the
# run's, measured_iteration_s the printed median, a positive peak; the
# ONNX export beside it, which `oraclec validate M.csv --models M.models`
# reads and predicts; each rank's threads (cores / ranks).  The trace:
# one ProfilerStep per timed step, a range per module call named by its
# path (layer1.0.conv1) inside them, the convolution's forward operator
# attributed to it, and its backward operator linked to it by the
# autograd sequence number and the forward thread, and the batch rank 0's
# modules take (none for a split plan); without --time the
# trace holds the last step (a filter=2 plan's, its split fc named fc).
# The row's strategy and grid for other meshes (in-process).  A per-layer
# plan has no row for validate: --out is refused.  Skipped where no
# python3 has torch and torchvision.  TAP.
. "${srcdir:=.}/tests/tap.sh"
tap_begin launchtime

tap_python 'import torch, torchvision' \
	"no python3 with torch and torchvision (./bootstrap --tests installs them)"
tap_models
threads=$("$py" -c 'import os; print(max(1, len(os.sched_getaffinity(0)) // 2))')

# timed NAME ONNX GRID [ORACLEC ARGS] -- [LAUNCH ARGS]: the plan, then the
# run timed into $tmp/NAME.csv
timed()
{
	name=$1 m=$2 grid=$3
	shift 3
	a=
	while [ $# -gt 0 ] && [ "$1" != -- ]; do a="$a $1"; shift; done
	[ $# -gt 0 ] && shift
	# shellcheck disable=SC2086
	"$ORACLEC" "$m" --grid "$grid" $a --plan pytorch -q -o "$tmp/$name.json" 2>"$tmp/err" ||
		fail "oraclec --plan pytorch: exit status $?"
	"$py" -m oraclec.launch --plan "$tmp/$name.json" --model torchvision:resnet18 \
		--image-size 32 --out "$tmp/$name.csv" "$@" >"$tmp/out" 2>>"$tmp/err"
	status_why $? 0
	device_note_only
	grep -q "^threads per rank: $threads (" "$tmp/out" || fail "no threads line, $threads each"
}

# row NAME STRATEGY GRID GLOBAL_BATCH: the CSV's header and row
row()
{
	"$py" - "$tmp/$1.csv" "$tmp/$1.json" "$2" "$3" "$4" "$tmp/out" <<'PY' >>"$tmp/err" 2>&1 ||
import csv, json, re, sys
path, plan, strategy, grid, batch, out = sys.argv[1:]
rows = list(csv.reader(open(path, newline="")))
want = ["model", "strategy", "gpus", "grid", "global_batch", "dataset_size",
        "measured_iteration_s", "precision", "implementation", "peak_memory_bytes"]
assert rows[0] == want, rows[0]
assert len(rows) == 2, rows
r = dict(zip(rows[0], rows[1]))
assert r["model"] == "resnet18", r
assert r["strategy"] == strategy and r["grid"] == grid, r
assert int(r["gpus"]) == json.load(open(plan))["world_size"], r
assert int(r["global_batch"]) == int(batch), r
assert int(r["dataset_size"]) == 1281167, r
t = float(r["measured_iteration_s"])
assert t > 0, r
m = re.search(r"^time: 2 warm-up steps, 3 timed: ([0-9.e-]+) s per step", open(out).read(), re.M)
assert m and abs(float(m.group(1)) - t) <= 1e-5 * t, (m and m.group(0), t)
assert r["precision"] == "fp32", r
assert r["implementation"] in ("pytorch", "pytorch-2"), r
assert int(r["peak_memory_bytes"]) > 0, r
PY
		fail "the CSV is not the run's (stderr)"
	for f in "$tmp"/.oraclec.tmp*; do
		[ -e "$f" ] && fail "left a temporary ${f##*/}"
	done
}

echo "an older file" >"$tmp/data.csv"
timed data "$resnet" data=2 -- --batch 8 --time 3 --warmup 2 --trace "$tmp/trace.json"
row data data data=2 8
[ -s "$tmp/data.models/resnet18.onnx" ] || fail "no data.models/resnet18.onnx"
"$ORACLEC" validate "$tmp/data.csv" --models "$tmp/data.models" >"$tmp/v" 2>>"$tmp/err" ||
	fail "oraclec validate: exit status $?"
grep -q "^resnet18  *data  *2  *data=2  *[0-9.]*  *[0-9.]*" "$tmp/v" ||
	fail "oraclec validate did not predict the row"
check "ResNet-18, data=2, 3 timed steps: the CSV oraclec validate reads (gpus = world_size, the median), the model beside it"

"$py" - "$tmp/trace.json" <<'PY' >>"$tmp/err" 2>&1 || fail "the trace (stderr)"
import json, sys
doc = json.load(open(sys.argv[1]))
ev = doc["traceEvents"]
assert doc["oraclec"]["steps"] == [2, 3, 4], doc["oraclec"]
assert doc["oraclec"]["batch"] == 4, doc["oraclec"]  # rank 0's share of 8 samples
steps = [e for e in ev if e["cat"] == "step"]
assert [e["name"] for e in steps] == ["ProfilerStep#2", "ProfilerStep#3", "ProfilerStep#4"], steps
ranges = [e for e in ev if e["cat"] == "module" and e["name"] == "layer1.0.conv1"]
assert len(ranges) == 3, len(ranges)
for r in ranges:  # inside a step
    assert any(s["ts"] <= r["ts"] and r["ts"] + r["dur"] <= s["ts"] + s["dur"] for s in steps), r
ops = [e for e in ev if e["cat"] == "op"]
fwd = [e for e in ops if e["name"] == "aten::convolution" and
       e["args"].get("module") == "layer1.0.conv1"]
assert len(fwd) == 3 and all(e["args"]["phase"] == "forward" for e in fwd), fwd
for f in fwd:  # the range holds the operator
    assert any(r["ts"] <= f["ts"] and f["ts"] + f["dur"] <= r["ts"] + r["dur"] for r in ranges), f
    seq = f["args"]["Sequence number"]
    back = [e for e in ops if e["name"].startswith("autograd::engine::evaluate_function: Convolution")
            and e["args"].get("Sequence number") == seq and e["args"]["Fwd thread id"] == f["tid"]]
    assert len(back) == 1, (seq, back)
    assert back[0]["args"]["module"] == "layer1.0.conv1" and back[0]["args"]["phase"] == "backward"
    assert back[0]["ts"] > f["ts"]
assert "layer4.1.bn2" in doc["oraclec"]["modules"]
PY
check "the trace: 3 ProfilerSteps, layer1.0.conv1's ranges in them, its convolution forward and backward linked by sequence number"

timed pipe "$resnet" pipeline=2 --micro-batches 2 -b 4 -- --batch 4 --time 3 --warmup 2
row pipe pipeline pipeline=2 4
grep -q "^micro-batches in flight per stage: 2 2$" "$tmp/out" || fail "no stages"
check "ResNet-18, pipeline=2 (GPipe, 2 micro-batches), 3 timed steps: the CSV's row"

# the other strategies' rows: strategy and grid from the plan's mesh, in
# oraclec's spelling whatever the nesting
"$py" - <<'PY' >>"$tmp/err" 2>&1 || fail "strategy or grid (stderr)"
from oraclec.launch import grid_of, strategy_of
for names, shape, strategy, grid in (
        (["filter"], [2], "filter", "filter=2"), (["channel"], [4], "channel", "channel=4"),
        (["data", "filter"], [2, 2], "df", "data=2,filter=2"),
        (["pipeline", "data"], [2, 4], "dp", "data=4,pipeline=2"),
        (["data"], [1], "data", "data=1")):
    plan = {"device_mesh": {"mesh_dim_names": names, "mesh_shape": shape}}
    assert (strategy_of(plan), grid_of(plan)) == (strategy, grid), (names, shape)
PY
check "the CSV's strategy and grid for filter, channel, df, dp nested data-inner, data=1"

"$ORACLEC" "$keepbn" --grid filter=2 --plan pytorch -q -o "$tmp/filter.json" 2>"$tmp/err" ||
	fail "oraclec --plan pytorch: exit status $?"
"$py" -m oraclec.launch --plan "$tmp/filter.json" --model torchvision:resnet18 --image-size 32 \
	--batch 4 --steps 2 --trace "$tmp/t2.json" >"$tmp/out" 2>>"$tmp/err"
status_why $? 0
grep -q "^trace: .*t2.json (rank 0, step 1)$" "$tmp/out" || fail "no trace line"
"$py" - "$tmp/t2.json" <<'PY' 2>>"$tmp/err" || fail "not the last step (stderr)"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["oraclec"]["steps"] == [1], d["oraclec"]
assert "batch" not in d["oraclec"], d["oraclec"]  # a split plan's layers take unlike shares
ev = d["traceEvents"]
assert [e["name"] for e in ev if e["cat"] == "step"] == ["ProfilerStep#1"]
# the split fc (a Split module) is still named by its path
assert [e["name"] for e in ev if e["cat"] == "module" and e["name"] == "fc"] == ["fc"]
PY
check "ResNet-18, filter=2, --trace without --time: the last step, the split layer named by its path"

alexnet=$zoo/alexnet.onnx
[ -f "$alexnet" ] || alexnet=$srcdir/tests/data/onnx/alexnet.onnx
"$ORACLEC" "$alexnet" -g 4 --per-layer --implementation pytorch --plan pytorch -q \
	-o "$tmp/pl.json" 2>"$tmp/err" || fail "oraclec --per-layer: exit status $?"
"$py" -m oraclec.launch --plan "$tmp/pl.json" --model torchvision:alexnet --time 2 \
	--out "$tmp/pl.csv" >"$tmp/out" 2>"$tmp/err"
status_why $? 1
grep -q "pl.json: per_layer: --out writes a row for oraclec validate" "$tmp/err" || fail "no message"
[ -e "$tmp/pl.csv" ] && fail "wrote pl.csv"
check "a per-layer plan: --out refused (validate predicts uniform strategies)"

finish
