// wire: the wire library's parse (decode and visit every field, as bench/visit defines it),
// validate and build (into a reused buffer) over the three shared fixtures. Figures only: the
// comparison with libknot and ldns, and its bars, live in bench/compare.
#include <chrono>
#include <exception>
#include <span>
#include <string>
#include <vector>

#include "fixtures.hpp"
#include "moat/wire/message_builder.hpp"
#include "moat/wire/validate.hpp"
#include "moat_build.hpp"
#include "moat_visit.hpp"
#include "suites.hpp"

namespace moat::bench {
namespace {

/// How long one row may take: `pathological` parses in ~80 us, so 200,000 of them would take
/// 16 s; fewer iterations still give stable percentiles for a multi-microsecond operation.
constexpr double kRowBudgetSeconds = 0.5;
constexpr std::size_t kMinIterations = 1000;

/// Iterations for an operation: --iters, or fewer when that would exceed the row budget.
template <typename Op>
std::size_t iterations_for(std::size_t wanted, Op& op) {
    constexpr int kProbe = 100;
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < kProbe; ++i) {
        op();
    }
    const double each =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / kProbe;
    const auto budget = static_cast<std::size_t>(kRowBudgetSeconds / std::max(each, 1e-9));
    return std::min(wanted, std::max(budget, kMinIterations));
}

/// Times `op` (which returns true on success) and counts its successes.
template <typename Op>
Summary measure(std::size_t wanted, Op op, std::size_t& ok) {
    const std::size_t n = iterations_for(wanted, op);  // also the warm-up
    Samples samples(n);
    ok = 0;
    for (std::size_t i = 0; i < n; ++i) {
        const Ticks t0 = tick_begin();
        const bool good = op();
        const Ticks t1 = tick_end();
        samples.add(t1 - t0);
        ok += good ? 1U : 0U;
    }
    return samples.summarize();
}

void run_fixture(const Fixture& f, const Options& options, Report& report) {
    const std::span<const std::uint8_t> msg = f.bytes;
    VisitStats reference;
    if (!visit_message(reference, msg) || !wire::validate(msg)) {
        abort_run("wire", "fixture " + f.name + " does not parse or validate");
    }
    const auto input = prepare_build(msg);
    if (!input) {
        abort_run("wire", "fixture " + f.name + " does not decode into records");
    }
    std::vector<std::uint8_t> buffer(wire::kMaxMessageSize);
    wire::MessageBuilder builder{std::span<std::uint8_t>(buffer)};
    std::size_t built = 0;

    std::size_t parsed_ok = 0;
    std::size_t validated_ok = 0;
    std::size_t built_ok = 0;
    // A parse counts as good only when its checksum is the reference one: the visit really
    // touched every field.
    const Summary parse = measure(
        options.iters,
        [&] {
            VisitStats s;
            const bool good = visit_message(s, msg);
            keep(s.checksum);
            return good && s == reference;
        },
        parsed_ok);
    report.row("parse/" + f.name, parse);
    const Summary validate = measure(
        options.iters,
        [&] {
            const wire::Status st = wire::validate(msg);
            return static_cast<bool>(st);
        },
        validated_ok);
    report.row("validate/" + f.name, validate);
    const Summary build = measure(
        options.iters,
        [&] {
            builder.reset();
            built = build_message(builder, *input);
            keep(buffer.data());
            return built == msg.size();
        },
        built_ok);
    report.row("build/" + f.name, build);
    report.line(format(
        "sanity: %zu bytes; parse checksum ok %zu/%zu, validate ok %zu/%zu, "
        "build %zu bytes ok %zu/%zu",
        msg.size(), parsed_ok, parse.ops, validated_ok, validate.ops, built, built_ok, build.ops));
    if (parsed_ok == 0 || validated_ok == 0 || built_ok == 0) {
        abort_run("wire", "an operation never succeeded on fixture " + f.name);
    }
}

}  // namespace

void run_wire(const Options& options, Report& report) {
    std::vector<Fixture> fixtures;
    try {
        fixtures = load_fixtures();
    } catch (const std::exception& e) {
        abort_run("wire", e.what());
    }
    report.title("wire", format("parse (decode + visit every field), validate, build (reused "
                                "buffer) of the fixtures; up to %llu iterations or %.1f s per row",
                                static_cast<unsigned long long>(options.iters), kRowBudgetSeconds));
    report.table_header();
    for (const Fixture& f : fixtures) {
        run_fixture(f, options, report);
    }
    report.line("no targets: libknot/ldns comparison is bench/compare");
}

}  // namespace moat::bench
