// Tests that make threads fight over one lock cannot run under qemu-user: it emulates the arm64
// load-/store-exclusive pairs that glibc's mutex spins on, and with two threads contending on
// one cache line both keep failing (seen here: qemu 7.2 spinning at full CPU for minutes on a
// two-thread mutex test that takes milliseconds natively; and on 2026-12-03 even a program that
// only starts one idle thread and joins it, built with Debian's aarch64-linux-gnu-g++, spun
// until killed). The aarch64 test preset sets MOAT_EMULATOR; such tests skip there, saying why,
// and run natively and under the sanitizers. Tests that walk millions of inputs read fewer of them
// there (every fourth line of the real lists, say), as each says.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>

namespace moat::test {

/// The emulator the tests run under (MOAT_EMULATOR, e.g. "qemu-aarch64"), or null natively.
inline const char* emulator() {
    // Read at a test's start, before it makes any thread.
    const char* name = std::getenv("MOAT_EMULATOR");  // NOLINT(concurrency-mt-unsafe)
    return name != nullptr && *name != '\0' ? name : nullptr;
}

}  // namespace moat::test

#define MOAT_SKIP_CONTENDED_THREADS_UNDER_EMULATOR()                                          \
    do {                                                                                      \
        if (const char* moat_emulator = ::moat::test::emulator(); moat_emulator != nullptr) { \
            GTEST_SKIP() << "contended threads livelock under " << moat_emulator              \
                         << " (emulated exclusive loads); run natively and under ASan";       \
        }                                                                                     \
    } while (false)
