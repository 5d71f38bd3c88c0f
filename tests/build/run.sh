#!/usr/bin/env bash
# Build tests: the Makefile itself. `make -j2` runs bison and flex once each (each writes two
# targets in one run). `make check` runs every suite even after one fails and
# fails at the end naming the failed ones (with stand-in suites: a fake makefile read
# through MAKEFILES, `all` assumed up to date). `make gpu-check` and `make bench` with
# GPU_SHARD=K/N split tests/gpu/matrix into N shards exactly (GPU_DRYRUN=1: no GPU), and
# make bench's report (tests/gpu/report.py) holds each row to the reference that applies;
# tests/gpu/ab.sh refuses bad arguments before it looks for a GPU; make bench with
# BENCH_WISDOM measures each auto line twice, and make tune lists the specs it tunes;
# every record of tests/gpu/h100.wisdom and h200.wisdom belongs to a spec as it is now, and
# auto takes it (h100.wisdom: one for every spec of the tuning set).
#
# usage: tests/build/run.sh [CASE...]
# One line per case; the last line is `build: N passed, M failed`.
set -u

. "$(dirname "$0")/../lib.sh"
suite_start build "[CASE...]" "$@"
# Run by `make check`: none of the outer make's flags, job server or level leak in.
unset MAKEFLAGS MFLAGS MAKELEVEL MAKEFILES MAKEOVERRIDES
make=${MAKE_PROGRAM:-make}

# A makefile of stand-in suites, read by every make of a case through MAKEFILES.
fake_suites() {
    cat >"$case_dir/fake.mk" <<'EOF'
.PHONY: pg-fake-ok1 pg-fake-bad pg-fake-ok2 pg-fake-bad2
pg-fake-ok1: ; @echo "ran pg-fake-ok1"
pg-fake-bad: ; @echo "ran pg-fake-bad"; false
pg-fake-ok2: ; @echo "ran pg-fake-ok2"
pg-fake-bad2: ; @echo "ran pg-fake-bad2"; exit 3
EOF
}

# check_with SUITES [MAKE-ARGS...]: make check over the stand-in suites; out and status kept.
# Returns non-zero (a problem noted) when the Makefile has no CHECK_SUITES: check would
# run the real suites.
check_with() {
    local suites=$1
    shift
    status=-1 out=
    if ! "$make" -C "$root" --no-print-directory --eval 'pg-print-suites: ; @echo $(CHECK_SUITES)' \
            pg-print-suites 2>/dev/null | grep -qw unit; then
        fail "the Makefile has no CHECK_SUITES (the suites of make check)"
        return 1
    fi
    MAKEFILES="$case_dir/fake.mk" "$make" -C "$root" --no-print-directory -o all "$@" check \
        CHECK_SUITES="$suites" >"$case_dir/out" 2>&1
    status=$?
    out=$(grep -v -e '^make\(\[[0-9]*\]\)\?: \*\*\*' -e '^make check: seconds per suite:' \
        "$case_dir/out")
    times=$(sed -n 's/^make check: seconds per suite://p' "$case_dir/out")
}

