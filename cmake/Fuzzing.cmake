# Fuzz targets. Included from the top-level CMakeLists.txt when tests or fuzzing are on.
#
#   moat_add_fuzz_target(NAME fuzz_<what> SOURCES <file>... [LIBS <target>...]
#                        [CORPUS <dir>...] [SHARED_WIRE])
#
# A fuzz target is a file defining `extern "C" int LLVMFuzzerTestOneInput(const uint8_t*, size_t)`
# (and optionally LLVMFuzzerInitialize). Its seed corpus is, in this order:
#   tests/fuzz/corpus/<name>/ (when it exists), the CORPUS dirs, and with SHARED_WIRE the real DNS
#   messages in ${MOAT_SHARED_DIR}/data/wire/{extracted,c-ares-fuzzinput,knot-fuzz}.
#
# MOAT_BUILD_FUZZ=ON (fuzz preset, clang): a libFuzzer binary (-fsanitize=fuzzer); ctest runs it
#   once over its seeds (-runs=0); scripts/fuzz.sh fuzzes it.
# MOAT_FUZZ_REPLAY=ON (every other preset with tests): the same source linked with a replay main
#   (tests/support/fuzz_replay_main.cpp); ctest test fuzz_replay.<name> feeds it every seed file,
#   so the corpus is checked under gcc, ASan/UBSan and qemu-aarch64 too.
# Either way <binary dir>/<name>.seeds lists the seed dirs, one per line, for scripts/fuzz.sh.

set(MOAT_SHARED_WIRE_SEEDS
    "${MOAT_SHARED_DIR}/data/wire/extracted"
    "${MOAT_SHARED_DIR}/data/wire/c-ares-fuzzinput"
    "${MOAT_SHARED_DIR}/data/wire/knot-fuzz")

if(MOAT_FUZZ_REPLAY AND NOT TARGET moat_fuzz_replay_main)
    add_library(moat_fuzz_replay_main STATIC
        "${PROJECT_SOURCE_DIR}/tests/support/fuzz_replay_main.cpp")
    target_compile_features(moat_fuzz_replay_main PRIVATE cxx_std_20)
    moat_target_warnings(moat_fuzz_replay_main)
endif()

function(moat_add_fuzz_target)
    cmake_parse_arguments(PARSE_ARGV 0 ARG "SHARED_WIRE" "NAME" "SOURCES;LIBS;CORPUS")
    if(NOT ARG_NAME)
        list(POP_FRONT ARG_UNPARSED_ARGUMENTS ARG_NAME)
    endif()
    if(NOT ARG_NAME OR NOT ARG_SOURCES)
        message(FATAL_ERROR "moat_add_fuzz_target(NAME fuzz_<what> SOURCES <file>... ...)")
    endif()
    if(NOT ARG_NAME MATCHES "^fuzz_[a-z0-9_]+$")
        message(FATAL_ERROR "fuzz target '${ARG_NAME}': name it fuzz_<what> (scripts/fuzz.sh "
            "finds targets by that prefix)")
    endif()
    if(NOT MOAT_BUILD_FUZZ AND NOT MOAT_FUZZ_REPLAY)
        return()
    endif()

    set(_seeds "")
    if(IS_DIRECTORY "${CMAKE_CURRENT_SOURCE_DIR}/corpus/${ARG_NAME}")
        list(APPEND _seeds "${CMAKE_CURRENT_SOURCE_DIR}/corpus/${ARG_NAME}")
    endif()
    list(APPEND _seeds ${ARG_CORPUS})
    if(ARG_SHARED_WIRE)
        list(APPEND _seeds ${MOAT_SHARED_WIRE_SEEDS})
    endif()
    list(JOIN _seeds "\n" _seed_lines)
    file(WRITE "${CMAKE_CURRENT_BINARY_DIR}/${ARG_NAME}.seeds" "${_seed_lines}\n")

    add_executable(${ARG_NAME} ${ARG_SOURCES})
    target_link_libraries(${ARG_NAME} PRIVATE ${ARG_LIBS})
    moat_target_warnings(${ARG_NAME})

    if(MOAT_BUILD_FUZZ)
        target_link_options(${ARG_NAME} PRIVATE -fsanitize=fuzzer)
        # The fuzz preset builds only these (and the libraries they link), not the whole tree.
        if(NOT TARGET moat_fuzz_targets)
            add_custom_target(moat_fuzz_targets)
        endif()
        add_dependencies(moat_fuzz_targets ${ARG_NAME})
        # Replay the seeds once; the first (empty) dir takes anything libFuzzer would write.
        set(_existing "")
        foreach(_d IN LISTS _seeds)
            if(IS_DIRECTORY "${_d}")
                list(APPEND _existing "${_d}")
            endif()
        endforeach()
        set(_out "${CMAKE_CURRENT_BINARY_DIR}/${ARG_NAME}.ctest-corpus")
        file(MAKE_DIRECTORY "${_out}")
        add_test(NAME fuzz_seeds.${ARG_NAME}
            COMMAND ${ARG_NAME} -runs=0 -timeout=10 -rss_limit_mb=2048 "${_out}" ${_existing})
        set_tests_properties(fuzz_seeds.${ARG_NAME} PROPERTIES LABELS fuzz)
    else()
        target_link_libraries(${ARG_NAME} PRIVATE moat_fuzz_replay_main)
        add_test(NAME fuzz_replay.${ARG_NAME} COMMAND ${ARG_NAME} ${_seeds})
        # 77: every seed dir was missing and MOAT_REQUIRE_SHARED is not set.
        set_tests_properties(fuzz_replay.${ARG_NAME} PROPERTIES
            SKIP_RETURN_CODE 77
            LABELS fuzz
            ENVIRONMENT "MOAT_SHARED_DIR=${MOAT_SHARED_DIR}")
    endif()
endfunction()
