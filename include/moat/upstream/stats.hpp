// Counters of the upstream client. Relaxed atomics: written on the event loop, read anywhere.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>

namespace moat::upstream {

struct Stats {
    std::atomic<std::uint64_t> queries{0};       ///< forward() calls
    std::atomic<std::uint64_t> coalesced{0};     ///< calls that joined an identical query in flight
    std::atomic<std::uint64_t> sent{0};          ///< datagrams and TCP queries sent
    std::atomic<std::uint64_t> answered{0};      ///< queries that got a usable answer
    std::atomic<std::uint64_t> failed{0};        ///< queries for which every server failed
    std::atomic<std::uint64_t> timeouts{0};      ///< attempts that got no answer in time
    std::atomic<std::uint64_t> error_rcodes{0};  ///< SERVFAIL/REFUSED/NOTIMP/FORMERR answers
    std::atomic<std::uint64_t> ignored{0};       ///< datagrams from the wrong address or port, with
                                                 ///< the wrong ID or question, or unparsable
    std::atomic<std::uint64_t> tcp_retries{0};   ///< truncated UDP answers retried over TCP
    std::atomic<std::uint64_t> overloaded{0};    ///< failed at once: too many in flight

    static void bump(std::atomic<std::uint64_t>& c) noexcept {
        c.fetch_add(1, std::memory_order_relaxed);
    }
};

/// One server's attempts. Plain counters: written and read on the event loop only.
struct ServerCounts {
    std::uint64_t sent = 0;      ///< queries sent to it (UDP and TCP)
    std::uint64_t answered = 0;  ///< usable answers
    std::uint64_t errors = 0;    ///< error answers, send and TCP failures
    std::uint64_t timeouts = 0;  ///< attempts it did not answer in time
    std::uint64_t hedged = 0;    ///< times it was slow enough that the next server was asked too
};

/// What the forwarder knows of one server of one route, for /metrics and the API.
struct ServerReport {
    std::string address;    ///< "ADDR:PORT"
    std::size_t route = 0;  ///< 0: [upstream] servers; then conditional forwards, group upstreams
    std::chrono::microseconds srtt{0};  ///< smoothed round-trip time; 0: not measured yet
    unsigned consecutive_failures = 0;
    ServerCounts counts;
};

}  // namespace moat::upstream
