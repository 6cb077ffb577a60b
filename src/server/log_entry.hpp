// Turns a handled query into a query-log entry (querylog/entry.hpp) without allocating: the
// question read straight from the query's bytes, the outcome and Extended DNS Error from the
// engine's decision, the rcode from the answer, and the rule's list from the snapshot.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "moat/engine/client.hpp"
#include "moat/engine/engine.hpp"
#include "moat/filter/snapshot.hpp"
#include "moat/querylog/entry.hpp"

namespace moat::server {

/// The question of `query` (lower case, dotted, "." for the root) and its type. A query too
/// short or malformed to have one leaves the name empty and the type 0.
void fill_question(std::span<const std::uint8_t> query, querylog::Entry& entry) noexcept;

/// The question's type, read without copying the name; 0 when there is none.
[[nodiscard]] std::uint16_t question_type(std::span<const std::uint8_t> query) noexcept;

/// Outcome, rcode, EDE and the rule behind a blocked or allowed answer (named from `snapshot`,
/// which may be null when the decision has no rule).
void fill_decision(const engine::Decision& decision, std::span<const std::uint8_t> answer,
                   const filter::Snapshot* snapshot, querylog::Entry& entry) noexcept;

/// The transport's name as the log stores it (a literal: entries hold the pointer).
[[nodiscard]] inline const char* transport_text(engine::Transport t) noexcept {
    return engine::to_text(t).data();
}

}  // namespace moat::server
