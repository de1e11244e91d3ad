#!/bin/sh
# trace.sh -- --profile with a profiler's trace (the Chrome trace of
# python3 -m oraclec.launch --trace; docs/model.md, "Measured layer
# times"), on traces written here, so it runs without torch:
#   - each module's time goes to its layers per sample of the trace's
#     batch: an operator counted once however deep the operators of its
#     module nest in it, a backward operator found by its forward
#     operator's (Sequence number, thread), the median over the steps,
#     operators outside the steps and of other phases left out, a GPU's
#     trace by its kernels' device time; a module called twice shared by
#     its layers' FLOPs; a layer no module made keeps the model's time,
#     JSON time_source "profile" or "model"; ONNX names (scoped by
#     PyTorch's exporter) and ODL names alike; the note on stderr;
#   - a trace without a batch: a warning, the analysis's batch per GPU;
#   - the CSV profile unchanged;
#   - bad traces: a diagnostic naming the file and the place, exit 1, no
#     output file, never a crash: not JSON, cut short, an array, no
#     traceEvents, no oraclec object, another schema, out-of-range and
#     mistyped values, a phase of no kind, a key twice, deep nesting,
#     NUL bytes, no step, a file past the 256 MiB limit.
# TAP.
. "${srcdir:=.}/tests/tap.sh"
tap_begin trace

cd "$tmp" || exit 99

py=
command -v python3 >/dev/null 2>&1 && py=python3

# layers JSON [NAME=SOURCE:FWD:BWD ...]: each layer's time_source and its
# measured seconds per sample (FWD, BWD; '-' for none) in the JSON report
layers()
{
	[ -n "$py" ] || return 0
	"$py" - "$@" <<'PY' >"$tmp/check" 2>&1 || fail "$(cat "$tmp/check")"
import json, sys
rep = json.load(open(sys.argv[1]))
got = {l["name"]: l for l in rep["layers"]}
for want in sys.argv[2:]:
    name, rest = want.split("=")
    src, f, b = rest.split(":")
    l = got[name]
    assert l["time_source"] == src, (name, l["time_source"], src)
    for k, v in (("measured_fwd_s", f), ("measured_bwd_s", b)):
        if v == "-":
            assert l[k] is None, (name, k, l[k])
        else:
            assert abs(l[k] - float(v)) <= 1e-12 + 1e-9 * abs(float(v)), (name, k, l[k], v)
PY
}

cat >tiny.odl <<'EOF'
model tiny {
    input x: 3x8x8;
    conv1 = conv(x, 4, kernel=3, pad=1);
    relu = relu(conv1);
    f = flatten(relu);
    fc = fc(f, 10);
}
EOF

