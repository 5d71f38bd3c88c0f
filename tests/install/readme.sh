#!/usr/bin/env bash
# The README's first hour, followed word for word: its spec (the block under "## A spec")
# into saxpy.pipe, its pipegen command with the --emit-test it names (no diagnostic may
# come out: a first spec that warns is a trap), its nvcc line for the generated file and
# the test (out.cu and <prefix> replaced), linked as its nvcc line says (out.o main.o: the
# objects) against an install tree; the test then runs as linked (no LD_LIBRARY_PATH) and
# must print "0 failed" on a machine with a GPU, and elsewhere exit 77 saying there is no
# CUDA device. The install suite runs it; on the GPU machine run it alone.
#
# usage: tests/install/readme.sh [PREFIX]
#   PREFIX: an install tree (make install PREFIX=...); default: make install into a
#   temporary directory
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
prefix=${1:-}
if [ -z "$prefix" ]; then
    prefix=$W/prefix
    make -C "$ROOT" -s install PREFIX="$prefix" >"$W/install.log"
fi
readme=$ROOT/README.md
# The spec: the fenced block after "## A spec".
awk '/^## A spec/ { on = 1; next }
     on && /^```/ { if (inside) exit; inside = 1; next }
     inside { print }' "$readme" >"$W/saxpy.pipe"
# The command: the README's `pipegen saxpy.pipe ...` in backquotes; the test as it says.
gen=$(grep -o '`pipegen saxpy.pipe[^`]*`' "$readme" | head -n 1 | tr -d '`')
test_flag=$(grep -o '`--emit-test t.cu`' "$readme" | head -n 1 | tr -d '`')
# The compile line: the indented "nvcc -c out.cu" line and its continuation.
nvcc_line=$(awk '/^    nvcc -c out.cu/ { line = $0; while (line ~ /\\$/) { sub(/\\$/, "", line);
                 getline more; line = line more } print line; exit }' "$readme")
# The link line: the indented "nvcc -o app" line.
link_line=$(grep -m 1 '^    nvcc -o app ' "$readme" | sed 's/^ *//; s/ *#.*//')
for what in gen test_flag nvcc_line link_line; do
    [ -n "${!what}" ] || { echo "readme: README.md has no $what any more" >&2; exit 1; }
done
compile() {   # compile FILE.cu: the README's line for it
    eval "${nvcc_line//out.cu/$1} -o ${1%.cu}.o" \
        | sed 's/^/    /'
}
cd "$W"
nvcc_line=${nvcc_line//<prefix>/$prefix}
link_line=${link_line//<prefix>/$prefix}
link_line=${link_line/-o app/-o t}
link_line=${link_line/out.o main.o/saxpy.o t.o}
echo "readme: $gen $test_flag"
PATH=$prefix/bin:$PATH eval "$gen $test_flag" 2>"$W/diagnostics"
if [ -s "$W/diagnostics" ]; then
    echo "readme: pipegen said something about the README's spec:" >&2
    cat "$W/diagnostics" >&2
    exit 1
fi
echo "readme: ${nvcc_line# *} (saxpy.cu, t.cu)"
compile saxpy.cu
compile t.cu
echo "readme: $link_line"
eval "$link_line"
status=0
out=$(env -u LD_LIBRARY_PATH ./t 2>&1) || status=$?
echo "readme: ./t: $(tail -n 1 <<<"$out") (exit status $status)"
if [ $status = 77 ]; then
    # No GPU: the test says so and is "skipped"; it must have loaded and started.
    grep -q 'no CUDA device' <<<"$out"
    exit 0
fi
grep -q ', 0 failed$' <<<"$out"
