#!/bin/sh
# onnx-conformance.sh -- oraclec's shape inference against ONNX's own
# single-operator test models (Debian's libonnx-testdata).
#
# For every data/node/CASE/model.onnx, oraclec prints each graph output's
# shape (hidden options --no-batch --print-outputs) and the test compares
# it with the dims of the expected output test_data_set_0/output_K.pb
# (hidden option --print-tensor-dims).  These models have no batch: a
# MatMul of [3,4] by [4,3] is just that, so --no-batch makes every graph
# input one whole sample, an implicit batch of 1 outside it, and the
# shapes compared are the full ONNX shapes, exactly.
#
# A case oraclec refuses as unsupported (an operator it has no rule for,
# or semantics such as empty tensors or negative pads, "... not
# supported") is skipped with that reason; a case that runs and disagrees,
# or fails for another reason, is a failure.  The last lines count the
# cases and list the commonest skip reasons.
. "${srcdir:=.}/tests/tap.sh"
tap_begin onnx-conformance
root=${ONNX_TESTDATA:-/usr/share/libonnx-testdata}/data/node
if [ ! -d "$root" ]; then
	echo "1..0 # SKIP $root is absent (Debian package libonnx-testdata)"
	exit 0
fi

cases=$(ls "$root")
echo "1..$(echo "$cases" | wc -l)"
n=0 ran=0 passed=0 skipped=0 failed=0
: >"$tmp/reasons"

skip() {
	n=$((n + 1)) skipped=$((skipped + 1))
	echo "ok $n - $1 # SKIP $2"
	echo "$2" >>"$tmp/reasons"
}

for c in $cases; do
	dir=$root/$c
	if [ ! -f "$dir/model.onnx" ] || [ ! -d "$dir/test_data_set_0" ]; then
		skip "$c" "no model or test data"
		continue
	fi
	if ! "$ORACLEC" --no-batch --strict --print-outputs "$dir/model.onnx" \
		>"$tmp/ours" 2>"$tmp/err"; then
		why=$(head -n 1 "$tmp/err" | sed 's/^[^:]*: error: //')
		case $why in
		*"unknown operator"*)
			skip "$c" "unsupported op $(echo "$why" | sed -n 's/.*(\([A-Za-z0-9]*\)): unknown operator.*/\1/p')"
			continue ;;
		*"not supported"* | *"unsupported"*)
			skip "$c" "$(echo "$why" | sed 's/^node [0-9]* .[^ ]* (\([A-Za-z]*\)): /\1: /')"
			continue ;;
		esac
		n=$((n + 1)) ran=$((ran + 1)) failed=$((failed + 1))
		echo "not ok $n - $c"
		sed 's/^/# /' "$tmp/err"
		continue
	fi
	if grep -q ' ?$' "$tmp/ours"; then
		skip "$c" "an output is a constant oraclec does not fold"
		continue
	fi
	# expected outputs, in graph output order (output_0.pb, output_1.pb, ...)
	: >"$tmp/want"
	k=0
	while [ -f "$dir/test_data_set_0/output_$k.pb" ]; do
		"$ORACLEC" --print-tensor-dims "$dir/test_data_set_0/output_$k.pb" \
			>>"$tmp/want" 2>/dev/null || echo "? ?" >>"$tmp/want"
		k=$((k + 1))
	done
	if grep -q '^? ?$' "$tmp/want"; then
		skip "$c" "an expected output is not a tensor"
		continue
	fi
	ran=$((ran + 1))
	n=$((n + 1))
	# compare shapes in order (names of the .pb files may be empty)
	if [ "$(cut -d' ' -f2 "$tmp/ours")" = "$(cut -d' ' -f2 "$tmp/want")" ]; then
		passed=$((passed + 1))
		echo "ok $n - $c $(cut -d' ' -f2 "$tmp/ours" | tr '\n' ' ')"
	else
		failed=$((failed + 1))
		echo "not ok $n - $c"
		echo "# oraclec: $(cut -d' ' -f2 "$tmp/ours" | tr '\n' ' ')"
		echo "# ONNX:    $(cut -d' ' -f2 "$tmp/want" | tr '\n' ' ')"
	fi
done
echo "# ran $ran, passed $passed, skipped $skipped, failed $failed"
echo "# commonest skip reasons:"
sort "$tmp/reasons" | uniq -c | sort -rn | head -n 25 | sed 's/^/#   /'
[ "$failed" -eq 0 ]
