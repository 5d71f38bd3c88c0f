#!/usr/bin/env bash
# Compile tests (no GPU needed): every samples/*/*.pipe and tests/golden/*.pipe, lowered
# with every implemented mechanism (`pipegen --list-lowerings`; `auto` is covered by a run
# with the spec's own lowering) and both grids, goes through
#   1. pipegen SPEC --lower=L --grid=G -o SPEC.cu --emit-test=test.cu --emit-bench=bench.cu
#   2. nvcc -std=c++17 -c SPEC.cu for sm_80 and sm_90 (only sm_90 for sm_90-only
#      mechanisms; sm_90a for a spec that tests __CUDA_ARCH_FEAT_SM90_ALL) with -Werror
#      all-warnings; any "warning" in nvcc's output fails too (-cubin, the kernels
#      alone, for a golden spec under another lowering than its own: see below)
#   3. the PTX of each architecture (kept from that compile, -keep): it must hold (or
#      lack) what tests/compile/expect lists for the lowering the schedule resolved to
#      (--dump-ir's mech=)
#   4. nvcc -c of the test and bench drivers, and
#   5. the header through gcc -std=c11 and g++ -std=c++17 (-fsyntax-only, -Wall -Wextra
#      -Werror): it must be includable from C and C++.
#      Neither the drivers nor the header depend on the lowering (the drivers differ
#      between the grids in one constant): 4 and 5 run once per spec, in its job with
#      its own lowering and the persistent grid.
# To stay within minutes on 2 cores (COMPILE_FULL=1 lifts all of these):
#   - a run with the spec's own lowering that writes the same source as an explicit
#     --lower=M is not compiled again (M's run stands for it);
#   - golden specs (features rather than workloads) compile with 2 of the other lowerings,
#     in turn over the goldens (every lowering where a golden has inline PTX of its own:
#     hints, producer warps), on the
#     persistent grid for the newest architecture, kernels only (-cubin: what a lowering
#     changes in a launcher, the samples compile under every lowering, and the spec's
#     own launcher is compiled) and to PTX only, at -O1 (-ptx: the runtime's inline PTX
#     under each lowering goes through ptxas in the samples' jobs) unless their stages take
#     hints or they have producer warps (other inline PTX: ptxas too), and with their
#     own lowering on both
#     grids and every architecture; samples with every lowering on the per_tile grid (for
#     sm_80 and with the launcher with 4 of them, in turn over the samples; the others
#     their sm_90 kernels, -cubin) and
#     every architecture, and with their own on both grids (so each lowering meets each
#     grid and each architecture, reductions included, without compiling every pair twice);
#     a sample's variant (samples/NAME/OTHER.pipe, e.g. sgemm_roles) as a golden spec;
#     a sample's host_stream variant (NAME_host), and the samples that only types,
#     borders, array accumulators or row reductions set apart (tests/lib.sh), with their
#     own lowering only (and on their own grid only, drivers included); the golden
#     specs that are a sample's kernels under other launch parameters (saxpy_sync,
#     saxpy_cp_async) with their own lowering only (on both grids); an own
#     lowering that mixes lowerings over the architectures on the persistent grid only;
#     a sample with a `steps` loop (sgemm) under other lowerings than its own for the
#     newest architecture only.
# A lowering that reports a spec feature as "not implemented yet", or a plan refused as
# the spec was not written for it (PLAN_REFUSED, tests/lib.sh), is a skip, not a failure.
# One line per (spec, lowering, grid); the last line is `compile: N passed, M failed`.
# Without nvcc the suite says so and exits 0 (CI machines may lack CUDA).
#
# usage: tests/compile/run.sh PIPEGEN [SPEC.pipe...]
#   COMPILE_JOBS=2          parallel jobs (xargs -P)
#   COMPILE_FULL=1          the whole matrix, with drivers and header in every job
#   COMPILE_KEEP=DIR        keep the work directory (generated files, PTX, logs) in DIR
#   COMPILE_LOWERINGS="L.." only these lowerings (names of --list-lowerings; the spec's own
#                           lowering is "default"), e.g. COMPILE_LOWERINGS=bulk
#   NVCC=/path/to/nvcc      the compiler (default: nvcc on PATH, else /usr/local/cuda/bin)
set -u

