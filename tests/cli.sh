#!/bin/sh
# shellcheck disable=SC2086 # $args and $opt are split into words on purpose
# cli.sh -- the command-line contract (docs/cli.md, style.md 13-14): help
# and version, usage errors (exit 2, "Try 'oraclec --help'"), -o written
# atomically, write failures, deterministic output, --dump-after.  TAP,
# with the plan at the end.
#
#   srcdir=/work/main ORACLEC=/path/to/oraclec sh tests/cli.sh

. "${srcdir:=.}/tests/tap.sh"
tap_begin cli
model=$srcdir/examples/resnet50.odl

want_status()
{
	[ "$status" -eq "$1" ] || fail "exit status $status, expected $1"
}

# A usage error: status 2, nothing on stdout, the message and the hint on
# stderr.
usage_error()
{
	desc=$1
	shift
	run "$@"
	want_status 2
	empty out
	has err "Try 'oraclec --help'"
	check "$desc"
}

# Leftover temporary files of an atomic write, in directory $1.
leftovers()
{
	for f in "$1"/*.tmp* "$1"/.*.tmp*; do
		[ -e "$f" ] && fail "temporary file left: ${f##*/}"
	done
}

# ---- help and version ------------------------------------------------

for opt in --help -h; do
	run $opt
	want_status 0
	empty err
	head -n 1 "$tmp/out" | grep -q '^Usage: oraclec ' || fail "stdout does not start with 'Usage: oraclec '"
	has out --gpus
	has out --version
	check "$opt prints the usage on stdout and exits 0"
done

# --help and the messages that list choices come from one table of
# options (options.c); the hidden --list-options prints its rows.
run --list-options
want_status 0
grep -v ' (hidden)$' "$tmp/out" >"$tmp/table"
"$ORACLEC" --help >"$tmp/help"
# an entry starts "  -g, --gpus", "  -MD, --deps" or "      --sweep"
sed -n 's/^  \(-[A-Za-z]*, \)\{0,1\} *\(--[a-z-]*\).*/\2/p' "$tmp/help" >"$tmp/entries"
[ "$(wc -l <"$tmp/entries")" -eq "$(wc -l <"$tmp/table")" ] ||
	fail "--help has $(wc -l <"$tmp/entries") entries, the table $(wc -l <"$tmp/table") options"
while read -r name; do
	grep -q -x -e "$name" "$tmp/entries" || fail "--help has no entry for $name"
done <"$tmp/table"
[ -s "$tmp/table" ] || fail "--list-options listed nothing"
check "--help has an entry for each option of the table, and no other"

# the default of --as-exported on its own line under it, not under
# --channels-last (issue 28)
sed -n '/^      --as-exported /{n;p;}' "$tmp/help" |
	grep -q '^                           (default: BatchNormalization folded into$' ||
	fail "the line after --as-exported is not its default"
sed -n '/^      --channels-last /,/^      --dump-after /p' "$tmp/help" | grep -q 'BatchNormalization' &&
	fail "--channels-last's entry says --as-exported's default"
check "--help: --as-exported's default is on its own line under it"

# values from the command line are quoted escaped and cut at 64 bytes: no
# control byte reaches the terminal, no forged diagnostic line, no 100,000
# bytes echoed (issue 40.5); a long --strategies list is read whole
# (issue 40.9); interleaved:V states its bound (issue 40)
esc=$(printf '\033]0;pwned\007')
run "$model" --format "$esc"
want_status 2
has err "unknown format '\\x1b]0;pwned\\x07'"
grep -q "$(printf '\033')" "$tmp/err" && fail "an escape byte reached stderr"
check "--format with control bytes: quoted as \\xNN"
run "$model" --gpus "1
fake.odl:1:1: error: injected"
want_status 2
grep -q '^fake.odl' "$tmp/err" && fail "a forged diagnostic line"
[ "$(wc -l <"$tmp/err")" -eq 2 ] || fail "stderr is not the message and the hint"
check "--gpus with a newline: one message line, no forged diagnostic"
big=$(awk 'BEGIN { while (n++ < 100000) printf "x" }')
for opt in --format --gpus --precision --strategies; do
	run "$model" $opt "$big"
	want_status 2
	[ "$(wc -c <"$tmp/err")" -lt 400 ] || fail "$(wc -c <"$tmp/err") bytes on stderr"
	has err "xxx..."
	check "$opt with a 100,000-byte value: the value cut at 64 bytes"
done
run "$big"
run "$model" "$big"
want_status 2
[ "$(wc -c <"$tmp/err")" -lt 400 ] || fail "$(wc -c <"$tmp/err") bytes on stderr"
check "a second model name of 100,000 bytes: cut"
list=$(awk 'BEGIN { while (n++ < 60) printf "data,"; printf "pipeline" }')
run "$model" -g 4 --strategies "$list" -f csv
want_status 0
grep -q ',pipeline,' "$tmp/out" || fail "pipeline, after 300 bytes of the list, was dropped"
check "--strategies longer than 255 bytes is read whole"
run "$model" --schedule interleaved:1025
want_status 2
has err "with V of 2 to 1024"
check "--schedule interleaved:1025: the bound stated"

