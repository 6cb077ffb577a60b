// dnsmoat, libknot and ldns see the same messages: equal visit stats (bench/visit/visit_stats.hpp)
// on the benchmark fixtures, on dnsmoat's re-encoding of them, and on every real message in the
// shared data that all three accept.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "fixtures.hpp"
#include "knot_visit.hpp"
#include "ldns_visit.hpp"
#include "moat/wire/message_builder.hpp"
#include "moat/wire/message_view.hpp"
#include "moat/wire/rdata.hpp"
#include "moat/wire/validate.hpp"
#include "moat_build.hpp"
#include "moat_visit.hpp"
#include "visit_stats.hpp"

namespace {

namespace fs = std::filesystem;
using moat::bench::VisitStats;

constexpr std::array<const char*, 3> kLibraries = {"dnsmoat", "libknot", "ldns"};

/// True when missing shared data must fail instead of skip (MOAT_REQUIRE_SHARED=1).
bool shared_required() {
    const char* v = std::getenv("MOAT_REQUIRE_SHARED");
    return v != nullptr && *v != '\0' && std::string_view(v) != "0";
}

/// Skips the test (fails it under MOAT_REQUIRE_SHARED=1) when `relative` is not in the shared
/// data directory.
#define COMPARE_SHARED_OR_SKIP(relative)                                                 \
    do {                                                                                 \
        const fs::path compare_path_ = fs::path(moat::bench::shared_dir()) / (relative); \
        std::error_code compare_ec_;                                                     \
        if (!fs::exists(compare_path_, compare_ec_)) {                                   \
            if (shared_required()) {                                                     \
                FAIL() << "shared data " << compare_path_.string()                       \
                       << " is missing and MOAT_REQUIRE_SHARED is set";                  \
            }                                                                            \
            GTEST_SKIP() << "shared data " << compare_path_.string()                     \
                         << " is missing (set MOAT_SHARED_DIR to the shared folder)";    \
        }                                                                                \
    } while (false)

std::string describe(const VisitStats& s) {
    char buf[128];
    std::snprintf(
        buf, sizeof buf, "%llu records, %llu names, %llu labels, checksum %016llx",
        static_cast<unsigned long long>(s.records), static_cast<unsigned long long>(s.names),
        static_cast<unsigned long long>(s.labels), static_cast<unsigned long long>(s.checksum));
    return buf;
}

/// One message visited by the three libraries.
struct Visits {
    std::array<std::optional<VisitStats>, 3> stats;

    [[nodiscard]] bool all_accept() const {
        return std::all_of(stats.begin(), stats.end(), [](const auto& s) { return s.has_value(); });
    }
    [[nodiscard]] bool all_equal() const {
        return all_accept() && *stats[0] == *stats[1] && *stats[0] == *stats[2];
    }
    [[nodiscard]] std::string report() const {
        std::string out;
        for (std::size_t i = 0; i < stats.size(); ++i) {
            out += std::string("  ") + kLibraries[i] + ": " +
                   (stats[i] ? describe(*stats[i]) : std::string("rejected")) + "\n";
        }
        return out;
    }
};

Visits visit_all(std::span<const std::uint8_t> msg, moat::bench::knot::Arena& arena) {
    Visits v;
    if (VisitStats s; moat::bench::visit_message(s, msg)) {
        v.stats[0] = s;
    }
    if (VisitStats s; moat::bench::knot::visit_message(s, msg, arena)) {
        v.stats[1] = s;
    }
    if (VisitStats s; moat::bench::ldns::visit_message(s, msg)) {
        v.stats[2] = s;
    }
    return v;
}

/// Why dnsmoat's rebuild of `msg` cannot reproduce it, when the reason is known and not a parse
/// disagreement; null otherwise.
const char* known_rebuild_difference(std::span<const std::uint8_t> msg) {
    auto view = moat::wire::MessageView::parse(msg);
    if (!view) {
        return nullptr;
    }
    for (const moat::wire::RecordView& rr : view->additional()) {
        if (rr.type != moat::wire::RrType::opt) {
            continue;
        }
        auto opt = moat::wire::rdata::read_opt(rr);
        if (!opt) {
            return nullptr;
        }
        if (opt->udp_payload_size < 512) {
            return "OPT UDP payload below 512 written as 512 (EdnsOptions, documented)";
        }
        if (opt->z != 0) {
            return "OPT flags other than DO are not in EdnsOptions";
        }
    }
    return nullptr;
}

/// moat::wire::validate's verdict (stricter than the visit, which reads only what it visits).
std::string moat_status(std::span<const std::uint8_t> msg) {
    auto ok = moat::wire::validate(msg);
    return ok ? std::string("OK") : moat::wire::describe(ok.error());
}

std::vector<std::uint8_t> read_file(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), {}};
}

