#include "moat/http/request.hpp"

#include <charconv>

#include "moat/core/ascii.hpp"

namespace moat::http {
namespace {

constexpr std::string_view kCrlf = "\r\n";

/// RFC 9110 tchar: the characters of methods and header names.
bool is_tchar(char c) noexcept {
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) {
        return true;
    }
    return std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
}

bool is_token(std::string_view s) noexcept {
    if (s.empty()) {
        return false;
    }
    for (const char c : s) {
        if (!is_tchar(c)) {
            return false;
        }
    }
    return true;
}

/// A request target: visible ASCII, no spaces (RFC 9112 §3.2), starting with '/' (origin form;
/// the only form a server that is not a proxy needs) or "*".
bool is_target(std::string_view s) noexcept {
    if (s.empty() || (s[0] != '/' && s != "*")) {
        return false;
    }
    for (const char c : s) {
        if (c <= ' ' || c >= 0x7F) {
            return false;
        }
    }
    return true;
}

/// A field value may hold visible characters, spaces, tabs and obs-text; never CR, LF or NUL.
bool is_field_value(std::string_view s) noexcept {
    for (const char c : s) {
        const auto u = static_cast<unsigned char>(c);
        if ((u < 0x20 && c != '\t') || u == 0x7F) {
            return false;
        }
    }
    return true;
}

std::string_view trim(std::string_view s) noexcept {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) {
        s.remove_prefix(1);
    }
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) {
        s.remove_suffix(1);
    }
    return s;
}

/// True when the comma-separated `list` holds `token` (case-insensitive), as Connection does.
bool list_has(std::string_view list, std::string_view token) noexcept {
    while (!list.empty()) {
        const std::size_t comma = list.find(',');
        if (ascii_iequal(trim(list.substr(0, comma)), token)) {
            return true;
        }
        if (comma == std::string_view::npos) {
            break;
        }
        list.remove_prefix(comma + 1);
    }
    return false;
}

Parsed fail(Errc e) noexcept { return {Parsed::State::error, 0, e}; }

bool parse_request_line(std::string_view line, Request& out, Errc& error) noexcept {
    if (line.find_first_of("\r\n") != std::string_view::npos) {
        return false;  // a bare CR or LF
    }
    const std::size_t sp1 = line.find(' ');
    const std::size_t sp2 = sp1 == std::string_view::npos ? sp1 : line.find(' ', sp1 + 1);
    if (sp2 == std::string_view::npos) {
        return false;
    }
    out.method = line.substr(0, sp1);
    out.target = line.substr(sp1 + 1, sp2 - sp1 - 1);
    const std::string_view version = line.substr(sp2 + 1);
    if (!is_token(out.method) || !is_target(out.target)) {
        return false;
    }
    if (version == "HTTP/1.1") {
        out.minor_version = 1;
    } else if (version == "HTTP/1.0") {
        out.minor_version = 0;
    } else {
        const bool http_x_y = version.size() == 8 && version.starts_with("HTTP/") &&
                              version[6] == '.' && version[5] >= '0' && version[5] <= '9' &&
                              version[7] >= '0' && version[7] <= '9';
        error = http_x_y ? Errc::bad_version : Errc::bad_request;
        return false;
    }
    const std::size_t q = out.target.find('?');
    out.path = out.target.substr(0, q);
    out.query = q == std::string_view::npos ? std::string_view{} : out.target.substr(q + 1);
    return true;
}

bool parse_header(std::string_view line, Request& out) noexcept {
    const std::size_t colon = line.find(':');
    if (colon == std::string_view::npos || out.header_count == Request::kMaxHeaders) {
        return false;
    }
    const std::string_view name = line.substr(0, colon);  // no whitespace allowed in it
    const std::string_view value = trim(line.substr(colon + 1));
    if (!is_token(name) || !is_field_value(value)) {
        return false;
    }
    out.headers[out.header_count++] = {name, value};
    return true;
}

