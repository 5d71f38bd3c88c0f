#!/usr/bin/env bash
# Golden tests: every NAME.pipe here is compiled, and what pipegen writes must be
# byte-identical to the expected files beside it:
#   NAME.cu, NAME.cuh   pipegen --arch=sm_80,sm_90 FLAGS NAME.pipe -o NAME.cu
#   NAME.ir             pipegen --arch=sm_80,sm_90 FLAGS --dump-ir NAME.pipe
#   NAME.ast            pipegen --arch=sm_80,sm_90 FLAGS --dump-ast NAME.pipe
# FLAGS are the words of NAME.flags (optional, one line; '#' starts a comment). A case
# may name its spec in NAME.from (a path from tests/golden, as pipegen is given it)
# instead of holding NAME.pipe: the samples under every lowering are such cases
# (samples__LOWERING.*), without NAME.ast (the AST does not depend on the lowering). Every
# command must exit 0 and print nothing on stderr. Each case is generated twice, into
# two directories, and the two must be byte-identical (no dates, no paths, no addresses).
# pipegen runs from inside tests/golden with relative names, so the banner and the #line
# directives are the same on every machine.
#
# usage: tests/golden/run.sh PIPEGEN [NAME...]
#   UPDATE=1   rewrite the expected files from what pipegen writes now (after a deliberate
#              change of the emitter: review `git diff tests/golden` before committing)
set -u

. "$(dirname "$0")/../lib.sh"
suite_start golden "PIPEGEN [NAME...]" "$@"
cd "$root/tests/golden" || exit 2

if [ ${#args[@]} -gt 0 ]; then
    cases=("${args[@]/%.pipe/}")
else
    cases=()
    for spec in *.pipe *.from; do
        [ -e "$spec" ] && cases+=("${spec%.*}")
    done
fi

# generate NAME DIR: all four outputs of NAME into DIR; prints problems, returns non-zero
# when a command failed.
# The spec of case NAME: NAME.from names it, or NAME.pipe is it.
spec_of() {
    if [ -f "$1.from" ]; then cat "$1.from"; else echo "$1.pipe"; fi
}

generate() {
    local name=$1 dir=$2 status bad=0 spec
    spec=$(spec_of "$name")
    mkdir -p "$dir"
    local flags
    read_flags "$name.flags"
    local base=(--arch=sm_80,sm_90 "${flags[@]}")
    "$pipegen" "${base[@]}" "$spec" -o "$dir/$name.cu" >"$dir/gen.out" 2>"$dir/gen.err"
    status=$?
    [ $status -eq 0 ] || { echo "generating exited with $status"; bad=1; }
    "$pipegen" "${base[@]}" --dump-ir "$spec" >"$dir/$name.ir" 2>"$dir/ir.err"
    status=$?
    [ $status -eq 0 ] || { echo "--dump-ir exited with $status"; bad=1; }
    "$pipegen" "${base[@]}" --dump-ast "$spec" >"$dir/$name.ast" 2>"$dir/ast.err"
    status=$?
    [ $status -eq 0 ] || { echo "--dump-ast exited with $status"; bad=1; }
    local f
    for f in gen.err ir.err ast.err; do
        if [ -s "$dir/$f" ]; then
            echo "stderr of ${f%.err}: $(head -c 300 "$dir/$f" | tr '\n' ' ')"
            bad=1
        fi
    done
    [ -s "$dir/gen.out" ] && { echo "generating printed on stdout"; bad=1; }
    return $bad
}

updated=0
for name in "${cases[@]}"; do
    if [ ! -f "$(spec_of "$name")" ]; then
        case_fail "$name" "no $(spec_of "$name")"
        continue
    fi
    outputs=(cu cuh ir ast)
    [ -f "$name.from" ] && outputs=(cu cuh ir)
    problems=()
    details=""
    gen_msgs=$(generate "$name" "$tmp/$name/a")
    gen_ok=$?
    again_msgs=$(generate "$name" "$tmp/$name/b")
    [ -n "$gen_msgs" ] && problems+=("$gen_msgs")
    [ -n "$again_msgs" ] && [ "$again_msgs" != "$gen_msgs" ] && problems+=("second run: $again_msgs")

    for ext in "${outputs[@]}"; do
        got=$tmp/$name/a/$name.$ext
        [ -f "$got" ] || { problems+=("no $name.$ext written"); continue; }
        if ! cmp -s "$got" "$tmp/$name/b/$name.$ext"; then
            problems+=("$name.$ext differs between two runs")
            details+=$(diff -u -a --label "run 1" --label "run 2" "$got" \
                "$tmp/$name/b/$name.$ext" | head -n 20)$'\n'
        fi
        if [ "${UPDATE:-0}" = 1 ] && [ $gen_ok -eq 0 ]; then
            if ! cmp -s "$got" "$name.$ext"; then
                cp "$got" "$name.$ext"
                echo "updated $name.$ext"
                updated=$((updated + 1))
            fi
            continue
        fi
        if [ ! -f "$name.$ext" ]; then
            problems+=("no expected $name.$ext (UPDATE=1 writes it)")
        elif ! cmp -s "$name.$ext" "$got"; then
            problems+=("$name.$ext differs")
            details+=$(diff -u -a --label "$name.$ext (expected)" --label "$name.$ext (actual)" \
                "$name.$ext" "$got" | head -n 60)$'\n'
        fi
    done

    if [ ${#problems[@]} -eq 0 ]; then
        case_ok "$name"
    else
        case_fail "$name" "$(joined "${problems[@]}")"
        [ -n "$details" ] && printf '%s' "$details"
    fi
done

[ "${UPDATE:-0}" = 1 ] && echo "golden: $updated file(s) updated"
suite_end
