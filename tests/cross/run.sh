#!/usr/bin/env bash
# run.sh s390x|i386|portable|windows [BUILD_DIR]
# run.sh portable BUILD_DIR static
#
# Build libnpyio and its unit tests for another host and run them with
# ctest under qemu-user: s390x (big-endian, 64-bit) or i386 (little-endian,
# 32-bit size_t). Installs what it needs (as root, Debian 12). Run by
# .ci/run, and by hand. Exits non-zero when a test fails.
#
# portable: the same, natively, for the host macOS and the BSDs stand for:
# the build with -DNPYIO_PORTABLE=ON (only what POSIX.1-2008, macOS and
# FreeBSD offer: named temporaries, flock(), buffered copies, zeros for
# posix_fallocate, no huge-page or pipe-size advice), running the whole
# suite but the slow label: the kill trials, the fault loops, the
# concurrency and thread tests and the interop tests against NumPy
# included. With `static` (what .ci/run asks, folding its former static
# stage in here) the library is the static libnpyio.a, so the same suite
# also runs the static library's install and consumer tests.
#
# What runs there: every unit, fixture, corpus, fuzz-replay and ABI test
# and the example program. What does not, and why:
#  - interop tests: they need NumPy, which is not in the foreign sysroot;
#    the NumPy-made corpora (both byte orders) are read instead, with
#    expectations chosen by the host's byte order;
#  - install/consumer tests: they build programs against an installed
#    prefix with the host's tools;
#  - sanitizers: ASan and UBSan do not work under qemu-user.
# Data sizes are already small (qemu is about 7x slower); no time limits.
#
# windows: a cross build for 64-bit Windows with mingw-w64, run under Wine
# (see setup_windows below and tests/windows.cmake for what runs there).
set -euo pipefail
arch=${1:?usage: run.sh s390x|i386|portable|windows [BUILD_DIR]}
top=$(cd "$(dirname "$0")/../.." && pwd)
build=${2:-$top/build-$arch}
mkdir -p "$build"
build=$(cd "$build" && pwd) # absolute: the sysroot's paths go into CMake
export DEBIAN_FRONTEND=noninteractive

have() { dpkg -s "$1" >/dev/null 2>&1; }

setup_s390x() {
    local sysroot=$build/sysroot debs=$build/debs pkg
    if ! have gcc-s390x-linux-gnu || ! have qemu-user ||
       ! have libc6-dev-s390x-cross; then
        apt-get update -q
        apt-get install -y -q --no-install-recommends gcc-s390x-linux-gnu \
            libc6-dev-s390x-cross qemu-user
    fi
    if [ ! -f "$sysroot/usr/include/cmocka.h" ] ||
       [ ! -f "$sysroot/usr/include/libdeflate.h" ]; then
        # zlib1g:s390x cannot be installed beside the host's (bookworm-
        # security has no s390x, so the versions differ): unpack instead.
        dpkg --print-foreign-architectures | grep -qx s390x ||
            { dpkg --add-architecture s390x && apt-get update -q; }
        mkdir -p "$debs" "$sysroot"
        (cd "$debs" && apt-get download -q zlib1g:s390x zlib1g-dev:s390x \
            libminizip1:s390x libminizip-dev:s390x libcmocka0:s390x \
            libcmocka-dev:s390x libdeflate0:s390x libdeflate-dev:s390x)
        for pkg in "$debs"/*.deb; do dpkg-deb -x "$pkg" "$sysroot"; done
        # libz.so is an absolute link into the host's /lib: repoint it, or
        # the link quietly falls back to the static libz.a.
        ln -sfn ../../../lib/s390x-linux-gnu/libz.so.1 \
            "$sysroot/usr/lib/s390x-linux-gnu/libz.so"
    fi
    export NPYIO_SYSROOT=$sysroot
    export PKG_CONFIG_SYSROOT_DIR=$sysroot
    export PKG_CONFIG_LIBDIR=$sysroot/usr/lib/s390x-linux-gnu/pkgconfig:$sysroot/usr/share/pkgconfig
}

setup_i386() {
    if ! have gcc-multilib || ! have qemu-user || ! have libcmocka-dev:i386 ||
       ! have libminizip-dev:i386 || ! have libdeflate-dev:i386; then
        dpkg --print-foreign-architectures | grep -qx i386 ||
            dpkg --add-architecture i386
        apt-get update -q
        apt-get install -y -q --no-install-recommends gcc-multilib qemu-user \
            zlib1g-dev:i386 libminizip-dev:i386 libcmocka-dev:i386 \
            libdeflate-dev:i386
    fi
    export PKG_CONFIG_LIBDIR=/usr/lib/i386-linux-gnu/pkgconfig:/usr/share/pkgconfig
    unset PKG_CONFIG_SYSROOT_DIR
}

# ---- windows ------------------------------------------------------------------
# The compiler is gcc-mingw-w64-x86-64-posix, not -win32: the library's
# threads (threads.c) are POSIX threads, which the posix flavour gives
# through winpthreads (libwinpthread-1.dll), so no second threads module.
# Debian 12's Wine is the `wine` package (the wine64 loader beside it);
# programs run headless with WINEDEBUG=-all and a WINEPREFIX of our own.
# zlib is libz-mingw-w64-dev; minizip, libdeflate and cmocka are not
# packaged for mingw: Debian's own source packages (a deb-src line for the
# archive this machine uses) are built into $build/prefix, once.
win_host=x86_64-w64-mingw32

win_packages() {
    local pkg missing=()
    for pkg in gcc-mingw-w64-x86-64-posix wine wine64 libz-mingw-w64-dev \
               dpkg-dev cmake make pkg-config python3-numpy; do
        have "$pkg" || missing+=("$pkg")
    done
    if [ ${#missing[@]} -gt 0 ]; then
        apt-get update -q
        apt-get install -y -q --no-install-recommends "${missing[@]}"
    fi
}

# A deb-src line for each archive the machine's deb lines name: its
# deb822 sources (Debian 12's debian.sources) or one-line sources.list,
# copied as source entries.
win_deb_src() {
    local list=/etc/apt/sources.list.d/npyio-deb-src
    [ -f "$list.sources" ] || [ -f "$list.list" ] && return
    if [ -f /etc/apt/sources.list.d/debian.sources ]; then
        sed 's/^Types:.*/Types: deb-src/' \
            /etc/apt/sources.list.d/debian.sources >"$list.sources"
    else
        sed -n 's/^deb \(.*\)/deb-src \1/p' /etc/apt/sources.list \
            >"$list.list"
    fi
    apt-get update -q
}

