#!/bin/sh
# check_symbols.sh HEADER MAP LIBRARY
#
# The ABI promise, checked: the functions declared NPYIO_API in the public
# header, the names listed in the GNU ld version script, and the dynamic
# symbols the built shared library defines must be one and the same set,
# and every exported symbol must carry the default version NPYIO_1.0 (or a
# later NPYIO_1.x node). Prints "ABI CHECK FAILED: ..." and exits 1 on any
# difference; the negative tests in tests/CMakeLists.txt match those lines.
set -eu

header=$1
map=$2
lib=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
status=0

fail() {
    echo "ABI CHECK FAILED: $*"
    status=1
}

# Names declared with NPYIO_API: the identifier just before the first '('
# that follows the macro, even when the declaration spans lines.
awk '
    /^#/ { next }
    /NPYIO_API/ { decl = ""; collecting = 1 }
    collecting {
        decl = decl " " $0
        if (index(decl, "(")) {
            sub(/\(.*/, "", decl)
            n = split(decl, words, /[^A-Za-z0-9_]+/)
            for (i = n; i > 0; i--) if (words[i] != "") { print words[i]; break }
            collecting = 0
        }
    }' "$header" | sort >"$tmp/header"

# Names listed in global: sections of the version script.
sed -e 's,/\*.*\*/,,g' -e '/^[[:space:]]*\/\?\*/d' "$map" | awk '
    /global:/ { global = 1; next }
    /local:/ { global = 0; next }
    /}/ { global = 0 }
    global && /;/ { gsub(/[[:space:];]/, ""); if ($0 != "") print }' \
    | sort >"$tmp/map"

# Defined dynamic symbols with their versions, e.g. "T npyio_free@@NPYIO_1.0".
# The version nodes themselves show up as absolute symbols; skip those.
${NM:-nm} -D --defined-only --with-symbol-versions "$lib" \
    | awk '$2 != "A" { print $3 }' | sort >"$tmp/versioned"
sed 's/@.*//' "$tmp/versioned" | sort -u >"$tmp/exported"

[ -s "$tmp/header" ] || fail "no NPYIO_API declaration found in $header"
[ -s "$tmp/exported" ] || fail "$lib exports no symbol"

for pair in "header:map" "map:exported" "header:exported"; do
    a=${pair%%:*}
    b=${pair##*:}
    only_a=$(comm -23 "$tmp/$a" "$tmp/$b" | tr '\n' ' ')
    only_b=$(comm -13 "$tmp/$a" "$tmp/$b" | tr '\n' ' ')
    [ -z "$only_a" ] || fail "in the $a list but not the $b list: $only_a"
    [ -z "$only_b" ] || fail "in the $b list but not the $a list: $only_b"
done

while read -r sym; do
    case $sym in
    npyio_*@@NPYIO_1.[0-9]*) ;;
    *@*) fail "exported with a version other than NPYIO_1.x: $sym" ;;
    *) fail "exported without a version: $sym" ;;
    esac
done <"$tmp/versioned"

grep -v '^npyio_' "$tmp/exported" | while read -r sym; do
    echo "ABI CHECK FAILED: exported symbol outside the npyio_ namespace: $sym"
done | grep . && status=1

if [ "$status" -eq 0 ]; then
    echo "ABI check passed: $(wc -l <"$tmp/exported") symbols, all in" \
         "header, version script and library, all versioned"
fi
exit "$status"
