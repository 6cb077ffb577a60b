// A 48-bit hardware (MAC) address: how a client group can name a device whose IP address changes
// (DHCP), found through the kernel's neighbour table.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace moat {

struct MacAddress {
    std::array<std::uint8_t, 6> bytes{};

    /// "aa:bb:cc:dd:ee:ff" or with '-' separators, any case; empty when not exactly that.
    [[nodiscard]] static std::optional<MacAddress> parse(std::string_view text) noexcept {
        MacAddress mac;
        if (text.size() != 17) {
            return std::nullopt;
        }
        for (std::size_t i = 0; i < 6; ++i) {
            const std::size_t at = i * 3;
            if (i > 0 && text[at - 1] != ':' && text[at - 1] != '-') {
                return std::nullopt;
            }
            const int hi = hex(text[at]);
            const int lo = hex(text[at + 1]);
            if (hi < 0 || lo < 0) {
                return std::nullopt;
            }
            mac.bytes[i] = static_cast<std::uint8_t>(hi * 16 + lo);
        }
        return mac;
    }

    [[nodiscard]] std::string to_text() const {
        constexpr std::string_view kHex = "0123456789abcdef";
        std::string out;
        for (std::size_t i = 0; i < bytes.size(); ++i) {
            if (i > 0) {
                out.push_back(':');
            }
            out.push_back(kHex[bytes[i] >> 4U]);
            out.push_back(kHex[bytes[i] & 0xFU]);
        }
        return out;
    }

    friend bool operator==(const MacAddress&, const MacAddress&) = default;

private:
    static int hex(char c) noexcept {
        if (c >= '0' && c <= '9') {
            return c - '0';
        }
        if (c >= 'a' && c <= 'f') {
            return c - 'a' + 10;
        }
        if (c >= 'A' && c <= 'F') {
            return c - 'A' + 10;
        }
        return -1;
    }
};

}  // namespace moat
