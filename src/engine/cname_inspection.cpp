#include "cname_inspection.hpp"

#include "moat/wire/message_view.hpp"
#include "moat/wire/rdata.hpp"

namespace moat::engine {

filter::Verdict blocked_cname_target(std::span<const std::uint8_t> answer,
                                     const filter::Snapshot& snapshot,
                                     const filter::ListSelection* selection) noexcept {
    const auto view = wire::MessageView::parse(answer);
    if (!view) {
        return {};
    }
    for (const wire::RecordView& rr : view->answers()) {
        if (rr.type != wire::RrType::cname) {
            continue;
        }
        const auto target = wire::rdata::read_name(rr);
        if (!target) {
            continue;
        }
        const filter::Verdict v = snapshot.match(target->name, selection);
        if (v.action == filter::Action::blocked) {
            return v;
        }
    }
    return {};
}

}  // namespace moat::engine
