#include "moat/wire/validate.hpp"

#include "moat/wire/message_view.hpp"
#include "rdata_layout.hpp"

namespace moat::wire {

Status validate(std::span<const std::uint8_t> msg) noexcept {
    auto view = MessageView::parse(msg);
    if (!view) {
        return tl::unexpected(view.error());
    }
    RecordRange records = view->records();
    bool seen_opt = false;
    for (const RecordView& rr : records) {
        if (rr.type == RrType::opt) {
            if (rr.section != Section::additional || !rr.owner.is_root() || seen_opt) {
                return tl::unexpected(WireError{Errc::bad_opt, rr.owner.offset()});
            }
            seen_opt = true;
        } else if (detail::empty_rdata_allowed(rr.rclass, rr.rdata_length)) {
            continue;
        }
        auto fields = detail::walk_rdata(msg, rr.rdata_offset, rr.rdata_length,
                                         detail::layout_for(rr.type), records.suffix_cache());
        if (!fields) {
            return tl::unexpected(fields.error());
        }
    }
    if (records.error()) {
        return tl::unexpected(*records.error());
    }
    if (records.position() != msg.size()) {
        return tl::unexpected(
            WireError{Errc::trailing_data, static_cast<std::uint32_t>(records.position())});
    }
    return {};
}

}  // namespace moat::wire
