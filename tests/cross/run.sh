#!/usr/bin/env bash
# run.sh s390x|i386|portable [BUILD_DIR]
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
# included.
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
set -euo pipefail
arch=${1:?usage: run.sh s390x|i386|portable [BUILD_DIR]}
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
    cmake -S "$top" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
        -DNPYIO_PORTABLE=ON -DNPYIO_WERROR=ON -DNPYIO_BUILD_TESTS=ON
    cmake --build "$build" -j"$(nproc)"
    ctest --test-dir "$build" --output-on-failure --parallel "$(nproc)" \
        -LE slow
}

case $arch in
s390x) setup_s390x ;;
i386) setup_i386 ;;
portable) run_portable; exit ;;
*) echo "run.sh: unknown host $arch (s390x, i386 or portable)" >&2; exit 2 ;;
esac

cmake -S "$top" -B "$build" -DCMAKE_TOOLCHAIN_FILE="$top/cmake/toolchain-$arch.cmake" \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo -DNPYIO_WERROR=ON
cmake --build "$build" -j"$(nproc)"
# NPYIO_CROSS: what qemu-user cannot do (mount a tmpfs) is skipped, not
# failed, although CI is set.
NPYIO_CROSS=1 ctest --test-dir "$build" --output-on-failure --parallel "$(nproc)"
