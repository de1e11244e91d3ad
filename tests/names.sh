#!/bin/sh
# names.sh -- names in generated files (docs/limits.md, "Names in generated
# files").  Inputs whose names hold a newline, CR, quotes, a backtick,
# `$(...)`, ';', 10,000 bytes, invalid UTF-8, control characters and
# non-ASCII (ONNX node, input and operator names and file names from
# tests/namegen, a ParaDL Model| name, a measured run's model, a system's
# gpu string and file names) give every report (text, JSON, CSV) and plan
# (generic, pytorch, deepspeed, megatron, slurm) and the HTML page, and
# each is checked:
#
#   - against the same artifact of a model named "plain": equal once the
#     name, escaped as that format escapes it, is read back and replaced
#     by "plain" (python3's json and csv modules read them; no key lost);
#   - the HTML page has the plain page's elements and attribute names in
#     the same order (python3's html.parser), and is strict UTF-8;
#   - the text and shell outputs hold no control character but newline
#     and tab, and as many lines as the plain one's;
#   - the shell plans pass `bash -n` and run (srun and scontrol stubbed)
#     without running anything a name holds: no PWNED file appears;
#   - -MD dependency files: GNU make reads back each hostile file name
#     (make -q sees the file's time, -MP's rule covers a deleted one); a
#     name make cannot hold (newline, CR, tab, ';', final backslash) is refused
#     with exit status 1 and no report nor dependency file;
#   - calibrate's ODL system file reads back with --system, the gpu string
#     exactly, also for a ParaDL .plat system (named by its path);
#   - ODL string escapes (\n \t \r \\ \" \xNN) and a NUL in a string.
#
# A check whose tool (python3, bash, make) is missing is skipped.  TAP.
: "${ORACLEC:=./oraclec}" "${NAMEGEN:=./tests/namegen}" "${srcdir:=.}"
LC_ALL=C
export LC_ALL
. "$srcdir/tests/tap.sh"
absolute ORACLEC NAMEGEN
srcdir_absolute

tmp=$(mktemp -d "${TMPDIR:-/tmp}/names.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT
trap 'exit 1' HUP INT TERM

py=$(command -v python3 || true)
bash=$(command -v bash || true)
make=$(command -v make || true)

skip()
{
	n=$((n + 1))
	echo "ok $n - $1 # SKIP $2"
}

nl='
'
cr=$(printf '\r')

# hostile ID: sets `name` to the name of case ID.
hostile()
{
	case $1 in
	newline) name="x${nl}touch PWNED${nl}y" ;;
	cr) name="x${cr}touch PWNED" ;;
	quotes) name="q'\"q'\\''" ;;
	backtick) name='`touch PWNED`' ;;
	subst) name='$(touch PWNED)' ;;
	semicolon) name='a;touch PWNED;b' ;;
	long) name=$(printf '%10000s' '' | tr ' ' n) ;;
	bad-utf8) name=$(printf 'bad\377\376\303(\346\227') ;;
	unicode) name=$(printf 'mod\303\251le-\346\250\241\345\236\213\302\205\033[31mred') ;;
	csv) name='a,b "c"' ;;
	html) name='x<b onclick="y">&amp;<!--' ;;
	esac
}
cases="newline cr quotes backtick subst semicolon long bad-utf8 unicode csv html"

# The comparisons, in python3: compare FORMAT GOT PLAIN NAMEFILE.
cat >"$tmp/compare.py" <<'EOF'
import csv, json, sys

def esc_text(b):
    """util/escape.c's esc_text(), independently."""
    out = []
    for ch in b.decode("utf-8", "surrogateescape"):
        o = ord(ch)
        if ch == "\\":
            out.append("\\\\")
        elif ch in "\n\r\t":
            out.append({"\n": "\\n", "\r": "\\r", "\t": "\\t"}[ch])
        elif 0xDC80 <= o <= 0xDCFF:
            out.append("\\x%02x" % (o - 0xDC00))
        elif o < 0x20 or 0x7F <= o <= 0x9F:
            out.append("".join("\\x%02x" % c for c in ch.encode()))
        else:
            out.append(ch)
    return "".join(out)

