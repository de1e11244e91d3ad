#!/bin/sh
# tables.sh -- issue 37's loop on this machine's CPU, end to end, with the
# probe's kernel tables: for each model, probe the device and the model's
# own kernels, predict its data-parallel step from the table, run the step
# and time it, and say how close the prediction came and how many of its
# layers with weights the table priced; then probe ResNet-18 once more,
# afresh, and say how far the two probes' predictions lie apart.
#
#   1. python3 -m oraclec.probe --device cpu --ranks RANKS --quick --model M
#      --batch BATCH --gpus RANKS --strategies data -o DIR/NAME/probe
#   2. oraclec M -s DIR/NAME/probe/system.odl (which names kernels.csv)
#      -g RANKS -b BATCH --grid data=RANKS --layers -f json: the predicted
#      step, each layer's time_source; and --plan pytorch for the run
#   3. python3 -m oraclec.launch --plan ... --model torchvision:NAME
#      --batch RANKS*BATCH --time STEPS --out DIR/NAME/m.csv
#   4. oraclec validate DIR/NAME/m.csv --models DIR/NAME/m.models -s ...
#      the accuracy, 1 - |predicted - measured| / measured
#   5. ResNet-18's probe again into DIR/resnet18/probe2, its prediction,
#      and the two predictions' ratio
#
# Issue 37's targets (docs/probe.md, "Kernel tables on this CPU"): an
# accuracy of 0.85 or more for each model, 90 % or more of the layers
# with weights priced from the table, the two probes' predictions within
# 10 % of each other.  Measure on an idle machine: the load average is
# printed before each step.
#
# Environment:
#   ORACLEC        the oraclec                          (./oraclec)
#   srcdir         the source tree                      (.)
#   PYTHON         a python3 with torch and torchvision (/usr/bin/python3, python3)
#   TABLES_DIR     where the files go (kept)            (a new directory in $TMPDIR)
#   TABLES_MODELS  NAME:FILE.onnx ... (torchvision's NAME)
#                  (resnet18:tests/data/onnx/resnet18.onnx
#                   mobilenet_v2:tests/data/onnx/mobilenet_v2.onnx)
#   TABLES_RANKS   ranks (data=RANKS, gloo)             (2)
#   TABLES_BATCH   samples per rank                     (8)
#   TABLES_STEPS   timed steps                          (10)
#   TABLES_PROBE   the probe's other arguments          (--quick)
#   TABLES_AGAIN   1: ResNet-18's second probe          (1)
# Exit status: 0 the loop ran (whatever the accuracy), 1 a step failed,
# 77 no python3 with torch and torchvision.

: "${ORACLEC:=./oraclec}" "${srcdir:=.}"
: "${TABLES_MODELS:=resnet18:$srcdir/tests/data/onnx/resnet18.onnx mobilenet_v2:$srcdir/tests/data/onnx/mobilenet_v2.onnx}"
: "${TABLES_RANKS:=2}" "${TABLES_BATCH:=8}" "${TABLES_STEPS:=10}" "${TABLES_PROBE:=--quick}"
: "${TABLES_AGAIN:=1}"
LC_ALL=C
export LC_ALL

say()
{
	echo "tables: $*"
}

die()
{
	echo "tables.sh: $*" >&2
	exit 1
}

load()
{
	sed 's/.*load average: //' /proc/loadavg 2>/dev/null || uptime | sed 's/.*load average: //'
}

