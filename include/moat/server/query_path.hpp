// The glue between listeners, the engine and the upstream client: one query in, one answer out
// (now, or when the upstream answers).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
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

    /// Handles one query; `reply` runs exactly once, now or later, on the event loop's thread.
    void handle(std::span<const std::uint8_t> query, const engine::Client& client,
                const ReplyFn& reply);

    /// The engine for queries from now on (a reload); queries in flight finish on the new one.
    void set_engine(std::shared_ptr<engine::Engine> engine) { engine_ = std::move(engine); }
    [[nodiscard]] const std::shared_ptr<engine::Engine>& engine() const noexcept { return engine_; }
    /// Queries waiting for an upstream answer.
    [[nodiscard]] std::size_t in_flight() const noexcept { return in_flight_; }

private:
    void log_answer(const engine::Client& client, std::span<const std::uint8_t> query,
                    const engine::Decision& d) const;

    std::shared_ptr<engine::Engine> engine_;
    upstream::Forwarder& forwarder_;
    std::vector<std::uint8_t> out_;  ///< every answer is written here, then sent at once
    std::size_t in_flight_ = 0;
};

}  // namespace moat::server
