// The ids of the rows whose `column` equals a value, newest first, read from that column's index
// alone (an index entry holds the row id, so the table is not touched), and the intersection of
// several such streams. A search with two or more of client, outcome and type, or one of them
// with a text filter matching many names, intersects the streams and reads only the rows they
// agree on: the cost follows the rarest filter, not the table's size.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <tl/expected.hpp>
#include <vector>

#include "sqlite.hpp"

namespace moat::querylog {

class IdStream {
public:
    /// Rows with `column` = `value` and lo <= id < hi. `column` is one of this module's indexed
    /// column names, never user input.
    static tl::expected<IdStream, std::string> open(Connection& db, const char* column,
                                                    std::int64_t value, std::int64_t lo,
                                                    std::int64_t hi);

    /// The current id; nullopt once the stream is exhausted.
    [[nodiscard]] std::optional<std::int64_t> current() const noexcept { return current_; }
    /// Moves to the first id at most `at_most` (a few steps, then a fresh seek in the index).
    tl::expected<void, std::string> skip_to(std::int64_t at_most);

private:
    IdStream(Connection& db, Statement stmt, std::int64_t value, std::int64_t lo)
        : db_(&db), stmt_(std::move(stmt)), value_(value), lo_(lo) {}
    /// Runs the statement from `hi` (exclusive) down.
    tl::expected<void, std::string> seek(std::int64_t hi);
    tl::expected<void, std::string> step();

    Connection* db_;
    Statement stmt_;
    std::int64_t value_;
    std::int64_t lo_;
    std::optional<std::int64_t> current_;
};

/// Up to `max` ids present in every stream, newest first, continuing from the streams' current
/// positions (call again for more). Fewer than `max`: the streams are exhausted.
tl::expected<std::vector<std::int64_t>, std::string> intersect(std::vector<IdStream>& streams,
                                                               std::size_t max);

}  // namespace moat::querylog
