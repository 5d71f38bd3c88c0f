#!/usr/bin/env bash
# CLI tests: the options of pipegen, their exit statuses and messages, the files each run
# leaves behind (exactly those, and none at all on error), depfiles as gcc writes them.
# Every case runs in a fresh directory with a copy of samples/saxpy/saxpy.pipe (saxpy.pipe)
# and a spec with a semantic error (bad.pipe).
#
# usage: tests/cli/run.sh PIPEGEN [CASE...]
# One line per case; the last line is `cli: N passed, M failed`. Cases listed in `known`
# below are bugs that were reported and not fixed yet: they print "xfail" and do not count
# as failures, and one that starts passing fails the suite ("XPASS") so that it is taken
# off the list.
set -u

. "$(dirname "$0")/../lib.sh"
suite_start cli "PIPEGEN [CASE...]" "$@"
version=$(sed -n 's/^#define PIPEGEN_VERSION "\(.*\)"/\1/p' "$root/src/pipegen.h")

# Known failures (reported bugs), each with the reason shown on its xfail line.
declare -A known=(
)

# ------------------------------------------------------------------ helpers
# pg ARGS...: run pipegen in the case directory; stdout, stderr and the status are kept.
pg() {
    "$pipegen" "$@" >"$case_dir/.out" 2>"$case_dir/.err"
    status=$?
    out=$(cat "$case_dir/.out")
    err=$(cat "$case_dir/.err")
}
expect_status() { [ "$status" -eq "$1" ] || fail "exit status $status, expected $1 ($(head -c 200 "$case_dir/.err" | tr '\n' ' '))"; }
expect_out() { [ "$out" = "$1" ] || fail "stdout '$(head -c 300 <<<"$out")', expected '$1'"; }
expect_err() { [ "$err" = "$1" ] || fail "stderr '$(head -c 300 <<<"$err")', expected '$1'"; }
expect_out_has() { grep -qF -- "$1" "$case_dir/.out" || fail "stdout lacks '$1'"; }
expect_err_has() { grep -qF -- "$1" "$case_dir/.err" || fail "stderr lacks '$1'"; }
expect_out_lacks() { ! grep -qF -- "$1" "$case_dir/.out" || fail "stdout has '$1'"; }
expect_err_lacks() { ! grep -qF -- "$1" "$case_dir/.err" || fail "stderr has '$1'"; }
# The run succeeded and said one warning, this -Wperf one (TEXT: its start).
expect_one_perf_warning() {
    expect_status 0
    expect_err_has "$1"
    expect_err_has "[-Wperf]"
    [ "$(grep -c 'warning: ' <<<"$err")" = 1 ] || fail "not one warning: $err"
}
expect_no_err() { [ -z "$err" ] || fail "stderr not empty: $(head -c 200 <<<"$err")"; }
# quiet_plan SPEC FLAGS...: the spec plans for sm_90 with the flags, and nothing is said.
quiet_plan() { pg "$@" --arch=sm_90 --verify; expect_status 0; expect_no_err; }
expect_no_out() { [ -z "$out" ] || fail "stdout not empty: $(head -c 200 <<<"$out")"; }
# expect_files FILE...: the case directory holds exactly the fixtures and these files.
expect_files() {
    local want got
    want=$(printf '%s\n' bad.pipe saxpy.pipe "$@" | sort)
    got=$(cd "$case_dir" && find . -type f ! -name '.out' ! -name '.err' | sed 's|^\./||' | sort)
    [ "$got" = "$want" ] || fail "files: $(tr '\n' ' ' <<<"$got")expected: $(tr '\n' ' ' <<<"$want")"
}
expect_file_eq() { [ "$(cat "$case_dir/$1" 2>/dev/null)" = "$2" ] || fail "$1 is '$(head -c 300 "$case_dir/$1" 2>/dev/null)', expected '$2'"; }
# has_nvcc: whether there is an nvcc (NVCC, else on PATH, else /usr/local/cuda/bin); the
# cases that compile skip that half without it. nvcc_c FILE.cu [FLAG...]: nvcc -c of FILE
# for sm_80 with the runtime's headers into FILE.o, its messages in .nv.
nvcc_path() { echo "${NVCC:-$(command -v nvcc 2>/dev/null || echo /usr/local/cuda/bin/nvcc)}"; }
has_nvcc() { [ -x "$(nvcc_path)" ]; }
nvcc_c() {
    local f=$1
    shift
    "$(nvcc_path)" -c "$f" "$@" -I"$root/runtime" -gencode arch=compute_80,code=sm_80 -o "${f%.cu}.o" >.nv 2>&1
}
expect_file_has() { grep -qF -- "$2" "$case_dir/$1" 2>/dev/null || fail "$1 lacks '$2'"; }

