// The blocklist the filter and pipeline suites match against: N generated listed names as one
// domains-format block list whose entries include their subdomains (as hagezi's `*-onlydomains`
// lists are loaded), plus kNeverRegexes regex rules that no generated query matches. The regexes
// make every query that no name rule decides run the RE2 set: the costly case, as a real setup
// with a Pi-hole regex list has it.
//
// The generated text is fed to the Compiler in 64 KiB chunks (as a download would arrive) and
// freed before make_blocklist() returns, so a VmRSS read afterwards sees the snapshot, not its
// source.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "domains.hpp"
#include "moat/filter/snapshot.hpp"

namespace moat::bench {

inline constexpr std::size_t kNeverRegexes = 32;
inline constexpr std::size_t kFeedChunk = std::size_t{64} * 1024;

struct Blocklist {
    std::shared_ptr<const filter::Snapshot> snapshot;
    NameList sample;  ///< listed names drawn at random, for blocked queries
    double compile_seconds = 0;
};

/// Aborts the run when the list does not compile or the snapshot does not hold `domains` names.
[[nodiscard]] Blocklist make_blocklist(std::size_t domains, std::size_t sample_size,
                                       std::uint64_t seed);

}  // namespace moat::bench
