#include "moat/filter/name_hash_set.hpp"

#include <sys/mman.h>

#include <algorithm>
#include <bit>
#include <new>
#include <utility>

namespace moat::filter {
namespace {

/// The whole `page`-sized pages inside [begin, begin + count): [first, last), empty when none.
struct PageRange {
    std::uintptr_t first = 0;
    std::uintptr_t last = 0;
};
template <typename T>
PageRange pages_within(T* begin, std::size_t count, std::uintptr_t page) noexcept {
    return {(reinterpret_cast<std::uintptr_t>(begin) + page - 1) & ~(page - 1),
            reinterpret_cast<std::uintptr_t>(begin + count) & ~(page - 1)};
}

/// Maps the pages of [begin, begin + count) in one system call before they are written. A page
/// fault costs about 10 us on a KVM guest (40 ms for the 14 MB of a 1,000,000-rule table),
/// more than the whole sort; asking for the pages in bulk costs a tenth. Best effort: kernels
/// before 5.14 fall back to faulting page by page.
template <typename T>
void prefault(T* begin, std::size_t count) noexcept {
#ifdef MADV_POPULATE_WRITE
    const PageRange r = pages_within(begin, count, 4096);
    if (r.last > r.first) {
        // NOLINTNEXTLINE(performance-no-int-to-ptr): madvise takes the page address
        (void)::madvise(reinterpret_cast<void*>(r.first), r.last - r.first, MADV_POPULATE_WRITE);
    }
#else
    (void)begin;
    (void)count;
#endif
}

/// MADV_COLLAPSE (Linux 6.1): glibc 2.36's <sys/mman.h> does not name it yet.
constexpr int kAdviseCollapse = 25;

/// Moves the finished [begin, begin + count) onto transparent huge pages. A lookup touches two
/// random places in tables of many megabytes; with 4 KiB pages each is also a TLB miss, which on
/// a virtual machine (two-level page walk) costs as much as the memory read itself.
///
/// Called only once the table is complete: a table advised before it is written gets 2 MiB
/// pages as the writing reaches them, each up to 2 MiB ahead of the data, while the builder's
/// blocks still hold the same entries, and that rounding (0.7 MiB at 1,000,000 rules) put a
/// rebuild's peak above one snapshot. Collapsing afterwards copies each 2 MiB of small pages
/// into a huge page in place; the resident size does not grow. Only the 2 MiB-aligned interior
/// can be huge; best effort (THP may be off, or the kernel older than 6.1, when khugepaged may
/// still collapse the advised range later).
template <typename T>
void move_to_huge_pages(T* begin, std::size_t count) noexcept {
#ifdef MADV_HUGEPAGE
    const PageRange r = pages_within(begin, count, std::uintptr_t{2} << 20U);
    if (r.last > r.first) {
        // NOLINTNEXTLINE(performance-no-int-to-ptr): madvise takes the page address
        auto* const first = reinterpret_cast<void*>(r.first);
        (void)::madvise(first, r.last - r.first, MADV_HUGEPAGE);
        (void)::madvise(first, r.last - r.first, kAdviseCollapse);
    }
#else
    (void)begin;
    (void)count;
#endif
}

/// The parallel arrays being sorted; one swap moves an entry in all of them.
struct Columns {
    std::vector<std::uint64_t>& keys;
    std::vector<std::uint16_t>& meta;
    std::vector<std::uint32_t>& lines;  ///< empty when line numbers are not kept

