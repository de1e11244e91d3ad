#!/bin/sh
# device.sh -- issue 37.7's prepared GPU run: the probe's kernel tables of
# the twelve models of validation/h100 on the GPU at hand, the models in
# order of their share of the H100 rows' error, and the same 56 steps
# measured there with the H100 rows' own script, all in one command of at
# most 10 minutes; then the steps judged with and without the tables.
#
#   sh bench/device.sh prepare    here, where oraclec is built: the keys
#                                 each model's rows need (oraclec
#                                 --kernels-needed at their batch,
#                                 precision and layout), one file a model,
#                                 into .device/needed/NN-MODEL.csv, NN its
#                                 rank by error (validation/h100.py's
#                                 rows); .device is ignored, carry it
#   sh bench/device.sh run        there: a GPU and a python3 with torch, no
#                                 oraclec (the probe reads --needed):
#                                 $OUT/h200/ (system.odl naming kernels.csv,
#                                 implementation.odl, probe.csv,
#                                 kernels.csv), $OUT/steps.jsonl
#                                 (validation/h100/bench.py: bf16 first,
#                                 then the rest), $OUT/env.txt, $OUT/log.txt
#   sh bench/device.sh judge DIR  here, on what came back: the steps judged
#                                 by validation/h100.py with DIR/h200's
#                                 system with its tables and without them
#
# The device tool (see /work/.library/device): run(command="sh
# bench/device.sh run", carry=[".device"], timeout_s=600), then check DIR
# in with its provenance (env.txt, the tables' own header lines).
#
# Budget of `run` (seconds, environment): DEVICE_TABLES (240) shared by
# the models' tables in their order, each model its share of what is
# left; DEVICE_STEPS (200) for bench.py; DEVICE_SECTIONS (60) for the
# probe's device sections (peaks, bandwidth, launch, host costs), run
# last so that system.odl holds them (a run of the model section alone
# writes placeholders there).  DEVICE_KIND=cpu tries `run` here, on the
# CPU (DEVICE_STEPS=0 leaves bench.py out: a step of batch 128 takes
# minutes on a CPU).
#
# Exit status: 0 done (a section or step that failed is in the log); 1 a
# step that cannot run (no oraclec for prepare, no torch or GPU for run,
# no DIR for judge); 2 usage.
set -u
srcdir=${srcdir:-.}
ORACLEC=${ORACLEC:-./oraclec}
PYTHON=${PYTHON:-python3}
here=${DEVICE_DIR:-.device}  # what prepare writes and run reads

usage() {
	echo "usage: sh bench/device.sh prepare | run | judge DIR" >&2
	exit 2
}

