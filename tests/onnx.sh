#!/bin/sh
# onnx.sh -- the torchvision ONNX fixtures against independent references:
# parameters and MACs against reference.csv (PyTorch forward hooks), and
# every activation shape against ONNX's own shape inference (*.shapes.tsv).
. "${srcdir:=.}/tests/tap.sh"
tap_begin onnx
data=$srcdir/tests/data/onnx

n=0 bad=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
notok() { n=$((n + 1)); bad=$((bad + 1)); echo "not ok $n - $1"; sed 's/^/# /' "$tmp/why"; }

# one line per row: file params macs; the file's params, except where the
# export folded BatchNormalization, which oraclec restores: PyTorch's
tail -n +2 "$data/reference.csv" | awk -F, '{ print $2, ($6 == 1 ? $7 : $8), $11 }' >"$tmp/ref"
rows=$(wc -l <"$tmp/ref")
echo "1..$((rows * 2))"

while read -r file params macs; do
	name=${file%.onnx}
	if ! "$ORACLEC" "$data/$file" -f json >"$tmp/json" 2>"$tmp/why"; then
		notok "$name counts"; notok "$name shapes"; continue
	fi
	got_p=$(sed -n 's/^    "params": \([0-9]*\),$/\1/p' "$tmp/json")
	got_m=$(sed -n 's/^    "macs_fwd_per_sample": \([0-9]*\),$/\1/p' "$tmp/json")
	if [ "$got_p" = "$params" ] && [ "$got_m" = "$macs" ]; then
		ok "$name counts: params $params, MACs $macs"
	else
		echo "params $got_p (want $params), MACs $got_m (want $macs)" >"$tmp/why"
		notok "$name counts"
	fi

	# tensor -> per-sample shape, from the IR dump after shape inference
	"$ORACLEC" "$data/$file" --dump-after=shape 2>/dev/null |
		awk '{ for (i = 1; i < NF; i++) if ($i == "->") { split($(i+1), a, ":"); print a[1], a[2] } }' \
		>"$tmp/ours"
	# ONNX's shapes of activations ([N,...]), as 64x112x112
	awk -F'\t' 'NR > 1 && $7 ~ /^\[N/ { s = $7; gsub(/^\[N,?|\]$/, "", s); gsub(/,/, "x", s); print $5, s }' \
		"$data/$name.shapes.tsv" >"$tmp/onnx"
	awk 'NR == FNR { ours[$1] = $2; next }
	     !($1 in ours) { print "missing: " $1 " " $2; bad++; next }
	     ours[$1] != $2 { print "differs: " $1 " onnx " $2 " oraclec " ours[$1]; bad++ }
	     { total++ }
	     END { if (bad) exit 1; print total > "/dev/stderr" }' \
		"$tmp/ours" "$tmp/onnx" >"$tmp/why" 2>"$tmp/count"
	if [ $? -eq 0 ]; then
		ok "$name shapes: $(cat "$tmp/count") activations equal to ONNX's"
	else
		notok "$name shapes"
	fi
done <"$tmp/ref"
[ "$bad" -eq 0 ]
