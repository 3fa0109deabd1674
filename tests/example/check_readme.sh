#!/bin/sh
# check_readme.sh README.md EXAMPLE_DIR
# Every C snippet of the README is a complete program: each ```c block is,
# byte for byte, one of EXAMPLE_DIR/tour_*.c (which ctest compiles and
# runs), and every tour_*.c is shown in the README or linked from it
# (tests/example/tour_NAME.c). Prints what differs.
set -eu
readme=$1 dir=$2
tmp=$(mktemp -d "${TMPDIR:-/tmp}/npyio-readme.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
awk -v out="$tmp/block" '
    /^```c$/ { n++; file = sprintf("%s%02d.c", out, n); inside = 1; next }
    /^```$/  { inside = 0; next }
    inside   { print > file }' "$readme"
bad=0
for block in "$tmp"/block*.c; do
    [ -e "$block" ] || { echo "README has no C snippet"; exit 1; }
    match=
    for example in "$dir"/tour_*.c; do
        if cmp -s "$block" "$example"; then match=$example; fi
    done
    if [ -z "$match" ]; then
        echo "README snippet $(basename "$block") is not a tour_*.c program:"
        head -n 3 "$block"
        bad=1
    else
        : >"$tmp/seen-$(basename "$match")"
    fi
done
for example in "$dir"/tour_*.c; do
    name=$(basename "$example")
    [ -e "$tmp/seen-$name" ] || grep -q "(tests/example/$name)" "$readme" ||
        { echo "$name is neither shown in the README nor linked"; bad=1; }
done
[ "$bad" -eq 0 ] && echo "README snippets OK: all $(ls "$dir"/tour_*.c | wc -l) programs"
exit "$bad"
