// base64url without padding: the RFC 4648 vectors in the url alphabet, the RFC 8484 example
// query, round trips of every length 0..300, and each kind of input the decoder must refuse.
#include "moat/core/base64url.hpp"

#include <gtest/gtest.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <random>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace {

using moat::base64url_decode;
using moat::base64url_encode;
using Bytes = std::vector<std::uint8_t>;
using namespace std::string_view_literals;

Bytes bytes(std::string_view s) { return {s.begin(), s.end()}; }

/// Decodes into a buffer of exactly the decoded size (plus `slack`); nullopt when refused.
std::optional<Bytes> decode(std::string_view in, std::size_t slack = 0) {
    Bytes out(in.size() * 3 / 4 + slack);
    auto n = base64url_decode(in, out);
    if (!n) {
        return std::nullopt;
    }
    out.resize(*n);
    return out;
}

struct Vector {
    Bytes plain;
    std::string_view encoded;
};

// RFC 4648 §10, padding removed, and inputs whose standard encoding uses '+' and '/'.
const std::array<Vector, 12> kVectors{{
    {bytes(""), ""},
    {bytes("f"), "Zg"},
    {bytes("fo"), "Zm8"},
    {bytes("foo"), "Zm9v"},
    {bytes("foob"), "Zm9vYg"},
    {bytes("fooba"), "Zm9vYmE"},
    {bytes("foobar"), "Zm9vYmFy"},
    {Bytes{0xFB, 0xFF}, "-_8"},         // standard: "+/8="
    {Bytes{0xFB, 0xFF, 0xBF}, "-_-_"},  // standard: "+/+/"
    {Bytes{0xFF, 0xFF, 0xFE}, "___-"},  // standard: "///+"
    {Bytes{0x03, 0xE0, 0xFC}, "A-D8"},  // standard: "A+D8"
    {Bytes{0xFA, 0xFB, 0xFC, 0xFD, 0xFE, 0xFF}, "-vv8_f7_"},
}};

TEST(Base64Url, Rfc4648VectorsInTheUrlAlphabet) {
    for (const Vector& v : kVectors) {
        EXPECT_EQ(base64url_encode(v.plain), v.encoded);
        EXPECT_EQ(decode(v.encoded), v.plain) << v.encoded;
    }
}

TEST(Base64Url, Rfc8484ExampleQuery) {
    // RFC 8484 §4.1.1: the GET form of "www.example.com A", ID 0, RD set.
    const Bytes expected{0x00, 0x00, 0x01, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00,
                         0x00, 0x03, 'w',  'w',  'w',  0x07, 'e',  'x',  'a',  'm',  'p',
                         'l',  'e',  0x03, 'c',  'o',  'm',  0x00, 0x00, 0x01, 0x00, 0x01};
    constexpr std::string_view kDns = "AAABAAABAAAAAAAAA3d3dwdleGFtcGxlA2NvbQAAAQAB";
    EXPECT_EQ(decode(kDns), expected);
    EXPECT_EQ(base64url_encode(expected), kDns);
}

TEST(Base64Url, RoundTripsEveryLength) {
    std::mt19937 rng(8484);
    std::uniform_int_distribution<unsigned> octet(0, 255);
    for (std::size_t n = 0; n <= 300; ++n) {
        Bytes plain(n);
        for (auto& b : plain) {
            b = static_cast<std::uint8_t>(octet(rng));
        }
        const std::string text = base64url_encode(plain);
        ASSERT_EQ(text.size(), (n * 4 + 2) / 3) << "length " << n;
        ASSERT_EQ(text.find_first_of("+/="), std::string::npos) << text;
        ASSERT_EQ(moat::base64url_decoded_size(text.size()), n);
        ASSERT_EQ(decode(text), plain) << "length " << n;
    }
}

TEST(Base64Url, RefusesCharactersOutsideTheAlphabet) {
    for (const std::string_view bad : {"Zm9+"sv, "Zm9/"sv, "Zg=="sv, "Zm8="sv, "Zm 9"sv, "Zm9\n"sv,
                                       "Zm\0v"sv, "Zm9."sv, "Zm9\x80"sv, "Zm9\xFF"sv}) {
        EXPECT_EQ(decode(bad, 4), std::nullopt) << bad;
    }
    // Every octet outside the 64 characters, in every position of a group.
    for (unsigned c = 0; c < 256; ++c) {
        if (moat::detail::kBase64UrlAlphabet.find(static_cast<char>(c)) != std::string::npos) {
            continue;
        }
        for (std::size_t at = 0; at < 4; ++at) {
            std::string text = "AAAA";
            text[at] = static_cast<char>(c);
            EXPECT_EQ(decode(text), std::nullopt) << "octet " << c << " at " << at;
        }
    }
}

TEST(Base64Url, RefusesImpossibleLengths) {
    for (const std::string_view bad : {"A", "AAAAA", "Zm9vY"}) {
        EXPECT_EQ(moat::base64url_decoded_size(bad.size()), std::nullopt);
        EXPECT_EQ(decode(bad, 4), std::nullopt) << bad;
    }
}

TEST(Base64Url, RefusesNonZeroUnusedBits) {
    EXPECT_EQ(decode("Zh"), std::nullopt);   // "Zg" is the only spelling of "f"
    EXPECT_EQ(decode("Zm9"), std::nullopt);  // "Zm8" is the only spelling of "fo"
    EXPECT_EQ(decode("Zm8"), bytes("fo"));
}

TEST(Base64Url, RefusesAnOutputBufferTooSmall) {
    std::array<std::uint8_t, 5> small{};
    EXPECT_EQ(base64url_decode("Zm9vYmFy", small), std::nullopt);  // needs 6
    EXPECT_EQ(small, (std::array<std::uint8_t, 5>{})) << "wrote into a buffer too small";
    EXPECT_EQ(base64url_decode("Zm9vYmE", small), std::optional<std::size_t>(5));
    EXPECT_EQ(base64url_decode("", std::span<std::uint8_t>{}), std::optional<std::size_t>(0));
    EXPECT_EQ(base64url_decode("Zg", std::span<std::uint8_t>{}), std::nullopt);
}

}  // namespace
