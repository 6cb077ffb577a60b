// Resolves the names of encrypted upstreams ("https://dns.quad9.net/dns-query") through the
// configured bootstrap servers over plain DNS, never through the system's resolver: dnsmoat is
// usually the system's resolver itself, and asking itself would wait on its own upstream.
// Answers are kept for their TTL (at least a minute); A first, AAAA when there is no A.
#pragma once

#include <asio/io_context.hpp>
#include <chrono>
#include <functional>
#include <map>
#include <string>
#include <tl/expected.hpp>
#include <vector>

#include "moat/core/ip.hpp"
#include "moat/upstream/options.hpp"

namespace moat::upstream {

class BootstrapResolver {
public:
    using Done = std::function<void(const tl::expected<IpAddress, std::string>&)>;

    explicit BootstrapResolver(asio::io_context& io) : io_(io) {}

    void set_servers(std::vector<ServerAddress> servers) { servers_ = std::move(servers); }
    /// Calls `done` later (never inside this call) with an address of `name`, or why not.
    void resolve(const std::string& name, std::chrono::milliseconds timeout, Done done);

private:
    struct Known {
        IpAddress address;
        std::chrono::steady_clock::time_point expires;
    };

    void ask(const std::string& name, std::size_t server, std::uint16_t qtype,
             std::chrono::milliseconds timeout, Done done);

    asio::io_context& io_;
    std::vector<ServerAddress> servers_;
    std::map<std::string, Known> known_;
};

}  // namespace moat::upstream
