#!/bin/sh
# badinput.sh -- the bad-input corpus: every case must fail cleanly.
#
# A case is tests/bad/NAME.err, the exact stderr expected.  Its input is
# tests/bad/NAME.odl, or, for the cases listed in gen() below, a file this
# script makes in a temporary directory (binary data, 10 MB lines, FIFOs and
# the like are not committed).  Files in tests/bad/ without a .err (such as
# the other half of an include cycle) are only read through includes.
#
# Each case runs in the directory that holds its input, so diagnostics name
# it by a relative path, with `-o OUT` into the temporary directory, and
# must: exit with status 1 (not a crash, not a sanitizer report), print
# exactly NAME.err on stderr, print nothing on stdout, and leave neither OUT
# nor a temporary OUT.tmp* behind.  Output is TAP.
#
#   srcdir=/work/main ORACLEC=/path/to/oraclec sh tests/badinput.sh

# Each case cds, so relative paths must become absolute first.
. "${srcdir:=.}/tests/tap.sh"
tap_begin badinput
bad=$srcdir/tests/bad

# A hung oraclec must fail its case, not the whole run, where timeout(1)
# exists.  Without it, the FIFO case (which hangs a broken oraclec) is
# skipped and the others run unguarded.
limit=${BADINPUT_TIMEOUT:-120}
if command -v timeout >/dev/null 2>&1; then
	guard="timeout $limit"
else
	guard=
fi

# gen NAME DIR: make the input of a generated case in DIR and set `input`
# to its file name; false if NAME is not a generated case.  The contents
# are fixed, so the diagnostics are too.
gen()
{
	input=$1.odl
	case $1 in
	garbage)
		# 512 bytes, every value 0..255 twice, in a scrambled order
		fmt='' i=0
		while [ $i -lt 512 ]; do
			b=$(( (i * 37 + 11) % 256 ))
			o=$(( 1000 + (b / 64) * 100 + (b / 8 % 8) * 10 + b % 8 )) # 3 octal digits
			fmt="$fmt\\0${o#1}"
			i=$((i + 1))
		done
		printf '%b' "$fmt" >"$2/$input"
		;;
	non-utf8)
		# Latin-1 e-acute (0xe9) inside identifiers: never valid UTF-8 here
		printf 'model m {\n    input x: 3x32x32;\n    caf\351 = relu(x);\n    y = relu(caf\351);\n}\n' \
			>"$2/$input"
		;;
	long-line)
		# line 3 is 10 MiB of statements; line 4 has the error
		awk 'BEGIN {
			s = " n = 1000;"
			while (length(s) < 1048576)
				s = s s
			printf "model m {\n    input x: 3x32x32;\n   "
			for (i = 0; i < 10; i++)
				printf "%s", s
			printf "\n    y = relu(q);\n}\n"
		}' >"$2/$input"
		;;
	deep-parens)
		# 100000 nested parentheses around one number
		awk 'BEGIN {
			l = "("; r = ")"
			while (length(l) < 100000) {
				l = l l
				r = r r
			}
			l = substr(l, 1, 100000)
			r = substr(r, 1, 100000)
			printf "model m {\n    input x: 3x32x32;\n    n = %s1%s;\n", l, r
			printf "    y = relu(x);\n}\n"
		}' >"$2/$input"
		;;
	nonexistent)
		;;
	directory)
		mkdir "$2/$input"
		;;
	fifo)
		# no writer ever comes: reading it would block forever
		[ -n "$guard" ] || { input=; return 0; }
		mkfifo "$2/$input"
		;;
	*)
		return 1
		;;
	esac
}

# Prints `# ` comment lines, at most 40 of them, cut to 200 columns (a
# 10 MB line must not flood the log).
comment()
{
	head -n 40 | cut -c 1-200 | sed 's/^/# /'
}

set -- "$bad"/*.err
if [ ! -e "$1" ]; then
	echo "1..0 # SKIP no cases in $bad"
	exit 0
fi
echo "1..$#"

n=0 failed=0
for want in "$@"; do
	n=$((n + 1))
	name=${want##*/}
	name=${name%.err}
	out=$tmp/out/$name.out
	mkdir -p "$tmp/out" "$tmp/gen/$name"

	if [ -f "$bad/$name.odl" ]; then
		dir=$bad
		input=$name.odl
	elif gen "$name" "$tmp/gen/$name"; then
		dir=$tmp/gen/$name
		if [ -z "$input" ]; then
			echo "ok $n - $name # SKIP timeout(1) not found"
			continue
		fi
	else
		echo "not ok $n - $name"
		echo "# no input: neither $name.odl nor a generated case"
		failed=$((failed + 1))
		continue
	fi

	t=$limit
	[ "$name" = fifo ] && t=10
	(cd "$dir" && exec ${guard:+timeout $t} "$ORACLEC" "$input" -o "$out") \
		>"$tmp/stdout" 2>"$tmp/stderr"
	status=$?

	why=
	status_why "$status" 1
	cmp -s "$want" "$tmp/stderr" || fail "stderr differs from $name.err"
	leftovers "$out"

	if [ -z "$why" ]; then
		echo "ok $n - $name"
	else
		echo "not ok $n - $name"
		printf '%s\n' "$why" | sed 's/^/# /'
		diff -u "$want" "$tmp/stderr" | comment
		[ -s "$tmp/stdout" ] && { echo "stdout:"; cat "$tmp/stdout"; } | comment
		failed=$((failed + 1))
	fi
	rm -rf "$out" "$out".tmp* "$tmp/gen/$name"
done

[ "$failed" -eq 0 ] || exit 1
exit 0
