// What the query log keeps and for how long. The app fills it from the config's [querylog].
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "moat/core/ip.hpp"
#include "moat/querylog/entry.hpp"

namespace moat::querylog {

/// How much of each query is stored (the levels Pi-hole and AdGuard Home users know).
enum class Privacy : std::uint8_t {
    full,          ///< everything
    hide_domains,  ///< the name is stored as "hidden"
    hide_clients,  ///< every client is stored as 0.0.0.0
    anonymous,     ///< no rows at all; only the counters and statistics
};

struct LogOptions {
    std::filesystem::path path;  ///< the SQLite database file
    Privacy privacy = Privacy::full;
    /// Rows older than this are deleted.
    std::chrono::seconds retention{std::chrono::hours{24 * 90}};
    /// The database's pages in use are kept under this many bytes by deleting the oldest rows.
    std::uint64_t max_bytes = 256ULL << 20U;
    /// Names (and their subdomains) never logged: lower case, no trailing dot.
    std::vector<std::string> exclude_domains;
    /// Clients never logged.
    std::vector<Cidr> exclude_clients;
};

/// True when `qname` (lower case, no trailing dot) is `domain` or under it.
[[nodiscard]] bool in_domain(std::string_view qname, std::string_view domain) noexcept;

/// The entry as the privacy level and exclusions allow it to be stored; false: not at all.
[[nodiscard]] bool apply_privacy(const LogOptions& options, Entry& entry) noexcept;

}  // namespace moat::querylog
