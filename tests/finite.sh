#!/bin/sh
# finite.sh -- every number oraclec prints is finite, or the input is an
# error; a valid ONNX file is always analysed; plans take whole batches.
# (docs/limits.md, "Numbers".)  TAP, with the plan at the end.
#
#   - system constants, .plat values, profile and table times outside their
#     ranges: exit 1 naming the file, line and column, no output file;
#   - predictions beyond 1e30 s or 2^62 bytes: "time overflows", "memory
#     overflows", never inf, nan or a negative byte count;
#   - validate's accuracies clamped at 0;
#   - node names used twice in an ONNX file: renamed, with a note;
#   - a plan whose micro-batch or batch per replica is not whole: exit 1.
#
#   srcdir=. ORACLEC=./oraclec ONNXBADGEN=tests/onnx-bad-gen sh tests/finite.sh

: "${ONNXBADGEN:=tests/onnx-bad-gen}"

. "${srcdir:=.}/tests/tap.sh"
tap_begin finite ONNXBADGEN

# run ARGS...: runs oraclec in $tmp (diagnostics name files relatively);
# sets `status`, leaves $tmp/out and $tmp/err.
run()
{
	rm -f "$tmp/o.out"
	(cd "$tmp" && exec "$ORACLEC" "$@") >"$tmp/out" 2>"$tmp/err"
	status=$?
}

want_status()
{
	[ "$status" -eq "$1" ] || fail "exit status $status, expected $1"
}

lacks()
{
	grep -E -q -e "$2" "$tmp/$1" && fail "std$1 has '$2'"
	return 0
}

# An input error: status 1, exactly the one line $1 on stderr, nothing on
# stdout, no -o file $tmp/o.out left.
refused()
{
	want=$1
	shift
	run "$@" -o o.out
	want_status 1
	printf '%s\n' "$want" | cmp -s - "$tmp/err" || fail "stderr is not '$want'"
	leftovers "$tmp/o.out"
}

# sys KEYLINE: sys.odl, a system with the required keys and KEYLINE on
# line 11
sys()
{
	cat >"$tmp/sys.odl" <<EOF
system t {
    fp32 = 15TFLOPS;
    memory = 16GiB;
    memory_bw = 900GB/s;
    gpus_per_node = 4;
    intra_bw = 50GB/s;
    intra_latency = 9us;
    nic_bw = 7GB/s;
    nic_latency = 10us;
    // the key under test:
    $1
}
EOF
}

model=$srcdir/examples/alexnet.odl

# ---- system constants: out of range is an error at the value -----------

for c in \
	"eff_conv = 4.9e-324;|16|'eff_conv' 4.94066e-324 is out of range (1e-6 to 1)" \
	"eff_memory = 0;|18|'eff_memory' 0 is out of range (1e-6 to 1)" \
	"fp16 = 1e-300FLOPS;|12|'fp16' 1e-300 FLOP/s is out of range (0, or 1 to 1e21 FLOP/s)" \
	"storage_bw = 1e25GB/s;|18|'storage_bw' 1e+34 bytes/s is out of range (0, or 1 to 1e21 bytes/s)" \
	"dispatch = 1e-20s;|16|'dispatch' 1e-20 s is out of range (0, or 1e-12 to 1000 s)" \
	"kernel_latency = 2000s;|22|'kernel_latency' 2000 s is out of range (0, or 1e-12 to 1000 s)" \
	"reserved = 0.0001KB;|16|'reserved' 0.1 bytes is out of range (0, or 1 to 2^60 bytes)" \
	"level l { fanout = 0; latency = 1e-13s; }|37|'latency' 1e-13 s is out of range (0, or 1e-12 to 1000 s)" \
	"level l { fanout = 0; latency = 1us; oversubscription = 1e7; }|61|'oversubscription' 1e+07 is out of range (0 to 1e6)"
