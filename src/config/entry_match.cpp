#include "entry_match.hpp"

namespace moat::config::detail {
namespace {

/// Top-level keys of two tables whose values are equal.
std::size_t equal_keys(const Document& a, const Document& b) {
    std::size_t n = 0;
    for (const auto& [key, value] : a.items()) {
        if (const auto it = b.find(key); it != b.end() && *it == value) {
            ++n;
        }
    }
    return n;
}

std::size_t distance(std::size_t a, std::size_t b) { return a > b ? a - b : b - a; }

}  // namespace

std::vector<std::optional<std::size_t>> match_entries(const Document& before, const Document& now) {
    std::vector<std::optional<std::size_t>> match(now.size());
    std::vector<bool> taken(before.size(), false);
    // Unchanged entries first: an edit elsewhere must not take their old place.
    for (std::size_t j = 0; j < now.size(); ++j) {
        for (std::size_t i = 0; i < before.size(); ++i) {
            if (!taken[i] && before[i] == now[j]) {
                match[j] = i;
                taken[i] = true;
                break;
            }
        }
    }
    for (std::size_t j = 0; j < now.size(); ++j) {
        if (match[j]) {
            continue;
        }
        std::size_t best_shared = 0;
        for (std::size_t i = 0; i < before.size(); ++i) {
            if (taken[i]) {
                continue;
            }
            const std::size_t shared = equal_keys(before[i], now[j]);
            if (shared > best_shared ||
                (shared == best_shared && shared > 0 && distance(i, j) < distance(*match[j], j))) {
                best_shared = shared;
                match[j] = i;
            }
        }
        if (match[j]) {
            taken[*match[j]] = true;
        }
    }
    return match;
}

}  // namespace moat::config::detail
