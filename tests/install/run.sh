#!/usr/bin/env bash
# Install tests: `make install PREFIX=... DESTDIR=...` into a temporary directory, what it
# put there (files, modes, soname links, exported symbols, versions, the man page against
# --help, pkg-config), the example project (examples/scale) built against it with make (a
# pattern rule and pipegen's depfile) and with CMake (find_package(pipegen),
# pipegen_generate), compile and link only (no GPU needed): touching the spec, and only
# that, runs pipegen again; then `make uninstall` leaves nothing behind.
#
# usage: tests/install/run.sh [CASE...]
# One line per case; the last line is `install: N passed, M failed`. Cases that need nvcc
# or cmake where there is none are skipped (a line says so). The cases after `install`
# use what it installed, in order (naming cases runs install first).
#   NVCC=/path/to/nvcc            (default: nvcc on PATH, else /usr/local/cuda/bin/nvcc)
#   INSTALL_KEEP=DIR              keep the installed tree and the builds in DIR
set -u

. "$(dirname "$0")/../lib.sh"
suite_start install "[CASE...]" "$@"
if [ -n "${INSTALL_KEEP:-}" ]; then
    rm -rf "$tmp"
    trap - EXIT           # suite_start's trap would remove the kept directory
    tmp=$INSTALL_KEEP
    rm -rf "$tmp" && mkdir -p "$tmp" || exit 2
fi
# Run by `make check`: none of the outer make's flags, job server or level leak in.
unset MAKEFLAGS MFLAGS MAKELEVEL MAKEFILES MAKEOVERRIDES
make=${MAKE_PROGRAM:-make}

NVCC=${NVCC:-$(command -v nvcc 2>/dev/null || echo /usr/local/cuda/bin/nvcc)}
export NVCC
PATH=$PATH:$(dirname "$NVCC")
have_nvcc=0
[ -x "$NVCC" ] && have_nvcc=1
have_cmake=0
command -v cmake >/dev/null 2>&1 && have_cmake=1

version=$(sed -n 's/^#define PIPEGEN_VERSION "\([^"]*\)".*/\1/p' "$root/src/pipegen.h")
major=${version%%.*}
abi=$(sed -n 's/^#define PIPERT_ABI_VERSION \([0-9]*\).*/\1/p' "$root/runtime/pipert.h")
prefix=/opt/pipegen-test
dest=$tmp/dest
inst=$dest$prefix          # where the files are, before DESTDIR is taken away

problems=()
fail() { problems+=("$*"); }
skipped=""
skip() { skipped=$*; }

# What `make install` must put there, and nothing else.
expected_files() {
    local h
    printf '%s\n' bin/pipegen bin/pipegen-tune lib/libpipert.a "lib/libpipert.so.$version" \
        "lib/libpipert.so.$major" lib/libpipert.so include/pipegen/pipert.h lib/pkgconfig/pipert.pc \
        lib/cmake/pipegen/pipegenConfig.cmake lib/cmake/pipegen/pipegenConfigVersion.cmake \
        lib/cmake/pipegen/pipegenGenerate.cmake share/man/man1/pipegen.1 share/pipegen/install_manifest.txt
    for h in "$root"/runtime/pipert_*.cuh; do
        echo "include/pipegen/$(basename "$h")"
    done
}

# The functions pipert.h exports (PIPERT_API), sorted.
api_functions() {
    grep '^PIPERT_API ' "$root/runtime/pipert.h" | sed -E 's/\(.*//; s/.*[ *]//' | sort -u
}

# stamp FILE: its inode and modification time (pipegen replaces an output by renaming a
# new file into place, so a regenerated file has a new inode).
stamp() {
    stat -c '%i %Y.%y' "$1" 2>/dev/null || echo missing
}

# runs BIN [ARGS...]: BIN runs as built, with no LD_LIBRARY_PATH: it must load (libpipert
# and the CUDA runtime found), and exit 0, or, on a machine without a GPU, 77 with a line
# saying there is no CUDA device. Sets ran (its output).
runs() {
    local st=0
    ran=$(env -u LD_LIBRARY_PATH timeout 120 "$@" 2>&1) || st=$?
    if grep -q "error while loading shared libraries" <<<"$ran"; then
        fail "$(basename "$1") does not load: $ran"
    elif [ $st = 77 ]; then
        grep -qi "no CUDA device" <<<"$ran" || fail "$(basename "$1") exited 77 without saying there is no CUDA device: $ran"
    elif [ $st != 0 ]; then
        fail "$(basename "$1") exited $st: $(tail -n 3 <<<"$ran" | tr '\n' ' ')"
    fi
}

