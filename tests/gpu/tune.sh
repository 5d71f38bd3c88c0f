#!/usr/bin/env bash
# Developer tool: benchmark variants of the samples in one run on the GPU machine.
#   tests/gpu/tune.sh PIPEGEN VARIANTS_FILE
# Each line of VARIANTS_FILE: NAME|SAMPLE|SED_SCRIPT|PIPEGEN_FLAGS  (SED_SCRIPT edits the
# sample's spec; empty for none). Prints one BENCH line per variant (ratio to the
# same-run cudaMemcpy D2D rate).
set -u
PG=$(realpath "$1"); VARIANTS=$(realpath "$2")
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
NVCC=${NVCC:-nvcc}
ARCH=sm_$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -n 1 | tr -d .)
W=${TUNE_WORK:-$ROOT/build/tune}
rm -rf "$W"; mkdir -p "$W"
build_variant() {
    local name=$1 sample=$2 script=$3 flags=$4 dir="$W/$1"
    mkdir -p "$dir"
    sed -e "$script" "$ROOT/samples/$sample/$sample.pipe" >"$dir/$sample.pipe"
    (cd "$dir" && "$PG" "$sample.pipe" $flags --arch="$ARCH" -o "$sample.cu" --emit-bench=bench.cu) \
        >"$dir/build.log" 2>&1 &&
    "$NVCC" -O3 -std=c++17 -arch="$ARCH" -I"$ROOT/runtime" -I"$dir" -o "$dir/bench" \
        "$dir/bench.cu" "$dir/$sample.cu" "$ROOT/build/libpipert.a" >>"$dir/build.log" 2>&1
}
export -f build_variant
export PG ROOT NVCC ARCH W
grep -v '^#' "$VARIANTS" | grep . | while IFS='|' read -r n s e f; do
    printf '%s\0%s\0%s\0%s\0' "$n" "$s" "$e" "$f"
done | xargs -0 -n 4 -P "$(nproc)" bash -c 'build_variant "$@"' _
grep -v '^#' "$VARIANTS" | grep . | while IFS='|' read -r n s e f; do
    if [ -x "$W/$n/bench" ]; then
        printf '%-28s %s\n' "$n" "$("$W/$n/bench" ${BENCH_ARGS:-} 2>&1 | grep '^BENCH' | tail -n 1)"
    else
        printf '%-28s build failed: %s\n' "$n" "$(grep -m1 -i error "$W/$n/build.log")"
    fi
done
