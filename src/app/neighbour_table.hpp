// The kernel's neighbour table (ARP for IPv4, NDP for IPv6): client address → MAC address, for
// groups that name devices by MAC (their IP address may change with DHCP).
//
// Read with one netlink dump (RTM_GETNEIGH) into a sorted vector, on the event loop every
// `kRefresh` while some group names a MAC; lookups on the query path are a binary search and
// never block. A device unknown to the kernel yet belongs to the default group until the next
// refresh after its first exchange with this host.
#pragma once

#include <asio/io_context.hpp>
#include <asio/steady_timer.hpp>
#include <chrono>
#include <optional>
#include <utility>
#include <vector>

#include "moat/core/ip.hpp"
#include "moat/core/mac.hpp"
#include "moat/engine/options.hpp"

namespace moat::app {

/// One dump of the kernel's neighbour table (both families); empty when netlink fails.
[[nodiscard]] std::vector<std::pair<IpAddress, MacAddress>> read_neighbours();

class NeighbourTable final : public engine::NeighbourLookup {
public:
    static constexpr std::chrono::seconds kRefresh{10};

    explicit NeighbourTable(asio::io_context& io) : timer_(io) {}

    /// Reads the table now and every kRefresh after; stop() ends it.
    void start();
    void stop() { timer_.cancel(); }

    [[nodiscard]] std::optional<MacAddress> mac_of(const IpAddress& ip) const noexcept override;

private:
    void refresh();

    asio::steady_timer timer_;
    std::vector<std::pair<IpAddress, MacAddress>> entries_;  ///< sorted by address
};

}  // namespace moat::app
