#!/usr/bin/env bash
# Error corpus: every NNN_name.pipe here must make pipegen fail with exit status 1, print
# exactly NNN_name.err on stderr, and write no output file.
#   001-099  lexical and syntax errors (the front end)
#   100-     semantic errors
#
# usage: tests/errors/run.sh PIPEGEN [NAME...]
#   NAME...          run only these cases (with or without .pipe)
#   ERRORS_BLESS=1   rewrite each .err from what pipegen prints (review the diff!)
set -u

if [ $# -lt 1 ]; then
    echo "usage: $0 PIPEGEN [NAME...]" >&2
    exit 2
fi
pipegen=$1
shift
case $pipegen in /*) ;; *) pipegen=$PWD/$pipegen ;; esac
if [ ! -x "$pipegen" ]; then
    echo "errors: '$pipegen' is not an executable" >&2
    exit 2
fi

cd "$(dirname "$0")" || exit 2
tmp=$(mktemp -d "${TMPDIR:-/tmp}/pg-errors.XXXXXX") || exit 2
trap 'rm -rf "$tmp"' EXIT

# Sanitizer reports must not pass for the expected exit status 1.
export ASAN_OPTIONS=${ASAN_OPTIONS:-exitcode=86}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:exitcode=87:print_stacktrace=1}

if [ $# -gt 0 ]; then
    cases=("${@/%.pipe/}")
else
    cases=()
    for spec in *.pipe; do
        cases+=("${spec%.pipe}")
    done
fi

passed=0
failed=0
for name in "${cases[@]}"; do
    rm -f "$tmp/out.cu" "$tmp/out.cuh"
    timeout 10 "$pipegen" "$name.pipe" -o "$tmp/out.cu" >"$tmp/stdout" 2>"$tmp/stderr"
    status=$?
    if [ "${ERRORS_BLESS:-0}" = 1 ] && [ $status -eq 1 ]; then
        cp "$tmp/stderr" "$name.err"
    fi
    problems=()
    [ $status -eq 1 ] || problems+=("exit status $status, expected 1")
    if [ ! -f "$name.err" ]; then
        problems+=("no $name.err")
    elif ! cmp -s "$name.err" "$tmp/stderr"; then
        problems+=("stderr differs from $name.err")
    fi
    [ -e "$tmp/out.cu" ] && problems+=("out.cu was written")
    [ -e "$tmp/out.cuh" ] && problems+=("out.cuh was written")

    if [ ${#problems[@]} -eq 0 ]; then
        passed=$((passed + 1))
        continue
    fi
    failed=$((failed + 1))
    echo "FAIL $name: $(IFS=';'; echo "${problems[*]}")"
    if [ -f "$name.err" ]; then
        diff -u -a --label "$name.err (expected)" --label "stderr (actual)" \
            "$name.err" "$tmp/stderr" | head -n 60
    else
        head -n 20 "$tmp/stderr"
    fi
done

echo "errors: $passed passed, $failed failed"
[ $failed -eq 0 ]
