// dnsmoat's wire library beside libknot and ldns on the three benchmark fixtures.
//
// Benchmarks are named OP/FIXTURE/LIBRARY and registered fixture by fixture with the libraries
// side by side, so one run measures them under the same machine conditions:
//
//   parse      parse and visit everything (visit_stats.hpp); the stats must equal the ones all
//              three libraries agree on, checked on every iteration
//   validate   moat::wire::validate, dnsmoat only
//   build      write the message again from records prepared beforehand into a reused buffer,
//              with each library's name compression
//   build_vec  dnsmoat's build into a std::vector emptied before each message, as a
//              connection's write buffer would be (growth and zero-fill measured each time,
//              reallocation only until the capacity has grown once)
//
// Build benchmarks report the message size as the counter `out_bytes`.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <cstdio>
#include <exception>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "fixtures.hpp"
#include "knot_visit.hpp"
#include "ldns_visit.hpp"
#include "moat/wire/message_builder.hpp"
#include "moat/wire/validate.hpp"
#include "moat_build.hpp"
#include "moat_visit.hpp"
#include "visit_stats.hpp"

namespace {

using moat::bench::VisitStats;

/// Everything prepared for one fixture before any timing.
struct Context {
    moat::bench::Fixture fixture;
    std::optional<VisitStats> agreed;  ///< the stats all three libraries give; empty if they differ
    std::string disagreement;
    std::optional<moat::bench::BuildInput> moat_input;
    std::unique_ptr<moat::bench::knot::Builder> knot_builder;
    std::unique_ptr<moat::bench::ldns::Builder> ldns_builder;

