// What an insert needs of an answer's records, gathered one record at a time: the offset of each
// TTL (a hit rewrites them), the negative TTL an SOA in the authority section gives, how many
// answer records there are, and whether an OPT carries extended rcode bits.
//
// Cache::insert(key, answer) parses the answer and walks its records with one. A caller that
// walks them anyway, at the offsets they keep in the answer it inserts, can fill one and hand it
// over: the engine does while it copies an upstream's answer, which spares each insert a second
// parse and walk (docs/benchmarks.md).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "moat/wire/message_view.hpp"
#include "moat/wire/name_decoder.hpp"

namespace moat::cache {

class RecordWalk {
public:
    /// Starts again for another answer; the offsets' storage is kept.
    void clear() noexcept;

    /// Takes note of `rr`, which must stand at the same offsets in the answer to be inserted.
    /// `names` (the record range's suffix cache, or null) speeds up reading an SOA's names.
    /// False when an SOA does not read: the answer cannot be cached (malformed()).
    bool add(const wire::RecordView& rr, wire::SuffixCache* names);

    /// Offset of the TTL field of each record noted but OPT, in order.
    [[nodiscard]] std::span<const std::uint16_t> ttl_offsets() const noexcept {
        return ttl_offsets_;
    }
    /// The smallest min(SOA TTL, SOA MINIMUM) over the authority section's SOA records.
    [[nodiscard]] std::optional<std::uint32_t> soa_ttl() const noexcept { return soa_ttl_; }
    /// Records noted in the answer section (OPT aside).
    [[nodiscard]] std::size_t answers() const noexcept { return answers_; }
    /// An OPT noted carries upper rcode bits.
    [[nodiscard]] bool extended_rcode() const noexcept { return extended_rcode_; }
    /// An SOA noted did not read.
    [[nodiscard]] bool malformed() const noexcept { return malformed_; }

private:
    std::vector<std::uint16_t> ttl_offsets_;
    std::optional<std::uint32_t> soa_ttl_;
    std::size_t answers_ = 0;
    bool extended_rcode_ = false;
    bool malformed_ = false;
};

}  // namespace moat::cache