def norm(x, h):
    if isinstance(x, str):
        return x.replace(h, "plain")
    if isinstance(x, list):
        return [norm(v, h) for v in x]
    if isinstance(x, dict):
        return {norm(k, h): norm(v, h) for k, v in x.items()}
    return x

fmt, got, plain, namefile = sys.argv[1:5]
name = open(namefile, "rb").read()
if fmt == "html":
    # the page's elements and attribute names, in order: a name adds none
    from html.parser import HTMLParser
    class Shape(HTMLParser):
        def __init__(self):
            super().__init__()
            self.seen = []
        def handle_starttag(self, tag, attrs):
            self.seen.append((tag, tuple(k for k, _ in attrs)))
        def handle_endtag(self, tag):
            self.seen.append(("/" + tag,))
    def shape(p):
        sh = Shape()
        sh.feed(open(p, encoding="utf-8", errors="strict").read())
        return sh.seen
    a, b = shape(got), shape(plain)
elif fmt == "json":
    # strict UTF-8, every key kept: equal to the plain one once the name
    # (invalid bytes as U+FFFD) is "plain"
    a = json.load(open(got, encoding="utf-8"))
    b = json.load(open(plain, encoding="utf-8"))
    a = norm(a, name.decode("utf-8", "replace"))
elif fmt == "csv":
    # RFC 4180: the same rows and fields, the name back byte for byte
    rd = lambda p: list(csv.reader(open(p, encoding="utf-8", errors="surrogateescape",
                                        newline="")))
    a, b = norm(rd(got), name.decode("utf-8", "surrogateescape")), rd(plain)
else:
    # text and shell: the name as esc_text() writes it; a job name is the
    # name with unusual bytes made '_'
    rd = lambda p: [l for l in open(p, encoding="utf-8", errors="surrogateescape")
                    if not l.startswith("#SBATCH --job-name=")]
    a, b = norm(rd(got), esc_text(name)), rd(plain)
if a != b:
    for x, y in zip(a if isinstance(a, list) else [a], b if isinstance(b, list) else [b]):
        if x != y:
            print("differs: %r\n  plain: %r" % (str(x)[:300], str(y)[:300]))
            break
    else:
        print("differs in length: %d, plain %d" % (len(a), len(b)))
    sys.exit(1)
EOF

# same FORMAT FILE: FILE against the plain case's file of that name
same()
{
	[ -n "$py" ] || return 0
	"$py" "$tmp/compare.py" "$1" "$2" "$tmp/plain/$2" "$tmp/name" >>"$tmp/err" 2>&1 ||
		fail "$2 differs from the plain one's (format $1)"
}

# clean FILE: no control character but newline and tab, no more lines
# than the plain one's
clean()
{
	if tr -d '\t\n' <"$1" | grep -q '[[:cntrl:]]'; then
		fail "$1 holds a control character"
	fi
	[ "$(wc -l <"$1")" -eq "$(wc -l <"$tmp/plain/$1")" ] ||
		fail "$1 has $(wc -l <"$1") lines, the plain one $(wc -l <"$tmp/plain/$1")"
}

pwned()
{
	if [ -n "$(find "$tmp" -name PWNED)" ]; then
		fail "a name ran as a command (PWNED exists)"
		find "$tmp" -name PWNED -exec rm -f {} +
	fi
}

# Stubs for the Slurm plan: scontrol names one node, srun records argv.
mkdir "$tmp/bin"
printf '#!/bin/sh\necho node0\n' >"$tmp/bin/scontrol"
printf '#!/bin/sh\nprintf "%%s\\n" "$@" >"$SRUN_LOG"\n' >"$tmp/bin/srun"
chmod +x "$tmp/bin/scontrol" "$tmp/bin/srun"

