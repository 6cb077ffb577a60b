#include "atom_screen.hpp"

#include <re2/filtered_re2.h>

#include <algorithm>
#include <array>

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
    std::sort(atoms.begin(), atoms.end());
    // Each atom's first pair in every case, so that the scan need not lower the text.
    screen.first_pairs_.assign(kPairWords, 0);
    for (const std::string& atom : atoms) {
        const auto first = static_cast<unsigned char>(atom[0]);
        const auto second = static_cast<unsigned char>(atom[1]);
        for (const unsigned a : {unsigned{first}, other_case(first)}) {
            for (const unsigned b : {unsigned{second}, other_case(second)}) {
                screen.mark_first_pair(a | (b << 8U));
            }
        }
    }
    screen.atoms_ = std::move(atoms);
    screen.passes_everything_ = false;
    return screen;
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
        if (pair_starts_atom(pair_at(octets, at)) && atom_at(text, at)) {
            return true;
        }
    }
    return (seen & 0x80U) != 0;
}

bool AtomScreen::atom_at(std::string_view text, std::size_t at) const noexcept {
    const std::string_view rest = text.substr(at);
    const std::array<char, 2> first{static_cast<char>(lower_at(text, at)),
                                    static_cast<char>(lower_at(text, at + 1))};
    const std::string_view pair(first.data(), first.size());
    // The atoms starting with this pair sit together in sorted order.
    auto it = std::lower_bound(atoms_.begin(), atoms_.end(), pair);
    for (; it != atoms_.end() && std::string_view(*it).starts_with(pair); ++it) {
        const std::string& atom = *it;
        if (atom.size() > rest.size()) {
            continue;
        }
        bool same = true;
        for (std::size_t i = 2; i < atom.size() && same; ++i) {
            same = static_cast<char>(lower_at(rest, i)) == atom[i];
        }
        if (same) {
            return true;
        }
    }
    return false;
}

std::size_t AtomScreen::memory_bytes() const noexcept {
    std::size_t bytes =
        first_pairs_.capacity() * sizeof(std::uint64_t) + atoms_.capacity() * sizeof(std::string);
    for (const std::string& atom : atoms_) {
        bytes += atom.size();
    }
    return bytes;
}

}  // namespace moat::filter
