// Typed, zero-copy views of RDATA.
//
// Each read_*() checks the RDATA of one record against its type's layout and returns a view of
// its fields; spans and NameViews point into the message. Names inside RDATA may be compressed
// only for the types where RFC 3597 §4 lets a receiver expect it (the RFC 1035 types, plus RP,
// AFSDB, RT, SIG, PX, NXT, NAPTR and SRV); a pointer in any other type's name is an error.
// Types without a reader here are opaque bytes (RFC 3597).
#pragma once

#include <array>
#include <cstdint>
#include <iterator>
#include <span>
#include <tl/expected.hpp>
#include <variant>

#include "moat/wire/message_view.hpp"
#include "moat/wire/name.hpp"
#include "moat/wire/name_decoder.hpp"
#include "moat/wire/wire_error.hpp"

namespace moat::wire::rdata {

/// Iterates length-prefixed chunks: <character-string>s (RFC 1035 §3.3) or the options of OPT
/// and the parameters of SVCB, which share the (u16 code, u16 length, bytes) shape. Construct only
/// over bytes a reader has already checked.
class CharStringRange {
public:
    class Iterator {
    public:
        using iterator_category = std::input_iterator_tag;
        using value_type = std::span<const std::uint8_t>;
        using difference_type = std::ptrdiff_t;
        Iterator() = default;
        Iterator(const std::uint8_t* at, const std::uint8_t* end) noexcept : at_(at), end_(end) {}
        value_type operator*() const noexcept { return {at_ + 1, *at_}; }
        Iterator& operator++() noexcept {
            at_ += 1U + *at_;
            return *this;
        }
        void operator++(int) noexcept { ++*this; }
        bool operator==(std::default_sentinel_t /*end*/) const noexcept { return at_ >= end_; }

    private:
        const std::uint8_t* at_ = nullptr;
        const std::uint8_t* end_ = nullptr;
    };
    CharStringRange() = default;
    explicit CharStringRange(std::span<const std::uint8_t> bytes) noexcept : bytes_(bytes) {}
    [[nodiscard]] Iterator begin() const noexcept {
        return {bytes_.data(), bytes_.data() + bytes_.size()};
    }
    [[nodiscard]] std::default_sentinel_t end() const noexcept { return {}; }
    [[nodiscard]] std::span<const std::uint8_t> bytes() const noexcept { return bytes_; }

private:
    std::span<const std::uint8_t> bytes_;
};

/// One (code, value) entry of an EDNS option list or SVCB parameter list.
struct KeyValue {
    std::uint16_t key = 0;
    std::span<const std::uint8_t> value;
};

/// Iterates checked (u16 key, u16 length, value) entries.
class KeyValueRange {
public:
    class Iterator {
    public:
        using iterator_category = std::input_iterator_tag;
        using value_type = KeyValue;
        using difference_type = std::ptrdiff_t;
        Iterator() = default;
        Iterator(const std::uint8_t* at, const std::uint8_t* end) noexcept : at_(at), end_(end) {}
        value_type operator*() const noexcept;
        Iterator& operator++() noexcept;
        void operator++(int) noexcept { ++*this; }
        bool operator==(std::default_sentinel_t /*end*/) const noexcept { return at_ >= end_; }

    private:
        const std::uint8_t* at_ = nullptr;
        const std::uint8_t* end_ = nullptr;
    };
    KeyValueRange() = default;
    explicit KeyValueRange(std::span<const std::uint8_t> bytes) noexcept : bytes_(bytes) {}
    [[nodiscard]] Iterator begin() const noexcept {
        return {bytes_.data(), bytes_.data() + bytes_.size()};
    }
    [[nodiscard]] std::default_sentinel_t end() const noexcept { return {}; }
    [[nodiscard]] std::span<const std::uint8_t> bytes() const noexcept { return bytes_; }

private:
    std::span<const std::uint8_t> bytes_;
};

/// Iterates the types present in a checked NSEC/NSEC3 type bitmap (RFC 4034 §4.1.2).
class TypeBitmapRange {
public:
    class Iterator {
    public:
        using iterator_category = std::input_iterator_tag;
        using value_type = RrType;
        using difference_type = std::ptrdiff_t;
        Iterator() = default;
        Iterator(const std::uint8_t* at, const std::uint8_t* end) noexcept;
        value_type operator*() const noexcept { return static_cast<RrType>(type_); }
        Iterator& operator++() noexcept;
        void operator++(int) noexcept { ++*this; }
        bool operator==(std::default_sentinel_t /*end*/) const noexcept { return at_ >= end_; }