# artifacts FILE: every report and plan of model FILE, in the current
# directory (a.txt, a.layers, a.json, a.csv, p.KIND); fails on a bad exit.
kinds="generic pytorch deepspeed megatron slurm"
artifacts()
{
	"$ORACLEC" "$1" -g 4 >a.txt 2>>"$tmp/err" || fail "text report: exit status $?"
	"$ORACLEC" "$1" -g 4 --layers >a.layers 2>>"$tmp/err" || fail "--layers: exit status $?"
	"$ORACLEC" "$1" -g 4 -f json --layers >a.json 2>>"$tmp/err" ||
		fail "JSON report: exit status $?"
	"$ORACLEC" "$1" -g 4 -f csv >a.csv 2>>"$tmp/err" || fail "CSV report: exit status $?"
	"$ORACLEC" "$1" -g 4 -f html >a.html 2>>"$tmp/err" || fail "HTML report: exit status $?"
	for k in $kinds; do
		"$ORACLEC" "$1" -g 4 --grid pipeline=4 --plan $k -o p.$k 2>>"$tmp/err" ||
			fail "--plan $k: exit status $?"
	done
}

# run_plans: bash -n, then each shell plan run with the stubs; their
# output (srun's argv, Megatron's arguments) in run.slurm, run.megatron.
run_plans()
{
	[ -n "$bash" ] || return 0
	for k in megatron slurm; do
		"$bash" -n p.$k 2>>"$tmp/err" || fail "p.$k is not valid bash"
	done
	"$bash" -c '. ./p.megatron && printf "%s\n" "${ORACLEC_MEGATRON_ARGS[@]}"' \
		>run.megatron 2>>"$tmp/err" || fail "sourcing p.megatron failed"
	PATH="$tmp/bin:$PATH" SLURM_JOB_NODELIST=n SRUN_LOG=$(pwd)/run.slurm \
		"$bash" p.slurm python train.py >/dev/null 2>>"$tmp/err" || fail "p.slurm failed"
	[ -s run.slurm ] || fail "p.slurm did not run srun"
}

# The plain model, the reference of every comparison.
mkdir "$tmp/plain"
cd "$tmp/plain" || exit 99
"$NAMEGEN" plain plain.onnx || exit 99
why=
artifacts plain.onnx
run_plans
check "the plain model gives every report and plan"

for c in $cases; do
	hostile $c
	printf '%s' "$name" >"$tmp/name"
	mkdir "$tmp/$c"
	cd "$tmp/$c" || exit 99
	: >"$tmp/err"
	# the model's file name carries the name too (the model is named by
	# it), unless it is too long for a file name
	file="$name.onnx"
	[ $c != long ] || file=plain.onnx
	"$NAMEGEN" "$name" "$file" || fail "namegen failed"
	artifacts "$file"
	check "$c: every report and plan is written"

	if [ -n "$py" ]; then
		for f in a.json p.generic p.pytorch p.deepspeed; do
			same json $f
		done
		check "$c: JSON reports and plans read back, every key there"
		same csv a.csv
		check "$c: the CSV report reads back (RFC 4180)"
		same html a.html
		check "$c: the HTML page has the plain page's elements and attributes, strict UTF-8"
		for f in a.txt p.megatron p.slurm; do
			same text $f
		done
		check "$c: text report and shell plans carry the name escaped"
	else
		skip "$c: JSON, CSV and escaped text compared" "python3 not found"
	fi
	for f in a.txt a.layers p.megatron p.slurm; do
		clean $f
	done
	check "$c: text and shell outputs hold no control character"

	if [ -n "$bash" ]; then
		run_plans
		pwned
		cmp -s run.megatron "$tmp/plain/run.megatron" || fail "Megatron's arguments differ"
		cmp -s run.slurm "$tmp/plain/run.slurm" || fail "srun's arguments differ"
		check "$c: the shell plans run nothing the name holds"
	else
		skip "$c: the shell plans run" "bash not found"
	fi
done

# ParaDL: a table's Model| name (anything but '|' and a newline).
paradl()
{
	printf 'Dataset|X\nInput|1000x3x8x8\nModel|%s\nCONV1|3x8x8|3x4x3x3|4x8x8\n' "$1"
	printf 'RELU|4x8x8|4x4x0x0|4x8x8\nFC|4x8x8|256x10|10\n'
}
mkdir "$tmp/paradl" "$tmp/paradl/plain"
cd "$tmp/paradl/plain" || exit 99
paradl plain >t.net
for f in txt json csv generic; do
	case $f in
	txt) opts= ;; json|csv) opts="-f $f" ;; *) opts="--plan $f" ;;
	esac
	"$ORACLEC" t.net -g 4 $opts >a.$f 2>"$tmp/err" || fail "plain table: exit status $?"