# Three steps of 1000 us.  conv1: aten::conv2d holding aten::convolution
# (counted once) 100, 120 and 500 us forward (the median 120); backward an
# evaluate_function found by its Sequence number and forward thread, 200
# us, holding a nested operator.  relu: 20 us forward a step, 30 backward.
# fc: inside DDP's forward (phase other, no module), 40 us.  Left out: an
# AccumulateGrad of no module, the optimizer, an operator outside the
# steps, a kernel.  4 samples a step.
op() # TS DUR NAME PHASE [MODULE [SEQ [FWDTID]]]
{
	printf ',\n{"ph":"X","cat":"op","pid":0,"tid":1,"ts":%s,"dur":%s,"name":"%s","args":{"phase":"%s"' \
		"$1" "$2" "$3" "$4"
	[ -n "${5:-}" ] && [ "$5" != - ] && printf ',"module":"%s"' "$5"
	[ -n "${6:-}" ] && printf ',"Sequence number":%s' "$6"
	[ -n "${7:-}" ] && printf ',"Fwd thread id":%s' "$7"
	printf '}}'
}
steps()
{
	for s in 0 1 2; do
		b=$((s * 1000))
		printf ',\n{"ph":"X","cat":"step","pid":0,"tid":1,"ts":%d,"dur":1000,"name":"ProfilerStep#%d","args":{"step":%d}}' \
			$b $s $s
		op $((b + 5)) 900 DistributedDataParallel.forward other
		printf ',\n{"ph":"X","cat":"module","pid":0,"tid":1,"ts":%d,"dur":600,"name":"conv1","args":{"module":"conv1"}}' $((b + 9))
		case $s in 0) c=100 ;; 1) c=120 ;; 2) c=500 ;; esac
		op $((b + 10)) $c aten::conv2d forward conv1 $((10 * s + 1))
		op $((b + 11)) $((c - 10)) aten::convolution forward conv1 $((10 * s + 1))
		op $((b + 620)) 10 aten::relu_ forward relu $((10 * s + 2))
		op $((b + 640)) 10 aten::relu_ forward relu $((10 * s + 3))
		op $((b + 700)) 40 aten::linear forward fc $((10 * s + 4))
		op $((b + 750)) 15 "autograd::engine::evaluate_function: ReluBackward0" backward relu $((10 * s + 3)) 1
		op $((b + 770)) 15 "autograd::engine::evaluate_function: ReluBackward0" backward relu $((10 * s + 2)) 1
		op $((b + 790)) 200 "autograd::engine::evaluate_function: ConvolutionBackward0" backward - $((10 * s + 1)) 1
		op $((b + 791)) 190 aten::convolution_backward backward - "" 1
		op $((b + 992)) 3 "autograd::engine::evaluate_function: torch::autograd::AccumulateGrad" backward - "" 0
		op $((b + 996)) 3 Optimizer.step#SGD.step optimizer
	done
}
{
	printf '{"traceEvents":[{"ph":"M","name":"process_name","pid":0,"args":{"name":"rank 0"}}'
	steps
	op 5000 300 aten::conv2d forward conv1 99
	printf ',\n{"ph":"X","cat":"kernel","pid":0,"tid":"device 0","ts":12,"dur":50,"name":"k","args":{}}'
	printf '],\n"displayTimeUnit":"ms",\n"oraclec":{"trace":1,"rank":0,"model":"tiny","device":"cpu","torch":"1.13","steps":[0,1,2],"modules":["conv1","relu","fc"],"batch":4}}\n'
} >t.json

run tiny.odl -b 4 --profile t.json -f json --layers -o t.out.json
[ "$status" -eq 0 ] || fail "exit status $status"
has err "t.json: note: profile: 3 of 4 layers from the trace (3 steps of 4 samples on rank 0); the others keep the model's time"
# conv1 120/4 us forward, 200/4 backward; relu 20/4 and 30/4; fc 40/4, no backward
layers t.out.json conv1=profile:30e-6:50e-6 relu=profile:5e-6:7.5e-6 fc=profile:10e-6:0 \
	f=model:-:-
check "a trace's modules: an operator once however it nests, backward by sequence number, the median step, per sample of its batch"

