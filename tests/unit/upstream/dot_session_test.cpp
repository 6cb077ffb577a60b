// DotSession: the DNS-over-TLS framing and answer matching without a connection. Queries go out
// framed with unique IDs; answers come back whole however the stream is cut, with the query's own
// ID; what the server sends that answers nothing is skipped; and a connection dropped from inside
// an answer's delivery keeps that answer readable and loses the rest.
#include "dot_session.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <set>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "moat/core/bytes.hpp"

namespace moat::upstream {
namespace {

using Bytes = std::vector<std::uint8_t>;

/// A 12-octet header with `id`, then `body` (enough to tell messages apart).
Bytes message(std::uint16_t id, const std::string& body = {}) {
    // Sized once and filled in place: growing it by insert() trips GCC 12's
    // -Wstringop-overread false positive under -O3 with LTO (GCC bugs 100366, 106199).
    Bytes m(12 + body.size(), 0);
    store_u16(m.data(), id);
    std::copy(body.begin(), body.end(), m.begin() + 12);
    return m;
}

/// `m` with its two-octet length in front.
Bytes framed(const Bytes& m) {
    Bytes f(2 + m.size());
    store_u16(f.data(), static_cast<std::uint16_t>(m.size()));
    std::copy(m.begin(), m.end(), f.begin() + 2);
    return f;
}

/// The first `n` octets of `m`.
Bytes shortened(const Bytes& m, std::size_t n) {
    return {m.begin(), m.begin() + static_cast<std::ptrdiff_t>(n)};
}

/// The answer the server sends for the query framed in `sent`: its ID on the connection, `body`.
Bytes answer_to(const Bytes& sent, const std::string& body) {
    return framed(message(load_u16(sent.data() + 2), body));
}

/// The byte strings one after another, as a stream carries them.
Bytes joined(std::initializer_list<Bytes> parts) {
    Bytes all;
    for (const Bytes& p : parts) {
        all.insert(all.end(), p.begin(), p.end());
    }
    return all;
}

struct Delivered {
    std::uint16_t query_id;
    Bytes reply;
};

/// Sends a query of `id` carrying `tag`, whose answer is recorded in `out`.
Bytes send(DotSession& s, std::uint16_t id, const std::string& tag, std::vector<Delivered>& out) {
    EncryptedExchange x;
    x.query = message(id, tag);
    x.done = [&out, id](const std::string& error, std::span<const std::uint8_t> reply) {
        EXPECT_TRUE(error.empty()) << error;
        out.push_back({id, Bytes(reply.begin(), reply.end())});
    };
    return s.frame(std::move(x));
}

DotSession::Deliver run_done() {
    return [](EncryptedExchange& x, std::span<const std::uint8_t> reply) { x.done({}, reply); };
}

TEST(DotSession, AQueryGoesOutFramedWithItsOwnId) {
    DotSession s;
    std::vector<Delivered> got;
    const Bytes out = send(s, 0x1234, "q", got);
    EXPECT_EQ(out, framed(message(0x1234, "q")));
    EXPECT_TRUE(s.in_flight());
}

TEST(DotSession, AClashingIdGoesOutRenumberedAndItsAnswerGetsItBack) {
    DotSession s;
    std::vector<Delivered> got;
    const Bytes first = send(s, 7, "first", got);
    const Bytes second = send(s, 7, "second", got);
    const std::uint16_t second_id = load_u16(second.data() + 2);
    ASSERT_NE(second_id, 7) << "two queries in flight with one ID cannot be told apart";
    const Bytes replies = joined({answer_to(second, "two"), answer_to(first, "one")});
    s.receive(replies, run_done());
    ASSERT_EQ(got.size(), 2U);
    EXPECT_EQ(got[0].reply, message(7, "two")) << "the renumbered query's answer carries its ID";
    EXPECT_EQ(got[1].reply, message(7, "one"));
    EXPECT_FALSE(s.in_flight());
}

TEST(DotSession, IdsInFlightStayUniqueUnderManyClashes) {
    DotSession s;
    std::vector<Delivered> got;
    std::set<std::uint16_t> ids;
    for (int i = 0; i < 1000; ++i) {
        const Bytes out = send(s, 0, std::to_string(i), got);
        EXPECT_TRUE(ids.insert(load_u16(out.data() + 2)).second) << "query " << i;
    }
    EXPECT_EQ(s.in_flight_count(), 1000U);
}

TEST(DotSession, AnswersCutAnywhereArriveWholeAndInOrder) {
    std::vector<Bytes> sent;
    Bytes stream;
    {
        DotSession probe;
        std::vector<Delivered> ignored;
        for (std::uint16_t id = 1; id <= 5; ++id) {
            sent.push_back(send(probe, id, "q", ignored));
            stream =
                joined({stream, answer_to(sent.back(), std::string(id * std::size_t{40}, 'a'))});
        }
    }
    for (std::size_t piece = 1; piece <= stream.size(); piece += piece < 8 ? 1 : 37) {
        DotSession s;
        std::vector<Delivered> got;
        for (std::uint16_t id = 1; id <= 5; ++id) {
            ASSERT_EQ(send(s, id, "q", got), sent[id - 1U]);
        }
        for (std::size_t at = 0; at < stream.size(); at += piece) {
            const std::size_t n = std::min(piece, stream.size() - at);
            s.receive(std::span<const std::uint8_t>(stream).subspan(at, n), run_done());
            EXPECT_LT(s.buffered(), 2U + 12U + 200U) << "more than one partial frame kept";
        }
        ASSERT_EQ(got.size(), 5U) << "pieces of " << piece;
        for (std::uint16_t id = 1; id <= 5; ++id) {
            EXPECT_EQ(got[id - 1U].reply, message(id, std::string(id * std::size_t{40}, 'a')));
        }
        EXPECT_EQ(s.buffered(), 0U);
    }
}

TEST(DotSession, WhatAnswersNothingIsSkippedAndTheRestStillArrives) {
    DotSession s;
    std::vector<Delivered> got;
    const Bytes out = send(s, 42, "q", got);
    const Bytes stream = joined({
        framed(Bytes{1, 2, 3}),                           // shorter than a header
        framed(shortened(message(42), 11)),               // the query's ID, but not a whole header
        framed(message(999, "stray")),                    // an ID nobody asked with
        framed({}),                                       // an empty frame
        answer_to(out, "real"), answer_to(out, "again"),  // a second answer to one query
    });
    s.receive(stream, run_done());
    ASSERT_EQ(got.size(), 1U);
    EXPECT_EQ(got[0].reply, message(42, "real"));
    EXPECT_EQ(s.buffered(), 0U);
}

TEST(DotSession, ADropInsideADeliveryKeepsItsAnswerAndLosesTheRest) {
    DotSession s;
    std::vector<Delivered> got;
    const Bytes a = send(s, 1, "a", got);
    const Bytes b = send(s, 2, "b", got);
    const Bytes c = send(s, 3, "c", got);
    std::vector<EncryptedExchange> taken;
    // The whole answer of b, one with the ID the retry below gets, then half of c's: after the
    // drop none of it may be read, least of all as the answer to the retry.
    const Bytes c_answer = answer_to(c, "cc");
    Bytes stream = joined(
        {answer_to(a, std::string(300, 'x')), answer_to(b, "bb"), framed(message(9, "old"))});
    stream.insert(stream.end(), c_answer.begin(), c_answer.begin() + 5);
    s.receive(stream, [&](EncryptedExchange& x, std::span<const std::uint8_t> reply) {
        taken = s.take_in_flight();  // as when the connection drops under the completion
        const Bytes fresh = send(s, 9, "new", got);  // a retry sent at once
        EXPECT_EQ(fresh, framed(message(9, "new")));
        // Under AddressSanitizer this read fails if the buffer was freed or moved.
        x.done({}, reply);
    });
    ASSERT_EQ(got.size(), 1U);
    EXPECT_EQ(got[0].reply, message(1, std::string(300, 'x')));
    EXPECT_EQ(taken.size(), 2U) << "b and c were still in flight";
    EXPECT_EQ(s.buffered(), 0U) << "the bytes of the dropped connection are gone";
    EXPECT_EQ(s.in_flight_count(), 1U) << "the retry sent from the delivery stays";
}

TEST(DotSession, ANewConnectionDropsTheOldPartialFrame) {
    DotSession s;
    std::vector<Delivered> got;
    s.receive(Bytes{0x00, 0x40, 1, 2, 3}, run_done());
    EXPECT_EQ(s.buffered(), 5U);
    s.restart();
    EXPECT_EQ(s.buffered(), 0U);
    const Bytes out = send(s, 5, "q", got);
    s.receive(answer_to(out, "fresh"), run_done());
    ASSERT_EQ(got.size(), 1U);
    EXPECT_EQ(got[0].reply, message(5, "fresh"));
}

TEST(DotSession, AThrowingDeliveryLosesOnlyItsOwnAnswer) {
    DotSession s;
    std::vector<Delivered> got;
    const Bytes a = send(s, 1, "a", got);
    const Bytes b = send(s, 2, "b", got);
    const Bytes stream = joined({answer_to(a, "aa"), answer_to(b, "bb")});
    EXPECT_THROW(s.receive(stream,
                           [](EncryptedExchange&, std::span<const std::uint8_t>) {
                               throw std::runtime_error("completion failed");
                           }),
                 std::runtime_error);
    EXPECT_EQ(s.buffered(), answer_to(b, "bb").size()) << "b's answer is still to be read";
    s.receive({}, run_done());
    ASSERT_EQ(got.size(), 1U);
    EXPECT_EQ(got[0].reply, message(2, "bb"));
}

TEST(DotSession, ReceivingFromItsOwnDeliveryIsRefused) {
    DotSession s;
    std::vector<Delivered> got;
    const Bytes a = send(s, 1, "a", got);
    bool refused = false;
    s.receive(answer_to(a, "aa"), [&](EncryptedExchange&, std::span<const std::uint8_t>) {
        try {
            s.receive({}, run_done());
        } catch (const std::logic_error&) {
            refused = true;
        }
    });
    EXPECT_TRUE(refused);
}

TEST(DotSession, QueriesThatCannotBeFramedAreRefusedAndKept) {
    DotSession s;
    EncryptedExchange shorter;
    shorter.query = Bytes(11, 0);
    EXPECT_FALSE(DotSession::can_frame(shorter.query));
    EXPECT_THROW((void)s.frame(std::move(shorter)), std::invalid_argument);
    // NOLINTNEXTLINE(bugprone-use-after-move): frame() promises not to take a refused one
    EXPECT_EQ(shorter.query.size(), 11U) << "a refused exchange is left to its caller";
    EXPECT_FALSE(DotSession::can_frame(Bytes(65536, 0)));
    EXPECT_TRUE(DotSession::can_frame(Bytes(65535, 0)));
    EXPECT_FALSE(s.in_flight());
}

TEST(DotSession, EveryIdInFlightMakesTheSessionFull) {
    DotSession s;
    std::vector<Delivered> got;
    Bytes last;
    for (std::uint32_t i = 0; i < 65536; ++i) {
        last = send(s, 0, {}, got);
    }
    EXPECT_TRUE(s.full());
    EncryptedExchange more;
    more.query = message(0);
    EXPECT_THROW((void)s.frame(std::move(more)), std::logic_error);
    s.receive(answer_to(last, {}), run_done());
    EXPECT_FALSE(s.full()) << "an answer frees its ID";
    EXPECT_EQ(got.size(), 1U);
}

}  // namespace
}  // namespace moat::upstream
