#!/bin/sh
# check_host_ifs.sh SRC_DIR
#
# What the operating system offers is decided in one place per program:
# SRC_DIR/platform.c for the library and SRC_DIR/cli/os.c for the tool
# (on Windows platform_win.c and cli/os_win.c, built instead of them),
# once per capability (their NPYIO_HAVE_* and CLI_HAVE_* names; issue 41).
# Fails (exit 1, one "HOST IF CHECK FAILED: FILE:LINE ..." line per
# conditional) when any other C file of SRC_DIR or SRC_DIR/cli has an
# #if, #ifdef, #ifndef or #elif on a host macro: a system's name
# (__linux__, __APPLE__, the BSDs', _WIN32, __GLIBC__), a Linux-only
# constant (O_TMPFILE, AT_EMPTY_PATH, F_OFD_*, F_SETPIPE_SZ, MADV_*,
# SEEK_DATA, FICLONE) or NPYIO_PORTABLE itself. Prints "host ifs OK: N
# files" otherwise.
set -eu

if [ $# -ne 1 ] || [ ! -d "$1" ]; then
    echo "usage: check_host_ifs.sh SRC_DIR" >&2
    exit 2
fi
src=${1%/}
hosts='__linux__|__APPLE__|__FreeBSD__|__NetBSD__|__OpenBSD__|__DragonFly__|_WIN32|__GLIBC__|O_TMPFILE|AT_EMPTY_PATH|F_OFD_[A-Z]*|F_SETPIPE_SZ|MADV_[A-Z]*|SEEK_DATA|FICLONE|NPYIO_PORTABLE'
failed=0
files=0
for f in "$src"/*.c "$src"/*.h "$src"/cli/*.c "$src"/cli/*.h; do
    [ -f "$f" ] || continue
    case $f in
    "$src/platform.c" | "$src/platform_win.c" | "$src/cli/os.c" | \
        "$src/cli/os_win.c") continue ;;
    esac
    files=$((files + 1))
    hits=$(grep -nE "^[[:space:]]*#[[:space:]]*(if|ifdef|ifndef|elif)\\b.*\\b($hosts)\\b" "$f" || true)
    [ -n "$hits" ] || continue
    failed=1
    printf '%s\n' "$hits" | while IFS= read -r hit; do
        echo "HOST IF CHECK FAILED: $f:${hit%%:*}: ${hit#*:}: the host is chosen in platform.c (the tool: cli/os.c), once per capability"
    done
done
[ "$failed" -eq 0 ] || exit 1
echo "host ifs OK: $files files"
