# Third-party packages, all from Debian (scripts/setup.sh installs them). Found once here so
# module CMakeLists only link targets. Header-only packages are architecture-independent and
# are found in the aarch64 cross build as well (see cmake/toolchains/aarch64-linux-gnu.cmake).

# tl::expected (libexpected-dev, CC0): the error type of every module.
find_package(tl-expected CONFIG REQUIRED)

find_package(Threads REQUIRED)

if(MOAT_BUILD_TESTS)
    # GTest::gtest, GTest::gtest_main, GTest::gmock (libgtest-dev, libgmock-dev).
    find_package(GTest REQUIRED)
endif()

set(MOAT_HAVE_BENCHMARK OFF)
if(MOAT_BUILD_BENCH)
    # benchmark::benchmark, benchmark::benchmark_main (libbenchmark-dev).
    find_package(benchmark CONFIG QUIET)
    if(benchmark_FOUND)
        set(MOAT_HAVE_BENCHMARK ON)
    endif()
endif()

# Asio, standalone (libasio-dev, header-only, no CMake package): the event loop of the
# upstream, server and app modules (layer 4 and up; cmake/check_layering.py keeps it there).
find_path(MOAT_ASIO_INCLUDE_DIR asio.hpp REQUIRED)
if(NOT TARGET moat::asio)
    add_library(moat::asio INTERFACE IMPORTED)
    target_include_directories(moat::asio SYSTEM INTERFACE ${MOAT_ASIO_INCLUDE_DIR})
    # ASIO_DISABLE_STD_ALIGNED_ALLOC: Asio picks aligned_alloc or operator new for its handler
    # memory from a libstdc++ macro that is defined only once a standard header came first, so
    # translation units that include Asio first disagree with the others and free memory with
    # the wrong function (ASan: alloc-dealloc-mismatch). One choice for every unit: operator new.
    target_compile_definitions(moat::asio INTERFACE ASIO_STANDALONE ASIO_NO_DEPRECATED
        ASIO_DISABLE_STD_ALIGNED_ALLOC)
    # GCC 12 at -O2 reports "potential null pointer dereference" inside Asio's scheduler
    # (detail/impl/scheduler.ipp) after inlining, in code we do not own; the check stays on for
    # every target that does not include Asio.
    if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
        target_compile_options(moat::asio INTERFACE -Wno-null-dereference)
    endif()
    target_link_libraries(moat::asio INTERFACE Threads::Threads)
endif()

# spdlog (libspdlog-dev, with Debian's external fmt; arm64 builds need libspdlog-dev:arm64 and
# libfmt-dev:arm64) and CLI11 (libcli11-dev, header-only): logging and the command line, app only.
find_package(spdlog CONFIG REQUIRED)
find_package(CLI11 CONFIG REQUIRED)

# MOAT_STATIC_DEPS (ON in the presets that ship: release, aarch64, pi5): one self-contained
# binary to copy to a Pi. RE2, SQLite, libargon2 and nghttp2 are linked from the static archives
# Debian ships in their -dev packages (lib*.a), so the package needs none of their runtime
# packages and no soname transition can break it. Dynamic on purpose: OpenSSL (libssl3), which
# terminates DoT/DoH and verifies upstream certificates, and libcurl (libcurl4, dlopen()ed by the
# list fetcher, see src/lists) parse hostile input and get the most security fixes; linked
# dynamically, Debian's security updates reach dnsmoat without a rebuild. spdlog and fmt stay
# dynamic too: Debian ships no static archive of them.
option(MOAT_STATIC_DEPS "Link RE2, SQLite, libargon2 and nghttp2 from their static archives" OFF)

# moat_find_static_archive(<var> <name> [<dir>...]): <var> = path of lib<name>.a for the target
# architecture (the toolchain file's search paths pick /usr/lib/aarch64-linux-gnu when crossing).
function(moat_find_static_archive var name)
    find_library(${var} NAMES lib${name}.a HINTS ${ARGN})
    if(NOT ${var})
        message(FATAL_ERROR "MOAT_STATIC_DEPS: lib${name}.a not found; Debian ships it in the "
            "library's -dev package (scripts/setup.sh), or configure with -DMOAT_STATIC_DEPS=OFF")
    endif()
endfunction()

# moat_link_package(<target> <PREFIX> <archive name> [<static deps>...]): <target> links the
# pkg-config module found as <PREFIX>: its shared library, or with MOAT_STATIC_DEPS its static
# archive plus the libraries that archive needs (listed by hand: Debian's .pc files name more,
# e.g. -lz for SQLite, than the archives use).
function(moat_link_package target prefix archive)
    if(MOAT_STATIC_DEPS)
        moat_find_static_archive(${prefix}_ARCHIVE ${archive} ${${prefix}_LIBRARY_DIRS})
        target_include_directories(${target} SYSTEM INTERFACE ${${prefix}_INCLUDE_DIRS})
        target_compile_options(${target} INTERFACE ${${prefix}_CFLAGS_OTHER})
        target_link_libraries(${target} INTERFACE "${${prefix}_ARCHIVE}" ${ARGN})
    else()
        target_link_libraries(${target} INTERFACE PkgConfig::${prefix})
    endif()
endfunction()

# RE2 (libre2-dev; libre2-dev:arm64 for the aarch64 preset, whose toolchain file points
# pkg-config at the target's .pc files): the filter module's regex rules, linear-time matching.
find_package(PkgConfig REQUIRED)
pkg_check_modules(MOAT_RE2 REQUIRED IMPORTED_TARGET re2)
if(NOT TARGET moat::re2)
    add_library(moat::re2 INTERFACE IMPORTED)
    moat_link_package(moat::re2 MOAT_RE2 re2 Threads::Threads)
