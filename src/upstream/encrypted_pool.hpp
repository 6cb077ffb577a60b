// The encrypted upstreams (DoT, DoH) of every route, one per configured server, so queries of
// all routes and flights share its connection. Kept across reconfigurations for the servers
// that stay (their connections and TLS sessions with them).
#pragma once

#include <asio/io_context.hpp>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "bootstrap.hpp"
#include "encrypted_upstream.hpp"
#include "moat/upstream/options.hpp"
#include "tls_client.hpp"

namespace moat::upstream {

class EncryptedPool {
public:
    explicit EncryptedPool(asio::io_context& io) : io_(io), bootstrap_(io) {}
    ~EncryptedPool() { shutdown(); }
    EncryptedPool(const EncryptedPool&) = delete;
    EncryptedPool& operator=(const EncryptedPool&) = delete;
    EncryptedPool(EncryptedPool&&) = delete;
    EncryptedPool& operator=(EncryptedPool&&) = delete;

    /// Takes the new options: bootstrap servers, CA file, and which servers exist. The CA store
    /// is loaded only while some route names an encrypted server. The error (a CA file that
    /// does not load) leaves encrypted upstreams failing their queries.
    std::string configure(const Options& options);
    /// The upstream for `server` (created on first use), or null when TLS is not available.
    std::shared_ptr<EncryptedUpstream> get(const ServerAddress& server);
    void shutdown();

private:
    asio::io_context& io_;
    BootstrapResolver bootstrap_;
    std::shared_ptr<TlsClientContext> tls_;
    std::optional<std::string> ca_file_;  ///< the one tls_ was made from
    std::chrono::milliseconds timeout_{2000};
    std::vector<std::shared_ptr<EncryptedUpstream>> upstreams_;
};

}  // namespace moat::upstream
