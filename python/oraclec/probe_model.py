"""oraclec.probe_model -- the formulas the probe fits its measurements to,
written as oraclec prices them (no torch here: the unit test runs them on
hand-computed cases).

  kernel_time   one matrix product's time as model/kernel.c prices it
                (tiles in waves over the SMs, split-K, a roofline, a fixed
                cost); fit_kernel finds its efficiency per precision and
                its tile overhead by least squares on log time
  fit_ring      a collective's start-up latency and bandwidth in the ring
                formula of docs/model.md "Collectives"
"""
import math

# the tiles the library chooses from (tm x tn), and the split-K factors
TILES = ((256, 128), (128, 256), (128, 128), (128, 64), (64, 128), (64, 64))
SPLITS = (1, 2, 4, 8, 16)


def tile_rate(tm, tn):
    """r(a, b) = a b / (a b + 10 (a + b)): a tile's arithmetic intensity
    as a fraction of its limit (its edges' loads against its area)."""
    return tm * tn / (tm * tn + 10.0 * (tm + tn))


def _candidates(M, N, K, B, S):
    """(tm, tn, s, tiles, waves, ceil(K / s), u_t / u) of every tile and
    split-K factor the library may choose (s > 1 only while tiles x s <= S)."""
    out = []
    r128 = tile_rate(128, 128)
    for tm, tn in TILES:
        T = B * math.ceil(M / tm) * math.ceil(N / tn)
        for s in SPLITS:
            if s > 1 and T * s > S:
                break
            out.append((tm, tn, s, T, math.ceil(T * s / S), math.ceil(K / s),
                        tile_rate(tm, tn) / r128))
    return out


def overhead_scale(peak, fp32_peak):
    """k0 is in steps of the fp32 main loop; at a faster format's peak the
    same seconds are peak / fp32_peak of its steps (model/kernel.c,
    overhead_steps)."""
    return peak / fp32_peak if fp32_peak and peak > fp32_peak else 1.0


def kernel_time(M, N, K, B, elem, peak, sms, u, k0, memory_bw, eff_memory,
                kernel_latency, fp32_peak=None):
    """Seconds of one matrix product (B products of M x K by K x N, elem
    bytes an element) as oraclec's kernel model prices it (model/kernel.c,
    docs/model.md "One kernel"):

      a tile of tm x tn (the menu TILES; the library picks the fastest)
      reaches u_t = u r(tm, tn) / r(128, 128) of the peak's share of one SM;
      T = B ceil(M / tm) ceil(N / tn) tiles, split-K s (1, 2, 4, 8, 16, s > 1
      only while T s <= S) over the S SMs in W = ceil(T s / S) waves:

      compute = W 2 tm tn (ceil(K / s) + k0 c) / (u_t peak / S)
                + (s > 1 ? s B M N 4 bytes / (eff_memory memory_bw) : 0)
      time    = max(compute, elem B (M K + K N + M N) / (eff_memory memory_bw))
                + kernel_latency

    u is eff_gemm (eff_gemm_<precision>), k0 the system's tile_overhead in
    fp32 steps, c = peak / fp32_peak above the fp32 peak (overhead_scale),
    else 1."""
    bw = eff_memory * memory_bw
    best = math.inf
    k0 *= overhead_scale(peak, fp32_peak)
    for tm, tn, s, T, W, ks, ratio in _candidates(M, N, K, B, sms):
        t = W * 2.0 * tm * tn * (ks + k0) / (u * ratio * peak / sms)
        if s > 1:
            t += s * B * M * N * 4.0 / bw
        best = min(best, t)
    memory = elem * B * (M * K + K * N + M * N) / bw
    return max(best, memory) + kernel_latency


class _Prepared:
    """kernel_time of many products as arrays: compute = min over the
    candidates of (a + b k0) / u + e, so that u and k0 can be searched
    without the tile loop (numpy)."""

    def __init__(self, np, rows, peak, sms, memory_bw, eff_memory, kernel_latency,
                 scale=1.0):
        bw = eff_memory * memory_bw
        width = len(TILES) * len(SPLITS)
        n = len(rows)
        self.np = np
        self.a = np.full((n, width), np.inf)
        self.b = np.zeros((n, width))
        self.e = np.zeros((n, width))
        self.memory = np.zeros(n)
        self.latency = kernel_latency
        for i, (M, N, K, B, elem) in enumerate(rows):
            for j, (tm, tn, s, T, W, ks, ratio) in enumerate(_candidates(M, N, K, B, sms)):
                per = W * 2.0 * tm * tn / (ratio * peak / sms)
                self.a[i, j] = per * ks
                self.b[i, j] = per * scale
                self.e[i, j] = s * B * M * N * 4.0 / bw if s > 1 else 0.0
            self.memory[i] = elem * B * (M * K + K * N + M * N) / bw

    def times(self, u, k0):
        np = self.np
        compute = np.min((self.a + self.b * k0) / u + self.e, axis=1)
        return np.maximum(compute, self.memory) + self.latency


