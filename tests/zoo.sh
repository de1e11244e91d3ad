#!/bin/sh
# zoo.sh -- torchvision's classification and video models (tests/data/zoo,
# made by tools/export_zoo.py) against PyTorch's own counts and ONNX's own
# shape inference, and the decoders written in tools/export_decoders.py
# (tests/data/decoders: a GPT-2, the same GPT masked by torch.where, a
# LLaMA-style model, a BERT encoder, the GPT with a symbolic sequence
# that --seq-len fills).  Per model, three TAP cases:
#   counts  params == file_params (the float initializers, BN running
#           statistics left out), or PyTorch's params where oraclec
#           restores the BatchNormalization the export folded, and MACs == macs_aten (every convolution
#           and matrix product PyTorch ran, attention included); for the
#           files that fix the batch (NAME_bB), the same per-sample counts
#           and the batch B reported; a decoder: PyTorch's params (its
#           tied table's copy counted once, its masks and inv_freq not),
#           and buffers == file_buffers (the masks and inv_freq as the
#           file holds them: PyTorch's buffers after the exporter's
#           merges and folds, its integer ones left out);
#   shapes  every activation shape ONNX's inference found equals oraclec's
#           per-sample shape (the N left out);
#   all     every activation of the graph (NAME.shapes.tsv, kind "act")
#           has an IR tensor with a shape, although ONNX leaves hundreds
#           of them unknown on ViT, Swin and ShuffleNet;
# and three more per decoder:
#   tokens  the token ids are the model's sequence, of its length;
#   dimensions  JSON model.transformer gives the module's dimensions
#           (layers, hidden, heads, ffn, sequence, vocabulary) and what it
#           was written with (key/value groups, the norm, SwiGLU, the
#           positions, a tied output layer);
#   megatron  --plan megatron on a pipeline of two finds its attentions
#           and its layers: --pipeline-model-parallel-layout 'Et|tL' for
#           the two transformer layers, and the model's flags.
. "${srcdir:=.}/tests/tap.sh"
tap_begin zoo
n=0 bad=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
notok() { n=$((n + 1)); bad=$((bad + 1)); echo "not ok $n - $1"; sed 's/^/# /' "$tmp/why"; }
ref() { sed -n "s/^$1 //p" "$data/$name.ref.txt"; }

