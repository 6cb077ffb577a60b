// dnsmoat-bench-wire: Google Benchmark of the wire library on the three shared fixtures.
// Names are OP/FIXTURE/dnsmoat so that bench/compare's libknot and ldns rows line up with them.
#include <benchmark/benchmark.h>

#include <cstdio>
#include <vector>

#include "fixtures.hpp"
#include "moat/wire/message_builder.hpp"
#include "moat/wire/validate.hpp"
#include "moat_build.hpp"
#include "moat_visit.hpp"

namespace {

using moat::bench::BuildInput;
using moat::bench::Fixture;
using moat::bench::VisitStats;

void parse(benchmark::State& state, const Fixture* fixture) {
    VisitStats reference;
    if (!moat::bench::visit_message(reference, fixture->bytes)) {
        state.SkipWithError("fixture does not parse");
        return;
    }
    for (auto _ : state) {
        VisitStats stats;
        const bool ok = moat::bench::visit_message(stats, fixture->bytes);
        benchmark::DoNotOptimize(ok);
        benchmark::DoNotOptimize(stats.checksum);
    }
    state.counters["records"] = static_cast<double>(reference.records);
    state.counters["labels"] = static_cast<double>(reference.labels);
}

void validate(benchmark::State& state, const Fixture* fixture) {
    if (!moat::wire::validate(fixture->bytes)) {
        state.SkipWithError("fixture does not validate");
        return;
    }
    for (auto _ : state) {
        auto result = moat::wire::validate(fixture->bytes);
        benchmark::DoNotOptimize(result);
    }
}

void build(benchmark::State& state, const Fixture* fixture) {
    const auto input = moat::bench::prepare_build(fixture->bytes);
    if (!input) {
        state.SkipWithError("fixture does not decode into records");
        return;
    }
    std::vector<std::uint8_t> buffer(moat::wire::kMaxMessageSize);
    moat::wire::MessageBuilder builder{std::span<std::uint8_t>(buffer)};
    std::size_t size = 0;
    for (auto _ : state) {
        builder.reset();
        size = moat::bench::build_message(builder, *input);
        benchmark::DoNotOptimize(buffer.data());
    }
    if (size == 0) {
        state.SkipWithError("build failed");
    }
    state.counters["bytes"] = static_cast<double>(size);
}

void build_vec(benchmark::State& state, const Fixture* fixture) {
    const auto input = moat::bench::prepare_build(fixture->bytes);
    if (!input) {
        state.SkipWithError("fixture does not decode into records");
        return;
    }
    // One vector, emptied before every message as a connection's write buffer would be: the
    // builder grows it from empty each time (growth and zero-fill are measured, reallocation
    // only until the capacity has grown once).
    std::vector<std::uint8_t> out;
    moat::wire::MessageBuilder builder(&out);
    std::size_t size = 0;
    for (auto _ : state) {
        out.clear();
        builder.reset();
        size = moat::bench::build_message(builder, *input);
        benchmark::DoNotOptimize(out.data());
    }
    if (size == 0) {
        state.SkipWithError("build failed");
    }
    state.counters["bytes"] = static_cast<double>(size);
}

}  // namespace

int main(int argc, char** argv) {
#ifndef NDEBUG
    std::fprintf(stderr, "warning: this is a debug build; timings are not representative\n");
#endif
    static std::vector<Fixture> fixtures;
    try {
        fixtures = moat::bench::load_fixtures();
    } catch (const std::exception& e) {
        std::fprintf(stderr, "%s\n", e.what());
        return 1;
    }
    for (const Fixture& f : fixtures) {
        benchmark::RegisterBenchmark(("parse/" + f.name + "/dnsmoat").c_str(), parse, &f);
        benchmark::RegisterBenchmark(("validate/" + f.name + "/dnsmoat").c_str(), validate, &f);
        benchmark::RegisterBenchmark(("build/" + f.name + "/dnsmoat").c_str(), build, &f);
        benchmark::RegisterBenchmark(("build_vec/" + f.name + "/dnsmoat").c_str(), build_vec, &f);
    }
    benchmark::Initialize(&argc, argv);
    if (benchmark::ReportUnrecognizedArguments(argc, argv)) {
        return 1;
    }
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return 0;
}
