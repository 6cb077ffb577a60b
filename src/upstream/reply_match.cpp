#include "reply_match.hpp"

#include <optional>

#include "moat/core/bytes.hpp"
#include "moat/wire/message_view.hpp"

namespace moat::upstream {

const char* to_text(ReplyCheck check) noexcept {
    switch (check) {
        case ReplyCheck::accept: return "accepted";
        case ReplyCheck::error_rcode: return "error rcode";
        case ReplyCheck::truncated: return "truncated";
        case ReplyCheck::wrong_id: return "wrong ID";
        case ReplyCheck::wrong_question: return "wrong question";
        case ReplyCheck::malformed: return "malformed";
    }
    return "unknown";
}

namespace {

/// The question of a query we wrote: one question, its name uncompressed at offset 12.
struct SentQuestion {
    std::span<const std::uint8_t> name;
    std::uint16_t qtype = 0;
    std::uint16_t qclass = 0;
};

/// Reads the question of `query` without parsing the whole message: every query checked here is
/// one we wrote, and a parse of it took more instructions than the rest of the check. Nullopt
/// when `query` is not such a query.
std::optional<SentQuestion> sent_question(std::span<const std::uint8_t> query) noexcept {
    if (query.size() < wire::kHeaderSize || load_u16(query.data() + 4) != 1) {
        return std::nullopt;
    }
    std::size_t at = wire::kHeaderSize;
    while (at < query.size() && query[at] != 0) {
        if (query[at] > wire::kMaxLabelLength) {
            return std::nullopt;  // a pointer or a reserved label type: not a name we wrote
        }
        at += 1U + query[at];
    }
    const std::size_t name_length = at + 1 - wire::kHeaderSize;
    if (at + 5 > query.size() || name_length > wire::kMaxNameLength) {
        return std::nullopt;
    }
    return SentQuestion{query.subspan(wire::kHeaderSize, name_length),
                        load_u16(query.data() + at + 1), load_u16(query.data() + at + 3)};
}

}  // namespace

ReplyCheck check_reply(std::span<const std::uint8_t> query,
                       std::span<const std::uint8_t> reply) noexcept {
    const auto sent = sent_question(query);
    auto got = wire::MessageView::parse(reply);
    if (!sent || !got || !got->header().qr()) {
        return ReplyCheck::malformed;
    }
    if (got->header().id != load_u16(query.data())) {
        return ReplyCheck::wrong_id;
    }
    const wire::Question* q = got->question();
    if (got->header().qdcount != 1 || q == nullptr || wire::to_u16(q->qtype) != sent->qtype ||
        wire::to_u16(q->qclass) != sent->qclass || !q->qname.iequals(sent->name)) {
        return ReplyCheck::wrong_question;
    }
    if (got->header().tc()) {
        return ReplyCheck::truncated;
    }
    // Every record must parse: a broken answer is ignored like a forgery, so a good answer
    // arriving later (or from the next server) still wins.
    auto records = got->records();
    for (const wire::RecordView& rr : records) {
        (void)rr;
    }
    if (records.error()) {
        return ReplyCheck::malformed;
    }
    switch (static_cast<wire::Rcode>(got->header().rcode_low())) {
        case wire::Rcode::noerror:
        case wire::Rcode::nxdomain: return ReplyCheck::accept;
        default: return ReplyCheck::error_rcode;
    }
}

}  // namespace moat::upstream
