// DNS over TLS to one upstream (RFC 7858): queries framed with their two-octet length (RFC 1035
// §4.2.2) and pipelined on the one connection; answers matched by ID, which is unique among the
// queries on the connection (a clashing one is renumbered and given back its own in the answer).
#pragma once

#include <cstdint>
#include <map>
#include <vector>

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
    [[nodiscard]] bool in_flight() const noexcept override { return !sent_.empty(); }

    std::map<std::uint16_t, Exchange> sent_;  ///< by the ID used on the connection
    std::vector<std::uint8_t> input_;
    std::uint16_t next_id_ = 0;
};

}  // namespace moat::upstream
