// Generated domain names: deterministic from a seed, shaped like real blocklist entries.
//
// A name has 2 to 4 labels: one to three random labels of 3 to 15 characters of [a-z0-9-] (never
// starting or ending with '-') in front of a TLD from a small fixed, weighted set (com, net, org,
// io, de, co.uk, ...). Two kinds, disjoint by construction:
//   listed    every label starts with a letter: the blocklist's names.
//   unlisted  the label in front of the TLD starts with a digit, so no listed name equals the
//             name or any of its suffixes (a listed name's label there starts with a letter,
//             and no TLD is a listed name): queries that no name rule can block.
// The generator is splitmix64 with modulo reduction (not std::uniform_int_distribution, whose
// output differs between standard libraries), so a seed gives the same names everywhere.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace moat::bench {

/// splitmix64: tiny state, full period, good enough for shapes and shuffles.
class Rng {
public:
    explicit Rng(std::uint64_t seed) noexcept : state_(seed) {}
    std::uint64_t next() noexcept {
        std::uint64_t z = (state_ += 0x9E3779B97F4A7C15ULL);
        z = (z ^ (z >> 30U)) * 0xBF58476D1CE4E5B9ULL;
        z = (z ^ (z >> 27U)) * 0x94D049BB133111EBULL;
        return z ^ (z >> 31U);
    }
    /// A value in [0, n); n > 0. The modulo bias (n / 2^64) is irrelevant here.
    std::uint64_t below(std::uint64_t n) noexcept { return next() % n; }
    /// True with probability percent / 100.
    bool chance(unsigned percent) noexcept { return below(100) < percent; }

    /// Fisher-Yates over any random-access range.
    template <typename Range>
    void shuffle(Range& r) noexcept {
        for (std::size_t i = r.size(); i > 1; --i) {
            std::swap(r[i - 1], r[below(i)]);
        }
    }

private:
    std::uint64_t state_;
};

/// Names stored back to back as one list text ("a.com\nb.net\n", each name followed by a
/// newline, which is a domains-format list as it is) plus each name's start. Two allocations for
/// any number of names, both large enough to come from mmap, so freeing them returns the memory
/// to the system and leaves no heap fragments in VmRSS.
class NameList {
public:
    void reserve(std::size_t names, std::size_t text_bytes);
    void add(std::string_view name);
    [[nodiscard]] std::string_view operator[](std::size_t i) const noexcept {
        return std::string_view(text_).substr(starts_[i], starts_[i + 1] - starts_[i] - 1);
    }
    [[nodiscard]] std::size_t size() const noexcept { return starts_.size() - 1; }
    [[nodiscard]] const std::string& text() const noexcept { return text_; }
    /// Heap bytes held.
    [[nodiscard]] std::size_t memory_bytes() const noexcept {
        return text_.capacity() + starts_.capacity() * sizeof(std::uint32_t);
    }
    /// Frees everything.
    void release() noexcept;

private:
    std::string text_;
    std::vector<std::uint32_t> starts_{0};  ///< starts_[i + 1] - 1 is where name i's '\n' is
};

class DomainGenerator {
public:
    explicit DomainGenerator(std::uint64_t seed) noexcept : rng_(seed) {}

    /// Appends one listed name to `out` (cleared first).
    void listed(std::string& out) { make(out, false); }
    /// Appends one unlisted name to `out` (cleared first).
    void unlisted(std::string& out) { make(out, true); }
    /// Appends one random label (3-15 characters, starting with a letter) to `out`.
    void label(std::string& out, bool digit_first = false);

    Rng& rng() noexcept { return rng_; }

private:
    void make(std::string& out, bool unlisted);
    Rng rng_;
};

/// `count` distinct listed names. Distinctness is checked on a 64-bit hash of each name; two
/// distinct names sharing one (odds ~count^2 / 2^65) only cost the list one name.
[[nodiscard]] NameList generate_listed(std::size_t count, std::uint64_t seed);
/// `count` distinct unlisted names.
[[nodiscard]] NameList generate_unlisted(std::size_t count, std::uint64_t seed);

}  // namespace moat::bench
