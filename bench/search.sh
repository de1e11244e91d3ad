#!/bin/sh
# search.sh -- the joint search's speed (--search, docs/model.md "Search"):
# configurations evaluated per second on ResNet-152 (ODL and ONNX) at
# 1,024 and 65,536 GPUs, against the 100 ms the issue set for the full
# space of ResNet-152 on 1,024 GPUs.  Run from the build tree:
#   sh bench/search.sh [ORACLEC]
ORACLEC=${1:-./oraclec}
src=$(dirname "$0")/..
printf '%-28s %7s %10s %8s %12s %10s\n' model gpus evaluated pruned "search (ms)" "configs/s"
for m in "$src/examples/resnet152.odl" "$src/../shared/data/onnx/resnet152.onnx"; do
	[ -f "$m" ] || continue
	for p in 1024 65536; do
		line=$("$ORACLEC" "$m" -g $p --search -v 2>&1 >/dev/null | grep '^[^:]*: search:')
		ev=$(echo "$line" | sed -n 's/.*search: \([0-9]*\) configurations.*/\1/p')
		pr=$(echo "$line" | sed -n 's/.*, \([0-9]*\) pruned.*/\1/p')
		ms=$(echo "$line" | sed -n 's/.*(\([0-9.]*\) ms).*/\1/p')
		printf '%-28s %7s %10s %8s %12s %10.0f\n' "$(basename "$m")" $p "$ev" "$pr" "$ms" \
			"$(echo "$ev $ms" | awk '{ if ($2 > 0) print $1 / ($2 / 1000); else print 0 }')"
	done
done
echo "target: the full space of ResNet-152 on 1,024 GPUs in under 100 ms"
