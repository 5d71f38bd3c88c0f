#!/usr/bin/env bash
# Developer tool: sgemm variants against cuBLAS in one run (tests/gpu/sgemm_ref.cu).
#   tests/gpu/sgemm-tune.sh PIPEGEN
set -u
PG=$(realpath "$1")
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
ARCH=sm_$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -n 1 | tr -d .)
W=$ROOT/build/sgemm-tune
rm -rf "$W"; mkdir -p "$W"
variant() {
    local name=$1 script=$2 flags=$3 dir="$W/$1"
    mkdir -p "$dir"
    sed -e "$script" "$ROOT/samples/sgemm/sgemm.pipe" >"$dir/sgemm.pipe"
    (cd "$dir" && "$PG" sgemm.pipe $flags --arch="$ARCH" -o sgemm.cu) >"$dir/build.log" 2>&1 &&
    nvcc -O3 -std=c++17 -arch="$ARCH" -I"$ROOT/runtime" -I"$dir" -o "$dir/ref" \
        "$ROOT/tests/gpu/sgemm_ref.cu" "$dir/sgemm.cu" "$ROOT/build/libpipert.a" -lcublas \
        >>"$dir/build.log" 2>&1
}
export -f variant
export PG ROOT ARCH W
cat >"$W/list" <<'LIST'
base||--lower=cp.async
s4|s/stages  3/stages 4/|--lower=cp.async
s2|s/stages  3/stages 2/|--lower=cp.async
k32|s/by 16;/by 32;/;s/k : 16\]/k : 32]/g;s/k4 < 16/k4 < 32/|--lower=cp.async
k32-s2|s/by 16;/by 32;/;s/k : 16\]/k : 32]/g;s/k4 < 16/k4 < 32/;s/stages  3/stages 2/|--lower=cp.async
mbar||--lower=cp.async.mbarrier
sync||--lower=sync
persistent||--lower=cp.async --grid=persistent
LIST
while IFS='|' read -r n e f; do printf '%s\0%s\0%s\0' "$n" "$e" "$f"; done <"$W/list" |
    xargs -0 -n 3 -P "$(nproc)" bash -c 'variant "$@"' _
while IFS='|' read -r n e f; do
    if [ -x "$W/$n/ref" ]; then
        "$W/$n/ref" 4096 8192 | sed "s/^/$n: /"
    else
        echo "$n: build failed: $(grep -m1 -i error "$W/$n/build.log")"
    fi
done <"$W/list"
