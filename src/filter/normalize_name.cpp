// normalize_name(): the check, lower-casing and hash of every name a list line carries.
//
// It runs once per line of every list, so it is the compiler's inner loop (29% of a 1,000,000-line
// compile in a profile of `dnsmoat-bench compile`, most of it the octet-by-octet class check).
// The check here reads the name 8 octets at a time: a handful of adds and masks classify a whole
// word, and only the dots, a few per name, are visited one by one.
#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string_view>

#include "moat/filter/line_parser.hpp"
#include "moat/filter/name_hash.hpp"
#include "moat/wire/name.hpp"

namespace moat::filter {
namespace {

static_assert(std::endian::native == std::endian::little,
              "the octet of a word's lowest set bit is taken as the first in memory");

constexpr std::uint64_t kEveryOctet = 0x0101010101010101ULL;
constexpr std::uint64_t kTopBits = 0x8080808080808080ULL;
/// Fills a word's octets past the end of the name: a valid name octet that is not a dot.
constexpr std::uint64_t kPadding = kEveryOctet * 'a';

/// The top bit of each octet of `word` that is at least `c`. Every octet must be below 0x80 and
/// `c` at most 0x80: the sum then stays within the octet, so no carry reaches the next one.
constexpr std::uint64_t at_least(std::uint64_t word, unsigned c) noexcept {
    return (word + (0x80U - c) * kEveryOctet) & kTopBits;
}

/// The top bit of each octet of `word` (all below 0x80) within [lo, hi].
constexpr std::uint64_t within(std::uint64_t word, unsigned lo, unsigned hi) noexcept {
    return at_least(word, lo) & ~at_least(word, hi + 1);
}

/// The classes of one word of a name, as the top bit of each octet.
struct WordClasses {
    std::uint64_t valid = 0;  ///< a letter, digit, '-', '_' or '.'
    std::uint64_t dots = 0;
    std::uint64_t upper = 0;
};

constexpr WordClasses classify(std::uint64_t word) noexcept {
    // '-' (0x2D) and '.' (0x2E) are neighbours, so one range takes both.
    const std::uint64_t upper = within(word, 'A', 'Z');
    return {within(word, 'a', 'z') | upper | within(word, '0', '9') | within(word, '-', '.') |
                within(word, '_', '_'),
            within(word, '.', '.'), upper};
}

std::uint64_t load_8(const char* p) noexcept {
    std::uint64_t word = 0;
    std::memcpy(&word, p, sizeof word);
    return word;
}

std::uint32_t load_4(const char* p) noexcept {
    std::uint32_t word = 0;
    std::memcpy(&word, p, sizeof word);
    return word;
}

/// The word of `text` that starts at octet `i`; past the end of the text, padding. A short tail
/// is read with whole loads that end at the text's end: a copy of a variable number of octets
/// into the word would be stored octet by octet and then read back as one word, which stalls
/// the load until the stores land (15% of this function's time in a profile).
std::uint64_t load_word(std::string_view text, std::size_t i) noexcept {
    const std::size_t left = text.size() - i;
    if (left >= 8) {
        return load_8(text.data() + i);
    }
    const std::uint64_t padding = kPadding << (8 * left);
    if (text.size() >= 8) {  // the last 8 octets, the ones before `i` shifted out
        return (load_8(text.data() + text.size() - 8) >> (8 * (8 - left))) | padding;
    }
    const char* p = text.data() + i;
    if (left >= 4) {  // two loads that overlap where left < 8: the same octets at the same places
        return load_4(p) | (std::uint64_t{load_4(p + left - 4)} << (8 * (left - 4))) | padding;
    }
    // 1..3 octets: the first, the middle and the last cover them all.
    const auto octet = [p](std::size_t at) {
        return std::uint64_t{static_cast<unsigned char>(p[at])};
    };
    return octet(0) | (octet(left / 2) << (8 * (left / 2))) |
           (octet(left - 1) << (8 * (left - 1))) | padding;
}

/// Lower-cases `text` (every octet valid) into `buf` a word at a time: an upper-case letter's
/// top-bit mark shifted down two places is 0x20, the bit that tells 'a' from 'A'.
std::string_view lower_into(std::string_view text, std::array<char, 256>& buf) noexcept {
    // text.size() <= 253, so the last word written ends by octet 256: inside buf.
    for (std::size_t i = 0; i < text.size(); i += 8) {
        const std::uint64_t word = load_word(text, i);
        const std::uint64_t lower = word | (classify(word).upper >> 2U);
        std::memcpy(buf.data() + i, &lower, sizeof lower);
    }
    return {buf.data(), text.size()};
}

}  // namespace

std::optional<NormalizedName> normalize_name(std::string_view text,
                                             std::array<char, 256>& buf) noexcept {
    if (text.ends_with('.')) {
        text.remove_suffix(1);
    }
    // 253 characters without the final dot is 255 octets in wire form, the limit of RFC 1035.
    if (text.empty() || text.size() > 253) {
        return std::nullopt;
    }
    // Lists are nearly always lower-case already: the name is then the text itself, and only a
    // name with capitals is written out in a second pass.
    std::array<std::uint8_t, 128> dots;  // NOLINT(cppcoreguidelines-pro-type-member-init): [0, n)
    std::size_t n = 0;                   // at most 126 dots: 127 labels of 1 fill 253 octets
    std::size_t label_start = 0;
    std::uint64_t upper = 0;
    for (std::size_t i = 0; i < text.size(); i += 8) {
        const std::uint64_t word = load_word(text, i);
        const WordClasses classes = classify(word);
        // classify() assumes octets below 0x80; one of 0x80 or more carries into its neighbour.
        // The class mask then rejects it anyway (a search of every three-octet mix found no
        // exception), but the carries make that hard to prove, so it is refused outright.
        if ((word & kTopBits) != 0 || classes.valid != kTopBits) {
            return std::nullopt;
        }
        upper |= classes.upper;
        for (std::uint64_t d = classes.dots; d != 0; d &= d - 1) {
            const std::size_t dot = i + static_cast<std::size_t>(std::countr_zero(d)) / 8;
            const std::size_t label = dot - label_start;
            if (label == 0 || label > wire::kMaxLabelLength) {
                return std::nullopt;
            }
            dots[n++] = static_cast<std::uint8_t>(dot);
            label_start = dot + 1;
        }
    }
    const std::size_t last_label = text.size() - label_start;
    if (last_label == 0 || last_label > wire::kMaxLabelLength) {
        return std::nullopt;  // ".." at the end, a lone ".", or a last label too long
    }
    if (upper != 0) {
        text = lower_into(text, buf);
    }
    // The hash runs from the last label to the first (name_hash.hpp), between the dots found.
    const auto* octets = reinterpret_cast<const std::uint8_t*>(text.data());
    std::uint64_t hash = kNameHashSeed;
    std::size_t end = text.size();
    while (n > 0) {
        const std::size_t dot = dots[--n];
        hash = hash_label(hash, octets + dot + 1, end - dot - 1);
        end = dot;
    }
    return NormalizedName{text, hash_label(hash, octets, end)};
}

}  // namespace moat::filter
