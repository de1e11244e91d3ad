#!/bin/sh
# probe.sh -- python3 -m oraclec.probe measures this machine's CPU
# (--device cpu --quick, a --budget that keeps it short) and oraclec reads
# what it wrote: system.odl with --implementation implementation.odl, the
# JSON report echoing the probe's system name, peak, sms and dispatch;
# probe.csv has its header and rows of every section run; --model writes
# ResNet-18's kernel table, which oraclec's reader reads and every keyed
# layer finds (tests/kernelcheck); a run stopped by SIGTERM leaves files
# oraclec reads and no temporaries; a bad -o exits 1 with one line and no
# traceback; a python3 without torch is named (tests/probe-args.sh has the
# rest of the arguments and files).  The
# kernel model the probe fits (kernel_time, model/kernel.c's formula) is
# checked on two hand-computed products, and the fits recover the
# parameters of synthetic data.  Skipped where no python3 with torch and
# numpy is found (./bootstrap --tests installs Debian's).  TAP.
. "${srcdir:=.}/tests/tap.sh"
tap_begin probe

tap_python 'import torch, numpy' \
	"no python3 with torch and numpy (./bootstrap --tests installs them)"
model=$srcdir/tests/data/onnx/resnet18.onnx

# one_line_error STATUS: the run failed cleanly (exit 1, one line on stderr
# naming the probe, no traceback, nothing on stdout)
one_line_error()
{
	status_why "$1" 1
	[ "$(wc -l <"$tmp/err")" -eq 1 ] || fail "stderr has $(wc -l <"$tmp/err") lines, not one"
	grep -q '^oraclec\.probe: ' "$tmp/err" || fail "stderr does not start with 'oraclec.probe: '"
	grep -q Traceback "$tmp/err" && fail "a traceback"
	[ -s "$tmp/out" ] && fail "wrote to stdout"
	return 0
}

# reads DIR: oraclec reads DIR/system.odl and DIR/implementation.odl (from
# DIR: the system names its implementation by a path beside it) and the
# JSON report gives back the probe's name, fp32 peak, sms and dispatch
reads()
{
	(cd "$1" && "$ORACLEC" "$model" -s system.odl --implementation implementation.odl \
		-q -f json) >"$tmp/json" 2>"$tmp/err" || { fail "oraclec: exit status $?"; return; }
	"$py" - "$1" "$tmp/json" <<-'EOF' >"$tmp/check" 2>&1 || fail "$(cat "$tmp/check")"
	import json, re, sys
	d, rep = sys.argv[1], json.load(open(sys.argv[2]))
	sysf = open(d + "/system.odl").read()
	imp = open(d + "/implementation.odl").read()
	unit = {"TFLOPS": 1e12, "GFLOPS": 1e9, "MFLOPS": 1e6, "s": 1, "ms": 1e-3, "us": 1e-6, "ns": 1e-9}
	def key(text, k):
	    m = re.search(r"^\s*%s = ([0-9.]+)([A-Za-z/]*);" % k, text, re.M)
	    return float(m.group(1)) * unit.get(m.group(2), 1)
	name = re.search(r"^system (\w+) \{", sysf, re.M).group(1)
	s, i = rep["system"], rep["implementation"]
	bad = []
	if s["name"] != name: bad.append("system name %s, the file's %s" % (s["name"], name))
	if abs(s["gpu"]["flops_fp32"] / key(sysf, "fp32") - 1) > 1e-3: bad.append("fp32")
	if s["gpu"]["sms"] != key(sysf, "sms"): bad.append("sms")
	if "dispatch =" in imp and abs(i["dispatch_s"] / key(imp, "dispatch") - 1) > 1e-3:
	    bad.append("dispatch")
	if i["framework"].find("(probed)") < 0: bad.append("framework")
	print("; ".join(bad)) if bad else None
	sys.exit(1 if bad else 0)
	EOF
}

# csv_ok FILE SECTIONS...: the header exactly, nine fields a row, numbers
# where numbers go, a row of every section named
csv_ok()
{
	f=$1
	shift
	"$py" - "$f" "$@" <<-'EOF' >"$tmp/check" 2>&1 || fail "$(cat "$tmp/check")"
	import csv, sys
	rows = list(csv.reader(open(sys.argv[1], newline="")))
	want = "section,op,precision,layout,shape,flops,bytes,seconds,kernel".split(",")
	bad = [] if rows and rows[0] == want else ["header %r" % (rows[:1],)]
	for r in rows[1:]:
	    if len(r) != 9:
	        bad.append("a row of %d fields: %r" % (len(r), r)); continue
	    for v in r[5:8]:
	        if v and not float(v) >= 0: bad.append("not a number: %r" % (r,))
	for sec in sys.argv[2:]:
	    if not any(r[0] == sec for r in rows[1:]): bad.append("no row of section " + sec)
	print("; ".join(bad[:3])) if bad else None
	sys.exit(1 if bad else 0)
	EOF
}

