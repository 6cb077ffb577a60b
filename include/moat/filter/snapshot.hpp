// The compiled, immutable form of every list: what the query path asks "is this name blocked?".
//
// Matching never allocates and never builds a std::string: the query name is lower-cased into a
// stack buffer, the 64-bit hash of each of its suffixes is computed (name_hash.hpp) and looked up
// in four hash sets (block/allow x exact/subtree, name_hash_set.hpp). Precedence:
//   important allow > important block > allow > block,
// and regex rules (RE2, linear time) run only when no hashed rule decided, against the dotted
// lower-case name built in a stack buffer (allow regexes also run when only a hashed,
// non-important block matched, so an allow always beats a block).
//
// A Snapshot is built only by the Compiler and never changes afterwards, so any number of threads
// may call match() at once. It owns all its memory; share it as shared_ptr<const Snapshot>.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "moat/filter/list.hpp"
#include "moat/filter/list_sets.hpp"
#include "moat/filter/name_hash.hpp"
#include "moat/filter/name_hash_set.hpp"
#include "moat/filter/regex_memo.hpp"
#include "moat/filter/snapshot_serial.hpp"
#include "moat/wire/name.hpp"

namespace moat::filter {

class RegexMatcher;  // src/filter/regex_matcher.hpp (keeps RE2 out of this header)

enum class Action : std::uint8_t { none, blocked, allowed };
enum class RuleType : std::uint8_t { none, exact, subtree, regex };

/// The answer for one name, with what is needed to explain it.
///
/// Widest fields first, so that it packs into 16 octets: returned in two registers and copied
/// with two moves. At 20 octets it went through memory, and copying it into the engine's
/// Decision stalled on store forwarding (2% of the daemon's time under a cached load).
struct Verdict {
    std::uint32_t line = 0;   ///< 1-based line of the rule; 0 when lines were not kept
    std::uint32_t regex = 0;  ///< regex rules: index for Snapshot::regex_pattern()
    std::uint16_t list = 0;   ///< index into Snapshot::lists() (valid unless action == none)
    Action action = Action::none;
    RuleType rule = RuleType::none;
    std::uint8_t suffix = 0;  ///< name rules: labels dropped from the query to reach the rule
    bool important = false;
};
static_assert(sizeof(Verdict) <= 16, "a Verdict travels in two registers");

/// The directory reads of one name's lookups: what Snapshot::probe() leaves for
/// Snapshot::match_probed(). Not zeroed: probe() sets what match_probed() reads.
struct MatchProbes {
    struct Pair {
        NameHashSet::Probe exact;
        std::array<NameHashSet::Probe, wire::kMaxLabels> subtree;  ///< [0, hashes.count) set
    };
    Pair allow;
    Pair block;
};

/// One list as compiled: what was asked and what loading found.
struct ListInfo {
    ListSpec spec;
    ListStats stats;
};

class Snapshot {
public:
    Snapshot();  // empty: matches nothing
    Snapshot(const Snapshot&) = delete;
    Snapshot& operator=(const Snapshot&) = delete;
    Snapshot(Snapshot&&) noexcept;
    Snapshot& operator=(Snapshot&&) noexcept;
    ~Snapshot();

    /// The verdict for a validated name from a message (any case), counting only the rules of
    /// the lists `selection` marks (a client group's lists now); null: every list. Never
    /// allocates.
    [[nodiscard]] Verdict match(wire::NameView qname,
                                const ListSelection* selection = nullptr) const noexcept;
    /// The verdict for an uncompressed, lower-case, root-terminated wire name.
    [[nodiscard]] Verdict match_lower_wire(const std::uint8_t* wire,
                                           const ListSelection* selection = nullptr) const noexcept;
    /// match_lower_wire() in steps, so that the tables' memory reads overlap the caller's other
    /// work: prefetch() hashes every suffix of the name into `hashes` and asks the CPU to fetch
    /// their directory words; match_hashed() then probes and decides with those hashes.
    /// With a `memo`, a name its regex rules were found not to match before skips them.
    void prefetch(const std::uint8_t* lower_wire, SuffixHashes& hashes) const noexcept;
    [[nodiscard]] Verdict match_hashed(const std::uint8_t* lower_wire, const SuffixHashes& hashes,
                                       const ListSelection* selection = nullptr,
                                       RegexMemo* memo = nullptr) const noexcept;
    /// match_hashed() split at its second round of memory reads: probe() reads the directory
    /// words prefetch() asked for and asks for the keys they point at; match_probed() compares
    /// the keys and decides. A caller with a dependent read of its own (the answer cache's entry)
    /// starts it between the two, so the two reads wait together.
    void probe(const SuffixHashes& hashes, MatchProbes& probes) const noexcept;
    [[nodiscard]] Verdict match_probed(const std::uint8_t* lower_wire, const SuffixHashes& hashes,
                                       const MatchProbes& probes,
                                       const ListSelection* selection = nullptr,
                                       RegexMemo* memo = nullptr) const noexcept;
    /// Convenience for tools and tests: a presentation-format name (any case). An invalid name
    /// gets Action::none.
    [[nodiscard]] Verdict match_text(std::string_view name) const noexcept;

    [[nodiscard]] const std::vector<ListInfo>& lists() const noexcept { return lists_; }
    /// The sets of lists that share rules: what a ListSelection for this snapshot is made from.
    [[nodiscard]] const ListSets& list_sets() const noexcept { return sets_; }
    /// The list id (ListSpec::id) behind a verdict.
    [[nodiscard]] std::uint32_t list_id(const Verdict& v) const noexcept {
        return lists_[v.list].spec.id;
    }
    /// The pattern of a regex verdict (RE2 syntax, as compiled); empty for other verdicts.
    [[nodiscard]] std::string_view regex_pattern(const Verdict& v) const noexcept;

    /// Distinct hashed name rules (all four tables).
    [[nodiscard]] std::size_t name_rules() const noexcept;
    [[nodiscard]] std::size_t regex_rules() const noexcept;
    /// Heap bytes held by the compiled structure (tables, regex programs estimated, list info).
    [[nodiscard]] std::size_t memory_bytes() const noexcept;
    /// This snapshot's number, unique in the process (snapshot_serial.hpp).
    [[nodiscard]] std::uint64_t serial() const noexcept { return serial_.value(); }

private:
    friend class Compiler;

    [[nodiscard]] Verdict match_regex(const std::uint8_t* wire, const SuffixHashes& hashes,
                                      Verdict hashed, const ListSelection* selection,
                                      RegexMemo* memo) const noexcept;

    std::vector<ListInfo> lists_;
    ListSets sets_;
    NameHashSet block_exact_;
    NameHashSet block_subtree_;
    NameHashSet allow_exact_;
    NameHashSet allow_subtree_;
    std::unique_ptr<RegexMatcher> block_regex_;
    std::unique_ptr<RegexMatcher> allow_regex_;
    SnapshotSerial serial_;
};

}  // namespace moat::filter
