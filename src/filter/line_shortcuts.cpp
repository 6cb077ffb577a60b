#include "line_shortcuts.hpp"

#include <array>

#include "line_text.hpp"

namespace moat::filter {
namespace {

/// "name" in a domains list, or "address name" in a hosts file (either format parses both).
std::optional<LineOutcome> plain_or_hosts(std::string_view line, bool include_subdomains,
                                          RuleSink& sink) {
    std::array<char, 256> buf;  // NOLINT(cppcoreguidelines-pro-type-member-init): written first
    const std::size_t blank = find_blank(line);
    if (blank == std::string_view::npos) {
        const auto name = normalize_name(line, buf);
        // A valid name has no ':', so only an IPv4 address can be one; the full parser calls a
        // line that is an address alone invalid.
        if (!name || is_ipv4(line)) {
            return std::nullopt;
        }
        sink.on_name({name->text, include_subdomains ? RuleMatch::subtree : RuleMatch::exact, false,
                      false, name->hash});
        return LineOutcome::rules;
    }
    if (!is_ip(line.substr(0, blank))) {
        return std::nullopt;
    }
    std::string_view rest = line.substr(blank);
    while (rest.front() == ' ' || rest.front() == '\t') {
        rest.remove_prefix(1);  // the line is trimmed: something other than a blank ends it
    }
    // One name to the end of the line: a second one, or a comment, fails the name's check.
    const auto name = normalize_name(rest, buf);
    if (!name) {
        return std::nullopt;
    }
    if (is_local_host_name(name->text)) {
        sink.on_skipped();
    } else {
        sink.on_name({name->text, include_subdomains ? RuleMatch::subtree : RuleMatch::exact, false,
                      false, name->hash});
    }
    return LineOutcome::rules;
}

/// "||name^": the name and every name below it.
std::optional<LineOutcome> domain_anchor(std::string_view line, RuleSink& sink) {
    if (line.size() < 4 || !line.starts_with("||") || !line.ends_with('^')) {
        return std::nullopt;
    }
    std::array<char, 256> buf;  // NOLINT(cppcoreguidelines-pro-type-member-init): written first
    const auto name = normalize_name(line.substr(2, line.size() - 3), buf);
    if (!name) {
        return std::nullopt;
    }
    sink.on_name({name->text, RuleMatch::subtree, false, false, name->hash});
    return LineOutcome::rules;
}

}  // namespace

std::optional<LineOutcome> parse_common_shape(std::string_view line, ListFormat format,
                                              bool include_subdomains, RuleSink& sink) {
    switch (format) {
        case ListFormat::hosts:
        case ListFormat::domains: return plain_or_hosts(line, include_subdomains, sink);
        case ListFormat::adblock: return domain_anchor(line, sink);
        case ListFormat::auto_detect:
            // Detection calls a line starting with '|' AdBlock, and one starting with a name's
            // character (no '#', '!', '[', '/', '@', '|') hosts or domains.
            return line.starts_with('|') ? domain_anchor(line, sink)
                                         : plain_or_hosts(line, include_subdomains, sink);
        case ListFormat::regex: break;
    }
    return std::nullopt;
}

}  // namespace moat::filter