# ------------------------------------------------------------------ cases
c_check_runs_every_suite() {
    fake_suites
    check_with "pg-fake-ok1 pg-fake-bad pg-fake-ok2 pg-fake-bad2" || return
    [ "$status" -ne 0 ] || fail "make check exited 0 with failed suites"
    local want
    want=$(printf '%s\n' "ran pg-fake-ok1" "ran pg-fake-bad" "ran pg-fake-ok2" \
        "ran pg-fake-bad2" "make check: FAILED: pg-fake-bad pg-fake-bad2")
    [ "$out" = "$want" ] || fail "output '$(tr '\n' '|' <<<"$out")', expected '$(tr '\n' '|' <<<"$want")'"
    # and each suite's seconds, failed or not, in their order
    [[ $times =~ ^\ pg-fake-ok1\ [0-9]+s\ pg-fake-bad\ [0-9]+s\ pg-fake-ok2\ [0-9]+s\ pg-fake-bad2\ [0-9]+s$ ]] \
        || fail "seconds per suite: '$times'"
}
c_check_keep_going() {
    # make -k check (.ci/run) the same.
    fake_suites
    check_with "pg-fake-bad pg-fake-ok1" -k || return
    [ "$status" -ne 0 ] || fail "make -k check exited 0 with a failed suite"
    [ "$out" = "$(printf '%s\n' "ran pg-fake-bad" "ran pg-fake-ok1" "make check: FAILED: pg-fake-bad")" ] \
        || fail "make -k check: '$(tr '\n' '|' <<<"$out")'"
}
c_check_all_pass() {
    fake_suites
    check_with "pg-fake-ok1 pg-fake-ok2" -j2 || return
    [ "$status" -eq 0 ] || fail "make check exited $status with every suite passing"
    [ "$out" = "$(printf '%s\n' "ran pg-fake-ok1" "ran pg-fake-ok2" "make check: all suites passed")" ] \
        || fail "make -j2 check: '$(tr '\n' '|' <<<"$out")'"
}
c_generators_run_once() {
    # One bison run writes parser.c and parser.h (one flex run lexer.c and lexer.h): make
    # -j2 needing both outputs, as the objects do, runs each generator once.
    local b=$case_dir/b n
    "$make" -C "$root" --no-print-directory -j2 B="$b" "$b/obj/parser.o" "$b/obj/lexer.o" \
        "$b/obj/main.o" "$b/gen/parser.c" "$b/gen/parser.h" "$b/gen/lexer.c" "$b/gen/lexer.h" \
        >"$case_dir/out" 2>&1 || { fail "make -j2 failed: $(tail -n 3 "$case_dir/out" | tr '\n' ' ')"; return; }
    n=$(grep -c -e "--defines=$b/gen/parser.h" "$case_dir/out")
    [ "$n" = 1 ] || fail "make -j2 ran bison $n times, expected once"
    n=$(grep -c -e "--header-file=$b/gen/lexer.h" "$case_dir/out")
    [ "$n" = 1 ] || fail "make -j2 ran flex $n times, expected once"
    # Up to date afterwards; outputs older than the grammar: bison (and flex) once more.
    "$make" -C "$root" --no-print-directory -q B="$b" "$b/gen/parser.c" "$b/gen/parser.h" \
        "$b/gen/lexer.c" "$b/gen/lexer.h" || fail "the generated files are out of date after make"
    touch -d @1 "$b/gen/parser.c" "$b/gen/parser.h" "$b/gen/lexer.c" "$b/gen/lexer.h"
    "$make" -C "$root" --no-print-directory -j2 B="$b" "$b/gen/parser.c" "$b/gen/parser.h" \
        "$b/gen/lexer.c" "$b/gen/lexer.h" >"$case_dir/out" 2>&1 || fail "the second make -j2 failed"
    n=$(grep -c -e "--defines=$b/gen/parser.h" "$case_dir/out")
    [ "$n" = 1 ] || fail "the second make -j2 ran bison $n times, expected once"
}

# A pipegen to drive the scripts with: the tree's own build, else one built for the case.
case_pipegen() {
    pipegen=$root/build/pipegen
    [ -x "$pipegen" ] && return 0
    pipegen=$case_dir/b/pipegen
    "$make" -C "$root" --no-print-directory B="$case_dir/b" "$pipegen" >"$case_dir/build.out" 2>&1 \
        || fail "could not build pipegen: $(tail -n 3 "$case_dir/build.out" | tr '\n' ' ')"
}

# A directory for PATH with the commands the scripts use, less the ones named: no
# nvidia-smi, stand-ins for flex, bison, cc and pkg-config, links to the others.
fake_path() {
    local bin c
    bin=$(mktemp -d "$case_dir/bin.XXXX")
    for c in sh bash id dirname basename realpath flex bison cc pkg-config awk sed grep sort \
             head tail tr cat wc cut mktemp rm mkdir chmod ln ls nproc date; do
        case " $* " in *" $c "*) continue ;; esac
        if [ "$c" = pkg-config ]; then
            # Check "installed" or not, as PG_FAKE_CHECK says.
            printf '#!/bin/sh\n[ "${PG_FAKE_CHECK:-0}" = 1 ]\n' >"$bin/pkg-config"
            chmod +x "$bin/pkg-config"
        elif [ "$c" = flex ] || [ "$c" = bison ] || [ "$c" = cc ]; then
            printf '#!/bin/sh\nexit 0\n' >"$bin/$c"; chmod +x "$bin/$c"
        else
            ln -s "$(command -v "$c")" "$bin/$c"
        fi
    done
    echo "$bin"
}

c_deps_build_needs_no_check() {
    # make and make install need flex, bison and cc; Check only the unit tests.
    local bin out
    bin=$(fake_path pkg-config)
    out=$(PATH=$bin CC=cc "$root/scripts/ensure-deps.sh" build 2>&1) \
        || fail "ensure-deps.sh build fails without pkg-config and Check: $out"
    out=$(PATH=$bin CC=cc "$root/scripts/ensure-deps.sh" test 2>&1) \
        && fail "ensure-deps.sh test passes without pkg-config and Check"
    grep -qF "missing what 'make' needs (test): pkg-config check" <<<"$out" || fail "test: '$out'"
    grep -qF "apt-get install -y pkg-config check" <<<"$out" || fail "no install command: '$out'"
    bin=$(fake_path flex)
    out=$(PATH=$bin CC=cc PG_FAKE_CHECK=1 "$root/scripts/ensure-deps.sh" build 2>&1) \
        && fail "ensure-deps.sh build passes without flex"
    grep -qF "missing what 'make' needs (build): flex" <<<"$out" || fail "build: '$out'"
    grep -q "ensure-deps.sh build" "$root/Makefile" \
        || fail "the Makefile does not ask for the build's needs only"
}

