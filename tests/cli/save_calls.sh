#!/bin/sh
# save_calls.sh TOOL BOUND - the system calls of a small atomic save that
# replaces a file (durability off), counted by strace: 1 and 101 saves
# of one path, so that start-up cancels out. A replacing save makes 10
# (lstat of the destination, open of an unnamed temporary, its fstat,
# write, the commit name's lock and the duplicate that holds it, linkat,
# close, rename, the duplicate's close); the bound fails if the
# stale-temporary scan, a getpid per save or a repeated stat comes back.
# BOUND is 10 there; 15 in a portable build (NPYIO_PORTABLE), whose saves
# go through a named temporary and so list the directory for strays of
# dead processes (its open, two getdents, its close, the pid).
# Deterministic: counts, never times. Skipped (77) without strace or where
# ptrace is refused.
set -u
tool=$1
bound=${2:?usage: save_calls.sh TOOL BOUND}
command -v strace >/dev/null 2>&1 || { echo "no strace: skipped"; exit 77; }
dir=$(mktemp -d "${TMPDIR:-/tmp}/npyio-save-calls.XXXXXX") || exit 1
trap 'rm -rf "$dir"' EXIT
calls() {
    rm -f "$dir/a.npy" "$dir/trace"
    strace -f -c -o "$dir/trace" "$tool" "$dir/a.npy" "$1" >/dev/null ||
        return 1
    # "% time, seconds, usecs/call, calls, [errors,] total"
    awk '$NF == "total" { print $4 }' "$dir/trace"
}
one=$(calls 1) || { echo "strace cannot run here: skipped"; exit 77; }
many=$(calls 101) || exit 1
per=$(( (many - one) / 100 ))
echo "system calls: $one for 1 save, $many for 101: $per per replacing save"
if [ "$per" -gt "$bound" ]; then
    echo "FAIL: more than $bound system calls per small replacing save"
    grep -v '^---' "$dir/trace"
    exit 1
fi
echo "PASS"
