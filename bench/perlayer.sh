#!/bin/sh
# perlayer.sh -- the per-layer dynamic programme's speed (--per-layer,
# docs/model.md "Per-layer splits"): blocks x choices per block and the
# milliseconds it took, on ResNet-152 and VGG16 at 64 to 65,536 GPUs,
# against the 1 s the issue set for ResNet-152 on 1,024 GPUs and against
# the uniform strategies' prediction of the same run (the peer: what
# oraclec spends without --per-layer).  Run from the build tree:
#   sh bench/perlayer.sh [ORACLEC]
ORACLEC=${1:-./oraclec}
src=$(dirname "$0")/..
printf '%-16s %7s %7s %8s %14s %16s %7s\n' model gpus blocks choices "per-layer (ms)" \
	"strategies (ms)" ratio
for m in "$src/examples/resnet152.odl" "$src/examples/vgg16.odl"; do
	for p in 64 1024 65536; do
		v=$("$ORACLEC" "$m" -g $p --per-layer -v 2>&1 >/dev/null)
		pl=$(echo "$v" | grep ': per-layer:')
		st=$(echo "$v" | grep ': strategies on')
		nb=$(echo "$pl" | sed -n 's/.*per-layer: \([0-9]*\) blocks.*/\1/p')
		ns=$(echo "$pl" | sed -n 's/.* x \([0-9]*\) choices.*/\1/p')
		ms=$(echo "$pl" | sed -n 's/.*(\([0-9.]*\) ms).*/\1/p')
		ss=$(echo "$st" | sed -n 's/.*(\([0-9.]*\) ms).*/\1/p')
		printf '%-16s %7s %7s %8s %14s %16s %7s\n' "$(basename "$m")" $p "$nb" "$ns" "$ms" "$ss" \
			"$(echo "$ms $ss" | awk '{ if ($2 > 0) printf "%.2f", $1 / $2; else print "-" }')"
	done
done
echo "target: ResNet-152 on 1,024 GPUs in under 1,000 ms"
