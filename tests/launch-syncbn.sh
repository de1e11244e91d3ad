#!/bin/sh
# launch-syncbn.sh -- a plan's sync_batchnorm_group_size (oraclec --sync-bn
# K) in python3 -m oraclec.launch (docs/plans.md, issue 39.4):
#
# - the groups: runner.sync_bn_group makes groups of K consecutive ranks of
#   the data dimension with torch.distributed.new_group, every rank every
#   group in one order; on 4 gloo ranks an all-reduce of each rank's number
#   over its group sums {0, 1} and {2, 3} on a data=4 mesh, {0, 2} and
#   {1, 3} on data=2 x pipeline=2 (data outer: ranks 0 and 2 are one
#   stage's copies), and convert_sync_batchnorm gives each batch norm that
#   group;
# - on the CPU (gloo) torch's SyncBatchNorm does not run (it needs CUDA):
#   the launcher refuses the plan in one line naming the key, exit status
#   1, nothing run; the same plan written without --sync-bn runs.
# Skipped where no python3 has torch and torchvision.  TAP.
. "${srcdir:=.}/tests/tap.sh"
tap_begin launchsyncbn

tap_python 'import torch, torchvision' \
	"no python3 with torch and torchvision (./bootstrap --tests installs them)"

# spawn imports the ranks' function from the script: a file, its main guarded
cat >"$tmp/groups.py" <<'PY'
import os
import socket

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn

from oraclec import runner


def small():
    return nn.Sequential(nn.Conv2d(1, 3, 3), nn.BatchNorm2d(3), nn.Dropout())


def rank(r, plan, port, q):
    os.environ["MASTER_ADDR"], os.environ["MASTER_PORT"] = "127.0.0.1", str(port)
    dist.init_process_group("gloo", rank=r, world_size=4)
    g = runner.sync_bn_group(plan, r)
    t = torch.tensor([float(r)])
    dist.all_reduce(t, group=g)
    m = nn.SyncBatchNorm.convert_sync_batchnorm(nn.Sequential(nn.BatchNorm2d(3)), g)
    # --check: the launcher's model agrees with the plan; a batch norm over
    # the world, one not synchronised, and one where the plan has no groups
    # are each named with the ranks it has and those the plan gives
    checked = runner.prepared(small(), plan, r, True)
    trained = runner.prepared(small(), plan, r, False)
    world = nn.SyncBatchNorm.convert_sync_batchnorm(small())
    plain = {k: v for k, v in plan.items() if k != "sync_batchnorm_group_size"}
    said = (runner.check_sync_bn(checked, plan, r),
            runner.check_sync_bn(world, plan, r),
            runner.check_sync_bn(small(), plan, r),
            runner.check_sync_bn(checked, plain, r),
            runner.check_sync_bn(small(), plain, r))
    modes = (type(checked[1]).__name__, checked[1].training, checked[2].training,
             checked[0].training, trained[1].training)
    q.put((r, t.item(), type(m[0]).__name__, m[0].process_group is g, said, modes))
    dist.destroy_process_group()


def said_want(r, members):
    plan = "the plan's sync_batchnorm_group_size 2 gives rank %d the group %s" % (r, members)
    return (None,
            "1 is a SyncBatchNorm over ranks [0, 1, 2, 3]; " + plan,
            "1 is a BatchNorm2d, not synchronised; " + plan,
            "1 is a SyncBatchNorm over ranks %s; the plan has no "
            "sync_batchnorm_group_size" % members,
            None)


def main():
    for shape, names, want in (([4], ["data"], {0: 1, 1: 1, 2: 5, 3: 5}),
                               ([2, 2], ["data", "pipeline"], {0: 2, 1: 4, 2: 2, 3: 4})):
        plan = {"world_size": 4, "sync_batchnorm_group_size": 2,
                "device_mesh": {"mesh_shape": shape, "mesh_dim_names": names}}
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        q = mp.get_context("spawn").Queue()
        mp.start_processes(rank, args=(plan, port, q), nprocs=4, start_method="spawn")
        got = sorted(q.get() for _ in range(4))
        assert [(r, t) for r, t, _, _, _, _ in got] == sorted(want.items()), (names, got)
        assert all(k == "SyncBatchNorm" and same for _, _, k, same, _, _ in got), got
        for r, _, _, _, said, modes in got:
            members = [q for q in range(4) if want[q] == want[r]]
            assert said == said_want(r, members), (names, r, said)
            # --check's batch norms on running statistics after the
            # conversion (which keeps no mode), dropout off; a run trains
            assert modes == ("SyncBatchNorm", False, False, True, True), (names, r, modes)
    print("ok")


if __name__ == "__main__":
    main()
PY
"$py" "$tmp/groups.py" >"$tmp/out" 2>"$tmp/err" || fail "the groups: $(tail -3 "$tmp/err")"
grep -qx ok "$tmp/out" || fail "the groups: no ok"
check "groups of K = 2 consecutive data ranks: {0,1},{2,3} on data=4, {0,2},{1,3} on data=2 x pipeline=2; each SyncBatchNorm holds its rank's group; --check names a batch norm over other ranks than the plan's group, one not synchronised, one the plan does not synchronise; --check's batch norms evaluate after the conversion"

cat >"$tmp/mine.py" <<'EOF2'
import torch.nn as nn


def small():
    return nn.Sequential(nn.Conv2d(1, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(),
                         nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(8, 10))
EOF2
cat >"$tmp/small.odl" <<'EOF2'
model small {
    input x: 1x28x28;
    conv = conv(x, 8, kernel=3, pad=1);
    bn = batchnorm(conv);
    relu = relu(bn);
    avg = globalavgpool(relu);
    flat = flatten(avg);
    fc = fc(flat, 10);
}
EOF2
"$ORACLEC" "$tmp/small.odl" --grid data=2 -b 4 --sync-bn 2 --plan pytorch -q \
	-o "$tmp/sync.json" 2>"$tmp/err" || fail "oraclec --sync-bn 2 --plan pytorch: exit status $?"
"$ORACLEC" "$tmp/small.odl" --grid data=2 -b 4 --plan pytorch -q \
	-o "$tmp/plain.json" 2>>"$tmp/err" || fail "oraclec --plan pytorch: exit status $?"
grep -q '"sync_batchnorm_group_size": 2' "$tmp/sync.json" || fail "the plan has no groups of 2"
"$py" -m oraclec.launch --plan "$tmp/sync.json" --model "$tmp/mine.py:small" --device cpu \
	--steps 1 >"$tmp/out" 2>"$tmp/err"
status=$?
want_status 1
[ "$(wc -l <"$tmp/err")" -eq 1 ] || fail "stderr is not one line: $(cat "$tmp/err")"
has err "sync_batchnorm_group_size: torch's SyncBatchNorm runs on GPUs only"
[ -s "$tmp/out" ] && fail "stdout: $(cat "$tmp/out")"
"$py" -m oraclec.launch --plan "$tmp/plain.json" --model "$tmp/mine.py:small" --device cpu \
	--steps 1 >"$tmp/out" 2>"$tmp/err"
status=$?
want_status 0
check "on the CPU a plan with sync_batchnorm_group_size is refused in one line naming it (exit 1); the same plan without it runs"

finish
