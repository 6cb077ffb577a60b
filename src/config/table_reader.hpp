// Typed reading of one table of the document tree, for the schema: each getter looks a key
// up, checks its type and range, converts it, and records an error with file, line and key
// path when it cannot. Keys never asked for are unknown: finish() reports each one with the
// nearest known key suggested. Absent keys leave the output (the default) untouched.
//
// Context collects the errors of one load, at most kMaxErrors (then one too_many_errors).
#pragma once

#include <chrono>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "moat/config/config_error.hpp"
#include "moat/config/values.hpp"
#include "node.hpp"

namespace moat::config::detail {

class Context {
public:
    explicit Context(std::string_view file) : file_(file) {}

    void error(Errc code, std::uint32_t line, std::string path, std::string message);
    [[nodiscard]] bool ok() const noexcept { return errors_.empty(); }
    ConfigErrors take() { return std::move(errors_); }

private:
    std::string file_;
    ConfigErrors errors_;
    std::size_t dropped_ = 0;
};

/// "a.b" + "c" → "a.b.c"; "" + "c" → "c".
std::string join(const std::string& path, std::string_view key);
/// "a.b" + 2 → "a.b[2]".
std::string index(const std::string& path, std::size_t i);
/// The candidate closest to `key` by edit distance, or "" when none is close.
std::string nearest(std::string_view key, const std::vector<std::string_view>& candidates);

/// Records a type error unless `node` is of `kind`; returns whether it is.
bool expect_kind(Context& ctx, const Node& node, const std::string& path, Node::Kind kind,
                 std::string_view what = {});

// Value readers for a node at `path` (also used for array items). nullopt after an error.
std::optional<std::string> read_string(Context& ctx, const Node& node, const std::string& path);
std::optional<Endpoint> read_endpoint(Context& ctx, const Node& node, const std::string& path,
                                      std::uint16_t default_port);
std::optional<IpAddress> read_ip(Context& ctx, const Node& node, const std::string& path);
std::optional<Cidr> read_cidr(Context& ctx, const Node& node, const std::string& path);
/// A domain name, returned lower-case without the trailing dot; the root is rejected.
std::optional<std::string> read_domain(Context& ctx, const Node& node, const std::string& path);

template <class E>
using EnumNames = std::initializer_list<std::pair<std::string_view, E>>;

class TableReader {
public:
    /// `table` must be a table node; `path` is its key path ("" at the root).
    TableReader(Context& ctx, const Node& table, std::string path)
        : ctx_(ctx), table_(table), path_(std::move(path)) {}

    /// The value of `key` (marking it known), or nullptr when absent.
    const Node* find(std::string_view key);
    [[nodiscard]] std::string path_of(std::string_view key) const { return join(path_, key); }
    [[nodiscard]] std::uint32_t line() const noexcept { return table_.line; }
    [[nodiscard]] const std::string& path() const noexcept { return path_; }
    [[nodiscard]] Context& context() noexcept { return ctx_; }

    bool boolean(std::string_view key, bool& out);
    bool optional_boolean(std::string_view key, std::optional<bool>& out);
    bool integer(std::string_view key, std::uint32_t& out, std::int64_t lo, std::int64_t hi);
    bool string(std::string_view key, std::string& out);
    bool duration(std::string_view key, Duration& out, Duration lo, Duration hi);
    /// A duration in whole seconds (TTLs).
    bool seconds(std::string_view key, std::chrono::seconds& out, std::chrono::seconds lo,
                 std::chrono::seconds hi);
    bool size(std::string_view key, std::uint64_t& out, std::uint64_t lo, std::uint64_t hi);
    bool ip(std::string_view key, IpAddress& out);

    template <class E>
    bool enumeration(std::string_view key, E& out, EnumNames<E> names) {
        const Node* node = find(key);
        if (node == nullptr || !expect_kind(ctx_, *node, path_of(key), Node::Kind::string)) {
            return false;
        }
        std::vector<std::string_view> valid;
        for (const auto& [name, value] : names) {
            if (node->text == name) {
                out = value;
                return true;
            }
            valid.push_back(name);
        }
        bad_enum(*node, key, valid);
        return false;
    }

    /// Reads an array at `key` with `item(node, path)` per element; `min_items` is enforced.
    template <class F>
    bool array(std::string_view key, std::size_t min_items, F&& item) {
        const Node* node = find(key);
        const std::string path = path_of(key);
        if (node == nullptr || !expect_kind(ctx_, *node, path, Node::Kind::array)) {
            return false;
        }
        if (node->items.size() < min_items) {
            ctx_.error(Errc::bad_value, node->line, path,
                       "needs at least " + std::to_string(min_items) +
                           (min_items == 1 ? " entry" : " entries"));
            return false;
        }
        for (std::size_t i = 0; i < node->items.size(); ++i) {
            item(node->items[i], index(path, i));
        }
        return true;
    }

    /// Calls `read(TableReader&)` on each table of the array at `key` (each checked to be a
    /// table, its unknown keys reported after `read`); false when `key` is absent or no array.
    template <class F>
    bool tables(std::string_view key, F&& read) {
        return array(key, 0, [&](const Node& item, const std::string& path) {
            if (!expect_kind(ctx_, item, path, Node::Kind::table)) {
                return;
            }
            TableReader table(ctx_, item, path);
            read(table);
            table.finish();
        });
    }

    /// Reports every key never passed to find().
    void finish();

private:
    void bad_enum(const Node& node, std::string_view key,
                  const std::vector<std::string_view>& valid);
    const Node* find_kind(std::string_view key, Node::Kind kind, std::string_view what = {});

    Context& ctx_;
    const Node& table_;
    std::string path_;
    std::vector<std::string_view> known_;
};

}  // namespace moat::config::detail
