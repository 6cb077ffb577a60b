// The glue between listeners, the engine and the upstream client: one query in, one answer out
// (now, or when the upstream answers).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "moat/engine/client.hpp"
#include "moat/engine/engine.hpp"
#include "moat/querylog/entry_queue.hpp"
#include "moat/server/query_metrics.hpp"
#include "moat/upstream/forwarder.hpp"

namespace moat::server {

/// Receives the answer to send; an empty span means "send nothing" (the query is dropped).
using ReplyFn = std::function<void(std::span<const std::uint8_t>)>;

class QueryPath {
public:
    QueryPath(std::shared_ptr<engine::Engine> engine, upstream::Forwarder& forwarder);

    /// What handle() did with a query.
    struct Handled {
        std::span<const std::uint8_t> answer;  ///< to send now (empty: send nothing)
        bool deferred = false;                 ///< the answer comes later, through the ReplyFn
    };

    /// When a query came in: the steady time its latency is measured from, and the wall time
    /// it is logged with (read only when queries are logged).
    struct Arrival {
        std::int64_t time_us = 0;
        std::chrono::steady_clock::time_point steady;
        /// The debug log was on: each answer then gets a line. Asked once per batch, not per
        /// query (the logger's level check cost about 30 instructions of a cached answer's
        /// 2,400).
        bool debug_log = false;
        /// The queries came in one batch, whose answers leave together when it ends: those
        /// answered at once are timed then, by end_batch(), with one clock read for all.
        bool timed_by_batch = false;
        static Arrival now(bool with_wall_time) noexcept;
    };

    /// The arrival of queries read now. A listener that reads a batch of datagrams at once
    /// takes one for the whole batch: they arrived together, and a later one's wait behind the
    /// others is part of its latency. (Each clock read costs about 26 ns of the 0.4 µs a
    /// cached query takes in user space.)
    [[nodiscard]] Arrival arrival_now() const noexcept { return Arrival::now(log_ != nullptr); }
    /// arrival_now() for a batch whose caller calls end_batch() once its answers are ready.
    [[nodiscard]] Arrival batch_arrival_now() const noexcept {
        Arrival a = arrival_now();
        a.timed_by_batch = true;
        return a;
    }
    /// Ends the batch that arrived at `arrival`: the answers it gave at once (not those that
    /// went upstream, nor, when queries are logged, any: a logged row is timed on its own) are
    /// counted in the time-to-answer histogram with the time from `arrival` to now.
    void end_batch(const Arrival& arrival) noexcept;

    /// Handles one query that arrived at `arrival`. Answers known at once (blocked, cached,
    /// local, errors) come back in Handled::answer, valid until the next call; nothing is
    /// allocated for them. Only a query that goes upstream calls `make_reply()` for the function
    /// that will send its answer, which then runs exactly once, later, on the event loop's
    /// thread.
    template <typename MakeReply>
    Handled handle(std::span<const std::uint8_t> query, const engine::Client& client,
                   MakeReply&& make_reply, const Arrival& arrival) {
        const engine::Decision d = engine_->decide(query, client, out_, pending_);
        if (d.action != engine::Action::forward) {
            const auto answer = d.action == engine::Action::respond
                                    ? std::span<const std::uint8_t>(out_.data(), d.size)
                                    : std::span<const std::uint8_t>{};
            if (arrival.debug_log) {
                log_answer(client, query, d);
            }
            finished_now(arrival, query, client, d, answer);
            if (d.refresh) {
                send_refresh();  // after the answer is counted: its latency does not include this
            }
            return {answer, false};
        }
        forward(query, client, ReplyFn(std::forward<MakeReply>(make_reply)()), arrival);
        return {{}, true};
    }

    /// Handles one query that arrived just now.
    template <typename MakeReply>
    Handled handle(std::span<const std::uint8_t> query, const engine::Client& client,
                   MakeReply&& make_reply) {
        return handle(query, client, std::forward<MakeReply>(make_reply), arrival_now());
    }

    /// Every answered or dropped query from now on is pushed to `queue` (null: none). The queue
    /// must outlive this path or be unset first.
    void set_log(querylog::EntryQueue* queue) noexcept { log_ = queue; }

