#include "moat/server/query_path.hpp"

#include <algorithm>
#include <climits>
#include <cstdint>
#include <utility>
#include <vector>

#include "log_entry.hpp"
#include "moat/core/log.hpp"
#include "moat/wire/message_view.hpp"

namespace moat::server {

QueryPath::QueryPath(std::shared_ptr<engine::Engine> engine, upstream::Forwarder& forwarder)
    : engine_(std::move(engine)), forwarder_(forwarder), out_(wire::kMaxMessageSize) {}

QueryPath::Arrival QueryPath::Arrival::now(bool with_wall_time) noexcept {
    Arrival a;
    a.steady = std::chrono::steady_clock::now();
    a.debug_log = log::enabled(log::Level::debug);
    if (with_wall_time) {
        a.time_us = std::chrono::duration_cast<std::chrono::microseconds>(
                        std::chrono::system_clock::now().time_since_epoch())
                        .count();
    }
    return a;
}

namespace {

std::uint32_t micros_since(std::chrono::steady_clock::time_point start) noexcept {
    const auto us = std::chrono::duration_cast<std::chrono::microseconds>(
                        std::chrono::steady_clock::now() - start)
                        .count();
    return static_cast<std::uint32_t>(std::clamp<std::int64_t>(us, 0, UINT32_MAX));
}

/// A log entry with what is known when the query arrives.
void begin_entry(querylog::Entry& e, std::int64_t time_us, std::span<const std::uint8_t> query,
                 const engine::Client& client) noexcept {
    e.time_us = time_us;
    e.client = client.address;
    e.transport = transport_text(client.transport);
    fill_question(query, e);
}

}  // namespace

void QueryPath::finished_now(const Arrival& arrival, std::span<const std::uint8_t> query,
                             const engine::Client& client, const engine::Decision& d,
                             std::span<const std::uint8_t> answer) {
    // Over-limit queries are counted, not logged: a flood must not become a flood of log rows
    // (and of writes to a Pi's SD card). The daemon's log names the clients instead.
    if (log_ == nullptr || d.outcome == engine::Outcome::rate_limited) {
        finished(arrival, question_type(query), client, d, answer, nullptr);
        return;
    }
    querylog::Entry e;
    begin_entry(e, arrival.time_us, query, client);
    finished(arrival, e.qtype, client, d, answer, &e);
}

void QueryPath::finished(const Arrival& arrival, std::uint16_t qtype, const engine::Client& client,
                         const engine::Decision& d, std::span<const std::uint8_t> answer,
                         querylog::Entry* entry) {
    const std::uint8_t* const header = answer.empty() ? nullptr : answer.data();
    if (arrival.timed_by_batch && entry == nullptr) {
        metrics_.count_untimed(d.outcome, qtype, client.transport, header);
        ++untimed_;
        return;
    }
    const std::uint32_t latency = micros_since(arrival.steady);
    metrics_.count(d.outcome, qtype, client.transport, header, latency);
    if (entry != nullptr && log_ != nullptr) {
        // The snapshot (a shared lock and a reference count) only for a rule to name.
        std::shared_ptr<const filter::Snapshot> snapshot;
        if (d.verdict.action != filter::Action::none) {
            snapshot = engine_->snapshots().current();
        }
        fill_decision(d, answer, snapshot.get(), *entry);
        entry->latency_us = latency;
        log_->push(*entry);
    }
}

void QueryPath::end_batch(const Arrival& arrival) noexcept {
    if (untimed_ == 0) {
        return;
    }
    metrics_.duration.observe(micros_since(arrival.steady), untimed_);
    untimed_ = 0;
}

QueryPath::Forwarded& QueryPath::take_pending() {
    Forwarded& f = take_forwarded();
    // The record takes the query's state in one move; decide()'s scratch gets the record's old
    // upstream buffer back, capacity included. (A swap of the whole record did the same with
    // three copies of its two 255-octet names: 1.3% of the daemon's time under miss load.)
    std::vector<std::uint8_t> spare = std::move(f.pending.upstream_query);
    f.pending = std::move(pending_);
    pending_.upstream_query = std::move(spare);
    return f;
}

void QueryPath::send_upstream(Forwarded& f) {
    Forwarded* record = &f;
    forwarder_.forward(
        f.pending.upstream_query, f.pending.route,
        [this, record](const upstream::Result& result) { answer_forwarded(*record, result); });
}

void QueryPath::send_refresh() {
    Forwarded& f = take_pending();
    f.refresh = true;
    f.entry.reset();
    f.query_copy.clear();
    send_upstream(f);
}

void QueryPath::forward(std::span<const std::uint8_t> query, const engine::Client& client,
                        ReplyFn reply, Arrival arrival) {
    Forwarded& f = take_pending();
    f.refresh = false;
    f.reply = std::move(reply);
    f.client = client;
    f.arrival = arrival;
    f.arrival.timed_by_batch = false;  // its answer comes after the batch, timed on its own
    metrics_.in_flight.set(++in_flight_);
    f.query_copy.clear();
    if (arrival.debug_log) {
        f.query_copy.assign(query.begin(), query.end());
    }
    // What is needed of the query later is read now: its buffer is reused meanwhile.
    f.qtype = question_type(query);
    f.entry.reset();
    if (log_ != nullptr) {
        begin_entry(f.entry.emplace(), arrival.time_us, query, client);
    }
    send_upstream(f);
}

void QueryPath::answer_forwarded(Forwarded& f, const upstream::Result& result) {
    if (f.refresh) {
        if (result.ok) {
            engine_->refresh(f.pending, result.reply);
        }
        release_forwarded(f);
        return;
    }
    metrics_.in_flight.set(--in_flight_);
    engine::Decision done = result.ok ? engine_->complete(f.pending, result.reply, out_)
                                      : engine_->fail(f.pending, out_);
    if (f.arrival.debug_log) {
        log_answer(f.client, f.query_copy, done);
    }
    // A forwarded name shows the allow rule that let it through, when one did.
    if (done.verdict.action == filter::Action::none) {
        done.verdict = f.pending.verdict;
    }
    if (f.entry && result.ok) {
        f.entry->upstream.assign(result.server);
    }
    const auto answer = done.action == engine::Action::respond
                            ? std::span<const std::uint8_t>(out_.data(), done.size)
                            : std::span<const std::uint8_t>{};
    finished(f.arrival, f.qtype, f.client, done, answer, f.entry ? &*f.entry : nullptr);
    f.reply(answer);
    release_forwarded(f);
}

QueryPath::Forwarded& QueryPath::take_forwarded() {
    if (!idle_forwarded_.empty()) {
        Forwarded* f = idle_forwarded_.back();
        idle_forwarded_.pop_back();
        return *f;
    }
    all_forwarded_.push_back(std::make_unique<Forwarded>());
    Forwarded& f = *all_forwarded_.back();
    f.index = all_forwarded_.size() - 1;
    return f;
}

void QueryPath::release_forwarded(Forwarded& f) {
    f.reply = nullptr;
    if (idle_forwarded_.size() < kIdleForwardedKept) {
        idle_forwarded_.push_back(&f);
        return;
    }
    const std::size_t i = f.index;
    if (i + 1 != all_forwarded_.size()) {
        all_forwarded_[i] = std::move(all_forwarded_.back());
        all_forwarded_[i]->index = i;
    }
    all_forwarded_.pop_back();  // frees f
}

void QueryPath::log_answer(const engine::Client& client, std::span<const std::uint8_t> query,
                           const engine::Decision& d) const {
    if (!log::enabled(log::Level::debug)) {
        return;
    }
    std::string question = "?";
    auto view = wire::MessageView::parse(query);
    if (const wire::Question* q = view ? view->question() : nullptr; q != nullptr) {
        question = q->qname.to_text() + " type " + std::to_string(wire::to_u16(q->qtype));
    }
    log::debug("query {} {} from {}: {}", engine::to_text(client.transport), question,
               client.address.to_text(), engine::to_text(d.outcome));
}

}  // namespace moat::server
