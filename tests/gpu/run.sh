#!/usr/bin/env bash
# make gpu-check: every case of tests/gpu/matrix through --emit-test on this machine's GPU,
# then again under compute-sanitizer memcheck, racecheck and synccheck; then the watchdog
# and the runtime's own tests (tests/gpu/lib.sh, gpu_runtime_cases: cudaDeviceReset
# between launches, threads racing to make the first runtime call), each in one shard.
# A lowering's SASS is checked where it must hold an instruction (bulk: UBLKCP, tensor:
# UTMALDG, and UTMASTG for transpose's stores, through cuobjdump beside nvcc, or
# CUOBJDUMP); a case whose lowering needs a
# newer GPU is skipped.
#   GPU_MATRIX=FILE   another case list
#   GPU_JOBS=N        cases run at a time (default: 2 fewer than the CPUs, 1 to 14: the
#                     shard estimates are fitted to 14 on 16 CPUs; several shards at once
#                     on one host: give each its share)
#   GPU_SHARD=K/N     only shard K of N (the shards split the matrix, balanced by
#                     estimated time; one of them runs the watchdog, one the runtime's
#                     tests); each shard prints
#                     its own `gpu-check: N passed, M failed`
#   GPU_DRYRUN=1      print the cases (of the shard) and exit: no GPU needed
#   GPU_WORK=DIR      the work directory (build/gpu); DIR/times.tsv: seconds per case
# Without a GPU it says so and exits 0 without claiming a pass (PIPEGEN_SKIP_STATUS=77:
# exits 77).
#
# usage: tests/gpu/run.sh PIPEGEN
set -u
. "$(dirname "$0")/lib.sh"
cpus=$(nproc 2>/dev/null || echo 4)
GPU_JOBS=${GPU_JOBS:-$((cpus > 16 ? 14 : cpus > 2 ? cpus - 2 : 1))}
select_cases gpu-check check "${GPU_MATRIX:-$ROOT/tests/gpu/matrix}"
gpu_start gpu-check "nothing was run and nothing passed" "$@"
W=${GPU_WORK:-$ROOT/build/gpu}
export W
rm -rf "$W"; mkdir -p "$W"
start=$SECONDS
echo "gpu-check on $GPU ($ARCH), work in $W"
echo "gpu-check: $shard$selection"

# 1. Generate and build every case (in parallel: nvcc is the slow part).
build_cases test "${cases[@]}"
build_s=$((SECONDS - start))

# The case cap of a sample's racecheck run: its number in RACECHECK_MAX_WORK, else ring.
max_work() {
    local m
    for m in $RACECHECK_MAX_WORK; do
        [ "${m%%=*}" = "$1" ] && { echo "${m#*=}"; return; }
    done
    echo ring
}
# A sanitizer run is clean when its summary line says so (racecheck words it its own way).
clean_summary() {
    grep -Eq "ERROR SUMMARY: 0 errors|RACECHECK SUMMARY: 0 hazards displayed \(0 errors, 0 warnings\)" "$1"
}

# Whether a case's kernels take a lowering of SYNCCHECK_SKIP: the line's, or those of its
# generated source (its schedule comments), which an auto line's wisdom record or its
# packed rows' own lowerings choose.
skips_synccheck() {
    local m
    for m in "$2" $(sed -n 's/^\/\* Schedule for sm_.*, lowering \([a-z.-]*\): .*/\1/p' "$1" 2>/dev/null); do
        [[ " $SYNCCHECK_SKIP " == *" $m "* ]] && return 0
    done
    return 1
}

