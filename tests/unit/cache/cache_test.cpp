// Behaviour of the answer cache with a ManualClock: ageing, keys, clamps, negative caching,
// what is refused, expiry, the byte bound and serve-stale.
#include "moat/cache/cache.hpp"

#include <gtest/gtest.h>

#include <array>
#include <chrono>
#include <cstdint>
#include <string_view>
#include <vector>

#include "cache_fixtures.hpp"
#include "moat/cache/cache_key.hpp"
#include "moat/core/clock.hpp"
#include "moat/wire/header.hpp"
#include "moat/wire/message_view.hpp"

namespace moat::cache {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using test::AnswerSpec;
using test::build;
using test::key;
using test::simple_answer;
using wire::RrType;

class CacheTest : public ::testing::Test {
protected:
    /// Looks `k` up and reads back what was written; fails the test on a miss.
    test::Served hit(Cache& cache, const CacheKey& k, std::uint16_t id = 7,
                     LookupMode mode = LookupMode::fresh) {
        const auto result = cache.lookup(k, id, buffer_, mode);
        EXPECT_TRUE(result) << "expected a hit";
        if (!result) {
            return {};
        }
        return test::read_served(std::span<const std::uint8_t>(buffer_).first(result->size));
    }
    bool misses(Cache& cache, const CacheKey& k, LookupMode mode = LookupMode::fresh) {
        const auto result = cache.lookup(k, 7, buffer_, mode);
        return !result && result.error() == Errc::miss;
    }

