#!/bin/sh
# advice.sh -- the advice an expert would sign (issue 32), from the
# command line: every format says the same (throughput and MFU, the
# rank, the parts of an iteration, the largest batch), the report reads
# in order, the warnings and refusals say what is wrong.  TAP.  The JSON
# is read by python3; without it those cases are skipped.
. "${srcdir:=.}/tests/tap.sh"
tap_begin advice
onnx=$srcdir/examples/resnet50.onnx
odl=$srcdir/examples/resnet50.odl

py=$(command -v python3 || true)

# ---- 2. throughput and MFU in every format ------------------------------

if [ -n "$py" ]; then
	run "$onnx" -g 64 -s dgx-a100 -f json -q
	cp "$tmp/out" "$tmp/a.json"
	run "$onnx" -g 64 -s dgx-a100 -f csv -q
	cp "$tmp/out" "$tmp/a.csv"
	run "$onnx" -g 64 -s dgx-a100 -q
	cp "$tmp/out" "$tmp/a.txt"
	run "$onnx" -g 64 -s dgx-a100 -f html -q
	cp "$tmp/out" "$tmp/a.html"
	"$py" - "$tmp/a.json" "$tmp/a.csv" "$tmp/a.txt" "$tmp/a.html" >"$tmp/out" 2>"$tmp/err" <<'PY' ||
import csv, json, sys
d = json.load(open(sys.argv[1]))
rows = {r["strategy"]: r for r in csv.DictReader(open(sys.argv[2]))}
text = open(sys.argv[3]).read()
html = open(sys.argv[4]).read()
seen = 0
for s in d["strategies"]:
    r = rows[s["name"]]
    if s["iteration"]["total_s"] is None:
        assert s["throughput_samples_per_s"] is None and s["mfu"] is None, s
        assert r["throughput_samples_per_s"] == "" and r["mfu"] == "", r
        continue
    seen += 1
    t = s["global_batch"] / s["iteration"]["total_s"]
    assert abs(s["throughput_samples_per_s"] - t) <= 1e-9 * t, (s["name"], t)
    assert 0 < s["mfu"] < 1, s["mfu"]
    assert float(r["throughput_samples_per_s"]) == float("%.6g" % t), r
    assert float(r["mfu"]) == float("%.6g" % s["mfu"]), r
    mfu = "%.1f %%" % (100 * s["mfu"])
    line = [l for l in text.splitlines() if l.startswith(s["name"] + " ")][0]
    assert mfu in line, (line, mfu)
    assert ("<td>%s</td>" % mfu) in html, mfu
assert seen >= 5, seen
PY
		fail "the formats disagree on throughput or MFU"
	check "throughput (global batch / iteration) and MFU in JSON, CSV, text and HTML alike"
else
	tap_skip 1 "python3 not found"
fi

# ---- 4. convergence: a global batch past the literature's -----------------

run "$onnx" -g 1024 -q
grep -q '^warning \[large-global-batch\]: the global batch of data parallelism, 32,768 samples, is past 8,192, .*(Goyal et al. 2017)' \
	"$tmp/out" || fail "no large-global-batch warning at 32,768 with momentum SGD"
run "$onnx" -g 1024 -f json -q
grep -q '"code": "large-global-batch"' "$tmp/out" || fail "not in JSON"
run "$onnx" -g 1024 -f html -q
grep -q 'warning \[large-global-batch\]' "$tmp/out" || fail "not in HTML"
run "$onnx" -g 256 -q
grep -q 'large-global-batch' "$tmp/out" && fail "a warning at 8,192"
check "large-global-batch past 8,192 with momentum SGD (Goyal et al. 2017), in text, JSON and HTML"

# ---- 3. the largest batch that fits ----------------------------------------

# get FILE PATH: a value of the JSON, by python3
get()
{
	"$py" -c 'import json, sys
v = json.load(open(sys.argv[1]))
for k in sys.argv[2].split("."):
    v = v[int(k)] if isinstance(v, list) else v[k]
print("null" if v is None else v)' "$1" "$2"
}