done
for c in long subst quotes csv bad-utf8 unicode cr; do
	hostile $c
	printf '%s' "$name" >"$tmp/name"
	mkdir "$tmp/paradl/$c"
	cd "$tmp/paradl/$c" || exit 99
	paradl "$name" >t.net
	for f in txt json csv generic; do
		case $f in
		txt) opts= ;; json|csv) opts="-f $f" ;; *) opts="--plan $f" ;;
		esac
		"$ORACLEC" t.net -g 4 $opts >a.$f 2>"$tmp/err" || fail "exit status $?"
	done
	if [ -n "$py" ]; then
		for f in a.json a.generic; do
			"$py" "$tmp/compare.py" json $f ../plain/$f "$tmp/name" >>"$tmp/err" 2>&1 ||
				fail "$f differs"
		done
		"$py" "$tmp/compare.py" csv a.csv ../plain/a.csv "$tmp/name" >>"$tmp/err" 2>&1 ||
			fail "a.csv differs"
		"$py" "$tmp/compare.py" text a.txt ../plain/a.txt "$tmp/name" >>"$tmp/err" 2>&1 ||
			fail "a.txt differs"
	fi
	tr -d '\n' <a.txt | grep -q '[[:cntrl:]]' && fail "the text report holds a control character"
	check "ParaDL Model| name, $c: text, JSON, CSV and plan"
done

# validate: a measured run's model name (MODELS/<name>.onnx), CSV-quoted.
mkdir "$tmp/validate" "$tmp/validate/models"
cd "$tmp/validate" || exit 99
name='a,b "c" $(touch PWNED)'
printf '%s' "$name" >"$tmp/name"
"$NAMEGEN" plain "models/$name.onnx" || exit 99
printf 'model,strategy,gpus,grid,global_batch,dataset_size,measured_iteration_s\n' >m.csv
printf '"a,b ""c"" $(touch PWNED)",data,4,data=4,128,1000,0.1\n' >>m.csv
"$ORACLEC" validate m.csv --models models -f csv >v.csv 2>"$tmp/err" || fail "exit status $?"
"$ORACLEC" validate m.csv --models models >v.txt 2>>"$tmp/err" || fail "exit status $?"
if [ -n "$py" ]; then
	"$py" -c 'import csv, sys
rows = list(csv.reader(open(sys.argv[1], newline="")))
name = open(sys.argv[2]).read()
sys.exit(not (len(rows) == 2 and len(rows[1]) == len(rows[0]) and rows[1][0] == name))' \
		v.csv "$tmp/name" || fail "the validate CSV does not read back the model's name"
fi
grep -q '^a,b "c" \$(touch PWNED) ' v.txt || fail "the text report lacks the name"
pwned
check "validate: a model's name in the CSV and text reports"

# -MD: GNU make reads each file name back.  The model and the system file
# carry the name; make -q must see the model's and the system's times,
# and with -MP a deleted system file is no error.
mkdir "$tmp/make"
cd "$tmp/make" || exit 99
"$NAMEGEN" plain plain.onnx || exit 99
"$ORACLEC" --list-systems | sed -n '/^system abci /,/^}/p' >plain.sys
printf '%%.out:\n\t@echo remake "$@"\n' >remake.mk
# a file that a name's wildcard would match if it were not quoted
touch stXr.onnx stXr.sys
# the make running the tests must not pass its flags (-w, the jobserver)
unset MAKEFLAGS MFLAGS MAKELEVEL
q()
{
	"$make" -q -f "$name.d" -f remake.mk "$name.out" >/dev/null 2>>"$tmp/err"
	echo $?
}
for name in 'sp ace' 'ha#sh' 'dol$lar' 'co:lon' 'eq=ual' 'pe%cent' 'st*r' \
	'br[ack]et' '~tilde' 'back\slash' 'a b\ *c\#d' 'pi|pe' "q'\"" '`touch PWNED`' \
	'$(touch PWNED)' "$(printf 'mod\303\251le')"; do
	if [ -z "$make" ]; then
		skip "-MD with '$name'" "make not found"
		continue
	fi
	cp plain.onnx "$name.onnx"
	cp plain.sys "$name.sys"
	"$ORACLEC" "$name.onnx" -s "$name.sys" -o "$name.out" -MD -MP -MF "$name.d" \
		2>>"$tmp/err" || fail "exit status $?"
	touch -t 200001010000 "$name.onnx" "$name.sys"
	touch -t 201001010000 "$name.out"
	s1=$(q)
	touch -t 202001010000 "$name.onnx"
	s2=$(q)
	touch -t 200001010000 "$name.onnx"
	touch -t 202001010000 "$name.sys"
	s3=$(q)
	mv "$name.sys" away
	s4=$(q)
	mv away "$name.sys"
	[ "$s1$s2$s3$s4" = 0111 ] || fail "make -q gave $s1$s2$s3$s4, expected 0111 (up to date, model newer, system newer, system deleted)"
	pwned
	check "-MD with the file name '$name': make reads it back"
