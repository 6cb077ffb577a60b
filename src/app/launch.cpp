#include "launch.hpp"

#include "moat/config/loader.hpp"

namespace moat::app {

tl::expected<config::Config, std::string> load_config(const Launch& launch) {
    config::Config c = config::defaults();
    if (launch.config_file) {
        auto loaded = config::load_file(*launch.config_file);
        if (!loaded) {
            return tl::unexpected(config::to_string(loaded.error()));
        }
        c = std::move(*loaded);
    }
    if (auto bad = apply_overrides(launch.overrides, c)) {
        return tl::unexpected(*bad);
    }
    return c;
}

}  // namespace moat::app