if [ -n "$py" ]; then
	run "$onnx" -g 8 --max-batch -f json -q
	want_status 0
	cp "$tmp/out" "$tmp/mb.json"
	b=$(get "$tmp/mb.json" strategies.0.max_batch_per_gpu)
	[ "$(get "$tmp/mb.json" strategies.0.max_batch_reason)" = null ] || fail "a reason for data"
	run "$onnx" --grid data=8 -b "$b" -f json -q
	[ "$(get "$tmp/out" strategies.0.feasible)" = True ] || fail "data does not fit $b"
	run "$onnx" --grid data=8 -b $((b + 1)) -f json -q
	[ "$(get "$tmp/out" strategies.0.feasible)" = False ] || fail "data fits $((b + 1))"
	run "$onnx" -g 8 --max-batch -q
	grep -q "^data .* $b  compute$" "$tmp/out" || fail "the text lacks data's $b"
	run "$onnx" -g 8 --max-batch -f csv -q
	# max_batch_per_gpu, then rank and the twelve parts
	grep -q "^resnet50,dgx-h100,8,data,.*,$b,1\(,[^,]*\)\{12\}\$" "$tmp/out" ||
		fail "the CSV lacks data's $b"
	check "--max-batch: data's largest batch per GPU fits and one more does not; JSON, text, CSV alike"

	# a pipeline's fixed micro-batches divide the batch; nothing fits: 0, why
	run "$onnx" -g 4 --strategies pipeline --micro-batches 8 --max-batch -f json -q
	b=$(get "$tmp/out" strategies.0.max_batch_per_gpu)
	[ "$b" -gt 0 ] && [ $((b % 8)) -eq 0 ] || fail "pipeline: $b is not a multiple of 8"
	run "$srcdir/examples/cosmoflow.odl" --max-batch -f json -q
	[ "$(get "$tmp/out" strategies.0.max_batch_per_gpu)" = 0 ] || fail "cosmoflow fits"
	[ "$(get "$tmp/out" strategies.0.max_batch_reason)" = "does not fit in GPU memory" ] ||
		fail "no reason: $(get "$tmp/out" strategies.0.max_batch_reason)"
	run "$onnx" -g 8 -f json -q
	grep -q max_batch "$tmp/out" && fail "max_batch without --max-batch"
	run "$onnx" --max-batch -B 256
	want_status 2
	check "--max-batch: whole micro-batches; 0 with the reason; only when asked; not with -B"
else
	tap_skip 2 "python3 not found"
fi

# ---- 5. a report that reads in order ----------------------------------------

if [ -n "$py" ]; then
	for f in json csv txt html; do
		case $f in txt) fmt=text ;; *) fmt=$f ;; esac
		"$ORACLEC" "$onnx" -g 1024 -f $fmt -q >"$tmp/r.$f" 2>"$tmp/err" || fail "-f $fmt"
	done
	"$py" - "$tmp/r.json" "$tmp/r.csv" "$tmp/r.txt" "$tmp/r.html" >"$tmp/out" 2>"$tmp/err" <<'PY' ||
import csv, json, re, sys
d = json.load(open(sys.argv[1]))
st = d["strategies"]
names = [s["name"] for s in st]
assert names[:3] == ["data", "spatial", "pipeline"], names  # the table's order
ranks = sorted(s["rank"] for s in st)
assert ranks == list(range(1, len(st) + 1)), ranks
by_rank = [s["name"] for s in sorted(st, key=lambda s: s["rank"])]
assert by_rank[0] == d["best"], (by_rank, d["best"])
# feasible first, then by epoch
key = [(not s["feasible"], s["epoch_s"] is None, s["epoch_s"] or 0)
       for s in sorted(st, key=lambda s: s["rank"])][1:]
assert key == sorted(key), key
rows = {r["strategy"]: r for r in csv.DictReader(open(sys.argv[2]))}
for s in st:
    assert int(rows[s["name"]]["rank"]) == s["rank"], s["name"]
text = open(sys.argv[3]).read().split("\n")
head = text.index([l for l in text if l.startswith("strategy ")][0])
listed = [l.split()[0] for l in text[head + 1:head + 1 + len(st)]]
assert listed == by_rank, (listed, by_rank)
assert "max GPUs" not in "\n".join(text)
html = open(sys.argv[4]).read()
rank_table = html[html.index('class="ranking"'):html.index("</table>")]
shown = re.findall(r'<tr class="[a-z]*"><td class="l">([a-z]+)</td>', rank_table)
assert shown == by_rank, (shown, by_rank)
# the parts add up to the iteration, or the input is it
parts = ("compute_s", "bubble_s", "gradient_allreduce_s", "reducer_s", "layer_collectives_s",
         "p2p_s", "weight_update_s", "recompute_s", "input_copies_s", "dispatch_s", "sync_bn_s",
         "skew_s")
