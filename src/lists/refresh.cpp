#include "moat/lists/refresh.hpp"

#include <algorithm>
#include <fstream>

#include "moat/filter/list_scan.hpp"
#include "moat/lists/copy_check.hpp"

namespace moat::lists {
namespace {

constexpr std::int64_t kFirstRetry = 60;   // seconds after a failed attempt
constexpr std::int64_t kMaxJitter = 3600;  // seconds

/// Why a checked download must not replace the copy; empty when it may.
std::string rejection(const filter::ListStats& got, const ListStatus& had,
                      std::uint32_t max_shrink_percent) {
    if (got.entries == 0) {
        return "the download has no entries (" + std::to_string(got.lines) +
               " lines); the last good copy stays";
    }
    if (had.has_copy() && max_shrink_percent < 100 &&
        got.entries * 100 < had.entries * (100 - max_shrink_percent)) {
        return "the download shrank from " + std::to_string(had.entries) + " to " +
               std::to_string(got.entries) + " entries (more than lists.max_shrink_percent = " +
               std::to_string(max_shrink_percent) + "%); the last good copy stays";
    }
    return {};
}

void record_failure(ListStatus& s, std::string error) {
    s.last_error = std::move(error);
    ++s.failures;
}

void record_success(ListStatus& s, std::int64_t now) {
    s.last_success = now;
    s.last_error.clear();
    s.failures = 0;
}

/// The status a refresh of `key` starts from; `damage` says how the copy on disk differs from
/// it (empty when it does not).
ListStatus starting_status(const ListSource& source, const StateDir& dir, const std::string& key,
                           std::string& damage) {
    ListStatus s = dir.read_status(key).value_or(ListStatus{});
    std::error_code ec;
    if (s.has_copy() && !std::filesystem::exists(dir.copy_path(key), ec)) {
        s = ListStatus{};  // the copy went missing: download it whole
    } else if (s.has_copy()) {
        damage = copy_mismatch(s, digest_file(dir.copy_path(key)));
    }
    s.name = source.name;
    s.url = source.url;
    return s;
}

/// What one refresh works with.
struct Attempt {
    const ListSource& source;
    const StateDir& dir;
    const std::string& key;
    const RefreshPolicy& policy;
    std::int64_t now;
};

/// Checks the download waiting at the partial path and makes it the copy when it passes.
RefreshResult install(const Attempt& a, const FetchResult& got, ListStatus& s) {
    std::ifstream in(a.dir.partial_path(a.key), std::ios::binary);
    const filter::ListStats scanned =
        filter::scan_list(in, a.source.format, a.source.include_subdomains);
    in.close();
    if (std::string why = rejection(scanned, s, a.policy.max_shrink_percent); !why.empty()) {
        record_failure(s, std::move(why));
        return RefreshResult::failed;
    }
    if (auto installed = a.dir.install_copy(a.key); !installed) {
        record_failure(s, installed.error());
        return RefreshResult::failed;
    }
    s.entries = scanned.entries;
    s.lines = scanned.lines;
    s.invalid = scanned.invalid;
    s.first_invalid = scanned.first_invalid;
    s.bytes = got.bytes;
    s.content_hash = got.content_hash;
    s.etag = got.validators.etag;
    s.last_modified = got.validators.last_modified;
    s.last_changed = a.now;
    record_success(s, a.now);
    return RefreshResult::updated;
}

/// Downloads the list and decides what the answer means for the copy; `damage` as
/// starting_status gave it.
RefreshResult download(const Attempt& a, const std::string& damage, ListStatus& s) {
    const bool intact = s.has_copy() && damage.empty();
    const FetchResult got = fetch_to_file(a.source.url, conditional_validators(s, damage.empty()),
                                          a.dir.partial_path(a.key), a.policy.fetch);
    if (got.kind == FetchKind::not_modified && intact) {
        record_success(s, a.now);
        return RefreshResult::unchanged;
    }
    if (got.kind != FetchKind::downloaded) {
        std::string why =
            got.kind == FetchKind::not_modified ? "HTTP 304 without a usable copy" : got.error;
        if (!damage.empty()) {
            why += "; the copy on disk does not match its status (" + damage + ")";
        }
        record_failure(s, std::move(why));
        return RefreshResult::failed;
    }
    if (intact && got.content_hash == s.content_hash && got.bytes == s.bytes) {
        s.etag = got.validators.etag;  // same body again, from a server without validators
        s.last_modified = got.validators.last_modified;
        record_success(s, a.now);
        return RefreshResult::unchanged;
    }
    return install(a, got, s);
}

/// Writes the status; one the disk refuses is held in memory instead, so the schedule and the
/// metrics of this process still see the attempt.
void save_status(const StateDir& dir, const std::string& key, RefreshOutcome& out) {
    const auto written = dir.write_status(key, out.status);
    if (written) {
        dir.release_status(key);
        return;
    }
    if (out.status.last_error.empty()) {
        out.status.last_error = written.error();  // the copy is in place; only its record is not
    }
    out.saved = false;
    dir.hold_status(key, out.status);
}

}  // namespace

std::int64_t unix_now() noexcept {
    return std::chrono::duration_cast<std::chrono::seconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
}

Validators conditional_validators(const ListStatus& status, bool copy_matches) {
    if (!copy_matches) {
        return {};  // a 304 would confirm the damaged copy; the whole list repairs it
    }
    return {status.etag, status.last_modified};
}

RefreshOutcome refresh_list(const ListSource& source, const StateDir& dir,
                            const RefreshPolicy& policy, std::int64_t now) {
    const std::string key = StateDir::key_of(source.name, source.url);
    RefreshOutcome out;
    std::string damage;
    out.status = starting_status(source, dir, key, damage);
    out.status.last_attempt = now;
    if (auto writable = dir.ensure(); !writable) {
        // A download that cannot be kept is not worth its traffic; the reason is the disk.
        record_failure(out.status, writable.error());
    } else {
        const Attempt attempt{source, dir, key, policy, now};
        out.result = download(attempt, damage, out.status);
    }
    std::error_code ec;
    std::filesystem::remove(dir.partial_path(key), ec);
    save_status(dir, key, out);
    return out;
}

std::int64_t next_refresh(const ListSource& source, const ListStatus* status,
                          std::uint64_t jitter_seed) noexcept {
    if (status == nullptr || status->last_attempt == 0) {
        return 0;
    }
    const std::int64_t interval = source.refresh.count();
    if (status->failures > 0 || !status->has_copy()) {
        const std::uint32_t doublings =
            std::min<std::uint32_t>(status->failures > 0 ? status->failures - 1 : 0, 20);
        const std::int64_t backoff = std::min(interval, kFirstRetry << doublings);
        return status->last_attempt + backoff;
    }
    const std::int64_t jitter_span = std::min(interval / 10, kMaxJitter);
    // SplitMix64 of the seed: a spread that does not depend on how seeds were chosen.
    std::uint64_t z = jitter_seed + 0x9e3779b97f4a7c15ULL;
    z = (z ^ (z >> 30U)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27U)) * 0x94d049bb133111ebULL;
    z ^= z >> 31U;
    const auto jitter =
        jitter_span > 0 ? static_cast<std::int64_t>(z % static_cast<std::uint64_t>(jitter_span + 1))
                        : 0;
    return status->last_success + interval + jitter;
}

}  // namespace moat::lists
