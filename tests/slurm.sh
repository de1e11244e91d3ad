#!/bin/sh
# slurm.sh -- the Slurm plan and the batch analysis's job array, run by
# Slurm's own daemons (docs/plans.md, "slurm").  The test starts a one-node
# cluster on localhost in a temporary directory -- munged, slurmctld and
# slurmd from Debian's slurm-wlm, a node of 8 CPUs and 4 GPUs (gres on
# placeholder files: no GPU is used), its own ports and state -- and stops
# it at exit.  Checked:
#
#   - `sbatch` of a 4-GPU plan (one abci node) with a stub trainer: every
#     rank runs once, with RANK, LOCAL_RANK, WORLD_SIZE, MASTER_ADDR and
#     MASTER_PORT as the plan's rank table says;
#   - an 8-GPU plan (two nodes) submitted with --nodes=1 stops before srun
#     with exit 1 and a message saying to write the plan for the job's size;
#   - `make slurm` of examples/batch (a job array of one task per report
#     and page, then the merge) writes the summary.csv that `make` writes
#     without Slurm, byte for byte, and the pages.
#
# Skipped without the daemons (`./bootstrap --tests` installs slurm-wlm
# and munge) or when not root (slurmd starts jobs as root here).  TAP.
. "${srcdir:=.}/tests/tap.sh"
tap_env

for p in munged mungekey slurmctld slurmd sbatch sinfo scontrol bash; do
	if ! command -v $p >/dev/null 2>&1 && [ ! -x /usr/sbin/$p ]; then
		echo "1..0 # SKIP no $p (./bootstrap --tests installs slurm-wlm and munge)"
		exit 0
	fi
done
if [ "$(id -u)" -ne 0 ]; then
	echo "1..0 # SKIP not root: the test's slurmd starts jobs as root"
	exit 0
fi
PATH=$PATH:/usr/sbin

tmp=$(mktemp -d "${TMPDIR:-/tmp}/slurm.XXXXXX") || exit 99
chmod 755 "$tmp"
stop()
{
	for d in slurmd slurmctld munged; do
		[ -s "$tmp/$d.pid" ] && kill "$(cat "$tmp/$d.pid")" 2>/dev/null
	done
	sleep 1
	rm -rf "$tmp"
}
trap stop EXIT
trap 'exit 1' HUP INT TERM

# ---- a one-node cluster ------------------------------------------------

mkdir "$tmp/state" "$tmp/spool" "$tmp/munge" "$tmp/ranks"
chmod 755 "$tmp/munge"
port=$((20000 + $$ % 20000))
mungekey -c -k "$tmp/munge.key" 2>"$tmp/err" || { echo "1..0 # SKIP mungekey failed"; exit 0; }
munged --force -S "$tmp/munge/socket" --key-file="$tmp/munge.key" --log-file="$tmp/munged.log" \
	--pid-file="$tmp/munged.pid" --seed-file="$tmp/munged.seed" 2>>"$tmp/err" ||
	{ echo "1..0 # SKIP munged does not start: $(head -c 200 "$tmp/err")"; exit 0; }
for i in 0 1 2 3; do : >"$tmp/gpu$i"; done
cat >"$tmp/slurm.conf" <<EOF
ClusterName=oraclec-test
SlurmctldHost=localhost(127.0.0.1)
SlurmctldPort=$port
SlurmdPort=$((port + 1))
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$tmp/munge/socket
SlurmUser=root
SlurmdUser=root
StateSaveLocation=$tmp/state
SlurmdSpoolDir=$tmp/spool
SlurmctldPidFile=$tmp/slurmctld.pid
SlurmdPidFile=$tmp/slurmd.pid
SlurmctldLogFile=$tmp/slurmctld.log
SlurmdLogFile=$tmp/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
ReturnToService=2
SlurmdParameters=config_overrides
GresTypes=gpu
NodeName=localhost NodeAddr=127.0.0.1 CPUs=8 Gres=gpu:4 State=UNKNOWN
PartitionName=test Nodes=localhost Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES
EOF
echo "NodeName=localhost Name=gpu File=$tmp/gpu[0-3]" >"$tmp/gres.conf"
SLURM_CONF=$tmp/slurm.conf
export SLURM_CONF
slurmctld -f "$SLURM_CONF" 2>>"$tmp/err" && slurmd -f "$SLURM_CONF" -N localhost 2>>"$tmp/err" ||
	{ echo "1..0 # SKIP the Slurm daemons do not start: $(head -c 200 "$tmp/err")"; exit 0; }
state=
for _ in $(seq 60); do
	state=$(sinfo -h -o %t 2>/dev/null)
	[ "$state" = idle ] && break
	case $state in drain* | inval*) scontrol update nodename=localhost state=resume 2>/dev/null ;; esac
	sleep 0.5
done
if [ "$state" != idle ]; then
	echo "1..0 # SKIP the test cluster's node is '$state', not idle"
	exit 0