    /// What has been counted so far (read from any thread).
    [[nodiscard]] const QueryMetrics& metrics() const noexcept { return metrics_; }

    /// The engine for queries from now on (a reload); queries in flight finish on the new one.
    void set_engine(std::shared_ptr<engine::Engine> engine) { engine_ = std::move(engine); }
    [[nodiscard]] const std::shared_ptr<engine::Engine>& engine() const noexcept { return engine_; }
    /// Queries waiting for an upstream answer (refreshes of cached answers not included).
    [[nodiscard]] std::size_t in_flight() const noexcept { return in_flight_; }

    /// Records of forwarded queries kept idle for reuse, at most. A record is about 1.4 KiB, so
    /// this bounds what a burst leaves resident to 0.7 MiB. It is above what a busy network or
    /// a load generator keeps in flight (dnsperf's default 100, the benchmarks' 200): with 64,
    /// a steady 200 in flight made and freed a record (and its upstream buffer) on a share of
    /// misses, 0.3-0.7 µs of user time per miss in `bench/forward_cost.py` (docs/benchmarks.md,
    /// "Heap allocations per miss").
    static constexpr std::size_t kIdleForwardedKept = 512;
    /// Records of forwarded queries held now, in flight and idle.
    [[nodiscard]] std::size_t forwarded_records() const noexcept { return all_forwarded_.size(); }

private:
    /// A query waiting for its upstream answer, with what answering it later needs. Reused
    /// from one forwarded query to the next (a pool in the path): its buffers keep their
    /// capacity, and the upstream callback captures only a pointer to it, small enough for
    /// std::function to hold without allocating.
    struct Forwarded {
        engine::Pending pending;
        ReplyFn reply;
        engine::Client client;
        Arrival arrival;
        std::uint16_t qtype = 0;
        std::optional<querylog::Entry> entry;  ///< the log entry (set only when logging)
        std::vector<std::uint8_t> query_copy;  ///< for the debug log only
        std::size_t index = 0;                 ///< in all_forwarded_
        bool refresh = false;  ///< a cached answer's refresh: no client waits, nothing counted
    };

    void forward(std::span<const std::uint8_t> query, const engine::Client& client, ReplyFn reply,
                 Arrival arrival);
    void answer_forwarded(Forwarded& f, const upstream::Result& result);
    /// Sends the refresh that decide() prepared in pending_ (Decision::refresh) upstream; its
    /// answer goes to Engine::refresh().
    void send_refresh();
    /// A record holding pending_, which gets the record's old upstream buffer back.
    Forwarded& take_pending();
    /// Sends `f`'s upstream query; its answer comes to answer_forwarded().
    void send_upstream(Forwarded& f);
    Forwarded& take_forwarded();
    void release_forwarded(Forwarded& f);
    /// A query answered (or dropped) at once: counted and logged.
    void finished_now(const Arrival& arrival, std::span<const std::uint8_t> query,
                      const engine::Client& client, const engine::Decision& d,
                      std::span<const std::uint8_t> answer);
    /// Counts a query that got its answer (or was dropped) and pushes `entry` (its question
    /// already filled in; null when not logging) with the rest of what happened.
    void finished(const Arrival& arrival, std::uint16_t qtype, const engine::Client& client,
                  const engine::Decision& d, std::span<const std::uint8_t> answer,
                  querylog::Entry* entry);
    void log_answer(const engine::Client& client, std::span<const std::uint8_t> query,
                    const engine::Decision& d) const;

    std::shared_ptr<engine::Engine> engine_;
    upstream::Forwarder& forwarder_;
    std::vector<std::uint8_t> out_;  ///< every answer is written here, then sent at once
    std::uint64_t untimed_ = 0;      ///< answers of the batch under way, timed by end_batch()
    engine::Pending pending_;        ///< decide()'s scratch; swapped into a Forwarded record
    std::vector<std::unique_ptr<Forwarded>>
        all_forwarded_;  ///< owns every record, in flight or idle
    std::vector<Forwarded*> idle_forwarded_;
    std::size_t in_flight_ = 0;
    querylog::EntryQueue* log_ = nullptr;
    QueryMetrics metrics_;
};

}  // namespace moat::server
