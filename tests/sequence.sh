#!/bin/sh
# sequence.sh -- a sequence model's tokens from the command line (issue
# 41): --seq-len and --dataset-tokens, the epoch of a sequence model, the
# tokens per second of every strategy, the standard count of a
# transformer's FLOPs (Narayanan et al. 2021, eq. 3) and its MFU.  The
# JSON is read by python3 (standard library); without it those cases are
# skipped.
. "${srcdir:=.}/tests/tap.sh"
tap_begin sequence
tap_python "import json" "python3 not found"

dec=$srcdir/tests/data/decoders
gpt=$dec/gpt2.onnx

# get FILE EXPR: a value of the JSON, python3's repr (d is the document)
get()
{
	"$py" -c 'import json, sys; d = json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' \
		"$1" "$2"
}

# 1: tokens per second are samples per second times the sequence, for
# every strategy with times; the epoch of a sequence model is GPT-3's 300
# billion tokens over its 32
run "$gpt" -g 8 -f json -q
want_status 0
cp "$tmp/out" "$tmp/a.json"
"$py" - "$tmp/a.json" >"$tmp/why" 2>&1 <<'PY' || fail "$(cat "$tmp/why")"
import json, sys
d = json.load(open(sys.argv[1]))
s = d["model"]["transformer"]["seq_len"]
assert s == 32, s
n = 0
for k in d["strategies"]:
    if k["throughput_samples_per_s"] is None:
        assert k["throughput_tokens_per_s"] is None, k["name"]
        continue
    t, x = k["throughput_tokens_per_s"], k["throughput_samples_per_s"] * s
    assert abs(t - x) <= 1e-9 * x, (k["name"], t, x)
    n += 1
assert n >= 5, n
assert d["batch"]["dataset_size"] == 300 * 10**9 // 32, d["batch"]
PY
check "tokens/s = samples/s x 32 for every strategy with times; 9,375,000,000 samples an epoch"

# 2: the standard count: 72 s l h^2 (1 + s/6h + V/12lh) from the
# dimensions the model gives, and the MFU by it over mfu's peak
"$py" - "$tmp/a.json" >"$tmp/why" 2>&1 <<'PY' || fail "$(cat "$tmp/why")"
import json, sys
d = json.load(open(sys.argv[1]))
t = d["model"]["transformer"]
s, l, h, V = t["seq_len"], t["layers"], t["hidden"], t["vocab"]
F = 72 * s * l * h * h * (1 + s / (6 * h) + V / (12 * l * h))
assert abs(t["flops_per_sample"] - F) <= 1e-9 * F, (t["flops_per_sample"], F)
assert round(F) == 6291456, F
# the same peak: the two MFUs are as the two counts
layers = d["model"]["flops_fwd_per_sample"] + d["model"]["flops_bwd_per_sample"]
for k in d["strategies"]:
    if not k["mfu"]:
        continue
    r = k["mfu_standard"] / k["mfu"]
    assert abs(r - F / layers) <= 1e-9 * r, (k["name"], r, F / layers)
PY
check "flops_per_sample = 72 s l h^2 (1 + s/6h + V/12lh) = 6,291,456; mfu_standard by it"

# 3: --dataset-tokens: an epoch of N tokens is N / s samples
run "$gpt" -g 1 -f json -q --dataset-tokens 3200
want_status 0
[ "$(get "$tmp/out" 'd["batch"]["dataset_size"]')" = 100 ] ||
	fail "dataset_size $(get "$tmp/out" 'd["batch"]["dataset_size"]'), want 100"
check "--dataset-tokens 3200 on 32 tokens a sample: 100 samples an epoch"

# 4: --dataset-tokens on a model without a sequence: an error naming it
run "$srcdir/examples/resnet50.odl" -g 1 --dataset-tokens 1000
want_status 1
has err "--dataset-tokens: the model has no sequence input"
has err "resnet50.odl"
check "--dataset-tokens on ResNet-50: exit 1, the model has no sequence"