# 2. Run each: plain, then under each sanitizer tool. Cases run GPU_JOBS at a time (the
# GPU has room for several small test programs; the sanitizers are the slow part); each
# writes its report lines to its own file, printed in matrix order afterwards, and its
# seconds to another.
run_case() {
    local dir=$1 name=$2 mech=$3 out=$1/report start=$SECONDS t0 phases=
    : >"$out"
    if grep -q "lowering needs sm_" "$dir/build.log" 2>/dev/null; then
        echo "skip build   $name: $(grep -m 1 -o 'the [^ ]* lowering needs sm_[0-9]*' "$dir/build.log") ($ARCH)" >>"$out"
        return
    fi
    if [ ! -x "$dir/test" ]; then
        { echo "FAIL build   $name"; sed 's/^/    /' "$dir/build.log" | tail -n 20; } >>"$out"
        return
    fi
    sass_check "$dir" "$name" "$mech" >>"$out"
    t0=$SECONDS
    if timeout 600 "$dir/test" >"$dir/run.log" 2>&1; then
        echo "ok   run      $name: $(tail -n 1 "$dir/run.log")" >>"$out"
    else
        { echo "FAIL run      $name"; tail -n 20 "$dir/run.log" | sed 's/^/    /'; } >>"$out"
    fi
    phases=$((SECONDS - t0))
    for tool in memcheck racecheck synccheck; do
        log="$dir/$tool.log"
        # compute-sanitizer's synccheck reports a second arrival on one barrier phase as
        # "Missing wait" and kills the kernel; libcu++ arrives twice by design
        # (memcpy_async's cp.async.mbarrier.arrive without .noinc, then the thread's own
        # arrive), and synccheck rejects the CUDA programming guide's own cuda::barrier
        # and cuda::pipeline examples the same way (seen on H100, CUDA 13.0). Those cases
        # (the lowerings of SYNCCHECK_SKIP) are reported as skipped, not passed.
        if [ "$tool" = synccheck ] && skips_synccheck "$dir/${name%% *}.cu" "$mech"; then
            echo "skip synccheck $name: synccheck rejects libcu++'s double arrival (docs/lowerings.md)" >>"$out"
            phases+=$'\t'
            continue
        fi
        cap= t0=$SECONDS
        [ "$tool" = racecheck ] && cap=$(max_work "${name%% *}")
        if PG_TEST_QUICK=1 PG_TEST_MAX_WORK=$cap timeout 900 "$SAN" --tool "$tool" \
               --error-exitcode 99 "$dir/test" >"$log" 2>&1 && clean_summary "$log"; then
            echo "ok   $tool $name${cap:+: $(grep -o '[0-9]* passed.*' "$log")}" >>"$out"
        else
            { echo "FAIL $tool $name"; grep -v '^=========     ' "$log" | tail -n 20 | sed 's/^/    /'; } >>"$out"
        fi
        phases+=$'\t'$((SECONDS - t0))
    done
    printf '%s\t%s\n' $((SECONDS - start)) "$phases" >"$dir/seconds"
}
# The instruction a lowering's kernels must hold in their SASS, where the PTX alone does not
# show that the hardware path is taken (LOWERING:INSTRUCTION ...): bulk copies are the
# bulk-copy unit's UBLKCP, tensor copies the TMA unit's UTMALDG; LOWERING/SAMPLE:... holds
# for that sample only (transpose's staged output goes back by tensor stores, UTMASTG;
# gemm_bf16's body multiplies on the tensor cores from the slots, HGMMA, its clusters
# multicast B, UTMALDG.2D.MULTICAST, and its producers give registers to the consumers,
# setmaxnreg's USETMAXREG; auto's sm_90 kernel of a matmul is tensor's).
SASS_MUST="bulk:UBLKCP tensor:UTMALDG tensor/transpose:UTMASTG tensor/transpose_batched:UTMASTG
           tensor/gemm_bf16:HGMMA tensor/gemm_bf16:UTMALDG.2D.MULTICAST
           tensor/gemm_bf16:USETMAXREG auto/sgemm:UTMALDG auto/gemm_bf16:HGMMA
           auto/gemm_bf16:UTMALDG.2D.MULTICAST auto/gemm_bf16:USETMAXREG"