done

# Names make cannot hold: refused, no report, no dependency file.  A name
# ending in a backslash is the target (-MT), as a file name ends in .onnx.
for c in newline cr tab semicolon backslash; do
	target=r.out
	case $c in
	newline) file="a${nl}b.onnx" ;;
	cr) file="c${cr}d.onnx" ;;
	tab) file='g	h.onnx' ;;
	semicolon) file='e;touch PWNED.onnx' ;;
	backslash) file=f.onnx target='f\' ;;
	esac
	cp plain.onnx "$file"
	"$ORACLEC" "$file" -o r.out -MD -MT "$target" >"$tmp/stdout" 2>"$tmp/err"
	status_why $? 1
	leftovers r.out
	[ -e r.out.d ] && fail "left a dependency file"
	grep -q 'cannot write a make rule naming' "$tmp/err" || fail "no diagnostic"
	"$ORACLEC" "$file" -M -MT "$target" >"$tmp/stdout" 2>>"$tmp/err"
	[ $? -eq 1 ] || fail "-M: exit status not 1"
	[ -s "$tmp/stdout" ] && fail "-M wrote to stdout"
	rm -f "$file"
	pwned
	check "-MD refuses a name make cannot hold ($c)"
done

# calibrate: a system whose gpu string holds every ODL escape, from a file
# and a measured-runs CSV with hostile names; the result reads back.
mkdir "$tmp/calibrate"
cd "$tmp/calibrate" || exit 99
sys="s \$(touch PWNED)${nl}x.odl"
csv="m${nl}system evil {${nl}.csv"
"$ORACLEC" --list-systems | sed -n '/^system abci /,/^}/p' |
	sed 's/^    gpu = .*/    gpu = "G\\n\\"q\\" $(touch PWNED)\\\\ \\t\\x01\\xff\\xc3\\xa9";/' >"$sys"
printf 'G\n"q" $(touch PWNED)\\ \t\001\377\303\251' >"$tmp/name"
printf 'model,strategy,gpus,grid,global_batch,dataset_size,measured_iteration_s\n' >"$csv"
printf 'resnet50,data,8,data=8,512,1281167,0.2\n' >>"$csv"
"$ORACLEC" calibrate "$csv" --models "$srcdir/examples" -s "$sys" -o cal.odl >out 2>"$tmp/err" ||
	fail "calibrate: exit status $?"
[ "$(grep -c '^system ' cal.odl)" -eq 1 ] || fail "not one system block in cal.odl"
head -n 1 cal.odl | grep -q '^// ' || fail "the comment is not one line"
tr -d '\n' <out | grep -q '[[:cntrl:]]' && fail "calibrate's report holds a control character"
"$ORACLEC" "$srcdir/examples/resnet50.odl" -s cal.odl -f json >r.json 2>>"$tmp/err" ||
	fail "the calibrated system does not read back: exit status $?"
if [ -n "$py" ]; then
	"$py" -c 'import json, sys
got = json.load(open(sys.argv[1]))["system"]["gpu"]["name"]
want = open(sys.argv[2], "rb").read().decode("utf-8", "replace")
sys.exit(got != want)' r.json "$tmp/name" || fail "the gpu string did not survive"
fi
pwned
check "calibrate writes strings as ODL literals and the system reads back"

