// Oracle failures in fuzz targets: print what broke and abort, so libFuzzer (or the replay main
// under ctest) reports the input.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <string>

namespace moat::fuzz {

[[noreturn]] inline void fail(const char* what, const std::string& detail = {}) {
    std::fprintf(stderr, "fuzz oracle failed: %s%s%s\n", what, detail.empty() ? "" : ": ",
                 detail.c_str());
    std::abort();
}

}  // namespace moat::fuzz

#define MOAT_FUZZ_CHECK(cond, ...)                                \
    do {                                                          \
        if (!(cond)) {                                            \
            ::moat::fuzz::fail(#cond __VA_OPT__(, ) __VA_ARGS__); \
        }                                                         \
    } while (false)
