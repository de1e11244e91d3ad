#!/bin/sh
# onnx-bad.sh -- bad ONNX files through the command line: a clean failure.
#
# Each case's file is made at run time in a temporary directory: cut from
# a fixture with head -c, a byte overwritten with dd, random bytes from a
# fixed-seed generator, or a model written by tests/onnx-bad-gen (built
# with protobuf-c's API, as tests/test_onnx.c does).  No binary is committed.
#
# A case runs in that directory, so diagnostics name the file relatively,
# with `-o OUT`, and must exit with its status.  Status 1: exactly the
# expected stderr, nothing on stdout, neither OUT nor a temporary OUT.tmp*
# left.  Status 0: no stderr and OUT written.  Output is TAP.
#
#   srcdir=. ORACLEC=./oraclec ONNXBADGEN=tests/onnx-bad-gen sh tests/onnx-bad.sh

: "${ONNXBADGEN:=tests/onnx-bad-gen}"

. "${srcdir:=.}/tests/tap.sh"
tap_begin onnx-bad ONNXBADGEN
fixture=$srcdir/tests/data/onnx/resnet18.onnx

if command -v timeout >/dev/null 2>&1; then
	guard="timeout ${ONNXBAD_TIMEOUT:-60}"
else
	guard=
fi

# poke FILE OFFSET OCTAL: overwrite one byte in place
poke()
{
	printf "\\$3" | dd of="$1" bs=1 seek="$2" count=1 conv=notrunc 2>/dev/null
}

# random FILE N SEED: N bytes from a linear congruential generator
random_bytes()
{
	fmt= i=0 x=$3
	while [ "$i" -lt "$2" ]; do
		x=$(( (x * 1103515245 + 12345) % 2147483648 ))
		b=$(( x / 65536 % 256 ))
		fmt="$fmt\\$(( b / 64 ))$(( b / 8 % 8 ))$(( b % 8 ))"
		i=$((i + 1))
	done
	printf "$fmt" >"$1"
}

# gen NAME DIR: make the case's input in DIR; sets `input` (its name in
# DIR) and `opts` (extra oraclec options)
gen()
{
	input=$1.onnx opts=
	f=$2/$input
	case $1 in
	empty) : >"$f" ;;
	cut-1) head -c 1 "$fixture" >"$f" ;;
	cut-2) head -c 2 "$fixture" >"$f" ;;
	cut-6000) head -c 6000 "$fixture" >"$f" ;;
	cut-last) head -c "$(($(wc -c <"$fixture") - 1))" "$fixture" >"$f" ;;
	cut-no-extension)
		input=model.bin # ONNX by content: the first byte is ir_version's key
		head -c 6000 "$fixture" >"$2/$input"
		;;
	flip-graph-group) # the graph's key (0x3a) becomes a group start
		cp "$fixture" "$f" && chmod u+w "$f" && poke "$f" 19 073 ;;
	flip-graph-length) # the graph's length grows past the end
		cp "$fixture" "$f" && chmod u+w "$f" && poke "$f" 21 177 ;;
	flip-op-type) # the first Conv becomes Xonv
		cp "$fixture" "$f" && chmod u+w "$f" && poke "$f" 101 130 ;;
	flip-kernel) # conv1's kernel_shape 7x7 becomes 127x7
		cp "$fixture" "$f" && chmod u+w "$f" && poke "$f" 156 177 ;;
	random) random_bytes "$f" 512 42 ;;
	tensor) # a TensorProto: dims 3, 4; data_type FLOAT; name "w"
		printf '\010\003\010\004\020\001\102\001w' >"$f" ;;
	missing) ;;
	directory) mkdir "$f" ;;
	unknown-strict) "$ONNXBADGEN" unknown-declared "$f" && opts=--strict ;;
	*) "$ONNXBADGEN" "$1" "$f" ;;
	esac
}

n=0 failed=0
cases=$(sed -n '/^__CASES__$/,$p' "$0" | tail -n +2)
echo "1..$(printf '%s\n' "$cases" | grep -c .)"

