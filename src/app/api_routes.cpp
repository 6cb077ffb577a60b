#include "api_routes.hpp"

#include <nlohmann/json.hpp>

#include "embedded.hpp"
#include "moat/api/router.hpp"
#include "rest_api.hpp"
#include "web_assets.hpp"

namespace moat::app {
namespace {

const WebAsset* asset_for(std::string_view path) {
    if (path == "/") {
        path = "/index.html";
    }
    for (const WebAsset& a : web_assets()) {
        if (a.path == path) {
            return &a;
        }
    }
    return nullptr;
}

http::Response only_get(std::string_view method, http::Response ok) {
    if (method != "GET" && method != "HEAD") {
        http::Response r = api::error_response(405, "method not allowed");
        r.header("Allow", "GET, HEAD");
        return r;
    }
    return ok;
}

}  // namespace

std::optional<http::Response> api_route(const http::Request& request, const api::Peer& peer,
                                        const api::Responder& later, RestApi* rest,
                                        const std::function<std::string()>& metrics) {
    const std::string_view path = request.path;
    if (path.starts_with("/api/") && rest != nullptr) {
        return rest->handle(request, peer, later);
    }
    if (path == "/health") {
        return only_get(
            request.method,
            api::json_response(200, {{"status", "ok"}, {"version", std::string(version())}}));
    }
    if (path == "/metrics") {
        if (request.method != "GET" && request.method != "HEAD") {
            return only_get(request.method, {});
        }
        http::Response r;
        r.header("Content-Type", "text/plain; version=0.0.4; charset=utf-8");
        r.body = metrics();
        return r;
    }
    if (const WebAsset* a = asset_for(path); a != nullptr && rest != nullptr) {
        if (request.method != "GET" && request.method != "HEAD") {
            return only_get(request.method, {});
        }
        http::Response r;
        r.header("Content-Type", std::string(a->content_type));
        r.header("Content-Security-Policy", kDashboardPolicy);
        // Embedded files change only with the binary; revalidating costs one small request.
        r.header("Cache-Control", "no-cache");
        r.body = std::string(a->body);
        return r;
    }
    return api::error_response(404, "no such path: " + std::string(path));
}

}  // namespace moat::app
