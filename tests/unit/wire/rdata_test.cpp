// Typed RDATA readers: one hand-built record per type, every field asserted, and the layout
// errors (wrong lengths, bad options, parameters, bitmaps, tags, forbidden pointers).
#include "moat/wire/rdata.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "moat/wire/message_view.hpp"
#include "moat/wire/record.hpp"
#include "unit/support/wire_writer.hpp"

namespace {

namespace rd = moat::wire::rdata;
using moat::test::cat;
using moat::test::u16_bytes;
using moat::test::u32_bytes;
using moat::test::wire_name;
using moat::test::WireWriter;
using moat::wire::Errc;
using moat::wire::MessageView;
using moat::wire::RecordView;
using moat::wire::RrType;
using moat::wire::Section;
using moat::wire::WireError;
using Bytes = std::vector<std::uint8_t>;

Bytes str(std::string_view s) { return {s.begin(), s.end()}; }

/// A message with the question "example.com. A" at offset 12 (so RDATA can point to 12) and one
/// record of `type` in `section`; keeps the bytes alive and hands out the record.
class OneRecord {
public:
    OneRecord(RrType type, const Bytes& rdata, std::string_view owner = "host.example.com",
              Section section = Section::answer, std::uint16_t rclass = 1,
              std::uint32_t ttl = 3600) {
        const auto an = static_cast<std::uint16_t>(section == Section::answer ? 1 : 0);
        const auto ns = static_cast<std::uint16_t>(section == Section::authority ? 1 : 0);
        const auto ar = static_cast<std::uint16_t>(section == Section::additional ? 1 : 0);
        WireWriter w(1, an, ns, ar);
        w.question("example.com", RrType::a);
        w.rr(owner, type, rdata, rclass, ttl);
        rdata_offset_ = w.rdata_offset();
        bytes_ = w.take();
        auto view = MessageView::parse(bytes_);
        EXPECT_TRUE(view);
        auto range = view->records();
        const RecordView* rr = range.next();
        EXPECT_NE(rr, nullptr);
        if (rr != nullptr) {
            rr_ = *rr;
        }
    }
    [[nodiscard]] const RecordView& rr() const { return rr_; }
    /// Offset of the RDATA in the message (error offsets are message offsets).
    [[nodiscard]] std::uint32_t at(std::size_t within = 0) const {
        return static_cast<std::uint32_t>(rdata_offset_ + within);
    }

private:
    Bytes bytes_;
    std::size_t rdata_offset_ = 0;
    RecordView rr_;
};

std::vector<unsigned> types_of(const rd::TypeBitmapRange& range) {
    std::vector<unsigned> out;
    for (const RrType t : range) {
        out.push_back(static_cast<unsigned>(t));
    }
    return out;
}

std::vector<std::string> strings_of(const rd::CharStringRange& range) {
    std::vector<std::string> out;
    for (const auto s : range) {
        out.emplace_back(s.begin(), s.end());
    }
    return out;
}

// --- A, AAAA ---------------------------------------------------------------------------------

TEST(Rdata, A) {
    const OneRecord r(RrType::a, {192, 0, 2, 1});
    auto a = rd::read_a(r.rr());
    ASSERT_TRUE(a);
    EXPECT_EQ(a->address, (std::array<std::uint8_t, 4>{192, 0, 2, 1}));
    auto any = rd::read(r.rr());
    ASSERT_TRUE(any);
    ASSERT_TRUE(std::holds_alternative<rd::A>(*any));
    EXPECT_EQ(std::get<rd::A>(*any).address[3], 1);

    for (const Bytes& bad : {Bytes{1, 2, 3}, Bytes{1, 2, 3, 4, 5}, Bytes{}}) {
        const OneRecord b(RrType::a, bad);
        EXPECT_EQ(rd::read_a(b.rr()).error(), (WireError{Errc::rdata_length, b.at()}));
        EXPECT_EQ(rd::read(b.rr()).error(), (WireError{Errc::rdata_length, b.at()}));
    }
    // The wrong reader for the type.
    EXPECT_EQ(rd::read_aaaa(r.rr()).error().code, Errc::bad_argument);
    EXPECT_EQ(rd::read_mx(r.rr()).error().code, Errc::bad_argument);
}

TEST(Rdata, Aaaa) {
    Bytes addr{0x20, 0x01, 0x0d, 0xb8};
    addr.resize(16);
    addr[15] = 1;
    const OneRecord r(RrType::aaaa, addr);
    auto a = rd::read_aaaa(r.rr());
    ASSERT_TRUE(a);
    EXPECT_EQ(Bytes(a->address.begin(), a->address.end()), addr);
    EXPECT_TRUE(std::holds_alternative<rd::Aaaa>(*rd::read(r.rr())));
    addr.pop_back();
    const OneRecord b(RrType::aaaa, addr);
    EXPECT_EQ(rd::read_aaaa(b.rr()).error(), (WireError{Errc::rdata_length, b.at()}));
}

// --- single names ----------------------------------------------------------------------------

TEST(Rdata, NsCnamePtrWithAndWithoutCompression) {
    for (const RrType type : {RrType::ns, RrType::cname, RrType::ptr, RrType::dname}) {
        const OneRecord full(type, wire_name("ns1.example.net"));
        auto n = rd::read_name(full.rr());
        ASSERT_TRUE(n) << static_cast<int>(type);
        EXPECT_EQ(n->name.to_text(), "ns1.example.net.");
        EXPECT_EQ(n->name.offset(), full.at());
        auto any = rd::read(full.rr());
        ASSERT_TRUE(any);
        ASSERT_TRUE(std::holds_alternative<rd::NameRdata>(*any));

        // ns1 -> 12 (example.com.)
        const OneRecord compressed(type, Bytes{3, 'n', 's', '1', 0xC0, 12});
        auto c = rd::read_name(compressed.rr());
        ASSERT_TRUE(c) << static_cast<int>(type);
        EXPECT_EQ(c->name.to_text(), "ns1.example.com.");
        EXPECT_EQ(c->name.length(), 17U);
        auto record = moat::wire::to_record(compressed.rr());
        ASSERT_TRUE(record);
        EXPECT_EQ(record->rdata, wire_name("ns1.example.com"));
    }
}

TEST(Rdata, NameLengthErrors) {
    // One octet after the name.
    const OneRecord extra(RrType::ns, cat({wire_name("a.example"), Bytes{0}}));
    EXPECT_EQ(rd::read_name(extra.rr()).error(), (WireError{Errc::rdata_length, extra.at(11)}));
    // The name runs past RDLENGTH (but not past the message: the next byte is not RDATA).
    const OneRecord cut(RrType::cname, Bytes{1, 'a'});
    EXPECT_EQ(rd::read_name(cut.rr()).error(), (WireError{Errc::name_overrun, cut.at(2)}));
    // Empty.
    const OneRecord empty(RrType::ptr, Bytes{});
    EXPECT_EQ(rd::read_name(empty.rr()).error(), (WireError{Errc::name_overrun, empty.at()}));
    // read_name on a type that is not a single name.
    const OneRecord mx(RrType::mx, cat({u16_bytes(10), wire_name("mx.example")}));
    EXPECT_EQ(rd::read_name(mx.rr()).error().code, Errc::bad_argument);
}

// --- MX --------------------------------------------------------------------------------------

TEST(Rdata, Mx) {
    const OneRecord r(RrType::mx, Bytes{0, 10, 4, 'm', 'a', 'i', 'l', 0xC0, 12});
    auto mx = rd::read_mx(r.rr());
    ASSERT_TRUE(mx);
    EXPECT_EQ(mx->preference, 10);
    EXPECT_EQ(mx->exchange.to_text(), "mail.example.com.");
    EXPECT_TRUE(std::holds_alternative<rd::Mx>(*rd::read(r.rr())));

    const OneRecord shorty(RrType::mx, Bytes{0});
    EXPECT_EQ(rd::read_mx(shorty.rr()).error(), (WireError{Errc::rdata_length, shorty.at()}));
    const OneRecord no_name(RrType::mx, Bytes{0, 10});
    EXPECT_EQ(rd::read_mx(no_name.rr()).error(), (WireError{Errc::name_overrun, no_name.at(2)}));
}

// --- TXT -------------------------------------------------------------------------------------

TEST(Rdata, TxtStrings) {
    const OneRecord r(RrType::txt, cat({Bytes{6}, str("v=spf1"), Bytes{0}, Bytes{3}, str("abc")}));
    auto txt = rd::read_txt(r.rr());
    ASSERT_TRUE(txt);
    EXPECT_EQ(strings_of(txt->strings), (std::vector<std::string>{"v=spf1", "", "abc"}));
    EXPECT_TRUE(std::holds_alternative<rd::Txt>(*rd::read(r.rr())));

    const OneRecord empty_string(RrType::txt, Bytes{0});
    auto e = rd::read_txt(empty_string.rr());
    ASSERT_TRUE(e);
    EXPECT_EQ(strings_of(e->strings), (std::vector<std::string>{""}));

    Bytes big{255};
    big.resize(256, 'x');
    const OneRecord max(RrType::txt, big);
    auto m = rd::read_txt(max.rr());
    ASSERT_TRUE(m);
    ASSERT_EQ(strings_of(m->strings).size(), 1U);
    EXPECT_EQ(strings_of(m->strings)[0].size(), 255U);
}

TEST(Rdata, TxtErrors) {
    const OneRecord none(RrType::txt, Bytes{});
    EXPECT_EQ(rd::read_txt(none.rr()).error(), (WireError{Errc::rdata_length, none.at()}));
    // Second string claims 5 octets, 2 left.
    const OneRecord over(RrType::txt, Bytes{1, 'a', 5, 'b', 'c'});
    EXPECT_EQ(rd::read_txt(over.rr()).error(), (WireError{Errc::rdata_length, over.at(2)}));
}

// --- SOA -------------------------------------------------------------------------------------

TEST(Rdata, Soa) {
    const Bytes numbers = cat({u32_bytes(2024010101), u32_bytes(7200), u32_bytes(3600),
                               u32_bytes(1209600), u32_bytes(300)});
    // mname ns1 -> 12, rname in full.
    const OneRecord r(RrType::soa, cat({Bytes{3, 'n', 's', '1', 0xC0, 12},
                                        wire_name("hostmaster.example.com"), numbers}));
    auto soa = rd::read_soa(r.rr());
    ASSERT_TRUE(soa);
    EXPECT_EQ(soa->mname.to_text(), "ns1.example.com.");
    EXPECT_EQ(soa->rname.to_text(), "hostmaster.example.com.");
    EXPECT_EQ(soa->serial, 2024010101U);
    EXPECT_EQ(soa->refresh, 7200U);
    EXPECT_EQ(soa->retry, 3600U);
    EXPECT_EQ(soa->expire, 1209600U);
    EXPECT_EQ(soa->minimum, 300U);
    EXPECT_TRUE(std::holds_alternative<rd::Soa>(*rd::read(r.rr())));

    const Bytes names = cat({wire_name("a"), wire_name("b")});
    const OneRecord short_numbers(RrType::soa, cat({names, Bytes(19, 0)}));
    EXPECT_EQ(rd::read_soa(short_numbers.rr()).error(),
              (WireError{Errc::rdata_length, short_numbers.at(names.size())}));
    const OneRecord long_numbers(RrType::soa, cat({names, Bytes(21, 0)}));
    EXPECT_EQ(rd::read_soa(long_numbers.rr()).error(),
              (WireError{Errc::rdata_length, long_numbers.at(names.size() + 20)}));
}

// --- SRV -------------------------------------------------------------------------------------

TEST(Rdata, Srv) {
    const OneRecord r(
        RrType::srv,
        cat({u16_bytes(10), u16_bytes(60), u16_bytes(5060), wire_name("sip.example.com")}),
        "_sip._tcp.example.com");
    auto srv = rd::read_srv(r.rr());
    ASSERT_TRUE(srv);
    EXPECT_EQ(srv->priority, 10);
    EXPECT_EQ(srv->weight, 60);
    EXPECT_EQ(srv->port, 5060);
    EXPECT_EQ(srv->target.to_text(), "sip.example.com.");
    EXPECT_TRUE(std::holds_alternative<rd::Srv>(*rd::read(r.rr())));

    // RFC 2782 forbids compressing the target, but RFC 3597 §4 tells receivers to decompress
    // SRV anyway: a pointer is read.
    const OneRecord compressed(RrType::srv,
                               cat({u16_bytes(1), u16_bytes(2), u16_bytes(3), Bytes{0xC0, 12}}));
    auto c = rd::read_srv(compressed.rr());
    ASSERT_TRUE(c);
    EXPECT_EQ(c->target.to_text(), "example.com.");

    const OneRecord shorty(RrType::srv, Bytes{0, 1, 0, 2, 0});
    EXPECT_EQ(rd::read_srv(shorty.rr()).error(), (WireError{Errc::rdata_length, shorty.at()}));
}

// --- CAA -------------------------------------------------------------------------------------

TEST(Rdata, Caa) {
    const OneRecord r(RrType::caa, cat({Bytes{128, 5}, str("issue"), str("letsencrypt.org")}));
    auto caa = rd::read_caa(r.rr());
    ASSERT_TRUE(caa);
    EXPECT_EQ(caa->flags, 128);
    EXPECT_EQ(str(std::string(caa->tag.begin(), caa->tag.end())), str("issue"));
    EXPECT_EQ(std::string(caa->value.begin(), caa->value.end()), "letsencrypt.org");
    EXPECT_TRUE(std::holds_alternative<rd::Caa>(*rd::read(r.rr())));

    // An empty value is allowed.
    const OneRecord novalue(RrType::caa, cat({Bytes{0, 5}, str("iodef")}));
    auto nv = rd::read_caa(novalue.rr());
    ASSERT_TRUE(nv);
    EXPECT_TRUE(nv->value.empty());

    const OneRecord empty_tag(RrType::caa, cat({Bytes{0, 0}, str("x")}));
    EXPECT_EQ(rd::read_caa(empty_tag.rr()).error(),
              (WireError{Errc::bad_caa_tag, empty_tag.at(1)}));
    const OneRecord dash(RrType::caa, cat({Bytes{0, 6}, str("is-sue"), str("x")}));
    EXPECT_EQ(rd::read_caa(dash.rr()).error(), (WireError{Errc::bad_caa_tag, dash.at(4)}));
    const OneRecord over(RrType::caa, cat({Bytes{0, 9}, str("issue")}));
    EXPECT_EQ(rd::read_caa(over.rr()).error(), (WireError{Errc::rdata_length, over.at(1)}));
    const OneRecord nothing(RrType::caa, Bytes{0});
    EXPECT_EQ(rd::read_caa(nothing.rr()).error(), (WireError{Errc::rdata_length, nothing.at(1)}));
}

// --- SVCB / HTTPS ----------------------------------------------------------------------------

Bytes param(std::uint16_t key, const Bytes& value) {
    return cat({u16_bytes(key), u16_bytes(static_cast<std::uint16_t>(value.size())), value});
}

TEST(Rdata, HttpsAndSvcb) {
    const Bytes alpn = param(1, cat({Bytes{2}, str("h2"), Bytes{2}, str("h3")}));
    const Bytes port = param(3, u16_bytes(8443));
    for (const RrType type : {RrType::https, RrType::svcb}) {
        const OneRecord r(type, cat({u16_bytes(1), Bytes{0}, alpn, port}));
        auto s = rd::read_svcb(r.rr());
        ASSERT_TRUE(s) << moat::wire::describe(s.error());
        EXPECT_EQ(s->priority, 1);
        EXPECT_TRUE(s->target.is_root());
        std::vector<std::uint16_t> keys;
        std::vector<Bytes> values;
        for (const auto kv : s->params) {
            keys.push_back(kv.key);
            values.emplace_back(kv.value.begin(), kv.value.end());
        }
        EXPECT_EQ(keys, (std::vector<std::uint16_t>{1, 3}));
        EXPECT_EQ(values[0], (Bytes{2, 'h', '2', 2, 'h', '3'}));
        EXPECT_EQ(values[1], u16_bytes(8443));
        EXPECT_TRUE(std::holds_alternative<rd::Svcb>(*rd::read(r.rr())));
    }
    // AliasMode: priority 0, a target, no params.
    const OneRecord alias(RrType::https, cat({u16_bytes(0), wire_name("cdn.example.net")}));
    auto a = rd::read_svcb(alias.rr());
    ASSERT_TRUE(a);
    EXPECT_EQ(a->priority, 0);
    EXPECT_EQ(a->target.to_text(), "cdn.example.net.");
    EXPECT_TRUE(a->params.begin() == a->params.end());
}

TEST(Rdata, SvcParamErrors) {
    const Bytes alpn = param(1, Bytes{2, 'h', '2'});
    const Bytes port = param(3, u16_bytes(443));
    const std::size_t head = 3;  // priority + root target

    const OneRecord order(RrType::https, cat({u16_bytes(1), Bytes{0}, port, alpn}));
    EXPECT_EQ(rd::read_svcb(order.rr()).error(),
              (WireError{Errc::bad_svc_param, order.at(head + port.size())}));
    const OneRecord dup(RrType::https, cat({u16_bytes(1), Bytes{0}, alpn, alpn}));
    EXPECT_EQ(rd::read_svcb(dup.rr()).error(),
              (WireError{Errc::bad_svc_param, dup.at(head + alpn.size())}));
    // Value length past the end.
    const OneRecord over(RrType::svcb,
                         cat({u16_bytes(1), Bytes{0}, u16_bytes(1), u16_bytes(9), Bytes{1, 2}}));
    EXPECT_EQ(rd::read_svcb(over.rr()).error(), (WireError{Errc::bad_svc_param, over.at(head)}));
    // A parameter header cut short.
    const OneRecord cut(RrType::svcb, cat({u16_bytes(1), Bytes{0}, Bytes{0, 1, 0}}));
    EXPECT_EQ(rd::read_svcb(cut.rr()).error(), (WireError{Errc::bad_svc_param, cut.at(head)}));
    // RFC 9460 §2.2: the target is never compressed.
    const OneRecord ptr(RrType::https, cat({u16_bytes(1), Bytes{0xC0, 12}}));
    EXPECT_EQ(rd::read_svcb(ptr.rr()).error(), (WireError{Errc::compressed_in_rdata, ptr.at(2)}));
}

// --- OPT -------------------------------------------------------------------------------------

TEST(Rdata, Opt) {
    const Bytes cookie = param(10, Bytes{1, 2, 3, 4, 5, 6, 7, 8});
    const Bytes padding = param(12, Bytes{});
    // TTL: ext rcode 1, version 0, DO, Z = 0x0123.
    const OneRecord r(RrType::opt, cat({cookie, padding}), ".", Section::additional, 4096,
                      0x01008123U);
    auto opt = rd::read_opt(r.rr());
    ASSERT_TRUE(opt);
    EXPECT_EQ(opt->udp_payload_size, 4096);
    EXPECT_EQ(opt->extended_rcode, 1);
    EXPECT_EQ(opt->version, 0);
    EXPECT_TRUE(opt->dnssec_ok);
    EXPECT_EQ(opt->z, 0x0123);
    std::vector<std::uint16_t> codes;
    std::vector<std::size_t> sizes;
    for (const auto kv : opt->options) {
        codes.push_back(kv.key);
        sizes.push_back(kv.value.size());
    }
    EXPECT_EQ(codes, (std::vector<std::uint16_t>{10, 12}));
    EXPECT_EQ(sizes, (std::vector<std::size_t>{8, 0}));
    EXPECT_TRUE(std::holds_alternative<rd::Opt>(*rd::read(r.rr())));

    // Options need not be ordered.
    const OneRecord unordered(RrType::opt, cat({padding, cookie}), ".", Section::additional);
    EXPECT_TRUE(rd::read_opt(unordered.rr()));
    // Version 1, no options.
    const OneRecord v1(RrType::opt, Bytes{}, ".", Section::additional, 1232, 0x00010000U);
    auto o1 = rd::read_opt(v1.rr());
    ASSERT_TRUE(o1);
    EXPECT_EQ(o1->version, 1);
    EXPECT_FALSE(o1->dnssec_ok);
    EXPECT_TRUE(o1->options.begin() == o1->options.end());
}

TEST(Rdata, OptOptionOverrun) {
    const Bytes cookie = param(10, Bytes{1, 2, 3, 4, 5, 6, 7, 8});
    const OneRecord over(RrType::opt, cat({cookie, u16_bytes(12), u16_bytes(4), Bytes{0, 0}}), ".",
                         Section::additional);
    EXPECT_EQ(rd::read_opt(over.rr()).error(),
              (WireError{Errc::bad_edns_option, over.at(cookie.size())}));
    const OneRecord cut(RrType::opt, Bytes{0, 10, 0}, ".", Section::additional);
    EXPECT_EQ(rd::read_opt(cut.rr()).error(), (WireError{Errc::bad_edns_option, cut.at()}));
}

// --- DS, DNSKEY, RRSIG -------------------------------------------------------------------------

TEST(Rdata, Ds) {
    const Bytes digest(32, 0xAB);
    const OneRecord r(RrType::ds, cat({u16_bytes(60485), Bytes{13, 2}, digest}));
    auto ds = rd::read_ds(r.rr());
    ASSERT_TRUE(ds);
    EXPECT_EQ(ds->key_tag, 60485);
    EXPECT_EQ(ds->algorithm, 13);
    EXPECT_EQ(ds->digest_type, 2);
    EXPECT_EQ(Bytes(ds->digest.begin(), ds->digest.end()), digest);
    EXPECT_TRUE(std::holds_alternative<rd::Ds>(*rd::read(r.rr())));
    const OneRecord shorty(RrType::ds, Bytes{1, 2, 3});
    EXPECT_EQ(rd::read_ds(shorty.rr()).error(), (WireError{Errc::rdata_length, shorty.at()}));
}

TEST(Rdata, Dnskey) {
    const Bytes key(64, 0x5A);
    const OneRecord r(RrType::dnskey, cat({u16_bytes(257), Bytes{3, 13}, key}));
    auto k = rd::read_dnskey(r.rr());
    ASSERT_TRUE(k);
    EXPECT_EQ(k->flags, 257);
    EXPECT_EQ(k->protocol, 3);
    EXPECT_EQ(k->algorithm, 13);
    EXPECT_EQ(Bytes(k->public_key.begin(), k->public_key.end()), key);
    EXPECT_TRUE(std::holds_alternative<rd::Dnskey>(*rd::read(r.rr())));
}

Bytes rrsig_fixed() {
    return cat({u16_bytes(moat::wire::to_u16(RrType::a)), Bytes{13, 3}, u32_bytes(3600),
                u32_bytes(1700000000), u32_bytes(1690000000), u16_bytes(12345)});
}

TEST(Rdata, Rrsig) {
    const Bytes sig(64, 0x11);
    const OneRecord r(RrType::rrsig, cat({rrsig_fixed(), wire_name("example.com"), sig}));
    auto s = rd::read_rrsig(r.rr());
    ASSERT_TRUE(s);
    EXPECT_EQ(s->type_covered, RrType::a);
    EXPECT_EQ(s->algorithm, 13);
    EXPECT_EQ(s->labels, 3);
    EXPECT_EQ(s->original_ttl, 3600U);
    EXPECT_EQ(s->expiration, 1700000000U);
    EXPECT_EQ(s->inception, 1690000000U);
    EXPECT_EQ(s->key_tag, 12345);
    EXPECT_EQ(s->signer.to_text(), "example.com.");
    EXPECT_EQ(Bytes(s->signature.begin(), s->signature.end()), sig);
    EXPECT_TRUE(std::holds_alternative<rd::Rrsig>(*rd::read(r.rr())));

    // RFC 4034 §3.1.7: the signer is not compressed.
    const OneRecord compressed(RrType::rrsig, cat({rrsig_fixed(), Bytes{0xC0, 12}, sig}));
    EXPECT_EQ(rd::read_rrsig(compressed.rr()).error(),
              (WireError{Errc::compressed_in_rdata, compressed.at(18)}));
    EXPECT_EQ(rd::read(compressed.rr()).error().code, Errc::compressed_in_rdata);
    const OneRecord shorty(RrType::rrsig, Bytes(17, 0));
    EXPECT_EQ(rd::read_rrsig(shorty.rr()).error(), (WireError{Errc::rdata_length, shorty.at()}));
}

// --- NSEC, NSEC3 -----------------------------------------------------------------------------

TEST(Rdata, NsecBitmap) {
    // Window 0: A(1) NS(2) RRSIG(46) NSEC(47); window 1: CAA (257 = 256 + 1).
    const Bytes bitmap{0, 6, 0x60, 0, 0, 0, 0, 0x03, 1, 1, 0x40};
    const OneRecord r(RrType::nsec, cat({wire_name("b.example.com"), bitmap}));
    auto n = rd::read_nsec(r.rr());
    ASSERT_TRUE(n);
    EXPECT_EQ(n->next.to_text(), "b.example.com.");
    EXPECT_EQ(types_of(n->types), (std::vector<unsigned>{1, 2, 46, 47, 257}));
    EXPECT_TRUE(std::holds_alternative<rd::Nsec>(*rd::read(r.rr())));

    // Window 255, last bit (type 65535), and a 32-octet window.
    Bytes full{0, 32};
    full.resize(34, 0);
    full[33] = 0x01;  // type 255
    const Bytes last{255, 32};
    Bytes top = last;
    top.resize(34, 0);
    top[33] = 0x01;  // type 65535
    const OneRecord wide(RrType::nsec, cat({wire_name("c"), full, top}));
    auto w = rd::read_nsec(wide.rr());
    ASSERT_TRUE(w);
    EXPECT_EQ(types_of(w->types), (std::vector<unsigned>{255, 65535}));

    // No bitmap at all.
    const OneRecord none(RrType::nsec, wire_name("c"));
    auto e = rd::read_nsec(none.rr());
    ASSERT_TRUE(e);
    EXPECT_TRUE(types_of(e->types).empty());
}

TEST(Rdata, NsecBadBitmaps) {
    const Bytes next = wire_name("b");
    const auto at = static_cast<std::uint32_t>(next.size());
    struct Case {
        Bytes bitmap;
        std::uint32_t error_at;  // within the bitmap
        const char* what;
    };
    const std::vector<Case> cases{
        {{1, 1, 0x40, 0, 1, 0x40}, 3, "windows out of order"},
        {{0, 1, 0x40, 0, 1, 0x20}, 3, "window repeated"},
        {{0, 0}, 0, "zero-length window"},
        {cat({Bytes{0, 33}, Bytes(33, 0xFF)}), 0, "window longer than 32"},
        {{0, 2, 0x40, 0x00}, 0, "trailing zero octet"},
        {{0, 4, 0x40}, 0, "window runs past the end"},
        {{0}, 0, "window header cut"},
    };
    for (const Case& c : cases) {
        const OneRecord r(RrType::nsec, cat({next, c.bitmap}));
        auto n = rd::read_nsec(r.rr());
        ASSERT_FALSE(n) << c.what;
        EXPECT_EQ(n.error(), (WireError{Errc::bad_type_bitmap, r.at(at + c.error_at)})) << c.what;
    }
    // RFC 4034 §4.1.1: the next name is not compressed.
    const OneRecord ptr(RrType::nsec, Bytes{0xC0, 12, 0, 1, 0x40});
    EXPECT_EQ(rd::read_nsec(ptr.rr()).error(), (WireError{Errc::compressed_in_rdata, ptr.at()}));
}

TEST(Rdata, Nsec3) {
    const Bytes salt{0xAA, 0xBB, 0xCC, 0xDD};
    const Bytes hash(20, 0x42);
    const Bytes bitmap{0, 1, 0x40};  // A
    const OneRecord r(RrType::nsec3,
                      cat({Bytes{1, 1}, u16_bytes(10), Bytes{4}, salt, Bytes{20}, hash, bitmap}));
    auto n = rd::read_nsec3(r.rr());
    ASSERT_TRUE(n);
    EXPECT_EQ(n->hash_algorithm, 1);
    EXPECT_EQ(n->flags, 1);
    EXPECT_EQ(n->iterations, 10);
    EXPECT_EQ(Bytes(n->salt.begin(), n->salt.end()), salt);
    EXPECT_EQ(Bytes(n->next_hashed_owner.begin(), n->next_hashed_owner.end()), hash);
    EXPECT_EQ(types_of(n->types), (std::vector<unsigned>{1}));
    EXPECT_TRUE(std::holds_alternative<rd::Nsec3>(*rd::read(r.rr())));

    // Empty salt and empty bitmap (an empty non-terminal).
    const OneRecord nosalt(RrType::nsec3,
                           cat({Bytes{1, 0}, u16_bytes(0), Bytes{0}, Bytes{20}, hash}));
    auto e = rd::read_nsec3(nosalt.rr());
    ASSERT_TRUE(e);
    EXPECT_TRUE(e->salt.empty());
    EXPECT_TRUE(types_of(e->types).empty());

    // The next hashed owner cannot be empty.
    const OneRecord nohash(RrType::nsec3, cat({Bytes{1, 0}, u16_bytes(0), Bytes{0}, Bytes{0}}));
    EXPECT_EQ(rd::read_nsec3(nohash.rr()).error(), (WireError{Errc::rdata_length, nohash.at(5)}));
    // Salt longer than the RDATA.
    const OneRecord oversalt(RrType::nsec3, cat({Bytes{1, 0}, u16_bytes(0), Bytes{9, 1}}));
    EXPECT_EQ(rd::read_nsec3(oversalt.rr()).error(),
              (WireError{Errc::rdata_length, oversalt.at(4)}));
    // Bad bitmap.
    const OneRecord badmap(RrType::nsec3,
                           cat({Bytes{1, 0}, u16_bytes(0), Bytes{0}, Bytes{1, 7}, Bytes{0, 0}}));
    EXPECT_EQ(rd::read_nsec3(badmap.rr()).error(),
              (WireError{Errc::bad_type_bitmap, badmap.at(7)}));
}

// --- unknown types, RFC 2136 empty RDATA, cache
// ----------------------------------------------------

TEST(Rdata, UnknownTypeIsOpaque) {
    const Bytes data{0xDE, 0xAD, 0xBE, 0xEF, 0xC0, 12};  // a pointer-like pair is just data
    const OneRecord r(static_cast<RrType>(65280), data);
    auto any = rd::read(r.rr());
    ASSERT_TRUE(any);
    ASSERT_TRUE(std::holds_alternative<rd::Opaque>(*any));
    const auto& bytes = std::get<rd::Opaque>(*any).bytes;
    EXPECT_EQ(Bytes(bytes.begin(), bytes.end()), data);
    auto record = moat::wire::to_record(r.rr());
    ASSERT_TRUE(record);
    EXPECT_EQ(record->rdata, data);

    const OneRecord empty(static_cast<RrType>(65280), Bytes{});
    auto e = rd::read(empty.rr());
    ASSERT_TRUE(e);
    EXPECT_TRUE(std::get<rd::Opaque>(*e).bytes.empty());
}

TEST(Rdata, OtherKnownLayoutsAreCheckedButOpaque) {
    // HINFO: two character-strings.
    const OneRecord hinfo(RrType::hinfo, Bytes{3, 'C', 'P', 'U', 2, 'O', 'S'});
    auto h = rd::read(hinfo.rr());
    ASSERT_TRUE(h);
    EXPECT_TRUE(std::holds_alternative<rd::Opaque>(*h));
    const OneRecord bad_hinfo(RrType::hinfo, Bytes{3, 'C', 'P', 'U'});
    EXPECT_EQ(rd::read(bad_hinfo.rr()).error(), (WireError{Errc::rdata_length, bad_hinfo.at(4)}));
    // NAPTR: the replacement name may be compressed when reading (RFC 3597 §4).
    const Bytes naptr = cat({u16_bytes(100), u16_bytes(10), Bytes{1, 'u'}, Bytes{7}, str("E2U+sip"),
                             Bytes{0}, Bytes{0xC0, 12}});
    const OneRecord n(RrType::naptr, naptr);
    EXPECT_TRUE(rd::read(n.rr()));
    auto nr = moat::wire::to_record(n.rr());
    ASSERT_TRUE(nr);
    EXPECT_EQ(Bytes(nr->rdata.end() - 13, nr->rdata.end()), wire_name("example.com"));
    // KX (RFC 2230) is not among the decompress types: a pointer is an error.
    const OneRecord kx(RrType::kx, cat({u16_bytes(1), Bytes{0xC0, 12}}));
    EXPECT_EQ(rd::read(kx.rr()).error(), (WireError{Errc::compressed_in_rdata, kx.at(2)}));
}

TEST(Rdata, EmptyRdataOfClassNoneOrAnyIsAccepted) {
    // RFC 2136 §2.5.2/§2.5.3: deletions carry class ANY or NONE and no RDATA.
    for (const std::uint16_t rclass : {std::uint16_t{254}, std::uint16_t{255}}) {
        const OneRecord r(RrType::a, Bytes{}, "host.example.com", Section::authority, rclass, 0);
        auto any = rd::read(r.rr());
        ASSERT_TRUE(any) << rclass;
        EXPECT_TRUE(std::holds_alternative<rd::Opaque>(*any));
        auto record = moat::wire::to_record(r.rr());
        ASSERT_TRUE(record);
        EXPECT_TRUE(record->rdata.empty());
    }
    const OneRecord in(RrType::a, Bytes{}, "host.example.com", Section::authority, 1, 0);
    EXPECT_FALSE(rd::read(in.rr()));
}

TEST(Rdata, DecompressRdataIntoACallerBuffer) {
    const OneRecord r(RrType::mx, Bytes{0, 10, 4, 'm', 'a', 'i', 'l', 0xC0, 12});
    const Bytes want = cat({u16_bytes(10), wire_name("mail.example.com")});
    std::array<std::uint8_t, 64> out{};
    auto n = moat::wire::decompress_rdata(r.rr(), out);
    ASSERT_TRUE(n);
    ASSERT_EQ(*n, want.size());
    EXPECT_EQ(Bytes(out.begin(), out.begin() + static_cast<std::ptrdiff_t>(*n)), want);
    EXPECT_EQ(moat::wire::to_record(r.rr())->rdata, want);

    Bytes exact(want.size());
    EXPECT_TRUE(moat::wire::decompress_rdata(r.rr(), exact));
    EXPECT_EQ(exact, want);
    Bytes one_short(want.size() - 1);
    auto e = moat::wire::decompress_rdata(r.rr(), one_short);
    ASSERT_FALSE(e);
    EXPECT_EQ(e.error().code, Errc::no_space);

    // Layout errors come through unchanged.
    const OneRecord bad(RrType::mx, Bytes{0});
    EXPECT_EQ(moat::wire::decompress_rdata(bad.rr(), out).error(),
              (WireError{Errc::rdata_length, bad.at()}));
    // RFC 2136 deletions: nothing to write.
    const OneRecord del(RrType::mx, Bytes{}, "host.example.com", Section::authority, 254, 0);
    EXPECT_EQ(*moat::wire::decompress_rdata(del.rr(), std::span<std::uint8_t>()), 0U);
    // Types without names are copied as they are.
    const OneRecord txt(RrType::txt, Bytes{2, 'h', 'i'});
    ASSERT_EQ(*moat::wire::decompress_rdata(txt.rr(), out), 3U);
    EXPECT_EQ(Bytes(out.begin(), out.begin() + 3), (Bytes{2, 'h', 'i'}));
}

TEST(Rdata, SharedCacheGivesTheSameNames) {
    // Question example.com; NS ns1 -> 12, and a second NS pointing at the first one's RDATA.
    WireWriter w(1, 2, 0, 0);
    w.question("example.com", RrType::ns);
    w.ptr(12).rfields(RrType::ns, Bytes{3, 'n', 's', '1', 0xC0, 12});
    const std::size_t first_rdata = w.rdata_offset();
    w.ptr(12).rfields(RrType::ns,
                      Bytes{3, 'w', 'w', 'w', 0xC0, static_cast<unsigned char>(first_rdata)});
    const Bytes msg = w.take();
    auto view = MessageView::parse(msg);
    ASSERT_TRUE(view);
    auto range = view->answers();
    std::vector<std::string> with_cache;
    std::vector<std::string> without_cache;
    for (const RecordView& rr : range) {
        auto a = rd::read_name(rr, range.suffix_cache());
        auto b = rd::read_name(rr, nullptr);
        ASSERT_TRUE(a && b);
        with_cache.push_back(a->name.to_text() + std::to_string(a->name.length()));
        without_cache.push_back(b->name.to_text() + std::to_string(b->name.length()));
    }
    EXPECT_EQ(with_cache, without_cache);
    EXPECT_EQ(with_cache,
              (std::vector<std::string>{"ns1.example.com.17", "www.ns1.example.com.21"}));
}

}  // namespace