# validate and calibrate have their own --help: their usage line, the
# options that describe measured runs, none that only a model's analysis
# takes (issue 38)
for mode in validate calibrate; do
	run $mode --help
	want_status 0
	empty err
	head -n 1 "$tmp/out" | grep -q "^Usage: oraclec $mode " ||
		fail "stdout does not start with 'Usage: oraclec $mode '"
	has out --models
	has out --implementation
	for other in --gpus --sweep --search --plan --grid --layers; do
		grep -q -e "^ .*$other " "$tmp/out" && fail "$mode --help lists $other"
	done
	check "$mode --help: its own usage and the options of measured runs"
done

# the format of validate's report comes from the backends' table: json
# is a JSON document of the runs (it was text), html is refused (issue 36)
runs=$srcdir/validation/abci-measured.csv
run validate "$runs" --models "$srcdir/validation/models" -s abci -f json
want_status 0
head -c 1 "$tmp/out" | grep -q '{' || fail "-f json is not a JSON object"
grep -q '"runs": \[' "$tmp/out" || fail "no runs array"
grep -q '"measured_s": ' "$tmp/out" || fail "no measured_s"
check "validate -f json writes the runs as JSON"
usage_error "validate -f html: a model's report format, exit 2" validate "$runs" -f html

# every format the backends' table has: each is taken by -f and listed
# by the message for one it does not have (html and svg included)
run "$model" -f foo
want_status 2
for f in text json csv html svg; do
	has err "$f"
	"$ORACLEC" "$model" -f "$f" -o "$tmp/report.$f" 2>"$tmp/err.$f" || fail "-f $f is refused"
done
has err "unknown format 'foo' (text, json, csv, html, svg)"
check "an unknown format's message lists every format of the backends, html and svg too"

for opt in --version -V; do
	run $opt
	want_status 0
	empty err
	printf 'oraclec 0.1.0\n' | cmp -s - "$tmp/out" || fail "stdout is not exactly 'oraclec 0.1.0'"
	check "$opt prints 'oraclec 0.1.0' and exits 0"
done

# ---- usage errors: exit 2 --------------------------------------------

usage_error "unknown long option" --bogus "$model"
usage_error "unknown short option" -Z "$model"
usage_error "--gpus without its argument" "$model" --gpus
usage_error "-o without its argument" "$model" -o
for v in 0 -1 abc 99999999999999999999 '' 4x; do
	usage_error "--gpus '$v' is a bad number" "$model" --gpus "$v"
done
run "$model" --gpus=16777216
want_status 0
check "--gpus=16777216 (the largest) is accepted"
usage_error "unknown --format" "$model" --format yaml
usage_error "unknown --precision" "$model" --precision fp4
usage_error "unknown --dump-after pass" "$model" --dump-after=bogus
usage_error "no model" --gpus 4
usage_error "two models" "$model" "$model"

# ---- -o: atomic output -----------------------------------------------

run "$model"
want_status 0
cp "$tmp/out" "$tmp/expected"
[ -s "$tmp/expected" ] || fail "no report on stdout"
check "the report goes to stdout without -o"

mkdir "$tmp/o"
run "$model" -o "$tmp/o/report.txt"
want_status 0
empty out
empty err
cmp -s "$tmp/expected" "$tmp/o/report.txt" || fail "the -o file differs from the stdout report"
leftovers "$tmp/o"
check "-o writes the whole report to the file and leaves no temporary file"

umask 022
run "$model" -o "$tmp/o/mode.txt"
# shellcheck disable=SC2012 # POSIX has no stat(1)
mode=$(ls -l "$tmp/o/mode.txt" | cut -c 1-10)
[ "$mode" = "-rw-r--r--" ] || fail "mode $mode, expected -rw-r--r-- (0666 & ~umask 022)"
check "-o makes the file with the mode fopen would (umask applied)"

printf 'old\n' >"$tmp/o/report.txt"
run "$model" -f json -o "$tmp/o/report.txt"
want_status 0
head -c 1 "$tmp/o/report.txt" | grep -q '{' || fail "the file was not replaced by the JSON report"
leftovers "$tmp/o"
check "-o replaces an existing file"

printf 'model m {\n    input x: 3x32x32;\n    y = relu(q);\n}\n' >"$tmp/bad.odl"
printf 'old\n' >"$tmp/o/keep.txt"
run "$tmp/bad.odl" -o "$tmp/o/keep.txt"
want_status 1
empty out
has err "bad.odl:3:14: error: unknown name 'q'"
printf 'old\n' | cmp -s - "$tmp/o/keep.txt" || fail "the existing -o file was changed"
run "$tmp/bad.odl" -o "$tmp/o/none.txt"
[ -e "$tmp/o/none.txt" ] && fail "a -o file was made for a bad model"
leftovers "$tmp/o"
check "bad input: exit 1, -o file neither made nor touched"

run "$tmp/bad.odl"
want_status 1
empty out
check "bad input without -o: nothing on stdout"

run "$model" -o "$tmp/no/such/dir/report.txt"
want_status 1
empty out
has err "$tmp/no/such/dir/report.txt: error: "
[ -e "$tmp/no" ] && fail "the directory was created"
check "-o into a missing directory: exit 1 with a diagnostic naming the file"

