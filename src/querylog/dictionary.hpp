// Texts stored once and referenced by number (domains, clients, labels): the id of a text,
// inserting it when new. Known ids are remembered in memory, up to a bound, so a busy log looks
// up each name in SQLite once rather than per row.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <tl/expected.hpp>

#include "moat/core/string_map.hpp"
#include "sqlite.hpp"

namespace moat::querylog {

class Dictionary {
public:
    /// `table` and `column` are trusted identifiers from this module, never user input.
    static tl::expected<Dictionary, std::string> prepare(Connection& db, std::string_view table,
                                                         std::string_view column);

    /// The id of `text`; inserts it when new (call inside the writer's transaction).
    tl::expected<std::int64_t, std::string> id_of(std::string_view text);
    /// Forgets the remembered ids (after rows that used them may have been deleted).
    void forget() { known_.clear(); }

private:
    static constexpr std::size_t kMaxKnown = 1U << 16U;
    Dictionary(Connection& db, Statement select, Statement insert)
        : db_(&db), select_(std::move(select)), insert_(std::move(insert)) {}

    Connection* db_;
    Statement select_;
    Statement insert_;
    StringMap<std::int64_t> known_;  // searched by string_view: no string made per lookup
};

}  // namespace moat::querylog
