#!/usr/bin/env python3
"""deepbench.py -- DeepBench's V100 training kernels as CSV.

Baidu's DeepBench (github.com/baidu-research/DeepBench) publishes, per
GPU, a spreadsheet of kernel times its own CUDA programs measured
(results/train/DeepBench_NV_V100.xlsx: an NVIDIA DGX-1's V100, CUDA
10.1.243, cuDNN 7.6.2, driver 418.67, its "Specs" sheet).  This reads the
spreadsheet with the standard library alone (an .xlsx is a zip of XML)
and writes two files beside itself:

  deepbench-conv.csv  the convolutions, forward and both gradients
  deepbench-gemm.csv  the dense matrix products

each in fp32 (sheet "Results FP32") and fp16 (sheet "Results - FP16 ip,
Mixed math": 16-bit operands, tensor cores, fp32 accumulation).  Times are
seconds; DeepBench's "N/A*" (a first layer's data gradient, which it does
not run) is left empty.  README.md says how DeepBench measured.

    python3 tests/data/kernels/deepbench.py GITDIR [COMMIT]

GITDIR: a clone (bare or not) of baidu-research/DeepBench; the file is
read at COMMIT (default HEAD).  Deterministic: the same file gives the
same bytes.
"""
import csv
import io
import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
import zipfile

PATH = "results/train/DeepBench_NV_V100.xlsx"
NS = "{http://schemas.openxmlformats.org/spreadsheetml/2006/main}"
SHEETS = {"Results FP32": "fp32", "Results - FP16 ip, Mixed math": "fp16"}


def column(ref):
    """An A1-style reference's column, from 0."""
    n = 0
    for ch in re.match(r"[A-Z]+", ref).group(0):
        n = n * 26 + ord(ch) - 64
    return n - 1


def sheets(data):
    """{sheet name: rows as lists of strings} of an .xlsx's bytes."""
    z = zipfile.ZipFile(io.BytesIO(data))
    strings = []
    if "xl/sharedStrings.xml" in z.namelist():
        for si in ET.fromstring(z.read("xl/sharedStrings.xml")).iter(NS + "si"):
            strings.append("".join(t.text or "" for t in si.iter(NS + "t")))
    rels = ET.fromstring(z.read("xl/_rels/workbook.xml.rels"))
    target = {r.get("Id"): r.get("Target") for r in rels}
    out = {}
    book = ET.fromstring(z.read("xl/workbook.xml"))
    rid = "{http://schemas.openxmlformats.org/officeDocument/2006/relationships}id"
    for sh in book.iter(NS + "sheet"):
        rows = []
        xml = ET.fromstring(z.read("xl/" + target[sh.get(rid)].lstrip("/").replace("xl/", "")))
        for row in xml.iter(NS + "row"):
            cells = {}
            for c in row.findall(NS + "c"):
                v = c.find(NS + "v")
                if v is None:
                    continue
                cells[column(c.get("r"))] = strings[int(v.text)] if c.get("t") == "s" else v.text
            rows.append([cells.get(k, "") for k in range(max(cells) + 1)] if cells else [])
        out[sh.get("name")] = rows
    return out


def section(rows, title):
    """The data rows under the section whose first cell starts `title`:
    those with a number in their third cell, up to the next section."""
    start = next(i for i, r in enumerate(rows) if r and r[0].startswith(title))
    out = []
    for r in rows[start + 1:]:
        if r and r[0]:
            break
        if len(r) > 3 and re.fullmatch(r"[0-9.E+-]+", r[2]):
            out.append(r)
    return out


def seconds(ms):
    return "" if ms.startswith("N/A") else "%.6g" % (float(ms) / 1e3)


def main(argv):
    if len(argv) not in (2, 3):
        sys.exit(__doc__)
    commit = argv[2] if len(argv) == 3 else "HEAD"
    data = subprocess.run(["git", "--git-dir", git_dir(argv[1]), "show",
                           "%s:%s" % (commit, PATH)], check=True, stdout=subprocess.PIPE).stdout
    book = sheets(data)
    here = os.path.dirname(os.path.abspath(__file__))
    with open(os.path.join(here, "deepbench-conv.csv"), "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["dtype", "app", "n", "c", "h", "w", "k", "r", "s", "pad_h", "pad_w",
                    "stride_h", "stride_w", "fwd_s", "bwd_data_s", "bwd_filter_s", "fwd_algo"])
        for name, dt in SHEETS.items():
            for r in section(book[name], "Convolution"):
                # W,H,C,N,K,S,R,pad_w,pad_h,stride_w,stride_h,fwd,data,filter
                wi, hi, c, n, k, s, rr, pw, ph, sw, sh = (int(float(x)) for x in r[2:13])
                w.writerow([dt, r[1].replace(" ", "_"), n, c, hi, wi, k, rr, s, ph, pw, sh, sw,
                            seconds(r[13]), seconds(r[14]), seconds(r[15]),
                            r[23] if len(r) > 23 else ""])
    with open(os.path.join(here, "deepbench-gemm.csv"), "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["dtype", "app", "m", "n", "k", "trans_a", "trans_b", "seconds"])
        for name, dt in SHEETS.items():
            for r in section(book[name], "Dense Matrix Multiplication"):
                m, n, k = (int(float(x)) for x in r[2:5])
                w.writerow([dt, r[1].replace(" ", "_"), m, n, k, r[5], r[6], seconds(r[8])])


def git_dir(path):
    inner = os.path.join(path, ".git")
    return inner if os.path.isdir(inner) else path


if __name__ == "__main__":
    main(sys.argv)
