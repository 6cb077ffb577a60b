// What the query path counts for /metrics: queries by outcome, type, rcode and transport, the
// time to answer, and queries waiting for an upstream. Written only by the event loop's thread
// (moat/metrics/instruments.hpp); read by the metrics page at any time.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

#include "moat/engine/client.hpp"
#include "moat/engine/stats.hpp"
#include "moat/metrics/instruments.hpp"

namespace moat::server {

struct QueryMetrics {
    /// The types counted by name; every other type is counted as "other".
    static constexpr std::array<std::uint16_t, 12> kTypes{1,  28, 65, 64, 12, 16,
                                                          33, 15, 5,  2,  6,  255};

    std::array<metrics::Counter, engine::kOutcomeCount> by_outcome;
    std::array<metrics::Counter, kTypes.size() + 1> by_type;
    std::array<metrics::Counter, 16> by_rcode;  ///< answers only (not drops)
    std::array<metrics::Counter, engine::kTransportCount> by_transport;
    metrics::LatencyHistogram duration;
    metrics::PeakGauge in_flight;

    void count(engine::Outcome outcome, std::uint16_t qtype, engine::Transport transport,
               const std::uint8_t* answer_header, std::uint32_t latency_us) noexcept {
        count_untimed(outcome, qtype, transport, answer_header);
        duration.observe(latency_us);
    }
    /// count() without the duration, which the caller observes later (for a whole batch).
    void count_untimed(engine::Outcome outcome, std::uint16_t qtype, engine::Transport transport,
                       const std::uint8_t* answer_header) noexcept {
        by_outcome[static_cast<std::size_t>(outcome)].add();
        std::size_t t = 0;
        while (t < kTypes.size() && kTypes[t] != qtype) {
            ++t;
        }
        by_type[t].add();
        if (answer_header != nullptr) {
            by_rcode[answer_header[3] & 0x0FU].add();
        }
        by_transport[static_cast<std::size_t>(transport)].add();
    }
};

}  // namespace moat::server
