#include "list_refresher.hpp"

#include <algorithm>
#include <asio/post.hpp>
#include <chrono>
#include <random>

#include "moat/core/log.hpp"

namespace moat::app {
namespace {

constexpr std::int64_t kMaxSleep = 60;  // seconds: re-check at least this often (clock jumps)

lists::RefreshPolicy policy_of(const config::ListsConfig& c) {
    lists::RefreshPolicy p;
    p.fetch.connect_timeout = c.connect_timeout;
    p.fetch.timeout = c.timeout;
    p.fetch.max_bytes = c.max_size;
    p.fetch.ca_file = c.ca_file;
    p.max_shrink_percent = c.max_shrink_percent;
    return p;
}

void log_outcome(const lists::RefreshOutcome& o) {
    const lists::ListStatus& s = o.status;
    switch (o.result) {
        case lists::RefreshResult::updated:
            log::info("list {}: downloaded {} entries ({} invalid lines, {} bytes) from {}", s.name,
                      s.entries, s.invalid, s.bytes, s.url);
            break;
        case lists::RefreshResult::unchanged:
            log::info("list {}: unchanged since {}", s.name, local_time_text(s.last_changed));
            break;
        case lists::RefreshResult::failed:
            if (s.has_copy()) {
                log::warn("list {}: {} ({}); serving the last good copy from {}", s.name,
                          s.last_error, s.url, local_time_text(s.last_changed));
            } else {
                log::warn("list {}: {} ({}); no copy yet, retrying later", s.name, s.last_error,
                          s.url);
            }
            break;
    }
    if (!o.saved && o.result != lists::RefreshResult::failed) {
        // The refresh worked but left no record: the next start may download the list again.
        log::warn("list {}: its status cannot be stored: {}", s.name, s.last_error);
    }
}

}  // namespace

ListRefresher::ListRefresher(asio::io_context& io, std::function<void()> on_updated)
    : io_(io), timer_(io), on_updated_(std::move(on_updated)), seed_(std::random_device{}()) {}

ListRefresher::~ListRefresher() {
    try {
        stop();
    } catch (const std::exception& e) {  // a destructor must not throw; nothing left to save
        log::error("lists: stopping the downloads: {}", e.what());
    }
}

void ListRefresher::configure(const config::Config& config) {
    if (stopped_) {
        return;
    }
    policy_ = policy_of(config.lists);
    state_dir_ = config.lists.state_dir;
    std::vector<Scheduled> next;
    const lists::StateDir dir(state_dir_);
    for (const auto* group : {&config.blocklists, &config.allowlists}) {
        for (const config::ListConfig& l : *group) {
            if (!l.enabled || l.url.empty()) {
                continue;
            }
            Scheduled s;
            s.source = {l.name, l.url, list_format(l.format), l.subdomains.value_or(false),
                        std::chrono::duration_cast<std::chrono::seconds>(l.refresh)};
            s.key = lists::StateDir::key_of(l.name, l.url);
            const auto status = dir.read_status(s.key);
            s.due = lists::next_refresh(s.source, status ? &*status : nullptr,
                                        seed_ ^ std::hash<std::string>{}(s.key));
            next.push_back(std::move(s));
        }
    }
    lists_ = std::move(next);
    if (!lists_.empty()) {
        if (auto ok = dir.ensure(); !ok) {
            log::error("{}; downloaded lists cannot be kept", ok.error());
        }
    }
    arm();
}

void ListRefresher::refresh_all_now() {
    for (Scheduled& s : lists_) {
        s.due = 0;
    }
    arm();
}

void ListRefresher::stop() {
    stopped_ = true;
    cancel_ = true;
    timer_.cancel();
    downloads_.stop();
}

void ListRefresher::arm() {
    if (stopped_ || round_running_ || lists_.empty()) {
        return;
    }
    const std::int64_t now = lists::unix_now();
    std::int64_t first = now + kMaxSleep;
    for (const Scheduled& s : lists_) {
        first = std::min(first, s.due);
    }
    timer_.expires_after(std::chrono::seconds(std::max<std::int64_t>(first - now, 0)));
    timer_.async_wait([this, alive = std::weak_ptr<bool>(alive_)](const std::error_code& ec) {
        if (!ec && !alive.expired()) {
            start_round();
        }
    });
}

void ListRefresher::start_round() {
    if (stopped_ || round_running_) {
        return;
    }
    const std::int64_t now = lists::unix_now();
    std::vector<lists::ListSource> due;  // NOLINT(misc-const-correctness): moved below
    std::vector<std::string> keys;
    for (const Scheduled& s : lists_) {
        if (s.due <= now) {
            due.push_back(s.source);
            keys.push_back(s.key);
        }
    }
    if (due.empty()) {
        arm();
        return;
    }
    round_running_ = true;
    // `held` is left to refresh_in_child, which adds the statuses this process holds.
    lists::FetchRequest request{state_dir_, policy_, std::move(due), {}};
    downloads_.post([this, request = std::move(request), keys = std::move(keys),
                     alive = std::weak_ptr<bool>(alive_)] {
        auto outcomes = lists::refresh_in_child("/proc/self/exe", request, cancel_);
        asio::post(io_, [this, outcomes = std::move(outcomes), keys, alive] {
            if (!alive.expired()) {
                finish_round(outcomes, keys);
            }
        });
    });
}

void ListRefresher::finish_round(const std::vector<lists::RefreshOutcome>& outcomes,
                                 const std::vector<std::string>& keys) {
    round_running_ = false;
    bool updated = false;
    for (std::size_t i = 0; i < outcomes.size(); ++i) {
        if (stopped_ && outcomes[i].result == lists::RefreshResult::failed) {
            continue;  // abandoned by the shutdown: nothing to report
        }
        log_outcome(outcomes[i]);
        updated = updated || outcomes[i].result == lists::RefreshResult::updated;
        for (Scheduled& s : lists_) {  // the config may have changed during the round
            if (s.key == keys[i]) {
                s.due = lists::next_refresh(s.source, &outcomes[i].status,
                                            seed_ ^ std::hash<std::string>{}(s.key));
            }
        }
    }
    if (updated && !stopped_) {
        on_updated_();
    }
    arm();
}

}  // namespace moat::app