while IFS='|' read -r name status want; do
	[ -n "$name" ] || continue
	n=$((n + 1))
	dir=$tmp/$name out=$tmp/$name.out
	mkdir -p "$dir"
	if ! gen "$name" "$dir"; then
		echo "not ok $n - $name # could not make the input"
		failed=$((failed + 1))
		continue
	fi
	(cd "$dir" && exec $guard "$ORACLEC" $opts "$input" -o "$out") \
		>"$tmp/stdout" 2>"$tmp/stderr"
	got=$?

	status_why "$got" "$status"
	if [ "$status" -eq 0 ]; then
		[ -s "$tmp/stderr" ] && fail "wrote to stderr"
		[ -s "$out" ] || fail "no output file"
	else
		printf '%s\n' "$want" | cmp -s - "$tmp/stderr" || fail "stderr differs"
		leftovers "$out"
	fi

	if [ -z "$why" ]; then
		echo "ok $n - $name"
	else
		echo "not ok $n - $name"
		printf '%s\n' "$why" | sed 's/^/# /'
		printf '%s\n' "$want" | diff -u - "$tmp/stderr" | head -n 20 | sed 's/^/# /'
		failed=$((failed + 1))
	fi
	rm -rf "$dir" "$out" "$out".tmp*
done <<EOF
$cases
EOF

[ "$failed" -eq 0 ]
exit

# name|exit status|stderr (one line)
__CASES__
empty|1|empty.onnx: error: empty file
cut-1|1|cut-1.onnx: error: not a valid ONNX model (truncated varint)
cut-2|1|cut-2.onnx: error: the model has no graph
cut-6000|1|cut-6000.onnx: error: not a valid ONNX model (truncated length-delimited field)
cut-last|1|cut-last.onnx: error: not a valid ONNX model (truncated length-delimited field)
cut-no-extension|1|model.bin: error: not a valid ONNX model (truncated length-delimited field)
flip-graph-group|1|flip-graph-group.onnx: error: not a valid ONNX model (unsupported wire type (groups))
flip-graph-length|1|flip-graph-length.onnx: error: not a valid ONNX model (truncated length-delimited field)
flip-op-type|1|flip-op-type.onnx: error: node 0 '/conv1/Conv' (Xonv): unsupported operator, and the file declares no shape for its output '/conv1/Conv_output_0'
flip-kernel|1|flip-kernel.onnx: error: node 0 '/conv1/Conv' (Conv): weight 1 does not have the expected shape 64x3x127x7
random|1|random.onnx: error: not a valid ONNX model (unsupported wire type (groups))
tensor|1|tensor.onnx: error: not a valid ONNX model (protobuf decode failed)
missing|1|missing.onnx: error: cannot read file: No such file or directory
directory|1|directory.onnx: error: cannot read file: not a regular file
no-graph|1|no-graph.onnx: error: the model has no graph
nested|1|nested.onnx: error: not a valid ONNX model (messages nested too deeply)
cycle|1|cycle.onnx: error: node 0 'add' (Add): input 'b' is produced by node 1, which does not come before it (a cycle, or nodes out of topological order)
undefined|1|undefined.onnx: error: node 1 'sum' (Add): input 'ghost' is not produced by any node, nor a graph input or initializer
duplicate|1|duplicate.onnx: error: node 1 'r2' (Sigmoid): output 'y' is already defined (duplicate name or cycle)
subgraph|1|subgraph.onnx: error: node 0 'if' (If): subgraphs (attribute 'then_branch') are not supported
negative-dim|1|negative-dim.onnx: error: graph input 'x': dimension 2 is -5, out of range (1 to 2^40)
overflow|1|overflow.onnx: error: graph input 'x' has more elements than 64 bits can count
gather-index|1|gather-index.onnx: error: node 0 'gather' (Gather): index 7 is out of range
unknown|1|unknown.onnx: error: node 0 'frob' (Frobnicate): unsupported operator, and the file declares no shape for its output 'y'
unknown-declared|0|
unknown-strict|1|unknown-strict.onnx: error: node 0 'frob' (Frobnicate): unknown operator (--strict)
huge-weight|0|
slice-batch|1|slice-batch.onnx: error: node 0 'first' (Slice): slicing along the batch axis (axis 0) is not supported: it takes some of the samples, and the counts are per sample
slice-batch-last|1|slice-batch-last.onnx: error: node 0 'last' (Slice): slicing along the batch axis (axis 0) is not supported: it takes some of the samples, and the counts are per sample
slice-batch-fixed|1|slice-batch-fixed.onnx: error: node 0 'half' (Slice): slicing along the batch axis (axis 0) is not supported: it takes some of the samples, and the counts are per sample
slice-batch-whole|0|
expand-batch|1|expand-batch.onnx: error: node 0 'grow' (Expand): expanding the batch axis (axis 0) to 4 is not supported: it changes the number of samples, and the counts are per sample
expand-batch-fixed|1|expand-batch-fixed.onnx: error: node 0 'grow' (Expand): expanding the batch axis (axis 0) to 8 is not supported: it changes the number of samples, and the counts are per sample
expand-batch-kept|0|
reshape-batch|0|
reshape-batch-fixed|0|
