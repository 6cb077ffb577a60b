// The editable tree behind API changes: the shipped examples survive read → render → load
// unchanged in meaning in both syntaxes, TOML's awkward corners render to valid TOML, an edit
// lands where it belongs, the atomic write keeps the old file as .bak, and a TOML file's comments
// stay above their lines through a change.
#include "moat/config/document.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "moat/config/loader.hpp"
#include "moat/config/toml_comments.hpp"
#include "support/temp_dir.hpp"

namespace moat::config {
namespace {

const std::filesystem::path kDir = MOAT_CONFIG_EXAMPLE_DIR;

std::string slurp(const std::filesystem::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

class RoundTrip : public ::testing::TestWithParam<const char*> {};

TEST_P(RoundTrip, TheExampleMeansTheSameAfterARoundTrip) {
    const std::filesystem::path file = kDir / GetParam();
    const Syntax syntax = *syntax_of(file);
    const auto original = load_file(file);
    ASSERT_TRUE(original) << to_string(original.error());
    auto doc = read_document(slurp(file), syntax, file.string());
    ASSERT_TRUE(doc) << to_string(doc.error());
    for (const Syntax out : {Syntax::toml, Syntax::json}) {
        const std::string text = render_document(*doc, out);
        auto again = parse(text, out, "rendered");
        ASSERT_TRUE(again) << to_string(again.error()) << "\n" << text;
        EXPECT_EQ(*again, *original) << text;
    }
}

INSTANTIATE_TEST_SUITE_P(Examples, RoundTrip, ::testing::Values("dnsmoat.toml", "dnsmoat.json"));

TEST(Document, KeepsFileOrderAndRendersAwkwardValues) {
    auto doc = read_document(
        "[upstream]\nservers = [\"127.0.0.1:53\"]\n\n[local.records]\n\"nas.lan\" = \"A "
        "10.0.0.2\"\n\"txt.lan\" = \"TXT say \\\"hi\\\"\\tthere\\u0001\"\n",
        Syntax::toml);
    ASSERT_TRUE(doc) << to_string(doc.error());
    const std::string toml = render_document(*doc, Syntax::toml);
    EXPECT_LT(toml.find("[upstream]"), toml.find("[local.records]"));  // file order, not sorted
    EXPECT_NE(toml.find("\"nas.lan\" = \"A 10.0.0.2\""), std::string::npos) << toml;
    EXPECT_NE(toml.find(R"(\"hi\"\tthere\u0001)"), std::string::npos) << toml;
    auto back = read_document(toml, Syntax::toml);
    ASSERT_TRUE(back) << to_string(back.error()) << toml;
    EXPECT_EQ(*back, *doc);
}

TEST(Document, AnEditLandsInTheRightSection) {
    auto doc = read_document("[[blocklists]]\nname = \"a\"\npath = \"/a.txt\"\n", Syntax::toml);
    ASSERT_TRUE(doc);
    (*doc)["rules"]["deny"].push_back("ads.example");
    (*doc)["blocklists"].push_back({{"name", "b"}, {"url", "https://lists.example/b.txt"}});
    (*doc)["groups"] = Document::array(
        {{{"name", "kids"},
          {"clients", {"10.0.0.0/24"}},
          {"schedule",
           Document::array({{{"lists", {"b"}}, {"from", "21:00"}, {"to", "07:00"}}})}}});
    const std::string text = render_document(*doc, Syntax::toml);
    auto c = parse(text, Syntax::toml);
    ASSERT_TRUE(c) << to_string(c.error()) << text;
    ASSERT_EQ(c->blocklists.size(), 2U);
    EXPECT_EQ(c->blocklists[1].url, "https://lists.example/b.txt");
    EXPECT_EQ(c->rules.deny, std::vector<std::string>{"ads.example"});
    ASSERT_EQ(c->groups.size(), 1U);
    ASSERT_EQ(c->groups[0].schedule.size(), 1U);
    EXPECT_EQ(c->groups[0].schedule[0].from_minute, 21U * 60U);
}

TEST(Document, SyntaxErrorsNameTheLine) {
    auto doc = read_document("[api]\nenabled = = true\n", Syntax::toml, "x.toml");
    ASSERT_FALSE(doc);
    EXPECT_EQ(doc.error().front().line, 2U);
}

TEST(WriteFileAtomically, ReplacesTheFileKeepsItsModeAndTheOldCopy) {
    moat::test::TempDir dir{"moat-document"};
    const auto path = dir.path() / "dnsmoat.toml";
    ASSERT_TRUE(write_file_atomically(path, "first\n", true));
    ASSERT_EQ(::chmod(path.c_str(), 0600), 0);
    ASSERT_TRUE(write_file_atomically(path, "second\n", true));
    EXPECT_EQ(slurp(path), "second\n");
    EXPECT_EQ(slurp(path.string() + ".bak"), "first\n");
    struct stat st {};
    ASSERT_EQ(::stat(path.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0600U);
    EXPECT_FALSE(std::filesystem::exists(path.string() + ".tmp"));
}

TEST(WriteFileAtomically, AFailureLeavesTheFileAsItWas) {
    moat::test::TempDir dir{"moat-document"};
    const auto path = dir.path() / "sub" / "dnsmoat.toml";  // no such directory
    auto written = write_file_atomically(path, "x", true);
    ASSERT_FALSE(written);
    EXPECT_NE(written.error().find("cannot create"), std::string::npos) << written.error();
}

// Comments kept through a change (toml_comments.hpp): each block goes back above the line it sat
// above, the file's heading and its last lines stay where they were, and nothing inside a value
// is taken for a comment or a table.

/// The lines of `text` that are comments, in order.
std::vector<std::string> comment_lines(const std::string& text) {
    std::vector<std::string> out;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) {
        const std::size_t first = line.find_first_not_of(" \t");
        if (first != std::string::npos && line[first] == '#') {
            out.push_back(line);
        }
    }
    return out;
}

/// `text` read, changed by `change`, and rendered with its comments, as the API's edit does.
template <typename Change>
std::string edited(const std::string& text, Change change) {
    auto doc = read_document(text, Syntax::toml);
    EXPECT_TRUE(doc) << to_string(doc.error());
    const Document before = *doc;
    change(*doc);
    const TomlComments comments = collect_toml_comments(text);
    return render_document(*doc, Syntax::toml, &comments, &before);
}

/// Each comment line of `text` with the key (or header) of the first line below it that is not
/// a comment: where every comment sits.
std::vector<std::string> comments_with_their_lines(const std::string& text) {
    std::vector<std::string> out;
    std::vector<std::string> waiting;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) {
        const std::size_t first = line.find_first_not_of(" \t");
        if (first != std::string::npos && line[first] == '#') {
            waiting.push_back(line);
        } else if (first != std::string::npos) {
            for (const std::string& comment : waiting) {
                out.push_back(comment + " -> " + line.substr(0, line.find('=')));
            }
            waiting.clear();
        }
    }
    for (const std::string& comment : waiting) {
        out.push_back(comment + " -> (end)");
    }
    return out;
}

TEST(TomlComments, TheShippedConfigKeepsEveryCommentAboveItsLine) {
    const std::string text = slurp(kDir / "dnsmoat.toml");
    ASSERT_GT(comment_lines(text).size(), 100U);
    const std::string out = edited(text, [](Document&) {});
    EXPECT_EQ(comments_with_their_lines(out), comments_with_their_lines(text)) << out;
    // The only other difference: [access] allow, an array over two lines, is written on one.
    EXPECT_EQ(std::count(out.begin(), out.end(), '\n') + 1,
              std::count(text.begin(), text.end(), '\n'));
    auto again = parse(out, Syntax::toml, "rendered");
    auto original = parse(text, Syntax::toml, "shipped");
    ASSERT_TRUE(again) << to_string(again.error()) << out;
    ASSERT_TRUE(original) << to_string(original.error());
    EXPECT_EQ(*again, *original);
}

TEST(TomlComments, AChangeKeepsTheCommentsOfEverythingThatStays) {
    const std::string text = slurp(kDir / "dnsmoat.toml");
    const std::string out = edited(text, [](Document& doc) {
        doc["blocking"]["mode"] = "nxdomain";
        doc["blocklists"].erase(doc["blocklists"].size() - 1);  // the last list, an example
        Document& kids = doc["groups"][0]["blocklists"];        // which a group names
        kids.erase(kids.size() - 1);
        doc["cache"].erase("negative");
    });
    // Everything but the blocks above what was removed, in the same order: the last list's
    // "# >>> example" line (the "# <<<" line after it is the block above [[allowlists]]) and
    // the cache's line about `negative`.
    std::vector<std::string> want = comments_with_their_lines(text);
    const auto before = want.size();
    std::erase_if(want, [](const std::string& line) {
        return (line.ends_with("-> [[blocklists]]") && line.starts_with("# >>> example")) ||
               line.ends_with("-> negative ");
    });
    EXPECT_EQ(want.size() + 2, before);
    EXPECT_EQ(comments_with_their_lines(out), want) << out;
    EXPECT_NE(out.find("# \"nxdomain\", \"refused\", or \"custom\" (the addresses below).\n"
                       "mode = \"nxdomain\"\n"),
              std::string::npos)
        << out;
    EXPECT_TRUE(out.starts_with("# dnsmoat example configuration."));
    auto again = parse(out, Syntax::toml, "edited");
    ASSERT_TRUE(again) << to_string(again.error()) << out;
    EXPECT_EQ(again->blocking.mode, BlockingMode::nxdomain);
}

TEST(TomlComments, NothingInsideAValueIsTakenForACommentOrATable) {
    const std::string text =
        "# heading\n"
        "\n"
        "# above a\n"
        "a = \"\"\"\n"
        "# not a comment\n"
        "[not.a.table]\n"
        "b = 1\n"
        "\"\"\"\n"
        "# above list\n"
        "list = [\n"
        "  \"x\", # inside the array: not kept\n"
        "  \"y ] # still a string\",\n"
        "]\n"
        "# above c\n"
        "c = \"has # a hash\"  # at the end of the line: not kept\n"
        "d = 'it is [literal'\n"
        "[t]\n"
        "# above t.k\n"
        "k = { x = 1, y = [2, 3] }\n"
        "\n"
        "# the last words\n";
    const TomlComments comments = collect_toml_comments(text);
    EXPECT_EQ(comments.at_start, "# heading\n\n");
    EXPECT_EQ(comments.at_end, "\n# the last words\n");
    EXPECT_EQ(comments.above.size(), 5U);  // above a, list, c and t.k, and [t]'s empty one
    const std::string out = edited(text, [](Document&) {});
    EXPECT_NE(out.find("# above a\na = "), std::string::npos) << out;
    EXPECT_NE(out.find("# above list\nlist = "), std::string::npos) << out;
    EXPECT_NE(out.find("# above c\nc = "), std::string::npos) << out;
    // The inline table is written as a table of its own: its block goes above that header.
    EXPECT_NE(out.find("[t]\n# above t.k\n[t.k]\n"), std::string::npos) << out;
    EXPECT_TRUE(out.ends_with("\n# the last words\n")) << out;
    EXPECT_EQ(out.find("\n# not a comment"), std::string::npos) << out;  // inside the string
    auto before = read_document(text, Syntax::toml);
    auto after = read_document(out, Syntax::toml);
    ASSERT_TRUE(after) << to_string(after.error()) << out;
    EXPECT_EQ(*after, *before);
}

TEST(TomlComments, EntriesOfArraysOfTablesKeepTheirOwnBlocks) {
    const std::string text =
        "[[g]]\n"
        "# first g's name\n"
        "name = \"a\"\n"
        "# a's schedule\n"
        "[[g.s]]\n"
        "x = 1\n"
        "\n"
        "# the second g\n"
        "[[g]]\n"
        "name = \"b\"\n"
        "[[g.s]]\n"
        "x = 2\n"
        "[[g.s]]\n"
        "# b's second schedule\n"
        "x = 3\n";
    const std::string out = edited(text, [](Document&) {});
    EXPECT_EQ(out, text);
    // Removing the first g: its blocks go with it, and b keeps its own, nested entries too.
    const std::string fewer = edited(text, [](Document& doc) { doc["g"].erase(0); });
    // That is, b's part of the file exactly as it was.
    EXPECT_EQ(fewer, text.substr(text.find("# the second g"))) << fewer;
}

TEST(TomlComments, AnEntryKeepsItsBlockWhenEditedOrWhenEntriesComeBeforeIt) {
    const std::string text =
        "# the ad list\n"
        "[[blocklists]]\n"
        "url = \"https://lists.example/ads.txt\"\n"
        "enabled = true\n"
        "\n"
        "# the kids' list\n"
        "[[blocklists]]\n"
        "url = \"https://lists.example/kids.txt\"\n"
        "enabled = true\n";
    // Edited (as the dashboard's switch does): the kids' list keeps its block.
    const std::string disabled =
        edited(text, [](Document& doc) { doc["blocklists"][1]["enabled"] = false; });
    EXPECT_EQ(comments_with_their_lines(disabled),
              (std::vector<std::string>{"# the ad list -> [[blocklists]]",
                                        "# the kids' list -> [[blocklists]]"}));
    EXPECT_NE(disabled.find("# the kids' list\n[[blocklists]]\nurl = "
                            "\"https://lists.example/kids.txt\"\nenabled = false\n"),
              std::string::npos)
        << disabled;
    // A new first entry takes no block; the two old ones keep theirs. The old first one's block
    // had no blank line above it (it opened the file) and gets one below the new entry.
    const std::string added = edited(text, [](Document& doc) {
        doc["blocklists"].insert(doc["blocklists"].begin(),
                                 Document{{"url", "https://lists.example/new.txt"}});
    });
    EXPECT_NE(added.find("[[blocklists]]\nurl = \"https://lists.example/new.txt\"\n\n"
                         "# the ad list\n[[blocklists]]\nurl = \"https://lists.example/ads.txt\""),
              std::string::npos)
        << added;
    EXPECT_NE(added.find("# the kids' list\n[[blocklists]]\nurl = "
                         "\"https://lists.example/kids.txt\""),
              std::string::npos)
        << added;
    // Both removed and one added in one change: the new entry shares no value with them.
    const std::string replaced = edited(text, [](Document& doc) {
        doc["blocklists"] = Document::array({Document{{"url", "https://lists.example/new.txt"}}});
    });
    EXPECT_EQ(comment_lines(replaced), std::vector<std::string>{}) << replaced;
}

TEST(TomlComments, BlocksKeepTheirSpacingAndTheFirstGetsABlankLineWhenNoLongerFirst) {
    const std::string text =
        "# a\n"
        "[[g]]\n"
        "name = \"a\"\n"
        "# b\n"
        "[[g]]\n"
        "name = \"b\"\n"
        "# c\n"
        "[[g]]\n"
        "name = \"c\"\n";
    // The middle one removed: c's block stays as the file wrote it, without a blank line.
    EXPECT_EQ(edited(text, [](Document& doc) { doc["g"].erase(1); }),
              "# a\n[[g]]\nname = \"a\"\n# c\n[[g]]\nname = \"c\"\n");
    // One added in front: a's block, which opened the file, is set off from the new entry.
    EXPECT_EQ(edited(text,
                     [](Document& doc) {
                         doc["g"].insert(doc["g"].begin(), Document{{"name", "new"}});
                     }),
              "[[g]]\nname = \"new\"\n\n" + text);
}

TEST(TomlComments, WithoutTheTreeBeforeTheChangeBlocksStayWithPositions) {
    const std::string text =
        "# first\n"
        "[[g]]\n"
        "name = \"a\"\n"
        "\n"
        "# second\n"
        "[[g]]\n"
        "name = \"b\"\n";
    auto doc = read_document(text, Syntax::toml);
    ASSERT_TRUE(doc);
    (*doc)["g"].erase(0);
    const TomlComments comments = collect_toml_comments(text);
    EXPECT_EQ(render_document(*doc, Syntax::toml, &comments), "# first\n[[g]]\nname = \"b\"\n");
}

TEST(TomlComments, HeadersAndKeysAreFoundHoweverTheyAreSpelled) {
    const std::string text =
        "# above the table\n"
        "[ \"quoted.key\" . inner ]\n"
        "# above v\n"
        "\"v\" = true\n"
        "# above a dotted key\n"
        "deep . 'w' = 1\n";
    const std::string out = edited(text, [](Document&) {});
    EXPECT_NE(out.find("# above the table\n[\"quoted.key\".inner]\n# above v\nv = true\n"),
              std::string::npos)
        << out;
    EXPECT_NE(out.find("# above a dotted key\nw = 1\n"), std::string::npos) << out;
}

TEST(TomlComments, LinesThatCannotBePlacedLoseTheirBlockAndNothingElse) {
    // A header and a key with an escape in quotes are not placed. The keys under that header
    // must not take the places of the table before (its `k`), and the array the escaped key
    // opens must still be skipped as a value.
    const std::string text =
        "[a]\n"
        "# above a.k\n"
        "k = 1\n"
        "[\"b\\u0041\"]\n"
        "# above the unplaced k\n"
        "k = 2\n"
        "\"q\\\"\" = [\n"
        "  \"[a]\",\n"
        "# inside the array\n"
        "]\n"
        "[c]\n"
        "# above c.k\n"
        "k = 3\n";
    const std::string out = edited(text, [](Document&) {});
    EXPECT_NE(out.find("[a]\n# above a.k\nk = 1\n"), std::string::npos) << out;
    EXPECT_NE(out.find("[c]\n# above c.k\nk = 3\n"), std::string::npos) << out;
    EXPECT_EQ(out.find("# above the unplaced k"), std::string::npos) << out;
    EXPECT_EQ(out.find("# inside the array"), std::string::npos) << out;
    auto before = read_document(text, Syntax::toml);
    auto after = read_document(out, Syntax::toml);
    ASSERT_TRUE(before) << to_string(before.error());
    ASSERT_TRUE(after) << to_string(after.error()) << out;
    EXPECT_EQ(*after, *before);
}

TEST(TomlComments, AFileOfCommentsOnlyKeepsThem) {
    const std::string text = "# nothing set yet\n# see docs/configuration.md";
    const std::string out = edited(text, [](Document& doc) { doc["log"]["level"] = "debug"; });
    EXPECT_TRUE(out.starts_with("# nothing set yet\n# see docs/configuration.md\n")) << out;
    EXPECT_NE(out.find("[log]\nlevel = \"debug\"\n"), std::string::npos) << out;
}

}  // namespace
}  // namespace moat::config
