#include "moat/filter/name_hash_set.hpp"

#include <utility>

#include "page_advice.hpp"
#include "sort_entries.hpp"

namespace moat::filter {

NameHashSet NameHashSet::Builder::build(ListSets& sets) {
    NameHashSet set;
    const std::size_t n = size();
    if (n == 0) {
        *this = Builder(keep_lines_);  // gives back what the columns mapped
        return set;
    }
    // Sorted and merged where the entries were collected; the survivors are at the front.
    Columns c{keys_.data(), meta_.data(), keep_lines_ ? lines_.data() : nullptr};
    const std::size_t kept = sort_and_merge(c, n, directory_bits(n), sets);
    meta_.truncate(kept);
    lines_.truncate(kept);
    keys_.truncate(kept);
    // One column at a time gives back its tail (duplicates, and the room populated ahead).
    meta_.shrink_to_fit();
    lines_.shrink_to_fit();
    keys_.reserve_one();  // room past the last key, which packed keys read as a whole word
    keys_.shrink_to_fit(sizeof(std::uint64_t));
    set.meta_ = std::move(meta_);
    set.lines_ = std::move(lines_);
    const auto [keys, mapped] = keys_.release();
    set.keys_ = PackedKeys(keys, mapped);  // the builder's columns are all empty now

    // The directory, from the sorted keys in the same pass that packs them, which gives back
    // pages of keys already read as the directory grows, so the two never hold more than the
    // keys alone did.
    const unsigned bits = directory_bits(kept);
    set.shift_ = 64 - bits;
    MappedArray<std::uint32_t>& dir = set.directory_;
    const std::size_t buckets = std::size_t{1} << bits;
    dir.reserve(buckets + 1);
    set.keys_.pack(
        kept, bits,
        [&](std::size_t i, std::uint64_t key) {
            const auto bucket = static_cast<std::size_t>(key >> set.shift_);
            while (dir.size() <= bucket) {
                dir.push_back(
                    static_cast<std::uint32_t>(i));  // buckets up to this key's start here
            }
        },
        [&] { return dir.size() * sizeof(std::uint32_t); });
    while (dir.size() <= buckets) {
        dir.push_back(static_cast<std::uint32_t>(kept));
    }
    dir.shrink_to_fit();  // reserve() mapped a power of two of bytes
    move_to_huge_pages(set.keys_.address(0), set.keys_.mapped_bytes());
    move_to_huge_pages(set.meta_.data(), set.meta_.mapped_bytes() / sizeof(std::uint16_t));
    move_to_huge_pages(set.lines_.data(), set.lines_.mapped_bytes() / sizeof(std::uint32_t));
    move_to_huge_pages(dir.data(), dir.mapped_bytes() / sizeof(std::uint32_t));
    return set;
}

std::size_t NameHashSet::memory_bytes() const noexcept {
    return keys_.mapped_bytes() + meta_.mapped_bytes() + lines_.mapped_bytes() +
           directory_.mapped_bytes();
}

}  // namespace moat::filter
