#include "dot_upstream.hpp"

#include <algorithm>

#include "moat/core/bytes.hpp"

namespace moat::upstream {

bool DotUpstream::on_connected(TlsStream& /*stream*/, std::string& /*why*/) {
    input_.clear();
    return true;
}

bool DotUpstream::send(Exchange& x) {
    if (x.query.size() < 12 || x.query.size() > 65535) {
        return true;  // cannot be framed; the attempt times out like a lost datagram
    }
    std::uint16_t id = load_u16(x.query.data());
    while (sent_.contains(id)) {
        id = next_id_++;  // another query in flight has it
    }
    std::vector<std::uint8_t> framed(2 + x.query.size());
    store_u16(framed.data(), static_cast<std::uint16_t>(x.query.size()));
    std::copy(x.query.begin(), x.query.end(), framed.begin() + 2);
    store_u16(framed.data() + 2, id);
    write(framed);
    sent_.emplace(id, std::move(x));
    return true;
}

void DotUpstream::on_bytes(std::span<const std::uint8_t> bytes) {
    input_.insert(input_.end(), bytes.begin(), bytes.end());
    std::size_t at = 0;
    while (input_.size() - at >= 2) {
        const std::size_t length = load_u16(input_.data() + at);
        if (input_.size() - at - 2 < length) {
            break;
        }
        std::span<std::uint8_t> reply(input_.data() + at + 2, length);
        at += 2 + length;
        if (length < 12) {
            continue;  // not a DNS message; the query it might answer times out
        }
        const auto it = sent_.find(load_u16(reply.data()));
        if (it == sent_.end()) {
            continue;  // an answer to nothing we asked: ignored
        }
        heard_from();
        Exchange x = std::move(it->second);
        sent_.erase(it);
        std::copy_n(x.query.begin(), 2, reply.begin());  // the caller's own ID
        x.done({}, reply);
    }
    input_.erase(input_.begin(), input_.begin() + static_cast<std::ptrdiff_t>(at));
}

std::vector<EncryptedUpstream::Exchange> DotUpstream::take_in_flight() {
    std::vector<Exchange> out;
    out.reserve(sent_.size());
    for (auto& [id, x] : sent_) {
        out.push_back(std::move(x));
    }
    sent_.clear();
    input_.clear();
    return out;
}

}  // namespace moat::upstream
