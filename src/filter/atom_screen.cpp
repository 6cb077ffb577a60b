#include "atom_screen.hpp"

#include <re2/filtered_re2.h>

#include <algorithm>
#include <bit>
#include <utility>

#include "moat/core/ascii.hpp"

namespace moat::filter {
namespace {

[[nodiscard]] bool is_ascii(std::string_view text) noexcept {
    return std::all_of(text.begin(), text.end(),
                       [](char c) { return (static_cast<unsigned char>(c) & 0x80U) == 0; });
}

[[nodiscard]] unsigned lower_at(std::string_view text, std::size_t at) noexcept {
    return ascii_lower(static_cast<std::uint8_t>(text[at]));
}

/// The pair of octets at `text[at]` as one number, the first in the low byte (one 16-bit load).
[[nodiscard]] unsigned pair_at(const unsigned char* text, std::size_t at) noexcept {
    return static_cast<unsigned>(text[at]) | (static_cast<unsigned>(text[at + 1]) << 8U);
}

/// Four octets of `text` from `at`, lower case, the first in the low byte.
[[nodiscard]] std::uint32_t key_at(std::string_view text, std::size_t at) noexcept {
    std::uint32_t key = 0;
    for (std::size_t i = 0; i < 4; ++i) {
        key |= lower_at(text, at + i) << (8U * i);
    }
    return key;
}

/// An ASCII letter's other case; any other octet itself.
[[nodiscard]] unsigned other_case(unsigned c) noexcept {
    if (c >= 'a' && c <= 'z') {
        return c - 'a' + 'A';
    }
    if (c >= 'A' && c <= 'Z') {
        return c - 'A' + 'a';
    }
    return c;
}

[[nodiscard]] std::size_t hash_of(std::uint32_t key, std::size_t mask) noexcept {
    return static_cast<std::size_t>((std::uint64_t{key} * 0x9E3779B97F4A7C15ULL) >> 32U) & mask;
}

}  // namespace

AtomScreen AtomScreen::of(const std::vector<std::string>& patterns,
                          const re2::RE2::Options& options) {
    AtomScreen screen;
    if (patterns.empty()) {
        return screen;
    }
    re2::FilteredRE2 filtered(kMinAtomLength);
    for (const std::string& pattern : patterns) {
        int id = 0;
        if (filtered.Add(pattern, options, &id) != re2::RE2::NoError) {
            return screen;
        }
    }
    std::vector<std::string> atoms;
    filtered.Compile(&atoms);
    // With no atom found, the potential rules are those no atom guards: any one means some
    // names must always be searched.
    std::vector<int> unguarded;
    filtered.AllPotentials({}, &unguarded);
    if (!unguarded.empty() || atoms.empty()) {
        return screen;
    }
    for (const std::string& atom : atoms) {
        if (atom.size() < static_cast<std::size_t>(kMinAtomLength) || !is_ascii(atom)) {
            return screen;
        }
    }
    // RE2 gives them lower case; the tables and the compare with a lowered text rely on it.
    for (std::string& atom : atoms) {
        for (char& c : atom) {
            c = static_cast<char>(ascii_lower(static_cast<std::uint8_t>(c)));
        }
    }
    std::sort(atoms.begin(), atoms.end());
    atoms.erase(std::unique(atoms.begin(), atoms.end()), atoms.end());
    screen.first_pairs_.assign(kPairWords, 0);
    // Room for every atom's prefix at most half full: probes stay short.
    screen.prefixes_.resize(std::bit_ceil(std::max<std::size_t>(16, atoms.size() * 2)));
    std::vector<std::pair<std::uint32_t, std::string>> longer;
    for (const std::string& atom : atoms) {
        screen.add(atom, longer);
    }
    // The longer atoms grouped by prefix, each group's range kept in its slot.
    std::sort(longer.begin(), longer.end());
    for (auto& [key, atom] : longer) {
        Prefix& p = screen.slot(key);
        if (p.count == 0) {
            p.first = static_cast<std::uint32_t>(screen.longer_.size());
        }
        ++p.count;
        screen.longer_.push_back(std::move(atom));
    }
    screen.passes_everything_ = false;
    return screen;
}

void AtomScreen::mark_pair(std::vector<std::uint64_t>& bits, unsigned char a, unsigned char b) {
    for (const unsigned first : {unsigned{a}, other_case(a)}) {
        for (const unsigned second : {unsigned{b}, other_case(b)}) {
            const unsigned pair = first | (second << 8U);
            bits[pair / 64] |= std::uint64_t{1} << (pair % 64);
        }
    }
}

void AtomScreen::add(const std::string& atom,
                     std::vector<std::pair<std::uint32_t, std::string>>& longer) {
    mark_pair(first_pairs_, static_cast<unsigned char>(atom[0]),
              static_cast<unsigned char>(atom[1]));
    const std::uint32_t key = key_at(atom, 0);
    if (atom.size() == 4) {
        slot(key).whole = true;
    } else {
        (void)slot(key);
        longer.emplace_back(key, atom);
    }
}

AtomScreen::Prefix& AtomScreen::slot(std::uint32_t key) noexcept {
    const std::size_t mask = prefixes_.size() - 1;
    // Terminates: the table is at most half full.
    for (std::size_t i = hash_of(key, mask);; i = (i + 1) & mask) {
        Prefix& p = prefixes_[i];
        if (!p.used) {
            p.used = true;
            p.key = key;
            return p;
        }
        if (p.key == key) {
            return p;
        }
    }
}

const AtomScreen::Prefix* AtomScreen::find(std::uint32_t key) const noexcept {
    const std::size_t mask = prefixes_.size() - 1;
    for (std::size_t i = hash_of(key, mask);; i = (i + 1) & mask) {
        const Prefix& p = prefixes_[i];
        if (!p.used) {
            return nullptr;
        }
        if (p.key == key) {
            return &p;
        }
    }
}

bool AtomScreen::may_match(std::string_view text) const noexcept {
    if (passes_everything_) {
        return true;
    }
    // One pass: the octets seen are or-ed together to tell at the end whether all were ASCII.
    const auto* const octets = reinterpret_cast<const unsigned char*>(text.data());
    const std::size_t n = text.size();
    if (n == 0) {
        return false;
    }
    unsigned seen = octets[n - 1];
    for (std::size_t at = 0; at + 1 < n; ++at) {
        seen |= octets[at];
        if (bit(first_pairs_, pair_at(octets, at)) && atom_at(text, at)) {
            return true;
        }
    }
    return (seen & 0x80U) != 0;
}

bool AtomScreen::atom_at(std::string_view text, std::size_t at) const noexcept {
    const std::size_t left = text.size() - at;
    if (left < 4) {
        return false;
    }
    const Prefix* const four = find(key_at(text, at));
    if (four == nullptr) {
        return false;
    }
    if (four->whole) {
        return true;
    }
    for (std::size_t k = four->first; k < four->first + four->count; ++k) {
        const std::string_view atom = longer_[k];
        if (atom.size() <= left &&
            ascii_iequal(text.substr(at + 4, atom.size() - 4), atom.substr(4))) {
            return true;
        }
    }
    return false;
}

std::vector<std::string> AtomScreen::atoms() const {
    std::vector<std::string> all(longer_.begin(), longer_.end());
    for (const Prefix& p : prefixes_) {
        if (p.used && p.whole) {
            std::string four(4, '\0');
            for (std::size_t i = 0; i < four.size(); ++i) {
                four[i] = static_cast<char>((p.key >> (8U * i)) & 0xFFU);
            }
            all.push_back(std::move(four));
        }
    }
    std::sort(all.begin(), all.end());
    return all;
}

std::size_t AtomScreen::memory_bytes() const noexcept {
    std::size_t bytes = first_pairs_.capacity() * sizeof(std::uint64_t) +
                        prefixes_.capacity() * sizeof(Prefix) +
                        longer_.capacity() * sizeof(std::string);
    for (const std::string& atom : longer_) {
        bytes += atom.size();  // an upper bound: short strings live inside their std::string
    }
    return bytes;
}

}  // namespace moat::filter
