#!/usr/bin/env bash
# make demo: build the samples and, where there is a GPU, run their generated tests.
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
"$ROOT/scripts/build-samples.sh" || exit 1
if ! command -v nvidia-smi >/dev/null || ! nvidia-smi -L >/dev/null 2>&1; then
    echo "demo: no GPU on this machine, so the generated tests were built but not run"
    echo "demo: on a GPU machine, 'make demo' runs them and 'make gpu-check' runs the full matrix"
    exit 0
fi
status=0
for t in "$ROOT"/build/samples/*/*_test; do
    echo "demo: running $(basename "$t")"
    "$t" || status=1
done
exit $status
