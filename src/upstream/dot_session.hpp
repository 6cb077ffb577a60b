// The protocol half of a DNS-over-TLS connection (RFC 7858), without the connection: queries
// framed with their two-octet length (RFC 1035 §4.2.2) and pipelined; the byte stream read back
// split into answers again and each matched by its ID to the query it answers. IDs are unique
// among the queries in flight on the connection: a query whose ID another one holds goes out
// renumbered, and its answer is given back the query's own ID.
//
// Socket-free so the reply framing can be fed any bytes (tests/fuzz/fuzz_dot_replies.cpp).
// What the server sends is never trusted: a frame shorter than a DNS header or an answer to no
// query in flight is skipped, and at most one partial frame (at most 65,536 octets) is kept
// between reads.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <span>
#include <vector>

#include "encrypted_exchange.hpp"

namespace moat::upstream {

class DotSession {
public:
    /// Called for each answer: the exchange it answers (taken out of the session) and the
    /// answer with the query's own ID, valid during the call.
    using Deliver = std::function<void(EncryptedExchange&, std::span<const std::uint8_t>)>;

    /// Whether `query` can be framed: a DNS header at least, at most 65,535 octets.
    [[nodiscard]] static bool can_frame(std::span<const std::uint8_t> query) noexcept;

    /// Whether every ID is in flight: no query can go out until an answer frees one.
    [[nodiscard]] bool full() const noexcept;

    /// `x.query` framed for the connection with an ID no other query in flight has, and `x`
    /// held until its answer or take_in_flight(). Throws std::invalid_argument for a query
    /// can_frame() refuses and std::logic_error when full(); `x` is then left as it was.
    [[nodiscard]] std::vector<std::uint8_t> frame(EncryptedExchange&& x);

    /// Takes bytes read from the connection and hands each whole answer to `deliver`, in order.
    /// `deliver` may call frame(), and take_in_flight() (the connection is dropped): the
    /// answer it holds stays valid until it returns, and the bytes after it are then dropped
    /// with the connection. Not to be called from `deliver`.
    void receive(std::span<const std::uint8_t> bytes, const Deliver& deliver);

    /// Every exchange still in flight, for a retry or a failure; the session is then empty,
    /// as for a new connection.
    [[nodiscard]] std::vector<EncryptedExchange> take_in_flight();

    /// A new connection: the partial frame of the old one is dropped (the queries in flight
    /// went with take_in_flight() when it closed).
    void restart();

    [[nodiscard]] bool in_flight() const noexcept { return !sent_.empty(); }
    [[nodiscard]] std::size_t in_flight_count() const noexcept { return sent_.size(); }
    /// Octets of a partial frame kept for the next read.
    [[nodiscard]] std::size_t buffered() const noexcept { return input_.size(); }

private:
    /// Takes the answer `reply` (a whole frame's message) to the session's query, if any.
    void answer(std::span<std::uint8_t> reply, const Deliver& deliver);
    /// The end of receive(): the `taken` octets of whole frames leave the buffer, or all of it
    /// when the connection was dropped meanwhile.
    void settle(std::size_t taken) noexcept;

    std::map<std::uint16_t, EncryptedExchange> sent_;  ///< by the ID used on the connection
    std::vector<std::uint8_t> input_;
    std::uint16_t next_id_ = 0;
    bool receiving_ = false;
    /// take_in_flight() was called from `deliver`: the input goes once receive() returns.
    bool dropped_while_receiving_ = false;
};

}  // namespace moat::upstream
