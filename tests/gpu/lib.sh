# Shared by tests/gpu/run.sh (make gpu-check), tests/gpu/bench.sh (make bench) and
# tests/gpu/runtime.sh (make gpu-runtime), sourced: the matrix and its shards
# (GPU_SHARD=K/N, GPU_DRYRUN=1), the start of a GPU suite, how a case is built, and the
# runtime's own tests. Sources tests/lib.sh.
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)

# The lowerings whose synccheck run is skipped (run.sh says why).
SYNCCHECK_SKIP="barrier pipeline pipeline-roles"
# The cases a racecheck run leaves out (through PG_TEST_MAX_WORK=ring): those larger than
# both the case the test's forced grids run (three tiles and 7 in each size) and its sizes
# past the ring (whole 16-byte rows around it), so the primes, the large sizes of its
# other cases, and with them the misaligned primes. Every trip count around the ring
# stays, 16-byte copies included. Racecheck watches each shared-memory access, and over
# those cases it took 90 to 130 s a GEMM and 20 to 70 s a 3D stencil (H200, CUDA 13.0, 8
# cases at once); memcheck and synccheck run every quick case. SAMPLE=N here caps that
# sample at N instead (the cases whose sizes multiply to more than N): gemm_bf16's scalar
# path (the cases whose K or pointers allow no 16-byte copies) reads shared memory some
# 5 * 10^8 times in its prime-size case, and racecheck did not finish it in 110 s (H100,
# CUDA 13.0). Under 2 * 10^7 racecheck runs 12 of its 29 quick cases (every size up to
# 255 x 128 x 513, the misaligned pointers, a forced grid) in 8-11 s; under 7 * 10^7, 21
# cases in 110 s.
RACECHECK_MAX_WORK="gemm_bf16=20000000"

