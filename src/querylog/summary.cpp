// Database::summary: a few GROUP BY queries over the id range of the time range (ids are arrival
// times shifted, database.hpp), each reading only that part of the table or of an index.
#include <algorithm>
#include <string>

#include "moat/querylog/database.hpp"
#include "sqlite.hpp"

namespace moat::querylog {
namespace {

tl::expected<std::vector<Ranked>, std::string> ranking(Connection& db, const std::string& sql,
                                                       std::int64_t lo, std::int64_t hi,
                                                       std::size_t top) {
    auto s = db.prepare(sql);
    if (!s) {
        return tl::unexpected(s.error());
    }
    s->bind(1, lo).bind(2, hi).bind(3, static_cast<std::int64_t>(top));
    std::vector<Ranked> out;
    int rc = 0;
    while ((rc = s->step()) == SQLITE_ROW) {
        out.push_back({s->text(0), static_cast<std::uint64_t>(s->int64(1))});
    }
    if (rc != SQLITE_DONE) {
        return tl::unexpected(db.error("summary"));
    }
    return out;
}

}  // namespace

tl::expected<Summary, std::string> Database::summary(const SummaryRequest& request) {
    Summary out;
    out.from_us = request.from_us;
    out.to_us = std::max(request.to_us, request.from_us);
    const std::int64_t interval = std::max<std::int64_t>(request.interval_us, 1'000'000);
    const std::int64_t span = out.to_us - out.from_us;
    if (span / interval > 10'000) {
        return tl::unexpected(db_->error("summary") +
                              " (more than 10,000 intervals: choose a longer interval)");
    }
    const std::size_t top = std::clamp<std::size_t>(request.top, 1, 100);
    const std::int64_t lo = id_of_time(out.from_us);
    const std::int64_t hi = id_of_time(out.to_us);
    for (std::int64_t t = out.from_us; t < out.to_us; t += interval) {
        out.intervals.push_back({t, {}});
    }

    auto by_interval = db_->prepare(
        "SELECT CASE WHEN q.time < ?3 THEN -1 ELSE (q.time - ?3) / ?4 END, o.text, count(*)"
        " FROM queries q"
        " JOIN labels o ON o.id = q.outcome WHERE q.id >= ?1 AND q.id < ?2"
        " GROUP BY 1, q.outcome");
    if (!by_interval) {
        return tl::unexpected(by_interval.error());
    }
    by_interval->bind(1, lo).bind(2, hi).bind(3, out.from_us).bind(4, interval);
    int rc = 0;
    while ((rc = by_interval->step()) == SQLITE_ROW) {
        const std::int64_t index = by_interval->int64(0);
        const std::string outcome = by_interval->text(1);
        const auto n = static_cast<std::uint64_t>(by_interval->int64(2));
        out.total += n;
        out.by_outcome[outcome] += n;
        // A row whose time lies outside its id's range (the clock stepped back) counts in the
        // totals but in no interval.
        if (index >= 0 && static_cast<std::size_t>(index) < out.intervals.size()) {
            out.intervals[static_cast<std::size_t>(index)].by_outcome[outcome] += n;
        }
    }
    if (rc != SQLITE_DONE) {
        return tl::unexpected(db_->error("summary"));
    }

    auto domains = ranking(*db_,
                           "SELECT d.name, count(*) AS n FROM queries q JOIN domains d ON d.id ="
                           " q.domain WHERE q.id >= ?1 AND q.id < ?2 GROUP BY q.domain"
                           " ORDER BY n DESC, d.name LIMIT ?3",
                           lo, hi, top);
    auto blocked = ranking(*db_,
                           "SELECT d.name, count(*) AS n FROM queries q JOIN domains d ON d.id ="
                           " q.domain WHERE q.outcome = (SELECT id FROM labels WHERE text ="
                           " 'blocked') AND q.id >= ?1 AND q.id < ?2 GROUP BY q.domain"
                           " ORDER BY n DESC, d.name LIMIT ?3",
                           lo, hi, top);
    auto clients = ranking(*db_,
                           "SELECT c.address, count(*) AS n FROM queries q JOIN clients c ON"
                           " c.id = q.client WHERE q.id >= ?1 AND q.id < ?2 GROUP BY q.client"
                           " ORDER BY n DESC, c.address LIMIT ?3",
                           lo, hi, top);
    if (!domains || !blocked || !clients) {
        return tl::unexpected(!domains   ? domains.error()
                              : !blocked ? blocked.error()
                                         : clients.error());
    }
    out.top_domains = std::move(*domains);
    out.top_blocked = std::move(*blocked);
    out.top_clients = std::move(*clients);
    return out;
}

}  // namespace moat::querylog

namespace moat::querylog {

tl::expected<std::uint64_t, std::string> Database::replay(
    std::int64_t from_us, std::int64_t to_us, std::int64_t interval_us,
    const std::function<void(const Aggregate&)>& sink) {
    // One pass over a day of rows: pages are read once, so a large page cache only holds memory,
    // and the GROUP BY's sorter keeps up to cache_size of rows in memory before it spills to a
    // temporary file. A small cache caps both (it stays on this connection; see the header).
    if (auto small = db_->exec("PRAGMA cache_size=-1024;"); !small) {
        return tl::unexpected(small.error());
    }
    auto s = db_->prepare(
        "SELECT (q.time / ?3) * ?3, o.text, d.name, c.address, count(*) FROM queries q"
        " JOIN labels o ON o.id = q.outcome JOIN domains d ON d.id = q.domain"
        " JOIN clients c ON c.id = q.client WHERE q.id >= ?1 AND q.id < ?2"
        " GROUP BY 1, q.outcome, q.domain, q.client");
    if (!s) {
        return tl::unexpected(s.error());
    }
    s->bind(1, id_of_time(from_us))
        .bind(2, id_of_time(to_us))
        .bind(3, std::max<std::int64_t>(interval_us, 1));
    std::uint64_t groups = 0;
    Aggregate a;
    int rc = 0;
    while ((rc = s->step()) == SQLITE_ROW) {
        a.interval_start_us = s->int64(0);
        a.outcome = s->text(1);
        a.domain = s->text(2);
        a.client = s->text(3);
        a.count = static_cast<std::uint64_t>(s->int64(4));
        sink(a);
        ++groups;
    }
    if (rc != SQLITE_DONE) {
        return tl::unexpected(db_->error("replay"));
    }
    return groups;
}

}  // namespace moat::querylog
