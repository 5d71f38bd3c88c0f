#!/usr/bin/env bash
# Error corpus: every NNN_name.pipe here must make pipegen fail with exit status 1, print
# exactly NNN_name.err on stderr, and write no output file. NNN_name.flags, where there is
# one, gives the command line's options (one line; '#' starts a comment): an architecture a
# refusal needs (--arch=sm_90 for what only sm_90 lowerings refuse).
#   001-099  lexical and syntax errors (the front end)
#   100-     semantic errors
#
# usage: tests/errors/run.sh PIPEGEN [NAME...]
#   NAME...          run only these cases (with or without .pipe)
#   ERRORS_BLESS=1   rewrite each .err from what pipegen prints (review the diff!)
set -u

. "$(dirname "$0")/../lib.sh"
suite_start errors "PIPEGEN [NAME...]" "$@"
cd "$root/tests/errors" || exit 2

if [ ${#args[@]} -gt 0 ]; then
    cases=("${args[@]/%.pipe/}")
else
    cases=()
    for spec in *.pipe; do
        cases+=("${spec%.pipe}")
    done
fi

for name in "${cases[@]}"; do
    rm -f "$tmp/out.cu" "$tmp/out.cuh"
    read_flags "$name.flags"
    timeout 10 "$pipegen" "${flags[@]}" "$name.pipe" -o "$tmp/out.cu" >"$tmp/stdout" 2>"$tmp/stderr"
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
        case_ok
        continue
    fi
    case_fail "$name" "$(joined "${problems[@]}")"
    if [ -f "$name.err" ]; then
        diff -u -a --label "$name.err (expected)" --label "stderr (actual)" \
            "$name.err" "$tmp/stderr" | head -n 60
    else
        head -n 20 "$tmp/stderr"
    fi
done

suite_end