/// The body's length from Content-Length (every copy must agree); nullopt for a bad one.
std::optional<std::size_t> content_length(const Request& r) noexcept {
    std::optional<std::size_t> length;
    for (std::size_t i = 0; i < r.header_count; ++i) {
        if (!ascii_iequal(r.headers[i].name, "content-length")) {
            continue;
        }
        const std::string_view v = r.headers[i].value;
        std::size_t n = 0;
        const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
        if (v.empty() || ec != std::errc() || end != v.data() + v.size() ||
            (length && *length != n)) {
            return std::nullopt;
        }
        length = n;
    }
    return length.value_or(0);
}

}  // namespace

int status_of(Errc e) noexcept {
    switch (e) {
        case Errc::bad_request: return 400;
        case Errc::headers_too_large: return 431;
        case Errc::body_too_large: return 413;
        case Errc::unsupported_encoding: return 501;
        case Errc::bad_version: return 505;
    }
    return 400;
}

std::optional<std::string_view> Request::header(std::string_view name) const noexcept {
    for (std::size_t i = 0; i < header_count; ++i) {
        if (ascii_iequal(headers[i].name, name)) {
            return headers[i].value;
        }
    }
    return std::nullopt;
}

/// True when the head (up to `end`) has an LF without its CR: refused at once rather than
/// waited on, since such a request would never end in CRLF CRLF.
bool has_bare_lf(std::string_view buffer, std::size_t end) noexcept {
    for (std::size_t i = buffer.find('\n'); i < end && i != std::string_view::npos;
         i = buffer.find('\n', i + 1)) {
        if (i == 0 || buffer[i - 1] != '\r') {
            return true;
        }
    }
    return false;
}

Parsed parse_request(std::string_view buffer, Request& out, const Limits& limits) noexcept {
    const std::size_t head_end = buffer.find("\r\n\r\n");
    if (has_bare_lf(buffer, head_end == std::string_view::npos ? buffer.size() : head_end)) {
        return fail(Errc::bad_request);
    }
    if (head_end == std::string_view::npos) {
        return buffer.size() > limits.max_head_bytes ? fail(Errc::headers_too_large) : Parsed{};
    }
    if (head_end + 4 > limits.max_head_bytes) {
        return fail(Errc::headers_too_large);
    }
    out = Request{};
    std::string_view head = buffer.substr(0, head_end + 2);  // each line keeps its CRLF
    std::size_t eol = head.find(kCrlf);
    Errc error = Errc::bad_request;
    if (!parse_request_line(head.substr(0, eol), out, error)) {
        return fail(error);
    }
    head.remove_prefix(eol + 2);
    while (!head.empty()) {
        eol = head.find(kCrlf);
        const std::string_view line = head.substr(0, eol);
        // A bare CR or LF inside a line, or a folded continuation line, is refused.
        if (line.find_first_of("\r\n") != std::string_view::npos || line.empty() ||
            line[0] == ' ' || line[0] == '\t' || !parse_header(line, out)) {
            return fail(Errc::bad_request);
        }
        head.remove_prefix(eol + 2);
    }
    if (out.header("transfer-encoding")) {
        return fail(Errc::unsupported_encoding);
    }
    const std::optional<std::size_t> length = content_length(out);
    if (!length) {
        return fail(Errc::bad_request);
    }
    if (*length > limits.max_body_bytes) {
        return fail(Errc::body_too_large);
    }
    const std::size_t body_start = head_end + 4;
    if (buffer.size() - body_start < *length) {
        return Parsed{};
    }
    out.body = buffer.substr(body_start, *length);
    const std::string_view connection = out.header("connection").value_or("");
    out.keep_alive = out.minor_version == 1 ? !list_has(connection, "close")
                                            : list_has(connection, "keep-alive");
    return {Parsed::State::complete, body_start + *length, Errc::bad_request};
}

}  // namespace moat::http
