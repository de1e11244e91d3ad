#!/bin/sh
# hostile.sh -- what a red team found (issue 33): legal inputs that took
# quadratic time, plans Megatron-LM refuses, numbers that were plausible
# but wrong, paths taken from the wrong directory, and small
# inconsistencies between options and files.  TAP, with the plan at the
# end.  No case is timed; a case that must end runs under timeout(1)
# where there is one.
#
#   srcdir=. ORACLEC=./oraclec sh tests/hostile.sh

. "${srcdir:=.}/tests/tap.sh"
tap_begin hostile

guard=
# 300 s: calibrate on 2,000 runs fits ten parameters from five starts, 38 s
# on a loaded 2-core machine and two to three times that under ASan+UBSan;
# what the guard catches took hours
command -v timeout >/dev/null 2>&1 && guard="timeout 300"
runs=$srcdir/validation/abci-measured.csv
models=$srcdir/validation/models
model=$srcdir/examples/resnet50.odl

# run ARGS...: runs oraclec in $tmp (under the guard); sets `status`,
# leaves $tmp/out and $tmp/err.
run()
{
	(cd "$tmp" && exec $guard "$ORACLEC" "$@") >"$tmp/out" 2>"$tmp/err"
	status=$?
}

lacks()
{
	grep -F -q -e "$2" "$tmp/$1" && fail "std$1 has '$2'"
	return 0
}

# refused STATUS MESSAGE ARGS...: exit STATUS, stderr holding MESSAGE,
# nothing on stdout, no -o file left.
refused()
{
	_st=$1 _msg=$2
	shift 2
	rm -f "$tmp/o.out"
	run "$@" -o o.out
	want_status "$_st"
	has err "$_msg"
	empty out
	[ -e "$tmp/o.out" ] && fail "left the output file"
	return 0
}

# rows N [TIMES]: N rows of the ABCI runs repeated on stdout; with TIMES,
# each configuration measured TIMES times (dataset_size grows by one every
# TIMES rounds of the runs).
rows()
{
	awk -v n="$1" -v every="${2:-0}" '
		NR == 1 { print; next }
		{ row[m++] = $0 }
		END {
			for (i = 0; i < n; i++) {
				r = row[i % m]
				if (every > 0) {
					k = split(r, f, ",")
					d = f[5] ~ /^"/ ? 10 : 9
					f[d] += int(i / (m * every))
					r = f[1]
					for (j = 2; j <= k; j++)
						r = r "," f[j]
				}
				print r
			}
		}' "$runs"
}

# ---- 1. calibrate and validate stay near-linear in the rows ------------

# 2,000 rows, 1,008 configurations of (mostly) two runs each: a fit per row took
# hours; the leave-one-out from the fit's influence takes one fit, and the
# fit predicts each configuration once.  A fit of 1,000 configurations or
# more says how it goes, a line a start.
rows 2000 2 >"$tmp/m2000.csv"
run calibrate m2000.csv --models "$models" --system abci --optimizer adam -o cal.odl
want_status 0
has out "(2000 runs): "
has out "leave-one-out"
has err "oraclec: calibrate: 2000 runs, 1008 configurations: fitting 10 parameters, start 1 of 5"
grep -q '^system abci_calibrated {' "$tmp/cal.odl" || fail "no calibrated system written"
check "calibrate on 2,000 runs ends, with a progress line a start"

# -q drops the progress lines (the same fit on repeated rows: 21
# configurations, under the line's threshold, so this run says nothing
# either way; the threshold is a count, never a time)
rows 2000 >"$tmp/r2000.csv"
run calibrate r2000.csv --models "$models" --system abci --optimizer adam -o cal.odl -q
want_status 0
empty err
has out "(2000 runs): "
check "calibrate on 2,000 repeated runs is quiet"

# 100,000 rows (the limit) of validate: Kendall's tau over every pair took
# 33 s and counted 5e9 pairs in an int
rows 100000 >"$tmp/m100000.csv"
run validate m100000.csv --models "$models" --system abci --optimizer adam
want_status 0
has out "all        100000 "
has out "tau        4761904761 "
check "validate on 100,000 runs ends and counts its 4.8e9 pairs"

