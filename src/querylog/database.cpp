#include "moat/querylog/database.hpp"

#include <algorithm>
#include <system_error>
#include <utility>
#include <vector>

#include "dictionary.hpp"
#include "schema.hpp"
#include "sqlite.hpp"

namespace moat::querylog {
namespace {

constexpr unsigned kIdShift = 10;  // ids per microsecond before two arrivals share one

tl::expected<void, std::string> check_version(Connection& db, Database::Mode mode) {
    auto version = db.scalar("PRAGMA user_version");
    if (!version) {
        return tl::unexpected(version.error());
    }
    if (*version > schema::kVersion) {
        return tl::unexpected(db.error("schema") + " (version " + std::to_string(*version) +
                              ", written by a newer dnsmoat; this one reads version " +
                              std::to_string(schema::kVersion) + ")");
    }
    if (*version == 0 && mode == Database::Mode::read) {
        return tl::unexpected(db.error("schema") + " (not a dnsmoat query log)");
    }
    return {};
}

}  // namespace

/// The writing side: the insert statement and the dictionaries, prepared once.
class Database::Writer {
public:
    static tl::expected<std::unique_ptr<Writer>, std::string> prepare(Connection& db) {
        auto insert = db.prepare(
            "INSERT INTO queries(id, time, client, domain, qtype, outcome, rcode, transport,"
            " upstream, latency_us, ede, list, line, pattern)"
            " VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)");
        auto domains = Dictionary::prepare(db, "domains", "name");
        auto clients = Dictionary::prepare(db, "clients", "address");
        auto labels = Dictionary::prepare(db, "labels", "text");
        if (!insert || !domains || !clients || !labels) {
            return tl::unexpected(!insert    ? insert.error()
                                  : !domains ? domains.error()
                                  : !clients ? clients.error()
                                             : labels.error());
        }
        return std::make_unique<Writer>(std::move(*insert), std::move(*domains),
                                        std::move(*clients), std::move(*labels));
    }

    Writer(Statement insert, Dictionary domain_ids, Dictionary client_ids, Dictionary label_ids)
        : insert_query(std::move(insert)),
          domains(std::move(domain_ids)),
          clients(std::move(client_ids)),
          labels(std::move(label_ids)) {}

    /// Binds one entry to the insert statement and runs it.
    tl::expected<void, std::string> insert(Connection& db, const Batch& batch, const Batch::Item& e,
                                           std::int64_t id) {
        const std::string_view qname = batch.text(e, 0);
        const std::string_view upstream = batch.text(e, 1);
        const std::string_view list = batch.text(e, 2);
        const std::string_view pattern = batch.text(e, 3);
        auto client = client_id(e.client);
        auto domain = domains.id_of(qname.empty() ? std::string_view(".") : qname);
        auto outcome = labels.id_of(e.outcome);
        auto transport = labels.id_of(e.transport);
        if (!client || !domain || !outcome || !transport) {
            return tl::unexpected(db.error("storing a name"));
        }
        Statement& s = insert_query;
        s.bind(1, id).bind(2, e.time_us).bind(3, *client).bind(4, *domain);
        s.bind(5, std::int64_t{e.qtype}).bind(6, *outcome).bind(7, std::int64_t{e.rcode});
        s.bind(8, *transport).bind(10, std::int64_t{e.latency_us});
        if (!upstream.empty()) {
            auto up = labels.id_of(upstream);
            if (!up) {
                return tl::unexpected(up.error());
            }
            s.bind(9, *up);
        }
        if (e.ede != kNoEde) {
            s.bind(11, std::int64_t{e.ede});
        }
        if (!list.empty()) {
            auto list_id = labels.id_of(list);
            if (!list_id) {
                return tl::unexpected(list_id.error());
            }
            s.bind(12, *list_id);
            if (e.line != 0) {
                s.bind(13, std::int64_t{e.line});
            }
        }
        if (!pattern.empty()) {
            auto pattern_id = labels.id_of(pattern);
            if (!pattern_id) {
                return tl::unexpected(pattern_id.error());
            }
            s.bind(14, *pattern_id);
        }
        const int rc = s.step();
        s.reset();
        if (rc != SQLITE_DONE) {
            return tl::unexpected(db.error("storing a query"));
        }
        return {};
    }

    /// The client's id, from a short list of recent clients before its text is made (a home has
    /// a few dozen devices; each row would otherwise format its address).
    tl::expected<std::int64_t, std::string> client_id(const IpAddress& address) {
        for (const auto& [known, id] : recent_clients) {
            if (known == address) {
                return id;
            }
        }
        auto id = clients.id_of(address.to_text());
        if (id) {
            if (recent_clients.size() == kRecentClients) {
                recent_clients.erase(recent_clients.begin());
            }
            recent_clients.emplace_back(address, *id);
        }
        return id;
    }

    void forget() {
        recent_clients.clear();
        domains.forget();
        clients.forget();
        labels.forget();
    }

