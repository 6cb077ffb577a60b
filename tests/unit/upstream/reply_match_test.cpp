// check_reply(): is a datagram the answer to the query we sent? Accepted answers, error rcodes,
// truncation, wrong ID or question, the question matched case-insensitively (0x20), and
// unparsable replies.
#include "reply_match.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "moat/wire/header.hpp"
#include "moat/wire/message_builder.hpp"
#include "moat/wire/types.hpp"
#include "upstream_fixtures.hpp"

namespace moat::upstream {
namespace {

using test::make_query;
using test::make_reply;
using test::ReplySpec;
using wire::Header;
using wire::Rcode;
using wire::RrClass;
using wire::RrType;

constexpr std::uint16_t kAnswerFlags = Header::kQr | Header::kRd | Header::kRa;

const std::vector<std::uint8_t>& query() {
    static const std::vector<std::uint8_t> kQuery = make_query({.id = 0x1234});
    return kQuery;
}

ReplyCheck check(const ReplySpec& spec) { return check_reply(query(), make_reply(query(), spec)); }

TEST(CheckReply, NoErrorAnswerIsAccepted) {
    EXPECT_EQ(check({.a = std::array<std::uint8_t, 4>{192, 0, 2, 1}}), ReplyCheck::accept);
    EXPECT_EQ(check({}), ReplyCheck::accept) << "NODATA is an answer too";
}

TEST(CheckReply, NxDomainIsAccepted) {
    EXPECT_EQ(check({.rcode = Rcode::nxdomain}), ReplyCheck::accept);
}

TEST(CheckReply, ServFailRefusedNotImpFormErrAreErrorRcodes) {
    for (const Rcode rcode : {Rcode::servfail, Rcode::refused, Rcode::notimp, Rcode::formerr}) {
        EXPECT_EQ(check({.rcode = rcode}), ReplyCheck::error_rcode)
            << "rcode " << static_cast<unsigned>(rcode);
    }
}

TEST(CheckReply, TruncatedAnswerAsksForTcp) {
    EXPECT_EQ(check({.flags = kAnswerFlags | Header::kTc}), ReplyCheck::truncated);
}

TEST(CheckReply, OtherIdIsWrongId) {
    EXPECT_EQ(check({.id = std::uint16_t{0x1235}}), ReplyCheck::wrong_id);
    EXPECT_EQ(check({.id = std::uint16_t{0x3412}}), ReplyCheck::wrong_id) << "byte-swapped ID";
    EXPECT_EQ(check({.id = std::uint16_t{0}}), ReplyCheck::wrong_id);
}

TEST(CheckReply, WrongIdIsReportedEvenForAnErrorOrTruncatedReply) {
    EXPECT_EQ(check({.id = std::uint16_t{1}, .rcode = Rcode::servfail}), ReplyCheck::wrong_id);
    EXPECT_EQ(check({.id = std::uint16_t{1}, .flags = kAnswerFlags | Header::kTc}),
              ReplyCheck::wrong_id);
}

TEST(CheckReply, OtherNameIsWrongQuestion) {
    EXPECT_EQ(check({.qname = "www.example.org"}), ReplyCheck::wrong_question);
    EXPECT_EQ(check({.qname = "example.com"}), ReplyCheck::wrong_question);
    EXPECT_EQ(check({.qname = "xwww.example.com"}), ReplyCheck::wrong_question);
}

TEST(CheckReply, OtherTypeIsWrongQuestion) {
    EXPECT_EQ(check({.qtype = RrType::aaaa}), ReplyCheck::wrong_question);
}

TEST(CheckReply, OtherClassIsWrongQuestion) {
    EXPECT_EQ(check({.qclass = RrClass::ch}), ReplyCheck::wrong_question);
}

TEST(CheckReply, NoQuestionIsWrongQuestion) {
    EXPECT_EQ(check({.questions = 0}), ReplyCheck::wrong_question);
}

TEST(CheckReply, TwoQuestionsAreWrongQuestion) {
    EXPECT_EQ(check({.questions = 2}), ReplyCheck::wrong_question);
}

TEST(CheckReply, WrongQuestionBeatsTruncationAndErrorRcode) {
    EXPECT_EQ(check({.flags = kAnswerFlags | Header::kTc, .qname = "other.example.com"}),
              ReplyCheck::wrong_question);
    EXPECT_EQ(check({.rcode = Rcode::servfail, .qname = "other.example.com"}),
              ReplyCheck::wrong_question);
}

TEST(CheckReply, NameIsMatchedCaseInsensitively) {
    // A resolver using 0x20 mixing, or a server echoing the name in other letter case.
    const auto q = make_query({.id = 0x4242, .qname = "wWw.ExAmPlE.cOm"});
    for (const char* echoed : {"www.example.com", "WWW.EXAMPLE.COM", "wWw.ExAmPlE.cOm"}) {
        EXPECT_EQ(check_reply(q, make_reply(q, {.qname = echoed})), ReplyCheck::accept) << echoed;
    }
    EXPECT_EQ(check_reply(q, make_reply(q, {.qname = "WWW.EXAMPLE.NET"})),
              ReplyCheck::wrong_question);
}

TEST(CheckReply, GarbageIsMalformed) {
    const std::vector<std::uint8_t> empty;
    const std::vector<std::uint8_t> short_header{0x12, 0x34, 0x81, 0x80};
    const std::vector<std::uint8_t> garbage{0x12, 0x34, 0x81, 0x80, 0x00, 0x01, 0x00,
                                            0x00, 0x00, 0x00, 0x00, 0x00, 0xFF, 0xFF};
    EXPECT_EQ(check_reply(query(), empty), ReplyCheck::malformed);
    EXPECT_EQ(check_reply(query(), short_header), ReplyCheck::malformed);
    EXPECT_EQ(check_reply(query(), garbage), ReplyCheck::malformed)
        << "a header with ID and QR right but a question that does not parse";
}

TEST(CheckReply, QueryInsteadOfAnswerIsMalformed) {
    // QR=0: our own query reflected back, or another query.
    EXPECT_EQ(check_reply(query(), query()), ReplyCheck::malformed);
    EXPECT_EQ(check({.flags = Header::kRd | Header::kRa}), ReplyCheck::malformed);
}

TEST(CheckReply, UnparsableQueryIsMalformed) {
    const std::vector<std::uint8_t> garbage{1, 2, 3};
    EXPECT_EQ(check_reply(garbage, make_reply(query())), ReplyCheck::malformed);
}

TEST(CheckReply, AQueryWeCouldNotHaveWrittenIsMalformed) {
    // check_reply reads the sent question without a parse: one question, its name uncompressed.
    const std::vector<std::uint8_t>& good = query();
    ASSERT_EQ(check_reply(good, make_reply(good)), ReplyCheck::accept);
    const std::vector<std::uint8_t> reply = make_reply(good);

    std::vector<std::uint8_t> no_question = good;
    no_question[5] = 0;
    std::vector<std::uint8_t> two_questions = good;
    two_questions[5] = 2;
    std::vector<std::uint8_t> pointer_name = good;
    pointer_name[wire::kHeaderSize] = 0xC0;
    std::vector<std::uint8_t> cut_in_name(good.begin(), good.begin() + wire::kHeaderSize + 3);
    std::vector<std::uint8_t> cut_in_class = good;
    // The question ends 4 octets after the name's root label; an OPT may follow it.
    cut_in_class.resize(wire::kHeaderSize + 17 + 3);  // "www.example.com" is 17 octets
    for (const auto* sent :
         {&no_question, &two_questions, &pointer_name, &cut_in_name, &cut_in_class}) {
        EXPECT_EQ(check_reply(*sent, reply), ReplyCheck::malformed)
            << "query of " << sent->size() << " octets";
    }
}

TEST(CheckReply, EveryCheckHasItsOwnText) {
    std::set<std::string> texts;
    for (const ReplyCheck c :
         {ReplyCheck::accept, ReplyCheck::error_rcode, ReplyCheck::truncated, ReplyCheck::wrong_id,
          ReplyCheck::wrong_question, ReplyCheck::malformed}) {
        const std::string text = to_text(c);
        EXPECT_FALSE(text.empty());
        texts.insert(text);
    }
    EXPECT_EQ(texts.size(), 6U);
}

}  // namespace
}  // namespace moat::upstream
