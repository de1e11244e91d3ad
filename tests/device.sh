#!/bin/sh
# device.sh -- bench/device.sh, issue 37.7's prepared GPU run, on this
# machine: `prepare` writes one file of keys a model (oraclec
# --kernels-needed's CSV, which the probe's --needed reads) for the twelve
# models of validation/h100, in order of their rows' error; their union
# without repeats; `run` and `judge` refuse what they cannot do with one
# line.  `run` itself needs a GPU (DEVICE_KIND=cpu tries it here: the bench,
# not a test).  TAP; python3 without torch.
. "${srcdir:=.}/tests/tap.sh"
tap_begin device
tap_python 'import json' "python3"

cd "$tmp" || exit 99
# prepare: run where the tree is, writing into its own .device
export DEVICE_DIR="$tmp/dev" PYTHON="$py" ORACLEC srcdir
sh "$srcdir/bench/device.sh" prepare >"$tmp/out" 2>"$tmp/err"
status=$?
want_status 0
set -- "$tmp"/dev/needed/[0-9]*.csv
[ $# -eq 12 ] || fail "$# files of keys, not 12: $*"
[ "${1##*/}" = "01-resnet50.csv" ] || fail "the first is ${1##*/}, not ResNet-50 (the most error)"
"$py" - "$tmp/dev/needed" "$srcdir/python" <<'PY' >"$tmp/py" 2>&1 || fail "$(cat "$tmp/py")"
import glob, os, re, sys
d, lib = sys.argv[1:]
sys.path.insert(0, lib)
from oraclec import probe_kernels as pk
files = sorted(glob.glob(os.path.join(d, "[0-9]*.csv")))
union = set()
for f in files:
    text = open(f).read()
    want = pk.needed_from_csv(text, f)
    assert want, f
    body = text.splitlines()[1:]
    assert len(body) == len(set(body)), "%s repeats a line" % f
    union |= set(body)
    # the H100 rows' batch 128 and their four precisions of keys
    assert any(n == 128 for ns in want.values() for n in ns), f
m = pk.needed_from_csv(open(files[0]).read(), "resnet50")
precs = {k.prec for k in m}
assert precs == {"fp32", "tf32", "fp16", "bf16"}, precs
assert {n for ns in m.values() for n in ns} == {16, 32, 64, 128, 256}, m
assert any(k.layout == "NHWC" and k.prec == "fp16" for k in m), "no channels-last fp16 key"
all_keys = open(os.path.join(d, "all.keys")).read().splitlines()
assert all_keys[0] == "class,precision,layout,n,shape" and set(all_keys[1:]) == union and \
    len(all_keys) == len(union) + 1, "all.keys is not the union"
PY
grep -q "01-resnet50.csv: [0-9]* keys at their batches, the rows' error" "$tmp/out" ||
	fail "prepare did not say what it wrote: $(head -c 300 "$tmp/out")"
check "prepare: 12 files of keys by the rows' error (ResNet-50 first: 16 to 256, four precisions, NHWC at fp16), all.keys their union"

sh "$srcdir/bench/device.sh" judge "$tmp/none" >"$tmp/out" 2>"$tmp/err"
status=$?
want_status 1
grep -q "has no steps.jsonl and h200/system.odl" "$tmp/err" || fail "$(cat "$tmp/err")"
DEVICE_DIR="$tmp/empty" OUT="$tmp/o" sh "$srcdir/bench/device.sh" run >"$tmp/out" 2>"$tmp/err"
status=$?
want_status 1
grep -q "no $tmp/empty/needed: sh bench/device.sh prepare" "$tmp/err" || fail "$(cat "$tmp/err")"
sh "$srcdir/bench/device.sh" bogus >"$tmp/out" 2>"$tmp/err"
status=$?
want_status 2
check "judge without its files, run without prepare's: exit 1 with one line; an unknown verb: usage, exit 2"

finish
