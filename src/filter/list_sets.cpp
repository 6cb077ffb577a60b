#include "moat/filter/list_sets.hpp"

#include <algorithm>
#include <array>
#include <iterator>

namespace moat::filter {
namespace {

/// lists(i) of a single set i points here: element i is i.
constexpr auto kIdentity = [] {
    std::array<std::uint16_t, std::size_t{ListSets::kMaxId} + 1> ids{};
    for (std::size_t i = 0; i < ids.size(); ++i) {
        ids[i] = static_cast<std::uint16_t>(i);
    }
    return ids;
}();

}  // namespace

std::uint16_t ListSets::merge(std::uint16_t a, std::uint16_t b) {
    if (a == b) {
        return a;
    }
    const std::lock_guard lock(*merging_);
    const std::uint32_t pair = (std::uint32_t{a} << 16U) | b;
    if (auto it = pairs_.find(pair); it != pairs_.end()) {
        return it->second;
    }
    std::vector<std::uint16_t> members;
    const auto la = lists(a);
    const auto lb = lists(b);
    std::set_union(la.begin(), la.end(), lb.begin(), lb.end(), std::back_inserter(members));
    std::uint16_t id = a;
    if (members.size() == la.size()) {
        id = a;  // b's lists were in a already
    } else if (auto it = index_.find(members); it != index_.end()) {
        id = it->second;
    } else if (size() > kMaxId) {
        overflowed_ = true;
    } else {
        id = static_cast<std::uint16_t>(size());
        index_.emplace(members, id);
        merged_.push_back(std::move(members));
    }
    pairs_.emplace(pair, id);
    return id;
}

std::span<const std::uint16_t> ListSets::lists(std::uint16_t id) const noexcept {
    if (id >= list_count_) {
        const auto& m = merged_[id - list_count_];
        return {m.data(), m.size()};
    }
    return {&kIdentity[id], 1};  // a single list is its own set
}

std::size_t ListSets::memory_bytes() const noexcept {
    std::size_t bytes = merged_.capacity() * sizeof(std::vector<std::uint16_t>);
    for (const auto& m : merged_) {
        bytes += m.capacity() * sizeof(std::uint16_t);
    }
    return bytes;
}

void ListSets::finish() {
    index_ = {};
    pairs_ = {};
    merging_.reset();
}

ListSelection::ListSelection(const ListSets& sets, const std::vector<bool>& selected)
    : bits_((sets.size() + 63) / 64, 0) {
    for (std::size_t id = 0; id < sets.size(); ++id) {
        for (const std::uint16_t list : sets.lists(static_cast<std::uint16_t>(id))) {
            if (list < selected.size() && selected[list]) {
                bits_[id / 64] |= std::uint64_t{1} << (id % 64);
                break;
            }
        }
    }
}

}  // namespace moat::filter