# the same trace on a GPU: device_time_us, each operator's own kernels
sed 's/"name":"aten::conv2d","args":{"phase":"forward"/&,"device_time_us":7/;
     s/"name":"aten::convolution","args":{"phase":"forward"/&,"device_time_us":5/;
     s/"name":"aten::convolution_backward","args":{"phase":"backward"/&,"device_time_us":20/' \
	t.json >g.json
run tiny.odl -b 4 --profile g.json -f json --layers -o g.out.json
[ "$status" -eq 0 ] || fail "exit status $status"
# conv1 (7 + 5)/4 us forward a step; backward the nested operator's 20
# (its evaluate_function has no kernel of its own); relu and fc no kernels
layers g.out.json conv1=profile:3e-6:5e-6 relu=profile:0:0 fc=profile:0:0
check "a GPU's trace: the kernels' device time of every operator, nested ones too"

# no batch in the trace: the analysis's batch per GPU (-b 8), said so
sed 's/,"batch":4//' t.json >nb.json
run tiny.odl -b 8 --profile nb.json -f json --layers -o nb.out.json
[ "$status" -eq 0 ] || fail "exit status $status"
has err "nb.json: warning: the trace does not say how many samples a step took"
has err "taken per 8 samples"
layers nb.out.json conv1=profile:15e-6:25e-6
check "a trace without its batch: a warning, the analysis's samples per GPU"

# ONNX: PyTorch's scoped names; layer1.0.relu called twice (relu, relu_1)
# is shared by its two layers; a module that made no layer is said
keepbn=$srcdir/tests/data/onnx/resnet18_keepbn.onnx
{
	printf '{"traceEvents":[{"ph":"X","cat":"step","pid":0,"tid":7,"ts":0,"dur":100000,"name":"ProfilerStep#3"}'
	printf ',{"ph":"X","cat":"op","pid":0,"tid":7,"ts":10,"dur":400,"name":"aten::conv2d","args":{"phase":"forward","module":"layer1.0.conv1"}}'
	printf ',{"ph":"X","cat":"op","pid":0,"tid":7,"ts":500,"dur":60,"name":"aten::relu_","args":{"phase":"forward","module":"layer1.0.relu"}}'
	printf ',{"ph":"X","cat":"op","pid":0,"tid":7,"ts":600,"dur":60,"name":"aten::relu_","args":{"phase":"forward","module":"layer1.0.relu"}}'
	printf ',{"ph":"X","cat":"op","pid":0,"tid":7,"ts":700,"dur":30,"name":"aten::add_","args":{"phase":"forward","module":"layer1.0"}}'
	printf ',{"ph":"X","cat":"op","pid":0,"tid":7,"ts":800,"dur":30,"name":"aten::mul","args":{"phase":"forward","module":"head.extra"}}'
	printf '],"oraclec":{"trace":1,"rank":0,"steps":[3],"batch":2}}'
} >r.json
run "$keepbn" -b 2 --profile r.json -f json --layers -o r.out.json
[ "$status" -eq 0 ] || fail "exit status $status"
has err "r.json: note: profile: 4 of 69 layers from the trace (1 steps of 2 samples on rank 0)"
has err "r.json: note: 1 of the trace's 4 timed modules made no layer of the model ('head.extra')"
layers r.out.json /layer1/layer1.0/conv1/Conv=profile:200e-6:0 \
	/layer1/layer1.0/relu/Relu=profile:30e-6:0 /layer1/layer1.0/relu_1/Relu=profile:30e-6:0 \
	/layer1/layer1.0/Add=profile:15e-6:0 /layer1/layer1.0/conv2/Conv=model:-:-
has err "r.json: note: profile: 40 of the 41 layers with weights took no time from the trace ('/conv1/Conv', '/bn1/BatchNormalization', '/layer1/layer1.0/bn1/BatchNormalization', '/layer1/layer1.0/conv2/Conv', '/layer1/layer1.0/bn2/BatchNormalization', ...); the model prices them"
check "ONNX scoped names: a module's layers (relu and relu_1 share layer1.0.relu), a container's own operator; the layers with weights left unmatched named"

# ResNet-18 as the default export leaves it (eval mode: every batch norm
# folded, restored by the training pass): the launcher's trace gives the
# 20 restored batch norms the time of the module called after their
# convolution; a plain torch.profiler trace of a user's own loop
# (tools/user_trace.py) gives its layers by kind and order.  Each: all 41
# layers with weights a measured time, none named as left (21 of 41
# before issue 37)
# weighted JSON: the layers with weights (conv, fc, batchnorm) whose
# time_source is "profile", "N of M"
weighted()
{
	"$py" - "$1" <<'PY'
import json, sys
ls = [l for l in json.load(open(sys.argv[1]))["layers"] if l["op"] in ("conv", "fc", "batchnorm")]
print("%d of %d" % (sum(l["time_source"] == "profile" for l in ls), len(ls)))
PY
}
r18=$srcdir/tests/data/onnx/resnet18.onnx
for tr in runner user; do
	run "$r18" -b 8 --profile "$srcdir/tests/data/traces/resnet18-$tr.json" -f json --layers \
		-o "$tr.out.json"
	[ "$status" -eq 0 ] || fail "exit status $status"
	grep -q "layers with weights took no time" "$tmp/err" && fail "layers with weights unmatched"
	if [ -n "$py" ]; then
		got=$(weighted "$tr.out.json")
		[ "$got" = "41 of 41" ] || fail "$tr: $got layers with weights from the trace"
	fi
	check "an eval-mode export's $tr trace: 41 of ResNet-18's 41 layers with weights measured"
done

# the text report: the trace's times in the iteration, the note on stderr
run tiny.odl -b 4 --profile t.json
[ "$status" -eq 0 ] || fail "exit status $status"
has err "t.json: note: profile: 3 of 4 layers"
has out "recommendation: use data parallelism"
check "the text report with a trace"

# the CSV path is unchanged
printf 'layer,forward_s,backward_s\nconv1,0.001,0.002\n' >p.csv
run tiny.odl --profile p.csv -f json --layers -o p.out.json
[ "$status" -eq 0 ] || fail "exit status $status"
layers p.out.json conv1=profile:0.001:0.002 relu=model:-:-
check "a CSV profile as before, with time_source"

# ---- bad traces ----------------------------------------------------------

# bad NAME MESSAGE: the trace NAME is refused: exit 1, the message on
# stderr, no output file, no crash (what earlier cases found kept:
# status_why starts `why` afresh)
bad()
{
	rm -f o.json
	run tiny.odl --profile "$1" -f json -o o.json
	_why=$why
	status_why "$status" 1
	why="$_why${_why:+${why:+
}}$why"
	has err "$2"
	[ -e o.json ] && fail "left the output file"
	grep -q 'Sanitizer\|runtime error\|internal' "$tmp/err" && fail "a sanitizer report"
	return 0
}

