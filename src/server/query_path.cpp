#include "moat/server/query_path.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <climits>
#include <cstdint>

#include "log_entry.hpp"
#include "moat/wire/message_view.hpp"

namespace moat::server {

QueryPath::QueryPath(std::shared_ptr<engine::Engine> engine, upstream::Forwarder& forwarder)
    : engine_(std::move(engine)), forwarder_(forwarder), out_(wire::kMaxMessageSize) {}

QueryPath::Arrival QueryPath::Arrival::now() noexcept {
    return {std::chrono::duration_cast<std::chrono::microseconds>(
                std::chrono::system_clock::now().time_since_epoch())
                .count(),
            std::chrono::steady_clock::now()};
}

namespace {

std::uint32_t micros_since(std::chrono::steady_clock::time_point start) noexcept {
    const auto us = std::chrono::duration_cast<std::chrono::microseconds>(
                        std::chrono::steady_clock::now() - start)
                        .count();
    return static_cast<std::uint32_t>(std::clamp<std::int64_t>(us, 0, UINT32_MAX));
}

}  // namespace

void QueryPath::record(const Arrival& arrival, std::span<const std::uint8_t> query,
                       const engine::Client& client, const engine::Decision& d,
                       std::span<const std::uint8_t> answer) {
    querylog::Entry e;
    e.time_us = arrival.time_us;
    e.client = client.address;
    e.transport = transport_text(client.transport);
    fill_question(query, e);
    fill_decision(d, answer, *engine_->snapshots().current(), e);
    e.latency_us = micros_since(arrival.steady);
    log_->push(e);
}

void QueryPath::forward(std::span<const std::uint8_t> query, const engine::Client& client,
                        ReplyFn reply, Arrival arrival) {
    auto pending = std::make_shared<engine::Pending>(std::move(pending_));
    pending_ = engine::Pending{};
    ++in_flight_;
    std::vector<std::uint8_t> query_copy;
    if (spdlog::should_log(spdlog::level::debug)) {
        query_copy.assign(query.begin(), query.end());
    }
    // The log entry's question is read now: the query's buffer is reused meanwhile.
    std::shared_ptr<querylog::Entry> entry;
    if (log_ != nullptr) {
        entry = std::make_shared<querylog::Entry>();
        entry->time_us = arrival.time_us;
        entry->client = client.address;
        entry->transport = transport_text(client.transport);
        fill_question(query, *entry);
    }
    forwarder_.forward(pending->upstream_query, pending->route,
                       [this, pending, reply = std::move(reply), client, arrival, entry,
                        query_copy = std::move(query_copy)](const upstream::Result& result) {
                           --in_flight_;
                           const engine::Decision done =
                               result.ok ? engine_->complete(*pending, result.reply, out_)
                                         : engine_->fail(*pending, out_);
                           log_answer(client, query_copy, done);
                           if (entry && log_ != nullptr) {
                               // A forwarded name shows the allow rule that let it
                               // through, when one did.
                               engine::Decision logged = done;
                               if (logged.verdict.action == filter::Action::none) {
                                   logged.verdict = pending->verdict;
                               }
                               fill_decision(logged,
                                             std::span<const std::uint8_t>(out_.data(), done.size),
                                             *engine_->snapshots().current(), *entry);
                               if (result.ok) {
                                   entry->upstream.assign(result.server);
                               }
                               entry->latency_us = micros_since(arrival.steady);
                               log_->push(*entry);
                           }
                           reply(done.action == engine::Action::respond
                                     ? std::span<const std::uint8_t>(out_.data(), done.size)
                                     : std::span<const std::uint8_t>{});
                       });
}

void QueryPath::log_answer(const engine::Client& client, std::span<const std::uint8_t> query,
                           const engine::Decision& d) const {
    if (!spdlog::should_log(spdlog::level::debug)) {
        return;
    }
    std::string question = "?";
    auto view = wire::MessageView::parse(query);
    if (const wire::Question* q = view ? view->question() : nullptr; q != nullptr) {
        question = q->qname.to_text() + " type " + std::to_string(wire::to_u16(q->qtype));
    }
    spdlog::debug("query {} {} from {}: {}",
                  client.transport == engine::Transport::tcp ? "tcp" : "udp", question,
                  client.address.to_text(), engine::to_text(d.outcome));
}

}  // namespace moat::server
