#!/bin/sh
# check_man.sh CHECK MAN3_DIR NAMES [EXAMPLE_DIR | HEADER]
#
# Checks the section 3 pages that src/man/gen_man.c writes into MAN3_DIR
# (BUILD/man/man3, or an installed PREFIX/share/man/man3). NAMES says which
# names the library exports: a shared library (its dynamic symbols, read
# with ${NM:-nm} -D) or the version script (cmake/npyio.map, for static
# builds). A page is a link page when it is one `.so man3/PAGE.3` line;
# the others are npyio.3, the pages written by hand (generated from a
# PAGE.3.in: npyio.hpp.3) and the family pages. The constants are the
# object-like macros NPYIO_[A-Z]... HEADER defines (statuses, limits,
# flags, kinds, stat fields, versions; not NPYIO_API, nor NPYIO__ ones).
# CHECK is one of:
#   pages     every exported name has a link page, every link page names an
#             exported function (or an NPYIO_ macro) and leads to a family
#             page that exists (an NPYIO_ constant: or to npyio.3); npyio.3
#             and at least 10 families exist; with HEADER, every constant
#             has a link page;
#   groff     groff -ww -mandoc -Tutf8 renders npyio.3, every family page
#             and every link page (from MAN3_DIR/.., as man does) without
#             a single line on stderr (exit 77 without groff);
#   man       MANPATH=MAN3_DIR/.. man -w 3 NAME finds MAN3_DIR/NAME.3 (or
#             the page it leads to) for every exported name, every page
#             (npyio.3, npyio.hpp.3, the families) and, with HEADER, every
#             constant (exit 77 without man);
#   examples  the EXAMPLES of each family page, of npyio.3 and of the pages
#             written by hand show, under `.SS FILE`, the program
#             EXAMPLE_DIR/FILE byte for byte once unescaped, and each of
#             them shows at least one;
#   synopsis  every function of a family page's SYNOPSIS is, but for
#             NPYIO_API and white space, a declaration of HEADER, and
#             every exported name is declared in one SYNOPSIS.
# Prints "man CHECK OK: ..." or "MAN CHECK FAILED: ..." lines; exits 1 on
# any failure.
set -eu
check=$1
dir=$(cd "$2" && pwd)
names=$3
extra=${4:-}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/npyio-man.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM
status=0
fail() {
    echo "MAN CHECK FAILED: $*"
    status=1
}

[ -f "$dir/npyio.3" ] || { fail "no npyio.3 in $dir"; exit 1; }

# Link pages and the pages they lead to; the other pages.
: >"$tmp/links"
: >"$tmp/pages"
for page in "$dir"/*.3; do
    name=$(basename "$page" .3)
    first=$(head -n 1 "$page")
    case $first in
    ".so man3/"*.3)
        target=${first#.so man3/}
        echo "$name ${target%.3}" >>"$tmp/links"
        [ "$(wc -l <"$page")" -eq 1 ] || fail "$name.3: more than a .so line"
        ;;
    *) echo "$name" >>"$tmp/pages" ;;
    esac
done
sort -o "$tmp/pages" "$tmp/pages"
: >"$tmp/by_hand"
while read -r name; do
    head -n 1 "$dir/$name.3" | grep -q '^\.\\" Generated from .*\.3\.in ' &&
        echo "$name" >>"$tmp/by_hand"
done <"$tmp/pages"
grep -v -x -e npyio -f "$tmp/by_hand" "$tmp/pages" >"$tmp/families" || true

# The constants HEADER defines (when the fourth argument is a header).
: >"$tmp/constants"
case $extra in
*.h)
    grep -o '^#define NPYIO_[A-Z][A-Z0-9_]* ' "$extra" | awk '{ print $2 }' |
        grep -v -x NPYIO_API | sort -u >"$tmp/constants"
    [ -s "$tmp/constants" ] || { fail "no constant in $extra"; exit 1; }
    ;;
esac

# The exported names.
case $names in
*.map)
    sed -e 's,/\*.*\*/,,g' -e '/^[[:space:]]*\/\?\*/d' "$names" | awk '
        /global:/ { global = 1; next }
        /local:/ { global = 0; next }
        /}/ { global = 0 }
        global && /;/ { gsub(/[[:space:];]/, ""); if ($0 != "") print }'
    ;;
*)
    ${NM:-nm} -D --defined-only "$names" |
        awk '$2 != "A" { sub(/@.*/, "", $3); print $3 }'
    ;;
esac | sort -u >"$tmp/exported"
[ -s "$tmp/exported" ] || { fail "no exported name in $names"; exit 1; }
nexported=$(wc -l <"$tmp/exported")

case $check in
pages)
    [ "$(wc -l <"$tmp/families")" -ge 10 ] ||
        fail "only $(wc -l <"$tmp/families") family pages: $(tr '\n' ' ' <"$tmp/families")"
    while read -r name; do
        [ -f "$dir/$name.3" ] || { fail "$name is exported but has no page"; continue; }
        grep -qx "$name [a-z_]*" "$tmp/links" ||
            fail "$name.3 is not a link to a family page"
    done <"$tmp/exported"
    while read -r name target; do
        case $name:$target in
        NPYIO_[A-Z0-9_]*:npyio) ;; # a constant the overview documents
        *) grep -qx "$target" "$tmp/families" ||
               fail "$name.3 leads to $target.3, which is no family page" ;;
        esac
        case $name in
        NPYIO_[A-Z0-9_]*) ;; # a macro
        *) grep -qx "$name" "$tmp/exported" ||
               fail "$name.3: $name is not exported" ;;
        esac
    done <"$tmp/links"
    while read -r family; do
        grep -q " $family\$" "$tmp/links" ||
            fail "family page $family.3 has no function"
    done <"$tmp/families"
    while read -r name; do
        grep -q "^$name " "$tmp/links" ||
            fail "$name is a constant of the header but has no link page"
    done <"$tmp/constants"
    [ "$status" -eq 0 ] && echo "man pages OK: $nexported exported names," \
        "$(wc -l <"$tmp/constants") constants," \
        "$(wc -l <"$tmp/links") link pages, $(wc -l <"$tmp/families") families"
    ;;
