#!/bin/sh
# fuzz-regressions.sh -- the fuzzers' regression inputs through the command
# line, as a TAP test: every input under tests/fuzz-regressions/HARNESS/ is
# given to oraclec the way a user would give it, and oraclec must end by
# itself with status 0 or 1 (an analysis, or input errors), not by a
# signal, a sanitizer's abort or an internal error, within 60 s.
#   onnx, odl   oraclec FILE -f json (and, for odl, --system FILE)
#   plat        oraclec examples/alexnet.odl --system FILE -f json
#   measured    oraclec validate FILE --models validation/models
#   trace       oraclec examples/alexnet.odl --profile FILE -f json
# Inputs named open-* are known open bugs (tests/fuzz-regressions/README.md):
# skipped.  In a --enable-sanitizers build a sanitizer report fails the
# case.  The fuzz harnesses run the same inputs with `fuzz/run -r`.
: "${ORACLEC:=./oraclec}" "${srcdir:=.}"
LC_ALL=C
export LC_ALL
case $ORACLEC in /*) ;; */*) ORACLEC=$(pwd)/$ORACLEC ;; esac
case $srcdir in /*) ;; *) srcdir=$(pwd)/$srcdir ;; esac
dir=$srcdir/tests/fuzz-regressions
tmp=$(mktemp -d "${TMPDIR:-/tmp}/fuzzreg.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT
trap 'exit 1' HUP INT TERM
guard=
command -v timeout >/dev/null 2>&1 && guard="timeout 60"

cases=
for h in onnx odl plat measured trace; do
	for f in "$dir/$h"/*; do
		[ -f "$f" ] && cases="$cases $h/${f##*/}"
	done
done
set -- $cases
echo "1..$(($# > 0 ? $# : 1))"
[ $# -gt 0 ] || { echo "ok 1 # SKIP no regression inputs"; exit 0; }

n=0 failed=0
for c; do
	n=$((n + 1))
	h=${c%%/*} f=$dir/$c
	case ${c##*/} in open-*)
		echo "ok $n - $c # SKIP known open bug (tests/fuzz-regressions/README.md)"
		continue ;;
	esac
	# the input under a name its reader accepts
	case $h in
	onnx) in=$tmp/in.onnx ;; odl) in=$tmp/in.odl ;;
	plat) in=$tmp/in.plat ;; measured) in=$tmp/in.csv ;; trace) in=$tmp/in.json ;;
	esac
	cp "$f" "$in"
	bad=
	for run in 1 2; do
		case $h:$run in
		onnx:1|odl:1) set -- "$in" -f json ;;
		odl:2) set -- "$srcdir/examples/alexnet.odl" --system "$in" -f json ;;
		plat:1) set -- "$srcdir/examples/alexnet.odl" --system "$in" -f json ;;
		measured:1) set -- validate "$in" --models "$srcdir/validation/models" ;;
		trace:1) set -- "$srcdir/examples/alexnet.odl" --profile "$in" -f json ;;
		*) continue ;;
		esac
		(cd "$tmp" && exec $guard "$ORACLEC" "$@") >"$tmp/out" 2>"$tmp/err" </dev/null
		s=$?
		if [ $s -gt 1 ] || grep -q 'Sanitizer\|runtime error\|internal error' "$tmp/err"; then
			bad="$bad
# oraclec $*: exit status $s
$(head -n 30 "$tmp/err" | sed 's/^/# /')"
		fi
	done
	if [ -z "$bad" ]; then
		echo "ok $n - $c"
	else
		failed=1
		echo "not ok $n - $c$bad"
	fi
done
exit $failed
