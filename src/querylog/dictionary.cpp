#include "dictionary.hpp"

namespace moat::querylog {

tl::expected<Dictionary, std::string> Dictionary::prepare(Connection& db, std::string_view table,
                                                          std::string_view column) {
    const std::string t(table);
    const std::string c(column);
    auto select = db.prepare("SELECT id FROM " + t + " WHERE " + c + " = ?1");
    auto insert = db.prepare("INSERT INTO " + t + "(" + c + ") VALUES(?1)");
    if (!select || !insert) {
        return tl::unexpected(select ? insert.error() : select.error());
    }
    return Dictionary(db, std::move(*select), std::move(*insert));
}

tl::expected<std::int64_t, std::string> Dictionary::id_of(std::string_view text) {
    if (auto it = known_.find(text); it != known_.end()) {
        return it->second;
    }
    std::int64_t id = 0;
    select_.bind(1, text);
    const int rc = select_.step();
    if (rc == SQLITE_ROW) {
        id = select_.int64(0);
    }
    select_.reset();
    if (rc != SQLITE_ROW) {
        if (rc != SQLITE_DONE) {
            return tl::unexpected(db_->error("looking up a name"));
        }
        insert_.bind(1, text);
        const int ins = insert_.step();
        insert_.reset();
        if (ins != SQLITE_DONE) {
            return tl::unexpected(db_->error("storing a name"));
        }
        id = sqlite3_last_insert_rowid(db_->handle());
    }
    if (known_.size() >= kMaxKnown) {
        known_.clear();
    }
    known_.emplace(std::string(text), id);
    return id;
}

}  // namespace moat::querylog
