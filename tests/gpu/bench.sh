#!/usr/bin/env bash
# make bench: every case of tests/gpu/matrix through --emit-bench on this machine's GPU,
# and the GEMMs against cuBLAS. Each row is a ratio to a reference measured in the same
# process: for the streaming samples cudaMemcpy device-to-device (bytes read + written)
# and the same-shape reference (a plain kernel reading the bytes the inputs hold and
# writing those the outputs hold; the row's `applies` column says which one its targets
# use: memcpy where it is copy-shaped, its reads within 10% of its writes, else
# sameshape), cuBLAS (FLOP/s) for sgemm (SGEMM) and gemm_bf16 (GemmEx, BF16 in, FP32
# out); medians of 30 runs after warm-up (50 for the GEMMs, cuBLAS and ours in turns), on
# inputs far larger than L2. Writes build/bench/bench.csv, docs/performance.csv,
# docs/performance.md (tests/gpu/report.py: the targets, then every row) and
# docs/performance.png (the chart, where matplotlib is there), through
# tests/gpu/bench-report.sh. Without a GPU it says so and exits 0 (PIPEGEN_SKIP_STATUS=77:
# exits 77).
#   BENCH_MATRIX=FILE  another case list
#   GPU_SHARD=K/N      only shard K of N (the shards split the matrix, balanced by
#                      estimated time): its rows and their machine go to
#                      build/bench/shard-K-of-N/ (rows.csv, info) and nothing else is
#                      written; `make bench-report` makes the report from every shard's
#                      rows once all have run
#   GPU_DRYRUN=1       print the cases (of the shard) and exit: no GPU needed
#   BENCH_WORK=DIR     the work directory (build/bench, or the shard's)
#   BENCH_WISDOM=FILE  each auto line measured twice, the second with --wisdom=FILE (flag
#                      `wisdom` in the rows; make tune writes FILE): the report's "auto
#                      with and without wisdom"
#
# usage: tests/gpu/bench.sh PIPEGEN
set -u
. "$(dirname "$0")/lib.sh"
MATRIX=${BENCH_MATRIX:-$ROOT/tests/gpu/matrix}
select_cases bench bench "$MATRIX"
gpu_start bench "nothing was measured" "$@"
if [ -n "${GPU_SHARD:-}" ]; then
    W=${BENCH_WORK:-$ROOT/build/bench/shard-${GPU_SHARD/\//-of-}}
else
    W=${BENCH_WORK:-$ROOT/build/bench}
fi
export W
rm -rf "$W"; mkdir -p "$W"
cuda=$($NVCC --version | sed -n 's/.*release \([0-9.]*\).*/\1/p')
start=$SECONDS
echo "bench: $shard$selection"

# rows.csv: the CSV of docs/performance.csv with a first column, the row's place in the
# report: the streaming rows in matrix order, then the GEMMs' (tests/gpu/bench-report.sh
# sorts every shard's rows by it), and last the same-shape reference's value and ratio
# (streaming rows) and which reference the row's targets use (applies: memcpy, sameshape,
# cublas, bound, link or one_gpu). info: what the report needs to know of the run.
echo "order,sample,lowering,grid,flags,value,reference,ratio,sameshape,ratio_sameshape,applies" >"$W/rows.csv"
{
    echo "shard=${GPU_SHARD:-1/1}"
    echo "lines=${case_lines[*]}"
    echo "total=$matrix_lines"
    echo "matrix=$(md5sum <"$MATRIX" | cut -c1-32)"
    echo "gpu=$GPU"
    echo "arch=$ARCH"
    echo "cuda=$cuda"
    echo "date=$(date -u +%Y-%m-%d)"
} >"$W/info"
order() { printf '%d%04d' "$1" "$2"; }   # order KIND LINE (KIND 0: streaming, 1: GEMM)

# The GEMMs are measured against cuBLAS in FLOP/s below, not in bytes against a copy.
streaming=() streaming_lines=() gemm=() gemm_lines=()
for i in "${!cases[@]}"; do
    if is_gemm "${cases[$i]%% *}"; then
        gemm+=("${cases[$i]}") gemm_lines+=("${case_lines[$i]}")
    else
        streaming+=("${cases[$i]}") streaming_lines+=("${case_lines[$i]}")
    fi
done
build_cases bench "${streaming[@]}"

# host_multi_rows OUT ORDER SAMPLE LOWERING GRID [FLAGS]: on a machine of several GPUs,
# NAME_stream over all of them: SAMPLE-streamNgpu (its time against the bound of the device
# with the most work, the devices' shares of their bounds measured alone),
# SAMPLE-speedupNgpu (the one-GPU time against it), SAMPLE-streamNgpu-devD (device D's
# busy time against its bound, scaled to its rows), SAMPLE-linkNgpu (its time against
# every GPU copying its share in, out, or both at once, whichever is longest).
host_multi_rows() {
    local out=$1 ord=$2 line n
    shift 2
    line=$(grep '^BENCH_HOST_MULTI ' "$out" | tail -n 1)
    [ -n "$line" ] || return 0
    field() { sed -n "s/.* $1=\([0-9.]*\).*/\1/p" <<<"$2"; }
    n=$(field devices "$line")
    echo "$ord,$1-stream${n}gpu,$2,$3,${4:-},$(field stream_ms "$line"),$(field bound_ms "$line"),$(field ratio "$line"),,,bound" >>"$W/rows.csv"
    echo "$ord,$1-speedup${n}gpu,$2,$3,${4:-},$(field one_ms "$line"),$(field stream_ms "$line"),$(field speedup "$line"),,,one_gpu" >>"$W/rows.csv"
    line=$(grep '^BENCH_HOST_LINK ' "$out" | grep -v ' devices=1 ' | tail -n 1)
    [ -n "$line" ] && echo "$ord,$1-link${n}gpu,$2,$3,${4:-},$(field stream_ms "$line"),$(field both_ms "$line"),$(field ratio "$line"),,,link" >>"$W/rows.csv"
    while read -r line; do
        echo "$ord,$1-stream${n}gpu-dev$(field device "$line"),$2,$3,${4:-},$(field busy_ms "$line"),$(field bound_ms "$line"),$(field ratio "$line"),,,bound" >>"$W/rows.csv"
    done < <(grep '^BENCH_HOST_DEVICE ' "$out")
    grep -E '^BENCH_(HOST_MULTI|HOST_DEVICE|HOST_LINK|ALONE) ' "$out" | sed 's/^/  /'
}

# A case's flags as one CSV field: every flag, commas as '+'.
csv_flags() { shift 3; local f="$*"; echo "${f//,/+}"; }

printf '%-11s %-18s %-11s %-19s %9s %9s %6s %9s %6s %s\n' sample lowering grid flags "GB/s" "D2D GB/s" ratio \
    "same GB/s" ratio applies
for i in "${!streaming[@]}"; do
    c=${streaming[$i]}
    set -- $c
    dir=$(case_dir "$@")
    flags=$(csv_flags "$@")
    if [ ! -x "$dir/bench" ]; then
        echo "$c: build failed"; tail -n 5 "$dir/build.log"; continue
    fi
    "$dir/bench" $(case_sizes "$@") >"$dir/bench.out" 2>&1
    line=$(grep '^BENCH ' "$dir/bench.out" | tail -n 1)
    gbs=$(echo "$line" | sed -n 's/.* \([0-9.]*\) GB\/s d2d.*/\1/p')
    ref=$(echo "$line" | sed -n 's/.*d2d=\([0-9.]*\) GB\/s.*/\1/p')
    ratio=$(echo "$line" | sed -n 's/.*ratio=\([0-9.]*\).*/\1/p')   # (the last "ratio=": not ratio_sameshape)
    same=$(echo "$line" | sed -n 's/.* sameshape=\([0-9.]*\) GB\/s.*/\1/p')
    ratio_same=$(echo "$line" | sed -n 's/.*ratio_sameshape=\([0-9.]*\).*/\1/p')
    applies=$(echo "$line" | sed -n 's/.* reference=\([a-z]*\).*/\1/p')
    if [ -z "$ratio" ] || [ -z "$applies" ]; then echo "$c: run failed: $line"; continue; fi
    echo "$(order 0 "${streaming_lines[$i]}"),$1,$2,$3,$flags,$gbs,$ref,$ratio,$same,$ratio_same,$applies" >>"$W/rows.csv"
    printf '%-11s %-18s %-11s %-19s %9s %9s %6s %9s %6s %s\n' "$1" "$2" "$3" "$flags" "$gbs" "$ref" "$ratio" \
        "$same" "$ratio_same" "$applies"
    grep '^BENCH_SAMESHAPE ' "$dir/bench.out" | sed 's/^/  /'
    # host_stream: NAME_stream (and its serial run) in ms against the bound max(H2D, D2H,
    # kernel) in ms, each measured alone in the same process (ratio: bound / time).
    host=$(grep '^BENCH_HOST ' "$dir/bench.out" | tail -n 1)
    if [ -n "$host" ]; then
        get() { sed -n "s/.* $1=\([0-9.]*\).*/\1/p" <<<"$host"; }
        echo "$(order 0 "${streaming_lines[$i]}"),$1-stream,$2,$3,$flags,$(get stream_ms),$(get bound_ms),$(get ratio),,,bound" >>"$W/rows.csv"
        echo "$(order 0 "${streaming_lines[$i]}"),$1-stream-nocache,$2,$3,$flags,$(get nocache_ms),$(get bound_ms),$(get nocache_ratio),,,bound" >>"$W/rows.csv"
        echo "$(order 0 "${streaming_lines[$i]}"),$1-serial,$2,$3,$flags,$(get serial_ms),$(get bound_ms),$(get serial_ratio),,,bound" >>"$W/rows.csv"
        echo "  $host"
        # the same time against what the link moves alone, in, out and both ways at once
        link=$(grep '^BENCH_HOST_LINK .* devices=1 ' "$dir/bench.out" | tail -n 1)
        if [ -n "$link" ]; then
            get() { sed -n "s/.* $1=\([0-9.]*\).*/\1/p" <<<"$link"; }
            echo "$(order 0 "${streaming_lines[$i]}"),$1-stream-link,$2,$3,$flags,$(get stream_ms),$(get both_ms),$(get ratio),,,link" >>"$W/rows.csv"
            echo "  $link"
        fi
        host_multi_rows "$dir/bench.out" "$(order 0 "${streaming_lines[$i]}")" "$@"
        # the chunks of its traced runs, for the timeline of docs/streaming.md (one run a
        # sample: the line without flags)
        [ -n "$flags" ] || sed -n "s/^BENCH_TRACE //p" "$dir/bench.out" | sed "s/^/$2 $3 /" >>"$W/trace.txt"
    fi
done

# The GEMMs against cuBLAS in one process (FLOP/s, not bytes), with each lowering of the
# matrix: built in parallel, then run one at a time.
build_cases ref "${gemm[@]}"
for i in "${!gemm[@]}"; do
    set -- ${gemm[$i]}
    s=$1 m=$2 g=$3 f=$(csv_flags "$@")
    sg=$(case_dir "$@")
    if [ -x "$sg/ref" ]; then
        "$sg/ref" $GEMM_SIZES | sed "s/^/$s $m $g: /" | tee "$sg/result.txt"
        sed -n "s/^.*GEMM[A-Z0-9_]* n=\([0-9]*\) pipegen \([0-9.]*\) .*cublas \([0-9.]*\) .*ratio=\([0-9.]*\).*/$(order 1 "${gemm_lines[$i]}"),$s-\1,$m,$g,$f,\2,\3,\4,,,cublas/p" \
            "$sg/result.txt" >>"$W/rows.csv"
    else
        echo "$s $m $g: build failed"; tail -n 5 "$sg/build.log"
    fi
done

if [ -n "${GPU_SHARD:-}" ]; then
    echo "bench: ${shard}$(($(wc -l <"$W/rows.csv") - 1)) rows in $W/rows.csv, $(minutes $((SECONDS - start)));" \
         "once every shard has run: make bench-report"
    exit 0
fi
# docs/performance.md (targets and table), .csv and .png, from this run.
BENCH_OUT=$W/bench.csv "$ROOT/tests/gpu/bench-report.sh" "$W"