checked = 0
for s in st:
    it = s["iteration"]
    if it["total_s"] is None:
        continue
    total = sum(it[p] for p in parts)
    assert abs(max(total, it["input_s"]) - it["total_s"]) <= 1e-9 * it["total_s"], (s["name"], total, it)
    line = [l for l in text[text.index([l for l in text if l.startswith("iteration by part")][0]):]
            if l.startswith(s["name"] + " ")][0].split()
    cols = [0 if v == "0" else float(v) for v in line[1:]]  # the parts, iteration, input
    assert abs(sum(cols[:-2]) - cols[-2]) <= 0.0006 or abs(cols[-1] - cols[-2]) <= 0.0001, line
    checked += 1
assert checked >= 7, checked
PY
		fail "the report is not in order, or its parts do not add up"
	check "strategies listed by rank in text and HTML (JSON and CSV in the table's order with rank); the parts add up"
else
	tap_skip 1 "python3 not found"
fi

# per-layer splits, in the recommendation when they win by more than 3 %
run "$srcdir/examples/vgg16.odl" -s abci -g 16 --per-layer -q
grep -q '^recommendation: use the per-layer splits (below): ' "$tmp/out" || fail "VGG16: not recommended"
grep -q '^best strategy: use data parallelism (data=16)' "$tmp/out" || fail "VGG16: no best strategy"
grep -q '^note: the per-layer splits are recommended: ' "$tmp/out" || fail "VGG16: no note"
run "$srcdir/examples/vgg16.odl" -s abci -g 16 --per-layer -q -f json
grep -q '"recommended": true' "$tmp/out" || fail "VGG16: JSON not recommended"
grep -q '"best": "data"' "$tmp/out" || fail "VGG16: JSON best changed"
# (on dgx-1: on abci's 16 GPUs the SMs NCCL holds beside backward slow
# data parallelism's hidden exchange, and the splits win by 3.0 %)
run "$srcdir/examples/vgg16.odl" -s dgx-1 -g 16 --implementation pytorch --per-layer -q
grep -q '^recommendation: use data parallelism (data=16)' "$tmp/out" || fail "VGG16 under pytorch: not data"
grep -q '^note: the per-layer splits reach 0.175 s per iteration, 2.4 % faster than uniform data parallelism under the same model (0.1794 s): within 3 %, a uniform strategy is simpler\.$' \
	"$tmp/out" || fail "VGG16 under pytorch: no note that per-layer is within 3 %"
run "$onnx" -g 1024 --per-layer -q
grep -q '^recommendation: use data parallelism (data=1024)' "$tmp/out" || fail "ResNet-50: not data"
grep -q '^note: the per-layer splits' "$tmp/out" && fail "ResNet-50: a note though per-layer is uniform data"
check "--per-layer: recommended when more than 3 % faster (VGG16 on 16 GPUs); within 3 % a note (VGG16 under PyTorch, its exchange hidden); none when it is uniform data (ResNet-50 on 1,024)"

# what is wrong, not "use a smaller batch"; the plan's message its own
run "$onnx" --zero 2 --grid data=32,pipeline=2 -q
grep -q '^recommendation: dp parallelism (data=32,pipeline=2) does not run on 64 GPUs of this system: ZeRO stages 2 and 3 do not combine with pipeline parallelism\.$' \
	"$tmp/out" || fail "the text does not say why"
grep -q 'smaller batch' "$tmp/out" && fail "the text says to use a smaller batch"
run "$onnx" --zero 2 --grid data=32,pipeline=2 -q -f json
grep -q '"ZeRO stages 2 and 3' "$tmp/out" || fail "the JSON notes do not say why"
run "$onnx" --zero 2 --grid data=32,pipeline=2 --plan deepspeed -q
want_status 1
[ "$(cat "$tmp/err")" = "$onnx: error: data=32,pipeline=2 on dgx-h100: ZeRO stages 2 and 3 do not combine with pipeline parallelism; no plan written" ] ||
	fail "the plan's message: $(cat "$tmp/err")"
run "$onnx" --grid pipeline=64 --plan pytorch -q
grep -q 'pipeline=64 with stages at block boundaries: more stages than blocks to cut between (at most 21)' \
	"$tmp/err" || fail "the blocks' message is lost"
check "--zero 2 with a pipeline: the reason, not a smaller batch; --plan deepspeed says it without blocks or a limit"

# ---- 7. a model as its user exported it ------------------------------------

