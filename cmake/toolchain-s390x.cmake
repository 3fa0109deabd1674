# Cross build for big-endian s390x (Debian's gcc-s390x-linux-gnu), against
# libraries unpacked into a sysroot (tests/cross/run.sh makes it), run with
# qemu-user. NPYIO_SYSROOT comes from the environment.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR s390x)
set(CMAKE_C_COMPILER s390x-linux-gnu-gcc)
set(_sysroot $ENV{NPYIO_SYSROOT})
set(CMAKE_FIND_ROOT_PATH ${_sysroot})
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
# The cross gcc also searches the host's /usr/include: name the sysroot's
# first so its headers (zlib.h, minizip/, cmocka.h) win.
set(CMAKE_C_FLAGS_INIT "-isystem ${_sysroot}/usr/include")
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-s390x;-L;/usr/s390x-linux-gnu;-E;LD_LIBRARY_PATH=${_sysroot}/lib/s390x-linux-gnu:${_sysroot}/usr/lib/s390x-linux-gnu)
# Libraries the sysroot's libraries need (libminizip and libnpyio need
# libz.so.1, which lives in its /lib): where the linker finds them.
set(CMAKE_EXE_LINKER_FLAGS_INIT
    "-Wl,-rpath-link,${_sysroot}/lib/s390x-linux-gnu:${_sysroot}/usr/lib/s390x-linux-gnu")
set(CMAKE_SHARED_LINKER_FLAGS_INIT "${CMAKE_EXE_LINKER_FLAGS_INIT}")