# ------------------------------------------------------------------ one job (a worker)
if [ "${1:-}" = --job ]; then
    shift
    pipegen=$1 root=$2 dir=$3 spec=$4 lower=$5 grid=$6 checks=$7 archs=$8
    . "$root/tests/lib.sh"   # PLAN_REFUSED
    mkdir -p "$dir"
    log=$dir/log
    : >"$log"
    # The job's result, kept for the summary and printed at once as progress: a line per
    # case as it finishes, [done/total] (make check is silent for minutes otherwise).
    result() {
        echo "$SECONDS" >"$dir/seconds"    # the job's wall time (it is a process of its own)
        echo "$*" >"$dir/result"
        local done
        done=$(find "$COMPILE_WORK" -name result | wc -l)
        local word=${1%% *} why=
        [ "$word" = "$1" ] || why=": ${1#* }"
        printf '%-4s [%d/%d] %s%s\n' "$word" "$done" "$COMPILE_TOTAL" "${dir#"$COMPILE_WORK"/}" "$why"
        exit 0
    }
    run() {     # run CMD...: log it, fail the job with its output when it fails or warns
        echo "+ $*" >>"$log"
        "$@" >"$dir/cmd.out" 2>&1
        local status=$?
        cat "$dir/cmd.out" >>"$log"
        if [ $status -ne 0 ]; then
            result "FAIL $(basename "$1") exited with $status: $(grep -m 2 -iE 'error|warning' "$dir/cmd.out" | sed "s|$dir/||g" | tr '\n' ' ' | cut -c1-300)"
        fi
        if grep -qi 'warning' "$dir/cmd.out"; then
            result "FAIL $(basename "$1") warned: $(grep -m 2 -i 'warning' "$dir/cmd.out" | sed "s|$dir/||g" | tr '\n' ' ' | cut -c1-300)"
        fi
    }
    name=$(basename "$spec" .pipe)
    lower_opt=()
    [ "$lower" = default ] || lower_opt=(--lower="$lower")
    # A spec whose bodies test __CUDA_ARCH_FEAT_SM90_ALL (gemm_bf16's wgmma) is generated
    # and compiled for sm_90 as sm_90a, the arch-specific target (its `cluster` too).
    feat() { [ "$1" = sm_90 ] && grep -q __CUDA_ARCH_FEAT_SM90_ALL "$spec" && echo a; }
    gen_archs=
    for a in ${archs//,/ }; do
        gen_archs+=${gen_archs:+,}$a$(feat "$a")
    done
    # The matrix runs specs under lowerings and grids they were not written for: the hints
    # such a lowering ignores and the performance lint of such a grid (array accumulators
    # per tile) are expected, and any other output fails the job.
    gen=("$pipegen" "$spec" "${lower_opt[@]}" --grid="$grid" --arch="$gen_archs" -Wno-hints -Wno-perf)

    # 1. generate
    echo "+ ${gen[*]} -o $dir/$name.cu ..." >>"$log"
    if ! "${gen[@]}" -o "$dir/$name.cu" --emit-test="$dir/test.cu" --emit-bench="$dir/bench.cu" \
            >"$dir/gen.out" 2>&1; then
        cat "$dir/gen.out" >>"$log"
        if grep -qE "$PLAN_REFUSED" "$dir/gen.out"; then
            result "skip $(grep -m 1 -o 'error: .*' "$dir/gen.out" | cut -c8-200)"
        fi
        result "FAIL pipegen: $(head -n 1 "$dir/gen.out" | cut -c1-300)"
    fi
    [ -s "$dir/gen.out" ] && result "FAIL pipegen printed: $(head -n 1 "$dir/gen.out")"
    for f in "$name.cu" "$name.cuh" test.cu bench.cu; do
        [ -s "$dir/$f" ] || result "FAIL pipegen wrote no $f"
    done
    "${gen[@]}" --dump-ir >"$dir/ir" 2>>"$log" || result "FAIL pipegen --dump-ir"
    "$pipegen" "$spec" --dump-ast >"$dir/ast" 2>>"$log" || result "FAIL pipegen --dump-ast"

    # 2. the source, for every architecture at once, keeping each one's PTX (sm_90a's
    # defines __CUDA_ARCH_FEAT_SM90_ALL; sm_80 compiles the bodies' other branch).
    gencode=()
    for a in ${archs//,/ }; do
        gencode+=(-gencode "arch=compute_${a#sm_}$(feat "$a"),code=$a$(feat "$a")")
    done
    inc=(-I"$root/runtime" -I"$dir")
    mkdir -p "$dir/keep"
    # Without the host side (-cubin: the kernels through ptxas, the launcher not compiled)
    # where the job's launcher is compiled in another job, and without ptxas too (-ptx)
    # where nothing the job varies reaches the runtime's inline PTX (see the driver). Those
    # PTX-only jobs optimize at -O1: half of cicc's time, and their PTX still holds and
    # lacks what tests/compile/expect says (at -O0 libcu++'s unused paths stay in it); the
    # goldens' jobs took 203 s against 247 s on 2 cores.
    whole=(-c -o "$dir/$name.o" -Xptxas -v)
    if [[ $checks != *host* ]]; then
        whole=(-cubin -o "$dir/$name.cubin" -Xptxas -v)
        [[ $checks == *ptxas* ]] || whole=(-ptx -Xcicc -O1 -o "$dir/keep/$name.ptx")
    fi
    run "$NVCC" -std=c++17 -Werror all-warnings "${gencode[@]}" "${inc[@]}" "${whole[@]}" \
        "$dir/$name.cu" -keep -keep-dir "$dir/keep"
    # 2b. where ptxas ran: the 16-byte variant's kernels compiled for sm_90 (those aligned
    # arrays run there, and the bench measures) spill nothing but the known spills. A
    # branch added to the runtime's chunk copy once made ptxas spill 24 bytes in hash's
    # under cp.async: 0.99 -> 0.89 of cudaMemcpy (H100).
    spilled=$(awk '/Compiling entry function/ { f = $(NF - 2); t = $NF }
        / bytes spill stores/ && t ~ /sm_9/ && f ~ /ILi16E/ {
            for (i = 1; i < NF; ++i) if ($i == "spill" && $(i + 1) == "stores,") n = $(i - 2)
            if (n + 0 > 0) print f ": " n " bytes"
        }' "$dir/cmd.out" | sort -u)
    if [ -n "$spilled" ] && [[ " $SPILLS_KNOWN " != *" $name:$lower "* ]]; then
        result "FAIL ptxas spills in the 16-byte variant: $(head -n 2 <<<"$spilled" | tr '\n' ' ')"
    fi
    for a in ${archs//,/ }; do
        # (with one -gencode, nvcc names the PTX without the architecture)
        { mv "$dir/keep/$name.compute_${a#sm_}$(feat "$a").ptx" "$dir/$name.$a.ptx" 2>/dev/null \
            || { [ "$archs" = "$a" ] && mv "$dir/keep/$name.ptx" "$dir/$name.$a.ptx"; }; } \
            || result "FAIL nvcc -keep left no PTX for $a"
    done
    rm -rf "$dir/keep" "$dir/$name.o" "$dir/$name.cubin"   # megabytes per job

    # 3. PTX per architecture, against the expectations of the lowering it resolved to
    flags=" $grid spec=$name $NVCC_TRAITS "
    stages=$(grep '^  (stage ' "$dir/ast")
    if [ -n "$stages" ]; then
        grep -q ' cache ca ' <<<"$stages" && flags+="ca "
        grep -vq ' cache ca ' <<<"$stages" && flags+="cg "
    fi
    for n in 64 128 256; do
        grep -q " prefetch $n " <<<"$stages" && flags+="prefetch-$n "
    done
    for w in first last normal unchanged; do
        grep -q " evict $w " <<<"$stages" && flags+="evict evict-$w "
    done
    grep -q '^  (accum ' "$dir/ast" && flags+="accum "
    grep -q '^  (producer_warps [1-9]' "$dir/ast" && flags+="roles "
    grep -q '^  store ' "$dir/ir" && flags+="outputs "
    for a in ${archs//,/ }; do
        mech=$(sed -n "s/^schedule .* mech=\([^ ]*\) $a .*/\1/p" "$dir/ir" | head -n 1)
        [ -n "$mech" ] || result "FAIL no schedule for $a in --dump-ir"
        checked=0
        while read -r l sign text conds; do
            case "$l" in ''|'#'*) continue ;; esac
            [ "$l" = "$mech" ] || [ "$l" = '*' ] || continue
            applies=1
            for c in $conds; do
                if [ "${c#!}" != "$c" ]; then
                    [[ "$flags $a " == *" ${c#!} "* ]] && applies=0
                else
                    [[ "$flags $a " == *" $c "* ]] || applies=0
                fi
            done
            [ $applies = 1 ] || continue
            [ "$l" = '*' ] || checked=$((checked + 1))
            if [ "$sign" = + ] && ! grep -qF -- "$text" "$dir/$name.$a.ptx"; then
                result "FAIL $a PTX of $mech lacks $text"
            elif [ "$sign" = - ] && grep -qF -- "$text" "$dir/$name.$a.ptx"; then
                result "FAIL $a PTX of $mech has $text"
            fi
        done <"$root/tests/compile/expect"
        [ $checked -gt 0 ] || result "FAIL no expectations for lowering $mech in tests/compile/expect"
    done

    # 4. the drivers, 5. the header from C and C++
    if [[ $checks == *drivers* ]]; then
        # The test driver holds no device code, and the bench driver's (the same-shape
        # reference) is the same for every spec: one architecture compiles them, every
        # architecture in saxpy's job (about a second of each of the 44 driver jobs).
        dgencode=("${gencode[@]: -2}")
        [ "$name" = saxpy ] || [ "${COMPILE_FULL:-0}" = 1 ] && dgencode=("${gencode[@]}")
        run "$NVCC" -std=c++17 -Werror all-warnings "${dgencode[@]}" "${inc[@]}" -c "$dir/test.cu" \
            -o "$dir/test.o"
        run "$NVCC" -std=c++17 -Werror all-warnings "${dgencode[@]}" "${inc[@]}" -c "$dir/bench.cu" \
            -o "$dir/bench.o"
        rm -f "$dir/test.o" "$dir/bench.o"
        hinc=(-I"$CUDA_HOME/include" -I"$root/runtime")
        run "${CC:-gcc}" -std=c11 -Wall -Wextra -Werror -fsyntax-only -x c "${hinc[@]}" "$dir/$name.cuh"
        run "${CXX:-g++}" -std=c++17 -Wall -Wextra -Werror -fsyntax-only -x c++ "${hinc[@]}" "$dir/$name.cuh"
    fi
    result ok
fi

# ------------------------------------------------------------------ the driver
. "$(dirname "$0")/../lib.sh"
suite_start compile "PIPEGEN [SPEC.pipe...]" "$@"
self=$root/tests/compile/run.sh

NVCC=${NVCC:-$(command -v nvcc 2>/dev/null || echo /usr/local/cuda/bin/nvcc)}
if [ ! -x "$NVCC" ]; then
    echo "compile: SKIPPED: no nvcc (not on PATH, not at /usr/local/cuda/bin/nvcc; set NVCC=)."
    echo "compile: nothing was compiled and nothing passed"
    suite_end
fi
CUDA_HOME=${CUDA_HOME:-$(cd "$(dirname "$NVCC")/.." && pwd)}
# Below CUDA 13.4 pipert_cp_async.cuh copies without cp.async's L2 cache hints (a ptxas bug)
release=$("$NVCC" --version | grep -m 1 -o 'release [0-9.]*' | cut -d ' ' -f 2)
NVCC_TRAITS=
[ "$(printf '%s\n13.4\n' "$release" | sort -V | head -n 1)" = 13.4 ] && NVCC_TRAITS=cp-async-l2-hints
# The spec:lowering pairs whose 16-byte variant spills for sm_90 today (step 2b; ptxas -v
# of CUDA 13.0, 2026-11-27): hash under sync (12 bytes; 0.999 of cudaMemcpy on the H100
# all the same), softmax4k under cg (4 bytes; not benched), rmsnorm under pipeline-roles
# (24 bytes since its producer warps split the region copy: 0.21 -> 0.73 of cudaMemcpy
# all the same), gemm_bf16 under pipeline-roles (16 bytes since then, sm_90a: the scalar
# path -Wperf warns of, 0.013 of cuBLAS under cp.async.mbarrier) and under
# cp.async.mbarrier (8 bytes since a chunk wholly outside its array is one store of
# zeros; the same scalar path, 168 registers a thread), the golden mixed_types
# under cp.async (28 bytes) and rmsnorm under bulk (16 bytes in the kernel of eight packed
# rows of 1024 a tile, where ptxas keeps 64 registers a thread; not yet measured).
# Compiled for sm_80 they are not checked (no sm_80 GPU measures them): there gemm_bf16's
# scalar path spills 272-430 bytes, saxpy under cp.async persistent 4 and hash under sync 4.
SPILLS_KNOWN="hash:sync softmax4k:cg rmsnorm:pipeline-roles gemm_bf16:pipeline-roles"
SPILLS_KNOWN+=" gemm_bf16:cp.async.mbarrier mixed_types:cp.async rmsnorm:bulk"
export NVCC CUDA_HOME NVCC_TRAITS SPILLS_KNOWN

if [ ${#args[@]} -gt 0 ]; then
    specs=("${args[@]}")
else
    specs=()
    for s in "$root"/samples/*/*.pipe "$root"/tests/golden/*.pipe; do
        [ -e "$s" ] && specs+=("$s")
    done
fi

# The implemented lowerings and the architectures each needs ("all"/"sm_80": both).
lowerings=(default)
declare -A arch_of=([default]=sm_80,sm_90)
while read -r name arch status; do
    [ "$status" = implemented ] || continue
    [ "$name" = auto ] && continue
    lowerings+=("$name")
    [ "$arch" = sm_90 ] && arch_of[$name]=sm_90 || arch_of[$name]=sm_80,sm_90
done < <("$pipegen" --list-lowerings)
if [ -n "${COMPILE_LOWERINGS:-}" ]; then
    chosen=()
    for l in "${lowerings[@]}"; do
        [[ " $COMPILE_LOWERINGS " == *" $l "* ]] && chosen+=("$l")
    done
    lowerings=("${chosen[@]}")
fi

work=$tmp
if [ -n "${COMPILE_KEEP:-}" ]; then
    work=$COMPILE_KEEP
    rm -rf "$work" && mkdir -p "$work" || exit 2
fi

jobs=${COMPILE_JOBS:-2}
echo "compile: $("$NVCC" --version | grep -m 1 -o 'release [0-9.]*'), ${#specs[@]} specs x ${#lowerings[@]} lowerings (${lowerings[*]}) x 2 grids, $jobs jobs"
start=$SECONDS
list=$work/jobs
: >"$list"
ids=()
same=0
# Some lowerings a spec meets are given in turn (in_turn, tests/lib.sh): the golden specs
# and the samples counted apart (ordinals), an explicit lowering by its place after
# `default` in `lowerings`.
ngolden=0 nsample=0
# meets ORDINAL LOWER K: whether spec ORDINAL meets explicit lowering LOWER among K in turn.
meets() {
    local i
    for i in "${!lowerings[@]}"; do
        [ "${lowerings[$i]}" = "$2" ] && break
    done
    in_turn "$1" $((i - 1)) $((${#lowerings[@]} - 1)) "$3"
}
for spec in "${specs[@]}"; do
    spec=$(cd "$(dirname "$spec")" && pwd)/$(basename "$spec")
    name=$(basename "$spec" .pipe)
    # samples/NAME/NAME.pipe -> NAME; tests/golden/NAME.pipe -> golden/NAME (names repeat).
    # A sample's variant (samples/NAME/OTHER.pipe: a feature on the sample's workload)
    # compiles as the golden specs do.
    case $spec in
    "$root"/samples/*) tag=$name golden=0
        [ "$name" = "$(basename "$(dirname "$spec")")" ] || golden=1 ;;
    *) tag=$(basename "$(dirname "$spec")")/$name golden=1 ;;
    esac
    if [ $golden = 1 ]; then
        ord=$ngolden ngolden=$((ngolden + 1))
    else
        ord=$nsample nsample=$((nsample + 1))
    fi
    # The spec's own lowering: when it resolves to one implemented lowering M for every
    # architecture and writes the very source --lower=M writes, the run with M stands for
    # it (the same source is not compiled twice).
    # A spec whose stages take hints (cache, prefetch, evict, swizzle) or that has producer
    # warps picks other inline PTX of the runtime under each lowering (cache-hinted
    # copies, named barriers): its kernels go through ptxas under every lowering.
    asm_hints=0
    "$pipegen" "$spec" --dump-ast 2>/dev/null |
        grep -qE '^  \(stage .* (cache (ca|cg)|prefetch [0-9]|evict [a-z]|swizzle [0-9])|^  \(producer_warps [1-9]' \
        && asm_hints=1
    # A sample with a `steps` loop (sgemm) is the slowest to compile (13-14 s a job, ptxas
    # over three copy widths for two architectures): under the lowerings other than its
    # own, the newest architecture only. Every other sample meets every lowering on every
    # architecture, and sgemm's own lowering compiles its sm_80 kernels.
    steps=0
    [ $golden = 0 ] && "$pipegen" "$spec" --dump-ast 2>/dev/null | grep -q '^  (steps ' && steps=1
    own=default mixed=0 own_grid=
    if [ "${COMPILE_FULL:-0}" != 1 ]; then
        own_grid=$("$pipegen" "$spec" --dump-ir 2>/dev/null | sed -n 's/^schedule .* grid=\([a-z_]*\).*/\1/p' | head -n 1)
        m=$("$pipegen" "$spec" --dump-ir 2>/dev/null | sed -n 's/^schedule .* mech=\([^ ]*\) sm_.*/\1/p' | sort -u)
        [ "$(wc -l <<<"$m")" -gt 1 ] && mixed=1
        if [ -n "$m" ] && [ "$(wc -l <<<"$m")" = 1 ] && [[ " ${lowerings[*]} " == *" $m "* ]] \
           && [ "${arch_of[$m]}" = "${arch_of[default]}" ] \
           && cmp -s <("$pipegen" "$spec" -o - 2>&1) <("$pipegen" "$spec" --lower="$m" -o - 2>&1); then
            own=$m
            same=$((same + 2))
        fi
    fi
    for lower in "${lowerings[@]}"; do
        [ "$lower" = default ] && [ "$own" != default ] && continue
        # A sample's host_stream variant (NAME_host) has its sample's kernel, compiled
        # under every lowering there; its host side does not depend on the lowering.
        [[ $name == *_host ]] && [ "${COMPILE_FULL:-0}" != 1 ] && [ "$lower" != "$own" ] && continue
        # So have the samples that only types and borders set apart, and the golden
        # specs that are a sample's kernels under other launch parameters (tests/lib.sh).
        is_sample_copy "$tag" && [ "${COMPILE_FULL:-0}" != 1 ] && [ "$lower" != "$own" ] \
            && continue
        is_schedule_twin "$name" && [ "${COMPILE_FULL:-0}" != 1 ] && [ "$lower" != "$own" ] \
            && continue
        # A golden spec without inline PTX of its own (asm_hints) meets 2 of the other
        # lowerings, in turn over the goldens: each lowering meets about a fifth of them
        # (what a feature does under every lowering: its golden files, tests/golden).
        [ $golden = 1 ] && [ "$asm_hints" = 0 ] && [ "${COMPILE_FULL:-0}" != 1 ] \
            && [ "$lower" != "$own" ] && [ "$lower" != default ] && ! meets "$ord" "$lower" 2 \
            && continue
        for grid in per_tile persistent; do
            # A twin's own lowering on its own grid only: the other grid is its sibling's.
            is_schedule_twin "$name" && [ "${COMPILE_FULL:-0}" != 1 ] && [ -n "$own_grid" ] \
                && [ $grid != "$own_grid" ] && continue
            # Golden specs (features rather than workloads): every lowering on the
            # persistent grid, their own lowering on both; samples the other way round, so
            # that every lowering meets both grids (with and without accumulators) once.
            every=persistent
            [ $golden = 1 ] || every=per_tile
            if [ "${COMPILE_FULL:-0}" != 1 ] && [ $grid != $every ] && [ "$lower" != "$own" ]; then
                continue
            fi
            # An own lowering that mixes lowerings over the architectures (auto: tensor on
            # sm_90 for a matmul) prints kernels the explicit lowerings compile on both
            # grids: what is its own is the launcher, which one grid compiles.
            if [ "${COMPILE_FULL:-0}" != 1 ] && [ "$lower" = default ] && [ "$mixed" = 1 ] \
               && [ $grid = per_tile ]; then
                continue
            fi
            checks=ptx,host
            if [ "${COMPILE_FULL:-0}" = 1 ] || { [ "$lower" = "$own" ] && [ $grid = persistent ]; } \
               || { is_schedule_twin "$name" && [ "$lower" = "$own" ]; }; then
                checks+=,drivers
            fi
            # A golden spec under another lowering than its own: the newest architecture
            # only and the kernels only (the samples meet every lowering on every
            # architecture, launcher included, and the golden spec's launcher is compiled
            # with its own lowering).
            archs=${arch_of[$lower]}
            if [ "${COMPILE_FULL:-0}" != 1 ] && [ $golden = 1 ] && [ "$lower" != "$own" ]; then
                archs=${archs##*,}
                checks=ptx
                [ "$asm_hints" = 1 ] && checks+=,ptxas
            fi
            [ "${COMPILE_FULL:-0}" != 1 ] && [ $steps = 1 ] && [ "$lower" != "$own" ] \
                && archs=${archs##*,}
            # A sample under another lowering than its own: the older architecture and the
            # launcher too for 4 of the lowerings, in turn over the samples (each lowering's
            # sm_80 code and launcher meet about a third of them; nvcc's front end runs once
            # an architecture and once for the host); the others its sm_90 kernels through
            # ptxas (-cubin: the spill check).
            if [ "${COMPILE_FULL:-0}" != 1 ] && [ $golden = 0 ] && [ "$lower" != "$own" ] \
               && ! meets "$ord" "$lower" 4; then
                archs=${archs##*,}
                checks=ptx,ptxas
            fi
            id=$tag.$lower.$grid
            ids+=("$id")
            printf '%s\0' --job "$pipegen" "$root" "$work/$id" "$spec" "$lower" "$grid" "$checks" \
                "$archs" >>"$list"
        done
    done
done
# Each job is 9 NUL-separated words.
COMPILE_WORK=$work COMPILE_TOTAL=${#ids[@]} xargs -0 -n 9 -P "$jobs" "$self" <"$list"

skipped=0
for id in "${ids[@]}"; do
    res=$(cat "$work/$id/result" 2>/dev/null || echo "FAIL the job left no result")
    # Each job printed its line when it finished; the failures again, with their logs.
    case $res in
    ok)
        case_ok "$id" ;;
    skip*)
        skipped=$((skipped + 1)) ;;
    *)
        case_fail "$id" "${res#FAIL }"
        # The log of the first few failures (COMPILE_KEEP=DIR keeps them all).
        [ $failed -le 4 ] && tail -n 12 "$work/$id/log" 2>/dev/null | cut -c1-240 | sed 's/^/    | /' ;;
    esac
done
# The slowest jobs: where make check's minutes go, for keeping it under 15 on 2 cores.
slowest=$(for id in "${ids[@]}"; do
    echo "$(cat "$work/$id/seconds" 2>/dev/null || echo 0) $id"
done | sort -rn | head -n 5 | awk '{ printf "%s%s %ss", (NR > 1 ? ", " : ""), $2, $1 }')
echo "compile: slowest jobs: $slowest"
echo "compile: ${#ids[@]} jobs, $skipped skipped (a lowering that does not handle the spec yet), $same runs with the spec's own lowering identical to an explicit one, $((SECONDS - start))s"
suite_end
