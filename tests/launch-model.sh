#!/bin/sh
# launch-model.sh -- python3 -m oraclec.launch run as the README says, from
# a clone's top directory (`PYTHONPATH=python python3 -m oraclec.launch`:
# here a folder holding only the tree's python/, PYTHONPATH nothing else),
# on what the plan says (docs/plans.md, "Running a plan"):
#
# - a user's model, --model FILE.py:CALLABLE (a function; a class), from
#   a folder of its own whose helper module it imports, 1 x 28 x 28 input
#   (the plan's input_shape) and 10 classes: data=2 on gloo with --time
#   and --out, the plan's batch (8) taken without --batch, the row naming
#   the plan's implementation (a file beside the plan, as a path from the
#   CSV's folder), the model exported beside it, `oraclec validate`
#   predicting the row; the class under --check;
# - the TF32 switches each rank ran with: cudnn_allow_tf32 and
#   matmul_allow_tf32 exactly, an older plan's allow_tf32 for both, the
#   new keys over the old; the row's precision and implementation (a
#   built-in's name) from them;
# - the device type: a cpu plan runs on the CPU without a word, a cuda
#   plan on a machine with fewer GPUs than ranks on the CPU, saying so in
#   one line;
# - issue 40.6/40.7: oraclec --grid data=1,pipeline=2 (and data=1,filter=2)
#   writes a mesh with data of size 1, the launcher runs it, its CSV quotes
#   the grid ("data=1,pipeline=2": one field) and oraclec validate reads
#   it;
# - the probe's --help from the clone.
# Skipped where no python3 has torch and torchvision.  TAP.
. "${srcdir:=.}/tests/tap.sh"
tap_begin launchmodel

tap_python 'import torch, torchvision' \
	"no python3 with torch and torchvision (./bootstrap --tests installs them)"
tap_models

# the clone: python/ as the tree has it, nothing compiled
mkdir "$tmp/clone" "$tmp/user" "$tmp/plans" "$tmp/plans/impl" "$tmp/runs"
cp -R "$srcdir/python" "$tmp/clone/python"
find "$tmp/clone" -name __pycache__ -prune -exec rm -rf {} +

# launch ARGS...: the README's command, in the clone, PYTHONPATH=python
# only; status, $tmp/out, $tmp/err
launch()
{
	(cd "$tmp/clone" && PYTHONPATH=python "$py" -m oraclec.launch "$@") >"$tmp/out" 2>"$tmp/err"
	status=$?
}

# edit IN OUT EXPR: the plan IN as p, EXPR run on it, written to OUT
edit()
{
	"$py" - "$1" "$2" "$3" <<'PY' || fail "the edit failed"
import json, sys
p = json.load(open(sys.argv[1]))
exec(sys.argv[3])
json.dump(p, open(sys.argv[2], "w"))
PY
}

cat >"$tmp/user/helper.py" <<'EOF'
import torch.nn as nn


def block(cin, cout):
    return nn.Sequential(nn.Conv2d(cin, cout, 3, padding=1), nn.BatchNorm2d(cout), nn.ReLU())
EOF
cat >"$tmp/user/mine.py" <<'EOF'
import torch.nn as nn

from helper import block


