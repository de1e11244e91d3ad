#!/bin/sh
# runs.sh -- measured runs with the columns python3 -m oraclec.launch
# --out writes after validate's (precision, implementation,
# peak_memory_bytes; docs/model.md, "Validation"), and the implementation
# validate and calibrate predict them with:
#   - a run is predicted at its precision and implementation (a built-in,
#     or a file from the CSV's directory), as `oraclec MODEL --grid ...
#     --precision P --implementation I` predicts it; --implementation on
#     the command line describes every run (the column's file is then not
#     read); memory: the measured peak against the predicted peak less
#     the reserve (a host device's also less the weights and optimizer
#     state), a column and a mean; the CSV format's columns;
#   - a file without the columns gives the table it gave;
#   - bad columns: an error at the row and column, exit 1;
#   - calibrate fits p2p_latency against the send latency of the
#     implementation the runs were predicted with (--implementation or
#     the column), not the system's (issue 31.7: ChainerMN's 300 us), and
#     leaves it where the runs' implementations differ in it.
# TAP.
. "${srcdir:=.}/tests/tap.sh"
tap_begin runs

models=$srcdir/validation/models
mkdir "$tmp/d" "$tmp/d/impl" "$tmp/elsewhere"
cd "$tmp/elsewhere" || exit 99

# field FILE ROW COLUMN: a field of a CSV without quoted commas
field()
{
	awk -F, -v r="$2" -v c="$3" 'NR == 1 { for (i = 1; i <= NF; i++) k[$i] = i; next }
		NR == r + 1 { print $(k[c]) }' "$1"
}

# json KEY: a number of the one strategy of the JSON report in $tmp/out,
# printed with %.6f (or %.0f for bytes) as validate's CSV prints it
json()
{
	tr -d ' \n' <"$tmp/out" | sed 's/.*"strategies":\[//' |
		grep -o "\"$1\":[-0-9.e+]*" | head -n 1 | sed 's/.*://'
}

printf 'implementation slow {\n    base = "pytorch";\n    send_latency = 2ms;\n    dispatch = 40us;\n}\n' \
	>"$tmp/d/impl/slow.odl"
head='model,strategy,gpus,grid,global_batch,dataset_size,measured_iteration_s,precision,implementation,peak_memory_bytes'
cat >"$tmp/d/m.csv" <<EOF
$head
resnet50,data,1,data=1,64,1281167,0.18,fp32,,
resnet50,data,1,data=1,64,1281167,0.10,amp-fp16,pytorch,9000000000
resnet50,data,1,data=1,64,1281167,0.20,,impl/slow.odl,5000000000
EOF

run validate ../d/m.csv --models "$models" -f csv -o "$tmp/v.csv"
[ "$status" -eq 0 ] || fail "validate: exit status $status"
head -n 1 "$tmp/v.csv" | grep -q ',limited_by,precision,measured_peak_bytes,predicted_peak_bytes,memory_accuracy,implementation$' ||
	fail "the CSV's header: $(head -n 1 "$tmp/v.csv")"
# each row as the analysis predicts it
i=0
for opts in "--precision fp32" "--precision amp-fp16 --implementation pytorch" \
	"--implementation $tmp/d/impl/slow.odl"; do
	i=$((i + 1))
	# shellcheck disable=SC2086
	run "$models/resnet50.odl" --grid data=1 -B 64 $opts -f json
	[ "$status" -eq 0 ] || fail "oraclec $opts: exit status $status"
	t=$(printf '%.6f' "$(json total_s)")
	[ "$(field "$tmp/v.csv" $i predicted_s)" = "$t" ] ||
		fail "row $i ($opts): validate predicted $(field "$tmp/v.csv" $i predicted_s), the analysis $t"
	peak=$(json peak) reserved=$(json reserved)
	want=$(awk -v p="$peak" -v r="$reserved" 'BEGIN { printf "%.0f", p - r }')
	[ $i -eq 1 ] && want=
	[ "$(field "$tmp/v.csv" $i predicted_peak_bytes)" = "$want" ] ||
		fail "row $i: predicted peak $(field "$tmp/v.csv" $i predicted_peak_bytes), want $want (peak less reserved)"
