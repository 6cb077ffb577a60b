#include "overrides.hpp"

#include <array>

#include "moat/config/values.hpp"

namespace moat::app {

std::optional<std::string> apply_overrides(const Overrides& o, config::Config& config) {
    if (!o.listen.empty()) {
        config.server.listen.clear();
        for (const std::string& text : o.listen) {
            auto e = config::parse_endpoint(text);
            if (!e) {
                return "--listen: " + e.error();
            }
            config.server.listen.push_back(*e);
        }
    }
    if (!o.upstreams.empty()) {
        config.upstream.servers.clear();
        for (const std::string& text : o.upstreams) {
            auto e = config::parse_upstream_server(text);
            if (!e) {
                return "--upstream: " + e.error();
            }
            config.upstream.servers.push_back(*e);
        }
    }
    auto add_lists = [](const std::vector<std::string>& files,
                        std::vector<config::ListConfig>& lists) {
        for (const std::string& file : files) {
            config::ListConfig l;
            l.name = file;
            l.path = file;
            lists.push_back(l);
        }
    };
    add_lists(o.blocklists, config.blocklists);
    add_lists(o.allowlists, config.allowlists);
    if (!o.log_level.empty()) {
        static constexpr std::array<std::pair<const char*, config::LogLevel>, 5> kLevels{
            {{"trace", config::LogLevel::trace},
             {"debug", config::LogLevel::debug},
             {"info", config::LogLevel::info},
             {"warn", config::LogLevel::warn},
             {"error", config::LogLevel::error}}};
        bool found = false;
        for (const auto& [name, level] : kLevels) {
            if (o.log_level == name) {
                config.log.level = level;
                found = true;
            }
        }
        if (!found) {
            return "--log-level: \"" + o.log_level +
                   "\" is not one of trace, debug, info, warn, error";
        }
    }
    return std::nullopt;
}

}  // namespace moat::app
