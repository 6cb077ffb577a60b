// The pool of encrypted upstreams loads a CA store only while some route names a DoT or DoH
// server: a daemon forwarding plain DNS holds no certificates (about 2 MiB resident for the
// system's store) and is not bothered by a CA file it never uses.
#include "encrypted_pool.hpp"

#include <gtest/gtest.h>

#include <asio/io_context.hpp>
#include <string>

#include "moat/upstream/options.hpp"

namespace moat::upstream {
namespace {

ServerAddress plain() { return {IpAddress::v4_of(127, 0, 0, 1), 5300}; }

ServerAddress dot() {
    ServerAddress s(IpAddress::v4_of(127, 0, 0, 1), 853);
    s.protocol = Protocol::tls;
    s.name = "dns.test";
    return s;
}

Options with(ServerAddress server, std::string ca_file = {}) {
    Options o;
    o.routes = {Route{{std::move(server)}}};
    o.tls_ca_file = std::move(ca_file);
    return o;
}

TEST(EncryptedPool, PlainServersOnlyLoadNoCaStoreAndNeedNoCaFile) {
    asio::io_context io;
    EncryptedPool pool(io);
    EXPECT_EQ(pool.configure(with(plain(), "/nonexistent/ca.pem")), "");
    EXPECT_EQ(pool.get(dot()), nullptr);
}

TEST(EncryptedPool, AnEncryptedServerLoadsTheCaFileAndReportsABadOne) {
    asio::io_context io;
    EncryptedPool pool(io);
    const std::string error = pool.configure(with(dot(), "/nonexistent/ca.pem"));
    EXPECT_NE(error.find("upstream.tls_ca_file /nonexistent/ca.pem"), std::string::npos) << error;
    EXPECT_EQ(pool.get(dot()), nullptr);
}

TEST(EncryptedPool, TheStoreComesWithTheFirstEncryptedServerAndGoesWithTheLast) {
    asio::io_context io;
    EncryptedPool pool(io);
    ASSERT_EQ(pool.configure(with(plain())), "");
    EXPECT_EQ(pool.get(dot()), nullptr);
    ASSERT_EQ(pool.configure(with(dot())), "");  // the system's CA store
    const auto upstream = pool.get(dot());
    ASSERT_NE(upstream, nullptr);
    EXPECT_EQ(pool.get(dot()), upstream);  // one per server
    ASSERT_EQ(pool.configure(with(plain())), "");
    EXPECT_EQ(pool.get(dot()), nullptr);
}

}  // namespace
}  // namespace moat::upstream
