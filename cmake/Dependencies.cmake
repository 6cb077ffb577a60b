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

# RE2 (libre2-dev; libre2-dev:arm64 for the aarch64 preset, whose toolchain file points
# pkg-config at the target's .pc files): the filter module's regex rules, linear-time matching.
find_package(PkgConfig REQUIRED)
pkg_check_modules(MOAT_RE2 REQUIRED IMPORTED_TARGET re2)
if(NOT TARGET moat::re2)
    add_library(moat::re2 INTERFACE IMPORTED)
    target_link_libraries(moat::re2 INTERFACE PkgConfig::MOAT_RE2)
endif()

# Argon2id (libargon2-dev; libargon2-dev:arm64 for the aarch64 preset): the API's password and
# token hashes.
pkg_check_modules(MOAT_ARGON2 REQUIRED IMPORTED_TARGET libargon2)
if(NOT TARGET moat::argon2)
    add_library(moat::argon2 INTERFACE IMPORTED)
    target_link_libraries(moat::argon2 INTERFACE PkgConfig::MOAT_ARGON2)
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

# nghttp2 (libnghttp2-dev; libnghttp2-dev:arm64 for the aarch64 preset): HTTP/2 framing for the
# DoH listener. Bytes in, bytes out: the http module drives it without sockets.
pkg_check_modules(MOAT_NGHTTP2 REQUIRED IMPORTED_TARGET libnghttp2)
if(NOT TARGET moat::nghttp2)
    add_library(moat::nghttp2 INTERFACE IMPORTED)
    target_link_libraries(moat::nghttp2 INTERFACE PkgConfig::MOAT_NGHTTP2)
endif()
