// The API's front door: sign-in (login, logout, status), the check every other route passes,
// and the write-back of changes to the config file.
#include "rest_api.hpp"

#include <spdlog/spdlog.h>

#include "moat/api/password.hpp"

namespace moat::app {

using api::error_response;
using api::json_response;

RestApi::RestApi(RestBackend& backend, api::AuthOptions auth)
    : backend_(backend), auth_(std::move(auth)) {
    add_auth_routes();
    add_stats_routes();
    add_log_routes();
    add_list_routes();
    add_record_routes();
    add_control_routes();
    add_backup_routes();
}

void RestApi::set_auth(api::AuthOptions auth) {
    const bool same = auth.password_hash == auth_.options().password_hash &&
                      auth.token_hashes == auth_.options().token_hashes;
    if (!same) {
        auth_ = api::Authenticator(std::move(auth));  // a new password ends every session
    }
}

std::optional<http::Response> RestApi::handle(const http::Request& request, const api::Peer& peer,
                                              const api::Responder& later) {
    const bool open_path = request.path == "/api/auth" || request.path == "/api/auth/login" ||
                           request.path == "/api/auth/logout";
    if (!open_path && router_.knows(request.path)) {
        const api::Access access =
            auth_.check(request, peer.address, std::chrono::steady_clock::now());
        if (access.status != 200) {
            http::Response r = error_response(access.status, access.error);
            if (access.retry_after) {
                r.header("Retry-After", std::to_string(access.retry_after->count()));
            }
            return r;
        }
    }
    return router_.route(request, peer, later);
}

void RestApi::add_auth_routes() {
    router_.add("GET", "/api/auth", [this](const http::Request& r, const Params&) {
        const auto* session = auth_.session_of(r, std::chrono::steady_clock::now());
        const bool open = !auth_.password_set();
        return json_response(
            200, {{"password_set", auth_.password_set()},
                  {"authenticated", open || session != nullptr},
                  {"csrf", session != nullptr ? nlohmann::json(session->csrf) : nlohmann::json()}});
    });

    router_.add("POST", "/api/auth/login",
                [this](const http::Request& r, const Params&, const api::Peer& peer,
                       const api::Responder& later) -> std::optional<http::Response> {
                    if (!auth_.password_set()) {
                        return error_response(409, "no password is set: the API needs no login");
                    }
                    std::optional<http::Response> bad;
                    const nlohmann::json body = api::body_object(r, bad);
                    if (bad) {
                        return bad;
                    }
                    if (!body.contains("password") || !body["password"].is_string()) {
                        return error_response(400, R"(send {"password": "..."})");
                    }
                    if (const auto wait =
                            auth_.login_wait(peer.address, std::chrono::steady_clock::now())) {
                        http::Response limited =
                            error_response(429, "too many failed logins; try again later");
                        limited.header("Retry-After", std::to_string(wait->count()));
                        return limited;
                    }
                    // Argon2id takes tens of milliseconds: checked on the worker, answered later.
                    backend_.offload([this, hash = auth_.options().password_hash,
                                      password = body["password"].get<std::string>(),
                                      address = peer.address, later] {
                        const bool ok = api::verify_secret(hash, password);
                        backend_.post([this, ok, address, later] {
                            auto session =
                                auth_.login_result(ok, address, std::chrono::steady_clock::now());
                            if (!session) {
                                spdlog::warn("api: failed login from {}", address.to_string());
                                later(error_response(401, "wrong password"));
                                return;
                            }
                            http::Response good = json_response(200, {{"csrf", session->second}});
                            good.header("Set-Cookie", api::Authenticator::cookie(session->first));
                            later(std::move(good));
                        });
                    });
                    return std::nullopt;
                });

    router_.add("POST", "/api/auth/logout", [this](const http::Request& r, const Params&) {
        auth_.logout(r);
        http::Response out;
        out.status = 204;
        out.header("Set-Cookie", api::Authenticator::clearing_cookie());
        return out;
    });
}

std::optional<http::Response> RestApi::change_config(const ConfigStore::Change& change,
                                                     const api::Responder& later,
                                                     int success_status,
                                                     nlohmann::json success_body) {
    if (auto edited = backend_.store().edit(change); !edited) {
        return error_response(edited.error().status, edited.error().error);
    }
    backend_.reload(
        [later, success_status, body = std::move(success_body)](const std::string& error) {
            if (!error.empty()) {
                later(error_response(500, "the file was written but did not load: " + error));
            } else if (success_status == 204) {
                http::Response r;
                r.status = 204;
                later(std::move(r));
            } else {
                later(json_response(success_status, body));
            }
        });
    return std::nullopt;
}

}  // namespace moat::app
