#!/bin/sh
# lockstep.sh -- thousands of GPUs in lockstep (issue 39): a measured
# collective table replaces the model's figure (a flat 10 GB/s bus
# bandwidth on 16 GPUs gives ResNet-50's fp32 gradients 19.2 ms of
# all-reduce), the system's jitter makes the slowest of N grow with N,
# --sync-bn prices batch norm's exchanges and writes them in plans, NCCL
# 2.3 has rings only, the stack's fusions shorten the compute, and a
# hostile table of collectives is refused with its file, line and column.
# TAP.  The JSON is read by python3; without it the script is skipped.
. "${srcdir:=.}/tests/tap.sh"
tap_begin lockstep
tap_python 'import json' "no python3"
onnx=$srcdir/examples/resnet50.onnx

# get FILE EXPR: EXPR (python, over the first strategy's `it`eration and
# the whole report `d`) of the JSON report in FILE
get()
{
	"$py" -c 'import json, sys
d = json.load(open(sys.argv[1]))
it = d["strategies"][0]["iteration"]
print(eval(sys.argv[2]))' "$1" "$2"
}

# refused KEY LINE: an implementation on pytorch with LINE is refused,
# exit 1, KEY named on stderr, nothing on stdout
refused()
{
	printf 'implementation bad { base = "pytorch"; %s }\n' "$2" >"$tmp/bad.odl"
	run "$onnx" --implementation "$tmp/bad.odl" -q
	want_status 1
	has err "$1"
	empty out
}

# report NAME KEYS ARGS...: data parallelism on dgx-1 under an
# implementation of KEYS, its JSON report in $tmp/NAME.json
report()
{
	name=$1 keys=$2
	shift 2
	printf 'implementation impl { %s }\n' "$keys" >"$tmp/$name.odl"
	run "$onnx" -s dgx-1 --implementation "$tmp/$name.odl" --strategies data -f json -q "$@"
	want_status 0
	cp "$tmp/out" "$tmp/$name.json"
}

# dgx-1 as a file with more keys ($1: the ODL lines to add)
system()
{
	"$ORACLEC" --list-systems | awk '/^system dgx_1 /{p=1} p{print} p&&/^}/{exit}' |
		sed '$d'
	printf '%s\n}\n' "$1"
}

