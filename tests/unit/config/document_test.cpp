// The editable tree behind API changes: the shipped examples survive read → render → load
// unchanged in meaning in both syntaxes, TOML's awkward corners render to valid TOML, an edit
// lands where it belongs, and the atomic write keeps the old file as .bak.
#include "moat/config/document.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fstream>
#include <sstream>

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

}  // namespace
}  // namespace moat::config
