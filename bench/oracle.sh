#!/bin/sh
# oracle.sh -- speed of the oracle: the full analysis of ResNet-152 for
# 1024 GPUs (every strategy, every factorization of the hybrids, pipeline
# partitions for every micro-batch count), target under 50 ms; and, when
# this oraclec has --sweep, the sweep of every power of two from 1 to
# 65,536 GPUs, target under 1 s.  Whole processes, best of RUNS.
: "${ORACLEC:=./oraclec}" "${srcdir:=.}" "${RUNS:=10}"
LC_ALL=C; export LC_ALL
model=$srcdir/examples/resnet152.odl
onnx=$srcdir/tests/data/onnx/resnet152.onnx

now() { date +%s%N; }

# best wall time in ms of RUNS runs of "$@"
best()
{
	b=
	i=0
	while [ "$i" -lt "$RUNS" ]; do
		t0=$(now)
		"$@" >/dev/null 2>&1 || { echo "failed: $*" >&2; return 1; }
		t1=$(now)
		t=$(( (t1 - t0) / 1000 ))
		if [ -z "$b" ] || [ "$t" -lt "$b" ]; then b=$t; fi
		i=$((i + 1))
	done
	echo "$b"
}

verdict() { if [ "$1" -lt "$2" ]; then echo "met"; else echo "NOT met"; fi; }

status=0
for f in "$model" "$onnx"; do
	us=$(best "$ORACLEC" "$f" --gpus 1024 -f json) || exit 1
	printf '%-44s %8.1f ms   target < 50 ms: %s\n' "$(basename "$f") --gpus 1024" \
		"$(echo "$us" | awk '{ print $1 / 1000 }')" "$(verdict "$us" 50000)"
	[ "$us" -lt 50000 ] || status=1
done
if "$ORACLEC" --help | grep -q -- '--sweep'; then
	us=$(best "$ORACLEC" "$model" --gpus 65536 --sweep -f json) || exit 1
	printf '%-44s %8.1f ms   target < 1 s: %s\n' "resnet152.odl --sweep 1..65536" \
		"$(echo "$us" | awk '{ print $1 / 1000 }')" "$(verdict "$us" 1000000)"
	[ "$us" -lt 1000000 ] || status=1
else
	echo "--sweep: not in this oraclec (skipped)"
fi
exit "$status"