c_compile_prints_progress() {
    # The compile suite prints a line per case as each finishes ([done/total]), not all
    # at the end. A stand-in nvcc fails every compile at once.
    case_pipegen
    printf '#!/bin/sh\n[ "$1" = --version ] && { echo "release 13.0"; exit 0; }\nexit 1\n' \
        >"$case_dir/nvcc"
    chmod +x "$case_dir/nvcc"
    NVCC=$case_dir/nvcc "$root/tests/compile/run.sh" "$pipegen" "$root/samples/saxpy/saxpy.pipe" \
        >"$case_dir/out" 2>&1
    local n total
    total=$(sed -n 's/^compile: \([0-9]*\) jobs.*/\1/p' "$case_dir/out")
    n=$(grep -cE '^(ok  |skip|FAIL) \[[0-9]+/[0-9]+\] saxpy\.' "$case_dir/out")
    [ -n "$total" ] && [ "$n" = "$total" ] \
        || fail "$n progress lines for ${total:-?} jobs: $(head -n 3 "$case_dir/out" | tr '\n' '|')"
    grep -q "^FAIL \[$total/$total\] " "$case_dir/out" || fail "no [$total/$total] line"
}

c_cuda12_skipped() {
    # Without a CUDA 12.x nvcc the CUDA 12 suite says so, how to get one, and is skipped.
    case_pipegen
    local st=0
    CUDA12_NVCC=$case_dir/none "$root/tests/compile/cuda12.sh" "$pipegen" >"$case_dir/out" 2>&1 || st=$?
    [ $st = 0 ] || fail "exit status $st without a CUDA 12 nvcc"
    grep -q '^compile-cuda12: SKIPPED: no CUDA 12.x nvcc .*cuda-nvcc-12' "$case_dir/out" || fail "$(head -n 2 "$case_dir/out")"
    st=0
    CUDA12_NVCC=$case_dir/none PIPEGEN_SKIP_STATUS=77 "$root/tests/compile/cuda12.sh" "$pipegen" >/dev/null 2>&1 || st=$?
    [ $st = 77 ] || fail "exit status $st with PIPEGEN_SKIP_STATUS=77"
}

c_cuda12_guard() {
    # A CUDA 12 older than the generated code takes: each compile must stop first at the
    # version guard's #error (a stand-in nvcc that reports the one #error that fires under
    # CUDA 12, as nvcc would), and a compile that went through fails the suite.
    case_pipegen
    printf '%s\n' '#!/bin/sh' '[ "$1" = --version ] && { echo "Cuda compilation tools, release 12.9, V12.9.86"; exit 0; }' \
        'for a; do case $a in *.cu) f=$a;; esac; done' \
        '[ -n "${PASS:-}" ] && exit 0' \
        'h=${f%.cu}.cuh; n=$(grep -n "^#error .* for CUDA " "$h" | head -n 1 | cut -d: -f1)' \
        'echo "$h($n): error: #error directive: $(grep -m 1 "^#error .* for CUDA " "$h" | sed "s/^#error //")"' 'exit 1' \
        >"$case_dir/nvcc"
    chmod +x "$case_dir/nvcc"
    CUDA12_NVCC=$case_dir/nvcc "$root/tests/compile/cuda12.sh" "$pipegen" >"$case_dir/out" 2>&1 \
        || fail "the guard's refusals failed the suite: $(grep -m 2 FAIL "$case_dir/out" | tr '\n' ' ')"
    grep -q '^compile-cuda12: 6 passed, 0 failed$' "$case_dir/out" || fail "$(tail -n 1 "$case_dir/out")"
    PASS=1 CUDA12_NVCC=$case_dir/nvcc "$root/tests/compile/cuda12.sh" "$pipegen" >"$case_dir/out" 2>&1 \
        && fail "a CUDA 12 compile that went through passed"
    grep -q '^FAIL saxpy sync: CUDA 12.9 compiled it' "$case_dir/out" || fail "$(grep -m 1 FAIL "$case_dir/out")"
}

