#!/bin/sh
# wine-run.sh PROGRAM.exe [ARG...]: run a program of the Windows build
# under Wine, headless and quiet (the CMake emulator of
# cmake/toolchain-windows.cmake). WINEPREFIX and NPYIO_WINEPATH come from
# tests/cross/run.sh; the DLLs are found through WINEPATH: mingw-w64's
# (zlib1.dll, libwinpthread-1.dll), the prefix's (cmocka) and the build's
# (libnpyio-1.dll), given as Z:\ paths of the Linux folders.
export WINEDEBUG=${WINEDEBUG:--all}
export WINEPATH=${NPYIO_WINEPATH:?set by tests/cross/run.sh}
export WINEDLLOVERRIDES=${WINEDLLOVERRIDES:-mscoree,mshtml=}
unset DISPLAY
# Without address randomization. Debian 12's Wine has no preloader
# (wine64-preloader), which would reserve the addresses Windows fixes
# (the shared user data at 0x7ffe0000) before Linux's loader maps
# anything; with randomization on, about one start in 6000 finds that
# page taken and exits 1, printing only (under WINEDEBUG=err+all)
# "failed to map the shared user data: c0000018". With it off, every
# start lays out memory the same way.
exec setarch "$(uname -m)" -R wine "$@"