do
	line=${c%%|*} rest=${c#*|}
	sys "$line"
	refused "sys.odl:11:${rest%%|*}: error: ${rest#*|}" "$model" -s sys.odl
	check "system: '$line' is refused at its value"
done

sys "fp16 = 0FLOPS; storage_bw = 0GB/s; dispatch = 0s; eff_conv = 1e-6; reserved = 0GiB;"
run "$model" -s sys.odl -f csv
want_status 0
lacks out 'inf|nan'
check "system: 0 where a key allows it and the edges of the ranges are accepted"

sys ""
sed 's/gpus_per_node = 4;/gpus_per_node = 0;/' "$tmp/sys.odl" >"$tmp/s0.odl"
mv "$tmp/s0.odl" "$tmp/sys.odl"
refused "sys.odl:1:8: error: system 't': 'gpus_per_node' must be at least 1" "$model" -s sys.odl
check "system: gpus_per_node 0 is refused"

# fanouts whose product passes 2^31 (3 nodes under a level of 2^30 groups
# of 2): the collectives' node count must not overflow (an -fsanitize
# build would report it)
sys "level a { fanout = 2; latency = 1us; } level b { fanout = 1073741824; latency = 1us; }"
run "$model" -s sys.odl -g 12 -f csv
want_status 0
lacks out 'inf|nan|,-'
check "system: fanouts multiplying past 2^31 give finite times"

# ---- .plat values ------------------------------------------------------

plat()
{
	printf 'MEM_PER_NODE|%s|B\nNODE_SPEED|%s|FLOPS\nBANDWIDTH|%s|B/s\nLATENCY|%s|s\nMAX_NODE|1024|GPUs\nGPU_PER_NODE|4|GPUs\n' \
		"$1" "$2" "$3" "$4" >"$tmp/p.plat"
}

plat 16e9 1e-300 1.25e10 5e-6
refused "p.plat:2:12: error: NODE_SPEED 1e-300 is out of range (1 to 1e21 FLOP/s)" "$model" -s p.plat
check ".plat: NODE_SPEED of 1e-300 is refused"
plat 16e9 7.8e12 1.25e10 1e9
refused "p.plat:4:9: error: LATENCY 1e+09 is out of range (1e-12 to 1000 s)" "$model" -s p.plat
check ".plat: LATENCY of 1e9 s is refused"
plat 16e96 7.8e12 1.25e10 5e-6
refused "p.plat:1:14: error: MEM_PER_NODE 1.6e+97 is out of range (1 to 2^60 bytes)" "$model" -s p.plat
check ".plat: MEM_PER_NODE of 16e96 is refused"
plat 16e9 7.8e12 1e22 5e-6
refused "p.plat:3:11: error: BANDWIDTH 1e+22 is out of range (1 to 1e21 bytes/s)" "$model" -s p.plat
check ".plat: BANDWIDTH of 1e22 is refused"

# ---- measured times ----------------------------------------------------

printf 'layer,forward_s,backward_s\nconv1,1e308,0.002\n' >"$tmp/prof.csv"
refused "prof.csv:2:7: error: forward_s 1e308 is more than 1e6 seconds per sample" \
	"$model" --profile prof.csv
check "--profile: a time of 1e308 s per sample is refused"

printf 'Dataset|t\nInput|10x3x8x8\nModel|t\nRELU|3x8x8|3x3x0x0|3x8x8|2e6\n' >"$tmp/t.net"
refused "t.net:4:26: error: row 'RELU': time 2e6 is more than 1e6 seconds per sample" t.net
check ".net: a row's time of 2e6 s per sample is refused"

# ---- predictions beyond the largest kept -------------------------------

cat >"$tmp/slow.odl" <<'EOF'
model slow {
    input x: 33554432;
    y = fc(x, 33554432);
}
system slowest {
    fp32 = 1FLOPS;
    memory = 16GiB;
    memory_bw = 900GB/s;
    gpus_per_node = 4;
    intra_bw = 50GB/s;
    intra_latency = 9us;
    nic_bw = 7GB/s;
    nic_latency = 10us;
    eff_gemm = 1e-6;
}
EOF
for f in text json csv; do
	run slow.odl -s slow.odl -b 1073741824 -g 4 -f $f
	want_status 0
	has out "time overflows"
	lacks out '[0-9]{31}|inf|nan|-9223372036854775808'
	check "1e31 s per iteration: 'time overflows', no number printed ($f)"
done
run slow.odl -s slow.odl -b 1073741824 -g 4 -f json --strategies data
for key in compute_s total_s epoch_s memory_per_gpu_bytes; do
	has out "\"$key\": null"
done
check "JSON gives the times of a strategy whose time overflows as null"

cat >"$tmp/wide.odl" <<'EOF'
model wide {
    input x: 262144x1048576;
    y = relu(x);
    z = relu(y);
}
EOF
for f in text csv; do
	run wide.odl -b 16777216 -f $f
	want_status 0
	has out "memory overflows"
	lacks out '-9223372036854775808|inf|nan'
	check "2^70 bytes per GPU: 'memory overflows', no negative byte count ($f)"
done

# ---- no time is negative -----------------------------------------------

# The gradient exchange's hidden part was its sum less what ran past
# backward, summed in another order: where nothing hid, -6.2e-18 s
# (cosmoflow on 64 GPUs of dgx_1, dgx_a100, dgx_h100; and with a bucket
# of 1 TB, one bucket after the whole backward).  Every time key of the
# JSON report ends in _s.
printf 'implementation onebucket {\n    overlap_grad = true;\n    bucket = 1TB;\n}\n' \
	>"$tmp/onebucket.odl"
for args in "-s dgx_1" "-s dgx_a100" "-s dgx_h100" "-s abci" "-s dgx_1 --implementation onebucket.odl" \
	"-s dgx_a100 --implementation pytorch --zero 1" "-s dgx_h100 --implementation horovod"; do
	# shellcheck disable=SC2086 # the arguments are words
	run "$srcdir/examples/cosmoflow.odl" -g 64 --sweep -f json $args
	want_status 0
	lacks out '"[A-Za-z0-9_]*_s": *-'
	check "cosmoflow, 64 GPUs, $args: no time in the JSON report is negative"
done
run "$srcdir/examples/resnet50.odl" -g 64 --sweep -f json -s dgx_1 --implementation onebucket.odl
want_status 0
lacks out '"[A-Za-z0-9_]*_s": *-'
check "resnet50, 64 GPUs, one bucket of 1 TB: no time in the JSON report is negative"

# ---- validate: accuracies at least 0 -----------------------------------

printf '%s\n' 'model,strategy,gpus,grid,global_batch,dataset_size,measured_iteration_s,paradl_projected_iteration_s' \
	'alexnet,data,1,data=1,512,1281167,0.01,5' >"$tmp/m.csv"
run validate m.csv --models "$srcdir/validation/models" -s abci
want_status 0
has out "0.0100     0.4693    0.000     5.0000    0.000"
lacks out ' -[0-9]'
check "validate: a prediction off by 100 % or more has accuracy 0, not below"

# ---- ONNX node names used twice ----------------------------------------

# onnx NAME NOTE LAYER: the model NAME of onnx-bad-gen is analysed with
# exactly the note NOTE, lists LAYER, and says nothing with -q
onnx()
{
	"$ONNXBADGEN" "$1" "$tmp/$1.onnx" || fail "onnx-bad-gen $1 failed"
	run "$1.onnx" --layers
	want_status 0
	printf '%s\n' "$1.onnx: note: $2" | cmp -s - "$tmp/err" || fail "stderr is not the note"
	has out "$3"
	run "$1.onnx" -q -o o.out
	want_status 0
	[ -s "$tmp/err" ] && fail "-q: stderr is not empty"
	[ -s "$tmp/o.out" ] || fail "-q: no report"
	rm -f "$tmp/o.out"
}

onnx names-twice "the layer name 'r' was used before: this layer is named 'r~2'" \
	"1  r~2    relu"
check "ONNX: two nodes named 'r': the second layer is 'r~2', with a note"
onnx names-generated "the layer name 'Relu_1' was used before: this layer is named 'Relu_1~2'" \
	"1  Relu_1~2  relu"
check "ONNX: a node named as a nameless one would be: renamed, with a note"
onnx names-many "4 layer names were used before and got a '~N' suffix (the first: 'r' is named 'r~2')" \
	"6  ln:1~2  relu"
check "ONNX: names used many times, and a node's second layer's name: one note with the count"

# ---- plans take whole batches ------------------------------------------

resnet=$srcdir/examples/resnet50.odl
run "$resnet" -g 8 -B 100 --plan deepspeed -o o.out
want_status 1
has err "the plan's batch per replica of 12.5 samples is not whole: the global batch of 100 does not split over 8 replicas; a multiple of 8 does (such as 96 or 104); no plan written"
leftovers "$tmp/o.out"
check "plan: 100 samples over 8 replicas is refused, naming 96 and 104"

run "$srcdir/examples/resnet50.odl" -s abci -g 4 --strategies pipeline -b 6 --plan pytorch -o o.out
want_status 1
has err "the plan's micro-batch of 1.5 samples is not whole: the global batch of 6 does not split into 4 micro-batches; a multiple of 4 does (such as 4 or 8); no plan written"
leftovers "$tmp/o.out"
check "plan: a pipeline's micro-batch of 1.5 samples is refused"

run "$resnet" -g 8 -B 96 --plan deepspeed -o o.out
want_status 0
[ -s "$tmp/o.out" ] || fail "no plan written"
check "plan: 96 samples over 8 replicas is written"

finish
