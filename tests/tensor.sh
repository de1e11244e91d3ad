#!/bin/sh
# tensor.sh -- Megatron-LM's tensor parallelism (issue 42): the 1.7 B GPT
# of SC'21's Table 1 (validation/megatron-sc21/models/gpt-1.7b.odl: 24
# layers, hidden 2304, 24 heads, 2,048 tokens) on 8 GPUs of a DGX A100 at
# tensor=8 against one GPU at the same global batch, its collectives, its
# refusals, sequence parallelism, the grid under every nesting that
# places it alike, and --plan megatron's sizes.  The JSON is read by
# python3 (standard library); without it those cases are skipped.
. "${srcdir:=.}/tests/tap.sh"
tap_begin tensor
tap_python "import json" "python3 not found"

gpt=$srcdir/validation/megatron-sc21/models/gpt-1.7b.odl
# Megatron's SC'21 runs: every transformer layer recomputed (25 IR
# layers each, the model file's header), 16-bit, Adam
common="-s dgx-a100 -B 8 --precision amp-bf16 --optimizer adamw --data synthetic
	--recompute every:25 -q -f json"

# get FILE EXPR: a value of the JSON, python3's repr (d the document, k
# its first strategy)
get()
{
	"$py" -c 'import json, sys
d = json.load(open(sys.argv[1])); k = d["strategies"][0]; print(eval(sys.argv[2]))' "$1" "$2"
}

# 1: tensor=8 at least 4x one GPU at the same global batch of 8, with the
# pairs' all-reduces priced (and none on one GPU)
# shellcheck disable=SC2086
run "$gpt" $common -g 8 --grid tensor=8
want_status 0
cp "$tmp/out" "$tmp/t8.json"
# shellcheck disable=SC2086
run "$gpt" $common -g 1 --grid data=1
want_status 0
cp "$tmp/out" "$tmp/one.json"
"$py" - "$tmp/t8.json" "$tmp/one.json" >"$tmp/why" 2>&1 <<'PY' || fail "$(cat "$tmp/why")"
import json, sys
t8, one = (json.load(open(p))["strategies"][0] for p in sys.argv[1:3])
assert t8["name"] == "tensor" and t8["feasible"], t8["reason"]
assert one["feasible"], one["reason"]
assert t8["global_batch"] == one["global_batch"] == 8
a, b = t8["iteration"]["total_s"], one["iteration"]["total_s"]
assert b >= 4 * a, (a, b, b / a)
assert t8["iteration"]["layer_collectives_s"] > 0, t8["iteration"]
assert one["iteration"]["layer_collectives_s"] == 0, one["iteration"]
PY
check "GPT 1.7B: tensor=8 >= 4x one GPU at 8 samples; its collectives > 0"

# 2: the heads (24) and widths split evenly or not at all: tensor=5 and
# tensor=16 refused with Megatron's reason
for t in 5 16; do
	# shellcheck disable=SC2086
	run "$gpt" $common -g $t --grid tensor=$t
	want_status 0
	[ "$(get "$tmp/out" 'k["feasible"]')" = False ] || fail "tensor=$t feasible"
	has out "do not divide evenly over the tensor-parallel GPUs"
done
check "tensor=5 and tensor=16 of 24 heads: refused, the heads do not divide"

# 3: a model without attention: nothing Megatron splits, and tensor is
# analysed only when asked for
run "$srcdir/examples/alexnet.odl" -g 4 -q -f json --strategies tensor
want_status 0
has out "no layer that Megatron's tensor parallelism splits"
run "$srcdir/examples/alexnet.odl" -g 4 -q -f json
want_status 0
[ "$(get "$tmp/out" '[s["name"] for s in d["strategies"] if s["name"] in ("tensor", "dt", "dpt")]')" = "[]" ] ||
	fail "AlexNet analysed with tensor parallelism unasked"
check "AlexNet: tensor refused when asked, not analysed otherwise"

