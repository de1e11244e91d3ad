#!/bin/sh
# trace-steps.sh -- --profile's time on a trace of S steps and S modules,
# one operator each (issue 40.3: per_step() of frontend/trace.c sorted
# every step for every module, quadratic: 32,000 x 32,000 took 31 s and
# 64,000 x 64,000 over 60 s).  Prints steps, modules, the trace's size
# and the seconds --profile took, for each ORACLEC given (the round's
# start and this tree, say).  Run from the build tree:
#   sh bench/trace-steps.sh [ORACLEC...]
src=$(dirname "$0")/..
[ $# -gt 0 ] || set -- ./oraclec
tmp=$(mktemp -d "${TMPDIR:-/tmp}/trace-steps.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
printf 'model m { input x: 16; y = relu(x); }\n' >"$tmp/m.odl"
printf '%-40s %7s %7s %9s %9s\n' oraclec steps modules "MB" seconds
for s in 8000 16000 32000 64000; do
	awk -v n=$s 'BEGIN {
		printf "{\"traceEvents\":["
		for (i = 0; i < n; i++) {
			t = i * 100
			printf "%s{\"ph\":\"X\",\"cat\":\"step\",\"pid\":0,\"tid\":1,\"ts\":%d,\"dur\":90,\"name\":\"s\"}", i ? ",\n" : "", t
			printf ",\n{\"ph\":\"X\",\"cat\":\"op\",\"pid\":0,\"tid\":1,\"ts\":%d,\"dur\":5,\"name\":\"aten::add\",\"args\":{\"phase\":\"forward\",\"module\":\"m%d\"}}", t + 1, i
		}
		printf "],\"oraclec\":{\"trace\":1,\"batch\":1}}\n"
	}' >"$tmp/t.json"
	mb=$(wc -c <"$tmp/t.json" | awk '{ printf "%.1f", $1 / 1e6 }')
	for o; do
		t0=$(date +%s.%N)
		timeout 300 "$o" "$tmp/m.odl" --profile "$tmp/t.json" -q >/dev/null 2>&1
		st=$?
		t1=$(date +%s.%N)
		printf '%-40s %7d %7d %9s %9s\n' "$o" $s $s "$mb" \
			"$(echo "$t0 $t1 $st" | awk '{ if ($3 == 124) print ">300"; else printf "%.2f", $2 - $1 }')"
	done
done