[ -x "$ORACLEC" ] || die "'$ORACLEC' is not an executable (build it: make oraclec)"
case $ORACLEC in /*) ;; *) ORACLEC=$(pwd)/$ORACLEC ;; esac
export ORACLEC
py=
for p in "${PYTHON:-}" /usr/bin/python3 python3; do
	[ -n "$p" ] && "$p" -c 'import torch, torchvision' 2>/dev/null && { py=$p; break; }
done
if [ -z "$py" ]; then
	echo "tables.sh: no python3 with torch and torchvision" >&2
	exit 77
fi
PYTHONPATH="$srcdir/python${PYTHONPATH:+:$PYTHONPATH}"
export PYTHONPATH
dir=${TABLES_DIR:-$(mktemp -d "${TMPDIR:-/tmp}/oraclec-tables.XXXXXX")} || exit 1
mkdir -p "$dir" || exit 1
R=$TABLES_RANKS
B=$TABLES_BATCH
global=$((R * B))
now()
{
	date +%s
}

# probe NAME MODEL OUT: the device and the model's kernels into OUT
probe()
{
	t0=$(now)
	say "$1: probe into $3 (load $(load))"
	# shellcheck disable=SC2086
	"$py" -m oraclec.probe --device cpu --ranks "$R" $TABLES_PROBE --model "$2" \
		--batch "$B" --gpus "$R" --strategies data -o "$3" >"$3.out" 2>"$3.err" ||
		die "the probe of $1 failed: $(tail -n 1 "$3.err")"
	say "$1: probe $(($(now) - t0)) s; $(grep -c -v '^#' "$3/kernels.csv") rows" \
		"($(grep 'model:' "$3.err" | tail -n 1))"
}

# predict NAME MODEL PROBE OUT.json: the data=R step predicted from the
# probe's system and table, with every layer's time_source; prints
# "STEP PRICED WEIGHTED"
predict()
{
	"$ORACLEC" "$2" -s "$3/system.odl" -g "$R" -b "$B" --grid "data=$R" --layers -f json \
		-q -o "$4" 2>"$4.err" || die "oraclec on $1 failed: $(head -n 1 "$4.err")"
	"$py" - "$4" <<-'EOF'
	import json, sys
	rep = json.load(open(sys.argv[1]))
	w = [l for l in rep["layers"] if l["params"] > 0]
	t = sum(l["time_source"] in ("table", "interpolated") for l in w)
	print("%.6f %d %d" % (rep["strategies"][0]["iteration"]["total_s"], t, len(w)))
	EOF
}

first=
for m in $TABLES_MODELS; do
	name=${m%%:*}
	model=${m#*:}
	d=$dir/$name
	mkdir -p "$d"
	probe "$name" "$model" "$d/probe"
	set -- $(predict "$name" "$model" "$d/probe" "$d/predicted.json")
	step=$1 priced=$2 weighted=$3
	[ "$name" = resnet18 ] && first=$step
	say "$name: predicted step $step s; $priced of $weighted layers with weights from the" \
		"table ($(awk -v a="$priced" -v b="$weighted" 'BEGIN { printf "%.0f", 100 * a / b }') %)"
	"$ORACLEC" "$model" -s "$d/probe/system.odl" -g "$R" -b "$B" --grid "data=$R" \
		--plan pytorch -q -o "$d/plan.json" 2>"$d/plan.err" ||
		die "oraclec --plan pytorch on $name failed: $(head -n 1 "$d/plan.err")"
	say "$name: run, $TABLES_STEPS steps of $global samples (load $(load))"
	"$py" -m oraclec.launch --plan "$d/plan.json" --model "torchvision:$name" \
		--batch "$global" --time "$TABLES_STEPS" --out "$d/m.csv" >"$d/run.out" \
		2>"$d/run.err" || die "the run of $name failed: $(tail -n 1 "$d/run.err")"
	say "$name: run: $(grep '^time:' "$d/run.out")"
	"$ORACLEC" validate "$d/m.csv" --models "$d/m.models" -s "$d/probe/system.odl" \
		>"$d/validate.out" 2>"$d/validate.err" ||
		die "oraclec validate on $name failed: $(head -n 1 "$d/validate.err")"
	sed "s/^/tables:   /" "$d/validate.out"
	acc=$(awk '$1 == "all" { print $3 }' "$d/validate.out")
	say "$name: accuracy $acc (target >= 0.85), priced from the table $priced of" \
		"$weighted (target >= 90 %) (load $(load))"
done

if [ "$TABLES_AGAIN" = 1 ] && [ -n "$first" ]; then
	d=$dir/resnet18
	model=$(echo "$TABLES_MODELS" | tr ' ' '\n' | sed -n 's/^resnet18://p')
	probe resnet18 "$model" "$d/probe2"
	set -- $(predict resnet18 "$model" "$d/probe2" "$d/predicted2.json")
	say "resnet18: two probes in a row predict $first and $1 s: ratio" \
		"$(awk -v a="$first" -v b="$1" 'BEGIN { printf "%.3f", b / a }') (target within 10 %)"
fi
say "files in $dir"
exit 0
