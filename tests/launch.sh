#!/bin/sh
# launch.sh -- the PyTorch plans run: oraclec writes a plan, python3 -m
# oraclec.launch starts its ranks as local CPU processes (gloo) with
# torchvision's model and --check compares the loss and every gradient with
# one process on the same batch (docs/plans.md, "Running a plan").  Data
# parallelism on 2 and 4 ranks, pipelines of 2 and 4 stages (ResNet-18,
# ResNet-50 under 1F1B, each stage keeping as many micro-batches at once as
# oraclec's plan says it holds, ResNet-18 under torchgpipe's checkpointing
# with GPipe and 1F1B, keeping as many whole as predicted, ViT-B/16 cut
# between encoder blocks), the
# hybrid dp (2 replicas of a 2-stage pipeline on 4 ranks), ZeRO-1 (the
# optimizer state sharded as oraclec predicts), filter and channel splits
# (each rank holding oraclec's parameters), df, a per-layer plan (AlexNet),
# every parameter after the step, the parameters each rank holds against
# the plan (--check), plans the launcher does not run
# (spatial, FSDP), and the check
# catching a wrong plan (a micro-batch count the batch does not divide is
# refused by oraclec; a plan edited to cut at no module is refused by the
# launcher).  Skipped where no python3 with torch and torchvision is found
# (`./bootstrap --tests` installs Debian's).  TAP.
. "${srcdir:=.}/tests/tap.sh"
tap_begin launch

tap_python 'import torch, torchvision' \
	"no python3 with torch and torchvision (./bootstrap --tests installs them)"
tap_models

# plan ONNX GRID ARGS...: the PyTorch plan of the grid into $tmp/plan.json
plan()
{
	m=$1 grid=$2
	shift 2
	"$ORACLEC" "$m" --grid "$grid" --plan pytorch -q -o "$tmp/plan.json" "$@" 2>"$tmp/err" ||
		fail "oraclec --plan pytorch: exit status $?"
}

# launch MODEL ARGS...: runs and checks the plan; must agree
launch()
{
	m=$1
	shift
	"$py" -m oraclec.launch --plan "$tmp/plan.json" --model "torchvision:$m" --check "$@" \
		>"$tmp/out" 2>>"$tmp/err"
	status_why $? 0
	grep -q "agree with one process" "$tmp/out" || fail "no agreement reported"
}

resnet18=$srcdir/examples/resnet50.onnx
[ -f "$zoo/resnet18.onnx" ] && resnet18=$zoo/resnet18.onnx

plan "$resnet18" data=2 -b 1
launch resnet18 --image-size 64
check "ResNet-18, data=2: DDP on 2 ranks equals one process"

plan "$resnet18" pipeline=2 --micro-batches 2 -b 2
launch resnet18 --image-size 64
check "ResNet-18, pipeline=2, 2 micro-batches: the stages equal one process"

plan "$srcdir/examples/resnet50.onnx" data=4 -b 1
launch resnet50 --image-size 64
check "ResNet-50, data=4: DDP on 4 ranks equals one process"

# held ARGS...: the micro-batches each stage holds at its peak, as
# oraclec's generic plan of the same grid predicts them
held()
{
	"$ORACLEC" "$@" --plan generic -q 2>>"$tmp/err" |
		sed -n 's/.*"micro_batches_held": \([0-9]*\)\.0*,\{0,1\}$/\1/p' | tr '\n' ' ' | sed 's/ $//'
}

# flight: what the launcher saw each stage keep at once
flight()
{
	sed -n 's/^micro-batches in flight per stage: //p' "$tmp/out"
}

plan "$srcdir/examples/resnet50.onnx" pipeline=4 --micro-batches 8 -b 8 --schedule 1f1b
launch resnet50 --image-size 64
grep -q '"Schedule1F1B"' "$tmp/plan.json" || fail "the plan does not name 1F1B"
want=$(held "$srcdir/examples/resnet50.onnx" --grid pipeline=4 --micro-batches 8 -b 8 \
	--schedule 1f1b)
[ "$want" = "4 3 2 1" ] || fail "oraclec's stages hold '$want', not 4 3 2 1"
[ "$(flight)" = "$want" ] || fail "in flight: '$(flight)', oraclec: '$want'"
check "ResNet-50, pipeline=4, 1F1B, 8 micro-batches: equal to one process, stages keep 4 3 2 1 as predicted"

# whole ARGS...: the micro-batches each stage keeps whole at its peak, as
# oraclec's generic plan predicts them; wholes: what the launcher saw
whole()
{
	"$ORACLEC" "$@" --plan generic -q 2>>"$tmp/err" |
		sed -n 's/.*"micro_batches_whole": \([0-9]*\)\.0*$/\1/p' | tr '\n' ' ' | sed 's/ $//'
}
wholes()
{
	sed -n 's/^micro-batches whole per stage: //p' "$tmp/out"
}

