# tap.sh -- the TAP helpers that tests/cli.sh and tests/plans.sh source.
#
# A case collects what is wrong with `fail REASON` and ends with
# `check DESCRIPTION`, which prints "ok N" or "not ok N" with the reasons
# and the head of $tmp/out and $tmp/err (the script's temporary directory)
# when they are not empty.  `finish` prints the plan and sets the status.
n=0 failed=0 why=

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

finish()
{
	echo "1..$n"
	[ "$failed" -eq 0 ]
}
