#!/usr/bin/env bash
# A/B of trees on one GPU: bench lines measured with each tree's own pipegen, runtime and
# drivers, in turns on the same GPU, so that a row that looks lower than an earlier report
# is re-measured beside the tree that report was made with (the ratio to cudaMemcpy, the
# same-shape reference or cuBLAS moves a few percent between machines and processes; in
# turns on one GPU it does not).
#
#   tests/gpu/ab.sh prepare REV...
#       Here, with flex and bison (no GPU): each REV's tree, its pipegen and libpipert.a
#       built, in build/ab/REV (a git worktree; make). Carry build/ab to the GPU machine.
#   tests/gpu/ab.sh run ROUNDS LINE... -- TREE...
#       On the GPU: each LINE (a tests/gpu/matrix line, "SAMPLE LOWERING GRID [FLAGS]", as
#       one argument) built with each TREE's pipegen, runtime and drivers (TREE: a REV
#       prepared above, or `.` for this tree's build/), then ROUNDS rounds, each running
#       every TREE's driver once in turn. Prints each run's ratios (the bench driver's
#       ratio= and ratio_sameshape=, the GEMM driver's ratio= at 4096^3 and 8192^3), then
#       each TREE's median. Work in build/ab/run. Without a GPU it says so and exits 0
#       (PIPEGEN_SKIP_STATUS: that status instead).
#   tests/gpu/ab.sh turns ROUNDS LINE...
#       On the GPU, with this tree: the LINEs built, then ROUNDS rounds, each running every
#       LINE's driver once in turn, and each LINE's median; for lines of one spec at the
#       same sizes (auto with its wisdom against the spec's best lowering: the flag
#       `wisdom` reads BENCH_WISDOM, as in make bench). Work in build/ab/turns.
set -u
. "$(dirname "$0")/lib.sh"
AB=$ROOT/build/ab

usage() {
    echo "usage: $0 prepare REV... | $0 run ROUNDS LINE... -- TREE... | $0 turns ROUNDS LINE..." >&2
    exit 2
}

ab_prepare() {
    local rev dir
    for rev; do
        git -C "$ROOT" rev-parse --verify -q "$rev^{commit}" >/dev/null ||
            { echo "ab: '$rev' is not a commit of this repository" >&2; exit 2; }
    done
    for rev; do
        dir=$AB/$rev
        rm -rf "$dir"
        git -C "$ROOT" worktree prune
        git -C "$ROOT" worktree add -q --detach "$dir" "$rev" &&
            make -C "$dir" -s build/pipegen build/libpipert.a >"$AB/$rev.log" 2>&1 ||
            { echo "ab: $rev: the build failed ($AB/$rev.log)" >&2; exit 1; }
        echo "ab: $rev in $dir"
    done
}

# tree_root TREE: the root its specs, runtime and build/ are found under; tree_tag TREE:
# its name in a work directory's.
tree_root() { if [ "$1" = . ]; then echo "$ROOT"; else echo "$AB/$1"; fi; }
tree_tag() { if [ "$1" = . ]; then echo work; else echo "${1//\//_}"; fi; }

# ab_build I TREE LINE: LINE's driver (bench, or ref for a GEMM) built with TREE's pipegen
# and runtime (build_case under TREE's root) into $W/I.TAG.
ab_build() {
    local i=$1 tree=$2 driver=bench
    set -- $3
    is_gemm "$1" && driver=ref
    (ROOT=$(tree_root "$tree") PG=$(tree_root "$tree")/build/pipegen
     build_case $driver "$1" "$2" "$3" "$W/$i.$(tree_tag "$tree")" "${@:4}") ||
        echo "ab: line $i with $tree: the build failed ($W/$i.$(tree_tag "$tree")/build.log)"
}

# ab_ratios FILE: the ratios a driver printed, space-separated.
ab_ratios() {
    grep -E '^BENCH |GEMM' "$1" | grep -oE '(ratio|ratio_sameshape)=[0-9.]+' | tr '\n' ' '
}

