#!/bin/sh
# Make sure what a make target needs is here, and nothing more:
#   ensure-deps.sh build   flex, bison and a C compiler ($CC): make, make install
#   ensure-deps.sh test    also pkg-config and Check: the unit tests of make check
# Installs what is missing with apt-get when run as root on a Debian-like system;
# otherwise names what is missing, prints the exact command and fails.
set -u
what=${1:-build}
missing=""
need() { command -v "$1" >/dev/null 2>&1 || missing="$missing $2"; }
need flex flex
need bison bison
need "${CC:-cc}" gcc
if [ "$what" = test ]; then
    need pkg-config pkg-config
    pkg-config --exists check 2>/dev/null || missing="$missing check"
fi
[ -z "$missing" ] && exit 0
cmd="apt-get update && apt-get install -y$missing"
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "pipegen: installing what 'make' needs ($what):$missing"
    if DEBIAN_FRONTEND=noninteractive sh -c "apt-get update -qq && apt-get install -y -qq$missing" >/dev/null; then
        exit 0
    fi
    echo "pipegen: installing failed; run: $cmd" >&2
    exit 1
fi
echo "pipegen: missing what 'make' needs ($what):$missing" >&2
if command -v apt-get >/dev/null 2>&1; then
    echo "pipegen: install it with: sudo sh -c '$cmd'" >&2
else
    echo "pipegen: install it with your package manager (Debian/Ubuntu: $cmd)" >&2
fi
exit 1
