// A thin RAII layer over the SQLite C API: a connection and its prepared statements, with errors
// as text (the file and SQLite's own message). Nothing here knows the query log's schema.
#pragma once

#include <sqlite3.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <tl/expected.hpp>

namespace moat::querylog {

class Statement {
public:
    Statement() = default;
    explicit Statement(sqlite3_stmt* stmt) : stmt_(stmt) {}

    Statement& bind(int index, std::int64_t value) {
        sqlite3_bind_int64(stmt_.get(), index, value);
        return *this;
    }
    /// The text is copied by SQLite (SQLITE_TRANSIENT): `value` may die after the call.
    Statement& bind(int index, std::string_view value) {
        sqlite3_bind_text(stmt_.get(), index, value.data(), static_cast<int>(value.size()),
                          SQLITE_TRANSIENT);
        return *this;
    }
    Statement& bind_null(int index) {
        sqlite3_bind_null(stmt_.get(), index);
        return *this;
    }
    /// SQLITE_ROW, SQLITE_DONE or an error code.
    int step() { return sqlite3_step(stmt_.get()); }
    /// Ready to run again, with its bindings cleared.
    void reset() {
        sqlite3_reset(stmt_.get());
        sqlite3_clear_bindings(stmt_.get());
    }

    [[nodiscard]] std::int64_t int64(int column) const {
        return sqlite3_column_int64(stmt_.get(), column);
    }
    [[nodiscard]] bool is_null(int column) const {
        return sqlite3_column_type(stmt_.get(), column) == SQLITE_NULL;
    }
    [[nodiscard]] std::string text(int column) const {
        const auto* p = sqlite3_column_text(stmt_.get(), column);
        const auto n = static_cast<std::size_t>(sqlite3_column_bytes(stmt_.get(), column));
        return p == nullptr ? std::string() : std::string(reinterpret_cast<const char*>(p), n);
    }

private:
    struct Finalize {
        void operator()(sqlite3_stmt* s) const noexcept { sqlite3_finalize(s); }
    };
    std::unique_ptr<sqlite3_stmt, Finalize> stmt_;
};

class Connection {
public:
    /// `flags`: SQLITE_OPEN_* (READONLY, or READWRITE | CREATE).
    static tl::expected<std::unique_ptr<Connection>, std::string> open(
        const std::filesystem::path& path, int flags);

    ~Connection();
    Connection(const Connection&) = delete;
    Connection& operator=(const Connection&) = delete;
    Connection(Connection&&) = delete;
    Connection& operator=(Connection&&) = delete;

    /// Runs one or more statements that return no rows.
    tl::expected<void, std::string> exec(const char* sql);
    tl::expected<Statement, std::string> prepare(std::string_view sql);
    /// An integer from a one-value query (a PRAGMA, a COUNT).
    tl::expected<std::int64_t, std::string> scalar(const char* sql);

    /// "FILE: MESSAGE" for the connection's last error, prefixed by `what`.
    [[nodiscard]] std::string error(std::string_view what) const;
    [[nodiscard]] std::int64_t changes() const { return sqlite3_changes64(db_); }
    [[nodiscard]] sqlite3* handle() const noexcept { return db_; }

private:
    Connection(sqlite3* db, std::filesystem::path path) : db_(db), path_(std::move(path)) {}
    sqlite3* db_;
    std::filesystem::path path_;
};

/// Runs BEGIN on construction and ROLLBACK on destruction unless commit() succeeded.
class Transaction {
public:
    explicit Transaction(Connection& db) : db_(db) {}
    tl::expected<void, std::string> begin() { return db_.exec("BEGIN IMMEDIATE"); }
    tl::expected<void, std::string> commit() {
        auto r = db_.exec("COMMIT");
        done_ = r.has_value();
        return r;
    }
    ~Transaction() {
        if (!done_) {
            (void)db_.exec("ROLLBACK");
        }
    }
    Transaction(const Transaction&) = delete;
    Transaction& operator=(const Transaction&) = delete;
    Transaction(Transaction&&) = delete;
    Transaction& operator=(Transaction&&) = delete;

private:
    Connection& db_;
    bool done_ = false;
};

}  // namespace moat::querylog