# -- the kernel model and the fits, without a device
"$py" - >"$tmp/out" 2>"$tmp/err" <<'EOF' || fail "$(cat "$tmp/out" "$tmp/err" | head -5)"
import math, random
from oraclec.probe_model import kernel_time, fit_kernel, fit_ring, ring_allreduce
# 64x64x64 on one SM, P 1 GFLOP/s, u 1, k0 0: one 64x64 tile (the smallest
# fits; the larger tiles compute 2-4 times the padding) at
# r(64,64)/r(128,128) = (4096/5376)/(16384/18944) = 0.880952 of the peak,
# 2*64^3 = 524288 FLOPs -> 5.951378e-4 s, above the bytes' 4.9152e-5 s,
# plus 10 us
t = kernel_time(64, 64, 64, 1, 4, 1e9, 1, 1.0, 0, 1e9, 1.0, 1e-5)
assert abs(t / 6.051378e-4 - 1) < 1e-6, t
# 128x128x4096 on 16 SMs of 1 GFLOP/s: one 128x128 tile split 16 ways (16
# tiles on 16 SMs, one wave) of K 256: 2*128*128*256 = 8388608 FLOPs at 1e9
# -> 8.388608e-3 s, plus the 16 partial results' 16*128*128*4 bytes at
# 1e12 B/s = 1.048576e-6 s; 64x64 split 4 ways (1.0240e-3 K a tile) gives
# 9.52e-3 s, 128x64 split 8 ways 8.96e-3 s
t = kernel_time(128, 128, 4096, 1, 4, 16e9, 16, 1.0, 0, 1e12, 1.0, 0)
assert abs(t / 8.389656576e-3 - 1) < 1e-9, t
# the fit recovers u per precision and k0 from noisy synthetic times
random.seed(1)
groups = {}
for prec, P, u in (("fp32", 1e12, 0.7), ("bf16", 4e12, 0.5)):
    rows = []
    for n in (16, 64, 100, 256, 300, 1000, 2048):
        for B in (1, 4):
            t = kernel_time(n, n, n, B, 4, P, 8, u, 24, 1e11, 0.9, 3e-6, fp32_peak=1e12)
            rows.append((n, n, n, B, 4, t * math.exp(random.gauss(0, 0.02))))
    groups[prec] = (P, rows)
f = fit_kernel(groups, 8, 1e11, 0.9, 3e-6)
assert abs(f["u"]["fp32"] - 0.7) < 0.02 and abs(f["u"]["bf16"] - 0.5) < 0.02, f["u"]
assert abs(f["k0"] - 24) < 4, f["k0"]
# k0 is fp32 steps: at bf16's 4x peak the same 24 steps' seconds are 96 of its own
assert kernel_time(64, 64, 64, 1, 4, 4e12, 1, 1.0, 24, 1e15, 1.0, 0, fp32_peak=1e12) == \
    kernel_time(64, 64, 64, 1, 4, 4e12, 1, 1.0, 96, 1e15, 1.0, 0)
# the ring: 4 ranks, 20 us, 10 GB/s
pts = [(m, ring_allreduce(m, 4, 20e-6, 10e9)) for m in (4, 64, 1024, 1 << 20, 1 << 24)]
a, b = fit_ring(pts, 4)
assert abs(a / 20e-6 - 1) < 0.01 and abs(b / 10e9 - 1) < 0.01, (a, b)
# the datasheet table by the names torch gives
from oraclec.probe_gpus import lookup
for name, want in (("NVIDIA H100 80GB HBM3", "H100-SXM5"), ("NVIDIA H100 PCIe", "H100-PCIe"),
                   ("NVIDIA A100-SXM4-40GB", "A100-SXM4-40GB"), ("NVIDIA A100 80GB PCIe",
                   "A100-PCIe-80GB"), ("Tesla V100-SXM2-16GB", "V100-SXM2"), ("NVIDIA L40S",
                   "L40S"), ("NVIDIA L4", "L4"), ("NVIDIA A10", "A10")):
    assert lookup(name)["name"] == want, (name, lookup(name))