# 4: sequence parallelism keeps 1/t of every layer's activations
# (Korthikanti et al. 2022, eq. 4) and moves the same bytes as
# reduce-scatters and all-gathers
# shellcheck disable=SC2086
run "$gpt" $common -g 8 --grid tensor=8 --sequence-parallel
want_status 0
cp "$tmp/out" "$tmp/sp.json"
"$py" - "$tmp/t8.json" "$tmp/sp.json" >"$tmp/why" 2>&1 <<'PY' || fail "$(cat "$tmp/why")"
import json, sys
t8, sp = (json.load(open(p))["strategies"][0] for p in sys.argv[1:3])
assert sp["feasible"], sp["reason"]
assert sp["memory"]["activations"] < t8["memory"]["activations"], (sp["memory"], t8["memory"])
assert sp["iteration"]["layer_collectives_s"] > 0
PY
check "--sequence-parallel: fewer activation bytes a GPU, collectives still priced"

# 5: the same grid under every nesting that places it alike: a pipeline
# of one stage places each rank where model-inner does
for nest in pipeline-outer model-inner; do
	# shellcheck disable=SC2086
	run "$gpt" $common -g 16 -B 16 --grid data=2,pipeline=1,tensor=8 --nesting $nest
	want_status 0
	cp "$tmp/out" "$tmp/$nest.json"
done
a=$(get "$tmp/pipeline-outer.json" 'k["iteration"]["total_s"]')
b=$(get "$tmp/model-inner.json" 'k["iteration"]["total_s"]')
[ "$a" = "$b" ] || fail "pipeline-outer $a s, model-inner $b s"
check "data=2,pipeline=1,tensor=8: pipeline-outer priced as model-inner ($a s)"

# 6: --plan megatron sizes the tensor group from the grid and passes
# --sequence-parallel (arguments.py drops it where tp = 1)
run "$gpt" -s dgx-a100 -B 8 --precision amp-bf16 -g 8 --grid tensor=8 --sequence-parallel \
	-q --plan megatron -o "$tmp/p.megatron"
want_status 0
grep -q -- '--tensor-model-parallel-size 8$' "$tmp/p.megatron" || fail "no tensor size 8"
grep -q -- '--sequence-parallel$' "$tmp/p.megatron" || fail "no --sequence-parallel"
run "$gpt" -s dgx-a100 -B 8 --precision amp-bf16 -g 8 --grid data=8 --sequence-parallel \
	-q --plan megatron -o "$tmp/q.megatron"
want_status 0
grep -q -- '--sequence-parallel$' "$tmp/q.megatron" && fail "--sequence-parallel with tp = 1"
grep -q -- '--tensor-model-parallel-size 1$' "$tmp/q.megatron" || fail "tensor size not 1"
check "--plan megatron: --tensor-model-parallel-size 8 and --sequence-parallel; none at tp 1"

# 7: gradient accumulation in every strategy: --micro-batches 4 runs df
# and dt as 4 passes of a quarter of the samples, keeping a quarter of
# the activations (df ignored it before issue 42)
for grid in data=2,filter=4 data=2,tensor=4; do
	for m in 1 4; do
		# shellcheck disable=SC2086
		run "$gpt" $common -g 8 -B 16 --grid $grid --micro-batches $m
		want_status 0
		cp "$tmp/out" "$tmp/m$m.json"
	done
	"$py" - "$tmp/m1.json" "$tmp/m4.json" >"$tmp/why" 2>&1 <<'PY' || fail "$grid: $(cat "$tmp/why")"
import json, sys
a, b = (json.load(open(p))["strategies"][0] for p in sys.argv[1:3])
assert a["feasible"] and b["feasible"], (a["reason"], b["reason"])
x, y = a["memory"]["activations"], b["memory"]["activations"]
assert abs(y - x / 4) <= 1e-6 * x, (x, y)
assert b["iteration"]["compute_s"] >= a["iteration"]["compute_s"], (a["iteration"], b["iteration"])
PY
done
check "--micro-batches 4 under df and dt: a quarter of the activations kept"

# 8: FP8 (Transformer Engine's): on an H100 the linear layers' GEMMs at
# its fp8 peak (1,979 TFLOP/s, bf16's 989 twice), so an iteration is faster
# than bf16's but by less than the GEMMs' share (the attention's products
# stay bf16, the casts cost); refused on an A100, which has no FP8; the
# plan asks Megatron for it
h100="-s dgx-h100 -g 8 --grid tensor=8 -B 8 --recompute every:25 -q"
for p in bf16 fp8; do
	# shellcheck disable=SC2086
	run "$gpt" $h100 -f json --precision $p
	want_status 0
	cp "$tmp/out" "$tmp/$p.json"
