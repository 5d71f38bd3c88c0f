#!/usr/bin/env bash
# The host-streaming rows of a machine with several GPUs: docs/performance-multi.csv (which
# tests/gpu/report.py adds to docs/performance.md as their own section and targets, the
# next time make bench-report runs) and docs/streaming-timeline-multi.png (the traced run
# over every GPU, where matplotlib is there).
#
# usage: tests/gpu/multi-report.sh DIR
#   DIR: the work directory (rows.csv, info, trace.txt) of
#        BENCH_MATRIX=FILE tests/gpu/bench.sh PIPEGEN, FILE holding the host_stream lines
#        of tests/gpu/matrix, run on that machine
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
[ $# -eq 1 ] || { echo "usage: $0 DIR" >&2; exit 2; }
d=$1
for f in rows.csv info trace.txt; do
    [ -f "$d/$f" ] || { echo "multi-report: $d has no $f (written by make bench)" >&2; exit 2; }
done
info() { sed -n "s/^$1=//p" "$d/info"; }
n=$(sed -n 's/^[0-9]*,[a-z0-9_]*-stream\([0-9]*\)gpu,.*/\1/p' "$d/rows.csv" | head -n 1)
[ -n "$n" ] || { echo "multi-report: no row over several GPUs in $d/rows.csv" >&2; exit 2; }
machine="$n x $(info gpu) ($(info arch))"
{
    echo "machine,cuda,date,sample,lowering,grid,flags,value,reference,ratio,sameshape,ratio_sameshape,applies"
    tail -n +2 "$d/rows.csv" | grep -E '^[0-9]+,[a-z0-9_]+_host-' | sort -s -t, -k1,1 | cut -d, -f2- |
        sed "s|^|$machine,$(info cuda),$(info date),|"
} >"$ROOT/docs/performance-multi.csv"
echo "multi-report: $(($(wc -l <"$ROOT/docs/performance-multi.csv") - 1)) rows from $machine in docs/performance-multi.csv"
if python3 -c 'import matplotlib' 2>/dev/null; then
    python3 "$ROOT/tests/gpu/timeline.py" "$d/trace.txt" "$ROOT/docs/streaming-timeline-multi.png" \
        "$n" "NAME_stream over $machine, $(info date): one traced run of make bench" &&
        echo "multi-report: docs/streaming-timeline-multi.png"
fi
