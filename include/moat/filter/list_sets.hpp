// Which lists share a rule, and which lists count for a query.
//
// A name listed by several lists is one entry of the snapshot's tables; its payload is a set id
// instead of a list index. Set i (i < list count) is the single list i, so a name in one list
// costs nothing extra; sets of several lists are interned as the compiler meets them (a
// household's lists overlap in a few combinations, so there are few).
//
// A ListSelection (a client group's lists at this moment) marks the sets with at least one
// selected list: a rule counts for the query when its set is marked. Both are immutable once
// built and never allocate when read.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <unordered_map>
#include <vector>

namespace moat::filter {

class ListSets {
public:
    /// Ids above this are never made: the table payload has 15 bits.
    static constexpr std::uint16_t kMaxId = 0x7FFF;

    explicit ListSets(std::size_t list_count = 0)
        : list_count_(list_count), merging_(std::make_unique<std::mutex>()) {}

    /// The id of the union of set `a` and set `b`. When no id is left, `a` (the earlier lists
    /// keep the rule) and overflowed() says so. Safe from several threads at once (tables
    /// built at once, Compiler::build(TaskRunner&)); which union gets which id then depends on
    /// their timing.
    std::uint16_t merge(std::uint16_t a, std::uint16_t b);

    /// Frees what only merge() needs; no merge() after this.
    void finish();

    /// The lists of set `id`, ascending.
    [[nodiscard]] std::span<const std::uint16_t> lists(std::uint16_t id) const noexcept;
    /// Number of ids in use (list count + merged sets).
    [[nodiscard]] std::size_t size() const noexcept { return list_count_ + merged_.size(); }
    [[nodiscard]] std::size_t list_count() const noexcept { return list_count_; }
    [[nodiscard]] bool overflowed() const noexcept { return overflowed_; }
    [[nodiscard]] std::size_t memory_bytes() const noexcept;

private:
    std::size_t list_count_;
    std::vector<std::vector<std::uint16_t>> merged_;  ///< set list_count_ + i
    std::map<std::vector<std::uint16_t>, std::uint16_t> index_;
    std::unordered_map<std::uint32_t, std::uint16_t> pairs_;  ///< (a, b) → merge(a, b)
    bool overflowed_ = false;
    std::unique_ptr<std::mutex> merging_;  ///< held by merge(); null after finish()
};

class ListSelection {
public:
    /// Marks the sets of `sets` holding a list whose `selected[list]` is true (a list beyond
    /// `selected` is not selected).
    ListSelection(const ListSets& sets, const std::vector<bool>& selected);

    [[nodiscard]] bool has(std::uint16_t set) const noexcept {
        const std::size_t word = set / 64U;
        return word < bits_.size() && ((bits_[word] >> (set % 64U)) & 1U) != 0;
    }

private:
    std::vector<std::uint64_t> bits_;
};

}  // namespace moat::filter
