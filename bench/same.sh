#!/bin/sh
# same.sh -- two builds of oraclec print the same thing: every report of a
# matrix of models and options, byte for byte (issue 28.4: the engine's
# caches and reuse change no number).
#
#   sh bench/same.sh OLD NEW [quick]
#
# OLD and NEW are oraclec executables (a copy of the binary before a change
# and the build after it).  Each case runs both with the same arguments and
# compares stdout, stderr (-v notes with timings are left out: their
# milliseconds differ) and the exit status.  The cases: every model of
# examples/, tests/data/onnx, tests/data/zoo and tests/data/paradl on 1, 8
# and 1,024 GPUs in JSON; ResNet-50 (ODL and ONNX), ResNet-152, ViT, VGG-16,
# AlexNet and CosmoFlow with --search, --per-layer, --sweep, --layers,
# precisions, ZeRO, FSDP, recomputation, schedules, strong scaling,
# --forward-only, --nesting, --grid, --cost-model paper, plans, other
# systems; ParaDL tables' measured spans under --search; validate and
# calibrate on the ABCI measurements; a 10,000-layer chain from
# bench/chaingen on 1,024 GPUs.  "quick" leaves out the zoo's
# 1,024-GPU runs and the chain.  Prints each case that differs and a count;
# exit status 0 when all agree, 1 otherwise.

old=$1 new=$2 quick=${3:-}
src=$(cd "$(dirname "$0")/.." && pwd)
[ -x "$old" ] && [ -x "$new" ] || { echo "usage: same.sh OLD NEW [quick]" >&2; exit 2; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/oraclec-same.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
n=0 bad=0 nz=0

one() {
	n=$((n + 1))
	(cd "$src" && "$old" "$@" >"$tmp/o1" 2>"$tmp/e1"; echo "status $?" >>"$tmp/o1")
	(cd "$src" && "$new" "$@" >"$tmp/o2" 2>"$tmp/e2"; echo "status $?" >>"$tmp/o2")
	# -v's timings and the program's own name differ between builds
	for e in e1 e2; do
		sed -e 's/([0-9.]* ms)//g' -e 's/: [0-9.]* ms$//' -e 's/^[^:]*oraclec[^:]*: /oraclec: /' \
			"$tmp/$e" >"$tmp/$e.s"
	done
	tail -n 1 "$tmp/o2" | grep -q '^status 0$' || { nz=$((nz + 1)); [ -n "${SAME_VERBOSE:-}" ] && echo "exits $(tail -n 1 "$tmp/o2"): oraclec $*" && head -n 2 "$tmp/e2"; }
	if ! cmp -s "$tmp/o1" "$tmp/o2" || ! cmp -s "$tmp/e1.s" "$tmp/e2.s"; then
		bad=$((bad + 1))
		echo "DIFFERS: oraclec $*"
		diff "$tmp/o1" "$tmp/o2" | head -n 8
		diff "$tmp/e1.s" "$tmp/e2.s" | head -n 4
	fi
}

models=$(cd "$src" && ls examples/[!r]*.odl examples/resnet[0-9]*.odl examples/*.onnx tests/data/onnx/*.onnx tests/data/zoo/*.onnx \
	tests/data/paradl/*.net tests/data/paradl/*.net_sc 2>/dev/null)
for m in $models; do
	one "$m" -f json
	one "$m" -g 8 -f json --layers
	case $m in tests/data/zoo/*) [ -n "$quick" ] && continue ;; esac
	one "$m" -g 1024 -s dgx-a100 --precision amp-bf16 -f json
done
r50=examples/resnet50.odl
for m in $r50 examples/resnet50.onnx examples/resnet152.odl tests/data/zoo/vit_b_16_b1.onnx \
	examples/vgg16.odl examples/alexnet.odl examples/cosmoflow.odl; do
	one "$m" -g 64 -s dgx-a100 --search -f json
	one "$m" -g 16 --per-layer -f json
	one "$m" -g 256 --sweep -f csv
	one "$m" -g 32 --zero 1 --recompute full -f json
	one "$m" -g 64 -s dgx-a100 --fsdp hybrid --precision amp-fp16 -f json
	one "$m" -g 128 --schedule interleaved:2 --zero 1 -f json
	one "$m" -g 512 -B 2048 -f json
	one "$m" -g 64 --nesting data-inner -f json
	one "$m" -g 64 --forward-only --optimizer adam -f json
	one "$m" -g 16 --cost-model paper -f json
	one "$m" -g 32 --plan deepspeed
	one "$m" -g 16 --recompute every:4 --micro-batches 4 -f json
done
one examples/resnet152.odl -s dgx-a100 -g 1024 --search -f json
one examples/resnet152.odl -s dgx-a100 -g 1024 --search --precision amp-bf16 --zero 1 -f json
one tests/data/zoo/vit_b_16_b1.onnx -s dgx-a100 -g 256 --search --recompute selective -f json
one tests/data/zoo/vit_b_16_b1.onnx -s dgx-a100 -g 64 --implementation deepspeed -f json
one examples/resnet50.odl -g 64 --grid data=8,pipeline=4,filter=2 -f json
one examples/resnet50.odl -g 64 --grid data=16,spatial=4 -f json --layers
one examples/resnet50.odl -g 64 --grid data=8,pipeline=8 --nesting pipeline-outer -f json
one tests/data/zoo/vit_b_16_b1.onnx -g 8 --plan megatron
one examples/cosmoflow.odl -g 512 -s abci --spatial-split all -f json
one tests/data/paradl/COSMOFLOW.net -g 256 -f json
# measured spans shared out at each precision the search tries
one tests/data/paradl/COSMOFLOW.net -g 64 -s dgx-a100 --search -f json
one tests/data/paradl/RESNET50_ImageNet_profall.net_sc -g 64 -s dgx-a100 --search -f json
one tests/data/paradl/RESNET50_ImageNet_profall.net_sc -g 64 --layers -f json
one validate validation/abci-measured.csv --models validation/models -f csv
one validate validation/abci-measured.csv --models validation/models --precision fp16 -f json
one calibrate validation/abci-measured.csv --models validation/models -o /dev/stdout
if [ -z "$quick" ] && [ -x "$src/bench/chaingen" ]; then
	"$src/bench/chaingen" 10000 >"$tmp/chain10k.odl"
	one "$tmp/chain10k.odl" -g 1024 -f json
	one "$tmp/chain10k.odl" -g 64 --search -f json --strategies data,pipeline,dp,dpf
fi
echo "same.sh: $n cases ($nz exit non-zero, as they should be the same way), $bad differ"
[ "$bad" -eq 0 ]
