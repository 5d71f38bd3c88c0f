#!/usr/bin/env bash
# make bench: every case of tests/gpu/matrix through --emit-bench on this machine's GPU.
# Each row is a ratio to cudaMemcpy device-to-device measured in the same process
# (bytes read + written; median of 30 runs after 5 warm-up runs; inputs far larger than L2).
# Writes build/bench/bench.csv. Without a GPU it says so and exits 0.
set -u
PG=$(realpath "$1")
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
if ! command -v nvidia-smi >/dev/null || ! nvidia-smi -L >/dev/null 2>&1; then
    echo "bench: no GPU on this machine: nothing was measured"
    exit 0
fi
NVCC=${NVCC:-nvcc}
cc=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -n 1 | tr -d .)
ARCH=sm_$cc
W=${BENCH_WORK:-$ROOT/build/bench}
MATRIX=${BENCH_MATRIX:-$ROOT/tests/gpu/matrix}
# sgemm is measured against cuBLAS in FLOP/s below, not in bytes against a copy.
skip_sample() { [ "$1" = sgemm ]; }
rm -rf "$W"; mkdir -p "$W"
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -n 1)

build_case() {
    local sample=$1 mech=$2 grid=$3 dir=$4
    mkdir -p "$dir"
    "$PG" "$ROOT/samples/$sample/$sample.pipe" --lower="$mech" --grid="$grid" --arch="$ARCH" \
        -o "$dir/$sample.cu" --emit-bench="$dir/bench.cu" >"$dir/build.log" 2>&1 &&
    "$NVCC" -O3 -std=c++17 -arch="$ARCH" -I"$ROOT/runtime" -I"$dir" -o "$dir/bench" \
        "$dir/bench.cu" "$dir/$sample.cu" "$ROOT/build/libpipert.a" >>"$dir/build.log" 2>&1
}
export -f build_case
export PG ROOT NVCC ARCH
grep -v '^#' "$MATRIX" | while read -r s m g; do
    [ -n "$s" ] && ! skip_sample "$s" && echo "$s $m $g $W/$s.$m.$g"
done | xargs -P "$(nproc)" -L 1 bash -c 'build_case "$@"' _

echo "sample,lowering,grid,gbps,d2d_gbps,ratio" >"$W/bench.csv"
printf '%-12s %-18s %-11s %10s %10s %7s\n' sample lowering grid "GB/s" "D2D GB/s" ratio
grep -v '^#' "$MATRIX" | while read -r s m g; do
    [ -n "$s" ] && ! skip_sample "$s" || continue
    dir="$W/$s.$m.$g"
    if [ ! -x "$dir/bench" ]; then
        echo "$s $m $g: build failed"; tail -n 5 "$dir/build.log"; continue
    fi
    line=$("$dir/bench" 2>&1 | grep '^BENCH' | tail -n 1)
    gbs=$(echo "$line" | sed -n 's/.* \([0-9.]*\) GB\/s d2d.*/\1/p')
    ref=$(echo "$line" | sed -n 's/.*d2d=\([0-9.]*\) GB\/s.*/\1/p')
    ratio=$(echo "$line" | sed -n 's/.*ratio=\([0-9.]*\).*/\1/p')
    if [ -z "$ratio" ]; then echo "$s $m $g: run failed: $line"; continue; fi
    echo "$s,$m,$g,$gbs,$ref,$ratio" >>"$W/bench.csv"
    printf '%-12s %-18s %-11s %10s %10s %7s\n' "$s" "$m" "$g" "$gbs" "$ref" "$ratio"
done
# sgemm against cuBLAS in one process (FLOP/s, not bytes).
sg="$W/sgemm.ref"
mkdir -p "$sg"
if "$PG" "$ROOT/samples/sgemm/sgemm.pipe" --arch="$ARCH" -o "$sg/sgemm.cu" >"$sg/build.log" 2>&1 &&
   "$NVCC" -O3 -std=c++17 -arch="$ARCH" -I"$ROOT/runtime" -I"$sg" -o "$sg/ref" \
       "$ROOT/tests/gpu/sgemm_ref.cu" "$sg/sgemm.cu" "$ROOT/build/libpipert.a" -lcublas >>"$sg/build.log" 2>&1; then
    "$sg/ref" 4096 8192 | tee "$sg/result.txt"
    sed -n 's/^SGEMM n=\([0-9]*\) pipegen \([0-9.]*\) .*cublas \([0-9.]*\) .*ratio=\([0-9.]*\).*/sgemm-\1,spec,per_tile,\2,\3,\4/p' \
        "$sg/result.txt" >>"$W/bench.csv"
else
    echo "sgemm vs cuBLAS: build failed"; tail -n 5 "$sg/build.log"
fi
echo "bench: $gpu ($ARCH), CUDA $($NVCC --version | sed -n 's/.*release \([0-9.]*\).*/\1/p'); csv in $W/bench.csv"
