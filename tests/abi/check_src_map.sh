#!/bin/sh
# check_src_map.sh SRC_DIR MAP
#
# The map of the sources (MAP: src/README.md) names every C file of
# SRC_DIR, subfolders included, so that a new file cannot slip in
# unexplained. A file P (its path under SRC_DIR, e.g. cli/text.c) is named
# when a `quoted` word of MAP is P, or P without its .c/.h (the module:
# `alloc`, `cli/format`), or a pattern matching either (`reader*` stands for
# every file a module is split into), or a folder P lies in (`cdef/`).
# Fails (exit 1, one "SRC MAP CHECK FAILED: ..." line per file) for each
# file that is not named; prints "src map OK: N files" otherwise.
set -eu

if [ $# -ne 2 ] || [ ! -d "$1" ] || [ ! -f "$2" ]; then
    echo "usage: check_src_map.sh SRC_DIR MAP" >&2
    exit 2
fi
src=${1%/}
map=$2
# The words in backquotes, one a line.
words=$(awk '{ n = split($0, a, "`"); for (i = 2; i < n; i += 2) if (a[i] !~ /[ \t]/) print a[i] }' "$map")

named() {
    path=$1
    module=${path%.[ch]}
    for w in $words; do
        # shellcheck disable=SC2254 # the word is a pattern on purpose
        case $w in
        */) case $path in "$w"*) return 0 ;; esac ;;
        *)
            case $path in $w) return 0 ;; esac
            case $module in $w) return 0 ;; esac
            ;;
        esac
    done
    return 1
}

set -f # the words are patterns to match, not to expand here
failed=0
n=0
for f in $(cd "$src" && find . -type f \( -name '*.c' -o -name '*.h' \) | sort); do
    path=${f#./}
    n=$((n + 1))
    if ! named "$path"; then
        echo "SRC MAP CHECK FAILED: $src/$path is not in $map: add a line saying what ${path%.[ch]} does, in its layer"
        failed=1
    fi
done
[ "$failed" -eq 0 ] || exit 1
echo "src map OK: $n files"