# ab_once I TREE LINE R: round R of line I with TREE's driver (a bench, else a GEMM's ref;
# none where its build failed), its ratios appended to $W/runs.txt.
ab_once() {
    local dir=$W/$1.$(tree_tag "$2") drv
    drv=$dir/bench
    [ -x "$drv" ] || drv=$dir/ref
    [ -x "$drv" ] || return 0
    set -- "$@" $3
    if is_gemm "$5"; then "$drv" $GEMM_SIZES; else "$drv" $(case_sizes "${@:5}"); fi >"$dir/out.$4" 2>&1
    echo "$3 | $2 | round $4: $(ab_ratios "$dir/out.$4")" | tee -a "$W/runs.txt"
}

# ab_medians LINE TREE: the median of each ratio over TREE's rounds of LINE (runs.txt).
ab_medians() {
    local runs first kv f=1 out=
    runs=$(grep -F "$1 | $2 | round" "$W/runs.txt" | sed 's/.*: //')
    first=$(head -n 1 <<<"$runs")
    for kv in $first; do
        out+=" ${kv%%=*}=$(awk -v f=$f '{ split($f, kv, "="); print kv[2] }' <<<"$runs" | sort -n |
            awk '{ v[NR] = $1 } END { print NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }')"
        f=$((f + 1))
    done
    echo "$1 | $2 | median:$out"
}

ab_run() {
    local rounds=$1 lines=() trees=() i t r
    shift
    while [ $# -gt 0 ] && [ "$1" != -- ]; do lines+=("$1"); shift; done
    [ $# -gt 1 ] && [ ${#lines[@]} -gt 0 ] && [[ $rounds =~ ^[1-9][0-9]*$ ]] || usage
    shift
    trees=("$@")
    for t in "${trees[@]}"; do
        [ -x "$(tree_root "$t")/build/pipegen" ] ||
            { echo "ab: no $(tree_root "$t")/build/pipegen (tests/gpu/ab.sh prepare $t)" >&2; exit 2; }
    done
    gpu_start ab "nothing was measured" "$(tree_root "${trees[0]}")/build/pipegen"
    W=$AB/run
    rm -rf "$W"; mkdir -p "$W"
    for i in "${!lines[@]}"; do
        for t in "${trees[@]}"; do ab_build "$i" "$t" "${lines[$i]}" & done
    done
    wait
    echo "ab on $GPU ($ARCH), $rounds round(s)"
    for i in "${!lines[@]}"; do
        for ((r = 1; r <= rounds; ++r)); do
            for t in "${trees[@]}"; do ab_once "$i" "$t" "${lines[$i]}" "$r"; done
        done
        for t in "${trees[@]}"; do ab_medians "${lines[$i]}" "$t"; done
    done
}

# ab_turns ROUNDS LINE...: the lines in turns, this tree's build.
ab_turns() {
    local rounds=$1 lines=() i r
    shift
    lines=("$@")
    [ ${#lines[@]} -gt 0 ] && [[ $rounds =~ ^[1-9][0-9]*$ ]] || usage
    gpu_start ab "nothing was measured" "$ROOT/build/pipegen"
    if [ -n "${BENCH_WISDOM:-}" ]; then BENCH_WISDOM=$(realpath "$BENCH_WISDOM"); export BENCH_WISDOM; fi
    W=$AB/turns
    rm -rf "$W"; mkdir -p "$W"
    for i in "${!lines[@]}"; do ab_build "$i" . "${lines[$i]}" & done
    wait
    echo "ab turns on $GPU ($ARCH), $rounds round(s)"
    for ((r = 1; r <= rounds; ++r)); do
        for i in "${!lines[@]}"; do ab_once "$i" . "${lines[$i]}" "$r"; done
    done
    for i in "${!lines[@]}"; do ab_medians "${lines[$i]}" .; done
}

case ${1:-} in
turns) shift; [ $# -gt 0 ] || usage; ab_turns "$@" ;;
prepare) shift; [ $# -gt 0 ] || usage; mkdir -p "$AB"; ab_prepare "$@" ;;
run) shift; [ $# -gt 0 ] || usage; ab_run "$@" ;;
*) usage ;;
esac