    [[nodiscard]] std::span<const std::uint8_t> bytes() const { return fixture.bytes; }
};

std::string describe(const char* lib, const std::optional<VisitStats>& s) {
    if (!s) {
        return std::string(lib) + " rejected";
    }
    return std::string(lib) + " " + std::to_string(s->records) + "/" + std::to_string(s->names) +
           "/" + std::to_string(s->labels) + "/" + std::to_string(s->checksum);
}

std::unique_ptr<Context> prepare(moat::bench::Fixture fixture) {
    auto ctx = std::make_unique<Context>();
    ctx->fixture = std::move(fixture);
    moat::bench::knot::Arena arena;
    std::optional<VisitStats> m, k, l;
    if (VisitStats s; moat::bench::visit_message(s, ctx->bytes())) {
        m = s;
    }
    if (VisitStats s; moat::bench::knot::visit_message(s, ctx->bytes(), arena)) {
        k = s;
    }
    if (VisitStats s; moat::bench::ldns::visit_message(s, ctx->bytes())) {
        l = s;
    }
    if (m && k && l && *m == *k && *m == *l) {
        ctx->agreed = m;
    } else {
        ctx->disagreement = "libraries disagree on " + ctx->fixture.name + ": " +
                            describe("dnsmoat", m) + ", " + describe("libknot", k) + ", " +
                            describe("ldns", l);
        std::fprintf(stderr, "%s\n", ctx->disagreement.c_str());
    }
    ctx->moat_input = moat::bench::prepare_build(ctx->bytes());
    ctx->knot_builder = moat::bench::knot::Builder::prepare(ctx->bytes());
    ctx->ldns_builder = moat::bench::ldns::Builder::prepare(ctx->bytes());
    return ctx;
}

// --- parse ----------------------------------------------------------------------------------

template <typename Visit>
void run_parse(benchmark::State& state, const Context& ctx, Visit visit) {
    if (!ctx.agreed) {
        state.SkipWithError(ctx.disagreement.c_str());
        return;
    }
    const std::span<const std::uint8_t> msg = ctx.bytes();
    for (auto _ : state) {
        VisitStats s;
        const bool ok = visit(s, msg);
        benchmark::DoNotOptimize(s);
        if (!ok || s != *ctx.agreed) {
            state.SkipWithError("parse failed or gave different stats");
            break;
        }
    }
}

void parse_moat(benchmark::State& state, const Context* ctx) {
    run_parse(state, *ctx, [](VisitStats& s, std::span<const std::uint8_t> msg) {
        return moat::bench::visit_message(s, msg);
    });
}

void parse_knot(benchmark::State& state, const Context* ctx) {
    moat::bench::knot::Arena arena;
    run_parse(state, *ctx, [&arena](VisitStats& s, std::span<const std::uint8_t> msg) {
        return moat::bench::knot::visit_message(s, msg, arena);
    });
}

void parse_ldns(benchmark::State& state, const Context* ctx) {
    run_parse(state, *ctx, [](VisitStats& s, std::span<const std::uint8_t> msg) {
        return moat::bench::ldns::visit_message(s, msg);
    });
}

// --- validate -------------------------------------------------------------------------------

void validate_moat(benchmark::State& state, const Context* ctx) {
    const std::span<const std::uint8_t> msg = ctx->bytes();
    for (auto _ : state) {
        auto result = moat::wire::validate(msg);
        benchmark::DoNotOptimize(result);
        if (!result) {
            state.SkipWithError("validate rejected the fixture");
            break;
        }
    }
}

// --- build ----------------------------------------------------------------------------------

template <typename Build>
void run_build(benchmark::State& state, Build build) {
    std::size_t size = 0;
    for (auto _ : state) {
        size = build();
        benchmark::DoNotOptimize(size);
        if (size == 0) {
            state.SkipWithError("build failed");
            break;
        }
    }
    state.counters["out_bytes"] = static_cast<double>(size);
}

void build_moat(benchmark::State& state, const Context* ctx) {
    if (!ctx->moat_input) {
        state.SkipWithError("dnsmoat cannot prepare the build input");
        return;
    }
    std::vector<std::uint8_t> buffer(moat::wire::kMaxMessageSize);
    moat::wire::MessageBuilder builder{std::span<std::uint8_t>(buffer)};
    run_build(state, [&] {
        builder.reset();
        const std::size_t n = moat::bench::build_message(builder, *ctx->moat_input);
        benchmark::DoNotOptimize(buffer.data());
        return n;
    });
}

void build_vec_moat(benchmark::State& state, const Context* ctx) {
    if (!ctx->moat_input) {
        state.SkipWithError("dnsmoat cannot prepare the build input");
        return;
    }
    std::vector<std::uint8_t> out;
    moat::wire::MessageBuilder builder(&out);
    run_build(state, [&] {
        out.clear();
        builder.reset();
        const std::size_t n = moat::bench::build_message(builder, *ctx->moat_input);
        benchmark::DoNotOptimize(out.data());
        return n;
    });
}

void build_knot(benchmark::State& state, const Context* ctx) {
    if (!ctx->knot_builder) {
        state.SkipWithError("libknot cannot prepare the build input");
        return;
    }
    run_build(state, [&] {
        const std::size_t n = ctx->knot_builder->build();
        benchmark::DoNotOptimize(ctx->knot_builder->output().data());
        return n;
    });
}

void build_ldns(benchmark::State& state, const Context* ctx) {
    if (!ctx->ldns_builder) {
        state.SkipWithError("ldns cannot prepare the build input");
        return;
    }
    run_build(state, [&] {
        const std::size_t n = ctx->ldns_builder->build();
        benchmark::DoNotOptimize(ctx->ldns_builder->output().data());
        return n;
    });
}

using BenchFn = void (*)(benchmark::State&, const Context*);

void add(const std::string& op, const Context* ctx, const char* library, BenchFn fn) {
    const std::string name = op + "/" + ctx->fixture.name + "/" + library;
    benchmark::RegisterBenchmark(name.c_str(), fn, ctx);
}

}  // namespace

int main(int argc, char** argv) {
    benchmark::Initialize(&argc, argv);
    if (benchmark::ReportUnrecognizedArguments(argc, argv)) {
        return 1;
    }
    std::vector<std::unique_ptr<Context>> contexts;
    try {
        for (auto& fixture : moat::bench::load_fixtures()) {
            contexts.push_back(prepare(std::move(fixture)));
        }
    } catch (const std::exception& e) {
        std::fprintf(stderr, "dnsmoat-bench-compare: %s\n", e.what());
        return 1;
    }

    for (const auto& owned : contexts) {
        const Context* ctx = owned.get();
        add("parse", ctx, "dnsmoat", parse_moat);
        add("parse", ctx, "libknot", parse_knot);
        add("parse", ctx, "ldns", parse_ldns);
        add("validate", ctx, "dnsmoat", validate_moat);
        add("build", ctx, "dnsmoat", build_moat);
        add("build", ctx, "libknot", build_knot);
        // ldns on pathological takes ~21 ms per message: the default --benchmark_min_time (0.5 s)
        // already gives it few iterations (~40). Iterations(n) would append "/iterations:n" to
        // the name and break the OP/FIXTURE/LIBRARY scheme.
        add("build", ctx, "ldns", build_ldns);
        add("build_vec", ctx, "dnsmoat", build_vec_moat);
    }

    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return 0;
}