endif()

# Argon2id (libargon2-dev; libargon2-dev:arm64 for the aarch64 preset): the API's password and
# token hashes.
pkg_check_modules(MOAT_ARGON2 REQUIRED IMPORTED_TARGET libargon2)
if(NOT TARGET moat::argon2)
    add_library(moat::argon2 INTERFACE IMPORTED)
    moat_link_package(moat::argon2 MOAT_ARGON2 argon2 Threads::Threads)
endif()

# config module: nlohmann/json (nlohmann-json3-dev, header-only, architecture-independent
# CMake package) and toml++ (libtomlplusplus-dev). Debian's toml++ CMake package points at a
# compiled, architecture-specific libtomlplusplus.so; we use the header in its default
# header-only mode instead (TOML_HEADER_ONLY=1), so the aarch64 cross build needs no :arm64
# toml++ package and the library's ABI never matters.
find_package(nlohmann_json CONFIG REQUIRED)
find_path(MOAT_TOMLPLUSPLUS_INCLUDE_DIR toml++/toml.h REQUIRED)
if(NOT TARGET moat::tomlplusplus)
    add_library(moat::tomlplusplus INTERFACE IMPORTED)
    target_include_directories(moat::tomlplusplus SYSTEM INTERFACE
        ${MOAT_TOMLPLUSPLUS_INCLUDE_DIR})
    target_compile_definitions(moat::tomlplusplus INTERFACE TOML_HEADER_ONLY=1)
endif()

# OpenSSL (libssl-dev; libssl-dev:arm64 for the aarch64 preset): TLS for the DoT and DoH
# listeners through asio::ssl. Found through pkg-config so the cross build picks the target's
# libraries.
pkg_check_modules(MOAT_OPENSSL REQUIRED IMPORTED_TARGET openssl)
if(NOT TARGET moat::openssl)
    add_library(moat::openssl INTERFACE IMPORTED)
    target_link_libraries(moat::openssl INTERFACE PkgConfig::MOAT_OPENSSL)
endif()

# MOAT_ASIO_SEPARATE (ON in the presets that only test: dev, asan, tsan, fuzz): Asio's
# non-template code (the reactor, the scheduler, socket and SSL operations) compiled once, in
# moat_asio_impl, instead of in each of the 40-odd files that include Asio. That saves about a
# third of those files' compile time under the sanitizers (4 s each). The builds that ship
# (release, aarch64, pi5) keep Asio header-only, so the event loop's functions can be inlined
# into the code that calls them.
option(MOAT_ASIO_SEPARATE "Compile Asio's non-template code once (ASIO_SEPARATE_COMPILATION)" OFF)
if(MOAT_ASIO_SEPARATE AND NOT TARGET moat_asio_impl)
    file(GENERATE OUTPUT "${PROJECT_BINARY_DIR}/asio_impl.cpp" CONTENT [[
// Generated by cmake/Dependencies.cmake (MOAT_ASIO_SEPARATE): Asio compiled once.
#include <asio/impl/src.hpp>
#include <asio/ssl/impl/src.hpp>
]])
    set_property(TARGET moat::asio APPEND PROPERTY
        INTERFACE_COMPILE_DEFINITIONS ASIO_SEPARATE_COMPILATION)
    add_library(moat_asio_impl STATIC "${PROJECT_BINARY_DIR}/asio_impl.cpp")
    target_include_directories(moat_asio_impl SYSTEM PRIVATE ${MOAT_ASIO_INCLUDE_DIR})
    target_compile_definitions(moat_asio_impl PRIVATE
        $<TARGET_PROPERTY:moat::asio,INTERFACE_COMPILE_DEFINITIONS>)
    target_compile_options(moat_asio_impl PRIVATE
        $<TARGET_PROPERTY:moat::asio,INTERFACE_COMPILE_OPTIONS>)
    target_link_libraries(moat_asio_impl PUBLIC Threads::Threads moat::openssl)
    set_property(TARGET moat::asio APPEND PROPERTY INTERFACE_LINK_LIBRARIES moat_asio_impl)
endif()

# nghttp2 (libnghttp2-dev; libnghttp2-dev:arm64 for the aarch64 preset): HTTP/2 framing for the
# DoH listener. Bytes in, bytes out: the http module drives it without sockets.
pkg_check_modules(MOAT_NGHTTP2 REQUIRED IMPORTED_TARGET libnghttp2)
if(NOT TARGET moat::nghttp2)
    add_library(moat::nghttp2 INTERFACE IMPORTED)
    moat_link_package(moat::nghttp2 MOAT_NGHTTP2 nghttp2)
endif()

# SQLite (libsqlite3-dev; libsqlite3-dev:arm64 for the aarch64 preset): the query log. The
# querylog module and its tests find it themselves (SQLite::SQLite3); found here first only to
# point that target at libsqlite3.a, which FindSQLite3 then keeps.
if(MOAT_STATIC_DEPS)
    find_package(SQLite3 REQUIRED)
    moat_find_static_archive(MOAT_SQLITE3_ARCHIVE sqlite3)
    set_target_properties(SQLite::SQLite3 PROPERTIES
        IMPORTED_LOCATION "${MOAT_SQLITE3_ARCHIVE}"
        INTERFACE_LINK_LIBRARIES "m;${CMAKE_DL_LIBS};Threads::Threads")
endif()
