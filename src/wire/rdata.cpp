// Typed readers: each checks the RDATA with the layout walker, then picks its fields out of the
// spans the walker found.
#include "moat/wire/rdata.hpp"

#include <cstring>

#include "moat/core/bytes.hpp"
#include "rdata_layout.hpp"

namespace moat::wire::rdata {
namespace {

tl::expected<detail::FieldSpans, WireError> walk(const RecordView& rr, RrType expected_type,
                                                 SuffixCache* cache) noexcept {
    if (rr.type != expected_type) {
        return fail_at(Errc::bad_argument, rr.rdata_offset);
    }
    return detail::walk_rdata(rr.message, rr.rdata_offset, rr.rdata_length,
                              detail::layout_for(rr.type), cache);
}

std::span<const std::uint8_t> between(const RecordView& rr, std::size_t from,
                                      std::size_t to) noexcept {
    return rr.message.subspan(from, to - from);
}

}  // namespace

KeyValue KeyValueRange::Iterator::operator*() const noexcept {
    return {load_u16(at_), {at_ + 4, load_u16(at_ + 2)}};
}

KeyValueRange::Iterator& KeyValueRange::Iterator::operator++() noexcept {
    at_ += 4U + load_u16(at_ + 2);
    return *this;
}

TypeBitmapRange::Iterator::Iterator(const std::uint8_t* at, const std::uint8_t* end) noexcept
    : at_(at), end_(end) {
    settle();
}

TypeBitmapRange::Iterator& TypeBitmapRange::Iterator::operator++() noexcept {
    ++bit_;
    settle();
    return *this;
}

void TypeBitmapRange::Iterator::settle() noexcept {
    while (at_ < end_) {
        const unsigned octets = at_[1];
        while (bit_ < octets * 8U) {
            if ((at_[2 + bit_ / 8U] & (0x80U >> (bit_ % 8U))) != 0) {
                type_ = at_[0] * 256U + bit_;
                return;
            }
            ++bit_;
        }
        at_ += 2U + octets;
        bit_ = 0;
    }
}

tl::expected<A, WireError> read_a(const RecordView& rr) noexcept {
    if (rr.type != RrType::a || rr.rdata_length != 4) {
        return fail_at(rr.type != RrType::a ? Errc::bad_argument : Errc::rdata_length,
                       rr.rdata_offset);
    }
    A a;
    std::memcpy(a.address.data(), rr.message.data() + rr.rdata_offset, 4);
    return a;
}

tl::expected<Aaaa, WireError> read_aaaa(const RecordView& rr) noexcept {
    if (rr.type != RrType::aaaa || rr.rdata_length != 16) {
        return fail_at(rr.type != RrType::aaaa ? Errc::bad_argument : Errc::rdata_length,
                       rr.rdata_offset);
    }
    Aaaa a;
    std::memcpy(a.address.data(), rr.message.data() + rr.rdata_offset, 16);
    return a;
}

namespace {

/// The name at `pos`, which must end exactly at `end` (a name that fills the rest of the RDATA).
/// The common single-name layouts are read this way, without the generic layout walk.
tl::expected<NameView, WireError> trailing_name(const RecordView& rr, std::size_t pos,
                                                std::size_t end, SuffixCache* cache,
                                                Compression compression) noexcept {
    auto info = decode_name(rr.message, pos, end, cache, compression);
    if (!info) {
        return tl::unexpected(info.error());
    }
    if (info->end != end) {
        return fail_at(Errc::rdata_length, info->end);
    }
    return info->view;
}

Compression compression_of(const detail::Layout& layout) noexcept {
    return layout.names == detail::NamePolicy::plain ? Compression::forbidden
                                                     : Compression::allowed;
}

}  // namespace

tl::expected<NameRdata, WireError> read_name(const RecordView& rr, SuffixCache* cache) noexcept {
    const detail::Layout& layout = detail::layout_for(rr.type);
    if (layout.count != 1 || layout.fields[0].kind != detail::FieldKind::name) {
        return fail_at(Errc::bad_argument, rr.rdata_offset);
    }
    auto name = trailing_name(rr, rr.rdata_offset, rr.rdata_offset + rr.rdata_length, cache,
                              compression_of(layout));
    if (!name) {
        return tl::unexpected(name.error());
    }
    return NameRdata{*name};
}

tl::expected<Mx, WireError> read_mx(const RecordView& rr, SuffixCache* cache) noexcept {
    if (rr.type != RrType::mx) {
        return fail_at(Errc::bad_argument, rr.rdata_offset);
    }
    if (rr.rdata_length < 2) {  // as the layout walk reports it, so validate() agrees
        return fail_at(Errc::rdata_length, rr.rdata_offset);
    }
    auto name = trailing_name(rr, rr.rdata_offset + 2U, rr.rdata_offset + rr.rdata_length, cache,
                              Compression::allowed);
    if (!name) {
        return tl::unexpected(name.error());
    }
    return Mx{load_u16(rr.message.data() + rr.rdata_offset), *name};
}

tl::expected<Txt, WireError> read_txt(const RecordView& rr) noexcept {
    auto spans = walk(rr, RrType::txt, nullptr);
    if (!spans) {
        return tl::unexpected(spans.error());
    }
    return Txt{CharStringRange(rr.rdata())};
}

tl::expected<Soa, WireError> read_soa(const RecordView& rr, SuffixCache* cache) noexcept {
    auto spans = walk(rr, RrType::soa, cache);
    if (!spans) {
        return tl::unexpected(spans.error());
    }
    const std::uint8_t* p = rr.message.data() + spans->at[2];
    return Soa{spans->names[0], spans->names[1],  load_u32(p),     load_u32(p + 4),
               load_u32(p + 8), load_u32(p + 12), load_u32(p + 16)};
}

tl::expected<Srv, WireError> read_srv(const RecordView& rr, SuffixCache* cache) noexcept {
    auto spans = walk(rr, RrType::srv, cache);
    if (!spans) {
        return tl::unexpected(spans.error());
    }
    const std::uint8_t* p = rr.message.data() + rr.rdata_offset;
    return Srv{load_u16(p), load_u16(p + 2), load_u16(p + 4), spans->names[0]};
}

tl::expected<Caa, WireError> read_caa(const RecordView& rr) noexcept {
    auto spans = walk(rr, RrType::caa, nullptr);
    if (!spans) {
        return tl::unexpected(spans.error());
    }
    const std::uint8_t* p = rr.message.data() + rr.rdata_offset;
    return Caa{p[0], rr.message.subspan(spans->at[1] + 1U, p[1]),
               between(rr, spans->at[2], spans->at[3])};
}

tl::expected<Svcb, WireError> read_svcb(const RecordView& rr) noexcept {
    auto spans = walk(rr, rr.type == RrType::https ? RrType::https : RrType::svcb, nullptr);
    if (!spans) {
        return tl::unexpected(spans.error());
    }
    return Svcb{load_u16(rr.message.data() + rr.rdata_offset), spans->names[0],
                KeyValueRange(between(rr, spans->at[2], spans->at[3]))};
}

tl::expected<Opt, WireError> read_opt(const RecordView& rr) noexcept {
    if (rr.type != RrType::opt) {
        return fail_at(Errc::bad_argument, rr.rdata_offset);
    }
    if (rr.rdata_length != 0) {  // most OPT records carry no option at all
        auto spans = walk(rr, RrType::opt, nullptr);
        if (!spans) {
            return tl::unexpected(spans.error());
        }
    }
    Opt opt;
    opt.udp_payload_size = rr.rclass;
    opt.extended_rcode = static_cast<std::uint8_t>(rr.ttl >> 24U);
    opt.version = static_cast<std::uint8_t>(rr.ttl >> 16U);
    opt.dnssec_ok = (rr.ttl & 0x8000U) != 0;
    opt.z = static_cast<std::uint16_t>(rr.ttl & 0x7FFFU);
    opt.options = KeyValueRange(rr.rdata());
    return opt;
}

tl::expected<Ds, WireError> read_ds(const RecordView& rr) noexcept {
    auto spans = walk(rr, RrType::ds, nullptr);
    if (!spans) {
        return tl::unexpected(spans.error());
    }
    const std::uint8_t* p = rr.message.data() + rr.rdata_offset;
    return Ds{load_u16(p), p[2], p[3], between(rr, spans->at[1], spans->at[2])};
}

tl::expected<Dnskey, WireError> read_dnskey(const RecordView& rr) noexcept {
    auto spans = walk(rr, RrType::dnskey, nullptr);
    if (!spans) {
        return tl::unexpected(spans.error());
    }
    const std::uint8_t* p = rr.message.data() + rr.rdata_offset;
    return Dnskey{load_u16(p), p[2], p[3], between(rr, spans->at[1], spans->at[2])};
}

tl::expected<Rrsig, WireError> read_rrsig(const RecordView& rr) noexcept {
    auto spans = walk(rr, RrType::rrsig, nullptr);
    if (!spans) {
        return tl::unexpected(spans.error());
    }
    const std::uint8_t* p = rr.message.data() + rr.rdata_offset;
    return Rrsig{static_cast<RrType>(load_u16(p)),
                 p[2],
                 p[3],
                 load_u32(p + 4),
                 load_u32(p + 8),
                 load_u32(p + 12),
                 load_u16(p + 16),
                 spans->names[0],
                 between(rr, spans->at[2], spans->at[3])};
}

tl::expected<Nsec, WireError> read_nsec(const RecordView& rr) noexcept {
    auto spans = walk(rr, RrType::nsec, nullptr);
    if (!spans) {
        return tl::unexpected(spans.error());
    }
    return Nsec{spans->names[0], TypeBitmapRange(between(rr, spans->at[1], spans->at[2]))};
}

tl::expected<Nsec3, WireError> read_nsec3(const RecordView& rr) noexcept {
    auto spans = walk(rr, RrType::nsec3, nullptr);
    if (!spans) {
        return tl::unexpected(spans.error());
    }
    const std::uint8_t* p = rr.message.data() + rr.rdata_offset;
    return Nsec3{p[0],
                 p[1],
                 load_u16(p + 2),
                 between(rr, spans->at[1] + 1U, spans->at[2]),
                 between(rr, spans->at[2] + 1U, spans->at[3]),
                 TypeBitmapRange(between(rr, spans->at[3], spans->at[4]))};
}

namespace {
template <typename T>
tl::expected<Any, WireError> widen(tl::expected<T, WireError>&& r) noexcept {
    if (!r) {
        return tl::unexpected(r.error());
    }
    return Any(std::move(*r));
}
}  // namespace

tl::expected<Any, WireError> read(const RecordView& rr, SuffixCache* cache) noexcept {
    if (detail::empty_rdata_allowed(rr.rclass, rr.rdata_length) && rr.type != RrType::opt) {
        return Any(Opaque{rr.rdata()});
    }
    switch (rr.type) {
        case RrType::a: return widen(read_a(rr));
        case RrType::aaaa: return widen(read_aaaa(rr));
        case RrType::mx: return widen(read_mx(rr, cache));
        case RrType::txt: return widen(read_txt(rr));
        case RrType::soa: return widen(read_soa(rr, cache));
        case RrType::srv: return widen(read_srv(rr, cache));
        case RrType::caa: return widen(read_caa(rr));
        case RrType::svcb:
        case RrType::https: return widen(read_svcb(rr));
        case RrType::opt: return widen(read_opt(rr));
        case RrType::ds: return widen(read_ds(rr));
        case RrType::dnskey: return widen(read_dnskey(rr));
        case RrType::rrsig: return widen(read_rrsig(rr));
        case RrType::nsec: return widen(read_nsec(rr));
        case RrType::nsec3: return widen(read_nsec3(rr));
        default: break;
    }
    const detail::Layout& layout = detail::layout_for(rr.type);
    if (layout.count == 1 && layout.fields[0].kind == detail::FieldKind::name) {
        return widen(read_name(rr, cache));
    }
    auto spans = detail::walk_rdata(rr.message, rr.rdata_offset, rr.rdata_length, layout, cache);
    if (!spans) {
        return tl::unexpected(spans.error());
    }
    return Any(Opaque{rr.rdata()});
}

}  // namespace moat::wire::rdata
