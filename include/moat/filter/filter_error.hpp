// Errors of the filter module. A list line that does not parse is not an error (it is counted in
// ListStats); these are the failures that stop a snapshot from being built.
#pragma once

#include <cstdint>
#include <system_error>

namespace moat::filter {

enum class Errc : std::uint8_t {
    too_many_lists = 1,  ///< more than Compiler::kMaxLists lists
    too_many_rules,      ///< a hash table would exceed its 32-bit capacity
    regex_set,           ///< RE2 could not compile the combined regex set (memory budget)
    bad_list,            ///< a list handle that was never opened or is already closed
};

[[nodiscard]] const char* reason(Errc code) noexcept;
[[nodiscard]] const std::error_category& filter_category() noexcept;

[[nodiscard]] inline std::error_code make_error_code(Errc code) noexcept {
    return {static_cast<int>(code), filter_category()};
}

}  // namespace moat::filter

template <>
struct std::is_error_code_enum<moat::filter::Errc> : std::true_type {};
