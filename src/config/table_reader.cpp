// Typed table reading, value readers and the error collector of the config validator.
#include "table_reader.hpp"

#include <algorithm>
#include <cctype>
#include <numeric>

#include "in_quotes.hpp"
#include "moat/wire/name.hpp"
#include "toml_bare_key.hpp"

namespace moat::config::detail {
namespace {

std::size_t edit_distance(std::string_view a, std::string_view b) {
    std::vector<std::size_t> row(b.size() + 1);
    std::iota(row.begin(), row.end(), std::size_t{0});
    for (std::size_t i = 1; i <= a.size(); ++i) {
        std::size_t diagonal = row[0];
        row[0] = i;
        for (std::size_t j = 1; j <= b.size(); ++j) {
            const std::size_t above = row[j];
            const bool same = std::tolower(static_cast<unsigned char>(a[i - 1])) ==
                              std::tolower(static_cast<unsigned char>(b[j - 1]));
            row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (same ? 0U : 1U)});
            diagonal = above;
        }
    }
    return row[b.size()];
}

std::string joined(const std::vector<std::string_view>& names) {
    std::string out;
    for (const std::string_view name : names) {
        if (!out.empty()) {
            out += ", ";
        }
        out += name;
    }
    return out;
}

}  // namespace

const char* kind_name(Node::Kind kind) noexcept {
    switch (kind) {
        case Node::Kind::null: return "null";
        case Node::Kind::boolean: return "a boolean";
        case Node::Kind::integer: return "an integer";
        case Node::Kind::floating: return "a floating-point number";
        case Node::Kind::string: return "a string";
        case Node::Kind::other: return "another kind of value";
        case Node::Kind::array: return "an array";
        case Node::Kind::table: return "a table";
    }
    return "a value";
}

void Context::error(Errc code, std::uint32_t line, std::string path, std::string message) {
    if (errors_.size() < kMaxErrors) {
        errors_.push_back(ConfigError{code, file_, line, std::move(path), std::move(message)});
        return;
    }
    ++dropped_;
    const std::string text = "and " + std::to_string(dropped_) + " more error" +
                             (dropped_ == 1 ? "" : "s") + " not shown";
    if (errors_.size() == kMaxErrors) {
        errors_.push_back(ConfigError{Errc::too_many_errors, file_, 0, "", text});
    } else {
        errors_.back().message = text;
    }
}

std::string join(const std::string& path, std::string_view key) {
    const std::string k = is_bare_key(key) ? std::string(key) : in_quotes(key);
    return path.empty() ? k : path + "." + k;
}

std::string index(const std::string& path, std::size_t i) {
    return path + "[" + std::to_string(i) + "]";
}

std::string nearest(std::string_view key, const std::vector<std::string_view>& candidates) {
    std::string_view best;
    std::size_t best_distance = std::max<std::size_t>(2, key.size() / 2);
    for (const std::string_view c : candidates) {
        const std::size_t d = edit_distance(key, c);
        if (d <= best_distance && (best.empty() || d < best_distance)) {
            best = c;
            best_distance = d;
        }
    }
    return std::string(best);
}

bool expect_kind(Context& ctx, const Node& node, const std::string& path, Node::Kind kind,
                 std::string_view what) {
    if (node.kind == kind) {
        return true;
    }
    const std::string got = node.kind == Node::Kind::other ? node.text : kind_name(node.kind);
    ctx.error(Errc::wrong_type, node.line, path,
              "expected " + (what.empty() ? std::string(kind_name(kind)) : std::string(what)) +
                  ", got " + got);
    return false;
}

std::optional<std::string> read_string(Context& ctx, const Node& node, const std::string& path) {
    if (!expect_kind(ctx, node, path, Node::Kind::string)) {
        return std::nullopt;
    }
    return node.text;
}

std::optional<Endpoint> read_endpoint(Context& ctx, const Node& node, const std::string& path,
                                      std::uint16_t default_port) {
    if (!expect_kind(ctx, node, path, Node::Kind::string, "an address:port string")) {
        return std::nullopt;
    }
    auto ep = parse_endpoint(node.text, default_port);
    if (!ep) {
        ctx.error(Errc::bad_value, node.line, path, ep.error());
        return std::nullopt;
    }
    return *ep;
}

std::optional<IpAddress> read_ip(Context& ctx, const Node& node, const std::string& path) {
    if (!expect_kind(ctx, node, path, Node::Kind::string, "an IP address string")) {
        return std::nullopt;
    }
    auto ip = parse_ip(node.text);
    if (!ip) {
        ctx.error(Errc::bad_value, node.line, path, ip.error());
        return std::nullopt;
    }
    return *ip;
}

std::optional<Cidr> read_cidr(Context& ctx, const Node& node, const std::string& path) {
    if (!expect_kind(ctx, node, path, Node::Kind::string, "a CIDR string")) {
        return std::nullopt;
    }
    auto cidr = parse_cidr(node.text);
    if (!cidr) {
        ctx.error(Errc::bad_value, node.line, path, cidr.error());
        return std::nullopt;
    }
    return *cidr;
}

std::optional<std::string> read_domain(Context& ctx, const Node& node, const std::string& path) {
    if (!expect_kind(ctx, node, path, Node::Kind::string, "a domain name string")) {
        return std::nullopt;
    }
    std::string name = node.text;
    const bool charset_ok = std::all_of(name.begin(), name.end(), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '-' || c == '_' || c == '.';
    });
    if (!name.empty() && name.back() == '.') {
        name.pop_back();
    }
    if (!charset_ok || name.empty() || name.find("..") != std::string::npos ||
        name.front() == '.' || !wire::Name::from_text(name)) {
        ctx.error(Errc::bad_value, node.line, path,
                  in_quotes(node.text) + " is not a valid domain name");
        return std::nullopt;
    }
    std::transform(name.begin(), name.end(), name.begin(), [](char c) {
        return static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    });
    return name;
}

