// The API's front door: sign-in (login, logout, status), the check every other route passes,
// and the write-back of changes to the config file.
#include "rest_api.hpp"

#include <algorithm>
#include <memory>

#include "moat/api/password.hpp"
#include "moat/core/log.hpp"

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

namespace {

/// Bearer tokens being checked on the worker at once; more wait for a 503 (a flood of made-up
/// tokens from many addresses must not queue unbounded work, or memory).
constexpr std::size_t kMaxTokenChecks = 8;

/// A request that outlives its connection's buffer (it waits for a token check): its text
/// written out again and parsed from this copy.
struct HeldRequest {
    std::string text;
    http::Request request;
};

std::shared_ptr<const HeldRequest> hold(const http::Request& r) {
    auto held = std::make_shared<HeldRequest>();
    std::string& t = held->text;
    t.append(r.method).append(" ").append(r.target).append(" HTTP/1.");
    t.append(std::to_string(r.minor_version)).append("\r\n");
    for (std::size_t i = 0; i < r.header_count; ++i) {
        t.append(r.headers[i].name).append(": ").append(r.headers[i].value).append("\r\n");
    }
    t.append("\r\n").append(r.body);
    http::Limits limits;
    limits.max_body_bytes = std::max(limits.max_body_bytes, r.body.size());
    if (http::parse_request(t, held->request, limits).state != http::Parsed::State::complete) {
        return nullptr;  // cannot happen for a request that parsed once
    }
    return held;
}

}  // namespace

std::optional<http::Response> RestApi::handle(const http::Request& request, const api::Peer& peer,
                                              const api::Responder& later) {
    // Logout is not open: signed in by cookie, it needs the CSRF token like any other change
    // (else any page could sign the user out).
    const bool open_path = request.path == "/api/auth" || request.path == "/api/auth/login";
    if (!open_path && router_.knows(request.path)) {
        const api::Access access =
            auth_.check(request, peer.address, std::chrono::steady_clock::now());
        if (access.status == api::Access::kCheckToken) {
            return check_token_then_route(request, access.token, peer, later);
        }
        if (access.status != 200) {
            http::Response r = error_response(access.status, access.error);
            if (access.retry_after) {
                r.header("Retry-After", std::to_string(access.retry_after->count()));
            }
            return r;
        }
    }
    return route(request, peer, later);
}

std::optional<http::Response> RestApi::check_token_then_route(const http::Request& request,
                                                              const std::string& token,
                                                              const api::Peer& peer,
                                                              const api::Responder& later) {
    auto held = hold(request);
    if (token_checks_ >= kMaxTokenChecks || !held) {
        http::Response busy = error_response(503, "busy checking API tokens; try again");
        busy.header("Retry-After", "1");
        return busy;
    }
    ++token_checks_;
    // Argon2id takes tens of milliseconds: checked on the worker, so DNS never waits on it.
    backend_.offload([this, hashes = auth_.options().token_hashes, token, held, peer, later] {
        const bool ok = std::any_of(hashes.begin(), hashes.end(), [&](const std::string& h) {
            return api::verify_secret(h, token);
        });
        backend_.post([this, ok, hashes, token, held, peer, later] {
            --token_checks_;
            const api::Access access = auth_.token_checked(ok, token, hashes, peer.address,
                                                           std::chrono::steady_clock::now());
            if (access.status != 200) {
                later(error_response(access.status, access.error));
                return;
            }
            if (auto answer = route(held->request, peer, later)) {
                later(std::move(*answer));
            }
        });
    });
    return std::nullopt;
}

std::optional<http::Response> RestApi::route(const http::Request& request, const api::Peer& peer,
                                             const api::Responder& later) {
    try {
        return router_.route(request, peer, later);
    } catch (const nlohmann::json::exception& e) {
        // A field of the right name but the wrong JSON type (a number for a name, an array
        // for a flag): the client's mistake, not the server's.
        return error_response(
            400, std::string("a field of the body has the wrong type (") + e.what() + ")");
    }
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
                                log::warn("api: failed login from {}", address.to_string());
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
