// Formatting of config errors and their std::error_category.
#include "moat/config/config_error.hpp"

namespace moat::config {
namespace {

class Category final : public std::error_category {
public:
    [[nodiscard]] const char* name() const noexcept override { return "moat.config"; }
    [[nodiscard]] std::string message(int code) const override {
        switch (static_cast<Errc>(code)) {
            case Errc::io: return "cannot read the config file";
            case Errc::bad_extension: return "config file extension is neither .toml nor .json";
            case Errc::syntax: return "config syntax error";
            case Errc::duplicate_key: return "duplicate key";
            case Errc::unknown_key: return "unknown key";
            case Errc::wrong_type: return "wrong type";
            case Errc::out_of_range: return "value out of range";
            case Errc::bad_value: return "invalid value";
            case Errc::missing_key: return "required key missing";
            case Errc::conflict: return "conflicting keys";
            case Errc::too_many_errors: return "too many errors";
        }
        return "unknown config error";
    }
};

}  // namespace

std::string ConfigError::to_string() const {
    std::string out = file;
    if (line != 0) {
        out += ":" + std::to_string(line);
    }
    out += ": ";
    if (!path.empty()) {
        out += path + ": ";
    }
    return out + message;
}

std::string to_string(const ConfigErrors& errors) {
    std::string out;
    for (const ConfigError& e : errors) {
        out += e.to_string() + "\n";
    }
    return out;
}

const std::error_category& config_category() noexcept {
    static const Category kCategory;
    return kCategory;
}

}  // namespace moat::config
