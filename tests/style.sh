#!/bin/sh
# style.sh -- what the tree's C style (docs/internals.md, "Style") says that
# a program can check, on every .c and .h of the tree but the generated
# ones: no line past 100 columns (tabs of 8), no blank at a line's end, and
# indentation by tabs, then spaces to align (never a tab after a space).
# The rest of the house style -- a definition's return type on its own
# line, Linux braces, tables and trailing comments aligned by hand -- is
# kept by review: clang-format 14 cannot say it (docs/internals.md).  TAP.
. "${srcdir:=.}/tests/tap.sh"
tap_begin style

files=$(cd "$srcdir" && find . -path ./.git -prune -o \( -name '*.c' -o -name '*.h' \) -print |
	grep -v -e '^\./grammar/parse\.[ch]$' -e '^\./grammar/lex\.c$' -e 'onnx\.pb-c\.[ch]$' \
		-e '^\./oraclec-[0-9]' -e '/_build/' | sort)
[ -n "$files" ] || fail "no C files under $srcdir"

for f in $files; do
	expand -t 8 "$srcdir/$f" | awk -v f="$f" 'length($0) > 100 { print f ":" NR ": " length($0) " columns" }'
done >"$tmp/long"
[ -s "$tmp/long" ] && fail "lines past 100 columns:
$(head -n 20 "$tmp/long")"
check "no line of a .c or .h is longer than 100 columns"

for f in $files; do
	grep -n '[[:blank:]]$' "$srcdir/$f" | sed "s|^|$f:|"
done >"$tmp/blank"
[ -s "$tmp/blank" ] && fail "blanks at the end of a line:
$(head -n 20 "$tmp/blank")"
check "no line ends in a blank"

tab=$(printf '\t')
for f in $files; do
	grep -n "^$tab* \+$tab" "$srcdir/$f" | sed "s|^|$f:|"
done >"$tmp/mixed"
[ -s "$tmp/mixed" ] && fail "a tab after a space in the indentation:
$(head -n 20 "$tmp/mixed")"
check "indentation is tabs, then spaces"

finish
