// Who may use the REST API: a browser signed in with the password (a session cookie, plus a CSRF
// token on every request that changes something), or a script with an API token (a bearer
// token). With no password set the API is open, and the app listens on loopback only.
//
// Sessions live in memory (a restart signs everyone out), at most kMaxSessions at once (the
// oldest go first), each for a week. Failed logins and failed tokens are counted per client
// address: kMaxFailures in kFailureWindow and that address waits for the window to pass. Times
// are passed in (steady clock), so tests drive them.
#pragma once

#include <asio/ip/address.hpp>
#include <chrono>
#include <cstddef>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "moat/http/request.hpp"

namespace moat::api {

using SteadyTime = std::chrono::steady_clock::time_point;

struct AuthOptions {
    std::string password_hash;              ///< Argon2id PHC string; empty: no password
    std::vector<std::string> token_hashes;  ///< Argon2id PHC strings of the API tokens
};

class LoginLimiter {
public:
    static constexpr unsigned kMaxFailures = 5;
    static constexpr std::chrono::seconds kFailureWindow{60};
    static constexpr std::size_t kMaxTracked = 4096;

    /// How long `address` must still wait, if it must.
    [[nodiscard]] std::optional<std::chrono::seconds> wait(const asio::ip::address& address,
                                                           SteadyTime now) const;
    void failed(const asio::ip::address& address, SteadyTime now);
    void succeeded(const asio::ip::address& address);

private:
    struct Record {
        SteadyTime window_start;
        unsigned failures = 0;
    };
    std::map<asio::ip::address, Record> records_;
};

class Sessions {
public:
    static constexpr std::size_t kMaxSessions = 64;
    static constexpr std::chrono::hours kLifetime{24 * 7};

    struct Session {
        std::string csrf;
        SteadyTime created;
    };
    /// A new session: its id (the cookie's value) and CSRF token.
    std::pair<std::string, std::string> create(SteadyTime now);
    [[nodiscard]] const Session* find(std::string_view id, SteadyTime now) const;
    void remove(std::string_view id);
    void clear() { sessions_.clear(); }

private:
    std::map<std::string, Session, std::less<>> sessions_;
};

/// The decision on one request to a protected path.
struct Access {
    /// A Bearer token not seen yet: the caller checks it against the hashes off the event loop
    /// (Argon2 takes tens of ms), then calls Authenticator::token_checked().
    static constexpr int kCheckToken = 0;

    int status = 200;     ///< 200: go on; kCheckToken; 401, 403 or 429: refused
    std::string error;    ///< why not, for the JSON answer
    std::string session;  ///< the session id when signed in by cookie
    std::optional<std::chrono::seconds> retry_after;  ///< with 429
    std::string token;                                ///< with kCheckToken
};

class Authenticator {
public:
    static constexpr const char* kCookie = "moat_session";

    explicit Authenticator(AuthOptions options) : options_(std::move(options)) {}

    [[nodiscard]] bool password_set() const noexcept { return !options_.password_hash.empty(); }
    [[nodiscard]] const AuthOptions& options() const noexcept { return options_; }

    /// May this request go on? `changes` marks a method that changes state (POST, PUT, PATCH,
    /// DELETE): with a cookie session it needs the session's token in X-CSRF-Token.
    Access check(const http::Request& request, const asio::ip::address& peer, SteadyTime now);

    /// The session the request's cookie names, if it is live.
    [[nodiscard]] const Sessions::Session* session_of(const http::Request& request,
                                                      SteadyTime now) const;

    /// Login: call login_allowed() first, then (off the event loop: it takes tens of ms) check
    /// the password with verify_secret(options().password_hash, ...), then login_result().
    [[nodiscard]] std::optional<std::chrono::seconds> login_wait(const asio::ip::address& peer,
                                                                 SteadyTime now) const {
        return limiter_.wait(peer, now);
    }
    /// The new session (id, CSRF token) after a good password; none after a bad one.
    std::optional<std::pair<std::string, std::string>> login_result(bool password_ok,
                                                                    const asio::ip::address& peer,
                                                                    SteadyTime now);
    void logout(const http::Request& request);
    /// The result of checking an Access::kCheckToken token against `hashes` (the token hashes
    /// when the check started): a good token is remembered, a bad one counts as a failure.
    Access token_checked(bool ok, const std::string& token, const std::vector<std::string>& hashes,
                         const asio::ip::address& peer, SteadyTime now);

    /// The Set-Cookie value that sets or clears the session cookie.
    [[nodiscard]] static std::string cookie(std::string_view session_id);
    [[nodiscard]] static std::string clearing_cookie();

private:
    AuthOptions options_;
    Sessions sessions_;
    LoginLimiter limiter_;
    std::set<std::string, std::less<>> good_tokens_;  ///< tokens already checked against a hash
};

/// The value of cookie `name` in the request's Cookie headers.
[[nodiscard]] std::optional<std::string_view> cookie_value(const http::Request& request,
                                                           std::string_view name);

}  // namespace moat::api
