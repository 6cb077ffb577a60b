#include "moat/filter/line_parser.hpp"

#include <array>
#include <cstdint>
#include <string>

#include "line_shortcuts.hpp"
#include "line_text.hpp"

namespace moat::filter {
namespace {

/// Cuts a `#` comment that starts the line or follows whitespace (hosts and domain lists).
std::string_view strip_hash_comment(std::string_view s) noexcept {
    for (std::size_t i = s.find('#'); i != std::string_view::npos; i = s.find('#', i + 1)) {
        if (i == 0 || is_space(s[i - 1])) {
            return trim(s.substr(0, i));
        }
    }
    return s;
}

/// The octets that tell one rule syntax from another, as bits. A line's classes are read in one
/// pass with one table load per character: find_first_of() with a set of n characters calls
/// memchr over the set once per character of the line, and format detection asked three sets
/// of every line of a list.
constexpr unsigned kRegexMeta = 1U << 0U;  ///< ( ) \ [ ] { } + ?: a Pi-hole regex
constexpr unsigned kCaret = 1U << 1U;      ///< ^: an AdBlock separator
constexpr unsigned kDollar = 1U << 2U;     ///< $: AdBlock modifiers
constexpr unsigned kStar = 1U << 3U;       ///< *: an AdBlock wildcard
constexpr unsigned kUrlPart = 1U << 4U;    ///< / : ? = &: a URL, not a name
constexpr unsigned kPipe = 1U << 5U;       ///< |: an AdBlock anchor

constexpr std::array<std::uint8_t, 256> kOctetClasses = [] {
    std::array<std::uint8_t, 256> t{};
    const auto mark = [&t](std::string_view chars, unsigned cls) {
        for (const char c : chars) {
            t[static_cast<unsigned char>(c)] |= static_cast<std::uint8_t>(cls);
        }
    };
    mark("()\\[]{}+?", kRegexMeta);
    mark("^", kCaret);
    mark("$", kDollar);
    mark("*", kStar);
    mark("/:?=&", kUrlPart);
    mark("|", kPipe);
    return t;
}();

/// The class bits of every character of `s`, or-ed.
unsigned classes_of(std::string_view s) noexcept {
    unsigned classes = 0;
    for (const char c : s) {
        classes |= kOctetClasses[static_cast<unsigned char>(c)];
    }
    return classes;
}

/// `name` or `*.name` (plain domain lists), possibly after an IP (hosts lists).
LineOutcome parse_hosts_or_domain(std::string_view line, bool include_subdomains, RuleSink& sink) {
    line = strip_hash_comment(line);
    if (line.empty()) {
        return LineOutcome::comment;
    }
    const std::size_t sp = find_blank(line);
    const std::string_view first = line.substr(0, sp);
    std::array<char, 256> buf;  // NOLINT(cppcoreguidelines-pro-type-member-init): written first
    if (sp == std::string_view::npos || !is_ip(first)) {
        if (sp != std::string_view::npos || is_ip(line)) {
            return LineOutcome::invalid;  // several words without an address, or an address alone
        }
        RuleMatch match = include_subdomains ? RuleMatch::subtree : RuleMatch::exact;
        std::string_view text = line;
        if (text.starts_with("*.")) {
            text.remove_prefix(2);
            match = RuleMatch::subtree;
        }
        const auto name = normalize_name(text, buf);
        if (!name) {
            return LineOutcome::invalid;
        }
        sink.on_name({name->text, match, false, false, name->hash});
        return LineOutcome::rules;
    }
    const RuleMatch match = include_subdomains ? RuleMatch::subtree : RuleMatch::exact;
    bool any_invalid = false;
    bool any = false;
    std::string_view rest = line.substr(sp);
    while (!(rest = trim(rest)).empty()) {
        const std::size_t end = find_blank(rest);
        const std::string_view token = rest.substr(0, end);
        rest = end == std::string_view::npos ? std::string_view{} : rest.substr(end);
        const auto name = normalize_name(token, buf);
        if (!name) {
            any_invalid = true;
        } else if (is_local_host_name(name->text)) {
            sink.on_skipped();
            any = true;
        } else {
            sink.on_name({name->text, match, false, false, name->hash});
            any = true;
        }
    }
    if (any_invalid || !any) {
        return LineOutcome::invalid;
    }
    return LineOutcome::rules;
}

/// Escapes `s` for RE2, turning each `*` into `.*` (any run of characters).
std::string wildcard_to_regex(std::string_view s) {
    std::string out;
    for (const char c : s) {
        if (c == '*') {
            out += ".*";
        } else if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_') {
            out += c;
        } else if (c >= 'A' && c <= 'Z') {
            out += static_cast<char>(c | 0x20);
        } else {
            out += '\\';
            out += c;
        }
    }
    return out;
}

/// Reads the `$modifiers` of a rule: only `important` is applied. False when another is present.
bool read_modifiers(std::string_view mods, bool& important) noexcept {
    while (!mods.empty()) {
        const std::size_t comma = mods.find(',');
        const std::string_view m = trim(mods.substr(0, comma));
        mods = comma == std::string_view::npos ? std::string_view{} : mods.substr(comma + 1);
        if (m == "important") {
            important = true;
        } else {
            return false;
        }
    }
    return true;
}

LineOutcome parse_adblock_regex(std::string_view rule, bool exception, RuleSink& sink) {
    // `/regex/` optionally followed by `$modifiers`.
    const std::size_t close = rule.rfind('/');
    if (close == 0) {
        return LineOutcome::invalid;
    }
    bool important = false;
    const std::string_view tail = rule.substr(close + 1);
    if (!tail.empty()) {
        if (tail.front() != '$') {
            return LineOutcome::invalid;
        }
        if (!read_modifiers(tail.substr(1), important)) {
            return LineOutcome::unsupported;
        }
    }
    const std::string_view pattern = rule.substr(1, close - 1);
    if (pattern.empty()) {
        return LineOutcome::invalid;
    }
    return sink.on_regex({pattern, exception, important}) ? LineOutcome::rules
                                                          : LineOutcome::invalid;
}

LineOutcome parse_adblock(std::string_view line, bool include_subdomains, RuleSink& sink) {
    if (line.starts_with('!') || (line.starts_with('[') && line.ends_with(']'))) {
        return LineOutcome::comment;
    }
    if (line.starts_with("##") || line.starts_with("#@#") || line.starts_with("#?#") ||
        line.starts_with("#$#") || line.find("##") != std::string_view::npos) {
        return LineOutcome::unsupported;  // cosmetic (element hiding) rules
    }
    if (line.starts_with('#')) {
        return LineOutcome::comment;
    }
    bool exception = false;
    std::string_view rule = line;
    if (rule.starts_with("@@")) {
        exception = true;
        rule.remove_prefix(2);
    }
    if (rule.size() >= 2 && rule.starts_with('/') && rule.find('/', 1) != std::string_view::npos) {
        return parse_adblock_regex(rule, exception, sink);
    }
    bool important = false;
    if (const std::size_t dollar = rule.find('$'); dollar != std::string_view::npos) {
        if (!read_modifiers(rule.substr(dollar + 1), important)) {
            return LineOutcome::unsupported;
        }
        rule = rule.substr(0, dollar);
    }
    bool start_domain = false;  // `||`: the name or any subdomain
    bool start_exact = false;   // `|`: the name starts here
    if (rule.starts_with("||")) {
        start_domain = true;
        rule.remove_prefix(2);
    } else if (rule.starts_with('|')) {
        start_exact = true;
        rule.remove_prefix(1);
    }
    bool end_anchor = false;
    if (rule.ends_with('|')) {
        rule.remove_suffix(1);
        end_anchor = true;
    }
    if (rule.ends_with('^')) {
        rule.remove_suffix(1);
        end_anchor = true;
    }
    const unsigned classes = classes_of(rule);
    if (rule.empty() || (classes & (kUrlPart | kCaret | kPipe)) != 0) {
        return (classes & kUrlPart) != 0 ? LineOutcome::unsupported : LineOutcome::invalid;
    }
    if ((classes & kStar) != 0) {
        std::string re = start_domain ? "(^|\\.)" : (start_exact ? "^" : "");
        re += wildcard_to_regex(rule);
        if (end_anchor) {
            re += '$';
        }
        return sink.on_regex({re, exception, important}) ? LineOutcome::rules
                                                         : LineOutcome::invalid;
    }
    if (!start_domain && !start_exact && !end_anchor && rule.find('.') == std::string_view::npos) {
        return LineOutcome::invalid;  // a bare word: a URL substring rule, not a name
    }
    std::array<char, 256> buf;  // NOLINT(cppcoreguidelines-pro-type-member-init): written first
    const auto name = normalize_name(rule, buf);
    if (!name) {
        return LineOutcome::invalid;
    }
    RuleMatch match = RuleMatch::exact;
    if (start_domain || (!start_exact && include_subdomains)) {
        match = RuleMatch::subtree;
    }
    sink.on_name({name->text, match, exception, important, name->hash});
    return LineOutcome::rules;
}

LineOutcome parse_regex_line(std::string_view line, RuleSink& sink) {
    if (line.starts_with('#')) {
        return LineOutcome::comment;
    }
    if (line.find(";querytype=") != std::string_view::npos ||
        line.find(";invert") != std::string_view::npos) {
        return LineOutcome::unsupported;  // Pi-hole v5 regex extensions
    }
    return sink.on_regex({line, false, false}) ? LineOutcome::rules : LineOutcome::invalid;
}

}  // namespace

