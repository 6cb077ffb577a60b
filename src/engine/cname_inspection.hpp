// CNAME inspection: trackers hide behind first-party names ("metrics.shop.example CNAME
// shop.tracker-vendor.example"), so an upstream answer whose CNAME chain leads into a blocked
// name is blocked too, as Pi-hole's deep CNAME inspection and AdGuard Home do.
#pragma once

#include <cstdint>
#include <span>

#include "moat/filter/snapshot.hpp"

namespace moat::engine {

/// The verdict of the first CNAME target in the answer section of `answer` that `snapshot`
/// blocks (with the client group's `selection` of lists; null: every list); Action::none when no
/// target is blocked (or the answer does not parse). Allocation-free.
[[nodiscard]] filter::Verdict blocked_cname_target(
    std::span<const std::uint8_t> answer, const filter::Snapshot& snapshot,
    const filter::ListSelection* selection = nullptr) noexcept;

}  // namespace moat::engine
