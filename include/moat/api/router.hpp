// Routes of the REST API: a method and a path pattern ("/api/lists/{kind}/{name}") to a handler,
// with the path's parameters and the query string decoded (percent-encoding and '+'). A path no
// route knows gets 404; a known path with another method 405 with Allow.
#pragma once

#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "moat/api/http_server.hpp"

namespace moat::api {

struct Params {
    std::map<std::string, std::string, std::less<>> path;   ///< from {name} segments
    std::map<std::string, std::string, std::less<>> query;  ///< the query string, decoded

    /// The query parameter `name`, or `fallback` when absent.
    [[nodiscard]] std::string query_or(std::string_view name, std::string_view fallback = {}) const;
};

using RouteHandler = std::function<std::optional<http::Response>(
    const http::Request& request, const Params& params, const Peer& peer, const Responder& later)>;

class Router {
public:
    void add(std::string method, std::string_view pattern, RouteHandler handler);
    /// A simple handler that answers at once.
    void add(std::string method, std::string_view pattern,
             std::function<http::Response(const http::Request&, const Params&)> handler);

    [[nodiscard]] bool knows(std::string_view path) const;
    [[nodiscard]] std::optional<http::Response> route(const http::Request& request,
                                                      const Peer& peer,
                                                      const Responder& later) const;

private:
    struct Route {
        std::string method;
        std::vector<std::string> segments;  ///< "{name}" marks a parameter
        RouteHandler handler;
    };
    [[nodiscard]] static bool match(const Route& r, const std::vector<std::string>& segments,
                                    Params& params);
    std::vector<Route> routes_;
};

/// `text` with %XX decoded (and '+' as a space when `plus_is_space`); none when malformed.
[[nodiscard]] std::optional<std::string> percent_decode(std::string_view text,
                                                        bool plus_is_space = false);

/// A JSON answer.
[[nodiscard]] http::Response json_response(int status, const nlohmann::json& body);
/// {"error": text} with `status`.
[[nodiscard]] http::Response error_response(int status, std::string_view text);
/// The request's body as a JSON object, or a 400/415 answer saying why not.
[[nodiscard]] nlohmann::json body_object(const http::Request& request,
                                         std::optional<http::Response>& error);

}  // namespace moat::api
