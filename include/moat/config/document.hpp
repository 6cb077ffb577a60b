// A config file as an editable tree, for the changes made through the API: the file is read into
// an ordered JSON tree (TOML or JSON, keys in file order), changed, rendered back in its own
// syntax, checked to load, and written atomically, so the file stays the one source of truth.
//
// No TOML library keeps comments through an edit: the renderer writes back the old file's comment
// blocks, each above the line it sat above (toml_comments.hpp). The file as it was is also kept
// beside it as FILE.bak; docs/configuration.md says what is kept.
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <tl/expected.hpp>

#include "moat/config/config_error.hpp"
#include "moat/config/loader.hpp"
#include "moat/config/toml_comments.hpp"

namespace moat::config {

using Document = nlohmann::ordered_json;

/// The tree of `text` (a table at the root), or its syntax errors.
tl::expected<Document, ConfigErrors> read_document(std::string_view text, Syntax syntax,
                                                   std::string_view file_name = "<string>");

/// The tree as a file of `syntax`: TOML with scalars first, then [tables] and [[arrays of
/// tables]]; JSON indented by 2. Null values are left out. With `comments` (TOML only), the old
/// file's comment blocks go back above their lines. With `before`, the tree the comments were
/// collected from, an entry of an array of tables keeps the block of the entry it continues
/// (the same entry, or the one it was edited from), wherever the change moved it; without it,
/// each entry gets the block of the entry that had its position.
[[nodiscard]] std::string render_document(const Document& document, Syntax syntax,
                                          const TomlComments* comments = nullptr,
                                          const Document* before = nullptr);

/// Replaces `path` with `text`: a temporary file beside it, fsync, rename, fsync of the
/// directory; with `keep_backup` the old file stays as `path`.bak. Keeps the old file's mode.
tl::expected<void, std::string> write_file_atomically(const std::filesystem::path& path,
                                                      std::string_view text, bool keep_backup);

}  // namespace moat::config
