#include "moat/cache/cache_key.hpp"

#include <algorithm>
#include <cstring>

#include "moat/core/ascii.hpp"
#include "moat/core/bytes.hpp"
#include "moat/core/mix.hpp"

namespace moat::cache {

namespace {

/// The OPT flags bit "DNSSEC OK" inside RecordView::ttl (RFC 3225 §3).
constexpr std::uint32_t kDoBit = 0x8000;

}  // namespace

std::uint64_t CacheKey::hash_of(std::span<const std::uint8_t> name, std::uint16_t qtype,
                                std::uint16_t qclass, bool dnssec_ok,
                                std::uint8_t partition) noexcept {
    // The name folded eight octets at a time, then the fixed fields, then a final avalanche so
    // that shard and bucket bits both depend on every input bit.
    constexpr std::uint64_t kSeed = 0x9E3779B97F4A7C15ULL;
    std::uint64_t h = fold_octets(kSeed ^ name.size(), name.data(), name.size());
    h ^= (std::uint64_t{partition} << 56U) | (std::uint64_t{qtype} << 32U) |
         (std::uint64_t{qclass} << 16U) | (dnssec_ok ? 1U : 0U);
    return avalanche(h);
}

void CacheKey::finish(std::uint16_t qtype, std::uint16_t qclass, bool dnssec_ok) noexcept {
    qtype_ = qtype;
    qclass_ = qclass;
    dnssec_ok_ = dnssec_ok;
    hash_ = hash_of(name(), qtype, qclass, dnssec_ok);
}

void CacheKey::echo_from(const wire::MessageView& query) noexcept {
    // The first question starts right after the header and cannot be compressed (a pointer
    // must point backwards, into the header), so its octets are the name as spelled.
    const auto bytes = query.bytes();
    if (bytes.size() >= wire::kHeaderSize + name_length_) {
        echo_ = bytes.subspan(wire::kHeaderSize, name_length_);
    }
}

bool CacheKey::is_question_of(std::span<const std::uint8_t> message) const noexcept {
    // ASCII case folding leaves the label lengths (below 64) alone.
    const std::size_t type_at = wire::kHeaderSize + name_length_;
    return message.size() >= type_at + 4 &&
           ascii_iequal(message.data() + wire::kHeaderSize, name_.data(), name_length_) &&
           load_u16(message.data() + type_at) == qtype_ &&
           load_u16(message.data() + type_at + 2) == qclass_;
}

CacheKey CacheKey::make(wire::NameView qname, std::uint16_t qtype, std::uint16_t qclass,
                        bool dnssec_ok) noexcept {
    CacheKey key;
    key.name_length_ = static_cast<std::uint8_t>(qname.copy_lower_to(key.name_.data()));
    key.finish(qtype, qclass, dnssec_ok);
    return key;
}

tl::expected<CacheKey, Errc> CacheKey::from_query(const wire::MessageView& query) noexcept {
    const auto question = query.question();
    if (!question) {
        return tl::unexpected(Errc::malformed);
    }
    bool dnssec_ok = false;
    auto additional = query.additional();
    for (const wire::RecordView& rr : additional) {
        if (rr.type == wire::RrType::opt) {
            dnssec_ok = (rr.ttl & kDoBit) != 0;
        }
    }
    if (additional.error()) {
        return tl::unexpected(Errc::malformed);
    }
    return of_question(query, *question, dnssec_ok);
}

CacheKey CacheKey::of_question(const wire::MessageView& query, const wire::Question& question,
                               bool dnssec_ok) noexcept {
    CacheKey key = make(question.qname, wire::to_u16(question.qtype), wire::to_u16(question.qclass),
                        dnssec_ok);
    key.echo_from(query);
    return key;
}

CacheKey CacheKey::of_lowered_question(const wire::MessageView& query,
                                       const wire::Question& question,
                                       std::span<const std::uint8_t> lower_qname,
                                       bool dnssec_ok) noexcept {
    CacheKey key;
    const std::size_t n = std::min(lower_qname.size(), key.name_.size());
    std::memcpy(key.name_.data(), lower_qname.data(), n);
    key.name_length_ = static_cast<std::uint8_t>(n);
    key.finish(wire::to_u16(question.qtype), wire::to_u16(question.qclass), dnssec_ok);
    key.echo_from(query);
    return key;
}

bool operator==(const CacheKey& a, const CacheKey& b) noexcept {
    return a.hash_ == b.hash_ && a.qtype_ == b.qtype_ && a.qclass_ == b.qclass_ &&
           a.dnssec_ok_ == b.dnssec_ok_ && a.partition_ == b.partition_ &&
           std::ranges::equal(a.name(), b.name());
}

CacheKey CacheKey::in_partition(std::uint8_t partition) const noexcept {
    CacheKey key = *this;
    if (partition == partition_) {
        return key;
    }
    key.partition_ = partition;
    key.hash_ = hash_of(name(), qtype_, qclass_, dnssec_ok_, partition);
    return key;
}

}  // namespace moat::cache
