#!/usr/bin/env bash
# Valgrind: the (non-sanitized) pipegen must run memcheck-clean (no invalid access, no use
# of uninitialised values, no definite or indirect leak) on
#   - every samples/*/*.pipe, generating everything (-o, --emit-test, --emit-bench, -MD)
#     with the spec's own lowering and with 3 of the other implemented ones, in turn over
#     the samples (each lowering meets about a fourth of them; the ASan build generates
#     every sample under every lowering in make golden),
#   - every sample with --verify, --dump-ir and --dump-ast,
#   - a spread of the error corpus (tests/errors: every 8th lexical/syntax case and every
#     6th semantic one), which must still exit 1.
# A run passes when valgrind finds nothing (its exit code 99 says it did) and pipegen's
# own status is the expected one. One line per run; the last line is
# `valgrind: N passed, M failed`.
#
# usage: tests/valgrind.sh PIPEGEN [PATTERN...]
#   PATTERN...        only the runs whose name matches one of these shell patterns
#                     ('saxpy.*', 'errors/*', '*.dump-ir')
#   VALGRIND_JOBS=2   parallel runs
set -u

# ------------------------------------------------------------------ one run (a worker)
if [ "${1:-}" = --job ]; then
    # --job DIR EXPECTED_STATUS PIPEGEN ARGS...
    dir=$2 want=$3
    shift 3
    mkdir -p "$dir"
    cd "$dir" || exit 0
    valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite,indirect \
        --track-origins=yes --log-file=valgrind.log "$@" >stdout 2>stderr
    status=$?
    if [ -s valgrind.log ] || [ $status -eq 99 ]; then
        echo "FAIL valgrind: $(grep -m 1 -E '== [A-Z]|definitely|indirectly|Invalid|uninitialised' valgrind.log | sed 's/^==[0-9]*== //')" >result
    elif [ $status -ne "$want" ]; then
        echo "FAIL exit status $status, expected $want: $(head -n 1 stderr | cut -c1-200)" >result
    else
        echo ok >result
    fi
    exit 0
fi

# ------------------------------------------------------------------ the driver
. "$(dirname "$0")/lib.sh"
suite_start valgrind "PIPEGEN [PATTERN...]" "$@"
if ! command -v valgrind >/dev/null 2>&1; then
    echo "valgrind: SKIPPED: valgrind is not installed (apt-get install valgrind)"
    suite_end
fi
if ldd "$pipegen" 2>/dev/null | grep -q libasan; then
    echo "valgrind: '$pipegen' is an ASan build; valgrind needs the plain one (build/pipegen)" >&2
    exit 2
fi
self=$root/tests/valgrind.sh
work=$tmp

lowerings=()
declare -A arch_of=()
while read -r name arch status; do
    [ "$status" = implemented ] && [ "$name" != auto ] && lowerings+=("$name")
    [ "$arch" = sm_90 ] && arch_of[$name]=sm_90 || arch_of[$name]=sm_80,sm_90
done < <("$pipegen" --list-lowerings)

mkdir -p "$work/jobs"
ids=()
add() {   # add ID EXPECTED_STATUS ARGS...: one run, its words in jobs/N (NUL-separated)
    local id=$1 p match=${#args[@]}
    shift
    for p in "${args[@]}"; do
        [[ $id == $p ]] && match=0
    done
    [ "$match" = 0 ] || return 0
    ids+=("$id")
    printf '%s\0' --job "$work/$id" "$@" >"$work/jobs/${#ids[@]}"
}
nth=0
for spec in "$root"/samples/*/*.pipe; do
    name=$(basename "$spec" .pipe)
    add "$name.generate" 0 "$pipegen" "$spec" -o "$name.cu" --emit-test=test.cu \
        --emit-bench=bench.cu -MD
    for k in "${!lowerings[@]}"; do
        m=${lowerings[$k]}
        is_schedule_twin "$name" && break   # tests/lib.sh
        in_turn "$nth" "$k" "${#lowerings[@]}" 3 || continue
        # A lowering that refuses the spec (sgemm_roles' producer warps under a lowering
        # without them) exits 1 with its diagnostic: that path runs under valgrind too.
        want=0
        "$pipegen" "$spec" --lower="$m" --arch="${arch_of[$m]}" --verify >/dev/null 2>&1 || want=1
        add "$name.generate.$m" $want "$pipegen" "$spec" --lower="$m" --arch="${arch_of[$m]}" \
            -o "$name.cu" --emit-test=test.cu --emit-bench=bench.cu
    done
    nth=$((nth + 1))
    add "$name.verify" 0 "$pipegen" "$spec" --verify
    add "$name.dump-ir" 0 "$pipegen" "$spec" --dump-ir
    add "$name.dump-ast" 0 "$pipegen" "$spec" --dump-ast
done
errors=$(ls "$root"/tests/errors/0*.pipe 2>/dev/null | awk 'NR % 8 == 1')
errors+=" "$(ls "$root"/tests/errors/[1-9]*.pipe 2>/dev/null | awk 'NR % 6 == 1')
for spec in $errors; do
    read_flags "${spec%.pipe}.flags"   # the options its refusal needs (tests/errors/run.sh)
    add "errors/$(basename "$spec" .pipe)" 1 "$pipegen" "${flags[@]}" "$spec" -o out.cu
done

start=$SECONDS
for ((i = 1; i <= ${#ids[@]}; ++i)); do
    xargs -0 -a "$work/jobs/$i" "$self" &
    while [ "$(jobs -rp | wc -l)" -ge "${VALGRIND_JOBS:-2}" ]; do
        wait -n
    done
done
wait

for id in "${ids[@]}"; do
    res=$(cat "$work/$id/result" 2>/dev/null || echo "FAIL the run left no result")
    if [ "$res" = ok ]; then
        case_ok "$id"
    else
        case_fail "$id" "${res#FAIL }"
        sed 's/^/    | /' "$work/$id/valgrind.log" 2>/dev/null | head -n 30
    fi
done
echo "valgrind: ${#ids[@]} runs in $((SECONDS - start))s"
suite_end