run "$model" -o -
want_status 0
cmp -s "$tmp/expected" "$tmp/out" || fail "'-o -' did not write the report to stdout"
check "'-o -' means stdout"

# -o onto something that is not a regular file must write through it, or
# refuse; never rename a temporary over it (as root, -o /dev/null would
# replace the device).  A FIFO in the temporary directory stands in for a
# device.  The reader's pid is kept so that it alone is ended if no writer
# ever comes.
mkfifo "$tmp/fifo"
(cat "$tmp/fifo" >"$tmp/fifo.got" & echo $! >"$tmp/fifo.pid"; wait; : >"$tmp/fifo.done") &
reader=$!
run "$model" -o "$tmp/fifo"
i=0
while [ ! -e "$tmp/fifo.done" ] && [ $i -lt 5 ]; do
	sleep 1
	i=$((i + 1))
done
[ -e "$tmp/fifo.done" ] || kill "$(cat "$tmp/fifo.pid")" 2>/dev/null
wait "$reader"
if [ ! -p "$tmp/fifo" ]; then
	fail "the FIFO was replaced by a regular file"
elif [ "$status" -eq 0 ]; then
	cmp -s "$tmp/expected" "$tmp/fifo.got" || fail "the reader did not get the report"
elif [ "$status" -eq 1 ]; then
	[ -s "$tmp/err" ] || fail "exit status 1 without a diagnostic"
else
	fail "exit status $status"
fi
leftovers "$tmp"
check "-o onto a FIFO writes through it or refuses, never replaces it"

# ---- -v ---------------------------------------------------------------

run "$model" -s abci -g 64 -o "$tmp/quiet.txt"
run "$model" -s abci -g 64 -v -o "$tmp/verbose.txt"
want_status 0
has err "oraclec: read $model: odl model 'resnet50', 175 layers,"
has err "oraclec: pass shape: "
has err "oraclec: system abci (built-in): 4 GPUs per node"
has err "oraclec: strategies on 64 GPUs: best "
has err "oraclec: wrote $tmp/verbose.txt: a report"
cmp -s "$tmp/quiet.txt" "$tmp/verbose.txt" || fail "-v changed the report"
check "-v says what is read, run and written, and leaves the report alone"

run "$model" -g 64 -v -q
want_status 0
empty err
check "-q silences -v"

# ---- write failures --------------------------------------------------

if [ -w /dev/full ] && [ -c /dev/full ]; then
	for args in "" "-f json" "--layers" "--dump-after=shape"; do
		"$ORACLEC" "$model" $args >/dev/full 2>"$tmp/err"
		status=$?
		: >"$tmp/out"
		want_status 1
		has err "write failed: No space left on device"
		check "stdout on a full disk${args:+ ($args)}: exit 1, 'write failed'"
	done
	for args in "-f json" "-f csv" "--plan generic" "--plan slurm"; do
		run "$model" -g 16 $args -o /dev/full
		want_status 1
		empty out
		has err "/dev/full: error: write failed: No space left on device"
		check "-o /dev/full ($args): exit 1, the file and the reason named"
	done
	for opt in --help --version; do
		"$ORACLEC" $opt >/dev/full 2>"$tmp/err"
		status=$?
		: >"$tmp/out"
		want_status 1
		has err "write failed: No space left on device"
		check "$opt on a full disk: exit 1, 'write failed'"
	done
else
	for _ in 1 2 3 4 5 6; do
		n=$((n + 1))
		echo "ok $n # SKIP /dev/full is not a writable character device"
	done
fi

# ---- deterministic output --------------------------------------------

for args in "" "-f json" "--layers" "-f json --layers"; do
	"$ORACLEC" "$model" $args >"$tmp/run1" 2>&1
	s1=$?
	"$ORACLEC" "$model" $args >"$tmp/run2" 2>&1
	s2=$?
	if [ "$s1" -ne 0 ] || [ "$s2" -ne 0 ]; then
		fail "exit statuses $s1 and $s2"
	fi
	cmp -s "$tmp/run1" "$tmp/run2" || fail "two runs differ"
	check "two runs are byte-identical${args:+ ($args)}"
done

# ---- --dump-after ----------------------------------------------------

run "$model" --dump-after=shape
want_status 0
empty err
head -n 1 "$tmp/out" | grep -q '^graph resnet50 ' || fail "the dump does not start with 'graph resnet50 '"
has out "conv1 = conv(x) -> conv1:64x112x112"
has out "fc = fc(flat) -> fc:1000"
check "--dump-after=shape prints the IR with shapes"

run /dev/null --dump-after=timing
want_status 2
has err "unknown pass 'timing' (parse, training, shape, cost, memory)"
check "--dump-after names only the passes on the model alone"

# conv's operation counts overflow 64 bits: shape runs, cost fails
printf 'model big {\n    input x: 1024x1048576x1048576;\n    c = conv(x, 1024, kernel=3, pad=1);\n}\n' \
	>"$tmp/big.odl"
run "$tmp/big.odl" --dump-after=shape
want_status 0
empty err
has out "0 c = conv(x) -> c:1024x1048576x1048576 "
check "--dump-after=shape stops after shape: a later pass's error does not run"

