#!/bin/sh
# golden.sh -- golden reports of the examples, as a TAP test.
#
# Each tests/reports/NAME.args is one case: its first line holds oraclec's
# arguments (split at blanks, no quoting, no globbing), e.g.
#     resnet50.odl -f json
# oraclec runs from inside $srcdir/examples, so file names in its output are
# relative (`resnet50.odl`), and its stdout must equal tests/reports/NAME.out
# byte for byte.  A case also fails if oraclec could not run or died on a
# signal.  Then, independently of the .out files, the JSON report of each
# example must give the published parameter and MAC counts (table below).
#
# To add or refresh a case, write NAME.args and regenerate NAME.out with the
# built oraclec from inside examples/; read the new .out before accepting it.
#
# Environment: ORACLEC (default ./oraclec), srcdir (default .; set by
# automake's test harness).  Exit status 0 when all pass, 1 otherwise.

LC_ALL=C
export LC_ALL

: "${ORACLEC:=./oraclec}"
: "${srcdir:=.}"

# cwd changes below, so make the paths absolute first
case $ORACLEC in
/*) ;;
*/*) ORACLEC=$(pwd)/$ORACLEC ;;
esac
if ! golden=$(cd "$srcdir/tests/reports" 2>/dev/null && pwd) ||
   ! examples=$(cd "$srcdir/examples" 2>/dev/null && pwd); then
	echo "Bail out! no tests/reports or examples under srcdir '$srcdir'"
	exit 1
fi
case $ORACLEC in
/*) prog=$ORACLEC ;;
*) prog=$(command -v "$ORACLEC") || prog= ;; # a command on PATH
esac
if [ ! -f "$prog" ] || [ ! -x "$prog" ]; then
	echo "Bail out! '$ORACLEC' is not an executable file"
	exit 1
fi
ORACLEC=$prog

tmp=$(mktemp -d "${TMPDIR:-/tmp}/golden.XXXXXX") || {
	echo "Bail out! cannot create a temporary directory"
	exit 1
}
trap 'rm -rf "$tmp"' EXIT
trap 'exit 1' HUP INT TERM

# The published counts: torchvision's for the ImageNet models; ParaDL's
# weight total (COSMOFLOW.net) and the MACs of those layer shapes for
# CosmoFlow.  file params macs_fwd_per_sample
published='resnet50.odl 25557032 4089184256
resnet152.odl 60192808 11513626624
vgg16.odl 138357544 15470264320
alexnet.odl 61100840 714188480
cosmoflow.odl 2128064 472306170880'

ncase=0
for f in "$golden"/*.args; do
	[ -f "$f" ] && ncase=$((ncase + 1))
done
ncount=$(printf '%s\n' "$published" | wc -l)
echo "1..$((ncase + ncount))"

cd "$examples" || exit 1
n=0
failed=0

ok() {
	n=$((n + 1))
	echo "ok $n - $1"
}

not_ok() {
	n=$((n + 1))
	failed=1
	echo "not ok $n - $1"
}

# prefixes each line of stdin with '# ' (TAP diagnostics)
comment() {
	sed 's/^/# /'
}

for f in "$golden"/*.args; do
	[ -f "$f" ] || continue
	name=${f##*/}
	name=${name%.args}
	args=
	IFS= read -r args <"$f" || [ -n "$args" ] || {
		not_ok "$name: empty $name.args"
		continue
	}
	set -f # the arguments are split, never globbed
	# shellcheck disable=SC2086 # split on purpose
	"$ORACLEC" $args </dev/null >"$tmp/out" 2>"$tmp/err"
	status=$?
	set +f
	if [ ! -f "$golden/$name.out" ]; then
		not_ok "$name: no $name.out"
	elif [ "$status" -ge 126 ]; then
		not_ok "$name"
		echo "# oraclec $args: exit status $status"
		comment <"$tmp/err"
	elif cmp -s "$golden/$name.out" "$tmp/out"; then
		ok "$name"
	else
		not_ok "$name"
		echo "# oraclec $args (exit status $status) differs from $name.out:"
		diff -u "$golden/$name.out" "$tmp/out" | comment
		comment <"$tmp/err"
	fi
done

# the value of the first top-level-looking `"KEY": N` line of a JSON report;
# the model object comes first and, without --layers, is the only one
# holding these keys
json_int() {
	sed -n "s/^ *\"$1\": *\([0-9][0-9]*\),\{0,1\}\$/\1/p" "$2" | sed -n 1p
}

printf '%s\n' "$published" | {
	while read -r file params macs; do
		"$ORACLEC" "$file" -f json </dev/null >"$tmp/json" 2>"$tmp/err"
		status=$?
		got_p=$(json_int params "$tmp/json")
		got_m=$(json_int macs_fwd_per_sample "$tmp/json")
		if [ "$status" -eq 0 ] && [ "$got_p" = "$params" ] && [ "$got_m" = "$macs" ]; then
			ok "$file: params $params, MACs $macs"
		else
			not_ok "$file: params $params, MACs $macs"
			echo "# exit status $status, params '$got_p', MACs '$got_m'"
			comment <"$tmp/err"
		fi
	done
	exit $failed
} || failed=1

exit $failed
