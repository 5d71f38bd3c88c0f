#!/usr/bin/env bash
# The runtime suite: libpipert's CPU-side logic (tests/runtime/test_pipert.c), built under
# ASan/UBSan against a fake CUDA runtime (tests/runtime/fake_cudart.c) instead of libcudart.
#
# usage: tests/runtime/run.sh BIN
# Runs the Check binary through scripts/run-unit.sh (its timeout, sanitizer options and
# failure report); the last line is `runtime: N passed, M failed`, counting Check tests.
set -u
set -o pipefail
if [ $# -ne 1 ]; then
    echo "usage: $0 BIN" >&2
    exit 2
fi
root=$(cd "$(dirname "$0")/../.." && pwd)
out=$("$root/scripts/run-unit.sh" "$1" 2>&1)
status=$?
# run-unit.sh counts binaries; this suite counts the tests of its one binary.
grep -v '^unit: ' <<<"$out"
tests=0 failures=0
summary=$(grep -E '^[0-9]+%: Checks: [0-9]+, Failures: [0-9]+, Errors: [0-9]+' <<<"$out" | tail -n 1)
if [ -z "$summary" ]; then
    # run-unit.sh prints the binary's output only on failure: ask the binary directly.
    summary=$(ASAN_OPTIONS=${ASAN_OPTIONS:-exitcode=86:detect_leaks=1} \
        UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:exitcode=87:print_stacktrace=1} \
        CK_VERBOSITY=normal timeout 120 "$1" 2>&1 \
        | grep -E '^[0-9]+%: Checks: [0-9]+, Failures: [0-9]+, Errors: [0-9]+' | tail -n 1)
fi
if [ -n "$summary" ]; then
    tests=$(sed -E 's/.*Checks: ([0-9]+).*/\1/' <<<"$summary")
    failures=$(( $(sed -E 's/.*Failures: ([0-9]+).*/\1/' <<<"$summary") \
                 + $(sed -E 's/.*Errors: ([0-9]+).*/\1/' <<<"$summary") ))
fi
if [ $status -ne 0 ] && [ "$failures" -eq 0 ]; then
    failures=1         # crashed, timed out or leaked: not a pass
fi
echo "runtime: $((tests - failures < 0 ? 0 : tests - failures)) passed, $failures failed"
[ $status -eq 0 ]
