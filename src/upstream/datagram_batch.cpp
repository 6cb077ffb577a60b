#include "moat/upstream/datagram_batch.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "moat/core/log.hpp"

namespace moat::upstream {

DatagramBatch::DatagramBatch(std::size_t slots, std::size_t slot_bytes)
    : slot_bytes_(slot_bytes),
      bytes_(slots * slot_bytes),
      messages_(slots),
      vectors_(slots),
      sources_(slots) {
    for (std::size_t i = 0; i < slots; ++i) {
        vectors_[i] = {bytes_.data() + i * slot_bytes_, slot_bytes_};
        msghdr& h = messages_[i].msg_hdr;
        h = {};
        h.msg_name = &sources_[i];
        h.msg_namelen = sizeof(sockaddr_storage);
        h.msg_iov = &vectors_[i];
        h.msg_iovlen = 1;
    }
}

std::size_t DatagramBatch::receive(int fd, std::string_view who) {
    // The kernel writes the sender's length, the flags and the length back into each message it
    // fills, and into none after: only the sender's length of those needs setting again. (The one
    // after the last filled is set too, in case a failed read left it half written.) Setting up
    // every slot instead cost about 900 instructions per forwarded query, 48 slots of which one
    // or two were filled.
    for (std::size_t i = 0; i < written_; ++i) {
        messages_[i].msg_hdr.msg_namelen = sizeof(sockaddr_storage);
    }
    const int got = ::recvmmsg(fd, messages_.data(), static_cast<unsigned>(messages_.size()),
                               MSG_DONTWAIT, nullptr);
    written_ = std::min(static_cast<std::size_t>(std::max(got, 0)) + 1, messages_.size());
    if (got < 0) {
        emptied_ = errno == EAGAIN || errno == EWOULDBLOCK;
        if (!emptied_ && errno != EINTR) {
            log::debug("{}: receive error: {}", who,
                       std::strerror(errno));  // NOLINT(concurrency-mt-unsafe)
        }
        return 0;
    }
    emptied_ = static_cast<std::size_t>(got) < messages_.size();
    return static_cast<std::size_t>(got);
}

std::optional<asio::ip::udp::endpoint> DatagramBatch::sender(std::size_t i) const {
    asio::ip::udp::endpoint from;
    const socklen_t length = source_length(i);
    if (length > from.capacity()) {
        return std::nullopt;
    }
    std::memcpy(from.data(), &sources_[i], length);
    from.resize(length);
    return from;
}

}  // namespace moat::upstream
