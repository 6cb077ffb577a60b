// One query sent to an encrypted upstream (DoT or DoH) and what to do with its answer. Apart
// from encrypted_upstream.hpp so the protocols' socket-free parts (dot_session.hpp) can hold
// exchanges without Asio.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

namespace moat::upstream {

/// The answer to one exchange: `error` empty and the reply (valid during the call, with the
/// query's own ID), or why there is none.
using ExchangeDone =
    std::function<void(const std::string& error, std::span<const std::uint8_t> reply)>;

struct EncryptedExchange {
    std::vector<std::uint8_t> query;  ///< as given, with the caller's ID
    ExchangeDone done;
    bool retried = false;
};

}  // namespace moat::upstream
