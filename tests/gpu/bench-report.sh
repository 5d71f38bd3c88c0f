#!/usr/bin/env bash
# make bench-report: docs/performance.csv, docs/performance.md (tests/gpu/report.py: the
# targets, then every row) and docs/performance.png (where matplotlib is there) from the
# rows of `make bench GPU_SHARD=K/N`, once every shard K of N has run. No GPU is needed:
# the shards' directories may come from the GPU machine. `make bench` without shards ends
# with it, over its own rows.
#
# usage: tests/gpu/bench-report.sh [DIR...]
#   DIR...           the shards' work directories, each with rows.csv and info
#                    (default: build/bench/shard-*; make bench-report BENCH_SHARDS="...")
#   BENCH_OUT=FILE   the merged CSV (build/bench/bench.csv)
#   BENCH_DOCS=DIR   where performance.{csv,md,png} and streaming-timeline.png go (docs)
#   BENCH_NOTE=TEXT  a paragraph for docs/performance.md, after its header (how the rows
#                    were made, where that is worth saying)
# The shards must be those of one matrix, GPU and CUDA: every K of 1..N once, every line
# of the matrix in exactly one of them.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
out=${BENCH_OUT:-$ROOT/build/bench/bench.csv}
docs=${BENCH_DOCS:-$ROOT/docs}
dirs=("$@")
if [ ${#dirs[@]} -eq 0 ]; then
    dirs=("$ROOT"/build/bench/shard-*)
    [ -e "${dirs[0]}" ] || { echo "bench-report: no build/bench/shard-*: run make bench GPU_SHARD=K/N first" >&2; exit 2; }
fi
die() { echo "bench-report: $*" >&2; exit 2; }

info() { sed -n "s/^$2=//p" "$1/info"; }   # info DIR KEY: one value of a shard's info
for d in "${dirs[@]}"; do
    if [ ! -f "$d/rows.csv" ] || [ ! -f "$d/info" ]; then
        die "$d has no rows.csv and info (written by make bench)"
    fi
done
first=${dirs[0]}
n=$(info "$first" shard | cut -d/ -f2)
seen=" " lines=" "
for d in "${dirs[@]}"; do
    for key in matrix gpu arch cuda; do
        [ "$(info "$d" $key)" = "$(info "$first" $key)" ] ||
            die "$d and $first differ in $key: '$(info "$d" $key)', '$(info "$first" $key)'"
    done
    shard=$(info "$d" shard)
    [ "${shard#*/}" = "$n" ] || die "$d is shard $shard, $first one of $n"
    [[ $seen == *" ${shard%/*} "* ]] && die "shard $shard twice (in $d)"
    seen+="${shard%/*} "
    # a line twice within its shard is an auto line and its twin with wisdom (BENCH_WISDOM)
    for l in $(info "$d" lines | tr ' ' '\n' | sort -un); do
        [[ $lines == *" $l "* ]] && die "matrix line $l in two shards"
        lines+="$l "
    done
done
for ((k = 1; k <= n; ++k)); do
    [[ $seen == *" $k "* ]] || die "shard $k/$n is missing (run make bench GPU_SHARD=$k/$n)"
done
total=$(info "$first" total) got=$(wc -w <<<"$lines")
[ "$got" = "$total" ] || die "the shards have $got of the $total matrix lines"

gpu=$(info "$first" gpu) arch=$(info "$first" arch) cuda=$(info "$first" cuda)
date=$(for d in "${dirs[@]}"; do info "$d" date; done | sort | tail -n 1)
mkdir -p "$(dirname "$out")"
{
    echo "sample,lowering,grid,flags,value,reference,ratio,sameshape,ratio_sameshape,applies"
    for d in "${dirs[@]}"; do tail -n +2 "$d/rows.csv"; done | sort -s -t, -k1,1 | cut -d, -f2-
} >"$out"

# docs/performance.md (targets and table), docs/performance.csv and the chart.
cp "$out" "$docs/performance.csv"
python3 "$ROOT/tests/gpu/report.py" "$out" "$docs/performance.md" "$gpu" "$arch" \
    "$cuda" "$date" ${BENCH_NOTE:+"$BENCH_NOTE"} || exit 1
sed -n '/^## Targets/,/^## Every/p' "$docs/performance.md" | grep '^| [a-z]'
if python3 -c 'import matplotlib' 2>/dev/null; then
    python3 - "$out" "$docs/performance.png" "$gpu" <<'PY'
import csv, sys
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
rows = list(csv.DictReader(open(sys.argv[1])))
labels = [f"{r['sample']} {r['lowering']} {r['grid']} {r['flags']}".strip() for r in rows]
# each row against the reference its targets use (report.py's ratio_of)
ratios = [float(r["ratio_sameshape"] if r.get("applies") == "sameshape" else r["ratio"])
          for r in rows]
fig, ax = plt.subplots(figsize=(10, 0.28 * len(rows) + 1.2))
ax.barh(range(len(rows)), ratios, color="#4a7ab0")
ax.set_yticks(range(len(rows)), labels, fontsize=7)
ax.invert_yaxis()
ax.axvline(1.0, color="black", linewidth=0.8)
ax.set_xlabel("ratio to the same-run reference (cudaMemcpy D2D or the same-shape kernel; cuBLAS for the GEMMs)")
ax.set_title(f"pipegen make bench, {sys.argv[3]}")
fig.tight_layout()
fig.savefig(sys.argv[2], dpi=110)
PY
fi
# The timeline of the traced one-GPU runs of the host_stream samples (docs/streaming.md).
traces=()
for d in "${dirs[@]}"; do [ -s "$d/trace.txt" ] && traces+=("$d/trace.txt"); done
if [ ${#traces[@]} -gt 0 ] && python3 -c 'import matplotlib' 2>/dev/null; then
    cat "${traces[@]}" >"$(dirname "$out")/traces.txt"
    python3 "$ROOT/tests/gpu/timeline.py" "$(dirname "$out")/traces.txt" \
        "$docs/streaming-timeline.png" 1 "NAME_stream on one $gpu, $date: one traced run of make bench"
fi
from=
[ "$n" = 1 ] || from=" (from $n shards)"
echo "bench: $gpu ($arch), CUDA $cuda; csv in $out$from; docs/performance.md written"