done
"$py" - "$tmp/bf16.json" "$tmp/fp8.json" >"$tmp/why" 2>&1 <<'PY' || fail "$(cat "$tmp/why")"
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
assert abs(b["system"]["gpu"]["flops_fp8"] - 1.979e15) < 1e9, b["system"]["gpu"]
x, y = a["strategies"][0]["iteration"]["compute_s"], b["strategies"][0]["iteration"]["compute_s"]
assert b["strategies"][0]["feasible"]
assert x / 2 < y < x, (x, y)
PY
run "$gpt" -s dgx-a100 -g 8 --grid tensor=8 -B 8 --precision fp8 -q
want_status 1
has err "--precision fp8: dgx-a100 (built-in) has no fp8 peak"
# shellcheck disable=SC2086
run "$gpt" $h100 --precision fp8 --plan megatron -o "$tmp/f.megatron"
want_status 0
grep -q -- '--fp8-format hybrid$' "$tmp/f.megatron" || fail "no --fp8-format hybrid"
check "--precision fp8: faster than bf16 on an H100, by less than 2x; refused on an A100"

# 9: a transformer's pipeline cuts between its layers, as Megatron's:
# 24 layers in 4 stages of 6, the embedding with the first, the output
# layer with the last; 32 stages of 24 layers refused
run "$gpt" -s dgx-a100 -g 4 -B 8 --precision amp-bf16 --grid pipeline=4 -q -f json
want_status 0
want="[('wpe', 'h0_5/out'), ('h0_6/ln1', 'h0_11/out'), ('h0_12/ln1', 'h0_17/out'), \
('h0_18/ln1', 'loss')]"
got=$(get "$tmp/out" '[(x["first"], x["last"]) for x in k["stages"]]')
[ "$got" = "$want" ] || fail "stages $got"
run "$gpt" -s dgx-a100 -g 32 -B 32 --precision amp-bf16 --grid pipeline=32 -q -f json
want_status 0
has out "more stages than blocks to cut between"
check "GPT 1.7B in 4 stages: 6 transformer layers each, cut between layers"

# 10: the tied embedding in a pipeline: GPT-2 (tied) in two stages cut
# between its two layers; the last stage keeps the table's copy, whose
# gradient is all-reduced with the first's once a step (no data
# parallelism: that is all the exchange); LLaMA (untied) has none
dec=$srcdir/tests/data/decoders
for m in gpt2 llama; do
	run "$dec/$m.onnx" -s dgx-h100 -g 2 --grid pipeline=2 -B 8 -q -f json
	want_status 0
	cp "$tmp/out" "$tmp/$m.json"
done
[ "$(get "$tmp/gpt2.json" '[x["first"] for x in k["stages"]][1]')" = /h.1/ln_1/ReduceMean ] ||
	fail "GPT-2's second stage does not begin its second layer"
[ "$(get "$tmp/gpt2.json" 'k["iteration"]["gradient_allreduce_s"] > 0')" = True ] ||
	fail "no all-reduce of the tied embedding's gradient"
[ "$(get "$tmp/llama.json" 'k["iteration"]["gradient_allreduce_s"]')" = 0.0 ] ||
	fail "an untied model all-reduces an embedding"
check "GPT-2 in 2 stages: cut between layers, the tied table's gradient all-reduced"

# 11: Megatron keeps a tensor group inside a node: the 1.3 B GPT (16
# heads) at tensor=16 on nodes of 8 GPUs is priced, with the warning
# tensor-spans-nodes and its collectives slower than data=2,tensor=8's;
# data=2,tensor=8 has no warning, nor tensor=8 alone, but the same grid
# nested data-inner (each tensor group strided over two nodes) has it
g13=$srcdir/examples/gpt_1p3b.odl
for gr in tensor=16 data=2,tensor=8 "data=2,tensor=8 --nesting data-inner"; do
	# shellcheck disable=SC2086
	run "$g13" -s dgx-a100 -g 16 -B 32 --precision amp-bf16 -q -f json --grid $gr
	want_status 0
	cp "$tmp/out" "$tmp/span-$(echo "$gr" | tr -c 'a-z0-9\n' _)"
