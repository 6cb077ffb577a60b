#include "moat/filter/snapshot.hpp"

#include <array>
#include <cstring>

#include "moat/filter/name_hash.hpp"
#include "regex_matcher.hpp"

namespace moat::filter {
namespace {

/// The probes of one exact/subtree table pair for one query name: the whole name in the exact
/// table, every suffix in the subtree table. Filled in two passes (prefetch, then probe) so the
/// memory reads of all suffixes overlap (name_hash_set.hpp).
using PairProbes = MatchProbes::Pair;

void prefetch(const NameHashSet& exact, const NameHashSet& subtree,
              const SuffixHashes& h) noexcept {
    if (!exact.empty() && h.count > 0) {
        exact.prefetch(h.hash[0]);
    }
    if (!subtree.empty()) {
        for (std::size_t i = 0; i < h.count; ++i) {
            subtree.prefetch(h.hash[i]);
        }
    }
}

void probe(const NameHashSet& exact, const NameHashSet& subtree, const SuffixHashes& h,
           PairProbes& p) noexcept {
    p.exact = {0, 0};
    if (!exact.empty() && h.count > 0) {
        p.exact = exact.probe(h.hash[0]);
    }
    if (!subtree.empty()) {
        for (std::size_t i = 0; i < h.count; ++i) {
            p.subtree[i] = subtree.probe(h.hash[i]);
        }
    }
}

/// The first hit of `hashes` (from the whole name towards the TLD) in a subtree table, preferring
/// an important entry.
struct Hit {
    std::uint32_t slot = NameHashSet::kNotFound;
    std::uint8_t suffix = 0;
    bool important = false;
};

/// Whether the rule at `slot` counts for the query: its list set has a selected list.
bool counts(const NameHashSet& set, std::uint32_t slot, const ListSelection* selection) noexcept {
    return selection == nullptr || selection->has(set.list(slot));
}

Hit find_subtree(const NameHashSet& set, const SuffixHashes& h, const PairProbes& p,
                 const ListSelection* selection) noexcept {
    Hit hit;
    if (set.empty()) {
        return hit;
    }
    for (std::size_t i = 0; i < h.count; ++i) {
        const std::uint32_t slot = set.find_in(p.subtree[i], h.hash[i]);
        if (slot == NameHashSet::kNotFound || !counts(set, slot, selection)) {
            continue;
        }
        const bool important = set.important(slot);
        if (hit.slot == NameHashSet::kNotFound || (important && !hit.important)) {
            hit = {slot, static_cast<std::uint8_t>(i), important};
            if (important) {
                break;
            }
        }
    }
    return hit;
}

Hit find_exact(const NameHashSet& set, const SuffixHashes& h, const PairProbes& p,
               const ListSelection* selection) noexcept {
    if (set.empty() || h.count == 0) {
        return {};
    }
    const std::uint32_t slot = set.find_in(p.exact, h.hash[0]);
    if (slot == NameHashSet::kNotFound || !counts(set, slot, selection)) {
        return {};
    }
    return {slot, 0, set.important(slot)};
}

/// The list a verdict names: the first selected list of the rule's set. The rule's line belongs
/// to the set's first list, so it is kept only when that is the list named.
void name_list(Verdict& v, std::uint16_t set_id, const ListSets& sets,
               const ListSelection* selection) noexcept {
    const auto lists = sets.lists(set_id);
    v.list = lists.front();
    if (selection == nullptr) {
        return;
    }
    for (const std::uint16_t l : lists) {
        if (selection->has(l)) {  // a single list's set id is the list
            if (l != lists.front()) {
                v.list = l;
                v.line = 0;
            }
            return;
        }
    }
}

/// Exact before subtree; an important hit wins over a plain one.
Verdict decide(const NameHashSet& exact, const NameHashSet& subtree, const SuffixHashes& h,
               const PairProbes& p, Action action, const ListSets& sets,
               const ListSelection* selection) noexcept {
    const Hit e = find_exact(exact, h, p, selection);
    const Hit s = find_subtree(subtree, h, p, selection);
    const bool use_exact = e.slot != NameHashSet::kNotFound &&
                           (s.slot == NameHashSet::kNotFound || e.important || !s.important);
    Verdict v;
    if (use_exact) {
        v = {.line = exact.line(e.slot),
             .action = action,
             .rule = RuleType::exact,
             .important = e.important};
        name_list(v, exact.list(e.slot), sets, selection);
    } else if (s.slot != NameHashSet::kNotFound) {
        v = {.line = subtree.line(s.slot),
             .action = action,
             .rule = RuleType::subtree,
             .suffix = s.suffix,
             .important = s.important};
        name_list(v, subtree.list(s.slot), sets, selection);
    }
    return v;
}

/// Dotted lower-case text of a wire name, without trailing dot ("" for the root).
std::string_view dotted(const std::uint8_t* wire, std::array<char, 256>& buf) noexcept {
    // The text is the wire form after its first length octet, with the later length octets
    // turned into dots: one copy, then a dot per label (not a loop over every octet).
    std::size_t root = 0;
    while (wire[root] != 0) {
        root += 1U + wire[root];
    }
    if (root == 0) {
        return {};
    }
    const std::size_t n = root - 1;
    std::memcpy(buf.data(), wire + 1, n);
    for (std::size_t at = 1U + wire[0]; at < root; at += 1U + wire[at]) {
        buf[at - 1] = '.';
    }
    return {buf.data(), n};
}

}  // namespace

Snapshot::Snapshot() = default;
Snapshot::Snapshot(Snapshot&&) noexcept = default;
Snapshot& Snapshot::operator=(Snapshot&&) noexcept = default;
Snapshot::~Snapshot() = default;

Verdict Snapshot::match(wire::NameView qname, const ListSelection* selection) const noexcept {
    // NOLINTNEXTLINE(cppcoreguidelines-pro-type-member-init): copy_lower_to() fills it
    std::array<std::uint8_t, wire::kMaxNameLength> buf;
    qname.copy_lower_to(buf.data());
    return match_lower_wire(buf.data(), selection);
}

Verdict Snapshot::match_text(std::string_view name) const noexcept {
    const auto parsed = wire::Name::from_text(name);
    if (!parsed) {
        return {};
    }
    return match(parsed->view());
}

Verdict Snapshot::match_lower_wire(const std::uint8_t* wire,
                                   const ListSelection* selection) const noexcept {
    SuffixHashes h;
    prefetch(wire, h);
    return match_hashed(wire, h, selection);
}

void Snapshot::prefetch(const std::uint8_t* lower_wire, SuffixHashes& hashes) const noexcept {
    hashes.compute(lower_wire);
    filter::prefetch(allow_exact_, allow_subtree_, hashes);
    filter::prefetch(block_exact_, block_subtree_, hashes);
}

Verdict Snapshot::match_hashed(const std::uint8_t* wire, const SuffixHashes& h,
                               const ListSelection* selection, RegexMemo* memo) const noexcept {
    // NOLINTNEXTLINE(cppcoreguidelines-pro-type-member-init): probe() sets what is read
    MatchProbes probes;
    probe(h, probes);
    return match_probed(wire, h, probes, selection, memo);
}

void Snapshot::probe(const SuffixHashes& hashes, MatchProbes& probes) const noexcept {
    filter::probe(allow_exact_, allow_subtree_, hashes, probes.allow);
    filter::probe(block_exact_, block_subtree_, hashes, probes.block);
}

Verdict Snapshot::match_probed(const std::uint8_t* wire, const SuffixHashes& h,
                               const MatchProbes& probes, const ListSelection* selection,
                               RegexMemo* memo) const noexcept {
    const Verdict allow =
        decide(allow_exact_, allow_subtree_, h, probes.allow, Action::allowed, sets_, selection);
    const Verdict block =
        decide(block_exact_, block_subtree_, h, probes.block, Action::blocked, sets_, selection);
    if (allow.action != Action::none && (allow.important || !block.important)) {
        return allow;
    }
    if (block.action != Action::none) {
        if (block.important || !allow_regex_ || allow_regex_->empty()) {
            return block;
        }
        return match_regex(wire, h, block, selection, memo);
    }
    if (!block_regex_ || block_regex_->empty()) {
        return {};
    }
    return match_regex(wire, h, {}, selection, memo);
}

Verdict Snapshot::match_regex(const std::uint8_t* wire, const SuffixHashes& hashes, Verdict hashed,
                              const ListSelection* selection, RegexMemo* memo) const noexcept {
    // The hash of the whole name keys the memo; the root's is the seed (name_hash.hpp).
    const std::uint64_t name_hash = hashes.whole();
    // NOLINTNEXTLINE(cppcoreguidelines-pro-type-member-init): dotted() writes what is read
    std::array<char, 256> buf;
    std::string_view text;
    bool have_text = false;
    // The rule of `matcher` that matches (kNone when none does), skipping the set's search for a
    // name the memo holds and remembering one the search finds no rule for.
    const auto rule_of = [&](const RegexMatcher& matcher) {
        const std::uint64_t key = RegexMemo::key_of(name_hash, matcher.id());
        if (memo != nullptr && memo->remembers(key)) {
            return RegexMatcher::kNone;
        }
        if (!have_text) {
            text = dotted(wire, buf);
            have_text = true;
        }
        if (!matcher.any_rule_matches(text)) {
            if (memo != nullptr) {
                memo->remember(key);
            }
            return RegexMatcher::kNone;
        }
        return matcher.which_rule(text, selection);
    };
    if (hashed.action == Action::none) {
        const std::size_t b = rule_of(*block_regex_);
        if (b == RegexMatcher::kNone) {
            return {};
        }
        const auto& rule = block_regex_->rule(b);
        hashed = {.line = rule.line,
                  .regex = static_cast<std::uint32_t>(b),
                  .list = rule.list,
                  .action = Action::blocked,
                  .rule = RuleType::regex,
                  .important = rule.important};
        if (rule.important) {
            return hashed;
        }
    }
    if (allow_regex_ && !allow_regex_->empty()) {
        const std::size_t a = rule_of(*allow_regex_);
        if (a != RegexMatcher::kNone) {
            const auto& rule = allow_regex_->rule(a);
            // Regex indexes: block rules first, then allow rules.
            return {.line = rule.line,
                    .regex = static_cast<std::uint32_t>(block_regex_->size() + a),
                    .list = rule.list,
                    .action = Action::allowed,
                    .rule = RuleType::regex,
                    .important = rule.important};
        }
    }
    return hashed;
}

std::string_view Snapshot::regex_pattern(const Verdict& v) const noexcept {
    if (v.rule != RuleType::regex) {
        return {};
    }
    if (v.regex < block_regex_->size()) {
        return block_regex_->rule(v.regex).re->pattern();
    }
    return allow_regex_->rule(v.regex - block_regex_->size()).re->pattern();
}

std::size_t Snapshot::name_rules() const noexcept {
    return block_exact_.size() + block_subtree_.size() + allow_exact_.size() +
           allow_subtree_.size();
}

std::size_t Snapshot::regex_rules() const noexcept {
    return (block_regex_ ? block_regex_->size() : 0) + (allow_regex_ ? allow_regex_->size() : 0);
}

std::size_t Snapshot::memory_bytes() const noexcept {
    std::size_t bytes = sizeof(Snapshot) + sets_.memory_bytes() + block_exact_.memory_bytes() +
                        block_subtree_.memory_bytes() + allow_exact_.memory_bytes() +
                        allow_subtree_.memory_bytes();
    if (block_regex_) {
        bytes += block_regex_->memory_bytes();
    }
    if (allow_regex_) {
        bytes += allow_regex_->memory_bytes();
    }
    for (const ListInfo& l : lists_) {
        bytes += sizeof(ListInfo) + l.spec.name.capacity();
        for (const InvalidLine& i : l.stats.first_invalid) {
            bytes += sizeof(InvalidLine) + i.text.capacity();
        }
    }
    return bytes;
}

}  // namespace moat::filter
