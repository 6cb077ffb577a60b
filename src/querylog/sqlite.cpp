#include "sqlite.hpp"

namespace moat::querylog {

tl::expected<std::unique_ptr<Connection>, std::string> Connection::open(
    const std::filesystem::path& path, int flags) {
    sqlite3* db = nullptr;
    const int rc = sqlite3_open_v2(path.c_str(), &db, flags | SQLITE_OPEN_NOMUTEX, nullptr);
    if (rc != SQLITE_OK) {
        std::string message = path.string() + ": cannot open the query log: " +
                              (db != nullptr ? sqlite3_errmsg(db) : sqlite3_errstr(rc));
        sqlite3_close(db);
        return tl::unexpected(std::move(message));
    }
    // A reader meeting the writer's checkpoint waits a moment instead of failing at once.
    sqlite3_busy_timeout(db, 2000);
    sqlite3_extended_result_codes(db, 1);
    return std::unique_ptr<Connection>(new Connection(db, path));
}

Connection::~Connection() { sqlite3_close_v2(db_); }

tl::expected<void, std::string> Connection::exec(const char* sql) {
    char* message = nullptr;
    if (sqlite3_exec(db_, sql, nullptr, nullptr, &message) != SQLITE_OK) {
        std::string text = path_.string() + ": " + (message != nullptr ? message : "error");
        sqlite3_free(message);
        return tl::unexpected(std::move(text));
    }
    return {};
}

tl::expected<Statement, std::string> Connection::prepare(std::string_view sql) {
    sqlite3_stmt* stmt = nullptr;
    if (sqlite3_prepare_v3(db_, sql.data(), static_cast<int>(sql.size()), SQLITE_PREPARE_PERSISTENT,
                           &stmt, nullptr) != SQLITE_OK) {
        return tl::unexpected(error("prepare"));
    }
    return Statement(stmt);
}

tl::expected<std::int64_t, std::string> Connection::scalar(const char* sql) {
    auto stmt = prepare(sql);
    if (!stmt) {
        return tl::unexpected(stmt.error());
    }
    if (stmt->step() != SQLITE_ROW) {
        return tl::unexpected(error(sql));
    }
    return stmt->int64(0);
}

std::string Connection::error(std::string_view what) const {
    return path_.string() + ": " + std::string(what) + ": " + sqlite3_errmsg(db_);
}

}  // namespace moat::querylog
