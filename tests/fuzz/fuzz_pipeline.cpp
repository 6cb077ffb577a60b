// The whole socket-free query pipeline, the way a listener and the upstream client drive it:
// query bytes -> Engine::decide() -> an answer, or a forward whose upstream reply (made from the
// rest of the input) goes through complete(), or whose upstream failure goes through fail().
// Then the same query is asked again after the fake clock moved, so cache hits, TTL ageing,
// serve-stale, the kids group's pause and schedule run too. The engine is fuzz_engine_world.hpp's:
// a blocklist in every format, local records, a client group, a cache; no socket, no real clock.
//
// Why: the other targets fuzz the parsers one at a time; this one fuzzes what the engine writes
// back to a client from any query and any upstream reply, which is where a size or offset
// mistake turns into an overflow of the listener's buffer or a malformed answer.
//
// Input: control (1 octet), query length (2 octets, big-endian), the query, then the reply
// material. Control bits 0-1: transport (udp, tcp, dot, doh); bits 2-3: client (default group,
// kids group, outside the ACL, v4-mapped); bit 4: the material is the whole reply, verbatim
// (else: its first 12 octets are the reply's header, with QR set and one question, then the
// upstream query's question, then the rest as records); bit 5: fail() instead of complete();
// bits 6-7: how far the clock moves before the second ask (0, 1 s, 1 h, 2 days; a hit then in
// the last tenth of the entry's TTL also asks for its refresh, which gets the same reply). A
// query with an odd ID runs against an optimistic cache (cache.optimistic: an expired entry is
// served at once and asks for its refresh too); the control octet has no bit left.
//
// Checked: a query of at least a header with QR clear is never dropped (but by the rate
// limiter, when it has no question to answer), anything else always is; complete() and fail()
// always answer; every answer lies inside `out`, within the UDP limit (512 without EDNS, our 1232
// with it), passes wire::validate(), has QR set and the query's ID, and echoes the query's question
// byte for byte when it has one; the upstream query validates, has ID 0 and the query's question in
// lower case.
#include <algorithm>
#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "fuzz_check.hpp"
#include "fuzz_engine_world.hpp"
#include "moat/core/bytes.hpp"
#include "moat/wire/header.hpp"
#include "moat/wire/message_view.hpp"
#include "moat/wire/validate.hpp"
#include "moat/wire/wire_error.hpp"

namespace {

using moat::engine::Action;
using moat::engine::Transport;
using moat::wire::kHeaderSize;

constexpr std::size_t kOurUdpSize = 1232;  // EngineOptions::udp_payload_size's default
constexpr std::array<std::chrono::seconds, 4> kClockSteps{
    std::chrono::seconds(0), std::chrono::seconds(1), std::chrono::hours(1),
    std::chrono::hours(48)};

struct Control {
    Transport transport = Transport::udp;
    unsigned client = 0;
    bool verbatim_reply = false;
    bool upstream_fails = false;
    std::chrono::seconds clock_step{};

    static Control of(std::uint8_t bits) {
        return {static_cast<Transport>(bits & 3U), (bits >> 2U) & 3U, (bits & 0x10U) != 0,
                (bits & 0x20U) != 0, kClockSteps[bits >> 6U]};
    }
};

moat::engine::Client client_of(const Control& c) {
    switch (c.client) {
        case 0: return moat::fuzz::default_group_client(c.transport);
        case 1: return moat::fuzz::kids_group_client(c.transport);
        case 2: return moat::fuzz::refused_client(c.transport);
        default: return moat::fuzz::mapped_client(c.transport);
    }
}

std::vector<std::uint8_t> wire_of(moat::wire::NameView name) {
    std::vector<std::uint8_t> out(name.length());
    (void)name.copy_to(out.data());
    return out;
}

std::vector<std::uint8_t> lower(std::vector<std::uint8_t> name) {
    // Label lengths are at most 63, below 'A', so lowering the whole wire form is safe.
    for (auto& c : name) {
        c = (c >= 'A' && c <= 'Z') ? static_cast<std::uint8_t>(c + ('a' - 'A')) : c;
    }
    return name;
}

/// What the checks need to know about the client's query.
struct QueryFacts {
    bool answerable = false;  ///< a whole header with QR clear
    std::uint16_t id = 0;
    bool has_opt = false;  ///< an OPT record was read anywhere: EDNS may be on
    std::optional<std::vector<std::uint8_t>> qname;  ///< as spelled, when the query parses
    std::uint16_t qtype = 0;
    std::uint16_t qclass = 0;