c_demo_incremental() {
    # make demo (scripts/build-samples.sh) does again only what changed.
    case_pipegen
    local out=$case_dir/samples second
    export PIPEGEN=$pipegen SAMPLES_OUT=$out NVCC=/nonexistent
    "$root/scripts/build-samples.sh" >"$case_dir/first" 2>&1 || fail "first run: $(tail -n 2 "$case_dir/first")"
    touch "$case_dir/mark"
    "$root/scripts/build-samples.sh" >"$case_dir/second" 2>&1
    second=$(grep -c ': up to date in ' "$case_dir/second")
    [ "$second" = "$(ls "$root"/samples/*/*.pipe | wc -l)" ] \
        || fail "second run: $(tr '\n' '|' <"$case_dir/second")"
    [ -z "$(find "$out" -type f -newer "$case_dir/mark")" ] || fail "the second run rewrote files"
    unset PIPEGEN SAMPLES_OUT NVCC
}

c_gpu_targets_without_gpu() {
    # No GPU: exit 0 with a message, or PIPEGEN_SKIP_STATUS (77).
    case_pipegen
    local bin script st
    bin=$(fake_path)
    for script in run bench runtime; do
        PATH=$bin "$root/tests/gpu/$script.sh" "$pipegen" >"$case_dir/out" 2>&1
        st=$?
        [ $st = 0 ] || fail "$script.sh without a GPU: exit $st"
        grep -q "no GPU on this machine" "$case_dir/out" || fail "$script.sh: $(cat "$case_dir/out")"
        PIPEGEN_SKIP_STATUS=77 PATH=$bin "$root/tests/gpu/$script.sh" "$pipegen" \
            >"$case_dir/out" 2>&1
        st=$?
        [ $st = 77 ] || fail "$script.sh with PIPEGEN_SKIP_STATUS=77: exit $st"
    done
}

c_gpu_ab_refusals() {
    # tests/gpu/ab.sh: bad arguments exit 2 with a message, before any GPU is asked for;
    # a run without a GPU exits 0 saying so (its tree: this one's build/pipegen).
    local bin st args
    bin=$(fake_path)
    for args in "" "run" "run x L -- ." "run 1 L" "run 1 L --" "run 1 -- ." "prepare" \
                "prepare no-such-revision" "run 1 L -- no-such-tree" "turns" "turns 1" "turns x L"; do
        # (the words of args are the arguments; L is one line)
        "$root/tests/gpu/ab.sh" $args >"$case_dir/out" 2>&1
        st=$?
        [ $st = 2 ] || fail "ab.sh $args: exit $st, expected 2"
        grep -qE "usage:|not a commit|no .*build/pipegen" "$case_dir/out" || fail "ab.sh $args: $(head -n 1 "$case_dir/out")"
    done
    [ -x "$root/build/pipegen" ] || return 0
    PATH=$bin "$root/tests/gpu/ab.sh" run 1 "saxpy cp.async per_tile" -- . >"$case_dir/out" 2>&1
    st=$?
    [ $st = 0 ] && grep -q "no GPU on this machine" "$case_dir/out" || fail "ab.sh run without a GPU: exit $st: $(head -n 1 "$case_dir/out")"
    PATH=$bin "$root/tests/gpu/ab.sh" turns 1 "saxpy cp.async per_tile" "saxpy tensor per_tile" >"$case_dir/out" 2>&1
    st=$?
    [ $st = 0 ] && grep -q "no GPU on this machine" "$case_dir/out" || fail "ab.sh turns without a GPU: exit $st: $(head -n 1 "$case_dir/out")"
}

