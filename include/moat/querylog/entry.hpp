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
    /// User-provided, so that making one (`optional::emplace()`, `vector::resize()`) runs the
    /// member initialisers only: with the implicit constructor, value-initialisation zeroes all
    /// 560 octets first, the texts' unused room included, once per logged query.
    // NOLINTNEXTLINE(modernize-use-equals-default)
    Entry() noexcept {}

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

/// An entry's texts, in the order EntryFields counts them: name, upstream, list, pattern.
[[nodiscard]] inline std::array<std::string_view, 4> texts_of(const Entry& e) noexcept {
    return {e.qname.view(), e.upstream.view(), e.list.view(), e.pattern.view()};
}

/// An entry without its texts, and their lengths: how the queue (entry_queue.hpp) and the
/// writer's batch (batch.hpp) keep an entry, its texts stored apart, back to back.
struct EntryFields {
    std::int64_t time_us;
    IpAddress client;
    std::uint32_t latency_us;
    std::uint32_t line;
    std::uint16_t qtype;
    std::uint16_t ede;
    std::uint8_t rcode;
    const char* outcome;
    const char* transport;
    std::array<std::uint8_t, 4> lengths;  ///< of texts_of(): each at most 253

    [[nodiscard]] static EntryFields of(const Entry& e) noexcept {
        const auto texts = texts_of(e);
        return {
            e.time_us,
            e.client,
            e.latency_us,
            e.line,
            e.qtype,
            e.ede,
            e.rcode,
            e.outcome,
            e.transport,
            {static_cast<std::uint8_t>(texts[0].size()), static_cast<std::uint8_t>(texts[1].size()),
             static_cast<std::uint8_t>(texts[2].size()),
             static_cast<std::uint8_t>(texts[3].size())}};
    }
    /// Sets the fields of `e`; its texts are left as they are.
    void restore(Entry& e) const noexcept {
        e.time_us = time_us;
        e.client = client;
        e.latency_us = latency_us;
        e.line = line;
        e.qtype = qtype;
        e.ede = ede;
        e.rcode = rcode;
        e.outcome = outcome;
        e.transport = transport;
    }
    /// The bytes of all the texts together.
    [[nodiscard]] std::size_t text_bytes() const noexcept {
        return std::size_t{lengths[0]} + lengths[1] + lengths[2] + lengths[3];
    }
};

}  // namespace moat::querylog