# ------------------------------------------------------------------ cases
c_version() {
    pg --version
    expect_status 0; expect_out "pipegen $version"; expect_no_err; expect_files
}
c_help() {
    pg --help
    expect_status 0; expect_no_err; expect_files
    [[ $out == "usage: pipegen [options] SPEC.pipe"* ]] || fail "--help does not start with the usage line"
    local o
    for o in "-o FILE" "--output FILE" "--header FILE" "--lower NAME" "--arch LIST" \
             "--grid KIND" "--list-lowerings" "--verify" "--emit-test FILE" "--emit-bench FILE" \
             "-MD" "-MF FILE" "-MT TARGET" "-MQ TARGET" "-MP" "--no-lines" "--dump-ast" \
             "--dump-ir" "--version" "-h, --help" "-Wstages" "-Whints" "-Wperf" "-Wno-NAME" "-Werror" \
             "-w " "-fdiagnostics-color" "-fdiagnostics-format" "-ffile-prefix-map" "--  "; do
        expect_out_has "$o"
    done
}
# The option names of --help, and of the tables of docs/cli.md (first column).
help_options() {
    sed -n 's/^  \(-[^ ].*\)$/\1/p' <<<"$out" | sed 's/   .*//' | tr ',' '\n' \
        | sed 's/^ *//; s/[=[ ].*//' | grep '^-' | sort -u
}
doc_options() {
    sed -n 's/^| \(`-[^|]*\) |.*/\1/p' "$root/docs/cli.md" | grep -o '`-[^`]*`' | tr -d '`' \
        | sed 's/[=[ ].*//' | sort -u
}
c_help_matches_docs() {
    # Every option is in both --help and docs/cli.md.
    pg --help
    local diff
    diff=$(diff <(help_options) <(doc_options | grep -vx -- '-'))
    [ -z "$diff" ] || fail "--help (<) and docs/cli.md (>) differ: $(tr '\n' ' ' <<<"$diff")"
}
c_generated_api_listing() {
    # docs/generated-api.md shows one whole generated file: it is what pipegen writes.
    pg saxpy.pipe --lower=cp.async -o saxpy.cu
    expect_status 0; expect_no_err
    local doc
    doc=$(sed -n '/^<!-- generated: pipegen saxpy.pipe --lower=cp.async -o saxpy.cu -->$/,/^<!-- end generated -->$/p' \
          "$root/docs/generated-api.md" | sed '1,2d;$d' | sed '$d')
    [ -n "$doc" ] || fail "no generated listing in docs/generated-api.md"
    [ "$doc" = "$(cat saxpy.cu)" ] ||
        fail "docs/generated-api.md's listing is not today's output: $(diff <(echo "$doc") saxpy.cu | head -n 4 | tr '\n' ' ')"
    rm -f saxpy.cu saxpy.cuh
}
c_no_input() {
    # As gcc: no usage dump, one line.
    pg
    expect_status 1; expect_no_out; expect_err "pipegen: error: no input files"
    pg -o k.cu --verify
    expect_status 1; expect_err "pipegen: error: no input files"
}
c_gcc_warning_options() {
    # -Wall and -Wextra are taken as gcc takes them (every class is on already; a -Wno-NAME
    # given too still wins, whatever the order); an unknown -Wno-NAME is ignored as gcc
    # ignores it, an unknown -WNAME is still an error.
    local stages=$'pipeline s {\n  in float x[n];\n  out float z[n];\n  tile z[256];\n  stages 4;\n  compute elementwise (i) { z[i] = x[i]; }\n}'
    echo "$stages" >s.pipe
    pg s.pipe -Wall -Wextra --verify
    expect_status 0; expect_err_has "[-Wstages]"
    pg s.pipe -Wno-stages -Wall -Wextra --verify
    expect_status 0; expect_no_err
    pg saxpy.pipe -Wno-frobnicate -Wno-unused-variable --verify
    expect_status 0; expect_no_err
    pg saxpy.pipe -Wfrobnicate --verify
    expect_status 1; expect_err_has "unknown warning option '-Wfrobnicate'"
    rm -f s.pipe
    expect_files
}
c_verbose() {
    # -v as gcc's: the version and what the run does, on standard error; alone, the version.
    pg -v
    expect_status 0; expect_no_out; expect_err_has "pipegen version $version"
    pg -v saxpy.pipe -o k.cu
    expect_status 0; expect_no_out
    expect_err_has "pipegen version $version"
    expect_err_has "reading saxpy.pipe"
    expect_err_has "sm_80: cp.async"
    expect_err_has "proven"
    expect_err_has "writing k.cu"
    expect_err_has "writing k.cuh"
    pg -v saxpy.pipe -o k2.cu -fdiagnostics-format=json
    expect_status 0; expect_err "[]"
    rm -f k.cu k.cuh k2.cu k2.cuh
    expect_files
}
c_unknown_long_option_suggests() {
    pg saxpy.pipe --verfy
    expect_status 1; expect_err "pipegen: error: unknown option '--verfy'; did you mean '--verify'?"
    pg saxpy.pipe --lowr=bulk
    expect_status 1; expect_err "pipegen: error: unknown option '--lowr=bulk'; did you mean '--lower'?"
    pg saxpy.pipe --emit-tset t.cu
    expect_status 1; expect_err "pipegen: error: unknown option '--emit-tset'; did you mean '--emit-test'?"
    expect_files
}
c_list_lowerings() {
    pg --list-lowerings
    expect_status 0; expect_no_err; expect_files
    local names
    names=$(awk '{print $1}' <<<"$out" | tr '\n' ' ')
    [ "$names" = "sync cg barrier pipeline pipeline-roles pipeline-thread primitives cp.async cp.async.mbarrier bulk tensor auto " ] \
        || fail "names: $names"
    # NAME ARCH STATUS, ARCH as docs/lowerings.md says.
    local want_arch="sync=all cg=sm_80 barrier=sm_80 pipeline=sm_80 pipeline-roles=sm_80 pipeline-thread=sm_80 primitives=sm_80 cp.async=sm_80 cp.async.mbarrier=sm_80 bulk=sm_90 tensor=sm_90 auto=all "
    local arch
    arch=$(awk '{printf "%s=%s ", $1, $2}' <<<"$out")
    [ "$arch" = "$want_arch" ] || fail "architectures: $arch"
    local bad
    bad=$(awk '{s=$3; for (i = 4; i <= NF; ++i) s = s " " $i} s != "implemented" && s != "not implemented yet"' <<<"$out")
    [ -z "$bad" ] && [ "$(grep -c '' <<<"$out")" = 12 ] || fail "status column: $bad"
    for n in sync cp.async auto; do
        grep -qE "^$n +[a-z_0-9]+ +implemented$" <<<"$out" || fail "$n is not implemented"
    done
}
c_default_output_names() {
    pg saxpy.pipe
    expect_status 0; expect_no_out; expect_no_err
    expect_files saxpy.cu saxpy.cuh
    expect_file_has saxpy.cu "// Code generated by pipegen $version from saxpy.pipe. DO NOT EDIT."
    expect_file_has saxpy.cu '#include "saxpy.cuh"'
    expect_file_has saxpy.cuh "#ifndef PIPEGEN_SAXPY_CUH_"
}
c_output_beside() {
    mkdir gen
    pg saxpy.pipe -o gen/k.cu
    expect_status 0; expect_no_out; expect_no_err
    expect_files gen/k.cu gen/k.cuh
    expect_file_has gen/k.cu '#include "k.cuh"'
    expect_file_has gen/k.cuh "#ifndef PIPEGEN_K_CUH_"
    # #line directives name the spec as given and the source by its base name.
    expect_file_has gen/k.cu '"saxpy.pipe"'
    grep -q '^#line [0-9]* "k.cu"$' gen/k.cu || fail "no #line back into k.cu"
    grep -q "$case_dir" gen/k.cu && fail "an absolute path in the output"
}
c_stdout() {
    pg saxpy.pipe -o saxpy.cu
    mv saxpy.cu file.cu && rm saxpy.cuh
    pg saxpy.pipe -o -
    expect_status 0; expect_no_err
    expect_files file.cu
    expect_out_has "// Code generated by pipegen $version from saxpy.pipe. DO NOT EDIT."
    expect_out_has '#include "saxpy.cuh"'
    # The same text as -o saxpy.cu, with #line back into "<stdout>".
    sed 's/^\(#line [0-9]*\) "<stdout>"$/\1 "saxpy.cu"/' .out >stdout.cu
    cmp -s stdout.cu file.cu || fail "-o - differs from -o saxpy.cu beyond the #line names"
    rm -f stdout.cu
}
c_stdout_with_header() {
    pg saxpy.pipe -o - --header inc.cuh
    expect_status 0; expect_no_err
    expect_files inc.cuh
    expect_out_has '#include "inc.cuh"'
    expect_file_has inc.cuh "struct saxpy_args {"
}
c_header_option() {
    mkdir inc
    pg saxpy.pipe -o k.cu --header inc/api.cuh
    expect_status 0; expect_no_out; expect_no_err
    expect_files k.cu inc/api.cuh
    expect_file_has k.cu '#include "inc/api.cuh"'
    expect_file_has inc/api.cuh "#ifndef PIPEGEN_API_CUH_"
}
c_drivers() {
    pg saxpy.pipe -o k.cu --emit-test=t.cu --emit-bench=b.cu
    expect_status 0; expect_no_out; expect_no_err
    expect_files k.cu k.cuh t.cu b.cu
    expect_file_has t.cu '#include "k.cuh"'
    expect_file_has b.cu '#include "k.cuh"'
}
c_bench_default_sizes() {
    # larger than an H100's L2 whatever literal extents the tile's array has: 2^28
    # elements shared by its size symbols (softmax: rows of 1024), else the old defaults
    local spec want
    for spec in "softmax/softmax.pipe:{262144}" "softmax/softmax8k.pipe:{32768}" \
                "jacobi2d/jacobi2d.pipe:{16384, 16384}" "saxpy/saxpy.pipe:{268435456}" \
                "rmsnorm/rmsnorm.pipe:{16384, 8192}" "rowmax/rowstats.pipe:{1638, 1638}" \
                "transpose/transpose_batched.pipe:{640, 640, 640}"; do
        want=${spec#*:}
        pg "$root/samples/${spec%%:*}" -o k.cu --emit-bench=b.cu
        expect_status 0
        expect_file_has b.cu "int64_t v[$(($(tr -cd , <<<"$want" | wc -c) + 1))] = $want;"
    done
}
c_depfile_md() {
    mkdir gen
    pg saxpy.pipe -o gen/k.cu -MD
    expect_status 0; expect_no_out; expect_no_err
    expect_files gen/k.cu gen/k.cuh gen/k.cu.d
    expect_file_eq gen/k.cu.d "gen/k.cu gen/k.cuh: saxpy.pipe"
}
c_depfile_mf_mt() {
    pg saxpy.pipe -o k.cu -MD -MF deps/../k.deps -MT 'all-gen'
    expect_status 1   # deps/ does not exist: nothing is written
    expect_files
    pg saxpy.pipe -o k.cu -MD -MF k.deps -MT all-gen
    expect_status 0; expect_no_err
    expect_files k.cu k.cuh k.deps
    expect_file_eq k.deps "all-gen: saxpy.pipe"
}
c_depfile_mf_alone() {
    # As with gcc, -MF names the depfile but only -MD asks for one.
    pg saxpy.pipe -o k.cu -MF k.deps
    expect_status 0; expect_files k.cu k.cuh
}
c_depfile_several_mt() {
    pg saxpy.pipe -o k.cu -MD -MF k.d -MT one -MT two
    expect_status 0
    expect_file_eq k.d "one two: saxpy.pipe"
}
c_depfile_escapes_spaces() {
    cp saxpy.pipe 'my spec.pipe'
    pg 'my spec.pipe' -o 'o u t.cu' -MD
    expect_status 0
    expect_file_eq 'o u t.cu.d' 'o\ u\ t.cu o\ u\ t.cuh: my\ spec.pipe'
    rm -f 'my spec.pipe' 'o u t.cu' 'o u t.cuh' 'o u t.cu.d'
}
c_error_writes_nothing() {
    mkdir gen
    pg bad.pipe -o gen/k.cu --header gen/h.cuh --emit-test=gen/t.cu --emit-bench=gen/b.cu -MD
    expect_status 1; expect_no_out
    expect_err_has "bad.pipe:5:12: error: unknown array 'w'"
    expect_files
}
c_error_keeps_old_output() {
    echo OLD >k.cu
    pg bad.pipe -o k.cu
    expect_status 1
    expect_file_eq k.cu OLD
    expect_files k.cu
}
c_unwritable_directory() {
    pg saxpy.pipe -o missing/k.cu
    expect_status 1; expect_err_has "cannot write 'missing/k.cu'"; expect_files
    touch plain
    pg saxpy.pipe -o plain/k.cu --emit-test=t.cu
    expect_status 1; expect_err_has "cannot write 'plain/k.cu'"; expect_files plain
    if [ "$(id -u)" != 0 ]; then   # root writes into a read-only directory anyway
        mkdir ro && chmod 555 ro
        pg saxpy.pipe -o ro/k.cu -MD
        expect_status 1; expect_err_has "cannot write 'ro/k.cu'"; expect_files plain
        chmod 755 ro
    fi
}
c_unwritable_reason() {
    # The reason is the directory's where the file exists but no file can be made beside it
    # (a replaced file is replaced through a new one), not "No such file or directory".
    [ -f /proc/version ] || { echo "     (no /proc: not checked)" >&2; return; }
    pg saxpy.pipe -o k.cu -MD -MF /proc/version
    expect_status 1
    expect_err "pipegen: error: cannot write '/proc/version': cannot create a file in '/proc' to replace it: its file system takes no new files"
    pg saxpy.pipe -o /proc/k.cu
    expect_status 1
    expect_err "pipegen: error: cannot write '/proc/k.cu': cannot create a file in '/proc': its file system takes no new files"
    expect_files
}
c_unwritable_driver() {
    # The source and header are ready when the test driver cannot be written: none stays.
    mkdir gen
    pg saxpy.pipe -o gen/k.cu --emit-test=missing/t.cu
    expect_status 1; expect_err_has "cannot write 'missing/t.cu'"; expect_files
    pg saxpy.pipe -o gen/k.cu --emit-bench=missing/b.cu -MD
    expect_status 1; expect_err_has "cannot write 'missing/b.cu'"; expect_files
    pg saxpy.pipe -o gen/k.cu -MD -MF missing/k.d
    expect_status 1; expect_err_has "cannot write 'missing/k.d'"; expect_files
}
c_error_after_rename_leaves_nothing() {
    mkdir -p gen/h.cuh
    pg saxpy.pipe -o gen/k.cu --header gen/h.cuh
    expect_status 1; expect_err_has "cannot write 'gen/h.cuh'"
    [ -e gen/k.cu ] && fail "gen/k.cu was left behind"
    rmdir gen/h.cuh
}
c_same_output_twice() {
    pg saxpy.pipe -o k.cu --header k.cu
    expect_status 1; expect_files
    pg saxpy.pipe -o k.cu --emit-test=k.cu
    expect_status 1; expect_files
}
c_output_is_input() {
    # No output may overwrite the spec, whatever option names it.
    cp saxpy.pipe orig.pipe
    local args
    for args in "-o saxpy.pipe" "-o k.cu --header saxpy.pipe" "-o k.cu --emit-test=saxpy.pipe" \
                "-o k.cu --emit-bench=./saxpy.pipe" "-o k.cu -MD -MF $PWD/saxpy.pipe"; do
        # shellcheck disable=SC2086
        pg saxpy.pipe $args
        expect_status 1; expect_err_has "would overwrite the input 'saxpy.pipe'"
        cmp -s saxpy.pipe orig.pipe || { fail "$args replaced the spec"; cp orig.pipe saxpy.pipe; }
    done
    rm -f orig.pipe
    expect_files
}
c_output_aliases() {
    # Two spellings of one file (missing or existing, or a hard link) are one output.
    local args
    for args in "-o dup.cu --header ./dup.cu" "-o a.cu --emit-test=$PWD/a.cu" \
                "-o a.cu -MD -MF ./a.cu" "-o gen/../a.cu --header a.cu"; do
        mkdir -p gen
        # shellcheck disable=SC2086
        pg saxpy.pipe $args
        expect_status 1; expect_err_has "two outputs would be written to one file"
        rmdir gen
        expect_files
    done
    echo OLD >k.cu && ln k.cu k2.cu
    pg saxpy.pipe -o k.cu --header k2.cu
    expect_status 1; expect_err_has "two outputs would be written to one file ('k.cu' and 'k2.cu')"
    expect_file_eq k.cu OLD
    expect_files k.cu k2.cu
}
c_output_not_regular() {
    # A symbolic link, a FIFO or a directory is never replaced (-o - is standard output).
    echo TARGET >target
    ln -s target link.cu
    mkfifo fifo.cu
    local o
    for o in link.cu fifo.cu; do
        pg saxpy.pipe -o k.cu --emit-test="$o"
        expect_status 1; expect_err "pipegen: error: cannot write '$o': not a regular file"
    done
    [ -L link.cu ] && [ -p fifo.cu ] || fail "an output replaced the link or the FIFO"
    expect_file_eq target TARGET
    rm -f link.cu fifo.cu
    expect_files target
}
c_output_mode_kept() {
    echo OLD >k.cu && chmod 600 k.cu
    (umask 027 && "$pipegen" saxpy.pipe -o k.cu --emit-test=t.cu)
    status=$?
    expect_status 0
    [ "$(stat -c %a k.cu)" = 600 ] || fail "k.cu's mode became $(stat -c %a k.cu), expected 600"
    [ "$(stat -c %a t.cu)" = 640 ] || fail "new t.cu has mode $(stat -c %a t.cu), expected 640 (umask 027)"
    expect_files k.cu k.cuh t.cu
}
c_temp_files_exclusive() {
    # The temporary files are new files (O_EXCL, O_NOFOLLOW): a symlink planted under the
    # name is not followed; and their names are not the predictable OUT.tmp.PID.
    command -v strace >/dev/null 2>&1 || { echo "     (no strace: not checked)" >&2; return; }
    strace -f -o trace -e trace=open,openat "$pipegen" saxpy.pipe -o k.cu >/dev/null 2>&1
    grep -E 'k\.cuh?[^"]*tmp' trace | grep -v 'O_CREAT|O_EXCL|O_NOFOLLOW' | head -n 1 \
        | grep . && fail "a temporary file opened without O_CREAT|O_EXCL|O_NOFOLLOW"
    grep -qE "k\.cu\.tmp\.[0-9]+\"" trace && fail "a temporary file named OUT.tmp.PID"
    grep -qE 'k\.cu[^"]*tmp.*O_EXCL' trace || fail "no temporary file opened"
    rm -f trace
    expect_files k.cu k.cuh
}
shim() {   # build the LD_PRELOAD shim once per run
    [ -f "$tmp/shim.so" ] || ${CC:-cc} -shared -fPIC -o "$tmp/shim.so" "$root/tests/cli/shim.c" -ldl
}
c_write_error_full_disk() {
    # A write that fails (a full disk) is an error and leaves the old file untouched.
    shim || { fail "cannot build the shim"; return; }
    echo OLD >k.cu
    PG_SHIM_WRITE=enospc LD_PRELOAD=$tmp/shim.so pg saxpy.pipe -o k.cu --emit-test=t.cu
    expect_status 1; expect_err "pipegen: error: cannot write 'k.cu': No space left on device"
    expect_file_eq k.cu OLD
    expect_files k.cu
}
c_write_error_stdout() {
    # Standard output on a full device: every command that prints fails.
    local args
    for args in "saxpy.pipe -o -" "saxpy.pipe --dump-ast" "saxpy.pipe --dump-ir" \
                "--list-lowerings" "--help" "--version"; do
        # shellcheck disable=SC2086
        "$pipegen" $args >/dev/full 2>.err
        status=$?; err=$(cat .err)
        expect_status 1; expect_err_has "pipegen: error: cannot write '<stdout>': "
    done
    expect_files
}
c_commit_all_or_none() {
    # The second rename fails: the first output is put back as it was.
    shim || { fail "cannot build the shim"; return; }
    echo OLD >k.cu && echo OLDH >k.cuh
    PG_SHIM_RENAME=2 LD_PRELOAD=$tmp/shim.so pg saxpy.pipe -o k.cu
    expect_status 1; expect_err "pipegen: error: cannot write 'k.cuh': Input/output error"
    expect_file_eq k.cu OLD; expect_file_eq k.cuh OLDH
    rm k.cuh
    PG_SHIM_RENAME=2 LD_PRELOAD=$tmp/shim.so pg saxpy.pipe -o k.cu --emit-test=t.cu
    expect_status 1; expect_file_eq k.cu OLD
    expect_files k.cu
}
c_stdout_closed_pipe() {
    # Standard output a pipe nobody reads (pipegen ... | head -c 10): the write error is
    # reported, exit 1, instead of a silent death by SIGPIPE (141).
    mkfifo p
    exec 3<>p 4>p 3<&-   # fd 4: the pipe's write end, its only reader closed
    local args
    for args in "saxpy.pipe -o -" "saxpy.pipe --dump-ir" "--help"; do
        # shellcheck disable=SC2086
        "$pipegen" $args >&4 2>.err
        status=$?; err=$(cat .err)
        expect_status 1; expect_err "pipegen: error: cannot write '<stdout>': Broken pipe"
    done
    exec 4>&-
    rm -f p
    expect_files
}
c_file_size_limit() {
    # Past ulimit -f a write fails (EFBIG) instead of SIGXFSZ killing pipegen with its
    # temporary files left behind: reported, the old output kept, nothing left.
    echo OLD >k.cu
    (ulimit -f 1 && exec "$pipegen" saxpy.pipe -o k.cu) >.out 2>.err
    status=$?; err=$(cat .err)
    expect_status 1; expect_err "pipegen: error: cannot write 'k.cu': File too large"
    expect_file_eq k.cu OLD
    (ulimit -f 1 && exec "$pipegen" saxpy.pipe -o -) >big.out 2>.err
    status=$?; err=$(cat .err)
    expect_status 1; expect_err "pipegen: error: cannot write '<stdout>': File too large"
    rm -f big.out
    expect_files k.cu
}
c_signals_remove_temp_files() {
    # SIGINT, SIGQUIT, SIGHUP or SIGTERM while writing (as kill sends it): no temporary file
    # stays, the old outputs are untouched, and the process ends by the signal. During the
    # renames the signal waits: every output is placed, no backup (.old-*) stays.
    shim || { fail "cannot build the shim"; return; }
    local sig dfl=()
    # A shell started in the background (make check &) ignores SIGINT and SIGQUIT, and so
    # does pipegen, as a program should: give it the default actions where env can.
    env --default-signal true 2>/dev/null && dfl=(env --default-signal)
    for sig in 2 3 1 15; do
        echo OLD >k.cu
        # In a subshell of its own, whose "Terminated" goes nowhere; no core for SIGQUIT.
        (ulimit -c 0; PG_SHIM_WRITE=signal:$sig LD_PRELOAD=$tmp/shim.so "${dfl[@]}" "$pipegen" saxpy.pipe -o k.cu -MD >.out 2>.err; exit $?) 2>/dev/null
        status=$?
        expect_status $((128 + sig))
        expect_file_eq k.cu OLD
        expect_files k.cu
        echo OLD >k.cuh
        (ulimit -c 0; PG_SHIM_RENAME=signal:$sig LD_PRELOAD=$tmp/shim.so "${dfl[@]}" "$pipegen" saxpy.pipe -o k.cu -MD >.out 2>.err; exit $?) 2>/dev/null
        status=$?
        expect_status $((128 + sig))
        expect_file_has k.cu "struct saxpy_args"
        expect_files k.cu k.cuh k.cu.d
        rm -f k.cuh k.cu.d
    done
}
c_long_output_names() {
    # Names up to NAME_MAX (255) are written, and replaced: the temporary and backup names
    # beside them fit too. k...k.cu is 253 characters, its header 254, its depfile 255.
    local base
    base=$(printf 'k%.0s' $(seq 250))
    local i
    for i in 1 2; do
        pg saxpy.pipe -o "$base.cu" -MD
        expect_status 0; expect_no_err
    done
    expect_file_has "$base.cu.d" "$base.cu $base.cuh: saxpy.pipe"
    pg saxpy.pipe -o "$base.cu" --header "${base}k.cuh"
    expect_status 0; expect_no_err
    pg saxpy.pipe -o "${base}kkk.cu"
    expect_status 1; expect_err "pipegen: error: cannot write '${base}kkk.cu': File name too long"
    rm -f "$base.cu" "$base.cuh" "$base.cu.d" "${base}k.cuh"
    expect_files
}
c_file_names_escaped() {
    # A '"', a backslash or a newline in a file name is escaped where the name is pasted
    # into code (#line, the banner); a header name that no #include can spell is refused.
    local spec=$'q"x\\\nz.pipe'
    cp saxpy.pipe "$spec"
    pg "$spec" -o 'o"u.cu' --header h.cuh --emit-test='t"1.cu'
    expect_status 0
    local f bad
    for f in 'o"u.cu' 't"1.cu'; do
        bad=$(grep '^#line' "$f" | grep -vE '^#line [0-9]+ "([^"\\]|\\.)*"$' | head -n 1)
        [ -z "$bad" ] || fail "$f: malformed $bad"
        [[ $(head -n 1 "$f") == *'DO NOT EDIT.' ]] || fail "$f: the banner is not one line"
    done
    expect_file_has 'o"u.cu' '#line 14 "q\"x\\\012z.pipe"'
    expect_file_has 'o"u.cu' '"o\"u.cu"'
    pg "$spec" -o k.cu --header 'h"1.cuh'
    expect_status 1
    expect_err "pipegen: error: the header 'h\"1.cuh' cannot be named in an #include (a '\"' or a control character in its name)"
    rm -f "$spec" 'o"u.cu' h.cuh 't"1.cu'
    expect_files
}
c_watchdog_strict() {
    local v
    for v in nan NaN inf -inf 1e19 5x '' 0x; do
        pg saxpy.pipe --watchdog="$v" -o k.cu
        expect_status 1; expect_err "pipegen: error: bad --watchdog '$v' (expected a number of cycles)"
    done
    expect_files
}
# The names of the sweep: macros of the compiler and the standard headers, keywords, the
# generated code's own names (pipeline sw: sw_launch, sw_args), and ordinary names that
# must keep working (min, y0, index: functions a local may hide).
sweep_names=(linux unix M_PI M_E INT64_MAX SIZE_MAX RAND_MAX HUGE_VAL BUFSIZ CUDART_VERSION
    typeof workspace workspace_bytes pipegen_half pipegen_bf16 errno assert NULL EOF stdin
    __typeof__ asm typeof_unqual INT_MAX UINT32_MAX CHAR_BIT FLT_MAX DBL_EPSILON
    EXIT_SUCCESS MB_CUR_MAX FP_NAN M_SQRT2 INFINITY i386 EINVAL CUDA_VERSION sw_launch
    sw_args min max y0 index alpha)
# sweep_spec ROLE NAME...: a spec declaring each name as a parameter or as an array.
sweep_spec() {
    local role=$1 n decl= use=x[i]
    shift
    for n in "$@"; do
        if [ "$role" = param ]; then decl+="  param float $n;"$'\n'; use+=" * $n"
        else decl+="  in float $n[n];"$'\n'; use+=" + $n[i]"; fi
    done
    printf 'pipeline sw {\n%s  in  float x[n];\n  out float z[n];\n  tile z[256];\n  stage x;\n  compute elementwise (i) { z[i] = %s; }\n}\n' \
        "$decl" "$use"
}
c_names_sweep() {
    # Each name, as a parameter and as an array, is either refused at its declaration
    # (file:line:col naming it) or compiles: nvcc -c of the output of one spec declaring
    # every name accepted (skipped without nvcc).
    local role n accepted
    for role in param array; do
        accepted=()
        for n in "${sweep_names[@]}"; do
            sweep_spec "$role" "$n" >s.pipe
            pg s.pipe -o s.cu
            if [ "$status" = 0 ]; then
                accepted+=("$n")
            elif ! grep -q "^s.pipe:2:[0-9]*: error: '$n': " .err; then
                fail "$role $n: refused without its place: $(head -n 1 .err)"
            fi
        done
        [ ${#accepted[@]} -ge 5 ] || fail "$role: only ${#accepted[@]} names accepted"
        has_nvcc || continue
        sweep_spec "$role" "${accepted[@]}" >s.pipe
        pg s.pipe -o s.cu
        expect_status 0
        nvcc_c s.cu ||
            fail "$role: nvcc rejects the names ${accepted[*]}: $(grep -m 3 error .nv | tr '\n' ' ')"
    done
    rm -f s.pipe s.cu s.cuh s.o .nv
    expect_files
}
c_name_made_a_macro() {
    # A declared name that a header or -D made a macro stops the compile of the generated
    # header with an #error naming the spec's line, before the name is used (nvcc: the
    # whole source; without it the preprocessor over the header's guards).
    sed 's/^  in    float y\[n\];/  in    float foo[n];/; s/ + y\[i\]/ + foo[i]/; s/^  stage   x, y;/  stage   x, foo;/' saxpy.pipe >m.pipe
    pg m.pipe -o k.cu
    expect_status 0
    local want="#error \"m.pipe:5:15: 'foo' is a macro here (defined by a header or -D): rename it in the spec\""
    grep -qxF "$want" k.cuh || fail "k.cuh lacks '$want'"
    [ "$(grep -n '^#ifdef foo$' k.cuh | cut -d: -f1)" -lt "$(grep -n '^struct saxpy_args' k.cuh | cut -d: -f1)" ] ||
        fail "the guard of foo is not before the struct"
    local n
    for n in a x foo n z i; do
        grep -qx "#ifdef $n" k.cuh || fail "no guard for '$n'"
    done
    sed -n '/^#ifdef /,/^#endif/p' k.cuh >guard.h
    ${CC:-cc} -E -x c -Dfoo=1 guard.h >/dev/null 2>.cc && fail "-Dfoo=1 passes the guards"
    grep -qF "m.pipe:5:15: 'foo' is a macro here" .cc || fail "cc: no #error naming foo: $(head -c 200 .cc)"
    ${CC:-cc} -E -x c guard.h >/dev/null 2>.cc || fail "the guards fire without a macro"
    if has_nvcc; then
        nvcc_c k.cu -Dfoo=1 && fail "nvcc -Dfoo=1 compiles"
        grep -q "k.cuh.*error.*m.pipe:5:15: 'foo' is a macro here" .nv ||
            fail "nvcc: no #error naming foo: $(head -c 300 .nv)"
        [ "$(grep -c "error:" .nv)" = 1 ] || fail "nvcc: more than the #error: $(head -c 300 .nv)"
    fi
    rm -f m.pipe k.cu k.cuh k.o guard.h .cc .nv
    expect_files
}
# stamp_of FILE: the stamp a header defines, or that a source or driver checks.
stamp_of() {
    sed -n 's/^#define PIPEGEN_[A-Z0-9_]*_CUH_STAMP \(0x[0-9a-f]*\)$/\1/p; s/^#if !defined(PIPEGEN_[A-Z0-9_]*_CUH_STAMP) || PIPEGEN_[A-Z0-9_]*_CUH_STAMP != \(0x[0-9a-f]*\)$/\1/p' "$1"
}
c_concurrent_runs() {
    # Ten runs at once writing one -o, of two specs in turn, round after round: every run
    # exits 0 and says nothing (a link() racing another run's rename failed one in a
    # hundred), and the pair left is one run's (o.cu of one spec beside o.cuh of the other,
    # all exiting 0, in one round in 25), its stamps equal, no temporary file left.
    sed 's/^  param float a;/  param double a;/' saxpy.pipe >two.pipe
    local spec k round pids st ok=1
    for spec in saxpy two; do
        pg $spec.pipe -o o.cu
        expect_status 0
        mv o.cu $spec.cu; mv o.cuh $spec.cuh
    done
    cmp -s saxpy.cuh two.cuh && fail "the two specs give one header"
    for round in $(seq 25); do
        pids=()
        for k in 0 1 2 3 4 5 6 7 8 9; do
            spec=saxpy; [ $((k % 2)) = 1 ] && spec=two
            "$pipegen" $spec.pipe -o o.cu 2>.err$k &
            pids+=($!)
        done
        for k in 0 1 2 3 4 5 6 7 8 9; do
            wait "${pids[$k]}"; st=$?
            [ $st = 0 ] && [ ! -s .err$k ] ||
                { fail "round $round: a run exited $st: $(head -c 200 .err$k)"; ok=0; }
        done
        { cmp -s o.cu saxpy.cu && cmp -s o.cuh saxpy.cuh; } ||
            { cmp -s o.cu two.cu && cmp -s o.cuh two.cuh; } ||
            { fail "round $round: o.cu and o.cuh are not one run's"; ok=0; }
        [ -n "$(stamp_of o.cuh)" ] && [ "$(stamp_of o.cu)" = "$(stamp_of o.cuh)" ] ||
            { fail "round $round: the stamps '$(stamp_of o.cu)' and '$(stamp_of o.cuh)' differ"; ok=0; }
        [ $ok = 1 ] || break
    done
    rm -f two.pipe saxpy.cu saxpy.cuh two.cu two.cuh o.cu o.cuh .err?
    expect_files
}
c_stamp_mismatch() {
    # A source compiled with a header of another run stops at compile time: the
    # preprocessor over the stamp's define and check, and nvcc over the pair where there
    # is one; the drivers check it too.
    sed 's/^  param float a;/  param double a;/' saxpy.pipe >two.pipe
    pg two.pipe -o o.cu
    mv o.cuh two.cuh
    pg saxpy.pipe -o o.cu --emit-test=t.cu --emit-bench=b.cu
    expect_status 0
    local s
    s=$(stamp_of o.cuh)
    [[ $s == 0x???????????????? ]] || fail "o.cuh defines no 64-bit stamp: '$s'"
    [ "$(stamp_of two.cuh)" != "$s" ] || fail "two specs give one stamp"
    for f in o.cu t.cu b.cu; do
        [ "$(stamp_of $f)" = "$s" ] || fail "$f checks '$(stamp_of $f)', not o.cuh's $s"
    done
    local msg="#error \"this source and o.cuh come from different pipegen runs: run pipegen on saxpy.pipe again\""
    grep -qxF "$msg" o.cu || fail "o.cu lacks '$msg'"
    { grep '_STAMP 0x' o.cuh; sed -n '/^#if .*_STAMP/,/^#endif/p' o.cu; } >pair.h
    ${CC:-cc} -E -x c pair.h >/dev/null 2>.cc || fail "the pair's own stamps differ: $(head -c 200 .cc)"
    { grep '_STAMP 0x' two.cuh; sed -n '/^#if .*_STAMP/,/^#endif/p' o.cu; } >pair.h
    ${CC:-cc} -E -x c pair.h >/dev/null 2>.cc && fail "another run's stamp passes"
    grep -qF "different pipegen runs" .cc || fail "cc: no #error: $(head -c 200 .cc)"
    if has_nvcc; then
        mv two.cuh o.cuh
        nvcc_c o.cu && fail "nvcc compiles o.cu with another run's o.cuh"
        grep -q "o.cu.*error.*this source and o.cuh come from different pipegen runs" .nv ||
            fail "nvcc: no #error: $(head -c 300 .nv)"
    fi
    # The stamp is the header's text: a source written to standard output checks the
    # header another run of the same spec writes.
    pg saxpy.pipe -o -
    mv .out stdout.cu
    pg saxpy.pipe
    [ "$(stamp_of saxpy.cuh)" = "$(stamp_of stdout.cu)" ] || fail "-o - checks another stamp than saxpy.cuh's"
    rm -f two.pipe two.cuh o.cu o.cuh t.cu b.cu o.o pair.h .cc .nv saxpy.cu saxpy.cuh stdout.cu
    expect_files
}
c_many_params_linear() {
    # 10,000 params: linear memory (growth arrays double; it took 3.2 GB) and a clear error
    # where the kernel's parameters pass CUDA's 32764 bytes.
    { echo "pipeline p {"
      for i in $(seq 10000); do echo "  param float p$i;"; done
      printf '%s\n' "  in float x[n];" "  out float z[n];" "  tile z[256];" \
          "  compute elementwise (i) { z[i] = x[i]; }" "}"; } >many.pipe
    (ulimit -v 500000 && exec timeout 20 "$pipegen" many.pipe --verify) >.out 2>.err
    status=$?; err=$(cat .err)
    expect_status 1
    expect_err_has "many.pipe:4095:15: error: the kernel's parameters pass CUDA's limit of 32764 bytes here (10000 parameters, 2 arrays)"
    rm -f many.pipe
}
c_emit_test_needs_reference() {
    sed '/^  reference/,/^  }/d' saxpy.pipe >noref.pipe
    grep -q reference noref.pipe && { fail "noref.pipe still has a reference"; return; }
    pg noref.pipe -o k.cu --emit-test=t.cu
    expect_status 1
    expect_err "noref.pipe:2:1: error: --emit-test needs a 'reference' body in pipeline 'saxpy'
pipeline saxpy {
^"
    rm -f noref.pipe
    expect_files
}
c_workspace_bytes_null_args() {
    # NAME_workspace_bytes(NULL, NULL) returns 0 instead of reading through NULL: the
    # generated function, compiled on the host with the generated header.
    local inc=${CUDA_HOME:-/usr/local/cuda}/include
    [ -f "$inc/cuda_runtime_api.h" ] || { echo "     (no CUDA headers: not checked)" >&2; return; }
    local spec args fn
    for spec in "$root/samples/reduce_sum/reduce_sum.pipe:reduce_sum" "saxpy.pipe --grid=persistent:saxpy"; do
        args=${spec%:*} fn=${spec##*:}
        # shellcheck disable=SC2086
        pg $args -o k.cu
        expect_status 0
        { echo '#include "k.cuh"'
          sed -n "/^extern \"C\" size_t ${fn}_workspace_bytes/,/^}/p" k.cu
          echo "int main(void) { return ${fn}_workspace_bytes(NULL, NULL) != 0; }"; } >ws.cpp
        grep -q "_workspace_bytes(const" ws.cpp || fail "$fn: no workspace function"
        ${CXX:-c++} -fsanitize=address,undefined -I"$root/runtime" -I"$inc" -o ws ws.cpp 2>.cc ||
            { fail "$fn: does not compile: $(head -c 300 .cc)"; continue; }
        ./ws >/dev/null 2>&1 || fail "${fn}_workspace_bytes(NULL, NULL) is not 0 (status $?)"
        rm -f k.cu k.cuh ws.cpp ws .cc
    done
    expect_files
}
c_unknown_option() {
    pg saxpy.pipe --frobnicate
    expect_status 1; expect_no_out
    expect_err "pipegen: error: unknown option '--frobnicate' (pipegen --help)"
    expect_files
    pg -x saxpy.pipe
    expect_status 1; expect_err_has "unknown option '-x'"
}
c_missing_argument() {
    local o
    for o in -o --header -MF -MT; do
        pg saxpy.pipe "$o"
        expect_status 1; expect_err "pipegen: error: option '$o' needs an argument"
    done
    expect_files
}
c_two_inputs() {
    pg saxpy.pipe bad.pipe
    expect_status 1; expect_err "pipegen: error: more than one input file"; expect_files
}
c_unreadable_input() {
    pg nothere.pipe -o k.cu
    expect_status 1; expect_err "pipegen: error: cannot read 'nothere.pipe': No such file or directory"
    expect_files
}
c_input_is_directory() {
    pg . -o k.cu
    expect_status 1; expect_err "pipegen: error: cannot read '.': Is a directory"
    expect_files
}
c_input_too_large() {
    # A spec past 16 MiB is refused as it is read, from a file, a device or a pipe (it
    # grew to gigabytes reading /dev/zero); a spec of 16 MiB exactly is read.
    local limit=$((16 * 1024 * 1024))
    (ulimit -v 600000 && exec timeout 20 "$pipegen" /dev/zero --verify) >.out 2>.err
    status=$?; err=$(cat .err)
    expect_status 1; expect_err "pipegen: error: cannot read '/dev/zero': larger than 16 MiB"
    (ulimit -v 600000 && exec timeout 20 "$pipegen" - --verify </dev/zero) >.out 2>.err
    status=$?; err=$(cat .err)
    expect_status 1; expect_err "pipegen: error: cannot read '<stdin>': larger than 16 MiB"
    head -c $((limit + 1)) /dev/zero | (ulimit -v 600000 && exec "$pipegen" - --verify) >.out 2>.err
    status=$?; err=$(cat .err)
    expect_status 1; expect_err "pipegen: error: cannot read '<stdin>': larger than 16 MiB"
    { cat saxpy.pipe; head -c $((limit - $(wc -c <saxpy.pipe))) /dev/zero | tr '\0' ' '; } >big.pipe
    pg big.pipe --verify
    expect_status 0; expect_no_err
    echo >>big.pipe
    pg big.pipe --verify
    expect_status 1; expect_err "pipegen: error: cannot read 'big.pipe': larger than 16 MiB"
    rm -f big.pipe
    expect_files
}
c_stdin_input() {
    "$pipegen" - -o k.cu <saxpy.pipe >.out 2>.err
    status=$?
    expect_status 0; expect_files k.cu k.cuh
    expect_file_has k.cu "struct saxpy_args"
}
c_arch() {
    pg saxpy.pipe --arch=sm_90,sm_80,sm_90 -o k.cu
    expect_status 0; expect_no_err
    # Deduplicated and sorted: one schedule per architecture; sm_90's kernel is sm_80's
    # (the same IR), printed once and listed once among the variants.
    [ "$(grep -c '^__global__ void .* saxpy_sm80(' k.cu)" = 1 ] || fail "no single saxpy_sm80"
    [ "$(grep -c 'saxpy_sm90' k.cu)" = 0 ] || fail "sm_90's twin of sm_80's kernel printed"
    grep -q '^static const int saxpy_sm\[1\] = {80};' k.cu || fail "variants are not {80}"
    pg saxpy.pipe --arch=sm_90,sm_80 --dump-ir
    [ "$(grep -c '^schedule ' .out)" = 2 ] || fail "not one schedule per architecture"
    pg saxpy.pipe --arch=sm_86 --dump-ir
    expect_status 0; expect_out_has " sm_86 "
    [ "$(grep -c '^schedule ' .out)" = 1 ] || fail "--arch=sm_86: not one schedule"
    local bad
    for bad in sm_75 sm_8 sm_80x sm_80,,sm_90 80 sm_80:sm_90; do
        pg saxpy.pipe --arch="$bad" -o k.cu
        expect_status 1; expect_no_out
        expect_err_has "bad --arch '$bad'"
    done
    rm -f k.cu k.cuh
    expect_files
}
c_arch_empty() {
    pg saxpy.pipe --arch= -o k.cu
    expect_status 1; expect_err_has "bad --arch ''"; expect_files
}
c_lower() {
    pg saxpy.pipe --lower=bogus -o k.cu
    expect_status 1; expect_no_out
    expect_err "pipegen: error: --lower=bogus: unknown lowering 'bogus' (pipegen --list-lowerings lists them)"
    expect_files
    pg saxpy.pipe --lower=sync --dump-ir
    expect_status 0; expect_out_has "mech=sync sm_80"; expect_out_has "mech=sync sm_90"
    pg saxpy.pipe --lower=auto --dump-ir
    expect_status 0; expect_out_has "mech=cp.async sm_80"
    # An unimplemented (or sm_90-only) lowering is an error that writes nothing.
    local m
    for m in $("$pipegen" --list-lowerings | awk '$3 != "implemented" {print $1}'); do
        pg saxpy.pipe --lower="$m" -o k.cu
        expect_status 1; expect_err_has "error: "; expect_err_has "$m"
    done
    expect_files
}
c_not_implemented_names_quoted() {
    # "not implemented yet" quotes the lowering's name, as the other messages quote names.
    local m
    for m in $("$pipegen" --list-lowerings | awk '$3 != "implemented" {print $1}'); do
        pg saxpy.pipe --lower="$m" -o k.cu
        expect_status 1
        expect_err "pipegen: error: --lower=$m: lowering '$m' is not implemented yet (pipegen --list-lowerings)"
    done
    sed 's/^  tile    z\[2048\];/  tile    z[2046];/' saxpy.pipe >odd.pipe
    pg odd.pipe --lower=tensor --arch=sm_90 -o k.cu
    expect_status 1
    expect_err_has "is not implemented yet by lowering 'tensor' ("
    rm -f odd.pipe
    expect_files
}
c_grid() {
    pg saxpy.pipe --grid=per_tile --dump-ir
    expect_status 0; expect_out_has "grid=per_tile"
    pg saxpy.pipe --grid=persistent --dump-ir
    expect_status 0; expect_out_has "grid=persistent"
    pg saxpy.pipe --grid=diagonal
    expect_status 1
    expect_err "pipegen: error: bad --grid 'diagonal' (expected per_tile or persistent)"
    expect_files
}
c_plane_walk_launch_bounds() {
    # A whole 3D tile with a halo walked in adjacent rows: its launch bounds keep the blocks
    # its shared memory holds (tensor's 57600-byte slot: 3; cp.async's 51840 bytes: 4), but
    # at least 64 registers a thread (4 blocks of 256 threads, 2 of 512).
    local k=$root/tests/kernels
    pg "$k/stencil27_big.pipe" --lower=tensor --arch=sm_90 --dump-ir
    expect_status 0; expect_out_has "plane walk: 4 adjacent rows a thread"
    expect_out_has "launch bounds: 256 threads, 3 blocks an SM"
    pg "$k/stencil27_big.pipe" --lower=cp.async --arch=sm_90 -o k.cu
    expect_status 0
    grep -q '__launch_bounds__(256, 4) stencil27_big_sm90' k.cu || fail "cp.async: $(grep -m1 __launch_bounds__ k.cu)"
    grep -q 'const int pg_l1 = (int)threadIdx.x / 64 \* 4 + pg_q;' k.cu || fail "no walk of 4 rows"
    # the default targets: sm_80's shared memory holds 3 such blocks, so its kernel is
    # another (one kernel for both took sm_80's bound on sm_90)
    pg "$k/stencil27_big.pipe" --lower=cp.async -o k.cu
    expect_status 0
    grep -q '__launch_bounds__(256, 3) stencil27_big_sm80' k.cu || fail "sm_80: $(grep -m1 __launch_bounds__ k.cu)"
    grep -q '__launch_bounds__(256, 4) stencil27_big_sm90' k.cu || fail "no sm_90 kernel of its own"
    pg "$k/stencil7_wide.pipe" --lower=tensor --arch=sm_90 --dump-ir
    expect_status 0; expect_out_has "launch bounds: 512 threads, 2 blocks an SM"
    # 4 x 8 x 64 tiles: 8 blocks by shared memory, 4 by 64 registers a thread
    pg "$k/stencil7.pipe" --lower=tensor --arch=sm_90 --dump-ir
    expect_status 0; expect_out_has "plane walk: 2 adjacent rows a thread"
    expect_out_has "launch bounds: 256 threads, 4 blocks an SM"
    # producer warps leave 224 computing threads, no whole rows of 64: no walk, no bound
    pg "$k/stencil27_big.pipe" --lower=pipeline-roles --arch=sm_90 --dump-ir
    expect_status 0
    case $out in *"plane walk:"* | *"launch bounds:"*) fail "pipeline-roles walks rows" ;; esac
    rm -f k.cu k.cuh
    expect_files
}
c_verify_and_dumps_write_nothing() {
    pg saxpy.pipe --verify -o k.cu
    expect_status 0; expect_no_out; expect_no_err
    pg saxpy.pipe --dump-ast -o k.cu
    expect_status 0; expect_out_has "(pipeline saxpy @"
    pg saxpy.pipe --dump-ir -o k.cu
    expect_status 0; expect_out_has "schedule saxpy mech="
    pg bad.pipe --verify
    expect_status 1; expect_err_has "unknown array 'w'"
    expect_files
}
c_cuda_version_guard() {
    # The header (and so the source) refuses a CUDA older than 13.0 with its reason (the
    # preprocessor over the guard, CUDART_VERSION as cuda_runtime_api.h defines it).
    pg saxpy.pipe -o k.cu
    expect_status 0
    sed -n '/CUDART_VERSION/,/^#endif/p' k.cuh >guard.h
    ${CC:-cc} -E -x c -DCUDART_VERSION=12090 guard.h >/dev/null 2>.cc &&
        fail "CUDA 12.9 passes the guard"
    grep -q 'for CUDA 13.0 or newer' .cc || fail "no #error naming CUDA 13.0: $(head -c 200 .cc)"
    ${CC:-cc} -E -x c -DCUDART_VERSION=13000 guard.h >/dev/null 2>.cc || fail "CUDA 13.0 refused"
    rm -f k.cu k.cuh guard.h .cc
    expect_files
}
c_readme_license_and_cuda() {
    # The README states the license (LICENSE is its text) and the CUDA the guard asks for.
    grep -q '^MIT License$' "$root/LICENSE" 2>/dev/null || fail "no MIT LICENSE"
    grep -q '^MIT: see \[LICENSE\](LICENSE)' "$root/README.md" || fail "README states no license"
    local min
    min=$(sed -n 's/^#define PIPEGEN_MIN_CUDART \([0-9]*\)$/\1/p' "$root/src/pipegen.h")
    [ -n "$min" ] || { fail "no PIPEGEN_MIN_CUDART"; return; }
    grep -q "^CUDA $((min / 1000)).$((min % 1000 / 10)) or newer" "$root/README.md" ||
        fail "README does not state CUDA $((min / 1000)).$((min % 1000 / 10)) or newer"
    [ -f "$root/CHANGELOG.md" ] || fail "no CHANGELOG.md"
}
c_no_lines() {
    pg saxpy.pipe --no-lines -o k.cu --emit-test=t.cu
    expect_status 0
    grep -q '^#line' k.cu t.cu && fail "#line with --no-lines"
    pg saxpy.pipe -o k.cu
    grep -q '^#line [0-9]* "saxpy.pipe"$' k.cu || fail "no #line without --no-lines"
}
c_driver_lines_name_the_driver() {
    # A #line in a driver names the spec or the driver itself, never another file.
    pg saxpy.pipe -o k.cu --emit-test=t.cu --emit-bench=b.cu
    expect_status 0
    local f others
    for f in t.cu b.cu; do
        others=$(sed -n 's/^#line [0-9]* "\(.*\)"$/\1/p' "$f" | sort -u | grep -vx -e saxpy.pipe -e "$f")
        [ -z "$others" ] || fail "$f has #line into $(tr '\n' ' ' <<<"$others")"
    done
}
c_inject_fault() {
    pg saxpy.pipe --inject-fault=bogus
    expect_status 1; expect_err "pipegen: error: unknown fault kind 'bogus'"
    expect_files
    # The verifier catches the fault: exit 1, its rule in the message, nothing written.
    pg saxpy.pipe --lower=cp.async --inject-fault=drop-wait -o k.cu --emit-test=t.cu
    expect_status 1; expect_err_has "error: [cp.async] RAW: "
    expect_files
    # --no-verify writes the faulty schedule anyway (to see it fail on a GPU).
    pg saxpy.pipe --lower=cp.async --inject-fault=drop-wait --no-verify -o k.cu
    expect_status 0; expect_files k.cu k.cuh
    rm -f k.cu k.cuh
    # A fault that does not apply to the lowering: exit 2 (tests/mutation counts it apart).
    pg saxpy.pipe --lower=cp.async --inject-fault=flip-parity -o k.cu
    expect_status 2; expect_err_has "fault 'flip-parity' is not applicable to the cp.async lowering"
    expect_files
}
c_producer_warps() {
    pg saxpy.pipe --producer-warps=32
    expect_status 1; expect_err "pipegen: error: bad --producer-warps '32' (expected 0 to 31)"
    pg saxpy.pipe --producer-warps=one
    expect_status 1; expect_err "pipegen: error: bad --producer-warps 'one' (expected 0 to 31)"
    pg saxpy.pipe --producer-warps=8 -o k.cu
    expect_status 1
    expect_err "pipegen: error: --producer-warps=8: 8 producer warps leave no consumer warp in a block of 256 threads"
    pg saxpy.pipe --producer-warps=2 --lower=cp.async.mbarrier --dump-ir
    expect_status 0; expect_out_has "acquire step=t"
    pg saxpy.pipe --producer-warps=2 --lower=sync -o k.cu
    expect_status 1; expect_err_has "not by the sync lowering"
    expect_files
}
c_auto_producer_warps() {
    # auto (given or the spec's default) with producer warps is cp.async.mbarrier, which
    # plans them, on every architecture; cp.async would refuse them.
    pg saxpy.pipe --producer-warps=2 --lower=auto --dump-ir
    expect_status 0; expect_no_err
    expect_out_has "mech=cp.async.mbarrier sm_80"; expect_out_has "mech=cp.async.mbarrier sm_90"
    expect_out_has "producer: acquire step=t"
    pg saxpy.pipe --producer-warps=2 -o k.cu
    expect_status 0; expect_no_err
    sed 's/^  threads 256;/  threads 256;\n  producer_warps 1;/' saxpy.pipe >pw.pipe
    grep -q '^  producer_warps 1;$' pw.pipe || fail "pw.pipe has no producer_warps item"
    pg pw.pipe --dump-ir
    expect_status 0; expect_no_err
    expect_out_has "mech=cp.async.mbarrier sm_80"; expect_out_has "mech=cp.async.mbarrier sm_90"
    pg pw.pipe --producer-warps=0 --dump-ir
    expect_status 0; expect_out_has "mech=cp.async sm_80"
    rm -f pw.pipe
    expect_files k.cu k.cuh
}
c_auto_per_arch() {
    # auto tries tensor on sm_90 for a product of staged operands (sgemm) and keeps it when
    # it plans: cp.async on sm_80, tensor on sm_90, the maps encoded for the sm_90 kernel
    # only. Where tensor refuses the spec (rows of 12 bytes: no 16-byte copies) auto takes
    # cp.async on sm_90 too, without a word; a spec that is no product stays on cp.async.
    cp "$root/samples/sgemm/sgemm.pipe" sg.pipe
    pg sg.pipe --dump-ir
    expect_status 0; expect_no_err
    expect_out_has "mech=cp.async sm_80"; expect_out_has "mech=tensor sm_90"
    expect_out_has "encode-tensor-map A box=256x32 for-sm_90"
    sed 's/by 32;/by 3;/; s/\[k : 32\]/[k : 3]/; s/\[k : 32\]\[n0/[k : 3][n0/' sg.pipe >sg3.pipe
    grep -q 'A\[m0 : 256\]\[k : 3\]' sg3.pipe || fail "sg3.pipe: no 3-wide step"
    pg sg3.pipe --dump-ir
    expect_status 0; expect_no_err
    expect_out_has "mech=cp.async sm_90"
    grep -q "tensor" "$case_dir/.out" && fail "tensor kept where it refuses the spec"
    pg saxpy.pipe --arch=sm_90 --dump-ir
    expect_status 0; expect_out_has "mech=cp.async sm_90"
    # A hint is for whichever of auto's lowerings takes it: swizzle (tensor's) is no
    # warning on sgemm, and is one on saxpy, where no lowering auto picks takes it.
    sed 's/^  stage   A\[m0 : 256\]\[k : 32\];/  stage   A[m0 : 256][k : 32] swizzle 128;/' sg.pipe >sw.pipe
    grep -q 'swizzle 128' sw.pipe || fail "sw.pipe has no swizzle"
    pg sw.pipe --verify; expect_status 0; expect_no_err
    sed 's/^  stage   x, y;/  stage   x, y swizzle 32;/' saxpy.pipe >h.pipe
    pg h.pipe --verify; expect_status 0
    expect_err_has "warning: the auto lowering ignores 'swizzle'"
    rm -f sg.pipe sg3.pipe sw.pipe h.pipe
    expect_files
}
c_cluster_per_target() {
    # gemm_bf16's `cluster 2` is planned for tensor on the arch-specific target only: there
    # B is multicast, the kernel runs in clusters (__cluster_dims__) and the launcher sizes
    # a grid of clusters for that variant alone; tensor on plain sm_90, and cp.async, are
    # told they ignore it.
    cp "$root/samples/gemm_bf16/gemm_bf16.pipe" g.pipe
    pg g.pipe --arch=sm_80,sm_90a --dump-ir
    expect_status 0; expect_no_err
    # `stages 4, 2`: 4 slots of 56 KiB where they fit (sm_90), 2 on sm_80; the roles trade
    # registers on the arch-specific target only
    expect_out_has "mech=tensor sm_90 slots=4 smem=230384 threads=384 grid=per_tile cluster=2"
    expect_out_has "mech=cp.async.mbarrier sm_80 slots=2 smem=129024 threads=384 grid=per_tile"
    expect_out_has "registers: launch 168, producers keep 40, consumers take 232"
    expect_out_has "multicast B"
    expect_out_has "release cluster step=t bar=empty per_warp"
    expect_out_has "cluster-grid 2 for-sm_90"
    expect_out_has "encode-tensor-map B box=160x64 swizzle=128 for-sm_90"
    pg g.pipe --arch=sm_80,sm_90a -o k.cu
    expect_status 0
    grep -q "PG_CLUSTER_DIMS(2) gemm_bf16_sm90" k.cu || fail "the sm_90 kernel is not in clusters"
    grep -q "PG_CLUSTER_DIMS(2) gemm_bf16_sm80" k.cu && fail "the sm_80 kernel is in clusters"
    pg g.pipe --lower=tensor --arch=sm_90 --dump-ir
    expect_status 0
    expect_err_has "warning: the tensor lowering for sm_90 ignores 'cluster 2': multicast is for the arch-specific target (--arch=sm_90a)"
    grep -q "cluster" "$case_dir/.out" && fail "clusters planned for plain sm_90"
    grep -q "registers:" "$case_dir/.out" && fail "setmaxnreg planned for plain sm_90"
    pg g.pipe --lower=cp.async.mbarrier --arch=sm_80 --dump-ir
    expect_status 0
    expect_err_has "warning: the cp.async.mbarrier lowering ignores 'cluster 2'"
    rm -f g.pipe k.cu k.cuh
    expect_files
}
c_registers_per_target() {
    # setmaxnreg is PTX for the arch-specific targets only: a plain target never shares the
    # kernel that trades registers, whichever of the two is the arch-specific one.
    printf '%s\n' "pipeline r {" "  in float x0[n];" "  in float x1[n];" "  out float z[n];" \
        "  threads 384; stages 4; grid persistent; producer_warps 4;" "  tile z[4096];" \
        "  stage x0, x1;" "  compute elementwise (i) { z[i] = x0[i] + x1[i]; }" "}" >r.pipe
    pg r.pipe --lower=bulk --arch=sm_90a,sm_100 -o k.cu
    expect_status 0; expect_no_err
    grep -q "__launch_bounds__(384, 1) r_sm90(" k.cu || fail "sm_90a's kernel does not trade registers"
    grep -q "__launch_bounds__(384) r_sm100(" k.cu || fail "sm_100 shares sm_90a's kernel"
    [ "$(grep -c 'pg_regs_' k.cu)" = 2 ] || fail "setmaxnreg outside sm_90a's kernel"
    pg r.pipe --lower=bulk --arch=sm_90,sm_100a -o k.cu
    expect_status 0; expect_no_err
    grep -q "__launch_bounds__(384) r_sm90(" k.cu || fail "plain sm_90 trades registers"
    grep -q "__launch_bounds__(384, 1) r_sm100(" k.cu || fail "sm_100a's kernel does not trade registers"
    pg r.pipe --lower=bulk --arch=sm_90a,sm_100a -o k.cu
    expect_status 0; expect_no_err
    grep -q "r_sm100(" k.cu && fail "two arch-specific targets with one plan have two kernels"
    rm -f r.pipe k.cu k.cuh
    expect_files
}
c_cluster_dropped_by_auto() {
    # auto tries tensor first for a matmul on sm_90; where tensor does not plan the spec
    # (w's 12 rows do not split in 8 shares), the lowering it falls back to ignores
    # `cluster`, and says so rather than dropping it quietly.
    sed 's/ using tensor//' "$root/tests/errors/204_cluster_uneven_share.pipe" >u.pipe
    pg u.pipe --arch=sm_90a --dump-ir
    expect_status 0
    expect_err_has "u.pipe:8:3: warning: auto's tensor kernel for sm_90 does not plan this spec (--lower=tensor says why): the cp.async.mbarrier kernel it takes instead ignores 'cluster 8' [-Whints]"
    expect_out_has "mech=cp.async.mbarrier sm_90"
    pg u.pipe --arch=sm_90a --dump-ir -Wno-hints
    expect_status 0; expect_no_err
    rm -f u.pipe
    expect_files
}
c_claims_where_they_can() {
    # A persistent grid claims its work items from a tile counter in the workspace where
    # every thread meets at a block barrier each step; not with producer warps, not with
    # accumulators (their bits would vary), never on a per-tile grid.
    pg saxpy.pipe --grid=persistent --lower=bulk --arch=sm_90 --dump-ir
    expect_status 0; expect_no_err
    expect_out_has "mech=bulk sm_90 slots=4 smem=65536 threads=256 grid=persistent claim_ring=7"
    expect_out_has "  claim step=t+5"
    expect_out_has "  tile-counter"
    expect_out_has "pg_counter=tile-counter"
    pg saxpy.pipe --grid=persistent --lower=bulk --arch=sm_90 -o k.cu
    expect_status 0
    grep -q "PIPERT_TRY(cudaMemsetAsync(pg_counter, 0, 8, pg_stream));" k.cu ||
        fail "the launcher does not zero the tile counter"
    grep -q "return 8;" k.cu || fail "saxpy_workspace_bytes is not 8"
    pg saxpy.pipe --grid=persistent --lower=bulk --arch=sm_90 --producer-warps=1 --dump-ir
    expect_status 0
    grep -q "claim" "$case_dir/.out" && fail "claims planned with producer warps"
    cp "$root/samples/reduce_sum/reduce_sum.pipe" r.pipe
    pg r.pipe --grid=persistent --dump-ir
    expect_status 0
    grep -q "claim" "$case_dir/.out" && fail "claims planned with accumulators"
    pg saxpy.pipe --grid=per_tile -o k.cu
    expect_status 0
    grep -q "workspace" k.cuh && fail "a per-tile grid has a workspace"
    rm -f r.pipe k.cu k.cuh
    expect_files
}
c_l2_policy_only_where_used() {
    # A stage's `evict` policy (createpolicy) is made under the lowerings whose copies take
    # it (cp.async, cp.async.mbarrier, bulk, tensor); under the others it would be made and
    # never used.
    sed 's/^  stage   x, y;.*/  stage   x, y evict first;/' saxpy.pipe >ev.pipe
    grep -q 'evict first' ev.pipe || { fail "ev.pipe has no evict option"; return; }
    local m arch
    while read -r m arch; do
        # (a lowering for sm_90 only refuses the default targets, which include sm_80)
        [ "$arch" = sm_90 ] || arch=sm_80,sm_90
        pg ev.pipe --lower="$m" --arch="$arch" -o k.cu </dev/null
        expect_status 0
        case $m in
        cp.async | cp.async.mbarrier | bulk | tensor)
            expect_file_has k.cu "const uint64_t pg_pol_x = pg_l2_policy<2>();" ;;
        *)
            grep -q 'pg_pol_' k.cu && fail "$m makes an L2 policy it never uses" ;;
        esac
    done < <("$pipegen" --list-lowerings | awk '$3 == "implemented" && $1 != "auto" {print $1, $2}')
    rm -f ev.pipe k.cu k.cuh
    expect_files
}
c_watchdog() {
    pg saxpy.pipe --watchdog=abc
    expect_status 1; expect_err "pipegen: error: bad --watchdog 'abc' (expected a number of cycles)"
    pg saxpy.pipe --watchdog=0
    expect_status 1; expect_err_has "bad --watchdog '0'"
    pg saxpy.pipe --lower=cp.async.mbarrier --watchdog -o w.cu
    expect_status 0; expect_file_has w.cu 2000000000
    pg saxpy.pipe --lower=cp.async.mbarrier --watchdog=1e6 -o m.cu
    expect_status 0; expect_file_has m.cu 1000000
    pg saxpy.pipe --lower=cp.async.mbarrier -o n.cu
    grep -q 2000000000 n.cu && fail "a watchdog without --watchdog"
    expect_files w.cu w.cuh m.cu m.cuh n.cu n.cuh
}
c_deterministic() {
    # Two runs differ only in the names of their outputs (and the header's stamp, a hash
    # of its text, which names its guard after the file).
    pg saxpy.pipe -o a.cu --emit-test=ta.cu --emit-bench=ba.cu
    pg saxpy.pipe -o b.cu --emit-test=tb.cu --emit-bench=bb.cu
    local same='s/B_CUH_/A_CUH_/g; s/"b\.cu"/"a.cu"/; s/\(["/ ]\)b\.cuh\>/\1a.cuh/; s/"tb\.cu"/"ta.cu"/; s/_STAMP\( != \| \)0x[0-9a-f]*/_STAMP\1X/'
    sed "$same" b.cu | cmp -s - <(sed "$same" a.cu) || fail "two runs differ"
    sed "$same" tb.cu | cmp -s - <(sed "$same" ta.cu) || fail "two test drivers differ"
    sed "$same" b.cuh | cmp -s - <(sed "$same" a.cuh) || fail "two headers differ"
}

c_value_option_forms() {
    # Every option with a value as --opt=V and --opt V; -o and -M options also joined.
    mkdir inc
    pg saxpy.pipe --output=a.cu --header=inc/a.cuh --emit-test t.cu --emit-bench=b.cu \
        --lower cp.async --arch sm_80 --grid persistent --producer-warps 0
    expect_status 0; expect_no_err
    expect_files a.cu inc/a.cuh t.cu b.cu
    expect_file_has a.cu "saxpy_sm80("
    pg saxpy.pipe --output b2.cu --header inc/b2.cuh --emit-test=t2.cu --emit-bench b3.cu \
        --lower=sync --arch=sm_90 --grid=per_tile --producer-warps=0
    expect_status 0; expect_no_err
    pg saxpy.pipe -oc.cu -MD -MFc.dep -MTc.o
    expect_status 0; expect_file_eq c.dep "c.o: saxpy.pipe"
    pg saxpy.pipe --inject-fault drop-wait --lower cp.async --verify
    expect_status 1; expect_err_has "[cp.async] RAW: "
    rm -f a.cu t.cu b.cu b2.cu t2.cu b3.cu c.cu c.cuh c.dep inc/*
    expect_files
}
c_help_short_and_double_dash() {
    pg -h
    expect_status 0; expect_no_err
    [[ $out == "usage: pipegen [options] SPEC.pipe"* ]] || fail "-h does not print the usage"
    # After --, a name that starts with '-' is the spec.
    cp saxpy.pipe ./-s.pipe
    pg -o k.cu -- -s.pipe
    expect_status 0; expect_no_err; expect_file_has k.cu "from -s.pipe."
    rm -f ./-s.pipe k.cu k.cuh
    pg saxpy.pipe -- --verify
    expect_status 1; expect_err "pipegen: error: more than one input file"
    expect_files
}
c_depfile_mt_mq_quoting() {
    # -MT is written as given, -MQ quoted for make (gcc).
    pg saxpy.pipe -o k.cu -MD -MF k.d -MT 'a b$(X)'
    expect_status 0; expect_file_eq k.d 'a b$(X): saxpy.pipe'
    pg saxpy.pipe -o k.cu -MD -MF k.d -MQ 'a b$x#' -MT plain
    expect_status 0; expect_file_eq k.d 'a\ b$$x\# plain: saxpy.pipe'
    rm -f k.cu k.cuh k.d
    expect_files
}
c_depfile_every_output_and_mp() {
    # Every output is a target (drivers and header too); -MP adds a phony rule for the spec.
    mkdir gen
    pg saxpy.pipe -o gen/k.cu --header gen/h.cuh --emit-test=gen/t.cu --emit-bench=gen/b.cu -MD -MP
    expect_status 0; expect_no_err
    expect_files gen/k.cu gen/h.cuh gen/t.cu gen/b.cu gen/k.cu.d
    expect_file_eq gen/k.cu.d "$(printf '%s\n' 'gen/k.cu gen/h.cuh gen/t.cu gen/b.cu: saxpy.pipe' '' 'saxpy.pipe:')"
    # make reads it, and a deleted spec does not stop make with -MP.
    printf 'all: gen/k.cu\ninclude gen/k.cu.d\ngen/k.cu:\n\t@echo stale\n' >mk
    mv saxpy.pipe saxpy.keep
    make -s -f mk >mk.out 2>&1 || fail "make with the -MP depfile and no spec: $(cat mk.out)"
    mv saxpy.keep saxpy.pipe
    rm -f mk mk.out
}
c_cmdline_errors_name_the_option() {
    # An error the command line causes names the option, not the spec's first line.
    # bulk and tensor are sm_90 only: the default targets include sm_80.
    local m
    for m in bulk tensor; do
        pg saxpy.pipe --lower=$m -o k.cu
        expect_status 1
        expect_err "pipegen: error: --lower=$m: the $m lowering needs sm_90 or newer, but sm_80 is a target"
    done
    pg saxpy.pipe --lower sync --producer-warps 2 -o k.cu
    expect_status 1
    expect_err "pipegen: error: --lower=sync: producer warps are planned by pipeline-roles, cp.async.mbarrier, bulk and tensor, not by the sync lowering"
    pg saxpy.pipe --producer-warps=8
    expect_status 1
    expect_err "pipegen: error: --producer-warps=8: 8 producer warps leave no consumer warp in a block of 256 threads"
    # pipeline-roles plans one producer warp of its own: sema refuses a block of one warp
    # (the planner used to, at the spec's first line).
    printf 'pipeline t {\n in float x[n];\n out float z[n];\n threads 32;\n tile z[256];\n stage x;\n compute elementwise (i) { z[i] = x[i]; }\n}\n' >w.pipe
    pg w.pipe --lower=pipeline-roles -o k.cu
    expect_status 1
    expect_err "pipegen: error: --lower=pipeline-roles: the pipeline-roles lowering needs a consumer warp beside its producer warp, but the block has 32 threads"
    rm -f w.pipe
    pg saxpy.pipe --lower=cp.async --inject-fault=flip-parity -o k.cu
    expect_status 2
    expect_err "pipegen: error: --inject-fault=flip-parity: fault 'flip-parity' is not applicable to the cp.async lowering"
    expect_files
}
c_misspelled_mechanism_once() {
    sed 's/^  stage   x, y;/  stage   x, y using cp_async;/' saxpy.pipe >m.pipe
    pg m.pipe -o k.cu
    expect_status 1
    expect_err "$(printf '%s\n' "m.pipe:12:22: error: unknown lowering 'cp_async'; did you mean 'cp.async'?" \
        "  stage   x, y using cp_async;                 // staged through shared memory, the tile's region" \
        "                     ^")"
    pg saxpy.pipe --lower=cp_async
    expect_status 1
    expect_err "pipegen: error: --lower=cp_async: unknown lowering 'cp_async'; did you mean 'cp.async'?"
    rm -f m.pipe
    expect_files
}
c_warning_stages() {
    # stages 4 under the default grid (per_tile, not written): one slot, and a warning.
    grep -v '^  grid ' saxpy.pipe >s.pipe
    pg s.pipe -o k.cu
    expect_status 0; expect_files s.pipe k.cu k.cuh
    expect_err_has "s.pipe:9:11: warning: 'stages 4' plans one slot: under the default grid (per_tile)"
    expect_err_has "[-Wstages]"
    grep -q '^  stages  4;' <<<"$err" || fail "no quoted line"
    grep -q '^          \^$' <<<"$err" || fail "no caret under the 4"
    pg s.pipe -o k.cu -Wno-stages; expect_status 0; expect_no_err
    pg s.pipe -o k.cu -w; expect_status 0; expect_no_err
    pg s.pipe -o k.cu --grid=persistent; expect_status 0; expect_no_err
    pg saxpy.pipe -o k.cu; expect_status 0; expect_no_err   # grid per_tile written: meant
    rm -f k.cu k.cuh
    pg s.pipe -o k.cu -Werror
    expect_status 1; expect_err_has "s.pipe:9:11: error: 'stages 4' plans one slot"
    expect_err_has "[-Werror=stages]"
    pg s.pipe -o k.cu -Werror -Wno-stages; expect_status 0
    rm -f s.pipe k.cu k.cuh
    pg saxpy.pipe -Wstage
    expect_status 1; expect_err "pipegen: error: unknown warning option '-Wstage'; did you mean '-Wstages'?"
    expect_files
}
c_warning_hints() {
    # Hints a lowering ignores: sync takes none, barrier only evict, cp.async every one.
    sed 's/^  stage   x, y;/  stage   x, y cache ca prefetch 128 evict first;/' saxpy.pipe >h.pipe
    pg h.pipe --lower=sync --verify
    expect_status 0
    local w
    for w in "h.pipe:12:22: warning: the sync lowering ignores 'cache'" \
             "h.pipe:12:34: warning: the sync lowering ignores 'prefetch'" \
             "h.pipe:12:44: warning: the sync lowering ignores 'evict'"; do
        expect_err_has "$w"
    done
    [ "$(grep -c 'warning: ' <<<"$err")" = 3 ] || fail "not one warning per hint: $err"
    pg h.pipe --lower=barrier --verify
    expect_status 0; expect_err_has "ignores 'cache'"; expect_err_has "ignores 'prefetch'"
    grep -q "ignores 'evict'" <<<"$err" && fail "barrier takes evict"
    pg h.pipe --lower=cp.async --verify; expect_status 0; expect_no_err
    pg h.pipe --verify; expect_status 0; expect_no_err    # auto: cp.async
    pg h.pipe --lower=sync --verify -Wno-hints; expect_status 0; expect_no_err
    # A staged output's hints: its stores take none, under any lowering.
    sed 's/^  stage   b; .*/  stage   b evict first;/' "$root/samples/transpose/transpose.pipe" >t.pipe
    for l in cp.async tensor; do
        pg t.pipe --lower=$l --arch=sm_90 --verify
        expect_status 0
        expect_err_has "t.pipe:13:19: warning: the $l lowering ignores 'evict' on a staged output"
        [ "$(grep -c 'warning: ' <<<"$err")" = 1 ] || fail "not one warning under $l: $err"
    done
    # An input and an output in one statement: its one warning, whichever name comes first.
    local names
    for names in "x, z" "z, x"; do
        printf 'pipeline m {\n  in float x[n];\n  out float z[n];\n  tile z[256] at (c);\n  stage %s evict last;\n  compute elementwise (i) { z[i] = x[i]; }\n}\n' \
            "$names" >m.pipe
        pg m.pipe --lower=cp.async --verify
        expect_status 0
        expect_err_has "m.pipe:5:20: warning: the cp.async lowering ignores 'evict' on a staged output"
        [ "$(grep -c 'warning: ' <<<"$err")" = 1 ] || fail "not one warning for '$names': $err"
    done
    rm -f h.pipe t.pipe m.pipe
}

c_wisdom_chooses() {
    # A record for the spec and sm_90 decides auto's lowering there (--dump-ir, the .cu's
    # schedule comment); sm_80 has none: a note, and auto's rule. The depfile names the file.
    local h
    pg saxpy.pipe --spec-hash
    expect_status 0; expect_no_err
    [[ $out =~ ^[0-9a-f]{16}$ ]] || fail "spec hash '$out'"
    h=$out
    pg saxpy.pipe --spec-hash; expect_out "$h"
    printf '# a comment line\n%s sm_90 NVIDIA_H100 L2x16 tensor cp.async=0.95 tensor=0.99 # best\n' "$h" >w.wis
    pg saxpy.pipe --wisdom=w.wis --dump-ir
    expect_status 0
    expect_out_has "schedule saxpy mech=cp.async sm_80"
    expect_out_has "schedule saxpy mech=tensor sm_90"
    expect_out_has "wisdom: w.wis:2 (NVIDIA_H100, L2x16)"
    expect_err_has "note: wisdom 'w.wis' holds no record for this spec ($h) and sm_80: auto's own rule chooses"
    pg saxpy.pipe --wisdom w.wis -o k.cu -MD -MP
    expect_status 0
    expect_file_has k.cu "Lowering chosen by wisdom w.wis:2 (measured on NVIDIA_H100, L2x16)."
    expect_file_has k.cu.d "k.cu k.cuh: saxpy.pipe w.wis"
    expect_file_has k.cu.d "w.wis:"
    # The same spec, flags and wisdom: the same bytes.
    cp k.cu k1.cu
    pg saxpy.pipe --wisdom w.wis -o k.cu
    cmp -s k.cu k1.cu || fail "not deterministic"
    # From the environment; --wisdom wins over it; an explicit lowering asks no wisdom.
    PIPEGEN_WISDOM=w.wis pg saxpy.pipe --dump-ir; expect_out_has "mech=tensor sm_90"
    printf '%s sm_90 X L bulk\n' "$h" >v.wis
    PIPEGEN_WISDOM=v.wis pg saxpy.pipe --wisdom=w.wis --dump-ir; expect_out_has "mech=tensor sm_90"
    PIPEGEN_WISDOM=w.wis pg saxpy.pipe --wisdom= --dump-ir; expect_no_err; expect_out_has "mech=cp.async sm_90"
    pg saxpy.pipe --wisdom=w.wis --lower=cp.async --dump-ir
    expect_status 0; expect_no_err; expect_out_has "mech=cp.async sm_90"
    rm -f w.wis v.wis k.cu k.cuh k1.cu k.cu.d
}

c_wisdom_ignored() {
    # Records for another spec, a second GPU's record, a lowering that no longer plans the
    # spec: notes, never errors, and auto's own rule.
    local h
    pg saxpy.pipe --spec-hash; h=$out
    printf '0123456789abcdef sm_90 GPU L tensor\n%s sm_90 GPU_A L cp.async.mbarrier\n%s sm_90 GPU_B L bulk\n' "$h" "$h" >w.wis
    pg saxpy.pipe --wisdom=w.wis --dump-ir
    expect_status 0
    expect_out_has "mech=cp.async.mbarrier sm_90"
    expect_err_has "w.wis:3:1: note: a second record for this spec and sm_90 (GPU_B, L) is ignored: line 2, the first, chose"
    printf 'pipeline m {\n  in uint8 x[n][4];\n  out uint8 z[n][4];\n  tile z[256][4];\n  stage x;\n  compute elementwise (i, c) { z[i][c] = x[i][c]; }\n}\n' >m.pipe
    pg m.pipe --spec-hash; h=$out
    printf '%s sm_90 GPU L tensor\n' "$h" >w.wis
    pg m.pipe --wisdom=w.wis --arch=sm_90 --dump-ir
    expect_status 0
    expect_out_has "schedule m mech=cp.async sm_90"
    expect_err_has "w.wis:1:1: note: this record's lowering, tensor, does not plan the spec for sm_90 (--lower=tensor says why): auto's own rule chooses"
    rm -f w.wis m.pipe
}

c_wisdom_gpu() {
    # --wisdom-gpu (or $PIPEGEN_WISDOM_GPU) takes one GPU's records, named as nvidia-smi
    # prints it or as the records write it; another GPU's record is a note at its line;
    # --wisdom-gpu= (empty) takes any GPU's, whatever the environment.
    local h
    pg saxpy.pipe --spec-hash; h=$out
    printf '%s sm_90 NVIDIA_H100_80GB_HBM3 L cp.async.mbarrier\n%s sm_90 NVIDIA_H200 L bulk\n' "$h" "$h" >w.wis
    pg saxpy.pipe --wisdom=w.wis --wisdom-gpu='NVIDIA H200' --arch=sm_90 --dump-ir
    expect_status 0
    expect_out_has "mech=bulk sm_90"; expect_out_has "wisdom: w.wis:2 (NVIDIA_H200, L)"
    expect_err_has "w.wis:1:1: note: this record for the spec and sm_90 is ignored: measured on NVIDIA_H100_80GB_HBM3, not on the wisdom GPU, NVIDIA H200"
    PIPEGEN_WISDOM_GPU=NVIDIA_H100_80GB_HBM3 pg saxpy.pipe --wisdom=w.wis --arch=sm_90 --dump-ir
    expect_out_has "mech=cp.async.mbarrier sm_90"
    expect_err_has "w.wis:2:1: note: this record for the spec and sm_90 is ignored: measured on NVIDIA_H200"
    PIPEGEN_WISDOM_GPU=NVIDIA_H200 pg saxpy.pipe --wisdom=w.wis --wisdom-gpu= --arch=sm_90 --dump-ir
    expect_out_has "mech=cp.async.mbarrier sm_90"
    expect_err_has "w.wis:2:1: note: a second record for this spec and sm_90 (NVIDIA_H200, L) is ignored"
    pg saxpy.pipe --wisdom=w.wis --wisdom-gpu=H100 --arch=sm_90 --dump-ir
    expect_status 0; expect_out_has "mech=cp.async sm_90"
    expect_err_has "note: wisdom 'w.wis' holds no record for this spec ($h) and sm_90 measured on H100: auto's own rule chooses"
    # The GPU is part of the input: the same file, another GPU, other bytes; the same, the same.
    pg saxpy.pipe --wisdom=w.wis --wisdom-gpu='NVIDIA H200' --arch=sm_90 -o k.cu
    cp k.cu k1.cu
    pg saxpy.pipe --wisdom=w.wis --wisdom-gpu=NVIDIA_H200 --arch=sm_90 -o k.cu
    cmp -s k.cu k1.cu || fail "--wisdom-gpu spelled with '_' wrote other bytes"
    expect_file_has k.cu "Lowering chosen by wisdom w.wis:2 (measured on NVIDIA_H200, L)."
    rm -f w.wis k.cu k.cuh k1.cu
}

c_threads_offered() {
    # `threads N, M, ...` offers block sizes: --spec-threads lists them, --threads takes
    # one (another is an error naming those offered, and nothing is written), and a
    # wisdom record's LOWERING@N takes one for auto; a record's block size the spec does
    # not offer, or that --threads contradicts, is a note and auto's own rule.
    sed 's/threads 256;/threads 256, 128;/' saxpy.pipe >s2.pipe
    pg s2.pipe --spec-threads
    expect_status 0; expect_out "256 128"
    pg saxpy.pipe --spec-threads
    expect_out "256"
    printf 'pipeline d {\n  in float x[n];\n  out float y[n];\n  tile y[256];\n  stage x;\n  compute elementwise (i) { y[i] = x[i]; }\n}\n' >d.pipe
    pg d.pipe --spec-threads
    expect_out "256"
    pg d.pipe --threads=128 -o k.cu
    expect_status 1; expect_err "pipegen: error: --threads=128: not a block size the spec offers ('threads': 256, the default)"
    pg s2.pipe --threads 128 --arch=sm_90 --dump-ir
    expect_status 0; expect_out_has "mech=cp.async sm_90 slots=1 smem=16384 threads=128 "
    pg s2.pipe --threads=64 -o k.cu
    expect_status 1; expect_err "pipegen: error: --threads=64: not a block size the spec offers ('threads': 256, 128)"
    pg s2.pipe --threads=96x -o k.cu
    expect_status 1; expect_err "pipegen: error: bad --threads '96x' (expected a block size: a multiple of 32 from 32 to 1024)"
    pg s2.pipe --threads=2048 -o k.cu
    expect_status 1; expect_err_has "bad --threads '2048'"
    local h
    pg s2.pipe --spec-hash; h=$out
    printf '%s sm_90 GPU L tensor@128 tensor@128=1.1\n%s sm_80 GPU L cp.async@64\n' "$h" "$h" >w.wis
    pg s2.pipe --wisdom=w.wis --dump-ir
    expect_status 0
    expect_out_has "schedule saxpy mech=tensor sm_90 slots=1 smem=16384 threads=128 "
    expect_out_has "schedule saxpy mech=cp.async sm_80 slots=1 smem=16384 threads=128 "
    expect_err_has "w.wis:2:1: note: this record's block size, 64, is not one the spec's 'threads' offers: auto's own rule chooses"
    pg s2.pipe --wisdom=w.wis --arch=sm_90 -o k.cu
    expect_status 0; expect_file_has k.cu "Lowering and block size chosen by wisdom w.wis:1 (measured on GPU, L)."
    expect_file_has k.cu "__launch_bounds__(128)"
    pg s2.pipe --wisdom=w.wis --arch=sm_90 --threads=256 --dump-ir
    expect_status 0; expect_out_has "mech=cp.async sm_90 slots=1 smem=16384 threads=256 "
    expect_err_has "w.wis:1:1: note: this record's block size, 128, is not --threads=256: auto's own rule chooses"
    printf '%s sm_90 GPU L tensor\n' "$h" >w.wis    # the spec's own block size, as written
    pg s2.pipe --wisdom=w.wis --arch=sm_90 --threads=128 --dump-ir
    expect_out_has "schedule saxpy mech=cp.async sm_90 slots=1 smem=16384 threads=128 "
    expect_err_has "w.wis:1:1: note: this record's block size, 256, is not --threads=128"
    # The packed rows' schedules take the record's block size too.
    pg "$root/samples/softmax/softmax_rows.pipe" --spec-hash; h=$out
    printf '%s sm_90 GPU L cp.async@256\n' "$h" >w.wis
    pg "$root/samples/softmax/softmax_rows.pipe" --wisdom=w.wis --arch=sm_90 --dump-ir
    expect_status 0
    expect_out_has "mech=cp.async sm_90 slots=1 smem=33152 threads=256 grid=per_tile pack=8 tile=8x1024"
    # A block size the spec offers that the spec's other items refuse: the option named, or
    # for a record a note with what shows why.
    sed 's/threads 256;/threads 512, 256;\n  producer_warps 8;/' saxpy.pipe >pw.pipe
    pg pw.pipe --threads=256 -o k.cu
    expect_status 1; expect_err "pipegen: error: --threads=256: 8 producer warps leave no consumer warp in a block of 256 threads"
    pg pw.pipe --spec-hash; h=$out
    printf '%s sm_90 GPU L pipeline-roles@256\n' "$h" >w.wis
    pg pw.pipe --wisdom=w.wis --arch=sm_90 --dump-ir
    expect_status 0; expect_out_has "threads=512 "
    expect_err_has "w.wis:1:1: note: this record's lowering, pipeline-roles, does not plan the spec for sm_90 (--lower=pipeline-roles --threads=256 says why): auto's own rule chooses"
    sed 's/threads 256;/threads 256, 1024;\n  blocks_per_sm 4;/' saxpy.pipe >bp.pipe
    pg bp.pipe --threads=1024 -o k.cu
    expect_status 1; expect_err "pipegen: error: --threads=1024: 4 blocks of 1024 threads per SM: sm_80 holds at most 2048 threads"
    rm -f s2.pipe d.pipe pw.pipe bp.pipe w.wis k.cu k.cuh
    expect_files
}

c_threads_auto_rule() {
    # Without a record, auto takes the offered block size whose plan fits the most blocks
    # an SM (sm_80: 9 of 128 threads against 8 of 256), the spec's own on a tie; the IR
    # and the kernel's comment say so. --threads, or a lowering the spec fixes, keeps it.
    sed 's/threads 256;/threads 256, 128;/' saxpy.pipe >s2.pipe
    pg s2.pipe --arch=sm_80 --dump-ir
    expect_status 0
    expect_out_has "schedule saxpy mech=cp.async sm_80 slots=1 smem=16384 threads=128 "
    expect_out_has "block size: auto, 9 blocks an SM (the spec's own 256 threads: 8)"
    pg s2.pipe --arch=sm_80 -o k.cu
    expect_status 0; expect_file_has k.cu "Block size chosen by auto: 9 blocks an SM at 128 threads, 8 at the spec's own 256."
    expect_file_has k.cu "__launch_bounds__(128)"
    pg s2.pipe --arch=sm_80 --threads=256 --dump-ir
    expect_out_has "threads=256 "; expect_out_lacks "block size: auto"
    pg s2.pipe --arch=sm_80 --lower=cp.async --dump-ir
    expect_out_has "threads=256 "; expect_out_lacks "block size: auto"
    # A tie at the SM's most blocks: 4 KiB a block, 64 or 32 threads, 32 blocks an SM either
    # way on sm_90 (16 on sm_86), however many more shared memory and threads would hold.
    sed 's/threads 256;/threads 64, 32;/; s/tile    z\[2048\];/tile    z[512];/' saxpy.pipe >t2.pipe
    pg t2.pipe --arch=sm_90 --dump-ir
    expect_status 0; expect_out_has "smem=4096 threads=64 "; expect_out_lacks "block size: auto"
    pg t2.pipe --arch=sm_86 --dump-ir
    expect_status 0; expect_out_has "smem=4096 threads=64 "; expect_out_lacks "block size: auto"
    rm -f t2.pipe
    # A tie: gemv's 144 KiB a block fits one block an SM at each of its sizes.
    pg "$root/tests/kernels/gemv.pipe" --arch=sm_90 --dump-ir
    expect_status 0; expect_out_has "threads=256 "; expect_out_lacks "block size: auto"
    # The size whose plan fits more blocks is refused by the spec's producer warps: its own.
    sed 's/threads 256;/threads 512, 256;\n  producer_warps 8;/' saxpy.pipe >pw.pipe
    pg pw.pipe --arch=sm_90 --dump-ir
    expect_status 0; expect_out_has "threads=512 "; expect_out_lacks "block size: auto"
    rm -f s2.pipe pw.pipe k.cu k.cuh
    expect_files
}

c_wisdom_pack_lowerings() {
    # A record's lowering for a pack of rows: its kernel takes it (the others the record's),
    # the unit includes both lowerings' headers; one that does not plan the packed rows, or
    # a pack the spec does not have, is a note, and the record's lowering stands.
    local s=$root/samples/softmax/softmax_rows.pipe h
    pg "$s" --spec-hash; h=$out
    printf '%s sm_90 GPU L barrier@256,pack8=cp.async\n' "$h" >w.wis
    pg "$s" --wisdom=w.wis --arch=sm_90 --dump-ir
    expect_status 0; expect_no_err
    expect_out_has "schedule softmax_rows mech=barrier sm_90 slots=1 smem=32960 threads=256 grid=per_tile pack=2"
    expect_out_has "schedule softmax_rows mech=cp.async sm_90 slots=1 smem=33152 threads=256 grid=per_tile pack=8"
    pg "$s" --wisdom=w.wis --arch=sm_90 -o k.cu
    expect_status 0; expect_file_has k.cu '#include "pipert_memcpy_async.cuh"'
    expect_file_has k.cu '#include "pipert_cp_async.cuh"'
    printf '%s sm_90 GPU L barrier@256,pack2=tensor,pack16=cp.async\n' "$h" >w.wis
    pg "$s" --wisdom=w.wis --arch=sm_90 --dump-ir
    expect_status 0
    expect_out_has "schedule softmax_rows mech=barrier sm_90 slots=1 smem=32960 threads=256 grid=per_tile pack=2"
    expect_err_has "w.wis:1:1: note: this record's lowering for rows packed 2 a work item, tensor, does not plan them for sm_90: the record's barrier takes them"
    expect_err_has "w.wis:1:1: note: this record names rows packed 16 a work item, which the spec's kernels for sm_90 do not pack: ignored"
    printf '%s sm_90 GPU L tensor@256,pack2=cp.async\n' "$h" >w.wis
    pg "$s" --wisdom=w.wis --arch=sm_90 --dump-ir
    expect_status 0
    expect_err "w.wis:1:1: note: this record's lowerings for packed rows are ignored for sm_90: its tensor packs no rows"
    # Two targets whose unpacked kernels are the same but whose packs are not: each its own
    # kernels (a record for sm_90 alone gives its pack of 2 barrier).
    pg "$root/samples/rmsnorm/rmsnorm.pipe" --spec-hash
    printf '%s sm_90 GPU L cp.async,pack2=barrier\n' "$out" >w.wis
    pg "$root/samples/rmsnorm/rmsnorm.pipe" --wisdom=w.wis --arch=sm_80,sm_90 -o k.cu
    expect_status 0
    expect_file_has k.cu "/* Schedule for sm_90, lowering barrier: "
    expect_file_has k.cu "/* Schedule for sm_80, lowering cp.async: "
    [ "$(grep -c '^/\* Schedule for sm_80, lowering cp.async: ' k.cu)" = 4 ] || fail "sm_80's kernels: $(grep 'Schedule for' k.cu)"
    # A fault plans no packs: the record's are not the spec's to lack.
    pg "$root/samples/rmsnorm/rmsnorm.pipe" --wisdom=w.wis --arch=sm_90 --inject-fault=drop-wait \
        --no-verify -o k.cu
    expect_err_has "error: [cp.async] RAW"; expect_err_lacks "do not pack"
    rm -f w.wis k.cu k.cuh
    expect_files
}

c_wisdom_lowering_rules() {
    # A record's lowering is checked as --lower checks it: sgemm's bodies deal out C by
    # pg_ctid for its 256 threads, which pipeline-roles' producer warp would leave 224
    # (a wrong product, silently): a note, and auto's own rule.
    pg "$root/samples/sgemm/sgemm.pipe" --spec-hash
    printf '%s sm_90 GPU L pipeline-roles\n' "$out" >w.wis
    pg "$root/samples/sgemm/sgemm.pipe" --wisdom=w.wis --arch=sm_90 --dump-ir
    expect_status 0; expect_out_has "schedule sgemm mech=tensor sm_90"
    expect_err_has "w.wis:1:1: note: this record's lowering, pipeline-roles, does not plan the spec for sm_90 (--lower=pipeline-roles says why): auto's own rule chooses"
    rm -f w.wis
}

c_wisdom_errors() {
    # A malformed record: its line and column, the line quoted, exit 1 and no output.
    local bad want
    while IFS='|' read -r bad want; do
        printf '# tuned\n%s\n' "$bad" >w.wis
        pg saxpy.pipe --wisdom=w.wis -o k.cu
        expect_status 1
        expect_err_has "$want"
        [ -e k.cu ] && fail "k.cu written for '$bad'"
    done <<'CASES'
0123456789abcdef sm_90 GPU|w.wis:2:27: error: a wisdom record has five fields and the ratios: HASH ARCH GPU SIZE LOWERING (this one ends after 3)
0123456789abcdeg sm_90 GPU L tensor|w.wis:2:1: error: '0123456789abcdeg' is not a spec hash (16 hex digits, pipegen --spec-hash)
0123456789abcdef sm_91 GPU L tensor|w.wis:2:18: error: 'sm_91' is not an architecture (sm_90, sm_90a)
0123456789abcdef sm_90 GPU L auto|w.wis:2:30: error: 'auto' is not a lowering (pipegen --list-lowerings)
0123456789abcdef sm_90 GPU L cp.async@100|w.wis:2:30: error: 'cp.async@100' is not a lowering (pipegen --list-lowerings), or one and a block size (cp.async@256)
0123456789abcdef sm_90 GPU L cp.async@|w.wis:2:30: error: 'cp.async@' is not a lowering
0123456789abcdef sm_90 GPU L cp.async@+256|w.wis:2:30: error: 'cp.async@+256' is not a lowering
0123456789abcdef sm_90 GPU L auto@256|w.wis:2:30: error: 'auto@256' is not a lowering
0123456789abcdef sm_90 GPU L cp.async@2048|w.wis:2:30: error: 'cp.async@2048' is not a lowering
0123456789abcdef sm_90 GPU L cp.async@256x|w.wis:2:30: error: 'cp.async@256x' is not a lowering
0123456789abcdef sm_90 GPU L cp.async@0256|w.wis:2:30: error: 'cp.async@0256' is not a lowering
0123456789abcdef sm_90 GPU L cp.async,pack3=barrier|w.wis:2:30: error: 'cp.async,pack3=barrier' is not a lowering (pipegen --list-lowerings), or one and a block size (cp.async@256), then any packed rows' own (,pack2=barrier)
0123456789abcdef sm_90 GPU L cp.async,pack1=barrier|w.wis:2:30: error: 'cp.async,pack1=barrier' is not a lowering
0123456789abcdef sm_90 GPU L cp.async,pack2=auto|w.wis:2:30: error: 'cp.async,pack2=auto' is not a lowering
0123456789abcdef sm_90 GPU L cp.async,pack2=barrier@256|w.wis:2:30: error: 'cp.async,pack2=barrier@256' is not a lowering
0123456789abcdef sm_90 GPU L cp.async,pack2=bulk,pack2=barrier|w.wis:2:30: error: 'cp.async,pack2=bulk,pack2=barrier' is not a lowering
0123456789abcdef sm_90 GPU L cp.async,|w.wis:2:30: error: 'cp.async,' is not a lowering
0123456789abcdef sm_90 GPU L cp.async,pack02=bulk|w.wis:2:30: error: 'cp.async,pack02=bulk' is not a lowering
0123456789abcdef sm_90 GPU L cp.async,pack2=bulk,pack4=bulk,pack8=bulk,pack16=bulk|w.wis:2:30: error: 'cp.async,pack2=bulk,pack4=bulk,pack8=bulk,pack16=bulk' is not a lowering
0123456789abcdef sm_90 GPU L ,pack2=bulk|w.wis:2:30: error: ',pack2=bulk' is not a lowering
0123456789abcdef sm_90 GPU L cpasync|w.wis:2:30: error: 'cpasync' is not a lowering (pipegen --list-lowerings)
CASES
    pg saxpy.pipe --wisdom=w.wis -o k.cu; expect_err_has "0123456789abcdef sm_90 GPU L cpasync"; expect_err_has "                             ^"
    pg saxpy.pipe --wisdom=nonexistent.wis -o k.cu
    expect_status 1; expect_err_has "pipegen: error: cannot read 'nonexistent.wis': No such file or directory"
    printf 'a\0b\n' >z.wis
    pg saxpy.pipe --wisdom=z.wis -o k.cu
    expect_status 1; expect_err_has "a NUL byte"
    rm -f w.wis z.wis
    expect_files
}

c_tune_candidates() {
    # pipegen-tune's candidates: every implemented lowering but auto that plans the spec
    # (PIPEGEN_TUNE_DRYRUN: no GPU needed), a refusal said with its reason; without a GPU
    # the run says so and exits 77; a spec with errors stops it with them.
    local tune=$root/tools/pipegen-tune
    PIPEGEN=$pipegen PIPEGEN_TUNE_DRYRUN=1 "$tune" saxpy.pipe >t.out 2>&1
    [ $? = 0 ] || fail "dry run: $(cat t.out)"
    grep -q '^candidate cp.async$' t.out || fail "no cp.async candidate: $(cat t.out)"
    grep -q '^candidate tensor$' t.out || fail "no tensor candidate: $(cat t.out)"
    grep -q 'candidate auto' t.out && fail "auto is a candidate"
    printf 'pipeline m {\n  in uint8 x[n][4];\n  out uint8 z[n][4];\n  tile z[256][4];\n  stage x;\n  compute elementwise (i, c) { z[i][c] = x[i][c]; }\n}\n' >m.pipe
    PIPEGEN=$pipegen PIPEGEN_TUNE_DRYRUN=1 "$tune" m.pipe --lowerings "cp.async tensor" >t.out 2>&1
    grep -q '^skip tensor: a region whose rows or origin steps are not a multiple of 16 bytes' t.out \
        || fail "tensor's refusal: $(cat t.out)"
    grep -q '^candidate cp.async$' t.out || fail "cp.async: $(cat t.out)"
    PIPEGEN=$pipegen PIPEGEN_TUNE_DRYRUN=1 "$tune" bad.pipe >t.out 2>&1
    [ $? = 1 ] && grep -q 'error' t.out || fail "a spec with errors: $(cat t.out)"
    if ! command -v nvidia-smi >/dev/null; then
        PIPEGEN=$pipegen "$tune" saxpy.pipe >t.out 2>&1
        [ $? = 77 ] && grep -q 'no GPU on this machine' t.out || fail "no GPU: $(cat t.out)"
        [ -e pipegen.wisdom ] && fail "a wisdom file written without a measurement"
    fi
    rm -f t.out m.pipe
}

c_tune_run_stubbed() {
    # A whole tuning run with a stub GPU (nvidia-smi) and a stub nvcc whose drivers say
    # what a lowering measured, as the medians' times of the kernel and of the same-shape
    # reference (tensor 1.021, cp.async 0.787; sync and cg as slow as GEMMs, 0.0025 and
    # 0.00251, which 3 decimals would tie) or that its test failed (bulk) or hung
    # (primitives, past TUNE_TIMEOUT) or its kernels did not compile (pipeline): the table
    # ranked by the unrounded ratio, the failed ones never chosen, and one record with
    # every ratio, which --wisdom then reads. --grid and --arch (the GPU's arch-specific target) reach
    # every candidate and the record; an arch this GPU cannot run is refused.
    local tune=$root/tools/pipegen-tune bin=$PWD/stubbin
    mkdir -p "$bin"
    printf '#!/bin/sh\ncase "$*" in *compute_cap*) echo 9.0 ;; *name*) echo Stub GPU ;; esac\n' \
        >"$bin/nvidia-smi"
    cat >"$bin/nvcc" <<'STUB'
#!/bin/sh
while [ $# -gt 0 ]; do [ "$1" = -o ] && o=$2; shift; done
l=$(basename "$(dirname "$o")")
case $(basename "$o") in
k.o) [ "$l" = pipeline ] && { echo "k.cu: error: stub" >&2; exit 1; }; : >"$o" ;;
test) [ "$l" = primitives ] && { printf '#!/bin/sh\nexec sleep 30\n' >"$o"; chmod +x "$o"; exit 0; }
      [ "$l" = bulk ] && printf '#!/bin/sh\necho FAIL sizes 3\nexit 1\n' >"$o" || printf '#!/bin/sh\n' >"$o" ;;
bench) [ -n "${STUB_PACKS:-}" ] && case $l in
           *@256) a=1.0000 b=1.0000 c=1.0000 ;; barrier) a=0.5000 b=0.5500 c=0.5000 ;; cp.async) a=0.5200 b=0.5000 c=0.5300 ;;
           *) a=0.4900 b=0.7000 c=1.5000 ;; esac &&
           { printf '#!/bin/sh
case "$*" in *8192*) k=%s p=1 ;; *4096*) k=%s p=2 ;; *) k=%s p=8 ;; esac
echo BENCH_PACK x pack=$p
echo BENCH x ms=$k 1.0 GB/s
echo BENCH_SAMESHAPE x ms=0.5000
' \
                 "$a" "$b" "$c" >"$o"; chmod +x "$o"; exit 0; }
       [ -n "${STUB_SIZES:-}" ] && case $l in
           barrier) a=0.4854 b=0.5348 ;; cp.async) a=0.4888 b=0.5214 ;; *) a=1.0000 b=1.0000 ;; esac &&
           { printf '#!/bin/sh\ncase "$*" in *4096*) k=%s ;; *) k=%s ;; esac\necho BENCH x ms=$k 1.0 GB/s\necho BENCH_SAMESHAPE x ms=0.5000\n' \
                 "$b" "$a" >"$o"; chmod +x "$o"; exit 0; }
       case $l in tensor) k=0.4897 ;; cp.async) k=0.6353 ;; sync) k=200.0000 ;; cg) k=199.0000 ;; cp.async@128) k=0.4000 ;; *) k=1.0000 ;; esac
       [ -n "${STUB_FLAKY:-}" ] && case $l in cp.async) k=0.4950 ;; tensor) k='$(test -e $0.ran && echo 0.5100 || echo 0.4900; touch $0.ran)' ;; esac
       printf '#!/bin/sh\necho BENCH x ms=%s 1.0 GB/s ratio_sameshape=0.000\necho BENCH_SAMESHAPE x ms=0.5000\n' "$k" >"$o" ;;
