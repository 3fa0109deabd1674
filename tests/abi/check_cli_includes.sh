#!/bin/sh
# check_cli_includes.sh SRC_DIR
#
# The npyio tool (SRC_DIR/cli) is built on the public header alone: no file
# under SRC_DIR/cli includes a header that lives in SRC_DIR outside the
# tool's folder, whatever the include path would make of it (issue 40).
# Fails (exit 1, one "CLI INCLUDE CHECK FAILED: FILE:LINE ..." line per
# include) when an include of a file of SRC_DIR/cli
#   - names a path with ".." or an absolute path (the way out of the tool's
#     folder, e.g. "../printable.h");
#   - names, in quotes or in angle brackets, a file that exists under
#     SRC_DIR but not beside the including file: a library-internal header
#     (the tool's tests put SRC_DIR on the include path, so even
#     <threads.h> would find src/threads.h there);
#   - is computed (#include MACRO), which this check cannot follow.
# Prints "cli includes OK: N includes in M files" otherwise. Files the build
# generates for the tool (its printable table) are in the build tree, not
# under SRC_DIR, so they pass.
set -eu

if [ $# -ne 1 ] || [ ! -d "$1/cli" ]; then
    echo "usage: check_cli_includes.sh SRC_DIR (with the tool in SRC_DIR/cli)" >&2
    exit 2
fi
src=${1%/}
failed=0
includes=0
files=0

# One include line: prints nothing when it is allowed, the failure else.
judge() {
    file=$1 line=$2 text=$3
    name=$(printf '%s\n' "$text" |
        sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*[<"]\([^">]*\)[">].*/\1/p')
    spelled=$(printf '%s\n' "$text" | sed 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*//; s/[[:space:]]*$//')
    where="CLI INCLUDE CHECK FAILED: $file:$line: #include $spelled"
    if [ -z "$name" ]; then
        echo "$where: a computed include cannot be checked: name the header"
    else
        case $name in
        /* | .. | ../* | */.. | */../*)
            echo "$where: a path out of the tool's folder; the tool uses the public header npyio.h only"
            ;;
        cli/*) ;; # the tool's own folder, named from SRC_DIR
        *)
            if [ ! -e "${file%/*}/$name" ] && [ -e "$src/$name" ]; then
                echo "$where is the library's $src/$name: the tool uses the public header npyio.h only (give the tool its own code in $src/cli)"
            fi
            ;;
        esac
    fi
}

for f in $(find "$src/cli" -type f \( -name '*.c' -o -name '*.h' \) | sort); do
    files=$((files + 1))
    lines=$(grep -n '^[[:space:]]*#[[:space:]]*include' "$f" || true)
    [ -n "$lines" ] || continue
    out=$(printf '%s\n' "$lines" | while IFS= read -r l; do
        judge "$f" "${l%%:*}" "${l#*:}"
    done)
    includes=$((includes + $(printf '%s\n' "$lines" | wc -l)))
    if [ -n "$out" ]; then
        printf '%s\n' "$out"
        failed=1
    fi
done
[ "$failed" -eq 0 ] || exit 1
echo "cli includes OK: $includes includes in $files files"
