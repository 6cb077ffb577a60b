// The benchmark fixtures kept in the repository (bench/fixtures, so the quick start runs without
// the shared folder) must stay byte for byte the shared ones the benchmarks are defined on.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "support/shared_data.hpp"

namespace {

std::vector<char> read_all(const std::filesystem::path& path) {
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), {}};
}

TEST(BenchFixtures, RepositoryCopiesEqualTheSharedOnes) {
    MOAT_SHARED_PATH_OR_SKIP(shared, "data/wire-fixtures");
    const std::filesystem::path copies = MOAT_BENCH_FIXTURES_DIR;
    for (const std::string name : {"query", "large", "pathological"}) {
        const auto ours = read_all(copies / (name + ".bin"));
        const auto theirs = read_all(shared / (name + ".bin"));
        ASSERT_FALSE(theirs.empty()) << name;
        EXPECT_EQ(ours, theirs) << name << ".bin differs from the shared fixture";
    }
}

}  // namespace
