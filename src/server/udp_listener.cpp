#include "udp_listener.hpp"

#include <asio/ip/v6_only.hpp>
#include <asio/post.hpp>
#include <cerrno>
#include <cstring>
#include <optional>

#include "datagram_client.hpp"
#include "moat/core/log.hpp"
#include "socket_family.hpp"

namespace moat::server {

UdpListener::UdpListener(asio::io_context& io, asio::ip::udp::endpoint endpoint, QueryPath& path)
    : io_(io),
      turn_end_(upstream::TurnEnd::of(io)),
      socket_(io),
      readable_(socket_,
                [this](const std::error_code& ec) {
                    if (!receiving_ || ec == asio::error::operation_aborted) {
                        return;
                    }
                    if (ec) {
                        log::debug("udp: wait error: {}", ec.message());
                    }
                    drain();
                }),
      endpoint_(std::move(endpoint)),
      path_(path),
      in_(kBatch, kInSlotBytes),
      out_(kBatch * kOutSlotBytes),
      flush_at_turn_end_(turn_end_, [this] { flush_answers(); }) {}

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
    if (!ec) {
        socket_.non_blocking(true, ec);  // recvmmsg/sendmmsg below must never block the loop
    }
    if (ec) {
        return tl::unexpected("udp " + endpoint_.address().to_string() + ":" +
                              std::to_string(endpoint_.port()) + ": " + ec.message());
    }
    readable_.wait_after(in_);
    return {};
}

tl::expected<void, std::string> UdpListener::adopt(int fd) {
    const auto family = inet_family(fd);
    if (!family) {
        return tl::unexpected("inherited socket " + std::to_string(fd) +
                              " is not a bound IPv4 or IPv6 socket");
    }
    std::error_code ec;
    socket_.assign(protocol_of<asio::ip::udp>(*family), fd, ec);
    if (!ec) {
        endpoint_ = socket_.local_endpoint(ec);
    }
    if (!ec) {
        socket_.non_blocking(true, ec);
    }
    if (ec) {
        return tl::unexpected("inherited udp socket " + std::to_string(fd) + ": " + ec.message());
    }
    readable_.wait_after(in_);
    return {};
}

void UdpListener::stop_receiving() {
    receiving_ = false;
    std::error_code ignored;
    socket_.cancel(ignored);
}

void UdpListener::drain() {
    turn_end_.in_batch([this] { drain_batches(); });
}

void UdpListener::drain_batches() {
    if (!receiving_) {
        return;
    }
    for (std::size_t turn = 0; turn < kBatchesPerTurn; ++turn) {
        const std::size_t n = in_.receive(socket_.native_handle(), "udp");
        if (n > 0) {
            // One clock read for the whole batch as it comes, one as its answers leave.
            const QueryPath::Arrival arrival = path_.batch_arrival_now();
            for (std::size_t i = 0; i < n; ++i) {
                handle(i, arrival);
            }
            path_.end_batch(arrival);
        }
        flush_answers();
        if (n < kBatch) {
            readable_.wait_after(in_);  // emptied, or a failed read
            return;
        }
    }
    // Still datagrams waiting after a full turn: let timers, TCP and upstream answers run,
    // then continue. (Waiting for readiness instead could stall: the poller reports edges.)
    asio::post(io_, [this] { drain(); });
}

void UdpListener::handle(std::size_t slot, const QueryPath::Arrival& arrival) {
    if (!read_datagram_client(in_.source(slot), in_.source_length(slot), client_)) {
        return;
    }
    // Only a query that goes upstream needs its sender as an endpoint, for its reply.
    const auto make_reply = [this, slot]() -> ReplyFn {
        const std::optional<asio::ip::udp::endpoint> sender = in_.sender(slot);
        if (!sender) {  // never: read_datagram_client() read an IPv4 or IPv6 address above
            return [](std::span<const std::uint8_t>) {};
        }
        const asio::ip::udp::endpoint& from = *sender;
        if (from.address().is_v4()) {
            // Address and port packed into 8 octets: with `this` the capture fits the 16 octets
            // std::function keeps in place, so a forwarded query takes no heap block for it.
            const std::uint64_t packed =
                (std::uint64_t{from.address().to_v4().to_uint()} << 16U) | from.port();
            return [this, packed](std::span<const std::uint8_t> answer) {
                send_later(answer, {asio::ip::address_v4(static_cast<std::uint32_t>(packed >> 16U)),
                                    static_cast<std::uint16_t>(packed & 0xFFFFU)});
            };
        }
        return [this, from](std::span<const std::uint8_t> answer) { send_later(answer, from); };
    };
    const auto handled = path_.handle(in_.payload(slot), client_, make_reply, arrival);
    if (!handled.deferred && !handled.answer.empty()) {
        queue_answer(handled.answer, in_.source(slot), in_.source_length(slot));
    }
}

void UdpListener::queue_answer(std::span<const std::uint8_t> answer, const sockaddr_storage& to,
                               socklen_t to_length) {
    if (answer.size() > kOutSlotBytes) {
        asio::ip::udp::endpoint peer;
        std::memcpy(peer.data(), &to, to_length);
        peer.resize(to_length);
        send(answer, peer);
        return;
    }
    if (out_count_ == kBatch) {  // deferred answers may have filled it before this batch
        flush_answers();
    }
    const std::size_t i = out_count_++;
    std::memcpy(out_.data() + i * kOutSlotBytes, answer.data(), answer.size());
    out_to_[i] = to;
    out_iov_[i] = {out_.data() + i * kOutSlotBytes, answer.size()};
    msghdr& h = out_msgs_[i].msg_hdr;
    h = {};
    h.msg_name = &out_to_[i];
    h.msg_namelen = to_length;
    h.msg_iov = &out_iov_[i];
    h.msg_iovlen = 1;
}

void UdpListener::flush_answers() {
    std::size_t sent = 0;
    while (sent < out_count_) {
        const int n = ::sendmmsg(socket_.native_handle(), out_msgs_.data() + sent,
                                 static_cast<unsigned>(out_count_ - sent), MSG_DONTWAIT);
        if (n <= 0) {
            if (n < 0 && errno == EINTR) {
                continue;
            }
            // A full send buffer or an unreachable client: UDP answers are best effort, as a
            // plain send would be.
            log::debug("udp: cannot answer {} queries: {}", out_count_ - sent,
                       std::strerror(errno));  // NOLINT(concurrency-mt-unsafe)
            break;
        }
        sent += static_cast<std::size_t>(n);
    }
    out_count_ = 0;
}

void UdpListener::send_later(std::span<const std::uint8_t> answer,
                             const asio::ip::udp::endpoint& to) {
    if (answer.empty()) {
        return;
    }
    sockaddr_storage address{};
    std::memcpy(&address, to.data(), to.size());
    queue_answer(answer, address, static_cast<socklen_t>(to.size()));
    flush_at_turn_end_.defer();
}

void UdpListener::send(std::span<const std::uint8_t> answer, const asio::ip::udp::endpoint& to) {
    if (answer.empty()) {
        return;
    }
    std::error_code ec;
    socket_.send_to(asio::buffer(answer.data(), answer.size()), to, 0, ec);
    if (ec && log::enabled(log::Level::debug)) {  // the text is built before the check
        log::debug("udp: cannot answer {}: {}", to.address().to_string(), ec.message());
    }
}

}  // namespace moat::server