    void swap(std::size_t a, std::size_t b) noexcept {
        std::swap(keys[a], keys[b]);
        std::swap(meta[a], meta[b]);
        if (!lines.empty()) {
            std::swap(lines[a], lines[b]);
        }
    }
    [[nodiscard]] std::uint32_t line(std::size_t i) const noexcept {
        return lines.empty() ? 0 : lines[i];
    }
    /// Sort order: hash, then the earliest list and line first (the one a duplicate keeps).
    [[nodiscard]] bool less(std::size_t a, std::size_t b) const noexcept {
        if (keys[a] != keys[b]) {
            return keys[a] < keys[b];
        }
        const auto list_a = meta[a] & NameHashSet::kMaxList;
        const auto list_b = meta[b] & NameHashSet::kMaxList;
        return list_a != list_b ? list_a < list_b : line(a) < line(b);
    }
};

/// log2 of the bucket count: a power of two with 2-4 entries per bucket, at least two buckets.
unsigned directory_bits(std::size_t entries) noexcept {
    const std::size_t buckets = std::bit_ceil(std::max<std::size_t>(entries / 4, 2));
    return static_cast<unsigned>(std::countr_zero(buckets));
}

/// One American-flag pass, in place: moves every entry of buckets [0, buckets) into its bucket.
/// `next[b]` starts at bucket b's first slot and `end_of(b)` is its end; `bucket_of(key)` is the
/// bucket of a key (relative to the same origin). Each swap puts one entry in its final bucket,
/// so the pass is linear.
template <typename EndOf, typename BucketOf>
void flag_pass(Columns& c, std::uint32_t* next, std::size_t buckets, EndOf end_of,
               BucketOf bucket_of) noexcept {
    for (std::size_t b = 0; b < buckets; ++b) {
        const std::uint32_t end = end_of(b);
        while (next[b] < end) {
            const std::uint32_t i = next[b];
            const std::size_t home = bucket_of(c.keys[i]);
            if (home == b) {
                ++next[b];
            } else {
                c.swap(i, next[home]++);
            }
        }
    }
}

/// Sorts the entries by directory bucket, in place. `directory[b]` is where bucket b starts
/// (directory[buckets] == size). Two passes keep the swaps cache-friendly: the first spreads
/// over at most 256 coarse buckets (256 write streams), the second sorts each coarse bucket,
/// which is small enough to stay in cache, into its directory buckets.
void distribute(Columns& c, const std::vector<std::uint32_t>& directory, unsigned bits) {
    const unsigned shift = 64 - bits;
    const unsigned coarse_bits = std::min(bits, 8U);
    const unsigned fine_bits = bits - coarse_bits;
    const std::size_t coarse = std::size_t{1} << coarse_bits;
    std::array<std::uint32_t, 256> coarse_next{};
    for (std::size_t k = 0; k < coarse; ++k) {
        coarse_next[k] = directory[k << fine_bits];
    }
    flag_pass(
        c, coarse_next.data(), coarse,
        [&](std::size_t k) { return directory[(k + 1) << fine_bits]; },
        [&](std::uint64_t key) { return static_cast<std::size_t>(key >> (64 - coarse_bits)); });
    if (fine_bits == 0) {
        return;
    }
    const std::size_t fine = std::size_t{1} << fine_bits;
    std::vector<std::uint32_t> next(fine);  // one coarse bucket's worth at a time
    for (std::size_t k = 0; k < coarse; ++k) {
        const std::size_t first = k << fine_bits;
        std::copy_n(directory.begin() + static_cast<std::ptrdiff_t>(first), fine, next.begin());
        flag_pass(
            c, next.data(), fine, [&](std::size_t b) { return directory[first + b + 1]; },
            [&](std::uint64_t key) { return static_cast<std::size_t>(key >> shift) - first; });
    }
}

}  // namespace

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
    // copy of the entries plus one block. (reserve() maps pages lazily; appending touches them
    // only as the blocks go.)
    set.keys_.reserve(n);
    set.meta_.reserve(n);
    if (keep_lines_) {
        set.lines_.reserve(n);
    }
    std::size_t at = 0;
    for (auto& block : blocks_) {
        const auto count = static_cast<std::ptrdiff_t>(std::min(kBlockEntries, n - at));
        prefault(set.keys_.data() + at, static_cast<std::size_t>(count));
        prefault(set.meta_.data() + at, static_cast<std::size_t>(count));
        if (keep_lines_) {
            prefault(set.lines_.data() + at, static_cast<std::size_t>(count));
        }
        set.keys_.insert(set.keys_.end(), block->keys.begin(), block->keys.begin() + count);
        set.meta_.insert(set.meta_.end(), block->meta.begin(), block->meta.begin() + count);
        if (keep_lines_) {
            set.lines_.insert(set.lines_.end(), block->lines.begin(), block->lines.begin() + count);
        }
        at += static_cast<std::size_t>(count);
        block.reset();
    }
    blocks_.clear();
    fill_ = 0;