printf 'MEM_PER_NODE|16e9|Bytes\nNODE_SPEED|7.8E12|FLOPS\nBANDWIDTH|12.5E9|Bps\n' >'my abci-1.plat'
printf 'LATENCY|500E-9|second\nMAX_NODE|4096|GPUs\nGPU_PER_NODE|4|GPUs\n' >>'my abci-1.plat'
"$ORACLEC" calibrate "$csv" --models "$srcdir/examples" -s './my abci-1.plat' -o plat.odl \
	>/dev/null 2>"$tmp/err" || fail "calibrate: exit status $?"
"$ORACLEC" "$srcdir/examples/resnet50.odl" -s plat.odl >out 2>>"$tmp/err" ||
	fail "the calibrated .plat system does not read back: exit status $?"
grep -q '^system       __my_abci_1_plat_calibrated (plat.odl)' out || fail "not named as an identifier"
check "calibrate -s FILE.plat writes a system that reads back"

# ODL strings: the escapes, and a NUL byte refused.
mkdir "$tmp/odl"
cd "$tmp/odl" || exit 99
"$ORACLEC" --list-systems | sed -n '/^system abci /,/^}/p' |
	sed 's/^    gpu = .*/    gpu = "a\\tb\\\\c\\"d\\x41\\qe\\r\\n";/' >esc.odl
"$ORACLEC" "$srcdir/examples/resnet50.odl" -s esc.odl >out 2>"$tmp/err" || fail "exit status $?"
grep -q '4 x a\\tb\\\\c"dAqe\\r\\n per node' out || fail "the escapes were not read"
check "ODL strings: the escapes of tab, backslash, quote, hex, CR, LF; others keep the byte"

# a raw NUL: written with printf, as a shell variable cannot hold one
printf 'include "a\000b.odl";\nmodel m { input x: 3; y = relu(x); }\n' >inc.odl
"$ORACLEC" inc.odl >"$tmp/stdout" 2>"$tmp/err"
status_why $? 1
grep -q 'inc.odl:1:11: error: NUL byte in string' "$tmp/err" || fail "no NUL diagnostic"
check "ODL: a NUL byte in a string is an error at its column"
printf 'include "a\\x00b.odl";\nmodel m { input x: 3; y = relu(x); }\n' >inc.odl
"$ORACLEC" inc.odl >"$tmp/stdout" 2>"$tmp/err"
status_why $? 1
grep -q 'inc.odl:1:11: error: NUL byte in string' "$tmp/err" || fail "no \\x00 diagnostic"
check "ODL: a hex escape of NUL is an error"
printf 'include "a\\x4.odl";\nmodel m { input x: 3; y = relu(x); }\n' >inc.odl
"$ORACLEC" inc.odl >"$tmp/stdout" 2>"$tmp/err"
status_why $? 1
grep -q 'inc.odl:1:11: error: bad escape in string' "$tmp/err" || fail "no \\x diagnostic"
check "ODL: a hex escape without two hex digits is an error"

# Diagnostics and --dump-after: a file name and layer names with control
# characters are written visibly (no ESC, CR or newline from a name).
esc=$(printf '\033')
# (an error in the model: the system is read, and refused, before it)
printf 'model m { input x: 3; y = nosuchop(x); }\n' >"m${esc}[2J${nl}x.odl"
"$ORACLEC" "m${esc}[2J${nl}x.odl" >"$tmp/stdout" 2>"$tmp/err"
status_why $? 1
[ "$(wc -l <"$tmp/err")" -eq 1 ] || fail "the message is not one line"
grep -q 'm\\x1b\[2J\\nx.odl' "$tmp/err" || fail "the file name is not escaped"
tr -d '\n' <"$tmp/err" | LC_ALL=C grep -q "$esc" && fail "a raw ESC reached stderr"
check "diagnostics: control characters of a file name written visibly"
"$NAMEGEN" "x${nl}touch PWNED${nl}y" "$tmp/dump.onnx" >/dev/null 2>&1 &&
	"$ORACLEC" "$tmp/dump.onnx" --dump-after shape >"$tmp/stdout" 2>"$tmp/err"
status_why $? 0
grep -q 'PWNED' "$tmp/stdout" || fail "the hostile name is not in the dump"
grep -q '^touch PWNED' "$tmp/stdout" && fail "a name broke a line of the dump"
check "--dump-after: names with a newline stay on their line"

finish
