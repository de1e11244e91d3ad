#!/bin/sh
# runs.sh -- measured runs and the implementation validate and calibrate
# predict them with:
#   - calibrate fits p2p_latency against the send latency of the
#     implementation the runs were predicted with (--implementation), not
#     the system's (issue 31.7: ChainerMN's 300 us).
# TAP.
: "${ORACLEC:=./oraclec}" "${srcdir:=.}"
LC_ALL=C
export LC_ALL
. "$srcdir/tests/tap.sh"
absolute ORACLEC
srcdir_absolute

tmp=$(mktemp -d "${TMPDIR:-/tmp}/runs.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT
trap 'exit 1' HUP INT TERM
models=$srcdir/validation/models
mkdir "$tmp/d" "$tmp/d/impl" "$tmp/elsewhere"
cd "$tmp/elsewhere" || exit 99

run()
{
	"$ORACLEC" "$@" >"$tmp/out" 2>"$tmp/err"
	status=$?
}

has()
{
	grep -F -q -e "$2" "$tmp/$1" || fail "std$1 lacks '$2'"
}

# field FILE ROW COLUMN: a field of a CSV without quoted commas
field()
{
	awk -F, -v r="$2" -v c="$3" 'NR == 1 { for (i = 1; i <= NF; i++) k[$i] = i; next }
		NR == r + 1 { print $(k[c]) }' "$1"
}

# json KEY: a number of the one strategy of the JSON report in $tmp/out,
# printed with %.6f (or %.0f for bytes) as validate's CSV prints it
json()
{
	tr -d ' \n' <"$tmp/out" | sed 's/.*"strategies":\[//' |
		grep -o "\"$1\":[-0-9.e+]*" | head -n 1 | sed 's/.*://'
}

printf 'implementation slow {\n    base = "pytorch";\n    send_latency = 2ms;\n    dispatch = 40us;\n}\n' \
	>"$tmp/d/impl/slow.odl"

# ---- calibrate and the implementation ------------------------------------

# the spatial and ds runs of ABCI see the send latency
tr -d '\r' <"$srcdir/validation/abci-measured.csv" |
	awk -F, 'NR == 1 || $2 == "ds" || $2 == "spatial"' >"$tmp/d/sp.csv"
# factor P FILE: the p2p_latency factor of the calibrated system's comment
factor()
{
	sed -n 's/.*p2p_latency x\([0-9.]*\).*/\1/p' "$1" | head -n 1
}
# written FILE: its p2p_latency in seconds
written()
{
	sed -n 's/^ *p2p_latency = \([0-9.e+]*\)\(ns\|us\|ms\|s\);.*/\1 \2/p' "$1" |
		awk '{ u = $2 == "ns" ? 1e-9 : $2 == "us" ? 1e-6 : $2 == "ms" ? 1e-3 : 1; printf "%.9g\n", $1 * u }'
}
run calibrate ../d/sp.csv --models "$models" -s abci --spatial-split all \
	--implementation "$tmp/d/impl/slow.odl" -o "$tmp/cal.odl"
[ "$status" -eq 0 ] || fail "calibrate: exit status $status"
f=$(factor "$tmp/cal.odl") w=$(written "$tmp/cal.odl")
[ -n "$f" ] || fail "no p2p_latency factor: $(head -n 1 "$tmp/cal.odl")"
awk -v f="$f" -v w="$w" 'BEGIN { exit !(f > 1 && f < 5 && (w / 2e-3 - f) ^ 2 < 1e-6) }' ||
	fail "p2p_latency $w s is not x$f of slow's 2 ms"
check "calibrate --implementation FILE: p2p_latency fitted against that implementation's 2 ms"

run calibrate ../d/sp.csv --models "$models" -s abci --spatial-split all \
	--implementation pytorch -o "$tmp/cal2.odl"
[ "$(written "$tmp/cal2.odl")" = 1e-05 ] || fail "p2p_latency $(written "$tmp/cal2.odl"), not pytorch's 10 us"
has out "p2p_latency kept (the runs do not see it)"
check "calibrate --implementation pytorch: against pytorch's 10 us, not ChainerMN's 300 us"

finish