    static QueryFacts of(std::span<const std::uint8_t> query) {
        QueryFacts f;
        if (query.size() < kHeaderSize) {
            return f;
        }
        const auto header = moat::wire::Header::load(query.data());
        f.answerable = !header.qr();
        f.id = header.id;
        const auto view = moat::wire::MessageView::parse(query);
        if (!view) {
            return f;
        }
        if (const auto* q = view->question()) {
            f.qname = wire_of(q->qname);
            f.qtype = moat::wire::to_u16(q->qtype);
            f.qclass = moat::wire::to_u16(q->qclass);
        }
        auto records = view->records();
        for (const auto& rr : records) {
            f.has_opt = f.has_opt || rr.type == moat::wire::RrType::opt;
        }
        return f;
    }
};

void check_answer(const QueryFacts& query, const Control& control, const moat::engine::Decision& d,
                  std::span<const std::uint8_t> out, const char* step) {
    MOAT_FUZZ_CHECK(d.action == Action::respond, step);
    MOAT_FUZZ_CHECK(d.size >= kHeaderSize && d.size <= out.size(),
                    std::string(step) + ": size " + std::to_string(d.size));
    const std::size_t limit = control.transport != Transport::udp ? out.size()
                              : query.has_opt                     ? kOurUdpSize
                                                                  : moat::wire::kClassicUdpSize;
    MOAT_FUZZ_CHECK(d.size <= limit, std::string(step) + ": " + std::to_string(d.size) +
                                         " octets over UDP, limit " + std::to_string(limit));
    const auto answer = out.first(d.size);
    const moat::wire::Status valid = moat::wire::validate(answer);
    MOAT_FUZZ_CHECK(valid.has_value(),
                    std::string(step) + ": " + moat::wire::describe(valid.error()));
    const auto view = moat::wire::MessageView::parse(answer);
    MOAT_FUZZ_CHECK(view.has_value(), step);
    MOAT_FUZZ_CHECK(view->header().qr(), step);
    MOAT_FUZZ_CHECK(view->header().id == query.id, step);
    if (const auto* q = view->question()) {
        MOAT_FUZZ_CHECK(query.qname.has_value(), std::string(step) + ": a question from nowhere");
        MOAT_FUZZ_CHECK(wire_of(q->qname) == *query.qname,
                        std::string(step) + ": question name " + q->qname.to_text());
        MOAT_FUZZ_CHECK(moat::wire::to_u16(q->qtype) == query.qtype, step);
        MOAT_FUZZ_CHECK(moat::wire::to_u16(q->qclass) == query.qclass, step);
    }
}

void check_upstream_query(const QueryFacts& query, const moat::engine::Pending& pending) {
    const auto& upstream = pending.upstream_query;
    const moat::wire::Status valid = moat::wire::validate(upstream);
    MOAT_FUZZ_CHECK(valid.has_value(), "upstream query: " + moat::wire::describe(valid.error()));
    const auto view = moat::wire::MessageView::parse(upstream);
    MOAT_FUZZ_CHECK(view.has_value());
    MOAT_FUZZ_CHECK(view->header().id == 0 && !view->header().qr());
    const moat::wire::Question* question = view->question();
    MOAT_FUZZ_CHECK(question != nullptr && query.qname.has_value());
    MOAT_FUZZ_CHECK(wire_of(question->qname) == lower(*query.qname), question->qname.to_text());
    MOAT_FUZZ_CHECK(pending.client_id == query.id);
}

/// The upstream's reply: the material itself, or a header from it + the upstream query's
/// question + the rest of it, so the fuzzer need not guess the question to reach the records.
std::vector<std::uint8_t> reply_from(const Control& control, const moat::engine::Pending& pending,
                                     std::span<const std::uint8_t> material) {
    if (control.verbatim_reply) {
        return {material.begin(), material.end()};
    }
    std::vector<std::uint8_t> reply(kHeaderSize, 0);
    const std::size_t header_part = std::min(material.size(), kHeaderSize);
    std::copy_n(material.begin(), header_part, reply.begin());
    material = material.subspan(header_part);
    reply[2] = static_cast<std::uint8_t>(reply[2] | 0x80U);  // QR
    moat::store_u16(reply.data() + 4, 1);                    // QDCOUNT
    const auto view = moat::wire::MessageView::parse(pending.upstream_query);
    MOAT_FUZZ_CHECK(view.has_value());
    const auto& question = pending.upstream_query;
    reply.insert(reply.end(), question.begin() + kHeaderSize,
                 question.begin() + static_cast<std::ptrdiff_t>(view->answer_offset()));
    reply.insert(reply.end(), material.begin(), material.end());
    return reply;
}

/// decide(), and for a forward complete() or fail(); checks every answer.
void ask(moat::engine::Engine& engine, const Control& control, const QueryFacts& facts,
         std::span<const std::uint8_t> query, std::span<const std::uint8_t> reply_material,
         bool upstream_fails, std::span<std::uint8_t> out) {
    moat::engine::Pending pending;
    const auto d = engine.decide(query, client_of(control), out, pending);
    if (!facts.answerable) {
        MOAT_FUZZ_CHECK(d.action == Action::drop, "decide: answered a non-query");
        return;
    }
    // The rate limiter drops what it cannot answer (no question); nothing else drops a query.
    MOAT_FUZZ_CHECK(d.action != Action::drop || d.outcome == moat::engine::Outcome::rate_limited,
                    "decide: dropped a query");
    if (d.action != Action::forward) {
        if (d.action == Action::respond) {
            check_answer(facts, control, d, out, "decide");
        }
        if (d.refresh) {  // a cached answer near (or past) expiry: its refresh gets the material
            check_upstream_query(facts, pending);
            engine.refresh(pending, reply_from(control, pending, reply_material));
        }
        return;
    }
    check_upstream_query(facts, pending);
    if (upstream_fails) {
        check_answer(facts, control, engine.fail(pending, out), out, "fail");
        return;
    }
    const auto reply = reply_from(control, pending, reply_material);
    check_answer(facts, control, engine.complete(pending, reply, out), out, "complete");
}

std::vector<std::uint8_t>& out_buffer() {
    static std::vector<std::uint8_t> out(moat::wire::kMaxMessageSize);
    return out;
}

const moat::filter::SnapshotPublisher& publisher() {
    static const moat::filter::SnapshotPublisher kPublisher(moat::fuzz::fixed_snapshot());
    return kPublisher;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::span<const std::uint8_t> input(data, size);
    const Control control = Control::of(size > 0 ? input[0] : 0);
    const std::size_t announced = size >= 3 ? moat::load_u16(data + 1) : 0;
    const auto rest = input.subspan(std::min<std::size_t>(size, 3));
    const auto query = rest.first(std::min(announced, rest.size()));
    const auto reply_material = rest.subspan(query.size());
    const QueryFacts facts = QueryFacts::of(query);

    const bool optimistic = query.size() >= 2 && (query[1] & 1U) != 0;
    moat::fuzz::World world(publisher(), optimistic);
    auto& out = out_buffer();
    ask(world.engine, control, facts, query, reply_material, control.upstream_fails, out);
    // Again, later: a cache hit, an aged or stale entry, or a second forward whose upstream
    // fails, so serve-stale is tried.
    world.clock.advance(control.clock_step);
    ask(world.engine, control, facts, query, reply_material, true, out);

    if (facts.qname) {  // what the API's "explain" says about the same name
        if (const auto name = moat::wire::Name::from_wire(lower(*facts.qname))) {
            (void)world.engine.explain(*name, client_of(control));
        }
    }
    return 0;
}