models=$(cd "$srcdir/tests/data" && ls zoo/*.ref.txt decoders/*.ref.txt | sed 's/\.ref\.txt$//')
echo "1..$(($(echo "$models" | wc -l) * 3 + $(echo "$models" | grep -c '^decoders/') * 3))"

for path in $models; do
	data=$srcdir/tests/data/${path%/*} name=${path#*/}
	# the larger exports are committed gzipped
	for f in onnx shapes.tsv; do
		if [ -f "$data/$name.$f.gz" ]; then
			gzip -dc "$data/$name.$f.gz" >"$tmp/$name.$f"
		else
			cp "$data/$name.$f" "$tmp/$name.$f"
		fi
	done
	model=$tmp/$name.onnx
	# a decoder's length (gpt_seq leaves it symbolic: --seq-len fills it)
	seq=$(ref seq)
	set -- ${seq:+--seq-len "$seq"}
	if ! "$ORACLEC" "$model" "$@" -f json >"$tmp/json" 2>"$tmp/why"; then
		notok "$name counts"; notok "$name shapes"; notok "$name all"; continue
	fi
	got_p=$(sed -n 's/^    "params": \([0-9]*\),$/\1/p' "$tmp/json")
	got_m=$(sed -n 's/^    "macs_fwd_per_sample": \([0-9]*\),$/\1/p' "$tmp/json")
	got_b=$(sed -n 's/^    "file_batch": \([0-9a-z]*\),$/\1/p' "$tmp/json")
	got_f=$(sed -n 's/^    "buffers": \([0-9]*\),$/\1/p' "$tmp/json")
	want_p=$(ref file_params) want_m=$(ref macs_aten) want_b=$(ref batch)
	want_f=$(ref file_buffers)
	# a decoder: PyTorch's parameters, the file's buffers
	[ -n "$want_f" ] && want_p=$(ref params)
	# where oraclec restored the BatchNormalization the export folded,
	# PyTorch's params
	grep -q '"training_graph": true' "$tmp/json" && want_p=$(ref params)
	# less GoogLeNet's two auxiliary classifiers, which training runs but
	# the eval-mode export drops: 3,188,968 + 3,191,016 params
	[ "$name" = googlenet ] && want_p=$(($(ref params) - 6379984))
	[ "${want_b:-N}" = N ] && want_b=null
	if [ "$got_p" = "$want_p" ] && [ "$got_m" = "$want_m" ] && [ "$got_b" = "$want_b" ] &&
		[ "${want_f:-$got_f}" = "$got_f" ]; then
		[ -n "$want_f" ] && want_b="$want_b, buffers $want_f (torch: $(ref buffers))"
		ok "$name counts: params $want_p, MACs $want_m, batch $want_b"
	else
		echo "params $got_p (want $want_p), MACs $got_m (want $want_m)," \
			"batch $got_b (want $want_b), buffers $got_f (want ${want_f:-any})" >"$tmp/why"
		notok "$name counts"
	fi

	# tensor -> per-sample shape, from the IR dump after shape inference
	"$ORACLEC" "$model" "$@" --dump-after=shape 2>/dev/null |
		awk '{ for (i = 1; i < NF; i++) if ($i == "->") { split($(i+1), a, ":"); print a[1], a[2] } }' \
		>"$tmp/ours"
	# ONNX's fully known activation shapes with one N, as 64x112x112 (in
	# a file that fixes the batch B, a first dimension of B is the N)
	awk -F'\t' -v b="$want_b" 'NR > 1 && b != "null" { sub("^\\[" b ",", "[N,", $7) }
	    NR > 1 && $9 == "act" && $7 !~ /\?/ && gsub(/N/, "N", $7) == 1 {
			s = $7; gsub(/^\[|\]$/, "", s); k = split(s, d, ",")
			out = ""
			for (i = 1; i <= k; i++) if (d[i] != "N") out = out (out == "" ? "" : "x") d[i]
			print $5, out == "" ? "scalar" : out
		}' "$tmp/$name.shapes.tsv" >"$tmp/onnx"
	awk 'NR == FNR { ours[$1] = $2; next }
	     !($1 in ours) { print "missing: " $1 " " $2; bad++; next }
	     ours[$1] != $2 { print "differs: " $1 " onnx " $2 " oraclec " ours[$1]; bad++ }
	     { total++ }
	     END { if (bad) exit 1; print total + 0 > "/dev/stderr" }' \
		"$tmp/ours" "$tmp/onnx" >"$tmp/why" 2>"$tmp/count"
	if [ $? -eq 0 ]; then
		ok "$name shapes: $(cat "$tmp/count") activations equal to ONNX's"
	else
		notok "$name shapes"
	fi

	awk -F'\t' 'NR > 1 && $9 == "act" { print $5, $7 }' "$tmp/$name.shapes.tsv" >"$tmp/acts"
	awk 'NR == FNR { ours[$1] = $2; next }
	     !($1 in ours) || ours[$1] == "" { print "no shape: " $1; bad++; next }
	     $2 ~ /\?/ { unknown++ }
	     { total++ }
	     END { if (bad) exit 1; print total + 0, unknown + 0 > "/dev/stderr" }' \
		"$tmp/ours" "$tmp/acts" >"$tmp/why" 2>"$tmp/count"
	if [ $? -eq 0 ]; then
		read -r total unknown <"$tmp/count"
		ok "$name all: $total activations shaped ($unknown unknown to ONNX)"
	else
		notok "$name all"
	fi
	[ -n "$want_f" ] || continue

	"$ORACLEC" "$model" "$@" --dump-after=parse 2>/dev/null | grep '^input ' >"$tmp/why"
	if grep -qx "input ids: $(ref seq) tokens=$(ref seq)" "$tmp/why" &&
		[ "$(grep -c ' tokens=' "$tmp/why")" = 1 ]; then
		ok "$name tokens: ids, $(ref seq) a sample"
	else
		notok "$name tokens"
	fi
	# the dimensions read from the layers (model.transformer): torch's
	# module's, as tools/export_decoders.py wrote them
	dims=
	for k in layers hidden heads ffn; do
		v=$(sed -n "s/^      \"$k\": \([0-9]*\),\$/\1/p" "$tmp/json")
		[ "$v" = "$(ref $k)" ] || dims="$dims $k $v (torch $(ref $k))"
	done
	v=$(sed -n 's/^      "seq_len": \([0-9]*\),$/\1/p' "$tmp/json")
	[ "$v" = "$(ref seq)" ] || dims="$dims seq $v (torch $(ref seq))"
	v=$(sed -n 's/^      "vocab": \([0-9]*\),$/\1/p' "$tmp/json")
	[ "$v" = "$(ref vocab)" ] || dims="$dims vocab $v (torch $(ref vocab))"
	# what tools/export_decoders.py wrote each module with: LLaMA's
	# RMSNorm, rotary positions, 2 key/value heads for 4, SwiGLU and its
	# own output layer; the GPTs' learned positions and tied output
	case $name in
	llama) want='2 rmsnorm true rope false' ;;
	bert) want='4 layernorm false learned null' ;;
	*) want='4 layernorm false learned true' ;;
	esac
	got=$(sed -n 's/^      "\(kv_groups\|norm\|positions\|swiglu\|tied\)": "*\([a-z0-9]*\)"*,*$/\2/p' \
		"$tmp/json" | tr '\n' ' ')
	[ "$got" = "$want " ] || dims="$dims kv_groups/norm/swiglu/positions/tied $got(want $want)"
	if [ -z "$dims" ]; then
		ok "$name dimensions: $(ref layers) layers, hidden $(ref hidden), $(ref heads) heads, ffn $(ref ffn), sequence $(ref seq), vocabulary $(ref vocab); $want"
	else
		echo "$dims" >"$tmp/why"
		notok "$name dimensions"
	fi
	# the layers split in two: Et|tL for two, Ett|ttL for four
	layers=$(ref layers)
	first=$((layers / 2))
	layout=E$(printf "%${first}s" '' | tr ' ' t)\|$(printf "%$((layers - first))s" '' | tr ' ' t)L
	if "$ORACLEC" "$model" "$@" -g 2 --grid pipeline=2 --plan megatron >"$tmp/plan" \
		2>"$tmp/why" &&
		grep -q -- "--pipeline-model-parallel-layout '$layout'" "$tmp/plan" &&
		grep -qx "	--num-layers $(ref layers)" "$tmp/plan" &&
		grep -qx "	--hidden-size $(ref hidden)" "$tmp/plan" &&
		grep -qx "	--num-attention-heads $(ref heads)" "$tmp/plan" &&
		grep -qx "	--ffn-hidden-size $(ref ffn)" "$tmp/plan" &&
		grep -qx "	--seq-length $(ref seq)" "$tmp/plan"; then
		ok "$name megatron: a transformer of $(ref layers) layers, $layout, its dimensions"
	else
		cat "$tmp/plan" >>"$tmp/why"
		notok "$name megatron"
	fi
done
[ "$bad" -eq 0 ]
