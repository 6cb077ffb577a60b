// The query pipeline without sockets: bytes of a query in, bytes of an answer out, or a request
// to forward upstream and, later, the upstream's reply in and the client's answer out.
//
//   Pending pending;
//   auto d = engine.decide(query_bytes, client, out, pending);
//   switch (d.action) {
//     case Action::respond: send(out.first(d.size)); break;
//     case Action::drop:    break;
//     case Action::forward: upstream(pending.upstream_query, pending.route, ...);   // later:
//                           d = engine.complete(pending, reply_bytes, out);  // or fail(pending,
//                           out)
//   }
//   if (d.refresh) { upstream(pending.upstream_query, ...); /* later: */ engine.refresh(pending,
//                    reply_bytes); }   // a cached answer near (or past) its expiry: renew it
//
// Per query, in order (docs/daemon.md): parse (FORMERR / drop / NOTIMP) → access control
// (REFUSED) → EDNS (BADVERS) → localhost and local records → special-use names → blocklist
// snapshot → answer cache → private reverse zones → forward (and CNAME inspection of the
// upstream's answer). Answers are written with wire::MessageBuilder or copied from
// the cache into the caller's buffer; UDP answers larger than the client may receive are rebuilt
// up to a whole record with TC set.
//
// Not thread-safe (it reuses scratch buffers): one Engine per event-loop thread. The snapshot
// publisher and the cache it is given are thread-safe and may be shared. Time comes only from
// the cache's Clock.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "moat/cache/cache.hpp"
#include "moat/cache/cache_key.hpp"
#include "moat/engine/client.hpp"
#include "moat/engine/local_zone.hpp"
#include "moat/engine/options.hpp"
#include "moat/engine/stats.hpp"
#include "moat/filter/regex_memo.hpp"
#include "moat/filter/snapshot.hpp"
#include "moat/filter/snapshot_publisher.hpp"
#include "moat/wire/header.hpp"
#include "moat/wire/message_view.hpp"
#include "moat/wire/name.hpp"

namespace moat::engine {

struct ReplyTo;          // src/engine/responses.hpp
struct NormalisedReply;  // src/engine/reply_normalise.hpp
class SpecialNames;      // src/engine/special_names.hpp
class Groups;            // src/engine/groups.hpp

enum class Action : std::uint8_t {
    respond,  ///< send the `size` octets at the start of `out`
    drop,     ///< send nothing (not a query, not even a header, or over the rate limit)
    forward,  ///< send Pending::upstream_query upstream, then complete() or fail()
};

/// What the client's query carried in its OPT record.
struct ClientEdns {
    bool present = false;
    bool dnssec_ok = false;
    std::uint16_t udp_payload_size = 512;
};

/// Everything needed to answer a forwarded query later; owns its bytes (the query's buffer is
/// reused meanwhile).
struct Pending {
    std::uint16_t client_id = 0;
    std::uint16_t client_flags = 0;  ///< the query's flag word (RD and CD are echoed)
    wire::Name qname;                ///< as the client spelled it (the answer echoes its case)
    cache::CacheKey key;             ///< lower-cased question + DO (no echo view)
    ClientEdns edns;
    Transport transport = Transport::udp;
    std::size_t route = 0;                     ///< 0: default upstreams; i: conditional route i
    std::size_t group = 0;                     ///< the client's group (0: default)
    std::vector<std::uint8_t> upstream_query;  ///< ID 0: the upstream client sets its own
    filter::Verdict verdict;                   ///< an allow rule that matched, for the log
};

struct Decision {
    Action action = Action::drop;
    Outcome outcome = Outcome::dropped;
    /// The Extended DNS Error (RFC 8914 info code) the answer carries to a client that sent
    /// EDNS; 0xFFFF: none. For the query log. (Beside the two octets above, not after the
    /// verdict: 32 octets in all instead of 40.)
    std::uint16_t ede = 0xFFFF;
    /// A cached answer near its expiry, or past it with cache.optimistic (cache::Hit::refresh):
    /// besides sending it, send Pending::upstream_query upstream and give its reply to
    /// refresh(). (In the padding before `size`: the decision stays 32 octets.)
    bool refresh = false;
    std::size_t size = 0;     ///< octets of the answer written to `out` (Action::respond)
    filter::Verdict verdict;  ///< the list rule behind a blocked or allowed outcome
};

/// What the engine would do with a question for a name, and why (the API's "explain").
struct Explanation {
    std::string group;        ///< the client's group
    bool local = false;       ///< answered from local records or a special-use name
    bool paused = false;      ///< blocking is paused for the group
    filter::Verdict verdict;  ///< the list rule that decides (action none: no rule)
    std::shared_ptr<const filter::Snapshot> snapshot;  ///< the verdict's lists
};

class Engine {
public:
    /// `snapshots` must outlive the engine; `cache` may be null (caching off).
    Engine(EngineOptions options, LocalZone local, const filter::SnapshotPublisher& snapshots,
           std::shared_ptr<cache::Cache> cache);
    ~Engine();
    Engine(const Engine&) = delete;
    Engine& operator=(const Engine&) = delete;

