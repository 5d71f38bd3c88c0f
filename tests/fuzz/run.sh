#!/usr/bin/env bash
# Deterministic mutation fuzzing of pipegen (meant for the ASan/UBSan build).
#
# Seeds: samples/*/*.pipe, tests/fuzz/seeds/*.pipe and tests/kernels/*.pipe (FUZZ_RICH
# mutants each, default 200; a sample's variant half as many) and tests/errors/*.pipe
# (FUZZ_PER_ERROR each, default 12: an error case's mutants mostly meet the error paths
# its neighbours' do). mutate.c makes the mutants (the same ones on every run). Each is
# compiled with `PIPEGEN MUTANT -o x.cu` under a timeout; a run fails when the exit
# status is not 0 or 1 (crash, hang, sanitizer abort) or when stderr shows anything from
# a sanitizer. Failing inputs are kept in FUZZ_KEEP (default /tmp/pipegen-fuzz-failures)
# for replay.
#
# usage: tests/fuzz/run.sh PIPEGEN
#   FUZZ_JOBS=2  parallel workers        FUZZ_TIMEOUT=10  seconds per run
set -u

. "$(dirname "$0")/../lib.sh"
suite_start fuzz PIPEGEN "$@"
here=$root/tests/fuzz
rich=${FUZZ_RICH:-200}
per_error=${FUZZ_PER_ERROR:-12}
jobs=${FUZZ_JOBS:-2}
limit=${FUZZ_TIMEOUT:-10}
keep=${FUZZ_KEEP:-/tmp/pipegen-fuzz-failures}

mkdir -p "$tmp/mutants"

${CC:-cc} -O2 -std=c11 -Wall -Wextra -Werror -o "$tmp/mutate" "$here/mutate.c" || exit 2

shopt -s nullglob
n=0
make_mutants() {   # SEED COUNT
    n=$((n + 1))
    cp "$1" "$tmp/mutants/seed$n.pipe"
    "$tmp/mutate" "$1" "$tmp/mutants" "m$n" "$2" || {
        echo "fuzz: mutate failed on $1" >&2
        exit 2
    }
    printf '%s\tm%d\n' "$1" "$n" >>"$tmp/seeds.tsv"
}
# A sample's variant (samples/NAME/OTHER.pipe: softmax4k, blur_mirror, ...) differs from
# NAME in a few items: half as many of its mutants. tests/kernels (3D stencils with
# halos, a GEMV, conversions) are seeds of their own.
for seed in "$root"/samples/*/*.pipe "$here"/seeds/*.pipe "$root"/tests/kernels/*.pipe; do
    case $(basename "$(dirname "$seed")") in
    seeds | kernels | "$(basename "$seed" .pipe)") make_mutants "$seed" "$rich" ;;
    *) make_mutants "$seed" $((rich / 2)) ;;
    esac
done
for seed in "$root"/tests/errors/*.pipe; do
    make_mutants "$seed" "$per_error"
done

# One worker: run every input of its list, print one line per failure.
worker() {   # LIST DIR
    local f status
    mkdir -p "$2"
    while IFS= read -r f; do
        timeout "$limit" "$pipegen" "$f" -o "$2/x.cu" >/dev/null 2>"$2/stderr"
        status=$?
        if [ $status -ne 0 ] && [ $status -ne 1 ]; then
            echo "$f: exit status $status"
        elif grep -qE 'Sanitizer|runtime error|SUMMARY:|stack-overflow|Segmentation|Aborted' \
                "$2/stderr"; then
            echo "$f: sanitizer report"
        fi
    done <"$1"
}

find "$tmp/mutants" -name '*.pipe' | sort >"$tmp/all"
total=$(wc -l <"$tmp/all")
split -n "r/$jobs" "$tmp/all" "$tmp/list."
pids=()
for list in "$tmp"/list.*; do
    worker "$list" "$list.d" >"$list.fail" &
    pids+=($!)
done
wait "${pids[@]}"

cat "$tmp"/list.*.fail >"$tmp/failures"
failed=$(wc -l <"$tmp/failures")
if [ "$failed" -gt 0 ]; then
    mkdir -p "$keep"
    while IFS= read -r line; do
        f=${line%%: *}
        cp "$f" "$keep/"
        echo "FAIL $keep/$(basename "$f")${line#"$f"}"
    done <"$tmp/failures"
    cp "$tmp/seeds.tsv" "$keep/seeds.tsv"
    echo "fuzz: failing inputs kept in $keep (seeds.tsv maps mN- prefixes to seeds)"
fi
passed=$((total - failed))
suite_end
