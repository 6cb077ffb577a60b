// The state directory of downloaded lists: status documents round-trip, damaged ones read as
// absent, keys are file-safe and follow the URL, writes are atomic, and the refresh schedule
// (first attempt, backoff after failures, interval plus bounded jitter), and the fetcher
// process's request document. A disk that refuses writes: an error that says why (never a
// throw), the status held in memory, the child's result line carrying it to the parent.
#include <gtest/gtest.h>
#include <unistd.h>

#include <array>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "moat/lists/fetch_process.hpp"
#include "moat/lists/refresh.hpp"
#include "moat/lists/state_dir.hpp"
#include "support/temp_dir.hpp"

namespace moat::lists {
namespace {

using test::TempDir;

ListStatus sample() {
    ListStatus s;
    s.name = "ads";
    s.url = "https://lists.example/ads.txt";
    s.entries = 214895;
    s.lines = 215000;
    s.invalid = 2;
    s.first_invalid = {{17, "not a domain!"}, {90, "bad \xff byte"}};
    s.bytes = 4'300'000;
    s.content_hash = 0xfedcba9876543210ULL;
    s.etag = "\"abc123\"";
    s.last_modified = "Mon, 30 Nov 2026 10:00:00 GMT";
    s.last_changed = 1'795'000'000;
    s.last_attempt = 1'795'000'100;
    s.last_success = 1'795'000'100;
    s.last_error = "HTTP 500";
    s.failures = 3;
    return s;
}

TEST(ListStatus, RoundTripsThroughJson) {
    ListStatus s = sample();
    s.first_invalid[1].text = "bad byte";  // valid UTF-8 survives as it is
    const auto back = status_from_json(to_json(s));
    ASSERT_TRUE(back.has_value());
    EXPECT_EQ(*back, s);
}

TEST(ListStatus, AnFnvHashOfAnEarlierVersionReadsAsNoHash) {
    // Before 2026-12-03 "content_hash" held FNV-1a, which no copy digests to any more: kept, it
    // would make every intact copy read as damaged.
    const auto old = status_from_json(
        R"({"name": "web", "bytes": 12, "content_hash": 12345, "last_changed": 1795000000})");
    ASSERT_TRUE(old);
    EXPECT_EQ(old->bytes, 12U);
    EXPECT_EQ(old->content_hash, 0U);
    const auto current = status_from_json(R"({"name": "web", "content_digest": 12345})");
    ASSERT_TRUE(current);
    EXPECT_EQ(current->content_hash, 12345U);
}

TEST(ListStatus, InvalidUtf8InAListLineIsReplacedNotFatal) {
    const auto back = status_from_json(to_json(sample()));
    ASSERT_TRUE(back.has_value());
    EXPECT_EQ(back->first_invalid[1].line, 90U);
    EXPECT_NE(back->first_invalid[1].text.find("bad "), std::string::npos);
}

TEST(ListStatus, DamagedDocumentsReadAsAbsent) {
    EXPECT_FALSE(status_from_json(""));
    EXPECT_FALSE(status_from_json("{\"entries\": 12"));  // cut short by a crash
    EXPECT_FALSE(status_from_json("[1, 2]"));
    EXPECT_FALSE(status_from_json("{\"entries\": \"many\"}"));
    const auto partial = status_from_json(R"({"name": "x", "entries": 5})");
    ASSERT_TRUE(partial);
    EXPECT_EQ(partial->entries, 5U);
    EXPECT_FALSE(partial->has_copy());
}

TEST(StateDir, KeysAreFileSafeAndFollowTheUrl) {
    const std::string key = StateDir::key_of("../My Lists/ads", "https://a.example/x.txt");
    EXPECT_EQ(key.find('/'), std::string::npos);
    EXPECT_EQ(key.find('.'), std::string::npos);
    EXPECT_EQ(key.rfind("___My_Lists_ads-", 0), 0U) << key;
    EXPECT_EQ(key, StateDir::key_of("../My Lists/ads", "https://a.example/x.txt"));
    EXPECT_NE(key, StateDir::key_of("../My Lists/ads", "https://b.example/x.txt"));
}

TEST(StateDir, WritesStatusAtomicallyAndReadsItBack) {
    const TempDir tmp;
    const StateDir dir(tmp.path() / "lists" / "nested");
    ASSERT_TRUE(dir.ensure()) << "creates missing parents";
    const std::string key = StateDir::key_of("ads", "https://a.example/x");
    EXPECT_FALSE(dir.read_status(key));
    ASSERT_TRUE(dir.write_status(key, sample()));
    EXPECT_EQ(dir.read_status(key), status_from_json(to_json(sample())));
    for (const auto& entry : std::filesystem::directory_iterator(dir.root())) {
        EXPECT_EQ(entry.path().extension(), ".json") << "no temporary file left behind";
    }
    std::ofstream(dir.status_path(key)) << "{\"entries\":";  // damaged by hand
    EXPECT_FALSE(dir.read_status(key));
}

TEST(StateDir, InstallMovesTheCheckedDownloadIntoPlace) {
    const TempDir tmp;
    const StateDir dir(tmp.path());
    const std::string key = "k";
    std::ofstream(dir.copy_path(key)) << "old\n";
    std::ofstream(dir.partial_path(key)) << "new\n";
    ASSERT_TRUE(dir.install_copy(key));
    std::ifstream in(dir.copy_path(key));
    std::string line;
    std::getline(in, line);
    EXPECT_EQ(line, "new");
    EXPECT_FALSE(std::filesystem::exists(dir.partial_path(key)));
    EXPECT_FALSE(dir.install_copy("missing")) << "nothing to install is an error";
}

TEST(StateDir, EnsureFailsUnderAFile) {
    const TempDir tmp;
    std::ofstream(tmp.path() / "file") << "x";
    const auto ok = StateDir(tmp.path() / "file" / "lists").ensure();
    ASSERT_FALSE(ok);
    EXPECT_NE(ok.error().find("file/lists"), std::string::npos) << ok.error();
}

TEST(StateDir, AWriteThatTheDiskRefusesIsAnErrorThatSaysWhyNotAThrow) {
    // Under a regular file: ENOTDIR, which refuses even root (a chmod 0555 would not).
    const TempDir tmp;
    std::ofstream(tmp.path() / "file") << "x";
    const std::filesystem::path target = tmp.path() / "file" / "web.json";
    tl::expected<void, std::string> written;
    EXPECT_NO_THROW(written = write_file_atomically(target, "{}\n"));
    ASSERT_FALSE(written);
    EXPECT_EQ(written.error(), "cannot write " + target.string() + ": Not a directory");
    const StateDir dir(tmp.path() / "file");
    EXPECT_FALSE(dir.write_status("k", sample()));
}

TEST(StateDir, AWriteToAReadOnlyDirectoryNamesIt) {
    if (::geteuid() == 0) {
        GTEST_SKIP() << "runs as root, which a directory's mode 0555 does not stop; the "
                        "read-only case is covered by AWriteThatTheDiskRefuses... (ENOTDIR) and "
                        "tests/integration/test_local_faults.py (a read-only tmpfs)";
    }
    const TempDir tmp;
    std::filesystem::permissions(
        tmp.path(), std::filesystem::perms::owner_read | std::filesystem::perms::owner_exec);
    const auto written = write_file_atomically(tmp.path() / "web.json", "{}\n");
    std::filesystem::permissions(tmp.path(), std::filesystem::perms::owner_all);
    ASSERT_FALSE(written);
    EXPECT_NE(written.error().find("Permission denied"), std::string::npos) << written.error();
}

TEST(StateDir, AHeldStatusIsReadBeforeTheFileUntilReleased) {
    const TempDir tmp;
    const StateDir dir(tmp.path());
    const std::string key = "held-k";
    ListStatus on_disk = sample();
    on_disk.failures = 0;
    ASSERT_TRUE(dir.write_status(key, on_disk));
    ListStatus newer = on_disk;
    newer.failures = 4;
    newer.last_error = "cannot write: No space left on device";
    dir.hold_status(key, newer);
    EXPECT_EQ(dir.read_status(key), newer);
    EXPECT_EQ(StateDir(tmp.path()).read_status(key), newer) << "every StateDir of the process";
    const TempDir other;
    EXPECT_FALSE(StateDir(other.path()).read_status(key)) << "held by path, not by key alone";
    dir.release_status(key);
    EXPECT_FALSE(dir.held_status(key));
    EXPECT_EQ(dir.read_status(key)->failures, 0U) << "the file again";
}

/// A source whose state directory cannot be made (under a regular file): refresh_list fails
/// before any download, so these tests need neither libcurl nor a network.
struct UnwritableState {
    TempDir tmp;
    StateDir dir{tmp.path() / "file" / "lists"};
    ListSource source{"web", "http://127.0.0.1:9/web.txt", filter::ListFormat::domains, false,
                      std::chrono::hours{24}};
    std::string key = StateDir::key_of(source.name, source.url);

