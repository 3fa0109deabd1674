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
  if(NPYIO_FUZZ)
    if(NOT CMAKE_C_COMPILER_ID MATCHES "Clang")
      message(FATAL_ERROR "NPYIO_FUZZ needs clang (CC=clang; Debian: clang "
                          "libclang-rt-14-dev)")
    endif()
    add_compile_options(-fsanitize=fuzzer-no-link,address,undefined
                        -fno-sanitize-recover=all -fno-omit-frame-pointer)
    add_link_options(-fsanitize=address,undefined)
  endif()
elseif(NPYIO_WERROR OR NPYIO_SANITIZE)
  message(WARNING "NPYIO_WERROR and NPYIO_SANITIZE are only known for GCC and Clang")
endif()
