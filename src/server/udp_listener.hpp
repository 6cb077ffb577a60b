// One UDP socket: receive a datagram, hand it to the QueryPath, send the answer to the sender.
#pragma once

#include <asio/io_context.hpp>
#include <asio/ip/udp.hpp>
#include <string>
#include <tl/expected.hpp>
#include <vector>

#include "moat/server/query_path.hpp"

namespace moat::server {

class UdpListener {
public:
    UdpListener(asio::io_context& io, asio::ip::udp::endpoint endpoint, QueryPath& path);
    tl::expected<void, std::string> start();
    /// Stops receiving; the socket stays open so answers in flight can still be sent.
    void stop_receiving();

private:
    void receive();
    void send(std::span<const std::uint8_t> answer, const asio::ip::udp::endpoint& to);

    asio::ip::udp::socket socket_;
    asio::ip::udp::endpoint endpoint_;
    asio::ip::udp::endpoint sender_;
    QueryPath& path_;
    std::vector<std::uint8_t> buffer_;
    bool receiving_ = true;
};

}  // namespace moat::server