run "$tmp/big.odl" --dump-after=cost
want_status 1
empty out
has err "big.odl:3:5: error: layer 'c' (conv): its operation counts overflow 64 bits"
check "--dump-after=cost: the cost pass's error, no dump"

# ---- the oracle: systems, grids, formats, validate --------------------

run --list-systems
want_status 0
for name in abci thetagpu dgx_1 dgx_a100 dgx_h100; do
	has out "system $name {"
done
check "--list-systems prints every built-in system as ODL"

sed -n '/^system abci {/,/^}/p' "$tmp/out" | sed 's/system abci/system mine/; s/gpus_per_node = 4/gpus_per_node = 8/' \
	>"$tmp/mine.odl"
run "$model" --system "$tmp/mine.odl" -g 8
want_status 0
has out "system       mine ($tmp/mine.odl): 8 x V100-SXM2-16GB per node"
check "--system FILE reads an edited copy of a built-in"

run "$model" -s dgx-1 -g 8 --strategies data
want_status 0
has out "system       dgx-1 (built-in): 8 x V100-SXM2-16GB per node, nvlink 75 GB/s, network 50.0 GB/s per node"
has out "software     pytorch (built-in)"
check "dgx-1: 8 V100s on the cube-mesh's three NVLink rings, PyTorch's software"

run "$model" --system summit
want_status 1
has err "unknown system 'summit'"
check "an unknown system name is an input error"

run "$model" -s abci --grid data=16,spatial=4 -f csv
want_status 0
if [ "$(wc -l <"$tmp/out")" -ne 2 ]; then fail "expected a header and one row"; fi
has out 'resnet50,abci,64,ds,"data=16,spatial=4",true,'
check "--grid analyses exactly that grid (64 GPUs), -f csv has a header and one row"

run "$model" --grid filter=2,spatial=4
want_status 2
has err "is not a strategy's grid"
run "$model" -g 8 --grid data=4
want_status 2
has err "oraclec: --grid has 4 GPUs and --gpus 8: give one of them, or make them agree"
run "$model" -g 4 --grid data=4 -q
want_status 0
check "--grid with dimensions no strategy has, or that disagrees with --gpus, is a usage error"

run "$model" -g 64 -f json
want_status 0
for key in '"strategies": \[' '"best": ' '"epoch_s": ' '"memory_per_gpu_bytes": ' '"gpus": 64'; do
	grep -q "$key" "$tmp/out" || fail "no $key in the JSON"
done
check "-f json carries the strategies, the best one, epoch time and memory"

printf 'model,strategy,gpus,grid,global_batch,dataset_size,measured_iteration_s\nresnet50,data,8,data=8,512,1281167,0.2\n' \
	>"$tmp/m.csv"
run validate "$tmp/m.csv" --models "$srcdir/examples" -f csv
want_status 0
has out 'resnet50,data,8,"data=8",0.200000,'
check "validate predicts each measured run (CSV report)"

printf 'model,strategy,gpus\nresnet50,data,8\n' >"$tmp/bad.csv"
run validate "$tmp/bad.csv"
want_status 1
has err "bad.csv:1:1: error: missing column 'grid'"
check "validate names a missing column"

# validate runs the analysis's pipeline: the same prediction as the
# analysis of that run, whatever the precision (fp16: the bytes per item
# are set before the passes; it predicted 0.058763 s for 0.034531 s)
printf 'model,strategy,gpus,grid,global_batch,dataset_size,measured_iteration_s\nresnet50,data,1,data=1,32,1281167,0.1\n' \
	>"$tmp/one.csv"
for prec in fp32 fp16; do
	run validate "$tmp/one.csv" --models "$srcdir/examples" --precision $prec -f csv
	want_status 0
	predicted=$(awk -F, 'NR == 2 { print $6 }' "$tmp/out")
	run "$model" --grid data=1 --precision $prec -f json
	want_status 0
	analysed=$(awk '/"total_s"/ { sub(/,$/, "", $2); printf "%.6f", $2; exit }' "$tmp/out")
	[ -n "$predicted" ] && [ "$predicted" = "$analysed" ] ||
		fail "validate predicts '$predicted' s, the analysis gives '$analysed' s"
	check "validate --precision $prec predicts the analysis's iteration time"
done

run validate "$tmp/one.csv" --models "$srcdir/examples" -v
want_status 0
has err "oraclec: pass shape: "
has err "oraclec: pass timing: "
has err "oraclec: model resnet50: $srcdir/examples/resnet50.odl, 175 layers"
check "validate -v notes the passes it runs, as the analysis does"

# make validate-published's harness: every published row has a model file
# and is predicted (38: ResNet-50, the two ResNeXts, EfficientNet-B0)
if command -v python3 >/dev/null 2>&1; then
	python3 "$srcdir/validation/published.py" --oraclec "$ORACLEC" \
		"$srcdir/validation/published-dle-pytorch.csv" >"$tmp/out" 2>"$tmp/err" ||
		fail "published.py exited with status $?"
	has out "all       38 rows, mean accuracy"
	has out "ranking   Kendall's tau"
	grep -q '^skipped' "$tmp/out" && fail "rows skipped: $(grep '^skipped' "$tmp/out")"
	check "validate-published predicts all 38 published rows"
