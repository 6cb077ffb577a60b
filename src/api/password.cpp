#include "moat/api/password.hpp"

#include <argon2.h>
#include <sys/random.h>

#include <array>
#include <cerrno>
#include <stdexcept>
#include <vector>

namespace moat::api {
namespace {

constexpr std::size_t kSaltBytes = 16;
constexpr std::size_t kHashBytes = 32;

void fill_random(std::uint8_t* out, std::size_t n) {
    std::size_t done = 0;
    while (done < n) {
        const ssize_t got = ::getrandom(out + done, n - done, 0);
        if (got < 0 && errno == EINTR) {
            continue;
        }
        if (got <= 0) {
            // No entropy means no safe secret: refuse rather than hand out a guessable one.
            throw std::runtime_error("getrandom failed");
        }
        done += static_cast<std::size_t>(got);
    }
}

}  // namespace

tl::expected<std::string, std::string> hash_secret(std::string_view secret, HashCost cost) {
    std::array<std::uint8_t, kSaltBytes> salt{};
    fill_random(salt.data(), salt.size());
    const std::size_t length = argon2_encodedlen(cost.passes, cost.memory_kib, cost.lanes,
                                                 kSaltBytes, kHashBytes, Argon2_id);
    std::vector<char> encoded(length);
    const int rc = argon2id_hash_encoded(cost.passes, cost.memory_kib, cost.lanes, secret.data(),
                                         secret.size(), salt.data(), salt.size(), kHashBytes,
                                         encoded.data(), encoded.size());
    if (rc != ARGON2_OK) {
        return tl::unexpected(std::string("argon2id: ") + argon2_error_message(rc));
    }
    return std::string(encoded.data());
}

bool verify_secret(std::string_view phc, std::string_view secret) {
    if (!phc.starts_with("$argon2id$")) {
        return false;
    }
    const std::string encoded(phc);  // argon2 wants a NUL-terminated string
    return argon2id_verify(encoded.c_str(), secret.data(), secret.size()) == ARGON2_OK;
}

std::string random_hex(std::size_t bytes) {
    std::vector<std::uint8_t> raw(bytes);
    fill_random(raw.data(), raw.size());
    static constexpr std::string_view kDigits = "0123456789abcdef";
    std::string out;
    out.reserve(bytes * 2);
    for (const std::uint8_t b : raw) {
        out.push_back(kDigits[b >> 4U]);
        out.push_back(kDigits[b & 0x0FU]);
    }
    return out;
}

bool constant_time_equal(std::string_view a, std::string_view b) noexcept {
    if (a.size() != b.size()) {
        return false;
    }
    unsigned char diff = 0;
    for (std::size_t i = 0; i < a.size(); ++i) {
        diff |= static_cast<unsigned char>(a[i] ^ b[i]);
    }
    return diff == 0;
}

}  // namespace moat::api
