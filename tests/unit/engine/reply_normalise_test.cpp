// The stored form of an upstream answer: copied with its header, question case and last OPT
// fixed when it can be, rebuilt otherwise. The copy must carry what the rebuild carries, for
// every real response of the shared corpus and for the hand-made shapes that lead to each path.
#include "reply_normalise.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "moat/cache/cache.hpp"
#include "moat/cache/cache_key.hpp"
#include "moat/cache/record_walk.hpp"
#include "moat/core/clock.hpp"
#include "moat/wire/header.hpp"
#include "moat/wire/message_view.hpp"
#include "moat/wire/validate.hpp"
#include "support/shared_data.hpp"
#include "unit/support/wire_corpus.hpp"
#include "unit/support/wire_roundtrip.hpp"
#include "unit/support/wire_writer.hpp"

namespace moat::engine {
namespace {

using Bytes = std::vector<std::uint8_t>;
using wire::Header;
using wire::RrType;

constexpr std::uint16_t kAllFlags =
    Header::kQr | Header::kAa | Header::kTc | Header::kRd | Header::kRa | Header::kAd | Header::kCd;

cache::CacheKey key_for(std::string_view qname, RrType type) {
    const auto name = wire::Name::from_text(qname).value();
    return cache::CacheKey::make(name.view(), type, wire::RrClass::in, false);
}

Bytes without_header(const Bytes& b) { return {b.begin() + wire::kHeaderSize, b.end()}; }

/// An OPT record owned by a one-octet root.
Bytes opt_record(std::uint16_t udp_size = 1232) {
    return without_header(
        test::WireWriter(0, 0, 0, 0).u8(0).rfields(RrType::opt, {}, udp_size, 0).take());
}

struct Both {
    NormalisedReply copied;
    Bytes copy;
    NormalisedReply rebuilt;
    Bytes rebuild;
};

Both both_ways(const Bytes& reply, const cache::CacheKey& key) {
    const auto view = wire::MessageView::parse(reply);
    EXPECT_TRUE(view.has_value());
    Both out;
    Bytes scratch;
    Bytes rdata;
    out.copied = copy_reply(*view, key, scratch, rdata);
    out.copy.assign(scratch.begin(),
                    scratch.begin() + static_cast<std::ptrdiff_t>(out.copied.size));
    out.rebuilt = rebuild_reply(*view, key, scratch, rdata);
    out.rebuild.assign(scratch.begin(),
                       scratch.begin() + static_cast<std::ptrdiff_t>(out.rebuilt.size));
    return out;
}

Bytes normalised(const Bytes& reply, const cache::CacheKey& key, NormalisedReply* facts = nullptr) {
    Bytes scratch;
    Bytes rdata;
    const NormalisedReply n = normalise_reply(reply, key, scratch, rdata);
    if (facts != nullptr) {
        *facts = n;
    }
    return {scratch.begin(), scratch.begin() + static_cast<std::ptrdiff_t>(n.size)};
}

/// The usual answer: an A record owned by a pointer to the question; `additional` records (the
/// upstream's OPT) for the caller to write.
test::WireWriter usual_answer(std::string_view qname, std::uint16_t flags,
                              std::uint16_t additional = 1) {
    test::WireWriter w(1, 1, 0, additional, flags, 0xBEEF);
    w.question(qname, RrType::a).ptr(wire::kHeaderSize).rfields(RrType::a, Bytes{192, 0, 2, 7});
    return w;
}

TEST(ReplyNormalise, CopyFixesTheHeaderAndQuestionCaseAndCutsTheLastOpt) {
    test::WireWriter w = usual_answer("WwW.Example.COM", kAllFlags);
    const std::size_t before_opt = w.size();
    w.raw(opt_record());
    const cache::CacheKey key = key_for("www.example.com", RrType::a);

    NormalisedReply facts;
    const Bytes out = normalised(w.bytes(), key, &facts);
    ASSERT_EQ(out.size(), before_opt);
    const Header h = Header::load(out.data());
    EXPECT_EQ(h.id, 0);
    // QR, RA, RD and the upstream's AD; never AA, TC or CD.
    EXPECT_EQ(h.flags, Header::kQr | Header::kRa | Header::kRd | Header::kAd);
    EXPECT_EQ(h.qdcount, 1);
    EXPECT_EQ(h.ancount, 1);
    EXPECT_EQ(h.arcount, 0);
    const Bytes lower = test::wire_name("www.example.com");
    EXPECT_TRUE(std::equal(lower.begin(), lower.end(), out.begin() + wire::kHeaderSize));
    // The record's octets are the upstream's, its pointer to the question included.
    const std::size_t record_size = 2 + 10 + 4;
    EXPECT_TRUE(
        std::equal(w.bytes().begin() + static_cast<std::ptrdiff_t>(before_opt - record_size),
                   w.bytes().begin() + static_cast<std::ptrdiff_t>(before_opt),
                   out.end() - static_cast<std::ptrdiff_t>(record_size)));
    EXPECT_TRUE(facts.has_address);
    EXPECT_FALSE(facts.has_cname);
    EXPECT_TRUE(wire::validate(out).has_value());

    const Both b = both_ways(w.bytes(), key);
    EXPECT_EQ(b.copy, out);
    const auto copy = test::extract(b.copy);
    const auto rebuild = test::extract(b.rebuild);
    ASSERT_TRUE(copy && rebuild);
    EXPECT_EQ(test::compare(*rebuild, *copy), std::nullopt);
}

TEST(ReplyNormalise, TheRcodeStaysAndAnAnswerWithoutOptIsCopiedWhole) {
    const std::uint16_t nxdomain = 3;
    test::WireWriter w(1, 0, 1, 0, Header::kQr | Header::kAa | nxdomain, 7);
    w.question("gone.example", RrType::aaaa)
        .rr("example", RrType::soa,
            test::cat({test::wire_name("ns.example"), test::wire_name("admin.example"),
                       test::u32_bytes(1), test::u32_bytes(2), test::u32_bytes(3),
                       test::u32_bytes(4), test::u32_bytes(60)}));
    const Bytes out = normalised(w.bytes(), key_for("gone.example", RrType::aaaa));
    ASSERT_EQ(out.size(), w.size());
    EXPECT_EQ(Header::load(out.data()).flags, Header::kQr | Header::kRa | Header::kRd | nxdomain);
    EXPECT_EQ(without_header(out), without_header(w.bytes()));
}

TEST(ReplyNormalise, AnOptBeforeAnotherRecordIsRebuiltWithoutIt) {
    test::WireWriter w(1, 1, 0, 2, Header::kQr | Header::kRd | Header::kRa, 9);
    w.question("www.example.com", RrType::a)
        .ptr(wire::kHeaderSize)
        .rfields(RrType::a, Bytes{192, 0, 2, 7})
        .raw(opt_record())
        .rr("ns.example.com", RrType::a, Bytes{192, 0, 2, 53});
    const cache::CacheKey key = key_for("www.example.com", RrType::a);
    const Both b = both_ways(w.bytes(), key);
    EXPECT_EQ(b.copied.size, 0U);
    ASSERT_NE(b.rebuilt.size, 0U);
    EXPECT_EQ(normalised(w.bytes(), key), b.rebuild);
    const auto content = test::extract(b.rebuild);
    ASSERT_TRUE(content);
    EXPECT_FALSE(content->opt.has_value());
    ASSERT_EQ(content->records.size(), 2U);
    EXPECT_EQ(content->records[1].second.owner, wire::Name::from_text("ns.example.com").value());
    EXPECT_EQ(content->header.arcount, 1);
}

TEST(ReplyNormalise, AnOptOwnedByAPointerIsRebuilt) {
    test::WireWriter w = usual_answer("www.example.com", Header::kQr);
    // A pointer to the question name's last octet: the root, in two octets.
    w.ptr(wire::kHeaderSize + test::wire_name("www.example.com").size() - 1)
        .rfields(RrType::opt, {}, 1232, 0);
    const cache::CacheKey key = key_for("www.example.com", RrType::a);
    const Both b = both_ways(w.bytes(), key);
    EXPECT_EQ(b.copied.size, 0U);
    ASSERT_NE(b.rebuilt.size, 0U);
    EXPECT_EQ(normalised(w.bytes(), key), b.rebuild);
}

TEST(ReplyNormalise, AQuestionOtherThanTheKeysIsRebuiltWithTheKeys) {
    test::WireWriter w = usual_answer("www.example.com", Header::kQr);
    w.raw(opt_record());
    for (const cache::CacheKey& key :
         {key_for("www.example.com", RrType::aaaa), key_for("www.example.org", RrType::a),
          key_for("ww.example.com", RrType::a)}) {
        const Both b = both_ways(w.bytes(), key);
        EXPECT_EQ(b.copied.size, 0U);
        const auto content = test::extract(b.rebuild);
        ASSERT_TRUE(content);
        ASSERT_EQ(content->questions.size(), 1U);
        EXPECT_EQ(content->questions[0].qtype, key.qtype());
        const Bytes name(content->questions[0].name.wire().begin(),
                         content->questions[0].name.wire().end());
        EXPECT_EQ(name, Bytes(key.name().begin(), key.name().end()));
    }
}

TEST(ReplyNormalise, OctetsAfterTheLastRecordAreNotCopied) {
    test::WireWriter w = usual_answer("www.example.com", Header::kQr, 0);
    const std::size_t records_end = w.size();
    w.raw({1, 2, 3});
    const Both b = both_ways(w.bytes(), key_for("www.example.com", RrType::a));
    EXPECT_EQ(b.copied.size, records_end);
    EXPECT_EQ(b.rebuilt.size, records_end);  // the same records, compressed the same way
}

TEST(ReplyNormalise, RdataAgainstItsTypesLayoutFailsBothWays) {
    test::WireWriter w(1, 1, 0, 0, Header::kQr, 1);
    w.question("www.example.com", RrType::a)
        .ptr(wire::kHeaderSize)
        .rfields(RrType::a, Bytes{192, 0, 2, 7, 1});
    const cache::CacheKey key = key_for("www.example.com", RrType::a);
    const Both b = both_ways(w.bytes(), key);
    EXPECT_EQ(b.copied.size, 0U);
    EXPECT_EQ(b.rebuilt.size, 0U);
    EXPECT_TRUE(normalised(w.bytes(), key).empty());
}

TEST(ReplyNormalise, NotesAnswerCnamesAndAddressesOnly) {
    const cache::CacheKey key = key_for("www.example.com", RrType::a);
    test::WireWriter chain(1, 2, 0, 0, Header::kQr, 1);
    chain.question("www.example.com", RrType::a)
        .ptr(wire::kHeaderSize)
        .rfields(RrType::cname, test::wire_name("cdn.example.net"))
        .rr("cdn.example.net", RrType::a, Bytes{192, 0, 2, 8});
    test::WireWriter referral(1, 0, 1, 1, Header::kQr, 1);
    referral.question("www.example.com", RrType::a)
        .rr("example.com", RrType::ns, test::wire_name("ns.example.com"))
        .rr("ns.example.com", RrType::a, Bytes{192, 0, 2, 53});
    test::WireWriter cname_only(1, 1, 0, 0, Header::kQr, 1);
    cname_only.question("www.example.com", RrType::a)
        .ptr(wire::kHeaderSize)
        .rfields(RrType::cname, test::wire_name("cdn.example.net"));

    struct Case {
        const Bytes& reply;
        bool cname;
        bool address;
    };
    for (const Case& c : {Case{chain.bytes(), true, true}, Case{referral.bytes(), false, false},
                          Case{cname_only.bytes(), true, false}}) {
        const Both b = both_ways(c.reply, key);
        ASSERT_NE(b.copied.size, 0U);
        ASSERT_NE(b.rebuilt.size, 0U);
        for (const NormalisedReply& n : {b.copied, b.rebuilt}) {
            EXPECT_EQ(n.has_cname, c.cname);
            EXPECT_EQ(n.has_address, c.address);
        }
    }
}

TEST(ReplyNormalise, NotAnAnswerToOneQuestionIsRefused) {
    const cache::CacheKey key = key_for("www.example.com", RrType::a);
    test::WireWriter query(1, 0, 0, 0, 0, 1);
    query.question("www.example.com", RrType::a);
    test::WireWriter two(2, 0, 0, 0, Header::kQr, 1);
    two.question("www.example.com", RrType::a).question("www.example.com", RrType::aaaa);
    for (const Bytes& reply : {query.bytes(), two.bytes(), Bytes{1, 2, 3}}) {
        EXPECT_TRUE(normalised(reply, key).empty());
    }
}

/// The copy's walk of `reply`'s records, handed to the cache, decides and serves as the cache's
/// own parse of the copy does.
void expect_walked_insert_as_parsed(const Bytes& reply, const cache::CacheKey& key) {
    Bytes scratch;
    Bytes rdata;
    cache::RecordWalk walk;
    const NormalisedReply n = normalise_reply(reply, key, scratch, rdata, &walk);
    ASSERT_TRUE(n.walked);
    const std::span<const std::uint8_t> answer(scratch.data(), n.size);
    ManualClock clock;
    cache::Cache walked(clock);
    cache::Cache parsed(clock);
    const auto a = walked.insert(key, answer, walk);
    const auto b = parsed.insert(key, answer);
    ASSERT_EQ(a.has_value(), b.has_value());
    if (!b) {
        EXPECT_EQ(a.error(), b.error());
        return;
    }
    clock.advance(std::chrono::seconds{1});
    Bytes out_a(wire::kMaxMessageSize);
    Bytes out_b(wire::kMaxMessageSize);
    const auto hit_a = walked.lookup(key, 1, out_a);
    const auto hit_b = parsed.lookup(key, 1, out_b);
    ASSERT_EQ(hit_a.has_value(), hit_b.has_value());
    if (hit_b) {
        out_a.resize(hit_a->size);
        out_b.resize(hit_b->size);
        EXPECT_EQ(out_a, out_b);
    }
}

// Every well-formed response of the corpus with one question: where the copy is made it carries
// what the rebuild carries, and its walk of the records serves the cache as the cache's own
// parse does; where it is declined, the response has an OPT record that is not its
// last record, or one not owned by a one-octet root.
TEST(ReplyNormalise, CopyCarriesWhatTheRebuildCarriesOverTheCorpus) {
    MOAT_SHARED_PATH_OR_SKIP(dir, "data/wire");
    std::size_t copied = 0;
    std::size_t declined = 0;
    for (const test::CorpusMessage& m : test::load_corpus(dir)) {
        const auto view = wire::MessageView::parse(m.bytes);
        if (!view || !view->header().qr() || view->header().qdcount != 1 ||
            !wire::validate(m.bytes)) {
            continue;
        }
        SCOPED_TRACE(m.name);
        const wire::Question& q = *view->question();
        for (const bool same_question : {false, true}) {
            // The key is lower case whatever the response's spelling; once its qtype differs.
            const cache::CacheKey key = cache::CacheKey::make(
                q.qname,
                static_cast<std::uint16_t>(same_question ? wire::to_u16(q.qtype)
                                                         : wire::to_u16(q.qtype) ^ 1U),
                wire::to_u16(q.qclass), false);
            const Both b = both_ways(m.bytes, key);
            if (!same_question) {
                EXPECT_EQ(b.copied.size, 0U) << "a question other than the key's was copied";
                continue;
            }
            if (b.copied.size == 0) {
                ++declined;
                const auto content = test::extract(m.bytes);
                ASSERT_TRUE(content);
                EXPECT_GT(content->opt_count, 0U) << "declined without an OPT record";
                continue;
            }
            ++copied;
            ASSERT_NE(b.rebuilt.size, 0U);
            EXPECT_TRUE(wire::validate(b.copy).has_value());
            const auto copy = test::extract(b.copy);
            const auto rebuild = test::extract(b.rebuild);
            ASSERT_TRUE(copy && rebuild);
            EXPECT_EQ(test::compare(*rebuild, *copy), std::nullopt);
            EXPECT_EQ(copy->header.ancount, rebuild->header.ancount);
            EXPECT_EQ(copy->header.nscount, rebuild->header.nscount);
            EXPECT_EQ(copy->header.arcount, rebuild->header.arcount);
            EXPECT_EQ(b.copied.has_cname, b.rebuilt.has_cname);
            EXPECT_EQ(b.copied.has_address, b.rebuilt.has_address);
            const Bytes lower(key.name().begin(), key.name().end());
            EXPECT_TRUE(std::equal(lower.begin(), lower.end(), b.copy.begin() + wire::kHeaderSize));
            expect_walked_insert_as_parsed(m.bytes, key);
        }
    }
    std::printf("corpus responses: %zu copied, %zu rebuilt\n", copied, declined);
    EXPECT_GT(copied, 100U);
}

}  // namespace
}  // namespace moat::engine
