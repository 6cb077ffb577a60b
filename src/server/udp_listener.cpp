#include "udp_listener.hpp"

#include <spdlog/spdlog.h>

#include <asio/ip/v6_only.hpp>

#include "moat/upstream/address.hpp"

namespace moat::server {

using upstream::from_asio;
using upstream::to_asio;

UdpListener::UdpListener(asio::io_context& io, asio::ip::udp::endpoint endpoint, QueryPath& path)
    : socket_(io), endpoint_(std::move(endpoint)), path_(path), buffer_(65535) {}

tl::expected<void, std::string> UdpListener::start() {
    std::error_code ec;
    socket_.open(endpoint_.protocol(), ec);
    if (!ec && endpoint_.address().is_v6()) {
        socket_.set_option(asio::ip::v6_only(true), ec);  // [::] and 0.0.0.0 side by side
    }
    if (!ec) {
        // Room for bursts; the kernel caps it at net.core.rmem_max.
        socket_.set_option(asio::socket_base::receive_buffer_size(4 << 20), ec);
        ec.clear();
        socket_.bind(endpoint_, ec);
    }
    if (ec) {
        return tl::unexpected("udp " + endpoint_.address().to_string() + ":" +
                              std::to_string(endpoint_.port()) + ": " + ec.message());
    }
    receive();
    return {};
}

void UdpListener::stop_receiving() {
    receiving_ = false;
    std::error_code ignored;
    socket_.cancel(ignored);
}

void UdpListener::send(std::span<const std::uint8_t> answer, const asio::ip::udp::endpoint& to) {
    if (answer.empty()) {
        return;
    }
    std::error_code ec;
    socket_.send_to(asio::buffer(answer.data(), answer.size()), to, 0, ec);
    if (ec) {
        spdlog::debug("udp: cannot answer {}: {}", to.address().to_string(), ec.message());
    }
}

void UdpListener::receive() {
    socket_.async_receive_from(
        asio::buffer(buffer_), sender_, [this](const std::error_code& ec, std::size_t n) {
            if (!receiving_ || ec == asio::error::operation_aborted) {
                return;
            }
            if (!ec) {
                const engine::Client client{from_asio(sender_.address()), sender_.port(),
                                            engine::Transport::udp};
                const auto handled =
                    path_.handle(std::span(buffer_.data(), n), client, [this, to = sender_] {
                        return ReplyFn(
                            [this, to](std::span<const std::uint8_t> answer) { send(answer, to); });
                    });
                if (!handled.deferred) {
                    send(handled.answer, sender_);
                }
            } else {
                spdlog::debug("udp: receive error: {}", ec.message());
            }
            receive();
        });
}

}  // namespace moat::server