assert lookup("NVIDIA A10G") is None and lookup("NVIDIA GeForce RTX 4090") is None
assert lookup("NVIDIA H100 80GB HBM3")["peak"]["bf16"] == 989.4e12
EOF
check "kernel_time on two hand-computed products; the fits recover synthetic parameters; known GPUs"

# -- a full disk while an output is written (every file the probe writes,
# collectives.txt too, goes through Out.write): one OutputError naming the
# file and the reason, the file before it untouched, no temporary left
mkdir "$tmp/full"
printf 'old\n' >"$tmp/full/collectives.txt"
"$py" - "$tmp/full" >"$tmp/out" 2>"$tmp/err" <<'EOF' || fail "$(cat "$tmp/out" "$tmp/err" | head -5)"
import errno, io, os, sys
from oraclec import probe
class Full(io.StringIO):
    def write(self, s):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
real = os.fdopen
def fdopen(fd, *a, **k):
    os.close(fd)
    return Full()
probe.os.fdopen = fdopen
out = probe.Out(sys.argv[1])
try:
    out.write("collectives.txt", "new\n")
    sys.exit("no error")
except probe.OutputError as e:
    want = "cannot write %s: No space left on device" % os.path.join(sys.argv[1], "collectives.txt")
    assert str(e) == want, str(e)
probe.os.fdopen = real
assert open(os.path.join(sys.argv[1], "collectives.txt")).read() == "old\n"
assert sorted(os.listdir(sys.argv[1])) == ["collectives.txt"], os.listdir(sys.argv[1])
EOF
check "a full disk mid-write: one error naming the file and ENOSPC, the old file kept, no temporary"

# -- a probe of this CPU, every section, kept short
"$py" -m oraclec.probe --device cpu --quick --budget 30 -o "$tmp/cpu" >"$tmp/out" 2>"$tmp/err"
status_why $? 0
for f in system.odl implementation.odl probe.csv; do
	[ -s "$tmp/cpu/$f" ] || fail "no $f"
done
grep -q Traceback "$tmp/err" && fail "a traceback"
grep -q 'kernel fit: tile_overhead .*error median' "$tmp/out" || fail "no fit error in the summary"
check "--device cpu --quick: the three files"

csv_ok "$tmp/cpu/probe.csv" matmul conv memory launch host allocator collectives ranks
check "probe.csv: the header, nine fields a row, rows of every section"

for k in gpu fp32 bf16 memory memory_bw eff_gemm eff_conv eff_memory kernel_latency sms \
	tile_overhead reserved gpus_per_node intra_bw intra_latency nic_bw nic_latency cpu_cores; do
	grep -q "^    $k = .*;  // ." "$tmp/cpu/system.odl" || fail "no commented $k"
done
grep -q '^    host_device = true;' "$tmp/cpu/system.odl" || fail "no host_device = true"
grep -q '^    implementation = "implementation.odl";' "$tmp/cpu/system.odl" ||
	fail "the system does not name implementation.odl"
grep -q '^    gpus_per_node = 2;' "$tmp/cpu/system.odl" || fail "gpus_per_node is not --ranks' 2"
grep -q 'placeholder' "$tmp/cpu/system.odl" && fail "a placeholder after every section ran"
for k in torch python date command; do
	grep -q "^// .*$k" "$tmp/cpu/system.odl" || fail "the header does not give the $k"
done
for k in 'base = "pytorch-2"' dispatch library_call step_tensor framework; do
	grep -q "^    $k" "$tmp/cpu/implementation.odl" || fail "implementation.odl lacks $k"
done
check "system.odl: every key commented, host_device, the provenance; implementation.odl's keys"

reads "$tmp/cpu"
check "oraclec reads system.odl and implementation.odl; the JSON echoes the probe's values"

# -- --model: ResNet-18's kernels as oraclec keys them, read back by
# oraclec's reader: every layer with a key found at the probe's batch
"$py" -m oraclec.probe --device cpu --quick --sections model --model "$model" --batch 1 \
	-o "$tmp/model" >"$tmp/out" 2>"$tmp/err"
status_why $? 0
grep -q Traceback "$tmp/err" && fail "a traceback"
grep -q '^    kernels = "kernels.csv";' "$tmp/model/system.odl" || fail "system.odl names no table"
for k in device torch date command model; do
	grep -q "^# $k\|^# .*$k" "$tmp/model/kernels.csv" || fail "kernels.csv does not give the $k"
