#include "responses.hpp"

#include <algorithm>
#include <array>
#include <cstring>

#include "moat/core/ascii.hpp"
#include "moat/core/bytes.hpp"
#include "moat/wire/message_builder.hpp"
#include "moat/wire/message_view.hpp"
#include "moat/wire/record.hpp"
#include "query_edns.hpp"

namespace moat::engine {
namespace {

using wire::Header;

constexpr std::uint16_t kOptRecordSize = 11;  // root, type, class, ttl, rdlength

/// Flags of an answer: QR, RA, the query's RD and CD, plus `extra` (AA, AD).
std::uint16_t answer_flags(std::uint16_t query_flags, std::uint16_t extra) noexcept {
    return static_cast<std::uint16_t>(Header::kQr | Header::kRa |
                                      (query_flags & (Header::kRd | Header::kCd)) | extra);
}

/// The flags of an answer to `to`: answer_flags() with `extra`, and the query's opcode when it
/// is echoed.
std::uint16_t reply_flags(const ReplyTo& to, std::uint16_t extra) noexcept {
    const auto opcode = static_cast<std::uint16_t>(to.echo_opcode ? to.query_flags & 0x7800U : 0U);
    return answer_flags(to.query_flags, static_cast<std::uint16_t>(extra | opcode));
}

/// Writes our OPT record at `p` (kOptRecordSize + ede.size() octets), as the message builder
/// does: our UDP size (512 at least), the client's DO bit, `ede` as its only option.
void write_opt(std::uint8_t* p, const ReplyTo& to, std::span<const std::uint8_t> ede) noexcept {
    p[0] = 0;  // root owner
    store_u16(p + 1, wire::to_u16(wire::RrType::opt));
    store_u16(p + 3, std::max<std::uint16_t>(to.our_udp_size, wire::kClassicUdpSize));
    store_u32(p + 5, to.edns.dnssec_ok ? 0x8000U : 0U);  // extended RCODE 0, version 0
    store_u16(p + 9, static_cast<std::uint16_t>(ede.size()));
    if (!ede.empty()) {
        std::memcpy(p + kOptRecordSize, ede.data(), ede.size());
    }
}

/// An EDE option (RFC 8914: option 15, info code, then EXTRA-TEXT) in `buf`; empty span for
/// ExtendedError::none. The text is cut to kMaxEdeText octets.
std::span<const std::uint8_t> ede_option(ExtendedError ede, std::string_view text, EdeBuffer& buf) {
    if (ede == ExtendedError::none) {
        return {};
    }
    const std::size_t n = std::min(text.size(), kMaxEdeText);
    store_u16(buf.data(), kEdnsOptionExtendedError);
    store_u16(buf.data() + 2, static_cast<std::uint16_t>(2 + n));
    store_u16(buf.data() + 4, static_cast<std::uint16_t>(ede));
    if (n != 0) {  // (an empty view's data() may be null, which memcpy must not get)
        std::memcpy(buf.data() + 6, text.data(), n);
    }
    return std::span<const std::uint8_t>(buf).first(6 + n);
}

/// A builder over `out` limited to the client's size, header and question written.
///
/// Made by a constructor, not as an aggregate: GCC zero-fills a braced aggregate whole before
/// constructing its members, 13 KiB for the builder's compression table here, which was a third
/// of the time a local answer took (perf, `dnsmoat-bench-engine --benchmark_filter=decide/local`).
struct Started {
    Started(std::span<std::uint8_t> out, std::size_t limit) noexcept : builder(out, limit) {}

