#!/bin/sh
# launch-fuzz.sh -- python3 -m oraclec.launch's plan reader fuzzed as the C
# readers are: oraclec writes five valid PyTorch plans (data=2, pipeline=4
# under 1F1B, dp nested data-inner, ZeRO-1, AlexNet's per-layer plan),
# tests/launch-fuzz.py mutates each 70 times, deterministically (keys
# dropped, other types, negative, huge and non-finite numbers, deep
# nesting, truncation, random bytes, duplicate keys, odd strings, the mesh
# made inconsistent), gives every mutation to the launcher with
# --validate-only and asserts: exit status 0 or 1 (2 for usage), no Python
# traceback, one line on stderr on failure, and status 1 for those no valid
# plan can come of.  Special files (a FIFO, /dev/zero, a directory, more
# than 16 MiB) must be refused at once.  The reader needs no torch; with
# torch, mutated module names are matched with torchvision's models too
# (else those cases skip).  Then a table of 35 hostile command lines and
# files (outputs that are inputs, FIFOs, escapes, 100,000-byte values,
# model files that raise): the exit status, one line on stderr, nothing
# left or replaced (tests/launch-fuzz.py, CASES).  Skipped where no
# python3 is found.  TAP.
. "${srcdir:=.}/tests/tap.sh"
tap_begin launchfuzz

tap_python 'import sys; assert sys.version_info >= (3, 8)' \
	"no python3"
tap_models

i=0
for args in "$resnet --grid data=2" \
	"$srcdir/examples/resnet50.onnx --grid pipeline=4 --micro-batches 8 -b 8 --schedule 1f1b" \
	"$resnet --grid data=2,pipeline=2 --micro-batches 2 -b 4 --nesting data-inner" \
	"$resnet --grid data=2 --zero 1" \
	"$alexnet -g 4 --per-layer --implementation pytorch"; do
	i=$((i + 1))
	# shellcheck disable=SC2086
	"$ORACLEC" $args --plan pytorch -q -o "$tmp/plan$i.json" 2>"$tmp/err" || {
		echo "1..1"
		echo "not ok 1 - oraclec $args --plan pytorch: exit status $?"
		sed 's/^/# /' "$tmp/err"
		exit 1
	}
done
mkdir "$tmp/work"
cd "$tmp/work" && exec "$py" "$srcdir/tests/launch-fuzz.py" "$tmp/work" "$tmp"/plan[1-5].json
