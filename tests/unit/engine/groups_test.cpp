// Client groups in the engine: who is in which group (prefix, IPv4-mapped address, MAC through
// the neighbour lookup), each group's lists and blocking mode, AAAA filtering, and schedule
// windows (crossing midnight and Sunday night) switching lists as the wall clock moves, and
// pauses.
#include "groups.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <ctime>

#include "engine_fixtures.hpp"
#include "moat/engine/engine.hpp"

namespace moat::engine {
namespace {

using test::group;
using test::Harness;
using test::QuerySpec;
using wire::RrType;

constexpr unsigned kNxDomain = 3;
constexpr std::uint32_t kBlockList = 1;  // engine_fixtures: snapshot_of() list ids
constexpr std::uint32_t kAllowList = 2;

/// A neighbour table of one entry: the kernel's table is the app's; the engine sees this.
class OneNeighbour final : public NeighbourLookup {
public:
    OneNeighbour(IpAddress ip, MacAddress mac) : ip_(ip), mac_(mac) {}
    [[nodiscard]] std::optional<MacAddress> mac_of(const IpAddress& ip) const noexcept override {
        ++lookups;
        return ip == ip_ ? std::optional(mac_) : std::nullopt;
    }
    mutable int lookups = 0;

private:
    IpAddress ip_;
    MacAddress mac_;
};

std::chrono::system_clock::time_point utc(int year, int month, int day, int hour, int minute) {
    std::tm tm{};
    tm.tm_year = year - 1900;
    tm.tm_mon = month - 1;
    tm.tm_mday = day;
    tm.tm_hour = hour;
    tm.tm_min = minute;
    return std::chrono::system_clock::from_time_t(timegm(&tm));
}

class UtcZone : public ::testing::Test {
protected:
    void SetUp() override {
        ::setenv("TZ", "UTC", 1);  // NOLINT(concurrency-mt-unsafe): before the engine's threads
        ::tzset();
    }
};

TEST(GroupWindows, OpenInsideIncludingAcrossMidnightAndSundayNight) {
    ScheduleWindow evening;  // every day 21:00-07:00
    evening.from_minute = 21 * 60;
    evening.to_minute = 7 * 60;
    EXPECT_TRUE(window_open(evening, 21 * 60));             // Monday 21:00
    EXPECT_TRUE(window_open(evening, 1440 + 6 * 60 + 59));  // Tuesday 06:59
    EXPECT_FALSE(window_open(evening, 1440 + 7 * 60));      // Tuesday 07:00: ended
    EXPECT_FALSE(window_open(evening, 12 * 60));
    ScheduleWindow sunday = evening;
    sunday.days = 1U << 6U;                                // starts on Sunday only
    EXPECT_TRUE(window_open(sunday, 6 * 1440 + 23 * 60));  // Sunday 23:00
    EXPECT_TRUE(window_open(sunday, 3 * 60));              // Monday 03:00, wrapped
    EXPECT_FALSE(window_open(sunday, 21 * 60 + 30));       // Monday evening: not Monday's
    ScheduleWindow day;                                    // 08:00-15:00 Monday..Friday
    day.from_minute = 8 * 60;
    day.to_minute = 15 * 60;
    day.days = 0x1F;
    EXPECT_TRUE(window_open(day, 4 * 1440 + 14 * 60 + 59));  // Friday 14:59
    EXPECT_FALSE(window_open(day, 5 * 1440 + 9 * 60));       // Saturday 09:00
}

TEST_F(UtcZone, MinuteOfWeekCountsFromMonday) {
    EXPECT_EQ(local_minute_of_week(utc(2026, 11, 30, 0, 0)), 0U);  // a Monday
    EXPECT_EQ(local_minute_of_week(utc(2026, 12, 6, 23, 59)), 7U * 1440 - 1);
    EXPECT_EQ(local_minute_of_week(utc(2026, 12, 2, 21, 30)), 2U * 1440 + 21 * 60 + 30);
}

TEST(GroupMembership, FirstGroupNamingTheClientWinsElseDefault) {
    EngineOptions o;
    o.groups = {group("kids", {test::cidr(test::v4(192, 168, 1, 64), 28)}),
                group("wide", {test::cidr(test::v4(192, 168, 1, 0), 24)})};
    const Groups groups(o);
    EXPECT_EQ(groups.group_of(test::client_at(test::v4(192, 168, 1, 70))), 1U);
    EXPECT_EQ(groups.group_of(test::client_at(test::v4(192, 168, 1, 20))), 2U);
    EXPECT_EQ(groups.group_of(test::client_at(test::v4_mapped(192, 168, 1, 65))), 1U)
        << "a dual-stack socket's mapped IPv4 address";
    EXPECT_EQ(groups.group_of(test::client_at(test::v4(10, 0, 0, 1))), 0U);
}

TEST(GroupMembership, MacAddressesComeFromTheNeighbourLookup) {
    const MacAddress tablet = *MacAddress::parse("AA:bb:cc:00:11:22");
    OneNeighbour table(test::v4(192, 168, 1, 33), tablet);
    EngineOptions o;
    GroupOptions kids = group("kids", {});
    kids.macs = {tablet};
    o.groups = {group("printer", {test::cidr(test::v4(192, 168, 1, 9), 32)}), kids};
    o.neighbours = &table;
    const Groups groups(o);
    EXPECT_EQ(groups.group_of(test::client_at(test::v4(192, 168, 1, 33))), 2U);
    EXPECT_EQ(groups.group_of(test::client_at(test::v4(192, 168, 1, 34))), 0U);
    EXPECT_EQ(groups.group_of(test::client_at(test::v4(192, 168, 1, 9))), 1U);
    EXPECT_EQ(table.lookups, 2) << "a prefix match needs no lookup";
}

TEST(GroupPolicy, EachGroupHasItsListsModeAndAaaaFilter) {
    Harness h;
    h.block("ads.example\n", "ads.example\n");  // list 1 blocks, list 2 allows
    GroupOptions strict = group("strict", {test::cidr(test::v4(192, 168, 1, 70), 32)});
    strict.every_list = false;
    strict.lists = {kBlockList};  // the blocklist without the allowlist
    strict.blocking_mode = BlockingMode::nxdomain;
    strict.filter_aaaa = true;
    h.options.groups = {strict};
    const Client kid = test::client_at(test::v4(192, 168, 1, 70));
    EXPECT_EQ(h.decide({.qname = "ads.example"}).outcome, Outcome::pending) << "allowlisted";
    EXPECT_EQ(h.decide({.qname = "ads.example"}, kid).outcome, Outcome::blocked);
    EXPECT_EQ(h.answer().rcode, kNxDomain);
    const Decision aaaa = h.decide({.qname = "www.example", .qtype = RrType::aaaa}, kid);
    EXPECT_EQ(aaaa.outcome, Outcome::local);
    EXPECT_EQ(h.answer().rcode, 0U);
    EXPECT_TRUE(h.answer().answers().empty());
    EXPECT_EQ(h.decide({.qname = "www.example", .qtype = RrType::aaaa}).outcome, Outcome::pending);
}

TEST_F(UtcZone, ScheduledListsCountOnlyInsideTheirWindow) {
    Harness h;
    h.block("games.example\n");
    GroupOptions kids = group("kids", {test::cidr(test::v4(192, 168, 1, 70), 32)});
    ScheduleWindow night;
    night.lists = {kBlockList};
    night.from_minute = 21 * 60;
    night.to_minute = 7 * 60;
    kids.schedule = {night};
    h.options.groups = {kids};
    h.options.clock = &h.clock();
    const Client kid = test::client_at(test::v4(192, 168, 1, 70));
    h.clock().set_wall(utc(2026, 11, 30, 21, 30));
    h.clock().advance(std::chrono::seconds{5});
    EXPECT_EQ(h.decide({.qname = "games.example"}, kid).outcome, Outcome::blocked);
    h.clock().set_wall(utc(2026, 12, 1, 12, 0));
    EXPECT_EQ(h.decide({.qname = "games.example"}, kid).outcome, Outcome::blocked)
        << "the windows are looked at once a second";
    h.clock().advance(std::chrono::seconds{1});
    EXPECT_EQ(h.decide({.qname = "games.example"}, kid).outcome, Outcome::pending);
    EXPECT_EQ(h.decide({.qname = "games.example"}).outcome, Outcome::blocked)
        << "the default group is not scheduled";
}

TEST(GroupPolicy, ANewSnapshotRebuildsTheSelectionByListId) {
    Harness h;
    h.block("x.example\n");
    GroupOptions kids = group("kids", {test::cidr(test::v4(192, 168, 1, 70), 32)});
    kids.every_list = false;
    kids.lists = {kAllowList};  // only the (absent) allowlist: nothing blocks for kids
    h.options.groups = {kids};
    const Client kid = test::client_at(test::v4(192, 168, 1, 70));
    EXPECT_EQ(h.decide({.qname = "x.example"}, kid).outcome, Outcome::pending);
    h.block("y.example\n", "x.example\n");  // a reload: new snapshot, list ids stay
    EXPECT_EQ(h.decide({.qname = "y.example"}, kid).outcome, Outcome::pending);
    EXPECT_EQ(h.decide({.qname = "y.example"}).outcome, Outcome::blocked);
}

TEST(GroupPolicy, AGroupsOwnUpstreamsGetItsRouteAndCachePartition) {
    Harness h;
    GroupOptions kids = group("kids", {test::cidr(test::v4(192, 168, 1, 70), 32)});
    kids.route = 2;
    kids.cache_partition = 1;
    h.options.groups = {kids};
    ConditionalRoute lan;
    lan.domains = {test::name("lan")};
    h.options.conditional = {lan};
    const Client kid = test::client_at(test::v4(192, 168, 1, 70));
    ASSERT_EQ(h.decide({.qname = "www.example"}, kid).outcome, Outcome::pending);
    EXPECT_EQ(h.pending.route, 2U);
    EXPECT_EQ(h.pending.key.partition(), 1U);
    h.complete(test::ReplySpec{.records = {test::a_rr("www.example", {192, 0, 2, 7})}});
    EXPECT_EQ(h.decide({.qname = "www.example"}, kid).outcome, Outcome::cached);
    EXPECT_EQ(h.decide({.qname = "www.example"}).outcome, Outcome::pending)
        << "the default group does not see the kids' cached answer";
    EXPECT_EQ(h.pending.route, 0U);
    ASSERT_EQ(h.decide({.qname = "nas.lan"}, kid).outcome, Outcome::pending);
    EXPECT_EQ(h.pending.route, 1U) << "a conditional forward wins over the group's upstreams";
}

TEST(GroupPolicy, AQueryForwardedBeforeAReloadCompletesWithTheNewGroups) {
    Harness h;
    h.block("ads.example\n");
    h.options.groups = {group("a", {test::cidr(test::v4(10, 0, 0, 1), 32)}),
                        group("b", {test::cidr(test::v4(10, 0, 0, 2), 32)})};
    ASSERT_EQ(h.decide({.qname = "www.example"}, test::client_at(test::v4(10, 0, 0, 2))).outcome,
              Outcome::pending);
    EXPECT_EQ(h.pending.group, 2U);
    h.options.groups.clear();  // the reload: a new engine without groups
    h.build();
    test::ReplySpec reply;
    reply.records.push_back({wire::Section::answer, "www.example", RrType::cname, 300,
                             wire::encode::name(test::name("ads.example"))});
    reply.records.push_back(test::a_rr("ads.example", {198, 51, 100, 9}));
    const Decision d = h.complete(reply);
    EXPECT_EQ(d.outcome, Outcome::blocked) << "the old group index counts as the default group";
}

TEST(GroupPolicy, APauseStopsBlockingForItsGroupUntilItEnds) {
    Harness h;
    h.block("ads.example\n");
    h.options.groups = {group("kids", {test::cidr(test::v4(192, 168, 1, 70), 32)})};
    h.options.default_group.name = "default";
    Pauses pauses;
    h.options.pauses = &pauses;
    h.options.clock = &h.clock();
    const Client kid = test::client_at(test::v4(192, 168, 1, 70));
    h.clock().advance(std::chrono::seconds{10});
    pauses.pause("kids", h.clock().now() + std::chrono::minutes{5});
    EXPECT_EQ(h.decide({.qname = "ads.example"}, kid).outcome, Outcome::pending);
    EXPECT_EQ(h.decide({.qname = "ads.example"}).outcome, Outcome::blocked);
    h.clock().advance(std::chrono::minutes{5});
    EXPECT_EQ(h.decide({.qname = "ads.example"}, kid).outcome, Outcome::blocked) << "ended";
    pauses.pause("", h.clock().now() + std::chrono::minutes{1});
    EXPECT_EQ(h.decide({.qname = "ads.example"}).outcome, Outcome::pending);
    EXPECT_EQ(h.decide({.qname = "ads.example"}, kid).outcome, Outcome::pending);
    pauses.resume("");
    EXPECT_EQ(h.decide({.qname = "ads.example"}, kid).outcome, Outcome::blocked);
}

}  // namespace
}  // namespace moat::engine