done
[ "$(field "$tmp/v.csv" 2 precision)" = amp-fp16 ] || fail "row 2's precision"
[ "$(field "$tmp/v.csv" 3 precision)" = "" ] || fail "row 3's precision"
# each row names the implementation it was predicted under (issue 38)
[ "$(field "$tmp/v.csv" 1 implementation)" = pytorch-2 ] || fail "row 1's implementation"
[ "$(field "$tmp/v.csv" 2 implementation)" = pytorch ] || fail "row 2's implementation"
case $(field "$tmp/v.csv" 3 implementation) in */d/impl/slow.odl) ;; *) fail "row 3's implementation" ;; esac
check "each run at its precision and implementation (a file beside the CSV), its memory against the peak less the reserve, the implementation named"

run validate ../d/m.csv --models "$models"
[ "$status" -eq 0 ] || fail "validate: exit status $status"
has out "precision   measured    oraclec      acc     paradl      acc     peak GB    oraclec      acc  limited by"
grep -q '^resnet50   data          1 data=1                 amp-fp16      0.1000 ' "$tmp/out" ||
	fail "no amp-fp16 row"
grep -q '^memory         2      0\.[0-9][0-9][0-9]          -   (peak memory: ' "$tmp/out" ||
	fail "no memory mean over 2 runs"
check "the text table: precision and memory columns, the memory's mean"

# --implementation describes every run: the column's file is not read
sed 's|impl/slow.odl|impl/missing.odl|' "$tmp/d/m.csv" >"$tmp/d/n.csv"
run validate ../d/n.csv --models "$models" --implementation pytorch -f csv
[ "$status" -eq 0 ] || fail "validate --implementation pytorch: exit status $status"
run validate ../d/n.csv --models "$models"
[ "$status" -eq 1 ] || fail "without --implementation: exit status $status"
has err "../d/n.csv:4:41: error: cannot read '../d/impl/missing.odl'"
check "--implementation wins over the column (its file not read); a missing file is an error at its field"

# a host device: the runner measures one step's growth of the resident set
"$ORACLEC" --list-systems 2>/dev/null | awk '/^system abci /,/^}/' |
	sed 's/^system abci {/system host {\n    host_device = true;/' >"$tmp/d/host.odl"
printf '%s\nresnet50,data,1,data=1,64,1281167,0.18,fp32,pytorch,5000000000\n' "$head" >"$tmp/d/h.csv"
run validate ../d/h.csv --models "$models" -s ../d/host.odl -f csv
[ "$status" -eq 0 ] || fail "validate on a host device: exit status $status"
cp "$tmp/out" "$tmp/h.csv"
run "$models/resnet50.odl" --grid data=1 -B 64 -s ../d/host.odl --implementation pytorch -f json
want=$(awk -v p="$(json peak)" -v r="$(json reserved)" -v w="$(json weights)" \
	-v o="$(json optimizer)" 'BEGIN { printf "%.0f", p - r - w - o }')
[ "$(field "$tmp/h.csv" 1 predicted_peak_bytes)" = "$want" ] ||
	fail "predicted peak $(field "$tmp/h.csv" 1 predicted_peak_bytes), want $want"
check "a host device: the peak less the reserve, the weights and the optimizer state"

# the old files: the table as before, no new column
run validate "$srcdir/validation/abci-measured.csv" --models "$models" --system abci --optimizer adam
[ "$status" -eq 0 ] || fail "exit status $status"
head -n 1 "$tmp/out" | grep -q '^model      strategy   gpus grid                     measured    oraclec      acc     paradl      acc  limited by$' ||
	fail "the header changed: $(head -n 1 "$tmp/out")"
grep -q '^memory' "$tmp/out" && fail "a memory line"
check "validation/abci-measured.csv: the table as it was"

# ---- bad columns ---------------------------------------------------------

