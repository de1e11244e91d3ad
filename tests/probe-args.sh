#!/bin/sh
# probe-args.sh -- python3 -m oraclec.probe's arguments and files, a table
# of cases (tests/probe-args.py says which): usage errors escaped and cut,
# --ranks bounded, outputs that are not regular files refused, a link
# named probe.csv replaced and its target untouched, a full file system,
# a file size limit and SIGTERM during the summary each ending in one
# line with the files whole, --model and --resume.  The usage and output
# cases need only a python3; the runs need torch (skipped without).  TAP.
. "${srcdir:=.}/tests/tap.sh"
tap_begin probe-args

py=
for p in "${PYTHON:-}" /usr/bin/python3 python3; do
	[ -n "$p" ] && "$p" -c 'import sys; sys.exit(sys.version_info < (3, 7))' 2>/dev/null &&
		{ py=$p; break; }
done
if [ -z "$py" ]; then
	echo "1..0 # SKIP no python3"
	exit 0
fi
tpy=-
for p in "${PYTHON:-}" /usr/bin/python3 python3; do
	[ -n "$p" ] && "$p" -c 'import torch, numpy' 2>/dev/null && { tpy=$p; break; }
done
PYTHONPATH="$srcdir/python${PYTHONPATH:+:$PYTHONPATH}"
export PYTHONPATH
"$py" "$srcdir/tests/probe-args.py" "$py" "$tpy" "$ORACLEC" "$tmp"
