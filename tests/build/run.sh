#!/usr/bin/env bash
# Build tests: the Makefile itself. `make -j2` runs bison and flex once each (each writes two
# targets in one run). `make check` runs every suite even after one fails and
# fails at the end naming the failed ones (with stand-in suites: a fake makefile read
# through MAKEFILES, `all` assumed up to date).
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
    out=$(grep -v '^make\(\[[0-9]*\]\)\?: \*\*\*' "$case_dir/out")
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

# ------------------------------------------------------------------ run
run_cases $(cases_of "$0" "${args[@]}")
suite_end
