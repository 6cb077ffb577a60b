// TOML → Node with toml++ (header-only mode; its parser records the line of every node and
// key). toml++ reports its first syntax error by exception, caught here and turned into a
// ConfigError.
//
// toml++ 3.3.0 states what its parser expects with TOML_ASSERT_ASSUME: assert() in a build
// without NDEBUG, and with NDEBUG a promise to the compiler (__builtin_assume under Clang). Four
// of those expectations fail on malformed text (`[,`, `a = [}]`, `a = 1979-05-27Tx7:32:00`,
// `a = 1979-05-27 1`; docs/security.md, "Fuzzing"): a debug build aborted, a Clang
// release build had undefined behaviour, where the parser's next step reports a syntax error (as
// a GCC release build did all along). Both are turned off here, before toml++ is included. This
// is the only file that includes it, so its header-only parser is compiled only with them off.
// NOLINTNEXTLINE(readability-identifier-naming): toml++'s names
#define TOML_ASSERT(expr) static_cast<void>(0)
#if __has_include(<toml++/impl/preprocessor.hpp>)  // later toml++ releases name headers .hpp
#include <toml++/impl/preprocessor.hpp>
#else
#include <toml++/impl/preprocessor.h>
#endif
#undef TOML_ASSERT_ASSUME
// NOLINTNEXTLINE(readability-identifier-naming)
#define TOML_ASSERT_ASSUME(expr) static_cast<void>(0)
#include <toml++/toml.h>

#include <algorithm>
#include <numeric>
#include <string>
#include <utility>
#include <vector>

#include "readers.hpp"
#include "toml_guard.hpp"

namespace moat::config::detail {
namespace {

std::uint32_t line_of(const toml::source_region& src, std::uint32_t fallback) {
    return src.begin.line != 0 ? static_cast<std::uint32_t>(src.begin.line) : fallback;
}

Node convert(const toml::node& in, std::uint32_t fallback_line);

Node convert_table(const toml::table& in, std::uint32_t line) {
    Node out;
    out.kind = Node::Kind::table;
    out.line = line;
    std::vector<toml::source_index> columns;
    for (const auto& [key, value] : in) {
        const std::uint32_t key_line = line_of(key.source(), line);
        out.fields.push_back(Field{std::string(key.str()), key_line, convert(value, key_line)});
        columns.push_back(key.source().begin.column);
    }
    // toml++ tables iterate in key order; restore file order (local records keep it).
    std::vector<std::size_t> order(out.fields.size());
    std::iota(order.begin(), order.end(), std::size_t{0});
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
        return std::pair{out.fields[a].key_line, columns[a]} <
               std::pair{out.fields[b].key_line, columns[b]};
    });
    std::vector<Field> sorted;
    sorted.reserve(order.size());
    for (const std::size_t i : order) {
        sorted.push_back(std::move(out.fields[i]));
    }
    out.fields = std::move(sorted);
    return out;
}

Node convert(const toml::node& in, std::uint32_t fallback_line) {
    const std::uint32_t line = line_of(in.source(), fallback_line);
    if (const auto* table = in.as_table()) {
        return convert_table(*table, line);
    }
    Node out;
    out.line = line;
    if (const auto* array = in.as_array()) {
        out.kind = Node::Kind::array;
        for (const toml::node& item : *array) {
            out.items.push_back(convert(item, line));
        }
    } else if (const auto* s = in.as_string()) {
        out.kind = Node::Kind::string;
        out.text = s->get();
    } else if (const auto* i = in.as_integer()) {
        out.kind = Node::Kind::integer;
        out.integer = i->get();
    } else if (const auto* f = in.as_floating_point()) {
        out.kind = Node::Kind::floating;
        out.floating = f->get();
    } else if (const auto* b = in.as_boolean()) {
        out.kind = Node::Kind::boolean;
        out.boolean = b->get();
    } else {
        out.kind = Node::Kind::other;
        out.text = in.is_time() ? "a time" : in.is_date() ? "a date" : "a date-time";
    }
    return out;
}

}  // namespace

tl::expected<Node, ConfigErrors> read_toml(std::string_view text, std::string_view file_name) {
    if (const auto line = non_ascii_outside_quotes(text)) {
        return tl::unexpected(ConfigErrors{ConfigError{
            Errc::syntax, std::string(file_name), *line, "",
            "TOML syntax error: a non-ASCII character outside quotes (bare keys are ASCII: quote "
            "the key, as in \"café\" = 1)"}});
    }
    try {
        const toml::table root = toml::parse(text, file_name);
        return convert_table(root, 1);
    } catch (const toml::parse_error& e) {
        return tl::unexpected(ConfigErrors{ConfigError{
            Errc::syntax, std::string(file_name), static_cast<std::uint32_t>(e.source().begin.line),
            "", "TOML syntax error: " + std::string(e.description())}});
    }
}

}  // namespace moat::config::detail
