// An HTTP/1.1 response written to bytes: status line, the given headers, Content-Length (and
// Connection: close when the connection ends after it), then the body.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace moat::http {

struct Response {
    int status = 200;
    std::vector<std::pair<std::string, std::string>> headers;
    std::string body;
    bool close = false;  ///< the server closes the connection after sending it

    Response& header(std::string name, std::string value) {
        headers.emplace_back(std::move(name), std::move(value));
        return *this;
    }
};

/// "OK", "Not Found", ...: the reason phrase of the statuses this project sends.
[[nodiscard]] std::string_view reason_of(int status) noexcept;

/// The response's bytes. With `head_only` (a HEAD request) the body is left out but its length
/// stays in Content-Length.
[[nodiscard]] std::string serialize(const Response& response, bool head_only = false);

}  // namespace moat::http
