// Every real list in ../shared/data/blocklists loads with the entry counts of its MANIFEST, its
// names are blocked, popular names from ../shared/data/queries that no list names are not, and
// the ~530k-name combined union compiles.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <unordered_set>
#include <vector>

#include "moat/filter/compiler.hpp"
#include "moat/filter/line_parser.hpp"
#include "moat/filter/list_scan.hpp"
#include "support/shared_data.hpp"

namespace moat::filter {
namespace {

struct Expected {
    const char* file;
    ListFormat format;
    ListKind kind;
    bool subdomains;
    std::uint64_t manifest_entries;   ///< the MANIFEST's "entries" column
    std::uint64_t hash_comments = 0;  ///< `#` lines the MANIFEST counts as AdBlock entries
    std::uint64_t max_invalid_percent = 1;
};

// Per the MANIFEST: hosts entries include localhost names (we skip them), domain/regex entries
// are non-comment lines, AdBlock entries are lines not starting with '!' or '['.
const std::vector<Expected> kLists = {
    {"adaway.hosts.txt", ListFormat::auto_detect, ListKind::block, false, 6542},
    {"hagezi-light.hosts.txt", ListFormat::hosts, ListKind::block, false, 86359},
    {"hagezi-light.hosts-compressed.txt", ListFormat::auto_detect, ListKind::block, false, 86359},
    {"hagezi-light.domains.txt", ListFormat::domains, ListKind::block, false, 86359},
    {"hagezi-light.wildcard.txt", ListFormat::auto_detect, ListKind::block, false, 40961},
    {"hagezi-pro.onlydomains.txt", ListFormat::domains, ListKind::block, true, 214895},
    {"hagezi-tif-mini.onlydomains.txt", ListFormat::auto_detect, ListKind::block, true, 167478},
    {"hagezi-multi.adblock.txt", ListFormat::adblock, ListKind::block, false, 181570},
    {"hagezi-pro-mini.adblock.txt", ListFormat::auto_detect, ListKind::block, false, 54304},
    // 149 `# ...` lines: comment headers of the hosts files AdGuard compiled in.
    {"adguard-dns-filter-android-optimized.adblock.txt", ListFormat::adblock, ListKind::block,
     false, 49919, 149},
    {"adguard-sdns-source-rules.txt", ListFormat::adblock, ListKind::block, false, 565},
    {"adguard-sdns-source-exceptions.txt", ListFormat::adblock, ListKind::allow, false, 127},
    // Not a blocklist: hostlist-compiler patterns, some of them URL patterns we cannot apply.
    {"adguard-sdns-source-exclusions.txt", ListFormat::adblock, ListKind::allow, false, 432, 0, 3},
    {"oisd-via-fademind.hosts.txt", ListFormat::hosts, ListKind::block, false, 66509},
    {"stevenblack-unified-trimmed.domains.txt", ListFormat::auto_detect, ListKind::block, false,
     83808},
    {"mmotti-regex.list", ListFormat::regex, ListKind::block, false, 14},
    {"mmotti-whitelist.list", ListFormat::domains, ListKind::allow, false, 10},
    {"mmotti-social-facebook.list", ListFormat::regex, ListKind::block, false, 1},
    {"mmotti-social-twitter.list", ListFormat::regex, ListKind::block, false, 1},
    {"mmotti-miscellaneous-amp.list", ListFormat::regex, ListKind::block, false, 1},
    {"mmotti-miscellaneous-internationalized-domains.list", ListFormat::auto_detect,
     ListKind::block, false, 1},
};

std::shared_ptr<const Snapshot> load(const std::filesystem::path& path, const Expected& e,
                                     ListStats& stats) {
    Compiler c;
    std::ifstream in(path, std::ios::binary);
    EXPECT_TRUE(in.good()) << path;
    const auto list = c.add_stream({1, e.file, e.kind, e.format, e.subdomains}, in);
    EXPECT_TRUE(list.has_value());
    stats = c.stats(*list);
    auto snap = std::move(c).build();
    EXPECT_TRUE(snap.has_value()) << e.file;
    return snap.value_or(nullptr);
}

/// The first names of a plain / hosts / `||name^` list, for spot checks.
std::vector<std::string> sample_names(const std::filesystem::path& path, std::size_t n) {
    std::vector<std::string> out;
    std::ifstream in(path);
    std::string line;
    while (out.size() < n && std::getline(in, line)) {
        std::string_view t = line;
        if (t.starts_with('#') || t.starts_with('!') || t.starts_with('[')) {
            continue;
        }
        if (t.starts_with("||") && t.ends_with('^')) {
            t = t.substr(2, t.size() - 3);
        } else if (const std::size_t sp = t.find_last_of(" \t"); sp != std::string_view::npos) {
            t.remove_prefix(sp + 1);  // hosts: the last name of the line
        } else if (t.starts_with("*.")) {
            t.remove_prefix(2);
        }
        std::array<char, 256> buf{};
        if (const auto name = normalize_name(t, buf); name && name->text != "localhost") {
            out.emplace_back(name->text);
        }
    }
    return out;
}

TEST(FilterLists, EveryListLoadsWithItsManifestCounts) {
    MOAT_SHARED_PATH_OR_SKIP(dir, "data/blocklists");
    for (const Expected& e : kLists) {
        SCOPED_TRACE(e.file);
        ListStats st;
        const auto snap = load(dir / e.file, e, st);
        ASSERT_NE(snap, nullptr);
        // Every entry the MANIFEST counts is a rule, a skipped localhost name, an unsupported
        // AdBlock rule or an invalid line; nothing is lost silently.
        EXPECT_EQ(st.entries + st.skipped + st.unsupported + st.invalid + e.hash_comments,
                  e.manifest_entries)
            << "entries " << st.entries << " skipped " << st.skipped << " unsupported "
            << st.unsupported << " invalid " << st.invalid;
        EXPECT_GT(st.entries, 0U);
        // Published lists are almost entirely valid: at most 1% rejected.
        EXPECT_LE(st.invalid * 100, e.manifest_entries * e.max_invalid_percent)
            << "first invalid: " << (st.first_invalid.empty() ? "" : st.first_invalid[0].text);
        EXPECT_GT(snap->memory_bytes(), 0U);
    }
}

TEST(FilterLists, ScanCountsWhatCompilingCounts) {
    MOAT_SHARED_PATH_OR_SKIP(dir, "data/blocklists");
    for (const Expected& e : kLists) {
        SCOPED_TRACE(e.file);
        ListStats compiled;
        load(dir / e.file, e, compiled);
        std::ifstream in(dir / e.file, std::ios::binary);
        const ListStats scanned = scan_list(in, e.format, e.subdomains);
        EXPECT_EQ(scanned.lines, compiled.lines);
        EXPECT_EQ(scanned.entries, compiled.entries);
        EXPECT_EQ(scanned.comments, compiled.comments);
        EXPECT_EQ(scanned.skipped, compiled.skipped);
        EXPECT_EQ(scanned.unsupported, compiled.unsupported);
        EXPECT_EQ(scanned.invalid, compiled.invalid);
        ASSERT_EQ(scanned.first_invalid.size(), compiled.first_invalid.size());
        for (std::size_t i = 0; i < scanned.first_invalid.size(); ++i) {
            EXPECT_EQ(scanned.first_invalid[i].line, compiled.first_invalid[i].line);
            EXPECT_EQ(scanned.first_invalid[i].text, compiled.first_invalid[i].text);
        }
    }
}

TEST(FilterLists, ExactCountsOfCleanLists) {
    MOAT_SHARED_PATH_OR_SKIP(dir, "data/blocklists");
    ListStats st;
    load(dir / "adaway.hosts.txt", kLists[0], st);
    EXPECT_EQ(st.skipped, 2U);  // 127.0.0.1 localhost, ::1 localhost
    EXPECT_EQ(st.entries, 6540U);
    EXPECT_EQ(st.invalid, 0U);
    const auto pro = load(dir / "hagezi-pro.onlydomains.txt", kLists[5], st);
    EXPECT_EQ(st.entries, 214895U);
    EXPECT_EQ(st.invalid, 0U);
    EXPECT_EQ(pro->name_rules(), 214895U);
    const auto multi = load(dir / "hagezi-multi.adblock.txt", kLists[7], st);
    EXPECT_EQ(st.entries, 181570U);
    EXPECT_EQ(st.invalid + st.unsupported, 0U);
    ListStats regex;
    const auto mm = load(dir / "mmotti-regex.list", kLists[15], regex);
    EXPECT_EQ(regex.entries, 14U);
    EXPECT_EQ(mm->regex_rules(), 14U);
}

TEST(FilterLists, ListedNamesAreBlockedWithTheirSemantics) {
    MOAT_SHARED_PATH_OR_SKIP(dir, "data/blocklists");
    for (const std::size_t i : {0U, 1U, 2U, 3U, 5U, 7U, 13U, 14U}) {
        const Expected& e = kLists[i];
        SCOPED_TRACE(e.file);
        ListStats st;
        const auto snap = load(dir / e.file, e, st);
        const auto names = sample_names(dir / e.file, 200);
        ASSERT_GE(names.size(), 50U);
        for (const std::string& n : names) {
            EXPECT_EQ(snap->match_text(n).action, Action::blocked) << n;
        }
        // onlydomains and `||` lists cover subdomains; hosts and plain lists do not.
        const bool subtree = e.subdomains || e.format == ListFormat::adblock;
        const std::string child = "zz-not-listed-child." + names.front();
        EXPECT_EQ(snap->match_text(child).action, subtree ? Action::blocked : Action::none)
            << child;
    }
}

TEST(FilterLists, RegexListsBlockWhatTheySay) {
    MOAT_SHARED_PATH_OR_SKIP(dir, "data/blocklists");
    Compiler c;
    for (const std::size_t i : {15U, 16U, 17U, 18U}) {
        std::ifstream in(dir / kLists[i].file);
        ASSERT_TRUE(c.add_stream({static_cast<std::uint32_t>(i), kLists[i].file, kLists[i].kind,
                                  kLists[i].format, false},
                                 in));
    }
    const auto snap = std::move(c).build().value_or(nullptr);
    ASSERT_NE(snap, nullptr);
    EXPECT_EQ(snap->match_text("ads.example.com").action, Action::blocked);
    EXPECT_EQ(snap->match_text("telemetry.vendor.net").action, Action::blocked);
    EXPECT_EQ(snap->match_text("stats.foo.org").action, Action::blocked);
    EXPECT_EQ(snap->match_text("www.facebook.com").action, Action::blocked);
    EXPECT_EQ(snap->match_text("twitter.com").action, Action::blocked);
    EXPECT_EQ(snap->match_text("example.com").action, Action::none);
    EXPECT_EQ(snap->match_text("www.wikipedia.org").action, Action::none);
}

/// Reads the union list through `gzip -dc` into a compiler, in chunks.
bool add_gzip(Compiler& c, const std::filesystem::path& path, ListSpec spec) {
    const std::string cmd = "gzip -dc '" + path.string() + "'";
    std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen(cmd.c_str(), "r"), pclose);
    if (!pipe) {
        return false;
    }
    const auto list = c.open_list(std::move(spec));
    std::vector<char> buf(std::size_t{1} << 16);
    std::size_t got = 0;
    while ((got = fread(buf.data(), 1, buf.size(), pipe.get())) > 0) {
        (void)c.feed(*list, std::string_view(buf.data(), got));
    }
    (void)c.close_list(*list);
    return true;
}

TEST(FilterLists, CombinedUnionLoadsAndQueriesNotListedPass) {
    MOAT_SHARED_PATH_OR_SKIP(gz, "data/blocklists/combined-union.domains.txt.gz");
    MOAT_SHARED_PATH_OR_SKIP(queries, "data/queries/funkhunter-top-100k-2015.csv");
    // NOLINTNEXTLINE(concurrency-mt-unsafe): this test starts no thread
    if (std::system("gzip --version > /dev/null 2>&1") != 0) {
        GTEST_SKIP() << "gzip not installed";
    }
    Compiler c(CompileOptions{.keep_line_numbers = false});
    ASSERT_TRUE(add_gzip(c, gz, {1, "union", ListKind::block, ListFormat::domains, false}));
    const ListStats st = c.stats(0);
    EXPECT_EQ(st.lines, 529922U);
    EXPECT_EQ(st.entries + st.invalid, 529922U);
    EXPECT_LE(st.invalid, 10U);
    const auto snap = std::move(c).build().value_or(nullptr);
    ASSERT_NE(snap, nullptr);
    // 358 lines end in a space (from the source lists) and repeat a name listed without it.
    EXPECT_GE(snap->name_rules(), 529922U - 358U - 10U);
    // 16 MiB per million names is the performance target; this is ~0.53 M.
    EXPECT_LE(snap->memory_bytes(), std::size_t{16} << 20U);
    std::printf(
        "combined union: %zu rules, %zu bytes (%.1f bytes/rule)\n", snap->name_rules(),
        snap->memory_bytes(),
        static_cast<double>(snap->memory_bytes()) / static_cast<double>(snap->name_rules()));

    // Known entries are blocked; top sites not in the union are not (exact semantics here).
    EXPECT_EQ(snap->match_text("doubleclick.net").action, Action::blocked);
    std::unordered_set<std::string> listed;
    {
        std::unique_ptr<FILE, int (*)(FILE*)> pipe(
            popen(("gzip -dc '" + gz.string() + "'").c_str(), "r"), pclose);
        ASSERT_TRUE(pipe);
        std::array<char, 512> line{};
        while (fgets(line.data(), static_cast<int>(line.size()), pipe.get()) != nullptr) {
            std::string s(line.data());
            while (!s.empty() && (s.back() == '\n' || s.back() == '\r' || s.back() == ' ')) {
                s.pop_back();
            }
            listed.insert(std::move(s));
        }
    }
    std::ifstream in(queries);
    std::string name;
    std::size_t checked = 0;
    std::size_t blocked = 0;
    while (std::getline(in, name)) {
        if (listed.contains(name)) {
            ++blocked;
            EXPECT_EQ(snap->match_text(name).action, Action::blocked) << name;
        } else {
            ++checked;
            EXPECT_EQ(snap->match_text(name).action, Action::none) << name;
        }
    }
    EXPECT_GT(checked, 90000U);
    EXPECT_GT(blocked, 1000U);
}

}  // namespace
}  // namespace moat::filter
