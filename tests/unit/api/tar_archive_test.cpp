// The backup's container: what write_tar makes, read_tar reads back (and GNU tar reads too:
// the integration test opens it with Python's tarfile); damaged and hostile archives are refused.
#include "moat/api/tar_archive.hpp"

#include <gtest/gtest.h>

namespace moat::api {
namespace {

TEST(TarArchive, RoundTrip) {
    const std::vector<TarFile> files{{"config.toml", "[api]\nenabled = true\n"},
                                     {"lists/ads.json", std::string(1500, 'x')},
                                     {"empty", ""}};
    const std::string archive = write_tar(files, 1'790'000'000);
    EXPECT_EQ(archive.size() % 512, 0U);
    auto back = read_tar(archive);
    ASSERT_TRUE(back) << back.error();
    ASSERT_EQ(back->size(), 3U);
    for (std::size_t i = 0; i < files.size(); ++i) {
        EXPECT_EQ((*back)[i].name, files[i].name);
        EXPECT_EQ((*back)[i].content, files[i].content);
    }
}

TEST(TarArchive, RefusesDamagedAndHostileArchives) {
    std::string archive = write_tar({{"config.toml", "x"}}, 0);
    EXPECT_FALSE(read_tar(archive.substr(0, 700)));  // no end marker
    EXPECT_FALSE(read_tar("short"));
    std::string bad_sum = archive;
    bad_sum[0] = 'C';
    EXPECT_NE(read_tar(bad_sum).error().find("checksum"), std::string::npos);
    for (const char* name : {"../etc/passwd", "/etc/passwd", "a/../../b", "./x", "a\nb"}) {
        const auto r = read_tar(write_tar({{name, "x"}}, 0));
        ASSERT_FALSE(r) << name;
        EXPECT_NE(r.error().find("unsafe"), std::string::npos) << name;
    }
    std::vector<TarFile> many(20, TarFile{"f", "x"});
    EXPECT_FALSE(read_tar(write_tar(many, 0), 10));
    // A size field claiming more than the archive holds.
    std::string huge = write_tar({{"f", "x"}}, 0);
    huge.replace(124, 11, "77777777777");
    EXPECT_FALSE(read_tar(huge));
}

}  // namespace
}  // namespace moat::api