pc() {
    PKG_CONFIG_PATH=$inst/lib/pkgconfig pkg-config "$@"
}

# ------------------------------------------------------------------ cases
c_install() {
    "$make" -C "$root" --no-print-directory install PREFIX="$prefix" DESTDIR="$dest" \
        >"$case_dir/out" 2>&1 || { fail "make install failed: $(tail -n 3 "$case_dir/out" | tr '\n' ' ')"; return; }
    local got want
    got=$(cd "$inst" && find . ! -type d | sed 's|^\./||' | sort)
    want=$(expected_files | sort)
    [ "$got" = "$want" ] || fail "installed files differ: $(diff <(echo "$want") <(echo "$got") | grep '^[<>]' | tr '\n' ' ')"
    [ "$(ls -A "$dest")" = opt ] && [ "$(ls -A "$dest/opt")" = pipegen-test ] \
        || fail "make install wrote outside PREFIX: $(cd "$dest" && find . -maxdepth 2 | tr '\n' ' ')"
    [ "$(stat -c %a "$inst/bin/pipegen")" = 755 ] || fail "bin/pipegen is not mode 755"
    [ "$(stat -c %a "$inst/bin/pipegen-tune")" = 755 ] || fail "bin/pipegen-tune is not mode 755"
    [ "$(stat -c %a "$inst/lib/libpipert.so.$version")" = 755 ] || fail "the shared library is not mode 755"
    local f
    for f in lib/libpipert.a include/pipegen/pipert.h lib/pkgconfig/pipert.pc share/man/man1/pipegen.1 \
             share/pipegen/install_manifest.txt; do
        [ "$(stat -c %a "$inst/$f")" = 644 ] || fail "$f is not mode 644"
    done
    [ "$(readlink "$inst/lib/libpipert.so.$major")" = "libpipert.so.$version" ] \
        || fail "libpipert.so.$major -> $(readlink "$inst/lib/libpipert.so.$major")"
    [ "$(readlink "$inst/lib/libpipert.so")" = "libpipert.so.$major" ] \
        || fail "libpipert.so -> $(readlink "$inst/lib/libpipert.so")"
    for f in pipert.h $(cd "$root/runtime" && ls pipert_*.cuh); do
        cmp -s "$root/runtime/$f" "$inst/include/pipegen/$f" || fail "include/pipegen/$f differs from runtime/$f"
    done
    # The manifest names what install put, relative to PREFIX (itself included).
    [ "$(sort "$inst/share/pipegen/install_manifest.txt")" = "$want" ] \
        || fail "install_manifest.txt is not the installed files: $(diff <(echo "$want") <(sort "$inst/share/pipegen/install_manifest.txt") | grep '^[<>]' | tr '\n' ' ')"
    # Installing again over it changes nothing.
    "$make" -C "$root" --no-print-directory install PREFIX="$prefix" DESTDIR="$dest" \
        >"$case_dir/out2" 2>&1 || fail "a second make install failed"
    [ "$(cd "$inst" && find . ! -type d | sed 's|^\./||' | sort)" = "$want" ] \
        || fail "a second make install changed the files"
}

c_library() {
    local so=$inst/lib/libpipert.so.$version got want
    readelf -d "$so" | grep -q "Library soname: \[libpipert.so.$major\]" \
        || fail "soname: $(readelf -d "$so" | grep SONAME)"
    readelf -d "$so" | grep -q 'NEEDED.*\[libcudart\.so' || fail "libpipert.so does not need libcudart"
    # A kernel's host stub is known only to the CUDA runtime it was registered with: the
    # library must not take one, or a program on the static runtime (nvcc's default) fails.
    got=$(nm -D --undefined-only "$so" | awk '{print $2}' | grep -E '^cuda(Func|Occupancy|LaunchKernel)' || true)
    [ -z "$got" ] || fail "libpipert.so calls the CUDA runtime with kernel stubs: $(echo $got)"
    want=$(api_functions)
    [ "$(wc -l <<<"$want")" -ge 30 ] || fail "found only $(wc -l <<<"$want") PIPERT_API functions in pipert.h"
    got=$(nm -D --defined-only "$so" | awk '$2 ~ /^[TDBRVW]$/ {print $3}' | sort -u)
    [ "$got" = "$want" ] || fail "exported symbols are not pipert.h's API: $(diff <(echo "$want") <(echo "$got") | grep '^[<>]' | tr '\n' ' ')"
    got=$(nm -g --defined-only "$inst/lib/libpipert.a" 2>/dev/null | awk 'NF == 3 && $2 ~ /^[TDBR]$/ {print $3}' | sort -u)
    [ "$got" = "$want" ] || fail "libpipert.a defines other global symbols: $(diff <(echo "$want") <(echo "$got") | grep '^[<>]' | tr '\n' ' ')"
}

