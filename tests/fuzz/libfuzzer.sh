#!/usr/bin/env bash
# Coverage-guided fuzzing of the compiler in memory with libFuzzer (tests/fuzz/libfuzzer.c:
# parse, sema with command-line overrides taken from the input's first bytes, plan, verify,
# host plan and its verifier, every emitter; ASan and UBSan). `make fuzz-lib` runs it for
# FUZZ_TIME seconds in make check, `make fuzz-long` for hours.
#
# Seeds: samples/*/*.pipe, tests/golden/*.pipe and tests/fuzz/seeds/*.pipe, each under the
# spec's own command line and under every lowering, and tests/errors/*.pipe (the harness's
# 6-byte command-line header in front of each). New inputs go to FUZZ_CORPUS (kept for the
# next run; default a temporary directory). A crash, sanitizer report, leak, timeout or
# out-of-memory stops the run and fails the suite; the input is kept in FUZZ_KEEP (default
# /tmp/pipegen-libfuzzer) for replay: `BINARY FILE` runs it again, and the spec is that
# file less its first 6 bytes. Without clang and its fuzzer runtime the suite says SKIPPED
# and how to install them, and passes.
#
# usage: tests/fuzz/libfuzzer.sh BINARY        (the harness; built here with make)
#   FUZZ_TIME=15      seconds of fuzzing       FUZZ_SEED=N    libFuzzer's seed (default random)
#   FUZZ_CORPUS=DIR   the corpus to grow       FUZZ_KEEP=DIR  where findings are kept
#   FUZZ_CC=clang     the compiler
# The last line is `fuzz-lib: N passed, M failed`, N the inputs run, M the findings (0 or 1).
set -u

if [ $# -ne 1 ]; then
    echo "usage: $0 BINARY" >&2
    exit 2
fi
bin=$1
root=$(cd "$(dirname "$0")/../.." && pwd)
case $bin in /*) ;; *) bin=$root/$bin ;; esac
cc=${FUZZ_CC:-clang}
time_s=${FUZZ_TIME:-15}
keep=${FUZZ_KEEP:-/tmp/pipegen-libfuzzer}
install_cmd="apt-get install -y clang libclang-rt-dev"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/pg-libfuzzer.XXXXXX") || exit 2
trap 'rm -rf "$tmp"' EXIT

skip() {
    echo "fuzz-lib: SKIPPED: $1; install it with: $install_cmd (as root), then make fuzz-lib"
    exit 0
}
command -v "$cc" >/dev/null 2>&1 || skip "no $cc"
printf '%s\n' '#include <stddef.h>' '#include <stdint.h>' \
    'int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n) { (void)d; (void)n; return 0; }' \
    >"$tmp/probe.c"
"$cc" -fsanitize=fuzzer,address,undefined -o "$tmp/probe" "$tmp/probe.c" >"$tmp/probe.log" 2>&1 \
    || skip "$cc cannot link -fsanitize=fuzzer,address,undefined ($(grep -m 1 -i error "$tmp/probe.log" | cut -c1-120))"

# The harness, built by the Makefile's rule (its own objects, with clang).
if ! (cd "$root" && ${MAKE:-make} --no-print-directory -s "${bin#"$root"/}" FUZZ_CC="$cc") \
        >"$tmp/build.log" 2>&1; then
    echo "FAIL building $bin:"
    head -n 30 "$tmp/build.log"
    echo "fuzz-lib: 0 passed, 1 failed"
    exit 1
fi

# The seed corpus: a spec under the spec's own command line (6 zero bytes), and the
# specs of the samples and goldens under each lowering (byte 0: 1 + the mechanism).
mkdir -p "$tmp/seeds"
n=0
seed() {   # SPEC HEADER-BYTES(octal escapes)
    n=$((n + 1))
    { printf "$2"; cat "$1"; } >"$tmp/seeds/s$n"
}
shopt -s nullglob
for spec in "$root"/samples/*/*.pipe "$root"/tests/golden/*.pipe "$root"/tests/fuzz/seeds/*.pipe; do
    seed "$spec" '\0\0\0\0\0\0'
    for m in 1 2 3 4 5 6 7 8 9 10 11 12; do
        seed "$spec" "\\$(printf '%03o' "$m")\\0\\0\\0\\0\\0"
    done
    seed "$spec" '\0\2\0\0\0\0'        # --grid persistent
    seed "$spec" '\0\0\0\3\0\0'        # --producer-warps 2
done
for spec in "$root"/tests/errors/*.pipe; do
    seed "$spec" '\0\0\0\0\0\0'
done

corpus=${FUZZ_CORPUS:-$tmp/corpus}
mkdir -p "$corpus" "$keep"
: >"$tmp/before"
ls "$keep" >"$tmp/before" 2>/dev/null

# A sanitizer report is a crash (libFuzzer's exit status is non-zero then).
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}
args=(-max_total_time="$time_s" -timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=1024
      -max_len=16384 -print_final_stats=1 -dict="$root/tests/fuzz/pipe.dict"
      -artifact_prefix="$keep/")
[ -n "${FUZZ_SEED:-}" ] && args+=(-seed="$FUZZ_SEED")
echo "fuzz-lib: $n seeds, ${time_s}s, corpus $corpus, findings kept in $keep"
"$bin" "${args[@]}" "$corpus" "$tmp/seeds" >"$tmp/log" 2>&1
status=$?

runs=$(sed -n 's/^stat::number_of_executed_units: *\([0-9]*\).*/\1/p' "$tmp/log" | tail -n 1)
[ -n "$runs" ] || runs=$(grep -oE '^#[0-9]+' "$tmp/log" | tail -n 1 | tr -d '#')
last=$(grep -E '^#[0-9]+.*cov: ' "$tmp/log" | tail -n 1)
cov=$(grep -oE 'cov: [0-9]+' <<<"$last" | grep -oE '[0-9]+')
ft=$(grep -oE 'ft: [0-9]+' <<<"$last" | grep -oE '[0-9]+')
corp=$(grep -oE 'corp: [0-9]+/[0-9]+[a-zA-Z]*' <<<"$last" | cut -d' ' -f2)
secs=$(sed -n 's/^Done [0-9]* runs in \([0-9]*\) second.*/\1/p' "$tmp/log" | tail -n 1)
used_seed=$(sed -n 's/.*Seed: \([0-9]*\).*/\1/p' "$tmp/log" | head -n 1)
echo "fuzz-lib: ${runs:-0} runs in ${secs:-?}s, cov: ${cov:-?} ft: ${ft:-?} corpus: ${corp:-?} (seed ${used_seed:-?})"

found=$(ls "$keep" 2>/dev/null | grep -vxF -f "$tmp/before" | grep -E '^(crash|leak|timeout|oom|slow-unit)-')
if [ $status -ne 0 ] || [ -n "$found" ]; then
    for f in $found; do
        echo "FAIL $keep/$f (replay: $bin $keep/$f)"
    done
    [ -n "$found" ] || echo "FAIL libFuzzer exited with $status"
    grep -m 12 -E 'ERROR: |runtime error|SUMMARY|^    #[0-9] ' "$tmp/log" | sed 's/^/     /'
    echo "fuzz-lib: ${runs:-0} passed, 1 failed"
    exit 1
fi
echo "fuzz-lib: ${runs:-0} passed, 0 failed"
