// A cheap test run before a regex set's search: can any of the rules match this name at all?
//
// Most names match no regex rule, and for them RE2::Set's search is most of a lookup's cost
// (about 940 of 1,600 instructions for an unlisted name against 32 rules, mostly fixed per
// search). Nearly every rule in real lists needs some literal text in a match: `^adtrack(er)?[_.-]`
// cannot match a name without "adtrack". RE2's FilteredRE2 works out those strings ("atoms") and
// the and/or formula each rule needs of them; every formula is monotone, so a name that holds no
// atom at all matches no rule, and the search can be skipped. AdGuard's urlfilter does the same
// with "shortcuts" taken from its regex rules. A name holding an atom is searched as before
// (the formula is not evaluated here: that would take allocations, and the search decides).
//
// The screen passes every name when some rule has no atom of two octets or more (`.*ads`
// has "ads"; `^[a-z]{3}[0-9]$` has none), when an atom is not ASCII, and for any text that is not
// ASCII: RE2 folds case over Unicode (`k` matches U+212A KELVIN SIGN), which a byte scan cannot.
// Immutable once made; safe from many threads.
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
    /// The literal strings screened for, lower case, sorted (empty when passing everything).
    [[nodiscard]] const std::vector<std::string>& atoms() const noexcept { return atoms_; }
    [[nodiscard]] std::size_t memory_bytes() const noexcept;  ///< heap octets held

private:
    /// Atoms shorter than this make their rule unscreened (FilteredRE2's min_atom_len).
    static constexpr int kMinAtomLength = 2;
    /// One bit per pair of octets: whether some atom starts with it, in either case.
    static constexpr std::size_t kPairWords = 65536 / 64;

    /// `pair`: the first octet in the low byte, the second in the high one.
    [[nodiscard]] bool pair_starts_atom(unsigned pair) const noexcept {
        return ((first_pairs_[pair / 64] >> (pair % 64)) & 1U) != 0;
    }
    void mark_first_pair(unsigned pair) noexcept {
        first_pairs_[pair / 64] |= std::uint64_t{1} << (pair % 64);
    }
    /// Whether an atom starting with the pair at `text[at]` occurs there. Out of line: the scan
    /// rarely gets here, and inlined it takes the registers the scan's loop needs.
    [[nodiscard]] [[gnu::noinline]] bool atom_at(std::string_view text,
                                                 std::size_t at) const noexcept;

    bool passes_everything_ = true;
    std::vector<std::string> atoms_;
    /// kPairWords words once the screen screens, empty while it passes everything (an empty
    /// group of rules costs no 8 KiB).
    std::vector<std::uint64_t> first_pairs_;
};

}  // namespace moat::filter
