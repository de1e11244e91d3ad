#!/bin/sh
# autocast.sh -- what autograd keeps under torch.autocast, oraclec against
# PyTorch: for every model file here with a reference in
# tests/data/autograd/reference.tsv (CPU bf16 autocast, torch 1.13), the
# JSON report of `--precision amp-bf16` must give the bytes saved per
# sample (model.saved_amp_bytes_per_sample) and the batch-independent
# bytes (saved_fixed_bytes + autocast_weight_bytes: batch norm statistics
# and the 16-bit weight copies autocast caches) within 3 %.
#
# oraclec applies CUDA's autocast lists; the reference had CPU's.  They
# agree for convolutional networks; where they differ (softmax and
# layer_norm: fp32 on CUDA, input type on CPU) the case is a TODO with
# the reason, as are the models whose export lost layers the reference
# has (tests/autograd.sh).  Needs jq; skips without it.
. "${srcdir:=.}/tests/tap.sh"
tap_begin autocast
ref=$srcdir/tests/data/autograd/reference.tsv
if ! command -v jq >/dev/null 2>&1; then
	echo "1..0 # SKIP jq is not installed (./bootstrap --tests installs it)"
	exit 0
fi

# why a model is a TODO: the reference measured something this file lacks
todo() {
	case $1 in
	vit_b_16) echo "softmax is fp32 under CUDA autocast, bf16 under CPU's (the reference)" ;;
	googlenet|inception_v3) echo "fixed bytes: the export dropped the auxiliary heads" ;;
	esac
}

for f in "$srcdir"/examples/*.onnx "$srcdir"/tests/data/onnx/*.onnx \
	"$srcdir"/tests/data/zoo/*.onnx "$srcdir"/tests/data/zoo/*.onnx.gz; do
	[ -f "$f" ] || continue
	b=${f##*/} b=${b%.gz} b=${b%.onnx}
	name=$(echo "$b" | sed 's/_keepbn$//; s/_b[0-9]*$//')
	awk -F'\t' -v n="$name" -v f="$f" '$1 == n && $9 != "NA" { print n, f, $9, $10 }' "$ref"
done >"$tmp/cases"

echo "1..$(wc -l <"$tmp/cases")"
n=0 bad=0
while read -r name f want wantfix; do
	n=$((n + 1))
	case $f in
	*.gz) gzip -dc "$f" >"$tmp/model.onnx"; model=$tmp/model.onnx ;;
	*) model=$f ;;
	esac
	if ! "$ORACLEC" -q -s dgx-a100 --precision amp-bf16 -f json "$model" >"$tmp/json" 2>"$tmp/err"
	then
		bad=$((bad + 1))
		echo "not ok $n - $name: oraclec failed"
		sed 's/^/# /' "$tmp/err"
		continue
	fi
	set -- $(jq -r '.model | "\(.saved_amp_bytes_per_sample) \(.saved_fixed_bytes + .autocast_weight_bytes)"' "$tmp/json")
	line=$(awk -v n="$name (${f#"$srcdir"/})" -v g="$1" -v w="$want" -v gf="$2" -v wf="$wantfix" 'BEGIN {
		r = g / w; rf = wf ? gf / wf : (gf ? 9 : 1)
		ok = r >= 0.97 && r <= 1.03 && rf >= 0.97 && rf <= 1.03
		printf "%s %s: per sample %d vs autograd %d (%.4f), fixed %d vs %d (%.4f)\n",
			ok ? "ok" : "bad", n, g, w, r, gf, wf, rf }')
	why=$(todo "$name")
	case $line in
	ok*) echo "ok $n - ${line#ok }" ;;
	*) if [ -n "$why" ]; then
		echo "not ok $n - ${line#bad } # TODO $why"
	   else
		bad=$((bad + 1))
		echo "not ok $n - ${line#bad } (want within 3 %)"
	   fi ;;
	esac
done <"$tmp/cases"
[ "$bad" -eq 0 ]
