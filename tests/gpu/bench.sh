#!/usr/bin/env bash
# make bench: every case of tests/gpu/matrix through --emit-bench on this machine's GPU,
# and sgemm against cuBLAS. Each row is a ratio to a reference measured in the same
# process: cudaMemcpy device-to-device (bytes read + written) for the streaming samples,
# cuBLAS SGEMM (FLOP/s) for sgemm; medians of 30 (20 for sgemm) runs after warm-up, on
# inputs far larger than L2. Writes build/bench/bench.csv, docs/performance.csv,
# docs/performance.md (tests/gpu/report.py: the targets, then every row) and
# docs/performance.png (the chart, where matplotlib is there). Without a GPU it says so
# and exits 0 (PIPEGEN_SKIP_STATUS=77: exits 77).
set -u
PG=$(realpath "$1")
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
. "$ROOT/tests/gpu/lib.sh"
skip_without_gpu bench "nothing was measured"
NVCC=${NVCC:-nvcc}
cc=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -n 1 | tr -d .)
ARCH=sm_$cc
W=${BENCH_WORK:-$ROOT/build/bench}
MATRIX=${BENCH_MATRIX:-$ROOT/tests/gpu/matrix}
rm -rf "$W"; mkdir -p "$W"
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -n 1)
cuda=$($NVCC --version | sed -n 's/.*release \([0-9.]*\).*/\1/p')

build_case() {
    local sample=$1 mech=$2 grid=$3 dir=$4
    shift 4
    mkdir -p "$dir"
    "$PG" "$(spec_path "$sample")" --lower="$mech" --grid="$grid" --arch="$ARCH" "$@" \
        -o "$dir/$sample.cu" --emit-bench="$dir/bench.cu" >"$dir/build.log" 2>&1 &&
    "$NVCC" -O3 -std=c++17 -arch="$ARCH" -I"$ROOT/runtime" -I"$dir" -o "$dir/bench" \
        "$dir/bench.cu" "$dir/$sample.cu" "$ROOT/build/libpipert.a" >>"$dir/build.log" 2>&1
}
export -f build_case
export PG ROOT NVCC ARCH W
# sgemm is measured against cuBLAS in FLOP/s below, not in bytes against a copy.
cases=()
while read -r s m g f; do
    case "$s" in ''|'#'*|sgemm|sgemm_*) continue ;; esac
    cases+=("$s $m $g $f")
done <"$MATRIX"
printf '%s\n' "${cases[@]}" | while read -r s m g f; do
    echo "$s $m $g $(case_dir $s $m $g $f)${f:+ $f}"
done | xargs -P "$(nproc)" -L 1 bash -c 'build_case "$@"' _

echo "sample,lowering,grid,flags,value,reference,ratio" >"$W/bench.csv"
printf '%-11s %-18s %-11s %-19s %9s %9s %6s\n' sample lowering grid flags "GB/s" "D2D GB/s" ratio
for c in "${cases[@]}"; do
    set -- $c
    dir=$(case_dir "$@")
    flags=${4:-}
    if [ ! -x "$dir/bench" ]; then
        echo "$c: build failed"; tail -n 5 "$dir/build.log"; continue
    fi
    line=$("$dir/bench" 2>&1 | grep '^BENCH' | tail -n 1)
    gbs=$(echo "$line" | sed -n 's/.* \([0-9.]*\) GB\/s d2d.*/\1/p')
    ref=$(echo "$line" | sed -n 's/.*d2d=\([0-9.]*\) GB\/s.*/\1/p')
    ratio=$(echo "$line" | sed -n 's/.*ratio=\([0-9.]*\).*/\1/p')
    if [ -z "$ratio" ]; then echo "$c: run failed: $line"; continue; fi
    echo "$1,$2,$3,$flags,$gbs,$ref,$ratio" >>"$W/bench.csv"
    printf '%-11s %-18s %-11s %-19s %9s %9s %6s\n' "$1" "$2" "$3" "$flags" "$gbs" "$ref" "$ratio"
done

# sgemm against cuBLAS in one process (FLOP/s, not bytes), with each lowering of the
# matrix: built in parallel, then run one at a time.
build_sgemm() {
    local s=$1 m=$2 g=$3 sg=$4
    shift 4
    mkdir -p "$sg"
    "$PG" "$(spec_path "$s")" --lower="$m" --grid="$g" "$@" --arch="$ARCH" \
        -o "$sg/sgemm.cu" >"$sg/build.log" 2>&1 &&
    "$NVCC" -O3 -std=c++17 -arch="$ARCH" -I"$ROOT/runtime" -I"$sg" -o "$sg/ref" \
        "$ROOT/tests/gpu/sgemm_ref.cu" "$sg/sgemm.cu" "$ROOT/build/libpipert.a" -lcublas \
        >>"$sg/build.log" 2>&1
}
export -f build_sgemm
while read -r s m g f; do
    case "$s" in sgemm|sgemm_*) echo "$s $m $g $W/$s.$m.$g${f:+ $f}" ;; esac
done <"$MATRIX" | xargs -P "$(nproc)" -L 1 bash -c 'build_sgemm "$@"' _
while read -r s m g f; do
    case "$s" in sgemm|sgemm_*) ;; *) continue ;; esac
    sg="$W/$s.$m.$g"
    if [ -x "$sg/ref" ]; then
        "$sg/ref" 4096 8192 | sed "s/^/$s $m $g: /" | tee "$sg/result.txt"
        sed -n "s/^.*SGEMM n=\([0-9]*\) pipegen \([0-9.]*\) .*cublas \([0-9.]*\) .*ratio=\([0-9.]*\).*/$s-\1,$m,$g,$f,\2,\3,\4/p" \
            "$sg/result.txt" >>"$W/bench.csv"
    else
        echo "$s $m $g: build failed"; tail -n 5 "$sg/build.log"
    fi
done <"$MATRIX"

# docs/performance.md (targets and table) and docs/performance.csv, from this run.
cp "$W/bench.csv" "$ROOT/docs/performance.csv"
python3 "$ROOT/tests/gpu/report.py" "$W/bench.csv" "$ROOT/docs/performance.md" "$gpu" "$ARCH" \
    "$cuda" "$(date -u +%Y-%m-%d)"
sed -n '/^## Targets/,/^## Every/p' "$ROOT/docs/performance.md" | grep '^| [a-z]'
if python3 -c 'import matplotlib' 2>/dev/null; then
    python3 - "$W/bench.csv" "$ROOT/docs/performance.png" "$gpu" <<'PY'
import csv, sys
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
rows = list(csv.DictReader(open(sys.argv[1])))
labels = [f"{r['sample']} {r['lowering']} {r['grid']} {r['flags']}".strip() for r in rows]
ratios = [float(r["ratio"]) for r in rows]
fig, ax = plt.subplots(figsize=(10, 0.28 * len(rows) + 1.2))
ax.barh(range(len(rows)), ratios, color="#4a7ab0")
ax.set_yticks(range(len(rows)), labels, fontsize=7)
ax.invert_yaxis()
ax.axvline(1.0, color="black", linewidth=0.8)
ax.set_xlabel("ratio to the same-run reference (cudaMemcpy D2D; cuBLAS for sgemm)")
ax.set_title(f"pipegen make bench, {sys.argv[3]}")
fig.tight_layout()
fig.savefig(sys.argv[2], dpi=110)
PY
fi
echo "bench: $gpu ($ARCH), CUDA $cuda; csv in $W/bench.csv; docs/performance.md written"
