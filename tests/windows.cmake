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
