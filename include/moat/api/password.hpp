// Passwords and API tokens are stored only as Argon2id hashes (RFC 9106, Debian libargon2), in
// the PHC string form "$argon2id$v=19$m=19456,t=2,p=1$SALT$HASH". The cost follows OWASP's
// password storage advice (19 MiB, two passes, one lane): a fraction of a second per check with
// Debian's portable libargon2, which is why the API checks a password off the event loop. Tokens
// use a light cost (kTokenCost) and are remembered once checked.
#pragma once

#include <string>
#include <string_view>
#include <tl/expected.hpp>

namespace moat::api {

struct HashCost {
    unsigned memory_kib = 19456;
    unsigned passes = 2;
    unsigned lanes = 1;
};

/// For API tokens: 256 random bits need no cost against guessing, and a token's first check runs
/// on the event loop, so it must be quick (OWASP's cost is for passwords people choose).
inline constexpr HashCost kTokenCost{64, 1, 1};

/// A fresh Argon2id PHC string for `secret`, with a random 16-byte salt.
tl::expected<std::string, std::string> hash_secret(std::string_view secret, HashCost cost = {});

/// Whether `secret` matches `phc` (false too for a malformed or non-Argon2id string).
[[nodiscard]] bool verify_secret(std::string_view phc, std::string_view secret);

/// `bytes` random bytes from the kernel (getrandom), as lower-case hex: session ids, CSRF
/// tokens and API tokens.
[[nodiscard]] std::string random_hex(std::size_t bytes);

/// Compares two strings in time that depends only on their lengths.
[[nodiscard]] bool constant_time_equal(std::string_view a, std::string_view b) noexcept;

}  // namespace moat::api
