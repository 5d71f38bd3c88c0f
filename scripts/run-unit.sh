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

. "$(dirname "$0")/../tests/lib.sh"
suite_start unit "BIN..." "$@"
limit=${UNIT_TIMEOUT:-120}
total_checks=0
for bin in "${args[@]}"; do
    name=$(basename "$bin")
    if [ ! -x "$bin" ]; then
        case_fail "$name" "not an executable ($bin)"
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
        case_ok "$(printf '%-24s %4d checks' "$name" "$checks")"
    else
        case_fail "$name" "$problem"
        # Check's failure lines (file:line:F|E:tcase:test:...) and sanitizer reports.
        grep -E ':[FE]:|ERROR: |runtime error:|SUMMARY:' "$tmp/out" | head -n 40 | sed 's/^/    /'
        [ -z "$summary" ] && tail -n 20 "$tmp/out" | sed 's/^/    | /'
    fi
done

echo "unit: $total_checks checks in $((passed + failed)) binaries"
suite_end