/// dnsmoat's build of `msg` (records decoded once, written with MessageBuilder into a span).
std::vector<std::uint8_t> moat_rebuild(std::span<const std::uint8_t> msg) {
    auto input = moat::bench::prepare_build(msg);
    if (!input) {
        return {};
    }
    std::vector<std::uint8_t> buffer(moat::wire::kMaxMessageSize);
    moat::wire::MessageBuilder builder{std::span<std::uint8_t>(buffer)};
    const std::size_t size = moat::bench::build_message(builder, *input);
    buffer.resize(size);
    return buffer;
}

TEST(Compare, FixturesGiveEqualStatsInAllThreeLibraries) {
    COMPARE_SHARED_OR_SKIP("data/wire-fixtures");
    moat::bench::knot::Arena arena;
    for (const auto& fx : moat::bench::load_fixtures()) {
        const Visits v = visit_all(fx.bytes, arena);
        std::printf("[ fixture  ] %s (%zu B):\n%s", fx.name.c_str(), fx.bytes.size(),
                    v.report().c_str());
        EXPECT_TRUE(v.all_equal()) << fx.name << ":\n" << v.report();
    }
    // knot's packets fit the arena's first block: steady-state parsing never calls malloc.
    EXPECT_EQ(arena.block_count(), 1U);
}

TEST(Compare, FixtureCountsMatchTheirDescription) {
    COMPARE_SHARED_OR_SKIP("data/wire-fixtures");
    moat::bench::knot::Arena arena;
    struct Want {
        const char* name;
        std::uint64_t records, names, labels;
    };
    // query: OPT only (names: QNAME + OPT's root owner); large: README's counts; pathological:
    // 240 owners of 3..122 labels + the 2-label QNAME.
    for (const Want& want : {Want{"query", 1, 2, 3}, Want{"large", 66, 84, 237},
                             Want{"pathological", 240, 241, 15002}}) {
        const auto fx = moat::bench::load_fixture(want.name);
        const Visits v = visit_all(fx.bytes, arena);
        for (std::size_t i = 0; i < v.stats.size(); ++i) {
            ASSERT_TRUE(v.stats[i].has_value()) << want.name << " rejected by " << kLibraries[i];
            EXPECT_EQ(v.stats[i]->records, want.records) << want.name << " " << kLibraries[i];
            EXPECT_EQ(v.stats[i]->names, want.names) << want.name << " " << kLibraries[i];
            EXPECT_EQ(v.stats[i]->labels, want.labels) << want.name << " " << kLibraries[i];
        }
    }
}

TEST(Compare, DnsmoatBuildParsesBackToTheSameStatsEverywhere) {
    COMPARE_SHARED_OR_SKIP("data/wire-fixtures");
    moat::bench::knot::Arena arena;
    for (const auto& fx : moat::bench::load_fixtures()) {
        const Visits original = visit_all(fx.bytes, arena);
        ASSERT_TRUE(original.all_equal()) << fx.name << ":\n" << original.report();
        const std::vector<std::uint8_t> built = moat_rebuild(fx.bytes);
        ASSERT_FALSE(built.empty()) << fx.name << ": dnsmoat's build failed";
        const bool identical = built == fx.bytes;
        std::printf("[ build    ] %s: dnsmoat %zu B vs fixture %zu B, %s\n", fx.name.c_str(),
                    built.size(), fx.bytes.size(),
                    identical ? "byte-identical" : "different bytes");
        EXPECT_LE(built.size(), fx.bytes.size()) << fx.name;
        const Visits again = visit_all(built, arena);
        for (std::size_t i = 0; i < again.stats.size(); ++i) {
            ASSERT_TRUE(again.stats[i].has_value())
                << fx.name << ": dnsmoat's build rejected by " << kLibraries[i];
            EXPECT_EQ(*again.stats[i], *original.stats[0])
                << fx.name << ": dnsmoat's build parsed by " << kLibraries[i] << " gives "
                << describe(*again.stats[i]) << ", the fixture " << describe(*original.stats[0]);
        }
    }
}

