# What the shell suites share (sourced by tests/*/run.sh, tests/valgrind.sh,
# scripts/run-unit.sh and tests/gpu/*.sh): the start of a suite (its arguments, the
# pipegen under test, a scratch directory, the sanitizer settings), the counting of its
# cases and its last line `NAME: N passed, M failed` (CI greps it), and the driver of the
# suites whose cases are functions c_NAME (tests/cli, tests/build).

# suite_start NAME USAGE ARGS...
#   NAME   the suite: its messages and its last line start with it
#   USAGE  its arguments as its usage message shows them ("PIPEGEN [CASE...]"): each plain
#          word is one argument; a word in brackets takes any number, a word ending in
#          "..." one or more
#   ARGS   the script's arguments
# Sets suite, root (the repository), tmp (a fresh directory, removed on exit), pipegen
# (where USAGE starts with PIPEGEN: the first argument made absolute; it must be an
# executable), args (the arguments after those), passed=0 and failed=0. Exports
# ASAN_OPTIONS and UBSAN_OPTIONS (unless set): a sanitizer's report never looks like
# success, whatever exit status the suite expects.
suite_start() {
    suite=$1
    local usage=$2 word min=0 more=0
    shift 2
    for word in $usage; do
        case $word in
        '['*) more=1 ;;
        *...) min=$((min + 1)) more=1 ;;
        *) min=$((min + 1)) ;;
        esac
    done
    if [ $# -lt $min ] || { [ $more = 0 ] && [ $# -gt $min ]; }; then
        echo "usage: $0 $usage" >&2
        exit 2
    fi
    if [ "${usage%% *}" = PIPEGEN ]; then
        pipegen=$1
        shift
        case $pipegen in /*) ;; *) pipegen=$PWD/$pipegen ;; esac
        if [ ! -x "$pipegen" ]; then
            echo "$suite: '$pipegen' is not an executable" >&2
            exit 2
        fi
    fi
    args=("$@")
    root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd) || exit 2
    tmp=$(mktemp -d "${TMPDIR:-/tmp}/pg-$suite.XXXXXX") || exit 2
    # (a case may leave a read-only directory behind)
    trap 'chmod -R u+w "$tmp" 2>/dev/null; rm -rf "$tmp"' EXIT
    export ASAN_OPTIONS=${ASAN_OPTIONS:-exitcode=86:detect_leaks=1}
    export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:exitcode=87:print_stacktrace=1}
    passed=0
    failed=0
}

# case_ok [TEXT...]: one more passed case, printed as "ok   TEXT" (nothing without TEXT).
case_ok() {
    [ $# -eq 0 ] || echo "ok   $*"
    passed=$((passed + 1))
}

# case_fail NAME TEXT: one more failed case, printed as "FAIL NAME: TEXT".
case_fail() {
    echo "FAIL $1: $2"
    failed=$((failed + 1))
}

# joined PROBLEM...: the problems of a case on one line, separated by ';'.
joined() {
    local IFS=';'
    echo "$*"
}

# suite_end: the suite's last line, `NAME: N passed, M failed`; exits 0 when none failed.
suite_end() {
    echo "$suite: $passed passed, $failed failed"
    [ "$failed" -eq 0 ]
    exit
}

# ------------------------------------------------------------------ cases c_NAME

# The cases of script $1 (functions c_NAME) in the order written there, or the names given
# after it.
cases_of() {
    local script=$1
    shift
    if [ $# -gt 0 ]; then echo "$*"; return; fi
    local c
    for c in $(declare -F | awk '{print $3}' | grep '^c_' | sed 's/^c_//'); do
        printf '%s %s\n' "$(grep -n "^c_$c()" "$script" | cut -d: -f1)" "$c"
    done | sort -n | awk '{print $2}'
}

# A case notes each problem it finds with `fail TEXT`; a case without problems passes.
problems=()
fail() { problems+=("$*"); }

# One case's line from its problems ($2, one a line; empty for none), counted.
report_case() {
    if [ -z "$2" ]; then
        case_ok "$1"
    else
        case_fail "$1" "$(head -n 1 <<<"$2")"
        tail -n +2 <<<"$2" | head -n 10 | sed 's/^/     /'
    fi
}

# run_cases NAME...: each case c_NAME in a subshell, in a fresh directory $case_dir (where
# the suite's function case_setup, if it has one, first puts its fixtures), reported by
# report_case. A case named in the suite's associative array `known` (a reported bug, with
# the reason) is a known failure: "xfail" while it fails, counted in xfailed and not as a
# failure; "XPASS", a failure, once it passes (take it off the list).
declare -A known=()
xfailed=0
run_cases() {
    local c msgs
    for c in "$@"; do
        if ! declare -F "c_$c" >/dev/null; then
            case_fail "$c" "no case c_$c in $0"
            continue
        fi
        case_dir=$(mktemp -d "$tmp/$c.XXXX")
        if declare -F case_setup >/dev/null; then case_setup; fi
        (cd "$case_dir" && problems=() && { "c_$c"; printf '%s\n' "${problems[@]}"; }) \
            >"$tmp/$c.result" 2>&1
        msgs=$(grep -v '^$' "$tmp/$c.result")
        if [ -n "${known[$c]:-}" ]; then
            if [ -n "$msgs" ]; then
                echo "xfail $c: ${known[$c]}"
                echo "      got: $(head -n 1 <<<"$msgs" | cut -c1-200)"
                xfailed=$((xfailed + 1))
            else
                echo "XPASS $c: fixed? take it off the known failures in $0"
                failed=$((failed + 1))
            fi
        else
            report_case "$c" "$msgs"
        fi
    done
}

# The samples that only element types, halo borders, array accumulators and row
# reductions set apart from the others' schedules (hash, rgba, blur, histogram, colsum,
# colstats, softmax and its row lengths (softmax_rows: a bounded one, whose packs the
# launcher picks), layernorm, rmsnorm, rowmax and their variants):
# their rings are the others', so the schedule suite (mutation) leaves them out and the
# per-lowering passes of compile and valgrind take them with their own lowering only; the golden specs int_types,
# vector_types, halo_borders and accum_arrays and the variant rowstats compile what they
# add under the lowerings the compile suite gives them in turn (in_turn), and the GPU
# matrix runs them under several. The golden spec
# tile_bound too: what a bounded tile adds is the launcher's, which no lowering changes.
is_schedule_twin() {
    [[ " hash rgba rgba_int blur blur_mirror histogram histogram_uchar4 colsum colstats softmax softmax4k softmax8k softmax_rows layernorm rmsnorm rowmax tile_bound " == *" $1 "* ]]
}

# Golden specs whose kernels are a sample's under other launch parameters (threads, tile,
# grid, ring depth, a stage's `using`): saxpy_sync and saxpy_cp_async are saxpy's,
# reduce_sum the sample reduce_sum's with 3 slots for 4, which the compile suite runs
# under every lowering on both grids; they compile with their own lowering.
is_sample_copy() {
    [[ " golden/saxpy_sync golden/saxpy_cp_async golden/reduce_sum " == *" $1 "* ]]
}

# read_flags FILE: flags=() the words of a case's FILE.flags (one line; '#' starts a
# comment), or none where there is no such file (tests/errors, tests/golden).
read_flags() {
    flags=()
    if [ -f "$1" ]; then
        read -r -a flags < <(sed -e 's/#.*//' "$1" | tr '\n' ' ')
    fi
}

# The errors with which pipegen refuses to plan a spec under a lowering, grid or
# --producer-warps it was not written for: a feature the lowering lacks, producer warps
# it does not plan, bodies written for the compute threads the spec declares, a block-wide
# barrier in a body under producer warps. The suites that run every spec under every
# lowering (compile, mutation) skip such a plan.
PLAN_REFUSED='not implemented yet|not by the [^ ]+ lowering|they would compute something else|the block can hang'

# in_turn ORDINAL INDEX N K: whether item INDEX (0 .. N-1: a lowering) is among the K
# that the spec of ORDINAL gets of N, given in turn (spec o the items o .. o + K - 1,
# cyclically): each item meets about K/N of the specs, and each spec other K. The
# compile suite and valgrind take a spec under some of the lowerings so, not all.
in_turn() {
    [ "$3" -gt 0 ] && [ $(( ($2 - $1 % $3 + $3) % $3 )) -lt "$4" ]
}