esac
chmod +x "$o"
STUB
    chmod +x "$bin/nvidia-smi" "$bin/nvcc"
    # stub_tune [VAR=VAL...] -- ARGS...: a tuning run on the stubs into t.wis, its output t.out
    stub_tune() {
        local vars=()
        while [ "$1" != -- ]; do vars+=("$1"); shift; done
        shift
        env PATH="$bin:$PATH" PIPEGEN="$pipegen" NVCC=nvcc TUNE_DIR="$PWD/tw" "${vars[@]}" \
            "$tune" -o t.wis "$@" >t.out 2>&1
    }
    stub_tune TUNE_TIMEOUT=2 -- \
        --lowerings "sync cp.async bulk cg pipeline primitives tensor" saxpy.pipe
    [ $? = 0 ] || fail "tuning run: $(cat t.out)"
    grep -q '^\[6/7\] primitives: its test FAILED, not a candidate: timed out after 2 s (TUNE_TIMEOUT)$' t.out ||
        fail "a test that hangs: $(cat t.out)"
    grep -q 'bulk: its test FAILED, not a candidate: FAIL sizes 3' t.out || fail "bulk: $(cat t.out)"
    grep -q '^\[5/7\] pipeline: build failed' t.out && grep -q 'error: stub' tw/pipeline/k.log ||
        fail "pipeline's failed build: $(cat t.out)"
    grep -q '^   1  tensor  *1.021$' t.out && grep -q '^   2  cp.async  *0.787$' t.out \
        && grep -q '^   3  cg  *0.00251$' t.out && grep -q '^   4  sync  *0.0025$' t.out \
        || fail "the table: $(cat t.out)"
    grep -q " sm_90 Stub_GPU default tensor tensor=1.021 cp.async=0.787 cg=0.00251 sync=0.0025$" t.wis \
        || fail "the record: $(cat t.wis)"
    grep -q 'one block per work item grid' tw/tensor/k.cu || fail "not the spec's own grid: $(grep grid tw/tensor/k.cu)"
    pg saxpy.pipe --wisdom=t.wis --dump-ir
    expect_status 0; expect_out_has "mech=tensor sm_90"; expect_out_has "wisdom: t.wis:2"
    rm -rf tw
    stub_tune -- --grid persistent \
        --arch sm_90a --lowerings "cp.async tensor" saxpy.pipe
    [ $? = 0 ] || fail "tuning run with --grid and --arch: $(cat t.out)"
    grep -q 'persistent grid' tw/tensor/k.cu && grep -q 'persistent grid' tw/cp.async/k.cu \
        || fail "--grid persistent: $(grep grid tw/*/k.cu)"
    grep -q " sm_90a Stub_GPU default tensor tensor=1.021 cp.async=0.787$" t.wis \
        || fail "the record for sm_90a: $(cat t.wis)"
    # A first run that flatters tensor (1.020, then 0.980 twice) against cp.async's steady
    # 1.010: the rounds in turns take the medians, and the record names cp.async.
    rm -rf tw t.wis
    stub_tune STUB_FLAKY=1 -- \
        --lowerings "cp.async tensor sync" saxpy.pipe
    [ $? = 0 ] || fail "tuning run with rounds: $(cat t.out)"
    grep -q '^round 3 of 3: 2 candidates within 2% of the best, in turns$' t.out \
        && grep -q '^  tensor: 0.980 (median of 3: 0.980)$' t.out \
        || fail "the rounds: $(cat t.out)"
    grep -q " sm_90 Stub_GPU default cp.async cp.async=1.010 tensor=0.980 sync=0.0025$" t.wis \
        || fail "the record from the rounds' medians: $(cat t.wis)"
    rm -rf tw t.wis
    stub_tune STUB_FLAKY=1 TUNE_ROUNDS=1 -- \
        --lowerings "cp.async tensor" saxpy.pipe
    grep -q " default tensor tensor=1.020 cp.async=1.010$" t.wis && ! grep -q '^round' t.out \
        || fail "TUNE_ROUNDS=1: $(cat t.out t.wis)"
    rm -rf tw t.wis    # TUNE_NEAR=1: the leader alone is no contest, and no round runs
    stub_tune STUB_FLAKY=1 TUNE_NEAR=1 -- \
        --lowerings "cp.async tensor" saxpy.pipe
    grep -q " default tensor tensor=1.020 cp.async=1.010$" t.wis && ! grep -q '^round' t.out \
        || fail "TUNE_NEAR=1: $(cat t.out t.wis)"
    # Several sizes: barrier is the best at rows of 1024 (1.030 against cp.async's 1.023) and
    # 2.5% short of cp.async at 4096 (0.935 against 0.959): the record names cp.async, the
    # one that loses least at its worst size, with each candidate's ratio at each size.
    rm -rf tw t.wis
    stub_tune STUB_SIZES=1 -- \
        --sizes 1024 --sizes 4096 --lowerings "barrier cp.async sync" saxpy.pipe
    [ $? = 0 ] || fail "tuning run at two sizes: $(cat t.out)"
    grep -q '^\[1/3\] barrier: test passed, 1.030/0.935 of the same-shape reference$' t.out \
        && grep -q '^   1  cp.async  *1.023/0.959$' t.out || fail "two sizes, the table: $(cat t.out)"
    grep -q " sm_90 Stub_GPU 1024+4096 cp.async cp.async=1.023/0.959 barrier=1.030/0.935 sync=0.500/0.500$" t.wis \
        || fail "two sizes, the record: $(cat t.wis)"
    pg saxpy.pipe --wisdom=t.wis --dump-ir
    expect_status 0; expect_out_has "mech=cp.async sm_90"; expect_out_has "wisdom: t.wis:2 (Stub_GPU, 1024+4096)"
    # Sizes whose launches take different packs of rows (BENCH_PACK: rows of 4096, 8192 and
    # 1024 take packs 2, 1 and 8): tensor, which packs no rows, is best at 8192 alone;
    # barrier at 8192 (0.980 of tensor) and 1024, cp.async at 4096 (barrier 0.909 there).
    # One lowering loses at least 5.8% (cp.async); one a pack, 2.0%: the record is
    # barrier,pack2=cp.async (pack 1's the record's own, whatever the sizes' order), and
    # auto plans each pack's kernel so.
    rm -rf tw t.wis
    stub_tune STUB_PACKS=1 -- \
        --sizes "65536 4096" --sizes "16384 8192" --sizes "262144 1024" \
        --lowerings "barrier cp.async tensor" "$root/samples/softmax/softmax_rows.pipe"
    [ $? = 0 ] || fail "tuning run over packs: $(cat t.out)"
    grep -q '^   1  cp.async  *1.000/0.962/0.943$' t.out \
        && grep -q '^      a lowering a pack of rows, barrier,pack2=cp.async, loses least: 0.980 of each size.s best at worst, against 0.942 for cp.async alone$' t.out \
        || fail "packs, the table: $(cat t.out)"
    grep -q " sm_90 Stub_GPU 65536x4096+16384x8192+262144x1024 barrier,pack2=cp.async cp.async=1.000/0.962/0.943 " t.wis \
        || fail "packs, the record: $(cat t.wis)"
    pg "$root/samples/softmax/softmax_rows.pipe" --wisdom=t.wis --arch=sm_90 --dump-ir
    expect_status 0
    expect_out_has "schedule softmax_rows mech=barrier sm_90 slots=1 smem=32960 threads=512 grid=per_tile"
    expect_out_has "schedule softmax_rows mech=cp.async sm_90 slots=1 smem=33024 threads=512 grid=per_tile pack=2"
    expect_out_has "schedule softmax_rows mech=barrier sm_90 slots=1 smem=33152 threads=512 grid=per_tile pack=4"
    expect_out_has "schedule softmax_rows mech=barrier sm_90 slots=1 smem=33408 threads=512 grid=per_tile pack=8"
    # A spec offering two block sizes: each lowering at each, the other named L@128, and
    # the record that chose cp.async at 128 threads gives auto both.
    rm -rf tw t.wis
    sed 's/threads 256;/threads 256, 128;/' saxpy.pipe >s2.pipe
    stub_tune -- \
        --lowerings "cp.async tensor" s2.pipe
    [ $? = 0 ] || fail "tuning run at two block sizes: $(cat t.out)"
    grep -q '^\[4/4\] tensor@128: test passed' t.out && grep -q '^   1  cp.async@128  *1.250$' t.out \
        || fail "two block sizes, the table: $(cat t.out)"
    grep -q '__launch_bounds__(128' tw/cp.async@128/k.cu && grep -q '__launch_bounds__(256' tw/cp.async/k.cu \
        || fail "two block sizes: $(grep -h __launch_bounds__ tw/*/k.cu)"
    grep -q " sm_90 Stub_GPU default cp.async@128 cp.async@128=1.250 tensor=1.021 cp.async=0.787 tensor@128=0.500$" t.wis \
        || fail "two block sizes, the record: $(cat t.wis)"
    pg s2.pipe --wisdom=t.wis --arch=sm_90 --dump-ir
    expect_status 0; expect_out_has "schedule saxpy mech=cp.async sm_90 slots=1 smem=16384 threads=128"
    rm -f s2.pipe
    stub_tune -- --sizes "" saxpy.pipe
    [ $? = 2 ] && grep -q '^usage: pipegen-tune' t.out || fail "--sizes '': $(cat t.out)"
    local bad    # bad settings are refused before anything is built or written
    rm -f t.wis
    for bad in TUNE_ROUNDS=0 TUNE_NEAR=x TUNE_JOBS=-1 TUNE_TIMEOUT=1e3 TUNE_CLOSE=two; do
        stub_tune "$bad" -- saxpy.pipe
        [ $? = 2 ] && grep -q "^pipegen-tune: ${bad%%=*}='${bad#*=}' is not a" t.out && [ ! -e t.wis ] ||
            fail "$bad: $(cat t.out)"
    done
    stub_tune -- --arch sm_80 saxpy.pipe
    [ $? = 2 ] && grep -q 'does not run on this GPU (sm_90)' t.out || fail "--arch sm_80: $(cat t.out)"
    rm -rf "$bin" tw t.out t.wis
}

