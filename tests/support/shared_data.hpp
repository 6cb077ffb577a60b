// Locating the shared test data (../shared beside the checkout: blocklists, queries, real DNS
// messages) from a test.
//
// The directory comes from the MOAT_SHARED_DIR environment variable (ctest sets it for every
// test registered with moat_add_test), else from the configure-time default compiled in as
// MOAT_SHARED_DIR_DEFAULT. When the data is missing a test skips, unless MOAT_REQUIRE_SHARED is
// set to anything but "" or "0" (CI sets it): then it fails, so CI never passes on skipped data.
//
//   TEST(Wire, ParsesEveryExtractedMessage) {
//       MOAT_SHARED_PATH_OR_SKIP(dir, "data/wire/extracted");
//       for (const auto& entry : std::filesystem::directory_iterator(dir)) { ... }
//   }
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <string_view>
#include <system_error>

namespace moat::test {

/// The shared data directory; empty when neither the environment nor the build names one.
inline std::filesystem::path shared_dir() {
    if (const char* env = std::getenv("MOAT_SHARED_DIR"); env != nullptr && *env != '\0') {
        return env;
    }
#ifdef MOAT_SHARED_DIR_DEFAULT
    return MOAT_SHARED_DIR_DEFAULT;
#else
    return {};
#endif
}

/// True when missing shared data must fail a test instead of skipping it.
inline bool shared_required() {
    const char* v = std::getenv("MOAT_REQUIRE_SHARED");
    return v != nullptr && *v != '\0' && std::string_view(v) != "0";
}

/// `relative` below the shared directory, or an empty path when it does not exist.
inline std::filesystem::path shared_path(std::string_view relative) {
    const std::filesystem::path dir = shared_dir();
    if (dir.empty()) {
        return {};
    }
    std::filesystem::path p = dir / relative;
    std::error_code ec;
    return std::filesystem::exists(p, ec) ? p : std::filesystem::path{};
}

}  // namespace moat::test

/// Declares `const std::filesystem::path var` = shared data path `relative`, or skips the test
/// (fails it under MOAT_REQUIRE_SHARED) when that path does not exist.
#define MOAT_SHARED_PATH_OR_SKIP(var, relative)                                                  \
    const std::filesystem::path var = ::moat::test::shared_path(relative);                       \
    if (var.empty()) {                                                                           \
        if (::moat::test::shared_required()) {                                                   \
            FAIL() << "shared data " << (relative) << " missing under '"                         \
                   << ::moat::test::shared_dir().string() << "' and MOAT_REQUIRE_SHARED is set"; \
        }                                                                                        \
        GTEST_SKIP() << "shared data " << (relative) << " missing under '"                       \
                     << ::moat::test::shared_dir().string() << "' (set MOAT_SHARED_DIR)";        \
    }                                                                                            \
    static_assert(true, "")