# dry_run TARGET SHARD: `make TARGET GPU_SHARD=SHARD GPU_DRYRUN=1` (no GPU; pipegen and
# libpipert taken as they are); its output in $case_dir/dry.out, its status in status.
dry_run() {
    "$make" -C "$root" --no-print-directory -o build/pipegen -o build/libpipert.a "$1" \
        GPU_SHARD="$2" GPU_DRYRUN=1 >"$case_dir/dry.out" 2>&1
    status=$?
}
c_gpu_shards_partition() {
    # make gpu-check and make bench GPU_SHARD=K/N: for N = 1..4 every line of
    # tests/gpu/matrix is in exactly one shard, each shard lists its lines in matrix order,
    # and the watchdog and the runtime's tests are each in one shard of gpu-check; a line
    # with sizes: is the bench's only, one with record: gpu-check's only.
    local want target n k got lines wd rt
    for target in gpu-check bench; do
        want=$(awk -v check=$([ $target = gpu-check ] && echo 1 || echo 0) \
            'NF && $1 !~ /^#/ && !(check && / sizes:/) && !(!check && / record:/) {
                 $1 = $1; print "line " FNR ": " $0 }' \
            "$root/tests/gpu/matrix")
        [ "$(grep -c '' <<<"$want")" -gt 10 ] || fail "tests/gpu/matrix has no cases"
        for n in 1 2 3 4; do
            got='' wd=0 rt=0
            for ((k = 1; k <= n; ++k)); do
                dry_run $target $k/$n
                [ "$status" -eq 0 ] || { fail "$target GPU_SHARD=$k/$n: exit status $status: $(head -n 1 "$case_dir/dry.out")"; continue; }
                lines=$(grep '^line ' "$case_dir/dry.out")
                [ -n "$lines" ] || fail "$target GPU_SHARD=$k/$n: no cases"
                [ "$lines" = "$(sort -n -k2 <<<"$lines")" ] || fail "$target GPU_SHARD=$k/$n: not in matrix order"
                got+=$lines$'\n'
                wd=$((wd + $(grep -c '^watchdog$' "$case_dir/dry.out")))
                rt=$((rt + $(grep -c '^runtime$' "$case_dir/dry.out")))
            done
            [ "$(sort -n -k2 <<<"$got" | grep .)" = "$want" ] ||
                fail "$target: the $n shards are not a partition of the matrix: $(diff <(echo "$want") <(sort -n -k2 <<<"$got" | grep .) | grep '^[<>]' | head -n 3 | tr '\n' ' ')"
            [ $wd = $([ $target = gpu-check ] && echo 1 || echo 0) ] || fail "$target: $wd watchdog(s) in the $n shards"
            [ $rt = $([ $target = gpu-check ] && echo 1 || echo 0) ] || fail "$target: the runtime's tests in $rt of the $n shards"
        done
    done
}
c_gpu_record_line() {
    # A matrix line's record:LOWERING (build_case): the case's own wisdom file holds a
    # record of the spec's hash for ARCH on this GPU, and auto plans by it, each pack its
    # own lowering; a record auto would not apply as written (tensor packs no rows), one for
    # a GPU the line's targets leave out, one on a line that is not auto or has other
    # wisdom, each fails the build before nvcc. No GPU: nvcc stubbed.
    local d=$case_dir/case
    [ -x "$root/build/pipegen" ] || { fail "no build/pipegen"; return; }
    # record_build LOWERING [ARCH MECH FLAGS...]
    record_build() {
        rm -rf "$d"
        PG=$root/build/pipegen ARCH=${2:-sm_90} GPU="NVIDIA H200" NVCC=true bash -c \
            '. "$1/tests/gpu/lib.sh" && build_case test softmax_rows "$4" per_tile "$2" "${@:5}" "record:$3"' \
            _ "$root" "$d" "$1" "${3:-auto}" "${@:4}"
    }
    record_build barrier@256,pack2=cp.async,pack8=cp.async ||
        { fail "build_case with a record: $(tail -n 3 "$d/build.log")"; return; }
    grep -qx "$("$root/build/pipegen" --spec-hash "$root/samples/softmax/softmax_rows.pipe") sm_90 NVIDIA_H200 fixed barrier@256,pack2=cp.async,pack8=cp.async" \
        "$d/record.wisdom" || fail "record.wisdom: $(cat "$d/record.wisdom")"
    [ "$(sed -n 's/^\/\* Schedule for sm_90, lowering \([a-z.-]*\):.*/\1/p' "$d/softmax_rows.cu" | tr '\n' ' ')" = \
      "barrier cp.async barrier cp.async " ] ||
        fail "the unit's lowerings: $(grep '^/\* Schedule for' "$d/softmax_rows.cu")"
    grep -q "chosen by wisdom record.wisdom:1" "$d/softmax_rows.cu" || fail "no wisdom named in the unit"
    record_build tensor,pack2=cp.async && fail "build_case took a record it does not apply"
    grep -q "was not applied as written" "$d/build.log" || fail "build.log: $(tail -n 2 "$d/build.log")"
    record_build barrier@256 sm_90 auto --arch=sm_80,sm_90 || fail "a record of one of two targets: $(tail -n 2 "$d/build.log")"
    record_build barrier@256 sm_100 auto --arch=sm_80,sm_90 && fail "build_case took a record for a target the line lacks"
    grep -q "was not applied as written" "$d/build.log" || fail "build.log: $(tail -n 2 "$d/build.log")"
    record_build barrier@256 sm_90 cp.async && fail "build_case took a record on a cp.async line"
    record_build barrier@256 sm_90 auto wisdom && fail "build_case took a record beside the bench's wisdom"
    grep -q "needs an auto line with no other wisdom" "$d/build.log" || fail "build.log: $(cat "$d/build.log")"
    return 0
}
c_gpu_shard_refused() {
    local target bad
    for target in gpu-check bench; do
        for bad in 0/2 3/2 1/0 2 x/y 1/2/3; do
            dry_run $target $bad
            [ "$status" -eq 2 ] || fail "$target GPU_SHARD=$bad: exit status $status, expected 2"
            grep -q "bad GPU_SHARD '$bad'" "$case_dir/dry.out" || fail "$target GPU_SHARD=$bad: $(head -n 1 "$case_dir/dry.out")"
        done
    done
}

