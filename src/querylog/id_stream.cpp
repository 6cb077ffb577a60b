#include "id_stream.hpp"

#include <algorithm>
#include <string>

namespace moat::querylog {
namespace {

// Steps taken before a skip seeks in the index instead: a step is a read of the next entry, a
// seek a descent of the B-tree (a handful of page reads).
constexpr int kStepsBeforeSeek = 16;

}  // namespace

tl::expected<IdStream, std::string> IdStream::open(Connection& db, const char* column,
                                                   std::int64_t value, std::int64_t lo,
                                                   std::int64_t hi) {
    auto stmt = db.prepare(std::string("SELECT id FROM queries WHERE ") + column +
                           " = ?1 AND id >= ?2 AND id < ?3 ORDER BY id DESC");
    if (!stmt) {
        return tl::unexpected(stmt.error());
    }
    IdStream stream(db, std::move(*stmt), value, lo);
    if (auto ok = stream.seek(hi); !ok) {
        return tl::unexpected(ok.error());
    }
    return stream;
}

tl::expected<void, std::string> IdStream::seek(std::int64_t hi) {
    stmt_.reset();
    stmt_.bind(1, value_).bind(2, lo_).bind(3, hi);
    return step();
}

tl::expected<void, std::string> IdStream::step() {
    const int rc = stmt_.step();
    if (rc == SQLITE_ROW) {
        current_ = stmt_.int64(0);
        return {};
    }
    current_.reset();
    if (rc != SQLITE_DONE) {
        return tl::unexpected(db_->error("search"));
    }
    return {};
}

tl::expected<void, std::string> IdStream::skip_to(std::int64_t at_most) {
    for (int i = 0; i < kStepsBeforeSeek && current_ && *current_ > at_most; ++i) {
        if (auto ok = step(); !ok) {
            return ok;
        }
    }
    if (current_ && *current_ > at_most) {
        return seek(at_most + 1);
    }
    return {};
}

tl::expected<std::vector<std::int64_t>, std::string> intersect(std::vector<IdStream>& streams,
                                                               std::size_t max) {
    std::vector<std::int64_t> out;
    while (out.size() < max) {
        // The candidate is the oldest current id: every stream must come down to it.
        std::int64_t target = INT64_MAX;
        for (const IdStream& s : streams) {
            if (!s.current()) {
                return out;
            }
            target = std::min(target, *s.current());
        }
        bool all = true;
        for (IdStream& s : streams) {
            if (auto ok = s.skip_to(target); !ok) {
                return tl::unexpected(ok.error());
            }
            if (!s.current()) {
                return out;
            }
            all = all && *s.current() == target;
        }
        if (all) {
            out.push_back(target);
            for (IdStream& s : streams) {
                if (auto ok = s.skip_to(target - 1); !ok) {
                    return tl::unexpected(ok.error());
                }
            }
        }
    }
    return out;
}

}  // namespace moat::querylog
