#include "reply_match.hpp"

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

ReplyCheck check_reply(std::span<const std::uint8_t> query,
                       std::span<const std::uint8_t> reply) noexcept {
    auto sent = wire::MessageView::parse(query);
    auto got = wire::MessageView::parse(reply);
    if (!sent || !got || !got->header().qr() || sent->question() == nullptr) {
        return ReplyCheck::malformed;
    }
    if (got->header().id != sent->header().id) {
        return ReplyCheck::wrong_id;
    }
    const wire::Question* q = got->question();
    const wire::Question* s = sent->question();
    if (got->header().qdcount != 1 || q == nullptr || q->qtype != s->qtype ||
        q->qclass != s->qclass || !q->qname.iequals(s->qname)) {
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
