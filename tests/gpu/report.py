#!/usr/bin/env python3
"""make bench's report: docs/performance.md (the targets of docs/performance.md against the
best measured configurations, then every row) from the bench CSV. A streaming row is held
to the reference its `applies` column names: cudaMemcpy where it is copy-shaped, else the
same-shape kernel (the bench driver decides, from the bytes it reads and writes).
   tests/gpu/report.py CSV OUT.md GPU ARCH CUDA DATE [NOTE]
Kept apart from bench.sh so that a CSV fetched from the GPU machine gives the same page."""
import csv
import os
import sys

csv_path, out_path, gpu, arch, cuda, date = sys.argv[1:7]
note = sys.argv[7] if len(sys.argv) > 7 else ""
all_rows = list(csv.DictReader(open(csv_path)))
# The twins of auto lines run with a tuning run's wisdom (flag `wisdom`, make bench
# BENCH_WISDOM=FILE) have their own section; the targets are the plain rows'.
def with_wisdom(r):
    return "wisdom" in r["flags"].split()


wisdom_rows = [r for r in all_rows if with_wisdom(r)]
rows = [r for r in all_rows if not with_wisdom(r)]
# Host streaming over several GPUs, measured on another machine (tests/gpu/multi-report.sh).
multi_path = os.path.join(os.path.dirname(out_path), "performance-multi.csv")
multi = list(csv.DictReader(open(multi_path))) if os.path.exists(multi_path) else []


def config(r):
    return f"{r['lowering']} {r['grid']} {r['flags']}".strip()


# What a row's `applies` names: the reference its targets use.
AGAINST = {"memcpy": "cudaMemcpy", "sameshape": "same-shape", "cublas": "cuBLAS",
           "bound": "bound", "link": "link", "one_gpu": "one GPU"}


def against(r):
    return AGAINST[r.get("applies") or legacy_applies(r)]


def legacy_applies(r):
    """A row of a CSV from before the same-shape reference: what its ratio was to."""
    name = r["sample"]
    if "gemm" in name:
        return "cublas"
    if "-speedup" in name:
        return "one_gpu"
    if "-link" in name:
        return "link"
    return "bound" if "-stream" in name or "-serial" in name else "memcpy"


def ratio_of(r):
    """The row's ratio to the reference that applies: the same-shape kernel's for a
    streaming row that is not copy-shaped, else the ratio column's."""
    if r.get("applies") == "sameshape" and r.get("ratio_sameshape"):
        return float(r["ratio_sameshape"])
    return float(r["ratio"])


def best(sample, plain=False):
    got = [r for r in rows if r["sample"] == sample and not (plain and r["flags"])]
    if not got:
        return None
    r = max(got, key=ratio_of)
    return ratio_of(r), config(r), against(r)


def best_of(sample, lowering=None, flags=None):
    """The best row of a sample, of one lowering (auto: the choice pipegen made) or with
    one set of flags (rmsnorm's sizes)."""
    got = [r for r in rows if r["sample"] == sample
           and (lowering is None or r["lowering"] == lowering)
           and (flags is None or r["flags"] == flags)]
    if not got:
        return None
    r = max(got, key=ratio_of)
    return ratio_of(r), config(r), against(r)


def best_among(samples, flags):
    """The best row of any of several specs of one kernel (tile shapes) at one set of flags."""
    got = [(b[0], f"{s} {b[1]}", b[2]) for s in samples for b in [best_of(s, flags=flags)] if b]
    return max(got) if got else None


def stencil_targets():
    """Issue 30's: the 3D stencils at 512^3 floats, the best of their tile shapes."""
    f = "sizes:512x512x512"
    return [("3D 7-point stencil, 512^3, best lowering and tile", 0.85,
             best_among(("stencil7", "stencil7_big", "stencil7_wide"), f)),
            ("3D 27-point stencil, 512^3, best lowering and tile", 0.85,
             best_among(("stencil27", "stencil27_big"), f))]


def sizes_of(r):
    return " ".join(f for f in r["flags"].split() if f.startswith("sizes:"))


def wisdom_table():
    """Per auto line run with wisdom: the best plain row of its sample at its sizes, auto
    without wisdom and with it, each against that best."""
    out = []
    for wr in wisdom_rows:
        plain_flags = " ".join(f for f in wr["flags"].split() if f != "wisdom")
        peers = [r for r in rows if r["sample"] == wr["sample"] and sizes_of(r) == sizes_of(wr)]
        auto = [r for r in peers if r["lowering"] == "auto" and r["flags"] == plain_flags]
        if not auto:
            continue
        top = max(peers, key=ratio_of)
        out.append((wr["sample"], sizes_of(wr), ratio_of(top), config(top), ratio_of(auto[0]),
                    ratio_of(wr), against(top)))
    return out


