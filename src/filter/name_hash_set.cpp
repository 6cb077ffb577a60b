#include "moat/filter/name_hash_set.hpp"

#include <sys/mman.h>

#include <algorithm>
#include <bit>
#include <new>
#include <utility>

#include "page_advice.hpp"
#include "sort_entries.hpp"

namespace moat::filter {

void NameHashSet::Builder::Unmap::operator()(Block* block) const noexcept {
    ::munmap(block, sizeof(Block));
}

void NameHashSet::Builder::grow() {
    // MAP_POPULATE: the block's pages in one call rather than one fault each (see prefault()).
    void* mem = ::mmap(nullptr, sizeof(Block), PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
    if (mem == MAP_FAILED) {
        throw std::bad_alloc();
    }
    // Block is an aggregate of arrays of integers: implicitly created in the mapped storage.
    blocks_.emplace_back(static_cast<Block*>(mem));
    fill_ = 0;
}

NameHashSet NameHashSet::Builder::build(ListSets& sets) {
    NameHashSet set;
    const std::size_t n = size();
    if (n == 0) {
        blocks_.clear();
        return set;
    }
    // Move the blocks into the final arrays, freeing each as it is copied, so the peak is one
    // copy of the entries plus one block. (The arrays' pages are mapped lazily; appending touches
    // them only as the blocks go.)
    set.keys_ = PackedKeys(n);
    std::uint64_t* const keys = set.keys_.wide();
    set.meta_.reserve(n);
    if (keep_lines_) {
        set.lines_.reserve(n);
    }
    std::size_t at = 0;
    for (auto& block : blocks_) {
        const auto count = static_cast<std::ptrdiff_t>(std::min(kBlockEntries, n - at));
        prefault(keys + at, static_cast<std::size_t>(count));
        prefault(set.meta_.data() + at, static_cast<std::size_t>(count));
        if (keep_lines_) {
            prefault(set.lines_.data() + at, static_cast<std::size_t>(count));
        }
        std::copy_n(block->keys.begin(), count, keys + at);
        set.meta_.insert(set.meta_.end(), block->meta.begin(), block->meta.begin() + count);
        if (keep_lines_) {
            set.lines_.insert(set.lines_.end(), block->lines.begin(), block->lines.begin() + count);
        }
        at += static_cast<std::size_t>(count);
        block.reset();
    }
    blocks_.clear();
    fill_ = 0;

    // Sorted and merged in place; the survivors are at the front.
    Columns c{keys, set.meta_, set.lines_};
    const std::size_t kept = sort_and_merge(c, n, directory_bits(n), sets);
    if (kept < n) {
        set.meta_.resize(kept);
        if (keep_lines_) {
            set.lines_.resize(kept);
        }
        // Give back the tail when many were duplicates (one array at a time: a small peak).
        if (kept < n - n / 16) {
            set.meta_.shrink_to_fit();
            set.lines_.shrink_to_fit();
        }
    }

    // The directory, from the sorted keys in the same pass that packs them: its pages fill as
    // the keys' pages empty, so the two are never both whole.
    const unsigned bits = directory_bits(kept);
    set.shift_ = 64 - bits;
    std::vector<std::uint32_t>& dir = set.directory_;
    const std::size_t buckets = std::size_t{1} << bits;
    dir.reserve(buckets + 1);
    constexpr std::size_t kDirectoryChunk = 4096;  // 16 KiB of directory mapped at a time
    set.keys_.pack(kept, bits, [&](std::size_t i, std::uint64_t key) {
        const auto bucket = static_cast<std::size_t>(key >> set.shift_);
        while (dir.size() <= bucket) {
            if (dir.size() % kDirectoryChunk == 0) {
                prefault(dir.data() + dir.size(),
                         std::min(kDirectoryChunk, dir.capacity() - dir.size()));
            }
            dir.push_back(static_cast<std::uint32_t>(i));  // buckets up to this key's start here
        }
    });
    dir.resize(buckets + 1, static_cast<std::uint32_t>(kept));
    move_to_huge_pages(set.keys_.address(0), set.keys_.mapped_bytes());
    move_to_huge_pages(set.meta_.data(), set.meta_.capacity());
    move_to_huge_pages(set.lines_.data(), set.lines_.capacity());
    move_to_huge_pages(dir.data(), dir.capacity());
    return set;
}

std::size_t NameHashSet::memory_bytes() const noexcept {
    return keys_.mapped_bytes() + meta_.capacity() * sizeof(std::uint16_t) +
           lines_.capacity() * sizeof(std::uint32_t) +
           directory_.capacity() * sizeof(std::uint32_t);
}

}  // namespace moat::filter
