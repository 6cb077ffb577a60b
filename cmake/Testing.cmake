# GoogleTest helpers. Included from the top-level CMakeLists.txt when tests or fuzzing are on.
#
#   moat_add_test(NAME <exe> SOURCES <file>... [LIBS <target>...] [LABELS <label>...])
#   moat_add_test(<exe> SOURCES <file>... [LIBS <target>...])          (same, positional name)
#
# Creates a test executable linked to GTest::gtest_main + GTest::gmock and the test support
# target, applies the project warnings and registers every TEST with ctest through
# gtest_discover_tests(). Each test runs with MOAT_SHARED_DIR set to the configured shared data
# directory; MOAT_REQUIRE_SHARED passes through from the caller's environment.
# Does nothing when MOAT_BUILD_TESTS is OFF (e.g. a fuzz-only build still reads tests/unit).

# MOAT_TEST_CODE_FLAGS: compile options for the test executables' own sources only; the code
# under test keeps the preset's flags. The asan and aarch64 presets set -O0: the tests' sources
# (GoogleTest's macros expand to a lot of code) were a third of the asan build's compile time,
# at -O0 they take 28% less and the suite runs no slower, and what the tests check is compiled
# into the libraries with the preset's optimisation.
set(MOAT_TEST_CODE_FLAGS "" CACHE STRING "Extra compile options for test executables' own sources")

# tests/support: header-only helpers (support/shared_data.hpp) for every test target.
if(NOT TARGET moat_test_support)
    add_library(moat_test_support INTERFACE)
    target_include_directories(moat_test_support INTERFACE "${PROJECT_SOURCE_DIR}/tests")
    # Fallback when a test binary is run by hand without MOAT_SHARED_DIR in its environment.
    target_compile_definitions(moat_test_support INTERFACE
        MOAT_SHARED_DIR_DEFAULT="${MOAT_SHARED_DIR}")
endif()

function(moat_add_test)
    if(NOT MOAT_BUILD_TESTS)
        return()
    endif()
    cmake_parse_arguments(PARSE_ARGV 0 ARG "" "NAME" "SOURCES;LIBS;LABELS")
    if(NOT ARG_NAME)
        list(POP_FRONT ARG_UNPARSED_ARGUMENTS ARG_NAME)
    endif()
    if(NOT ARG_NAME OR NOT ARG_SOURCES)
        message(FATAL_ERROR "moat_add_test(NAME <exe> SOURCES <file>... [LIBS <target>...])")
    endif()
    if(ARG_UNPARSED_ARGUMENTS)
        message(FATAL_ERROR "moat_add_test(${ARG_NAME}): unexpected ${ARG_UNPARSED_ARGUMENTS}")
    endif()

    add_executable(${ARG_NAME} ${ARG_SOURCES})
    target_link_libraries(${ARG_NAME} PRIVATE ${ARG_LIBS} moat_test_support
        GTest::gmock GTest::gtest_main)
    moat_target_warnings(${ARG_NAME})
    if(MOAT_TEST_CODE_FLAGS)
        separate_arguments(_test_code_flags UNIX_COMMAND "${MOAT_TEST_CODE_FLAGS}")
        target_compile_options(${ARG_NAME} PRIVATE ${_test_code_flags})
    endif()

    set(_props ENVIRONMENT "MOAT_SHARED_DIR=${MOAT_SHARED_DIR}")
    if(ARG_LABELS)
        list(APPEND _props LABELS "${ARG_LABELS}")
    endif()
    # PRE_TEST: the binary is listed when ctest runs, not at build time, so builds under qemu
    # or sanitizers do not execute anything.
    gtest_discover_tests(${ARG_NAME}
        DISCOVERY_TIMEOUT 120
        DISCOVERY_MODE PRE_TEST
        PROPERTIES ${_props})
endfunction()