    static constexpr std::size_t kRecentClients = 64;
    std::vector<std::pair<IpAddress, std::int64_t>> recent_clients;
    Statement insert_query;
    Dictionary domains;
    Dictionary clients;
    Dictionary labels;
};

Database::Database(std::unique_ptr<Connection> connection, Mode /*mode*/)
    : db_(std::move(connection)) {}
Database::Database(Database&&) noexcept = default;
Database& Database::operator=(Database&&) noexcept = default;
Database::~Database() = default;

std::int64_t Database::id_of_time(std::int64_t time_us) noexcept {
    return std::max<std::int64_t>(time_us, 0) << kIdShift;
}

tl::expected<Database, std::string> Database::open(const std::filesystem::path& path, Mode mode) {
    if (mode == Mode::write && path.has_parent_path()) {
        std::error_code ec;
        std::filesystem::create_directories(path.parent_path(), ec);
        if (ec) {
            return tl::unexpected(path.parent_path().string() +
                                  ": cannot create the query log's directory: " + ec.message());
        }
    }
    const int flags =
        mode == Mode::write ? SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE : SQLITE_OPEN_READONLY;
    auto connection = Connection::open(path, flags);
    if (!connection) {
        return tl::unexpected(connection.error());
    }
    Connection& db = **connection;
    auto ready = db.exec(mode == Mode::write ? schema::kWriterPragmas : schema::kReaderPragmas)
                     .and_then([&] { return check_version(db, mode); });
    if (ready && mode == Mode::write) {
        ready = db.exec(schema::kCreate).and_then([&] {
            return db.exec(("PRAGMA user_version=" + std::to_string(schema::kVersion)).c_str());
        });
    }
    if (!ready) {
        return tl::unexpected(ready.error());
    }
    Database database(std::move(*connection), mode);
    if (mode == Mode::write) {
        auto writer = Writer::prepare(db);
        auto last = db.scalar("SELECT coalesce(max(id), 0) FROM queries");
        if (!writer || !last) {
            return tl::unexpected(writer ? last.error() : writer.error());
        }
        database.writer_ = std::move(*writer);
        database.last_id_ = *last;
    }
    return database;
}

tl::expected<void, std::string> Database::append(std::span<const Entry> entries) {
    Batch batch;
    for (const Entry& e : entries) {
        batch.add(e);
    }
    return append(batch);
}

tl::expected<void, std::string> Database::append(const Batch& entries) {
    if (!writer_) {
        return tl::unexpected(db_->error("append") + " (opened read-only)");
    }
    if (entries.empty()) {
        return {};
    }
    Transaction tx(*db_);
    if (auto begun = tx.begin(); !begun) {
        return begun;
    }
    std::int64_t id = last_id_;
    for (std::size_t i = 0; i < entries.size(); ++i) {
        const Batch::Item& e = entries[i];
        // Increasing even when two arrive in one microsecond or the clock steps back.
        id = std::max(id_of_time(e.time_us), id + 1);
        if (auto stored = writer_->insert(*db_, entries, e, id); !stored) {
            writer_->forget();  // the rollback takes back names inserted in this transaction
            return stored;
        }
    }
    if (auto committed = tx.commit(); !committed) {
        writer_->forget();
        return committed;
    }
    last_id_ = id;
    return {};
}

tl::expected<std::uint64_t, std::string> Database::row_count() {
    auto n = db_->scalar("SELECT count(*) FROM queries");
    if (!n) {
        return tl::unexpected(n.error());
    }
    return static_cast<std::uint64_t>(*n);
}

tl::expected<std::uint64_t, std::string> Database::used_bytes() {
    auto pages = db_->scalar("PRAGMA page_count");
    auto free_pages = db_->scalar("PRAGMA freelist_count");
    auto page_size = db_->scalar("PRAGMA page_size");
    if (!pages || !free_pages || !page_size) {
        return tl::unexpected(db_->error("measuring the file"));
    }
    return static_cast<std::uint64_t>((*pages - *free_pages) * *page_size);
}

tl::expected<Pruned, std::string> Database::prune(std::int64_t oldest_us, std::uint64_t max_bytes,
                                                  std::uint64_t batch) {
    Pruned pruned;
    auto expired = db_->prepare(
        "DELETE FROM queries WHERE id IN"
        " (SELECT id FROM queries WHERE id < ?1 ORDER BY id LIMIT ?2)");
    if (!expired) {
        return tl::unexpected(expired.error());
    }
    expired->bind(1, id_of_time(oldest_us)).bind(2, static_cast<std::int64_t>(batch));
    if (expired->step() != SQLITE_DONE) {
        return tl::unexpected(db_->error("deleting expired rows"));
    }
    pruned.expired = static_cast<std::uint64_t>(db_->changes());
    if (pruned.expired >= batch) {
        return pruned;
    }
    auto used = used_bytes();
    if (!used) {
        return tl::unexpected(used.error());
    }
    if (*used > max_bytes) {
        auto oldest = db_->prepare(
            "DELETE FROM queries WHERE id IN (SELECT id FROM queries ORDER BY id LIMIT ?1)");
        if (!oldest) {
            return tl::unexpected(oldest.error());
        }
        oldest->bind(1, static_cast<std::int64_t>(batch - pruned.expired));
        if (oldest->step() != SQLITE_DONE) {
            return tl::unexpected(db_->error("deleting the oldest rows"));
        }
        pruned.oversize = static_cast<std::uint64_t>(db_->changes());
    }
    return pruned;
}

tl::expected<void, std::string> Database::tidy() {
    auto done = db_->exec(
        "DELETE FROM domains WHERE NOT EXISTS (SELECT 1 FROM queries WHERE domain = domains.id);"
        "DELETE FROM clients WHERE NOT EXISTS (SELECT 1 FROM queries WHERE client = clients.id);"
        "PRAGMA optimize;");
    if (writer_) {
        writer_->forget();
    }
    return done;
}

}  // namespace moat::querylog
