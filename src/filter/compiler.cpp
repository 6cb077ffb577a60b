#include "moat/filter/compiler.hpp"

#include <array>
#include <utility>

#include "moat/filter/line_parser.hpp"
#include "moat/filter/list_scan.hpp"
#include "regex_matcher.hpp"

namespace moat::filter {

/// Collects the rules of one line into the compiler's tables.
class Compiler::Sink final : public RuleSink {
public:
    Sink(Compiler& c, std::size_t list, std::uint64_t line) : c_(c), list_(list), line_(line) {}

    void on_name(const NameRule& rule) override {
        const bool allow = rule.exception || kind() == ListKind::allow;
        const auto list = static_cast<std::uint16_t>(list_);
        const auto line = static_cast<std::uint32_t>(line_);
        if (rule.match == RuleMatch::exact) {
            (allow ? c_.allow_exact_ : c_.block_exact_).add(rule.hash, list, rule.important, line);
        } else {
            (allow ? c_.allow_subtree_ : c_.block_subtree_)
                .add(rule.hash, list, rule.important, line);
        }
        ++stats().entries;
    }

    bool on_regex(const RegexRule& rule) override {
        auto re = std::make_unique<re2::RE2>(
            re2::StringPiece(rule.pattern.data(), rule.pattern.size()), RegexMatcher::options());
        if (!re->ok()) {
            return false;
        }
        const bool allow = rule.exception || kind() == ListKind::allow;
        (allow ? c_.allow_regex_ : c_.block_regex_)
            ->add({std::move(re), static_cast<std::uint16_t>(list_),
                   static_cast<std::uint32_t>(line_), rule.important});
        ++stats().entries;
        return true;
    }

    void on_skipped() override { ++stats().skipped; }

private:
    [[nodiscard]] ListKind kind() const noexcept { return c_.lists_[list_].info.spec.kind; }
    ListStats& stats() noexcept { return c_.lists_[list_].info.stats; }

    Compiler& c_;
    std::size_t list_;
    std::uint64_t line_;
};

Compiler::Compiler(CompileOptions options)
    : options_(options),
      block_exact_(options.keep_line_numbers),
      block_subtree_(options.keep_line_numbers),
      allow_exact_(options.keep_line_numbers),
      allow_subtree_(options.keep_line_numbers),
      block_regex_(std::make_unique<RegexMatcher>()),
      allow_regex_(std::make_unique<RegexMatcher>()) {}
Compiler::Compiler(Compiler&&) noexcept = default;
Compiler& Compiler::operator=(Compiler&&) noexcept = default;
Compiler::~Compiler() = default;

tl::expected<std::size_t, Errc> Compiler::open_list(ListSpec spec) {
    if (lists_.size() >= kMaxLists) {
        return tl::unexpected(Errc::too_many_lists);
    }
    lists_.push_back({{std::move(spec), {}}, {}, true});
    return lists_.size() - 1;
}

void Compiler::parse(std::size_t list, std::string_view line) {
    ListInfo& info = lists_[list].info;
    ++info.stats.lines;
    Sink sink(*this, list, info.stats.lines);
    record_line(info.stats,
                parse_line(line, info.spec.format, info.spec.entries_include_subdomains, sink),
                line);
}

tl::expected<void, Errc> Compiler::feed(std::size_t list, std::string_view bytes) {
    if (list >= lists_.size() || !lists_[list].open) {
        return tl::unexpected(Errc::bad_list);
    }
    lists_[list].lines.feed(bytes, [&](std::string_view line) { parse(list, line); });
    return {};
}

tl::expected<void, Errc> Compiler::close_list(std::size_t list) {
    if (list >= lists_.size() || !lists_[list].open) {
        return tl::unexpected(Errc::bad_list);
    }
    lists_[list].lines.finish([&](std::string_view line) { parse(list, line); });
    lists_[list].open = false;
    return {};
}

tl::expected<std::size_t, Errc> Compiler::add_text(ListSpec spec, std::string_view text) {
    auto list = open_list(std::move(spec));
    if (!list) {
        return list;
    }
    (void)feed(*list, text);
    (void)close_list(*list);
    return list;
}

tl::expected<std::size_t, Errc> Compiler::add_stream(ListSpec spec, std::istream& in) {
    auto list = open_list(std::move(spec));
    if (!list) {
        return list;
    }
    std::string chunk(std::size_t{64} * 1024, '\0');
    while (in) {
        in.read(chunk.data(), static_cast<std::streamsize>(chunk.size()));
        const auto got = static_cast<std::size_t>(in.gcount());
        if (got == 0) {
            break;
        }
        (void)feed(*list, std::string_view(chunk.data(), got));
    }
    (void)close_list(*list);
    return list;
}

const ListStats& Compiler::stats(std::size_t list) const noexcept {
    return lists_[list].info.stats;
}

tl::expected<std::shared_ptr<const Snapshot>, Errc> Compiler::build() && {
    for (std::size_t i = 0; i < lists_.size(); ++i) {
        if (lists_[i].open) {
            (void)close_list(i);
        }
    }
    constexpr std::size_t kMaxEntries = 0xFFFFFFF0;  // table indexes are 32-bit
    for (const auto* b : {&block_exact_, &block_subtree_, &allow_exact_, &allow_subtree_}) {
        if (b->size() > kMaxEntries) {
            return tl::unexpected(Errc::too_many_rules);
        }
    }
    if (!block_regex_->compile() || !allow_regex_->compile()) {
        return tl::unexpected(Errc::regex_set);
    }
    auto snap = std::make_shared<Snapshot>();
    // One table at a time: each builder frees its blocks as its table fills.
    snap->sets_ = ListSets(lists_.size());
    snap->block_exact_ = block_exact_.build(snap->sets_);
    snap->block_subtree_ = block_subtree_.build(snap->sets_);
    snap->allow_exact_ = allow_exact_.build(snap->sets_);
    snap->allow_subtree_ = allow_subtree_.build(snap->sets_);
    snap->sets_.finish();
    snap->block_regex_ = std::move(block_regex_);
    snap->allow_regex_ = std::move(allow_regex_);
    snap->lists_.reserve(lists_.size());
    for (OpenList& l : lists_) {
        snap->lists_.push_back(std::move(l.info));
    }
    lists_.clear();
    return std::shared_ptr<const Snapshot>(std::move(snap));
}

}  // namespace moat::filter
