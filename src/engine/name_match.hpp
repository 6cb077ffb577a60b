// Names of the pipeline's own zones, and comparing lower-cased, uncompressed wire names by
// domain: the tests of "is this name in that zone" that several steps of the pipeline make.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "moat/filter/name_hash.hpp"
#include "moat/wire/name.hpp"

namespace moat::engine {

/// A name the engine knows by heart (special-use and reverse zones); `text` must be valid.
[[nodiscard]] inline wire::Name name_of(std::string_view text) {
    return *wire::Name::from_text(text);
}

/// True when `name` is `zone` or below it; both lower-cased uncompressed wire names.
[[nodiscard]] inline bool is_under(std::span<const std::uint8_t> name,
                                   std::span<const std::uint8_t> zone) noexcept {
    // The zone can only be the name's last zone.size() octets: compared first, they settle
    // nearly every name in a few octets (the pipeline asks this of every query, for localhost
    // and the special-use zones). Only a matching tail needs the walk that tells whether it
    // starts at a label, not inside one ("a\x09localhost" ends in localhost's octets).
    if (zone.size() > name.size()) {
        return false;
    }
    const std::size_t start = name.size() - zone.size();
    if (!std::equal(zone.begin(), zone.end(), name.begin() + static_cast<std::ptrdiff_t>(start))) {
        return false;
    }
    std::size_t pos = 0;
    while (pos < start) {
        pos += name[pos] + 1U;
    }
    return pos == start;
}

/// A zone every query is tested against (localhost, the special-use names), kept with its
/// name's hash (filter/name_hash.hpp). The pipeline has the query's suffix hashes already, for
/// the blocklist: one compare of the suffix as long as the zone settles nearly every name, and
/// only an equal hash leads to comparing octets, so a hash collision cannot misplace a name.
/// The octets are kept apart, so that the hashes of several zones share a cache line.
class KnownZone {
public:
    /// `text` must be a valid name.
    explicit KnownZone(std::string_view text) {
        const wire::Name lower = wire::Name::from_view_lower(name_of(text).view());
        filter::SuffixHashes hashes;
        hashes.compute(lower.wire().data());
        hash_ = hashes.whole();
        labels_ = hashes.count;
        wire_.assign(lower.wire().begin(), lower.wire().end());
    }

    /// True when the name is this zone or below it. `hashes` are those of `lower_name`, a
    /// lower-cased uncompressed wire name.
    [[nodiscard]] bool holds(std::span<const std::uint8_t> lower_name,
                             const filter::SuffixHashes& hashes) const noexcept {
        if (labels_ == 0) {
            return true;  // the root holds every name
        }
        if (labels_ > hashes.count) {
            return false;
        }
        const std::size_t suffix = hashes.count - labels_;
        if (hashes.hash[suffix] != hash_) {
            return false;
        }
        const auto tail = lower_name.subspan(hashes.offset[suffix]);
        return std::equal(tail.begin(), tail.end(), wire_.begin(), wire_.end());
    }
    /// True when the name is this zone itself.
    [[nodiscard]] bool is(std::span<const std::uint8_t> lower_name,
                          const filter::SuffixHashes& hashes) const noexcept {
        return hashes.count == labels_ && holds(lower_name, hashes);
    }
    /// The zone's lower-cased wire form.
    [[nodiscard]] std::span<const std::uint8_t> wire() const noexcept { return wire_; }

private:
    std::uint64_t hash_ = 0;
    std::size_t labels_ = 0;
    std::vector<std::uint8_t> wire_;
};

}  // namespace moat::engine
