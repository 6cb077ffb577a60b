// validate(): every error code it can return, each with its exact offset, and messages it must
// accept. The codes it cannot return (bad_text, no_space, truncated, count_overflow,
// bad_argument) belong to text parsing and to the builder.
#include "moat/wire/validate.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "support/shared_data.hpp"
#include "unit/support/wire_corpus.hpp"
#include "unit/support/wire_writer.hpp"

namespace {

using moat::test::cat;
using moat::test::u16_bytes;
using moat::test::u32_bytes;
using moat::test::wire_name;
using moat::test::WireWriter;
using moat::wire::Errc;
using moat::wire::RrType;
using moat::wire::validate;
using moat::wire::WireError;
using Bytes = std::vector<std::uint8_t>;

struct Case {
    std::string what;
    Bytes msg;
    WireError error;
};

// A good response: question, an A answer with a compressed owner, an NS in authority, an OPT.
Bytes good_message() {
    WireWriter w(1, 1, 1, 1);
    w.question("www.example.com", RrType::a);
    w.ptr(12).rfields(RrType::a, Bytes{192, 0, 2, 1});
    w.ptr(16).rfields(RrType::ns, Bytes{3, 'n', 's', '1', 0xC0, 16});
    w.u8(0).rfields(RrType::opt, Bytes{}, 1232, 0);
    return w.take();
}

Bytes rrsig_fixed() {
    return cat(
        {u16_bytes(1), Bytes{13, 2}, u32_bytes(300), u32_bytes(2), u32_bytes(1), u16_bytes(7)});
}

std::vector<Case> error_cases() {
    std::vector<Case> cases;
    auto add = [&](std::string what, Bytes msg, Errc code, std::size_t offset) {
        cases.push_back(
            {std::move(what), std::move(msg), WireError{code, static_cast<std::uint32_t>(offset)}});
    };

    add("empty", {}, Errc::short_header, 0);
    add("11 bytes", Bytes(11, 0), Errc::short_header, 0);
    add("over 65535 bytes", Bytes(65536, 0), Errc::short_header, 0);

    {  // question name runs past the end
        WireWriter w(1, 0, 0, 0);
        w.raw({3, 'a', 'b'});
        add("question name overrun", w.take(), Errc::name_overrun, 16);
    }
    {  // header announces more answers than there are
        Bytes m = good_message();
        m[11] = 2;  // arcount 2: the second additional record would start at the end
        add("counts past the end", m, Errc::name_overrun, m.size());
    }
    {
        WireWriter w(1, 0, 0, 0);
        w.raw({0x40, 0}).qfields(RrType::a);
        add("extended label type 0x40", w.take(), Errc::bad_label_type, 12);
    }
    {
        WireWriter w(1, 0, 0, 0);
        w.raw({1, 'a', 0x80, 0}).qfields(RrType::a);
        add("label type 0x80", w.take(), Errc::bad_label_type, 14);
    }
    {
        WireWriter w(1, 0, 0, 0);
        w.ptr(12).qfields(RrType::a);
        add("pointer to itself", w.take(), Errc::forward_pointer, 12);
    }
    {  // NS RDATA pointing forward to the next record's owner
        WireWriter w(0, 2, 0, 0);
        w.u8(0).rfields(RrType::ns, Bytes{0xC0, 0});
        const std::size_t rdata = w.rdata_offset();
        Bytes m = w.name("ns.example").rfields(RrType::a, Bytes{1, 2, 3, 4}).take();
        m[rdata + 1] = static_cast<std::uint8_t>(rdata + 2);
        add("forward pointer in RDATA", m, Errc::forward_pointer, rdata);
    }
    {  // a chain of 128 pointers in an opaque RDATA, then an owner pointing at its end: 129 hops
        WireWriter w(1, 2, 0, 0);
        w.u8(0).qfields(RrType::a);  // question "." at 12
        Bytes chain;
        const std::size_t rdata = w.size() + 1 + 10;  // root owner + fixed fields
        for (std::size_t i = 0; i < 128; ++i) {
            const std::size_t target = i == 0 ? 12 : rdata + 2 * (i - 1);
            chain.push_back(static_cast<std::uint8_t>(0xC0U | (target >> 8U)));
            chain.push_back(static_cast<std::uint8_t>(target));
        }
        w.u8(0).rfields(static_cast<RrType>(65280), chain);
        w.ptr(rdata + std::size_t{2} * 127).rfields(RrType::a, Bytes{1, 2, 3, 4});
        add("129 hops", w.take(), Errc::too_many_hops, rdata);
    }
    {  // 256 octets: 4 x 63-octet labels
        WireWriter w(1, 0, 0, 0);
        for (int k = 0; k < 4; ++k) {
            w.u8(63);
            for (int i = 0; i < 63; ++i) {
                w.u8('n');
            }
        }
        w.u8(0).qfields(RrType::a);
        add("name too long", w.take(), Errc::name_too_long, 12 + 192);
    }
    {
        WireWriter w(1, 0, 0, 0);
        w.name("a.example").raw({0, 1, 0});
        add("question fields cut", w.take(), Errc::record_overrun, 23);
    }
    {
        WireWriter w(0, 1, 0, 0);
        w.u8(0).raw({0, 1, 0, 1, 0, 0, 0, 0, 0});
        add("record header cut", w.take(), Errc::record_overrun, 13);
    }
    {
        WireWriter w(0, 1, 0, 0);
        w.u8(0).u16(1).u16(1).u32(0).u16(4).raw({1, 2, 3});
        add("RDATA past the end", w.take(), Errc::rdata_overrun, 13 + 8);
    }
    {
        WireWriter w(0, 1, 0, 0);
        w.u8(0).rfields(RrType::a, Bytes{1, 2, 3, 4, 5});
        add("A of 5 octets", w.take(), Errc::rdata_length, 12 + 11);
    }
    {
        WireWriter w(1, 1, 0, 0);
        w.question("example.com", RrType::rrsig);
        w.ptr(12).rfields(RrType::rrsig, cat({rrsig_fixed(), Bytes{0xC0, 12}, Bytes{1, 2}}));
        const std::size_t at = w.rdata_offset() + 18;
        add("compressed RRSIG signer", w.take(), Errc::compressed_in_rdata, at);
    }
    {
        Bytes m = good_message();
        const std::size_t size = m.size();
        m.push_back(0);
        add("one trailing byte", m, Errc::trailing_data, size);
    }
    {
        Bytes m = good_message();
        m[11] = 0;  // arcount 0: the OPT becomes trailing bytes
        add("OPT not counted", m, Errc::trailing_data, m.size() - 11);
    }
    {
        WireWriter w(0, 1, 0, 0);
        w.u8(0).rfields(RrType::opt, Bytes{}, 1232, 0);
        add("OPT in the answer section", w.take(), Errc::bad_opt, 12);
    }
    {
        WireWriter w(0, 0, 1, 0);
        w.u8(0).rfields(RrType::opt, Bytes{}, 1232, 0);
        add("OPT in the authority section", w.take(), Errc::bad_opt, 12);
    }
    {
        WireWriter w(0, 0, 0, 2);
        w.u8(0).rfields(RrType::opt, Bytes{}, 1232, 0);
        w.u8(0).rfields(RrType::opt, Bytes{}, 1232, 0);
        add("two OPTs", w.take(), Errc::bad_opt, 12 + 11);
    }
    {
        WireWriter w(0, 0, 0, 1);
        w.name("example").rfields(RrType::opt, Bytes{}, 1232, 0);
        add("OPT not at the root", w.take(), Errc::bad_opt, 12);
    }
    {
        WireWriter w(0, 0, 0, 1);
        w.u8(0).rfields(RrType::opt, Bytes{0, 10, 0, 8, 1, 2, 3}, 1232, 0);
        add("EDNS option overrun", w.take(), Errc::bad_edns_option, 12 + 11);
    }
    {
        WireWriter w(0, 1, 0, 0);
        w.u8(0).rfields(RrType::https, Bytes{0, 1, 0, 0, 3, 0, 2, 1, 187, 0, 1, 0, 0});
        add("SvcParams out of order", w.take(), Errc::bad_svc_param, 12 + 11 + 9);
    }
    {
        WireWriter w(0, 1, 0, 0);
        w.u8(0).rfields(RrType::nsec, Bytes{0, 0, 1, 0});
        add("NSEC window ending in a zero octet", w.take(), Errc::bad_type_bitmap, 12 + 11 + 1);
    }
    {
        WireWriter w(0, 1, 0, 0);
        w.u8(0).rfields(RrType::caa, Bytes{0, 2, 'a', '_', 'v'});
        add("CAA tag with '_'", w.take(), Errc::bad_caa_tag, 12 + 11 + 3);
    }
    return cases;
}

TEST(Validate, AcceptsAGoodMessage) {
    const Bytes m = good_message();
    auto r = validate(m);
    EXPECT_TRUE(r) << moat::wire::describe(r.error());
}

TEST(Validate, AcceptsHeaderOnlyAndQuestionOnly) {
    EXPECT_TRUE(validate(Bytes(12, 0)));
    WireWriter w(1, 0, 0, 0, 0x0100);
    w.question("example.com", RrType::aaaa);
    EXPECT_TRUE(validate(w.bytes()));
}

TEST(Validate, AcceptsEmptyRdataOfUpdateDeletions) {
    // RFC 2136 §2.5: class ANY / NONE with RDLENGTH 0 in the update (authority) section.
    WireWriter w(1, 0, 2, 0, 0x2800);  // opcode UPDATE
    w.question("example.com", RrType::soa);
    w.name("host.example.com").rfields(RrType::a, Bytes{}, 255, 0);
    w.name("host.example.com").rfields(RrType::mx, Bytes{}, 254, 0);
    EXPECT_TRUE(validate(w.bytes()));
}

TEST(Validate, AcceptsTheFixtures) {
    MOAT_SHARED_PATH_OR_SKIP(dir, "data/wire-fixtures");
    for (const auto& f : moat::test::load_fixtures(dir)) {
        auto r = validate(f.bytes);
        EXPECT_TRUE(r) << f.name << ": " << moat::wire::describe(r.error());
    }
}

TEST(Validate, ReportsEachErrorWithItsOffset) {
    for (const Case& c : error_cases()) {
        auto r = validate(c.msg);
        ASSERT_FALSE(r) << c.what;
        EXPECT_EQ(r.error(), c.error) << c.what << ": got " << moat::wire::describe(r.error())
                                      << ", want " << moat::wire::describe(c.error);
    }
}

TEST(Validate, CoversEveryMessageErrorCode) {
    std::set<Errc> seen;
    for (const Case& c : error_cases()) {
        seen.insert(c.error.code);
    }
    const std::set<Errc> all{Errc::short_header,        Errc::name_overrun,  Errc::bad_label_type,
                             Errc::forward_pointer,     Errc::too_many_hops, Errc::name_too_long,
                             Errc::record_overrun,      Errc::rdata_overrun, Errc::rdata_length,
                             Errc::compressed_in_rdata, Errc::trailing_data, Errc::bad_opt,
                             Errc::bad_edns_option,     Errc::bad_svc_param, Errc::bad_type_bitmap,
                             Errc::bad_caa_tag};
    EXPECT_EQ(seen, all);
}

TEST(Validate, PrefixesOfAGoodMessageAreRejected) {
    // Every strict prefix of a valid message is invalid (the header counts promise more).
    const Bytes m = good_message();
    for (std::size_t n = 0; n < m.size(); ++n) {
        EXPECT_FALSE(validate(std::span<const std::uint8_t>(m).first(n))) << n;
    }
}

TEST(Validate, ErrorCodesConvertToErrorCode) {
    const std::error_code ec = moat::wire::make_error_code(Errc::forward_pointer);
    EXPECT_EQ(ec.category().name(), std::string("moat.wire"));
    EXPECT_EQ(ec.message(), moat::wire::reason(Errc::forward_pointer));
    EXPECT_EQ(moat::wire::describe({Errc::trailing_data, 57}),
              std::string("offset 57: ") + moat::wire::reason(Errc::trailing_data));
    std::set<std::string> phrases;
    for (int code = 1; code <= static_cast<int>(Errc::bad_argument); ++code) {
        const std::string phrase = moat::wire::reason(static_cast<Errc>(code));
        EXPECT_TRUE(phrases.insert(phrase).second) << code << ": " << phrase << " used twice";
    }
    EXPECT_EQ(phrases.count(moat::wire::reason(static_cast<Errc>(200))), 0U);
}

}  // namespace
