// Replay main for fuzz targets built without libFuzzer (MOAT_FUZZ_REPLAY, see
// cmake/Fuzzing.cmake). Feeds every file named on the command line, or found below a directory
// named there, to LLVMFuzzerTestOneInput once, each in its own exactly-sized heap buffer so the
// sanitizers see any read past the end.
//
// Arguments starting with '-' are libFuzzer flags and are ignored. A missing directory is
// skipped, or is an error when MOAT_REQUIRE_SHARED is set to anything but "" or "0". Exit codes:
// 0 all inputs replayed, 1 an input could not be read or a required dir is missing, 77 nothing
// to replay (ctest reports the test as skipped).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);
extern "C" __attribute__((weak)) int LLVMFuzzerInitialize(int* argc, char*** argv);

namespace {

namespace fs = std::filesystem;

bool shared_required() {
    const char* v =
        std::getenv("MOAT_REQUIRE_SHARED");  // NOLINT(concurrency-mt-unsafe): no threads yet
    return v != nullptr && *v != '\0' && std::string_view(v) != "0";
}

bool replay_file(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        std::fprintf(stderr, "replay: cannot read %s\n", path.c_str());
        return false;
    }
    const std::vector<char> bytes{std::istreambuf_iterator<char>(in),
                                  std::istreambuf_iterator<char>()};
    // A fresh allocation of exactly the input's size, as libFuzzer gives.
    std::vector<std::uint8_t> data(bytes.size());
    std::transform(bytes.begin(), bytes.end(), data.begin(),
                   [](char c) { return static_cast<std::uint8_t>(c); });
    LLVMFuzzerTestOneInput(data.data(), data.size());
    return true;
}

}  // namespace

int main(int argc, char** argv) {
    if (LLVMFuzzerInitialize != nullptr) {
        LLVMFuzzerInitialize(&argc, &argv);
    }
    const bool required = shared_required();
    std::size_t replayed = 0;
    bool ok = true;
    for (int i = 1; i < argc; ++i) {
        const std::string_view arg(argv[i]);
        if (arg.empty() || arg.front() == '-') {
            continue;
        }
        const fs::path root(arg);
        std::error_code ec;
        if (fs::is_regular_file(root, ec)) {
            ok = replay_file(root) && ok;
            replayed += 1;
            continue;
        }
        if (!fs::is_directory(root, ec)) {
            std::fprintf(stderr, "replay: %s: %s\n", root.c_str(),
                         required ? "missing (MOAT_REQUIRE_SHARED is set)" : "missing, skipped");
            ok = ok && !required;
            continue;
        }
        std::vector<fs::path> files;
        for (const auto& entry : fs::recursive_directory_iterator(root, ec)) {
            if (entry.is_regular_file()) {
                files.push_back(entry.path());
            }
        }
        std::sort(files.begin(), files.end());  // deterministic order across runs
        for (const auto& file : files) {
            ok = replay_file(file) && ok;
            replayed += 1;
        }
        std::printf("replay: %zu inputs from %s\n", files.size(), root.c_str());
    }
    std::printf("replay: %zu inputs replayed%s\n", replayed, ok ? "" : ", with errors");
    if (!ok) {
        return 1;
    }
    return replayed == 0 ? 77 : 0;
}
