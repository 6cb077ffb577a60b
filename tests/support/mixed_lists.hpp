// Lists of every kind of line, and a comparison of two snapshots compiled from them: for the
// tests that spread a compile's lines over parts or threads (tests/unit/filter/
// compiler_part_test.cpp, tests/unit/lists/parallel_load_test.cpp) and hold the result to the
// same lists compiled on one thread.
#pragma once

#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "moat/filter/list.hpp"
#include "moat/filter/snapshot.hpp"

namespace moat::test {

struct MixedList {
    filter::ListSpec spec;
    std::string text;
};

struct MixedLists {
    std::vector<MixedList> lists;
    /// Names to ask both snapshots: every listed name, names below them, regex hits, and names
    /// no list has.
    std::vector<std::string> probes;
};

/// Five lists of about `lines` lines each: auto-detected block lines of every syntax (AdBlock
/// with `$important` and `@@`, regexes, hosts, plain names, comments, invalid lines), a hosts
/// list and an AdBlock list overlapping it, an allowlist, and a regex list with a bad pattern.
/// Names repeat within and across lists, so duplicates merge into sets of lists in the exact
/// and the subtree tables alike.
inline MixedLists mixed_lists(std::size_t lines, std::uint64_t seed) {
    std::mt19937_64 rng(seed);
    const std::size_t names = lines / 2 + 1;
    auto name = [&](std::size_t i) {
        return "n" + std::to_string(i) + ".zone" + std::to_string(i % 13) + ".example";
    };
    MixedLists out;
    out.lists = {
        {{11, "mixed", filter::ListKind::block, filter::ListFormat::auto_detect, false}, {}},
        {{12, "hosts", filter::ListKind::block, filter::ListFormat::hosts, false}, {}},
        {{13, "allow", filter::ListKind::allow, filter::ListFormat::domains, false}, {}},
        {{14, "regex", filter::ListKind::block, filter::ListFormat::regex, false}, {}},
        {{15, "adblock", filter::ListKind::block, filter::ListFormat::adblock, false}, {}},
    };
    for (std::size_t l = 0; l < lines; ++l) {
        const std::string n = name(rng() % names);
        std::string& mixed = out.lists[0].text;
        switch (rng() % 12) {
            case 0: mixed += "||" + n + "^$important\n"; break;
            case 1: mixed += "@@||" + n + "^\n"; break;
            case 2:  // RE2's set has a memory budget: one in 20 is a regex
                mixed += l % 20 == 0 ? "/^ad" + std::to_string(rng() % 50) + "\\." + n + "$/\n"
                                     : n + "\n";
                break;
            case 3: mixed += "# a comment\n"; break;
            case 4: mixed += "\n"; break;
            case 5: mixed += "bad.." + n + "\n"; break;  // invalid: the first ten are kept
            case 6: mixed += "0.0.0.0 " + n + " www." + n + "\n"; break;
            case 7: mixed += "||" + n + "^\n"; break;
            default: mixed += n + "\r\n"; break;
        }
        std::string& hosts = out.lists[1].text;
        hosts +=
            rng() % 40 == 0 ? "127.0.0.1 localhost\n" : "0.0.0.0 " + name(rng() % names) + "\n";
        // Names the first list also has as subtree rules: sets of lists in two tables.
        out.lists[4].text += "||" + name(rng() % names) + "^\n";
        if (l % 4 == 0) {
            out.lists[2].text += rng() % 30 == 0 ? "-bad-\n" : name(rng() % names) + "\n";
        }
        if (l % 200 == 0) {
            out.lists[3].text +=
                rng() % 10 == 0 ? "(unclosed\n" : "^tr" + std::to_string(l) + "[a-z]*\\.\n";
        }
    }
    out.lists[1].text += "0.0.0.0 last-line-without-newline.example";
    for (std::size_t i = 0; i < names; ++i) {
        out.probes.push_back(name(i));
        out.probes.push_back("www." + name(i));
        out.probes.push_back("deep.sub." + name(i));
        out.probes.push_back("ad" + std::to_string(i % 50) + "." + name(i));
        out.probes.push_back("tr" + std::to_string(i * 200 % lines) + "x.any.example");
    }
    out.probes.emplace_back("last-line-without-newline.example");
    out.probes.emplace_back("not-listed.example");
    return out;
}

/// Expects `got` to be `want` as far as anyone can tell: the lists with their counts and first
/// invalid lines, the rule counts, and every probe's verdict with the list and line it cites.
inline void expect_same_snapshot(const filter::Snapshot& want, const filter::Snapshot& got,
                                 const std::vector<std::string>& probes) {
    ASSERT_EQ(got.lists().size(), want.lists().size());
    for (std::size_t i = 0; i < want.lists().size(); ++i) {
        const filter::ListInfo& w = want.lists()[i];
        const filter::ListInfo& g = got.lists()[i];
        EXPECT_EQ(g.spec.id, w.spec.id);
        EXPECT_EQ(g.stats.lines, w.stats.lines) << w.spec.name;
        EXPECT_EQ(g.stats.entries, w.stats.entries) << w.spec.name;
        EXPECT_EQ(g.stats.comments, w.stats.comments) << w.spec.name;
        EXPECT_EQ(g.stats.skipped, w.stats.skipped) << w.spec.name;
        EXPECT_EQ(g.stats.unsupported, w.stats.unsupported) << w.spec.name;
        EXPECT_EQ(g.stats.invalid, w.stats.invalid) << w.spec.name;
        EXPECT_EQ(g.stats.first_invalid, w.stats.first_invalid) << w.spec.name;
    }
    EXPECT_EQ(got.name_rules(), want.name_rules());
    EXPECT_EQ(got.regex_rules(), want.regex_rules());
    std::size_t differing = 0;
    for (const std::string& p : probes) {
        const filter::Verdict w = want.match_text(p);
        const filter::Verdict g = got.match_text(p);
        const bool same = g.action == w.action && g.rule == w.rule && g.important == w.important &&
                          g.line == w.line && g.suffix == w.suffix && g.regex == w.regex &&
                          (w.action == filter::Action::none || got.list_id(g) == want.list_id(w)) &&
                          got.regex_pattern(g) == want.regex_pattern(w);
        if (!same && ++differing <= 5) {
            ADD_FAILURE() << p << ": want list " << want.list_id(w) << " line " << w.line
                          << ", got list " << got.list_id(g) << " line " << g.line;
        }
    }
    EXPECT_EQ(differing, 0U);
}

}  // namespace moat::test
