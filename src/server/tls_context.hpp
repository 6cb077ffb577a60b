// The TLS server contexts of the DoT and DoH listeners: certificate chain and key from PEM files,
// TLS 1.2 and 1.3 only, and ALPN ("dot" for DoT, RFC 7858; "h2" then "http/1.1" for DoH,
// RFC 8484). A reload builds new contexts; connections already open keep the one they started
// with (they hold a shared_ptr), so a renewed certificate never breaks a session.
#pragma once

#include <openssl/ssl.h>

#include <asio/ssl/context.hpp>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <tl/expected.hpp>

namespace moat::server {

/// Which ALPN protocols a context offers.
enum class TlsService : std::uint8_t { dot, doh };

/// The contexts new connections get.
class TlsContexts {
public:
    /// Reads `certificate` (PEM chain) and `private_key` (PEM) and builds a context per service;
    /// only when both load are they swapped in. The error names the file and what OpenSSL said.
    tl::expected<void, std::string> load(const std::string& certificate,
                                         const std::string& private_key);

    [[nodiscard]] bool loaded() const noexcept { return dot_ != nullptr; }
    [[nodiscard]] std::shared_ptr<asio::ssl::context> current(TlsService s) const noexcept {
        return s == TlsService::dot ? dot_ : doh_;
    }

private:
    std::shared_ptr<asio::ssl::context> dot_;
    std::shared_ptr<asio::ssl::context> doh_;
};

/// The ALPN protocol the handshake settled on ("" when the client offered none we speak).
[[nodiscard]] std::string_view negotiated_alpn(const SSL* ssl) noexcept;

}  // namespace moat::server