    private:
        void settle() noexcept;  // moves to the next set bit at or after the current position
        const std::uint8_t* at_ = nullptr;  // current window block
        const std::uint8_t* end_ = nullptr;
        std::uint32_t type_ = 0;  // window * 256 + bit
        std::uint16_t bit_ = 0;   // bit index inside the block
    };
    TypeBitmapRange() = default;
    explicit TypeBitmapRange(std::span<const std::uint8_t> bytes) noexcept : bytes_(bytes) {}
    [[nodiscard]] Iterator begin() const noexcept {
        return {bytes_.data(), bytes_.data() + bytes_.size()};
    }
    [[nodiscard]] std::default_sentinel_t end() const noexcept { return {}; }
    [[nodiscard]] std::span<const std::uint8_t> bytes() const noexcept { return bytes_; }

private:
    std::span<const std::uint8_t> bytes_;
};

struct A {
    std::array<std::uint8_t, 4> address{};
};
struct Aaaa {
    std::array<std::uint8_t, 16> address{};
};
/// NS, CNAME, PTR, DNAME and the other single-name types.
struct NameRdata {
    NameView name;
};
struct Mx {
    std::uint16_t preference = 0;
    NameView exchange;
};
struct Txt {
    CharStringRange strings;
};
struct Soa {
    NameView mname;
    NameView rname;
    std::uint32_t serial = 0;
    std::uint32_t refresh = 0;  ///< seconds
    std::uint32_t retry = 0;    ///< seconds
    std::uint32_t expire = 0;   ///< seconds
    std::uint32_t minimum = 0;  ///< seconds; the negative-caching TTL (RFC 2308 §4)
};
struct Srv {
    std::uint16_t priority = 0;
    std::uint16_t weight = 0;
    std::uint16_t port = 0;
    NameView target;
};
struct Caa {
    std::uint8_t flags = 0;
    std::span<const std::uint8_t> tag;
    std::span<const std::uint8_t> value;
};
/// SVCB and HTTPS (RFC 9460).
struct Svcb {
    std::uint16_t priority = 0;
    NameView target;
    KeyValueRange params;
};
/// The OPT pseudo-record (RFC 6891 §6.1).
struct Opt {
    std::uint16_t udp_payload_size = 0;
    std::uint8_t extended_rcode = 0;  ///< upper 8 bits of the 12-bit rcode
    std::uint8_t version = 0;
    bool dnssec_ok = false;
    std::uint16_t z = 0;  ///< the 15 flag bits after DO
    KeyValueRange options;
};
struct Ds {
    std::uint16_t key_tag = 0;
    std::uint8_t algorithm = 0;
    std::uint8_t digest_type = 0;
    std::span<const std::uint8_t> digest;
};
struct Dnskey {
    std::uint16_t flags = 0;
    std::uint8_t protocol = 0;
    std::uint8_t algorithm = 0;
    std::span<const std::uint8_t> public_key;
};
struct Rrsig {
    RrType type_covered{};
    std::uint8_t algorithm = 0;
    std::uint8_t labels = 0;
    std::uint32_t original_ttl = 0;
    std::uint32_t expiration = 0;
    std::uint32_t inception = 0;
    std::uint16_t key_tag = 0;
    NameView signer;
    std::span<const std::uint8_t> signature;
};
struct Nsec {
    NameView next;
    TypeBitmapRange types;
};
struct Nsec3 {
    std::uint8_t hash_algorithm = 0;
    std::uint8_t flags = 0;
    std::uint16_t iterations = 0;
    std::span<const std::uint8_t> salt;
    std::span<const std::uint8_t> next_hashed_owner;
    TypeBitmapRange types;
};
/// Any type without a typed reader (RFC 3597).
struct Opaque {
    std::span<const std::uint8_t> bytes;
};

using Any = std::variant<A, Aaaa, NameRdata, Mx, Txt, Soa, Srv, Caa, Svcb, Opt, Ds, Dnskey, Rrsig,
                         Nsec, Nsec3, Opaque>;

// Each reader checks the record's type matches and its RDATA has exactly the type's layout.
// `cache` (optional) lets RDATA names that point at earlier names skip the walk.
tl::expected<A, WireError> read_a(const RecordView& rr) noexcept;
tl::expected<Aaaa, WireError> read_aaaa(const RecordView& rr) noexcept;
tl::expected<NameRdata, WireError> read_name(const RecordView& rr,
                                             SuffixCache* cache = nullptr) noexcept;
tl::expected<Mx, WireError> read_mx(const RecordView& rr, SuffixCache* cache = nullptr) noexcept;
tl::expected<Txt, WireError> read_txt(const RecordView& rr) noexcept;
tl::expected<Soa, WireError> read_soa(const RecordView& rr, SuffixCache* cache = nullptr) noexcept;
tl::expected<Srv, WireError> read_srv(const RecordView& rr, SuffixCache* cache = nullptr) noexcept;
tl::expected<Caa, WireError> read_caa(const RecordView& rr) noexcept;
tl::expected<Svcb, WireError> read_svcb(const RecordView& rr) noexcept;
tl::expected<Opt, WireError> read_opt(const RecordView& rr) noexcept;
tl::expected<Ds, WireError> read_ds(const RecordView& rr) noexcept;
tl::expected<Dnskey, WireError> read_dnskey(const RecordView& rr) noexcept;
tl::expected<Rrsig, WireError> read_rrsig(const RecordView& rr) noexcept;
tl::expected<Nsec, WireError> read_nsec(const RecordView& rr) noexcept;
tl::expected<Nsec3, WireError> read_nsec3(const RecordView& rr) noexcept;

/// Reads any record with the reader for its type; types without one come back as Opaque after
/// the generic layout check (names inside well-known layouts such as RP or NAPTR are checked).
tl::expected<Any, WireError> read(const RecordView& rr, SuffixCache* cache = nullptr) noexcept;

}  // namespace moat::wire::rdata