c_accum_by_column() {
    # An accumulator is kept by column in registers only where every use is NAME[c] (c the
    # compute's last index) over a tile spanning its rows; any other use, a comment or a
    # macro naming it, or a body that may declare c again keeps shared bins.
    local body want
    while IFS='|' read -r body want; do
        sed "s|^    acc\[c\] += x\[r\]\[c\];$|    $body|" "$root/samples/colsum/colsum.pipe" >p.pipe
        sed -i '/^  reference/,/^  }/d' p.pipe
        pg p.pipe --dump-ir
        expect_status 0
        expect_out_has "accum acc: $want"
    done <<'CASES'
acc[c] += x[r][c];|by column, 4 registers a computing thread
acc[ c ] -= x[r][c]; acc[c]++;|by column, 4 registers a computing thread
acc[c + 1] += x[r][c];|bins at shared
acc[1023 - c] += x[r][c];|bins at shared
acc[r] += x[r][c];|bins at shared
{ int c = 0; acc[c] += x[r][c]; }|bins at shared
{ const long long c = 7; acc[c] += 1.0f; }|bins at shared
acc[c] += x[r][c]; // acc[0] too|bins at shared
auto &a = acc; a[c] += x[r][c];|bins at shared
CASES
    sed 's/^  tile    x\[8\]\[1024\];/  tile    x[8][512];/' "$root/samples/colsum/colsum.pipe" >p.pipe
    pg p.pipe --dump-ir; expect_status 0; expect_out_has "accum acc: bins at shared"
    rm -f p.pipe
}