# an nccl-tests all_reduce_perf run over RANKS ranks at a flat BUS GB/s
# bus bandwidth, 4 KiB to 1 GiB (src/common.cu's layout: out-of-place
# and in-place time, algbw, busbw)
flat()
{
	"$py" - "$1" "$2" <<'PY'
import sys
n, bus = int(sys.argv[1]), float(sys.argv[2])
print("# nThread 1 nGpus 1 minBytes 4096 maxBytes 1073741824 step: 2(factor) warmup iters: 5")
print("#\n# Using devices")
for r in range(n):
    print("#  Rank %2d Group  0 Pid %5d on node%02d device  %d [0x07] Tesla V100-SXM2-16GB"
          % (r, 1000 + r, r // 8, r % 8))
print("#\n#       size         count      type   redop    root     time   algbw   busbw"
      " #wrong     time   algbw   busbw #wrong")
print("#        (B)    (elements)                               (us)  (GB/s)  (GB/s)"
      "            (us)  (GB/s)  (GB/s)")
s = 4096
alg = bus * n / (2 * (n - 1))
while s <= 1 << 30:
    t = s / (alg * 1e9) * 1e6
    print("%12d  %12d     float     sum      -1  %8.1f  %6.2f  %6.2f      0  %8.1f  %6.2f"
          "  %6.2f      0" % (s, s // 4, t, alg, bus, t, alg, bus))
    s *= 2
print("# Out of bounds values : 0 OK\n# Avg bus bandwidth    : %g\n#" % bus)
PY
}

# ---- 2. a measured table replaces the model's figure ----------------------
{ echo "# Collective test starting: all_reduce_perf"; flat 16 10; } >"$tmp/ar16.txt"
system '    collectives = "ar16.txt";' >"$tmp/flat.odl"
run "$onnx" -s "$tmp/flat.odl" -g 16 --strategies data -f json -q
want_status 0
cp "$tmp/out" "$tmp/flat.json"
run "$onnx" -s dgx-1 -g 16 --strategies data -f json -q
cp "$tmp/out" "$tmp/model.json"
# 25,557,032 fp32 gradients over 16 x 10 / 30 GB/s of algorithm bandwidth
ms=$(get "$tmp/flat.json" '1e3 * (it["gradient_allreduce_s"] + it["overlapped_communication_s"])')
"$py" -c "import sys; sys.exit(abs($ms - 19.2) > 0.25 * 19.2)" ||
	fail "all-reduce of ResNet-50's gradients $ms ms, not 19.2 ms within 25 %"
"$py" -c "import sys; sys.exit(abs($ms - 19.17) > 0.01 * 19.17)" ||
	fail "all-reduce $ms ms, not 102.2 MB / 5.33 GB/s = 19.17 ms within 1 %"
m=$(get "$tmp/model.json" '1e3 * (it["gradient_allreduce_s"] + it["overlapped_communication_s"])')
[ "$m" != "$ms" ] || fail "the model's figure ($m ms) is the table's"
check "collectives = FILE: a flat 10 GB/s bus bandwidth on 16 GPUs gives ResNet-50's fp32 gradients 19.2 ms of all-reduce ($ms ms)"

# two runs, 8 and 32 ranks, in two files: each taken as measured at its
# rank count, and 16 ranks between them the model's figure times its
# ratio to the measured points, interpolated in log ranks
{ echo "# Collective test starting: all_reduce_perf"; flat 8 10; } >"$tmp/ar8.txt"
{ echo "# Collective test starting: all_reduce_perf"; flat 32 10; } >"$tmp/ar32.txt"
system '    collectives = "ar8.txt,ar32.txt";' >"$tmp/two.odl"
for g in 8 16 32; do
	run "$onnx" -s "$tmp/two.odl" -g $g --strategies data -f json -q
	want_status 0
	cp "$tmp/out" "$tmp/two$g.json"
	run "$onnx" -s dgx-1 -g $g --strategies data -f json -q
	cp "$tmp/out" "$tmp/model$g.json"
done
"$py" - "$tmp" >"$tmp/out" 2>"$tmp/err" <<'PY' || fail "$(cat "$tmp/out")"
import json, math, sys
def ms(f):
    it = json.load(open("%s/%s.json" % (sys.argv[1], f)))["strategies"][0]["iteration"]
    return 1e3 * (it["gradient_allreduce_s"] + it["overlapped_communication_s"])
W = 25557032 * 4
flat = lambda n: W / (10e9 * n / (2 * (n - 1))) * 1e3
for n in (8, 32):
    if abs(ms("two%d" % n) - flat(n)) > 0.01 * flat(n):
        print("%d ranks: %g ms, not the table's %g" % (n, ms("two%d" % n), flat(n)))
r8, r32 = flat(8) / ms("model8"), flat(32) / ms("model32")
want = ms("model16") * (r8 + (r32 - r8) * 0.5)
if abs(ms("two16") - want) > 0.01 * want:
    print("16 ranks: %g ms, not the model's %g x %g = %g" % (
        ms("two16"), ms("model16"), want / ms("model16"), want))
PY
[ -s "$tmp/out" ] && fail "$(cat "$tmp/out")"
check "collectives: runs at 8 and 32 ranks as measured; 16 between them by the model's shape"

# ---- 3. the slowest of N --------------------------------------------------
# a rank's own work in an iteration (python over its JSON), what skew_s scales
own="own = lambda t: t['compute_s'] + t['bubble_s'] + t['reducer_s'] + t['weight_update_s'] + \\
    t['recompute_s'] + t['dispatch_s'] + t['input_copies_s'] + t['sync_bn_s']"
# dgx-1 without its spread across GPUs, with a step-to-step jitter; then
# with neither
system '    jitter = 0.02;' | sed '/^    gpu_spread/d' >"$tmp/jitter.odl"
system '' | sed '/^    gpu_spread/d' >"$tmp/steady.odl"
last=0
for g in 8 64 1024 4096; do
	run "$onnx" -s "$tmp/jitter.odl" -g $g -b 32 --strategies data -f json -q
	want_status 0
	cp "$tmp/out" "$tmp/j$g.json"
	s=$(get "$tmp/j$g.json" 'it["skew_s"]')
	"$py" -c "import sys; sys.exit(not $s > $last)" || fail "skew_s $s on $g GPUs, not above $last"
	last=$s
done
run "$onnx" -s "$tmp/steady.odl" -g 1024 -b 32 --strategies data -f json -q
[ "$(get "$tmp/out" 'it["skew_s"]')" = 0.0 ] || fail "skew_s without jitter or gpu_spread"
d=$(get "$tmp/j1024.json" 'it["total_s"]')
"$py" -c "import json, sys
a = json.load(open('$tmp/out'))['strategies'][0]['iteration']
b = json.load(open('$tmp/j1024.json'))['strategies'][0]['iteration']
sys.exit(abs(b['total_s'] - a['total_s'] - b['skew_s']) > 1e-9)" ||
	fail "total_s does not add skew_s"
# E[max of N standard normals]: 1.4236 for 8, 3.6261 for 4,096 (the
# integral of x n phi(x) Phi(x)^(n-1), taken apart in steps of 1e-3)
r=$(get "$tmp/j4096.json" 'it["skew_s"]')
"$py" -c "
import json, sys
a = json.load(open('$tmp/j8.json'))['strategies'][0]['iteration']
b = json.load(open('$tmp/j4096.json'))['strategies'][0]['iteration']
$own
sys.exit(abs(a['skew_s'] / (0.02 * own(a)) - 1.4236) > 1e-4 or
         abs(b['skew_s'] / (0.02 * own(b)) - 3.6261) > 1e-4)" ||
	fail "skew_s is not jitter x the ranks' own work x E[max of N normals] (1.4236, 3.6261)"
check "jitter: skew_s grows from 8 to 4,096 GPUs ($r s on 4,096), part of total_s"

# The built-in dgx-1's spread across GPUs (0.015, Sinha et al. SC'22) alone
# gives 0.015 x own x 3.2482 on 1,024 GPUs; with a jitter of 0.02 the two
# add as independent normals: sqrt(0.02^2 + 0.015^2) = 0.025.
run "$onnx" -s dgx-1 -g 1024 -b 32 --strategies data -f json -q
cp "$tmp/out" "$tmp/spread.json"
system '    jitter = 0.02;' >"$tmp/both.odl"
run "$onnx" -s "$tmp/both.odl" -g 1024 -b 32 --strategies data -f json -q
"$py" -c "
import json, sys
a = json.load(open('$tmp/spread.json'))
b = json.load(open('$tmp/out'))['strategies'][0]['iteration']
$own
t = a['strategies'][0]['iteration']
sys.exit(a['system']['gpu_spread'] != 0.015 or
         abs(t['skew_s'] / (0.015 * own(t)) - 3.2482) > 1e-4 or
         abs(b['skew_s'] / (0.025 * own(b)) - 3.2482) > 1e-4)" ||
	fail "gpu_spread: skew_s is not sqrt(jitter^2 + gpu_spread^2) x own x 3.2482"
check "gpu_spread: dgx-1's 0.015 prices the slowest of 1,024 GPUs, and adds to a jitter in quadrature"

# ---- 4. synchronised batch norm ---------------------------------------------
run "$onnx" -s dgx-1 -g 1024 -b 16 --strategies data -f json -q
cp "$tmp/out" "$tmp/s1.json"
run "$onnx" -s dgx-1 -g 1024 -b 16 --strategies data --sync-bn 2 -f json -q
want_status 0
cp "$tmp/out" "$tmp/s2.json"
s=$(get "$tmp/s2.json" 'it["sync_bn_s"]')
"$py" -c "
import json, sys
a = json.load(open('$tmp/s1.json'))['strategies'][0]['iteration']
b = json.load(open('$tmp/s2.json'))['strategies'][0]['iteration']
sys.exit(not (a['sync_bn_s'] == 0 and b['sync_bn_s'] > 0 and b['total_s'] > a['total_s']))" ||
	fail "--sync-bn 2 does not slow ResNet-50 at 16 a GPU on 1,024 GPUs"
run "$onnx" -s dgx-1 -g 1024 -b 16 --strategies data --sync-bn 2
has out "sync BN"
run "$onnx" -s dgx-1 -g 16 -b 16 --strategies data --sync-bn 4 --plan pytorch
want_status 0
has out '"sync_batchnorm_group_size": 4'
check "--sync-bn 2 slows ResNet-50 at 16 samples a GPU on 1,024 GPUs ($s s); plans name the groups"

# one rule for the report and the plan: a data dimension K does not cut
# into groups of one size is not feasible, with K and the dimension named,
# in every strategy (the hybrids keep the grids it divides); the plan of
# such a grid is refused with that reason, and the plan of the ranking's
# best has K groups of one size
refusal="--sync-bn 3 does not divide the data dimension's 16 ranks into groups of equal size"
run "$onnx" -s dgx-1 -g 16 -b 16 --sync-bn 3 -f json -q
want_status 0
"$py" -c "
import json, sys
d = json.load(open('$tmp/out'))
s = {k['name']: k for k in d['strategies']}
bad = [k['name'] for k in d['strategies'] if k['feasible'] and
       k['grid'].get('data', 1) % min(3, k['grid'].get('data', 1))]
sys.exit(bad or s['data']['feasible'] or s['data']['reason'] != sys.argv[1] or
         s['data']['iteration']['total_s'] is not None or
         s['df']['grid'].get('data') != 2 or not s['df']['feasible'])" "$refusal" ||
	fail "--sync-bn 3 on 16 GPUs: data=16 is not refused with its reason, or a feasible grid's data dimension is not cut evenly"
run "$onnx" -s dgx-1 -g 16 -b 16 --sync-bn 3
has out "$refusal"
run "$onnx" -s dgx-1 -g 16 -b 16 --grid data=16 --sync-bn 3 --plan pytorch
want_status 1
has err "data=16 on dgx-1: $refusal; no plan written"
empty out
run "$onnx" -s dgx-1 -g 16 -b 16 --strategies data --sync-bn 3 --plan pytorch
want_status 1
has err "no strategy fits on 16 GPUs of dgx-1: no plan written"
empty out
run "$onnx" -s dgx-1 -g 16 -b 16 --strategies data,df --sync-bn 3 --plan pytorch
want_status 0
has out '"sync_batchnorm_group_size": 2'
check "--sync-bn 3 on 16 GPUs: data=16 refused in the report and the plan (K and 16 named), df's data=2 kept"

# ---- 1. NCCL's versions and the system's trees -----------------------------
for v in 2.3.7 2.4.6; do
	report "n$v" "base = \"pytorch\"; nccl_version = \"$v\";" -g 1024 -b 32
done
"$py" -c "
import json, sys
t = lambda v: (lambda i: i['gradient_allreduce_s'] + i['overlapped_communication_s'])(
    json.load(open('$tmp/n%s.json' % v))['strategies'][0]['iteration'])
sys.exit(not t('2.3.7') > 1.5 * t('2.4.6'))" ||
	fail "NCCL 2.3's rings over 128 nodes are not dearer than 2.4's trees"
refused nccl_version 'nccl_version = "3.1";'
check "nccl_version: 2.3 runs rings only (latency in N), 2.4 trees (in log N); 3.1 refused"

# the two-stage all-reduce of NVIDIA's Horovod (HOROVOD_ALLREDUCE_MODE=1):
# on NCCL 2.3's rings over 80 DGX-1s, 158 + 14 steps against 1,278
for a in flat hierarchical; do
	report "$a" "base = \"horovod\"; nccl_version = \"2.3.7\"; overlap_grad = false;
    allreduce = \"$a\";" -g 640 -b 26 --precision fp16
done
"$py" -c "
import json, sys
t = lambda a: json.load(open('$tmp/%s.json' % a))['strategies'][0]['iteration'][
    'gradient_allreduce_s']
sys.exit(not t('hierarchical') < 0.6 * t('flat'))" ||
	fail "the hierarchical all-reduce over 80 nodes is not cheaper than the flat ring"
[ "$(get "$tmp/hierarchical.json" "d['implementation']['allreduce']")" = hierarchical ] ||
	fail "the report does not name the hierarchical all-reduce"
refused allreduce 'allreduce = "ring";'
check "allreduce: \"hierarchical\" is a reduce-scatter, 1/k across, an all-gather; \"ring\" refused"

# Fujitsu's Horovod (HOROVOD_MULTIPLE_TRANSFER_MODE=1, _CUBIC_TRANSFER_MODE=1,
# FIXED_TRANSFERSIZE=3): ResNet-50's 161 gradients in groups of 3, 21, 57
# and 80 tensors from the output's end, each all-reduced once it is ready,
# hide behind backward most of what one 64 MB bucket after it leaves
# exposed; four collectives cost more start-ups than one
for a in one cubic; do
	keys='base = "horovod"; nccl_version = "2.4.2"; bucket = 64MB;'
	[ $a = cubic ] && keys="$keys grad_group_tensors = 3; grad_group_growth = \"cubic\";"
	report "$a" "$keys" -g 2048 -b 42 --precision fp16
done
"$py" -c "
import json, sys
it = lambda a: json.load(open('$tmp/%s.json' % a))['strategies'][0]['iteration']
one, cubic = it('one'), it('cubic')
x = lambda i: i['exposed_communication_s']
h = lambda i: i['overlapped_communication_s']
sys.exit(not (h(one) < 1e-12 and 0 < x(cubic) < 0.5 * x(one) and h(cubic) > 0
              and x(cubic) + h(cubic) > x(one)))" ||
	fail "cubic gradient groups do not hide the exchange that one bucket exposes"
[ "$(get "$tmp/cubic.json" "d['implementation']['grad_group_growth']")" = cubic ] &&
	[ "$(get "$tmp/cubic.json" "d['implementation']['grad_group_tensors']")" = 3 ] ||
	fail "the report does not name the gradient groups"
refused "'grad_group_growth' must be \"fixed\", \"quadratic\" or \"cubic\"" \
	'grad_group_growth = "exponential";'
refused "'grad_group_tensors' must be 1 or more" 'grad_group_growth = "cubic";'
refused "'grad_group_tensors' must be 0 or more, and 0 where grad_groups is set" \
	'grad_groups = 16; grad_group_tensors = 3;'
check "grad_group_tensors, grad_group_growth: Fujitsu's growing groups hide the exchange; bad values refused"

# ---- 5. fusions as implementation data --------------------------------------
cat >"$tmp/fused.odl" <<'EOF'
implementation fused { base = "pytorch"; fuse_bn_relu = true; fuse_bn_add_relu = true;
    cuda_graphs = true; }
EOF
run "$onnx" -s dgx-1 -b 64 --precision fp16 --channels-last -f json -q
cp "$tmp/out" "$tmp/eager.json"
run "$onnx" -s dgx-1 --implementation "$tmp/fused.odl" -b 64 --precision fp16 \
	--channels-last -f json -q
want_status 0
cp "$tmp/out" "$tmp/fused.json"
"$py" -c "
import json, sys
a = json.load(open('$tmp/eager.json'))['strategies'][0]['iteration']
b = json.load(open('$tmp/fused.json'))['strategies'][0]['iteration']
sys.exit(not (b['compute_s'] < 0.95 * a['compute_s'] and b['host_s'] < 0.05 * a['host_s']))" ||
	fail "fusions do not shorten the compute by 5 %, or CUDA graphs leave the host's cost"
check "fuse_bn_relu, fuse_bn_add_relu: fewer passes over memory; cuda_graphs: no operator's CPU cost"

# ---- 2. hostile tables of collectives ---------------------------------------
# case NAME WANT TEXT: a table holding TEXT is refused at WANT (file:line:col
# and message), exit status 1, nothing on stdout
hostile()
{
	printf '%b' "$3" >"$tmp/$1.txt"
	system "    collectives = \"$1.txt\";" >"$tmp/$1.odl"
	run "$onnx" -s "$tmp/$1.odl" -g 16 -q
	want_status 1
	empty out
	grep -q -F -e "$1.txt:$2" "$tmp/err" || fail "$1: stderr lacks '$1.txt:$2'"
	[ "$(wc -l <"$tmp/err")" -eq 1 ] || fail "$1: $(wc -l <"$tmp/err") lines on stderr"
}
head='# Collective test starting: all_reduce_perf\n# nranks 16\n'
hostile zero "3:34: error: time '0.00'" \
	"$head        4096  1024 float sum -1  0.00 1.0 1.0 0  0.00 1.0 1.0 0\n"
hostile size "3:3: error: size '4x'" "$head  4x  1024 float sum -1  1.0 1.0 1.0 0  1.0 1.0 1.0 0\n"
hostile which "1:1: error: which collective" "# nranks 16\n  4096 1024 float sum -1 1.0 1 1 0 1.0 1 1 0\n"
hostile ranks "1:1: error: how many ranks" \
	"# Collective test starting: all_reduce_perf\n  4096 1024 float sum -1 1.0 1 1 0 1.0 1 1 0\n"
hostile again "4:" "$head  4096 1024 float sum -1 1.0 1 1 0 1.0 1 1 0\n  4096 1024 float sum -1 1.0 1 1 0 1.0 1 1 0\n"
hostile twice "4:1: error: a second all_reduce run" \
	"$head  4096 1024 float sum -1 1.0 1 1 0 1.0 1 1 0\n$head  4096 1024 float sum -1 1.0 1 1 0 1.0 1 1 0\n"
hostile nul "3:1: error: a NUL byte" "$head\0\n"
hostile fields "3:" "$head  4096 1024 float\n"
hostile big "3:3: error: size" "$head  9999999999999999999999 1 float sum -1 1.0 1 1 0 1.0 1 1 0\n"
hostile neg "2:" "# Collective test starting: all_reduce_perf\n# nranks -3\n"
# numbers as nccl-tests prints them: decimal, never hexadecimal, inf or nan
hostile hexsize "3:3: error: size '0x1000'" \
	"$head  0x1000  1024 float sum -1  1.0 1.0 1.0 0  1.0 1.0 1.0 0\n"
hostile hextime "3:34: error: time '0x1p1'" \
	"$head        4096  1024 float sum -1  0x1p1 1.0 1.0 0  1.0 1.0 1.0 0\n"
hostile inftime "3:34: error: time 'inf'" \
	"$head        4096  1024 float sum -1  inf 1.0 1.0 0  1.0 1.0 1.0 0\n"
hostile hexranks "2:" "# Collective test starting: all_reduce_perf\n# nranks 0x10\n"
hostile name "1:" "# Collective test starting: all_bogus_perf\n"
# every row wrong: the first alone is named
hostile rows "3:34: error: time '0.00'" \
	"$head        4096  1024 float sum -1  0.00 1.0 1.0 0  0.00 1.0 1.0 0\n        8192  2048 float sum -1  0.00 1.0 1.0 0  0.00 1.0 1.0 0\n"
# the same run in three files: the second file's run alone is named
printf "$head  4096 1024 float sum -1 1.0 1 1 0 1.0 1 1 0\n" >"$tmp/same.txt"
system '    collectives = "same.txt,same.txt,same.txt";' >"$tmp/same.odl"
run "$onnx" -s "$tmp/same.odl" -g 16 -q
want_status 1
empty out
[ "$(wc -l <"$tmp/err")" -eq 1 ] || fail "same: $(wc -l <"$tmp/err") lines on stderr"
printf '' >"$tmp/empty.txt"
system '    collectives = "empty.txt";' >"$tmp/empty.odl"
run "$onnx" -s "$tmp/empty.odl" -g 16 -q
want_status 1
empty out
grep -q "empty.odl:[0-9]*:[0-9]*: error:" "$tmp/err" || fail "empty: not at the system's key"
system '    collectives = "missing.txt";' >"$tmp/missing.odl"
run "$onnx" -s "$tmp/missing.odl" -g 16 -q
want_status 1
grep -q "missing.odl:[0-9]*:[0-9]*: error: cannot read" "$tmp/err" || fail "missing: not reported"
check "hostile tables of collectives: one diagnostic at file:line:col, exit status 1, no output"

# 2^20 rows, the most a file holds (docs/limits.md), each a size of its
# own: read in about a second (a size looked for among the run's rows
# took 12 minutes); under timeout(1) where there is one
{
	printf '# Collective test starting: all_reduce_perf\n# nranks 16\n'
	awk 'BEGIN { for (i = 1; i <= 1048576; i++) printf "%d 1 float sum -1 1.0 1 1 0 1.0 1 1 0\n", 4 * i }'
} >"$tmp/rows.txt"
system '    collectives = "rows.txt";' >"$tmp/rows.odl"
guard=
command -v timeout >/dev/null 2>&1 && guard="timeout 60"
$guard "$ORACLEC" "$onnx" -s "$tmp/rows.odl" -g 16 --strategies data -q >"$tmp/out" 2>"$tmp/err"
status_why $? 0
guard=
rm -f "$tmp/rows.txt"
check "a table of 2^20 rows is read (no search row by row)"

# ---- 6. scaling relative to one node -------------------------------------------
run "$onnx" -s dgx-1 --implementation "$tmp/n2.3.7.odl" -g 1024 -b 32 --sweep -f json -q
want_status 0
"$py" - "$tmp/out" >"$tmp/why" <<'PY' || fail "$(cat "$tmp/why")"
import json, sys
d = json.load(open(sys.argv[1]))
sw = d["sweep"]
per = {e["gpus"]: e["strategies"] for e in sw}
rate = lambda g: {s["name"]: s for s in per[g]}[
    [e for e in sw if e["gpus"] == g][0]["best"]]["throughput_samples_per_s"] / g
for e in sw:
    want = rate(e["gpus"]) / rate(8)
    if abs(e["per_gpu_vs_node"] - want) > 1e-9 * want:
        sys.exit("%d GPUs: per_gpu_vs_node %g, not %g" % (e["gpus"], e["per_gpu_vs_node"], want))
v = [e["per_gpu_vs_node"] for e in sw if e["gpus"] >= 8]
if v[0] != 1 or not all(a > b for a, b in zip(v, v[1:])):
    sys.exit("per GPU over one node is not 1 at 8 GPUs falling to 1,024: %s" % v)
PY
run "$onnx" -s dgx-1 --implementation "$tmp/n2.3.7.odl" -g 1024 -b 32 --sweep -q
has out "per GPU: the best's samples/s a GPU over one node's (8 GPUs)"
grep -q '^      8 .*    1.000  data (data=8)$' "$tmp/out" || fail "the text's 8 GPUs are not 1.000"
run "$onnx" -s dgx-1 --implementation "$tmp/n2.3.7.odl" -g 1024 -b 32 --sweep -q -f html
has out "samples/s a GPU, % of one node&#39;s (8 GPUs)"
check "--sweep: per-GPU throughput over one node's, 1 at a node and falling past it (JSON, text, HTML)"

# ---- 2. the probe measures the same (needs torch) ---------------------------
if "$py" -c 'import torch, numpy' 2>/dev/null; then
	"$py" -m oraclec.probe -o "$tmp/probe" --quick --sections launch --collectives \
		>"$tmp/out" 2>"$tmp/err"
	status=$?
	want_status 0
	for c in all_reduce all_gather broadcast; do
		grep -q "^# Collective test starting: ${c}_perf\$" "$tmp/probe/collectives.txt" ||
			fail "collectives.txt lacks a $c run"
	done
	grep -q '^    collectives = "collectives.txt";' "$tmp/probe/system.odl" ||
		fail "system.odl does not name collectives.txt"
	grep -q '^    jitter = [0-9.e-]*;' "$tmp/probe/system.odl" || fail "system.odl has no jitter"
	run "$onnx" -s "$tmp/probe/system.odl" -g 2 -b 2 --strategies data -f json -q
	want_status 0
	check "probe --collectives: nccl-tests' format at 2 ranks (gloo), which oraclec reads, and the jitter"
else
	n=$((n + 1))
	echo "ok $n # SKIP probe --collectives: $py has no torch"
fi

finish
