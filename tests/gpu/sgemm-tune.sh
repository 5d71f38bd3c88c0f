#!/usr/bin/env bash
# Developer tool: sgemm variants against cuBLAS in one run (tests/gpu/gemm_ref.cu).
#   tests/gpu/sgemm-tune.sh PIPEGEN [DIR]
# With DIR, its *.pipe files are the variants (spec files of sgemm); without, sed edits of
# the sample listed below.
set -u
PG=$(realpath "$1")
VDIR=${2:+$(realpath "$2")}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
ARCH=sm_$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -n 1 | tr -d .)
W=$ROOT/build/sgemm-tune
rm -rf "$W"; mkdir -p "$W"
variant() {
    local name=$1 script=$2 flags=$3 dir="$W/$1"
    mkdir -p "$dir"
    if [ -n "$VDIR" ]; then
        cp "$VDIR/$name.pipe" "$dir/sgemm.pipe"
    else
        sed -e "$script" "$ROOT/samples/sgemm/sgemm.pipe" >"$dir/sgemm.pipe"
    fi
    (cd "$dir" && "$PG" sgemm.pipe $flags --arch="$ARCH" -o sgemm.cu) >"$dir/build.log" 2>&1 &&
    nvcc -O3 -std=c++17 -arch="$ARCH" -I"$ROOT/runtime" -I"$dir" -o "$dir/ref" \
        "$ROOT/tests/gpu/gemm_ref.cu" "$dir/sgemm.cu" "$ROOT/build/libpipert.a" -lcublas \
        >>"$dir/build.log" 2>&1
}
export -f variant
export PG ROOT ARCH W VDIR
cat >"$W/list" <<'LIST'
base||--lower=cp.async
no-bps|/blocks_per_sm/d|--lower=cp.async
s3|s/stages  2/stages 3/|--lower=cp.async
k16|s/by 32;/by 16;/;s/k : 32\]/k : 16]/g;s/kk < 32/kk < 16/|--lower=cp.async
k16-s3|s/by 32;/by 16;/;s/k : 32\]/k : 16]/g;s/kk < 32/kk < 16/;s/stages  2/stages 3/|--lower=cp.async
mbar||--lower=cp.async.mbarrier
LIST
if [ -n "$VDIR" ]; then
    for f in "$VDIR"/*.pipe; do echo "$(basename "$f" .pipe)||--lower=cp.async"; done >"$W/list"
fi
while IFS='|' read -r n e f; do printf '%s\0%s\0%s\0' "$n" "$e" "$f"; done <"$W/list" |
    xargs -0 -n 3 -P "$(nproc)" bash -c 'variant "$@"' _
while IFS='|' read -r n e f; do
    if [ -x "$W/$n/ref" ]; then
        "$W/$n/ref" 4096 8192 | sed "s/^/$n: /"
    else
        echo "$n: build failed: $(grep -m1 -i error "$W/$n/build.log")"
    fi
done <"$W/list"
