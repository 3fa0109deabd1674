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
exec wine "$@"