    ManualClock clock_;
    std::array<std::uint8_t, 4096> buffer_{};
};

TEST_F(CacheTest, HitDecrementsTtlsByWholeSecondsOfAge) {
    Cache cache(clock_);
    ASSERT_TRUE(cache.insert(key("www.example.com"), simple_answer("www.example.com", 300)));
    EXPECT_EQ(hit(cache, key("www.example.com")).ttls, std::vector<std::uint32_t>{300});
    clock_.advance(seconds(100));
    EXPECT_EQ(hit(cache, key("www.example.com")).ttls, std::vector<std::uint32_t>{200});
    clock_.advance(milliseconds(999));
    EXPECT_EQ(hit(cache, key("www.example.com")).ttls, std::vector<std::uint32_t>{200});
    clock_.advance(milliseconds(1));
    EXPECT_EQ(hit(cache, key("www.example.com")).ttls, std::vector<std::uint32_t>{199});
    const Stats stats = cache.stats();
    EXPECT_EQ(stats.hits, 4U);
    EXPECT_EQ(stats.inserts, 1U);
    EXPECT_EQ(stats.entries, 1U);
    EXPECT_GT(stats.bytes, 0U);
}

TEST_F(CacheTest, LookupAtACallersTimeUsesThatTime) {
    Cache cache(clock_);
    const auto k = key("www.example.com");
    ASSERT_TRUE(cache.insert(k, simple_answer("www.example.com", 300)));
    const auto result = cache.lookup(k, 3, buffer_, clock_.now() + seconds(250));
    ASSERT_TRUE(result);
    const auto served =
        test::read_served(std::span<const std::uint8_t>(buffer_).first(result->size));
    EXPECT_EQ(served.ttls, std::vector<std::uint32_t>{50});
    EXPECT_FALSE(cache.lookup(k, 3, buffer_, clock_.now() + seconds(300)));
}

TEST_F(CacheTest, EachRecordKeepsItsOwnTtlAndTheSmallestSetsTheLifetime) {
    Cache cache(clock_);
    AnswerSpec spec;
    spec.records.push_back({wire::Section::answer, "www.example.com", RrType::cname, 3600,
                            wire::encode::name(test::name("web.example.com"))});
    spec.records.push_back(test::a_record("web.example.com", 60));
    ASSERT_TRUE(cache.insert(key("www.example.com"), build(spec)));
    clock_.advance(seconds(30));
    EXPECT_EQ(hit(cache, key("www.example.com")).ttls, (std::vector<std::uint32_t>{3570, 30}));
    clock_.advance(seconds(30));
    EXPECT_TRUE(misses(cache, key("www.example.com")));
}

TEST_F(CacheTest, StampsTheCallersId) {
    Cache cache(clock_);
    ASSERT_TRUE(cache.insert(key("www.example.com"), simple_answer()));
    EXPECT_EQ(hit(cache, key("www.example.com"), 0xBEEF).id, 0xBEEF);
    EXPECT_EQ(hit(cache, key("www.example.com"), 0x0001).id, 0x0001);
}

TEST_F(CacheTest, KeyIgnoresLetterCase) {
    Cache cache(clock_);
    ASSERT_TRUE(cache.insert(key("www.example.com"), simple_answer()));
    EXPECT_EQ(key("WWW.Example.COM"), key("www.example.com"));
    EXPECT_EQ(hit(cache, key("WWW.Example.COM")).ttls.size(), 1U);
}

TEST_F(CacheTest, ADefaultKeyIsTheRootAndFindsNothing) {
    // The default key writes only its name's first octet; what it reads must be that root.
    Cache cache(clock_);
    ASSERT_TRUE(cache.insert(key("www.example.com"), simple_answer()));
    const CacheKey none;
    EXPECT_EQ(std::vector<std::uint8_t>(none.name().begin(), none.name().end()),
              std::vector<std::uint8_t>{0});
    EXPECT_EQ(none.qtype(), 0);
    EXPECT_EQ(none, CacheKey{});
    EXPECT_NE(none, key("www.example.com"));
    EXPECT_TRUE(misses(cache, none));
}

TEST_F(CacheTest, PartitionsNeverShareAnEntry) {
    Cache cache(clock_);
    const CacheKey plain = key("www.example.com");
    const CacheKey family = plain.in_partition(3);
    EXPECT_NE(plain, family);
    EXPECT_EQ(family, key("WWW.example.com").in_partition(3));
    EXPECT_EQ(family.in_partition(0), plain) << "back in partition 0, the same key";
    ASSERT_TRUE(cache.insert(plain, simple_answer("www.example.com", 300)));
    EXPECT_TRUE(misses(cache, family));
    ASSERT_TRUE(cache.insert(family, simple_answer("www.example.com", 60)));
    EXPECT_EQ(hit(cache, plain).ttls, std::vector<std::uint32_t>{300});
    EXPECT_EQ(hit(cache, family).ttls, std::vector<std::uint32_t>{60});
}

/// A query (not a response) for `qname`, with an OPT record when `edns`.
AnswerSpec query_spec(std::string_view qname, RrType qtype, bool edns, bool dnssec_ok) {
    AnswerSpec query;
    query.qname = qname;
    query.qtype = qtype;
    query.response = false;
    query.edns = edns;
    query.dnssec_ok = dnssec_ok;
    return query;
}

TEST_F(CacheTest, KeyFromQueryReadsDoAndEchoesTheQueryCase) {
    Cache cache(clock_);
    AnswerSpec answer;
    answer.records.push_back(test::a_record("www.example.com", 300));
    answer.edns = true;
    answer.dnssec_ok = true;
    const auto query_bytes = build(query_spec("WWW.Example.COM", RrType::a, true, true));
    const auto view = wire::MessageView::parse(query_bytes);
    ASSERT_TRUE(view);
    const auto k = CacheKey::from_query(*view);
    ASSERT_TRUE(k);
    EXPECT_TRUE(k->dnssec_ok());
    EXPECT_EQ(*k, key("www.example.com", RrType::a, true));

    ASSERT_TRUE(cache.insert(key("www.example.com", RrType::a, true), build(answer)));
    const auto served = hit(cache, *k);
    const auto expected_name = test::name("WWW.Example.COM");
    EXPECT_TRUE(std::ranges::equal(served.qname, expected_name.wire()));
}

// The engine's shortcut: a key from a question already read and a DO bit already known is the
// key from_query() makes, echo included, with and without OPT and DO.
TEST_F(CacheTest, KeyOfAQuestionEqualsTheKeyFromItsQuery) {
    for (const bool edns : {false, true}) {
        for (const bool dnssec_ok : {false, true}) {
            if (dnssec_ok && !edns) {
                continue;
            }
            const auto bytes = build(query_spec("Mail.EXAMPLE.org", RrType::aaaa, edns, dnssec_ok));
            const auto view = wire::MessageView::parse(bytes);
            ASSERT_TRUE(view);
            const auto read = CacheKey::from_query(*view);
            ASSERT_TRUE(read);
            const CacheKey made = CacheKey::of_question(*view, *view->question(), dnssec_ok);
            EXPECT_EQ(made, *read) << "edns " << edns << " do " << dnssec_ok;
            EXPECT_EQ(made.hash(), read->hash());
            EXPECT_EQ(made.dnssec_ok(), dnssec_ok);
            EXPECT_TRUE(std::ranges::equal(made.echo_name(), read->echo_name()));
            EXPECT_TRUE(
                std::ranges::equal(made.echo_name(), test::name("Mail.EXAMPLE.org").wire()));
            const CacheKey kept = made.without_echo();
            EXPECT_EQ(kept, made);
            EXPECT_EQ(kept.hash(), made.hash());
            EXPECT_TRUE(kept.echo_name().empty());
        }
    }
}

// The engine lowers the name once and hands it over: the key, its hash and its echo are those
// of_question() makes from the same query.
TEST_F(CacheTest, KeyOfALoweredQuestionEqualsTheKeyOfTheQuestion) {
    for (const char* spelled : {"Mail.EXAMPLE.org", "mail.example.org", "A.B.C.D.e", "."}) {
        for (const bool dnssec_ok : {false, true}) {
            const auto bytes = build(query_spec(spelled, RrType::mx, true, dnssec_ok));
            const auto view = wire::MessageView::parse(bytes);
            ASSERT_TRUE(view);
            const wire::Question question = *view->question();
            const wire::Name lower = wire::Name::from_view_lower(question.qname);
            const CacheKey of_lower =
                CacheKey::of_lowered_question(*view, question, lower.wire(), dnssec_ok);
            const CacheKey of_question = CacheKey::of_question(*view, question, dnssec_ok);
            EXPECT_EQ(of_lower, of_question) << spelled;
            EXPECT_EQ(of_lower.hash(), of_question.hash()) << spelled;
            EXPECT_EQ(of_lower.qtype(), wire::to_u16(RrType::mx));
            EXPECT_EQ(of_lower.dnssec_ok(), dnssec_ok);
            EXPECT_TRUE(std::ranges::equal(of_lower.name(), lower.wire())) << spelled;
            EXPECT_TRUE(std::ranges::equal(of_lower.echo_name(), test::name(spelled).wire()))
                << spelled;
        }
    }
}

TEST_F(CacheTest, IsQuestionOfReadsTheFirstQuestionInAnyLetterCase) {
    const auto k = key("www.example.com");
    EXPECT_TRUE(k.is_question_of(simple_answer("www.example.com")));
    EXPECT_TRUE(k.is_question_of(simple_answer("WWW.Example.COM")));
    EXPECT_FALSE(k.is_question_of(simple_answer("www.example.org")));
    EXPECT_FALSE(k.is_question_of(simple_answer("ww.example.com")));
    AnswerSpec other_type;
    other_type.qtype = RrType::aaaa;
    EXPECT_FALSE(k.is_question_of(build(other_type)));
    AnswerSpec other_class;
    other_class.qclass = wire::RrClass::ch;
    EXPECT_FALSE(k.is_question_of(build(other_class)));
    // Cut anywhere before the question's class ends: not the key's question, and no read past.
    const std::vector<std::uint8_t> whole = simple_answer("www.example.com");
    const std::size_t question_end = wire::kHeaderSize + k.name().size() + 4;
    for (std::size_t n = 0; n < question_end; ++n) {
        EXPECT_FALSE(k.is_question_of(std::span(whole).first(n))) << n;
    }
    EXPECT_TRUE(k.is_question_of(std::span(whole).first(question_end)));
}

TEST_F(CacheTest, DoBitTypeAndClassAreSeparateEntries) {
    Cache cache(clock_);
    ASSERT_TRUE(cache.insert(key("www.example.com"), simple_answer()));
    EXPECT_TRUE(misses(cache, key("www.example.com", RrType::a, true)));
    EXPECT_TRUE(misses(cache, key("www.example.com", RrType::aaaa)));
    EXPECT_TRUE(misses(cache, key("www.example.com", RrType::a, false, wire::RrClass::ch)));

    AnswerSpec with_do;
    with_do.records.push_back(test::a_record("www.example.com", 300, 9));
    ASSERT_TRUE(cache.insert(key("www.example.com", RrType::a, true), build(with_do)));
    EXPECT_EQ(hit(cache, key("www.example.com")).addresses, std::vector<std::uint8_t>{1});
    EXPECT_EQ(hit(cache, key("www.example.com", RrType::a, true)).addresses,
              std::vector<std::uint8_t>{9});
    EXPECT_EQ(cache.stats().entries, 2U);
}

TEST_F(CacheTest, ReplacingAnEntryKeepsOne) {
    Cache cache(clock_);
    ASSERT_TRUE(cache.insert(key("www.example.com"), simple_answer("www.example.com", 300, 1)));
    const auto bytes = cache.stats().bytes;
    ASSERT_TRUE(cache.insert(key("www.example.com"), simple_answer("www.example.com", 300, 2)));
    EXPECT_EQ(hit(cache, key("www.example.com")).addresses, std::vector<std::uint8_t>{2});
    EXPECT_EQ(cache.stats().entries, 1U);
    EXPECT_EQ(cache.stats().bytes, bytes);
}

TEST_F(CacheTest, MinAndMaxTtlClamp) {
    Options options;
    options.min_ttl = 60;
    options.max_ttl = 3600;
    Cache cache(clock_, options);
    ASSERT_TRUE(cache.insert(key("low.example"), simple_answer("low.example", 10)));
    ASSERT_TRUE(cache.insert(key("high.example"), simple_answer("high.example", 86400)));
    EXPECT_EQ(hit(cache, key("low.example")).ttls, std::vector<std::uint32_t>{60});
    EXPECT_EQ(hit(cache, key("high.example")).ttls, std::vector<std::uint32_t>{3600});
    clock_.advance(seconds(59));
    EXPECT_EQ(hit(cache, key("low.example")).ttls, std::vector<std::uint32_t>{1});
    clock_.advance(seconds(1));
    EXPECT_TRUE(misses(cache, key("low.example")));
    clock_.advance(seconds(3540));
    EXPECT_TRUE(misses(cache, key("high.example")));
}

TEST_F(CacheTest, TtlWithTopBitSetCountsAsZero) {
    Cache cache(clock_);
    const auto result =
        cache.insert(key("www.example.com"), simple_answer("www.example.com", 0x80000001U));
    ASSERT_FALSE(result);
    EXPECT_EQ(result.error(), Errc::zero_ttl);
}

AnswerSpec negative(wire::Rcode rcode, std::uint32_t soa_ttl, std::uint32_t minimum) {
    AnswerSpec spec;
    spec.qname = "nope.example.com";
    spec.rcode = rcode;
    spec.records.push_back(test::soa_record("example.com", soa_ttl, minimum));
    return spec;
}

TEST_F(CacheTest, NxdomainLivesForTheSmallerOfSoaTtlAndMinimum) {
    Cache cache(clock_);
    const auto k = key("nope.example.com");
    ASSERT_TRUE(cache.insert(k, build(negative(wire::Rcode::nxdomain, 3600, 300))));
    EXPECT_EQ(hit(cache, k).ttls, std::vector<std::uint32_t>{300});
    clock_.advance(seconds(299));
    EXPECT_EQ(hit(cache, k).ttls, std::vector<std::uint32_t>{1});
    clock_.advance(seconds(1));
    EXPECT_TRUE(misses(cache, k));

    ASSERT_TRUE(cache.insert(k, build(negative(wire::Rcode::nxdomain, 100, 300))));
    EXPECT_EQ(hit(cache, k).ttls, std::vector<std::uint32_t>{100});
    clock_.advance(seconds(100));
    EXPECT_TRUE(misses(cache, k));
}

TEST_F(CacheTest, NodataIsCachedNegatively) {
    Cache cache(clock_);
    const auto k = key("nope.example.com");
    ASSERT_TRUE(cache.insert(k, build(negative(wire::Rcode::noerror, 600, 120))));
    EXPECT_EQ(hit(cache, k).ttls, std::vector<std::uint32_t>{120});
    clock_.advance(seconds(120));
    EXPECT_TRUE(misses(cache, k));
}

TEST_F(CacheTest, NegativeTtlIsCappedAndRaisedByTheClamps) {
    Options options;
    options.max_negative_ttl = 60;
    Cache capped(clock_, options);
    const auto k = key("nope.example.com");
    ASSERT_TRUE(capped.insert(k, build(negative(wire::Rcode::nxdomain, 3600, 900))));
    EXPECT_EQ(hit(capped, k).ttls, std::vector<std::uint32_t>{60});

    Options raised;
    raised.min_ttl = 30;
    Cache raising(clock_, raised);
    ASSERT_TRUE(raising.insert(k, build(negative(wire::Rcode::nxdomain, 3600, 5))));
    EXPECT_EQ(hit(raising, k).ttls, std::vector<std::uint32_t>{30});
}

TEST_F(CacheTest, RefusesWhatMustNotBeCached) {
    Cache cache(clock_);
    const auto k = key("www.example.com");
    const auto refused = [&](const AnswerSpec& spec) {
        const auto result = cache.insert(k, build(spec));
        return result ? Errc{} : result.error();
    };
    AnswerSpec servfail;
    servfail.rcode = wire::Rcode::servfail;
    EXPECT_EQ(refused(servfail), Errc::uncacheable_rcode);
    AnswerSpec refused_rcode;
    refused_rcode.rcode = wire::Rcode::refused;
    EXPECT_EQ(refused(refused_rcode), Errc::uncacheable_rcode);
    AnswerSpec formerr;
    formerr.rcode = wire::Rcode::formerr;
    EXPECT_EQ(refused(formerr), Errc::uncacheable_rcode);

    AnswerSpec truncated;
    truncated.extra_flags = wire::Header::kTc;
    truncated.records.push_back(test::a_record("www.example.com", 300));
    EXPECT_EQ(refused(truncated), Errc::truncated);

    AnswerSpec nx_without_soa;
    nx_without_soa.rcode = wire::Rcode::nxdomain;
    EXPECT_EQ(refused(nx_without_soa), Errc::no_soa);
    AnswerSpec nodata_without_soa;  // e.g. a referral: NS in authority, no SOA
    nodata_without_soa.records.push_back({wire::Section::authority, "example.com", RrType::ns, 300,
                                          wire::encode::name(test::name("ns1.example"))});
    EXPECT_EQ(refused(nodata_without_soa), Errc::no_soa);

    AnswerSpec other_question;
    other_question.qname = "other.example.com";
    other_question.records.push_back(test::a_record("other.example.com", 300));
    EXPECT_EQ(refused(other_question), Errc::question_mismatch);
    AnswerSpec other_type;
    other_type.qtype = RrType::aaaa;
    EXPECT_EQ(refused(other_type), Errc::question_mismatch);

    AnswerSpec query;
    query.response = false;
    query.records.push_back(test::a_record("www.example.com", 300));
    EXPECT_EQ(refused(query), Errc::not_a_response);

    const std::array<std::uint8_t, 5> garbage{1, 2, 3, 4, 5};
    const auto result = cache.insert(k, garbage);
    ASSERT_FALSE(result);
    EXPECT_EQ(result.error(), Errc::malformed);

    EXPECT_TRUE(misses(cache, k));
    const Stats stats = cache.stats();
    EXPECT_EQ(stats.inserts, 0U);
    EXPECT_EQ(stats.rejected, 10U);
    EXPECT_EQ(stats.entries, 0U);
}

TEST_F(CacheTest, ExpiredEntriesMiss) {
    Cache cache(clock_);
    ASSERT_TRUE(cache.insert(key("www.example.com"), simple_answer("www.example.com", 10)));
    clock_.advance(milliseconds(9999));
    EXPECT_EQ(hit(cache, key("www.example.com")).ttls, std::vector<std::uint32_t>{1});
    clock_.advance(milliseconds(1));
    EXPECT_TRUE(misses(cache, key("www.example.com")));
    EXPECT_EQ(cache.stats().misses, 1U);
}

TEST_F(CacheTest, SmallBufferIsNoSpace) {
    Cache cache(clock_);
    ASSERT_TRUE(cache.insert(key("www.example.com"), simple_answer()));
    std::array<std::uint8_t, 16> small{};
    const auto result = cache.lookup(key("www.example.com"), 1, small);
    ASSERT_FALSE(result);
    EXPECT_EQ(result.error(), Errc::no_space);
}

TEST_F(CacheTest, FlushEmptiesIt) {
    Cache cache(clock_);
    ASSERT_TRUE(cache.insert(key("a.example"), simple_answer("a.example")));
    ASSERT_TRUE(cache.insert(key("b.example"), simple_answer("b.example")));
    cache.flush();
    EXPECT_TRUE(misses(cache, key("a.example")));
    EXPECT_TRUE(misses(cache, key("b.example")));
    EXPECT_EQ(cache.stats().entries, 0U);
    EXPECT_EQ(cache.stats().bytes, 0U);
    ASSERT_TRUE(cache.insert(key("a.example"), simple_answer("a.example")));
    EXPECT_EQ(hit(cache, key("a.example")).ttls.size(), 1U);
}

TEST_F(CacheTest, PrefetchingCountsNothingAndChangesNothing) {
    // prefetch() and prefetch_entry() are hints: an empty cache, a present key and an absent
    // one leave every counter and every answer as they were.
    Cache cache(clock_);
    cache.prefetch(key("a.example"));
    EXPECT_FALSE(cache.prefetch_entry(key("a.example"))) << "no slots yet";
    ASSERT_TRUE(cache.insert(key("a.example"), simple_answer("a.example", 300)));
    for (const char* name : {"a.example", "absent.example"}) {
        cache.prefetch(key(name));
        // True only where an entry may hold the key: a lookup of the other would miss.
        EXPECT_EQ(cache.prefetch_entry(key(name)), std::string_view(name) == "a.example");
    }
    const Stats before = cache.stats();
    EXPECT_EQ(before.hits, 0U);
    EXPECT_EQ(before.misses, 0U);
    EXPECT_EQ(hit(cache, key("a.example")).ttls, std::vector<std::uint32_t>{300});
    EXPECT_TRUE(misses(cache, key("absent.example")));
    EXPECT_EQ(cache.stats().hits, 1U);
    EXPECT_EQ(cache.stats().misses, 1U);
    cache.note_miss(key("absent.example"));  // the lookup a caller skipped on that answer
    EXPECT_EQ(cache.stats().misses, 2U);
}

TEST_F(CacheTest, ByteBoundEvictsTheLeastRecentlyUsed) {
    // Measure one entry's charge, then allow three and a half of them in one shard.
    std::size_t charge = 0;
    {
        Cache probe(clock_);
        ASSERT_TRUE(probe.insert(key("a.example"), simple_answer("a.example")));
        charge = probe.stats().bytes;
    }
    Options options;
    options.shards = 1;
    options.max_bytes = charge * 7 / 2;
    Cache cache(clock_, options);
    for (const char* n : {"a.example", "b.example", "c.example"}) {
        ASSERT_TRUE(cache.insert(key(n), simple_answer(n)));
    }
    EXPECT_EQ(cache.stats().bytes, 3 * charge);
    hit(cache, key("a.example"));  // a is now more recent than b and c
    ASSERT_TRUE(cache.insert(key("d.example"), simple_answer("d.example")));
    EXPECT_EQ(cache.stats().evictions, 1U);
    EXPECT_TRUE(misses(cache, key("b.example")));
    hit(cache, key("a.example"));
    hit(cache, key("c.example"));
    hit(cache, key("d.example"));
    EXPECT_LE(cache.stats().bytes, options.max_bytes);

    // Every entry is referenced now: CLOCK clears the bits in one sweep and then evicts one.
    ASSERT_TRUE(cache.insert(key("e.example"), simple_answer("e.example")));
    EXPECT_EQ(cache.stats().entries, 3U);
    EXPECT_EQ(cache.stats().evictions, 2U);
}

TEST_F(CacheTest, EntryLargerThanAShardIsRefused) {
    Options options;
    options.shards = 1;
    options.max_bytes = 64;
    Cache cache(clock_, options);
    const auto result = cache.insert(key("www.example.com"), simple_answer());
    ASSERT_FALSE(result);
    EXPECT_EQ(result.error(), Errc::too_large);
}

TEST_F(CacheTest, ServeStaleWithinMaxAge) {
    Options options;
    options.serve_stale = true;
    options.stale_ttl = 30;
    options.max_stale_age = 3600;
    Cache cache(clock_, options);
    const auto k = key("www.example.com");
    ASSERT_TRUE(cache.insert(k, simple_answer("www.example.com", 60)));
    // Fresh lookups through the stale mode are ordinary hits.
    EXPECT_EQ(hit(cache, k, 7, LookupMode::stale).ttls, std::vector<std::uint32_t>{60});
    clock_.advance(seconds(61));
    EXPECT_TRUE(misses(cache, k));
    const auto stale = cache.lookup(k, 9, buffer_, LookupMode::stale);
    ASSERT_TRUE(stale);
    EXPECT_TRUE(stale->stale);
    const auto served =
        test::read_served(std::span<const std::uint8_t>(buffer_).first(stale->size));
    EXPECT_EQ(served.ttls, std::vector<std::uint32_t>{30});
    EXPECT_EQ(served.id, 9);
    EXPECT_EQ(cache.stats().stale_hits, 1U);

    clock_.advance(seconds(3600 - 2));  // 59 minutes 59 seconds past expiry
    EXPECT_TRUE(cache.lookup(k, 9, buffer_, LookupMode::stale));
    clock_.advance(seconds(1));  // one hour past expiry
    EXPECT_TRUE(misses(cache, k, LookupMode::stale));
}

TEST_F(CacheTest, StaleModeIsFreshOnlyWhenServeStaleIsOff) {
    Cache cache(clock_);
    const auto k = key("www.example.com");
    ASSERT_TRUE(cache.insert(k, simple_answer("www.example.com", 60)));
    clock_.advance(seconds(61));
    EXPECT_TRUE(misses(cache, k, LookupMode::stale));
}

TEST_F(CacheTest, OptionsAreBroughtIntoRange) {
    Options options;
    options.shards = 5;
    options.min_ttl = 100;
    options.max_ttl = 10;
    Cache cache(clock_, options);
    EXPECT_EQ(cache.options().shards, 8U);
    EXPECT_EQ(cache.options().max_ttl, 100U);
    options.shards = 0;
    Cache single(clock_, options);
    EXPECT_EQ(single.options().shards, 1U);
}

}  // namespace
}  // namespace moat::cache
