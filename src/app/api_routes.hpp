// What the HTTP endpoint answers: the dashboard's files (embedded, "/" is index.html), the REST
// API under /api/ (rest_api.hpp), /metrics (Prometheus text) and /health (JSON), never needing a
// login. Anything else is 404; a known path with another method 405 with Allow.
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "moat/api/http_server.hpp"
#include "moat/http/request.hpp"
#include "moat/http/response.hpp"

namespace moat::app {

class RestApi;

/// The Content-Security-Policy of the dashboard's pages: its own files only, no inline code.
inline constexpr const char* kDashboardPolicy =
    "default-src 'self'; img-src 'self' data:; frame-ancestors 'none'; base-uri 'none'; "
    "form-action 'self'";

/// `metrics` makes the /metrics page when asked for it; `rest` may be null (no REST API).
[[nodiscard]] std::optional<http::Response> api_route(const http::Request& request,
                                                      const api::Peer& peer,
                                                      const api::Responder& later, RestApi* rest,
                                                      const std::function<std::string()>& metrics);

}  // namespace moat::app
