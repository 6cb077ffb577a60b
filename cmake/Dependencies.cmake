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

# Later modules (add here, next to the module that first needs them):
#   asio (libasio-dev, header-only, no CMake package): find_path(ASIO_INCLUDE_DIR asio.hpp)
#     + an INTERFACE target moat::asio with ASIO_STANDALONE and ASIO_NO_DEPRECATED
#   find_package(spdlog CONFIG REQUIRED)          spdlog::spdlog
#   find_package(CLI11 CONFIG REQUIRED)           CLI11::CLI11
#   find_package(nlohmann_json CONFIG REQUIRED)   nlohmann_json::nlohmann_json
#   find_package(tomlplusplus CONFIG REQUIRED)    tomlplusplus::tomlplusplus
# Compiled or arch-specific ones (spdlog + fmt, toml++'s CMake package) also need their :arm64
# package in the aarch64 group of scripts/setup.sh for the cross build.

# RE2 (libre2-dev; libre2-dev:arm64 for the aarch64 preset, whose toolchain file points
# pkg-config at the target's .pc files): the filter module's regex rules, linear-time matching.
find_package(PkgConfig REQUIRED)
pkg_check_modules(MOAT_RE2 REQUIRED IMPORTED_TARGET re2)
if(NOT TARGET moat::re2)
    add_library(moat::re2 INTERFACE IMPORTED)
    target_link_libraries(moat::re2 INTERFACE PkgConfig::MOAT_RE2)
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
