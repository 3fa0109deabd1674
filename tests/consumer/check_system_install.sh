#!/bin/sh
# check_system_install.sh BUILD_DIR WORK_DIR: as root on a throwaway
# machine (.ci/run), install the built library the way a user without a
# package would (`cmake --install` into /usr/local, then ldconfig) and
# check that the system finds every part of it with no paths given:
# the dynamic linker (ldconfig's cache), pkg-config, CMake's
# find_package(npyio) (C and, with g++, the C++17 npyio.hpp consumer),
# man (the tool's page and the library's section 3), and the npyio tool
# on PATH; each version the
# header's. Everything installed is removed again at the end.
set -eu
build=$1
work=$2
here=$(cd "$(dirname "$0")" && pwd)
[ "$(id -u)" -eq 0 ] || { echo "needs root (it installs into /usr/local)"; exit 1; }
want=$(sed -n 's/^#define NPYIO_VERSION_STRING "\(.*\)"$/\1/p' \
       "$here/../../include/npyio.h")
failed=0
fail() { echo "FAIL: $*"; failed=1; }
uninstall() {
    if [ -f "$build/install_manifest.txt" ]; then
        xargs rm -f <"$build/install_manifest.txt"
        ldconfig
    fi
}
trap uninstall EXIT
rm -rf "$work" && mkdir -p "$work"
cmake --install "$build" --prefix /usr/local >"$work/install.log"
ldconfig
ldconfig -p | grep -q 'libnpyio\.so\.1 .*=> /usr/local/' ||
    fail "ldconfig's cache has no /usr/local libnpyio.so.1"
[ "$(pkg-config --modversion npyio)" = "$want" ] ||
    fail "pkg-config --modversion npyio: '$(pkg-config --modversion npyio 2>&1)'"
[ "$(env -i PATH=/usr/local/bin:/usr/bin:/bin npyio --version)" = \
  "npyio $want" ] || fail "npyio --version from PATH"
page=$(man -w npyio 2>&1) || true
# (Debian's /usr/local/man is a link to share/man.)
[ "$(readlink -f "$page")" = /usr/local/share/man/man1/npyio.1 ] ||
    fail "man -w npyio: '$page'"
# The library's pages (section 3): the overview, and a call's link page
# (which man-db may follow to its family's page, npyio_tasks.3).
page=$(man -w 3 npyio 2>&1) || true
[ "$(readlink -f "$page")" = /usr/local/share/man/man3/npyio.3 ] ||
    fail "man -w 3 npyio: '$page'"
page=$(man -w 3 npyio_save 2>&1) || true
case $(readlink -f "$page") in
/usr/local/share/man/man3/npyio_save.3 | /usr/local/share/man/man3/npyio_tasks.3) ;;
*) fail "man -w 3 npyio_save: '$page'" ;;
esac
# A constant's link page, and the C++ layer's page.
page=$(man -w 3 NPYIO_E_CHECKSUM 2>&1) || true
case $(readlink -f "$page") in
/usr/local/share/man/man3/NPYIO_E_CHECKSUM.3 | /usr/local/share/man/man3/npyio_status.3) ;;
*) fail "man -w 3 NPYIO_E_CHECKSUM: '$page'" ;;
esac
page=$(man -w 3 npyio.hpp 2>&1) || true
[ "$(readlink -f "$page")" = /usr/local/share/man/man3/npyio.hpp.3 ] ||
    fail "man -w 3 npyio.hpp: '$page'"
# A C program built with pkg-config's flags, no run path: the dynamic
# linker finds the library through its cache.
# shellcheck disable=SC2046
cc -std=c11 -Wall -Wextra -Werror -o "$work/consumer" "$here/consumer.c" \
    $(pkg-config --cflags --libs npyio)
loaded=$(ldd "$work/consumer" | awk '$1 == "libnpyio.so.1" { print $3 }')
case $loaded in
/usr/local/*) ;;
*) fail "the pkg-config consumer loads libnpyio.so.1 from '$loaded'" ;;
esac
"$work/consumer" >"$work/consumer.log" 2>&1 || fail "the pkg-config consumer fails"
# find_package(npyio) with no CMAKE_PREFIX_PATH.
if cmake -S "$here/cmake-project" -B "$work/cmake" >"$work/cmake.log" 2>&1 &&
   cmake --build "$work/cmake" >>"$work/cmake.log" 2>&1; then
    "$work/cmake/consumer" >>"$work/cmake.log" 2>&1 ||
        fail "the find_package consumer fails"
else
    cat "$work/cmake.log"
    fail "find_package(npyio) without a prefix path"
fi
# The C++17 consumer (npyio.hpp) the same way, where g++ is found.
if command -v g++ >/dev/null 2>&1; then
    if cmake -S "$here/cmake-project" -B "$work/cmake-cxx" -DNPYIO_CONSUMER_CXX=ON \
           -DCMAKE_CXX_FLAGS="-Wall -Wextra -Wpedantic -Werror" \
           >"$work/cmake-cxx.log" 2>&1 &&
       cmake --build "$work/cmake-cxx" >>"$work/cmake-cxx.log" 2>&1; then
        mkdir -p "$work/cxx-run"
        "$work/cmake-cxx/cxx_consumer" "$work/cxx-run" >>"$work/cmake-cxx.log" 2>&1 ||
            { cat "$work/cmake-cxx.log"; fail "the find_package C++ consumer fails"; }
    else
        cat "$work/cmake-cxx.log"
        fail "find_package(npyio) for the C++ consumer"
    fi
fi
[ "$failed" -eq 0 ] && echo "the system finds libnpyio $want everywhere"
exit "$failed"