done
spans='[w["message"] for w in d["warnings"] if w["code"] == "tensor-spans-nodes"]'
w16=$(get "$tmp/span-tensor_16" "$spans")
want="['tensor=16 spans 2 nodes (8 of its GPUs on each, of 8): its all-reduces, two a layer"
want="$want each way, go over the network, which Megatron-LM avoids by keeping the"
want="$want tensor-parallel group inside a node']"
[ "$w16" = "$want" ] || fail "tensor=16: $w16"
[ "$(get "$tmp/span-data_2_tensor_8" "$spans")" = "[]" ] || fail "data=2,tensor=8 warned"
w=$(get "$tmp/span-data_2_tensor_8___nesting_data_inner" "$spans")
case $w in *"tensor=8 spans 2 nodes (4 of its GPUs on each, of 8)"*) ;;
*) fail "data-inner: $w" ;; esac
c16=$(get "$tmp/span-tensor_16" 'k["iteration"]["layer_collectives_s"]')
c8=$(get "$tmp/span-data_2_tensor_8" 'k["iteration"]["layer_collectives_s"]')
"$py" -c "import sys; sys.exit(not $c16 > $c8 > 0)" || fail "collectives $c16 s, $c8 s"
check "tensor=16 on nodes of 8: priced over the network, warned tensor-spans-nodes"

# 12: --search varies Megatron's sequence parallelism and selective
# recomputation on a transformer's tensor grids: the 1.3 B GPT at a
# global batch of 64 on 8 GPUs (tensor and dt only) fits only with
# selective recomputation, and sequence parallelism shortens its whole
# layers; the search's first, predicted again under search_settings
# (else oraclec dies), is dt with both, and --plan megatron passes both.
# Both settings are tried: some top configuration lacks sequence
# parallelism.  --sequence-parallel fixes it on every tensor grid; a
# ResNet's search has no such key
impl=$srcdir/validation/megatron-sc21/impl/megatron-2021-local.odl
run "$g13" -s dgx-a100 -g 8 -B 64 --precision amp-bf16 --implementation "$impl" \
	--strategies tensor,dt --search -q -f json
want_status 0
"$py" - "$tmp/out" >"$tmp/why" 2>&1 <<'PY' || fail "$(cat "$tmp/why")"
import json, sys
d = json.load(open(sys.argv[1]))
r, top = d["recommendation"], d["search"]["top"]
assert r["from"] == "search" and r["strategy"] == "dt", r
assert r["sequence_parallel"] is True and r["recompute"] == "selective", r
assert r["epoch_s"] == top[0]["epoch_s"], (r, top[0])
assert any(c["sequence_parallel"] is False for c in top), top
PY
run "$g13" -s dgx-a100 -g 8 -B 64 --precision amp-bf16 --implementation "$impl" \
	--strategies tensor,dt --search -q --plan megatron -o "$tmp/s.megatron"
want_status 0
grep -q -- '--sequence-parallel$' "$tmp/s.megatron" || fail "the plan lacks --sequence-parallel"
grep -q -- '--recompute-granularity selective$' "$tmp/s.megatron" ||
	fail "the plan lacks --recompute-granularity selective"
run "$g13" -s dgx-a100 -g 8 -B 64 --precision amp-bf16 --implementation "$impl" \
	--strategies tensor,dt --search --sequence-parallel -q -f json
want_status 0
[ "$(get "$tmp/out" 'sorted({c["sequence_parallel"] for c in d["search"]["top"]})')" = \
	"[True]" ] || fail "--sequence-parallel not kept by the search"
run "$srcdir/examples/resnet50.odl" -s dgx-a100 -g 8 --search -q -f json
want_status 0
[ "$(get "$tmp/out" '[c for c in d["search"]["top"] if "sequence_parallel" in c]')" = "[]" ] ||
	fail "a ResNet's search has sequence_parallel"
check "--search: sequence parallelism and selective recomputation on a GPT's tensor grids"