# ---- 5. plausible but wrong numbers ------------------------------------

head='model,strategy,gpus,grid,global_batch,dataset_size,measured_iteration_s,paradl_projected_iteration_s'
# a run beyond its strategy's limit (4096 rows of spatial split) and one
# that is predicted
printf '%s\n' "$head" 'resnet50,spatial,4096,spatial=4096,64,1281167,0.5,' \
	'resnet50,data,4,data=4,64,1281167,0.2,' >"$tmp/np.csv"
run validate np.csv --models "$models"
want_status 0
lacks out "%"
grep -q '^resnet50   spatial    4096 spatial=4096               0.5000          -        -          -        -  more GPUs than rows' \
	"$tmp/out" || fail "the unpredicted run's line is not '-' in each column"
check "validate: a run it cannot predict prints '-' in the prediction's column, not '%10s'"

# a system of 1 FLOP/s: a prediction of 5e11 s stays in its column
cat >"$tmp/slow.odl" <<EOF
system slow {
    fp32 = 1FLOPS;
    memory = 16GiB;
    memory_bw = 900GB/s;
    gpus_per_node = 4;
    intra_bw = 50GB/s;
    intra_latency = 9us;
    nic_bw = 7GB/s;
    nic_latency = 10us;
}
EOF
run validate np.csv --models "$models" -s slow.odl
want_status 0
grep -q '^resnet50   data          4 data=4                     0.2000  5.278e+11    0.000 ' \
	"$tmp/out" || fail "the prediction of 5e11 s is not '5.278e+11' in its column"
check "validate: a prediction past 1e5 s prints in %g form within its column"

# calibrating on runs of which none can be predicted is an error
head -n 2 "$tmp/np.csv" >"$tmp/np1.csv"
refused 1 "np1.csv:2:1: error: the run cannot be predicted on abci (more GPUs than rows in the first layer's output): nothing to calibrate on" \
	calibrate np1.csv --models "$models" -s abci
printf '%s\n' 'resnet50,spatial,8192,spatial=8192,64,1281167,0.7,' >>"$tmp/np1.csv"
refused 1 "np1.csv:2:1: error: none of the 2 runs can be predicted on abci (this one: more GPUs than rows in the first layer's output): nothing to calibrate on" \
	calibrate np1.csv --models "$models" -s abci
check "calibrate: no run that can be predicted is an error, and no system is written"
run calibrate np.csv --models "$models" -o cal.odl
want_status 0
grep -q ' -  not predicted$' "$tmp/out" || fail "the run not predicted is not said to be"
has out "(2 runs): "
check "calibrate: a run it cannot predict is 'not predicted', not 'calibrated'"

# absurd measured times are refused where they are read, at their column
for m in 1e300 1e-300 2e6 5e-7; do
	printf '%s\n' "$head" "resnet50,ds,8,\"data=2,spatial=4\",64,1281167,$m,0.5" >"$tmp/abs.csv"
	v=$(awk -v m="$m" 'BEGIN { printf "%g", m }')
	refused 1 "abs.csv:2:45: error: measured_iteration_s $v is out of range (1e-6 to 1e6 seconds)" \
		validate abs.csv --models "$models"
done
printf '%s\n' "$head" 'resnet50,ds,8,"data=2,spatial=4",64,1281167,0.25,1e300' >"$tmp/abs.csv"
refused 1 "abs.csv:2:50: error: paradl_projected_iteration_s 1e+300 is out of range (1e-6 to 1e6 seconds)" \
	validate abs.csv --models "$models"
printf '%s\n' "$head" 'resnet50,ds,8,"data=2,spatial=4",64,1281167,1e6,1e-6' >"$tmp/abs.csv"
run validate abs.csv --models "$models"
want_status 0
check "validate: times outside 1e-6 to 1e6 s refused at their line and column; the edges read"

