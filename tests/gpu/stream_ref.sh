#!/usr/bin/env bash
# The same-shape reference of make bench alone, on this machine's GPU: the --stream-ref
# mode of a bench driver (saxpy's, any would do: the mode is the same text in every one)
# reads, writes and copies 1 GiB with the reference kernel, each against cudaMemcpy
# device to device and cudaMemset in one process, and prints a STREAM_REF line for each
# (ratio: to cudaMemcpy's rate; vs_memset: to cudaMemset's). Whether the reference is as
# fast as a plain kernel gets (on an H100, read about 1.03, write 1.05, copy 0.94), in a
# few seconds. Without a GPU it says so and exits 0 (PIPEGEN_SKIP_STATUS=77: exits 77).
#
# usage: tests/gpu/stream_ref.sh PIPEGEN   (needs build/libpipert.a)
#   STREAM_REF_MIB=N   MiB a buffer (1024)
set -u
. "$(dirname "$0")/lib.sh"
gpu_start stream-ref "nothing was measured" "$@"
W=$ROOT/build/stream-ref
rm -rf "$W"
if ! build_case bench saxpy cp.async per_tile "$W"; then
    echo "stream-ref: build failed"; tail -n 20 "$W/build.log"; exit 1
fi
echo "stream-ref: $GPU ($ARCH)"
"$W/bench" --stream-ref "${STREAM_REF_MIB:-1024}"
