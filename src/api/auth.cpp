#include "moat/api/auth.hpp"

#include <algorithm>

#include "moat/api/password.hpp"
#include "moat/core/ascii.hpp"

namespace moat::api {

std::optional<std::chrono::seconds> LoginLimiter::wait(const asio::ip::address& address,
                                                       SteadyTime now) const {
    const auto it = records_.find(address);
    if (it == records_.end() || it->second.failures < kMaxFailures) {
        return std::nullopt;
    }
    const SteadyTime until = it->second.window_start + kFailureWindow;
    if (now >= until) {
        return std::nullopt;
    }
    return std::chrono::ceil<std::chrono::seconds>(until - now);
}

void LoginLimiter::failed(const asio::ip::address& address, SteadyTime now) {
    if (records_.size() >= kMaxTracked && records_.find(address) == records_.end()) {
        // Full: forget records whose window has passed; if none has, the oldest window.
        std::erase_if(records_,
                      [&](const auto& r) { return now >= r.second.window_start + kFailureWindow; });
        if (records_.size() >= kMaxTracked) {
            records_.erase(std::min_element(
                records_.begin(), records_.end(), [](const auto& a, const auto& b) {
                    return a.second.window_start < b.second.window_start;
                }));
        }
    }
    Record& r = records_[address];
    if (r.failures == 0 || now >= r.window_start + kFailureWindow) {
        r = Record{now, 0};
    }
    ++r.failures;
}

void LoginLimiter::succeeded(const asio::ip::address& address) { records_.erase(address); }

std::pair<std::string, std::string> Sessions::create(SteadyTime now) {
    std::erase_if(sessions_, [&](const auto& s) { return now >= s.second.created + kLifetime; });
    if (sessions_.size() >= kMaxSessions) {
        sessions_.erase(std::min_element(
            sessions_.begin(), sessions_.end(),
            [](const auto& a, const auto& b) { return a.second.created < b.second.created; }));
    }
    std::string id = random_hex(32);
    std::string csrf = random_hex(32);
    sessions_.emplace(id, Session{csrf, now});
    return {std::move(id), std::move(csrf)};
}

const Sessions::Session* Sessions::find(std::string_view id, SteadyTime now) const {
    const auto it = sessions_.find(id);
    if (it == sessions_.end() || now >= it->second.created + kLifetime) {
        return nullptr;
    }
    return &it->second;
}

void Sessions::remove(std::string_view id) {
    if (const auto it = sessions_.find(id); it != sessions_.end()) {
        sessions_.erase(it);
    }
}

std::optional<std::string_view> cookie_value(const http::Request& request, std::string_view name) {
    for (std::size_t i = 0; i < request.header_count; ++i) {
        if (!ascii_iequal(request.headers[i].name, "Cookie")) {
            continue;
        }
        std::string_view rest = request.headers[i].value;
        while (!rest.empty()) {
            const std::size_t semi = rest.find(';');
            std::string_view pair = rest.substr(0, semi);
            rest = semi == std::string_view::npos ? std::string_view{} : rest.substr(semi + 1);
            while (!pair.empty() && pair.front() == ' ') {
                pair.remove_prefix(1);
            }
            const std::size_t eq = pair.find('=');
            if (eq != std::string_view::npos && pair.substr(0, eq) == name) {
                return pair.substr(eq + 1);
            }
        }
    }
    return std::nullopt;
}

const Sessions::Session* Authenticator::session_of(const http::Request& request,
                                                   SteadyTime now) const {
    const auto id = cookie_value(request, kCookie);
    return id ? sessions_.find(*id, now) : nullptr;
}

Access Authenticator::token_checked(bool ok, const std::string& token,
                                    const std::vector<std::string>& hashes,
                                    const asio::ip::address& peer, SteadyTime now) {
    if (!ok) {
        limiter_.failed(peer, now);
        return {401, "the API token is not valid", {}, std::nullopt, {}};
    }
    if (hashes != options_.token_hashes) {  // the tokens changed (a reload) during the check
        return {401, "the API tokens changed; send the request again", {}, std::nullopt, {}};
    }
    if (good_tokens_.size() >= 64) {
        good_tokens_.clear();  // bounded; the next use of each checks its hash again
    }
    good_tokens_.emplace(token);
    return {};
}

Access Authenticator::check(const http::Request& request, const asio::ip::address& peer,
                            SteadyTime now) {
    if (!password_set()) {
        return {};
    }
    if (const auto auth = request.header("Authorization")) {
        constexpr std::string_view kBearer = "Bearer ";
        if (auth->size() > kBearer.size() && ascii_iequal(auth->substr(0, 7), kBearer)) {
            if (const auto wait = limiter_.wait(peer, now)) {
                return {429, "too many failed attempts; try again later", {}, *wait, {}};
            }
            // A token is long and random: checked against its hash once (by the caller, off
            // the event loop), then remembered.
            const std::string_view token = auth->substr(kBearer.size());
            if (good_tokens_.find(token) != good_tokens_.end()) {
                return {};
            }
            return {Access::kCheckToken, {}, {}, std::nullopt, std::string(token)};
        }
    }
    const auto id = cookie_value(request, kCookie);
    const Sessions::Session* s = id ? sessions_.find(*id, now) : nullptr;
    if (s == nullptr) {
        return {401, "login required", {}, std::nullopt, {}};
    }
    const std::string_view m = request.method;
    const bool changes = !(m == "GET" || m == "HEAD" || m == "OPTIONS");
    if (changes) {
        const auto token = request.header("X-CSRF-Token");
        if (!token || !constant_time_equal(*token, s->csrf)) {
            return {403, "missing or wrong X-CSRF-Token", std::string(*id), std::nullopt, {}};
        }
    }
    return {200, {}, std::string(*id), std::nullopt, {}};
}

std::optional<std::pair<std::string, std::string>> Authenticator::login_result(
    bool password_ok, const asio::ip::address& peer, SteadyTime now) {
    if (!password_ok) {
        limiter_.failed(peer, now);
        return std::nullopt;
    }
    limiter_.succeeded(peer);
    return sessions_.create(now);
}

void Authenticator::logout(const http::Request& request) {
    if (const auto id = cookie_value(request, kCookie)) {
        sessions_.remove(*id);
    }
}

std::string Authenticator::cookie(std::string_view session_id) {
    return std::string(kCookie) + "=" + std::string(session_id) +
           "; Path=/; HttpOnly; SameSite=Strict; Max-Age=" +
           std::to_string(std::chrono::seconds(Sessions::kLifetime).count());
}

std::string Authenticator::clearing_cookie() {
    // One literal rather than `std::string(kCookie) + "..."`: GCC 12 with a profile-guided build
    // and LTO warns (-Wstringop-overflow) on the inlined concatenation where it is used.
    static constexpr std::string_view kClearing =
        "moat_session=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0";
    static_assert(kClearing.starts_with(std::string_view(kCookie)) &&
                  kClearing[std::string_view(kCookie).size()] == '=');
    return std::string(kClearing);
}

}  // namespace moat::api
