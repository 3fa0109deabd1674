#!/bin/sh
# check_platform_callers.sh SRC_DIR ALLOWED...
#
# The operating system is reached through platform.h alone, and platform.h
# only from the files that must: the stream back ends over descriptors,
# the atomic-replacement policy and the allocator (issue 29's seam). Every
# other module works on streams. Fails (exit 1, one "PLATFORM CHECK
# FAILED: ..." line per file) when a file of SRC_DIR that is not listed
# in ALLOWED (base names, e.g. stream_fd.c) includes "platform.h"; prints
# "platform callers OK: <the files>" otherwise. The layer checks see the
# includes and calls too, but allow any higher layer to call down.
set -eu

if [ $# -lt 1 ] || [ ! -d "$1" ]; then
    echo "usage: check_platform_callers.sh SRC_DIR ALLOWED..." >&2
    exit 2
fi
src=${1%/}
shift
failed=0
found=
for f in "$src"/*.c "$src"/*.h; do
    [ -f "$f" ] || continue
    grep -q '^[[:space:]]*#[[:space:]]*include[[:space:]]*"platform\.h"' "$f" ||
        continue
    base=${f##*/}
    ok=0
    for a in "$@" platform.c platform_win.c platform.h; do
        [ "$a" = "$base" ] && ok=1
    done
    if [ "$ok" -eq 1 ]; then
        found="$found $base"
    else
        echo "PLATFORM CHECK FAILED: $f includes \"platform.h\": work on a stream (stream.h), or add the file to the allowed list with a reason"
        failed=1
    fi
done
[ "$failed" -eq 0 ] || exit 1
echo "platform callers OK:$found"
