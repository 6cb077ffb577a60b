#include "encrypted_pool.hpp"

#include <algorithm>

#include "doh_upstream.hpp"
#include "dot_upstream.hpp"

namespace moat::upstream {

std::string EncryptedPool::configure(const Options& options) {
    bootstrap_.set_servers(options.bootstrap);
    timeout_ = options.timeout;
    std::string error;
    const bool encrypted =
        std::any_of(options.routes.begin(), options.routes.end(), [](const Route& r) {
            return std::any_of(r.servers.begin(), r.servers.end(), [](const ServerAddress& s) {
                return s.protocol == Protocol::tls || s.protocol == Protocol::https;
            });
        });
    if (!encrypted) {
        // No route names an encrypted server: no CA store either. Loading the system's
        // (about 140 certificates) costs the daemon about 2 MiB of resident memory.
        shutdown();
        tls_.reset();
        ca_file_.reset();
        return error;
    }
    if (options.tls_ca_file != ca_file_) {
        shutdown();  // every connection was verified against the old CAs
        auto made = TlsClientContext::make(options.tls_ca_file);
        if (made) {
            tls_ = std::move(*made);
        } else {
            tls_.reset();
            error = made.error();
        }
        ca_file_ = options.tls_ca_file;
    }
    // Servers no route names any more are closed; the others keep their connection.
    std::erase_if(upstreams_, [&](const std::shared_ptr<EncryptedUpstream>& u) {
        const bool kept =
            std::any_of(options.routes.begin(), options.routes.end(), [&](const Route& r) {
                return std::find(r.servers.begin(), r.servers.end(), u->server()) !=
                       r.servers.end();
            });
        if (!kept) {
            u->shutdown();
        }
        return !kept;
    });
    return error;
}

std::shared_ptr<EncryptedUpstream> EncryptedPool::get(const ServerAddress& server) {
    if (!tls_) {
        return nullptr;
    }
    for (const auto& u : upstreams_) {
        if (u->server() == server) {
            return u;
        }
    }
    std::shared_ptr<EncryptedUpstream> made;
    if (server.protocol == Protocol::tls) {
        made = std::make_shared<DotUpstream>(io_, server, tls_, bootstrap_, timeout_);
    } else {
        made = std::make_shared<DohUpstream>(io_, server, tls_, bootstrap_, timeout_);
    }
    upstreams_.push_back(made);
    return made;
}

void EncryptedPool::shutdown() {
    for (const auto& u : upstreams_) {
        u->shutdown();
    }
    upstreams_.clear();
}

}  // namespace moat::upstream
