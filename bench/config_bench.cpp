// dnsmoat-bench-config: Google Benchmark of the config module, what a start and every reload pay
// before anything else: the shipped config/dnsmoat.toml and config/dnsmoat.json (every section,
// the comments of the TOML file) read and validated into a Config, and a local zone of 1,000
// records in the table form, a household that moved a large hosts file into the config.
#include <benchmark/benchmark.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>

#include "moat/config/loader.hpp"

namespace {

using moat::config::Syntax;

std::string read_file(const std::filesystem::path& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        throw std::runtime_error("cannot read " + path.string());
    }
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

std::string local_zone_config(std::size_t records) {
    std::string text = "[local.records]\n";
    for (std::size_t i = 0; i < records; ++i) {
        text += "\"host-" + std::to_string(i) + ".lan\" = \"A 10.0." + std::to_string(i / 250) +
                "." + std::to_string(1 + i % 250) + "\"\n";
    }
    return text;
}

void parse_text(benchmark::State& state, Syntax syntax, const std::string& text) {
    for (auto _ : state) {
        auto config = moat::config::parse(text, syntax);
        if (!config) {
            state.SkipWithError("the config did not parse");
            break;
        }
        benchmark::DoNotOptimize(config);
    }
    state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(text.size()));
}

const std::string& shipped(const char* name) {
    static const std::filesystem::path kDir = MOAT_CONFIG_DIR;
    static const std::string kToml = read_file(kDir / "dnsmoat.toml");
    static const std::string kJson = read_file(kDir / "dnsmoat.json");
    return std::string_view(name) == "toml" ? kToml : kJson;
}

void parse_shipped_toml(benchmark::State& state) {
    parse_text(state, Syntax::toml, shipped("toml"));
}
BENCHMARK(parse_shipped_toml)->Unit(benchmark::kMicrosecond);

void parse_shipped_json(benchmark::State& state) {
    parse_text(state, Syntax::json, shipped("json"));
}
BENCHMARK(parse_shipped_json)->Unit(benchmark::kMicrosecond);

void parse_local_zone(benchmark::State& state) {
    static const std::string kText = local_zone_config(1'000);
    parse_text(state, Syntax::toml, kText);
}
BENCHMARK(parse_local_zone)->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