# a row of more fields than the header is refused as one of fewer is; a
# number is written as the CSV writes numbers: ' 5' and 0x10 refused as
# '5 ' was (issue 40.11)
printf '%s\n' "$head" 'resnet50,data,4,data=4,64,1281167,0.2,,extra' >"$tmp/wide.csv"
refused 1 "wide.csv:2:1: error: row has 9 fields where the header has 8 columns" \
	validate wide.csv --models "$models"
printf '%s\n' "$head" 'resnet50,data,4,data=4,64,1281167' >"$tmp/narrow.csv"
refused 1 "narrow.csv:2:1: error: row has 6 fields where the header has 8 columns" \
	validate narrow.csv --models "$models"
for v in ' 4' '4 ' 0x4 4e0x; do
	printf '%s\n' "$head" "resnet50,data,$v,data=4,64,1281167,0.2," >"$tmp/num.csv"
	refused 1 "num.csv:2:15: error: gpus, global_batch and dataset_size must be positive numbers" \
		validate num.csv --models "$models"
done
printf '%s\n' "$head" 'resnet50,data,4e0,data=4,+64,1281167.0,2e-1,' >"$tmp/num.csv"
run validate num.csv --models "$models"
want_status 0
check "validate: a row's fields as many as the header's; numbers decimal, no blank, no 0x"

# an implementation file a run names that does not parse: the error in
# it, then a note at the row and column that named it (issue 40)
printf 'implementation w {\n    halo = "x";\n}\n' >"$tmp/badimpl.odl"
printf '%s\n' "$head,implementation" 'resnet50,data,4,data=4,64,1281167,0.2,,badimpl.odl' \
	>"$tmp/bi.csv"
refused 1 "badimpl.odl:2:12: error: implementation 'w': 'halo' must be \"pairwise\" or \"chain\"" \
	validate bi.csv --models "$models"
has err "bi.csv:2:40: note: 'badimpl.odl' is the implementation this run names"
check "validate: an implementation file of a row that does not parse is named with the row"

# ---- 6. an implementation file named by a system file -------------------

mkdir "$tmp/sys" "$tmp/run" "$tmp/cal"
# sysfile IMPL [LINE]: $tmp/sys/sys.odl naming the implementation IMPL,
# with LINE among its keys
sysfile()
{
	cat >"$tmp/sys/sys.odl" <<EOF
system mine {
    fp32 = 15TFLOPS;
    memory = 16GiB;
    memory_bw = 900GB/s;
    gpus_per_node = 4;
    intra_bw = 50GB/s;
    intra_latency = 9us;
    nic_bw = 7GB/s;
    nic_latency = 10us;
    implementation = "$1";
    ${2:-}
}
EOF
}
printf 'implementation beside {\n    dispatch = 7us;\n}\n' >"$tmp/sys/impl.odl"
# run2 ARGS...: oraclec run in $tmp/run
run2()
{
	(cd "$tmp/run" && exec $guard "$ORACLEC" "$@") >"$tmp/out" 2>"$tmp/err"
	status=$?
}

sysfile impl.odl
run2 "$model" -s ../sys/sys.odl -q -f json -g 4
want_status 0
has out '"implementation": "beside"'
run2 "$model" -s ../sys/sys.odl -q -M
want_status 0
has out "../sys/impl.odl"
check "a system file's implementation file is read from the system file's directory"

sysfile missing.odl
run2 "$model" -s ../sys/sys.odl -q
want_status 1
has err "../sys/sys.odl:10:22: error: cannot read '../sys/missing.odl': No such file or directory"
empty out
sysfile nosuchstack
run2 "$model" -s ../sys/sys.odl -q
want_status 1
has err "../sys/sys.odl:10:22: error: unknown implementation 'nosuchstack'"
check "a system's missing implementation: the error is at the system file's key"

# the command line's implementation wins, and the system's is not opened
sysfile missing.odl
run2 "$model" -s ../sys/sys.odl -q -f json -g 4 --implementation pytorch
want_status 0
has out '"implementation": "pytorch"'
empty err
run2 "$model" -s ../sys/sys.odl -q -M --implementation pytorch
lacks out "missing.odl"
check "--implementation replaces a system's missing implementation, which is not opened"