# 13: where the GPUs have an FP8 peak, a search asked at a 16-bit
# precision on a transformer also tries fp8 (under a stack that runs it:
# Megatron-LM with Transformer Engine, written here): the 1.3 B GPT on 8
# GPUs of a DGX H100 picks fp8, the text says so; on a DGX A100 (no fp8
# peak) fp8 is never tried
cat >"$tmp/te.odl" <<'ODL'
implementation megatron_te {
    base = "pytorch";
    framework = "Megatron-LM with Transformer Engine";
    precisions = "amp-fp16,amp-bf16,fp16,bf16,fp8";
    strategies = "data,pipeline,dp,tensor,dt,dpt";
}
ODL
for s in dgx-h100 dgx-a100; do
	run "$g13" -s $s -g 8 -B 64 --precision amp-bf16 --implementation "$tmp/te.odl" \
		--strategies tensor,dt --search -q -f json
	want_status 0
	cp "$tmp/out" "$tmp/fp8-$s.json"
done
[ "$(get "$tmp/fp8-dgx-h100.json" 'd["recommendation"]["precision"]')" = fp8 ] ||
	fail "dgx-h100: the search did not pick fp8"
# the given precision's configurations are evaluated too: more than on the A100
eh=$(get "$tmp/fp8-dgx-h100.json" 'd["search"]["evaluated"]')
ea=$(get "$tmp/fp8-dgx-a100.json" 'd["search"]["evaluated"]')
[ "$eh" -gt "$ea" ] || fail "dgx-h100 evaluated $eh configurations, dgx-a100 $ea"
[ "$(get "$tmp/fp8-dgx-a100.json" 'sorted({c["precision"] for c in d["search"]["top"]})')" = \
	"['amp-bf16']" ] || fail "dgx-a100: fp8 tried"
run "$g13" -s dgx-h100 -g 8 -B 64 --precision amp-bf16 --implementation "$tmp/te.odl" \
	--strategies tensor,dt --search -q
want_status 0
has out "recommendation (the search's best, below): use dt parallelism (data=4,tensor=2), fp8,"
check "--search at amp-bf16: fp8 tried and picked on dgx-h100, never on dgx-a100"

# 14: the search keeps tensor groups inside a node: on 16 GPUs of nodes
# of 8 it evaluates no grid of tensor=16 (tensor alone has none left)
# and proposes none above 8; an explicit --grid tensor=16 is still
# priced, with its warning (case 11)
for st in tensor tensor,dt; do
	run "$g13" -s dgx-a100 -g 16 -B 32 --precision amp-bf16 --implementation "$tmp/te.odl" \
		--strategies $st --search -q -f json
	want_status 0
	cp "$tmp/out" "$tmp/node-$st.json"
done
[ "$(get "$tmp/node-tensor.json" 'd["search"]["evaluated"]')" = 0 ] ||
	fail "the search evaluated tensor=16"
[ "$(get "$tmp/node-tensor,dt.json" \
	'0 < max([c["grid"]["tensor"] for c in d["search"]["top"]] + [0]) <= 8')" = True ] ||
	fail "the search proposed a tensor group above a node"
check "--search on 16 GPUs of nodes of 8: no tensor group above 8 proposed"

# 15: Megatron's context parallelism: the 1.7 B GPT's 2,048 tokens over
# rings of 2 and 4 GPUs at the same global batch of 8 (the sequence
# split, data=1): each GPU keeps 1/2 and 1/4 of the one GPU's activation
# bytes, the iteration shortens with the GPUs (compute dominates), the
# weights' gradients are all-reduced over the ring (none on one GPU).
# Inside a node a step's K/V send (75 MB at context=2 over NVSwitch)
# hides behind its block's attention: context_ring_s is 0; at
# context=16 the ring crosses the network between two nodes and shows
# (> 0, within p2p_s)
for c in 1 2 4 16; do
	# shellcheck disable=SC2086
	run "$gpt" $common -g $c --grid data=1,context=$c
	want_status 0
	cp "$tmp/out" "$tmp/cp$c.json"
done
"$py" - "$tmp/cp1.json" "$tmp/cp2.json" "$tmp/cp4.json" "$tmp/cp16.json" >"$tmp/why" 2>&1 <<'PY' ||
import json, sys
c1, c2, c4, c16 = (json.load(open(p))["strategies"][0] for p in sys.argv[1:5])
for k in (c1, c2, c4, c16):
    assert k["name"] == "dc" and k["feasible"] and k["global_batch"] == 8, k["reason"]
a1 = c1["memory"]["activations"]
for k, c in ((c2, 2), (c4, 4), (c16, 16)):
    a = k["memory"]["activations"]
    assert abs(a * c - a1) <= 1e-9 * a1, (c, a, a1)