    wire::MessageBuilder builder;
    // NOLINTNEXTLINE(cppcoreguidelines-pro-type-member-init): ede_option() writes what it returns
    EdeBuffer ede_buf;
    bool ok = true;
};

void start(Started& s, const ReplyTo& to, std::uint16_t extra_flags, ExtendedError ede) {
    s.builder.header().id = to.id;
    s.builder.header().flags = reply_flags(to, extra_flags);
    if (to.edns.present) {
        wire::EdnsOptions e;
        e.udp_payload_size = to.our_udp_size;
        e.dnssec_ok = to.edns.dnssec_ok;
        e.options = ede_option(ede, to.ede_text, s.ede_buf);
        s.ok = static_cast<bool>(s.builder.set_edns(e));
    }
    s.ok = s.ok && static_cast<bool>(s.builder.add_question(to.qname, to.qtype, to.qclass));
}

/// Adds one record; a record that no longer fits stops the message (TC is set by the builder
/// when it belongs to the answer or authority section) without failing it.
void add(Started& s, wire::Section section, std::span<const std::uint8_t> owner, wire::RrType type,
         std::uint32_t ttl, std::span<const std::uint8_t> rdata) noexcept {
    if (!s.ok || s.builder.truncated()) {
        return;
    }
    const wire::Status st =
        s.builder.add_record(section, owner, type, to_u16(wire::RrClass::in), ttl, rdata);
    s.ok = st.has_value() || st.error().code == wire::Errc::truncated;
}

std::size_t finish(Started& s) noexcept {
    if (!s.ok) {
        return 0;
    }
    auto done = s.builder.finish();
    return done ? done->size() : 0;
}

}  // namespace

std::size_t answer_limit(Transport transport, const ClientEdns& edns,
                         std::uint16_t our_udp_size) noexcept {
    if (is_stream(transport)) {
        return wire::kMaxMessageSize;
    }
    if (!edns.present) {
        return wire::kClassicUdpSize;
    }
    const std::size_t asked = std::max<std::size_t>(edns.udp_payload_size, wire::kClassicUdpSize);
    return std::min<std::size_t>(asked, std::max<std::size_t>(our_udp_size, wire::kClassicUdpSize));
}

std::size_t write_header_only(std::span<std::uint8_t> out, const Header& query,
                              wire::Rcode rcode) noexcept {
    if (out.size() < wire::kHeaderSize) {
        return 0;
    }
    Header h;
    h.id = query.id;
    h.flags = static_cast<std::uint16_t>(Header::kQr | (query.flags & (0x7800U | Header::kRd)));
    h.set_rcode_low(static_cast<std::uint8_t>(static_cast<unsigned>(rcode) & 0x0FU));
    h.store(out.data());
    return wire::kHeaderSize;
}

std::size_t write_empty(std::span<std::uint8_t> out, const ReplyTo& to, wire::Rcode rcode, bool aa,
                        ExtendedError ede) noexcept {
    Started s(out, to.limit);
    start(s, to, aa ? Header::kAa : 0, ede);
    s.builder.set_rcode(rcode);
    return finish(s);
}

std::size_t write_blocked(std::span<std::uint8_t> out, const ReplyTo& to,
                          const BlockingOptions& blocking) noexcept {
    if (const std::size_t n = write_blocked_directly(out, to, blocking); n != 0) {
        return n;
    }
    return write_blocked_built(out, to, blocking);
}

std::size_t write_blocked_directly(std::span<std::uint8_t> out, const ReplyTo& to,
                                   const BlockingOptions& blocking) noexcept {
    if (blocking.mode != BlockingMode::null_ip && blocking.mode != BlockingMode::custom) {
        return 0;
    }
    const bool custom = blocking.mode == BlockingMode::custom;
    const bool in_class = to.qclass == wire::RrClass::in;
    static constexpr std::array<std::uint8_t, 16> kUnspecified{};  // 0.0.0.0 and ::
    std::span<const std::uint8_t> address;
    if (in_class && to.qtype == wire::RrType::a) {
        address = std::span(custom ? blocking.custom_ipv4.bytes : kUnspecified).first(4);
    } else if (in_class && to.qtype == wire::RrType::aaaa) {
        address = std::span(custom ? blocking.custom_ipv6.bytes : kUnspecified);
    }
    // NOLINTNEXTLINE(cppcoreguidelines-pro-type-member-init): ede_option() writes what it returns
    EdeBuffer ede_buf;
    const auto ede = to.edns.present ? ede_option(ExtendedError::blocked, to.ede_text, ede_buf)
                                     : std::span<const std::uint8_t>{};
    constexpr std::size_t kQuestionFixed = 4;  // type, class
    constexpr std::size_t kRecordFixed = 12;   // pointer to the question's name, type .. length
    const std::size_t records_at = wire::kHeaderSize + to.qname.size() + kQuestionFixed;
    const std::size_t opt_at = records_at + (address.empty() ? 0 : kRecordFixed + address.size());
    const std::size_t size = opt_at + (to.edns.present ? kOptRecordSize + ede.size() : 0);
    // The builder truncates what does not fit, and writes a root owner as its one octet.
    if (size > std::min(out.size(), to.limit) || to.qname.size() <= 1) {
        return 0;
    }
    Header h;
    h.id = to.id;
    h.flags = reply_flags(to, 0);
    h.qdcount = 1;
    h.ancount = address.empty() ? 0 : 1;
    h.arcount = to.edns.present ? 1 : 0;
    std::uint8_t* p = out.data();
    h.store(p);
    std::memcpy(p + wire::kHeaderSize, to.qname.data(), to.qname.size());
    p += records_at - kQuestionFixed;
    store_u16(p, wire::to_u16(to.qtype));
    store_u16(p + 2, wire::to_u16(to.qclass));
    p += kQuestionFixed;
    if (!address.empty()) {
        store_u16(p, 0xC000U | wire::kHeaderSize);  // the owner is the question's name
        store_u16(p + 2, wire::to_u16(to.qtype));
        store_u16(p + 4, wire::to_u16(wire::RrClass::in));
        store_u32(p + 6, blocking.ttl);
        store_u16(p + 10, static_cast<std::uint16_t>(address.size()));
        std::memcpy(p + kRecordFixed, address.data(), address.size());
        p += kRecordFixed + address.size();
    }
    if (to.edns.present) {
        write_opt(p, to, ede);
    }
    return size;
}

std::size_t write_blocked_built(std::span<std::uint8_t> out, const ReplyTo& to,
                                const BlockingOptions& blocking) noexcept {
    switch (blocking.mode) {
        case BlockingMode::nxdomain:
            return write_empty(out, to, wire::Rcode::nxdomain, false, ExtendedError::blocked);
        case BlockingMode::refused:
            return write_empty(out, to, wire::Rcode::refused, false, ExtendedError::blocked);
        case BlockingMode::null_ip:
        case BlockingMode::custom: break;
    }
    Started s(out, to.limit);
    start(s, to, 0, ExtendedError::blocked);
    const bool custom = blocking.mode == BlockingMode::custom;
    const bool in_class = to.qclass == wire::RrClass::in;
    if (s.ok && in_class && to.qtype == wire::RrType::a) {
        const auto& b = custom ? blocking.custom_ipv4.bytes : IpAddress{}.bytes;
        add(s, wire::Section::answer, to.qname, wire::RrType::a, blocking.ttl,
            std::span(b.data(), 4));
    } else if (s.ok && in_class && to.qtype == wire::RrType::aaaa) {
        const auto& b = custom ? blocking.custom_ipv6.bytes : IpAddress{}.bytes;
        add(s, wire::Section::answer, to.qname, wire::RrType::aaaa, blocking.ttl,
            std::span(b.data(), 16));
    }
    return finish(s);
}

std::size_t write_local(std::span<std::uint8_t> out, const ReplyTo& to,
                        const std::vector<LocalRecord>& records, const LocalZone* zone,
                        std::uint32_t ttl) noexcept {
    Started s(out, to.limit);
    start(s, to, Header::kAa, ExtendedError::none);
    const bool any = to.qtype == wire::RrType::any;
    const std::vector<LocalRecord>* current = &records;
    std::span<const std::uint8_t> owner = to.qname;
    // Follow at most 8 local CNAMEs: a loop in the config must not loop here.
    for (int hop = 0; hop < 8 && current != nullptr && s.ok && !s.builder.truncated(); ++hop) {
        const LocalRecord* cname = nullptr;
        bool matched = false;
        for (const LocalRecord& r : *current) {
            if (any || r.type == to.qtype) {
                add(s, wire::Section::answer, owner, r.type, ttl, r.rdata);
                matched = true;
            } else if (r.type == wire::RrType::cname) {
                cname = &r;
            }
        }
        if (matched || cname == nullptr) {
            break;
        }
        add(s, wire::Section::answer, owner, wire::RrType::cname, ttl, cname->rdata);
        owner = cname->rdata;  // a CNAME's RDATA is the target's uncompressed wire name
        // The zone is keyed by lower-cased names; the target keeps the case it was written in.
        std::array<std::uint8_t, wire::kMaxNameLength> lower{};
        const std::size_t n = std::min(owner.size(), lower.size());
        std::transform(owner.begin(), owner.begin() + static_cast<std::ptrdiff_t>(n), lower.begin(),
                       [](std::uint8_t c) { return ascii_lower(c); });
        current = zone != nullptr ? zone->find(std::span(lower.data(), n)) : nullptr;
    }
    return finish(s);
}

std::size_t finish_for_client(std::span<std::uint8_t> out, std::size_t size, const ReplyTo& to,
                              ExtendedError ede, std::vector<std::uint8_t>& scratch,
                              std::vector<std::uint8_t>& rdata) noexcept {
    if (size < wire::kHeaderSize || size > out.size()) {
        return 0;
    }
    Header h = Header::load(out.data());
    // AD only for clients that asked for DNSSEC data or set AD themselves (RFC 6840 §5.8).
    const bool wants_ad = to.edns.dnssec_ok || (to.query_flags & Header::kAd) != 0;
    const auto kept_bits =
        static_cast<std::uint16_t>(Header::kAa | 0x000FU | 0x7800U | (wants_ad ? Header::kAd : 0U));
    const auto kept = static_cast<std::uint16_t>(h.flags & kept_bits);
    h.flags = answer_flags(to.query_flags, kept);
    h.store(out.data());
    EdeBuffer ede_buf;  // NOLINT(cppcoreguidelines-pro-type-member-init): as in Started
    const auto ede_bytes = ede_option(ede, to.ede_text, ede_buf);
    const std::size_t opt_size = to.edns.present ? kOptRecordSize + ede_bytes.size() : 0;
    if (size + opt_size <= to.limit) {
        if (to.edns.present) {
            write_opt(out.data() + size, to, ede_bytes);
            h.arcount = static_cast<std::uint16_t>(h.arcount + 1);
            h.store(out.data());
        }
        return size + opt_size;
    }
    // Too big for this client: rebuild up to the last whole record that fits; the builder sets
    // TC when an answer or authority record had to go (RFC 2181 §9).
    auto view = wire::MessageView::parse(out.first(size));
    if (!view || view->question() == nullptr) {
        return 0;
    }
    scratch.resize(wire::kMaxMessageSize);
    wire::MessageBuilder b(std::span<std::uint8_t>(scratch), to.limit);
    b.header().id = h.id;
    b.header().flags = h.flags;
    if (to.edns.present) {
        wire::EdnsOptions e;
        e.udp_payload_size = to.our_udp_size;
        e.dnssec_ok = to.edns.dnssec_ok;
        e.options = ede_bytes;
        if (!b.set_edns(e)) {
            return 0;
        }
    }
    if (!b.add_question(to.qname, to.qtype, to.qclass)) {
        return 0;
    }
    b.set_rcode(static_cast<wire::Rcode>(h.rcode_low()));
    rdata.resize(wire::kMaxMessageSize);
    // NOLINTNEXTLINE(cppcoreguidelines-pro-type-member-init): copy_to() writes what is read
    std::array<std::uint8_t, wire::kMaxNameLength> owner;
    for (const wire::RecordView& rr : view->records()) {
        if (rr.type == wire::RrType::opt) {
            continue;  // ours is written by finish()
        }
        const std::size_t owner_length = rr.owner.copy_to(owner.data());
        auto n = wire::decompress_rdata(rr, rdata);
        if (!n) {
            return 0;
        }
        const wire::Status added =
            b.add_record(rr.section, std::span(owner.data(), owner_length), rr.type, rr.rclass,
                         rr.ttl, std::span(rdata.data(), *n));
        if (!added) {
            if (added.error().code == wire::Errc::truncated) {
                break;
            }
            return 0;
        }
    }
    auto done = b.finish();
    if (!done || done->size() > out.size()) {
        return 0;
    }
    std::memcpy(out.data(), done->data(), done->size());
    return done->size();
}

}  // namespace moat::engine
