// Data built into the binary at compile time (src/app/CMakeLists.txt generates it).
#pragma once

#include <string_view>

namespace moat::app {

/// config/blocklist.txt: the starter blocklist used when no config file exists.
[[nodiscard]] std::string_view embedded_blocklist() noexcept;
/// The project version ("0.1.0").
[[nodiscard]] std::string_view version() noexcept;

}  // namespace moat::app
