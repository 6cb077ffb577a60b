#include "options.hpp"

#include <array>
#include <charconv>
#include <optional>
#include <system_error>
#include <utility>

namespace moat::bench {
namespace {

constexpr std::array<std::pair<std::string_view, Suite>, 6> kSuites = {{
    {"all", Suite::all},
    {"wire", Suite::wire},
    {"filter", Suite::filter},
    {"cache", Suite::cache},
    {"compile", Suite::compile},
    {"pipeline", Suite::pipeline},
}};

std::optional<Suite> suite_of(std::string_view text) noexcept {
    for (const auto& [name, suite] : kSuites) {
        if (name == text) {
            return suite;
        }
    }
    return std::nullopt;
}

/// A plain decimal number in [low, high]: no sign, no suffix, no trailing characters.
tl::expected<std::uint64_t, std::string> number(std::string_view flag, std::string_view text,
                                                std::uint64_t low, std::uint64_t high) {
    std::uint64_t value = 0;
    const char* end = text.data() + text.size();
    const auto [ptr, ec] = std::from_chars(text.data(), end, value);
    if (text.empty() || ec != std::errc{} || ptr != end) {
        return tl::unexpected("--" + std::string(flag) + ": '" + std::string(text) +
                              "' is not a number");
    }
    if (value < low || value > high) {
        return tl::unexpected("--" + std::string(flag) + ": " + std::string(text) +
                              " is out of range " + std::to_string(low) + ".." +
                              std::to_string(high));
    }
    return value;
}

struct NumberFlag {
    std::string_view name;
    std::uint64_t Options::*field;
    std::uint64_t low;
    std::uint64_t high;
};

constexpr std::array<NumberFlag, 3> kNumberFlags = {{
    {"domains", &Options::domains, 1'000, 50'000'000},
    {"iters", &Options::iters, 100, 50'000'000},
    {"seed", &Options::seed, 0, UINT64_MAX},
}};

}  // namespace

tl::expected<Options, std::string> parse_options(std::span<const std::string_view> args) {
    Options options;
    bool have_suite = false;
    bool domains_given = false;
    bool iters_given = false;
    for (std::size_t i = 0; i < args.size(); ++i) {
        const std::string_view arg = args[i];
        if (arg == "--help" || arg == "-h") {
            options.help = true;
            continue;
        }
        if (arg == "--assert") {
            options.assert_targets = true;
            continue;
        }
        if (arg == "--scaling") {
            options.scaling = true;
            continue;
        }
        if (arg == "--smoke") {
            options.smoke = true;
            continue;
        }
        if (!arg.starts_with("--")) {
            const auto suite = suite_of(arg);
            if (!suite) {
                return tl::unexpected("unknown suite '" + std::string(arg) + "'");
            }
            if (have_suite) {
                return tl::unexpected("more than one suite given ('" + std::string(arg) + "')");
            }
            options.suite = *suite;
            have_suite = true;
            continue;
        }
        const std::string_view body = arg.substr(2);
        const std::size_t eq = body.find('=');
        const std::string_view name = body.substr(0, eq);
        const NumberFlag* flag = nullptr;
        for (const NumberFlag& f : kNumberFlags) {
            if (f.name == name) {
                flag = &f;
            }
        }
        if (flag == nullptr) {
            return tl::unexpected("unknown option '" + std::string(arg) + "'");
        }
        std::string_view value;
        if (eq != std::string_view::npos) {
            value = body.substr(eq + 1);
        } else if (i + 1 < args.size()) {
            value = args[++i];
        } else {
            return tl::unexpected("--" + std::string(name) + " needs a number");
        }
        auto parsed = number(name, value, flag->low, flag->high);
        if (!parsed) {
            return tl::unexpected(parsed.error());
        }
        options.*(flag->field) = *parsed;
        domains_given = domains_given || flag->field == &Options::domains;
        iters_given = iters_given || flag->field == &Options::iters;
    }
    if (options.smoke) {  // small unless asked otherwise: a check that everything runs
        options.domains = domains_given ? options.domains : kSmokeDomains;
        options.iters = iters_given ? options.iters : kSmokeIters;
    }
    // 4,000,000 domains take time and memory: only asked for explicitly, with the filter suite.
    if (options.scaling && options.suite != Suite::filter) {
        return tl::unexpected(std::string("--scaling needs the filter suite"));
    }
    return options;
}

std::string_view suite_name(Suite suite) noexcept {
    for (const auto& [name, s] : kSuites) {
        if (s == suite) {
            return name;
        }
    }
    return "?";
}

}  // namespace moat::bench
