#!/usr/bin/env bash
# make tune: a tuning run (tools/pipegen-tune) of every spec that tests/gpu/matrix benches
# under auto, on this machine's GPU, its records in one wisdom file, which
# `make bench BENCH_WISDOM=FILE` then gives to a twin of every auto line (the bench
# reports auto with and without it against the best lowering). A spec is tuned once, at
# the sizes of every auto line of it (sizes:AxB...: pipegen-tune --sizes "A B"; a line
# without: --sizes default, the bench's own), since auto takes one lowering for all of a
# spec's sizes: rmsnorm's record from rows of 1024 alone chose bulk, 2.5% short of
# cp.async at rows of 4096 (H200, docs/lowerings.md). Its grid (--grid) and the GPU's
# arch-specific target where the line's --arch names it (gemm_bf16's sm_90a: --arch) are
# its first auto line's. Without a GPU it says so and exits 0
# (PIPEGEN_SKIP_STATUS: that status instead).
#   GPU_SHARD=K/N   only the K-th of every N specs, into build/tune/shard-K-of-N.wisdom
#   GPU_DRYRUN=1    print the specs (and their sizes) and exit: no GPU needed
#   TUNE_OUT=FILE   the wisdom file (build/tune/pipegen.wisdom, or the shard's); written
#                   anew
# Each spec's run prints pipegen-tune's progress lines and table; its log and work in
# build/tune/SPEC/.
#
# usage: tests/gpu/wisdom.sh PIPEGEN
set -u
. "$(dirname "$0")/lib.sh"
parse_shard tune

# The matrix's auto lines, one a spec: "SAMPLE GRID ARCHES SIZES" (ARCHES: its first
# line's --arch list, or -; SIZES: each line's sizes, A,B,... or default, joined by '|').
specs=()
while read -r sample grid arches sizes; do
    specs+=("$sample $grid $arches $sizes")
done < <(awk 'NF && $1 !~ /^#/ && $2 == "auto" && !/ record:/ {
                 s = "default"; a = "-"
                 for (i = 4; i <= NF; ++i) {
                     if ($i ~ /^sizes:/) { s = substr($i, 7); gsub("x", ",", s) }
                     if ($i ~ /^--arch=/) a = substr($i, 8)
                 }
                 if (!($1 in first)) { first[$1] = $1 " " $3 " " a; order[++n] = $1 }
                 if (index("|" sizes[$1] "|", "|" s "|") == 0)
                     sizes[$1] = sizes[$1] (sizes[$1] == "" ? "" : "|") s
             }
             END { for (i = 1; i <= n; ++i) print first[order[i]], sizes[order[i]] }' \
             "$ROOT/tests/gpu/matrix" | awk -v k="$k" -v n="$n" '(NR - 1) % n == k - 1')
if [ "${GPU_DRYRUN:-0}" = 1 ]; then
    echo "tune: dry run (nothing is built or run): ${#specs[@]} specs"
    printf 'spec %s\n' "${specs[@]}"
    exit 0
fi
gpu_start tune "nothing was measured" "$@"
W=$ROOT/build/tune
out=${TUNE_OUT:-$W/$([ -n "${GPU_SHARD:-}" ] && echo "shard-$k-of-$n" || echo pipegen).wisdom}
mkdir -p "$W"
rm -f "$out"
start=$SECONDS failed=0
for s in "${specs[@]}"; do
    read -r sample grid arches sizes <<<"$s"
    specific=
    [[ ",$arches," == *",${ARCH}a,"* ]] && specific=${ARCH}a
    size_args=()
    IFS='|' read -ra each <<<"$sizes"
    for z in "${each[@]}"; do
        size_args+=(--sizes "${z//,/ }")
    done
    echo "tune: $sample, grid $grid${specific:+, $specific}, sizes ${sizes//|/, }"
    rm -rf "${W:?}/$sample"
    PIPEGEN=$PG TUNE_DIR=$W/$sample "$ROOT/tools/pipegen-tune" -o "$out" --grid "$grid" \
        ${specific:+--arch "$specific"} "${size_args[@]}" "$(spec_path "$sample")" 2>&1 |
        tee "$W/$sample.log"
    [ "${PIPESTATUS[0]}" = 0 ] || failed=$((failed + 1))
done
echo "tune: ${#specs[@]} specs, $failed failed, $(minutes $((SECONDS - start))); wisdom in $out"
[ $failed = 0 ]
