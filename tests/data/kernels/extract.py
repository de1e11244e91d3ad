#!/usr/bin/python3
"""Extract a deterministic subset of NeuSight's single-operator GPU
microbenchmarks into the plain CSV files of this folder.

Usage:
    /usr/bin/python3 extract.py NEUSIGHT_CHECKOUT [OUT_DIR] [--scale X]

NEUSIGHT_CHECKOUT is a checkout of https://github.com/sitar-lab/NeuSight
(files read are listed in README.md).  OUT_DIR defaults to the folder that
holds this script.  --scale multiplies every per-group row quota (use a
large value such as 1000 to export every row, e.g. for analysis); the
tests read the default's, --scale 1.

Only the Python standard library is used.  Output is deterministic: the
same checkout gives byte-identical files.
"""

import csv
import glob
import json
import math
import os
import re
import sys

# ---------------------------------------------------------------------------
# GPUs: NeuSight device name -> (our id, family, SM architecture)
# id and family/sm_arch are ours (public NVIDIA facts), the numbers come from
# NeuSight's scripts/asplos/data/device_configs/<name>.json.
GPUS = [
    ("Tesla P4", "P4", "pascal", 61, "Tesla_P4.json"),
    ("Tesla P100-PCIE-16GB", "P100-PCIe-16GB", "pascal", 60,
     "Tesla_P100-PCIE-16GB.json"),
    ("Tesla V100-PCIE-32GB", "V100-PCIe-32GB", "volta", 70,
     "Tesla_V100-PCIE-32GB.json"),
    ("Tesla T4", "T4", "turing", 75, "Tesla_T4.json"),
    ("NVIDIA A100-PCIE-40GB", "A100-PCIe-40GB", "ampere", 80,
     "NVIDIA_A100-PCIE-40GB.json"),
    ("NVIDIA A100 80GB PCIe", "A100-PCIe-80GB", "ampere", 80,
     "NVIDIA_A100_80GB_PCIe.json"),
    ("NVIDIA L4", "L4", "ada", 89, "NVIDIA_L4.json"),
    ("NVIDIA H100 80GB HBM3", "H100-SXM-80GB", "hopper", 90,
     "NVIDIA_H100_80GB_HBM3.json"),
]
GPU_ID = {g[0]: g[1] for g in GPUS}
GPU_ORDER = {g[1]: i for i, g in enumerate(GPUS)}

ELEM_BINARY = ["add", "mul", "div", "pow"]          # two tensor inputs
ELEM_UNARY = ["addu", "mulu", "divu", "powu", "relu", "tanh"]  # one tensor
NORM_OPS = ["ln", "softmax", "gelu"]

# Per-(op, gpu) row quotas at --scale 1.
QUOTA = {"gemm": 400, "conv": 400, "norm": 200, "elementwise": 60}
NBINS = 16

BASE = os.path.join("scripts", "asplos", "data")
TRAIN = os.path.join(BASE, "dataset", "train", "collect")
TEST = os.path.join(BASE, "dataset", "test")


