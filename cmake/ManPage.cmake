# The man page dnsmoat(8), generated from the Markdown in docs/ by cmake/markdown_to_man.py:
# docs/man/dnsmoat.8.md is its skeleton (NAME, DESCRIPTION, FILES, ...) and includes
# docs/cli.md (SYNOPSIS, COMMANDS, EXIT STATUS), docs/configuration.md (CONFIGURATION) and the
# "Signals" section of docs/daemon.md, so `man dnsmoat` says what the docs say.
#
#   include(ManPage)        (top-level CMakeLists.txt; python3 is a build dependency already)
#
# - ${CMAKE_BINARY_DIR}/dnsmoat.8, rebuilt when the script or any Markdown it reads changes;
#   target dnsmoat_manpage, part of `all`. MOAT_MANPAGE holds the path.
# - install(FILES) of dnsmoat.8.gz to ${CMAKE_INSTALL_MANDIR}/man8 (share/man/man8).
# - With MOAT_BUILD_TESTS (and not the fuzz build), three tests labelled `docs`
#   (cmake/check_docs.py): docs.manpage (groff -ww and `man -l` render the page without a
#   warning, and the text of every section is in it), docs.config_keys (every key the loader
#   accepts is in docs/configuration.md and every documented one exists, asked of the dnsmoat
#   binary itself) and docs.cli (docs/cli.md and daemon.md's synopsis against `--help`).
#   Rendering needs groff (Debian: groff-base); the binary runs under
#   CMAKE_CROSSCOMPILING_EMULATOR in a cross build.
include_guard(GLOBAL)
include(GNUInstallDirs)

get_filename_component(MOAT_DOCS_ROOT "${CMAKE_CURRENT_LIST_DIR}/.." ABSOLUTE)
# Debian's interpreter first (as the integration tests use), whatever else is on PATH.
find_program(MOAT_PYTHON3 NAMES python3 HINTS /usr/bin REQUIRED)

set(MOAT_MANPAGE "${CMAKE_BINARY_DIR}/dnsmoat.8")
set(_moat_man_source "${MOAT_DOCS_ROOT}/docs/man/dnsmoat.8.md")
# The depfile the script writes names every file it read; these are listed too, so the first
# build (before any depfile exists) and generators that ignore depfiles see them.
set(_moat_man_inputs
    "${MOAT_DOCS_ROOT}/cmake/markdown_to_man.py"
    "${_moat_man_source}"
    "${MOAT_DOCS_ROOT}/docs/cli.md"
    "${MOAT_DOCS_ROOT}/docs/configuration.md"
    "${MOAT_DOCS_ROOT}/docs/daemon.md")

add_custom_command(
    OUTPUT "${MOAT_MANPAGE}"
    COMMAND "${MOAT_PYTHON3}" "${MOAT_DOCS_ROOT}/cmake/markdown_to_man.py" "${_moat_man_source}"
            --output "${MOAT_MANPAGE}" --version "${PROJECT_VERSION}"
            --depfile "${CMAKE_BINARY_DIR}/dnsmoat.8.d"
    DEPENDS ${_moat_man_inputs}
    DEPFILE "${CMAKE_BINARY_DIR}/dnsmoat.8.d"
    COMMENT "Generating the man page dnsmoat.8 from docs/"
    VERBATIM)
# Installed compressed, as Debian policy asks (gzip -9n: no name, no time stamp inside, so the
# same page gives the same bytes).
add_custom_command(
    OUTPUT "${MOAT_MANPAGE}.gz"
    COMMAND "${MOAT_PYTHON3}" -c
            "import gzip, sys; open(sys.argv[2], 'wb').write(gzip.compress(open(sys.argv[1], 'rb').read(), 9, mtime=0))"
            "${MOAT_MANPAGE}" "${MOAT_MANPAGE}.gz"
    DEPENDS "${MOAT_MANPAGE}"
    COMMENT "Compressing dnsmoat.8"
    VERBATIM)
add_custom_target(dnsmoat_manpage ALL DEPENDS "${MOAT_MANPAGE}" "${MOAT_MANPAGE}.gz")

install(FILES "${MOAT_MANPAGE}.gz" DESTINATION "${CMAKE_INSTALL_MANDIR}/man8")

# The tests, at the end of the including directory: the dnsmoat target then exists, whether
# this file was included before or after add_subdirectory(src).
function(_moat_docs_tests)
    if(NOT MOAT_BUILD_TESTS OR MOAT_BUILD_FUZZ)
        return()
    endif()
    set(_check "${MOAT_DOCS_ROOT}/cmake/check_docs.py")
    add_test(NAME docs.manpage
        COMMAND "${MOAT_PYTHON3}" "${_check}" manpage
                --page "${MOAT_MANPAGE}" --source "${_moat_man_source}")
    set(_tests docs.manpage)
    if(TARGET dnsmoat)
        set(_emulator "")
        if(CMAKE_CROSSCOMPILING AND CMAKE_CROSSCOMPILING_EMULATOR)
            list(JOIN CMAKE_CROSSCOMPILING_EMULATOR " " _emulator)
        endif()
        add_test(NAME docs.config_keys
            COMMAND "${MOAT_PYTHON3}" "${_check}" config-keys
                    --dnsmoat "$<TARGET_FILE:dnsmoat>" "--emulator=${_emulator}"
                    --doc "${MOAT_DOCS_ROOT}/docs/configuration.md")
        add_test(NAME docs.cli
            COMMAND "${MOAT_PYTHON3}" "${_check}" cli
                    --dnsmoat "$<TARGET_FILE:dnsmoat>" "--emulator=${_emulator}"
                    --doc "${MOAT_DOCS_ROOT}/docs/cli.md"
                    --synopsis "${MOAT_DOCS_ROOT}/docs/daemon.md")
        list(APPEND _tests docs.config_keys docs.cli)
    else()
        message(WARNING "ManPage.cmake: no dnsmoat target; docs.config_keys and docs.cli skipped")
    endif()
    set_tests_properties(${_tests} PROPERTIES LABELS docs TIMEOUT 300)
endfunction()
cmake_language(DEFER CALL _moat_docs_tests)