done
"$ORACLEC" "$model" --layers -f json -q -b 1 >"$tmp/layers.json" 2>>"$tmp/err" ||
	fail "oraclec --layers: exit status $?"
"$KERNELCHECK" "$tmp/model/kernels.csv" "$tmp/layers.json" 1 >"$tmp/check" 2>>"$tmp/err" ||
	fail "kernelcheck: exit status $? ($(head -c 300 "$tmp/err"))"
grep -q '^layers 69 keyed 68 table 68 interpolated 0 none 0$' "$tmp/check" ||
	fail "not every keyed layer found: $(tail -1 "$tmp/check")"
(cd "$tmp/model" && "$ORACLEC" "$model" -s system.odl -q) >/dev/null 2>>"$tmp/err" ||
	fail "oraclec does not read the system that names the table"
check "--model: kernels.csv with its provenance; its rows found by all 68 of ResNet-18's keys"

# -- stopped by SIGTERM once it has measured something
"$py" -m oraclec.probe --device cpu --quick --sections matmul,conv -o "$tmp/cut" \
	>"$tmp/out" 2>"$tmp/err.all" &
pid=$!
i=0
while [ $i -lt 300 ]; do
	[ -f "$tmp/cut/probe.csv" ] && [ "$(wc -l <"$tmp/cut/probe.csv")" -ge 3 ] && break
	sleep 0.2
	i=$((i + 1))
done
kill -TERM $pid
wait $pid
st=$?
grep -v '^probe: ' "$tmp/err.all" >"$tmp/err"
one_line_error $st
grep -q 'interrupted (SIGTERM)' "$tmp/err" || fail "does not say it was interrupted"
csv_ok "$tmp/cut/probe.csv" matmul
reads "$tmp/cut"
extra=$(ls -A "$tmp/cut" | grep -v -x -e probe.csv -e system.odl -e implementation.odl)
[ -n "$extra" ] && fail "left $extra"
check "SIGTERM mid-run: exit 1, one line; probe.csv and the ODL files readable, no temporaries"

# -- -o that cannot be written
: >"$tmp/file"
"$py" -m oraclec.probe --device cpu -o "$tmp/file" >"$tmp/out" 2>"$tmp/err"
one_line_error $?
grep -q 'not a directory' "$tmp/err" || fail "does not say it is not a directory"
check "-o a file: exit 1, one line"

"$py" -m oraclec.probe --device cpu -o "$tmp/file/sub" >"$tmp/out" 2>"$tmp/err"
one_line_error $?
check "-o below a file: exit 1, one line"

# a directory that cannot be written in: /proc/self even for root
"$py" -m oraclec.probe --device cpu -o /proc/self >"$tmp/out" 2>"$tmp/err"
one_line_error $?
grep -q 'cannot write' "$tmp/err" || fail "does not say it cannot write"
if [ "$(id -u)" -ne 0 ]; then
	mkdir "$tmp/ro" && chmod 555 "$tmp/ro"
	"$py" -m oraclec.probe --device cpu -o "$tmp/ro" >"$tmp/out" 2>"$tmp/err"
	one_line_error $?
fi
check "-o an unwritable directory: exit 1, one line"

"$py" -m oraclec.probe --device tpu -o "$tmp/x" >"$tmp/out" 2>"$tmp/err"
status_why $? 2
grep -q Traceback "$tmp/err" && fail "a traceback"
"$py" -m oraclec.probe --sections matmul,nothing -o "$tmp/x" >"$tmp/out" 2>"$tmp/err"
status_why $? 2
grep -q "unknown section nothing" "$tmp/err" || fail "does not name the section"
check "usage errors exit 2"

# -- a python3 without torch (PATH's, where it has none) is named
nt=
for p in python3 python3.11 python3.12 python; do
	q=$(command -v "$p" 2>/dev/null) || continue
	"$q" -c 'import torch' 2>/dev/null || { nt=$q; break; }
done
if [ -n "$nt" ]; then
	"$nt" -m oraclec.probe --device cpu -o "$tmp/nt" >"$tmp/out" 2>"$tmp/err"
	one_line_error $?
	grep -q "has no torch: the probe needs PyTorch 1.13 or later" "$tmp/err" ||
		fail "does not say torch is missing"
	[ -e "$tmp/nt" ] && fail "created the directory"
	check "a python3 without torch: exit 1, one line naming it"
else
	n=$((n + 1))
	echo "ok $n # SKIP every python3 here has torch"
fi

finish
