#!/bin/sh
# batch.sh -- examples/batch/Makefile on a small grid: it builds every
# report, out/summary.csv and the pages, a second make does nothing, and touching one
# model (or a file it includes) redoes only the reports that read it; an
# ONNX and an ODL model of one name stay apart, and `make -f` from another
# directory writes there, nothing beside the Makefile.  TAP.
: "${ORACLEC:=./oraclec}" "${srcdir:=.}"
LC_ALL=C; export LC_ALL
case $ORACLEC in /*) ;; *) ORACLEC=$(pwd)/$ORACLEC ;; esac
case $srcdir in /*) ;; *) srcdir=$(pwd)/$srcdir ;; esac
tmp=$(mktemp -d "${TMPDIR:-/tmp}/batch.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT
MAKE=${MAKE:-make}

mkdir -p "$tmp/models/batch"
cp "$srcdir/examples/batch/Makefile" "$tmp/models/batch/"
cat >"$tmp/models/blk.odl" <<'ODL'
block unit(x, c) { a = conv(x, c, kernel=3, pad=1); r = relu(a); return r; }
ODL
cat >"$tmp/models/a.odl" <<'ODL'
include "blk.odl";
model a { input x: 3x32x32; u = unit(x, 8); f = flatten(u); o = fc(f, 10); }
ODL
cat >"$tmp/models/b.odl" <<'ODL'
model b { input x: 3x32x32; c = conv(x, 4, kernel=3); f = flatten(c); o = fc(f, 10); }
ODL
args="ORACLEC=$ORACLEC GPUS=1\ 4 SYSTEMS=abci\ dgx-h100"
cd "$tmp/models/batch" || exit 99
echo "1..4"
bad=0

eval "$MAKE -s -j2 $args" >"$tmp/log1" 2>&1
rows=$(wc -l <out/summary.csv 2>/dev/null || echo 0)
# 2 models x 2 systems x 2 GPU counts x 9 strategies, plus the header
pages=$(find out -name '*.html' | wc -l)
if [ "$rows" -eq 89 ] && [ "$(find out -name '*.csv' ! -name summary.csv | wc -l)" -eq 8 ] && [ "$pages" -eq 4 ]; then
	echo "ok 1 - make builds 8 reports, an 89-line summary.csv and 4 pages"
else
	bad=1
	echo "not ok 1 - make builds 8 reports, an 89-line summary.csv and 4 pages (got $rows lines, $pages pages)"
	sed 's/^/# /' "$tmp/log1"
fi

eval "$MAKE $args" >"$tmp/log2" 2>&1
if grep -q "Nothing to be done" "$tmp/log2" && ! grep -q oraclec "$tmp/log2"; then
	echo "ok 2 - a second make does nothing"
else
	bad=1
	echo "not ok 2 - a second make does nothing"
	sed 's/^/# /' "$tmp/log2"
fi

sleep 1 # a coarse file system clock must see the change
touch ../blk.odl
eval "$MAKE $args" >"$tmp/log3" 2>&1
redone=$(grep -c "oraclec ../a.odl" "$tmp/log3")
others=$(grep -c "oraclec ../b.odl" "$tmp/log3")
if [ "$redone" -eq 6 ] && [ "$others" -eq 0 ]; then
	echo "ok 3 - touching an include redoes the 4 reports and 2 pages of its model only"
else
	bad=1
	echo "not ok 3 - touching an include redoes the 4 reports and 2 pages of its model only ($redone, $others)"
	sed 's/^/# /' "$tmp/log3"
fi
# b.onnx beside b.odl: reports under each file's name, the summary's first
# column the file; from another directory nothing is written beside the
# Makefile
cp "$srcdir/examples/resnet50.onnx" ../b.onnx
mkdir -p "$tmp/elsewhere"
cd "$tmp/elsewhere" || exit 99
eval "$MAKE -s -j2 -f ../models/batch/Makefile $args SYSTEMS=abci GPUS=4" >"$tmp/log4" 2>&1
odl=$(grep -c '^"b.odl",b,' out/summary.csv 2>/dev/null)
onnx=$(grep -c '^"b.onnx",b,' out/summary.csv 2>/dev/null)
if [ -d out/b.odl/abci ] && [ -d out/b.onnx/abci ] && [ "$odl" -eq 11 ] && [ "$onnx" -eq 11 ] &&
   [ ! -e ../models/batch/out/b.onnx ] && [ ! -e summary.csv ]; then
	echo "ok 4 - b.odl and b.onnx in out/b.odl and out/b.onnx, 11 rows each; make -f writes where it runs"
else
	bad=1
	echo "not ok 4 - b.odl and b.onnx in out/b.odl and out/b.onnx, 11 rows each; make -f writes where it runs ($odl, $onnx)"
	sed 's/^/# /' "$tmp/log4"
fi
exit "$bad"
