// JSON → Node with nlohmann/json's SAX interface. nlohmann keeps no positions, so the input is
// fed through CountingIterator, which remembers the last character the lexer read; each SAX
// event takes its line from there (stepping back over whitespace the lexer read ahead).
#include <cstddef>
#include <iterator>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "readers.hpp"
#include "table_reader.hpp"

namespace moat::config::detail {
namespace {

/// Maps positions to 1-based lines; positions asked for are nearly monotonic, so it walks.
class LineTracker {
public:
    explicit LineTracker(std::string_view text) : begin_(text.data()), scan_(text.data()) {}

    void note_read(const char* p) noexcept { last_ = p; }

    /// The line of the last non-blank character the lexer has read.
    std::uint32_t last_token_line() noexcept {
        const char* p = last_;
        if (p == nullptr) {
            return 1;
        }
        while (p > begin_ && (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n')) {
            --p;
        }
        return line_at(p);
    }

    std::uint32_t line_at(const char* p) noexcept {
        while (scan_ < p) {
            line_ += *scan_++ == '\n' ? 1U : 0U;
        }
        while (scan_ > p) {
            line_ -= *--scan_ == '\n' ? 1U : 0U;
        }
        return line_;
    }

    [[nodiscard]] const char* begin() const noexcept { return begin_; }

private:
    const char* begin_;
    const char* scan_;
    const char* last_ = nullptr;
    std::uint32_t line_ = 1;
};

/// A forward iterator over the text that reports every dereference to a LineTracker.
class CountingIterator {
public:
    using iterator_category = std::forward_iterator_tag;
    using value_type = char;
    using difference_type = std::ptrdiff_t;
    using pointer = const char*;
    using reference = const char&;

    CountingIterator() = default;
    CountingIterator(const char* p, LineTracker* tracker) : p_(p), tracker_(tracker) {}

    reference operator*() const noexcept {
        tracker_->note_read(p_);
        return *p_;
    }
    CountingIterator& operator++() noexcept {
        ++p_;
        return *this;
    }
    CountingIterator operator++(int) noexcept {
        CountingIterator old = *this;
        ++p_;
        return old;
    }
    bool operator==(const CountingIterator& other) const noexcept { return p_ == other.p_; }

private:
    const char* p_ = nullptr;
    LineTracker* tracker_ = nullptr;
};

class TreeBuilder {
public:
    TreeBuilder(LineTracker& tracker, std::string_view file_name)
        : tracker_(tracker), file_(file_name) {}

    bool null() { return add(make(Node::Kind::null)); }
    bool boolean(bool v) {
        Node n = make(Node::Kind::boolean);
        n.boolean = v;
        return add(std::move(n));
    }
    bool number_integer(std::int64_t v) {
        Node n = make(Node::Kind::integer);
        n.integer = v;
        return add(std::move(n));
    }
    bool number_unsigned(std::uint64_t v) {
        if (v > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
            Node n = make(Node::Kind::other);
            n.text = "an integer too large";
            return add(std::move(n));
        }
        return number_integer(static_cast<std::int64_t>(v));
    }
    bool number_float(double v, const std::string& /*text*/) {
        Node n = make(Node::Kind::floating);
        n.floating = v;
        return add(std::move(n));
    }
    bool string(std::string& v) {
        Node n = make(Node::Kind::string);
        n.text = std::move(v);
        return add(std::move(n));
    }
    bool binary(nlohmann::json::binary_t& /*v*/) { return add(make(Node::Kind::other)); }
    bool start_object(std::size_t /*size*/) { return open(Node::Kind::table); }
    bool key(std::string& k) {
        stack_.back().key = std::move(k);
        stack_.back().key_line = tracker_.last_token_line();
        return true;
    }
    bool end_object() { return close(); }
    bool start_array(std::size_t /*size*/) { return open(Node::Kind::array); }
    bool end_array() { return close(); }
    bool parse_error(std::size_t position, const std::string& /*last_token*/,
                     const nlohmann::detail::exception& ex) {
        std::string what = ex.what();
        if (const std::size_t column = what.find(", column "); column != std::string::npos) {
            if (const std::size_t colon = what.find(": ", column); colon != std::string::npos) {
                what = what.substr(colon + 2);
            }
        }
        const std::uint32_t line =
            tracker_.line_at(tracker_.begin() + (position > 0 ? position - 1 : 0));
        errors_.push_back(
            ConfigError{Errc::syntax, std::string(file_), line, "", "JSON syntax error: " + what});
        return false;
    }

    Node& root() { return root_; }
    ConfigErrors& errors() { return errors_; }

private:
    static constexpr std::size_t kMaxDepth = 64;

    struct Level {
        Node node;
        std::string key;
        std::uint32_t key_line;
    };

    Node make(Node::Kind kind) {
        Node n;
        n.kind = kind;
        n.line = tracker_.last_token_line();
        return n;
    }

    /// A new array or table; nesting deeper than kMaxDepth stops the parse with an error (the
    /// tree is walked and destroyed recursively, and no config key nests more than a few levels).
    bool open(Node::Kind kind) {
        if (stack_.size() >= kMaxDepth) {
            errors_.push_back(ConfigError{
                Errc::syntax, std::string(file_), tracker_.last_token_line(), path_here(),
                "arrays and objects nested more than " + std::to_string(kMaxDepth) + " deep"});
            return false;
        }
        stack_.push_back(Level{make(kind), {}, 0});
        return true;
    }

    bool close() {
        Node done = std::move(stack_.back().node);
        stack_.pop_back();
        return add(std::move(done));
    }

    bool add(Node value) {
        if (stack_.empty()) {
            root_ = std::move(value);
            return true;
        }
        Level& top = stack_.back();
        if (top.node.kind == Node::Kind::array) {
            top.node.items.push_back(std::move(value));
            return true;
        }
        for (const Field& f : top.node.fields) {
            if (f.key == top.key && errors_.size() < kMaxErrors) {
                errors_.push_back(ConfigError{
                    Errc::duplicate_key, std::string(file_), top.key_line, path_here(),
                    "duplicate key (first given on line " + std::to_string(f.key_line) + ")"});
            }
        }
        top.node.fields.push_back(Field{top.key, top.key_line, std::move(value)});
        return true;
    }

    /// The key path of the value being added, for duplicate-key errors.
    [[nodiscard]] std::string path_here() const {
        std::string path;
        for (const Level& level : stack_) {
            if (level.node.kind == Node::Kind::array) {
                path += "[" + std::to_string(level.node.items.size()) + "]";
            } else {
                path = join(path, level.key);
            }
        }
        return path;
    }

    LineTracker& tracker_;
    std::string_view file_;
    std::vector<Level> stack_;
    Node root_;
    ConfigErrors errors_;
};

}  // namespace

tl::expected<Node, ConfigErrors> read_json(std::string_view text, std::string_view file_name) {
    LineTracker tracker(text);
    TreeBuilder builder(tracker, file_name);
    const CountingIterator first(text.data(), &tracker);
    const CountingIterator last(text.data() + text.size(), &tracker);
    nlohmann::json::sax_parse(first, last, &builder, nlohmann::json::input_format_t::json,
                              /*strict=*/true, /*ignore_comments=*/false);
    if (!builder.errors().empty()) {
        return tl::unexpected(std::move(builder.errors()));
    }
    if (builder.root().kind != Node::Kind::table) {
        return tl::unexpected(
            ConfigErrors{ConfigError{Errc::wrong_type, std::string(file_name), builder.root().line,
                                     "", "the top level must be an object"}});
    }
    return std::move(builder.root());
}

}  // namespace moat::config::detail
