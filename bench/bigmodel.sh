#!/bin/sh
# bigmodel.sh -- oraclec on an ONNX model with ~500 MB of embedded weights.
#
# bench/onnxgen writes the model to a temporary directory twice: weights
# as initializers (raw_data, and packed float_data for the last layer),
# then the big ones as Constant nodes (onnxgen -c), as some exporters
# write them.  oraclec reads each with `-f json` to /dev/null under GNU
# time, once with the file out of the page cache (when python3 can
# posix_fadvise it away) and BENCH_RUNS times warm.  Printed: file size,
# wall seconds, peak RSS, and peak RSS against the file size.
#
# The design goal (frontend/pbstrip.c) is that oraclec never holds a
# second copy of the file: the weights' pages are never touched, so peak
# RSS stays far below the file size.  The check is peak RSS < 1.1 x file
# size (mmap'd pages count in RSS once touched); the figure that matters is
# how far below it is.  For scale, the RSS of a run on a small fixture is
# printed too.
#
# Environment:
#   ORACLEC      the oraclec to time                 (./oraclec)
#   ONNXGEN      the generator                       (bench/onnxgen)
#   srcdir       the source tree                     (.)
#   BENCH_MIB    model size in MiB                   (477, about 500 MB)
#   BENCH_RUNS   warm runs; the fastest is reported  (3)
#   BENCH_STRICT 1: exit 1 when peak RSS >= 1.1 x the file (0)
#   BENCH_PYTHON 0: skip the comparison with Debian's /usr/bin/python3 and
#                python3-onnx (onnx.load + infer_shapes on the first model,
#                when installed; it takes seconds and GBs)       (1)
# GNU time (/usr/bin/time, Debian package `time`) is installed with apt-get
# when missing (sudo only when not root).  Exit status: 0 measured, 1 a
# run failed (or the target was missed under BENCH_STRICT=1), 77 no GNU
# time or not enough disk space.

: "${ORACLEC:=./oraclec}" "${ONNXGEN:=bench/onnxgen}" "${srcdir:=.}"
: "${BENCH_MIB:=477}" "${BENCH_RUNS:=3}" "${BENCH_STRICT:=0}" "${BENCH_PYTHON:=1}"
LC_ALL=C
export LC_ALL

for p in "$ORACLEC" "$ONNXGEN"; do
	if [ ! -x "$p" ]; then
		echo "bigmodel.sh: '$p' is not an executable (build it: make oraclec bench/onnxgen)" >&2
		exit 1
	fi
done

if ! /usr/bin/time -f '%e %M' true >/dev/null 2>&1; then
	if command -v apt-get >/dev/null 2>&1; then
		sudo=
		[ "$(id -u)" -eq 0 ] || sudo=sudo
		echo "bigmodel.sh: installing time (GNU time)"
		$sudo apt-get update -qq &&
			DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq \
				--no-install-recommends time >/dev/null
	fi
	if ! /usr/bin/time -f '%e %M' true >/dev/null 2>&1; then
		echo "bigmodel.sh: no GNU time (/usr/bin/time); skipped" >&2
		exit 77
	fi
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/oraclec-bigmodel.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
trap 'exit 1' HUP INT TERM

need_kib=$((BENCH_MIB * 1024 + 65536))
free_kib=$(df -Pk "$tmp" | awk 'NR == 2 { print $4 }')
if [ -n "$free_kib" ] && [ "$free_kib" -lt "$need_kib" ]; then
	echo "bigmodel.sh: $((free_kib / 1024)) MiB free in ${TMPDIR:-/tmp}, $((need_kib / 1024)) needed; skipped" >&2
	exit 77
fi

# measure FILE: "SECONDS RSS_KIB" of one oraclec run
measure() {
	/usr/bin/time -f '%e %M' -o "$tmp/time" "$ORACLEC" "$1" -f json \
		>"$tmp/out" 2>"$tmp/err" || return 1
	tail -n 1 "$tmp/time"
}

# evict FILE from the page cache (clean pages only; no root needed)
evict() {
	sync "$1" 2>/dev/null || sync
	python3 -c 'import os, sys
fd = os.open(sys.argv[1], os.O_RDONLY)
os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)' "$1" 2>/dev/null
}

