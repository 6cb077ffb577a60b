// dnsmoat-compare-ops LIBRARY OP FIXTURE COUNT: one library's operation COUNT times and nothing
// else, for instruction counts under callgrind (they do not drift with machine noise).
// LIBRARY: dnsmoat | libknot | ldns; OP: parse | validate | build | build_vec (the last two for
// dnsmoat only). callgrind.sh beside this file runs every combination and prints a table.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "fixtures.hpp"
#include "knot_visit.hpp"
#include "ldns_visit.hpp"
#include "moat/wire/message_builder.hpp"
#include "moat/wire/validate.hpp"
#include "moat_build.hpp"
#include "moat_visit.hpp"

namespace {

int usage(const char* self) {
    std::fprintf(stderr,
                 "usage: %s dnsmoat|libknot|ldns parse|validate|build|build_vec FIXTURE COUNT\n",
                 self);
    return 2;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 5) {
        return usage(argv[0]);
    }
    const std::string library = argv[1];
    const std::string op = argv[2];
    const moat::bench::Fixture fixture = moat::bench::load_fixture(argv[3]);
    const long count = std::strtol(argv[4], nullptr, 10);
    const std::span<const std::uint8_t> msg = fixture.bytes;

    // Everything is prepared before the loop, whatever COUNT is, so COUNT 0 measures the set-up
    // that the per-operation figure subtracts.
    const auto moat_input = moat::bench::prepare_build(msg);
    std::vector<std::uint8_t> buffer(moat::wire::kMaxMessageSize);
    std::vector<std::uint8_t> out;
    moat::wire::MessageBuilder span_builder{std::span<std::uint8_t>(buffer)};
    moat::wire::MessageBuilder vector_builder(&out);
    moat::bench::knot::Arena arena;
    auto knot_builder = moat::bench::knot::Builder::prepare(msg);
    auto ldns_builder = moat::bench::ldns::Builder::prepare(msg);

    // The operation is chosen once, before the loop, so the loop holds nothing else.
    enum class Op {
        moat_parse,
        moat_validate,
        moat_build,
        moat_build_vec,
        knot_parse,
        knot_build,
        ldns_parse,
        ldns_build
    };
    const std::string key = library + " " + op;
    Op chosen{};
    if (key == "dnsmoat parse") {
        chosen = Op::moat_parse;
    } else if (key == "dnsmoat validate") {
        chosen = Op::moat_validate;
    } else if (key == "dnsmoat build") {
        chosen = Op::moat_build;
    } else if (key == "dnsmoat build_vec") {
        chosen = Op::moat_build_vec;
    } else if (key == "libknot parse") {
        chosen = Op::knot_parse;
    } else if (key == "libknot build") {
        chosen = Op::knot_build;
    } else if (key == "ldns parse") {
        chosen = Op::ldns_parse;
    } else if (key == "ldns build") {
        chosen = Op::ldns_build;
    } else {
        return usage(argv[0]);
    }

    std::uint64_t sink = 0;
    for (long i = 0; i < count; ++i) {
        moat::bench::VisitStats stats;
        switch (chosen) {
            case Op::moat_parse:
                sink += moat::bench::visit_message(stats, msg) ? stats.checksum : 0;
                break;
            case Op::moat_validate: sink += moat::wire::validate(msg) ? 1U : 0U; break;
            case Op::moat_build:
                span_builder.reset();
                sink += moat::bench::build_message(span_builder, *moat_input);
                break;
            case Op::moat_build_vec:
                out.clear();
                vector_builder.reset();
                sink += moat::bench::build_message(vector_builder, *moat_input);
                break;
            case Op::knot_parse:
                sink += moat::bench::knot::visit_message(stats, msg, arena) ? stats.checksum : 0;
                break;
            case Op::knot_build: sink += knot_builder->build(); break;
            case Op::ldns_parse:
                sink += moat::bench::ldns::visit_message(stats, msg) ? stats.checksum : 0;
                break;
            case Op::ldns_build: sink += ldns_builder->build(); break;
        }
    }
    std::printf("%llu\n", static_cast<unsigned long long>(sink));
    return 0;
}
