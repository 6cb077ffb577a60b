// One line of the query log as the query path hands it over: a fixed-size value with no heap
// memory, so the event loop can copy it into the queue (entry_queue.hpp) without allocating.
// Texts longer than their field are cut at the field's size; a DNS name (at most 253 characters
// in text) always fits.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "moat/core/ip.hpp"

namespace moat::querylog {

/// A string of at most N - 1 bytes stored inline.
template <std::size_t N>
class FixedText {
public:
    static_assert(N > 1 && N <= 256, "the length is kept in one byte");
    void assign(std::string_view text) noexcept {
        size_ = static_cast<std::uint8_t>(std::min(text.size(), N - 1));
        std::copy_n(text.data(), size_, data_.begin());
    }
    [[nodiscard]] std::string_view view() const noexcept { return {data_.data(), size_}; }
    [[nodiscard]] bool empty() const noexcept { return size_ == 0; }

private:
    std::array<char, N - 1> data_;  // not zeroed: only the first size_ bytes are ever read
    std::uint8_t size_ = 0;
};

inline constexpr std::uint16_t kNoEde = 0xFFFF;

struct Entry {
    std::int64_t time_us = 0;  ///< when the query arrived, microseconds since the Unix epoch
    IpAddress client;
    std::uint32_t latency_us = 0;  ///< from the query's arrival to its answer
    std::uint16_t qtype = 0;
    std::uint16_t ede = kNoEde;  ///< the Extended DNS Error code of the answer, if any
    std::uint8_t rcode = 0;
    /// Static texts (string literals): what happened ("blocked", "cached", ...) and how the
    /// query came ("udp", "tcp"). Never owned, never freed.
    const char* outcome = "";
    const char* transport = "udp";
    FixedText<254> qname;    ///< lower case, no trailing dot; "." for the root
    FixedText<48> upstream;  ///< "ADDR:PORT" of the resolver that answered; empty: none
    /// The list rule behind a blocked or allowed answer: the list's name and the rule's line
    /// (0: not known), or its regex pattern.
    FixedText<64> list;
    std::uint32_t line = 0;
    FixedText<128> pattern;
};

}  // namespace moat::querylog