sass_check() {
    local dir=$1 name=$2 mech=$3 m want
    for m in $SASS_MUST; do
        [ "${m%%:*}" = "$mech" ] || [ "${m%%:*}" = "$mech/${name%% *}" ] || continue
        want=${m#*:}
        if "$CUOBJDUMP" --dump-sass "$dir/test" 2>&1 | grep -q "$want"; then
            echo "ok   sass     $name: $want"
        else
            echo "FAIL sass     $name: no $want in cuobjdump --dump-sass"
        fi
    done
}
SAN=${SANITIZER:-compute-sanitizer}
CUOBJDUMP=${CUOBJDUMP:-$(dirname "$(command -v "$NVCC" || echo nvcc)")/cuobjdump}
export -f run_case clean_summary sass_check max_work skips_synccheck
export SAN SYNCCHECK_SKIP RACECHECK_MAX_WORK CUOBJDUMP SASS_MUST
# The slow cases (is_slow_case) start first, so that none of them is left to run alone at
# the end; the reports are printed in matrix order below.
for pass in slow rest; do
    for c in "${cases[@]}"; do
        set -- $c
        if is_slow_case "$1"; then kind=slow; else kind=rest; fi
        [ $kind = $pass ] || continue
        name="$1 --lower=$2 --grid=$3"
        for f in "${@:4}"; do [[ $f == nvcc:* ]] || name+=" $f"; done   # pipegen's flags
        printf '%s\0%s\0%s\0' "$(case_dir "$@")" "$name" "$2"
    done
done | xargs -r -0 -n 3 -P "$GPU_JOBS" bash -c 'run_case "$@"' _
skipped=0
printf 'line\tcase\tseconds\trun\tmemcheck\tracecheck\tsynccheck\n' >"$W/times.tsv"
for i in "${!cases[@]}"; do
    set -- ${cases[$i]}
    dir=$(case_dir "$@")
    cat "$dir/report"
    passed=$((passed + $(grep -c '^ok ' "$dir/report")))
    failed=$((failed + $(grep -c '^FAIL ' "$dir/report")))
    skipped=$((skipped + $(grep -c '^skip ' "$dir/report")))
    printf '%s\t%s\t%s\n' "${case_lines[$i]}" "${cases[$i]}" "$(cat "$dir/seconds" 2>/dev/null)" \
        >>"$W/times.tsv"
done

# 3. The watchdog: a schedule with a dropped arrival (written despite the verifier) must
# trap with its message instead of hanging.
if [ "$watchdog" = 1 ]; then
    wd="$W/watchdog"
    mkdir -p "$wd"
    if "$PG" "$ROOT/samples/saxpy/saxpy.pipe" --lower=cp.async.mbarrier --grid=persistent \
           --producer-warps=1 --inject-fault=drop-arrive --no-verify --watchdog=200000000 \
           --arch="$ARCH" -o "$wd/saxpy.cu" --emit-test="$wd/test.cu" >"$wd/build.log" 2>&1 &&
       "$NVCC" -O2 -std=c++17 -arch="$ARCH" -I"$ROOT/runtime" -I"$wd" -o "$wd/test" "$wd/test.cu" \
           "$wd/saxpy.cu" "$ROOT/build/libpipert.a" >>"$wd/build.log" 2>&1 &&
       ! timeout 120 "$wd/test" >"$wd/run.log" 2>&1 && grep -q "pipegen watchdog:" "$wd/run.log"; then
        case_ok "watchdog: $(grep -m1 'pipegen watchdog:' "$wd/run.log")"
    else
        case_fail watchdog "no trap message"
        tail -n 5 "$wd/build.log" "$wd/run.log" | sed 's/^/    /'
    fi
fi
# 4. The runtime's own tests: kernels past 48 KiB of dynamic shared memory across
# cudaDeviceReset, and host threads racing to fill the runtime's caches.
if [ "$runtime" = 1 ]; then
    rt_start=$SECONDS
    gpu_runtime_cases "$W/runtime"
    printf '0\truntime\t%s\n' $((SECONDS - rt_start)) >>"$W/times.tsv"
fi
echo "gpu-check: $skipped run(s) skipped (listed above with the reason)"
echo "gpu-check: ${shard}took $(minutes $((SECONDS - start))) (builds $(minutes "$build_s")); seconds per case in $W/times.tsv"
suite_end
