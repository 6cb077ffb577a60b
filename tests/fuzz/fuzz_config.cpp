// The config loader on any TOML or JSON text, and, for a text that loads, the write-back the
// REST API does (read_document -> render_document in either syntax -> load again).
//
// Why: the config is read at start and on every reload, and written back by the API from what
// the dashboard sends; a crash there stops the daemon (or a reload), an error without a place
// leaves the user guessing, and a rendering that does not load again loses the user's settings.
//
// Input: the first octet picks the syntax (even: TOML, odd: JSON); the rest is the file.
//
// The five toml++ 3.3.0 bugs this target found are fuzzed like any other text (docs/security.md):
// the loader refuses non-ASCII text outside strings (bug 2, toml_guard.hpp) and compiles toml++
// with its parser's assertions off (bugs 1, 3, 4 and 5, toml_reader.cpp). The corpus keeps one
// input for each.
//
// Checked: parse() never crashes or throws. An error result holds 1..kMaxErrors errors, plus one
// too_many_errors at the end only when there were more; every error names the file, has a
// known code and a message, and a line within the text (only too_many_errors has none); errors
// about a key (unknown, out of range, bad value) name its path.
// A text that loads reads as a document, and the document rendered as TOML and as JSON loads
// again to the same Config; so does a TOML text rendered with its comments (toml_comments.hpp).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz_check.hpp"
#include "moat/config/config.hpp"
#include "moat/config/config_error.hpp"
#include "moat/config/document.hpp"
#include "moat/config/loader.hpp"
#include "moat/config/toml_comments.hpp"

namespace {

using moat::config::Errc;
using moat::config::Syntax;

constexpr std::string_view kTomlName = "fuzz.toml";
constexpr std::string_view kJsonName = "fuzz.json";

/// Errors about one key, which must name its path (a duplicate "" at the top level too:
/// corpus/fuzz_config/json_duplicate_empty_key).
bool names_a_key(Errc code) {
    switch (code) {
        case Errc::duplicate_key:
        case Errc::unknown_key:
        case Errc::out_of_range:
        case Errc::bad_value: return true;
        default: return false;
    }
}

void check_errors(const moat::config::ConfigErrors& errors, std::string_view text,
                  std::string_view file) {
    const auto lines = static_cast<std::uint32_t>(std::count(text.begin(), text.end(), '\n') + 1);
    MOAT_FUZZ_CHECK(!errors.empty() && errors.size() <= moat::config::kMaxErrors + 1,
                    std::to_string(errors.size()) + " errors");
    for (std::size_t i = 0; i < errors.size(); ++i) {
        const auto& e = errors[i];
        const std::string where = e.to_string();
        MOAT_FUZZ_CHECK(e.file == file, where);
        MOAT_FUZZ_CHECK(e.code >= Errc::syntax && e.code <= Errc::too_many_errors, where);
        MOAT_FUZZ_CHECK(!e.message.empty(), where);
        if (e.code == Errc::too_many_errors) {
            MOAT_FUZZ_CHECK(i == moat::config::kMaxErrors && i + 1 == errors.size(), where);
            continue;
        }
        MOAT_FUZZ_CHECK(e.line >= 1 && e.line <= lines,
                        where + " (the text has " + std::to_string(lines) + " lines)");
        MOAT_FUZZ_CHECK(!names_a_key(e.code) || !e.path.empty(), where);
        MOAT_FUZZ_CHECK(where.starts_with(std::string(file) + ":" + std::to_string(e.line) + ": "),
                        where);
    }
}

/// The API's write-back: the loaded text as a document, rendered in `to`, must load the same.
void check_write_back(const moat::config::Config& loaded, std::string_view text, Syntax syntax,
                      std::string_view file, Syntax to) {
    const auto document = moat::config::read_document(text, syntax, file);
    MOAT_FUZZ_CHECK(document.has_value(), "a text that loads does not read as a document");
    const std::string rendered = moat::config::render_document(*document, to);
    const auto again =
        moat::config::parse(rendered, to, to == Syntax::toml ? kTomlName : kJsonName);
    MOAT_FUZZ_CHECK(again.has_value(), "rendered file does not load:\n" + rendered + "\n" +
                                           (again ? "" : moat::config::to_string(again.error())));
    MOAT_FUZZ_CHECK(*again == loaded, "rendered file loads differently:\n" + rendered);
    if (syntax == Syntax::toml && to == Syntax::toml) {
        // As the API writes a TOML file back: with the old text's comments above their lines.
        const moat::config::TomlComments comments = moat::config::collect_toml_comments(text);
        const std::string commented = moat::config::render_document(*document, to, &comments);
        const auto kept = moat::config::parse(commented, to, kTomlName);
        MOAT_FUZZ_CHECK(kept.has_value(), "rendered file with comments does not load:\n" +
                                              commented + "\n" +
                                              (kept ? "" : moat::config::to_string(kept.error())));
        MOAT_FUZZ_CHECK(*kept == loaded,
                        "rendered file with comments loads differently:\n" + commented);
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size == 0) {
        return 0;
    }
    const Syntax syntax = (data[0] & 1U) == 0 ? Syntax::toml : Syntax::json;
    const std::string_view file = syntax == Syntax::toml ? kTomlName : kJsonName;
    const std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);

    const auto loaded = moat::config::parse(text, syntax, file);
    if (!loaded) {
        check_errors(loaded.error(), text, file);
        return 0;
    }
    check_write_back(*loaded, text, syntax, file, Syntax::toml);
    check_write_back(*loaded, text, syntax, file, Syntax::json);
    return 0;
}
