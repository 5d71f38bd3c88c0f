# Shared by tests/gpu/run.sh (make gpu-check) and tests/gpu/bench.sh (make bench),
# sourced: the matrix and its shards (GPU_SHARD=K/N, GPU_DRYRUN=1), the start of a GPU
# suite, and how a case is built. Sources tests/lib.sh.
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)

# The lowerings whose synccheck run is skipped (run.sh says why).
SYNCCHECK_SKIP="barrier pipeline pipeline-roles"
# The samples whose racecheck run leaves out the test's larger cases (SAMPLE=N: the cases
# whose sizes multiply to more than N, through PG_TEST_MAX_WORK): gemm_bf16's scalar path
# (the cases whose K or pointers allow no 16-byte copies) reads shared memory some 5 * 10^8
# times in its prime-size case, and racecheck did not finish it in 110 s (H100, CUDA 13.0).
# Under 2 * 10^7 racecheck runs 12 of its 29 quick cases (every size up to 255 x 128 x 513,
# the misaligned pointers, a forced grid) in 8-11 s; under 7 * 10^7, 21 cases in 110 s.
RACECHECK_MAX_WORK="gemm_bf16=20000000"

# The spec of a matrix line's first column: samples/NAME/NAME.pipe, or a variant spec
# samples/*/NAME.pipe (sgemm_roles: samples/sgemm/sgemm_roles.pipe).
spec_path() {
    local f
    for f in "$ROOT/samples/$1/$1.pipe" "$ROOT"/samples/*/"$1.pipe"; do
        if [ -f "$f" ]; then echo "$f"; return 0; fi
    done
    echo "$ROOT/samples/$1/$1.pipe"
}

# A case's directory names its flags too: saxpy.cp.async.persistent.producer-warps=1
# (commas become '+': nvcc splits an -I value at commas)
case_dir() { local d="$W/$1.$2.$3"; shift 3; for f in "$@"; do d="$d.${f#--}"; done; echo "${d//,/+}"; }

# build_case DRIVER SAMPLE LOWERING GRID DIR [FLAGS...]: the case's source and a driver
# built by nvcc for ARCH into DIR/DRIVER, the log in DIR/build.log. DRIVER is test (the
# --emit-test driver, -O2), bench (the --emit-bench driver) or ref (tests/gpu/gemm_ref.cu
# against cuBLAS; the source is then sgemm.cu, or gemm_bf16.cu for gemm_bf16). A flag
# nvcc:FLAG goes to nvcc, the others to pipegen; nvcc:-arch=A replaces -arch=ARCH, and so
# does an nvcc:-gencode without one (a body with sm_90a instructions, gemm_bf16's wgmma,
# needs the arch-specific target, which nvcc -arch=sm_90a does not give alone: it adds a
# plain compute_90 pass).
build_case() {
    local driver=$1 sample=$2 mech=$3 grid=$4 dir=$5
    shift 5
    local out=$sample opt=-O3 emit=() main=("$dir/$driver.cu") libs=() nvcc_flags=() f
    local arch=(-arch="$ARCH") arch_named=0
    for f; do
        case $f in
        nvcc:-arch=*) arch=("${f#nvcc:}") arch_named=1 ;;
        nvcc:-gencode=*) nvcc_flags+=("${f#nvcc:}"); [ $arch_named = 1 ] || arch=() ;;
        nvcc:*) nvcc_flags+=("${f#nvcc:}") ;;
        *) set -- "$@" "$f" ;;
        esac
        shift
    done
    case $driver in
    test) opt=-O2 emit=(--emit-test="$dir/test.cu") ;;
    bench) emit=(--emit-bench="$dir/bench.cu") ;;
    ref) out=sgemm main=("$ROOT/tests/gpu/gemm_ref.cu") libs=(-lcublas)
         [ "$sample" != gemm_bf16 ] || out=gemm_bf16 nvcc_flags+=(-DGEMM_REF_BF16) ;;
    esac
    mkdir -p "$dir"
    "$PG" "$(spec_path "$sample")" --lower="$mech" --grid="$grid" --arch="$ARCH" "$@" \
        -o "$dir/$out.cu" "${emit[@]}" >"$dir/build.log" 2>&1 &&
    "$NVCC" "$opt" -std=c++17 "${arch[@]}" "${nvcc_flags[@]}" -I"$ROOT/runtime" -I"$dir" -o "$dir/$driver" \
        "${main[@]}" "$dir/$out.cu" "$ROOT/build/libpipert.a" "${libs[@]}" >>"$dir/build.log" 2>&1
}

# build_cases DRIVER CASE...: every case ("SAMPLE LOWERING GRID [FLAGS]") built in parallel
# (nvcc is the slow part), each in its case_dir.
build_cases() {
    local driver=$1
    shift
    [ $# -gt 0 ] || return 0
    # (no trailing blank on a line: xargs -L would join it with the next)
    printf '%s\n' "$@" | while read -r s m g f; do
        echo "$driver $s $m $g $(case_dir $s $m $g $f)${f:+ $f}"
    done | xargs -P "$(nproc)" -L 1 bash -c 'build_case "$@"' _
}

export -f spec_path case_dir build_case

# ------------------------------------------------------------------ shards

# shard_lines MODE FILE K N: the cases of matrix FILE that shard K of N runs, in matrix
# order: "LINE SAMPLE LOWERING GRID [FLAGS]" (LINE: the line's number in FILE), then, for
# MODE check, "0 watchdog" in the one shard that runs the watchdog. The first line printed
# is "LINES SECONDS": how many case lines FILE has, and the shard's estimated time.
#
# The shards are balanced by what each case is estimated to add to its shard's time on an
# H100 (the cost below, in seconds): the longest first, each to the shard with the least
# so far (ties: matrix order, the lower shard). The costs were fitted when the matrix had
# 80 lines (make gpu-check took 9m17s, make bench 5m05s) and still order the shards of
# today's (4 shards of about 4-6 minutes each, gpu-check and bench, on the H100). For gpu-check a case is its
# nvcc build (16 at a time) and its four runs (GPU_JOBS=4 cases at a time); the GEMMs are
# the slow ones, a case whose synccheck is skipped is a fifth shorter; the watchdog is one
# build and run after the others. For bench a case is its build and its measurement, one
# at a time. Each shard also pays a fixed start (the GPU query, the report).
shard_lines() {
    awk -v mode="$1" -v k="$3" -v n="$4" -v skip=" $SYNCCHECK_SKIP " '
        function cost(sample, mech,   sgemm, nosync) {
            sgemm = sample ~ /gemm/
            nosync = index(skip, " " mech " ") > 0
            if (mode == "bench")
                return sgemm ? 6 : 3
            if (sgemm)
                return nosync ? 14 : 17
            return nosync ? 3.6 : 4
        }
        NF && $1 !~ /^#/ { $1 = $1; ++nc; line[nc] = FNR; text[nc] = $0; c[nc] = cost($1, $2) }
        END {
            ncases = nc
            if (mode == "check") { ++nc; line[nc] = 0; text[nc] = "watchdog"; c[nc] = 25 }
            for (i = 1; i <= nc; ++i)
                order[i] = i
            for (i = 2; i <= nc; ++i)       # by cost, longest first; stable
                for (j = i; j > 1 && c[order[j]] > c[order[j - 1]]; --j) {
                    t = order[j]; order[j] = order[j - 1]; order[j - 1] = t
                }
            for (s = 1; s <= n; ++s)
                load[s] = 15
            for (i = 1; i <= nc; ++i) {
                best = 1
                for (s = 2; s <= n; ++s)
                    if (load[s] < load[best])
                        best = s
                shard[order[i]] = best
                load[best] += c[order[i]]
            }
            print ncases, load[k]
            for (i = 1; i <= nc; ++i)
                if (shard[i] == k)
                    print line[i], text[i]
        }' "$2"
}

# select_cases NAME MODE FILE: this shard's cases of matrix FILE (GPU_SHARD=K/N; all of
# them without it). Sets cases (one "SAMPLE LOWERING GRID [FLAGS]" each), case_lines (their
# line numbers), matrix_lines (how many cases the whole matrix has), watchdog (1 where this
# shard runs it), shard (the words "shard K/N: ", empty without GPU_SHARD) and selection
# (what the shard runs, in words). With GPU_DRYRUN=1 prints the selection, then one line
# per case ("line N: SAMPLE ..." or "watchdog"), and exits 0: no GPU, no pipegen, nothing
# built.
select_cases() {
    local name=$1 mode=$2 file=$3 k=1 n=1 spec=${GPU_SHARD:-}
    shard=
    if [ -n "$spec" ]; then
        if [[ ! $spec =~ ^([1-9][0-9]*)/([1-9][0-9]*)$ ]] ||
           [ "${BASH_REMATCH[1]}" -gt "${BASH_REMATCH[2]}" ]; then
            echo "$name: bad GPU_SHARD '$spec' (expected K/N, 1 <= K <= N)" >&2
            exit 2
        fi
        k=${BASH_REMATCH[1]} n=${BASH_REMATCH[2]} shard="shard $spec: "
    fi
    if [ ! -r "$file" ]; then
        echo "$name: cannot read the matrix '$file'" >&2
        exit 2
    fi
    local total est lineno rest
    cases=() case_lines=() watchdog=0
    {
        read -r total est
        while read -r lineno rest; do
            if [ "$lineno" = 0 ]; then
                watchdog=1
            else
                cases+=("$rest") case_lines+=("$lineno")
            fi
        done
    } < <(shard_lines "$mode" "$file" "$k" "$n")
    est=${est%.*}
    matrix_lines=$total
    selection="${#cases[@]} of the $total lines of ${file#"$ROOT"/}"
    [ $watchdog = 1 ] && selection+=" and the watchdog"
    selection+=", estimated $(minutes "$est") on an H100"
    if [ "${GPU_DRYRUN:-0}" = 1 ]; then
        echo "$name: ${shard}dry run (nothing is built or run): $selection"
        local i
        for i in "${!cases[@]}"; do
            echo "line ${case_lines[$i]}: ${cases[$i]}"
        done
        [ $watchdog = 1 ] && echo watchdog
        exit 0
    fi
}

# gpu_start NAME NOTHING ARGS...: suite_start NAME PIPEGEN ARGS, then this machine's GPU:
# without one, "NAME: no GPU on this machine: NOTHING" and exit 0 (no pass is claimed).
# Sets PG (the pipegen under test), NVCC, ARCH (sm_XY of the first GPU) and GPU (its name),
# exported for the builds.
gpu_start() {
    local name=$1 nothing=$2
    shift 2
    suite_start "$name" PIPEGEN "$@"
    if ! command -v nvidia-smi >/dev/null || ! nvidia-smi -L >/dev/null 2>&1; then
        echo "$name: no GPU on this machine: $nothing"
        # PIPEGEN_SKIP_STATUS=77: "skipped" to automake, meson and CTest, for a harness
        # that must not count a skip as a pass.
        exit "${PIPEGEN_SKIP_STATUS:-0}"
    fi
    PG=$pipegen
    NVCC=${NVCC:-nvcc}
    ARCH=sm_$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -n 1 | tr -d .)
    GPU=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -n 1)
    export PG ROOT NVCC ARCH
}

# minutes SECONDS: "MmSSs"
minutes() { printf '%dm%02ds' $(($1 / 60)) $(($1 % 60)); }
