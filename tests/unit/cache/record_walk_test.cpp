// An insert with the caller's walk of the records is the insert that walks them itself: the same
// verdict for every answer the rules tell apart, and the same bytes served from either entry.
#include "moat/cache/record_walk.hpp"

#include <gtest/gtest.h>

#include <array>
#include <chrono>
#include <cstdint>
#include <vector>

#include "cache_fixtures.hpp"
#include "moat/cache/cache.hpp"
#include "moat/core/clock.hpp"
#include "moat/wire/header.hpp"
#include "moat/wire/message_view.hpp"
#include "unit/support/wire_writer.hpp"

namespace moat::cache {
namespace {

using Bytes = std::vector<std::uint8_t>;
using test::AnswerSpec;
using test::build;
using wire::RrType;

/// Every record of `answer` noted in `walk`, as the engine's copy of an upstream answer does.
void walk_all(std::span<const std::uint8_t> answer, RecordWalk& walk) {
    walk.clear();
    const auto view = wire::MessageView::parse(answer);
    ASSERT_TRUE(view);
    auto records = view->records();
    for (const wire::RecordView& rr : records) {
        (void)walk.add(rr, records.suffix_cache());
    }
    ASSERT_FALSE(records.error());
}

class RecordWalkTest : public ::testing::Test {
protected:
    /// Inserts `answer` for `k` both ways and checks that the two caches agree: the verdict, and
    /// after `age` the bytes served (or the miss).
    void expect_same(const CacheKey& k, const Bytes& answer, const char* what,
                     std::chrono::seconds age = std::chrono::seconds{7}) {
        SCOPED_TRACE(what);
        RecordWalk walk;
        walk_all(answer, walk);
        const auto walked = walked_.insert(k, answer, walk);
        const auto parsed = parsed_.insert(k, answer);
        ASSERT_EQ(walked.has_value(), parsed.has_value());
        if (!parsed) {
            EXPECT_EQ(walked.error(), parsed.error());
        }
        clock_.advance(age);
        std::array<std::uint8_t, 4096> a{};
        std::array<std::uint8_t, 4096> b{};
        const auto from_walked = walked_.lookup(k, 99, a);
        const auto from_parsed = parsed_.lookup(k, 99, b);
        ASSERT_EQ(from_walked.has_value(), from_parsed.has_value());
        if (from_parsed) {
            EXPECT_EQ(Bytes(a.begin(), a.begin() + static_cast<std::ptrdiff_t>(from_walked->size)),
                      Bytes(b.begin(), b.begin() + static_cast<std::ptrdiff_t>(from_parsed->size)));
        }
        walked_.flush();
        parsed_.flush();
    }

    ManualClock clock_;
    Cache walked_{clock_};
    Cache parsed_{clock_};
};

AnswerSpec with_rcode(wire::Rcode rcode) {
    AnswerSpec spec;
    spec.rcode = rcode;
    return spec;
}

TEST_F(RecordWalkTest, AWalkedInsertDecidesAndServesAsAParsedOne) {
    const CacheKey k = test::key("www.example.com");
    expect_same(k, test::simple_answer(), "one A record");
    expect_same(k, test::simple_answer("WWW.Example.COM"), "the question in other letter case");

    AnswerSpec several;
    several.records = {test::a_record("www.example.com", 300, 1),
                       test::a_record("www.example.com", 60, 2),
                       {wire::Section::additional, "ns.example.com", RrType::a, 90,
                        wire::encode::a({192, 0, 2, 53})}};
    expect_same(k, build(several), "three records, three TTLs");
    expect_same(k, test::simple_answer("www.example.com", 0x80000001U), "a TTL with its top bit");
    expect_same(k, test::simple_answer("www.example.com", 0), "a zero TTL");

    AnswerSpec nxdomain = with_rcode(wire::Rcode::nxdomain);
    nxdomain.records.push_back(test::soa_record("example.com", 600, 120));
    expect_same(k, build(nxdomain), "NXDOMAIN with its SOA");
    AnswerSpec nodata;
    nodata.records.push_back(test::soa_record("example.com", 30, 900));
    nodata.records.push_back(test::soa_record("example.com", 400, 20));
    expect_same(k, build(nodata), "NODATA with two SOAs");
    expect_same(k, build(with_rcode(wire::Rcode::nxdomain)), "NXDOMAIN without an SOA");
    expect_same(k, build(with_rcode(wire::Rcode::servfail)), "SERVFAIL");

    AnswerSpec truncated;
    truncated.extra_flags = wire::Header::kTc;
    truncated.records.push_back(test::a_record("www.example.com", 300));
    expect_same(k, build(truncated), "truncated");
    AnswerSpec other_type;
    other_type.qtype = RrType::aaaa;
    expect_same(k, build(other_type), "another type");
    AnswerSpec other_name = several;
    other_name.qname = "www.example.org";
    expect_same(k, build(other_name), "another name");
    AnswerSpec query;
    query.response = false;
    expect_same(k, build(query), "a query");
    AnswerSpec with_opt;
    with_opt.edns = true;
    with_opt.records.push_back(test::a_record("www.example.com", 300));
    expect_same(k, build(with_opt), "an OPT record");
    AnswerSpec extended = with_opt;
    extended.rcode = static_cast<wire::Rcode>(16);  // BADVERS: upper bits in the OPT
    expect_same(k, build(extended), "an extended rcode");

    // An SOA whose RDATA ends after its first name: the builder would not write it.
    moat::test::WireWriter bad_soa(1, 0, 1, 0, wire::Header::kQr | 3U, 1);
    bad_soa.question("www.example.com", RrType::a).rr("example.com", RrType::soa, Bytes{0});
    expect_same(k, bad_soa.bytes(), "an SOA that does not read");
}

TEST_F(RecordWalkTest, AWalkOfOtherOctetsIsRefusedNotFollowed) {
    // The cache trusts a walk's offsets to be the answer's; one past its end must not be
    // written to.
    RecordWalk walk;
    walk_all(build([] {
                 AnswerSpec longer;
                 longer.records = {test::a_record("www.example.com", 300, 1),
                                   test::a_record("www.example.com", 300, 2)};
                 return longer;
             }()),
             walk);
    const Bytes shorter = test::simple_answer();
    const auto result = walked_.insert(test::key("www.example.com"), shorter, walk);
    ASSERT_FALSE(result);
    EXPECT_EQ(result.error(), Errc::malformed);
}

TEST_F(RecordWalkTest, ClearStartsAgain) {
    RecordWalk walk;
    AnswerSpec nodata;
    nodata.records.push_back(test::soa_record("example.com", 30, 900));
    walk_all(build(nodata), walk);
    ASSERT_TRUE(walk.soa_ttl().has_value());
    walk.clear();
    EXPECT_TRUE(walk.ttl_offsets().empty());
    EXPECT_FALSE(walk.soa_ttl().has_value());
    EXPECT_EQ(walk.answers(), 0U);
    EXPECT_FALSE(walk.extended_rcode());
    EXPECT_FALSE(walk.malformed());
}

}  // namespace
}  // namespace moat::cache
