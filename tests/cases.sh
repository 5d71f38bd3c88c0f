# Shared by the shell suites whose cases are functions c_NAME (tests/cli, tests/build);
# sourced. A case reports problems as lines; none is a pass.

# The cases of script $1 in the order written there, or the names given after it.
cases_of() {
    local script=$1
    shift
    if [ $# -gt 0 ]; then echo "$*"; return; fi
    local c
    for c in $(declare -F | awk '{print $3}' | grep '^c_' | sed 's/^c_//'); do
        printf '%s %s\n' "$(grep -n "^c_$c()" "$script" | cut -d: -f1)" "$c"
    done | sort -n | awk '{print $2}'
}

# One case's line from its problems ($2, empty for none), counted in passed / failed.
report_case() {
    if [ -z "$2" ]; then
        echo "ok   $1"
        passed=$((passed + 1))
    else
        echo "FAIL $1: $(head -n 1 <<<"$2")"
        tail -n +2 <<<"$2" | head -n 10 | sed 's/^/     /'
        failed=$((failed + 1))
    fi
}
