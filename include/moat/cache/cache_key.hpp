// The key of a cached answer: (lower-cased qname in wire form, qtype, qclass, DO bit, and the
// partition of the upstreams that answered).
//
// A CacheKey owns its name in inline storage (no heap), so one can be built per query on the
// stack; its hash is computed once, at construction. A key made by from_query() also remembers
// where the query's own qname sits (uncompressed, at offset 12 of the query), so a hit can echo
// the query's letter case in the question section (DNS 0x20); that view points into the query's
// bytes, which must outlive the key while it is used for a lookup. Keys compare by value; the
// echo view takes no part in equality or hashing.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <tl/expected.hpp>

#include "moat/cache/cache_error.hpp"
#include "moat/wire/message_view.hpp"
#include "moat/wire/name.hpp"
#include "moat/wire/types.hpp"

namespace moat::cache {

class CacheKey {
public:
    /// The root name, type 0, class 0, DO clear: a key no answer matches. Only the name's first
    /// octet is written (see wire::Name's constructor: the rest is never read).
    // NOLINTNEXTLINE(cppcoreguidelines-pro-type-member-init): name_ past name_length_ stays unset
    CacheKey() noexcept { name_[0] = 0; }

    /// A key for `qname` (lower-cased here), any letter case in, no echo.
    [[nodiscard]] static CacheKey make(wire::NameView qname, std::uint16_t qtype,
                                       std::uint16_t qclass, bool dnssec_ok) noexcept;
    [[nodiscard]] static CacheKey make(wire::NameView qname, wire::RrType qtype,
                                       wire::RrClass qclass, bool dnssec_ok) noexcept {
        return make(qname, wire::to_u16(qtype), wire::to_u16(qclass), dnssec_ok);
    }

    /// The key of a parsed query: its first question, and DO from its OPT record when there is
    /// one (a walk over the record sections, which are empty or tiny in a query). Echoes the
    /// query's qname case on a hit. Errc::malformed when there is no question or the additional
    /// section does not parse.
    [[nodiscard]] static tl::expected<CacheKey, Errc> from_query(
        const wire::MessageView& query) noexcept;
    /// from_query() for a caller that has already read `question` from `query` and its DO bit
    /// (the engine walks the OPT record for EDNS anyway): the same key and echo, without a
    /// second walk over the records.
    [[nodiscard]] static CacheKey of_question(const wire::MessageView& query,
                                              const wire::Question& question,
                                              bool dnssec_ok) noexcept;
    /// of_question() for a caller that holds the question's name lower-cased already (the
    /// engine lowers it once for local names, the blocklist and routes): `lower_qname`, the
    /// question's name in uncompressed wire form, is copied as it is, not lowered a second time.
    [[nodiscard]] static CacheKey of_lowered_question(const wire::MessageView& query,
                                                      const wire::Question& question,
                                                      std::span<const std::uint8_t> lower_qname,
                                                      bool dnssec_ok) noexcept;

    /// Lower-cased uncompressed wire-form name, root label included.
    [[nodiscard]] std::span<const std::uint8_t> name() const noexcept {
        return {name_.data(), name_length_};
    }
    [[nodiscard]] std::uint16_t qtype() const noexcept { return qtype_; }
    [[nodiscard]] std::uint16_t qclass() const noexcept { return qclass_; }
    [[nodiscard]] bool dnssec_ok() const noexcept { return dnssec_ok_; }
    /// Which upstreams the answer came from: 0 the default ones, else a client group's own
    /// (their answers may differ, e.g. a family-safe resolver), so groups never share entries.
    [[nodiscard]] std::uint8_t partition() const noexcept { return partition_; }
    /// True when the question at offset 12 of `message` (a whole DNS message) is this key's
    /// name in any letter case, type and class. The first question's name is never compressed
    /// (a pointer there could only point forward), so its octets compare directly; the caller
    /// checks the question count.
    [[nodiscard]] bool is_question_of(std::span<const std::uint8_t> message) const noexcept;
    /// This key in `partition` (hash recomputed).
    [[nodiscard]] CacheKey in_partition(std::uint8_t partition) const noexcept;
    [[nodiscard]] std::uint64_t hash() const noexcept { return hash_; }
    /// The query's qname as the client spelled it (same length as name()), or empty.
    [[nodiscard]] std::span<const std::uint8_t> echo_name() const noexcept { return echo_; }
    /// This key without its echo view: for a key that outlives the query's buffer.
    [[nodiscard]] CacheKey without_echo() const noexcept {
        CacheKey key = *this;
        key.echo_ = {};
        return key;
    }

    friend bool operator==(const CacheKey& a, const CacheKey& b) noexcept;

    /// The hash of a key with these parts; `name` must already be lower-cased.
    [[nodiscard]] static std::uint64_t hash_of(std::span<const std::uint8_t> name,
                                               std::uint16_t qtype, std::uint16_t qclass,
                                               bool dnssec_ok, std::uint8_t partition = 0) noexcept;

private:
    /// Sets the fixed fields and the hash, once name_ holds the lower-cased name.
    void finish(std::uint16_t qtype, std::uint16_t qclass, bool dnssec_ok) noexcept;
    /// Points the echo at the query's own spelling of its first question's name.
    void echo_from(const wire::MessageView& query) noexcept;

    std::array<std::uint8_t, wire::kMaxNameLength> name_;  // only name_length_ octets set
    std::span<const std::uint8_t> echo_;
    std::uint64_t hash_ = 0;
    std::uint16_t qtype_ = 0;
    std::uint16_t qclass_ = 0;
    std::uint8_t name_length_ = 1;  // the root: one zero octet
    bool dnssec_ok_ = false;
    std::uint8_t partition_ = 0;
};

}  // namespace moat::cache
