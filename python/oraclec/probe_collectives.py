"""probe_collectives.py -- the probe's measured collectives and step jitter
(python3 -m oraclec.probe --collectives; docs/probe.md, issue 39).

Measures, with torch.distributed on the devices at hand (gloo on the CPU,
NCCL on GPUs), each collective by message size at every rank count from 2
up to the ranks there are (doubling, and the count itself), and writes
them as nccl-tests prints them (github.com/NVIDIA/nccl-tests, src/common.cu:
a run's `# Collective test starting` and `#  Rank` lines, the header, and a
row a size: size, count, type, redop, root, then out-of-place and in-place
time in microseconds, algbw and busbw in GB/s and #wrong), so that
oraclec's `collectives = "collectives.txt"` reads them
(frontend/collectives.c).  busbw is nccl-tests' (src/all_reduce.cu and
kin): an all-reduce's algbw x 2 (n - 1) / n, an all-gather's and an
all-to-all's x (n - 1) / n, a broadcast's x 1.

Also measures `jitter`, a rank's step-to-step coefficient of variation:
every rank runs the same fixed step (matrix products of about 5 ms) many
times, each timed alone, with no collective between them; the jitter is
the median over the ranks of each one's standard deviation over its mean
(docs/model.md, "The slowest of N").  Standard library and torch only.
"""
import os
import socket
import statistics
import time

# the collectives measured, as nccl-tests names its programs, and the
# factor from algbw to busbw (nccl-tests' getBw functions) at n ranks
OPS = (("all_reduce", lambda n: 2.0 * (n - 1) / n),
       ("all_gather", lambda n: (n - 1) / n),
       ("broadcast", lambda n: 1.0),
       ("alltoall", lambda n: (n - 1) / n))
# the jitter's steps: so many, each about this long
STEPS, STEP_S = 40, 5e-3


def rank_counts(most):
    """2, 4, 8, ... up to `most`, and `most` itself."""
    out, n = [], 2
    while n < most:
        out.append(n)
        n *= 2
    return out + [most] if most >= 2 else []


def join(rank, world, port, cuda, threads):
    """A spawned rank of the probe's (here and probe.py's collectives):
    Ctrl-C left to the parent, its threads, its GPU, in the process group
    (NCCL on GPUs, gloo on the CPU) at 127.0.0.1:port.  Returns torch,
    torch.distributed, the device and a function that waits for it."""
    import datetime as dt
    import signal
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    import torch
    import torch.distributed as dist
    if threads:
        torch.set_num_threads(threads)
    if cuda:
        torch.cuda.set_device(rank)
    dev = torch.device("cuda", rank) if cuda else torch.device("cpu")
    dist.init_process_group("nccl" if cuda else "gloo", init_method="tcp://127.0.0.1:%d" % port,
                            rank=rank, world_size=world, timeout=dt.timedelta(seconds=120))

    def sync():
        if cuda:
            torch.cuda.synchronize()
    return torch, dist, dev, sync


def seconds(fn, reps, dist, sync):
    """A collective's time: the median of 3 runs of `reps` calls of fn,
    each run after a barrier and timed to its last call's end."""
    got = []
    for _ in range(3):
        dist.barrier()
        sync()
        t = time.perf_counter()
        for _ in range(reps):
            fn()
        sync()
        got.append((time.perf_counter() - t) / reps)
    return statistics.median(got)


