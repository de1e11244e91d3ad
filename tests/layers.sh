#!/bin/sh
# layers.sh -- the frontend's files form layers: no two of them call each
# other, directly or around a circle, and no two headers include each
# other (issue 12: onnx.c, onnxops.c, onnxshape.c and fold.c called one
# another, and so did paradl.c and system.c).
#
# File A calls file B when A, its comments and strings taken out, names
# a function B defines without `static` (a call, or a rule in a table).  tsort(1) finds
# a circle in the edges.  The ONNX headers must also include only the
# headers below them: values.h, then fold.h and lower.h, then optable.h,
# with walk.h on values.h alone.  Output is TAP.
#
#   srcdir=. sh tests/layers.sh

. "${srcdir:=.}/tests/tap.sh"
tap_begin layers

# uncomment FILE: FILE without its /* */ and // comments, its strings
# emptied
uncomment()
{
	awk '{
		out = ""
		while (length($0)) {
			if (inc) {
				i = index($0, "*/")
				if (!i) { $0 = ""; break }
				$0 = substr($0, i + 2); inc = 0
			} else {
				i = index($0, "/*"); j = index($0, "//")
				if (j && (!i || j < i)) { out = out substr($0, 1, j - 1); $0 = ""; break }
				if (!i) { out = out $0; $0 = ""; break }
				out = out substr($0, 1, i - 1); $0 = substr($0, i + 2); inc = 1
			}
		}
		gsub(/"([^"\\]|\\.)*"/, "\"\"", out)
		print out
	}' "$1"
}

# defined FILE: the functions FILE defines without static (K&R layout:
# the return type on the line before the name)
defined()
{
	awk 'prev !~ /^static/ && /^[a-z_][a-z0-9_]*\(/ { sub(/\(.*/, ""); print }
	     { prev = $0 }' "$1"
}

# calls FILE...: "A B" for every file A that calls file B (generated
# sources, onnx.pb-c.c, left out)
calls()
{
	for f in "$@"; do
		case $f in *.pb-c.c) continue ;; esac
		[ -f "$f" ] && defined "$f" | sed "s|\$| ${f#$srcdir/}|"
	done | sort -k1,1 >"$tmp/defs"
	for f in "$@"; do
		case $f in *.pb-c.c) continue ;; esac
		[ -f "$f" ] || continue
		# identifiers, but struct members (l->attr, s.count)
		uncomment "$f" | sed 's/->[A-Za-z_][A-Za-z0-9_]*//g; s/\.[A-Za-z_][A-Za-z0-9_]*//g' |
			grep -o '[A-Za-z_][A-Za-z0-9_]*' | sort -u >"$tmp/words"
		join "$tmp/words" "$tmp/defs" | awk -v a="${f#$srcdir/}" '$2 != a { print a, $2 }'
	done | sort -u
}

# acyclic EDGES-FILE WHAT: fails with tsort's loop when there is one
acyclic()
{
	if ! tsort "$1" >/dev/null 2>"$tmp/loop"; then
		fail "$2 form a circle:"
		fail "$(grep -v 'input contains a loop' "$tmp/loop")"
	fi
}

calls "$srcdir"/frontend/*.c "$srcdir"/frontend/onnx/*.c >"$tmp/calls"
[ -n "${LAYERS_SHOW:-}" ] && cat "$tmp/calls" >&2
[ -s "$tmp/calls" ] || fail "no calls found between the frontend's files"
grep -q '^frontend/onnx/walk.c frontend/onnx/optable.c$' "$tmp/calls" ||
	fail "walk.c is not seen calling optable.c: the check finds nothing"
acyclic "$tmp/calls" "calls between files"
check "no circle of calls between the files of frontend/ and frontend/onnx/"

for pair in "frontend/paradl.c frontend/system.c" "frontend/system.c frontend/paradl.c" \
	"frontend/onnx/lower_compute.c frontend/onnx/lower_shape.c" \
	"frontend/onnx/lower_shape.c frontend/onnx/lower_compute.c"; do
	grep -qx "$pair" "$tmp/calls" && fail "${pair% *} calls ${pair#* }"
done
for f in values.c fold.c layer.c lower_compute.c lower_shape.c; do
	grep -E "^frontend/onnx/$f frontend/onnx/(walk|optable|read)\.c$" "$tmp/calls" |
		while read -r a b; do echo "$a calls $b"; done >"$tmp/up"
	[ -s "$tmp/up" ] && fail "$(cat "$tmp/up")"
done
check "the rules call neither the walk nor the table; paradl.c and system.c do not call each other"

# the ONNX headers: each one's rank, and what it may include
rank()
{
	case $1 in
	values.h) echo 0 ;; fold.h | lower.h) echo 1 ;; optable.h) echo 2 ;; walk.h) echo 1 ;;
	onnx.pb-c.h) echo -1 ;; *) echo 9 ;;
	esac
}
for h in "$srcdir"/frontend/onnx/*.h; do
	name=${h##*/}
	[ "$name" = onnx.pb-c.h ] && continue
	[ "$(rank "$name")" = 9 ] && fail "$name has no rank in tests/layers.sh"
	for inc in $(sed -n 's|^#include "frontend/onnx/\([^"]*\)".*|\1|p' "$h"); do
		[ "$(rank "$inc")" -lt "$(rank "$name")" ] || fail "$name includes $inc"
		echo "$name $inc"
	done
done >"$tmp/includes"
acyclic "$tmp/includes" "header includes"
check "the headers of frontend/onnx/ include only those below them"

finish
