// EDNS(0) Padding: responses grow to the next multiple of the block with a zero-filled option
// and still validate; every case where padding must not happen leaves the bytes alone; and
// query_wants_padding() finds the option in a query.
#include "moat/wire/padding.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "moat/wire/message_builder.hpp"
#include "moat/wire/message_view.hpp"
#include "moat/wire/rdata.hpp"
#include "moat/wire/record.hpp"
#include "moat/wire/validate.hpp"
#include "unit/support/wire_writer.hpp"

namespace {

using moat::test::cat;
using moat::test::u16_bytes;
using moat::test::WireWriter;
using moat::wire::kEdnsOptionPadding;
using moat::wire::MessageView;
using moat::wire::pad_response;
using moat::wire::query_wants_padding;
using moat::wire::RrType;
using Bytes = std::vector<std::uint8_t>;

constexpr std::size_t kBlock = moat::wire::kResponsePaddingBlock;
// Header 12, question "example.com" TXT 17, answer owner pointer + fixed fields 12, root OPT 11.
constexpr std::size_t kOverhead = 52;

/// One encoded EDNS option.
Bytes option(std::uint16_t code, const Bytes& data) {
    return cat({u16_bytes(code), u16_bytes(static_cast<std::uint16_t>(data.size())), data});
}

/// TXT RDATA of exactly `n` octets (n >= 1): character-strings of up to 255 octets.
Bytes txt_rdata(std::size_t n) {
    Bytes out;
    while (n > 0) {
        const std::size_t chunk = std::min<std::size_t>(n - 1, 255);
        out.push_back(static_cast<std::uint8_t>(chunk));
        out.insert(out.end(), chunk, 'x');
        n -= chunk + 1;
    }
    return out;
}

/// A response to "example.com TXT" with a TXT answer of `rdlength` octets and, when `edns`, a
/// root OPT carrying `options` as its last record. kOverhead + rdlength + options octets long.
Bytes response(std::size_t rdlength, bool edns = true, const Bytes& options = {}) {
    WireWriter w(1, 1, 0, edns ? 1 : 0);
    w.question("example.com", RrType::txt);
    w.ptr(12).rfields(RrType::txt, txt_rdata(rdlength));
    if (edns) {
        w.u8(0).rfields(RrType::opt, options, 1232, 0);
    }
    return w.take();
}

/// `msg` at the front of a buffer of `capacity` octets; the rest filled with 0xAA so that stray
/// writes show.
Bytes in_buffer(const Bytes& msg, std::size_t capacity) {
    Bytes buffer(capacity, 0xAA);
    std::copy(msg.begin(), msg.end(), buffer.begin());
    return buffer;
}

/// The options of the message's OPT record, in order; fails the test when there is none.
std::vector<moat::wire::rdata::KeyValue> opt_options(std::span<const std::uint8_t> msg) {
    std::vector<moat::wire::rdata::KeyValue> out;
    auto view = MessageView::parse(msg);
    if (!view) {
        ADD_FAILURE() << "response does not parse";
        return out;
    }
    auto additional = view->additional();
    for (const auto& rr : additional) {
        if (rr.type == RrType::opt) {
            auto opt = moat::wire::rdata::read_opt(rr);
            EXPECT_TRUE(opt);
            if (opt) {
                for (const auto kv : opt->options) {
                    out.push_back(kv);
                }
            }
            return out;
        }
    }
    ADD_FAILURE() << "no OPT record";
    return out;
}

/// Checks a padded message: it validates, and its OPT ends in a zero-filled Padding option that
/// accounts for all the growth from `original` octets.
void expect_padded(std::span<const std::uint8_t> msg, std::size_t original) {
    const auto status = moat::wire::validate(msg);
    ASSERT_TRUE(status) << moat::wire::describe(status.error());
    auto options = opt_options(msg);
    ASSERT_FALSE(options.empty());
    const auto& padding = options.back();
    EXPECT_EQ(padding.key, kEdnsOptionPadding);
    EXPECT_EQ(padding.value.size(), msg.size() - original - 4);
    EXPECT_TRUE(std::all_of(padding.value.begin(), padding.value.end(),
                            [](std::uint8_t b) { return b == 0; }));
}

TEST(PadResponse, SmallResponseGrowsToOneBlock) {
    const Bytes msg = response(40);
    ASSERT_EQ(msg.size(), kOverhead + 40);
    Bytes buffer = in_buffer(msg, 4096);
    const std::size_t padded = pad_response(buffer, msg.size());
    EXPECT_EQ(padded, kBlock);
    expect_padded(std::span(buffer).first(padded), msg.size());
    EXPECT_TRUE(std::equal(msg.begin(), msg.end() - 2, buffer.begin()))  // all but RDLENGTH
        << "the message before the OPT's RDLENGTH changed";
    EXPECT_EQ(buffer[padded], 0xAA) << "wrote past the padded message";
}

TEST(PadResponse, EverySizeGrowsToTheNextMultiple) {
    for (std::size_t rdlength = 1; rdlength <= 1500; ++rdlength) {
        const Bytes msg = response(rdlength);
        // A buffer of padded_length() octets is always room enough.
        Bytes buffer = in_buffer(msg, moat::wire::padded_length(msg.size()));
        const std::size_t padded = pad_response(buffer, msg.size());
        ASSERT_EQ(padded, buffer.size()) << "size " << msg.size();
        ASSERT_EQ(padded % kBlock, 0U) << "size " << msg.size();
        ASSERT_GE(padded, msg.size() + 4) << "size " << msg.size();
        ASSERT_LT(padded, msg.size() + 4 + kBlock) << "size " << msg.size();
        expect_padded(std::span(buffer).first(padded), msg.size());
        if (HasFatalFailure()) {
            return;
        }
    }
}

TEST(PadResponse, ExactMultipleGrowsByOneBlock) {
    // The option header alone passes the boundary, so the next multiple is a whole block on.
    const Bytes msg = response(kBlock - kOverhead);
    ASSERT_EQ(msg.size(), kBlock);
    Bytes buffer = in_buffer(msg, 4096);
    const std::size_t padded = pad_response(buffer, msg.size());
    EXPECT_EQ(padded, 2 * kBlock);
    expect_padded(std::span(buffer).first(padded), msg.size());
}

TEST(PadResponse, OtherBlockSizes) {
    for (const std::size_t block : {1U, 4U, 128U, 512U}) {
        const Bytes msg = response(100);
        Bytes buffer = in_buffer(msg, 4096);
        const std::size_t padded = pad_response(buffer, msg.size(), block);
        EXPECT_EQ(padded % block, 0U) << "block " << block;
        EXPECT_LT(padded, msg.size() + 4 + block) << "block " << block;
        expect_padded(std::span(buffer).first(padded), msg.size());
    }
}

TEST(PadResponse, KeepsOtherOptionsAndAppendsPadding) {
    const Bytes ede = option(15, Bytes{0x00, 0x11});  // Extended DNS Error 17, "Filtered"
    const Bytes msg = response(60, true, ede);
    Bytes buffer = in_buffer(msg, 4096);
    const std::size_t padded = pad_response(buffer, msg.size());
    ASSERT_EQ(padded, kBlock);
    expect_padded(std::span(buffer).first(padded), msg.size());
    const auto options = opt_options(std::span(buffer).first(padded));
    ASSERT_EQ(options.size(), 2U);
    EXPECT_EQ(options[0].key, 15);
    EXPECT_EQ(Bytes(options[0].value.begin(), options[0].value.end()), (Bytes{0x00, 0x11}));
    EXPECT_EQ(options[1].key, kEdnsOptionPadding);
}

TEST(PadResponse, WorksOnTheBuildersOutput) {
    using moat::wire::MessageBuilder;
    using moat::wire::Name;
    Bytes built;
    MessageBuilder builder(&built);
    builder.header().id = 0x4242;
    builder.header().set_flag(moat::wire::Header::kQr, true);
    const Name qname = *Name::from_text("www.example.com");
    ASSERT_TRUE(builder.add_question(qname, RrType::a));
    ASSERT_TRUE(builder.set_edns(moat::wire::EdnsOptions{}));
    for (std::uint8_t i = 1; i <= 3; ++i) {
        ASSERT_TRUE(builder.add_record(moat::wire::Section::answer, qname.wire(), RrType::a, 1, 300,
                                       moat::wire::encode::a({192, 0, 2, i})));
    }
    auto msg = builder.finish();
    ASSERT_TRUE(msg);
    const Bytes original(msg->begin(), msg->end());
    Bytes buffer = in_buffer(original, 1232);
    const std::size_t padded = pad_response(buffer, original.size());
    EXPECT_EQ(padded, kBlock);
    expect_padded(std::span(buffer).first(padded), original.size());
}

/// Asserts that padding `msg` in a buffer of `capacity` changes nothing at all.
void expect_untouched(const Bytes& msg, std::size_t capacity, std::size_t block = kBlock) {
    Bytes buffer = in_buffer(msg, capacity);
    const Bytes before = buffer;
    EXPECT_EQ(pad_response(buffer, msg.size(), block), msg.size());
    EXPECT_EQ(buffer, before);
}

TEST(PadResponse, WithoutOptUnchanged) { expect_untouched(response(40, false), 4096); }

TEST(PadResponse, AlreadyPaddedUnchanged) {
    expect_untouched(response(40, true, option(kEdnsOptionPadding, {})), 4096);
    expect_untouched(response(40, true, option(kEdnsOptionPadding, Bytes(20, 0))), 4096);
}

TEST(PadResponse, CapacityTooSmallUnchanged) {
    const Bytes msg = response(40);
    expect_untouched(msg, kBlock - 1);  // a partial pad is not wanted
    expect_untouched(msg, msg.size());
    Bytes exact = in_buffer(msg, kBlock);  // exactly room enough
    EXPECT_EQ(pad_response(exact, msg.size()), kBlock);
}

TEST(PadResponse, NeverPastTheLargestMessage) {
    // 65520 octets: the next multiple of 468 past 65524 is 65988, over 65535.
    const Bytes msg = response(140 * kBlock - kOverhead);
    ASSERT_EQ(msg.size(), 140 * kBlock);
    expect_untouched(msg, 70000);
}

TEST(PadResponse, MalformedOrUnusualMessagesUnchanged) {
    expect_untouched(Bytes(11, 0), 4096);  // short header
    Bytes truncated = response(40);
    truncated.resize(truncated.size() - 3);  // the OPT's fixed fields cut off
    expect_untouched(truncated, 4096);

    // OPT not the last record: the option would land inside the record after it.
    WireWriter w(1, 0, 0, 2);
    w.question("example.com", RrType::a);
    w.u8(0).rfields(RrType::opt, Bytes{}, 1232, 0);
    w.name("ns.example.com").rfields(RrType::a, Bytes{192, 0, 2, 1});
    expect_untouched(w.take(), 4096);

    // Bytes after the last record.
    Bytes trailing = response(40);
    trailing.push_back(0);
    expect_untouched(trailing, 4096);

    // OPT options that overrun its RDATA.
    expect_untouched(response(40, true, Bytes{0x00, 0x0F, 0x00, 0x09, 0x00}), 4096);

    // A length past the buffer, and a block of 0.
    const Bytes msg = response(40);
    Bytes buffer = in_buffer(msg, 4096);
    EXPECT_EQ(pad_response(std::span(buffer).first(msg.size() - 1), msg.size()), msg.size());
    expect_untouched(msg, 4096, 0);
}

/// A query for "example.com A", with an OPT carrying `options` when `edns`.
Bytes query(bool edns, const Bytes& options = {}) {
    WireWriter w(1, 0, 0, edns ? 1 : 0, 0x0100);
    w.question("example.com", RrType::a);
    if (edns) {
        w.u8(0).rfields(RrType::opt, options, 1232, 0);
    }
    return w.take();
}

/// query_wants_padding() on a parsed view; the overload on bytes must agree.
bool wants(const Bytes& msg) {
    auto view = MessageView::parse(msg);
    EXPECT_TRUE(view);
    const bool result = view && query_wants_padding(*view);
    EXPECT_EQ(query_wants_padding(std::span<const std::uint8_t>(msg)), result);
    return result;
}

TEST(QueryWantsPadding, OnlyWhenTheQueryWasPadded) {
    EXPECT_TRUE(wants(query(true, option(kEdnsOptionPadding, {}))));
    EXPECT_TRUE(wants(query(true, option(kEdnsOptionPadding, Bytes(84, 0)))));
    EXPECT_TRUE(wants(
        query(true, cat({option(10, Bytes(8, 1)), option(kEdnsOptionPadding, Bytes(60, 0))}))));
    EXPECT_FALSE(wants(query(true)));
    EXPECT_FALSE(wants(query(true, option(10, Bytes(8, 1)))));  // a cookie only
    EXPECT_FALSE(wants(query(false)));
    EXPECT_FALSE(query_wants_padding(std::span<const std::uint8_t>(Bytes(5, 0))));
}

TEST(QueryWantsPadding, MalformedOptIsNotAPaddingRequest) {
    EXPECT_FALSE(wants(query(true, Bytes{0x00, 0x0C, 0x00, 0x09})));  // option overruns
    Bytes cut = query(true, option(kEdnsOptionPadding, {}));
    cut.resize(cut.size() - 6);  // the OPT's RDATA runs past the end
    EXPECT_FALSE(wants(cut));
}

}  // namespace
