// Blocking paused for a while, for everyone or for named client groups, then back by itself
// (like `pihole disable 5m`). Owned by the app, so a pause outlives the engines a reload
// replaces; set and read on the event loop's thread only. The query path asks paused(), which
// costs one comparison while nothing is paused.
#pragma once

#include <algorithm>
#include <map>
#include <string>

#include "moat/core/clock.hpp"

namespace moat::engine {

class Pauses {
public:
    /// Pauses blocking for everyone (empty `group`) or for one group until `until`.
    void pause(const std::string& group, Clock::time_point until) {
        if (group.empty()) {
            everyone_ = until;
        } else {
            groups_[group] = until;
        }
        latest_ = std::max(latest_, until);
    }
    /// Ends a pause now (everyone's with an empty `group`, and then every group's too).
    void resume(const std::string& group) {
        if (group.empty()) {
            everyone_ = {};
            groups_.clear();
            latest_ = {};
        } else {
            groups_.erase(group);
        }
    }
    /// Whether any pause was ever set (until resume() of everyone): when not, the query path
    /// need not read the clock.
    [[nodiscard]] bool any() const noexcept { return latest_ != Clock::time_point{}; }
    /// Whether blocking is paused for `group` at `now`.
    [[nodiscard]] bool paused(const std::string& group, Clock::time_point now) const noexcept {
        if (now >= latest_) {
            return false;  // nothing paused any more: the common case
        }
        if (now < everyone_) {
            return true;
        }
        const auto it = groups_.find(group);
        return it != groups_.end() && now < it->second;
    }
    /// When the pause of `group` (or everyone's, with an empty name) ends; the epoch: none.
    [[nodiscard]] Clock::time_point until(const std::string& group) const {
        if (group.empty()) {
            return everyone_;
        }
        const auto it = groups_.find(group);
        return it == groups_.end() ? Clock::time_point{} : it->second;
    }

private:
    Clock::time_point everyone_{};
    std::map<std::string, Clock::time_point, std::less<>> groups_;
    Clock::time_point latest_{};  ///< the latest end of any pause
};

}  // namespace moat::engine
