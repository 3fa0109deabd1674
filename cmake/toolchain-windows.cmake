# Cross build for 64-bit Windows with Debian's mingw-w64 (the POSIX
# threads flavour, gcc-mingw-w64-x86-64-posix: threads.c's pthreads come
# from winpthreads), run with Wine. zlib is Debian's libz-mingw-w64-dev;
# minizip, libdeflate and cmocka are built from Debian's source packages
# into NPYIO_WIN_PREFIX by tests/cross/run.sh, which also sets WINEPREFIX.
set(CMAKE_SYSTEM_NAME Windows)
set(CMAKE_SYSTEM_PROCESSOR x86_64)
set(CMAKE_C_COMPILER x86_64-w64-mingw32-gcc-posix)
set(CMAKE_RC_COMPILER x86_64-w64-mingw32-windres)
set(_prefix $ENV{NPYIO_WIN_PREFIX})
set(CMAKE_FIND_ROOT_PATH /usr/x86_64-w64-mingw32 ${_prefix})
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
# libgcc linked in (no libgcc_s_seh-1.dll to ship); winpthreads stays a
# DLL, libwinpthread-1.dll, which mingw-w64 ships.
set(CMAKE_SHARED_LINKER_FLAGS_INIT -static-libgcc)
set(CMAKE_EXE_LINKER_FLAGS_INIT -static-libgcc)
# Wine finds the DLLs a program needs (zlib1, libwinpthread-1, cmocka,
# npyio) through WINEPATH: the folders are set by the emulator's wrapper.
set(CMAKE_CROSSCOMPILING_EMULATOR ${CMAKE_CURRENT_LIST_DIR}/../tests/cross/wine-run.sh)
