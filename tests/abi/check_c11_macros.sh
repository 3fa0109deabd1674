#!/bin/sh
# check_c11_macros.sh CC INCLUDE_DIR LIBRARY|-: the header's C11 type
# macros (NPYIO_TYPE_OF, NPYIO_SAVE, ...) under compiler CC (gcc, clang).
# At -std=c89 and -std=c99 each use must fail to COMPILE (not link, as an
# implicit declaration would), with the error naming
# <MACRO>_needs_C11_or_later; at -std=c11 every use compiles with every
# warning an error and links against LIBRARY (- : compile only, for
# builds whose library needs instrumented links). Exit 77 (a skip) if CC
# is absent.
set -u
cc=$1
include=$2
lib=$3
command -v "$cc" >/dev/null 2>&1 || { echo "SKIP: no $cc"; exit 77; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failed=0
fail() { echo "FAIL: $cc: $*"; failed=$((failed + 1)); }

# Each macro and one use of it (d: double[2], shape: int64_t[1]).
uses() {
    cat <<'EOF'
NPYIO_TYPE_OF	(void)NPYIO_TYPE_OF(d);
NPYIO_SAVE	(void)NPYIO_SAVE("x.npy", 1, shape, d, sizeof d, 0, NULL);
NPYIO_APPEND	(void)NPYIO_APPEND("x.npy", 1, shape, d, sizeof d, 0, NULL);
NPYIO_SAVEZ_APPEND	(void)NPYIO_SAVEZ_APPEND("x.npz", "k", 1, shape, d, sizeof d, 0, 0, NULL);
NPYIO_LOAD_AS	(void)NPYIO_LOAD_AS("x.npy", &p, 0, NULL, &len, &ndim, shape, 1);
NPYIO_NPZ_LOAD_AS	(void)NPYIO_NPZ_LOAD_AS(npz, 0, &p, 0, &len, &ndim, shape, 1);
NPYIO_NPZ_WRITER_ADD	(void)NPYIO_NPZ_WRITER_ADD(w, "k", 1, shape, d, sizeof d, 0, 0);
EOF
}

# program BODY: a C file around BODY (statements).
program() {
    cat <<EOF
#include "npyio.h"
int main(void)
{
    double d[2] = {1, 2};
    double *p = 0;
    int64_t shape[1] = {2};
    size_t len = 0;
    int ndim = 0;
    npyio_npz *npz = 0;
    npyio_npz_writer *w = 0;
    (void)p; (void)len; (void)ndim; (void)npz; (void)w; (void)shape;
$1
    return 0;
}
EOF
}

tab=$(printf '\t')
for std in c89 c99; do
    uses | while IFS=$tab read -r name use; do
        program "    $use" >"$work/use.c"
        if "$cc" -std=$std -I"$include" -c "$work/use.c" -o "$work/use.o" \
            >"$work/out" 2>&1; then
            echo "FAIL: $cc -std=$std: $name compiled"
            continue
        fi
        grep -q "${name}_needs_C11_or_later" "$work/out" ||
            echo "FAIL: $cc -std=$std: $name: the error does not name" \
                "${name}_needs_C11_or_later: $(head -c 300 "$work/out")"
        ! grep -qi "implicit" "$work/out" ||
            echo "FAIL: $cc -std=$std: $name: an implicit declaration"
    done >"$work/fails"
    [ -s "$work/fails" ] && { cat "$work/fails"; failed=$((failed + 1)); }
done

program "$(uses | cut -f2 | sed 's/^/    /')" >"$work/all.c"
if ! "$cc" -std=c11 -Wall -Wextra -Wpedantic -Werror -I"$include" -c \
    "$work/all.c" -o "$work/all.o" >"$work/out" 2>&1; then
    fail "-std=c11: the macros do not compile: $(head -c 600 "$work/out")"
elif [ "$lib" != - ] &&
    ! "$cc" "$work/all.o" "$lib" -o "$work/all" >"$work/out" 2>&1; then
    fail "-std=c11: the macros do not link: $(head -c 600 "$work/out")"
fi

[ $failed -eq 0 ] || exit 1
echo "c11 macros OK ($cc)"