def read_csv(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def collect_rows(root, op):
    """Rows of train/collect/<op>/p2.1.0/*.csv then, where present, the
    merged test/<file>.csv rows of that op (NeuSight's test split)."""
    out = []
    for p in sorted(glob.glob(os.path.join(root, TRAIN, op, "p2.1.0",
                                           "*.csv"))):
        for r in read_csv(p):
            r["_set"] = "train"
            out.append(r)
    test_file = {"linear": "linear.csv", "bmm": "bmm.csv", "ln": "ln.csv",
                 "softmax": "softmax.csv"}.get(op, "elem.csv")
    p = os.path.join(root, TEST, test_file)
    if op != "conv" and os.path.isfile(p):
        for r in read_csv(p):
            if r["OPName"] == op:
                r["_set"] = "test"
                out.append(r)
    return out


# ---------------------------------------------------------------------------
# Kernel names

def strip_templates(s):
    out, depth = [], 0
    for ch in s:
        if ch == "<":
            depth += 1
        elif ch == ">":
            depth = max(0, depth - 1)
        elif depth == 0:
            out.append(ch)
    return "".join(out)


def short_kernel(name):
    """Compact kernel name without commas: no 'void', no argument list, no
    template arguments, no namespaces; cutlass::Kernel<X> becomes X; for
    cuDNN's *_convolve_sgemm<...> the integer template arguments are kept,
    joined by '_' (e.g. implicit_convolve_sgemm_1024_5_5_3_3_3_1)."""
    s = name.strip().replace("(anonymous namespace)", "anon")
    m = re.search(r"cutlass::Kernel<(cutlass_[A-Za-z0-9_]+)>", s)
    if m:
        return m.group(1)
    if s.startswith("void "):
        s = s[5:]
    m = re.match(r"((?:implicit|precomputed|explicit)_convolve_sgemm)<([^>]*)>", s)
    if m:
        # keep cuDNN's integer template arguments (they hold log2 tile sizes)
        ints = [a.strip() for a in m.group(2).split(",")
                if a.strip().isdigit()]
        return "_".join([m.group(1)] + ints)
    s = strip_templates(s)
    i = s.find("(")
    if i >= 0:
        s = s[:i]
    s = s.strip().split("::")[-1]
    return s.replace(",", " ").strip()


def kernel_list(r):
    """All kernels the operator launched (NeuSight's 'Kernels' column); when
    that column is absent or empty, the main kernel alone."""
    ks = [k for k in (r.get("Kernels") or "").split(";") if k.strip()]
    if not ks:
        ks = [r["Kernel Name"]]
    return [short_kernel(k) for k in ks]


def others(kernels, main):
    """The launched kernels other than (one instance of) the main one."""
    ks = list(kernels)
    if main in ks:
        ks.remove(main)
    return "+".join(ks)


def gemm_tile(kname):
    """(tile_m, tile_n) of the output tile in PyTorch row-major terms
    (m = output rows, n = output columns) parsed from a cuBLAS/cutlass
    kernel name, or (None, None).  Orientation was checked against the
    launch grids: legacy cuBLAS 'sgemm_AxB' and cutlass 'sgemm_AxB' tile n
    by A and m by B (cuBLAS is column-major, so PyTorch's n is its m);
    xmma 'tilesizeAxBxK' tiles m by A and n by B."""
    k = kname.lower()
    mm = re.search(r"tilesize(\d+)x(\d+)x(\d+)", k)
    if mm:
        return int(mm.group(1)), int(mm.group(2))
    mm = re.search(r"sgemm_(\d+)x(\d+)", k)
    if mm:
        return int(mm.group(2)), int(mm.group(1))
    return None, None


def conv_algo(kernels):
    j = " ".join(kernels).lower()
    if "winogradforwarddata4x4" in j:
        return "winograd_nonfused_4x4"
    if "scudnn_winograd" in j:
        return "winograd_fused"
    if "fft2d" in j or "gcgemm" in j:
        return "fft"
    if "explicit_convolve_sgemm" in j or "im2col" in j:
        return "explicit_gemm"
    if ("implicit_convolve_sgemm" in j or "precomputed_convolve_sgemm" in j
            or "scudnn_" in j):
        return "implicit_gemm"
    return "other"


# ---------------------------------------------------------------------------
# Deterministic stratified sampling

def sample(rows, key, quota, tiebreak):
    """Keep at most `quota` rows, spread over NBINS equal-width bins of
    log10(key) so that every size range stays represented (quota per bin is
    water-filled: small bins keep all rows).  Within a bin rows are sorted
    by (key, tiebreak) and picked at evenly spaced ranks."""
    if len(rows) <= quota:
        return list(rows)
    lk = [math.log10(max(key(r), 1e-30)) for r in rows]
    lo, hi = min(lk), max(lk)
    width = (hi - lo) / NBINS or 1.0
    bins = [[] for _ in range(NBINS)]
    for r, v in zip(rows, lk):
        bins[min(NBINS - 1, int((v - lo) / width))].append(r)
    sizes = [len(b) for b in bins]
    take = [0] * NBINS
    left = quota
    open_bins = [i for i in range(NBINS) if sizes[i] > 0]
    while left > 0 and open_bins:
        share = max(1, left // len(open_bins))
        nxt = []
        for i in open_bins:
            if left == 0:
                break
            add = min(share, sizes[i] - take[i], left)
            take[i] += add
            left -= add
            if take[i] < sizes[i]:
                nxt.append(i)
        open_bins = nxt
    out = []
    for b, q in zip(bins, take):
        b.sort(key=lambda r: (key(r), tiebreak(r)))
        n = len(b)
        out.extend(b[(2 * i + 1) * n // (2 * q)] for i in range(q))
    return out


def fmt(x):
    if isinstance(x, float):
        return "%.6g" % x
    return "" if x is None else str(x)


def write_csv(path, header, rows):
    with open(path, "w", newline="") as f:
        f.write(",".join(header) + "\n")
        for r in rows:
            f.write(",".join(fmt(r[h]) for h in header) + "\n")


def seconds(r):
    return float(r["Latency"]) / 1000.0     # NeuSight stores milliseconds


def grid(r):
    return int(r["Grid x"]), int(r["Grid y"]), int(r["Grid z"])


def block(r):
    return int(r["Block x"]), int(r["Block y"]), int(r["Block z"])


def select(rows, kind, scale, keyf, tieb):
    groups = {}
    for r in rows:
        groups.setdefault((r["op"], r["gpu"]), []).append(r)
    out = []
    q = int(round(QUOTA[kind] * scale))
    for g in sorted(groups, key=lambda g: (g[0], GPU_ORDER[g[1]])):
        out.extend(sample(groups[g], keyf, q, tieb))
    out.sort(key=lambda r: (GPU_ORDER[r["gpu"]], r["op"], r["set"],
                            keyf(r), tieb(r)))
    return out


# ---------------------------------------------------------------------------

def do_gpus(root, out_dir):
    rows = []
    for dev, gid, fam, sm, fname in GPUS:
        p = os.path.join(root, BASE, "device_configs", fname)
        with open(p) as f:
            c = json.load(f)
        assert c["Device"] == dev, (p, c["Device"])
        rows.append({
            "gpu": gid, "device_name": dev.replace(",", " "),
            "family": fam, "sm_arch": sm,
            "sms": int(c["Num_Sm"]),
            "fp32_cores_per_sm": int(c["Core_Per_SM"]),
            "fp32_peak_flops": float(c["SingleFLOPs"]) * 1e9,
            "mem_bw_Bps": float(c["Mem_Bw"]) * 1e9,
            "l2_bytes": int(round(float(c["L2Cache"]) * 2 ** 20)),
            "clock_hz": float(c["Freq"]) * 1e6,
            "mem_bytes": int(round(float(c["Dev_Mem"]) * 2 ** 30)),
            "source": "device_configs/" + fname,
        })
    write_csv(os.path.join(out_dir, "gpus.csv"),
              ["gpu", "device_name", "family", "sm_arch", "sms",
               "fp32_cores_per_sm", "fp32_peak_flops", "mem_bw_Bps",
               "l2_bytes", "clock_hz", "mem_bytes", "source"], rows)


def do_gemm(root, out_dir, scale):
    rows = []
    for op in ["linear", "bmm"]:
        for r in collect_rows(root, op):
            if r["Device"] not in GPU_ID:
                continue
            B, M, N, K = (int(r[x]) for x in "BMNK")
            # NeuSight: bmm(A[B,M,N], W[B,N,K]); linear: x[B,M,N] -> [B,M,K]
            # (nn.Linear(N, K, bias=True)).  Standard GEMM notation here:
            # C[m,n] = A[m,k] * B[k,n], `batch` independent GEMMs.
            if op == "linear":
                batch, m, n, k = 1, B * M, K, N
            else:
                batch, m, n, k = B, M, K, N
            gx, gy, gz = grid(r)
            ks = kernel_list(r)
            kern = short_kernel(r["Kernel Name"])
            tm, tn = gemm_tile(kern)
            split = ""
            if gz % batch == 0 and gz // batch >= 1 and gz < 65535:
                split = gz // batch
            rows.append({
                "gpu": GPU_ID[r["Device"]], "set": r["_set"], "op": op,
                "batch": batch, "m": m, "n": n, "k": k,
                "bias": 1 if op == "linear" else 0, "dtype": "fp32",
                "seconds": seconds(r), "kernel": kern,
                "n_kernels": len(ks), "other_kernels": others(ks, kern),
                "grid_x": gx, "grid_y": gy, "grid_z": gz,
                "block_x": block(r)[0],
                "tile_m": tm, "tile_n": tn, "split_k": split,
            })
    keyf = lambda r: 2.0 * r["batch"] * r["m"] * r["n"] * r["k"]
    tieb = lambda r: (r["batch"], r["m"], r["n"], r["k"], r["seconds"])
    rows = select(rows, "gemm", scale, keyf, tieb)
    write_csv(os.path.join(out_dir, "gemm.csv"),
              ["gpu", "set", "op", "batch", "m", "n", "k", "bias", "dtype",
               "seconds", "kernel", "tile_m", "tile_n", "grid_x", "grid_y",
               "grid_z", "split_k", "block_x", "n_kernels", "other_kernels"],
              rows)
    return rows


def do_conv(root, out_dir, scale):
    rows = []
    for r in collect_rows(root, "conv"):
        if r["Device"] not in GPU_ID:
            continue
        n, c, k = int(r["B"]), int(r["Input_Channel"]), int(r["Output_Channel"])
        rs, hw = int(r["Kernel_Szie"]), int(r["Input_Size"])
        st, pd = int(r["Stride"]), int(r["Padding"])
        ho = (hw + 2 * pd - rs) // st + 1
        ks = kernel_list(r)
        kern = short_kernel(r["Kernel Name"])
        gx, gy, gz = grid(r)
        rows.append({
            "gpu": GPU_ID[r["Device"]], "set": r["_set"], "direction": "fwd",
            "n": n, "c": c, "h": hw, "w": hw, "k": k, "r": rs, "s": rs,
            "stride": st, "pad": pd, "groups": 1, "ho": ho, "wo": ho,
            "dtype": "fp32", "seconds": seconds(r), "algo": conv_algo(ks),
            "kernel": kern,
            "grid_x": gx, "grid_y": gy, "grid_z": gz,
            "n_kernels": len(ks), "other_kernels": others(ks, kern),
            "op": "conv",
        })
    keyf = lambda r: 2.0 * r["n"] * r["k"] * r["ho"] * r["wo"] * r["c"] * 9
    tieb = lambda r: (r["n"], r["c"], r["k"], r["h"], r["seconds"])
    rows = select(rows, "conv", scale, keyf, tieb)
    write_csv(os.path.join(out_dir, "conv.csv"),
              ["gpu", "set", "direction", "n", "c", "h", "w", "k", "r", "s",
               "stride", "pad", "groups", "ho", "wo", "dtype", "seconds",
               "algo", "kernel", "grid_x", "grid_y", "grid_z", "n_kernels",
               "other_kernels"], rows)
    return rows


def vec_rows(root, ops):
    rows = []
    for op in ops:
        for r in collect_rows(root, op):
            if r["Device"] not in GPU_ID:
                continue
            b, h = int(r["B"]), int(r["H"])
            e = b * h
            inputs = 2 if op in ELEM_BINARY else 1
            gx, gy, gz = grid(r)
            bx, by, bz = block(r)
            ks = kernel_list(r)
            rows.append({
                "gpu": GPU_ID[r["Device"]], "set": r["_set"], "op": op,
                "rows": b, "cols": h, "elements": e, "inputs": inputs,
                "bytes": 4 * e * (inputs + 1), "dtype": "fp32",
                "seconds": seconds(r),
                "kernel": short_kernel(r["Kernel Name"]),
                "n_kernels": len(ks),
                "grid_x": gx, "grid_y": gy, "grid_z": gz,
                "block_x": bx, "block_y": by,
            })
    return rows


def do_vec(root, out_dir, scale):
    keyf = lambda r: float(r["elements"])
    tieb = lambda r: (r["rows"], r["cols"], r["seconds"])
    el = select(vec_rows(root, ELEM_BINARY + ELEM_UNARY), "elementwise",
                scale, keyf, tieb)
    write_csv(os.path.join(out_dir, "elementwise.csv"),
              ["gpu", "set", "op", "rows", "cols", "elements", "inputs",
               "bytes", "dtype", "seconds", "kernel", "grid_x", "block_x"],
              el)
    nm = select(vec_rows(root, NORM_OPS), "norm", scale, keyf, tieb)
    write_csv(os.path.join(out_dir, "norm.csv"),
              ["gpu", "set", "op", "rows", "cols", "elements", "bytes",
               "dtype", "seconds", "kernel", "n_kernels", "grid_x", "grid_y",
               "block_x", "block_y"], nm)
    return el, nm


def main(argv):
    args = [a for a in argv[1:]]
    scale = 1.0
    if "--scale" in args:
        i = args.index("--scale")
        scale = float(args[i + 1])
        del args[i:i + 2]
    if not args:
        sys.stderr.write(__doc__)
        return 2
    root = args[0]
    out_dir = args[1] if len(args) > 1 else \
        os.path.dirname(os.path.abspath(__file__))
    os.makedirs(out_dir, exist_ok=True)
    do_gpus(root, out_dir)
    g = do_gemm(root, out_dir, scale)
    c = do_conv(root, out_dir, scale)
    e, n = do_vec(root, out_dir, scale)
    sys.stderr.write("gemm %d, conv %d, elementwise %d, norm %d rows\n"
                     % (len(g), len(c), len(e), len(n)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