# torch.onnx.export of a fresh model merges its equal initializers
# (tests/data/fresh, tools/export_zoo.py --fresh); the files are gzip'd
fresh=$srcdir/tests/data/fresh
for m in convnext_tiny efficientnet_b0; do
	want=$(sed -n 's/^params //p' "$fresh/${m}_fresh.ref.txt")
	file=$(sed -n 's/^file_params //p' "$fresh/${m}_fresh.ref.txt")
	run "$fresh/${m}_fresh.onnx.gz" -f json
	want_status 0
	grep -q "^    \"params\": $want,\$" "$tmp/out" || fail "$m: params not $want (the file's $file)"
	grep -q '"merged_initializers": [1-9]' "$tmp/out" || fail "$m: no merged_initializers"
	grep -q "note: .* initializers of equal elements .* read by the nodes of several modules" \
		"$tmp/err" || fail "$m: no note on stderr"
	run "$fresh/${m}_fresh.onnx.gz" -q
	grep -q '^note         .* initializers of equal elements read by several modules' "$tmp/out" ||
		fail "$m: no note in the report"
done
# the zoo's exports hold distinct values: nothing merged, nothing added
run "$srcdir/tests/data/zoo/convnext_tiny.onnx" -f json -q
grep -q '"merged_initializers": 0,' "$tmp/out" || fail "a merge in the randomized export"
check "ConvNeXt-T and EfficientNet-B0 as exported fresh: torch's 28,589,128 and 5,288,548 parameters, said in a note"

# a gzip'd ONNX file: read as it is, by name or by content; a broken one
# and a PNG said for what they are
cp "$fresh/convnext_tiny_fresh.onnx.gz" "$tmp/model"
run "$tmp/model" -q
want_status 0
grep -q '^model        model (' "$tmp/out" || fail "gzip by content"
run "$fresh/convnext_tiny_fresh.onnx.gz" -q
grep -q '^model        convnext_tiny_fresh (' "$tmp/out" || fail "NAME.onnx.gz is not NAME"
head -c 3000 "$fresh/convnext_tiny_fresh.onnx.gz" >"$tmp/cut.onnx.gz"
run "$tmp/cut.onnx.gz"
want_status 1
[ "$(cat "$tmp/err")" = "$tmp/cut.onnx.gz: error: a gzip file oraclec cannot read: it is truncated" ] ||
	fail "truncated: $(cat "$tmp/err")"
printf 'model m { }\n' | gzip >"$tmp/text.gz"
run "$tmp/text.gz"
want_status 1
grep -q "not a valid ONNX model once gunzipped" "$tmp/err" || fail "gzip'd text"
check "a gzip'd ONNX file is read (NAME.onnx.gz is NAME); a truncated or non-ONNX one says so"

# ---- 9. small things that erode trust --------------------------------------

printf '\211PNG\r\n\032\n\0\0\0\rIHDR' >"$tmp/figure.png"
for f in figure.png figure.onnx figure.odl; do
	[ "$f" = figure.png ] || cp "$tmp/figure.png" "$tmp/$f"
	run "$tmp/$f"
	want_status 1
	[ "$(cat "$tmp/err")" = "$tmp/$f: error: neither an ONNX model nor an ODL file nor a ParaDL table: it is a PNG image" ] ||
		fail "$f: $(head -c 300 "$tmp/err")"
done
printf 'PK\003\004rest' >"$tmp/model.pt"
run "$tmp/model.pt"
grep -q 'it is a ZIP archive (torch.save writes one: export the model with torch.onnx.export)' \
	"$tmp/err" || fail "a checkpoint: $(head -c 300 "$tmp/err")"
check "a PNG or a checkpoint given as a model: one line saying what it is, not 50 stray bytes"

# the system is checked before the model is read, and a near name offered
run "$tmp/no-such-model.onnx" -s dgx-a10
want_status 1
[ "$(cat "$tmp/err")" = "oraclec: error: unknown system 'dgx-a10'; did you mean 'dgx-a100'? (--list-systems shows the built-in ones; a file name needs a '.' or a '/')" ] ||
	fail "system: $(cat "$tmp/err")"
run "$odl" -s zzzz
grep -q "unknown system 'zzzz' (--list-systems" "$tmp/err" || fail "a far name: $(cat "$tmp/err")"
run "$odl" --implementation pytroch
grep -q "unknown implementation 'pytroch'; did you mean 'pytorch'?" "$tmp/err" ||
	fail "implementation: $(cat "$tmp/err")"
check "an unknown system: 'did you mean', said before the model is read; implementations too"

