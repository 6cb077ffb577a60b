#include "blocklist.hpp"

#include <algorithm>
#include <chrono>
#include <string>
#include <string_view>

#include "moat/filter/compiler.hpp"
#include "report.hpp"

namespace moat::bench {
namespace {

/// Distinct anchored patterns on a TLD the generator never uses.
std::string never_matching_regexes() {
    std::string text;
    for (std::size_t i = 0; i < kNeverRegexes; ++i) {
        text += "^zzq" + std::to_string(i) + "[0-9]+-never\\.example$\n";
    }
    return text;
}

void feed_in_chunks(filter::Compiler& c, std::size_t list, std::string_view text) {
    for (std::size_t at = 0; at < text.size(); at += kFeedChunk) {
        if (!c.feed(list, text.substr(at, kFeedChunk))) {
            abort_run("blocklist", "Compiler::feed failed");
        }
    }
}

}  // namespace

Blocklist make_blocklist(std::size_t domains, std::size_t sample_size, std::uint64_t seed) {
    Blocklist result;
    NameList names = generate_listed(domains, seed);
    Rng rng(seed ^ 0x5A3B1E5ULL);
    result.sample.reserve(sample_size, sample_size * 24);
    for (std::size_t i = 0; i < sample_size; ++i) {
        result.sample.add(names[rng.below(names.size())]);
    }

    const auto t0 = std::chrono::steady_clock::now();
    filter::Compiler c;
    auto list = c.open_list({1, "generated", filter::ListKind::block, filter::ListFormat::domains,
                             /*entries_include_subdomains=*/true});
    auto regex =
        c.open_list({2, "never-regex", filter::ListKind::block, filter::ListFormat::regex, false});
    if (!list || !regex) {
        abort_run("blocklist", "Compiler::open_list failed");
    }
    feed_in_chunks(c, *list, names.text());
    feed_in_chunks(c, *regex, never_matching_regexes());
    if (!c.close_list(*list) || !c.close_list(*regex)) {
        abort_run("blocklist", "Compiler::close_list failed");
    }
    const std::uint64_t regex_entries = c.stats(*regex).entries;
    const std::uint64_t invalid = c.stats(*list).invalid + c.stats(*regex).invalid;
    names.release();  // the text is parsed: only the rules remain in the compiler
    auto built = std::move(c).build();
    result.compile_seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (!built) {
        abort_run("blocklist",
                  std::string("Compiler::build failed: ") + filter::reason(built.error()));
    }
    result.snapshot = std::move(*built);
    if (invalid != 0 || regex_entries != kNeverRegexes ||
        result.snapshot->name_rules() != domains ||
        result.snapshot->regex_rules() != kNeverRegexes) {
        abort_run("blocklist",
                  format("snapshot holds %zu names and %zu regexes (%llu invalid "
                         "lines); expected %zu and %zu",
                         result.snapshot->name_rules(), result.snapshot->regex_rules(),
                         static_cast<unsigned long long>(invalid), domains, kNeverRegexes));
    }
    return result;
}

}  // namespace moat::bench
