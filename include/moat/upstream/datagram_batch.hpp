// Received UDP datagrams in a batch: slots for up to slots() datagrams and their senders, filled
// by one recvmmsg. The listeners read queries with it and the upstream pool reads answers: one
// system call per batch instead of one per datagram (docs/benchmarks.md has what that saves).
//
// The slots are reused by the next receive(): a datagram's bytes are valid until then.
#pragma once

#include <sys/socket.h>

#include <asio/ip/udp.hpp>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "moat/core/raw_buffer.hpp"

namespace moat::upstream {

class DatagramBatch {
public:
    /// `slots` datagrams of at most `slot_bytes` each; a longer one arrives cut (truncated()).
    /// Only the pages datagrams touch become resident.
    DatagramBatch(std::size_t slots, std::size_t slot_bytes);
    // The message headers point into the batch's own vectors: a copy would read into the
    // original's. A move keeps the vectors' storage, and with it the pointers.
    DatagramBatch(const DatagramBatch&) = delete;
    DatagramBatch& operator=(const DatagramBatch&) = delete;
    DatagramBatch(DatagramBatch&&) noexcept = default;
    DatagramBatch& operator=(DatagramBatch&&) noexcept = default;
    ~DatagramBatch() = default;

    /// Reads up to slots() datagrams from the non-blocking socket `fd`: how many arrived, 0 when
    /// none was waiting or on an error (logged at debug level, prefixed with `who`).
    std::size_t receive(int fd, std::string_view who);
    /// Whether the last receive() found the socket empty: it read fewer datagrams than slots()
    /// without an error. Then the next datagram to arrive is a new readiness edge
    /// (ReadableWatch::wait); after an error it may not be.
    [[nodiscard]] bool emptied() const noexcept { return emptied_; }

    [[nodiscard]] std::size_t slots() const noexcept { return messages_.size(); }
    /// Datagram `i` of the last receive(): its bytes (cut to the slot when truncated()).
    [[nodiscard]] std::span<const std::uint8_t> payload(std::size_t i) const noexcept {
        return {bytes_.data() + i * slot_bytes_, messages_[i].msg_len};
    }
    /// Whether datagram `i` was longer than a slot.
    [[nodiscard]] bool truncated(std::size_t i) const noexcept {
        return (messages_[i].msg_hdr.msg_flags & MSG_TRUNC) != 0;
    }
    /// The sender's address as the kernel gave it (for a reply by sendmmsg).
    [[nodiscard]] const sockaddr_storage& source(std::size_t i) const noexcept {
        return sources_[i];
    }
    [[nodiscard]] socklen_t source_length(std::size_t i) const noexcept {
        return messages_[i].msg_hdr.msg_namelen;
    }
    /// The sender as an endpoint, or nothing when its address is not one Asio can hold.
    [[nodiscard]] std::optional<asio::ip::udp::endpoint> sender(std::size_t i) const;

private:
    std::size_t slot_bytes_;
    RawBuffer bytes_;
    std::vector<mmsghdr> messages_;
    std::vector<iovec> vectors_;
    std::vector<sockaddr_storage> sources_;
    std::size_t written_ = 0;  ///< messages the last receive() may have written into
    bool emptied_ = false;
};

}  // namespace moat::upstream
