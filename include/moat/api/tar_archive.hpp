// The config backup's container: a plain POSIX ustar archive (what `tar xf` reads), written and
// read here because it is small and the restore must refuse anything odd rather than unpack it.
// Only regular files with plain names are written or read; no paths, links or devices.
#pragma once

#include <string>
#include <string_view>
#include <tl/expected.hpp>
#include <vector>

namespace moat::api {

struct TarFile {
    std::string name;  ///< at most 100 bytes, no '/' at the start, no ".."
    std::string content;
};

/// The archive of `files`, stamped with `mtime` (Unix seconds) and mode 0600.
[[nodiscard]] std::string write_tar(const std::vector<TarFile>& files, long long mtime);

/// The regular files of `archive` (other entry types are skipped); an error for a damaged or
/// truncated archive, a bad checksum, an unsafe name, or more than `max_files` files.
tl::expected<std::vector<TarFile>, std::string> read_tar(std::string_view archive,
                                                         std::size_t max_files = 256);

}  // namespace moat::api
