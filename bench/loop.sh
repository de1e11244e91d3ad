#!/bin/sh
# loop.sh -- the loop of docs/probe.md on this machine's CPU, end to end:
# probe the device, predict a data-parallel PyTorch plan of ResNet-18 on
# the probed system, run it with the launcher and time it, validate the
# prediction against the run, and say how accurate it was against the
# target.  With LOOP_TRACE=1 (the default) also a traced run, and the
# prediction with its layer times (--profile TRACE).
#
#   1. python3 -m oraclec.probe --device cpu --quick -o DIR/probe
#   2. oraclec MODEL -s DIR/probe/system.odl --implementation
#      DIR/probe/implementation.odl -g RANKS -b BATCH --grid data=RANKS
#      --plan pytorch -o DIR/plan.json
#   3. python3 -m oraclec.launch --plan DIR/plan.json --model
#      torchvision:resnet18 --batch RANKS*BATCH --time STEPS --out DIR/m.csv
#   4. oraclec validate DIR/m.csv --models DIR/m.models -s ... --implementation ...
#
# The probed system describes one rank: a "GPU" is one rank's share of
# the cores (the probe's --ranks, the launcher's threads per rank).
#
# Environment:
#   ORACLEC       the oraclec                          (./oraclec)
#   srcdir        the source tree                      (.)
#   PYTHON        a python3 with torch and torchvision (/usr/bin/python3, python3)
#   LOOP_DIR      where the files go (kept)            (a new directory in $TMPDIR)
#   LOOP_MODEL    the ONNX model the plan is made of   (tests/data/onnx/resnet18.onnx)
#   LOOP_NET      torchvision's name of it             (resnet18)
#   LOOP_RANKS    ranks (data=RANKS)                   (2)
#   LOOP_BATCH    samples per rank                     (8)
#   LOOP_STEPS    timed steps                          (10)
#   LOOP_WARMUP   warm-up steps                        (3)
#   LOOP_IMAGE    image size (empty: the model's, 224) ()
#   LOOP_PROBE    the probe's other arguments          (--quick)
#   LOOP_TRACE    1: also a traced run, --profile      (1)
#   LOOP_TARGET   the accuracy aimed at                (0.65)
#   LOOP_STRICT   1: exit 1 when the target is missed  (0)
# Exit status: 0 the loop ran (and, under LOOP_STRICT=1, met the target),
# 1 a step failed or the target was missed under LOOP_STRICT=1, 77 no
# python3 with torch and torchvision.

: "${ORACLEC:=./oraclec}" "${srcdir:=.}"
: "${LOOP_MODEL:=$srcdir/tests/data/onnx/resnet18.onnx}" "${LOOP_NET:=resnet18}"
: "${LOOP_RANKS:=2}" "${LOOP_BATCH:=8}" "${LOOP_STEPS:=10}" "${LOOP_WARMUP:=3}"
: "${LOOP_IMAGE:=}" "${LOOP_PROBE:=--quick}" "${LOOP_TRACE:=1}"
: "${LOOP_TARGET:=0.65}" "${LOOP_STRICT:=0}"
LC_ALL=C
export LC_ALL

say()
{
	echo "loop: $*"
}

die()
{
	echo "loop.sh: $*" >&2
	exit 1
}

if [ ! -x "$ORACLEC" ]; then
	die "'$ORACLEC' is not an executable (build it: make oraclec)"
fi
py=
for p in "${PYTHON:-}" /usr/bin/python3 python3; do
	[ -n "$p" ] && "$p" -c 'import torch, torchvision' 2>/dev/null && { py=$p; break; }
done
if [ -z "$py" ]; then
	echo "loop.sh: no python3 with torch and torchvision (./bootstrap --tests installs them)" >&2
	exit 77
fi
PYTHONPATH="$srcdir/python${PYTHONPATH:+:$PYTHONPATH}"
export PYTHONPATH
dir=${LOOP_DIR:-$(mktemp -d "${TMPDIR:-/tmp}/oraclec-loop.XXXXXX")} || exit 1
mkdir -p "$dir" || exit 1
image=
[ -n "$LOOP_IMAGE" ] && image="--image-size $LOOP_IMAGE"
now()
{
	"$py" -c 'import time; print("%.3f" % time.time())'
}
since()
{
	"$py" -c 'import sys, time; print("%.1f" % (time.time() - float(sys.argv[1])))' "$1"
}

