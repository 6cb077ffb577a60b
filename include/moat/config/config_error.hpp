// Errors of the config module: what is wrong, and where (file, line, key path).
//
// A load collects every error it finds (up to kMaxErrors) so a user fixes them in one go; a
// load that found any error yields no Config at all, so a reload can keep the running one.
// Each error formats as "FILE:LINE: KEY.PATH: MESSAGE", e.g.
//   dnsmoat.toml:14: upstream.servers[1]: "127.0.0.1:99999" is not a valid address:port
// where LINE is omitted when unknown (0) and KEY.PATH when the error is about the whole file.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <system_error>
#include <vector>

namespace moat::config {

enum class Errc : std::uint8_t {
    io = 1,           ///< the file cannot be read
    bad_extension,    ///< neither .toml nor .json
    syntax,           ///< not valid TOML / JSON
    duplicate_key,    ///< a key given twice in one table (JSON; TOML rejects it as syntax)
    unknown_key,      ///< a key the schema does not know (the message suggests the nearest)
    wrong_type,       ///< e.g. a string where a boolean is expected
    out_of_range,     ///< a number, duration or size outside the key's range
    bad_value,        ///< a string that is not a valid address, CIDR, name, enum value, ...
    missing_key,      ///< a required key is absent (e.g. a list without `name`)
    conflict,         ///< keys that contradict each other (e.g. `path` and `url` together)
    too_many_errors,  ///< the last entry when more than kMaxErrors were found
};

/// Errors collected per load beyond which the loader stops (then adds one too_many_errors).
inline constexpr std::size_t kMaxErrors = 20;

struct ConfigError {
    Errc code{};
    std::string file;        ///< as given to the loader (a path or a label like "<string>")
    std::uint32_t line = 0;  ///< 1-based; 0 when unknown or not applicable
    std::string path;        ///< key path, "upstream.servers[1]"; empty for the whole file
    std::string message;     ///< one sentence, no location

    /// "file:line: path: message".
    [[nodiscard]] std::string to_string() const;

    friend bool operator==(const ConfigError&, const ConfigError&) = default;
};

using ConfigErrors = std::vector<ConfigError>;

/// Every error on its own line, each formatted by ConfigError::to_string().
[[nodiscard]] std::string to_string(const ConfigErrors& errors);

[[nodiscard]] const std::error_category& config_category() noexcept;

[[nodiscard]] inline std::error_code make_error_code(Errc code) noexcept {
    return {static_cast<int>(code), config_category()};
}

}  // namespace moat::config

template <>
struct std::is_error_code_enum<moat::config::Errc> : std::true_type {};
