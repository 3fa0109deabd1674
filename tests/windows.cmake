# The tests of the Windows build (mingw-w64, cross-compiled, run by ctest
# under Wine through CMAKE_CROSSCOMPILING_EMULATOR; tests/cross/run.sh
# windows). Included by CMakeLists.txt instead of its own list.
find_package(PkgConfig REQUIRED)
pkg_check_modules(CMOCKA REQUIRED IMPORTED_TARGET cmocka)
find_package(Threads REQUIRED)
find_program(NPYIO_PYTHON NAMES python3 PATHS /usr/bin NO_DEFAULT_PATH)
set(_src ${CMAKE_CURRENT_SOURCE_DIR})
set(_bin ${CMAKE_CURRENT_BINARY_DIR})
set(_data ${_src}/data)

function(npyio_win_unit name)
  add_executable(${name} unit/${name}.c)
  target_link_libraries(${name} PRIVATE npyio_internal PkgConfig::CMOCKA
                        Threads::Threads)
  target_compile_definitions(${name} PRIVATE NPYIO_TEST_DATA_DIR="${_data}")
  add_test(NAME ${name} COMMAND ${name})
  set_tests_properties(${name} PROPERTIES LABELS "unit;windows")
endfunction()

foreach(_t ${NPYIO_WIN_UNIT_TESTS})
  npyio_win_unit(${_t})
endforeach()

# The DLL exports exactly what cmake/npyio.map lists.
if(BUILD_SHARED_LIBS)
  add_test(NAME abi_dll_exports
    COMMAND sh ${_src}/abi/check_dll_exports.sh ${NPYIO_VERSION_SCRIPT}
            $<TARGET_FILE:npyio>)
  set_tests_properties(abi_dll_exports PROPERTIES LABELS "abi;windows"
    ENVIRONMENT "OBJDUMP=${CMAKE_OBJDUMP}" PASS_REGULAR_EXPRESSION
    "dll exports OK")
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

# The tool over the corpora (the scripts run it under the emulator).
foreach(_run corpus npz errors)
  add_test(NAME cli_${_run}
    COMMAND bash ${_src}/cli/run_${_run}.sh ${CMAKE_C_BYTE_ORDER}
            $<TARGET_FILE:npyio_cli> ${_data} ${CMAKE_CROSSCOMPILING_EMULATOR})
  set_tests_properties(cli_${_run} PROPERTIES LABELS "cli;windows"
    ENVIRONMENT NPYIO_TEST_WINE=1)
endforeach()
