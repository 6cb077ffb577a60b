#include "rdata_layout.hpp"

#include "moat/core/bytes.hpp"

namespace moat::wire::detail {
namespace {

using K = FieldKind;

constexpr Field fixed(std::uint8_t n) noexcept { return {K::fixed, n}; }
constexpr Field of(K kind) noexcept { return {kind, 0}; }

constexpr Layout make(std::initializer_list<Field> fields, NamePolicy names) noexcept {
    Layout layout;
    for (const Field& f : fields) {
        layout.fields[layout.count++] = f;
        if (f.kind == K::name) {
            ++layout.name_fields;
        }
    }
    layout.names = names;
    return layout;
}

constexpr NamePolicy kCompress = NamePolicy::compress;
constexpr NamePolicy kRead = NamePolicy::decompress_only;
constexpr NamePolicy kPlain = NamePolicy::plain;

constexpr Layout kOpaque = make({of(K::rest)}, kPlain);
constexpr Layout kA = make({fixed(4)}, kPlain);
constexpr Layout kAaaa = make({fixed(16)}, kPlain);
constexpr Layout kOneName = make({of(K::name)}, kCompress);
constexpr Layout kTwoNames = make({of(K::name), of(K::name)}, kCompress);
constexpr Layout kSoa = make({of(K::name), of(K::name), fixed(20)}, kCompress);
constexpr Layout kMx = make({fixed(2), of(K::name)}, kCompress);
constexpr Layout kTxt = make({of(K::char_strings)}, kPlain);
constexpr Layout kHinfo = make({of(K::char_string), of(K::char_string)}, kPlain);
constexpr Layout kRp = make({of(K::name), of(K::name)}, kRead);
constexpr Layout kU16Name = make({fixed(2), of(K::name)}, kRead);
constexpr Layout kSig = make({fixed(18), of(K::name), of(K::rest)}, kRead);
constexpr Layout kPx = make({fixed(2), of(K::name), of(K::name)}, kRead);
constexpr Layout kNxt = make({of(K::name), of(K::rest)}, kRead);
constexpr Layout kSrv = make({fixed(6), of(K::name)}, kRead);
constexpr Layout kNaptr = make(
    {fixed(4), of(K::char_string), of(K::char_string), of(K::char_string), of(K::name)}, kRead);
constexpr Layout kKx = make({fixed(2), of(K::name)}, kPlain);
constexpr Layout kDname = make({of(K::name)}, kRead);
constexpr Layout kOpt = make({of(K::edns_options)}, kPlain);
constexpr Layout kKeyLike = make({fixed(4), of(K::rest)}, kPlain);  // DS, DNSKEY, URI
constexpr Layout kRrsig = make({fixed(18), of(K::name), of(K::rest)}, kPlain);
constexpr Layout kNsec = make({of(K::name), of(K::type_bitmap)}, kPlain);
constexpr Layout kNsec3 =
    make({fixed(4), of(K::char_string), of(K::hash), of(K::type_bitmap)}, kPlain);
constexpr Layout kNsec3Param = make({fixed(4), of(K::char_string)}, kPlain);
constexpr Layout kTlsa = make({fixed(3), of(K::rest)}, kPlain);
constexpr Layout kSvcb = make({fixed(2), of(K::name), of(K::svc_params)}, kPlain);
constexpr Layout kCaa = make({fixed(1), of(K::caa_tag), of(K::rest)}, kPlain);
constexpr Layout kWks = make({fixed(5), of(K::rest)}, kPlain);

bool is_alnum(std::uint8_t c) noexcept {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

// Each check returns the offset after the field, or an error.
tl::expected<std::size_t, WireError> check_char_string(const std::uint8_t* b, std::size_t p,
                                                       std::size_t end) noexcept {
    if (p >= end || p + 1U + b[p] > end) {
        return fail_at(Errc::rdata_length, p);
    }
    return p + 1U + b[p];
}

tl::expected<std::size_t, WireError> check_type_bitmap(const std::uint8_t* b, std::size_t p,
                                                       std::size_t end) noexcept {
    int last_window = -1;
    while (p < end) {
        if (p + 2 > end) {
            return fail_at(Errc::bad_type_bitmap, p);
        }
        const unsigned window = b[p];
        const unsigned len = b[p + 1];
        if (static_cast<int>(window) <= last_window || len == 0 || len > 32 || p + 2 + len > end ||
            b[p + 1 + len] == 0) {
            return fail_at(Errc::bad_type_bitmap, p);
        }
        last_window = static_cast<int>(window);
        p += 2 + len;
    }
    return p;
}

tl::expected<std::size_t, WireError> check_key_values(const std::uint8_t* b, std::size_t p,
                                                      std::size_t end, bool ascending,
                                                      Errc error) noexcept {
    long last_key = -1;
    while (p < end) {
        if (p + 4 > end) {
            return fail_at(error, p);
        }
        const std::uint16_t key = load_u16(b + p);
        const std::size_t len = load_u16(b + p + 2);
        if (p + 4 + len > end || (ascending && static_cast<long>(key) <= last_key)) {
            return fail_at(error, p);
        }
        last_key = key;
        p += 4 + len;
    }
    return p;
}

}  // namespace

const Layout& layout_for(RrType type) noexcept {
    switch (type) {
        case RrType::a: return kA;
        case RrType::aaaa: return kAaaa;
        case RrType::ns:
        case RrType::md:
        case RrType::mf:
        case RrType::cname:
        case RrType::mb:
        case RrType::mg:
        case RrType::mr:
        case RrType::ptr: return kOneName;
        case RrType::soa: return kSoa;
        case RrType::minfo: return kTwoNames;
        case RrType::mx: return kMx;
        case RrType::txt: return kTxt;
        case RrType::hinfo: return kHinfo;
        case RrType::rp: return kRp;
        case RrType::afsdb: return kU16Name;
        case RrType::sig: return kSig;
        case RrType::px: return kPx;
        case RrType::nxt: return kNxt;
        case RrType::srv: return kSrv;
        case RrType::naptr: return kNaptr;
        case RrType::kx: return kKx;
        case RrType::dname: return kDname;
        case RrType::opt: return kOpt;
        case RrType::ds:
        case RrType::dnskey:
        case RrType::uri: return kKeyLike;
        case RrType::rrsig: return kRrsig;
        case RrType::nsec: return kNsec;
        case RrType::nsec3: return kNsec3;
        case RrType::nsec3param: return kNsec3Param;
        case RrType::tlsa: return kTlsa;
        case RrType::svcb:
        case RrType::https: return kSvcb;
        case RrType::caa: return kCaa;
        case RrType::wks: return kWks;
        default: break;
    }
    if (static_cast<std::uint16_t>(type) == 21) {  // RT (RFC 1183): preference + host
        return kU16Name;
    }
    return kOpaque;
}

tl::expected<FieldSpans, WireError> walk_rdata(std::span<const std::uint8_t> msg, std::size_t pos,
                                               std::size_t length, const Layout& layout,
                                               SuffixCache* cache, bool uncompressed) noexcept {
    const std::uint8_t* b = msg.data();
    const std::size_t end = pos + length;
    FieldSpans spans;
    if (layout.count == 1 && layout.fields[0].kind == K::fixed) {  // A, AAAA: the common case
        if (length != layout.fields[0].size) {
            return fail_at(Errc::rdata_length, pos);
        }
        spans.at[0] = static_cast<std::uint16_t>(pos);
        spans.at[1] = static_cast<std::uint16_t>(end);
        return spans;
    }
    std::size_t p = pos;
    std::size_t names = 0;
    const Compression compression = (uncompressed || layout.names == NamePolicy::plain)
                                        ? Compression::forbidden
                                        : Compression::allowed;
    for (std::size_t i = 0; i < layout.count; ++i) {
        spans.at[i] = static_cast<std::uint16_t>(p);
        const Field f = layout.fields[i];
        tl::expected<std::size_t, WireError> next = p;
        switch (f.kind) {
            case K::name: {
                auto info = decode_name(msg, p, end, cache, compression);
                if (!info) {
                    return tl::unexpected(info.error());
                }
                if (names < spans.names.size()) {
                    spans.names[names] = info->view;
                }
                ++names;
                next = info->end;
                break;
            }
            case K::fixed:
                if (p + f.size > end) {
                    return fail_at(Errc::rdata_length, p);
                }
                next = p + f.size;
                break;
            case K::char_string: next = check_char_string(b, p, end); break;
            case K::char_strings: do { next = check_char_string(b, *next, end);
                } while (next && *next < end);
                break;
            case K::rest: next = end; break;
            case K::type_bitmap: next = check_type_bitmap(b, p, end); break;
            case K::edns_options:
                next = check_key_values(b, p, end, false, Errc::bad_edns_option);
                break;
            case K::svc_params:
                next = check_key_values(b, p, end, true, Errc::bad_svc_param);
                break;
            case K::caa_tag:
                next = check_char_string(b, p, end);
                if (next && b[p] == 0) {
                    return fail_at(Errc::bad_caa_tag, p);
                }
                for (std::size_t k = p + 1; next && k < *next; ++k) {
                    if (!is_alnum(b[k])) {
                        return fail_at(Errc::bad_caa_tag, k);
                    }
                }
                break;
            case K::hash:
                next = check_char_string(b, p, end);
                if (next && b[p] == 0) {
                    return fail_at(Errc::rdata_length, p);
                }
                break;
        }
        if (!next) {
            return tl::unexpected(next.error());
        }
        p = *next;
    }
    if (p != end) {
        return fail_at(Errc::rdata_length, p);
    }
    spans.at[layout.count] = static_cast<std::uint16_t>(end);
    return spans;
}

}  // namespace moat::wire::detail
