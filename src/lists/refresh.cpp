#include "moat/lists/refresh.hpp"

#include <algorithm>
#include <fstream>

#include "moat/filter/list_scan.hpp"

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

}  // namespace

std::int64_t unix_now() noexcept {
    return std::chrono::duration_cast<std::chrono::seconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
}

RefreshOutcome refresh_list(const ListSource& source, const StateDir& dir,
                            const RefreshPolicy& policy, std::int64_t now) {
    const std::string key = StateDir::key_of(source.name, source.url);
    RefreshOutcome out;
    ListStatus& s = out.status;
    s = dir.read_status(key).value_or(ListStatus{});
    std::error_code ec;
    if (s.has_copy() && !std::filesystem::exists(dir.copy_path(key), ec)) {
        s = ListStatus{};  // the copy went missing: download it whole
    }
    s.name = source.name;
    s.url = source.url;
    s.last_attempt = now;

    const Validators have{s.etag, s.last_modified};
    const FetchResult got = fetch_to_file(source.url, have, dir.partial_path(key), policy.fetch);
    if (got.kind == FetchKind::not_modified && s.has_copy()) {
        record_success(s, now);
        out.result = RefreshResult::unchanged;
    } else if (got.kind != FetchKind::downloaded) {
        record_failure(
            s, got.kind == FetchKind::not_modified ? "HTTP 304 without a copy on disk" : got.error);
    } else if (s.has_copy() && got.content_hash == s.content_hash && got.bytes == s.bytes) {
        s.etag = got.validators.etag;  // same body again, from a server without validators
        s.last_modified = got.validators.last_modified;
        record_success(s, now);
        out.result = RefreshResult::unchanged;
    } else {
        std::ifstream in(dir.partial_path(key), std::ios::binary);
        const filter::ListStats scanned =
            filter::scan_list(in, source.format, source.include_subdomains);
        in.close();
        if (std::string why = rejection(scanned, s, policy.max_shrink_percent); !why.empty()) {
            record_failure(s, std::move(why));
        } else if (auto installed = dir.install_copy(key); !installed) {
            record_failure(s, installed.error());
        } else {
            s.entries = scanned.entries;
            s.lines = scanned.lines;
            s.invalid = scanned.invalid;
            s.first_invalid = scanned.first_invalid;
            s.bytes = got.bytes;
            s.content_hash = got.content_hash;
            s.etag = got.validators.etag;
            s.last_modified = got.validators.last_modified;
            s.last_changed = now;
            record_success(s, now);
            out.result = RefreshResult::updated;
        }
    }
    std::filesystem::remove(dir.partial_path(key), ec);
    if (auto written = dir.write_status(key, s); !written && s.last_error.empty()) {
        s.last_error = written.error();  // the copy is in place; only its record is missing
    }
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
