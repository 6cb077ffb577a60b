#include "moat/api/router.hpp"

#include "moat/core/ascii.hpp"

namespace moat::api {
namespace {

std::vector<std::string> split_path(std::string_view path) {
    std::vector<std::string> out;
    while (!path.empty()) {
        if (path.front() == '/') {
            path.remove_prefix(1);
            continue;
        }
        const std::size_t slash = path.find('/');
        out.emplace_back(path.substr(0, slash));
        path = slash == std::string_view::npos ? std::string_view{} : path.substr(slash);
    }
    return out;
}

int hex_value(char c) {
    if (c >= '0' && c <= '9') {
        return c - '0';
    }
    if (c >= 'a' && c <= 'f') {
        return c - 'a' + 10;
    }
    if (c >= 'A' && c <= 'F') {
        return c - 'A' + 10;
    }
    return -1;
}

}  // namespace

std::optional<std::string> percent_decode(std::string_view text, bool plus_is_space) {
    std::string out;
    out.reserve(text.size());
    for (std::size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (c == '%') {
            if (i + 2 >= text.size()) {
                return std::nullopt;
            }
            const int hi = hex_value(text[i + 1]);
            const int lo = hex_value(text[i + 2]);
            if (hi < 0 || lo < 0) {
                return std::nullopt;
            }
            out.push_back(static_cast<char>(hi * 16 + lo));
            i += 2;
        } else if (c == '+' && plus_is_space) {
            out.push_back(' ');
        } else {
            out.push_back(c);
        }
    }
    return out;
}

std::string Params::query_or(std::string_view name, std::string_view fallback) const {
    const auto it = query.find(name);
    return it == query.end() ? std::string(fallback) : it->second;
}

void Router::add(std::string method, std::string_view pattern, RouteHandler handler) {
    routes_.push_back({std::move(method), split_path(pattern), std::move(handler)});
}

void Router::add(std::string method, std::string_view pattern,
                 std::function<http::Response(const http::Request&, const Params&)> handler) {
    add(std::move(method), pattern,
        [h = std::move(handler)](const http::Request& r, const Params& p, const Peer&,
                                 const Responder&) -> std::optional<http::Response> {
            return h(r, p);
        });
}

bool Router::match(const Route& r, const std::vector<std::string>& segments, Params& params) {
    if (r.segments.size() != segments.size()) {
        return false;
    }
    for (std::size_t i = 0; i < segments.size(); ++i) {
        const std::string& want = r.segments[i];
        if (want.size() > 2 && want.front() == '{' && want.back() == '}') {
            auto decoded = percent_decode(segments[i]);
            if (!decoded || decoded->empty()) {
                return false;
            }
            params.path[want.substr(1, want.size() - 2)] = std::move(*decoded);
        } else if (want != segments[i]) {
            return false;
        }
    }
    return true;
}

bool Router::knows(std::string_view path) const {
    const auto segments = split_path(path);
    Params ignored;
    for (const Route& r : routes_) {
        if (match(r, segments, ignored)) {
            return true;
        }
    }
    return false;
}

std::optional<http::Response> Router::route(const http::Request& request, const Peer& peer,
                                            const Responder& later) const {
    const auto segments = split_path(request.path);
    std::string allow;
    for (const Route& r : routes_) {
        Params params;
        if (!match(r, segments, params)) {
            continue;
        }
        const bool same =
            r.method == request.method || (r.method == "GET" && request.method == "HEAD");
        if (!same) {
            allow += (allow.empty() ? "" : ", ") + r.method;
            continue;
        }
        std::string_view query = request.query;
        while (!query.empty()) {
            const std::size_t amp = query.find('&');
            const std::string_view pair = query.substr(0, amp);
            query = amp == std::string_view::npos ? std::string_view{} : query.substr(amp + 1);
            const std::size_t eq = pair.find('=');
            auto key = percent_decode(pair.substr(0, eq), true);
            auto value =
                percent_decode(eq == std::string_view::npos ? "" : pair.substr(eq + 1), true);
            if (!key || !value) {
                return error_response(400, "the query string is not valid percent-encoding");
            }
            params.query[*key] = std::move(*value);
        }
        return r.handler(request, params, peer, later);
    }
    if (!allow.empty()) {
        http::Response r = error_response(405, "method not allowed");
        r.header("Allow", allow);
        return r;
    }
    return error_response(404, "no such path: " + std::string(request.path));
}

http::Response json_response(int status, const nlohmann::json& body) {
    http::Response r;
    r.status = status;
    r.header("Content-Type", "application/json");
    // Names from the query log may hold any byte: replace what is not UTF-8 rather than throw.
    r.body = body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    // Appended in place: `dump(...) + "\n"` makes GCC 12 warn (-Wstringop-overflow) in a
    // profile-guided build with LTO.
    r.body.push_back('\n');
    return r;
}

http::Response error_response(int status, std::string_view text) {
    return json_response(status, {{"error", std::string(text)}});
}

namespace {

/// The deepest nesting of arrays and objects a request body may have. Bodies are walked
/// recursively (into the config document, then written out as TOML), so their depth is bounded
/// before anything parses them; no route takes more than a few levels.
constexpr std::size_t kMaxBodyDepth = 32;

/// Whether the JSON text nests arrays and objects deeper than `limit` (strings skipped).
bool nests_deeper_than(std::string_view text, std::size_t limit) noexcept {
    std::size_t depth = 0;
    bool in_string = false;
    bool escaped = false;
    for (const char c : text) {
        if (in_string) {
            if (escaped) {
                escaped = false;
            } else if (c == '\\') {
                escaped = true;
            } else if (c == '"') {
                in_string = false;
            }
        } else if (c == '"') {
            in_string = true;
        } else if (c == '[' || c == '{') {
            if (++depth > limit) {
                return true;
            }
        } else if ((c == ']' || c == '}') && depth > 0) {
            --depth;
        }
    }
    return false;
}

}  // namespace

nlohmann::json body_object(const http::Request& request, std::optional<http::Response>& error) {
    const auto type = request.header("Content-Type");
    if (!type || !ascii_iequal(type->substr(0, type->find(';')), "application/json")) {
        error = error_response(415, "send the body as Content-Type: application/json");
        return {};
    }
    if (nests_deeper_than(request.body, kMaxBodyDepth)) {
        error = error_response(400, "the body nests arrays or objects more than " +
                                        std::to_string(kMaxBodyDepth) + " deep");
        return {};
    }
    auto parsed = nlohmann::json::parse(request.body, nullptr, false);
    if (parsed.is_discarded() || !parsed.is_object()) {
        error = error_response(400, "the body is not a JSON object");
        return {};
    }
    return parsed;
}

}  // namespace moat::api
