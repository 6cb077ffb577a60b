// DNS over HTTPS to one upstream (RFC 8484) over the one TLS connection EncryptedUpstream keeps
// (ALPN h2; servers that speak only HTTP/1.1 are not used). The protocol, each query a POST on
// its own HTTP/2 stream, is DohSession's; this class connects it to the connection.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "doh_session.hpp"
#include "encrypted_upstream.hpp"

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
    [[nodiscard]] bool in_flight() const noexcept override { return session_.in_flight(); }

    void flush();

    DohSession session_;
};

}  // namespace moat::upstream
