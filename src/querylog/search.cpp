// Database::search: finds the newest rows that match, one page at a time.
//
// Plans, chosen here rather than left to SQLite's guess, so that every search over millions of
// rows touches few pages:
//   * client, outcome and domain texts become ids first (a missing one: no rows, at once);
//   * a time range is an id range of the table (ids are arrival times shifted, database.hpp);
//   * one domain: the index on domain, walked backwards from the cursor;
//   * a substring or suffix matching a few domains (up to kMaxDomainRuns): one such walk per
//     domain, each stopping after a page, merged here;
//   * matching more domains than that: the table walked backwards, checking each row's name,
//     which finds a page quickly because such a text is common among rows;
//   * two or more of client, outcome and type (or one with a text matching many names): their
//     indexes intersected without touching the table (id_stream.hpp), then only the rows they
//     agree on read and checked, so the cost follows the rarest filter.
#include <algorithm>
#include <climits>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "id_stream.hpp"
#include "moat/querylog/database.hpp"
#include "sqlite.hpp"

namespace moat::querylog {
namespace {

constexpr std::size_t kMaxDomainRuns = 64;
constexpr std::size_t kMaxLimit = 1000;

constexpr const char* kSelect =
    "SELECT q.id, q.time, c.address, d.name, q.qtype, o.text, q.rcode, t.text, u.text,"
    " q.latency_us, q.ede, l.text, q.line, p.text"
    " FROM queries q"
    " CROSS JOIN domains d ON d.id = q.domain"
    " JOIN clients c ON c.id = q.client"
    " JOIN labels o ON o.id = q.outcome"
    " JOIN labels t ON t.id = q.transport"
    " LEFT JOIN labels u ON u.id = q.upstream"
    " LEFT JOIN labels l ON l.id = q.list"
    " LEFT JOIN labels p ON p.id = q.pattern"
    " WHERE q.id >= ?1 AND q.id < ?2";

Row read_row(const Statement& s) {
    Row r;
    r.id = s.int64(0);
    r.time_us = s.int64(1);
    r.client = s.text(2);
    r.domain = s.text(3);
    r.qtype = static_cast<std::uint16_t>(s.int64(4));
    r.outcome = s.text(5);
    r.rcode = static_cast<std::uint8_t>(s.int64(6));
    r.transport = s.text(7);
    r.upstream = s.text(8);
    r.latency_us = static_cast<std::uint32_t>(s.int64(9));
    if (!s.is_null(10)) {
        r.ede = static_cast<std::uint16_t>(s.int64(10));
    }
    r.list = s.text(11);
    r.line = static_cast<std::uint32_t>(s.int64(12));
    r.pattern = s.text(13);
    return r;
}

/// The ids a text filter names: nullopt when the filter is off, empty when nothing matches.
struct Ids {
    std::optional<std::int64_t> client;
    std::optional<std::int64_t> outcome;
    bool none = false;  ///< a filter names something the log has never seen
};

tl::expected<std::optional<std::int64_t>, std::string> lookup(Connection& db, const char* sql,
                                                              const std::string& text) {
    auto s = db.prepare(sql);
    if (!s) {
        return tl::unexpected(s.error());
    }
    s->bind(1, text);
    const int rc = s->step();
    if (rc == SQLITE_ROW) {
        return s->int64(0);
    }
    if (rc != SQLITE_DONE) {
        return tl::unexpected(db.error("search"));
    }
    return std::optional<std::int64_t>{};
}

/// The search's statement with the filters it has; `extra` is appended to the WHERE clause and
/// binds ?7. Prepared once, run once per domain when the plan needs that.
class Runner {
public:
    Runner(Connection& db, const Search& search, const Ids& ids) : db_(db) {
        lo_ = search.from_us ? Database::id_of_time(*search.from_us) : 0;
        hi_ = search.to_us ? Database::id_of_time(*search.to_us) : INT64_MAX;
        if (search.before) {
            hi_ = std::min(hi_, *search.before);
        }
        limit_ = std::clamp<std::size_t>(search.limit, 1, kMaxLimit);
        // Only the filters present appear in the SQL: "?3 IS NULL OR ..." would keep SQLite
        // from using the column's index.
        if (ids.client) {
            where_ += " AND q.client = ?3";
            client_ = *ids.client;
        }
        if (ids.outcome) {
            where_ += " AND q.outcome = ?4";
            outcome_ = *ids.outcome;
        }
        if (search.qtype) {
            where_ += " AND q.qtype = ?5";
            qtype_ = *search.qtype;
        }
    }

