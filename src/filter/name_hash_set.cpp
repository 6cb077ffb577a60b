#include "moat/filter/name_hash_set.hpp"

#include <algorithm>
#include <bit>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "page_advice.hpp"
#include "sort_entries.hpp"

namespace moat::filter {
namespace {

/// Entries per piece of a sort, about: 0.9 MiB of columns, enough pieces for the threads of a
/// load to share a table of 1,000,000 rules evenly (15), few enough to cost nothing apart.
constexpr std::size_t kPieceEntries = std::size_t{1} << 16U;

/// log2 of the directory's bucket count, a power of two: one bucket per 2-4 entries while the
/// directory stays within 256 KiB (2^16 words, up to about 262,000 entries), then as many as
/// that allows down to one per 8-16 entries. A lookup's first read is a directory word: at
/// 1,000,000 rules a directory of 2^18 words (1 MiB) did not stay in the CPU's caches beside
/// the keys, and a lookup often waited for memory twice. At 256 KiB it mostly hits, for a run of
/// 8-16 keys (one or two cache lines, fetched in the same round as one key was) and a longer
/// scan: filter suite p50 -13%, pipeline blocked -10% (docs/benchmarks.md, 2026-12-05). Below
/// that size everything stays in cache anyway and the shorter scan wins.
unsigned directory_bits(std::size_t entries) noexcept {
    constexpr unsigned kCachedBits = 16;
    const auto bits_for = [](std::size_t buckets) {
        return static_cast<unsigned>(
            std::countr_zero(std::bit_ceil(std::max<std::size_t>(buckets, 2))));
    };
    return std::max(bits_for(entries / 16), std::min(bits_for(entries / 4), kCachedBits));
}

}  // namespace

/// A run of coarse buckets sorted apart, and how many entries it kept.
struct SortPiece {
    std::size_t first = 0;
    std::size_t last = 0;
    std::size_t kept = 0;
};

struct NameHashSet::Builder::Sorting {
    unsigned bits = 0;
    CoarseBuckets coarse;
    std::vector<SortPiece> pieces;
};

NameHashSet::Builder::Builder(bool keep_lines) : keep_lines_(keep_lines) {}
NameHashSet::Builder::Builder(Builder&&) noexcept = default;
NameHashSet::Builder& NameHashSet::Builder::operator=(Builder&&) noexcept = default;
NameHashSet::Builder::~Builder() = default;

NameHashSet NameHashSet::Builder::build(ListSets& sets) {
    spread();
    for (std::size_t i = 0; i < pieces(); ++i) {
        sort_piece(i, sets);
    }
    return finish();
}

Columns NameHashSet::Builder::columns() noexcept {
    return {keys_.data(), meta_.data(), keep_lines_ ? line_low_.data() : nullptr,
            keep_lines_ ? line_high_.data() : nullptr};
}

NameHashSet::Builder::Sorting& NameHashSet::Builder::sorting(const char* step) {
    if (!sorting_) {
        // A caller's mistake, not bad input: the steps' order is part of the interface.
        throw std::logic_error(std::string("NameHashSet::Builder::") + step + "() before spread()");
    }
    return *sorting_;
}

void NameHashSet::Builder::spread() {
    const std::size_t n = size();
    auto fresh = std::make_unique<Sorting>();
    if (n > 0) {
        fresh->bits = sort_bits(n);
        Columns c = columns();
        fresh->coarse = spread_coarse(c, n, fresh->bits);
        // Whole coarse buckets, about kPieceEntries entries each.
        const CoarseBuckets& b = fresh->coarse;
        std::size_t first = 0;
        for (std::size_t k = 1; k <= b.count; ++k) {
            if (k == b.count || b.start[k] - b.start[first] >= kPieceEntries) {
                fresh->pieces.push_back({first, k, 0});
                first = k;
            }
        }
    }
    sorting_ = std::move(fresh);
}

std::size_t NameHashSet::Builder::pieces() const noexcept {
    return sorting_ ? sorting_->pieces.size() : 0;
}

void NameHashSet::Builder::sort_piece(std::size_t piece, ListSets& sets) {
    Sorting& sorted = sorting("sort_piece");
    SortPiece& p = sorted.pieces.at(piece);
    Columns c = columns();
    p.kept = sort_fine(c, sorted.coarse, sorted.bits, p.first, p.last, sets);
}

NameHashSet NameHashSet::Builder::finish() {
    NameHashSet set;
    if (size() == 0) {
        *this = Builder(keep_lines_);  // gives back what the columns mapped
        return set;
    }
    const Sorting& sorted = sorting("finish");
    // Each piece kept its survivors at its front: they move down to follow the piece before.
    Columns c = columns();
    std::size_t kept = 0;
    for (const SortPiece& p : sorted.pieces) {
        const std::size_t begin = sorted.coarse.start[p.first];
        for (std::size_t i = 0; i < p.kept && kept != begin; ++i) {
            c.move(begin + i, kept + i);
        }
        kept += p.kept;
    }
    sorting_.reset();
    meta_.truncate(kept);
    line_low_.truncate(kept);
    line_high_.truncate(kept);
    keys_.truncate(kept);
    // One column at a time gives back its tail (duplicates, and the room populated ahead).
    meta_.shrink_to_fit();
    line_low_.shrink_to_fit();
    line_high_.shrink_to_fit();
    keys_.reserve_one();  // room past the last key, which packed keys read as a whole word
    keys_.shrink_to_fit(sizeof(std::uint64_t));
    set.meta_ = std::move(meta_);
    const auto [keys, mapped] = keys_.release();
    set.keys_ = PackedKeys(keys, mapped);

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
    // After the packing, which gave back 2 bytes an entry: the widening takes 1.
    set.lines_ = widen_lines(kept);  // the builder's columns are all empty now
    move_to_huge_pages(set.keys_.address(0), set.keys_.mapped_bytes());
    move_to_huge_pages(set.meta_.data(), set.meta_.mapped_bytes() / sizeof(std::uint16_t));
    move_to_huge_pages(set.lines_.data(), set.lines_.mapped_bytes() / sizeof(std::uint32_t));
    move_to_huge_pages(dir.data(), dir.mapped_bytes() / sizeof(std::uint32_t));
    return set;
}

MappedArray<std::uint32_t> NameHashSet::Builder::widen_lines(std::size_t count) {
    MappedArray<std::uint32_t> lines;
    if (!keep_lines_) {
        return lines;
    }
    lines.reserve(count);
    // Pages given back every 65,536 entries (192 KiB of narrow columns): each call interrupts
    // every core of a process that has run threads, so not for every page.
    constexpr std::size_t kStep = std::size_t{1} << 16U;
    for (std::size_t done = 0; done < count;) {
        const std::size_t end = std::min(count, done + kStep);
        for (std::size_t i = done; i < end; ++i) {
            lines.push_back(line_of(i));
        }
        release(line_low_.data(), end);
        release(line_high_.data(), end);
        done = end;
    }
    line_low_ = MappedArray<std::uint16_t>();
    line_high_ = MappedArray<std::uint8_t>();
    lines.shrink_to_fit();  // the room populated ahead of the last value
    return lines;
}

std::size_t NameHashSet::memory_bytes() const noexcept {
    return keys_.mapped_bytes() + meta_.mapped_bytes() + lines_.mapped_bytes() +
           directory_.mapped_bytes();
}

}  // namespace moat::filter
