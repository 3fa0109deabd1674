#!/bin/sh
# check_gen_cdef.sh GEN_CDEF [EMULATOR...]: the build-time generator of
# npyio.cdef (src/cdef/gen_cdef.c) on inputs the build never gives it:
# a declarations file over its first 64 KiB buffer, attributes with odd
# spacing or cut off, blank-line runs, and each way it can fail (usage,
# missing or unreadable input, output it cannot create or rename into
# place), where OUT must then be absent and no OUT.tmp left behind.
set -u
gen=$1
shift
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failed=0
fail() { echo "FAIL: $*"; failed=$((failed + 1)); }
run() { "$@" >"$work/stdout" 2>"$work/stderr"; }

# No arguments: usage, status 2.
run "$@" "$gen"
[ $? -eq 2 ] || fail "no arguments: status not 2"
grep -q '^usage: gen_cdef DECLS OUT$' "$work/stderr" || fail "no usage line"

# 3000 declarations (about 150 KB), attributes to strip, blank runs.
decls=$work/decls.i
{
    printf '\n\n   \n'
    i=0
    while [ $i -lt 3000 ]; do
        printf 'int npyio_f%d(int a) __attribute__  ((visibility("default")));   \n' $i
        printf '\n\n\n'
        i=$((i + 1))
    done
    printf 'int npyio_last(void) __attribute__ ((unused))\t\r\n'
    printf 'int npyio_cut(void) __attribute__ ((('
} >"$decls"
run "$@" "$gen" "$decls" "$work/out.cdef" || fail "a good input: status $?"
out=$work/out.cdef
[ -f "$out" ] || fail "a good input: no OUT"
grep -q '^#define NPYIO_OK 0$' "$out" || fail "no NPYIO_OK constant"
grep -q '^#define NPYIO_E_NOMEM -' "$out" || fail "no negative status"
[ "$(grep -c '^int npyio_f[0-9]*(int a) ;$' "$out")" -eq 3000 ] ||
    fail "the 3000 declarations, stripped, are not all there"
grep -q '__attribute__' "$out" && fail "an attribute is left"
grep -q '^int npyio_last(void)$' "$out" ||
    fail "a trailing attribute and blanks are not gone"
grep -q '^int npyio_cut(void) $' "$out" && fail "trailing blank kept"
grep -q '^int npyio_cut(void)$' "$out" ||
    fail "an attribute cut off by the end of the input is not gone"
grep -q '[[:blank:]]$' "$out" && fail "a line ends in blanks"
awk 'prev == "" && $0 == "" && NR > 1 { bad = 1 } { prev = $0 }
     END { exit bad }' "$out" || fail "two blank lines in a row"
[ -f "$out.tmp" ] && fail "OUT.tmp left after success"

# A missing input: named, status 1, no OUT.
run "$@" "$gen" "$work/missing.i" "$work/o1"
[ $? -eq 1 ] || fail "missing input: status not 1"
grep -q "missing.i" "$work/stderr" || fail "missing input not named"
[ -e "$work/o1" ] || [ -e "$work/o1.tmp" ] && fail "missing input: OUT made"

# An input that cannot be read (a directory).
mkdir "$work/dir.i"
run "$@" "$gen" "$work/dir.i" "$work/o2"
[ $? -eq 1 ] || fail "unreadable input: status not 1"
grep -q "dir.i: cannot read" "$work/stderr" || fail "unreadable input: message"
[ -e "$work/o2" ] || [ -e "$work/o2.tmp" ] && fail "unreadable input: OUT made"

# OUT in a missing directory: named, status 1.
run "$@" "$gen" "$decls" "$work/no/such/out"
[ $? -eq 1 ] || fail "OUT in a missing directory: status not 1"
grep -q "no/such/out" "$work/stderr" || fail "OUT in a missing directory: not named"

# OUT a directory: the rename fails, the temporary goes.
mkdir "$work/outdir"
run "$@" "$gen" "$decls" "$work/outdir"
[ $? -eq 1 ] || fail "OUT a directory: status not 1"
grep -q "outdir" "$work/stderr" || fail "OUT a directory: not named"
[ -e "$work/outdir.tmp" ] && fail "OUT a directory: OUT.tmp left"
[ -d "$work/outdir" ] || fail "OUT a directory: it was replaced"

if [ $failed -ne 0 ]; then
    echo "GEN_CDEF CHECK FAILED: $failed"
    exit 1
fi
echo "gen_cdef OK"
