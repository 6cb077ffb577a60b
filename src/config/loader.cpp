// Loading: file → text → syntax reader → document tree → schema → Config.
#include "moat/config/loader.hpp"

#include <cerrno>
#include <fstream>
#include <sstream>
#include <string>
#include <system_error>

#include "readers.hpp"
#include "schema.hpp"

namespace moat::config {

tl::expected<Syntax, ConfigError> syntax_of(const std::filesystem::path& path) {
    std::string ext = path.extension().string();
    for (char& c : ext) {
        c = (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
    }
    if (ext == ".toml") {
        return Syntax::toml;
    }
    if (ext == ".json") {
        return Syntax::json;
    }
    return tl::unexpected(
        ConfigError{Errc::bad_extension, path.string(), 0, "",
                    "unknown config file extension \"" + ext + "\" (use .toml or .json)"});
}

tl::expected<Config, ConfigErrors> load_file(const std::filesystem::path& path) {
    const auto syntax = syntax_of(path);
    if (!syntax) {
        return tl::unexpected(ConfigErrors{syntax.error()});
    }
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec)) {
        return tl::unexpected(ConfigErrors{
            ConfigError{Errc::io, path.string(), 0, "", "cannot read: is a directory"}});
    }
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        const int err = errno;
        return tl::unexpected(ConfigErrors{
            ConfigError{Errc::io, path.string(), 0, "",
                        std::string("cannot open: ") +
                            (err != 0 ? std::generic_category().message(err) : "unknown error")}});
    }
    std::ostringstream text;
    text << in.rdbuf();
    if (in.bad()) {
        return tl::unexpected(
            ConfigErrors{ConfigError{Errc::io, path.string(), 0, "", "read error"}});
    }
    return parse(text.str(), *syntax, path.string());
}

tl::expected<Config, ConfigErrors> parse(std::string_view text, Syntax syntax,
                                         std::string_view file_name) {
    auto root = syntax == Syntax::toml ? detail::read_toml(text, file_name)
                                       : detail::read_json(text, file_name);
    if (!root) {
        return tl::unexpected(std::move(root.error()));
    }
    return detail::to_config(*root, file_name);
}

}  // namespace moat::config
