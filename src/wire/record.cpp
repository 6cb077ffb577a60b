#include "moat/wire/record.hpp"

#include <algorithm>
#include <cstring>

#include "moat/core/bytes.hpp"
#include "rdata_layout.hpp"

namespace moat::wire {

tl::expected<std::size_t, WireError> decompress_rdata(const RecordView& rr,
                                                      std::span<std::uint8_t> out) noexcept {
    if (detail::empty_rdata_allowed(rr.rclass, rr.rdata_length)) {
        return 0;
    }
    const detail::Layout& layout = detail::layout_for(rr.type);
    auto fields = detail::walk_rdata(rr.message, rr.rdata_offset, rr.rdata_length, layout, nullptr);
    if (!fields) {
        return tl::unexpected(fields.error());
    }
    std::size_t size = 0;
    std::size_t name_index = 0;
    for (std::size_t i = 0; i < layout.count; ++i) {
        const bool is_name = layout.fields[i].kind == detail::FieldKind::name;
        // The walker keeps two names; no layout has more.
        const NameView name = is_name ? fields->names[name_index++] : NameView();
        const std::size_t n = is_name ? name.length() : fields->at[i + 1] - fields->at[i];
        if (size + n > out.size()) {
            return tl::unexpected(WireError{Errc::no_space, fields->at[i]});
        }
        if (is_name) {
            name.copy_to(out.data() + size);
        } else if (n > 0) {
            std::memcpy(out.data() + size, rr.message.data() + fields->at[i], n);
        }
        size += n;
    }
    return size;
}

tl::expected<Record, WireError> to_record(const RecordView& rr) {
    Record record;
    record.owner = Name::from_view(rr.owner);
    record.type = rr.type;
    record.rclass = rr.rclass;
    record.ttl = rr.ttl;
    // Each name may grow from a 2-octet pointer to 255 octets; two names at most per layout.
    record.rdata.resize(rr.rdata_length + 2U * kMaxNameLength);
    auto size = decompress_rdata(rr, record.rdata);
    if (!size) {
        return tl::unexpected(size.error());
    }
    record.rdata.resize(*size);
    return record;
}

namespace encode {

std::vector<std::uint8_t> a(std::array<std::uint8_t, 4> address) {
    return {address.begin(), address.end()};
}

std::vector<std::uint8_t> aaaa(const std::array<std::uint8_t, 16>& address) {
    return {address.begin(), address.end()};
}

std::vector<std::uint8_t> name(const Name& target) {
    return {target.wire().begin(), target.wire().end()};
}

std::vector<std::uint8_t> mx(std::uint16_t preference, const Name& exchange) {
    // Sized once and copied into (not insert after a 2-octet vector: GCC 12's link-time
    // optimisation warns falsely about that reallocation).
    std::vector<std::uint8_t> out(2 + exchange.wire().size());
    store_u16(out.data(), preference);
    std::copy(exchange.wire().begin(), exchange.wire().end(), out.begin() + 2);
    return out;
}

tl::expected<std::vector<std::uint8_t>, WireError> txt(std::span<const std::string_view> strings) {
    std::vector<std::uint8_t> out;
    for (const std::string_view s : strings) {
        if (s.size() > 255 || out.size() + 1 + s.size() > 0xFFFF) {
            return tl::unexpected(
                WireError{Errc::bad_argument, static_cast<std::uint32_t>(out.size())});
        }
        out.push_back(static_cast<std::uint8_t>(s.size()));
        out.insert(out.end(), s.begin(), s.end());
    }
    if (out.empty()) {
        out.push_back(0);  // TXT needs at least one string; an empty one is the usual stand-in
    }
    return out;
}

std::vector<std::uint8_t> soa(const Name& mname, const Name& rname, std::uint32_t serial,
                              std::uint32_t refresh, std::uint32_t retry, std::uint32_t expire,
                              std::uint32_t minimum) {
    std::vector<std::uint8_t> out(mname.wire().begin(), mname.wire().end());
    out.insert(out.end(), rname.wire().begin(), rname.wire().end());
    const std::size_t at = out.size();
    out.resize(at + 20);
    store_u32(out.data() + at, serial);
    store_u32(out.data() + at + 4, refresh);
    store_u32(out.data() + at + 8, retry);
    store_u32(out.data() + at + 12, expire);
    store_u32(out.data() + at + 16, minimum);
    return out;
}

std::vector<std::uint8_t> srv(std::uint16_t priority, std::uint16_t weight, std::uint16_t port,
                              const Name& target) {
    std::vector<std::uint8_t> out(6 + target.wire().size());  // sized once, as in mx()
    store_u16(out.data(), priority);
    store_u16(out.data() + 2, weight);
    store_u16(out.data() + 4, port);
    std::copy(target.wire().begin(), target.wire().end(), out.begin() + 6);
    return out;
}

}  // namespace encode
}  // namespace moat::wire
