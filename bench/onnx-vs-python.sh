#!/bin/bash
# onnx-vs-python.sh -- oraclec against ONNX's own Python shape inference.
#
# Times, as whole processes, reading and analysing one ONNX model:
#
#   oraclec FILE -f json >/dev/null
#   /usr/bin/python3 -c 'import onnx; onnx.shape_inference.infer_shapes(
#       onnx.load(FILE, load_external_data=False))'
#
# BENCH_RUNS times each (after one warm-up run), and prints the best and
# median wall time of both and their ratio; the target is oraclec at least
# 10 times faster (by the medians).  With hyperfine installed it does the
# timing; otherwise bash's $EPOCHREALTIME (no fork between the clock reads)
# or, failing that, `date +%s%N`.
#
# Debian's /usr/bin/python3 is used on purpose, not a python3 on PATH (a
# pyenv one lacks the Debian module).  When `import onnx` fails, the
# script installs python3-onnx with apt-get (sudo only when not root).
#
# Environment:
#   ORACLEC      the oraclec to time                  (./oraclec)
#   srcdir       the source tree                      (.)
#   MODEL        the model      ($srcdir/tests/data/onnx/resnet152.onnx)
#   BENCH_RUNS   runs of each command                 (10)
#   BENCH_STRICT 1: exit 1 when the 10x target is missed (0)
#   BENCH_NO_INSTALL 1: never install, skip (77) instead
# Exit status: 0 measured, 1 a command failed (or the target was missed
# under BENCH_STRICT=1), 77 python3-onnx missing and not installable.

: "${ORACLEC:=./oraclec}" "${srcdir:=.}" "${BENCH_RUNS:=10}" "${BENCH_STRICT:=0}"
: "${MODEL:=$srcdir/tests/data/onnx/resnet152.onnx}" "${BENCH_NO_INSTALL:=0}"
PYTHON=/usr/bin/python3
LC_ALL=C
export LC_ALL

if [ ! -x "$ORACLEC" ]; then
	echo "onnx-vs-python.sh: '$ORACLEC' is not an executable (build it: make oraclec)" >&2
	exit 1
fi
if [ ! -r "$MODEL" ]; then
	echo "onnx-vs-python.sh: cannot read '$MODEL'" >&2
	exit 1
fi

# python3-onnx, installed when missing
if ! "$PYTHON" -c 'import onnx' 2>/dev/null; then
	if [ "$BENCH_NO_INSTALL" = 1 ] || ! command -v apt-get >/dev/null 2>&1; then
		echo "onnx-vs-python.sh: $PYTHON cannot import onnx (Debian: python3-onnx); skipped" >&2
		exit 77
	fi
	sudo=
	[ "$(id -u)" -eq 0 ] || sudo=sudo
	echo "onnx-vs-python.sh: installing python3-onnx"
	$sudo apt-get update -qq &&
		DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends \
			python3 python3-onnx >/dev/null
	if ! "$PYTHON" -c 'import onnx' 2>/dev/null; then
		echo "onnx-vs-python.sh: python3-onnx could not be installed; skipped" >&2
		exit 77
	fi
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/oraclec-bench.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
trap 'exit 1' HUP INT TERM

py='import sys, onnx; onnx.shape_inference.infer_shapes(onnx.load(sys.argv[1], load_external_data=False))'
run_oraclec() { "$ORACLEC" "$MODEL" -f json >/dev/null; }
run_python() { "$PYTHON" -c "$py" "$MODEL" >/dev/null; }

# both must work before anything is timed
for c in run_oraclec run_python; do
	if ! $c 2>"$tmp/err"; then
		echo "onnx-vs-python.sh: $c failed on $MODEL:" >&2
		sed 's/^/  /' "$tmp/err" >&2
		exit 1
	fi
done

# timings CMD_FUNCTION: BENCH_RUNS wall times in seconds, one a line
if command -v hyperfine >/dev/null 2>&1; then
	how="hyperfine, $BENCH_RUNS runs after 1 warm-up"
	timings() {
		local cmd
		if [ "$1" = run_oraclec ]; then
			cmd=$(printf '%q ' "$ORACLEC" "$MODEL" -f json)
		else
			cmd=$(printf '%q ' "$PYTHON" -c "$py" "$MODEL")
		fi
		hyperfine -N --warmup 1 --runs "$BENCH_RUNS" --style none \
			--export-json "$tmp/h.json" "$cmd" >/dev/null 2>&1 || return 1
		"$PYTHON" -c 'import json, sys
for t in json.load(open(sys.argv[1]))["results"][0]["times"]: print("%.6f" % t)' "$tmp/h.json"
	}
else
	if [ -n "${EPOCHREALTIME:-}" ]; then
		how="bash \$EPOCHREALTIME, $BENCH_RUNS runs after 1 warm-up"
	else
		how="date +%s%N, $BENCH_RUNS runs after 1 warm-up"
	fi
	timings() {
		local i s e
		$1 || return 1
		: >"$tmp/raw"
		for ((i = 0; i < BENCH_RUNS; i++)); do
			if [ -n "${EPOCHREALTIME:-}" ]; then # seconds.microseconds, no fork
				s=$EPOCHREALTIME
				$1 || return 1
				e=$EPOCHREALTIME
			else # nanoseconds
				s=$(date +%s%N)
				$1 || return 1
				e=$(date +%s%N)
				s=$s.ns e=$e.ns
			fi
			echo "$s $e" >>"$tmp/raw"
		done
		awk '{ if ($1 ~ /ns$/) printf "%.6f\n", ($2 - $1) / 1e9; else printf "%.6f\n", $2 - $1 }' \
			"$tmp/raw"
	}
fi

# stats FILE: "best median" of the times in FILE
stats() {
	sort -g "$1" | awk '{ t[NR] = $1 } END {
		m = NR % 2 ? t[(NR + 1) / 2] : (t[NR / 2] + t[NR / 2 + 1]) / 2
		printf "%.6f %.6f\n", t[1], m
	}'
}

timings run_oraclec >"$tmp/o" || { echo "onnx-vs-python.sh: oraclec failed" >&2; exit 1; }
timings run_python >"$tmp/p" || { echo "onnx-vs-python.sh: python3 failed" >&2; exit 1; }
read -r ob om <<<"$(stats "$tmp/o")"
read -r pb pm <<<"$(stats "$tmp/p")"

echo "model:   $MODEL ($(wc -c <"$MODEL") bytes)"
echo "oraclec: $ORACLEC ($("$ORACLEC" --version 2>/dev/null)), -f json to /dev/null"
echo "python:  $PYTHON $("$PYTHON" -c 'import sys, onnx; print("%d.%d.%d" % sys.version_info[:3], "onnx", onnx.__version__)'), onnx.shape_inference.infer_shapes(onnx.load(...))"
echo "timing:  $how, whole processes"
echo
awk -v ob="$ob" -v om="$om" -v pb="$pb" -v pm="$pm" -v strict="$BENCH_STRICT" 'BEGIN {
	printf "%-10s %12s %12s\n", "", "best ms", "median ms"
	printf "%-10s %12.1f %12.1f\n", "oraclec", ob * 1000, om * 1000
	printf "%-10s %12.1f %12.1f\n", "python", pb * 1000, pm * 1000
	rb = ob > 0 ? pb / ob : 0
	rm = om > 0 ? pm / om : 0
	printf "%-10s %11.1fx %11.1fx\n", "ratio", rb, rm
	ok = rm >= 10
	printf "\ntarget   oraclec at least 10x faster (medians): %s (%.1fx)\n",
		ok ? "met" : "NOT met", rm
	exit strict == 1 && !ok
}'
