#!/bin/sh
# loop.sh -- the loop of docs/probe.md runs end to end on this CPU
# (bench/loop.sh, made small: the probe's --quick sections that the
# analysis reads under a 10 s budget, 2 samples per rank at 64x64, 2
# timed steps): the probe, the data=2 PyTorch plan of ResNet-18 on the
# probed system, the run timed into M.csv, oraclec validate on it (the
# time's and the memory's accuracy printed), the traced run given to
# --profile (the runner's own trace: its modules made 68 of ResNet-18's
# 69 layers), and the accuracy against the target.  It checks that the
# loop runs and says how accurate it was, not that it meets the target
# (bench/loop.sh's job, at full size).  Skipped where no python3 has
# torch and torchvision.  About 40 s.  TAP.
: "${ORACLEC:=./oraclec}" "${srcdir:=.}"
LC_ALL=C
export LC_ALL
. "$srcdir/tests/tap.sh"
absolute ORACLEC
srcdir_absolute

tmp=$(mktemp -d "${TMPDIR:-/tmp}/loop.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT
trap 'exit 1' HUP INT TERM

LOOP_DIR=$tmp/loop LOOP_IMAGE=64 LOOP_BATCH=2 LOOP_STEPS=2 LOOP_WARMUP=2 \
	LOOP_PROBE="--quick --sections matmul,conv,memory,host,allocator,collectives --budget 10" \
	ORACLEC=$ORACLEC srcdir=$srcdir sh "$srcdir/bench/loop.sh" >"$tmp/out" 2>"$tmp/err"
status=$?
if [ $status -eq 77 ]; then
	echo "1..0 # SKIP $(cat "$tmp/err")"
	exit 0
fi
status_why $status 0
grep -q '^loop: probe: [0-9.]* s (oraclec.probe: cpu ' "$tmp/out" || fail "no probe line"
grep -q '^loop: run: time: 2 warm-up steps, 2 timed: [0-9.e-]* s per step' "$tmp/out" ||
	fail "no run line"
[ -s "$tmp/loop/m.csv" ] && [ -s "$tmp/loop/m.models/resnet18.onnx" ] || fail "no m.csv or model"
grep -q '^loop:   resnet18   data          2 data=2                 fp32   ' "$tmp/out" ||
	fail "validate has no row"
grep -q '^loop:   all            1      [01]\.[0-9][0-9][0-9] ' "$tmp/out" || fail "no accuracy"
grep -q '^loop:   memory         1      [01]\.[0-9][0-9][0-9] ' "$tmp/out" ||
	fail "no memory accuracy"
check "probe, plan, run, validate: the run's time and memory against the prediction"

grep -q "^loop: with the trace's layer times (--profile, 68 of 69 layers): predicted [0-9.]* s, compute [0-9.]* s, accuracy [01]\.[0-9][0-9][0-9]$" "$tmp/out" ||
	fail "no prediction with the trace's layer times"
grep -q "trace.json: note: profile: 68 of 69 layers from the trace (2 steps of 2 samples on rank 0)" \
	"$tmp/out" || fail "no note on the trace's layers"
check "the runner's trace given to --profile: 68 of 69 layers timed, per sample of rank 0's 2"

grep -q '^loop: accuracy [01]\.[0-9][0-9][0-9] (time), [01]\.[0-9][0-9][0-9] (memory); target >= 0.65: \(met\|missed\)$' \
	"$tmp/out" || fail "no accuracy against the target"
check "the accuracy said against the target"

finish