bad()
{
	printf '%s\n%s\n' "$head" "$1" >"$tmp/d/b.csv"
	shift
	run validate ../d/b.csv --models "$models" "$@"
	[ "$status" -eq 1 ] || fail "exit status $status"
	[ -s "$tmp/out" ] && fail "wrote a table"
}
bad 'resnet50,data,1,data=1,64,1281167,0.18,fp64,,'
has err "../d/b.csv:2:40: error: unknown precision 'fp64' (fp32, tf32, amp-fp16, amp-bf16, fp16, bf16)"
bad 'resnet50,data,1,data=1,64,1281167,0.18,fp32,,lots'
has err "../d/b.csv:2:46: error: peak_memory_bytes must be a number of bytes from 1 to 2^60 (empty: not measured)"
bad 'resnet50,data,1,data=1,64,1281167,0.18,fp32,,0'
has err "../d/b.csv:2:46: error: peak_memory_bytes must be a number"
bad 'resnet50,data,1,data=1,64,1281167,0.18,amp-bf16,,' --system abci
has err "../d/b.csv:2:40: error: precision amp-bf16: system 'abci' gives no bf16 peak"
bad 'resnet50,data,1,data=1,64,1281167,0.18,fp32,nosuch,'
has err "../d/b.csv:2:45: error: unknown implementation 'nosuch'"
check "bad columns: an error at the row and column, exit 1, no table"

# ---- calibrate and the implementation ------------------------------------

# the spatial and ds runs of ABCI see the send latency
tr -d '\r' <"$srcdir/validation/abci-measured.csv" |
	awk -F, 'NR == 1 || $2 == "ds" || $2 == "spatial"' >"$tmp/d/sp.csv"
# factor P FILE: the p2p_latency factor of the calibrated system's comment
factor()
{
	sed -n 's/.*p2p_latency x\([0-9.]*\).*/\1/p' "$1" | head -n 1
}
# written FILE: its p2p_latency in seconds
written()
{
	sed -n 's/^ *p2p_latency = \([0-9.e+]*\)\(ns\|us\|ms\|s\);.*/\1 \2/p' "$1" |
		awk '{ u = $2 == "ns" ? 1e-9 : $2 == "us" ? 1e-6 : $2 == "ms" ? 1e-3 : 1; printf "%.9g\n", $1 * u }'
}
run calibrate ../d/sp.csv --models "$models" -s abci --spatial-split all \
	--implementation "$tmp/d/impl/slow.odl" -o "$tmp/cal.odl"
[ "$status" -eq 0 ] || fail "calibrate: exit status $status"
f=$(factor "$tmp/cal.odl") w=$(written "$tmp/cal.odl")
[ -n "$f" ] || fail "no p2p_latency factor: $(head -n 1 "$tmp/cal.odl")"
awk -v f="$f" -v w="$w" 'BEGIN { exit !(f > 1 && f < 5 && (w / 2e-3 - f) ^ 2 < 1e-6) }' ||
	fail "p2p_latency $w s is not x$f of slow's 2 ms"
check "calibrate --implementation FILE: p2p_latency fitted against that implementation's 2 ms"

run calibrate ../d/sp.csv --models "$models" -s abci --spatial-split all \
	--implementation pytorch -o "$tmp/cal2.odl"
[ "$(written "$tmp/cal2.odl")" = 1e-05 ] || fail "p2p_latency $(written "$tmp/cal2.odl"), not pytorch's 10 us"
has out "p2p_latency kept (the runs do not see it)"
# the same runs naming pytorch in their implementation column
awk 'NR == 1 { print $0 ",implementation"; next } { print $0 ",pytorch" }' \
	"$tmp/d/sp.csv" >"$tmp/d/spc.csv"
run calibrate ../d/spc.csv --models "$models" -s abci --spatial-split all -o "$tmp/cal3.odl"
[ "$(written "$tmp/cal3.odl")" = 1e-05 ] || fail "column: p2p_latency $(written "$tmp/cal3.odl"), not pytorch's 10 us"
has out "p2p_latency kept (the runs do not see it)"
tail -n +2 "$tmp/cal2.odl" >"$tmp/c2" && tail -n +2 "$tmp/cal3.odl" >"$tmp/c3" # line 1 names the CSV
cmp -s "$tmp/c2" "$tmp/c3" || fail "the column and --implementation fit differently"
check "calibrate with pytorch (--implementation or the runs' column): against pytorch's 10 us, not ChainerMN's 300 us"

awk 'NR == 1 { print $0 ",implementation"; next }
	{ print $0 "," (NR % 2 ? "pytorch" : "chainermn-paradl") }' "$tmp/d/sp.csv" >"$tmp/d/mix.csv"
run calibrate ../d/mix.csv --models "$models" -s abci --spatial-split all -o "$tmp/cal4.odl"
[ "$status" -eq 0 ] || fail "calibrate: exit status $status"
has out "p2p_latency not set"
check "calibrate on runs of implementations that differ in send latency leaves p2p_latency"

finish
