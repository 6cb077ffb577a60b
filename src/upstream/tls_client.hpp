// The TLS client side of the encrypted upstreams: one context (TLS 1.2+, peer verification
// against the system CA store or a configured CA file), and per connection the checks that make
// it the server we meant: SNI and the certificate's name (or IP entry), and optionally the
// SHA-256 of its public key (a pin, for users who do not want to trust every CA).
#pragma once

#include <openssl/ssl.h>

#include <asio/ssl/context.hpp>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <tl/expected.hpp>
#include <vector>

namespace moat::upstream {

struct ServerAddress;

class TlsClientContext {
public:
    /// `ca_file` empty: the system store (/etc/ssl/certs, Debian's ca-certificates).
    static tl::expected<std::shared_ptr<TlsClientContext>, std::string> make(
        const std::string& ca_file);

    [[nodiscard]] asio::ssl::context& context() noexcept { return context_; }
    [[nodiscard]] const std::string& ca_file() const noexcept { return ca_file_; }

private:
    TlsClientContext() : context_(asio::ssl::context::tls_client) {}

    asio::ssl::context context_;
    std::string ca_file_;
};

/// Sets SNI, the name (or address) the certificate must carry and the ALPN protocol on a
/// connection about to shake hands.
void prepare_client(SSL* ssl, const ServerAddress& server, std::string_view alpn);

/// The sessions the server hands out on this connection are kept in `*slot` (to resume the
/// next connection with); the slot must outlive the connection.
void keep_sessions_in(SSL* ssl, std::shared_ptr<SSL_SESSION>* slot);

/// After the handshake: empty when the server's key matches one of `pins` (or there are none),
/// else what is wrong.
[[nodiscard]] std::string check_pins(SSL* ssl, const std::vector<std::string>& pins);

/// The base64 SHA-256 of a DER SubjectPublicKeyInfo (the pin format of HPKP and curl).
[[nodiscard]] std::string spki_sha256_base64(std::span<const unsigned char> der);

}  // namespace moat::upstream