prepare() {
	[ -x "$ORACLEC" ] || { echo "device.sh: no oraclec at $ORACLEC (make first)" >&2; exit 1; }
	mkdir -p "$here/needed" && rm -f "$here"/needed/*.csv || exit 1
	"$PYTHON" - "$ORACLEC" "$srcdir" "$here/needed" <<'PY' || exit 1
import collections, json, os, subprocess, sys, tempfile
oraclec, top, out = sys.argv[1:]
sys.path.insert(0, os.path.join(top, "validation"))
import h100, judge  # noqa: E402
rows = [json.loads(l) for l in open(os.path.join(top, "validation", "h100", "steps.jsonl"))
        if l.strip()]
lost = collections.Counter()
with tempfile.TemporaryDirectory() as tmp:
    files = {r["model"]: h100.model_file(r["model"], tmp) for r in rows}
    for r in rows:
        if "error" in r or not files[r["model"]]:
            continue
        k = judge.predict("device.sh", h100.command(oraclec, r, files[r["model"]]))
        lost[r["model"]] += 1 - judge.accuracy(k["iteration"]["total_s"], r["iter_s"])
    for i, (model, err) in enumerate(lost.most_common(), 1):
        body = set()
        for r in rows:
            if r["model"] != model or "error" in r:
                continue
            cmd = [c for c in h100.command(oraclec, r, files[model]) if c not in ("-f", "json")]
            p = subprocess.run(cmd + ["--kernels-needed"], capture_output=True, text=True)
            if p.returncode:
                sys.exit("device.sh: %s: %s" % (" ".join(cmd), p.stderr.strip()))
            body.update(p.stdout.splitlines()[1:])
        name = os.path.join(out, "%02d-%s.csv" % (i, model))
        with open(name, "w") as f:
            f.write("class,precision,layout,n,shape\n" + "".join(l + "\n" for l in sorted(body)))
        print("%s: %d keys at their batches, the rows' error %.2f" % (name, len(body), err))
PY
	# every model's keys in one file: the last run's (--resume keeps the rows)
	{
		echo "class,precision,layout,n,shape"
		for f in "$here"/needed/[0-9]*.csv; do sed 1d "$f"; done | sort -u
	} >"$here/needed/all.keys" || exit 1
	# the commit, for run's env.txt (the device's copy has no .git)
	git -C "$srcdir" log -1 --format='oraclec %H %cs' >"$here/commit" 2>/dev/null ||
		echo "oraclec: no git" >"$here/commit"
	echo "$here/needed: $(ls "$here"/needed/[0-9]*.csv | wc -l) models; carry $here"
}

run() {
	: "${OUT:?device.sh run: OUT is the folder to write}"
	ls "$here"/needed/[0-9]*.csv >/dev/null 2>&1 ||
		{ echo "device.sh: no $here/needed: sh bench/device.sh prepare, then carry $here" >&2; exit 1; }
	PYTHONPATH="$srcdir/python${PYTHONPATH:+:$PYTHONPATH}"
	PYTHONUNBUFFERED=1
	export PYTHONPATH PYTHONUNBUFFERED
	log=$OUT/log.txt
	{
		date -u
		nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,power.limit \
			--format=csv 2>&1
		"$PYTHON" -c 'import torch, platform; print("torch", torch.__version__, "cuda",
torch.version.cuda, "cudnn", torch.backends.cudnn.version(), "python",
platform.python_version()); print(torch.cuda.get_device_name(0),
torch.cuda.get_device_properties(0))'
		cat "$here/commit" 2>/dev/null
	} >"$OUT/env.txt" 2>&1
	kind=${DEVICE_KIND:-cuda}
	"$PYTHON" -c 'import torch, sys; sys.exit(sys.argv[1] == "cuda" and
not torch.cuda.is_available())' "$kind" ||
		{ echo "device.sh: $PYTHON has no torch or sees no GPU" >&2; exit 1; }
	left=${DEVICE_TABLES:-240}
	n=$(ls "$here"/needed/[0-9]*.csv | wc -l)
	for f in "$here"/needed/[0-9]*.csv; do
		share=$((left / n))
		[ "$share" -ge 5 ] || share=5
		t0=$(date +%s)
		echo "== $f: up to $share s" >>"$log"
		"$PYTHON" -m oraclec.probe --device "$kind" --quick --sections model --needed "$f" \
			--resume --budget "$share" -o "$OUT/h200" >>"$log" 2>&1 ||
			echo "== $f: the probe exited $?" >>"$log"
		left=$((left - ($(date +%s) - t0)))
		n=$((n - 1))
	done
	steps=${DEVICE_STEPS:-200}
	if [ "$steps" -gt 0 ]; then
		echo "== the steps (validation/h100/bench.py), amp-bf16 first" >>"$log"
		t0=$(date +%s)
		START=44 "$PYTHON" "$srcdir/validation/h100/bench.py" "$OUT/steps.jsonl" \
			--budget $((steps / 2)) >>"$log" 2>&1
		rest=$((steps - ($(date +%s) - t0)))
		[ "$rest" -le 10 ] || "$PYTHON" "$srcdir/validation/h100/bench.py" \
			"$OUT/steps.jsonl" --budget "$rest" >>"$log" 2>&1
	fi
	echo "== the device sections, and what is left of the tables" >>"$log"
	"$PYTHON" -m oraclec.probe --device "$kind" --quick \
		--sections matmul,conv,memory,launch,host,allocator,model \
		--needed "$here/needed/all.keys" --resume --budget "${DEVICE_SECTIONS:-60}" \
		-o "$OUT/h200" >>"$log" 2>&1 || echo "== the probe exited $?" >>"$log"
	date -u >>"$log"
}

judge() {
	d=$1
	[ -f "$d/steps.jsonl" ] && [ -f "$d/h200/system.odl" ] ||
		{ echo "device.sh: $d has no steps.jsonl and h200/system.odl" >&2; exit 1; }
	tmp=$(mktemp -d "${TMPDIR:-/tmp}/device.XXXXXX") || exit 1
	trap 'rm -rf "$tmp"' EXIT
	# the first row of each configuration (bench.py ran bf16 first, then
	# all of them while time was left)
	"$PYTHON" - "$d/steps.jsonl" "$tmp/steps.jsonl" <<'PY' || exit 1
import json, sys
seen, out = set(), open(sys.argv[2], "w")
for l in open(sys.argv[1]):
    r = json.loads(l)
    k = (r["model"], r["batch"], r["precision"], r["channels_last"])
    if k not in seen:
        seen.add(k)
        out.write(l)
PY
	cp "$d/h200/system.odl" "$d/h200/implementation.odl" "$tmp/" &&
		cp "$d/h200/kernels.csv" "$tmp/" || exit 1
	grep -v '^ *kernels *=' "$d/h200/system.odl" >"$tmp/notables.odl" || exit 1
	echo "== with the tables ($d/h200/kernels.csv)"
	"$PYTHON" "$srcdir/validation/h100.py" --system "$tmp/system.odl" --oraclec "$ORACLEC" \
		"$tmp/steps.jsonl"
	echo
	echo "== the same system without them (the size-aware model)"
	"$PYTHON" "$srcdir/validation/h100.py" --system "$tmp/notables.odl" --oraclec "$ORACLEC" \
		"$tmp/steps.jsonl"
}

case ${1:-} in
prepare) prepare ;;
run) run ;;
judge) [ $# -eq 2 ] || usage; judge "$2" ;;
*) usage ;;
esac
