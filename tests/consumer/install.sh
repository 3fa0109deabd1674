#!/bin/sh
# install.sh BUILD_DIR PREFIX
# Install the built project into a fresh PREFIX, as a packager would, and
# check that the expected files are where GNUInstallDirs puts them.
set -eu
build=$1
prefix=$2
cmake=${CMAKE:-cmake}
rm -rf "$prefix"
"$cmake" --install "$build" --prefix "$prefix" >"$prefix.log" 2>&1 || {
    cat "$prefix.log"; exit 1; }
missing=0
for f in include/npyio.h bin/npyio share/man/man1/npyio.1; do
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
[ "$missing" -eq 0 ] && echo "installed into $prefix"
exit "$missing"
