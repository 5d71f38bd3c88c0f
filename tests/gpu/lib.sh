# Shared by tests/gpu/run.sh and tests/gpu/bench.sh (sourced; ROOT set by the caller).

# The spec of a matrix line's first column: samples/NAME/NAME.pipe, or a variant spec
# samples/*/NAME.pipe (sgemm_roles: samples/sgemm/sgemm_roles.pipe).
spec_path() {
    local f
    for f in "$ROOT/samples/$1/$1.pipe" "$ROOT"/samples/*/"$1.pipe"; do
        if [ -f "$f" ]; then echo "$f"; return 0; fi
    done
    echo "$ROOT/samples/$1/$1.pipe"
}

# A case's directory names its flags too: saxpy.cp.async.persistent.producer-warps=1
case_dir() { local d="$W/$1.$2.$3"; shift 3; for f in "$@"; do d="$d.${f#--}"; done; echo "$d"; }

# Without a GPU: say so and exit 0, or PIPEGEN_SKIP_STATUS (77: "skipped" to automake,
# meson and CTest) for a harness that must not count a skip as a pass.
skip_without_gpu() {
    command -v nvidia-smi >/dev/null && nvidia-smi -L >/dev/null 2>&1 && return 0
    echo "$1: no GPU on this machine: $2"
    exit "${PIPEGEN_SKIP_STATUS:-0}"
}

export -f spec_path case_dir
