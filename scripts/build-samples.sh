#!/usr/bin/env bash
# Generate every sample (its own lowering, for sm_80 and sm_90; sm_90a for a sample whose
# body tests __CUDA_ARCH_FEAT_SM90_ALL, gemm_bf16's wgmma) with its test driver into
# build/samples/NAME/, and compile it with nvcc. Prints one line per sample. A sample whose
# last result is newer than its spec, pipegen and libpipert is not done again (make demo
# is incremental). PIPEGEN, SAMPLES_OUT: another pipegen, another output directory.
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
PG=${PIPEGEN:-$ROOT/build/pipegen}
NVCC=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
OUT=${SAMPLES_OUT:-$ROOT/build/samples}
GENCODE="-gencode arch=compute_80,code=sm_80 -gencode arch=compute_90,code=sm_90"
LIB=$ROOT/build/libpipert.a

# Whether file $1 is newer than every input of the sample's spec $2.
up_to_date() {
    local f
    [ -e "$1" ] || return 1
    for f in "$2" "$PG" "$LIB" "$ROOT/runtime/pipert.h"; do
        [ -e "$f" ] && ! [ "$1" -nt "$f" ] && return 1
    done
    return 0
}

fail=0
for spec in "$ROOT"/samples/*/*.pipe; do
    name=$(basename "$spec" .pipe)
    dir="$OUT/$name"
    mkdir -p "$dir"
    # The last result: the test binary, or without nvcc the generated source.
    last=$dir/${name}_test
    [ -x "$NVCC" ] || last=$dir/$name.cu
    if up_to_date "$last" "$spec"; then
        echo "sample $name: up to date in $dir"; continue
    fi
    arch=sm_80,sm_90 gencode=$GENCODE
    if grep -q __CUDA_ARCH_FEAT_SM90_ALL "$spec"; then
        arch=sm_80,sm_90a gencode=${GENCODE//compute_90,code=sm_90/compute_90a,code=sm_90a}
    fi
    if ! (cd "$(dirname "$spec")" && "$PG" "$name.pipe" --arch=$arch -o "$dir/$name.cu" \
            --emit-test="$dir/${name}_test.cu" --emit-bench="$dir/${name}_bench.cu"); then
        echo "sample $name: pipegen failed"; fail=1; continue
    fi
    if [ ! -x "$NVCC" ]; then
        echo "sample $name: generated in $dir (no nvcc here: not compiled)"; continue
    fi
    if "$NVCC" -std=c++17 -O2 $gencode -I"$ROOT/runtime" -I"$dir" -o "$dir/${name}_test" \
            "$dir/${name}_test.cu" "$dir/$name.cu" "$LIB" >"$dir/build.log" 2>&1; then
        echo "sample $name: generated and compiled in $dir"
    else
        echo "sample $name: nvcc failed (see $dir/build.log)"; fail=1
    fi
done
exit $fail