t = [k["iteration"]["total_s"] for k in (c1, c2, c4)]
assert t[0] > t[1] > t[2], t
assert "context_ring_s" not in c1["iteration"], c1["iteration"]
assert c1["iteration"]["gradient_allreduce_s"] == 0, c1["iteration"]
assert c2["iteration"]["gradient_allreduce_s"] > 0, c2["iteration"]
assert c2["iteration"]["context_ring_s"] == 0 == c4["iteration"]["context_ring_s"]
r = c16["iteration"]["context_ring_s"]
assert 0 < r <= c16["iteration"]["p2p_s"], c16["iteration"]
PY
	fail "$(cat "$tmp/why")"
check "context=2, 4, 16: activations 1/2, 1/4, 1/16; faster; the ring hidden in a node, not across"

# 16: --plan megatron passes the context size (and no spatial one), the
# data-parallel size what remains; a model without attention refuses
# --grid context with exit 2, the reason, and nothing on stdout
run "$gpt" -s dgx-a100 -g 8 -B 8 --precision amp-bf16 --grid data=2,tensor=2,context=2 -q \
	--plan megatron -o "$tmp/cp.megatron"
want_status 0
for f in "--context-parallel-size 2" "--tensor-model-parallel-size 2"; do
	grep -Fqx "	$f" "$tmp/cp.megatron" || fail "the plan lacks $f"
done
grep -Fqx "# data-parallel size: 2" "$tmp/cp.megatron" || fail "not 2 data-parallel"
# tensor=8 fills a node, its rings of 2 cross between two: the tensor
# groups stay inside a node, no tensor-spans-nodes
# shellcheck disable=SC2086
run "$gpt" $common -g 16 --grid data=1,tensor=8,context=2
want_status 0
[ "$(get "$tmp/out" "$spans")" = "[]" ] || fail "tensor=8,context=2 warned tensor-spans-nodes"
run "$srcdir/examples/alexnet.odl" -g 2 --grid data=1,context=2
want_status 2
has err "error: --grid context=2: context parallelism splits a transformer's sequence over"
has err "the model has no attention"
empty out
check "context: Megatron's --context-parallel-size; rings across nodes, tensor inside; AlexNet refuses it (exit 2)"

# 17: dptc, all four of Megatron-Core's dimensions: the 1.7 B GPT's
# pipeline of 2 stages of tensor=2 x context=2, 2 replicas, on 16 GPUs,
# against dpt's same pipeline without the rings on 8 at the same global
# batch and micro-batches (so the same 2 samples a micro-batch): each
# GPU keeps half the activations (s/2 of each sequence), its stage
# boundary sends are smaller, the ring is priced (hidden inside a node).
# dpt on data=4 at micro-batches of 1 sample sends exactly what dptc's
# s/2 of 2 samples does: the same p2p time.  A ring of 16 written with
# pipeline=1 (dtc's grid then, test 20) across two nodes prices the ring
# exactly as dc's.  data=1 is
# accepted; --plan megatron writes the four sizes; 8 GPUs have no four
# factors above 1
cp4="-s dgx-a100 -B 16 --micro-batches 4 --precision amp-bf16 --optimizer adamw
	--data synthetic --nesting pipeline-outer -q -f json"
# shellcheck disable=SC2086
run "$gpt" $cp4 -g 16 --grid data=2,pipeline=2,tensor=2,context=2
want_status 0
cp "$tmp/out" "$tmp/dptc.json"
# shellcheck disable=SC2086
run "$gpt" $cp4 -g 8 --grid data=2,pipeline=2,tensor=2
want_status 0
cp "$tmp/out" "$tmp/dpt.json"
# shellcheck disable=SC2086
run "$gpt" $cp4 -g 16 --grid data=4,pipeline=2,tensor=2
want_status 0
cp "$tmp/out" "$tmp/dpt4.json"
ring="-s dgx-a100 -B 8 --micro-batches 2 --precision amp-bf16 --data synthetic -q -f json -g 16"
# shellcheck disable=SC2086
run "$gpt" $ring --grid data=1,pipeline=1,tensor=1,context=16
want_status 0
cp "$tmp/out" "$tmp/ring1.json"
# shellcheck disable=SC2086
run "$gpt" $ring --grid data=1,context=16
want_status 0
"$py" - "$tmp/dptc.json" "$tmp/dpt.json" "$tmp/dpt4.json" "$tmp/ring1.json" "$tmp/out" \
	>"$tmp/why" 2>&1 <<'PY' || fail "$(cat "$tmp/why")"