else
	n=$((n + 1))
	echo "ok $n - validate-published predicts all 38 published rows # SKIP no python3"
fi

# make validate-h100's harness: every H100 row has a model file (the
# zoo's gzip'd ones unpacked) and is predicted, time and memory
if command -v python3 >/dev/null 2>&1; then
	python3 "$srcdir/validation/h100.py" --oraclec "$ORACLEC" >"$tmp/out" 2>"$tmp/err" ||
		fail "h100.py exited with status $?"
	has out "all       56 rows, time accuracy"
	has out "memory within 10 %: "
	grep -q '^skipped' "$tmp/out" && fail "rows skipped: $(grep '^skipped' "$tmp/out")"
	check "validate-h100 predicts all 56 H100 rows"
else
	n=$((n + 1))
	echo "ok $n - validate-h100 predicts all 56 H100 rows # SKIP no python3"
fi

run calibrate "$tmp/m.csv" --models "$srcdir/examples" -s abci -o "$tmp/cal.odl"
want_status 0
has out "calibrated on $tmp/m.csv (1 run): "
has out "no leave-one-out with one run"
grep -q '^system abci_calibrated {' "$tmp/cal.odl" || fail "no calibrated system written"
check "calibrate fits the system and writes it as ODL"

run "$model" --system "$tmp/cal.odl" -g 8
want_status 0
has out "system       abci_calibrated ($tmp/cal.odl)"
check "a calibrated system reads back with --system"

run calibrate "$srcdir/validation/abci-measured.csv" --models "$srcdir/validation/models" \
	--optimizer adam -s abci -o "$tmp/cal.odl"
want_status 0
# (abci runs NCCL 2.3.5: its rings at NCCL's own per-step latencies, so
# the runs see nic_bw but not nic_latency)
has out "(21 runs): conv x0.952 (+-32%), conv 1x1 x1.102 (+-353%), conv grouped kept (the runs do not see it), gemm kept (the runs do not see it), memory-bound x1.079 (+-372%), host x0.994 (+-511%), nic_bw x1.113 (+-27%), nic_latency kept (the runs do not see it), p2p_latency x0.998 (+-493%), fs_file_rate x1.088 (+-5%), cache_files x0.935 (+-13%), staging_bw x0.997 (+-134%); conv and conv 1x1 seen only together (correlation +0.98); conv and memory-bound seen only together (correlation -0.98); conv 1x1 and memory-bound seen only together (correlation -0.99); p2p_latency and staging_bw seen only together (correlation +0.99); mean accuracy 0.959 before, 0.970 after, 0.945 leave-one-out"
# the spatial runs see the halo time, a send's latency plus its staged
# copies, not each: both errors are those of the weak pull alone, and a
# factor on one is undone by the other (their errors correlate)
check "calibrate on the shared ABCI runs: the fitted factors and the accuracies"

# runs on one node do not see the network or the shared file system:
# calibrate leaves those as they were
{ head -n 1 "$srcdir/validation/abci-measured.csv"
  grep -E '^(alexnet|resnet50|vgg16),(data|spatial),(1|2|4),' "$srcdir/validation/abci-measured.csv"
} >"$tmp/node.csv"
run calibrate "$tmp/node.csv" --models "$srcdir/validation/models" --system abci \
	--optimizer adam -o "$tmp/cal1.odl"
want_status 0
has out "(6 runs): conv x0.951 (+-14%), conv 1x1 x1.112 (+-167%), conv grouped kept (the runs do not see it), gemm kept (the runs do not see it), memory-bound x1.088 (+-166%), host kept (too few runs to fit it too), nic_bw kept (the runs do not see it), nic_latency kept (the runs do not see it), p2p_latency x1.018 (+-228%), fs_file_rate kept (the runs do not see it), cache_files kept (the runs do not see it), staging_bw x0.935 (+-59%); conv and conv 1x1 seen only together (correlation +0.98); conv and memory-bound seen only together (correlation -0.98); conv 1x1 and memory-bound seen only together (correlation -1.00); p2p_latency and staging_bw seen only together (correlation +1.00); mean accuracy 0.969 before, 0.993 after, 0.961 leave-one-out"
grep -q "nic_bw = 7000000000B/s;" "$tmp/cal1.odl" || fail "nic_bw moved: $(grep nic_bw "$tmp/cal1.odl")"
check "calibrate keeps the parameters the runs do not see"

run calibrate "$tmp/m.csv"
want_status 2
has err "give -o FILE.odl"
check "calibrate without -o is a usage error"

run "$model" -s abci -g 16 --cost-model paper -f csv
want_status 0
has out 'resnet50,abci,16,data,"data=16",'
check "--cost-model paper analyses every strategy"

(cd "$srcdir/examples" && "$ORACLEC" -M -MP -MT out.json resnet50.odl >"$tmp/out" 2>"$tmp/err")
status=$?
want_status 0
printf 'out.json: \\\n resnet50.odl \\\n resnet_blocks.odl\n\nresnet_blocks.odl:\n' >"$tmp/want"
cmp -s "$tmp/want" "$tmp/out" || fail "the rule differs: $(cat "$tmp/out")"
check "-M -MP -MT print the make rule of every file read, with phony rules"

