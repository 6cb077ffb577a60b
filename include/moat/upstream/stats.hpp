// Counters of the upstream client. Relaxed atomics: written on the event loop, read anywhere.
#pragma once

#include <atomic>
#include <cstdint>

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

}  // namespace moat::upstream