c_accum_uses() {
    # A use of an array accumulator is checked against its combine only where it is
    # NAME[...] outside comments and literals: an alias is the compiler's to check.
    local body
    while IFS= read -r body; do
        sed "s|^    mx\[key\[i\]\] = v\[i\] > mx\[key\[i\]\] ? v\[i\] : mx\[key\[i\]\];$|    $body|" \
            "$root/tests/golden/binminmax.pipe" >p.pipe
        sed -i '/^  reference/,/^  }/d' p.pipe
        pg p.pipe --verify
        expect_status 0; expect_no_err
    done <<'CASES'
mx[key[i]] = v[i] > mx[key[i]] ? v[i] : mx[key[i]]; // not mx[k] += 1
mx[key[i]] = fmaxf(v[i], mx[key[i]]); /* mx[0]++ */
auto &m = mx; m[key[i]] = v[i] > m[key[i]] ? v[i] : m[key[i]];
if (v[i] > 0.0f) printf("mx[k] += %f", v[i]); else mx[key[i]] = v[i];
CASES
    sed 's|^    count\[x\[i\]\] += 1;$|    if (count[x[i]] > 0) count[x[i]]--;|' \
        "$root/samples/histogram/histogram.pipe" >p.pipe
    sed -i '/^  reference/,/^  }/d' p.pipe
    pg p.pipe --verify
    expect_status 1
    expect_err_has "p.pipe:16:9: error: array accumulator 'count' combines sum in shared bins"
    sed 's|^    mx\[key\[i\]\] = v\[i\] > mx\[key\[i\]\] ? v\[i\] : mx\[key\[i\]\];$|    mx[key[i]] *= 2.0f;|' \
        "$root/tests/golden/binminmax.pipe" >p.pipe
    pg p.pipe --verify
    expect_status 1
    expect_err_has "p.pipe:18:5: error: array accumulator 'mx' combines max: a body reads its element"
    rm -f p.pipe
}

