// The real DNS messages of the shared data folder (data/wire) and the benchmark fixtures
// (data/wire-fixtures), for the wire tests.
//
// The corpus is every `extracted/*.bin`, `c-ares-fuzzinput/*.bin` and `knot-fuzz/*.pkt` (the
// single names in knot-fuzz/dname_to_str are not messages). `index.jsonl` holds one line per
// message; its `error` field is the data authors' simple check, not the source's verdict. Only
// the tcpdump dns-zlip-*, dns_fwdptr and dns-badlabel captures and c-ares' clusterfuzz-* inputs
// are malformed according to their source.
#pragma once

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace moat::test {

/// The whole file; throws when it cannot be read.
inline std::vector<std::uint8_t> read_bytes(const std::filesystem::path& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        throw std::runtime_error("cannot read " + path.string());
    }
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

struct CorpusMessage {
    std::string name;  ///< path relative to data/wire, e.g. "extracted/dnscap__dns__p001_0q.bin"
    std::vector<std::uint8_t> bytes;
};

/// True for the messages their source calls malformed (see the file comment).
inline bool malformed_per_source(std::string_view name) {
    return name.find("dns-zlip-") != std::string_view::npos ||
           name.find("dns_fwdptr") != std::string_view::npos ||
           name.find("dns-badlabel") != std::string_view::npos ||
           name.starts_with("c-ares-fuzzinput/clusterfuzz-");
}

/// Every message of the corpus below `wire_dir` (data/wire), sorted by name.
inline std::vector<CorpusMessage> load_corpus(const std::filesystem::path& wire_dir) {
    struct Part {
        const char* dir;
        const char* ext;
    };
    constexpr Part kParts[] = {
        {"extracted", ".bin"}, {"c-ares-fuzzinput", ".bin"}, {"knot-fuzz", ".pkt"}};
    std::vector<CorpusMessage> out;
    for (const Part& part : kParts) {
        const std::filesystem::path dir = wire_dir / part.dir;
        if (!std::filesystem::is_directory(dir)) {
            continue;
        }
        for (const auto& entry : std::filesystem::directory_iterator(dir)) {
            if (entry.is_regular_file() && entry.path().extension() == part.ext) {
                out.push_back({std::string(part.dir) + "/" + entry.path().filename().string(),
                               read_bytes(entry.path())});
            }
        }
    }
    std::sort(out.begin(), out.end(),
              [](const CorpusMessage& a, const CorpusMessage& b) { return a.name < b.name; });
    return out;
}

/// The three benchmark fixtures below `fixtures_dir` (data/wire-fixtures), named "query",
/// "large" and "pathological".
inline std::vector<CorpusMessage> load_fixtures(const std::filesystem::path& fixtures_dir) {
    std::vector<CorpusMessage> out;
    for (const char* name : {"query", "large", "pathological"}) {
        out.push_back({name, read_bytes(fixtures_dir / (std::string(name) + ".bin"))});
    }
    return out;
}

/// The string value of `"key": "..."` in one JSON line, when present (index.jsonl values carry
/// no escaped quotes).
inline std::optional<std::string> json_string_field(std::string_view line, std::string_view key) {
    const std::string needle = "\"" + std::string(key) + "\": \"";
    const std::size_t at = line.find(needle);
    if (at == std::string_view::npos) {
        return std::nullopt;
    }
    const std::size_t start = at + needle.size();
    const std::size_t end = line.find('"', start);
    if (end == std::string_view::npos) {
        return std::nullopt;
    }
    return std::string(line.substr(start, end - start));
}

/// index.jsonl as file name -> the data authors' `error` (empty when their check passed).
inline std::map<std::string, std::string> load_index(const std::filesystem::path& index_file) {
    std::ifstream in(index_file);
    if (!in) {
        throw std::runtime_error("cannot read " + index_file.string());
    }
    std::map<std::string, std::string> out;
    std::string line;
    while (std::getline(in, line)) {
        if (auto file = json_string_field(line, "file")) {
            out[*file] = json_string_field(line, "error").value_or("");
        }
    }
    return out;
}

}  // namespace moat::test