def _golden(f, lo, hi, iters=60):
    """The x in [lo, hi] where f is least (golden-section search)."""
    g = (math.sqrt(5) - 1) / 2
    c, d = hi - g * (hi - lo), lo + g * (hi - lo)
    fc, fd = f(c), f(d)
    for _ in range(iters):
        if fc <= fd:
            hi, d, fd = d, c, fc
            c = hi - g * (hi - lo)
            fc = f(c)
        else:
            lo, c, fc = c, d, fd
            d = lo + g * (hi - lo)
            fd = f(d)
    return (lo + hi) / 2


def fit_kernel(groups, sms, memory_bw, eff_memory, kernel_latency, k0_max=1024.0):
    """Fits kernel_time to measured products: one u per precision and one
    k0 for all, by least squares on log time.

    groups: {precision: (peak, [(M, N, K, B, elem, seconds), ...])}.
    Returns {"u": {precision: u}, "k0": k0, "errors": [(precision,
    measured, predicted), ...]} or None without rows.  u is kept in
    [1e-4, 1] (an efficiency) and k0 in [0, k0_max], in steps of the fp32
    main loop (the fp32 group's peak; overhead_scale)."""
    import numpy as np
    prep, logs = {}, {}
    fp32_peak = groups["fp32"][0] if "fp32" in groups else None
    for prec, (peak, rows) in groups.items():
        rows = [r for r in rows if r[5] > 0]
        if rows and peak > 0:
            prep[prec] = _Prepared(np, [r[:5] for r in rows], peak, sms, memory_bw,
                                   eff_memory, kernel_latency,
                                   overhead_scale(peak, fp32_peak))
            logs[prec] = np.log(np.array([r[5] for r in rows]))
    if not prep:
        return None

    def loss(prec, u, k0):
        d = np.log(prep[prec].times(u, k0)) - logs[prec]
        return float(np.dot(d, d))

    def best_u(prec, k0):
        lu = _golden(lambda x: loss(prec, math.exp(x), k0), math.log(1e-4), 0.0)
        # the search's ends: an efficiency of 1 where the data want more
        u = min(max(math.exp(lu), 1e-4), 1.0)
        return u, loss(prec, u, k0)

    def total(k0):
        return sum(best_u(p, k0)[1] for p in prep)

    grid = [0.0] + [2.0 ** (i / 2) for i in range(0, int(2 * math.log2(k0_max)) + 1)]
    losses = [total(k) for k in grid]
    i = min(range(len(grid)), key=losses.__getitem__)
    lo, hi = grid[max(i - 1, 0)], grid[min(i + 1, len(grid) - 1)]
    k0 = _golden(total, lo, hi, iters=40) if hi > lo else grid[i]
    if total(k0) > losses[i]:
        k0 = grid[i]
    us = {p: best_u(p, k0)[0] for p in prep}
    errors = []
    for prec in prep:
        pred = prep[prec].times(us[prec], k0)
        errors += [(prec, float(math.exp(m)), float(t)) for m, t in zip(logs[prec], pred)]
    return {"u": us, "k0": k0, "errors": errors}


def percentage_errors(pairs):
    """(median, mean) of |predicted - measured| / measured in percent over
    (measured, predicted) pairs; (nan, nan) for none."""
    e = sorted(abs(p - m) / m * 100 for m, p in pairs if m > 0)
    if not e:
        return math.nan, math.nan
    n = len(e)
    med = e[n // 2] if n % 2 else (e[n // 2 - 1] + e[n // 2]) / 2
    return med, sum(e) / n


def ring_allreduce(m, p, alpha, bw):
    """docs/model.md "Collectives": 2 (p - 1) (alpha + m / (p bw))."""
    return 2 * (p - 1) * (alpha + m / (p * bw))


def fit_ring(points, p, large=1 << 20):
    """alpha (seconds) and bw (bytes/s) of the ring all-reduce formula
    from measured (message bytes, seconds) pairs of p ranks: alpha from the
    smallest messages (their time over 2 (p - 1)), bw by least squares
    through the origin on the time above the latency of the messages of
    `large` bytes or more (the larger half when none is).  None without
    points or p < 2."""
    pts = sorted((m, t) for m, t in points if t > 0)
    if not pts or p < 2:
        return None
    small = [t for _, t in pts[:3]]
    small.sort()
    alpha = small[len(small) // 2] / (2 * (p - 1))
    big = [(m, t) for m, t in pts if m >= large] or pts[len(pts) // 2:]
    num = sum(m * (t - 2 * (p - 1) * alpha) for m, t in big)
    den = sum(m * m for m, _ in big)
    slope = num / den if den > 0 else 0
    if slope <= 0:  # the large messages took no longer than the latency
        slope = min(t / m for m, t in big if m > 0)
    bw = 2 * (p - 1) / (p * slope)
    return alpha, bw
