// What the API answers: GET or HEAD of /metrics (Prometheus text) and /health (JSON); 404 for
// any other path, 405 (with Allow) for any other method.
#pragma once

#include <functional>
#include <string>

#include "moat/http/request.hpp"
#include "moat/http/response.hpp"

namespace moat::app {

/// `metrics` makes the /metrics page when asked for it.
[[nodiscard]] http::Response api_route(const http::Request& request,
                                       const std::function<std::string()>& metrics);

}  // namespace moat::app
