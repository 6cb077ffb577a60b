// The state directory of downloaded lists: per list, the last good copy (`KEY.list`) and its
// status (`KEY.json`), both replaced atomically (temporary file, fsync, rename, fsync of the
// directory), so a crash or power cut leaves either the old or the new file, never half of one.
//
// KEY is the list's name made file-safe plus a hash of its URL, so pointing a list at another
// URL starts from scratch instead of reusing a copy of something else.
//
// The status files are the persistent record, not the only one: when the disk refuses a status
// (full, read-only), the daemon holds the newer status in memory (hold_status) and read_status
// returns it, so the refresh schedule's back-off, the metrics and the API stay right meanwhile.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <tl/expected.hpp>

#include "moat/lists/list_status.hpp"

namespace moat::lists {

class StateDir {
public:
    explicit StateDir(std::filesystem::path root) : root_(std::move(root)) {}

    [[nodiscard]] const std::filesystem::path& root() const noexcept { return root_; }

    /// Creates the directory (and its parents) when missing; the error names the path.
    [[nodiscard]] tl::expected<void, std::string> ensure() const;

    [[nodiscard]] static std::string key_of(std::string_view name, std::string_view url);
    [[nodiscard]] std::filesystem::path copy_path(const std::string& key) const;
    [[nodiscard]] std::filesystem::path status_path(const std::string& key) const;
    /// Where a download is written before it is checked.
    [[nodiscard]] std::filesystem::path partial_path(const std::string& key) const;

    /// The status of `key`: the one held in memory if any (newer than the file), else the file's;
    /// empty when there is none or it cannot be read.
    [[nodiscard]] std::optional<ListStatus> read_status(const std::string& key) const;
    [[nodiscard]] tl::expected<void, std::string> write_status(const std::string& key,
                                                               const ListStatus& status) const;
    /// The status of `key` this process holds because the disk refused it; empty when none.
    [[nodiscard]] std::optional<ListStatus> held_status(const std::string& key) const;
    /// Holds `status` in memory for every StateDir of this process with the same root, until
    /// release_status: for a status that could not be written.
    void hold_status(const std::string& key, const ListStatus& status) const;
    /// Forgets the held status of `key`: the file is current again.
    void release_status(const std::string& key) const;
    /// Makes the checked download at partial_path(key) the copy.
    [[nodiscard]] tl::expected<void, std::string> install_copy(const std::string& key) const;

private:
    std::filesystem::path root_;
};

/// Writes `content` to `path` through a temporary file in the same directory, fsync and rename.
/// Never throws: a full or read-only disk is an error naming `path` and the reason.
[[nodiscard]] tl::expected<void, std::string> write_file_atomically(
    const std::filesystem::path& path, std::string_view content);

}  // namespace moat::lists
