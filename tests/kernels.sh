#!/bin/sh
# kernels.sh -- a kernel table priced end to end from the command line
# (docs/kernel-table.md), on tables written here, so it runs without torch:
#   - --kernels-needed: the CSV header and one row a key and batch that
#     ResNet-18's data=2 at 8 samples a GPU looks up (28: 11 conv, 9
#     elementwise, 5 norm, 2 pool, 1 gemm);
#   - --kernels FILE with a row for each of them: every layer with weights
#     priced from the table (time_source "table"), a convolution's time_s
#     its forward, data and weight gradients' (the first convolution's no
#     data gradient), a batch norm's forward and its whole backward;
#   - a key measured at 4 and 16 only: at 8, "interpolated", in log space
#     along the batch (twice the time at 4 where 16 is four times it);
#   - a table that is not there, a row of a bad number: one diagnostic
#     naming the file (and line:col), exit 1, no output.
# TAP.
. "${srcdir:=.}/tests/tap.sh"
tap_begin kernels

model=$srcdir/tests/data/onnx/resnet18.onnx
cd "$tmp" || exit 99
header=class,precision,layout,n,shape,fwd_s,bwd_data_s,bwd_weight_s,spread,repeats,kernel

# layer NAME: the JSON report's (time_s, time_source) of layer NAME, as
# "TIME SOURCE" (the report writes a layer's fields one a line)
layer()
{
	awk -v name="\"name\": \"$1\"," '
		index($0, name) { on = 1 }
		on && /"time_s":/ { t = $2; sub(/,$/, "", t) }
		on && /"time_source":/ { s = $2; gsub(/[",]/, "", s); print t, s; exit }
	' "$tmp/out"
}

run "$model" -g 2 -b 8 --grid data=2 --kernels-needed -q
want_status 0
[ "$(head -n 1 "$tmp/out")" = class,precision,layout,n,shape ] ||
	fail "header: $(head -n 1 "$tmp/out")"
rows=$(tail -n +2 "$tmp/out" | wc -l)
[ "$rows" -eq 28 ] || fail "$rows keys, expected 28"
for c in conv:11 elementwise:9 norm:5 pool:2 gemm:1; do
	got=$(grep -c "^${c%%:*}," "$tmp/out")
	[ "$got" -eq "${c#*:}" ] || fail "$got ${c%%:*} keys, expected ${c#*:}"
done
has out "conv,fp32,NCHW,8,c=3 h=224 w=224 k=64 r=7 s=7 stride=2x2 pad=3x3x3x3 groups=1"
check "--kernels-needed: the header and ResNet-18's 28 keys at 8 samples a GPU"

# every key at 1 ms forward, 2 ms data gradient, 4 ms weight gradient
{
	echo "$header"
	tail -n +2 "$tmp/out" |
		awk -F, -v OFS=, '{ print $1, $2, $3, $4, $5, 0.001, 0.002, 0.004, 0.01, 5, "" }'
} >full.csv
run "$model" -g 2 -b 8 --grid data=2 --kernels full.csv --layers -f json -q
want_status 0
set -- $(awk '/"layers": \[/ { in_layers = 1 } !in_layers { next }
	/"params": [1-9]/ { w = 1; weighted++ } /"params": 0/ { w = 0 }
	w && /"time_source": "table"/ { tabled++ } END { print weighted + 0, tabled + 0 }' "$tmp/out")
weighted=$1 tabled=$2
[ "$weighted" -eq 41 ] && [ "$tabled" -eq 41 ] ||
	fail "$tabled of $weighted layers with weights from the table, expected 41 of 41"
got=$(layer /conv1/Conv)
[ "$got" = "0.005 table" ] || fail "conv1: '$got', expected '0.005 table' (no data gradient)"
got=$(layer /layer1/layer1.0/conv1/Conv)
[ "$got" = "0.007 table" ] || fail "layer1.0.conv1: '$got', expected '0.007 table'"
got=$(layer /conv1/Conv/bn)
[ "$got" = "0.003 table" ] || fail "conv1's batch norm: '$got', expected '0.003 table'"
check "--kernels: every layer with weights priced from the table's rows"

# conv1's key at 4 and 16 samples only: at 8, between them in log space
key=$(grep '^conv,fp32,NCHW,8,c=3 h=224' full.csv | cut -d, -f5)
{
	echo "$header"
	echo "conv,fp32,NCHW,4,$key,0.001,,0.002,0.01,5,"
	echo "conv,fp32,NCHW,16,$key,0.004,,0.008,0.01,5,"
} >two.csv
run "$model" -g 2 -b 8 --grid data=2 --kernels two.csv --layers -f json -q
want_status 0
got=$(layer /conv1/Conv)
[ "$got" = "0.006 interpolated" ] || fail "conv1: '$got', expected '0.006 interpolated'"
got=$(layer /layer1/layer1.0/conv1/Conv)
case $got in *" model") ;; *) fail "layer1.0.conv1: '$got', expected the model's" ;; esac
check "--kernels: a key between two batches interpolated, the others the model's"

run "$model" --kernels none.csv -q
want_status 1
has err "none.csv"
[ "$(wc -l <"$tmp/err")" -eq 1 ] || fail "more than one diagnostic"
empty out
check "--kernels: a table that is not there is an error naming it"

{
	echo "$header"
	echo "conv,fp32,NCHW,4,$key,fast,,0.002,0.01,5,"
} >bad.csv
run "$model" --kernels bad.csv -o report.txt -q
want_status 1
has err "bad.csv:2:"
[ "$(wc -l <"$tmp/err")" -eq 1 ] || fail "more than one diagnostic"
leftovers "$tmp/report.txt"
check "--kernels: a row of a bad number is one diagnostic at its line, no output"

finish
