// The wall clock as the query log stores time: microseconds since the Unix epoch.
#pragma once

#include <chrono>
#include <cstdint>

namespace moat::app {

inline std::int64_t unix_now_us() {
    return std::chrono::duration_cast<std::chrono::microseconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
}

}  // namespace moat::app
