// The sorted hash table behind every name rule: every key added is found with its payload,
// nothing else is, duplicates merge the way the snapshot documents, at sizes around the
// directory's bucket boundaries.
#include "moat/filter/name_hash_set.hpp"

#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <random>
#include <set>
#include <stdexcept>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "moat/filter/mapped_array.hpp"

namespace moat::filter {
namespace {

/// A list-set table for tests that do not look at sets (lists 0..63).
ListSets& scratch_sets() {
    static ListSets sets(64);
    return sets;
}

struct Payload {
    std::uint16_t list = 0;
    bool important = false;
    std::uint32_t line = 0;
};

std::vector<std::uint64_t> random_keys(std::size_t n, std::uint64_t seed) {
    std::mt19937_64 rng(seed);
    std::unordered_set<std::uint64_t> seen;
    std::vector<std::uint64_t> keys;
    while (keys.size() < n) {
        const std::uint64_t k = rng() | 1U;  // 0 is never a name hash
        if (seen.insert(k).second) {
            keys.push_back(k);
        }
    }
    return keys;
}

/// Expects `b` to hold what `a` holds for every key of `keys`: found or not, with the same
/// line, important flag and lists (each set's lists from its own ListSets).
void expect_same_set(const NameHashSet& a, const ListSets& sets_a, const NameHashSet& b,
                     const ListSets& sets_b, const std::vector<std::uint64_t>& keys) {
    ASSERT_EQ(a.size(), b.size());
    for (const std::uint64_t k : keys) {
        const std::uint32_t at = a.find(k);
        const std::uint32_t bt = b.find(k);
        ASSERT_EQ(at == NameHashSet::kNotFound, bt == NameHashSet::kNotFound);
        if (at == NameHashSet::kNotFound) {
            continue;
        }
        EXPECT_EQ(a.line(at), b.line(bt));
        EXPECT_EQ(a.important(at), b.important(bt));
        const auto lists_a = sets_a.lists(a.list(at));
        const auto lists_b = sets_b.lists(b.list(bt));
        EXPECT_EQ(std::vector<std::uint16_t>(lists_a.begin(), lists_a.end()),
                  std::vector<std::uint16_t>(lists_b.begin(), lists_b.end()));
    }
}

class NameHashSetSizes : public ::testing::TestWithParam<std::size_t> {};

TEST_P(NameHashSetSizes, FindsEveryKeyWithItsPayloadAndNothingElse) {
    const std::size_t n = GetParam();
    const auto keys = random_keys(2 * n, n + 7);
    NameHashSet::Builder b(true);
    std::unordered_map<std::uint64_t, Payload> want;
    for (std::size_t i = 0; i < n; ++i) {
        const Payload p{static_cast<std::uint16_t>(i % 300), i % 3 == 0,
                        static_cast<std::uint32_t>(i + 1)};
        b.add(keys[i], p.list, p.important, p.line);
        want[keys[i]] = p;
    }
    EXPECT_EQ(b.size(), n);
    const NameHashSet set = b.build(scratch_sets());
    EXPECT_EQ(b.size(), 0U);
    ASSERT_EQ(set.size(), n);
    for (std::size_t i = 0; i < n; ++i) {
        const std::uint32_t at = set.find(keys[i]);
        ASSERT_NE(at, NameHashSet::kNotFound) << "key " << i;
        const Payload& p = want[keys[i]];
        EXPECT_EQ(set.list(at), p.list);
        EXPECT_EQ(set.important(at), p.important);
        EXPECT_EQ(set.line(at), p.line);
    }
    for (std::size_t i = n; i < 2 * n; ++i) {
        EXPECT_EQ(set.find(keys[i]), NameHashSet::kNotFound) << "absent key " << i;
    }
    // The extremes of the hash space land in the first and last buckets.
    EXPECT_EQ(set.find(1), NameHashSet::kNotFound);
    EXPECT_EQ(set.find(~std::uint64_t{0}), NameHashSet::kNotFound);
    if (n > 0) {
        // Keys without the directory's bits, a 2-byte list word, a 4-byte line and a 4-byte
        // directory word per 2-4 entries (up to 16 once there are 2^16 words); the keys, list
        // words, lines and directory each a mapping of whole pages.
        const std::size_t per_entry = set.key_bytes() + 2 + 4;
        const std::size_t directory_min = n / 4 > 32768 ? n / 4 : n;
        EXPECT_GT(set.memory_bytes(), n * per_entry + directory_min);
        EXPECT_LT(set.memory_bytes(), n * (per_entry + 2) + 4 * mapping::whole_pages(1));
    }
    // The directory's bits (one bucket per 2-4 entries up to 2^16 buckets) are not stored: 7
    // bytes a key from 2^8 buckets, 6 from 2^16.
    EXPECT_EQ(set.key_bytes(), n / 4 > 32768 ? 6U : n / 4 > 128 ? 7U : 8U);
}

TEST(NameHashSet, KeysDifferingInOneBitAreToldApart) {
    // 6-byte keys: every bit the packing keeps must still count, down to the lowest.
    const auto keys = random_keys(300000, 5);
    NameHashSet::Builder b(false);
    std::unordered_set<std::uint64_t> added;
    for (std::size_t i = 0; i < keys.size(); i += 2) {
        b.add(keys[i], 1, false, 0);
        added.insert(keys[i]);
    }
    const NameHashSet set = b.build(scratch_sets());
    ASSERT_EQ(set.key_bytes(), 6U);
    for (std::size_t i = 0; i < keys.size(); i += 2) {
        ASSERT_NE(set.find(keys[i]), NameHashSet::kNotFound);
        for (unsigned bit = 0; bit < 64; bit += 5) {
            const std::uint64_t near = keys[i] ^ (std::uint64_t{1} << bit);
            if (!added.contains(near)) {
                ASSERT_EQ(set.find(near), NameHashSet::kNotFound) << "bit " << bit;
            }
        }
    }
}

// Around the block size (4096) and the directory's power-of-two steps.
INSTANTIATE_TEST_SUITE_P(Sizes, NameHashSetSizes,
                         ::testing::Values(0, 1, 2, 3, 8, 9, 100, 4095, 4096, 4097, 16385, 65537,
                                           300000));

TEST(NameHashSet, KeysCrowdedIntoTheLastBucketsAreAllFound) {
    // Every key in the top 1/16 of the hash space: the directory (256 KiB) is almost whole
    // before the first key is packed, so the packing gives back keys already read as early and
    // as far as it can (PackedKeys). None of those may be a key not yet packed, nor packed
    // output.
    const auto low = random_keys(300000, 13);
    NameHashSet::Builder b(true);
    std::vector<std::uint64_t> keys;
    for (std::size_t i = 0; i < low.size(); ++i) {
        keys.push_back((std::uint64_t{0xF} << 60U) | (low[i] >> 4U));
        b.add(keys.back(), 1, false, static_cast<std::uint32_t>(i + 1));
    }
    const NameHashSet set = b.build(scratch_sets());
    ASSERT_EQ(set.size(), keys.size());
    for (std::size_t i = 0; i < keys.size(); ++i) {
        const std::uint32_t at = set.find(keys[i]);
        ASSERT_NE(at, NameHashSet::kNotFound) << i;
        ASSERT_EQ(set.line(at), i + 1);
    }
    EXPECT_EQ(set.find(keys[0] ^ 2U), NameHashSet::kNotFound);
}

TEST(NameHashSet, EmptyFindsNothing) {
    const NameHashSet set;
    EXPECT_TRUE(set.empty());
    EXPECT_EQ(set.find(42), NameHashSet::kNotFound);
    set.prefetch(42);
}

TEST(NameHashSet, DuplicatesKeepTheEarliestLineAndTheSetOfTheirListsAndMergeImportant) {
    NameHashSet::Builder b(true);
    b.add(0x1234, 5, false, 90);
    b.add(0x1234, 2, false, 40);
    b.add(0x1234, 2, true, 10);  // same list, earlier line, important
    b.add(0x1234, 7, false, 1);
    b.add(0x9999, 3, false, 3);
    ListSets sets(8);
    const NameHashSet set = b.build(sets);
    ASSERT_EQ(set.size(), 2U);
    const std::uint32_t at = set.find(0x1234);
    ASSERT_NE(at, NameHashSet::kNotFound);
    const auto lists = sets.lists(set.list(at));
    EXPECT_EQ(std::vector<std::uint16_t>(lists.begin(), lists.end()),
              (std::vector<std::uint16_t>{2, 5, 7}));
    EXPECT_EQ(set.list(set.find(0x9999)), 3) << "a name in one list keeps the list itself";
    EXPECT_EQ(set.line(at), 10U);
    EXPECT_TRUE(set.important(at));
    EXPECT_FALSE(set.important(set.find(0x9999)));
}

TEST(NameHashSet, ImportantFromAnyDuplicateSticks) {
    NameHashSet::Builder b(false);
    b.add(77, 1, false, 0);
    b.add(77, 9, true, 0);
    const NameHashSet set = b.build(scratch_sets());
    ASSERT_EQ(set.size(), 1U);
    EXPECT_TRUE(set.important(set.find(77)));
    EXPECT_EQ(scratch_sets().lists(set.list(set.find(77)))[0], 1);
}

TEST(NameHashSet, WithoutLinesReportsLineZeroAndUsesLessMemory) {
    const auto keys = random_keys(50000, 3);
    NameHashSet::Builder with(true);
    NameHashSet::Builder without(false);
    for (const auto k : keys) {
        with.add(k, 1, false, 12);
        without.add(k, 1, false, 12);
    }
    const NameHashSet a = with.build(scratch_sets());
    const NameHashSet b = without.build(scratch_sets());
    EXPECT_EQ(a.line(a.find(keys[10])), 12U);
    EXPECT_EQ(b.line(b.find(keys[10])), 0U);
    EXPECT_EQ(b.memory_bytes() + mapping::whole_pages(keys.size() * sizeof(std::uint32_t)),
              a.memory_bytes());
}

TEST(NameHashSet, LinesKeepTheirThreeBytesAndLinesPastThemAreZero) {
    // A builder keeps a line number's low 16 bits and its next 8 apart: both must come back,
    // order duplicates (the earliest line keeps the rule) and survive the sort's moves.
    constexpr std::size_t kPlain = 20000;
    const auto keys = random_keys(kPlain + 2, 21);
    NameHashSet::Builder b(true);
    const std::array<std::uint32_t, 6> lines = {
        1, 0xFFFF, 0x10000, 0x123456, NameHashSet::kMaxLine, NameHashSet::kMaxLine + 1};
    for (std::size_t i = 0; i < kPlain; ++i) {
        b.add(keys[i], 1, false, lines[i % lines.size()]);
    }
    // Duplicates whose order the low 16 bits alone would get wrong.
    b.add(keys[kPlain], 1, false, 0x20000);
    b.add(keys[kPlain], 1, false, 0x1FFFF);
    b.add(keys[kPlain + 1], 1, false, 0x30000);
    b.add(keys[kPlain + 1], 1, false, 0x2FFFF);
    b.add(keys[kPlain + 1], 1, false, 0x40001);
    const NameHashSet set = b.build(scratch_sets());
    ASSERT_EQ(set.size(), keys.size());
    for (std::size_t i = 0; i < kPlain; ++i) {
        const std::uint32_t want = lines[i % lines.size()];
        ASSERT_EQ(set.line(set.find(keys[i])), want <= NameHashSet::kMaxLine ? want : 0U) << i;
    }
    EXPECT_EQ(set.line(set.find(keys[kPlain])), 0x1FFFFU);
    EXPECT_EQ(set.line(set.find(keys[kPlain + 1])), 0x2FFFFU);
}

TEST(NameHashSet, ManyDuplicatesShrinkTheTables) {
    const auto keys = random_keys(1000, 11);
    NameHashSet::Builder b(true);
    for (int round = 0; round < 50; ++round) {
        for (const auto k : keys) {
            b.add(k, static_cast<std::uint16_t>(round), false, 1);
        }
    }
    const NameHashSet set = b.build(scratch_sets());
    ASSERT_EQ(set.size(), keys.size());
    const std::uint16_t all = set.list(set.find(keys[0]));
    EXPECT_EQ(scratch_sets().lists(all).size(), 50U);
    for (const auto k : keys) {
        ASSERT_EQ(set.list(set.find(k)), all) << "one set for the same 50 lists";
    }
    // The 50,000 entries added took 13 bytes each; the set keeps 1,000, in four columns of
    // whole pages (keys, lists, lines, directory).
    EXPECT_LT(set.memory_bytes(), 4 * mapping::page_size() + std::size_t{13} * keys.size());
}

TEST(NameHashSet, KeysSharingTheirTopBitsAreAllFound) {
    // Every key in one directory bucket: the scan within a bucket, not the directory, decides.
    NameHashSet::Builder b(true);
    std::vector<std::uint64_t> keys;
    for (std::uint64_t i = 40; i >= 1; --i) {  // descending: added out of order
        keys.push_back((std::uint64_t{0xAB} << 56U) | (i * 977));
    }
    for (const std::uint64_t key : keys) {
        b.add(key, 1, false, static_cast<std::uint32_t>(key & 0xFFFF));
    }
    const NameHashSet set = b.build(scratch_sets());
    for (const auto k : keys) {
        const std::uint32_t at = set.find(k);
        ASSERT_NE(at, NameHashSet::kNotFound);
        EXPECT_EQ(set.line(at), k & 0xFFFF);
        EXPECT_EQ(set.find(k + 1), NameHashSet::kNotFound);
    }
}

TEST(NameHashSet, BuildersFilledApartAndAbsorbedBuildTheSameSet) {
    // Entries spread over three builders (as three threads fill them), with duplicates inside
    // and across them, absorbed into one: the same keys, lists, lines and flags as one builder.
    constexpr std::size_t kEntries = 60'000;
    const auto keys = random_keys(kEntries / 2, 99);
    std::mt19937_64 rng(5);
    NameHashSet::Builder whole(true);
    std::vector<NameHashSet::Builder> parts;
    parts.reserve(3);
    for (int i = 0; i < 3; ++i) {
        parts.emplace_back(true);
    }
    for (std::size_t i = 0; i < kEntries; ++i) {
        const std::uint64_t key = keys[rng() % keys.size()];
        const auto list = static_cast<std::uint16_t>(rng() % 40);
        const bool important = rng() % 7 == 0;
        const auto line = static_cast<std::uint32_t>(1 + rng() % 100'000);
        whole.add(key, list, important, line);
        parts[rng() % parts.size()].add(key, list, important, line);
    }
    const std::size_t third = parts[2].size();
    const std::array<NameHashSet::Builder*, 2> others{&parts[1], &parts[2]};
    parts[0].absorb(others);               // the largest keeps its columns, wherever it was
    EXPECT_GE(parts[0].size(), kEntries);  // with the padding, merged away by build()
    EXPECT_EQ(parts[1].size(), 0U);
    EXPECT_EQ(parts[2].size(), 0U);
    EXPECT_GT(third, 0U);
    ListSets sets_whole(64);
    ListSets sets_parts(64);
    const NameHashSet a = whole.build(sets_whole);
    const NameHashSet b = parts[0].build(sets_parts);
    expect_same_set(a, sets_whole, b, sets_parts, keys);
}

TEST(NameHashSet, PiecesSortedInAnyOrderBuildTheWholeSet) {
    // build() in its three steps, as Compiler::build shares them among threads: a table large
    // enough for several pieces, duplicates in every piece (so each keeps fewer than it holds
    // and the join moves them), the pieces sorted last to first. Every key drawn is found with
    // the earliest (list, line) that added it, the union of its lists and any important flag.
    constexpr std::size_t kEntries = 400'000;
    const auto keys = random_keys(kEntries / 3, 21);
    std::mt19937_64 rng(8);
    struct Expected {
        std::pair<std::uint16_t, std::uint32_t> earliest{0xFFFF, 0};
        bool important = false;
        std::set<std::uint16_t> lists;
    };
    std::unordered_map<std::uint64_t, Expected> want;
    NameHashSet::Builder b(true);
    for (std::size_t i = 0; i < kEntries; ++i) {
        const std::uint64_t key = keys[rng() % keys.size()];
        const auto list = static_cast<std::uint16_t>(rng() % 6);  // 63 sets: none overflow
        const bool important = rng() % 7 == 0;
        const auto line = static_cast<std::uint32_t>(1 + rng() % 100'000);
        b.add(key, list, important, line);
        Expected& e = want[key];
        e.earliest = std::min(e.earliest, std::pair{list, line});
        e.important = e.important || important;
        e.lists.insert(list);
    }
    ListSets sets(64);
    b.spread();
    ASSERT_GT(b.pieces(), 3U);
    for (std::size_t i = b.pieces(); i-- > 0;) {
        b.sort_piece(i, sets);
    }
    const NameHashSet set = b.finish();
    EXPECT_EQ(b.size(), 0U);
    ASSERT_EQ(set.size(), want.size());
    for (const auto& [key, e] : want) {
        const std::uint32_t at = set.find(key);
        ASSERT_NE(at, NameHashSet::kNotFound);
        EXPECT_EQ(set.line(at), e.earliest.second);
        EXPECT_EQ(set.important(at), e.important);
        const auto lists = sets.lists(set.list(at));
        EXPECT_EQ(std::set<std::uint16_t>(lists.begin(), lists.end()), e.lists);
    }
}

TEST(NameHashSet, TheStepsOutOfOrderAreRefusedAndLoseNothing) {
    // finish() or sort_piece() before spread() is a caller's mistake: it throws instead of
    // reading a sort that does not exist, and the builder still builds every key afterwards.
    NameHashSet::Builder b(true);
    const auto keys = random_keys(1000, 31);
    for (std::size_t i = 0; i < keys.size(); ++i) {
        b.add(keys[i], 1, false, static_cast<std::uint32_t>(i + 1));
    }
    ListSets sets(2);
    EXPECT_THROW((void)b.finish(), std::logic_error);
    EXPECT_THROW(b.sort_piece(0, sets), std::logic_error);
    b.spread();
    EXPECT_THROW(b.sort_piece(b.pieces(), sets), std::out_of_range);
    for (std::size_t i = 0; i < b.pieces(); ++i) {
        b.sort_piece(i, sets);
    }
    const NameHashSet set = b.finish();
    ASSERT_EQ(set.size(), keys.size());
    for (std::size_t i = 0; i < keys.size(); ++i) {
        const std::uint32_t at = set.find(keys[i]);
        ASSERT_NE(at, NameHashSet::kNotFound);
        EXPECT_EQ(set.line(at), i + 1);
    }
    // An empty builder has nothing to sort: finish() alone gives the empty set.
    NameHashSet::Builder empty(false);
    EXPECT_EQ(empty.finish().size(), 0U);
}

TEST(NameHashSet, AnEmptyBuilderAbsorbsBuildersOfEqualSize) {
    // The builder that absorbs may be the empty one, and the others as large as each other:
    // every entry of every one of them is in the set built.
    for (const std::size_t count : {std::size_t{2}, std::size_t{3}}) {
        for (const std::size_t each : {std::size_t{1}, std::size_t{3000}}) {
            const auto keys = random_keys(count * each, each);
            NameHashSet::Builder into(true);
            std::vector<NameHashSet::Builder> others;
            std::vector<NameHashSet::Builder*> pointers;
            others.reserve(count);
            for (std::size_t b = 0; b < count; ++b) {
                others.emplace_back(true);
                pointers.push_back(&others.back());
                for (std::size_t i = 0; i < each; ++i) {
                    others[b].add(keys[b * each + i], static_cast<std::uint16_t>(b), false,
                                  static_cast<std::uint32_t>(i + 1));
                }
            }
            into.absorb(pointers);
            const NameHashSet set = into.build(scratch_sets());
            ASSERT_EQ(set.size(), count * each) << count << " of " << each;
            for (std::size_t k = 0; k < keys.size(); ++k) {
                const std::uint32_t at = set.find(keys[k]);
                ASSERT_NE(at, NameHashSet::kNotFound) << count << " of " << each << ": " << k;
                EXPECT_EQ(set.list(at), k / each);
                EXPECT_EQ(set.line(at), k % each + 1);
            }
        }
    }
}

}  // namespace
}  // namespace moat::filter