fail() {
	echo "bigmodel.sh: $ORACLEC failed on $1:" >&2
	sed 's/^/  /' "$tmp/err" >&2
	exit 1
}

small=$srcdir/tests/data/onnx/alexnet.onnx
base=
[ -r "$small" ] && base=$(measure "$small") && base=${base#* }

echo "oraclec: $ORACLEC ($("$ORACLEC" --version 2>/dev/null)), -f json to /dev/null"
echo "timing:  GNU time; cold: page cache dropped for the file; warm: fastest of $BENCH_RUNS," \
	"peak RSS the largest"
[ -n "$base" ] && awk -v k="$base" 'BEGIN { printf "scale:   peak RSS on a 5 KB model (alexnet.onnx, no weights) %.1f MiB\n", k / 1024 }'
echo

model=$tmp/big.onnx
missed=0
for kind in initializers constants; do
	flag=
	[ "$kind" = constants ] && flag=-c
	start=$(date +%s)
	if ! "$ONNXGEN" $flag "$BENCH_MIB" "$model"; then
		echo "bigmodel.sh: $ONNXGEN $flag failed" >&2
		exit 1
	fi
	gen_s=$(($(date +%s) - start))
	bytes=$(wc -c <"$model")
	cold=
	if evict "$model"; then
		cold=$(measure "$model") || fail "$model"
	fi
	best= i=0
	while [ "$i" -lt "$BENCH_RUNS" ]; do
		i=$((i + 1))
		m=$(measure "$model") || fail "$model"
		best=$(printf '%s\n%s\n' "$best" "$m" | awk 'NF == 2 && (b == "" || $1 < b) { b = $1 }
			NF == 2 && $2 > r { r = $2 } END { print b, r }')
	done
	py=
	if [ "$kind" = initializers ] && [ "$BENCH_PYTHON" = 1 ] &&
	   /usr/bin/python3 -c 'import onnx' 2>/dev/null; then
		py=$(/usr/bin/time -f '%e %M' -o "$tmp/time" /usr/bin/python3 -c 'import sys, onnx
onnx.shape_inference.infer_shapes(onnx.load(sys.argv[1]))' "$model" 2>/dev/null &&
			tail -n 1 "$tmp/time")
	fi
	layers=$(sed -n 's/^    "layers": \([0-9]*\),$/\1/p' "$tmp/out")
	params=$(sed -n 's/^    "params": \([0-9]*\),$/\1/p' "$tmp/out")
	rm -f "$model"

	echo "model:   weights as $kind: $bytes bytes, written by $ONNXGEN${flag:+ $flag} in ${gen_s} s;" \
		"$layers layers, $params parameters"
	awk -v bytes="$bytes" -v cold="$cold" -v warm="$best" -v py="$py" 'BEGIN {
		split(warm, w, " ")
		if (cold != "") {
			split(cold, c, " ")
			printf "  %-18s %6.2f s   peak RSS %7.1f MiB  (%.4f x file)\n",
				"cold page cache", c[1], c[2] / 1024, c[2] * 1024 / bytes
		}
		printf "  %-18s %6.2f s   peak RSS %7.1f MiB  (%.4f x file)\n",
			"warm page cache", w[1], w[2] / 1024, w[2] * 1024 / bytes
		if (py != "") {
			split(py, p, " ")
			printf "  %-18s %6.2f s   peak RSS %7.1f MiB  (%.4f x file)\n",
				"python3 onnx, warm", p[1], p[2] / 1024, p[2] * 1024 / bytes
		}
		peak = w[2]
		if (cold != "" && c[2] > peak)
			peak = c[2]
		ratio = peak * 1024 / bytes
		ok = ratio < 1.1
		printf "  target: peak RSS below 1.1 x file size: %s (%.4f x; %.1f MiB for %.1f MiB)\n\n",
			ok ? "met" : "NOT met", ratio, peak / 1024, bytes / 1048576
		exit !ok
	}' || missed=1
done
[ "$BENCH_STRICT" = 1 ] && [ "$missed" = 1 ] && exit 1
exit 0
