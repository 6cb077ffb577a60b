#include "groups.hpp"

#include <algorithm>
#include <ctime>

namespace moat::engine {
namespace {

constexpr std::uint32_t kMinutesPerDay = 24 * 60;
constexpr std::uint32_t kMinutesPerWeek = 7 * kMinutesPerDay;
constexpr auto kRecheck = std::chrono::seconds{1};

bool contains(const std::vector<std::uint32_t>& ids, std::uint32_t id) {
    return std::find(ids.begin(), ids.end(), id) != ids.end();
}

}  // namespace

std::uint32_t local_minute_of_week(std::chrono::system_clock::time_point t) {
    const std::time_t seconds = std::chrono::system_clock::to_time_t(t);
    std::tm tm{};
    localtime_r(&seconds, &tm);
    const auto day = static_cast<std::uint32_t>((tm.tm_wday + 6) % 7);  // tm: 0 is Sunday
    return day * kMinutesPerDay + static_cast<std::uint32_t>(tm.tm_hour * 60 + tm.tm_min);
}

bool window_open(const ScheduleWindow& w, std::uint32_t minute_of_week) noexcept {
    const std::uint32_t length = w.to_minute > w.from_minute
                                     ? w.to_minute - w.from_minute
                                     : w.to_minute + kMinutesPerDay - w.from_minute;
    for (std::uint32_t day = 0; day < 7; ++day) {
        if ((w.days & (1U << day)) == 0) {
            continue;
        }
        const std::uint32_t start = day * kMinutesPerDay + w.from_minute;
        // Minutes since the window's start, wrapping over Sunday night into Monday.
        const std::uint32_t since = (minute_of_week + kMinutesPerWeek - start) % kMinutesPerWeek;
        if (since < length) {
            return true;
        }
    }
    return false;
}

Groups::Groups(const EngineOptions& options)
    : default_(options.default_group),
      groups_(options.groups),
      states_(options.groups.size() + 1),
      clock_(options.clock),
      neighbours_(options.neighbours) {
    any_mac_ = std::any_of(groups_.begin(), groups_.end(),
                           [](const GroupOptions& g) { return !g.macs.empty(); });
    for (std::size_t i = 0; i <= groups_.size(); ++i) {
        BlockingOptions b = options.blocking;
        if (group(i).blocking_mode) {
            b.mode = *group(i).blocking_mode;
        }
        blocking_.push_back(b);
    }
}

std::size_t Groups::group_of(const Client& client) const noexcept {
    if (groups_.empty()) {
        return 0;
    }
    const IpAddress ip = client.address.unmapped();
    std::optional<MacAddress> mac;
    bool mac_looked_up = false;
    for (std::size_t i = 0; i < groups_.size(); ++i) {
        const GroupOptions& g = groups_[i];
        if (std::any_of(g.clients.begin(), g.clients.end(),
                        [&](const Cidr& c) { return c.contains(ip); })) {
            return i + 1;
        }
        if (!g.macs.empty() && any_mac_ && neighbours_ != nullptr) {
            if (!mac_looked_up) {
                mac = neighbours_->mac_of(ip);
                mac_looked_up = true;
            }
            if (mac && std::find(g.macs.begin(), g.macs.end(), *mac) != g.macs.end()) {
                return i + 1;
            }
        }
    }
    return 0;
}

std::uint64_t Groups::open_windows(const GroupOptions& g) {
    if (g.schedule.empty() || clock_ == nullptr) {
        return 0;
    }
    const Clock::time_point now = clock_->now();
    if (checked_ == Clock::time_point{} || now - checked_ >= kRecheck) {
        checked_ = now;
        minute_ = local_minute_of_week(clock_->wall());
    }
    std::uint64_t open = 0;
    for (std::size_t w = 0; w < g.schedule.size() && w < 64; ++w) {
        if (window_open(g.schedule[w], minute_)) {
            open |= std::uint64_t{1} << w;
        }
    }
    return open;
}

const filter::ListSelection* Groups::chosen_lists(
    std::size_t index, const std::shared_ptr<const filter::Snapshot>& snapshot) {
    if (index >= states_.size()) {
        index = 0;  // see group()
    }
    const GroupOptions& g = group(index);
    State& state = states_[index];
    const std::uint64_t open = open_windows(g);
    // Owner comparison: no reference counting per query, and the weak pointer keeps the old
    // snapshot's control block, so a new snapshot can never look like the old one.
    const bool same_snapshot =
        !state.snapshot.owner_before(snapshot) && !snapshot.owner_before(state.snapshot);
    if (state.selection && state.open == open && same_snapshot) {
        return &*state.selection;
    }
    const auto& lists = snapshot->lists();
    std::vector<bool> selected(lists.size(), false);
    for (std::size_t i = 0; i < lists.size(); ++i) {
        const std::uint32_t id = lists[i].spec.id;
        bool on = g.every_list || contains(g.lists, id);
        bool scheduled = false;
        bool in_open_window = false;
        for (std::size_t w = 0; w < g.schedule.size() && w < 64; ++w) {
            if (contains(g.schedule[w].lists, id)) {
                scheduled = true;
                in_open_window = in_open_window || ((open >> w) & 1U) != 0;
            }
        }
        selected[i] = on && (!scheduled || in_open_window);
    }
    state.selection.emplace(snapshot->list_sets(), selected);
    state.snapshot = snapshot;
    state.open = open;
    return &*state.selection;
}

}  // namespace moat::engine