# the Slurm plan asks the CPUs the cost model gave each rank's loader
run "$odl" -g 8 -s dgx-a100 --plan slurm -q
grep -qx '#SBATCH --cpus-per-task=16' "$tmp/out" || fail "dgx-a100: not 16 (pytorch's workers)"
run "$odl" -g 8 -s dgx-a100 --plan slurm -q --loader-workers 64
grep -qx '#SBATCH --cpus-per-task=16' "$tmp/out" || fail "not the node's 128 cores over 8 GPUs"
run "$odl" -g 4 --plan slurm -q --loader-workers 3
grep -qx '#SBATCH --cpus-per-task=3' "$tmp/out" || fail "--loader-workers 3"
check "the Slurm plan's --cpus-per-task: the loader's workers, at most the node's cores over its GPUs"

# ---- 6. charts a person can tell apart ---------------------------------------

if [ -n "$py" ]; then
	"$ORACLEC" "$onnx" -g 64 -s dgx-a100 -f svg -q >"$tmp/scaling.svg" 2>"$tmp/err" || fail "scaling"
	"$ORACLEC" "$onnx" -g 64 -f svg --plot breakdown -q >"$tmp/breakdown.svg" 2>>"$tmp/err" || fail "bars"
	"$ORACLEC" "$onnx" -g 64 -f svg --plot memory -q >"$tmp/memory.svg" 2>>"$tmp/err" || fail "memory"
	"$ORACLEC" "$onnx" -g 8 -f svg --plot layers -q >"$tmp/layers.svg" 2>>"$tmp/err" || fail "layers"
	"$ORACLEC" "$onnx" -g 8 --strategies pipeline -f svg --plot layers -q >"$tmp/cuts.svg" \
		2>>"$tmp/err" || fail "cuts"
	"$py" - "$tmp" >"$tmp/out" 2>>"$tmp/err" <<'PY' ||
import re, sys
d = sys.argv[1]
svg = open(d + "/scaling.svg").read()
# every series its own colour and its own dash, in both plots and the legend
series = re.findall(r'<g class="series" data-name="([a-z]+)" stroke="(#[0-9A-F]+)"[^>]*>\n'
                    r'(<path fill="none" stroke-width="2"(?: stroke-dasharray="([0-9 ]+)")?)?', svg)
colour, dash = {}, {}
for name, c, path, dsh in series:
    if name == "best":  # the third plot's: the best strategy's per GPU over one node's
        continue
    colour.setdefault(name, c)
    if path:
        dash.setdefault(name, dsh)
assert len(colour) == 11 and len(set(colour.values())) == 11, colour
assert len(dash) >= 8 and len(set(dash.values())) == len(dash), dash
legend = svg[svg.index('<g class="legend">'):]
legend = [l for l in legend[:legend.index("</g>")].split("\n") if l.startswith("<line")]
assert len(legend) == 11, legend
assert len({re.search(r'stroke="(#[0-9A-F]+)"', l).group(1) for l in legend}) == 11, legend
assert len({(re.findall(r'stroke-dasharray="([0-9 ]+)"', l) or [""])[0] for l in legend}) == 11
# tooltips with units
for t in re.findall(r"<title>([a-z]+: [0-9]+ GPUs?, [^<]*)</title>", svg):
    if t.startswith("best: "):  # per cent of one node's
        assert re.search(r", [0-9.]+ %$", t), t
        continue
    assert re.search(r", [0-9.]+ (?:[pnm\u00b5] ?)?s(?:: |$)", t), t
bars = re.findall(r'class="bar"[^>]*><title>[^:]*: ([^<]*)</title>',
                  open(d + "/breakdown.svg").read())
assert bars and all(re.fullmatch(r"[0-9.]+ (?:[pnm\u00b5]s|s)", b) for b in bars), bars
mem = re.findall(r'class="bar"[^>]*><title>[^:]*: ([^<]*)</title>', open(d + "/memory.svg").read())
assert mem and all(re.fullmatch(r"[0-9.]+ (?:[KMGT]i)?B", b) for b in mem), mem
# the per-layer chart draws the cuts only of a recommended pipeline
layers = open(d + "/layers.svg").read()
assert 'class="cut"' not in layers and "stages" not in layers and "cuts" not in layers
cuts = open(d + "/cuts.svg").read()
assert cuts.count('class="cut"') == 7, cuts.count('class="cut"')
assert "where the stages of the recommended pipeline end" in cuts
assert re.search(r"its time per micro-batch [0-9.]+ [m\u00b5]?s</title>", cuts)
PY
		fail "the charts do not tell the series apart, or lack units"
	check "charts: 11 series in 11 colours and 11 dashes; tooltips with units; cuts only of a recommended pipeline"
else
	tap_skip 1 "python3 not found"
fi

finish