# report_has LINE...: tests/gpu/report.py's page from $case_dir/bench.csv holds each LINE
# whole; the page in $case_dir/performance.md.
report_has() {
    local md=$case_dir/performance.md want
    python3 "$root/tests/gpu/report.py" "$case_dir/bench.csv" "$md" GPU sm_90 13.0 2026-01-01 \
        >"$case_dir/out" 2>&1 || { fail "report.py: $(tail -n 3 "$case_dir/out")"; return; }
    for want; do
        grep -qxF -- "$want" "$md" || fail "report.py: no line '$want'"
    done
}
c_bench_wisdom() {
    # make bench BENCH_WISDOM=FILE: each auto line of the matrix (and no other) followed by
    # its twin with the flag wisdom, an unreadable file refused; make tune's specs: one per
    # sample benched under auto; without a GPU, tune says so; the report puts a twin in its
    # own section, out of the targets. No GPU.
    local autos twins bin st
    echo "# no records" >"$case_dir/w.wisdom"
    autos=$(awk 'NF && $1 !~ /^#/ && $2 == "auto" && !/ record:/' "$root/tests/gpu/matrix" | wc -l)
    BENCH_WISDOM=$case_dir/w.wisdom dry_run bench 1/1
    [ "$status" = 0 ] || { fail "bench with wisdom: exit $status: $(head -n 1 "$case_dir/dry.out")"; return; }
    twins=$(grep -c ' wisdom$' "$case_dir/dry.out")
    [ "$twins" = "$autos" ] || fail "bench: $twins wisdom twins for $autos auto lines"
    awk 'want != "" && $0 != want { bad = 1 }
         { want = ($4 == "auto" && $NF != "wisdom") ? $0 " wisdom" : "" }
         END { exit bad || want != "" }' "$case_dir/dry.out" ||
        fail "bench: an auto line not followed by its wisdom twin"
    BENCH_WISDOM=$case_dir/none.wisdom dry_run bench 1/1
    [ "$status" = 2 ] && grep -q "cannot read the wisdom file" "$case_dir/dry.out" ||
        fail "bench with a missing wisdom file: exit $status: $(head -n 1 "$case_dir/dry.out")"
    GPU_DRYRUN=1 "$root/tests/gpu/wisdom.sh" "$root/build/pipegen" >"$case_dir/tune.out" 2>&1
    [ "$(grep -c '^spec ' "$case_dir/tune.out")" = \
      "$(awk 'NF && $1 !~ /^#/ && $2 == "auto" && !/ record:/ { print $1 }' "$root/tests/gpu/matrix" | sort -u | wc -l)" ] ||
        fail "tune: not one spec per sample benched under auto: $(head -n 1 "$case_dir/tune.out")"
    # each spec tuned at the sizes of its bench's auto lines and no other (default: a line
    # without sizes:), a gpu-check line's record: aside
    awk 'FNR == NR { if (NF && $1 !~ /^#/ && $2 == "auto" && !/ record:/) {
                         s = "default"
                         for (i = 4; i <= NF; ++i)
                             if ($i ~ /^sizes:/) { s = substr($i, 7); gsub("x", ",", s) }
                         benched[$1 " " s] = 1 }
                     next }
         $1 == "spec" { n = split($5, z, "|")
                        for (i = 1; i <= n; ++i)
                            if (!(($2 " " z[i]) in benched)) { print $2 " " z[i]; bad = 1 } }
         END { exit bad }' "$root/tests/gpu/matrix" "$case_dir/tune.out" >"$case_dir/unbenched" ||
        fail "tune: sizes no bench line of the spec runs: $(tr '\n' ' ' <"$case_dir/unbenched")"
    if [ -x "$root/build/pipegen" ]; then
        bin=$(fake_path)
        PATH=$bin "$root/tests/gpu/wisdom.sh" "$root/build/pipegen" >"$case_dir/tune.out" 2>&1
        st=$?
        [ $st = 0 ] && grep -q "no GPU on this machine" "$case_dir/tune.out" ||
            fail "tune without a GPU: exit $st: $(head -n 1 "$case_dir/tune.out")"
    fi
    cat >"$case_dir/bench.csv" <<'EOF'
