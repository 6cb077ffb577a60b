// DNS over TLS to one upstream (RFC 7858): the connection is EncryptedUpstream's, the framing
// and the matching of answers to queries DotSession's.
#pragma once

#include "dot_session.hpp"
#include "encrypted_upstream.hpp"

namespace moat::upstream {

class DotUpstream final : public EncryptedUpstream {
public:
    using EncryptedUpstream::EncryptedUpstream;

private:
    [[nodiscard]] std::string_view alpn() const noexcept override { return "dot"; }
    bool on_connected(TlsStream& stream, std::string& why) override;
    bool send(Exchange& x) override;
    void on_bytes(std::span<const std::uint8_t> bytes) override;
    std::vector<Exchange> take_in_flight() override;
    [[nodiscard]] bool in_flight() const noexcept override { return session_.in_flight(); }

    DotSession session_;
};

}  // namespace moat::upstream