import json, sys
c, t, t4, r1, dc = (json.load(open(p))["strategies"][0] for p in sys.argv[1:6])
assert c["name"] == "dptc" and c["feasible"], c["reason"]
assert c["grid"] == {"data": 2, "pipeline": 2, "tensor": 2, "context": 2}, c["grid"]
assert t["name"] == "dpt" and t["micro_batches"] == c["micro_batches"] == 4
a, b = c["memory"]["activations"], t["memory"]["activations"]
assert abs(2 * a - b) <= 1e-9 * b, (a, b)
assert [s["last"] for s in c["stages"]] == [s["last"] for s in t["stages"]]
ci, ti = c["iteration"], t["iteration"]
assert 0 < ci["p2p_s"] < ti["p2p_s"], (ci, ti)
assert ci["context_ring_s"] == 0 and "context_ring_s" not in ti, (ci, ti)
assert ci["gradient_allreduce_s"] > 0, ci
assert t4["iteration"]["p2p_s"] == ci["p2p_s"], (t4["iteration"], ci)
assert r1["name"] == "dtc" and dc["name"] == "dc"  # pipeline=1 names no pipeline
ri, di = r1["iteration"], dc["iteration"]
assert ri["context_ring_s"] > 0 and ri["context_ring_s"] == di["context_ring_s"], (ri, di)
assert ri["compute_s"] == di["compute_s"], (ri, di)
PY
run "$gpt" -s dgx-a100 -g 8 -B 8 --precision amp-bf16 --grid data=1,pipeline=2,tensor=2,context=2 \
	-q -f json
want_status 0
[ "$(get "$tmp/out" 'k["name"], k["grid"]')" = \
	"('dptc', {'pipeline': 2, 'tensor': 2, 'context': 2})" ] || fail "data=1 not dptc's"
run "$gpt" -s dgx-a100 -g 16 -B 16 --precision amp-bf16 --grid data=2,pipeline=2,tensor=2,context=2 \
	-q --plan megatron -o "$tmp/dptc.megatron"
want_status 0
for f in "--context-parallel-size 2" "--tensor-model-parallel-size 2" \
	"--pipeline-model-parallel-size 2"; do
	grep -Fqx "	$f" "$tmp/dptc.megatron" || fail "the plan lacks $f"
done
grep -Fqx "# data-parallel size: 2" "$tmp/dptc.megatron" || fail "not 2 data-parallel"
run "$gpt" -s dgx-a100 -g 8 --strategies dptc -q -f json
want_status 0
[ "$(get "$tmp/out" 'k["reason"]')" = "needs four factors above 1 (p = p1 x p2 x p3 x p4)" ] ||
	fail "dptc on 8 GPUs: $(get "$tmp/out" 'k["reason"]')"
check "dptc: activations and stage sends 1/2 of dpt's at context=2; the ring as dc's; Megatron's four sizes"

# 18: the search explores context parallelism on a transformer where the
# stack runs it (issue 42.5), without --strategies naming it: the 1.3 B
# GPT on 64 H100s at 16 samples (fewer samples than GPUs) ranks dtc grids
# among its best; under the megatron_te stack above (no context) none
cat >"$tmp/cp.odl" <<'ODL'
implementation megatron_core {
    base = "pytorch-2";
    strategies = "data,pipeline,dp,tensor,dt,dpt,context,dc,dtc,dptc";
}
ODL
for im in cp te; do
	run "$g13" -s dgx-h100 -g 64 -B 16 --precision amp-bf16 --implementation "$tmp/$im.odl" \
		--search -q -f json
	want_status 0
	cp "$tmp/out" "$tmp/search-$im.json"
done
[ "$(get "$tmp/search-cp.json" \
	'any(c["strategy"] in ("dc", "dtc", "dptc") for c in d["search"]["top"])')" = True ] ||
	fail "no context grid among the search's best under a stack that runs it"
[ "$(get "$tmp/search-te.json" \
	'any("context" in c["grid"] for c in d["search"]["top"])')" = False ] ||
	fail "a context grid under a stack that does not run it"
