#!/usr/bin/env bash
# Generate every sample (its own lowering, for sm_80 and sm_90) with its test driver into
# build/samples/NAME/, and compile it with nvcc. Prints one line per sample.
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
PG="$ROOT/build/pipegen"
NVCC=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
OUT="$ROOT/build/samples"
GENCODE="-gencode arch=compute_80,code=sm_80 -gencode arch=compute_90,code=sm_90"
fail=0
for spec in "$ROOT"/samples/*/*.pipe; do
    name=$(basename "$spec" .pipe)
    dir="$OUT/$name"
    mkdir -p "$dir"
    if ! (cd "$(dirname "$spec")" && "$PG" "$name.pipe" -o "$dir/$name.cu" \
            --emit-test="$dir/${name}_test.cu" --emit-bench="$dir/${name}_bench.cu"); then
        echo "sample $name: pipegen failed"; fail=1; continue
    fi
    if [ ! -x "$NVCC" ]; then
        echo "sample $name: generated in $dir (no nvcc here: not compiled)"; continue
    fi
    if "$NVCC" -std=c++17 -O2 $GENCODE -I"$ROOT/runtime" -I"$dir" -o "$dir/${name}_test" \
            "$dir/${name}_test.cu" "$dir/$name.cu" "$ROOT/build/libpipert.a" >"$dir/build.log" 2>&1; then
        echo "sample $name: generated and compiled in $dir"
    else
        echo "sample $name: nvcc failed (see $dir/build.log)"; fail=1
    fi
done
exit $fail