    [[nodiscard]] std::size_t limit() const noexcept { return limit_; }
    [[nodiscard]] std::int64_t lo() const noexcept { return lo_; }
    [[nodiscard]] std::int64_t hi() const noexcept { return hi_; }

    tl::expected<void, std::string> prepare(const std::string& extra) {
        auto s =
            db_.prepare(std::string(kSelect) + where_ + extra + " ORDER BY q.id DESC LIMIT ?6");
        if (!s) {
            return tl::unexpected(s.error());
        }
        stmt_ = std::move(*s);
        return {};
    }

    /// Up to limit() rows, newest first, appended to `out`; the number of rows read.
    template <typename Value>
    tl::expected<std::size_t, std::string> run(const Value& extra_value, std::vector<Row>& out) {
        stmt_.reset();
        stmt_.bind(1, lo_).bind(2, hi_).bind(6, static_cast<std::int64_t>(limit_));
        if (client_) {
            stmt_.bind(3, *client_);
        }
        if (outcome_) {
            stmt_.bind(4, *outcome_);
        }
        if (qtype_) {
            stmt_.bind(5, std::int64_t{*qtype_});
        }
        stmt_.bind(7, extra_value);
        std::size_t n = 0;
        int rc = 0;
        while ((rc = stmt_.step()) == SQLITE_ROW) {
            out.push_back(read_row(stmt_));
            ++n;
        }
        if (rc != SQLITE_DONE) {
            return tl::unexpected(db_.error("search"));
        }
        return n;
    }

private:
    Connection& db_;
    Statement stmt_;
    std::string where_;
    std::int64_t lo_ = 0;
    std::int64_t hi_ = 0;
    std::size_t limit_ = 0;
    std::optional<std::int64_t> client_;
    std::optional<std::int64_t> outcome_;
    std::optional<std::uint16_t> qtype_;
};

/// The domain ids a substring or suffix names, up to one more than kMaxDomainRuns.
tl::expected<std::vector<std::int64_t>, std::string> matching_domains(Connection& db,
                                                                      const Search& search) {
    const char* sql =
        search.match == DomainMatch::suffix
            ? "SELECT id FROM domains WHERE name = ?1 OR substr(name, -length(?1) - 1) = '.' || ?1"
              " LIMIT ?2"
            : "SELECT id FROM domains WHERE instr(name, ?1) > 0 LIMIT ?2";
    auto s = db.prepare(sql);
    if (!s) {
        return tl::unexpected(s.error());
    }
    s->bind(1, search.domain).bind(2, static_cast<std::int64_t>(kMaxDomainRuns + 1));
    std::vector<std::int64_t> ids;
    int rc = 0;
    while ((rc = s->step()) == SQLITE_ROW) {
        ids.push_back(s->int64(0));
    }
    if (rc != SQLITE_DONE) {
        return tl::unexpected(db.error("search"));
    }
    return ids;
}

/// The domain text condition on ?7 (bound but unused without a domain filter).
std::string domain_condition(const Search& search) {
    if (search.domain.empty()) {
        return " AND ?7 IS NOT NULL";
    }
    return search.match == DomainMatch::suffix
               ? " AND (d.name = ?7 OR substr(d.name, -length(?7) - 1) = '.' || ?7)"
               : " AND instr(d.name, ?7) > 0";
}

/// The table walked backwards, each row checked: for a text matching many names and no other
/// filter, or no filter at all. True when the page is full (more may follow).
tl::expected<bool, std::string> walk_table(Runner& runner, const Search& search,
                                           std::vector<Row>& rows) {
    if (auto ok = runner.prepare(domain_condition(search)); !ok) {
        return tl::unexpected(ok.error());
    }
    auto n = runner.run(std::string_view(search.domain), rows);
    if (!n) {
        return tl::unexpected(n.error());
    }
    return *n == runner.limit();
}

/// One walk of the domain index per name, merged.
tl::expected<bool, std::string> walk_domains(Runner& runner,
                                             const std::vector<std::int64_t>& domains,
                                             std::vector<Row>& rows) {
    if (auto ok = runner.prepare(" AND q.domain = ?7"); !ok) {
        return tl::unexpected(ok.error());
    }
    bool more = false;
    for (const std::int64_t domain : domains) {
        auto n = runner.run(domain, rows);
        if (!n) {
            return tl::unexpected(n.error());
        }
        more = more || *n == runner.limit();
    }
    std::sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) { return a.id > b.id; });
    if (rows.size() > runner.limit()) {
        rows.resize(runner.limit());
        more = true;
    }
    return more;
}

