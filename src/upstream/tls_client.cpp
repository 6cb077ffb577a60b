#include "tls_client.hpp"

#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/sha.h>
#include <openssl/x509v3.h>

#include <array>

#include "moat/core/ip.hpp"
#include "moat/upstream/options.hpp"

namespace moat::upstream {
namespace {

/// The SSL ex_data index of a connection's session slot. (Not the app data: asio's SSL engine
/// owns that and deletes it with the stream.)
int session_slot_index() {
    static const int kIndex = SSL_get_ex_new_index(0, nullptr, nullptr, nullptr, nullptr);
    return kIndex;
}

/// OpenSSL hands over each session (TLS 1.3: each ticket) the server gives; the connection's
/// owner keeps a copy of the newest to resume with. A copy, because OpenSSL marks the
/// connection's own session not resumable when the connection ends without close_notify, which
/// is how most servers close an idle DNS connection.
int remember_session(SSL* ssl, SSL_SESSION* session) {
    auto* slot =
        static_cast<std::shared_ptr<SSL_SESSION>*>(SSL_get_ex_data(ssl, session_slot_index()));
    if (slot != nullptr) {
        if (SSL_SESSION* copy = SSL_SESSION_dup(session)) {
            *slot = std::shared_ptr<SSL_SESSION>(copy, SSL_SESSION_free);
        }
    }
    return 0;  // the original stays OpenSSL's
}

}  // namespace

tl::expected<std::shared_ptr<TlsClientContext>, std::string> TlsClientContext::make(
    const std::string& ca_file) {
    std::shared_ptr<TlsClientContext> c(new TlsClientContext());
    c->ca_file_ = ca_file;
    SSL_CTX* native = c->context_.native_handle();
    SSL_CTX_set_min_proto_version(native, TLS1_2_VERSION);
    SSL_CTX_set_options(native, SSL_OP_NO_RENEGOTIATION | SSL_OP_NO_COMPRESSION);
    SSL_CTX_set_verify(native, SSL_VERIFY_PEER, nullptr);
    SSL_CTX_set_session_cache_mode(native,
                                   SSL_SESS_CACHE_CLIENT | SSL_SESS_CACHE_NO_INTERNAL_STORE);
    SSL_CTX_sess_set_new_cb(native, remember_session);
    ERR_clear_error();
    const int loaded = ca_file.empty()
                           ? SSL_CTX_set_default_verify_paths(native)
                           : SSL_CTX_load_verify_locations(native, ca_file.c_str(), nullptr);
    if (loaded != 1) {
        std::array<char, 256> text{};
        ERR_error_string_n(ERR_get_error(), text.data(), text.size());
        ERR_clear_error();
        return tl::unexpected("upstream.tls_ca_file " + ca_file + ": " + text.data());
    }
    return c;
}

void prepare_client(SSL* ssl, const ServerAddress& server, std::string_view alpn) {
    X509_VERIFY_PARAM* param = SSL_get0_param(ssl);
    // A name given as an address is checked against the certificate's IP entries and sends no
    // SNI (RFC 6066 §3: literal addresses are not allowed there).
    const bool is_address = !server.resolve && server.name == server.address.to_text();
    if (is_address) {
        X509_VERIFY_PARAM_set1_ip_asc(param, server.name.c_str());
    } else {
        // SSL_set_tlsext_host_name() spelled out: the macro casts in the old style.
        SSL_ctrl(ssl, SSL_CTRL_SET_TLSEXT_HOSTNAME, TLSEXT_NAMETYPE_host_name,
                 const_cast<char*>(server.name.c_str()));  // OpenSSL only reads it
        X509_VERIFY_PARAM_set_hostflags(param, X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
        X509_VERIFY_PARAM_set1_host(param, server.name.c_str(), server.name.size());
    }
    std::string wire(1, static_cast<char>(alpn.size()));
    wire += alpn;
    SSL_set_alpn_protos(ssl, reinterpret_cast<const unsigned char*>(wire.data()),
                        static_cast<unsigned>(wire.size()));
}

void keep_sessions_in(SSL* ssl, std::shared_ptr<SSL_SESSION>* slot) {
    SSL_set_ex_data(ssl, session_slot_index(), slot);
}

std::string spki_sha256_base64(std::span<const unsigned char> der) {
    std::array<unsigned char, SHA256_DIGEST_LENGTH> digest{};
    SHA256(der.data(), der.size(), digest.data());
    std::array<unsigned char, 4 * ((SHA256_DIGEST_LENGTH + 2) / 3) + 1> text{};
    const int n = EVP_EncodeBlock(text.data(), digest.data(), SHA256_DIGEST_LENGTH);
    return {reinterpret_cast<const char*>(text.data()), static_cast<std::size_t>(n)};
}

std::string check_pins(SSL* ssl, const std::vector<std::string>& pins) {
    if (pins.empty()) {
        return {};
    }
    X509* cert = SSL_get0_peer_certificate(ssl);
    if (cert == nullptr) {
        return "no certificate to check the pin against";
    }
    unsigned char* der = nullptr;
    const int length = i2d_PUBKEY(X509_get0_pubkey(cert), &der);
    if (length <= 0) {
        return "cannot read the certificate's public key";
    }
    const std::string actual =
        spki_sha256_base64(std::span<const unsigned char>(der, static_cast<std::size_t>(length)));
    OPENSSL_free(der);
    for (const std::string& pin : pins) {
        if (pin == actual) {
            return {};
        }
    }
    return "the certificate's key (sha256 " + actual + ") matches no pin";
}

}  // namespace moat::upstream
