#!/bin/sh
# run.sh -- how oraclec scales with the length of a model.
#
# Generates straight-line chains of 12,500 to 100,000 layers with
# bench/chaingen, times `oraclec FILE -f json` on each (stdout to /dev/null:
# -o would add a temp file and a rename to the measurement) and prints
# layers, wall seconds, peak RSS, layers per second and RSS per layer; then
# whether 100,000 layers take under a second and whether memory grows
# linearly (RSS per layer at 100k within 1.5x of that at 25k).
#
# Environment:
#   ORACLEC      the oraclec to time                    (./oraclec)
#   CHAINGEN     the chain generator                    (bench/chaingen)
#   srcdir       the source tree, for a sanity run on examples/ (.)
#   BENCH_SIZES  layer counts to time  (12500 25000 50000 100000)
#   BENCH_RUNS   runs per size; the fastest is reported (3)
#   BENCH_STRICT 1: exit 1 when a target is missed      (0)
#
# Timing uses GNU time (/usr/bin/time, Debian package `time`) for wall
# seconds and peak RSS; without it, python3's getrusage; without that,
# bash's `time` for seconds only.  Exit status: 0 measured, 1 a run failed
# (or a target was missed under BENCH_STRICT=1), 77 no way to time.

: "${ORACLEC:=./oraclec}" "${CHAINGEN:=bench/chaingen}" "${srcdir:=.}"
: "${BENCH_SIZES:=12500 25000 50000 100000}" "${BENCH_RUNS:=3}" "${BENCH_STRICT:=0}"
LC_ALL=C
export LC_ALL

for p in "$ORACLEC" "$CHAINGEN"; do
	if [ ! -x "$p" ]; then
		echo "run.sh: '$p' is not an executable (build it: make oraclec bench/chaingen)" >&2
		exit 1
	fi
done

tmp=$(mktemp -d "${TMPDIR:-/tmp}/oraclec-bench.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
trap 'exit 1' HUP INT TERM

# measure FILE: prints "SECONDS RSS_KIB" (RSS_KIB is - when unknown);
# fails when oraclec fails.
if /usr/bin/time -f '%e %M' true >/dev/null 2>&1; then
	how="GNU time"
	measure() {
		/usr/bin/time -f '%e %M' -o "$tmp/time" "$ORACLEC" "$1" -f json \
			>/dev/null 2>"$tmp/err" || return 1
		tail -n 1 "$tmp/time"
	}
elif command -v python3 >/dev/null 2>&1; then
	how="python3 getrusage"
	measure() {
		python3 - "$ORACLEC" "$1" 2>"$tmp/err" <<'EOF'
import resource, subprocess, sys, time
t = time.monotonic()
rc = subprocess.call([sys.argv[1], sys.argv[2], "-f", "json"], stdout=subprocess.DEVNULL)
t = time.monotonic() - t
if rc:
    sys.exit(1)
print("%.2f %d" % (t, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss))
EOF
	}
elif command -v bash >/dev/null 2>&1; then
	how="bash time (no RSS)"
	measure() {
		s=$(bash -c 'TIMEFORMAT=%R; time "$0" "$1" -f json >/dev/null 2>"$2"' \
			"$ORACLEC" "$1" "$tmp/err" 2>&1) || return 1
		echo "$s -"
	}
else
	echo "run.sh: no GNU time, python3 or bash to time with" >&2
	exit 77
fi

if [ -r "$srcdir/examples/resnet50.odl" ] &&
   ! "$ORACLEC" "$srcdir/examples/resnet50.odl" -f json >/dev/null; then
	echo "run.sh: $ORACLEC fails on $srcdir/examples/resnet50.odl" >&2
	exit 1
fi

echo "oraclec: $ORACLEC ($("$ORACLEC" --version 2>/dev/null))"
echo "timing:  $how, fastest of $BENCH_RUNS run(s), output: -f json to /dev/null"
echo
printf '%9s %9s %13s %12s %15s\n' layers seconds "peak RSS MiB" layers/s "RSS/layer B"

failed=0
results=
for n in $BENCH_SIZES; do
	f=$tmp/chain$n.odl
	if ! "$CHAINGEN" "$n" >"$f"; then
		echo "run.sh: $CHAINGEN $n failed" >&2
		exit 1
	fi
	best=
	i=0
	while [ "$i" -lt "$BENCH_RUNS" ]; do
		i=$((i + 1))
		if ! m=$(measure "$f"); then
			echo "run.sh: $ORACLEC failed on a $n-layer chain:" >&2
			sed 's/^/  /' "$tmp/err" >&2
			failed=1
			best=
			break
		fi
		best=$(printf '%s\n%s\n' "$best" "$m" | awk 'NF == 2 && (b == "" || $1 < b) { b = $1; r = $2 } END { print b, r }')
	done
	[ -n "$best" ] || continue
	secs=${best%% *} rss=${best#* }
	results="$results$n $secs $rss
"
	awk -v n="$n" -v s="$secs" -v k="$rss" 'BEGIN {
		rate = s > 0 ? sprintf("%.0f", n / s) : ">" n / 0.01
		if (k == "-")
			printf "%9d %9.2f %13s %12s %15s\n", n, s, "-", rate, "-"
		else
			printf "%9d %9.2f %13.1f %12s %15.0f\n", n, s, k / 1024, rate, k * 1024 / n
	}'
done

echo
printf '%s' "$results" | awk -v strict="$BENCH_STRICT" '
	{ s[$1] = $2; k[$1] = $3 }
	END {
		miss = 0
		if (100000 in s) {
			ok = s[100000] < 1
			printf "target   100,000 layers in under 1 s: %s (%.2f s)\n",
				ok ? "met" : "NOT met", s[100000]
			miss += !ok
		} else {
			print "target   100,000 layers in under 1 s: not measured"
		}
		if ((100000 in k) && (25000 in k) && k[100000] != "-" && k[25000] != "-") {
			a = k[25000] * 1024 / 25000
			b = k[100000] * 1024 / 100000
			r = a > b ? a / b : b / a
			ok = r <= 1.5
			printf "linear   RSS per layer 100k vs 25k: %.0f vs %.0f B, ratio %.2f: %s\n",
				b, a, b / a, ok ? "linear (within 1.5x)" : "NOT linear (beyond 1.5x)"
			printf "         marginal RSS 25k -> 100k: %.0f B per layer\n",
				(k[100000] - k[25000]) * 1024 / 75000
			miss += !ok
		} else {
			print "linear   RSS per layer 100k vs 25k: not measured"
		}
		exit strict == 1 && miss > 0
	}' || failed=1
exit "$failed"
