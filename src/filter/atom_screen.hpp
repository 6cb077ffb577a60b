// A cheap test run before a regex set's search: can any of the rules match this name at all?
//
// Most names match no regex rule, and for them RE2::Set's search is most of a lookup's cost
// (about 940 of 1,600 instructions for an unlisted name against 32 rules, mostly fixed per
// search; with a thousand rules whose DFA outgrows RE2's budget, microseconds). Nearly every
// rule in real lists needs some literal text in a match: `^adtrack(er)?[_.-]` cannot match a
// name without "adtrack". RE2's FilteredRE2 works out those strings ("atoms") and the and/or
// formula each rule needs of them; every formula is monotone, so a name that holds no atom at
// all matches no rule, and the search can be skipped. AdGuard's urlfilter does the same with
// "shortcuts" taken from its regex rules. A name holding an atom is searched as before (the
// formula is not evaluated here: that would take allocations, and the search decides).
//
// The scan reads each pair of octets once against a bit per pair that starts an atom; only
// where one does are the atoms looked up, by their first four octets in a small hash table, so
// a pair that starts many atoms (".c" of ".com.vn", ".clk", ...) costs one probe.
//
// Only atoms of four octets or more are used. RE2's DFA for a set of rules is fast once warm
// (about 70 ns a name for the 237 rules of the real lists in ../shared, a throwaway benchmark),
// and shorter atoms ("ad", "aff" in mmotti's regex.list) occur in so many names that screening
// for them cost more than it saved: 87 ns a name for the screen alone with those rules, and 40%
// of names went on to the set. So the screen passes every name when some rule has no atom of
// four octets or more (`^ads\.` has "ads."; `^ad[0-9]+\.` and `^[a-z]{3}[0-9]$` have none), when
// an atom is not ASCII, and for any text that is not ASCII: RE2 folds case over Unicode (`k`
// matches U+212A KELVIN SIGN), which a byte scan cannot. Immutable once made; safe from many
// threads.
#pragma once

#include <re2/re2.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace moat::filter {

class AtomScreen {
public:
    /// A screen that passes everything (no rules yet).
    AtomScreen() = default;

    /// The screen for `patterns`, each compiled with `options` (the rules' own).
    static AtomScreen of(const std::vector<std::string>& patterns,
                         const re2::RE2::Options& options);

    /// False only when no rule can match `text` (its case does not matter).
    [[nodiscard]] bool may_match(std::string_view text) const noexcept;

    /// True when may_match() says yes to every text.
    [[nodiscard]] bool passes_everything() const noexcept { return passes_everything_; }
    /// The literal strings screened for, lower case, sorted (empty when passing everything),
    /// read back from the tables the scan uses.
    [[nodiscard]] std::vector<std::string> atoms() const;
    [[nodiscard]] std::size_t memory_bytes() const noexcept;  ///< heap octets held

private:
    /// Atoms shorter than this make their rule unscreened (FilteredRE2's min_atom_len): the
    /// hash table's key is an atom's first four octets.
    static constexpr int kMinAtomLength = 4;
    /// One bit per pair of octets.
    static constexpr std::size_t kPairWords = 65536 / 64;

    /// The atoms whose first four octets are `key` (the first in the low byte).
    struct Prefix {
        std::uint32_t key = 0;
        std::uint32_t first = 0;  ///< into longer_: the atoms of more than four octets
        std::uint32_t count = 0;
        bool whole = false;  ///< `key` itself is an atom
        bool used = false;
    };
    [[nodiscard]] static bool bit(const std::vector<std::uint64_t>& bits, unsigned i) noexcept {
        return ((bits[i / 64] >> (i % 64)) & 1U) != 0;
    }
    /// Sets the bit of the pair (a, b) in every case of the two octets.
    static void mark_pair(std::vector<std::uint64_t>& bits, unsigned char a, unsigned char b);
    /// Adds `atom` (lower case, at least four octets) to the tables; longer_ is filled after.
    void add(const std::string& atom, std::vector<std::pair<std::uint32_t, std::string>>& longer);
    [[nodiscard]] Prefix& slot(std::uint32_t key) noexcept;
    [[nodiscard]] const Prefix* find(std::uint32_t key) const noexcept;
    /// Whether an atom starting with the pair at `text[at]` occurs there. Out of line: the scan
    /// rarely gets here, and inlined it takes the registers the scan's loop needs.
    [[nodiscard]] [[gnu::noinline]] bool atom_at(std::string_view text,
                                                 std::size_t at) const noexcept;

    bool passes_everything_ = true;
    // kPairWords words once the screen screens, empty while it passes everything (an empty
    // group of rules costs nothing).
    std::vector<std::uint64_t> first_pairs_;  ///< the pair starts some atom, in either case
    std::vector<Prefix> prefixes_;            ///< open addressing, a power of two in size
    std::vector<std::string> longer_;         ///< atoms of five octets or more, by prefix
};

}  // namespace moat::filter