TEST(Compare, KnotAndLdnsBuildsParseBackToTheSameStats) {
    COMPARE_SHARED_OR_SKIP("data/wire-fixtures");
    moat::bench::knot::Arena arena;
    for (const auto& fx : moat::bench::load_fixtures()) {
        const Visits original = visit_all(fx.bytes, arena);
        ASSERT_TRUE(original.all_equal()) << fx.name;
        auto knot = moat::bench::knot::Builder::prepare(fx.bytes);
        auto ldns = moat::bench::ldns::Builder::prepare(fx.bytes);
        ASSERT_TRUE(knot && ldns) << fx.name;
        ASSERT_NE(knot->build(), 0U) << fx.name;
        ASSERT_NE(ldns->build(), 0U) << fx.name;
        // Build twice: the reused packet and buffer must give the same bytes again.
        const std::vector<std::uint8_t> k(knot->output().begin(), knot->output().end());
        const std::vector<std::uint8_t> l(ldns->output().begin(), ldns->output().end());
        ASSERT_EQ(knot->build(), k.size());
        ASSERT_EQ(ldns->build(), l.size());
        EXPECT_TRUE(std::equal(k.begin(), k.end(), knot->output().begin()));
        EXPECT_TRUE(std::equal(l.begin(), l.end(), ldns->output().begin()));
        auto knot_plain =
            moat::bench::knot::Builder::prepare(fx.bytes, moat::bench::knot::Builder::Hints::none);
        ASSERT_TRUE(knot_plain) << fx.name;
        std::printf(
            "[ build    ] %s: libknot %zu B (%zu B without compression hints), ldns %zu B "
            "(%s), fixture %zu B\n",
            fx.name.c_str(), k.size(), knot_plain->build(), l.size(),
            l == fx.bytes ? "byte-identical" : "different bytes", fx.bytes.size());
        for (const auto& [lib, bytes] : {std::pair{"libknot", &k}, std::pair{"ldns", &l}}) {
            const Visits again = visit_all(*bytes, arena);
            EXPECT_TRUE(again.all_equal() && *again.stats[0] == *original.stats[0])
                << fx.name << ": " << lib << "'s build parsed again:\n"
                << again.report() << "fixture: " << describe(*original.stats[0]);
        }
    }
}

