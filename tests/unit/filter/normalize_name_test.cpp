// normalize_name() reads a name a word at a time; these tests hold it to a plain octet-by-octet
// statement of the rules (reference_normalize below) on every octet value at every position, on
// label and name lengths around their limits at every alignment, and on random text.
#include <gtest/gtest.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <random>
#include <string>
#include <string_view>

#include "moat/filter/line_parser.hpp"
#include "moat/filter/name_hash.hpp"

namespace moat::filter {
namespace {

/// The rules, one octet at a time: one trailing dot dropped, 1..253 octets left, each a letter,
/// digit, '-', '_' or '.', labels of 1..63 octets; capitals lowered.
std::optional<std::string> reference_normalize(std::string_view text) {
    if (text.ends_with('.')) {
        text.remove_suffix(1);
    }
    if (text.empty() || text.size() > 253) {
        return std::nullopt;
    }
    std::string out;
    std::size_t label = 0;
    for (const char c : text) {
        if (c == '.') {
            if (label == 0) {
                return std::nullopt;
            }
            label = 0;
        } else {
            const bool valid = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                               (c >= '0' && c <= '9') || c == '-' || c == '_';
            if (!valid || ++label > 63) {
                return std::nullopt;
            }
        }
        out += (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
    }
    if (label == 0) {
        return std::nullopt;
    }
    return out;
}

std::string joined(std::initializer_list<std::string_view> pieces) {
    std::string out;
    for (const std::string_view piece : pieces) {
        out += piece;
    }
    return out;
}

/// normalize_name() agrees with the reference on `text`: the same verdict, the same lower-case
/// text (in place when nothing was lowered), and the hash of that text.
void expect_as_reference(const std::string& text) {
    std::array<char, 256> buf{};
    const auto got = normalize_name(text, buf);
    const auto want = reference_normalize(text);
    ASSERT_EQ(got.has_value(), want.has_value()) << "text: \"" << text << "\"";
    if (!want) {
        return;
    }
    ASSERT_EQ(got->text, *want) << "text: \"" << text << "\"";
    EXPECT_EQ(got->hash, hash_dotted(*want)) << "text: \"" << text << "\"";
    const bool lowered = std::string_view(text).substr(0, want->size()) != *want;
    EXPECT_EQ(got->text.data(), lowered ? buf.data() : text.data()) << "text: \"" << text << "\"";
}

TEST(NormalizeNameWords, EveryOctetAtEveryPositionOfAShortAndALongName) {
    const std::string label63(63, 'k');
    for (const std::string& base :
         {std::string("abcdefgh.ijklmnop.qrstuvw.xy"),
          joined({label63, ".", label63, ".", label63, ".", std::string(61, 'z')})}) {
        ASSERT_TRUE(reference_normalize(base).has_value());
        for (std::size_t at = 0; at < base.size(); ++at) {
            for (int octet = 0; octet < 256; ++octet) {
                std::string text = base;
                text[at] = static_cast<char>(octet);
                expect_as_reference(text);
            }
        }
    }
}

TEST(NormalizeNameWords, EveryPairOfNeighbouringOctetsWithinAWordAndAcrossTwo) {
    // Octets of 0x80 and above carry into their neighbour when a word is classified.
    for (const std::size_t at : {3U, 7U, 14U}) {
        for (int first = 0; first < 256; ++first) {
            for (int second = 0; second < 256; ++second) {
                std::string text = "abcdefgh.jklmnopq";
                text[at] = static_cast<char>(first);
                text[at + 1] = static_cast<char>(second);
                expect_as_reference(text);
            }
        }
    }
}

TEST(NormalizeNameWords, LabelsAroundTheLimitAtEveryAlignment) {
    for (std::size_t offset = 0; offset < 9; ++offset) {
        const std::string before = offset == 0 ? "" : std::string(offset, 'p') + ".";
        for (const std::size_t length : {1U, 7U, 8U, 9U, 62U, 63U, 64U, 65U}) {
            const std::string label(length, 'L');
            expect_as_reference(joined({before, label}));
            expect_as_reference(joined({before, label, ".com"}));
            expect_as_reference(joined({before, label, "."}));
            expect_as_reference(joined({before, label, ".."}));
            expect_as_reference(joined({".", before, label}));
        }
    }
}

TEST(NormalizeNameWords, NamesAroundTheLengthLimit) {
    for (std::size_t size = 240; size <= 258; ++size) {
        std::string text;
        while (text.size() < size) {
            text += text.size() % 32 == 31 ? '.' : 'a';
        }
        if (text.back() == '.') {
            text.back() = 'b';
        }
        expect_as_reference(text);
        expect_as_reference(text + ".");
        text[size / 2] = 'Q';
        expect_as_reference(text);
    }
}

TEST(NormalizeNameWords, RandomTextOfNameOctetsAndOthers) {
    // Mostly octets a name may hold, so that many texts are names; sometimes any octet at all.
    constexpr std::string_view kNameOctets = "abcxyzABCXYZ0189-_.";
    std::mt19937_64 random(7);
    std::size_t names = 0;
    for (int round = 0; round < 200'000; ++round) {
        const std::size_t size = random() % 80 == 0 ? random() % 270 : random() % 40;
        std::string text;
        for (std::size_t i = 0; i < size; ++i) {
            text += random() % 50 == 0 ? static_cast<char>(random() % 256)
                                       : kNameOctets[random() % kNameOctets.size()];
        }
        expect_as_reference(text);
        names += reference_normalize(text).has_value() ? 1U : 0U;
    }
    // Both verdicts must be common, or the comparison says little about one of them.
    EXPECT_GT(names, 20'000U);
    EXPECT_LT(names, 180'000U);
}

}  // namespace
}  // namespace moat::filter