def row_targets():
    """Issue 29's: row softmax and rmsnorm over rows of 1024, 4096 and 8192 floats (best
    lowering and auto; softmax of those literal lengths, and of a size symbol's), a
    histogram of bytes, a column sum."""
    out = []
    for cols, sample in ((1024, "softmax"), (4096, "softmax4k"), (8192, "softmax8k")):
        out += [(f"softmax, rows of {cols}, best lowering", 0.95, best_of(sample)),
                (f"softmax, rows of {cols}, auto", 0.95, best_of(sample, "auto"))]
    for name, sample in (("rmsnorm", "rmsnorm"), ("softmax (rows of a size symbol)",
                                                  "softmax_rows")):
        for rows_, cols in ((262144, 1024), (65536, 4096), (32768, 8192)):
            f = f"sizes:{rows_}x{cols}"
            out += [(f"{name}, rows of {cols}, best lowering", 0.95,
                     best_of(sample, flags=f)),
                    (f"{name}, rows of {cols}, auto", 0.95, best_of(sample, "auto", f))]
    return out + [("histogram of random bytes, best lowering", 0.90, best_of("histogram")),
                  ("column sum, best lowering", 0.97, best_of("colsum"))]


def saxpy_every_async():
    """The worst of the async lowerings, each at its best grid."""
    per = {}
    for r in rows:
        if r["sample"] == "saxpy" and r["lowering"] != "sync":
            if ratio_of(r) > per.get(r["lowering"], (0.0, "", ""))[0]:
                per[r["lowering"]] = (ratio_of(r), config(r), against(r))
    if not per:
        return None
    low = min(per, key=lambda m: per[m][0])
    return per[low][0], f"lowest of {len(per)} async lowerings: {per[low][1]}", per[low][2]


def gemm_both_sizes(sample):
    """The configuration whose worse size is best."""
    per = {}
    for r in rows:
        if r["sample"].startswith(sample + "-"):
            per.setdefault(config(r), []).append(float(r["ratio"]))
    if not per:
        return None
    c = max(per, key=lambda c: min(per[c]))
    return min(per[c]), f"{c} (worse of 4096^3 and 8192^3)", "cuBLAS"


def multi_speedup(sample):
    got = [r for r in multi if r["sample"].startswith(sample + "-speedup")]
    return (float(got[0]["ratio"]), got[0]["machine"], "one GPU") if got else None


def multi_worst_device(sample):
    got = [r for r in multi if r["sample"].startswith(sample + "-stream")
           and "-dev" in r["sample"]]
    if not got:
        return None
    r = min(got, key=lambda r: float(r["ratio"]))
    return float(r["ratio"]), f"{r['sample'].rsplit('-', 1)[1]}, {r['machine']}", "bound"


targets = [
    ("saxpy, every async lowering", 0.95, saxpy_every_async()),
    ("jacobi2d, best lowering", 0.90, best("jacobi2d")),
    ("transpose, best lowering", 0.85, best("transpose")),
    ("sgemm vs cuBLAS, best lowering", 0.70, gemm_both_sizes("sgemm")),
    ("gemm_bf16 vs cuBLAS BF16, best lowering", 0.70, gemm_both_sizes("gemm_bf16")),
    ("reduce_sum (bytes read), best lowering", 0.98, best("reduce_sum")),
    ("host-streamed saxpy (256 MiB arrays) vs max(H2D, D2H, kernel)", 0.95,
     best("saxpy_host-stream", plain=True)),
] + row_targets() + stencil_targets()
if multi:
    for sample in ("saxpy_host", "jacobi2d_host"):
        targets += [(f"{sample} over every GPU: speed-up over one", 1.8, multi_speedup(sample)),
                    (f"{sample} over every GPU: the worst device vs its bound", 0.90,
                     multi_worst_device(sample))]

