// A blocked name's answer written directly is the one the message builder writes, octet for
// octet, in every case it takes; the cases it declines (other modes, answers that do not fit)
// are left to the builder, and write_blocked() gives the builder's answer for all of them.
#include <gtest/gtest.h>

#include <array>
#include <string>
#include <vector>

#include "moat/wire/message_view.hpp"
#include "moat/wire/name.hpp"
#include "responses.hpp"

namespace moat::engine {
namespace {

using Bytes = std::vector<std::uint8_t>;

Bytes written(std::size_t n, const std::vector<std::uint8_t>& out) {
    return {out.begin(), out.begin() + static_cast<std::ptrdiff_t>(n)};
}

TEST(BlockedAnswer, WrittenDirectlyEqualsTheBuildersAnswer) {
    const std::string long_label(63, 'x');
    const std::vector<wire::Name> names{
        wire::Name::from_text("Ads.Example.COM").value(), wire::Name::from_text("t").value(),
        wire::Name{},  // the root: a catch-all regex rule can block it
        wire::Name::from_text(long_label + "." + long_label + "." + long_label + "." +
                              std::string(61, 'y'))
            .value(),  // 255 octets in wire form
    };
    const std::vector<BlockingMode> modes{BlockingMode::null_ip, BlockingMode::custom,
                                          BlockingMode::nxdomain, BlockingMode::refused};
    const std::vector<wire::RrType> types{wire::RrType::a, wire::RrType::aaaa, wire::RrType::mx,
                                          wire::RrType::any};
    const std::vector<std::string> ede_texts{"", "ads", std::string(200, 'L')};
    const std::vector<std::size_t> limits{wire::kMaxMessageSize, 1232, 512, 300, 40, 11};

    std::size_t direct = 0;
    std::size_t declined = 0;
    std::vector<std::uint8_t> a(wire::kMaxMessageSize);
    std::vector<std::uint8_t> b(wire::kMaxMessageSize);
    for (const wire::Name& name : names) {
        for (const BlockingMode mode : modes) {
            for (const wire::RrType qtype : types) {
                for (const wire::RrClass qclass : {wire::RrClass::in, wire::RrClass::ch}) {
                    for (int edns = 0; edns < 3; ++edns) {
                        for (const std::string& text : ede_texts) {
                            for (const std::size_t limit : limits) {
                                BlockingOptions blocking;
                                blocking.mode = mode;
                                blocking.custom_ipv4 = IpAddress::v4_of(192, 0, 2, 7);
                                blocking.custom_ipv6.bytes[0] = 0x20;
                                blocking.custom_ipv6.bytes[15] = 9;
                                blocking.ttl = 3600 + static_cast<std::uint32_t>(limit);
                                ReplyTo to;
                                to.id = static_cast<std::uint16_t>(0xBEEF + limit);
                                to.query_flags = limit % 2 == 0 ? 0x0110 : 0x0000;  // RD, CD
                                to.echo_opcode = limit == 300;
                                to.qname = name.wire();
                                to.qtype = qtype;
                                to.qclass = qclass;
                                to.edns.present = edns > 0;
                                to.edns.dnssec_ok = edns == 2;
                                to.our_udp_size = edns == 2 ? 400 : 1232;
                                to.limit = limit;
                                to.ede_text = text;
                                const std::size_t n = write_blocked_directly(a, to, blocking);
                                const std::size_t m = write_blocked_built(b, to, blocking);
                                if (n == 0) {
                                    ++declined;
                                } else {
                                    ++direct;
                                    ASSERT_EQ(written(n, a), written(m, b))
                                        << name.to_text() << " type " << wire::to_u16(qtype)
                                        << " edns " << edns << " text " << text.size() << " limit "
                                        << limit;
                                    ASSERT_TRUE(wire::MessageView::parse(written(n, a)));
                                }
                                const std::size_t w = write_blocked(a, to, blocking);
                                ASSERT_EQ(written(w, a), written(m, b));
                            }
                        }
                    }
                }
            }
        }
    }
    // Both kinds of case occur: the address modes at the usual limits are written directly;
    // the NXDOMAIN and REFUSED modes and answers over a small limit go to the builder.
    EXPECT_GT(direct, 1000U);
    EXPECT_GT(declined, 1000U);
}

TEST(BlockedAnswer, AnAddressAnswerPointsAtTheQuestionsName) {
    const wire::Name name = wire::Name::from_text("Tracker.Example.NET").value();
    ReplyTo to;
    to.qname = name.wire();
    to.qtype = wire::RrType::a;
    to.qclass = wire::RrClass::in;
    to.limit = 512;
    BlockingOptions blocking;
    std::vector<std::uint8_t> out(512);
    const std::size_t n = write_blocked_directly(out, to, blocking);
    ASSERT_EQ(n, wire::kHeaderSize + name.length() + 4 + 12 + 4);
    const std::size_t record = wire::kHeaderSize + name.length() + 4;
    EXPECT_EQ(out[record], 0xC0);
    EXPECT_EQ(out[record + 1], wire::kHeaderSize);
    EXPECT_EQ(written(n, out).back(), 0) << "0.0.0.0";
}

}  // namespace
}  // namespace moat::engine