# 5: the epoch given twice: a usage error
run "$gpt" --dataset-size 10 --dataset-tokens 3200
want_status 2
has err "--dataset-size and --dataset-tokens both give the epoch"
check "--dataset-size with --dataset-tokens: exit 2"

# 6: --seq-len against the model's own sequence: a usage error, the input
# named
run "$gpt" --seq-len 64
want_status 2
has err "--seq-len 64: the model's sequence input 'ids' is of 32 tokens"
check "--seq-len 64 on a model of 32 tokens: exit 2"

# 7: --seq-len fills a symbolic sequence (gpt_seq: ids [N, S]); without it
# the message says so
run "$dec/gpt_seq.onnx" -g 1
want_status 1
has err "(or the sequence's length with --seq-len)"
check "gpt_seq without --seq-len: exit 1, --seq-len named"
run "$dec/gpt_seq.onnx" -g 1 --seq-len 16 -f json -q
want_status 0
[ "$(get "$tmp/out" 'd["model"]["transformer"]["seq_len"]')" = 16 ] || fail "not 16 tokens"
[ "$(get "$tmp/out" 'd["model"]["inputs"][0]["shape"]')" = "[16]" ] || fail "input not [16]"
check "gpt_seq --seq-len 16: a sequence of 16 tokens"

# 8: an ODL model without `as tokens` is a sequence model with --seq-len;
# sample bytes: 16-bit ids (a vocabulary below 65,500: Megatron-LM's
# uint16); without it, no sequence
tiny=$srcdir/tests/data/sequence/gpt_tiny.odl
run "$tiny" -g 1 -f json -q --seq-len 16
want_status 0
[ "$(get "$tmp/out" 'd["batch"]["sample_bytes"]')" = 32.0 ] ||
	fail "sample_bytes $(get "$tmp/out" 'd["batch"]["sample_bytes"]'), want 32 (16 x 2)"
[ "$(get "$tmp/out" 'd["model"]["transformer"]["layers"]')" = 2 ] || fail "not 2 layers"
run "$tiny" -g 1 -f json -q
want_status 0
[ "$(get "$tmp/out" '"transformer" in d["model"]')" = False ] || fail "a sequence without --seq-len"
check "--seq-len 16 on an ODL GPT: 16 tokens of 2 bytes a sample; none without"

# 8b: --seq-len that no input of positions by features begins with: a
# usage error, not a model priced over 16 positions and counted as 64 (its
# epoch and tokens per second four times off), nor an image's 3 channels
# or a vector's features counted as tokens (--seq-len 3 on ResNet-50 was
# accepted: its input begins with 3)
run "$tiny" -g 1 -q --seq-len 64
want_status 2
empty out
has err "--seq-len 64: the model has no sequence input, and no input of 64 positions to take as one (input 'x' begins with 16)"
for s in 3 64; do
	run "$srcdir/examples/resnet50.onnx" -g 1 -q --seq-len $s
	want_status 2
	empty out
	has err "resnet50.onnx: error: --seq-len $s: the model has no sequence input, and no input of positions by features to take as one (input 'input' is 3x224x224: an image's or a volume's channels and sides)"
done
printf 'model mlp { input v: 784; h = fc(v, 64); r = relu(h); o = fc(r, 10); }\n' >"$tmp/mlp.odl"
run "$tmp/mlp.odl" -g 1 -q --seq-len 784
want_status 2
empty out
has err "(input 'v' is 784: a vector of features)"
check "--seq-len 64 on an ODL GPT of 16 positions, 3 and 64 on ResNet-50, 784 on an MLP of 784 features: exit 2, the input named"

# 9: the text names the formula and the tokens of the recommendation
run "$gpt" -g 1
want_status 0
has out "FLOPs (std)  6.29 M per sample, forward and backward: 72 s l h^2 (1 + s/6h + V/12lh)"
has out "tokens: "
has out "by the standard count (Narayanan et al. 2021, eq. 3)"
check "the text: the standard count's formula, tokens per second"

finish