sample,lowering,grid,flags,value,reference,ratio,sameshape,ratio_sameshape,applies
jacobi2d,cp.async,per_tile,,2900.0,3000.0,0.967,2800.0,1.036,memcpy
jacobi2d,auto,per_tile,,2700.0,3000.0,0.900,2800.0,0.964,memcpy
jacobi2d,auto,per_tile,wisdom,2990.0,3000.0,0.997,2800.0,1.068,memcpy
EOF
    report_has \
        "| jacobi2d, best lowering | 0.90 | 0.967 | cudaMemcpy | cp.async per_tile | yes |" \
        "| jacobi2d |  | 0.967 | cp.async per_tile | 0.900 | 0.931 | 0.997 | 1.031 | cudaMemcpy |" \
        "| jacobi2d | auto | per_tile | wisdom | 2990.0 | 3000.0 | 0.997 | 2800.0 | 1.068 | cudaMemcpy |"
}
c_bench_report_shards() {
    # make bench-report over shards of a bench with BENCH_WISDOM: an auto line twice in its
    # shard (the line and its wisdom twin) is one line of the matrix; a line in two shards,
    # or one no shard ran, is refused. No GPU: two shards' rows and info by hand.
    local d=$case_dir k
    mkdir -p "$d/docs"
    for k in 1 2; do
        mkdir -p "$d/s$k"
        printf 'shard=%s/2\ntotal=3\nmatrix=m\ngpu=GPU\narch=sm_90\ncuda=13.0\ndate=2026-01-01\n' \
            "$k" >"$d/s$k/info"
        echo "order,sample,lowering,grid,flags,value,reference,ratio,sameshape,ratio_sameshape,applies" \
            >"$d/s$k/rows.csv"
    done
    echo "lines=4 9 9" >>"$d/s1/info"
    echo "lines=12" >>"$d/s2/info"
    cat >>"$d/s1/rows.csv" <<'EOF'
00004,saxpy,cp.async,per_tile,,3000.0,2980.0,1.007,3125.0,0.960,sameshape
00009,saxpy,auto,per_tile,,3010.0,2980.0,1.010,3100.0,0.971,sameshape
00009,saxpy,auto,per_tile,wisdom,3020.0,2980.0,1.013,3100.0,0.974,sameshape
EOF
    echo "00012,saxpy,tensor,per_tile,,2990.0,2980.0,1.003,3100.0,0.965,sameshape" >>"$d/s2/rows.csv"
    merge() { BENCH_DOCS=$d/docs BENCH_OUT=$d/b.csv "$root/tests/gpu/bench-report.sh" "$d/s1" "$d/s2" \
                  >"$d/out" 2>&1; }
    merge || { fail "bench-report with a wisdom twin: $(tail -n 2 "$d/out")"; return; }
    [ "$(grep -c '^saxpy,' "$d/b.csv")" = 4 ] || fail "bench-report: $(cat "$d/b.csv")"
    sed -n 2p "$d/b.csv" | grep -q '^saxpy,cp.async,' && sed -n 4p "$d/b.csv" | grep -q ',wisdom,' ||
        fail "bench-report: rows out of the matrix's order: $(cat "$d/b.csv")"
    grep -qF '| saxpy |  | 0.971 | auto per_tile | 0.971 | 1.000 | 0.974 | 1.003 |' "$d/docs/performance.md" ||
        fail "bench-report: no auto with and without wisdom: $(grep -A4 'with wisdom' "$d/docs/performance.md")"
    sed -i 's/^lines=12$/lines=9 12/' "$d/s2/info"
    merge && fail "bench-report took line 9 in two shards"
    grep -q "matrix line 9 in two shards" "$d/out" || fail "bench-report: $(cat "$d/out")"
    sed -i 's/^lines=9 12$/lines=/' "$d/s2/info"
    merge && fail "bench-report took shards that miss line 12"
    grep -q "the shards have 2 of the 3 matrix lines" "$d/out" || fail "bench-report: $(cat "$d/out")"
    return 0
}
# wisdom_current FILE GPU EVERY: every record of FILE (pipegen-tune's, tests/gpu) names a
# spec of the tuning set (make tune's, and saxpy and jacobi2d) under its hash as the spec
# is now, for the target its bench line builds (gemm_bf16's sm_90a), and auto takes it
# (--dump-ir names its line); with EVERY 1, every spec of the set has one (tune: every
# spec make tune tunes, not saxpy and jacobi2d, which no auto line benches). A spec edited
# since its tuning run has another hash: its record would be ignored without a word.
wisdom_current() {
    local file=$1 gpu=$2 every=$3 hashes=" " sample spec h line arch arches want extra
    local name=${1##*/}
    [ -x "$root/build/pipegen" ] || { fail "no build/pipegen"; return; }
    while read -r sample arches extra; do
        spec=$(bash -c '. "$1/tests/gpu/lib.sh" && spec_path "$2"' _ "$root" "$sample")
        h=$("$root/build/pipegen" --spec-hash "$spec") || { fail "$sample: no spec hash"; return; }
        hashes+="$h "
        line=$(grep -n "^$h " "$file" | head -n 1 | cut -d: -f1)
        if [ -z "$line" ]; then
            [ "$every" = 0 ] || [ "$every$extra" = tuneextra ] ||
                fail "$sample: no record in $name (make tune on the GPU)"
            continue
        fi
        arch=$(sed -n "${line}p" "$file" | cut -d' ' -f2)
        want=sm_90
        [[ ",$arches," == *,sm_90a,* ]] && want=sm_90a
        [ "$arch" = "$want" ] || fail "$sample: its record is for $arch, its bench line builds $want"
        "$root/build/pipegen" -w --wisdom="$file" --wisdom-gpu="$gpu" --arch="$arch" --dump-ir \
            "$spec" 2>&1 | grep -q "^wisdom: $name:$line " ||
            fail "$sample: auto does not take its record, $name:$line"
    done < <(GPU_DRYRUN=1 "$root/tests/gpu/wisdom.sh" "$root/build/pipegen" |
             awk '$1 == "spec" { print $2, $4 }'; printf 'saxpy - extra\njacobi2d - extra\n')
    while read -r h _; do
        [[ $hashes == *" $h "* ]] || fail "$name: record $h names no spec of the tuning set"
    done < <(grep -v '^#' "$file")
}
c_h100_wisdom_current() {
    # tests/gpu/h100.wisdom: a record for every spec of the tuning set. No GPU.
    wisdom_current "$root/tests/gpu/h100.wisdom" NVIDIA_H100_80GB_HBM3 1
}
c_h200_wisdom_current() {
    # tests/gpu/h200.wisdom: a record for every spec make tune tunes. No GPU.
    wisdom_current "$root/tests/gpu/h200.wisdom" NVIDIA_H200 tune
}
c_bench_report_references() {
    # tests/gpu/report.py holds each streaming row to the reference that applies to it:
    # the same-shape kernel where the row is not copy-shaped (saxpy, reduce_sum),
    # cudaMemcpy where it is (jacobi2d); the table shows both; a 3D stencil's target is the
    # best of its tile shapes at 512^3 (a row at the default size does not count). No GPU:
    # a CSV of bench's columns.
    local md=$case_dir/performance.md
    cat >"$case_dir/bench.csv" <<'EOF'
sample,lowering,grid,flags,value,reference,ratio,sameshape,ratio_sameshape,applies
saxpy,cp.async,per_tile,,3000.0,2980.0,1.007,3125.0,0.960,sameshape
saxpy,cg,per_tile,,3010.0,2980.0,1.010,3100.0,0.971,sameshape
jacobi2d,cp.async,per_tile,,2900.0,3000.0,0.967,2800.0,1.036,memcpy
reduce_sum,cp.async,persistent,,3000.0,2990.0,1.003,3075.0,0.976,sameshape
sgemm-4096,tensor,per_tile,,42.5,51.3,0.829,,,cublas
sgemm-8192,tensor,per_tile,,43.0,51.3,0.839,,,cublas
stencil7,tensor,per_tile,sizes:512x512x512,2400.0,2950.0,0.814,2800.0,0.857,memcpy
stencil7_big,tensor,per_tile,sizes:512x512x512,2800.0,2930.0,0.956,2800.0,1.000,memcpy
stencil7_big,tensor,per_tile,,2990.0,3000.0,0.997,2800.0,1.068,memcpy
EOF
    report_has \
        "| 3D 7-point stencil, 512^3, best lowering and tile | 0.85 | 0.956 | cudaMemcpy | stencil7_big tensor per_tile sizes:512x512x512 | yes |" \
        "| 3D 27-point stencil, 512^3, best lowering and tile | 0.85 | - | - | not measured | no |" \
        "| saxpy, every async lowering | 0.95 | 0.960 | same-shape | lowest of 2 async lowerings: cp.async per_tile | yes |" \
        "| jacobi2d, best lowering | 0.90 | 0.967 | cudaMemcpy | cp.async per_tile | yes |" \
        "| reduce_sum (bytes read), best lowering | 0.98 | 0.976 | same-shape | cp.async persistent | no |" \
        "| sgemm vs cuBLAS, best lowering | 0.70 | 0.829 | cuBLAS | tensor per_tile (worse of 4096^3 and 8192^3) | yes |" \
        "| saxpy | cp.async | per_tile |  | 3000.0 | 2980.0 | 1.007 | 3125.0 | 0.960 | same-shape |" \
        "| jacobi2d | cp.async | per_tile |  | 2900.0 | 3000.0 | 0.967 | 2800.0 | 1.036 | cudaMemcpy |"
    grep -q 'same-shape reference' "$md" || fail "report.py: the page does not say what the same-shape reference is"
}

# ------------------------------------------------------------------ run
run_cases $(cases_of "$0" "${args[@]}")
suite_end
