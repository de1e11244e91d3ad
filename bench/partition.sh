#!/bin/sh
# partition.sh -- the pipeline partitioner on a 10,000-layer chain and on
# the example models (bench/partition.c says what is compared).
: "${srcdir:=.}" "${CHAINGEN:=bench/chaingen}" "${PARTITION:=bench/partition}"
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
"$CHAINGEN" 10000 >"$tmp/chain10k.odl" || exit 1
"$PARTITION" "$tmp/chain10k.odl" "$srcdir/examples/resnet152.odl" "$srcdir/examples/vgg16.odl" \
	"$srcdir/examples/resnet50.onnx"
