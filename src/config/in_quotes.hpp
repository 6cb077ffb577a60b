// How a config error shows a value the user wrote: in double quotes, as the file has it.
#pragma once

#include <string>
#include <string_view>

namespace moat::config::detail {

// Not named quoted(): where <iomanip> is visible, argument-dependent lookup would prefer
// std::quoted for a std::string argument.
inline std::string in_quotes(std::string_view text) { return "\"" + std::string(text) + "\""; }

}  // namespace moat::config::detail
