#!/usr/bin/env bash
# Mutation tests of the schedule verifier (docs/verifier.md).
#
# For every samples/*/*.pipe (but the schedule twins of tests/lib.sh), every implemented
# lowering (pipegen --list-lowerings, auto excepted), both grids and every fault kind, run
#     PIPEGEN --verify --inject-fault=KIND --lower=M --arch=A --grid=G SPEC
# (A: sm_80,sm_90a, or sm_90a for a lowering that needs it: the arch-specific target, for
# which tensor multicasts to a `cluster`)
# exit 2 means the fault does not apply to that schedule; exit 1 with a diagnostic tagged
# with one of the rules expected for the kind ("] RULE: ") means it was caught; anything
# else is a miss. Without a fault, every sample, lowering and grid must verify: exit 0 and
# nothing on stderr (a false positive otherwise).
#
# usage: tests/mutation/run.sh PIPEGEN
#   MUTATION_VERBOSE=1   print every case
#   MUTATION_JOBS=2      specs at a time
set -u

. "$(dirname "$0")/../lib.sh"
suite_start mutation PIPEGEN "$@"

# The rules each fault kind must be caught under (docs/verifier.md, "Fault kinds").
declare -A expect=(
    [drop-wait]='RAW|WAR|drain'
    [wait-plus-one]='RAW|WAR'
    [drop-commit]='RAW|WAR|drain'
    [flip-parity]='parity|RAW|deadlock'
    [expect-tx-short]='expect_tx|RAW'
    [expect-tx-long]='expect_tx|deadlock'
    [drop-fence]='fence'
    [one-slot-short]='WAR|deadlock|arrivals'
    [drop-release]='deadlock'
    [drop-arrive]='deadlock|arrivals'
    [early-release]='WAR'
    [local-release]='deadlock'
    [cluster-count-short]='WAR|arrivals|deadlock'
    [claim-ring-short]='WAR|RAW'
    [regs-over]='registers'
    [accum-regs-short]='accum'
    [bins-on-ring]='accum'
    [drop-array-check]='checks'
    [late-select]='prepare'
    [drop-param-source]='params'
    [chunk-buffers-short]='chunk-WAR'
    [copy-out-early]='chunk-RAW'
    [part-out-early]='chunk-RAW'
    [fold-early]='partials'
)
# The device schedule's faults, then the host plan's (the launcher).
kinds=(drop-wait wait-plus-one drop-commit flip-parity expect-tx-short expect-tx-long
       drop-fence one-slot-short drop-release drop-arrive early-release local-release
       cluster-count-short claim-ring-short regs-over accum-regs-short bins-on-ring
       drop-array-check late-select drop-param-source chunk-buffers-short copy-out-early
       part-out-early fold-early)

# Each lowering for the architectures it supports (an sm_90 lowering refuses sm_80).
mechs=()
declare -A arch_of=()
while read -r name arch state _; do
    [ "$name" = auto ] && continue
    [ "$state" = implemented ] && mechs+=("$name")
    [ "$arch" = sm_90 ] && arch_of[$name]=sm_90a || arch_of[$name]=sm_80,sm_90a