printf '{"traceEvents":[{"ph":"X",\n "ts": 1,, "dur":2}]}' >b1.json
bad b1.json "b1.json:2:10: error: not JSON: "
printf '{"traceEvents":[{"ph":"X","ts":1' >b2.json
bad b2.json "b2.json:1:"
printf '[{"ph":"X"}]' >b3.json
bad b3.json "b3.json:1:2: error: traceEvents[0].name is missing"
printf '{"displayTimeUnit":"ms"}' >b4.json
bad b4.json "b4.json:1:1: error: no \"traceEvents\": not a Chrome trace"
sed 's/"oraclec":{"trace":1,/"other":{"trace":1,/' t.json >b5.json
bad b5.json "b5.json:1:1: error: no \"oraclec\" object"
sed 's/"trace":1,/"trace":2,/' t.json >b6.json
bad b6.json "error: oraclec.trace is not 1: this oraclec reads schema 1"
sed '5s/"dur":[0-9]*/"dur":-3/' t.json >b7.json
bad b7.json "b7.json:5:1: error: traceEvents[4].dur -3 is out of range (0 to 1e+12 microseconds)"
sed '5s/"ts":[0-9]*/"ts":"soon"/' t.json >b8.json
bad b8.json "b8.json:5:1: error: traceEvents[4].ts is not a number (microseconds)"
sed '5s/"phase":"forward"/"phase":"sideways"/' t.json >b9.json
bad b9.json "traceEvents[4].args.phase 'sideways' is not forward, backward, optimizer or other"
sed '5s/"Sequence number":1/"Sequence number":-1/' t.json >b10.json
bad b10.json "traceEvents[4].args.Sequence number is not an integer 0 or more"
sed 's/"batch":4/"batch":0.5/' t.json >b11.json
bad b11.json "oraclec.batch 0.5 is out of range (1 to 2.14748e+09 samples)"
sed 's/"displayTimeUnit":"ms",/"displayTimeUnit":"ms","displayTimeUnit":"ns",/' t.json >b12.json
bad b12.json "error: key 'displayTimeUnit' given twice"
sed 's/"cat":"step"/"cat":"stepX"/' t.json >b13.json
bad b13.json "error: no step (an event of cat \"step\"): nothing to take times per step from"
sed '5s/"tid":1,/"tid":[1],/' t.json >b14.json
bad b14.json "traceEvents[4].tid is of another type (the thread: an integer or a string)"
{ printf '{"traceEvents":'; i=0; while [ $i -lt 3000 ]; do printf '['; i=$((i + 1)); done; } >b15.json
bad b15.json "b15.json:1:"
printf '{"traceEvents":[]}\0\0' >b16.json
bad b16.json "b16.json:1:19: error: more after the trace's object"
sed '5s/"dur":[0-9]*/"dur":1e999/' t.json >b17.json
bad b17.json "b17.json:5:"
sed '5s/"module":"conv1"/"module":""/' t.json >b18.json
bad b18.json "traceEvents[4].args.module is empty"
sed '5s/"module":"conv1"/"module":"co\\u0000nv1"/' t.json >b19.json
bad b19.json "b19.json:5:"
has err "error: a string holds a NUL character (\\u0000): no name in a trace does"
grep -q JSON_ALLOW_NUL "$tmp/err" && fail "jansson's flag named"
# absurd durations: three operators of 1e12 us (on three threads) in one
# step of conv1 at 4
# samples a step: 3e6 s a step, 7.5e5 s a sample, within 1e6; at 1
# sample a step (batch 1) 3e6 s a sample, refused at the first operator
{
	printf '{"traceEvents":[{"ph":"X","cat":"step","pid":0,"tid":1,"ts":0,"dur":1e12,"name":"s"}'
	for i in 1 2 3; do
		printf ',\n{"ph":"X","cat":"op","pid":0,"tid":%d,"ts":%d,"dur":1e12,"name":"aten::conv2d","args":{"phase":"forward","module":"conv1"}}' $i $i
	done
	printf '],"oraclec":{"trace":1,"batch":BATCH}}\n'
} >b20.tmpl
sed 's/BATCH/1/' b20.tmpl >b20.json
bad b20.json "b20.json:2:1: error: module 'conv1' takes 3e+06 seconds a step forward, more than 1e6 seconds per sample of the trace's batch (the limit of a profile)"
check "bad traces: a diagnostic at the file, line and column, exit 1, no output"

