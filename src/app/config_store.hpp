// The config file as the API changes it: read the file, change its tree, check that the result
// loads, and write it back atomically (the old file kept as FILE.bak), so the file stays the one
// source of truth and a hand edit and a dashboard click never disagree. The daemon then reloads
// from the file as SIGHUP would.
#pragma once

#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <tl/expected.hpp>

#include "moat/config/document.hpp"

namespace moat::app {

/// Why a change was not made, as the API answers it.
struct EditFailure {
    int status = 400;  ///< 400 invalid, 404 no such entry, 409 conflict or no file, 500 I/O
    std::string error;
};

class ConfigStore {
public:
    /// `file`: the daemon's config file; none when it runs on the embedded defaults.
    explicit ConfigStore(std::optional<std::filesystem::path> file) : file_(std::move(file)) {}

    [[nodiscard]] bool writable() const noexcept { return file_.has_value(); }
    [[nodiscard]] const std::optional<std::filesystem::path>& file() const noexcept {
        return file_;
    }

    /// Changes the file's tree with `change` (which says why not, or nothing when it changed
    /// it), checks the result loads, and writes it.
    using Change = std::function<std::optional<EditFailure>(config::Document&)>;
    [[nodiscard]] tl::expected<void, EditFailure> edit(const Change& change) const;

    /// Replaces the whole file with `text` in the file's syntax, if it loads (a restore).
    [[nodiscard]] tl::expected<void, EditFailure> replace(std::string_view text) const;

    /// The file's text as it is on disk now.
    [[nodiscard]] tl::expected<std::string, EditFailure> read_text() const;

private:
    std::optional<std::filesystem::path> file_;
};

}  // namespace moat::app