(cd "$srcdir/examples" && "$ORACLEC" -MD -f json -o "$tmp/r.json" resnet50.odl >"$tmp/out" 2>"$tmp/err")
status=$?
want_status 0
[ -s "$tmp/r.json" ] || fail "no report"
head -n 1 "$tmp/r.json.d" | grep -q "^$tmp/r.json: " || fail "no $tmp/r.json.d rule"
check "-MD writes the report and FILE.d beside it"

# ---- ParaDL model tables, --profile, --sweep ---------------------------

paradl=$srcdir/tests/data/paradl
resnet_net=$paradl/RESNET50_ImageNet_profall.net_sc

run "$resnet_net"
want_status 0
empty err
has out "model        ResNet50 ($resnet_net, paradl)"
has out "parameters   22,780,456 "
has out "dataset      1,280,000 samples"
has out "profile      167 of 167 layers measured: 3.1195 ms per sample, forward and backward"
has out "$resnet_net:4: 3.1195 ms for all 167 layers (CONV_1 to FC6), shared out in proportion"
has out "forward:backward taken as 1:2 where only a total was measured"
check "a ParaDL .net_sc table is a model; its first row's time is the whole network's"

run "$resnet_net" -f json -b 64 --strategies data
want_status 0
has out '"seconds_per_sample": 0.003119502'
has out '"split_measured": false'
# 64 samples at 3.1195 ms each: the GPU's time (the CPU that issues the
# layers, 30 us a call on abci, is the host lane's, apart)
awk -F': ' '/"compute_s"/ { v = $2 + 0; exit } END {
	if (v < 0.199647 || v > 0.199649) { print "compute_s " v; exit 1 } }' "$tmp/out" ||
	fail "data compute_s is not 64 x the profiled 3.1195 ms per sample"
check "the profiled time per sample sets the compute time (-f json)"

run "$paradl/COSMOFLOW.net_256" -o "$tmp/c256.txt"
want_status 1
empty out
printf '%s\n' "$paradl/COSMOFLOW.net_256:8:6: error: row 'RELU': x 32x2128x128x128 does not match 32x128x128x128, the output of the row before" |
	cmp -s - "$tmp/err" || fail "stderr is not the one diagnostic of the typo row"
[ -e "$tmp/c256.txt" ] && fail "-o file written on error"
leftovers "$tmp"
check "COSMOFLOW.net_256's typo row is an error at its line and column, nothing written"

sed 's/32x2128x128x128/32x128x128x128/' "$paradl/COSMOFLOW.net_256" >"$tmp/cosmo.txt"
run "$tmp/cosmo.txt" -s abci -f csv
want_status 0
has out 'CosmoFlow,abci,1,data,"data=1",false,"does not fit in GPU memory",32,'
check "a table with another extension is recognised by its 'Dataset|' line"

printf 'Dataset|t\r\nInput|1x3x8x8\r\nModel|t\r\nRELU|3x8x8|3x3x0x0|3x8x8|x\0y\r\n' >"$tmp/nul.net"
run "$tmp/nul.net"
want_status 1
has err "nul.net:4:27: error: a NUL byte (not a text file?)"
check "a NUL byte in a table is an error, not a truncated line"

run "$paradl/ALEXNET_ImageNet.net"
want_status 0
has err "ALEXNET_ImageNet.net:16:33: warning: row 'MPOOL': time 0 with no timed row above it"
check "ALEXNET_ImageNet.net's lone zero times are estimated, with a warning"

printf 'layer,forward_s,backward_s\nconv1,0.001,0.002\n"fc",1e-4,2e-4\n' >"$tmp/prof.csv"
run "$model" --profile "$tmp/prof.csv" -f json --layers
want_status 0
has out '"timed_layers": 2'
has out '"measured_fwd_s": 0.001,'
has out '"measured_bwd_s": 0.0002'
check "--profile replaces the estimate of the layers it names (-f json --layers)"

run "$model" --profile "$tmp/prof.csv"
want_status 0
has out "profile      2 of "
check "--profile is reported in the text summary"

printf 'layer,forward_s,backward_s\nconv1,0.001,0.002\nconv99,1,2\nfc,-1,0\n' >"$tmp/bad.csv"
run "$model" --profile "$tmp/bad.csv" -o "$tmp/p.txt"
want_status 1
empty out
has err "bad.csv:3:1: error: unknown layer 'conv99' (model 'resnet50' has no layer of that name; --layers lists them)"
has err "bad.csv:4:4: error: forward_s -1 is negative"
[ -e "$tmp/p.txt" ] && fail "-o file written on error"
check "--profile: an unknown layer and a negative time are errors naming the line"

run "$model" --profile "$tmp/none.csv"
want_status 1
has err "none.csv: error: cannot read file"
check "--profile with a missing file is an input error"

usage_error "--profile with validate" validate "$tmp/m.csv" --profile "$tmp/prof.csv"
usage_error "--sweep with --grid" "$model" --sweep --grid data=4
usage_error "--profile without its file" "$model" --profile

