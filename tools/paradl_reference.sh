#!/bin/sh
# paradl_reference.sh -- run ParaDL's own projection script on its own
# inputs and write what it predicts, for tests/paradl-script.sh to hold
# oraclec's --cost-model paper to.
#
#   tools/paradl_reference.sh UPSTREAM > tests/data/paradl/script-reference.tsv
#
# UPSTREAM is a checkout of github.com/TruongThaoNguyen/paraDL-analysis
# (commit ce36803: parallel_analysis.py, model/, ABCI.plat).  The script is
# not ours to copy (its repository has no licence), so it is run where it
# lies: with Python 2.7 (`$PYTHON2`, default python2: the version it was
# written for, as the checked-in reference was made), or, where there is
# none, converted to Python 3 by lib2to3 in a temporary directory (the
# same numbers, printed with more digits).
#
# Runs: each ImageNet table with the micro-batch of ParaDL's own
# script/data_para_projection.sh (ResNet-50 64, VGG16 32, AlexNet 512),
# data parallelism up to 2048 GPUs (its --cmaxp) and filter and channel
# up to 64 without a layer mask (every layer split, as Table III has it).
# Rows: model, strategy, global batch B, GPUs p, memory per GPU (bytes),
# and the compute and communication seconds per epoch, as the script's
# SUMMARY prints them; its filter3/chan3 (the global batch fixed at
# --cBon) are filter/channel here, and its single, filter1 and chan1 rows
# (the last two out of memory in every run) are left out.
set -eu
up=${1:?usage: tools/paradl_reference.sh UPSTREAM}
py=${PYTHON2:-python2}
script=$up/parallel_analysis.py
[ -f "$script" ] || { echo "paradl_reference.sh: $script: no such file" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if ! command -v "$py" >/dev/null 2>&1; then
	cp "$script" "$tmp/parallel_analysis.py"
	python3 -m lib2to3 -w -n "$tmp/parallel_analysis.py" >/dev/null 2>&1
	script=$tmp/parallel_analysis.py
	py=python3
fi

run() { # model table cBon cmaxp cmaxB paratype
	"$py" "$script" -net "$up/model/$2" -plat "$up/ABCI.plat" -goal 1 \
		--cmaxp "$4" --cmaxB "$5" --cBon="$3" --paratype "$6" |
	awk -v model="$1" '
		/^==================SUMMARY/ { on = 1; next }
		on && NF == 8 && $1 != "name" {
			s = $1 == "filter3" ? "filter" : $1 == "chan3" ? "channel" : $1
			if (s == "data" || s == "filter" || s == "channel")
				printf "%s\t%s\t%d\t%d\t%s\t%s\t%s\n", model, s, $2, $3, $4, $5, $6
		}'
}

printf '# ParaDL parallel_analysis.py (ce36803) on its own inputs: tools/paradl_reference.sh\n'
printf '# model\tstrategy\tB\tp\tmemory_bytes\tcompute_epoch_s\tcomm_epoch_s\n'
run resnet50 RESNET50_ImageNet_profall.net_sc 64 2048 262144 d
run resnet50 RESNET50_ImageNet_profall.net_sc 64 64 262144 f,c
run vgg16 VGG_ImageNet_profall.net_sc 32 2048 262144 d
run vgg16 VGG_ImageNet_profall.net_sc 32 64 262144 f,c
run alexnet ALEXNET_ImageNet_profall.net_sc 512 2048 2000000 d
run alexnet ALEXNET_ImageNet_profall.net_sc 512 64 2000000 f,c
