#!/bin/sh
# probe-repeat.sh -- two probes of the model's kernels in a row, each
# measuring afresh (no --resume), and how far their per-row medians lie
# apart (issue 37.3: two probes must predict ResNet-18's data=2 step
# within 10 % of each other; this shows the rows that prediction will be
# made of).  Prints, over every time both tables have (forward and both
# gradients of every row), the distribution of the ratio second / first,
# and the rows whose spread the probes themselves flagged.  Run from the
# build tree:
#   sh bench/probe-repeat.sh [MODEL.onnx [BATCH [PYTHON]]]
src=$(cd "$(dirname "$0")/.." && pwd)
model=${1:-$src/tests/data/onnx/resnet18.onnx}
batch=${2:-8}
py=${3:-/usr/bin/python3}
ORACLEC=${ORACLEC:-$(pwd)/oraclec}
export ORACLEC
PYTHONPATH="$src/python${PYTHONPATH:+:$PYTHONPATH}"
export PYTHONPATH
tmp=$(mktemp -d "${TMPDIR:-/tmp}/probe-repeat.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
for run in 1 2; do
	t0=$(date +%s)
	"$py" -m oraclec.probe --device cpu --quick --sections model --model "$model" \
		--batch "$batch" --gpus 2 --strategies data -o "$tmp/p$run" >/dev/null 2>"$tmp/err$run" ||
		{ tail -3 "$tmp/err$run"; exit 1; }
	echo "probe $run: $(($(date +%s) - t0)) s, $(grep -c -v '^#' "$tmp/p$run/kernels.csv") lines" \
		"($(uptime | sed 's/.*load average: //') load)"
done
"$py" - "$tmp/p1/kernels.csv" "$tmp/p2/kernels.csv" <<'PY'
import csv, statistics, sys
def rows(path):
    body = [l for l in open(path) if not l.startswith("#")]
    r = csv.DictReader(body)
    return {(x["class"], x["precision"], x["layout"], x["n"], x["shape"]): x for x in r}
a, b = rows(sys.argv[1]), rows(sys.argv[2])
ratios, wide = [], 0
for k in sorted(set(a) & set(b)):
    wide += float(a[k]["spread"]) > 0.1 or float(b[k]["spread"]) > 0.1
    for part in ("fwd_s", "bwd_data_s", "bwd_weight_s"):
        if a[k][part] and b[k][part]:
            ratios.append((float(b[k][part]) / float(a[k][part]), k, part))
r = sorted(x[0] for x in ratios)
dev = sorted(abs(x - 1) for x in r)
q = lambda v, p: v[min(len(v) - 1, int(p * (len(v) - 1) + 0.5))]
print("rows in both: %d; times compared: %d; rows either probe flagged (spread > 10 %%): %d"
      % (len(set(a) & set(b)), len(r), wide))
print("ratio second/first: min %.3f  p10 %.3f  median %.3f  p90 %.3f  max %.3f"
      % (r[0], q(r, .1), statistics.median(r), q(r, .9), r[-1]))
print("|ratio - 1|: median %.1f %%, p90 %.1f %%; within 10 %%: %d of %d (%.0f %%)"
      % (100 * statistics.median(dev), 100 * q(dev, .9), sum(d <= .1 for d in dev), len(dev),
         100 * sum(d <= .1 for d in dev) / len(dev)))
tot = [sum(float(x[p]) for x in t.values() if x[p]) for t in (a, b)
       for p in ("fwd_s", "bwd_data_s", "bwd_weight_s")]
print("sum of every time: first %.4f s, second %.4f s, ratio %.3f"
      % (sum(tot[:3]), sum(tot[3:]), sum(tot[3:]) / sum(tot[:3])))
for x, k, part in sorted(ratios, key=lambda x: -abs(x[0] - 1))[:5]:
    print("  %.3f  %s %s n=%s %s" % (x, k[0], part, k[3], k[4]))
PY