class Small(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(block(1, 8), nn.MaxPool2d(2), block(8, 16),
                                      nn.AdaptiveAvgPool2d(1))
        self.fc = nn.Linear(16, 10)

    def forward(self, x):
        return self.fc(self.features(x).flatten(1))


def small():
    return Small()
EOF
cp "$srcdir/validation/h100/pytorch-2-fp32.odl" "$tmp/plans/impl/mine.odl"

# the plan: data=2 at 4 samples a GPU (global 8); the writer does not
# write input_shape or implementation yet: they are set here as it will
"$ORACLEC" "$resnet" --grid data=2 -b 4 --plan pytorch -q -o "$tmp/plans/r.json" 2>"$tmp/err" ||
	fail "oraclec --plan pytorch: exit status $?"
edit "$tmp/plans/r.json" "$tmp/plans/data.json" \
	'p["input_shape"] = [1, 28, 28]; p["implementation"] = "impl/mine.odl"'
launch --plan "$tmp/plans/data.json" --model "$tmp/user/mine.py:small" --time 2 --warmup 2 \
	--out "$tmp/runs/m.csv"
want_status 0
device_note_only
"$py" - "$tmp/runs/m.csv" <<'PY' >>"$tmp/err" 2>&1 || fail "the row (stderr)"
import csv, sys
rows = list(csv.reader(open(sys.argv[1], newline="")))
assert len(rows) == 2, rows
r = dict(zip(rows[0], rows[1]))
assert (r["model"], r["strategy"], r["grid"], r["gpus"]) == ("small", "data", "data=2", "2"), r
assert r["global_batch"] == "8", r  # the plan's batch.global, no --batch given
assert r["implementation"] == "../plans/impl/mine.odl", r  # the plan's, from the CSV's folder
assert r["precision"] == "fp32" and float(r["measured_iteration_s"]) > 0, r
PY
[ -s "$tmp/runs/m.models/small.onnx" ] || fail "no m.models/small.onnx"
"$ORACLEC" validate "$tmp/runs/m.csv" --models "$tmp/runs/m.models" >"$tmp/v" 2>>"$tmp/err" ||
	fail "oraclec validate: exit status $?"
grep -q "^small  *data  *2  *data=2 " "$tmp/v" || fail "validate did not predict the row"
check "FILE.py:CALLABLE (a function importing its neighbour), data=2, gloo, --time, from a clone: the plan's batch, the row naming the plan's implementation file, validate predicts it"

launch --plan "$tmp/plans/data.json" --model "$tmp/user/mine.py:Small" --check
want_status 0
device_note_only
has out "ok: 2 ranks agree with one process"
check "FILE.py:CLASS under --check on data=2: equal to one process"

# tf32 KEYS CUDNN MATMUL: a run of a plan with KEYS set (python), the
# switches every rank ran with
tf32()
{
	edit "$tmp/plans/data.json" "$tmp/plans/t.json" "$1"
	launch --plan "$tmp/plans/t.json" --model "$tmp/user/mine.py:small" --steps 1
	want_status 0
	has out "tf32: torch.backends.cudnn.allow_tf32 = $2, torch.backends.cuda.matmul.allow_tf32 = $3"
}
tf32 'p.pop("allow_tf32", None)' False False
device_note_only
check "TF32: a plan without a key runs with both switches off"
tf32 'p["allow_tf32"] = True' True True
check "TF32: an older plan's allow_tf32 true sets both"
tf32 'p["cudnn_allow_tf32"] = True; p["matmul_allow_tf32"] = False; p["allow_tf32"] = False' \
	True False
check "TF32: cudnn_allow_tf32 true, matmul_allow_tf32 false (oraclec's fp32 under pytorch-2): exactly those"
tf32 'p["cudnn_allow_tf32"] = False; p["allow_tf32"] = True' False True
check "TF32: the new key over the old, the old for the key missing"

# a cpu plan: on the CPU without a word; its row names a built-in
edit "$tmp/plans/data.json" "$tmp/plans/cpu.json" \
	'p["device_mesh"]["device_type"] = "cpu"; p["implementation"] = "pytorch-2"; p["matmul_allow_tf32"] = True'
launch --plan "$tmp/plans/cpu.json" --model "$tmp/user/mine.py:small" --time 2 --warmup 2 \
	--out "$tmp/runs/cpu.csv"
want_status 0
empty err
grep -q '^small,data,2,data=2,8,[0-9]*,[0-9.e-]*,fp32,pytorch-2,[0-9]*$' "$tmp/runs/cpu.csv" ||
	fail "the row: $(tail -n 1 "$tmp/runs/cpu.csv")"
check "a plan whose device_type is cpu: run on the CPU, stderr empty; the row names the plan's pytorch-2 (not torch 1.13's pytorch), fp32 on the CPU"

# issue 40.7: data=1,pipeline=2; 40.6: its grid quoted, validate reads it
"$ORACLEC" "$resnet" --grid data=1,pipeline=2 -b 4 --micro-batches 2 --plan pytorch -q \
	-o "$tmp/plans/dp.json" 2>"$tmp/err" || fail "oraclec --plan pytorch: exit status $?"
tr -d ' \n' <"$tmp/plans/dp.json" | grep -q '"mesh_shape":\[1,2\],"mesh_dim_names":\["data","pipeline"\]' ||
	fail "the mesh is not data=1 x pipeline=2"
launch --plan "$tmp/plans/dp.json" --model torchvision:resnet18 --image-size 32 --time 2 \
	--warmup 2 --out "$tmp/runs/dp.csv"
want_status 0
device_note_only
grep -q '^resnet18,dp,2,"data=1,pipeline=2",4,' "$tmp/runs/dp.csv" ||
	fail "the row: $(tail -n 1 "$tmp/runs/dp.csv")"
"$ORACLEC" validate "$tmp/runs/dp.csv" --models "$tmp/runs/dp.models" >"$tmp/v" 2>>"$tmp/err" ||
	fail "oraclec validate: exit status $?"
grep -q "^resnet18  *dp  *2  *data=1,pipeline=2 " "$tmp/v" || fail "validate did not predict the row"
check "oraclec --grid data=1,pipeline=2 --plan pytorch: the launcher runs it; the CSV quotes the grid and oraclec validate reads it"

"$ORACLEC" "$keepbn" --grid data=1,filter=2 --plan pytorch -q -o "$tmp/plans/df.json" \
	2>"$tmp/err" || fail "oraclec --plan pytorch: exit status $?"
launch --plan "$tmp/plans/df.json" --model torchvision:resnet18 --image-size 32 --batch 2 --check
want_status 0
device_note_only
has out "ok: 2 ranks agree with one process"
check "oraclec --grid data=1,filter=2 --plan pytorch: the launcher runs it, equal to one process"

(cd "$tmp/clone" && PYTHONPATH=python "$py" -m oraclec.probe --help) >"$tmp/out" 2>"$tmp/err"
status=$?
want_status 0
has out "usage: python3 -m oraclec.probe"
check "the probe from the clone: PYTHONPATH=python python3 -m oraclec.probe --help"

finish