    /// `out` should hold 65535 octets (any TCP answer); UDP answers stay within the client's
    /// limit regardless of its size. It must not overlap `query`, whose question name the
    /// answer copies from in place.
    Decision decide(std::span<const std::uint8_t> query, const Client& client,
                    std::span<std::uint8_t> out, Pending& pending);
    /// The upstream's reply (already matched to the request by ID and question) → the answer.
    /// An unusable reply gives SERVFAIL.
    Decision complete(const Pending& pending, std::span<const std::uint8_t> reply,
                      std::span<std::uint8_t> out);
    /// Every upstream failed or timed out: serve-stale from the cache if allowed, else SERVFAIL.
    Decision fail(const Pending& pending, std::span<std::uint8_t> out);
    /// The upstream's reply to the refresh a decision asked for (Decision::refresh): stored in
    /// the cache when complete() would have stored it. An answer complete() would block, or one
    /// the cache cannot keep, erases the entry; an unusable reply or a SERVFAIL leaves it. No
    /// client waits for it, so nothing is answered or counted.
    void refresh(const Pending& pending, std::span<const std::uint8_t> reply);

    /// The decision for `name` (lower case) from `client`, without answering or counting.
    [[nodiscard]] Explanation explain(const wire::Name& name, const Client& client);

    [[nodiscard]] const Stats& stats() const noexcept { return stats_; }
    [[nodiscard]] const EngineOptions& options() const noexcept { return options_; }
    [[nodiscard]] const std::shared_ptr<cache::Cache>& cache() const noexcept { return cache_; }
    [[nodiscard]] const filter::SnapshotPublisher& snapshots() const noexcept { return snapshots_; }
    /// Takes the newest published snapshot now and lets the one it held go. Queries do this by
    /// themselves; the daemon calls it after publishing, so an idle engine does not keep a
    /// replaced blocklist's memory until the next query.
    void refresh_snapshot() { (void)snapshot_reader_.current(); }

private:
    /// The answer (or silence) the rate limiter's action gives an over-limit query.
    Decision rate_limited(const wire::Header& qh, const wire::MessageView* view,
                          const Client& client, std::span<std::uint8_t> out) const;
    Decision answer_question(const wire::MessageView& view, const wire::Question& q,
                             const Client& client, std::span<std::uint8_t> out, Pending& pending);
    /// The client side of an answer to `q` (spelled `qname`, uncompressed wire form, which must
    /// outlive the answer's writing), without EDNS yet.
    [[nodiscard]] ReplyTo reply_to_query(const wire::Header& qh, const wire::Question& q,
                                         std::span<const std::uint8_t> qname,
                                         Transport transport) const noexcept;
    /// Adds the query's EDNS to `to` when its OPT reads as version 0.
    void with_edns_if_valid(ReplyTo& to, const wire::MessageView& view, Transport transport) const;
    [[nodiscard]] bool allowed(const IpAddress& address) const noexcept;
    /// The user paused blocking for `group` (or everyone) and the pause has not ended.
    [[nodiscard]] bool blocking_paused(std::size_t group) const noexcept;
    /// The EXTRA-TEXT of a blocked answer's EDE: the list's name, if configured so.
    [[nodiscard]] std::string_view ede_text_for(const filter::Snapshot& snapshot,
                                                const filter::Verdict& verdict) const noexcept;
    /// Stores the normalised answer in scratch_, with the walk of its records when it has one.
    tl::expected<void, cache::Errc> insert(const cache::CacheKey& key,
                                           const NormalisedReply& normalised);
    /// The blocklist rule that blocks a CNAME target in `answer` (to `pending`, `normalised`
    /// from it), when CNAME inspection is on and the query was not allowed by a rule; action
    /// none otherwise.
    [[nodiscard]] filter::Verdict blocked_cname(const Pending& pending,
                                                const NormalisedReply& normalised,
                                                std::span<const std::uint8_t> answer);
    /// DNS-rebinding protection says `answer` (to `pending`, `normalised` from it) must not
    /// reach the client.
    [[nodiscard]] bool rebinding(const Pending& pending, const NormalisedReply& normalised,
                                 std::span<const std::uint8_t> answer) const;
    [[nodiscard]] std::size_t route_of(std::span<const std::uint8_t> lower_qname) const noexcept;
    /// True when `lower_qname` is in a reverse zone of private, loopback or link-local addresses.
    [[nodiscard]] bool private_reverse(std::span<const std::uint8_t> lower_qname) const noexcept;
    Decision count(Decision d) noexcept;

    EngineOptions options_;
    LocalZone local_;
    const filter::SnapshotPublisher& snapshots_;
    filter::SnapshotReader snapshot_reader_;  ///< the queries' view of snapshots_, lock-free
    /// Names the regex rules did not match, so a repeated name skips their search.
    filter::RegexMemo regex_memo_;
    std::shared_ptr<cache::Cache> cache_;
    std::vector<wire::Name> private_reverse_zones_;
    std::unique_ptr<const SpecialNames> special_;
    std::unique_ptr<Groups> groups_;
    std::vector<std::uint8_t> scratch_;    ///< canonical answers and truncation rebuilds
    std::vector<std::uint8_t> rdata_buf_;  ///< decompressed RDATA of one record
    cache::RecordWalk answer_walk_;        ///< the records of a copied upstream answer
    Stats stats_;
};

}  // namespace moat::engine