run "$model" -g 8 --sweep
want_status 0
has out 'sweep: epoch time by GPU count'
sed -n '/^sweep:/,$p' "$tmp/out" | awk 'NR > 3 { print $1 }' | tr '\n' ' ' >"$tmp/counts"
[ "$(cat "$tmp/counts")" = "1 2 4 8 " ] || fail "sweep rows are for $(cat "$tmp/counts")"
check "--sweep adds a table with a row per power of two up to --gpus"

run "$model" -s abci -g 6 --sweep -f csv --strategies data,pipeline
want_status 0
[ "$(wc -l <"$tmp/out")" -eq 9 ] || fail "expected a header and 4 x 2 rows"
has out 'resnet50,abci,6,pipeline,'
has out 'resnet50,abci,4,data,"data=4",'
check "--sweep -f csv: one row per GPU count (1, 2, 4 and 6) and strategy"

run "$model" -g 4 --sweep -f json
want_status 0
tr -d ' \n' <"$tmp/out" | grep -q '"sweep":\[{"gpus":1,"strategies":\[' ||
	fail "no \"sweep\": [ { \"gpus\": 1, \"strategies\": [ in the JSON"
[ "$(grep -c '"gpus": ' "$tmp/out")" -eq 4 ] || fail "expected the top-level gpus and 3 sweep entries"
check "--sweep -f json carries one entry per GPU count"

run "$model" -g 16777216 --sweep -f csv
want_status 0
empty err
check "a long --sweep shows no progress bar when stderr is not a terminal"

# an eval-mode export folds BatchNormalization into the convolutions: the
# analysis puts it back (the counts of resnet50.odl, as trained), says so
# once (-q silences it), and --as-exported keeps the file's graph
onnx=$srcdir/examples/resnet50.onnx
run "$onnx" -f json
want_status 0
has out '"training_graph": true,'
has out '"layers": 175,'
has out '"params": 25557032,'
has out '"buffers": 53120,'
has out '"saved_bytes_per_sample": 85307392,'
has err "$onnx: note: BatchNormalization restored after 53 convolutions (the export folded it); --as-exported analyses the file as it is"
check "a folded ONNX export is analysed with its BatchNormalization restored"

run "$onnx" -f json -q
want_status 0
empty err
run "$onnx" -f json --as-exported
want_status 0
empty err
has out '"training_graph": false,'
has out '"bn_folded": true,'
has out '"layers": 122,'
has out '"params": 25530472,'
has out '"buffers": 0,'
run "$onnx" -q --dump-after=training
grep -q '^ *[0-9]* *[^ ]*/bn ' "$tmp/out" || grep -q '/bn' "$tmp/out" || fail "no restored layer named CONV/bn"
check "--as-exported analyses the folded export as it is; -q silences the note"

# --dropout: the dropouts an eval-mode export removed, put back where the
# user says.  torchvision's AlexNet has one before each of the first two
# linear layers: with them autograd saves 3,099,136 bytes per sample on
# CUDA (tests/data/autograd: 3,139,072 on CPU, whose fp32 noise is 4
# bytes per element where CUDA's mask is 1), without 3,069,440
alex=$srcdir/tests/data/onnx/alexnet.onnx
run "$alex" -q -f json
has out '"saved_bytes_per_sample": 3069440,'
run "$alex" -q -f json --layers --dropout /Flatten,/classifier/classifier.2/Relu
want_status 0
has out '"saved_bytes_per_sample": 3099136,'
has out '"name": "/Flatten/dropout",'
run "$alex" -q --dropout /Flatten,/nope
want_status 1
empty out
has err "$alex: error: --dropout: the model has no layer '/nope'"
check "--dropout puts back the dropouts the export removed; unknown layers are errors"

# built-in systems answer to their --list-systems name and to the ODL
# identifier of their block, and are reported by the former
run "$model" -q -s dgx_a100 -f json
want_status 0
has out '"name": "dgx-a100",'
run "$model" -q -s dgx-a100
has out 'system       dgx-a100 (built-in)'
check "-s dgx_a100 is dgx-a100, reported as dgx-a100"

# link rates in bits per second, as network data sheets write them
printf 'system s {\n  gpus_per_node = 8; fp32 = 19.5TFLOPS; memory = 80GB;\n  memory_bw = 2TB/s; intra_bw = 300GB/s; intra_latency = 5us;\n  nic_bw = 400Gb/s; nic_latency = 8us; storage_bw = 100Gbit/s;\n}\n' >"$tmp/bits.odl"
run "$model" -q -s "$tmp/bits.odl" -f json
want_status 0
has out '"nic_bw": 5e10,'
check "400Gb/s is 50 GB/s"

# ---- implementations -----------------------------------------------------

run "$model" -q -s abci
want_status 0
has out "software     chainermn-paradl (built-in): Chainer 7 + ChainerMN (ParaDL scripts)"
run "$model" -q
want_status 0
has out "system       dgx-h100 (built-in): 8 x H100-SXM5-80GB per node"
has out "software     pytorch-2 (built-in): PyTorch 2 (DDP, NCCL)"
check "abci runs the ParaDL scripts' software by default; the default system is dgx-h100 under pytorch-2"

