// EDNS(0) Padding: find the OPT record, check its options, append one Padding option.
#include "moat/wire/padding.hpp"

#include <algorithm>
#include <optional>

#include "moat/core/bytes.hpp"
#include "moat/wire/rdata.hpp"

namespace moat::wire {
namespace {

/// Whether the OPT record `rr` carries a Padding option; nullopt when its options are malformed.
std::optional<bool> has_padding(const RecordView& rr) noexcept {
    auto opt = rdata::read_opt(rr);
    if (!opt) {
        return std::nullopt;
    }
    return std::ranges::any_of(
        opt->options, [](const rdata::KeyValue& kv) { return kv.key == kEdnsOptionPadding; });
}

}  // namespace

bool query_wants_padding(const MessageView& query) noexcept {
    if (query.header().arcount == 0) {
        return false;  // the usual query without EDNS: no section walk at all
    }
    auto additional = query.additional();
    for (const RecordView& rr : additional) {
        if (rr.type == RrType::opt) {
            return rr.owner.is_root() && has_padding(rr).value_or(false);
        }
    }
    return false;
}

bool query_wants_padding(std::span<const std::uint8_t> query) noexcept {
    auto view = MessageView::parse(query);
    return view && query_wants_padding(*view);
}

std::size_t pad_response(std::span<std::uint8_t> buffer, std::size_t length,
                         std::size_t block) noexcept {
    if (block == 0 || length > buffer.size() || length > kMaxMessageSize) {
        return length;
    }
    auto view = MessageView::parse(buffer.first(length));
    if (!view || view->header().arcount == 0) {
        return length;
    }
    // The OPT must be the last record and end the message: the option is appended right after
    // its RDATA, where nothing else may follow. A second OPT makes the message invalid anyway.
    auto additional = view->additional();
    std::optional<RecordView> opt;
    std::size_t opt_count = 0;
    bool last_is_opt = false;
    for (const RecordView& rr : additional) {
        last_is_opt = rr.type == RrType::opt;
        if (last_is_opt) {
            opt = rr;
            ++opt_count;
        }
    }
    if (additional.error() || additional.position() != length || !last_is_opt || opt_count != 1 ||
        !opt->owner.is_root()) {
        return length;
    }
    const std::optional<bool> padded_already = has_padding(*opt);
    if (!padded_already || *padded_already) {
        return length;
    }

    const std::size_t padded = padded_length(length, block);
    if (padded > buffer.size() || padded > kMaxMessageSize) {
        return length;
    }
    const std::size_t pad = padded - length - kPaddingOptionHeader;
    std::uint8_t* p = buffer.data() + length;
    store_u16(p, kEdnsOptionPadding);
    store_u16(p + 2, static_cast<std::uint16_t>(pad));
    std::fill_n(p + kPaddingOptionHeader, pad, std::uint8_t{0});
    // RDLENGTH sits just before the RDATA; it cannot overflow, as the message stays <= 65535.
    const std::size_t rdlength = opt->rdata_length + (padded - length);
    store_u16(buffer.data() + opt->rdata_offset - 2, static_cast<std::uint16_t>(rdlength));
    return padded;
}

}  // namespace moat::wire