# 1. the device
t0=$(now)
# shellcheck disable=SC2086
"$py" -m oraclec.probe --device cpu --ranks "$LOOP_RANKS" $LOOP_PROBE -o "$dir/probe" \
	>"$dir/probe.out" 2>"$dir/probe.err" || die "the probe failed: $(tail -n 1 "$dir/probe.err")"
say "probe: $(since "$t0") s ($(head -n 1 "$dir/probe.out"))"
sys="-s $dir/probe/system.odl --implementation $dir/probe/implementation.odl"

# 2. the plan, and what oraclec predicts for it
# shellcheck disable=SC2086
"$ORACLEC" "$LOOP_MODEL" $sys -g "$LOOP_RANKS" -b "$LOOP_BATCH" --grid "data=$LOOP_RANKS" \
	--plan pytorch -q -o "$dir/plan.json" 2>"$dir/oraclec.err" ||
	die "oraclec --plan pytorch failed: $(head -n 1 "$dir/oraclec.err")"
global=$((LOOP_RANKS * LOOP_BATCH))
say "plan: data=$LOOP_RANKS, $LOOP_BATCH samples per rank ($global a step), $dir/plan.json"

# 3. the run, timed
# shellcheck disable=SC2086
"$py" -m oraclec.launch --plan "$dir/plan.json" --model "torchvision:$LOOP_NET" \
	--batch "$global" --time "$LOOP_STEPS" --warmup "$LOOP_WARMUP" $image \
	--out "$dir/m.csv" >"$dir/run.out" 2>"$dir/run.err" ||
	die "the run failed: $(tail -n 1 "$dir/run.err")"
say "run: $(grep '^time:' "$dir/run.out")"
say "run: $(grep '^peak memory:' "$dir/run.out")"

# 4. the prediction against the run
# shellcheck disable=SC2086
"$ORACLEC" validate "$dir/m.csv" --models "$dir/m.models" $sys >"$dir/validate.out" \
	2>"$dir/validate.err" || die "oraclec validate failed: $(head -n 1 "$dir/validate.err")"
sed 's/^/loop:   /' "$dir/validate.out"
acc=$(awk '$1 == "all" { print $3 }' "$dir/validate.out")
mem=$(awk '$1 == "memory" { print $3 }' "$dir/validate.out")
[ -n "$acc" ] || die "no accuracy in oraclec validate's table ($dir/validate.out)"

# 5. with the layer times of a traced run
if [ "$LOOP_TRACE" = 1 ]; then
	# shellcheck disable=SC2086
	if "$py" -m oraclec.launch --plan "$dir/plan.json" --model "torchvision:$LOOP_NET" \
		--batch "$global" --time "$LOOP_STEPS" --warmup "$LOOP_WARMUP" $image \
		--trace "$dir/trace.json" >"$dir/trace.out" 2>"$dir/trace.err" &&
		"$ORACLEC" "$dir/m.models/$LOOP_NET.onnx" $sys -g "$LOOP_RANKS" -b "$LOOP_BATCH" \
			--grid "data=$LOOP_RANKS" --profile "$dir/trace.json" -f json \
			-o "$dir/profiled.json" 2>"$dir/profiled.err"; then
		measured=$(awk -F, 'NR == 2 { print $7 }' "$dir/m.csv")
		"$py" - "$dir/profiled.json" "$measured" <<-'EOF' | sed 's/^/loop: /'
		import json, sys
		rep, m = json.load(open(sys.argv[1])), float(sys.argv[2])
		k = rep["strategies"][0]
		p = k["iteration"]["total_s"]
		a = max(0.0, 1 - abs(p - m) / m)
		print("with the trace's layer times (--profile, %d of %d layers): predicted %.4f s, "
		      "compute %.4f s, accuracy %.3f" % (rep["model"]["profile"]["timed_layers"],
		      rep["model"]["layers"], p, k["iteration"]["compute_s"], a))
		EOF
		grep -h 'note: profile:' "$dir/profiled.err" | sed 's/^/loop:   /'
		say "traced run (the profiler's overhead in it): $(grep '^time:' "$dir/trace.out")"
	else
		say "the traced run or its prediction failed: $(tail -n 1 "$dir/trace.err" "$dir/profiled.err" 2>/dev/null | tail -n 1)"
	fi
fi

met=$(awk -v a="$acc" -v t="$LOOP_TARGET" 'BEGIN { print (a >= t) ? "met" : "missed" }')
say "accuracy $acc (time), ${mem:--} (memory); target >= $LOOP_TARGET: $met"
say "files in $dir"
[ "$LOOP_STRICT" = 1 ] && [ "$met" = missed ] && exit 1
exit 0
