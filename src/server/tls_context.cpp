#include "tls_context.hpp"

#include <openssl/err.h>

#include <array>
#include <cstring>

namespace moat::server {
namespace {

// ALPN protocol lists in wire form: each name preceded by its length (RFC 7301 §3.1).
constexpr std::string_view kDotProtocols{
    "\x03"
    "dot"};
constexpr std::string_view kDohProtocols{
    "\x02"
    "h2"
    "\x08"
    "http/1.1"};

/// The first of our protocols (in our order of preference) that the client offered. A client
/// offering none of them is let through without ALPN (NOACK) rather than failed: kdig and
/// older stub resolvers send no ALPN or other names, and RFC 7858 predates ALPN "dot".
int select_alpn(SSL* /*ssl*/, const unsigned char** out, unsigned char* out_length,
                const unsigned char* offered, unsigned int offered_length, void* arg) {
    const auto* ours = static_cast<const std::string_view*>(arg);
    for (std::size_t i = 0; i < ours->size(); i += 1U + static_cast<unsigned char>((*ours)[i])) {
        const auto length = static_cast<unsigned char>((*ours)[i]);
        const char* name = ours->data() + i + 1;
        for (unsigned int j = 0; j < offered_length; j += 1U + offered[j]) {
            if (offered[j] == length && j + 1U + length <= offered_length &&
                std::memcmp(offered + j + 1, name, length) == 0) {
                *out = offered + j + 1;
                *out_length = length;
                return SSL_TLSEXT_ERR_OK;
            }
        }
    }
    return SSL_TLSEXT_ERR_NOACK;
}

/// OpenSSL's most recent error as text, after `what`.
std::string openssl_error(const std::string& what) {
    std::array<char, 256> text{};
    const unsigned long code = ERR_get_error();
    ERR_clear_error();
    if (code == 0) {
        return what;
    }
    ERR_error_string_n(code, text.data(), text.size());
    return what + ": " + text.data();
}

tl::expected<std::shared_ptr<asio::ssl::context>, std::string> make_context(
    const std::string& certificate, const std::string& private_key,
    const std::string_view* protocols) {
    auto ctx = std::make_shared<asio::ssl::context>(asio::ssl::context::tls_server);
    SSL_CTX* native = ctx->native_handle();
    SSL_CTX_set_min_proto_version(native, TLS1_2_VERSION);
    // No renegotiation (a TLS 1.2 DoS vector) and a fresh ECDHE key per handshake.
    SSL_CTX_set_options(native, SSL_OP_NO_RENEGOTIATION | SSL_OP_SINGLE_ECDH_USE |
                                    SSL_OP_CIPHER_SERVER_PREFERENCE | SSL_OP_NO_COMPRESSION);
    // Session resumption through tickets (stateless for us): phones reconnect often.
    SSL_CTX_set_session_cache_mode(native, SSL_SESS_CACHE_SERVER);
    ERR_clear_error();
    if (SSL_CTX_use_certificate_chain_file(native, certificate.c_str()) != 1) {
        return tl::unexpected(openssl_error("tls_certificate " + certificate));
    }
    if (SSL_CTX_use_PrivateKey_file(native, private_key.c_str(), SSL_FILETYPE_PEM) != 1) {
        return tl::unexpected(openssl_error("tls_private_key " + private_key));
    }
    if (SSL_CTX_check_private_key(native) != 1) {
        return tl::unexpected(
            openssl_error("tls_private_key " + private_key + " does not match " + certificate));
    }
    // The callback's argument points at a constant with static storage.
    SSL_CTX_set_alpn_select_cb(native, select_alpn,
                               const_cast<std::string_view*>(protocols));  // NOLINT
    return ctx;
}

}  // namespace

tl::expected<void, std::string> TlsContexts::load(const std::string& certificate,
                                                  const std::string& private_key) {
    static constexpr std::string_view kDot = kDotProtocols;
    static constexpr std::string_view kDoh = kDohProtocols;
    auto dot = make_context(certificate, private_key, &kDot);
    if (!dot) {
        return tl::unexpected(dot.error());
    }
    auto doh = make_context(certificate, private_key, &kDoh);
    if (!doh) {
        return tl::unexpected(doh.error());
    }
    dot_ = std::move(*dot);
    doh_ = std::move(*doh);
    return {};
}

std::string_view negotiated_alpn(const SSL* ssl) noexcept {
    const unsigned char* name = nullptr;
    unsigned int length = 0;
    SSL_get0_alpn_selected(ssl, &name, &length);
    return name == nullptr ? std::string_view{}
                           : std::string_view(reinterpret_cast<const char*>(name), length);
}

}  // namespace moat::server
