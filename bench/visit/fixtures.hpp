// The benchmark fixtures `query`, `large` and `pathological`: from the shared data folder
// ($MOAT_SHARED_DIR/data/wire-fixtures, default ../shared) when it is there, else from the copies
// in bench/fixtures (compiled in as MOAT_BENCH_FIXTURES_DIR), so a clone without the shared
// folder still runs the benchmarks. A unit test keeps the two copies identical.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>
#include <vector>

namespace moat::bench {

struct Fixture {
    std::string name;
    std::vector<std::uint8_t> bytes;
};

inline std::string shared_dir() {
    const char* env = std::getenv("MOAT_SHARED_DIR");
    return env != nullptr && *env != 0 ? std::string(env) : std::string("../shared");
}

/// Loads one fixture; throws with the paths tried when it cannot be read.
inline Fixture load_fixture(const std::string& name) {
    std::vector<std::string> paths = {shared_dir() + "/data/wire-fixtures/" + name + ".bin"};
#ifdef MOAT_BENCH_FIXTURES_DIR
    paths.push_back(std::string(MOAT_BENCH_FIXTURES_DIR) + "/" + name + ".bin");
#endif
    for (const std::string& path : paths) {
        std::ifstream in(path, std::ios::binary);
        if (in) {
            return {name, std::vector<std::uint8_t>(std::istreambuf_iterator<char>(in), {})};
        }
    }
    std::string tried;
    for (const std::string& path : paths) {
        tried += " " + path;
    }
    throw std::runtime_error("cannot read fixture " + name + " (tried" + tried + ")");
}

inline std::vector<Fixture> load_fixtures() {
    return {load_fixture("query"), load_fixture("large"), load_fixture("pathological")};
}

}  // namespace moat::bench