# torchgpipe's checkpointing (Pipe's except_last): every micro-batch but
# the last keeps only its input and runs its forward again before its
# backward.  GPipe: the last one whole, done before the first recomputed;
# 1F1B: the first stage recomputes its oldest while the last is whole too
for sched in gpipe:"4 4":"1 1" 1f1b:"2 1":"2 1"; do
	s=${sched%%:*} w=${sched##*:} f=${sched#*:} f=${f%:*}
	plan "$resnet18" pipeline=2 --micro-batches 4 -b 4 --schedule "$s" --implementation torchgpipe
	grep -q '"checkpoint": "except_last"' "$tmp/plan.json" || fail "the plan does not checkpoint"
	launch resnet18 --image-size 64
	[ "$(whole "$resnet18" --grid pipeline=2 --micro-batches 4 -b 4 --schedule "$s" \
		--implementation torchgpipe)" = "$w" ] || fail "oraclec's stages keep whole: not $w"
	[ "$(wholes)" = "$w" ] || fail "whole: '$(wholes)', oraclec: '$w'"
	[ "$(flight)" = "$f" ] || fail "in flight: '$(flight)', not '$f'"
	check "ResNet-18, torchgpipe, pipeline=2, $s: checkpointed stages equal one process, keep $w whole as predicted"
done

plan "$resnet18" data=2,pipeline=2 --micro-batches 2 -b 2
launch resnet18 --image-size 64
[ "$(flight)" = "$(held "$resnet18" --grid data=2,pipeline=2 --micro-batches 2 -b 2)" ] ||
	fail "in flight: '$(flight)'"
check "ResNet-18, dp (data=2,pipeline=2) on 4 ranks: replicated stages equal one process"

# data-inner: the mesh is pipeline x data, a stage's replicas on
# consecutive ranks; the runner builds its groups from the plan's mesh
plan "$resnet18" data=2,pipeline=2 --micro-batches 2 -b 2 --nesting data-inner
grep -A3 '"mesh_dim_names"' "$tmp/plan.json" | tr -d ' \n' | grep -q '\["pipeline","data"\]' ||
	fail "the mesh is not pipeline x data"
launch resnet18 --image-size 64
check "ResNet-18, dp nested data-inner on 4 ranks: replicated stages equal one process"

gunzip -c "$srcdir/tests/data/zoo/vit_b_16.onnx.gz" >"$tmp/vit.onnx"
plan "$tmp/vit.onnx" pipeline=2 --micro-batches 2 -b 2
grep -q '"encoder.layers.encoder_layer_6": "BEGINNING"' "$tmp/plan.json" ||
	fail "the cut is not between encoder blocks"
launch vit_b_16 --image-size 32
check "ViT-B/16, pipeline=2: cut between encoder blocks, the stages equal one process"

# ZeRO-1: each rank keeps the momentum of about half the parameters, as
# oraclec's optimizer bytes per GPU (4 bytes of momentum per element, over
# 2) say; the step after it equals one process's
plan "$resnet18" data=2 --zero 1 -b 1
launch resnet18 --image-size 64
state=$(sed -n 's/^optimizer state per rank (parameter elements): //p' "$tmp/out")
"$ORACLEC" "$resnet18" --grid data=2 --zero 1 -f json -q >"$tmp/z.json" 2>>"$tmp/err"
"$py" - "$tmp/z.json" "$state" <<'PY' >>"$tmp/err" 2>&1 || fail "ZeRO-1's shards are not oraclec's"
import json, sys
want = json.load(open(sys.argv[1]))["strategies"][0]["memory"]["optimizer"]
parts = sys.argv[2].split()
a, b, total = int(parts[0]), int(parts[1]), int(parts[3])
assert a + b == total, (a, b, total)
assert abs(want - total * 4 / 2) <= 1, ("oraclec's optimizer bytes", want, total * 2)
for n in (a, b):  # whole tensors: within 1 % of half
    assert abs(n * 4 - want) <= 0.01 * want, ("a rank keeps", n * 4, "bytes, oraclec", want)
PY
check "ResNet-18, data=2, ZeRO-1: sharded optimizer state as oraclec predicts, the step equals one process's"

# FSDP (--zero 3: FULL_SHARD): run where this torch imports
# torch.distributed.fsdp, else refused in one line with the import's own
# reason (Debian's torch 1.13 under Python 3.11: a ValueError of its
# sharded-tensor dataclass)
plan "$resnet18" data=2 --zero 3 -b 1
"$py" -m oraclec.launch --plan "$tmp/plan.json" --model torchvision:resnet18 --check \
	--image-size 64 >"$tmp/out" 2>"$tmp/err"
status=$?
if "$py" -c 'import torch.distributed.fsdp' 2>/dev/null; then
	want_status 0
	grep -q "agree with one process" "$tmp/out" || fail "no agreement reported"
	check "an FSDP plan (ZeRO-3, FULL_SHARD) runs: equal to one process"
else
	want_status 1
	[ "$(wc -l <"$tmp/err")" -eq 1 ] || fail "not one line"
	grep -q "plan.json: fsdp: the plan shards with FSDP (FULL_SHARD), and this torch (.*) cannot import torch.distributed.fsdp: [A-Za-z]*Error: .*; FSDP plans run under torch 2.0 and later$" \
		"$tmp/err" || fail "no message"
	[ -s "$tmp/out" ] && fail "it started"
	check "an FSDP plan (ZeRO-3) where torch cannot import torch.distributed.fsdp: refused in one line, its reason"
fi

# filter and channel splits: each rank holds its rows (columns) of every
# conv and fc weight, as many parameters as oraclec's weights per GPU say
# (the BatchNorm-keeping export has torchvision's parameters: BN whole on
# every rank; a channel split keeps the bias whole)
keepbn=$zoo/resnet18_keepbn.onnx
[ -f "$keepbn" ] || keepbn=$srcdir/tests/data/onnx/resnet18_keepbn.onnx
for g in filter=2 channel=2; do
	plan "$keepbn" $g
	launch resnet18 --image-size 64 --batch 2
	held=$(sed -n 's/^parameters per rank (elements): //p' "$tmp/out")
	want=$("$ORACLEC" "$keepbn" --grid $g -f json -q 2>>"$tmp/err" |
		"$py" -c 'import json, sys; print(int(json.load(sys.stdin)["strategies"][0]["memory"]["weights"] / 4))')
	[ "$held" = "$want $want" ] || fail "ranks hold '$held' parameters, oraclec: $want each"
	check "ResNet-18, $g: the split layers equal one process; each rank holds oraclec's $want parameters"
done

plan "$resnet18" data=2,filter=2
launch resnet18 --image-size 64 --batch 4
check "ResNet-18, df (data=2,filter=2) on 4 ranks: the shards' replicas summed, equal to one process"

# a per-layer plan: AlexNet on 4 ranks, the convolutions data parallel,
# the classifier split (channel, filter, channel: PyTorch's NCCL
# collectives), redistributed between
alexnet=$zoo/alexnet.onnx
[ -f "$alexnet" ] || alexnet=$srcdir/tests/data/onnx/alexnet.onnx
"$ORACLEC" "$alexnet" -g 4 --per-layer --implementation pytorch --plan pytorch -q \
	-o "$tmp/plan.json" 2>"$tmp/err" || fail "oraclec --per-layer --plan pytorch: exit status $?"
grep -A3 '"module": "classifier.4"' "$tmp/plan.json" | grep -q '"split": "filter"' ||
	fail "classifier.4 is not split by filter"
launch alexnet --image-size 64 --batch 8
check "AlexNet, per-layer on 4 ranks (convolutions data, classifier channel/filter/channel): equal to one process"

# degrees: under ParaDL's host-staged collectives (abci's implementation)
# the programme splits the classifier over 2 ranks in 2 groups (data=2 x
# filter=2), its activations redistributed between the data-parallel
# layers and the groups
"$ORACLEC" "$alexnet" -s abci -g 4 --per-layer --plan pytorch -q -o "$tmp/plan.json" 2>"$tmp/err" ||
	fail "oraclec --per-layer --plan pytorch: exit status $?"
grep -A3 '"module": "classifier.4"' "$tmp/plan.json" | grep -q '"degree": 2' ||
	fail "classifier.4 is not split over 2 ranks"
launch alexnet --image-size 64 --batch 8
check "AlexNet, per-layer with the classifier split over 2 ranks in 2 groups: equal to one process"

plan "$resnet18" spatial=2
"$py" -m oraclec.launch --plan "$tmp/plan.json" --model torchvision:resnet18 --check \
	--image-size 64 >"$tmp/out" 2>"$tmp/err"
[ $? -ne 0 ] || fail "a spatial split ran"
grep -q "mesh dimension spatial is not run by this launcher" "$tmp/err" || fail "no message"
check "a spatial split is refused with a message (not run by the launcher yet)"

plan "$resnet18" pipeline=2 --micro-batches 2 -b 2
sed 's/"layer[0-9.]*": "BEGINNING"/"nothing.here": "BEGINNING"/' "$tmp/plan.json" >"$tmp/p2.json"
mv "$tmp/p2.json" "$tmp/plan.json"
"$py" -m oraclec.launch --plan "$tmp/plan.json" --model torchvision:resnet18 --check \
	--image-size 64 >"$tmp/out" 2>"$tmp/err"
[ $? -ne 0 ] || fail "a cut at no module ran"
grep -q "split point nothing.here is not a module" "$tmp/err" || fail "no message"
check "a split point the model does not call is refused, named"

finish