c_warning_perf_thin_rows() {
    # Row passes the block walks with fewer than 8 cells a computing thread, said at the
    # first reduction; 8 cells a thread, or a row a warp, say nothing.
    sed 's/^  threads 64;/  threads 256;/' "$root/samples/softmax/softmax.pipe" >p.pipe
    pg p.pipe --verify
    expect_status 0
    expect_err_has "p.pipe:14:16: warning: the block walks each row of 1024 cells over 256 computing threads, 4 a thread"
    expect_err_has "[-Wperf]"
    pg p.pipe --lower=pipeline-roles --verify    # its producer warp computes nothing
    expect_status 0
    expect_err_has "p.pipe:14:16: warning: the block walks each row of 1024 cells over 224 computing threads, 4 a thread"
    sed 's/^  threads 64;/  threads 128;/' "$root/samples/softmax/softmax.pipe" >q.pipe
    pg q.pipe --verify; expect_status 0; expect_no_err
    sed 's/^  threads 64;/  threads 256;/; s/x\[1\]\[1024\]/x[8][1024]/' "$root/samples/softmax/softmax.pipe" >q.pipe
    pg q.pipe --verify; expect_status 0; expect_no_err
    # Two rows over 8 warps: a group of 4 warps a row, 8 cells a thread; over 16 warps 4.
    sed 's/^  threads 64;/  threads 256;/; s/x\[1\]\[1024\]/x[2][1024]/' "$root/samples/softmax/softmax.pipe" >q.pipe
    pg q.pipe --verify; expect_status 0; expect_no_err
    sed 's/^  threads 64;/  threads 512;/; s/x\[1\]\[1024\]/x[2][1024]/' "$root/samples/softmax/softmax.pipe" >q.pipe
    pg q.pipe --verify; expect_status 0
    expect_err_has "q.pipe:14:16: warning: a group of warps walks each row of 1024 cells over 256 computing threads, 4 a thread"
    pg "$root/samples/softmax/softmax.pipe" --verify; expect_status 0; expect_no_err
    rm -f p.pipe q.pipe
}

