// A hash map keyed by std::string that is searched with a std::string_view: no string is made
// (and no heap memory taken for a name longer than the small-string buffer) just to look up.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>

namespace moat {

/// Hashes std::string and std::string_view alike, so heterogeneous lookup finds either.
struct StringHash {
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const noexcept {
        return std::hash<std::string_view>{}(s);
    }
};

template <typename Value>
using StringMap = std::unordered_map<std::string, Value, StringHash, std::equal_to<>>;

}  // namespace moat
