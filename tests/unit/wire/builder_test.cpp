// MessageBuilder: per-type round trips, name compression (exact bytes), the 0x3FFF pointer
// range, size limits with TC, EDNS, argument errors, span vs vector output, and the three
// benchmark fixtures rebuilt from their records.
#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <cstdio>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "moat/wire/message_builder.hpp"
#include "moat/wire/message_view.hpp"
#include "moat/wire/rdata.hpp"
#include "moat/wire/record.hpp"
#include "moat/wire/validate.hpp"
#include "moat_build.hpp"
#include "support/shared_data.hpp"
#include "unit/support/wire_corpus.hpp"
#include "unit/support/wire_trace.hpp"
#include "unit/support/wire_writer.hpp"

namespace {

namespace encode = moat::wire::encode;
using moat::test::cat;
using moat::test::u16_bytes;
using moat::test::u32_bytes;
using moat::test::wire_name;
using moat::wire::EdnsOptions;
using moat::wire::Errc;
using moat::wire::Header;
using moat::wire::MessageBuilder;
using moat::wire::MessageView;
using moat::wire::Name;
using moat::wire::Rcode;
using moat::wire::Record;
using moat::wire::RrClass;
using moat::wire::RrType;
using moat::wire::Section;
using Bytes = std::vector<std::uint8_t>;

Name name(std::string_view text) { return *Name::from_text(text); }

Record rec(std::string_view owner, RrType type, Bytes rdata, std::uint32_t ttl = 300) {
    return Record{name(owner), type, moat::wire::to_u16(RrClass::in), ttl, std::move(rdata)};
}

Bytes str(std::string_view s) { return {s.begin(), s.end()}; }

using Sectioned = std::vector<std::pair<Section, Record>>;

/// Every record of `msg`, copied out; fails the test when any part is invalid.
Sectioned records_of(std::span<const std::uint8_t> msg) {
    Sectioned out;
    auto ok = moat::wire::validate(msg);
    EXPECT_TRUE(ok) << moat::wire::describe(ok.error());
    auto view = MessageView::parse(msg);
    if (!view) {
        ADD_FAILURE() << "parse failed";
        return out;
    }
    auto range = view->records();
    for (const auto& rr : range) {
        auto r = moat::wire::to_record(rr);
        EXPECT_TRUE(r) << moat::test::record_repr(rr);
        if (r) {
            out.emplace_back(rr.section, std::move(*r));
        }
    }
    EXPECT_FALSE(range.error());
    return out;
}

/// The owner's bytes as written (possibly compressed) for the record starting at `at`.
Bytes owner_bytes(std::span<const std::uint8_t> msg, std::size_t at) {
    auto end = moat::wire::skip_name(msg, at, msg.size());
    EXPECT_TRUE(end);
    // NOLINTNEXTLINE(modernize-return-braced-init-list): a range of octets, not a list of them
    return Bytes(msg.begin() + static_cast<std::ptrdiff_t>(at),
                 msg.begin() + static_cast<std::ptrdiff_t>(end.value_or(at)));
}

/// RDATA as written of the record at `at`.
Bytes written_rdata(std::span<const std::uint8_t> msg, std::size_t at) {
    const std::size_t fixed = at + owner_bytes(msg, at).size();
    const std::size_t len = (std::size_t{msg[fixed + 8]} << 8U) | msg[fixed + 9];
    // NOLINTNEXTLINE(modernize-return-braced-init-list): a range of octets, not a list of them
    return Bytes(msg.begin() + static_cast<std::ptrdiff_t>(fixed + 10),
                 msg.begin() + static_cast<std::ptrdiff_t>(fixed + 10 + len));
}

Bytes rrsig_rdata(std::string_view signer) {
    return cat({u16_bytes(1), Bytes{13, 3}, u32_bytes(3600), u32_bytes(1700000000),
                u32_bytes(1690000000), u16_bytes(12345), wire_name(signer), Bytes(64, 0x11)});
}

std::vector<Record> one_of_each_type() {
    const std::array<std::string_view, 3> txt = {"v=spf1 -all", "", "second"};
    return {
        rec("example.com", RrType::a, encode::a({192, 0, 2, 1})),
        rec("example.com", RrType::aaaa,
            encode::aaaa({0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1})),
        rec("example.com", RrType::ns, encode::name(name("ns1.example.com"))),
        rec("www.example.com", RrType::cname, encode::name(name("web.example.com"))),
        rec("1.2.0.192.in-addr.arpa", RrType::ptr, encode::name(name("host.example.com"))),
        rec("example.com", RrType::mx, encode::mx(10, name("mx1.example.com"))),
        rec("example.com", RrType::txt, *encode::txt(txt)),
        rec("example.com", RrType::soa,
            encode::soa(name("ns1.example.com"), name("hostmaster.example.com"), 2024010101, 7200,
                        3600, 1209600, 300)),
        rec("_sip._tcp.example.com", RrType::srv,
            encode::srv(10, 60, 5060, name("sip.example.com"))),
        rec("example.com", RrType::caa, cat({Bytes{0, 5}, str("issue"), str("ca.example.net")})),
        rec("example.com", RrType::https,
            cat({u16_bytes(1), Bytes{0}, u16_bytes(1), u16_bytes(3), Bytes{2, 'h', '2'}})),
        rec("_dns.example.com", RrType::svcb,
            cat({u16_bytes(1), wire_name("dns.example.com"), u16_bytes(3), u16_bytes(2),
                 u16_bytes(853)})),
        rec("example.com", RrType::ds, cat({u16_bytes(60485), Bytes{13, 2}, Bytes(32, 0xAB)})),
        rec("example.com", RrType::dnskey, cat({u16_bytes(257), Bytes{3, 13}, Bytes(64, 0x5A)})),
        rec("example.com", RrType::rrsig, rrsig_rdata("example.com")),
        rec("example.com", RrType::nsec,
            cat({wire_name("a.example.com"), Bytes{0, 6, 0x60, 0, 0, 0, 0, 0x03, 1, 1, 0x40}})),
        rec("abcd.example.com", RrType::nsec3,
            cat({Bytes{1, 1}, u16_bytes(10), Bytes{2, 0xAA, 0xBB}, Bytes{20}, Bytes(20, 0x42),
                 Bytes{0, 1, 0x40}})),
        rec("example.com", RrType::nsec3param, cat({Bytes{1, 0}, u16_bytes(0), Bytes{0}})),
        rec("_443._tcp.example.com", RrType::tlsa, cat({Bytes{3, 1, 1}, Bytes(32, 0xCD)})),
        rec("old.example.com", RrType::dname, encode::name(name("new.example.net"))),
        rec("example.com", RrType::naptr,
            cat({u16_bytes(100), u16_bytes(10), Bytes{1, 'u'}, Bytes{7}, str("E2U+sip"), Bytes{0},
                 wire_name("sip.example.com")})),
        rec("example.com", RrType::hinfo, Bytes{3, 'C', 'P', 'U', 2, 'O', 'S'}),
        rec("example.com", RrType::rp,
            cat({wire_name("admin.example.com"), wire_name("info.example.com")})),
        rec("example.com", RrType::uri, cat({u16_bytes(1), u16_bytes(1), str("https://x/")})),
        rec("example.com", static_cast<RrType>(65280), Bytes{0xDE, 0xAD, 0xC0, 0x0C}),
        rec("example.com", static_cast<RrType>(65281), Bytes{}),
    };
}

// ---------------------------------------------------------------------------------------------
// Round trips

TEST(Builder, RoundTripsEveryTypeInOneMessage) {
    const auto records = one_of_each_type();
    Bytes out;
    MessageBuilder b(&out);
    ASSERT_TRUE(b.add_question(name("example.com"), RrType::any));
    for (const Record& r : records) {
        auto ok = b.add(Section::answer, r);
        ASSERT_TRUE(ok) << r.owner.to_text() << " " << moat::wire::to_u16(r.type) << ": "
                        << moat::wire::describe(ok.error());
    }
    ASSERT_TRUE(b.finish());
    const Sectioned back = records_of(out);
    ASSERT_EQ(back.size(), records.size());
    for (std::size_t i = 0; i < records.size(); ++i) {
        EXPECT_EQ(back[i].first, Section::answer);
        EXPECT_EQ(back[i].second, records[i])
            << i << " type " << moat::wire::to_u16(records[i].type);
        // Exact owner octets too, not only case-insensitively.
        EXPECT_TRUE(std::equal(back[i].second.owner.wire().begin(),
                               back[i].second.owner.wire().end(), records[i].owner.wire().begin(),
                               records[i].owner.wire().end()));
    }
}

TEST(Builder, RoundTripsEachTypeAloneInASpan) {
    std::array<std::uint8_t, 1024> buffer{};
    for (const Record& r : one_of_each_type()) {
        MessageBuilder b(buffer);
        ASSERT_TRUE(b.add(Section::authority, r)) << moat::wire::to_u16(r.type);
        auto msg = b.finish();
        ASSERT_TRUE(msg);
        const Sectioned back = records_of(*msg);
        ASSERT_EQ(back.size(), 1U);
        EXPECT_EQ(back[0].first, Section::authority);
        EXPECT_EQ(back[0].second, r) << moat::wire::to_u16(r.type);
    }
}

TEST(Builder, SectionsAndHeader) {
    Bytes out;
    MessageBuilder b(&out);
    b.header().id = 0xBEEF;
    b.header().flags = Header::kQr | Header::kAa | Header::kRd;
    ASSERT_TRUE(b.add_question(name("example.com"), RrType::a));
    ASSERT_TRUE(b.add(Section::answer, rec("example.com", RrType::a, encode::a({1, 2, 3, 4}))));
    ASSERT_TRUE(b.add(Section::authority,
                      rec("example.com", RrType::ns, encode::name(name("ns.example.com")))));
    ASSERT_TRUE(
        b.add(Section::additional, rec("ns.example.com", RrType::a, encode::a({5, 6, 7, 8}))));
    ASSERT_TRUE(b.add(Section::additional, rec("ns.example.com", RrType::aaaa, Bytes(16, 1))));
    auto msg = b.finish();
    ASSERT_TRUE(msg);
    auto view = MessageView::parse(*msg);
    ASSERT_TRUE(view);
    EXPECT_EQ(view->header(),
              (Header{0xBEEF, Header::kQr | Header::kAa | Header::kRd, 1, 1, 1, 2}));
    EXPECT_EQ(view->question()->qname.to_text(), "example.com.");
    EXPECT_EQ(view->question()->qtype, RrType::a);
    const auto back = records_of(*msg);
    ASSERT_EQ(back.size(), 4U);
    EXPECT_EQ(back[1].first, Section::authority);
    EXPECT_EQ(back[3].first, Section::additional);
    EXPECT_EQ(out.size(), msg->size());
}

TEST(Builder, RootNames) {
    // A priming query's answer: ". NS" with root-owned records and names in RDATA.
    std::array<std::uint8_t, 512> buffer{};
    MessageBuilder b(buffer);
    ASSERT_TRUE(b.add_question(Name{}, RrType::ns));
    const std::size_t first = b.size();
    ASSERT_TRUE(
        b.add(Section::answer, rec(".", RrType::ns, encode::name(name("a.root-servers.net")))));
    const std::size_t second = b.size();
    ASSERT_TRUE(
        b.add(Section::answer, rec(".", RrType::ns, encode::name(name("b.root-servers.net")))));
    ASSERT_TRUE(b.add(Section::additional,
                      rec("a.root-servers.net", RrType::a, encode::a({198, 41, 0, 4}))));
    auto msg = b.finish();
    ASSERT_TRUE(msg);
    EXPECT_EQ(owner_bytes(*msg, first), Bytes{0});  // the root is one octet, never a pointer
    EXPECT_EQ(owner_bytes(*msg, second), Bytes{0});
    const auto first_rdata = static_cast<std::uint8_t>(first + 1 + 10);
    EXPECT_EQ(written_rdata(*msg, second),
              (Bytes{1, 'b', 0xC0, static_cast<std::uint8_t>(first_rdata + 2)}));
    const auto back = records_of(*msg);
    ASSERT_EQ(back.size(), 3U);
    EXPECT_TRUE(back[0].second.owner.view().is_root());
    EXPECT_EQ(back[1].second.rdata, wire_name("b.root-servers.net"));
    EXPECT_EQ(back[2].second.owner.to_text(), "a.root-servers.net.");
}

// header() documents: "The counts are kept by the builder; whatever is set here is overwritten."
// A responder that starts from the query's header (the natural way to echo ID, opcode, RD and
// CD) must still get the counts of what it wrote.
TEST(Builder, CountsSetThroughHeaderAreOverwritten) {
    const Header query{0x4242, Header::kRd, 1, 0, 0, 1};  // a query with one question and OPT
    Bytes out;
    MessageBuilder b(&out);
    b.header() = query;
    b.header().set_flag(Header::kQr, true);
    ASSERT_TRUE(b.add_question(name("example.com"), RrType::a));
    ASSERT_TRUE(b.add(Section::answer, rec("example.com", RrType::a, encode::a({1, 2, 3, 4}))));
    auto msg = b.finish();
    ASSERT_TRUE(msg);
    auto view = MessageView::parse(*msg);
    ASSERT_TRUE(view);
    EXPECT_EQ(view->header().id, 0x4242);
    EXPECT_EQ(view->header().qdcount, 1);
    EXPECT_EQ(view->header().ancount, 1);
    EXPECT_EQ(view->header().nscount, 0);
    EXPECT_EQ(view->header().arcount, 0);
    EXPECT_TRUE(moat::wire::validate(*msg));
}

// ---------------------------------------------------------------------------------------------
// Compression

TEST(BuilderCompression, RepeatedNameIsOnePointer) {
    Bytes out;
    MessageBuilder b(&out);
    ASSERT_TRUE(b.add_question(name("www.example.com"), RrType::a));
    const std::size_t at = b.size();
    ASSERT_EQ(at, 33U);
    ASSERT_TRUE(b.add(Section::answer, rec("www.example.com", RrType::a, encode::a({1, 2, 3, 4}))));
    const std::size_t second = b.size();
    ASSERT_TRUE(b.add(Section::answer, rec("www.example.com", RrType::a, encode::a({1, 2, 3, 5}))));
    ASSERT_TRUE(b.finish());
    EXPECT_EQ(owner_bytes(out, at), (Bytes{0xC0, 12}));
    EXPECT_EQ(owner_bytes(out, second), (Bytes{0xC0, 12}));
    EXPECT_EQ(out.size(), 33U + 2 * 16);
}

TEST(BuilderCompression, OneMoreLabelAndSharedSuffixes) {
    Bytes out;
    MessageBuilder b(&out);
    ASSERT_TRUE(b.add_question(name("example.com"), RrType::a));  // 12..25
    std::vector<std::size_t> at;
    for (const char* owner : {"a.example.com", "b.a.example.com", "mail.example.com", "com",
                              "c.a.example.com", "a.example.com"}) {
        at.push_back(b.size());
        ASSERT_TRUE(b.add(Section::answer, rec(owner, RrType::a, encode::a({1, 1, 1, 1}))));
    }
    ASSERT_TRUE(b.finish());
    EXPECT_EQ(owner_bytes(out, at[0]), (Bytes{1, 'a', 0xC0, 12}));
    EXPECT_EQ(owner_bytes(out, at[1]), (Bytes{1, 'b', 0xC0, static_cast<std::uint8_t>(at[0])}));
    EXPECT_EQ(owner_bytes(out, at[2]), (Bytes{4, 'm', 'a', 'i', 'l', 0xC0, 12}));
    EXPECT_EQ(owner_bytes(out, at[3]), (Bytes{0xC0, 20}));  // "com" inside the question
    EXPECT_EQ(owner_bytes(out, at[4]), (Bytes{1, 'c', 0xC0, static_cast<std::uint8_t>(at[0])}));
    EXPECT_EQ(owner_bytes(out, at[5]), (Bytes{0xC0, static_cast<std::uint8_t>(at[0])}));
    const auto back = records_of(out);
    ASSERT_EQ(back.size(), 6U);
    EXPECT_EQ(back[4].second.owner.to_text(), "c.a.example.com.");
}

TEST(BuilderCompression, MatchesIgnoringCase) {
    Bytes out;
    MessageBuilder b(&out);
    ASSERT_TRUE(b.add_question(name("WWW.Example.COM"), RrType::a));
    const std::size_t first = b.size();
    ASSERT_TRUE(b.add(Section::answer, rec("www.example.com", RrType::a, encode::a({1, 2, 3, 4}))));
    const std::size_t second = b.size();
    ASSERT_TRUE(
        b.add(Section::answer, rec("x.www.EXAMPLE.com", RrType::a, encode::a({1, 2, 3, 4}))));
    const std::size_t third = b.size();
    ASSERT_TRUE(
        b.add(Section::answer, rec("mail.example.com", RrType::a, encode::a({1, 2, 3, 4}))));
    ASSERT_TRUE(b.finish());
    EXPECT_EQ(owner_bytes(out, first), (Bytes{0xC0, 12}));
    EXPECT_EQ(owner_bytes(out, second), (Bytes{1, 'x', 0xC0, 12}));
    EXPECT_EQ(owner_bytes(out, third), (Bytes{4, 'm', 'a', 'i', 'l', 0xC0, 16}));
    // The decompressed owner carries the case of the name it points at; it is the same name.
    const auto back = records_of(out);
    EXPECT_EQ(back[0].second.owner.to_text(), "WWW.Example.COM.");
    EXPECT_EQ(back[0].second.owner, name("www.example.com"));
}

TEST(BuilderCompression, NamesInRfc1035RdataAreCompressed) {
    Bytes out;
    MessageBuilder b(&out);
    ASSERT_TRUE(b.add_question(name("example.com"), RrType::any));
    std::vector<std::size_t> at;
    const std::vector<Record> records{
        rec("example.com", RrType::ns, encode::name(name("ns1.example.com"))),
        rec("example.com", RrType::mx, encode::mx(10, name("mx.example.com"))),
        rec("www.example.com", RrType::cname, encode::name(name("example.com"))),
        rec("zone.example.com", RrType::soa,
            encode::soa(name("ns1.example.com"), name("ns1.example.com"), 1, 2, 3, 4, 5)),
    };
    for (const Record& r : records) {
        at.push_back(b.size());
        ASSERT_TRUE(b.add(Section::answer, r));
    }
    ASSERT_TRUE(b.finish());
    const auto ns1 = static_cast<std::uint8_t>(at[0] + 2 + 10);  // NS RDATA offset
    EXPECT_EQ(written_rdata(out, at[0]), (Bytes{3, 'n', 's', '1', 0xC0, 12}));
    EXPECT_EQ(written_rdata(out, at[1]), (Bytes{0, 10, 2, 'm', 'x', 0xC0, 12}));
    EXPECT_EQ(written_rdata(out, at[2]), (Bytes{0xC0, 12}));
    EXPECT_EQ(written_rdata(out, at[3]),
              cat({Bytes{0xC0, ns1, 0xC0, ns1}, u32_bytes(1), u32_bytes(2), u32_bytes(3),
                   u32_bytes(4), u32_bytes(5)}));
    const auto back = records_of(out);
    ASSERT_EQ(back.size(), records.size());
    for (std::size_t i = 0; i < records.size(); ++i) {
        EXPECT_EQ(back[i].second, records[i]) << i;
    }
}

TEST(BuilderCompression, NamesOfOtherTypesAreWrittenInFull) {
    // SRV target (RFC 2782), RRSIG signer and NSEC next name (RFC 4034), SVCB target (RFC 9460),
    // NAPTR replacement, DNAME target, RP names: never compressed when written (RFC 3597 §4).
    const std::vector<Record> records{
        rec("_sip._tcp.example.com", RrType::srv, encode::srv(1, 2, 5060, name("sip.example.com"))),
        rec("example.com", RrType::rrsig, rrsig_rdata("example.com")),
        rec("example.com", RrType::nsec, cat({wire_name("www.example.com"), Bytes{0, 1, 0x40}})),
        rec("example.com", RrType::https, cat({u16_bytes(1), wire_name("www.example.com")})),
        rec("example.com", RrType::naptr,
            cat({u16_bytes(1), u16_bytes(1), Bytes{0, 0, 0}, wire_name("www.example.com")})),
        rec("example.com", RrType::dname, encode::name(name("www.example.com"))),
        rec("example.com", RrType::rp,
            cat({wire_name("www.example.com"), wire_name("example.com")})),
    };
    Bytes out;
    MessageBuilder b(&out);
    ASSERT_TRUE(b.add_question(name("www.example.com"), RrType::any));
    std::vector<std::size_t> at;
    for (const Record& r : records) {
        at.push_back(b.size());
        ASSERT_TRUE(b.add(Section::answer, r));
    }
    ASSERT_TRUE(b.finish());
    for (std::size_t i = 0; i < records.size(); ++i) {
        EXPECT_EQ(written_rdata(out, at[i]), records[i].rdata)
            << "type " << moat::wire::to_u16(records[i].type);
    }
    // Owners are still compressed.
    EXPECT_EQ(owner_bytes(out, at[1]), (Bytes{0xC0, 16}));
}

TEST(BuilderCompression, OffsetsPastTheLimitAreNeverTargets) {
    Bytes out;
    MessageBuilder b(&out);
    ASSERT_TRUE(b.add_question(name("example.com"), RrType::txt));
    const std::string body(200, 'x');
    const std::array<std::string_view, 1> chunk = {body};
    const Bytes txt = *encode::txt(chunk);
    int n = 0;
    while (b.size() < 0x4000 + 100) {
        const std::string owner = "t" + std::to_string(n++) + ".example.com";
        ASSERT_TRUE(b.add(Section::answer, rec(owner, RrType::txt, txt)));
    }
    const std::size_t late = b.size();
    ASSERT_GT(late, moat::wire::kMaxPointerOffset);
    ASSERT_TRUE(
        b.add(Section::answer, rec("late.example.com", RrType::a, encode::a({1, 2, 3, 4}))));
    const std::size_t again = b.size();
    ASSERT_TRUE(
        b.add(Section::answer, rec("late.example.com", RrType::a, encode::a({1, 2, 3, 5}))));
    const std::size_t deeper = b.size();
    ASSERT_TRUE(
        b.add(Section::answer, rec("x.late.example.com", RrType::a, encode::a({1, 2, 3, 6}))));
    const std::size_t ns = b.size();
    ASSERT_TRUE(b.add(Section::answer,
                      rec("example.com", RrType::ns, encode::name(name("late.example.com")))));
    ASSERT_TRUE(b.finish());
    // "late" sits past 0x3FFF: every later use repeats it and points only at "example.com" (12).
    EXPECT_EQ(owner_bytes(out, late), (Bytes{4, 'l', 'a', 't', 'e', 0xC0, 12}));
    EXPECT_EQ(owner_bytes(out, again), (Bytes{4, 'l', 'a', 't', 'e', 0xC0, 12}));
    EXPECT_EQ(owner_bytes(out, deeper), (Bytes{1, 'x', 4, 'l', 'a', 't', 'e', 0xC0, 12}));
    EXPECT_EQ(written_rdata(out, ns), (Bytes{4, 'l', 'a', 't', 'e', 0xC0, 12}));
    const auto back = records_of(out);
    ASSERT_EQ(back.size(), static_cast<std::size_t>(n) + 4);
    EXPECT_EQ(back[static_cast<std::size_t>(n) + 2].second.owner.to_text(), "x.late.example.com.");
    EXPECT_EQ(back.back().second.rdata, wire_name("late.example.com"));
}

TEST(BuilderCompression, FailedAddLeavesNoStaleTargets) {
    Bytes out;
    MessageBuilder b(&out);
    ASSERT_TRUE(b.add_question(name("example.com"), RrType::a));
    const std::size_t mark = b.size();
    // Owner "gone.example.com" is written, then the RDATA is rejected: all of it rolls back.
    auto bad = b.add(Section::answer, rec("gone.example.com", RrType::a, Bytes{1, 2, 3}));
    ASSERT_FALSE(bad);
    EXPECT_EQ(bad.error().code, Errc::rdata_length);
    EXPECT_EQ(b.size(), mark);
    EXPECT_FALSE(b.truncated());
    ASSERT_TRUE(
        b.add(Section::answer, rec("other.example.com", RrType::a, encode::a({1, 1, 1, 1}))));
    ASSERT_TRUE(
        b.add(Section::answer, rec("gone.example.com", RrType::a, encode::a({2, 2, 2, 2}))));
    ASSERT_TRUE(b.finish());
    const auto back = records_of(out);
    ASSERT_EQ(back.size(), 2U);
    EXPECT_EQ(back[0].second.owner.to_text(), "other.example.com.");
    EXPECT_EQ(back[1].second.owner.to_text(), "gone.example.com.");
}

// The builder's "one label in front of the previous name" shortcut must not hide a longer
// suffix already in the message. Sequence from the `large` fixture: SOA example.com with mname
// ns1.example.com, then NS example.com -> ns1.example.com. dnspython, ldns and any full-suffix
// compressor write the NS RDATA as one pointer to the SOA's mname.
TEST(BuilderCompression, KnownNameAfterItsParentIsOnePointer) {
    Bytes out;
    MessageBuilder b(&out);
    ASSERT_TRUE(b.add_question(name("example.com"), RrType::any));
    const std::size_t soa = b.size();
    ASSERT_TRUE(b.add(
        Section::answer,
        rec("example.com", RrType::soa,
            encode::soa(name("ns1.example.com"), name("hostmaster.example.com"), 1, 2, 3, 4, 5))));
    const std::size_t ns = b.size();
    ASSERT_TRUE(b.add(Section::answer,
                      rec("example.com", RrType::ns, encode::name(name("ns1.example.com")))));
    ASSERT_TRUE(b.finish());
    const auto mname = static_cast<std::uint8_t>(soa + 2 + 10);
    ASSERT_EQ(written_rdata(out, soa)[0], 3);  // ns1 written once, in the SOA
    EXPECT_EQ(written_rdata(out, ns), (Bytes{0xC0, mname}))
        << "got " << moat::test::hex(written_rdata(out, ns));
}

// ---------------------------------------------------------------------------------------------
// Size limits

Record numbered(int i) {
    return rec("host" + std::to_string(100 + i) + ".example.com", RrType::a,
               encode::a({10, 0, 0, static_cast<std::uint8_t>(i)}));
}

TEST(BuilderLimits, AnswerOverflowSetsTcAndKeepsEarlierRecords) {
    std::array<std::uint8_t, 4096> buffer{};
    MessageBuilder b(buffer, 512);
    ASSERT_TRUE(b.add_question(name("example.com"), RrType::a));
    std::vector<Record> added;
    for (int i = 0;; ++i) {
        const Record r = numbered(i);
        const std::size_t before = b.size();
        auto ok = b.add(Section::answer, r);
        if (!ok) {
            EXPECT_EQ(ok.error().code, Errc::truncated);
            EXPECT_EQ(b.size(), before);
            break;
        }
        added.push_back(r);
        ASSERT_LT(i, 100);
    }
    EXPECT_TRUE(b.truncated());
    // Everything after is refused.
    EXPECT_EQ(b.add(Section::answer, numbered(1)).error().code, Errc::truncated);
    EXPECT_EQ(b.add(Section::additional, numbered(1)).error().code, Errc::truncated);
    EXPECT_FALSE(b.add_question(name("example.com"), RrType::a));
    auto msg = b.finish();
    ASSERT_TRUE(msg);
    EXPECT_LE(msg->size(), 512U);
    EXPECT_GT(msg->size(), 512U - 24U);  // each record is 24 octets: the next did not fit
    auto view = MessageView::parse(*msg);
    ASSERT_TRUE(view);
    EXPECT_TRUE(view->header().tc());
    EXPECT_EQ(view->header().ancount, added.size());
    const auto back = records_of(*msg);
    ASSERT_EQ(back.size(), added.size());
    for (std::size_t i = 0; i < added.size(); ++i) {
        EXPECT_EQ(back[i].second, added[i]);
    }
}

TEST(BuilderLimits, AuthorityOverflowSetsTc) {
    std::array<std::uint8_t, 512> buffer{};
    MessageBuilder b(buffer);  // the buffer is the limit
    for (int i = 0;; ++i) {
        auto ok = b.add(Section::authority, numbered(i));
        if (!ok) {
            EXPECT_EQ(ok.error().code, Errc::truncated);
            break;
        }
        ASSERT_LT(i, 100);
    }
    auto msg = b.finish();
    ASSERT_TRUE(msg);
    EXPECT_TRUE(MessageView::parse(*msg)->header().tc());
    EXPECT_TRUE(moat::wire::validate(*msg));
}

TEST(BuilderLimits, AdditionalOverflowDropsWithoutTc) {
    std::array<std::uint8_t, 512> buffer{};
    MessageBuilder b(buffer, 512);
    ASSERT_TRUE(b.add_question(name("example.com"), RrType::a));
    ASSERT_TRUE(b.add(Section::answer, numbered(0)));
    std::size_t extra = 0;
    for (int i = 1;; ++i) {
        auto ok = b.add(Section::additional, numbered(i));
        if (!ok) {
            EXPECT_EQ(ok.error().code, Errc::truncated);
            break;
        }
        ++extra;
        ASSERT_LT(i, 100);
    }
    EXPECT_TRUE(b.truncated());
    EXPECT_EQ(b.add(Section::additional, numbered(1)).error().code, Errc::truncated);
    auto msg = b.finish();
    ASSERT_TRUE(msg);
    EXPECT_LE(msg->size(), 512U);
    auto view = MessageView::parse(*msg);
    EXPECT_FALSE(view->header().tc());
    EXPECT_EQ(view->header().arcount, extra);
    EXPECT_EQ(records_of(*msg).size(), 1 + extra);
}

TEST(BuilderLimits, OptAlwaysFits) {
    const Bytes options = cat({u16_bytes(10), u16_bytes(8), Bytes(8, 7)});
    std::array<std::uint8_t, 4096> buffer{};
    MessageBuilder b(buffer, 512);
    ASSERT_TRUE(b.add_question(name("example.com"), RrType::a));
    ASSERT_TRUE(b.set_edns(EdnsOptions{1232, 0, true, options}));
    std::size_t added = 0;
    while (b.add(Section::answer, numbered(static_cast<int>(added)))) {
        ++added;
    }
    auto msg = b.finish();
    ASSERT_TRUE(msg);
    EXPECT_LE(msg->size(), 512U);
    EXPECT_GT(msg->size(), 512U - 24U);
    auto view = MessageView::parse(*msg);
    ASSERT_TRUE(view);
    EXPECT_TRUE(view->header().tc());
    EXPECT_EQ(view->header().ancount, added);
    EXPECT_EQ(view->header().arcount, 1);
    auto extra = view->additional();
    const auto* opt_rr = extra.next();
    ASSERT_NE(opt_rr, nullptr);
    auto opt = moat::wire::rdata::read_opt(*opt_rr);
    ASSERT_TRUE(opt);
    EXPECT_EQ(Bytes(opt->options.bytes().begin(), opt->options.bytes().end()), options);
}

TEST(BuilderLimits, EdnsThatCannotFitIsRefused) {
    std::array<std::uint8_t, 30> buffer{};
    MessageBuilder b(buffer);
    const Bytes options(10, 0);
    EXPECT_EQ(b.set_edns(EdnsOptions{1232, 0, false, options}).error().code, Errc::no_space);
    EXPECT_TRUE(b.set_edns(EdnsOptions{1232, 0, false, {}}));
}

TEST(BuilderLimits, BufferSmallerThanAHeader) {
    std::array<std::uint8_t, 10> buffer{};
    MessageBuilder b(buffer);
    EXPECT_FALSE(b.add_question(name("a"), RrType::a));
    EXPECT_EQ(b.finish().error().code, Errc::no_space);
}

// ---------------------------------------------------------------------------------------------
// EDNS

moat::wire::rdata::Opt opt_of(std::span<const std::uint8_t> msg) {
    auto view = MessageView::parse(msg);
    EXPECT_TRUE(view);
    auto range = view->additional();
    const moat::wire::RecordView* last = nullptr;
    while (const auto* rr = range.next()) {
        last = rr;
    }
    EXPECT_NE(last, nullptr);
    EXPECT_EQ(last->type, RrType::opt);
    EXPECT_TRUE(last->owner.is_root());
    auto opt = moat::wire::rdata::read_opt(*last);
    EXPECT_TRUE(opt);
    return *opt;
}

TEST(BuilderEdns, WritesTheOptRecordLast) {
    const Bytes options =
        cat({u16_bytes(10), u16_bytes(8), Bytes(8, 0x33), u16_bytes(12), u16_bytes(0)});
    Bytes out;
    MessageBuilder b(&out);
    ASSERT_TRUE(b.add_question(name("example.com"), RrType::a));
    ASSERT_TRUE(b.set_edns(EdnsOptions{4096, 0, true, options}));
    ASSERT_TRUE(b.add(Section::additional, numbered(1)));
    auto msg = b.finish();
    ASSERT_TRUE(msg);
    ASSERT_TRUE(moat::wire::validate(*msg));
    const auto opt = opt_of(*msg);
    EXPECT_EQ(opt.udp_payload_size, 4096);
    EXPECT_TRUE(opt.dnssec_ok);
    EXPECT_EQ(opt.version, 0);
    EXPECT_EQ(opt.extended_rcode, 0);
    EXPECT_EQ(opt.z, 0);
    EXPECT_EQ(Bytes(opt.options.bytes().begin(), opt.options.bytes().end()), options);
    EXPECT_EQ(MessageView::parse(*msg)->header().arcount, 2);
    // finish() again gives the same message, not a second OPT.
    const Bytes first(msg->begin(), msg->end());
    auto msg2 = b.finish();
    ASSERT_TRUE(msg2);
    EXPECT_EQ(Bytes(msg2->begin(), msg2->end()), first);
}

TEST(BuilderEdns, ExtendedRcodeSplitsAcrossHeaderAndOpt) {
    Bytes out;
    MessageBuilder b(&out);
    ASSERT_TRUE(b.set_edns(EdnsOptions{1232, 1, false, {}}));
    b.set_rcode(Rcode::badvers);  // 16: header 0, OPT 1
    auto msg = b.finish();
    ASSERT_TRUE(msg);
    EXPECT_EQ(MessageView::parse(*msg)->header().rcode_low(), 0);
    const auto opt = opt_of(*msg);
    EXPECT_EQ(opt.extended_rcode, 1);
    EXPECT_EQ(opt.version, 1);
    EXPECT_FALSE(opt.dnssec_ok);

    Bytes out2;
    MessageBuilder c(&out2);
    ASSERT_TRUE(c.set_edns(EdnsOptions{}));
    c.set_rcode(static_cast<Rcode>(0xABC));  // the full 12-bit range
    auto msg2 = c.finish();
    ASSERT_TRUE(msg2);
    EXPECT_EQ(MessageView::parse(*msg2)->header().rcode_low(), 0xC);
    EXPECT_EQ(opt_of(*msg2).extended_rcode, 0xAB);

    Bytes out3;
    MessageBuilder d(&out3);
    d.set_rcode(Rcode::nxdomain);
    ASSERT_TRUE(d.set_edns(EdnsOptions{}));
    auto msg3 = d.finish();
    ASSERT_TRUE(msg3);
    EXPECT_EQ(MessageView::parse(*msg3)->header().rcode_low(), 3);
    EXPECT_EQ(opt_of(*msg3).extended_rcode, 0);
}

TEST(BuilderEdns, ExtendedRcodeWithoutEdnsIsAnError) {
    Bytes out;
    MessageBuilder b(&out);
    b.set_rcode(Rcode::badvers);
    EXPECT_EQ(b.finish().error().code, Errc::bad_argument);
    b.set_rcode(Rcode::refused);
    auto ok = b.finish();
    ASSERT_TRUE(ok);
    EXPECT_EQ(MessageView::parse(*ok)->header().rcode_low(), 5);
}

TEST(BuilderEdns, SmallUdpSizeIsSentAs512) {
    Bytes out;
    MessageBuilder b(&out);
    ASSERT_TRUE(b.set_edns(EdnsOptions{100, 0, false, {}}));
    auto msg = b.finish();
    ASSERT_TRUE(msg);
    EXPECT_EQ(opt_of(*msg).udp_payload_size, 512);
}

// ---------------------------------------------------------------------------------------------
// Arguments

TEST(BuilderArguments, RefusedInputsChangeNothing) {
    Bytes out;
    MessageBuilder b(&out);
    ASSERT_TRUE(b.add_question(name("example.com"), RrType::a));
    const std::size_t size = b.size();
    // `code`, or `alternative` where either phrase describes the input.
    auto expect_refused = [&](moat::wire::Status r, Errc code, Errc alternative = Errc{}) {
        ASSERT_FALSE(r);
        EXPECT_TRUE(r.error().code == code || r.error().code == alternative)
            << moat::wire::describe(r.error());
        EXPECT_EQ(b.size(), size);
        EXPECT_FALSE(b.truncated());
    };
    const Bytes owner = wire_name("example.com");
    expect_refused(b.add_record(Section::additional, owner, RrType::opt, 1232, 0, {}),
                   Errc::bad_argument);
    expect_refused(
        b.add_record(Section::answer, Bytes{0xC0, 12}, RrType::a, 1, 0, Bytes{1, 2, 3, 4}),
        Errc::bad_argument);
    expect_refused(
        b.add_record(Section::answer, Bytes{1, 'a', 0, 0}, RrType::a, 1, 0, Bytes{1, 2, 3, 4}),
        Errc::bad_argument);
    expect_refused(b.add_record(Section::answer, Bytes{1, 'a'}, RrType::a, 1, 0, Bytes{1, 2, 3, 4}),
                   Errc::bad_argument);
    expect_refused(b.add_record(Section::answer, owner, RrType::a, 1, 0, Bytes{1, 2, 3}),
                   Errc::rdata_length);
    // Record RDATA is uncompressed: a pointer is refused (as a pointer or as a bad layout).
    expect_refused(b.add_record(Section::answer, owner, RrType::ns, 1, 0, Bytes{0xC0, 12}),
                   Errc::compressed_in_rdata, Errc::rdata_length);
    expect_refused(
        b.add_record(Section::answer, owner, RrType::srv, 1, 0, Bytes{0, 1, 0, 2, 0, 3, 0xC0, 12}),
        Errc::compressed_in_rdata, Errc::rdata_length);
    expect_refused(b.add_record(Section::answer, owner, RrType::mx, 1, 0, Bytes{0, 1, 1, 'a'}),
                   Errc::rdata_length, Errc::name_overrun);
    expect_refused(b.add_record(Section::answer, owner, RrType::ns, 1, 0,
                                cat({wire_name("a.example"), Bytes{0}})),
                   Errc::rdata_length);
    expect_refused(b.add_record(Section::answer, owner, RrType::caa, 1, 0, Bytes{0, 0}),
                   Errc::bad_caa_tag);
    expect_refused(b.add_question(Bytes{1, 'a'}, RrType::a), Errc::bad_argument);

    ASSERT_TRUE(b.add(Section::authority, numbered(1)));
    const std::size_t after = b.size();
    auto backwards = b.add(Section::answer, numbered(2));
    ASSERT_FALSE(backwards);
    EXPECT_EQ(backwards.error().code, Errc::bad_argument);
    auto late_question = b.add_question(name("example.com"), RrType::a);
    ASSERT_FALSE(late_question);
    EXPECT_EQ(late_question.error().code, Errc::bad_argument);
    EXPECT_EQ(b.size(), after);
    ASSERT_TRUE(b.finish());
    EXPECT_EQ(records_of(out).size(), 1U);
}

// RFC 2136 §2.5.2-2.5.4: deletions carry class ANY or NONE and empty RDATA. validate(), the
// readers and to_record() accept them; the builder must write the records it can read back.
TEST(BuilderArguments, EmptyRdataOfUpdateDeletionsIsWritten) {
    Bytes out;
    MessageBuilder b(&out);
    b.header().set_opcode(moat::wire::Opcode::update);
    ASSERT_TRUE(b.add_question(name("example.com"), RrType::soa));
    for (const std::uint16_t rclass : {std::uint16_t{254}, std::uint16_t{255}}) {
        auto ok = b.add_record(Section::authority, wire_name("host.example.com"), RrType::a, rclass,
                               0, {});
        EXPECT_TRUE(ok) << rclass << ": " << moat::wire::describe(ok.error());
    }
    ASSERT_TRUE(b.finish());
    EXPECT_TRUE(moat::wire::validate(out));
}

// ---------------------------------------------------------------------------------------------
// Span and vector output

std::vector<Record> many_records() {
    std::vector<Record> out;
    for (int i = 0; i < 150; ++i) {
        out.push_back(numbered(i));
        out.push_back(rec("host" + std::to_string(100 + i) + ".example.com", RrType::mx,
                          encode::mx(static_cast<std::uint16_t>(i), name("mx.example.com"))));
    }
    return out;
}

template <typename Builder>
void fill(Builder& b, const std::vector<Record>& records) {
    b.header().id = 7;
    ASSERT_TRUE(b.add_question(name("example.com"), RrType::any));
    ASSERT_TRUE(b.set_edns(EdnsOptions{}));
    for (const Record& r : records) {
        ASSERT_TRUE(b.add(Section::answer, r));
    }
}

TEST(BuilderOutput, VectorGrowsFromEmptyAndMatchesSpan) {
    const auto records = many_records();
    std::vector<std::uint8_t> buffer(65535);
    MessageBuilder s(buffer);
    fill(s, records);
    auto span_msg = s.finish();
    ASSERT_TRUE(span_msg);
    ASSERT_GT(span_msg->size(), 4096U);

    Bytes out;  // empty
    MessageBuilder v(&out);
    fill(v, records);
    auto vec_msg = v.finish();
    ASSERT_TRUE(vec_msg);
    EXPECT_EQ(out.size(), span_msg->size());
    EXPECT_EQ(out, Bytes(span_msg->begin(), span_msg->end()));
    EXPECT_EQ(vec_msg->data(), out.data());

    // A vector holding junk is overwritten and cut to size.
    Bytes junk(100000, 0xEE);
    MessageBuilder j(&junk);
    fill(j, records);
    ASSERT_TRUE(j.finish());
    EXPECT_EQ(junk, out);
}

TEST(BuilderOutput, ResetStartsAFreshMessage) {
    Bytes out;
    MessageBuilder b(&out);
    ASSERT_TRUE(b.add_question(name("zzz.example.org"), RrType::a));
    ASSERT_TRUE(b.add(Section::answer, rec("aaa.example.net", RrType::a, encode::a({1, 2, 3, 4}))));
    ASSERT_TRUE(b.finish());
    b.reset();
    ASSERT_TRUE(b.add_question(name("b.example"), RrType::a));
    // Must not point into the previous message's names.
    ASSERT_TRUE(b.add(Section::answer, rec("aaa.example.net", RrType::a, encode::a({1, 2, 3, 4}))));
    ASSERT_TRUE(b.add(Section::answer, rec("zzz.example.org", RrType::a, encode::a({1, 2, 3, 4}))));
    auto msg = b.finish();
    ASSERT_TRUE(msg);
    const auto back = records_of(*msg);
    ASSERT_EQ(back.size(), 2U);
    EXPECT_EQ(back[0].second.owner.to_text(), "aaa.example.net.");
    EXPECT_EQ(back[1].second.owner.to_text(), "zzz.example.org.");
    EXPECT_EQ(MessageView::parse(*msg)->question()->qname.to_text(), "b.example.");
}

// ---------------------------------------------------------------------------------------------
// The benchmark fixtures (built by dnspython with full suffix compression)

TEST(BuilderFixtures, RebuiltNoLargerThanDnspython) {
    MOAT_SHARED_PATH_OR_SKIP(dir, "data/wire-fixtures");
    for (const auto& f : moat::test::load_fixtures(dir)) {
        auto input = moat::bench::prepare_build(f.bytes);
        ASSERT_TRUE(input) << f.name;
        Bytes out;
        MessageBuilder b(&out);
        const std::size_t size = moat::bench::build_message(b, *input);
        ASSERT_GT(size, 0U) << f.name;
        std::printf("fixture %-12s dnspython %5zu bytes, moat %5zu bytes, %s\n", f.name.c_str(),
                    f.bytes.size(), size, out == f.bytes ? "byte-identical" : "DIFFERENT");
        EXPECT_LE(size, f.bytes.size()) << f.name;
        // Same content either way.
        auto again = moat::bench::prepare_build(out);
        ASSERT_TRUE(again);
        EXPECT_EQ(again->records, input->records) << f.name;
    }
}

TEST(BuilderFixtures, RebuiltByteIdenticalToDnspython) {
    // Both compress every name of the RFC 1035 types against the longest suffix written so far,
    // first occurrence as the target: the output must be the same octets.
    MOAT_SHARED_PATH_OR_SKIP(dir, "data/wire-fixtures");
    for (const auto& f : moat::test::load_fixtures(dir)) {
        auto input = moat::bench::prepare_build(f.bytes);
        ASSERT_TRUE(input) << f.name;
        std::array<std::uint8_t, 8192> buffer{};
        MessageBuilder b(buffer);
        const std::size_t size = moat::bench::build_message(b, *input);
        ASSERT_GT(size, 0U);
        const Bytes out(buffer.begin(), buffer.begin() + static_cast<std::ptrdiff_t>(size));
        if (out != f.bytes) {
            std::size_t at = 0;
            while (at < out.size() && at < f.bytes.size() && out[at] == f.bytes[at]) {
                ++at;
            }
            ADD_FAILURE() << f.name << ": first difference at offset " << at << " (moat "
                          << out.size() << " bytes, dnspython " << f.bytes.size() << ")";
        }
    }
}

}  // namespace
