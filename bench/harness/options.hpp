// The command line of dnsmoat-bench: which suite to run and how big to make it.
//
// Parsed by hand (no CLI library in bench/): a suite name as the only positional argument, and
// `--name=N` or `--name N` for the numbers. parse_options() only returns a value or an error
// text; main() prints and exits, so the parser can be tried without a process.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <tl/expected.hpp>

namespace moat::bench {

enum class Suite : std::uint8_t { all, wire, filter, cache, compile, pipeline };

inline constexpr std::string_view kUsage =
    "usage: dnsmoat-bench [wire|filter|cache|compile|pipeline|all] [--domains=N] [--iters=N] "
    "[--seed=N] [--assert] [--scaling] [--smoke]";

/// --smoke sizes (unless --domains / --iters say otherwise).
inline constexpr std::uint64_t kSmokeDomains = 20'000;
inline constexpr std::uint64_t kSmokeIters = 20'000;

struct Options {
    Suite suite = Suite::all;
    /// Names in the generated blocklist (filter, compile, pipeline; the cache takes up to 100,000
    /// of them). 1,000..50,000,000; the memory targets are defined at 1,000,000.
    std::uint64_t domains = 1'000'000;
    /// Timed operations per measured row. 100..50,000,000 (8 bytes of samples each).
    std::uint64_t iters = 200'000;
    /// Seed of every generated name and query order: equal seeds give equal inputs, so two runs
    /// on one machine compare.
    std::uint64_t seed = 42;
    bool assert_targets = false;  ///< exit 1 when a target fails
    bool scaling = false;         ///< filter only: lookup cost from 10k to 4M domains
    /// A check that every suite runs, for CI: small sizes, and timing targets shown but not
    /// judged (shared runners are too noisy for absolute times); the machine-independent targets
    /// (allocations per query, rebuild peak against the snapshot) still are.
    bool smoke = false;
    bool help = false;

    [[nodiscard]] bool runs(Suite s) const noexcept { return suite == Suite::all || suite == s; }
};

/// Reads the arguments after the program name. The error text says which argument is wrong.
tl::expected<Options, std::string> parse_options(std::span<const std::string_view> args);

/// The suite's name as written on the command line.
[[nodiscard]] std::string_view suite_name(Suite suite) noexcept;

}  // namespace moat::bench
