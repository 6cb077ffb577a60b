// Which group a client is in, and which lists count for that group now.
//
// A client belongs to the first group naming its address (a prefix or, through the neighbour
// table, its MAC address), else to the default group. A group's selection of lists depends on
// the snapshot (list indexes) and on which of its schedule windows are open; it is rebuilt only
// when one of those changed, and the windows are looked at once a second at most, so the query
// path costs one comparison per group. A group that uses every list without a schedule has no
// selection at all (null: the snapshot's fast path).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "moat/engine/client.hpp"
#include "moat/engine/options.hpp"
#include "moat/filter/list_sets.hpp"
#include "moat/filter/snapshot.hpp"

namespace moat::engine {

/// Minutes since Monday 00:00 local time, 0..10079.
[[nodiscard]] std::uint32_t local_minute_of_week(std::chrono::system_clock::time_point t);
/// Whether `w` is open at `minute_of_week`.
[[nodiscard]] bool window_open(const ScheduleWindow& w, std::uint32_t minute_of_week) noexcept;

class Groups {
public:
    explicit Groups(const EngineOptions& options);

    /// The client's group: 0 is the default group, i > 0 is options.groups[i - 1].
    [[nodiscard]] std::size_t group_of(const Client& client) const noexcept;
    // The accessors take any index: a query forwarded before a reload is completed by the new
    // engine with its old group index, which may be past the new groups (it then counts as
    // the default group).
    [[nodiscard]] const GroupOptions& group(std::size_t index) const noexcept {
        return index == 0 || index > groups_.size() ? default_ : groups_[index - 1];
    }
    /// How group `index` answers a blocked name: the engine's blocking with the group's mode.
    [[nodiscard]] const BlockingOptions& blocking(std::size_t index) const noexcept {
        return blocking_[index < blocking_.size() ? index : 0];
    }
    /// The lists that count for group `index` under `snapshot` now; null: every list.
    /// Asked for every query: the usual answer, every list, is settled here, inline.
    [[nodiscard]] const filter::ListSelection* selection(
        std::size_t index, const std::shared_ptr<const filter::Snapshot>& snapshot) {
        const GroupOptions& g = group(index);
        if (g.every_list && g.schedule.empty()) {
            return nullptr;
        }
        return chosen_lists(index, snapshot);
    }

private:
    /// selection() for a group that picks its lists or has a schedule.
    [[nodiscard]] const filter::ListSelection* chosen_lists(
        std::size_t index, const std::shared_ptr<const filter::Snapshot>& snapshot);

    struct State {
        std::weak_ptr<const filter::Snapshot> snapshot;
        std::uint64_t open = 0;  ///< bit w: schedule window w was open when built
        std::optional<filter::ListSelection> selection;
    };
    [[nodiscard]] std::uint64_t open_windows(const GroupOptions& g);

    GroupOptions default_;
    std::vector<GroupOptions> groups_;
    std::vector<State> states_;              ///< per group index
    std::vector<BlockingOptions> blocking_;  ///< per group index
    const Clock* clock_;
    const NeighbourLookup* neighbours_;
    bool any_mac_ = false;
    Clock::time_point checked_{};  ///< when the windows were last looked at
    std::uint32_t minute_ = 0;     ///< the local minute of the week then
};

}  // namespace moat::engine
