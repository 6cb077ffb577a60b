// DNS over HTTPS to one upstream (RFC 8484): each query a POST of application/dns-message on its
// own stream of the one HTTP/2 connection (ALPN h2; servers that speak only HTTP/1.1 are not
// used). The query goes out with ID 0, as §4.1 recommends for HTTP caches, and the answer gets
// the caller's ID back.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "encrypted_upstream.hpp"
#include "moat/http/h2_client_session.hpp"

namespace moat::upstream {

class DohUpstream final : public EncryptedUpstream {
public:
    using EncryptedUpstream::EncryptedUpstream;

private:
    [[nodiscard]] std::string_view alpn() const noexcept override { return "h2"; }
    bool on_connected(TlsStream& stream, std::string& why) override;
    bool send(Exchange& x) override;
    void on_bytes(std::span<const std::uint8_t> bytes) override;
    std::vector<Exchange> take_in_flight() override;
    [[nodiscard]] bool in_flight() const noexcept override { return !sent_.empty(); }

    void on_response(std::uint32_t stream, const http::H2Response& response);
    void flush();

    std::unique_ptr<http::H2ClientSession> h2_;
    std::map<std::uint32_t, Exchange> sent_;  ///< by stream
    std::string authority_;
    bool receiving_ = false;
};

}  // namespace moat::upstream
