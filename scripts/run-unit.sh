#!/usr/bin/env bash
# Run Check unit-test binaries and summarize them.
#
# usage: scripts/run-unit.sh BIN...
#
# Each binary runs under a timeout; its output is parsed for Check's summary line
#   NN%: Checks: X, Failures: Y, Errors: Z
# One line per binary is printed (ok / FAIL with the counts); a failing or crashing binary
# also shows its failure lines. The last line is `unit: N passed, M failed`, counting
# binaries. Exit status: non-zero when any binary failed, crashed (no summary line, or a
# non-zero exit status with a clean summary), or timed out.
#   UNIT_TIMEOUT=120   seconds per binary
#   UNIT_VERBOSE=1     print every binary's whole output
set -u

if [ $# -lt 1 ]; then
    echo "usage: $0 BIN..." >&2
    exit 2
fi

limit=${UNIT_TIMEOUT:-120}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/pg-unit.XXXXXX") || exit 2
trap 'rm -rf "$tmp"' EXIT

# A sanitizer report must never look like success.
export ASAN_OPTIONS=${ASAN_OPTIONS:-exitcode=86:detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:exitcode=87:print_stacktrace=1}

passed=0
failed=0
total_checks=0
for bin in "$@"; do
    name=$(basename "$bin")
    if [ ! -x "$bin" ]; then
        echo "FAIL $name: not an executable ($bin)"
        failed=$((failed + 1))
        continue
    fi
    timeout "$limit" "$bin" >"$tmp/out" 2>&1
    status=$?
    [ "${UNIT_VERBOSE:-0}" = 1 ] && cat "$tmp/out"
    summary=$(grep -E '^[0-9]+%: Checks: [0-9]+, Failures: [0-9]+, Errors: [0-9]+' "$tmp/out" | tail -n 1)
    checks=0 failures=0 errors=0
    if [ -n "$summary" ]; then
        checks=$(sed -E 's/.*Checks: ([0-9]+).*/\1/' <<<"$summary")
        failures=$(sed -E 's/.*Failures: ([0-9]+).*/\1/' <<<"$summary")
        errors=$(sed -E 's/.*Errors: ([0-9]+).*/\1/' <<<"$summary")
    fi
    total_checks=$((total_checks + checks))
    problem=""
    if [ $status -eq 124 ] || [ $status -eq 137 ]; then
        problem="timed out after ${limit}s"
    elif [ -z "$summary" ]; then
        problem="crashed (exit status $status, no Check summary)"
    elif [ "$failures" -ne 0 ] || [ "$errors" -ne 0 ]; then
        problem="$checks checks, $failures failures, $errors errors"
    elif [ $status -ne 0 ]; then
        problem="exit status $status after a clean summary ($checks checks): sanitizer or leak?"
    elif [ "$checks" -eq 0 ]; then
        problem="no checks ran"
    fi
    if [ -z "$problem" ]; then
        printf 'ok   %-24s %4d checks\n' "$name" "$checks"
        passed=$((passed + 1))
    else
        echo "FAIL $name: $problem"
        # Check's failure lines (file:line:F|E:tcase:test:...) and sanitizer reports.
        grep -E ':[FE]:|ERROR: |runtime error:|SUMMARY:' "$tmp/out" | head -n 40 | sed 's/^/    /'
        [ -z "$summary" ] && tail -n 20 "$tmp/out" | sed 's/^/    | /'
        failed=$((failed + 1))
    fi
done

echo "unit: $total_checks checks in $((passed + failed)) binaries"
echo "unit: $passed passed, $failed failed"
[ $failed -eq 0 ]