check "--search tries context parallelism where the stack runs it, unnamed; never where it does not"

# 19: a strategy's max_gpus is its model-parallel dimensions' limits
# multiplied: tensor the fewest heads or features a layer splits (16),
# context half the sequence (2,048 tokens in 2 x C chunks:
# 1,024), the pipeline its 24 layers, data the global batch (64)
run "$g13" -s dgx-a100 -g 64 -B 64 --precision amp-bf16 --strategies dt,dpt,context,dc,dtc,dptc \
	-q -f json
want_status 0
[ "$("$py" -c 'import json, sys
d = json.load(open(sys.argv[1]))
print(" ".join("%s:%d" % (k["name"], k["max_gpus"]) for k in d["strategies"]))' "$tmp/out")" = \
	"dt:16 dpt:24576 context:1024 dc:1024 dtc:16384 dptc:25165824" ] ||
	fail "max_gpus: $(cat "$tmp/out" | head -c 300)"
run "$gpt" -s dgx-a100 -g 16 -B 16 --precision amp-bf16 --grid data=2,pipeline=2,tensor=2,context=2
want_status 0
# the text's grid column widens to dptc's 37 characters: the header's
# "fits" stands above the row's "yes"
"$py" -c 'import sys
lines = open(sys.argv[1]).read().split("\n")
head = next(l for l in lines if l.startswith("strategy  grid"))
row = next(l for l in lines if l.startswith("dptc "))
assert "data=2,pipeline=2,tensor=2,context=2* yes" in row, row
assert head.index("fits") == row.index(" yes") + 1, (head, row)' "$tmp/out" ||
	fail "the grid column does not hold dptc's grid"
check "max_gpus: context's limit is half the sequence, multiplied with tensor's and the pipeline's; the text's grid column holds dptc's grid"

# 20: pipeline=1 beside other dimensions names no pipeline: the grid is
# the others' (data, dt, dtc), priced the same as written without it; dpc,
# which nothing without a pipeline covers, keeps its one stage, whose
# exchange is data's, bucketed and overlapped with the backward
same_as()
{
	run "$1" -s dgx-a100 -g 8 "$2" "$3" --precision amp-bf16 --grid "$4" -q -f json
	want_status 0
	cp "$tmp/out" "$tmp/one.json"
	run "$1" -s dgx-a100 -g 8 "$2" "$3" --precision amp-bf16 --grid "$5" -q -f json
	want_status 0
	"$py" - "$tmp/one.json" "$tmp/out" "$6" <<'PY' >"$tmp/py" 2>&1 || fail "$4: $(cat "$tmp/py")"
import json, sys
a, b = (json.load(open(f))["strategies"][0] for f in sys.argv[1:3])
assert a["name"] == b["name"] == sys.argv[3], (a["name"], b["name"])
assert a["grid"] == b["grid"] and "pipeline" not in a["grid"], (a["grid"], b["grid"])
assert a["iteration"] == b["iteration"] and a["memory"] == b["memory"]
assert b["iteration"]["overlapped_communication_s"] > 0, b["iteration"]
PY
}
same_as "$srcdir/examples/resnet50.onnx" -b 64 data=8,pipeline=1 data=8 data
same_as "$gpt" -B 8 data=4,pipeline=1,tensor=2 data=4,tensor=2 dt
same_as "$gpt" -B 8 data=2,pipeline=1,tensor=2,context=2 data=2,tensor=2,context=2 dtc
run "$srcdir/examples/resnet50.onnx" -s dgx-a100 -g 8 -b 64 --grid data=4,pipeline=1,channel=2 \
	-q -f json
want_status 0
"$py" - "$tmp/out" <<'PY' >"$tmp/py" 2>&1 || fail "dpc: $(cat "$tmp/py")"
import json, sys
k = json.load(open(sys.argv[1]))["strategies"][0]
assert k["name"] == "dpc" and k["grid"] == {"data": 4, "pipeline": 1, "channel": 2}, k["grid"]
it = k["iteration"]
assert it["overlapped_communication_s"] > 0 and it["bubble_s"] == 0, it
PY
check "pipeline=1 names no pipeline: data, dt and dtc as written without it, time and memory alike; dpc's one stage overlaps its exchange"

finish
