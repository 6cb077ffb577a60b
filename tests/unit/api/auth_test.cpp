// Sign-in without sockets: Argon2id hashes that verify only their own secret, the login limiter's
// window, sessions that expire and are bounded, and the access check (cookie + CSRF on changes,
// bearer tokens, the limiter on bad tokens).
#include "moat/api/auth.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>

#include "moat/api/password.hpp"
#include "support/emulation.hpp"

namespace moat::api {
namespace {

// Cheap parameters: the tests check behaviour, not cost.
constexpr HashCost kCheap{256, 1, 1};

const asio::ip::address kAlice = asio::ip::make_address("192.168.1.20");
const asio::ip::address kMallory = asio::ip::make_address("192.168.1.66");

/// A request with the given method and headers, parsed by the real parser.
struct Req {
    std::string text;
    http::Request request;
    Req(const std::string& method, const std::vector<std::string>& headers) {
        text = method + " /api/stats/summary HTTP/1.1\r\nHost: x\r\n";
        for (const auto& h : headers) {
            text += h + "\r\n";
        }
        text += "Content-Length: 0\r\n\r\n";
        const auto parsed = http::parse_request(text, request);
        EXPECT_EQ(parsed.state, http::Parsed::State::complete) << text;
    }
};

TEST(Password, HashesVerifyOnlyTheirOwnSecretAndAreSalted) {
    auto a = hash_secret("correct horse", kCheap);
    auto b = hash_secret("correct horse", kCheap);
    ASSERT_TRUE(a) << a.error();
    ASSERT_TRUE(b);
    EXPECT_TRUE(a->starts_with("$argon2id$v=19$m=256,t=1,p=1$")) << *a;
    EXPECT_NE(*a, *b);  // a fresh salt each time
    EXPECT_TRUE(verify_secret(*a, "correct horse"));
    EXPECT_TRUE(verify_secret(*b, "correct horse"));
    EXPECT_FALSE(verify_secret(*a, "correct horsE"));
    EXPECT_FALSE(verify_secret(*a, ""));
    EXPECT_FALSE(verify_secret("$argon2i$v=19$m=256,t=1,p=1$c2FsdHNhbHQ$aGFzaA", "x"));
    EXPECT_FALSE(verify_secret("$argon2id$garbage", "x"));
    // The default cost is OWASP's (19 MiB, two passes): minutes under qemu, so only natively.
    if (moat::test::emulator() != nullptr) {
        return;
    }
    auto strong = hash_secret("pw");
    ASSERT_TRUE(strong);
    EXPECT_TRUE(strong->starts_with("$argon2id$v=19$m=19456,t=2,p=1$")) << *strong;
}

TEST(Password, RandomHexAndConstantTimeCompare) {
    const std::string a = random_hex(32);
    EXPECT_EQ(a.size(), 64U);
    EXPECT_EQ(a.find_first_not_of("0123456789abcdef"), std::string::npos);
    EXPECT_NE(a, random_hex(32));
    EXPECT_TRUE(constant_time_equal("abc", "abc"));
    EXPECT_FALSE(constant_time_equal("abc", "abd"));
    EXPECT_FALSE(constant_time_equal("abc", "ab"));
}

TEST(LoginLimiter, FiveFailuresInAMinuteWaitOutTheWindow) {
    LoginLimiter l;
    const SteadyTime t0{};
    for (unsigned i = 0; i < LoginLimiter::kMaxFailures - 1; ++i) {
        l.failed(kMallory, t0 + std::chrono::seconds(i));
        EXPECT_FALSE(l.wait(kMallory, t0 + std::chrono::seconds(i)));
    }
    l.failed(kMallory, t0 + std::chrono::seconds(10));
    const auto wait = l.wait(kMallory, t0 + std::chrono::seconds(10));
    ASSERT_TRUE(wait);
    EXPECT_EQ(wait->count(), 50);  // the window began at the first failure
    EXPECT_FALSE(l.wait(kAlice, t0 + std::chrono::seconds(10)));  // per address
    EXPECT_FALSE(l.wait(kMallory, t0 + std::chrono::seconds(60)));
    // A success forgets the failures.
    l.failed(kAlice, t0);
    l.succeeded(kAlice);
    for (unsigned i = 0; i < LoginLimiter::kMaxFailures - 1; ++i) {
        l.failed(kAlice, t0);
    }
    EXPECT_FALSE(l.wait(kAlice, t0));
}

TEST(LoginLimiter, TracksABoundedNumberOfAddresses) {
    LoginLimiter l;
    const SteadyTime t0{};
    l.failed(kMallory, t0);
    for (std::uint32_t i = 0; i < LoginLimiter::kMaxTracked + 10; ++i) {
        l.failed(asio::ip::make_address_v4(0x0A000000U + i), t0 + std::chrono::milliseconds(i + 1));
    }
    // The oldest record went to make room; the newest are kept.
    for (unsigned i = 0; i < LoginLimiter::kMaxFailures; ++i) {
        l.failed(kAlice, t0 + std::chrono::seconds(5));
    }
    EXPECT_TRUE(l.wait(kAlice, t0 + std::chrono::seconds(5)));
}

TEST(Sessions, ExpireAndAreBounded) {
    Sessions s;
    const SteadyTime t0{};
    const auto [id, csrf] = s.create(t0);
    EXPECT_EQ(id.size(), 64U);
    EXPECT_NE(id, csrf);
    ASSERT_NE(s.find(id, t0 + std::chrono::hours(1)), nullptr);
    EXPECT_EQ(s.find(id, t0 + std::chrono::hours(1))->csrf, csrf);
    EXPECT_EQ(s.find(id, t0 + Sessions::kLifetime), nullptr);
    EXPECT_EQ(s.find("nope", t0), nullptr);
    for (std::size_t i = 0; i < Sessions::kMaxSessions; ++i) {
        (void)s.create(t0 + std::chrono::seconds(1 + i));
    }
    EXPECT_EQ(s.find(id, t0 + std::chrono::seconds(100)), nullptr);  // the oldest went
    s.remove(id);
}

TEST(Authenticator, OpenWithoutAPassword) {
    Authenticator a({});
    Req r("POST", {});
    EXPECT_FALSE(a.password_set());
    EXPECT_EQ(a.check(r.request, kAlice, {}).status, 200);
}

TEST(Authenticator, CookieSessionsNeedTheCsrfTokenToChangeThings) {
    Authenticator a({*hash_secret("pw", kCheap), {}});
    const SteadyTime now{};
    EXPECT_EQ(a.check(Req("GET", {}).request, kAlice, now).status, 401);
    EXPECT_FALSE(a.login_result(false, kAlice, now));
    const auto session = a.login_result(true, kAlice, now);
    ASSERT_TRUE(session);
    const std::string cookie = "Cookie: theme=dark; moat_session=" + session->first;
    EXPECT_EQ(a.check(Req("GET", {cookie}).request, kAlice, now).status, 200);
    EXPECT_EQ(a.check(Req("POST", {cookie}).request, kAlice, now).status, 403);
    EXPECT_EQ(
        a.check(Req("POST", {cookie, "X-CSRF-Token: " + std::string(64, 'a')}).request, kAlice, now)
            .status,
        403);
    EXPECT_EQ(
        a.check(Req("DELETE", {cookie, "X-CSRF-Token: " + session->second}).request, kAlice, now)
            .status,
        200);
    const std::string set = Authenticator::cookie(session->first);
    EXPECT_NE(set.find("HttpOnly"), std::string::npos);
    EXPECT_NE(set.find("SameSite=Strict"), std::string::npos);
    a.logout(Req("POST", {cookie}).request);
    EXPECT_EQ(a.check(Req("GET", {cookie}).request, kAlice, now).status, 401);
}

TEST(Authenticator, TheClearingCookieMatchesTheSessionCookieAndExpiresIt) {
    // A browser drops a cookie only when the clearing one has the same name and path.
    const std::string set = Authenticator::cookie("abc");
    const std::string clear = Authenticator::clearing_cookie();
    const std::string name = std::string(Authenticator::kCookie) + "=";
    ASSERT_TRUE(set.starts_with(name + "abc;"));
    EXPECT_TRUE(clear.starts_with(name + ";"));
    const auto attributes = [](const std::string& cookie) {
        return cookie.substr(cookie.find(';'), cookie.find("; Max-Age=") - cookie.find(';'));
    };
    EXPECT_EQ(attributes(clear), attributes(set));
    EXPECT_EQ(attributes(clear), "; Path=/; HttpOnly; SameSite=Strict");
    EXPECT_TRUE(clear.ends_with("; Max-Age=0"));
    EXPECT_FALSE(set.ends_with("; Max-Age=0"));
}

/// What the API does with a Bearer token: check(), and for a token not seen yet the hash check
/// (off the event loop there), then token_checked().
Access bearer(Authenticator& a, std::string_view method, const std::string& token,
              const asio::ip::address& peer, SteadyTime now) {
    Access access =
        a.check(Req(std::string(method), {"Authorization: Bearer " + token}).request, peer, now);
    if (access.status != Access::kCheckToken) {
        return access;
    }
    EXPECT_EQ(access.token, token);
    const auto& hashes = a.options().token_hashes;
    const bool ok = std::any_of(hashes.begin(), hashes.end(),
                                [&](const std::string& h) { return verify_secret(h, token); });
    return a.token_checked(ok, access.token, hashes, peer, now);
}

TEST(Authenticator, BearerTokensAndTheLimiterOnBadOnes) {
    Authenticator a({*hash_secret("pw", kCheap), {*hash_secret("tok3n", kCheap)}});
    const SteadyTime now{};
    EXPECT_EQ(a.check(Req("POST", {"Authorization: Bearer tok3n"}).request, kAlice, now).status,
              Access::kCheckToken)
        << "a token not seen yet is checked by the caller, off the event loop";
    EXPECT_EQ(bearer(a, "POST", "tok3n", kAlice, now).status, 200);
    EXPECT_EQ(a.check(Req("POST", {"Authorization: bearer tok3n"}).request, kAlice, now).status,
              200)
        << "then remembered";
    for (unsigned i = 0; i < LoginLimiter::kMaxFailures; ++i) {
        EXPECT_EQ(bearer(a, "GET", "guess", kMallory, now).status, 401);
    }
    const Access limited = bearer(a, "GET", "tok3n", kMallory, now);
    EXPECT_EQ(limited.status, 429);
    ASSERT_TRUE(limited.retry_after);
    EXPECT_EQ(bearer(a, "GET", "tok3n", kAlice, now).status, 200);
}

TEST(Authenticator, ATokenCheckedAgainstOldHashesIsNotRemembered) {
    Authenticator a({*hash_secret("pw", kCheap), {*hash_secret("tok3n", kCheap)}});
    const SteadyTime now{};
    const std::vector<std::string> old_hashes{*hash_secret("old", kCheap)};
    EXPECT_EQ(a.token_checked(true, "old", old_hashes, kAlice, now).status, 401);
    EXPECT_EQ(a.check(Req("GET", {"Authorization: Bearer old"}).request, kAlice, now).status,
              Access::kCheckToken);
}

TEST(CookieValue, FindsTheNamedCookieOnly) {
    Req r("GET", {"Cookie: a=1; moat_session_x=2", "Cookie: moat_session=3"});
    EXPECT_EQ(cookie_value(r.request, "moat_session"), "3");
    EXPECT_EQ(cookie_value(r.request, "a"), "1");
    EXPECT_FALSE(cookie_value(r.request, "b"));
}

}  // namespace
}  // namespace moat::api