with open(out_path, "w") as out:
    w = out.write
    w("# Performance\n\n")
    w(f"Generated by `make bench` on {date}: {gpu} ({arch}), CUDA {cuda}.\n")
    w("Each ratio is to a reference measured in the same process. The streaming samples'\n"
      "value is GB/s of bytes the pipeline must move (inputs read once, outputs written\n"
      "once), against two references, medians of 30 runs after 5 warm-up runs, in turns\n"
      "with ours: `cudaMemcpy` device-to-device moving as many bytes (half read, half\n"
      "written), and the same-shape reference, a plain kernel that reads as many bytes as\n"
      "the inputs hold and writes as many as the outputs hold in one pass (16-byte\n"
      "accesses, 4 a thread an iteration, grid-stride, the fastest of 6 launch shapes on\n"
      "this GPU). A copy is the wrong limit for a kernel that mostly reads or writes: on\n"
      "the H100 this kernel read at 1.00 of cudaMemcpy's rate and wrote at 1.06, but\n"
      "copied at 0.95 (tests/gpu/stream_ref.sh, 2026-11-26). So a copy-shaped row (its\n"
      "bytes read within 10% of those written: jacobi2d, transpose) is held to\n"
      "cudaMemcpy, and any other (saxpy reads twice what it writes, reduce_sum only reads)\n"
      "to the same-shape reference: the `applies` column, and the targets, use that one.\n"
      "The GEMMs' value is TFLOP/s, against cuBLAS (median of 50 after 5, each run of\n"
      "cuBLAS followed by one of ours, so that throttled clocks weigh on both): SGEMM for\n"
      "sgemm, GemmEx with BF16 inputs and FP32 output and compute for gemm_bf16\n"
      "(C = A B^T, both K-major). Sizes: saxpy and\n"
      "reduce_sum 2^28 floats, jacobi2d and transpose 16384 x 16384 floats, the GEMMs\n"
      "4096^3 and 8192^3 (all far larger than L2).\n"
      "Host streaming (NAME-stream rows, NAME-serial for one stream and one chunk): value\n"
      "the milliseconds of NAME_stream over page-locked host arrays of 256 MiB each\n"
      "(median of 10 after 2), reference the bound max(H2D, D2H, kernel), each measured\n"
      "alone in the same process, ratio bound / value; NAME-stream-link: the same time\n"
      "against the link alone moving the run's copies in and out, each way alone and both\n"
      "at once on two streams (the longest), ratio that / value: not a bound (on the H100\n"
      "the both-ways copies sometimes overlap and sometimes do not: 10.9 to 14.5 ms for\n"
      "saxpy_host between processes), what the link did in the same process.\n"
      "The CSV is docs/performance.csv, the chart docs/performance.png.\n\n")
    if note:
        w(note + "\n\n")
    w("## Targets\n\n")
    w("| target | required | measured | against | where | met |\n"
      "| --- | ---: | ---: | --- | --- | --- |\n")
    for name, need, got in targets:
        if got is None:
            w(f"| {name} | {need:.2f} | - | - | not measured | no |\n")
        else:
            w(f"| {name} | {need:.2f} | {got[0]:.3f} | {got[2]} | {got[1]} | "
              f"{'yes' if got[0] >= need else 'no'} |\n")
    if wisdom_rows:
        w("\n## auto with and without wisdom\n\n"
          "Each auto line measured twice in the same process: as pipegen chose without\n"
          "wisdom, and with the wisdom of a tuning run on this GPU (make tune, then make\n"
          "bench BENCH_WISDOM=FILE: the rows whose flags say `wisdom`), against the best\n"
          "lowering measured for the sample at its sizes.\n\n")
        w("| sample | sizes | best | where | auto | of best | auto with wisdom | of best | against |\n"
          "| --- | --- | ---: | --- | ---: | ---: | ---: | ---: | --- |\n")
        for sample, sizes, top, where, auto, wis, ref in wisdom_table():
            w(f"| {sample} | {sizes} | {top:.3f} | {where} | {auto:.3f} | {auto / top:.3f} | "
              f"{wis:.3f} | {wis / top:.3f} | {ref} |\n")
    w("\n## Every configuration\n\n")
    w("| sample | lowering | grid | flags | value | reference | ratio | same-shape | ratio | applies |\n")
    w("| --- | --- | --- | --- | ---: | ---: | ---: | ---: | ---: | --- |\n")
    for r in all_rows:
        w(f"| {r['sample']} | {r['lowering']} | {r['grid']} | {r['flags']} | {r['value']} | "
          f"{r['reference']} | {r['ratio']} | {r.get('sameshape') or ''} | "
          f"{r.get('ratio_sameshape') or ''} | {against(r)} |\n")
    if multi:
        w("\n## Host streaming over several GPUs\n\n")
        w(f"Measured on {multi[0]['machine']}, CUDA {multi[0]['cuda']}, {multi[0]['date']}\n"
          "(docs/performance-multi.csv, from tests/gpu/multi-report.sh). NAME-streamNgpu: the\n"
          "milliseconds of NAME_stream over all N GPUs against the bound of the GPU with the\n"
          "most work (its H2D, D2H and kernel times measured alone on it, scaled to its\n"
          "rows); -devD: GPU D's busy time (until its last copy out, from CUDA events)\n"
          "against that bound; NAME-speedupNgpu: the one-GPU time of the same run against\n"
          "the N-GPU time; NAME-linkNgpu: the N-GPU time against every GPU copying its\n"
          "share of the rows in, out, and both ways at once (the longest of the three:\n"
          "what the host's link allows them together); NAME-stream, NAME-serial: on one GPU\n"
          "of that machine.\n\n")
        w("| sample | lowering | grid | flags | value | reference | ratio |\n")
        w("| --- | --- | --- | --- | ---: | ---: | ---: |\n")
        for r in multi:
            w(f"| {r['sample']} | {r['lowering']} | {r['grid']} | {r['flags']} | {r['value']} | "
              f"{r['reference']} | {r['ratio']} |\n")
