#include "lists_command.hpp"

#include <array>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>

#include "lists.hpp"
#include "moat/filter/list_scan.hpp"
#include "moat/lists/state_dir.hpp"

namespace moat::app {
namespace {

std::string size_text(std::uint64_t bytes) {
    std::array<char, 32> text{};
    if (bytes >= (1U << 20U)) {
        std::snprintf(text.data(), text.size(), "%.1f MiB",
                      static_cast<double>(bytes) / (1U << 20U));
    } else if (bytes >= 1024) {
        std::snprintf(text.data(), text.size(), "%.1f KiB", static_cast<double>(bytes) / 1024);
    } else {
        return std::to_string(bytes) + " bytes";
    }
    return text.data();
}

/// What is known about one configured list, as the JSON `dnsmoat lists --json` prints.
nlohmann::json describe(const config::ListConfig& l, const char* kind, const lists::StateDir& dir) {
    nlohmann::json out = {{"name", l.name}, {"kind", kind}, {"enabled", l.enabled}};
    if (!l.url.empty()) {
        const std::string key = lists::StateDir::key_of(l.name, l.url);
        out["url"] = l.url;
        out["copy"] = dir.copy_path(key).string();
        if (auto status = dir.read_status(key)) {
            out["status"] = nlohmann::json::parse(lists::to_json(*status));
        }
        return out;
    }
    out["path"] = l.path;
    std::ifstream in(l.path, std::ios::binary);
    if (!in) {
        out["error"] = "cannot open " + l.path;
        return out;
    }
    const filter::ListStats st =
        filter::scan_list(in, list_format(l.format), l.subdomains.value_or(false));
    nlohmann::json invalid = nlohmann::json::array();
    for (const filter::InvalidLine& bad : st.first_invalid) {
        invalid.push_back({{"line", bad.line}, {"text", bad.text}});
    }
    out["status"] = {{"entries", st.entries},
                     {"lines", st.lines},
                     {"invalid", st.invalid},
                     {"first_invalid", invalid}};
    return out;
}

void print_text(const nlohmann::json& l) {
    std::cout << l["kind"].get<std::string>() << " \"" << l["name"].get<std::string>() << "\""
              << (l["enabled"].get<bool>() ? "" : " (disabled)") << "\n";
    const bool downloaded = l.contains("url");
    std::cout << "  source:   " << (downloaded ? l["url"] : l["path"]).get<std::string>() << "\n";
    if (l.contains("error")) {
        std::cout << "  error:    " << l["error"].get<std::string>() << "\n";
        return;
    }
    if (!l.contains("status")) {
        std::cout << "  copy:     none yet (not downloaded)\n";
        return;
    }
    const nlohmann::json& s = l["status"];
    const auto entries = s.value("entries", std::uint64_t{0});
    std::cout << "  entries:  " << entries << " (" << s.value("invalid", std::uint64_t{0})
              << " invalid lines)\n";
    for (const auto& bad : s["first_invalid"]) {
        std::cout << "            line " << bad["line"].get<std::uint64_t>() << ": "
                  << bad["text"].get<std::string>() << "\n";
    }
    if (!downloaded) {
        return;
    }
    if (s.value("last_changed", std::int64_t{0}) != 0) {
        std::cout << "  copy:     " << l["copy"].get<std::string>() << ", "
                  << size_text(s.value("bytes", std::uint64_t{0})) << ", changed "
                  << local_time_text(s.value("last_changed", std::int64_t{0}));
        if (const std::string etag = s.value("etag", ""); !etag.empty()) {
            std::cout << ", ETag " << etag;
        }
        std::cout << "\n";
    } else {
        std::cout << "  copy:     none yet\n";
    }
    std::cout << "  checked:  " << local_time_text(s.value("last_success", std::int64_t{0}))
              << " (last success)\n";
    if (const std::string error = s.value("last_error", ""); !error.empty()) {
        std::cout << "  failing:  " << error << " (" << s.value("failures", 0) << " in a row, last "
                  << local_time_text(s.value("last_attempt", std::int64_t{0})) << ")\n";
    }
}

}  // namespace

int run_lists(const Launch& launch, bool json) {
    auto loaded = load_config(launch);
    if (!loaded) {
        std::cerr << loaded.error() << "\n";
        return 78;
    }
    const config::Config& c = *loaded;
    const lists::StateDir dir(c.lists.state_dir);
    nlohmann::json all = nlohmann::json::array();
    for (const auto& l : c.blocklists) {
        all.push_back(describe(l, "blocklist", dir));
    }
    for (const auto& l : c.allowlists) {
        all.push_back(describe(l, "allowlist", dir));
    }
    if (json) {
        std::cout << all.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
        return 0;
    }
    if (all.empty()) {
        std::cout << "no lists configured"
                  << (launch.config_file ? "" : " (the embedded defaults use the built-in list)")
                  << "\n";
    }
    for (const auto& l : all) {
        print_text(l);
    }
    return 0;
}

}  // namespace moat::app