    const unsigned bits = directory_bits(n);
    set.shift_ = 64 - bits;
    std::vector<std::uint32_t>& dir = set.directory_;
    dir.reserve((std::size_t{1} << bits) + 1);
    prefault(dir.data(), dir.capacity());
    dir.assign((std::size_t{1} << bits) + 1, 0);
    for (const std::uint64_t k : set.keys_) {
        ++dir[(k >> set.shift_) + 1];
    }
    for (std::size_t b = 1; b < dir.size(); ++b) {
        dir[b] += dir[b - 1];
    }
    Columns c{set.keys_, set.meta_, set.lines_};
    distribute(c, dir, bits);

    // Sort each bucket (2-4 entries on average) and merge duplicates, compacting as we go; the
    // directory is rewritten to the compacted starts.
    std::size_t write = 0;
    const std::size_t buckets = dir.size() - 1;
    for (std::size_t b = 0; b < buckets; ++b) {
        const std::size_t begin = dir[b];
        const std::size_t end = dir[b + 1];
        for (std::size_t i = begin + 1; i < end; ++i) {
            for (std::size_t j = i; j > begin && c.less(j, j - 1); --j) {
                c.swap(j, j - 1);
            }
        }
        dir[b] = static_cast<std::uint32_t>(write);
        for (std::size_t i = begin; i < end; ++i) {
            if (write > dir[b] && set.keys_[write - 1] == set.keys_[i]) {
                std::uint16_t& kept = set.meta_[write - 1];
                const std::uint16_t lists =
                    sets.merge(static_cast<std::uint16_t>(kept & kMaxList),
                               static_cast<std::uint16_t>(set.meta_[i] & kMaxList));
                kept = static_cast<std::uint16_t>(lists | ((kept | set.meta_[i]) & kImportantBit));
                continue;
            }
            if (write != i) {
                set.keys_[write] = set.keys_[i];
                set.meta_[write] = set.meta_[i];
                if (keep_lines_) {
                    set.lines_[write] = set.lines_[i];
                }
            }
            ++write;
        }
    }
    dir[buckets] = static_cast<std::uint32_t>(write);
    if (write < n) {
        set.keys_.resize(write);
        set.meta_.resize(write);
        if (keep_lines_) {
            set.lines_.resize(write);
        }
        // Give back the tail when many were duplicates (one array at a time: a small peak).
        if (write < n - n / 16) {
            set.keys_.shrink_to_fit();
            set.meta_.shrink_to_fit();
            set.lines_.shrink_to_fit();
        }
        // The directory was sized before duplicates went: size it again for what is left. The
        // keys are sorted now, so the starts come from one pass.
        const unsigned fewer_bits = directory_bits(write);
        if (fewer_bits < bits) {
            set.shift_ = 64 - fewer_bits;
            std::vector<std::uint32_t> smaller((std::size_t{1} << fewer_bits) + 1, 0);
            for (const std::uint64_t k : set.keys_) {
                ++smaller[(k >> set.shift_) + 1];
            }
            for (std::size_t b = 1; b < smaller.size(); ++b) {
                smaller[b] += smaller[b - 1];
            }
            dir = std::move(smaller);
        }
    }
    move_to_huge_pages(set.keys_.data(), set.keys_.capacity());
    move_to_huge_pages(set.meta_.data(), set.meta_.capacity());
    move_to_huge_pages(set.lines_.data(), set.lines_.capacity());
    move_to_huge_pages(dir.data(), dir.capacity());
    return set;
}

std::size_t NameHashSet::memory_bytes() const noexcept {
    return keys_.capacity() * sizeof(std::uint64_t) + meta_.capacity() * sizeof(std::uint16_t) +
           lines_.capacity() * sizeof(std::uint32_t) +
           directory_.capacity() * sizeof(std::uint32_t);
}

}  // namespace moat::filter