# minizip has autotools files only: its library is three files, compiled
# here with Debian's patches applied (dpkg-source).
win_minizip() {
    local dir=$1 prefix=$2 f
    mkdir -p "$prefix/include/minizip" "$prefix/lib/pkgconfig" "$dir/obj"
    for f in ioapi zip unzip; do
        $win_host-gcc-posix -O2 -c "$dir/$f.c" -o "$dir/obj/$f.o"
    done
    $win_host-ar rcs "$prefix/lib/libminizip.a" "$dir"/obj/*.o
    cp "$dir"/ioapi.h "$dir"/zip.h "$dir"/unzip.h "$dir"/crypt.h \
        "$prefix/include/minizip/"
    cat >"$prefix/lib/pkgconfig/minizip.pc" <<PC
prefix=$prefix
Name: minizip
Description: zip and unzip on top of zlib (Debian's source, mingw-w64)
Version: 1.1
Requires: zlib
Libs: -L\${prefix}/lib -lminizip
Cflags: -I\${prefix}/include/minizip
PC
}

win_libdeflate() {
    local dir=$1 prefix=$2
    make -C "$dir" -j"$(nproc)" CC=$win_host-gcc-posix AR=$win_host-ar \
        DISABLE_SHARED=1 PREFIX="$prefix" libdeflatestatic.lib
    mkdir -p "$prefix/include" "$prefix/lib/pkgconfig"
    cp "$dir/libdeflatestatic.lib" "$prefix/lib/libdeflate.a"
    cp "$dir/libdeflate.h" "$prefix/include/"
    cat >"$prefix/lib/pkgconfig/libdeflate.pc" <<PC
prefix=$prefix
Name: libdeflate
Description: fast deflate and CRC-32 (Debian's source, mingw-w64)
Version: 1.14
Libs: -L\${prefix}/lib -ldeflate
Cflags: -I\${prefix}/include -DLIBDEFLATE_STATIC
PC
}

win_cmocka() {
    local dir=$1 prefix=$2
    cmake -S "$dir" -B "$dir/build" \
        -DCMAKE_TOOLCHAIN_FILE="$top/cmake/toolchain-windows.cmake" \
        -DCMAKE_INSTALL_PREFIX="$prefix" -DCMAKE_BUILD_TYPE=Release \
        -DCMAKE_C_FLAGS=-D__USE_MINGW_ANSI_STDIO=1 \
        -DWITH_EXAMPLES=OFF -DUNIT_TESTING=OFF >/dev/null
    cmake --build "$dir/build" -j"$(nproc)"
    cmake --install "$dir/build" >/dev/null
}

setup_windows() {
    local prefix=$build/prefix src=$build/deps-src name dir
    win_packages
    export NPYIO_WIN_PREFIX=$prefix
    if [ ! -f "$prefix/lib/pkgconfig/minizip.pc" ] ||
       [ ! -f "$prefix/lib/pkgconfig/libdeflate.pc" ] ||
       [ ! -f "$prefix/lib/pkgconfig/cmocka.pc" ]; then
        win_deb_src
        mkdir -p "$src"
        (cd "$src" && apt-get source -q minizip libdeflate cmocka)
        for name in minizip libdeflate cmocka; do
            dir=$(find "$src" -maxdepth 1 -type d -name "$name-*" | head -n1)
            "win_$name" "$dir" "$prefix"
        done
    fi
    export PKG_CONFIG_LIBDIR=$prefix/lib/pkgconfig:/usr/$win_host/lib/pkgconfig
    unset PKG_CONFIG_SYSROOT_DIR
    export WINEPREFIX=$build/wineprefix
    # Z: is the Linux root in every Wine prefix (Wine takes / for \).
    export NPYIO_WINEPATH="Z:$prefix/bin;Z:/usr/$win_host/lib;Z:$build/src"
    # One wineserver for the whole run (stopped when run.sh exits), not
    # one started and stopped around each of the thousands of programs
    # the tests run: a program starting while the last one's server exits
    # could fail to start. It is started before anything else (wineboot's
    # services would keep a server of their own alive, and `wineserver
    # -p` exits 2 when one runs), after a server an earlier run of this
    # prefix left behind is stopped; it needs the prefix's folder.
    mkdir -p "$WINEPREFIX"
    WINEDEBUG=-all wineserver -k 2>/dev/null || true
    WINEDEBUG=-all wineserver -w
    WINEDEBUG=-all wineserver -p
    trap 'wineserver -k 2>/dev/null || true' EXIT
    [ -f "$WINEPREFIX/system.reg" ] ||
        WINEDEBUG=-all wineboot -i >/dev/null 2>&1 || true
    # Its services (rpcss, winedevice, ...) are started here, with no
    # output of a test to hold: those a test's program started would keep
    # the test's output open, and ctest waiting, as long as the server.
    WINEDEBUG=-all wine wineboot </dev/null >/dev/null 2>&1 || true
}

# The Windows build and its tests (tests/windows.cmake says which run
# under Wine, and why the others do not). The Linux build of
# tests/cross/write_pair.c and of the tool (a native libnpyio, no tests)
# is made first: windows_same_bytes and windows_same_tool_bytes compare
# the two builds' files byte for byte.
run_windows() {
    local linux=$build/linux
    # (with the machine's own pkg-config files, not the Windows prefix's)
    env -u PKG_CONFIG_LIBDIR cmake -S "$top" -B "$linux" \
        -DCMAKE_BUILD_TYPE=RelWithDebInfo -DNPYIO_BUILD_TESTS=OFF >/dev/null
    cmake --build "$linux" -j"$(nproc)" --target npyio npyio_cli
    cc -std=c11 -O2 -I"$top/include" "$top/tests/cross/write_pair.c" \
        -L"$linux/src" -lnpyio -Wl,-rpath,"$linux/src" -o "$linux/write_pair"
    cmake -S "$top" -B "$build" \
        -DCMAKE_TOOLCHAIN_FILE="$top/cmake/toolchain-windows.cmake" \
        -DCMAKE_BUILD_TYPE=RelWithDebInfo -DNPYIO_WERROR=ON \
        -DNPYIO_LINUX_WRITE_PAIR="$linux/write_pair" \
        -DNPYIO_LINUX_NPYIO="$linux/src/npyio"
    cmake --build "$build" -j"$(nproc)"
    ctest --test-dir "$build" --output-on-failure --parallel "$(nproc)"
}

# The portable build is native: what the README's test command installs
# (a name is asked for this machine's architecture too: after the i386
# stage, libc6-dev alone names two packages).
run_portable() {
    local pkg missing=() native
    native=$(dpkg --print-architecture)
    for pkg in cmake make gcc libc6-dev pkg-config zlib1g-dev \
               libminizip-dev libdeflate-dev libcmocka-dev python3-numpy \
               python3-cffi strace g++ groff-base man-db; do
        have "$pkg" || have "$pkg:$native" || missing+=("$pkg")
    done
    if [ ${#missing[@]} -gt 0 ]; then
        apt-get update -q
        apt-get install -y -q --no-install-recommends "${missing[@]}"
    fi
    local shared=ON
    [ "${1:-}" != static ] || shared=OFF
    cmake -S "$top" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
        -DNPYIO_PORTABLE=ON -DNPYIO_WERROR=ON -DNPYIO_BUILD_TESTS=ON \
        -DBUILD_SHARED_LIBS=$shared
    cmake --build "$build" -j"$(nproc)"
    ctest --test-dir "$build" --output-on-failure --parallel "$(nproc)" \
        -LE slow
}

case $arch in
s390x) setup_s390x ;;
i386) setup_i386 ;;
portable) run_portable "${3:-}"; exit ;;
windows) setup_windows; run_windows; exit ;;
*) echo "run.sh: unknown host $arch (s390x, i386, portable or windows)" >&2
   exit 2 ;;
esac

cmake -S "$top" -B "$build" -DCMAKE_TOOLCHAIN_FILE="$top/cmake/toolchain-$arch.cmake" \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo -DNPYIO_WERROR=ON
cmake --build "$build" -j"$(nproc)"
# NPYIO_CROSS: what qemu-user cannot do (mount a tmpfs) is skipped, not
# failed, although CI is set.
NPYIO_CROSS=1 ctest --test-dir "$build" --output-on-failure --parallel "$(nproc)"
