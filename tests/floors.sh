#!/bin/sh
# floors.sh -- the tree's floors call only down, and nothing calls around
# a circle (issue 28).  From the bottom up:
#
#   util/      helpers                            calls: util
#   ir/        the IR                             calls: util, ir
#   frontend/, grammar/  files -> IR              calls: those below
#   passes/    annotate the IR (shape, cost, ...) calls: those below
#   model/     price it (kernels, collectives, the cost models)
#   plan/      decide (strategies, search, per-layer, placement, ...)
#   backends/  format only                        calls: util, ir, backends
#   main.o, options.o  the driver                 calls: anything
#
# The edges come from the objects the build made (nm: the symbols each
# object defines and the ones it takes from elsewhere), so a call is a
# call, whatever a name in a comment says.  File A calls file B when A
# uses a symbol B defines.  tsort(1) finds a circle in the edges.  TAP.
#
#   sh tests/floors.sh          (in the build tree, after make)

. "${srcdir:=.}/tests/tap.sh"
tap_begin floors

# floor FILE: the floor's rank, or nothing for a file of no floor
floor()
{
	case $1 in
	util/*) echo 0 ;;
	ir/*) echo 1 ;;
	frontend/* | grammar/*) echo 2 ;;
	passes/*) echo 3 ;;
	model/*) echo 4 ;;
	plan/*) echo 5 ;;
	backends/*) echo 6 ;;
	main.o | options.o) echo 7 ;;
	esac
}

# unit OBJECT: the name a file goes by here: its source's (libfrontend_a-
# dsl.o -> frontend/dsl.o); bison's parser and flex's scanner are one unit
# (each calls the other by design: yylex, yylval)
unit()
{
	case $1 in
	grammar/parse.o | grammar/lex.o) echo grammar/parser ;;
	*) echo "$1" | sed 's|lib[a-z]*_a-||' ;;
	esac
}

# the objects, named by their source (libfrontend_a-dsl.o -> dsl.o)
objs=$(find util ir frontend grammar passes model plan backends main.o options.o -name '*.o' 2>/dev/null |
	sort)
if [ -z "$objs" ]; then
	echo "1..0 # SKIP no objects here: run it in the build tree after make"
	exit 0
fi
for o in $objs; do
	name=$(unit "$o")
	nm -g --defined-only "$o" | awk -v f="$name" 'NF == 3 && $2 ~ /[TDRB]/ { print $3, f }'
done | sort -k1,1 >"$tmp/defs"
for o in $objs; do
	name=$(unit "$o")
	nm -u "$o" | awk '{ print $NF }' | sort -u >"$tmp/uses"
	join "$tmp/uses" "$tmp/defs" | awk -v a="$name" '$2 != a { print a, $2 }'
done | sort -u >"$tmp/calls"
[ -n "${FLOORS_SHOW:-}" ] && cat "$tmp/calls" >&2

grep -q '^model/pipeline.o model/split.o$' "$tmp/calls" ||
	fail "pipeline.o is not seen calling split.o: the check finds nothing"
if ! tsort "$tmp/calls" >/dev/null 2>"$tmp/loop"; then
	fail "calls between files form a circle:"
	fail "$(grep -v 'input contains a loop' "$tmp/loop")"
fi
check "no circle of calls between the files of the tree"

while read -r a b; do
	fa=$(floor "$a") fb=$(floor "$b")
	[ -n "$fa" ] && [ -n "$fb" ] || continue
	case $a in
	backends/*)
		[ "$fb" -le 1 ] || [ "$fb" -eq 6 ] || echo "$a calls $b: a backend formats only" ;;
	*)
		[ "$fb" -le "$fa" ] || echo "$a calls $b, a floor above it" ;;
	esac
done <"$tmp/calls" >"$tmp/up"
[ -s "$tmp/up" ] && fail "$(cat "$tmp/up")"
check "every floor calls only the floors below it; the backends only util/ and ir/"

finish
