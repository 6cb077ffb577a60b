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
