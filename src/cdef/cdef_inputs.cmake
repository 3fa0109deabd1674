# cmake -DHEADER=npyio.h -DOUT_DIR=dir -P cdef_inputs.cmake
#
# First step of making npyio.cdef (see CMakeLists.txt here): from the public
# header, write
#   OUT_DIR/cdef_input.h      the header without its #include lines, for the
#                             preprocessor, so that no system header's
#                             declarations reach the cdef file;
#   OUT_DIR/cdef_constants.h  NPYIO_CDEF_CONSTANT(NAME) for every constant
#                             the header #defines, whose value gen_cdef.c
#                             takes from the compiler itself.
# Not constants: the include guard, NPYIO_API, NPYIO__ helpers and string values (cffi's cdef
# takes only integers; npyio_version_string() gives the version string).
# Files are rewritten only when their contents change.
if(NOT HEADER OR NOT OUT_DIR)
  message(FATAL_ERROR "usage: cmake -DHEADER=... -DOUT_DIR=... -P cdef_inputs.cmake")
endif()
file(READ "${HEADER}" text)

function(write_if_changed path content)
  if(EXISTS "${path}")
    file(READ "${path}" old)
    if(old STREQUAL content)
      return()
    endif()
  endif()
  file(WRITE "${path}" "${content}")
endfunction()

string(REGEX REPLACE "(^|\n)[ \t]*#[ \t]*include[^\n]*" "\\1" without_includes "${text}")
write_if_changed("${OUT_DIR}/cdef_input.h" "${without_includes}")

set(list "/* Generated from ${HEADER} by cdef_inputs.cmake. */\n")
# (A value stops at a backslash: an element ending in one would escape the
# list's next separator and swallow the next define.)
string(REGEX MATCHALL "(^|\n)[ \t]*#[ \t]*define[ \t]+NPYIO_[A-Z0-9_]+[ \t]+[^\n\\]*"
       defines "${text}")
set(count 0)
foreach(line IN LISTS defines)
  if(NOT line MATCHES "define[ \t]+(NPYIO_[A-Z0-9_]+)[ \t]+([^\n]*)")
    continue()
  endif()
  set(name "${CMAKE_MATCH_1}")
  string(STRIP "${CMAKE_MATCH_2}" value)
  # NPYIO__ names are the header's own helpers (the C11 type layer's).
  if(name STREQUAL "NPYIO_API" OR name MATCHES "^NPYIO__" OR value STREQUAL ""
     OR value MATCHES "^\"")
    continue()
  endif()
  string(APPEND list "NPYIO_CDEF_CONSTANT(${name})\n")
  math(EXPR count "${count} + 1")
endforeach()
if(count EQUAL 0)
  message(FATAL_ERROR "no NPYIO_ constants found in ${HEADER}")
endif()
write_if_changed("${OUT_DIR}/cdef_constants.h" "${list}")
