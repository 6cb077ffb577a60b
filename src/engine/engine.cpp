#include "moat/engine/engine.hpp"

#include <algorithm>
#include <array>
#include <cstring>
#include <optional>
#include <string_view>

#include "cname_inspection.hpp"
#include "forward_query.hpp"
#include "groups.hpp"
#include "moat/core/bytes.hpp"
#include "moat/engine/rate_limiter.hpp"
#include "moat/wire/header.hpp"
#include "moat/wire/message_view.hpp"
#include "name_match.hpp"
#include "query_edns.hpp"
#include "rebinding.hpp"
#include "reply_normalise.hpp"
#include "responses.hpp"
#include "special_names.hpp"

namespace moat::engine {
namespace {

using wire::Header;
using wire::Rcode;

constexpr std::uint16_t kAxfr = 252;  // zone transfers are for authoritative servers
constexpr std::uint16_t kIxfr = 251;
/// TTL of the RFC 8482 answer to ANY: long, so a client does not ask again soon.
constexpr std::uint32_t kMinimalAnyTtl = 3600;

/// The one record of an answer to ANY (RFC 8482 §4.2): HINFO with CPU "RFC8482" and an empty OS.
const std::vector<LocalRecord>& minimal_any_records() {
    // The length octet 7 is the size of "RFC8482"; the 0 after it is the empty OS string.
    // (Written as one list: GCC 12 at -O2 warns falsely about push_back/insert here.)
    static const std::vector<LocalRecord> kRecords{
        {wire::RrType::hinfo, {7, 'R', 'F', 'C', '8', '4', '8', '2', 0}}};
    return kRecords;
}

/// Reverse zones of addresses that never leave the home (RFC 6303 and RFC 6761 §6.3).
std::vector<wire::Name> private_reverse_zones() {
    std::vector<wire::Name> zones;
    for (std::string_view z :
         {"10.in-addr.arpa", "168.192.in-addr.arpa", "254.169.in-addr.arpa", "127.in-addr.arpa",
          "0.in-addr.arpa", "d.f.ip6.arpa", "8.e.f.ip6.arpa", "9.e.f.ip6.arpa", "a.e.f.ip6.arpa",
          "b.e.f.ip6.arpa"}) {
        zones.push_back(name_of(z));
    }
    for (int octet = 16; octet <= 31; ++octet) {
        zones.push_back(name_of(std::to_string(octet) + ".172.in-addr.arpa"));
    }
    for (int octet = 64; octet <= 127; ++octet) {  // CGNAT 100.64.0.0/10 (RFC 6598)
        zones.push_back(name_of(std::to_string(octet) + ".100.in-addr.arpa"));
    }
    return zones;
}

const wire::Name& localhost_name() {
    static const wire::Name kName = name_of("localhost");
    return kName;
}

ReplyTo reply_to(const Pending& p, std::uint16_t our_udp_size) {
    ReplyTo to;
    to.id = p.client_id;
    to.query_flags = p.client_flags;
    to.qname = p.qname.wire();
    to.qtype = static_cast<wire::RrType>(p.key.qtype());
    to.qclass = static_cast<wire::RrClass>(p.key.qclass());
    to.edns = p.edns;
    to.our_udp_size = our_udp_size;
    to.limit = answer_limit(p.transport, p.edns, our_udp_size);
    return to;
}

/// A query left without an answer, counted as `outcome`.
Decision dropped(Outcome outcome) {
    return {.action = Action::drop, .outcome = outcome, .verdict = {}};
}

/// An answer of `size` octets (none written: dropped), with the list rule behind it if any.
/// (Made in one expression, in place: a Decision filled in afterwards was copied through the
/// stack with wide loads over narrow stores, a store-forwarding stall on every cached answer.)
Decision respond(Outcome outcome, std::size_t size, const filter::Verdict& verdict = {}) {
    if (size == 0) {
        return {.action = Action::drop, .outcome = Outcome::dropped, .verdict = verdict};
    }
    return {.action = Action::respond, .outcome = outcome, .size = size, .verdict = verdict};
}

/// The same decision, recording the Extended DNS Error its answer was written with.
Decision with_ede(Decision d, ExtendedError ede) {
    if (d.action == Action::respond) {
        d.ede = static_cast<std::uint16_t>(ede);
    }
    return d;
}

}  // namespace

Engine::Engine(EngineOptions options, LocalZone local, const filter::SnapshotPublisher& snapshots,
               std::shared_ptr<cache::Cache> cache)
    : options_(std::move(options)),
      local_(std::move(local)),
      snapshots_(snapshots),
      snapshot_reader_(snapshots),
      cache_(std::move(cache)),
      private_reverse_zones_(private_reverse_zones()),
      special_(std::make_unique<SpecialNames>(options_.block_icloud_private_relay)),
      groups_(std::make_unique<Groups>(options_)) {
    // The loopback addresses have a name (RFC 6761 §6.3); a config PTR for them wins.
    if (local_.find(reverse_name(IpAddress::v4_of(127, 0, 0, 1)).wire()) == nullptr) {
        local_.add_name_record(reverse_name(IpAddress::v4_of(127, 0, 0, 1)), wire::RrType::ptr,
                               localhost_name());
    }
    IpAddress v6_loopback{{}, true};
    v6_loopback.bytes[15] = 1;
    if (local_.find(reverse_name(v6_loopback).wire()) == nullptr) {
        local_.add_name_record(reverse_name(v6_loopback), wire::RrType::ptr, localhost_name());
    }
    scratch_.resize(wire::kMaxMessageSize);
    rdata_buf_.resize(wire::kMaxMessageSize);
}

Engine::~Engine() = default;

bool Engine::blocking_paused(std::size_t group) const noexcept {
    return options_.pauses != nullptr && options_.pauses->any() && options_.clock != nullptr &&
           options_.pauses->paused(groups_->group(group).name, options_.clock->now());
}

bool Engine::allowed(const IpAddress& address) const noexcept {
    const IpAddress plain = address.unmapped();
    return std::any_of(options_.allowed_clients.begin(), options_.allowed_clients.end(),
                       [&](const Cidr& c) { return c.contains(plain); });
}

std::size_t Engine::route_of(std::span<const std::uint8_t> lower_qname) const noexcept {
    for (std::size_t i = 0; i < options_.conditional.size(); ++i) {
        for (const wire::Name& domain : options_.conditional[i].domains) {
            if (is_under(lower_qname, domain.wire())) {
                return i + 1;
            }
        }
    }
    return 0;
}

bool Engine::private_reverse(std::span<const std::uint8_t> lower_qname) const noexcept {
    // Every zone is under arpa, and nearly every forwarded name is not: one look at the name's
    // last octets spares it a walk of its labels for each of the 90 zones, which was a third of
    // decide()'s time on a miss. A label that merely ends in these octets takes the walk.
    constexpr std::array<std::uint8_t, 6> kArpaTail = {4, 'a', 'r', 'p', 'a', 0};
    if (lower_qname.size() < kArpaTail.size() ||
        !std::equal(kArpaTail.begin(), kArpaTail.end(), lower_qname.end() - kArpaTail.size())) {
        return false;
    }
    return std::any_of(private_reverse_zones_.begin(), private_reverse_zones_.end(),
                       [&](const wire::Name& z) { return is_under(lower_qname, z.wire()); });
}

Decision Engine::count(Decision d) noexcept {
    stats_.add(d.outcome);
    return d;
}

ReplyTo Engine::reply_to_query(const Header& qh, const wire::Question& q,
                               std::span<const std::uint8_t> qname,
                               Transport transport) const noexcept {
    ReplyTo to;
    to.id = qh.id;
    to.query_flags = qh.flags;
    to.qname = qname;
    to.qtype = q.qtype;
    to.qclass = q.qclass;
    to.our_udp_size = options_.udp_payload_size;
    to.limit = answer_limit(transport, {}, options_.udp_payload_size);
    return to;
}

void Engine::with_edns_if_valid(ReplyTo& to, const wire::MessageView& view,
                                Transport transport) const {
    // An EDNS query gets OPT back even in an error answer (RFC 6891 §7); an OPT we cannot read
    // or of a later version leaves the answer without one.
    if (auto edns = read_query_edns(view); edns && edns->version == 0) {
        to.edns = edns->client;
        to.limit = answer_limit(transport, to.edns, options_.udp_payload_size);
    }
}

Decision Engine::decide(std::span<const std::uint8_t> query, const Client& client,
                        std::span<std::uint8_t> out, Pending& pending) {
    if (query.size() < wire::kHeaderSize) {
        return count(dropped(Outcome::dropped));  // nothing to answer to
    }
    const Header qh = Header::load(query.data());
    if (qh.qr()) {
        return count(dropped(Outcome::dropped));  // never answer an answer
    }
    auto view = wire::MessageView::parse(query);
    RateLimiter* limiter = options_.rate_limiter;
    if (limiter != nullptr && options_.clock != nullptr && limiter->applies_to(client.address) &&
        !(limiter->options().action == RateLimitAction::truncate && is_stream(client.transport)) &&
        !limiter->admit(client.address, options_.clock->now())) {
        return count(rate_limited(qh, view ? &*view : nullptr, client, out));
    }
    if (!allowed(client.address)) {
        const wire::Question* question = view ? view->question() : nullptr;
        if (question == nullptr) {
            return count(respond(Outcome::refused, write_header_only(out, qh, Rcode::refused)));
        }
        const wire::Name qname = wire::Name::from_view(question->qname);
        ReplyTo to = reply_to_query(qh, *question, qname.wire(), client.transport);
        with_edns_if_valid(to, *view, client.transport);
        return count(with_ede(respond(Outcome::refused, write_empty(out, to, Rcode::refused, false,
                                                                    ExtendedError::prohibited)),
                              ExtendedError::prohibited));
    }
    if (!view) {
        return count(respond(Outcome::formerr, write_header_only(out, qh, Rcode::formerr)));
    }
    if (qh.opcode() != wire::Opcode::query || qh.qdcount != 1) {
        const bool notimp = qh.opcode() != wire::Opcode::query;
        const Rcode rcode = notimp ? Rcode::notimp : Rcode::formerr;
        const Outcome outcome = notimp ? Outcome::notimp : Outcome::formerr;
        const wire::Question* question = view->question();
        if (notimp && qh.qdcount == 1 && question != nullptr) {
            // Question and opcode echoed, and OPT when the query had one (RFC 6891 §7).
            const wire::Name qname = wire::Name::from_view(question->qname);
            ReplyTo to = reply_to_query(qh, *question, qname.wire(), client.transport);
            to.echo_opcode = true;
            with_edns_if_valid(to, *view, client.transport);
            return count(respond(outcome, write_empty(out, to, rcode)));
        }
        return count(respond(outcome, write_header_only(out, qh, rcode)));
    }
    const wire::Question* question = view->question();
    if (question == nullptr) {  // qdcount is 1, so never; stated for the compiler's sake
        return count(respond(Outcome::formerr, write_header_only(out, qh, Rcode::formerr)));
    }
    return count(answer_question(*view, *question, client, out, pending));
}

Decision Engine::rate_limited(const Header& qh, const wire::MessageView* view, const Client& client,
                              std::span<std::uint8_t> out) const {
    const RateLimitAction action = options_.rate_limiter->options().action;
    if (action == RateLimitAction::drop) {
        return dropped(Outcome::rate_limited);
    }
    const wire::Question* question = view != nullptr ? view->question() : nullptr;
    if (question == nullptr) {
        return dropped(Outcome::rate_limited);  // not worth an answer
    }
    const wire::Name qname = wire::Name::from_view(question->qname);
    ReplyTo to = reply_to_query(qh, *question, qname.wire(), client.transport);
    with_edns_if_valid(to, *view, client.transport);
    const bool truncate = action == RateLimitAction::truncate;
    const std::size_t size = write_empty(out, to, truncate ? Rcode::noerror : Rcode::refused);
    if (size == 0) {
        return dropped(Outcome::rate_limited);
    }
    if (truncate) {
        out[2] |= static_cast<std::uint8_t>(Header::kTc >> 8U);  // empty with TC: "ask over TCP"
    }
    return respond(Outcome::rate_limited, size);
}

Explanation Engine::explain(const wire::Name& name, const Client& client) {
    Explanation e;
    const std::size_t group = groups_->group_of(client);
    e.group = groups_->group(group).name;
    e.snapshot = snapshots_.current();
    filter::SuffixHashes hashes;
    hashes.compute(name.wire().data());
    if (special_->is_localhost(name.wire(), hashes) ||
        local_.find(name.wire(), hashes.whole()) != nullptr ||
        special_->classify(name.wire(), hashes) != SpecialAnswer::none) {
        e.local = true;  // the same order as answer_question(): local answers come first
        return e;
    }
    e.paused = blocking_paused(group);
    e.verdict = e.snapshot->match(name.view(), groups_->selection(group, e.snapshot));
    return e;
}

Decision Engine::answer_question(const wire::MessageView& view, const wire::Question& q,
                                 const Client& client, std::span<std::uint8_t> out,
                                 Pending& pending) {
    const Header& qh = view.header();
    // The client's spelling, echoed in the answer's question: read in place from the query.
    // (The decoder lets no pointer into a question's name, whose only octets before it are the
    // header's; the copy is for a view made some other way.)
    std::span<const std::uint8_t> qname = q.qname.contiguous_wire();
    wire::Name qname_copy;
    if (qname.empty()) {
        qname_copy = wire::Name::from_view(q.qname);
        qname = qname_copy.wire();
    }
    const wire::Name lower = wire::Name::from_view_lower(q.qname);
    // Valid for this query: nothing below reads snapshot_reader_ again.
    const std::shared_ptr<const filter::Snapshot>& snapshot = snapshot_reader_.current();
    // Every memory read of the blocklist and the cache starts as soon as its address is known,
    // the first here: with a large list or cache they miss the CPU's caches, and the checks
    // below (EDNS, local names) then run during their latency instead of before it. A local,
    // malformed or paused query wastes only the fetches.
    filter::SuffixHashes hashes;  // not zeroed: prefetch() sets what match_hashed() reads
    snapshot->prefetch(lower.wire().data(), hashes);

    ReplyTo to = reply_to_query(qh, q, qname, client.transport);
    auto edns = read_query_edns(view);
    if (!edns) {
        return respond(Outcome::formerr, write_empty(out, to, Rcode::formerr));
    }
    to.edns = edns->client;
    to.limit = answer_limit(client.transport, to.edns, options_.udp_payload_size);
    if (edns->version > 0) {  // RFC 6891 §6.1.3: we speak version 0 only
        return respond(Outcome::formerr, write_empty(out, to, Rcode::badvers));
    }
    if (wire::to_u16(q.qtype) == kAxfr || wire::to_u16(q.qtype) == kIxfr) {
        return respond(Outcome::notimp, write_empty(out, to, Rcode::notimp));
    }

    // The cache's first read (its key needs the DO bit).
    const std::size_t group = groups_->group_of(client);
    // read_query_edns() above read every record, so the key needs no second walk.
    cache::CacheKey key =
        cache::CacheKey::of_lowered_question(view, q, lower.wire(), to.edns.dnssec_ok);
    const GroupOptions& g = groups_->group(group);
    if (g.cache_partition != 0) {
        key = key.in_partition(g.cache_partition);
    }
    if (cache_) {
        cache_->prefetch(key);
    }
    // Second round: the directory words have arrived during the EDNS walk and the key's making;
    // the blocklist's keys and the cache's entry are fetched together, and the local tests run
    // while they come (the keys were the one round left waiting, 2026-12-04). The probe comes
    // first: a blocked or forwarded name's keys must not wait for the cache's slot.
    filter::MatchProbes probes;  // not zeroed: probe() sets what match_probed() reads
    snapshot->probe(hashes, probes);
    // False when no entry can hold the key: the cache is then not asked again.
    bool cache_may_hold = cache_ && cache_->prefetch_entry(key);
    bool miss_counted = false;

    // localhost and its subdomains never leave this host (RFC 6761 §6.3). These local tests
    // read the suffix hashes the blocklist's prefetch computed, not the name's octets.
    if (special_->is_localhost(lower.wire(), hashes)) {
        static const std::vector<LocalRecord> kLoopback = [] {
            LocalZone zone;
            IpAddress v6{{}, true};
            v6.bytes[15] = 1;
            zone.add_address(localhost_name(), IpAddress::v4_of(127, 0, 0, 1));
            zone.add_address(localhost_name(), v6);
            // Always found; the check is for GCC, which cannot see that and, once a unity build
            // inlines find() here, warns of a null dereference (-Wnull-dereference).
            const std::vector<LocalRecord>* added = zone.find(localhost_name().wire());
            return added != nullptr ? *added : std::vector<LocalRecord>{};
        }();
        return respond(Outcome::local,
                       write_local(out, to, kLoopback, nullptr, options_.local_ttl));
    }
    if (const auto* records = local_.find(lower.wire(), hashes.whole())) {
        return respond(Outcome::local, write_local(out, to, *records, &local_, options_.local_ttl));
    }
    switch (special_->classify(lower.wire(), hashes)) {
        case SpecialAnswer::nxdomain:
            return respond(Outcome::local, write_empty(out, to, Rcode::nxdomain, true));
        case SpecialAnswer::nodata:
            return respond(Outcome::local, write_empty(out, to, Rcode::noerror, true));
        case SpecialAnswer::none: break;
    }

    const bool paused = blocking_paused(group);
    const filter::ListSelection* selection = paused ? nullptr : groups_->selection(group, snapshot);
    // Lambdas: only a query the cache may answer evaluates them before the blocklist.
    const auto aaaa_filtered = [&] { return g.filter_aaaa && q.qtype == wire::RrType::aaaa; };
    const auto minimal_any = [&] {
        return options_.minimal_any && q.qtype == wire::RrType::any &&
               client.transport == Transport::udp;
    };
    // A name the cache holds an answer for, which this snapshot has passed before, needs no
    // blocklist decision: the cache is asked first and answers from the entry alone, and the
    // blocklist's keys are never compared. That is only so where the verdict is the snapshot's
    // alone (every list counts, no pause) and nothing between the check and the cache would
    // answer instead (AAAA filtered, a minimal ANY).
    const auto snapshot_mark = static_cast<std::uint32_t>(snapshot->serial());
    const bool cache_first = cache_may_hold && snapshot_mark != 0 && !paused &&
                             selection == nullptr && !aaaa_filtered() && !minimal_any();
    const std::uint32_t pass_mark = cache_first ? snapshot_mark : 0;

    // Called only where the cache is asked (cache_ is set there).
    const auto lookup_mode = [&] {
        return cache_->options().optimistic ? cache::LookupMode::optimistic
                                            : cache::LookupMode::fresh;
    };
    std::optional<cache::Hit> hit;
    if (cache_first) {
        if (auto found = cache_->lookup_if_passed(key, qh.id, out, lookup_mode(), pass_mark)) {
            hit = *found;  // the verdict is none, as when the mark was noted
        } else {
            cache_may_hold = found.error() == cache::Errc::unchecked;
            miss_counted = !cache_may_hold;
        }
    }
    const filter::Verdict verdict =
        hit || paused
            ? filter::Verdict{}
            : snapshot->match_probed(lower.wire().data(), hashes, probes, selection, &regex_memo_);
    if (verdict.action == filter::Action::blocked) {
        to.ede_text = ede_text_for(*snapshot, verdict);
        Decision d =
            with_ede(respond(Outcome::blocked, write_blocked(out, to, groups_->blocking(group))),
                     ExtendedError::blocked);
        d.verdict = verdict;
        return d;
    }
    if (aaaa_filtered()) {  // never with a hit: the cache was not asked first
        return respond(Outcome::local, write_empty(out, to, Rcode::noerror, true));
    }
    if (minimal_any()) {
        return respond(Outcome::local,
                       write_local(out, to, minimal_any_records(), nullptr, kMinimalAnyTtl));
    }

    // What forwarding the query upstream needs later, when its answer comes.
    const auto prepare_forward = [&](std::size_t route) {
        pending.client_id = qh.id;
        pending.client_flags = qh.flags;
        pending.qname = wire::Name::from_view(q.qname);
        pending.key = key.without_echo();  // the query's buffer is reused before the answer
        pending.edns = to.edns;
        pending.transport = client.transport;
        pending.route = route != 0 ? route : g.route;  // conditional forwards win over a group's
        pending.group = group;
        pending.verdict = verdict;
        const bool pass_ecs = !options_.strip_ecs && !edns->client_subnet.empty();
        build_forward_query(pending.key, qh.cd(), options_.udp_payload_size,
                            pass_ecs ? edns->client_subnet : std::span<const std::uint8_t>{},
                            pending.upstream_query);
    };

    if (!hit && cache_may_hold) {
        // Only a name no rule matched is noted: an allow rule's verdict is the query log's to
        // show, and the mark could not give it back.
        const std::uint32_t noted = verdict.action == filter::Action::none ? pass_mark : 0;
        if (auto found = cache_->lookup_noting_pass(key, qh.id, out, lookup_mode(), noted)) {
            hit = *found;
        }
    } else if (!hit && cache_ && !miss_counted) {
        cache_->note_miss(key);
    }
    if (hit) {
        // An expired answer (optimistic mode) says so as serve-stale's does: EDE 3.
        const ExtendedError ede = hit->stale ? ExtendedError::stale_answer : ExtendedError::none;
        const std::size_t size = finish_for_client(out, hit->size, to, ede, scratch_, rdata_buf_);
        Decision d =
            with_ede(respond(hit->stale ? Outcome::stale : Outcome::cached, size, verdict), ede);
        if (hit->refresh) {
            // The same upstream query a miss would send; its answer replaces the entry.
            prepare_forward(route_of(lower.wire()));
            d.refresh = true;
        }
        return d;
    }

    const std::size_t route = route_of(lower.wire());
    if (route == 0 && options_.answer_private_reverse && private_reverse(lower.wire())) {
        return respond(Outcome::local, write_empty(out, to, Rcode::nxdomain, true));
    }
    prepare_forward(route);
    return {.action = Action::forward, .outcome = Outcome::pending, .verdict = verdict};
}

Decision Engine::complete(const Pending& pending, std::span<const std::uint8_t> reply,
                          std::span<std::uint8_t> out) {
    const NormalisedReply normalised =
        normalise_reply(reply, pending.key, scratch_, rdata_buf_, &answer_walk_);
    const std::size_t n = normalised.size;
    if (n == 0 || n > out.size()) {
        return fail(pending, out);
    }
    if (const filter::Verdict v = blocked_cname(pending, normalised, std::span(scratch_.data(), n));
        v.action == filter::Action::blocked) {
        // Not cached: a cache hit is served without this check.
        ReplyTo to = reply_to(pending, options_.udp_payload_size);
        to.ede_text = ede_text_for(*snapshot_reader_.current(), v);
        Decision d = count(with_ede(
            respond(Outcome::blocked, write_blocked(out, to, groups_->blocking(pending.group))),
            ExtendedError::blocked));
        d.verdict = v;
        return d;
    }
    if (rebinding(pending, normalised, std::span(scratch_.data(), n))) {
        // Not cached, like a CNAME-blocked answer: a cache hit is served without this check.
        return count(with_ede(
            respond(Outcome::blocked, write_empty(out, reply_to(pending, options_.udp_payload_size),
                                                  Rcode::noerror, false, ExtendedError::filtered)),
            ExtendedError::filtered));
    }
    if (cache_) {
        (void)insert(pending.key, normalised);  // Errc: not cacheable
    }
    std::memcpy(out.data(), scratch_.data(), n);
    store_u16(out.data(), pending.client_id);
    // The stored question is the lower-cased name; the client gets its own spelling back.
    std::memcpy(out.data() + wire::kHeaderSize, pending.qname.wire().data(),
                pending.qname.wire().size());
    const ReplyTo to = reply_to(pending, options_.udp_payload_size);
    Decision d =
        count(respond(Outcome::forwarded,
                      finish_for_client(out, n, to, ExtendedError::none, scratch_, rdata_buf_)));
    d.verdict = pending.verdict;
    return d;
}

void Engine::refresh(const Pending& pending, std::span<const std::uint8_t> reply) {
    if (!cache_) {
        return;
    }
    const NormalisedReply normalised =
        normalise_reply(reply, pending.key, scratch_, rdata_buf_, &answer_walk_);
    const std::size_t n = normalised.size;
    if (n == 0) {
        // No usable reply: the entry keeps its answer until it expires (then a miss asks again)
        // or, expired and served optimistically, until its next refresh is due.
        return;
    }
    const std::span<const std::uint8_t> answer(scratch_.data(), n);
    // complete() would block such an answer instead of storing it. The old entry goes too, so
    // that the next query's miss gets the blocked answer instead of the stale one.
    if (blocked_cname(pending, normalised, answer).action == filter::Action::blocked ||
        rebinding(pending, normalised, answer)) {
        cache_->erase(pending.key);
        return;
    }
    if (auto stored = insert(pending.key, normalised);
        !stored && stored.error() != cache::Errc::uncacheable_rcode) {
        // A real answer the cache cannot keep (a zero TTL, a negative answer without its SOA,
        // truncated, too large) replaces what the entry says: the next query asks upstream.
        // A SERVFAIL or REFUSED is the upstream failing, and the old answer stays (RFC 8767).
        cache_->erase(pending.key);
    }
}

tl::expected<void, cache::Errc> Engine::insert(const cache::CacheKey& key,
                                               const NormalisedReply& normalised) {
    const std::span<const std::uint8_t> answer(scratch_.data(), normalised.size);
    return normalised.walked ? cache_->insert(key, answer, answer_walk_)
                             : cache_->insert(key, answer);
}

filter::Verdict Engine::blocked_cname(const Pending& pending, const NormalisedReply& normalised,
                                      std::span<const std::uint8_t> answer) {
    if (!normalised.has_cname || !options_.blocking.cname_inspection ||
        pending.verdict.action == filter::Action::allowed || blocking_paused(pending.group)) {
        return {};
    }
    const std::shared_ptr<const filter::Snapshot>& snapshot = snapshot_reader_.current();
    return blocked_cname_target(answer, *snapshot, groups_->selection(pending.group, snapshot));
}

std::string_view Engine::ede_text_for(const filter::Snapshot& snapshot,
                                      const filter::Verdict& verdict) const noexcept {
    if (!options_.blocking.ede_list_name || verdict.list >= snapshot.lists().size()) {
        return {};
    }
    return snapshot.lists()[verdict.list].spec.name;
}

bool Engine::rebinding(const Pending& pending, const NormalisedReply& normalised,
                       std::span<const std::uint8_t> answer) const {
    if (!normalised.has_address || !options_.rebind_protection || pending.route != 0) {
        return false;  // conditional routes lead to the home's own names and addresses
    }
    if (std::any_of(options_.rebind_allowed.begin(), options_.rebind_allowed.end(),
                    [&](const wire::Name& d) { return is_under(pending.key.name(), d.wire()); })) {
        return false;
    }
    return has_internal_address(answer);
}

Decision Engine::fail(const Pending& pending, std::span<std::uint8_t> out) {
    const ReplyTo to = reply_to(pending, options_.udp_payload_size);
    if (cache_) {
        if (auto hit =
                cache_->lookup(pending.key, pending.client_id, out, cache::LookupMode::stale);
            hit) {
            std::memcpy(out.data() + wire::kHeaderSize, pending.qname.wire().data(),
                        pending.qname.wire().size());
            const ExtendedError ede =
                hit->stale ? ExtendedError::stale_answer : ExtendedError::none;
            return count(
                with_ede(respond(hit->stale ? Outcome::stale : Outcome::cached,
                                 finish_for_client(out, hit->size, to, ede, scratch_, rdata_buf_)),
                         ede));
        }
    }
    return count(
        with_ede(respond(Outcome::servfail, write_empty(out, to, Rcode::servfail, false,
                                                        ExtendedError::no_reachable_authority)),
                 ExtendedError::no_reachable_authority));
}

}  // namespace moat::engine
