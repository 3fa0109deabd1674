#!/bin/sh
# install.sh BUILD_DIR PREFIX [SHARED(ON|OFF) SAMPLE.npy]
# Install the built project into a fresh PREFIX, as a packager would, and
# check that the expected files are where GNUInstallDirs puts them. With
# SHARED and SAMPLE.npy, also: the installed tool starts from PREFIX with a
# clean environment (its relative run path finds the installed library),
# the library has no run path, and a system install (--prefix /usr, into
# DESTDIR) gives the tool none either.
set -eu
build=$1
prefix=$2
shared=${3:-}
sample=${4:-}
readelf=${READELF:-readelf}
cmake=${CMAKE:-cmake}
here=$(cd "$(dirname "$0")" && pwd)
rm -rf "$prefix"
"$cmake" --install "$build" --prefix "$prefix" >"$prefix.log" 2>&1 || {
    cat "$prefix.log"; exit 1; }
missing=0
for f in include/npyio.h include/npyio.hpp bin/npyio share/man/man1/npyio.1 \
         share/man/man3/npyio.3 share/man/man3/npyio_save.3 \
         share/man/man3/npyio.hpp.3 share/man/man3/NPYIO_E_CHECKSUM.3; do
    [ -f "$prefix/$f" ] || { echo "missing $f"; missing=1; }
done
for pattern in 'libnpyio.*' 'pkgconfig/npyio.pc' 'cmake/npyio/npyioConfig.cmake' \
               'cmake/npyio/npyioConfigVersion.cmake' 'cmake/npyio/npyioTargets.cmake'; do
    # shellcheck disable=SC2086
    found=$(find "$prefix" -path "*/$pattern" | head -n 1)
    [ -n "$found" ] || { echo "missing */$pattern under $prefix"; missing=1; }
done
pc=$(find "$prefix" -name npyio.pc | head -n 1)
grep -q "^prefix=$prefix\$" "$pc" || { echo "npyio.pc does not name the prefix:"; cat "$pc"; missing=1; }
# The cdef file for cffi, where `pkg-config --variable=cdef` says.
cdef=$(PKG_CONFIG_PATH=$(dirname "$pc") pkg-config --variable=cdef npyio)
[ "$cdef" = "$prefix/share/npyio/npyio.cdef" ] && [ -f "$cdef" ] || {
    echo "pkg-config --variable=cdef npyio gives '$cdef', not an installed file"
    missing=1; }
grep -q '^#define NPYIO_E_INVALID_ARG -1$' "$cdef" || {
    echo "$cdef has no decimal NPYIO_E_INVALID_ARG"; missing=1; }
# The section 3 pages: with MANPATH=PREFIX/share/man, man -w 3 finds a page
# for every name the installed library exports (the version script's names
# for a static library), every constant of the installed header, npyio,
# npyio.hpp and every family (where man is installed: man-db).
names=$here/../../cmake/npyio.map
if [ "$shared" = ON ] && [ "$(uname -s)" = Linux ]; then
    names=$(find "$prefix" -name 'libnpyio.so.*.*.*' | head -n 1)
fi
man_status=0
sh "$here/../man/check_man.sh" man "$prefix/share/man/man3" "$names" \
    "$prefix/include/npyio.h" || man_status=$?
case $man_status in
0) ;;
77) echo "no man: the installed pages were not looked up" ;;
*) echo "man -w does not find the installed section 3 pages"; missing=1 ;;
esac
if [ -n "$sample" ]; then
    env -i "$prefix/bin/npyio" --version || {
        echo "the installed tool does not start with a clean environment"; missing=1; }
    env -i "$prefix/bin/npyio" info "$sample" >"$prefix.info" 2>&1 || {
        cat "$prefix.info"; echo "npyio info fails from $prefix"; missing=1; }
    grep -q 'shape' "$prefix.info" || { cat "$prefix.info"; missing=1; }
fi
if [ "$shared" = ON ]; then
    lib=$(find "$prefix" -name 'libnpyio.so.*.*.*' | head -n 1)
    if "$readelf" -d "$lib" | grep -Eq '\((RPATH|RUNPATH)\)'; then
        echo "the library has a run path:"; "$readelf" -d "$lib" | grep PATH
        missing=1
    fi
    "$readelf" -d "$prefix/bin/npyio" | grep -Eq '\(RUNPATH\).*\[\$ORIGIN/' || {
        echo "the tool has no \$ORIGIN run path"; missing=1; }
    # A system install: no run path at all.
    sys=$prefix-system
    rm -rf "$sys"
    DESTDIR=$sys "$cmake" --install "$build" --prefix /usr >"$sys.log" 2>&1 || {
        cat "$sys.log"; exit 1; }
    if "$readelf" -d "$sys/usr/bin/npyio" | grep -Eq '\((RPATH|RUNPATH)\)'; then
        echo "a system install (--prefix /usr) gives the tool a run path:"
        "$readelf" -d "$sys/usr/bin/npyio" | grep PATH
        missing=1
    fi
    rm -rf "$sys"
fi
[ "$missing" -eq 0 ] && echo "installed into $prefix"
exit "$missing"
