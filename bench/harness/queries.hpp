// Query inputs prepared before a timed loop: wire-form names and whole query messages, stored
// back to back in one buffer each, spelled with random upper-case letters (as DNS 0x20 clients
// and people do), so the code under test has to fold case as it would for real traffic.
//
// Both pools are filled, then finish()ed, then only read: views point into the pool's buffer,
// which must not move afterwards.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "domains.hpp"
#include "moat/wire/name.hpp"
#include "moat/wire/types.hpp"

namespace moat::bench {

/// The wire form of a valid lower-case dotted name, each letter upper-cased with probability
/// 1/4. Aborts the run on a name wire::Name rejects (a generator bug).
[[nodiscard]] wire::Name mixed_case_wire(std::string_view dotted, Rng& rng);

/// A name that a listed name blocks through its subtree rule: the name itself (half the time)
/// or one random label in front of it.
void blocked_query_name(std::string_view listed, DomainGenerator& gen, std::string& out);

/// Uncompressed wire names, each usable as a wire::NameView (what Snapshot::match takes).
class NamePool {
public:
    void add(std::string_view dotted, Rng& rng);
    /// Makes the views; call once after the last add().
    void finish();
    [[nodiscard]] wire::NameView operator[](std::size_t i) const noexcept { return views_[i]; }
    [[nodiscard]] std::size_t size() const noexcept { return views_.size(); }
    [[nodiscard]] std::size_t memory_bytes() const noexcept;

private:
    struct Meta {
        std::uint32_t start;
        std::uint8_t length;
        std::uint8_t labels;
    };
    std::vector<std::uint8_t> bytes_;
    std::vector<Meta> meta_;
    std::vector<wire::NameView> views_;
};

/// Query messages as a stub resolver sends them: RD set, one question, an EDNS OPT record
/// (1232-byte payload, DO clear), a random ID.
class QueryPool {
public:
    void add(std::string_view dotted, wire::RrType qtype, Rng& rng);
    [[nodiscard]] std::span<const std::uint8_t> operator[](std::size_t i) const noexcept {
        return std::span<const std::uint8_t>(bytes_).subspan(starts_[i],
                                                             starts_[i + 1] - starts_[i]);
    }
    [[nodiscard]] std::size_t size() const noexcept { return starts_.size() - 1; }
    [[nodiscard]] std::size_t memory_bytes() const noexcept {
        return bytes_.capacity() + starts_.capacity() * sizeof(std::uint32_t);
    }

private:
    std::vector<std::uint8_t> bytes_;
    std::vector<std::uint32_t> starts_{0};
};

/// The iteration order over a pool of `pool` entries for `iterations` iterations: every entry in
/// turn, reshuffled each pass, so consecutive runs of one entry cannot warm the caches.
[[nodiscard]] std::vector<std::uint32_t> visit_order(std::size_t pool, std::size_t iterations,
                                                     Rng& rng);

}  // namespace moat::bench
