#include "domains.hpp"

#include <array>
#include <bit>
#include <utility>

namespace moat::bench {
namespace {

struct Tld {
    std::string_view text;
    unsigned weight;  ///< relative frequency, roughly as in public blocklists
};

constexpr std::array<Tld, 14> kTlds = {{
    {"com", 40},
    {"net", 10},
    {"org", 6},
    {"io", 5},
    {"de", 5},
    {"co.uk", 4},
    {"info", 4},
    {"ru", 4},
    {"xyz", 4},
    {"fr", 3},
    {"nl", 3},
    {"app", 3},
    {"com.au", 2},
    {"co", 2},
}};

constexpr unsigned total_weight() noexcept {
    unsigned sum = 0;
    for (const Tld& t : kTlds) {
        sum += t.weight;
    }
    return sum;
}

constexpr std::string_view kLetters = "abcdefghijklmnopqrstuvwxyz";
constexpr std::string_view kDigits = "0123456789";

std::string_view pick_tld(Rng& rng) noexcept {
    auto r = static_cast<unsigned>(rng.below(total_weight()));
    for (const Tld& t : kTlds) {
        if (r < t.weight) {
            return t.text;
        }
        r -= t.weight;
    }
    return kTlds[0].text;
}

std::size_t label_count(std::string_view text) noexcept {
    std::size_t n = 1;
    for (const char c : text) {
        n += c == '.' ? 1U : 0U;
    }
    return n;
}

/// FNV-1a, 64 bits; 0 is kept for empty slots.
std::uint64_t hash_of(std::string_view s) noexcept {
    std::uint64_t h = 0xCBF29CE484222325ULL;
    for (const char c : s) {
        h = (h ^ static_cast<unsigned char>(c)) * 0x100000001B3ULL;
    }
    return h == 0 ? 1 : h;
}

/// An insert-only open-addressing set of 64-bit hashes, one flat array (freed whole).
class HashSet {
public:
    explicit HashSet(std::size_t expected) : slots_(std::bit_ceil(expected * 2 + 16)) {}
    /// False when `h` was already there.
    bool insert(std::uint64_t h) noexcept {
        const std::size_t mask = slots_.size() - 1;
        for (std::size_t i = static_cast<std::size_t>(h >> 20U) & mask;; i = (i + 1) & mask) {
            if (slots_[i] == h) {
                return false;
            }
            if (slots_[i] == 0) {
                slots_[i] = h;
                return true;
            }
        }
    }

private:
    std::vector<std::uint64_t> slots_;
};

NameList generate(std::size_t count, std::uint64_t seed, bool unlisted) {
    NameList list;
    list.reserve(count, count * 24);
    DomainGenerator gen(seed);
    HashSet seen(count);
    std::string name;
    while (list.size() < count) {
        if (unlisted) {
            gen.unlisted(name);
        } else {
            gen.listed(name);
        }
        if (seen.insert(hash_of(name))) {
            list.add(name);
        }
    }
    return list;
}

}  // namespace

void NameList::reserve(std::size_t names, std::size_t text_bytes) {
    text_.reserve(text_bytes);
    starts_.reserve(names + 1);
}

void NameList::add(std::string_view name) {
    text_.append(name);
    text_.push_back('\n');
    starts_.push_back(static_cast<std::uint32_t>(text_.size()));
}

void NameList::release() noexcept {
    std::string().swap(text_);
    std::vector<std::uint32_t>{0}.swap(starts_);
}

void DomainGenerator::label(std::string& out, bool digit_first) {
    const std::size_t length = 3 + rng_.below(13);
    out.push_back(digit_first ? kDigits[rng_.below(kDigits.size())]
                              : kLetters[rng_.below(kLetters.size())]);
    for (std::size_t i = 1; i < length; ++i) {
        const bool last = i + 1 == length;
        const std::uint64_t r = rng_.below(100);
        if (r < 4 && !last && out.back() != '-') {
            out.push_back('-');  // interior only, and never "--" (IDN-like prefixes are rare)
        } else if (r < 14) {
            out.push_back(kDigits[rng_.below(kDigits.size())]);
        } else {
            out.push_back(kLetters[rng_.below(kLetters.size())]);
        }
    }
}

void DomainGenerator::make(std::string& out, bool unlisted) {
    out.clear();
    // Total labels, TLD included: 2 (45%), 3 (40%), 4 (15%), as in ad and tracker lists
    // (registrable domains plus a good share of hosts one or two levels below them).
    const std::uint64_t r = rng_.below(100);
    const std::size_t total = r < 45 ? 2 : r < 85 ? 3 : 4;
    const std::string_view tld = pick_tld(rng_);
    const std::size_t tld_labels = label_count(tld);
    const std::size_t random_labels = total > tld_labels ? total - tld_labels : 1;
    for (std::size_t i = 0; i < random_labels; ++i) {
        // The label in front of the TLD decides listed/unlisted (see domains.hpp).
        label(out, unlisted && i + 1 == random_labels);
        out.push_back('.');
    }
    out.append(tld);
}

NameList generate_listed(std::size_t count, std::uint64_t seed) {
    return generate(count, seed, false);
}

NameList generate_unlisted(std::size_t count, std::uint64_t seed) {
    return generate(count, seed, true);
}

}  // namespace moat::bench
