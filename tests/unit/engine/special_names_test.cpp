// Special-use names answered by the engine itself and never forwarded: the Firefox DoH canary,
// iCloud Private Relay (configurable), DDR's resolver.arpa and mDNS's .local; names that only
// look alike are forwarded.
#include <gtest/gtest.h>

#include "engine_fixtures.hpp"

namespace moat::engine {
namespace {

using test::Harness;
using wire::Rcode;
using wire::RrType;

void expect_answered(Harness& h, const char* qname, Rcode rcode, RrType qtype = RrType::a) {
    const Decision d = h.decide({.qname = qname, .qtype = qtype});
    ASSERT_EQ(d.action, Action::respond) << qname;
    EXPECT_EQ(d.outcome, Outcome::local) << qname;
    const auto a = h.answer();
    EXPECT_EQ(a.rcode, static_cast<unsigned>(rcode)) << qname;
    EXPECT_TRUE(a.records.empty()) << qname;
    EXPECT_TRUE(a.header.aa()) << qname;
    EXPECT_EQ(a.qname, std::string(qname) + ".") << "the client's spelling";
}

void expect_forwarded(Harness& h, const char* qname) {
    EXPECT_EQ(h.decide({.qname = qname}).action, Action::forward) << qname;
}

TEST(EngineSpecialNames, FirefoxCanaryIsNxdomain) {
    Harness h;
    expect_answered(h, "use-application-dns.net", Rcode::nxdomain);
    expect_answered(h, "Use-Application-DNS.NET", Rcode::nxdomain);
    expect_forwarded(h, "www.use-application-dns.net");
}

TEST(EngineSpecialNames, ICloudPrivateRelayIsNxdomainUnlessTurnedOff) {
    Harness h;
    expect_answered(h, "mask.icloud.com", Rcode::nxdomain, RrType::aaaa);
    expect_answered(h, "mask-h2.icloud.com", Rcode::nxdomain);
    expect_forwarded(h, "www.icloud.com");

    Harness off;
    off.options.block_icloud_private_relay = false;
    expect_forwarded(off, "mask.icloud.com");
    expect_answered(off, "use-application-dns.net", Rcode::nxdomain);
}

TEST(EngineSpecialNames, ResolverArpaIsNodata) {
    Harness h;
    expect_answered(h, "_dns.resolver.arpa", Rcode::noerror, static_cast<RrType>(64));  // SVCB
    expect_answered(h, "resolver.arpa", Rcode::noerror);
    expect_forwarded(h, "resolver.arpa.example");
}

TEST(EngineSpecialNames, MdnsNamesStayHomeButLocalRecordsAnswer) {
    Harness h;
    h.local.add_address(test::name("printer.local"), test::v4(192, 168, 1, 20));
    expect_answered(h, "macbook.local", Rcode::nxdomain);
    expect_answered(h, "local", Rcode::nxdomain);
    const Decision d = h.decide({.qname = "printer.local"});
    EXPECT_EQ(d.outcome, Outcome::local);
    ASSERT_EQ(h.answer().records.size(), 1U);
    expect_forwarded(h, "local.example.com");
    expect_forwarded(h, "mylocal");
}

TEST(EngineSpecialNames, AnsweredBeforeTheBlocklist) {
    Harness h;
    h.block("use-application-dns.net\nmacbook.local\n");
    expect_answered(h, "use-application-dns.net", Rcode::nxdomain);
    expect_answered(h, "macbook.local", Rcode::nxdomain);
}

}  // namespace
}  // namespace moat::engine
