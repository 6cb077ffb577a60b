// Decoding of (possibly compressed) names in a message, with hard limits and a suffix cache.
//
// Limits, checked on every name: a compression pointer must point strictly before the start of
// the label sequence that contains it (so chains cannot loop, RFC 1035 §4.1.4 "prior
// occurrence") and past the 12-byte header, at most kMaxPointerHops pointers, labels of at most 63
// octets, at most 255 octets uncompressed, label types 0x40 and 0x80 rejected.
//
// The SuffixCache remembers names already decoded at given offsets. Because a pointer resets the
// walk to a fresh start at its target, the walk from a pointer on is exactly the walk of the name
// at the target: the cache stores that walk's totals (length, labels, hops) and the decoder adds
// them to the prefix it has read. A hit is used only when the sums stay inside every limit; when
// they would not, the decoder walks so the error and its offset are the walk's own. Results are
// therefore identical with and without the cache, which the tests check on the whole corpus.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <tl/expected.hpp>

#include "moat/wire/name.hpp"
#include "moat/wire/wire_error.hpp"

namespace moat::wire {

/// What decoding a name found.
struct NameInfo {
    NameView view;          ///< the validated name
    std::uint16_t end = 0;  ///< offset just past the name's bytes in the stream
    std::uint8_t hops = 0;  ///< compression pointers followed
};

/// Fixed-size, direct-mapped memory of decoded names keyed by their start offset. No allocation.
/// Offsets below 12 are never name starts, so 0 marks an empty slot; clear() only zeroes the 32
/// octets of keys, the payload of an empty slot is never read.
class SuffixCache {
public:
    struct Entry {
        std::uint16_t offset = 0;
        std::uint8_t length = 0;  ///< uncompressed octets, root included
        std::uint8_t labels = 0;
        std::uint8_t hops = 0;  ///< pointers the walk from `offset` followed
    };
    static constexpr std::size_t kSlots = 16;

    SuffixCache() noexcept { clear(); }
    /// A cache whose slots are not yet cleared: call clear() before any other use. For owners
    /// that may never need one (a record range over a query's lone OPT).
    struct Deferred {};
    // NOLINTNEXTLINE(cppcoreguidelines-pro-type-member-init,hicpp-member-init)
    explicit SuffixCache(Deferred /*unused*/) noexcept {}
    void clear() noexcept { keys_ = {}; }

    /// The entry for a name starting at `offset`, if cached.
    [[nodiscard]] bool find(std::uint16_t offset, Entry& out) const noexcept {
        const std::size_t i = slot(offset);
        if (keys_[i] != offset) {
            return false;
        }
        out = Entry{offset, values_[i].length, values_[i].labels, values_[i].hops};
        return true;
    }
    void insert(const Entry& entry) noexcept {
        const std::size_t i = slot(entry.offset);
        keys_[i] = entry.offset;
        values_[i] = Value{entry.length, entry.labels, entry.hops};
    }

private:
    struct Value {
        std::uint8_t length;
        std::uint8_t labels;
        std::uint8_t hops;
    };
    [[nodiscard]] static std::size_t slot(std::uint16_t offset) noexcept {
        return (offset * 0x9E37U >> 8U) & (kSlots - 1);
    }
    std::array<std::uint16_t, kSlots> keys_;
    std::array<Value, kSlots> values_;  // NOLINT: read only where keys_ says the slot is full
};

/// Whether pointers may appear in the name being decoded.
enum class Compression : std::uint8_t { allowed, forbidden };

namespace detail {
/// The outcome of a walk packed into one register, so the hot caller gets it without a trip
/// through memory: bits 0-15 the end offset (or the error offset), 16-23 the length, 24-31 the
/// labels, 32-39 the hops, 40-47 the Errc (0 on success).
using PackedWalk = std::uint64_t;

/// The full walk; decode_name() below handles the cheapest cases inline and calls this for the
/// rest.
PackedWalk walk_name(const std::uint8_t* base, std::size_t size, std::size_t pos, std::size_t limit,
                     SuffixCache* cache, Compression compression) noexcept;
}  // namespace detail

/// Decodes the name starting at `pos` in `msg`. The bytes of the name up to its first pointer
/// (or its root label) must end at or before `limit` (the message end, or the RDATA end for
/// names inside RDATA). `cache` may be null.
inline tl::expected<NameInfo, WireError> decode_name(
    std::span<const std::uint8_t> msg, std::size_t pos, std::size_t limit, SuffixCache* cache,
    Compression compression = Compression::allowed) noexcept {
    const std::uint8_t* base = msg.data();
    // The commonest owners of all: the root (OPT) and a bare pointer to a name decoded before.
    // For the pointer, the walk would read it, check it, and continue exactly as the cached walk
    // from its target did.
    if (pos < limit && base[pos] == 0) {
        return NameInfo{NameView(base, static_cast<std::uint16_t>(pos), 1, 0, true),
                        static_cast<std::uint16_t>(pos + 1), 0};
    }
    if (cache != nullptr && pos + 1 < limit && compression == Compression::allowed &&
        (base[pos] & 0xC0U) == 0xC0U) {
        const auto target = static_cast<std::uint16_t>(((base[pos] & 0x3FU) << 8U) | base[pos + 1]);
        SuffixCache::Entry hit;
        if (target >= kHeaderSize && target < pos && cache->find(target, hit) &&
            hit.hops < kMaxPointerHops) {
            return NameInfo{NameView(base, static_cast<std::uint16_t>(pos), hit.length, hit.labels),
                            static_cast<std::uint16_t>(pos + 2),
                            static_cast<std::uint8_t>(hit.hops + 1)};
        }
    }
    const detail::PackedWalk walk =
        detail::walk_name(base, msg.size(), pos, limit, cache, compression);
    const auto code = static_cast<std::uint8_t>(walk >> 40U);
    if (code != 0) {
        return tl::unexpected(
            WireError{static_cast<Errc>(code), static_cast<std::uint32_t>(walk & 0xFFFFU)});
    }
    const auto hops = static_cast<std::uint8_t>(walk >> 32U);
    return NameInfo{
        NameView(base, static_cast<std::uint16_t>(pos), static_cast<std::uint8_t>(walk >> 16U),
                 static_cast<std::uint8_t>(walk >> 24U), hops == 0),
        static_cast<std::uint16_t>(walk), hops};
}

/// Finds the end of the name at `pos` without following pointers: a plain walk used to skip
/// records. Checks only that the bytes stay before `limit` and the label types are legal.
tl::expected<std::size_t, WireError> skip_name(std::span<const std::uint8_t> msg, std::size_t pos,
                                               std::size_t limit) noexcept;

}  // namespace moat::wire
