# The tests of the Windows build (mingw-w64, cross-compiled, run by ctest
# under Wine through CMAKE_CROSSCOMPILING_EMULATOR; tests/cross/run.sh
# windows). Included by CMakeLists.txt, after cmocka, Threads, the Python
# with NumPy and _src, _bin, _data, instead of its own list.
function(npyio_win_unit name)
  add_executable(${name} unit/${name}.c)
  target_link_libraries(${name} PRIVATE npyio_internal PkgConfig::CMOCKA
                        Threads::Threads)
  target_compile_definitions(${name} PRIVATE NPYIO_TEST_DATA_DIR="${_data}")
  # The POSIX calls msvcrt lacks (unit/windows_shim.h); cmocka declares
  # its printf-like calls for msvcrt's printf, without %zu: the tests'
  # formats are checked by the other builds.
  target_compile_options(${name} PRIVATE -include
                         ${_src}/unit/windows_shim.h -Wno-format)
  add_test(NAME ${name} COMMAND ${name})
  set_tests_properties(${name} PROPERTIES LABELS "unit;windows")
endfunction()

# The unit tests that run under Wine: the fault loops (test_nomem,
# test_iofault) among them.
npyio_win_unit(test_error)
foreach(_t test_options test_literal test_dtype test_header test_record
        test_reorder test_nomem test_cast test_parallel_read
        test_parallel_member test_backend test_flag_table test_iofault
        test_npz_threads test_zipdir test_refusals test_caller_edges
        test_npz_damage test_arrays test_chunks test_seam test_window
        test_npz_inflate)
  npyio_win_unit(${_t})
endforeach()
# Not here, and why:
#  - they fork() and wait for children (crash trials, concurrent
#    writers), which Windows has not: test_io, test_grow, test_replace,
#    test_save_under, test_npz_truncate, test_threads;
#  - signals (SIGPIPE, sigpending): test_stream; sockets: test_edges;
#  - small file systems mounted for a full disk (statvfs, tmpfs): test_map,
#    test_pathfault; sparse files (fallocate's holes, st_blocks):
#    test_npz_sparse; flock() (interop/fd_ops.h): test_callbacks;
#  - the C library wrapped at link time (ld --wrap of malloc, fsync), which
#    the PE linker does not do for msvcrt's imports: test_alloc, test_flags;
#  - test_npz: its corpus holds nul.npz, and NUL names a device on Windows;
#  - test_npz_bomb: label slow, as on Linux.

# The DLL exports exactly what cmake/npyio.map lists.
if(BUILD_SHARED_LIBS)
  add_test(NAME abi_dll_exports
    COMMAND sh ${_src}/abi/check_dll_exports.sh ${NPYIO_VERSION_SCRIPT}
            $<TARGET_FILE:npyio>)
  set_tests_properties(abi_dll_exports PROPERTIES LABELS "abi;windows"
    ENVIRONMENT "OBJDUMP=${CMAKE_OBJDUMP}" PASS_REGULAR_EXPRESSION
    "dll exports OK")
  # The check fails on a map naming a function the DLL lacks, and on one
  # missing a function the DLL exports (the real map with a line added or
  # taken away), naming the function each time.
  file(READ ${NPYIO_VERSION_SCRIPT} _map)
  string(REPLACE "  global:\n" "  global:\n    npyio_not_in_the_dll;\n"
         _stale "${_map}")
  string(REPLACE "    npyio_save;\n" "" _short "${_map}")
  file(WRITE ${_bin}/abi-stale.map "${_stale}")
  file(WRITE ${_bin}/abi-short.map "${_short}")
  foreach(_bad stale short)
    add_test(NAME abi_dll_exports_fails_${_bad}
      COMMAND sh -c "sh \"$0\" \"$@\"; echo \"exited with $?\""
              ${_src}/abi/check_dll_exports.sh ${_bin}/abi-${_bad}.map
              $<TARGET_FILE:npyio>)
    set_tests_properties(abi_dll_exports_fails_${_bad} PROPERTIES
      LABELS "abi;windows" ENVIRONMENT "OBJDUMP=${CMAKE_OBJDUMP}"
      FAIL_REGULAR_EXPRESSION "dll exports OK")
  endforeach()
  set_tests_properties(abi_dll_exports_fails_stale PROPERTIES
    PASS_REGULAR_EXPRESSION "FAILED: npyio_not_in_the_dll is in [^\n]* but not exported by [^\n]*\nexited with 1")
  set_tests_properties(abi_dll_exports_fails_short PROPERTIES
    PASS_REGULAR_EXPRESSION "FAILED: npyio_save is exported by [^\n]* but not in [^\n]*\nexited with 1")