fi

# A trainer that records what each rank was given.
cat >"$tmp/trainer.sh" <<'EOF'
#!/bin/sh
echo "$RANK $LOCAL_RANK $WORLD_SIZE $MASTER_ADDR $MASTER_PORT $SLURM_NODEID" >"$OUT/rank.$RANK"
EOF
chmod +x "$tmp/trainer.sh"

# ---- the plan ------------------------------------------------------------

"$ORACLEC" "$srcdir/examples/resnet50.odl" -s abci -g 4 --plan slurm -q -o "$tmp/plan4.sh" 2>"$tmp/err" ||
	fail "oraclec: exit status $?"
# the loader's CPUs as abci's cost model took them: chainermn-paradl's 20
# workers, at most 40 cores over 4 GPUs; the test node has 8 CPUs, so the
# command line asks 1 (sbatch's options override the script's)
grep -qx '#SBATCH --cpus-per-task=10' "$tmp/plan4.sh" || fail "no --cpus-per-task=10"
OUT=$tmp/ranks timeout 120 sbatch --wait --export=ALL --cpus-per-task=1 -o "$tmp/job4.out" \
	"$tmp/plan4.sh" "$tmp/trainer.sh" >"$tmp/sbatch.out" 2>>"$tmp/err" || fail "sbatch: exit status $?"
[ "$(ls "$tmp/ranks" | wc -l)" -eq 4 ] || fail "$(ls "$tmp/ranks" | wc -l) ranks ran, not 4"
sed -n '/<<.RANKS.$/,/^RANKS$/p' "$tmp/plan4.sh" | sed '1d;$d' |
while read -r rank node gpu rest; do
	want="$rank $gpu 4 localhost 29500 $node"
	got=$(cat "$tmp/ranks/rank.$rank" 2>/dev/null)
	[ "$got" = "$want" ] || echo "rank $rank: '$got', the plan: '$want'"
done >"$tmp/diff"
[ -s "$tmp/diff" ] && fail "$(cat "$tmp/diff")"
check "sbatch of a 4-GPU plan: 4 ranks, each with the plan's RANK, LOCAL_RANK, WORLD_SIZE and master; the loader's CPUs a task"

"$ORACLEC" "$srcdir/examples/resnet50.odl" -s abci -g 8 --plan slurm -q -o "$tmp/plan8.sh" 2>"$tmp/err" ||
	fail "oraclec: exit status $?"
rm -f "$tmp/ranks/"*
OUT=$tmp/ranks timeout 120 sbatch --wait --export=ALL --nodes=1 --ntasks=4 --cpus-per-task=1 \
	-o "$tmp/job8.out" \
	"$tmp/plan8.sh" "$tmp/trainer.sh" >"$tmp/sbatch.out" 2>>"$tmp/err"
s=$?
[ $s -eq 1 ] || fail "sbatch: exit status $s, expected the job's 1"
grep -q "oraclec plan: the job has 1 node(s); this plan places its 8 ranks on 2: write the plan for the job's size" \
	"$tmp/job8.out" || fail "no message: $(cat "$tmp/job8.out")"
[ -z "$(ls "$tmp/ranks")" ] || fail "ranks ran"
check "a 2-node plan in a 1-node job stops before srun with exit 1: write the plan for the job's size"

# ---- the batch analysis as a job array ----------------------------------

for d in slurm local; do
	mkdir -p "$tmp/$d/batch"
	cp "$srcdir/examples/batch/Makefile" "$srcdir/examples/batch/cell.sh" "$tmp/$d/batch/"
	cp "$srcdir/examples/alexnet.odl" "$srcdir/examples/vgg16.odl" "$tmp/$d/"
done
args="ORACLEC=$ORACLEC GPUS=1\\ 4 SYSTEMS=abci\\ dgx-a100"
(cd "$tmp/local/batch" && eval "make -s $args") >"$tmp/out.local" 2>&1 || fail "make: $(head -3 "$tmp/out.local")"
(cd "$tmp/slurm/batch" && eval "timeout 300 make -s slurm SBATCH_FLAGS=--wait $args") \
	>"$tmp/out" 2>"$tmp/err" || fail "make slurm: exit status $?"
grep -q '^job array [0-9]*: 12 cells$' "$tmp/out" || fail "not a job array of 12 cells"
cmp -s "$tmp/local/batch/out/summary.csv" "$tmp/slurm/batch/out/summary.csv" ||
	fail "summary.csv differs from make's"
[ "$(wc -l <"$tmp/slurm/batch/out/summary.csv")" -eq 89 ] || fail "not 88 rows and a header"
[ "$(find "$tmp/slurm/batch/out" -name '*.html' | wc -l)" -eq 4 ] || fail "not 4 pages"
check "make slurm: a job array of 12 cells and the merge write make's summary.csv and the pages"

finish
