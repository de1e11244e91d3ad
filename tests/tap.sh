# tap.sh -- what the shell tests share; each sources it, from a path
# relative to where it started, and begins with `tap_begin NAME [VAR...]`:
#
#	. "${srcdir:=.}/tests/tap.sh"
#	tap_begin cli
#
# which sets LC_ALL=C, makes $ORACLEC (default ./oraclec), $srcdir and
# each VAR absolute, and makes $tmp, a temporary directory named for the
# test that is removed on exit (`tap_env VAR...` does all but $tmp).
#
# `absolute VAR...` and `srcdir_absolute` let a test cd.  A case collects
# what is wrong with `fail REASON` and ends with `check DESCRIPTION`,
# which prints "ok N" or "not ok N" with the reasons and the head of
# $tmp/out and $tmp/err (the script's temporary directory) when they are
# not empty.  `finish` prints the plan and sets the status.  For a run
# that must fail cleanly, `status_why` and `leftovers` say why it did not.
n=0 failed=0 why=

# absolute VAR...: each variable's path made absolute; a program named
# without a slash is left to PATH, as the shell would.
absolute()
{
	for _v; do
		eval "_p=\$$_v"
		case $_p in /*) ;; */*) eval "$_v=\$(pwd)/\$_p" ;; esac
	done
}

srcdir_absolute()
{
	case $srcdir in /*) ;; *) srcdir=$(pwd)/$srcdir ;; esac
}

# tap_env VAR...: the environment every test runs in (see the top)
tap_env()
{
	LC_ALL=C
	export LC_ALL
	: "${ORACLEC:=./oraclec}"
	absolute ORACLEC "$@"
	srcdir_absolute
}

# tap_begin NAME VAR...: tap_env, and $tmp, removed on exit
tap_begin()
{
	_name=$1
	shift
	tap_env "$@"
	tmp=$(mktemp -d "${TMPDIR:-/tmp}/$_name.XXXXXX") || exit 99
	trap 'rm -rf "$tmp"' EXIT
	trap 'exit 1' HUP INT TERM
}

fail()
{
	why="${why:+$why
}$*"
}

check()
{
	n=$((n + 1))
	if [ -z "$why" ]; then
		echo "ok $n - $1"
	else
		echo "not ok $n - $1"
		printf '%s\n' "$why" | sed 's/^/# /'
		for f in out err; do
			[ -s "$tmp/$f" ] || continue
			echo "# std$f:"
			head -n 10 "$tmp/$f" | cut -c 1-200 | sed 's/^/#   /'
		done
		failed=$((failed + 1))
	fi
	why=
}

# status_why GOT WANT: adds to why what is wrong with exit status GOT
# (a timeout(1) guard's 124 when $guard is set, death by a signal, another
# status than WANT), if anything; what failed before in the case is kept.
status_why()
{
	if [ "$1" -eq 124 ] && [ -n "${guard:-}" ]; then
		fail "timed out (exit status 124)"
	elif [ "$1" -gt 128 ]; then
		fail "killed by signal $(($1 - 128))"
	elif [ "$1" -ne "$2" ]; then
		fail "exit status $1, expected $2"
	fi
}

# run ARGS...: oraclec with ARGS; its exit status in `status`, its
# output in $tmp/out and $tmp/err.  (A script may define its own.)
run()
{
	"$ORACLEC" "$@" >"$tmp/out" 2>"$tmp/err"
	status=$?
}

# want_status N: the last run exited with N, else a failure saying how.
want_status()
{
	status_why "$status" "$1"
}

# tap_skip N WHY: N cases skipped, each saying WHY.
tap_skip()
{
	for _i in $(seq "$1"); do
		n=$((n + 1))
		echo "ok $n # SKIP $2"
	done
}

# tap_python CODE WHAT: $py, the first of $PYTHON, /usr/bin/python3 and
# python3 that runs CODE (imports, a version check); with none the whole
# script is skipped, naming WHAT.  PYTHONPATH gains the tree's python/.
tap_python()
{
	py=
	for _p in "${PYTHON:-}" /usr/bin/python3 python3; do
		[ -n "$_p" ] && "$_p" -c "$1" 2>/dev/null && { py=$_p; break; }
	done
	if [ -z "$py" ]; then
		echo "1..0 # SKIP $2"
		exit 0
	fi
	PYTHONPATH="$srcdir/python${PYTHONPATH:+:$PYTHONPATH}"
	export PYTHONPATH
}

# tap_models: the exported models the launcher's tests run: $zoo (the
# shared torchvision exports where the tree sits beside them, else the
# tree's copies), $resnet (ResNet-18 where the zoo has it, else the
# examples' ResNet-50), $keepbn (ResNet-18 with its batch norms kept) and
# $alexnet.
tap_models()
{
	zoo=$srcdir/../shared/data/onnx
	[ -d "$zoo" ] || zoo=$srcdir/tests/data/onnx
	resnet=$srcdir/examples/resnet50.onnx
	[ -f "$zoo/resnet18.onnx" ] && resnet=$zoo/resnet18.onnx
	keepbn=$zoo/resnet18_keepbn.onnx
	[ -f "$keepbn" ] || keepbn=$srcdir/tests/data/onnx/resnet18_keepbn.onnx
	alexnet=$zoo/alexnet.onnx
	[ -f "$alexnet" ] || alexnet=$srcdir/tests/data/onnx/alexnet.onnx
}

# has out|err TEXT: the last run's stdout or stderr holds TEXT.
has()
{
	grep -F -q -e "$2" "$tmp/$1" || fail "std$1 lacks '$2'"
}

# empty out|err: the last run's stdout or stderr is empty.
empty()
{
	[ -s "$tmp/$1" ] && fail "std$1 is not empty"
	return 0
}

# leftovers OUT: adds to why what a failed run left behind: output on
# $tmp/stdout, the file OUT, a temporary (.oraclec.tmp* beside OUT, or
# OUT.tmp* as older versions named them).
leftovers()
{
	[ -s "$tmp/stdout" ] && fail "wrote to stdout"
	[ -e "$1" ] && fail "left the output file ${1##*/}"
	for _f in "$1".tmp* "$(dirname "$1")"/.oraclec.tmp*; do
		[ -e "$_f" ] && fail "left a temporary ${_f##*/}"
	done
	return 0
}

finish()
{
	echo "1..$n"
	[ "$failed" -eq 0 ]
}

# device_note_only: the last run's stderr is empty, or holds only
# python3 -m oraclec.launch's note that a cuda plan runs on the CPU (this
# machine has fewer GPUs than the plan's ranks)
device_note_only()
{
	[ -s "$tmp/err" ] || return 0
	[ "$(wc -l <"$tmp/err")" -eq 1 ] || fail "stderr is not one line"
	grep -q "^oraclec.launch: note: the plan's device_type is cuda, and torch .* sees .* here: its [0-9]* ranks run on the CPU with gloo$" \
		"$tmp/err" || fail "stderr is not the device note"
}