def _rank(rank, world, port, cuda, threads, sizes, deadline, q):
    """One rank of one rank count: each collective by size while rank 0
    has time, then the jitter's steps."""
    try:
        torch, dist, dev, sync = join(rank, world, port, cuda, threads)
        flag = torch.zeros(1, device=dev)
        for op, _ in OPS:
            for m in sizes:
                flag.fill_(1.0 if rank != 0 or time.time() < deadline else 0.0)
                dist.broadcast(flag, 0)
                if flag.item() == 0:
                    continue
                n = max(world, m // 4 // world * world)  # whole shares a rank
                buf = torch.ones(n, device=dev)
                if op == "all_reduce":
                    fn = lambda: dist.all_reduce(buf)
                elif op == "broadcast":
                    fn = lambda: dist.broadcast(buf, 0)
                elif op == "all_gather":
                    part = torch.ones(n // world, device=dev)
                    outs = list(buf.chunk(world))
                    fn = lambda: dist.all_gather(outs, part)
                else:
                    out = torch.empty_like(buf)
                    fn = lambda: dist.all_to_all_single(out, buf)
                try:
                    fn()
                except RuntimeError:  # a backend without it (gloo's all-to-all)
                    break
                reps = 20 if 4 * n <= 65536 else 10 if 4 * n <= 4 << 20 else 3
                sync()
                sec = seconds(fn, reps, dist, sync)
                if rank == 0:
                    q.put(("row", op, world, 4 * n, sec))
        # the jitter: a fixed step, timed alone, many times
        a = torch.randn(256, 256, device=dev)
        t = time.perf_counter()
        sync()
        a @ a
        sync()
        once = max(time.perf_counter() - t, 1e-6)
        k = max(1, int(STEP_S / once))
        times = []
        for _ in range(STEPS):
            sync()
            t = time.perf_counter()
            for _ in range(k):
                a @ a
            sync()
            times.append(time.perf_counter() - t)
        mean = statistics.fmean(times[2:])
        q.put(("jitter", rank, statistics.pstdev(times[2:]) / mean if mean > 0 else 0.0))
        dist.destroy_process_group()
        q.put(("done",))
    except Exception as e:
        q.put(("error", rank, str(e).splitlines()[0] if str(e) else type(e).__name__))


def table_text(runs, device):
    """nccl-tests' output for runs {(op, ranks): [(bytes, seconds)]}."""
    lines = []
    host = socket.gethostname() or "localhost"
    for (op, n), rows in sorted(runs.items()):
        if not rows:
            continue
        factor = dict(OPS)[op](n)
        lines.append("# Collective test starting: %s_perf" % op)
        lines.append("# nThread 1 nGpus 1 minBytes %d maxBytes %d step: 4(factor) "
                     "warmup iters: 1 iters: 3 agg iters: 1 validation: 0 graph: 0" %
                     (rows[0][0], rows[-1][0]))
        lines.append("#")
        lines.append("# Using devices")
        for r in range(n):
            lines.append("#  Rank %2d Group  0 Pid %6d on %10s device %2d [0x00] %s" %
                         (r, os.getpid(), host, r, device))
        lines.append("#")
        lines.append("#%75s%38s" % ("out-of-place", "in-place"))
        lines.append("#       size         count      type   redop    root     time   algbw"
                     "   busbw #wrong     time   algbw   busbw #wrong")
        lines.append("#        (B)    (elements)                               (us)  (GB/s)"
                     "  (GB/s)            (us)  (GB/s)  (GB/s)       ")
        for size, sec in rows:
            us = max(sec * 1e6, 1e-3)
            alg = size / sec / 1e9
            cols = "%8.2f  %6.2f  %6.2f      0" % (us, alg, alg * factor)
            lines.append("%12d  %12d     float  %6s  %6d  %s  %s" % (
                size, size // 4, "sum" if op == "all_reduce" else "none",
                0 if op == "broadcast" else -1, cols, cols))
        lines.append("# Out of bounds values : 0 OK")
        lines.append("#")
    return "\n".join(lines) + "\n"


def measure(P, clock, spawn, free_port):
    """The rank counts' runs into P.info["collectives_text"] and the jitter
    into P.info["jitter"]; `spawn` and `free_port` are the probe's."""
    torch = P.torch
    most = min(torch.cuda.device_count(), 8) if P.cuda else P.ranks
    counts = rank_counts(most)
    if not counts:
        return "one rank: no collective to measure"
    sizes = [4 << (2 * i) for i in range(11 if P.quick else 13)]  # 4 B to 4 or 64 MB
    runs, jitter, errors = {}, [], []
    device = torch.cuda.get_device_name(0) if P.cuda else "CPU"
    for i, n in enumerate(counts):
        box = clock.share(len(counts) - i)
        deadline = time.time() + max(box.left() - 2, 1)

        def on(msg, n=n):
            if msg[0] == "row":
                runs.setdefault((msg[1], n), []).append((msg[3], msg[4]))
            elif msg[0] == "jitter":
                jitter.append(msg[2])
        err = spawn(_rank, n, (n, free_port(), P.cuda, P.threads, sizes, deadline), box, on)
        if err:
            errors.append("%d ranks: %s" % (n, err))
    for rows in runs.values():
        rows.sort()
    if runs:
        P.info["collectives_text"] = table_text(runs, device)
    if jitter:
        P.info["jitter"] = statistics.median(jitter)
    return "; ".join(errors) or None
