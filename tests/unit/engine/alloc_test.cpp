// The engine's answers known at once (blocked, local, localhost, cached, refused) allocate
// nothing once warm: a counting operator new around decide().
#include <gtest/gtest.h>

#include "engine_fixtures.hpp"
#include "support/alloc_counter.hpp"

namespace moat::engine {
namespace {

using test::Harness;
using test::QuerySpec;

TEST(EngineAlloc, CounterIsLive) { EXPECT_GE(allocations_in_a_control(), 1U); }

TEST(EngineAlloc, AnswersKnownAtOnceAllocateNothing) {
    Harness h;
    h.block("ads.example\n");
    h.local.add_address(test::name("nas.lan"), test::v4(192, 168, 1, 10));
    h.options.allowed_clients = {test::cidr(test::v4(192, 168, 0, 0), 16)};
    h.build();

    // Warm the cache: one forwarded query, completed.
    const auto cached_query = test::make_query({.qname = "www.example.com"});
    ASSERT_EQ(h.decide_raw(cached_query).action, Action::forward);
    ASSERT_EQ(h.complete(test::ReplySpec{.records = {test::a_rr("www.example.com", {1, 2, 3, 4})}})
                  .outcome,
              Outcome::forwarded);

    struct Case {
        const char* what;
        std::vector<std::uint8_t> query;
        Outcome expected;
        Client from;
    };
    const Client inside = test::client_at(test::v4(192, 168, 1, 50));
    const Client outside = test::client_at(test::v4(203, 0, 113, 9));
    const std::vector<Case> cases = {
        {"blocked", test::make_query({.qname = "ads.example"}), Outcome::blocked, inside},
        {"blocked with EDNS", test::make_query({.qname = "ads.example", .edns = true}),
         Outcome::blocked, inside},
        {"local", test::make_query({.qname = "nas.lan"}), Outcome::local, inside},
        {"localhost", test::make_query({.qname = "localhost"}), Outcome::local, inside},
        {"blocked with EDNS Client Subnet",
         test::make_query(
             {.qname = "ads.example", .edns = true, .edns_options = test::ecs_option()}),
         Outcome::blocked, inside},
        {"cached", cached_query, Outcome::cached, inside},
        {"cached with EDNS Client Subnet",
         test::make_query(
             {.qname = "www.example.com", .edns = true, .edns_options = test::ecs_option()}),
         Outcome::cached, inside},
        {"refused", test::make_query({.qname = "www.example.com"}), Outcome::refused, outside},
    };
    for (const Case& c : cases) {
        (void)h.decide_raw(c.query, c.from);  // first use of each path may size its buffers
        std::size_t n = 0;
        Decision d;
        {
            const Counting counting;
            d = h.decide_raw(c.query, c.from);
            n = Counting::stop();
        }
        EXPECT_EQ(d.outcome, c.expected) << c.what;
        EXPECT_EQ(n, 0U) << c.what << ": heap allocations per query";
    }
}

}  // namespace
}  // namespace moat::engine