endif()

# The Windows build's .npy and .npz, byte for byte the Linux build's
# (NPYIO_LINUX_WRITE_PAIR: tests/cross/write_pair.c built natively by
# tests/cross/run.sh windows), read by NumPy.
add_executable(write_pair cross/write_pair.c)
target_link_libraries(write_pair PRIVATE npyio)
if(NPYIO_LINUX_WRITE_PAIR AND NPYIO_PYTHON)
  add_test(NAME windows_same_bytes
    COMMAND sh ${_src}/cross/check_pair.sh ${_bin}/pair
            ${NPYIO_LINUX_WRITE_PAIR} ${CMAKE_CROSSCOMPILING_EMULATOR}
            $<TARGET_FILE:write_pair>)
  set_tests_properties(windows_same_bytes PROPERTIES LABELS "windows"
    PASS_REGULAR_EXPRESSION "pair OK")
endif()

# The Windows tool's archives and conversions of the corpus, byte for byte
# the Linux tool's (NPYIO_LINUX_NPYIO: the native tool, built by
# tests/cross/run.sh windows).
if(NPYIO_LINUX_NPYIO)
  add_test(NAME windows_same_tool_bytes
    COMMAND bash ${_src}/cross/check_tool_pair.sh ${_bin}/tool-pair ${_data}
            ${NPYIO_LINUX_NPYIO} ${CMAKE_CROSSCOMPILING_EMULATOR}
            $<TARGET_FILE:npyio_cli>)
  set_tests_properties(windows_same_tool_bytes PROPERTIES LABELS "cli;windows"
    PASS_REGULAR_EXPRESSION "tool pair OK")
endif()

# The tool over the corpora (the scripts run it under the emulator).
foreach(_run corpus npz errors)
  add_test(NAME cli_${_run}
    COMMAND bash ${_src}/cli/run_${_run}.sh ${CMAKE_C_BYTE_ORDER}
            $<TARGET_FILE:npyio_cli> ${_data} ${CMAKE_CROSSCOMPILING_EMULATOR})
  set_tests_properties(cli_${_run} PROPERTIES LABELS "cli;windows"
    ENVIRONMENT NPYIO_TEST_WINE=1)
endforeach()

# Atomic replacement on Windows: a sharing violation (old file intact),
# a holder that shares deletion, and a save killed (TerminateProcess)
# between its temporary and the rename.
add_executable(win_replace cross/win_replace.c)
target_link_libraries(win_replace PRIVATE npyio_internal)
file(REMOVE_RECURSE ${_bin}/win-replace)
add_test(NAME windows_replace COMMAND win_replace ${_bin}/win-replace)
set_tests_properties(windows_replace PROPERTIES LABELS "unit;windows"
  PASS_REGULAR_EXPRESSION "replace OK")

# Descriptors and FILEs the caller opened in the runtime's default text
# mode carry the .npy bytes untranslated, both ways.
add_executable(win_text_mode cross/win_text_mode.c)
target_link_libraries(win_text_mode PRIVATE npyio)
file(REMOVE_RECURSE ${_bin}/win-text-mode)
add_test(NAME windows_text_mode COMMAND win_text_mode ${_bin}/win-text-mode)
set_tests_properties(windows_text_mode PROPERTIES LABELS "unit;windows"
  PASS_REGULAR_EXPRESSION "text mode OK")

# A mingw-w64 program of the installed DLL, through npyio.pc and through
# the CMake package (its import library, libnpyio.dll.a).
if(BUILD_SHARED_LIBS)
  add_test(NAME windows_consumers
    COMMAND sh ${_src}/cross/win_consumer.sh ${CMAKE_BINARY_DIR}
            ${_bin}/install-prefix ${_bin}/consumers ${CMAKE_TOOLCHAIN_FILE}
            ${CMAKE_CROSSCOMPILING_EMULATOR})
  set_tests_properties(windows_consumers PROPERTIES LABELS "install;windows"
    PASS_REGULAR_EXPRESSION "windows consumers OK")
endif()