/// The indexes of client, outcome and type intersected (id_stream.hpp), then each row they
/// agree on read and checked against the text filter.
tl::expected<bool, std::string> intersect_indexes(Connection& db, const Runner& runner,
                                                  const Search& search, const Ids& ids,
                                                  std::vector<Row>& rows) {
    std::vector<IdStream> streams;
    const auto add = [&](const char* column,
                         std::int64_t value) -> tl::expected<void, std::string> {
        auto stream = IdStream::open(db, column, value, runner.lo(), runner.hi());
        if (!stream) {
            return tl::unexpected(stream.error());
        }
        streams.push_back(std::move(*stream));
        return {};
    };
    auto opened = tl::expected<void, std::string>{};
    if (ids.client) {
        opened = add("client", *ids.client);
    }
    if (opened && ids.outcome) {
        opened = add("outcome", *ids.outcome);
    }
    if (opened && search.qtype) {
        opened = add("qtype", *search.qtype);
    }
    auto row = db.prepare(std::string(kSelect) + domain_condition(search) + " AND q.id = ?3");
    if (!opened || !row) {
        return tl::unexpected(!opened ? opened.error() : row.error());
    }
    constexpr std::size_t kChunk = 256;
    while (true) {
        auto agreed = intersect(streams, kChunk);
        if (!agreed) {
            return tl::unexpected(agreed.error());
        }
        for (const std::int64_t id : *agreed) {
            row->reset();
            row->bind(1, runner.lo()).bind(2, runner.hi()).bind(3, id);
            row->bind(7, std::string_view(search.domain));
            const int rc = row->step();
            if (rc == SQLITE_ROW) {
                rows.push_back(read_row(*row));
                if (rows.size() == runner.limit()) {
                    return true;
                }
            } else if (rc != SQLITE_DONE) {
                return tl::unexpected(db.error("search"));
            }
        }
        if (agreed->size() < kChunk) {
            return false;
        }
    }
}

}  // namespace

tl::expected<Page, std::string> Database::search(const Search& search) {
    Ids ids;
    if (!search.client.empty()) {
        auto id = lookup(*db_, "SELECT id FROM clients WHERE address = ?1", search.client);
        if (!id) {
            return tl::unexpected(id.error());
        }
        ids.client = *id;
        ids.none = ids.none || !*id;
    }
    if (!search.outcome.empty()) {
        auto id = lookup(*db_, "SELECT id FROM labels WHERE text = ?1", search.outcome);
        if (!id) {
            return tl::unexpected(id.error());
        }
        ids.outcome = *id;
        ids.none = ids.none || !*id;
    }
    Page page;
    if (ids.none) {
        return page;
    }
    Runner runner(*db_, search, ids);
    std::vector<std::int64_t> domains;
    bool many_names = false;
    if (!search.domain.empty() && search.match == DomainMatch::exact) {
        auto id = lookup(*db_, "SELECT id FROM domains WHERE name = ?1", search.domain);
        if (!id) {
            return tl::unexpected(id.error());
        }
        if (!*id) {
            return page;
        }
        domains.push_back(**id);
    } else if (!search.domain.empty()) {
        auto found = matching_domains(*db_, search);
        if (!found) {
            return tl::unexpected(found.error());
        }
        if (found->empty()) {
            return page;
        }
        domains = std::move(*found);
        many_names = domains.size() > kMaxDomainRuns;
    }
    const int equalities = (ids.client ? 1 : 0) + (ids.outcome ? 1 : 0) + (search.qtype ? 1 : 0);
    tl::expected<bool, std::string> more = false;
    if (equalities >= 2 || (equalities == 1 && many_names)) {
        more = intersect_indexes(*db_, runner, search, ids, page.rows);
    } else if (search.domain.empty() || many_names) {
        more = walk_table(runner, search, page.rows);
    } else {
        more = walk_domains(runner, domains, page.rows);
    }
    if (!more) {
        return tl::unexpected(more.error());
    }
    if (*more && !page.rows.empty()) {
        page.next = page.rows.back().id;
    }
    return page;
}

}  // namespace moat::querylog
