// A fresh directory under the system's temporary directory, removed with everything in it when
// the test ends.
#pragma once

#include <unistd.h>  // mkdtemp

#include <filesystem>
#include <stdexcept>
#include <string>

namespace moat::test {

class TempDir {
public:
    explicit TempDir(const std::string& prefix = "moat-test") {
        std::string tmpl = (std::filesystem::temp_directory_path() / (prefix + "-XXXXXX")).string();
        if (::mkdtemp(tmpl.data()) == nullptr) {
            throw std::runtime_error("mkdtemp failed for " + tmpl);
        }
        path_ = tmpl;
    }
    ~TempDir() {
        std::error_code ec;
        std::filesystem::remove_all(path_, ec);
    }
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;
    TempDir(TempDir&&) = delete;
    TempDir& operator=(TempDir&&) = delete;
    [[nodiscard]] const std::filesystem::path& path() const { return path_; }

private:
    std::filesystem::path path_;
};

}  // namespace moat::test