done < <("$pipegen" --list-lowerings)
if [ ${#mechs[@]} -eq 0 ]; then
    echo "mutation: no implemented lowering listed by $pipegen --list-lowerings" >&2
    exit 2
fi

# rowstats: the row reductions' variant of rowmax, whose ring is rowmax's (its passes are
# inside the compute operation): compiled under every lowering, not mutated. colstats, a
# twin for the other suites, is mutated: its accumulators, by column and in shared bins,
# are what accum-regs-short and bins-on-ring corrupt.
specs=()
for spec in "$root"/samples/*/*.pipe; do
    name=$(basename "$spec" .pipe)
    [ "$name" = rowstats ] && continue
    { is_schedule_twin "$name" && [ "$name" != colstats ]; } || specs+=("$spec")   # tests/lib.sh
done
grids=(per_tile persistent)

# Lowerings with producer warps are also run warp-specialized (one producer warp).
roles_ok() {
    ! "$pipegen" --verify --lower="$1" --arch="${arch_of[$1]}" --producer-warps=1 "${specs[0]}" 2>&1 |
        grep -q "producer warps are planned by"
}
verbose=${MUTATION_VERBOSE:-0}

# mutate_spec SPEC N: every case of SPEC, its messages on stdout and its counts last, as
# "counts CAUGHT APPLICABLE MISSED NA FP CLEAN" (N names its scratch files: the specs run
# MUTATION_JOBS at a time, default 2).
mutate_spec() {
    local spec=$1 out=$tmp/$2.out err=$tmp/$2.err
    local caught=0 applicable=0 missed=0 na=0 fp=0 clean=0
    local rel=${spec#"$root"/} own_roles=0 m g k status case_name rule configs
    # A spec with its own producer warps (sgemm_roles) is lowered only where they are planned.
    grep -Eq '^[[:space:]]*producer_warps[[:space:]]' "$spec" && own_roles=1
    for m in "${mechs[@]}"; do
        configs=("--grid=per_tile" "--grid=persistent")
        if roles_ok "$m"; then
            [ $own_roles = 0 ] && configs+=("--grid=persistent --producer-warps=1")
        elif [ $own_roles = 1 ]; then
            continue
        fi
        for g in "${configs[@]}"; do
            # A plan refused as the spec was not written for it (sgemm's body under a
            # producer warp) has no schedule to prove.
            # shellcheck disable=SC2086
            "$pipegen" --verify -Wno-hints -Wno-perf --lower="$m" --arch="${arch_of[$m]}" $g "$spec" \
                2>&1 | grep -qE "$PLAN_REFUSED" && continue
            # No fault: the schedule is proven, silently (the hints a lowering the spec was
            # not written for ignores, and the lint of a grid it was not written for, are
            # expected: -Wno-hints -Wno-perf).
            timeout 60 "$pipegen" --verify -Wno-hints -Wno-perf --lower="$m" --arch="${arch_of[$m]}" $g "$spec" \
                >"$out" 2>"$err"
            status=$?
            if [ $status -ne 0 ] || [ -s "$err" ]; then
                fp=$((fp + 1))
                echo "FALSE POSITIVE $rel --lower=$m $g: exit $status"
                head -n 8 "$err" | sed 's/^/    /'
            else
                clean=$((clean + 1))
                [ "$verbose" = 1 ] && echo "ok   $rel --lower=$m $g: proven"
            fi
            for k in "${kinds[@]}"; do
                timeout 60 "$pipegen" --verify --inject-fault="$k" --lower="$m" --arch="${arch_of[$m]}" $g \
                    "$spec" >"$out" 2>"$err"
                status=$?
                case_name="$rel --lower=$m $g --inject-fault=$k"
                if [ $status -eq 2 ] && grep -q "is not applicable" "$err"; then
                    na=$((na + 1))
                    [ "$verbose" = 1 ] && echo "n/a  $case_name"
                    continue
                fi
                applicable=$((applicable + 1))
                if [ $status -eq 1 ] && grep -Eq "\] (${expect[$k]}): " "$err"; then
                    caught=$((caught + 1))
                    rule=$(grep -Eo "\] [A-Za-z_]+: " "$err" | head -n 1)
                    [ "$verbose" = 1 ] && echo "ok   $case_name: caught ($rule)"
                else
                    missed=$((missed + 1))
                    echo "MISSED $case_name: exit $status (expected rule ${expect[$k]})"
                    head -n 8 "$err" | sed 's/^/    /'
                fi
            done
        done
    done
    echo "counts $caught $applicable $missed $na $fp $clean"
}

n=0
for spec in "${specs[@]}"; do
    mutate_spec "$spec" "$n" >"$tmp/spec$n.log" &
    n=$((n + 1))
    while [ "$(jobs -rp | wc -l)" -ge "${MUTATION_JOBS:-2}" ]; do
        wait -n
    done
done
wait
caught=0 applicable=0 missed=0 na=0 fp=0 clean=0
for ((i = 0; i < n; ++i)); do
    grep -v '^counts ' "$tmp/spec$i.log"
    read -r _ c a m x f k < <(grep '^counts ' "$tmp/spec$i.log" || echo "counts 0 0 1 0 0 0")
    caught=$((caught + c)) applicable=$((applicable + a)) missed=$((missed + m))
    na=$((na + x)) fp=$((fp + f)) clean=$((clean + k))
done

echo "mutation: ${#specs[@]} specs x ${#mechs[@]} lowerings (${mechs[*]}) x 2 grids" \
     "(+ producer warps where planned) x ${#kinds[@]} faults; $na not applicable"
echo "mutation: caught $caught / applicable $applicable, false positives $fp" \
     "(of $((fp + clean)) clean schedules)"
passed=$((caught + clean))
failed=$((missed + fp))
suite_end
