#!/usr/bin/env bash
# The runtime's own GPU tests alone (make gpu-runtime; make gpu-check runs them in one of
# its shards): tests/gpu/rt_reset.cu (kernels past 48 KiB of dynamic shared memory, launched
# and checked again after each cudaDeviceReset, and the same test failing against a
# runtime that does not re-apply the opt-in) and tests/gpu/rt_threads.cu (threads making
# their first runtime calls at once, in RT_THREADS_RUNS fresh processes and once under
# compute-sanitizer memcheck). tests/gpu/lib.sh (gpu_runtime_cases) has the cases and
# their settings (RT_THREADS_RUNS, RT_THREADS, RT_ITERS, RT_ROUNDS, RT_SEED).
#   GPU_WORK=DIR      the work directory (build/gpu-runtime)
# Needs build/libpipert.a. Without a GPU it says so and exits 0 without claiming a pass
# (PIPEGEN_SKIP_STATUS=77: exits 77).
#
# usage: tests/gpu/runtime.sh PIPEGEN
set -u
. "$(dirname "$0")/lib.sh"
gpu_start gpu-runtime "nothing was run and nothing passed" "$@"
W=${GPU_WORK:-$ROOT/build/gpu-runtime}
rm -rf "$W"; mkdir -p "$W"
start=$SECONDS
skipped=0
echo "gpu-runtime on $GPU ($ARCH), work in $W"
gpu_runtime_cases "$W"
echo "gpu-runtime: $skipped skipped; took $(minutes $((SECONDS - start)))"
suite_end
