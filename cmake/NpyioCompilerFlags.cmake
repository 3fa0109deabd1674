# Warnings and sanitizers for every target of the project (library, tests,
# tools). Kept in one file so that the library and the tests are always
# compiled the same way.

if(CMAKE_C_COMPILER_ID MATCHES "GNU|Clang")
  add_compile_options(-Wall -Wextra -Wpedantic -Wshadow -Wstrict-prototypes
                      -Wmissing-prototypes -Wformat=2 -Wvla)
  if(NPYIO_WERROR)
    add_compile_options(-Werror)
  endif()
  if(NPYIO_SANITIZE)
    set(_npyio_san -fsanitize=address,undefined -fno-sanitize-recover=all
                   -fno-omit-frame-pointer)
    add_compile_options(${_npyio_san})
    add_link_options(${_npyio_san})
    # Kept for the consumer tests, which compile programs of their own
    # against the installed library and must use the same runtime.
    set(NPYIO_SANITIZER_FLAGS "${_npyio_san}")
  endif()
  if(NPYIO_COVERAGE)
    # Unoptimized, so that lines and branches are the source's own; the
    # counters updated atomically, since threads (parallel deflate, the
    # thread test) and processes share them (else gcov can read negative
    # counts).
    add_compile_options(--coverage -O0 -fprofile-update=atomic)
    add_link_options(--coverage -fprofile-update=atomic)
  endif()
  if(NPYIO_TSAN)
    set(_npyio_tsan -fsanitize=thread -fno-omit-frame-pointer)
    add_compile_options(${_npyio_tsan})
    add_link_options(${_npyio_tsan})
    set(NPYIO_SANITIZER_FLAGS "${_npyio_tsan}")
  endif()
  if(NPYIO_FUZZ)
    if(NOT CMAKE_C_COMPILER_ID MATCHES "Clang")
      message(FATAL_ERROR "NPYIO_FUZZ needs clang (CC=clang; Debian: clang "
                          "libclang-rt-14-dev)")
    endif()
    add_compile_options(-fsanitize=fuzzer-no-link,address,undefined
                        -fno-sanitize-recover=all -fno-omit-frame-pointer)
    add_link_options(-fsanitize=address,undefined)
  endif()
elseif(NPYIO_WERROR OR NPYIO_SANITIZE OR NPYIO_TSAN)
  message(WARNING "NPYIO_WERROR and NPYIO_SANITIZE are only known for GCC and Clang")
endif()

# ---- hardening, on by default -------------------------------------------
# -fstack-protector-strong, -Wl,-z,relro,-z,now and a PIE tool for every
# build; -D_FORTIFY_SOURCE=2 for the optimized ones (Release, RelWithDebInfo,
# MinSizeRel: it needs optimization) without sanitizers or fuzzing. Each is
# left out when the builder's own flags (CFLAGS/CPPFLAGS/LDFLAGS, which
# initialize CMAKE_C_FLAGS and the CMAKE_*_LINKER_FLAGS, or those variables
# themselves) already say something about it, as distributions' do, and
# _FORTIFY_SOURCE when the compiler defines it by itself (Ubuntu's gcc).
# NPYIO_HARDEN_* record what was added, for the test tests/abi/check_hardening.sh.
set(NPYIO_HARDEN_STACK OFF)
set(NPYIO_HARDEN_FORTIFY OFF)
set(NPYIO_HARDEN_RELRO OFF)
set(NPYIO_HARDEN_NOW OFF)
set(NPYIO_HARDEN_PIE OFF)
# (Not for Windows: mingw-w64's linker has no -z, and its stack protector
# and _FORTIFY_SOURCE need libssp.)
if(CMAKE_C_COMPILER_ID MATCHES "GNU|Clang" AND NOT APPLE AND NOT WIN32)
  set(_npyio_cflags "${CMAKE_C_FLAGS} $ENV{CFLAGS} $ENV{CPPFLAGS}")
  foreach(_config RELEASE RELWITHDEBINFO MINSIZEREL DEBUG)
    string(APPEND _npyio_cflags " ${CMAKE_C_FLAGS_${_config}}")
  endforeach()
  set(_npyio_ldflags "${CMAKE_EXE_LINKER_FLAGS} ${CMAKE_SHARED_LINKER_FLAGS} $ENV{LDFLAGS}")
  include(CheckCCompilerFlag)
  if(NOT _npyio_cflags MATCHES "-f(no-)?stack-protector")
    check_c_compiler_flag(-fstack-protector-strong NPYIO_HAS_STACK_PROTECTOR_STRONG)
    if(NPYIO_HAS_STACK_PROTECTOR_STRONG)
      add_compile_options(-fstack-protector-strong)
      set(NPYIO_HARDEN_STACK ON)
    endif()
  endif()
  if(NOT _npyio_cflags MATCHES "-[DU] *_FORTIFY_SOURCE"
     AND NOT NPYIO_SANITIZE AND NOT NPYIO_FUZZ AND NOT NPYIO_TSAN)
    include(CheckCSourceCompiles)
    set(CMAKE_REQUIRED_FLAGS "-O2")
    check_c_source_compiles("
#include <stdio.h>
#ifdef _FORTIFY_SOURCE
#error the compiler defines _FORTIFY_SOURCE itself
#endif
int main(void) { return 0; }" NPYIO_FORTIFY_NOT_PREDEFINED)
    unset(CMAKE_REQUIRED_FLAGS)
    if(NPYIO_FORTIFY_NOT_PREDEFINED)
      set(_npyio_optimized "$<OR:$<CONFIG:Release>,$<CONFIG:RelWithDebInfo>,$<CONFIG:MinSizeRel>>")
      add_compile_definitions("$<${_npyio_optimized}:_FORTIFY_SOURCE=2>")
      set(NPYIO_HARDEN_FORTIFY ON)
    endif()
  endif()
  set(_npyio_z)
  if(NOT _npyio_ldflags MATCHES "(-z *|-z,|,)(no)?relro")
    list(APPEND _npyio_z relro)
    set(NPYIO_HARDEN_RELRO ON)
  endif()
  if(NOT _npyio_ldflags MATCHES "(-z *|-z,|,)(now|lazy)")
    list(APPEND _npyio_z now)
    set(NPYIO_HARDEN_NOW ON)
  endif()
  foreach(_z IN LISTS _npyio_z)
    add_link_options("LINKER:-z,${_z}")
  endforeach()
  # PIE for the executables (the tool): CMP0083 is NEW from
  # cmake_minimum_required 3.14, so POSITION_INDEPENDENT_CODE also links -pie.
  include(CheckPIESupported)
  check_pie_supported(OUTPUT_VARIABLE _npyio_pie_output LANGUAGES C)
  if(CMAKE_C_LINK_PIE_SUPPORTED)
    set(NPYIO_HARDEN_PIE ON)
  endif()
endif()