c_warning_perf_halo_reread() {
    # A halo that makes an input's region more than 1.5 times its interior: said at the
    # stage, once; a tile of 8 x 16 x 64 (1.45 times) and 2D tiles say nothing.
    pg "$root/tests/kernels/stencil7.pipe" --verify
    expect_one_perf_warning "stencil7.pipe:10:9: warning: the halo of 1 makes 'u''s staged region 1.93 times its interior"
    pg "$root/tests/kernels/stencil7_big.pipe" --verify; expect_status 0; expect_no_err
    pg "$root/samples/jacobi2d/jacobi2d.pipe" --verify; expect_status 0; expect_no_err
    pg "$root/tests/kernels/stencil7.pipe" --verify -Wno-perf; expect_status 0; expect_no_err
}

c_warning_perf_cg_halo() {
    # An input staged with a halo under cg: said at the stage, once, with its rows; the
    # same spec under cp.async, and cg without a halo (transpose), say nothing.
    pg "$root/tests/kernels/stencil27_big.pipe" --lower=cg --arch=sm_90 --verify
    expect_one_perf_warning "stencil27_big.pipe:9:9: warning: the cg lowering copies 'u''s region of 180 rows with its halo one memcpy_async call a row"
    pg "$root/samples/blur/blur.pipe" --lower=cg --arch=sm_90 --verify
    expect_one_perf_warning "blur.pipe:13:9: warning: the cg lowering copies 'src''s region of 66 rows"
    quiet_plan "$root/tests/kernels/stencil27_big.pipe" --lower=cp.async
    quiet_plan "$root/samples/transpose/transpose.pipe" --lower=cg -Wno-hints
    quiet_plan "$root/tests/kernels/stencil27_big.pipe" --lower=cg -Wno-perf
}

c_warning_perf_narrow_row_copies() {
    # An input of a steps loop that bulk copies one copy a row, its rows under 256 bytes:
    # said at the stage, once (B's rows of 512 bytes are not); tensor, auto, a streaming
    # kernel's narrow rows (transpose's 128 bytes) and sgemm's own lowering say nothing.
    pg "$root/samples/sgemm/sgemm_roles.pipe" --lower=bulk --arch=sm_90 --verify
    expect_one_perf_warning "sgemm_roles.pipe:19:11: warning: the bulk lowering copies 'A' one copy a row: 128 copies of 128 bytes each step"
    pg "$root/samples/sgemm/sgemm.pipe" --lower=bulk --arch=sm_90 --verify
    expect_err_has "sgemm.pipe:23:11: warning: the bulk lowering copies 'A' one copy a row: 256 copies of 128 bytes each step"
    pg "$root/samples/sgemm/sgemm_roles.pipe" --lower=tensor --arch=sm_90 --verify; expect_status 0; expect_no_err
    pg "$root/samples/sgemm/sgemm_roles.pipe" --arch=sm_90 --verify; expect_status 0; expect_no_err
    sed 's/b\[64\]\[64\]/b[32][128]/; s/a\[r0 : 64\]\[c0 : 64\]/a[r0 : 128][c0 : 32]/' \
        "$root/samples/transpose/transpose.pipe" >p.pipe
    grep -q 'a\[r0 : 128\]\[c0 : 32\]' p.pipe || fail "the transpose variant was not written"
    pg p.pipe --lower=bulk --arch=sm_90 --verify -Wno-hints; expect_status 0; expect_no_err
    rm -f p.pipe
}

c_warning_perf_narrow_chunks() {
    # A staged input that is one contiguous run but whose rows are not a multiple of 16
    # bytes: said at the stage, once. As a vector type, rows of 16 bytes, or rows of a
    # size symbol (not one run when the tile is narrower): nothing.
    printf '%s\n' 'pipeline u {' '  in  uint8 src[n][4];' '  out uint8 dst[n][4];' \
        '  tile  dst[1024][4] at (p0, c0);' '  stage src;' \
        '  compute elementwise (p, c) { dst[p][c] = src[p][c] ^ 1; }' '}' >p.pipe
    pg p.pipe --verify
    expect_one_perf_warning "p.pipe:5:9: warning: 'src' is copied in 4-byte chunks (its rows are 4 bytes), though its region is one run of 4096 bytes"
    pg p.pipe --verify -Wno-perf; expect_status 0; expect_no_err
    sed 's/\[4\]/[12]/g' p.pipe >q.pipe
    pg q.pipe --verify; expect_status 0; expect_err_has "'src' is copied in 4-byte chunks (its rows are 12 bytes)"
    sed 's/\[4\]/[16]/g' p.pipe >q.pipe
    pg q.pipe --verify; expect_status 0; expect_no_err
    sed 's/\[n\]\[4\]/[n][w]/g' p.pipe >q.pipe
    pg q.pipe --verify; expect_status 0; expect_no_err
    printf '%s\n' 'pipeline v {' '  in  uchar4 src[n];' '  out uchar4 dst[n];' \
        '  tile  dst[1024] at (p0);' '  stage src;' \
        '  compute elementwise (p) { dst[p] = src[p]; }' '}' >q.pipe
    pg q.pipe --verify; expect_status 0; expect_no_err
    rm -f p.pipe q.pipe
}

c_warning_perf_bins_per_tile() {
    # Array accumulators on a per-tile grid, said at the grid item (or the accumulator, for
    # --grid): every block combines all its bins for one tile. Their default grid: none.
    sed 's/^  grid    persistent;/  grid    per_tile;/' "$root/samples/histogram/histogram.pipe" >p.pipe
    pg p.pipe --verify
    expect_one_perf_warning "p.pipe:10:3: warning: array accumulator 'count' on the per-tile grid: every block clears, writes and combines all 256 of its bins"
    pg "$root/samples/histogram/histogram.pipe" --grid=per_tile --verify
    expect_status 0; expect_err_has "histogram.pipe:13:18: warning: array accumulator 'count'"
    grep -v '^  grid' p.pipe >q.pipe
    pg q.pipe --verify; expect_status 0; expect_no_err
    pg p.pipe --verify -Wno-perf; expect_status 0; expect_no_err
    pg p.pipe --verify -Werror; expect_status 1; expect_err_has "error: array accumulator"
    rm -f p.pipe q.pipe
}

c_warning_perf_unstaged_in_rows() {
    # An input read from global memory in the row passes: said at its declaration, once an
    # array; staged (as the sample does), nothing.
    sed '/^  stage   g\[0 : 1024\], b\[0 : 1024\];/d' "$root/samples/layernorm/layernorm.pipe" >l.pipe
    pg l.pipe --verify
    expect_status 0
    expect_err_has "l.pipe:9:13: warning: 'g' is read from global memory in the row passes, again for every row"
    expect_err_has "l.pipe:10:13: warning: 'b' is read from global memory in the row passes"
    [ "$(grep -c 'warning: ' <<<"$err")" = 2 ] || fail "not one warning an array: $err"
    pg "$root/samples/layernorm/layernorm.pipe" --verify; expect_status 0; expect_no_err
    # Without reductions a compute that reads an unstaged vector is no row pass.
    pg "$root/samples/saxpy/saxpy.pipe" --verify; expect_status 0; expect_no_err
    rm -f l.pipe
}
c_warning_perf_few_float_bins() {
    # A floating-point array accumulator in shared bins with fewer bins than a warp's
    # lanes: said at the accumulator, once; 32 bins, an integer type, or one by column
    # (the sample's other two, in registers) say nothing.
    pg "$root/samples/colsum/colstats.pipe" --verify
    expect_one_perf_warning "colstats.pipe:19:17: warning: floating-point array accumulator 'm' has 8 shared bins, fewer than a warp's 32 lanes"
    sed 's/float m\[8\]/float m[32]/; s/mod8\[8\]/mod8[32]/; s/m\[c % 8\]/m[c % 32]/' \
        "$root/samples/colsum/colstats.pipe" >p.pipe
    pg p.pipe --verify; expect_status 0; expect_no_err
    sed 's/accum   float m\[8\]/accum   int32 m[8]/; s/out float mod8/out int32 mod8/; s/m\[c % 8\] += x\[r\]\[c\]/m[c % 8] += (int)x[r][c]/' \
        "$root/samples/colsum/colstats.pipe" >q.pipe
    pg q.pipe --verify; expect_status 0; expect_no_err
    pg "$root/samples/colsum/colsum.pipe" --verify; expect_status 0; expect_no_err
    pg "$root/samples/colsum/colstats.pipe" --verify -Wno-perf; expect_status 0; expect_no_err
    rm -f p.pipe q.pipe
}

c_warning_perf_swizzle_ignored() {
    # A lowering that ignores a stage's `swizzle` where the compute tests the view's span:
    # said at the test in the body, once; tensor (which takes it) and auto say nothing.
    pg "$root/samples/gemm_bf16/gemm_bf16.pipe" --lower=cp.async.mbarrier --arch=sm_90 -Wno-hints --verify
    expect_one_perf_warning "gemm_bf16.pipe:56:18: warning: the compute tests 'A.swizzle', which is 0 under the cp.async.mbarrier lowering"
    pg "$root/samples/gemm_bf16/gemm_bf16.pipe" --lower=tensor --arch=sm_90a --verify
    expect_status 0; expect_no_err
    pg "$root/samples/gemm_bf16/gemm_bf16.pipe" --arch=sm_80,sm_90a --verify
    expect_status 0; expect_no_err
    # A body that does not test the span: nothing to say.
    sed 's/A\.swizzle == 128 && B\.swizzle == 128/true/' "$root/samples/gemm_bf16/gemm_bf16.pipe" >p.pipe
    pg p.pipe --lower=cp.async.mbarrier --arch=sm_90 -Wno-hints --verify; expect_status 0; expect_no_err
    rm -f p.pipe
}

