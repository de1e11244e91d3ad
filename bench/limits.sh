#!/bin/sh
# limits.sh -- oraclec at the limits of ODL expansion (docs/limits.md,
# "Time and memory").
#
# Five models, each written to a temporary directory and read with
# `-f json` to /dev/null under GNU time: a million-layer chain, one layer
# past MAX_LAYERS, and three loops that reach MAX_STEPS (8,388,608
# statements) without making a layer: `n = 1+2;`, an 8-item list, and a
# call of a block that returns its input.  Printed: the case, its exit
# status (0 for the chain, 1 with a diagnostic for the others), wall
# seconds and peak RSS.
#
# The target: the MAX_STEPS loops run in constant memory, so each stays
# under 16 MiB of peak RSS however many steps it takes (they took 1 to
# 3.5 GiB before frontend/dsl.c evaluated on the stack).
#
# Environment:
#   ORACLEC      the oraclec to time                  (./oraclec)
#   BENCH_STRICT 1: exit 1 when the target is missed  (0)
# Exit status: 0 measured, 1 a case gave the wrong status (or the target
# was missed under BENCH_STRICT=1), 77 no GNU time.

: "${ORACLEC:=./oraclec}" "${BENCH_STRICT:=0}"
LC_ALL=C
export LC_ALL

if [ ! -x "$ORACLEC" ]; then
	echo "limits.sh: '$ORACLEC' is not an executable (build it: make oraclec)" >&2
	exit 1
fi
if ! /usr/bin/time -f '%e %M' true >/dev/null 2>&1; then
	echo "limits.sh: needs GNU time (/usr/bin/time, Debian package 'time')" >&2
	exit 77
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/oraclec-limits.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
trap 'exit 1' HUP INT TERM

# case NAME STATUS STEPS-LOOP MODEL-BODY: times one model; STEPS-LOOP is
# "yes" for the cases held to the memory target.
failed=0 missed=0
case_()
{
	printf 'block id(t) { return t; }\nmodel m { input x: 8; %s }\n' "$4" >"$tmp/$1.odl"
	/usr/bin/time -f '%e %M' -o "$tmp/time" "$ORACLEC" "$tmp/$1.odl" -f json \
		>/dev/null 2>"$tmp/err"
	status=$?
	set -- "$@" $(tail -n 1 "$tmp/time")
	awk -v n="$1" -v st="$status" -v s="$5" -v k="$6" \
		'BEGIN { printf "%-34s %6s %9.2f %13.1f\n", n, st, s, k / 1024 }'
	if [ "$status" -ne "$2" ]; then
		echo "limits.sh: $1 exited with $status, expected $2:" >&2
		sed 's/^/  /' "$tmp/err" >&2
		failed=1
	fi
	if [ "$3" = yes ] && [ "$6" -ge 16384 ]; then
		missed=1
	fi
}

echo "oraclec: $ORACLEC ($("$ORACLEC" --version 2>/dev/null))"
echo
printf '%-34s %6s %9s %13s\n' case status seconds "peak RSS MiB"
case_ "1,000,000 relu layers" 0 no "repeat 1000000 { x = relu(x); }"
case_ "MAX_LAYERS + 1 layers" 1 no "repeat 1048576 { x = relu(x); } y = relu(x);"
case_ "MAX_STEPS of n = 1+2" 1 yes "repeat 1048576 { repeat 1048576 { n = 1+2; } }"
case_ "MAX_STEPS of an 8-item list" 1 yes \
	"repeat 1048576 { repeat 1048576 { n = [1,2,3,4,5,6,7,8]; } }"
case_ "MAX_STEPS of layer-less calls" 1 yes "repeat 1048576 { repeat 1048576 { y = id(x); } }"
echo
if [ "$missed" -eq 0 ]; then
	echo "target: the MAX_STEPS loops stay under 16 MiB: met"
else
	echo "target: the MAX_STEPS loops stay under 16 MiB: MISSED"
	[ "$BENCH_STRICT" = 1 ] && failed=1
fi
exit "$failed"
