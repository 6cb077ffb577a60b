// The suffix cache must change nothing but speed: every corpus message, the fixtures and a few
// thousand mutations of them read with and without it give identical traces (same records, same
// name offsets/lengths/label counts, same RDATA, same errors at the same offsets). Direct tests
// show that hits are really used and that a hit never lets a name past a limit.
#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "moat/wire/message_view.hpp"
#include "moat/wire/name_decoder.hpp"
#include "support/shared_data.hpp"
#include "unit/support/wire_corpus.hpp"
#include "unit/support/wire_trace.hpp"
#include "unit/support/wire_writer.hpp"

namespace {

using moat::test::trace_message;
using moat::test::WireWriter;
using moat::wire::decode_name;
using moat::wire::Errc;
using moat::wire::ParseOptions;
using moat::wire::SuffixCache;
using moat::wire::WireError;
using Bytes = std::vector<std::uint8_t>;

/// The cached entry for `offset`, if any.
std::optional<SuffixCache::Entry> cached(const SuffixCache& cache, std::uint16_t offset) {
    SuffixCache::Entry e;
    if (cache.find(offset, e)) {
        return e;
    }
    return std::nullopt;
}

// Reports the first differing line rather than two walls of text.
::testing::AssertionResult same_with_and_without_cache(const Bytes& msg) {
    const auto with = trace_message(msg, ParseOptions{.suffix_cache = true});
    const auto without = trace_message(msg, ParseOptions{.suffix_cache = false});
    const std::size_t n = std::min(with.size(), without.size());
    for (std::size_t i = 0; i < n; ++i) {
        if (with[i] != without[i]) {
            return ::testing::AssertionFailure()
                   << "line " << i << "\n  cache:    " << with[i] << "\n  no cache: " << without[i];
        }
    }
    if (with.size() != without.size()) {
        return ::testing::AssertionFailure()
               << "trace lengths differ: " << with.size() << " vs " << without.size();
    }
    return ::testing::AssertionSuccess();
}

TEST(SuffixCacheCorpus, EveryMessageReadsTheSameWithAndWithoutCache) {
    MOAT_SHARED_PATH_OR_SKIP(wire_dir, "data/wire");
    const auto corpus = moat::test::load_corpus(wire_dir);
    ASSERT_GE(corpus.size(), 500U);
    std::size_t records = 0;
    for (const auto& m : corpus) {
        EXPECT_TRUE(same_with_and_without_cache(m.bytes)) << m.name;
        for (const auto& line : trace_message(m.bytes, {})) {
            records += line.starts_with("rr ") ? 1U : 0U;
        }
    }
    EXPECT_GT(records, 1000U);  // the traces are not trivially empty
}

TEST(SuffixCacheCorpus, FixturesReadTheSameWithAndWithoutCache) {
    MOAT_SHARED_PATH_OR_SKIP(dir, "data/wire-fixtures");
    for (const auto& f : moat::test::load_fixtures(dir)) {
        EXPECT_TRUE(same_with_and_without_cache(f.bytes)) << f.name;
    }
}

TEST(SuffixCacheCorpus, MutatedMessagesReadTheSameWithAndWithoutCache) {
    // Byte flips aimed at length octets and pointers make names that stop at every limit; the
    // cache must give the walk's own result each time.
    MOAT_SHARED_PATH_OR_SKIP(dir, "data/wire-fixtures");
    std::vector<Bytes> seeds;
    for (auto& f : moat::test::load_fixtures(dir)) {
        seeds.push_back(std::move(f.bytes));
    }
    std::mt19937 rng(20240601);  // fixed: failures must reproduce
    constexpr std::array<std::uint8_t, 9> kInteresting = {0x00, 0x01, 0x3F, 0x40, 0x80,
                                                          0xC0, 0xC1, 0xFF, 0x0C};
    std::size_t mutations = 0;
    // Rounds per fixture (query, large, pathological): the traces of the 240-record fixture are
    // long, so it gets fewer.
    constexpr std::array<int, 3> kRounds = {2000, 1000, 150};
    for (std::size_t s = 0; s < seeds.size(); ++s) {
        const Bytes& seed = seeds[s];
        for (int round = 0; round < kRounds[s]; ++round) {
            Bytes msg = seed;
            const int flips = 1 + static_cast<int>(rng() % 4);
            for (int k = 0; k < flips; ++k) {
                const std::size_t at = 12 + rng() % (msg.size() - 12);
                if (rng() % 2 == 0) {
                    msg[at] = kInteresting[rng() % std::size(kInteresting)];
                } else {
                    msg[at] = static_cast<std::uint8_t>(rng());
                }
            }
            ++mutations;
            ASSERT_TRUE(same_with_and_without_cache(msg))
                << "seed size " << seed.size() << " round " << round;
        }
    }
    EXPECT_EQ(mutations, 3150U);
}

// ---------------------------------------------------------------------------------------------
// Direct tests

TEST(SuffixCache, StoresDecodedNamesByOffset) {
    SuffixCache cache;
    EXPECT_FALSE(cached(cache, 12).has_value());
    // 12: www.example.com.
    WireWriter w(0, 0, 0, 0);
    w.name("www.example.com");
    const std::size_t second = w.size();
    w.raw({4, 'm', 'a', 'i', 'l'}).ptr(16);  // mail -> example.com (offset 16)
    const Bytes msg = w.take();
    ASSERT_TRUE(decode_name(msg, 12, msg.size(), &cache));
    const auto e = cached(cache, 12);
    ASSERT_TRUE(e.has_value());
    EXPECT_EQ(e->offset, 12);
    EXPECT_EQ(e->length, 17);
    EXPECT_EQ(e->labels, 3);
    EXPECT_EQ(e->hops, 0);

    // A suffix that was never a name start is not in the cache: the pointer to 16 walks.
    auto mail = decode_name(msg, second, msg.size(), &cache);
    ASSERT_TRUE(mail);
    EXPECT_EQ(mail->view.to_text(), "mail.example.com.");
    EXPECT_EQ(mail->hops, 1);
    const auto m = cached(cache, static_cast<std::uint16_t>(second));
    ASSERT_TRUE(m.has_value());
    EXPECT_EQ(m->length, 18);
    EXPECT_EQ(m->labels, 3);
    EXPECT_EQ(m->hops, 1);

    cache.clear();
    EXPECT_FALSE(cached(cache, 12).has_value());
    EXPECT_FALSE(cached(cache, static_cast<std::uint16_t>(second)).has_value());
}

TEST(SuffixCache, HitIsUsedForAPointerToACachedName) {
    // 12: example.com. (question)  25: www -> 12
    WireWriter w(0, 0, 0, 0);
    w.name("example.com").raw({3, 'w', 'w', 'w'}).ptr(12);
    const Bytes msg = w.take();
    SuffixCache honest;
    ASSERT_TRUE(decode_name(msg, 12, msg.size(), &honest));
    auto with = decode_name(msg, 25, msg.size(), &honest);
    auto without = decode_name(msg, 25, msg.size(), nullptr);
    ASSERT_TRUE(with && without);
    EXPECT_EQ(with->view.length(), without->view.length());
    EXPECT_EQ(with->view.label_count(), without->view.label_count());
    EXPECT_EQ(with->hops, without->hops);
    EXPECT_EQ(with->end, without->end);
    EXPECT_EQ(with->hops, 1);

    // Proof the decoder takes the totals from the cache instead of walking: a deliberately
    // wrong entry for offset 12 shows up in the result.
    SuffixCache planted;
    planted.insert({12, 40, 5, 7});
    auto lied = decode_name(msg, 25, msg.size(), &planted);
    ASSERT_TRUE(lied);
    EXPECT_EQ(lied->view.length(), 4U + 40U);
    EXPECT_EQ(lied->view.label_count(), 1U + 5U);
    EXPECT_EQ(lied->hops, 1 + 7);
}

TEST(SuffixCache, BarePointerTakesTheCachedEntry) {
    // 12: example.com.  25: a bare pointer to 12 (the commonest owner of all).
    WireWriter w(0, 0, 0, 0);
    w.name("example.com").ptr(12);
    const Bytes msg = w.take();
    SuffixCache planted;
    planted.insert({12, 40, 5, 7});
    auto lied = decode_name(msg, 25, msg.size(), &planted);
    ASSERT_TRUE(lied);
    EXPECT_EQ(lied->view.length(), 40U);
    EXPECT_EQ(lied->view.label_count(), 5U);
    EXPECT_EQ(lied->hops, 8);
    EXPECT_EQ(lied->end, 27);
    // An entry already at the hop limit cannot take one more pointer: the walk decides.
    SuffixCache full;
    full.insert({12, 13, 2, 128});
    auto walked = decode_name(msg, 25, msg.size(), &full);
    ASSERT_TRUE(walked);
    EXPECT_EQ(walked->hops, 1);
    EXPECT_EQ(walked->view.length(), 13U);
}

TEST(SuffixCache, PointerIntoTheHeaderFailsWithAndWithoutCache) {
    // A bare owner pointer to an offset inside the header: the target can never be a name
    // start, so no cache entry may match it, not even an empty slot's zero key.
    for (const unsigned target : {0U, 1U, 6U, 11U}) {
        WireWriter w(1, 1, 0, 0);
        w.question("example.com", moat::wire::RrType::a);
        const std::size_t owner = w.size();
        w.ptr(target).rfields(moat::wire::RrType::a, Bytes{1, 2, 3, 4});
        const Bytes msg = w.take();
        const WireError want{Errc::forward_pointer, static_cast<std::uint32_t>(owner)};
        EXPECT_EQ(decode_name(msg, owner, msg.size(), nullptr).error(), want) << target;
        SuffixCache fresh;
        auto r = decode_name(msg, owner, msg.size(), &fresh);
        ASSERT_FALSE(r) << "target " << target << " decoded with the cache: length "
                        << r->view.length() << " labels " << r->view.label_count();
        EXPECT_EQ(r.error(), want) << target;
        EXPECT_TRUE(same_with_and_without_cache(msg)) << target;
        for (const bool use_cache : {true, false}) {
            auto view =
                moat::wire::MessageView::parse(msg, ParseOptions{.suffix_cache = use_cache});
            ASSERT_TRUE(view);
            auto range = view->answers();
            EXPECT_EQ(range.next(), nullptr);
            ASSERT_TRUE(range.error().has_value());
            EXPECT_EQ(*range.error(), want) << target << " cache " << use_cache;
        }
    }
}

TEST(SuffixCache, HitThatWouldBreakALimitFallsBackToTheWalk) {
    WireWriter w(0, 0, 0, 0);
    w.name("example.com").raw({3, 'w', 'w', 'w'}).ptr(12);
    const Bytes msg = w.take();
    // Hops: 1 + 128 > 128, so the cached totals cannot be used; the walk finds the truth.
    SuffixCache hops;
    hops.insert({12, 13, 2, 128});
    auto a = decode_name(msg, 25, msg.size(), &hops);
    ASSERT_TRUE(a);
    EXPECT_EQ(a->hops, 1);
    EXPECT_EQ(a->view.length(), 17U);
    // Length: 4 + 253 - 1 > 255.
    SuffixCache length;
    length.insert({12, 253, 2, 0});
    auto b = decode_name(msg, 25, msg.size(), &length);
    ASSERT_TRUE(b);
    EXPECT_EQ(b->view.length(), 17U);
    EXPECT_EQ(b->view.label_count(), 3U);
}

TEST(SuffixCache, CollidingOffsetsEvictEachOther) {
    SuffixCache cache;
    cache.insert({12, 1, 0, 0});
    std::uint16_t other = 0;
    for (std::uint16_t o = 13; o < 2000 && other == 0; ++o) {
        SuffixCache probe;
        probe.insert({12, 1, 0, 0});
        probe.insert({o, 1, 0, 0});
        if (!cached(probe, 12).has_value()) {
            other = o;
        }
    }
    ASSERT_NE(other, 0) << "16 slots: some offset must share a slot with 12";
    cache.insert({other, 3, 1, 0});
    EXPECT_FALSE(cached(cache, 12).has_value());
    ASSERT_TRUE(cached(cache, other).has_value());
    EXPECT_EQ(cached(cache, other)->length, 3);
}

TEST(SuffixCache, MessageOwnerPointingAtTheQuestion) {
    // Question www.example.com; answer owner -> 12; answer owner "a" -> 12.
    WireWriter w(1, 2, 0, 0);
    w.question("www.example.com", moat::wire::RrType::a);
    w.ptr(12).rfields(moat::wire::RrType::a, Bytes{1, 2, 3, 4});
    w.raw({1, 'a'}).ptr(12).rfields(moat::wire::RrType::a, Bytes{5, 6, 7, 8});
    const Bytes msg = w.take();
    for (const bool use_cache : {true, false}) {
        auto view = moat::wire::MessageView::parse(msg, ParseOptions{.suffix_cache = use_cache});
        ASSERT_TRUE(view);
        auto range = view->answers();
        EXPECT_EQ(range.suffix_cache() != nullptr, use_cache);
        std::vector<std::string> owners;
        for (const auto& rr : range) {
            owners.push_back(moat::test::name_repr(rr.owner));
        }
        EXPECT_FALSE(range.error());
        EXPECT_EQ(owners, (std::vector<std::string>{"www.example.com.[off=33 len=17 labels=3]",
                                                    "a.www.example.com.[off=49 len=19 labels=4]"}));
    }
    EXPECT_TRUE(same_with_and_without_cache(msg));
}

TEST(SuffixCache, ErrorsAreTheSameWithAndWithoutCache) {
    // An owner that would be 257 octets through a pointer to a cached 255-octet question name,
    // and a 129-hop chain through cached names.
    WireWriter w(1, 1, 0, 0);
    w.longest_name().qfields(moat::wire::RrType::a);
    w.raw({1, 'x'}).ptr(12).rfields(moat::wire::RrType::a, Bytes{1, 2, 3, 4});
    const Bytes msg = w.take();
    EXPECT_TRUE(same_with_and_without_cache(msg));
    auto view = moat::wire::MessageView::parse(msg);
    ASSERT_TRUE(view);
    auto range = view->answers();
    EXPECT_EQ(range.next(), nullptr);
    ASSERT_TRUE(range.error());
    EXPECT_EQ(*range.error(), (WireError{Errc::name_too_long, 204}));
}

}  // namespace
