#!/bin/sh
# measured.sh -- how `oraclec validate` and `oraclec calibrate` scale with
# the rows of a measured-runs CSV (docs/limits.md, "Measured runs").
#
# Writes CSVs of 100, 1,000, 10,000 and 100,000 rows (the limit), the rows
# of validation/abci-measured.csv repeated, and times validate and
# calibrate on each with the models of validation/models, the system abci
# and adam (as `make validate-abci`).  Prints rows, then the wall seconds
# of each.  BENCH_DISTINCT=1 makes every row a configuration of its own
# (its dataset_size plus the row's number), so that nothing is predicted
# once for several rows: calibrate's cost per configuration.
#
# The target: both near-linear, 100,000 rows of validate in under 10 s
# and 100,000 repeated rows of calibrate in under 60 s (before the fixes of
# issue 33: validate 33 s, quadratic; calibrate 44 s for 100 rows, a fit
# per row).
#
# Environment:
#   ORACLEC        the oraclec to time                  (./oraclec)
#   srcdir         the source tree                      (.)
#   BENCH_ROWS     row counts to time   (100 1000 10000 100000)
#   BENCH_DISTINCT 1: a configuration per row           (0)
#   BENCH_STRICT   1: exit 1 when a target is missed    (0)
# Exit status: 0 measured, 1 a run failed (or a target was missed under
# BENCH_STRICT=1), 77 no GNU time.

: "${ORACLEC:=./oraclec}" "${srcdir:=.}" "${BENCH_ROWS:=100 1000 10000 100000}"
: "${BENCH_DISTINCT:=0}" "${BENCH_STRICT:=0}"
LC_ALL=C
export LC_ALL

if [ ! -x "$ORACLEC" ]; then
	echo "measured.sh: '$ORACLEC' is not an executable (build it: make oraclec)" >&2
	exit 1
fi
if ! /usr/bin/time -f '%e' true >/dev/null 2>&1; then
	echo "measured.sh: needs GNU time (/usr/bin/time, Debian package 'time')" >&2
	exit 77
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/oraclec-measured.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
trap 'exit 1' HUP INT TERM

runs=$srcdir/validation/abci-measured.csv
models=$srcdir/validation/models

# csv N: N rows of $runs, repeated in order, on stdout.  With
# BENCH_DISTINCT=1 the ninth field (dataset_size, before any quoted one)
# gains the row's number.
csv()
{
	awk -v n="$1" -v distinct="$BENCH_DISTINCT" '
		NR == 1 { print; next }
		{ row[m++] = $0 }
		END {
			for (i = 0; i < n; i++) {
				r = row[i % m]
				if (distinct == 1) {
					k = split(r, f, ",")
					# the grid of a hybrid is quoted and holds a comma
					d = f[5] ~ /^"/ ? 10 : 9
					f[d] += i
					r = f[1]
					for (j = 2; j <= k; j++)
						r = r "," f[j]
				}
				print r
			}
		}' "$runs"
}

# seconds MODE FILE: the wall seconds of `oraclec MODE FILE`; fails when
# oraclec fails.
seconds()
{
	/usr/bin/time -f '%e' -o "$tmp/time" "$ORACLEC" "$1" "$2" --models "$models" \
		--system abci --optimizer adam -q -o "$tmp/out" >/dev/null 2>"$tmp/err" ||
		{ cat "$tmp/err" >&2; return 1; }
	tail -n 1 "$tmp/time"
}

echo "oraclec: $ORACLEC ($("$ORACLEC" --version 2>/dev/null))"
echo "rows of $runs repeated$([ "$BENCH_DISTINCT" = 1 ] && echo ", each a configuration of its own")"
printf '%8s %12s %12s\n' rows validate_s calibrate_s
status=0 missed=0
for n in $BENCH_ROWS; do
	csv "$n" >"$tmp/m$n.csv"
	v=$(seconds validate "$tmp/m$n.csv") || { status=1; continue; }
	c=$(seconds calibrate "$tmp/m$n.csv") || { status=1; continue; }
	printf '%8d %12s %12s\n' "$n" "$v" "$c"
	if [ "$n" -ge 100000 ] && [ "$BENCH_DISTINCT" != 1 ]; then
		awk -v v="$v" -v c="$c" 'BEGIN { exit !(v < 10 && c < 60) }' || missed=1
	fi
	rm -f "$tmp/m$n.csv"
done
if [ "$missed" = 1 ]; then
	echo "target missed: 100,000 rows of validate in under 10 s, of calibrate in under 60 s"
	[ "$BENCH_STRICT" = 1 ] && status=1
fi
exit $status