    UnwritableState() { std::ofstream(tmp.path() / "file") << "x"; }
};

TEST(Refresh, AStateDirectoryThatCannotBeWrittenFailsWithTheReasonAndIsHeld) {
    const UnwritableState st;
    const RefreshOutcome o = refresh_list(st.source, st.dir, RefreshPolicy{}, 1000);
    EXPECT_EQ(o.result, RefreshResult::failed);
    EXPECT_FALSE(o.saved);
    EXPECT_NE(o.status.last_error.find("cannot create the list state directory"), std::string::npos)
        << o.status.last_error;
    EXPECT_NE(o.status.last_error.find("Not a directory"), std::string::npos);
    EXPECT_EQ(o.status.failures, 1U);
    EXPECT_EQ(o.status.last_attempt, 1000);
    EXPECT_EQ(st.dir.held_status(st.key), o.status) << "the disk refused it: held in memory";
    // The next attempt counts on from the held status: the back-off grows without a disk.
    const RefreshOutcome again = refresh_list(st.source, st.dir, RefreshPolicy{}, 1060);
    EXPECT_EQ(again.status.failures, 2U);
    EXPECT_EQ(next_refresh(st.source, &again.status, 1), 1060 + 120);
    st.dir.release_status(st.key);
}

ListSource daily() {
    ListSource s;
    s.name = "ads";
    s.url = "https://a.example/x";
    s.refresh = std::chrono::hours{24};
    return s;
}

TEST(RefreshSchedule, DueAtOnceWithoutAnAttempt) {
    EXPECT_EQ(next_refresh(daily(), nullptr, 1), 0);
    ListStatus never;
    EXPECT_EQ(next_refresh(daily(), &never, 1), 0);
}

TEST(RefreshSchedule, FailuresBackOffFromOneMinuteUpToTheInterval) {
    ListStatus s = sample();
    s.last_attempt = 1000;
    const std::array<std::int64_t, 5> expected{60, 120, 240, 480, 960};
    for (std::uint32_t f = 1; f <= 5; ++f) {
        s.failures = f;
        EXPECT_EQ(next_refresh(daily(), &s, 7), 1000 + expected[f - 1]) << f << " failures";
    }
    s.failures = 500;
    EXPECT_EQ(next_refresh(daily(), &s, 7), 1000 + 86400) << "capped at the interval";
    ListSource hourly = daily();
    hourly.refresh = std::chrono::minutes{2};
    s.failures = 3;
    EXPECT_EQ(next_refresh(hourly, &s, 7), 1000 + 120);
}

TEST(RefreshSchedule, SuccessWaitsTheIntervalPlusABoundedJitter) {
    ListStatus s = sample();
    s.failures = 0;
    s.last_error.clear();
    s.last_success = 50'000;
    std::set<std::int64_t> seen;
    for (std::uint64_t seed = 0; seed < 200; ++seed) {
        const std::int64_t due = next_refresh(daily(), &s, seed);
        EXPECT_GE(due, 50'000 + 86'400);
        EXPECT_LE(due, 50'000 + 86'400 + 3600) << "jitter at most an hour";
        seen.insert(due);
        EXPECT_EQ(due, next_refresh(daily(), &s, seed)) << "the same seed, the same time";
    }
    EXPECT_GT(seen.size(), 150U) << "seeds spread the requests";
    ListSource short_one = daily();
    short_one.refresh = std::chrono::minutes{10};
    for (std::uint64_t seed = 0; seed < 50; ++seed) {
        EXPECT_LE(next_refresh(short_one, &s, seed), 50'000 + 600 + 60) << "a tenth of 10 min";
    }
}

}  // namespace
}  // namespace moat::lists

namespace moat::lists {
namespace {

TEST(FetchRequest, RoundTripsThroughJson) {
    FetchRequest r;
    r.state_dir = "/var/lib/dnsmoat/lists";
    r.policy.fetch.connect_timeout = std::chrono::milliseconds{1500};
    r.policy.fetch.timeout = std::chrono::milliseconds{90000};
    r.policy.fetch.max_bytes = 12345;
    r.policy.fetch.ca_file = "/etc/ssl/home-ca.pem";
    r.policy.max_shrink_percent = 30;
    r.sources.push_back({"ads", "https://a.example/ads.txt", filter::ListFormat::adblock, true,
                         std::chrono::hours{12}});
    r.sources.push_back(
        {"hosts", "http://b.example/h", filter::ListFormat::hosts, false, std::chrono::minutes{5}});
    const auto back = request_from_json(to_json(r));
    ASSERT_TRUE(back);
    EXPECT_EQ(back->state_dir, r.state_dir);
    EXPECT_EQ(back->policy.fetch.connect_timeout, r.policy.fetch.connect_timeout);
    EXPECT_EQ(back->policy.fetch.timeout, r.policy.fetch.timeout);
    EXPECT_EQ(back->policy.fetch.max_bytes, 12345U);
    EXPECT_EQ(back->policy.fetch.ca_file, r.policy.fetch.ca_file);
    EXPECT_EQ(back->policy.max_shrink_percent, 30U);
    ASSERT_EQ(back->sources.size(), 2U);
    EXPECT_EQ(back->sources[0].format, filter::ListFormat::adblock);
    EXPECT_TRUE(back->sources[0].include_subdomains);
    EXPECT_EQ(back->sources[1].url, "http://b.example/h");
    EXPECT_EQ(back->sources[1].refresh, std::chrono::minutes{5});
}

TEST(FetchRequest, AFetcherThatCannotRunCountsAsAFailedAttempt) {
    const TempDir tmp;
    FetchRequest r;
    r.state_dir = tmp.path().string();
    r.sources.push_back({"a", "http://127.0.0.1:9/a.txt", filter::ListFormat::domains, false,
                         std::chrono::hours{24}});
    const std::atomic<bool> cancel{false};
    const auto outcomes = refresh_in_child(tmp.path() / "no-such-fetcher", r, cancel);
    ASSERT_EQ(outcomes.size(), 1U);
    EXPECT_EQ(outcomes[0].result, RefreshResult::failed);
    // "cannot start the list fetcher ..." where posix_spawn reports the failed exec, "the list
    // fetcher exited with status 127" where it cannot (qemu-user).
    EXPECT_NE(outcomes[0].status.last_error.find("the list fetcher"), std::string::npos)
        << outcomes[0].status.last_error;
    EXPECT_EQ(outcomes[0].status.failures, 1U);
    EXPECT_GT(outcomes[0].status.last_attempt, 0);
    EXPECT_EQ(next_refresh(r.sources[0], &outcomes[0].status, 1),
              outcomes[0].status.last_attempt + 60)
        << "retried after a minute, not after a day";
}

TEST(FetchRequest, HeldStatusesTravelWithTheRequest) {
    FetchRequest r;
    r.state_dir = "/var/lib/dnsmoat/lists";
    r.sources.push_back({"ads", "https://a.example/ads.txt", filter::ListFormat::adblock, true,
                         std::chrono::hours{12}});
    r.held.emplace(StateDir::key_of("ads", "https://a.example/ads.txt"), sample());
    const auto back = request_from_json(to_json(r));
    ASSERT_TRUE(back);
    ASSERT_EQ(back->held.size(), 1U);
    EXPECT_EQ(back->held.begin()->second, status_from_json(to_json(sample())));
    r.held.clear();  // a request without "held" at all (an older parent) still reads
    std::string old = to_json(r);
    const std::string empty_held = "\"held\":{},";
    ASSERT_NE(old.find(empty_held), std::string::npos) << old;
    old.erase(old.find(empty_held), empty_held.size());
    const auto without = request_from_json(old);
    ASSERT_TRUE(without) << old;
    EXPECT_TRUE(without->held.empty());
}

TEST(FetchRequest, TheChildReportsTheStatusItCouldNotWrite) {
    const UnwritableState st;
    FetchRequest r;
    r.state_dir = st.dir.root().string();
    r.sources.push_back(st.source);
    ListStatus held;
    held.failures = 6;
    held.last_attempt = 500;
    r.held.emplace(st.key, held);
    std::istringstream in(to_json(r));
    std::ostringstream out;
    ASSERT_EQ(serve_fetch_request(in, out), 0);
    const std::string line = out.str();
    ASSERT_FALSE(line.empty());
    EXPECT_EQ(line.find('\n'), line.size() - 1) << "one line per list: " << line;
    EXPECT_NE(line.find("\"key\":\"" + st.key + "\""), std::string::npos) << line;
    EXPECT_NE(line.find("\"result\":\"failed\""), std::string::npos) << line;
    EXPECT_NE(line.find("\"saved\":false"), std::string::npos) << line;
    EXPECT_NE(line.find("cannot create the list state directory"), std::string::npos) << line;
    EXPECT_NE(line.find("\"failures\":7"), std::string::npos) << "counted on from the held one";
    st.dir.release_status(st.key);
}

TEST(FetchRequest, MalformedRequestsAreRejected) {
    FetchRequest r;
    r.state_dir = "/tmp";
    r.sources.push_back({"a", "http://a.example/", filter::ListFormat::domains, false, {}});
    std::string text = to_json(r);
    EXPECT_TRUE(request_from_json(text));
    EXPECT_FALSE(request_from_json(text.substr(0, text.size() / 2)));
    EXPECT_FALSE(request_from_json("{}"));
    const auto at = text.find("\"format\":");
    ASSERT_NE(at, std::string::npos);
    text.replace(at, 10, "\"format\":9");
    EXPECT_FALSE(request_from_json(text)) << "an unknown list format";
}

}  // namespace
}  // namespace moat::lists