# calibrate writes the file's absolute path: the system reads back from
# wherever it is written
sysfile impl.odl
printf '%s\n' 'model,strategy,gpus,grid,global_batch,dataset_size,measured_iteration_s' \
	'resnet50,data,4,data=4,64,1281167,0.2' >"$tmp/run/m.csv"
run2 calibrate m.csv --models "$models" -s ../sys/sys.odl -o ../cal/cal.odl -q
want_status 0
grep -q "^    implementation = \"$tmp/sys/impl.odl\";" "$tmp/cal/cal.odl" ||
	fail "not the absolute path: $(grep implementation "$tmp/cal/cal.odl")"
run2 "$model" -s ../cal/cal.odl -q -f json -g 4
want_status 0
has out '"implementation": "beside"'
check "calibrate writes the implementation file's absolute path; the system reads back"

# ---- 7. small inconsistencies -------------------------------------------

# include in an implementation file: refused at the include, even of a
# device (it used to be ignored)
printf 'include "/dev/zero";\nimplementation z {\n    dispatch = 7us;\n}\n' >"$tmp/inc.odl"
run "$model" --implementation ./inc.odl -q
want_status 1
has err "./inc.odl:1:1: error: an implementation file does not follow 'include': give every key in its one implementation block"
empty out
check "include in an implementation file is refused at the include"

# one limit of loader workers: an implementation file's as the option's
printf 'implementation w {\n    loader_workers = 1073741824;\n}\n' >"$tmp/w.odl"
run "$model" --implementation ./w.odl -q
want_status 1
has err "./w.odl:2:22: error: implementation 'w': 'loader_workers' must be 1 to 1048576"
printf 'implementation w {\n    loader_workers = 1048576;\n}\n' >"$tmp/w.odl"
run "$model" --implementation ./w.odl -q
want_status 0
run "$model" --loader-workers 1048577 -q
want_status 2
has err "invalid value '1048577' for --loader-workers (expected 1 to 1048576)"
check "loader_workers: 1 to 1048576 in an implementation file, as --loader-workers"

# decode_bw = 0B/s: decoding is free (docs/systems.md), as an infinite rate
for d in 0B/s 1000000TB/s 1MB/s; do
	printf 'implementation d {\n    decode_bw = %s;\n    loader_workers = 1;\n}\n' "$d" >"$tmp/d.odl"
	run "$srcdir/examples/resnet50.onnx" --grid data=8 --implementation ./d.odl -q -f json
	want_status 0
	grep -o '"input_s": [0-9.e+-]*' "$tmp/out" | head -n 1 >"$tmp/input.$(echo "$d" | tr -c 'A-Za-z0-9\n' _)"
done
cmp -s "$tmp/input.0B_s" "$tmp/input.1000000TB_s" || fail "0B/s is not free decoding"
cmp -s "$tmp/input.0B_s" "$tmp/input.1MB_s" && fail "1MB/s decodes for free too"
# integer keys take 1.0 as 1, as the system keys do
printf 'implementation g {\n    grad_copies = %s;\n}\n' 1.0 >"$tmp/g.odl"
run "$model" --grid data=8 --implementation ./g.odl -q -f json
want_status 0
grep -o '"total_s": [0-9.e+-]*' "$tmp/out" >"$tmp/g1.0"
printf 'implementation g {\n    grad_copies = %s;\n}\n' 1 >"$tmp/g.odl"
run "$model" --grid data=8 --implementation ./g.odl -q -f json
grep -o '"total_s": [0-9.e+-]*' "$tmp/out" >"$tmp/g1"
cmp -s "$tmp/g1.0" "$tmp/g1" || fail "grad_copies = 1.0 is not 1"
printf 'implementation g {\n    grad_copies = %s;\n}\n' 1.5 >"$tmp/g.odl"
run "$model" --implementation ./g.odl -q
want_status 1
has err "./g.odl:2:19: error: 'grad_copies' must be a non-negative integer"
check "decode_bw = 0B/s decodes for free; grad_copies = 1.0 is 1, 1.5 refused (docs/systems.md)"