groff)
    command -v groff >/dev/null 2>&1 || { echo "no groff: skipped"; exit 77; }
    cd "$dir/.."
    n=0
    for page in man3/*.3; do
        groff -ww -mandoc -Tutf8 "$page" >"$tmp/out" 2>"$tmp/err" ||
            fail "groff exited with $? on $page"
        if [ -s "$tmp/err" ]; then
            fail "groff warns on $page:"
            head -n 5 "$tmp/err"
        fi
        [ -s "$tmp/out" ] || fail "groff renders nothing for $page"
        n=$((n + 1))
    done
    [ "$status" -eq 0 ] && echo "man groff OK: $n pages without a warning"
    ;;
man)
    command -v man >/dev/null 2>&1 || { echo "no man: skipped"; exit 77; }
    # man-db follows a link page's .so: it may name the family's page.
    for name in $(cat "$tmp/exported" "$tmp/pages" "$tmp/constants"); do
        found=$(MANPATH=$dir/.. man -w 3 "$name" 2>&1) || true
        case $found in /*) found=$(readlink -f "$found") ;; esac
        target=$(awk -v n="$name" '$1 == n { print $2 }' "$tmp/links")
        [ "$found" = "$dir/$name.3" ] ||
            { [ -n "$target" ] && [ "$found" = "$dir/$target.3" ]; } ||
            fail "man -w 3 $name: '$found'"
    done
    [ "$status" -eq 0 ] && echo "man -w OK: $nexported names," \
        "$(wc -l <"$tmp/constants") constants and $(wc -l <"$tmp/pages") pages"
    ;;
examples)
    examples=$extra
    [ -n "$examples" ] || { fail "no EXAMPLE_DIR"; exit 1; }
    n=0
    { cat "$tmp/families" "$tmp/by_hand"; echo npyio; } >"$tmp/shown"
    while read -r family; do
        rm -f "$tmp"/ex.*
        # The lines between .EX and .EE of the section EXAMPLES, in files
        # named after their .SS heading, unescaped: \e is a backslash, \-
        # a minus, a leading \& nothing (in that order: see gen_man.c).
        awk -v out="$tmp/ex." '
            /^\.SH / { inside = ($0 == ".SH EXAMPLES"); next }
            !inside { next }
            /^\.SS / { file = out $2; next }
            /^\.EX$/ { code = 1; printf "" > file; next }
            /^\.EE$/ { code = 0; close(file); next }
            code { print > file }' "$dir/$family.3"
        found=0
        for shown in "$tmp"/ex.*; do
            [ -e "$shown" ] || continue
            found=$((found + 1))
            file=${shown#"$tmp"/ex.}
            sed -e 's/^\\&//' -e 's/\\-/-/g' -e 's/\\e/\\/g' "$shown" >"$tmp/plain"
            if [ ! -f "$examples/$file" ]; then
                fail "$family.3 shows $file, which $examples does not have"
            elif ! cmp -s "$tmp/plain" "$examples/$file"; then
                fail "$family.3 shows $file otherwise than $examples/$file:"
                diff "$examples/$file" "$tmp/plain" | head -n 10
            fi
        done
        [ "$found" -gt 0 ] || fail "$family.3 has no example"
        n=$((n + found))
    done <"$tmp/shown"
    [ "$status" -eq 0 ] && echo "man examples OK: $n programs shown as they are"
    ;;
synopsis)
    [ -f "$extra" ] || { fail "no HEADER"; exit 1; }
    # One line per declaration, white space squeezed.
    awk '
        /^NPYIO_API / { decl = ""; collecting = 1; sub(/^NPYIO_API /, "") }
        collecting {
            decl = decl " " $0
            if (index($0, ";")) { print decl; collecting = 0 }
        }' "$extra" | tr -s ' ' | sed -e 's/^ //' -e 's/ $//' \
        -e 's/( /(/g' >"$tmp/declared"
    : >"$tmp/shown"
    while read -r family; do
        awk '
            /^\.SH / { inside = ($0 == ".SH SYNOPSIS"); next }
            !inside { next }
            /^\.nf$/ { block = ""; nf = 1; next }
            /^\.fi$/ { if (block ~ /\);$/) print block; nf = 0; next }
            nf { block = block " " $0 }' "$dir/$family.3" |
            sed -e 's/\\-/-/g' -e 's/\\e/\\/g' | tr -s ' ' |
            sed -e 's/^ //' -e 's/ $//' -e 's/( /(/g' >>"$tmp/shown"
    done <"$tmp/families"
    while read -r decl; do
        grep -qxF "$decl" "$tmp/declared" ||
            fail "a SYNOPSIS shows what npyio.h does not declare: $decl"
    done <"$tmp/shown"
    while read -r name; do
        grep -q "[ *]$name(" "$tmp/shown" ||
            fail "no SYNOPSIS declares $name"
    done <"$tmp/exported"
    [ "$status" -eq 0 ] && echo "man synopsis OK: $(wc -l <"$tmp/shown")" \
        "declarations as npyio.h writes them"
    ;;
*)
    echo "unknown check: $check" >&2
    exit 2
    ;;
esac
exit "$status"