TEST(Compare, ExtractedMessagesAcceptedByAllGiveEqualStats) {
    COMPARE_SHARED_OR_SKIP("data/wire/extracted");
    const fs::path dir = fs::path(moat::bench::shared_dir()) / "data/wire/extracted";
    std::vector<fs::path> files;
    for (const auto& entry : fs::directory_iterator(dir)) {
        if (entry.is_regular_file() && entry.path().extension() == ".bin") {
            files.push_back(entry.path());
        }
    }
    std::sort(files.begin(), files.end());
    ASSERT_FALSE(files.empty()) << "no .bin files in " << dir.string();

    moat::bench::knot::Arena arena;
    std::array<std::size_t, 3> accepted{};
    std::size_t all_accept = 0;
    std::size_t equal = 0;
    std::size_t rebuilt = 0;
    std::size_t rebuilt_equal = 0;
    std::size_t rebuilt_known = 0;
    for (const fs::path& path : files) {
        const std::vector<std::uint8_t> msg = read_file(path);
        const Visits v = visit_all(msg, arena);
        for (std::size_t i = 0; i < v.stats.size(); ++i) {
            accepted[i] += v.stats[i] ? 1U : 0U;
        }
        const std::string name = path.filename().string();
        if (!v.all_accept()) {
            const bool some = std::any_of(v.stats.begin(), v.stats.end(),
                                          [](const auto& s) { return s.has_value(); });
            std::printf(
                "[ %s ] %s (%zu B): dnsmoat validate says '%s', knot says '%s', "
                "ldns says '%s'\n%s",
                some ? "disagree" : "rejected", name.c_str(), msg.size(), moat_status(msg).c_str(),
                moat::bench::knot::parse_status(msg, arena).c_str(),
                moat::bench::ldns::parse_status(msg).c_str(), some ? v.report().c_str() : "");
            continue;
        }
        ++all_accept;
        if (v.all_equal()) {
            ++equal;
        }
        EXPECT_TRUE(v.all_equal()) << name << " (" << msg.size() << " B):\n" << v.report();

        // dnsmoat's builder on real data: its re-encoding must read back the same everywhere.
        const std::vector<std::uint8_t> built = moat_rebuild(msg);
        if (built.empty()) {
            std::printf("[ no build ] %s (%zu B): dnsmoat cannot rebuild it\n", name.c_str(),
                        msg.size());
            continue;
        }
        ++rebuilt;
        const Visits again = visit_all(built, arena);
        const bool same = again.all_equal() && *again.stats[0] == *v.stats[0];
        rebuilt_equal += same ? 1U : 0U;
        if (const char* why = known_rebuild_difference(msg); !same && why != nullptr) {
            ++rebuilt_known;
            std::printf("[ rebuild  ] %s (%zu B): dnsmoat's rebuild differs: %s\n", name.c_str(),
                        msg.size(), why);
            EXPECT_TRUE(again.all_equal()) << name << ": the rebuild parsed again:\n"
                                           << again.report();
            continue;
        }
        EXPECT_TRUE(same) << name << " (" << msg.size() << " B) rebuilt by dnsmoat ("
                          << built.size() << " B), parsed again:\n"
                          << again.report() << "original: " << describe(*v.stats[0]);
    }
    std::printf(
        "[ extracted] %zu messages; accepted: dnsmoat %zu, libknot %zu, ldns %zu; "
        "rejected: dnsmoat %zu, libknot %zu, ldns %zu; accepted by all %zu, of which "
        "equal stats %zu; rebuilt by dnsmoat %zu, of which equal stats again %zu "
        "(different for a known reason: %zu)\n",
        files.size(), accepted[0], accepted[1], accepted[2], files.size() - accepted[0],
        files.size() - accepted[1], files.size() - accepted[2], all_accept, equal, rebuilt,
        rebuilt_equal, rebuilt_known);
}

// An SRV record whose target is compressed (RFC 3597 §4 lets a receiver accept that; all three
// libraries do, and moat::wire::validate passes it). Types without a typed visit are visited as
// their uncompressed RDATA (visit_stats.hpp), so all three must agree; the same holds for the
// other types whose names may be compressed (RP, AFSDB, RT, SIG, PX, NXT, NAPTR, MB, MG, MR,
// MINFO, MD, MF). No message in the shared data has one.
TEST(Compare, CompressedNameInOpaqueRdataGivesEqualStats) {
    // id 0x1234, QR AA, QD 1 AN 1: _s._tcp.a. SRV IN; answer: owner -> QNAME, SRV 0 0 53 target
    // "h" + pointer to "a." at offset 20.
    const std::vector<std::uint8_t> msg = {
        0x12, 0x34, 0x84, 0x00, 0x00, 0x01, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00,  // header
        0x02, '_',  's',  0x04, '_',  't',  'c',  'p',  0x01, 'a',  0x00,        // QNAME
        0x00, 0x21, 0x00, 0x01,                                                  // SRV IN
        0xC0, 0x0C, 0x00, 0x21, 0x00, 0x01, 0x00, 0x00, 0x01, 0x2C, 0x00, 0x0A,  // RR header
        0x00, 0x00, 0x00, 0x00, 0x00, 0x35, 0x01, 'h',  0xC0, 0x14};             // RDATA
    ASSERT_TRUE(moat::wire::validate(msg));
    moat::bench::knot::Arena arena;
    const Visits v = visit_all(msg, arena);
    ASSERT_TRUE(v.all_accept()) << v.report();
    EXPECT_TRUE(v.all_equal()) << v.report();
}

}  // namespace