# --dropout's names in messages: escaped, cut after 64 bytes with "..."
run "$model" --dropout "$(printf 'a\377b\033[31m')" -q
want_status 1
has err "error: --dropout: the model has no layer 'a\\xffb\\x1b[31m'"
LC_ALL=C grep -q "$(printf '\377')" "$tmp/err" && fail "a raw 0xff byte on stderr"
run "$model" --dropout "$(awk 'BEGIN { while (length(s) < 100000) s = s "xxxxxxxxxx"; print s }')" -q
want_status 1
has err "error: --dropout: the model has no layer 'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx...'"
[ "$(wc -c <"$tmp/err")" -lt 200 ] || fail "stderr holds $(wc -c <"$tmp/err") bytes"
check "--dropout: a name in a message is escaped (0xff as \\xff) and cut at 64 bytes"

# --dropout: an empty layer name is a usage error, '' as ',,,'
for d in '' ',,,' 'a,' ',a' 'a,,b'; do
	run "$model" --dropout "$d" -q
	want_status 2
	has err "oraclec: --dropout: an empty layer name in '$d' (give LAYER,LAYER,...)"
	has err "Try 'oraclec --help'"
	empty out
done
check "--dropout: '', ',,,' and any empty name between commas are usage errors"

# --as-exported means something for ONNX files only: a warning elsewhere
run "$model" --as-exported -g 8
want_status 0
has err "resnet50.odl: warning: --as-exported applies to ONNX files; this odl model is analysed as it is written, as without it"
"$ORACLEC" "$model" -g 8 2>/dev/null | cmp -s - "$tmp/out" || fail "the report differs from the one without it"
run "$model" --as-exported -g 8 -q
want_status 0
empty err
run "$srcdir/examples/resnet50.onnx" --as-exported -g 8
want_status 0
lacks err "warning"
check "--as-exported on an ODL model: a warning (not under -q), the same report; none for ONNX"

# --precision bf16 on a system without that peak: the option and the
# system named, not a place called 'built-in:'
refused 1 "oraclec: error: --precision bf16: abci (built-in) has no bf16 peak" "$model" -s abci --precision bf16
lacks err "built-in:"
refused 1 "slow.odl: error: --precision amp-bf16: system 'slow' gives no bf16 peak" "$model" -s slow.odl --precision amp-bf16
check "--precision bf16 without a bf16 peak: the message names the option and the system"

# ---- 8. the earlier red team --------------------------------------------

# calibrate writes 16 GiB as 17179869184B (%.10g wrote 17179869180), and
# the calibrated system predicts as the one it was written from
sysfile impl.odl "kernel_latency = 5us;"
run2 calibrate m.csv --models "$models" -s ../sys/sys.odl -o ../cal/cal.odl -q
want_status 0
grep -q '^    memory = 17179869184B;$' "$tmp/cal/cal.odl" ||
	fail "memory written as $(grep 'memory =' "$tmp/cal/cal.odl")"
grep -q '^    kernel_latency = 5us;$' "$tmp/cal/cal.odl" ||
	fail "kernel_latency written as $(grep 'kernel_latency =' "$tmp/cal/cal.odl")"
# the key the fit leaves (memory) reads back to the same bytes
run2 "$model" -s ../sys/sys.odl -q -f json -g 4
grep -o '"memory_bytes": [0-9]*' "$tmp/out" >"$tmp/mem.sys"
run2 "$model" -s ../cal/cal.odl -q -f json -g 4
grep -o '"memory_bytes": [0-9]*' "$tmp/out" >"$tmp/mem.cal"
cmp -s "$tmp/mem.sys" "$tmp/mem.cal" || fail "memory: $(cat "$tmp/mem.sys") written, $(cat "$tmp/mem.cal") read"
check "calibrate writes 16 GiB and 5 us exactly; they read back"

finish
