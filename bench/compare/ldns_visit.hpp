// The parse visit (bench/visit/visit_stats.hpp) and the build operation with ldns 1.8.
//
// Parsing is ldns_wire2pkt, which copies every record into its own ldns_rr (owner and RDATA
// names decompressed into separate ldns_rdf allocations); the packet is freed after each visit.
// ldns takes the OPT record out of the additional section (its fields become ldns_pkt_edns_*,
// and ARCOUNT is lowered by one) and does the same with TSIG (ldns_pkt_tsig). The visit puts
// them back where the RFCs require them and where they are in every message we compare: OPT as
// the last record of the additional section, TSIG after it. The header flags are rebuilt from
// ldns's flag accessors.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "visit_stats.hpp"

namespace moat::bench::ldns {

/// Parses `msg` with ldns_wire2pkt and visits all of it; false when ldns rejects the message or
/// a record does not have its type's layout.
bool visit_message(VisitStats& s, std::span<const std::uint8_t> msg) noexcept;

/// ldns_wire2pkt's verdict on `msg` as text ("OK" when accepted), for test reports.
std::string parse_status(std::span<const std::uint8_t> msg);

/// The build operation: a packet parsed beforehand (ldns_wire2pkt), written with
/// ldns_pkt2buffer_wire (full name compression) into one reused, cleared ldns_buffer.
class Builder {
public:
    /// Null when ldns cannot parse `msg`.
    static std::unique_ptr<Builder> prepare(std::span<const std::uint8_t> msg);
    ~Builder();
    Builder(const Builder&) = delete;
    Builder& operator=(const Builder&) = delete;

    /// Writes the message again; returns its size, 0 on error.
    std::size_t build() noexcept;
    /// The last message built.
    [[nodiscard]] std::span<const std::uint8_t> output() const noexcept;

    struct Impl;

private:
    explicit Builder(std::unique_ptr<Impl> impl) noexcept;
    std::unique_ptr<Impl> impl_;
};

}  // namespace moat::bench::ldns
