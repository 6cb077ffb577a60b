// A group of RE2 regex rules (all block or all allow) matched at once through re2::RE2::Set.
//
// The set says whether any rule matches in one linear-time pass; only then are the individual
// rules tried to find which one (and whether an $important one did). Before the set, an
// AtomScreen turns away names that hold none of the literal text the rules need. Immutable after
// compile(); matching is safe from many threads (RE2 guarantees it) and does not allocate once
// RE2's DFA cache is warm.
#pragma once

#include <re2/re2.h>
#include <re2/set.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "atom_screen.hpp"
#include "moat/filter/list_sets.hpp"

namespace moat::filter {

class RegexMatcher {
public:
    struct Rule {
        std::unique_ptr<re2::RE2> re;
        std::uint16_t list = 0;
        std::uint32_t line = 0;
        bool important = false;
    };
    static constexpr std::size_t kNone = static_cast<std::size_t>(-1);

    RegexMatcher();

    /// RE2 options used for every rule: case-insensitive, no logging, linear-time only.
    static re2::RE2::Options options();

    /// Takes a compiled, valid rule.
    void add(Rule rule) { rules_.push_back(std::move(rule)); }
    /// Builds the set and the screen. False when RE2 cannot (memory budget exceeded).
    bool compile();

    /// Whether some rule matches `text`, whatever the selection: the screen, then when it
    /// passes the text, one search of the set.
    [[nodiscard]] bool any_rule_matches(std::string_view text) const noexcept;
    /// Once any_rule_matches() said yes: the index of the matching rule (an important one when
    /// several match) among the rules of the lists `selection` marks (null: all), or kNone. The
    /// rules are tried one by one.
    [[nodiscard]] std::size_t which_rule(std::string_view text,
                                         const ListSelection* selection) const noexcept;
    /// Unique among the matchers this process has made (RegexMemo's keys use it).
    [[nodiscard]] std::uint64_t id() const noexcept { return id_; }
    /// Calls of any_rule_matches() on this thread: lets a test see a remembered name skip one.
    [[nodiscard]] static std::uint64_t searches_on_this_thread() noexcept;

    [[nodiscard]] const Rule& rule(std::size_t i) const noexcept { return rules_[i]; }
    [[nodiscard]] std::size_t size() const noexcept { return rules_.size(); }
    [[nodiscard]] bool empty() const noexcept { return rules_.empty(); }
    [[nodiscard]] std::size_t memory_bytes() const noexcept;

private:
    std::vector<Rule> rules_;
    std::unique_ptr<re2::RE2::Set> set_;
    AtomScreen screen_;
    std::uint64_t id_;
};

}  // namespace moat::filter
