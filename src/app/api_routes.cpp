#include "api_routes.hpp"

#include <nlohmann/json.hpp>

#include "embedded.hpp"

namespace moat::app {
namespace {

http::Response json(int status, const nlohmann::json& body) {
    http::Response r;
    r.status = status;
    r.header("Content-Type", "application/json");
    r.body = body.dump() + "\n";
    return r;
}

}  // namespace

http::Response api_route(const http::Request& request,
                         const std::function<std::string()>& metrics) {
    const bool known = request.path == "/metrics" || request.path == "/health";
    if (!known) {
        return json(404, {{"error", "no such path"}, {"path", std::string(request.path)}});
    }
    if (request.method != "GET" && request.method != "HEAD") {
        http::Response r = json(405, {{"error", "method not allowed"}});
        r.header("Allow", "GET, HEAD");
        return r;
    }
    if (request.path == "/health") {
        return json(200, {{"status", "ok"}, {"version", std::string(version())}});
    }
    http::Response r;
    r.header("Content-Type", "text/plain; version=0.0.4; charset=utf-8");
    r.body = metrics();
    return r;
}

}  // namespace moat::app
