#include "moat/server/query_path.hpp"

#include <spdlog/spdlog.h>

#include "moat/wire/message_view.hpp"

namespace moat::server {

QueryPath::QueryPath(std::shared_ptr<engine::Engine> engine, upstream::Forwarder& forwarder)
    : engine_(std::move(engine)), forwarder_(forwarder), out_(wire::kMaxMessageSize) {}

void QueryPath::forward(std::span<const std::uint8_t> query, const engine::Client& client,
                        ReplyFn reply) {
    auto pending = std::make_shared<engine::Pending>(std::move(pending_));
    pending_ = engine::Pending{};
    ++in_flight_;
    std::vector<std::uint8_t> query_copy;
    if (spdlog::should_log(spdlog::level::debug)) {
        query_copy.assign(query.begin(), query.end());
    }
    forwarder_.forward(pending->upstream_query, pending->route,
                       [this, pending, reply = std::move(reply), client,
                        query_copy = std::move(query_copy)](const upstream::Result& result) {
                           --in_flight_;
                           const engine::Decision done =
                               result.ok ? engine_->complete(*pending, result.reply, out_)
                                         : engine_->fail(*pending, out_);
                           log_answer(client, query_copy, done);
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
