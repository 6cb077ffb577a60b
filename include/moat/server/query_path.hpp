// The glue between listeners, the engine and the upstream client: one query in, one answer out
// (now, or when the upstream answers).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <utility>
#include <vector>

#include "moat/engine/client.hpp"
#include "moat/engine/engine.hpp"
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

    /// Handles one query. Answers known at once (blocked, cached, local, errors) come back in
    /// Handled::answer, valid until the next call; nothing is allocated for them. Only a query
    /// that goes upstream calls `make_reply()` for the function that will send its answer, which
    /// then runs exactly once, later, on the event loop's thread.
    template <typename MakeReply>
    Handled handle(std::span<const std::uint8_t> query, const engine::Client& client,
                   MakeReply&& make_reply) {
        const engine::Decision d = engine_->decide(query, client, out_, pending_);
        if (d.action != engine::Action::forward) {
            log_answer(client, query, d);
            return {d.action == engine::Action::respond
                        ? std::span<const std::uint8_t>(out_.data(), d.size)
                        : std::span<const std::uint8_t>{},
                    false};
        }
        forward(query, client, ReplyFn(std::forward<MakeReply>(make_reply)()));
        return {{}, true};
    }

    /// The engine for queries from now on (a reload); queries in flight finish on the new one.
    void set_engine(std::shared_ptr<engine::Engine> engine) { engine_ = std::move(engine); }
    [[nodiscard]] const std::shared_ptr<engine::Engine>& engine() const noexcept { return engine_; }
    /// Queries waiting for an upstream answer.
    [[nodiscard]] std::size_t in_flight() const noexcept { return in_flight_; }

private:
    void forward(std::span<const std::uint8_t> query, const engine::Client& client, ReplyFn reply);
    void log_answer(const engine::Client& client, std::span<const std::uint8_t> query,
                    const engine::Decision& d) const;

    std::shared_ptr<engine::Engine> engine_;
    upstream::Forwarder& forwarder_;
    std::vector<std::uint8_t> out_;  ///< every answer is written here, then sent at once
    engine::Pending pending_;        ///< decide()'s scratch; moved out only when forwarding
    std::size_t in_flight_ = 0;
};

}  // namespace moat::server
