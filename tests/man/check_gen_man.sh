#!/bin/sh
# check_gen_man.sh HEADER EXAMPLE_DIR GEN_MAN [EMULATOR...]: the generator
# of the section 3 pages (src/man/gen_man.c), run through EMULATOR when
# cross-building, on headers the build never gives it. It must fail,
# naming what is wrong, rather than write pages that miss part of the
# header: a section that declares functions but has no family page, an
# overview anchor gone from the opening comment, an example file missing.
# A function added to a section gets a link page and a SYNOPSIS line; a
# constant gets a link page to the page that documents it, and constants
# in a section no page shows are an error. A page written by hand
# (PAGE.3.in) gets its title line and its example programs put in, and
# npyio.3 lists it; one without a NAME line, named otherwise or showing a
# missing program is an error.
set -u
header=$1
examples=$2
gen=$3
shift 3
emulator=$*
work=$(mktemp -d "${TMPDIR:-/tmp}/npyio-gen-man.XXXXXX")
trap 'rm -rf "$work"' EXIT
failed=0
fail() { echo "FAIL: $*"; failed=1; }

# No arguments: usage, status 2.
$emulator "$gen" >/dev/null 2>"$work/usage.err"
[ $? -eq 2 ] || fail "no arguments: status not 2"
grep -q '^usage: gen_man HEADER EXAMPLE_DIR OUT_DIR \[PAGE.3.in...\]$' "$work/usage.err" ||
    fail "no usage line"

# The real header: npyio.3 and npyio_save.3.
rm -rf "$work/good" && mkdir -p "$work/good"
$emulator "$gen" "$header" "$examples" "$work/good" 2>"$work/good.err" ||
    fail "the real header: status $?: $(cat "$work/good.err")"
[ -f "$work/good/npyio.3" ] && [ -f "$work/good/npyio_save.3" ] ||
    fail "the real header: no npyio.3 or npyio_save.3"

# expect_failure NAME HEADER EXAMPLE_DIR MESSAGE [PAGE.3.in]: gen_man
# fails on them, and its message holds MESSAGE.
expect_failure() {
    rm -rf "${work:?}/$1" && mkdir -p "$work/$1"
    if $emulator "$gen" "$2" "$3" "$work/$1" ${5:+"$5"} 2>"$work/$1.err"; then
        fail "$1: gen_man succeeds"
    fi
    grep -qF "$4" "$work/$1.err" || fail "$1: no '$4' in: $(cat "$work/$1.err")"
}

# expect_success NAME HEADER [PAGE.3.in]: gen_man writes the pages of
# them into $work/NAME.
expect_success() {
    rm -rf "${work:?}/$1" && mkdir -p "$work/$1"
    $emulator "$gen" "$2" "$examples" "$work/$1" ${3:+"$3"} 2>"$work/$1.err" ||
        fail "$1: status $?: $(cat "$work/$1.err")"
}

# expect_link NAME PAGE TARGET: $work/NAME/PAGE.3 is a link page to TARGET.3.
expect_link() {
    [ "$(cat "$work/$1/$2.3" 2>/dev/null)" = ".so man3/$3.3" ] ||
        fail "$1: no link page $2.3 to $3.3"
}

sed 's|^/\* Streams  |/* Byte pipes|' "$header" >"$work/renamed.h"
expect_failure renamed "$work/renamed.h" "$examples" \
    'section "Byte pipes"'
sed 's|Names follow one rule|Names follow a rule|' "$header" >"$work/anchor.h"
expect_failure anchor "$work/anchor.h" "$examples" \
    'has no "Names follow one rule"'
mkdir -p "$work/no-examples"
expect_failure examples "$header" "$work/no-examples" 'no-examples/man_version.c: cannot open'

# A function added after npyio_free(): its link page leads to npyio_memory.3.
sed 's|^NPYIO_API void npyio_free(void \*ptr);|&\n/** Another. @return 0. @since 1.1 */\nNPYIO_API int npyio_free_more(void);|' \
    "$header" >"$work/added.h"
expect_success added "$work/added.h"
expect_link added npyio_free_more npyio_memory
grep -q '^int npyio_free_more(void);$' "$work/added/npyio_memory.3" ||
    fail "added: npyio_memory.3 does not show the new prototype"

# Constants added: a flag (npyio.3 documents the flags) and a limit.
sed -e 's|^#define NPYIO_NPZ_WRITE_NO_ALIGN 0x1000u|&\n/** Another flag. */\n#define NPYIO_READ_MORE 0x2000u|' \
    -e 's|^#define NPYIO_LIMIT_THREADS 9|&\n/** Another limit. */\n#define NPYIO_LIMIT_MORE 10|' \
    "$header" >"$work/consts.h"
expect_success consts "$work/consts.h"
expect_link consts NPYIO_READ_MORE npyio
expect_link consts NPYIO_LIMIT_MORE npyio_options
grep -q '^\.BR NPYIO_READ_MORE ' "$work/consts/npyio.3" ||
    fail "consts: npyio.3 does not document NPYIO_READ_MORE"
sed 's|^/\* Per-call flags  |/* Flags of calls|' "$header" >"$work/flags.h"
expect_failure flags "$work/flags.h" "$examples" \
    'section "Flags of calls" defines constants but no page shows them'

# Pages written by hand.
printf '.SH NAME\nextra \\- a page by hand\n.SH EXAMPLES\n.\\" EXAMPLE man_version.c\n' \
    >"$work/extra.3.in"
expect_success by-hand "$header" "$work/extra.3.in"
grep -q '^\.TH extra 3 ' "$work/by-hand/extra.3" 2>/dev/null ||
    fail "by hand: extra.3 has no title line"
grep -q '^\.SS man_version.c$' "$work/by-hand/extra.3" 2>/dev/null &&
    grep -q 'npyio_version_number()' "$work/by-hand/extra.3" ||
    fail "by hand: extra.3 does not show man_version.c"
grep -q '^\.BR extra (3)$' "$work/by-hand/npyio.3" &&
    grep -q '^a page by hand$' "$work/by-hand/npyio.3" ||
    fail "by hand: npyio.3 does not list extra(3)"
sed 's/man_version.c/no_such.c/' "$work/extra.3.in" >"$work/missing.3.in"
expect_failure missing "$header" "$examples" 'no_such.c: cannot open' \
    "$work/missing.3.in"
cp "$work/extra.3.in" "$work/extra.page"
expect_failure named "$header" "$examples" 'must be named PAGE.3.in' \
    "$work/extra.page"
sed '/NAME/d' "$work/extra.3.in" >"$work/nameless.3.in"
expect_failure nameless "$header" "$examples" 'no NAME line' \
    "$work/nameless.3.in"

[ "$failed" -eq 0 ] && echo "gen_man OK"
exit "$failed"
