// The shipped example configs (config/dnsmoat.toml and config/dnsmoat.json) load, say the
// same thing, and differ from the embedded defaults only where they claim to.
#include <gtest/gtest.h>

#include <filesystem>

#include "moat/config/loader.hpp"

namespace moat::config {
namespace {

const std::filesystem::path kDir = MOAT_CONFIG_EXAMPLE_DIR;

TEST(Examples, TomlAndJsonGiveTheSameConfig) {
    const auto toml = load_file(kDir / "dnsmoat.toml");
    ASSERT_TRUE(toml) << to_string(toml.error());
    const auto json = load_file(kDir / "dnsmoat.json");
    ASSERT_TRUE(json) << to_string(json.error());
    EXPECT_EQ(*toml, *json);
}

TEST(Examples, ExampleShowsTheDefaults) {
    // The example sets every key to its default except the sample entries it adds (upstreams,
    // a conditional forwarder, lists of each kind, client groups, local records): clearing
    // those must give defaults() back.
    auto config = load_file(kDir / "dnsmoat.toml");
    ASSERT_TRUE(config) << to_string(config.error());
    EXPECT_EQ(config->blocklists.size(), 3U);
    EXPECT_EQ(config->groups.size(), 2U);
    EXPECT_EQ(config->blocklists[1].url.rfind("https://", 0), 0U);
    EXPECT_EQ(config->allowlists.size(), 1U);
    EXPECT_EQ(config->local.records.size(), 4U);
    EXPECT_EQ(config->upstream.conditional.size(), 1U);
    config->upstream.servers.clear();
    config->upstream.conditional.clear();
    config->blocklists.clear();
    config->groups.clear();
    config->allowlists.clear();
    config->local.records.clear();
    EXPECT_EQ(*config, defaults());
}

TEST(Examples, DefaultsEqualAFileThatSetsNothing) {
    EXPECT_EQ(*parse("# empty\n", Syntax::toml, "empty.toml"), defaults());
    EXPECT_EQ(*parse("{}\n", Syntax::json, "empty.json"), defaults());
}

}  // namespace
}  // namespace moat::config