sed 's/BATCH/4/' b20.tmpl >b21.json
run tiny.odl -b 4 --profile b21.json -f json --layers -o b21.out.json
[ "$status" -eq 0 ] || fail "exit status $status"
layers b21.out.json conv1=profile:750000:0
check "a module's time within 1e6 s a sample of the trace's batch is taken"

# a long trace reads in linear time: 40,000 events (15 steps of the
# launcher's ResNet-18 on a CPU) took 33 s when each event's line was
# counted from the start of the file
if [ -n "$py" ] && command -v timeout >/dev/null 2>&1; then
	"$py" - <<'PY' >long.json
import sys
w = sys.stdout.write
w('{"traceEvents":[')
sep = ""
for s in range(20):
    b = s * 100000
    w('%s{"ph":"X","cat":"step","pid":0,"tid":1,"ts":%d,"dur":99000,"name":"ProfilerStep#%d"}' % (sep, b, s))
    sep = ","
    for i in range(2000):
        w(',\n{"ph":"X","cat":"op","pid":0,"tid":1,"ts":%d,"dur":10,"name":"aten::add",'
          '"args":{"phase":"forward","module":"%s"}}' % (b + 40 * i + 1, ("conv1", "relu", "fc")[i % 3]))
w('],"oraclec":{"trace":1,"batch":4}}\n')
PY
	timeout 10 "$ORACLEC" tiny.odl -b 4 --profile long.json -f json --layers -o long.out.json \
		>"$tmp/out" 2>"$tmp/err"
	status_why $? 0
	# 667 operators of 10 us a step for conv1 and relu, 666 for fc, per 4 samples
	layers long.out.json conv1=profile:1667.5e-6:0 fc=profile:1665e-6:0
	check "a trace of 40,000 events reads in linear time"
else
	echo "ok $((n += 1)) - a trace of 40,000 events reads in linear time # SKIP no python3 or timeout"
fi

if command -v truncate >/dev/null 2>&1; then
	cp t.json big.json && truncate -s 300M big.json
	bad big.json "big.json: error: cannot read file: file is larger than the limit of 268435456 bytes"
	check "a trace over 256 MiB is refused before it is read"
else
	echo "ok $((n += 1)) - a trace over 256 MiB is refused # SKIP no truncate"
fi

finish
