#!/bin/sh
# Turn each template file into a C string named tmpl_<file name with . replaced by _>.
set -eu
echo "/* Generated from templates/ by scripts/embed.sh. DO NOT EDIT. */"
for f in "$@"; do
    name=$(basename "$f" | tr '.-' '__')
    printf 'const char tmpl_%s[] =\n' "$name"
    sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/^/    "/' -e 's/$/\\n"/' "$f"
    printf '    ;\n'
done