# The spec of a matrix line's first column: samples/NAME/NAME.pipe, or a variant spec
# samples/*/NAME.pipe (sgemm_roles: samples/sgemm/sgemm_roles.pipe), a user kernel
# tests/kernels/NAME.pipe, or a golden spec tests/golden/NAME.pipe.
spec_path() {
    local f
    for f in "$ROOT/samples/$1/$1.pipe" "$ROOT"/samples/*/"$1.pipe" \
             "$ROOT/tests/kernels/$1.pipe" "$ROOT/tests/golden/$1.pipe"; do
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
# plain compute_90 pass). The flag wisdom is --wisdom=BENCH_WISDOM (bench_wisdom_twins),
# of this GPU's records (--wisdom-gpu: a file may hold several GPUs'); the flag
# record:LOWERING is --wisdom=DIR/record.wisdom, a record of the spec for ARCH on this GPU
# that chooses LOWERING (a block size and packs' own lowerings too:
# record:barrier@256,pack2=cp.async), so that gpu-check runs a unit a tuning run could
# write, on an auto line with no other wisdom; the build fails where pipegen notes that it
# does not apply the record as written, or the unit does not name it (a line whose targets
# leave out ARCH).
# sizes:AxB... is the bench driver's (case_sizes), not pipegen's.
build_case() {
    local driver=$1 sample=$2 mech=$3 grid=$4 dir=$5
    shift 5
    local out=$sample opt=-O3 emit=() main=("$dir/$driver.cu") libs=() nvcc_flags=() f
    local arch=(-arch="$ARCH") arch_named=0 record=
    mkdir -p "$dir"
    for f; do
        case $f in
        nvcc:-arch=*) arch=("${f#nvcc:}") arch_named=1 ;;
        nvcc:-gencode=*) nvcc_flags+=("${f#nvcc:}"); [ $arch_named = 1 ] || arch=() ;;
        nvcc:*) nvcc_flags+=("${f#nvcc:}") ;;
        sizes:*) ;;
        wisdom) set -- "$@" --wisdom="$BENCH_WISDOM" --wisdom-gpu="$GPU" ;;
        record:*) record=$dir/record.wisdom
                  [[ $mech == auto && " $* " != *" wisdom "* && " $* " != *" --wisdom"* ]] ||
                      { echo "record: needs an auto line with no other wisdom" >"$dir/build.log"; return 1; }
                  printf '%s %s %s fixed %s\n' "$("$PG" --spec-hash "$(spec_path "$sample")")" \
                      "$ARCH" "${GPU// /_}" "${f#record:}" >"$record"
                  set -- "$@" --wisdom="$record" ;;
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
    "$PG" "$(spec_path "$sample")" --lower="$mech" --grid="$grid" --arch="$ARCH" "$@" \
        -o "$dir/$out.cu" "${emit[@]}" >"$dir/build.log" 2>&1 &&
    { [ -z "$record" ] || record_applied "$dir/build.log" "$dir/$out.cu" ||
      { echo "the record of $record was not applied as written" >>"$dir/build.log"; false; }; } &&
    "$NVCC" "$opt" -std=c++17 "${arch[@]}" "${nvcc_flags[@]}" -I"$ROOT/runtime" -I"$dir" -o "$dir/$driver" \
        "${main[@]}" "$dir/$out.cu" "$ROOT/build/libpipert.a" "${libs[@]}" >>"$dir/build.log" 2>&1
}

# record_applied LOG UNIT: pipegen noted nothing of a case's record.wisdom (LOG), and the
# generated UNIT names it as what chose its plan.
record_applied() {
    ! grep -q "record\.wisdom:[0-9:]* note:" "$1" && grep -q "chosen by wisdom record\.wisdom:1 " "$2"
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

export -f spec_path case_dir build_case record_applied

# The GEMM samples, measured against cuBLAS by tests/gpu/gemm_ref.cu (driver ref) at
# GEMM_SIZES, not by their bench driver.
GEMM_SIZES="4096 8192"
is_gemm() { case $1 in sgemm | sgemm_* | gemm_bf16) return 0 ;; *) return 1 ;; esac; }
# The samples whose gpu-check case takes several times another's (shard_lines' costs).
is_slow_case() { is_gemm "$1" || [[ $1 == *_host ]]; }

# case_sizes FLAGS...: a case's sizes (flag sizes:AxB...: the bench driver's sizes, A B
# ..., instead of its own)
case_sizes() { local f; for f; do [[ $f != sizes:* ]] || { f=${f#sizes:}; echo "${f//x/ }"; }; done; }

# ------------------------------------------------------------------ shards

# shard_lines MODE FILE K N: the cases of matrix FILE that shard K of N runs, in matrix
# order: "LINE SAMPLE LOWERING GRID [FLAGS]" (LINE: the line's number in FILE), then, for
# MODE check, "0 watchdog" in the one shard that runs the watchdog and "0 runtime" in the
# one that runs the runtime's own tests (gpu_runtime_cases). The first line printed
# is "LINES SECONDS": how many case lines FILE has, and the shard's estimated time.
#
# The shards are balanced by what each case is estimated to add to its shard's time (the
# cost below, in seconds, on one H200 with 16 cores): the longest first, each to the
# shard with the least so far (ties: matrix order, the lower shard). For bench a case is
# its build and its measurement, one at a time: fitted to shard 1 of 8 on 2026-11-29
# (38 lines, 4 of them GEMMs, in 1m12s: the inputs are made on the device). For gpu-check
# a case is its nvcc build (16 at a time) and its four runs, GPU_JOBS cases at a time:
# fitted to the seconds each case took (times.tsv) in the two shards of the whole matrix
# on 2026-11-29 at f8bc697 with GPU_JOBS=14 (8m10s and 8m06s, racecheck capped at
# PG_TEST_MAX_WORK=ring), divided by the 12.1 cases that ran at once on average: a GEMM
# (sgemm, sgemm_roles, gemm_bf16) 135 s on average, a host_stream sample 180 s (its test
# streams several sizes, under each sanitizer too), any other 23.0 s on average, 17.7
# where synccheck is skipped. The runtime's tests (four nvcc builds at once, some 20 short
# runs) took 15 s; the watchdog is one build and run after the others. Each shard also
# pays a start (the GPU query, the builds before the first run: 67 to 73 s).
shard_lines() {
    awk -v mode="$1" -v k="$3" -v n="$4" -v skip=" $SYNCCHECK_SKIP " '
        function cost(sample, mech,   sgemm, nosync) {
            sgemm = sample ~ /gemm/
            nosync = index(skip, " " mech " ") > 0
            if (mode == "bench")
                return sgemm ? 3 : 1.5
            if (sgemm)
                return 11.2
            if (sample ~ /_host$/)
                return 14.9
            return nosync ? 1.46 : 1.90
        }
        # (a bench line with sizes: the test driver runs its own sizes, those of the line
        # without them)
        # (a gpu-check line with record: makes its own wisdom: no bench row, no twin)
        NF && $1 !~ /^#/ && !(mode == "check" && / sizes:/) && !(mode == "bench" && / record:/) {
            $1 = $1; ++nc; line[nc] = FNR; text[nc] = $0; c[nc] = cost($1, $2)
        }
        END {
            ncases = nc
            if (mode == "check") {
                ++nc; line[nc] = 0; text[nc] = "watchdog"; c[nc] = 10
                ++nc; line[nc] = 0; text[nc] = "runtime"; c[nc] = 15
            }
            for (i = 1; i <= nc; ++i)
                order[i] = i
            for (i = 2; i <= nc; ++i)       # by cost, longest first; stable
                for (j = i; j > 1 && c[order[j]] > c[order[j - 1]]; --j) {
                    t = order[j]; order[j] = order[j - 1]; order[j - 1] = t
                }
            for (s = 1; s <= n; ++s)
                load[s] = (mode == "check") ? 70 : 10
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

# parse_shard NAME: GPU_SHARD=K/N (1 <= K <= N; unset: 1/1) into k and n, and shard (the
# words "shard K/N: ", empty without GPU_SHARD); anything else exits 2 naming NAME.
parse_shard() {
    k=1 n=1 shard=
    [ -n "${GPU_SHARD:-}" ] || return 0
    if [[ ! $GPU_SHARD =~ ^([1-9][0-9]*)/([1-9][0-9]*)$ ]] ||
       [ "${BASH_REMATCH[1]}" -gt "${BASH_REMATCH[2]}" ]; then
        echo "$1: bad GPU_SHARD '$GPU_SHARD' (expected K/N, 1 <= K <= N)" >&2
        exit 2
    fi
    k=${BASH_REMATCH[1]} n=${BASH_REMATCH[2]} shard="shard $GPU_SHARD: "
}

# select_cases NAME MODE FILE: this shard's cases of matrix FILE (GPU_SHARD=K/N; all of
# them without it). Sets cases (one "SAMPLE LOWERING GRID [FLAGS]" each), case_lines (their
# line numbers), matrix_lines (how many cases the whole matrix has), watchdog and runtime
# (1 where this shard runs the watchdog, the runtime's tests), shard (the words
# "shard K/N: ", empty without GPU_SHARD) and selection (what the shard runs, in words).
# With GPU_DRYRUN=1 prints the selection, then one line per case ("line N: SAMPLE ...",
# "watchdog" or "runtime"), and exits 0: no GPU, no pipegen, nothing built.
select_cases() {
    local name=$1 mode=$2 file=$3 k n
    parse_shard "$name"
    if [ ! -r "$file" ]; then
        echo "$name: cannot read the matrix '$file'" >&2
        exit 2
    fi
    local total est lineno rest
    cases=() case_lines=() watchdog=0 runtime=0
    {
        read -r total est
        while read -r lineno rest; do
            if [ "$lineno" = 0 ]; then
                case $rest in
                watchdog) watchdog=1 ;;
                runtime) runtime=1 ;;
                esac
            else
                cases+=("$rest") case_lines+=("$lineno")
            fi
        done
    } < <(shard_lines "$mode" "$file" "$k" "$n")
    est=${est%.*}
    matrix_lines=$total
    selection="${#cases[@]} of the $total lines of ${file#"$ROOT"/}"
    if [ "$mode" = bench ] && [ -n "${BENCH_WISDOM:-}" ]; then
        local plain=${#cases[@]}
        bench_wisdom_twins "$name"
        selection+=" and $((${#cases[@]} - plain)) auto lines again with wisdom"
    fi
    [ $watchdog = 1 ] && selection+=" and the watchdog"
    [ $runtime = 1 ] && selection+=" and the runtime's tests"
    selection+=", estimated $(minutes "$est") on one H200"
    [ "$mode" = check ] && selection+=" at GPU_JOBS=14 (this run: ${GPU_JOBS:-?})"
    if [ "${GPU_DRYRUN:-0}" = 1 ]; then
        echo "$name: ${shard}dry run (nothing is built or run): $selection"
        local i
        for i in "${!cases[@]}"; do
            echo "line ${case_lines[$i]}: ${cases[$i]}"
        done
        [ $watchdog = 1 ] && echo watchdog
        [ $runtime = 1 ] && echo runtime
        exit 0
    fi
}

# bench_wisdom_twins NAME: after each case under auto, its twin with the flag `wisdom`
# (build_case: --wisdom=BENCH_WISDOM), so that the bench measures auto with and without
# the wisdom of a tuning run (make tune) in the same process. BENCH_WISDOM is made
# absolute and exported for the builds.
bench_wisdom_twins() {
    if [ ! -r "$BENCH_WISDOM" ]; then
        echo "$1: cannot read the wisdom file '$BENCH_WISDOM' (BENCH_WISDOM; make tune writes one)" >&2
        exit 2
    fi
    BENCH_WISDOM=$(realpath "$BENCH_WISDOM")
    export BENCH_WISDOM
    local i all=() lines=() w
    for i in "${!cases[@]}"; do
        all+=("${cases[$i]}") lines+=("${case_lines[$i]}")
        read -r _ w _ <<<"${cases[$i]}"
        [ "$w" = auto ] && all+=("${cases[$i]} wisdom") lines+=("${case_lines[$i]}")
    done
    cases=("${all[@]}") case_lines=("${lines[@]}")
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
    export PG ROOT NVCC ARCH GPU
}

# minutes SECONDS: "MmSSs"
minutes() { printf '%dm%02ds' $(($1 / 60)) $(($1 % 60)); }

# ------------------------------------------------------------------ the runtime's own tests

# The runtime on a GPU (issue 31), run by the gpu-check shard that has the "runtime" case
# (shard_lines) and by tests/gpu/runtime.sh alone: tests/gpu/rt_reset.cu (cudaDeviceReset
# between launches of kernels past 48 KiB of dynamic shared memory: the opt-in applied
# again) and tests/gpu/rt_threads.cu (threads making their first runtime calls at once:
# the caches filled by one of them), both over reduce_sum (cp.async, persistent: 65536
# bytes a block) and sgemm (cp.async, per_tile: 159744) generated for ARCH.
#   RT_THREADS_RUNS=10   rt_threads processes (each races once), then one under memcheck
#   RT_THREADS=8, RT_ITERS=3, RT_ROUNDS=6, RT_SEED   passed on to the programs
RT_REDUCE="$ROOT/samples/reduce_sum/reduce_sum.pipe --lower=cp.async --grid=persistent"
RT_SGEMM="$ROOT/samples/sgemm/sgemm.pipe --lower=cp.async --grid=per_tile"
# The line of pipert_kernel_prepare that keeps a prepared kernel's opt-in, and what the
# mutant runtime has there instead (the runtime before the fix: a prepared kernel is
# launched as it is).
RT_KEEP_OPTIN='? pipert_kernel_keep_optin(k)'
RT_KEEP_OPTIN_MUTANT='? cudaSuccess'

# gpu_runtime_build DIR: DIR/rt_reset and DIR/rt_threads, and DIR/mutant/rt_reset, the
# same test with the pipelines compiled against a pipert.h without the re-apply (the
# runtime's inline pipert_kernel_prepare is compiled into each generated file). Every
# nvcc at once; each step's log in DIR/*.log. On failure: non-zero, and the failed log's
# name on stdout; "needs sm_" in DIR/gen.log where ARCH cannot run the lowering.
gpu_runtime_build() {
    local dir=$1 m=$1/mutant pids=() logs=() i st=0
    local flags=(-O2 -std=c++17 -arch="$ARCH")
    local warn=(-Xcompiler -Wall,-Wextra --Werror all-warnings)
    mkdir -p "$m"
    # (RT_REDUCE and RT_SGEMM are split into words on purpose)
    # shellcheck disable=SC2086
    if ! "$PG" $RT_REDUCE --arch="$ARCH" -o "$dir/reduce_sum.cu" >"$dir/gen.log" 2>&1 ||
       ! "$PG" $RT_SGEMM --arch="$ARCH" -o "$dir/sgemm.cu" >>"$dir/gen.log" 2>&1; then
        echo "$dir/gen.log"
        return 1
    fi
    cp "$dir"/reduce_sum.cu* "$dir"/sgemm.cu* "$m/"
    sed "s/$RT_KEEP_OPTIN/$RT_KEEP_OPTIN_MUTANT/" "$ROOT/runtime/pipert.h" >"$m/pipert.h"
    if cmp -s "$ROOT/runtime/pipert.h" "$m/pipert.h"; then
        echo "runtime/pipert.h has no '$RT_KEEP_OPTIN': update RT_KEEP_OPTIN in tests/gpu/lib.sh" \
            >"$m/patch.log"
        echo "$m/patch.log"
        return 1
    fi
    # DIR/NAME.o from SOURCE, against the runtime's headers (-I DIR/mutant first: its
    # pipert.h, for the mutant's objects).
    rt_obj() {
        local out=$1 src=$2
        shift 2
        "$NVCC" "${flags[@]}" "$@" -I"$(dirname "$out")" -I"$ROOT/runtime" -c -o "$out" "$src" \
            >"${out%.o}.log" 2>&1
    }
    rt_obj "$dir/rt_reset.o" "$ROOT/tests/gpu/rt_reset.cu" "${warn[@]}" & pids+=($!) logs+=("$dir/rt_reset.log")
    rt_obj "$dir/rt_threads.o" "$ROOT/tests/gpu/rt_threads.cu" "${warn[@]}" & pids+=($!) logs+=("$dir/rt_threads.log")
    rt_obj "$dir/reduce_sum.o" "$dir/reduce_sum.cu" & pids+=($!) logs+=("$dir/reduce_sum.log")
    rt_obj "$dir/sgemm.o" "$dir/sgemm.cu" & pids+=($!) logs+=("$dir/sgemm.log")
    rt_obj "$m/reduce_sum.o" "$m/reduce_sum.cu" & pids+=($!) logs+=("$m/reduce_sum.log")
    rt_obj "$m/sgemm.o" "$m/sgemm.cu" & pids+=($!) logs+=("$m/sgemm.log")
    for i in "${!pids[@]}"; do
        if ! wait "${pids[$i]}"; then
            [ $st = 1 ] || echo "${logs[$i]}"
            st=1
        fi
    done
    [ $st = 0 ] || return 1
    local lib=("$ROOT/build/libpipert.a" -lpthread)
    "$NVCC" -arch="$ARCH" -o "$dir/rt_reset" "$dir/rt_reset.o" "$dir/reduce_sum.o" "$dir/sgemm.o" \
        "${lib[@]}" >"$dir/link.log" 2>&1 &&
    "$NVCC" -arch="$ARCH" -o "$dir/rt_threads" "$dir/rt_threads.o" "$dir/reduce_sum.o" \
        "$dir/sgemm.o" "${lib[@]}" >>"$dir/link.log" 2>&1 &&
    "$NVCC" -arch="$ARCH" -o "$m/rt_reset" "$dir/rt_reset.o" "$m/reduce_sum.o" "$m/sgemm.o" \
        "${lib[@]}" >>"$dir/link.log" 2>&1 || { echo "$dir/link.log"; return 1; }
}

# gpu_runtime_cases DIR: build (gpu_runtime_build) and run the runtime's tests in DIR, one
# case_ok or case_fail each:
#   runtime rt_reset            the test passes (exit 0)
#   runtime rt_reset mutant     it fails against the runtime without the re-apply: round 0
#                               passes and round 1, the first after a reset, fails (skipped
#                               where the test's control shows the GPU keeps the opt-in)
#   runtime rt_threads          RT_THREADS_RUNS processes pass, each a fresh first-call race
#   runtime rt_threads memcheck one more under compute-sanitizer memcheck (2 launches of
#                               each pipeline a thread): clean
gpu_runtime_cases() {
    local dir=$1 log st i bad=0 spreads=() san=${SANITIZER:-compute-sanitizer}
    local runs=${RT_THREADS_RUNS:-10}
    mkdir -p "$dir"
    if ! log=$(gpu_runtime_build "$dir"); then
        if grep -q "lowering needs sm_" "$dir/gen.log" 2>/dev/null; then
            echo "skip runtime: $(grep -m 1 -o 'the [^ ]* lowering needs sm_[0-9]*' "$dir/gen.log") ($ARCH)"
            skipped=$((${skipped:-0} + 1))
            return 0
        fi
        case_fail "runtime build" "${log#"$dir"/}"
        tail -n 20 "$log" | sed 's/^/    /'
        return 0
    fi

    timeout 300 "$dir/rt_reset" >"$dir/rt_reset.out" 2>&1
    st=$?
    if [ $st = 0 ]; then
        case_ok "runtime rt_reset: $(grep -c '^ok   round' "$dir/rt_reset.out") rounds exact," \
            "$(grep -c '^ok   round [1-9]' "$dir/rt_reset.out") of them after a cudaDeviceReset;" \
            "$(grep -m 1 '^control:' "$dir/rt_reset.out")"
        grep '^note' "$dir/rt_reset.out"
    else
        case_fail "runtime rt_reset" "exit status $st"
        grep -v '^ok ' "$dir/rt_reset.out" | tail -n 20 | sed 's/^/    /'
    fi

    # Some drivers keep the opt-in across a reset (the H200 of our device runs: 0 of 6
    # dropped it): a lost re-apply cannot show there, and the mutant's pass is no failure.
    if grep -q '^control: 0 of' "$dir/rt_reset.out"; then
        echo "skip runtime rt_reset mutant: this GPU keeps the opt-in across cudaDeviceReset" \
            "($(grep -m 1 '^control:' "$dir/rt_reset.out" | cut -c 10-)), so a lost re-apply cannot show"
        skipped=$((${skipped:-0} + 1))
        st=skip
    else
        timeout 300 "$dir/mutant/rt_reset" >"$dir/mutant/rt_reset.out" 2>&1
        st=$?
    fi
    if [ $st = skip ]; then
        :
    elif [ $st = 1 ] && grep -q '^ok   round 0:' "$dir/mutant/rt_reset.out" &&
       grep -q '^FAIL round 1 ' "$dir/mutant/rt_reset.out"; then
        case_ok "runtime rt_reset mutant: fails without the re-apply:" \
            "$(grep -m 1 '^FAIL round 1 ' "$dir/mutant/rt_reset.out" | cut -c 6-160)"
    else
        case_fail "runtime rt_reset mutant" "exit status $st, expected 1 with round 0 passed and round 1 failed (the test does not catch a lost opt-in)"
        tail -n 12 "$dir/mutant/rt_reset.out" | sed 's/^/    /'
    fi

    local first_bad=0 first_st=0 spread
    for ((i = 1; i <= runs; ++i)); do
        timeout 120 "$dir/rt_threads" >"$dir/rt_threads.$i.out" 2>&1
        st=$?
        spread=$(sed -n 's/.*first calls began within \([0-9.]*\) us.*/\1/p' "$dir/rt_threads.$i.out")
        [ -z "$spread" ] || spreads+=("$spread")
        if [ $st != 0 ]; then
            [ $bad -gt 0 ] || first_bad=$i first_st=$st
            bad=$((bad + 1))
        fi
    done
    # (the spread of each process's first calls: the least and the most)
    spread=$(printf '%s\n' "${spreads[@]}" | sort -g | sed -n '1p;$p' | paste -sd - -)
    if [ $bad = 0 ]; then
        case_ok "runtime rt_threads: $runs processes of $(sed -n 's/.*, \([0-9]*\) threads on \([0-9]*\) device.*/\1 threads on \2 device(s)/p' "$dir/rt_threads.1.out")," \
            "the threads' first calls began within ${spread:-?} us of each other"
    else
        case_fail "runtime rt_threads" "$bad of $runs processes failed (logs: $dir/rt_threads.*.out); process $first_bad, exit status $first_st:"
        grep -v '^ok ' "$dir/rt_threads.$first_bad.out" | tail -n 20 | sed 's/^/    /'
    fi

    if ! command -v "$san" >/dev/null; then
        echo "skip runtime rt_threads memcheck: no $san"
        skipped=$((${skipped:-0} + 1))
        return 0
    fi
    if RT_ITERS=2 timeout 600 "$san" --tool memcheck --error-exitcode 99 "$dir/rt_threads" \
           >"$dir/rt_threads.memcheck.out" 2>&1 &&
       grep -q "ERROR SUMMARY: 0 errors" "$dir/rt_threads.memcheck.out"; then
        case_ok "runtime rt_threads memcheck"
    else
        case_fail "runtime rt_threads memcheck" "not clean"
        grep -v '^=========     ' "$dir/rt_threads.memcheck.out" | tail -n 20 | sed 's/^/    /'
    fi
}
