#!/bin/sh
# paradl-script.sh -- `--cost-model paper` gives ParaDL's own numbers on
# ParaDL's own inputs: every row of tests/data/paradl/script-reference.tsv
# (what ParaDL's parallel_analysis.py printed for its three ImageNet
# tables: data parallelism on 2 to 2048 GPUs, filter and channel on 2 to
# 64; tools/paradl_reference.sh made it) is run through oraclec on the
# same table, with abci-script.odl (the script's hard-coded alpha and beta
# as a system) and the same global batch, and the compute and the
# communication seconds per epoch must agree to 1e-9.  The memory is not
# compared: the script's leaves out ReLU and batch norm and divides
# filter-split weights by p twice (docs/model.md, "Paper mode").  Needs
# jq; skips without it.  TAP.
. "${srcdir:=.}/tests/tap.sh"
tap_begin paradl-script
if ! command -v jq >/dev/null 2>&1; then
	echo "1..0 # SKIP jq is not installed (./bootstrap --tests installs it)"
	exit 0
fi
dir=$srcdir/tests/data/paradl

D=1280000 # the tables' Input line
rows=0
while IFS='	' read -r model strategy B p mem comp comm; do
	case $model in '#'*) continue ;; esac
	case $model in
	resnet50) table=RESNET50_ImageNet_profall.net_sc ;;
	vgg16) table=VGG_ImageNet_profall.net_sc ;;
	alexnet) table=ALEXNET_ImageNet_profall.net_sc ;;
	esac
	rows=$((rows + 1))
	if ! "$ORACLEC" "$dir/$table" -s "$dir/abci-script.odl" --cost-model paper \
		-B "$B" --grid "$strategy=$p" -f json >"$tmp/out" 2>"$tmp/err"; then
		fail "$model $strategy=$p B=$B: oraclec failed"
	else
		# per epoch as the script counts it: compute over D/B
		# iterations, communication over ceil(D/B)
		got=$(jq -r --argjson D $D --argjson B "$B" '.strategies[0].iteration |
			"\(.compute_s * $D / $B) \(.communication_s * ((($D + $B - 1) / $B) | floor))"' "$tmp/out")
		set -- $got
		bad=$(awk -v a="$1" -v b="$comp" -v c="$2" -v d="$comm" 'BEGIN {
			e1 = (a - b) / b; e2 = (c - d) / d
			if (e1 < 0) e1 = -e1
			if (e2 < 0) e2 = -e2
			if (e1 > 1e-9 || e2 > 1e-9) printf "compute %s (script %s), comm %s (script %s)", a, b, c, d }')
		[ -z "$bad" ] || fail "$model $strategy=$p B=$B: $bad"
	fi
done <"$dir/script-reference.tsv"
[ "$rows" -eq 69 ] || fail "$rows rows in script-reference.tsv, not 69"
check "--cost-model paper equals ParaDL's script on its $rows data, filter and channel projections"
finish
