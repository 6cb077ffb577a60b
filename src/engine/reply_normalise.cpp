#include "reply_normalise.hpp"

#include <array>
#include <cstring>

#include "moat/wire/header.hpp"
#include "moat/wire/message_builder.hpp"
#include "moat/wire/record.hpp"

namespace moat::engine {
namespace {

using wire::Header;

/// Octets from the start of a record owned by the root (one octet) to its RDATA.
constexpr std::size_t kRootRecordToRdata = 11;

/// Our flags on a stored answer. Not the upstream's AA: we answer from what it said or from the
/// cache, and are no authority for the name (RFC 1035 §4.1.1); unbound clears it too. The
/// upstream's AD stays, and its rcode (the low four bits; an extended one went with its OPT).
std::uint16_t stored_flags(const Header& upstream) noexcept {
    return static_cast<std::uint16_t>(Header::kQr | Header::kRa | Header::kRd |
                                      (upstream.flags & Header::kAd) | upstream.rcode_low());
}

/// Notes what the CNAME and rebinding checks look for in an answer-section record.
void note(const wire::RecordView& rr, NormalisedReply& out) noexcept {
    if (rr.section != wire::Section::answer) {
        return;
    }
    out.has_cname = out.has_cname || rr.type == wire::RrType::cname;
    out.has_address =
        out.has_address || rr.type == wire::RrType::a || rr.type == wire::RrType::aaaa;
}

/// True when `view` (one question) asks the key's question, in any letter case, and nothing
/// else: its records start right after it.
bool question_is_keys(const wire::MessageView& view, const cache::CacheKey& key) noexcept {
    return view.answer_offset() == wire::kHeaderSize + key.name().size() + 4 &&
           key.is_question_of(view.bytes());
}

}  // namespace

NormalisedReply copy_reply(const wire::MessageView& view, const cache::CacheKey& key,
                           std::vector<std::uint8_t>& scratch, std::vector<std::uint8_t>& rdata,
                           cache::RecordWalk* walk) {
    if (!question_is_keys(view, key)) {
        return {};
    }
    const std::span<const std::uint8_t> msg = view.bytes();
    NormalisedReply out;
    std::size_t end = view.answer_offset();  // of the last record kept
    bool opt_seen = false;
    rdata.resize(wire::kMaxMessageSize);
    if (walk != nullptr) {
        walk->clear();
    }
    auto records = view.records();
    for (const wire::RecordView& rr : records) {
        if (opt_seen) {
            return {};  // a record after the OPT: cutting the OPT out would move it
        }
        if (rr.type == wire::RrType::opt) {
            // Cut off only as the last record, owned by a one-octet root right after the record
            // before. Nothing can point into it: every compression pointer points backwards.
            const std::size_t start = rr.rdata_offset - kRootRecordToRdata;
            if (rr.section != wire::Section::additional || rr.rdata_offset < kRootRecordToRdata ||
                start != end || msg[start] != 0) {
                return {};
            }
            opt_seen = true;
            continue;
        }
        // The check of the RDATA against its type's layout that the rebuild's builder makes.
        if (!wire::decompress_rdata(rr, rdata)) {
            return {};
        }
        note(rr, out);
        if (walk != nullptr) {
            // The copy keeps every record at its offset. An SOA that does not read leaves the
            // walk malformed: the client still gets the answer, the cache refuses it.
            (void)walk->add(rr, records.suffix_cache());
        }
        end = static_cast<std::size_t>(rr.rdata_offset) + rr.rdata_length;
    }
    if (records.error()) {
        return {};
    }
    scratch.resize(wire::kMaxMessageSize);
    std::memcpy(scratch.data(), msg.data(), end);
    Header h = view.header();
    h.id = 0;
    h.flags = stored_flags(view.header());
    h.arcount = static_cast<std::uint16_t>(h.arcount - (opt_seen ? 1U : 0U));
    h.store(scratch.data());
    // The key's lower-cased question; answer owners that point at it read lower case too, as
    // the rebuild's compression makes them.
    std::memcpy(scratch.data() + wire::kHeaderSize, key.name().data(), key.name().size());
    out.size = end;
    out.walked = walk != nullptr;
    return out;
}

NormalisedReply rebuild_reply(const wire::MessageView& view, const cache::CacheKey& key,
                              std::vector<std::uint8_t>& scratch,
                              std::vector<std::uint8_t>& rdata) noexcept {
    scratch.resize(wire::kMaxMessageSize);
    rdata.resize(wire::kMaxMessageSize);
    wire::MessageBuilder b(std::span<std::uint8_t>(scratch), wire::kMaxMessageSize);
    b.header().id = 0;
    b.header().flags = stored_flags(view.header());
    b.set_rcode(static_cast<wire::Rcode>(view.header().rcode_low()));
    if (!b.add_question(key.name(), static_cast<wire::RrType>(key.qtype()),
                        static_cast<wire::RrClass>(key.qclass()))) {
        return {};
    }
    NormalisedReply out;
    // NOLINTNEXTLINE(cppcoreguidelines-pro-type-member-init): copy_to() writes what is read
    std::array<std::uint8_t, wire::kMaxNameLength> owner;
    auto records = view.records();
    for (const wire::RecordView& rr : records) {
        if (rr.type == wire::RrType::opt) {
            continue;
        }
        const std::size_t owner_length = rr.owner.copy_to(owner.data());
        auto n = wire::decompress_rdata(rr, rdata);
        if (!n) {
            return {};
        }
        if (!b.add_record(rr.section, std::span(owner.data(), owner_length), rr.type, rr.rclass,
                          rr.ttl, std::span(rdata.data(), *n))) {
            return {};
        }
        note(rr, out);
    }
    if (records.error()) {
        return {};
    }
    auto done = b.finish();
    if (!done) {
        return {};
    }
    out.size = done->size();
    return out;
}

NormalisedReply normalise_reply(std::span<const std::uint8_t> reply, const cache::CacheKey& key,
                                std::vector<std::uint8_t>& scratch,
                                std::vector<std::uint8_t>& rdata, cache::RecordWalk* walk) {
    auto view = wire::MessageView::parse(reply);
    if (!view || !view->header().qr() || view->header().qdcount != 1) {
        return {};
    }
    if (NormalisedReply copied = copy_reply(*view, key, scratch, rdata, walk); copied.size != 0) {
        return copied;
    }
    return rebuild_reply(*view, key, scratch, rdata);
}

}  // namespace moat::engine
