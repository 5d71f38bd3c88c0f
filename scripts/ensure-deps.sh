#!/bin/sh
# Make sure the build dependencies are here: flex, bison, pkg-config and Check (unit tests).
# Installs them with apt-get when run as root on a Debian-like system; otherwise prints the
# exact command and fails.
set -u
missing=""
command -v flex >/dev/null 2>&1 || missing="$missing flex"
command -v bison >/dev/null 2>&1 || missing="$missing bison"
command -v pkg-config >/dev/null 2>&1 || missing="$missing pkg-config"
if ! pkg-config --exists check 2>/dev/null; then missing="$missing check"; fi
[ -z "$missing" ] && exit 0
cmd="apt-get update && apt-get install -y$missing"
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "pipegen: installing build dependencies:$missing"
    if DEBIAN_FRONTEND=noninteractive sh -c "apt-get update -qq && apt-get install -y -qq$missing" >/dev/null; then
        exit 0
    fi
    echo "pipegen: installing failed; run: $cmd" >&2
    exit 1
fi
echo "pipegen: missing build dependencies:$missing" >&2
echo "pipegen: install them with: sudo sh -c '$cmd'" >&2
exit 1