ListFormat detect_format(std::string_view line) noexcept {
    if (line.starts_with('!') || line.starts_with("@@") || line.starts_with('|')) {
        return ListFormat::adblock;
    }
    if (line.starts_with('[')) {
        return line.ends_with(']') ? ListFormat::adblock : ListFormat::regex;
    }
    if (line.starts_with('/') && line.size() > 2 && line.find('/', 1) != std::string_view::npos) {
        return ListFormat::adblock;
    }
    const std::size_t sp = find_blank(line);
    if (sp != std::string_view::npos && is_ip(line.substr(0, sp))) {
        return ListFormat::hosts;
    }
    const unsigned classes = classes_of(line);
    if (line.starts_with('^') || (classes & kRegexMeta) != 0) {
        return ListFormat::regex;
    }
    if ((classes & (kCaret | kDollar)) != 0 ||
        ((classes & kStar) != 0 && !line.starts_with("*."))) {
        return ListFormat::adblock;
    }
    return ListFormat::domains;
}

LineOutcome parse_line(std::string_view line, ListFormat format, bool include_subdomains,
                       RuleSink& sink) {
    line = trim(line);
    if (line.empty()) {
        return LineOutcome::comment;
    }
    if (const auto shaped = parse_common_shape(line, format, include_subdomains, sink)) {
        return *shaped;
    }
    return parse_line_in_full(line, format, include_subdomains, sink);
}

LineOutcome parse_line_in_full(std::string_view line, ListFormat format, bool include_subdomains,
                               RuleSink& sink) {
    line = trim(line);
    if (line.empty()) {
        return LineOutcome::comment;
    }
    if (format == ListFormat::auto_detect) {
        if (line.starts_with('#') && !line.starts_with("##") && !line.starts_with("#@#")) {
            return LineOutcome::comment;
        }
        format = detect_format(line);
    }
    switch (format) {
        case ListFormat::hosts:
        case ListFormat::domains: return parse_hosts_or_domain(line, include_subdomains, sink);
        case ListFormat::adblock: return parse_adblock(line, include_subdomains, sink);
        case ListFormat::regex: return parse_regex_line(line, sink);
        case ListFormat::auto_detect: break;
    }
    return LineOutcome::invalid;
}

}  // namespace moat::filter