c_versions() {
    [ "$("$inst/bin/pipegen" --version)" = "pipegen $version" ] || fail "pipegen --version: $("$inst/bin/pipegen" --version)"
    [ "$(pc --modversion pipert 2>&1)" = "$version" ] || fail "pkg-config --modversion pipert: $(pc --modversion pipert 2>&1)"
    grep -q "^#define PIPERT_ABI_VERSION $abi\$" "$inst/include/pipegen/pipert.h" || fail "installed pipert.h: no ABI $abi"
    grep -q "^#define PIPEGEN_PIPERT_ABI $abi\$" "$root/src/pipegen.h" \
        || fail "pipegen writes sources for another ABI than pipert.h's $abi (PIPEGEN_PIPERT_ABI)"
    # A C program against the installed header and shared library (no GPU: these calls
    # do not reach the device).
    cat >"$case_dir/v.c" <<'EOF'
#include <pipert.h>
#include <stdio.h>
int main(void)
{
    static const pipert_stream_array a[2] = { { PIPERT_IN, 4 }, { PIPERT_OUT, 4 } };
    pipert_stream_problem p = { 1000000, 0, 1024, a, 2 };
    pipert_stream_device d = { 0, 2, 1, 0, -5, 0 };
    pipert_stream_layout l;
    cudaError_t err = pipert_stream_layout_plan(NULL, &p, &d, 1, &l);
    printf("%s %d %d %lld %lld\n", pipert_version(), pipert_abi_version(), (int)err,
           (long long)l.chunks, (long long)(l.chunks ? l.tail_elements : 0));
    return PIPERT_ABI_VERSION != pipert_abi_version();
}
EOF
    # shellcheck disable=SC2046
    if ! ${CC:-cc} -std=c11 -Wall -Wextra -Werror -o "$case_dir/v" "$case_dir/v.c" \
            $(pc --cflags --libs pipert) >"$case_dir/cc.out" 2>&1; then
        fail "a C program against the installed pipert.pc does not build: $(head -n 3 "$case_dir/cc.out" | tr '\n' ' ')"
        return
    fi
    readelf -d "$case_dir/v" | grep -q "NEEDED.*\[libpipert.so.$major\]" \
        || fail "the program does not need libpipert.so.$major"
    local out
    # It runs as linked, libpipert found by the rpath pipert.pc gave.
    out=$(env -u LD_LIBRARY_PATH "$case_dir/v" 2>&1) || fail "the program failed: $out"
    # 8 MB moved over 4 streams: 8 chunks of 1 MiB (131072 elements, a multiple of 1024).
    [ "$out" = "$version $abi 0 8 82496" ] || fail "the program printed '$out'"
    # The CMake package's version rules (same major; before 1.0 the same minor too).
    if [ $have_cmake = 1 ]; then
        local req want_c line
        cat >"$case_dir/find.cmake" <<'EOF'
set(PACKAGE_FIND_VERSION "${REQ}")
if(REQ)
  string(REPLACE "." ";" _parts "${REQ}")
  list(LENGTH _parts PACKAGE_FIND_VERSION_COUNT)
  list(APPEND _parts 0 0 0)
  list(GET _parts 0 PACKAGE_FIND_VERSION_MAJOR)
  list(GET _parts 1 PACKAGE_FIND_VERSION_MINOR)
  list(GET _parts 2 PACKAGE_FIND_VERSION_PATCH)
endif()
set(CMAKE_SIZEOF_VOID_P 8)
include("${FILE}")
message("${PACKAGE_VERSION_COMPATIBLE}")
EOF
        for line in ":TRUE" "0:TRUE" "0.1:TRUE" "$version:TRUE" "0.0:FALSE" "0.2:FALSE" \
                    "1.0:FALSE" "9:FALSE" "0.1.99:FALSE"; do
            req=${line%%:*} want_c=${line#*:}
            out=$(cmake -DREQ="$req" -DFILE="$inst/lib/cmake/pipegen/pipegenConfigVersion.cmake" \
                -P "$case_dir/find.cmake" 2>&1)
            [ "$out" = "$want_c" ] || fail "find_package(pipegen $req): compatible '$out', expected $want_c"
        done
    fi
}

c_man_page() {
    local man=$inst/share/man/man1/pipegen.1
    "$root/scripts/man.sh" "$inst/bin/pipegen" >"$case_dir/pipegen.1" 2>"$case_dir/err" \
        || fail "scripts/man.sh failed: $(cat "$case_dir/err")"
    cmp -s "$man" "$case_dir/pipegen.1" || fail "the installed man page is not the one --help gives"
    grep -q "^\.TH PIPEGEN 1 \"\" \"pipegen $version\"" "$man" || fail "the man page's .TH: $(grep '^\.TH' "$man")"
    command -v groff >/dev/null 2>&1 || return 0
    local text opt
    groff -man -Tutf8 -ww -z "$man" >"$case_dir/groff" 2>&1
    [ -s "$case_dir/groff" ] && fail "groff warns: $(head -n 3 "$case_dir/groff" | tr '\n' ' ')"
    text=$(groff -man -Tascii -P-c -P-b -P-u "$man" 2>/dev/null)
    # Every option of --help, as --help names it.
    while IFS= read -r opt; do
        grep -qF -- "$opt" <<<"$text" || fail "the man page has no '$opt'"
    done < <("$inst/bin/pipegen" --help | grep -E '^  -' | sed -E 's/^  //; s/  .*//; s/ [a-z].*$//')
}

c_pkg_config() {
    local flags
    flags=$(pc --cflags --libs pipert 2>&1) || { fail "pkg-config --cflags --libs pipert: $flags"; return; }
    # Relocatable: the flags name the tree where the file is, DESTDIR and all.
    # The generated code includes "pipert.h" and "pipert_*.cuh": their directory.
    grep -q -- "-I$inst/lib/pkgconfig/../../include/pipegen" <<<"$flags" || fail "no -I of the installed include/pipegen: $flags"
    grep -q -- "-L$inst/lib/pkgconfig/../../lib -Wl,-rpath,$inst/lib/pkgconfig/../../lib -lpipert" <<<"$flags" \
        || fail "no -L, rpath and -lpipert: $flags"
    grep -q -- "-L[^ ]* -Wl,-rpath,[^ ]* -lcudart" <<<"$flags" || fail "no -L, rpath and -lcudart: $flags"
}

# A copy of the example to build.
example() {
    rm -rf "$tmp/$1" && cp -r "$root/examples/scale" "$tmp/$1"
    ex=$tmp/$1
}

c_make_example() {
    [ $have_nvcc = 1 ] || { skip "no nvcc"; return; }
    example ex-make
    # pipegen through a wrapper that counts its runs.
    printf '#!/bin/sh\necho run >>"%s"\nexec "%s" "$@"\n' "$tmp/pipegen-runs" "$inst/bin/pipegen" \
        >"$tmp/pipegen-wrap"
    chmod +x "$tmp/pipegen-wrap"
    : >"$tmp/pipegen-runs"
    "$make" -C "$ex" --no-print-directory PIPEGEN_PREFIX="$inst" PIPEGEN="$tmp/pipegen-wrap" \
        >"$case_dir/out" 2>&1 || { fail "make failed: $(tail -n 5 "$case_dir/out" | tr '\n' ' ')"; return; }
    [ -x "$ex/scale" ] || fail "no scale binary"
    [ "$(wc -l <"$tmp/pipegen-runs")" = 1 ] || fail "pipegen ran $(wc -l <"$tmp/pipegen-runs") times"
    [ "$(cat "$ex/scale.cu.d" 2>/dev/null)" = "$(printf 'scale.cu scale.cuh: scale.pipe\n\nscale.pipe:')" ] \
        || fail "scale.cu.d: $(tr '\n' '|' <"$ex/scale.cu.d")"
    grep -q -- "--arch=sm_80" "$case_dir/out" || fail "pipegen was not run for ARCH"
    grep -q "arch=compute_80,code=\[sm_80,compute_80\]" "$case_dir/out" || fail "nvcc did not compile for sm_80"
    readelf -d "$ex/scale" | grep -q "NEEDED.*\[libpipert.so.$major\]" || fail "scale does not need libpipert.so.$major"
    readelf -d "$ex/scale" | grep -q "NEEDED.*\[libcudart.so" || fail "scale does not use the shared CUDA runtime"
    runs "$ex/scale" 1000
}

# make_rebuild WHAT: the example's make after touching WHAT ("" for nothing); sets runs
# (pipegen's runs) and changed (whether scale.cu was replaced) and keeps make's output.
make_rebuild() {
    local before
    before=$(stamp "$ex/scale.cu")
    : >"$tmp/pipegen-runs"
    [ -n "$1" ] && touch "$ex/$1"
    "$make" -C "$ex" --no-print-directory PIPEGEN_PREFIX="$inst" PIPEGEN="$tmp/pipegen-wrap" \
        >"$case_dir/out" 2>&1 || fail "make after touching '${1:-nothing}' failed: $(tail -n 3 "$case_dir/out" | tr '\n' ' ')"
    runs=$(wc -l <"$tmp/pipegen-runs")
    changed=0
    [ "$(stamp "$ex/scale.cu")" != "$before" ] && changed=1
}

c_make_regenerates_only_the_spec() {
    [ $have_nvcc = 1 ] || { skip "no nvcc"; return; }
    [ -x "$tmp/ex-make/scale" ] || { fail "the make example was not built"; return; }
    ex=$tmp/ex-make
    make_rebuild ""
    [ "$runs" = 0 ] && [ $changed = 0 ] || fail "a make with nothing changed ran pipegen"
    grep -q "is up to date" "$case_dir/out" || fail "a make with nothing changed did: $(head -n 2 "$case_dir/out" | tr '\n' ' ')"
    make_rebuild main.c
    [ "$runs" = 0 ] && [ $changed = 0 ] || fail "touching main.c ran pipegen"
    grep -q -- "-c -o main.o main.c" "$case_dir/out" || fail "touching main.c did not recompile it"
    grep -q -- "-c -o scale.o scale.cu" "$case_dir/out" && fail "touching main.c recompiled scale.cu"
    make_rebuild scale.pipe
    [ "$runs" = 1 ] && [ $changed = 1 ] || fail "touching scale.pipe: pipegen ran $runs times, scale.cu replaced: $changed"
    grep -q -- "-c -o scale.o scale.cu" "$case_dir/out" || fail "touching scale.pipe did not recompile scale.cu"
}

# cmake_build DIR [ARGS...]: configure (once) and build the example in DIR.
cmake_build() {
    local b=$1
    shift
    if [ ! -f "$b/CMakeCache.txt" ]; then
        cmake -G "Unix Makefiles" -S "$ex" -B "$b" -DCMAKE_PREFIX_PATH="$inst" \
            -DCMAKE_CUDA_COMPILER="$NVCC" "$@" \
            >"$case_dir/configure" 2>&1 \
            || { fail "cmake configure failed: $(grep -m 3 -i error "$case_dir/configure" | tr '\n' ' ')"; return 1; }
    fi
    cmake --build "$b" -- VERBOSE=1 >"$case_dir/out" 2>&1 \
        || { fail "cmake --build failed: $(grep -m 3 -iE 'error|fatal' "$case_dir/out" | tr '\n' ' ')"; return 1; }
}

c_cmake_example() {
    [ $have_nvcc = 1 ] || { skip "no nvcc"; return; }
    [ $have_cmake = 1 ] || { skip "no cmake"; return; }
    example ex-cmake
    cmake_build "$ex/b" || return
    [ -x "$ex/b/scale" ] || fail "no scale binary"
    [ -f "$ex/b/pipegen/scale.cu" ] && [ -f "$ex/b/pipegen/scale.cuh" ] || fail "no generated scale.cu, scale.cuh"
    [ -f "$ex/b/pipegen/scale.cu.d" ] || fail "pipegen wrote no depfile"
    grep -q "pipegen $ex/scale.pipe -o $ex/b/pipegen/scale.cu --arch=sm_80 -MD -MF $ex/b/pipegen/scale.cu.d --lower=cp.async --wisdom= --wisdom-gpu= -ffile-prefix-map=$ex/= -ffile-prefix-map=$ex/b/=\$" \
        "$case_dir/out" || fail "pipegen_generate did not run pipegen as expected: $(grep -m 1 'bin/pipegen' "$case_dir/out")"
    # Relocatable: the spec named relative to the source tree, no absolute path.
    grep -q '^#line [0-9]* "scale.pipe"$' "$ex/b/pipegen/scale.cu" || fail "no #line into scale.pipe (relative)"
    grep -l "$ex" "$ex/b/pipegen/scale.cu" "$ex/b/pipegen/scale.cuh" >/dev/null && fail "the generated files name $ex"
    grep -q "lowering cp.async" "$ex/b/pipegen/scale.cu" || fail "LOWER did not reach pipegen"
    grep -qE 'arch=compute_80,code=\[compute_80,sm_80\]' "$case_dir/out" \
        || fail "the generated source was not compiled for sm_80 (CUDA_ARCHITECTURES)"
    cat "$case_dir/out" "$ex"/b/CMakeFiles/scale.dir/link*.* >"$case_dir/link" 2>/dev/null
    grep -q "$inst/lib/libpipert.a" "$case_dir/link" || fail "pipegen::pipert did not link libpipert.a"
    readelf -d "$ex/b/scale" | grep -q "NEEDED.*libpipert" && fail "the static link needs libpipert.so"
    runs "$ex/b/scale" 1000
    # The depfile is CMake's: it knows the spec from pipegen's -MD.
    grep -rqs "scale.pipe" "$ex/b/CMakeFiles/scale.dir/compiler_depend.make" \
        || fail "CMake did not read pipegen's depfile"
}

# cmake_rebuild WHAT: like make_rebuild, for the CMake build.
cmake_rebuild() {
    local before
    before=$(stamp "$ex/b/pipegen/scale.cu")
    [ -n "$1" ] && touch "$ex/$1"
    cmake --build "$ex/b" -- VERBOSE=1 >"$case_dir/out" 2>&1 \
        || fail "cmake --build after touching '${1:-nothing}' failed"
    runs=$(grep -c "bin/pipegen $ex/scale.pipe" "$case_dir/out")
    changed=0
    [ "$(stamp "$ex/b/pipegen/scale.cu")" != "$before" ] && changed=1
}

c_cmake_regenerates_only_the_spec() {
    [ $have_nvcc = 1 ] || { skip "no nvcc"; return; }
    [ $have_cmake = 1 ] || { skip "no cmake"; return; }
    [ -x "$tmp/ex-cmake/b/scale" ] || { fail "the CMake example was not built"; return; }
    ex=$tmp/ex-cmake
    cmake_rebuild ""
    [ "$runs" = 0 ] && [ $changed = 0 ] || fail "a build with nothing changed ran pipegen"
    grep -q "Building" "$case_dir/out" && fail "a build with nothing changed compiled something"
    cmake_rebuild main.c
    [ "$runs" = 0 ] && [ $changed = 0 ] || fail "touching main.c ran pipegen"
    grep -q "Building C object CMakeFiles/scale.dir/main.c.o" "$case_dir/out" || fail "touching main.c did not recompile it"
    grep -q "Building CUDA object" "$case_dir/out" && fail "touching main.c recompiled scale.cu"
    cmake_rebuild scale.pipe
    [ "$runs" = 1 ] && [ $changed = 1 ] || fail "touching scale.pipe: pipegen ran $runs times, scale.cu replaced: $changed"
    grep -q "Building CUDA object CMakeFiles/scale.dir/pipegen/scale.cu.o" "$case_dir/out" \
        || fail "touching scale.pipe did not recompile scale.cu"
}

c_cmake_shared() {
    # PIPEGEN_PIPERT_SHARED: libpipert.so, and the shared CUDA runtime with it.
    [ $have_nvcc = 1 ] || { skip "no nvcc"; return; }
    [ $have_cmake = 1 ] || { skip "no cmake"; return; }
    ex=$tmp/ex-cmake
    [ -d "$ex" ] || example ex-cmake
    cmake_build "$ex/bs" -DPIPEGEN_PIPERT_SHARED=ON || return
    readelf -d "$ex/bs/scale" | grep -q "NEEDED.*\[libpipert.so.$major\]" || fail "scale does not need libpipert.so.$major"
    readelf -d "$ex/bs/scale" | grep -q "NEEDED.*\[libcudart.so" || fail "scale does not use the shared CUDA runtime"
    cat "$case_dir/out" "$ex"/bs/CMakeFiles/scale.dir/link*.* >"$case_dir/link" 2>/dev/null
    grep -q "cudart_static" "$case_dir/link" && fail "the static CUDA runtime was linked too"
    runs "$ex/bs/scale" 1000
    return 0
}

c_cmake_subdirectory() {
    # The root CMakeLists.txt taken in by add_subdirectory (as FetchContent does): it
    # builds pipegen (FindFLEX, FindBISON) and libpipert, and the example is generated,
    # compiled and linked with them, then run as built.
    [ $have_nvcc = 1 ] || { skip "no nvcc"; return; }
    [ $have_cmake = 1 ] || { skip "no cmake"; return; }
    example ex-sub
    cmake -G "Unix Makefiles" -S "$ex" -B "$ex/b" -DPIPEGEN_SOURCE_DIR="$root" \
        -DCMAKE_CUDA_COMPILER="$NVCC" >"$case_dir/configure" 2>&1 \
        || { fail "cmake configure failed: $(grep -m 3 -i error "$case_dir/configure" | tr '\n' ' ')"; return; }
    cmake --build "$ex/b" -j 2 -- VERBOSE=1 >"$case_dir/out" 2>&1 \
        || { fail "cmake --build failed: $(grep -m 3 -iE 'error|fatal' "$case_dir/out" | tr '\n' ' ')"; return; }
    [ -x "$ex/b/pipegen-build/pipegen" ] || fail "pipegen was not built"
    [ -f "$ex/b/pipegen-build/libpipert.a" ] || fail "libpipert.a was not built"
    [ -f "$ex/b/pipegen-build/libpipert.so.$version" ] || fail "libpipert.so.$version was not built"
    grep -q "pipegen-build/pipegen $ex/scale.pipe -o $ex/b/pipegen/scale.cu --arch=sm_80" "$case_dir/out" \
        || fail "the built pipegen did not generate scale.cu: $(grep -m 1 'scale.pipe -o' "$case_dir/out")"
    [ "$("$ex/b/pipegen-build/pipegen" --version)" = "pipegen $version" ] || fail "the built pipegen's version"
    cat "$case_dir/out" "$ex"/b/CMakeFiles/scale.dir/link*.* >"$case_dir/link" 2>/dev/null
    grep -q "pipegen-build/libpipert.a" "$case_dir/link" || fail "scale was not linked with the built libpipert.a"
    [ -x "$ex/b/scale" ] && runs "$ex/b/scale" 1000
}

c_cmake_archs() {
    # pipegen_generate takes every architecture pipegen --arch takes (configure, generate,
    # and CMake's nvcc flags; not compiled: 12 architectures take minutes), and refuses
    # others at configure time.
    [ $have_nvcc = 1 ] || { skip "no nvcc"; return; }
    [ $have_cmake = 1 ] || { skip "no cmake"; return; }
    local p=$case_dir/p a
    local all
    mkdir -p "$p" && cp "$root/examples/scale/scale.pipe" "$p/"
    archs_project() {
        printf '%s\n' "cmake_minimum_required(VERSION 3.20)" "set(CMAKE_CUDA_ARCHITECTURES 80)" \
            "project(archs LANGUAGES C CUDA)" "find_package(pipegen REQUIRED)" "add_library(k OBJECT)" \
            "pipegen_generate(TARGET k SPECS scale.pipe ARCH $1)" >"$p/CMakeLists.txt"
        rm -rf "$p/b"
        cmake -G "Unix Makefiles" -S "$p" -B "$p/b" -DCMAKE_PREFIX_PATH="$inst" \
            -DCMAKE_CUDA_COMPILER="$NVCC" >"$case_dir/configure" 2>&1
    }
    # pipegen takes at most 4 architectures at once: three projects.
    for all in sm_80,sm_86,sm_87,sm_89 sm_90,sm_100,sm_103,sm_120 sm_90a,sm_100a,sm_103a,sm_120a; do
        archs_project "$all" || { fail "configure with ARCH $all failed: $(grep -m 3 -iE 'error|ARCH' "$case_dir/configure" | tr '\n' ' ')"; continue; }
        (cd "$p/b" && "$make" -f CMakeFiles/k.dir/build.make VERBOSE=1 pipegen/scale.cu) >"$case_dir/gen" 2>&1 \
            || { fail "generating for $all failed: $(tail -n 3 "$case_dir/gen" | tr '\n' ' ')"; continue; }
        grep -q -- "--arch=$all " "$case_dir/gen" || fail "pipegen was not run with --arch=$all: $(grep -m 1 bin/pipegen "$case_dir/gen")"
        grep -q "${all##*,}" "$p/b/pipegen/scale.cu" || fail "scale.cu has no ${all##*,}"
        for a in $(sed 's/sm_//g; s/,/ /g' <<<"${all%,*}"); do
            grep -q "arch=compute_$a,code=\[sm_$a\]" "$p/b/CMakeFiles/k.dir/flags.make" \
                || fail "CMake compiles for no sm_$a: $(grep -m 1 CUDA_FLAGS "$p/b/CMakeFiles/k.dir/flags.make")"
        done
        a=${all##*,sm_}   # the newest, also as PTX
        grep -q "arch=compute_$a,code=\[compute_$a,sm_$a\]" "$p/b/CMakeFiles/k.dir/flags.make" \
            || fail "no sm_$a with its PTX, the newest: $(grep -m 1 CUDA_FLAGS "$p/b/CMakeFiles/k.dir/flags.make")"
    done
    for a in sm_75 sm_80a sm_101 90; do
        archs_project "$a" && fail "ARCH $a was taken"
        grep -q "pipegen_generate: ARCH '$a' is not one of pipegen's" "$case_dir/configure" \
            || fail "ARCH $a: $(grep -m 2 -i error "$case_dir/configure" | tr '\n' ' ')"
    done
}

c_readme() {
    # The README's spec, pipegen command and nvcc line, word for word (tests/install/readme.sh).
    [ $have_nvcc = 1 ] || { skip "no nvcc"; return; }
    "$root/tests/install/readme.sh" "$inst" >"$case_dir/out" 2>&1 \
        || fail "the README's commands failed: $(grep -v '^    ' "$case_dir/out" | tail -n 4 | tr '\n' ' ')"
}

c_readme_make() {
    # The README's Make example is examples/scale/Makefile's, line for line (that one is
    # built and run by make_example): each line of it, a tab for the 8 spaces of a recipe.
    local block line
    block=$(awk '/^pattern rule and pipegen.s depfile/ { on = 1 } on && /^    / { inside = 1; print; next }
                 inside { exit }' "$root/README.md" | sed 's/^    //; s/^        /\t/')
    [ -n "$block" ] || { fail "README.md has no Make example after 'pattern rule and pipegen's depfile'"; return; }
    while IFS= read -r line; do
        grep -qxF -- "$line" "$root/examples/scale/Makefile" || fail "README's make line not in examples/scale/Makefile: '$line'"
    done <<<"$block"
}

c_uninstall() {
    # Exactly what install put, by its manifest: also a header an earlier install put
    # (pipert_old.cuh, gone from this tree: an install over it keeps it in the manifest),
    # and nothing else: not a user's files beside them, nor a directory holding one.
    printf 'x\n' >"$inst/include/pipegen/pipert_old.cuh"
    echo include/pipegen/pipert_old.cuh >>"$inst/share/pipegen/install_manifest.txt"
    "$make" -C "$root" --no-print-directory install PREFIX="$prefix" DESTDIR="$dest" \
        >"$case_dir/out" 2>&1 || { fail "make install over it failed: $(tail -n 3 "$case_dir/out" | tr '\n' ' ')"; return; }
    grep -qx include/pipegen/pipert_old.cuh "$inst/share/pipegen/install_manifest.txt" \
        || fail "an install over an earlier one dropped the earlier one's files from the manifest"
    mkdir -p "$inst/share/pipegen-user"
    printf 'x\n' | tee "$inst/lib/libother.so" "$inst/include/other.h" "$inst/bin/other" \
        "$inst/share/pipegen-user/keep" >/dev/null
    "$make" -C "$root" --no-print-directory uninstall PREFIX="$prefix" DESTDIR="$dest" \
        >"$case_dir/out" 2>&1 || { fail "make uninstall failed: $(tail -n 3 "$case_dir/out" | tr '\n' ' ')"; return; }
    local left
    left=$(cd "$inst" && find . ! -type d | sed 's|^\./||' | sort | tr '\n' ' ')
    [ "$left" = "bin/other include/other.h lib/libother.so share/pipegen-user/keep " ] \
        || fail "left behind or removed: $left"
    local d
    for d in lib/cmake/pipegen include/pipegen share/pipegen; do
        [ -d "$inst/$d" ] && fail "$d is left"
    done
    rm -f "$inst/lib/libother.so" "$inst/include/other.h" "$inst/bin/other"
    rm -rf "$inst/share/pipegen-user"
    # Again: nothing to remove is not an error.
    "$make" -C "$root" --no-print-directory uninstall PREFIX="$prefix" DESTDIR="$dest" \
        >"$case_dir/out" 2>&1 || fail "a second make uninstall failed"
}

# ------------------------------------------------------------------ run
cases=$(echo $(cases_of "$0" "${args[@]}"))
# Every case but install uses what it installed.
case " $cases " in *" install "*) ;; *) cases="install $cases" ;; esac

nskipped=0
for c in $cases; do
    case_dir=$(mktemp -d "$tmp/$c.XXXX")
    (problems=() skipped="" && { "c_$c"; [ -n "$skipped" ] && echo "SKIP:$skipped"; printf '%s\n' "${problems[@]}"; }) \
        >"$tmp/$c.result" 2>&1
    if grep -q '^SKIP:' "$tmp/$c.result" && ! grep -qv -e '^SKIP:' -e '^$' "$tmp/$c.result"; then
        echo "skip $c: $(sed -n 's/^SKIP://p' "$tmp/$c.result")"
        nskipped=$((nskipped + 1))
        continue
    fi
    report_case "$c" "$(grep -v -e '^$' -e '^SKIP:' "$tmp/$c.result")"
done
[ $nskipped -gt 0 ] && echo "install: $nskipped skipped"
suite_end
