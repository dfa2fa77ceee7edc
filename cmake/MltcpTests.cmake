# MltcpTests.cmake - the one way tests are registered with CTest.  Every
# tests/<area>/ has a CMakeLists.txt, added by the top-level CMakeLists.txt
# after the code it tests, that returns early when that code is not built
# and registers its tests with these two functions, labelled <area>; each
# area's check target (mk/<area>.mk) runs `ctest -L <area>`.
#
#   mltcp_gtest(<target> AREA <area> SOURCES <file...> LIBS <lib...>
#               [DEFINITIONS <def...>])
#       a GoogleTest executable; every TEST in it is one CTest test
#       (gtest_discover_tests), named Suite.Name.
#   mltcp_script_test(<name> AREA <area> COMMAND <cmd...> [TIMEOUT <s>]
#                     [PROPERTIES <prop value...>])
#       a script (or any command); TIMEOUT defaults to 60 s.
include_guard(GLOBAL)
include(GoogleTest)
find_package(GTest REQUIRED)

function(mltcp_gtest target)
  cmake_parse_arguments(T "" "AREA" "SOURCES;LIBS;DEFINITIONS" ${ARGN})
  if(NOT T_AREA OR NOT T_SOURCES)
    message(FATAL_ERROR "mltcp_gtest(${target}): AREA and SOURCES are required")
  endif()
  add_executable(${target} ${T_SOURCES})
  target_link_libraries(${target} PRIVATE ${T_LIBS} GTest::gtest_main)
  target_compile_options(${target} PRIVATE -Werror)
  if(T_DEFINITIONS)
    target_compile_definitions(${target} PRIVATE ${T_DEFINITIONS})
  endif()
  gtest_discover_tests(${target} PROPERTIES LABELS ${T_AREA} DISCOVERY_TIMEOUT 60)
endfunction()

function(mltcp_script_test name)
  cmake_parse_arguments(T "" "AREA;TIMEOUT" "COMMAND;PROPERTIES" ${ARGN})
  if(NOT T_AREA OR NOT T_COMMAND)
    message(FATAL_ERROR "mltcp_script_test(${name}): AREA and COMMAND are required")
  endif()
  if(NOT T_TIMEOUT)
    set(T_TIMEOUT 60)
  endif()
  add_test(NAME ${name} COMMAND ${T_COMMAND})
  set_tests_properties(${name} PROPERTIES LABELS ${T_AREA} TIMEOUT ${T_TIMEOUT} ${T_PROPERTIES})
endfunction()