const Node* TableReader::find(std::string_view key) {
    known_.push_back(key);
    for (const Field& f : table_.fields) {
        if (f.key == key) {
            return &f.value;
        }
    }
    return nullptr;
}

const Node* TableReader::find_kind(std::string_view key, Node::Kind kind, std::string_view what) {
    const Node* node = find(key);
    if (node == nullptr || !expect_kind(ctx_, *node, path_of(key), kind, what)) {
        return nullptr;
    }
    return node;
}

bool TableReader::boolean(std::string_view key, bool& out) {
    const Node* node = find_kind(key, Node::Kind::boolean);
    if (node != nullptr) {
        out = node->boolean;
    }
    return node != nullptr;
}

bool TableReader::optional_boolean(std::string_view key, std::optional<bool>& out) {
    bool value = false;
    if (!boolean(key, value)) {
        return false;
    }
    out = value;
    return true;
}

bool TableReader::integer(std::string_view key, std::uint32_t& out, std::int64_t lo,
                          std::int64_t hi) {
    const Node* node = find_kind(key, Node::Kind::integer);
    if (node == nullptr) {
        return false;
    }
    if (node->integer < lo || node->integer > hi) {
        ctx_.error(Errc::out_of_range, node->line, path_of(key),
                   std::to_string(node->integer) + " is out of range (" + std::to_string(lo) +
                       ".." + std::to_string(hi) + ")");
        return false;
    }
    out = static_cast<std::uint32_t>(node->integer);
    return true;
}

bool TableReader::string(std::string_view key, std::string& out) {
    const Node* node = find_kind(key, Node::Kind::string);
    if (node != nullptr) {
        out = node->text;
    }
    return node != nullptr;
}

bool TableReader::duration(std::string_view key, Duration& out, Duration lo, Duration hi) {
    const Node* node = find_kind(key, Node::Kind::string, "a duration string like \"30s\"");
    if (node == nullptr) {
        return false;
    }
    const auto d = parse_duration(node->text);
    if (!d) {
        ctx_.error(Errc::bad_value, node->line, path_of(key), d.error());
        return false;
    }
    if (*d < lo || *d > hi) {
        ctx_.error(Errc::out_of_range, node->line, path_of(key),
                   in_quotes(node->text) + " is out of range (" + format_duration(lo) + ".." +
                       format_duration(hi) + ")");
        return false;
    }
    out = *d;
    return true;
}

bool TableReader::seconds(std::string_view key, std::chrono::seconds& out, std::chrono::seconds lo,
                          std::chrono::seconds hi) {
    Duration d{};
    if (!duration(key, d, lo, hi)) {
        return false;
    }
    if (d.count() % 1000 != 0) {
        ctx_.error(Errc::bad_value, find(key)->line, path_of(key),
                   in_quotes(find(key)->text) + " is not a whole number of seconds");
        return false;
    }
    out = std::chrono::duration_cast<std::chrono::seconds>(d);
    return true;
}

bool TableReader::size(std::string_view key, std::uint64_t& out, std::uint64_t lo,
                       std::uint64_t hi) {
    const Node* node = find(key);
    if (node == nullptr) {
        return false;
    }
    std::uint64_t value = 0;
    std::string text;
    if (node->kind == Node::Kind::integer && node->integer >= 0) {
        value = static_cast<std::uint64_t>(node->integer);
        text = std::to_string(value);
    } else if (expect_kind(ctx_, *node, path_of(key), Node::Kind::string,
                           "a size like \"32MiB\"")) {
        const auto s = parse_size(node->text);
        if (!s) {
            ctx_.error(Errc::bad_value, node->line, path_of(key), s.error());
            return false;
        }
        value = *s;
        text = in_quotes(node->text);
    } else {
        return false;
    }
    if (value < lo || value > hi) {
        ctx_.error(Errc::out_of_range, node->line, path_of(key),
                   text + " is out of range (" + std::to_string(lo) + ".." + std::to_string(hi) +
                       " bytes)");
        return false;
    }
    out = value;
    return true;
}

bool TableReader::ip(std::string_view key, IpAddress& out) {
    const Node* node = find(key);
    if (node == nullptr) {
        return false;
    }
    const auto value = read_ip(ctx_, *node, path_of(key));
    if (value) {
        out = *value;
    }
    return value.has_value();
}

void TableReader::bad_enum(const Node& node, std::string_view key,
                           const std::vector<std::string_view>& valid) {
    std::string message = in_quotes(node.text) + " is not one of " + joined(valid);
    if (const std::string near = nearest(node.text, valid); !near.empty()) {
        message += "; did you mean \"" + near + "\"?";
    }
    ctx_.error(Errc::bad_value, node.line, path_of(key), std::move(message));
}

void TableReader::finish() {
    for (const Field& f : table_.fields) {
        if (std::find(known_.begin(), known_.end(), f.key) != known_.end()) {
            continue;
        }
        std::string message = "unknown key \"" + f.key + "\"";
        if (const std::string near = nearest(f.key, known_); !near.empty()) {
            message += "; did you mean \"" + near + "\"?";
        } else {
            message += " (valid keys: " + joined(known_) + ")";
        }
        ctx_.error(Errc::unknown_key, f.key_line, path_of(f.key), std::move(message));
    }
}

}  // namespace moat::config::detail