run "$model" -q -s dgx-a100 -f json
want_status 0
has out '"name": "pytorch",'
has out '"overlap_grad": true,'
check "dgx-a100 runs pytorch: DDP's overlapped buckets"

printf 'implementation a { dispatch = 1us; }\nimplementation b { }\n' >"$tmp/two.odl"
run "$model" --implementation "$tmp/two.odl"
want_status 1
has err "two.odl:2:16: error: a second implementation 'b' in one file"
check "--implementation: a file with two blocks is refused at the second"

printf 'implementation a { halo = "ring"; }\n' >"$tmp/bad.odl"
run "$model" --implementation "$tmp/bad.odl"
want_status 1
has err "bad.odl:1:27: error: implementation 'a': 'halo' must be \"pairwise\" or \"chain\""
check "--implementation: a word a key does not take is refused at the key's value (issue 40)"

printf 'system s { fp32 = 1TFLOPS; memory = 16GiB; memory_bw = 900GB/s; gpus_per_node = 4;\n  intra_bw = 50GB/s; intra_latency = 9us; nic_bw = 7GB/s; nic_latency = 10us;\n  sms = 1073741825; }\n' >"$tmp/big.odl"
run "$model" -s "$tmp/big.odl"
want_status 1
has err "big.odl:3:9: error: 'sms' 1073741825 is out of range (0 to 1073741824)"
check "an integer system key past 2^30 is said to be out of range, with the bounds (issue 40)"

printf 'implementation a { step_sync = "sometimes"; }\n' >"$tmp/bad.odl"
run "$model" --implementation "$tmp/bad.odl"
want_status 1
has err "bad.odl:1:32: error: implementation 'a': 'step_sync' must be \"never\", \"amp\" or \"always\""
empty out
check "--implementation: step_sync takes one of three words"

# torch.optim's RMSprop on ResNet-50's 161 tensors of 25,557,032
# elements: on the GPU 28 B each at 2,039 GB/s x 0.85 and its 8
# operations and zero_grad's a tensor, 4 us each: 0.000413 + 161 x 9 x
# 4 us = 0.006209 s.  The CPU issues them after GradScaler's wait, 10 us
# each with its 3 operators, and its loop over the tensors (0.7 us each):
# (161 x 9 + 3) x 10 us + 161 x 0.7 us = 0.014633 s, the GPU idle
run "$model" -s dgx-a100 -g 1 --optimizer rmsprop --precision amp-fp16 -q -f json
want_status 0
has out '"optimizer": "rmsprop"'
has out '"weight_update_s": 0.006208888034'
has out '"dispatch_s": 0.0146327'
check "--optimizer rmsprop: torch.optim's loop after the loss scaler's wait"

run "$model" --implementation nope
want_status 1
has err "unknown implementation 'nope'"
check "--implementation: an unknown name is an error"

run --list-implementations
want_status 0
has out "implementation chainermn_paradl {"
check "--list-implementations prints the built-ins in ODL"

printf 'implementation a { pipe_checkpoint = "sometimes"; }\n' >"$tmp/bad.odl"
run "$model" --implementation "$tmp/bad.odl"
want_status 1
has err "bad.odl:1:38: error: implementation 'a': 'pipe_checkpoint' must be \"never\", \"except-last\" or \"always\""
empty out
check "--implementation: pipe_checkpoint takes one of three words"

printf 'implementation a { grad_copies = 3; }\n' >"$tmp/bad.odl"
run "$model" --implementation "$tmp/bad.odl"
want_status 1
has err "bad.odl:1:34: error: implementation 'a': 'grad_copies' must be 0, 1 or 2"
empty out
check "--implementation: grad_copies counts copies each way, at most 2"

# DDP's reducer on 8 DGX A100 GPUs (ResNet-50): its bucket copies and
# buffer broadcast are reducer_s; horovod copies in batches, on one GPU
# there is no reducer
run "$model" -s dgx-a100 -g 8 -b 256 --strategies data -q -f json
want_status 0
has out '"grad_copies": 2'
has out '"reducer_s": 0.002'
run "$model" -s dgx-a100 -g 8 -b 256 --strategies data --implementation horovod -q -f json
want_status 0
has out '"grad_copies": 0'
has out '"reducer_s": 0.0,'
run "$model" -s dgx-a100 -g 1 -b 256 --strategies data -q -f json
want_status 0
has out '"reducer_s": 0.0,'
check "data parallelism pays DDP's copies on more than one GPU"

# torchgpipe's Pipe checkpoints every micro-batch but the last: the
# slowest stage runs 7 of its 8 forwards again; torch.distributed.pipelining
# (pytorch) none
run "$model" -s dgx-a100 -g 4 -b 64 --strategies pipeline --micro-batches 8 \
	--implementation torchgpipe -q -f json
want_status 0
has out '"pipe_checkpoint": "except-last"'
has out '"recompute_s": 0.006161805718'
has out '"activations": 146390528.0'
run "$model" -s dgx-a100 -g 4 -b 64 --strategies pipeline --micro-batches 8 -q -f json
want_status 0
has out '"recompute_s": 0.0,'
has out '"activations": 2042576384.0'
check "--implementation torchgpipe: checkpointed micro-batches run their forward again"

finish