c_warning_perf_whole_boxes_at_bound() {
    # A tile at a bound (cols <= 8192) under tensor, whose boxes past the array's end are
    # moved as the rest: said at the first staged input, once; a chunk-copying lowering,
    # auto, and a tile without a bound say nothing.
    pg "$root/samples/rmsnorm/rmsnorm.pipe" --lower=tensor --arch=sm_90 --verify
    expect_one_perf_warning "rmsnorm.pipe:14:11: warning: the tensor lowering copies 'x''s region to the tile's bound (cols <= 8192) whatever cols is"
    quiet_plan "$root/samples/rmsnorm/rmsnorm.pipe" --lower=cp.async
    quiet_plan "$root/samples/rmsnorm/rmsnorm.pipe"
    quiet_plan "$root/samples/softmax/softmax.pipe" --lower=tensor
    quiet_plan "$root/samples/rmsnorm/rmsnorm.pipe" --lower=tensor -Wno-perf
}

c_warning_perf_producer_chunks() {
    # Producer warps issuing 96 chunk copies a thread or more each work item (rmsnorm's
    # one warp over its bound of 8192 floats of x and of g: 128): said at the first stage,
    # once; four producer warps (32 a thread), layernorm's 80 and a lowering without
    # producer warps say nothing.
    pg "$root/samples/rmsnorm/rmsnorm.pipe" --lower=pipeline-roles --arch=sm_90 --verify
    expect_one_perf_warning "rmsnorm.pipe:14:11: warning: the pipeline-roles lowering's 32 producer threads issue 4096 chunk copies each work item, 128 a thread, while the 480 computing threads wait for them"
    quiet_plan "$root/samples/rmsnorm/rmsnorm.pipe" --lower=pipeline-roles --producer-warps=4
    quiet_plan "$root/samples/layernorm/layernorm.pipe" --lower=pipeline-roles
    quiet_plan "$root/samples/rmsnorm/rmsnorm.pipe" --lower=cp.async
}

c_warning_perf_sync_few_threads() {
    # Copies through registers (sync) with fewer than 512 threads an SM: gemv's 147840
    # bytes a block leave one block of 256 an SM. Said at the first stage, once; an
    # asynchronous lowering, auto and a spec with more blocks an SM say nothing.
    pg "$root/tests/kernels/gemv.pipe" --lower=sync --arch=sm_90 --verify
    expect_one_perf_warning "gemv.pipe:9:9: warning: the sync lowering copies 'a' through registers, and sm_90 holds 1 block of 256 threads an SM (147840 bytes of shared memory a block)"
    quiet_plan "$root/tests/kernels/gemv.pipe" --lower=cp.async
    quiet_plan "$root/tests/kernels/gemv.pipe"
    quiet_plan "$root/samples/saxpy/saxpy.pipe" --lower=sync
    quiet_plan "$root/tests/kernels/gemv.pipe" --lower=sync -Wno-perf
    # One block of 32 threads an SM with nothing staged (40000 bins in shared memory):
    # no copy to warn of.
    sed -e '/^  stage   x;/d; s/\[256\]/[40000]/g; s/^  threads 256;/  threads 32;/' \
        "$root/samples/histogram/histogram.pipe" >p.pipe
    quiet_plan p.pipe --lower=sync
    rm -f p.pipe
}

c_compute_threads_origin() {
    # A body written for the compute threads the spec declares (sgemm's pg_ctid, never
    # pg_cnt) is refused at what changes their number: the lowering that takes a producer
    # warp, even under --producer-warps=0, or --producer-warps, taking them away too; the
    # spec's own producer warps, restated, are no change. Nothing is written.
    pg "$root/samples/sgemm/sgemm.pipe" --arch=sm_90 --lower=pipeline-roles --producer-warps=0 -o k.cu
    expect_status 1
    expect_err_has "pipegen: error: --lower=pipeline-roles: the pipeline-roles lowering's 1 producer warp leaves the bodies 224 of the block's 256 threads, where the spec gives them 256"
    pg "$root/samples/sgemm/sgemm_roles.pipe" --arch=sm_90 --lower=tensor --producer-warps=0 -o k.cu
    expect_status 1
    expect_err_has "pipegen: error: --producer-warps=0: 0 producer warps leave the bodies 288 of the block's 288 threads, where the spec gives them 256"
    expect_files
    pg "$root/samples/sgemm/sgemm_roles.pipe" --arch=sm_90 --lower=tensor --producer-warps=1 --verify
    expect_status 0; expect_no_err
}

c_role_barrier_origin() {
    # A step body's __syncthreads under producer warps is refused at the barrier, naming
    # what brought them: --producer-warps, or the spec's producer_warps; without producer
    # warps the body is fine.
    sed '/^pipeline/,$!d' "$root/tests/errors/279_roles_body_barrier.pipe" >p.pipe
    pg p.pipe --arch=sm_90 --lower=tensor --producer-warps=2 -o k.cu
    expect_status 1
    expect_err_has "p.pipe:14:5: error: '__syncthreads' under producer warps (--producer-warps=2): the bodies run on the compute warps alone"
    sed 's/^  threads 128;/  threads 160;\n  producer_warps 1;/' p.pipe >q.pipe
    pg q.pipe --arch=sm_90 --lower=cp.async.mbarrier -o k.cu
    expect_status 1
    expect_err_has "q.pipe:15:5: error: '__syncthreads' under producer warps (producer_warps 1)"
    expect_files p.pipe q.pipe
    pg p.pipe --arch=sm_90 --lower=tensor --verify; expect_status 0; expect_no_err
    rm -f p.pipe q.pipe
}

c_arch_lists_valid_names() {
    local a
    for a in sm_86a sm_90aa sm_101 sm_75 compute_90 sm_a; do
        pg saxpy.pipe --arch=$a
        expect_status 1
        expect_err "pipegen: error: bad --arch '$a' (expected a comma-separated list of sm_80, sm_86, sm_87, sm_89, sm_90, sm_100, sm_103, sm_120, those from sm_90 on also arch-specific as sm_90a; nvcc's other names, such as sm_75 or sm_101, have no kernel here)"
    done
    expect_files
    # sm_90a: sm_90's kernel, compiled for the arch-specific target or refused by an #error
    # (sm_90 and sm_90a together are the one target, arch-specific).
    pg saxpy.pipe --arch=sm_80,sm_90,sm_90a -o k.cu
    expect_status 0; expect_no_err
    grep -q 'pipegen --arch=sm_80,sm_90a: compile for those, e.g. nvcc -gencode arch=compute_80,code=sm_80 -gencode arch=compute_90a,code=sm_90a -gencode arch=compute_90a,code=compute_90a' k.cu \
        || fail "no sm_90a flags in the guard"
    grep -q '__CUDA_ARCH__ == 900 && !defined(__CUDA_ARCH_FEAT_SM90_ALL)' k.cu || fail "no sm_90a feature check"
    pg saxpy.pipe --arch=sm_90 -o k.cu
    grep -q 'FEAT_SM90_ALL' k.cu && fail "plain sm_90 checks the arch-specific feature"
    rm -f k.cu k.cuh
    # Blackwell's names are targets: their kernels are sm_80's where the plan is the same.
    pg saxpy.pipe --arch=sm_80,sm_100,sm_120 -o k.cu
    expect_status 0; expect_no_err
    grep -q '^static const int saxpy_sm\[1\] = {80};' k.cu || fail "sm_100, sm_120: not sm_80's kernel"
    grep -q 'code=sm_120 -gencode arch=compute_120,code=compute_120' k.cu || fail "no sm_120 flags in the guard"
    rm -f k.cu k.cuh
}
c_diagnostics_color() {
    local esc=$'\033['
    pg bad.pipe -fdiagnostics-color=always
    expect_status 1; expect_err_has "${esc}01;31m"   # error: in red, as gcc's
    expect_err_has "unknown array 'w'"
    pg bad.pipe   # not a terminal: no colour
    [[ $err == *"$esc"* ]] && fail "colour on a pipe"
    pg bad.pipe -fdiagnostics-color=never; [[ $err == *"$esc"* ]] && fail "colour with never"
    pg bad.pipe -fdiagnostics-color=sometimes
    expect_status 1; expect_err "pipegen: error: bad -fdiagnostics-color 'sometimes' (expected never, always or auto)"
    if command -v script >/dev/null; then
        # A terminal: colour, unless NO_COLOR is set (or the option says never).
        script -qec "$pipegen bad.pipe" /dev/null >tty.out 2>&1
        grep -qF "${esc}01;31m" tty.out || fail "no colour on a terminal"
        NO_COLOR=1 script -qec "$pipegen bad.pipe" /dev/null >tty.out 2>&1
        grep -qF "$esc" tty.out && fail "colour on a terminal with NO_COLOR"
        NO_COLOR=1 script -qec "$pipegen bad.pipe -fdiagnostics-color" /dev/null >tty.out 2>&1
        grep -qF "${esc}01;31m" tty.out || fail "-fdiagnostics-color does not win over NO_COLOR"
        rm -f tty.out
    fi
    expect_files
}
c_diagnostics_json() {
    pg bad.pipe -fdiagnostics-format=json
    expect_status 1
    local got
    got=$(python3 -c 'import json, sys
for d in json.load(open(sys.argv[1])):
    print(d["file"], d["line"], d["column"], d["severity"], d["message"], sep="|")' .err 2>&1)
    [ "$got" = "bad.pipe|5|12|error|unknown array 'w'" ] || fail "json: $got"
    # Options are read first: the bad option after the format is reported in JSON too.
    pg --frobnicate -fdiagnostics-format=json
    got=$(python3 -c 'import json, sys; d = json.load(open(sys.argv[1]))[0]; print(d["file"], d["severity"], d["message"])' .err 2>&1)
    [ "$got" = "None error unknown option '--frobnicate' (pipegen --help)" ] || fail "json: $got"
    pg saxpy.pipe --verify -fdiagnostics-format=json
    expect_status 0; expect_err "[]"
    expect_files
}
c_header_path_from_the_source() {
    # The source includes the header by its path from the source's directory.
    mkdir inc gen
    pg saxpy.pipe --header inc/x.cuh -o x.cu
    expect_status 0; expect_file_has x.cu '#include "inc/x.cuh"'
    pg saxpy.pipe --header inc/x.cuh -o gen/x.cu --emit-test=t.cu --emit-bench=gen/b.cu
    expect_status 0
    expect_file_has gen/x.cu '#include "../inc/x.cuh"'
    expect_file_has t.cu '#include "inc/x.cuh"'
    expect_file_has gen/b.cu '#include "../inc/x.cuh"'
    pg saxpy.pipe --header "$case_dir/inc/y.cuh" -o gen/y.cu
    expect_status 0; expect_file_has gen/y.cu '#include "../inc/y.cuh"'
    # As the preprocessor looks it up: from the source's directory, with no -I.
    local inc
    inc=$(sed -n 's/^#include "\(.*\.cuh\)"$/\1/p' gen/x.cu | head -n 1)   # its own header, first
    [ -f "gen/$inc" ] || fail "gen/x.cu includes '$inc', which is not there from gen/"
}
c_file_prefix_map() {
    pg "$case_dir/saxpy.pipe" -o k.cu -ffile-prefix-map="$case_dir"=/src
    expect_status 0; expect_no_err
    grep -q '^#line [0-9]* "/src/saxpy.pipe"$' k.cu || fail "no #line into /src/saxpy.pipe"
    grep -q "$case_dir" k.cu && fail "the absolute path is still in k.cu"
    # Several: the last given that matches, as gcc; an empty NEW makes the path relative.
    pg "$case_dir/saxpy.pipe" -o k.cu -ffile-prefix-map="$case_dir/"= -ffile-prefix-map=/elsewhere=/x
    expect_status 0; grep -q '^#line [0-9]* "saxpy.pipe"$' k.cu || fail "no #line into saxpy.pipe (first map)"
    pg "$case_dir/saxpy.pipe" -o k.cu -ffile-prefix-map="$case_dir"=/a -ffile-prefix-map="$case_dir"=/b
    expect_status 0; grep -q '^#line [0-9]* "/b/saxpy.pipe"$' k.cu || fail "no #line into /b/saxpy.pipe (the last map)"
    pg saxpy.pipe -o k.cu -ffile-prefix-map=nothing
    expect_status 1; expect_err "pipegen: error: bad -ffile-prefix-map 'nothing' (expected OLD=NEW)"
}
c_stdin_named_stdin() {
    "$pipegen" - -o k.cu <saxpy.pipe >.out 2>.err
    expect_file_has k.cu "// Code generated by pipegen $version from <stdin>. DO NOT EDIT."
    grep -q '^#line [0-9]* "<stdin>"$' k.cu || fail "#line does not name <stdin>"
    "$pipegen" - -o k.cu <bad.pipe >.out 2>.err
    err=$(cat .err)
    expect_err_has "<stdin>:5:12: error: unknown array 'w'"
}
c_test_driver_misaligns_per_array() {
    # The test driver's misaligned cases move each array by its own element size (the
    # launcher requires element alignment): a uint8 tile must not take an int array to
    # offset 1. Every array is at exactly its element size in one case, at larger
    # alignments in others, and arrays of one case differ in some case.
    cp "$root/tests/golden/u8_tile_int.pipe" u8.pipe
    pg u8.pipe -o k.cu --emit-test=t.cu
    expect_status 0; expect_no_err
    local rows
    rows=$(sed -n '/^static const size_t pg_offsets\[/,/^};/p' t.cu | sed -n 's/^    {\(.*\)},$/\1/p' | tr -d ' ')
    [ -n "$rows" ] || { fail "t.cu has no pg_offsets table"; return; }
    grep -q '^enum { PG_NARRAYS = 3, PG_NOFFSETS = [0-9]* };$' t.cu || fail "no PG_NARRAYS = 3"
    # Arrays u (uint8), k (int), z (uint8).
    local esz=(1 4 1) r i v seen_exact=0 seen_mixed=0 col0= col1=
    while IFS=, read -r -a r; do
        [ ${#r[@]} = 3 ] || { fail "row '${r[*]}' has not 3 offsets"; continue; }
        for i in 0 1 2; do
            v=${r[$i]}
            case $v in 0|1|2|4|8) ;; *) fail "offset $v is not 0 or 1, 2, 4, 8 bytes"; continue ;; esac
            [ $((v % esz[i])) = 0 ] || fail "array $i (element size ${esz[i]}) at offset $v"
        done
        [ "${r[*]}" = "1 4 1" ] && seen_exact=1
        [ "${r[0]}" != "${r[2]}" ] && seen_mixed=1
        col0+="${r[0]} "; col1+="${r[1]} "
    done <<<"$rows"
    [ "$(head -n 1 <<<"$rows")" = "0,0,0" ] || fail "the first row is not the aligned case"
    [ $seen_exact = 1 ] || fail "no case with every array at exactly its element size"
    [ $seen_mixed = 1 ] || fail "no case where the uint8 arrays differ in alignment"
    for v in 1 2 4 8; do
        [[ " $col0" == *" $v "* ]] || fail "u is never at offset $v: $col0"
    done
    for v in 4 8; do
        [[ " $col1" == *" $v "* ]] || fail "k is never at offset $v: $col1"
    done
    grep -q 'pg_case(pg_cases\[4\], mis, 0);' t.cu || fail "the misaligned cases do not run each row"
    rm -f u8.pipe k.cu k.cuh t.cu
    expect_files
}

c_test_driver_accum_reference() {
    # The reference's accumulators: half and bfloat16 in their own type (the compute
    # body's text compiles there; a double made '>' and '?:' ambiguous), float and int
    # wider, and each starting at the device's identity (an int's min at INT_MAX: INFINITY
    # converted to long long is undefined, and was LLONG_MIN on x86).
    cp "$root/tests/golden/accum_types.pipe" acc.pipe
    pg acc.pipe -o k.cu --emit-test=t.cu
    expect_status 0; expect_no_err
    local d
    for d in "    __half hi = -INFINITY;" "    long long lo = 0x7fffffff;" \
             "    long long tot = 0;" "    unsigned char top = 0;" \
             "    __nv_bfloat16 blo = INFINITY;" "    kmin[0] = (int)lo;"; do
        grep -qxF -- "$d" t.cu || fail "t.cu lacks '$d'"
    done
    sed 's/^  out   int      kmin\[1\];/  out   int      kmin[1];\n  out   int      kmax[1];/; s/^  accum   int      lo  combine min into kmin;/&\n  accum   int      hi2 combine max into kmax;/' acc.pipe >acc2.pipe
    pg acc2.pipe -o k.cu --emit-test=t.cu
    expect_status 0
    grep -qxF "    long long hi2 = (-0x7fffffff - 1);" t.cu || fail "int max does not start at INT_MIN"
    rm -f acc.pipe acc2.pipe k.cu k.cuh t.cu
    expect_files
}

c_numeric_options_digits_only() {
    # Numbers on the command line are digits: no blank, sign, base prefix or fraction
    # that strtol, strtod or scanf would have taken.
    local v
    for v in ' 1' '+1' '-0' '1 ' '0x1' '' '1e1' '2.0' $'1\n'; do
        pg saxpy.pipe --producer-warps="$v" --verify
        expect_status 1; expect_err "pipegen: error: bad --producer-warps '$v' (expected 0 to 31)"
    done
    pg saxpy.pipe --producer-warps=02 --lower=cp.async.mbarrier --verify
    expect_status 0; expect_no_err
    for v in ' 5' '+5' '-5' '1.5' '0x10' '0x1p4' '1e' '.5' '5.' 'e5' '1e+6' '0'; do
        pg saxpy.pipe --watchdog="$v" --verify
        expect_status 1; expect_err "pipegen: error: bad --watchdog '$v' (expected a number of cycles)"
    done
    for v in 1000 1e6 2E9 1.5e3; do
        pg saxpy.pipe --lower=cp.async.mbarrier --watchdog="$v" --verify
        expect_status 0; expect_no_err
    done
    for v in 'sm_ 80' 'sm_+80' 'sm_080' 'sm_80 ' ' sm_80' 'sm_80,sm_ 90'; do
        pg saxpy.pipe --arch="$v" --verify
        expect_status 1; expect_err_has "pipegen: error: bad --arch '$v' (expected"
    done
    expect_files
}

# ------------------------------------------------------------------ driver
case_setup() {
    cp "$root/samples/saxpy/saxpy.pipe" "$case_dir/saxpy.pipe"
    printf '%s\n' "pipeline p {" "  in  float x[n];" "  out float z[n];" "  tile z[256];" \
        "  stage x, w;" "  compute elementwise (i) { z[i] = x[i]; }" "}" >"$case_dir/bad.pipe"
}
run_cases $(cases_of "$0" "${args[@]}")
echo "cli: $xfailed known failure(s) (reported bugs)"
suite_end
