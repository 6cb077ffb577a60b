#include "dot_session.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "moat/core/bytes.hpp"
#include "moat/wire/types.hpp"

namespace moat::upstream {
namespace {

/// Every 16-bit ID in flight: no other query can go out until an answer frees one.
constexpr std::size_t kMaxInFlight = 65536;

}  // namespace

bool DotSession::can_frame(std::span<const std::uint8_t> query) noexcept {
    return query.size() >= wire::kHeaderSize && query.size() <= wire::kMaxMessageSize;
}

std::vector<std::uint8_t> DotSession::frame(EncryptedExchange&& x) {
    if (!can_frame(x.query)) {
        throw std::invalid_argument("DotSession::frame: a query of " +
                                    std::to_string(x.query.size()) + " octets cannot be framed");
    }
    if (full()) {
        throw std::logic_error("DotSession::frame: every ID is in flight");
    }
    std::uint16_t id = load_u16(x.query.data());
    while (sent_.contains(id)) {
        id = next_id_++;  // another query in flight has it
    }
    std::vector<std::uint8_t> framed(2 + x.query.size());
    store_u16(framed.data(), static_cast<std::uint16_t>(x.query.size()));
    std::copy(x.query.begin(), x.query.end(), framed.begin() + 2);
    store_u16(framed.data() + 2, id);
    sent_.emplace(id, std::move(x));
    return framed;
}

bool DotSession::full() const noexcept { return sent_.size() >= kMaxInFlight; }

void DotSession::receive(std::span<const std::uint8_t> bytes, const Deliver& deliver) {
    if (receiving_) {
        throw std::logic_error("DotSession::receive: called again from its own deliver");
    }
    input_.insert(input_.end(), bytes.begin(), bytes.end());
    receiving_ = true;
    dropped_while_receiving_ = false;
    std::size_t at = 0;
    try {
        while (!dropped_while_receiving_ && input_.size() - at >= 2) {
            const std::size_t length = load_u16(input_.data() + at);
            if (input_.size() - at - 2 < length) {
                break;  // the rest of this frame comes with a later read
            }
            const std::span<std::uint8_t> reply(input_.data() + at + 2, length);
            at += 2 + length;
            answer(reply, deliver);
        }
    } catch (...) {
        settle(at);  // a throwing `deliver` loses only its own answer
        throw;
    }
    settle(at);
}

void DotSession::settle(std::size_t taken) noexcept {
    if (dropped_while_receiving_) {
        input_.clear();  // the connection went from under receive()
    } else {
        input_.erase(input_.begin(), input_.begin() + static_cast<std::ptrdiff_t>(taken));
    }
    receiving_ = false;
}

void DotSession::answer(std::span<std::uint8_t> reply, const Deliver& deliver) {
    if (reply.size() < wire::kHeaderSize) {
        return;  // not a DNS message; the query it might answer times out
    }
    const auto it = sent_.find(load_u16(reply.data()));
    if (it == sent_.end()) {
        return;  // an answer to nothing we asked: ignored
    }
    EncryptedExchange x = std::move(it->second);
    sent_.erase(it);
    std::copy_n(x.query.begin(), 2, reply.begin());  // the caller's own ID
    deliver(x, reply);
}

std::vector<EncryptedExchange> DotSession::take_in_flight() {
    std::vector<EncryptedExchange> out;
    out.reserve(sent_.size());
    for (auto& [id, x] : sent_) {
        out.push_back(std::move(x));
    }
    sent_.clear();
    restart();
    return out;
}

void DotSession::restart() {
    if (receiving_) {
        dropped_while_receiving_ = true;  // receive() still reads the buffer: it empties it
    } else {
        input_.clear();
    }
}

}  // namespace moat::upstream
